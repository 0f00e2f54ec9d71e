"""Structure checks (docs/hygiene.md), read from the source with :mod:`ast`.

- **No module over 600 lines** outside ``tests/`` and data. Data are the
  generated protobuf modules (``*_pb2.py``, ``*_pb2_grpc.py``, ``*_pb2.pyi``)
  and card tables, recognised by their content: every top-level statement is
  a docstring, an import, or an assignment of a literal (what
  :func:`ast.literal_eval` accepts), so a module of code cannot pass as data.
- **One helper for "a referee in a background thread"**
  (:class:`referee.testing.ThreadedReferee`): no other module, tests included, starts a
  ``threading.Thread`` whose target runs an event loop (``asyncio.run``,
  ``run_until_complete``) in a module that builds a referee (``Harness`` or
  ``create_server``), the shape of the four hand-written copies it replaced.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MAX_LINES = 600
"""docs/hygiene.md: no module over ~600 lines unless it is data."""

SKIP_DIRS = {"node_modules", "__pycache__", "build", "dist"}
"""Folders never scanned (besides hidden ones such as ``.venv``): other tools' trees."""

REFEREE_HELPER = Path("referee/testing.py")
"""Where the one threaded-referee helper lives."""


def _python_files(root: Path, *, tests: bool) -> Iterator[Path]:
    """Every ``.py``/``.pyi`` below ``root``; with ``tests=False`` not those under ``tests/``."""
    skip = SKIP_DIRS if tests else SKIP_DIRS | {"tests"}
    for path in sorted(root.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        rel = path.relative_to(root)
        if any(part.startswith(".") or part in skip for part in rel.parts[:-1]):
            continue
        yield path


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def is_data(path: Path) -> bool:
    """A generated protobuf module, or a module of literal tables only (docstrings, imports, literals)."""
    if "_pb2" in path.name:
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.Assign) and _is_literal(stmt.value):
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and _is_literal(stmt.value):
            continue
        return False
    return True


def oversized(root: Path) -> list[str]:
    """``"path: N lines"`` of every module below ``root`` over :data:`MAX_LINES` that is not data."""
    out = []
    for path in _python_files(root, tests=False):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and not is_data(path):
            out.append(f"{path.relative_to(root)}: {n} lines")
    return out


def _runs_event_loop(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if (owner, name) == ("asyncio", "run") or name == "run_until_complete":
                return True
    return False


def threaded_referees(root: Path) -> list[str]:
    """``"path:line"`` of each ``threading.Thread(target=...)`` whose target runs an event loop,
    in a module that builds a referee (``Harness`` or ``create_server``), outside :data:`REFEREE_HELPER`."""
    found = []
    for path in _python_files(root, tests=True):
        if path.relative_to(root) == REFEREE_HELPER or path.suffix != ".py":
            continue
        source = path.read_text(encoding="utf-8")
        if "Harness" not in source and "create_server" not in source:
            continue
        tree = ast.parse(source, filename=str(path))
        functions = {f.name: f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and (
                    (isinstance(call.func, ast.Attribute) and call.func.attr == "Thread")
                    or (isinstance(call.func, ast.Name) and call.func.id == "Thread"))):
                continue
            for kw in call.keywords:
                if kw.arg != "target":
                    continue
                target = kw.value
                if isinstance(target, ast.Attribute):  # self._thread_main
                    body: ast.AST | None = functions.get(target.attr)
                elif isinstance(target, ast.Name):
                    body = functions.get(target.id)
                else:  # a lambda
                    body = target
                if body is not None and _runs_event_loop(body):
                    found.append(f"{path.relative_to(root)}:{call.lineno}")
    return found


# -- the checks on the tree ----------------------------------------------------------------------

def test_no_module_over_600_lines_outside_tests_and_data() -> None:
    # Generated protobuf modules and data files (is_data) are exempt; the rest must stay under 600 lines.
    assert oversized(ROOT) == []


def test_no_hand_written_threaded_referee_outside_referee_testing() -> None:
    assert threaded_referees(ROOT) == []


# -- the checks can fail -------------------------------------------------------------------------

def test_the_scan_sees_the_tree() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in _python_files(ROOT, tests=False)}
    assert {"games/api.py", "parterre/cli.py", "proto/parterre/v1/referee_pb2.pyi", "bench/bench_games.py"} <= files
    assert not any(f.startswith(("tests/", ".venv/")) for f in files)
    with_tests = {p.relative_to(ROOT).as_posix() for p in _python_files(ROOT, tests=True)}
    assert {"tests/ladder/test_house.py", "tests/fixtures/toy_game.py"} <= with_tests
    assert is_data(ROOT / "proto/parterre/v1/referee_pb2.py")
    assert not is_data(ROOT / "games/api.py")


