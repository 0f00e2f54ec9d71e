"""Tournament list, per-format final tables and house bots: pages and JSON (docs/web.md).

Routes: ``/tournaments`` (HTML list, ``?before=ID`` pages back, ``?game=G``),
``/api/tournaments`` (the same rows), ``/api/tournaments/{id}/table`` (the
format's final table, :class:`ladder.tournament_tables.FinalTable`) and
``/api/house-bots`` (the house bots and their games). The tournament page
itself (``/tournaments/{id}``) renders the final table too
(``web/pages.py``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from ladder.house import HouseBot, list_house_bots
from ladder.read.common import NotFound
from ladder.tournament_tables import FinalTable, TournamentSummary, final_table, list_tournaments
from web.api import MAX_ID, TournamentId
from web.deps import Pool, app_pool

GameFilter = Annotated[str | None, Query(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$",
                                         description="only this game")]
BeforeId = Annotated[int | None, Query(ge=1, le=MAX_ID, description="tournaments with ids below this")]
Limit = Annotated[int, Query(ge=1, le=500, description="rows")]

PER_PAGE = 50
"""Tournaments per page of ``/tournaments``."""

api_router = APIRouter(prefix="/api", tags=["api"])
page_router = APIRouter(include_in_schema=False)


def table_or_404(request: Request, tournament_id: int) -> FinalTable:
    """The final table, or :class:`NotFound` (404) for an unknown tournament."""
    try:
        return final_table(app_pool(request), tournament_id)
    except LookupError:
        raise NotFound(f"no tournament with id {tournament_id}") from None


@api_router.get("/tournaments", response_model=list[TournamentSummary],
                summary="Tournaments, newest first, with their state (open for entries, in progress, ...)")
def api_tournaments(pool: Pool, game: GameFilter = None, before: BeforeId = None,
                    limit: Limit = PER_PAGE) -> list[TournamentSummary]:
    return list_tournaments(pool, limit=limit, before=before, game=game)


@api_router.get("/tournaments/{tournament_id}/table", response_model=FinalTable,
                summary="A tournament's final table in its format (gauntlet: the candidate against each "
                        "pool bot; duplicate: per-deal points)",
                responses={404: {"description": "unknown tournament"}})
def api_tournament_table(request: Request, tournament_id: TournamentId) -> FinalTable:
    return table_or_404(request, tournament_id)


@api_router.get("/house-bots", response_model=list[HouseBot],
                summary="The house bots (always connected; challenge them, or meet them in gauntlets)")
def api_house_bots(pool: Pool, game: GameFilter = None) -> list[HouseBot]:
    return list_house_bots(pool, game=game)


@page_router.get("/tournaments", response_class=HTMLResponse)
def tournaments_page(request: Request, pool: Pool, game: GameFilter = None,
                     before: BeforeId = None) -> HTMLResponse:
    rows = list_tournaments(pool, limit=PER_PAGE + 1, before=before, game=game)
    older = rows[PER_PAGE - 1].id if len(rows) > PER_PAGE else None
    house = list_house_bots(pool)
    context = {"rows": rows[:PER_PAGE], "older": older, "game": game, "house": house}
    # as web.pages.render (which imports this module): the app's autoescaping templates
    response: HTMLResponse = request.app.state.templates.TemplateResponse(request, "tournaments.html", context)
    return response
