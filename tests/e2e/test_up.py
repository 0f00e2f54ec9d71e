"""``parterre up`` end to end: the stack as child processes, a tournament through it,
``/metrics`` of the referee, the worker and the web site scraped before and after, JSON logs
that name the match, and a clean Ctrl-C: every process it started is gone.

Uses the test PostgreSQL and Redis (conftest: the machine's when they answer, embedded
otherwise), a fresh database and a Celery queue of its own. Bots are registered with
``parterre bot register`` and run with ``parterre bot run``; the tournament is made with
``parterre tournament create`` / ``run --wait``, all as separate processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.up_stack import running_up, up_env
from prometheus_client.parser import text_string_to_metric_families

from ladder.bots import HOUSE_PREFIX

psutil = pytest.importorskip("psutil")

pytestmark = pytest.mark.e2e



def _cli(args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "parterre.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``/metrics`` as {(sample name, sorted labels): value}."""
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """Sum of the samples named ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, lbl), v in samples.items() if n == name and want <= set(lbl))


@pytest.fixture
def stack_env(database_url: str, redis_base_url: str, tmp_path: Path) -> dict[str, str]:
    return up_env(database_url, redis_base_url, tmp_path / "home", "parterre-up-test")


@pytest.fixture
def up(stack_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any], Path]]:
    """``parterre up`` running, with its state file (addresses, pids) once it is ready."""
    out = tmp_path / "up.out"
    with running_up(stack_env, out) as (proc, state):
        yield proc, state, out


def _register(name: str, env: dict[str, str]) -> str:
    proc = _cli(["bot", "register", name], env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1].rsplit(" ", 1)[-1]


def test_up_runs_a_tournament_serves_metrics_and_stops_cleanly(up, stack_env, tmp_path):
    proc, state, out = up
    metrics = state["metrics"]
    assert {"referee", "worker-1", "web"} <= set(metrics), state  # and "beat" when `parterre beat` exists
    assert state["referee"] == stack_env["PARTERRE_REFEREE_ADDRESS"]
    descendants = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    assert set(state["pids"].values()) <= descendants
    assert "house" in state["pids"]  # the house bots' process

    before = {role: scrape(url) for role, url in metrics.items()}
    bots: list[subprocess.Popen[bytes]] = []
    try:
        for name, kind in (("up-greedy", "greedy"), ("up-random", "random")):
            token = _register(name, stack_env)
            bots.append(subprocess.Popen(
                [sys.executable, "-m", "parterre.cli", "bot", "run", kind, "--token", token, "--name", name],
                env=stack_env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{name}.log", "wb"),  # noqa: SIM115  (the child owns it)
            ))
        created = _cli(["tournament", "create", "--game", "floriferous", "--bots", "up-greedy,up-random",
                        "--players", "2", "--rounds", "1", "--time-control", "2000+250"], stack_env)
        assert created.returncode == 0, created.stderr
        tid = created.stdout.strip().splitlines()[-1]
        ran = _cli(["tournament", "run", tid, "--wait", "--timeout", "150"], stack_env, timeout=200)
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        board = _cli(["leaderboard", "floriferous", "--json"], stack_env)
        rows = {r["name"]: r for r in json.loads(board.stdout)}
        # the tournament's two bots, each rated for its matches; the house bots that `up` starts may have met
        # up-random on the continuous ladder meanwhile (a slow machine leaves time for a ladder round)
        assert {"up-greedy", "up-random"} <= set(rows)
        assert all(name in ("up-greedy", "up-random") or name.startswith(HOUSE_PREFIX) for name in rows)
        matches = min(rows[name]["games"] for name in ("up-greedy", "up-random"))  # a lower bound of the matches
        assert matches >= 2

        web = state["web"]
        for path in ("/", "/leaderboard/floriferous", "/api/leaderboard/floriferous"):
            assert urllib.request.urlopen(web + path, timeout=30).status == 200
        after = {role: scrape(url) for role, url in metrics.items()}
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            try:
                bot.wait(15)
            except subprocess.TimeoutExpired:
                bot.kill()

    def moved(role: str, name: str, at_least: float, **labels: str) -> None:
        delta = total(after[role], name, **labels) - total(before[role], name, **labels)
        assert delta >= at_least, (f"{role}: {name}{labels} moved by {delta}, expected >= {at_least}; "
                                   f"{role} has {sorted({n for n, _ in after[role] if n.startswith('parterre_')})}")

    # referee: decisions timed per game, verdicts by kind, matches ended, bot streams open
    moved("referee", "parterre_referee_decision_seconds_count", 10, game="floriferous")
    moved("referee", "parterre_referee_verdicts_total", 2 * matches, game="floriferous")  # any kind: a loaded
    moved("referee", "parterre_referee_verdicts_total", 1, game="floriferous", verdict="normal")  # machine may time out
    moved("referee", "parterre_referee_matches_finished_total", matches, game="floriferous", status="finished")
    assert total(after["referee"], "parterre_referee_sessions") == 2 + 3  # and house-random, house-greedy, house-search
    # worker (prefork pool, multiprocess mode): task durations and outcomes, attempts; the ladder's writes
    moved("worker-1", "parterre_worker_task_seconds_count", matches, task="parterre.run_match", outcome="finished")
    moved("worker-1", "parterre_worker_task_seconds_count", 1, task="parterre.plan_tournament")
    moved("worker-1", "parterre_worker_match_attempts_total", matches, status="finished")
    moved("worker-1", "parterre_ladder_ratings_updated_total", 2 * matches, game="floriferous")
    moved("worker-1", "parterre_ladder_replay_bytes_count", matches, game="floriferous")
    moved("worker-1", "parterre_ladder_replay_bytes_sum", 100 * matches, game="floriferous")
    # web: request latency by route template
    moved("web", "parterre_web_request_seconds_count", 1, route="/api/leaderboard/{game}", status="200")
    moved("web", "parterre_web_request_seconds_count", 1, route="/leaderboard/{game}", status="200")

    # JSON logs: every line of the match task names its match and attempt
    logs = Path(state["logs"])
    lines = [json.loads(ln) for ln in (logs / "worker-1.log").read_text().splitlines() if ln.startswith("{")]
    running = [ln for ln in lines if ln.get("logger") == "workers.tasks"]
    assert len(running) >= matches
    assert all({"match_id", "attempt", "task_id"} <= set(ln) and ln["process"] == "worker" for ln in running)
    referee_lines = [json.loads(ln) for ln in (logs / "referee.log").read_text().splitlines() if ln.startswith("{")]
    assert referee_lines and all(ln["process"] == "referee" for ln in referee_lines)

    # Ctrl-C: everything stops, nothing is left behind
    descendants |= {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(90) == 0, out.read_text()[-3000:]
    text = out.read_text()
    assert "stopping" in text and text.rstrip().endswith("stopped")
    deadline = time.monotonic() + 10
    left = descendants
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE}
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"
    assert not (Path(stack_env["PARTERRE_HOME"]) / "run" / "up.json").exists()


def test_up_reports_a_child_that_cannot_start(stack_env, tmp_path):
    # The referee's port is taken: `up` says which child failed, stops the others, exits 1.
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        # The referee tries a busy port again for PARTERRE_BIND_RETRY_S (90 s by default; docs/deploy.md
        # "Ports"): one second here, then it exits and `up` must say so.
        env = {**stack_env, "PARTERRE_REFEREE_ADDRESS": f"127.0.0.1:{taken.getsockname()[1]}",
               "PARTERRE_BIND_RETRY_S": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "parterre.cli", "up", "--no-web", "--metrics-port", "0", "--grace", "5"],
            env=env, capture_output=True, text=True, timeout=150,
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "referee exited" in proc.stderr and "referee.log" in proc.stderr
    assert proc.stdout.rstrip().endswith("stopped")
