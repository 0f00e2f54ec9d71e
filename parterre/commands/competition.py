"""``parterre competition create|list|show|enter|lock|evaluate|disqualify|extend`` (docs/competitions.md).

The operator's tools (database access, like ``parterre admin``): the organiser tools act as the
operator; entries are made for the bot's own account. The workers' competition tick
(``parterre beat``) plays the season and the final evaluation's batches; ``evaluate`` starts (or
re-runs) the evaluation at once and queues its first batch on the workers.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers
from parterre.commands.tournament import parse_deadline

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

ERRORS = (ValueError, LookupError, PermissionError)
"""What the ladder raises for bad input (``Competition*Error``, ``BotNotFoundError``, the games' errors)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _pool() -> ConnectionPool:
    return common.pool(common.services())


def _bot(pool: ConnectionPool, ref: str) -> tuple[int, int]:
    """``(bot id, its account id)`` of a bot named or numbered ``ref``."""
    from ladder.bots import find_bot
    from ladder.owned_bots import get_bot

    found = find_bot(pool, ref.strip())
    if found is None:
        raise CliError(f"no bot named or numbered {ref.strip()!r}")
    bot = get_bot(pool, found.id)
    if bot is None or bot.account_id is None:
        raise CliError(f"bot {ref!r} belongs to no account; an account enters its own bots in a competition")
    return bot.id, bot.account_id


def _account(pool: ConnectionPool, username: str) -> int:
    from ladder.accounts import get_account

    account = get_account(pool, username)
    if account is None:
        raise CliError(f"no account {username!r}")
    return account.id


def _text(path: str | None) -> str:
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}") from None


def cmd_create(args: argparse.Namespace) -> int:
    """Create a competition; print its id (or it, with ``--json``)."""
    from ladder import competitions

    pool = _pool()
    now = _now()
    try:
        c = competitions.create_competition(
            pool, organiser_id=_account(pool, args.organiser), name=args.name, game=args.game, now=now,
            opens_at=parse_deadline(args.opens, now, flag="--opens") if args.opens else None,
            deadline_at=parse_deadline(args.deadline, now, flag="--deadline"),
            final_at=parse_deadline(args.final, now, flag="--final") if args.final else None,
            game_options=common.game_options(args.option), player_counts=common.int_list("--players", args.players),
            time_control=common.parse_time_control(args.time_control), entry_mode=args.entry_mode,
            max_entrants_per_account=args.max_bots_per_account, max_versions_per_day=args.max_versions_per_day,
            description=_text(args.description_file), rules=_text(args.rules_file), final_budget=args.budget,
            final_max_batches=args.max_batches)
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    if args.json:
        common.print_json(c.to_json(now))
    else:
        print(c.id)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """The newest competitions: id, name, game, status, entrants, deadline."""
    from ladder import competitions

    now = _now()
    rows = competitions.list_competitions(_pool(), limit=args.limit, game=args.game)
    if args.json:
        common.print_json([c.to_json(now) for c in rows])
        return 0
    for c in rows:
        print(f"{c.id}\t{c.name}\t{c.game}\t{c.status(now)}\t{c.entrants} bots\t"
              f"deadline {c.deadline_at:%Y-%m-%d %H:%M %Z}")
    return 0


def _fmt(x: float | None, spec: str = ".0f") -> str:
    return "-" if x is None else format(x, spec)


