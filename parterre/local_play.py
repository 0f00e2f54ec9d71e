"""``parterre play``: a match on this machine through the real referee, with no database, Redis or worker
(docs/bots.md "From zero to your first local match").

The referee runs in this process on 127.0.0.1 (``referee.testing.Harness``: a port of its own, a random
service token, a static token store); every bot plays over the real wire, under the ladder's clock and
verdicts. The bots are made as in hosted validation (``workers.hosting.trial_games``: ``house_bot``,
``stdio_bot``), so a bot is judged here as it will be there.

Seats rotate like the ladder's seat rotations of a deal: with ``n`` bots, game ``g`` (from 0) is
rotation ``g % n`` of deal ``g // n`` (seed ``bots.local.deal_seed(run_seed, g // n)``), and bot ``b``
sits in seat ``(b + g) % n``; so ``n`` games seat every bot in every seat once, on one deal.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots.local import deal_seed
from workers.hosting.trial_games import house_bot, stdio_bot

NO_SHOW_TIMEOUT_MS = 5000
"""How long a game waits for a seat whose bot is not connected (it was waited for before the game)."""
HOUSE_KINDS = ("random", "greedy", "search")
SPEC_HELP = ("house:random|greedy|search[:OPT=V,...] (a reference bot, e.g. house:search:think_ms=50); "
             "a path to an executable or a .py script speaking the stdio line protocol (a .py runs with "
             "this Python); grpc:COMMAND, a program that connects itself with $PARTERRE_REFEREE_ADDRESS "
             "and $PARTERRE_BOT_TOKEN (e.g. a bots.sdk bot)")


class SpecError(ValueError):
    """A bot spec that names no bot (:data:`SPEC_HELP`)."""


@dataclass
class Entrant:
    """One bot of the run: its spec, its label in the table, how it is started, and its results.

    Attributes:
        kind: ``house``, ``stdio`` or ``grpc``. argv: the house bot's ``KIND[:OPT=V,...]`` as one item,
        or the command. label: its name in the table (unique in the run).
    """

    spec: str
    kind: str
    argv: list[str]
    label: str
    ranks: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    reasons: list[str] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    bot: Any = None
    proc: asyncio.subprocess.Process | None = None
    task: asyncio.Task[Any] | None = None

    def row(self) -> dict[str, Any]:
        """The table's row: games, wins (rank 1), average rank and score, verdicts other than normal."""
        ranked = [(r, s) for r, s in zip(self.ranks, self.scores, strict=True) if r > 0]  # 0: an aborted game
        n, k = len(self.ranks), len(ranked)
        return {"bot": self.label, "spec": self.spec, "games": n, "wins": self.ranks.count(1),
                "avg_rank": round(sum(r for r, _ in ranked) / k, 3) if k else None,
                "avg_score": round(sum(s for _, s in ranked) / k, 3) if k else None,
                "verdicts": dict(sorted(self.faults.items())), "reasons": list(self.reasons),
                "logs": [str(p) for p in self.logs]}


def parse_bot(spec: str) -> Entrant:
    """The entrant of one ``--bot`` spec (:data:`SPEC_HELP`).

    Raises:
        SpecError: not a house kind, no such file, not executable, or an empty ``grpc:`` command.
    """
    if spec.startswith("house:"):
        kind = spec[6:].partition(":")[0]
        if kind not in HOUSE_KINDS:
            raise SpecError(f"--bot {spec!r}: the house bots are {', '.join(HOUSE_KINDS)}")
        try:  # the options are checked now, not when the referee is up
            house_bot(spec[6:], "check")
        except ValueError as exc:
            raise SpecError(f"--bot {spec!r}: {exc}") from None
        return Entrant(spec, "house", [spec[6:]], kind)
    if spec.startswith("grpc:"):
        try:
            argv = shlex.split(spec[5:])
        except ValueError as exc:
            raise SpecError(f"--bot {spec!r}: {exc}") from None
        if not argv:
            raise SpecError(f"--bot {spec!r}: no command after grpc:")
        script = next((a for a in argv[1:] if a.endswith(".py")), argv[0])
        return Entrant(spec, "grpc", argv, Path(script).stem)
    path = Path(spec)
    if not path.is_file():
        raise SpecError(f"--bot {spec!r}: no such file (a bot is house:KIND, a path, or grpc:COMMAND)")
    if path.suffix == ".py":
        return Entrant(spec, "stdio", [sys.executable, str(path.resolve())], path.stem)
    if not os.access(path, os.X_OK):
        raise SpecError(f"--bot {spec!r}: not executable (chmod +x it, or give a .py script)")
    return Entrant(spec, "stdio", [str(path.resolve())], path.stem)


def unique_labels(entrants: list[Entrant]) -> None:
    """Number the labels that repeat (``greedy``, ``greedy#2``)."""
    seen: Counter[str] = Counter()
    for e in entrants:
        seen[e.label] += 1
        if seen[e.label] > 1:
            e.label = f"{e.label}#{seen[e.label]}"


