"""Rules revisions: a rules fix keeps every recorded match re-simulating as it was played.

``tests/fixtures/replays/<game>-rules-revision-1.json`` were made at commit ``dd2d760``,
before rules revisions existed (``make_<game>_rules_revision_1.py`` beside them): a
3-player Flowar match in which a seat used Kingdom Favor 18 at a strike called in
another seat's turn (allowed by that engine; the rulebook says "In your turn"), and a
2-player La Fleur match with an invitation where the one-romancing-pawn limit held a
romance back (revision 2 lifts it: a longer legal list). Each holds the replay text as
that referee wrote it (no ``rules_revision``) and the compact row that commit's ladder
stored. The oracle is that older code's output, not this engine.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from games.api import InvalidOptionError, canonical_json
from games.flowar import actions as A
from games.registry import load_game
from games.replay import iter_states, replay_game, verify_replay
from ladder import replay_store
from ladder.replay_store import COMPACT_FORMAT, StoredReplayError, compact, expand, pack, unpack
from parterre.commands.replay import cmd_replay_verify
from referee import replay as referee_replay

_DIR = Path(__file__).parents[1] / "fixtures" / "replays"
FIXTURES = {g: json.loads((_DIR / f"{g}-rules-revision-1.json").read_text(encoding="utf-8"))
            for g in ("flowar", "lafleur")}
FIXTURE = FIXTURES["flowar"]
REV2 = json.loads((_DIR / "flowar-rules-revision-2.json").read_text(encoding="utf-8"))
"""A solo match recorded by rules revision 2 (``make_flowar_rules_revision_2.py``, commit ``f107d2a``)."""
OLD_TEXT: str = FIXTURE["text"]
OLD: dict[str, Any] = json.loads(OLD_TEXT)
GAMES = sorted(FIXTURES)


@pytest.mark.parametrize("game", GAMES)
def test_each_fixture_is_an_old_replay_of_its_game(game: str) -> None:
    fixture = FIXTURES[game]
    assert hashlib.sha256(fixture["text"].encode()).hexdigest() == fixture["text_sha256"]
    replay = json.loads(fixture["text"])
    assert "rules_revision" not in replay and replay["game"] == game  # written before revisions existed


def test_the_flowar_fixture_holds_favor_18_out_of_turn() -> None:
    out_of_turn = []
    for i, state in iter_states(OLD):
        step = OLD["steps"][i + 1] if i + 1 < len(OLD["steps"]) else None
        if step and step["action"].get("kind") == "use_favor" and step["action"].get("favor") == 18 \
                and state.observation(step["player"])["turn_seat"] != step["player"]:
            out_of_turn.append(i + 1)
    assert out_of_turn, "the fixture holds no Favor 18 used in another seat's turn"


@pytest.mark.parametrize("game", GAMES)
def test_a_row_stored_before_revisions_still_expands_and_verifies(game: str) -> None:
    fixture = FIXTURES[game]
    text = unpack(fixture["format"], base64.b64decode(fixture["compact_zstd_b64"]))
    assert text == fixture["text"]
    assert verify_replay(json.loads(text)).ok
    referee_replay.verify(text)  # raises on any mismatch


def test_the_digits_decode_by_the_revision_that_wrote_them() -> None:
    """What the revision is for: the fixture's digits index revision 1's legal lists. By
    revision 2 (one more romance offered at an invitation) the same digits decode to
    another game; by revision 1 to the recorded one."""
    raw = _raw("lafleur")
    header, pos, tpos, n, digest = _layout(raw)
    game = load_game(header["game_string"])
    assert sha256(replay_store._rebuild(raw, pos, tpos, header, n, game.at_revision(1))) == digest
    try:
        other = replay_store._rebuild(raw, pos, tpos, header, n, game.at_revision(2))
    except StoredReplayError:
        other = None  # it ran past the end of the game
    assert other is None or sha256(other) != digest


def test_a_row_an_older_ladder_compacted_for_a_newer_referee_still_expands() -> None:
    """A rolling upgrade (deploy/k8s rolls the referee and the workers separately): a referee of
    revision 2 played the fixture's La Fleur match (every move in it is legal by revision 2
    too) and wrote ``rules_revision: 2``; a ladder of dd2d760, which knew no revisions,
    compacted it by revision 1's legal lists (the fixture's digits). Expanding tries the
    header's revision, then the older ones: the digest picks revision 1's decoding, and the
    text is the referee's, header included."""
    replay = json.loads(FIXTURES["lafleur"]["text"])
    text2 = canonical_json({**replay, "rules_revision": 2})
    assert verify_replay(json.loads(text2)).ok  # a game of revision 2 as well
    raw2 = _rehead(_raw("lafleur"), 2, sha256(text2))
    assert expand(raw2) == text2


