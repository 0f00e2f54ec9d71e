"""What lets an engine's state class run the same pure-Python or compiled by mypyc (issue 19).

A mypyc-compiled (native) class keeps the attributes it declares in C slots,
outside ``__dict__``; only attributes set by a non-compiled base class (the
``history`` of :class:`games.api.State`) stay in ``__dict__``. Code that
copies or hashes a state field by field reads and writes them through these
helpers, which see both kinds, instead of ``__dict__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def native_fields(cls: type) -> tuple[str, ...]:
    """Names of the attributes a compiled class keeps outside ``__dict__``; () for a pure-Python class."""
    return tuple(n for n in getattr(cls, "__mypyc_attrs__", ()) if not n.startswith("__"))


def fields_of(obj: object) -> dict[str, Any]:
    """Every instance attribute of ``obj`` (name -> value), compiled or not.

    Order: ``__dict__``'s, then the native attributes; callers that hash sort
    the keys. Native attributes not set yet are left out.
    """
    out = dict(getattr(obj, "__dict__", {}))
    for name in native_fields(type(obj)):
        try:
            out[name] = getattr(obj, name)
        except AttributeError:
            continue
    return out


def set_fields(obj: object, fields: Mapping[str, Any]) -> None:
    """Set every attribute in ``fields`` on ``obj`` (through ``__dict__`` for a pure-Python class)."""
    if native_fields(type(obj)):
        for name, value in fields.items():
            setattr(obj, name, value)
    else:
        obj.__dict__.update(fields)


def blank(cls: type, *args: Any) -> Any:
    """An instance of ``cls`` whose attributes the caller is about to overwrite, all of them.

    Pure Python: ``object.__new__`` (no ``__init__`` runs). A compiled class
    cannot be made that way; its ``__new__`` runs ``__init__`` with ``args``.
    """
    if native_fields(cls):
        return cls.__new__(cls, *args)
    return object.__new__(cls)
