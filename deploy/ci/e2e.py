"""The compose stack end to end, in containers (run by deploy/ci/compose-e2e.sh; docs/deploy.md).

Standard library only: everything it does to the stack goes through ``docker compose`` and the
``parterre`` command inside the containers, and everything it reads comes from ``psql`` in the
postgres container or the HTTP APIs of the web site and Prometheus.

1. checks deploy/prometheus/prometheus.yml with promtool; builds the Parterre image
   (``docker compose build migrate``) and brings the stack up (``up -d --no-build``), timing both;
2. checks every service is healthy and the image runs as the unprivileged user (``id``);
3. registers two bots, runs them in containers beside the two sample bots, and plays a
   round-robin in each game to completion; reads the leaderboards from the web container's API;
4. checks Prometheus has every target up and the referee's decision-latency histogram has samples;
4b. hosted bots (deploy/ci/e2e_hosted.py): a Python stdio bot uploaded through the web API is
   validated in a worker container's sandbox, becomes active and plays a rated ladder match;
5. plays a 384-match tournament and, while it runs, kill -9s a worker container and a referee
   container (the kernel kills the container's whole process tree; Docker's restart policy
   brings it back); then checks every match finished exactly once, nothing was double-counted,
   no bot was charged, and the ratings equal ``parterre ratings rebuild``'s;
6. prints the report; saves the containers' logs; takes the stack down.

Exit 0 when every check passed, 1 with the failing check's message otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FILES = ["-f", "docker-compose.yml", "-f", "deploy/ci/docker-compose.ci.yml"]
PORTS = {"postgres": 25432, "redis": 26379, "referee": 25051, "referee-2": 25052, "referee metrics": 25101,
         "referee-2 metrics": 25102, "worker metrics": 25111, "worker-2 metrics": 25112, "beat metrics": 25121,
         "web": 25080, "web metrics": 25131, "prometheus": 25090, "house probe": 25141}
"""The CI ports on 127.0.0.1 (deploy/ci/docker-compose.ci.yml, deploy/ci/prometheus.ci.yml)."""
WEB = "http://127.0.0.1:25080"
PROM = "http://127.0.0.1:25090"
GAMES = ("floriferous", "lafleur", "flowar")
LONG_RUNNING = ("postgres", "redis", "referee", "referee-2", "worker", "worker-2", "beat", "web", "prometheus",
                "bot-greedy", "bot-random", "house")
DONE = ("finished", "failed", "aborted_no_show")
FAULT_GAME = "flowar"
FAULT_ROUNDS = 16  # 384 matches: a referee kill that ends no attempt (its rooms moved on) is tried again,
# up to 8 times, and each kill waits up to 15 s for the attempt it ends; 120 matches (about 40 s)
# once ended before the retries were done
FAULT_MATCHES = FAULT_ROUNDS * (4 * 3 // 2 * 2 + 4 * 3)
"""Matches of the fault tournament: rounds x (6 pairs x 2 seatings + 4 triples x 3 seatings)."""
"""The game of the kill phase: its matches have the most decisions (~4x Floriferous's), so a kill
lands in running matches."""


class Failure(Exception):
    """A check failed; the message says which and why."""


def log(msg: str) -> None:
    print(f"e2e: {msg}", flush=True)


class Stack:
    """``docker compose -p PROJECT -f docker-compose.yml -f deploy/ci/docker-compose.ci.yml``."""

    def __init__(self, project: str, logs: Path) -> None:
        self.project, self.logs = project, logs

    def compose(self, *args: str, check: bool = True, timeout: float = 600, capture: bool = True) -> str:
        argv = ["docker", "compose", "--ansi", "never", "-p", self.project, *FILES, *args]
        proc = subprocess.run(argv, cwd=ROOT, capture_output=capture, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise Failure(f"`{' '.join(argv[2:])}` exited {proc.returncode}:\n{(proc.stdout or '')[-3000:]}"
                          f"{(proc.stderr or '')[-3000:]}")
        return proc.stdout or ""

    def exec(self, service: str, *args: str, timeout: float = 600) -> str:
        return self.compose("exec", "-T", service, *args, timeout=timeout)

    def parterre(self, *args: str, timeout: float = 600) -> str:
        """``parterre ARGS`` in a one-off container of the image (service ``cli``)."""
        return self.compose("run", "--rm", "--no-deps", "-T", "cli", *args, timeout=timeout)

    def sql(self, query: str) -> list[list[str]]:
        out = self.exec("postgres", "psql", "-U", "parterre", "-d", "parterre", "-At", "-F", "\t",
                        "-v", "ON_ERROR_STOP=1", "-c", query, timeout=60)
        return [line.split("\t") for line in out.splitlines() if line]

    def container(self, service: str) -> str:
        ids = self.compose("ps", "-q", "--all", service).split()
        if len(ids) != 1:
            raise Failure(f"service {service}: expected one container, found {ids}")
        return ids[0]

    def states(self) -> dict[str, dict[str, Any]]:
        """Service -> ``State`` of its container, for every container of the project."""
        # While `up` creates containers one may vanish between `ps` and `inspect`: that poll is empty.
        ids = self.compose("ps", "-q", "--all", check=False).split()
        if not ids:
            return {}
        out = subprocess.run(["docker", "inspect", *ids], capture_output=True, text=True).stdout
        try:
            found = json.loads(out or "[]")
        except ValueError:
            return {}
        return {c["Config"]["Labels"]["com.docker.compose.service"]: c["State"] for c in found}

    def inspect(self, service: str) -> dict[str, Any]:
        out = subprocess.run(["docker", "inspect", self.container(service)], capture_output=True, text=True,
                             check=True).stdout
        data: dict[str, Any] = json.loads(out)[0]
        return data


def _ts(value: str) -> float:
    """Docker's RFC 3339 timestamps (nanoseconds, 'Z') as epoch seconds."""
    value = re.sub(r"(\.\d{6})\d*", r"\1", value.replace("Z", "+00:00"))
    return datetime.fromisoformat(value).timestamp()


def http_json(url: str, timeout: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # our own loopback services
        return json.loads(resp.read())


def wait_until(what: str, predicate: Any, timeout_s: float, every_s: float = 2.0) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(every_s)
    raise Failure(f"timed out after {timeout_s:.0f} s waiting for {what}")


def check_ports_free() -> None:
    busy = []
    for name, port in PORTS.items():
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                busy.append(f"{name} ({port})")
    if busy:
        raise Failure(f"ports the CI stack needs are taken on 127.0.0.1: {', '.join(busy)}")


# -- bring-up -------------------------------------------------------------------------------


def bring_up(stack: Stack, report: dict[str, Any]) -> None:
    tag = os.environ["PARTERRE_CI_IMAGE_TAG"]
    cfg = ROOT / "deploy" / "prometheus" / "prometheus.yml"
    proc = subprocess.run(["docker", "run", "--rm", "--network", "none", "--entrypoint", "promtool", "-v",
                           f"{cfg}:/p.yml:ro", f"parterre-ci/prometheus:{tag}", "check", "config", "/p.yml"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise Failure(f"promtool rejects deploy/prometheus/prometheus.yml:\n{proc.stdout}{proc.stderr}")
    log("promtool: deploy/prometheus/prometheus.yml is valid")
    t0 = time.monotonic()
    build_log = stack.logs / "build.log"
    with build_log.open("w") as fh:
        argv = ["docker", "compose", "-p", stack.project, *FILES, "--progress=plain", "build", "migrate"]
        built = subprocess.run(argv, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, timeout=1800)
    out = build_log.read_text(errors="replace")
    if built.returncode != 0:
        raise Failure(f"`docker compose build migrate` exited {built.returncode} (log {build_log}):\n{out[-4000:]}")
    report["build_s"] = time.monotonic() - t0
    cached = len(re.findall(r"CACHED", out))
    report["build_cached_steps"] = cached
    size = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", "parterre:ci"], capture_output=True,
                          text=True, check=True).stdout.strip()
    report["image_mb"] = int(size) / 1e6
    log(f"image parterre:ci built in {report['build_s']:.0f} s ({cached} steps cached), {report['image_mb']:.0f} MB")
    print("e2e: Grafana is not started in CI: Debian does not package it and no image registry is reachable "
          "(profile 'grafana' in deploy/ci/docker-compose.ci.yml); its dashboard is checked by "
          "tests/repository/test_deploy.py", flush=True)
    t0 = time.monotonic()
    # `up -d` returns once the services others wait on are healthy; meanwhile, and until every
    # service is, note when each one is first seen healthy (Docker keeps only 5 health results).
    up_log = stack.logs / "up.log"
    with up_log.open("w") as fh:
        up = subprocess.Popen(["docker", "compose", "--ansi", "never", "-p", stack.project, *FILES, "up", "-d",
                               "--no-build"], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    first_healthy: dict[str, float] = {}
    deadline = time.monotonic() + 600
    while True:
        if up.poll() is not None and "up_s" not in report:
            report["up_s"] = time.monotonic() - t0
            if up.returncode != 0:
                said = up_log.read_text(errors="replace")
                health = {s: (st["Status"], st.get("Health", {}).get("Status")) for s, st in stack.states().items()}
                raise Failure(f"`docker compose up -d` exited {up.returncode}:\n{said[-3000:]}\n"
                              f"containers (status, health): {health}")
        states = stack.states()
        for service, st in states.items():
            if service not in first_healthy and st.get("Health", {}).get("Status") == "healthy":
                first_healthy[service] = time.time() - _ts(st["StartedAt"])
        if "up_s" in report:
            bad = {s: st["Status"] for s, st in states.items() if s in LONG_RUNNING and st["Status"] != "running"}
            if bad:
                raise Failure(f"containers not running after `up`: {bad}")
            if set(LONG_RUNNING) <= set(first_healthy):
                break
        if time.monotonic() > deadline:
            raise Failure(f"not every service healthy after 600 s: healthy {sorted(first_healthy)}")
        time.sleep(0.5)
    report["healthy_s"] = time.monotonic() - t0
    migrate = stack.inspect("migrate")["State"]
    if migrate["Status"] != "exited" or migrate["ExitCode"] != 0:
        raise Failure(f"migrate: {migrate['Status']} exit {migrate['ExitCode']}")
    startup = {"migrate": (_ts(migrate["FinishedAt"]) - _ts(migrate["StartedAt"]), "ran to exit 0")}
    for service in LONG_RUNNING:
        startup[service] = (first_healthy[service], "to healthy (checks every 5-30 s)")
    report["startup"] = startup
    log(f"stack up in {report['up_s']:.0f} s, every service healthy after {report['healthy_s']:.0f} s")


def check_unprivileged(stack: Stack, report: dict[str, Any]) -> None:
    ident = stack.exec("web", "id").strip()
    user = stack.inspect("web")["Config"]["User"]
    if not ident.startswith("uid=10001(parterre) gid=10001(parterre)") or user != "10001:10001":
        raise Failure(f"the web container runs as {ident!r} (image user {user!r}), not the unprivileged parterre")
    status = stack.exec("web", "cat", "/proc/1/status")
    caps = dict(re.findall(r"^(Cap(?:Eff|Prm)):\s*([0-9a-f]+)$", status, re.M))
    if len(caps) != 2 or any(int(v, 16) for v in caps.values()):
        raise Failure(f"the web container's process holds capabilities: {caps}")
    probe = subprocess.run(["docker", "exec", stack.container("web"), "touch", "/opt/parterre/x"],
                           capture_output=True, text=True)
    if probe.returncode == 0:
        raise Failure("the root file system of the web container is writable")
    report["id"] = ident
    log(f"id in the web container: {ident}; no capabilities; read-only root file system")


# -- play -----------------------------------------------------------------------------------


def register_and_run_bots(stack: Stack) -> list[str]:
    names = []
    for i, (kind, ref) in enumerate((("random", 25051), ("greedy", 25052)), start=1):
        name = f"e2e-{kind}"
        out = stack.parterre("bot", "register", name)
        match = re.search(r"token \(shown once, keep it secret\): (\S+)", out)
        if not match:
            raise Failure(f"`parterre bot register {name}` printed no token:\n{out}")
        stack.compose("run", "-d", "--no-deps", "--name", f"{stack.project}-bot-{i}", "cli", "bot", "run", kind,
                      f"--token={match.group(1)}", "--address", f"127.0.0.1:{ref}", "--name", name)
        names.append(name)
    names += ["sample-greedy", "sample-random"]

    def all_online() -> bool:
        rows = stack.sql("SELECT name FROM bots")
        return {r[0] for r in rows} >= set(names)

    wait_until("the four bots registered", all_online, 120)
    time.sleep(3)  # their streams open (the referees publish presence every second or so)
    log(f"bots {', '.join(names)} registered and connected (two on each referee)")
    return names


def create_tournament(stack: Stack, game: str, bots: list[str], players: str, rounds: int) -> int:
    out = stack.exec("web", "parterre", "tournament", "create", "--game", game, "--bots", ",".join(bots),
                     "--players", players, "--rounds", str(rounds), "--name", f"ci {game}")
    return int(out.strip().splitlines()[-1])


def tournament_status(stack: Stack, tid: int) -> dict[str, int]:
    return {s: int(n) for s, n in stack.sql(f"SELECT status, count(*) FROM matches WHERE tournament_id = {tid} "
                                            "GROUP BY status")}


def play_each_game(stack: Stack, bots: list[str], report: dict[str, Any]) -> None:
    t0 = time.monotonic()
    tids = {game: create_tournament(stack, game, bots, "2", 1) for game in GAMES}
    for tid in tids.values():
        stack.exec("web", "parterre", "tournament", "run", str(tid))

    def done() -> bool:
        for tid in tids.values():
            st = tournament_status(stack, tid)
            if not st or any(k not in DONE for k in st):
                return False
        return True

    wait_until("a round-robin in each game", done, 900, every_s=3)
    for game, tid in tids.items():
        st = tournament_status(stack, tid)
        if set(st) != {"finished"} or st["finished"] != 12:
            raise Failure(f"{game} tournament {tid}: {st} (expected 12 finished)")
        page = http_json(f"{WEB}/api/leaderboard/{game}")
        rows = page.get("rows") or page.get("items") or page.get("leaderboard") or []
        got = {r["name"] for r in rows}
        if not set(bots) <= got:
            raise Failure(f"leaderboard of {game} from the web container lacks bots: {sorted(set(bots) - got)}")
        log(f"{game}: tournament {tid}, 12 matches finished; web leaderboard: "
            + ", ".join(f"{r['name']} {r['elo']:.0f}" for r in rows))
    report["games_s"] = time.monotonic() - t0


def check_prometheus(stack: Stack) -> None:
    def targets_up() -> list[dict[str, Any]] | None:
        active = http_json(f"{PROM}/api/v1/targets")["data"]["activeTargets"]
        return active if len(active) == 7 and all(t["health"] == "up" for t in active) else None

    try:
        active = wait_until("every Prometheus target up", targets_up, 60, every_s=3)
    except Failure:
        active = http_json(f"{PROM}/api/v1/targets")["data"]["activeTargets"]
        raise Failure("Prometheus targets: " + "; ".join(f"{t['labels']['job']} {t['scrapeUrl']} {t['health']} "
                                                          f"{t.get('lastError', '')}" for t in active)) from None
    q = urllib.parse.quote("sum by (game) (parterre_referee_decision_seconds_count)")
    series = http_json(f"{PROM}/api/v1/query?query={q}")["data"]["result"]
    counts = {s["metric"].get("game", "?"): float(s["value"][1]) for s in series}
    if not counts or not all(counts.get(g, 0) > 0 for g in GAMES):
        raise Failure(f"parterre_referee_decision_seconds has no samples for every game: {counts}")
    log(f"Prometheus: {len(active)} targets up ({', '.join(sorted({t['labels']['job'] for t in active}))}); "
        f"decision-latency samples by game: {counts}")


def hosted(stack: Stack, report: dict[str, Any]) -> None:
    """The hosted-bot phase (deploy/ci/e2e_hosted.py, beside this file)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import e2e_hosted

    try:
        e2e_hosted.hosted_phase(WEB, stack.sql, log, report)
    except e2e_hosted.HostedFailure as exc:
        raise Failure(str(exc)) from None


# -- faults ---------------------------------------------------------------------------------


def kill9(stack: Stack, service: str, busy: Any = None) -> dict[str, Any] | None:
    """SIGKILL the container's init process from the host: the kernel kills its whole PID namespace.

    With ``busy``, the kill lands within a poll of ``busy()`` being true, checked again after the
    container's pid is read (``docker inspect`` takes a few hundred ms, longer than the tail of a
    match); None when it stayed false for 5 s (nothing killed)."""
    before = stack.inspect(service)
    pid = before["State"]["Pid"]
    if busy is not None:
        end = time.monotonic() + 5
        while not busy():
            if time.monotonic() > end:
                return None
            time.sleep(0.02)
    os.kill(pid, 9)

    def restarted() -> bool:
        st = stack.inspect(service)
        return bool(st["RestartCount"] > before["RestartCount"] and st["State"]["Status"] == "running")

    wait_until(f"Docker to restart {service}", restarted, 60, every_s=0.5)
    after = stack.inspect(service)
    return {"service": service, "pid": pid, "restarts": after["RestartCount"]}


def referee_playing(metrics_url: str) -> float:
    """Rooms in play on one referee (``parterre_referee_matches_playing``: bots seated, match started),
    from its /metrics (0 when it does not answer)."""
    try:
        with urllib.request.urlopen(metrics_url, timeout=3) as resp:  # our own loopback services
            text = resp.read().decode()
    except OSError:
        return 0.0
    playing = re.findall(r"^parterre_referee_matches_playing(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M)
    return sum(float(v) for v in playing)


def fault_tournament(stack: Stack, bots: list[str], report: dict[str, Any]) -> int:
    """A :data:`FAULT_MATCHES`-match tournament of :data:`FAULT_GAME`; kill -9 worker-1 while it runs
    matches, then referee-1 while it plays some."""
    t0 = time.monotonic()
    tid = create_tournament(stack, FAULT_GAME, bots, "2,3", FAULT_ROUNDS)
    stack.exec("web", "parterre", "tournament", "run", str(tid))
    total = FAULT_MATCHES

    def worker_busy() -> bool:
        return bool(stack.sql("SELECT 1 FROM match_attempts WHERE status = 'running' AND worker LIKE 'worker-1@ci#%'"))

    def referee_busy() -> bool:
        # A room still seating its bots moves to referee-2 without an attempt when referee-1 dies
        # (docs/faults.md F-08 (b)), and a bot referee-1 only lends to referee-2 comes back within the
        # reconnection grace: the kill waits until referee-1 has a room in play.
        return referee_playing("http://127.0.0.1:25101/metrics") >= 1

    def hit(pattern: str) -> int:
        return int(stack.sql(f"SELECT count(*) FROM match_attempts WHERE error LIKE '{pattern}'")[0][0])

    # (matches done first, service, busy now?, error pattern of the attempts a kill ends). A match
    # lasts about a second, so a match seen in play may end before the kill lands: a kill that
    # ended no attempt is tried again (at most 8 kills of each).
    faults = [(3, "worker", worker_busy, "%worker-1@ci#%"), (10, "referee", referee_busy, "%referee%")]
    kills = {"worker": 0, "referee": 0}
    timeline = []
    deadline = time.monotonic() + 900
    while True:
        st = tournament_status(stack, tid)
        done = sum(st.get(s, 0) for s in DONE)
        if faults and done >= faults[0][0] and done < total - 4 and faults[0][2]():
            _, service, busy, pattern = fault = faults.pop(0)
            before = hit(pattern)
            info = kill9(stack, service, busy)
            if info is None:  # what it was to hit ended before the kill: try again
                faults.insert(0, fault)
                continue
            kills[service] += 1
            # the worker that lost its call ends the attempt (at once: the kernel closes the killed
            # process's sockets on the host network)
            settle = time.monotonic() + 15
            while hit(pattern) == before and time.monotonic() < settle:
                time.sleep(0.5)
            ended = hit(pattern) - before
            timeline.append(f"{time.monotonic() - t0:.0f} s, {done} done, {st.get('running', 0)} running: "
                            f"kill -9 {service} (pid {info['pid']}), restarted by Docker; {ended} attempts ended")
            log(timeline[-1])
            if ended == 0 and kills[service] < 8:
                faults.insert(0, fault)
        if sum(st.values()) == total and done == total:
            break
        if time.monotonic() > deadline:
            raise Failure(f"fault tournament {tid} not done after 900 s: {st}; {timeline}")
        time.sleep(0.5)
    if faults:
        raise Failure(f"the tournament ended before every kill was done: {timeline}")
    report["faults"] = timeline
    report["fault_s"] = time.monotonic() - t0
    log(f"fault tournament {tid}: {total} matches done in {report['fault_s']:.0f} s")
    return tid


def check_exactly_once(stack: Stack, tid: int, games: list[str]) -> None:
    stack.compose("stop", "beat")  # no new ladder matches; then wait for the running ones
    wait_until("no match planned or running", lambda: not stack.sql(
        "SELECT 1 FROM matches WHERE status IN ('planned', 'running') LIMIT 1"), 300, every_s=2)
    sql = stack.sql
    st = dict(sql(f"SELECT status, count(*) FROM matches WHERE tournament_id = {tid} GROUP BY status"))
    if st != {"finished": str(FAULT_MATCHES)}:
        raise Failure(f"fault tournament: {st}, expected {FAULT_MATCHES} finished")
    bad = sql("SELECT match_id, count(*) FILTER (WHERE status = 'finished'), count(*) FILTER (WHERE status = "
              "'running') FROM match_attempts GROUP BY match_id HAVING count(*) FILTER (WHERE status = 'finished') "
              "<> 1 OR count(*) FILTER (WHERE status = 'running') > 0")
    finished_matches = [r[0] for r in sql("SELECT id FROM matches WHERE status = 'finished'")]
    no_attempt = sql("SELECT m.id FROM matches m WHERE m.status = 'finished' AND NOT EXISTS (SELECT 1 FROM "
                     "match_attempts a WHERE a.match_id = m.id AND a.status = 'finished')")
    if bad or no_attempt:
        raise Failure(f"matches not finished exactly once (match, finished, running): {bad} {no_attempt}")
    errors = [r[0] for r in sql("SELECT coalesce(error, '') FROM match_attempts WHERE status <> 'finished'")]
    if not any("worker-1@ci" in e for e in errors) or not any("referee" in e for e in errors):
        raise Failure(f"the kills hit no running match (attempt errors: {errors})")
    for game in games:
        seats = int(sql(f"SELECT count(*) FROM seats s JOIN matches m ON m.id = s.match_id WHERE m.status = "
                        f"'finished' AND m.game LIKE '{game}%'")[0][0])
        rated = int(sql(f"SELECT coalesce(sum(games), 0) FROM ratings WHERE game = '{game}'")[0][0])
        history = int(sql(f"SELECT count(*) FROM rating_history h JOIN matches m ON m.id = h.match_id "
                          f"WHERE m.game LIKE '{game}%'")[0][0])
        if not seats == rated == history:
            raise Failure(f"{game}: {seats} seats of finished matches, {rated} games rated, {history} history rows")
    replays = int(sql("SELECT count(*) FROM replays")[0][0])
    results = int(sql("SELECT count(DISTINCT result_seq) FROM matches WHERE status = 'finished'")[0][0])
    if not replays == results == len(finished_matches):
        raise Failure(f"{len(finished_matches)} finished matches, {replays} replays, {results} results")
    verdicts = dict(sql("SELECT verdict, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                        "WHERE m.status = 'finished' GROUP BY verdict"))
    if set(verdicts) != {"normal"}:
        raise Failure(f"bots were charged for the infrastructure: verdicts {verdicts}")
    attempts = dict(sql("SELECT status, count(*) FROM match_attempts GROUP BY status"))
    for e in errors:
        log(f"  attempt ended by a kill: {e[:160]}")
    log(f"exactly once: {len(finished_matches)} matches finished once each (attempts by status {attempts}), "
        f"{replays} replays, seats == games rated == history rows in every game, every verdict normal")
    before = {g: stack.exec("web", "parterre", "leaderboard", g, "--json") for g in games}
    stack.parterre("ratings", "rebuild")
    after = {g: stack.exec("web", "parterre", "leaderboard", g, "--json") for g in games}
    for g in games:
        b = {r["bot_id"]: (round(r["elo"], 9), r["games"]) for r in json.loads(before[g])}
        a = {r["bot_id"]: (round(r["elo"], 9), r["games"]) for r in json.loads(after[g])}
        if a != b:
            raise Failure(f"{g}: ratings differ from `parterre ratings rebuild`: before {b}, after {a}")
    log("ratings equal `parterre ratings rebuild` in every game")


# -- report ---------------------------------------------------------------------------------


def print_report(report: dict[str, Any]) -> None:
    print("\n== compose e2e report ==")
    print(f"image parterre:ci: {report['image_mb']:.0f} MB; built in {report['build_s']:.0f} s "
          f"({report['build_cached_steps']} steps from cache)")
    print(f"runs as: {report.get('id', '?')}")
    print(f"`compose up -d`: {report['up_s']:.0f} s; every service healthy after {report['healthy_s']:.0f} s")
    for service, (secs, what) in report["startup"].items():
        print(f"  {service:<12} {secs:6.1f} s {what}")
    if "games_s" in report:
        print(f"round-robin in each game (3 x 12 matches): {report['games_s']:.0f} s")
    if "hosted" in report:
        h = report["hosted"]
        print(f"hosted bot {h['bot_id']}: uploaded -> active {h['validated_s']:.0f} s ({h['validation_games']} "
              f"validation games), -> rated match {h['match_id']} {h['match_s']:.0f} s; phase {h['total_s']:.0f} s")
    for line in report.get("faults", []):
        print(f"fault: {line}")
    if "fault_s" in report:
        print(f"fault tournament ({FAULT_MATCHES} matches): {report['fault_s']:.0f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--project", default="parterre-ci")
    p.add_argument("--logs", default="/var/log/parterre-ci")
    p.add_argument("--keep", action="store_true", help="leave the stack running")
    args = p.parse_args()
    stack = Stack(args.project, Path(args.logs))
    report: dict[str, Any] = {}
    stack.compose("--profile", "tools", "down", "-v", "--remove-orphans", "--timeout", "5", check=False)
    ok = False
    try:
        check_ports_free()
        bring_up(stack, report)
        check_unprivileged(stack, report)
        bots = register_and_run_bots(stack)
        play_each_game(stack, bots, report)
        check_prometheus(stack)
        hosted(stack, report)
        tid = fault_tournament(stack, bots, report)
        check_exactly_once(stack, tid, list(GAMES))
        ok = True
    except (Failure, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as exc:
        print(f"e2e: FAILED: {type(exc).__name__}: {exc}", flush=True)
    finally:
        logs = Path(args.logs) / "compose.log"
        logs.write_text(stack.compose("--profile", "tools", "logs", "--no-color", "-t", check=False, timeout=120))
        if report.get("startup"):
            print_report(report)
        print(f"e2e: container logs in {logs}")
        if not args.keep:
            stack.compose("--profile", "tools", "down", "-v", "--remove-orphans", "--timeout", "10", check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
