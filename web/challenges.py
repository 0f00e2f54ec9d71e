"""Challenges on the JSON API: find a bot, challenge it, follow the answer; answer the challenges to one's bots.

The rules, the policies and the states: docs/participants.md "Challenges". Every route takes a personal
API token (web/auth.py); creating and answering need the scope ``challenge``. A challenge is visible
to its challenger and to the owners of its seated bots only, and answerable by the owners of its
asked bots only: to anyone else it answers 404, as one that does not exist.

``api_router`` is included before the public API's (``web.app``): ``/api/bots/search`` would
otherwise be read as ``/api/bots/{bot_id}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from games.registry import game_names, parse_game_string
from ladder import challenge_answers
from ladder import challenges as ladder_challenges
from ladder import owned_bots as ob
from ladder.bot_search import MAX_QUERY, MAX_RESULTS, FoundBot, search_bots
from ladder.errors import ChallengeAnswerError, ChallengeError, ChallengeLimitError, MatchNotFoundError
from ladder.house import house_bot_ids
from web import auth
from web.deps import Now, Pool

MAX_ID = 2**63 - 1
JSON_ID = 2**53 - 1
"""Largest id a JSON body carries exactly (ids in bodies; bigger ones are no bot's)."""
MAX_CHALLENGE_BOTS = 8
"""Most bots one challenge seats (no game has more seats); the web form and the API check it first."""
MatchId = Annotated[int, Path(ge=1, le=MAX_ID, description="the challenge's match id")]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "bad game string, clock or expiry; a rated challenge seating two bots of one account"},
    401: {"description": "no, an unknown or a revoked API token"},
    403: {"description": "the token lacks the scope; no bot of the caller's seated; a bot whose policy is none"},
    404: {"description": "no such bot, or no such challenge of the caller's (someone else's answers the same)"},
    409: {"description": "the challenge cannot take this answer now: answered already, declined, or expired"},
    429: {"description": "the account has PARTERRE_MAX_OPEN_CHALLENGES challenges open already"},
}
api_router = APIRouter(prefix="/api", tags=["challenges"], responses=_ERRORS)


class ChallengeIn(BaseModel):
    game: str = Field(max_length=200, description="game string, e.g. 'floriferous' or 'flowar(players=3)'")
    bots: list[Annotated[int, Field(ge=1, le=JSON_ID)]] = Field(min_length=1, max_length=MAX_CHALLENGE_BOTS)
    rated: bool = False
    time_control: dict[str, int] | None = None
    expires_after_s: float = Field(ladder_challenges.DEFAULT_EXPIRY_S, gt=0, le=ladder_challenges.MAX_EXPIRY_S,
                                   description="how long it waits for the answers and then the bots, in seconds")


class ChallengeOut(BaseModel):
    match_id: int
    status: str = Field("waiting", description="asked (waiting for owners' answers) or waiting (for the bots)")
    rated: bool = Field(description="false for a casual challenge, or a rated one played casual (see unrated_reason)")
    unrated_reason: str | None = Field(None, description="why a challenge asked to be rated is casual "
                                       "(docs/participants.md \"Fair play\")")


class AnswerOut(BaseModel):
    bot_id: int
    bot_name: str
    answer: Literal["accepted", "declined"] | None = Field(description="null while the owner has not answered")
    answered_at: datetime | None


class ChallengeView(BaseModel):
    match_id: int
    game: str
    game_string: str
    status: str = Field(description="asked, waiting, declined, expired; once started the match's status: planned, "
                                    "running, finished, aborted_no_show, failed")
    reason: str | None = Field(description="why it was declined or expired, or why its match failed")
    rated: bool
    unrated_reason: str | None
    challenger: str | None = Field(description="the challenger's username")
    bot_ids: list[int]
    bot_names: list[str]
    answers: list[AnswerOut] = Field(description="one per bot whose owner is asked (policy ask)")
    yours_to_answer: list[int] = Field(description="the caller's bots whose answer this challenge waits for")
    created_at: datetime
    expires_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    time_control: dict[str, int]
    ranks: list[int] | None


class RatingOut(BaseModel):
    elo: float
    games: int


class BotFoundOut(BaseModel):
    id: int
    name: str
    owner: str | None = Field(description="the owner's username; null for the house's and the operator's bots")
    house: bool
    yours: bool
    games: list[str] = Field(description="games it plays; empty: any")
    ratings: dict[str, RatingOut] = Field(description="game -> Elo and rated games, for the games it is rated in")
    challenge_policy: Literal["accept", "ask", "none"]
    challenge_games: list[str] | None = Field(description="games it may be challenged in; null: all of games")
    challengeable: bool | None = Field(description="whether the caller may challenge it in the game searched for "
                                                   "(null when no game was given)")


