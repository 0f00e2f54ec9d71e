"""Every worked example of the Flowar rulebook, with its numbers.

Every example reaches its position by play only: chance outcomes are chosen
through the public API (``legal_actions`` of the chance node), the seats'
decisions are played, and nothing is written into the state; the assertions read
the public observation.
"""

from __future__ import annotations

import random
from typing import Any

from games.api import Action
from games.flowar import actions as A
from games.flowar.cards import FLOWER_BASKETS, FLOWER_INDEX
from games.flowar.script import act, find, settle
from games.flowar.state import FlowarState
from games.flowar.taxus import contract_transport
from games.registry import load_game


def place_costs(st: FlowarState, space: str) -> set[int]:
    return {a.coins for a in st.legal_actions() if isinstance(a, A.Place) and a.space == space}


def _balanced_workers(state: FlowarState) -> Action:
    """Chance chooser: every Guild Tile gets Workers as evenly spread as the bag allows
    (no type 3 times, so the Fellowship tile starts no strike; Trentis first among equals);
    other chance at random."""
    bag = state.observation(None)["bag"]

    def spread(a: A.DrawWorkers) -> tuple[int, int, int]:
        left = (bag["trentis"] - a.trentis, bag["humans"] - a.humans, bag["foxes"] - a.foxes)
        return max(left) - min(left), -min(a.trentis, a.humans, a.foxes), -a.trentis

    return min((a for a in state.legal_actions() if isinstance(a, A.DrawWorkers)), key=spread)


def played_first_turn(game: str, seed: int) -> FlowarState:
    """The first turn of round 1 reached by play only: chance from ``random.Random(seed)``
    except the Workers of each Guild Tile (:func:`_balanced_workers`); setup decisions are
    the first legal action. Nothing is written into the state."""
    rng = random.Random(seed)
    st = load_game(game).new_initial_state()
    assert isinstance(st, FlowarState)
    while st.observation(None)["phase"] != "turn":
        if st.is_chance_node():
            workers = st.observation(None)["phase"] == "draw_worker"
            st.apply_action(_balanced_workers(st) if workers else st.sample_chance(rng))
        else:
            st.apply_action(st.legal_actions()[0])
    return st


def _finish_turn(st: FlowarState, seat: int) -> None:
    """Resolve the follow-ups of a placement with the first legal action, then end the turn."""
    while not (st.current_player() == seat and "end_turn" in {a.to_json()["kind"] for a in st.legal_actions()}):
        st.apply_action(st.legal_actions()[0])
    act(st, kind="end_turn")
    settle(st)


def test_placement_cost_examples() -> None:
    """Rulebook: "Placing a Worker": "Placing the first Worker in an empty Action Space costs you
    1 Coin. Placing a Worker in an Action Space where there are already 3 Workers will cost you
    4 Coins." Reached by play: three players put a Human on the Contract Petal in turn."""
    st = played_first_turn("flowar(players=4)", seed=2)
    assert st.observation(None)["strikes"] == []
    for expected in (1, 2, 3, 4):
        seat = st.current_player()
        obs = st.observation(seat)
        assert sum(obs["contract_space"].values()) == expected - 1
        assert place_costs(st, "contract") == {expected}
        coins = obs["players"][seat]["coins"]
        act(st, kind="place", space="contract", worker="human")
        assert st.observation(seat)["players"][seat]["coins"] == coins - expected
        if expected < 4:
            _finish_turn(st, seat)


def test_market_petal_example() -> None:
    """Rulebook: "Market Petal": "This player will pay 4 Coins to place a Trenti on the Market Petal, and
    5 Coins for the flowers according to their Guild. In total, they pay 9 Coins to take the second
    card column and place the flowers in their Fresh Flower Area." Reached by play: the first seat
    (Guild Tile 1, flower price 5) puts a Human on the Contract Petal; the three others each put a
    Worker on the Market Petal; then the first seat places a Trenti there, the fourth Worker."""
    st = played_first_turn("flowar(players=4)", seed=2)
    first = st.current_player()
    act(st, kind="place", space="contract", worker="human")
    _finish_turn(st, first)
    for _ in range(3):
        seat = st.current_player()
        market = [a.to_json() for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "market"]
        act(st, **market[0])
        _finish_turn(st, seat)
    assert st.current_player() == first
    obs = st.observation(first)
    me = obs["players"][first]
    price = next(t["flower_price"] for t in obs["guild_tiles"] if t["guild"] == me["guild"])
    assert (sum(obs["market_space"].values()), price, obs["strikes"]) == (3, 5, [])  # the example's position
    assert me["workers"]["trentis"] >= 1
    trenti = [a for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "market" and a.worker == "trenti"]
    assert [a.coins for a in trenti] == [4 + 5]
    column = [obs["market"][i] for i in (1, 4, 7)]  # the 3×3 grid, row by row: the second column
    act(st, kind="place", space="market", worker="trenti")
    act(st, kind="take_line", line="col2")
    after = st.observation(first)["players"][first]
    assert me["coins"] - after["coins"] == 9
    assert sorted(after["fresh"]) == sorted(me["fresh"] + column)


