"""A second, independent model of La Fleur's decision rules (differential testing).

Written from the La Fleur rulebook, the decisions in
``docs/rules/la-fleur.md`` and the card data (``games/lafleur/cards.json``,
read here as plain JSON), not from the engine: it shares no code with
``games/lafleur`` and is deliberately simple and slow (payment feasibility is
a brute-force search). Given what the acting seat sees (its observation) and
the public action stream of the match (which Artisan was placed last, how many
Flower cards it bought there), :func:`legal_actions` lists the actions the
rules allow, as canonical JSON strings; ``tests/games/test_lafleur_reference.py``
compares them with the engine at every decision of seeded random games.

Rules used, by decision (rulebook section; decision number in the docs):

* place (Artisans, Locations; decision 7): each Artisan not yet placed, at
  Coin always; Prestige once per round; Flower Market if a card can be
  bought with the Coins held; Artisan Guild if an Artisan card is left and
  hiring (8 Coins, at most 4 Artisans) or replacing (4) is affordable;
  Special Invitation if a Visitor has no pawn; Garden Features if a card is
  face-up or one can be revealed (an empty space, a card left, 1 Coin). An
  Artisan's ability counts only on its own ability location.
* flower_market (Flower Market): each face-up card at its price (2 Allure: 2,
  Wild: 1, 1 Allure: 0, minus discounts, at least 0) and the deck (1 Coin)
  if affordable; after a first purchase (a second-purchase ability) also done.
* garden_features (Garden Features; decision 8): reveal (empty space, card
  left, 1 Coin unless free), buy each face-up card that can be paid in full,
  done always.
* pay / pair (Purchasing a Garden Feature; decision 9): one symbol group per
  step, only when the rest stays payable.
* artisan_guild, swap_artisan (Artisan Guild), special_invitation (Special
  Invitation; decision 3), take_flower (Garden Party, VISITOR EFFECTS;
  decision 5), accept/choose/discard (prompts), setup (Player Setup).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

CARDS = json.loads((Path(__file__).resolve().parents[2] / "games" / "lafleur" / "cards.json").read_text("utf-8"))
BY_ID: dict[str, dict[str, Any]] = {c["id"]: c for c in CARDS["cards"]}
TYPES = ("architecture", "paths", "water", "flowers", "vistas")

# The rulebook's numbers.
HIRE, REPLACE, MAX_ARTISANS = 8, 4, 4  # "Artisan Guild": new hire 8 coins, rehire 4; 2 + "up to 2 additional"
DECK, REVEAL = 1, 1  # "Flower Market": deck card 1 Coin; "Garden Features": 1 Coin per revealed card
ROMANCE = 5  # "Special Invitation": 5 or more of the matching Allure


def _j(kind: str, **fields: Any) -> str:
    return json.dumps({"kind": kind, **fields}, sort_keys=True, separators=(",", ":"))


def _flower_price(card: dict[str, Any]) -> int:
    """Rulebook: "Flower Market", FLOWER CARD COSTS (2 Allure: 2; Wild: 1; 1 Allure: 0)."""
    if card["allure"] == ["wild"]:
        return 1
    return 2 if len(card["allure"]) == 2 else 0


def _symbols(card_id: str) -> tuple[int, ...]:
    """A Flower card's Allure types as indexes; () for a Wild card."""
    allure = BY_ID[card_id]["allure"]
    return () if allure == ["wild"] else tuple(TYPES.index(t) for t in allure)


