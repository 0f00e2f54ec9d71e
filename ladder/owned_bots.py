"""Bots owned by accounts: create, rotate the token, retire, challenge policy, versions.

The rules: docs/participants.md, "Bots".

Tokens work exactly as for operator-registered bots (:mod:`ladder.bots`): the
token is shown once, PostgreSQL keeps its sha256, and the live hashes are
published in the Redis hash the referee reads. Rotation is
:func:`ladder.bots.issue_token` (old hash out, new hash in, one Redis
transaction: a new ``Hello`` with the old token is refused at once, a live
stream within the referee's ``token_recheck_ms``); retiring is
:func:`ladder.bots.revoke_bot`. The bot's id, ratings and history never change.

Ownership is checked here, in SQL (``account_id = %s``): an id that is not the
caller's behaves exactly like an id that does not exist (:class:`BotNotFoundError`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg.errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from games.registry import game_names
from ladder.bots import (
    TOKENS_KEY,
    _check_label,
    ensure_published,
    issue_token,
    lock_tokens,
    name_error,
    new_token,
    revoke_bot,
    token_hash,
)
from ladder.db import connection
from ladder.errors import BotLimitError, BotNotFoundError, InvalidBotNameError

MAX_DESCRIPTION = 500
MAX_BOTS_PER_ACCOUNT = 20
"""Bots one account may have, retired ones included (they keep their name, ratings and history):
``PARTERRE_MAX_BOTS_PER_ACCOUNT`` in the web's settings (web/auth.py)."""
BOT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\- ]{0,62}[A-Za-z0-9_.+\-]$|^[A-Za-z0-9]$")
"""Names of participants' bots: 1-64 of letters, digits, ``_ . + -`` and inner spaces (stricter than
operator-registered bots, so a stranger's bot name can neither carry markup nor imitate another by
invisible characters)."""
CHALLENGE_POLICIES = ("accept", "ask", "none")
"""What a bot does with a challenge from another account (``bots.challenge_policy``): ``accept`` every one
(played once its bots are connected), ``ask`` its owner each time (:mod:`ladder.challenge_answers`),
or ``none`` (refused). A bot is created with ``none``."""


@dataclass(frozen=True, slots=True)
class OwnedBot:
    """A bot as its owner sees it (never the token or its hash).

    Attributes:
        games: games it plays (empty = any).
        challenge_policy: one of :data:`CHALLENGE_POLICIES`.
        challenge_games: games it may be challenged in (``None`` = all of ``games``).
        retired: its token is revoked for good (``revoked_at`` set).
    """

    id: int
    name: str
    version: str
    description: str
    account_id: int | None
    games: tuple[str, ...]
    challenge_policy: str
    challenge_games: tuple[str, ...] | None
    created_at: datetime
    token_rotated_at: datetime | None
    revoked_at: datetime | None

    @property
    def retired(self) -> bool:
        return self.revoked_at is not None

    @property
    def accepts_challenges(self) -> bool:
        """The policy before there were policies: true for ``accept`` only (``ask`` and ``none`` are false)."""
        return self.challenge_policy == "accept"

    def challengeable(self, game: str) -> bool:
        """True when another account may challenge this live bot in ``game`` (registry name): its policy is
        ``accept`` or ``ask`` and the game is one of its challenge games."""
        if self.retired or self.challenge_policy == "none":
            return False
        allowed = self.challenge_games if self.challenge_games is not None else self.games
        return not allowed or game in allowed


_COLUMNS = ("id, name, version, description, account_id, games, challenge_policy, challenge_games, "
            "created_at, token_rotated_at, revoked_at")


def _bot(row: dict[str, Any]) -> OwnedBot:
    cg = row["challenge_games"]
    return OwnedBot(row["id"], row["name"], row["version"], row["description"], row["account_id"],
                    tuple(row["games"]), row["challenge_policy"], None if cg is None else tuple(cg),
                    row["created_at"], row["token_rotated_at"], row["revoked_at"])


def check_games(games: Any) -> tuple[str, ...]:
    """Registry names of known games, deduplicated; raise InvalidBotNameError on anything else."""
    if games is None:
        return ()
    if isinstance(games, str) or not isinstance(games, Sequence):
        raise InvalidBotNameError("games must be a list of game names")
    known = set(game_names())
    bad = [g for g in games if g not in known]
    if bad:
        raise InvalidBotNameError(f"unknown games: {', '.join(map(repr, bad))}; known: {', '.join(sorted(known))}")
    return tuple(dict.fromkeys(games))


