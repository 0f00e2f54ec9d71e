"""Shared field checks and interning for the games' action dataclasses (``games/*/actions.py``).

An action's ``__post_init__`` validates its fields with these checks, so that
``Game.action_from_json`` can turn a bad bot answer into
:class:`games.api.InvalidActionError`; the engines hand out :func:`interned`
instances so the hot path compares actions by identity.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from games.api import Action


def check_int(name: str, value: object, lo: int, hi: int) -> None:
    """Field check of an action's ``__post_init__``: ``value`` is an int (not a bool) in ``lo..hi``.

    Raises:
        ValueError: otherwise (``Game.action_from_json`` reports it as :class:`InvalidActionError`).
    """
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, not {value!r}")


def check_str(name: str, value: object, allowed: tuple[str, ...] | None = None) -> None:
    """Field check: ``value`` is a string, one of ``allowed`` when given.

    Raises:
        TypeError: not a string. ValueError: not among ``allowed``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {value!r}")
    if allowed is not None and value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


def check_bool(name: str, value: object) -> None:
    """Field check: ``value`` is a bool.

    Raises:
        TypeError: otherwise.
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a boolean, not {value!r}")


_INTERNED: dict[tuple[Any, ...], Action] = {}
_A = TypeVar("_A", bound=Action)


def interned(cls: type[_A], *fields: Any) -> _A:
    """The shared instance ``cls(*fields)``, built once: engines hand out interned actions so the
    hot path compares them by identity and never rebuilds a dataclass.

    Raises:
        whatever ``cls(*fields)`` raises for bad fields (then nothing is cached).
    """
    key = (cls, *fields)
    got = _INTERNED.get(key)
    if got is None:
        got = _INTERNED[key] = cls(*fields)
    return cast(_A, got)  # the key starts with ``cls``, so the cached value is a ``cls``
