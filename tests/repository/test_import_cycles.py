"""No import cycle between modules, and only the imports docs/architecture.md "Packages and arrows"
allows, read from the source.

Every ``import`` and ``from ... import`` of every module is read with
:mod:`ast` (function-local and ``TYPE_CHECKING`` imports included: a cycle
hidden behind a lazy import is still two modules that need each other). An
edge goes to the module named, or to ``package.name`` when ``name`` is a
submodule (``from ladder import db`` is an edge to ``ladder.db``). The
implicit import of a package's ``__init__`` before its submodules is not an
edge: otherwise every package that re-exports its modules would be a cycle.

Both checks cover every module of every first-party package (:data:`ALLOWED`:
``games`` with ``games/floriferous``, ``games/lafleur`` and ``games/flowar``,
``proto``, ``referee``, ``workers``, ``ladder``, ``web``, ``bots``, ``parterre``): the
cycle check looks for a strongly connected component of more than one module
in the whole graph (Tarjan); the arrows check follows docs/architecture.md, "Packages and arrows" ("arrows only
point left-to-right": the rules never import the server, the server never
imports the web site). :func:`test_every_python_file_is_scanned` makes sure no
package or module is left out by the file walk.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ALLOWED: dict[str, set[str]] = {
    "games": set(),
    "proto": set(),
    "referee": {"games", "proto"},
    "workers": {"games", "proto", "ladder", "bots"},
    "ladder": {"games", "proto"},
    "web": {"games", "proto", "ladder"},
    "bots": {"games", "proto"},
    "parterre": {"games", "proto", "referee", "workers", "ladder", "web", "bots"},
}
"""docs/architecture.md, "Packages and arrows": the first-party packages each package may import (besides itself)."""

SKIP_DIRS = {"node", "go", "cpp", "java", "__pycache__"}
"""Bot folders in other languages (``bots/node/`` ...) hold no Python modules of the project."""


def _module_files() -> dict[str, Path]:
    out = {}
    for top in ALLOWED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if SKIP_DIRS & set(rel.parts):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _module_files()


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported first-party module, line)`` for each import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES or alias.name.split(".")[0] in ALLOWED:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] not in ALLOWED:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in MODULES else base), node.lineno


GRAPH: dict[str, set[str]] = {
    name: {target for target, _ in _imports(name, path) if target != name} for name, path in MODULES.items()
}


def _cycles(nodes: set[str]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH.get(v, set()) & nodes):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_the_tree() -> None:
    """The scan is not vacuous: it finds the modules and the imports it should."""
    assert {"ladder.read.leaderboards", "parterre.commands.common", "workers.tasks", "games.api"} <= set(MODULES)
    assert "ladder.db" in GRAPH["ladder.read.leaderboards"]
    assert "parterre.commands.common" in GRAPH["parterre.commands.referee"]
    assert "ladder.matches" in GRAPH["workers.tasks"]  # `from ladder import matches as ladder_matches`
    assert {"referee.server", "referee.core", "referee.cluster", "bots.sdk", "games.floriferous.state"} <= set(MODULES)
    assert "referee.core" in GRAPH["referee.server"]
    assert "referee.headers" in GRAPH["referee.cluster"]
    assert "games.floriferous.phases" in GRAPH["games.floriferous.observation"]
    assert "games.lafleur.state_protocol" in GRAPH["games.lafleur.turns"]
    assert "games.flowar.state_protocol" in GRAPH["games.flowar.turn"]
    assert {"web.app", "workers.hosting.seats", "workers.hosting.sandbox"} <= set(MODULES)
    assert "ladder.db" in GRAPH["web.api"]
    assert "workers.hosting.validation" in GRAPH["workers.hosting.seats"]


def test_cycle_finder_finds_a_planted_cycle() -> None:
    planted = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    saved = dict(GRAPH)
    GRAPH.clear()
    GRAPH.update(planted)
    try:
        assert _cycles(set(planted)) == [["a.x", "a.y", "a.z"]]
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_every_python_file_is_scanned() -> None:
    """Every ``*.py`` of the first-party packages is a node (only the other languages' bot folders
    are skipped), and every game package's modules are among them."""
    on_disk = {
        path for top in ALLOWED for path in (ROOT / top).rglob("*.py")
        if not SKIP_DIRS & set(path.relative_to(ROOT).parts)
    }
    assert on_disk == set(MODULES.values())
    for game in ("floriferous", "lafleur", "flowar"):
        files = {p for p in (ROOT / "games" / game).glob("*.py")}
        assert files and files <= set(MODULES.values())


def test_cycle_finder_sees_a_type_checking_only_cycle(tmp_path: Path) -> None:
    """An import under ``if TYPE_CHECKING:`` (or inside a function) is an edge: the shape that hid
    ``games.flowar.state`` <-> ``games.flowar.state_protocol`` once."""
    path = tmp_path / "state_protocol.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from games.api import State\n"
                    "def f() -> None:\n    from games import registry\n")
    assert {t for t, _ in _imports("games.x.state_protocol", path)} == {"games.api", "games.registry"}


def test_no_import_cycle_between_modules() -> None:
    """No two modules of any first-party package need each other, directly or through others."""
    assert _cycles(set(MODULES)) == []


@pytest.mark.parametrize("top", sorted(ALLOWED))
def test_imports_follow_design_arrows(top: str) -> None:
    wrong = []
    for name, path in MODULES.items():
        if name.split(".")[0] != top:
            continue
        for target, line in _imports(name, path):
            other = target.split(".")[0]
            if other != top and other not in ALLOWED[top]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []
