"""The ability interpreter: card abilities are data, this module runs and renders them.

Rulebook: La Fleur, "Garden Feature Ability Types", "Artisans" (ARTISAN
ABILITIES), "End of Round" (CHARACTER ABILITIES), "Start of Round" (EVENTS)
and "Garden Party" (VISITOR EFFECTS). Every ability in ``cards.json`` is a
record ``{"timing", "condition", "effect"}``; the same record gives the
behaviour (:func:`steps`, :func:`holds`) and the text (:func:`render`).

Quantities (``q``), counted for one player (``p``) of a state:

=====================  ===================================================
``allure:<type>``      Château Allure of that type (Allure tracker)
``feature_allure:<t>`` Allure of that type on the player's Garden Features
``min_allure``         the lowest of the five Allure values ("2+ of each")
``total_allure``       sum of the five Allure values
``hand``               Flower cards in hand
``coins``/``prestige`` Coins / Prestige
``features``           Garden Features owned; ``features:<timing>`` those
                       with that ability timing
``artisans``           Artisans on the Château board
``companion``          1 with a Companion, else 0
``visitors``           Visitors at this Garden Party (Companion included);
                       ``visitors:<type>`` those of that Allure type
=====================  ===================================================

Conditions: ``{"q", "min"}`` (at least), ``{"q", "max"}`` (at most),
``{"most": q}`` / ``{"least": q}`` (ties included), ``{"most_strict": q}``
(more than every other player).

Effects: ``{"gain": {"prestige"|"coins"|"flowers": n}}`` optionally with
``"per": {"q", "every", "max"}``; ``{"pay": {"coins"|"flowers": n}, "gain"}``
(optional conversion); ``{"choice": [effect, ...]}``; ``{"discard_flowers": n}``;
``{"refresh": "market"|"features"}``; ``{"extra_visitors": n}``;
``{"modify": {...}}`` (round modifiers of Events); ``{"romance_threshold":
{"allure", "value"}}`` (static); Artisan keys ``second_purchase``,
``market_discount``, ``free_allure``, ``free_reveals``, ``hire_cost``,
``replace_cost``.

:func:`steps` turns an effect into *steps* the state applies:
``("gain", prestige, coins, flowers, source)``, ``("offer", pay_coins,
pay_flowers, (prestige, coins, flowers), source)``, ``("choice", effects,
source)``, ``("discard", n, source)``, ``("refresh", which)``,
``("extra_visitors", n)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from games.lafleur.cards import ALLURE, ALLURE_INDEX, FEATURES, VISITOR_ALLURE, Ability

TYPE_NAMES: Final[dict[str, str]] = {
    "architecture": "Architecture", "paths": "Path", "water": "Water", "flowers": "Flower", "vistas": "Vista",
}
"""How the rulebook writes each Allure type in running text ("Path Allure")."""

_AUTOMATON_BLIND: Final = ("companion", "features", "artisans", "feature_allure")
"""Quantity prefixes the solo opponent never scores (Rulebook: "Solo Mode", step 2)."""


class Board(Protocol):
    """What the interpreter reads from a state (``LaFleurState`` provides it)."""

    _num_players: int
    _allure: list[list[int]]
    _feature_allure: list[list[int]]
    _hand: list[list[int]]
    _coins: list[int]
    _prestige: list[int]
    _features: list[list[int]]
    _artisans: list[list[int]]
    _companion: list[int]
    _party: list[list[int]]


_QCACHE: Final[dict[str, tuple[str, Any]]] = {}


def _parse(q: str) -> tuple[str, Any]:
    got = _QCACHE.get(q)
    if got is None:
        name, _, arg = q.partition(":")
        if name in ("allure", "feature_allure", "visitors") and arg:
            got = (name, ALLURE_INDEX[arg])
        elif name == "features" and arg:
            got = ("features_timing", arg)
        else:
            got = (name, None)
        _QCACHE[q] = got
    return got


def quantity(s: Board, p: int, q: str) -> int:
    """The value of quantity ``q`` for player ``p`` (see the module table).

    Raises:
        KeyError: unknown quantity name.
    """
    name, arg = _parse(q)
    if name == "allure":
        return s._allure[p][int(arg)]
    if name == "hand":
        return len(s._hand[p])
    if name == "coins":
        return s._coins[p]
    if name == "prestige":
        return s._prestige[p]
    if name == "feature_allure":
        return s._feature_allure[p][int(arg)]
    if name == "min_allure":
        return min(s._allure[p])
    if name == "total_allure":
        return sum(s._allure[p])
    if name == "features":
        return len(s._features[p])
    if name == "features_timing":
        return sum(1 for f in s._features[p] if FEATURES[f].ability.timing == arg)
    if name == "artisans":
        return len(s._artisans[p])
    if name == "companion":
        return 1 if s._companion[p] >= 0 else 0
    if name == "visitors":
        if arg is None:
            return len(s._party[p])
        return sum(1 for v in s._party[p] if VISITOR_ALLURE[v] == arg)
    raise KeyError(f"unknown quantity {q!r}")


def holds(s: Board, p: int, cond: Mapping[str, Any] | None) -> bool:
    """True when ``cond`` (None = always) holds for player ``p``."""
    if cond is None:
        return True
    if "q" in cond:
        v = quantity(s, p, cond["q"])
        if "min" in cond and v < cond["min"]:
            return False
        return not ("max" in cond and v > cond["max"])
    for key in ("most", "least", "most_strict"):
        if key in cond:
            q = cond[key]
            mine = quantity(s, p, q)
            others = [quantity(s, o, q) for o in range(s._num_players) if o != p]
            if key == "most":
                return all(mine >= v for v in others)
            if key == "least":
                return all(mine <= v for v in others)
            return all(mine > v for v in others)
    raise KeyError(f"unknown condition {dict(cond)!r}")


def _mentions(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, Mapping):
        for k, v in node.items():
            if k in ("q", "most", "least", "most_strict") and isinstance(v, str):
                out.add(_parse(v)[0])
            else:
                out |= _mentions(v)
    elif isinstance(node, (list, tuple)):
        for v in node:
            out |= _mentions(v)
    return out


def automaton_scores(ability: Ability) -> bool:
    """False when the ability rewards Companions, Garden Features or Artisans.

    Rulebook: La Fleur, "Solo Mode", step 2: "rewards related to Companions,
    Garden Features, or Artisans will never score" for the solo opponent.
    """
    names = _mentions(ability.condition) | _mentions(ability.effect)
    return not any(n.startswith(b) for n in names for b in _AUTOMATON_BLIND) and "features_timing" not in names


def _times(s: Board, p: int, effect: Mapping[str, Any]) -> int:
    per = effect.get("per")
    if per is None:
        return 1
    m = quantity(s, p, per["q"]) // int(per["every"])
    cap = per.get("max")
    return min(m, int(cap)) if cap is not None else m


def _gain_tuple(gain: Mapping[str, int], m: int = 1) -> tuple[int, int, int]:
    return (gain.get("prestige", 0) * m, gain.get("coins", 0) * m, gain.get("flowers", 0) * m)


def steps(s: Board, p: int, effect: Mapping[str, Any], source: str = "") -> list[tuple[Any, ...]]:
    """The steps of ``effect`` for player ``p`` (condition already checked).

    Args:
        s: the state.
        p: player index.
        effect: an effect mapping.
        source: card id shown in prompts.

    Returns:
        Steps (module docstring), empty when the effect yields nothing now.
    """
    if "pay" in effect:
        pay = effect["pay"]
        return [("offer", pay.get("coins", 0), pay.get("flowers", 0), _gain_tuple(effect["gain"]), source)]
    if "gain" in effect:
        g = _gain_tuple(effect["gain"], _times(s, p, effect))
        return [("gain", g[0], g[1], g[2], source)] if any(g) else []
    if "choice" in effect:
        return [("choice", tuple(effect["choice"]), source)]
    if "discard_flowers" in effect:
        return [("discard", effect["discard_flowers"], source)] if s._hand[p] else []
    if "refresh" in effect:
        return [("refresh", effect["refresh"])]
    if "extra_visitors" in effect:
        return [("extra_visitors", effect["extra_visitors"])]
    return []  # static effects (modify, romance_threshold) act where they are read


_CHANGING: Final = frozenset({"coins", "hand", "prestige"})
"""Quantities that resolving a Garden Party's effects can change."""


