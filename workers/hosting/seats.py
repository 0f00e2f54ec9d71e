"""Hosted bots in rated matches: the worker that runs a match starts its hosted seats (docs/hosted.md, "Rated matches").

When a match seats bots with an active hosted version
(:func:`ladder.competitions.match_versions`: the playing version, or in a competition's final
evaluation the one locked at its deadline), ``parterre.run_match`` wraps
the referee call in :class:`HostedSeats`:

1. refuse the match (an infrastructure error, never the bots' fault) when it
   seats more hosted bots than ``PARTERRE_SANDBOXES_PER_SLOT`` allows: a slot
   runs one match at a time and waits for its processes to end before it
   takes the next, so this bounds the bot processes of a slot;
2. for each hosted seat, start ``python -m workers.hosting.seat`` (the stdio
   adapter around ``python -m workers.hosting.sandbox``; for a gRPC bot, ``--grpc-dir``: the
   relay of ``workers.hosting.grpc_relay`` on a socket folder made for this seat, bound into its
   sandbox only, and removed when the seats stop) with the version's platform-held
   token in its environment only (:func:`ladder.submissions.hosted_token`,
   derived from ``PARTERRE_HOSTED_TOKEN_SECRET``) and ``--match-id``/``--attempt``
   (the referee seats it in this attempt of this match only:
   ``Hello.only_match_id``, ``only_attempt``), connected to
   the referee the match is sent to first; the referee sees an ordinary bot;
3. after the referee's result (or failure), ``SIGTERM`` them — an adapter
   still playing finishes its match first — wait up to the longest match,
   then ``SIGKILL`` what is left; the sandbox keeper kills its tree when its
   parent dies.

The bot's stderr of each match is kept (capped by the sandbox) in
``$PARTERRE_HOSTED_DIR/logs/match-<id>-bot-<bot>.log`` and, when the seats
stop, in ``hosted_match_logs`` (``GET /api/bots/{id}/hosted-logs``, its owner only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import competitions, hosted_logs
from ladder import submissions as sub
from workers.hosting.logs import prune_logs_at_times
from workers.hosting.run_dirs import RunDir, make_run_dir
from workers.hosting.validation import (
    CHILD_ENV,
    PROJECT,
    SandboxCapacityError,
    hosted_settings,
    is_grpc,
    sandbox_command,
    sandbox_refusal,
    token_secret,
    unpack,
)
from workers.settings import settings as worker_settings

log = logging.getLogger(__name__)

ADAPTER_ENV = CHILD_ENV
"""The worker's environment variables an adapter inherits (plus ``PYTHONPATH``, ``PARTERRE_HOSTED_DIR`` and
its token)."""


def seat_processes(marker: str | None = None) -> list[int]:
    """Pids of this machine's hosted-seat adapters and sandbox keepers (read from ``/proc``).

    Args:
        marker: keep only those whose command line contains it (e.g. a ``PARTERRE_HOSTED_DIR``).
    """
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        argv = raw.split(b"\0")
        seat_or_keeper = b"workers.hosting.seat" in argv or b"workers.hosting.sandbox" in argv
        if seat_or_keeper and (marker is None or marker.encode() in raw):
            out.append(int(entry))
    return out


class HostedSeats:
    """The hosted seats of one match attempt: a context manager (see the module doc).

    Args:
        pool: ladder pool.
        versions: ``{bot_id: active version}`` of the match's hosted seats.
        match_id / attempt: the attempt (names the logs).
        address: the referee's bot endpoint the adapters connect to.
        secret: the workers' token secret.
        cfg: :func:`workers.hosting.validation.hosted_settings` (``dir``, ``per_slot``, ``limits``).
        drain_s: how long to wait for an adapter still playing after the match.

    Raises:
        SandboxCapacityError: on entering, when ``len(versions) > cfg["per_slot"]``, or when this worker refuses
            hosted bots (``workers.hosting.validation.sandbox_refusal``: it cannot hold the sandbox's limits).
    """

    def __init__(self, pool: ConnectionPool, versions: dict[int, sub.HostedVersion], *, match_id: int, attempt: int,
                 address: str, secret: str, cfg: dict[str, Any] | None = None, drain_s: float = 600.0) -> None:
        self.pool, self.versions = pool, versions
        self.match_id, self.attempt, self.address = match_id, attempt, address
        self.secret = secret
        self.cfg = cfg or hosted_settings()
        self.drain_s = drain_s
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.logs: dict[int, Path] = {}
        self.grpc_dirs: list[RunDir] = []

    def __enter__(self) -> HostedSeats:
        if len(self.versions) > self.cfg["per_slot"]:
            raise SandboxCapacityError(
                f"match {self.match_id} seats {len(self.versions)} hosted bots; a worker slot may run "
                f"{self.cfg['per_slot']} (PARTERRE_SANDBOXES_PER_SLOT)")
        refusal = sandbox_refusal(self.cfg)
        if refusal:
            raise SandboxCapacityError(f"match {self.match_id}: this worker refuses hosted bots: {refusal}")
        logs = self.cfg["dir"] / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        prune_logs_at_times(logs, self.cfg)
        try:
            for bot_id, version in self.versions.items():
                self.procs[bot_id] = self._start(bot_id, version, logs)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, bot_id: int, version: sub.HostedVersion, logs: Path) -> subprocess.Popen[bytes]:
        bot_dir = unpack(self.pool, version, self.cfg["dir"])
        stderr_log = logs / f"match-{self.match_id}-bot-{bot_id}.log"
        self.logs[bot_id] = stderr_log
        grpc_args: list[str] = []
        grpc_dir = None
        if is_grpc(version.manifest):  # its own socket folder, bound into its sandbox only (workers.hosting.grpc_relay)
            # Locked (workers.hosting.run_dirs) by this worker and by the seat, which inherits the lock: a sweep
            # after this worker's SIGKILL leaves it to the seat still playing, and removes it once it is gone.
            run_dir = make_run_dir(self.cfg["dir"] / "run", f"m{self.match_id}-a{self.attempt}-b{bot_id}-")
            self.grpc_dirs.append(run_dir)
            grpc_dir = run_dir.path
            grpc_args = ["--grpc-dir", str(grpc_dir)]
        command = sandbox_command(bot_dir, version.manifest, self.cfg["limits"], stderr_log, grpc_dir)
        adapter_dir = logs / "adapter"
        # Only what the adapter needs: none of the worker's settings (database URL, service token...).
        env = {k: os.environ[k] for k in ADAPTER_ENV if k in os.environ}
        env.update(PYTHONPATH=str(PROJECT), PARTERRE_HOSTED_DIR=str(self.cfg["dir"]),
                   PARTERRE_BOT_TOKEN=sub.hosted_token(self.secret, version.id, version.sha256))
        argv = [sys.executable, "-m", "workers.hosting.seat", "--address", self.address, "--log-dir", str(adapter_dir),
                "--name", f"hosted-{bot_id}", "--version", str(version.number), "--match-id", str(self.match_id),
                "--attempt", str(self.attempt),
                *grpc_args, "--", *command]
        with open(logs / f"match-{self.match_id}-adapter-{bot_id}.log", "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    cwd=PROJECT, env=env, start_new_session=True,
                                    pass_fds=tuple(d.lock_fd for d in self.grpc_dirs if d.path == grpc_dir))
        log.info("match %s attempt %s: hosted bot %s version %s started (pid %s)", self.match_id, self.attempt,
                 bot_id, version.number, proc.pid)
        return proc

    def stop(self) -> dict[int, int | None]:
        """Drain and stop every adapter (see the module doc); returns ``{bot_id: exit code}``."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        end = time.monotonic() + self.drain_s
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("match %s: hosted seat pid %s still running after %.0f s: killed", self.match_id,
                            proc.pid, self.drain_s)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for run_dir in self.grpc_dirs:
            run_dir.remove()
        return {bot_id: proc.returncode for bot_id, proc in self.procs.items()}

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        codes = self.stop()
        refused = [bot_id for bot_id, code in codes.items() if code == 3]
        if refused:
            log.warning("match %s: the referee refused the credential of hosted bot(s) %s", self.match_id, refused)
        for bot_id, path in self.logs.items():  # the owner's log of this match (API: hosted-logs)
            try:
                tail = path.read_bytes()[-hosted_logs.MATCH_LOG_CHARS:] if path.exists() else b""
                hosted_logs.save_match_log(self.pool, self.match_id, self.attempt, bot_id, self.versions[bot_id].id,
                                           tail.decode("utf-8", "replace"),
                                           kept=self.cfg.get("logs_kept", hosted_logs.MATCH_LOGS_KEPT))
            except Exception as exc:  # the match is recorded already; a lost log must not fail the task
                log.warning("match %s: cannot keep the log of hosted bot %s: %s", self.match_id, bot_id, exc)


def bot_address(control_addresses: list[str], referees: list[Any]) -> str:
    """The bot endpoint of the referee a match is sent to first.

    ``referees`` are ``workers.directory.RefereeInfo`` (the cluster's presence): the one whose control
    address comes first gives its bot address; without presence, ``PARTERRE_HOSTED_REFEREE_ADDRESS``,
    else the first control address (a referee serves both on one port unless told otherwise).

    Raises:
        SandboxCapacityError: no address at all (no referee configured or discovered).
    """
    by_control = {r.control_address: r.address for r in referees}
    for addr in control_addresses:
        if addr in by_control:
            return str(by_control[addr])
    configured = worker_settings().hosted_referee_address
    if configured:
        return configured
    if not control_addresses:
        raise SandboxCapacityError("no referee to connect the hosted bots to")
    return control_addresses[0]


def seats_for_match(pool: ConnectionPool, seat_bot_ids: list[int], *, match_id: int, attempt: int,
                    control_addresses: list[str], referees: list[Any], drain_s: float) -> Any:
    """A context manager for the match's hosted seats: :class:`HostedSeats`, or a null context when the
    match seats no hosted bot (or the workers hold no token secret: then none plays).

    Raises:
        SandboxCapacityError: raised on entering, as :class:`HostedSeats`.
    """
    secret = token_secret()
    # each bot's playing version, or in a competition's final evaluation the version locked at its deadline
    versions = competitions.match_versions(pool, match_id, list(seat_bot_ids)) if secret else {}
    if not versions or secret is None:
        return contextlib.nullcontext()
    return HostedSeats(pool, versions, match_id=match_id, attempt=attempt,
                       address=bot_address(control_addresses, referees), secret=secret, drain_s=drain_s)