@dataclass(frozen=True)
class GameRecord:
    """One played game: its number (from 1), seed, status, per seat (bot label, rank, score, verdict and,
    for a verdict other than normal, its reason), the replay file and the bots' debug-text file (None:
    no bot sent any)."""

    number: int
    seed: str
    status: str
    seats: list[dict[str, Any]]
    replay: Path
    reason: str = ""
    debug: Path | None = None

    def line(self) -> str:
        """The one-line result printed after the game."""
        def fault(s: dict[str, Any]) -> str:
            if s["verdict"] == "normal":
                return ""
            why = s.get("reason") or ""
            return f" ({s['verdict'] or 'no verdict'}{': ' + why if why and why != s['verdict'] else ''})"

        seats = ", ".join(f"{s['bot']} #{s['rank']} {s['score']:g}{fault(s)}"
                          for s in sorted(self.seats, key=lambda s: s["rank"]))
        if self.status != "finished":
            return f"game {self.number}: {seats} [{self.status}: {self.reason or 'not played'}; no replay]"
        notes = f" (debug text: {self.debug})" if self.debug is not None else ""
        return f"game {self.number}: {seats}  -> {self.replay}{notes}"


def debug_path(replay: Path) -> Path:
    """The debug-text file beside a replay file: ``game-001.json`` -> ``game-001.debug.jsonl``."""
    return replay.with_name(replay.name.removesuffix(".json") + ".debug.jsonl")


