"""The 20 Kingdom Favors, each with its timing and effect (Rulebook: Flowar, "Kingdom Favors",
"Using a Kingdom Favor")."""

from __future__ import annotations

from reference.flowar_play import favor_game

from games.flowar import actions as A
from games.flowar.phases import D_BASKET, D_PICK, D_SPEND, D_STRIKE, D_SWAP, D_TURN
from games.flowar.script import act, arrange, arrange_board, find, first_turn, settle
from games.flowar.state import FlowarState


def with_favor(favor: int, players: int = 4, seed: int = 30, **board: object) -> tuple[FlowarState, int]:
    """A first turn whose player delivered C37 in K1, where Favor ``favor`` lies."""
    st = first_turn(f"flowar(players={players})", seed=seed)
    seat = st.current_player()
    arrange(st, seat, coins=10, torches=0, loans=0, mp=5, workers=(1, 1, 1), below={"K1": ["C37"]})
    arrange_board(st, favors=(favor, 19 if favor != 19 else 20, 18 if favor != 18 else 20), strikes=(), **board)
    return st, seat


def use(st: FlowarState, favor: int) -> None:
    act(st, kind="use_favor", kingdom=1, favor=favor)


def test_using_a_favor_discards_a_delivered_contract_once_per_turn() -> None:
    st, seat = with_favor(15)
    arrange(st, seat, torches=2, below={"K1": ["C37", "C38"]})
    use(st, 15)
    assert len(st._below[seat][0]) == 1 and 37 - 1 in st._contract_discard + [36] and st._turn_favor_used
    assert not any(isinstance(a, A.UseFavor) for a in st.legal_actions())
    assert st._delivered[seat] == [0, 0, 0]  # the Achievement counts deliveries, not what is left


def test_no_favor_without_a_contract_delivered_there() -> None:
    st, seat = with_favor(15)
    arrange(st, seat, torches=2, below={"K1": []})
    assert not any(isinstance(a, A.UseFavor) for a in st.legal_actions())


def test_favor_1_free_placement() -> None:
    st, seat = with_favor(1, spaces={"contract": (0, 2, 0)})
    use(st, 1)
    assert find(st, kind="place", space="contract", worker="human").coins == 0


def test_favor_2_layoff_table() -> None:
    st, seat = with_favor(2)
    use(st, 2)
    assert "pass" in {a.to_json()["kind"] for a in st.legal_actions()}  # only changes layoffs
    act(st, kind="fire", trentis=1, humans=1, foxes=0)
    assert st._coins[seat] == 10 + 10 and st._torches[seat] == 2


def test_favor_3_free_pick() -> None:
    st, seat = with_favor(3, market=["F01", "F11", "F21", "F31", "F41", "F02", "F12", "F22", "F32"])
    arrange(st, seat, fresh=[])
    act(st, kind="place", space="market", worker="trenti")
    use(st, 3)
    for slot in (1, 5, 9):
        assert st._phase == D_PICK
        act(st, kind="take_card", slot=slot)
    assert sorted(st._fresh[seat]) == [0, 31, 40]  # F01, F32, F41: not a row or column


def test_favor_4_free_transport() -> None:
    st, seat = with_favor(4)
    arrange(st, seat, coins=1, workers=(0, 0, 1), contracts=["C31"], fresh=["F01"])
    arrange_board(st, spaces={"travel_K3": (0, 0, 0)})
    act(st, kind="place", space="travel_K3", worker="fox")
    assert st._coins[seat] == 0 and not any(isinstance(a, A.Deliver) for a in st.legal_actions())
    use(st, 4)
    act(st, kind="deliver", card="C31")
    assert st._coins[seat] == 0


def test_favor_5_free_hire() -> None:
    st, seat = with_favor(5, strike_area=(0, 1, 0))
    arrange(st, seat, coins=0)
    assert not any(isinstance(a, A.Hire) for a in st.legal_actions())
    use(st, 5)
    act(st, kind="hire", worker="human")
    assert st._coins[seat] == 0 and st._workers[seat] == [1, 2, 1]


def test_favor_6_mp_per_contract() -> None:
    st, seat = with_favor(6)
    arrange(st, seat, mp=0, workers=(0, 0, 1), contracts=["C01", "C02", "C03"],
            fresh=["F01", "F11", "F12", "F31", "F41"])
    arrange_board(st, efficiency=(3, 3, 3), spaces={"travel_K1": (0, 0, 0)})
    act(st, kind="place", space="travel_K1", worker="fox")
    use(st, 6)
    for card, fl in (("C01", ["F01"]), ("C02", ["F11", "F12"]), ("C03", ["F31", "F41"])):
        act(st, kind="deliver", card=card)
        for f in fl:
            act(st, kind="basket", card=f)
    act(st, kind="finish_delivery")
    # 3 x (tile 3 + fresh 1) + card MP (2 + 1 + 0) + 6 from the Favor
    assert st._mp[seat] == 12 + 3 + 6


