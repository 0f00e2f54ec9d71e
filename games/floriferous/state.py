"""The Floriferous game state: setup, the deal, turns, day end; the State hooks.

The solo crow's handlers live in :mod:`games.floriferous.crow`; final scoring,
the state as data and hidden-card twins in :mod:`games.floriferous.summary`.

Rulebook: Floriferous, "Game Setup", "Playing the Game", "Day End, Cleanup,
and Bounty Cards", "Begin a New Day", "Game End", "Final Scoring" and "The
Pesky Guest (Solo Mode)".

Sequence of a match (C marks a chance node):

1. C: three Bounty cards revealed one by one (uniform over the rest of the nine).
2. C: the starting player (multiplayer only; in solo the player starts).
3. Each day: C: every garden space dealt from its deck, row by row from the
   top, each row in visiting order (face-down spaces included; their identity
   is in the state, never in an observation). Then rounds: each seat in pawn
   order top to bottom takes a card in the next column (or, solo, scatters crow
   Stones). Solo, after each round but the last: the tea decision (while the
   Cup of Tea is held), C: the Crow Action card, and C: the face-down card it
   places. Day end: Bounties, cleanup; solo: resolving the crow (pay, discard).
4. After day 3: Cup of Tea, final scoring, outcome.

Decks are sorted lists of card indexes (sets: their order does not exist);
a deal is uniform over what remains.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from games.api import CHANCE, TERMINAL, Action, Game, Outcome, State
from games.floriferous import actions as A
from games.floriferous import crow, summary
from games.floriferous.cards import (
    BOUNTIES,
    BOUNTY_INDEX,
    BOUNTY_MATCH,
    CARD_IDS,
    CARD_INDEX,
    CROW_ACTIONS,
    CROW_INDEX,
    DESIRE_CARDS,
    FIRST_DESIRE,
    GARDEN_CARDS,
    NUM_CARDS,
    SOLO_GARDEN_CARDS,
)
from games.floriferous.layout import layout_for
from games.floriferous.observation import build_observation
from games.floriferous.phases import (
    DAYS,
    P_BOUNTY,
    P_CROW,
    P_CROW_DEAL,
    P_DEAL,
    P_DISCARD,
    P_OVER,
    P_PAY,
    P_START,
    P_TEA,
    P_TURN,
)
from games.floriferous.scoring import (
    bounty_met_ix,
    tea_winner,
)
from games.floriferous.state_protocol import FloriferousStateProtocol
from games.framework import StateHotPath
from games.native import blank, fields_of, set_fields
from games.trusted import below

TOTAL_STONES: Final = 24
"""Stones in the box (Rulebook: "Contents")."""

_EMPTY: Final = -1
_CHANCE_PHASES: Final = frozenset((P_BOUNTY, P_START, P_DEAL, P_CROW, P_CROW_DEAL))


class FloriferousState(StateHotPath, FloriferousStateProtocol, State):
    """A position of a Floriferous match (see the module docstring for the flow).

    Only the hooks of :class:`games.api.State` are public behaviour; the extra
    public method :meth:`resample_hidden` serves the conformance tests.
    """

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        lay = layout_for(game.num_players, bool(game.options["extended"]))  # the FloriferousGame's layout
        n = game.num_players
        self._num_players = n
        self._solo = n == 1
        self._competitive = bool(game.options["competitive_bounties"])
        self._layout = lay
        self._num_rows = lay.num_rows
        self._num_columns = lay.columns
        cells = lay.cells
        self._desire_start = lay.desire_index * lay.columns  # first cell of the Desire row
        self._row_index = lay.row_index
        self._stone_at = lay.stone
        # per column: (cell, TakeCard table base of its row) for every row, top first
        self._column_cells = [
            [(ri * lay.columns + c, lay.rows[ri] * _TAKE_STRIDE) for ri in range(lay.num_rows)]
            for c in range(lay.columns)
        ]
        # garden: flat per cell (row_index * columns + column_index, visiting order)
        self._card = [_EMPTY] * cells
        self._face_down = [False] * cells
        self._cell_stones = [0] * cells
        self._dealt_at = [-1] * cells  # history index of the deal that filled the cell
        # decks: sorted lists of card indexes, plus membership flags
        garden = SOLO_GARDEN_CARDS if self._solo else GARDEN_CARDS
        self._garden_deck = list(garden)
        self._desire_deck = list(DESIRE_CARDS)
        indeck = bytearray(NUM_CARDS)
        for x in garden:
            indeck[x] = 1
        for x in DESIRE_CARDS:
            indeck[x] = 1
        self._in_deck = indeck
        # bounties
        self._bounty_pool = list(range(len(BOUNTIES)))
        self._bounties: list[int] = []
        self._bounty_columns: list[list[list[int]]] = []  # [bounty position][day column] -> seats
        self._bounties_done = [0] * n  # bitmask of bounty positions a seat completed (or lost, competitive)
        # players
        self._collections: list[list[int]] = [[] for _ in range(n)]
        self._stones = [0] * n
        self._supply = TOTAL_STONES
        self._pawn_row = [lay.pawn_rows[0]] * n if n == 1 else [0] * n
        self._pawn_column = [-1] * n
        # day / round / turn
        self._day = 0
        self._round = 0
        self._order: list[int] = []
        self._turn_index = 0
        self._queue: list[int] = []
        self._deal_index = 0
        # tea and crow
        self._tea_holder = 0 if self._solo else -1
        self._tea_tossed = False
        self._crow_deck: list[int] = list(range(len(CROW_ACTIONS))) if self._solo else []
        self._crow_discard: list[int] = []
        self._crow_last = -1
        self._crow_card = 0
        self._crow_target = -1
        self._result: Outcome | None = None
        self._phase = P_BOUNTY
        self._cur = CHANCE

    def _chance_seq(self) -> list[int]:
        """Outcome indexes of the current chance node, in the canonical order."""
        ph = self._phase
        if ph == P_DEAL:
            return self._desire_deck if self._queue[self._deal_index] >= self._desire_start else self._garden_deck
        if ph == P_CROW_DEAL:
            return self._desire_deck if self._crow_target >= self._desire_start else self._garden_deck
        if ph == P_BOUNTY:
            return self._bounty_pool
        if ph == P_START:
            return list(range(self._num_players))
        if ph == P_CROW:
            return self._crow_deck or sorted(self._crow_discard)
        raise AssertionError("not a chance node")

    def _chance_table(self) -> tuple[Action, ...]:
        ph = self._phase
        if ph in (P_DEAL, P_CROW_DEAL):
            return A.DEAL
        if ph == P_BOUNTY:
            return A.REVEAL_BOUNTY
        if ph == P_START:
            return A.START
        return A.REVEAL_CROW

    def _chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        seq = self._chance_seq()
        table = self._chance_table()
        p = Fraction(1, len(seq))
        return [(table[i], p) for i in seq]

    def _sample_chance(self, rng: random.Random) -> Action:
        # Same draw as the default (uniform: outcomes[rng.randrange(len)], drawn by trusted.below), without Fractions.
        if self._phase == P_DEAL:
            seq = self._desire_deck if self._queue[self._deal_index] >= self._desire_start else self._garden_deck
            return _DEAL_TABLE[seq[below(rng, len(seq))]]
        seq = self._chance_seq()
        return self._chance_table()[seq[below(rng, len(seq))]]

    def _is_legal(self, action: Action) -> bool:
        if self._cur == CHANCE:
            ph = self._phase
            if type(action) is A.DealCard:
                if ph == P_DEAL:
                    cell = self._queue[self._deal_index]
                elif ph == P_CROW_DEAL:
                    cell = self._crow_target
                else:
                    return False
                x = CARD_INDEX.get(action.card)
                if x is None or not self._in_deck[x]:
                    return False
                return (x >= FIRST_DESIRE) == (cell >= self._desire_start)
            if type(action) is A.RevealBounty:
                b = BOUNTY_INDEX.get(action.bounty)
                return ph == P_BOUNTY and b is not None and b in self._bounty_pool
            if type(action) is A.ChooseStartPlayer:
                s = action.seat
                return ph == P_START and 0 <= s < self._num_players
            if type(action) is A.RevealCrow:
                c = CROW_INDEX.get(action.crow)
                return ph == P_CROW and c is not None and c in (self._crow_deck or self._crow_discard)
            return False
        if type(action) is A.TakeCard and self._phase == P_TURN:
            # Fast path: the named space holds exactly the card (or a face-down card) and Stones named.
            ri = self._row_index[action.row]
            if ri < 0:
                return False
            cell = ri * self._num_columns + self._round
            x = self._card[cell]
            if x < 0 or action.stones != self._cell_stones[cell]:
                return False
            return action.card == ("" if self._face_down[cell] else CARD_IDS[x])
        cache = self._legal_cache
        if cache is None:
            cache = self._legal_actions()
        return action in cache

    def _legal_actions(self) -> list[Action]:
        ph = self._phase
        if ph == P_TURN:
            c = self._round
            card = self._card
            st = self._cell_stones
            fd = self._face_down
            table = _TAKE_TABLE
            out: list[Action] = []
            for cell, base in self._column_cells[c]:
                x = card[cell]
                if x >= 0:
                    k = st[cell]
                    if k < 2:
                        # TAKE_TABLE holds a TakeCard at every index of rows 1..5 (row 0 is None)
                        # the type: ignore below: the table is list[TakeCard | None]; see the comment above
                        out.append(table[(base + (0 if fd[cell] else x + 1)) * 2 + k])  # type: ignore[arg-type]
                    else:
                        out.append(A.take(base // _TAKE_STRIDE, -1 if fd[cell] else x, k))
                elif st[cell]:
                    out.append(A.scatter(base // _TAKE_STRIDE, st[cell]))
            if not out:
                rows = self._layout.rows
                taken = {self._pawn_row[s] for s in range(self._num_players) if self._pawn_column[s] == c}
                out = [A.MOVE_EMPTY[rows[ri]] for ri in range(self._num_rows) if ri not in taken]  # type: ignore[misc]  # rows are 1..5: never MOVE_EMPTY[0] (None)
            return out
        if ph == P_TEA:
            return [A.KEEP, A.TOSS]
        if ph == P_PAY:
            return list(A.PAY[: min(self._stones[0], self._crow_card) + 1])
        if ph == P_DISCARD:
            return [A.DISCARD[x] for x in sorted(set(self._collections[0]))]
        return []

    def _apply(self, action: Action) -> None:
        _DISPATCH[type(action)](self, action)

    def _view(self, seat: int | None) -> dict[str, Any]:
        return build_observation(self, seat)

    def _outcome(self) -> Outcome:
        if self._result is None:
            self._result = summary.score(self)
        return self._result

    def _full_state(self) -> dict[str, Any]:
        return summary.full_state(self)

    def bounty_points(self) -> list[int]:
        """Bounty points per seat from the Flower Tokens placed so far (victory points)."""
        return summary.bounty_points(self)

    def resample_hidden(self, rng: random.Random) -> FloriferousState:
        """A twin with the same public information and other hidden cards, replayed from the history
        :func:`games.floriferous.summary.resampled_history` gives (docs/faults.md F-20: every observation and
        legal action equal this state's; the state hash differs when something was swapped); a clone
        when nothing is hidden in the garden."""
        history = summary.resampled_history(self, rng)
        if history is None:
            return self.clone()
        twin = FloriferousState(self.game)
        for a in history:
            twin.apply_action(a)
        return twin

    # -- chance actions ------------------------------------------------------------------
    def _do_reveal_bounty(self, a: A.RevealBounty) -> None:
        b = BOUNTY_INDEX[a.bounty]
        self._bounty_pool.remove(b)
        self._bounties.append(b)
        self._bounty_columns.append([[] for _ in range(DAYS)])
        if len(self._bounties) == 3:
            if self._solo:
                self._begin_day()
            else:
                self._phase = P_START

    def _do_start(self, a: A.ChooseStartPlayer) -> None:
        # Rulebook: "Game Setup", steps 7-8: the starting player's pawn goes to the
        # top Garden row, then clockwise (increasing seat) to the next Garden rows.
        n = self._num_players
        for k in range(n):
            self._pawn_row[(a.seat + k) % n] = self._layout.pawn_rows[k]
        self._begin_day()

    def _do_deal(self, a: A.DealCard) -> None:
        x = CARD_INDEX[a.card]
        (self._desire_deck if x >= FIRST_DESIRE else self._garden_deck).remove(x)
        self._in_deck[x] = 0
        if self._phase == P_DEAL:
            qi = self._deal_index
            cell = self._queue[qi]
            self._card[cell] = x
            self._dealt_at[cell] = len(self.history)
            if self._stone_at[cell] and self._supply:
                self._cell_stones[cell] = 1
                self._supply -= 1
            self._deal_index = qi = qi + 1
            if qi < len(self._queue) and (
                    self._garden_deck if self._queue[qi] < self._desire_start else self._desire_deck):
                return  # common case: the next space can be dealt
            self._advance_deal()
        else:
            cell = self._crow_target
            self._card[cell] = x
            self._face_down[cell] = True
            self._dealt_at[cell] = len(self.history)
            self._crow_target = -1
            self._next_round()

    # -- decisions -------------------------------------------------------------------------
    def _do_take(self, a: A.TakeCard) -> None:
        seat = self._cur
        ri = self._row_index[a.row]
        c = self._round
        cell = ri * self._num_columns + c
        x = self._card[cell]
        self._collections[seat].append(x)
        st = self._cell_stones
        if st[cell]:
            self._stones[seat] += st[cell]
            st[cell] = 0
        self._card[cell] = _EMPTY
        self._face_down[cell] = False
        self._dealt_at[cell] = -1
        self._pawn_row[seat] = ri
        self._pawn_column[seat] = c
        if self._competitive:
            self._competitive_bounties(seat, x)
        ti = self._turn_index + 1
        if ti < len(self._order):  # common case: the next seat of this round
            self._turn_index = ti
            self._cur = self._order[ti]
        else:
            self._next_turn()

    def _do_scatter(self, a: A.ScatterStones) -> None:
        # Rulebook: "Scattering Stones": return them to the supply, take no card.
        seat = self._cur
        ri = self._layout.row_index[a.row]
        cell = ri * self._num_columns + self._round
        self._supply += self._cell_stones[cell]
        self._cell_stones[cell] = 0
        self._pawn_row[seat] = ri
        self._pawn_column[seat] = self._round
        self._next_turn()

    def _do_move_empty(self, a: A.MoveToEmpty) -> None:
        seat = self._cur
        self._pawn_row[seat] = self._layout.row_index[a.row]
        self._pawn_column[seat] = self._round
        self._next_turn()

    # -- flow -------------------------------------------------------------------------------
    def _begin_day(self) -> None:
        """Lay out a new garden (Rulebook: "Begin a New Day"); pawns keep their rows."""
        self._round = 0
        self._pawn_column = [-1] * self._num_players
        self._face_down = list(self._layout.face_down)
        self._queue = list(range(self._layout.cells))
        self._deal_index = 0
        self._phase = P_DEAL
        self._cur = CHANCE
        self._advance_deal()

    def _advance_deal(self) -> None:
        queue = self._queue
        last = self._desire_start
        while self._deal_index < len(queue):
            if self._desire_deck if queue[self._deal_index] >= last else self._garden_deck:
                return
            self._face_down[queue[self._deal_index]] = False  # deck ran dry: the space stays empty
            self._deal_index += 1
        self._start_round()

    def _start_round(self) -> None:
        # Rulebook: "Playing the Game": going from top to bottom, each player takes a turn.
        prow = self._pawn_row
        self._order = sorted(range(self._num_players), key=prow.__getitem__)
        self._turn_index = 0
        self._phase = P_TURN
        self._cur = self._order[0]

    def _next_turn(self) -> None:
        self._turn_index += 1
        if self._turn_index < len(self._order):
            self._cur = self._order[self._turn_index]
        elif self._solo and self._round < self._num_columns - 1:
            # No Crow Action card after the last round of the day.
            if self._tea_holder == 0:
                self._phase = P_TEA
                self._cur = 0
            else:
                self._phase = P_CROW
                self._cur = CHANCE
        else:
            self._next_round()

    def _next_round(self) -> None:
        self._round += 1
        if self._round == self._num_columns:
            self._end_day()
        else:
            self._start_round()

    def _end_day(self) -> None:
        """Bounties, then cleanup (Rulebook: "Day End, Cleanup, and Bounty Cards")."""
        day = self._day
        if not self._competitive:
            for seat in range(self._num_players):
                done = self._bounties_done[seat]
                coll = self._collections[seat]
                for pos, b in enumerate(self._bounties):
                    if not done >> pos & 1 and bounty_met_ix(b, coll):
                        done |= 1 << pos
                        self._bounty_columns[pos][day].append(seat)
                self._bounties_done[seat] = done
        card = self._card
        st = self._cell_stones
        for cell in range(len(card)):
            if st[cell]:
                if card[cell] < 0:  # crow Stones: onto the Crow Card (Rulebook: "Resolving the Crow", 1)
                    self._crow_card += st[cell]
                else:
                    self._supply += st[cell]
        cells = len(card)
        self._card = [_EMPTY] * cells
        self._cell_stones = [0] * cells
        self._face_down = [False] * cells
        self._dealt_at = [-1] * cells
        if self._solo:
            if self._crow_card and self._stones[0]:
                self._phase = P_PAY
                self._cur = 0
                return
            crow.crow_penalty(self)
        else:
            self._after_day()

    def _after_day(self) -> None:
        if self._day == DAYS - 1:
            self._phase = P_OVER
            self._cur = TERMINAL
            if not self._solo:
                self._tea_holder = tea_winner(self._stones, self._pawn_row)
            return
        self._day += 1
        self._begin_day()

    def _competitive_bounties(self, seat: int, x: int) -> None:
        """Rulebook: "Competitive Alternative": a token goes on the moment the
        requirements are met, into the first free column from today's on; with
        no free column the Bounty no longer scores for this seat."""
        done = self._bounties_done[seat]
        for pos, b in enumerate(self._bounties):
            # A newly met Bounty must use the card just taken.
            if done >> pos & 1 or not BOUNTY_MATCH[b][x]:
                continue
            if bounty_met_ix(b, self._collections[seat]):
                done |= 1 << pos
                cols = self._bounty_columns[pos]
                for d in range(self._day, DAYS):
                    if not cols[d]:
                        cols[d].append(seat)
                        break
        self._bounties_done[seat] = done

    def clone(self) -> FloriferousState:
        """An independent copy sharing only immutable parts (game, layout, actions)."""
        new: FloriferousState = blank(FloriferousState, self.game)
        d = fields_of(self)
        for name in _LIST_FIELDS:
            d[name] = d[name][:]
        d["_in_deck"] = bytearray(self._in_deck)
        d["_collections"] = [c[:] for c in self._collections]
        d["_bounty_columns"] = [[s[:] for s in cols] for cols in self._bounty_columns]
        d["history"] = self.history[:]
        d["_legal_cache"] = None
        set_fields(new, d)
        return new



_TAKE_TABLE: Final = A.TAKE_TABLE
_TAKE_STRIDE: Final = A.TAKE_STRIDE
_DEAL_TABLE: Final = A.DEAL

_LIST_FIELDS: Final = (
    "_card", "_face_down", "_cell_stones", "_dealt_at", "_garden_deck", "_desire_deck", "_bounty_pool", "_bounties",
    "_bounties_done",
    "_stones", "_pawn_row", "_pawn_column", "_order", "_queue", "_crow_deck", "_crow_discard",
)

_DISPATCH: Final[dict[type[Action], Callable[[FloriferousState, Any], None]]] = {
    A.RevealBounty: FloriferousState._do_reveal_bounty,
    A.ChooseStartPlayer: FloriferousState._do_start,
    A.DealCard: FloriferousState._do_deal,
    A.RevealCrow: crow.do_reveal_crow,
    A.TakeCard: FloriferousState._do_take,
    A.ScatterStones: FloriferousState._do_scatter,
    A.MoveToEmpty: FloriferousState._do_move_empty,
    A.TossTea: crow.do_tea,
    A.PayCrow: crow.do_pay,
    A.DiscardCard: crow.do_discard,
}

