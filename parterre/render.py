"""Terminal rendering of ladder data with rich (tables)."""

from __future__ import annotations

import itertools
import logging
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

log = logging.getLogger(__name__)

_UNSET: Any = object()


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, dict) else getattr(row, name)


def load_bradley_terry(game: str, *, refresh: bool = True) -> Any:
    """The game's Bradley-Terry fit for the leaderboard, recomputed first when stale; None if unavailable.

    Reaches the database the way the CLI does (settings from the environment,
    the embedded PostgreSQL when no URL is configured; the embedded server is
    already running in the calling process, so this attaches to it). A
    failure is logged and gives None: the leaderboard is then shown without
    the Bradley-Terry columns.

    Args:
        game: registry name.
        refresh: recompute and store the fit when results arrived since the
            cached one (``ladder.stats.store.refresh_bradley_terry``).

    Returns:
        ``ladder.stats.store.BTLeaderboard`` (revoked bots included) or None.
    """
    try:
        from ladder import db
        from ladder.stats import store
        from parterre import embedded, settings

        services = embedded.resolve(settings.load(), need_redis=False)
        pool = db.make_pool(services.database_url, min_size=1, max_size=1)
        try:
            if refresh:
                store.refresh_bradley_terry(pool, game)
            return store.bt_leaderboard(pool, game, include_revoked=True)
        finally:
            pool.close()
    except Exception as exc:  # the leaderboard must still print
        log.warning("Bradley-Terry ratings unavailable: %s", exc)
        return None


def leaderboard_table(game: str, rows: list[Any], console: Console | None = None, *, bt: Any = _UNSET) -> None:
    """Print a leaderboard: online Elo and, beside it, the Bradley-Terry fit with its uncertainty.

    Columns (F-19 "say which Elo"): ``Elo`` is the ladder's online logistic
    Elo, K=32, updated match by match in the order results arrived
    (:mod:`ladder.elo`); ``BT`` and ``BT 95 %`` are the Bradley-Terry
    maximum-likelihood rating of all results at once, on the same logistic
    scale with mean 1500, and its bootstrap interval
    (:mod:`ladder.stats.bradley_terry`). Under the table, for each pair of
    neighbours in Bradley-Terry order, the bootstrap likelihood that the upper
    one is the stronger (the fit stores it for those pairs only); the line says
    whether that is the table's order or, when Elo and BT disagree, BT order.
    The caption states both models.

    Args:
        game: game name for the title.
        rows: ``ladder.read.leaderboard`` rows, best first.
        console: where to print (default: a new rich Console).
        bt: a ``ladder.stats.store.BTLeaderboard``, None to omit the
            Bradley-Terry figures, or unset to load it with
            :func:`load_bradley_terry` (recomputing it when stale).
    """
    console = console or Console()
    if not rows:
        console.print(f"no rated games of {game} yet")
        return
    if bt is _UNSET:
        bt = load_bradley_terry(game)
    by_bot = bt.by_bot() if bt is not None else {}
    table = Table(title=f"{game} leaderboard")
    table.add_column("#", justify="right")
    table.add_column("bot")
    table.add_column("Elo", justify="right")
    if bt is not None:
        table.add_column("BT", justify="right")
        table.add_column("BT 95 %", justify="right", no_wrap=True)
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("avg score", justify="right")
    for i, row in enumerate(rows, 1):
        avg = _get(row, "avg_score")
        cells = [str(i), escape(f"{_get(row, 'name')} v{_get(row, 'version')}"), f"{_get(row, 'elo'):.1f}"]
        if bt is not None:
            line = by_bot.get(_get(row, "bot_id"))
            cells += ["-", "-"] if line is None else [f"{line.elo:.0f}", f"{line.low:.0f}-{line.high:.0f}"]
        cells += [str(_get(row, "games")), str(_get(row, "wins")), "-" if avg is None else f"{avg:.1f}"]
        table.add_row(*cells)
    table.caption = "Elo: online logistic Elo, K=32, updated result by result (depends on game order)."
    if bt is not None:
        table.caption += (
            f" BT: Bradley-Terry maximum likelihood over all {bt.matches} matches (pairwise, ties 1/2), "
            f"same logistic scale, mean 1500; {bt.confidence:.0%} interval from {bt.bootstrap} bootstrap "
            "resamples of matches" + (" (results arrived since this fit)" if bt.stale else "") + "."
        )
    console.print(table)
    if bt is not None and len(bt.rows) > 1:
        pairs = [
            f"{escape(a.name)} > {escape(b.name)} {a.p_above_next:.0%}"
            for a, b in itertools.pairwise(bt.rows)
            if a.p_above_next is not None
        ]
        # p_above_next is stored for neighbours in the fit's order only; say which order that is
        if [r.bot_id for r in bt.rows] == [_get(row, "bot_id") for row in rows]:
            order = "each bot against the next one in the table"
        else:
            order = ("each bot against the next one in Bradley-Terry order (the BT column), "
                     "not the table's Elo order")
        console.print(f"Likelihood of being the stronger (BT bootstrap; {order}): " + ", ".join(pairs))
