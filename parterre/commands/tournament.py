"""``parterre tournament create|enter|run|list|show``: tournaments on the workers."""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

FORMAT_CHOICES = ("round-robin", "gauntlet", "duplicate")
"""``--format`` values (stored as ``round_robin``, ``gauntlet``, ``duplicate``)."""

_DURATION = re.compile(r"^\+(\d+(?:\.\d+)?)([smhd]?)$")


def parse_deadline(text: str, now: datetime | None = None, *, flag: str = "--entry-deadline") -> datetime:
    """``+90s``, ``+10m``, ``+2h``, ``+1d`` (``+N`` = seconds) from now, or an ISO-8601 time with a zone.

    Raises:
        CliError: anything else, or an ISO time without a zone (the message names ``flag``).
    """
    m = _DURATION.match(text.strip())
    if m:
        factor = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return (now or datetime.now(UTC)) + timedelta(seconds=float(m.group(1)) * factor)
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise CliError(f"{flag} {text!r}: expected +DURATION (e.g. +10m) or an ISO-8601 time") from None
    if when.tzinfo is None:
        raise CliError(f"{flag} {text!r}: give a time zone (e.g. 2026-12-01T21:00+00:00)")
    return when


def _bot_id(pool: ConnectionPool, ref: str) -> int:
    from ladder import bots

    bot = bots.find_bot(pool, ref.strip())
    if bot is None:
        raise CliError(f"no bot named or numbered {ref.strip()!r}")
    return int(bot.id)


def cmd_tournament_create(args: argparse.Namespace) -> int:
    """Create a tournament (round-robin, gauntlet or duplicate, with or without an entry window); print its id."""
    from games.api import GameError
    from ladder import tournaments

    services = common.services()
    pool = common.pool(services)
    bot_ids = [_bot_id(pool, ref) for ref in (args.bots or "").split(",") if ref.strip()]
    if not bot_ids and not args.entry_deadline:
        raise CliError("give --bots, or an entry window with --entry-deadline (bots then enter with "
                       "`parterre tournament enter`)")
    if args.candidate and args.format != "gauntlet":
        raise CliError("--candidate is for --format gauntlet")
    if args.format == "gauntlet" and not args.candidate:
        raise CliError("a gauntlet needs --candidate BOT")
    candidate = _bot_id(pool, args.candidate) if args.candidate else None
    deadline = parse_deadline(args.entry_deadline) if args.entry_deadline else None
    try:
        tid = tournaments.create_tournament(
            pool,
            name=args.name or f"{args.game} {args.format}",
            game=args.game,
            format=args.format,
            bot_ids=bot_ids,
            candidate_bot_id=candidate,
            entry_deadline=deadline,
            player_counts=tuple(common.int_list("--players", args.players)),
            rounds=args.rounds,
            time_control=common.parse_time_control(args.time_control),
            game_options=common.game_options(args.option),
        )
    except (GameError, ValueError, LookupError) as exc:
        raise CliError(str(exc)) from None
    print(tid)
    return 0


def cmd_tournament_enter(args: argparse.Namespace) -> int:
    """Enter a bot into a tournament whose entry window is open."""
    from ladder.entries import enter_tournament

    pool = common.pool(common.services())
    bot_id = _bot_id(pool, args.bot)
    try:
        enter_tournament(pool, args.tournament_id, bot_id)
    except (ValueError, LookupError) as exc:
        raise CliError(str(exc)) from None
    print(f"bot {args.bot} entered tournament {args.tournament_id}")
    return 0


WAIT_EXIT_FINISHED = 0
"""``tournament run --wait``: every match finished."""
WAIT_EXIT_UNFINISHED = 1
"""``tournament run --wait``: the tournament ended, but some matches failed or were aborted (no-show)."""
WAIT_EXIT_TIMEOUT = 3
"""``tournament run --wait``: ``--timeout`` passed with matches still planned or running (2 is bad input)."""


