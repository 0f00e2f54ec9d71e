"""Greedy La Fleur strategy: each decision takes the action with the best estimated value.

Values are in Prestige-equivalents (1 Prestige = 2 Coins = about one useful
Flower card), judged from visible information only: the seat's observation
dict (``LaFleurObservation``) and the legal actions' JSON. Card data and the
pure payment test come from the ``games.lafleur`` package, as any bot may use
it.

Heuristics, per decision kind:

* placing: Prestige 1; Coin 2 Coins; Flower Market the best card's use minus
  its price; Garden Features the best affordable Garden Feature (Allure that
  wins Visitors, its ability) minus the Flower cards it will cost; Artisan
  Guild a new Artisan while enough rounds remain; Special Invitation a tied
  Visitor or a Companion. An Artisan on its own ability location adds the
  ability's value.
* paying: the cheapest resource first (ability, Artisan, plain card, Wild, pair).
* effects: take the most useful Flower card; accept a conversion worth more
  than its price; discard the least useful card.

Ties go to the first action in the referee's order, so play is deterministic.
"""

from __future__ import annotations

from typing import Any

from bots.strategies.choice import first_best, forced
from games.lafleur.cards import (
    ALLURE,
    ARTISANS,
    CHARACTERS,
    FEATURES,
    FLOWERS,
    INDEX,
    L_WILD,
    LOCATIONS,
    VISITORS,
)
from games.lafleur.payment import payable

__all__ = ["greedy_choice", "Evaluator"]

COIN = 0.45
"""Value of 1 Coin in Prestige."""
CARD = 0.5
"""Base value of a Flower card in hand."""
SOIREE = 12


def _card(card_id: str) -> Any:
    d, x = INDEX[card_id]
    return (FLOWERS, FEATURES, VISITORS, ARTISANS, CHARACTERS)[d][x] if d < 5 else None


