"""Hosted bots end to end (docs/hosted.md): archives through the API, validation, the regression test.

The app runs in-process over a real, migrated PostgreSQL database; versions are
decided by :func:`workers.hosting.validation.process_version` — what ``parterre.hosted_tick``
runs on a worker — with the real sandbox (bubblewrap). Oracles: the archive
checks are tried with archives built by hand as an attacker would; the
regression test's verdicts come from ``ladder.stats``' SPRT on games whose
strength difference is planted (greedy vs greedy playing randomly 30 % of the
time: about -150 Elo in Floriferous, docs/regression.md), not from this code.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import archive_bombs as bombs
import pytest

from ladder import make_pool
from ladder import submissions as sub
from web import create_app
from web.auth import ParticipantConfig
from workers.hosting import validation as hosted
from workers.hosting.sandbox import UID_BASE

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

BOTS = Path(__file__).resolve().parents[1] / "hosted_bots"
ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"
needs_sandbox = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                   reason="needs bubblewrap and root (the workers' setting)")


def targz(files: dict[str, bytes | tuple[bytes, int]], links: dict[str, str] | None = None,
          hardlinks: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, content in files.items():
            data, mode = content if isinstance(content, tuple) else (content, 0o644)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, target in (hardlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.LNKTYPE, target
            tar.addfile(info)
    # gzip with mtime 0: the same files give the same bytes (and sha256) in any second
    return gzip.compress(buf.getvalue(), mtime=0)


def manifest(runtime: str, command: list[str], games: list[str] | None = None) -> bytes:
    quoted = ", ".join(f'"{c}"' for c in command)
    text = f'runtime = "{runtime}"\ncommand = [{quoted}]\nprotocol = "stdio"\n'
    if games is not None:
        text += "games = [" + ", ".join(f'"{g}"' for g in games) + "]\n"
    return text.encode()


def python_bot(p: float = 0.0, seed: str = "hosted") -> bytes:
    return targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "greedy.py", str(p), seed],
                                                ["floriferous"]),
                  "greedy.py": (BOTS / "greedy.py").read_bytes()})


@pytest.fixture(scope="module")
def pool(ladder_db: str) -> Iterator[Any]:
    p = make_pool(ladder_db, max_size=6)
    yield p
    p.close()


@pytest.fixture(scope="module")
def app(pool: Any) -> Iterator[Any]:
    mp = pytest.MonkeyPatch()
    mp.setenv("PARTERRE_SESSION_SECRET", "s" * 48)
    a = create_app(pool=pool)
    a.state.participants = ParticipantConfig(signup="open")
    yield a
    mp.undo()


_addr = iter(range(1, 250))


@pytest.fixture
def client(app: Any) -> TestClient:
    return TestClient(app, client=(f"198.51.100.{next(_addr)}", 50000))  # sign-up is rate limited per address


@pytest.fixture(scope="module")
def attacker(app: Any) -> tuple[dict[str, str], int]:
    return owner(TestClient(app, client=("192.0.2.1", 50000)))


@pytest.fixture
def cfg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = Path(tempfile.mkdtemp(prefix="parterre-hosted-test-", dir="/var/tmp"))
    base.chmod(0o711)
    c = hosted.hosted_settings({"PARTERRE_HOSTED_DIR": str(base), "PARTERRE_SANDBOXES_PER_SLOT": "2",
                                "PARTERRE_HOSTED_VALIDATION_DEALS": "1", "PARTERRE_HOSTED_MAX_GAMES": "400"})
    os.environ["PARTERRE_HOSTED_DIR"] = str(base)  # the keeper's SDK copy goes there too
    yield c
    os.environ.pop("PARTERRE_HOSTED_DIR", None)
    shutil.rmtree(base, ignore_errors=True)


_n = iter(range(10**6))


def owner(client: TestClient) -> tuple[dict[str, str], int]:
    """A new account with a token and a bot; returns (headers, bot id)."""
    name = f"host{next(_n)}"
    assert client.post("/api/accounts", json={"username": name, "password": PASSWORD}).status_code == 201
    token = client.post("/api/tokens", json={"scopes": ["bot:manage"]}, auth=(name, PASSWORD)).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    r = client.post("/api/bots", json={"name": f"hb{next(_n)}", "games": ["floriferous"]}, headers=headers)
    assert r.status_code == 201, r.text
    return headers, r.json()["id"]


def upload(client: TestClient, headers: dict[str, str], bot_id: int, data: bytes) -> Any:
    return client.post(f"/api/bots/{bot_id}/versions", content=data,
                       headers={**headers, "Content-Type": "application/octet-stream"})


def no_sandbox_left(within_s: float = 5.0) -> bool:
    """True when no live process of a sandbox uid exists within ``within_s`` (a pid namespace is torn
    down asynchronously after its init is killed)."""
    import time

    end = time.monotonic() + within_s
    while not _no_sandbox_now():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def _no_sandbox_now() -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid >= UID_BASE:
                    status = Path(f"/proc/{entry}/status").read_text()
                    if "State:\tZ" not in status:
                        return False
            except OSError:
                continue
    return True


# -- archives, tried as an attacker ----------------------------------------------------------------

GOOD_TOML = manifest("python3.11", ["python3.11", "bot.py"])
HOSTILE = {
    "not an archive": (b"hello world", "not a .tar.gz or .zip"),
    "corrupt gzip": (b"\x1f\x8b\x08\x00garbage", "not a readable .tar.gz"),
    "no manifest": (targz({"bot.py": b"print(0)"}), "no parterre-bot.toml"),
    "path traversal": (targz({"parterre-bot.toml": GOOD_TOML, "../../etc/cron.d/x": b"x"}), "'..'"),
    "absolute path": (targz({"parterre-bot.toml": GOOD_TOML, "/etc/passwd": b"x"}), "absolute"),
    "symlink outside": (targz({"parterre-bot.toml": GOOD_TOML}, links={"bot.py": "/etc/shadow"}), "links"),
    "hard link outside": (targz({"parterre-bot.toml": GOOD_TOML}, hardlinks={"bot.py": "/etc/shadow"}), "links"),
    "bad runtime": (targz({"parterre-bot.toml": manifest("ruby", ["ruby", "bot.rb"])}), "runtime 'ruby'"),
    "command not the runtime": (targz({"parterre-bot.toml": manifest("python3.11", ["/bin/sh", "-c", "id"])}),
                                "not '/bin/sh'"),
    "static outside the archive": (targz({"parterre-bot.toml": manifest("static", ["/usr/bin/curl"])}),
                                   "must start a file of the archive"),
    "static ../": (targz({"parterre-bot.toml": manifest("static", ["../../bin/sh"])}),
                   "must start a file of the archive"),
    "unknown protocol": (targz({"parterre-bot.toml": b'runtime = "node"\ncommand = ["node", "b.js"]\n'
                                                     b'protocol = "http"\n'}),
                         "protocol 'http' is not offered to hosted bots"),
    "bad toml": (targz({"parterre-bot.toml": b"runtime = = ="}), "not valid TOML"),
    # passed the upload, then the worker could not unpack them (ENAMETOOLONG): the same check at both
    "a 256-byte name": (targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"x", "n" * 256: b"x"}),
                        "a name of 256 bytes (at most 255: it could not be unpacked)"),
    "a 1000-level tree": (targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"x", "d/" * 1000 + "f": b"x"}),
                          "1001 folders deep (at most 64)"),
    "a path over 1024 bytes": (targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"x", ("n" * 200 + "/") * 6: b"x"}),
                               "a path over 1024 bytes"),
    "zip bomb": (None, "unpacked size"),
    "zip symlink": (None, "links"),
    # unpack raised FileExistsError on these: the version stayed validating, re-claimed every lease
    "file and folder": (targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"x", "x": b"1", "x/y/z": b"2"}),
                        "'x' is a file and also the folder of 'x/y/z'"),
    "folder then file": (targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"x", "d/e": b"1", "d": b"2"}),
                         "'d' is a file and also the folder of 'd/e'"),
    "duplicate path": (None, "the path 'bot.py' appears twice"),
    "zip file and folder": (None, "'x' is a file and also the folder of 'x/y'"),
    "zip duplicate path": (None, "the path 'bot.py' appears twice"),
    # S-9: tarfile read a whole PAX/GNU long header before any cap applied; tomllib parsed any size
    "pax header over 64 KiB": (None, "extended (PAX or GNU long name) header of 2097152 bytes"),
    "gnu long name over 64 KiB": (None, "extended (PAX or GNU long name) header of 2097152 bytes"),
    "1990 pax headers of 40 KiB": (None, "extended (PAX or GNU long name) headers over 4 MiB in all"),
    "3000 chained pax headers": (None, "too many chained extended headers"),
    "manifest over 16 KiB": (None, "parterre-bot.toml: over 16 KiB"),
    "zip of 90000 entries": (None, "more than 2000 entries"),
}
BOMBS: dict[str, Callable[[], bytes]] = {
    "pax header over 64 KiB": bombs.pax_bomb, "gnu long name over 64 KiB": bombs.gnu_longname_bomb,
    "1990 pax headers of 40 KiB": bombs.many_pax_headers, "3000 chained pax headers": bombs.chained_pax_headers,
    "manifest over 16 KiB": bombs.toml_bomb, "zip of 90000 entries": bombs.zip_many_entries}


def _dup_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("parterre-bot.toml", GOOD_TOML), ("bot.py", b"print(1)"), ("./bot.py", b"evil")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(kind: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("parterre-bot.toml", GOOD_TOML)
        if kind == "zip bomb":
            zf.writestr("big.bin", b"\0" * (sub.MAX_UNPACKED_BYTES + 1))
        elif kind == "zip file and folder":
            zf.writestr("x", b"1")
            zf.writestr("x/y", b"2")
        elif kind == "zip duplicate path":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # zipfile warns "Duplicate name": an attacker ignores it
                zf.writestr("bot.py", b"print(1)")
                zf.writestr("bot.py", b"evil")
        else:
            info = zipfile.ZipInfo("bot.py")
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, "/etc/shadow")
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archive_is_refused_with_its_reason(client: TestClient, pool: Any, case: str,
                                                   attacker: tuple[dict[str, str], int]) -> None:
    headers, bot_id = attacker
    data, reason = HOSTILE[case]
    if data is None:
        data = _dup_tar() if case == "duplicate path" else BOMBS[case]() if case in BOMBS else _zip(case)
    r = upload(client, headers, bot_id, data)
    assert r.status_code == 400, r.text
    assert reason in r.json()["detail"], r.json()
    assert sub.list_versions(pool, bot_id) == []  # nothing stored


def test_oversized_archive_is_413_and_not_read(client: TestClient, attacker: tuple[dict[str, str], int]) -> None:
    headers, bot_id = attacker
    r = upload(client, headers, bot_id, b"\x1f\x8b" + os.urandom(sub.MAX_ARCHIVE_BYTES))
    assert r.status_code == 413


def test_only_the_owner_uploads_and_sees_the_log(client: TestClient, pool: Any) -> None:
    headers, bot_id = owner(client)
    other, _ = owner(client)
    assert upload(client, other, bot_id, python_bot()).status_code == 404
    assert upload(client, {}, bot_id, python_bot()).status_code == 401
    r = upload(client, headers, bot_id, python_bot())
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["number"] == 1 and body["status"] == "validating" and len(body["sha256"]) == 64
    import hashlib

    assert body["sha256"] == hashlib.sha256(python_bot()).hexdigest()
    public = client.get(f"/api/bots/{bot_id}/versions/1", headers=other).json()
    assert "log" not in public and "reason" not in public
    assert "log" in client.get(f"/api/bots/{bot_id}/versions/1", headers=headers).json()


def test_versions_are_immutable(client: TestClient, pool: Any) -> None:
    import psycopg

    headers, bot_id = owner(client)
    vid = upload(client, headers, bot_id, python_bot()).json()["id"]
    with pool.connection() as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute("UPDATE hosted_versions SET archive = 'x' WHERE id = %s", (vid,))


def _unpack_dirs(base: Path) -> list[str]:
    return sorted(p.name for p in base.glob(".unpack-*"))


def test_a_version_that_cannot_be_unpacked_is_rejected_and_leaves_nothing(client: TestClient, pool: Any,
                                                                         cfg: dict[str, Any]) -> None:
    """Attack: archives stored before the checks that now refuse them at upload (a 300-byte file name:
    ENAMETOOLONG on the disk; a file that is also a folder), written straight to the table. Before: the
    exception escaped process_version, the version stayed ``validating`` (claimed again every lease) and a
    partial ``.unpack-*`` stayed each time. The worker applies the upload's checks again before unpacking."""
    import hashlib

    from psycopg.types.json import Jsonb

    headers, bot_id = owner(client)
    long_name = targz({"parterre-bot.toml": GOOD_TOML, "bot.py": b"print(1)", "n" * 300: b"x"})
    assert upload(client, headers, bot_id, long_name).status_code == 400
    for number, (data, reason) in enumerate(((long_name, "a name of 300 bytes"),
                                             (HOSTILE["file and folder"][0], "is a file and also the folder")),
                                            start=98):
        assert data is not None
        with pool.connection() as conn:
            vid = conn.execute("INSERT INTO hosted_versions (bot_id, number, sha256, size, archive, manifest) "
                               "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                               (bot_id, number, hashlib.sha256(data).hexdigest(), len(data), data,
                                Jsonb({"runtime": "python3.11", "command": ["python3.11", "bot.py"],
                                       "protocol": "stdio", "games": []}))).fetchone()[0]
        assert hosted.process_version(pool, vid, cfg) == "rejected"
        v = sub.get_version(pool, vid)
        assert v is not None and v.status == "rejected" and reason in v.reason, v
        assert _unpack_dirs(cfg["dir"]) == [] and not (cfg["dir"] / v.sha256).exists()