def test_layoff_examples() -> None:
    """Rulebook: "Firing Workers": "When firing 2 Trentis and 1 Fox, you will receive 10 Coins and
    3 Torches of Discontent. Firing 1 Trenti, 1 Human, and 1 Fox earns you 12 Coins and 3 Torches.
    Firing 2 Trentis earns you 6 Coins and 2 Torches of Discontent." Reached by play."""
    for seed in range(3, 10):  # a first seat holding 2 Trentis, a Human and a Fox
        start = played_first_turn("flowar(players=4)", seed=seed)
        seat = start.current_player()
        mine = start.observation(seat)["players"][seat]
        w = mine["workers"]
        if w["trentis"] >= 2 and w["humans"] and w["foxes"]:
            break
    assert w["trentis"] >= 2 and w["humans"] and w["foxes"] and mine["torches"] == 0
    for counts, coins, torches in (((2, 0, 1), 10, 3), ((1, 1, 1), 12, 3), ((2, 0, 0), 6, 2)):
        st = start.clone()
        act(st, kind="fire", trentis=counts[0], humans=counts[1], foxes=counts[2])
        after = st.observation(seat)["players"][seat]
        assert (after["coins"] - mine["coins"], after["torches"]) == (coins, torches)


def test_strike_diorama_counts_as_a_worker() -> None:
    """Rulebook: "Strikes": "the Strike Diorama will count as an extra Worker of the same type when
    calculating the placement cost of that Action Space". Reached by play: the Guild Tile left for
    the Fellowship Petal (the fifth) brings 3 Foxes to the Strike Area, so Foxes strike; everybody
    pays to keep their Foxes; a Fox on Graceful Rain then costs 1 + 1, the next one 2 + 1."""
    rng = random.Random(2)
    st = load_game("flowar(players=4)").new_initial_state()
    assert isinstance(st, FlowarState)
    while st.observation(None)["phase"] != "turn":
        obs = st.observation(None)
        if obs["phase"] == "draw_worker":
            tiles = obs["guild_tiles"]
            last = sum(1 for g in tiles if sum(g["workers"].values())) == len(tiles) - 1
            draws = [a for a in st.legal_actions() if isinstance(a, A.DrawWorkers)]
            if last:
                st.apply_action(next(a for a in draws if a.foxes == 3))
            else:  # one Fox per player tile, so that 5 stay in the bag for the fifth
                st.apply_action(next(a for a in draws if (a.trentis, a.humans, a.foxes) == (2, 2, 1)))
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        elif obs["phase"] == "strike":
            st.apply_action(max((a for a in st.legal_actions() if isinstance(a, A.PayStrike)), key=lambda a: a.count))
        else:
            st.apply_action(st.legal_actions()[0])
    assert st.observation(None)["strikes"] == ["fox"]
    for cost in (2, 3):
        seat = st.current_player()
        assert place_costs(st, "travel_K1") == {cost}
        act(st, kind="place", space="travel_K1", worker="fox")
        _finish_turn(st, seat)


def test_two_player_travel_pays_for_all_three_spaces() -> None:
    """Rulebook: "Travel Petal": "In a two-player game, you should pay for all Workers in the three
    spaces". Reached by play: a Fox on Graceful Rain, then one on the third kingdom; the next
    Fox on the second kingdom (empty) costs 2 + 1 Coins."""
    st = played_first_turn("flowar(players=2)", seed=2)
    assert st.observation(None)["strikes"] == []
    for space, cost in (("travel_K1", 1), ("travel_K3", 2)):
        seat = st.current_player()
        assert place_costs(st, space) == {cost}
        act(st, kind="place", space=space, worker="fox")
        _finish_turn(st, seat)
    obs = st.observation(None)
    assert [sum(k["workers"].values()) for k in obs["kingdoms"]] == [1, 0, 1]
    assert place_costs(st, "travel_K2") == {3}


