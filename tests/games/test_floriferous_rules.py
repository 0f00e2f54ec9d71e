"""Floriferous multiplayer rules: registry, setup, turns, days, bounties, scoring, errors.

Rulebook sections are named in each test's docstring.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from games.api import (
    CHANCE,
    TERMINAL,
    GameOverError,
    IllegalActionError,
    InvalidActionError,
    InvalidOptionError,
    State,
)
from games.floriferous import actions as A
from games.floriferous.cards import CARDS, CardType
from games.floriferous.game import FloriferousGame
from games.floriferous.script import deal_garden, legal_for_row, new_match, play_round
from games.registry import game_names, load_game


def playout(game_string: str, seed: int) -> State:
    game = load_game(game_string)
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def cell(obs: dict, row: int, column: int) -> dict:
    r = next(r for r in obs["garden"] if r["row"] == row)
    return r["cells"][column - 1]


# -- registry and options -----------------------------------------------------------------
def test_registry_and_game_string() -> None:
    assert "floriferous" in game_names()
    game = load_game("floriferous(players=4)")
    assert isinstance(game, FloriferousGame)
    assert game.num_players == 4
    assert game.game_string() == "floriferous(competitive_bounties=false,extended=false,players=4)"
    assert load_game("floriferous").num_players == 4  # default: the rulebook's main setup
    assert load_game("floriferous(players=1,extended=true)").layout.columns == 7
    assert load_game("floriferous(players=2,competitive_bounties=yes)").options["competitive_bounties"] is True


@pytest.mark.parametrize(
    "text",
    [
        "floriferous(colour=blue)",
        "floriferous(players=5)",
        "floriferous(players=0)",
        "floriferous(players=two)",
        "floriferous(players=3,extended=true)",
        "floriferous(players=4,extended=true)",
        "floriferous(players=1,competitive_bounties=true)",
        "floriferous(extended=maybe)",
    ],
)
def test_bad_options(text: str) -> None:
    with pytest.raises(InvalidOptionError):
        load_game(text)


# -- setup ----------------------------------------------------------------------------------
SETUPS = [
    # game string, rows, columns, face-down (row, col), stones (row, col), garden deck, desire deck
    ("floriferous(players=4)", [1, 2, 3, 4, 5], 5, {(1, 2), (1, 4)},
     {(3, 1), (3, 3), (3, 5)} | {(4, c) for c in range(1, 6)}, 40, 16),
    ("floriferous(players=3)", [1, 3, 4, 5], 5, {(1, 2), (1, 4)},
     {(3, 1), (3, 3), (3, 5)} | {(4, c) for c in range(1, 6)}, 45, 16),
    ("floriferous(players=2)", [1, 3, 5], 5, {(1, 2), (1, 4)}, {(3, 1), (3, 3), (3, 5)}, 50, 16),
    ("floriferous(players=2,extended=true)", [1, 3, 5], 7, {(1, 2), (1, 4), (1, 6)},
     {(3, 1), (3, 3), (3, 5), (3, 7)}, 46, 14),
    ("floriferous(players=1)", [1, 3, 5], 5, {(1, 2), (1, 4)}, {(3, 1), (3, 3), (3, 5)}, 45, 16),
    ("floriferous(players=1,extended=true)", [1, 3, 5], 7, {(1, 2), (1, 4), (1, 6)},
     {(3, 1), (3, 3), (3, 5), (3, 7)}, 41, 14),
]


@pytest.mark.parametrize("text, rows, columns, face_down, stones, garden_deck, desire_deck", SETUPS)
def test_setup_layout(text: str, rows: list[int], columns: int, face_down: set, stones: set,
                      garden_deck: int, desire_deck: int) -> None:
    """Rulebook: "Game Setup" steps 1-3 and "Game Setup Reference" (2/3 players, extended)."""
    state = new_match(text, start_seat=0)
    deal_garden(state)
    obs = state.observation(None)
    assert [r["row"] for r in obs["garden"]] == rows
    assert [r["kind"] for r in obs["garden"]] == ["garden"] * (len(rows) - 1) + ["desire"]
    assert obs["num_rounds"] == columns
    seen_fd, seen_st = set(), set()
    for r in obs["garden"]:
        assert len(r["cells"]) == columns
        for c in r["cells"]:
            where = (r["row"], c["column"])
            if c["face_down"]:
                seen_fd.add(where)
                assert c["card"] == ""
            else:
                assert c["card"] != ""
            if c["stones"]:
                seen_st.add(where)
                assert c["stones"] == 1
            kind = CARDS[[x.id for x in CARDS].index(c["card"])].type if c["card"] else None
            if r["row"] == 5:
                assert kind is CardType.DESIRE
            elif kind is not None:
                assert kind is not CardType.DESIRE
    assert seen_fd == face_down
    assert seen_st == stones
    assert obs["garden_deck"] == garden_deck
    assert obs["desire_deck"] == desire_deck
    assert obs["stone_supply"] == 24 - len(stones)
    assert obs["phase"] == "turn" and obs["day"] == 1 and obs["round"] == 1
    assert obs["direction"] == "left_to_right"


@pytest.mark.parametrize(
    "players, start, expected_rows",
    [
        (4, 0, [1, 2, 3, 4]),
        (4, 2, [3, 4, 1, 2]),
        (3, 1, [4, 1, 3]),  # pawns on the Garden rows 1, 3, 4 (row 2 is not dealt)
        (2, 1, [3, 1]),
        (2, 0, [1, 3]),
    ],
)
def test_pawns_start_on_garden_rows_clockwise_from_the_starting_player(
    players: int, start: int, expected_rows: list[int]
) -> None:
    """Rulebook: "Game Setup" steps 7-8: starting player on the top Garden row, then
    clockwise on the next Garden rows; the Desire row never has a pawn."""
    state = new_match(f"floriferous(players={players})", start_seat=start)
    obs = state.observation(None)
    assert [p["pawn_row"] for p in obs["players"]] == expected_rows
    assert all(p["pawn_column"] == 0 for p in obs["players"])
    deal_garden(state)
    assert state.current_player() == start
    assert state.observation(None)["turn_order"] == sorted(range(players), key=lambda s: expected_rows[s])


@pytest.mark.parametrize(
    "text, deals",
    [
        ("floriferous(players=4)", 3 * (20 + 5)),  # all 60 Garden cards are used
        ("floriferous(players=3)", 3 * (15 + 5)),
        ("floriferous(players=2)", 3 * (10 + 5)),
        ("floriferous(players=2,extended=true)", 3 * (14 + 7)),
    ],
)
def test_total_cards_dealt(text: str, deals: int) -> None:
    for seed in range(3):
        state = playout(text, seed)
        kinds = Counter(type(a).__name__ for p, a in state.history if p == CHANCE)
        assert kinds["DealCard"] == deals
        assert kinds["RevealBounty"] == 3
        assert kinds["ChooseStartPlayer"] == 1
        assert sum(1 for p, _ in state.history if p >= 0) == 15 * load_game(text).num_players * (
            7 if "extended" in text else 5) // 5


def test_chance_is_explicit_and_uniform() -> None:
    """Bounty selection, starting player and every deal are chance actions
    (docs/architecture.md, "games: the rules engines")."""
    state = load_game("floriferous(players=3)").new_initial_state()
    outcomes = state.chance_outcomes()
    assert [a.label() for a, _ in outcomes][:1] == ["reveal Bounty B1 (Tulip, Ladybug, Butterfly)"]
    assert len(outcomes) == 9 and sum(p for _, p in outcomes) == 1
    for b in ("B4", "B9", "B1"):
        state.apply_action(A.RevealBounty(b))
    assert [a for a, _ in state.chance_outcomes()] == [A.ChooseStartPlayer(s) for s in range(3)]
    state.apply_action(A.ChooseStartPlayer(2))
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 60 and len({p for _, p in outcomes}) == 1
    assert all(isinstance(a, A.DealCard) for a, _ in outcomes)


def test_fast_chance_sampling_matches_the_default() -> None:
    """The ``_sample_chance`` fast path draws exactly what the generic enumeration draws."""
    for text in FloriferousGame.VARIANTS:
        game = load_game(text)
        rng = random.Random(11)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                seed = rng.random()
                fast = state.sample_chance(random.Random(seed))
                slow = State._sample_chance(state, random.Random(seed))
                assert fast == slow
                state.apply_action(fast)
            else:
                state.apply_action(rng.choice(state.legal_actions()))


# -- turns ------------------------------------------------------------------------------------
def test_a_turn_takes_a_card_and_its_stone_and_moves_the_pawn() -> None:
    """Rulebook: "Taking Turns": any card in the next column; Stone taken with it; pawn moves there.
    The rulebook's example: "The Yellow player takes the Yellow Lily. It has a Stone on it, so they
    take that as well and put both face-up in front of them. They then move their pawn to the newly
    empty space in the garden." (the Yellow Lily, F13, dealt where the 2-player setup puts a Stone)."""
    state = new_match("floriferous(players=2)", start_seat=0)
    deal_garden(state, {(3, 1): "F13", (1, 1): "F01", (5, 1): "D16"})
    legal = state.legal_actions()
    assert [a.label() for a in legal] == [
        "take row 1: White Daisy", "take row 3: Yellow Lily +1 stone", "take row 5: Desire D16 (Same Flower)",
    ]
    state.apply_action(legal[1])
    obs = state.observation(1)
    assert obs["seat"] == 1
    assert obs["players"][0]["cards"] == ["F13"] and obs["players"][0]["stones"] == 1
    assert (obs["players"][0]["pawn_row"], obs["players"][0]["pawn_column"]) == (3, 1)
    assert cell(obs, 3, 1) == {"column": 1, "card": "", "face_down": False, "stones": 0,
                               "crow_stones": False, "pawn": 0}
    assert obs["stone_supply"] == 24 - 3
    # seat 1 picks among the two cards left in column 1
    assert [a.row for a in state.legal_actions()] == [1, 5]


