"""The hosted runtimes beyond the standard library (docs/hosted.md, "Runtimes"): each plays its validation games.

Bots of the runtimes ``python3.11-numpy``, ``node``, ``static`` and ``java`` are uploaded through the API and
decided by :func:`workers.hosting.validation.process_version` — what ``parterre.hosted_tick`` runs on a worker —
in the real sandbox (bubblewrap, as root with a cgroup). A runtime missing on this machine skips its test on a
developer's machine and fails it in CI (``tests/fixtures/toolchains.py``). The Java bot is compiled here with
``javac`` into a jar; the static one with ``gcc -static``.

Oracles: the Debian packages' own versions (``dpkg-query``) against what the bots report from inside the
sandbox (numpy's ``__version__`` and file, the JVM's ``java.version``); the host's ``dist-packages`` listing
against the sandbox's; the operating system's process limit against the threads a JVM could start; the JVM's
own message when its heap runs out; the database rows a worker may claim.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_hosted
from fixtures.toolchains import missing
from test_hosted import BOTS, manifest, needs_sandbox, no_sandbox_left, owner, targz, upload

from ladder import submissions as sub
from workers.hosting import sandbox
from workers.hosting import validation as hosted
from workers.hosting.sandbox import Limits

pytestmark = needs_sandbox
# test_hosted's database, app and settings fixtures, shared rather than copied
app, cfg, client, pool = test_hosted.app, test_hosted.cfg, test_hosted.client, test_hosted.pool
ROOT = Path(__file__).resolve().parents[2]
NUMPY = Path("/usr/lib/python3/dist-packages/numpy")
REQUEST = b'{"type":"decision_request","match_id":1,"seq":1,"num_actions":3,"game":"floriferous","seat":0}\n'


def debian_version(package: str) -> str:
    """The upstream part of an installed Debian package's version (``1:1.24.2-1+deb12u1`` -> ``1.24.2``)."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout:
        missing(f"Debian's {package} is not installed (.ci/run installs it)")
    found = re.match(r"(?:\d+:)?([0-9.]+)", done.stdout)
    assert found, done.stdout
    return found.group(1)


def require(runtime: str) -> None:
    """Skip (fail in CI) when this machine lacks what ``runtime``'s test needs."""
    needs = {"python3.11-numpy": ["python3.11"], "node": ["node"], "static": ["gcc"], "java": ["java", "javac"]}
    for tool in needs[runtime]:
        if shutil.which(tool) is None:
            missing(f"{tool} is not installed (the {runtime} runtime's test)")
    if runtime == "python3.11-numpy" and not (NUMPY / "__init__.py").exists():
        missing("Debian's python3-numpy is not installed (.ci/run installs it)")


def java_jar(work: Path) -> bytes:
    """``tests/hosted_bots/RandomBot.java`` compiled by ``javac`` (release 17), as an executable jar."""
    classes = work / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "--release", "17", "-d", str(classes), str(BOTS / "RandomBot.java")], check=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nMain-Class: RandomBot\r\n\r\n")
        for cls in sorted(classes.rglob("*.class")):
            jar.write(cls, cls.relative_to(classes).as_posix())
    return buf.getvalue()


def archive(runtime: str, work: Path, *args: str, as_runtime: str | None = None) -> bytes:
    """The test bot of ``runtime`` as an uploaded archive (``as_runtime``: the manifest names that one instead)."""
    games = ["floriferous"]
    named = as_runtime or runtime
    if runtime == "python3.11-numpy":
        return targz({"parterre-bot.toml": manifest(named, ["python3.11", "numpy_bot.py", *args], games),
                      "numpy_bot.py": (BOTS / "numpy_bot.py").read_bytes()})
    if runtime == "node":
        return targz({"parterre-bot.toml": manifest(named, ["node", "random_bot.js", *args], games),
                      "random_bot.js": (BOTS / "random_bot.js").read_bytes()})
    if runtime == "static":
        exe = work / "bot"
        subprocess.run(["gcc", "-static", "-O2", "-o", str(exe), str(BOTS / "random_bot.c")], check=True)
        return targz({"parterre-bot.toml": manifest(named, ["./bot", *args], games),
                      "bot": (exe.read_bytes(), 0o644)})  # the executable bit is set by the platform
    return targz({"parterre-bot.toml": manifest(named, ["java", "-jar", "bot.jar", *args], games),
                  "bot.jar": java_jar(work)})


def decide(pool: Any, cfg: dict[str, Any], client: Any, data: bytes) -> dict[str, Any]:
    headers, bot_id = owner(client)
    r = upload(client, headers, bot_id, data)
    assert r.status_code == 201, r.text
    hosted.process_version(pool, r.json()["id"], cfg)
    assert no_sandbox_left()
    return dict(client.get(f"/api/bots/{bot_id}/versions/{r.json()['number']}", headers=headers).json())


