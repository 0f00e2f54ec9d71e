"""The HTML pages (server-rendered with Jinja2; JavaScript only drives the replay viewer).

Routes: ``/``, ``/leaderboard/{game}``, ``/bots/{bot_id}``,
``/tournaments/{tournament_id}``, ``/matches/{match_id}`` (with the viewer),
``/matches/{match_id}/board`` (the viewer's board panel for one step, an HTML
fragment) and ``/matches/{match_id}/replay.json`` (download). The viewer works
without JavaScript too: its step links reload the page at ``?step=N``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from ladder import read as q
from web.api import (
    MAX_STEP,
    Before,
    BotId,
    GameName,
    MatchId,
    Page,
    PerPage,
    Players,
    Recent,
    Seat,
    TournamentId,
    load_frame,
    replay_download,
    view_of,
    with_view_labels,
)
from web.boards import board_panel
from web.deps import Pool, app_pool
from web.filters import query
from web.live import playing_now
from web.outcome import outcome_cards
from web.plot import rating_plot
from web.viewer import START, Frame, ViewerUnavailable, engine_available

router = APIRouter(include_in_schema=False)

StepQuery = Annotated[int, Query(ge=-1, le=MAX_STEP)]
AtQuery = Annotated[int | None, Query(ge=0, le=MAX_STEP + 1)]
"""The jump box's ``?at=``: steps counted from 1 as on the page, 0 the start (``?step=``: from 0, -1 the start)."""


def render(request: Request, template: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """Render a page template (autoescaped)."""
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(request, template, context, status_code=status_code)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, pool: Pool) -> HTMLResponse:
    return render(request, "home.html", {"home": q.home_page(pool), "playing": playing_now(request),
                                         "live_on": request.app.state.live is not None})


LEADERBOARD_COLUMNS: tuple[tuple[q.SortKey | None, str, str], ...] = (
    (q.SortKey.RANK, "rank", "num"),
    (q.SortKey.NAME, "bot", ""),
    (q.SortKey.ELO, "Elo (online)", "num"),
    (q.SortKey.BT, "Bradley-Terry [95 % interval]", "num bt"),
    (q.SortKey.GAMES, "games", "num"),
    (q.SortKey.WIN_RATE, "win rate", "num"),
    (q.SortKey.AVG_SCORE, "avg score", "num"),
    (q.SortKey.LAST_PLAYED, "last played", ""),
)
"""Leaderboard columns: sort key (None: not sortable), heading, CSS class."""


def _sort_headers(board: q.LeaderboardPage, base: dict[str, Any]) -> list[dict[str, Any]]:
    """Column headings with their sort links: a click sorts by the column, a second click reverses."""
    out: list[dict[str, Any]] = []
    for key, label, cls in LEADERBOARD_COLUMNS:
        if key is None:
            out.append({"key": None, "label": label})
            continue
        active = board.sort is key
        if active:
            next_order = q.SortOrder.ASC if board.order is q.SortOrder.DESC else q.SortOrder.DESC
        else:
            next_order = q.DEFAULT_ORDER[key]
        out.append({
            "key": key.value, "label": label, "cls": cls, "active": active,
            "href": f"/leaderboard/{board.game}" + query(base, sort=key.value, order=next_order.value, page=None),
            "arrow": ("▲" if board.order is q.SortOrder.ASC else "▼") if active else "",
            "aria": ("ascending" if board.order is q.SortOrder.ASC else "descending") if active else "",
        })
    return out


@router.get("/leaderboard/{game}", response_class=HTMLResponse)
def leaderboard(
    request: Request,
    pool: Pool,
    game: GameName,
    players: Players = None,
    sort: q.SortKey = q.SortKey.RANK,
    order: q.SortOrder | None = None,
    page: Page = 1,
    per_page: PerPage = 50,
) -> HTMLResponse:
    board = q.leaderboard_page(pool, game, players=players, sort=sort, order=order, page=page,
                               per_page=per_page)
    base = {"players": players, "sort": sort.value, "order": board.order.value,
            "per_page": None if per_page == 50 else per_page}
    return render(request, "leaderboard.html", {"board": board, "base": base, "headers": _sort_headers(board, base),
                                                "playing": playing_now(request, game),
                                                "live_on": request.app.state.live is not None})


@router.get("/bots/{bot_id}", response_class=HTMLResponse)
def bot(request: Request, pool: Pool, bot_id: BotId, before: Before = None, recent: Recent = 20) -> HTMLResponse:
    from ladder.house import list_house_bots

    page = q.bot_page(pool, bot_id, before=before, recent=recent, opponents=H2H_SHOWN)
    plots = {r.game: rating_plot(r.history, r.history_total) for r in page.ratings}
    house = next((h for h in list_house_bots(pool) if h.bot_id == bot_id), None)
    h2h, hidden = top_opponents(page.head_to_head, H2H_SHOWN, page.opponents)
    return render(request, "bot.html", {"bot": page, "plots": plots, "recent": recent, "house": house,
                                        "h2h": h2h, "h2h_hidden": hidden})


H2H_SHOWN = 25
"""Opponents per game in the bot page's head-to-head table; the JSON (``/api/bots/{id}``) lists all."""


