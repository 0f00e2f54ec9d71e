"""Validation and regression games of gRPC bots as trials on a cluster referee (docs/hosted.md "gRPC bots").

:func:`play_trial_deals` yields the same deals as ``python -m workers.hosting.head_to_head`` (one dict per
deal: ``deal``, ``seed``, ``ranks``, ``faults``, ``decision_ms``, ``replays``), but plays every game on a
referee of the cluster through ``MatchControl.RunMatch`` as a *trial* (``RunMatchRequest.trial``;
referee/trials.py): the referee is found as for a rated match (the cluster's presence, else
``PARTERRE_REFEREE_ADDRESS``; the bot endpoint as ``workers.hosting.seats.bot_address``), so a gRPC bot
is judged by the referee's own clock, settings and verdicts, and its games show on the referees' metrics.

Each side is one :class:`~workers.hosting.grpc_relay.GrpcRelay` with a gate, on a Unix socket in the
run's folder, relaying to the referee's bot endpoint:

* ``grpc:[...]``: the sandbox keeper's command of a gRPC bot, given the side's socket folder
  (``--grpc-dir``), as for a rated seat; restarted before a game when it exited;
* ``builtin:KIND[:OPT=V,...]``: an SDK bot of ``bots.cli.make_bot`` (the validation's house opponent) and
  ``exec:[...]``: a stdio child behind the stdio adapter (a previous, stdio version in a regression test;
  its children get :func:`workers.hosting.validation.child_env` only), both run on this runner's event
  loop (a thread of the worker) and connected to their relay's socket.

Per game, every side gets a fresh random credential; the request carries their sha256 digests
(``seat_credential_digests``) and the referee admits each for its seat only, until the game ends. The
relays' gates open when the referee's first event (``Progress`` at step 0) says the credentials are
admitted; a relayed ``MatchEnded`` closes a gate again. So the version under test needs no published
token, the opponent no other bot's token, and the two versions of one bot in a regression test are told
apart by credential. The bots are told the ladder's ids and names (:func:`workers.hosting.validation.
seat_identities`); the shown match ids never touch the ladder's rooms.

Each deal ``i`` (seed ``bots.local.deal_seed(run_seed, i)``) is played twice, A in seat 0 then B. A seat
whose verdict is not ``normal`` is its side's fault; a faulting side loses the game (rank 2, the other 1),
as in ``workers.hosting.head_to_head``. Time control: ``deadline_ms`` per decision (increment = cap, no
bank) and a :data:`MARGIN_MS` margin; a side just (re)started gets :data:`CONNECT_TIMEOUT_S` to reach its
relay before the game is asked for (a sandbox's start-up; less when its keeper exits), and every side
:data:`NO_SHOW_MS` to be seated once it is.

No referee reachable: :class:`workers.referee_client.RefereeUnavailableError` (the version is not judged:
:func:`workers.hosting.validation.process_version` leaves it waiting).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from bots.local import deal_seed
from workers import directory
from workers import referee_client as rc
from workers.hosting.grpc_relay import GrpcRelay, connectable
from workers.hosting.head_to_head import identities
from workers.hosting.sandbox import GRPC_SOCKET
from workers.settings import settings as worker_settings

log = logging.getLogger(__name__)
T = TypeVar("T")

CONNECT_TIMEOUT_S = 20.0
"""How long a side just (re)started may take to reach its relay before its game is asked for (a sandbox's
start-up); the wait ends early when its keeper exits (the referee then judges the no-show)."""
NO_SHOW_MS = 3000
"""How long the referee waits for a side's session in a game (its stream waits at its relay's gate)."""
MARGIN_MS = 50


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


def stdio_bot(command: list[str], log_dir: Path, name: str = "stdio", env: dict[str, str] | None = None) -> Any:
    """A :class:`bots.stdio.StdioBot` running ``command``, its children's stderr in ``log_dir`` (``env``: theirs)."""
    from bots.stdio import StdioBot

    return StdioBot(command, log_dir=log_dir, name=name, stop_grace_s=1.0, env=env)


