"""The fields and steps of a La Fleur position that the rules modules use: one trait.

:class:`games.lafleur.state.LaFleurState` is assembled from mixins, one per part of the
rulebook (turns and locations, effects and the Garden Party, the solo opponent). Each
mixin method and each helper function types its ``self``/state argument as
:class:`LaFleurStateProtocol` (the mypy pattern for mixins: "Advanced uses of self-
types", with a base class instead of a protocol; Flowar uses the same pattern), so every
mixin is checked against the same declared fields. The state class inheriting the trait
no longer proves to mypy that it provides every step (the trait's stub would satisfy it)
nor that ``__init__`` sets every field: ``tests/games/test_state_traits.py`` checks both on
the live classes. A field or step a rule uses must be declared here: add it with its
type when a rule needs a new one. Fields are the state's private representation (see
``LaFleurState.__init__`` for what each one means).

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
from games.lafleur.termination import LaFleurTermination

if TYPE_CHECKING:
    from games.lafleur import actions as A
    from games.lafleur.cards import Ability, Visitor


@trait
class LaFleurStateProtocol:
    """What the La Fleur rules read and call on a position (implemented by :class:`LaFleurState`)."""

    game: Game
    history: list[tuple[int, Action]]
    _legal_cache: list[Action] | None  # games.api.State's: the legal list of this position, once built
    _sampled: Action | None  # games.api.State's: what sample_chance() drew here
    _active_ability: dict[str, Any] | None
    _after_discard: tuple[Any, ...]
    _allure: list[list[int]]
    _artisan_locations: list[list[int]]
    _artisans: list[list[int]]
    _automaton: int
    _buys: int
    _character_box: list[int]
    _chance: tuple[int, tuple[Any, ...]]
    _character_used: bool
    _character: list[int]
    _chosen_character: list[int]
    _coins: list[int]
    _companion: list[int]
    _cur: int
    _dealt_artisans: list[list[int]]
    _dealt_characters: list[list[int]]
    _deck: list[list[int]]
    _difficulty: str
    _discards: list[list[int]]
    _discard_left: int
    _display: list[int]
    _end: dict[str, list[int]]
    _end_reason: LaFleurTermination | None  # None until the game ends
    _event: int
    _event_modifiers: dict[str, Any]
    _feature_allure: list[list[int]]
    _features: list[list[int]]
    _final: bool
    _first_player: int
    _first_player_round1: int
    _hand: list[list[int]]
    _hand_open: list[list[int]]
    _in_deck: list[bytearray]
    _kept_artisans: list[list[int]]
    _market: list[int]
    _num_seats: int
    _num_players: int
    _optional: bool
    _order: list[int]
    _pair_first: int
    _pair_allure: int
    _party: list[list[int]]
    _pay_free: int
    _pay_need: tuple[int, ...]
    _pay_space: int
    _pay_feature: int
    _phase: int
    _placed: list[list[bool]]
    _prestige: list[int]
    _prompt: tuple[Any, ...]
    _result: Outcome | None
    _revealed: bool
    _romancing: list[bool]
    _round: int
    _ability_slot: int
    _solo: bool
    _swap_new: int
    _tasks: list[tuple[Any, ...]]
    _turn_index: int
    _tilted: list[list[bool]]
    _trigger: list[int]
    _used_prestige: list[bool]
    _visitor_bottom: list[int]
    _visitors: list[int]
    _visitor_pawn: list[int]
    _visitor_romance: list[bool]
    _visitor_search: list[int]
    _waiting: bool
    _ability_player: int

    # -- the State interface the rules call --------------------------------------------
    def current_player(self) -> int:
        raise NotImplementedError
    def is_terminal(self) -> bool:
        raise NotImplementedError
    def legal_actions(self) -> list[Action]:
        raise NotImplementedError

    # -- steps (defined in the mixins and in LaFleurState) -----------------------------
    def _run(self) -> None:
        raise NotImplementedError
    def _push(self, tasks: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError
    def _ask(self, phase: int, player: int) -> None:
        raise NotImplementedError
    def _draw(self, d: int, dest: tuple[Any, ...]) -> bool:
        raise NotImplementedError
    def _to_hand(self, p: int, x: int, face_up: bool) -> None:
        raise NotImplementedError
    def _from_hand(self, p: int, x: int) -> None:
        raise NotImplementedError
    def _flower_to_hand(self, p: int, space: int) -> None:
        raise NotImplementedError
    def _t_draw(self, d: int, dest: tuple[Any, ...]) -> None:
        raise NotImplementedError
    def _available(self, d: int) -> bool:
        raise NotImplementedError
    def _placed_card(self, d: int, x: int, dest: tuple[Any, ...]) -> None:
        raise NotImplementedError
    def _current_player(self) -> int:
        raise NotImplementedError
    def _chance_seq(self) -> list[int]:
        raise NotImplementedError
    def _chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        raise NotImplementedError
    def _sample_chance(self, rng: random.Random) -> Action:
        raise NotImplementedError
    def _is_legal(self, action: Action) -> bool:
        raise NotImplementedError
    def _legal_actions(self) -> list[Action]:
        raise NotImplementedError
    def _apply(self, action: Action) -> None:
        raise NotImplementedError
    def _view(self, seat: int | None) -> dict[str, Any]:
        raise NotImplementedError
    def _outcome(self) -> Outcome:
        raise NotImplementedError
    def _full_state(self) -> dict[str, Any]:
        raise NotImplementedError
    def _do_draw(self, a: A.Draw) -> None:
        raise NotImplementedError
    def _do_first(self, a: A.FirstPlayer) -> None:
        raise NotImplementedError
    def _t_setup(self) -> None:
        raise NotImplementedError
    def _t_first_player(self) -> None:
        raise NotImplementedError
    def _t_ask_setup(self, seat: int) -> None:
        raise NotImplementedError
    def _legal_character(self) -> list[Action]:
        raise NotImplementedError
    def _legal_artisans(self) -> list[Action]:
        raise NotImplementedError
    def _do_choose_character(self, a: A.ChooseCharacter) -> None:
        raise NotImplementedError
    def _do_keep_artisans(self, a: A.KeepArtisans) -> None:
        raise NotImplementedError
    def _t_reveal(self) -> None:
        raise NotImplementedError
    def _add_slot(self, p: int, x: int) -> None:
        raise NotImplementedError
    def _t_start_round(self) -> None:
        raise NotImplementedError
    def _t_fill_market(self) -> None:
        raise NotImplementedError
    def _t_fill_display(self) -> None:
        raise NotImplementedError
    def _t_turn(self) -> None:
        raise NotImplementedError
    def clone(self) -> Self:
        raise NotImplementedError
    def resample_hidden(self, rng: random.Random, seat: int | None=None) -> Self:
        raise NotImplementedError
    @staticmethod
    def _ab(key: str, default: int, ab: dict[str, Any] | None) -> int:
        raise NotImplementedError
    def _ev(self, key: str, default: int=0) -> int:
        raise NotImplementedError
    def _hire_cost(self, ab: dict[str, Any] | None) -> int:
        raise NotImplementedError
    def _replace_cost(self, ab: dict[str, Any] | None) -> int:
        raise NotImplementedError
    def _reveal_cost(self, ab: dict[str, Any] | None) -> int:
        raise NotImplementedError
    def romance_threshold(self, p: int, t: int) -> int:
        raise NotImplementedError
    def _untilted(self, p: int) -> tuple[int, ...]:
        raise NotImplementedError
    def _layouts(self, p: int) -> tuple[int, ...]:
        raise NotImplementedError
    def affordable(self, p: int, x: int, free: int=0) -> bool:
        raise NotImplementedError
    def _market_options(self, p: int, ab: dict[str, Any] | None) -> list[tuple[int, int, int]]:
        raise NotImplementedError
    def _can_reveal(self, p: int, ab: dict[str, Any] | None) -> bool:
        raise NotImplementedError
    def _can_place(self, p: int, loc: int, ab: dict[str, Any] | None) -> bool:
        raise NotImplementedError
    def _legal_place(self) -> list[Action]:
        raise NotImplementedError
    def _do_place(self, a: A.Place) -> None:
        raise NotImplementedError
    def _legal_market(self) -> list[Action]:
        raise NotImplementedError
    def _do_buy_flower(self, a: A.BuyFlower) -> None:
        raise NotImplementedError
    def _t_market_again(self) -> None:
        raise NotImplementedError
    def _legal_feature(self) -> list[Action]:
        raise NotImplementedError
    def _do_reveal(self, a: A.RevealFeature) -> None:
        raise NotImplementedError
    def _t_feature_again(self) -> None:
        raise NotImplementedError
    def _do_buy_feature(self, a: A.BuyFeature) -> None:
        raise NotImplementedError
    def _legal_pay(self) -> list[Action]:
        raise NotImplementedError
    @staticmethod
    def _pair_ok(need: tuple[int, ...], lays: list[int], arts: tuple[int, ...], free: int, pairs_of: int=2) -> bool:
        raise NotImplementedError
    def _do_pay_artisan(self, a: A.PayArtisan) -> None:
        raise NotImplementedError
    def _discard_flower(self, p: int, x: int) -> None:
        raise NotImplementedError
    def _do_pay_flower(self, a: A.PayFlower) -> None:
        raise NotImplementedError
    def _do_pay_pair(self, a: A.PayPair) -> None:
        raise NotImplementedError
    def _legal_pair(self) -> list[Action]:
        raise NotImplementedError
    def _do_pair_card(self, a: A.PairCard) -> None:
        raise NotImplementedError
    def _do_pay_discount(self, a: A.PayDiscount) -> None:
        raise NotImplementedError
    def _after_pay(self) -> None:
        raise NotImplementedError
    def _acquire(self, p: int, x: int) -> None:
        raise NotImplementedError
    def _do_done(self, a: A.Done) -> None:
        raise NotImplementedError
    def _legal_guild(self) -> list[Action]:
        raise NotImplementedError
    def _do_hire(self, a: A.HireArtisan) -> None:
        raise NotImplementedError
    def _do_replace(self, a: A.ReplaceArtisan) -> None:
        raise NotImplementedError
    def _legal_swap(self) -> list[Action]:
        raise NotImplementedError
    def _do_swap(self, a: A.SwapArtisan) -> None:
        raise NotImplementedError
    def _legal_invite(self) -> list[Action]:
        raise NotImplementedError
    def _do_invite(self, a: A.Invite) -> None:
        raise NotImplementedError
    def _apply_ability(self, p: int, ability: Ability, source: str) -> None:
        raise NotImplementedError
    def _apply_to_all(self, ability: Ability, source: str) -> None:
        raise NotImplementedError
    def _t_char_ability(self, p: int, k: int) -> None:
        raise NotImplementedError
    def _t_feature_ability(self, p: int, f: int) -> None:
        raise NotImplementedError
    def _t_step(self, p: int, st: tuple[Any, ...]) -> None:
        raise NotImplementedError
    def _t_gain_flower(self, p: int, source: str) -> None:
        raise NotImplementedError
    def _legal_take(self) -> list[Action]:
        raise NotImplementedError
    def _do_take(self, a: A.TakeFlower) -> None:
        raise NotImplementedError
    def _legal_accept(self) -> list[Action]:
        raise NotImplementedError
    def _do_accept(self, a: A.Accept) -> None:
        raise NotImplementedError
    def _legal_choose(self) -> list[Action]:
        raise NotImplementedError
    def _do_choose(self, a: A.Choose) -> None:
        raise NotImplementedError
    def _legal_discard(self) -> list[Action]:
        raise NotImplementedError
    def _do_discard(self, a: A.DiscardFlower) -> None:
        raise NotImplementedError
    def _event_drawn(self, x: int) -> None:
        raise NotImplementedError
    def _t_event(self, x: int) -> None:
        raise NotImplementedError
    def _visit_value(self, p: int, vis: Visitor) -> int:
        raise NotImplementedError
    def destinations(self) -> list[int]:
        raise NotImplementedError
    def _t_party(self) -> None:
        raise NotImplementedError
    def _party_items(self, p: int) -> list[tuple[str, int]]:
        raise NotImplementedError
    def _order_free(self, it: tuple[str, int]) -> bool:
        raise NotImplementedError
    def _t_visits(self, p: int) -> None:
        raise NotImplementedError
    def _t_order(self, p: int, items: tuple[tuple[str, int], ...]) -> None:
        raise NotImplementedError
    def _t_item(self, p: int, it: tuple[str, int]) -> None:
        raise NotImplementedError
    def _t_au_revoir(self) -> None:
        raise NotImplementedError
    def _t_end_round(self) -> None:
        raise NotImplementedError
    def _t_return(self) -> None:
        raise NotImplementedError
    def _t_eor_features(self, p: int) -> None:
        raise NotImplementedError
    def _t_character(self, p: int) -> None:
        raise NotImplementedError
    def _t_reset_check(self) -> None:
        raise NotImplementedError
    def _t_game_end(self) -> None:
        raise NotImplementedError
    def _t_bonus(self) -> None:
        raise NotImplementedError
    def _slide(self) -> None:
        raise NotImplementedError
    def _t_solo_player(self) -> None:
        raise NotImplementedError
    def _t_automaton(self) -> None:
        raise NotImplementedError
    def _auto_feature(self, x: int) -> None:
        raise NotImplementedError
    def _t_auto_flowers(self) -> None:
        raise NotImplementedError
    def _auto_allure(self, x: int) -> None:
        raise NotImplementedError
    def _t_auto_hardest(self) -> None:
        raise NotImplementedError
    def _t_solo_allure(self) -> None:
        raise NotImplementedError
