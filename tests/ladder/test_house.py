"""House bots: registration and token rotation (ladder.house), the continuous ladder leaving them
alone, and ``parterre house`` keeping them connected so a challenge between them is played (docs/participants.md)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.ladder_helpers import GAME, make_bots

from ladder.bots import find_bot, revoke_bot, token_hash
from ladder.errors import BotRevokedError, InvalidBotNameError
from ladder.house import ensure_house_bot, house_bot_ids, list_house_bots
from ladder.tournaments import plan_ladder_round
from parterre.embedded import celery_url, redis_py_url

pytestmark = pytest.mark.usefixtures("games")


@pytest.fixture
def redis_client(redis_base_url: str) -> Iterator[Any]:
    import redis

    client = redis.Redis.from_url(redis_py_url(redis_base_url))
    yield client
    client.close()


def test_house_bots_are_registered_once_and_re_tokened_at_each_start(pool, redis_client) -> None:
    key = f"parterre-test-{secrets.token_hex(4)}:tokens"
    bot_id, first = ensure_house_bot(pool, "random", ["flowar", GAME], redis=redis_client, key=key)
    assert redis_client.hget(key, token_hash(first)) == str(bot_id).encode()
    again, second = ensure_house_bot(pool, "random", [GAME], redis=redis_client, key=key)
    assert again == bot_id and second != first
    assert redis_client.hget(key, token_hash(first)) is None  # the old token stops working at once
    assert redis_client.hget(key, token_hash(second)) == str(bot_id).encode()
    bot = find_bot(pool, "house-random")
    assert bot is not None and (bot.id, bot.owner) == (bot_id, "house")
    assert [(x.name, x.kind, x.games) for x in list_house_bots(pool)] == [("house-random", "random", (GAME,))]
    greedy, _ = ensure_house_bot(pool, "greedy", ["flowar"])
    assert [x.name for x in list_house_bots(pool, game="flowar")] == ["house-greedy"]
    assert house_bot_ids(pool) == {bot_id, greedy}
    revoke_bot(pool, greedy)
    with pytest.raises(BotRevokedError, match="house-greedy"):
        ensure_house_bot(pool, "greedy", ["flowar"])
    for kind, games in (("Bad Kind", [GAME]), ("", [GAME]), ("x", [])):
        with pytest.raises(InvalidBotNameError):
            ensure_house_bot(pool, kind, games)
    redis_client.delete(key)


def test_the_continuous_ladder_does_not_pair_house_bots(pool) -> None:
    """House bots that keep no league gate of the game are not paired; those that do are seated only
    against the bots whose next gate they keep (tests/ladder/test_leagues.py), never with each other."""
    a, b = make_bots(pool, 2)
    r, _ = ensure_house_bot(pool, "random", ["flowar"])
    g, _ = ensure_house_bot(pool, "greedy", ["flowar"])
    ids = plan_ladder_round(pool, game_string=f"{GAME}(players=2)", round_no=1, bot_ids=[a, b, r, g])
    with pool.connection() as conn:
        seated = {int(x[0]) for x in conn.execute("SELECT bot_id FROM seats WHERE match_id = ANY(%s)", (ids,))}
    assert len(ids) == 1 and seated == {a, b}
    ensure_house_bot(pool, "random", [GAME])
    ensure_house_bot(pool, "greedy", [GAME])
    for round_no in range(2, 8):
        ids = plan_ladder_round(pool, game_string=f"{GAME}(players=2)", round_no=round_no, bot_ids=[a, b, r, g],
                                max_pending=100)
        with pool.connection() as conn:
            tables = conn.execute("SELECT array_agg(bot_id ORDER BY bot_id) FROM seats WHERE match_id = ANY(%s) "
                                  "GROUP BY match_id", (ids,)).fetchall()
        assert tables and all(len({r, g} & set(t)) <= 1 for (t,) in tables)


def test_parterre_house_keeps_them_connected_and_they_play_a_challenge(database_url, redis_base_url, monkeypatch,
                                                                       tmp_path: Path) -> None:
    """`parterre house` (a real process) registers the house bots, connects them to a referee that
    checks tokens in Redis, and a challenge between them is claimed, played and recorded."""
    import workers.tasks as tasks
    from ladder import db as ladder_db
    from ladder.challenges import challenge_status, create_challenge, dispatch_challenges
    from referee.testing import SERVICE_TOKEN, ThreadedReferee
    from referee.tokens import RedisTokenStore

    ladder_db.migrate(database_url)
    pool = ladder_db.make_pool(database_url, min_size=1, max_size=4)
    referee = ThreadedReferee(token_store=RedisTokenStore(redis_py_url(redis_base_url))).start()

    def connected(bot_ids: list[int]) -> bool:
        assert referee.core is not None
        core = referee.core
        return referee.call(lambda: all(core.registry.by_bot.get(i) for i in bot_ids))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARTERRE_", "PROMETHEUS_"))}
    env.update({"PARTERRE_HOME": str(tmp_path), "PARTERRE_DATABASE_URL": database_url,
                "PARTERRE_REDIS_URL": celery_url(redis_base_url), "PARTERRE_REFEREE_ADDRESS": referee.address})
    log = open(tmp_path / "house.log", "wb")  # noqa: SIM115 - closed in finally
    house = subprocess.Popen([sys.executable, "-m", "parterre.cli", "house", "--max-matches", "2"], env=env,
                             stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        ids: dict[str, int] = {}
        while time.monotonic() < deadline:
            ids = {b.name: b.bot_id for b in list_house_bots(pool)}
            if len(ids) == 3 and connected(list(ids.values())):
                break
            assert house.poll() is None, (tmp_path / "house.log").read_text()[-3000:]
            time.sleep(0.2)
        tiers = {"house-random", "house-greedy", "house-search"}
        assert set(ids) == tiers, (tmp_path / "house.log").read_text()[-3000:]
        assert connected(list(ids.values()))

        monkeypatch.setenv("PARTERRE_DATABASE_URL", database_url)
        monkeypatch.setenv("PARTERRE_SERVICE_TOKEN", SERVICE_TOKEN)
        monkeypatch.setenv("PARTERRE_REFEREE_ADDRESS", referee.address)
        monkeypatch.setenv("PARTERRE_REFEREE_DISCOVERY", "0")
        monkeypatch.setattr(tasks, "_pool", None)
        match_id = create_challenge(pool, game_string="floriferous(players=2)",
                                    bot_ids=[ids["house-greedy"], ids["house-random"]], rated=True,
                                    time_control={"increment_ms": 2000, "cap_ms": 2000, "margin_ms": 200})
        assert dispatch_challenges(pool, {"floriferous": set(ids.values())}) == ([match_id], [])
        assert tasks.run_match(match_id) == "finished"
        info = challenge_status(pool, match_id)
        assert info.status == "finished" and sorted(info.ranks or ()) in ([1, 1], [1, 2])
        house.send_signal(signal.SIGTERM)
        assert house.wait(20) is not None
    finally:
        if house.poll() is None:
            house.kill()
        log.close()
        if tasks._pool is not None:
            tasks._pool.close()
            tasks._pool = None
        referee.stop(10)
        pool.close()
