"""Differential test of La Fleur's legal-action generator against an independent reference.

``tests/reference/lafleur_reference.py`` models the decision rules from the
rulebook, the documented decisions and the card data alone (no engine code).
At every decision of seeded random games, the set of legal actions the engine
offers must equal the set the reference allows, computed from the acting
seat's observation and the public action stream. The games mix a uniform
policy with a Flower-hungry one (more purchases, payments and reshuffles).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from typing import Any

import pytest
from reference import lafleur_reference as R  # tests/ is on sys.path (pytest rootdir-less layout)

from games.registry import load_game

SLOW = os.environ.get("PARTERRE_SLOW") == "1"
GAMES = {"lafleur(players=1)": 20, "lafleur(players=1,difficulty=hardest)": 10, "lafleur(players=2)": 30,
         "lafleur(players=3)": 20, "lafleur(players=4)": 20}
"""Games per variant in the normal suite (x 25 with ``PARTERRE_SLOW=1``)."""


def _canon(a: dict[str, Any]) -> str:
    return json.dumps(a, sort_keys=True, separators=(",", ":"))


def _play(variant: str, seed: int, counts: Counter[str]) -> None:
    game = load_game(variant)
    state = game.new_initial_state()
    rng = random.Random(seed)
    ctx: dict[int, R.Context] = {}
    hungry = seed % 2 == 1
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
            continue
        seat = state.current_player()
        obs = state.observation(seat)
        legal = state.legal_actions()
        engine = [_canon(a.to_json()) for a in legal]
        assert len(set(engine)) == len(engine), "duplicate legal actions"
        ref = R.legal_actions(obs, ctx.setdefault(seat, R.Context()))
        assert set(engine) == ref, (
            f"{variant} seed {seed} step {len(state.history)} phase {obs['phase']}: "
            f"engine only {sorted(set(engine) - ref)}, reference only {sorted(ref - set(engine))}")
        counts["decisions"] += 1
        counts[obs["phase"]] += 1
        pick = legal[rng.randrange(len(legal))]
        if hungry:
            kinds = [a for a in legal if a.to_json()["kind"] in ("buy_flower", "buy_feature", "pay_flower",
                                                                   "pay_pair", "pair_card", "take_flower")
                     or a.to_json().get("location") in ("flower_market", "garden_features")]
            if kinds and rng.random() < 0.8:
                pick = rng.choice(kinds)
        R.observe(ctx, seat, pick.to_json())
        state.apply_action(pick)
    counts["games"] += 1


@pytest.mark.parametrize("variant", list(GAMES))
def test_engine_legal_actions_match_the_reference(variant: str) -> None:
    counts: Counter[str] = Counter()
    games = GAMES[variant] * (25 if SLOW else 1)
    for seed in range(games):
        _play(variant, seed, counts)
    print(f"{variant}: {dict(counts)}")
    assert counts["games"] == games and counts["pay"] > 0 and counts["place"] > 0
