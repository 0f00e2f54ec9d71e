"""The demo's child processes get their secrets through the environment, never the command line
(which any local user reads with ``ps``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parterre import demo
from parterre.demo import Children


def test_a_childs_secret_is_in_its_environment_not_its_command_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], dict[str, str]]] = []

    class FakePopen:
        def __init__(self, argv: list[str], *, env: dict[str, str], **_: Any) -> None:
            started.append((argv, env))

    monkeypatch.setattr(demo.subprocess, "Popen", FakePopen)
    demo_env = {"PARTERRE_HOME": str(tmp_path), "PATH": "/usr/bin", "PARTERRE_REFEREE_ADDRESS": "127.0.0.1:1",
                "PARTERRE_DATABASE_URL": "postgresql://u:pw@db/x", "PARTERRE_REDIS_URL": "redis://:pw@r:6379/0",
                "PARTERRE_SERVICE_TOKEN": "svc-" + "x" * 40}
    children = Children(tmp_path / "logs", demo_env)
    secret = "tok-" + "s3cr3t" * 4
    children.start("bot-random", "bot", "run", "random", "--name", "random", env={"PARTERRE_BOT_TOKEN": secret},
                   inherit=demo.BOT_ENV)
    children.start("worker", "worker")
    (argv, env), (_, worker_env) = started
    assert argv[-5:] == ["bot", "run", "random", "--name", "random"] and not any(secret in a for a in argv)
    # a bot gets its own token and what finds Python and the referee: no URL or service token
    assert env == {"PATH": "/usr/bin", "PARTERRE_REFEREE_ADDRESS": "127.0.0.1:1", "PARTERRE_BOT_TOKEN": secret}
    assert worker_env == demo_env  # one child's secret is not another's