class Evaluator:
    """Estimates for one seat from its observation.

    Args:
        observation: the seat's ``LaFleurObservation`` dict.
        seat: the deciding seat.
    """

    def __init__(self, observation: dict[str, Any], seat: int) -> None:
        self.obs = observation
        self.seat = seat
        players = observation["players"]
        self.me = players[seat]
        self.others = [p for i, p in enumerate(players) if i != seat]
        self.allure = [self.me["allure"][t] for t in ALLURE]
        self.best_other = [max((p["allure"][t] for p in self.others), default=0) for t in ALLURE]
        self.coins = int(self.me["coins"])
        self.hand = [INDEX[c][1] for c in self.me["hand"]]
        self.lays = tuple(sorted(FLOWERS[x].layout for x in self.hand))
        self.arts = [0] * 5
        for a in self.me["artisans"]:
            if not a["tilted"]:
                self.arts[ARTISANS[INDEX[a["card"]][1]].allure] += 1
        lead = max(p["prestige"] for p in players)
        self.rounds_left = 1 if observation["grande_soiree"] else max(1.0, (SOIREE - lead) / 2.5 + 1)
        # Demand for each Allure type: symbols of the face-up Garden Features.
        self.demand = [0.0] * 5
        for sp in observation["garden_features"]:
            if sp["card"]:
                for t in FEATURES[INDEX[sp["card"]][1]].cost:
                    self.demand[t] += 1
        self.visitor_types = [0] * 5
        for v in observation["visitors"]:
            t = VISITORS[INDEX[v["card"]][1]].allure
            if t >= 0:
                self.visitor_types[t] += 1

    # -- values -------------------------------------------------------------------------
    def gain_value(self, gain: dict[str, int]) -> float:
        """Value of ``{"prestige", "coins", "flowers"}`` now."""
        return gain.get("prestige", 0) + COIN * gain.get("coins", 0) + CARD * gain.get("flowers", 0)

    def effect_value(self, effect: dict[str, Any]) -> float:
        """Rough value of a Visitor or ability effect for this seat."""
        if "pay" in effect:
            pay = effect["pay"]
            cost = COIN * pay.get("coins", 0) + CARD * pay.get("flowers", 0)
            afford = self.coins >= pay.get("coins", 0) and len(self.hand) >= pay.get("flowers", 0)
            return max(0.0, self.gain_value(effect["gain"]) - cost) if afford else 0.0
        if "gain" in effect:
            v = self.gain_value(effect["gain"])
            return v * 1.5 if "per" in effect else v
        if "choice" in effect:
            return max(self.effect_value(e) for e in effect["choice"])
        return 0.2

    def flower_value(self, x: int) -> float:
        """Use of Flower card ``x`` for buying the face-up Garden Features."""
        card = FLOWERS[x]
        if card.layout == L_WILD:
            return CARD + 0.25
        return CARD - 0.15 + sum(0.12 * min(self.demand[t], 3) for t in card.symbols)

    def allure_value(self, t: int, k: int) -> float:
        """Value of +k Allure of type t (Visitors won, romance reach)."""
        mine, other = self.allure[t], self.best_other[t]
        v = 0.3 * k
        if mine <= other < mine + k:
            v += 0.6 * (1 + self.visitor_types[t])
        if mine < 5 <= mine + k and not self.me["companion"]:
            v += 0.5
        return v * min(1.0, self.rounds_left / 2)

    def feature_value(self, x: int) -> float:
        """Value of owning Garden Feature ``x`` (its Allure and its ability)."""
        f = FEATURES[x]
        v = sum(self.allure_value(t, f.counts[t]) for t in range(5) if f.counts[t])
        ab = f.ability
        eff = ab.effect
        if ab.timing == "when_acquired":
            v += self.effect_value(eff)
        elif ab.timing == "end_of_round":
            v += 0.6 * self.effect_value(eff) * self.rounds_left
        elif ab.timing == "when_visited":
            v += 0.3 * self.rounds_left if "gain" in eff else 0.4
        else:  # game end
            v += 0.6 * self.gain_value(eff.get("gain", {})) * (1.5 if "per" in eff else 1.0)
        return v

    def affordable(self, x: int, free: int = 0) -> bool:
        """Can this seat pay Garden Feature ``x`` now?"""
        return payable(FEATURES[x].counts, self.lays, tuple(self.arts), free)

    def payment_cost(self, x: int) -> float:
        """Rough value of the Flower cards a purchase of ``x`` uses up."""
        owed = sum(max(0, n - a) for n, a in zip(FEATURES[x].counts, self.arts, strict=True))
        return 0.4 * owed

    def visitor_value(self, card_id: str) -> float:
        return self.effect_value(VISITORS[INDEX[card_id][1]].effect)

    # -- per location ------------------------------------------------------------------
    def best_feature(self) -> float:
        best = -0.5
        for sp in self.obs["garden_features"]:
            if sp["card"]:
                x = INDEX[sp["card"]][1]
                if self.affordable(x):
                    best = max(best, self.feature_value(x) - self.payment_cost(x))
        return best

    def best_flower(self, discount: int = 0) -> float:
        best = -1.0
        for sp in self.obs["market"]:
            if sp["card"]:
                x = INDEX[sp["card"]][1]
                price = max(0, FLOWERS[x].cost - discount)
                if price <= self.coins:
                    best = max(best, self.flower_value(x) - COIN * price)
        if self.coins >= 1 and self.obs["flower_deck"]:
            best = max(best, CARD - COIN)
        return best

    def best_invitation(self) -> float:
        best = -0.5
        my = self.seat
        for v in self.obs["visitors"]:
            if v["pawn"] >= 0:
                continue
            vis = VISITORS[INDEX[v["card"]][1]]
            val = self.effect_value(vis.effect)
            if vis.allure >= 0:
                mine, other = self.allure[vis.allure], self.best_other[vis.allure]
                if mine == other:
                    best = max(best, val)
                if mine >= 5 and mine >= other and not self.me["companion"]:
                    # a second romancing pawn is a hedge: it pays only if the first Visitor goes elsewhere
                    hedge = 0.5 if self.me["romancing"] else 1.0
                    best = max(best, hedge * val * (0.6 * self.rounds_left + 1))
            elif my >= 0:
                best = max(best, 0.3 * val)
        return best

    def location_value(self, location: str, artisan: str) -> float:
        art = ARTISANS[INDEX[artisan][1]]
        ab = art.ability if LOCATIONS[art.location] == location else {}
        bonus = self.gain_value(ab.get("gain", {})) if ab else 0.0
        if location == "prestige":
            return 1.0 + bonus
        if location == "coin":
            return 2 * COIN + bonus - 0.05
        if location == "flower_market":
            extra = 0.3 if ab.get("second_purchase") else 0.0
            return self.best_flower(ab.get("market_discount", 0)) + extra
        if location == "garden_features":
            return self.best_feature() + (0.3 if ab.get("free_allure") else 0.0)
        if location == "artisan_guild":
            cost = ab.get("hire_cost", 8)
            if len(self.me["artisans"]) < 4 and self.coins >= cost:
                return float(0.9 * (self.rounds_left - 1) - COIN * cost)
            return -1.0
        return self.best_invitation() + bonus

    # -- one action --------------------------------------------------------------------
    def value(self, a: dict[str, Any]) -> float:
        """Estimated value of one legal action (its JSON form)."""
        kind = a["kind"]
        if kind == "place":
            return self.location_value(a["location"], a["artisan"])
        if kind in ("buy_flower", "take_flower"):
            if not a["card"]:
                return CARD - (COIN if kind == "buy_flower" else 0.0)
            x = INDEX[a["card"]][1]
            price = FLOWERS[x].cost if kind == "buy_flower" else 0
            return self.flower_value(x) - COIN * price
        if kind == "buy_feature":
            x = INDEX[a["card"]][1]
            return self.feature_value(x) - self.payment_cost(x)
        if kind == "reveal_feature":
            return 0.0 if self.best_feature() <= 0 and self.coins >= 2 else -0.5
        if kind == "done":
            return -0.01
        if kind == "pay_discount":
            return 1.0
        if kind == "pay_artisan":
            return 0.9
        if kind == "pay_flower":
            x = INDEX[a["card"]][1]
            return 0.5 - self.flower_value(x) + (0.2 if len(FLOWERS[x].symbols) == 2 else 0.0)
        if kind == "pay_pair":
            return -0.6
        if kind in ("pair_card", "discard_flower"):
            return -self.flower_value(INDEX[a["card"]][1])
        if kind == "invite":
            val = self.visitor_value(a["visitor"])
            return val * (0.6 * self.rounds_left + 1) if a["romance"] else val
        if kind == "hire_artisan":
            return 1.0
        if kind == "replace_artisan":
            return 0.5
        if kind == "swap_artisan":
            return 0.0 if not a["artisan"] else -0.1
        if kind == "accept":
            return self.accept_value() if a["accept"] else 0.0
        if kind == "choose":
            prompt = self.obs["prompt"]
            text = prompt["options"][a["option"]]
            if prompt["kind"] == "order":  # Garden Party order: gains first, conversions ("pay ...") last
                return 0.5 if "pay " in text else 1.0 - a["option"] * 0.01
            return 1.0 if "Prestige" in text else 0.8
        if kind == "choose_character":
            return -CHARACTERS[INDEX[a["card"]][1]].index * 0.001
        if kind == "keep_artisans":
            return sum(self.artisan_value(c) for c in a["cards"])
        return 0.0

    def accept_value(self) -> float:
        prompt = self.obs["prompt"]
        if prompt["kind"] == "character":
            return 1.0
        text = prompt["text"]
        if "Flower cards to" in text and len(self.hand) < 4:
            return -0.1
        return 0.5

    @staticmethod
    def artisan_value(card_id: str) -> float:
        ab = ARTISANS[INDEX[card_id][1]].ability
        if "gain" in ab:
            return 0.45
        if "free_allure" in ab or "second_purchase" in ab:
            return 0.4
        return 0.2


def greedy_choice(observation: dict[str, Any], legal_actions: list[dict[str, Any]], seat: int) -> int:
    """Index of the legal action with the best estimated value for ``seat``.

    Args:
        observation: the seat's observation (``LaFleurObservation`` dict).
        legal_actions: the legal actions' JSON dicts, in the referee's order.
        seat: the deciding seat.

    Returns:
        An index into ``legal_actions``; the first of equally good actions.

    Raises:
        ValueError: ``legal_actions`` is empty.
    """
    only = forced(legal_actions)
    if only is not None:
        return only
    ev = Evaluator(observation, seat)
    return first_best(ev.value(action) for action in legal_actions)
