"""Taxus, the solo opponent, as rules inside the state (docs/architecture.md, "games: the rules engines").

Rulebook: Flowar, "Do You Dare to Face Taxus Alone?": "Setup", "Round Setup",
"Round Overview", "Taxus Cards", "End of the Round", "End of the Game".

* Round setup: two Guild Tiles at random each round (chance), five Workers on
  each; Taxus, if first on the Turn Track, takes the higher number, else the
  one left. Then he gains MP equal to his tile's number, puts his five Workers
  in the Strike Area (strikes are checked: you may have to pay) and his tile
  goes to the Fellowship Petal (you may use its action for 1 Coin). His draw
  pile holds 5 cards.
* His turn: reveal a card (chance, uniform over the Taxus deck: drawing 5
  face-down cards and then revealing them one by one has the same law), take
  its Workers from the bag (from the Strike Area if the bag lacks them, which
  may call off a strike) onto its space, then take its action for free. With
  an empty draw pile he passes instead.
* Round end: he exchanges as many Coins as he can for MP at the round's rate
  (at most 10 MP) and keeps the rest; not after round 4 from rules revision 3
  ("End of the Game": "Do not perform the end of Round steps after Round 4";
  ``rounds._t_round_end``). Before round 3 every Taxus card goes back into the deck.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import trait

from games.flowar import actions as A
from games.flowar.cards import (
    CONTRACTS,
    EXCHANGE_MAX_MP,
    FLOWER_BASKETS,
    LOAN_COINS,
    MEANS_COST,
    TAXUS_CARDS,
    TAXUS_INDEX,
    exchange_rate,
)
from games.flowar.phases import C_TAXUS
from games.flowar.state_protocol import FlowarStateProtocol
from games.flowar.turn import LINE_SLOTS

DRAW_PILE: Final = 5
"""Taxus cards drawn each round (Rulebook: solo "Round Setup")."""


def contract_transport(c: int) -> int:
    """Coins Taxus gains for discarding Contract ``c``: its means' cost, or the
    dearest means of its kingdom (Rulebook: "Taxus Cards")."""
    con = CONTRACTS[c]
    if con.means >= 0:
        return MEANS_COST[con.means]
    return max(MEANS_COST[2 * con.kingdom], MEANS_COST[2 * con.kingdom + 1])


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class TaxusMixin(FlowarStateProtocol):
    """The solo automaton; mixed into :class:`games.flowar.state.FlowarState`."""

    def _t_taxus_setup(self: FlowarStateProtocol) -> bool:
        tx = self._taxus_seat
        self._taxus_mp += self._taxus_guild
        for t in range(3):
            self._strike_area[t] += self._taxus_worker_supply[t]
        self._taxus_worker_supply = [0, 0, 0]
        self._fellowship = self._taxus_guild
        self._order = sorted((0, tx), key=lambda s: self._taxus_guild if s == tx else self._guild[0])
        self._taxus_pile = DRAW_PILE
        self._taxus_passed = False
        self._push(*[("strike_check", t, -1, False) for t in range(3)])
        return False

    def _t_taxus_turn(self: FlowarStateProtocol) -> bool:
        if self._taxus_pile == 0:
            self._taxus_passed = True
            self._new_track.append(self._taxus_seat)
            self._push(("next_turn",))
            return False
        self._taxus_pile -= 1
        self._taxus_extra = False
        self._push(("next_turn",))
        return self._wait(C_TAXUS, -1)

    def _t_taxus_reveal(self: FlowarStateProtocol) -> bool:
        return self._wait(C_TAXUS, -1)

    def _do_reveal_taxus(self: FlowarStateProtocol, a: A.RevealTaxus) -> None:
        x = TAXUS_INDEX[a.taxus]
        self._taxus_deck.remove(x)
        self._taxus_discard.append(x)
        self._taxus_last = x
        card = TAXUS_CARDS[x]
        extra = self._taxus_extra
        self._taxus_extra = False
        if not extra:  # an extra card is only for its action
            self._taxus_workers(card.workers, card.space)
        kind = card.kind
        if kind == "market":
            gained = 0
            for slot in LINE_SLOTS[1][card.line]:
                f = self._market[slot]
                if f >= 0:
                    gained += FLOWER_BASKETS[f]
                    self._flower_discard.append(f)
                    self._market[slot] = -1
            self._taxus_coins += gained
            self._push(("market", False))
        elif kind == "travel":
            self._taxus_mp += 2 * self._efficiency[card.kingdom]
        elif kind == "contracts":
            gained = 0
            for slot in LINE_SLOTS[0][card.line]:
                c = self._contract_grid[slot]
                if c >= 0:
                    gained += contract_transport(c)
                    self._contract_discard.append(c)
                    self._contract_grid[slot] = -1
            self._contract_deck_out()
            self._taxus_coins += gained
            self._push(("contracts_fill",))
        elif kind == "torch_and_reveal":
            if self._taxus_torches:
                self._taxus_torches -= 1
            if self._taxus_deck:
                self._taxus_extra = True
                self._push(("taxus_reveal",))
        elif kind == "loan":
            self._taxus_loans += 1
            self._taxus_coins += LOAN_COINS
            self._taxus_torches += self._torches_from_supply(1)
        else:  # torches
            self._taxus_torches += self._torches_from_supply(card.torches)

    def _taxus_workers(self: FlowarStateProtocol, workers: tuple[int, int, int], space: str) -> None:
        """Take the card's Workers from the bag (else the Strike Area) onto its space."""
        travel = 0
        for t in range(3):
            for _ in range(workers[t]):
                if self._bag[t]:
                    self._bag[t] -= 1
                elif self._strike_area[t]:
                    self._strike_area[t] -= 1
                    self._strike_off(t, -1)
                else:
                    continue
                if space == "market":
                    self._spaces[1][t] += 1
                elif space == "contract":
                    self._spaces[0][t] += 1
                elif space == "every_kingdom":
                    self._spaces[2 + travel % 3][t] += 1
                    travel += 1
                else:  # travel_K1..K3
                    self._spaces[1 + int(space[-1])][t] += 1

    def _taxus_exchange(self: FlowarStateProtocol) -> None:
        """Solo "End of the Round": "Taxus will obtain as many MP as possible by exchanging the Coins
        he gained during that Round" (at most 10 MP, decision 22); the rest is saved."""
        rate = exchange_rate(self._round)
        mp = min(EXCHANGE_MAX_MP, self._taxus_coins // rate)
        self._taxus_coins -= mp * rate
        self._taxus_mp += mp
