"""Differential test of Floriferous' legal actions against a rulebook reference.

At every decision of seeded random games (solo, solo extended, 2 players,
2 extended, 3 and 4 players, competitive bounties) the engine's legal actions
must be exactly the decisions of ``tests/reference/floriferous_reference.py``,
an independent model written from the rulebook that reads only the deciding
seat's observation. Play is uniform random; ``PARTERRE_SLOW=1`` plays ten
times as many games. The counts are printed.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
from reference.floriferous_reference import legal_decisions, same_decisions

from games.registry import load_game

SCALE = 10 if os.environ.get("PARTERRE_SLOW") == "1" else 1
CONFIGS = [("floriferous(players=1)", 120), ("floriferous(players=1,extended=true)", 90),
           ("floriferous(players=2)", 60), ("floriferous(players=2,extended=true)", 40),
           ("floriferous(players=3)", 40), ("floriferous(players=4)", 30),
           ("floriferous(players=3,competitive_bounties=true)", 20)]


def test_legal_actions_match_the_rulebook_reference(capsys: pytest.CaptureFixture[str]) -> None:
    mismatches: list[str] = []
    lines: list[str] = []
    total: Counter[str] = Counter()
    for game_string, n in CONFIGS:
        game = load_game(game_string)
        kinds: Counter[str] = Counter()
        games = decisions = 0
        for seed in range(n * SCALE):
            rng = random.Random(seed)
            state = game.new_initial_state()
            games += 1
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(state.sample_chance(rng))
                    continue
                legal = state.legal_actions()
                obs = state.observation(state.current_player())
                missing, extra = same_decisions(legal_decisions(obs), [a.to_json() for a in legal])
                decisions += 1
                kinds.update(a.KIND for a in legal)
                if (missing or extra) and len(mismatches) < 5:
                    mismatches.append(f"{game_string} seed {seed} step {len(state.history)} phase "
                                      f"{obs['phase']}: engine lacks {missing}, engine adds {extra}")
                state.apply_action(rng.choice(legal))
        total.update(kinds)
        total["games"] += games
        total["decisions"] += decisions
        lines.append(f"  {game_string}: games={games} decisions={decisions} "
                     + " ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    with capsys.disabled():
        print("\nFloriferous differential legal-action test (options offered, by kind):\n" + "\n".join(lines)
              + f"\n  total: games={total['games']} decisions={total['decisions']}")
    assert not mismatches, "\n".join(mismatches)
    for kind in ("take", "scatter", "toss_tea", "pay_crow", "discard"):  # every decision kind met
        assert total[kind] > 0, kind


def test_the_comparison_catches_a_planted_rule_bug() -> None:
    """A planted bug (face-down cards not offered; the Cup of Tea only kept) is reported."""
    game = load_game("floriferous(players=1)")
    rng = random.Random(0)
    state = game.new_initial_state()
    caught: set[str] = set()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        legal = [a.to_json() for a in state.legal_actions()]
        planted = [a for a in legal if a.get("card", "x") != "" and a.get("toss") is not True]
        missing, extra = same_decisions(legal_decisions(state.observation(state.current_player())), planted)
        assert not extra
        caught.update(dict(m)["kind"] for m in missing)
        state.apply_action(rng.choice(state.legal_actions()))
    assert caught == {"take", "toss_tea"}
