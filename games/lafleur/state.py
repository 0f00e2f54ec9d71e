"""The La Fleur game state: data, framework hooks, draws, setup and the start of a round.

Rulebook: La Fleur, "Game Board Setup", "Player Setup", "Playing a Round" and
"Start of Round". The rest of the rules live in mixins: :mod:`.turns`
(placing Artisans, the six locations, paying for Garden Features),
:mod:`.party` (effects, Events, Garden Party, End of Round, game end) and
:mod:`.solo` (the solo opponent).

How the flow works: the state keeps a stack of *tasks* (tuples whose first
item names a ``_t_*`` method). :meth:`LaFleurState._run` pops and runs tasks
until one asks a decision (:meth:`_ask`) or a chance outcome (:meth:`_draw`);
applying the answer resumes the stack. Every shuffle/draw is a chance node
whose outcomes are the cards still in the deck (decks are sorted lists: their
order does not exist). Players are numbered like seats; in solo the
opponent automaton is player 1 (it has no seat).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from games.api import CHANCE, Action, Game, Outcome, State
from games.framework import StateHotPath
from games.lafleur import actions as A
from games.lafleur.cards import (
    ARTISANS,
    CHARACTERS,
    D_ARTISAN,
    D_CHARACTER,
    D_EVENT,
    D_FEATURE,
    D_FLOWER,
    D_VISITOR,
    DECK_NAMES,
    DECKS,
    EVENTS,
    FEATURES,
    FLOWERS,
    INDEX,
    SOLO_OPPONENTS,
    VISITORS,
)
from games.lafleur.chance import DRAW, FIRST, resample
from games.lafleur.constants import (
    DEALT_ARTISANS,
    DEALT_CHARACTERS,
    FEATURE_SPACES,
    MARKET_SPACES,
    P_ARTISANS,
    P_CHANCE,
    P_CHARACTER,
    P_OVER,
    P_PLACE,
    P_SWAP,
    START_COINS,
    START_FLOWERS,
    THRESHOLDS,
)
from games.lafleur.party import PARTY_DISPATCH, PARTY_LEGAL, PartyMixin
from games.lafleur.solo import SoloMixin
from games.lafleur.termination import LaFleurTermination
from games.lafleur.turns import LEGAL_BUILDERS, TURN_DISPATCH, TurnsMixin
from games.native import blank, fields_of, set_fields
from games.trusted import below


class LaFleurState(StateHotPath, TurnsMixin, PartyMixin, SoloMixin, State):
    """A position of a La Fleur match (see the module docstring for the flow).

    Besides the :class:`games.api.State` hooks, :meth:`resample_hidden` serves
    the observation-invariance tests.
    """

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        n = game.num_players
        solo = n == 1
        np = 2 if solo else n
        self._num_seats = n
        self._solo = solo
        self._num_players = np
        self._automaton = 1 if solo else -1
        self._difficulty = str(game.options["difficulty"])
        # decks: sorted lists of indexes + membership; discard piles in discard order (public)
        keep = [
            list(range(len(FLOWERS))),
            [f.index for f in FEATURES if not (solo and f.solo_excluded)],
            [v.index for v in VISITORS if not (solo and v.solo_excluded)],
            list(range(len(ARTISANS))),
            list(range(len(CHARACTERS))),
            [e.index for e in EVENTS if not (solo and e.solo_excluded)],
        ]
        self._deck: list[list[int]] = keep
        self._in_deck: list[bytearray] = []
        for d, cards in enumerate(keep):
            flags = bytearray(len(DECKS[DECK_NAMES[d]]))
            for x in cards:
                flags[x] = 1
            self._in_deck.append(flags)
        self._discards: list[list[int]] = [[] for _ in range(6)]
        self._visitor_bottom: list[int] = []  # solo: known Visitors put on the bottom of the deck, in order
        self._visitor_search: list[int] = []  # solo: Visitors drawn while looking for an Allure type
        self._character_box: list[int] = []  # Character cards returned to the box (hidden)
        # Per player, the cards of its hand that everybody saw taken face-up (a subset of the
        # hand, kept only while the card stays in that hand: see _to_hand/_from_hand).
        self._hand_open: list[list[int]] = [[] for _ in range(np)]
        # board
        self._market = [-1] * MARKET_SPACES
        self._display = [-1] * FEATURE_SPACES
        self._visitors: list[int] = []
        self._visitor_pawn: list[int] = []
        self._visitor_romance: list[bool] = []
        self._event = -1
        self._event_modifiers: dict[str, Any] = {}
        # players (player index = seat; solo: 1 = the automaton)
        self._coins = [START_COINS] * np
        self._prestige = [0] * np
        self._allure = [[0] * 5 for _ in range(np)]
        self._feature_allure = [[0] * 5 for _ in range(np)]
        self._hand: list[list[int]] = [[] for _ in range(np)]
        self._features: list[list[int]] = [[] for _ in range(np)]
        self._companion = [-1] * np
        self._character = [-1] * np
        self._dealt_characters: list[list[int]] = [[] for _ in range(np)]
        self._dealt_artisans: list[list[int]] = [[] for _ in range(np)]
        self._chosen_character = [-1] * np
        self._kept_artisans: list[list[int]] = [[] for _ in range(np)]
        self._revealed = False
        self._artisans: list[list[int]] = [[] for _ in range(np)]
        self._placed: list[list[bool]] = [[] for _ in range(np)]
        self._tilted: list[list[bool]] = [[] for _ in range(np)]
        self._artisan_locations: list[list[int]] = [[] for _ in range(np)]
        self._used_prestige = [False] * np
        self._romancing = [False] * np
        self._party: list[list[int]] = [[] for _ in range(np)]
        self._character_used = False  # solo challenge 10
        # round
        self._round = 0
        self._first_player = 0
        self._first_player_round1 = 0  # First Player of round 1
        self._order = list(range(np))
        self._turn_index = 0
        self._final = False
        self._trigger: list[int] = []
        self._end_reason: LaFleurTermination | None = None  # set when the game ends
        self._end: dict[str, list[int]] = {}
        # decision context
        self._ability_player = -1
        self._ability_slot = -1
        self._active_ability: dict[str, Any] | None = None
        self._buys = 0
        self._optional = False
        self._pay_feature = -1
        self._pay_space = -1
        self._pay_need: tuple[int, ...] = (0, 0, 0, 0, 0)
        self._pay_free = 0
        self._pair_allure = -1
        self._pair_first = -1
        self._swap_new = -1
        self._prompt: tuple[Any, ...] = ()
        self._discard_left = 0
        self._after_discard: tuple[Any, ...] = ()
        self._result: Outcome | None = None
        # flow
        self._tasks: list[tuple[Any, ...]] = [("_t_setup",)]
        self._waiting = False
        self._phase = P_CHANCE
        self._cur = CHANCE
        self._chance: tuple[int, tuple[Any, ...]] = (-1, ())
        self._run()

    # -- flow machinery ----------------------------------------------------------------------
    def _run(self) -> None:
        tasks = self._tasks
        while not self._waiting:
            op = tasks.pop()
            getattr(self, op[0])(*op[1:])

    def _push(self, tasks: list[tuple[Any, ...]]) -> None:
        """Schedule ``tasks`` to run next, in the given order."""
        self._tasks.extend(reversed(tasks))

    def _ask(self, phase: int, player: int) -> None:
        self._phase = phase
        self._cur = player
        self._waiting = True

    def _draw(self, d: int, dest: tuple[Any, ...]) -> bool:
        """Ask for the next card of deck ``d`` (a chance node), going to ``dest``.

        An empty deck is refilled from its discard pile (Characters never are);
        in solo the Visitors put on the bottom come after the unknown ones, in
        order, with no chance node. Returns False when no card is left anywhere.
        """
        deck = self._deck[d]
        if not deck:
            if d == D_VISITOR and self._visitor_bottom:
                self._placed_card(d, self._visitor_bottom.pop(0), dest)
                return True
            disc = self._discards[d]
            if not disc or d == D_CHARACTER:
                return False
            flags = self._in_deck[d]
            for x in disc:
                flags[x] = 1
            deck.extend(sorted(disc))
            disc.clear()
        if dest[0] == "auto_char" and not any(x in SOLO_OPPONENTS for x in deck):
            return False
        self._chance = (d, dest)
        self._phase = P_CHANCE
        self._cur = CHANCE
        self._waiting = True
        return True

    def _to_hand(self, p: int, x: int, face_up: bool) -> None:
        """Flower card ``x`` enters player ``p``'s hand; ``face_up``: taken from the face-up market.

        Rulebook: "Player Setup" ("Do not show these cards to the other
        players"). Whether the other players may see a hand card is a fact of
        *how it entered this hand*, recorded here and forgotten by
        :meth:`_from_hand`: a card drawn from the deck is hidden whatever its
        past (a card once face-up and reshuffled into the deck included).
        """
        self._hand[p].append(x)
        if face_up:
            self._hand_open[p].append(x)

    def _from_hand(self, p: int, x: int) -> None:
        """Flower card ``x`` leaves player ``p``'s hand (and its face-up mark with it)."""
        self._hand[p].remove(x)
        if x in self._hand_open[p]:
            self._hand_open[p].remove(x)

    def _t_draw(self, d: int, dest: tuple[Any, ...]) -> None:
        self._draw(d, dest)

    def _available(self, d: int) -> bool:
        """True when a card of deck ``d`` can still be drawn."""
        return bool(self._deck[d] or self._discards[d] or (d == D_VISITOR and self._visitor_bottom))

    def _placed_card(self, d: int, x: int, dest: tuple[Any, ...]) -> None:
        """Put drawn card ``x`` where the pending draw said."""
        kind = dest[0]
        if kind == "market":
            self._market[dest[1]] = x
        elif kind == "display":
            self._display[dest[1]] = x
        elif kind == "visitor":
            self._visitors.append(x)
            self._visitor_pawn.append(-1)
            self._visitor_romance.append(False)
        elif kind == "hand":
            self._to_hand(dest[1], x, face_up=False)  # from the deck: nobody else saw it
        elif kind == "event":
            self._event_drawn(x)
        elif kind == "char":
            self._dealt_characters[dest[1]].append(x)
        elif kind == "art":
            self._dealt_artisans[dest[1]].append(x)
        elif kind == "hire":
            self._add_slot(dest[1], x)
        elif kind == "replace":
            self._swap_new = x
            self._ask(P_SWAP, dest[1])
        elif kind == "auto_char":
            self._character[1] = x
        elif kind == "auto_feature":
            self._auto_feature(x)
        elif kind == "auto_allure":
            self._auto_allure(x)
        elif kind == "solo_extra":
            self._visitor_search.append(x)
        else:  # pragma: no cover - programming error
            raise AssertionError(f"unknown destination {dest!r}")

    def _chance_seq(self) -> list[int]:
        d, dest = self._chance
        if d < 0:
            return list(range(self._num_seats))
        deck = self._deck[d]
        if dest[0] == "auto_char":
            return [x for x in deck if x in SOLO_OPPONENTS]
        return deck

    def _chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        seq = self._chance_seq()
        p = Fraction(1, len(seq))
        d = self._chance[0]
        table = FIRST if d < 0 else DRAW[d]
        return [(table[x], p) for x in seq]

    def _sample_chance(self, rng: random.Random) -> Action:
        # Same draw as the default (uniform: outcomes[rng.randrange(len)], drawn by trusted.below), without Fractions.
        d = self._chance[0]
        seq = self._chance_seq()
        return (FIRST if d < 0 else DRAW[d])[seq[below(rng, len(seq))]]

    def _is_legal(self, action: Action) -> bool:
        if self._cur == CHANCE:
            d, dest = self._chance
            t = type(action)
            if t is A.Draw:
                where = INDEX.get(action.card)  # type: ignore[attr-defined]  # t is A.Draw: not narrowed
                # the type: ignore below: Action union: t is A.Draw, which mypy does not narrow
                if d < 0 or where is None or where[0] != d or action.deck != DECK_NAMES[d]:  # type: ignore[attr-defined]
                    return False
                x = where[1]
                if not self._in_deck[d][x]:
                    return False
                return x in SOLO_OPPONENTS if dest[0] == "auto_char" else True
            if t is A.FirstPlayer:
                # the type: ignore below: Action union: t is A.FirstPlayer, which mypy does not narrow
                return d < 0 and 0 <= action.seat < self._num_seats  # type: ignore[attr-defined]
            return False
        cache = self._legal_cache
        if cache is None:
            cache = self._legal_cache = self._legal_actions()
        for a in cache:
            if a is action:
                return True
        return action in cache

    def _legal_actions(self) -> list[Action]:
        return _LEGAL[self._phase](self)

    def _apply(self, action: Action) -> None:
        self._waiting = False
        _DISPATCH[type(action)](self, action)
        if not self._waiting:
            self._run()

    def _view(self, seat: int | None) -> dict[str, Any]:
        from games.lafleur.observation import build_observation

        return build_observation(self, seat)

    def _outcome(self) -> Outcome:
        if self._result is None:
            from games.lafleur.scoring import build_outcome

            self._result = build_outcome(self)
        return self._result

    def _full_state(self) -> dict[str, Any]:
        from games.lafleur.observation import full_state

        return full_state(self)

    # -- chance handlers ------------------------------------------------------------------------
    def _do_draw(self, a: A.Draw) -> None:
        d, x = INDEX[a.card]
        self._deck[d].remove(x)
        self._in_deck[d][x] = 0
        dest = self._chance[1]
        self._chance = (-1, ())
        self._placed_card(d, x, dest)

    def _do_first(self, a: A.FirstPlayer) -> None:
        self._first_player = self._first_player_round1 = a.seat
        self._chance = (-1, ())

    # -- setup -------------------------------------------------------------------------------------
    def _t_setup(self) -> None:
        """Rulebook: "Player Setup": deal 2 Characters, 3 Artisans and 3 Flower cards each."""
        n = self._num_seats
        t: list[tuple[Any, ...]] = []
        if self._solo:
            # Rulebook: "Solo Mode": the opponent is one of four Characters, at random.
            t.append(("_t_draw", D_CHARACTER, ("auto_char",)))
        else:
            t.append(("_t_first_player",))
        for s in range(n):
            t += [("_t_draw", D_CHARACTER, ("char", s))] * DEALT_CHARACTERS
        for s in range(n):
            t += [("_t_draw", D_ARTISAN, ("art", s))] * DEALT_ARTISANS
        for s in range(self._num_players):
            t += [("_t_draw", D_FLOWER, ("hand", s))] * START_FLOWERS
        t += [("_t_ask_setup", s) for s in range(n)]
        t += [("_t_reveal",), ("_t_start_round",)]
        self._push(t)

    def _t_first_player(self) -> None:
        self._chance = (-1, ("first",))
        self._phase = P_CHANCE
        self._cur = CHANCE
        self._waiting = True

    def _t_ask_setup(self, seat: int) -> None:
        self._ask(P_CHARACTER, seat)

    def _legal_character(self) -> list[Action]:
        return [A.intern(A.ChooseCharacter, CHARACTERS[c].id) for c in self._dealt_characters[self._cur]]

    def _legal_artisans(self) -> list[Action]:
        d = sorted(self._dealt_artisans[self._cur])
        pairs: list[tuple[int, ...]] = [(d[0], d[1]), (d[0], d[2]), (d[1], d[2])] if len(d) == 3 else [tuple(d)]
        return [A.intern(A.KeepArtisans, tuple(ARTISANS[x].id for x in pr)) for pr in pairs]

    def _do_choose_character(self, a: A.ChooseCharacter) -> None:
        self._chosen_character[self._cur] = INDEX[a.card][1]
        self._ask(P_ARTISANS, self._cur)

    def _do_keep_artisans(self, a: A.KeepArtisans) -> None:
        self._kept_artisans[self._cur] = [INDEX[c][1] for c in a.cards]

    def _t_reveal(self) -> None:
        """All have chosen: Characters and Artisans are revealed; the unused
        Characters go to the box and the unused Artisans back into the deck."""
        self._revealed = True
        for s in range(self._num_seats):
            self._character[s] = self._chosen_character[s]
            self._character_box.extend(c for c in self._dealt_characters[s] if c != self._chosen_character[s])
            for x in self._kept_artisans[s]:
                self._add_slot(s, x)
            for x in self._dealt_artisans[s]:
                if x not in self._kept_artisans[s]:
                    self._deck[D_ARTISAN].append(x)
                    self._in_deck[D_ARTISAN][x] = 1
            self._deck[D_ARTISAN].sort()
        if self._solo and self._difficulty == "harder":
            self._allure[1] = [1] * 5  # Rulebook: "Solo Difficulties": 1 Allure of each

    def _add_slot(self, p: int, x: int) -> None:
        self._artisans[p].append(x)
        self._placed[p].append(False)
        self._tilted[p].append(False)
        self._artisan_locations[p].append(-1)

    # -- start of round ----------------------------------------------------------------------------
    def _t_start_round(self) -> None:
        """Rulebook: "Start of Round", steps 1-4, then placing Artisans, Garden Party, End of Round."""
        self._round += 1
        self._event = -1
        self._event_modifiers = {}
        np = self._num_players
        self._order = [(self._first_player + k) % np for k in range(np)]
        if self._solo:
            self._slide()
        seats = 2 if self._solo else self._num_seats
        best = max(self._prestige)
        k = seats + sum(1 for th in THRESHOLDS if best >= th)
        t: list[tuple[Any, ...]] = [("_t_fill_market",), ("_t_fill_display",)]
        t += [("_t_draw", D_VISITOR, ("visitor",))] * k
        if self._round >= 2:
            t.append(("_t_draw", D_EVENT, ("event",)))
        if self._solo:
            if self._difficulty in ("normal", "harder"):
                t.append(("_t_solo_allure",))
            t += [("_t_solo_player",), ("_t_automaton",)] if self._first_player == 0 else \
                [("_t_automaton",), ("_t_solo_player",)]
        else:
            self._turn_index = 0
            t.append(("_t_turn",))
        t += [("_t_party",), ("_t_end_round",)]
        self._push(t)

    def _t_fill_market(self) -> None:
        for i, x in enumerate(self._market):
            if x < 0:
                self._tasks.append(("_t_fill_market",))
                if not self._draw(D_FLOWER, ("market", i)):
                    self._tasks.pop()
                return

    def _t_fill_display(self) -> None:
        for i, x in enumerate(self._display):
            if x < 0:
                self._tasks.append(("_t_fill_display",))
                if not self._draw(D_FEATURE, ("display", i)):
                    self._tasks.pop()
                return

    def _t_turn(self) -> None:
        """Rulebook: "Artisans": clockwise from the First Player, 1 Artisan per turn; pass when none left."""
        np = self._num_players
        order = self._order
        for k in range(np):
            p = order[(self._turn_index + k) % np]
            if not all(self._placed[p]):
                self._turn_index = (self._turn_index + k + 1) % np
                self._tasks.append(("_t_turn",))
                self._ask(P_PLACE, p)
                return

    # -- state as data ------------------------------------------------------------------------------
    def clone(self) -> LaFleurState:
        """An independent copy sharing only immutable parts (game, card data, actions)."""
        new: LaFleurState = blank(LaFleurState, self.game)
        d = fields_of(self)
        for key, value in d.items():
            if isinstance(value, list):
                d[key] = [v[:] if isinstance(v, (list, bytearray)) else v for v in value]
            elif isinstance(value, (bytearray, dict)):
                d[key] = value.copy()
        d["_legal_cache"] = None
        set_fields(new, d)
        return new

    def resample_hidden(self, rng: random.Random, seat: int | None = None) -> LaFleurState:
        """A twin with the same information for ``seat`` and different hidden cards.

        Hidden from ``seat`` are the Flower cards in the deck and, unless seen
        face-up, in other hands (the solo opponent's included), the
        Characters and Artisans dealt to other seats while undecided or
        unused, and the box. With ``seat`` None only what *no* seat may see
        moves, so that every observation stays the same (the conformance
        test's contract). Those cards are permuted at random, type by type,
        through the whole history, which is then replayed (a permutation that
        does not replay is retried; after 10 tries a clone is returned).
        ``twin.observation(v)`` equals ``self.observation(v)`` for every
        viewer ``v``, and so do the legal actions when a viewer is to act; the
        state hash differs whenever a card moved.
        """
        twin = resample(self, rng, seat)
        if twin is None:
            return self.clone()
        assert isinstance(twin, LaFleurState)
        return twin


_LEGAL: Final[dict[int, Callable[[LaFleurState], list[Action]]]] = {
    P_CHARACTER: LaFleurState._legal_character,
    P_ARTISANS: LaFleurState._legal_artisans,
    P_OVER: lambda s: [],
    P_CHANCE: lambda s: [],
    **LEGAL_BUILDERS,
    **PARTY_LEGAL,
}
_DISPATCH: Final[dict[type[Action], Callable[[LaFleurState, Any], None]]] = {
    A.Draw: LaFleurState._do_draw,
    A.FirstPlayer: LaFleurState._do_first,
    A.ChooseCharacter: LaFleurState._do_choose_character,
    A.KeepArtisans: LaFleurState._do_keep_artisans,
    **TURN_DISPATCH,
    **PARTY_DISPATCH,
}