def test_turn_order_is_top_to_bottom_each_round() -> None:
    """Rulebook: "Playing the Game": each round starts with the pawn at the top."""
    state = new_match("floriferous(players=3)", start_seat=0)  # rows: s0 1, s1 3, s2 4
    deal_garden(state)
    assert state.observation(None)["turn_order"] == [0, 1, 2]
    play_round(state, {0: 5, 1: 1, 2: 3})  # seat 1 -> row 1, seat 2 -> row 3, seat 0 -> row 5
    assert state.observation(None)["turn_order"] == [1, 2, 0]
    assert state.current_player() == 1


def test_days_alternate_direction_and_pawns_keep_their_rows() -> None:
    """Rulebook: "Begin a New Day": day 2 right to left, day 3 left to right; each pawn
    keeps its ending position; the top pawn starts the next day. Leftovers are discarded."""
    state = new_match("floriferous(players=2)", start_seat=0)
    deal_garden(state)
    for _ in range(4):
        play_round(state, {0: 1, 1: 3})
    supply_before = state.observation(None)["stone_supply"]
    play_round(state, {0: 5, 1: 1})  # end of day 1: seat 1 on top (row 1), seat 0 on row 5
    obs = state.observation(None)
    assert state.is_chance_node() and obs["day"] == 2 and obs["direction"] == "right_to_left"
    assert all(c["card"] == "" for r in obs["garden"] for c in r["cells"])  # garden cleared
    # Seat 1 took the Stones of row 3, columns 1 and 3; nobody took column 5's: it returns.
    assert obs["stone_supply"] == supply_before + 1
    assert [p["stones"] for p in obs["players"]] == [0, 2]
    assert [(p["pawn_row"], p["pawn_column"]) for p in obs["players"]] == [(5, 0), (1, 0)]
    deal_garden(state)
    assert state.current_player() == 1
    for _ in range(5):
        play_round(state, {0: 3, 1: 1})
    deal_garden(state)
    obs = state.observation(None)
    assert obs["day"] == 3 and obs["direction"] == "left_to_right" and state.current_player() == 1


