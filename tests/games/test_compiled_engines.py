"""The mypyc-compiled engine modules against their pure-Python source.

See docs/architecture.md, "Engines: trusted actions and the compiled build".

``make install`` (with a C compiler; ``make compiled`` forces it, setup.py)
compiles the modules named in setup.py's ``COMPILED``: the hot paths of all
three engines. An extension module is then imported instead of the ``.py``
beside it. The ``.py`` is the reference: two subprocesses play the same
seeded random games in every shipped variant of every game, one importing the
compiled modules and one forced onto the source files (a meta-path finder
that loads those modules from their ``.py``), and every step's legal actions,
the action taken, the observations (playing on from a clone every 10 steps),
the final state hash and the outcome must be identical. Skipped when nothing
is compiled (a machine without a C compiler); CI builds both and runs this.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from games.floriferous.game import FloriferousGame
from games.flowar.game import FlowarGame
from games.lafleur.game import LaFleurGame
from games.native import stale_extensions

ROOT = Path(__file__).resolve().parents[2]


def _compiled_list() -> list[str]:
    """setup.py's COMPILED (read as data: importing setup.py would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets):
            files = ast.literal_eval(node.value)
            return [f.removesuffix(".py").replace("/", ".") for f in files]
    raise AssertionError("setup.py has no COMPILED list")


MODULES = _compiled_list()
GAMES: dict[str, tuple[tuple[str, ...], int]] = {
    "floriferous": (FloriferousGame.VARIANTS, 6),
    "lafleur": (LaFleurGame.VARIANTS, 2),
    "flowar": (FlowarGame.VARIANTS, 2),
}
"""Game -> (variants played, random games per variant)."""

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


def _run(mode: str, variants: tuple[str, ...], games: int) -> dict[str, dict[str, str]]:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode, json.dumps(MODULES), json.dumps(list(variants)), str(games)],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )
    assert out.returncode == 0, f"{mode} run failed:\n{out.stderr[-3000:]}"
    result: dict[str, dict[str, str]] = json.loads(out.stdout)
    return result


def test_setup_compiles_the_hot_modules_of_every_engine() -> None:
    for game in GAMES:
        assert any(m.startswith(f"games.{game}.") for m in MODULES), f"nothing of {game} in setup.py COMPILED"
        assert f"games.{game}.state" in MODULES


@pytest.mark.skipif(not any(_compiled(m) for m in MODULES), reason="engines not compiled (no C compiler)")
@pytest.mark.parametrize("game", sorted(GAMES))
def test_compiled_engine_plays_exactly_as_the_source(game: str) -> None:
    variants, games = GAMES[game]
    compiled = _run("compiled", variants, games)
    pure = _run("pure", variants, games)
    mine = [m for m in MODULES if m.startswith(f"games.{game}.")]
    assert all(compiled["files"][m].endswith(".so") for m in mine), compiled["files"]
    assert all(f.endswith(".py") for f in pure["files"].values()), pure["files"]
    assert compiled["digests"] == pure["digests"]
    assert set(compiled["digests"]) == set(variants)


def test_pure_switch_loads_every_engine_module_from_source() -> None:
    """``PARTERRE_ENGINES=pure`` (CI's second run of the engine tests) imports the .py files, compiled or not."""
    code = ("import json, importlib, sys; "
            "print(json.dumps({m: importlib.import_module(m).__file__ for m in sys.argv[1:]}))")
    out = subprocess.run([sys.executable, "-c", code, *MODULES], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=120, env={**os.environ, "PARTERRE_ENGINES": "pure"})
    files = json.loads(out.stdout)
    assert sorted(files) == sorted(MODULES)
    assert all(f.endswith(".py") for f in files.values()), files


def test_a_source_edited_after_the_build_is_noticed(tmp_path: Path) -> None:
    """An extension older than its .py is reported (games then imports the sources); a fresh one is not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name, so_age, py_age in (("fresh", 10, 20), ("edited", 20, 10)):
        so, py = pkg / f"{name}{suffix}", pkg / f"{name}.py"
        so.write_bytes(b"")
        py.write_text("")
        now = time.time()
        os.utime(so, (now - so_age, now - so_age))
        os.utime(py, (now - py_age, now - py_age))
    assert stale_extensions(str(tmp_path)) == [os.path.join("pkg", "edited.py")]


def test_an_interpreted_module_of_a_compiled_package_edited_after_the_build_is_noticed(tmp_path: Path) -> None:
    """mypyc builds the Final literals of the modules a compiled one imports into it: an edit to an
    interpreted ``constants.py`` of a game package makes the build stale; an edit to a plain module
    of the top folder (the registry, say) beside a compiled one does not."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    pkg = tmp_path / "game"
    pkg.mkdir()
    now = time.time()
    for path, age in ((pkg / f"state{suffix}", 20), (pkg / "state.py", 30), (pkg / "constants.py", 10),
                      (tmp_path / f"trusted{suffix}", 20), (tmp_path / "trusted.py", 30),
                      (tmp_path / "registry.py", 5)):
        if path.suffix == ".py":
            path.write_text("")
        else:
            path.write_bytes(b"")
        os.utime(path, (now - age, now - age))
    assert stale_extensions(str(tmp_path)) == [os.path.join("game", "constants.py")]
