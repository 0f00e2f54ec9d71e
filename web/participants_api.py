"""The participants' JSON API: accounts, tokens, owned bots, owner's view, tournaments (challenges: web/challenges.py).

The routes and their rules: docs/participants.md.

Authentication (web/auth.py): ``POST /api/accounts`` needs none (rate
limited per address); ``POST /api/tokens`` takes HTTP Basic; everything else
``Authorization: Bearer <personal API token>`` with the scope named on the
route. Owner-only routes answer 404 for another account's bot or match, the
same as for one that does not exist. Tokens are in a response only once: when
they are made.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, HTTPException, Path, Query, Request, Response
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field, ValidationError, field_validator

from games.api import GameError
from ladder import accounts as acc
from ladder import owned_bots as ob
from ladder.errors import BotExistsError, BotLimitError, BotNotFoundError, BotRevokedError, LadderError
from web import auth
from web.deps import Pool
from web.owner import OwnerMatch, SeatView, owner_matches, seat_view

MAX_ID = 2**63 - 1
Id = Annotated[int, Path(ge=1, le=MAX_ID)]
JSON_ID = 2**53 - 1
"""Largest id a JSON body carries exactly (ids in bodies; bigger ones are no bot's)."""
Policy = Literal["accept", "ask", "none"]
"""A bot's challenge policy (:data:`ladder.owned_bots.CHALLENGE_POLICIES`)."""
_POLICY_DOC = "accept: every challenge is played; ask: each waits for your answer; none: refused"
_ACCEPTS_DOC = "the older form of challenge_policy: true is accept, false is none (reads false for ask)"

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "the body is not JSON, or the request is not acceptable (the detail says why)"},
    401: {"description": "no, an unknown or a revoked API token (Basic: wrong username or password)"},
    403: {"description": "the token lacks the scope, or the caller may not do this"},
    404: {"description": "no such bot, match, token or tournament of the caller's (someone else's answers the same)"},
    409: {"description": "conflict: name taken, bot retired, entries closed"},
    429: {"description": "too many attempts; see Retry-After"},
}
router = APIRouter(prefix="/api", tags=["participants"], responses=_ERRORS)


class AccountIn(BaseModel):
    username: str = Field(min_length=2, max_length=32, pattern=acc.USERNAME_RE.pattern,
                          description="2-32 letters, digits, '_', '.', '-', starting with a letter or digit")
    password: str = Field(min_length=acc.MIN_PASSWORD, max_length=acc.MAX_PASSWORD)


class AccountOut(BaseModel):
    id: int
    username: str
    role: str
    status: str


class TokenIn(BaseModel):
    scopes: list[str] = Field(min_length=1, max_length=8, description="of bot:manage, tournament:create, challenge")
    label: str = Field("", max_length=64)


class TokenOut(BaseModel):
    id: int
    token: str
    scopes: list[str]


class TokenRow(BaseModel):
    id: int
    prefix: str
    label: str
    scopes: list[str]
    revoked: bool


class BotIn(BaseModel):
    name: str = Field(min_length=1, max_length=64, pattern=ob.BOT_NAME_RE.pattern,
                      description="1-64 ASCII letters, digits, '_', '.', '+', '-' or inner spaces")
    description: str = Field("", max_length=ob.MAX_DESCRIPTION)
    games: list[str] = Field(default_factory=list, max_length=16)
    version: str = Field("1", max_length=128)
    accepts_challenges: bool | None = Field(None, description=_ACCEPTS_DOC)
    challenge_policy: Policy | None = Field(None, description=_POLICY_DOC + " (default none)")


class BotSettingsIn(BaseModel):
    description: str | None = Field(None, max_length=1000)
    games: list[str] | None = Field(None, max_length=16)
    accepts_challenges: bool | None = Field(None, description=_ACCEPTS_DOC)
    challenge_policy: Policy | None = Field(None, description=_POLICY_DOC)
    challenge_games: list[str] | None = Field(None, max_length=16)


class BotOut(BaseModel):
    id: int
    name: str
    version: str
    description: str
    games: list[str]
    accepts_challenges: bool = Field(description="true when challenge_policy is accept")
    challenge_policy: Policy
    challenge_games: list[str] | None
    retired: bool


class BotCreated(BotOut):
    token: str


class BotToken(BaseModel):
    id: int
    token: str


