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


def _observe(args: argparse.Namespace, process: str, *, multiprocess: bool = False) -> None:
    """JSON logs and, with ``--metrics-port``/``PARTERRE_METRICS_PORT``, a ``/metrics`` endpoint
    (``parterre/observe.py``). First thing a server command does."""
    from parterre import observe

    try:
        observe.setup_process(process, metrics_port=getattr(args, "metrics_port", None),
                              multiprocess=multiprocess, log_level=getattr(args, "loglevel", None))
    except (observe.MetricsSetupError, ValueError) as exc:
        raise CliError(str(exc)) from None


# -- subcommands -----------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    from parterre.demo import run_demo

    try:
        return run_demo(rounds=args.rounds, games=args.games, web_port=args.web_port, serve=args.serve)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def cmd_referee(args: argparse.Namespace) -> int:
    _observe(args, "referee")
    from parterre.embedded import redis_py_url
    from referee.server import TlsConfig, serve

    st = _settings()
    if not args.address and "," in st.referee_address:
        raise CliError("PARTERRE_REFEREE_ADDRESS lists several referees (for workers); give this one --address")
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    control = args.control_address or os.environ.get("PARTERRE_REFEREE_CONTROL_ADDRESS") or None
    if control is not None:
        control = settings_mod.check_address("--control-address", control)
    tls = None
    cert, key = os.environ.get("PARTERRE_TLS_CERT"), os.environ.get("PARTERRE_TLS_KEY")
    if cert or key:
        if not (cert and key):
            raise CliError("TLS needs both PARTERRE_TLS_CERT and PARTERRE_TLS_KEY")
        try:
            tls = TlsConfig.from_files(cert, key)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    advertise = args.advertise_address or os.environ.get("PARTERRE_REFEREE_ADVERTISE_ADDRESS", "")
    advertise_control = (args.advertise_control_address
                         or os.environ.get("PARTERRE_REFEREE_ADVERTISE_CONTROL_ADDRESS", ""))
    services = _services(need_redis=True)
    import asyncio

    asyncio.run(
        serve(
            address,
            redis_url=redis_py_url(services.redis_url),
            service_token=st.service_token,
            control_address=control,
            tls=tls,
            cluster=not args.no_cluster,
            advertise_address=advertise,
            advertise_control_address=advertise_control,
            cluster_namespace=os.environ.get("PARTERRE_CLUSTER_NAMESPACE") or "parterre",
            **({"referee_id": args.referee_id} if args.referee_id else {}),
        )
    )
    return 0


def cmd_beat(args: argparse.Namespace) -> int:
    """``parterre beat``: Celery beat sending the ladder tick and the reaper (DESIGN §5)."""
    _observe(args, "beat")
    services = _services(need_redis=True)
    st = _settings()
    os.environ.update({"PARTERRE_REDIS_URL": services.redis_url, "PARTERRE_SERVICE_TOKEN": st.service_token})
    from workers.app import app, configure_beat

    app.conf.broker_url = services.redis_url
    if args.ladder_period is not None and args.ladder_period <= 0:
        raise CliError("--ladder-period must be positive")
    if args.reap_period is not None and args.reap_period <= 0:
        raise CliError("--reap-period must be positive")
    configure_beat(args.ladder_period, args.reap_period)
    # celery.beat:Scheduler keeps the schedule in memory: no shelve file to share or lock,
    # so several beat processes may run (planning is idempotent, FAULTS F-12).
    app.start(["beat", "--loglevel", args.loglevel, "--scheduler", "celery.beat:Scheduler"])
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    _observe(args, "worker", multiprocess=True)  # before prometheus_client is imported
    from parterre.logging import install_celery_hooks

    install_celery_hooks("worker")
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


