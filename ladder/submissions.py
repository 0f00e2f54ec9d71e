"""Hosted bots' submissions: archives, manifests, immutable versions and their verdicts (docs/hosted.md).

An owner uploads a version of a bot as an archive (``.tar.gz`` or ``.zip``)
with ``parterre-bot.toml`` at its root::

    runtime = "python3.11"          # or "python3.11-numpy", "node", "static", "java"
    command = ["python3.11", "bot.py"]
    protocol = "stdio"              # the line protocol of docs/bots.md, or "grpc" (docs/hosted.md)
    games = ["floriferous"]         # optional: the games it plays (validated in each)

:func:`inspect_archive` reads it without writing anything to the disk and
rejects, with the reason in words: an archive too big (packed or unpacked, headers
included: the reading itself is bounded, :mod:`ladder.archive_read`) or with too many
files; an oversized tar extended header; a manifest over :data:`MAX_MANIFEST_BYTES`;
not a tar.gz/zip or corrupt; an absolute path, a ``..`` part, a path the worker could not unpack
(a name over 255 bytes, deeper than 64 folders, longer than 1024 bytes: :func:`_check_path`), a link of any kind
(symbolic or hard: a link inside a bot is never needed, and one pointing outside
is the classic escape), a device or FIFO;
a missing or malformed manifest, an unknown runtime or protocol, a command
whose program is not the runtime's interpreter (or, for ``static``, not a file
of the archive), or with unsafe arguments. Versions are numbered per bot,
immutable (a trigger refuses any change of the archive, its sha256 or the
manifest) and kept. Status: ``validating`` -> ``rejected`` (reason and log)
or ``testing`` (the regression test against the active version) -> ``active``
(the previous active one becomes ``superseded``) or ``failed_test`` (the
regression test reported a regression and the owner's setting blocks it).
"""

from __future__ import annotations

import hashlib
import posixpath
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from games.registry import game_names
from ladder.archive_read import MAX_FILES as MAX_FILES
from ladder.archive_read import MAX_HEADER_BYTES as MAX_HEADER_BYTES
from ladder.archive_read import MAX_UNPACKED_BYTES as MAX_UNPACKED_BYTES
from ladder.archive_read import SubmissionError as SubmissionError
from ladder.archive_read import read_tar, read_zip
from ladder.competition_season import check_version_quota, pinned_sql
from ladder.db import connection

MAX_ARCHIVE_BYTES = 8 << 20
"""Largest archive accepted (8 MiB packed)."""
MAX_MANIFEST_BYTES = 16 << 10
"""Largest ``parterre-bot.toml`` (16 KiB; checked before ``tomllib`` parses it: a 16 MiB array took 125 s)."""
MANIFEST = "parterre-bot.toml"
RUNTIMES = {"python3.11": ("python3.11", "python3"), "python3.11-numpy": ("python3.11", "python3"), "node": ("node",),
            "static": (), "java": ("java",)}
"""Runtime -> the programs its command may start (``static``: a file of the archive)."""
PROTOCOLS = ("stdio", "grpc")
"""Protocols a hosted bot may speak: the stdio line protocol, or gRPC through the per-match relayed socket
(docs/hosted.md "gRPC bots")."""
STATUSES = ("validating", "rejected", "testing", "active", "superseded", "failed_test")


class PendingLimitError(SubmissionError):
    """The owner already has :func:`max_pending` versions waiting for validation or their test (HTTP 429)."""


MAX_PENDING_ENV = "PARTERRE_HOSTED_MAX_PENDING"
"""Setting: versions one owner may have in ``validating`` or ``testing`` at once (default 3)."""


def max_pending(env: dict[str, str] | None = None) -> int:
    """The per-owner cap on pending versions, from :data:`MAX_PENDING_ENV` (default 3, at least 1)."""
    import os

    return max(1, int((os.environ if env is None else env).get(MAX_PENDING_ENV, "3") or "3"))


@dataclass(frozen=True, slots=True)
class Manifest:
    """A checked ``parterre-bot.toml``."""

    runtime: str
    command: tuple[str, ...]
    protocol: str = "stdio"
    games: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "command": list(self.command), "protocol": self.protocol,
                "games": list(self.games)}


