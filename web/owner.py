"""The owner's view of a bot: its matches with verdicts in words, and the replay from its own seat.

What it shows and to whom: docs/participants.md, "The owner's view".

Every query here takes the caller's account id and checks ownership in SQL;
a match or bot that is not the caller's is :class:`~ladder.read.common.NotFound`,
exactly like one that does not exist, so ids cannot be probed.

The seat view also shows the seat's own debug text (``Decision.debug``, docs/bots.md "Debug
text") beside the step each decision made: read from ``seat_debug`` for the caller's own seat
only, never from the replay. Beside each of the seat's own steps it lists the legal actions the
seat was offered there, rebuilt by re-simulating the replay with the engine at the match's rules
revision (:func:`games.replay.iter_states`), with the labels the referee sent the bot
(``LegalAction.label``: ``Action.label()``) and the index of the one played.

Reasons in words (:func:`reason_in_words`) come from the referee's fault
reason (replay ``fault_reasons``, copied to ``seats.fault_reason``):
``timeout`` says the time used against the time allowed for that decision,
``illegal_action`` the index sent and how many legal actions there were,
``disconnect``/``crash`` when the stream was lost (after which step) and the
grace window it was not back within.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from pydantic import BaseModel

from games.api import GameError
from games.replay import ReplayError, iter_states
from ladder import seat_debug
from ladder.db import connection
from ladder.read import NotFound, ReplayCache
from web.labels import LabelCache, step_labels

_TIMEOUT = re.compile(r"^decision (\d+): ([\d.]+) ms > (\d+) ms$")
_NO_ANSWER = re.compile(r"^decision (\d+): no answer within (\d+) ms \+ (\d+) ms margin$")
_NO_ANSWER_OLD = re.compile(r"^decision (\d+): no answer within (\d+) ms$")  # reasons stored before 2026-12
_ILLEGAL = re.compile(r"^decision (\d+): index (\S+) not in 0\.\.(-?\d+)$")
_NO_SESSION = re.compile(r"^decision (\d+): no session at the deadline$")
_LOST = re.compile(
    r"^stream lost, not back within (\d+) ms(?: \(lost after step (\d+), (\d+) ms before this verdict\))?$")


def reason_in_words(verdict: str | None, reason: str | None) -> str:
    """A sentence for a seat's verdict from the referee's reason text (docs/architecture.md "Verdicts")."""
    reason = reason or ""
    if verdict in (None, "normal"):
        return "played to the end" if verdict == "normal" else ""
    if m := _TIMEOUT.match(reason):
        return (f"timeout on decision {m[1]}: it took {float(m[2]):.1f} ms; the limit was {m[3]} ms "
                "(time allowed plus the margin)")
    if m := _NO_ANSWER.match(reason):
        return f"timeout on decision {m[1]}: no answer within {m[2]} ms + {m[3]} ms margin"
    if m := _NO_ANSWER_OLD.match(reason):  # the number is the limit: time allowed plus the margin
        return f"timeout on decision {m[1]}: no answer within {m[2]} ms (time allowed plus the margin)"
    if m := _ILLEGAL.match(reason):
        n = int(m[3]) + 1
        sent = "no index" if m[2] == "None" else f"index {m[2]}"
        return f"illegal action on decision {m[1]}: it sent {sent}, but there were {n} legal actions (0..{n - 1})"
    if m := _NO_SESSION.match(reason):
        return f"{verdict} on decision {m[1]}: its stream was gone when the decision's deadline passed"
    if m := _LOST.match(reason):
        when = f" after step {m[2]}, {int(m[3]) / 1000:.1f} s before the verdict" if m[2] else ""
        how = "ended" if verdict == "disconnect" else "failed with an error"
        return f"{verdict}: the stream {how}{when} and the bot was not back within {m[1]} ms"
    if verdict == "resigned":
        return "resigned"
    if verdict == "no_show":
        return "no show: no connected session of the bot before the start"
    return f"{verdict}: {reason}" if reason else str(verdict)


class OwnerSeat(BaseModel):
    seat: int
    bot_id: int
    bot_name: str
    mine: bool
    version: str | None
    rank: int | None
    score: float | None
    verdict: str | None
    reason: str
    time_used_ms: int | None
    decisions: int | None


class OwnerMatch(BaseModel):
    match_id: int
    game: str
    status: str
    tournament_id: int | None
    created_at: datetime | None
    finished_at: datetime | None
    seats: list[OwnerSeat]
    rated: bool = True
    unrated_reason: str | None = None


def owner_matches(pool: ConnectionPool, account_id: int, bot_id: int, *, limit: int = 50,
                  before: int | None = None) -> list[OwnerMatch]:
    """The owner's bot's matches (every status: planned, running, finished, ...), newest first.

    Raises:
        NotFound: the bot is not the caller's (or does not exist).
    """
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        if cur.execute("SELECT 1 FROM bots WHERE id = %s AND account_id = %s", (bot_id, account_id)).fetchone() is None:
            raise NotFound(f"you have no bot {bot_id}")
        matches = cur.execute(
            "SELECT m.id, m.game, m.status, m.tournament_id, m.created_at, m.finished_at, m.rated, m.unrated_reason "
            "FROM matches m "
            "JOIN seats s ON s.match_id = m.id WHERE s.bot_id = %s AND (%s::bigint IS NULL OR m.id < %s) "
            "ORDER BY m.id DESC LIMIT %s", (bot_id, before, before, limit)).fetchall()
        ids = [m["id"] for m in matches]
        seats = cur.execute(
            "SELECT s.match_id, s.seat, s.bot_id, b.name, b.account_id, s.bot_version, s.rank, s.score, s.verdict, "
            "s.fault_reason, s.time_used_ms, s.decisions FROM seats s JOIN bots b ON b.id = s.bot_id "
            "WHERE s.match_id = ANY(%s) ORDER BY s.match_id, s.seat", (ids,)).fetchall()
    by_match: dict[int, list[OwnerSeat]] = {}
    for s in seats:
        by_match.setdefault(s["match_id"], []).append(OwnerSeat(
            seat=s["seat"], bot_id=s["bot_id"], bot_name=s["name"], mine=s["account_id"] == account_id,
            version=s["bot_version"], rank=s["rank"], score=s["score"], verdict=s["verdict"],
            reason=reason_in_words(s["verdict"], s["fault_reason"]), time_used_ms=s["time_used_ms"],
            decisions=s["decisions"]))
    return [OwnerMatch(match_id=m["id"], game=m["game"], status=m["status"], tournament_id=m["tournament_id"],
                       created_at=m["created_at"], finished_at=m["finished_at"], seats=by_match.get(m["id"], []),
                       rated=m["rated"], unrated_reason=m["unrated_reason"])
            for m in matches]


class SeatStep(BaseModel):
    step: int
    player: int | None
    mine: bool
    label: str
    time_ms: float | None
    fallback: bool
    observation: dict[str, Any]
    debug: str | None = None
    """This seat's own debug text of the decision that made this step (docs/bots.md, "Debug text")."""
    legal: list[str] | None = None
    """This seat's own steps only: the labels of the legal actions it was offered for the decision that
    made this step, in the referee's order (position = the index a bot answers with), as the engine at
    the match's rules revision gives them in the state before the step (``observation`` of the step
    before, or of the start, is what the seat saw then). None for other seats' steps and chance."""
    chosen: int | None = None
    """Index in ``legal`` of the action played at this step (the bot's answer; the first legal action
    for a ``fallback`` step the referee played for a retired seat)."""


class SeatView(BaseModel):
    match_id: int
    game: str
    seat: int
    bot_id: int
    bot_name: str
    version: str | None
    verdict: str | None
    reason: str
    rejections: list[dict[str, Any]]
    steps: list[SeatStep]


def _offered(legal: list[Any], played: Any) -> tuple[list[str], int | None]:
    """The labels of ``legal`` (the engine's actions, in order) and the index of the one whose JSON is
    ``played`` (the replay step's action); None if none is (a replay that does not re-simulate fails
    earlier, in :func:`games.replay.iter_states`)."""
    chosen = next((k for k, a in enumerate(legal) if a.to_json() == played), None)
    return [a.label() for a in legal], chosen


@dataclass(frozen=True, slots=True)
class _OwnSeat:
    seat: int
    bot_id: int
    name: str
    version: str | None
    verdict: str | None
    reason: str | None


def seat_view(pool: ConnectionPool, replays: ReplayCache, account_id: int, match_id: int,
              bot_id: int | None = None, *, observations: bool = True, labels: LabelCache | None = None) -> SeatView:
    """The finished match replayed from the caller's own seat: ``observation(seat)`` after every step,
    and at each of the seat's own steps the legal actions it was offered and which one was played.

    Args:
        bot_id: which of the caller's bots, when several of them sat in the match (default the first seat).
        observations: False leaves every step's ``observation`` empty (the page draws boards from the
            public board route instead; building them is most of the cost of a long match).
        labels: the app's cache of per-view step labels (:class:`web.labels.LabelCache`), if any.

    Raises:
        NotFound: no seat of the match belongs to the caller (or no such match), or it has no replay yet.
    """
    with connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT s.seat, s.bot_id, b.name, s.bot_version, s.verdict, s.fault_reason FROM seats s "
            "JOIN bots b ON b.id = s.bot_id WHERE s.match_id = %s AND b.account_id = %s "
            "AND (%s::bigint IS NULL OR s.bot_id = %s) ORDER BY s.seat",
            (match_id, account_id, bot_id, bot_id)).fetchall()
        # the seat's own debug text: read only here, after the SQL above found the caller's own seat
        notes = seat_debug.notes_for_seat(conn, match_id, rows[0]["seat"]) if rows else {}
    if not rows:
        raise NotFound(f"you have no seat in match {match_id}")
    own = _OwnSeat(rows[0]["seat"], rows[0]["bot_id"], rows[0]["name"], rows[0]["bot_version"],
                   rows[0]["verdict"], rows[0]["fault_reason"])
    got = replays.get(pool, match_id)
    if got is None:
        raise NotFound(f"match {match_id} has no replay yet (it is not finished)")
    replay = got[0]
    records = replay.get("steps") or []
    steps: list[SeatStep] = []
    try:
        # the labels this seat may read (web/labels.py)
        seen = labels.get(match_id, replay, own.seat) if labels is not None else step_labels(replay, own.seat)
        offered: tuple[list[str], int | None] | None = None  # the seat's legal actions before step i, if its own
        for i, state in iter_states(replay):
            rec = records[i] if i >= 0 else {}
            player = rec.get("player") if i >= 0 else None
            mine = player == own.seat
            legal, chosen = offered if mine and offered is not None else (None, None)
            steps.append(SeatStep(step=i, player=player, mine=mine, label=seen[i] if i >= 0 else "",
                                  time_ms=rec.get("time_ms"), fallback=bool(rec.get("fallback", False)),
                                  observation=state.observation(own.seat) if observations else {},
                                  debug=notes.get(i) if mine else None, legal=legal, chosen=chosen))
            # before the next step is applied, ``state`` is what the seat is asked about if that step is its own
            nxt = records[i + 1] if i + 1 < len(records) else None
            offered = _offered(state.legal_actions(), nxt["action"]) if nxt and nxt.get("player") == own.seat \
                else None
    except (GameError, ReplayError, KeyError, TypeError, ValueError) as exc:
        raise NotFound(f"the replay of match {match_id} cannot be rebuilt here: {exc}") from None
    rejections = replay.get("rejections") or []
    mine = rejections[own.seat] if isinstance(rejections, list) and own.seat < len(rejections) else []
    return SeatView(match_id=match_id, game=str(replay.get("game", "")), seat=own.seat, bot_id=own.bot_id,
                    bot_name=own.name, version=own.version, verdict=own.verdict,
                    reason=reason_in_words(own.verdict, own.reason), rejections=list(mine or []), steps=steps)


