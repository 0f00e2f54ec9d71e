"""Seeded Flowar games played through the public API, for tests (the greedy bot and random play).

Not a model of the rules: a driver that reaches positions by play, its Kingdom Favors chosen at
their chance nodes so that the Favors a test is about come into play.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from bots.strategies.flowar import greedy_choice
from games.api import Action
from games.flowar import actions as A
from games.registry import load_game


def favor_game(game: str, seed: int, favors: tuple[int, ...]) -> Iterator[tuple[Any, Action]]:
    """Yield (state, action) at every step of a game played by the greedy bot (70 %) and at random,
    each ``deal_favor`` chance node taking the first of ``favors`` still in the pool."""
    st = load_game(game).new_initial_state()
    rng = random.Random(seed)
    while not st.is_terminal():
        if st.is_chance_node():
            deal = [a for a in st.legal_actions() if isinstance(a, A.DealFavor) and a.favor in favors]
            a = min(deal, key=lambda d: favors.index(d.favor)) if deal else st.sample_chance(rng)
        else:
            legal = st.legal_actions()
            seat = st.current_player()
            if rng.random() < 0.7:
                a = legal[greedy_choice(st.observation(seat), [b.to_json() for b in legal], seat)]
            else:
                a = rng.choice(legal)
        yield st, a
        st.apply_action(a)


BOARD_SPACES = ("maintenance", "sell", "payoff", "guild")


def strike_hungry(obs: dict[str, Any], legal: list[dict[str, Any]], seat: int, rng: random.Random) -> int:
    """A player that seeks the positions where a seat's own action calls a strike or calls it off
    just before its placement, short of Coins: before placing it hires, fires or uses Kingdom
    Favor 5 or 19 when it can (30 %); it uses up its free Player Board spaces (30 %) or else takes
    the dearest placement; it pays every strike in full, exchanges as many Coins as it may when
    passing, ends its turn at once, never takes a Loan or sells; the greedy bot delivers."""
    by_kind: dict[str, list[int]] = {}
    for i, a in enumerate(legal):
        by_kind.setdefault(a["kind"], []).append(i)
    phase = obs["phase"]
    if phase == "turn" and obs["context"]["placed"] == 0:
        pre = by_kind.get("hire", []) + by_kind.get("fire", []) + [
            i for i in by_kind.get("use_favor", []) if legal[i]["favor"] in (5, 19)]
        if pre and rng.random() < 0.3:
            return rng.choice(pre)
        places = by_kind.get("place", [])
        if places:
            board = [i for i in places if legal[i]["space"] in BOARD_SPACES]
            if board and rng.random() < 0.3:
                return rng.choice(board)
            top = max(legal[i]["coins"] for i in places)
            return rng.choice([i for i in places if legal[i]["coins"] == top])
    if phase == "turn" and "end_turn" in by_kind:
        return by_kind["end_turn"][0]
    if phase in ("deliver", "basket", "take_line"):
        return greedy_choice(obs, legal, seat)
    if phase == "exchange_mp":
        return max(by_kind["exchange_mp"], key=lambda i: legal[i]["mp"])
    if phase == "strike":
        return max(by_kind["pay_strike"], key=lambda i: legal[i]["count"])
    rest = [i for i, a in enumerate(legal) if a["kind"] not in ("take_loan", "sell")]
    return rng.choice(rest or list(range(len(legal))))


def hungry_game(game: str, seed: int) -> Iterator[tuple[Any, Action]]:
    """Yield (state, action) at every step of a game played by :func:`strike_hungry`, Kingdom
    Favors 19 and 5 dealt whenever they are in the pool."""
    st = load_game(game).new_initial_state()
    rng = random.Random(seed)
    while not st.is_terminal():
        if st.is_chance_node():
            deal = [a for a in st.legal_actions() if isinstance(a, A.DealFavor) and a.favor in (19, 5)]
            a = max(deal, key=lambda d: d.favor) if deal else st.sample_chance(rng)
        else:
            seat = st.current_player()
            legal = st.legal_actions()
            a = legal[strike_hungry(st.observation(seat), [b.to_json() for b in legal], seat, rng)]
        yield st, a
        st.apply_action(a)