@cache
def payable(need: tuple[int, ...], hand: tuple[tuple[int, ...] | None, ...], arts: tuple[int, ...],
            free: int) -> bool:
    """Can ``need`` (per type) be paid by ``hand`` (symbol tuples, None = Wild; sorted),
    untilted Artisans (``arts``, one type each, sorted) and ``free`` symbols of any type?

    Brute force over the first symbol still owed: an Artisan of that type, a free
    symbol, a card showing it (a card showing two needed symbols pays both), a
    Wild card, or any two cards (Rulebook: "Purchasing a Garden Feature").
    """
    t = next((i for i, n in enumerate(need) if n), None)
    if t is None:
        return True

    def less(n: tuple[int, ...], *types: int) -> tuple[int, ...]:
        out = list(n)
        for x in types:
            if out[x]:
                out[x] -= 1
        return tuple(out)

    if t in arts:
        rest = list(arts)
        rest.remove(t)
        if payable(less(need, t), hand, tuple(rest), free):
            return True
    if free and payable(less(need, t), hand, arts, free - 1):
        return True
    for i, card in enumerate(hand):
        rest_h = hand[:i] + hand[i + 1:]
        if card is None:
            if payable(less(need, t), rest_h, arts, free):
                return True
        elif t in card and payable(less(need, *card), rest_h, arts, free):
            return True
    for i, j in combinations(range(len(hand)), 2):
        rest_h = tuple(c for k, c in enumerate(hand) if k not in (i, j))
        if payable(less(need, t), rest_h, arts, free):
            return True
    return False


def _hand_key(cards: Sequence[str]) -> tuple[tuple[int, ...] | None, ...]:
    return tuple(sorted(((_symbols(c) or None) for c in cards), key=lambda s: (s is None, s or ())))


def _pays(need: Sequence[int], card: str) -> tuple[int, ...]:
    """``need`` after paying with a non-Wild ``card`` (each needed symbol on it is paid)."""
    out = list(need)
    for x in _symbols(card):
        if out[x]:
            out[x] -= 1
    return tuple(out)


class Context:
    """What the reference reads from the match's public action stream for one seat."""

    def __init__(self) -> None:
        self.artisan = ""  # the Artisan placed last by the acting player
        self.location = ""
        self.buys = 0  # Flower cards bought since that placement


def observe(ctx: dict[int, Context], player: int, action: dict[str, Any]) -> None:
    """Update the per-player context with ``action`` (JSON) just taken by ``player``."""
    c = ctx.setdefault(player, Context())
    if action["kind"] == "place":
        c.artisan, c.location, c.buys = action["artisan"], action["location"], 0
    elif action["kind"] == "buy_flower":
        c.buys += 1


def _ability(ctx: Context, location: str) -> dict[str, Any]:
    """The acting Artisan's ability if it works at ``location`` (Rulebook: "Artisans", ARTISAN ABILITIES)."""
    if not ctx.artisan:
        return {}
    art = BY_ID[ctx.artisan]
    return dict(art["ability"]) if art["ability_location"] == location else {}


def _event(obs: dict[str, Any]) -> dict[str, Any]:
    """This round's Event modifiers (an Event "in effect during the entire round")."""
    ev = BY_ID.get(obs["event"]) if obs["event"] else None
    if ev and ev["timing"] == "round":
        return dict(ev["effect"]["modify"])
    return {}


def _market(obs: dict[str, Any], me: dict[str, Any], ab: dict[str, Any]) -> list[str]:
    ev = _event(obs)
    discount = ab.get("market_discount", 0) + ev.get("market_discount", 0)
    out = []
    for m in obs["market"]:
        if m["card"] and max(0, _flower_price(BY_ID[m["card"]]) - discount) <= me["coins"]:
            out.append(_j("buy_flower", space=m["space"], card=m["card"]))
    if ev.get("deck_price", DECK) <= me["coins"] and (obs["flower_deck"] or obs["flower_discard"]):
        out.append(_j("buy_flower", space=0, card=""))
    return out


def _hire_cost(obs: dict[str, Any], ab: dict[str, Any]) -> int:
    return int(min(HIRE, ab.get("hire_cost", HIRE), _event(obs).get("hire_cost", HIRE)))


def _replace_cost(obs: dict[str, Any], ab: dict[str, Any]) -> int:
    return int(min(REPLACE, ab.get("replace_cost", REPLACE), _event(obs).get("replace_cost", REPLACE)))


def _can_reveal(obs: dict[str, Any], me: dict[str, Any], ab: dict[str, Any]) -> bool:
    cost = 0 if ab.get("free_reveals") or _event(obs).get("free_reveals") else REVEAL
    empty = any(not g["card"] for g in obs["garden_features"])
    left = obs["feature_deck"] or obs["feature_discard"]
    return bool(empty and left and me["coins"] >= cost)