def test_favor_7_cheap_payoff() -> None:
    st, seat = with_favor(7)
    arrange(st, seat, coins=6, loans=1)
    assert not any(isinstance(a, A.Place) and a.space == "payoff" for a in st.legal_actions())
    use(st, 7)
    act(st, kind="place", space="payoff", worker="human")
    assert st._coins[seat] == 0 and st._loans[seat] == 0


def test_favor_8_contract_as_basket() -> None:
    st, seat = with_favor(8)
    arrange(st, seat, workers=(0, 0, 1), contracts=["C01"], fresh=[], wilting=[])
    arrange_board(st, spaces={"travel_K1": (0, 0, 0)})
    act(st, kind="place", space="travel_K1", worker="fox")
    assert not any(isinstance(a, A.Deliver) for a in st.legal_actions())
    use(st, 8)
    act(st, kind="deliver", card="C01")
    assert st._phase == D_BASKET and st.legal_actions() == [A.WILDCARD]
    act(st, kind="wildcard")
    act(st, kind="finish_delivery")
    assert st._below[seat][0] == [0] and st._fresh_deliveries[seat] == 0


def test_favor_9_any_worker() -> None:
    st, seat = with_favor(9)
    arrange(st, seat, workers=(0, 0, 1))
    area = st._strike_area[:]
    use(st, 9)
    act(st, kind="place", space="market", worker="fox")
    assert st._strike_area == area and st._workers[seat] == [0, 0, 0]


def test_favor_10_no_wither() -> None:
    st, seat = with_favor(10)
    arrange(st, seat, fresh=["F01"], wilting=["F11"], workers=(0, 0, 0))
    use(st, 10)
    act(st, kind="pass")  # allowed: the Favor only changes the passing steps
    assert st._fresh[seat] == [0] and st._wilt[seat] == [10]


def test_favor_11_no_torches() -> None:
    st, seat = with_favor(11)
    use(st, 11)
    act(st, kind="fire", trentis=1, humans=1, foxes=0)
    assert st._torches[seat] == 0 and st._coins[seat] == 17


def test_favor_12_double_sale() -> None:
    st, seat = with_favor(12)
    arrange(st, seat, coins=0, fresh=["F07"], wilting=[])
    act(st, kind="place", space="sell", worker="human")
    use(st, 12)
    act(st, kind="sell", card="F07")
    assert st._coins[seat] == 4


def test_favor_13_own_guild_action_still_requires_a_placement() -> None:
    st, seat = with_favor(13)
    st._guild[seat] = 1  # "+3 Coins"
    st._board_used[seat] |= 8  # even if its Action Space is already occupied
    use(st, 13)
    assert st._coins[seat] == 13
    kinds = {a.to_json()["kind"] for a in st.legal_actions()}
    assert "pass" not in kinds and "end_turn" not in kinds and "place" in kinds


def test_favor_14_fellowship_action() -> None:
    st, seat = with_favor(14)
    st._fellowship = 5
    st._fellowship_used = True
    use(st, 14)
    assert st._mp[seat] == 7 and st._coins[seat] == 10


def test_favor_15_coins_per_torch() -> None:
    st, seat = with_favor(15)
    arrange(st, seat, torches=3)
    use(st, 15)
    assert st._coins[seat] == 16


def test_favor_16_big_loan() -> None:
    st, seat = with_favor(16)
    use(st, 16)
    assert (st._coins[seat], st._loans[seat], st._torches[seat]) == (17, 1, 1)


def test_favor_17_second_worker() -> None:
    st, seat = with_favor(17)
    st._fellowship = 1
    st._fellowship_used = False
    use(st, 17)
    act(st, kind="place", space="market", worker="trenti")
    settle(st)
    while st._phase != D_TURN:
        st.apply_action(st.legal_actions()[0])
        settle(st)
    second = {a.space for a in st.legal_actions() if isinstance(a, A.Place)}
    assert second == {"fellowship", "guild"}
    act(st, kind="place", space="guild", worker="human")
    assert st._turn_placed == 2


