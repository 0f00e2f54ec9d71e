"""Plain-text lines of a tournament's final table, for ``parterre tournament show``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _half(x: float) -> str:
    return f"{x:g}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def final_table_lines(table: Any) -> Iterator[str]:
    """Lines describing a :class:`ladder.tournament_tables.FinalTable`: header, standings, format table."""
    fmt = table.format.replace("_", "-")
    state = "cancelled" if table.status == "cancelled" else (
        "open for entries" if table.status == "open" else ("finished" if table.complete else "in progress"))
    yield f"tournament {table.tournament_id}: {table.name} — {table.game}, {fmt}, {state}"
    if table.entry_deadline:
        yield f"entry deadline: {table.entry_deadline} ({table.entrants} bots entered)"
    if table.outcome:
        yield f"outcome: {table.outcome}"
    if table.counts:
        yield "matches: " + ", ".join(f"{n} {s}" for s, n in sorted(table.counts.items()))
    yield ""
    yield "standings (pairwise points: 1 per opponent ranked below, ½ per tie)"
    yield "#\tbot\tpoints\tmatches\tW\tD\tL\tavg rank"
    for s in table.standings:
        yield (f"{s['position']}\t{s['name']}\t{_half(s['points'])}\t{s['matches']}\t{s['wins']}\t{s['draws']}\t"
               f"{s['losses']}\t{s['avg_rank']:.2f}")
    g = table.gauntlet
    if g is not None:
        yield ""
        yield f"gauntlet: {g.candidate_name} against each pool bot (its pairwise score)"
        yield "opponent\tpoints\tpairings\tW\tD\tL\tscore\tElo diff"
        for r in g.rows:
            diff = "—" if r.elo_diff is None else "0" if round(r.elo_diff) == 0 else f"{r.elo_diff:+.0f}"  # not "-0"
            yield (f"{r.name}\t{_half(r.points)}\t{r.pairings}\t{r.wins}\t{r.draws}\t{r.losses}\t{_pct(r.score)}\t"
                   f"{diff}")
        yield f"total\t{_half(g.points)}\t{g.pairings}\t\t\t\t{_pct(g.score)}"
    d = table.duplicate
    if d is not None:
        yield ""
        yield "duplicate: pairwise points per deal (every bot of a deal plays the same seed in every seat)"
        names = [n for _, n in d.bots]
        yield "deal\t" + "\t".join(names) + "\tmatches\tseed commitment"
        for deal in d.deals:
            cells = "\t".join(_half(deal.points[b]) if b in deal.points else "·" for b, _ in d.bots)
            yield f"{deal.key}\t{cells}\t{deal.finished}/{deal.matches}\t{deal.seed_commitment[:16]}…"
        yield "total\t" + "\t".join(_half(d.totals.get(b, 0.0)) for b, _ in d.bots)