def resolve_policy(policy: str | None, accepts_challenges: bool | None) -> str | None:
    """The policy asked for by ``policy`` and/or the older ``accepts_challenges`` (true: ``accept``,
    false: ``none``); None when neither is given.

    Raises:
        InvalidBotNameError: an unknown policy, or the two disagree (``accepts_challenges`` reads true
            for ``accept`` only, so false goes with ``ask`` or ``none``).
    """
    if policy is not None and policy not in CHALLENGE_POLICIES:
        raise InvalidBotNameError(f"challenge_policy must be one of {', '.join(CHALLENGE_POLICIES)}, got {policy!r}")
    if policy is not None and accepts_challenges is not None and accepts_challenges != (policy == "accept"):
        raise InvalidBotNameError(f"accepts_challenges {str(accepts_challenges).lower()} contradicts challenge_policy "
                                  f"{policy!r} (true is the policy accept); send challenge_policy alone")
    if policy is None and accepts_challenges is not None:
        return "accept" if accepts_challenges else "none"
    return policy


def _check_description(text: Any) -> str:
    if not isinstance(text, str) or len(text) > MAX_DESCRIPTION:
        raise InvalidBotNameError(f"a description is at most {MAX_DESCRIPTION} characters")
    bad = next((c for c in text if (ord(c) < 32 and c not in "\t\n\r") or 127 <= ord(c) < 160), None)
    if bad is not None:  # PostgreSQL text holds no NUL; other control characters only garble pages
        raise InvalidBotNameError(f"a description holds no control characters (found U+{ord(bad):04X}); "
                                  "line breaks and tabs are fine")
    return text


def create_bot(
    pool: ConnectionPool, account_id: int, name: str, *, description: str = "", games: Sequence[str] = (),
    version: str = "1", accepts_challenges: bool | None = None, policy: str | None = None, redis: Any = None,
    key: str = TOKENS_KEY, max_bots: int = MAX_BOTS_PER_ACCOUNT,
) -> tuple[OwnedBot, str]:
    """Create a bot owned by ``account_id``; returns it and its referee token (shown once).

    Its challenge policy is ``policy``, or the one ``accepts_challenges`` means (:func:`resolve_policy`),
    or ``none``.

    The account's row is locked while its bots are counted and the new one is inserted, so parallel
    creations cannot pass ``max_bots`` together.

    Raises:
        InvalidBotNameError: bad name, version, description, games or policy; a name that reads as starting with
            ``house-`` (``ladder.bots.name_error``).
        BotExistsError: the name is taken, or one that reads as it (``ladder.bots.name_error``: case, spaces,
            punctuation, look-alike characters), by any account or none.
        BotLimitError: the account has ``max_bots`` bots already (retired ones count).
    """
    _check_label("name", name)
    if not BOT_NAME_RE.fullmatch(name):
        raise InvalidBotNameError("a bot name is 1-64 ASCII letters, digits, '_', '.', '+', '-' or inner spaces")
    _check_label("version", version)
    _check_description(description)
    wanted = check_games(games)
    chosen = resolve_policy(policy, accepts_challenges) or "none"
    token = new_token()
    if redis is not None:
        ensure_published(pool, redis, key)
    try:
        with connection(pool) as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            if redis is not None:  # no full publication commits between this one's start and its commit
                lock_tokens(conn, key)
            cur.execute("SELECT id FROM accounts WHERE id = %s FOR UPDATE", (account_id,))
            have = cur.execute("SELECT count(*) AS n FROM bots WHERE account_id = %s", (account_id,)).fetchone()
            if have is not None and have["n"] >= max_bots:
                raise BotLimitError(f"an account has at most {max_bots} bots, retired ones included "
                                    f"(this one has {have['n']}); upload a new version of a bot instead")
            row = cur.execute(
                "INSERT INTO bots (name, version, owner, token_hash, account_id, description, games, "
                "challenge_policy) "
                "VALUES (%s, %s, (SELECT username FROM accounts WHERE id = %s), %s, %s, %s, %s, %s) "
                f"RETURNING {_COLUMNS}",
                (name, version, account_id, token_hash(token), account_id, description, list(wanted), chosen),
            ).fetchone()
            assert row is not None
            if redis is not None:  # before the commit: with Redis down nothing is stored (ladder.bots)
                redis.hset(key, token_hash(token), str(row["id"]))
    except psycopg.errors.IntegrityError as exc:
        refusal = name_error(exc, name, pool)
        if refusal is not None:
            raise refusal from None
        raise
    return _bot(row), token


def get_bot(pool: ConnectionPool, bot_id: int) -> OwnedBot | None:
    """Any bot by id (public fields), or None."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_COLUMNS} FROM bots WHERE id = %s", (bot_id,)).fetchone()
    return _bot(row) if row else None


def owned_bot(pool: ConnectionPool, account_id: int, bot_id: int) -> OwnedBot:
    """The bot if ``account_id`` owns it. Raises BotNotFoundError otherwise (also for someone else's bot)."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_COLUMNS} FROM bots WHERE id = %s AND account_id = %s",
                          (bot_id, account_id)).fetchone()
    if row is None:
        raise BotNotFoundError(f"you have no bot {bot_id}")
    return _bot(row)


