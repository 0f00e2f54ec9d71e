"""The continuous ladder's rounds: pairing online bots, fewest games first (docs/faults.md F-12), and
each bot with the boss of its next league gate now and then (docs/ladder.md "Leagues")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from psycopg_pool import ConnectionPool

from games.registry import load_game
from ladder import elo, fair_play, leagues
from ladder.db import run_transaction
from ladder.errors import TournamentError
from ladder.match_plans import TimeControl, _insert_matches, new_seed

BOSS_EVERY = 3
"""A bot whose next league boss is online plays it in one round of this many (docs/ladder.md "Leagues")."""

BOSS_MAX_PENDING = 8
"""Most planned or running matches the ladder gives one boss (a house bot plays 8 at once)."""

LADDER_KEY_PREFIX = "ladder:"
"""Plan keys of continuous-ladder matches start with this (matches without a tournament)."""


def ladder_round_prefix(game_string: str, round_no: int) -> str:
    """The plan-key prefix of one ladder round of one game string: ``ladder:<game string>:r<round>:``."""
    return f"{LADDER_KEY_PREFIX}{load_game(game_string).game_string()}:r{int(round_no)}:"


def plan_ladder_round(
    pool: ConnectionPool,
    *,
    game_string: str,
    round_no: int,
    bot_ids: Sequence[int],
    max_pending: int = 2,
    time_control: TimeControl | Mapping[str, Any] | None = None,
) -> list[int]:
    """Plan one round of the continuous ladder; idempotent per ``(game_string, round_no)`` (docs/faults.md F-12).

    Pairing, fewest games first: of ``bot_ids`` (the bots online
    now), drop revoked bots, bots registered for other games only (``bots.games``, set
    by their owner; empty: every game), house bots (:mod:`ladder.house`: they are there
    to be challenged, to fill gauntlets and to keep the leagues' gates, not to play each other
    forever; a house bot is seated only as a league boss, below)
    and bots with ``max_pending`` or more planned or running matches (any
    match, ladder or not); order the rest by games
    played in this game (rated games, plus their pending matches), ties in a
    random order drawn from the round's key; cut that list into tables of the
    game's seat count, never seating two bots of one account at a table, two bots
    more than :data:`ladder.fair_play.MAX_RATED_GAP` Elo apart in the game, or bots
    of two accounts that already have :data:`ladder.fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY`
    rated matches without a tournament in the game in the last 24 hours
    (:func:`tables_of`; a bot no table fits waits for a later round); each table's
    seats in a random order.

    League bosses (docs/ladder.md "Leagues"), in a game of two seats: a bot whose next gate's
    boss (:func:`ladder.leagues.next_bosses`) is among ``bot_ids`` and not revoked plays that
    boss instead of a bot this round when ``(round_no + bot id) % BOSS_EVERY == 0``, and also
    when no table fits it this round; the boss is seated whatever the rating gap (a boss beaten
    by everyone sinks far below the bots that still have to pass it) and until it has
    :data:`BOSS_MAX_PENDING` planned or running matches. House bots never meet each other.

    Every match is a match without a tournament, with the plan key
    ``ladder:<game string>:r<round>:<sorted bot ids>``.

    Two schedulers planning the same round (two ``parterre beat`` processes)
    make one set of matches: the transaction takes an advisory lock on the
    round's key and, if any match of the round exists, returns the existing
    ones without planning anything.

    Args:
        pool: ladder connection pool.
        game_string: the game and its options, e.g. ``floriferous(players=2)``.
        round_no: the round (the ladder uses ``floor(unix time / period)``).
        bot_ids: candidate bots (online now).
        max_pending: cap on a bot's planned/running matches.
        time_control: as for :func:`plan_match`.

    Returns:
        The round's match ids, ascending (new or already planned).

    Raises:
        games.api.UnknownGameError / games.api.InvalidOptionError: bad game string.
        TournamentError: ``max_pending`` < 1.
    """
    import random

    if max_pending < 1:
        raise TournamentError(f"max_pending must be at least 1, got {max_pending}")
    loaded = load_game(game_string)
    canonical = loaded.game_string()
    prefix = ladder_round_prefix(canonical, round_no)
    tc = TimeControl.parse(time_control)
    candidates = sorted({int(b) for b in bot_ids})

    def plan(conn: Any) -> list[int]:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (prefix,))
        existing = [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM matches WHERE tournament_id IS NULL AND starts_with(plan_key, %s) ORDER BY id",
                (prefix,),
            ).fetchall()
        ]
        if existing or len(candidates) < loaded.num_players:
            return existing
        live = {
            int(r[0]): r[1]
            for r in conn.execute(
                "SELECT id, account_id FROM bots WHERE id = ANY(%s::bigint[]) AND revoked_at IS NULL "
                "AND (cardinality(games) = 0 OR %s = ANY(games)) "
                "AND NOT house", (candidates, loaded.name)
            ).fetchall()
        }
        pending = dict(
            conn.execute(
                "SELECT s.bot_id, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                "WHERE m.status IN ('planned', 'running') AND s.bot_id = ANY(%s::bigint[]) GROUP BY s.bot_id",
                (candidates,),
            ).fetchall()
        )
        played: dict[int, int] = {}
        rating: dict[int, float] = {}
        for b, games, r in conn.execute(
            "SELECT bot_id, games, elo FROM ratings WHERE game = %s AND bot_id = ANY(%s::bigint[])",
            (loaded.name, candidates),
        ).fetchall():
            played[int(b)], rating[int(b)] = int(games), float(r)
        met = fair_play.ladder_pair_counts(conn, loaded.name, [a for a in live.values() if a is not None])

        def fits(x: int, y: int) -> bool:
            gap = abs(rating.get(x, elo.INITIAL_RATING) - rating.get(y, elo.INITIAL_RATING))
            owners = frozenset((live[x], live[y]))
            return gap <= fair_play.MAX_RATED_GAP and met.get(owners, 0) < fair_play.MAX_RATED_PER_ACCOUNT_PAIR_DAY
        rng = random.Random(prefix)
        eligible = [b for b in candidates if b in live and int(pending.get(b, 0)) < max_pending]
        keyed = [(int(played.get(b, 0)) + int(pending.get(b, 0)), rng.random(), b) for b in eligible]
        order = [b for *_, b in sorted(keyed)]
        n = loaded.num_players
        boss_of: dict[int, int] = {}
        if n == 2 and order:
            nxt = leagues.next_bosses(conn, loaded.name, order)
            online = {int(r[0]) for r in conn.execute(
                "SELECT id FROM bots WHERE id = ANY(%s::bigint[]) AND house AND revoked_at IS NULL",
                (sorted(set(nxt.values()) & set(candidates)),)).fetchall()}
            boss_of = {b: x for b, x in nxt.items() if x in online}
        load = {x: int(pending.get(x, 0)) for x in boss_of.values()}
        tables: list[list[int]] = []

        def against_boss(bot: int) -> bool:
            boss = boss_of.get(bot)
            if boss is None or load[boss] >= BOSS_MAX_PENDING:
                return False
            load[boss] += 1
            tables.append([bot, boss])
            return True

        due = {b for b in order if (round_no + b) % BOSS_EVERY == 0 and against_boss(b)}
        rest = [b for b in order if b not in due]
        tables.extend(tables_of(rest, n, live, fits))
        seated = {b for t in tables for b in t}
        for b in rest:
            if b not in seated:
                against_boss(b)
        todo = []
        for table in tables:
            seats = list(table)
            rng.shuffle(seats)
            seed, commitment = new_seed()
            key = prefix + "-".join(str(b) for b in sorted(table))
            todo.append((key, canonical, seed, commitment, seats))
        if todo:
            _insert_matches(conn, None, loaded.name, tc.to_json(), todo)
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM matches WHERE tournament_id IS NULL AND starts_with(plan_key, %s) ORDER BY id",
                (prefix,),
            ).fetchall()
        ]

    return run_transaction(pool, plan)


def tables_of(
    order: Sequence[int],
    n: int,
    account: Mapping[int, int | None],
    fits: Callable[[int, int], bool] | None = None,
) -> list[list[int]]:
    """Cut ``order`` (bot ids, first = most due) into tables of ``n`` with no two bots of one account.

    Each table starts with the first bot left and takes, in order, the next bots left whose account
    is not at the table yet (bots of no account, ``None``, never clash) and that ``fits`` every bot
    already seated; a first bot no table can be filled around waits for a later round, and so do the
    bots left over. Two bots of one account are never rated against each other (docs/participants.md
    "Fair play"), so the ladder does not spend a table on them.

    Args:
        order: bot ids, most due first.
        n: seats per table (>= 1).
        account: bot id -> account id (or None) for every bot of ``order``.
        fits: whether two bots of different accounts may share a table (the rating gap and the
            daily cap per pair of accounts, see :func:`plan_ladder_round`); ``None``: any two.

    Returns:
        The tables, each in ``order``'s order.

    Linear in ``len(order)`` when most bots fit the first ones left (10^4 bots online: docs/benchmarks.md):
    seated and waiting bots are marked, not removed one by one, and the list is compacted when half of it
    is marked. ``order`` holds each bot once.
    """
    left = list(order)
    gone: set[int] = set()  # seated, or waiting for a later round
    start = 0  # left[:start] are all gone
    dead = 0  # gone bots in left[start:]
    remaining = len(left)
    tables = []
    while remaining >= n:
        while left[start] in gone:
            start += 1
            dead -= 1
        if dead > (len(left) - start) // 2:
            left, start, dead = [b for b in left[start:] if b not in gone], 0, 0
        table: list[int] = []
        taken: set[int] = set()
        for i in range(start, len(left)):
            bot = left[i]
            if bot in gone:
                continue
            owner = account.get(bot)
            if owner is not None and owner in taken:
                continue
            if fits is not None and not all(fits(bot, other) for other in table):
                continue
            table.append(bot)
            if owner is not None:
                taken.add(owner)
            if len(table) == n:
                break
        if len(table) < n:  # no table around the most due bot this round; the next ones may still play
            gone.add(left[start])
            start += 1
            remaining -= 1
            continue
        tables.append(table)
        gone.update(table)
        remaining -= n
        dead += n - 1  # the table's first bot is left[start], skipped at the next turn
    return tables