@dataclass(frozen=True, slots=True)
class Archive:
    """An accepted archive: its files (path -> (bytes, executable)) and manifest."""

    sha256: str
    size: int
    manifest: Manifest
    files: dict[str, tuple[bytes, bool]] = field(repr=False)


MAX_NAME_BYTES = 255
"""Longest file or folder name in an archive, in UTF-8 bytes (Linux's NAME_MAX: a longer one cannot be created)."""
MAX_DEPTH = 64
"""Deepest path in an archive, in parts (``a/b/c`` is 3)."""
MAX_PATH_BYTES = 1024
"""Longest path in an archive, in UTF-8 bytes (the worker's folder and ``.unpack-*`` come before it, all within
Linux's PATH_MAX of 4096)."""


def _check_path(name: str) -> str:
    """The archive entry ``name`` as the worker unpacks it (``a/./b/`` -> ``a/b``): the one check of a path, at
    upload and again when the worker unpacks (:func:`inspect_archive`).

    Raises:
        SubmissionError: absolute, malformed, ``..``, a part over :data:`MAX_NAME_BYTES`, deeper than
            :data:`MAX_DEPTH` or longer than :data:`MAX_PATH_BYTES`: what could not be unpacked or is unsafe.
    """
    if not name or "\x00" in name or name.startswith("/") or "\\" in name:
        raise SubmissionError(f"archive entry {name[:80]!r}: absolute or malformed path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SubmissionError(f"archive entry {name[:80]!r}: '..' is not allowed (path traversal)")
    longest = max((len(p.encode("utf-8", "surrogatepass")) for p in parts), default=0)
    if longest > MAX_NAME_BYTES:
        raise SubmissionError(f"archive entry {name[:80]!r}...: a name of {longest} bytes (at most "
                              f"{MAX_NAME_BYTES}: it could not be unpacked)")
    if len(parts) > MAX_DEPTH:
        raise SubmissionError(f"archive entry {name[:80]!r}...: {len(parts)} folders deep (at most {MAX_DEPTH})")
    path = "/".join(parts)
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise SubmissionError(f"archive entry {name[:80]!r}...: a path over {MAX_PATH_BYTES} bytes")
    return path


def parse_manifest(text: str, files: dict[str, tuple[bytes, bool]] | None = None) -> Manifest:
    """Check a ``parterre-bot.toml`` (and, given the archive's files, that a static program is one of them).

    Raises:
        SubmissionError: malformed TOML, unknown runtime/protocol/game, bad command.
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        raise SubmissionError(f"{MANIFEST}: over {MAX_MANIFEST_BYTES >> 10} KiB")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SubmissionError(f"{MANIFEST}: not valid TOML: {exc}") from None
    runtime = raw.get("runtime")
    if runtime not in RUNTIMES:
        raise SubmissionError(f"{MANIFEST}: runtime {runtime!r} is not one of {', '.join(RUNTIMES)}")
    protocol = raw.get("protocol", "stdio")
    if protocol not in PROTOCOLS:
        raise SubmissionError(f"{MANIFEST}: protocol {protocol!r} is not offered to hosted bots "
                              f"(one of {', '.join(PROTOCOLS)}; see docs/hosted.md)")
    command = raw.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if (not isinstance(command, list) or not command or len(command) > 32
            or not all(isinstance(a, str) and 0 < len(a) <= 256 and "\x00" not in a for a in command)):
        raise SubmissionError(f"{MANIFEST}: command must be a list of 1-32 non-empty strings")
    program = command[0]
    if runtime == "static":
        rel = posixpath.normpath(program.removeprefix("/bot/"))
        if rel.startswith(("/", "..")) or files is None or rel not in files:
            raise SubmissionError(f"{MANIFEST}: a static bot's command must start a file of the archive, "
                                  f"not {program!r}")
        command = [f"/bot/{rel}", *command[1:]]
    elif program not in RUNTIMES[runtime]:
        raise SubmissionError(f"{MANIFEST}: runtime {runtime} starts {' or '.join(RUNTIMES[runtime])}, "
                              f"not {program!r}")
    games = raw.get("games", [])
    if not isinstance(games, list) or not all(isinstance(g, str) and g in game_names() for g in games):
        raise SubmissionError(f"{MANIFEST}: games must be a list of {', '.join(game_names())}")
    return Manifest(runtime=runtime, command=tuple(command), protocol=protocol, games=tuple(games))


def read_archive_file(file: IO[bytes]) -> bytes:
    """The archive in the seekable ``file`` (from its start; at most ``MAX_ARCHIVE_BYTES + 1`` bytes read)
    for :func:`inspect_archive`. A body whose first bytes are neither ``.tar.gz`` nor ``.zip`` is refused
    before the rest is read into memory.

    Raises:
        SubmissionError: not a .tar.gz or .zip archive.
    """
    file.seek(0)
    head = file.read(4)
    if head[:2] != b"\x1f\x8b" and head != b"PK\x03\x04":
        raise SubmissionError("not a .tar.gz or .zip archive")
    file.seek(0)
    return file.read(MAX_ARCHIVE_BYTES + 1)


def inspect_archive(data: bytes) -> Archive:
    """Read and check an uploaded archive (nothing is written to the disk).

    Raises:
        SubmissionError: see the module docstring for each reason.
    """
    if len(data) > MAX_ARCHIVE_BYTES:
        raise SubmissionError(f"archive over {MAX_ARCHIVE_BYTES >> 20} MiB")
    if data[:2] == b"\x1f\x8b":
        files = read_tar(data, _check_path)
    elif data[:4] == b"PK\x03\x04":
        files = read_zip(data, _check_path)
    else:
        raise SubmissionError("not a .tar.gz or .zip archive")
    for path in files:  # a file that is also another file's folder cannot be unpacked
        parent = posixpath.dirname(path)
        while parent:
            if parent in files:
                raise SubmissionError(f"archive entry {parent!r} is a file and also the folder of {path!r}")
            parent = posixpath.dirname(parent)
    if MANIFEST not in files:
        raise SubmissionError(f"no {MANIFEST} at the root of the archive")
    if len(files[MANIFEST][0]) > MAX_MANIFEST_BYTES:
        raise SubmissionError(f"{MANIFEST}: over {MAX_MANIFEST_BYTES >> 10} KiB")
    try:
        text = files[MANIFEST][0].decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(f"{MANIFEST} is not UTF-8") from None
    manifest = parse_manifest(text, files)
    if manifest.runtime == "static":
        program = manifest.command[0].removeprefix("/bot/")
        files[program] = (files[program][0], True)
    return Archive(sha256=hashlib.sha256(data).hexdigest(), size=len(data), manifest=manifest, files=files)


# -- storage ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostedVersion:
    """One submitted version as its owner sees it (never the archive bytes)."""

    id: int
    bot_id: int
    number: int
    sha256: str
    size: int
    manifest: dict[str, Any]
    status: str
    reason: str
    log: str
    validation: dict[str, Any]
    regression: dict[str, Any]
    created_at: datetime
    decided_at: datetime | None

    def public(self) -> dict[str, Any]:
        """What anyone may see (no log: a bot's stderr is its owner's)."""
        return {"id": self.id, "bot_id": self.bot_id, "number": self.number, "sha256": self.sha256,
                "size": self.size, "status": self.status, "regression": self.regression,
                "created_at": self.created_at.isoformat()}


_COLS = ("id, bot_id, number, sha256, size, manifest, status, reason, log, validation, regression, "
         "created_at, decided_at")


def _version(row: dict[str, Any]) -> HostedVersion:
    return HostedVersion(**row)


def create_version(pool: ConnectionPool, bot_id: int, data: bytes, *, limit: int | None = None) -> HostedVersion:
    """Store a new version of ``bot_id`` (ownership is the caller's to check) in ``validating``.

    Args:
        limit: versions the bot's owner (its account, else the bot alone) may have in ``validating`` or
            ``testing`` at once; None: :func:`max_pending`. One account cannot starve everyone's validation.

    Raises:
        PendingLimitError: the owner has ``limit`` pending versions already (nothing is stored).
        ladder.competition_season.VersionQuotaError: a competition's daily cap on new versions (nothing stored).
        SubmissionError: the archive is refused (nothing is stored).
    """
    archive = inspect_archive(data)
    limit = max_pending() if limit is None else limit
    with connection(pool) as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        cur.execute("SELECT id, account_id FROM bots WHERE id = %s FOR UPDATE", (bot_id,))
        owner_row = cur.fetchone()
        account = owner_row["account_id"] if owner_row else None
        scope = f"account:{account}" if account is not None else f"bot:{bot_id}"
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"parterre:hosted-pending:{scope}",))
        cur.execute("SELECT count(*) AS n FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
                    "WHERE h.status IN ('validating', 'testing') AND "
                    + ("b.account_id = %s" if account is not None else "b.id = %s"),
                    (account if account is not None else bot_id,))
        pending = cur.fetchone()["n"]  # type: ignore[index]  # fetchone() is Optional; count(*) always returns one row
        if pending >= limit:
            raise PendingLimitError(f"{pending} versions of this owner are still waiting for validation or their "
                                    f"test (at most {limit}, {MAX_PENDING_ENV}); upload again once one is decided")
        check_version_quota(conn, bot_id)
        cur.execute("SELECT coalesce(max(number), 0) + 1 AS n FROM hosted_versions WHERE bot_id = %s", (bot_id,))
        number = cur.fetchone()["n"]  # type: ignore[index]  # fetchone() is Optional; max() always returns one row
        cur.execute(
            f"INSERT INTO hosted_versions (bot_id, number, sha256, size, archive, manifest) "
            f"VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_COLS}",
            (bot_id, number, archive.sha256, archive.size, data, Jsonb(archive.manifest.to_json())))
        row = cur.fetchone()
    assert row is not None
    return _version(row)


def get_version(pool: ConnectionPool, version_id: int) -> HostedVersion | None:
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_COLS} FROM hosted_versions WHERE id = %s", (version_id,))
        row = cur.fetchone()
    return _version(row) if row else None


def version_by_number(pool: ConnectionPool, bot_id: int, number: int) -> HostedVersion | None:
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_COLS} FROM hosted_versions WHERE bot_id = %s AND number = %s", (bot_id, number))
        row = cur.fetchone()
    return _version(row) if row else None


def list_versions(pool: ConnectionPool, bot_id: int) -> list[HostedVersion]:
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_COLS} FROM hosted_versions WHERE bot_id = %s ORDER BY number", (bot_id,))
        return [_version(r) for r in cur.fetchall()]


def active_version(pool: ConnectionPool, bot_id: int) -> HostedVersion | None:
    """The version that plays for ``bot_id`` now (None: not a hosted bot, or none accepted yet)."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {_COLS} FROM hosted_versions WHERE bot_id = %s AND status = 'active'", (bot_id,))
        row = cur.fetchone()
    return _version(row) if row else None


def archive_bytes(pool: ConnectionPool, version_id: int) -> bytes:
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("SELECT archive FROM hosted_versions WHERE id = %s", (version_id,))
        row = cur.fetchone()
    if row is None:
        raise SubmissionError(f"no hosted version {version_id}")
    return bytes(row[0])


def set_verdict(pool: ConnectionPool, version_id: int, status: str, *, reason: str = "", log: str = "",
                validation: dict[str, Any] | None = None, regression: dict[str, Any] | None = None) -> None:
    """Move a version to ``status``; ``active`` supersedes the bot's previous active version atomically."""
    if status not in STATUSES:
        raise ValueError(status)
    with connection(pool) as conn, conn.cursor() as cur:
        if status == "active":
            cur.execute("UPDATE hosted_versions SET status = 'superseded' WHERE status = 'active' AND bot_id = "
                        "(SELECT bot_id FROM hosted_versions WHERE id = %s) AND id <> %s", (version_id, version_id))
        cur.execute(
            "UPDATE hosted_versions SET status = %s, reason = %s, log = left(%s, 65536), "
            "validation = coalesce(%s, validation), regression = coalesce(%s, regression), "
            "decided_at = CASE WHEN %s IN ('validating', 'testing') THEN NULL ELSE now() END WHERE id = %s",
            (status, reason, log, Jsonb(validation) if validation is not None else None,
             Jsonb(regression) if regression is not None else None, status, version_id))


def set_regression(pool: ConnectionPool, version_id: int, regression: dict[str, Any]) -> None:
    """Store the running result of the regression test (the version page polls it)."""
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("UPDATE hosted_versions SET regression = %s, lease_until = greatest(lease_until, now() + "
                    "interval '5 minutes') WHERE id = %s", (Jsonb(regression), version_id))


def blocks_on_regression(pool: ConnectionPool, bot_id: int) -> bool:
    """The owner's setting: does a failed regression test keep the new version out (default yes)?"""
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("SELECT block_on_regression FROM hosted_settings WHERE bot_id = %s", (bot_id,))
        row = cur.fetchone()
    return True if row is None else bool(row[0])


def set_block_on_regression(pool: ConnectionPool, bot_id: int, block: bool) -> None:
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO hosted_settings (bot_id, block_on_regression) VALUES (%s, %s) "
                    "ON CONFLICT (bot_id) DO UPDATE SET block_on_regression = EXCLUDED.block_on_regression",
                    (bot_id, block))