def is_static(effect: Mapping[str, Any]) -> bool:
    """True for an effect with nothing to resolve (a lowered romance threshold)."""
    return set(effect) <= {"romance_threshold"}


def order_free(effect: Mapping[str, Any], condition: Mapping[str, Any] | None) -> bool:
    """True when the effect gives the same whenever it is resolved among a player's Garden Party
    effects: a plain gain whose amount and condition read none of Coins, hand, Prestige.

    Such gains commute with each other (their order changes nothing), so a
    Garden Party of only such items needs no order decision.
    """
    if set(effect) - {"gain", "per"}:
        return False
    per = effect.get("per")
    if per and _parse(per["q"])[0] in _CHANGING:
        return False
    if condition is None:
        return True
    qs = [condition.get("q")] + [condition.get(k) for k in ("most", "least", "most_strict")]
    return not any(q and _parse(q)[0] in _CHANGING for q in qs)


def gain_of(effect: Mapping[str, Any]) -> tuple[int, int, int]:
    """(prestige, coins, flowers) of a plain ``gain`` effect, ignoring ``per``."""
    return _gain_tuple(effect.get("gain", {}))


# -- text --------------------------------------------------------------------------------
_TIMING_TEXT: Final = {
    "when_acquired": "When Acquired", "when_visited": "When Visited", "end_of_round": "End of Round",
    "game_end": "Game End", "immediate": "Immediately", "round": "This round",
}