def cmd_connect(args: argparse.Namespace) -> int:
    """``parterre connect --exec CMD``: the stdio adapter (bots/stdio.py, docs/bots.md)."""
    import asyncio
    import logging
    import shlex

    from bots.sdk import AuthenticationError
    from bots.stdio import StdioBot, StdioError

    st = _settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    token = args.token or os.environ.get("PARTERRE_BOT_TOKEN")
    if not token:
        raise CliError("a bot token is required: --token T or PARTERRE_BOT_TOKEN")
    try:
        command = shlex.split(args.exec)
    except ValueError as exc:
        raise CliError(f"--exec {args.exec!r}: {exc}") from None
    if not command:
        raise CliError("--exec needs a command, e.g. --exec \"python3 my_bot.py\"")
    if args.max_matches < 1:
        raise CliError("--max-matches must be at least 1")
    log_dir = args.log_dir or str(st.home / "logs" / "bots")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    bot = StdioBot(command, log_dir=log_dir, name=args.name, version=args.version,
                   max_concurrent_matches=args.max_matches)
    print(f"connecting {' '.join(command)!r} to {address} as {args.name!r}, up to {args.max_matches} "
          f"match(es) at once; the children's stderr goes to {log_dir}", file=sys.stderr)
    async def play() -> None:
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # stop the children before leaving
            loop.add_signal_handler(sig, bot.stop)
        await bot.arun(address, token, stop_after_matches=args.stop_after or None)

    try:
        asyncio.run(play())
    except StdioError as exc:
        print(f"parterre: error: {exc}", file=sys.stderr)
        return 1
    except AuthenticationError as exc:
        raise CliError(f"the referee refused the token: {exc}") from None
    print(f"{len(bot.stats.results)} match(es) played", file=sys.stderr)
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
    from games.api import UnknownGameError
    from games.registry import game_class
    from ladder import queries

    if args.game is not None:
        try:
            game_class(args.game)
        except UnknownGameError as exc:
            raise CliError(str(exc)) from None

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
    _check_result_ranks(replay, data if isinstance(data, dict) else {}, report)
    print(
        f"{'OK' if report.ok else 'FAILED'}: {report.steps} steps re-simulated, "
        f"{report.hashes_checked} state hashes checked"
    )
    for problem in report.problems:
        print(f"  - {problem}")
    return 0 if report.ok else 1


def _check_result_ranks(replay: dict[str, Any], export: dict[str, Any], report: Any) -> None:
    """Check the ranks the ladder records against the verdicts and the rules' outcome.

    ``result_ranks`` must equal the referee's rule (DESIGN §4: faulting seats
    last, the others by the rules' ranks); when the file is a full export, its
    ``seats`` rows (rank, score, verdict) must agree with the replay.
    """
    from referee.verdicts import Verdict, result_ranks

    verdicts_raw = replay.get("verdicts")
    if not isinstance(verdicts_raw, list):
        report.fail("the replay lacks its verdicts")
        return
    try:
        verdicts = [Verdict(v) for v in verdicts_raw]
    except ValueError as exc:
        report.fail(f"unknown verdict in the replay: {exc}")
        return
    outcome = replay.get("outcome")
    expected = list(result_ranks(verdicts, outcome.get("ranks") if isinstance(outcome, dict) else None))
    if list(replay.get("result_ranks") or []) != expected:
        report.fail(f"result_ranks {replay.get('result_ranks')} differ from the verdicts' ranks {expected}")
    for row in export.get("seats") or []:
        seat = row.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < len(expected):
            report.fail(f"seat row {row!r} names no seat of the replay")
            continue
        if row.get("rank") != expected[seat]:
            report.fail(f"seat {seat}: recorded rank {row.get('rank')} but the replay gives {expected[seat]}")
        if row.get("verdict") not in (None, verdicts_raw[seat]):
            report.fail(f"seat {seat}: recorded verdict {row.get('verdict')} but the replay says {verdicts_raw[seat]}")
        if isinstance(outcome, dict) and row.get("score") is not None:
            if float(row["score"]) != float(outcome["scores"][seat]):
                report.fail(f"seat {seat}: recorded score {row['score']} but the replay gives {outcome['scores'][seat]}")


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from ladder import queries

    services = _services()
    pool = _pool(services)
    summary = queries.rebuild_ratings(pool, args.game)
    _print_json(summary)
    return 0


