"""The JSON API under ``/api/`` (read-only; described at ``/openapi.json``).

Each route returns the same dataclass the matching HTML page renders
(:mod:`ladder.read`), so the page and the API cannot drift apart.
Unknown ids give 404, malformed ones 422.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from ladder import read as q
from ladder.db import connection
from web.deps import Pool, app_pool
from web.labels import ALL, SPECTATOR, LabelCache
from web.viewer import Frame, ViewerUnavailable, frame_at

MAX_ID = 2**63 - 1
"""Largest id PostgreSQL's bigint holds."""
MAX_STEP = 1_000_000

BotId = Annotated[int, Path(ge=1, le=MAX_ID, description="bot id")]
TournamentId = Annotated[int, Path(ge=1, le=MAX_ID, description="tournament id")]
MatchId = Annotated[int, Path(ge=1, le=MAX_ID, description="match id")]
GameName = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$",
                               description="registry name of the game, e.g. floriferous")]
Players = Annotated[int | None, Query(ge=1, le=16, description="only matches with this many seats")]
Page = Annotated[int, Query(ge=1, le=1_000_000, description="1-based page number")]
PerPage = Annotated[int, Query(ge=1, le=500, description="rows per page")]
Before = Annotated[int | None, Query(ge=1, le=MAX_ID, description="recent matches with ids below this")]
Recent = Annotated[int, Query(ge=1, le=100, description="recent matches per page")]
Step = Annotated[int, Path(ge=-1, le=MAX_STEP, description="step index; -1 is the initial state")]
Seat = Annotated[int | None, Query(ge=0, le=15, description="show this seat's own view (finished matches only)")]

router = APIRouter(prefix="/api", tags=["api"])


@router.get("/", response_model=q.HomePage, summary="Games, their leaders and latest results, tournaments")
def api_home(pool: Pool) -> q.HomePage:
    return q.home_page(pool)


@router.get("/health", summary="Liveness: the database answers")
def api_health(pool: Pool) -> dict[str, str]:
    with connection(pool) as conn:
        conn.execute("SELECT 1")
    return {"status": "ok"}


@router.get("/games", response_model=list[q.GameSummary], summary="Every known game")
def api_games(pool: Pool) -> list[q.GameSummary]:
    return q.games_summary(pool)


@router.get("/leaderboard/{game}", response_model=q.LeaderboardPage, summary="One page of a game's leaderboard",
            responses={404: {"description": "unknown game"}})
def api_leaderboard(
    pool: Pool,
    game: GameName,
    players: Players = None,
    sort: q.SortKey = q.SortKey.RANK,
    order: q.SortOrder | None = None,
    page: Page = 1,
    per_page: PerPage = 50,
) -> q.LeaderboardPage:
    return q.leaderboard_page(pool, game, players=players, sort=sort, order=order, page=page,
                              per_page=per_page)


@router.get("/bots/{bot_id}", response_model=q.BotPage, summary="A bot: ratings, history, head-to-head, matches",
            responses={404: {"description": "unknown bot"}})
def api_bot(pool: Pool, bot_id: BotId, before: Before = None, recent: Recent = 20) -> q.BotPage:
    return q.bot_page(pool, bot_id, before=before, recent=recent)


@router.get("/tournaments/{tournament_id}", response_model=q.TournamentPage,
            summary="A tournament: standings, crosstable, matches",
            responses={404: {"description": "unknown tournament"}})
def api_tournament(pool: Pool, tournament_id: TournamentId, page: Page = 1,
                   per_page: PerPage = 50) -> q.TournamentPage:
    return q.tournament_page(pool, tournament_id, page=page, per_page=per_page)


@router.get("/matches/{match_id}", response_model=q.MatchPage, summary="A match: seats, results, seed, replay steps",
            responses={404: {"description": "unknown match"}})
def api_match(request: Request, pool: Pool, match_id: MatchId) -> q.MatchPage:
    return with_view_labels(request, q.match_page(pool, match_id, request.app.state.replays), SPECTATOR)


def view_of(page: q.MatchPage, all_hands: bool, seat: int | None) -> str | int:
    """The point of view a request may have: ``all`` or a seat only once the match is finished, else the spectator.

    A seat's own view of a finished match is a part of "all hands", which is
    public then. While a match is played only the spectator view exists on the
    site (the live feed, :mod:`web.live`). When owner accounts reach the
    site, an owner-only seat view of a running match plugs in here.
    """
    if page.status != "finished":
        return SPECTATOR
    if all_hands:
        return ALL
    if seat is not None and 0 <= seat < page.players:
        return seat
    return SPECTATOR


