"""Hosted bots in rated ladder matches (docs/hosted.md): API upload -> validation -> ladder -> ratings.

The whole chain with real processes: PostgreSQL, Redis, a ``parterre referee``
(checking tokens against the Redis hash, publishing presence), a ``parterre
worker`` (Celery, prefork, 2 slots). A Python, a Node.js and a static C bot are
uploaded through the JSON API as archives; ``parterre.hosted_tick`` on the
worker validates them; ``parterre.ladder_tick`` pairs them although no process
of theirs is connected; the worker that runs each match starts the seated bots
in their sandboxes with a platform-held credential.

Oracles, none of them the code under test: the referee's verdicts and the
recorded seats; games counted from the ``seats`` table against the
leaderboard's; Elo being zero-sum for 2-player games (the sum of the ratings
stays 3 x 1500); ``/proc`` read by the test for leftover processes; the
Python bot itself hunting for its token (``hosted_bots/snoop.py``); the
referee refusing a replaced version's credential on a real connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hosted import BOTS, manifest, owner, targz, upload
from test_hosted_seats import nothing_left

from ladder import db as ladder_db
from ladder import read
from ladder import submissions as sub
from ladder.bots import TOKENS_KEY
from parterre.demo import free_port, wait_for_referee
from parterre.embedded import celery_url
from web import create_app
from web.auth import ParticipantConfig

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0 or shutil.which("gcc") is None
                                or shutil.which("node") is None,
                                reason="needs bubblewrap, root (the workers' setting), gcc and node")
GAME = "floriferous(players=2)"


class Stack:
    """Child processes in their own process groups, logging to files."""

    def __init__(self, log_dir: Path, env: dict[str, str]) -> None:
        self.log_dir, self.env = log_dir, env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def cli(self, name: str, *args: str) -> None:
        with open(self.log_dir / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen([sys.executable, "-m", "parterre.cli", *args], env=self.env, cwd=ROOT,
                                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                start_new_session=True)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)

    def tail(self, name: str, n: int = 4000) -> str:
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace")[-n:] if path.exists() else ""


@pytest.fixture
def hosted_dir() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="parterre-hosted-ladder-", dir="/var/tmp"))
    base.chmod(0o711)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _count(pool: Any, sql: str, *params: Any) -> int:
    with pool.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _wait(what: str, predicate: Any, timeout_s: float, stack: Stack) -> None:
    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}\nworker:\n{stack.tail('worker')}\n"
                                 f"referee:\n{stack.tail('referee')}")
        time.sleep(0.5)


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _refused(address: str, token: str) -> bool:
    """Connect a real SDK bot with ``token``: True when the referee refuses it."""
    from bots.reference import RandomBot
    from bots.sdk import AuthenticationError

    async def go() -> bool:
        bot = RandomBot(seed=1)
        try:
            await asyncio.wait_for(bot.arun(address, token, reconnect=False), 3.0)
        except AuthenticationError:
            return True
        except TimeoutError:
            return False  # it was let in and waited for a match
        return False

    return asyncio.run(go())


def test_python_node_and_static_bots_play_rated_ladder_matches(database_url: str, redis_base_url: str,
                                                               tmp_path: Path, hosted_dir: Path) -> None:
    import redis

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=4)
    r = redis.Redis.from_url(redis_base_url)
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    web = create_app(pool=pool)
    web.state.participants = ParticipantConfig(signup="open")  # no Redis: the owners' tokens are never published
    clients = [TestClient(web, client=(f"203.0.113.{i + 1}", 50000)) for i in range(3)]

    exe = tmp_path / "bot"
    subprocess.run(["gcc", "-static", "-O2", "-o", str(exe), str(BOTS / "random_bot.c")], check=True)
    archives = {
        "python": targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "snoop.py"], ["floriferous"]),
                         "snoop.py": (BOTS / "snoop.py").read_bytes(), "greedy.py": (BOTS / "greedy.py").read_bytes()}),
        "node": targz({"parterre-bot.toml": manifest("node", ["node", "random_bot.js"], ["floriferous"]),
                       "random_bot.js": (BOTS / "random_bot.js").read_bytes()}),
        "static": targz({"parterre-bot.toml": manifest("static", ["./bot"], ["floriferous"]),
                         "bot": (exe.read_bytes(), 0o644)}),
    }
    bots: dict[str, int] = {}
    owners: dict[str, dict[str, str]] = {}
    for client, (kind, data) in zip(clients, archives.items(), strict=True):
        headers, bot_id = owner(client)
        res = upload(client, headers, bot_id, data)
        assert res.status_code == 201 and res.json()["status"] == "validating", res.text
        bots[kind], owners[kind] = bot_id, headers

    bot_port, control_port = free_port(), free_port()
    queue = f"parterre-hl-{secrets.token_hex(4)}"
    secret = secrets.token_urlsafe(32)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
        "PARTERRE_HOME": str(tmp_path),
        "PARTERRE_DATABASE_URL": database_url,
        "PARTERRE_REDIS_URL": redis_base_url,
        "PARTERRE_SERVICE_TOKEN": "hl-" + secrets.token_hex(8),
        "PARTERRE_QUEUE": queue,
        "PARTERRE_CLUSTER_NAMESPACE": f"parterre-hl-{secrets.token_hex(4)}",
        "PARTERRE_REFEREE_ADDRESS": f"127.0.0.1:{control_port}",
        "PARTERRE_HOSTED_DIR": str(hosted_dir),
        "PARTERRE_HOSTED_TOKEN_SECRET": secret,
        "PARTERRE_HOSTED_VALIDATION_DEALS": "1",
        "PARTERRE_SANDBOXES_PER_SLOT": "2",
        "PARTERRE_LADDER_GAMES": GAME,
        "PARTERRE_LADDER_TIME_CONTROL": "0:0:3000:500",
        "PARTERRE_NO_SHOW_TIMEOUT_MS": "20000",
        "PYTHONUNBUFFERED": "1",
    }
    stack = Stack(tmp_path, env)
    from workers.app import app

    old_broker = app.conf.broker_url
    try:
        stack.cli("referee", "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", "hosted-ladder")
        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)
        stack.cli("worker", "worker", "--concurrency", "2", "--loglevel", "INFO", "--hostname", "hosted@ladder")
        app.conf.update(broker_url=celery_url(redis_base_url))

        # Validation, on the worker (one version per tick).
        for _ in range(3):
            app.send_task("parterre.hosted_tick", queue=queue)
        _wait("three active versions", lambda: _count(
            pool, "SELECT count(*) FROM hosted_versions WHERE status <> 'validating'") == 3, 300, stack)
        versions = {kind: sub.active_version(pool, bot_id) for kind, bot_id in bots.items()}
        assert all(v is not None for v in versions.values()), [sub.list_versions(pool, b) for b in bots.values()]
        digests = {kind: sub.token_hash(sub.hosted_token(secret, v.id, v.sha256))
                   for kind, v in versions.items() if v is not None}

        def live() -> dict[str, str]:
            return {_s(k): _s(v) for k, v in r.hgetall(TOKENS_KEY).items()}

        # (a version is made active, then its credential is published: a moment apart)
        _wait("the three credentials published", lambda: all(d in live() for d in digests.values()), 30, stack)
        published = live()
        for kind, digest in digests.items():
            assert published.get(digest) == str(bots[kind]), kind  # the platform's credential, published
        assert nothing_left(str(hosted_dir))  # nothing runs between matches

        # Attack: the owner rotates the bot's ordinary token to connect an unsandboxed program in the hosted
        # bot's seats. A bot is hosted or connects from outside: the real referee refuses that token.
        from ladder import bots as ladder_bots

        own = ladder_bots.issue_token(pool, bots["node"], redis=r)
        assert _refused(f"127.0.0.1:{bot_port}", own)

        # The ladder pairs them with no process of theirs connected; the worker starts them.
        # Waves of rounds until each bot sat 3 matches (a bot with 2 pending matches sits a round out, so
        # how many a wave plans, and whom, depends on timing); matches of one bot run at once on the two slots.
        start = int(time.time() // 10) * 10
        rounds = 0
        for _wave in range(8):
            before = _count(pool, "SELECT count(*) FROM matches")
            for _ in range(6):
                app.send_task("parterre.ladder_tick", kwargs={"now": start + 10.0 * rounds, "period_s": 10.0},
                              queue=queue)
                rounds += 1
            _wait("ladder matches planned", lambda b=before: _count(pool, "SELECT count(*) FROM matches") > b,
                  60, stack)
            time.sleep(2.0)  # the rest of the wave's ticks
            _wait("every ladder match decided", lambda: _count(
                pool, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')") == 0, 600, stack)
            # (5 matches can already give each of the 3 bots 3 seats: the 6 matches are asked for too)
            if min(_count(pool, "SELECT count(*) FROM seats WHERE bot_id = %s", b) for b in bots.values()) >= 3 \
                    and _count(pool, "SELECT count(*) FROM matches") >= 6:
                break
        time.sleep(1.0)
        _wait("every ladder match decided", lambda: _count(
            pool, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')") == 0, 600, stack)

        with pool.connection() as conn:
            rows = conn.execute(
                "SELECT m.id, m.status, array_agg(s.bot_id ORDER BY s.seat), array_agg(s.verdict ORDER BY s.seat) "
                "FROM matches m JOIN seats s ON s.match_id = m.id GROUP BY m.id ORDER BY m.id").fetchall()
        assert len(rows) >= 6
        assert all(status == "finished" for _, status, _, _ in rows), rows
        assert all(verdicts == ["normal", "normal"] for *_, verdicts in rows), (rows, stack.tail("referee", 8000))
        played = {kind: sum(bot_id in seats for _, _, seats, _ in rows) for kind, bot_id in bots.items()}
        assert all(n >= 3 for n in played.values()), played
        print(f"\nhosted ladder: {len(rows)} rated matches, seats per bot {played}")
        assert _count(pool, "SELECT count(*) FROM replays") == len(rows)

        # Ratings: every bot rated with its games counted; 2-player Elo is zero-sum.
        board = {e.bot_id: e for e in read.leaderboard(pool, "floriferous")}
        for kind, bot_id in bots.items():
            assert board[bot_id].games == played[kind], (kind, board[bot_id])
        elos = [board[b].elo for b in bots.values()]
        assert all(e is not None for e in elos)
        assert abs(sum(e for e in elos if e is not None) - 3 * 1500.0) < 1e-6
        assert any(abs((e or 0) - 1500.0) > 1 for e in elos), elos  # ratings moved

        # Nothing of theirs is left, while the worker and the referee still run.
        assert stack.procs["worker"].poll() is None and stack.procs["referee"].poll() is None
        assert nothing_left(str(hosted_dir), within_s=10), "a process of theirs outlived its match"

        # The credential never reached the bot: it looked everywhere it could and logged it.
        logs = sorted((hosted_dir / "logs").glob(f"match-*-bot-{bots['python']}.log"))
        assert logs
        tokens = [sub.hosted_token(secret, v.id, v.sha256) for v in versions.values() if v is not None]
        for path in logs:
            text = path.read_text(errors="replace")
            assert "SNOOP-DONE" in text, text[-2000:]
            assert all(t not in text for t in tokens) and secret not in text and database_url not in text

        # The owner reads those logs through the API; nobody else does.
        path = f"/api/bots/{bots['python']}/hosted-logs"
        res = clients[0].get(path, headers=owners["python"])
        assert res.status_code == 200, res.text
        entries = res.json()["logs"]
        # one log per attempt: a match played again (its first attempt a no-show or an infra error under
        # load) has a log of each attempt
        assert len({(e["match_id"], e["attempt"]) for e in entries}) == len(entries)
        played = sorted(m for m, _, seats, _ in rows if bots["python"] in seats)
        assert sorted({e["match_id"] for e in entries}) == played
        assert all("SNOOP-DONE" in e["log"] and all(t not in e["log"] for t in tokens) for e in entries)
        assert clients[1].get(path, headers=owners["node"]).status_code == 404
        assert clients[1].get(path).status_code == 401

        # A new version replaces the Python bot's: its old credential is refused by the referee.
        old = versions["python"]
        assert old is not None
        old_token = sub.hosted_token(secret, old.id, old.sha256)
        assert not _refused(f"127.0.0.1:{bot_port}", old_token)  # live before the replacement
        # An identical resubmission, decided here as the worker would (a short test: 2 games, then active).
        res = upload(clients[0], owners["python"], bots["python"], archives["python"])
        assert res.status_code == 201
        sub.set_block_on_regression(pool, bots["python"], False)
        from workers.hosting import validation as hosted

        cfg = hosted.hosted_settings({**env, "PARTERRE_HOSTED_MAX_GAMES": "2"})
        for name, value in env.items():
            mp.setenv(name, value)
        assert hosted.process_version(pool, res.json()["id"], cfg) == "active"
        # the type: ignore below: Optional: old is a stored version
        assert sub.get_version(pool, old.id).status == "superseded"  # type: ignore[union-attr]
        assert sub.token_hash(old_token) not in {_s(k) for k in r.hkeys(TOKENS_KEY)}
        assert _refused(f"127.0.0.1:{bot_port}", old_token)
    finally:
        stack.stop_all()
        app.conf.update(broker_url=old_broker)
        mp.undo()
        pool.close()
    assert nothing_left(str(hosted_dir))
