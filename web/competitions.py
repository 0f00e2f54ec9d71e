"""Competitions on the site: the JSON API and the pages (docs/competitions.md "On the site and the API").

Reading is public: ``GET /api/competitions``, ``/api/competitions/{id}`` (the status from the
app's clock, the schedule, the limits, the entrants), ``/table`` (the season's table, or the
frozen final table with shared places as ranges) and ``/evaluation`` (the estimate and the
progress; the seed only once the evaluation has finished: :mod:`ladder.competition_final`
hides it). Writing takes a personal API token (web/auth.py): creating, disqualifying and
extending the scope ``tournament:create`` and the organiser role (the ladder checks the role
and, for the tools, that the caller organises this competition or is an admin); entering the
scope ``bot:manage`` and a bot of the caller's own. The pages do the same through the session
and its CSRF token; a disqualification asks for confirmation first.

Every refusal of the ladder is a 4xx with its reason (:func:`refusal`).
"""

from __future__ import annotations

import pathlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from psycopg_pool import ConnectionPool
from pydantic import AfterValidator, AwareDatetime, BaseModel, Field, ValidationError, field_validator

from games.api import GameError
from games.registry import game_names
from ladder import accounts as acc
from ladder import competition_final as final
from ladder import competition_season as season
from ladder import competitions as comp
from ladder import owned_bots as ob
from ladder.errors import (
    BotNotFoundError,
    CompetitionClosedError,
    CompetitionError,
    CompetitionLimitError,
    CompetitionNotFoundError,
    CompetitionPermissionError,
    TournamentError,
)
from web import auth, datasets
from web.deps import Now, Pool, app_now, app_pool
from web.participants_api import JSON_ID, MAX_PLAYERS, validation_message

MAX_ID = 2**63 - 1
CompetitionId = Annotated[int, Path(ge=1, le=MAX_ID, description="a competition's id")]
PER_PAGE = 100
"""Competitions listed on ``/competitions``."""

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "the ladder refused the request (the detail says why)"},
    401: {"description": "no, an unknown or a revoked API token"},
    403: {"description": "the token lacks the scope, or the caller is not this competition's organiser"},
    404: {"description": "no such competition, or no such bot of the caller's"},
    409: {"description": "entries closed, the deadline cannot move any more, or the account's entry limit"},
}
api_router = APIRouter(prefix="/api", tags=["competitions"], responses=_ERRORS)
page_router = APIRouter(include_in_schema=False)

T = TypeVar("T")


def refusal(exc: Exception) -> HTTPException:
    """The HTTP answer to a ladder error (docs/competitions.md "For the web layer")."""
    if isinstance(exc, (CompetitionNotFoundError, BotNotFoundError)):
        return HTTPException(404, str(exc))
    if isinstance(exc, CompetitionPermissionError):
        return HTTPException(403, str(exc))
    if isinstance(exc, (CompetitionClosedError, CompetitionLimitError)):
        return HTTPException(409, str(exc))
    return HTTPException(400, str(exc))  # CompetitionError, GameError (unknown game or option)


def _ladder(call: Callable[[], T]) -> T:
    try:
        return call()
    except (CompetitionError, CompetitionNotFoundError, CompetitionPermissionError, BotNotFoundError,
            GameError, TournamentError) as exc:  # TournamentError: a game string the planner refuses
        raise refusal(exc) from None


# -- the models -----------------------------------------------------------------------------------


def _in_range(when: datetime) -> datetime:
    """A time the database stores (a year in UTC from 2000 to 9000; further out it cannot be read back)."""
    from datetime import UTC

    try:
        year = when.astimezone(UTC).year
    except OverflowError:  # past year 9999 or before year 1 in UTC
        year = 0
    if not 2000 <= year <= 9000:
        raise ValueError("a time from the year 2000 to 9000")
    return when


When = Annotated[AwareDatetime, AfterValidator(_in_range)]
"""A time with its zone, within the years the schedule may use."""


