"""Hosted gRPC bots (docs/hosted.md "gRPC bots"): uploaded, validated and tested through a referee.

Archives go through the API; :func:`workers.hosting.validation.process_version` decides them as a worker does, with
the real sandbox, the per-run relayed socket, and their games played as trials on a referee
(``workers.hosting.trial_games``; here a ``ThreadedReferee`` the worker's settings name).
Oracles: the referee's verdicts (an illegal answer), the bot's own report of what it could reach
(``hosted_bots/grpc_bot.py probe``, printed to the log its owner gets), listeners the test opens itself.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_hosted
from fixtures.toolchains import missing
from fixtures.trial_referee import cluster_referee
from test_hosted import BOTS, manifest, needs_sandbox, no_sandbox_left, owner, python_bot, targz, upload

from games.replay import verify_replay
from ladder import submissions as sub
from referee.testing import ThreadedReferee
from workers.hosting import trial_games
from workers.hosting import validation as hosted

pytestmark = needs_sandbox
# test_hosted's database, app and settings fixtures, shared rather than copied
app, cfg, client = test_hosted.app, test_hosted.cfg, test_hosted.client
pool = test_hosted.pool
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def referee(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedReferee]:
    """The cluster's referee the games are played on as trials (its control endpoint on a port of its own, as
    deployed), found by the worker's settings as a rated match's."""
    yield from cluster_referee(monkeypatch)


def grpc_manifest(runtime: str, command: list[str]) -> bytes:
    return manifest(runtime, command, ["floriferous"]).replace(b'protocol = "stdio"', b'protocol = "grpc"')


def grpc_python_bot(*args: str) -> bytes:
    return targz({"parterre-bot.toml": grpc_manifest("python3.11", ["python3.11", "grpc_bot.py", *args]),
                  "grpc_bot.py": (BOTS / "grpc_bot.py").read_bytes()})


def decide(pool: Any, cfg: dict[str, Any], client: Any, headers: dict[str, str], bot_id: int,
           data: bytes) -> dict[str, Any]:
    r = upload(client, headers, bot_id, data)
    assert r.status_code == 201, r.text
    hosted.process_version(pool, r.json()["id"], cfg)
    assert no_sandbox_left()
    # the run's folder (its sockets and logs) is gone with it
    assert not list((cfg["dir"] / "run").glob("games-*")) and not list((cfg["dir"] / "run").glob("grpc-*"))
    return dict(client.get(f"/api/bots/{bot_id}/versions/{r.json()['number']}", headers=headers).json())


@pytest.fixture
def listeners(cfg: dict[str, Any]) -> Iterator[tuple[int, str]]:
    """A TCP listener on the host's loopback and another run's relay socket, both open to anyone."""
    tcp = socket.create_server(("127.0.0.1", 0))
    other = cfg["dir"] / "run" / "m99-a1-b99-other"
    other.mkdir(parents=True)
    other.chmod(0o755)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(other / "referee.sock"))
    unix.listen()
    os.chmod(other / "referee.sock", 0o777)
    yield tcp.getsockname()[1], str(other / "referee.sock")
    tcp.close()
    unix.close()


def test_a_python_grpc_bot_is_validated_and_reaches_nothing_but_the_referee(
        client: Any, pool: Any, cfg: dict[str, Any], listeners: tuple[int, str]) -> None:
    port, other_socket = listeners
    targets = [f"127.0.0.1:{port}", "127.0.0.1:5432", "127.0.0.1:6379", "10.0.0.1:80", other_socket,
               "/var/run/postgresql/.s.PGSQL.5432"]
    headers, bot_id = owner(client)
    v = decide(pool, cfg, client, headers, bot_id, grpc_python_bot("probe", *targets))
    assert v["status"] == "active", (v["reason"], v["log"][-3000:])
    assert len(v["validation"]["games"]) == 2 and all(g["fault"] is None for g in v["validation"]["games"])
    log = v["log"]
    assert "PROBE done" in log, log[-3000:]
    assert "CONNECTED" not in log, log  # no TCP, no other Unix socket: not even a listener anyone may use
    for target in targets:
        assert f"PROBE {'unix' if target.startswith('/') else 'tcp'} {target} refused" in log, (target, log)
    assert "PROBE control RunMatch UNIMPLEMENTED" in log and "PROBE health UNIMPLEMENTED" in log, log
    assert "PROBE run-parterre ['referee.sock']" in log  # its own socket only
    assert "PROBE token 'hosted' address unix:///run/parterre/referee.sock" in log  # a placeholder token
    assert "hosted-a-" not in log  # the relay's credential for the run never reached it

    # A stdio version after a gRPC one: the regression test plays one against the other through the referee.
    cfg_short = {**cfg, "max_games": 12}
    r = upload(client, headers, bot_id, python_bot())
    assert hosted.process_version(pool, r.json()["id"], cfg_short) == "active"
    v2 = client.get(f"/api/bots/{bot_id}/versions/2", headers=headers).json()
    assert v2["regression"]["games"] == 12 and v2["regression"]["faults"] == 0, v2["regression"]
    assert no_sandbox_left()


def test_a_grpc_bot_that_answers_illegally_is_rejected_with_the_reason(client: Any, pool: Any,
                                                                        cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    assert decide(pool, cfg, client, headers, bot_id, grpc_python_bot("greedy"))["status"] == "active"
    v = decide(pool, cfg, client, headers, bot_id, grpc_python_bot("illegal"))
    assert v["status"] == "rejected", v
    assert v["reason"].startswith("illegal_action: in a validation game of floriferous"), v["reason"]
    # its games are kept with its seat and the referee's replay, which re-simulates (the owner's version page)
    games = client.get(f"/api/bots/{bot_id}/versions/2/games", headers=headers).json()["games"]
    assert [(g["kind"], g["seat"]) for g in games] == [("validation", 0), ("validation", 1)][:len(games)], games
    faulted = [g for g in games if g["fault"] is not None]
    assert faulted and faulted[0]["fault"]["side"] == "a" and faulted[0]["ranks"][faulted[0]["seat"]] == 2
    replay = client.get(faulted[0]["replay"], headers=headers).json()
    assert verify_replay(replay).ok and replay["seed"] == faulted[0]["seed"]
    assert replay["players"][faulted[0]["seat"]]["name"].endswith("(version 2)"), replay["players"]
    # the type: ignore below: Optional: the bot has an active version here
    assert sub.active_version(pool, bot_id).number == 1  # type: ignore[union-attr]
    crash = targz({"parterre-bot.toml": grpc_manifest("python3.11", ["python3.11", "bot.py"]),
                   "bot.py": b"import sys\nprint('no referee for me', file=sys.stderr)\nraise SystemExit(3)\n"})
    v = decide(pool, cfg, client, headers, bot_id, crash)
    assert v["status"] == "rejected" and v["reason"].startswith("no_show: in a validation game"), v
    assert "no referee for me" in v["log"]
    # the type: ignore below: Optional: the bot has an active version here
    assert sub.active_version(pool, bot_id).number == 1  # type: ignore[union-attr]
    # An honest gRPC resubmission: regression-tested against the active gRPC version, both relayed, then active.
    r = upload(client, headers, bot_id, grpc_python_bot("greedy", "again"))
    assert hosted.process_version(pool, r.json()["id"], {**cfg, "max_games": 12}) == "active"
    reg = client.get(f"/api/bots/{bot_id}/versions/4", headers=headers).json()["regression"]
    assert reg["games"] == 12 and reg["faults"] == 0 and reg["baseline"] == 1, reg
    assert no_sandbox_left()


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bots/go`` built as a static executable (``CGO_ENABLED=0``)."""
    if shutil.which("go") is None or shutil.which("protoc") is None:
        missing("needs Go and protoc (bots/install-toolchains.sh)")
    build = tmp_path_factory.mktemp("go")
    run = subprocess.run(["make", "-C", str(ROOT / "bots" / "go"), f"BUILD={build}"], capture_output=True,
                         text=True, env={**os.environ, "CGO_ENABLED": "0"}, timeout=900)
    if run.returncode != 0:
        missing(f"the Go bot does not build here: {run.stderr[-500:]}")
    return build / "parterre-go-bot"


