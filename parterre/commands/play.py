"""``parterre play``: a local match against the house bots, with no server (docs/bots.md "From zero to your
first local match")."""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers


def cmd_play(args: argparse.Namespace) -> int:
    """Play the games, print one line per game and the table; 0 whatever the bots did."""
    from games.api import GameError
    from games.registry import load_game, parse_game_string
    from parterre import local_play as lp
    from workers.settings import settings as worker_settings

    try:
        entrants = [lp.parse_bot(spec) for spec in args.bot]
    except lp.SpecError as exc:
        raise CliError(str(exc)) from None
    try:
        name, options = parse_game_string(args.game)
        if "players" not in options:  # one seat per --bot
            args.game = load_game(name, {**options, "players": len(entrants)}).game_string()
        players = load_game(args.game).num_players
    except GameError as exc:
        raise CliError(f"--game {args.game!r}: {exc}") from None
    if len(entrants) != players:
        raise CliError(f"--game {args.game!r} seats {players} players: give --bot {players} times, "
                       f"not {len(entrants)} (or leave players out of --game: one seat per --bot)")
    lp.unique_labels(entrants)
    if args.games is not None and args.games < 1:
        raise CliError("--games must be at least 1")
    games = args.games or players
    cfg = worker_settings()
    tc = common.parse_time_control(args.time_control) if args.time_control else cfg.ladder_time_control_ms
    run_seed = args.seed or secrets.token_hex(8)
    replays = Path(args.replays) if args.replays else Path(tempfile.mkdtemp(prefix="parterre-play-"))
    if any(replays.glob("game-*.json")):
        raise CliError(f"--replays {replays} holds the games of an earlier run: give a new or an empty folder")
    replays.mkdir(parents=True, exist_ok=True)
    out = sys.stderr if args.json else sys.stdout
    print(f"{args.game}: {games} game(s), run seed {run_seed} (--seed {run_seed} replays these deals), "
          f"time control {_tc_words(tc)}", file=out, flush=True)
    records = asyncio.run(lp.play(
        args.game, entrants, games=games, run_seed=run_seed, time_control=tc,
        max_duration_ms=cfg.max_match_duration_s * 1000, replays=replays,
        on_game=lambda r: print(r.line(), file=out, flush=True)))
    rows = [e.row() for e in entrants]
    if args.json:
        common.print_json({"game": args.game, "seed": run_seed, "time_control": tc, "replays": str(replays),
                           "games": [{"game": r.number, "seed": r.seed, "status": r.status, "seats": r.seats,
                                      "replay": str(r.replay),
                                      "debug": None if r.debug is None else str(r.debug)} for r in records],
                           "bots": rows})
    else:
        _table(args.game, rows)
        for row in rows:  # why each verdict other than normal (the first few)
            for why in row["reasons"][:REASONS_SHOWN]:
                print(f"{row['bot']}, {why}")
            if len(row["reasons"]) > REASONS_SHOWN:
                print(f"{row['bot']}: {len(row['reasons']) - REASONS_SHOWN} more (--json lists them all)")
        played = [r for r in records if r.status == "finished"]
        me = _command_name()
        hint = f" (check one: {me} replay verify {played[0].replay}; look at it: {me} view " \
               f"{played[0].replay})" if played else " (no game was played to its end: no replay to check)"
        print(f"replays: {replays}{hint}")
        for row in rows:
            for log in row["logs"]:
                print(f"log of {row['bot']}: {log}")
    return 1 if any(r.status == "infra_error" for r in records) else 0


def _command_name() -> str:
    """How to run ``parterre`` again from here: ``parterre`` when that is on PATH, else the path this run was
    started by (``.venv/bin/parterre`` after ``make install``, which does not put it on PATH)."""
    import shutil

    started = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    on_path = shutil.which("parterre")
    if (on_path and os.path.abspath(on_path) == started) or os.path.basename(started) != "parterre":
        return "parterre"
    relative = os.path.relpath(started)
    return started if relative.startswith("..") else relative


REASONS_SHOWN = 3
"""Reasons printed under the table per bot; ``--json`` gives them all."""


def _tc_words(tc: dict[str, int]) -> str:
    """``1000 ms per decision + 100 ms margin`` (and the bank and increment when there are)."""
    bank = f"{tc['base_ms']} ms bank + {tc['increment_ms']} ms per decision, " if tc.get("base_ms") else ""
    cap = f"at most {tc['cap_ms']} ms per decision" if tc.get("cap_ms") else "no cap per decision"
    return f"{bank}{cap} + {tc.get('margin_ms', 0)} ms margin"


def _table(game: str, rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{game}: local match")
    for name in ("bot", "games", "wins", "avg rank", "avg score", "verdicts other than normal"):
        table.add_column(name, justify="left" if name in ("bot", "verdicts other than normal") else "right")
    for row in sorted(rows, key=lambda r: (r["avg_rank"] or 0, -(r["avg_score"] or 0))):
        faults = ", ".join(f"{v} ×{n}" for v, n in row["verdicts"].items()) or "-"
        table.add_row(escape(row["bot"]), str(row["games"]), str(row["wins"]),
                      "-" if row["avg_rank"] is None else f"{row['avg_rank']:.2f}",
                      "-" if row["avg_score"] is None else f"{row['avg_score']:.1f}", faults)
    Console().print(table)


def register(sub: Subparsers) -> None:
    """Add ``play``."""
    from parterre.local_play import SPEC_HELP

    pp = sub.add_parser("play", help="play a local match of your bot against the house bots (no server needed)",
                        description="Play games on this machine through the real referee (no database, Redis or "
                                    "worker): the ladder's clock and verdicts, seats rotating, one replay file per "
                                    "game, and a table of the results.")
    pp.add_argument("--game", required=True, help="the game string, e.g. 'lafleur(players=3)'")
    pp.add_argument("--bot", action="append", required=True,
                    help=f"a bot, once per seat: {SPEC_HELP}".replace("%", "%%"))
    pp.add_argument("--games", type=int,
                    help="games to play; seats rotate each game, and every n games (n bots) share one deal "
                         "(default: n, every bot once in every seat)")
    pp.add_argument("--seed", help="the run seed: the same seed deals the same games (default: a random one, printed)")
    pp.add_argument("--replays", help="folder for the replays and the bots' logs (default: a new temporary folder, "
                                      "printed)")
    pp.add_argument("--time-control",
                    help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms) (default: the ladder's, "
                         "$PARTERRE_LADDER_TIME_CONTROL, 0:0:1000:100)")
    pp.add_argument("--json", action="store_true", help="print the games and the table as JSON (the game lines go "
                                                        "to standard error)")
    pp.set_defaults(func=cmd_play)
