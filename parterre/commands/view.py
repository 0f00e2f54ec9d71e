"""``parterre view``: the site's replay viewer over one replay file, on 127.0.0.1, with no database or Redis
(docs/bots.md "From zero to your first local match")."""

from __future__ import annotations

import argparse
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from parterre.commands.common import CliError, Subparsers
from parterre.commands.replay import read_replay_file, verify_file


def cmd_view(args: argparse.Namespace) -> int:
    """Check the file as ``parterre replay verify`` does, then serve its viewer until interrupted."""
    import uvicorn

    from ladder.read import replay_file_page
    from parterre.local_play import debug_path, read_debug
    from web.local_view import create_local_app
    from web.serving import uvicorn_options

    data, replay = read_replay_file(args.file)
    report = verify_file(data, replay)
    if not report.ok:
        raise CliError(f"{args.file} is not a valid replay: {report.problems[0]} "
                       f"(parterre replay verify {args.file} lists every problem)")
    written_at = datetime.fromtimestamp(os.path.getmtime(args.file), UTC)
    page = replay_file_page(replay, data.get("seats"), written_at, match_id=_match_id(data, replay))
    notes = debug_path(Path(args.file))  # parterre play's debug text beside the replay, if any
    try:
        debug = read_debug(notes, replay) if notes.is_file() else {}
    except ValueError as exc:
        raise CliError(f"{exc}: move it away to view the replay without it") from None
    app = create_local_app(page, replay, debug)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        sock.close()
        raise CliError(f"--port {args.port}: {exc.strerror}") from None
    sock.listen(128)  # connections wait in the backlog until the server runs
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/matches/{page.id}"
    with_notes = f"; the bots' debug text of {len(debug)} decisions from {notes}" if debug else ""
    print(f"viewer of {args.file} on {url} (Ctrl-C stops it){with_notes}", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, **uvicorn_options())
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _match_id(data: dict[str, Any], replay: dict[str, Any]) -> int:
    """The match's number in the file (the export's ``match.id``, else the replay's ``match_id``), else 1."""
    match = data.get("match")
    for value in (match.get("id") if isinstance(match, dict) else None, replay.get("match_id")):
        if isinstance(value, int) and value >= 1:
            return value
    return 1


def register(sub: Subparsers) -> None:
    """Add ``view``."""
    vw = sub.add_parser("view", help="look at a replay file in the site's board viewer (no server needed)",
                        description="Serve the web site's replay viewer for one replay file (from parterre play, "
                                    "replay export or the site) on 127.0.0.1, with no database or Redis: step by "
                                    "step, as the spectator, as any seat, or with all hands. The file is checked "
                                    "as parterre replay verify does first. The bots' debug text parterre play "
                                    "wrote beside it (game-NNN.debug.jsonl) is shown at its steps.")
    vw.add_argument("file", help="a replay JSON file")
    vw.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free port, printed)")
    vw.add_argument("--no-browser", action="store_true", help="print the address without opening a browser")
    vw.set_defaults(func=cmd_view)
