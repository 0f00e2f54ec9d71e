"""The web under an anonymous flood, in the memory the deployments give it (512 MiB).

Usage::

    .venv/bin/python bench/bench_web_flood.py [--admin-url URL] [--logins 60] [--bodies 200]
                                              [--uploads 150]
                                              [--memory-mib 512] [--no-limit]

It creates a database on ``--admin-url`` (default ``PARTERRE_BENCH_DATABASE_URL`` or the
machine's ``postgresql://postgres@127.0.0.1:5432/postgres``), migrates it, signs up one account,
and starts ``parterre web`` (uvicorn, as ``parterre up`` does) in a child process held to
``--memory-mib`` of resident memory the way a container's memory limit holds it: a watchdog reads
the child's RSS every 5 ms and SIGKILLs it once over the limit (the kernel's OOM killer in a
cgroup; docker-compose.yml and deploy/k8s give the web 512 MiB). A cgroup of its own would need
systemd or a writable cgroup tree, and ``RLIMIT_AS`` limits address space, not memory (the idle
web already maps 470 MiB with 95 MiB resident, so argon2's first 64 MiB fails under 512 MiB).
Then, one after the other:

* **logins**: ``--logins`` parallel ``POST /api/tokens`` with HTTP Basic, one account, wrong
  passwords (each argon2 check takes 64 MiB);
* **bodies**: ``--bodies`` anonymous connections at once, each sending a 9 MiB body without a
  length (``Transfer-Encoding: chunked``), to a path no route has (``/nope/hosted``) and then to
  an upload route (``/api/bots/1/versions``, no token);
* **uploads**: ``--uploads`` parallel chunked 7 MiB bodies of junk to ``POST /api/bots/{id}/versions``
  of a bot of the signed-up account, with its ``bot:manage`` token (each is refused 400), then the
  same bodies starting with gzip's magic bytes (read whole and inspected before they are refused).

A prober asks ``/api/health`` every 0.2 s throughout (answers within 5 s, failures). It prints one
line per flood (RSS before, peak, after) and exits 1 when the peak RSS went over the limit (the
process was killed) or ``/api/health`` stopped answering, else 0.

``--no-limit`` lets the child grow (nothing is killed), to see how far the memory would go.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import psutil  # type: ignore[import-untyped]  # psutil ships no type information

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_ADMIN = os.environ.get("PARTERRE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PASSWORD = "correct horse battery"
MIB = 1 << 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class WebProcess:
    """``parterre web`` in a child process under a memory watchdog (see :func:`start_web`).

    Attributes:
        peak_rss: the highest RSS seen since :meth:`reset_peak` (bytes).
        killed: the watchdog SIGKILLed the process for going over ``memory_bytes``.
    """

    proc: subprocess.Popen[bytes]
    url: str
    port: int
    home: tempfile.TemporaryDirectory[str]
    memory_bytes: int | None
    peak_rss: int = 0
    killed: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def watch_memory(self) -> None:
        """Read the child's RSS every 5 ms; SIGKILL it once over ``memory_bytes`` (a cgroup's OOM kill)."""
        proc = psutil.Process(self.proc.pid)
        while not self._stop.is_set():
            try:
                now = int(proc.memory_info().rss)
            except psutil.NoSuchProcess:
                return
            self.peak_rss = max(self.peak_rss, now)
            if self.memory_bytes is not None and now > self.memory_bytes:
                self.killed = True
                os.kill(self.proc.pid, signal.SIGKILL)
                return
            self._stop.wait(0.005)

    def reset_peak(self) -> int:
        """Start a new peak at the current RSS; returns it (0 once the process is gone)."""
        self.peak_rss = rss(self.proc.pid) if self.alive() else 0
        return self.peak_rss

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Terminate the child (its own id) and wait for it."""
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.home.cleanup()