class CompetitionIn(BaseModel):
    """A competition to create (``POST /api/competitions`` and the organiser's form)."""

    name: str = Field(min_length=1, max_length=200)
    game: str = Field(min_length=1, max_length=64)
    game_options: dict[str, Any] = Field(default_factory=dict, max_length=16)
    player_counts: list[Annotated[int, Field(ge=2, le=MAX_PLAYERS)]] = Field(
        default_factory=lambda: [2], min_length=1, max_length=MAX_PLAYERS - 1,
        description=f"distinct seat counts, each 2-{MAX_PLAYERS}", json_schema_extra={"uniqueItems": True})
    time_control: dict[str, int] | None = Field(None, max_length=4)
    opens_at: When | None = Field(None, description="default: now")
    deadline_at: When
    final_at: When | None = Field(None, description="default: the deadline")
    entry_mode: Literal["hosted", "any"] = "hosted"
    max_entrants_per_account: int = Field(1, ge=1, le=comp.MAX_ENTRANTS_PER_ACCOUNT)
    max_versions_per_day: int = Field(5, ge=1, le=comp.MAX_VERSIONS_PER_DAY)
    description: str = Field("", max_length=comp.MAX_TEXT, description="Markdown")
    rules: str = Field("", max_length=comp.MAX_TEXT, description="Markdown: the rules of conduct")
    final_budget: int = Field(comp.DEFAULT_BUDGET, ge=1, le=final.MAX_BUDGET)
    final_max_batches: int = Field(comp.DEFAULT_MAX_BATCHES, ge=1, le=final.MAX_BATCHES)

    @field_validator("player_counts")
    @classmethod
    def _distinct(cls, counts: list[int]) -> list[int]:
        if len(set(counts)) != len(counts):
            raise ValueError(f"player counts must be distinct, got {counts}")
        return counts


class EntryIn(BaseModel):
    bot_id: int = Field(ge=1, le=JSON_ID)


class DisqualifyIn(BaseModel):
    """One bot or every entrant of one account (exactly one of them), with a reason."""

    bot_id: int | None = Field(None, ge=1, le=JSON_ID)
    account_id: int | None = Field(None, ge=1, le=JSON_ID)
    reason: str = Field(min_length=1, max_length=500)


class ExtendIn(BaseModel):
    deadline_at: When
    final_at: When | None = Field(None, description="default: moves by as much as the deadline")


class CompetitionOut(BaseModel):
    id: int
    name: str
    game: str
    game_options: dict[str, Any]
    player_counts: list[int]
    time_control: dict[str, int]
    opens_at: datetime
    deadline_at: datetime
    final_at: datetime
    entry_mode: str
    max_entrants_per_account: int
    max_versions_per_day: int
    description: str
    rules: str
    organiser_id: int
    organiser: str
    final_budget: int
    final_max_batches: int
    locked_at: datetime | None
    created_at: datetime
    evaluation: str | None
    entrants: int = Field(description="bots entered, disqualified ones included")
    status: Literal["upcoming", "open", "locked", "evaluating", "final"]
    deadline_in_s: float = Field(description="seconds to the deadline (negative once it has passed)")


class EntrantOut(BaseModel):
    competition_id: int
    bot_id: int
    name: str
    account_id: int
    account: str
    entered_at: datetime
    retired: bool
    locked_version_id: int | None
    locked_version: str | None
    disqualified_at: datetime | None
    disqualified_reason: str | None


class CompetitionDetail(CompetitionOut):
    entrant_list: list[EntrantOut]


class TableRowOut(BaseModel):
    place: str = Field(description='"3", a shared place "2-4", or "-" (not placed)')
    place_low: int | None
    place_high: int | None
    bot_id: int
    name: str
    account: str
    rating: float | None
    low: float | None = Field(description="95 % interval")
    high: float | None
    z_next: float | None = Field(description="evidence that it is stronger than the next entrant down")
    matches: int
    standing: Literal["placed", "disqualified", "withdrawn"]


class TableOut(BaseModel):
    competition_id: int
    kind: Literal["season", "final"]
    rows: list[TableRowOut]
    matches: int = Field(description="matches counted in the fit")
    params: dict[str, Any] | None = Field(description="the final evaluation's parameters (final table only)")
    stop_reason: str | None
    recomputed_reason: str | None


class EvaluationOut(BaseModel):
    run: int
    status: str
    seed: str | None = Field(description="null while the evaluation runs (it deals every batch)")
    seed_commitment: str
    params: dict[str, Any]
    estimate: dict[str, Any]
    batches: int
    matches_planned: int
    matches_played: int
    overlapping: int | None
    progress: list[dict[str, Any]]
    stop_reason: str | None
    started_at: datetime
    finished_at: datetime | None
    recomputed_at: datetime | None
    recomputed_reason: str | None


def competition_out(c: comp.Competition, now: datetime) -> dict[str, Any]:
    out = c.to_json(now)
    out["deadline_in_s"] = (c.deadline_at - now).total_seconds()
    return out


def table(pool: ConnectionPool, competition_id: int) -> TableOut:
    """The frozen final table once the evaluation has finished, else the season's table."""
    ev = final.evaluation(pool, competition_id)
    if ev is not None and ev.status == "finished":
        rows = [TableRowOut.model_validate({"place": r.place, **asdict(r)})  # standing: checked against the Literal
                for r in final.final_table(pool, competition_id)]
        counted = int(ev.progress[-1]["counted"]) if ev.progress else 0  # each refit's count is cumulative
        return TableOut(competition_id=competition_id, kind="final", rows=rows, matches=counted, params=ev.params,
                        stop_reason=ev.stop_reason, recomputed_reason=ev.recomputed_reason)
    s = season.season_table(pool, competition_id)
    rows = [TableRowOut(place="-" if r.place is None else str(r.place), place_low=r.place, place_high=r.place,
                        bot_id=r.bot_id, name=r.name, account=r.account, rating=r.rating, low=r.low, high=r.high,
                        z_next=r.z_next, matches=r.matches,
                        standing="disqualified" if r.disqualified else "placed") for r in s.rows]
    return TableOut(competition_id=competition_id, kind="season", rows=rows, matches=s.matches, params=None,
                    stop_reason=None, recomputed_reason=None)


def _evaluation_out(ev: final.Evaluation | None) -> EvaluationOut | None:
    if ev is None:
        return None
    return EvaluationOut.model_validate({k: v for k, v in ev.to_json().items()
                                         if k not in ("id", "competition_id")})


def _create(pool: ConnectionPool, account: acc.Account, body: CompetitionIn, now: datetime) -> comp.Competition:
    if account.role not in ("organiser", "admin"):
        raise HTTPException(403, "only organisers create competitions (ask an admin for the role)")
    return _ladder(lambda: comp.create_competition(
        pool, organiser_id=account.id, now=now, **body.model_dump()))


# -- the API --------------------------------------------------------------------------------------


@api_router.get("/competitions", response_model=list[CompetitionOut],
                summary="Competitions, newest first, with their status now")