def with_view_labels(request: Request, page: q.MatchPage, view: str | int) -> q.MatchPage:
    """``page`` with its step labels as ``view`` may read them (:mod:`web.labels`)."""
    if not page.steps or view == ALL:
        return page
    cached = request.app.state.replays.get(app_pool(request), page.id)
    if cached is None:  # pragma: no cover - has_replay was true
        return page
    return view_labels(page, cached[0], view, request.app.state.labels)


def view_labels(page: q.MatchPage, replay: Mapping[str, Any], view: str | int, labels: LabelCache) -> q.MatchPage:
    """``page`` (whose replay is ``replay``) with its step labels as ``view`` may read them."""
    if not page.steps or view == ALL:
        return page
    try:
        shown = labels.get(page.id, replay, view)
    except Exception:  # a replay that does not re-simulate: withhold every label
        shown = ["(hidden: the replay does not re-simulate here)"] * len(page.steps)
    steps = [dataclasses.replace(s, label=shown[s.i]) for s in page.steps]
    return dataclasses.replace(page, steps=steps)


def replay_download(request: Request, match_id: int) -> Response:
    """The stored replay JSON text of a finished match, as an attachment.

    Raises:
        NotFound: no such match, or it has no replay (not finished).
    """
    cached = request.app.state.replays.get(app_pool(request), match_id)
    if cached is None:
        raise q.NotFound(f"match {match_id} has no replay (unknown, or not finished)")
    return Response(
        content=cached[1],
        media_type="application/json",
        headers={
            "Content-Disposition": f'attachment; filename="parterre-match-{match_id}.json"',
            "Cache-Control": "public, max-age=86400, immutable",
        },
    )


@router.get(
    "/matches/{match_id}/replay",
    summary="The replay JSON (parterre-replay/1) exactly as stored",
    response_class=Response,
    responses={
        200: {"content": {"application/json": {"schema": {"type": "object"}}},
              "description": "the replay (docs/architecture.md, Replay JSON)"},
        404: {"description": "unknown match, or no replay yet"},
    },
)
def api_replay(request: Request, match_id: MatchId) -> Response:
    return replay_download(request, match_id)


def load_frame(
    request: Request, match_id: int, step: int, all_hands: bool, seat: int | None = None
) -> tuple[q.MatchPage, Frame]:
    """The match and its rebuilt state after ``step`` as its view shows it (:func:`replay_frame`).

    Raises:
        NotFound: unknown match, no replay, or step out of range.
        ViewerUnavailable: the engine is missing or the replay does not re-simulate.
    """
    pool = app_pool(request)
    page = q.match_page(pool, match_id, request.app.state.replays)
    cached = request.app.state.replays.get(pool, match_id) if page.has_replay else None
    if cached is None:
        raise q.NotFound(f"match {match_id} has no replay (unknown, or not finished)")
    return page, replay_frame(page, cached[0], step, all_hands, seat, request.app.state.labels)


def replay_frame(page: q.MatchPage, replay: Mapping[str, Any], step: int, all_hands: bool, seat: int | None,
                 labels: LabelCache) -> Frame:
    """The state after ``step`` of ``page``'s replay ``replay`` as its view (:func:`view_of`) shows it.

    The frame's ``label`` is the view's label of the step (:mod:`web.labels`).

    Raises:
        NotFound: step out of range.
        ViewerUnavailable: the engine is missing or the replay does not re-simulate.
    """
    view = view_of(page, all_hands, seat)
    try:
        frame = frame_at(replay, step, all_hands=view == ALL, seat=view if isinstance(view, int) else None)
    except IndexError as exc:
        raise q.NotFound(str(exc)) from None
    if step >= 0 and view != ALL:
        try:
            label = labels.get(page.id, replay, view)[step]
        except Exception as exc:  # same failure as the frame's own rebuild
            raise ViewerUnavailable(f"the replay does not re-simulate: {exc}") from exc
        frame = dataclasses.replace(frame, label=label)
    return frame


@router.get(
    "/matches/{match_id}/steps/{step}",
    response_model=Frame,
    summary="The state after a replay step, rebuilt by the rules engine",
    responses={404: {"description": "unknown match, no replay, or step out of range"},
               409: {"description": "the replay cannot be re-simulated here"}},
)
def api_step(
    request: Request,
    match_id: MatchId,
    step: Step,
    # `all` shadows the builtin: the public query parameter is ?all=
    all: Annotated[bool, Query(description="also every seat's view and the full state")] = False,
    seat: Seat = None,
) -> Any:
    try:
        return load_frame(request, match_id, step, all, seat)[1]
    except ViewerUnavailable as exc:
        from fastapi.responses import JSONResponse

        return JSONResponse({"detail": str(exc)}, status_code=409)
