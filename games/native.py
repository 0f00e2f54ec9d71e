"""What lets an engine's state class run the same pure-Python or compiled by mypyc.

A mypyc-compiled (native) class keeps the attributes it declares in C slots,
outside ``__dict__``; only attributes set by a non-compiled base class (the
``history`` of :class:`games.api.State`, unless the class declares it) stay in ``__dict__``. Code that
copies or hashes a state field by field reads and writes them through these
helpers, which see both kinds, instead of ``__dict__``.

``PARTERRE_ENGINES=pure`` in the environment (read when ``games`` is first
imported) loads every engine module from its ``.py`` source even where a
compiled extension lies beside it: the pure-Python path stays the reference,
and CI runs the engine tests on both.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
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


ENGINES_ENV = "PARTERRE_ENGINES"
"""Environment variable: ``pure`` makes ``games`` import every module from its ``.py`` source even
where a compiled extension lies beside it (CI runs the engine tests both ways; debugging)."""


class _SourcesFirst:
    """A meta-path finder: a ``games.*`` module with a ``.py`` file is loaded from that file."""

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None, target: object = None) -> ModuleSpec | None:
        if not fullname.startswith("games.") or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def prefer_sources() -> None:
    """Import ``games.*`` modules from their ``.py`` sources from now on (idempotent)."""
    if _SourcesFirst not in sys.meta_path:
        sys.meta_path.insert(0, _SourcesFirst)


def stale_extensions(root: str) -> list[str]:
    """Compiled modules under ``root`` whose sources were changed after they were built.

    In a game's package (a folder below ``root`` holding compiled modules) every ``.py`` counts:
    mypyc builds the ``Final`` literals of the modules a compiled one imports (``constants.py``,
    ``cards.py``, ``phases.py``, interpreted themselves) into the compiled code, so an edit there
    is stale too. In ``root`` itself, a ``.py`` counts when an extension lies beside it.

    Returns:
        The ``.py`` paths (relative to ``root``) newer than the oldest extension of their folder.
    """
    stale = []
    for folder, _dirs, files in os.walk(root):
        built = [os.path.getmtime(os.path.join(folder, n)) for n in files if n.endswith(".so") and ".cpython-" in n]
        if not built:
            continue
        oldest = min(built)
        compiled = {n.split(".", 1)[0] for n in files if n.endswith(".so") and ".cpython-" in n}
        whole_package = os.path.abspath(folder) != os.path.abspath(root)
        for name in files:
            if not name.endswith(".py") or not (whole_package or name[:-3] in compiled):
                continue
            source = os.path.join(folder, name)
            if os.path.getmtime(source) > oldest:
                stale.append(os.path.relpath(source, root))
    return sorted(stale)
