"""Random playouts of every Flowar variant: invariants, clone, replay, determinism, hidden information.

The same properties the shared conformance tests check over the registry
(OpenSpiel-style), plus Flowar's conservation laws: every card and Worker is
in exactly one place at every step.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from games.flowar.cards import CONTRACT_IDS, FLOWER_IDS
from games.flowar.game import FlowarGame
from games.flowar.phases import D_KEEP, D_TURN
from games.flowar.state import FlowarState
from games.registry import load_game


def check_invariants(st: FlowarState) -> None:
    flowers = st._flower_deck + st._flower_discard + st._aside + [x for x in st._market if x >= 0]
    for s in range(st._num_players):
        flowers += st._fresh[s] + st._wilt[s]
    assert sorted(flowers) == list(range(len(FLOWER_IDS)))
    assert all(st._flower_in_deck[x] == (x in st._flower_deck) for x in range(len(FLOWER_IDS)))
    contracts = st._contract_deck + st._contract_discard + st._unchosen + [x for x in st._contract_grid if x >= 0]
    for s in range(st._num_players):
        contracts += st._contracts[s] + st._dealt[s] + [x for b in st._below[s] for x in b]
    assert sorted(contracts) == list(range(len(CONTRACT_IDS)))
    for t in range(3):
        total = st._bag[t] + st._strike_area[t] + st._parked[t] + st._taxus_worker_supply[t]
        total += sum(sp[t] for sp in st._spaces) + sum(w[t] for w in st._workers)
        total += sum(st._guild_workers[g][t] for g in range(6))
        assert total == st._bag_full, (t, total)
        assert st._strike[t] <= (st._strike_area[t] >= 3)  # a strike needs 3 in the Strike Area
    for s in range(st._num_players):
        assert st._coins[s] >= 0 and st._torches[s] >= 0 and 0 <= st._loans[s] <= 2
        assert min(st._workers[s]) >= 0
        if st._phase == D_TURN:
            assert len(st._contracts[s]) <= 4
    assert 0 <= sum(st._efficiency_supply.values()) <= 12


def playout(game: str, seed: int, check: bool = True) -> FlowarState:
    state = load_game(game).new_initial_state()
    assert isinstance(state, FlowarState)
    rng = random.Random(seed)
    decisions = 0
    while not state.is_terminal():
        if check:
            check_invariants(state)
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            legal = state.legal_actions()
            assert legal and len({a.canonical() for a in legal}) == len(legal)
            state.apply_action(rng.choice(legal))
            decisions += 1
    assert decisions <= FlowarGame.INFO.max_game_length
    check_invariants(state)
    return state


@pytest.mark.parametrize("variant", FlowarGame.VARIANTS)
def test_random_playouts_keep_the_invariants(variant: str) -> None:
    for seed in range(3):
        st = playout(variant, seed)
        out = st.outcome()
        assert all(float(x).is_integer() for x in out.scores)


def test_same_seed_same_history_and_replay() -> None:
    a = playout("flowar(players=3)", 11, check=False)
    b = playout("flowar(players=3)", 11, check=False)
    assert [x.canonical() for _, x in a.history] == [x.canonical() for _, x in b.history]
    game = load_game("flowar(players=3)")
    rebuilt = game.state_from_json(a.to_json())
    assert rebuilt.state_hash() == a.state_hash()
    assert rebuilt.outcome() == a.outcome()


def test_clone_is_equal_and_independent() -> None:
    st = load_game("flowar(players=4)").new_initial_state()
    rng = random.Random(4)
    for step in range(600):
        if st.is_terminal():
            break
        if step % 37 == 0:
            twin = st.clone()
            assert twin.state_hash() == st.state_hash()
            assert twin.observation(None) == st.observation(None)
            if not twin.is_terminal():
                before = st.state_hash()
                twin.apply_action(twin.legal_actions()[-1])
                assert st.state_hash() == before
        st.apply_action(st.sample_chance(rng) if st.is_chance_node() else rng.choice(st.legal_actions()))


def test_hidden_contracts_can_be_resampled_without_changing_observations() -> None:
    """docs/faults.md F-20: a seat's observation is the same when other seats' hidden cards change."""
    changed = 0
    for seed in range(6):
        st = load_game("flowar(players=4)").new_initial_state()
        rng = random.Random(seed)
        while st._phase != D_KEEP:
            st.apply_action(st.sample_chance(rng))
        for _ in range(seed % 4):  # some seats have already chosen
            st.apply_action(rng.choice(st.legal_actions()))
        for seat in (None, 0, 1, 2, 3):
            twin = st.resample_hidden(random.Random(seed + 100), seat)
            assert twin.observation(seat) == st.observation(seat)
            if seat is not None and seat == st.current_player():
                assert twin.legal_actions() == st.legal_actions()
            changed += twin.state_hash() != st.state_hash()
    assert changed > 10
    # Outside setup nothing is hidden: the twin is a clone.
    st = playout("flowar(players=2)", 1, check=False)
    assert st.resample_hidden(random.Random(0), 0).state_hash() == st.state_hash()


def test_decision_points_stay_small() -> None:
    """docs/architecture.md, "games: the rules engines": no decision offers more than a few hundred options."""
    sizes: Counter[int] = Counter()
    for seed in range(4):
        st = load_game("flowar(players=4)").new_initial_state()
        rng = random.Random(seed)
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(st.sample_chance(rng))
            else:
                legal = st.legal_actions()
                sizes[len(legal)] += 1
                st.apply_action(rng.choice(legal))
    assert max(sizes) < 100