def test_a_row_no_revision_rebuilds_is_refused() -> None:
    """The fallback never shows another game: a row whose digest no revision reproduces is refused."""
    replay = json.loads(FIXTURES["lafleur"]["text"])
    other = canonical_json({**replay, "rules_revision": 2, "reason": "not what was played"})
    with pytest.raises(StoredReplayError, match="digest"):
        expand(_rehead(_raw("lafleur"), 2, sha256(other)))


def test_the_old_flowar_match_is_not_a_game_of_the_newest_rules() -> None:
    newest = {**OLD, "rules_revision": 2}
    report = verify_replay(newest)
    assert not report.ok and any("favor\":18" in p and "not legal" in p for p in report.problems), report.problems
    with pytest.raises(referee_replay.ReplayError):
        referee_replay.verify(newest)


@pytest.mark.parametrize("game", GAMES)
def test_the_old_text_is_stored_compact_again_and_round_trips(game: str) -> None:
    text = FIXTURES[game]["text"]
    fmt, blob = pack(text)
    assert fmt == COMPACT_FORMAT
    assert unpack(fmt, blob) == text


def test_the_cli_says_which_revision_verified(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "old.json"
    path.write_text(OLD_TEXT, encoding="utf-8")
    assert cmd_replay_verify(argparse.Namespace(file=str(path))) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK:") and "flowar's rules revision 1 of 3" in out


def test_games_are_played_by_the_documented_newest_revision() -> None:
    """docs/rules/<game>.md, "Rules revisions" (what the referee writes: tests/ladder/test_replay_store.py)."""
    assert {name: load_game(name).rules_revision for name in ("floriferous", "lafleur", "flowar")} == \
        {"floriferous": 1, "lafleur": 3, "flowar": 3}


@pytest.mark.parametrize("game", GAMES)
def test_the_viewer_steps_through_the_old_match_to_its_end(game: str) -> None:
    replay = json.loads(FIXTURES[game]["text"])
    last = None
    for i, state in iter_states(replay):
        last = (i, state)
    assert last is not None and last[0] == len(replay["steps"]) - 1
    assert last[1].is_terminal() and last[1].state_hash() == replay["final_hash"]


def test_favor_18_out_of_turn_is_legal_at_revision_1_only() -> None:
    """The same position, by play, at both revisions: only revision 1 offers it."""
    step = next(i for i, s in enumerate(OLD["steps"]) if s["action"].get("kind") == "use_favor"
                and s["action"].get("favor") == 18)
    for revision, offered in ((1, True), (2, False)):
        game = replay_game({**OLD, "rules_revision": revision})
        state = game.new_initial_state()
        for s in OLD["steps"][:step]:
            state.apply_action(game.action_from_json(s["action"]))
        favors = [a for a in state.legal_actions() if isinstance(a, A.UseFavor) and a.favor == 18]
        assert bool(favors) is offered, revision


@pytest.mark.parametrize("revision", [0, 4, -1, "2", 2.0, True, None])
def test_a_revision_this_engine_does_not_play_is_refused(revision: Any) -> None:
    with pytest.raises(InvalidOptionError):
        load_game("flowar(players=2)").at_revision(revision)
    bad = {**OLD, "rules_revision": revision}
    report = verify_replay(bad)
    assert not report.ok
    with pytest.raises(referee_replay.ReplayError, match="rules revision"):
        referee_replay.verify(bad)
    text = json.dumps(bad, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert compact(text) is None  # stored as text, never lost
    assert pack(text)[0] != COMPACT_FORMAT


def test_a_compact_row_naming_an_unknown_revision_is_refused_not_misread() -> None:
    forged = _rehead(_raw("flowar"), 9)
    with pytest.raises(StoredReplayError, match="rules revision 9 is not one this engine plays"):
        expand(forged)


def test_at_revision_keeps_options_and_the_shared_game() -> None:
    game = load_game("flowar(players=3,first_game_favors=true)")
    old = game.at_revision(1)
    assert old is not game and old.options == game.options and old.game_string() == game.game_string()
    assert game.rules_revision == 3 and old.rules_revision == 1  # the newest game is not changed
    assert game.at_revision(3) is game


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _raw(game: str) -> bytes:
    """The fixture's compact row, before zstd."""
    return replay_store.zstandard.ZstdDecompressor().decompress(base64.b64decode(FIXTURES[game]["compact_zstd_b64"]))


def _varint_at(raw: bytes, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos``: (value, next position)."""
    value = shift = 0
    while True:
        b = raw[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def _layout(raw: bytes) -> tuple[dict[str, Any], int, int, int, str]:
    """(header, digits start, times start, steps, digest) of a compact row, read by the layout
    ladder/replay_store.py documents (not by its code)."""
    assert raw[:4] == b"PRC1"
    hlen, pos = _varint_at(raw, 4)
    head = json.loads(raw[pos:pos + hlen])
    dlen, dpos = _varint_at(raw, pos + hlen)
    return head["header"], dpos, dpos + dlen, head["steps"], head["sha256"]


def _rehead(raw: bytes, revision: Any, digest: str | None = None) -> bytes:
    """A compact row (before zstd) whose header names ``revision`` (and ``digest``, when given)."""
    hlen, pos = _varint_at(raw, 4)
    head = json.loads(raw[pos:pos + hlen])
    head["header"]["rules_revision"] = revision
    if digest is not None:
        head["sha256"] = digest
    new_head = json.dumps(head).encode()
    out = bytearray(raw[:4])
    n = len(new_head)
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + new_head + raw[pos + hlen:]


@pytest.mark.parametrize(("change", "problem"), [
    ({"game_string": 123}, "game_string is int"),
    ({"outcome": [1, 2]}, "outcome is list"),
    ({"steps": [1, 2, 3]}, "re-simulation failed"),
    ({"steps": "abc"}, "re-simulation failed"),
    ({"rules_revision": "2"}, "rules revision '2'"),
])
def test_the_cli_fails_a_malformed_replay_with_a_reason_not_a_traceback(tmp_path: Path, capsys: Any,
                                                                         change: dict[str, Any], problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**OLD, **change}), encoding="utf-8")
    assert cmd_replay_verify(argparse.Namespace(file=str(path))) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED:") and problem in out, out


def test_a_flowar_replay_of_revision_2_still_verifies_by_revision_2() -> None:
    """Rules revision 3 changed the solo game's end (Taxus exchanges no Coins after Round 4) and
    the placement checks; a match the referee recorded by revision 2 still loads, verifies (text
    and the compact row its ladder stored) and steps to its end by revision 2."""
    text = REV2["text"]
    assert hashlib.sha256(text.encode()).hexdigest() == REV2["text_sha256"]
    replay = json.loads(text)
    assert replay["rules_revision"] == 2 and replay["game_string"] == "flowar(first_game_favors=false,players=1)"
    assert unpack(REV2["format"], base64.b64decode(REV2["compact_zstd_b64"])) == text
    assert verify_replay(replay).ok
    referee_replay.verify(text)
    last = None
    for i, state in iter_states(replay):
        last = (i, state)
    assert last is not None and last[1].is_terminal() and last[1].state_hash() == replay["final_hash"]


def test_the_revision_2_solo_match_ends_otherwise_by_revision_3() -> None:
    """The same moves by revision 3: every one is still legal, but after Round 4 Taxus keeps his
    Coins ("Do not perform the end of Round steps after Round 4"), so the final position, and
    with it the recorded final hash, differ; relabelled as revision 3 the replay does not verify."""
    replay = json.loads(REV2["text"])
    ends = {}
    for revision in (2, 3):
        game = replay_game({**replay, "rules_revision": revision})
        state = game.new_initial_state()
        for s in replay["steps"]:
            state.apply_action(game.action_from_json(s["action"]))
        assert state.is_terminal()
        ends[revision] = state.observation(None)["taxus"]
    assert ends[3]["coins"] > ends[2]["coins"] and ends[3]["mp"] < ends[2]["mp"], ends
    assert not verify_replay({**replay, "rules_revision": 3}).ok