def seat_identities(pool: ConnectionPool, bot_id: int) -> tuple[dict[str, Any], dict[str, Any], int]:
    """``(bot, opponent, match id)`` for a validation or regression game of ``bot_id``: the bot's id and name, another
    live bot's id, name and version (the newest other one; ``greedy-1``, id + 1 when it is alone), and a match
    id past the ladder's newest, as a rated match would show them (docs/hosted.md)."""
    with connection(pool) as conn:
        row = conn.execute("SELECT id, name FROM bots WHERE id = %s", (bot_id,)).fetchone()
        other = conn.execute("SELECT id, name, version FROM bots WHERE id <> %s AND revoked_at IS NULL "
                             "ORDER BY id DESC LIMIT 1", (bot_id,)).fetchone()
        newest = conn.execute("SELECT coalesce(max(id), 0) FROM matches").fetchone()
    own = {"bot_id": int(row[0]), "name": str(row[1])} if row else {"bot_id": bot_id, "name": f"bot-{bot_id}"}
    opponent = ({"bot_id": int(other[0]), "name": str(other[1]), "version": str(other[2])} if other
                else {"bot_id": bot_id + 1, "name": "greedy-1", "version": "1"})
    return own, opponent, int(newest[0] if newest else 0) + 1


def claim_next(pool: ConnectionPool, worker: str, lease_s: float = 900.0,
               runtimes: Sequence[str] | None = None) -> int | None:
    """Take the oldest version waiting for validation or its test whose lease is free; returns its id.

    Two workers never hold one version at once (``FOR UPDATE SKIP LOCKED`` and the lease); a version
    whose worker died is taken again when its lease runs out (its test starts over). ``runtimes``: only
    versions whose manifest names one of them (the runtimes installed on the worker; None: any), so a
    worker never takes a version it could not run and leaves it to one that can."""
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE hosted_versions SET worker = %s, lease_until = now() + make_interval(secs => %s) "
            "WHERE id = (SELECT id FROM hosted_versions WHERE status IN ('validating', 'testing') "
            "AND (lease_until IS NULL OR lease_until < now()) "
            "AND (%s::text[] IS NULL OR manifest->>'runtime' = ANY(%s::text[])) "
            "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
            "RETURNING id", (worker, lease_s, None if runtimes is None else list(runtimes),
                             None if runtimes is None else list(runtimes)))
        row = cur.fetchone()
    return int(row[0]) if row else None


