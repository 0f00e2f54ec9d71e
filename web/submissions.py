"""Hosted bots on the web: upload a version, read its verdict, the owner's regression setting (docs/hosted.md).

* ``POST /api/bots/{bot_id}/versions`` (scope ``bot:manage``, owner only): the
  body is the archive itself (``.tar.gz`` or ``.zip``, at most
  :data:`ladder.submissions.MAX_ARCHIVE_BYTES`; ``curl --data-binary
  @bot.tar.gz``). 201 with the version (number, sha256, status
  ``validating``); 400 with the reason when the archive is refused; 413 when
  it is too big (the body is not read past the limit). The body goes to a temporary file as it
  arrives; at most :data:`UPLOADS_AT_ONCE` archives per process are in memory at once.
* ``GET /api/bots/{bot_id}/versions/{number}``: the version's status, the
  validation matches and the regression test (games, Elo with its interval,
  LLR, verdict). The owner also gets the reason and the log (the bot's
  stderr); anyone else the public part only. A participant's CI polls this
  until ``status`` is no longer ``validating`` or ``testing``
  (``parterre bot upload --wait`` does it and sets its exit code).
* ``GET /api/bots/{bot_id}/versions/{number}/games`` (``bot:manage``, owner only): every validation and
  regression game of the version (game, seed, the version's seat from 0, its rank, the ranks, the fault)
  with the address of its replay, ``GET .../games/{kind}/{n}/replay`` (``parterre-replay/1`` JSON).
* ``PUT /api/bots/{bot_id}/hosted-settings``: ``{"block_on_regression": bool}``.
* ``GET /api/bots/{bot_id}/hosted-logs`` (``bot:manage``, owner only): the bot's
  stderr of its newest rated match attempts (``ladder.hosted_logs.match_logs``).

The pages ``/my/bots/{bot_id}/hosted`` and ``/my/bots/{bot_id}/hosted/{number}`` (session, owner
only: another account gets 404, a visitor the login redirect) show the same logs, the newest
:data:`PAGE_LOGS`, each cut to its last :data:`PAGE_LOG_CHARS` characters, autoescaped; the version
page lists its games with the version's seat and a link to each replay,
``/my/bots/{bot_id}/hosted/{number}/games/{kind}/{n}.json`` (session, owner only).
"""

from __future__ import annotations

import asyncio
import tempfile
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import Response
from psycopg_pool import ConnectionPool
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from ladder import accounts as acc
from ladder import hosted_games, hosted_logs
from ladder import owned_bots as ob
from ladder import submissions as sub
from ladder.errors import BotNotFoundError
from web import auth, memory
from web.deps import Pool, app_pool

Id = Annotated[int, Path(ge=1, le=2**63 - 1)]
Number = Annotated[int, Path(ge=1, le=2**31 - 1)]
Kind = Annotated[str, Path(pattern="^(validation|regression)$")]
GameNo = Annotated[int, Path(ge=0, le=2**31 - 1)]
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "the archive or manifest is refused (the detail says why)"},
    401: {"description": "no, an unknown or a revoked API token"},
    403: {"description": "the token lacks the scope"},
    404: {"description": "no such bot or version of the caller's (someone else's answers the same)"},
    413: {"description": "the request body is over the upload limit"},
}
router = APIRouter(prefix="/api", tags=["hosted bots"], responses=_ERRORS)


class HostedSettingsIn(BaseModel):
    block_on_regression: bool


