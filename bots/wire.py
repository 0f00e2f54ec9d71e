"""What the referee tells a Python bot, as plain values (docs/bots.md): the SDK's views of
the wire messages.

:class:`MatchInfo` (``MatchStarted``), :class:`MatchResult` (``MatchEnded``, or an
attempt that is gone), :class:`DecisionRequest` (``DecisionRequest``, decoded on
demand), :class:`BotStats` (what a bot saw), and the decoders of observations and
actions. :mod:`bots.sdk` re-exports them all; import them from there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from proto.parterre.v1 import floriferous_pb2, flowar_pb2, lafleur_pb2
from proto.parterre.v1 import referee_pb2 as pb

_loads: Callable[[str | bytes], Any]
try:
    import orjson

    _loads = orjson.loads
except ImportError:  # the SDK wheel needs only grpcio and protobuf: orjson is an optional speed-up
    _loads = json.loads


TYPED_OBSERVATIONS: dict[str, Any] = {
    "floriferous": floriferous_pb2.FloriferousObservation,
    "lafleur": lafleur_pb2.LaFleurObservation,
    "flowar": flowar_pb2.FlowarObservation,
}
"""Game name -> its typed observation message (``DecisionRequest.typed_observation`` from JSON)."""

ENCODINGS: dict[str, pb.ObservationEncoding] = {
    "both": pb.OBSERVATION_ENCODING_UNSPECIFIED,
    "json": pb.OBSERVATION_ENCODING_JSON,
    "typed": pb.OBSERVATION_ENCODING_TYPED,
}
"""``Bot.observation_encoding`` -> ``Hello.observation_encoding``."""


def decode_observation(msg: pb.Observation) -> dict[str, Any]:
    """The observation dict: the JSON text when present, else the typed message
    (``MessageToDict(preserving_proto_field_name=True)``)."""
    if msg.json:
        out: dict[str, Any] = _loads(msg.json)
        return out
    which = msg.WhichOneof("game")
    return {} if which is None else json_format.MessageToDict(getattr(msg, which), preserving_proto_field_name=True)


def decode_action(msg: pb.LegalAction) -> dict[str, Any]:
    """An action dict of a ``LegalAction`` (JSON text, else the typed message)."""
    if msg.json:
        out: dict[str, Any] = _loads(msg.json)
        return out
    which = msg.WhichOneof("typed")
    return {} if which is None else json_format.MessageToDict(getattr(msg, which), preserving_proto_field_name=True)


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A match this bot is seated in (from ``MatchStarted``).

    Attributes:
        match_id: the ladder's match id.
        game / game_string / options: ``"floriferous"``, ``"floriferous(players=2)"``, options as text.
        seat: this bot's seat (0-based); num_players: seats in the match.
        players: per seat ``{"seat", "bot_id", "name", "version"}``.
        time_control: ``{"base_ms", "increment_ms", "cap_ms", "margin_ms"}``.
        seed_commitment: sha256 hex of the seed, revealed at the end.
        attempt: the match attempt (1, 2, ...; 0 from a referee that does not say):
            a new attempt of the same match id means the older one is gone.
    """

    match_id: int
    game: str
    game_string: str
    options: dict[str, str]
    seat: int
    num_players: int
    players: list[dict[str, Any]]
    time_control: dict[str, int]
    seed_commitment: str
    attempt: int = 0

    @classmethod
    def from_message(cls, m: pb.MatchStarted) -> MatchInfo:
        """Build from a ``MatchStarted`` message."""
        return cls(
            match_id=m.match_id, game=m.game, game_string=m.game_string, options=dict(m.options),
            seat=m.seat, num_players=m.num_players,
            players=[{"seat": p.seat, "bot_id": p.bot_id, "name": p.name, "version": p.version} for p in m.players],
            time_control={"base_ms": m.time_control.base_ms, "increment_ms": m.time_control.increment_ms,
                          "cap_ms": m.time_control.cap_ms, "margin_ms": m.time_control.margin_ms},
            seed_commitment=m.seed_commitment, attempt=m.attempt,
        )


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended for this bot (from ``MatchEnded``).

    Attributes:
        match_id / seat: the match and this bot's seat (-1 if unknown).
        ranks / scores / verdicts: per seat.
        reason: why it ended; seed: the revealed seed; status: finished,
            aborted_no_show or infra_error, or ``gone`` (no MatchEnded came: the
            attempt was lost with its referee, see :attr:`Bot.on_match_ended`).
        attempt: the match attempt that ended (0 when unknown).
    """

    match_id: int
    seat: int
    ranks: list[int]
    scores: list[float]
    verdicts: list[str]
    reason: str
    seed: str
    status: str
    attempt: int = 0

    @property
    def rank(self) -> int | None:
        """This bot's rank (1 = winner), None when unknown."""
        return self.ranks[self.seat] if 0 <= self.seat < len(self.ranks) else None

    @property
    def verdict(self) -> str | None:
        """This bot's verdict, None when unknown."""
        return self.verdicts[self.seat] if 0 <= self.seat < len(self.verdicts) else None


class DecisionRequest:
    """One decision to make; what ``Bot.choose`` receives.

    Attributes:
        raw: the ``DecisionRequest`` protobuf message.
        match: the :class:`MatchInfo` (None if MatchStarted was missed).
        received_at: ``time.monotonic()`` when it was read.
    """

    __slots__ = ("raw", "match", "received_at", "connection", "_obs", "_legal", "_typed", "debug_text")

    def __init__(self, raw: pb.DecisionRequest, match: MatchInfo | None, received_at: float,
                 connection: int = 0) -> None:
        self.raw = raw
        self.match = match
        self.received_at = received_at
        self.connection = connection
        self._obs: dict[str, Any] | None = None
        self._legal: list[dict[str, Any]] | None = None
        self._typed: Any = None
        self.debug_text = ""
        """What :meth:`debug` gathered for this decision (sent in ``Decision.debug``)."""

    @property
    def match_id(self) -> int:
        """The match."""
        return self.raw.match_id

    @property
    def seq(self) -> int:
        """Sequence number to echo in the Decision."""
        return self.raw.seq

    @property
    def attempt(self) -> int:
        """The match attempt the request belongs to (echoed in the Decision)."""
        return self.raw.attempt

    @property
    def seat(self) -> int:
        """This bot's seat in the match."""
        return self.raw.seat

    @property
    def game(self) -> str:
        """Registry name of the game (``"floriferous"``)."""
        return self.raw.game

    @property
    def time_left_ms(self) -> int:
        """Bank left (increment included) when the request was sent."""
        return self.raw.time_left_ms

    @property
    def deadline_ms(self) -> int:
        """Milliseconds allowed for this decision (margin not included)."""
        return self.raw.deadline_ms

    def remaining_ms(self) -> float:
        """``deadline_ms`` minus the time since the request was read."""
        return self.raw.deadline_ms - (time.monotonic() - self.received_at) * 1000.0

    @property
    def num_actions(self) -> int:
        """Number of legal actions; answer with an index in ``range(num_actions)``."""
        return len(self.raw.legal_actions)

    @property
    def observation(self) -> dict[str, Any]:
        """The seat's observation as a dict (decoded on first use)."""
        if self._obs is None:
            self._obs = decode_observation(self.raw.observation)
        return self._obs

    @property
    def typed_observation(self) -> Any:
        """The typed observation message (``FloriferousObservation`` ...), or None for a game without one.

        When the referee sent the JSON text only (the SDK's default ``Bot.observation_encoding``),
        the message is built here from the observation dict on first use.
        """
        which = self.raw.observation.WhichOneof("game")
        if which is not None:
            return getattr(self.raw.observation, which)
        if self._typed is None:
            cls = TYPED_OBSERVATIONS.get(self.raw.game)
            if cls is None or not self.raw.observation.json:
                return None
            try:
                self._typed = cls(**self.observation)
            except (TypeError, ValueError, KeyError, AttributeError):
                self._typed = json_format.ParseDict(self.observation, cls(), ignore_unknown_fields=True)
        return self._typed

    @property
    def legal_actions(self) -> list[dict[str, Any]]:
        """Legal actions as dicts, in index order (decoded on first use)."""
        if self._legal is None:
            self._legal = [decode_action(a) for a in self.raw.legal_actions]
        return self._legal

    @property
    def labels(self) -> list[str]:
        """Short human labels of the legal actions, in index order."""
        return [a.label for a in self.raw.legal_actions]

    def debug(self, text: str) -> None:
        """Add ``text`` to this decision's debug text (one line per call), sent with the answer in
        ``Decision.debug`` and shown only to the bot's owner, beside the step this decision made
        (docs/bots.md, "Debug text"). At most ``proto.contract.DEBUG_MAX_BYTES`` bytes of UTF-8
        are sent: a longer text is cut and ends with ``…[cut]``."""
        self.debug_text = f"{self.debug_text}\n{text}" if self.debug_text else str(text)


@dataclass
class BotStats:
    """What a bot saw, for logs and tests.

    Attributes:
        welcomes: number of Welcome messages (one per successful connection).
        bot_id: id the referee announced.
        matches: MatchInfo by match id (latest MatchStarted).
        results: MatchEnded results in arrival order.
        rejections: DecisionRejected messages received.
        errors: Error messages received.
        decisions: Decisions sent.
        gone: match attempts that ended without a MatchEnded (a newer attempt of
            the match started: the old one died with its referee).
        discarded: answers not sent because their request no longer existed
            (its stream or its match attempt was gone by the time ``choose`` returned).
    """

    welcomes: int = 0
    bot_id: int = 0
    matches: dict[int, MatchInfo] = field(default_factory=dict)
    results: list[MatchResult] = field(default_factory=list)
    rejections: list[pb.DecisionRejected] = field(default_factory=list)
    errors: list[pb.RefereeError] = field(default_factory=list)
    decisions: int = 0
    gone: list[MatchResult] = field(default_factory=list)
    discarded: int = 0