def write_debug(replay: Path, notes: list[tuple[int, int, str, str]]) -> Path | None:
    """Write the bots' debug text of one game (``(step, seat, bot, text)`` per decision that sent some;
    docs/bots.md, "Debug text") beside its replay, one JSON object a line in step order; none, no file.
    Kept out of the replay file itself, as the ladder keeps it out of the public replay: the replay can
    be shared, the bots' notes stay with their author."""
    if not notes:
        return None
    path = debug_path(replay)
    lines = [json.dumps({"step": step, "seat": seat, "bot": bot, "text": text}, ensure_ascii=False)
             for step, seat, bot, text in sorted(notes)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_debug(path: Path, replay: dict[str, Any]) -> dict[int, tuple[int, str]]:
    """``{step: (seat, text)}`` of a debug-text file written by :func:`write_debug` for ``replay``.

    Raises:
        ValueError: a line that is not such a note, or a note whose step is not that seat's decision
            in ``replay`` (the file belongs to another replay).
    """
    steps = replay.get("steps") or []
    notes: dict[int, tuple[int, str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            note = json.loads(line)
            step, seat, text = note["step"], note["seat"], note["text"]
        except (ValueError, TypeError, KeyError):
            raise ValueError(f"{path}, line {number}: not a debug note (step, seat, text)") from None
        if type(step) is not int or type(seat) is not int or not isinstance(text, str):
            raise ValueError(f"{path}, line {number}: not a debug note (step, seat, text)")
        if not 0 <= step < len(steps) or steps[step].get("player") != seat:
            raise ValueError(f"{path}, line {number}: step {step} is not a decision of seat {seat} in this "
                             "replay (is it the debug file of another game?)")
        notes[step] = (seat, text)
    return notes


def seating(n: int, game: int) -> list[int]:
    """Entrant index per seat in game ``game`` (from 0): bot ``b`` sits in seat ``(b + game) % n``."""
    return [(seat - game) % n for seat in range(n)]


async def _start_grpc(e: Entrant, address: str, token: str, log_dir: Path) -> None:
    if e.proc is not None and e.proc.returncode is None:
        return
    log = log_dir / f"{e.label}.log"
    if log not in e.logs:
        e.logs.append(log)
    # the project's own Python (and its `parterre`) first on PATH: `grpc:python3 mybot.py` then imports the SDK
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "PARTERRE_REFEREE_ADDRESS": address, "PARTERRE_BOT_TOKEN": token}
    with log.open("ab") as fh:  # the child keeps its own descriptor
        e.proc = await asyncio.create_subprocess_exec(*e.argv, stdin=asyncio.subprocess.DEVNULL, stdout=fh,
                                                      stderr=fh, env=env, start_new_session=True)


async def _stop_grpc(e: Entrant) -> None:
    if e.proc is None or e.proc.returncode is not None:
        return
    e.proc.terminate()
    try:
        await asyncio.wait_for(e.proc.wait(), 5)
    except TimeoutError:
        e.proc.kill()
        await e.proc.wait()


CONNECT_TIMEOUT_S = 20.0
"""How long a bot may take to connect before its first game."""


async def wait_connected(h: Any, bot_id: int, gone: Callable[[], bool]) -> None:
    """Wait (up to :data:`CONNECT_TIMEOUT_S`) for a session of ``bot_id``; give up early once ``gone()``
    (its process exited: the referee then judges the no-show)."""
    import contextlib

    loop = asyncio.get_running_loop()
    end = loop.time() + CONNECT_TIMEOUT_S
    while loop.time() < end:
        with contextlib.suppress(TimeoutError):
            await h.wait_sessions(bot_id, timeout_s=0.1)
            return
        if gone():
            return


def _gone(e: Entrant) -> Callable[[], bool]:
    if e.kind == "grpc":
        return lambda: e.proc is not None and e.proc.returncode is not None
    return lambda: e.task is not None and e.task.done()


async def play(game: str, entrants: list[Entrant], *, games: int, run_seed: str, time_control: dict[str, int],
               max_duration_ms: int, replays: Path, on_game: Callable[[GameRecord], None]) -> list[GameRecord]:
    """Play ``games`` games of ``game`` (one seat per entrant, seats rotating) and write each replay.

    Each replay is written to ``replays/game-NNN.json`` in the shape of ``parterre replay export`` (match,
    seats, replay), the bots' debug text of that game, if any, beside it (:func:`write_debug`,
    ``game-NNN.debug.jsonl``), and the bots' logs go to ``replays/logs/``. ``on_game`` is called after each
    game.
    """
    from referee.testing import Harness

    log_dir = replays / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    tokens = {f"local-{i}-{secrets.token_hex(12)}": i + 1 for i in range(len(entrants))}
    by_id = {bot_id: token for token, bot_id in tokens.items()}
    records: list[GameRecord] = []
    async with Harness(tokens, service_token=secrets.token_hex(16)) as h:
        try:
            for i, e in enumerate(entrants):
                if e.kind == "house":
                    e.bot = house_bot(e.argv[0], f"{run_seed}:{i}")
                elif e.kind == "stdio":
                    e.bot = stdio_bot(e.argv, log_dir / e.label, name=e.label)
                if e.bot is not None:
                    e.task = h.start_bot(e.bot, by_id[i + 1], initial_backoff_s=0.05)
            n = len(entrants)
            for g in range(games):
                order = seating(n, g)
                for i in order:
                    e = entrants[i]
                    if e.kind == "grpc":  # again, if it exited
                        await _start_grpc(e, h.address, by_id[i + 1], log_dir)
                    await wait_connected(h, i + 1, _gone(e))
                    if e.kind == "grpc" and e.proc is not None and e.proc.returncode is not None:
                        print(f"{e.label}: its program exited with status {e.proc.returncode} before connecting "
                              f"(its log: {log_dir / (e.label + '.log')}); its seat is a no-show",
                              file=sys.stderr, flush=True)
                seed = deal_seed(run_seed, g // n)
                result = await h.run_match(g + 1, game, [i + 1 for i in order], seed=seed,
                                           no_show_timeout_ms=NO_SHOW_TIMEOUT_MS, max_duration_ms=max_duration_ms,
                                           **time_control)
                records.append(_record(g + 1, game, seed, time_control, entrants, order, result, replays))
                on_game(records[-1])
        finally:
            for e in entrants:
                if e.kind == "grpc":
                    await _stop_grpc(e)
    for e in entrants:
        if e.kind == "stdio":
            e.logs.extend(p for p in e.bot.log_paths if p not in e.logs)
    return records


def _record(number: int, game: str, seed: str, time_control: dict[str, int], entrants: list[Entrant],
            order: list[int], result: Any, replays: Path) -> GameRecord:
    """Count the game in its entrants' results and write its replay file.

    A seat's reason is the referee's (the replay's ``fault_reasons``: a timeout names its decision and
    the allowance); a stdio bot's resignation the adapter made for it says why (its program exited).
    """
    replay = json.loads(result.replay_json) if result.replay_json else None
    referee_reasons = (replay or {}).get("fault_reasons") or []
    seats = []
    for s in sorted(result.seats, key=lambda s: s.seat):
        e = entrants[order[s.seat]]
        reason = referee_reasons[s.seat] if s.seat < len(referee_reasons) else ""
        if s.verdict == "resigned" and e.kind == "stdio" and e.bot is not None:
            reason = e.bot.resign_reasons.get(number, reason)
        seats.append({"seat": s.seat, "bot_id": order[s.seat] + 1, "name": e.label, "version": "local",
                      "rank": s.rank, "score": s.score, "verdict": s.verdict, "time_used_ms": s.time_used_ms,
                      "decisions": s.decisions, "reason": "" if s.verdict == "normal" else reason})
        e.ranks.append(s.rank)
        e.scores.append(s.score)
        if s.verdict != "normal":
            e.faults[s.verdict or result.status] += 1
            e.reasons.append(f"game {number}: {s.verdict or result.status}"
                             + (f": {seats[-1]['reason']}" if seats[-1]["reason"] else ""))
    path = replays / f"game-{number:03d}.json"
    debug = None
    if result.status == "finished":  # an aborted game (a no-show) was not played: nothing to replay or verify
        export = {"match": {"id": number, "game_string": game, "seed": seed, "time_control": time_control,
                            "status": result.status, "reason": result.reason},
                  "seats": seats, "replay": replay}
        path.write_text(json.dumps(export, indent=1), encoding="utf-8")
        debug = write_debug(path, [(n.step, s.seat, entrants[order[s.seat]].label, n.text)
                           for s in result.seats for n in s.debug_notes])
    return GameRecord(number, seed, result.status,
                      [{"seat": s["seat"], "bot": s["name"], "rank": s["rank"], "score": s["score"],
                        "verdict": s["verdict"], "reason": s["reason"]} for s in seats], path, result.reason,
                      debug)
