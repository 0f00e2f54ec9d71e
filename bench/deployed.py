"""The set-up the benchmarks of the system as deployed share: a fresh database, a private Redis, processes.

Used by ``bench/bench_whole_path.py``, ``bench/bench_competition_final.py`` and
``bench/bench_scale_out.py``. A :class:`Deployed` run has:

* a fresh PostgreSQL database on ``--admin-url`` (default ``PARTERRE_BENCH_DATABASE_URL`` or the
  machine's server), named ``<prefix>_<what>_<random>`` (the prefix is ``parterre_bench``, or
  ``PARTERRE_BENCH_DB_PREFIX``), migrated, dropped by :meth:`Deployed.close`;
* a private ``redis-server`` on ``--port-base`` + 9, without persistence, so that its CPU and its
  ``INFO`` counters are this run's alone;
* the environment every process of the run gets (``PARTERRE_DATABASE_URL``, ``PARTERRE_REDIS_URL``, a
  ``PARTERRE_HOME`` of its own, so one service token);
* child processes (``parterre up``, ``parterre referee``, ``parterre worker``, bots), each in a
  session of its own with its output in ``<name>.log`` of the run's folder; :meth:`Deployed.close`
  stops them in reverse order.

A bench lays its own listening ports out from ``--port-base`` (ten ports: BASE .. BASE + 9, below
the ephemeral range), so that two benches, or two copies of one, can run side by side.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_ADMIN = os.environ.get("PARTERRE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
"""The PostgreSQL server (a database on it that may create databases) the run's database is made on."""

DB_PREFIX_ENV = "PARTERRE_BENCH_DB_PREFIX"
"""Environment variable: the prefix of the run's database name (default ``parterre_bench``)."""

REDIS_OFFSET = 9
"""The private Redis listens on ``--port-base`` + this."""

PARTERRE = [sys.executable, "-m", "parterre.cli"]
"""The command line, as ``parterre up`` starts its children."""


def add_arguments(p: argparse.ArgumentParser, *, port_base: int) -> None:
    """Add ``--admin-url`` and ``--port-base`` (this bench's default ``port_base``) to a bench's parser."""
    p.add_argument("--admin-url", default=DEFAULT_ADMIN,
                   help="PostgreSQL server URL on which the run's database is created (and dropped)")
    p.add_argument("--port-base", type=int, default=port_base,
                   help=f"first of the ten TCP ports the run listens on (its private Redis on BASE+{REDIS_OFFSET})")


class Deployed:
    """One run's database, private Redis and child processes.

    Args:
        admin_url: the PostgreSQL server (see :data:`DEFAULT_ADMIN`).
        what: a word for the database name (``"path"``, ``"scale"``).
        port_base: the run's first port; the Redis listens on ``port_base + REDIS_OFFSET``.
        env: more variables for every child (e.g. ``PARTERRE_REFEREE_ADDRESS``).
        pool_size: connections of this process's own pool (:attr:`pool`) to the run's database.

    Attributes:
        url: the run's database URL.
        redis_url: the private Redis (database 0).
        redis: the ``redis-server`` process.
        pool: a ladder connection pool to :attr:`url` for the bench's own queries.
        env: the children's environment.
        dir: the run's folder (logs, ``PARTERRE_HOME``), removed by :meth:`close`.
    """

    def __init__(self, admin_url: str, what: str, port_base: int, *, env: Mapping[str, str] | None = None,
                 pool_size: int = 2) -> None:
        import psycopg

        from ladder import db as ladder_db

        self.admin_url = admin_url
        self.dir = Path(tempfile.mkdtemp(prefix=f"parterre-bench-{what}-"))
        self.db = f"{os.environ.get(DB_PREFIX_ENV) or 'parterre_bench'}_{what}_{secrets.token_hex(4)}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.pool: Any = None
        self.url = urlparse(admin_url)._replace(path="/" + self.db).geturl()
        self.redis_port = port_base + REDIS_OFFSET
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.env: dict[str, str] = {
            **os.environ, "PARTERRE_DATABASE_URL": self.url, "PARTERRE_REDIS_URL": self.redis_url,
            "PARTERRE_HOME": str(self.dir / "home"), "PYTHONPATH": str(ROOT), **(env or {}),
        }
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.db}"')
        try:
            self.redis = self.spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                                              "--save", "", "--appendonly", "no", "--dir", str(self.dir)])
            ladder_db.migrate(self.url)
            self.pool = ladder_db.make_pool(self.url, min_size=1, max_size=pool_size)
        except BaseException:
            self.close()
            raise

    def spawn(self, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``argv`` in a session of its own, output to ``<name>.log``; stopped by :meth:`close`."""
        with (self.dir / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, env={**self.env, **(env or {})}, stdout=log, stderr=log,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(proc)
        return proc

    def parterre(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``parterre ARGS`` (``parterre up``, ``parterre referee``, ...) as :meth:`spawn` does."""
        return self.spawn(name, [*PARTERRE, *args], env)

    def wait_grpc(self, address: str, proc: subprocess.Popen[bytes], name: str, timeout_s: float = 60.0) -> None:
        """Wait until a gRPC server answers on ``address``.

        Raises:
            RuntimeError: ``proc`` (logging to ``<name>.log``) exited meanwhile.
            TimeoutError: nothing answered in ``timeout_s``.
        """
        import grpc

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}): {self.log(name)}")
            with grpc.insecure_channel(address) as channel:
                try:
                    grpc.channel_ready_future(channel).result(timeout=1)
                    return
                except grpc.FutureTimeoutError:
                    continue
        raise TimeoutError(f"nothing answered on {address} in {timeout_s} s: {self.log(name)}")

    def queue_here(self) -> None:
        """Let this process queue Celery tasks to the run's Redis and read its database (``workers.app``)."""
        os.environ.update({"PARTERRE_REDIS_URL": self.redis_url, "PARTERRE_DATABASE_URL": self.url})
        from workers.app import app

        app.conf.update(broker_url=self.redis_url)

    def log(self, name: str) -> str:
        """The tail of one process's log."""
        path = self.dir / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def close(self) -> None:
        """Stop the processes (SIGTERM, then SIGKILL after 30 s), drop the database, remove the folder."""
        import psycopg

        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.pool is not None:
            self.pool.close()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
        shutil.rmtree(self.dir, ignore_errors=True)
