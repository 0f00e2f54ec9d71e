"""Board panels of the replay viewer: one small adapter per game, a generic one for the rest.

An adapter turns a :class:`web.viewer.Frame` into the context of a
Jinja2 template (``templates/boards/<name>.html``). Every adapter's context also
gets ``last`` (the card ids the frame's step named: the last action, highlighted)
and ``actor`` (the seat that took it). Games without an adapter use the generic panel, which
renders the spectator observation — and, with "show all hands", every seat's
view — as nested tables, so a new game is viewable without new code.

All text reaches the page through Jinja2 autoescaping; adapters never build markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from web.boards import floriferous, flowar, generic, lafleur
from web.labels import named_cards
from web.viewer import Frame


@dataclass(frozen=True, slots=True)
class BoardPanel:
    """A template and its context."""

    template: str
    context: dict[str, Any]


Adapter = Callable[[Frame, Sequence[str], bool], dict[str, Any]]
"""``adapter(frame, seat_names, all_hands) -> template context``."""

ADAPTERS: dict[str, tuple[str, Adapter]] = {
    "floriferous": ("boards/floriferous.html", floriferous.board_context),
    "lafleur": ("boards/lafleur.html", lafleur.board_context),
    "flowar": ("boards/flowar.html", flowar.board_context),
}
"""Game name -> (template, adapter). Games not listed use the generic panel."""


def board_panel(game: str, frame: Frame, seat_names: Sequence[str], all_hands: bool) -> BoardPanel:
    """The board panel of ``frame`` for ``game`` (the generic panel when the game has no adapter).

    Args:
        game: registry name.
        frame: the rebuilt state (with seat views and full state when ``all_hands``).
        seat_names: bot name per seat.
        all_hands: show hidden information (only after the match).
    """
    template, adapter = ADAPTERS.get(game, ("boards/generic.html", generic.board_context))
    context = adapter(frame, seat_names, all_hands)
    context["last"] = frozenset(named_cards(game, frame.action or {}))
    context["actor"] = frame.player
    return BoardPanel(template, context)
