"""Observations and legal actions on the wire (docs/architecture.md "proto: the wire").

Generic: a game's observation dict and ``Action.to_json()`` have exactly the
shape of its protobuf messages (docs/architecture.md), so conversion is
``google.protobuf.json_format.ParseDict`` driven by one table, game name ->
(observation message, action message, oneof field). No per-game code.

Every :class:`~proto.parterre.v1.referee_pb2.Observation` and
:class:`~proto.parterre.v1.referee_pb2.LegalAction` also carries the canonical
JSON text, unless the bot's ``Hello.observation_encoding`` asks for one
encoding only (docs/bots.md, "Additions for one observation encoding"): the
JSON text only, what the Python SDK and the stdio adapter read, or the typed
message only; a game without an entry in the table
(test games, a game whose messages are not written yet) is sent as JSON only.

Hot path (docs/benchmarks.md): the typed message is first built by the protobuf
constructor from the dict (upb does it in C, ~20x faster than ``ParseDict`` on
a Floriferous observation); only when that fails (JSON-style camelCase names,
int64 given as strings, ...) does ``ParseDict`` run, with its strict errors
(tests check both give the same message for every observation and action of
random playthroughs). The observation's JSON text is compact JSON in the
engine's own key order, written by ``orjson`` when installed. Legal actions
are immutable values, so their encoding is cached per (action, index) across
the rooms of a game.

A ``DecisionRequest`` (once per decision) is not built as a protobuf object at
all: :meth:`GameCodec.decision_request` writes its wire bytes directly
(protobuf's encoding: https://protobuf.dev/programming-guides/encoding/), from
the cached wire bytes of each ``LegalAction`` and the observation's JSON text,
in field-number order as protobuf itself writes them; tests check that the
bytes equal protobuf's serialisation of the same message built through its API
(tests/referee/test_referee_wire.py), for every decision of random playthroughs in each
encoding. It is also how a reconnected seat's pending request is rebuilt. Building the message object, copying each
cached ``LegalAction`` into its repeated field and serialising it again cost
about as much as the observation itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message

from games.api import Action
from proto.parterre.v1 import floriferous_pb2, flowar_pb2, lafleur_pb2, referee_pb2

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TypedCodec:
    """The typed messages of one game.

    Attributes:
        observation: message class of ``state.observation(seat)``.
        action: message class of ``action.to_json()``.
        field: name of the oneof field in ``Observation.game`` and
            ``LegalAction.typed`` (both use the same name).
    """

    observation: type[Message]
    action: type[Message]
    field: str


TYPED: dict[str, TypedCodec] = {
    "floriferous": TypedCodec(
        floriferous_pb2.FloriferousObservation, floriferous_pb2.FloriferousAction, "floriferous"
    ),
    "lafleur": TypedCodec(lafleur_pb2.LaFleurObservation, lafleur_pb2.LaFleurAction, "lafleur"),
    "flowar": TypedCodec(flowar_pb2.FlowarObservation, flowar_pb2.FlowarAction, "flowar"),
}
"""Game name -> typed messages. Games absent here are sent as JSON only."""


class CodecError(ValueError):
    """A dict does not fit the game's message (engine/proto mismatch)."""


ENC_BOTH = referee_pb2.OBSERVATION_ENCODING_UNSPECIFIED
ENC_JSON = referee_pb2.OBSERVATION_ENCODING_JSON
ENC_TYPED = referee_pb2.OBSERVATION_ENCODING_TYPED
"""``Hello.observation_encoding`` values: both encodings (unset, as before the field), JSON only, typed only."""

_CTOR_ERRORS = (TypeError, ValueError, KeyError, AttributeError)
_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
"""Canonical JSON text (same as ``games.api.canonical_json``), with the encoder built once."""
_encode_obs_std = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode



def _encode_obs(obs: Any) -> bytes:
    """Compact JSON (UTF-8) in the engine's own, deterministic key order.

    orjson (a dependency): ~10x faster on a Floriferous observation (90 us -> 7 us on
    the reference machine); what it cannot encode (non-string keys, huge ints) goes
    through the standard library.
    """
    try:
        return orjson.dumps(obs)
    except TypeError:
        return _encode_obs_std(obs).encode()


M = TypeVar("M", bound=Message)