def test_face_down_cards_are_hidden_until_taken() -> None:
    """Rulebook: "Face-Down Cards": picked like any other; nobody knows them until chosen."""
    state = new_match("floriferous(players=2)", start_seat=0)
    deal_garden(state, {(1, 2): "F28"})
    play_round(state, {0: 1, 1: 3})
    for seat in (None, 0, 1):
        obs = state.observation(seat)
        assert cell(obs, 1, 2)["face_down"] and cell(obs, 1, 2)["card"] == ""
        assert "F28" not in json.dumps(obs)
    take = legal_for_row(state, 1)
    assert take.to_json() == {"kind": "take", "row": 1, "card": "", "stones": 0}
    assert "F28" not in json.dumps([a.to_json() for a in state.legal_actions()])
    state.apply_action(take)
    assert "F28" in state.observation(1)["players"][0]["cards"]


def test_observations_ignore_which_card_lies_face_down() -> None:
    """docs/faults.md F-20: two states that differ only in a face-down card look the same."""
    twins = []
    for hidden in ("F11", "F13"):
        state = new_match("floriferous(players=2)", start_seat=0)
        deal_garden(state, {(1, 2): hidden, (1, 4): "A1"}, reserve={"F11", "F13"})
        twins.append(state)
    a, b = twins
    assert a.state_hash() != b.state_hash()
    for seat in (None, 0, 1):
        assert a.observation(seat) == b.observation(seat)
    assert [x.to_json() for x in a.legal_actions()] == [x.to_json() for x in b.legal_actions()]
    # The engine's own resampling hook gives the same guarantee.
    twin = a.resample_hidden(random.Random(1))
    assert twin.state_hash() != a.state_hash()
    assert twin.observation(0) == a.observation(0)


