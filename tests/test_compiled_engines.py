"""The mypyc-compiled engine modules against their pure-Python source (issue 19).

``make compiled`` (``PARTERRE_MYPYC=1``, setup.py) compiles the modules named
in setup.py's ``COMPILED``; an extension module is then imported instead of
the ``.py`` beside it. The ``.py`` is the reference: two subprocesses play
the same seeded random games in every variant, one importing the compiled
modules and one forced onto the source files (a meta-path finder that
loads those modules from their ``.py``), and every step's legal actions, the action taken, the observations (playing on
from a clone every 10 steps),
the final state hash and the outcome must be identical. Skipped when nothing
is compiled (the default install).
"""

from __future__ import annotations

import importlib.machinery
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

MODULES = ["games.floriferous.state", "games.floriferous.crow", "games.floriferous.summary",
           "games.floriferous.scoring", "games.floriferous.layout"]
VARIANTS = ["floriferous(players=1)", "floriferous(players=1,extended=true)", "floriferous(players=2)",
            "floriferous(players=3,competitive_bounties=true)", "floriferous(players=4)"]

_SCRIPT = r"""
import hashlib, importlib, json, random, sys
import importlib.util, os
class SourceOnly:  # imports the listed modules from their .py files, whatever is compiled beside them
    names = set(json.loads(sys.argv[2]))
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in cls.names:
            return None
        return importlib.util.spec_from_file_location(name, os.path.join(*name.split(".")) + ".py")
if sys.argv[1] == "pure":
    sys.meta_path.insert(0, SourceOnly)
from games.api import canonical_json
from games.registry import load_game
files = {m: importlib.import_module(m).__file__ for m in json.loads(sys.argv[2])}
digests = {}
for variant in json.loads(sys.argv[3]):
    game = load_game(variant)
    h = hashlib.sha256()
    for seed in range(int(sys.argv[4])):
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                action = state.sample_chance(rng)
            else:
                legal = state.legal_actions()
                h.update(canonical_json([a.to_json() for a in legal]).encode())
                h.update(canonical_json(state.observation(state.current_player())).encode())
                action = rng.choice(legal)
            h.update(action.canonical().encode())
            state.apply_action(action)
            if len(state.history) % 10 == 0:
                state = state.clone()  # search bots clone: the copy must play on identically
        h.update(state.state_hash().encode())
        h.update(canonical_json(state.outcome().to_json()).encode())
    digests[variant] = h.hexdigest()
print(json.dumps({"files": files, "digests": digests}))
"""


def _compiled(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return any(base.with_name(base.name + s).exists() for s in importlib.machinery.EXTENSION_SUFFIXES)


def _run(mode: str, games: int) -> dict[str, dict[str, str]]:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode, json.dumps(MODULES), json.dumps(VARIANTS), str(games)],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )
    assert out.returncode == 0, f"{mode} run failed:\n{out.stderr[-3000:]}"
    result: dict[str, dict[str, str]] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(not any(_compiled(m) for m in MODULES), reason="engines not compiled (make compiled)")
def test_compiled_floriferous_plays_exactly_as_the_source() -> None:
    compiled = _run("compiled", 8)
    pure = _run("pure", 8)
    assert all(f.endswith(".so") for f in compiled["files"].values()), compiled["files"]
    assert all(f.endswith(".py") for f in pure["files"].values()), pure["files"]
    assert compiled["digests"] == pure["digests"]