TRANSPORT_MARKET = ["F02", "F21", "F03", "F22", "F04", "F23", "F31", "F41", "F13"]
"""A setup Market with five colours; its third row (F31, F41, F13) completes the flowers needed."""
TRANSPORT_DEALS = {0: ("C02", "C44"), 1: ("C01", "C40"), 2: ("C03", "C45"), 3: ("C07", "C46")}
TRANSPORT_GRID = ("C02", "C03", "C07", "C40")
TRANSPORT_TILES = ((2, 2, 1), (2, 1, 2), (2, 2, 1), (2, 2, 1), (1, 2, 2))


def _dealt_to(obs: dict[str, Any]) -> int:
    """The seat a setup Flower card goes to: the first with fewer than 3 Baskets ("Game Setup", 6)."""
    return next(p["seat"] for p in obs["players"] if sum(FLOWER_BASKETS[FLOWER_INDEX[c]] for c in p["fresh"]) < 3)


def _transport_setup() -> FlowarState:
    """By play: seat 1 holds C01 and the Contract grid's first row is C02, C03 with C07 next;
    seat 1's setup flowers are F01, F11, F12; seat 0 starts, so seat 1 chooses second (Guild 2:
    "Gain 1 Coin and take 1 Contract Card")."""
    rng = random.Random(4)
    st = load_game("flowar(players=4)").new_initial_state()
    assert isinstance(st, FlowarState)
    baskets = iter(("F01", "F11", "F12"))
    while st.observation(None)["phase"] != "turn":
        obs = st.observation(None)
        phase = obs["phase"]
        dealt = [len(st.observation(s)["players"][s]["dealt"]) for s in range(4)]
        want: dict[str, object] | None = None
        if phase == "draw_flower" and "" in obs["market"]:
            want = {"card": TRANSPORT_MARKET[obs["market"].index("")]}
        elif phase == "draw_flower" and obs["round"] == 0 and _dealt_to(obs) == 1:
            want = {"card": next(baskets)}
        elif phase == "draw_contract" and not obs["contract_grid"][0] and min(dealt) < 2 \
                and obs["unchosen_contracts"] == 0:
            s = next(i for i in range(4) if dealt[i] < 2)  # "deal two cards to each player", in turn
            want = {"card": TRANSPORT_DEALS[s][dealt[s]]}
        elif phase == "keep_contract":
            want = {"card": TRANSPORT_DEALS[st.current_player()][0 if st.current_player() == 1 else 1]}
        elif phase == "draw_contract":
            want = {"card": TRANSPORT_GRID[obs["contract_grid"].index("")]}
        elif phase == "draw_worker":
            tile = next(i for i, g in enumerate(obs["guild_tiles"]) if not sum(g["workers"].values()))
            t, h, f = TRANSPORT_TILES[tile]
            want = {"trentis": t, "humans": h, "foxes": f}
        elif phase == "start_player":
            want = {"seat": 0}
        if want is not None:
            st.apply_action(find(st, **want))
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        else:
            st.apply_action(st.legal_actions()[0])
    return st


def _others_until(st: FlowarState, seat: int) -> None:
    """Other seats put a Trenti on their Guild space once, then pass, until ``seat``'s turn menu;
    at a strike everybody pays to keep their Workers; other decisions: the first legal action."""
    while True:
        obs = st.observation(None)
        if st.is_chance_node():
            st.apply_action(st.legal_actions()[0])
        elif obs["phase"] == "strike":
            st.apply_action(max((a for a in st.legal_actions() if isinstance(a, A.PayStrike)), key=lambda a: a.count))
        elif obs["phase"] == "turn" and st.current_player() == seat:
            return
        elif obs["phase"] == "turn" and obs["context"]["placed"] == 0:
            guild = [a for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "guild"]
            st.apply_action(guild[0] if guild else find(st, kind="pass"))
        elif obs["phase"] == "turn":
            act(st, kind="end_turn")
        else:
            st.apply_action(st.legal_actions()[0])


