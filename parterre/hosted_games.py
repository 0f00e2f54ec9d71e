"""Validation and regression games of hosted bots through a real referee (docs/hosted.md "gRPC bots").

``python -m parterre.hosted_games`` takes the arguments of ``python -m
workers.hosting.head_to_head`` and prints the same JSON line per deal, but plays every
game through an in-process referee (``referee.testing.Harness``: 127.0.0.1,
a port of its own, a random service token, a static token store), so a bot
that speaks gRPC is judged by the referee's own clock and verdicts — the
ones its rated matches will get. The workers run it (``workers.hosting.validation.play_deals``)
when a side is a gRPC bot; ``workers`` may not import ``referee`` (docs/architecture.md),
``parterre`` may.

Sides (``--a`` / ``--b``):

* ``builtin:KIND[:OPT=V,...]``: an SDK bot of ``bots.cli.make_bot`` on the referee's loop;
* ``exec:[...]``: a stdio child behind the stdio adapter (``bots.stdio.StdioBot``), e.g. the
  previous, stdio version of a bot in a regression test;
* ``grpc:[...]``: the sandbox keeper's command of a gRPC bot. A fresh socket folder under
  ``$PARTERRE_HOSTED_DIR/run`` is made for the run and given to the keeper (``--grpc-dir``);
  :class:`workers.hosting.grpc_relay.GrpcRelay` listens there with the side's token and relays to this
  referee. The keeper is restarted after a game in which it faulted and exited.

Each deal ``i`` (seed ``bots.local.deal_seed(run_seed, i)``) is played twice, A
in seat 0 then B. A seat whose referee verdict is not ``normal`` is the side's
fault (``timeout``, ``illegal_action``, ``crash``, ``disconnect``, ``resigned``,
``no_show``); a faulting side loses the game (rank 2, the other 1), as in
``workers.hosting.head_to_head``. Time control: ``--deadline-ms`` per decision
(increment = cap, no bank) and a 50 ms margin; a side gets 20 s to connect
before its first game (a sandbox's start-up).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bots.local import deal_seed
from workers.hosting.grpc_relay import GrpcRelay
from workers.hosting.head_to_head import identities
from workers.hosting.sandbox import GRPC_SOCKET

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 20.0
MARGIN_MS = 50


class GrpcSide:
    """A sandboxed gRPC bot: its relay (on this loop) and its keeper process."""

    def __init__(self, command: list[str], run_dir: Path, upstream: str, token: str) -> None:
        self.command = command
        self.dir = Path(tempfile.mkdtemp(prefix="grpc-", dir=run_dir))
        self.dir.chmod(0o755)
        self.relay = GrpcRelay(str(self.dir / GRPC_SOCKET), upstream, token)
        self.proc: asyncio.subprocess.Process | None = None

    def _argv(self) -> list[str]:
        cut = self.command.index("--") if "--" in self.command else len(self.command)
        return [*self.command[:cut], "--grpc-dir", str(self.dir), *self.command[cut:]]

    async def start(self) -> None:
        if self.relay._server is None:
            await self.relay.start()
        if self.proc is None or self.proc.returncode is not None:
            # Not this runner's stdout (the worker's pipe of deal lines): a keeper outliving a killed
            # runner would hold it open and the worker would wait on it.
            self.proc = await asyncio.create_subprocess_exec(*self._argv(), stdin=asyncio.subprocess.DEVNULL,
                                                             stdout=asyncio.subprocess.DEVNULL,
                                                             start_new_session=True)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()  # the keeper kills its sandbox's tree
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        await self.relay.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def house_bot(spec: str, seed: str) -> Any:
    """An SDK bot of ``bots.cli.make_bot`` from ``KIND[:OPT=V,...]`` (e.g. ``search:think_ms=50``), seeded.

    Raises:
        ValueError: an unknown kind, or an option it does not take.
    """
    from bots.cli import make_bot

    kind, _, opts = spec.partition(":")
    options: dict[str, Any] = {"seed": seed}
    for item in filter(None, opts.split(",")):
        key, _, value = item.partition("=")
        options[key] = float(value) if value.replace(".", "", 1).isdigit() else value
    return make_bot(kind, **options)


def stdio_bot(command: list[str], log_dir: Path, name: str = "stdio") -> Any:
    """A :class:`bots.stdio.StdioBot` running ``command``, its children's stderr in ``log_dir``."""
    from bots.stdio import StdioBot

    return StdioBot(command, log_dir=log_dir, name=name, stop_grace_s=1.0)


