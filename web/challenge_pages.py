"""The challenge pages: pick opponents by name and the game's options (``/my/challenge``); follow one's
challenges and answer those to one's bots (``/my/challenges``). docs/participants.md "Challenges".

``/my/challenge`` keeps its whole draft in the query string, so it works without JavaScript: one GET
form holds the game, its player count and variants, the opponents picked so far and the search; each
search result is a submit button of that form adding its bot (``opponent``), each picked bot one
removing it (``drop``). The POST form below it sends the draft as shown, with the session's CSRF token,
through the API's own path (:func:`web.challenges.create`). ``/static/challenge.js`` only shortens
the way: it applies a changed select at once and shows search results as one types (the same page's
results, fetched).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from games.api import GameError, OptionSpec
from games.registry import game_class, game_names, load_game
from ladder import challenges as ladder_challenges
from ladder import owned_bots as ob
from ladder.bot_search import MAX_QUERY, FoundBot, found_bots, search_bots
from web import auth
from web.challenges import MAX_CHALLENGE_BOTS, ChallengeIn, answer, create
from web.deps import Now, Pool
from web.participants_api import validation_message
from web.participants_pages import Id, _form, _render

router = APIRouter(include_in_schema=False)

WAITS = ((300, "5 minutes"), (3600, "1 hour"), (86400, "1 day"))
"""How long a challenge made on the page waits for answers and bots (seconds, words); the first is the default."""


@dataclass(frozen=True, slots=True)
class GameChoice:
    """A game as the form offers it: its player counts and its variants (every option but ``players``
    that is a switch or has a list of values)."""

    name: str
    long_name: str
    players: tuple[int, ...]
    variants: tuple[OptionSpec, ...]


def game_choices() -> list[GameChoice]:
    out = []
    for name in game_names():
        info = game_class(name).INFO
        specs = {s.name: s for s in info.options}
        counts = specs["players"].choices if "players" in specs and specs["players"].choices else None
        out.append(GameChoice(name, info.long_name,
                              tuple(counts or range(info.min_players, info.max_players + 1)),
                              tuple(s for s in info.options if s.name != "players"
                                    and (s.kind is bool or s.choices is not None))))
    return out


@dataclass(slots=True)
class Draft:
    """A challenge being put together: the game, its player count and variants, the opponents picked."""

    game: GameChoice
    players: int
    variants: dict[str, str] = field(default_factory=dict)
    opponents: list[int] = field(default_factory=list)

    def game_string(self) -> str:
        """``floriferous(extended=true,players=2)``: what the API is sent."""
        options = {**self.variants, "players": str(self.players)}
        return f"{self.game.name}({','.join(f'{k}={v}' for k, v in sorted(options.items()))})"


def _ids(values: list[str]) -> list[int]:
    return [int(v) for v in values if v.isdigit() and 0 < int(v) < 2**53]


def read_draft(params: Any) -> Draft:
    """The draft in a query string or a form (values that are no choice of the game fall back to its defaults)."""
    games = game_choices()
    game = next((g for g in games if g.name == params.get("game")), games[0])
    players = int(params["players"]) if str(params.get("players", "")).isdigit() else 0
    if players not in game.players:
        players = 2 if 2 in game.players else game.players[0]
    variants = {}
    for spec in game.variants:
        raw = str(params.get(spec.name, ""))
        if spec.kind is bool and raw in ("true", "1", "on"):
            variants[spec.name] = "true"
        elif spec.choices is not None and spec.kind is not bool and raw in (str(c) for c in spec.choices) \
                and raw != str(spec.default):
            variants[spec.name] = raw
    dropped = set(_ids(params.getlist("drop")))
    given = [*params.getlist("opponent"), *str(params.get("opponents", "")).split(",")]  # opponents: the older form
    return Draft(game, players, variants, [b for b in _ids([str(v).strip() for v in given]) if b not in dropped])


def _draft_page(request: Request, pool: Any, account: Any, draft: Draft, params: Mapping[str, Any],
                status: int = 200, **ctx: Any) -> Response:
    query = str(params.get("q", ""))[:MAX_QUERY]
    searched = "q" in params
    results: list[FoundBot] = search_bots(pool, query, game=draft.game.name) if searched else []
    try:
        load_game(draft.game_string())
        problem = ""
    except GameError as exc:  # a variant the player count does not allow: said before sending
        problem = str(exc)
    mine = [b for b in ob.list_owned_bots(pool, account.id) if not b.retired]
    picked_mine = str(params.get("mine", ""))
    return _render(request, "me/challenge.html", status, account=account, games=game_choices(), draft=draft,
                   picked=found_bots(pool, draft.opponents), results=results, q=query, searched=searched,
                   game_string=draft.game_string(), problem=problem, mine=mine, mine_id=picked_mine,
                   rated=params.get("rated") == "1", waits=WAITS, wait=str(params.get("wait", WAITS[0][0])), **ctx)


@router.get("/my/challenge")
def challenge_page(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    draft = read_draft(request.query_params)
    draft.opponents = list(dict.fromkeys(draft.opponents))[:MAX_CHALLENGE_BOTS]  # a bot picked twice is one pick
    return _draft_page(request, pool, account, draft, request.query_params)


@router.post("/my/challenge")
async def challenge_post(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    draft = read_draft(form)
    mine = str(form.get("mine", ""))
    if len(draft.opponents) >= MAX_CHALLENGE_BOTS:  # before any query (the API's own limit, S-25)
        return _draft_page(request, pool, account, replace(draft, opponents=[]), form, 422, error=True,
                           message=f"a challenge seats 1 to {MAX_CHALLENGE_BOTS} bots, not {1 + len(draft.opponents)}")
    try:
        body = ChallengeIn.model_validate({
            "game": draft.game_string(), "bots": [mine, *draft.opponents], "rated": form.get("rated") == "1",
            "expires_after_s": str(form.get("wait", WAITS[0][0]))})
        made = create(request, pool, account.id, body)
    except ValidationError as exc:
        return _draft_page(request, pool, account, draft, form, 422, error=True,
                           message=validation_message(exc, {"bots": "your bot and the opponents"}))
    except HTTPException as exc:  # a refused challenge (the API's 400) is a refused form: 422
        return _draft_page(request, pool, account, draft, form, 422 if exc.status_code == 400 else exc.status_code,
                           message=str(exc.detail), error=True)
    return RedirectResponse(f"/my/challenges?sent={made.match_id}", status_code=303)


def _challenges_page(request: Request, pool: Any, account: Any, status: int = 200, **ctx: Any) -> Response:
    mine = {b.id for b in ob.list_owned_bots(pool, account.id)}
    pending = ladder_challenges.list_challenges(pool, asked_of=account.id, pending=True, limit=100)
    waiting_ids = {c.match_id for c in pending}
    answered = [c for c in ladder_challenges.list_challenges(pool, asked_of=account.id, limit=30)
                if c.match_id not in waiting_ids]
    sent = ladder_challenges.list_challenges(pool, challenger_id=account.id, limit=30)
    ctx.setdefault("highlight", 0)
    return _render(request, "me/challenges.html", status, account=account, pending=pending, answered=answered,
                   sent=sent, mine=mine, **ctx)


_DONE = {"sent": "challenge {id} sent", "accepted": "challenge {id} accepted: it is played once its bots are "
         "connected", "declined": "challenge {id} declined: it will not be played"}


@router.get("/my/challenges")
def challenges_page(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    done = next(((k, v) for k, v in request.query_params.items() if k in _DONE and v.isdigit()), None)
    message = _DONE[done[0]].format(id=done[1]) if done else ""
    return _challenges_page(request, pool, account, message=message, highlight=int(done[1]) if done else 0)


async def _answer(request: Request, pool: Any, account: Any, match_id: int, now: Any, accept: bool) -> Response:
    await _form(request)
    try:
        await run_in_threadpool(answer, pool, account.id, match_id, accept=accept, now=now)
    except HTTPException as exc:
        if exc.status_code == 404:
            raise
        return _challenges_page(request, pool, account, exc.status_code, message=str(exc.detail), error=True,
                                highlight=match_id)
    how = "accepted" if accept else "declined"
    return RedirectResponse(f"/my/challenges?{how}={match_id}", status_code=303)


@router.post("/my/challenges/{match_id}/accept")
async def challenge_accept(request: Request, pool: Pool, account: auth.SessionAccount, now: Now,
                           match_id: Id) -> Response:
    return await _answer(request, pool, account, match_id, now, True)


@router.post("/my/challenges/{match_id}/decline")
async def challenge_decline(request: Request, pool: Pool, account: auth.SessionAccount, now: Now,
                            match_id: Id) -> Response:
    return await _answer(request, pool, account, match_id, now, False)
