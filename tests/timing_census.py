"""Census of waiting and wall-clock habits in the test modules.

Run ``python tests/timing_census.py`` (``-v`` lists each finding). It counts, by
reading each ``tests/<room>/test_*.py`` (and every ``conftest.py``) with :mod:`ast`:

* fixed sleeps in test bodies: ``time.sleep(c)`` / ``await asyncio.sleep(c)``
  with a constant ``c`` other than 0 (a yield to the event loop), written directly in a ``test_*`` function or a
  fixture (not in a function nested inside one: those are helper bots and
  servers whose pause *is* the behaviour under test, e.g. a bot thinking
  for 100 ms), and not in the body of a ``while`` loop (a polling interval
  of a loop that waits on a condition);
* wall-clock asserts: ``assert`` statements that read a
  ``time.monotonic()`` / ``time.perf_counter()`` / ``time.time()`` delta,
  directly or through a local name assigned from one;
* two-sided windows: such asserts whose comparison bounds the delta from
  both sides (``lo <= took < hi``, or ``lo < took and took < hi``);
* fixtures defined under the same name in more than one module (including
  ``conftest.py``), and how many definitions those names have in all.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

CLOCKS = {"monotonic", "perf_counter", "time"}


def _is_sleep(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name)
            and f.value.id in {"time", "asyncio"})


def _is_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BinOp):
        return _is_constant(node.left) and _is_constant(node.right)
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return isinstance(node, ast.Name) and node.id.isupper()


def _is_zero(node: ast.expr) -> bool:
    """``sleep(0)``: a yield to the event loop, not a wait."""
    return isinstance(node, ast.Constant) and node.value == 0


def _is_clock_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCKS and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "time")


def _clock_delta(node: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
               and (_is_clock_call(n.left) or _is_clock_call(n.right)) for n in ast.walk(node))


def _is_fixture(fn: ast.AST) -> bool:
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _own_nodes(fn: ast.AST, in_while: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Nodes of ``fn``'s own body (not of nested functions), with a flag for ``while`` bodies."""
    for child in ast.iter_child_nodes(fn):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield child, in_while
        yield from _own_nodes(child, in_while or isinstance(child, ast.While))


def _delta_names(fn: ast.AST, timers: dict[str, set[int | None]]) -> set[str]:
    """Local names of ``fn`` holding a clock delta, or the timed part of a timing helper's result."""
    names: set[str] = set()
    for node, _ in _own_nodes(fn):
        if not isinstance(node, ast.Assign):
            continue
        if _clock_delta(node.value) or any(isinstance(x, ast.Name) and x.id in names
                                           for x in ast.walk(node.value)):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            continue
        called = {c.func.id for c in ast.walk(node.value)
                  if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)} & timers.keys()
        for name in called:
            for target in node.targets:
                if isinstance(target, ast.Name) and None in timers[name]:
                    names.add(target.id)
                elif isinstance(target, ast.Tuple):
                    names |= {e.id for i, e in enumerate(target.elts)
                              if i in timers[name] and isinstance(e, ast.Name)}
    return names


def _timers(tree: ast.Module) -> dict[str, set[int | None]]:
    """Functions returning a clock delta: name -> positions of it in the returned tuple (None: all)."""
    timers: dict[str, set[int | None]] = {}
    funcs = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    for _ in range(3):  # helpers calling helpers
        for fn in funcs:
            names = _delta_names(fn, timers)
            for node, _w in _own_nodes(fn):
                if not (isinstance(node, ast.Return) and node.value is not None):
                    continue
                parts = node.value.elts if isinstance(node.value, ast.Tuple) else None
                if parts is None:
                    if _clock_delta(node.value) or (isinstance(node.value, ast.Name) and node.value.id in names):
                        timers.setdefault(fn.name, set()).add(None)
                    continue
                for i, part in enumerate(parts):
                    if _clock_delta(part) or (isinstance(part, ast.Name) and part.id in names):
                        timers.setdefault(fn.name, set()).add(i)
    return timers


def _window(test: ast.expr, names: set[str]) -> bool:
    def about_delta(n: ast.AST) -> bool:
        return _clock_delta(n) or any(isinstance(x, ast.Name) and x.id in names for x in ast.walk(n))

    if isinstance(test, ast.Compare) and len(test.ops) >= 2:
        return about_delta(test)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        sides = [v for v in test.values if isinstance(v, ast.Compare) and about_delta(v)]
        return len(sides) >= 2
    return False


def census(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"sleeps": [], "wall_asserts": [], "windows": [], "fixtures": []}
    fixtures: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if not (path.name.startswith("test_") or path.name == "conftest.py"):
            continue
        name = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        timers = _timers(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if _is_fixture(fn):
                fixtures[fn.name].append(name)
            if not (fn.name.startswith("test_") or _is_fixture(fn)):
                continue
            deltas = _delta_names(fn, timers)
            for node, in_while in _own_nodes(fn):
                if (isinstance(node, ast.Call) and _is_sleep(node) and node.args
                        and _is_constant(node.args[0]) and not _is_zero(node.args[0]) and not in_while):
                    found["sleeps"].append(f"{name}:{node.lineno}")
            for node, _ in _own_nodes(fn):
                if isinstance(node, ast.Assert) and (
                        _clock_delta(node.test)
                        or any(isinstance(x, ast.Name) and x.id in deltas for x in ast.walk(node.test))):
                    found["wall_asserts"].append(f"{name}:{node.lineno}")
                    if _window(node.test, deltas):
                        found["windows"].append(f"{name}:{node.lineno}")
    for name, where in sorted(fixtures.items()):
        if len(set(where)) > 1:
            found["fixtures"].append(f"{name}: {', '.join(sorted(set(where)))}")
    return found


def main(argv: list[str]) -> int:
    found = census(Path(__file__).parent)
    for kind, items in found.items():
        print(f"{kind}: {len(items)}")
        if kind == "fixtures":  # the definitions those names have in all
            print(f"fixture_definitions: {sum(len(i.split(': ', 1)[1].split(', ')) for i in items)}")
        if "-v" in argv:
            for item in items:
                print(f"  {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