def _owned(pool: ConnectionPool, caller: auth.Caller, bot_id: int) -> ob.OwnedBot:
    try:
        return ob.owned_bot(pool, caller.account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None


def owner_view(version: sub.HostedVersion) -> dict[str, Any]:
    """Everything about a version, for its owner."""
    return {**version.public(), "manifest": version.manifest, "reason": version.reason, "log": version.log,
            "validation": version.validation,
            "decided_at": version.decided_at.isoformat() if version.decided_at else None}


UPLOADS_AT_ONCE = 2
"""Archives one web process holds in memory at once (to inspect and store them); others wait their turn
on disk. An archive is at most 8 MiB, inspecting it a few times that."""
SPOOL_IN_MEMORY = 256 << 10
"""Bytes of an upload kept in memory while it arrives; the rest goes to a temporary file."""


def _upload_slots(request: Request) -> asyncio.Semaphore:
    slots: asyncio.Semaphore | None = getattr(request.app.state, "upload_slots", None)
    if slots is None:
        slots = request.app.state.upload_slots = asyncio.Semaphore(UPLOADS_AT_ONCE)
    return slots


async def _spooled_body(request: Request) -> Any:
    """The request body in a temporary file (memory up to :data:`SPOOL_IN_MEMORY`), at most
    ``MAX_ARCHIVE_BYTES`` (413 past it: nothing more is read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > sub.MAX_ARCHIVE_BYTES:
        raise HTTPException(413, f"archive over {sub.MAX_ARCHIVE_BYTES >> 20} MiB")
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - returned open
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > sub.MAX_ARCHIVE_BYTES:
                raise HTTPException(413, f"archive over {sub.MAX_ARCHIVE_BYTES >> 20} MiB")
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


async def store_version(request: Request, bot_id: int, archive: Any) -> sub.HostedVersion:
    """Read ``archive`` (a seekable file object at most ``MAX_ARCHIVE_BYTES`` long, closed here) and store
    it as a new version, holding one of the process's :data:`UPLOADS_AT_ONCE` slots from the first byte
    read into memory to the end of the inspection and the insert (one thread does all of it, then gives
    the freed memory back: :mod:`web.memory`).

    Raises:
        PendingLimitError, SubmissionError: as :func:`ladder.submissions.create_version` (a body that
            does not start as an archive is refused before it is read: :func:`ladder.submissions.read_archive_file`).
    """
    pool = app_pool(request)

    def read_and_store() -> sub.HostedVersion:
        outcome: sub.HostedVersion | sub.SubmissionError
        try:
            outcome = sub.create_version(pool, bot_id, sub.read_archive_file(archive))
        except sub.SubmissionError as exc:
            outcome = memory.without_frames(exc)
        memory.trim()
        if isinstance(outcome, sub.SubmissionError):
            raise outcome
        return outcome

    try:
        async with _upload_slots(request):
            return await run_in_threadpool(read_and_store)
    finally:
        archive.close()


@router.post("/bots/{bot_id}/versions", status_code=201,
             summary="Upload a new version of the owner's hosted bot (the body is the archive; bot:manage)")
async def api_upload(request: Request, pool: Pool, caller: auth.BotManager, bot_id: Id) -> dict[str, Any]:
    bot = await run_in_threadpool(_owned, pool, caller, bot_id)
    if bot.retired:
        raise HTTPException(409, f"bot {bot_id} is retired")
    try:
        version = await store_version(request, bot_id, await _spooled_body(request))
    except sub.PendingLimitError as exc:
        raise HTTPException(429, str(exc)) from None
    except sub.SubmissionError as exc:
        raise HTTPException(400, f"archive refused: {exc}") from None
    return owner_view(version)


@router.get("/bots/{bot_id}/versions/{number}", summary="A hosted version: status, validation, regression test")
def api_version(request: Request, pool: Pool, bot_id: Id, number: Number) -> dict[str, Any]:
    version = sub.version_by_number(pool, bot_id, number)
    if version is None:
        raise HTTPException(404, f"no version {number} of bot {bot_id}")
    if request.headers.get("authorization"):  # public without a token: the caller is asked only when one is sent
        caller = auth.bearer(request)
        bot = ob.get_bot(pool, bot_id)
        if bot is not None and bot.account_id == caller.account.id:
            return owner_view(version)
    return version.public()


def owned_version(pool: ConnectionPool, account_id: int, bot_id: int, number: int) -> sub.HostedVersion:
    """The caller's bot's version ``number``; 404 when the bot is not the caller's or has no such version."""
    try:
        ob.owned_bot(pool, account_id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    version = sub.version_by_number(pool, bot_id, number)
    if version is None:
        raise HTTPException(404, f"no version {number} of bot {bot_id}")
    return version


def game_rows(games: list[hosted_games.HostedGame], replay_path: str) -> list[dict[str, Any]]:
    """The games as the API and the page list them: each with ``replay``, the address of its replay
    (``replay_path`` formatted with ``kind`` and ``n``), or None when none was kept."""
    return [{**g.to_json(), "replay": replay_path.format(kind=g.kind, n=g.n) if g.has_replay else None}
            for g in games]


def replay_response(pool: ConnectionPool, version: sub.HostedVersion, kind: str, n: int) -> Response:
    """The replay of one of the version's games as a JSON download (404 when there is none)."""
    text = hosted_games.game_replay(pool, version.id, kind, n)
    if text is None:
        raise HTTPException(404, f"no replay of {kind} game {n} of version {version.number}")
    name = f"bot{version.bot_id}-v{version.number}-{kind}-{n}.json"
    return Response(text, media_type="application/json", headers={
        "content-disposition": f'attachment; filename="{name}"', "cache-control": "no-store"})


@router.get("/bots/{bot_id}/versions/{number}/games",
            summary="A hosted version's validation and regression games, the version's seat and replay (owner only)")
def api_version_games(pool: Pool, caller: auth.BotManager, bot_id: Id, number: Number) -> dict[str, Any]:
    version = owned_version(pool, caller.account.id, bot_id, number)
    path = f"/api/bots/{bot_id}/versions/{number}/games/{{kind}}/{{n}}/replay"
    return {"bot_id": bot_id, "number": number, "status": version.status,
            "games": game_rows(hosted_games.version_games(pool, version.id), path)}


@router.get("/bots/{bot_id}/versions/{number}/games/{kind}/{n}/replay",
            summary="The replay of one validation or regression game of a hosted version (owner only)")
def api_version_game_replay(pool: Pool, caller: auth.BotManager, bot_id: Id, number: Number, kind: Kind,
                            n: GameNo) -> Response:
    return replay_response(pool, owned_version(pool, caller.account.id, bot_id, number), kind, n)


@router.put("/bots/{bot_id}/hosted-settings", summary="Whether a failed regression test blocks a new version")
def api_hosted_settings(pool: Pool, caller: auth.BotManager, bot_id: Id, body: HostedSettingsIn) -> dict[str, Any]:
    _owned(pool, caller, bot_id)
    sub.set_block_on_regression(pool, bot_id, body.block_on_regression)
    return {"bot_id": bot_id, "block_on_regression": sub.blocks_on_regression(pool, bot_id)}


@router.get("/bots/{bot_id}/hosted-logs", summary="The hosted bot's stderr of its recent rated matches (owner only)")
def api_hosted_logs(pool: Pool, caller: auth.BotManager, bot_id: Id) -> dict[str, Any]:
    _owned(pool, caller, bot_id)
    return {"bot_id": bot_id, "logs": hosted_logs.match_logs(pool, bot_id)}


# -- pages (session, CSRF): the owner's hosted versions, the upload form, the version page ----------

pages = APIRouter(include_in_schema=False)

PAGE_LOGS = 10
"""Rated-match logs on the owner's hosted page and version page (the newest; the API gives 50)."""
PAGE_LOG_CHARS = 8192
"""Characters of each log shown on a page: its tail (the API gives the whole kept tail, 64 KiB)."""


def page_logs(pool: ConnectionPool, bot_id: int, version_id: int | None = None) -> list[dict[str, Any]]:
    """The owner's newest rated-match logs for a page, each cut to its last :data:`PAGE_LOG_CHARS`
    (``hidden``: how many characters were cut). The template autoescapes them like any value."""
    out = []
    for e in hosted_logs.match_logs(pool, bot_id, limit=PAGE_LOGS, version_id=version_id):
        text = e["log"]
        out.append({**e, "log": text[-PAGE_LOG_CHARS:], "hidden": max(0, len(text) - PAGE_LOG_CHARS),
                    "when": e["created_at"][:19].replace("T", " ")})
    return out


def _hosted_page(request: Request, account: acc.Account, bot_id: int, status: int = 200, message: str = "",
                 error: bool = False) -> Any:
    from web.participants_pages import _render

    pool = app_pool(request)
    try:
        bot = ob.owned_bot(pool, account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    return _render(request, "me/hosted.html", status, account=account, bot=bot, message=message, error=error,
                   versions=sub.list_versions(pool, bot_id), block=sub.blocks_on_regression(pool, bot_id),
                   max_mb=sub.MAX_ARCHIVE_BYTES >> 20, logs=page_logs(pool, bot_id))


@pages.get("/my/bots/{bot_id}/hosted")
def hosted_page(request: Request, account: auth.SessionAccount, bot_id: Id) -> Any:
    return _hosted_page(request, account, bot_id)


@pages.post("/my/bots/{bot_id}/hosted")
async def hosted_upload(request: Request, pool: Pool, account: auth.SessionAccount, bot_id: Id) -> Any:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > sub.MAX_ARCHIVE_BYTES + 65536:
        return _hosted_page(request, account, bot_id, 413, f"archive over {sub.MAX_ARCHIVE_BYTES >> 20} MiB", True)
    form = await request.form(max_files=1, max_fields=8)
    auth.check_csrf(request, form)
    try:
        bot = ob.owned_bot(pool, account.id, bot_id)
    except BotNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    if bot.retired:  # as the API: a retired bot is revoked for good, no new version
        return _hosted_page(request, account, bot_id, 409, f"bot {bot_id} is retired", True)
    if "block_on_regression" in form:
        sub.set_block_on_regression(pool, bot_id, form.get("block_on_regression") == "1")
        return _hosted_page(request, account, bot_id, message="setting saved")
    upload = form.get("archive")
    if upload is None or isinstance(upload, str):
        return _hosted_page(request, account, bot_id, 400, "choose an archive", True)
    try:  # the form parser spooled the file to disk past 1 MiB
        version = await store_version(request, bot_id, upload.file)
    except sub.PendingLimitError as exc:
        return _hosted_page(request, account, bot_id, 429, str(exc), True)
    except sub.SubmissionError as exc:
        return _hosted_page(request, account, bot_id, 400, f"archive refused: {exc}", True)
    return _hosted_page(request, account, bot_id,
                        message=f"version {version.number} uploaded (sha256 {version.sha256}); validation follows")


@pages.get("/my/bots/{bot_id}/hosted/{number}")
def hosted_version_page(request: Request, pool: Pool, account: auth.SessionAccount, bot_id: Id,
                        number: Number) -> Any:
    from web.participants_pages import _render

    version = owned_version(pool, account.id, bot_id, number)
    bot = ob.owned_bot(pool, account.id, bot_id)
    games = game_rows(hosted_games.version_games(pool, version.id),
                      f"/my/bots/{bot_id}/hosted/{number}/games/{{kind}}/{{n}}.json")
    return _render(request, "me/hosted_version.html", account=account, bot=bot, v=version,
                   logs=page_logs(pool, bot_id, version.id),
                   validation=[g for g in games if g["kind"] == "validation"],
                   regression=[g for g in games if g["kind"] == "regression"])


@pages.get("/my/bots/{bot_id}/hosted/{number}/games/{kind}/{n}.json")
def hosted_game_replay(pool: Pool, account: auth.SessionAccount, bot_id: Id, number: Number, kind: Kind,
                       n: GameNo) -> Response:
    return replay_response(pool, owned_version(pool, account.id, bot_id, number), kind, n)