def postpone(pool: ConnectionPool, version_id: int, delay_s: float) -> None:
    """Give a claimed version back, to be taken again in ``delay_s`` seconds (no referee reachable for its
    games: it is not judged; its status stays ``validating`` or ``testing``)."""
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("UPDATE hosted_versions SET lease_until = now() + make_interval(secs => %s) "
                    "WHERE id = %s AND status IN ('validating', 'testing')", (float(delay_s), version_id))


# -- platform-held credentials of active versions (rated matches; docs/hosted.md) -------------------

TOKEN_SECRET_MIN = 32
"""Shortest secret (characters) :func:`hosted_token` accepts: a short one could be guessed, and every
input besides it (version id, sha256) is public."""


def hosted_token(secret: str, version_id: int, sha256: str) -> str:
    """The token a worker connects hosted version ``version_id`` with (43 URL-safe characters).

    ``base64url(HMAC-SHA256(secret, "parterre-hosted-token/1:<id>:<sha256>"))`` without padding:
    every worker holding ``secret`` (``PARTERRE_HOSTED_TOKEN_SECRET``) derives the same token, none
    is ever stored, and a new version gets a new one. Only its sha256 is kept
    (``hosted_versions.token_hash``) and published to the referees.

    Raises:
        ValueError: ``secret`` shorter than :data:`TOKEN_SECRET_MIN`.
    """
    import base64
    import hmac

    if len(secret) < TOKEN_SECRET_MIN:
        raise ValueError(f"the hosted bots' token secret must have at least {TOKEN_SECRET_MIN} characters")
    mac = hmac.new(secret.encode(), f"parterre-hosted-token/1:{version_id}:{sha256}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")