def test_one_owner_cannot_fill_the_validation_queue(client: TestClient, pool: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sub.MAX_PENDING_ENV, "3")
    headers, bot_id = owner(client)
    second = client.post("/api/bots", json={"name": f"hb{next(_n)}", "games": ["floriferous"]}, headers=headers)
    assert second.status_code == 201, second.text
    ids = [upload(client, headers, b, python_bot(0.0, f"q{i}")).json()["id"]
           for i, b in enumerate((bot_id, bot_id, second.json()["id"]))]
    for b in (bot_id, second.json()["id"]):  # the cap is the account's, over all its bots
        r = upload(client, headers, b, python_bot(0.0, "one too many"))
        assert r.status_code == 429 and "at most 3" in r.json()["detail"], r.text
    assert len(sub.list_versions(pool, bot_id)) == 2
    other, other_bot = owner(client)
    assert upload(client, other, other_bot, python_bot()).status_code == 201  # others are not held up
    sub.set_verdict(pool, ids[0], "rejected", reason="test")
    assert upload(client, headers, bot_id, python_bot(0.0, "after")).status_code == 201


ENV_DUMP = r"""
import json, os, sys
with open(sys.argv[1], "w") as fh:
    json.dump(dict(os.environ), fh)
"""


def test_validation_games_run_without_the_workers_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack: a program run by the validation's ``workers.hosting.head_to_head`` (not sandboxed here, so it reads
    everything it inherits) looks for the worker's secrets. Oracle: the environment the program itself saw."""
    monkeypatch.setenv("PARTERRE_HOSTED_TOKEN_SECRET", "s" * 40)
    monkeypatch.setenv("PARTERRE_DATABASE_URL", "postgresql://parterre:hunter2@db/parterre")
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", "service-secret")
    monkeypatch.setenv("PARTERRE_HOSTED_DIR", str(tmp_path))  # the worker's setting: passed on
    script, dump = tmp_path / "dump.py", tmp_path / "env.json"
    script.write_text(ENV_DUMP)
    spec = "exec:" + json.dumps([sys.executable, str(script), str(dump)])
    deals = list(hosted.play_deals("floriferous(players=2)", spec, "builtin:greedy", run_seed="env", deals=1,
                                   deadline_ms=500))
    assert deals and any(f is not None for d in deals for f in d["faults"])  # it exited: a fault, as expected
    seen = json.loads(dump.read_text())
    leaked = sorted(k for k in seen if k in {"PARTERRE_HOSTED_TOKEN_SECRET", "PARTERRE_DATABASE_URL",
                                             "PARTERRE_SERVICE_TOKEN"} or "hunter2" in seen[k])
    assert leaked == [], leaked
    assert set(seen) <= {*hosted.CHILD_ENV, "PYTHONPATH", "PARTERRE_HOSTED_DIR", "PWD", "SHLVL", "_", "LC_CTYPE"}, \
        sorted(seen)
    assert seen["PARTERRE_HOSTED_DIR"] == str(tmp_path)