def challenge_view(info: ladder_challenges.ChallengeInfo, mine: set[int]) -> ChallengeView:
    """A challenge as the API shows it to the owner of the bots ``mine``."""
    names = dict(zip(info.bot_ids, info.bot_names, strict=True))
    return ChallengeView(
        match_id=info.match_id, game=info.game, game_string=info.game_string, status=info.status,
        reason=info.reason, rated=info.rated, unrated_reason=info.unrated_reason, challenger=info.challenger_name,
        bot_ids=list(info.bot_ids), bot_names=list(info.bot_names),
        answers=[AnswerOut.model_validate({"bot_id": a.bot_id, "bot_name": names[a.bot_id], "answer": a.answer,
                                           "answered_at": a.answered_at}) for a in info.answers],
        yours_to_answer=[a.bot_id for a in info.answers
                         if a.answer is None and a.bot_id in mine and info.status == "asked"],
        created_at=info.created_at, expires_at=info.expires_at, started_at=info.started_at,
        finished_at=info.finished_at, time_control=info.time_control,
        ranks=None if info.ranks is None else list(info.ranks))


def found_out(bot: FoundBot, account_id: int, game: str | None) -> BotFoundOut:
    return BotFoundOut.model_validate({
        "id": bot.id, "name": bot.name, "owner": bot.owner, "house": bot.house, "yours": bot.account_id == account_id,
        "games": list(bot.games), "ratings": {g: {"elo": e, "games": n} for g, (e, n) in bot.ratings.items()},
        "challenge_policy": bot.challenge_policy,
        "challenge_games": None if bot.challenge_games is None else list(bot.challenge_games),
        "challengeable": None if game is None else (bot.account_id == account_id or bot.challengeable(game))})


def check_challenge(pool: ConnectionPool, account_id: int, game_string: str, bot_ids: list[int]) -> str:
    """Who may challenge whom: at least one bot is the challenger's own; every other bot may be challenged
    in this game (policy ``accept`` or ``ask``, or a house bot) and none is retired. Raises HTTPException 422
    (not 1 to :data:`MAX_CHALLENGE_BOTS` bots: checked before any query), 400 (bad game string), 404
    (unknown bot) or 403.

    Returns:
        The game string, with ``players`` = the number of bots when it names no player count.
    """
    if not 1 <= len(bot_ids) <= MAX_CHALLENGE_BOTS:
        raise HTTPException(422, f"a challenge seats 1 to {MAX_CHALLENGE_BOTS} bots, not {len(bot_ids)}")
    try:
        game, options = parse_game_string(game_string)
    except Exception as exc:  # any parse failure is the client's
        raise HTTPException(400, f"bad game string: {exc}") from None
    if "players" not in options:
        options = {**options, "players": str(len(bot_ids))}
        game_string = f"{game}({','.join(f'{k}={v}' for k, v in sorted(options.items()))})"
    bots = []
    for bid in bot_ids:
        bot = ob.get_bot(pool, bid)
        if bot is None:
            raise HTTPException(404, f"no bot {bid}")
        bots.append(bot)
    if not any(b.account_id == account_id for b in bots):
        raise HTTPException(403, "a challenge seats at least one bot of your own")
    house: set[int] | None = None
    for b in bots:
        if b.retired:
            raise HTTPException(403, f"bot {b.id} is retired")
        if b.account_id == account_id or b.challengeable(game):
            continue
        house = house_bot_ids(pool) if house is None else house
        if b.id not in house:
            why = ("its challenge policy is none" if b.challenge_policy == "none"
                   else f"{game} is not one of its challenge games")
            raise HTTPException(403, f"bot {b.name} (id {b.id}) does not accept challenges in {game}: {why}")
    return game_string


def create(request: Request, pool: ConnectionPool, account_id: int, body: ChallengeIn) -> ChallengeOut:
    """Check and create ``body``'s challenge for ``account_id`` (the API's and the form's one way)."""
    game_string = check_challenge(pool, account_id, body.game, body.bots)
    try:
        match_id = ladder_challenges.create_challenge(
            pool, game_string=game_string, bot_ids=body.bots, rated=body.rated, time_control=body.time_control,
            challenger_id=account_id, expires_after_s=body.expires_after_s,
            max_open=auth.config(request).max_open_challenges)
    except ChallengeLimitError as exc:
        raise HTTPException(429, str(exc)) from None
    except ChallengeError as exc:
        raise HTTPException(400, str(exc)) from None
    made = ladder_challenges.challenge_status(pool, int(match_id))
    return ChallengeOut(match_id=int(match_id), status=made.status, rated=made.rated,
                        unrated_reason=made.unrated_reason)