def test_transport_examples() -> None:
    """Rulebook: "Travel Petal": "Fulfilling three Contracts that require a means of transport would
    only cost you 1 Coin. If you also want to fulfill a fourth Contract that requires a different
    means of transport, you will have to pay 2 additional Coins." C01, C02 and C03 ride Graceful
    Rain's Cart (1 Coin), C07 its Riverboat (2). Reached by play: seat 1 takes C02 and C03 from the
    Contract Petal, C07 with its Guild action, the last flowers from the Market, then (with a Loan
    if its Coins ran short) delivers all four on Graceful Rain."""
    st = _transport_setup()
    seat = 1
    obs = st.observation(seat)
    assert obs["players"][seat]["contracts"] == ["C01"] and obs["contract_grid"][:3] == ["C02", "C03", "C07"]
    assert sorted(obs["players"][seat]["fresh"]) == ["F01", "F11", "F12"]
    _others_until(st, seat)
    act(st, kind="place", space="contract", worker="human")
    act(st, kind="take_line", line="row1")
    _finish_turn(st, seat)
    _others_until(st, seat)
    act(st, kind="place", space="guild", worker="trenti")
    settle(st)
    act(st, kind="take_card", slot=3, card="C07")
    _finish_turn(st, seat)
    _others_until(st, seat)
    assert st.observation(None)["market"][6:] == ["F31", "F41", "F13"]
    act(st, kind="place", space="market", worker="trenti")
    act(st, kind="take_line", line="row3")
    _finish_turn(st, seat)
    _others_until(st, seat)
    me = st.observation(seat)["players"][seat]
    assert sorted(me["contracts"]) == ["C01", "C02", "C03", "C07"]
    assert sorted(me["fresh"]) == ["F01", "F11", "F12", "F13", "F31", "F41"]
    act(st, kind="place", space="travel_K1", worker="fox")
    if st.observation(seat)["players"][seat]["coins"] < 3:
        act(st, kind="take_loan")  # "At any time during the game" (as Jan does): 5 Coins
    coins = [st.observation(seat)["players"][seat]["coins"]]
    for card, paid in (("C01", ["F01"]), ("C02", ["F11", "F12"]), ("C03", ["F31", "F41"]), ("C07", ["F13"])):
        act(st, kind="deliver", card=card)
        coins.append(st.observation(seat)["players"][seat]["coins"])
        for f in paid:
            act(st, kind="basket", card=f)
    assert [coins[i] - coins[i + 1] for i in range(4)] == [1, 0, 0, 2]  # 1 Coin for three, 2 more
    act(st, kind="finish_delivery")
    assert st.observation(seat)["players"][seat]["delivered"] == [4, 0, 0]  # "4 Contracts at once"
    # the Achievement (rulebook, "Achievements": "You have fulfilled 4 Contracts at once") stands at the end
    rng = random.Random(5)
    while not st.is_terminal():
        st.apply_action(st.sample_chance(rng) if st.is_chance_node() else st.legal_actions()[0])
    achieved = [b["achievements"]["four_contracts_at_once"] for b in st.outcome().details["breakdown"]]
    assert achieved[seat] is True and achieved.count(True) == 1


ELIA_TILES = ((2, 1, 2), (2, 1, 2), (2, 1, 2), (2, 1, 2), (1, 3, 1))
"""Workers of Guild Tiles 1-5: the Fellowship tile (5) brings 3 Humans, so Humans strike at once."""


def _play_round_start(game: str, seed: int, tiles: tuple[tuple[int, int, int], ...]) -> FlowarState:
    """Round 1's first turn by play: Guild Tile ``i`` gets Workers ``tiles[i]`` (chosen at its
    chance node), other chance from ``random.Random(seed)``; every seat pays to keep its Workers
    at a strike; other setup decisions are the first legal action (the lowest Guild Tile left)."""
    rng = random.Random(seed)
    st = load_game(game).new_initial_state()
    assert isinstance(st, FlowarState)
    while st.observation(None)["phase"] != "turn":
        obs = st.observation(None)
        if obs["phase"] == "draw_worker":
            tile = next(i for i, g in enumerate(obs["guild_tiles"]) if not sum(g["workers"].values()))
            t, h, f = tiles[tile]
            act(st, kind="draw_workers", trentis=t, humans=h, foxes=f)
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        elif obs["phase"] == "strike":
            st.apply_action(max((a for a in st.legal_actions() if isinstance(a, A.PayStrike)), key=lambda a: a.count))
        else:
            st.apply_action(st.legal_actions()[0])
    return st