# -- bounties --------------------------------------------------------------------------------
LILIES = ["F11", "F13", "F15", "F17"]
MUMS = ["F21", "F23", "F25", "F27"]
TULIPS = ["F41", "F43", "F45", "F47"]


def _bounty_columns(state: State, bounty: str) -> list[list[int]]:
    b = next(b for b in state.observation(None)["bounties"] if b["bounty"] == bounty)
    return [c["seats"] for c in b["columns"]]


def _four_complete_b4(competitive: bool) -> State:
    state = new_match(f"floriferous(players=4,competitive_bounties={str(competitive).lower()})",
                      bounties=("B4", "B6", "B1"), start_seat=0)
    grid = {}
    for seat in range(4):
        grid[(seat + 1, 1)] = LILIES[seat]
        grid[(seat + 1, 2)] = MUMS[seat]
    deal_garden(state, grid | {(r, 3): TULIPS[r - 1] for r in range(1, 5)})
    play_round(state, {s: s + 1 for s in range(4)})
    play_round(state, {s: s + 1 for s in range(4)})
    return state


def test_standard_bounties_are_checked_at_day_end_and_share_a_column() -> None:
    """Rulebook: "Completing Bounty Cards": checked when the day ends; several players
    completing the same day all go in that day's column."""
    state = _four_complete_b4(competitive=False)
    play_round(state, {s: s + 1 for s in range(4)})
    assert _bounty_columns(state, "B4") == [[], [], []]  # not yet: the day has not ended
    play_round(state, {s: s + 1 for s in range(4)})
    play_round(state, {s: s + 1 for s in range(4)})
    assert _bounty_columns(state, "B4") == [[0, 1, 2, 3], [], []]
    assert [p["bounty_points"] for p in state.observation(None)["players"]] == [5, 5, 5, 5]
    assert [p["flower_tokens"] for p in state.observation(None)["players"]] == [2, 2, 2, 2]


