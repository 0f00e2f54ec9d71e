"""A seat's own debug text per decision (``Decision.debug``), stored apart from the replay.

docs/bots.md, "Debug text": the referee hands each seat's notes to the worker in
``SeatResult.debug_notes`` (never inside ``replay_json``); :func:`store` writes them in
``record_result``'s transaction to ``seat_debug`` (migration 0015), one row per seat that has
any, as a zstd frame of the JSON list ``[[step, text], ...]``. :func:`notes_for_seat` is the
one reader; its only caller is the owner's seat view (``web/owner.py``), after it has checked
that the seat's bot is the caller's. The replay, its export, the dataset and the live feed
never read this table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import zstandard

from ladder.errors import ResultError
from proto.contract import DEBUG_MAX_BYTES, DEBUG_MAX_SEAT_BYTES, cap_debug

ZSTD_LEVEL = 3
"""zstd level of the stored notes."""

MAX_RAW_BYTES = 4 * (DEBUG_MAX_SEAT_BYTES + DEBUG_MAX_BYTES) + (1 << 20)
"""The most a stored frame may expand to when read: the referee's cap on a seat's text (with
JSON's escapes and the step numbers, generously) — a larger frame is refused, not inflated."""


def parse_notes(raw: Any, seat: int) -> list[tuple[int, str]]:
    """A result seat's ``debug_notes`` (absent or ``[]``: none) as ``[(step, text)]``, each text cut
    to :data:`~proto.contract.DEBUG_MAX_BYTES` again and the seat's notes held to
    :data:`~proto.contract.DEBUG_MAX_SEAT_BYTES` as the referee holds them (the note that would go
    beyond says so in the referee's words (``referee.seat.Seat.note_debug``), later ones are dropped):
    the ladder does not trust the wire.

    Raises:
        ResultError: not a list of ``[step, text]`` pairs with int steps and str texts.
    """
    if raw is None:
        return []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ResultError(f"seat {seat}: debug_notes must be a list of [step, text]")
    notes = []
    kept = 0
    for item in raw:
        if not isinstance(item, Sequence) or isinstance(item, (str, bytes)) or len(item) != 2:
            raise ResultError(f"seat {seat}: a debug note must be [step, text], got {item!r:.80}")
        step, text = item
        if isinstance(step, bool) or not isinstance(step, int) or step < 0 or not isinstance(text, str):
            raise ResultError(f"seat {seat}: a debug note must be [step >= 0, text], got {item!r:.80}")
        if not text or kept > DEBUG_MAX_SEAT_BYTES:
            continue  # every item is still checked above: a malformed one anywhere refuses the result
        text = cap_debug(text)
        size = len(text.encode("utf-8"))
        if kept + size > DEBUG_MAX_SEAT_BYTES:
            text = f"[debug text over {DEBUG_MAX_SEAT_BYTES} bytes in this match: the rest is not kept]"
            size = DEBUG_MAX_SEAT_BYTES + 1  # nothing after this one
        kept += size
        notes.append((step, text))
    return notes


def store(conn: Any, match_id: int, notes_by_seat: Mapping[int, list[tuple[int, str]]]) -> None:
    """Write each seat's notes (seats without notes get no row), inside the caller's transaction."""
    rows = []
    for seat, notes in sorted(notes_by_seat.items()):
        if notes:
            raw = json.dumps([[step, text] for step, text in notes], ensure_ascii=False,
                             separators=(",", ":")).encode("utf-8")
            rows.append((match_id, seat, zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw), len(notes),
                         len(raw)))
    if rows:
        conn.cursor().executemany(
            "INSERT INTO seat_debug (match_id, seat, data, notes, raw_bytes) VALUES (%s, %s, %s, %s, %s)", rows)


def notes_for_seat(conn: Any, match_id: int, seat: int) -> dict[int, str]:
    """``{step: text}`` of one seat of one match (``{}`` when it sent none). Only for that seat's
    owner: the caller must have checked the seat's bot is the reader's."""
    row = conn.execute("SELECT data FROM seat_debug WHERE match_id = %s AND seat = %s",
                       (match_id, seat)).fetchone()
    if row is None:
        return {}
    data = bytes(row[0] if not isinstance(row, Mapping) else row["data"])
    # max_output_size bounds only a frame that does not declare its size; one that declares more is refused unread
    if zstandard.frame_content_size(data) > MAX_RAW_BYTES:
        raise ValueError(f"seat_debug of match {match_id} seat {seat} declares over {MAX_RAW_BYTES} bytes")
    raw = zstandard.ZstdDecompressor().decompress(data, max_output_size=MAX_RAW_BYTES)
    return {int(step): str(text) for step, text in json.loads(raw)}
