"""The registry of games, reached by name or by a game string.

A game string is ``name`` or ``name(option=value,option=value)``, e.g.
``floriferous(players=2,extended=true)`` (OpenSpiel's ``load_game`` strings).

Errors: :class:`games.api.UnknownGameError` for an unknown name,
:class:`games.api.InvalidOptionError` for a bad option or a malformed string.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

from games.api import Game, InvalidOptionError, UnknownGameError

# name -> "module:Class"; imported lazily so that loading one game never pays for another.
_BUILTIN: dict[str, str] = {
    "floriferous": "games.floriferous.game:FloriferousGame",
    "lafleur": "games.lafleur.game:LaFleurGame",
    "flowar": "games.flowar.game:FlowarGame",
}
_REGISTERED: dict[str, type[Game]] = {}

_GAME_STRING = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*(?:\((.*)\))?\s*$")


def register(cls: type[Game]) -> type[Game]:
    """Register a game class under ``cls.INFO.name`` (usable as a decorator).

    Tests use this to add small fixture games.
    """
    _REGISTERED[cls.INFO.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove a game registered with :func:`register` (no effect on built-ins)."""
    _REGISTERED.pop(name, None)


def game_names() -> list[str]:
    """Names of every registered game, sorted."""
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def game_class(name: str) -> type[Game]:
    """The :class:`Game` subclass registered as ``name``.

    Raises:
        UnknownGameError: no such game.
    """
    if name in _REGISTERED:
        return _REGISTERED[name]
    target = _BUILTIN.get(name)
    if target is None:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(game_names())}")
    module, _, attr = target.partition(":")
    cls: type[Game] = getattr(importlib.import_module(module), attr)
    return cls


def parse_game_string(text: str) -> tuple[str, dict[str, str]]:
    """Split ``name(k=v,...)`` into the name and raw (string) option values.

    Raises:
        InvalidOptionError: malformed string or repeated option.
    """
    m = _GAME_STRING.match(text)
    if not m:
        raise InvalidOptionError(f"malformed game string {text!r}; expected name(option=value,...)")
    name, body = m.group(1), m.group(2)
    options: dict[str, str] = {}
    if body and body.strip():
        for part in body.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or not key:
                raise InvalidOptionError(f"malformed option {part!r} in game string {text!r}")
            if key in options:
                raise InvalidOptionError(f"option {key!r} given twice in {text!r}")
            options[key] = value.strip()
    return name, options


def load_game(name_or_string: str, options: Mapping[str, Any] | None = None) -> Game:
    """Build a game from a name (plus ``options``) or from a full game string.

    Args:
        name_or_string: ``"floriferous"`` or ``"floriferous(players=3)"``.
        options: more options; they override the game string's.

    Raises:
        UnknownGameError: the game is not registered.
        InvalidOptionError: an option is unknown or has a bad value.
    """
    name, parsed = parse_game_string(name_or_string)
    merged: dict[str, Any] = {**parsed, **dict(options or {})}
    return game_class(name)(merged)
