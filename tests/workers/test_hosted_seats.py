"""Hosted seats (docs/hosted.md): platform-held credentials, the per-slot limit, the adapter's drain.

Oracles: the Redis hash the referee reads (HGET by the token's sha256 computed
here with hashlib), the referee's verdicts, exit codes and ``/proc``.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.ladder_helpers import module_database
from fixtures.waiting import wait_until
from test_hosted import BOTS, manifest, python_bot, targz

from ladder import bots as ladder_bots
from ladder import make_pool
from ladder import submissions as sub
from ladder.tournaments import plan_match
from workers.hosting import validation as hosted
from workers.hosting.seats import HostedSeats, seat_processes

ROOT = Path(__file__).resolve().parents[2]
SECRET = "x" * 16 + secrets.token_hex(16)
needs_sandbox = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                   reason="needs bubblewrap and root (the workers' setting)")


@pytest.fixture(scope="module")
def pool(pg_admin_url: str) -> Iterator[Any]:
    for url in module_database(pg_admin_url):
        p = make_pool(url, max_size=4)
        yield p
        p.close()


@pytest.fixture
def redis_key(redis_base_url: str) -> Iterator[tuple[Any, str]]:
    import redis

    r = redis.Redis.from_url(redis_base_url)
    key = f"parterre-test-{secrets.token_hex(4)}:bot_tokens"
    yield r, key
    r.delete(key)


def _active(pool: Any, name: str, data: bytes | None = None) -> tuple[int, sub.HostedVersion]:
    bot_id, _ = ladder_bots.register_bot(pool, f"{name}-{secrets.token_hex(3)}")
    version = sub.create_version(pool, bot_id, data or python_bot())
    sub.set_verdict(pool, version.id, "active")
    return bot_id, version


def _live(r: Any, key: str, token: str) -> str | None:
    value = r.hget(key, hashlib.sha256(token.encode()).hexdigest())
    return value.decode() if value is not None else None


def seats_left(marker: str, within_s: float = 5.0) -> list[int]:
    """Adapters and keepers whose command line names ``marker`` (a test's own hosted dir: the machine is
    shared) still alive after ``within_s`` (a keeper ends a moment after its adapter)."""
    end = time.monotonic() + within_s
    while (left := seat_processes(marker)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def sandbox_pids(marker: str) -> list[int]:
    """Live processes of a sandbox uid whose mounts come from under ``marker`` (a test's own hosted dir):
    ``/proc/<pid>/mountinfo`` names the source of its ``/bot`` bind. Scoped so that other sessions'
    sandboxes on this shared machine do not count."""
    from workers.hosting.sandbox import UID_BASE

    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid < UID_BASE or "State:\tZ" in Path(f"/proc/{entry}/status").read_text():
                continue
            if marker in Path(f"/proc/{entry}/mountinfo").read_text():
                out.append(int(entry))
        except OSError:
            continue
    return out


def nothing_left(marker: str, within_s: float = 5.0) -> bool:
    """No adapter, keeper or sandboxed process of this test's hosted dir within ``within_s``."""
    end = time.monotonic() + within_s
    while seat_processes(marker) or sandbox_pids(marker):
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def test_the_token_is_derived_per_version_and_needs_a_long_secret() -> None:
    a = sub.hosted_token(SECRET, 1, "ab" * 32)
    assert a == sub.hosted_token(SECRET, 1, "ab" * 32) and len(a) == 43
    assert len({a, sub.hosted_token(SECRET, 2, "ab" * 32), sub.hosted_token(SECRET, 1, "cd" * 32),
                sub.hosted_token(SECRET + "y", 1, "ab" * 32)}) == 4
    with pytest.raises(ValueError, match="at least 32"):
        sub.hosted_token("short", 1, "ab" * 32)
    assert hosted.token_secret({"PARTERRE_HOSTED_TOKEN_SECRET": "short"}) is None
    assert hosted.token_secret({}) is None


def test_a_credential_lives_while_its_version_is_active(pool: Any, redis_key: tuple[Any, str]) -> None:
    r, key = redis_key
    bot_id, v1 = _active(pool, "cred")
    t1 = sub.hosted_token(SECRET, v1.id, v1.sha256)
    assert _live(r, key, t1) is None
    assert sub.activate_credential(pool, v1.id, SECRET, r, key)
    assert _live(r, key, t1) == str(bot_id)
    assert sub.playing_versions(pool, [bot_id]).keys() == {bot_id}
    assert sub.playing_versions(pool, [bot_id], game="flowar") == {}  # its manifest names floriferous only

    # A new version replaces it: the old credential is gone, the new one is live.
    v2 = sub.create_version(pool, bot_id, python_bot(0.1, "v2"))
    sub.set_verdict(pool, v2.id, "active")
    assert sub.activate_credential(pool, v2.id, SECRET, r, key)
    t2 = sub.hosted_token(SECRET, v2.id, v2.sha256)
    assert _live(r, key, t1) is None and _live(r, key, t2) == str(bot_id)

    # The referees' hash rewritten from the database keeps it (and the owner's token)...
    ladder_bots.publish_tokens(pool, r, key)
    assert _live(r, key, t2) == str(bot_id) and _live(r, key, t1) is None
    # ...and a flushed hash heals on the next tick's sync.
    r.delete(key)
    assert sub.sync_credentials(pool, r, key)["live"] >= 1 and _live(r, key, t2) == str(bot_id)

    # Revoking the bot revokes its hosted credential too; a version no longer active cannot get one.
    ladder_bots.revoke_bot(pool, bot_id, redis=r, key=key)
    assert _live(r, key, t2) is None
    assert sub.playing_versions(pool, [bot_id]) == {}
    sub.sync_credentials(pool, r, key)
    assert _live(r, key, t2) is None
    assert not sub.activate_credential(pool, v1.id, SECRET, r, key)


def test_the_owners_ordinary_token_cannot_take_a_hosted_bots_seats(pool: Any, redis_key: tuple[Any, str]) -> None:
    """Attack: the owner connects any unsandboxed program with the bot's ordinary token while the hosted
    version plays; the referee maps both tokens to the same bot id and seats whichever session is free.
    Oracle: the referees' hash read with HGET by sha256 computed here."""
    r, key = redis_key
    bot_id, token = ladder_bots.register_bot(pool, f"owner-{secrets.token_hex(3)}", redis=r, key=key)
    other_id, other_token = ladder_bots.register_bot(pool, f"outside-{secrets.token_hex(3)}", redis=r, key=key)
    assert _live(r, key, token) == str(bot_id)
    version = sub.create_version(pool, bot_id, python_bot())
    sub.set_verdict(pool, version.id, "active")
    assert _live(r, key, token) == str(bot_id)  # no credential yet: the bot connects from outside
    cred = sub.hosted_token(SECRET, version.id, version.sha256)
    assert sub.activate_credential(pool, version.id, SECRET, r, key)
    assert _live(r, key, cred) == str(bot_id) and _live(r, key, token) is None
    # The hash rewritten from the database, a flushed hash healed by the tick's sync: still hidden.
    ladder_bots.publish_tokens(pool, r, key)
    assert _live(r, key, cred) == str(bot_id) and _live(r, key, token) is None
    assert _live(r, key, other_token) == str(other_id)  # an ordinary bot is unaffected
    r.delete(key)
    sub.sync_credentials(pool, r, key)
    assert _live(r, key, cred) == str(bot_id) and _live(r, key, token) is None
    # Rotating the token does not publish the new one either.
    rotated = ladder_bots.issue_token(pool, bot_id, redis=r, key=key)
    assert _live(r, key, rotated) is None and _live(r, key, cred) == str(bot_id)
    ladder_bots.publish_tokens(pool, r, key)
    assert _live(r, key, rotated) is None
    # The hosted version withdrawn: its credential dies, the ordinary token works again.
    sub.set_verdict(pool, version.id, "superseded")
    sub.sync_credentials(pool, r, key)
    assert _live(r, key, cred) is None and _live(r, key, rotated) == str(bot_id)
    ladder_bots.publish_tokens(pool, r, key)
    assert _live(r, key, cred) is None and _live(r, key, rotated) == str(bot_id) and _live(r, key, token) is None


def test_the_ladder_pairs_hosted_bots_only_with_the_secret(pool: Any, redis_key: tuple[Any, str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.periodic as periodic

    r, key = redis_key
    bot_id, v = _active(pool, "pair")
    sub.activate_credential(pool, v.id, SECRET, r, key)
    monkeypatch.delenv("PARTERRE_HOSTED_TOKEN_SECRET", raising=False)
    assert bot_id not in periodic._hosted_players(pool, "floriferous")
    monkeypatch.setenv("PARTERRE_HOSTED_TOKEN_SECRET", SECRET)
    assert bot_id in periodic._hosted_players(pool, "floriferous")
    assert bot_id not in periodic._hosted_players(pool, "lafleur")


def test_a_version_made_active_without_the_secret_gets_its_credential_on_the_next_tick(
        pool: Any, redis_key: tuple[Any, str], redis_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user's workers ran without the secret at first: versions made active then must play once
    it is there (they had no token_hash, so sync_credentials alone never published one)."""
    import workers.periodic as periodic
    import workers.tasks as tasks

    r, key = redis_key
    bot_id, v = _active(pool, "late")  # active, no credential: the workers had no secret
    assert v.id in sub.versions_without_credential(pool)
    assert bot_id not in sub.playing_versions(pool, [bot_id])
    monkeypatch.setattr(ladder_bots, "TOKENS_KEY", key)
    monkeypatch.setattr(tasks, "_pool", pool)
    monkeypatch.setattr(periodic.ladder_submissions, "claim_next", lambda *_a, **_k: None)  # nothing to validate
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_base_url)
    monkeypatch.setenv("PARTERRE_HOSTED_TOKEN_SECRET", SECRET)
    periodic.hosted_tick()
    assert v.id not in sub.versions_without_credential(pool)
    assert bot_id in sub.playing_versions(pool, [bot_id])
    assert _live(r, key, sub.hosted_token(SECRET, v.id, v.sha256)) == str(bot_id)


def test_challenges_count_a_playing_hosted_bot_as_connected(pool: Any, redis_key: tuple[Any, str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.periodic as periodic
    import workers.tasks as tasks

    r, key = redis_key
    bot_id, v = _active(pool, "chal")
    sub.activate_credential(pool, v.id, SECRET, r, key)
    seen: dict[str, set[int]] = {}

    def dispatch(_pool: Any, connected: Any) -> tuple[list[int], list[int]]:
        seen.update({g: connected(g) for g in ("floriferous", "lafleur")})
        return [], []

    monkeypatch.setattr(periodic.ladder_challenges, "dispatch_challenges", dispatch)
    monkeypatch.setattr(tasks, "_pool", pool)
    monkeypatch.setenv("PARTERRE_REDIS_URL", "")
    monkeypatch.setenv("PARTERRE_HOSTED_TOKEN_SECRET", SECRET)
    periodic.challenge_tick()
    assert bot_id in seen["floriferous"] and bot_id not in seen["lafleur"]  # its manifest: floriferous


@needs_sandbox
def test_a_match_seating_more_hosted_bots_than_a_slot_allows_is_an_infra_error(
        pool: Any, redis_key: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, hosted_dir: Path) -> None:
    import workers.tasks as tasks

    r, key = redis_key
    a, va = _active(pool, "cap-a")
    b, vb = _active(pool, "cap-b")
    for v in (va, vb):
        sub.activate_credential(pool, v.id, SECRET, r, key)
    match_id = plan_match(pool, game_string="floriferous(players=2)", bot_ids=[a, b],
                          plan_key=f"cap-{secrets.token_hex(3)}")
    for name, value in {"PARTERRE_HOSTED_TOKEN_SECRET": SECRET, "PARTERRE_SANDBOXES_PER_SLOT": "1",
                        "PARTERRE_MATCH_ATTEMPTS": "1", "PARTERRE_REFEREE_ADDRESS": "127.0.0.1:9",
                        "PARTERRE_REFEREE_DISCOVERY": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tasks, "_pool", pool)
    monkeypatch.setenv("PARTERRE_HOSTED_DIR", str(hosted_dir))
    assert tasks._run_match(match_id) == "failed"  # the only attempt: not the bots' fault, unrated
    assert seat_processes(str(hosted_dir)) == [] and not (hosted_dir / "logs").exists()  # nothing started
    with pool.connection() as conn:
        status, error = conn.execute("SELECT status, error FROM match_attempts WHERE match_id = %s",
                                     (match_id,)).fetchone()
    assert status == "infra_error" and "PARTERRE_SANDBOXES_PER_SLOT" in error, (status, error)


# -- the adapter of one hosted seat, against a real referee -----------------------------------------


@pytest.fixture
def hosted_dir() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="parterre-seat-", dir="/var/tmp"))
    base.chmod(0o711)
    yield base
    shutil.rmtree(base, ignore_errors=True)


SLOW = b"""import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "decision_request":
        time.sleep(0.2)
        print(0, flush=True)
"""


def _seat(hosted_dir: Path, address: str, token: str) -> subprocess.Popen[bytes]:
    bot = hosted_dir / "slow"
    bot.mkdir(mode=0o755, exist_ok=True)
    (bot / "bot.py").write_bytes(SLOW)
    (bot / "bot.py").chmod(0o644)
    command = hosted.sandbox_command(bot, {"runtime": "python3.11", "command": ["python3.11", "bot.py"]},
                                     {"wall_s": 120}, hosted_dir / "stderr.log")
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "PARTERRE_HOSTED_DIR": str(hosted_dir),
           "PARTERRE_BOT_TOKEN": token}
    return subprocess.Popen([sys.executable, "-m", "workers.hosting.seat", "--address", address, "--log-dir",
                             str(hosted_dir / "adapter"), "--", *command], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


@needs_sandbox
def test_sigterm_waits_for_the_match_in_progress_and_stops_an_idle_seat_at_once(hosted_dir: Path) -> None:
    from bots.reference import RandomBot
    from referee.testing import ThreadedReferee

    with ThreadedReferee({"tok-seat": 1, "tok-rand": 2}, bots={"tok-rand": RandomBot(seed=5)}) as ref:
        # Idle: SIGTERM stops it at once.
        seat = _seat(hosted_dir, ref.address, "tok-seat")
        # the type: ignore below: Optional: set while the referee runs
        ref.run(ref.harness.wait_sessions(1, timeout_s=20), timeout_s=25)  # type: ignore[union-attr]
        t0 = time.monotonic()
        seat.send_signal(signal.SIGTERM)
        assert seat.wait(10) == 0 and time.monotonic() - t0 < 5
        assert nothing_left(str(hosted_dir))

        # In a match: SIGTERM waits for its end; the match is played to the end by both.
        seat = _seat(hosted_dir, ref.address, "tok-seat")
        # the type: ignore below: Optional: set while the referee runs
        ref.run(ref.harness.wait_sessions(1, timeout_s=20), timeout_s=25)  # type: ignore[union-attr]
        # the type: ignore below: Optional: set while the referee runs
        future = ref.submit(ref.harness.run_match(900, "floriferous(players=2)", [1, 2]))  # type: ignore[union-attr]
        assert ref.harness is not None and ref.harness.core is not None
        core = ref.harness.core
        # the seat is in the match: it has been played into (the referee's rooms, read on its loop)
        wait_until(lambda: ref.call(lambda: 900 in core.rooms and len(core.rooms[900][0].steps) >= 2), 60,
                   0.05, what="match 900 under way")
        assert not future.done()
        assert sandbox_pids(str(hosted_dir)), "the leftover oracle must see a running sandbox"
        seat.send_signal(signal.SIGTERM)
        result = future.result(120)
        assert result.status == "finished", result
        assert [s.verdict for s in result.seats] == ["normal", "normal"]
        assert seat.wait(15) == 0
        assert nothing_left(str(hosted_dir))

        # A credential the referee does not know: exit 3, said in one line.
        seat = _seat(hosted_dir, ref.address, "tok-revoked")
        assert seat.wait(30) == 3
        assert seat.stderr is not None and b"refused the credential" in seat.stderr.read()
    assert nothing_left(str(hosted_dir))


def _environ_of(proc: subprocess.Popen[bytes], timeout_s: float = 5.0) -> list[bytes]:
    """``/proc/<pid>/environ`` of a running child, split on NUL.

    Popen returns once the child's exec is past its point of no return, which comes before the kernel
    records where the new image's environment lies: read in that window, the file is empty (a CI run
    read ``[b'']``). So it is read again until it is not, while the child runs.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        assert proc.poll() is None, "the adapter exited"
        data = Path(f"/proc/{proc.pid}/environ").read_bytes()
        if data or time.monotonic() > deadline:
            return data.split(b"\0")
        time.sleep(0.01)


@needs_sandbox
def test_hosted_seats_start_and_stop_one_adapter_per_hosted_bot(pool: Any, hosted_dir: Path) -> None:
    """Started with the version's token in the adapter's environment only; stopped (idle: at once)."""
    node = targz({"parterre-bot.toml": manifest("node", ["node", "random_bot.js"], ["floriferous"]),
                  "random_bot.js": (BOTS / "random_bot.js").read_bytes()})
    bot_id, version = _active(pool, "seats", node)
    cfg = hosted.hosted_settings({"PARTERRE_HOSTED_DIR": str(hosted_dir), "PARTERRE_SANDBOXES_PER_SLOT": "1"})
    # A "referee" that accepts connections and never answers, so the adapter stays up (with a refused port
    # it could give up and exit before its environment is read: a loaded CI run once read an exited one).
    silent = socket.create_server(("127.0.0.1", 0))
    seats = HostedSeats(pool, {bot_id: version}, match_id=1, attempt=1,
                        address=f"127.0.0.1:{silent.getsockname()[1]}", secret=SECRET, cfg=cfg, drain_s=10)
    token = sub.hosted_token(SECRET, version.id, version.sha256)
    with silent, seats:
        pid = seats.procs[bot_id].pid
        environ = _environ_of(seats.procs[bot_id])
        assert f"PARTERRE_BOT_TOKEN={token}".encode() in environ  # (it pops it before starting any child)
        assert not any(e.startswith((b"PARTERRE_DATABASE_URL", b"PARTERRE_SERVICE_TOKEN")) for e in environ)
        assert token.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert seats.procs[bot_id].returncode is not None
    assert nothing_left(str(hosted_dir))


SEAT_PACED = b"""import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "decision_request":
        time.sleep(0.25 if msg["seat"] == 1 else 0.0)
        print(0, flush=True)
"""


@needs_sandbox
def test_each_slots_adapter_plays_its_own_match_and_a_slot_whose_match_ended_stops_at_once(
        pool: Any, hosted_dir: Path) -> None:
    """Two slots run matches of one hosted bot at once. Each adapter tells the referee the match it was
    started for (``--match-id``: ``Hello.only_match_id``), so slot 2's match, asked for while slot 1's
    adapter is the bot's only session, waits for slot 2's own adapter. (Before, the referee seated any
    free session: slot 1's adapter took slot 2's match, and slot 2's adapter, left idle, could be handed
    a match in the instant its worker stopped it, a ``disconnect`` charged to the bot: CI, 2026-12-06.)
    Slot 1 then stops its seats as soon as its own match ends: its adapter has played its match and
    exits at once, while slot 2's slower match (the bot thinks only as seat 1) goes on to a normal end."""
    from bots.reference import RandomBot
    from referee.testing import ThreadedReferee

    paced = targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "bot.py"], ["floriferous"]),
                   "bot.py": SEAT_PACED})
    bot_id, version = _active(pool, "twice", paced)
    token = sub.hosted_token(SECRET, version.id, version.sha256)
    cfg = hosted.hosted_settings({"PARTERRE_HOSTED_DIR": str(hosted_dir), "PARTERRE_SANDBOXES_PER_SLOT": "1"})
    r1, r2 = bot_id + 1000, bot_id + 1001
    bots = {"tok-r1": RandomBot(seed=1), "tok-r2": RandomBot(seed=2)}
    with ThreadedReferee({token: bot_id, "tok-r1": r1, "tok-r2": r2}, bots=bots) as ref:
        h = ref.harness
        assert h is not None and h.core is not None
        registry = h.core.registry

        async def sessions() -> list[tuple[int, list[int]]]:  # read on the referee's own loop
            return [(s.only_match_id, sorted(s.seats)) for s in registry.by_bot.get(bot_id, ())]

        slot1, slot2 = (HostedSeats(pool, {bot_id: version}, match_id=m, attempt=1, address=ref.address,
                                    secret=SECRET, cfg=cfg, drain_s=120) for m in (701, 702))
        slot1.__enter__()
        ref.run(h.wait_sessions(bot_id, count=1, timeout_s=30), timeout_s=35)
        other = ref.submit(h.run_match(702, "floriferous(players=2)", [r2, bot_id]))  # slot 2's match, slow
        # the referee seats in seat order in one pass: once seat 0 (r2) has its stream, seat 1's was sought
        core = h.core
        wait_until(lambda: ref.call(lambda: 702 in core.rooms and core.rooms[702][0].seats[0].session is not None),
                   30, 0.05, what="match 702's first seating pass")
        assert ref.run(sessions(), timeout_s=5) == [(701, [])], "slot 1's adapter must not take match 702"
        slot2.__enter__()
        ref.run(h.wait_sessions(bot_id, count=2, timeout_s=30), timeout_s=35)
        own = ref.submit(h.run_match(701, "floriferous(players=2)", [bot_id, r1]))  # slot 1's match, fast
        first = own.result(120)
        assert not other.done(), "the slow match should still run (else the test proves nothing)"
        t0 = time.monotonic()
        slot1.__exit__(None, None, None)  # its own match is over: stop its seat
        stopped = time.monotonic() - t0
        assert stopped < 5, f"slot 1's adapter played its own match: nothing to drain ({stopped:.1f} s)"
        second = other.result(120)
        slot2.__exit__(None, None, None)
        for result in (first, second):
            assert result.status == "finished", result
            assert [s.verdict for s in result.seats] == ["normal", "normal"], result
        assert [p.returncode for s in (slot1, slot2) for p in s.procs.values()] == [0, 0]
        print(f"\nslot 1's seat stopped in {stopped:.2f} s while slot 2's match went on")
    assert nothing_left(str(hosted_dir))
