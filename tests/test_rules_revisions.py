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

from games.api import InvalidOptionError
from games.flowar import actions as A
from games.registry import load_game
from games.replay import iter_states, replay_game, verify_replay
from ladder.replay_store import COMPACT_FORMAT, StoredReplayError, compact, expand, pack, unpack
from parterre.commands.replay import cmd_replay_verify
from referee import replay as referee_replay

_DIR = Path(__file__).parent / "fixtures" / "replays"
FIXTURES = {g: json.loads((_DIR / f"{g}-rules-revision-1.json").read_text(encoding="utf-8"))
            for g in ("flowar", "lafleur")}
FIXTURE = FIXTURES["flowar"]
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


@pytest.mark.parametrize("game", GAMES)
def test_the_old_row_does_not_expand_by_the_newest_rules(game: str) -> None:
    """What the revision is for: by the newest rules the same digits decode to another game
    (the legal lists differ), which the recorded digest refuses."""
    from ladder import replay_store

    raw = replay_store.zstandard.ZstdDecompressor().decompress(base64.b64decode(FIXTURES[game]["compact_zstd_b64"]))
    with pytest.raises(StoredReplayError):
        expand(_with_revision(raw, 2))


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
    assert out.startswith("OK:") and "flowar's rules revision 1 of 2" in out


def test_new_replays_record_the_newest_revision() -> None:
    for name in ("floriferous", "lafleur", "flowar"):
        game = load_game(name)
        assert game.rules_revision == len(type(game).RULES_REVISIONS)
    assert load_game("flowar").rules_revision == 2 and load_game("lafleur").rules_revision == 2


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


@pytest.mark.parametrize("revision", [0, 3, -1, "2", 2.0, True, None])
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
    from ladder import replay_store

    raw = replay_store.zstandard.ZstdDecompressor().decompress(base64.b64decode(FIXTURE["compact_zstd_b64"]))
    forged = _with_revision(raw, 9)
    with pytest.raises(StoredReplayError, match="rules revision 9 is not one this engine plays"):
        expand(forged)


def test_at_revision_keeps_options_and_the_shared_game() -> None:
    game = load_game("flowar(players=3,first_game_favors=true)")
    old = game.at_revision(1)
    assert old is not game and old.options == game.options and old.game_string() == game.game_string()
    assert game.rules_revision == 2 and old.rules_revision == 1  # the newest game is not changed
    assert game.at_revision(2) is game


def _with_revision(raw: bytes, revision: Any) -> bytes:
    """A compact row (before zstd) whose header names ``revision`` (ladder/replay_store.py's layout)."""
    from ladder import replay_store

    hlen, pos = replay_store._read_varint(raw, 4)
    head = json.loads(raw[pos:pos + hlen])
    head["header"]["rules_revision"] = revision
    new_head = json.dumps(head).encode()
    out = bytearray(raw[:4])
    replay_store._varint(out, len(new_head))
    return bytes(out) + new_head + raw[pos + hlen:]