def credential() -> tuple[str, str]:
    """A fresh random credential and its sha256 hex digest (what the request carries)."""
    secret = secrets.token_urlsafe(32)
    return secret, hashlib.sha256(secret.encode()).hexdigest()


def find_referee() -> tuple[str, str, bytes | None, str]:
    """``(control address, bot endpoint, TLS root certificate, service token)`` of the referee to play on,
    found as for a rated match (``workers.tasks``: discovered referees first, then the configured ones).

    Raises:
        RefereeUnavailableError: no referee address at all.
    """
    cfg = worker_settings()
    referees: list[directory.RefereeInfo] = []
    if cfg.referee_discovery and cfg.redis_url:
        try:
            referees = directory.read_referees(cfg.redis_url)
        except Exception as exc:  # Redis down: the configured referees still serve
            log.warning("trial games: cannot read the referees' presence: %s", exc)
    addresses = directory.choose_referees(cfg.referees, referees, [])
    if not addresses:
        raise rc.RefereeUnavailableError("no referee address configured (PARTERRE_REFEREE_ADDRESS) or discovered")
    tls = None
    if cfg.referee_tls_ca:
        tls = Path(cfg.referee_tls_ca).read_bytes()
    # one referee for the whole run: the bots must reach the referee the games are sent to; its bot endpoint
    # as a rated seat's (workers.hosting.seats.bot_address): its presence, else the configured one, else itself
    by_control = {r.control_address: r.address for r in referees}
    endpoint = by_control.get(addresses[0]) or cfg.hosted_referee_address or addresses[0]
    return addresses[0], str(endpoint), tls, cfg.service_token


class _Loop:
    """An event loop in a thread of its own (the relays and the worker-run bots live there)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="trial-games", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def call(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self) -> None:
        async def drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            self.run(drain(), 10.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10.0)
        if not self.thread.is_alive():
            self.loop.close()


class Side:
    """One side of the games: its gated relay, and its keeper process or its bot on the loop.

    Args:
        spec: ``grpc:[...]``, ``builtin:...`` or ``exec:[...]``.
        folder: the side's folder in the run's folder (its socket; the keeper's ``--grpc-dir``).
        upstream: the referee's bot endpoint.
        seed / log_dir / env: a worker-run bot's seed, its stdio children's logs and environment.
    """

    def __init__(self, spec: str, folder: Path, upstream: str, seed: str, log_dir: Path,
                 env: dict[str, str]) -> None:
        self.spec, self.folder, self.env = spec, folder, env
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)  # the sandbox's uid reaches its socket through it
        self.gate = asyncio.Event()  # used on the loop only (asyncio.Event binds to the loop on first wait)
        self.relay = GrpcRelay(str(folder / GRPC_SOCKET), upstream, "", gate=self.gate)
        self.proc: subprocess.Popen[bytes] | None = None
        self.bot: Any = None
        if spec.startswith("exec:"):
            self.bot = stdio_bot(json.loads(spec[5:]), log_dir, env=env)
        elif not spec.startswith("grpc:"):
            self.bot = house_bot(spec.removeprefix("builtin:"), seed)
        self.fresh = True  # started (or restarted) since its last game
        self.bot_task: asyncio.Task[None] | None = None  # kept: the loop holds tasks weakly
        self._link_folder: str | None = None  # the short link to a deep socket's folder (grpc_relay.connectable)

    def start(self, runner: _Loop, cwd: Path, lock_fd: int | None = None) -> None:
        """Listen on the side's socket; start its bot (once) or its keeper (again when it exited; it inherits
        ``lock_fd``, the run folder's lock: workers.hosting.run_dirs)."""
        if self.relay._server is None:
            runner.run(self.relay.start())
            if self.bot is not None:  # its token is a placeholder: the relay puts each game's credential in
                runner.call(self._start_bot, runner)
        if self.spec.startswith("grpc:") and (self.proc is None or self.proc.poll() is not None):
            command = json.loads(self.spec[5:])
            cut = command.index("--") if "--" in command else len(command)
            argv = [*command[:cut], "--grpc-dir", str(self.folder), *command[cut:]]
            # Not the worker's stdout; the keeper kills its sandbox's tree when it is stopped.
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd=cwd,
                                         env=self.env, start_new_session=True,
                                         pass_fds=() if lock_fd is None else (lock_fd,))
            self.fresh = True

    @property
    def exited(self) -> bool:
        """The side's keeper has exited."""
        return self.proc is not None and self.proc.poll() is not None

    def _start_bot(self, runner: _Loop) -> None:
        """On the loop: play until stopped, reconnecting (to the gate) after each game."""
        path, self._link_folder = connectable(self.relay.socket_path)  # a deep run folder: through a short link
        self.bot_task = runner.loop.create_task(self.bot.arun(
            f"unix:{path}", "trial", initial_backoff_s=0.05, max_backoff_s=0.5))

    def stop(self, runner: _Loop) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # the keeper kills its sandbox's tree
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.bot is not None:
            runner.call(self.bot.stop)
        with contextlib.suppress(Exception):
            runner.run(self.relay.stop(), 10.0)
        if self._link_folder is not None:
            shutil.rmtree(self._link_folder, ignore_errors=True)
            self._link_folder = None


