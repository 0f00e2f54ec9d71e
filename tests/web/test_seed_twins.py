# ruff: noqa: F811 - the fixtures imported from test_participants are used as arguments by name
"""S-20: a finished seat rotation must not publish the deal its twin is still playing.

The attack (``/tmp/attack/seedleak/seed_leak.py``): the rotations of one deal share a seed; as soon as one
is finished, anyone (no token) read its seed from ``/api/matches/{id}`` while the other was running, and
``sha256(that seed)`` equalled the running one's public ``seed_commitment``: the whole deal of a match in
play, its hidden cards included. Here the attacker polls every public route that serves a seed, a replay,
steps, boards or a live feed, for a finished match whose twin is running, then planned; the oracle is the
attacker's own check (the seed hashes to the twin's commitment) and the replay text itself.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from test_participants import (  # noqa: F401 - fixtures are found by name
    account,
    app,
    bearer,
    client,
    finished_match,
    new_bot,
    pool,
    rds,
)

from ladder import read
from ladder.matches import claim_match
from ladder.tournaments import new_seed, plan_match
from parterre.cli import main as cli_main
from web.live import LiveConfig

GAME = "floriferous(players=2)"


def _twins(pool: Any, bots: list[int], key: str) -> tuple[int, int, str]:
    """Two rotations of one deal (one seed): the first played to the end, the second planned."""
    seed, _ = new_seed()
    first = finished_match_on(pool, bots, seed, key)
    second = plan_match(pool, game_string=GAME, bot_ids=bots[::-1], plan_key=f"{key}:rot1", seed=seed)
    return first, second, seed


def finished_match_on(pool: Any, bots: list[int], seed: str, key: str) -> int:
    import test_participants as tp

    real = tp.plan_match

    def with_seed(pool: Any, **kw: Any) -> int:
        return real(pool, **{**kw, "seed": seed, "plan_key": f"{key}:rot0"})

    tp.plan_match = with_seed
    try:
        return finished_match(pool, bots)
    finally:
        tp.plan_match = real


def _leaks(client: Any, mid: int, seed: str, replay_text: str) -> list[str]:
    """Every public route of ``mid`` that gives away ``seed`` or its replay (empty: nothing leaks)."""
    found = []
    for path in (f"/api/matches/{mid}", f"/api/matches/{mid}/replay", f"/matches/{mid}/replay.json",
                 f"/api/matches/{mid}/steps/0", f"/api/matches/{mid}/steps/-1", f"/matches/{mid}",
                 f"/matches/{mid}?step=3&all=1", f"/matches/{mid}/board?step=0&all=1", f"/matches/{mid}/board",
                 f"/api/matches/{mid}/steps/0?all=true"):
        r = client.get(path)
        if seed in r.text or (r.status_code == 200 and path.endswith(("replay", ".json")) and r.text == replay_text):
            found.append(f"{path}: seed or replay")
        elif ("/steps/" in path or "/board" in path) and r.status_code == 200:
            found.append(f"{path}: a rebuilt state or board")
        elif 'id="viewer"' in r.text:
            found.append(f"{path}: the replay viewer")
    page = client.get(f"/api/matches/{mid}").json()
    if page.get("seed") or page.get("steps") or page.get("outcome"):
        found.append("/api/matches: seed, steps or outcome")
    return found


def test_s20_a_finished_rotation_is_withheld_while_its_twin_runs(client: Any, pool: Any, ladder_db: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _, tok = account(client)
    bots = [new_bot(client, tok)["id"], new_bot(client, tok)["id"]]
    first, second, seed = _twins(pool, bots, "s20a")
    replay_text = read.replay_json(pool, first)
    assert replay_text is not None
    twin = client.get(f"/api/matches/{second}").json()
    assert twin["seed_commitment"] == hashlib.sha256(seed.encode()).hexdigest()  # what the attacker compares
    assert claim_match(pool, second, "w") is not None  # the twin is running
    assert client.get(f"/api/matches/{first}").json()["status"] == "finished"
    assert _leaks(client, first, seed, replay_text) == []
    page = client.get(f"/api/matches/{first}").json()
    assert page["seed"] is None and page["steps"] == [] and page["has_replay"] is False and page["held"] is True
    assert client.get(f"/api/matches/{first}/replay").status_code == 404
    assert "every match of the deal is over" in client.get(f"/matches/{first}").text
    # the owner's own seat view of the finished rotation is the twin's other seat's hand: withheld too
    assert client.get(f"/api/matches/{first}/seat-view", headers=bearer(tok)).status_code == 404
    # the export meant for publishing (parterre replay export) withholds it as well
    export = read.export_replay(pool, first, hold_twins=True)
    assert "seed" not in export["match"] and export["replay"] is None and export["match"]["held"] is True
    assert seed not in json.dumps(export, default=str)
    monkeypatch.setenv("PARTERRE_DATABASE_URL", ladder_db)
    out = tmp_path / "export.json"
    assert cli_main(["replay", "export", str(first), "-o", str(out)]) == 0
    assert seed not in out.read_text() and json.loads(out.read_text())["replay"] is None
    assert cli_main(["replay", "export", str(first), "--include-held", "-o", str(out)]) == 0  # the operator's own
    assert seed in out.read_text()
    # once the twin is over for good, everything is public, and the seed checks against both commitments
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET status = 'failed' WHERE id = %s", (second,))
    page = client.get(f"/api/matches/{first}").json()
    assert page["seed"] == seed and page["held"] is False and page["steps"]
    assert client.get(f"/api/matches/{first}/replay").text == replay_text
    assert client.get(f"/api/matches/{first}/seat-view", headers=bearer(tok)).status_code == 200
    assert read.export_replay(pool, first, hold_twins=True)["match"]["seed"] == seed


def test_s20_a_planned_twin_holds_it_too_and_unrelated_matches_are_not_held(client: Any, pool: Any) -> None:
    _, tok = account(client)
    bots = [new_bot(client, tok)["id"], new_bot(client, tok)["id"]]
    first, second, seed = _twins(pool, bots, "s20b")  # the twin is only planned (not started)
    replay_text = read.replay_json(pool, first)
    assert replay_text is not None
    assert _leaks(client, first, seed, replay_text) == []
    lone = finished_match(pool, bots)  # a match of its own seed: public at once
    assert client.get(f"/api/matches/{lone}").json()["seed"]
    assert client.get(f"/api/matches/{lone}/replay").status_code == 200


def test_s20_no_live_view_of_a_rotation_while_another_on_its_deal_is_unfinished(
        client: Any, app: Any, pool: Any, rds: tuple[Any, str], redis_base_url: str, redis_prefix: str) -> None:
    _, tok = account(client)
    bots = [new_bot(client, tok)["id"], new_bot(client, tok)["id"]]
    seed, _ = new_seed()
    ahead = plan_match(pool, game_string=GAME, bot_ids=bots, plan_key="s20c:rot0", seed=seed)
    behind = plan_match(pool, game_string=GAME, bot_ids=bots[::-1], plan_key="s20c:rot1", seed=seed)
    assert claim_match(pool, ahead, "w") is not None and claim_match(pool, behind, "w") is not None
    ns = redis_prefix + "live"
    app.state.live = LiveConfig(redis_base_url, 0.0, ns)
    r = redis_lib.Redis.from_url(redis_base_url)
    key = f"{ns}:live:{ahead}"
    try:
        r.xadd(key, {"e": json.dumps({"end": True, "status": "finished", "reason": "", "scores": [1, 2],
                                      "ranks": [2, 1]})})
        body = client.get(f"/matches/{ahead}/live").text
        assert "event: gone" in body and '"reason":"twin"' in body and "event: end" not in body, body
        assert 'id="live-view"' not in client.get(f"/matches/{ahead}").text
        with pool.connection() as conn:  # the other rotation ends: the feed is shown
            conn.execute("UPDATE matches SET status = 'failed' WHERE id = %s", (behind,))
        body = client.get(f"/matches/{ahead}/live").text
        assert "event: end" in body, body
        assert 'id="live-view"' in client.get(f"/matches/{ahead}").text
    finally:
        r.delete(key)
        r.close()