def test_elia_turn() -> None:
    """Rulebook: "Turn Example": "Elia places a Fox on the Action Space of her Guild Tile and receives
    3 Coins. ... she decides to hire a Human ... pays 5 Coins, and takes a Human from the Strike Area
    to her Player Board. Her action results in the Human strike being called off, and so she gets rid
    of 1 Torch of Discontent. Elia will not be able to repeat this action during the rest of the Round."
    Reached by play: the Fellowship tile's 3 Humans start a Human strike; everybody pays; Elia (Guild
    1, "Gain 3 Coins") has a Torch from a Loan taken at the start of her turn."""
    st = _play_round_start("flowar(players=4)", 5, ELIA_TILES)
    obs = st.observation(None)
    elia = st.current_player()
    assert obs["strikes"] == ["human"] and obs["strike_area"]["humans"] == 3
    assert obs["players"][elia]["guild"] == 1

    def me() -> dict[str, Any]:
        return st.observation(elia)["players"][elia]  # type: ignore[no-any-return]  # observation() is dict[str, Any]

    act(st, kind="take_loan")
    start = me()
    assert start["torches"] == 1
    act(st, kind="place", space="guild", worker="fox")
    assert me()["coins"] == start["coins"] + 3
    act(st, kind="hire", worker="human")
    after = me()
    assert after["coins"] == start["coins"] + 3 - 5 and after["torches"] == 0 and after["hired"]
    assert after["workers"]["humans"] == start["workers"]["humans"] + 1
    obs = st.observation(None)
    assert obs["strikes"] == [] and obs["strike_area"]["humans"] == 2
    assert not any(isinstance(a, (A.Hire, A.Fire)) for a in st.legal_actions())
    act(st, kind="end_turn")
    settle(st)
    while st.current_player() != elia:  # the others put a Trenti on their Guild space
        seat = st.current_player()
        act(st, kind="place", space="guild", worker="trenti")
        _finish_turn(st, seat)
    assert me()["coins"] >= 5 and st.observation(None)["strike_area"]["humans"] > 0
    assert not any(isinstance(a, A.Hire) for a in st.legal_actions())  # once per Round


JAN_MARKET = ["F21", "F22", "F33", "F23", "F24", "F34", "F02", "F11", "F41"]
"""Setup Market (five colours); its third row (blue, white, yellow) waits for Jan in round 2."""
JAN_DEALS = {0: ("C15", "C44"), 1: ("C01", "C40"), 2: ("C22", "C45"), 3: ("C02", "C46")}
JAN_GRID = ("C15", "C22", "C40", "C02")
JAN_TILES = ((2, 2, 1), (2, 1, 2), (2, 2, 1), (2, 2, 1), (1, 2, 2))


def _jan_chance(st: FlowarState, rng: random.Random) -> None:
    """Resolve chance nodes: Kingdom Favor 6 on Graceful Rain, the Market :data:`JAN_MARKET`,
    Jan's (seat 1) setup flowers F01, F31, F32, the dealt Contracts :data:`JAN_DEALS` (the grid
    :data:`JAN_GRID`), Guild Tile Workers :data:`JAN_TILES`, seat 0 first, and a 5 Efficiency
    Tile on Mossvale in round 2; anything else from ``rng``."""
    while st.is_chance_node():
        obs = st.observation(None)
        phase = obs["phase"]
        dealt = [len(st.observation(s)["players"][s]["dealt"]) for s in range(4)]
        want: dict[str, object] | None = None
        if phase == "deal_favors" and not obs["kingdoms"][0]["favor"]:
            want = {"favor": 6}
        elif phase == "draw_flower" and obs["round"] == 0 and "" in obs["market"]:
            want = {"card": JAN_MARKET[obs["market"].index("")]}
        elif phase == "draw_flower" and obs["round"] == 0 and _dealt_to(obs) == 1:
            want = {"card": ("F01", "F31", "F32")[len(obs["players"][1]["fresh"])]}
        elif phase == "draw_contract" and obs["round"] == 0 and not obs["contract_grid"][0] \
                and min(dealt) < 2 and obs["unchosen_contracts"] == 0:
            s = next(i for i in range(4) if dealt[i] < 2)
            want = {"card": JAN_DEALS[s][dealt[s]]}
        elif phase == "draw_contract" and obs["round"] == 0:
            want = {"card": JAN_GRID[obs["contract_grid"].index("")]}
        elif phase == "draw_worker":
            tile = next(i for i, g in enumerate(obs["guild_tiles"]) if not sum(g["workers"].values()))
            t, h, f = JAN_TILES[tile]
            want = {"trentis": t, "humans": h, "foxes": f}
        elif phase == "start_player":
            want = {"seat": 0}
        elif phase == "draw_efficiency" and obs["round"] == 2 and obs["kingdoms"][0]["efficiency"] \
                and not obs["kingdoms"][1]["efficiency"]:
            want = {"value": 5}
        st.apply_action(find(st, **want) if want is not None else st.sample_chance(rng))


