"""``parterre replay export|verify``: replays out of the ladder, and their independent check."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from parterre.commands import common
from parterre.commands.common import CliError, Subparsers

if TYPE_CHECKING:
    from games.replay import VerifyReport


def cmd_replay_export(args: argparse.Namespace) -> int:
    """Print (or write to ``-o``) a match's replay as JSON."""
    from ladder import read

    services = common.services()
    pool = common.pool(services)
    try:
        replay = read.export_replay(pool, args.match_id, hold_twins=not args.include_held)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    # to a terminal, non-ASCII is escaped: a name kept in an older replay may hold bidi or C1 controls
    text = json.dumps(replay, indent=1, default=str, ensure_ascii=not args.output and sys.stdout.isatty())
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {args.output}")
    else:
        print(text)
    return 0


def cmd_replay_verify(args: argparse.Namespace) -> int:
    """Re-simulate an exported replay, or every replay of a dataset folder; 0 when every hash, score and
    rank agrees (and, for a dataset, every file is there with its checksum), else 1."""
    from pathlib import Path

    if Path(args.file).is_dir():
        return _verify_dataset(Path(args.file))
    data, replay = read_replay_file(args.file)
    report = verify_file(data, replay)
    scored = ", outcome checked" if isinstance(replay.get("outcome"), dict) else ""
    print(
        f"{'OK' if report.ok else 'FAILED'}: {report.steps} steps re-simulated, "
        f"{report.hashes_checked} state hashes checked{scored}{_revision_note(replay)}"
    )
    for problem in report.problems:
        print(f"  - {problem}")
    return 0 if report.ok else 1


def read_replay_file(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(file object, replay)`` of a replay file: a full export (its ``replay`` member) or a bare replay.

    Raises:
        CliError: unreadable, not JSON, or no replay object in it.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{path} is not JSON: {exc}") from None
    replay = data.get("replay", data) if isinstance(data, dict) else data
    if not isinstance(replay, dict):
        raise CliError(f"{path} does not hold a replay object")
    return (data if isinstance(data, dict) else {}), replay


def verify_file(data: dict[str, Any], replay: dict[str, Any]) -> VerifyReport:
    """The check of ``parterre replay verify``: re-simulation, hashes, outcome, and the seat rows of ``data``.

    """
    from games.replay import verify_replay

    report = verify_replay(replay)
    check_result_ranks(replay, data, report)
    return report


def _revision_note(replay: dict[str, Any]) -> str:
    """``, by <game>'s rules revision N of M (the newest | what it was)``: the revision of its game's
    rules the replay was re-simulated by (``games.api.Game.RULES_REVISIONS``); ``""`` when its game
    cannot be loaded (the report says why)."""
    from games.api import GameError
    from games.replay import replay_game

    try:
        game = replay_game(replay)
    except (GameError, TypeError, ValueError, AttributeError):
        return ""  # verify_replay has said why
    newest = len(game.RULES_REVISIONS)
    what = "the newest" if game.rules_revision == newest else game.RULES_REVISIONS[game.rules_revision - 1]
    return f", by {game.name}'s rules revision {game.rules_revision} of {newest} ({what})"


def check_result_ranks(replay: dict[str, Any], export: dict[str, Any], report: Any) -> None:
    """Check the ranks the ladder records against the verdicts and the rules' outcome.

    ``result_ranks`` must equal the referee's rule (docs/architecture.md "Verdicts": faulting seats
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
            report.fail(f"seat {seat}: the ladder's seat row records rank {row.get('rank')}, the replay's "
                        f"verdicts and outcome give {expected[seat]}")
        if row.get("verdict") not in (None, verdicts_raw[seat]):
            report.fail(f"seat {seat}: the ladder's seat row records verdict {row.get('verdict')}, the replay "
                        f"{verdicts_raw[seat]}")
        if (isinstance(outcome, dict) and row.get("score") is not None
                and float(row["score"]) != float(outcome["scores"][seat])):
            report.fail(f"seat {seat}: the ladder's seat row records score {row['score']}, the replay's outcome "
                        f"{outcome['scores'][seat]}")


def _verify_dataset(folder: Any) -> int:
    """``replay verify FOLDER``: a competition's dataset (``ladder.competition_dataset``), file by file."""
    from ladder.competition_dataset import read_dataset

    try:
        manifest, files = read_dataset(folder)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    failed = 0
    for path, record, problem in files:
        if record is not None and not problem:
            replay = record.get("replay")
            if not isinstance(replay, dict):
                problem = "holds no replay"
            else:
                try:
                    report = verify_file(record, replay)
                    problem = "; ".join(report.problems) if not report.ok else ""
                except (AttributeError, KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
                    problem = f"a malformed record ({type(exc).__name__}: {str(exc)[:200]})"
        failed += bool(problem)
        print(f"{'FAILED' if problem else 'OK'}: {path}{': ' + problem if problem else ''}")
    print(f"{'OK' if not failed else 'FAILED'}: {len(files) - failed} of {len(files)} files of {folder} "
          f"verified ({len(manifest['files'])} in its manifest)")
    return 1 if failed else 0


def register(sub: Subparsers) -> None:
    """Add ``replay export`` and ``replay verify``."""
    rp = sub.add_parser("replay", help="export and verify replays").add_subparsers(dest="r_cmd", required=True)
    re_ = rp.add_parser("export", help="print a match's replay as JSON")
    re_.add_argument("match_id", type=int, help="the match's id")
    re_.add_argument("-o", "--output", help="write the JSON to this file (default: standard output)")
    re_.add_argument("--include-held", action="store_true",
                     help="include the seed and replay even while another match on the same seed (a seat rotation "
                          "of the deal) is unfinished: not for publishing (docs/faults.md S-20)")
    re_.set_defaults(func=cmd_replay_export)
    rv = rp.add_parser("verify", help="re-simulate an exported replay and check its hashes and scores")
    rv.add_argument("file", help="a replay JSON file (from replay export or the web site), or a competition's "
                                 "dataset folder (competition dataset)")
    rv.set_defaults(func=cmd_replay_verify)
