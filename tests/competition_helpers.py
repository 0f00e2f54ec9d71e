"""Shared helpers of the competition tests (no tests here): accounts, owned and hosted bots, a clock.

Accounts are written with SQL (their password plays no part here, and argon2 would cost a tenth
of a second each); bots go through :func:`ladder.owned_bots.create_bot` and hosted versions
through :func:`ladder.submissions.create_version`, as the web site does.
"""

from __future__ import annotations

import io
import secrets
import tarfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ladder import competitions
from ladder import submissions as sub
from ladder.owned_bots import create_bot

T0 = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)
"""The tests' clock starts here (passed as ``now``; no test reads the wall clock for the schedule)."""
HOUR = timedelta(hours=1)


def account(pool: Any, name: str, role: str = "participant", status: str = "active") -> int:
    with pool.connection() as conn:
        return int(conn.execute("INSERT INTO accounts (username, password_hash, role, status) "
                                "VALUES (%s, 'x', %s, %s) RETURNING id", (name, role, status)).fetchone()[0])


def bot(pool: Any, account_id: int, name: str | None = None, games: Sequence[str] = ()) -> int:
    made, _ = create_bot(pool, account_id, name or f"b-{secrets.token_hex(4)}", games=games)
    return made.id


def archive(games: Sequence[str] = ("floriferous",), label: str = "") -> bytes:
    """A hosted bot's archive (a manifest and a script), distinct per ``label``."""
    names = ", ".join(f'"{g}"' for g in games)
    files = {"parterre-bot.toml": f'runtime = "python3.11"\ncommand = ["python3.11", "bot.py"]\n'
                                  f'games = [{names}]\n'.encode(),
             "bot.py": f"# {label or secrets.token_hex(4)}\nprint('hi')\n".encode()}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def hosted_version(pool: Any, bot_id: int, games: Sequence[str] = ("floriferous",)) -> sub.HostedVersion:
    """A new version of ``bot_id``, made active (as a passed validation and test make it)."""
    version = sub.create_version(pool, bot_id, archive(games))
    sub.set_verdict(pool, version.id, "active")
    return version


def organiser(pool: Any) -> int:
    return account(pool, f"org-{secrets.token_hex(3)}", role="organiser")


def competition(pool: Any, org: int | None = None, *, now: datetime = T0, **kwargs: Any) -> competitions.Competition:
    """A floriferous competition open from ``now`` for a day, final evaluation an hour after its deadline."""
    args: dict[str, Any] = {"name": "spring cup", "game": "floriferous", "opens_at": now,
                            "deadline_at": now + 24 * HOUR, "final_at": now + 25 * HOUR, "entry_mode": "any"}
    args.update(kwargs)
    return competitions.create_competition(pool, organiser_id=org if org is not None else organiser(pool), now=now,
                                           **args)