@pytest.mark.parametrize("runtime", ["python3.11-numpy", "node", "static", "java"])
def test_each_runtime_plays_its_validation_games_in_the_sandbox(runtime: str, client: Any, pool: Any,
                                                               cfg: dict[str, Any], tmp_path: Path) -> None:
    require(runtime)
    v = decide(pool, cfg, client, archive(runtime, tmp_path, "7"))
    assert v["status"] == "active", (v["reason"], v["log"][-2000:])
    games = v["validation"]["games"]
    assert len(games) == 2 and all(g["fault"] is None for g in games), games
    if runtime == "python3.11-numpy":  # Debian's numpy, where Debian put it
        assert f"numpy {debian_version('python3-numpy')} {NUMPY}/__init__.py" in v["log"], v["log"][-2000:]
    if runtime == "java":  # Debian's JVM, sized to the sandbox (half of its memory as heap, its one CPU)
        said = re.search(r"java (\S+) max_heap_mb (\d+) processors (\d+) tmpdir (\S+)", v["log"])
        assert said, v["log"][-2000:]
        assert said.group(1) == debian_version("openjdk-17-jre-headless")
        assert int(said.group(2)) <= Limits().memory_mb // 2 and said.group(3) == "1" and said.group(4) == "/scratch"


def test_a_numpy_bot_under_the_plain_python_runtime_cannot_import_numpy(client: Any, pool: Any,
                                                                        cfg: dict[str, Any], tmp_path: Path) -> None:
    """The runtime a manifest names is what the bot gets: ``python3.11`` is the standard library and the SDK,
    even on a worker where Debian's numpy is installed (before, every module of the machine's
    ``dist-packages`` was importable)."""
    require("python3.11-numpy")
    v = decide(pool, cfg, client, archive("python3.11-numpy", tmp_path, as_runtime="python3.11"))
    assert v["status"] == "rejected" and v["reason"].startswith("crash"), v
    assert "ModuleNotFoundError: No module named 'numpy'" in v["log"], v["log"][-2000:]


def test_a_java_bot_that_exhausts_its_heap_is_rejected_at_once_with_the_jvms_reason(
        client: Any, pool: Any, cfg: dict[str, Any], tmp_path: Path) -> None:
    """The heap runs out in a thread the main thread waits for: without ``ExitOnOutOfMemoryError`` the JVM
    would wait for ever (a ``timeout`` at best), and without the sandbox's ``-Xmx`` its default heap (a
    quarter of the host's memory) would meet the memory cgroup as an OOM kill with no word of why."""
    require("java")
    v = decide(pool, cfg, client, archive("java", tmp_path, "7", "heap"))
    assert v["status"] == "rejected" and v["reason"].startswith("crash (exit status 3)"), v
    assert "Terminating due to java.lang.OutOfMemoryError: Java heap space" in v["log"], v["log"][-2000:]


# -- the keeper itself, without the database -----------------------------------------------------------------


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder the sandbox's uid can reach (root-owned 0711 parent, as the workers keep bots)."""
    base = Path(tempfile.gettempdir()) / "parterre-sandbox-tests"
    base.mkdir(mode=0o711, exist_ok=True)
    base.chmod(0o711)
    path = Path(tempfile.mkdtemp(dir=base))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def keep(place: Path, runtime: str, files: dict[str, bytes], command: list[str], *limits: str,
         stdin: bytes = b"") -> tuple[dict[str, Any], bytes, str]:
    """Run ``command`` on ``files`` in a sandbox of ``runtime``; returns (status, stdout, stderr log)."""
    bot = place / "bot"
    bot.mkdir(mode=0o755, exist_ok=True)
    for name, data in files.items():
        (bot / name).write_bytes(data)
        (bot / name).chmod(0o644)
    status, log = place / "status.json", place / "stderr.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workers.hosting.sandbox", "--root", str(bot), "--runtime", runtime,
         "--stderr-file", str(log), "--status-file", str(status), *limits, "--", *command],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PARTERRE_HOSTED_DIR": str(place / "hosted")})
    out, _ = proc.communicate(stdin, timeout=120)
    assert no_sandbox_left(), "a process of the sandbox is left"
    return json.loads(status.read_text()), out, log.read_text(errors="replace") if log.exists() else ""


LIST_MODULES = b"""
import json, os, sys
print(json.dumps({d: sorted(os.listdir(d)) if os.path.isdir(d) else None for d in sys.argv[1:]}))
"""