def _untilted(me: dict[str, Any]) -> list[tuple[str, int]]:
    return [(a["card"], TYPES.index(BY_ID[a["card"]]["allure"])) for a in me["artisans"] if not a["tilted"]]


def _location_ok(obs: dict[str, Any], me: dict[str, Any], loc: str, ab: dict[str, Any]) -> bool:
    if loc == "coin":
        return True
    if loc == "prestige":
        return not me["used_prestige"]
    if loc == "flower_market":
        return bool(_market(obs, me, ab))
    if loc == "garden_features":
        return any(g["card"] for g in obs["garden_features"]) or _can_reveal(obs, me, ab)
    if loc == "artisan_guild":
        left = obs["artisan_deck"] or obs["artisan_discard"]
        hire = len(me["artisans"]) < MAX_ARTISANS and me["coins"] >= _hire_cost(obs, ab)
        return bool(left and (hire or me["coins"] >= _replace_cost(obs, ab)))
    return any(v["pawn"] < 0 for v in obs["visitors"])  # special_invitation


LOCATIONS = ("flower_market", "garden_features", "artisan_guild", "special_invitation", "prestige", "coin")


def legal_actions(obs: dict[str, Any], ctx: Context) -> set[str]:
    """The decisions the rules allow the acting seat now (canonical JSON strings).

    Args:
        obs: the acting seat's observation (``LaFleurObservation`` dict).
        ctx: the acting player's :class:`Context` (from the public action stream).
    """
    seat = obs["current_player"]
    me = obs["players"][seat]
    phase = obs["phase"]
    hand = list(me["hand"])
    if phase == "choose_character":
        return {_j("choose_character", card=c) for c in me["dealt_characters"]}
    if phase == "keep_artisans":
        return {_j("keep_artisans", cards=sorted(p)) for p in combinations(me["dealt_artisans"], 2)}
    if phase == "place":
        out = set()
        for a in me["artisans"]:
            if a["placed"]:
                continue
            art = BY_ID[a["card"]]
            for loc in LOCATIONS:
                ab = dict(art["ability"]) if art["ability_location"] == loc else {}
                if _location_ok(obs, me, loc, ab):
                    out.add(_j("place", artisan=a["card"], location=loc))
        return out
    if phase == "flower_market":
        out = set(_market(obs, me, _ability(ctx, "flower_market")))
        return out | {_j("done")} if ctx.buys else out
    arts = [t for _, t in _untilted(me)]
    if phase == "garden_features":
        ab = _ability(ctx, "garden_features")
        out = {_j("done")}
        if _can_reveal(obs, me, ab):
            out.add(_j("reveal_feature"))
        for g in obs["garden_features"]:
            if g["card"]:
                need = [0] * 5
                for t in BY_ID[g["card"]]["cost"]:
                    need[TYPES.index(t)] += 1
                if payable(tuple(need), _hand_key(hand), tuple(sorted(arts)), ab.get("free_allure", 0)):
                    out.add(_j("buy_feature", space=g["space"], card=g["card"]))
        return out
    if phase in ("pay", "pair"):
        return _payment(obs, me, hand, arts)
    if phase == "artisan_guild":
        ab = _ability(ctx, "artisan_guild")
        out = set()
        if len(me["artisans"]) < MAX_ARTISANS and me["coins"] >= _hire_cost(obs, ab):
            out.add(_j("hire_artisan"))
        if me["coins"] >= _replace_cost(obs, ab):
            out.add(_j("replace_artisan"))
        return out
    if phase == "swap_artisan":
        return {_j("swap_artisan", artisan=a["card"]) for a in me["artisans"]} | {_j("swap_artisan", artisan="")}
    if phase == "special_invitation":
        return _invitations(obs, me)
    if phase == "take_flower":
        out = {_j("take_flower", space=m["space"], card=m["card"]) for m in obs["market"] if m["card"]}
        if obs["flower_deck"] or obs["flower_discard"]:
            out.add(_j("take_flower", space=0, card=""))
        return out
    if phase == "accept":
        return {_j("accept", accept=True), _j("accept", accept=False)}
    if phase == "choose":
        return {_j("choose", option=i) for i in range(len(obs["prompt"]["options"]))}
    if phase == "discard":
        return {_j("discard_flower", card=c) for c in hand}
    raise ValueError(f"unknown phase {phase!r}")


