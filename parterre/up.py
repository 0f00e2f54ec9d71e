"""``parterre up``: the multi-process stack on one machine, without Docker.

Runs, as child processes of this one, what ``docker-compose.yml`` runs as
containers: the referee, Celery workers, Celery beat and the web site, against the configured PostgreSQL
and Redis (``PARTERRE_DATABASE_URL`` / ``PARTERRE_REDIS_URL``) or the embedded
ones in ``$PARTERRE_HOME``. Bots are not part of it: register them with
``parterre bot register`` and run them with ``parterre bot run`` or
``parterre connect``.

Each child:

* is ``python -m parterre.cli ROLE ...`` in a process group of its own, so a
  Ctrl-C at the terminal reaches only ``parterre up``, which then stops the
  children in order (below); on Linux a child also gets SIGTERM if
  ``parterre up`` itself dies, so none is left behind;
* logs JSON lines to ``$PARTERRE_HOME/logs/up/ROLE.log``;
* serves Prometheus metrics on a port of its own (``--metrics-port BASE``:
  referee BASE, workers BASE+1.., then beat, then web; ``0`` = free ports).

Shutdown (SIGINT or SIGTERM): web, beat and workers get SIGTERM first (a
worker finishes its running match), then the referee; whatever is still
running after ``--grace`` seconds per step is killed with its whole process
group (Celery's pool processes included). ``parterre up`` returns only when
every child has exited: 0 after a requested stop, 1 when a child failed to
start or kept exiting.

Supervision: once the stack is up, a child that exits on its own (a worker
that lost Redis, a crash) is logged with its role and exit status and started
again after a backoff (1 s, doubling up to 30 s); the others keep running
(docs/faults.md D-06). A child that exits more than ``MAX_RESTARTS`` times
within ``RESTART_WINDOW_S`` seconds stops the stack, with a message naming it.

The addresses are printed and written to ``$PARTERRE_HOME/run/up.json``
(``referee``, ``web``, ``metrics``: role -> URL, ``pids``: role -> pid),
once every child is ready.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parterre import embedded
from parterre import settings as settings_mod

READY_TIMEOUT_S = 120.0
"""How long a child may take to become ready (the machine may be slow and busy)."""


MAX_RESTARTS = 5
"""How many times one child is started again within :data:`RESTART_WINDOW_S` before the stack stops."""

RESTART_WINDOW_S = 60.0
"""The window (seconds) over which a child's restarts are counted."""

RESTART_BACKOFF_S = (1.0, 30.0)
"""The first wait before a restart and its cap (seconds); the wait doubles with each restart in the window."""


class UpError(RuntimeError):
    """The stack could not be started; the message names the child and its log."""


class Interrupted(Exception):
    """A stop was requested (SIGINT/SIGTERM) while the stack was starting."""


@dataclass(frozen=True, slots=True)
class UpConfig:
    """What ``parterre up`` runs.

    Attributes:
        referee_address: ``host:port`` of the referee (bots and workers connect there).
        workers: number of Celery worker processes (each with its own pool).
        concurrency: pool size of each worker (matches at once per worker).
        web: run the web site.
        web_host / web_port: where it listens (port 0 = a free port).
        beat: run Celery beat.
        house: run ``parterre house`` (the house bots, always connected for challenges and gauntlets).
        metrics_host: interface of the metrics endpoints.
        metrics_port: first metrics port; ``0`` = free ports; ``None`` = no endpoints.
        grace_s: seconds each shutdown step waits before killing.
    """

    referee_address: str
    workers: int = 1
    concurrency: int = 2
    web: bool = True
    web_host: str = "127.0.0.1"
    web_port: int = 8000
    beat: bool = True
    house: bool = True
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = 9100
    grace_s: float = 15.0


