"""The hosted bots' runtimes: what each offers inside the sandbox and needs on the worker (docs/hosted.md, "Runtimes").

:mod:`workers.hosting.sandbox` builds the ``bwrap`` command line; this module says what a runtime adds to it:
the Debian modules a Python runtime binds in (:func:`python_module_binds`), the JVM options of the ``java``
runtime sized from the sandbox's limits (:func:`java_options`), and whether this worker has the runtime at all
(:func:`runtime_missing`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

RUNTIMES = ("python3.11", "python3.11-numpy", "node", "static", "java")
"""Runtimes a manifest may name (docs/hosted.md, "Runtimes")."""

PYTHON_MODULES = {"python3.11": (), "python3.11-numpy": ("numpy",)}
"""The Python runtimes and the Debian-packaged modules (``/usr/lib/python3/dist-packages``) each offers beyond the
standard library and the SDK: ``numpy`` is Debian's ``python3-numpy``, built for Debian's ``python3.11``."""
DIST_PACKAGES = ("/usr/lib/python3/dist-packages", "/usr/lib/python3.11/dist-packages",
                 "/usr/local/lib/python3.11/dist-packages")
"""Where Debian's ``python3.11`` looks for third-party modules. Each is an empty read-only folder in every
sandbox (any bot may start ``/usr/bin/python3.11``), into which only a Python runtime's :data:`PYTHON_MODULES`
are bound: a bot sees what its runtime names, not whatever the worker machine happens to have installed."""
DEBIAN_MODULES = Path("/usr/lib/python3/dist-packages")
"""Where Debian's ``python3-*`` packages put their modules."""

RUNTIME_PROGRAMS = {"python3.11": "/usr/bin/python3.11", "python3.11-numpy": "/usr/bin/python3.11",
                    "node": "/usr/bin/node", "java": "/usr/bin/java"}
"""The program each runtime needs on the worker (``static`` needs none)."""
RUNTIME_PACKAGES = {"python3.11": "python3.11", "python3.11-numpy": "python3-numpy", "node": "nodejs",
                    "java": "openjdk-17-jre-headless"}
"""The Debian package that provides each runtime (deploy/Dockerfile installs them all)."""

JAVA_CONFIG = "/etc/java-*-openjdk"
"""Debian's OpenJDK keeps its configuration (``jvm.cfg``, ``security/java.security``, ...) under ``/etc``, linked
from the JDK's folder: bound read-only for the ``java`` runtime (without it ``MessageDigest`` or ``UUID`` fail)."""
JAVA_CODE_CACHE_MB = 32
JAVA_METASPACE_MB = 64


def python_module_binds(modules: Sequence[str]) -> list[str]:
    """``bwrap`` arguments that empty every folder of :data:`DIST_PACKAGES` (a read-only tmpfs over it) and bind
    into Debian's only ``modules`` (each package's folder and its ``.egg-info``/``.dist-info``), read-only, at
    their own paths: ``import numpy`` finds Debian's numpy where Debian put it, and nothing else of the folder."""
    out: list[str] = []
    for folder in DIST_PACKAGES:
        if not os.path.isdir(folder):
            continue
        out += ["--tmpfs", folder]
        if Path(folder) == DEBIAN_MODULES:
            for name in modules:
                for path in [DEBIAN_MODULES / name, *sorted(DEBIAN_MODULES.glob(f"{name}-*.egg-info")),
                             *sorted(DEBIAN_MODULES.glob(f"{name}-*.dist-info"))]:
                    if path.exists():
                        out += ["--ro-bind", str(path), str(path)]
        out += ["--remount-ro", folder]
    return out


def java_options(memory_mb: int, cpus: float) -> list[str]:
    """The JVM options the ``java`` runtime puts right after ``java`` in the bot's command (docs/hosted.md,
    "Runtimes"). The JVM sizes itself from the machine (``sysinfo``: every core and all the memory of the host,
    not the sandbox's limits): a default heap of a quarter of the host's memory, and with G1 a garbage-collector
    thread per core or so, would meet the memory limit as an OOM kill and the process limit as a failed thread.
    So: a heap of half the memory limit (the rest for metaspace, code cache, stacks, the JVM itself), the
    serial collector (no GC threads), two JIT compiler threads, the processor count of the CPU quota, no
    ``/tmp/hsperfdata`` file, ``java.io.tmpdir`` on ``/scratch``, and exit at once when the heap runs out
    (``ExitOnOutOfMemoryError``: status 3 and the JVM's message in the log, where a thread dying of it could
    leave the bot waiting for its timeout). ``memory_mb`` and ``cpus`` are the sandbox's limits
    (``workers.hosting.sandbox.Limits``). Options of the bot's own that come later win over these; the
    sandbox's limits hold whatever they say."""
    opts = [f"-XX:MaxRAM={memory_mb}m", f"-Xmx{max(16, memory_mb // 2)}m", "-Xms8m",
            "-XX:+UseSerialGC", "-XX:CICompilerCount=2", f"-XX:ReservedCodeCacheSize={JAVA_CODE_CACHE_MB}m",
            f"-XX:MaxMetaspaceSize={JAVA_METASPACE_MB}m", "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
            "-XX:+DisplayVMOutputToStderr", "-Xlog:disable", "-Xlog:all=warning:stderr",
            "-XX:ErrorFile=/scratch/hs_err_pid%p.log", "-Djava.io.tmpdir=/scratch"]
    if cpus > 0:
        opts.append(f"-XX:ActiveProcessorCount={max(1, math.ceil(cpus))}")
    return opts


def runtime_missing(runtime: str) -> str:
    """Why this worker cannot run ``runtime`` (its program or module is not installed), or ``""``."""
    program = RUNTIME_PROGRAMS.get(runtime)
    if program is not None and not os.path.exists(program):
        return f"runtime {runtime} is not installed on this worker: no {program} (Debian's " \
               f"{RUNTIME_PACKAGES[runtime]})"
    for name in PYTHON_MODULES.get(runtime, ()):
        if not (DEBIAN_MODULES / name / "__init__.py").exists():
            return f"runtime {runtime} is not installed on this worker: no {DEBIAN_MODULES / name} (Debian's " \
                   f"{RUNTIME_PACKAGES[runtime]})"
    return ""