def make_side(spec: str, seed: str, log_dir: Path) -> Any:
    """A built-in SDK bot or a :class:`bots.stdio.StdioBot` (``grpc:`` sides are made by :func:`play`)."""
    if spec.startswith("exec:"):
        return stdio_bot(json.loads(spec[5:]), log_dir)
    return house_bot(spec.removeprefix("builtin:"), seed)


async def wait_connected(h: Any, bot_id: int, gone: Callable[[], bool]) -> None:
    """Wait (up to :data:`CONNECT_TIMEOUT_S`) for a session of ``bot_id``; give up early once ``gone()``
    (its process exited: the referee then judges the no-show)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + CONNECT_TIMEOUT_S
    while loop.time() < end:
        with contextlib.suppress(TimeoutError):
            await h.wait_sessions(bot_id, timeout_s=0.1)
            return
        if gone():
            return


def _exited(side: GrpcSide | None) -> Callable[[], bool]:
    return lambda: side is not None and side.proc is not None and side.proc.returncode is not None


async def _play_deals(h: Any, ns: argparse.Namespace, ids: dict[str, int], grpc_sides: dict[str, GrpcSide]) -> None:
    """Play deals ``ns.first_deal`` … (each twice, A in seat 0 then B) and print one JSON line per deal."""
    match_id = ns.match_id - 1
    for i in range(ns.first_deal, ns.first_deal + ns.deals):
        seed = deal_seed(ns.run_seed, i)
        ranks: list[list[int]] = []
        faults: list[dict[str, str] | None] = []
        replays: list[dict[str, Any] | None] = []
        for order in ("ab", "ba"):
            for side in order:
                if side in grpc_sides:
                    await grpc_sides[side].start()  # again, if it exited after a fault
                await wait_connected(h, ids[side], _exited(grpc_sides.get(side)))
            match_id += 1
            result = await h.run_match(
                match_id, ns.game, [ids[s] for s in order], base_ms=0, increment_ms=ns.deadline_ms,
                cap_ms=ns.deadline_ms, margin_ms=MARGIN_MS, seed=seed, no_show_timeout_ms=3000)
            replays.append(json.loads(result.replay_json) if result.replay_json else None)  # the referee's own
            by_seat = sorted(result.seats, key=lambda s: s.seat)
            bad = [s for s in by_seat if s.verdict != "normal"] if result.status == "finished" else \
                [s for s in by_seat if s.verdict not in ("", "normal")] or by_seat
            if bad:
                seat = bad[0].seat
                verdict = bad[0].verdict or result.status
                r = [1] * len(order)
                r[seat] = len(order)
                ranks.append(r)
                faults.append({"side": order[seat], "verdict": verdict})
            else:
                ranks.append([int(s.rank) for s in by_seat])
                faults.append(None)
        print(json.dumps({"deal": i, "seed": seed, "ranks": ranks, "faults": faults,
                          "decision_ms": [None, None], "replays": replays}), flush=True)


async def play(ns: argparse.Namespace) -> None:
    from referee.testing import Harness

    tokens = {side: f"hosted-{side}-{secrets.token_hex(12)}" for side in "ab"}
    # Ids and match ids as a rated match has them (workers.hosting.head_to_head.identities, or the worker's --players):
    # the bot under test cannot tell these games from rated ones by them.
    who, first_match = identities(ns.run_seed)
    if ns.players:
        who = json.loads(ns.players)
    ns.match_id = ns.match_id or first_match
    ids = {side: int(who[side]["bot_id"]) for side in "ab"}
    if ns.run_dir:
        run_dir = Path(ns.run_dir)
    else:
        run_dir = Path(os.environ.get("PARTERRE_HOSTED_DIR", "/var/tmp/parterre-hosted")) / "run"
        run_dir.mkdir(parents=True, exist_ok=True)
    run_dir.chmod(0o711)
    log_dir = Path(tempfile.mkdtemp(prefix="games-", dir=run_dir))
    grpc_sides: dict[str, GrpcSide] = {}
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    cleaning = False

    def stop_games() -> None:
        if not cleaning:  # a SIGTERM handled after the clean-up began must not cut it short
            task.cancel()

    # The worker stops a decided test with SIGTERM. A plain handler (not loop.add_signal_handler,
    # whose removal restores SIG_DFL for a moment: a SIGTERM then killed the runner mid-clean-up and
    # left the run's socket folder behind) is switched to SIG_IGN in one step below.
    def on_sigterm(_sig: int, _frame: Any) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(stop_games)

    def begin_cleanup() -> None:
        """From here a SIGTERM (the worker closing a decided run) must not cut the clean-up short."""
        nonlocal cleaning
        cleaning = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        async with Harness({tokens[s]: ids[s] for s in "ab"}, service_token=secrets.token_hex(16)) as h:
            try:
                for side, spec in (("a", ns.a), ("b", ns.b)):
                    if spec.startswith("grpc:"):
                        grpc_sides[side] = GrpcSide(json.loads(spec[5:]), run_dir, h.address, tokens[side])
                        await grpc_sides[side].start()
                    else:
                        h.start_bot(make_side(spec, f"{ns.run_seed}:{side}", log_dir), tokens[side],
                                    initial_backoff_s=0.05)
                await _play_deals(h, ns, ids, grpc_sides)
            finally:
                begin_cleanup()
                for grpc_side in grpc_sides.values():
                    try:
                        await grpc_side.stop()
                    except Exception:  # the other side is stopped all the same
                        log.exception("stopping a gRPC side failed")
    finally:  # also when the referee's start was cut short
        begin_cleanup()
        shutil.rmtree(log_dir, ignore_errors=True)
        if ns.run_dir:  # empty now; the worker removes it too, unless it died first
            with contextlib.suppress(OSError):
                run_dir.rmdir()


def main(argv: list[str] | None = None) -> int:
    """``python -m parterre.hosted_games``: see the module doc."""
    p = argparse.ArgumentParser(prog="python -m parterre.hosted_games", description=__doc__.splitlines()[0])
    p.add_argument("--game", required=True)
    p.add_argument("--run-seed", required=True)
    p.add_argument("--deals", type=int, required=True)
    p.add_argument("--first-deal", type=int, default=0)
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--deadline-ms", type=int, default=1000)
    p.add_argument("--players", default="", help='JSON {"a": {"bot_id", "name", "version"}, "b": {...}}')
    p.add_argument("--match-id", type=int, default=0, help="the first game's id (default: from the run seed)")
    p.add_argument("--run-dir", default="",
                   help="the run's folder, made (and removed afterwards) by the caller; default: "
                        "$PARTERRE_HOSTED_DIR/run, where this runner makes and removes its own folders")
    ns = p.parse_args(argv)
    from games.api import GameError
    from games.registry import load_game
    from ladder.match_plans import check_time_control

    try:  # the bounds every time control keeps (docs/bots.md "The clock and the verdicts")
        check_time_control(0, ns.deadline_ms, ns.deadline_ms, MARGIN_MS)
    except ValueError as exc:
        p.error(f"--deadline-ms: {exc}")

    try:
        players = load_game(ns.game).num_players
    except GameError as exc:
        p.error(f"--game: {exc}")
    if players != 2:
        p.error(f"--game {ns.game!r} has {players} players; the duplicate runner seats two")
    try:
        asyncio.run(play(ns))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 143
    return 0


if __name__ == "__main__":
    sys.exit(main())
