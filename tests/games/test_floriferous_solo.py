"""Floriferous solo mode, "The Pesky Guest": the crow, scattering, tea, resolving the crow, mood."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.api import CHANCE, IllegalActionError
from games.floriferous import actions as A
from games.floriferous.cards import CARD_INDEX
from games.floriferous.scoring import mood
from games.floriferous.script import deal_garden, legal_for_row, new_match, play_round, reveal_crow
from games.floriferous.state import FloriferousState
from games.registry import load_game


def cell(state: FloriferousState, row: int, column: int) -> dict:
    obs = state.observation(0)
    return next(r for r in obs["garden"] if r["row"] == row)["cells"][column - 1]


def solo(extended: bool = False) -> FloriferousState:
    state = new_match(f"floriferous(players=1,extended={'true' if extended else 'false'})",
                      bounties=("B1", "B2", "B3"))
    return state


def test_solo_setup() -> None:
    """Rulebook: "Solo Setup": 2-player layout, no Sculptures, Crow deck, the player holds the tea."""
    state = solo()
    assert [type(a).__name__ for _, a in state.history] == ["RevealBounty"] * 3  # no starting-player draw
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 55 and not any(a.card.startswith("S") for a, _ in outcomes)
    deal_garden(state)
    obs = state.observation(0)
    assert [r["row"] for r in obs["garden"]] == [1, 3, 5]
    assert obs["tea_holder"] == 0 and not obs["tea_tossed"]
    assert obs["crow"] == {"deck": 9, "discard": [], "last_card": "", "crow_card_stones": 0}
    assert obs["garden_deck"] == 45 and obs["players"][0]["pawn_row"] == 1
    assert state.current_player() == 0


def test_tea_decision_comes_before_the_crow_is_revealed() -> None:
    """Rulebook: "Tossing Tea": decided before the Crow Action card is flipped."""
    state = solo()
    deal_garden(state)
    play_round(state, {0: 1})
    assert state.observation(0)["phase"] == "tea"
    assert state.legal_actions() == [A.TossTea(False), A.TossTea(True)]
    state.apply_action(A.TossTea(False))
    assert state.current_player() == CHANCE
    assert sorted(a.crow for a, _ in state.chance_outcomes()) == [f"C{i}" for i in range(1, 10)]


def test_crow_discards_the_next_columns_card_and_places_stones() -> None:
    """Rulebook: "Playing the Solo Game": the named row's card in the NEXT column is
    discarded (its Stone to the supply) and the crow places Stones there."""
    state = solo()
    deal_garden(state, {(3, 2): "F28", (3, 3): "F30"})
    play_round(state, {0: 1})
    supply = state.observation(0)["stone_supply"]
    reveal_crow(state, "C5")  # middle row, 1 Stone
    assert cell(state, 3, 2) == {"column": 2, "card": "", "face_down": False, "stones": 1, "crow_stones": True,
                                 "pawn": -1}
    assert state.observation(0)["stone_supply"] == supply - 1
    assert state.observation(0)["crow"]["last_card"] == "C5"
    labels = [a.label() for a in state.legal_actions()]
    assert labels == ["take row 1: face-down card", "scatter 1 crow stone in row 3",
                      labels[2]] and labels[2].startswith("take row 5")
    # Round 2 -> the crow acts on column 3, whose middle card carries a Stone: it returns.
    play_round(state, {0: 5})
    supply = state.observation(0)["stone_supply"]
    reveal_crow(state, "C6")  # middle row, 2 Stones
    assert cell(state, 3, 3)["stones"] == 2 and cell(state, 3, 3)["crow_stones"]
    assert state.observation(0)["stone_supply"] == supply + 1 - 2


def test_scattering_stones() -> None:
    """Rulebook: "Scattering Stones": move onto the crow's Stones, return them, take no card."""
    state = solo()
    deal_garden(state)
    play_round(state, {0: 1})
    reveal_crow(state, "C6")  # 2 Stones in row 3, column 2
    supply = state.observation(0)["stone_supply"]
    cards = list(state.observation(0)["players"][0]["cards"])
    scatter = legal_for_row(state, 3)
    assert scatter == A.ScatterStones(3, 2)
    state.apply_action(scatter)
    obs = state.observation(0)
    assert obs["stone_supply"] == supply + 2
    assert obs["players"][0]["cards"] == cards and obs["players"][0]["stones"] == 0
    assert (obs["players"][0]["pawn_row"], obs["players"][0]["pawn_column"]) == (3, 2)
    assert cell(state, 3, 2)["stones"] == 0 and cell(state, 3, 2)["pawn"] == 0