def _mine(pool: ConnectionPool, account_id: int) -> set[int]:
    return {b.id for b in ob.list_owned_bots(pool, account_id)}


def answer(pool: ConnectionPool, account_id: int, match_id: int, *, accept: bool, now: datetime) -> None:
    """The owner's answer; HTTPException 404 (not a challenge asking a bot of theirs) or 409 (too late)."""
    try:
        challenge_answers.answer_challenge(pool, match_id, account_id, accept=accept, now=now)
    except MatchNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except ChallengeAnswerError as exc:
        raise HTTPException(409, str(exc)) from None


@api_router.get("/bots/search", response_model=list[BotFoundOut],
                summary="Find bots to challenge by name, with their owner, ratings and challenge policy")
def api_search(pool: Pool, caller: auth.ApiCaller,
               q: Annotated[str, Query(max_length=MAX_QUERY, description="part of the name; blank: any")] = "",
               game: Annotated[str | None, Query(max_length=64, description="only bots that play it")] = None,
               limit: Annotated[int, Query(ge=1, le=MAX_RESULTS)] = 20) -> list[BotFoundOut]:
    if game is not None and game not in game_names():
        raise HTTPException(404, f"unknown game {game!r}; known: {', '.join(game_names())}")
    return [found_out(b, caller.account.id, game) for b in search_bots(pool, q, game=game, limit=limit)]


@api_router.post("/challenges", status_code=201, response_model=ChallengeOut,
                 summary="Challenge bots to one match (scope challenge): your own bot against anyone's")
def api_challenge(request: Request, pool: Pool, caller: auth.Challenger, body: ChallengeIn) -> ChallengeOut:
    return create(request, pool, caller.account.id, body)


@api_router.get("/challenges", response_model=list[ChallengeView], summary="The challenges the caller made")
def api_sent(pool: Pool, caller: auth.ApiCaller, limit: Annotated[int, Query(ge=1, le=200)] = 50,
             before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> list[ChallengeView]:
    mine = _mine(pool, caller.account.id)
    return [challenge_view(c, mine) for c in
            ladder_challenges.list_challenges(pool, challenger_id=caller.account.id, limit=limit, before=before)]


@api_router.get("/challenges/incoming", response_model=list[ChallengeView],
                summary="Challenges that asked the caller's answer for a bot (pending=true: only those still asking)")
def api_incoming(pool: Pool, caller: auth.ApiCaller, pending: bool = False,
                 limit: Annotated[int, Query(ge=1, le=200)] = 50,
                 before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> list[ChallengeView]:
    mine = _mine(pool, caller.account.id)
    return [challenge_view(c, mine) for c in ladder_challenges.list_challenges(
        pool, asked_of=caller.account.id, pending=pending, limit=limit, before=before)]


@api_router.get("/challenges/{match_id}", response_model=ChallengeView,
                summary="One challenge and its answers (its challenger and the owners of its bots)")
def api_status(pool: Pool, caller: auth.ApiCaller, match_id: MatchId) -> ChallengeView:
    if not ladder_challenges.involves(pool, match_id, caller.account.id):
        raise HTTPException(404, f"no challenge {match_id} of yours")
    return challenge_view(ladder_challenges.challenge_status(pool, match_id), _mine(pool, caller.account.id))


@api_router.post("/challenges/{match_id}/accept", response_model=ChallengeView,
                 summary="Accept a challenge to your bots (scope challenge; owners of its asked bots)")
def api_accept(pool: Pool, caller: auth.Challenger, now: Now, match_id: MatchId) -> ChallengeView:
    answer(pool, caller.account.id, match_id, accept=True, now=now)
    return challenge_view(ladder_challenges.challenge_status(pool, match_id), _mine(pool, caller.account.id))


@api_router.post("/challenges/{match_id}/decline", response_model=ChallengeView,
                 summary="Decline a challenge to your bots: it is never played (scope challenge)")
def api_decline(pool: Pool, caller: auth.Challenger, now: Now, match_id: MatchId) -> ChallengeView:
    answer(pool, caller.account.id, match_id, accept=False, now=now)
    return challenge_view(ladder_challenges.challenge_status(pool, match_id), _mine(pool, caller.account.id))