# -- validation and the regression test, on the real sandbox ------------------------------------------


def _decide(pool: Any, cfg: dict[str, Any], client: TestClient, headers: dict[str, str], bot_id: int,
            data: bytes) -> dict[str, Any]:
    r = upload(client, headers, bot_id, data)
    assert r.status_code == 201, r.text
    hosted.process_version(pool, r.json()["id"], cfg)
    assert no_sandbox_left()
    return dict(client.get(f"/api/bots/{bot_id}/versions/{r.json()['number']}", headers=headers).json())


@needs_sandbox
def test_python_node_and_static_bots_are_validated(client: TestClient, pool: Any, cfg: dict[str, Any],
                                                    tmp_path: Path) -> None:
    headers, bot_id = owner(client)
    v = _decide(pool, cfg, client, headers, bot_id, python_bot())
    assert v["status"] == "active", (v["reason"], v["log"][-2000:])
    assert len(v["validation"]["games"]) == 2 and all(g["fault"] is None for g in v["validation"]["games"])

    headers, bot_id = owner(client)
    node = targz({"parterre-bot.toml": manifest("node", ["node", "random_bot.js"], ["floriferous"]),
                  "random_bot.js": (BOTS / "random_bot.js").read_bytes()})
    v = _decide(pool, cfg, client, headers, bot_id, node)
    assert v["status"] == "active", (v["reason"], v["log"][-2000:])

    exe = tmp_path / "bot"
    subprocess.run(["gcc", "-static", "-O2", "-o", str(exe), str(BOTS / "random_bot.c")], check=True)
    static = targz({"parterre-bot.toml": manifest("static", ["./bot"], ["floriferous"]),
                    "bot": (exe.read_bytes(), 0o644)})  # the executable bit is set by the platform
    headers, bot_id = owner(client)
    v = _decide(pool, cfg, client, headers, bot_id, static)
    assert v["status"] == "active", (v["reason"], v["log"][-2000:])


