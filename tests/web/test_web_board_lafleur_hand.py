"""The La Fleur board panel shows how many face-down Flower cards each hand holds.

Rulebook: La Fleur, "Player Setup", 3 FLOWER CARDS: "Deal 3 random Flower cards
to each player from the Flower deck. Each player places their cards in their
hand. Do not show these cards to the other players." The board is drawn from a
real observation of a new 2-player match (the panel reads the observation
contract, ``LaFleurObservation``, as the spectator, seat and live pages do), so
a renamed field breaks this test rather than printing "Hand: empty".
"""

from __future__ import annotations

import re

from games.lafleur.script import new_match
from web.app import _environment
from web.boards import board_panel
from web.viewer import Frame

DEALT = 3
"""Flower cards in each hand after setup (Rulebook: "Player Setup")."""


def _frame(observation: dict[str, object], seat: int | None) -> Frame:
    return Frame(step=0, steps=1, player=None, label="", action=None, time_ms=None, fallback=False,
                 terminal=False, observation=observation, seat=seat, seat_views=None, full_state=None)


def _hands(observation: dict[str, object], seat: int | None) -> list[str]:
    """The text of each Château's Hand line on the rendered board."""
    panel = board_panel("lafleur", _frame(observation, seat), ["alpha", "beta"], False)
    html = _environment().get_template(panel.template).render(ctx=panel.context)
    hand_lines = r'<p><span class="lbl">Hand \(<span data-count="cards_in_hand">\d+</span>\)</span>(.*?)</p>'
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", line)).strip() for line in re.findall(hand_lines, html, re.S)]


def test_the_spectator_board_counts_the_face_down_hands() -> None:
    s = new_match("lafleur(players=2)")
    obs = s.observation(None)
    assert [p["cards_in_hand"] for p in obs["players"]] == [DEALT, DEALT]  # the contract's count
    hands = _hands(obs, None)
    assert hands == [f"{DEALT} face-down Flower cards"] * 2, hands


def test_a_seat_board_shows_its_own_cards_and_counts_the_others() -> None:
    s = new_match("lafleur(players=2)")
    obs = s.observation(0)
    own = obs["players"][0]["hand"]
    assert len(own) == DEALT
    mine, other = _hands(obs, 0)
    assert "face-down" not in mine and "empty" not in mine
    assert other == f"{DEALT} face-down Flower cards", other
