"""Playthrough golden files (OpenSpiel style): regenerate in memory and diff.

If a rules change is intended, regenerate with
``.venv/bin/python -m tests.playthroughs.generate`` and review the diff.
"""

from __future__ import annotations

import difflib

import pytest
from playthroughs import generate as G  # tests/ is on sys.path (pytest rootdir-less layout)

VARIANTS = G.variants()
MAX_BYTES = 1536 * 1024  # 4-player La Fleur and Flowar playthroughs run ~270 decisions with full observations


def test_every_shipped_variant_has_a_golden_file() -> None:
    """Meta-test: a registered variant without a playthrough fails here."""
    missing = [v for v in VARIANTS if not G.golden_path(v).exists()]
    assert not missing, f"no playthrough for {missing}: run python -m tests.playthroughs.generate"
    known = {G.golden_path(v).name for v in VARIANTS}
    orphans = sorted(p.name for p in G.HERE.glob("*.txt") if p.name not in known)
    assert not orphans, f"golden files of no registered variant: {orphans}"


def test_every_shipped_game_has_perft_data() -> None:
    for name in G.shipped_games():
        assert (G.PERFT_DIR / f"{name}.json").exists(), f"no perft data for {name}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_playthrough_matches_golden_file(variant: str) -> None:
    path = G.golden_path(variant)
    if not path.exists():
        pytest.fail(f"missing {path.name}")
    expected = path.read_text(encoding="utf-8")
    actual = G.render(variant)
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "now", lineterm="", n=1)
        pytest.fail(f"{path.name} differs:\n" + "\n".join(list(diff)[:40]))
    assert len(expected.encode()) < MAX_BYTES