def test_a_long_module_of_code_is_found_and_a_literal_table_is_not(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "long.py").write_text("".join(f"def f{i}() -> int:\n    return {i}\n" for i in range(301)))
    (pkg / "short.py").write_text("x = 1\n" * MAX_LINES)
    (pkg / "cards.py").write_text('"""A card table."""\n\nCARDS = [\n' + "    {'id': 1},\n" * 700 + "]\n")
    (pkg / "mixed.py").write_text("CARDS = [\n" + "    1,\n" * 700 + "]\nprint(CARDS)\n")
    (pkg / "big_pb2.py").write_text("x = f()\n" * 700)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_long.py").write_text("x = f()\n" * 700)
    assert oversized(tmp_path) == ["pkg/long.py: 602 lines", "pkg/mixed.py: 703 lines"]


def test_a_hand_written_threaded_referee_is_found(tmp_path: Path) -> None:
    (tmp_path / "copy_lambda.py").write_text(
        "import asyncio, threading\nfrom referee.testing import Harness\n"
        "async def main():\n    async with Harness({}) as h:\n        pass\n"
        "t = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)\n")
    (tmp_path / "copy_method.py").write_text(
        "import asyncio, threading\nfrom referee.server import create_server\n"
        "class R:\n    def __init__(self):\n        self._t = threading.Thread(target=self._thread_main)\n"
        "    def _thread_main(self):\n        asyncio.run(self._main())\n"
        "    async def _main(self):\n        await create_server('127.0.0.1:0')\n")
    (tmp_path / "reader.py").write_text(  # a thread that runs no event loop is fine
        "import threading\nfrom referee.testing import Harness\n"
        "def read():\n    pass\nthreading.Thread(target=read).start()\n")
    (tmp_path / "no_referee.py").write_text(  # an event loop in a thread, but no referee
        "import asyncio, threading\nthreading.Thread(target=lambda: asyncio.run(f())).start()\n")
    assert threaded_referees(tmp_path) == ["copy_lambda.py:6", "copy_method.py:5"]


# -- every type: ignore says why --------------------------------------------------------------------

def unexplained_ignores(root: Path) -> list[str]:
    """``path:line`` of each ``# type: ignore`` with no error code, or with no reason: a comment after it on
    the same line, or a comment line just above that starts ``# the type: ignore below:``. Generated
    protobuf modules (``*_pb2*``) are exempt."""
    out = []
    for path in _python_files(root, tests=True):
        if "_pb2" in path.name:
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        comments = {tok.start[0] - 1: tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                    if tok.type == tokenize.COMMENT}  # comments only: not the same words inside a string
        for i, line in sorted(comments.items()):
            at = line.find("# type: ignore")
            if at < 0:
                continue
            rest = line[at + len("# type: ignore"):]
            coded = rest.startswith("[") and "]" in rest
            after = rest[rest.find("]") + 1:] if coded else rest
            above = lines[i - 1].strip() if i else ""
            if not coded or not (after.strip().startswith("#") or above.startswith("# the type: ignore below:")):
                out.append(f"{path.relative_to(root).as_posix()}:{i + 1}")
    return out


def test_every_type_ignore_carries_its_code_and_a_reason() -> None:
    assert unexplained_ignores(ROOT) == []


def test_an_unexplained_ignore_is_found(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "a = f()  # type: ignore[attr-defined]\n"  # no reason
        "b = g()  # type: ignore\n"  # no code
        "c = h()  # type: ignore[arg-type]  # h takes a str here\n"
        "# the type: ignore below: the union is narrowed by the phase\n"
        "d = k()  # type: ignore[union-attr]\n")
    assert unexplained_ignores(tmp_path) == ["m.py:1", "m.py:2"]
