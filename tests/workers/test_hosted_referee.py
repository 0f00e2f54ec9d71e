"""A hosted bot through the stdio adapter and a real referee (docs/hosted.md).

The sandbox keeper's command line (``workers.hosting.validation.sandbox_command``) is given
to the stdio adapter exactly as ``parterre connect --exec`` takes any command —
here the hosted seat's adapter (``workers.hosting.seat.HostedSeat``), which also
waits for the child to be ready before it connects, as a worker's hosted seat
does (with the plain ``StdioBot`` the child's start-up was charged to the first
decision: a timeout in the first match under load): the referee sees an
ordinary bot. Oracle: the referee's own results and
verdicts; afterwards no process of any sandbox is left.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hosted import BOTS, no_sandbox_left

from bots.reference import RandomBot
from referee.testing import Harness
from workers.hosting.seat import HostedSeat
from workers.hosting.validation import sandbox_command

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                reason="needs bubblewrap and root (the workers' setting)")
TOKENS = {"tok-hosted": 1, "tok-rand": 2}


@pytest.fixture
def bot_dir() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="parterre-hosted-ref-", dir="/var/tmp"))
    base.chmod(0o711)
    d = base / "bot"
    d.mkdir(mode=0o755)
    shutil.copy(BOTS / "greedy.py", d / "greedy.py")
    (d / "greedy.py").chmod(0o644)
    os.environ["PARTERRE_HOSTED_DIR"] = str(base)
    yield d
    os.environ.pop("PARTERRE_HOSTED_DIR", None)
    shutil.rmtree(base, ignore_errors=True)


async def test_a_sandboxed_bot_plays_referee_matches_like_any_bot(bot_dir: Path, tmp_path: Path) -> None:
    command = sandbox_command(bot_dir, {"runtime": "python3.11", "command": ["python3.11", "greedy.py", "0"]},
                              {"wall_s": 120}, tmp_path / "stderr.log")
    bot = HostedSeat(command, log_dir=tmp_path, name="hosted", stop_grace_s=0.5)
    async with Harness(TOKENS) as h:
        h.start_bot(bot, "tok-hosted")
        h.start_bot(RandomBot(seed=3), "tok-rand")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        wins = 0
        for i in range(4):
            seats = [1, 2] if i % 2 == 0 else [2, 1]
            result = await h.run_match(400 + i, "floriferous(players=2)", seats)
            assert result.status == "finished", result.reason
            assert [s.verdict for s in result.seats] == ["normal", "normal"]
            wins += next(s.rank for s in result.seats if s.bot_id == 1) == 1
        assert wins >= 2  # greedy against random: a sanity check that the answers are the strategy's
    assert no_sandbox_left()