def top_opponents(rows: list[q.HeadToHead], most: int,
                  met: dict[str, int] | None = None) -> tuple[list[q.HeadToHead], dict[str, int]]:
    """The first ``most`` rows of each game (they come most-played first) and, per game, how many are left out
    (of ``met[game]`` opponents when given: the rows may be the first ones only, ``bot_page(opponents=...)``).

    A ladder bot meets hundreds of opponents (≈ 460 at 100k matches / 1k bots, thousands at 10^7 / 10^4):
    the full table made the page 120 KB and its rendering most of its time (docs/web.md), and at 10^7 matches
    reading every row took longer than the rest of the page (docs/benchmarks.md).
    """
    shown: list[q.HeadToHead] = []
    hidden: dict[str, int] = {}
    seen: dict[str, int] = {}
    for h in rows:
        seen[h.game] = seen.get(h.game, 0) + 1
        if seen[h.game] <= most:
            shown.append(h)
        else:
            hidden[h.game] = hidden.get(h.game, 0) + 1
    for game, total in (met or {}).items():
        left = total - min(seen.get(game, 0), most)
        if left > 0:
            hidden[game] = left
    return shown, hidden


@router.get("/tournaments/{tournament_id}", response_class=HTMLResponse)
def tournament(request: Request, pool: Pool, tournament_id: TournamentId, page: Page = 1,
               per_page: PerPage = 50) -> HTMLResponse:
    from web.tournaments import table_or_404

    data = q.tournament_page(pool, tournament_id, page=page, per_page=per_page)
    return render(request, "tournament.html", {"t": data, "final": table_or_404(request, tournament_id)})


def _board(request: Request, match_id: int, step: int, all_hands: bool, seat: int | None = None) -> dict[str, Any]:
    """Context of the viewer's board panel (``_board.html``) for one step."""
    try:
        page, frame = load_frame(request, match_id, step, all_hands, seat)
    except ViewerUnavailable as exc:
        return unavailable_board(exc)
    return board_context(page, frame, all_hands, seat)


def unavailable_board(problem: ViewerUnavailable) -> dict[str, Any]:
    """Context of the board panel when the replay cannot be shown (``problem`` says why)."""
    return {"frame": None, "panel": None, "problem": str(problem), "names": [], "all_hands": False}


def board_context(page: q.MatchPage, frame: Frame, all_hands: bool, seat: int | None) -> dict[str, Any]:
    """Context of the board panel (``_board.html``) of ``frame``, a step of ``page``'s replay."""
    names = [s.name for s in page.seats]
    shown_all = view_of(page, all_hands, seat) == "all"
    panel = board_panel(page.game, frame, names, shown_all)
    return {"frame": frame, "panel": panel, "problem": None, "names": names, "all_hands": shown_all,
            "match": page, "debug": None}  # debug: a bot's own text, only in local play (web/local_view.py)


def _challenge(request: Request, match_id: int) -> Any:
    """The match's challenge (rated or casual, waiting, expired and why), or None."""
    from ladder.challenges import challenge_status

    try:
        return challenge_status(app_pool(request), match_id)
    except LookupError:
        return None


@router.get("/matches/{match_id}", response_class=HTMLResponse)
def match(
    request: Request,
    pool: Pool,
    match_id: MatchId,
    step: StepQuery = START,
    all: Annotated[bool, Query()] = False,  # the public query parameter is ?all=
    seat: Seat = None,
    at: AtQuery = None,
    tv: Annotated[bool, Query()] = False,  # opened from /tv: back to /tv when the match ends (web/featured.py)
) -> HTMLResponse:
    if at is not None:  # the jump box without JavaScript: the step as the page counts it (docs/web.md "Numbering")
        step = at - 1
    page = q.match_page(pool, match_id, request.app.state.replays)
    view = view_of(page, all, seat)
    board = None
    if page.has_replay:
        step = min(step, len(page.steps) - 1)
        board = _board(request, match_id, step, all, seat)
        if engine_available(page.game):
            page = with_view_labels(request, page, view)
    live = request.app.state.live
    held = page.status == "running" and q.twins_open(pool, match_id)
    return render(request, "match.html", match_context(
        page, step, board, view, challenge=_challenge(request, match_id),
        live=live is not None and page.status == "running" and not held,
        live_delay=live.delay_s if live is not None else 0, held=held, tv=tv))


def match_context(page: q.MatchPage, step: int, board: dict[str, Any] | None, view: str | int, *,
                  challenge: Any = None, live: bool = False, live_delay: float = 0, held: bool = False,
                  tv: bool = False) -> dict[str, Any]:
    """Context of ``match.html``: the match, its viewer at ``step`` from ``view``, its board panel's context.

    ``held``: a running match whose deal is held (a seat rotation with a twin still to play): no live view,
    and the page says why. ``tv``: opened from ``/tv``, which the live view goes back to at the end.
    """
    return {"m": page, "board": board, "step": step, "all_hands": view == "all",
            "view": view, "challenge": challenge, "view_q": _view_query(view),
            "live": live, "live_delay": live_delay, "held": held, "tv": tv, "engine": engine_available(page.game),
            "outcome": outcome_cards(page.game, page.outcome, [s.name for s in page.seats])}


def _view_query(view: str | int) -> str:
    """The query-string tail that keeps a point of view in the viewer's links."""
    if view == "all":
        return "&all=1"
    return f"&seat={view}" if isinstance(view, int) else ""


@router.get("/matches/{match_id}/board", response_class=HTMLResponse)
def match_board(
    request: Request,
    match_id: MatchId,
    step: StepQuery = START,
    all: Annotated[bool, Query()] = False,  # the public query parameter is ?all=
    seat: Seat = None,
) -> HTMLResponse:
    context = _board(request, match_id, step, all, seat)
    response = render(request, "_board.html", {"board": context, "step": step})
    if context["frame"] is not None:
        response.headers["Cache-Control"] = "public, max-age=3600"
    return response


@router.get("/matches/{match_id}/replay.json")
def match_replay(request: Request, match_id: MatchId) -> Response:
    return replay_download(request, match_id)