@needs_sandbox
def test_a_crashing_version_is_rejected_and_the_previous_stays_active(client: TestClient, pool: Any,
                                                                       cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    assert _decide(pool, cfg, client, headers, bot_id, python_bot())["status"] == "active"
    crash = targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "bot.py"], ["floriferous"]),
                   "bot.py": b"import sys\nsys.stdin.readline()\nprint('I give up', file=sys.stderr)\nraise "
                             b"SystemExit(3)\n"})
    v = _decide(pool, cfg, client, headers, bot_id, crash)
    assert v["status"] == "rejected" and v["reason"].startswith("crash (exit status 3): in a validation game"), v
    assert "I give up" in v["log"]
    # the first game of a deal seats the uploaded version in seat 0; it left at its first line, lost that game
    (first,) = v["validation"]["games"]
    assert (first["seat"], first["rank"], first["ranks"], first["fault"]["side"]) == (0, 2, [2, 1], "a"), first
    # the type: ignore below: Optional: the bot has an active version here
    assert sub.active_version(pool, bot_id).number == 1  # type: ignore[union-attr]
    illegal = targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "bot.py"], ["floriferous"]),
                     "bot.py": b"import sys\nfor line in sys.stdin:\n    print(9999, flush=True)\n"})
    v = _decide(pool, cfg, client, headers, bot_id, illegal)
    assert v["status"] == "rejected" and v["reason"].startswith("illegal_action"), v
    sleepy = targz({"parterre-bot.toml": manifest("python3.11", ["python3.11", "bot.py"], ["floriferous"]),
                    "bot.py": b"import time\ntime.sleep(3600)\n"})
    cfg_fast = {**cfg, "deadline_ms": 300}
    r = upload(client, headers, bot_id, sleepy)
    hosted.process_version(pool, r.json()["id"], {**cfg_fast})
    assert no_sandbox_left()
    v = client.get(f"/api/bots/{bot_id}/versions/{r.json()['number']}", headers=headers).json()
    assert v["status"] == "rejected" and v["reason"].startswith("timeout"), v


