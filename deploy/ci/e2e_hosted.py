"""The hosted-bot phase of the compose end-to-end run (deploy/ci/e2e.py; docs/hosted.md, docs/deploy.md).

A participant signs up on the web container's API, creates a bot, and uploads a Python stdio bot
(the SDK's greedy strategy) as a ``.tar.gz`` archive (``POST /api/bots/{id}/versions``). A worker
container validates it in its bubblewrap sandbox (uid 10001, the worker's seccomp profile, an
unmasked /proc: the settings of docker-compose.yml), the version becomes ``active``, the
continuous ladder pairs it although no process of its owner is connected, and a worker plays it
in a rated match. Checked from outside, through the API and ``psql`` (the oracles are the
referee's recorded seats and the ratings table, not the worker's word):

* the upload answers 201 with the archive's sha256 (hashed here);
* the version is ``active`` within :data:`VALIDATE_S` (else the failure quotes its reason and log);
* within :data:`MATCH_S` a ``finished`` rated match seats it, with verdict ``normal``, and the
  ratings count its games;
* its stderr of that match is in ``GET /api/bots/{id}/hosted-logs`` for the owner (and another
  account gets 404).

Standard library only, like e2e.py.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import secrets
import tarfile
import time
import urllib.error
import urllib.request
from typing import Any

VALIDATE_S = 60.0
"""Upload to ``active``: the hosted tick comes every 10 s, validation is 2 deals against greedy."""
MATCH_S = 60.0
"""``active`` to a finished rated match: a ladder round every 10 s, a match of about a second."""
MARKER = "hosted-e2e-stderr <script>alert(1)</script>"
"""What the bot prints to its stderr (the owner's log must hold it; the web page escapes it)."""

BOT = f'''"""A hosted bot of the compose e2e: the SDK's greedy strategy over the stdio line protocol.

Its imports (the SDK's engines) take part of a second on a loaded machine: the seat connects only
once the bot has read its first line (workers/hosting/seat.py), so they are not charged to a decision."""
import json
import subprocess
import sys

from bots.strategies import STRATEGIES

print({MARKER!r}, file=sys.stderr, flush=True)
# A user namespace of its own would let it mount a tmpfs outside its memory limit (docs/hosted.md).
try:
    nested = "allowed" if subprocess.run(["unshare", "-U", "-m", "-r", "true"], capture_output=True).returncode == 0 \
        else "refused"
except OSError as exc:  # no unshare in the image: say so (the check below then fails with this line)
    nested = f"not tried ({{exc}})"
print("nested-userns:", nested, file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "decision_request":
        continue
    legal = msg["legal_actions"]
    strategy = STRATEGIES.get(("greedy", msg["game"]))
    choice = strategy(msg["observation"], [a["action"] for a in legal], msg["seat"]) if strategy else 0
    print(choice, flush=True)
'''
MANIFEST = 'runtime = "python3.11"\ncommand = ["python3.11", "bot.py"]\nprotocol = "stdio"\ngames = ["floriferous"]\n'


class HostedFailure(Exception):
    """A check of the hosted phase failed (e2e.py reports it like its own failures)."""


def archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("parterre-bot.toml", MANIFEST), ("bot.py", BOT)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def call(web: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, Any]:
    """``(status, JSON body)`` of one request to the web container; HTTP errors are answers, not raised."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    hdrs = {"Content-Type": "application/octet-stream" if raw is not None else "application/json",
            **(headers or {})}
    req = urllib.request.Request(web + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:  # our own loopback service
            status, text = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read()
    try:
        return status, json.loads(text or b"null")
    except ValueError:
        return status, text.decode(errors="replace")


def signup(web: str, name: str) -> dict[str, str]:
    """A new participant account with a ``bot:manage`` token; returns the Authorization header."""
    password = secrets.token_urlsafe(18)
    status, out = call(web, "POST", "/api/accounts", {"username": name, "password": password})
    if status != 201:
        raise HostedFailure(f"sign-up of {name} answered {status}: {out}")
    basic = base64.b64encode(f"{name}:{password}".encode()).decode()
    status, out = call(web, "POST", "/api/tokens", {"scopes": ["bot:manage"]}, {"Authorization": f"Basic {basic}"})
    if status != 201 or not isinstance(out, dict) or "token" not in out:
        raise HostedFailure(f"token of {name}: {status} {out}")
    return {"Authorization": f"Bearer {out['token']}"}


def _poll(what: str, predicate: Any, timeout_s: float, explain: Any, every_s: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            raise HostedFailure(f"not within {timeout_s:.0f} s: {what}; {explain()}")
        time.sleep(every_s)


def hosted_phase(web: str, sql: Any, log: Any, report: dict[str, Any]) -> int:
    """Upload, validation, a rated match and the owner's log of it; returns the bot's id.

    Args:
        web: the web container's base URL.
        sql: ``query -> rows`` through psql in the postgres container.
        log: prints one progress line.
        report: gets ``hosted`` (timings and what was seen).
    """
    t0 = time.monotonic()
    owner = signup(web, "e2e-host-owner")
    status, bot = call(web, "POST", "/api/bots", {"name": "e2e-hosted", "games": ["floriferous"]}, owner)
    if status != 201:
        raise HostedFailure(f"creating the hosted bot answered {status}: {bot}")
    bot_id = int(bot["id"])
    data = archive()
    status, version = call(web, "POST", f"/api/bots/{bot_id}/versions", headers=owner, raw=data)
    if status != 201 or not isinstance(version, dict):
        raise HostedFailure(f"upload answered {status}: {version}")
    if version.get("sha256") != hashlib.sha256(data).hexdigest() or version.get("status") != "validating":
        raise HostedFailure(f"upload answered {version} (sha256 of the archive {hashlib.sha256(data).hexdigest()})")
    number = version["number"]
    uploaded = time.monotonic()
    log(f"hosted: bot {bot_id} version {number} uploaded through the API ({len(data)} bytes, sha256 "
        f"{version['sha256'][:12]}...)")

    def decided() -> dict[str, Any] | None:
        status, v = call(web, "GET", f"/api/bots/{bot_id}/versions/{number}", headers=owner)
        return v if status == 200 and v.get("status") not in ("validating", "testing") else None

    def version_now() -> str:
        return str(call(web, "GET", f"/api/bots/{bot_id}/versions/{number}", headers=owner)[1])[:1500]

    v = _poll(f"version {number} of bot {bot_id} decided by a worker", decided, VALIDATE_S, version_now)
    if v["status"] != "active":
        raise HostedFailure(f"the worker did not make version {number} active: status {v['status']}, reason "
                            f"{v.get('reason')!r}, log {str(v.get('log'))[-1500:]!r}")
    if "nested-userns: refused" not in str(v.get("log")):  # bwrap's --disable-userns in the worker container
        raise HostedFailure(f"the bot's nested user namespace was not refused: log {str(v.get('log'))[-1500:]!r}")
    games = v.get("validation", {}).get("games", [])
    active = time.monotonic()
    log(f"hosted: version {number} active after {active - uploaded:.0f} s ({len(games)} validation games in the "
        "worker's sandbox)")

    def rated() -> list[list[str]]:
        return sql(f"SELECT m.id, s.verdict FROM matches m JOIN seats s ON s.match_id = m.id WHERE s.bot_id = "
                   f"{bot_id} AND m.status = 'finished' ORDER BY m.id")

    def matches_now() -> str:
        rows = sql(f"SELECT m.id, m.status, s.verdict, coalesce(a.error, '') FROM matches m JOIN seats s ON "
                   f"s.match_id = m.id LEFT JOIN match_attempts a ON a.match_id = m.id WHERE s.bot_id = {bot_id} "
                   "ORDER BY m.id")
        return f"its matches (id, status, verdict, attempt error): {rows}"

    rows = _poll(f"a finished rated match of hosted bot {bot_id}", rated, MATCH_S, matches_now)
    played = time.monotonic()
    match_id, verdict = int(rows[0][0]), rows[0][1]
    if verdict != "normal":
        raise HostedFailure(f"hosted bot {bot_id} in match {match_id}: verdict {verdict!r}, expected normal")
    games_rated = int(sql(f"SELECT coalesce(sum(games), 0) FROM ratings WHERE bot_id = {bot_id} "
                          "AND game = 'floriferous'")[0][0])
    if games_rated < 1:
        raise HostedFailure(f"hosted bot {bot_id} played match {match_id} but the ratings count {games_rated} games")
    log(f"hosted: rated match {match_id} finished {played - active:.0f} s after activation (verdict {verdict}); "
        f"{games_rated} floriferous games rated")

    def logged() -> list[dict[str, Any]] | None:
        status, out = call(web, "GET", f"/api/bots/{bot_id}/hosted-logs", headers=owner)
        entries = out.get("logs", []) if status == 200 and isinstance(out, dict) else []
        return [e for e in entries if e.get("match_id") == match_id] or None

    def logs_now() -> str:
        return str(call(web, "GET", f"/api/bots/{bot_id}/hosted-logs", headers=owner))[:1500]

    (entry, *_) = _poll(f"the owner's log of match {match_id}", logged, 20, logs_now)
    if MARKER not in entry["log"]:
        raise HostedFailure(f"the owner's log of match {match_id} lacks the bot's stderr: {entry['log'][-1500:]!r}")
    stranger = signup(web, "e2e-host-stranger")
    status, out = call(web, "GET", f"/api/bots/{bot_id}/hosted-logs", headers=stranger)
    if status != 404:
        raise HostedFailure(f"another account read the hosted bot's logs: {status} {str(out)[:300]}")
    report["hosted"] = {"bot_id": bot_id, "validated_s": active - uploaded, "match_s": played - active,
                        "total_s": time.monotonic() - t0, "match_id": match_id, "validation_games": len(games)}
    log(f"hosted: the owner reads the bot's stderr of match {match_id}; another account gets 404 "
        f"(phase took {report['hosted']['total_s']:.0f} s)")
    return bot_id