def _build(container_cls: type[M], spec: TypedCodec, kind: str, data: dict[str, Any], **fields: Any) -> M:
    """``container_cls(**fields)`` with ``spec.field`` set from ``data``.

    Raises:
        CodecError: ``data`` does not fit the typed message.
    """
    try:
        return container_cls(**fields, **{spec.field: data})
    except _CTOR_ERRORS:
        msg = container_cls(**fields)
        try:
            json_format.ParseDict(data, getattr(msg, spec.field))
        except json_format.ParseError as exc:
            raise CodecError(f"{spec.field} {kind}: {exc}") from None
        return msg


# -- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) -------------------

def _varint(value: int) -> bytes:
    """Base-128 varint of ``value``; a negative int32/int64 is written as its 64-bit two's complement
    (10 bytes), as protobuf does."""
    if value < 0:
        value += 1 << 64
    if value < 0x80:
        return _SMALL_VARINTS[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS = [bytes((i,)) for i in range(0x80)]
_VARINT, _LENGTH_DELIMITED = 0, 2


def _tag(message: type[Message], field: str, wire_type: int) -> bytes:
    """The key of ``field`` of ``message`` (field number << 3 | wire type), checked against the
    descriptor: varints only for plain int32/int64 fields (never sint/fixed), length-delimited
    only for strings and messages."""
    desc = message.DESCRIPTOR.fields_by_name[field]
    ok = {_VARINT: (desc.TYPE_INT32, desc.TYPE_INT64), _LENGTH_DELIMITED: (desc.TYPE_STRING, desc.TYPE_MESSAGE)}
    if desc.type not in ok[wire_type]:
        raise TypeError(f"{message.DESCRIPTOR.full_name}.{field} is not hand-encodable as wire type {wire_type}")
    return _varint(desc.number << 3 | wire_type)


def _length_field(tag: bytes, data: bytes) -> bytes:
    return tag + _varint(len(data)) + data


_REQ = referee_pb2.DecisionRequest
_T_MATCH_ID, _T_SEQ = _tag(_REQ, "match_id", _VARINT), _tag(_REQ, "seq", _VARINT)
_T_OBSERVATION, _T_LEGAL = _tag(_REQ, "observation", _LENGTH_DELIMITED), _tag(_REQ, "legal_actions", _LENGTH_DELIMITED)
_T_TIME_LEFT, _T_DEADLINE = _tag(_REQ, "time_left_ms", _VARINT), _tag(_REQ, "deadline_ms", _VARINT)
_T_SEAT, _T_GAME, _T_ATTEMPT = _tag(_REQ, "seat", _VARINT), _tag(_REQ, "game", _LENGTH_DELIMITED), \
    _tag(_REQ, "attempt", _VARINT)
_T_OBS_JSON = _tag(referee_pb2.Observation, "json", _LENGTH_DELIMITED)
_T_DECISION_REQUEST = _tag(referee_pb2.RefereeMessage, "decision_request", _LENGTH_DELIMITED)
_REQ_FIELD_ORDER = [f.name for f in sorted(_REQ.DESCRIPTOR.fields, key=lambda f: f.number)]
if _REQ_FIELD_ORDER != ["match_id", "seq", "observation", "legal_actions", "time_left_ms", "deadline_ms", "seat",
                        "game", "attempt"]:  # decision_request() writes them in this order
    raise TypeError(f"DecisionRequest fields changed ({_REQ_FIELD_ORDER}): update GameCodec.decision_request")
_OBS_FIELDS = sorted(f.name for f in referee_pb2.Observation.DESCRIPTOR.fields)
if _OBS_FIELDS != ["floriferous", "flowar", "json", "lafleur"]:  # the JSON-only path writes "json" alone
    raise TypeError(f"Observation fields changed ({_OBS_FIELDS}): update GameCodec.decision_request")
_INT32, _INT64 = (-(1 << 31), 1 << 31), (-(1 << 63), 1 << 63)


def _int_field(tag: bytes, value: int, bounds: tuple[int, int] = _INT64) -> bytes:
    """A varint field; nothing for 0 (proto3 leaves defaults out).

    Raises:
        TypeError: ``value`` is not an ``int`` (a bool or float included), as protobuf does.
        ValueError: ``value`` is outside the field's int32/int64 range, as protobuf does.
    """
    if type(value) is not int:
        raise TypeError(f"{value!r} has type {type(value).__name__}, but expected int")
    if not bounds[0] <= value < bounds[1]:
        raise ValueError(f"Value out of range: {value}")
    return tag + _varint(value) if value else b""


_SHARED: dict[str, GameCodec] = {}


def codec_for(game: str) -> GameCodec:
    """The shared :class:`GameCodec` of ``game`` (its caches serve every room of the game)."""
    codec = _SHARED.get(game)
    if codec is None:
        codec = _SHARED[game] = GameCodec(game)
    return codec


def to_typed(game: str, kind: str, data: dict[str, Any]) -> Message | None:
    """Convert an observation (``kind="observation"``) or action dict to its typed message.

    Returns:
        The message, or None when the game has no typed messages.

    Raises:
        CodecError: the dict does not fit the message.
    """
    spec = TYPED.get(game)
    if spec is None:
        return None
    cls: type[Message] = getattr(spec, kind)
    try:
        return cls(**data)
    except _CTOR_ERRORS:
        msg = cls()
        try:
            json_format.ParseDict(data, msg)
        except json_format.ParseError as exc:
            raise CodecError(f"{game} {kind}: {exc}") from None
        return msg


class GameCodec:
    """Encodes one game's observations and legal actions (one shared per game: :func:`codec_for`).

    Args:
        game: registry name of the game.
        strict: raise :class:`CodecError` on a mismatch; otherwise log it once
            and send JSON only.
    """

    __slots__ = ("game", "spec", "strict", "_by_action", "_by_encoding", "_action_cache", "_warned", "_wire",
                 "_game_field")

    _MAX_CACHE = 20_000

    def __init__(self, game: str, *, strict: bool = False) -> None:
        self.game = game
        self.spec = TYPED.get(game)
        self.strict = strict
        self._by_action: dict[tuple[Action, int], referee_pb2.LegalAction] = {}
        self._by_encoding: dict[tuple[int, Action, int], referee_pb2.LegalAction] = {}
        self._action_cache: dict[Action, tuple[dict[str, Any], str, str, str]] = {}
        # (encoding, id(action), index) -> (action, wire bytes of the legal_actions field); looked up by
        # id (hashing a dataclass action hashes its fields), the entry keeps the action itself
        self._wire: dict[tuple[int, int, int], tuple[Action, bytes]] = {}
        self._game_field = _length_field(_T_GAME, game.encode()) if game else b""
        self._warned = False

    def _mismatch(self, exc: CodecError) -> None:
        if self.strict:
            raise exc
        if not self._warned:
            self._warned = True
            log.error("typed encoding of %s failed, sending JSON only: %s", self.game, exc)

    def action_info(self, action: Action) -> tuple[dict[str, Any], str, str, str]:
        """``(json dict, canonical JSON text, label, label as JSON text)`` of an action, cached."""
        info = self._action_cache.get(action)
        if info is None:
            data = action.to_json()
            label = action.label()
            info = (data, _encode(data), label, _encode(label))
            if len(self._action_cache) >= self._MAX_CACHE:
                self._action_cache.clear()
            self._action_cache[action] = info
        return info

    def legal_action(self, action: Action, index: int) -> referee_pb2.LegalAction:
        """The ``LegalAction`` message of ``action`` at ``index`` (cached; do not mutate)."""
        key = (action, index)
        msg = self._by_action.get(key)
        if msg is None:
            data, text, label, _ = self.action_info(action)
            msg = None
            if self.spec is not None:
                try:
                    msg = _build(referee_pb2.LegalAction, self.spec, "action", data,
                                 index=index, label=label, json=text)
                except CodecError as exc:
                    self._mismatch(exc)
            if msg is None:
                msg = referee_pb2.LegalAction(index=index, label=label, json=text)
            if len(self._by_action) >= self._MAX_CACHE:
                self._by_action.clear()
            self._by_action[key] = msg
        return msg

    def _legal_message(self, action: Action, index: int, encoding: int) -> referee_pb2.LegalAction:
        """The message of an equal action at ``index`` in ``encoding`` (cached by equality: an
        engine that builds new but equal action objects still hits)."""
        if encoding == ENC_JSON:  # no typed form to build and clear: the JSON text and the label
            _, text, label, _ = self.action_info(action)
            return referee_pb2.LegalAction(index=index, label=label, json=text)
        msg = self.legal_action(action, index)
        if encoding == ENC_BOTH:
            return msg
        key = (encoding, action, index)
        one = self._by_encoding.get(key)
        if one is None:
            one = referee_pb2.LegalAction()
            one.CopyFrom(msg)
            one.ClearField("typed" if encoding == ENC_JSON else "json")
            if encoding == ENC_TYPED and not one.HasField("typed"):  # the typed form failed: keep the JSON
                one.json = self.action_info(action)[1]
            if len(self._by_encoding) >= self._MAX_CACHE:
                self._by_encoding.clear()
            self._by_encoding[key] = one
        return one

    def decision_request(self, match_id: int, seq: int, obs: dict[str, Any], actions: Sequence[Action],
                         time_left_ms: int, deadline_ms: int, seat: int, attempt: int,
                         encoding: int = ENC_BOTH) -> bytes:
        """The wire bytes of ``RefereeMessage(decision_request=DecisionRequest(...))`` for this game.

        ``encoding`` is the stream's ``Hello.observation_encoding``: both (0, and any unknown value),
        the JSON text only, or the typed messages only (see :meth:`fill_observation`); each
        ``LegalAction`` is ``index``, ``label`` and the action's canonical JSON and/or typed form.
        ``Session.send`` takes the bytes as they are (``referee.server``'s serializer).

        Raises:
            TypeError, ValueError: an integer field is not an ``int`` or out of its int32/int64
                range (as the protobuf object would raise).
            CodecError: a strict codec's typed encoding failed (:meth:`fill_observation`).
        """
        if encoding == ENC_JSON or self.spec is None:
            text = _encode_obs(obs)
            observation = _length_field(_T_OBS_JSON, text) if text else b""
        else:
            msg = referee_pb2.Observation()
            self.fill_observation(msg, obs, encoding)
            observation = msg.SerializeToString()
        key = ENC_JSON if encoding == ENC_JSON else ENC_TYPED if encoding == ENC_TYPED and self.spec else ENC_BOTH
        wire = self._wire
        parts = [_int_field(_T_MATCH_ID, match_id), _int_field(_T_SEQ, seq), _T_OBSERVATION,
                 _varint(len(observation)), observation]
        for i, a in enumerate(actions):
            entry = wire.get((key, id(a), i))
            if entry is None or entry[0] is not a:
                entry = (a, _length_field(_T_LEGAL, self._legal_message(a, i, key).SerializeToString()))
                if len(wire) >= self._MAX_CACHE:
                    wire.clear()
                wire[(key, id(a), i)] = entry
            parts.append(entry[1])
        parts += (_int_field(_T_TIME_LEFT, time_left_ms), _int_field(_T_DEADLINE, deadline_ms),
                  _int_field(_T_SEAT, seat, _INT32), self._game_field, _int_field(_T_ATTEMPT, attempt, _INT32))
        body = b"".join(parts)
        return _T_DECISION_REQUEST + _varint(len(body)) + body

    def observation(self, obs: dict[str, Any]) -> referee_pb2.Observation:
        """The ``Observation`` message of an observation dict (JSON always, typed when known)."""
        msg = referee_pb2.Observation()
        self.fill_observation(msg, obs)
        return msg

    def fill_observation(self, target: referee_pb2.Observation, obs: dict[str, Any], encoding: int = ENC_BOTH) -> None:
        """Fill an (empty) ``Observation`` message in place, e.g. inside a DecisionRequest.

        ``encoding`` is the stream's ``Hello.observation_encoding``: both (0, the default), the
        JSON text only, or the typed message only (JSON when the game has none, or when the
        typed form fails).
        """
        spec = self.spec
        if encoding != ENC_TYPED or spec is None:
            # protobuf takes UTF-8 bytes for a string field; the .pyi says str. Skips a decode on the hot path.
            target.json = _encode_obs(obs)  # type: ignore[assignment]  # bytes: see above
        if spec is not None and encoding != ENC_JSON:
            sub = getattr(target, spec.field)
            try:
                sub.MergeFrom(spec.observation(**obs))
            except _CTOR_ERRORS:
                sub.Clear()
                try:
                    json_format.ParseDict(obs, sub)
                except json_format.ParseError as exc:
                    target.ClearField(spec.field)
                    self._mismatch(CodecError(f"{spec.field} observation: {exc}"))
                    if not target.json:
                        target.json = _encode_obs(obs)  # type: ignore[assignment]  # bytes, as above