LEGAL_SHOWN = 60
"""The most legal actions the seat-view page lists for one decision (the one played is listed too when
it comes later); ``GET /api/matches/{id}/seat-view`` lists them all."""


@dataclass(frozen=True, slots=True)
class Offer:
    """One legal action as the page lists it: its index (what a bot answers with), label, and whether it was played."""

    index: int
    label: str
    chosen: bool


@dataclass(frozen=True, slots=True)
class Decision:
    """One of the seat's own steps as the seat-view page shows it.

    Attributes:
        number: 1 for the seat's first step, 2 for its second...
        step: the step it made (``step.step`` counts from 0, the page from 1).
        asked_at: the step after which the seat was asked (-1: the start): the board it saw is that state's.
        offers: the first ``shown`` legal actions, and the played one if it comes later.
        total: how many legal actions there were.
        listed: how many of the first are in ``offers`` (``total`` unless the list is cut).
        chosen: the played one's index, or None.
        before: the steps since the seat's previous step (other seats and chance), as the seat may read them.
    """

    number: int
    step: SeatStep
    asked_at: int
    offers: list[Offer]
    total: int
    listed: int
    chosen: int | None
    before: list[SeatStep]


def seat_decisions(view: SeatView, shown: int | None = None) -> tuple[list[Decision], list[SeatStep]]:
    """The seat's own steps of ``view`` for the page, and the steps after its last one.

    Args:
        shown: list at most this many legal actions per decision (default :data:`LEGAL_SHOWN`).
    """
    if shown is None:
        shown = LEGAL_SHOWN
    out: list[Decision] = []
    before: list[SeatStep] = []
    for s in view.steps:
        if s.step < 0:
            continue
        if not s.mine:
            before.append(s)
            continue
        legal = s.legal or []
        offers = [Offer(k, label, k == s.chosen) for k, label in enumerate(legal[:shown])]
        if s.chosen is not None and s.chosen >= shown:
            offers.append(Offer(s.chosen, legal[s.chosen], True))
        out.append(Decision(number=len(out) + 1, step=s, asked_at=s.step - 1, offers=offers, total=len(legal),
                            listed=min(len(legal), shown), chosen=s.chosen, before=before))
        before = []
    return out, before
