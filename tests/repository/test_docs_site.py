"""The documentation is a site that builds cleanly, and what it names exists.

Two oracles that are not the docs themselves: MkDocs in strict mode (a page
missing from the nav, a broken link or anchor, a missing included file are
errors), and the repository's own tree (every backticked repository path in a
page is a file or folder, every ``tests/<room>/test_x.py::test_y`` a test function
defined in that file, and so is a ``::test_z`` that follows it on the same line).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The pages: the site's folder, the repository's README and every package README.
# CHANGELOG.md is history: it names what was true at the time.
DOC_FILES = sorted(
    {*ROOT.glob("docs/**/*.md"), ROOT / "README.md", *ROOT.glob("*/README.md")}
    - {p for p in ROOT.glob("*/README.md") if p.parent.name.startswith(".")}
)

# Top-level entries a reference may start with: the repository's own folders and files.
TOP_LEVEL = sorted(
    p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"
)
TOP_LEVEL = [name for name in TOP_LEVEL if name not in {".venv", "site", "build"}]

FENCE = re.compile(r"^ *(```|~~~).*?^ *\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A whole code span that is a repository path: it starts with a top-level folder
# (or is a root file), uses path characters only (placeholders such as `<game>`
# and anything with spaces are not references), may end in `/` (a folder), may be
# a glob (`proto/parterre/v1/*.proto`: at least one match), and may name test
# functions or classes after `::`. A bare `test_x.py` is the module of that name in a
# folder of tests/ (test module names are unique: docs/hygiene.md, "Where a test goes").
PATH_CHARS = r"[A-Za-z0-9_.*/-]"
REFERENCE = re.compile(
    r"(?P<path>(?:(?:" + "|".join(re.escape(n) for n in TOP_LEVEL) + r")(?:/" + PATH_CHARS + r"*)?"
    r"|test_\w+\.py))"
    r"(?P<names>(?:::[A-Za-z_]\w*(?:\[[^\]]*\])?)*)"
)
# A span of `::`-names alone (`::test_y`) names more tests of the last test file referenced before it
# on the same line (the fault table's `tests/x/test_a.py::test_b`, `::test_c`).
MORE_NAMES = re.compile(r"(?:::[A-Za-z_]\w*(?:\[[^\]]*\])?)+")


def references(text: str) -> list[tuple[str, str]]:
    """(path, `::`-names) of every code span of `text` that is wholly a repository path, or a `::`-name
    of the last Python file named before it on its line."""
    found = []
    for line in FENCE.sub("", text).splitlines():
        last_file = None
        for span in CODE_SPAN.findall(line):
            match = REFERENCE.fullmatch(span.strip())
            if match and ("/" in match["path"] or "." in match["path"] or match["names"]):
                found.append((match["path"], match["names"]))
                if match["path"].endswith(".py"):
                    last_file = match["path"]
            elif last_file is not None and MORE_NAMES.fullmatch(span.strip()):
                found.append((last_file, span.strip()))
    return found


# Spans that look like repository paths and are not: name -> what it is.
NOT_REPOSITORY_PATHS = {
    "parterre/worker.json": "the seccomp profile's name under the kubelet's seccomp root",
}


def ignored(path: str) -> bool:
    """Whether git ignores `path`: something a command creates (`.ci/buf`), never committed."""
    # A pattern ending in `/` matches folders only, so ask about the path as a folder too.
    return any(
        subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT).returncode == 0 for name in (path, path + "/")
    )


def broken(path: str, names: str) -> str | None:
    """Why the reference does not resolve, or None when it does."""
    if path in NOT_REPOSITORY_PATHS:
        return None
    if path.startswith("test_"):  # a bare test module name: the one file of that name under tests/
        found = sorted(ROOT.glob(f"tests/**/{path}"))
        if len(found) != 1:
            return f"{len(found)} files of that name under tests/"
        path = found[0].relative_to(ROOT).as_posix()
    if path.startswith("parterre/v1/"):  # a .proto named from its include path, `proto/`
        path = "proto/" + path
    if "*" in path:
        return None if list(ROOT.glob(path)) else "no file matches"
    target = ROOT / path
    if not target.exists():
        return None if ignored(path) else "no such file or folder"
    for name in (n.split("[")[0] for n in names.split("::") if n):
        source = target.read_text(encoding="utf-8")
        if not re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(name)}\b", source, re.MULTILINE):
            return f"{name} is not defined in {path}"
    return None


def test_the_reference_pattern_reads_paths_and_only_paths() -> None:
    text = (
        "See `games/api.py`, `referee/room.py`, `tests/repository/test_docs_site.py::test_the_site_builds_strictly`,\n"
        "`test_docs_site.py`, `docs/rules/`, `games/<game>/termination.py`, `make test`, `floriferous`.\n"
        "`tests/repository/test_hygiene.py::test_a`, `::test_b`, `docs/web.md`, `::test_c`;\n"
        "`::test_d` on a line of its own names nothing\n"
        "```sh\nls referee/no_such_file.py\n```\n"
    )
    assert references(text) == [
        ("games/api.py", ""),
        ("referee/room.py", ""),
        ("tests/repository/test_docs_site.py", "::test_the_site_builds_strictly"),
        ("test_docs_site.py", ""),
        ("docs/rules/", ""),
        ("tests/repository/test_hygiene.py", "::test_a"),
        ("tests/repository/test_hygiene.py", "::test_b"),
        ("docs/web.md", ""),
        ("tests/repository/test_hygiene.py", "::test_c"),
    ]
    assert broken("games/no_such_module.py", "") == "no such file or folder"
    assert broken("tests/repository/test_docs_site.py", "::test_no_such_test") is not None
    assert broken("test_docs_site.py", "::test_the_site_builds_strictly") is None  # found in tests/repository/
    assert broken("test_no_such_module.py", "") is not None
    assert broken("tests/test_docs_site.py", "") == "no such file or folder"  # the flat layout of before


def test_every_code_reference_in_the_docs_exists() -> None:
    assert len(DOC_FILES) > 10, DOC_FILES
    missing = []
    for page in DOC_FILES:
        for path, names in references(page.read_text(encoding="utf-8")):
            why = broken(path, names)
            if why:
                missing.append(f"{page.relative_to(ROOT)}: `{path}{names}`: {why}")
    assert not missing, "\n".join(missing)


# How a page cites what is not the repository or is history: the design notes and
# fault list kept outside it, issue and work-session numbers, the shared folder.
OUTSIDE_CITATION = re.compile(
    r"DESIGN(?:\.md|\s*§)|FAULTS\.md|\b[Ii]ssues?\s+#?\d|\b[Ss]essions?\s+\d|shared/(?:rulebooks|cards)|\(review\)"
)


def test_the_docs_cite_the_repository_and_the_rulebooks_only() -> None:
    assert OUTSIDE_CITATION.search("see DESIGN §4 and issue 17, as in session 5")
    assert not OUTSIDE_CITATION.search("a session cookie; `Session.write_loop`; fault F-20 of docs/faults.md")
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
        for page in [*DOC_FILES, ROOT / "CHANGELOG.md"]
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE_CITATION.search(line)
    ]
    assert not found, "\n".join(found)


def test_code_and_tests_cite_the_repository_and_the_rulebooks_only() -> None:
    """The same rule for every tracked source file (code, tests, templates, scripts, deployment)."""
    listed = subprocess.run(["git", "ls-files", "*.py", "*.html", "*.js", "*.sh", "*.yml", "*.yaml", "*.toml",
                             "*.proto", "*.go", "*.cc", "*.java", "Makefile", ".ci/run"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    this = Path(__file__).resolve()
    found = [
        f"{name}:{number}: {line.strip()[:120]}"
        for name in listed if (ROOT / name).resolve() != this and (ROOT / name).is_file()
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE_CITATION.search(line)
    ]
    assert len(listed) > 300 and not found, "\n".join(found)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is not installed: pip install -e '.[dev]'"
    built = subprocess.run(
        [mkdocs, "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(Path(sys.executable).parent), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    for page in ("index.html", "tutorial/index.html", "architecture/index.html", "faults/index.html"):
        assert (tmp_path / page).is_file(), page
