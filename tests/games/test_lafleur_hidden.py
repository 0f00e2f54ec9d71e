"""Hidden information in La Fleur: hands, setup choices and decks never leak.

See docs/architecture.md, "Hidden information".

Complements tests/games/test_conformance.py (which resamples what no seat may see) with
per-seat resampling: a seat's observation and legal actions are the same whatever
the cards it cannot see.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from games.api import Action, State, canonical_json
from games.lafleur.cards import FLOWERS
from games.lafleur.game import LaFleurGame
from games.registry import load_game

FLOWER_IDS = frozenset(f.id for f in FLOWERS)


@pytest.mark.parametrize("variant", ["lafleur(players=4)", "lafleur(players=2)", "lafleur(players=1)"])
def test_per_seat_resampling_keeps_that_seats_view(variant: str) -> None:
    game = load_game(variant)
    moved = 0
    for seed in (0,) if game.num_players > 2 else (0, 1):
        rng = random.Random(seed)
        state = game.new_initial_state()
        step = 0
        while not state.is_terminal():
            if step % 23 == 3:
                for seat in range(game.num_players):
                    twin = state.resample_hidden(random.Random(step * 7 + seat), seat)
                    assert twin.observation(seat) == state.observation(seat)
                    if state.current_player() == seat:
                        assert [a.to_json() for a in twin.legal_actions()] == [
                            a.to_json() for a in state.legal_actions()]
                    moved += twin.state_hash() != state.state_hash()
            state.apply_action(state.sample_chance(rng) if state.is_chance_node()
                               else rng.choice(state.legal_actions()))
            step += 1
    assert moved


def _flower_ids_in(obs: dict[str, object]) -> set[str]:
    text = canonical_json(obs)
    return {c for c in FLOWER_IDS if f'"{c}"' in text}


_HUNGRY_PREFERENCES: tuple[Callable[[dict[str, Any]], bool], ...] = (
    lambda j: j["kind"] in ("buy_flower", "take_flower") and j.get("space") == 0,  # from the deck
    lambda j: j["kind"] in ("pay_pair", "pair_card"),
    lambda j: j["kind"] == "pay_flower",
    lambda j: j.get("location") == "flower_market",
    lambda j: j["kind"] == "buy_feature",
)


def _policy(state: State, rng: random.Random, hungry: bool) -> Action:
    """Uniform among legal actions; ``hungry`` (90 %) takes the first kind of move that
    draws from or discards to the Flower deck, and avoids the Prestige location, so
    games last longer and the Flower deck runs out and is reshuffled."""
    legal = state.legal_actions()
    if not hungry:
        return rng.choice(legal)
    js = [a.to_json() for a in legal]
    if rng.random() < 0.9:
        for pref in _HUNGRY_PREFERENCES:
            pick = [a for a, j in zip(legal, js, strict=True) if pref(j)]
            if pick:
                return rng.choice(pick)
    return rng.choice([a for a, j in zip(legal, js, strict=True) if j.get("location") != "prestige"] or legal)


def _hand_leaks(variant: str, seed: int, counts: dict[str, int], hungry: bool = False,
                ) -> list[tuple[int | None, int, str]]:
    """Cards that appear in another player's hand in a viewer's observation without being visible before.

    The oracle uses nothing of the engine's bookkeeping: a Flower card may show
    up in player p's hand, as seen by viewer v (v != p, or the spectator), only
    if v's previous observation showed that card somewhere (the market, a
    discard pile, a hand): a card drawn face-down from the deck was in no view,
    so naming it is a leak (Rulebook: "Do not show these cards to the other
    players"). Observations are taken after every action, chance included, and
    a reshuffle is itself followed by a chance node, so a reshuffled card is
    out of every view before it is drawn. The hand size shown must also be the
    number of cards the player took (counted from the public action stream).
    """
    game = load_game(variant)
    rng = random.Random(seed)
    state = game.new_initial_state()
    viewers = [None, *range(game.num_players)]
    prev = {v: state.observation(v) for v in viewers}
    leaks: list[tuple[int | None, int, str]] = []
    while True:
        before = prev[None]
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else _policy(state, rng, hungry))
        if state.is_terminal():
            counts["games"] += 1
            return leaks
        for v in viewers:
            obs = state.observation(v)
            visible_before = _flower_ids_in(prev[v])
            for p, player in enumerate(obs["players"]):
                if p != v:
                    new = set(player["hand"]) - set(prev[v]["players"][p]["hand"])
                    leaks += [(v, p, c) for c in sorted(new - visible_before)]
                    assert len(player["hand"]) <= player["cards_in_hand"]
            prev[v] = obs
        now = prev[None]
        counts["steps"] += 1
        if before["flower_discard"] and not now["flower_discard"] and now["flower_deck"] > before["flower_deck"]:
            counts["reshuffles"] += 1
            # a card some viewer saw face-up goes back face-down: the path a leak would take
            counts["reshuffled_seen"] += len(before["flower_discard"])


# Seeds where a card once seen face-up is reshuffled into the Flower deck and
# drawn face-down again (docs/faults.md F-20): solo 94 and 102 reach it with the
# opponent's face-down reward cards, which the seat and the spectator must not see; the
# "hungry" policy (Flower cards moved whenever possible) reshuffles the deck
# in multiplayer games, where a card taken face-up, discarded, reshuffled and
# drawn by another seat must stay out of the other seats' view.
@pytest.mark.parametrize(("variant", "seeds", "hungry", "min_reshuffles"), [
    ("lafleur(players=1)", [94, 102, *range(12)], False, 2),
    ("lafleur(players=2)", range(6), True, 4),
    ("lafleur(players=3)", range(6), True, 3),
    ("lafleur(players=4)", range(6), True, 4),
])
def test_no_card_drawn_face_down_is_named_to_another_viewer(variant: str, seeds: list[int], hungry: bool,
                                                            min_reshuffles: int) -> None:
    counts = dict.fromkeys(("games", "steps", "reshuffles", "reshuffled_seen"), 0)
    for seed in seeds:
        assert _hand_leaks(variant, seed, counts, hungry) == [], f"{variant} seed {seed}"
    print(f"{variant} hungry={hungry}: {counts}")
    assert counts["reshuffles"] >= min_reshuffles  # the path that leaked is exercised


def test_solo_opponent_hand_is_face_down() -> None:
    state = load_game("lafleur(players=1)").new_initial_state()
    rng = random.Random(2)
    while not state.is_terminal():
        opp = state.observation(0)["players"][1]
        assert opp["hand"] == [] and opp["cards_in_hand"] == len(state._hand[1])
        state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(state.legal_actions()))


def test_decisions_stay_small() -> None:
    """docs/architecture.md, "games: the rules engines": no decision offers more than a few hundred options."""
    worst = 0
    for variant in LaFleurGame.VARIANTS:
        game = load_game(variant)
        for seed in (0, 1, 2):
            rng = random.Random(seed)
            state = game.new_initial_state()
            while not state.is_terminal():
                legal = state.legal_actions()
                if not state.is_chance_node():
                    worst = max(worst, len(legal))
                state.apply_action(state.sample_chance(rng) if state.is_chance_node() else rng.choice(legal))
    assert worst <= 200
