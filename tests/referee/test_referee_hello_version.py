"""S-23: ``Hello.bot_version`` is shown on public pages; a version that spoofs its text is refused at the referee.

The attack (``/tmp/attack/version_spoof``): ``1.0<U+202E>3.0-fixed<U+200B><i>x</i>`` was stored as the seat's
version and shown raw on ``/bots/{id}`` and ``/api/bots/{id}/versions``. Each case below is a Hello an attacker
would send with a valid token; the oracle is the rule written out here (ASCII letters, digits, a few
punctuation marks, single inner spaces, at most 50 characters), not the referee's regex.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from fixtures.toy_game import register_toy
from fixtures.waiting import async_wait_until
from test_referee_auth import TOKENS, raw_connect

from proto.parterre.v1 import referee_pb2 as pb
from referee.testing import Harness

register_toy()

SPOOFS = [
    "1.0\u202e3.0-fixed\u200b<i>x</i>",  # the tester's: bidi override, zero-width space, markup
    "1.0\u202e",  # right-to-left override alone
    "2.0\u2066x\u2069",  # isolates
    "1\u200b",  # zero-width space
    "1\u200d2",  # zero-width joiner
    "\ufeff1",  # byte-order mark
    "1\u0000",  # NUL
    "1\n2",  # newline
    "1\t2",  # tab
    "1\x1b[31m",  # terminal escape
    "<script>",  # markup
    "v1\u00a0",  # no-break space
    "1.\u0665",  # an Arabic-Indic digit
    "\u0430pple",  # Cyrillic a: a look-alike
    " 1.0",  # edge spaces
    "1.0 ",
    "1  0",  # two spaces
    "1" * 51,  # over the cap
]
FINE = ["1", "", "1.2.3-rc1+git.abc", "v2 (search) build:7/main@ab#1~x", "9" * 50]


def hello(version: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token="tok-a", bot_name="x", bot_version=version, max_concurrent_matches=1))


async def assert_refused(message: pb.BotMessage, field: str) -> None:
    """The referee answers ``message`` with an Error naming ``field``, then INVALID_ARGUMENT; nothing registered."""
    async with Harness(TOKENS) as h:
        got, code = await raw_connect(h.address, message, read=2)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        (msg,) = got  # an Error, never a Welcome
        assert msg.WhichOneof("kind") == "error"
        assert msg.error.code == pb.ERROR_CODE_HELLO_REFUSED and field in msg.error.message
        assert h.core is not None and len(h.core.registry) == 0


@pytest.mark.parametrize("version", SPOOFS, ids=[ascii(v)[:30] for v in SPOOFS])
async def test_s23_a_spoofing_version_is_refused_invalid_argument(version: str) -> None:
    await assert_refused(hello(version), "Hello.bot_version")


@pytest.mark.parametrize("version", FINE)
async def test_s23_ordinary_versions_are_welcome(version: str) -> None:
    async with Harness(TOKENS) as h:
        got, code = await raw_connect(h.address, hello(version), read=1)
        assert code is None, code
        assert got[0].WhichOneof("kind") == "welcome" and got[0].welcome.bot_id == 1


# -- Hello.bot_name: any script, but nothing that hides or reorders what is shown ---------------------------

NAME_SPOOFS = [
    "greedy\u202e",  # right-to-left override
    "a\u2066b\u2069",  # isolates
    "bot\u200b",  # zero-width space
    "\u200dbot",  # a joiner with nothing before it
    "bot\u200c",  # a non-joiner with nothing after it
    "a\u200d\u200db",  # two joiners
    "a\u200d\u202eb",  # a joiner next to a bidi override
    "a\u200d\ufe0f\u200d\ufe0f\u200db",  # joiners and variation selectors: an invisible run
    "a" + "\u0301" * 9,  # a tower of combining marks drawn over the lines around it
    "\u0301abc",  # a combining mark first: it lands on whatever is printed before the name
    "\u3164",  # a Hangul filler: a blank name
    "x\u115fy",  # another filler
    "bot\ufdd0",  # a noncharacter
    "\U000e0067\U000e0062",  # tag characters without the flag they belong to
    "\ufeffbot",  # byte-order mark
    "bot\u0000",  # NUL
    "bot\nHouse-greedy",  # newline: a second line in a terminal or a log
    "bot\x1b[2J",  # terminal escape
    "a\u2028b",  # line separator
    "a\u2029b",  # paragraph separator
    "a\ue000",  # private use
    "a\U000e0001",  # language tag (a format character)
    "x" * 101,  # over the cap
]
NAME_FINE = ["", "random", "Blümchen — v2 (search)", "Blu\u0308mchen", "花のボット", "🌸 bot", "n" * 100,
             "<b>shown as text</b>", "\U0001f469\u200d\U0001f4bb coder",  # an emoji ZWJ sequence
             "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, with the non-joiner its spelling needs
             "\U0001f3f3\ufe0f\u200d\U0001f308",  # the rainbow flag
             "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # the flag of England (tags)
             "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # a skin tone in a ZWJ sequence
             "Nguye\u0302\u0303n",  # Vietnamese, two marks decomposed
             "\U0001fae8 new emoji"]  # Unicode 15: unassigned to some Pythons, taken as shown


def named(name: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token="tok-a", bot_name=name, bot_version="1", max_concurrent_matches=1))


@pytest.mark.parametrize("name", NAME_SPOOFS, ids=[ascii(n)[:30] for n in NAME_SPOOFS])
async def test_a_name_that_hides_or_reorders_text_is_refused_invalid_argument(name: str) -> None:
    await assert_refused(named(name), "Hello.bot_name")


def test_the_refusal_names_the_character_counted_from_1() -> None:
    from referee.handshake import name_problem

    assert name_problem("Bad\nName").endswith("character 4 (U+000A unnamed)")
    assert "8 combining marks in a row: character 10 (U+0301" in name_problem("a" + "\u0301" * 9)
    assert name_problem("ab\u202e").endswith("character 3 (U+202E RIGHT-TO-LEFT OVERRIDE)")


@pytest.mark.parametrize("name", NAME_FINE, ids=[ascii(n)[:30] for n in NAME_FINE])
async def test_names_in_any_script_are_welcome_and_kept_whole(name: str) -> None:
    from bots.reference import RandomBot

    bot = RandomBot(seed=1, name=name)
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-a")
        await h.wait_sessions(1)
        assert h.core is not None
        assert [s.name for s in h.core.registry.sessions()] == [name]
        # the session is registered before its Welcome is read: wait for the bot to read it
        await async_wait_until(lambda: bot.stats.welcomes >= 1, what="the bot reads its Welcome")
    assert bot.stats.welcomes == 1


async def test_the_sdk_stops_at_a_refused_hello_instead_of_reconnecting() -> None:
    """A refused name or version is as permanent as a refused token: ``arun`` raises at once (it used to
    reconnect forever, printing "cannot connect" as if the network were at fault)."""
    from bots.reference import RandomBot
    from bots.sdk import HelloRefusedError

    async with Harness(TOKENS) as h:
        for bot, what in ((RandomBot(seed=1, name="Bad\nName"), r"Hello.bot_name .* character 4 \(U\+000A"),
                          (RandomBot(seed=1, version="1.0\u202e"), r"Hello.bot_version")):
            with pytest.raises(HelloRefusedError, match=what):
                await asyncio.wait_for(bot.arun(h.address, "tok-a", initial_backoff_s=0.05), 10)
            assert bot.stats.welcomes == 0


def test_parterre_bot_run_says_the_hello_was_refused_and_exits(tmp_path) -> None:
    """The command line: one line naming the character, exit status 2, no reconnect loop."""
    import os
    import subprocess
    import sys

    from referee.testing import ThreadedReferee

    with ThreadedReferee(TOKENS) as ref:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARTERRE_")} | {"PARTERRE_HOME": str(tmp_path)}
        proc = subprocess.run([sys.executable, "-m", "parterre.cli", "bot", "run", "random", "--address", ref.address,
                               "--token", "tok-a", "--name", "evil\u202e"], capture_output=True, text=True, timeout=60,
                              env=env)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "refused this bot's Hello" in proc.stderr and "U+202E RIGHT-TO-LEFT OVERRIDE" in proc.stderr
    assert "\u202e" not in proc.stderr  # the name is never printed raw
    assert "reconnect attempt" not in proc.stderr