def token_hash(token: str) -> str:
    """sha256 hex of a token (as ``ladder.bots.token_hash``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def sync_credentials(pool: ConnectionPool, redis: Any, key: str | None = None) -> dict[str, int]:
    """Make the referees' token hash agree with the versions: publish live credentials, revoke the others.

    Live: an ``active`` version with a ``token_hash`` whose bot is not revoked, or a version locked for
    a competition's final evaluation (``ladder.competition_season.pinned_sql``). Every other version
    with a hash that is not yet revoked (superseded, failed, or its bot revoked) gets
    ``token_revoked_at`` and its field removed (``HDEL``). The ordinary token of a bot with a live
    credential is removed too (a bot is either hosted or connects from outside, docs/hosted.md), and
    published again for a live bot that once had a credential and has none live now. Idempotent;
    called when a version becomes active (:func:`activate_credential`) and on every ``parterre.hosted_tick``.

    Returns:
        ``{"live": n, "revoked": m}`` (revoked: stamped by this call).
    """
    from ladder.bots import HOSTED_LIVE_SQL, TOKENS_KEY, ensure_published, held_sql, lock_tokens

    key = key or TOKENS_KEY
    ensure_published(pool, redis, key)  # Redis lost the hash: the whole set first, from PostgreSQL
    with connection(pool) as conn, conn.transaction(), conn.cursor() as cur:
        lock_tokens(conn, key, exclusive=True)  # no token change commits between these reads and the write
        cur.execute("UPDATE hosted_versions h SET token_revoked_at = now() FROM bots b WHERE b.id = h.bot_id "
                    "AND h.token_hash IS NOT NULL AND h.token_revoked_at IS NULL "
                    f"AND ((h.status <> 'active' AND NOT {pinned_sql('h')}) OR b.revoked_at IS NOT NULL) "
                    "RETURNING h.token_hash")
        revoked = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT token_hash FROM hosted_versions WHERE token_revoked_at IS NOT NULL")
        dead = [r[0] for r in cur.fetchall()]
        # S-11: an account not active holds its bots' credentials and tokens out (not stamped: re-enabling restores)
        cur.execute(f"SELECT h.token_hash FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
                    f"WHERE h.token_hash IS NOT NULL AND {held_sql('b')} "
                    f"UNION SELECT b.token_hash FROM bots b WHERE {held_sql('b')}")
        dead += [r[0] for r in cur.fetchall()]
        cur.execute("SELECT h.token_hash, h.bot_id FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
                    f"WHERE (h.status = 'active' OR {pinned_sql('h')}) AND h.token_hash IS NOT NULL "
                    "AND h.token_revoked_at IS NULL "
                    f"AND b.revoked_at IS NULL AND NOT {held_sql('b')}")
        live = {digest: str(bot_id) for digest, bot_id in cur.fetchall()}
        # A bot is either hosted or connects from outside: while its credential is live its ordinary token is
        # out of the hash; once no credential of it is live (withdrawn, superseded without a successor) it is back.
        cur.execute(f"SELECT token_hash FROM bots WHERE id IN ({HOSTED_LIVE_SQL})")
        hidden = [r[0] for r in cur.fetchall()]
        cur.execute(f"SELECT b.token_hash, b.id FROM bots b WHERE b.revoked_at IS NULL AND NOT {held_sql('b')} "
                    f"AND b.id NOT IN ({HOSTED_LIVE_SQL}) AND EXISTS (SELECT 1 FROM hosted_versions o "
                    f"WHERE o.bot_id = b.id AND o.token_hash IS NOT NULL)")
        restored = {digest: str(bot_id) for digest, bot_id in cur.fetchall()}
        pipe = redis.pipeline(transaction=True)
        if dead or hidden:
            pipe.hdel(key, *dead, *hidden)
        if live or restored:
            pipe.hset(key, mapping={**restored, **live})
        pipe.execute()
    return {"live": len(live), "revoked": len(revoked)}


def activate_credential(pool: ConnectionPool, version_id: int, secret: str, redis: Any,
                        key: str | None = None) -> bool:
    """Give active version ``version_id`` its credential (:func:`hosted_token`) and publish it; the bot's
    earlier versions' credentials are revoked in the same call (:func:`sync_credentials`).

    Returns:
        False when the version is not (or no longer) active: nothing is published for it.
    """
    version = get_version(pool, version_id)
    if version is None:
        return False
    digest = token_hash(hosted_token(secret, version.id, version.sha256))
    with connection(pool) as conn, conn.cursor() as cur:
        cur.execute("UPDATE hosted_versions SET token_hash = %s WHERE id = %s AND status = 'active' "
                    "AND token_revoked_at IS NULL RETURNING id", (digest, version_id))
        ok = cur.fetchone() is not None
    sync_credentials(pool, redis, key)
    return ok


def versions_without_credential(pool: ConnectionPool) -> list[int]:
    """Ids of ``active`` versions of bots not revoked that have no credential yet: made active while
    the workers held no token secret (they play no rated match until :func:`activate_credential`)."""
    with connection(pool) as conn:
        rows = conn.execute(
            "SELECT h.id FROM hosted_versions h JOIN bots b ON b.id = h.bot_id WHERE h.status = 'active' "
            "AND h.token_hash IS NULL AND h.token_revoked_at IS NULL AND b.revoked_at IS NULL ORDER BY h.id"
        ).fetchall()
    return [int(r[0]) for r in rows]


def playing_versions(pool: ConnectionPool, bot_ids: list[int] | None = None,
                     game: str | None = None) -> dict[int, HostedVersion]:
    """``{bot_id: active version}`` of the hosted bots that play rated matches now.

    A hosted bot plays when its active version has a live credential, the bot is not revoked and its
    account (if any) is active (S-11).

    Args:
        bot_ids: only these bots (a match's seats); None: all.
        game: only versions whose manifest names this game, or names none (they play every game).
    """
    where = ""
    params: list[Any] = []
    if bot_ids is not None:
        where += " AND h.bot_id = ANY(%s)"
        params.append(list(bot_ids))
    if game is not None:
        where += " AND (jsonb_array_length(coalesce(h.manifest->'games', '[]'::jsonb)) = 0 " \
                 "OR h.manifest->'games' ? %s)"
        params.append(game)
    from ladder.bots import held_sql

    cols = ", ".join(f"h.{c.strip()}" for c in _COLS.split(","))
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(f"SELECT {cols} FROM hosted_versions h JOIN bots b ON b.id = h.bot_id "
                    f"WHERE h.status = 'active' AND h.token_hash IS NOT NULL AND h.token_revoked_at IS NULL "
                    f"AND b.revoked_at IS NULL AND NOT {held_sql('b')}{where} ORDER BY h.bot_id", params)
        return {r["bot_id"]: _version(r) for r in cur.fetchall()}