def _qtext(q: str) -> str:
    name, arg = _parse(q)
    if name == "allure":
        return f"{TYPE_NAMES[ALLURE[arg]]} Allure"
    if name == "feature_allure":
        return f"{TYPE_NAMES[ALLURE[arg]]} Allure on your Garden Features"
    if name == "visitors":
        return "Visitors" if arg is None else f"{TYPE_NAMES[ALLURE[arg]]} Visitors"
    if name == "features_timing":
        return f"{_TIMING_TEXT[arg]} Garden Features"
    return {
        "min_allure": "of each Allure type", "total_allure": "total Allure", "hand": "Flower cards in hand",
        "coins": "Coins", "prestige": "Prestige", "features": "Garden Features", "artisans": "Artisans",
        "companion": "a Companion",
    }[name]


def _gain_text(gain: Mapping[str, int]) -> str:
    parts = []
    for key, one, many in (("prestige", "Prestige", "Prestige"), ("coins", "Coin", "Coins"),
                           ("flowers", "Flower card", "Flower cards")):
        n = gain.get(key, 0)
        if n:
            parts.append(f"+{n} {one if n == 1 else many}")
    return " and ".join(parts)


def _cond_text(cond: Mapping[str, Any]) -> str:
    if "q" in cond:
        q = cond["q"]
        if q == "companion":
            return "if you have a Companion"
        if q == "min_allure":
            return f"if you have {cond['min']} or more of each Allure type"
        if "max" in cond:
            return f"if you have {cond['max']} or fewer {_qtext(q)}"
        if q == "visitors":
            return f"if you receive {cond['min']}+ Visitors"
        if q == "artisans" and cond["min"] == 4:
            return "if you have 4 Artisans"
        return f"if you have {cond['min']}+ {_qtext(q)}"
    if "most" in cond:
        return f"for the player(s) with the most {_qtext(cond['most'])}"
    if "least" in cond:
        return f"for the player(s) with the fewest {_qtext(cond['least'])}" if cond["least"] != "prestige" \
            else "for the player(s) with the least Prestige"
    return f"if you receive more {_qtext(cond['most_strict'])} than every other player"