def list_owned_bots(pool: ConnectionPool, account_id: int) -> list[OwnedBot]:
    """The account's bots (retired too), by id."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {_COLUMNS} FROM bots WHERE account_id = %s ORDER BY id", (account_id,)).fetchall()
    return [_bot(r) for r in rows]


def rotate_token(pool: ConnectionPool, account_id: int, bot_id: int, *, redis: Any = None,
                 key: str = TOKENS_KEY) -> str:
    """New referee token for the owner's bot; the old one is refused from now on (ladder.bots.issue_token).

    Raises:
        BotNotFoundError: not the caller's bot. BotRevokedError: the bot is retired.
    """
    owned_bot(pool, account_id, bot_id)
    token = issue_token(pool, bot_id, redis=redis, key=key)
    with connection(pool) as conn:
        conn.execute("UPDATE bots SET token_rotated_at = now() WHERE id = %s", (bot_id,))
    return token


def retire_bot(pool: ConnectionPool, account_id: int, bot_id: int, *, redis: Any = None,
               key: str = TOKENS_KEY) -> OwnedBot:
    """Retire the owner's bot for good: its token is revoked; matches and ratings stay."""
    owned_bot(pool, account_id, bot_id)
    revoke_bot(pool, bot_id, redis=redis, key=key)
    return owned_bot(pool, account_id, bot_id)


def update_settings(pool: ConnectionPool, account_id: int, bot_id: int, *, description: str | None = None,
                    games: Sequence[str] | None = None, accepts_challenges: bool | None = None,
                    policy: str | None = None, challenge_games: Sequence[str] | None | bool = False) -> OwnedBot:
    """Change the owner's bot: description, games, challenge policy (``policy`` and/or the older
    ``accepts_challenges``: :func:`resolve_policy`; None = leave unchanged), challenge games
    (``challenge_games=None`` = all its games; ``False`` = leave unchanged).

    A new policy applies to challenges made from now on; ``none`` (or a game dropped) also ends the
    challenges still asking or waiting (:func:`ladder.challenges.dispatch_challenges`). A challenge
    already asking the owner keeps asking under ``accept`` until answered or expired.

    Raises:
        BotNotFoundError, InvalidBotNameError.
    """
    owned_bot(pool, account_id, bot_id)
    sets: list[str] = []
    params: list[Any] = []
    if description is not None:
        sets.append("description = %s")
        params.append(_check_description(description))
    if games is not None:
        sets.append("games = %s")
        params.append(list(check_games(games)))
    chosen = resolve_policy(policy, accepts_challenges)
    if chosen is not None:
        sets.append("challenge_policy = %s")
        params.append(chosen)
    if challenge_games is not False:
        sets.append("challenge_games = %s")
        params.append(None if challenge_games is None else list(check_games(challenge_games)))
    if sets:
        with connection(pool) as conn:
            conn.execute(f"UPDATE bots SET {', '.join(sets)} WHERE id = %s AND account_id = %s",
                         (*params, bot_id, account_id))
    return owned_bot(pool, account_id, bot_id)


# -- versions (public) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VersionRow:
    """How one announced version of a bot did in one game.

    Attributes:
        version: what the bot sent in ``Hello.version`` (``seats.bot_version``).
        matches / wins / faults: finished matches, sole first places, seats with a fault verdict.
        avg_rank: mean rank (1 = best). elo_delta: sum of its Elo changes.
        first_played / last_played: finishing times of its first and last match.
    """

    version: str
    game: str
    matches: int
    wins: int
    faults: int
    avg_rank: float
    elo_delta: float
    first_played: datetime | None
    last_played: datetime | None


def bot_versions(pool: ConnectionPool, bot_id: int) -> list[VersionRow]:
    """Per (version, game): matches, wins, faults, mean rank and Elo gained, newest version first."""
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            """
            SELECT coalesce(s.bot_version, '?') AS version, m.game, count(*) AS matches,
                   count(*) FILTER (WHERE s.rank = 1 AND NOT EXISTS (
                       SELECT 1 FROM seats o
                       WHERE o.match_id = s.match_id AND o.seat <> s.seat AND o.rank = 1)) AS wins,
                   count(*) FILTER (WHERE s.verdict NOT IN ('normal')) AS faults,
                   avg(s.rank)::float AS avg_rank, coalesce(sum(h.delta), 0)::float AS elo_delta,
                   min(m.finished_at) AS first_played, max(m.finished_at) AS last_played
            FROM seats s JOIN matches m ON m.id = s.match_id
            LEFT JOIN rating_history h ON h.match_id = s.match_id AND h.bot_id = s.bot_id
            WHERE s.bot_id = %s AND m.status = 'finished'
            GROUP BY 1, 2 ORDER BY max(m.finished_at) DESC, 1, 2
            """,
            (bot_id,),
        ).fetchall()
    return [VersionRow(**r) for r in rows]
