"""``parterre remote ...``: a participant's commands against any Parterre deployment, over HTTP only.

Settings: ``PARTERRE_URL`` (the site, e.g. ``https://ladder.example.org``; default
``http://127.0.0.1:8000``) and ``PARTERRE_API_TOKEN`` (a personal API token; ``remote token``
prints one). ``remote signup`` and ``remote token`` read the password from ``$PARTERRE_PASSWORD``
or ask for it. Every command prints the JSON answer; an HTTP error exits with status 1 and the
server's message. No database access is ever needed.
"""

from __future__ import annotations

import argparse
import base64
import getpass
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from parterre.commands.common import CliError
from parterre.settings import cli_settings

POLICIES = ("accept", "ask", "none")
"""A bot's challenge policies (``ladder.owned_bots.CHALLENGE_POLICIES``; this module imports no ladder code)."""


class RemoteError(Exception):
    """The server answered with an error status; the message is its ``detail``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


def call(method: str, path: str, body: Any = None, *, token: str | None = None, basic: tuple[str, str] | None = None,
         base_url: str | None = None, timeout_s: float = 30.0) -> Any:
    """One API call; returns the decoded JSON (None for 204).

    Raises:
        RemoteError: a 4xx/5xx answer. OSError: the site cannot be reached.
    """
    url = (base_url or cli_settings().url).rstrip("/") + path
    data = None if body is None else json.dumps(body).encode()
    headers = {"accept": "application/json"}
    if data is not None:
        headers["content-type"] = "application/json"
    if basic is not None:
        headers["authorization"] = "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()
    elif token is not None:
        headers["authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # the operator's URL
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except (ValueError, AttributeError):
            detail = exc.reason
        raise RemoteError(exc.code, detail if isinstance(detail, str) else json.dumps(detail)) from None
    return json.loads(raw) if raw else None


def _token() -> str:
    token = cli_settings().api_token
    if not token:
        raise CliError("set PARTERRE_API_TOKEN to a personal API token (parterre remote token prints one)")
    return token


def _password(username: str) -> str:
    return cli_settings().password or getpass.getpass(f"password for {username}: ")


def _is_id(item: str) -> bool:
    """An id is ASCII digits only (``str.isdigit`` also accepts ``'²'`` and full-width digits)."""
    return item.isascii() and item.isdigit()


def _ids(flag: str, text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``; anything else is a one-line :class:`CliError` naming ``flag``."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not all(_is_id(x) for x in items):
        raise CliError(f"{flag} {text!r}: expected comma-separated integers")
    return [int(x) for x in items]


def bot_ids(text: str, game: str, auth: dict[str, Any], per_page: int = 500) -> list[int]:
    """The bot ids of ``--bots``: each item an id (ASCII digits), or a bot's name (names are unique on
    a ladder; a bot whose name is all digits is given by its id).

    A name is looked up among the caller's bots (``GET /api/account/bots``), then
    among the house bots that play ``game``'s game (``GET /api/house-bots?game=``;
    a house bot stands on a leaderboard only after its first rated match), then on
    that game's leaderboard (``GET /api/leaderboard/{name}``, page by page).

    Raises:
        CliError: an empty list, or a name found in neither place.
        RemoteError: the site refused a lookup (e.g. an unknown game). OSError: unreachable.
    """
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise CliError("--bots: give one bot name or id per seat")
    wanted = {x for x in items if not _is_id(x)}
    found: dict[str, int] = {}
    if wanted:
        for bot in call("GET", "/api/account/bots", **auth):
            if bot["name"] in wanted:
                found[bot["name"]] = int(bot["id"])
        game_name = game.partition("(")[0].strip()
        if wanted - set(found):
            for house in call("GET", f"/api/house-bots?game={urllib.parse.quote(game_name, safe='')}"):
                if house["name"] in wanted:
                    found.setdefault(house["name"], int(house["bot_id"]))
        page, pages = 1, 1
        while wanted - set(found) and page <= pages:
            board = call("GET", f"/api/leaderboard/{urllib.parse.quote(game_name, safe='')}"
                                f"?page={page}&per_page={per_page}")
            for row in board["rows"]:
                if row["name"] in wanted:
                    found.setdefault(row["name"], int(row["bot_id"]))
            page, pages = page + 1, int(board["pages"])
    missing = [x for x in items if x in wanted and x not in found]
    if missing:
        raise CliError(f"--bots: no bot named {', '.join(map(repr, missing))} among your bots, the house bots or "
                       f"the {game.partition('(')[0]} leaderboard; give its id (parterre remote bots lists yours)")
    return [int(x) if _is_id(x) else found[x] for x in items]


def _run(args: argparse.Namespace) -> tuple[str, str, Any, dict[str, Any]]:
    c = args.remote_cmd
    if c == "signup":
        return "POST", "/api/accounts", {"username": args.username, "password": _password(args.username)}, {}
    if c == "token":
        return ("POST", "/api/tokens", {"scopes": args.scopes.split(","), "label": args.label},
                {"basic": (args.username, _password(args.username))})
    auth = {"token": _token()}
    if c == "bots":
        return "GET", "/api/account/bots", None, auth
    if c == "bot-create":
        policy = args.challenge_policy or ("accept" if args.accept_challenges else "none")
        return "POST", "/api/bots", {"name": args.name, "description": args.description,
                                     "games": [g for g in args.games.split(",") if g],
                                     "challenge_policy": policy}, auth
    if c == "bot-rotate":
        return "POST", f"/api/bots/{args.bot_id}/token", None, auth
    if c == "bot-retire":
        return "POST", f"/api/bots/{args.bot_id}/retire", None, auth
    if c == "bot-set":
        body: dict[str, Any] = {}
        if args.accept_challenges is not None:
            body["accepts_challenges"] = args.accept_challenges
        if args.challenge_policy is not None:
            body["challenge_policy"] = args.challenge_policy
        if args.challenge_games is not None:
            body["challenge_games"] = [g for g in args.challenge_games.split(",") if g] or None
        return "PATCH", f"/api/bots/{args.bot_id}/settings", body, auth
    if c == "matches":
        return "GET", f"/api/bots/{args.bot_id}/matches?limit={args.limit}", None, auth
    if c == "seat-view":
        q = f"?bot_id={args.bot}" if args.bot else ""
        return "GET", f"/api/matches/{args.match_id}/seat-view{q}", None, auth
    if c == "challenge":
        return ("POST", "/api/challenges",
                {"game": args.game, "bots": bot_ids(args.bots, args.game, auth), "rated": args.rated,
                 "expires_after_s": args.expires}, auth)
    if c == "challenges":
        path = "/api/challenges/incoming" + ("?pending=true" if args.pending else "") if args.incoming \
            else "/api/challenges"
        return "GET", path, None, auth
    if c == "challenge-show":
        return "GET", f"/api/challenges/{args.match_id}", None, auth
    if c in ("challenge-accept", "challenge-decline"):
        return "POST", f"/api/challenges/{args.match_id}/{c.removeprefix('challenge-')}", None, auth
    if c == "bot-search":
        query = urllib.parse.urlencode({"q": args.query, **({"game": args.game} if args.game else {})})
        return "GET", f"/api/bots/search?{query}", None, auth
    if c == "tournament-create":
        return "POST", "/api/tournaments", {
            "name": args.name, "game": args.game, "format": args.format,
            "player_counts": _ids("--players", args.players), "rounds": args.rounds,
            "bot_ids": _ids("--bots", args.bots),
            "candidate_bot_id": args.candidate, "entry_deadline": args.entry_deadline}, auth
    if c == "tournament-enter":
        return "POST", f"/api/tournaments/{args.tournament_id}/entries", {"bot_id": args.bot_id}, auth
    raise AssertionError(c)


def cmd_remote(args: argparse.Namespace) -> int:
    """Run one ``remote`` subcommand; prints the JSON answer. Exit 1 on an HTTP error or an
    unreachable site (one line on stderr), 2 on bad input (:class:`CliError`)."""
    try:
        method, path, body, kw = _run(args)
        out = call(method, path, body, **kw)
    except RemoteError as exc:
        print(f"parterre remote: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"parterre remote: cannot reach the site: {exc}", file=sys.stderr)
        return 1
    if out is not None:
        print(json.dumps(out, indent=2, default=str))
    return 0


def register(sub: Any) -> None:
    """Add ``remote`` and its subcommands to the ``parterre`` parser's subparsers."""
    r = sub.add_parser("remote", help="a participant's commands over the HTTP API ($PARTERRE_URL, $PARTERRE_API_TOKEN)")
    s = r.add_subparsers(dest="remote_cmd", required=True)
    p = s.add_parser("signup", help="create an account (password from $PARTERRE_PASSWORD or asked)")
    p.add_argument("username", help="the user name to sign up with")
    p = s.add_parser("token", help="create a personal API token (prints it once)")
    p.add_argument("username", help="your user name (password from $PARTERRE_PASSWORD or asked)")
    p.add_argument("--scopes", default="bot:manage,challenge",
                   help="comma-separated: bot:manage,tournament:create,challenge")
    p.add_argument("--label", default="", help="a note to tell your tokens apart (default: none)")
    s.add_parser("bots", help="list my bots")
    p = s.add_parser("bot-create", help="create a bot; prints its referee token once")
    p.add_argument("name", help="the bot's name on the ladder (unique)")
    p.add_argument("--description", default="", help="shown on the bot's page (default: none)")
    p.add_argument("--games", default="", help="comma-separated games it plays (default: any)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--accept-challenges", action="store_true", help="the same as --challenge-policy accept")
    g.add_argument("--challenge-policy", choices=POLICIES,
                   help="accept: every challenge is played; ask: each waits for my answer; none: refused "
                        "(default: none)")
    for name, what in (("bot-rotate", "new referee token (the old one is refused)"), ("bot-retire", "retire for good")):
        p = s.add_parser(name, help=what)
        p.add_argument("bot_id", type=int, help="my bot's id (parterre remote bots lists them)")
    p = s.add_parser("bot-set", help="my bot's challenge policy, and the games it may be challenged in")
    p.add_argument("bot_id", type=int, help="my bot's id (parterre remote bots lists them)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--accept-challenges", dest="accept_challenges", action="store_true", default=None,
                   help="accept challenges (default: leave as it is)")
    g.add_argument("--refuse-challenges", dest="accept_challenges", action="store_false",
                   help="refuse challenges (default: leave as it is)")
    g.add_argument("--challenge-policy", choices=POLICIES,
                   help="accept every challenge, ask me each time, or none (default: leave as it is)")
    p.add_argument("--challenge-games", help="comma-separated games it accepts challenges in; empty = all its games "
                   "(default: leave as it is)")
    p = s.add_parser("matches", help="my bot's matches with verdicts and reasons")
    p.add_argument("bot_id", type=int, help="my bot's id (parterre remote bots lists them)")
    p.add_argument("--limit", type=int, default=20, help="how many, newest first")
    p = s.add_parser("seat-view", help="a finished match seen from my bot's seat")
    p.add_argument("match_id", type=int, help="the match's id")
    p.add_argument("--bot", type=int,
                   help="which of my bots' seats, when several of mine played (default: the server picks mine)")
    p = s.add_parser("challenge", help="challenge bots to one match; prints the match id")
    p.add_argument("--game", required=True, help="game string, e.g. floriferous or floriferous(players=3)")
    p.add_argument("--bots", required=True, help="comma-separated bot names or ids, one per seat, mine first")
    p.add_argument("--rated", action="store_true",
                   help="a rated match (default: casual, as the site's challenge form; the operator's "
                        "`parterre challenge create` is rated unless --casual)")
    p.add_argument("--expires", type=float, default=300.0,
                   help="seconds it waits for the owners' answers and then the bots")
    p = s.add_parser("challenges", help="the challenges I sent, or (--incoming) those asking my answer")
    p.add_argument("--incoming", action="store_true", help="challenges that asked my answer for one of my bots")
    p.add_argument("--pending", action="store_true", help="with --incoming: only those still waiting for it")
    for name, what in (("challenge-show", "one challenge I sent or one of my bots is in, with its answers"),
                       ("challenge-accept", "accept a challenge to my bots"),
                       ("challenge-decline", "decline a challenge to my bots: it is never played")):
        p = s.add_parser(name, help=what)
        p.add_argument("match_id", type=int, help="the challenge's match id")
    p = s.add_parser("bot-search", help="find bots to challenge by name, with owner, ratings and policy")
    p.add_argument("query", help="part of a bot's name")
    p.add_argument("--game", help="only bots that play this game (default: any)")
    p = s.add_parser("tournament-create", help="create a tournament (organisers)")
    p.add_argument("--name", required=True, help="the tournament's name")
    p.add_argument("--game", required=True, help="game name, e.g. floriferous")
    p.add_argument("--format", default="round_robin", choices=["round_robin", "gauntlet", "duplicate"],
                   help="round_robin (everyone meets everyone), gauntlet (--candidate against the others), "
                        "duplicate (one deal per round, every seat rotation)")
    p.add_argument("--players", default="2", help="comma-separated player counts, e.g. 2,3")
    p.add_argument("--rounds", type=int, default=1, help="times each pairing is played")
    p.add_argument("--bots", default="", help="comma-separated bot ids seated now: mine and house bots (default: none)")
    p.add_argument("--candidate", type=int, help="a gauntlet's candidate bot id")
    p.add_argument("--entry-deadline", help="ISO 8601 time until which bots may enter (UTC unless it names a zone)")
    p = s.add_parser("tournament-enter", help="enter my bot into a tournament")
    p.add_argument("tournament_id", type=int, help="the tournament's id")
    p.add_argument("bot_id", type=int, help="my bot's id")
    r.set_defaults(func=cmd_remote)