def _jan_others(st: FlowarState, rng: random.Random, jan: int, fox_on_k2: bool = False) -> None:
    """Until Jan's turn menu: others place on their free Player Board spaces (Guild first), then
    pass (with
    ``fox_on_k2``, the first of them puts a Fox on Mossvale instead); everybody pays at a strike
    and keeps its Coins at the end of a round; other decisions: the first legal action."""
    while True:
        _jan_chance(st, rng)
        obs = st.observation(None)
        seat = st.current_player()
        legal = st.legal_actions()
        if obs["phase"] == "strike":
            st.apply_action(max((a for a in legal if isinstance(a, A.PayStrike)), key=lambda a: a.count))
        elif obs["phase"] == "exchange_mp":
            act(st, kind="exchange_mp", mp=0)
        elif obs["phase"] == "turn" and seat == jan:
            return
        elif obs["phase"] == "turn" and obs["context"]["placed"] == 0:
            fox = [a for a in legal if isinstance(a, A.Place) and a.space == "travel_K2" and a.worker == "fox"]
            guild = [a for a in legal if isinstance(a, A.Place) and a.space in ("guild", "maintenance", "sell")]
            if fox_on_k2 and fox:
                st.apply_action(fox[0])
                fox_on_k2 = False
            else:
                st.apply_action(guild[0] if guild else find(st, kind="pass"))
        elif obs["phase"] == "turn":
            act(st, kind="end_turn")
        elif obs["phase"] == "deliver":
            act(st, kind="finish_delivery")
        else:
            st.apply_action(legal[0])


def _jan_finish(st: FlowarState, rng: random.Random, jan: int) -> None:
    """Resolve the follow-ups of Jan's placement (first legal action; chance by :func:`_jan_chance`)."""
    while True:
        _jan_chance(st, rng)
        if st.current_player() == jan and any(isinstance(a, A.EndTurn) for a in st.legal_actions()):
            break
        st.apply_action(st.legal_actions()[0])
    act(st, kind="end_turn")


def test_jan_turn() -> None:
    """Rulebook: "Turn Example": "He is required to pay 2 Coins to place a Fox on the second kingdom
    because there was already a Fox in that Action Space. In addition, he has to pay 5 Coins for the
    transportation costs. He takes 5 Coins, 1 Torch of Discontent, and a Loan Card ... He will gain
    13 Coins for delivering both Contracts plus 15 MP: 10 MP for delivering both Contracts in the
    second kingdom, 1 additional MP for fulfilling one of the Contracts with fresh flowers only,
    and 4 MP for using the Kingdom Favor that grants him 2 additional MP per Contract."
    Reached by play over two rounds: Jan (seat 1) takes C15 (Horse, 2 Coins) and C22 (Barge, 3)
    from the Contract Petal, delivers C01 on Graceful Rain (where Favor 6 lies) and passes, so his
    two purple flowers wilt; in round 2 (a 5 tile on Mossvale) he buys blue, white and yellow
    flowers, another player puts a Fox on Mossvale, and Jan delivers C15 with fresh flowers only
    and C22 with the wilting ones."""
    rng = random.Random(1)
    jan = 1
    st = load_game("flowar(players=4)").new_initial_state()
    assert isinstance(st, FlowarState)
    while st.observation(None)["phase"] != "turn":
        _jan_chance(st, rng)
        obs = st.observation(None)
        if obs["phase"] == "keep_contract":
            s = st.current_player()
            act(st, kind="keep_contract", card=JAN_DEALS[s][0 if s == jan else 1])
        elif obs["phase"] != "turn":
            st.apply_action(st.legal_actions()[0])
    _jan_others(st, rng, jan)
    act(st, kind="place", space="contract", worker="human")
    act(st, kind="take_line", line="row1")  # C15, C22
    _jan_finish(st, rng, jan)
    _jan_others(st, rng, jan)
    act(st, kind="place", space="travel_K1", worker="fox")
    act(st, kind="deliver", card="C01")
    act(st, kind="basket", card="F01")
    act(st, kind="finish_delivery")
    _jan_finish(st, rng, jan)
    _jan_others(st, rng, jan)
    act(st, kind="pass")  # round 1 ends for Jan: F31 and F32 wilt
    _jan_others(st, rng, jan)
    obs = st.observation(jan)
    assert obs["round"] == 2 and obs["kingdoms"][1]["efficiency"] == 5 and obs["kingdoms"][0]["favor"] == 6
    me = obs["players"][jan]
    assert me["wilting"] == ["F31", "F32"] and me["below"] == [1, 0, 0]
    assert sorted(me["contracts"]) == ["C15", "C22"] and obs["market"][6:] == ["F02", "F11", "F41"]
    worker = "trenti" if me["workers"]["trentis"] else "fox"
    act(st, kind="place", space="market", worker=worker)
    act(st, kind="take_line", line="row3")
    _jan_finish(st, rng, jan)
    _jan_others(st, rng, jan, fox_on_k2=True)
    obs = st.observation(jan)
    assert sum(obs["kingdoms"][1]["workers"].values()) == 1  # "there was already a Fox"
    before = obs["players"][jan]
    act(st, kind="place", space="travel_K2", worker="fox", coins=2)
    if st.observation(jan)["players"][jan]["coins"] < 5:
        act(st, kind="take_loan")  # "He takes 5 Coins, 1 Torch of Discontent, and a Loan Card"
    loan = st.observation(jan)["players"][jan]
    assert loan["coins"] >= 5
    act(st, kind="use_favor", kingdom=1, favor=6)  # discards C01, delivered on Graceful Rain
    act(st, kind="deliver", card="C15")
    act(st, kind="basket", card="F02")
    act(st, kind="basket", card="F11")
    act(st, kind="deliver", card="C22")
    assert st.observation(jan)["players"][jan]["coins"] == loan["coins"] - 5  # Horse 2 + Barge 3
    for f in ("F31", "F32", "F41"):
        act(st, kind="basket", card=f)
    act(st, kind="finish_delivery")
    after = st.observation(jan)["players"][jan]
    assert after["coins"] == loan["coins"] - 5 + 13
    assert after["mp"] - before["mp"] == 15  # 10 + 1 + 4
    assert after["below"] == [0, 2, 0] and after["fresh"] == [] and after["wilting"] == []


