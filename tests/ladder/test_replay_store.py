"""Compact stored replays (ladder.replay_store): real referee matches, exact round trips,
tampering, old rows, and the ladder's export.

Oracles: the referee's own replay text (built by ``referee.replay.assemble`` and
``step_text``, a different code path from the re-simulating decoder), the
export of the same match from a row in the old format, and
``games.replay.verify_replay``.
"""

from __future__ import annotations

import json
import random
from typing import Any

import fixtures.ladder_helpers as h
import pytest
import zstandard

from bots.sdk import Bot
from games.registry import load_game
from games.replay import verify_replay
from ladder import replay_store
from ladder.matches import claim_match, record_result
from ladder.read import ReplayCache, export_replay, replay_json
from ladder.replay_store import COMPACT_FORMAT, FULL_FORMAT, StoredReplayError, compact, expand, pack, unpack
from ladder.tournaments import plan_match
from parterre.commands.replay import cmd_replay_verify
from referee import replay as referee_replay
from referee.testing import Harness

TOKENS = {"rs-a": 1, "rs-b": 2, "rs-c": 3}


class RandomBot(Bot):
    """Answers a random legal index (seeded)."""

    name = "random"

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def choose(self, request: Any) -> int:
        return self.rng.randrange(len(request.raw.legal_actions))