def _faults(result: rc.MatchOutcome, order: str) -> tuple[list[int], dict[str, str] | None]:
    """The game's ranks and fault: a side whose verdict is not ``normal`` faulted and ranks last, the other
    first, as ``workers.hosting.head_to_head`` ranks a stdio game."""
    by_seat = sorted(result.seats, key=lambda s: s["seat"])
    bad = [s for s in by_seat if s["verdict"] != "normal"] if result.status == "finished" else \
        [s for s in by_seat if s["verdict"] not in ("", "normal")] or by_seat
    if bad:
        seat = int(bad[0]["seat"])
        ranks = [1] * len(order)
        ranks[seat] = len(order)
        return ranks, {"side": order[seat], "verdict": bad[0]["verdict"] or result.status}
    return [int(s["rank"]) for s in by_seat], None


def check_run(game: str, deadline_ms: int) -> None:
    """Refuse a run the referee could not play as asked.

    Raises:
        ValueError: ``deadline_ms`` outside the bounds every time control keeps (``time control ...``:
            ``ladder.match_plans.check_time_control``; docs/bots.md "The clock and the verdicts"), or a
            game that does not seat two.
    """
    from games.registry import load_game
    from ladder.match_plans import check_time_control

    check_time_control(0, deadline_ms, deadline_ms, MARGIN_MS)
    players = load_game(game).num_players
    if players != 2:
        raise ValueError(f"{game!r} has {players} players; validation and regression games seat two")


