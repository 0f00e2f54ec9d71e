"""Differential test of Flowar's legal-action generator against an independent model.

``tests/reference/flowar_reference.py`` is written from the rulebook and the
decisions of ``docs/rules/flowar.md`` and reads only the deciding seat's
observation, the component data and that seat's own actions this turn. At every
decision of many seeded games (uniformly random play, and greedy-bot play so that
deliveries and Kingdom Favors happen often) the engine's legal actions must be
exactly the model's. The test prints how many games and decisions were checked,
by phase, and how many the model does not cover.
"""

from __future__ import annotations

import random
from collections import Counter

from reference import flowar_reference as R

from bots.strategies.flowar import greedy_choice
from games.registry import load_game

GAMES = ("flowar(players=1)", "flowar(players=2)", "flowar(players=3)", "flowar(players=4)",
         "flowar(first_game_favors=true,players=2)", "flowar(first_game_favors=true,players=4)")


def check_game(game: str, seed: int, greedy: float, checked: Counter[str], skipped: Counter[str]) -> None:
    """Play one game; compare engine and model at every decision (AssertionError on a difference)."""
    st = load_game(game).new_initial_state()
    rng = random.Random(seed)
    while not st.is_terminal():
        if st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
            continue
        seat = st.current_player()
        obs = st.observation(seat)
        legal = st.legal_actions()
        want = R.legal(obs, seat, R.taken_this_turn(st, seat))
        if want is None:
            skipped[obs["phase"]] += 1
        else:
            got = {R.key(a.to_json()) for a in legal}
            assert len(got) == len(legal), "duplicate legal actions"
            assert got == want, (f"{game} seed {seed} step {len(st.history)} phase {obs['phase']}: "
                                 f"engine only {sorted(got - want)}, model only {sorted(want - got)}")
            checked[obs["phase"]] += 1
        if rng.random() < greedy:
            a = legal[greedy_choice(obs, [b.to_json() for b in legal], seat)]
        else:
            a = rng.choice(legal)
        st.apply_action(a)


def run(seeds: range, report: bool = True) -> tuple[int, Counter[str], Counter[str]]:
    checked: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    games = 0
    for seed in seeds:
        for game in GAMES:
            check_game(game, seed, 0.0 if seed % 2 else 0.8, checked, skipped)
            games += 1
    if report:
        print(f"\nflowar reference: {games} games, {sum(checked.values())} decisions checked "
              f"({dict(sorted(checked.items()))}); not modelled: {dict(sorted(skipped.items()))}")
    return games, checked, skipped


def test_engine_legal_actions_equal_the_reference_model() -> None:
    games, checked, skipped = run(range(24))
    assert games == 144
    for phase in ("turn", "strike", "take_line", "take_card", "sell", "exchange_mp", "choose_guild",
                  "keep_contract", "deliver", "discard_contract"):
        assert checked[phase] > 0, phase
    assert not skipped  # every decision phase is modelled
    assert sum(checked.values()) > 20_000