def cmd_regress(args: argparse.Namespace) -> int:
    """``parterre regress``: exit 0 (H1, not a regression), 1 (H0, regression), 2 (undecided), 3 (error)."""
    import secrets

    from ladder.stats.sprt import Sprt
    from parterre import regress as rg

    def fail(message: str) -> int:
        print(f"parterre regress: error: {message}", file=sys.stderr)
        return rg.EXIT_ERROR

    try:
        sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
        options = {}
        for item in args.option or []:
            key, sep, value = item.partition("=")
            if not sep:
                return fail(f"--option {item!r}: expected KEY=VALUE")
            options[key] = value
        opponents = [o for o in (args.opponents or "").split(",") if o.strip()]
        plan = rg.make_plan(args.game, args.candidate, args.baseline, opponents, args.players, options)
        builtin = [spec.builtin for _, spec in plan.roles()]
        backend = args.backend
        if backend == "auto":
            if all(builtin):
                backend = "referee"
            elif not any(builtin):
                backend = "ladder"
            else:
                return fail("mix of builtin: and registered bots; compare either in-process or on the ladder")
        run_seed = args.seed or secrets.token_hex(8)
        runner: rg.Runner
        if backend == "direct":
            runner = rg.DirectRunner(plan, run_seed, jobs=args.jobs)
        elif backend == "referee":
            runner = rg.RefereeRunner(plan, run_seed)
        else:
            services = _services(need_redis=True)
            os.environ["PARTERRE_REDIS_URL"] = services.redis_url
            from workers.app import app

            app.conf.broker_url = services.redis_url
            tc = _parse_time_control(args.time_control) if args.time_control else None
            runner = rg.LadderRunner(plan, _pool(services), time_control=tc)
        every = args.every or rg.auto_every(args.max_games, plan.games_per_deal)
        if not args.json:
            for line in rg.describe(plan, sprt):
                print(line)
            print(f"backend {backend}, run seed {run_seed}, budget {args.max_games} games")

        def show(point: Any, test: Any) -> None:
            if not args.json and (point.deals % every == 0 or point.state is not rg.SprtState.CONTINUE):
                print(rg.trajectory_line(point, test), flush=True)

        with runner:
            report = rg.run_regress(
                plan, sprt, runner, max_games=args.max_games, run_seed=run_seed,
                concurrency=args.concurrency or (2 if backend == "ladder" else args.jobs if backend == "direct" else 1),
                on_deal=show,
            )
        if isinstance(runner, rg.LadderRunner):
            report.tournament_id = runner.tournament_id
    except (rg.RegressError, ValueError, CliError) as exc:
        return fail(str(exc))
    if args.json:
        rg.print_json(report)
    else:
        last = report.test.trajectory[-1] if report.test.trajectory else None
        if last is not None and last.deals % every != 0 and report.state is rg.SprtState.CONTINUE:
            print(rg.trajectory_line(last, report.test))
        rg.print_text(report)
    return report.exit_code