_MODIFY_TEXT: Final = {
    "market_discount": "face-up Flower cards cost {} Coin less (at least 0)",
    "second_purchase": "each Artisan at the Flower Market may buy {} more Flower card",
    "free_allure": "pay {} Allure of any type toward a Garden Feature",
    "free_reveals": "reveal Garden Features for free",
    "hire_cost": "hire an Artisan for {} Coins",
    "replace_cost": "replace an Artisan for {} Coins",
    "coin_location": "the Coin location gives +{} Coins",
    "romance_threshold": "you may romance a Companion with {}+ matching Allure",
    "visitor_coins": "each Visitor you receive also gives +{} Coin",
    "deck_price": "Flower cards from the deck cost {} Coins",
    "prestige_coins": "the Prestige location also gives +{} Coin",
    "ties_to_first": "Visitors tied at the Garden Party go to the tied player first in turn order",
}


def effect_text(effect: Mapping[str, Any]) -> str:
    """English text of one effect mapping."""
    if "pay" in effect:
        pay = effect["pay"]
        what = f"{pay['coins']} Coins" if "coins" in pay else f"{pay['flowers']} Flower cards"
        return f"you may pay {what} for {_gain_text(effect['gain'])}"
    if "gain" in effect:
        text = f"gain {_gain_text(effect['gain'])}"
        per = effect.get("per")
        if per:
            every = per["every"]
            text += f" for every {every} {_qtext(per['q'])}" if every > 1 else f" per {_qtext(per['q'])[:-1]}"
            if per.get("max") is not None:
                text += f" (max {per['max']})"
        return text
    if "choice" in effect:
        return "choose: " + " or ".join(_gain_text(e["gain"]) for e in effect["choice"])
    if "discard_flowers" in effect:
        return f"discard {effect['discard_flowers']} Flower card of your choice"
    if "refresh" in effect:
        what = "Flower cards" if effect["refresh"] == "market" else "Garden Features"
        return f"discard the face-up {what} and refill their spaces"
    if "extra_visitors" in effect:
        return f"reveal {effect['extra_visitors']} more Visitor this round"
    if "romance_threshold" in effect:
        rt = effect["romance_threshold"]
        t = TYPE_NAMES[rt["allure"]]
        article = "an" if t[0] in "AEIOU" else "a"
        return f"you may romance {article} {t} Visitor with {rt['value']}+ {t} Allure"
    if "modify" in effect:
        return "; ".join(_MODIFY_TEXT[k].format(v) for k, v in effect["modify"].items())
    keys = [k for k in effect if k in _MODIFY_TEXT]
    if keys:
        return "; ".join(_MODIFY_TEXT[k].format(effect[k]) for k in keys)
    raise KeyError(f"unknown effect {dict(effect)!r}")


def render(ability: Ability) -> str:
    """The card text of an ability, e.g. ``"Game End: if you have 4+ Flower Allure, gain +2 Prestige."``."""
    body = effect_text(ability.effect)
    if ability.condition is not None:
        body = f"{_cond_text(ability.condition)}, {body}"
    return f"{_TIMING_TEXT[ability.timing]}: {body}."


def render_artisan(location: str, ability: Mapping[str, Any]) -> str:
    """Text of an Artisan ability used at ``location`` (a LOCATIONS name)."""
    where = location.replace("_", " ").title()
    return f"At {where}: {effect_text(ability)}."


def render_visitor(effect: Mapping[str, Any], visits: str | None) -> str:
    """Text of a Visitor card (its visiting rule for type-less Visitors, then its effect)."""
    text = effect_text(effect)
    if visits:
        who = {
            "least_prestige": "the player with the least Prestige",
            "most_features": "the player with the most Garden Features",
            "most_artisans": "the player with the most Artisans",
            "most_total_allure": "the player with the most total Allure",
            "most_hand": "the player with the most Flower cards in hand",
        }[visits]
        return f"Visits {who}; {text}."
    return f"{text[0].upper()}{text[1:]}."


def modifier(effects: Sequence[Mapping[str, Any] | None], key: str, default: int) -> int:
    """The value of a modifier ``key`` from the first effect that sets it (Artisan, then Event)."""
    for e in effects:
        if e is None:
            continue
        if key in e:
            return int(e[key])
        mod = e.get("modify")
        if mod and key in mod:
            return int(mod[key])
    return default