class IllegalOnThirdBot(RandomBot):
    """Plays randomly, then answers an index out of range on its third decision (illegal_action)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.n = 0

    def choose(self, request: Any) -> int:
        self.n += 1
        return 10_000 if self.n == 3 else super().choose(request)


async def _referee_replays(matches: list[tuple[str, list[int], str]], bad_bot: bool = False) -> list[str]:
    """Replay texts of real matches played through the referee: (game string, seat bot ids, seed)."""
    out = []
    async with Harness(TOKENS) as hr:
        for i, tok in enumerate(TOKENS):
            bot = IllegalOnThirdBot(i) if bad_bot and tok == "rs-c" else RandomBot(17 + i)
            hr.start_bot(bot, tok)
        for bot_id in TOKENS.values():
            await hr.wait_sessions(bot_id)
        for n, (gs, seats, seed) in enumerate(matches):
            res = await hr.run_match(100 + n, gs, seats, seed=seed, cap_ms=10_000)
            assert res.status == "finished", res.reason
            out.append(res.replay_json)
    return out


@pytest.fixture(scope="module")
def real_replays() -> list[str]:
    import asyncio

    games = [("floriferous(players=2)", [1, 2], "s-f"), ("lafleur(players=2)", [2, 1], "s-l"),
             ("flowar(players=2)", [1, 2], "s-w")]
    return asyncio.run(_referee_replays(games))


def test_hash_schedule_is_the_referees() -> None:
    assert replay_store.HASH_EVERY == referee_replay.HASH_EVERY
    assert replay_store.FULL_FORMAT == referee_replay.FORMAT


def test_referee_replays_record_the_documented_rules_revision(real_replays: list[str]) -> None:
    """docs/rules/<game>.md, "Rules revisions": Floriferous 1, La Fleur 3, Flowar 3 (2026-12-07)."""
    documented = {"floriferous": 1, "lafleur": 3, "flowar": 3}
    assert {json.loads(t)["game"]: json.loads(t)["rules_revision"] for t in real_replays} == documented


def test_real_matches_round_trip_byte_for_byte(real_replays: list[str]) -> None:
    for text in real_replays:
        raw = compact(text)
        assert raw is not None, json.loads(text)["game"]
        assert expand(raw) == text  # the referee's own text, rebuilt by re-simulation
        fmt, blob = pack(text)
        assert fmt == COMPACT_FORMAT
        assert unpack(fmt, blob) == text
        assert verify_replay(json.loads(unpack(fmt, blob))).ok


def test_compact_rows_are_a_few_bytes_per_decision(real_replays: list[str]) -> None:
    for text in real_replays:
        replay = json.loads(text)
        decisions = sum(1 for s in replay["steps"] if s["player"] >= 0)
        _, blob = pack(text)
        header = json.dumps({**replay, "steps": []}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        _, header_only = pack(header)
        beyond = len(blob) - len(header_only)
        assert beyond / decisions <= 4.0, replay["game"]
        z = zstandard.ZstdCompressor(level=3)
        old_beyond = len(z.compress(text.encode())) - len(z.compress(header.encode()))
        assert beyond * 5 < old_beyond  # the text form spends 30-60 bytes per decision


def test_fallback_moves_of_a_retired_seat_round_trip() -> None:
    import asyncio

    [text] = asyncio.run(_referee_replays([("floriferous(players=3)", [1, 2, 3], "s-3")], bad_bot=True))
    replay = json.loads(text)
    assert replay["verdicts"][2] == "illegal_action"
    assert any(s["fallback"] for s in replay["steps"])  # the referee played for seat 2
    raw = compact(text)
    assert raw is not None and expand(raw) == text


def test_texts_without_an_exact_compact_form_are_kept_as_text(real_replays: list[str]) -> None:
    replay = json.loads(real_replays[0])
    decision = next(s for s in replay["steps"] if s["player"] >= 0)
    variants = {
        "indented JSON": json.dumps(replay, indent=1, sort_keys=True),
        "fractional ms": json.dumps({**replay, "steps": [
            {**s, "time_ms": 1.5} if s is decision else s for s in replay["steps"]]},
            sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        "extra step field": json.dumps({**replay, "steps": [
            {**s, "note": "x"} if s is decision else s for s in replay["steps"]]},
            sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        "unknown game": json.dumps({**replay, "game_string": "nosuchgame(players=2)"}, sort_keys=True,
                                   separators=(",", ":"), ensure_ascii=False),
        "not JSON": "{",
    }
    for what, text in variants.items():
        assert compact(text) is None, what
        fmt, blob = pack(text)
        assert fmt == FULL_FORMAT, what
        assert unpack(fmt, blob) == text, what


# -- an attacker (or a bit flip) edits a stored row ---------------------------------------------------


def _parts(raw: bytes) -> tuple[int, int]:
    """(start of the step digits, start of the time stream) of a compact form."""
    hlen, pos = replay_store._read_varint(raw, 4)
    pos += hlen
    dlen, pos = replay_store._read_varint(raw, pos)
    return pos, pos + dlen


def test_a_changed_choice_is_detected(real_replays: list[str]) -> None:
    for text in real_replays:
        raw = compact(text)
        assert raw is not None
        istart, tstart = _parts(raw)
        for pos in (istart, (istart + tstart) // 2, tstart - 1):
            for delta in (1, -1):
                b = bytearray(raw)
                b[pos] = (b[pos] + delta) % 256  # other digits: another (maybe legal) sequence of choices
                with pytest.raises(StoredReplayError):
                    expand(bytes(b))


def test_changed_times_header_and_length_are_detected(real_replays: list[str]) -> None:
    raw = compact(real_replays[1])
    assert raw is not None
    _, tstart = _parts(raw)
    b = bytearray(raw)
    b[tstart] = (b[tstart] + 1) % 128  # a decision's time, or its fallback flag
    with pytest.raises(StoredReplayError):
        expand(bytes(b))
    forged = raw.replace(b'"status":"finished"', b'"status":"finishes"')  # inside the header JSON
    assert forged != raw
    with pytest.raises(StoredReplayError, match="digest"):
        expand(forged)
    for cut in (3, 10, len(raw) // 2, len(raw) - 1):
        with pytest.raises(StoredReplayError):
            expand(raw[:cut])
    with pytest.raises(StoredReplayError, match="leftover"):
        expand(raw + b"\x05")


def test_hostile_rows_fail_cleanly() -> None:
    head = b'{"header":{"game_string":"floriferous(players=2)"},"sha256":"00","steps":1000000000}'
    hostile = [
        b"",
        b"XXXX",
        b"PRC1" + b"\xff" * 20,  # a varint that never ends
        b"PRC1\x05{}",  # header shorter than announced
        b"PRC1" + bytes([len(head) & 0x7F | 0x80, len(head) >> 7]) + head + b"\x00",  # 10^9 steps, no data
        b'PRC1\x0b{"header":1',
    ]
    for raw in hostile:
        with pytest.raises(StoredReplayError):
            expand(raw)
    with pytest.raises(StoredReplayError):
        unpack(COMPACT_FORMAT, b"not zstd")


def test_a_tampered_export_fails_parterre_replay_verify(real_replays: list[str], tmp_path: Any,
                                                         capsys: Any) -> None:
    import argparse

    replay = json.loads(unpack(*pack(real_replays[0])))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(replay))
    assert cmd_replay_verify(argparse.Namespace(file=str(good))) == 0
    game = load_game(replay["game_string"])
    state = game.new_initial_state()
    for step in replay["steps"]:  # change the first decision that had an alternative
        legal = state.legal_actions()
        if step["player"] >= 0 and len(legal) > 1:
            step["action"] = next(x.to_json() for x in legal if x.to_json() != step["action"])
            break
        state.apply_action(game.action_from_json(step["action"]))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(replay))
    assert cmd_replay_verify(argparse.Namespace(file=str(bad))) == 1
    assert "FAILED" in capsys.readouterr().out


# -- the ladder: compact rows on write, old rows still load, the same export ---------------------------


def _play_recorded(pool: Any, game_string: str) -> int:
    """Plan, claim, play through the referee and record one match; returns its id."""
    import asyncio

    a, b = h.make_bots(pool, 2)
    mid = plan_match(pool, game_string=game_string, bot_ids=[a, b], plan_key="compact")
    spec = claim_match(pool, mid, "w1")
    assert spec is not None

    async def run() -> Any:
        async with Harness({"la": a, "lb": b}) as hr:
            hr.start_bot(RandomBot(1), "la")
            hr.start_bot(RandomBot(2), "lb")
            await hr.wait_sessions(a)
            await hr.wait_sessions(b)
            return await hr.run_match(mid, game_string, [a, b], seed=spec.seed, attempt=spec.attempt,
                                      cap_ms=10_000)

    res = asyncio.run(run())
    assert res.status == "finished", res.reason
    seats = [{"seat": s.seat, "bot_id": s.bot_id, "rank": s.rank, "score": s.score, "verdict": s.verdict,
              "time_used_ms": s.time_used_ms, "decisions": s.decisions} for s in res.seats]
    assert record_result(pool, mid, spec.attempt, {"status": "finished", "seats": seats,
                                                   "replay_json": res.replay_json})
    return mid


def _cli_export(pool: Any, mid: int) -> str:
    """What ``parterre replay export`` prints for the match."""
    return json.dumps(export_replay(pool, mid), indent=1, default=str, ensure_ascii=False)


@pytest.mark.parametrize("game_string", ["floriferous(players=2)", "lafleur(players=2)"])
def test_a_recorded_match_is_stored_compact_and_exports_as_an_old_row_does(pool: Any, game_string: str) -> None:
    mid = _play_recorded(pool, game_string)
    with pool.connection() as conn:
        fmt, data, raw_bytes = conn.execute(
            "SELECT format, data, raw_bytes FROM replays WHERE match_id = %s", (mid,)).fetchone()
    assert fmt == COMPACT_FORMAT
    text = replay_json(pool, mid)
    assert text is not None and raw_bytes == len(text.encode())
    assert len(data) * 2 < len(zstandard.ZstdCompressor(level=3).compress(text.encode()))  # header included
    compact_export = _cli_export(pool, mid)
    cached = ReplayCache().get(pool, mid)
    assert cached is not None and cached[1] == text
    # The same match as a row in the older stored form: zstd of the JSON text, format parterre-replay/1.
    with pool.connection() as conn:
        conn.execute("UPDATE replays SET format = %s, data = %s WHERE match_id = %s",
                     (FULL_FORMAT, zstandard.ZstdCompressor(level=3).compress(text.encode()), mid))
    assert replay_json(pool, mid) == text
    assert _cli_export(pool, mid) == compact_export  # byte-identical export
    assert verify_replay(export_replay(pool, mid)["replay"]).ok


def test_a_tampered_compact_row_is_refused_on_load(pool: Any) -> None:
    mid = _play_recorded(pool, "flowar(players=2)")
    with pool.connection() as conn:
        data = conn.execute("SELECT data FROM replays WHERE match_id = %s", (mid,)).fetchone()[0]
    raw = zstandard.ZstdDecompressor().decompress(bytes(data))
    istart, _ = _parts(raw)
    b = bytearray(raw)
    b[istart] = (b[istart] + 1) % 256
    with pool.connection() as conn:
        conn.execute("UPDATE replays SET data = %s WHERE match_id = %s",
                     (zstandard.ZstdCompressor().compress(bytes(b)), mid))
    with pytest.raises(StoredReplayError):
        replay_json(pool, mid)
    with pytest.raises(StoredReplayError):
        export_replay(pool, mid)
    # Through the site: a clear answer naming the cause, not a bare 500.
    from fastapi.testclient import TestClient

    from web import create_app

    with TestClient(create_app(pool=pool)) as client:
        for path in (f"/api/matches/{mid}/replay", f"/matches/{mid}"):
            r = client.get(path)
            assert r.status_code == 500 and "stored replay cannot be read" in r.text, (path, r.text[:300])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_a_huge_digit_block_is_refused_before_it_is_converted() -> None:
    """A 656-byte row of a 16 MiB digit block took 5 s of CPU in int.from_bytes (hostile review)."""
    import time

    head = b'{"header":{"game_string":"floriferous(players=2)"},"sha256":"00","steps":3}'
    digits = b"\x01" * (4 << 20)
    raw = b"PRC1" + _varint(len(head)) + head + _varint(len(digits)) + digits
    start = time.process_time()
    with pytest.raises(StoredReplayError, match="digit bytes for 3 steps"):
        expand(raw)
    assert time.process_time() - start < 0.5


def test_a_zstd_bomb_is_refused_at_its_cap() -> None:
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\x00" * (replay_store.MAX_COMPACT_BYTES + 1))
    assert len(bomb) < 4096  # a few kB of zstd claiming more than the cap
    with pytest.raises(StoredReplayError, match="more than"):
        unpack(COMPACT_FORMAT, bomb)
    text = zstandard.ZstdCompressor().compress(b'{"format": "parterre-replay/1"}')
    assert unpack(FULL_FORMAT, text) == '{"format": "parterre-replay/1"}'
