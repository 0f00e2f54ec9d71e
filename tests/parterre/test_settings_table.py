"""The components' settings: one typed object each, documented in one generated table.

Oracles: docs/settings.md as committed (the table must be what ``python -m parterre.settings
--markdown`` prints, in a real process), the defaults the README's settings table states, and
values an operator could mistype.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parterre.settings import CliSettings, CommonSettings, RefereeServerSettings
from proto.env_settings import EnvSettings, SettingsError
from referee.settings import LiveSettings
from web.settings import WebSettings
from workers.settings import WorkerSettings

ROOT = Path(__file__).resolve().parents[2]
CLASSES: list[type[EnvSettings]] = [CommonSettings, RefereeServerSettings, LiveSettings, WorkerSettings, WebSettings,
                                     CliSettings]


def test_the_committed_table_is_the_generated_one() -> None:
    out = subprocess.run([sys.executable, "-m", "parterre.settings", "--markdown"], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    doc = (ROOT / "docs" / "settings.md").read_text()
    start, end = "<!-- settings-table:start -->\n", "<!-- settings-table:end -->"
    committed = doc[doc.index(start) + len(start):doc.index(end)]
    assert committed == out, "docs/settings.md is stale: python -m parterre.settings --markdown"


def test_defaults_are_the_documented_ones() -> None:
    """The defaults the README's settings table states."""
    w, web = WorkerSettings.load({}), WebSettings.load({})
    assert (w.match_attempts, w.referee_wait_s, w.referee_backoff_s, w.referee_backoff_max_s) == (3, 3600, 1, 15)
    assert w.worker_reap_period_s == 15 and w.referees == ["127.0.0.1:50051"]
    assert WorkerSettings.load({"PARTERRE_REAP_PERIOD_S": "20"}).worker_reap_period_s == 20
    assert (web.signup, web.max_bots_per_account, web.web_max_connections, web.live_delay_s) == ("open", 20, 1000, 30)
    assert web.secure_cookies is False and WebSettings.load({"PARTERRE_SECURE_COOKIES": "1"}).secure_cookies


def _typed_fields() -> list[tuple[type[EnvSettings], str]]:
    out = []
    for cls in CLASSES:
        for field in cls.model_fields.values():
            if field.annotation not in (str, str | None) and field.alias:
                out.append((cls, field.alias))
    return out


@pytest.mark.parametrize(("cls", "name"), _typed_fields(), ids=lambda x: getattr(x, "__name__", x))
def test_a_mistyped_value_is_an_error_naming_the_variable(cls: type[EnvSettings], name: str) -> None:
    with pytest.raises(SettingsError, match=f"^{name}='-lots'"):
        cls.load({name: "-lots"})


def test_out_of_range_values_are_refused() -> None:
    for name in ("PARTERRE_MATCH_ATTEMPTS", "PARTERRE_LEASE_S", "PARTERRE_LADDER_MAX_PENDING"):
        with pytest.raises(SettingsError, match=name):
            WorkerSettings.load({name: "0"})
    with pytest.raises(SettingsError, match="PARTERRE_SIGNUP"):
        WebSettings.load({"PARTERRE_SIGNUP": "sometimes"})
    with pytest.raises(SettingsError, match="PARTERRE_LADDER_TIME_CONTROL"):
        WorkerSettings.load({"PARTERRE_LADDER_TIME_CONTROL": "1:2:3"})


def test_read_once_per_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same environment gives the same object; a changed variable is read again (a test's setenv)."""
    monkeypatch.setenv("PARTERRE_LEASE_S", "7")
    first = WorkerSettings.load()
    assert WorkerSettings.load() is first and first.lease_s == 7
    monkeypatch.setenv("PARTERRE_LEASE_S", "8")
    assert WorkerSettings.load().lease_s == 8


def test_empty_means_unset_except_where_it_means_none() -> None:
    assert WorkerSettings.load({"PARTERRE_LEASE_S": ""}).lease_s == 60
    assert WorkerSettings.load({"PARTERRE_LADDER_GAMES": ""}).ladder_games == ""
    assert WorkerSettings.load({"PARTERRE_REFEREE_ADDRESS": ""}).referees == []
