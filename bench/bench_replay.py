"""Stored replay bytes per decision, beyond the header, for each game (docs/benchmarks.md).

Usage::

    .venv/bin/python bench/bench_replay.py [--matches 6] [--repeats 3]

Plays real 2-player matches through the referee (``referee.testing.Harness``,
two bots that answer with a random legal index, seeded), takes each match's
replay exactly as the referee returns it to the worker, and stores it the way
the ladder does (``ladder.replay_store.pack``: the compact form when it
round-trips, else zstd of the text). The header cost is measured on the same
replay with its ``steps`` emptied, so the figure is

    (stored(replay) - stored(replay without steps)) / decisions

where *decisions* are the seats' decisions (steps with ``player >= 0``); the
bytes of chance steps count in the numerator. A repeat is ``--matches``
matches per game (different seeds); the median over repeats is judged against
the goal (<= 4 bytes per decision). The baseline of the same run is the
former storage, zstd of the JSON text (``ladder.matches.ZSTD_LEVEL``), measured
the same way on the same replays; the note gives the zstd size of a bare JSON
list of the chosen indexes, about what any encoding of the choices alone
costs. Every stored row is expanded again and compared with the referee's
text. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import zstandard  # noqa: E402 - after the sys.path setup above

from bench.harness import Goal, Result, report  # noqa: E402 - after the sys.path setup above

GAMES = {"floriferous": "floriferous(players=2)", "lafleur": "lafleur(players=2)", "flowar": "flowar(players=2)"}
GOAL_BYTES = 4.0
"""Compressed replay bytes per decision beyond the header."""
TOKENS = {"bench-a": 1, "bench-b": 2}


def _zlen(text: str, level: int) -> int:
    return len(zstandard.ZstdCompressor(level=level).compress(text.encode("utf-8")))


async def _play(game_string: str, matches: int, first_seed: int) -> list[dict[str, object]]:
    """``matches`` replays of ``game_string`` played through a referee by random bots."""
    from bots.sdk import Bot
    from referee.testing import Harness, replay_of

    class RandomBot(Bot):
        name = "random"

        def __init__(self, seed: int) -> None:
            super().__init__()
            self.rng = random.Random(seed)

        def choose(self, request):
            return self.rng.randrange(len(request.raw.legal_actions))

    out = []
    async with Harness(TOKENS) as h:
        for i, tok in enumerate(TOKENS):
            h.start_bot(RandomBot(first_seed + i), tok)
        for bot_id in TOKENS.values():
            await h.wait_sessions(bot_id)
        for m in range(matches):
            seats = [1, 2] if m % 2 == 0 else [2, 1]
            result = await h.run_match(first_seed + m + 1, game_string, seats, seed=f"bench-{first_seed + m}",
                                       cap_ms=10_000)
            assert result.status == "finished", result.reason
            out.append(replay_of(result))
    return out


def chosen_indexes(game_string: str, steps: list[dict[str, object]]) -> list[int]:
    """Each decision's index in the legal-action list, re-derived by re-simulating the steps."""
    from games.registry import load_game

    game = load_game(game_string)
    state = game.new_initial_state()
    out = []
    for step in steps:
        action = game.action_from_json(step["action"])  # type: ignore[arg-type]  # a JSON object
        if int(step["player"]) >= 0:  # type: ignore[call-overload]  # a JSON integer
            out.append(state.legal_actions().index(action))
        state.apply_action(action)
    return out


def bytes_per_decision(game_string: str, replays: list[dict[str, object]],
                       level: int) -> tuple[float, float, float, int]:
    """(stored bytes beyond the header per decision, former text-form bytes, bare index-list bytes, decisions).

    Raises:
        AssertionError: a stored row does not expand to the referee's text, or is not compact.
    """
    from games.api import canonical_json
    from ladder.replay_store import COMPACT_FORMAT, pack, unpack

    extra = old = bare = decisions = 0
    for rep in replays:
        steps = rep["steps"]
        assert isinstance(steps, list)
        indexes = chosen_indexes(game_string, steps)
        decisions += len(indexes)
        text, header = canonical_json(rep), canonical_json({**rep, "steps": []})
        fmt, blob = pack(text, level)
        assert fmt == COMPACT_FORMAT and unpack(fmt, blob) == text, "the compact row must round-trip"
        extra += len(blob) - len(pack(header, level)[1])
        old += _zlen(text, level) - _zlen(header, level)
        bare += _zlen(json.dumps(indexes), level) - _zlen("[]", level)
    return extra / decisions, old / decisions, bare / decisions, decisions


def main(argv: list[str] | None = None) -> int:
    """Measure each game; print the report; returns 0 when every goal is met, else 1."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=6, help="matches per game and repeat")
    p.add_argument("--repeats", type=int, default=3, help="repeats (different seeds; median reported)")
    ns = p.parse_args(argv)
    from ladder.matches import ZSTD_LEVEL

    results = []
    for name, game_string in GAMES.items():
        got: list[float] = []
        base: list[float] = []
        bare: list[float] = []
        counted = 0
        for r in range(ns.repeats):
            replays = asyncio.run(_play(game_string, ns.matches, 1000 * r))
            per, former, floor, n = bytes_per_decision(game_string, replays, ZSTD_LEVEL)
            got.append(per)
            base.append(former)
            bare.append(floor)
            counted += n
        results.append(Result(
            Goal(f"{name}: replay bytes/decision beyond header", "bytes/decision", GOAL_BYTES,
                 higher_is_better=False),
            got, base, "bytes/decision of the former text form (zstd of the JSON)",
            note=f"{counted} decisions in {ns.matches * ns.repeats} matches; a bare index list "
                 f"{statistics.median(bare):.2f} bytes/decision (zstd level {ZSTD_LEVEL})",
        ))
    return report(results, "replays: compressed bytes per decision")


if __name__ == "__main__":
    sys.exit(main())
