"""Head-to-head duplicate deals between two bots, at least one a stdio child (hosted validation and regression test).

``python -m workers.hosting.head_to_head --game G --run-seed S --deals N --a SPEC --b SPEC``
plays deal ``i`` (seed ``sha256("{S}:{i}")``, as ``parterre regress``:
:func:`deal_seed`) twice, A in seat 0 then B in seat 0, and prints one JSON
line per deal::

    {"deal": 0, "seed": "...", "ranks": [[1, 2], [2, 1]], "faults": [null, "timeout"], "replays": [{...}, {...}]}

``ranks[k]`` are the seats' ranks of game ``k`` (the rules' own outcome); ``replays[k]`` its
``parterre-replay/1`` dict (:func:`bots.local.local_replay`: it stops at a fault);
``faults[k]`` is ``{"side": "a"|"b", "verdict": ...}`` (plus ``"detail": "exit status 3"``
for a crash) when a stdio side did wrong in game ``k`` (``timeout``, ``illegal_action``, ``crash``, ``resigned``),
else null; ``decision_ms`` the mean decision time of each stdio side so far. A faulting side loses the
game (rank 2, the other rank 1), as the referee's verdicts do. A SPEC is
``builtin:KIND[:OPT=VALUE,...]`` (``bots.cli.make_bot``) or ``exec:`` followed
by a JSON list, the command of a child speaking the stdio line protocol of
docs/bots.md (the workers give the sandbox keeper's command line,
``python -m workers.hosting.sandbox ...``). One child plays all the games of a side in a
row (``match_started`` ... ``match_ended``), so its start-up is paid once; a
child that crashes or times out is replaced for the next game.

The children cannot tell these games from rated ones (docs/hosted.md): ``--players``
gives each side's identity as a rated match shows it (``{"a": {"bot_id": 17, "name":
"my-bot", "version": "3"}, "b": {...}}``; default: plausible ones made from the run
seed, :func:`identities`), ``--match-id`` the first game's id (the next ones count
up), and ``match_started`` carries the time control a rated match of this deadline
has (increment = cap = ``--deadline-ms``, margin :data:`MARGIN_MS`) and the seed's
commitment (its sha256).

Each game is played by :func:`bots.local.play_local` (the one local match loop), chance
drawn from ``random.Random(seed)`` (the referee's rule), so a deal's two games see the same
cards. This plays without a referee: a hosted bot's
*rated* matches go through the referee like any other (docs/hosted.md).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from bots.local import LocalStep, Seat, deal_seed, local_replay, play_local, sdk_seat
from bots.stdio_lines import PROTOCOL, Answer, parse_answer

DEFAULT_DEADLINE_MS = 1000
MARGIN_MS = 50
"""The margin of the time control shown (that of the gRPC bots' trials, ``workers.hosting.trial_games``)."""


def identities(run_seed: str) -> tuple[dict[str, dict[str, Any]], int]:
    """Plausible identities of sides ``a`` and ``b`` and a first match id, derived from ``run_seed`` (used when
    the caller gives none): bot ids and a match id in the ranges a running ladder has, names like its bots'."""
    h = hashlib.sha256(f"identities:{run_seed}".encode()).digest()
    ids = (100 + int.from_bytes(h[0:2], "big") % 900, 100 + int.from_bytes(h[2:4], "big") % 900)
    if ids[1] == ids[0]:
        ids = (ids[0], ids[0] + 1)
    names = ("bot", "greedy")
    players = {side: {"bot_id": ids[k], "name": f"{names[k]}-{h[4 + k] % 50 + 1}", "version": "1"}
               for k, side in enumerate("ab")}
    return players, 10_000 + int.from_bytes(h[8:11], "big") % 900_000


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode("ascii")


class ChildSide:
    """A stdio child that plays one game after another; replaced after a fault."""

    def __init__(self, command: Sequence[str], deadline_ms: int, startup_ms: int = 10_000) -> None:
        self.command = list(command)
        self.deadline_s = deadline_ms / 1000.0
        self.startup_s = startup_ms / 1000.0
        self.fresh = False
        self.proc: subprocess.Popen[bytes] | None = None
        self.match_id = 1
        self.buf = b""
        self.decision_ms: list[float] = []
        self.exit_detail = ""
        """After a ``crash``: how the child ended ("exit status 3", "killed by signal 9"), if it did
        within a second of closing its stdout."""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         start_new_session=True)
            assert self.proc.stdout is not None
            os.set_blocking(self.proc.stdout.fileno(), False)
            self.buf = b""
            self.fresh = True  # its start-up is not charged to its first decision (as the adapter does)
        return self.proc

    def send(self, obj: dict[str, Any]) -> bool:
        proc = self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(_line(obj))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def readline(self) -> bytes | None:
        """The next non-blank line within the deadline; None on timeout, ``b""`` when stdout closed (exit)."""
        proc = self._start()
        assert proc.stdout is not None
        end = time.monotonic() + self.deadline_s + (self.startup_s if self.fresh else 0.0)
        self.fresh = False
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout.fileno(), selectors.EVENT_READ)
            while True:
                if b"\n" in self.buf:
                    line, self.buf = self.buf.split(b"\n", 1)
                    if line.strip():
                        return line
                    continue
                left = end - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    return None
                try:
                    data = os.read(proc.stdout.fileno(), 1 << 16)
                except BlockingIOError:
                    continue
                if not data:
                    return b""
                self.buf += data
                if len(self.buf) > 1 << 20:
                    return b"garbage"

    def choose(self, game: str, seat: int, obs: dict[str, Any], legal: list[Any], seq: int) -> int | str:
        """An index, or the fault (``timeout``, ``crash``, ``illegal_action``, ``resigned``)."""
        started = time.perf_counter()
        ok = self.send({"type": "decision_request", "match_id": self.match_id, "seq": seq, "num_actions": len(legal),
                        "game": game, "seat": seat, "deadline_ms": int(self.deadline_s * 1000),
                        "time_left_ms": int(self.deadline_s * 1000), "observation": obs,
                        "legal_actions": [{"index": i, "label": a.label(), "action": a.to_json()}
                                          for i, a in enumerate(legal)]})
        line = self.readline() if ok else b""
        self.decision_ms.append((time.perf_counter() - started) * 1000)
        if line is None:
            return "timeout"
        if not line:  # its stdout closed: it exited (or is being killed)
            self.exit_detail = self._exit_detail()
            return "crash"
        answer = parse_answer(line.decode("utf-8", "replace"))
        if answer is Answer.RESIGN:
            return "resigned"
        if isinstance(answer, Answer) or not 0 <= answer < len(legal):
            return "illegal_action"
        return answer

    def _exit_detail(self) -> str:
        """How the child ended, if it ends within a second (the sandbox keeper exits with the bot's
        status, or 128 + the signal that ended it)."""
        if self.proc is None:
            return ""
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return ""
        if code < 0:
            return f"killed by signal {-code}"
        if code > 128:
            return f"exit status {code} (signal {code - 128})"
        return f"exit status {code}"

    def reset(self) -> None:
        """Stop the child (after a fault: its state is unknown)."""
        if self.proc is not None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def play_game(game_string: str, seed: str, sides: Sequence[Any], *,
              players: Sequence[dict[str, Any]] | None = None, match_id: int = 1,
              deadline_ms: int = DEFAULT_DEADLINE_MS) -> tuple[list[int], int | None, str, dict[str, Any]]:
    """One game (:func:`bots.local.play_local`, chance from ``random.Random(seed)``); ``sides[seat]`` is a
    :class:`ChildSide` or a built-in bot; ``players[seat]`` its identity (``bot_id``, ``name``, ``version``)
    as the children are told, ``match_id`` the game's id. A child that faults is stopped (:meth:`ChildSide.reset`).

    Returns:
        (ranks, the seat that faulted or None, its fault, the game's replay).
    """
    from games.api import option_text
    from games.registry import load_game

    game = load_game(game_string)
    who = list(players) if players is not None else [{"bot_id": 100 + s, "name": f"bot-{s + 1}", "version": "1"}
                                                      for s in range(len(sides))]
    for seat, side in enumerate(sides):
        if isinstance(side, ChildSide):
            side.match_id = match_id
            side.send({"type": "match_started", "protocol": PROTOCOL, "match_id": match_id, "game": game.name,
                       "game_string": game.game_string(),
                       "options": {k: option_text(v) for k, v in game.options.items()}, "seat": seat,
                       "num_players": len(sides),
                       "players": [{"seat": s, "bot_id": int(who[s]["bot_id"]), "name": str(who[s]["name"]),
                                    "version": str(who[s]["version"])} for s in range(len(sides))],
                       "time_control": {"base_ms": 0, "increment_ms": deadline_ms, "cap_ms": deadline_ms,
                                        "margin_ms": MARGIN_MS},
                       "seed_commitment": hashlib.sha256(seed.encode()).hexdigest()})
    record: list[LocalStep] = []
    result = play_local(game, [_seat(side) for side in sides], random.Random(seed), record)
    ranks = list(result.ranks)
    if result.fault_seat is not None and isinstance(sides[result.fault_seat], ChildSide):
        sides[result.fault_seat].reset()
    for seat, side in enumerate(sides):
        if isinstance(side, ChildSide) and side.proc is not None:
            side.send({"type": "match_ended", "match_id": match_id, "seat": seat, "status": "finished",
                       "reason": "", "rank": ranks[seat], "verdict": "normal", "ranks": ranks})
    return ranks, result.fault_seat, result.fault, local_replay(game, seed, record, result, who, match_id=match_id)


