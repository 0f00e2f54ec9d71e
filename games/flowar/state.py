"""The Flowar game state: its fields, the agenda that runs the rules, the State hooks.

The class is assembled from mixins, one per part of the rulebook:
:mod:`games.flowar.setup` ("Game Setup", "Round Setup"), :mod:`games.flowar.rounds`
("Round Overview", "Strikes", "Passing Your Turn", "End of the Round"),
:mod:`games.flowar.chance` (every draw), :mod:`games.flowar.turn` (the turn
menu and board actions), :mod:`games.flowar.delivery` ("Travel Petal") and
:mod:`games.flowar.taxus` (the solo automaton). This module holds the state's
fields, the agenda and the :class:`games.api.State` hooks.

**Flow as an agenda.** The state keeps a stack of small tasks (tuples such as
``("strike_check", type, seat, layoff)``). :meth:`FlowarState._run` pops tasks
until one needs input: a chance outcome (``current_player() == CHANCE``) or a
seat's decision. Applying that input runs its handler, which may push more
tasks, then the agenda resumes. A match is therefore: setup tasks, then four
rounds of (round setup, turns in Guild order until all passed, end of round).

**Chance is explicit** (docs/architecture.md, "games: the rules engines"; :mod:`games.flowar.chance`). Decks are
sorted lists of card indexes (sets: their order does not exist); a draw is
uniform over what remains; the Worker bag and the Efficiency Tile supply are
counts, drawn with probabilities proportional to them.

**Hidden information**: the two Contracts dealt to each player and the one
kept stay private until every player has chosen (the choice is simultaneous
at the table); MP tokens are face-down, so a seat sees only its own MP until
the game ends. Everything else on the table is public.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Final, cast

from games.api import CHANCE, TERMINAL, Action, Game, Outcome, State
from games.flowar import actions as A
from games.flowar.cards import (
    CONTRACT_IDS,
    CONTRACT_INDEX,
    EFFICIENCY_TILES,
    EFFICIENCY_VALUES,
    FIRST_GAME_FAVORS,
    FLOWER_IDS,
    GUILDS,
    TAXUS_CARDS,
    WORKERS_PER_TYPE,
    WORKERS_REMOVED,
)
from games.flowar.chance import ChanceMixin
from games.flowar.delivery import DeliveryMixin
from games.flowar.phases import (
    C_FAVOR,
    D_BASKET,
    D_DELIVER,
    D_DISCARD,
    D_EXCH,
    D_GUILD,
    D_KEEP,
    D_LINE,
    D_PICK,
    D_SELL,
    D_SPEND,
    D_STRIKE,
    D_SWAP,
    D_TURN,
    P_OVER,
)
from games.flowar.rounds import RoundsMixin
from games.flowar.setup import CONTRACT_SLOTS, MARKET_SLOTS, SetupMixin
from games.flowar.taxus import TaxusMixin
from games.flowar.turn import TurnMixin
from games.framework import StateHotPath
from games.native import blank, fields_of, set_fields


class FlowarState(StateHotPath, SetupMixin, RoundsMixin, ChanceMixin, TurnMixin, DeliveryMixin, TaxusMixin, State):
    """A position of a Flowar match (see the module docstring for the flow).

    Public behaviour is the :class:`games.api.State` interface plus
    :meth:`resample_hidden` (observation-invariance tests) and
    :meth:`stats` (balance simulation).
    """

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        n = game.num_players
        self._num_players = n
        self._solo = n == 1
        self._taxus_seat = n if self._solo else -1  # Taxus's marker in turn orders
        self._two_travel = n <= 2  # Rulebook: "In a two-player game, you should pay for all Workers in the three
        # spaces"
        # favors: slots 0..2 on the kingdoms, 3..5 beside them (rounds 3-4)
        self._favor_pool = list(FIRST_GAME_FAVORS if game.options["first_game_favors"] else range(1, 21))
        self._favor_slots = [0] * 6
        self._favors_dealt = 0
        # efficiency tiles: supply counts by value, value on each kingdom (0 none)
        self._efficiency_supply = {v: EFFICIENCY_TILES[v] for v in EFFICIENCY_VALUES}
        self._efficiency = [0, 0, 0]
        self._efficiency_discard: list[int] = []  # values discarded at the ends of rounds, in order (public)
        # flowers
        self._flower_deck = list(range(len(FLOWER_IDS)))
        self._flower_in_deck = bytearray([1]) * len(FLOWER_IDS)
        self._flower_discard: list[int] = []
        self._aside: list[int] = []  # setup redraws, back into the deck afterwards
        # every card put back while filling the Market, in order: [round, slot, card] (public; not hashed)
        self._redraws: list[list[int]] = []
        self._market = [-1] * MARKET_SLOTS
        # contracts
        self._contract_deck = list(range(len(CONTRACT_IDS)))
        self._contract_in_deck = bytearray([1]) * len(CONTRACT_IDS)
        self._contract_discard: list[int] = []
        self._contract_grid = [-1] * CONTRACT_SLOTS
        self._unchosen: list[int] = []
        self._kept_hidden = True
        # guild tiles
        self._guild_pool = [g.number for g in GUILDS]
        self._guilds: list[int] = []  # tiles in play this round, ascending
        self._guild_workers = [[0, 0, 0] for _ in range(6)]  # by tile number
        self._guild_owner = [-1] * 6
        self._fellowship = 0
        self._fellowship_used = False
        # workers
        removed = 0 if self._solo else WORKERS_REMOVED[n]
        self._bag_full = WORKERS_PER_TYPE - removed
        self._bag = [self._bag_full] * 3
        self._strike_area = [0, 0, 0]
        self._strike = [False, False, False]
        self._spaces = [[0, 0, 0] for _ in range(5)]  # contract, market, travel K1..K3
        self._parked = [0, 0, 0]  # Workers on Player Board spaces and the Fellowship Petal
        # rounds and order
        self._round = 0
        self._track: list[int] = []  # turn track (guild choice order)
        self._new_track: list[int] = []
        self._order: list[int] = []  # this round's turn order (by Guild number)
        self._turn_index = -1
        self._start = -1
        # players
        self._coins = [0] * n
        self._mp = [0] * n
        self._torches = [0] * n
        self._loans = [0] * n
        self._loans_taken = [0] * n
        self._loans_paid = [0] * n
        self._guild = [0] * n
        self._workers = [[0, 0, 0] for _ in range(n)]
        self._contracts: list[list[int]] = [[] for _ in range(n)]
        self._dealt: list[list[int]] = [[] for _ in range(n)]
        self._gave: list[list[int]] = [[] for _ in range(n)]  # setup: the Contract each seat did not keep
        self._fresh: list[list[int]] = [[] for _ in range(n)]
        self._wilt: list[list[int]] = [[] for _ in range(n)]
        self._below: list[list[list[int]]] = [[[], [], []] for _ in range(n)]
        self._board_used = [0] * n  # Player Board spaces used this round (games.flowar.flags)
        self._hired = [False] * n
        self._wither_exempt = [False] * n
        self._passed = [False] * n
        # achievements and statistics
        self._delivered = [[0, 0, 0] for _ in range(n)]
        self._fresh_deliveries = [0] * n
        self._at_once = [0] * n
        self._strikes_off = [0] * n
        self._layoff_strikes = [0] * n
        self._exchanged = [0] * n  # bit r-1: exchanged at least 1 MP at the end of round r
        self._fired = [0] * n
        # turn (see turn.py)
        self._turn_seat = -1
        self._reset_turn()
        self._line_grid = 0
        self._picks = 0
        self._sold = 0
        self._strike_type = -1
        self._reset_delivery()
        # Taxus (see taxus.py)
        self._taxus_deck = list(range(len(TAXUS_CARDS))) if self._solo else []
        self._taxus_discard: list[int] = []
        self._taxus_pile = 0
        self._taxus_last = -1
        self._taxus_extra = False
        self._taxus_mp = 0
        self._taxus_coins = 0
        self._taxus_torches = 0
        self._taxus_loans = 0
        self._taxus_guild = 0
        self._taxus_worker_supply = [0, 0, 0]
        self._taxus_passed = False
        # machinery
        self._chance_target = 0  # chance target
        self._phase = C_FAVOR
        self._cur = CHANCE
        self._result: Outcome | None = None
        self._agenda: list[tuple[Any, ...]] = []
        self._push(*self._setup_tasks())
        self._run()

    # -- agenda ---------------------------------------------------------------------------
    def _push(self, *tasks: tuple[Any, ...]) -> None:
        """Schedule ``tasks`` to run next, in the order given (before anything already queued)."""
        if len(tasks) == 1:  # the common case, without the reversed iterator
            self._agenda.append(tasks[0])
        else:
            self._agenda.extend(reversed(tasks))

    def _run(self) -> None:
        """Run tasks until one waits for a chance outcome or a decision."""
        agenda = self._agenda
        while agenda:
            task = agenda.pop()
            name = task[0]
            # the most frequent tasks called directly (a native call in the compiled build), the rest by name
            if name == "menu":
                done = self._t_menu(task[1])
            elif name == "strike_pay":
                done = self._t_strike_pay(task[1], task[2])
            elif name == "next_turn":
                done = self._t_next_turn()
            elif name == "strike_check":
                done = self._t_strike_check(task[1], task[2], task[3])
            else:
                done = _TASKS[name](self, *task[1:])
            if done:
                return
        self._phase = P_OVER
        self._cur = TERMINAL

    def _wait(self, phase: int, player: int) -> bool:
        self._phase = phase
        self._cur = player
        return True

    def _sample_chance(self, rng: random.Random) -> Action:
        return ChanceMixin._sample_chance(self, rng)  # named here: StateHotPath comes before the mixins

    def _legal_actions(self) -> list[Action]:
        if self._phase == D_TURN:  # the turn menu, most decisions: called directly (native when compiled)
            return self._menu_actions(self._cur)
        return _LEGAL[self._phase](self)

    def _is_legal(self, action: Action) -> bool:
        if self._cur == CHANCE:
            return self._chance_legal(action)
        cache = self._legal_cache
        if cache is None:
            cache = self._legal_cache = self._legal_actions()
        return action in cache

    def _apply(self, action: Action) -> None:
        t = type(action)
        # the most frequent actions called directly (native when compiled), the rest through the table
        if t is _PLACE_T:
            self._do_place(cast(A.Place, action))
        elif t is _DRAW_FLOWER_T:
            self._do_draw_flower(cast(A.DrawFlower, action))
        elif t is _END_TURN_T:
            self._do_end_turn(cast(A.EndTurn, action))
        elif t is _PAY_STRIKE_T:
            self._do_pay_strike(cast(A.PayStrike, action))
        else:
            _DISPATCH[t](self, action)
        self._run()

    def _view(self, seat: int | None) -> dict[str, Any]:
        from games.flowar.observation import build_observation

        return build_observation(self, seat)

    def _outcome(self) -> Outcome:
        if self._result is None:
            from games.flowar.scoring import outcome_of

            self._result = outcome_of(self)
        return self._result

    def _full_state(self) -> dict[str, Any]:
        from games.flowar.observation import full_state

        return full_state(self)

    def stats(self) -> dict[str, Any]:
        """Per-seat counters for the balance simulation (loans, layoffs, deliveries).

        Returns:
            ``{"loans": [..], "fired": [..], "delivered": [[k1, k2, k3], ..],
            "fresh_deliveries": [..], "start_player": seat}``.
        """
        return {
            "loans": list(self._loans_taken),
            "fired": list(self._fired),
            "delivered": [list(d) for d in self._delivered],
            "fresh_deliveries": list(self._fresh_deliveries),
            "start_player": self._start,
        }

    def clone(self) -> FlowarState:
        """An independent copy sharing only immutable parts (game, actions)."""
        new: FlowarState = blank(FlowarState, self.game)
        d = {}
        for k, v in fields_of(self).items():
            t = type(v)
            if t is list:
                d[k] = [_copy(x) for x in v] if v and type(v[0]) is list else v[:]
            elif t is bytearray or t is dict:
                d[k] = t(v)
            else:
                d[k] = v
        d["_legal_cache"] = None
        set_fields(new, d)
        return new

    def resample_hidden(self, rng: random.Random, seat: int | None = None) -> FlowarState:
        """A twin with the same information for ``seat`` and different hidden cards.

        Hidden from ``seat`` (None = the spectator) are the Contracts dealt to the
        other players and not yet revealed (Rulebook: "Game Setup", step 7).
        Each of them is swapped, in the history, for a Contract still in the
        deck (drawn with ``rng``) and the history is replayed; decisions that
        named a swapped card are renamed. Every observation of ``seat`` and every
        legal action of ``seat`` equal this state's (docs/faults.md F-20). Returns a
        clone when nothing is hidden from ``seat``.
        """
        if not self._kept_hidden:
            return self.clone()
        mine = set(self._dealt[seat] + self._contracts[seat] + self._gave[seat]) if seat is not None else set()
        hidden = sorted({x for s in range(self._num_players) if s != seat
                         for x in self._dealt[s] + self._contracts[s]} - mine)
        hidden += [x for x in self._unchosen if x not in mine]
        pool = [x for x in self._contract_deck]
        swap: dict[int, int] = {}
        for x in sorted(set(hidden)):
            if pool:
                swap[x] = pool.pop(rng.randrange(len(pool)))
        if not swap:
            return self.clone()
        twin = self.game.new_initial_state()
        for _, a in self.history:
            if isinstance(a, (A.DrawContract, A.KeepContract)) and CONTRACT_INDEX[a.card] in swap:
                a = A.make(type(a), CONTRACT_IDS[swap[CONTRACT_INDEX[a.card]]])
            twin.apply_action(a)
        assert isinstance(twin, FlowarState)
        return twin


def _copy(x: Any) -> Any:
    if type(x) is list:
        return [_copy(y) for y in x]
    return x


_TASKS: Final[dict[str, Any]] = {
    name[3:]: fn for base in reversed(FlowarState.__mro__) for name, fn in vars(base).items() if name.startswith("_t_")
}
"""Agenda task name -> handler (every ``_t_<name>`` method of the class and its mixins)."""

_PLACE_T: Final = A.Place
_DRAW_FLOWER_T: Final = A.DrawFlower
_END_TURN_T: Final = A.EndTurn
_PAY_STRIKE_T: Final = A.PayStrike
"""Action classes of the direct calls in FlowarState._apply."""

_CHOOSE_GUILD: Final[dict[int, A.ChooseGuild]] = {g: A.make(A.ChooseGuild, g) for g in range(1, 6)}
_EXCHANGE_MP: Final[tuple[A.ExchangeMP, ...]] = tuple(A.make(A.ExchangeMP, m) for m in range(11))
_KEEP: Final[tuple[A.KeepContract, ...]] = tuple(A.make(A.KeepContract, c) for c in CONTRACT_IDS)
_DISCARD: Final[tuple[A.DiscardContract, ...]] = tuple(A.make(A.DiscardContract, c) for c in CONTRACT_IDS)
"""Interned decisions by number (Guild tiles 1..5; MP exchanged 0..10; Contracts by index)."""

_LEGAL: Final[dict[int, Callable[[FlowarState], list[Action]]]] = {
    D_KEEP: lambda st: [_KEEP[x] for x in sorted(st._dealt[st._cur])],
    D_GUILD: lambda st: [_CHOOSE_GUILD[g] for g in st._guilds if st._guild_owner[g] < 0],
    D_STRIKE: lambda st: st._strike_actions(st._cur),
    D_TURN: lambda st: st._menu_actions(st._cur),
    D_LINE: lambda st: st._line_actions(st._cur),
    D_PICK: lambda st: st._pick_actions(),
    D_DISCARD: lambda st: [_DISCARD[x] for x in sorted(st._contracts[st._cur])],
    D_DELIVER: lambda st: st._deliver_actions(st._cur),
    D_BASKET: lambda st: st._basket_actions(st._cur),
    D_SELL: lambda st: st._sell_actions(st._cur),
    D_EXCH: lambda st: list(_EXCHANGE_MP[: st._exchange_max(st._cur) + 1]),
    D_SPEND: lambda st: [A.make(A.SpendMP, m) for m in range(1, min(3, st._mp[st._cur]) + 1)
                         if st._placeable(st._cur, 3 * m)],
    D_SWAP: lambda st: st._swap_actions(st._cur),
}

_DISPATCH: Final[dict[type[Action], Any]] = {
    A.DealFavor: FlowarState._do_deal_favor,
    A.DrawEfficiency: FlowarState._do_draw_efficiency,
    A.DrawFlower: FlowarState._do_draw_flower,
    A.DrawContract: FlowarState._do_draw_contract,
    A.DrawGuild: FlowarState._do_draw_guild,
    A.DrawWorkers: FlowarState._do_draw_workers,
    A.ChooseStartPlayer: FlowarState._do_start,
    A.RevealTaxus: FlowarState._do_reveal_taxus,
    A.KeepContract: FlowarState._do_keep,
    A.ChooseGuild: FlowarState._do_choose_guild,
    A.PayStrike: FlowarState._do_pay_strike,
    A.Pass: FlowarState._do_pass,
    A.Place: FlowarState._do_place,
    A.EndTurn: FlowarState._do_end_turn,
    A.Fire: FlowarState._do_fire,
    A.Hire: FlowarState._do_hire,
    A.TakeLoan: FlowarState._do_take_loan,
    A.UseFavor: FlowarState._do_use_favor,
    A.TakeLine: FlowarState._do_take_line,
    A.TakeCard: FlowarState._do_take_card,
    A.DiscardContract: FlowarState._do_discard_contract,
    A.Deliver: FlowarState._do_deliver,
    A.FinishDelivery: FlowarState._do_finish_delivery,
    A.UseBasket: FlowarState._do_basket,
    A.Exchange: FlowarState._do_exchange,
    A.Wildcard: FlowarState._do_wildcard,
    A.Sell: FlowarState._do_sell,
    A.FinishSelling: FlowarState._do_finish_selling,
    A.ExchangeMP: FlowarState._do_exchange_mp,
    A.SpendMP: FlowarState._do_spend,
    A.SwapWorker: FlowarState._do_swap,
}
