"""The Python SDK as its own distribution (bots/python) and its example bots.

Given ``bots/python`` (the ``parterre-bot`` distribution), when its wheel is
built offline, then it holds the SDK and the wire stubs and requires only
grpcio and protobuf, and the SDK imports from it without the server's
packages. Given the per-game example bots, when each plays its game against
the random bot, then every seat finishes ``normal`` and the referee keeps the
example's debug text beside each of its decisions, naming the action the
replay records at that step (docs/bots.md, "Debug text").
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from bots.reference import RandomBot
from games.registry import game_class, game_names
from referee.testing import Harness, replay_of

ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = ROOT / "bots" / "python"
EXAMPLES = {"floriferous": "FloriferousBot", "lafleur": "LaFleurBot", "flowar": "FlowarBot"}
SERVER_PACKAGES = ("games", "referee", "ladder", "web", "workers", "parterre")


def _example(game: str) -> ModuleType:
    path = SDK_DIR / "examples" / f"{game}_bot.py"
    spec = importlib.util.spec_from_file_location(f"example_{game}_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_real_game_has_an_example_bot():
    real = {g for g in game_names() if game_class(g).__module__.startswith("games.")}
    assert real <= set(EXAMPLES), f"write bots/python/examples/<game>_bot.py for {sorted(real - set(EXAMPLES))}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Build from a copy of bots/ and proto/ (setuptools writes build/ and *.egg-info beside the sources).
    src = tmp_path_factory.mktemp("src")
    skip = shutil.ignore_patterns("node_modules", "build", "__pycache__", "*.egg-info", "go", "node")
    shutil.copytree(ROOT / "bots", src / "bots", ignore=skip)
    shutil.copytree(ROOT / "proto", src / "proto", ignore=skip)
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out),
         str(src / "bots" / "python")], capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (path,) = out.glob("parterre_bot-*.whl")
    return path


def test_the_sdk_wheel_holds_the_sdk_and_stubs_and_needs_only_grpc_and_protobuf(wheel: Path, tmp_path: Path):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = next(zf.read(n).decode() for n in names if n.endswith("/METADATA"))
        zf.extractall(tmp_path / "site")
    for needed in ("bots/sdk.py", "bots/reference.py", "bots/stdio.py", "proto/parterre/v1/referee_pb2.py",
                   "proto/parterre/v1/floriferous_pb2.py"):
        assert needed in names
    assert not any(n.split("/")[0] in SERVER_PACKAGES for n in names)
    requires = sorted(line.split(":", 1)[1].strip() for line in metadata.splitlines()
                      if line.startswith("Requires-Dist:"))
    assert [r.split(">")[0].split("<")[0].strip() for r in requires] == ["grpcio", "protobuf"]
    # Import the SDK from the unpacked wheel alone (first on sys.path), with the server's packages hidden.
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path / 'site')!r})\n"
        f"class Hide:\n"
        f"    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {SERVER_PACKAGES!r}: raise ImportError('hidden: ' + name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "import bots.sdk, bots.reference, bots.stdio\n"
        f"assert bots.sdk.__file__.startswith({str(tmp_path / 'site')!r}), bots.sdk.__file__\n"
        "bot = bots.reference.RandomBot(seed=1)\n"
        "try:\n"
        "    bots.reference.GreedyBot(seed=1)\n"
        "except ImportError as exc:\n"
        "    print('ok', type(exc).__name__)\n"  # greedy needs games/: it must not quietly play random
        "else:\n"
        "    print('GreedyBot built without its strategies')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() in ("ok ImportError", "ok ModuleNotFoundError"), \
        run.stdout + run.stderr


@pytest.mark.parametrize("game", sorted(EXAMPLES))
async def test_example_bot_plays_its_game(game):
    if game not in game_names():
        pytest.skip(f"{game} is not registered")
    bot = getattr(_example(game), EXAMPLES[game])(seed=1, max_concurrent_matches=2)
    async with Harness({"tok-ex": 1, "tok-rand": 2}) as h:
        h.start_bot(bot, "tok-ex")
        h.start_bot(RandomBot(seed=2, max_concurrent_matches=2), "tok-rand")
        await h.wait_sessions(1)
        await h.wait_sessions(2)
        results = [await h.run_match(10 + i, f"{game}(players=2)", [1, 2] if i % 2 == 0 else [2, 1], seed=f"s{i}")
                   for i in range(4)]
    for r in results:
        assert r.status == "finished" and [s.verdict for s in r.seats] == ["normal", "normal"], r.reason
    for i, r in enumerate(results):  # each example writes debug text with each decision (docs/bots.md, "Debug text")
        mine, theirs = r.seats[i % 2], r.seats[1 - i % 2]
        assert len(mine.debug_notes) == mine.decisions > 0 and not theirs.debug_notes
        steps = replay_of(r)["steps"]
        assert all(n.text.startswith("best of ") and n.text.endswith(f"; chose {steps[n.step]['label']}")
                   and steps[n.step]["player"] == i % 2 for n in mine.debug_notes)