def start_web(database_url: str, *, memory_bytes: int | None = 512 * MIB, timeout_s: float = 60.0,
              env: dict[str, str] | None = None) -> WebProcess:
    """Start ``parterre web`` on a free loopback port under a watchdog that SIGKILLs it once its RSS
    is over ``memory_bytes`` (None: only watched); return once ``/api/health`` answers.

    Raises:
        RuntimeError: the process exited or did not answer within ``timeout_s``.
    """
    port = _free_port()
    home = tempfile.TemporaryDirectory(prefix="parterre-flood-")
    child_env = {**os.environ, "PYTHONPATH": str(ROOT), "PARTERRE_DATABASE_URL": database_url,
                 "PARTERRE_HOME": home.name, "PARTERRE_SESSION_SECRET": secrets.token_urlsafe(48),
                 "PARTERRE_ENGINES": os.environ.get("PARTERRE_ENGINES", "pure"), **(env or {})}
    for name in ("PARTERRE_REDIS_URL", "PARTERRE_METRICS_PORT", "PARTERRE_ARGON2_SLOTS"):
        if name not in (env or {}):
            child_env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "parterre.cli", "web", "--host", "127.0.0.1", "--port", str(port)],
                            env=child_env, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    web = WebProcess(proc, f"http://127.0.0.1:{port}", port, home, memory_bytes)
    threading.Thread(target=web.watch_memory, name="memory-watchdog", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            web.stop()
            raise RuntimeError(f"parterre web exited with {proc.returncode}")
        if health(web.url, 1.0):
            return web
        time.sleep(0.1)
    web.stop()
    raise RuntimeError("parterre web did not answer /api/health in time")


def health(url: str, timeout_s: float) -> bool:
    """True when ``GET /api/health`` answers 200 within ``timeout_s``."""
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=timeout_s) as r:
            return bool(r.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@dataclass
class HealthProbe:
    """Asks ``/api/health`` every 0.2 s (each within 5 s) until stopped; counts answers and failures."""

    url: str
    ok: int = 0
    failed: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> HealthProbe:
        self._thread = threading.Thread(target=self._probe, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _probe(self) -> None:
        while not self._stop.is_set():
            if health(self.url, 5.0):
                self.ok += 1
            else:
                self.failed += 1
            self._stop.wait(0.2)


def rss(pid: int) -> int:
    """Resident set size of ``pid`` in bytes."""
    return int(psutil.Process(pid).memory_info().rss)


def sign_up(url: str, username: str, password: str = PASSWORD) -> None:
    """Sign up ``username`` through ``POST /api/accounts``."""
    req = urllib.request.Request(url + "/api/accounts", method="POST",
                                 data=json.dumps({"username": username, "password": password}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 201


def _token_request(url: str, username: str, password: str, timeout_s: float) -> int:
    basic = base64.b64encode(f"{username}:{password}".encode()).decode()
    req = urllib.request.Request(url + "/api/tokens", method="POST", data=b'{"scopes": ["challenge"]}',
                                 headers={"content-type": "application/json", "authorization": "Basic " + basic})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return -1


def parallel(n: int, one: Callable[[int], Any]) -> list[Any]:
    """Run ``one(i)`` for i < n in n threads released together (a barrier); their results in order."""
    barrier = threading.Barrier(n)

    def run(i: int) -> Any:
        barrier.wait()
        return one(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def login_flood(url: str, username: str, passwords: list[str], timeout_s: float = 60.0) -> Counter[int]:
    """One ``POST /api/tokens`` (HTTP Basic) per password, all at once; a count of the status codes
    (-1: no answer)."""
    return Counter(parallel(len(passwords), lambda i: _token_request(url, username, passwords[i], timeout_s)))


def chunked_body(url: str, path: str, body_bytes: int, *, chunk: int = 64 * 1024, timeout_s: float = 10.0,
                 headers: str = "", prefix: bytes = b"") -> tuple[int, int]:
    """POST ``body_bytes`` to ``path`` without a length (``Transfer-Encoding: chunked``), anonymously
    unless ``headers`` carry credentials.

    The body is ``prefix`` followed by ``a``s. Sends chunk after chunk until the body is sent, the
    server answers or closes, or a send waits ``timeout_s`` (the server stopped reading); then waits up
    to ``timeout_s`` for the status.

    Returns:
        (status, bytes of body sent); status -1 when no answer came.
    """
    host = urlparse(url)
    try:
        sock = socket.create_connection((host.hostname or "127.0.0.1", host.port or 80), timeout=timeout_s)
    except OSError:
        return -1, 0
    sent = 0
    try:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                     f"Transfer-Encoding: chunked\r\n{headers}\r\n".encode())
        piece = f"{chunk:x}\r\n".encode() + b"a" * chunk + b"\r\n"
        first = f"{chunk:x}\r\n".encode() + prefix + b"a" * (chunk - len(prefix)) + b"\r\n"
        sock.setblocking(False)
        try:
            while sent < body_bytes:
                try:
                    if sock.recv(1, socket.MSG_PEEK):
                        break  # the server answered before the whole body
                except BlockingIOError:
                    pass
                sock.settimeout(timeout_s)
                sock.sendall(first if sent == 0 else piece)
                sock.setblocking(False)
                sent += chunk
            else:
                sock.settimeout(timeout_s)
                sock.sendall(b"0\r\n\r\n")
        except (TimeoutError, OSError):
            pass
        sock.settimeout(timeout_s)
        try:
            head = sock.recv(64)
        except (TimeoutError, OSError):
            return -1, sent
        parts = head.split(b" ", 2)
        return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1), sent
    finally:
        sock.close()


def body_flood(url: str, path: str, n: int, body_bytes: int = 9 * MIB) -> Counter[int]:
    """``n`` anonymous chunked bodies of ``body_bytes`` to ``path`` at once; a count of the status codes."""
    return Counter(parallel(n, lambda _: chunked_body(url, path, body_bytes)[0]))


def upload_token(url: str, username: str, password: str = PASSWORD) -> tuple[str, int]:
    """An API token with scope ``bot:manage`` for ``username`` and a new bot of theirs:
    (token, bot id), both through the API as any participant gets them."""
    basic = base64.b64encode(f"{username}:{password}".encode()).decode()
    req = urllib.request.Request(url + "/api/tokens", method="POST", data=b'{"scopes": ["bot:manage"]}',
                                 headers={"content-type": "application/json", "authorization": "Basic " + basic})
    with urllib.request.urlopen(req, timeout=60) as r:
        token = str(json.load(r)["token"])
    req = urllib.request.Request(url + "/api/bots", method="POST",
                                 data=json.dumps({"name": f"{username}-bot"}).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return token, int(json.load(r)["id"])


def upload_flood(url: str, token: str, bot_id: int, n: int, body_bytes: int = 7 * MIB,
                 timeout_s: float = 120.0, prefix: bytes = b"") -> Counter[int]:
    """``n`` chunked ``POST /api/bots/{bot_id}/versions`` of ``body_bytes`` of junk (after ``prefix``,
    e.g. gzip's magic bytes) at once, with the owner's Bearer token; a count of the status codes (each
    is refused 400: not an archive, or not a readable one)."""
    auth = f"Authorization: Bearer {token}\r\n"
    return Counter(parallel(n, lambda _: chunked_body(url, f"/api/bots/{bot_id}/versions", body_bytes,
                                                      timeout_s=timeout_s, headers=auth, prefix=prefix)[0]))


@dataclass
class Flood:
    """One flood's outcome."""

    name: str
    codes: Counter[int]
    baseline_rss: int
    peak_rss: int
    after_rss: int
    health_ok: int
    health_failed: int
    alive: bool

    def line(self) -> str:
        codes = ", ".join(f"{c}: {n}" for c, n in sorted(self.codes.items()))
        return (f"{self.name:<34} RSS {self.baseline_rss / MIB:7.1f} -> peak {self.peak_rss / MIB:7.1f} -> "
                f"after {self.after_rss / MIB:7.1f} MiB; /api/health {self.health_ok} ok, "
                f"{self.health_failed} failed; {'alive' if self.alive else 'DIED'}; answers {{{codes}}}")


def run_flood(web: WebProcess, name: str, flood: Callable[[], Counter[int]]) -> Flood:
    """Run ``flood()`` while probing ``/api/health``; RSS before, at the peak and after (nothing is
    sent once the process is gone)."""
    if not web.alive():
        return Flood(name, Counter(), 0, 0, 0, 0, 0, False)
    base = web.reset_peak()
    with HealthProbe(web.url) as probe:
        codes = flood()
    alive = web.alive()
    after = rss(web.proc.pid) if alive else 0
    return Flood(name, codes, base, max(web.peak_rss, base), after, probe.ok, probe.failed, alive)


def make_database(admin_url: str) -> str:
    """Create and migrate a fresh database on ``admin_url``'s server; returns its URL."""
    import psycopg

    from ladder import migrate

    name = f"parterre_flood_{secrets.token_hex(5)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = urlparse(admin_url)._replace(path="/" + name).geturl()
    migrate(url)
    return url


def drop_database(admin_url: str, url: str) -> None:
    import psycopg

    name = urlparse(url).path.lstrip("/")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--admin-url", default=DEFAULT_ADMIN)
    ap.add_argument("--logins", type=int, default=60, help="parallel logins (default 60)")
    ap.add_argument("--bodies", type=int, default=200, help="parallel chunked bodies per path (default 200)")
    ap.add_argument("--uploads", type=int, default=150, help="parallel 7 MiB junk uploads (default 150)")
    ap.add_argument("--memory-mib", type=int, default=512, help="the web's memory (default 512)")
    ap.add_argument("--no-limit", action="store_true", help="watch the memory but kill nothing")
    args = ap.parse_args(argv)
    limit = args.memory_mib * MIB
    url = make_database(args.admin_url)
    web = start_web(url, memory_bytes=None if args.no_limit else limit)
    try:
        sign_up(web.url, "victim")
        sign_up(web.url, "uploader")
        token, bot_id = upload_token(web.url, "uploader")
        floods = [
            run_flood(web, f"{args.logins} parallel logins", lambda: login_flood(
                web.url, "victim", [f"wrong-guess-{i:04d}" for i in range(args.logins)])),
            run_flood(web, f"{args.bodies} chunked bodies, no route", lambda: body_flood(
                web.url, "/nope/hosted", args.bodies)),
            run_flood(web, f"{args.bodies} chunked bodies, upload", lambda: body_flood(
                web.url, "/api/bots/1/versions", args.bodies)),
            run_flood(web, f"{args.uploads} 7 MiB uploads, own bot", lambda: upload_flood(
                web.url, token, bot_id, args.uploads)),
            run_flood(web, f"{args.uploads} 7 MiB gzip-looking uploads", lambda: upload_flood(
                web.url, token, bot_id, args.uploads, prefix=b"\x1f\x8b")),
        ]
    finally:
        alive = web.alive()
        web.stop()
        drop_database(args.admin_url, url)
    print(f"web held to {args.memory_mib} MiB RSS ({'watched only' if args.no_limit else 'SIGKILL over it'})")
    for f in floods:
        print(f.line())
    peak = max(f.peak_rss for f in floods)
    failed = peak > limit or web.killed or not alive or any(not f.alive or f.health_failed for f in floods)
    print(f"peak RSS {peak / MIB:.1f} MiB (limit {args.memory_mib}); process {'alive' if alive else 'DIED'}; "
          f"{'FAIL' if failed else 'ok'}")
    from bench.harness import Goal, Result, report

    results = [Result(
        Goal(f"web peak RSS: {f.name}", "MiB", float(args.memory_mib), higher_is_better=False,
             source="docs/benchmarks.md"),
        # a killed process or a silent /api/health misses the goal whatever the RSS it reached
        [f.peak_rss / MIB if f.alive and not f.health_failed else float("inf")],
        [f.baseline_rss / MIB], "MiB before the flood",
        note=f"after {f.after_rss / MIB:.1f} MiB; /api/health {f.health_ok} ok, {f.health_failed} failed",
    ) for f in floods]
    return max(report(results, "the web under floods"), 1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
