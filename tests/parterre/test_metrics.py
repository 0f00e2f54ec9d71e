"""Metrics and structured logs, piece by piece (docs/deploy.md). The scrape of a running
stack during a tournament is in ``tests/e2e/test_up.py``.

* JSON log lines carry match id, attempt and bot id from ``extra=``, from the
  bound context (across asyncio tasks), and from Celery tasks' arguments;
* the worker's task signals time tasks by outcome;
* the ladder counts ratings updated and replay bytes once per recorded result;
* the web middleware labels requests by route template, and serves
  ``/metrics`` on ``PARTERRE_METRICS_PORT``;
* ``--metrics-port`` / ``PARTERRE_METRICS_PORT`` are checked, and Celery's
  multiprocess mode adds up what forked processes record.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from typing import Any

import fixtures.ladder_helpers as h
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from parterre import logging as plog
from parterre import observe


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def json_lines() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger whose records go through a JSON handler into a buffer."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.addFilter(plog.ContextFilter())
    handler.setFormatter(plog.JsonFormatter("test"))
    logger = logging.getLogger("parterre.test.json")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, buf
    logger.removeHandler(handler)


def _lines(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


# -- logs -------------------------------------------------------------------------------------


def test_json_lines_carry_fields_from_extra_and_context(json_lines):
    logger, buf = json_lines
    logger.info("plain")
    logger.info("seat %s timed out", 1, extra={"match_id": 17, "attempt": 2, "bot_id": 3, "seat": 1})
    with plog.log_context(match_id=18, attempt=1):
        logger.warning("from the context")
        logger.info("extra wins", extra={"attempt": 5})
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed", extra={"match_id": 19})
    plain, explicit, bound, override, failed = _lines(buf)
    assert {"ts", "level", "logger", "process", "pid", "msg"} <= set(plain)
    assert plain["process"] == "test" and plain["msg"] == "plain" and "match_id" not in plain
    assert explicit["msg"] == "seat 1 timed out"
    assert (explicit["match_id"], explicit["attempt"], explicit["bot_id"], explicit["seat"]) == (17, 2, 3, 1)
    assert bound["level"] == "warning" and (bound["match_id"], bound["attempt"]) == (18, 1)
    assert (override["match_id"], override["attempt"]) == (18, 5)
    assert failed["match_id"] == 19 and "ValueError: boom" in failed["exc"]
    assert plog.current_context() == {}


async def test_bound_context_follows_asyncio_tasks_and_stays_apart(json_lines):
    logger, buf = json_lines

    async def match(match_id: int) -> None:
        with plog.log_context(match_id=match_id, attempt=1):
            await asyncio.sleep(0.01)
            logger.info("step")

    await asyncio.gather(match(1), match(2), match(3))
    assert sorted(line["match_id"] for line in _lines(buf)) == [1, 2, 3]


def test_adapter_merges_its_fields_the_context_and_the_call(json_lines):
    logger, buf = json_lines
    adapter = plog.ContextAdapter(logger, {"bot_id": 7})
    with plog.log_context(match_id=4):
        adapter.info("hello", extra={"attempt": 2})
    (line,) = _lines(buf)
    assert (line["bot_id"], line["match_id"], line["attempt"]) == (7, 4, 2)


def test_text_format_and_bad_settings():
    buf = io.StringIO()
    handler = plog.configure("referee", fmt="text", stream=buf)
    try:
        logging.getLogger("parterre.test.text").warning("late", extra={"match_id": 3, "bot_id": 9})
    finally:
        logging.getLogger().removeHandler(handler)
    assert "referee WARNING parterre.test.text: late [match_id=3 bot_id=9]" in buf.getvalue()
    with pytest.raises(ValueError, match="PARTERRE_LOG_FORMAT"):
        plog.configure("x", fmt="xml")
    with pytest.raises(ValueError, match="PARTERRE_LOG_LEVEL"):
        plog.configure("x", level="LOUD")


def test_celery_task_context_names_the_match_from_the_task_arguments(json_lines):
    logger, buf = json_lines

    class FakeTask:
        name = "parterre.run_match"

        def run(self, match_id: int) -> str:
            return "finished"

    plog._on_task_prerun(task_id="t-1", task=FakeTask(), args=(42,), kwargs={})
    logger.info("inside the task")
    plog._on_task_postrun(task_id="t-1")
    logger.info("after the task")
    inside, after = _lines(buf)
    assert (inside["match_id"], inside["task"], inside["task_id"]) == (42, "parterre.run_match", "t-1")
    assert "match_id" not in after and "task" not in after


# -- workers ----------------------------------------------------------------------------------


def test_worker_signals_time_tasks_by_outcome():
    from workers import metrics as wm

    class FakeTask:
        name = "parterre.test_task"

    before = _value("parterre_worker_task_seconds_count", task="parterre.test_task", outcome="requeued")
    errors = _value("parterre_worker_task_seconds_count", task="parterre.test_task", outcome="error")
    wm._task_prerun(task_id="a", task=FakeTask())
    assert _value("parterre_worker_tasks_in_progress", task="parterre.test_task") == 1
    wm._task_postrun(task_id="a", retval="requeued", state="SUCCESS")
    wm._task_prerun(task_id="b", task=FakeTask())
    wm._task_postrun(task_id="b", retval=None, state="FAILURE")
    assert _value("parterre_worker_task_seconds_count", task="parterre.test_task", outcome="requeued") == before + 1
    assert _value("parterre_worker_task_seconds_count", task="parterre.test_task", outcome="error") == errors + 1
    assert _value("parterre_worker_tasks_in_progress", task="parterre.test_task") == 0
    assert wm.outcome_of(3, "SUCCESS") == "success" and wm.outcome_of("anything", "SUCCESS") == "success"


# -- ladder -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ladder_pool(pg_admin_url: str) -> Iterator[Any]:
    with h.fixture_games():
        for url in h.module_database(pg_admin_url):
            yield from h.open_pool(url)


def test_recorded_results_count_ratings_and_replay_bytes_once(ladder_pool):
    from ladder.matches import claim_match, record_result
    from ladder.tournaments import plan_match

    a, b = h.make_bots(ladder_pool, 2, prefix="metrics")
    match_id = plan_match(ladder_pool, game_string=f"{h.GAME}(players=2)", bot_ids=[a, b], plan_key="metrics-1")
    before = (_value("parterre_ladder_ratings_updated_total", game=h.GAME),
              _value("parterre_ladder_replay_bytes_count", game=h.GAME),
              _value("parterre_ladder_replay_bytes_sum", game=h.GAME),
              _value("parterre_ladder_results_total", game=h.GAME))
    spec = claim_match(ladder_pool, match_id, "w1")
    result = h.make_result(spec, [1, 2])
    assert record_result(ladder_pool, match_id, spec.attempt, result)
    assert not record_result(ladder_pool, match_id, spec.attempt, result)  # a repeat: nothing counted
    ratings, replays, size, results = (
        _value("parterre_ladder_ratings_updated_total", game=h.GAME),
        _value("parterre_ladder_replay_bytes_count", game=h.GAME),
        _value("parterre_ladder_replay_bytes_sum", game=h.GAME),
        _value("parterre_ladder_results_total", game=h.GAME))
    assert (ratings - before[0], replays - before[1], results - before[3]) == (2, 1, 1)
    with ladder_pool.connection() as conn:
        stored = conn.execute("SELECT length(data) FROM replays WHERE match_id = %s", (match_id,)).fetchone()[0]
    assert size - before[2] == stored


# -- web --------------------------------------------------------------------------------------


def test_web_requests_are_labelled_by_route_template(database_url):
    from ladder import migrate
    from web import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    migrate(database_url)
    series = [("GET", "/api/health", "200"), ("GET", "/api/bots/{bot_id}", "404"),
              ("GET", "/static", "200"), ("GET", "<unmatched>", "404")]
    before = {s: _value("parterre_web_request_seconds_count", method=s[0], route=s[1], status=s[2]) for s in series}
    with TestClient(create_app(database_url)) as client:
        assert client.get("/api/health").status_code == 200
        assert client.get("/api/bots/999999").status_code == 404
        assert client.get("/static/favicon.svg").status_code == 200
        assert client.get("/no/such/page").status_code == 404
    for s in series:
        after = _value("parterre_web_request_seconds_count", method=s[0], route=s[1], status=s[2])
        assert after == before[s] + 1, s
    assert _value("parterre_web_requests_in_progress", method="GET") == 0


def test_web_app_serves_metrics_on_the_configured_port(database_url, monkeypatch):
    from ladder import migrate
    from web import metrics as web_metrics
    from web import start_background

    migrate(database_url)
    monkeypatch.setattr(web_metrics, "_served_port", None)
    monkeypatch.setenv("PARTERRE_METRICS_PORT", "127.0.0.1:0")
    server = start_background(database_url)
    try:
        urllib.request.urlopen(server.url + "/api/health", timeout=10).read()
        port = web_metrics._served_port
        assert port
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        with pytest.raises(urllib.error.HTTPError) as not_public:
            urllib.request.urlopen(server.url + "/metrics", timeout=10)
        assert not_public.value.code == 404  # metrics stay off the public port
    finally:
        server.stop()
    names = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert "parterre_web_request_seconds_count" in names


# -- endpoints and multiprocess mode -----------------------------------------------------------


def test_metrics_port_parsing():
    assert observe.parse_metrics_address("9100") == ("0.0.0.0", 9100)
    assert observe.parse_metrics_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert observe.parse_metrics_address("") is None and observe.parse_metrics_address(None) is None
    for bad in ("abc", "99999", ":9100", "host:"):
        with pytest.raises(observe.MetricsSetupError, match="PARTERRE_METRICS_PORT"):
            observe.parse_metrics_address(bad)
    # too late for multiprocess mode once prometheus_client runs in single-process mode
    with pytest.raises(observe.MetricsSetupError, match="multiprocess"):
        observe.prepare_multiprocess()


def test_bad_metrics_port_is_a_clear_cli_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARTERRE_", "PROMETHEUS_"))}
    env["PARTERRE_HOME"] = str(tmp_path)
    for role in ("referee", "worker"):
        proc = subprocess.run([sys.executable, "-m", "parterre.cli", role, "--metrics-port", "nope"],
                              env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert "parterre: error: PARTERRE_METRICS_PORT='nope'" in proc.stderr


def test_multiprocess_mode_adds_up_forked_processes(tmp_path):
    # What `parterre worker` does: multiprocess mode before prometheus_client is imported, the
    # endpoint in the parent, the counting in forked children (Celery's prefork pool).
    script = textwrap.dedent(
        """
        import os, sys, urllib.request
        from parterre import observe
        observe.prepare_multiprocess(sys.argv[1])
        from workers import metrics
        port = observe.start_metrics_server("127.0.0.1", 0, multiprocess=True)
        pids = []
        for n in range(3):
            pid = os.fork()
            if pid == 0:
                metrics.MATCH_ATTEMPTS.labels("finished").inc(n + 1)
                metrics.TASKS_IN_PROGRESS.labels("t").inc()
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        print(urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode())
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMETHEUS_")}
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "mp")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(proc.stdout) for s in f.samples}
    assert samples[("parterre_worker_match_attempts_total", (("status", "finished"),))] == 6