def tally_lines(tournament_id: int, counts: dict[str, int], unfinished: list[dict[str, Any]]) -> list[str]:
    """The final tally of ``--wait``: counts by status, then each match that did not finish and why."""
    total = sum(counts.values())
    order = ("finished", "failed", "aborted_no_show", "planned", "running")
    parts = [f"{counts[s]} {s}" for s in order if counts.get(s)]
    parts += [f"{n} {s}" for s, n in sorted(counts.items()) if s not in order and n]
    lines = [f"tournament {tournament_id}: {total} matches: " + ", ".join(parts or ["none"])]
    for m in unfinished:
        why = f": {m['error']}" if m["error"] else ""
        lines.append(f"  match {m['match_id']} ({m['plan_key']}) {m['status']} after {m['attempts']} "
                     f"attempt(s){why}"[:400])
    shown = len(unfinished)
    rest = total - counts.get("finished", 0) - shown
    if rest > 0:
        lines.append(f"  ... and {rest} more (`parterre tournament show {tournament_id}`)")
    return lines


def cmd_tournament_run(args: argparse.Namespace) -> int:
    """Queue the planning of a tournament's matches; with ``--wait``, show progress to the end.

    With ``--wait`` it prints the final tally by status (and why each match
    that did not finish ended so) and exits :data:`WAIT_EXIT_FINISHED` (0),
    :data:`WAIT_EXIT_UNFINISHED` (1) or :data:`WAIT_EXIT_TIMEOUT` (3).
    """
    from ladder.tournament_tables import final_table
    from parterre.demo import through_outage, wait_for_tournament

    services = common.services(need_redis=True)
    os.environ["PARTERRE_REDIS_URL"] = services.redis_url
    pool = common.pool(services)
    try:
        table = final_table(pool, args.tournament_id)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    if table.status == "open":
        raise CliError(f"tournament {args.tournament_id} is open for entries until {table.entry_deadline}; "
                       "the workers plan and run it when the window closes")
    if table.status == "cancelled":
        raise CliError(f"tournament {args.tournament_id} is cancelled" +
                       (f": {table.outcome}" if table.outcome else ""))
    if table.complete:
        print(f"tournament {args.tournament_id} has already finished: nothing to run "
              f"(`parterre tournament show {args.tournament_id}` prints its table)")
        return 0
    from workers.app import app
    from workers.tasks import plan_tournament

    app.conf.update(broker_url=services.redis_url)
    plan_tournament.delay(args.tournament_id)
    print(f"tournament {args.tournament_id}: planning queued")
    if not args.wait:
        return 0
    from ladder.tournaments import MATCH_STATUSES, tournament_status, unfinished_matches

    timed_out = None
    deadline = time.monotonic() + args.timeout
    try:
        wait_for_tournament(pool, args.tournament_id, timeout_s=args.timeout)
    except TimeoutError as exc:
        timed_out = str(exc)

    def tally() -> tuple[dict[str, Any], list[Any]]:
        return tournament_status(pool, args.tournament_id), unfinished_matches(pool, args.tournament_id)

    say = functools.partial(print, file=sys.stderr, flush=True)
    try:  # the tally is read through an outage too, for at most 60 s past --timeout
        status, unfinished = through_outage(tally, max(deadline, time.monotonic()) + 60.0, say,
                                            f"the tally of tournament {args.tournament_id}")
    except TimeoutError as exc:
        print(f"tournament {args.tournament_id}: the final tally cannot be read: {exc}", file=sys.stderr)
        return WAIT_EXIT_TIMEOUT
    counts = {s: int(status[s]) for s in MATCH_STATUSES if status[s]}
    for line in tally_lines(args.tournament_id, counts, unfinished):
        print(line)
    if timed_out is not None:
        print(f"gave up waiting after {args.timeout:g} s (--timeout): {timed_out}", file=sys.stderr)
        return WAIT_EXIT_TIMEOUT
    if counts.get("finished", 0) != sum(counts.values()):
        print(f"tournament {args.tournament_id}: {sum(counts.values()) - counts.get('finished', 0)} match(es) did "
              "not finish", file=sys.stderr)
        return WAIT_EXIT_UNFINISHED
    return WAIT_EXIT_FINISHED


def cmd_tournament_list(args: argparse.Namespace) -> int:
    """Print the newest tournaments: id, name, game, format, state, progress."""
    from ladder.tournament_tables import list_tournaments

    pool = common.pool(common.services())
    rows = list_tournaments(pool, limit=args.limit, game=args.game)
    if args.json:
        common.print_json([r.to_json() for r in rows])
        return 0
    for r in rows:
        window = f"\tentries until {r.entry_deadline:%Y-%m-%d %H:%M:%S %Z}" if r.state == "open" else ""
        print(f"{r.id}\t{r.name}\t{r.game}\t{r.format.replace('_', '-')}\t{r.state}\t"
              f"{r.finished}/{r.total} finished\t{r.entrants} bots{window}")
    return 0


def cmd_tournament_show(args: argparse.Namespace) -> int:
    """Print a tournament's settings, standings and its format's final table."""
    from ladder.tournament_tables import final_table
    from parterre.tournament_view import final_table_lines

    pool = common.pool(common.services())
    try:
        table = final_table(pool, args.tournament_id)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        common.print_json(table.to_json())
        return 0
    for line in final_table_lines(table):
        print(line)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``tournament create|enter|run|list|show``."""
    t = sub.add_parser("tournament", help="create, enter, run, list and show tournaments").add_subparsers(
        dest="t_cmd", required=True)
    tc = t.add_parser("create", help="create a tournament; prints its id")
    tc.add_argument("--game", required=True, help="game name, e.g. floriferous")
    tc.add_argument("--format", choices=FORMAT_CHOICES, default="round-robin",
                    help="round-robin (everyone meets everyone), gauntlet (--candidate against the others), "
                         "duplicate (the round-robin on one deal per round and player count)")
    tc.add_argument("--candidate", help="a gauntlet's candidate bot (name or id)")
    tc.add_argument("--bots", help="comma-separated bot names or ids (a gauntlet's pool; first entrants of a window)")
    tc.add_argument("--entry-deadline", metavar="WHEN",
                    help="open an entry window until WHEN: +DURATION (+90s, +10m, +2h) or an ISO-8601 time; "
                         "the workers run it when the window closes")
    tc.add_argument("--players", default="2", help="player counts, e.g. 2,3,4")
    tc.add_argument("--rounds", type=int, default=1, help="times each pairing is played")
    tc.add_argument("--time-control", default="1000+100", help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    tc.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    tc.add_argument("--name", help="tournament name (default: generated from game and format)")
    tc.set_defaults(func=cmd_tournament_create)
    te = t.add_parser("enter", help="enter a bot into a tournament whose entry window is open")
    te.add_argument("tournament_id", type=int, help="the tournament's id")
    te.add_argument("bot", help="bot name or id")
    te.set_defaults(func=cmd_tournament_enter)
    tr = t.add_parser("run", help="plan and queue a tournament's matches on the workers")
    tr.add_argument("tournament_id", type=int, help="the tournament's id")
    tr.add_argument("--wait", action="store_true",
                    help="show progress until every match is done, print the tally by status; exit 0 when every "
                         "match finished, 1 when some failed or were aborted, 3 at --timeout")
    tr.add_argument("--timeout", type=float, default=3600, help="seconds --wait waits")
    tr.set_defaults(func=cmd_tournament_run)
    tl = t.add_parser("list", help="the newest tournaments with their state")
    tl.add_argument("--game", help="only this game (default: every game)")
    tl.add_argument("--limit", type=int, default=50, help="how many, newest first")
    tl.add_argument("--json", action="store_true", help="print JSON instead of text")
    tl.set_defaults(func=cmd_tournament_list)
    ts = t.add_parser("show", help="a tournament's standings and its format's final table")
    ts.add_argument("tournament_id", type=int, help="the tournament's id")
    ts.add_argument("--json", action="store_true", help="print JSON instead of text")
    ts.set_defaults(func=cmd_tournament_show)
