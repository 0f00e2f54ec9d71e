"""The outcome of a match as readable cards: per seat its score categories, achievements as badges.

Every game's :class:`games.api.Outcome` carries ``details`` (JSON) with a
per-seat ``breakdown`` list; its shape is the game's own (Floriferous: score
categories; La Fleur: Prestige sources and Allure; Flowar: MP sources and
``achievements``, a mapping of achievement -> bool). A table with one column
per key was wider than the page, so the page shows one card per seat instead:

* numbers and short texts as ``label: value`` lines;
* a mapping of booleans (achievements) as badges, achieved or missed;
* a list of ``{text/name, achieved}`` records (La Fleur's solo challenges) as badges;
* other mappings (La Fleur's ``allure``) as one ``k v · k v`` line.

Card ids among the values are shown with their names when the game's card data
knows them. Nothing here decides a result: the values are the engine's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SKIP = frozenset({"seat", "player"})


def _label(key: str) -> str:
    return key.replace("_", " ")


def _card_name(game: str, value: str) -> str:
    if game == "lafleur":
        from games.lafleur.cards import card_name

        name = card_name(value)
        return f"{name} ({value})" if name != value else value
    return value


def _badges(value: Any) -> list[dict[str, Any]] | None:
    """Badges when ``value`` is a mapping of booleans or a list of ``{text, achieved}`` records, else None."""
    if isinstance(value, Mapping) and value and all(isinstance(v, bool) for v in value.values()):
        return [{"text": _label(k), "achieved": v} for k, v in value.items()]
    if (isinstance(value, list) and value and all(isinstance(v, Mapping) and "achieved" in v for v in value)):
        return [{"text": str(v.get("text") or v.get("name") or v.get("number", "")), "achieved": bool(v["achieved"])}
                for v in value]
    return None


def _text(game: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return _card_name(game, value) if value else "—"
    if isinstance(value, Mapping):
        return " · ".join(f"{_label(str(k))} {_text(game, v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_text(game, v) for v in value) if value else "—"
    return str(value)


def card_of(game: str, record: Mapping[str, Any], title: str) -> dict[str, Any]:
    """One card: ``{title, total, fields: [{label, text}], badges: [{text, achieved}]}``."""
    fields, badges = [], []
    for key, value in record.items():
        if key in SKIP:
            continue
        b = _badges(value)
        if b is not None:
            badges.extend(b)
        else:
            fields.append({"label": _label(key), "text": _text(game, value), "total": key == "total"})
    return {"title": title, "total": record.get("total"), "fields": fields, "badges": badges}


def outcome_cards(game: str, outcome: Mapping[str, Any] | None, seat_names: Sequence[str]) -> dict[str, Any]:
    """Cards of an outcome: ``{"seats": [card per breakdown row], "extra": [card per other detail]}``.

    A breakdown row's ``seat`` names its card (``-1`` or an ``automaton`` row:
    the solo opponent / Taxus). Details other than ``breakdown`` become one card
    each (mappings) or one line of a "more" card (scalars).
    """
    details = (outcome or {}).get("details") or {}
    if not isinstance(details, Mapping):
        return {"seats": [], "extra": []}
    seats = []
    for i, row in enumerate(details.get("breakdown") or []):
        if not isinstance(row, Mapping):
            continue
        seat = row.get("seat", i)
        if row.get("automaton") or (isinstance(seat, int) and seat < 0):
            title = "Solo opponent (automaton)"
        elif isinstance(seat, int) and 0 <= seat < len(seat_names):
            title = f"{seat_names[seat]} (seat {seat + 1})"
        else:
            title = f"seat {seat}"
        seats.append(card_of(game, row, title))
    extra = []
    scalars: dict[str, Any] = {}
    for key, value in details.items():
        if key == "breakdown":
            continue
        if isinstance(value, Mapping):
            extra.append(card_of(game, value, "Taxus (automaton)" if key == "taxus" else _label(key)))
        elif _badges(value) is not None:
            extra.append({"title": _label(key), "total": None, "fields": [], "badges": _badges(value)})
        else:
            scalars[key] = value
    if scalars:
        extra.append(card_of(game, scalars, "more"))
    return {"seats": seats, "extra": extra}
