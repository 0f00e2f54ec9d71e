"""Every ``parterre`` command documents its options and shows their defaults.

The whole parser tree (``parterre/cli.py`` and every ``parterre/commands/*``
module) is walked: every argument and every subcommand has help text, and
every default worth stating appears on the option's line of the rendered
``--help`` (read from the text argparse prints, not from the formatter's code).
A default is worth stating when the option takes a value and the default is
neither None nor an empty string (those mean "not given", and the help says
what happens then, e.g. "default $PARTERRE_METRICS_PORT").
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from parterre.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("parterre",)) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))


PARSERS = dict(_walk(build_parser()))


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _entries(text: str) -> list[str]:
    """The entries of a rendered help, white space folded: a line indented by two spaces starts one,
    deeper lines continue it."""
    entries: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            entries.append(line.strip())
        elif line.startswith("   ") and entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append("")  # a heading or a blank line ends the entry
    return [" ".join(e.split()) for e in entries if e]


def _label(action: argparse.Action) -> str:
    if action.option_strings:
        return action.option_strings[0]
    if action.metavar:
        return str(action.metavar)
    if action.choices:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest


def _entry_of(parser: argparse.ArgumentParser, action: argparse.Action, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "2000")
    label = _label(action)
    found = [e for e in _entries(parser.format_help()) if e == label or e.startswith((label + " ", label + ","))]
    assert len(found) == 1, (label, found)
    return found[0]


def test_the_walk_sees_every_subcommand_the_modules_register() -> None:
    """Every ``add_parser("name", ...)`` in ``parterre/commands/*.py`` is a node of the walked tree."""
    registered = set()
    for path in (ROOT / "parterre" / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                registered.add(node.args[0].value)
    walked = {p[-1] for p in PARSERS}
    assert registered and registered <= walked, registered - walked
    assert len(PARSERS) > 50 and ("parterre", "remote", "challenge") in PARSERS


def test_every_argument_and_subcommand_has_help() -> None:
    missing = []
    for path, parser in PARSERS.items():
        for action in _arguments(parser):
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{' '.join(path)} {_label(action)}")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{' '.join(path)} {c.dest}" for c in action._choices_actions if not c.help]
    assert missing == []


def test_every_default_is_on_its_help_line(monkeypatch: pytest.MonkeyPatch) -> None:
    not_shown = []
    checked = 0
    for path, parser in PARSERS.items():
        for action in _arguments(parser):
            if action.nargs == 0 or action.default in (None, "", argparse.SUPPRESS):
                continue
            checked += 1
            entry = _entry_of(parser, action, monkeypatch)
            if f"(default: {action.default})" not in entry:
                not_shown.append(f"{' '.join(path)} {_label(action)} = {action.default!r}: {entry}")
    assert checked > 40
    assert not_shown == []


def test_the_help_line_check_reads_what_argparse_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself can fail: a plain argparse parser does not print its defaults."""
    plain = argparse.ArgumentParser(prog="x")
    action = plain.add_argument("--limit", type=int, default=20, help="how many")
    assert _entry_of(plain, action, monkeypatch) == "--limit LIMIT how many"
    shown = PARSERS[("parterre", "matches")]
    (limit,) = [a for a in shown._actions if a.dest == "limit"]
    assert _entry_of(shown, limit, monkeypatch) == "--limit LIMIT how many, newest first (default: 20)"


def test_no_option_states_two_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bot upload --help`` said "--url URL the site (default $PARTERRE_URL or the one shown) (default: http://...)"."""
    twice = []
    for path, parser in PARSERS.items():
        for action in _arguments(parser):
            entry = _entry_of(parser, action, monkeypatch)
            if entry.count("default") > 1:
                twice.append(f"{' '.join(path)}: {entry}")
    assert twice == []