MAX_ROUNDS = 100
"""Rounds a tournament created on the site (API or form) may have: each round plays every combination
of the entrants again, and all of them are planned at once when the entries close."""
MAX_PLAYERS = 4
"""Largest seat count of a tournament's matches (the flower games seat at most four)."""


class TournamentIn(BaseModel):
    """A tournament to create, from ``POST /api/tournaments`` or the ``/my/tournaments`` form (both
    validate with this one model: 422 naming the field otherwise)."""

    name: str = Field(max_length=128)
    game: str = Field(max_length=64)
    game_options: dict[str, Any] = Field(default_factory=dict, max_length=16)
    format: str = Field("round_robin", max_length=32)
    player_counts: list[Annotated[int, Field(ge=1, le=MAX_PLAYERS)]] = Field(
        default_factory=lambda: [2], min_length=1, max_length=MAX_PLAYERS,
        description=f"distinct seat counts, each 1-{MAX_PLAYERS}",
        json_schema_extra={"uniqueItems": True})  # the schema says what _distinct_counts refuses
    rounds: int = Field(1, ge=1, le=MAX_ROUNDS)
    time_control: dict[str, int] | None = None
    bot_ids: list[Annotated[int, Field(ge=1, le=JSON_ID)]] = Field(default_factory=list, max_length=64)
    candidate_bot_id: int | None = Field(None, ge=1, le=JSON_ID)
    entry_deadline: str | None = Field(None, max_length=64)

    @field_validator("player_counts")
    @classmethod
    def _distinct_counts(cls, counts: list[int]) -> list[int]:
        if len(set(counts)) != len(counts):
            raise ValueError(f"player counts must be distinct, got {counts}")
        return counts


def validation_message(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """One line per refused field of ``exc`` (``field: reason``), the field under its name in ``names``
    when given (a form's own field names)."""
    out = []
    for error in exc.errors(include_url=False, include_input=False):
        field = str(error["loc"][0]) if error["loc"] else ""
        out.append(f"{(names or {}).get(field, field)}: {error['msg']}")
    return "; ".join(out)


class EntryIn(BaseModel):
    bot_id: int = Field(ge=1, le=JSON_ID)


def _bot_out(bot: ob.OwnedBot) -> dict[str, Any]:
    return {"id": bot.id, "name": bot.name, "version": bot.version, "description": bot.description,
            "games": list(bot.games), "accepts_challenges": bot.accepts_challenges,
            "challenge_policy": bot.challenge_policy,
            "challenge_games": None if bot.challenge_games is None else list(bot.challenge_games),
            "retired": bot.retired}


@router.post("/accounts", status_code=201, response_model=AccountOut, summary="Sign up (a participant account)",
             responses={409: {"description": "username taken"}, 403: {"description": "sign-up closed"},
                        429: {"description": "too many sign-ups from this address"}})
def api_sign_up(request: Request, pool: Pool, body: AccountIn) -> AccountOut:
    try:
        account = acc.sign_up(pool, body.username, body.password, address=auth.client_address(request),
                              mode=auth.config(request).signup)
    except acc.AccountExistsError as exc:
        raise HTTPException(409, str(exc)) from None
    except acc.SignupClosedError as exc:
        raise HTTPException(403, str(exc)) from None
    except acc.RateLimitedError as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(exc.retry_after_s)}) from None
    except acc.AccountError as exc:
        raise HTTPException(400, str(exc)) from None
    return AccountOut(id=account.id, username=account.username, role=account.role, status=account.status)


@router.get("/account", response_model=AccountOut, summary="The account of the presented token")
def api_me(caller: auth.ApiCaller) -> AccountOut:
    a = caller.account
    return AccountOut(id=a.id, username=a.username, role=a.role, status=a.status)


@router.post("/tokens", status_code=201, response_model=TokenOut,
             summary="Create a personal API token (HTTP Basic: username and password)",
             responses={401: {"description": "wrong credentials"}, 429: {"description": "too many failures"}})
def api_create_token(request: Request, pool: Pool, body: TokenIn) -> TokenOut:
    account = auth.basic(request)  # after the body's validation: a malformed request counts no login attempt
    try:
        token_id, token = acc.create_api_token(pool, account.id, body.scopes, label=body.label)
    except acc.AccountError as exc:
        raise HTTPException(400, str(exc)) from None
    return TokenOut(id=token_id, token=token, scopes=list(acc.check_scopes(body.scopes)))