def show_lines(c: Any, entrants: list[Any], season: Any, ev: Any, final: list[Any], now: datetime) -> Iterator[str]:
    """The text of ``parterre competition show``."""
    counts = "/".join(str(n) for n in c.player_counts)
    yield f"competition {c.id}: {c.name} — {c.game}, {counts} players, {c.status(now)}"
    entry = "hosted bots only" if c.entry_mode == "hosted" else "hosted or connected"
    yield (f"organiser {c.organiser}; entry: {entry}; at most {c.max_entrants_per_account} bot(s) per account, "
           f"{c.max_versions_per_day} new version(s) a day")
    yield (f"opens {c.opens_at.isoformat()}; deadline {c.deadline_at.isoformat()}; final evaluation "
           f"{c.final_at.isoformat()}" + (f"; versions locked {c.locked_at.isoformat()}" if c.locked_at else ""))
    yield ""
    yield "entrants"
    yield "bot\taccount\tlocked version\tnote"
    for e in entrants:
        note = f"disqualified: {e.disqualified_reason}" if e.disqualified_at else ("retired" if e.retired else "")
        yield f"{e.name}\t{e.account}\t{e.locked_version or '-'}\t{note}"
    yield ""
    yield f"season table ({season.matches} matches; {season.model}; 95 % intervals)"
    yield "#\tbot\trating\tinterval\tmatches"
    for r in season.rows:
        place = "DQ" if r.disqualified else str(r.place)
        yield f"{place}\t{r.name}\t{_fmt(r.rating)}\t[{_fmt(r.low)}, {_fmt(r.high)}]\t{r.matches}"
    if ev is None:
        return
    yield ""
    yield from evaluation_lines(ev, {e.bot_id: e.name for e in entrants})
    if final:
        yield ""
        yield "final table (a shared place: the results do not separate those bots)"
        yield "place\tbot\trating\tinterval\tz vs next\tmatches\tstanding"
        for r in final:
            yield (f"{r.place}\t{r.name}\t{_fmt(r.rating)}\t[{_fmt(r.low)}, {_fmt(r.high)}]\t{_fmt(r.z_next, '.2f')}\t"
                   f"{r.matches}\t{r.standing}")


def evaluation_lines(ev: Any, names: dict[int, str]) -> Iterator[str]:
    """The final evaluation's parameters, estimate and progress (``names``: bot id -> name)."""
    p = ev.params
    yield (f"final evaluation run {ev.run}: {ev.status}" + (f" ({ev.stop_reason})" if ev.stop_reason else "")
           + f"; seed {ev.seed or 'hidden until it ends'} (sha256 {ev.seed_commitment[:16]}...)")
    yield (f"  budget {p['budget']} matches, at most {p['max_batches']} batches; neighbours separated at "
           f"z >= {p['critical_z']}")
    yield f"  estimate before it started ({ev.estimate['model']}):"
    for pair in ev.estimate["pairs"]:
        need = (f"about {pair['matches']} matches" if pair["matches"] is not None
                else "no season gap: expected to share a place")
        upper, lower = (names.get(pair[k], f"bot {pair[k]}") for k in ("upper", "lower"))
        yield f"    {upper} > {lower}: {pair['gap']} Elo apart in the season, {need}"
    yield (f"    total about {ev.estimate['total_matches']} matches"
           + (f" ({ev.estimate['unknown']} pair(s) not estimated)" if ev.estimate["unknown"] else ""))
    overlapping = "-" if ev.overlapping is None else ev.overlapping
    yield (f"  progress: {ev.batches} batch(es), {ev.matches_played}/{ev.matches_planned} matches played, "
           f"{overlapping} neighbouring pair(s) not separated")
    if ev.recomputed_at:
        yield f"  recomputed {ev.recomputed_at.isoformat()}: {ev.recomputed_reason}"


def cmd_show(args: argparse.Namespace) -> int:
    """A competition's settings, entrants, season table, final evaluation and final table."""
    from ladder import competition_final, competition_season, competitions

    pool = _pool()
    now = _now()
    try:
        c = competitions.get_competition(pool, args.competition_id)
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    entrants = competitions.entrants(pool, c.id)
    season = competition_season.season_table(pool, c.id)
    ev = competition_final.evaluation(pool, c.id)
    final = competition_final.final_table(pool, c.id)
    if args.json:
        common.print_json({"competition": c.to_json(now), "entrants": [e.to_json() for e in entrants],
                           "season": common.row_dict(season), "evaluation": ev.to_json() if ev else None,
                           "final": [common.row_dict(r) for r in final], "events": competitions.events(pool, c.id)})
        return 0
    for line in show_lines(c, entrants, season, ev, final, now):
        print(line)
    return 0


def cmd_enter(args: argparse.Namespace) -> int:
    """Enter a bot for its own account."""
    from ladder import competitions

    pool = _pool()
    bot_id, account_id = _bot(pool, args.bot)
    try:
        competitions.enter_competition(pool, args.competition_id, bot_id, account_id=account_id, now=_now())
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    print(f"bot {args.bot} entered competition {args.competition_id}")
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    """Lock the entrants' versions (after the deadline; the workers' tick does it too)."""
    from ladder import competitions

    try:
        rows = competitions.lock_versions(_pool(), args.competition_id, now=_now())
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    for e in rows:
        print(f"{e.name}\tversion {e.locked_version or '-'}")
    return 0


