"""``parterre bot upload``: send a new version of a hosted bot to the web API; optionally wait for its verdict.

``parterre bot upload BOT_ID PATH --url https://ladder.example --token ptk_...``
packs PATH (a folder with ``parterre-bot.toml``; or an existing ``.tar.gz`` /
``.zip``), sends it to ``POST /api/bots/{id}/versions``, and prints the version
number and sha256. With ``--wait`` it polls ``GET /api/bots/{id}/versions/{n}``
until the version is decided, prints each validation and regression game (the
version's seat, its rank, a fault, the address of the game's replay) and the verdict,
and exits like ``parterre regress`` does, so a participant's CI can use the exit status:

| exit | meaning |
|---|---|
| 0 | active (validated; regression test passed, undecided, or not blocking) |
| 1 | ``failed_test``: the regression test found a regression and the owner's setting blocks it |
| 2 | ``rejected`` in validation (the reason is printed) |
| 3 | the upload or the wait failed (refused archive, HTTP error, ``--timeout``) |
"""

from __future__ import annotations

import argparse
import io
import json
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from parterre.settings import cli_settings

EXIT = {"active": 0, "superseded": 0, "failed_test": 1, "rejected": 2}


def pack(path: Path) -> bytes:
    """The archive to send: the file itself, or a folder packed as .tar.gz (paths relative to it)."""
    if path.is_file():
        return path.read_bytes()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for item in sorted(path.rglob("*")):
            if item.is_file() and "__pycache__" not in item.parts:
                tar.add(item, arcname=str(item.relative_to(path)), recursive=False)
    return buf.getvalue()


def _call(method: str, url: str, token: str, data: bytes | None = None) -> dict[str, Any]:
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return dict(json.loads(resp.read()))


def cmd_bot_upload(args: argparse.Namespace) -> int:
    token = args.token or cli_settings().api_token
    base = (args.url or cli_settings().url).rstrip("/")
    try:
        version = _call("POST", f"{base}/api/bots/{args.bot_id}/versions", token, pack(Path(args.path)))
    except urllib.error.HTTPError as exc:
        print(f"upload refused ({exc.code}): {exc.read().decode('utf-8', 'replace')}")
        return 3
    except (OSError, ValueError) as exc:
        print(f"upload failed: {exc}")
        return 3
    print(f"version {version['number']} of bot {args.bot_id}: sha256 {version['sha256']}, {version['status']}")
    if not args.wait:
        return 0
    end = time.monotonic() + args.timeout
    while time.monotonic() < end:
        time.sleep(args.poll)
        try:
            version = _call("GET", f"{base}/api/bots/{args.bot_id}/versions/{version['number']}", token)
        except (OSError, ValueError) as exc:
            print(f"cannot read the version: {exc}")
            continue
        if version["status"] in EXIT:
            try:  # each game with the version's seat and its replay (a server before migration 0018 has none: 404)
                games = _call("GET", f"{base}/api/bots/{args.bot_id}/versions/{version['number']}/games",
                              token)["games"]
            except (OSError, ValueError, KeyError):
                games = None
            explain(version, games, base)
            return EXIT[version["status"]]
    print(f"no verdict within {args.timeout:.0f} s (status {version['status']})")
    return 3


LOG_LINES = 20
"""Lines of a refused version's stderr that ``--wait`` prints."""


def _game_line(kind: str, g: dict[str, Any], opponent: str, base: str) -> str:
    """One game: its game and seed, the version's seat counted from 1 and rank, a fault, the replay's address."""
    fault = g.get("fault")
    whose = "" if not fault else f"; {'your version' if fault.get('side') == 'a' else opponent}: " \
        f"{fault.get('verdict')}{' (' + fault['detail'] + ')' if fault.get('detail') else ''}"
    replay = f" — replay {base}{g['replay']}" if g.get("replay") else ""
    return (f"{kind}: {g['game']} (seed {str(g['seed'])[:12]}): your version in seat {g['seat'] + 1} of "
            f"{len(g['ranks'])}, rank {g['ranks'][g['seat']]}{whose}{replay}")


def explain(version: dict[str, Any], games: list[dict[str, Any]] | None = None, base: str = "") -> None:
    """Print a decided version's verdict: each validation and regression game (the version's seat counted
    from 1, its rank, a fault, and the address of its replay, ``GET
    /api/bots/{id}/versions/{n}/games/{kind}/{k}/replay``, which needs the token), the regression test,
    the verdict with its reason and, when the version is not taken, the last :data:`LOG_LINES` lines of
    its stderr (the owner's view carries them).

    Args:
        games: ``GET /api/bots/{id}/versions/{n}/games``'s ``games``; None or none (a version played before
            its games were kept): the validation games of ``version``, without replays.
        base: the site's address, before the replays' paths.
    """
    reg = version.get("regression") or {}
    if not games:
        games = [{**g, "kind": "validation"} for g in (version.get("validation") or {}).get("games", [])]
    for g in games:
        if g.get("kind") == "validation" and "seat" in g:  # (one decided before validation named the seat: not)
            print(_game_line("validation", g, "the house bot", base))
    regression = [g for g in games if g.get("kind") == "regression" and "seat" in g]
    for k, g in enumerate(regression):
        print(_game_line(f"regression game {k + 1}", g, f"version {reg.get('baseline')}", base))
    if reg.get("games"):
        print(f"regression test: {reg.get('verdict')} after {reg['games']} games, LLR {reg.get('llr')}, "
              f"Elo {reg.get('elo')} [{reg.get('elo_low')}, {reg.get('elo_high')}]")
    print(f"{version['status']}{': ' + version['reason'] if version.get('reason') else ''}")
    log = version.get("log") or ""
    if version["status"] in ("rejected", "failed_test") and log.strip():
        lines = log.rstrip("\n").split("\n")
        print(f"the version's stderr, last {min(LOG_LINES, len(lines))} of {len(lines)} lines:")
        for line in lines[-LOG_LINES:]:
            print(f"  {line}")
    elif version["status"] in ("rejected", "failed_test"):
        print("the version wrote nothing on stderr")


def register(b: Any) -> None:
    """Add ``bot upload`` to the ``bot`` subcommands ``b``."""
    bu = b.add_parser("upload", help="upload a new version of a hosted bot (docs/hosted.md)")
    bu.add_argument("bot_id", type=int, help="the hosted bot's id")
    bu.add_argument("path", help="a folder with parterre-bot.toml, or a .tar.gz / .zip")
    bu.add_argument("--url", help="the site (default: $PARTERRE_URL, else http://127.0.0.1:8000)")
    bu.add_argument("--token", help="personal API token with bot:manage (default $PARTERRE_API_TOKEN)")
    bu.add_argument("--wait", action="store_true", help="wait for the verdict; the exit status tells it")
    bu.add_argument("--timeout", type=float, default=3600.0, help="with --wait: seconds to wait for the verdict")
    bu.add_argument("--poll", type=float, default=5.0, help="with --wait: seconds between status checks")
    bu.set_defaults(func=cmd_bot_upload)