@router.get("/tokens", response_model=list[TokenRow], summary="The caller's API tokens (never the tokens themselves)")
def api_list_tokens(pool: Pool, caller: auth.ApiCaller) -> list[TokenRow]:
    return [TokenRow(id=t.id, prefix=t.prefix, label=t.label, scopes=list(t.scopes), revoked=t.revoked_at is not None)
            for t in acc.list_api_tokens(pool, caller.account.id)]


@router.delete("/tokens/{token_id}", status_code=204, summary="Revoke one of the caller's API tokens")
def api_revoke_token(pool: Pool, caller: auth.ApiCaller, token_id: Id) -> None:
    if not acc.revoke_api_token(pool, caller.account.id, token_id):
        raise HTTPException(404, f"you have no live token {token_id}")


@router.post("/bots", status_code=201, response_model=BotCreated, summary="Create a bot (scope bot:manage)",
             responses={409: {"description": "name taken"}})
def api_create_bot(request: Request, pool: Pool, caller: auth.BotManager, body: BotIn) -> BotCreated:
    cfg = auth.config(request)
    try:
        bot, token = ob.create_bot(pool, caller.account.id, body.name, description=body.description,
                                   games=body.games, version=body.version,
                                   accepts_challenges=body.accepts_challenges, policy=body.challenge_policy,
                                   redis=cfg.redis, key=cfg.tokens_key,
                                   max_bots=cfg.max_bots)
    except (BotExistsError, BotLimitError) as exc:
        raise HTTPException(409, str(exc)) from None
    except LadderError as exc:
        raise HTTPException(400, str(exc)) from None
    return BotCreated(**_bot_out(bot), token=token)


@router.get("/account/bots", response_model=list[BotOut], summary="The caller's bots")
def api_my_bots(pool: Pool, caller: auth.ApiCaller) -> list[BotOut]:
    return [BotOut(**_bot_out(b)) for b in ob.list_owned_bots(pool, caller.account.id)]


