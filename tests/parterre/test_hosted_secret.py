"""The hosted credentials' secret is one per home: `parterre up` and `parterre worker` agree."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ladder import submissions as sub
from parterre.settings import hosted_token_secret


def test_one_secret_per_home_kept_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PARTERRE_HOSTED_TOKEN_SECRET", raising=False)
    first = hosted_token_secret(tmp_path)
    assert hosted_token_secret(tmp_path) == first and len(first) >= sub.TOKEN_SECRET_MIN
    assert stat.S_IMODE((tmp_path / "hosted-token-secret").stat().st_mode) == 0o600
    assert hosted_token_secret(tmp_path / "other") != first
    monkeypatch.setenv("PARTERRE_HOSTED_TOKEN_SECRET", "s" * 40)
    assert hosted_token_secret(tmp_path) == "s" * 40


def test_a_read_only_home_means_no_secret_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The compose worker runs read-only with an empty variable: it must start (hosted bots then play
    no rated match), not die with PermissionError and restart in a loop."""
    import logging
    import os

    caplog.set_level(logging.WARNING, logger="parterre.settings")  # whatever level an earlier test left the root at
    monkeypatch.delenv("PARTERRE_HOSTED_TOKEN_SECRET", raising=False)
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o500)
    try:
        if os.access(home, os.W_OK):  # root ignores the mode: make the file's place a directory instead
            (home / "hosted-token-secret").mkdir()
        assert hosted_token_secret(home) == ""
    finally:
        home.chmod(0o700)
    assert "hosted bots play no rated match" in caplog.text


def test_the_worker_command_passes_it_to_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    database_url: str, redis_base_url: str) -> None:
    import os

    from parterre.commands import worker as worker_cmd
    from workers.app import app

    monkeypatch.delenv("PARTERRE_HOSTED_TOKEN_SECRET", raising=False)
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
    monkeypatch.setenv("PARTERRE_REDIS_URL", redis_base_url)
    seen: dict[str, str] = {}
    monkeypatch.setattr(app.conf, "broker_url", app.conf.broker_url)

    def fake_worker_main(argv: list[str]) -> None:
        seen.update(os.environ)

    monkeypatch.setattr(app, "worker_main", fake_worker_main)
    parser = __import__("parterre.cli", fromlist=["build_parser"]).build_parser()
    args = parser.parse_args(["worker"])
    monkeypatch.setattr(worker_cmd.common, "observe", lambda *a, **k: None)
    monkeypatch.setattr("parterre.logging.install_celery_hooks", lambda *a, **k: None)
    monkeypatch.setattr(os, "environ", os.environ.copy())  # cmd_worker writes the worker's environment
    assert worker_cmd.cmd_worker(args) == 0
    assert seen["PARTERRE_HOSTED_TOKEN_SECRET"] == (tmp_path / "hosted-token-secret").read_text().strip()
    assert seen["PARTERRE_REDIS_URL"]
