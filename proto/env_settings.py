"""Typed settings read from ``PARTERRE_*`` environment variables (docs/settings.md).

A component declares its settings once, as a frozen pydantic model whose fields carry the variable
name (``alias``), the default and a one-line description; :meth:`EnvSettings.load` reads and checks
them, and :func:`markdown_table` renders the table of docs/settings.md from the same declarations.

Loading is cached per environment: the cache key is the process's ``PARTERRE_*`` variables, so a
component reads and checks its variables once, and a process (or a test) that changes a variable
gets a fresh object the next time it asks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, ClassVar, Self, cast

from pydantic import BaseModel, ConfigDict, ValidationError


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


class EnvSettings(BaseModel):
    """Base of a component's settings: one field per variable, ``Field(default, alias="PARTERRE_...",
    description=...)``. An empty variable counts as unset, except those named in :attr:`KEEP_EMPTY`."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=False)

    KEEP_EMPTY: ClassVar[frozenset[str]] = frozenset()
    """Variables whose empty value means something (``PARTERRE_LADDER_GAMES=""``: no game)."""

    TITLE: ClassVar[str] = ""
    """The component, as the table of docs/settings.md names it."""

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings in ``env`` (default ``os.environ``), cached per distinct ``PARTERRE_*`` environment.

        Raises:
            SettingsError: a variable has a value of the wrong type or out of range; the message
                is ``NAME='value': what was expected``.
        """
        source = os.environ if env is None else env
        key = tuple(sorted((k, v) for k, v in source.items() if k.startswith("PARTERRE_")))
        return cast(Self, _load(cls, key))


@lru_cache(maxsize=64)
def _load(cls: type[EnvSettings], items: tuple[tuple[str, str], ...]) -> EnvSettings:
    names = {f.alias for f in cls.model_fields.values()}
    data = {k: v for k, v in items if k in names and (v.strip() or k in cls.KEEP_EMPTY)}
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else cls.__name__
        raise SettingsError(f"{name}={data.get(name)!r}: {first['msg']}") from None


def markdown_table(classes: Iterable[type[EnvSettings]]) -> str:
    """One Markdown table of every variable of ``classes``: component, variable, default, meaning.

    The default column shows ``json_schema_extra={"default_doc": ...}`` when a field has one (a
    default computed at run time), else the field's default value.
    """
    rows = ["| component | variable | default | meaning |", "|---|---|---|---|"]
    for cls in classes:
        for field in cls.model_fields.values():
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            default: Any = extra.get("default_doc")
            if default is None:
                value = field.get_default(call_default_factory=True)
                default = "unset" if value is None or value == "" else f"`{_plain(value)}`"
            desc = (field.description or "").replace("|", "\\|")
            rows.append(f"| {cls.TITLE} | `{field.alias}` | {default} | {desc} |")
    return "\n".join(rows) + "\n"


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