def test_competitive_bounties_take_the_next_free_column_at_once() -> None:
    """Rulebook: "Competitive Alternative": a token goes on the moment the requirements
    are met, one token per column; later completers take the next day's column; with no
    column left the Bounty no longer scores."""
    state = _four_complete_b4(competitive=True)
    expected = [[[0], [], []], [[0], [1], []], [[0], [1], [2]], [[0], [1], [2]]]
    for seat in range(4):
        assert state.current_player() == seat
        state.apply_action(legal_for_row(state, seat + 1))
        assert _bounty_columns(state, "B4") == expected[seat]
    players = state.observation(None)["players"]
    assert [p["bounty_points"] for p in players] == [5, 3, 2, 0]
    assert [p["flower_tokens"] for p in players] == [2, 2, 2, 3]


def _two_player_bounty_game(competitive: bool) -> State:
    """Seat 0 completes B4 on day 1, seat 1 on day 3."""
    state = new_match(f"floriferous(players=2,competitive_bounties={str(competitive).lower()})",
                      bounties=("B4", "B6", "B1"), start_seat=0)
    safe = {c.id for c in CARDS if c.type is CardType.FLOWER and (
        c.flower in ("Lily", "Mum", "Tulip") or c.bug in ("Ladybug", "Butterfly"))}
    deal_garden(state, {(1, 1): "F11", (3, 1): "F13", (1, 2): "F21", (3, 2): "F23", (1, 3): "F41"},
                reserve=safe | {"F43"})
    play_round(state, {0: 1, 1: 3})
    play_round(state, {0: 1, 1: 3})
    play_round(state, {0: 1, 1: 5})
    for _ in range(2):
        play_round(state, {0: 1, 1: 5})
    deal_garden(state, reserve=safe)  # day 2: nothing for B4
    for _ in range(5):
        play_round(state, {0: 1, 1: 3})
    deal_garden(state, {(1, 1): "F43"}, reserve=safe)  # day 3: seat 1 takes its Tulip
    play_round(state, {0: 3, 1: 1})
    assert _bounty_columns(state, "B4") == ([[0], [], [1]] if competitive else [[0], [], []])
    for _ in range(4):
        play_round(state, {0: 3, 1: 1})
    return state


@pytest.mark.parametrize("competitive", [False, True])
def test_bounty_columns_follow_the_day(competitive: bool) -> None:
    """Day 1 completion = first column (5), day 3 = third (2), even when column 2 is
    free (competitive: the first free column from today's on)."""
    state = _two_player_bounty_game(competitive)
    assert state.is_terminal()
    assert _bounty_columns(state, "B4") == [[0], [], [1]]
    out = state.outcome()
    assert [b["bounty"] for b in out.details["breakdown"]] == [5, 2]


# -- final scoring -----------------------------------------------------------------------------
def _scoring_example() -> State:
    """Rulebook: "Scoring Example", played out: Blue is seat 0 of a 2-player match."""
    state = new_match("floriferous(players=2)", bounties=("B6", "B5", "B7"), start_seat=0)
    blue = {
        1: {(3, 1): "F06", (3, 2): "F28", (3, 3): "F02", (3, 4): "A3", (5, 5): "D01"},
        2: {(5, 1): "D20", (5, 2): "D17", (5, 3): "D13", (3, 4): "S1", (3, 5): "F42"},
        3: {(3, 1): "F04", (5, 2): "D08", (3, 3): "F35", (3, 4): "F21", (1, 5): "F43"},
    }
    green = {2: {(1, 2): "S2", (1, 4): "S3"}}
    reserve = {c for d in blue.values() for c in d.values()} | {"S2", "S3", "S4", "S5"}
    picks_blue = {1: [3, 3, 3, 3, 5], 2: [5, 5, 5, 3, 3], 3: [3, 5, 3, 3, 1]}
    picks_green = {1: [1, 1, 1, 1, 3], 2: [3, 1, 3, 1, 1], 3: [1, 3, 1, 1, 3]}
    for day in (1, 2, 3):
        deal_garden(state, blue[day] | green.get(day, {}), reserve)
        for r in range(5):
            play_round(state, {0: picks_blue[day][r], 1: picks_green[day][r]})
    return state