def _seat(side: Any) -> Seat:
    """A side as a seat of :func:`bots.local.play_local`: a child is sent the decision request of the stdio
    line protocol; a built-in bot is given the SDK's request."""
    if isinstance(side, ChildSide):
        return lambda d: side.choose(d.game, d.seat, d.observation(), d.legal, d.seq)
    return sdk_seat(side)


def _fault(side: Any, name: str, verdict: str) -> dict[str, str]:
    """``faults[k]``: the side, its verdict and, for a crash, how its process ended (``detail``)."""
    out = {"side": name, "verdict": verdict}
    if verdict == "crash" and isinstance(side, ChildSide) and side.exit_detail:
        out["detail"] = side.exit_detail
    return out


def make_side(spec: str, seed: str, deadline_ms: int) -> Any:
    """A side from its SPEC (see the module doc)."""
    if spec.startswith("exec:"):
        return ChildSide(json.loads(spec[5:]), deadline_ms)
    from bots.cli import make_bot

    kind, _, opts = spec.removeprefix("builtin:").partition(":")
    options: dict[str, Any] = {"seed": seed}
    for item in filter(None, opts.split(",")):
        key, _, value = item.partition("=")
        options[key] = float(value) if value.replace(".", "", 1).isdigit() else value
    return make_bot(kind, **options)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workers.hosting.head_to_head", description=__doc__.splitlines()[0])
    p.add_argument("--game", required=True)
    p.add_argument("--run-seed", required=True)
    p.add_argument("--deals", type=int, required=True)
    p.add_argument("--first-deal", type=int, default=0)
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS)
    p.add_argument("--players", default="", help='JSON {"a": {"bot_id", "name", "version"}, "b": {...}}')
    p.add_argument("--match-id", type=int, default=0, help="the first game's id (default: from the run seed)")
    ns = p.parse_args(argv)
    from games.api import GameError
    from games.registry import load_game

    try:
        players = load_game(ns.game).num_players
    except GameError as exc:
        p.error(f"--game: {exc}")
    if players != 2:
        p.error(f"--game {ns.game!r} has {players} players; the duplicate runner seats two "
                "(e.g. 'floriferous(players=2)')")
    # Stopped by the worker (the test decided): stop the children cleanly on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    a = make_side(ns.a, f"{ns.run_seed}:a", ns.deadline_ms)
    b = make_side(ns.b, f"{ns.run_seed}:b", ns.deadline_ms)
    who, match_id = identities(ns.run_seed)
    if ns.players:
        who = json.loads(ns.players)
    match_id = ns.match_id or match_id
    try:
        for i in range(ns.first_deal, ns.first_deal + ns.deals):
            seed = deal_seed(ns.run_seed, i)
            r1, s1, f1, g1 = play_game(ns.game, seed, [a, b], players=[who["a"], who["b"]], match_id=match_id,
                                   deadline_ms=ns.deadline_ms)
            r2, s2, f2, g2 = play_game(ns.game, seed, [b, a], players=[who["b"], who["a"]], match_id=match_id + 1,
                                   deadline_ms=ns.deadline_ms)
            match_id += 2
            faults = [None if s1 is None else _fault((a, b)[s1], "ab"[s1], f1),
                      None if s2 is None else _fault((b, a)[s2], "ba"[s2], f2)]
            ms = [round(sum(x.decision_ms) / len(x.decision_ms), 3) if isinstance(x, ChildSide) and x.decision_ms
                  else None for x in (a, b)]
            print(json.dumps({"deal": i, "seed": seed, "ranks": [r1, r2], "faults": faults, "decision_ms": ms,
                              "replays": [g1, g2]}), flush=True)
    finally:
        for side in (a, b):
            if isinstance(side, ChildSide):
                side.reset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