@needs_sandbox
def test_regression_test_flags_a_weaker_version_and_passes_an_identical_one(
        client: TestClient, pool: Any, cfg: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    headers, bot_id = owner(client)
    assert _decide(pool, cfg, client, headers, bot_id, python_bot())["status"] == "active"
    weak = _decide(pool, cfg, client, headers, bot_id, python_bot(0.3, "weak"))
    reg = weak["regression"]
    assert reg["verdict"] == "regression" and weak["status"] == "failed_test", weak
    assert reg["llr"] <= reg["lower"] and reg["elo_high"] < 50
    # the type: ignore below: Optional: the bot has an active version here
    assert sub.active_version(pool, bot_id).number == 1  # type: ignore[union-attr]
    same = _decide(pool, cfg, client, headers, bot_id, python_bot(0.0, "copy"))
    assert same["regression"]["verdict"] in ("pass", "undecided") and same["status"] == "active", same
    # the type: ignore below: Optional: the bot has an active version here
    assert sub.active_version(pool, bot_id).number == 3  # type: ignore[union-attr]
    with capsys.disabled():
        print(f"\nweaker: {reg['games']} games, LLR {reg['llr']}, Elo {reg['elo']} [{reg['elo_low']}, "
              f"{reg['elo_high']}]; identical: {same['regression']['games']} games, LLR "
              f"{same['regression']['llr']}, verdict {same['regression']['verdict']}")


@needs_sandbox
def test_owner_may_let_a_failed_test_through(client: TestClient, pool: Any, cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    assert _decide(pool, cfg, client, headers, bot_id, python_bot())["status"] == "active"
    r = client.put(f"/api/bots/{bot_id}/hosted-settings", json={"block_on_regression": False}, headers=headers)
    assert r.status_code == 200 and r.json()["block_on_regression"] is False
    weak = _decide(pool, cfg, client, headers, bot_id, python_bot(0.3, "weak2"))
    assert weak["regression"]["verdict"] == "regression" and weak["status"] == "active", weak


def test_cli_upload_and_wait_exit_codes(app: Any, pool: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``parterre bot upload`` over real HTTP (uvicorn in a thread): packs a folder, prints the sha256, and
    ``--wait`` exits 2 for a rejected version (decided here as a worker would, while the CLI polls)."""
    import hashlib
    import socket
    import threading
    import time

    import uvicorn

    from parterre.commands import upload as cli_upload

    headers, bot_id = owner(TestClient(app, client=("192.0.2.77", 50000)))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        folder = tmp_path / "bot"
        folder.mkdir()
        (folder / "parterre-bot.toml").write_bytes(manifest("python3.11", ["python3.11", "bot.py"]))
        (folder / "bot.py").write_text("print('hi')\n")
        token = headers["Authorization"].split()[1]
        ns = type("NS", (), {"token": token, "url": f"http://127.0.0.1:{port}", "bot_id": bot_id,
                             "path": str(folder), "wait": False, "timeout": 30.0, "poll": 0.2})()
        assert cli_upload.cmd_bot_upload(ns) == 0
        out = capsys.readouterr().out
        version = sub.version_by_number(pool, bot_id, 1)
        assert version is not None and version.sha256 in out
        assert version.sha256 == hashlib.sha256(sub.archive_bytes(pool, version.id)).hexdigest()
        sub.set_verdict(pool, version.id, "rejected", reason="crash: in a validation game")
        ns.path, ns.wait = str(folder / "bot.py"), True  # not an archive: refused -> 3
        assert cli_upload.cmd_bot_upload(ns) == 3
        assert "not a .tar.gz or .zip" in capsys.readouterr().out
        ns.path = str(folder)
        games = [{"game": "floriferous", "seed": "ab" * 32, "ranks": [1, 2], "seat": 0, "rank": 1, "fault": None},
                 {"game": "floriferous", "seed": "ab" * 32, "ranks": [1, 2], "seat": 1, "rank": 2,
                  "fault": {"side": "a", "verdict": "timeout"}}]
        log = "".join(f"line {i}\n" for i in range(1, 31))
        done = threading.Timer(0.5, lambda: sub.set_verdict(
            # the type: ignore below: Optional: v2 is the upload below
            pool, sub.version_by_number(pool, bot_id, 2).id, "rejected", reason="timeout: x",  # type: ignore[union-attr]
            log=log, validation={"games": games}))
        done.start()
        assert cli_upload.cmd_bot_upload(ns) == 2
        out = capsys.readouterr().out
        assert "rejected: timeout: x" in out
        # each validation game names the version's seat from 1, and the refused version's stderr tail follows
        assert "floriferous (seed abababababab): your version in seat 1 of 2, rank 1\n" in out
        assert "your version in seat 2 of 2, rank 2; your version: timeout\n" in out
        assert "the version's stderr, last 20 of 30 lines:\n  line 11\n" in out and out.rstrip().endswith("line 30")
        assert "  line 10\n" not in out
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_web_form_upload_and_version_page(client: TestClient, pool: Any) -> None:
    """The owner's pages: upload through the form (CSRF), the refusal's reason, the version page; another
    account gets 404."""
    import re

    headers, bot_id = owner(client)
    name = client.get("/api/account", headers=headers).json()["username"]

    def csrf(path: str) -> str:
        m = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
        assert m, path
        return m.group(1)

    r = client.post("/login", data={"csrf": csrf("/login"), "username": name, "password": PASSWORD},
                    follow_redirects=False)
    assert r.status_code == 303
    page = f"/my/bots/{bot_id}/hosted"
    assert client.post(page, files={"archive": ("bot.tar.gz", python_bot())}).status_code in (400, 403)  # no CSRF
    r = client.post(page, data={"csrf": csrf(page)}, files={"archive": ("bot.tar.gz", python_bot())})
    assert r.status_code == 200 and "version 1 uploaded" in r.text, r.text[-500:]
    r = client.post(page, data={"csrf": csrf(page)}, files={"archive": ("x.zip", b"nope")})
    assert r.status_code == 400 and "not a .tar.gz or .zip" in r.text
    v = sub.version_by_number(pool, bot_id, 1)
    assert v is not None
    sub.set_verdict(pool, v.id, "testing")
    sub.set_regression(pool, v.id, {"games": 40, "deals": 20, "llr": -1.5, "lower": -2.94, "upper": 2.94,
                                    "elo": -30.0, "elo_low": -80.0, "elo_high": 20.0, "elo0": -25, "elo1": 0,
                                    "game": "floriferous(players=2)", "baseline": 1})
    text = client.get(f"{page}/1").text
    assert "testing" in text and "-30.0 [-80.0, 20.0]" in text and "-1.5" in text and 'http-equiv="refresh"' in text
    other = TestClient(client.app, client=("192.0.2.99", 50000))
    oh, _ = owner(other)
    oname = other.get("/api/account", headers=oh).json()["username"]
    m = re.search(r'name="csrf" value="([^"]+)"', other.get("/login").text)
    assert m
    other.post("/login", data={"csrf": m.group(1), "username": oname, "password": PASSWORD})
    assert other.get(f"{page}/1").status_code == 404
    assert other.get(page).status_code == 404
