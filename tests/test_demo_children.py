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
    children = Children(tmp_path / "logs", {"PARTERRE_HOME": str(tmp_path)})
    secret = "tok-" + "s3cr3t" * 4
    children.start("bot-random", "bot", "run", "random", "--name", "random", env={"PARTERRE_BOT_TOKEN": secret})
    children.start("worker", "worker")
    (argv, env), (_, worker_env) = started
    assert argv[-5:] == ["bot", "run", "random", "--name", "random"] and not any(secret in a for a in argv)
    assert env == {"PARTERRE_HOME": str(tmp_path), "PARTERRE_BOT_TOKEN": secret}
    assert worker_env == {"PARTERRE_HOME": str(tmp_path)}  # one child's secret is not another's

