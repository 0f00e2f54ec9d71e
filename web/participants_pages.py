"""The participants' web pages: sign-up, login, account and tokens, my bots, bot settings, owner's view,
tournament create/enter (docs/participants.md); the challenge pages are web/challenge_pages.py.

Every ``POST`` checks the form's CSRF token first (:func:`web.auth.check_csrf`) and answers with
a redirect (303) or the page again with a message. Tokens are shown once, on the page that made them.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from psycopg_pool import ConnectionPool
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from games.api import GameError
from games.registry import game_names
from ladder import accounts as acc
from ladder import owned_bots as ob
from ladder.errors import BotExistsError, BotLimitError, BotNotFoundError, LadderError
from web import auth
from web.deps import Pool, app_pool
from web.owner import owner_matches, seat_decisions, seat_view
from web.participants_api import (
    MAX_PLAYERS,
    TournamentIn,
    _deadline,
    check_tournament_bots,
    validation_message,
)

MAX_ID = 2**63 - 1
Id = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter(include_in_schema=False)

POLICIES = (("accept", "accept every challenge"), ("ask", "ask me each time (My challenges)"),
            ("none", "refuse every challenge"))
"""The challenge policies (:data:`ladder.owned_bots.CHALLENGE_POLICIES`) as the bot forms offer them."""
POLICY_WORDS = {"accept": "accepted", "ask": "asks you", "none": "refused"}


def _render(request: Request, template: str, status: int = 200, **ctx: Any) -> Response:
    ctx.setdefault("message", "")
    ctx.setdefault("error", False)
    ctx["csrf"] = auth.csrf_token(request)
    response: Response = request.app.state.templates.TemplateResponse(request, template, ctx, status_code=status)
    response.headers["cache-control"] = "no-store"
    return response


def _see_other(url: str) -> Response:
    return RedirectResponse(url, status_code=303)


async def _form(request: Request) -> Any:
    form = await request.form(max_files=0, max_fields=64)
    auth.check_csrf(request, form)
    return form


def _auth_page(request: Request, signup: bool, status: int = 200, message: str = "", username: str = "") -> Response:
    return _render(request, "me/auth.html", status, heading="Sign up" if signup else "Log in",
                   action="/signup" if signup else "/login", signup=signup, message=message,
                   error=bool(message), username=username)


@router.get("/signup")
def signup_page(request: Request) -> Response:
    if auth.config(request).signup == "closed":
        return _auth_page(request, True, 403, "sign-up is closed on this site")
    return _auth_page(request, True)


@router.post("/signup")
async def signup_post(request: Request, pool: Pool) -> Response:
    form = await _form(request)
    username, password = str(form.get("username", "")), str(form.get("password", ""))
    try:
        account = await run_in_threadpool(acc.sign_up, pool, username, password,  # argon2: off the event loop
                                          address=auth.client_address(request), mode=auth.config(request).signup)
    except acc.RateLimitedError as exc:
        return _auth_page(request, True, 429, str(exc))
    except acc.SignupClosedError as exc:
        return _auth_page(request, True, 403, str(exc))
    except acc.AccountError as exc:
        return _auth_page(request, True, 409 if isinstance(exc, acc.AccountExistsError) else 422, str(exc),
                          username if acc.USERNAME_RE.fullmatch(username) else "")
    if not account.active:
        return _auth_page(request, False, 202, "your account waits for an admin's approval")
    auth.login_session(request, account)
    return _see_other("/my/bots")


@router.get("/login")
def login_page(request: Request) -> Response:
    return _auth_page(request, False)


@router.post("/login")
async def login_post(request: Request, pool: Pool) -> Response:
    form = await _form(request)
    username, password = str(form.get("username", "")), str(form.get("password", ""))
    try:
        found = await run_in_threadpool(acc.login, pool, username, password,  # argon2
                                        address=auth.client_address(request))
    except acc.RateLimitedError as exc:
        response = _auth_page(request, False, 429, str(exc))
        response.headers["retry-after"] = str(exc.retry_after_s)
        return response
    if found is None:
        return _auth_page(request, False, 401, "wrong username or password, or the account is not active")
    auth.login_session(request, found)
    return _see_other("/my/bots")


@router.post("/logout")
async def logout(request: Request, pool: Pool) -> Response:
    await _form(request)
    account = auth.session_account(request)  # after the CSRF check; no session is no error here
    if account is not None:
        acc.end_sessions(pool, account.id)  # a kept copy of the cookie dies too
    request.session.clear()
    return _see_other("/")


def _account_page(request: Request, account: acc.Account, status: int = 200, **ctx: Any) -> Response:
    return _render(request, "me/account.html", status, account=account, scopes=acc.SCOPES,
                   tokens=acc.list_api_tokens(app_pool(request), account.id), **ctx)


@router.get("/account")
def account_page(request: Request, account: auth.SessionAccount) -> Response:
    return _account_page(request, account, new_token="")


@router.post("/account/tokens")
async def account_token(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    try:
        _, token = acc.create_api_token(pool, account.id, form.getlist("scopes"),
                                        label=str(form.get("label", "")))
    except acc.AccountError as exc:
        return _account_page(request, account, 422, new_token="", message=str(exc), error=True)
    return _account_page(request, account, 201, new_token=token, message="token created")


@router.post("/account/tokens/{token_id}/revoke")
async def account_revoke(request: Request, pool: Pool, account: auth.SessionAccount, token_id: Id) -> Response:
    await _form(request)
    if not acc.revoke_api_token(pool, account.id, token_id):
        raise HTTPException(404, f"you have no live token {token_id}")
    return _see_other("/account")


@router.post("/account/password")
async def account_password(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    try:
        account = await run_in_threadpool(acc.change_password, pool, account.id,  # argon2
                                          str(form.get("old", "")), str(form.get("new", "")),
                                          address=auth.client_address(request))
    except acc.RateLimitedError as exc:
        response = _account_page(request, account, 429, new_token="", message=str(exc), error=True)
        response.headers["retry-after"] = str(exc.retry_after_s)
        return response
    except acc.AccountError as exc:
        return _account_page(request, account, 422, new_token="", message=str(exc), error=True)
    auth.login_session(request, account)  # the new epoch: other sessions are logged out
    return _account_page(request, account, new_token="", message="password changed; other sessions logged out")


def _bots_page(request: Request, account: acc.Account, status: int = 200, **ctx: Any) -> Response:
    ctx.setdefault("new_token", "")
    ctx.setdefault("new_bot", None)
    return _render(request, "me/bots.html", status, account=account, games=game_names(),
                   referee=auth.config(request).public_referee, policies=POLICIES, policy_words=POLICY_WORDS,
                   bots=ob.list_owned_bots(app_pool(request), account.id), **ctx)


@router.get("/my/bots")
def my_bots(request: Request, account: auth.SessionAccount) -> Response:
    return _bots_page(request, account)


@router.post("/my/bots")
async def my_bots_create(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    cfg = auth.config(request)
    try:
        bot, token = ob.create_bot(pool, account.id, str(form.get("name", "")),
                                   description=str(form.get("description", "")), games=form.getlist("games"),
                                   policy=str(form.get("challenge_policy", "none")), redis=cfg.redis,
                                   key=cfg.tokens_key, max_bots=cfg.max_bots)
    except (BotExistsError, BotLimitError) as exc:
        return _bots_page(request, account, 409, message=str(exc), error=True)
    except LadderError as exc:
        return _bots_page(request, account, 422, message=str(exc), error=True)
    return _bots_page(request, account, 201, new_token=token, new_bot=bot, message=f"bot {bot.name} created")


def _bot_page(request: Request, account: acc.Account, bot_id: int, status: int = 200, **ctx: Any) -> Response:
    pool = app_pool(request)
    try:
        bot = ob.owned_bot(pool, account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    ctx.setdefault("new_token", "")
    from ladder.challenges import list_challenges

    asking = len(list_challenges(pool, asked_of=account.id, bot_id=bot_id, pending=True, limit=500))
    return _render(request, "me/bot.html", status, account=account, bot=bot, games=game_names(),
                   referee=auth.config(request).public_referee, policies=POLICIES, asking=asking,
                   versions=[asdict(v) for v in ob.bot_versions(pool, bot_id)],
                   matches=owner_matches(pool, account.id, bot_id), **ctx)


@router.get("/my/bots/{bot_id}")
def my_bot(request: Request, account: auth.SessionAccount, bot_id: Id) -> Response:
    return _bot_page(request, account, bot_id)


def _owned_or_404(pool: ConnectionPool, account: acc.Account, bot_id: int) -> None:
    try:
        ob.owned_bot(pool, account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None


@router.post("/my/bots/{bot_id}/settings")
async def my_bot_settings(request: Request, pool: Pool, account: auth.SessionAccount, bot_id: Id) -> Response:
    form = await _form(request)
    _owned_or_404(pool, account, bot_id)
    cg = form.getlist("challenge_games")
    try:
        ob.update_settings(pool, account.id, bot_id, description=str(form.get("description", "")),
                           games=form.getlist("games"), policy=str(form.get("challenge_policy", "none")),
                           challenge_games=cg or None)
    except LadderError as exc:
        return _bot_page(request, account, bot_id, 422, message=str(exc), error=True)
    return _see_other(f"/my/bots/{bot_id}")


@router.post("/my/bots/{bot_id}/token")
async def my_bot_rotate(request: Request, pool: Pool, account: auth.SessionAccount, bot_id: Id) -> Response:
    form = await _form(request)
    _owned_or_404(pool, account, bot_id)
    if form.get("confirm") != "rotate":
        return _bot_page(request, account, bot_id, 422, error=True,
                         message="token not rotated: tick the box to confirm that the old token stops working")
    cfg = auth.config(request)
    try:
        token = ob.rotate_token(pool, account.id, bot_id, redis=cfg.redis, key=cfg.tokens_key)
    except LadderError as exc:
        return _bot_page(request, account, bot_id, 409, message=str(exc), error=True)
    return _bot_page(request, account, bot_id, new_token=token, message="token rotated")


@router.post("/my/bots/{bot_id}/retire")
async def my_bot_retire(request: Request, pool: Pool, account: auth.SessionAccount, bot_id: Id) -> Response:
    form = await _form(request)
    _owned_or_404(pool, account, bot_id)
    bot = ob.owned_bot(pool, account.id, bot_id)
    if str(form.get("confirm", "")).strip() != bot.name:
        return _bot_page(request, account, bot_id, 422, error=True,
                         message=f"bot not retired: type its name, {bot.name}, to confirm")
    cfg = auth.config(request)
    ob.retire_bot(pool, account.id, bot_id, redis=cfg.redis, key=cfg.tokens_key)
    return _see_other(f"/my/bots/{bot_id}")


@router.get("/my/matches/{match_id}")
def my_seat_view(request: Request, pool: Pool, account: auth.SessionAccount, match_id: Id,
                 bot_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> Response:
    # no observations: the page draws each board the seat saw from the public board route, when opened
    view = seat_view(pool, request.app.state.replays, account.id, match_id, bot_id, observations=False,
                     labels=request.app.state.labels)
    decisions, after = seat_decisions(view)
    return _render(request, "me/seat_view.html", view=view, decisions=decisions, after=after)


def _tournaments_page(request: Request, account: acc.Account, status: int = 200, **ctx: Any) -> Response:
    return _render(request, "me/tournaments.html", status, account=account, games=game_names(),
                   bots=ob.list_owned_bots(app_pool(request), account.id), **ctx)


@router.get("/my/tournaments")
def tournaments_page(request: Request, account: auth.SessionAccount) -> Response:
    return _tournaments_page(request, account)


@router.post("/my/tournaments")
async def tournament_create(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    if account.role not in ("organiser", "admin"):
        raise HTTPException(403, "only organisers create tournaments")
    from ladder import tournaments

    try:
        body = TournamentIn.model_validate({
            "name": str(form.get("name", "")), "game": str(form.get("game", "")),
            "format": str(form.get("format", "round_robin")),
            "player_counts": [x.strip() for x in str(form.get("players", "2")).split(",", MAX_PLAYERS)],
            "rounds": str(form.get("rounds", "1")).strip(),
            "candidate_bot_id": str(form.get("candidate_bot_id", "")).strip() or None,
            "entry_deadline": str(form.get("entry_deadline", "")).strip() or None})
    except ValidationError as exc:  # the API's own model, so the form and the API refuse alike
        return _tournaments_page(request, account, 422, error=True,
                                 message=validation_message(exc, {"player_counts": "players"}))
    try:
        if body.candidate_bot_id is not None:
            check_tournament_bots(pool, account, [body.candidate_bot_id])
        tid = tournaments.create_tournament(
            pool, name=body.name, game=body.game, game_options={}, format=body.format,
            player_counts=body.player_counts, rounds=body.rounds, time_control=None,
            candidate_bot_id=body.candidate_bot_id, entry_deadline=_deadline(body.entry_deadline),
            organiser_id=account.id)
    except HTTPException as exc:
        return _tournaments_page(request, account, exc.status_code, message=str(exc.detail), error=True)
    except (LadderError, ValueError, TypeError, GameError) as exc:  # GameError: an unknown game
        return _tournaments_page(request, account, 422, message=str(exc), error=True)
    return _see_other(f"/tournaments/{int(tid)}")


@router.post("/my/tournaments/enter")
async def tournament_enter(request: Request, pool: Pool, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    try:
        tid, bot_id = int(str(form.get("tournament_id", ""))), int(str(form.get("bot_id", "")))
    except ValueError:
        return _tournaments_page(request, account, 422, message="ids are whole numbers", error=True)
    _owned_or_404(pool, account, bot_id)
    from ladder import entries

    try:
        entries.enter_tournament(pool, tid, bot_id)
    except (LadderError, ValueError, LookupError) as exc:
        return _tournaments_page(request, account, 409, message=str(exc), error=True)
    return _see_other(f"/tournaments/{tid}")