def _parent_death_signal() -> Any:
    """A function for ``preexec_fn`` that makes the child get SIGTERM when this process dies
    (Linux ``prctl(PR_SET_PDEATHSIG)``), or ``None`` elsewhere. Looked up before the fork,
    so that the child only makes the call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def set_in_child() -> None:
        prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG

    return set_in_child


@dataclass
class Child:
    """One running child process."""

    role: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    metrics_url: str | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    restarts: list[float] = field(default_factory=list)
    """Monotonic times of its restarts within the last :data:`RESTART_WINDOW_S`."""
    restart_at: float | None = None
    """When it is due to start again (monotonic seconds), while it waits out its backoff."""

    @property
    def pid(self) -> int:
        """Its pid (also its process group id)."""
        return int(self.proc.pid)


@dataclass
class Stack:
    """The children of ``parterre up``, started in order and stopped in reverse.

    Attributes:
        log_dir: where each child's log goes (``ROLE.log``).
        env: environment common to every child.
        stop_requested: set by SIGINT/SIGTERM.
    """

    log_dir: Path
    env: Mapping[str, str]
    stop_requested: threading.Event = field(default_factory=threading.Event)
    children: list[Child] = field(default_factory=list)

    def start(self, role: str, argv: list[str], *, env: Mapping[str, str | None] | None = None,
              metrics_url: str | None = None) -> Child:
        """Start ``python ARGV`` (``argv`` after the interpreter) in its own process group."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        child_env = dict(self.env)
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        log_path = self.log_dir / f"{role}.log"
        child = Child(role, self._spawn(argv, child_env, log_path), log_path, metrics_url, list(argv), child_env)
        self.children.append(child)
        return child

    @staticmethod
    def _spawn(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as log:
            return subprocess.Popen(
                [sys.executable, *argv], env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, process_group=0, preexec_fn=_parent_death_signal(),
            )

    def supervise(self, now: float, say: Any = None) -> bool:
        """Start again each child that exited on its own; returns whether any pid changed.

        Args:
            now: the monotonic clock (seconds); passed in so that the backoff can be tested.
            say: ``say(text)`` reports each exit and restart (default: standard error).

        A child found exited is logged (role, exit status) and due again after
        ``RESTART_BACKOFF_S[0] * 2**k`` seconds (capped at ``RESTART_BACKOFF_S[1]``), ``k`` its
        restarts within the last :data:`RESTART_WINDOW_S`; its process group is killed first, so
        no pool process of the old one is left.

        Raises:
            Interrupted: a stop was requested.
            UpError: a child exited more than :data:`MAX_RESTARTS` times within
                :data:`RESTART_WINDOW_S` (the stack is to stop).
        """
        if self.stop_requested.is_set():
            raise Interrupted()
        report = say or (lambda text: print(text, file=sys.stderr, flush=True))
        changed = False
        for child in self.children:
            if child.restart_at is None:
                code = child.proc.poll()
                if code is None:
                    continue
                child.restarts = [t for t in child.restarts if now - t < RESTART_WINDOW_S]
                if len(child.restarts) >= MAX_RESTARTS:
                    raise UpError(f"{child.role} exited with status {code}, after {len(child.restarts)} restarts "
                                  f"within {RESTART_WINDOW_S:.0f} s; stopping the stack; see {child.log_path}")
                _signal_group(child, signal.SIGKILL, leader_only=False)
                first, cap = RESTART_BACKOFF_S
                wait = min(cap, first * 2 ** len(child.restarts))
                child.restart_at = now + wait
                report(f"parterre up: {child.role} (pid {child.pid}) exited with status {code}; restarting it in "
                       f"{wait:.0f} s (restart {len(child.restarts) + 1} of at most {MAX_RESTARTS} within "
                       f"{RESTART_WINDOW_S:.0f} s); see {child.log_path}")
            if child.restart_at is not None and now >= child.restart_at:
                child.restart_at = None
                child.restarts.append(now)
                child.proc = self._spawn(child.argv, child.env, child.log_path)
                changed = True
                report(f"parterre up: {child.role} started again (pid {child.pid})")
        return changed

    def check_alive(self) -> None:
        """Raise :class:`Interrupted` when a stop was requested, :class:`UpError` when a child exited."""
        if self.stop_requested.is_set():
            raise Interrupted()
        for child in self.children:
            code = child.proc.poll()
            if code is not None:
                raise UpError(f"{child.role} exited with status {code}; see {child.log_path}")

    def wait_http(self, child: Child, url: str, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Wait until ``GET url`` answers 2xx (checking that the stack is alive meanwhile)."""
        from parterre.health import check_http

        deadline = time.monotonic() + timeout_s
        while True:
            self.check_alive()
            problem = check_http(url, timeout_s=2)
            if problem is None:
                return
            if time.monotonic() > deadline:
                raise UpError(f"{child.role} not ready within {timeout_s:.0f} s ({problem}); see {child.log_path}")
            time.sleep(0.3)

    def stop(self, grace_s: float) -> None:
        """Stop every child: web, beat and workers first, then the referee; kill leftovers.

        Returns when no child (and no process of their groups) is left.
        """
        first = [c for c in self.children if c.role != "referee"]
        last = [c for c in self.children if c.role == "referee"]
        for group in (first, last):
            for child in reversed(group):
                if child.proc.poll() is None:
                    _signal_group(child, signal.SIGTERM, leader_only=True)
            deadline = time.monotonic() + grace_s
            for child in group:
                with contextlib.suppress(subprocess.TimeoutExpired):  # killed below
                    child.proc.wait(max(0.05, deadline - time.monotonic()))
        for child in self.children:  # whatever is left, in any group: killed
            _signal_group(child, signal.SIGKILL, leader_only=False)
            child.proc.wait()
        for child in self.children:
            _wait_group_empty(child.pid, 5.0)


def _signal_group(child: Child, sig: int, *, leader_only: bool) -> None:
    try:
        if leader_only:
            child.proc.send_signal(sig)
        else:
            os.killpg(child.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_group_empty(pgid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)


def serve_web(host: str, port: int) -> None:
    """Serve the web site on ``host:port`` with JSON logs, until SIGINT/SIGTERM (the ``web`` child).

    The database is ``$PARTERRE_DATABASE_URL`` (already migrated by ``parterre up``);
    ``/metrics`` is served on ``$PARTERRE_METRICS_PORT`` by the app itself
    (``web/metrics.py``).
    """
    import uvicorn

    from parterre import logging as plog
    from web import create_app, memory
    from web.live import config_from_env
    from web.serving import uvicorn_options

    plog.configure("web")
    memory.limit_arenas()  # before uvicorn starts a thread: uploads' freed archives go back (web/memory.py)
    # live matches: the referees' feed on $PARTERRE_REDIS_URL, relayed after $PARTERRE_LIVE_DELAY seconds
    app = create_app(os.environ["PARTERRE_DATABASE_URL"], live=config_from_env())
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, **uvicorn_options())


def _port(host: str, base: int | None, offset: int) -> int | None:
    if base is None:
        return None
    if base == 0:
        from parterre.demo import free_port

        return free_port()
    return base + offset


def _cli(*args: str) -> list[str]:
    return ["-m", "parterre.cli", *args]


def run_up(cfg: UpConfig, *, services: embedded.Services | None = None, out: Any = None) -> int:
    """Start the stack, wait for SIGINT/SIGTERM or a child's exit, stop it; returns the exit status.

    Args:
        cfg: what to run.
        services: PostgreSQL and Redis already resolved (default: resolve them here,
            starting the embedded ones when not configured; they live as long as this call).
        out: where the addresses are printed (default stdout).

    Returns:
        0 after a requested stop; 1 when a child failed to start or kept exiting (see ``Stack.supervise``).

    Raises:
        parterre.embedded.EmbeddedServiceError: an embedded server could not start.
    """
    from ladder import db
    from parterre.demo import free_port, wait_for_referee

    out = out or sys.stdout

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    st = settings_mod.load()
    services = services or embedded.resolve(st)
    db.migrate(services.database_url)
    run_dir = st.home / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **services.environ(),
        "PARTERRE_HOME": str(st.home),
        "PARTERRE_REFEREE_ADDRESS": cfg.referee_address,
        "PARTERRE_SERVICE_TOKEN": st.service_token,
        # hosted bots' credentials in rated matches (docs/hosted.md): kept in the home like the service token
        "PARTERRE_HOSTED_TOKEN_SECRET": settings_mod.hosted_token_secret(st.home),
        "PARTERRE_LOG_FORMAT": os.environ.get("PARTERRE_LOG_FORMAT") or "json",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # only workers use it, each its own
    env.pop("PARTERRE_METRICS_PORT", None)  # each child gets its own
    stack = Stack(st.home / "logs" / "up", env)

    def on_signal(signum: int, _frame: Any) -> None:
        stack.stop_requested.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    status = 0
    try:
        offset = 0

        def metrics_env() -> tuple[dict[str, str | None], str | None]:
            nonlocal offset
            port = _port(cfg.metrics_host, cfg.metrics_port, offset)
            offset += 1
            if port is None:
                return {"PARTERRE_METRICS_PORT": None}, None
            return ({"PARTERRE_METRICS_PORT": f"{cfg.metrics_host}:{port}"},
                    f"http://{cfg.metrics_host}:{port}/metrics")

        m_env, m_url = metrics_env()
        referee = stack.start("referee", _cli("referee", "--address", cfg.referee_address), env=m_env,
                              metrics_url=m_url)
        wait_for_referee(cfg.referee_address, stack, timeout_s=READY_TIMEOUT_S)
        say(f"referee      {cfg.referee_address}  (pid {referee.pid})")

        workers = []
        for i in range(1, cfg.workers + 1):
            m_env, m_url = metrics_env()
            m_env["PROMETHEUS_MULTIPROC_DIR"] = str(run_dir / "metrics" / f"worker-{i}")
            workers.append(stack.start(
                f"worker-{i}",
                _cli("worker", "--concurrency", str(cfg.concurrency), "--loglevel", "INFO",
                     "--hostname", f"up{os.getpid()}-{i}@%h"),
                env=m_env, metrics_url=m_url,
            ))

        beat = None
        if cfg.beat:
            m_env, m_url = metrics_env()
            beat = stack.start("beat", _cli("beat"), env=m_env, metrics_url=m_url)

        house = None
        if cfg.house:
            house = stack.start("house", _cli("house", "--address", cfg.referee_address),
                                env={"PARTERRE_METRICS_PORT": None})
            say(f"house        pid {house.pid}  (house-random, house-greedy, house-search)")

        web = None
        web_url = None
        if cfg.web:
            m_env, m_url = metrics_env()
            port = free_port() if cfg.web_port == 0 else cfg.web_port
            web_url = f"http://{cfg.web_host}:{port}"
            web = stack.start("web", _cli("web", "--host", cfg.web_host, "--port", str(port)), env=m_env,
                              metrics_url=m_url)

        for child in workers + ([beat] if beat else []):
            if child.metrics_url:
                stack.wait_http(child, child.metrics_url)
            say(f"{child.role:<12} pid {child.pid}")
        if web is not None and web_url is not None:
            stack.wait_http(web, web_url + "/api/health")
            say(f"web          {web_url}  (pid {web.pid})")
        metrics = {c.role: c.metrics_url for c in stack.children if c.metrics_url}
        for role, url in metrics.items():
            say(f"metrics      {role:<10} {url}")
        state = {
            "pid": os.getpid(),
            "referee": cfg.referee_address,
            "web": web_url,
            "metrics": metrics,
            "pids": {c.role: c.pid for c in stack.children},
            "logs": str(stack.log_dir),
            "embedded": services.embedded_names,
        }
        state_path = run_dir / "up.json"

        def write_state() -> None:
            state["pids"] = {c.role: c.pid for c in stack.children}
            tmp = state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, indent=2))
            tmp.replace(state_path)

        write_state()
        say(f"logs in {stack.log_dir}; state in {state_path}. Ctrl-C stops everything.")

        while not stack.stop_requested.wait(0.5):
            if stack.supervise(time.monotonic(), say):
                write_state()
    except Interrupted:
        pass
    except RuntimeError as exc:  # UpError, or the referee never became healthy
        print(f"parterre: error: {exc}", file=sys.stderr, flush=True)
        status = 1
    finally:
        say("stopping ...")
        stack.stop(cfg.grace_s)
        (run_dir / "up.json").unlink(missing_ok=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        say("stopped")
    return status
