"""Optional compiled engines: ``PARTERRE_MYPYC=1`` builds them with mypyc.

Why and what: docs/architecture.md, "Engines: trusted actions and the compiled build".

Without the variable this file adds nothing: ``pip install -e .`` installs the
pure-Python package exactly as ``pyproject.toml`` describes it. With it (and a
C compiler, and mypy importable by the build: ``make compiled`` runs
``pip install --no-build-isolation -e .`` in the project's virtual
environment, where mypy is a dev dependency), the modules in
:data:`COMPILED` are also compiled to C extensions by mypyc. An extension
module is imported in preference to the ``.py`` beside it; the ``.py`` stays
the reference, and ``tests/games/test_compiled_engines.py`` plays the same random
games through both and compares every step.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    "games/trusted.py",
    "games/framework.py",
    "games/floriferous/state_protocol.py",
    "games/floriferous/state.py",
    "games/floriferous/crow.py",
    "games/floriferous/summary.py",
    "games/floriferous/scoring.py",
    "games/floriferous/layout.py",
    "games/floriferous/observation.py",
    "games/lafleur/state_protocol.py",
    "games/lafleur/state.py",
    "games/lafleur/turns.py",
    "games/lafleur/party.py",
    "games/lafleur/solo.py",
    "games/lafleur/payment.py",
    "games/lafleur/abilities.py",
    "games/lafleur/scoring.py",
    "games/lafleur/observation.py",
    "games/flowar/state_protocol.py",
    "games/flowar/state.py",
    "games/flowar/setup.py",
    "games/flowar/rounds.py",
    "games/flowar/chance.py",
    "games/flowar/turn.py",
    "games/flowar/delivery.py",
    "games/flowar/taxus.py",
    "games/flowar/favors.py",
    "games/flowar/placement.py",
    "games/flowar/scoring.py",
    "games/flowar/observation.py",
]
"""Modules compiled when ``PARTERRE_MYPYC=1`` (the engines' hot paths, measured by bench/bench_games.py)."""

ext_modules = []
if os.environ.get("PARTERRE_MYPYC") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3")

setup(ext_modules=ext_modules)