def test_rulebook_scoring_example() -> None:
    """Rulebook: "Scoring Example": Blue 5 + 20 + 7 + 2 + 2 + 3 = 39."""
    state = _scoring_example()
    assert state.is_terminal()
    out = state.outcome()
    blue = out.details["breakdown"][0]
    assert blue == {"seat": 0, "arrangement": 5, "sculpture": 3, "desire": 20, "stones": 2, "bounty": 7,
                    "tea": 2, "total": 39}
    assert out.scores[0] == 39
    assert len(state.observation(None)["players"][0]["cards"]) == 15
    assert all(0 not in seats for seats in _bounty_columns(state, "B6"))
    assert [0 in seats for seats in _bounty_columns(state, "B5")] == [True, False, False]
    assert [0 in seats for seats in _bounty_columns(state, "B7")] == [False, False, True]
    assert out.details["tea_holder"] == 0
    assert out.reason == "third day complete"
    assert out.ranks == (1, 2)


def _tie_game(seat0_last_row: int, seat1_last_row: int) -> State:
    """Both seats finish on 7 points (seat 0: tea + Sculptures; seat 1: a Poppy Desire + Sculptures)."""
    state = new_match("floriferous(players=2)", bounties=("B1", "B2", "B3"), start_seat=0)
    days = [
        [((3, "F01"), (1, "F41")), ((1, "F03"), (3, "F43")), ((1, "F05"), (5, "D14")),
         ((3, "F07"), (1, "F45")), ((5, "D11"), (1, "F47"))],
        [((1, "F09"), (5, "D15")), ((3, "F11"), (1, "F49")), ((5, "D12"), (1, "F21")),
         ((1, "F13"), (3, "F23")), ((1, "F15"), (5, "D04"))],
        [((5, "D13"), (1, "F31")), ((3, "S1"), (1, "S3")), ((1, "F17"), (5, "D01")),
         ((1, "S2"), (3, "S4")), ((seat0_last_row, "F19"), (seat1_last_row, "D02"))],
    ]
    used = {card for day in days for pair in day for _, card in pair}
    for day in days:
        grid = {}
        for col, ((r0, c0), (r1, c1)) in enumerate(day, 1):
            grid[(r0, col)] = c0
            grid[(r1, col)] = c1
        deal_garden(state, grid, reserve=used)
        for (r0, _), (r1, _) in day:
            play_round(state, {0: r0, 1: r1})
    return state


def test_winner_tie_break_is_the_pawn_closest_to_the_top() -> None:
    """Rulebook: "Final Scoring": a tie goes to the player closest to the top at the end of day 3."""
    state = _tie_game(1, 5)
    out = state.outcome()
    assert out.scores == (7, 7)
    assert out.details["breakdown"][0]["tea"] == 2 and out.details["breakdown"][1]["desire"] == 2
    assert out.details["pawn_rows"] == [1, 5]
    assert out.ranks == (1, 2)
    assert out.tie_breaks == ("pawn closest to the top at the end of day 3",)


def test_tea_tie_goes_to_the_bottom_pawn() -> None:
    """Rulebook: "Award the Cup of Tea": tie on Stones -> the pawn in the bottom spot."""
    for seat0_row, expected in ((1, 1), (5, 0)):
        state = new_match("floriferous(players=2)", start_seat=0)
        for day in range(3):
            deal_garden(state)
            for col in range(1, 6):
                # Nobody takes a Stone: rows 1 and 5 in the Stone columns 1, 3, 5.
                if col == 5 and day == 2:
                    play_round(state, {0: seat0_row, 1: 6 - seat0_row})
                else:
                    order = state.observation(None)["turn_order"]
                    play_round(state, {order[0]: 1, order[1]: 5})
        out = state.outcome()
        assert [p["stones"] for p in state.observation(None)["players"]] == [0, 0]
        assert out.details["tea_holder"] == expected
        assert out.details["breakdown"][expected]["tea"] == 2


