from proto.parterre.v1 import floriferous_pb2 as _floriferous_pb2
from proto.parterre.v1 import flowar_pb2 as _flowar_pb2
from proto.parterre.v1 import lafleur_pb2 as _lafleur_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ObservationEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBSERVATION_ENCODING_UNSPECIFIED: _ClassVar[ObservationEncoding]
    OBSERVATION_ENCODING_JSON: _ClassVar[ObservationEncoding]
    OBSERVATION_ENCODING_TYPED: _ClassVar[ObservationEncoding]

class RejectionCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_CODE_UNSPECIFIED: _ClassVar[RejectionCode]
    REJECTION_CODE_DUPLICATE: _ClassVar[RejectionCode]
    REJECTION_CODE_STALE: _ClassVar[RejectionCode]
    REJECTION_CODE_NOT_YOUR_TURN: _ClassVar[RejectionCode]
    REJECTION_CODE_LATE: _ClassVar[RejectionCode]
    REJECTION_CODE_MATCH_ENDED: _ClassVar[RejectionCode]
    REJECTION_CODE_UNKNOWN_SEQ: _ClassVar[RejectionCode]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_UNAUTHENTICATED: _ClassVar[ErrorCode]
    ERROR_CODE_PROTOCOL: _ClassVar[ErrorCode]
    ERROR_CODE_NOT_SEATED: _ClassVar[ErrorCode]
    ERROR_CODE_SHUTTING_DOWN: _ClassVar[ErrorCode]
    ERROR_CODE_UNAVAILABLE: _ClassVar[ErrorCode]
    ERROR_CODE_HELLO_REFUSED: _ClassVar[ErrorCode]
OBSERVATION_ENCODING_UNSPECIFIED: ObservationEncoding
OBSERVATION_ENCODING_JSON: ObservationEncoding
OBSERVATION_ENCODING_TYPED: ObservationEncoding
REJECTION_CODE_UNSPECIFIED: RejectionCode
REJECTION_CODE_DUPLICATE: RejectionCode
REJECTION_CODE_STALE: RejectionCode
REJECTION_CODE_NOT_YOUR_TURN: RejectionCode
REJECTION_CODE_LATE: RejectionCode
REJECTION_CODE_MATCH_ENDED: RejectionCode
REJECTION_CODE_UNKNOWN_SEQ: RejectionCode
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_UNAUTHENTICATED: ErrorCode
ERROR_CODE_PROTOCOL: ErrorCode
ERROR_CODE_NOT_SEATED: ErrorCode
ERROR_CODE_SHUTTING_DOWN: ErrorCode
ERROR_CODE_UNAVAILABLE: ErrorCode
ERROR_CODE_HELLO_REFUSED: ErrorCode

