"""Start-up wiring of logs and metrics for each server process.

Every server process (``parterre referee``, ``worker``, ``beat``, ``web``)
calls :func:`setup_process` first thing: JSON logs (:mod:`parterre.logging`)
and, when a metrics port is configured, a Prometheus ``/metrics`` endpoint
served by ``prometheus_client.start_http_server`` on a port of its own (never
on the public web port).

The port comes from ``--metrics-port`` or ``PARTERRE_METRICS_PORT``: ``PORT``
(all interfaces, as in a container) or ``HOST:PORT``; unset or empty = no
endpoint. ``0`` picks a free port (logged).

Celery's prefork pool runs tasks in child processes, each with its own
memory: a worker uses prometheus_client's multiprocess mode
(:func:`prepare_multiprocess`), where every process writes its samples to
files in ``PROMETHEUS_MULTIPROC_DIR`` and the endpoint in the main process
adds them up. That directory must be set before ``prometheus_client`` is
first imported, and must belong to one worker (it is emptied at start).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from parterre import logging as plog

log = logging.getLogger(__name__)

ENV_PORT = "PARTERRE_METRICS_PORT"
ENV_MULTIPROC = "PROMETHEUS_MULTIPROC_DIR"


class MetricsSetupError(RuntimeError):
    """The metrics endpoint cannot be set up as asked; the message says why."""


def parse_metrics_address(value: str | int | None, *, default_host: str = "0.0.0.0") -> tuple[str, int] | None:
    """``"9100"`` -> ``("0.0.0.0", 9100)``; ``"127.0.0.1:9100"`` -> as given; ``None``/``""`` -> ``None``.

    Raises:
        MetricsSetupError: not a port 0..65535 or host:port.
    """
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    host, sep, port = text.rpartition(":")
    if not sep:
        host = default_host
    if not port.isdigit() or not 0 <= int(port) <= 65535 or (sep and not host):
        raise MetricsSetupError(f"{ENV_PORT}={text!r}: expected a port (9100) or host:port (127.0.0.1:9100)")
    return host, int(port)


def metrics_address(flag: str | int | None) -> tuple[str, int] | None:
    """The metrics address from ``--metrics-port`` (wins) or ``PARTERRE_METRICS_PORT``."""
    return parse_metrics_address(flag if flag not in (None, "") else os.environ.get(ENV_PORT))


def prepare_multiprocess(directory: str | os.PathLike[str] | None = None) -> Path:
    """Switch prometheus_client to multiprocess mode for this process and its children.

    Uses ``directory``, else ``$PROMETHEUS_MULTIPROC_DIR``, else a new
    temporary directory (removed at exit); empties it (files of a previous run
    would be added in) and exports it as ``PROMETHEUS_MULTIPROC_DIR``.

    Returns:
        The directory.

    Raises:
        MetricsSetupError: ``prometheus_client`` was already imported in
            single-process mode (too late to switch).
    """
    chosen = directory or os.environ.get(ENV_MULTIPROC)
    if "prometheus_client" in sys.modules:
        from prometheus_client import values

        if values.ValueClass is values.MutexValue:
            raise MetricsSetupError(
                "prometheus_client was imported before multiprocess mode was set up; "
                f"set {ENV_MULTIPROC} before starting the process"
            )
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="parterre-metrics-"))
        owner = os.getpid()

        def remove_in_owner() -> None:  # forked children inherit atexit handlers: only the creator removes
            if os.getpid() == owner:
                shutil.rmtree(path, ignore_errors=True)

        atexit.register(remove_in_owner)
    os.environ[ENV_MULTIPROC] = str(path)
    return path


def start_metrics_server(host: str, port: int, *, multiprocess: bool = False) -> int:
    """Serve ``/metrics`` on ``host:port`` from a daemon thread; returns the bound port.

    Args:
        multiprocess: aggregate the files of ``PROMETHEUS_MULTIPROC_DIR``
            (all processes of a Celery worker) instead of this process's registry.

    Raises:
        MetricsSetupError: the port is taken or cannot be bound.
    """
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

    registry: Any = REGISTRY
    if multiprocess:
        from prometheus_client import multiprocess as mp

        registry = CollectorRegistry()
        mp.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
    try:
        server, _thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise MetricsSetupError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}") from None
    return int(server.server_address[1])


def setup_process(process: str, *, metrics_port: str | int | None = None, multiprocess: bool = False,
                  log_level: str | int | None = None) -> int | None:
    """Configure JSON logs and, if a port is configured, serve ``/metrics``.

    Args:
        process: the role (``referee``, ``worker``, ``beat``, ``web``).
        metrics_port: the ``--metrics-port`` flag (``None``: use ``PARTERRE_METRICS_PORT``).
        multiprocess: the process forks workers that record metrics (Celery prefork).
            Must be called before ``prometheus_client`` is imported.
        log_level: root log level (default ``$PARTERRE_LOG_LEVEL`` or ``INFO``).

    Returns:
        The bound metrics port, or ``None`` when no endpoint was asked for.

    Raises:
        MetricsSetupError: bad port, port taken, or multiprocess mode asked too late.
        ValueError: bad ``PARTERRE_LOG_FORMAT`` / ``PARTERRE_LOG_LEVEL``.
    """
    plog.configure(process, level=log_level)
    address = metrics_address(metrics_port)
    if address is None:
        return None
    if multiprocess:
        prepare_multiprocess()
    bound = start_metrics_server(*address, multiprocess=multiprocess)
    log.info("serving Prometheus metrics on http://%s:%d/metrics", address[0], bound,
             extra={"metrics_port": bound})
    return bound
