"""A 20 s PostgreSQL outage under a running tournament (docs/faults.md, "Lost dependencies and
half-open connections", D-02).

Everything is real (``parterre referee``, ``parterre worker``, a bots process, ``parterre
tournament run --wait``), as in ``tests/e2e/test_faults_outage_e2e.py``; every process reaches
PostgreSQL through a TCP proxy of this test's own. The outage is the proxy cutting every open
connection and refusing new ones for 20 s (the database's host unreachable); PostgreSQL itself
goes on. Leases are 6 s and the worker reaps every 2 s, so every running lease runs out during the
outage although no worker dies.

Expected: ``--wait`` says the database is unreachable and that it keeps waiting, rides the outage
out and exits 0 with the 12 matches finished; no attempt is ended as a lost worker's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import pytest
from test_faults_e2e import BOTS_PROCESS, Stack
from test_faults_outage_e2e import _env, _finish, _q, _setup, _wait_run

from parterre.demo import free_port, wait_for_referee

pytestmark = [pytest.mark.e2e, pytest.mark.faults_e2e]


class CuttingProxy:
    """A TCP proxy in a thread of its own; while :attr:`cut` is set, open connections are closed
    and new ones closed as soon as accepted (the server unreachable)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port_up = host, port
        self.port = free_port()
        self.cut = threading.Event()
        self.loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self._ready.set()
        self.loop.run_forever()

    def set_cut(self, cut: bool) -> None:
        if cut:
            self.cut.set()
            self.loop.call_soon_threadsafe(self._close_all)
        else:
            self.cut.clear()

    def _close_all(self) -> None:
        for w in list(self._writers):
            w.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut.is_set():
            writer.transport.abort()
            return
        try:
            up_r, up_w = await asyncio.open_connection(self.host, self.port_up)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_w}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()
            self._writers.discard(dst)

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))


def test_d02_a_20_s_database_outage_is_ridden_out_and_blames_no_worker(database_url, redis_base_url, tmp_path):
    tid, bots = _setup(database_url, redis_base_url, 4)  # 12 matches
    parts = urlsplit(database_url)
    proxy = CuttingProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    proxy.start()
    proxied = urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port or 5432}", f":{proxy.port}")
                                        if parts.port else f"{parts.netloc}:{proxy.port}"))
    bot_port, control_port = free_port(), free_port()
    env = _env(tmp_path, proxied, redis_base_url, f"127.0.0.1:{control_port}",
               PARTERRE_LEASE_S="6", PARTERRE_WORKER_REAP_S="2", PARTERRE_STALE_PLANNED_S="3600")
    stack = Stack(tmp_path, env)
    t0 = time.monotonic()
    try:
        stack.cli("ref", "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                  f"127.0.0.1:{control_port}", "--referee-id", "ref")
        wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=60)
        spec = [{"token": tok, "address": f"127.0.0.1:{bot_port}"} for _, tok in bots]
        stack.start("bots", [sys.executable, "-c", BOTS_PROCESS, json.dumps(spec), "150"])
        stack.cli("worker1", "worker", "--concurrency", "2", "--loglevel", "INFO", "--hostname", "worker1@e2e")
        wait = _wait_run(stack, tid, 300)
        while _q(database_url, "SELECT count(*) FROM matches WHERE status = 'finished'")[0][0] < 2:
            assert time.monotonic() - t0 < 150, stack.tail("worker1")
            assert wait.poll() is None, stack.tail("wait")
            time.sleep(0.2)
        proxy.set_cut(True)
        cut_at = time.monotonic()
        running_at_cut = _q(database_url, "SELECT count(*) FROM matches WHERE status = 'running'")[0][0]
        while time.monotonic() - cut_at < 20.0:  # the outage lasts 20 s; everyone must live through it
            for name in ("wait", "worker1", "ref", "bots"):
                assert stack.procs[name].poll() is None, f"{name} died during the outage:\n{stack.tail(name)}"
            time.sleep(0.2)
        expired_during = _q(database_url, "SELECT count(*) FROM matches WHERE status = 'running' "
                                          "AND lease_until < now()")[0][0]
        proxy.set_cut(False)
        code = _finish(stack, wait, 240, ("worker1", "bots"))
    finally:
        stack.stop_all()
        proxy.loop.call_soon_threadsafe(proxy.loop.stop)
    out = stack.tail("wait", 20000)
    assert code == 0, out
    assert "Traceback" not in out, out
    assert "database unreachable" in out and "still waiting" in out, out
    assert "database reachable again" in out, out
    assert f"tournament {tid}: 12 matches: 12 finished" in out, out
    assert dict(_q(database_url, "SELECT status, count(*) FROM matches GROUP BY status")) == {"finished": 12}
    # the outage really let leases run out (else this test proves nothing) ...
    assert running_at_cut >= 1 and expired_during >= 1, (running_at_cut, expired_during)
    # ... and no attempt was ended as a lost worker's
    errors = [e for (e,) in _q(database_url, "SELECT error FROM match_attempts WHERE status <> 'finished'")]
    assert not [e for e in errors if e and "lease expired" in e], errors
