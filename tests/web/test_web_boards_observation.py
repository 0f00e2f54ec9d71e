"""Every board panel shows every card and every count of the observation it is drawn from.

The oracle is the observation (``State.observation(seat)`` of the public engine
API), walked generically, never the board code: each card id anywhere in it
(``games.spectator.card_ids``) must be on the board as a face-up card
(``data-card="<id>"``); each number under a count-like key (decks, discards
counted, supplies, pools, cards in hand, hidden Contracts) as an element marked
``data-count="<key>"`` whose text is that number; and each group of hidden cards
(a hand's cards beyond those the view names, face-down Contracts, face-down
garden cards) as a card back, ``class="card-back"`` with ``data-backs="<n>"``.
docs/web.md ("Board panels") states the convention.

Positions come from random legal play with fixed seeds (the start, three
middle positions and the end of each game), seen by the spectator and by each seat.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from games.api import State
from games.registry import load_game
from games.spectator import card_ids
from web.app import _environment
from web.boards import board_panel
from web.viewer import Frame

GAMES = ["floriferous(players=1)", "floriferous(players=2)", "floriferous(players=4)",
         "lafleur(players=1)", "lafleur(players=2)", "lafleur(players=4)",
         "flowar(players=1)", "flowar(players=2)", "flowar(players=3)"]
SEEDS = [3, 11]

COUNT_KEY = re.compile(r"^(cards_in_hand|deck|pile|hidden_\w+|unchosen_\w+|\w+_(deck|discard|supply|pool))$")
"""Keys whose integer values count cards or pieces left (a boolean is never a count)."""

SOLO_ONLY = ("crow", "taxus")
"""The solo opponent's components (Floriferous's Crow, Flowar's Taxus): on the table only in a solo game,
so a multiplayer observation's zeros under them are not shown."""

_COUNT_EL = re.compile(r'<[^>]*\bdata-count="([a-z_]+)"[^>]*>((?:\s|<[^>]*>)*)(-?\d+)')
_BACK_EL = re.compile(r'<[^>]*\bclass="[^"]*\bcard-back\b[^"]*"[^>]*>')
_BACKS = re.compile(r'\bdata-backs="(\d+)"')


def positions(spec: str, seed: int) -> list[State]:
    """Five states of one random game of ``spec``: the start, three in the middle and the end."""
    rng = random.Random(seed)
    state = load_game(spec).new_initial_state()
    states = [state.clone()]
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        states.append(state.clone())
    n = len(states) - 1
    return [states[i] for i in (0, n // 4, n // 2, 3 * n // 4, n)]


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key + "[]")
    else:
        yield key, value


def _on_table(obs: dict[str, Any]) -> dict[str, Any]:
    return obs if obs.get("solo") else {k: v for k, v in obs.items() if k not in SOLO_ONLY}


def expected_cards(game: str, obs: dict[str, Any]) -> set[str]:
    ids = card_ids(game)
    return {v for _, v in _walk(_on_table(obs)) if isinstance(v, str) and v in ids}


def expected_counts(obs: dict[str, Any]) -> Counter[tuple[str, int]]:
    return Counter((k, v) for k, v in _walk(_on_table(obs))
                   if isinstance(v, int) and not isinstance(v, bool) and COUNT_KEY.match(k))


def expected_backs(game: str, obs: dict[str, Any]) -> Counter[int]:
    """The size of each group of cards the observation counts but does not name."""
    groups: list[int] = []
    if game == "lafleur":
        groups = [p["cards_in_hand"] - len(p["hand"]) for p in obs["players"]]
    elif game == "flowar":
        groups = [p["hidden_contracts"] for p in obs["players"]]
    elif game == "floriferous":
        groups = [1 for row in obs["garden"] for c in row["cells"] if c["face_down"] and not c["card"]]
    return Counter(n for n in groups if n > 0)


def render(game: str, obs: dict[str, Any], seat: int | None, players: int) -> str:
    frame = Frame(step=0, steps=1, player=None, label="", action=None, time_ms=None, fallback=False,
                  terminal=False, observation=obs, seat=seat, seat_views=None, full_state=None)
    panel = board_panel(game, frame, [f"bot{i}" for i in range(players)], False)
    return _environment().get_template(panel.template).render(ctx=panel.context)


def board_counts(html: str) -> Counter[tuple[str, int]]:
    return Counter((k, int(n)) for k, _, n in _COUNT_EL.findall(html))


def board_backs(html: str) -> Counter[int]:
    found: list[int] = []
    for tag in _BACK_EL.findall(html):
        m = _BACKS.search(tag)
        assert m, f"a card back without data-backs: {tag}"
        found.append(int(m.group(1)))
    return Counter(n for n in found if n > 0)


def check(game: str, obs: dict[str, Any], html: str) -> list[str]:
    """What the observation has that the board does not show (empty: the board shows it all)."""
    problems = [f"card {c} not on the board" for c in sorted(expected_cards(game, obs))
                if f'data-card="{c}"' not in html]
    missing = expected_counts(obs) - board_counts(html)
    problems += [f"count {k}={v} not on the board (x{n})" for (k, v), n in sorted(missing.items())]
    want, got = expected_backs(game, obs), board_backs(html)
    if want != got:
        problems.append(f"card backs {dict(got)} on the board, the observation hides {dict(want)}")
    return problems


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("spec", GAMES)
def test_every_card_and_count_of_the_observation_is_on_the_board(spec: str, seed: int) -> None:
    game = spec.split("(")[0]
    states = positions(spec, seed)
    players = states[0].game.num_players
    problems: list[str] = []
    for i, state in enumerate(states):
        for seat in [None, *range(players)]:
            obs = state.observation(seat)
            problems += [f"position {i}, view {seat}: {p}" for p in check(game, obs, render(game, obs, seat, players))]
    assert not problems, "\n".join(problems[:40])


def test_the_check_sees_a_hand_the_board_leaves_out() -> None:
    """A board without its face-down hand fails the check (the oracle can fail)."""
    state = positions("lafleur(players=2)", 3)[2]
    obs = state.observation(None)
    html = render("lafleur", obs, None, 2)
    stripped = _BACK_EL.sub("<span>", html)
    assert expected_backs("lafleur", obs), "the position has hidden hands"
    assert any("card backs" in p for p in check("lafleur", obs, stripped))
