"""Step labels per viewer: the step list and step headers never name what the chosen view hides.

A replay's steps carry the engine's labels (``Action.label()``), written for
someone who sees everything: ``draw character: Marquis Théodore``,
``choose Mademoiselle Niwa``, ``keep C02``. The viewer shows a match from one
point of view — the spectator (``State.observation(None)``), one seat
(``State.observation(seat)``), or "all hands" (after the match, everything) —
and its labels must match it.

Rule: a step's label is kept when every card its action names (the card ids
among the action's JSON values, :func:`named_cards`) has appeared in the
viewer's observation at that step or before (a card once shown face up stays
known: it was seen). Otherwise the label is replaced by the step's kind with
its cards withheld (:data:`HIDDEN_TEXT`, e.g. ``draw character: a card
(hidden)``). "All hands" keeps every label.

Rebuilding the observations costs one pass over the replay (La Fleur: about
300 steps, tens of milliseconds); :class:`LabelCache` keeps the result per
match and view, since a stored replay never changes.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from games.replay import iter_states

ALL = "all"
SPECTATOR = "spectator"

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
    ids = card_ids(game)
    text = json.dumps(observation, ensure_ascii=False)
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


def step_labels(replay: Mapping[str, Any], view: str | int) -> list[str]:
    """The label of every step of ``replay`` as ``view`` may read it.

    Args:
        replay: a ``parterre-replay/1`` dict.
        view: :data:`ALL` (the recorded labels), :data:`SPECTATOR`, or a seat number.

    Raises:
        games.api.GameError, games.replay.ReplayError: the replay does not re-simulate.
    """
    steps = replay.get("steps") or []
    raw = [str(s.get("label", "")) for s in steps]
    if view == ALL:
        return raw
    game = str(replay.get("game", ""))
    seat = None if view == SPECTATOR else int(view)
    seen: set[str] = set()
    out: list[str] = []
    for i, state in iter_states(replay):
        seen |= seen_cards(game, state.observation(seat))
        if i < 0:
            continue
        action = steps[i].get("action") or {}
        out.append(raw[i] if named_cards(game, action) <= seen else hidden_label(game, action))
    return out


class LabelCache:
    """Per-view step labels of recent matches (a small thread-safe LRU keyed by (match id, view))."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[int, str], list[str]] = OrderedDict()

    def get(self, match_id: int, replay: Mapping[str, Any], view: str | int) -> list[str]:
        """The labels of ``replay`` (match ``match_id``) for ``view`` (see :func:`step_labels`)."""
        key = (match_id, str(view))
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
        labels = step_labels(replay, view)
        with self._lock:
            self._items[key] = labels
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return labels
