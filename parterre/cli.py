"""``parterre``: the one command-line entry point (DESIGN §1, §8).

Every subcommand reads its settings from the environment (``parterre.settings``)
and flags; with no database or Redis URL configured it uses the embedded
default in ``$PARTERRE_HOME``. Errors are printed as one clear line and the
command exits with status 2 (bad input) or 1 (a failure at run time).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from parterre import settings as settings_mod


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


def _settings() -> settings_mod.Settings:
    try:
        return settings_mod.load()
    except settings_mod.SettingsError as exc:
        raise CliError(str(exc)) from None


def _services(need_redis: bool = False) -> Any:
    from parterre import embedded

    st = _settings()
    try:
        return embedded.resolve(st, need_redis=need_redis)
    except embedded.EmbeddedServiceError as exc:
        raise CliError(str(exc)) from None


def _pool(services: Any, *, migrate: bool = True) -> Any:
    from ladder import db

    try:
        if migrate:
            db.migrate(services.database_url)
        return db.make_pool(services.database_url, min_size=1, max_size=4)
    except db.DatabaseUnavailableError as exc:
        raise CliError(str(exc)) from None


def _redis_client(services: Any) -> Any:
    import redis

    from parterre.embedded import redis_py_url

    return redis.Redis.from_url(redis_py_url(services.redis_url))


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str, ensure_ascii=False))


# -- subcommands -----------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    from parterre.demo import run_demo

    try:
        return run_demo(rounds=args.rounds, games=args.games)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def cmd_referee(args: argparse.Namespace) -> int:
    from parterre.embedded import redis_py_url
    from referee.server import serve

    st = _settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    services = _services(need_redis=True)
    import asyncio

    asyncio.run(
        serve(
            address,
            redis_url=redis_py_url(services.redis_url),
            service_token=st.service_token,
        )
    )
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    services = _services(need_redis=True)
    st = _settings()
    os.environ.update(
        {
            "PARTERRE_DATABASE_URL": services.database_url,
            "PARTERRE_REDIS_URL": services.redis_url,
            "PARTERRE_SERVICE_TOKEN": st.service_token,
            "PARTERRE_REFEREE_ADDRESS": st.referee_address,
        }
    )
    from ladder import db

    db.migrate(services.database_url)
    from workers.app import app

    app.conf.broker_url = services.redis_url
    argv = ["worker", "--loglevel", args.loglevel, "--concurrency", str(args.concurrency)]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    if args.queues:
        argv += ["--queues", args.queues]
    app.worker_main(argv)
    return 0


def cmd_bot_register(args: argparse.Namespace) -> int:
    from ladder import bots

    services = _services(need_redis=True)
    pool = _pool(services)
    try:
        bot_id, token = bots.register_bot(
            pool, args.name, version=args.version, owner=args.owner, redis=_redis_client(services)
        )
    except bots.BotExistsError as exc:
        raise CliError(str(exc)) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(f"registered bot {args.name!r} with id {bot_id}")
    print(f"token (shown once, keep it secret): {token}")
    return 0


def cmd_bot_revoke(args: argparse.Namespace) -> int:
    from ladder import bots

    services = _services(need_redis=True)
    pool = _pool(services)
    try:
        bots.revoke_bot(pool, args.bot, redis=_redis_client(services))
    except LookupError as exc:
        raise CliError(str(exc)) from None
    print(f"revoked {args.bot}")
    return 0


def cmd_bot_run(args: argparse.Namespace) -> int:
    from bots.cli import run_bot

    st = _settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    token = args.token or os.environ.get("PARTERRE_BOT_TOKEN")
    if not token:
        raise CliError("a bot token is required: --token T or PARTERRE_BOT_TOKEN")
    try:
        run_bot(args.kind, address, token, name=args.name, max_matches=args.max_matches, seed=args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return 0


def _parse_time_control(text: str) -> dict[str, int]:
    """``cap[+margin]`` or ``base:increment:cap:margin``, milliseconds."""
    try:
        parts = [int(p) for p in text.replace("+", ":").split(":")]
    except ValueError:
        raise CliError(
            f"--time-control {text!r}: expected CAP_MS+MARGIN_MS or BASE_MS:INC_MS:CAP_MS:MARGIN_MS"
        ) from None
    if any(p < 0 for p in parts):
        raise CliError(f"--time-control {text!r}: values must be >= 0")
    if len(parts) == 2:
        return {"base_ms": 0, "increment_ms": parts[0], "cap_ms": parts[0], "margin_ms": parts[1]}
    if len(parts) == 4:
        return dict(zip(("base_ms", "increment_ms", "cap_ms", "margin_ms"), parts))
    raise CliError(f"--time-control {text!r}: expected 2 or 4 numbers")


def _int_list(flag: str, text: str) -> list[int]:
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise CliError(f"{flag} {text!r}: expected comma-separated integers") from None


def cmd_tournament_create(args: argparse.Namespace) -> int:
    from games.api import GameError
    from ladder import bots, tournaments

    services = _services()
    pool = _pool(services)
    bot_ids = []
    for ref in args.bots.split(","):
        bot = bots.find_bot(pool, ref.strip())
        if bot is None:
            raise CliError(f"no bot named or numbered {ref.strip()!r}")
        bot_ids.append(bot.id if hasattr(bot, "id") else bot["id"])
    options = {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--option {item!r}: expected KEY=VALUE")
        options[key] = value
    try:
        tid = tournaments.create_tournament(
            pool,
            name=args.name or f"{args.game} round-robin",
            game=args.game,
            bot_ids=bot_ids,
            player_counts=tuple(_int_list("--players", args.players)),
            rounds=args.rounds,
            time_control=_parse_time_control(args.time_control),
            game_options=options,
        )
    except (GameError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(tid)
    return 0


def cmd_tournament_run(args: argparse.Namespace) -> int:
    from parterre.demo import wait_for_tournament

    services = _services(need_redis=True)
    os.environ["PARTERRE_REDIS_URL"] = services.redis_url
    pool = _pool(services)
    from workers.app import app
    from workers.tasks import plan_round_robin

    app.conf.broker_url = services.redis_url
    plan_round_robin.delay(args.tournament_id)
    print(f"tournament {args.tournament_id}: planning queued")
    if args.wait:
        wait_for_tournament(pool, args.tournament_id, timeout_s=args.timeout)
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from games.api import UnknownGameError
    from games.registry import game_class
    from ladder import queries
    from parterre.render import leaderboard_table

    try:
        game_class(args.game)
    except UnknownGameError as exc:
        raise CliError(str(exc)) from None
    services = _services()
    pool = _pool(services)
    rows = queries.leaderboard(pool, args.game)
    if args.json:
        _print_json([_row_dict(r) for r in rows])
    else:
        leaderboard_table(args.game, rows)
    return 0


def _row_dict(row: Any) -> dict[str, Any]:
    if hasattr(row, "_asdict"):
        return dict(row._asdict())
    if hasattr(row, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(row)
    return dict(row)


def cmd_matches(args: argparse.Namespace) -> int:
    from ladder import queries

    services = _services()
    pool = _pool(services)
    rows = [_row_dict(r) for r in queries.recent_matches(pool, game=args.game, limit=args.limit)]
    if args.json:
        _print_json(rows)
    else:
        for r in rows:
            seats = ", ".join(
                f"{s.get('name', s.get('bot_id'))}#{s.get('rank')}({s.get('score')})" for s in r.get("seats", [])
            )
            print(f"{r.get('id')}\t{r.get('game_string')}\t{r.get('status')}\t{seats}")
    return 0


def cmd_replay_export(args: argparse.Namespace) -> int:
    from ladder import queries

    services = _services()
    pool = _pool(services)
    try:
        replay = queries.export_replay(pool, args.match_id)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    text = json.dumps(replay, indent=1, default=str, ensure_ascii=False)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {args.output}")
    else:
        print(text)
    return 0


def cmd_replay_verify(args: argparse.Namespace) -> int:
    from games.replay import verify_replay

    try:
        with open(args.file, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{args.file} is not JSON: {exc}") from None
    replay = data.get("replay", data) if isinstance(data, dict) else data
    if not isinstance(replay, dict):
        raise CliError(f"{args.file} does not hold a replay object")
    report = verify_replay(replay)
    print(
        f"{'OK' if report.ok else 'FAILED'}: {report.steps} steps re-simulated, "
        f"{report.hashes_checked} state hashes checked"
    )
    for problem in report.problems:
        print(f"  - {problem}")
    return 0 if report.ok else 1


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from ladder import queries

    services = _services()
    pool = _pool(services)
    summary = queries.rebuild_ratings(pool, args.game)
    _print_json(summary)
    return 0


def cmd_db_migrate(args: argparse.Namespace) -> int:
    services = _services()
    _pool(services, migrate=True)
    print("database is at the latest migration")
    return 0


# -- parser ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``parterre`` (all subcommands)."""
    p = argparse.ArgumentParser(prog="parterre", description="Parterre: a bot ladder for flower games")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run everything embedded: referee, worker, bots, tournaments")
    d.add_argument("--rounds", type=int, default=3, help="round-robin cycles per game (default 3)")
    d.add_argument("--games", default="floriferous", help="comma-separated games (default floriferous)")
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("referee", help="run the gRPC referee")
    r.add_argument("--address", help="host:port to listen on (default $PARTERRE_REFEREE_ADDRESS)")
    r.set_defaults(func=cmd_referee)

    w = sub.add_parser("worker", help="run a Celery worker")
    w.add_argument("--concurrency", type=int, default=2)
    w.add_argument("--loglevel", default="INFO")
    w.add_argument("--hostname")
    w.add_argument("--queues")
    w.set_defaults(func=cmd_worker)

    b = sub.add_parser("bot", help="register, revoke and run bots").add_subparsers(dest="bot_cmd", required=True)
    br = b.add_parser("register", help="register a bot and print its token once")
    br.add_argument("name")
    br.add_argument("--version", default="1")
    br.add_argument("--owner")
    br.set_defaults(func=cmd_bot_register)
    bv = b.add_parser("revoke", help="revoke a bot's token")
    bv.add_argument("bot", help="bot name or id")
    bv.set_defaults(func=cmd_bot_revoke)
    bn = b.add_parser("run", help="run a reference bot against a referee")
    bn.add_argument("kind", help="random, greedy, or a misbehaving kind (slow, illegal, drop, garbage, silent)")
    bn.add_argument("--token")
    bn.add_argument("--address")
    bn.add_argument("--name")
    bn.add_argument("--max-matches", type=int, default=4)
    bn.add_argument("--seed", type=int, default=None)
    bn.set_defaults(func=cmd_bot_run)

    t = sub.add_parser("tournament", help="create and run tournaments").add_subparsers(dest="t_cmd", required=True)
    tc = t.add_parser("create", help="create a round-robin tournament; prints its id")
    tc.add_argument("--game", required=True)
    tc.add_argument("--bots", required=True, help="comma-separated bot names or ids")
    tc.add_argument("--players", default="2", help="player counts, e.g. 2,3,4")
    tc.add_argument("--rounds", type=int, default=1)
    tc.add_argument("--time-control", default="1000+100", help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    tc.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    tc.add_argument("--name")
    tc.set_defaults(func=cmd_tournament_create)
    tr = t.add_parser("run", help="plan and queue a tournament's matches on the workers")
    tr.add_argument("tournament_id", type=int)
    tr.add_argument("--wait", action="store_true", help="show progress until every match is done")
    tr.add_argument("--timeout", type=float, default=3600)
    tr.set_defaults(func=cmd_tournament_run)

    lb = sub.add_parser("leaderboard", help="print a game's leaderboard")
    lb.add_argument("game")
    lb.add_argument("--json", action="store_true")
    lb.set_defaults(func=cmd_leaderboard)

    m = sub.add_parser("matches", help="recent matches")
    m.add_argument("--game")
    m.add_argument("--limit", type=int, default=20)
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=cmd_matches)

    rp = sub.add_parser("replay", help="export and verify replays").add_subparsers(dest="r_cmd", required=True)
    re_ = rp.add_parser("export", help="print a match's replay as JSON")
    re_.add_argument("match_id", type=int)
    re_.add_argument("-o", "--output")
    re_.set_defaults(func=cmd_replay_export)
    rv = rp.add_parser("verify", help="re-simulate an exported replay and check its hashes and scores")
    rv.add_argument("file")
    rv.set_defaults(func=cmd_replay_verify)

    ra = sub.add_parser("ratings", help="ratings maintenance").add_subparsers(dest="ra_cmd", required=True)
    rr = ra.add_parser("rebuild", help="recompute ratings from the full history")
    rr.add_argument("--game")
    rr.set_defaults(func=cmd_ratings_rebuild)

    dbp = sub.add_parser("db", help="database maintenance").add_subparsers(dest="db_cmd", required=True)
    dm = dbp.add_parser("migrate", help="upgrade the schema to the latest migration")
    dm.set_defaults(func=cmd_db_migrate)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``parterre``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"parterre: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
