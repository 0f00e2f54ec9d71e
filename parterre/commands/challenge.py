"""``parterre challenge create|show|list``: one match between chosen bots, rated or casual."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers

UNHANDLED_AFTER_S = 30.0
"""With ``--wait``: a challenge still ``waiting`` this long (or three challenge periods,
``PARTERRE_CHALLENGE_PERIOD_S``, if longer) after its expiry was never looked at (no ``parterre beat``, or
no worker to run its ticks), said in one line instead of a silent wait."""


def _unhandled_after_s() -> float:
    try:
        period = float(os.environ.get("PARTERRE_CHALLENGE_PERIOD_S", "1"))
    except ValueError:
        period = 1.0
    return max(UNHANDLED_AFTER_S, 3 * period) if math.isfinite(period) else UNHANDLED_AFTER_S


def _info_dict(info: Any) -> dict[str, Any]:
    import dataclasses

    out = dataclasses.asdict(info)
    for k, v in out.items():
        if hasattr(v, "isoformat"):
            out[k] = v.isoformat()
    return out


def _line(info: Any) -> str:
    seats = ", ".join(info.bot_names)
    kind = "rated" if info.rated else f"casual: {info.unrated_reason}" if info.unrated_reason else "casual"
    tail = f" — {info.reason}" if info.reason else ""
    ranks = f" ranks {list(info.ranks)}" if info.ranks else ""
    return f"{info.match_id}\t{info.game_string}\t{kind}\t{seats}\t{info.status}{ranks}{tail}"


def cmd_challenge_create(args: argparse.Namespace) -> int:
    """Create a challenge and print its match id; with ``--wait``, wait until it ends or expires."""
    from ladder import bots
    from ladder.challenges import challenge_status, create_challenge

    pool = common.pool(common.services())
    ids = []
    for ref in args.bots.split(","):
        bot = bots.find_bot(pool, ref.strip())
        if bot is None:
            raise CliError(f"no bot named or numbered {ref.strip()!r}")
        ids.append(bot.id)
    try:
        match_id = create_challenge(
            pool, game_string=args.game, bot_ids=ids, rated=not args.casual,
            time_control=common.parse_time_control(args.time_control), expires_after_s=args.expires,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(match_id, flush=True)
    if args.wait:
        start, unhandled = time.monotonic(), _unhandled_after_s()
        print(f"challenge {match_id}: waiting up to {args.expires:.0f} s for its bots to connect; the periodic "
              "tasks of `parterre beat` (or `parterre up`) start it or expire it (if they are not running, this "
              f"says so after {args.expires + unhandled:.0f} s)", file=sys.stderr, flush=True)
        deadline = start + args.expires + args.timeout
        info = challenge_status(pool, match_id)
        while info.status in ("asked", "waiting", "planned", "running") and time.monotonic() < deadline:
            if info.status in ("asked", "waiting") and time.monotonic() > start + args.expires + unhandled:
                print(_line(info))
                print(f"parterre: challenge {match_id} is neither started nor expired {unhandled:.0f} s after its "
                      "expiry: are `parterre beat` and a `parterre worker` running (or `parterre up`)? It stays "
                      "waiting, and still starts if its bots connect once they run.", file=sys.stderr)
                return 1
            time.sleep(0.5)
            info = challenge_status(pool, match_id)
        print(_line(info))
        return 0 if info.status == "finished" else 1
    return 0


def cmd_challenge_show(args: argparse.Namespace) -> int:
    """Print one challenge's state (and why it expired)."""
    from ladder.challenges import challenge_status

    pool = common.pool(common.services())
    try:
        info = challenge_status(pool, args.match_id)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        common.print_json(_info_dict(info))
    else:
        print(_line(info))
    return 0


def cmd_challenge_list(args: argparse.Namespace) -> int:
    """Print the newest challenges."""
    from ladder.challenges import list_challenges

    pool = common.pool(common.services())
    rows = list_challenges(pool, limit=args.limit)
    if args.json:
        common.print_json([_info_dict(r) for r in rows])
    else:
        for info in rows:
            print(_line(info))
    return 0


def register(sub: Subparsers) -> None:
    """Add ``challenge create|show|list``."""
    c = sub.add_parser("challenge", help="challenge bots to one match, rated or casual").add_subparsers(
        dest="c_cmd", required=True)
    cc = c.add_parser("create", help="create a challenge; it runs once every bot is connected; prints the match id")
    cc.add_argument("--game", required=True, help="game string, e.g. floriferous(players=2)")
    cc.add_argument("--bots", required=True, help="comma-separated bot names or ids, one per seat")
    cc.add_argument("--casual", action="store_true",
                    help="a casual match: recorded, never rated (default: rated, the operator's command; "
                         "a participant's `parterre remote challenge` is casual unless --rated)")
    cc.add_argument("--time-control", default="1000+100", help="CAP_MS+MARGIN_MS or BASE:INC:CAP:MARGIN (ms)")
    cc.add_argument("--expires", type=float, default=300.0, help="seconds to wait for the bots")
    cc.add_argument("--wait", action="store_true", help="wait until it finishes or expires (exit 1 unless finished)")
    cc.add_argument("--timeout", type=float, default=1800, help="with --wait: seconds to wait after it starts")
    cc.set_defaults(func=cmd_challenge_create)
    cs = c.add_parser("show", help="one challenge's state")
    cs.add_argument("match_id", type=int, help="the challenge's match id (printed by create)")
    cs.add_argument("--json", action="store_true", help="print JSON instead of text")
    cs.set_defaults(func=cmd_challenge_show)
    cl = c.add_parser("list", help="the newest challenges")
    cl.add_argument("--limit", type=int, default=50, help="how many, newest first")
    cl.add_argument("--json", action="store_true", help="print JSON instead of text")
    cl.set_defaults(func=cmd_challenge_list)