def cmd_up(args: argparse.Namespace) -> int:
    """``parterre up``: referee, workers, beat and web as child processes (parterre/up.py)."""
    from parterre.up import UpConfig, run_up

    st = _settings()
    address = settings_mod.check_address("--address", args.address or st.referee_address)
    for flag, value in (("--workers", args.workers), ("--concurrency", args.concurrency)):
        if value < 1:
            raise CliError(f"{flag} must be at least 1")
    if not 0 <= args.web_port <= 65535:
        raise CliError(f"--web-port {args.web_port}: expected 0..65535")
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65000:
        raise CliError(f"--metrics-port {args.metrics_port}: expected 0..65000")
    services = _services(need_redis=True)  # embedded servers start here, and stay up while `up` runs
    cfg = UpConfig(
        referee_address=address, workers=args.workers, concurrency=args.concurrency, web=not args.no_web,
        web_host=args.web_host, web_port=args.web_port, beat=not args.no_beat,
        metrics_port=None if args.no_metrics else args.metrics_port, grace_s=args.grace,
    )
    os.environ.update({"PARTERRE_DATABASE_URL": services.database_url, "PARTERRE_REDIS_URL": services.redis_url})
    return run_up(cfg, services=services)


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the public web site (DESIGN §7) until interrupted."""
    from parterre.up import serve_web

    services = _services()
    _pool(services, migrate=True).close()
    os.environ["PARTERRE_DATABASE_URL"] = services.database_url
    settings_mod.check_address("--host/--port", f"{args.host}:{args.port}")
    print(f"web site on http://{args.host}:{args.port}/ (JSON API under /api/, OpenAPI at /openapi.json)", flush=True)
    serve_web(args.host, args.port)
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
    d.add_argument(
        "--games", default="floriferous,lafleur,flowar", help="comma-separated games (default: all three)"
    )
    d.add_argument("--web-port", type=int, default=0, help="port of the web site (default: a free port)")
    d.add_argument("--serve", action="store_true", help="keep the web site running after the tournaments (Ctrl-C stops)")
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("referee", help="run the gRPC referee")
    r.add_argument("--address", help="host:port to listen on (default $PARTERRE_REFEREE_ADDRESS)")
    r.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    r.add_argument("--control-address",
                   help="serve the internal MatchControl service on this separate host:port only "
                        "(default $PARTERRE_REFEREE_CONTROL_ADDRESS; unset: on --address)")
    r.add_argument("--advertise-address", help="bot address other processes should use (default: the bound one)")
    r.add_argument("--advertise-control-address", help="control address workers and other referees should use")
    r.add_argument("--referee-id", help="this referee's id in the cluster (default host:pid)")
    r.add_argument("--no-cluster", action="store_true",
                   help="do not publish presence or relay bots with other referees through Redis")
    r.set_defaults(func=cmd_referee)

    bt = sub.add_parser("beat", help="run Celery beat: the continuous ladder and the reaper")
    bt.add_argument("--ladder-period", type=float, help="seconds per ladder round (default $PARTERRE_LADDER_PERIOD_S or 10)")
    bt.add_argument("--reap-period", type=float, help="seconds between reaper runs (default $PARTERRE_REAP_PERIOD_S or 15)")
    bt.add_argument("--loglevel", default="INFO")
    bt.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
    bt.set_defaults(func=cmd_beat)

    w = sub.add_parser("worker", help="run a Celery worker")
    w.add_argument("--concurrency", type=int, default=2)
    w.add_argument("--loglevel", default="INFO")
    w.add_argument("--hostname")
    w.add_argument("--queues")
    w.add_argument("--metrics-port", help="serve /metrics on PORT or HOST:PORT (default $PARTERRE_METRICS_PORT)")
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

    cn = sub.add_parser("connect", help="run any program as a bot over the stdio line protocol (docs/bots.md)")
    cn.add_argument("--exec", required=True, metavar="COMMAND",
                    help='the bot program and its arguments, e.g. "python3 my_bot.py" (split like a shell, not run by one)')
    cn.add_argument("--token", help="the bot's token (default $PARTERRE_BOT_TOKEN)")
    cn.add_argument("--address", help="referee host:port (default $PARTERRE_REFEREE_ADDRESS)")
    cn.add_argument("--max-matches", type=int, default=1, help="matches at once, one child process each (default 1)")
    cn.add_argument("--log-dir", help="folder for the children's stderr (default $PARTERRE_HOME/logs/bots)")
    cn.add_argument("--name", default="stdio-bot", help="name sent in Hello (default stdio-bot)")
    cn.add_argument("--version", default="1", help="version sent in Hello")
    cn.add_argument("--stop-after", type=int, default=0, help="exit after this many matches (default: never)")
    cn.set_defaults(func=cmd_connect)

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

    rgp = sub.add_parser(
        "regress",
        help="SPRT: is the candidate a regression of the baseline? (exit 0 no, 1 yes, 2 undecided)",
        description="Play candidate and baseline on the same duplicate deals and run an SPRT. "
        "H0: elo = ELO0, H1: elo = ELO1 (logistic Elo, candidate minus baseline). "
        "Exit 0: H1 accepted (not a regression); 1: H0 accepted (regression); 2: undecided at --max-games; "
        "3: the run could not be made. Bots: builtin:KIND[:OPT=V,...] (in-process) or registered names (ladder). "
        "See docs/regression.md.",
    )
    rgp.add_argument("--game", required=True)
    rgp.add_argument("--candidate", required=True, help="builtin:KIND[:OPT=V,...] or a registered bot")
    rgp.add_argument("--baseline", required=True, help="builtin:KIND[:OPT=V,...] or a registered bot")
    rgp.add_argument("--opponents", help="comma-separated fixed opponents (N-1 of them for N players)")
    rgp.add_argument("--players", type=int, help="seats per match (default: 1 + number of opponents, or 2)")
    rgp.add_argument("--elo0", type=float, default=0.0, help="H0 Elo difference (default 0)")
    rgp.add_argument("--elo1", type=float, default=5.0, help="H1 Elo difference (default 5)")
    rgp.add_argument("--alpha", type=float, default=0.05, help="P(accept H1 | elo = elo0) (default 0.05)")
    rgp.add_argument("--beta", type=float, default=0.05, help="P(accept H0 | elo = elo1) (default 0.05)")
    rgp.add_argument("--max-games", type=int, default=2000, help="game budget (default 2000)")
    rgp.add_argument("--backend", choices=("auto", "referee", "direct", "ladder"), default="auto",
                    help="auto: in-process referee for builtin bots, the ladder's workers for registered ones")
    rgp.add_argument("--seed", help="run seed; deal i is sha256(SEED:i) (default: random)")
    rgp.add_argument("--concurrency", type=int, help="deals in flight at once")
    rgp.add_argument("--jobs", type=int, default=1, help="processes for --backend direct (default 1)")
    rgp.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    rgp.add_argument("--time-control", help="ladder backend: CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    rgp.add_argument("--every", type=int, help="print every K-th point of the LLR trajectory (default: ~40 lines)")
    rgp.add_argument("--json", action="store_true", help="print one JSON object (with the whole trajectory)")
    rgp.set_defaults(func=cmd_regress)

    up = sub.add_parser("up", help="run referee, workers, beat and web as child processes; Ctrl-C stops all")
    up.add_argument("--address", help="referee host:port (default $PARTERRE_REFEREE_ADDRESS)")
    up.add_argument("--workers", type=int, default=1, help="Celery worker processes (default 1)")
    up.add_argument("--concurrency", type=int, default=2, help="matches at once per worker (default 2)")
    up.add_argument("--web-host", default="127.0.0.1", help="web site interface (default 127.0.0.1)")
    up.add_argument("--web-port", type=int, default=8000, help="web site port (default 8000; 0 = a free port)")
    up.add_argument("--no-web", action="store_true", help="do not run the web site")
    up.add_argument("--no-beat", action="store_true", help="do not run Celery beat")
    up.add_argument("--metrics-port", type=int, default=9100,
                    help="first /metrics port: referee, then workers, beat, web (default 9100; 0 = free ports)")
    up.add_argument("--no-metrics", action="store_true", help="no /metrics endpoints")
    up.add_argument("--grace", type=float, default=15.0, help="seconds each shutdown step waits (default 15)")
    up.set_defaults(func=cmd_up)

    wb = sub.add_parser("web", help="serve the public web site and JSON API")
    wb.add_argument("--host", default="127.0.0.1")
    wb.add_argument("--port", type=int, default=8000)
    wb.set_defaults(func=cmd_web)

    dbp = sub.add_parser("db", help="database maintenance").add_subparsers(dest="db_cmd", required=True)
    dm = dbp.add_parser("migrate", help="upgrade the schema to the latest migration")
    dm.set_defaults(func=cmd_db_migrate)
    from parterre.commands import admin, remote

    admin.register(sub)  # parterre admin ... (accounts; database access)
    remote.register(sub)  # parterre remote ... (the participants' HTTP API)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``parterre``; returns the exit status."""
    import signal

    parser = build_parser()
    args = parser.parse_args(argv)
    if threading_main():
        # SIGTERM exits through SystemExit so that atexit handlers run (they release
        # the embedded PostgreSQL handle and stop the embedded Redis).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"parterre: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def threading_main() -> bool:
    """True in the main thread (where signal handlers may be installed)."""
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
