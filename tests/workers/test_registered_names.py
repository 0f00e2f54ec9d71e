"""Opponents and replays show a bot's registered name, never the name it announces (docs/faults.md
"House names and rating farming").

A participant's bot connects with ``Hello.bot_name = "house-expert"`` to pass for a house bot. The
match is run the way the ladder runs it: a worker task claims it and asks a real referee (in-process,
gRPC over loopback) to play it; the honest opponent's ``MatchStarted`` and the stored replay must
name the impostor by its registered name.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from bots.wire import MatchInfo
from ladder import bots as ladder_bots
from ladder import read, tournaments
from referee.testing import SERVICE_TOKEN, ThreadedReferee

register_toy()


class Watcher(RandomBot):
    """A random bot that keeps the ``MatchStarted`` it is sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[MatchInfo] = []

    def on_match_started(self, match: MatchInfo) -> None:
        self.seen.append(match)


def test_an_announced_house_name_is_not_shown_to_opponents_or_in_the_replay(pool, migrated_url, monkeypatch):
    import workers.tasks as tasks

    monkeypatch.setenv("PARTERRE_DATABASE_URL", migrated_url)
    monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
    monkeypatch.setenv("PARTERRE_NO_SHOW_TIMEOUT_MS", "5000")
    monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
    monkeypatch.setattr(tasks, "_pool", None)
    impostor, ti = ladder_bots.register_bot(pool, f"plain-{secrets.token_hex(3)}")
    honest, th = ladder_bots.register_bot(pool, f"honest-{secrets.token_hex(3)}")
    watcher = Watcher(seed=2, name="honest-program")
    mid = tournaments.plan_match(pool, game_string="toy(players=2,turns=4)", bot_ids=[impostor, honest],
                                 plan_key=secrets.token_hex(6),
                                 time_control={"base_ms": 0, "increment_ms": 0, "cap_ms": 5000, "margin_ms": 200})
    try:
        with ThreadedReferee({ti: impostor, th: honest},
                             bots={ti: RandomBot(seed=1, name="house-expert"), th: watcher}) as ref:
            monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", ref.control_address or ref.address)
            assert tasks.run_match(mid) == "finished"
    finally:
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
    names = {b.id: b.name for b in ladder_bots.list_bots(pool)}
    (started,) = watcher.seen
    assert {p["bot_id"]: p["name"] for p in started.players} == {impostor: names[impostor], honest: names[honest]}
    replay = read.export_replay(pool, mid)
    players = json.loads(replay) if isinstance(replay, str) else replay
    shown = players["replay"]["players"] if "replay" in players else players["players"]
    assert {p["bot_id"]: p["name"] for p in shown} == {impostor: names[impostor], honest: names[honest]}
    assert "house-expert" not in json.dumps(players)
