"""How the ladder stores replays: the compact form ``parterre-replay-compact/1`` (docs/architecture.md "Stored form").

A ``parterre-replay/1`` replay (docs/architecture.md, "Replay JSON") spends
most of its bytes on what the rules engine can re-derive: each step's action
JSON, label, seat and periodic state hash. The compact form keeps only

* the header (every field but ``steps``) as JSON, plus the step count and the
  SHA-256 of the original replay text;
* each step's **index in the legal-action list** of its position (chance
  outcomes: the index in the chance-outcome list), all packed into one
  mixed-radix integer: digit *i* in base *n_i*, the number of options at that
  step, so a step costs at most log2(n_i) bits and a forced step nothing
  (chance draws are uniform, where this is the least any code can spend);
* each seat decision's **time in whole milliseconds** (the referee measures
  whole milliseconds), or the flag that the referee played a fallback move.

:func:`expand` rebuilds the original JSON text by re-simulating the game from
its game string: actions, labels, seats and hashes come from the engine, and
the text must hash to the recorded SHA-256, so a corrupted row, or an engine
whose legal-action order or state hash changed since the replay was stored,
raises :class:`StoredReplayError` instead of showing a different game. The
digest sits in the same row: it detects corruption and engine drift, not a
writer with access to the database, who could rewrite both.

:func:`pack` stores a replay compactly only when the compact form expands back
to the very same text (checked at write time); any other replay (an old
referee's fractional milliseconds, a game this process cannot load) is stored
as before: zstd of the JSON text, format ``parterre-replay/1``. The
``replays.format`` column tells the two apart, so rows written before the
compact form existed still load (:func:`unpack`).

Byte layout of a compact row before zstd (all integers unsigned LEB128 varints)::

    b"PRC1" | len(H) | H (UTF-8 JSON: {"header": {...}, "sha256": hex, "steps": n})
            | len(D) | D (the steps' mixed-radix integer, little-endian, no trailing zero byte)
            | T (one varint per seat decision: 0 fallback, 1 no time, t + 2 for t ms)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import zstandard

from games.api import CHANCE, Game, canonical_json
from games.replay import replay_game

FULL_FORMAT = "parterre-replay/1"
"""``replays.format`` of a row holding zstd of the replay JSON text (rows written before the compact form)."""
COMPACT_FORMAT = "parterre-replay-compact/1"
"""``replays.format`` of a row holding zstd of the compact form."""
MAGIC = b"PRC1"
HASH_EVERY = 10
"""A step records a state hash when ``i % HASH_EVERY == HASH_EVERY - 1`` (and the last step); see referee.replay."""
ZSTD_LEVEL = 19
"""zstd level of compact rows (they are a few hundred bytes; level 19 costs well under a millisecond)."""
_STEP_KEYS = frozenset({"i", "player", "action", "label", "time_ms", "fallback", "hash"})


MAX_DIGIT_BYTES_PER_STEP = 4
"""Bound on the step-digit block of a compact row: an index below 2**32 per step (legal lists
are far shorter), so a row claiming more is refused before its digits are converted."""
MAX_COMPACT_BYTES = 4 << 20
"""Largest decompressed compact row accepted (real ones are a few kB)."""
MAX_TEXT_BYTES = 256 << 20
"""Largest decompressed replay JSON text accepted (a long 4-player Flowar match is a few MiB)."""


class StoredReplayError(ValueError):
    """A stored replay row cannot be decoded, or does not re-simulate to its recorded digest."""


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        if pos >= len(buf):
            raise StoredReplayError("compact replay truncated")
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise StoredReplayError("compact replay: varint too long")


def compact(text: str) -> bytes | None:
    """The compact form (before zstd) of a replay JSON text, or None when it has none.

    None when the text is not a ``parterre-replay/1`` object, its game cannot be
    loaded or re-simulated, or the compact form would not expand back to exactly
    ``text`` (non-canonical JSON, fractional milliseconds, extra step fields).
    Never raises for a bad replay: the caller then stores the text as it is.
    """
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FULL_FORMAT:
            return None
        steps = data.get("steps")
        if not isinstance(steps, list):
            return None
        game = replay_game(data)  # its game string at its rules revision
        state = game.new_initial_state()
        times = bytearray()
        digits: list[tuple[int, int]] = []
        for i, step in enumerate(steps):
            if not isinstance(step, dict) or step.get("i") != i or not set(step) <= _STEP_KEYS:
                return None
            legal = state.legal_actions()
            player = state.current_player()
            action = game.action_from_json(step["action"])
            index = legal.index(action)
            t, fallback = step.get("time_ms"), step.get("fallback")
            if len(legal) > 1:
                digits.append((index, len(legal)))
            if player == CHANCE:
                if t is not None or fallback is not False:
                    return None
            elif fallback is True:
                if t is not None:
                    return None
                _varint(times, 0)
            elif t is None:
                _varint(times, 1)
            elif type(t) is int and t >= 0:
                _varint(times, t + 2)
            else:
                return None  # a fraction of a millisecond, or a negative time: keep the text
            state.apply_action(legal[index])
    except Exception:  # any replay this process cannot re-simulate is stored as text
        return None
    head = canonical_json({
        "header": {k: v for k, v in data.items() if k != "steps"},
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "steps": len(steps),
    }).encode("utf-8")
    out = bytearray(MAGIC)
    _varint(out, len(head))
    out += head
    number = 0
    for index, radix in reversed(digits):
        number = number * radix + index
    packed = number.to_bytes((number.bit_length() + 7) // 8, "little")
    _varint(out, len(packed))
    out += packed
    out += times
    raw = bytes(out)
    try:
        if expand(raw) != text:
            return None
    except StoredReplayError:
        return None
    return raw


def expand(raw: bytes) -> str:
    """The replay JSON text of a compact form, rebuilt by re-simulation.

    The game is re-simulated by the replay's rules revision (``rules_revision`` in its
    header, none = 1; ``games.replay.replay_game``) or, when that does not rebuild the
    recorded digest, by each older revision in turn: a ladder older than the referee
    (during an upgrade) compacted by the rules it knew.

    Returns:
        The canonical ``parterre-replay/1`` JSON text, byte-identical to the text
        that was compacted.

    Raises:
        StoredReplayError: bad magic or layout, an index out of range, leftover
            bytes, or a rebuilt text whose SHA-256 differs from the recorded one
            (a tampered row, or an engine whose legal-action order changed).
    """
    if raw[:4] != MAGIC:
        raise StoredReplayError("not a compact replay (bad magic)")
    hlen, pos = _read_varint(raw, 4)
    try:
        head = json.loads(raw[pos:pos + hlen].decode("utf-8"))
        header, digest, n = dict(head["header"]), str(head["sha256"]), int(head["steps"])
        game = replay_game(header)  # its game string at its rules revision
    except (ValueError, KeyError, TypeError) as exc:
        raise StoredReplayError(f"compact replay header unreadable: {exc}") from None
    except Exception as exc:  # the game registry raises GameError subclasses
        raise StoredReplayError(f"compact replay names a game this process cannot load: {exc}") from None
    pos += hlen
    dlen, pos = _read_varint(raw, pos)
    if n < 0 or dlen > MAX_DIGIT_BYTES_PER_STEP * n:
        # Checked before int.from_bytes: a huge digit block would cost seconds of CPU to convert.
        raise StoredReplayError(f"compact replay: {dlen} digit bytes for {n} steps")
    tpos = pos + dlen
    if tpos > len(raw) or dlen > 0 and raw[tpos - 1] == 0:
        raise StoredReplayError("compact replay: truncated or padded step digits")
    # The digits index the legal lists of the rules revision that compacted them: the header's, or
    # an older one when a ladder older than the referee wrote the row (it knew no revisions; a
    # rolling upgrade). The digest decides: the first revision, newest first, that rebuilds it wins.
    why = []
    for revision in range(game.rules_revision, 0, -1):
        try:
            text = _rebuild(raw, pos, tpos, header, n, game.at_revision(revision))
        except StoredReplayError as exc:
            why.append(f"by rules revision {revision}: {exc}")
            continue
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == digest:
            return text
        why.append(f"by rules revision {revision}: another text")
    raise StoredReplayError("compact replay does not re-simulate to its recorded digest (tampered, or the "
                            f"engine's legal-action order changed): {'; '.join(why)}")


def _rebuild(raw: bytes, pos: int, tpos: int, header: dict[str, Any], n: int, game: Game) -> str:
    """The replay text of a compact row's digits ``raw[pos:tpos]`` and times ``raw[tpos:]``, re-simulated
    by ``game`` (its digest is the caller's to check).

    Raises:
        StoredReplayError: an index past the end of the game, leftover digits or bytes.
    """
    number = int.from_bytes(raw[pos:tpos], "little")
    state = game.new_initial_state()
    steps: list[dict[str, Any]] = []
    for i in range(n):
        legal = state.legal_actions()
        if not legal:
            raise StoredReplayError(f"step {i}: the re-simulated game is already over")
        player = state.current_player()
        number, index = divmod(number, len(legal))
        action = legal[index]
        t: int | None = None
        fallback = False
        if player != CHANCE:
            code, tpos = _read_varint(raw, tpos)
            fallback = code == 0
            t = code - 2 if code >= 2 else None
        state.apply_action(action)
        step: dict[str, Any] = {"i": i, "player": player, "action": action.to_json(), "label": action.label(),
                                "time_ms": t, "fallback": fallback}
        if i == n - 1 or i % HASH_EVERY == HASH_EVERY - 1:
            step["hash"] = state.state_hash()
        steps.append(step)
    if tpos != len(raw) or number:
        raise StoredReplayError("compact replay has leftover bytes")
    return canonical_json({**header, "steps": steps})


def pack(text: str, level: int = 3) -> tuple[str, bytes]:
    """``(replays.format, replays.data)`` for a replay JSON text: compact when it round-trips.

    Args:
        text: the replay JSON text as the referee returned it.
        level: zstd level for a row kept as text (``ladder.matches.ZSTD_LEVEL``).
    """
    raw = compact(text)
    if raw is not None:
        return COMPACT_FORMAT, zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    fmt = FULL_FORMAT
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and parsed.get("format"):
            fmt = str(parsed["format"])
    except ValueError:
        pass
    return fmt, zstandard.ZstdCompressor(level=level).compress(text.encode("utf-8"))


def unpack(fmt: str | None, data: bytes) -> str:
    """The replay JSON text of a stored row (``replays.format``, ``replays.data``).

    Rows of any format but :data:`COMPACT_FORMAT` hold zstd of the JSON text
    (every row written before the compact form, and replays that do not
    round-trip).

    Raises:
        StoredReplayError: a compact row that does not decode or verify.
    """
    cap = MAX_COMPACT_BYTES if fmt == COMPACT_FORMAT else MAX_TEXT_BYTES
    raw = _decompress(bytes(data), cap)
    if fmt == COMPACT_FORMAT:
        return expand(raw)
    return raw.decode("utf-8")


def _decompress(data: bytes, cap: int) -> bytes:
    """zstd ``data`` decompressed, read in chunks and refused past ``cap`` bytes (a frame's
    declared size is not trusted: a few kB of zstd can claim, and fill, hundreds of MiB).

    Raises:
        StoredReplayError: not a zstd frame, or more than ``cap`` bytes.
    """
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            while chunk := reader.read(1 << 16):
                out += chunk
                if len(out) > cap:
                    raise StoredReplayError(f"stored replay decompresses to more than {cap} bytes")
    except zstandard.ZstdError as exc:
        raise StoredReplayError(f"stored replay is not a zstd frame: {exc}") from None
    return bytes(out)
