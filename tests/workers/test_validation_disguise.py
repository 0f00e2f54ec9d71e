"""A bot under validation cannot tell its games from rated ones by what it is told (docs/hosted.md).

The bot is a real stdio child that writes every line it receives to a file,
played by ``python -m workers.hosting.head_to_head`` (what the workers run for validation
and the regression test). Oracle: the ``match_started`` example of a rated
match in docs/bots.md (its keys and value types), and the identities and
deadline passed to the runner.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from workers.hosting.head_to_head import identities, main

ROOT = Path(__file__).resolve().parents[2]


def documented_match_started() -> dict[str, Any]:
    """The rated match's ``match_started`` as docs/bots.md shows it."""
    text = (ROOT / "docs" / "bots.md").read_text()
    start = text.index('{"type":"match_started"')
    return dict(json.loads(text[start:text.index("```", start)]))


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value[:1]]
    return type(value).__name__


SPY = """
    import json, sys
    log = open(sys.argv[1], "a")
    for line in sys.stdin:
        log.write(line); log.flush()
        msg = json.loads(line)
        if msg.get("type") == "decision_request":
            print(0, flush=True)
"""


def run_spy(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    (tmp_path / "spy.py").write_text(textwrap.dedent(SPY))
    seen = tmp_path / "seen.jsonl"
    side = "exec:" + json.dumps([sys.executable, str(tmp_path / "spy.py"), str(seen)])
    assert main(["--game", "floriferous(players=2)", "--run-seed", "validate:abc", "--deals", "1",
                 "--a", side, "--b", "builtin:greedy", "--deadline-ms", "700", *extra]) in (0, None)
    return [json.loads(line) for line in seen.read_text().splitlines()]


def test_validation_games_look_like_rated_ones(tmp_path: Path, capsys: Any) -> None:
    """Before: players named ``seat0``/``seat1`` with bot id 0 and an empty version, an empty time control and
    seed commitment, match id 1 in every game: a bot could play well only when rated."""
    players = {"a": {"bot_id": 17, "name": "my-bot", "version": "3"},
               "b": {"bot_id": 42, "name": "greedy-1", "version": "1"}}
    seen = run_spy(tmp_path, "--players", json.dumps(players), "--match-id", "5001")
    started = [m for m in seen if m["type"] == "match_started"]
    assert len(started) == 2  # the deal's two games, the spy in seat 0 then in seat 1
    documented = documented_match_started()
    for k, msg in enumerate(started):
        assert shape(msg) == shape(documented), msg
        assert msg["match_id"] == 5001 + k
        spy_seat = msg["seat"]
        by_seat = {p["seat"]: p for p in msg["players"]}
        assert {**by_seat[spy_seat]} == {"seat": spy_seat, **players["a"]}
        assert {**by_seat[1 - spy_seat]} == {"seat": 1 - spy_seat, **players["b"]}
        assert msg["time_control"] == {"base_ms": 0, "increment_ms": 700, "cap_ms": 700, "margin_ms": 50}
        assert len(msg["seed_commitment"]) == 64 and msg["seed_commitment"] != hashlib.sha256(b"").hexdigest()
    requests = [m for m in seen if m["type"] == "decision_request"]
    assert requests and {m["match_id"] for m in requests} <= {5001, 5002}
    assert all(m["deadline_ms"] == 700 for m in requests)


def test_without_identities_the_runner_invents_plausible_ones(tmp_path: Path, capsys: Any) -> None:
    seen = run_spy(tmp_path)
    started = [m for m in seen if m["type"] == "match_started"]
    who, first = identities("validate:abc")
    assert [m["match_id"] for m in started] == [first, first + 1] and first > 1
    for msg in started:
        assert all(p["bot_id"] > 0 and not p["name"].startswith("seat") and p["version"] for p in msg["players"])
        assert len({p["bot_id"] for p in msg["players"]}) == 2