POL_MARKET = ["F01", "F11", "F21", "F42", "F43", "F31", "F02", "F12", "F22"]
"""A setup Market with all five colours and two yellow flowers in the central row."""
POL_TILES = ((2, 1, 2), (2, 1, 2), (2, 1, 2), (0, 3, 2), (2, 2, 1))
"""Workers of Guild Tiles 1-5: Pol (tile 4) has no Trenti; tile 5 (Fellowship) brings 2 Humans."""


def test_pol_turn() -> None:
    """Rulebook: "Turn Example": Pol, the last player, without Trentis, places a Human on the
    Market (Unqualified Practice): a second Human goes to the Strike Area and Humans strike; every
    player with Humans decides to pay 1 Coin each; Pol pays 1 Coin for the space plus 2 for flowers
    (his Guild's price) and takes the central row, where his 2 yellow flowers are. Reached by play:
    the Market and the Guild Tiles' Workers are chosen at their chance nodes; the three players
    before Pol put a Trenti on their own Guild space."""
    rng = random.Random(6)
    st = load_game("flowar(players=4)").new_initial_state()
    assert isinstance(st, FlowarState)
    while st.observation(None)["phase"] != "turn":
        obs = st.observation(None)
        if obs["phase"] == "draw_flower" and obs["round"] == 0 and "" in obs["market"]:
            act(st, kind="draw_flower", card=POL_MARKET[obs["market"].index("")])
        elif obs["phase"] == "draw_worker":
            tile = next(i for i, g in enumerate(obs["guild_tiles"]) if not sum(g["workers"].values()))
            t, h, f = POL_TILES[tile]
            act(st, kind="draw_workers", trentis=t, humans=h, foxes=f)
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        else:
            st.apply_action(st.legal_actions()[0])  # the lowest Guild Tile left, etc.
    obs = st.observation(None)
    assert obs["market"] == POL_MARKET and obs["strike_area"] == {"trentis": 2, "humans": 2, "foxes": 1}
    pol = next(p["seat"] for p in obs["players"] if p["guild"] == 4)
    assert obs["turn_order"][-1] == pol  # "the last player"
    while st.current_player() != pol:
        seat = st.current_player()
        act(st, kind="place", space="guild", worker="trenti")
        _finish_turn(st, seat)
    before = st.observation(pol)
    mine = before["players"][pol]
    assert mine["workers"]["trentis"] == 0 and sum(before["market_space"].values()) == 0
    assert find(st, kind="place", space="market", worker="human").coins == 1 + 2
    act(st, kind="place", space="market", worker="human")
    after = st.observation(pol)
    assert after["players"][pol]["coins"] == mine["coins"] - 3
    assert after["strikes"] == ["human"] and after["strike_area"]["humans"] == 3
    payers = []
    while st.observation(None)["phase"] == "strike":
        payers.append(st.current_player())
        humans = st.observation(None)["players"][st.current_player()]["workers"]["humans"]
        act(st, kind="pay_strike", count=humans)
    assert sorted(payers) == [0, 1, 2, 3]  # every player has Humans on their Guild Tile
    after = st.observation(pol)
    assert after["players"][pol]["coins"] == mine["coins"] - 3 - 1  # his one Human left
    assert after["players"][pol]["workers"] == {"trentis": 0, "humans": 1, "foxes": 2}
    act(st, kind="take_line", line="row2")
    fresh = st.observation(pol)["players"][pol]["fresh"]
    assert sorted(set(fresh) - set(mine["fresh"])) == ["F31", "F42", "F43"]
    settle(st)
    assert st.observation(None)["phase"] == "turn" and "" not in st.observation(None)["market"]


