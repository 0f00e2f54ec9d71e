"""What every ``parterre`` command shares: the user-facing error, settings, services, output.

Errors a command can explain raise :class:`CliError`; ``parterre.cli.main``
prints its message as one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import TYPE_CHECKING, Any, TypeAlias

from parterre import settings as settings_mod

if TYPE_CHECKING:
    import redis
    from psycopg_pool import ConnectionPool

    from parterre.embedded import Services


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``register(subparsers)`` of each command module receives."""


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


def shows_default(action: argparse.Action) -> bool:
    """Whether ``--help`` states ``action``'s default: it has one that says something.

    Not for flags (``store_true`` and the like take no value), nor for a default of
    None or an empty string (the help text says what their absence means, e.g.
    "default $PARTERRE_METRICS_PORT").
    """
    return action.nargs != 0 and action.default not in (None, "", argparse.SUPPRESS)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's ``ArgumentDefaultsHelpFormatter`` for the defaults :func:`shows_default` accepts:
    `` (default: X)`` after the help, unless the help already places ``%(default)s``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "%(default)" in text or not shows_default(action):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """The parser class of ``parterre`` and of every subcommand (``add_subparsers`` passes its own
    class on): help through :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def settings() -> settings_mod.Settings:
    """The settings from the environment; a bad one is a :class:`CliError`."""
    try:
        return settings_mod.load()
    except settings_mod.SettingsError as exc:
        raise CliError(str(exc)) from None


def services(need_redis: bool = False) -> Services:
    """PostgreSQL (and Redis) as configured, or the embedded ones in ``$PARTERRE_HOME``."""
    from parterre import embedded

    st = settings()
    try:
        return embedded.resolve(st, need_redis=need_redis)
    except embedded.EmbeddedServiceError as exc:
        raise CliError(str(exc)) from None


def pool(services: Services, *, migrate: bool = True) -> ConnectionPool:
    """A small connection pool on the ladder database, migrated to the latest schema first."""
    from ladder import db
    from ladder.errors import DatabaseUnavailableError

    try:
        if migrate:
            db.migrate(services.database_url)
        return db.make_pool(services.database_url, min_size=1, max_size=4)
    except DatabaseUnavailableError as exc:
        raise CliError(str(exc)) from None


def redis_client(services: Services) -> redis.Redis:
    """A Redis client on the configured (or embedded) Redis."""
    import redis

    from parterre.embedded import redis_py_url

    return redis.Redis.from_url(redis_py_url(services.redis_url))


def bot_connection(args: argparse.Namespace) -> tuple[str, str]:
    """``(referee address, bot token)`` of a bot command: ``--address`` or ``$PARTERRE_REFEREE_ADDRESS``,
    ``--token`` or ``$PARTERRE_BOT_TOKEN``.

    Raises:
        CliError: a malformed address, or no token.
    """
    address = settings_mod.check_address("--address", args.address or settings().referee_address)
    token = args.token or settings_mod.cli_settings().bot_token
    if not token:
        raise CliError("a bot token is required: --token T or PARTERRE_BOT_TOKEN")
    return address, token


def _jsonable(value: Any) -> Any:
    """A value ``json`` cannot write, as the web API writes it (pydantic: RFC 3339 times such as
    ``2026-12-07T21:00:00Z``), else its ``str``."""
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return str(value)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON, times and other values as the web API writes them."""
    print(json.dumps(value, indent=2, default=_jsonable, ensure_ascii=False))


def row_dict(row: Any) -> dict[str, Any]:
    """A query row (dataclass, named tuple or mapping) as a plain dict for JSON output."""
    if hasattr(row, "_asdict"):
        return dict(row._asdict())
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        return dataclasses.asdict(row)
    return dict(row)


def observe(args: argparse.Namespace, process: str, *, multiprocess: bool = False) -> None:
    """JSON logs and, with ``--metrics-port``/``PARTERRE_METRICS_PORT``, a ``/metrics`` endpoint
    (``parterre/observe.py``). First thing a server command does."""
    from parterre import observe

    try:
        observe.setup_process(process, metrics_port=getattr(args, "metrics_port", None),
                              multiprocess=multiprocess, log_level=getattr(args, "loglevel", None))
    except (observe.MetricsSetupError, ValueError) as exc:
        raise CliError(str(exc)) from None


def parse_time_control(text: str) -> dict[str, int]:
    """``cap[+margin]`` or ``base:increment:cap:margin``, milliseconds.

    Raises:
        CliError: not 2 or 4 non-negative integers, or outside the bounds of
            :func:`ladder.match_plans.check_time_control`.
    """
    try:
        parts = [int(p) for p in text.replace("+", ":").split(":")]
    except ValueError:
        raise CliError(
            f"--time-control {text!r}: expected CAP_MS+MARGIN_MS or BASE_MS:INC_MS:CAP_MS:MARGIN_MS"
        ) from None
    if any(p < 0 for p in parts):
        raise CliError(f"--time-control {text!r}: values must be >= 0")
    if len(parts) == 2:
        tc = {"base_ms": 0, "increment_ms": parts[0], "cap_ms": parts[0], "margin_ms": parts[1]}
    elif len(parts) == 4:
        tc = dict(zip(("base_ms", "increment_ms", "cap_ms", "margin_ms"), parts, strict=True))
    else:
        raise CliError(f"--time-control {text!r}: expected 2 or 4 numbers")
    from ladder.match_plans import check_time_control

    try:
        check_time_control(**tc)
    except ValueError as exc:
        raise CliError(f"--time-control {text!r}: {exc}") from None
    return tc


def int_list(flag: str, text: str) -> list[int]:
    """``"2,3,4"`` -> ``[2, 3, 4]``; anything else is a :class:`CliError` naming ``flag``."""
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise CliError(f"{flag} {text!r}: expected comma-separated integers") from None


def game_options(items: list[str] | None) -> dict[str, str]:
    """Repeated ``--option KEY=VALUE`` flags as a dict.

    Raises:
        CliError: an item without ``=``.
    """
    options = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--option {item!r}: expected KEY=VALUE")
        options[key] = value
    return options