def test_outcome_ranks_follow_scores_then_pawns() -> None:
    for text in ("floriferous(players=3)", "floriferous(players=4)"):
        for seed in range(10):
            state = playout(text, seed)
            out = state.outcome()
            rows = out.details["pawn_rows"]
            order = sorted(range(len(out.scores)), key=lambda s: (-out.scores[s], rows[s]))
            assert [out.ranks[s] for s in order] == list(range(1, len(order) + 1))
            assert sum(b["total"] for b in out.details["breakdown"]) == sum(out.scores)
            assert json.loads(json.dumps(out.to_json())) == out.to_json()


# -- errors ------------------------------------------------------------------------------------
def test_illegal_action_leaves_the_state_unchanged() -> None:
    state = new_match("floriferous(players=2)", start_seat=0)
    deal_garden(state, {(1, 1): "F01"})
    before = state.state_hash()
    history = len(state.history)
    for bad in (A.TakeCard(2, "F01", 0), A.TakeCard(1, "F02", 0), A.TakeCard(1, "F01", 1),
                A.DealCard("F05"), A.TossTea(True), A.PayCrow(0), A.ScatterStones(1, 1)):
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)
        assert state.state_hash() == before and len(state.history) == history
    with pytest.raises(IllegalActionError):
        state.apply_index(99)
    # chance: a card that is not in the deck, a card from the wrong deck
    state2 = new_match("floriferous(players=2)", start_seat=0)
    state2.apply_action(A.DealCard("F01"))
    h = state2.state_hash()
    for bad in (A.DealCard("F01"), A.DealCard("D01"), A.DealCard("nope"), A.RevealBounty("B1"),
                A.ChooseStartPlayer(0), A.TakeCard(1, "F01", 0)):
        with pytest.raises(IllegalActionError):
            state2.apply_action(bad)
        assert state2.state_hash() == h


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[1, 2]",
        '{"kind": "fly"}',
        '{"kind": "take", "row": 1}',
        '{"kind": "take", "row": 1, "card": "", "stones": 0, "extra": 1}',
        '{"kind": "take", "row": "1", "card": "", "stones": 0}',
        '{"kind": "take", "row": 9, "card": "", "stones": 0}',
        '{"kind": "take", "row": true, "card": "", "stones": 0}',
        '{"kind": "toss_tea", "toss": 1}',
        '{"kind": "deal", "card": 7}',
    ],
)
def test_malformed_action_json(text: str) -> None:
    with pytest.raises(InvalidActionError):
        load_game("floriferous(players=2)").action_from_json(text)


def test_action_json_round_trip() -> None:
    game = load_game("floriferous(players=1)")
    for action in (A.TakeCard(3, "F28", 1), A.TakeCard(1, "", 0), A.ScatterStones(3, 2), A.MoveToEmpty(5),
                   A.TossTea(True), A.PayCrow(3), A.DiscardCard("A1"), A.DealCard("D16"),
                   A.RevealBounty("B2"), A.RevealCrow("C9"), A.ChooseStartPlayer(1)):
        assert game.action_from_json(action.to_json()) == action
        assert game.action_from_json(action.canonical()) == action


def test_foreign_action_and_game_over() -> None:
    state = playout("floriferous(players=2)", 3)
    assert state.current_player() == TERMINAL and state.legal_actions() == []
    with pytest.raises(GameOverError):
        state.apply_action(A.TakeCard(1, "", 0))
    live = load_game("floriferous(players=2)").new_initial_state()
    with pytest.raises(InvalidActionError):
        live.apply_action("take row 1")  # type: ignore[arg-type]  # deliberately not an Action


def test_observation_of_a_non_seat_is_an_error() -> None:
    state = load_game("floriferous(players=2)").new_initial_state()
    with pytest.raises(ValueError):
        state.observation(2)


def test_clone_is_independent() -> None:
    state = new_match("floriferous(players=3)", start_seat=0)
    deal_garden(state)
    copy = state.clone()
    assert copy.state_hash() == state.state_hash()
    copy.apply_action(copy.legal_actions()[0])
    assert copy.state_hash() != state.state_hash()
    assert len(copy.history) == len(state.history) + 1