def play_trial_deals(game: str, a: str, b: str, *, run_seed: str, deals: int, deadline_ms: int, run_dir: Path,
                     env: dict[str, str], cwd: Path, seats: dict[str, Any] | None = None,
                     first_deal: int = 0, lock_fd: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield deals ``first_deal`` … (see the module doc); closing the generator stops the games and the sides.

    Args:
        run_dir: the run's folder (made by the caller, who removes it afterwards); ``lock_fd``: its lock, which
            the keepers inherit, so that a sweep after this worker's SIGKILL leaves it to a keeper still running.
        env / cwd: the keepers' and stdio children's environment and working folder.
        seats: ``{"players": {"a": {...}, "b": {...}}, "match_id": N}`` (``validation.seat_identities``);
            else the plausible defaults of ``workers.hosting.head_to_head.identities``.

    Raises:
        ValueError: as :func:`check_run`, before anything starts.
        RefereeUnavailableError: no referee reachable (before the first game or at a later one).
        InfraError: the referee failed a game after it started, or ended it as ``infra_error`` (not a verdict
            on either side).
    """
    check_run(game, deadline_ms)
    control, bot_endpoint, tls, service_token = find_referee()
    who, match_id = identities(run_seed)
    if seats:
        who, match_id = seats["players"], int(seats["match_id"])
    ids = {side: int(who[side]["bot_id"]) for side in "ab"}
    names = {side: str(who[side].get("name", "")) for side in "ab"}
    runner = _Loop()
    log_dir = run_dir / "logs"
    log_dir.mkdir(mode=0o700)
    sides = {side: Side(spec, run_dir / f"grpc-{side}", bot_endpoint, f"{run_seed}:{side}", log_dir, env)
             for side, spec in (("a", a), ("b", b))}
    try:
        for side in sides.values():
            side.start(runner, cwd, lock_fd)
        for i in range(first_deal, first_deal + deals):
            seed = deal_seed(run_seed, i)
            ranks: list[list[int]] = []
            faults: list[dict[str, str] | None] = []
            replays: list[dict[str, Any] | None] = []
            for order in ("ab", "ba"):
                result = _play_game(runner, cwd, lock_fd, [sides[s] for s in order], control, service_token, tls,
                                    match_id=match_id, game=game, seed=seed, bot_ids=[ids[s] for s in order],
                                    names=[names[s] for s in order], deadline_ms=deadline_ms)
                match_id += 1
                replays.append(json.loads(result.replay_json) if result.replay_json else None)  # the referee's
                r, fault = _faults(result, order)
                ranks.append(r)
                faults.append(fault)
            yield {"deal": i, "seed": seed, "ranks": ranks, "faults": faults, "decision_ms": [None, None],
                   "replays": replays}
    finally:
        for side in sides.values():
            try:
                side.stop(runner)
            except Exception:  # the other side is stopped all the same
                log.exception("stopping a side of the trial games failed")
        runner.close()


def _play_game(runner: _Loop, cwd: Path, lock_fd: int | None, order: list[Side], control: str, service_token: str,
               tls: bytes | None, *, match_id: int, game: str, seed: str, bot_ids: list[int], names: list[str],
               deadline_ms: int) -> rc.MatchOutcome:
    """One game as a trial: fresh credentials, gates opened once the referee admits them, closed after."""
    for side in order:
        side.start(runner, cwd, lock_fd)  # again, if its keeper exited after a fault
    end = time.monotonic() + CONNECT_TIMEOUT_S
    for side in order:  # a sandbox's start-up is not the referee's no-show window
        while side.fresh and not side.relay.connected and not side.exited and time.monotonic() < end:
            time.sleep(0.02)
    creds = [credential() for _ in order]
    opened = threading.Event()

    def arm() -> None:  # on the loop: the relays put the new credentials in the next Hello
        for side, (secret, _) in zip(order, creds, strict=True):
            side.relay.credential = secret
            side.gate.set()

    def on_event(_event: Any) -> bool:
        if not opened.is_set():  # the first event (Progress at step 0): the credentials are admitted
            opened.set()
            runner.call(arm)
        return True

    try:
        result = rc.run_match(
            control, service_token, match_id=match_id, attempt=1, game_string=game, seed=seed,
            seat_bot_ids=bot_ids, seat_bot_names=names,
            time_control={"base_ms": 0, "increment_ms": deadline_ms, "cap_ms": deadline_ms, "margin_ms": MARGIN_MS},
            no_show_timeout_ms=NO_SHOW_MS, max_duration_ms=0,
            on_event=on_event, tls_root_cert=tls, trial=True, seat_credential_digests=[d for _, d in creds])
        if result.status == "infra_error":  # the referee's failure (watchdog, cancelled, stopping): never a side's
            raise rc.InfraError(result.error_text())
        return result
    finally:
        for side in order:
            side.fresh = False
            runner.call(side.gate.clear)  # a side that never connected: its credential is spent all the same
