"""Spectator-safe step labels: which cards a step names, and which ones a view has seen.

The engines' labels (``Action.label()``) are written for someone who sees
everything. A label may be shown to a viewer only when every card the step's
action names has appeared in that viewer's observation at that step or
before; otherwise :func:`hidden_label` gives the step's kind with its cards
withheld. Used by the web viewer (``web.labels``, per point of view) and
by the referee's live feed (``referee.live``, spectator only), so both apply
one rule.

Card ids are the games' own (La Fleur ``F01``/``G01``/``V01``/``A01``/``C01``/``E01``;
Flowar ``F01``/``C01``/``T01``; Floriferous garden and Desire ids and Bounties).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

_TOKEN = re.compile(r'"([A-Za-z]{1,2}\d{1,3}[a-z]?)"')


@cache
def card_ids(game: str) -> frozenset[str]:
    """Every card id of ``game`` (the strings a label may name), empty for a game without card data."""
    if game == "lafleur":
        from games.lafleur.cards import INDEX

        return frozenset(INDEX)
    if game == "flowar":
        from games.flowar.cards import CONTRACT_IDS, FLOWER_IDS, TAXUS_CARDS

        return frozenset(FLOWER_IDS) | frozenset(CONTRACT_IDS) | {t.id for t in TAXUS_CARDS}
    if game == "floriferous":
        from games.floriferous.cards import BOUNTY_INDEX, CARD_INDEX

        return frozenset(CARD_INDEX) | frozenset(BOUNTY_INDEX)
    return frozenset()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def named_cards(game: str, action: Mapping[str, Any]) -> set[str]:
    """The card ids an action JSON names (any string value, at any depth, that is a card id of ``game``)."""
    ids = card_ids(game)
    return {s for s in _strings(action) if s in ids}


def seen_cards(game: str, observation: Mapping[str, Any]) -> set[str]:
    """The card ids that appear anywhere in an observation."""
    return seen_in_json(game, json.dumps(observation, ensure_ascii=False))


def seen_in_json(game: str, text: str) -> set[str]:
    """The card ids that appear as JSON strings in ``text`` (an observation already encoded)."""
    ids = card_ids(game)
    return {t for t in _TOKEN.findall(text) if t in ids}


HIDDEN_TEXT: dict[tuple[str, str], str] = {
    ("lafleur", "choose_character"): "choose a Character (hidden)",
    ("lafleur", "keep_artisans"): "keep two Artisans (hidden)",
    ("flowar", "draw_contract"): "draw a Contract (hidden)",
    ("flowar", "keep_contract"): "keep a Contract (hidden)",
    ("flowar", "draw_flower"): "draw a Flower card (hidden)",
    ("floriferous", "deal"): "deal a card face down",
}
"""(game, action kind) -> the label shown when the step's cards are hidden from the view."""


def hidden_label(game: str, action: Mapping[str, Any]) -> str:
    """The label of a step whose cards the view hides (never names a card)."""
    kind = str(action.get("kind", ""))
    text = HIDDEN_TEXT.get((game, kind))
    if text is not None:
        return text
    if game == "lafleur" and kind == "draw":
        return f"draw {action.get('deck', 'a')}: a card (hidden)"
    return kind.replace("_", " ") + " (hidden)"




NOTED_GAMES: frozenset[str] = frozenset({"flowar"})
"""Games whose steps may show the table more than their action (:func:`step_note`)."""


def step_note(game: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str:
    """What a step showed the whole table besides its action, as text to append to its label ("" none).

    Flowar: the Flower cards a Market refill put back into the deck at this step (Rulebook:
    "Game Setup", step 5: "discard any of the repeated ones and draw Cards until all 5 different
    flowers are present"), from the observation's ``market_redraws`` before and after the step
    (public: the same for every view), e.g. ``" · put back F46 (Market slot 2)"``.
    """
    if game not in NOTED_GAMES:
        return ""
    done = len(before.get("market_redraws", [])) if before is not None else 0
    return _put_back(list(after.get("market_redraws", []))[done:])


def note_mark(game: str, state: Any) -> int:
    """How many table events beyond the actions ``state`` holds so far (Flowar: the Flower cards put back
    while filling the Market; 0 in a game without, :data:`NOTED_GAMES`). Cheap, unlike an observation: the
    live feed takes it at every step and writes the notes later (:func:`notes_between`)."""
    if game != "flowar":
        return 0
    from games.flowar.observation import market_redraw_count

    return market_redraw_count(state)


def notes_between(game: str, state: Any, start: int, stop: int) -> str:
    """The note of table events ``start`` to ``stop`` (marks of :func:`note_mark`; ``state`` at or after
    ``stop``), as :func:`step_note` writes the note of the step that showed them."""
    if game != "flowar" or start >= stop:
        return ""
    from games.flowar.observation import market_redraw_records

    return _put_back(market_redraw_records(state)[start:stop])


def _put_back(records: list[Any]) -> str:
    if not records:
        return ""
    return " · put back " + ", ".join(f"{r['card']} (Market slot {r['slot']})" for r in records)


def public_label(game: str, action: Mapping[str, Any], label: str, seen: set[str]) -> str:
    """``label`` when every card ``action`` names is in ``seen``, else :func:`hidden_label`."""
    return label if named_cards(game, action) <= seen else hidden_label(game, action)