@pytest.mark.parametrize("runtime", ["python3.11", "python3.11-numpy"])
def test_a_python_runtime_sees_its_own_modules_and_not_the_machines(runtime: str, place: Path) -> None:
    """Oracle: the host's own ``dist-packages`` (more than numpy on any Debian with ``python3-numpy``: at least
    its ``.egg-info``, usually pip, apt's bindings...) against what the bot lists inside."""
    require("python3.11-numpy")
    folders = [d for d in sandbox.DIST_PACKAGES if os.path.isdir(d)]
    host = {d: sorted(os.listdir(d)) for d in folders}
    status, out, log = keep(place, runtime, {"bot.py": LIST_MODULES}, ["python3.11", "bot.py", *folders])
    assert status["verdict"] == "ok", (status, log)
    inside = json.loads(out)
    numpy_entries = sorted(n for n in host[str(NUMPY.parent)] if n == "numpy" or n.startswith("numpy-"))
    assert "numpy" in numpy_entries and len(host[str(NUMPY.parent)]) > len(numpy_entries), host
    for folder in folders:
        expected = numpy_entries if runtime == "python3.11-numpy" and folder == str(NUMPY.parent) else []
        assert inside[folder] == expected, (folder, inside[folder])


@pytest.mark.parametrize("runtime", ["node", "static", "java"])
def test_a_bot_of_another_runtime_cannot_reach_the_machines_python_modules_either(runtime: str, place: Path) -> None:
    """A ``node``, ``static`` or ``java`` bot may start any program of ``/usr``, ``python3.11`` included: it lists
    the ``dist-packages`` folders and has Debian's ``python3.11`` import numpy. It sees what a ``python3.11`` bot
    sees (nothing), not the machine's modules (before: every one of them, numpy, apt's bindings, ``yaml``...).
    Oracle: the host's own listing."""
    require("python3.11-numpy")
    if runtime != "static":
        require(runtime)
    folders = [d for d in sandbox.DIST_PACKAGES if os.path.isdir(d)]
    assert os.listdir(NUMPY.parent), "the host's dist-packages are empty: nothing to hide"
    files = {"bot.py": LIST_MODULES + b"import numpy\n"}
    command = {"node": ["node", "-e", "process.stdout.write(require('child_process').spawnSync('python3.11', "
                                      "process.argv.slice(1), {stdio: ['ignore', 'pipe', 'inherit']}).stdout)",
                        "bot.py", *folders],
               "static": ["/bin/sh", "-c", 'exec python3.11 "$@"', "sh", "bot.py", *folders],
               # the JVM starts the command of -XX:OnError when it dies (here of its heap, made fatal)
               "java": ["java", f"-XX:OnError=python3.11 bot.py {' '.join(folders)}", "-XX:+CrashOnOutOfMemoryError",
                        "-Xmx16m", "-XX:-ExitOnOutOfMemoryError", "Fill.java"]}[runtime]
    if runtime == "java":
        files["Fill.java"] = (b"public class Fill { public static void main(String[] a) { java.util.List<long[]> l = "
                              b"new java.util.ArrayList<>(); while (true) l.add(new long[1 << 16]); } }")
    status, out, log = keep(place, runtime, files, command)
    listed = next((json.loads(line) for line in out.splitlines() if line.startswith(b"{")), {})  # the JVM's report
    assert listed == {d: [] for d in folders}, (status, out[:300], log[-2000:])
    assert "ModuleNotFoundError: No module named 'numpy'" in log, log[-2000:]


def test_the_jvm_keeps_within_the_process_limit_and_writes_nothing_of_its_own_to_stdout(place: Path,
                                                                                        tmp_path: Path) -> None:
    """A Java bot starts threads until it cannot: it gets fewer than the sandbox's process limit (64), the
    JVM's warning about the failed thread goes to the log, and the bot still answers — stdout holds its
    answer only (the JVM's own messages go to stdout by default, where the adapter would read them as
    answers)."""
    require("java")
    status, out, log = keep(place, "java", {"bot.jar": java_jar(tmp_path)},
                            ["java", "-jar", "bot.jar", "7", "threads"], stdin=REQUEST)
    assert status["verdict"] == "ok", (status, log)
    started = re.search(r"threads started (\d+)", log)
    assert started and 0 < int(started.group(1)) < Limits().pids, log
    assert "pthread_create failed (EAGAIN)" in log, log
    assert re.fullmatch(rb"[0-2]\n", out), out


