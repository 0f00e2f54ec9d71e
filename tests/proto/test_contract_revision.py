"""The bot contract's revision: what a Hello naming an older, a current, an unknown or no revision
gets (docs/bots.md, "Contract revisions"), the stdio adapter's deprecation window for a renamed
key, and a bot generated from the previous release's contract playing against today's referee.

Oracles: the table in docs/bots.md (each change it lists is what the referee tells an older bot),
the released contract image ``proto/released/parterre-v1.binpb`` (stubs generated from it, not
from today's files), and the La Fleur engine's own observation.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import grpc
import grpc.aio
import pytest
from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from bots.stdio_lines import with_deprecated_keys
from games.registry import load_game
from proto import contract
from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee.testing import Harness

register_toy()

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {"tok-a": 1, "tok-b": 2}


async def first_answer(address: str, revision: int) -> tuple[pb.RefereeMessage | None, grpc.StatusCode | None]:
    """Send a Hello naming ``revision`` (0: the field left out); return the first answer and the status."""
    async with grpc.aio.insecure_channel(address) as ch:
        call = pb_grpc.RefereeStub(ch).Connect()
        await call.write(pb.BotMessage(hello=pb.Hello(token="tok-a", bot_name="x", bot_version="1",
                                                      contract_revision=revision)))
        msg = await asyncio.wait_for(call.read(), 5)
        code = None
        if msg is grpc.aio.EOF:
            return None, await call.code()
        if msg.WhichOneof("kind") == "error":
            code = await asyncio.wait_for(call.code(), 5)
        call.cancel()
        return msg, code


def documented_changes() -> dict[int, list[str]]:
    """The "Contract revisions" table of docs/bots.md: revision -> the changes listed for it."""
    text = (ROOT / "docs" / "bots.md").read_text()
    section = text.split("### Contract revisions", 1)[1].split("\n### ", 1)[0]
    out: dict[int, list[str]] = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*[\d-]+\s*\|(.*)\|\s*$", line)
        if m:
            out[int(m.group(1))] = [c.strip() for c in m.group(2).split("<br>") if c.strip()]
    return out


def plain(markdown: str) -> str:
    return markdown.replace("`", "")


async def test_a_current_bot_is_welcomed_with_the_revision_and_no_notice():
    async with Harness(TOKENS) as h:
        msg, code = await first_answer(h.address, contract.CONTRACT_REVISION)
    assert code is None and msg is not None and msg.WhichOneof("kind") == "welcome"
    assert msg.welcome.contract_revision == contract.CONTRACT_REVISION == max(documented_changes())
    assert list(msg.welcome.notices) == []


async def test_a_bot_naming_no_revision_is_told_every_change_since_revision_1():
    """A bot built before the field (it sends 0) is welcomed, and told each change the docs list
    for the revisions after 1, in order."""
    async with Harness(TOKENS) as h:
        msg, code = await first_answer(h.address, 0)
    assert code is None and msg is not None and msg.WhichOneof("kind") == "welcome"
    notices = list(msg.welcome.notices)
    assert "no contract revision" in notices[0] and "docs/bots.md" in notices[0]
    expected = [plain(c) for rev, changes in sorted(documented_changes().items()) if rev > 1 for c in changes]
    assert len(expected) >= 4
    assert [n.split("): ", 1)[1] for n in notices[1:]] == expected


async def test_a_bot_of_an_unknown_newer_revision_is_welcomed_with_a_warning():
    async with Harness(TOKENS) as h:
        msg, code = await first_answer(h.address, contract.CONTRACT_REVISION + 5)
    assert code is None and msg is not None and msg.WhichOneof("kind") == "welcome"
    (notice,) = msg.welcome.notices
    assert f"revision {contract.CONTRACT_REVISION + 5} is newer" in notice


async def test_a_revision_older_than_the_oldest_supported_is_refused_with_what_to_do(monkeypatch):
    """Once a release drops revision 1 (OLDEST_SUPPORTED = 2), a Hello naming it, or naming none,
    is refused: ERROR_CODE_HELLO_REFUSED and INVALID_ARGUMENT (the SDK does not reconnect)."""
    monkeypatch.setattr(contract, "OLDEST_SUPPORTED", 2)
    async with Harness(TOKENS) as h:
        for revision in (1, 0):
            msg, code = await first_answer(h.address, revision)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            assert msg is not None and msg.error.code == pb.ERROR_CODE_HELLO_REFUSED
            assert "revision 1 is no longer supported" in msg.error.message and "docs/bots.md" in msg.error.message
        assert h.core is not None and len(h.core.registry) == 0


async def test_the_sdk_sends_its_revision_and_prints_what_the_referee_says(monkeypatch):
    """The SDK's Hello names CONTRACT_REVISION; a referee a revision ahead tells it what changed,
    and the SDK hands each notice to ``announce`` once, even after a reconnect."""
    ahead = contract.CONTRACT_REVISION + 1
    monkeypatch.setattr(contract, "CONTRACT_REVISION", ahead)
    monkeypatch.setattr(contract, "CHANGES", (*contract.CHANGES, contract.Revision(ahead, "2027-01-01", ("x moved",))))
    bot = RandomBot(seed=1, games=("toy",))
    said: list[str] = []
    bot.announce = said.append
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-a")
        await h.wait_sessions(1)
        bot.disconnect(reconnect_after_s=0.0)
        await asyncio.wait_for(_welcomes(bot, 2), 10)
    assert bot.contract_notices == [
        f"this bot names revision {ahead - 1}; this referee speaks revision {ahead}; see {contract.DOCS}",
        f"revision {ahead} (2027-01-01): x moved"]
    assert [s for s in said if s.startswith("referee: ")] == [f"referee: {n}" for n in bot.contract_notices]


async def _welcomes(bot: RandomBot, n: int) -> None:
    while bot.stats.welcomes < n:
        await asyncio.sleep(0.01)


def test_the_stdio_adapter_sends_a_renamed_key_under_both_names_for_one_revision():
    """La Fleur's ``hand_size`` is ``cards_in_hand`` since revision 2; a stdio bot still reading
    ``hand_size`` gets the same number (the engine's observation is the oracle), and other games'
    observations are untouched."""
    game = load_game("lafleur(players=3)")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    observation = state.observation(0)
    counts = [p["cards_in_hand"] for p in observation["players"]]
    sent = with_deprecated_keys("lafleur(players=3)", observation)
    assert [p["hand_size"] for p in sent["players"]] == counts
    assert contract.DEPRECATED_STDIO_KEYS == {"lafleur": {"hand_size": "cards_in_hand"}}
    other = {"players": [{"cards_in_hand": 2}]}
    assert with_deprecated_keys("floriferous", other) == {"players": [{"cards_in_hand": 2}]}


OLD_BOT = textwrap.dedent('''
    """A bot written against the released contract: its stubs generated from the image alone."""
    import sys
    import grpc
    from proto.parterre.v1 import referee_pb2 as pb, referee_pb2_grpc as pb_grpc
    print("stubs", pb.__file__, flush=True)
    print("hello", ",".join(f.name for f in pb.Hello.DESCRIPTOR.fields), pb.ErrorCode.Name(2), flush=True)

    def requests(answers):
        yield pb.BotMessage(hello=pb.Hello(token=sys.argv[2], bot_name="old", bot_version="1",
                                           max_concurrent_matches=1))
        while True:
            item = answers.get()
            if item is None:
                return
            yield item

    import queue
    answers = queue.Queue()
    with grpc.insecure_channel(sys.argv[1]) as ch:
        for msg in pb_grpc.RefereeStub(ch).Connect(requests(answers)):
            kind = msg.WhichOneof("kind")
            if kind == "welcome":
                print("welcome", msg.welcome.bot_id, flush=True)
            elif kind == "decision_request":
                r = msg.decision_request
                answers.put(pb.BotMessage(decision=pb.Decision(match_id=r.match_id, seq=r.seq, action_index=0)))
            elif kind == "match_ended":
                print("ended", msg.match_ended.status, flush=True)
                answers.put(None)
                break
            elif kind == "error":
                print("error", msg.error.code, msg.error.message, flush=True)
''')


async def test_a_bot_generated_from_the_previous_release_plays_a_match_against_todays_referee(tmp_path):
    """Stubs generated from ``proto/released/parterre-v1.binpb`` (the last released contract, before
    the renames), in a process that cannot import today's ``proto`` package, play a whole
    Floriferous match: finished, the old bot's verdict normal."""
    out = tmp_path / "gen"
    out.mkdir()
    files = ["proto/parterre/v1/referee.proto", "proto/parterre/v1/floriferous.proto",
             "proto/parterre/v1/lafleur.proto", "proto/parterre/v1/flowar.proto"]
    gen = subprocess.run([sys.executable, "-m", "grpc_tools.protoc",
                          f"--descriptor_set_in={ROOT / 'proto/released/parterre-v1.binpb'}",
                          f"--python_out={out}", f"--grpc_python_out={out}", *files],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)  # no .proto file on disk here
    assert gen.returncode == 0, gen.stderr
    for package in ("proto", "proto/parterre", "proto/parterre/v1"):  # regular packages: found before ours
        (out / package / "__init__.py").touch()
    (out / "old_bot.py").write_text(OLD_BOT)
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=2), "tok-b")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = await asyncio.create_subprocess_exec(sys.executable, "-E", "old_bot.py", h.address, "tok-a", cwd=out,
                                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            await h.wait_sessions(1, timeout_s=20)
            await h.wait_sessions(2, timeout_s=20)
            result = await h.run_match(900, "floriferous(players=2)", [1, 2], cap_ms=5000)
            stdout, stderr = await asyncio.wait_for(proc.communicate(), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert result.status == "finished", result
    assert [s.verdict for s in result.seats] == ["normal", "normal"], result
    lines = stdout.decode().splitlines()
    assert lines[0] == f"stubs {out / 'proto/parterre/v1/referee_pb2.py'}", lines
    # the old contract: five Hello fields, unprefixed enum values
    assert lines[1] == "hello token,bot_name,bot_version,games,max_concurrent_matches PROTOCOL", lines
    assert lines[2] == "welcome 1" and lines[-1] == "ended finished", (lines, stderr.decode()[-2000:])


@pytest.mark.parametrize("revision", [r.number for r in contract.CHANGES])
def test_every_revision_in_the_code_is_in_the_docs_with_the_same_changes(revision):
    documented = documented_changes()
    (rev,) = [r for r in contract.CHANGES if r.number == revision]
    assert [plain(c) for c in documented[revision]] == list(rev.changes)


@pytest.mark.parametrize(("path", "pattern"), [
    ("bots/node/bot.js", r"const CONTRACT_REVISION = (\d+);"),
    ("bots/go/main.go", r"const contractRevision = (\d+)"),
    ("bots/cpp/bot.cc", r"constexpr unsigned kContractRevision = (\d+);"),
    ("bots/java/src/org/parterre/bot/Bot.java", r"private static final int CONTRACT_REVISION = (\d+);"),
])
def test_every_example_bot_names_the_current_revision(path, pattern):
    """The examples in other languages say which revision they were written against (and are
    updated with each revision); that they send it in their Hello is in their source too."""
    source = (ROOT / path).read_text()
    m = re.search(pattern, source)
    assert m is not None and int(m.group(1)) == contract.CONTRACT_REVISION, path
    assert re.search(r"contract_revision|ContractRevision", source), path