def test_favor_18_strike_immunity() -> None:
    st, seat = with_favor(18, strike_area=(0, 2, 0))
    arrange(st, seat, workers=(0, 3, 1))
    act(st, kind="place", space="travel_K2", worker="human")  # Unqualified: Humans strike
    while st.current_player() != seat:
        st.apply_action(find(st, kind="pay_strike", count=0))
    assert st._phase == D_STRIKE
    use(st, 18)
    assert st.current_player() != seat and st._workers[seat] == [0, 1, 1]  # kept its Human for free


def test_favor_18_only_in_your_turn() -> None:
    """Rulebook, "Kingdom Favors": "In your turn, you may discard 1 fulfilled Contract from
    those below your Player Board to activate the Kingdom Favor"; "Using a Kingdom Favor":
    "In your turn, you can only use one Kingdom Favor". A strike called in another seat's
    turn is paid for (or not) without Favor 18, however the Contracts lie; in its own turn
    the seat may use it (test above)."""
    st, seat = with_favor(18, strike_area=(0, 2, 0))
    others = [s for s in range(4) if s != seat]
    for other in others:  # every other seat could pay for its Human with Favor 18, if it were its turn
        arrange(st, other, coins=5, workers=(0, 1, 0), below={"K1": []})
    arrange(st, others[0], below={"K1": ["C38"]})
    arrange(st, seat, workers=(0, 3, 1))
    act(st, kind="place", space="travel_K2", worker="human")  # Unqualified: Humans strike
    asked = []
    while st._phase == D_STRIKE:
        payer = st.current_player()
        if payer == seat:  # in its own turn: offered (see the test above)
            assert any(isinstance(a, A.UseFavor) for a in st.legal_actions())
            st.apply_action(find(st, kind="pay_strike", count=0))
            continue
        asked.append(payer)
        assert not any(isinstance(a, A.UseFavor) for a in st.legal_actions()), payer  # not its turn
        st.apply_action(find(st, kind="pay_strike", count=1))
    assert others[0] in asked
    assert st._below[others[0]][0] == [37]  # C38 is still below its board


def test_favor_19_swap_worker() -> None:
    st, seat = with_favor(19, strike_area=(0, 2, 1))
    arrange(st, seat, workers=(1, 2, 0))
    use(st, 19)
    assert st._phase == D_SWAP
    act(st, kind="swap_worker", give="human", take="fox")
    assert st._workers[seat] == [1, 1, 1] and st._strike_area == [0, 3, 0] and st._strike[1]


def test_favor_20_spend_mp() -> None:
    st, seat = with_favor(20)
    use(st, 20)
    assert st._phase == D_SPEND and [a.mp for a in st.legal_actions()] == [1, 2, 3]
    act(st, kind="spend_mp", mp=2)
    assert (st._mp[seat], st._coins[seat]) == (3, 16)


def test_favor_13_takes_the_rounds_one_guild_action() -> None:
    """Rules revision 3 (decision 31): "The actions on your Player Board, including the one of the
    Guild, can only be taken once per Round" ("Action Spaces of the Player Board"). Favor 13 with
    the Guild space free takes that action: no Worker may take it again this round. Revision 2
    still offered the space (two Guild actions in a round)."""
    for revision, offered in ((3, False), (2, True)):
        st, seat = with_favor(13)
        st.game = st.game.at_revision(revision)
        st._guild[seat] = 1  # "+3 Coins"
        assert any(isinstance(a, A.Place) and a.space == "guild" for a in st.legal_actions())
        use(st, 13)
        assert st._coins[seat] == 13
        guild = [a for a in st.legal_actions() if isinstance(a, A.Place) and a.space == "guild"]
        assert bool(guild) is offered, revision
        assert ("guild" in st.observation(seat)["players"][seat]["board_used"]) is not offered


def test_favor_13_then_no_worker_on_the_guild_space_in_played_games() -> None:
    """By play (Favor 13 dealt at its chance node, the greedy bot 70 %): after a seat used
    Favor 13, no Worker of that seat is offered its Guild space for the rest of the round, and
    the Favor is offered whether the space is occupied or not ("even if that Action Space is
    already occupied")."""
    free = occupied = 0
    for seed in range(60):
        used: set[tuple[int, int]] = set()
        for st, a in favor_game("flowar(players=3)", seed, (13,)):
            if st.is_chance_node():
                continue
            seat = st.current_player()
            obs = st.observation(seat)
            if (obs["round"], seat) in used:
                assert not any(isinstance(b, A.Place) and b.space == "guild" for b in st.legal_actions()), seed
            if isinstance(a, A.UseFavor) and a.favor == 13:
                used.add((obs["round"], seat))
                if "guild" in obs["players"][seat]["board_used"]:
                    occupied += 1
                else:
                    free += 1
    assert free >= 5 and occupied >= 1, (free, occupied)
