"""No import cycle between modules of the referee, the bots, the protos and the game API (issue 13 §3).

Every ``import`` / ``from ... import`` of every module is read with :mod:`ast`,
function-local and ``TYPE_CHECKING`` imports included (a cycle hidden behind a
lazy import is still two modules that need each other). ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg``; the implicit
import of a package's ``__init__`` is not an edge.

Covers :data:`CHECKED`: ``referee``, ``bots``, ``proto``, the game API
(``games.api``, ``games.registry``, ``games.replay``) and ``games.floriferous``.
``tests/test_import_cycles.py`` does the same for ``ladder``, ``parterre`` and
``workers``; ``games.lafleur`` / ``games.flowar`` (the state <-> mixin
pattern) are not covered yet.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("games", "proto", "referee", "bots")
CHECKED = ("referee", "bots", "proto", "games.api", "games.registry", "games.replay", "games.floriferous")
"""Module name prefixes whose modules must form no cycle."""
SKIP_DIRS = {"node", "go", "cpp", "java", "__pycache__"}


def _modules() -> dict[str, Path]:
    out = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if SKIP_DIRS & set(rel.parts):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _edges(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                sub = f"{base}.{a.name}"
                target = sub if sub in MODULES else base
                if target in MODULES:
                    out.add(target)
    out.discard(name)
    return out


def _checked(name: str) -> bool:
    return any(name == c or name.startswith(c + ".") for c in CHECKED)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, set()) & graph.keys()):
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_the_modules_and_their_imports() -> None:
    graph = {n: _edges(n, p) for n, p in MODULES.items()}
    assert {"referee.server", "referee.core", "referee.cluster", "bots.sdk", "games.api"} <= set(graph)
    assert "referee.core" in graph["referee.server"]
    assert "referee.headers" in graph["referee.cluster"]
    assert "games.api" in graph["games.floriferous.state"]


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    planted = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}, "a.v": set()}
    assert cycles(planted) == [["a.x", "a.y", "a.z"]]


def test_no_import_cycle_between_modules() -> None:
    graph = {n: _edges(n, p) for n, p in MODULES.items() if _checked(n)}
    assert cycles(graph) == []