def _queue(services: Any, match_ids: list[int]) -> None:
    from workers.app import app
    from workers.tasks import run_match

    app.conf.update(broker_url=services.redis_url)
    for match_id in match_ids:
        run_match.delay(match_id)


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Start the final evaluation (or re-run it from its seed), print its estimate, queue its first batch."""
    from ladder import competition_final, competitions

    services = common.services(need_redis=True)
    pool = common.pool(services)
    now = _now()
    try:
        if args.rerun:
            ev, planned = competitions.rerun(pool, args.competition_id, actor_id=None, now=now,
                                             fresh_seed=args.fresh_seed)
        else:
            ev, planned = competition_final.start_evaluation(pool, args.competition_id, now=now, seed=args.seed,
                                                             budget=args.budget, max_batches=args.max_batches)
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    if args.json:
        common.print_json({"evaluation": ev.to_json(), "queued": planned})
    else:
        names = {e.bot_id: e.name for e in competitions.entrants(pool, args.competition_id)}
        for line in evaluation_lines(ev, names):
            print(line)
        print(f"  batch 1: {len(planned)} match(es) queued; `parterre beat` plays the next batches")
    _queue(services, planned)
    return 0


def cmd_disqualify(args: argparse.Namespace) -> int:
    """Disqualify one entrant bot or every entrant of an account."""
    from ladder import competitions

    pool = _pool()
    bot_id = _bot(pool, args.bot)[0] if args.bot else None
    account_id = _account(pool, args.account) if args.account else None
    try:
        bots = competitions.disqualify(pool, args.competition_id, actor_id=None, reason=args.reason, now=_now(),
                                       bot_id=bot_id, account_id=account_id)
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    print(f"competition {args.competition_id}: bot(s) {', '.join(map(str, bots))} disqualified")
    return 0


def cmd_extend(args: argparse.Namespace) -> int:
    """Move the deadline later (and the final evaluation with it, unless ``--final``)."""
    from ladder import competitions

    now = _now()
    try:
        c = competitions.extend_deadline(
            _pool(), args.competition_id, actor_id=None, now=now,
            deadline_at=parse_deadline(args.deadline, now, flag="--deadline"),
            final_at=parse_deadline(args.final, now, flag="--final") if args.final else None)
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    print(f"competition {c.id}: deadline {c.deadline_at.isoformat()}, final evaluation {c.final_at.isoformat()}")
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    """Write a finished competition's dataset (docs/competitions.md, "The results archive")."""
    from pathlib import Path

    from ladder.competition_dataset import write_dataset

    try:
        manifest = write_dataset(_pool(), args.competition_id, Path(args.output), now=_now())
    except ERRORS as exc:
        raise CliError(str(exc)) from None
    size = sum(f["bytes"] for f in manifest["files"])
    print(f"competition {args.competition_id}: {len(manifest['files'])} matches, {size:,} bytes compressed, in "
          f"{args.output} (check it: parterre replay verify {args.output})")
    return 0


