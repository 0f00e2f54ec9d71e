"""The featured match (``/tv``): one running match a visitor can always watch, as lichess TV (docs/web.md).

``GET /tv`` sends the browser to the live view of the **featured match**
(``/matches/{id}?tv=1#live``); that page goes back to ``/tv`` a few seconds
after its match ends, so ``/tv`` left open follows the service from match to
match. With nothing to show it says so, and why, and looks again every
:data:`RETRY_S` seconds.

**The choice**, among the matches "Playing now" lists (running, with a live
feed, seen by a referee in the last two minutes, :func:`web.live.playing_now`):

1. never a match whose deal is held: a seat rotation whose twin on the same
   seed is still to be played may show nothing until every rotation of the
   deal has finished (``ladder.read.TWIN_OPEN_SQL``);
2. the strongest table first: the highest mean Elo of its seats in its game
   (a bot without a rating counts as 1500);
3. then the match with more steps a viewer may already see (past the delay),
   then the newest.

The choice is made again at every request, so the featured match changes as
matches end and start. :func:`featured_match` is the choice; the route is
:func:`tv`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ladder.db import connection
from ladder.read.replays import TWIN_OPEN_SQL
from web.deps import Pool
from web.live import PlayingNow, playing_now
from web.pages import render

RETRY_S = 10
"""Seconds between two looks of ``/tv`` when no match can be shown."""

DEFAULT_ELO = 1500.0

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True)
class Featured:
    """The featured match and why it was chosen: the mean Elo of its seats; ``held``: matches passed over."""

    match: PlayingNow
    mean_elo: float
    held: int


def featured_match(request: Request, pool: Pool) -> tuple[Featured | None, str]:
    """The match ``/tv`` shows, or None with the reason in words."""
    playing = playing_now(request)
    if request.app.state.live is None:
        return None, "this server relays no live matches (no live feed is configured)"
    if not playing:
        return None, "no match is being played right now"
    ids = [p.match_id for p in playing]
    with connection(pool) as conn:
        rows = conn.execute(
            f"SELECT m.id, {TWIN_OPEN_SQL.format(m='m')}, "
            "(SELECT avg(coalesce(r.elo, %s)) FROM seats s LEFT JOIN ratings r ON r.bot_id = s.bot_id "
            " AND r.game = m.game WHERE s.match_id = m.id) "
            "FROM matches m WHERE m.id = ANY(%s::bigint[])",
            (DEFAULT_ELO, ids)).fetchall()
    held = {int(r[0]) for r in rows if r[1]}
    elo = {int(r[0]): float(r[2]) if r[2] is not None else DEFAULT_ELO for r in rows}
    shown = [p for p in playing if p.match_id not in held and p.match_id in elo]
    if not shown:
        what = ("the match being played is a seat rotation of a deal" if len(playing) == 1 else
                f"the {len(playing)} matches being played are seat rotations of deals")
        return None, (f"{what} that another match is still playing: each is shown once every rotation of "
                      "its deal has finished")
    best = max(shown, key=lambda p: (elo[p.match_id], p.steps, p.started))
    return Featured(best, elo[best.match_id], len(held)), ""


@router.get("/tv", response_model=None)
def tv(request: Request, pool: Pool) -> Response:
    """Redirect to the featured match's live view, or say why there is none."""
    chosen, why = featured_match(request, pool)
    if chosen is not None:
        return RedirectResponse(f"/matches/{chosen.match.match_id}?tv=1#live", status_code=303,
                                headers={"Cache-Control": "no-store"})
    page: HTMLResponse = render(request, "tv.html", {"why": why, "retry_s": RETRY_S})
    page.headers["Cache-Control"] = "no-store"
    return page