class BotMessage(_message.Message):
    __slots__ = ("hello", "decision", "resign", "pong")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    RESIGN_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    resign: Resign
    pong: Pong
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., resign: _Optional[_Union[Resign, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "bot_version", "games", "max_concurrent_matches", "instance_id", "observation_encoding", "max_matches", "only_match_id", "only_attempt", "contract_revision")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_ENCODING_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ONLY_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ONLY_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_REVISION_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    bot_version: str
    games: _containers.RepeatedScalarFieldContainer[str]
    max_concurrent_matches: int
    instance_id: str
    observation_encoding: ObservationEncoding
    max_matches: int
    only_match_id: int
    only_attempt: int
    contract_revision: int
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., max_concurrent_matches: _Optional[int] = ..., instance_id: _Optional[str] = ..., observation_encoding: _Optional[_Union[ObservationEncoding, str]] = ..., max_matches: _Optional[int] = ..., only_match_id: _Optional[int] = ..., only_attempt: _Optional[int] = ..., contract_revision: _Optional[int] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("match_id", "seq", "action_index", "reported_time_ms", "attempt", "debug")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    REPORTED_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DEBUG_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    seq: int
    action_index: int
    reported_time_ms: int
    attempt: int
    debug: str
    def __init__(self, match_id: _Optional[int] = ..., seq: _Optional[int] = ..., action_index: _Optional[int] = ..., reported_time_ms: _Optional[int] = ..., attempt: _Optional[int] = ..., debug: _Optional[str] = ...) -> None: ...

class Resign(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "match_started", "decision_request", "decision_rejected", "match_ended", "ping", "error")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    DECISION_REJECTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_started: MatchStarted
    decision_request: DecisionRequest
    decision_rejected: DecisionRejected
    match_ended: MatchEnded
    ping: Ping
    error: RefereeError
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., decision_rejected: _Optional[_Union[DecisionRejected, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., error: _Optional[_Union[RefereeError, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_id", "referee_id", "contract_revision", "notices")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    REFEREE_ID_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_REVISION_FIELD_NUMBER: _ClassVar[int]
    NOTICES_FIELD_NUMBER: _ClassVar[int]
    bot_id: int
    referee_id: str
    contract_revision: int
    notices: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bot_id: _Optional[int] = ..., referee_id: _Optional[str] = ..., contract_revision: _Optional[int] = ..., notices: _Optional[_Iterable[str]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("base_ms", "increment_ms", "cap_ms", "margin_ms")
    BASE_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    CAP_MS_FIELD_NUMBER: _ClassVar[int]
    MARGIN_MS_FIELD_NUMBER: _ClassVar[int]
    base_ms: int
    increment_ms: int
    cap_ms: int
    margin_ms: int
    def __init__(self, base_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ..., cap_ms: _Optional[int] = ..., margin_ms: _Optional[int] = ...) -> None: ...

class PlayerInfo(_message.Message):
    __slots__ = ("seat", "bot_id", "name", "version")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_id: int
    name: str
    version: str
    def __init__(self, seat: _Optional[int] = ..., bot_id: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "game", "game_string", "options", "seat", "players", "time_control", "seed_commitment", "num_players", "attempt")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    GAME_STRING_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    game: str
    game_string: str
    options: _containers.ScalarMap[str, str]
    seat: int
    players: _containers.RepeatedCompositeFieldContainer[PlayerInfo]
    time_control: TimeControl
    seed_commitment: str
    num_players: int
    attempt: int
    def __init__(self, match_id: _Optional[int] = ..., game: _Optional[str] = ..., game_string: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[_Union[PlayerInfo, _Mapping]]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seed_commitment: _Optional[str] = ..., num_players: _Optional[int] = ..., attempt: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("floriferous", "lafleur", "flowar", "json")
    FLORIFEROUS_FIELD_NUMBER: _ClassVar[int]
    LAFLEUR_FIELD_NUMBER: _ClassVar[int]
    FLOWAR_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    floriferous: _floriferous_pb2.FloriferousObservation
    lafleur: _lafleur_pb2.LaFleurObservation
    flowar: _flowar_pb2.FlowarObservation
    json: str
    def __init__(self, floriferous: _Optional[_Union[_floriferous_pb2.FloriferousObservation, _Mapping]] = ..., lafleur: _Optional[_Union[_lafleur_pb2.LaFleurObservation, _Mapping]] = ..., flowar: _Optional[_Union[_flowar_pb2.FlowarObservation, _Mapping]] = ..., json: _Optional[str] = ...) -> None: ...

class LegalAction(_message.Message):
    __slots__ = ("index", "label", "json", "floriferous", "lafleur", "flowar")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    FLORIFEROUS_FIELD_NUMBER: _ClassVar[int]
    LAFLEUR_FIELD_NUMBER: _ClassVar[int]
    FLOWAR_FIELD_NUMBER: _ClassVar[int]
    index: int
    label: str
    json: str
    floriferous: _floriferous_pb2.FloriferousAction
    lafleur: _lafleur_pb2.LaFleurAction
    flowar: _flowar_pb2.FlowarAction
    def __init__(self, index: _Optional[int] = ..., label: _Optional[str] = ..., json: _Optional[str] = ..., floriferous: _Optional[_Union[_floriferous_pb2.FloriferousAction, _Mapping]] = ..., lafleur: _Optional[_Union[_lafleur_pb2.LaFleurAction, _Mapping]] = ..., flowar: _Optional[_Union[_flowar_pb2.FlowarAction, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "seq", "observation", "legal_actions", "time_left_ms", "deadline_ms", "seat", "game", "attempt")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    seq: int
    observation: Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[LegalAction]
    time_left_ms: int
    deadline_ms: int
    seat: int
    game: str
    attempt: int
    def __init__(self, match_id: _Optional[int] = ..., seq: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[LegalAction, _Mapping]]] = ..., time_left_ms: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., seat: _Optional[int] = ..., game: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class DecisionRejected(_message.Message):
    __slots__ = ("match_id", "seq", "code", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    seq: int
    code: RejectionCode
    reason: str
    def __init__(self, match_id: _Optional[int] = ..., seq: _Optional[int] = ..., code: _Optional[_Union[RejectionCode, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "ranks", "scores", "verdicts", "reason", "seed", "status", "attempt")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    ranks: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[float]
    verdicts: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    seed: str
    status: str
    attempt: int
    def __init__(self, match_id: _Optional[int] = ..., ranks: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[float]] = ..., verdicts: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ..., seed: _Optional[str] = ..., status: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class RefereeError(_message.Message):
    __slots__ = ("code", "message", "match_id")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    message: str
    match_id: int
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., message: _Optional[str] = ..., match_id: _Optional[int] = ...) -> None: ...
