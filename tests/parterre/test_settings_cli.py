"""Settings and command-line bad input: clear errors, nothing written."""

from __future__ import annotations

import subprocess
import sys

import pytest

from parterre import settings
from parterre.cli import main


def test_defaults_use_embedded(tmp_path):
    st = settings.load({"PARTERRE_HOME": str(tmp_path)})
    assert st.database_url is None and st.redis_url is None
    assert st.home == tmp_path
    assert st.referee_address == "127.0.0.1:50051"
    # the service token is generated once and then stable
    assert st.service_token == settings.load({"PARTERRE_HOME": str(tmp_path)}).service_token
    assert (tmp_path / "service-token").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "env, needle",
    [
        ({"PARTERRE_DATABASE_URL": "mysql://x"}, "PARTERRE_DATABASE_URL"),
        ({"PARTERRE_REDIS_URL": "http://x"}, "PARTERRE_REDIS_URL"),
        ({"PARTERRE_REFEREE_ADDRESS": "nohostport"}, "PARTERRE_REFEREE_ADDRESS"),
        ({"PARTERRE_REFEREE_ADDRESS": "host:99999"}, "PARTERRE_REFEREE_ADDRESS"),
        ({"PARTERRE_MATCH_ATTEMPTS": "zero"}, "PARTERRE_MATCH_ATTEMPTS"),
        ({"PARTERRE_MATCH_ATTEMPTS": "0"}, "PARTERRE_MATCH_ATTEMPTS"),
    ],
)
def test_bad_settings_are_named(tmp_path, env, needle):
    with pytest.raises(settings.SettingsError, match=needle):
        settings.load({"PARTERRE_HOME": str(tmp_path), **env})


def test_cli_bad_setting_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    monkeypatch.setenv("PARTERRE_DATABASE_URL", "mysql://nope")
    assert main(["leaderboard", "floriferous"]) == 2
    assert "PARTERRE_DATABASE_URL" in capsys.readouterr().err


def test_cli_unknown_game_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    assert main(["leaderboard", "chess"]) == 2
    assert "unknown game 'chess'" in capsys.readouterr().err
    assert not (tmp_path / "pg").exists()  # nothing was started or written


def test_cli_missing_database_is_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PARTERRE_HOME", str(tmp_path))
    # a port where nothing listens
    monkeypatch.setenv("PARTERRE_DATABASE_URL", "postgresql://postgres@127.0.0.1:1/parterre")
    assert main(["leaderboard", "floriferous"]) == 2
    err = capsys.readouterr().err
    assert "127.0.0.1:1" in err and "Traceback" not in err


def test_cli_bad_time_control(tmp_path, monkeypatch, capsys):
    from parterre.commands.common import CliError, parse_time_control

    assert parse_time_control("200+50") == {"base_ms": 0, "increment_ms": 200, "cap_ms": 200, "margin_ms": 50}
    assert parse_time_control("60000:1000:5000:100")["base_ms"] == 60000
    for bad in ("fast", "1+2+3", "-5+1"):
        with pytest.raises(CliError):
            parse_time_control(bad)


def test_replay_verify_rejects_non_json(tmp_path, capsys):
    f = tmp_path / "r.json"
    f.write_text("{not json")
    assert main(["replay", "verify", str(f)]) == 2
    assert "is not JSON" in capsys.readouterr().err
    assert main(["replay", "verify", str(tmp_path / "missing.json")]) == 2


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "parterre.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "demo" in out.stdout


def test_a_home_keeps_its_secrets_private_and_stable(tmp_path):
    """`parterre up` gives its workers the hosted bots' token secret from the home (docs/hosted.md)."""
    import stat

    from parterre.settings import secret_for, service_token_for

    first = secret_for(tmp_path, "hosted-token-secret")
    assert secret_for(tmp_path, "hosted-token-secret") == first and len(first) >= 32
    assert stat.S_IMODE((tmp_path / "hosted-token-secret").stat().st_mode) == 0o600
    assert service_token_for(tmp_path) not in (first, "")


_RACE = """
import sys, time
from pathlib import Path
from parterre.settings import secret_for
start = float(sys.argv[2])
while time.time() < start:
    pass
print(secret_for(Path(sys.argv[1]), "service-token"))
"""


def test_processes_starting_at_once_agree_on_one_secret(tmp_path):
    """`parterre demo` starts its bots at once on one home: each used to create the secret file with
    O_EXCL after seeing none, and the losers died with FileExistsError (a demo bot exited with status 1
    in a `make test` run), or could read the file before the winner had written it."""
    import subprocess
    import sys
    import time

    for attempt in range(3):
        home = tmp_path / f"home{attempt}"
        start = time.time() + 1.0
        procs = [subprocess.Popen([sys.executable, "-c", _RACE, str(home), str(start)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
        outs = [p.communicate(timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err[-300:] for _, err in outs]
        secrets = {out.strip() for out, _ in outs}
        assert len(secrets) == 1 and len(secrets.pop()) >= 32
        assert (home / "service-token").read_text().strip() == outs[0][0].strip()
        assert sorted(p.name for p in home.iterdir()) == ["service-token"]  # no temporary file left
