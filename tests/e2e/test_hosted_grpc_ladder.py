"""Hosted gRPC bots in rated ladder matches (docs/hosted.md "gRPC bots"), end to end.

As ``test_hosted_ladder``: PostgreSQL, Redis, a ``parterre referee`` and a ``parterre worker`` (2 slots),
archives uploaded through the API, validated on the worker (as trials on the stack's referee), then paired
by ``parterre.ladder_tick`` with no process of theirs connected. Here three of the four bots speak gRPC: the
Python SDK bot (``hosted_bots/grpc_bot.py probe``: it tries the real referee's bot and control ports,
PostgreSQL and Redis before playing), the Go bot of ``bots/go`` built static and the Node.js bot of
``bots/node`` with its ``node_modules``; the fourth is a stdio Python bot. Each rated seat of a gRPC
bot is a ``workers.hosting.seat --grpc-dir`` relay on its own socket.

Oracles: the referee's verdicts and the recorded seats, the leaderboard's games against the ``seats``
table, Elo's zero sum, ``/proc`` for leftovers, and the bot's own report of what it reached.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import test_hosted_grpc
import test_hosted_ladder
from test_hosted import BOTS, manifest, owner, targz, upload
from test_hosted_grpc import grpc_manifest, node_grpc_archive
from test_hosted_ladder import Stack, _count, _wait
from test_hosted_seats import nothing_left

from ladder import db as ladder_db
from ladder import read
from ladder import submissions as sub
from parterre.demo import free_port, wait_for_referee
from parterre.embedded import celery_url
from web import create_app
from web.auth import ParticipantConfig

pytestmark = test_hosted_ladder.pytestmark
hosted_dir, go_bot = test_hosted_ladder.hosted_dir, test_hosted_grpc.go_bot
GAME = "floriferous(players=2)"


def test_grpc_bots_play_rated_ladder_matches(database_url: str, redis_base_url: str, tmp_path: Path,
                                             hosted_dir: Path, go_bot: Path) -> None:
    from fastapi.testclient import TestClient

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=4)
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    web = create_app(pool=pool)
    web.state.participants = ParticipantConfig(signup="open")
    clients = [TestClient(web, client=(f"203.0.113.{i + 101}", 50000)) for i in range(4)]
    bot_port, control_port = free_port(), free_port()
    targets = [f"127.0.0.1:{bot_port}", f"127.0.0.1:{control_port}", "127.0.0.1:5432", "127.0.0.1:6379"]
    archives = {
        "python-grpc": targz({"parterre-bot.toml": grpc_manifest("python3.11", ["python3.11", "grpc_bot.py", "probe",
                                                                                *targets]),
                              "grpc_bot.py": (BOTS / "grpc_bot.py").read_bytes()}),
        "go-grpc": targz({"parterre-bot.toml": grpc_manifest("static", ["./bot"]),
                          "bot": (go_bot.read_bytes(), 0o644)}),
        "node-grpc": node_grpc_archive(),
        "python-stdio": targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "greedy.py"],
                                                             ["floriferous"]),
                               "greedy.py": (BOTS / "greedy.py").read_bytes()}),
    }
    bots: dict[str, int] = {}
    for client, (kind, data) in zip(clients, archives.items(), strict=True):
        headers, bot_id = owner(client)
        res = upload(client, headers, bot_id, data)
        assert res.status_code == 201 and res.json()["status"] == "validating", res.text
        bots[kind] = bot_id

    queue = f"parterre-hg-{secrets.token_hex(4)}"
    secret = secrets.token_urlsafe(32)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
        "PARTERRE_HOME": str(tmp_path), "PARTERRE_DATABASE_URL": database_url,
        "PARTERRE_REDIS_URL": redis_base_url, "PARTERRE_SERVICE_TOKEN": "hg-" + secrets.token_hex(8),
        "PARTERRE_QUEUE": queue, "PARTERRE_CLUSTER_NAMESPACE": f"parterre-hg-{secrets.token_hex(4)}",
        "PARTERRE_REFEREE_ADDRESS": f"127.0.0.1:{control_port}", "PARTERRE_HOSTED_DIR": str(hosted_dir),
        "PARTERRE_HOSTED_TOKEN_SECRET": secret, "PARTERRE_HOSTED_VALIDATION_DEALS": "1",
        "PARTERRE_SANDBOXES_PER_SLOT": "2", "PARTERRE_LADDER_GAMES": GAME,
        "PARTERRE_LADDER_TIME_CONTROL": "0:0:3000:500", "PARTERRE_NO_SHOW_TIMEOUT_MS": "20000",
        "PYTHONUNBUFFERED": "1",
    }
    stack = Stack(tmp_path, env)
    from workers.app import app

    old_broker = app.conf.broker_url
    try:
        stack.cli("referee", "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", "hosted-grpc")
        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)
        stack.cli("worker", "worker", "--concurrency", "2", "--loglevel", "INFO", "--hostname", "hosted@grpc")
        app.conf.update(broker_url=celery_url(redis_base_url))
        for _ in range(len(bots)):
            app.send_task("parterre.hosted_tick", queue=queue)
        _wait("every version decided", lambda: _count(
            pool, "SELECT count(*) FROM hosted_versions WHERE status <> 'validating'") == len(bots), 300, stack)
        versions = {kind: sub.active_version(pool, bot_id) for kind, bot_id in bots.items()}
        assert all(v is not None for v in versions.values()), [sub.list_versions(pool, b) for b in bots.values()]
        assert nothing_left(str(hosted_dir))

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
            time.sleep(2.0)
            _wait("every ladder match decided", lambda: _count(
                pool, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')") == 0, 600, stack)
            if min(_count(pool, "SELECT count(*) FROM seats WHERE bot_id = %s", b) for b in bots.values()) >= 2:
                break
        time.sleep(1.0)
        _wait("every ladder match decided", lambda: _count(
            pool, "SELECT count(*) FROM matches WHERE status IN ('planned', 'running')") == 0, 600, stack)

        with pool.connection() as conn:
            rows: list[Any] = conn.execute(
                "SELECT m.id, m.status, array_agg(s.bot_id ORDER BY s.seat), array_agg(s.verdict ORDER BY s.seat) "
                "FROM matches m JOIN seats s ON s.match_id = m.id GROUP BY m.id ORDER BY m.id").fetchall()
        assert len(rows) >= len(bots)
        assert all(status == "finished" for _, status, _, _ in rows), rows
        assert all(verdicts == ["normal", "normal"] for *_, verdicts in rows), rows
        played = {kind: sum(bot_id in seats for _, _, seats, _ in rows) for kind, bot_id in bots.items()}
        assert all(n >= 2 for n in played.values()), played
        print(f"\nhosted gRPC ladder: {len(rows)} rated matches, seats per bot {played}")
        board = {e.bot_id: e for e in read.leaderboard(pool, "floriferous")}
        for kind, bot_id in bots.items():
            assert board[bot_id].games == played[kind], (kind, board[bot_id])
        elos = [board[b].elo or 0.0 for b in bots.values()]
        assert abs(sum(elos) - len(bots) * 1500.0) < 1e-6

        assert stack.procs["worker"].poll() is None and stack.procs["referee"].poll() is None
        assert nothing_left(str(hosted_dir), within_s=10), "a process of theirs outlived its match"
        assert not list((hosted_dir / "run").glob("*/referee.sock")), "a seat's socket outlived its match"

        # The Python gRPC bot's own report from each rated seat: nothing but its relayed socket answered. (A seat
        # process may play another slot's match of its bot and its own seat process none: see
        # workers.hosting.grpc_relay, LINGER_S; such an idle one may be stopped before it reports.)
        logs = sorted((hosted_dir / "logs").glob(f"match-*-bot-{bots['python-grpc']}.log"))
        assert len(logs) == played["python-grpc"]
        tokens = [sub.hosted_token(secret, v.id, v.sha256) for v in versions.values() if v is not None]
        reports = [p.read_text(errors="replace") for p in logs]
        assert sum("PROBE done" in text for text in reports) >= 1, reports
        for text in reports:
            assert "CONNECTED" not in text and all(t not in text for t in tokens) and secret not in text, text
            if "PROBE done" in text:
                assert all(f"PROBE tcp {t} refused" in text for t in targets), text[-3000:]
                assert "PROBE control RunMatch UNIMPLEMENTED" in text
        for kind, mark in (("go-grpc", "go-bot: match"), ("node-grpc", "node-bot: match")):
            own = [p.read_text(errors="replace") for p in (hosted_dir / "logs").glob(f"match-*-bot-{bots[kind]}.log")]
            assert len(own) == played[kind] and any(mark in text for text in own), kind
    finally:
        stack.stop_all()
        shutil.copytree(hosted_dir / "logs", tmp_path / "hosted-logs", dirs_exist_ok=True)  # for a failure's story
        app.conf.update(broker_url=old_broker)
        mp.undo()
        pool.close()
    assert nothing_left(str(hosted_dir))
