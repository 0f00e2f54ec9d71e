"""The site's replay viewer over one replay file, with no database and no Redis (``parterre view``).

The same templates, static files and viewer functions as the site's match page
(:mod:`web.pages`, :mod:`web.api`, :mod:`web.viewer`, :mod:`web.boards`), over a
match page built from the file alone (:func:`ladder.read.replay_file_page`). Routes:
``/`` (redirects to the match), ``/matches/{id}`` (the viewer), ``/matches/{id}/board``
(the board panel of one step) and ``/matches/{id}/replay.json`` (the file's replay).
Every other address of the site answers 404 here, so the pages link to none of them (the
templates' ``local_viewer``: no site navigation, bot names without links).

A replay file is the whole record of a played game, so the viewer offers every
seat's view and "all hands", as the site does once a match is over
(docs/bots.md "From zero to your first local match"). The bots' own debug text
(``parterre play``'s ``game-NNN.debug.jsonl`` beside the replay, docs/bots.md
"Debug text") is shown in the board panel of the step it belongs to: the local
author owns every bot of the file; the site never shows it there.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.trustedhost import TrustedHostMiddleware

from ladder import read as q
from web.api import MatchId, Seat, replay_frame, view_labels, view_of
from web.app import STATIC_DIR, _environment, _install_error_handlers, _ResponseHeaders
from web.labels import LabelCache
from web.pages import StepQuery, board_context, match_context, render, unavailable_board
from web.viewer import START, ViewerUnavailable, engine_available


def create_local_app(page: q.MatchPage, replay: dict[str, Any],
                     debug: dict[int, tuple[int, str]] | None = None) -> FastAPI:
    """The viewer of one replay: ``page`` is its match page, ``replay`` the ``parterre-replay/1`` dict,
    ``debug`` the bots' own debug text by step, ``{step: (seat, text)}`` (``parterre play``'s
    ``game-NNN.debug.jsonl``), shown in the board panel of its step."""
    app = FastAPI(title="Parterre replay viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.templates = Jinja2Templates(env=_environment())
    app.state.templates.env.globals["local_viewer"] = True  # no links to the site's other pages: none is here
    app.state.live = None
    labels = LabelCache(8)
    replay_text = json.dumps(replay, indent=1)

    def board(step: int, all_hands: bool, seat: int | None) -> dict[str, Any]:
        try:
            frame = replay_frame(page, replay, step, all_hands, seat, labels)
        except ViewerUnavailable as exc:
            return unavailable_board(exc)
        context = board_context(page, frame, all_hands, seat)
        context["debug"] = (debug or {}).get(frame.step)
        return context

    def known(match_id: int) -> None:
        if match_id != page.id:
            raise q.NotFound(f"this viewer shows match {page.id} only")

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse(f"/matches/{page.id}", status_code=303)

    @app.get("/matches/{match_id}", response_class=HTMLResponse)
    def match(request: Request, match_id: MatchId, step: StepQuery = START,
              all: Annotated[bool, Query()] = False, seat: Seat = None) -> HTMLResponse:
        known(match_id)
        view = view_of(page, all, seat)
        step = min(step, len(page.steps) - 1)
        shown = view_labels(page, replay, view, labels) if engine_available(page.game) else page
        return render(request, "match.html", match_context(shown, step, board(step, all, seat), view))

    @app.get("/matches/{match_id}/board", response_class=HTMLResponse)
    def match_board(request: Request, match_id: MatchId, step: StepQuery = START,
                    all: Annotated[bool, Query()] = False, seat: Seat = None) -> HTMLResponse:
        known(match_id)
        return render(request, "_board.html", {"board": board(step, all, seat), "step": step})

    @app.get("/matches/{match_id}/replay.json")
    def match_replay(match_id: MatchId) -> Response:
        known(match_id)
        return Response(replay_text, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="parterre-match-{page.id}.json"'})

    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")
    _install_error_handlers(app)
    app.add_middleware(_ResponseHeaders)
    # only this machine's names: a page elsewhere that rebinds its own name to 127.0.0.1 reads nothing
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])
    return app
