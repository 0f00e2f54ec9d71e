"""``parterre demo``: the whole service on one machine with nothing configured.

An embedded PostgreSQL and Redis (unless URLs are configured), a
referee, a Celery worker, reference bots and the house bots (``parterre house``)
as separate processes connecting
over gRPC; a round-robin per game with 2-, 3- and 4-player matches; a progress
bar; the leaderboards at the end. Child processes log to
``$PARTERRE_HOME/logs``; all of them are stopped when the demo ends.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from parterre import embedded
from parterre import settings as settings_mod

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

console = Console()

#: Demo bots: name -> reference bot kind; the three tiers random < greedy < search
#: (docs/search.md, "House bots and the demo").
DEMO_BOTS = {"random-1": "random", "random-2": "random", "greedy-1": "greedy", "greedy-2": "greedy",
             "search-1": "search"}
#: Player counts per game in the demo round-robin.
DEMO_PLAYER_COUNTS: Mapping[str, tuple[int, ...]] = {
    "floriferous": (2, 3, 4), "lafleur": (2, 3, 4), "flowar": (2, 3, 4),
}
#: Demo time control: 2 s per decision and a 250 ms margin, no bank.
DEMO_TIME_CONTROL = {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 250}
DONE_STATUSES = ("finished", "failed", "aborted_no_show")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Supervised(Protocol):
    """Child processes that can tell whether one of them died (``Children``, ``parterre.up.Stack``)."""

    def check_alive(self) -> None:
        """Raise when a child exited (or a stop was requested)."""


DEMO_LIVE_DELAY_S = 3
"""The demo's live delay, seconds (the service's default is 30: docs/web.md)."""
WEB_READY_S = 60.0
"""How long the demo waits for its web site to answer before printing its address anyway."""


def _wait_for_port(port: int) -> None:
    """Wait until 127.0.0.1:``port`` accepts a connection (the address is printed once it does), at most
    :data:`WEB_READY_S` seconds."""
    deadline = time.monotonic() + WEB_READY_S
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)


BOT_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TZ", "VIRTUAL_ENV", "PYTHONPATH", "PARTERRE_REFEREE_ADDRESS",
           "PARTERRE_LOG_FORMAT", "PARTERRE_ENGINES")
"""The demo's variables a bot process inherits: what ``parterre bot run`` needs to find Python and the
referee. Not the database or Redis URLs, nor the service token (which would let a bot run matches, read
every account or rewrite the ratings), and a ``PARTERRE_HOME`` of its own (``HOME/bots``), so that its
settings do not read the demo's ``service-token`` file either. This is least privilege, not isolation:
the demo's bots run as the same user, who can read the demo's files; bots of strangers run in the
hosted sandbox (docs/hosted.md)."""


class Children:
    """Child processes started by the demo; all stopped on exit (SIGTERM, then SIGKILL)."""

    def __init__(self, log_dir: Path, env: Mapping[str, str]) -> None:
        self.log_dir = log_dir
        self.env = dict(env)
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        log_dir.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, *args: str, env: Mapping[str, str] | None = None,
              inherit: tuple[str, ...] | None = None) -> subprocess.Popen[bytes]:
        """Start ``python -m parterre.cli ARGS`` logging to ``logs/NAME.log``, with ``env`` added to the
        demo's environment (secrets go there, never into ARGS: a command line is public to ``ps``).

        Args:
            inherit: only these variables of the demo's environment (e.g. :data:`BOT_ENV`); None: all.
        """
        base = self.env if inherit is None else {k: self.env[k] for k in inherit if k in self.env}
        with open(self.log_dir / f"{name}.log", "ab") as log:  # the child keeps its own descriptor
            proc = subprocess.Popen(
                [sys.executable, "-m", "parterre.cli", *args],
                env={**base, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.procs.append((name, proc))
        return proc

    def check_alive(self) -> None:
        """Raise RuntimeError naming the first child that has exited."""
        for name, proc in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name} exited with status {proc.returncode}; see {self.log_dir / (name + '.log')}"
                )

    def stop(self) -> None:
        """Terminate every child, newest first; kill those still alive after 10 s."""
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _, proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_referee(address: str, children: Supervised | None = None, timeout_s: float = 60) -> None:
    """Block until the referee at ``address`` reports SERVING on the gRPC health service.

    Raises:
        RuntimeError: it did not come up within ``timeout_s`` or its process died.
    """
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if children is not None:
            children.check_alive()
        try:
            with grpc.insecure_channel(address) as ch:
                resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=1)
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return
        except grpc.RpcError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the referee at {address} did not become healthy within {timeout_s:.0f} s")


def offline_bots(pool: ConnectionPool, tournament_id: int) -> dict[int, str] | None:
    """Bots seated in the tournament's pending matches with no stream on any live referee.

    Returns:
        ``{bot id: name}``; None when the referees' presence cannot be read
        (no Redis: then nothing is known, nothing is reported).
    """
    from ladder import tournaments
    from workers.directory import online_bots, read_referees
    from workers.settings import settings as worker_settings

    url = worker_settings().redis_url
    if not url:
        return None
    pending = tournaments.pending_bots(pool, tournament_id)
    if not pending:
        return {}
    online = online_bots(read_referees(url))
    return {b: name for b, name in pending.items() if b not in online}


def _names(bots: Mapping[int, str]) -> str:
    return ", ".join(f"{name} (bot {bot_id})" for bot_id, name in bots.items())


def missing_bots_line(bots: Mapping[int, str]) -> str:
    """What happens to matches whose bots are not connected, in numbers (docs/bots.md "No-show")."""
    from workers.settings import settings as worker_settings

    cfg = worker_settings()
    wait_s, attempts, delay_s = cfg.no_show_timeout_ms / 1000, cfg.match_attempts, cfg.retry_delay_s
    return (f"waiting for bots not connected: {_names(bots)}; each of their matches waits {wait_s:g} s for "
            f"them, then ends aborted_no_show (unrated) and is retried after {delay_s:g} s x attempt, "
            f"at most {attempts} attempts in all; start the bots (parterre bot run / parterre connect) to play")


OUTAGE_BACKOFF_S = (0.5, 5.0)
"""``--wait`` asks an unreachable database again after 0.5 s, doubling up to 5 s."""

OUTAGE_REMINDER_S = 30.0
"""While the database stays unreachable, ``--wait`` says it is still waiting this often."""


def through_outage(fn: Any, deadline: float, say: Any, what: str) -> Any:
    """``fn()``, asked again while PostgreSQL is unreachable, until the monotonic ``deadline``.

    Says once that the database is unreachable and that it keeps waiting (and again every
    :data:`OUTAGE_REMINDER_S`), and once it is back; backs off per :data:`OUTAGE_BACKOFF_S`.

    Args:
        fn: a call that reads the database.
        deadline: ``time.monotonic()`` after which it gives up.
        say: prints one line for the user.
        what: what is being waited for, for those lines.

    Raises:
        TimeoutError: the database was still unreachable at ``deadline`` (the message says so).
    """
    from ladder.errors import DatabaseUnavailableError

    since: float | None = None
    reminded = 0.0
    delay = OUTAGE_BACKOFF_S[0]
    while True:
        try:
            result = fn()
        except DatabaseUnavailableError as exc:
            now = time.monotonic()
            if since is None:
                since = reminded = now
                say(f"database unreachable ({exc}); still waiting for {what}, up to {max(0.0, deadline - now):.0f} s "
                    "more (--timeout)")
            elif now - reminded >= OUTAGE_REMINDER_S:
                reminded = now
                say(f"database still unreachable after {now - since:.0f} s; still waiting for {what}")
            if now >= deadline:
                raise TimeoutError(f"the database has been unreachable for {now - since:.0f} s "
                                   f"(last error: {exc})") from None
            time.sleep(min(delay, deadline - now))
            delay = min(OUTAGE_BACKOFF_S[1], delay * 2)
            continue
        if since is not None:
            say(f"database reachable again after {time.monotonic() - since:.0f} s")
        return result


def wait_for_tournament(
    pool: ConnectionPool,
    tournament_id: int,
    *,
    timeout_s: float = 3600,
    children: Children | None = None,
    label: str | None = None,
) -> dict[str, int]:
    """Show a progress bar until every match of the tournament is done.

    An unreachable database does not end the wait: it is said, asked again with backoff
    (:func:`through_outage`) and waited out up to ``timeout_s`` (the workers keep going).

    Returns:
        Match counts by status.

    Raises:
        TimeoutError: matches still pending (or the database unreachable) after ``timeout_s``.
    """
    from ladder import tournaments

    deadline = time.monotonic() + timeout_s
    reported: dict[int, str] | None = None
    next_check = 0.0
    what = f"tournament {tournament_id}"
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task(label or f"tournament {tournament_id}", total=None)
        say = progress.console.print
        while True:
            status = through_outage(lambda: tournaments.tournament_status(pool, tournament_id), deadline, say, what)
            counts = {s: int(status[s]) for s in tournaments.MATCH_STATUSES}
            total = int(status["total"])
            done = sum(counts[s] for s in DONE_STATUSES)
            progress.update(task, total=total or None, completed=done)
            if status["complete"]:
                return {s: n for s, n in counts.items() if n}
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + 2.0
                missing = through_outage(lambda: offline_bots(pool, tournament_id), deadline, say, what)
                if missing is not None and missing != reported:
                    if missing:
                        progress.console.print(missing_bots_line(missing))
                    elif reported:
                        progress.console.print("every bot of the pending matches is connected")
                    reported = missing
            if time.monotonic() > deadline:
                raise TimeoutError(f"tournament {tournament_id}: {total - done} matches still pending"
                                   + (f"; bots not connected: {_names(reported)}" if reported else ""))
            if children is not None:
                children.check_alive()
            time.sleep(0.3)


def _ensure_demo_bots(pool: ConnectionPool, redis_client: Any) -> dict[str, tuple[int, str]]:
    """Register the demo bots (or issue fresh tokens to existing ones)."""
    from ladder import bots

    out: dict[str, tuple[int, str]] = {}
    for name in DEMO_BOTS:
        existing = bots.find_bot(pool, name)
        if existing is None:
            bot_id, token = bots.register_bot(pool, name, version="1", owner="demo", redis=redis_client)
        else:
            bot_id = existing.id
            token = bots.issue_token(pool, bot_id, redis=redis_client)
        out[name] = (bot_id, token)
    return out


def run_demo(
    *, rounds: int = 3, games: str = "floriferous,lafleur,flowar", web_port: int = 0, serve: bool = False,
    increment_ms: int = DEMO_TIME_CONTROL["increment_ms"], margin_ms: int = DEMO_TIME_CONTROL["margin_ms"],
    search_think_ms: float = 450.0,
) -> int:
    """Run the demo; returns the exit status (0 when every tournament finished).

    Args:
        rounds: round-robin cycles per game (each cycle: every combination of
            the 5 bots for 2, 3 and 4 players, every seat rotation: 70 matches).
        games: comma-separated game names.
        web_port: port of the web site started beside the demo (0: a free port).
        serve: keep the web site (and everything else) running after the
            tournaments until Ctrl-C.
        increment_ms: time per decision (ms; also the cap; no bank), 2000 by default.
        margin_ms: the referee's margin (ms), 250 by default.
        search_think_ms: the search bot's thinking time per decision (ms), 450 by default; most
            of the demo's time is the search bot thinking.
    """
    import redis

    from ladder import db, read, tournaments
    from parterre.render import leaderboard_table

    if rounds < 1:
        raise ValueError("--rounds must be at least 1")
    if not 0 < search_think_ms <= increment_ms:
        raise ValueError(f"--search-think-ms {search_think_ms:g}: from above 0 to --increment-ms ({increment_ms})")
    from ladder.match_plans import check_time_control

    try:
        check_time_control(0, increment_ms, increment_ms, margin_ms)
    except ValueError as exc:
        raise ValueError(f"--increment-ms {increment_ms} --margin-ms {margin_ms}: {exc}") from None
    game_list = [g.strip() for g in games.split(",") if g.strip()]
    for g in game_list:
        if g not in DEMO_PLAYER_COUNTS:
            raise ValueError(f"the demo knows no game {g!r}; choose from {', '.join(DEMO_PLAYER_COUNTS)}")
    st = settings_mod.load()
    console.print(f"[bold]Parterre demo[/bold] — data directory: {st.home}")
    services = embedded.resolve(st)
    for name in services.embedded_names:
        console.print(f"  embedded {name} started in {st.home / ('pg' if name == 'postgres' else name)}")
    if not services.embedded_names:
        console.print("  using the configured PostgreSQL and Redis")
    db.migrate(services.database_url)
    pool = db.make_pool(services.database_url, min_size=1, max_size=4)
    redis_client = redis.Redis.from_url(embedded.redis_py_url(services.redis_url))

    referee_address = f"127.0.0.1:{free_port()}"
    env = {
        **services.environ(),
        "PARTERRE_HOME": str(st.home),
        "PARTERRE_REFEREE_ADDRESS": referee_address,
        "PARTERRE_SERVICE_TOKEN": st.service_token,
        "PARTERRE_QUEUE": f"parterre-demo-{os.getpid()}",
    }
    children = Children(st.home / "logs", env)
    try:
        children.start("referee", "referee", "--address", referee_address)
        wait_for_referee(referee_address, children)
        console.print(f"  referee listening on {referee_address}")
        demo_bots = _ensure_demo_bots(pool, redis_client)
        for name, (_, token) in demo_bots.items():
            think = ["--think-ms", f"{search_think_ms:g}"] if DEMO_BOTS[name] == "search" else []
            children.start(f"bot-{name}", "bot", "run", DEMO_BOTS[name], "--name", name, *think,
                           env={"PARTERRE_BOT_TOKEN": token, "PARTERRE_HOME": str(st.home / "bots")},
                           inherit=BOT_ENV)
        children.start("house", "house", "--address", referee_address)
        children.start("worker", "worker", "--concurrency", "4", "--loglevel", "WARNING",
                       "--hostname", f"demo-{os.getpid()}@%h")
        console.print(f"  {len(demo_bots)} bots, the house bots (house-random, house-greedy, house-search) "
                      f"and a Celery worker started (logs in {children.log_dir})")
        port = web_port or free_port()
        # one viewer on this machine: the live view DEMO_LIVE_DELAY_S behind the table, not the service's 30 s
        # (a demo match lasts 10-20 s); an operator's own PARTERRE_LIVE_DELAY is kept
        children.start("web", "web", "--port", str(port),
                       env={"PARTERRE_LIVE_DELAY": os.environ.get("PARTERRE_LIVE_DELAY", str(DEMO_LIVE_DELAY_S))})
        _wait_for_port(port)
        console.print(f"  web site: http://127.0.0.1:{port}/ (watch the ladder live: http://127.0.0.1:{port}/tv)")

        os.environ.update({"PARTERRE_REDIS_URL": services.redis_url, "PARTERRE_QUEUE": env["PARTERRE_QUEUE"]})
        from workers.app import app
        from workers.tasks import plan_tournament

        app.conf.update(broker_url=services.redis_url)
        app.conf.task_default_queue = env["PARTERRE_QUEUE"]
        ok = True
        for game in game_list:
            tid = tournaments.create_tournament(
                pool,
                name=f"demo {game} round-robin",
                game=game,
                bot_ids=[bot_id for bot_id, _ in demo_bots.values()],
                player_counts=DEMO_PLAYER_COUNTS[game],
                rounds=rounds,
                time_control={**DEMO_TIME_CONTROL, "increment_ms": increment_ms, "cap_ms": increment_ms,
                              "margin_ms": margin_ms},
            )
            plan_tournament.delay(tid)
            counts = wait_for_tournament(pool, tid, children=children, label=f"{game} round-robin #{tid}")
            if counts.get("finished", 0) != sum(counts.values()):
                ok = False
            console.print(f"  tournament {tid}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            leaderboard_table(game, read.leaderboard(pool, game), console)
        exe = Path(sys.executable).parent / "parterre"
        console.print(
            f"Data kept in {st.home}; try `{exe} leaderboard {game_list[0]}` or "
            f"`{exe} matches --game {game_list[0]} --json`."
        )
        if serve:
            console.print(f"Serving http://127.0.0.1:{port}/ — press Ctrl-C to stop.")
            try:
                while True:
                    children.check_alive()
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
        return 0 if ok else 1
    finally:
        children.stop()
        pool.close()
        redis_client.close()
        services.close()