MARKET = ["F01", "F07", "F11", "F21", "F17", "F31", "F41", "F02", "F12"]
"""A setup Market with all five colours whose second column (F07, F17, F02) holds 3 cards, 5 Baskets."""


def _solo_to_taxus_reveal(seed: int = 0) -> FlowarState:
    """Solo, by play, up to Taxus's first reveal of round 1. Chance is ``random.Random(seed)``
    except: the Market is :data:`MARKET`; Graceful Rain's Efficiency Tile is a 4; the player is
    dealt C01 and C22 and keeps C01, so C22 (not kept) opens the Contract grid, then C37. The
    player takes the higher Guild Tile, so Taxus (the lower one) plays first."""
    rng = random.Random(seed)
    st = load_game("flowar(players=1)").new_initial_state()
    assert isinstance(st, FlowarState)
    while True:
        obs = st.observation(0)
        phase = obs["phase"]
        if phase == "reveal_taxus":
            return st
        me = obs["players"][0]
        grid = obs["contract_grid"]
        want: dict[str, object] | None = None
        if phase == "draw_flower" and obs["round"] == 0 and "" in obs["market"]:
            want = {"kind": "draw_flower", "card": MARKET[obs["market"].index("")]}
        elif phase == "draw_efficiency" and obs["kingdoms"][0]["efficiency"] == 0:
            want = {"kind": "draw_efficiency", "value": 4}
        elif phase == "draw_contract" and obs["round"] == 0 and not me["contracts"] and len(me["dealt"]) < 2:
            want = {"kind": "draw_contract", "card": ("C01", "C22")[len(me["dealt"])]}
        elif phase == "draw_contract" and obs["round"] == 0 and grid[0] and not grid[1]:
            want = {"kind": "draw_contract", "card": "C37"}
        elif phase == "keep_contract":
            want = {"kind": "keep_contract", "card": "C01"}
        elif phase == "choose_guild":
            want = {"kind": "choose_guild", "guild": max(g["guild"] for g in obs["guild_tiles"] if g["owner"] < 0)}
        if want is not None:
            st.apply_action(find(st, **want))
        elif st.is_chance_node():
            st.apply_action(st.sample_chance(rng))
        else:
            st.apply_action(st.legal_actions()[0])


def _taxus(st: FlowarState) -> dict[str, int]:
    return st.observation(0)["taxus"]  # type: ignore[no-any-return]  # observation() is dict[str, Any]


def test_taxus_market_example() -> None:
    """Rulebook: "Taxus Cards": "Taxus will discard 3 Cards (5 Baskets) from the second column,
    and he will gain 5 Coins while doing so." Reached by play (chance chosen)."""
    st = _solo_to_taxus_reveal()
    obs = st.observation(0)
    assert obs["market"] == MARKET
    coins, trentis = _taxus(st)["coins"], obs["market_space"]["trentis"]
    act(st, kind="reveal_taxus", taxus="T04")  # a Trenti on the Market, second column
    after = st.observation(0)
    assert _taxus(st)["coins"] - coins == 5
    assert after["market_space"]["trentis"] == trentis + 1
    assert after["flower_discard"] == obs["flower_discard"] + 3


def test_taxus_travel_example() -> None:
    """Rulebook: "Taxus Cards": a Fox on a kingdom whose Efficiency Tile is 4: "Taxus will obtain 8 MP"."""
    st = _solo_to_taxus_reveal()
    assert st.observation(0)["kingdoms"][0]["efficiency"] == 4
    mp = _taxus(st)["mp"]
    act(st, kind="reveal_taxus", taxus="T05")  # a Fox on Graceful Rain
    assert _taxus(st)["mp"] - mp == 8


def test_taxus_contract_example() -> None:
    """Rulebook: "Taxus Cards": "Taxus will gain 5 Coins in total: 3 Coins for the cost of one means
    of transport plus 2 Coins for the cost of the most expensive means of transport in Graceful
    Rain." C22 rides Mossvale's Barge (3 Coins), C37 is linked to Graceful Rain (Cart 1, Riverboat 2)."""
    assert contract_transport(21) == 3 and contract_transport(36) == 2
    st = _solo_to_taxus_reveal()
    assert st.observation(0)["contract_grid"][:2] == ["C22", "C37"]
    coins = _taxus(st)["coins"]
    act(st, kind="reveal_taxus", taxus="T08")  # a Human on the Contracts, first row
    assert _taxus(st)["coins"] - coins == 5
