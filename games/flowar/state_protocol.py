"""The fields and steps of a Flowar position that the rules modules use: one trait.

:class:`games.flowar.state.FlowarState` is assembled from mixins, one per part of the
rulebook (setup, rounds, chance, turn, delivery, Taxus). Each mixin method and each
helper function types its ``self``/state argument as :class:`FlowarStateProtocol` (the
mypy pattern for mixins: "Advanced uses of self-types", with a base class instead of a
protocol), so every mixin is checked against the same declared fields. The state class
inheriting the trait no longer proves to mypy that it provides every step (the trait's
stub would satisfy it) nor that ``__init__`` sets every field:
``tests/games/test_state_traits.py`` checks both on the live classes. A field or step a rule
uses must be declared here; add it with its type when a rule needs a new one. Fields are
the state's private representation (see ``FlowarState.__init__`` for what each one
means).

It is a mypyc trait, not a :class:`typing.Protocol`, and every mixin inherits it (issue
19): compiled code reads a field of a Protocol-typed ``self`` by name through Python's
generic attribute lookup, a field of a trait from its slot, which made random playouts
about 1.3-1.6x faster. A step is declared here with a body that raises
NotImplementedError; the mixins and the state class come before it in the method
resolution order.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Self

from mypy_extensions import trait

from games.api import Action, Game, Outcome

if TYPE_CHECKING:
    from games.flowar import actions as A


@trait
class FlowarStateProtocol:
    """What the Flowar rules read and call on a position (implemented by :class:`FlowarState`)."""

    game: Game
    history: list[tuple[int, Action]]
    _legal_cache: list[Action] | None  # games.api.State's: the legal list of this position, once built
    _sampled: Action | None  # games.api.State's: what sample_chance() drew here
    _agenda: list[tuple[Any, ...]]
    _aside: list[int]
    _redraws: list[list[int]]
    _at_once: list[int]
    _bag: list[int]
    _bag_full: int
    _below: list[list[list[int]]]
    _board_used: list[int]
    _contract_deck: list[int]
    _contract_discard: list[int]
    _contract_grid: list[int]
    _contract_in_deck: bytearray
    _coins: list[int]
    _contracts: list[list[int]]
    _chance_target: int
    _cur: int
    _dealt: list[list[int]]
    _delivered: list[list[int]]
    _delivery_fresh_only: list[bool]
    _delivery_fresh: bool
    _delivery_kingdom: int
    _delivery_owed: list[int]
    _delivery_contracts: list[int]
    _delivery_baskets_used: dict[int, int]
    _favor8_baskets: int
    _exchange_picks: int
    _efficiency: list[int]
    _efficiency_supply: dict[int, int]
    _efficiency_discard: list[int]
    _exchanged: list[int]
    _favor_pool: list[int]
    _favor_slots: list[int]
    _flower_deck: list[int]
    _flower_discard: list[int]
    _fellowship_used: bool
    _fellowship: int
    _flower_in_deck: bytearray
    _fired: list[int]
    _fresh: list[list[int]]
    _fresh_deliveries: list[int]
    _gave: list[list[int]]
    _guild_owner: list[int]
    _guild: list[int]
    _guild_pool: list[int]
    _guilds: list[int]
    _guild_workers: list[list[int]]
    _hired: list[bool]
    _kept_hidden: bool
    _layoff_strikes: list[int]
    _line_grid: int
    _loans: list[int]
    _loans_paid: list[int]
    _loans_taken: list[int]
    _turn_loop: tuple[Any, ...]
    _market: list[int]
    _mp: list[int]
    _num_players: int
    _new_track: list[int]
    _favors_dealt: int
    _wither_exempt: list[bool]
    _order: list[int]
    _parked: list[int]
    _passed: list[bool]
    _phase: int
    _picks: int
    _result: Outcome | None
    _round: int
    _sold: int
    _solo: bool
    _spaces: list[list[int]]
    _start: int
    _strike: list[bool]
    _strike_area: list[int]
    _strike_type: int
    _strikes_off: list[int]
    _turn_acted: bool
    _turn_extra: bool
    _turn_favor_used: bool
    _turn_fired: bool
    _turn_hired: bool
    _turn_favors: int
    _turn_placed: int
    _turn_index: int
    _torches: list[int]
    _track: list[int]
    _turn_seat: int
    _two_travel: bool
    _taxus_seat: int
    _taxus_coins: int
    _taxus_deck: list[int]
    _taxus_discard: list[int]
    _taxus_extra: bool
    _taxus_guild: int
    _taxus_last: int
    _taxus_loans: int
    _taxus_mp: int
    _taxus_passed: bool
    _taxus_pile: int
    _taxus_torches: int
    _taxus_worker_supply: list[int]
    _unchosen: list[int]
    _wilt: list[list[int]]
    _workers: list[list[int]]

    # -- the State interface the rules call --------------------------------------------
    def current_player(self) -> int:
        raise NotImplementedError
    def is_terminal(self) -> bool:
        raise NotImplementedError
    def legal_actions(self) -> list[Action]:
        raise NotImplementedError

    # -- steps (defined in the mixins and in FlowarState) ------------------------------
    def _push(self, *tasks: tuple[Any, ...]) -> None:
        raise NotImplementedError
    def _run(self) -> None:
        raise NotImplementedError
    def _wait(self, phase: int, player: int) -> bool:
        raise NotImplementedError
    def _current_player(self) -> int:
        raise NotImplementedError
    def _legal_actions(self) -> list[Action]:
        raise NotImplementedError
    def _is_legal(self, action: Action) -> bool:
        raise NotImplementedError
    def _apply(self, action: Action) -> None:
        raise NotImplementedError
    def _view(self, seat: int | None) -> dict[str, Any]:
        raise NotImplementedError
    def _outcome(self) -> Outcome:
        raise NotImplementedError
    def _full_state(self) -> dict[str, Any]:
        raise NotImplementedError
    def stats(self) -> dict[str, Any]:
        raise NotImplementedError
    def clone(self) -> Self:
        raise NotImplementedError
    def resample_hidden(self, rng: random.Random, seat: int | None=None) -> Self:
        raise NotImplementedError
    def _setup_tasks(self) -> list[tuple[Any, ...]]:
        raise NotImplementedError
    def _t_favors(self) -> bool:
        raise NotImplementedError
    def _t_eff(self, k: int) -> bool:
        raise NotImplementedError
    def _t_market(self, setup: bool) -> bool:
        raise NotImplementedError
    def _redraw_slot(self) -> int:
        raise NotImplementedError
    def _t_baskets(self, seat: int) -> bool:
        raise NotImplementedError
    def _t_deal_contracts(self, seat: int) -> bool:
        raise NotImplementedError
    def _t_keep(self, seat: int) -> bool:
        raise NotImplementedError
    def _t_reveal_kept(self) -> bool:
        raise NotImplementedError
    def _t_contracts_fill(self) -> bool:
        raise NotImplementedError
    def _t_draw_guilds(self, count: int) -> bool:
        raise NotImplementedError
    def _t_guild_workers(self) -> bool:
        raise NotImplementedError
    def _t_start_player(self) -> bool:
        raise NotImplementedError
    def _set_start(self, seat: int) -> None:
        raise NotImplementedError
    def _t_round(self) -> bool:
        raise NotImplementedError
    def _t_refresh(self) -> bool:
        raise NotImplementedError
    def _t_choose_guild(self, seat: int) -> bool:
        raise NotImplementedError
    def _take_guild(self, seat: int, g: int) -> None:
        raise NotImplementedError
    def _t_fellowship(self) -> bool:
        raise NotImplementedError
    def _do_keep(self, a: A.KeepContract) -> None:
        raise NotImplementedError
    def _do_choose_guild(self, a: A.ChooseGuild) -> None:
        raise NotImplementedError
    def _t_turns(self) -> bool:
        raise NotImplementedError
    def _t_next_turn(self) -> bool:
        raise NotImplementedError
    def _t_strike_check(self, t: int, cause: int, layoff: bool) -> bool:
        raise NotImplementedError
    def _t_strike_pay(self, seat: int, t: int) -> bool:
        raise NotImplementedError
    def _strike_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _do_pay_strike(self, a: A.PayStrike) -> None:
        raise NotImplementedError
    def _strike_immune(self, seat: int) -> None:
        raise NotImplementedError
    def _strike_off(self, t: int, seat: int) -> bool:
        raise NotImplementedError
    def _take_loan(self, seat: int, coins: int) -> None:
        raise NotImplementedError
    def _torch_supply(self) -> int:
        raise NotImplementedError
    def _torches_from_supply(self, wanted: int) -> int:
        raise NotImplementedError
    def _lay_off(self, seat: int, counts: list[int] | tuple[int, int, int]) -> None:
        raise NotImplementedError
    def _do_pass(self, a: A.Pass) -> None:
        raise NotImplementedError
    def _t_pass_fire(self, seat: int) -> bool:
        raise NotImplementedError
    def _t_pass_track(self, seat: int) -> bool:
        raise NotImplementedError
    def _t_pass_wither(self, seat: int) -> bool:
        raise NotImplementedError
    def _exchange_max(self, seat: int) -> int:
        raise NotImplementedError
    def _t_pass_exchange(self, seat: int) -> bool:
        raise NotImplementedError
    def _exchange(self, seat: int, mp: int) -> None:
        raise NotImplementedError
    def _do_exchange_mp(self, a: A.ExchangeMP) -> None:
        raise NotImplementedError
    def _t_round_end(self) -> bool:
        raise NotImplementedError
    def _t_game_end(self) -> bool:
        raise NotImplementedError
    def _flowers_left(self) -> bool:
        raise NotImplementedError
    def _contracts_left(self) -> bool:
        raise NotImplementedError
    def _contract_deck_out(self) -> None:
        raise NotImplementedError
    def _weighted(self) -> tuple[tuple[Action, ...], list[int]]:
        raise NotImplementedError
    def _uniform(self) -> list[Action]:
        raise NotImplementedError
    def _chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        raise NotImplementedError
    def _sample_chance(self, rng: random.Random) -> Action:
        raise NotImplementedError
    def _chance_legal(self, action: Action) -> bool:
        raise NotImplementedError
    def _do_deal_favor(self, a: A.DealFavor) -> None:
        raise NotImplementedError
    def _do_draw_efficiency(self, a: A.DrawEfficiency) -> None:
        raise NotImplementedError
    def _do_draw_flower(self, a: A.DrawFlower) -> None:
        raise NotImplementedError
    def _do_draw_contract(self, a: A.DrawContract) -> None:
        raise NotImplementedError
    def _do_draw_guild(self, a: A.DrawGuild) -> None:
        raise NotImplementedError
    def _do_draw_workers(self, a: A.DrawWorkers) -> None:
        raise NotImplementedError
    def _do_start(self, a: A.ChooseStartPlayer) -> None:
        raise NotImplementedError
    def _reset_turn(self) -> None:
        raise NotImplementedError
    def _t_menu(self, seat: int) -> bool:
        raise NotImplementedError
    def _menu_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _place_cost(self, seat: int, sp: int) -> int:
        raise NotImplementedError
    def _placements(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _can_place(self, seat: int) -> bool:
        raise NotImplementedError
    def _placeable(self, seat: int, coins: int = 0, workers: tuple[int, int, int] = (0, 0, 0),
                   mods: int = 0, flower: bool = False) -> bool:
        raise NotImplementedError
    def _favor_actions(self, seat: int, timings: Any) -> list[Action]:
        raise NotImplementedError
    def _do_place(self, a: A.Place) -> None:
        raise NotImplementedError
    def _t_space_action(self, seat: int, sp: int) -> bool:
        raise NotImplementedError
    def _guild_action(self, seat: int, g: int) -> None:
        raise NotImplementedError
    def _do_end_turn(self, a: A.EndTurn) -> None:
        raise NotImplementedError
    def _do_fire(self, a: A.Fire) -> None:
        raise NotImplementedError
    def _do_hire(self, a: A.Hire) -> None:
        raise NotImplementedError
    def _do_take_loan(self, a: A.TakeLoan) -> None:
        raise NotImplementedError
    def _do_use_favor(self, a: A.UseFavor) -> None:
        raise NotImplementedError
    def _grid(self) -> list[int]:
        raise NotImplementedError
    def _t_line(self, seat: int) -> bool:
        raise NotImplementedError
    def _line_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _take_slot(self, seat: int, slot: int) -> None:
        raise NotImplementedError
    def _do_take_line(self, a: A.TakeLine) -> None:
        raise NotImplementedError
    def _begin_picks(self, seat: int, grid: int, count: int) -> None:
        raise NotImplementedError
    def _t_pick(self, seat: int) -> bool:
        raise NotImplementedError
    def _pick_actions(self) -> list[Action]:
        raise NotImplementedError
    def _do_take_card(self, a: A.TakeCard) -> None:
        raise NotImplementedError
    def _t_discard_over(self, seat: int) -> bool:
        raise NotImplementedError
    def _do_discard_contract(self, a: A.DiscardContract) -> None:
        raise NotImplementedError
    def _t_sell(self, seat: int) -> bool:
        raise NotImplementedError
    def _sell_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _do_sell(self, a: A.Sell) -> None:
        raise NotImplementedError
    def _do_finish_selling(self, a: A.FinishSelling) -> None:
        raise NotImplementedError
    def _t_swap(self, seat: int) -> bool:
        raise NotImplementedError
    def _swap_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _do_swap(self, a: A.SwapWorker) -> None:
        raise NotImplementedError
    def _t_spend(self, seat: int) -> bool:
        raise NotImplementedError
    def _do_spend(self, a: A.SpendMP) -> None:
        raise NotImplementedError
    def _reset_delivery(self) -> None:
        raise NotImplementedError
    def _pool(self, seat: int) -> list[int]:
        raise NotImplementedError
    def _t_deliver_menu(self) -> bool:
        raise NotImplementedError
    def _deliver_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _do_deliver(self, a: A.Deliver) -> None:
        raise NotImplementedError
    def _t_basket(self) -> bool:
        raise NotImplementedError
    def _rest(self) -> list[int]:
        raise NotImplementedError
    def _basket_actions(self, seat: int) -> list[Action]:
        raise NotImplementedError
    def _do_basket(self, a: A.UseBasket) -> None:
        raise NotImplementedError
    def _do_exchange(self, a: A.Exchange) -> None:
        raise NotImplementedError
    def _do_wildcard(self, a: A.Wildcard) -> None:
        raise NotImplementedError
    def _do_finish_delivery(self, a: A.FinishDelivery) -> None:
        raise NotImplementedError
    def _t_taxus_setup(self) -> bool:
        raise NotImplementedError
    def _t_taxus_turn(self) -> bool:
        raise NotImplementedError
    def _t_taxus_reveal(self) -> bool:
        raise NotImplementedError
    def _do_reveal_taxus(self, a: A.RevealTaxus) -> None:
        raise NotImplementedError
    def _taxus_workers(self, workers: tuple[int, int, int], space: str) -> None:
        raise NotImplementedError
    def _taxus_exchange(self) -> None:
        raise NotImplementedError
