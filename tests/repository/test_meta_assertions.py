"""Every test can fail: each ``test_*`` function asserts something.

An AST check over ``tests/``: a test function passes when its body has an
``assert``, a ``pytest.raises`` / ``pytest.warns`` / ``pytest.fail``, a
``.assert_*`` call (unittest.mock), or a call to a helper that itself passes
this check (helpers are the functions and methods defined anywhere under
``tests/``, followed to a fixed point), or to one of :data:`RAISING_CHECKS`,
library functions whose documented job is to raise when a check fails.

A test that only runs code ("it did not crash") is flagged: give it an oracle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

PYTEST_CHECKS = frozenset({"raises", "warns", "fail", "deprecated_call"})
"""``pytest.<name>`` calls that assert."""
RAISING_CHECKS = frozenset({
    "verify",  # referee.replay.verify: raises ReplayError when a replay does not re-verify
    "expect",  # playwright's expect(...).to_*: raises AssertionError on a mismatch
    "check_call",  # subprocess.check_call: raises CalledProcessError on a non-zero exit
    "validate",  # jsonschema-style validators: raise ValidationError on a bad document
})
"""Calls (by the called function's or method's name) that raise when their check fails."""


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_pytest_check(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in PYTEST_CHECKS
            and isinstance(func.value, ast.Name) and func.value.id == "pytest")


def _asserts_directly(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if _is_pytest_check(node) or name.startswith("assert_") or name in RAISING_CHECKS:
                return True
    return False


def _calls(fn: ast.AST) -> set[str]:
    return {_called_name(n) for n in ast.walk(fn) if isinstance(n, ast.Call)} - {""}


def _modules() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), str(p)) for p in sorted(TESTS.rglob("*.py"))}


def _module_name(path: Path) -> str:
    """The name ``path`` is imported by: a ``test_*.py`` by its own (its folder is on ``sys.path``:
    pyproject.toml, ``pythonpath``), any other module by its dotted path under ``tests/``."""
    if path.name.startswith("test_"):
        return path.stem
    return ".".join(path.relative_to(TESTS).with_suffix("").parts)


def _imported_test_modules(tree: ast.Module, known: set[str]) -> set[str]:
    """The modules under ``tests/`` (``fixtures.toy_game``, ``fixtures.web_helpers``, ``test_hosted``, ...)
    that ``tree`` imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in known:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names if alias.name in known}
    return out


def asserting_helpers(modules: dict[Path, ast.Module]) -> dict[Path, set[str]]:
    """Per module: names of the functions it can reach (its own, and those of the
    ``tests/`` modules it imports) that assert, directly or through another such function."""
    by_name = {_module_name(p): p for p in modules}
    own = {p: {fn.name: fn for fn in _functions(tree)} for p, tree in modules.items()}
    scope: dict[Path, dict[str, list[ast.AST]]] = {}
    for path, tree in modules.items():
        reach: dict[str, list[ast.AST]] = {}
        for other in [path, *(by_name[m] for m in _imported_test_modules(tree, set(by_name)))]:
            for name, fn in own[other].items():
                reach.setdefault(name, []).append(fn)
        scope[path] = reach
    good = {p: {n for n, fns in reach.items() if any(_asserts_directly(f) for f in fns)} for p, reach in scope.items()}
    changed = True
    while changed:
        changed = False
        for path, reach in scope.items():
            for name, fns in reach.items():
                if name not in good[path] and any(_calls(f) & good[path] for f in fns):
                    good[path].add(name)
                    changed = True
    return good


def unasserted_tests(modules: dict[Path, ast.Module]) -> list[str]:
    """``path::name`` of every ``test_*`` function that cannot fail by this check."""
    helpers = asserting_helpers(modules)
    flagged = []
    for path, tree in modules.items():
        if not path.name.startswith("test_"):
            continue
        for fn in _functions(tree):
            if fn.name.startswith("test_") and not _asserts_directly(fn) and not _calls(fn) & helpers[path]:
                flagged.append(f"{path.name}::{fn.name}")
    return flagged


def test_every_test_function_asserts() -> None:
    flagged = unasserted_tests(_modules())
    assert not flagged, "tests with no assertion (give each an oracle):\n" + "\n".join(flagged)


def test_the_check_flags_a_test_without_an_assertion() -> None:
    """The meta-test itself can fail: a body that only calls code is flagged; one that
    asserts, expects an exception, or calls an asserting helper is not."""
    source = (
        "import pytest\n"
        "def helper(x):\n    assert x\n"
        "def indirect(x):\n    helper(x)\n"
        "def test_runs_only():\n    sum([1, 2])\n"
        "def test_asserts():\n    assert sum([1, 2]) == 3\n"
        "def test_raises():\n    with pytest.raises(ZeroDivisionError):\n        1 / 0\n"
        "def test_via_helper():\n    indirect(True)\n"
    )
    path = TESTS / "test_sample.py"  # never written: the check reads the parsed tree
    modules = {path: ast.parse(source)}
    assert {"helper", "indirect"} <= asserting_helpers(modules)[path]
    assert unasserted_tests(modules) == ["test_sample.py::test_runs_only"]