def test_crow_places_a_face_down_card_from_the_matching_deck() -> None:
    """C1: discard the top row's card (here the face-down one) and place a face-down Garden card;
    C7 places a face-down Desire card."""
    state = solo()
    deal_garden(state, {(1, 2): "F12"})
    play_round(state, {0: 3})
    state.apply_action(A.TossTea(False))
    state.apply_action(A.RevealCrow("C1"))
    assert state.current_player() == CHANCE
    outcomes = [a.card for a, _ in state.chance_outcomes()]
    assert "F12" not in outcomes and all(not c.startswith("D") for c in outcomes)
    with pytest.raises(IllegalActionError):
        state.apply_action(A.DealCard("D01"))
    state.apply_action(A.DealCard("F50"))
    assert cell(state, 1, 2)["face_down"] and cell(state, 1, 2)["card"] == ""
    assert legal_for_row(state, 1) == A.TakeCard(1, "", 0)
    play_round(state, {0: 1})
    assert state.observation(0)["players"][0]["cards"][-1] == "F50"
    state.apply_action(A.TossTea(False))
    state.apply_action(A.RevealCrow("C7"))
    outcomes = [a.card for a, _ in state.chance_outcomes()]
    assert outcomes and all(c.startswith("D") for c in outcomes)


def columns_but(obs: dict[str, Any], row: int) -> list[Any]:
    """Every garden row of ``obs`` but ``row``."""
    return [r for r in obs["garden"] if r["row"] != row]


def test_crow_example_discards_the_middle_row_and_places_a_face_down_garden_card() -> None:
    """Rulebook, the Crow Action Card example: "This card tells the player to discard the Garden Card
    in the middle row, and to replace it with a new face-down Garden Card." (C4). Reached by play:
    the middle row's card of the next column (a face-up Orange Lily) goes (outcomes: the Garden deck, flowers and
    Arrangements), and a face-down Garden
    card (never a Desire card, never the discarded one) takes its space."""
    state = solo()
    deal_garden(state, {(3, 2): "F15"})
    assert cell(state, 3, 2)["card"] == "F15" and not cell(state, 3, 2)["face_down"]
    play_round(state, {0: 1})
    before = state.observation(0)
    state.apply_action(A.TossTea(False))
    state.apply_action(A.RevealCrow("C4"))
    assert state.current_player() == CHANCE
    outcomes = [a.card for a, _ in state.chance_outcomes()]
    assert outcomes and "F15" not in outcomes and not any(c.startswith("D") for c in outcomes)
    state.apply_action(A.DealCard(outcomes[0]))
    assert cell(state, 3, 2)["face_down"] and cell(state, 3, 2)["card"] == ""
    assert columns_but(after := state.observation(0), 3) == columns_but(before, 3)  # nothing else moved
    assert after["players"][0]["cards"] == before["players"][0]["cards"]