def test_a_java_bot_overriding_the_heap_still_meets_the_sandboxs_memory_limit(place: Path, tmp_path: Path) -> None:
    """The bot's own ``-Xmx2g`` comes after the runtime's options and wins; the memory cgroup still holds: the
    tree is killed at 256 MiB, verdict ``memory``."""
    require("java")
    status, _, log = keep(place, "java", {"bot.jar": java_jar(tmp_path)},
                          ["java", "-Xmx2g", "-jar", "bot.jar", "7", "heap"], "--memory-mb", "256", stdin=REQUEST)
    assert status["verdict"] == "memory", (status, log)
    assert "max_heap_mb 1" in log, log  # its own 2 GiB heap (1979 MiB usable), not the runtime's 128 MiB
    assert status["peak_memory_mb"] is None or status["peak_memory_mb"] <= 256.5, status


def test_a_runtime_missing_on_the_worker_is_refused_not_blamed_on_the_bot(
        place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keeper refuses (``start_failed``, "refused: ...") a runtime this machine lacks, where a missing
    program would have looked like the bot's crash, and leaves no cgroup behind."""
    monkeypatch.setitem(sandbox.RUNTIME_PROGRAMS, "java", str(place / "no-such-java"))
    groups = Path("/sys/fs/cgroup/memory/parterre-sandbox")
    before = set(os.listdir(groups)) if groups.is_dir() else set()
    keeper = sandbox.Keeper(str(place), "java", ["java", "-jar", "bot.jar"], Limits())
    status = keeper.run()
    assert status.verdict == "start_failed", status
    assert status.detail == (f"refused: runtime java is not installed on this worker: no {place}/no-such-java "
                             f"(Debian's openjdk-17-jre-headless)"), status
    after = set(os.listdir(groups)) if groups.is_dir() else set()
    assert after <= before, after - before
    assert "java" not in hosted.offered_runtimes()


def test_a_worker_claims_only_versions_of_the_runtimes_it_has(client: Any, pool: Any, tmp_path: Path) -> None:
    """Oracle: the rows. A worker without Java leaves a Java version waiting (for a worker with it) and takes
    the next one it can run; a worker with every runtime takes the oldest."""
    ids = {}
    for runtime in ("java", "node"):
        headers, bot_id = owner(client)
        data = targz({"parterre-bot.toml": manifest(runtime, [runtime, "b"], ["floriferous"]), "b": b"x"})
        r = upload(client, headers, bot_id, data)
        assert r.status_code == 201, r.text
        ids[runtime] = r.json()["id"]
    assert sub.claim_next(pool, "no-java", runtimes=["python3.11", "node", "static"]) == ids["node"]
    assert sub.claim_next(pool, "no-java", runtimes=["python3.11", "node", "static"]) is None
    assert sub.claim_next(pool, "every-runtime", runtimes=sandbox.RUNTIMES) == ids["java"]
    for vid in ids.values():  # leave nothing waiting for the module's other tests
        sub.set_verdict(pool, vid, "rejected", reason="test")


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to drop to another uid")
def test_the_jvm_runs_in_an_unprivileged_workers_sandbox_with_per_process_limits(place: Path, tmp_path: Path) -> None:
    """The image's worker (uid 10001, no cgroup, ``--per-process-limits``): memory is ``RLIMIT_DATA`` per process,
    which counts what the JVM commits, not the address space it reserves. The JVM starts, answers, and its heap
    running out still ends it with the JVM's own reason (exit status 3), not a hang."""
    require("java")
    uid = 61000 + os.getpid() % 4000
    bot, hosted_dir = place / "bot", place / "hosted"
    bot.mkdir(mode=0o755)
    hosted_dir.mkdir()
    os.chown(hosted_dir, uid, uid)
    (bot / "bot.jar").write_bytes(java_jar(tmp_path))
    (bot / "bot.jar").chmod(0o644)
    for mode, verdict, code in (("", "ok", 0), ("heap", "exit", 3)):
        status = hosted_dir / "status.json"
        log = hosted_dir / "stderr.log"
        done = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-m",
             "workers.hosting.sandbox", "--root", str(bot), "--runtime", "java", "--per-process-limits",
             "--stderr-file", str(log), "--status-file", str(status), "--", "java", "-jar", "bot.jar", "7", mode],
            input=REQUEST, capture_output=True, cwd=ROOT, timeout=120,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PARTERRE_HOSTED_DIR": str(hosted_dir)})
        got = json.loads(status.read_text())
        said = log.read_text(errors="replace")
        assert (got["verdict"], got["exit_code"]) == (verdict, code), (got, said, done.stderr[-2000:])
        if mode == "heap":
            assert "Terminating due to java.lang.OutOfMemoryError: Java heap space" in said, said
            assert done.stdout == b""
        else:
            assert re.fullmatch(rb"[0-2]\n", done.stdout), done.stdout
        log.unlink()