def register(sub: Subparsers) -> None:
    """Add ``competition create|list|show|enter|lock|evaluate|disqualify|extend|dataset``."""
    from ladder.competitions import DEFAULT_BUDGET, DEFAULT_MAX_BATCHES

    t = sub.add_parser("competition", help="competitions: a season until a deadline, then a final evaluation"
                       ).add_subparsers(dest="c_cmd", required=True)
    cr = t.add_parser("create", help="create a competition; prints its id")
    cr.add_argument("--name", required=True, help="its name")
    cr.add_argument("--game", required=True, help="game name, e.g. floriferous")
    cr.add_argument("--organiser", required=True, help="the organiser's account (role organiser or admin)")
    cr.add_argument("--deadline", required=True, metavar="WHEN",
                    help="end of entries and new versions: +DURATION (+2h, +7d) or an ISO-8601 time")
    cr.add_argument("--opens", metavar="WHEN", help="start of entries and of the season (default now)")
    cr.add_argument("--final", metavar="WHEN", help="start of the final evaluation (default the deadline)")
    cr.add_argument("--players", default="2", help="player counts, e.g. 2,3,4")
    cr.add_argument("--time-control", default="1000+100", help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    cr.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    cr.add_argument("--entry-mode", choices=("hosted", "any"), default="hosted",
                    help="hosted: hosted bots only (their versions lock exactly); any: connected bots too")
    cr.add_argument("--max-bots-per-account", type=int, default=1, help="entrant bots one account may enter")
    cr.add_argument("--max-versions-per-day", type=int, default=5,
                    help="new hosted versions of its entrants one account may upload in any 24 hours")
    cr.add_argument("--description-file", metavar="FILE", help="the description, Markdown")
    cr.add_argument("--rules-file", metavar="FILE", help="the rules of conduct, Markdown")
    cr.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="matches the final evaluation may play")
    cr.add_argument("--max-batches", type=int, default=DEFAULT_MAX_BATCHES,
                    help="batches the final evaluation may play")
    cr.add_argument("--json", action="store_true", help="print the competition as JSON instead of its id")
    cr.set_defaults(func=cmd_create)
    ls = t.add_parser("list", help="the newest competitions with their status")
    ls.add_argument("--game", help="only this game (default: every game)")
    ls.add_argument("--limit", type=int, default=50, help="how many, newest first")
    ls.add_argument("--json", action="store_true", help="print JSON instead of text")
    ls.set_defaults(func=cmd_list)
    sh = t.add_parser("show", help="a competition: settings, entrants, season table, final evaluation and table")
    sh.add_argument("competition_id", type=int, help="the competition's id")
    sh.add_argument("--json", action="store_true", help="print JSON instead of text")
    sh.set_defaults(func=cmd_show)
    en = t.add_parser("enter", help="enter a bot for its own account")
    en.add_argument("competition_id", type=int, help="the competition's id")
    en.add_argument("bot", help="bot name or id")
    en.set_defaults(func=cmd_enter)
    lk = t.add_parser("lock", help="lock the entrants' versions (after the deadline)")
    lk.add_argument("competition_id", type=int, help="the competition's id")
    lk.set_defaults(func=cmd_lock)
    ev = t.add_parser("evaluate", help="start the final evaluation (or re-run it), print its estimate, queue "
                                       "its first batch")
    ev.add_argument("competition_id", type=int, help="the competition's id")
    ev.add_argument("--seed", help="the evaluation's seed, 64 hex characters (default: a fresh one)")
    ev.add_argument("--budget", type=int, help="matches it may play (default: the competition's)")
    ev.add_argument("--max-batches", type=int, help="batches it may play (default: the competition's)")
    ev.add_argument("--rerun", action="store_true",
                    help="replace the current evaluation by a new run from the same seed and limits")
    ev.add_argument("--fresh-seed", action="store_true",
                    help="with --rerun: a new seed (the old one's deals were revealed when its matches ended)")
    ev.add_argument("--json", action="store_true", help="print JSON instead of text")
    ev.set_defaults(func=cmd_evaluate)
    dq = t.add_parser("disqualify", help="disqualify a bot or an account; its matches stay recorded, the tables "
                                         "are recomputed without it")
    dq.add_argument("competition_id", type=int, help="the competition's id")
    who = dq.add_mutually_exclusive_group(required=True)
    who.add_argument("--bot", help="the entrant bot (name or id)")
    who.add_argument("--account", help="every entrant of this account (user name)")
    dq.add_argument("--reason", required=True, help="why, in words (shown with the entrant)")
    dq.set_defaults(func=cmd_disqualify)
    ex = t.add_parser("extend", help="move the deadline later, before the final evaluation")
    ex.add_argument("competition_id", type=int, help="the competition's id")
    ex.add_argument("--deadline", required=True, metavar="WHEN", help="the new deadline: +DURATION or ISO-8601")
    ex.add_argument("--final", metavar="WHEN",
                    help="the new start of the final evaluation (default: moved by as much as the deadline)")
    ex.set_defaults(func=cmd_extend)
    ds = t.add_parser("dataset", help="write a finished competition's matches and manifest to a new folder")
    ds.add_argument("competition_id", type=int, help="the competition's id")
    ds.add_argument("-o", "--output", required=True, help="a folder that does not exist yet (or is empty)")
    ds.set_defaults(func=cmd_dataset)
