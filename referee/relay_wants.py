"""What a referee of a cluster asks other referees to lend, and whom it asks (referee/cluster.py).

Pure functions of the rooms, the sessions and the directory (the referees' presence records), so that
the host side of relays reads in one place and is tested without Redis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from referee.room import Room
from referee.sessions import SessionRegistry


def wanted(rooms: Iterable[tuple[Room, Any]], registry: SessionRegistry) -> dict[int, list[int]]:
    """Bots that ``rooms`` wait for (seats not yet bound, or orphaned after a drop): ``{bot_id: [match_id,
    ...]}``, one entry per such seat, minus those that idle sessions of that bot in ``registry`` can take
    (a session pinned by ``Hello.only_match_id``/``only_attempt`` takes only its own match attempt).

    Args:
        rooms: ``(room, task)`` pairs (``RefereeCore.rooms.values()``).
        registry: this referee's sessions.
    """
    waiting: dict[int, list[tuple[int, int]]] = {}
    for room, _ in rooms:
        if room.ended:
            continue
        for seat in room.seats:
            if seat.session is None and (not room.started or seat.verdict.value == "normal"):
                waiting.setdefault(seat.bot_id, []).append((room.spec.match_id, room.spec.attempt))
    want: dict[int, list[int]] = {}
    for bot_id, seats in waiting.items():
        idle = [s for s in registry.by_bot.get(bot_id, ()) if not s.closed and s.free > 0]
        pinned = [s for s in idle if s.only_match_id]
        spare = sum(s.free for s in idle if not s.only_match_id)
        left = []
        for match_id, attempt in seats:
            mine = next((s for s in pinned if s.may_seat(match_id, attempt)), None)
            if mine is not None:
                pinned.remove(mine)
            elif spare > 0:
                spare -= 1
            else:
                left.append(match_id)
        if left:
            want[bot_id] = left
    return want


def lenders(directory: Mapping[str, Any], self_id: str, bot_id: int, match_ids: list[int]) -> list[str]:
    """Other referees that can lend ``bot_id`` for one of ``match_ids``: those with a stream pinned to one
    of them (presence ``"pinned"``) if any, else those with unpinned free capacity (``"open"``; a referee
    from before ``"open"`` was published: its ``"free"``). A referee whose streams of the bot are all
    pinned to other matches is never asked; malformed records are skipped.

    Args:
        directory: referee id -> presence record (JSON from Redis: not trusted to be well formed).
        self_id: this referee's id (never asked).
    """
    pinned, open_ = [], []
    wanted_ids = set(match_ids)
    for rid, rec in directory.items():
        bots = rec.get("bots", {}) if isinstance(rec, dict) and rid != self_id else {}
        info = bots.get(str(bot_id), {}) if isinstance(bots, dict) else {}
        if not isinstance(info, dict) or not info:
            continue
        pins = info.get("pinned")
        free = info.get("open", info.get("free", 0))
        if isinstance(pins, list) and wanted_ids & {m for m in pins if type(m) is int}:
            pinned.append(rid)
        elif type(free) is int and free > 0:
            open_.append(rid)
    return pinned or open_