def test_tossing_tea_skips_one_crow_and_loses_the_tea() -> None:
    """Rulebook: "Tossing Tea": once per game; no Crow card this round; the tea does not score."""
    state = solo()
    deal_garden(state)
    play_round(state, {0: 1})
    state.apply_action(A.TossTea(True))
    obs = state.observation(0)
    assert state.current_player() == 0 and obs["phase"] == "turn" and obs["round"] == 2
    assert obs["tea_holder"] == -1 and obs["tea_tossed"]
    assert obs["crow"]["deck"] == 9  # no card revealed
    play_round(state, {0: 1})
    assert state.current_player() == CHANCE  # no tea decision any more
    rng = random.Random(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            assert not isinstance(state.legal_actions()[0], A.TossTea)
            state.apply_action(state.legal_actions()[0])
    assert state.outcome().details["breakdown"][0]["tea"] == 0
    assert state.outcome().details["tea_tossed"] is True


def test_no_crow_after_the_last_round_of_the_day() -> None:
    state = solo()
    deal_garden(state)
    # The player keeps out of the crow's way (no scattering) and takes no Stone.
    for row, crow in ((1, "C2"), (3, "C5"), (1, "C8"), (1, "C3")):
        play_round(state, {0: row})
        assert state.observation(0)["phase"] == "tea"
        reveal_crow(state, crow)
    play_round(state, {0: 5})
    # Day over, no tea decision and no crow: the crow Stones (columns 2-5) go to the Crow Card.
    obs = state.observation(0)
    assert obs["crow"]["deck"] == 5 and obs["crow"]["crow_card_stones"] == 1 + 1 + 1 + 2
    assert obs["phase"] == "discard"  # 5 >= 4 and the player has no Stone to pay with
    cards = sorted(obs["players"][0]["cards"], key=CARD_INDEX.__getitem__)  # Garden cards, then Desires
    assert state.legal_actions() == [A.DiscardCard(c) for c in cards]


def _day_with_crow_stones(pay: int) -> FloriferousState:
    """Day 1: the player takes Stones in columns 1 and 5 (2 Stones); the crow puts 7
    Stones in the garden (never scattered)."""
    state = solo()
    deal_garden(state, {(3, 1): "F01", (3, 5): "F05"})
    for row, crow in ((3, "C3"), (3, "C6"), (1, "C9"), (3, "C2")):
        play_round(state, {0: row})
        reveal_crow(state, crow)
    play_round(state, {0: 3})
    assert state.observation(0)["phase"] == "pay_crow"
    return state


def test_resolving_the_crow_pay_then_discard() -> None:
    """Rulebook: "Resolving the Crow": crow Stones onto the Crow Card; pay own Stones to
    remove as many; 4 or more left -> discard a card of your choice and clear the card."""
    state = _day_with_crow_stones(pay=2)
    obs = state.observation(0)
    assert obs["crow"]["crow_card_stones"] == 7 and obs["players"][0]["stones"] == 2
    assert state.legal_actions() == [A.PayCrow(0), A.PayCrow(1), A.PayCrow(2)]
    state.apply_action(A.PayCrow(2))
    obs = state.observation(0)
    assert obs["crow"]["crow_card_stones"] == 5 and obs["players"][0]["stones"] == 0
    assert obs["phase"] == "discard"
    cards = obs["players"][0]["cards"]
    assert len(cards) == 5
    state.apply_action(A.DiscardCard(cards[2]))
    obs = state.observation(0)
    assert obs["players"][0]["cards"] == cards[:2] + cards[3:]
    assert obs["crow"]["crow_card_stones"] == 0 and obs["stone_supply"] == 24
    assert obs["day"] == 2 and state.current_player() == CHANCE


def test_three_or_fewer_crow_stones_stay_on_the_crow_card() -> None:
    state = solo()
    deal_garden(state, {(3, 1): "F01"})
    play_round(state, {0: 3})
    reveal_crow(state, "C3")  # 2 Stones, top row column 2
    for crow in ("C4", "C1", "C7", None):  # face-down cards, no Stones
        play_round(state, {0: 3})
        if crow:
            reveal_crow(state, crow)
    obs = state.observation(0)
    assert obs["phase"] == "pay_crow" and obs["crow"]["crow_card_stones"] == 2
    state.apply_action(A.PayCrow(0))  # nothing happens with 3 or fewer
    obs = state.observation(0)
    assert obs["day"] == 2 and obs["crow"]["crow_card_stones"] == 2
    assert len(obs["players"][0]["cards"]) == 5  # nothing discarded


def test_crow_deck_is_reshuffled_when_exhausted() -> None:
    """Rulebook: "If the Crow Actions Deck is exhausted, shuffle the discard pile"."""
    state = solo()
    deal_garden(state)
    order = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"]
    revealed = 0
    rng = random.Random(5)
    while revealed < 10:
        if state.observation(0)["phase"] == "crow":
            outcomes = state.chance_outcomes()
            if revealed == 9:
                assert state.observation(0)["crow"]["deck"] == 0
                assert len(outcomes) == 9
            state.apply_action(A.RevealCrow(order[revealed % 9]))
            revealed += 1
        elif state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        elif state.observation(0)["phase"] == "tea":
            state.apply_action(A.TossTea(False))
        else:
            state.apply_action(state.legal_actions()[0])
    crow = state.observation(0)["crow"]
    assert crow["deck"] == 8 and crow["discard"] == ["C1"]


def test_desire_deck_running_dry_in_extended_solo_leaves_empty_spaces() -> None:
    """Solo extended uses all 21 Desire cards in its three setups; a crow C7 takes one
    more, so the last Desire space of day 3 stays empty (docs/rules/floriferous.md)."""
    state = solo(extended=True)
    deal_garden(state)
    play_round(state, {0: 1})
    reveal_crow(state, "C7", card="D21")
    preferred = ["C2", "C5", "C3", "C6", "C1", "C4", "C8", "C9"]
    rng = random.Random(2)
    while state.observation(0)["day"] < 3 or state.observation(0)["phase"] == "deal":
        phase = state.observation(0)["phase"]
        if phase == "crow":
            legal = {a.crow for a in state.legal_actions()}
            state.apply_action(A.RevealCrow(next(c for c in preferred if c in legal)))
        elif state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        elif phase == "tea":
            state.apply_action(A.TossTea(False))
        else:
            state.apply_action(state.legal_actions()[0])
    obs = state.observation(0)
    desire_row = obs["garden"][2]["cells"]
    assert obs["desire_deck"] == 0
    assert [c["card"] != "" for c in desire_row] == [True] * 6 + [False]
    # The game still ends normally.
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(state.legal_actions()[0])
    assert state.outcome().ranks == (1,)


@pytest.mark.parametrize("extended", [False, True])
def test_solo_outcome_reports_the_mood(extended: bool) -> None:
    """Rulebook: "Scoring (Solo)": arrangement, desire, bounty, stones, tea (if kept); the chart."""
    game = load_game(f"floriferous(players=1,extended={str(extended).lower()})")
    for seed in range(6):
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        out = state.outcome()
        assert out.ranks == (1,)
        assert out.details["mood"] == mood(int(out.scores[0]), extended)
        assert out.details["mood_chart"] == ("extended" if extended else "standard")
        assert out.details["breakdown"][0]["sculpture"] == 0
        assert out.details["breakdown"][0]["tea"] == (0 if out.details["tea_tossed"] else 2)


def test_stones_are_conserved() -> None:
    """Supply + players + Crow Card + garden = the 24 Stones of the box, always."""
    for text in ("floriferous(players=1)", "floriferous(players=1,extended=true)", "floriferous(players=4)"):
        game = load_game(text)
        for seed in range(5):
            rng = random.Random(seed)
            state = game.new_initial_state()
            while not state.is_terminal():
                obs = state.observation(None)
                garden = sum(c["stones"] for r in obs["garden"] for c in r["cells"])
                total = obs["stone_supply"] + sum(p["stones"] for p in obs["players"])
                assert total + garden + obs["crow"]["crow_card_stones"] == 24
                if state.is_chance_node():
                    state.apply_action(state.sample_chance(rng))
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