def api_competitions(pool: Pool, now: Now,
                     game: Annotated[str | None, Query(min_length=1, max_length=64,
                                                       pattern=r"^[a-z][a-z0-9_]*$")] = None,
                     before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
                     limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[dict[str, Any]]:
    return [competition_out(c, now) for c in comp.list_competitions(pool, limit=limit, before=before, game=game)]


@api_router.get("/competitions/{competition_id}", response_model=CompetitionDetail,
                summary="One competition: status, schedule, limits, description, rules, entrants")
def api_competition(pool: Pool, now: Now, competition_id: CompetitionId) -> dict[str, Any]:
    c = _ladder(lambda: comp.get_competition(pool, competition_id))
    return {**competition_out(c, now), "entrant_list": [e.to_json() for e in comp.entrants(pool, competition_id)]}


@api_router.get("/competitions/{competition_id}/table", response_model=TableOut,
                summary="The season's table, or the frozen final table (shared places as ranges, 95 % intervals)")
def api_table(pool: Pool, competition_id: CompetitionId) -> TableOut:
    return _ladder(lambda: table(pool, competition_id))


@api_router.get("/competitions/{competition_id}/evaluation", response_model=EvaluationOut | None,
                summary="The final evaluation's estimate and progress (null before it starts; no seed while it runs)")
def api_evaluation(pool: Pool, competition_id: CompetitionId) -> EvaluationOut | None:
    _ladder(lambda: comp.get_competition(pool, competition_id))
    return _evaluation_out(final.evaluation(pool, competition_id))


@api_router.get("/competitions/{competition_id}/dataset", response_class=FileResponse,
                responses={200: {"content": {"application/x-tar": {}},
                                 "description": "a tar of manifest.json and matches/<id>.json.zst"},
                           503: {"description": "another dataset is being written; try again"}},
                summary="The finished competition's dataset (docs/competitions.md \"The results archive\")")
def api_dataset(request: Request, pool: Pool, now: Now, competition_id: CompetitionId) -> FileResponse:
    c = _ladder(lambda: comp.get_competition(pool, competition_id))
    if c.status(now) != "final":  # not yet: a conflict with the competition's state, not a bad request
        raise HTTPException(409, f"competition {competition_id} is {c.status(now)}: its dataset is written once "
                                 "the final table is frozen")
    folder = request.app.state.dataset_dir or datasets.private_temp_folder()
    path = _ladder(lambda: datasets.dataset_tar(pool, pathlib.Path(folder), competition_id, now))
    return FileResponse(path, media_type="application/x-tar", filename=f"competition-{competition_id}.tar")


@api_router.post("/competitions", status_code=201, response_model=CompetitionOut,
                 summary="Create a competition (scope tournament:create; organisers)")
def api_create(pool: Pool, now: Now, caller: auth.TournamentCreator, body: CompetitionIn) -> dict[str, Any]:
    return competition_out(_create(pool, caller.account, body, now), now)


@api_router.post("/competitions/{competition_id}/entries", status_code=201, response_model=EntrantOut,
                 summary="Enter one of the caller's bots (scope bot:manage)")
def api_enter(pool: Pool, now: Now, caller: auth.BotManager, competition_id: CompetitionId,
              body: EntryIn) -> dict[str, Any]:
    entrant = _ladder(lambda: comp.enter_competition(pool, competition_id, body.bot_id,
                                                     account_id=caller.account.id, now=now))
    return entrant.to_json()


@api_router.post("/competitions/{competition_id}/disqualify", response_model=list[int],
                 summary="Disqualify a bot or an account's entrants (scope tournament:create; its organiser)")
def api_disqualify(pool: Pool, now: Now, caller: auth.TournamentCreator, competition_id: CompetitionId,
                   body: DisqualifyIn) -> list[int]:
    return _ladder(lambda: comp.disqualify(pool, competition_id, actor_id=caller.account.id, reason=body.reason,
                                           now=now, bot_id=body.bot_id, account_id=body.account_id))


@api_router.post("/competitions/{competition_id}/extend", response_model=CompetitionOut,
                 summary="Move the deadline later (scope tournament:create; its organiser)")
def api_extend(pool: Pool, now: Now, caller: auth.TournamentCreator, competition_id: CompetitionId,
               body: ExtendIn) -> dict[str, Any]:
    c = _ladder(lambda: comp.extend_deadline(pool, competition_id, actor_id=caller.account.id,
                                             deadline_at=body.deadline_at, final_at=body.final_at, now=now))
    return competition_out(c, now)


# -- the pages ------------------------------------------------------------------------------------


def time_left(delta: timedelta) -> str:
    """A span in words, coarsest two units: ``"2 d 3 h"``, ``"45 min"``; ``"passed"`` when negative."""
    s = int(delta.total_seconds())
    if s < 0:
        return "passed"
    d, h, m = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if d:
        return f"{d} d {h} h"
    return f"{h} h {m} min" if h else f"{m} min"


def _render(request: Request, template: str, status: int = 200, **ctx: Any) -> Response:
    ctx.setdefault("message", "")
    ctx.setdefault("error", False)
    account = auth.session_account(request) if isinstance(request.session.get("aid"), int) else None
    ctx.update(account=account, csrf=auth.csrf_token(request) if account else "")
    response: Response = request.app.state.templates.TemplateResponse(request, template, ctx, status_code=status)
    response.headers["cache-control"] = "no-store"
    return response


async def _form(request: Request) -> Any:
    form = await request.form(max_files=0, max_fields=32)
    auth.check_csrf(request, form)
    return form


@page_router.get("/competitions", response_class=HTMLResponse)
def competitions_page(request: Request, pool: Pool, now: Now) -> Response:
    groups: dict[str, list[comp.Competition]] = defaultdict(list)
    for c in comp.list_competitions(pool, limit=PER_PAGE):
        groups[c.status(now)].append(c)
    return _render(request, "competitions.html", groups=[(s, groups[s]) for s in comp.STATUSES], now=now,
                   time_left=time_left)


def _eligible(pool: ConnectionPool, account: acc.Account | None, c: comp.Competition,
              entered: set[int]) -> list[ob.OwnedBot]:
    if account is None:
        return []
    return [b for b in ob.list_owned_bots(pool, account.id)
            if not b.retired and b.id not in entered and (not b.games or c.game in b.games)]


def _competition_page(request: Request, competition_id: int, status: int = 200, **ctx: Any) -> Response:
    pool, now = app_pool(request), app_now(request)
    c = _ladder(lambda: comp.get_competition(pool, competition_id))
    entrants = comp.entrants(pool, competition_id)
    account = auth.session_account(request) if isinstance(request.session.get("aid"), int) else None
    organises = account is not None and (account.id == c.organiser_id or account.role == "admin")
    return _render(request, "competition.html", status, c=c, state=c.status(now), now=now,
                   deadline_left=time_left(c.deadline_at - now), entrants=entrants, table=table(pool, competition_id),
                   evaluation=final.evaluation(pool, competition_id), organises=organises,
                   eligible=_eligible(pool, account, c, {e.bot_id for e in entrants}), **ctx)


@page_router.get("/competitions/new", response_class=HTMLResponse)
def new_competition_page(request: Request, account: auth.SessionAccount) -> Response:
    return _render(request, "competition_new.html", games=game_names(), form={})


_FORM_FIELDS = ("name", "game", "players", "opens_at", "deadline_at", "final_at", "entry_mode",
                "max_entrants_per_account", "max_versions_per_day", "description", "rules", "final_budget",
                "final_max_batches")


@page_router.post("/competitions/new")
async def create_competition_post(request: Request, pool: Pool, now: Now, account: auth.SessionAccount) -> Response:
    form = await _form(request)
    sent = {k: str(form.get(k, "")) for k in _FORM_FIELDS}

    def again(status: int, message: str) -> Response:
        return _render(request, "competition_new.html", status, games=game_names(), form=sent, message=message,
                       error=True)

    try:
        body = CompetitionIn.model_validate({
            **{k: v.strip() for k, v in sent.items() if k not in ("players", "description", "rules") and v.strip()},
            "player_counts": [x.strip() for x in sent["players"].split(",", MAX_PLAYERS) if x.strip()] or ["2"],
            "description": sent["description"], "rules": sent["rules"]})
    except ValidationError as exc:  # the API's own model: the form and the API refuse alike
        return again(422, validation_message(exc, {"player_counts": "players"}))
    try:
        c = _create(pool, account, body, now)
    except HTTPException as exc:
        return again(exc.status_code, str(exc.detail))
    return RedirectResponse(f"/competitions/{c.id}", status_code=303)


@page_router.get("/competitions/{competition_id}", response_class=HTMLResponse)
def competition_page(request: Request, competition_id: CompetitionId) -> Response:
    return _competition_page(request, competition_id)


def _form_int(form: Any, name: str) -> int | None:
    text = str(form.get(name, "")).strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= JSON_ID:
        raise HTTPException(422, f"{name}: a whole number, got {text[:20]!r}")
    return int(text)


async def _tool(request: Request, competition_id: int, act: Callable[[Any, acc.Account, datetime], Response | None]
                ) -> Response:
    """A form's action on the competition: CSRF, the session, then ``act``; a ladder refusal shows the page
    again with the reason."""
    form = await _form(request)
    account = auth.require_session(request)
    try:
        shown = act(form, account, app_now(request))
    except HTTPException as exc:
        if exc.status_code == 404 and "competition" in str(exc.detail):
            raise
        return _competition_page(request, competition_id, exc.status_code, message=str(exc.detail), error=True)
    return shown or RedirectResponse(f"/competitions/{competition_id}", status_code=303)


@page_router.post("/competitions/{competition_id}/enter")
async def enter_post(request: Request, pool: Pool, competition_id: CompetitionId) -> Response:
    def act(form: Any, account: acc.Account, now: datetime) -> None:
        bot_id = _form_int(form, "bot_id")
        if bot_id is None:
            raise HTTPException(422, "choose a bot")
        _ladder(lambda: comp.enter_competition(pool, competition_id, bot_id, account_id=account.id, now=now))

    return await _tool(request, competition_id, act)


@page_router.post("/competitions/{competition_id}/disqualify")
async def disqualify_post(request: Request, pool: Pool, competition_id: CompetitionId) -> Response:
    def act(form: Any, account: acc.Account, now: datetime) -> Response | None:
        bot_id, account_id = _form_int(form, "bot_id"), _form_int(form, "account_id")
        reason = str(form.get("reason", "")).strip()
        if not 1 <= len(reason) <= 500 or (bot_id is None) == (account_id is None):
            raise HTTPException(422, "disqualify one bot or one account, with a reason of 1-500 characters")
        c = _ladder(lambda: comp.get_competition(pool, competition_id))
        if account.id != c.organiser_id and account.role != "admin":
            raise HTTPException(403, f"only the organiser of competition {c.id} (or an admin) may do this")
        if form.get("confirm") != "yes":  # the confirmation step: what would be disqualified, and a button
            who = [e for e in comp.entrants(pool, competition_id) if e.disqualified_at is None
                   and (e.bot_id == bot_id or e.account_id == account_id)]
            if not who:
                raise HTTPException(400, "no entrant left to disqualify there")
            return _render(request, "competition_confirm.html", c=c, who=who, bot_id=bot_id, account_id=account_id,
                           reason=reason)
        _ladder(lambda: comp.disqualify(pool, competition_id, actor_id=account.id, reason=reason, now=now,
                                        bot_id=bot_id, account_id=account_id))
        return None

    return await _tool(request, competition_id, act)


@page_router.post("/competitions/{competition_id}/extend")
async def extend_post(request: Request, pool: Pool, competition_id: CompetitionId) -> Response:
    def act(form: Any, account: acc.Account, now: datetime) -> None:
        try:
            body = ExtendIn.model_validate({"deadline_at": str(form.get("deadline_at", "")).strip(),
                                            **({"final_at": f} if (f := str(form.get("final_at", "")).strip())
                                               else {})})
        except ValidationError as exc:
            raise HTTPException(422, validation_message(exc)) from None
        _ladder(lambda: comp.extend_deadline(pool, competition_id, actor_id=account.id, deadline_at=body.deadline_at,
                                             final_at=body.final_at, now=now))

    return await _tool(request, competition_id, act)
