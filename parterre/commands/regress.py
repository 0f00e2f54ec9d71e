"""``parterre regress``: an SPRT of a candidate bot against its baseline (docs/regression.md)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from typing import Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_regress(args: argparse.Namespace) -> int:
    """``parterre regress``: exit 0 (H1, not a regression), 1 (H0, regression), 2 (undecided), 3 (error)."""
    from ladder.stats.sprt import Sprt, SprtState
    from parterre import regress as rg

    def fail(message: str) -> int:
        print(f"parterre regress: error: {message}", file=sys.stderr)
        return rg.EXIT_ERROR

    try:
        sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
        options = common.game_options(args.option)
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
            services = common.services(need_redis=True)
            os.environ["PARTERRE_REDIS_URL"] = services.redis_url
            from workers.app import app

            app.conf.update(broker_url=services.redis_url)
            tc = common.parse_time_control(args.time_control) if args.time_control else None
            runner = rg.LadderRunner(plan, common.pool(services), time_control=tc)
        every = args.every or rg.auto_every(args.max_games, plan.games_per_deal)
        if not args.json:
            for line in rg.describe(plan, sprt):
                print(line)
            print(f"backend {backend}, run seed {run_seed}, budget {args.max_games} games")

        def show(point: Any, test: Any) -> None:
            if not args.json and (point.deals % every == 0 or point.state is not SprtState.CONTINUE):
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
        if last is not None and last.deals % every != 0 and report.state is SprtState.CONTINUE:
            print(rg.trajectory_line(last, report.test))
        rg.print_text(report)
    return report.exit_code


def register(sub: Subparsers) -> None:
    """Add ``regress``."""
    rgp = sub.add_parser(
        "regress",
        help="SPRT: is the candidate a regression of the baseline? (exit 0 no, 1 yes, 2 undecided)",
        description="Play candidate and baseline on the same duplicate deals and run an SPRT. "
        "H0: elo = ELO0, H1: elo = ELO1 (logistic Elo, candidate minus baseline). "
        "Exit 0: H1 accepted (not a regression); 1: H0 accepted (regression); 2: undecided at --max-games; "
        "3: the run could not be made. Bots: builtin:KIND[:OPT=V,...] (in-process) or registered names (ladder). "
        "See docs/regression.md.",
    )
    rgp.add_argument("--game", required=True, help="game name, e.g. floriferous")
    rgp.add_argument("--candidate", required=True, help="builtin:KIND[:OPT=V,...] or a registered bot")
    rgp.add_argument("--baseline", required=True, help="builtin:KIND[:OPT=V,...] or a registered bot")
    rgp.add_argument("--opponents", help="comma-separated fixed opponents (N-1 of them for N players)")
    rgp.add_argument("--players", type=int, help="seats per match (default: 1 + number of opponents, or 2)")
    rgp.add_argument("--elo0", type=float, default=0.0, help="H0 Elo difference")
    rgp.add_argument("--elo1", type=float, default=5.0, help="H1 Elo difference")
    rgp.add_argument("--alpha", type=float, default=0.05, help="P(accept H1 | elo = elo0)")
    rgp.add_argument("--beta", type=float, default=0.05, help="P(accept H0 | elo = elo1)")
    rgp.add_argument("--max-games", type=int, default=2000,
                     help="game budget: undecided (exit 2) after this many games")
    rgp.add_argument("--backend", choices=("auto", "referee", "direct", "ladder"), default="auto",
                    help="auto: in-process referee for builtin bots, the ladder's workers for registered ones")
    rgp.add_argument("--seed", help="run seed; deal i is sha256(SEED:i) (default: random)")
    rgp.add_argument("--concurrency", type=int,
                     help="deals in flight at once (default: 2 on the ladder, --jobs direct, 1 referee)")
    rgp.add_argument("--jobs", type=int, default=1, help="processes for --backend direct")
    rgp.add_argument("--option", action="append", help="game option KEY=VALUE (repeatable)")
    rgp.add_argument("--time-control", help="ladder backend: CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    rgp.add_argument("--every", type=int, help="print every K-th point of the LLR trajectory (default: ~40 lines)")
    rgp.add_argument("--json", action="store_true", help="print one JSON object (with the whole trajectory)")
    rgp.set_defaults(func=cmd_regress)
