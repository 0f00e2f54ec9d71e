"""Step labels per viewer: the step list and step headers never name what the chosen view hides.

A replay's steps carry the engine's labels (``Action.label()``), written for
someone who sees everything: ``draw character: Marquis Théodore``,
``choose Mademoiselle Niwa``, ``keep C02``. The viewer shows a match from one
point of view — the spectator (``State.observation(None)``), one seat
(``State.observation(seat)``), or "all hands" (after the match, everything) —
and its labels must match it.

Rule (:mod:`games.spectator`, shared with the referee's live feed): a step's
label is kept when every card its action names has appeared in the viewer's
observation at that step or before (a card once shown face up stays known: it
was seen). Otherwise the label is replaced by the step's kind with its cards
withheld (e.g. ``draw character: a card (hidden)``). "All hands" keeps every
label. Every view also reads what a step showed the whole table besides its
action (:func:`games.spectator.step_note`: the Flower cards a Flowar Market
refill put back into the deck, ``draw F37 · put back F46 (Market slot 2)``).

Rebuilding the observations costs one pass over the replay (La Fleur: about
300 steps, tens of milliseconds); :class:`LabelCache` keeps the result per
match and view, since a stored replay never changes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from games.replay import iter_states
from games.spectator import NOTED_GAMES, card_ids, hidden_label, named_cards, public_label, seen_cards, step_note

__all__ = ["ALL", "SPECTATOR", "LabelCache", "card_ids", "hidden_label", "named_cards", "seen_cards", "step_labels"]

ALL = "all"
SPECTATOR = "spectator"

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
    game = str(replay.get("game", ""))
    if view == ALL and game not in NOTED_GAMES:
        return raw
    seat = None if view in (SPECTATOR, ALL) else int(view)
    seen: set[str] = set()
    out: list[str] = []
    before: dict[str, Any] | None = None
    for i, state in iter_states(replay):
        observation = state.observation(seat)
        seen |= seen_cards(game, observation)
        note = step_note(game, before, observation)
        before = observation
        if i < 0:
            continue
        action = steps[i].get("action") or {}
        out.append((raw[i] if view == ALL else public_label(game, action, raw[i], seen)) + note)
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