def test_a_static_go_grpc_bot_is_validated(client: Any, pool: Any, cfg: dict[str, Any], go_bot: Path) -> None:
    headers, bot_id = owner(client)
    archive = targz({"parterre-bot.toml": grpc_manifest("static", ["./bot"]), "bot": (go_bot.read_bytes(), 0o644)})
    v = decide(pool, cfg, client, headers, bot_id, archive)
    assert v["status"] == "active", (v["reason"], v["log"][-3000:])
    assert "go-bot: match" in v["log"]  # it played through the referee (its own log lines)


def node_grpc_archive() -> bytes:
    """``bots/node`` (the Node.js gRPC bot) as an archive: its code, its installed ``node_modules`` (files only:
    links are refused at upload) and the bot-facing ``.proto`` files it loads at run time."""
    node_dir = ROOT / "bots" / "node"
    if shutil.which("node") is None or not (node_dir / "node_modules" / "@grpc" / "grpc-js").is_dir():
        missing("needs node and bots/node/node_modules (bots/install-toolchains.sh: npm ci)")
    files: dict[str, bytes | tuple[bytes, int]] = {
        "parterre-bot.toml": grpc_manifest("node", ["node", "bot.js", "--proto-root", "/bot/proto"])}
    for name in ("bot.js", "strategy.js", "package.json"):
        files[name] = (node_dir / name).read_bytes()
    for path in sorted((node_dir / "node_modules").rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[str(path.relative_to(node_dir))] = path.read_bytes()
    for path in sorted((ROOT / "proto" / "parterre" / "v1").glob("*.proto")):
        if path.name != "control.proto":  # the workers' service: not the bot's business
            files[f"proto/parterre/v1/{path.name}"] = path.read_bytes()
    return targz(files)


def test_a_node_grpc_bot_is_validated(client: Any, pool: Any, cfg: dict[str, Any]) -> None:
    headers, bot_id = owner(client)
    v = decide(pool, cfg, client, headers, bot_id, node_grpc_archive())
    assert v["status"] == "active", (v["reason"], v["log"][-3000:])
    assert "node-bot: match" in v["log"]  # it played through the referee (its own log lines)


def _pids_with(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (read from /proc, not from the code under test)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_run_closed_after_a_no_show_leaves_no_run_folder_and_no_keeper(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The "bot" is a plain sleeper that never connects: its games are no-shows judged by the referee (its fault),
    and closing the deals' generator stops the keeper and removes the run's folder with its sockets."""
    import signal

    monkeypatch.setattr(trial_games, "CONNECT_TIMEOUT_S", 1.0)
    monkeypatch.setattr(trial_games, "NO_SHOW_MS", 2000)  # room for the house bot's reconnect under load
    marker = f"sleeper-{os.getpid()}"
    side = f'grpc:["python3", "-c", "import time; time.sleep(60)", "{marker}"]'
    deals = hosted.play_deals("floriferous(players=2)", side, "builtin:greedy", run_seed="closed", deals=3,
                              deadline_ms=200, hosted_dir=tmp_path)
    try:
        deal = next(deals)
        assert deal["faults"] == [{"side": "a", "verdict": "no_show"}] * 2, deal
        assert deal["ranks"] == [[2, 1], [1, 2]]
        assert list((tmp_path / "run").glob("games-*/grpc-a/referee.sock")) and _pids_with(marker)
    finally:
        deals.close()
        for pid in _pids_with(marker):
            if pid != os.getpid():
                os.kill(pid, signal.SIGKILL)
    assert [p for p in _pids_with(marker) if p != os.getpid()] == []
    assert list((tmp_path / "run").iterdir()) == []  # no games-* folder, no socket


def test_no_referee_reachable_leaves_the_version_waiting_not_rejected(
        client: Any, pool: Any, cfg: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        referee: ThreadedReferee) -> None:
    """No referee answers (a closed port): the gRPC version is not judged. It stays ``validating``, given back
    with a lease some seconds ahead (taken again later), no game is kept, nothing is left running; once a
    referee answers, it is validated."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", dead)
    monkeypatch.setenv("PARTERRE_HOSTED_REFEREE_ADDRESS", dead)
    headers, bot_id = owner(client)
    r = upload(client, headers, bot_id, grpc_python_bot("greedy"))
    assert r.status_code == 201, r.text
    version_id = r.json()["id"]
    assert hosted.process_version(pool, version_id, cfg) == "waiting_for_referee"
    assert no_sandbox_left()
    assert not list((cfg["dir"] / "run").glob("games-*"))
    with pool.connection() as conn:
        row = conn.execute("SELECT status, lease_until > now() + interval '4 seconds', "
                           "(SELECT count(*) FROM hosted_games WHERE version_id = %s) "
                           "FROM hosted_versions WHERE id = %s", (version_id, version_id)).fetchone()
    assert row == ("validating", True, 0), row
    assert sub.claim_next(pool, "another-worker") != version_id  # not before its lease runs out
    monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", referee.control_address)  # the referee is back
    monkeypatch.setenv("PARTERRE_HOSTED_REFEREE_ADDRESS", referee.address)
    with pool.connection() as conn:
        conn.execute("UPDATE hosted_versions SET lease_until = now() WHERE id = %s", (version_id,))
    assert hosted.process_version(pool, version_id, cfg) == "active"
