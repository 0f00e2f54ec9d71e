"""Terminal rendering of ladder data with rich (tables)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, dict) else getattr(row, name)


def leaderboard_table(game: str, rows: list[Any], console: Console | None = None) -> None:
    """Print a leaderboard: rank, bot, Elo (logistic Elo, K=32), games, wins, average score.

    Args:
        game: game name for the title.
        rows: ``ladder.queries.leaderboard`` rows, best first.
    """
    console = console or Console()
    table = Table(title=f"{game} leaderboard (online Elo, logistic, K=32)")
    table.add_column("#", justify="right")
    table.add_column("bot")
    table.add_column("Elo", justify="right")
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("avg score", justify="right")
    for i, row in enumerate(rows, 1):
        avg = _get(row, "avg_score")
        table.add_row(
            str(i),
            escape(f"{_get(row, 'name')} v{_get(row, 'version')}"),
            f"{_get(row, 'elo'):.1f}",
            str(_get(row, "games")),
            str(_get(row, "wins")),
            "-" if avg is None else f"{avg:.1f}",
        )
    if not rows:
        console.print(f"no rated games of {game} yet")
        return
    console.print(table)
