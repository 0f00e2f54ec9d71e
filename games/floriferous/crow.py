"""The solo crow of Floriferous ("The Pesky Guest"): the Crow Action cards, the Cup of Tea, resolving the crow.

Rulebook: Floriferous, "The Pesky Guest (Solo Mode)": "Playing the Solo Game"
(a Crow Action card after each round but the last discards a card of the next
column and puts a face-down card or 1-2 Stones in its place), "Tossing Tea"
(the held Cup of Tea may be tossed to skip one crow), and "Resolving the Crow"
(at day end the crow's Stones go onto the Crow Card; the player may pay Stones
to take them off, and with 4 or more left must discard a collected card).

Handlers of :class:`games.floriferous.state.FloriferousState` (typed by
:class:`~games.floriferous.state_protocol.FloriferousStateProtocol`): each takes the
state and the action (already known to be legal), changes the state and
moves the flow on with the state's own steps. They read and write its fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from games.api import CHANCE
from games.floriferous import actions as A
from games.floriferous.cards import CARD_INDEX, CROW_ACTIONS, CROW_INDEX, CrowRow
from games.floriferous.phases import P_CROW, P_CROW_DEAL, P_DISCARD

if TYPE_CHECKING:
    from games.floriferous.state_protocol import FloriferousStateProtocol

_EMPTY: Final = -1


def do_reveal_crow(st: FloriferousStateProtocol, a: A.RevealCrow) -> None:
    """Chance: the Crow Action card ``a.crow`` is revealed and carried out.

    Rulebook: "Playing the Solo Game": discard the named row's card in the next
    column (its Stone to the supply), then place a face-down card from the
    matching deck or 1-2 Stones in the vacated space.
    """
    c = CROW_INDEX[a.crow]
    if not st._crow_deck:  # exhausted: the discard pile becomes the new deck
        st._crow_deck = sorted(st._crow_discard)
        st._crow_discard = []
    st._crow_deck.remove(c)
    st._crow_discard.append(c)
    st._crow_last = c
    crow = CROW_ACTIONS[c]
    ri = 0 if crow.row is CrowRow.TOP else 1 if crow.row is CrowRow.MIDDLE else st._num_rows - 1
    cell = ri * st._num_columns + st._round + 1
    st._supply += st._cell_stones[cell]
    st._card[cell] = _EMPTY
    st._face_down[cell] = False
    st._cell_stones[cell] = 0
    st._dealt_at[cell] = -1
    if crow.replacement == "stones":
        k = min(crow.stones, st._supply)
        st._cell_stones[cell] = k
        st._supply -= k
        st._next_round()
    elif st._desire_deck if cell >= st._desire_start else st._garden_deck:
        st._crow_target = cell
        st._phase = P_CROW_DEAL
    else:  # the matching deck is empty: the space stays empty
        st._next_round()


def do_tea(st: FloriferousStateProtocol, a: A.TossTea) -> None:
    """Decision: keep the Cup of Tea (the crow comes) or toss it (Rulebook: "Tossing Tea")."""
    if a.toss:  # back to the box, no crow this round
        st._tea_holder = -1
        st._tea_tossed = True
        st._next_round()
    else:
        st._phase = P_CROW
        st._cur = CHANCE


def do_pay(st: FloriferousStateProtocol, a: A.PayCrow) -> None:
    """Decision: pay ``a.stones`` Stones to take as many off the Crow Card (Rulebook: "Resolving the Crow", 2).

    Each paid Stone and the Stone it removes go back to the supply.
    """
    k = a.stones
    st._stones[0] -= k
    st._crow_card -= k
    st._supply += 2 * k
    crow_penalty(st)


def do_discard(st: FloriferousStateProtocol, a: A.DiscardCard) -> None:
    """Decision: discard a collected card to the crow; its Stones go back (Rulebook: "Resolving the Crow", 3)."""
    st._collections[0].remove(CARD_INDEX[a.card])
    st._supply += st._crow_card
    st._crow_card = 0
    st._after_day()


def crow_penalty(st: FloriferousStateProtocol) -> None:
    """With 4 or more Stones left on the Crow Card, the player must discard a card (Rulebook:
    "Resolving the Crow", step 3); with none to discard the Stones just go back. Then the day ends."""
    if st._crow_card >= 4:
        if st._collections[0]:
            st._phase = P_DISCARD
            st._cur = 0
            return
        st._supply += st._crow_card
        st._crow_card = 0
    st._after_day()