def _payment(obs: dict[str, Any], me: dict[str, Any], hand: list[str], arts: list[int]) -> set[str]:
    pur = obs["purchase"]
    need = tuple(pur["remaining"][t] for t in TYPES)
    free = 1 if pur["discount"] else 0
    sorted_arts = tuple(sorted(arts))
    out: set[str] = set()

    def ok(after: tuple[int, ...], cards: list[str], a: Sequence[int], f: int) -> bool:
        return payable(after, _hand_key(cards), tuple(sorted(a)), f)

    def less(n: tuple[int, ...], t: int) -> tuple[int, ...]:
        return tuple(x - 1 if i == t else x for i, x in enumerate(n))

    if obs["phase"] == "pair":  # a pair of any two cards pays 1 of pur["pair_allure"]
        after = less(need, TYPES.index(pur["pair_allure"]))
        for i, c in enumerate(hand):
            rest = hand[:i] + hand[i + 1:]
            if pur["pair_first"]:
                good = ok(after, rest, arts, free)
            else:
                good = any(ok(after, rest[:k] + rest[k + 1:], arts, free) for k in range(len(rest)))
            if good:
                out.add(_j("pair_card", card=c))
        return out
    # "The player may simply declare that they are contributing the Artisan's Allure type": any untilted
    # Artisan of an owed type (the tilt stays with its card, so alike Artisans differ: decision 10).
    for card, t in _untilted(me):
        if need[t]:
            other_arts = list(sorted_arts)
            other_arts.remove(t)
            if ok(less(need, t), hand, other_arts, free):
                out.add(_j("pay_artisan", artisan=card, allure=TYPES[t]))
    for i, c in enumerate(hand):
        rest = hand[:i] + hand[i + 1:]
        sym = _symbols(c)
        if not sym:
            for t in range(5):
                if need[t] and ok(less(need, t), rest, arts, free):
                    out.add(_j("pay_flower", card=c, allure=TYPES[t]))
        else:
            after = _pays(need, c)
            if after != need and ok(after, rest, arts, free):
                out.add(_j("pay_flower", card=c, allure=""))
    if len(hand) >= 2:
        for t in range(5):
            if need[t] and any(ok(less(need, t), [c for k, c in enumerate(hand) if k not in (i, j)], arts, free)
                               for i, j in combinations(range(len(hand)), 2)):
                out.add(_j("pay_pair", allure=TYPES[t]))
    if free:
        for t in range(5):
            if need[t] and ok(less(need, t), hand, arts, 0):
                out.add(_j("pay_discount", allure=TYPES[t]))
    return out


def _invitations(obs: dict[str, Any], me: dict[str, Any]) -> set[str]:
    """Rulebook: "Special Invitation": invite any Visitor without a pawn; romance one whose type
    matches 5+ of your Allure (4 with the Open Gates Event or a Garden Feature lowering it for
    that type), without a Companion ("Each player may only have 1 Companion"); another romancing
    pawn does not prevent it (decision 3, rules revision 2)."""
    out = set()
    can_romance = not me["companion"]
    for v in obs["visitors"]:
        if v["pawn"] >= 0:
            continue
        out.add(_j("invite", visitor=v["card"], romance=False))
        t = BY_ID[v["card"]]["allure"]
        if not (can_romance and t):
            continue
        need = _event(obs).get("romance_threshold", ROMANCE)
        for f in me["garden_features"]:
            rt = BY_ID[f]["ability"]["effect"].get("romance_threshold")
            if rt and rt["allure"] == t:
                need = min(need, rt["value"])
        if me["allure"][t] >= need:
            out.add(_j("invite", visitor=v["card"], romance=True))
    return out