def _owned(pool: ConnectionPool, caller: auth.Caller, bot_id: int) -> ob.OwnedBot:
    try:
        return ob.owned_bot(pool, caller.account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None


@router.patch("/bots/{bot_id}/settings", response_model=BotOut, summary="Change the owner's bot (scope bot:manage)")
def api_bot_settings(pool: Pool, caller: auth.BotManager, bot_id: Id, body: BotSettingsIn) -> BotOut:
    _owned(pool, caller, bot_id)
    sent = body.model_dump(exclude_unset=True)
    try:
        bot = ob.update_settings(pool, caller.account.id, bot_id, description=body.description,
                                 games=body.games, accepts_challenges=body.accepts_challenges,
                                 policy=body.challenge_policy, challenge_games=sent.get("challenge_games", False))
    except LadderError as exc:
        raise HTTPException(400, str(exc)) from None
    return BotOut(**_bot_out(bot))


@router.post("/bots/{bot_id}/token", response_model=BotToken,
             summary="Rotate the owner's bot token (scope bot:manage); the old one is refused from now on")
def api_rotate(request: Request, pool: Pool, caller: auth.BotManager, bot_id: Id) -> BotToken:
    _owned(pool, caller, bot_id)
    cfg = auth.config(request)
    try:
        token = ob.rotate_token(pool, caller.account.id, bot_id, redis=cfg.redis, key=cfg.tokens_key)
    except BotRevokedError as exc:
        raise HTTPException(409, str(exc)) from None
    return BotToken(id=bot_id, token=token)


@router.post("/bots/{bot_id}/retire", response_model=BotOut, summary="Retire the owner's bot for good (bot:manage)")
def api_retire(request: Request, pool: Pool, caller: auth.BotManager, bot_id: Id) -> BotOut:
    _owned(pool, caller, bot_id)
    cfg = auth.config(request)
    return BotOut(**_bot_out(ob.retire_bot(pool, caller.account.id, bot_id, redis=cfg.redis,
                                           key=cfg.tokens_key)))


@router.get("/bots/{bot_id}/matches", response_model=list[OwnerMatch],
            summary="The owner's bot's matches, every status, with verdicts in words (owner only)")
def api_owner_matches(pool: Pool, caller: auth.ApiCaller, bot_id: Id,
                      limit: Annotated[int, Query(ge=1, le=200)] = 50,
                      before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> list[OwnerMatch]:
    return owner_matches(pool, caller.account.id, bot_id, limit=limit, before=before)


@router.get("/bots/{bot_id}/versions", response_model=list[dict[str, Any]],
            summary="Each announced version of a bot with its games and performance (public)")
def api_versions(pool: Pool, bot_id: Id) -> list[dict[str, Any]]:
    from dataclasses import asdict

    if ob.get_bot(pool, bot_id) is None:
        raise HTTPException(404, f"no bot {bot_id}")
    return [asdict(v) for v in ob.bot_versions(pool, bot_id)]


@router.get("/matches/{match_id}/seat-view", response_model=SeatView,
            summary="A finished match seen from the caller's own seat: observation(seat) after every step, "
                    "and the legal actions offered at each of its own steps")
def api_seat_view(request: Request, response: Response, pool: Pool, caller: auth.ApiCaller, match_id: Id,
                  bot_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> SeatView:
    view = seat_view(pool, request.app.state.replays, caller.account.id, match_id, bot_id,
                     labels=request.app.state.labels)
    response.headers["cache-control"] = "no-store"  # the seat's own observations and debug text: no shared cache
    return view


def _deadline(text: str | None) -> datetime | None:
    """An ISO 8601 entry deadline (UTC when it names no zone); ValueError when malformed."""
    if not text:
        return None
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def check_tournament_bots(pool: ConnectionPool, account: acc.Account, bot_ids: list[int]) -> None:
    """An organiser seats only their own bots and house bots at creation (others enter themselves);
    an admin seats any live bot. Raises HTTPException 404 (unknown) or 403."""
    house = None
    for bid in bot_ids:
        bot = ob.get_bot(pool, bid)
        if bot is None:
            raise HTTPException(404, f"no bot {bid}")
        if bot.retired:
            raise HTTPException(403, f"bot {bid} is retired")
        if account.role == "admin" or bot.account_id == account.id:
            continue
        if house is None:
            from ladder.house import house_bot_ids

            house = house_bot_ids(pool)
        if bid not in house:
            raise HTTPException(403, f"bot {bid} is not yours: its owner enters it "
                                     "(POST /api/tournaments/{id}/entries)")


@router.post("/tournaments", status_code=201, summary="Create a tournament (scope tournament:create; organisers)")
def api_create_tournament(pool: Pool, caller: auth.TournamentCreator, body: TournamentIn) -> dict[str, int]:
    if caller.account.role not in ("organiser", "admin"):
        raise HTTPException(403, "only organisers create tournaments")
    seated = [*body.bot_ids, *([body.candidate_bot_id] if body.candidate_bot_id else [])]
    check_tournament_bots(pool, caller.account, seated)
    from ladder import tournaments

    try:
        tid = tournaments.create_tournament(
            pool, name=body.name, game=body.game, game_options=body.game_options, format=body.format,
            player_counts=body.player_counts, rounds=body.rounds, time_control=body.time_control,
            bot_ids=body.bot_ids, candidate_bot_id=body.candidate_bot_id, entry_deadline=_deadline(body.entry_deadline),
            organiser_id=caller.account.id)
    except (LadderError, ValueError, GameError) as exc:  # GameError: an unknown game (UnknownGameError)
        raise HTTPException(400, str(exc)) from None
    return {"id": int(tid)}


@router.post("/tournaments/{tournament_id}/entries", status_code=201,
             summary="Enter the caller's bot into a tournament (scope bot:manage)")
def api_enter(pool: Pool, caller: auth.BotManager, tournament_id: Id,
              body: Annotated[EntryIn, Body()]) -> dict[str, int]:
    bot = _owned(pool, caller, body.bot_id)
    if bot.retired:
        raise HTTPException(403, f"bot {bot.id} is retired")
    from ladder import entries

    try:
        entries.enter_tournament(pool, tournament_id, bot.id)
    except LookupError as exc:
        raise HTTPException(404, str(exc)) from None
    except (LadderError, ValueError) as exc:
        raise HTTPException(409, str(exc)) from None
    return {"tournament_id": tournament_id, "bot_id": bot.id}
