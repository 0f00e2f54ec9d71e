from proto.parterre.v1 import referee_pb2 as _referee_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunMatchRequest(_message.Message):
    __slots__ = ("match_id", "attempt", "game_string", "seed", "seat_bot_ids", "time_control", "no_show_timeout_ms", "max_duration_ms", "seat_bot_names", "trial", "seat_credential_digests")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    GAME_STRING_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEAT_BOT_IDS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    NO_SHOW_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SEAT_BOT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    SEAT_CREDENTIAL_DIGESTS_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    attempt: int
    game_string: str
    seed: str
    seat_bot_ids: _containers.RepeatedScalarFieldContainer[int]
    time_control: _referee_pb2.TimeControl
    no_show_timeout_ms: int
    max_duration_ms: int
    seat_bot_names: _containers.RepeatedScalarFieldContainer[str]
    trial: bool
    seat_credential_digests: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[int] = ..., attempt: _Optional[int] = ..., game_string: _Optional[str] = ..., seed: _Optional[str] = ..., seat_bot_ids: _Optional[_Iterable[int]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., no_show_timeout_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., seat_bot_names: _Optional[_Iterable[str]] = ..., trial: _Optional[bool] = ..., seat_credential_digests: _Optional[_Iterable[str]] = ...) -> None: ...

class MatchStartedInfo(_message.Message):
    __slots__ = ("match_id", "attempt", "game_string", "seed_commitment", "players", "time_control", "referee_id")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    GAME_STRING_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    REFEREE_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    attempt: int
    game_string: str
    seed_commitment: str
    players: _containers.RepeatedCompositeFieldContainer[_referee_pb2.PlayerInfo]
    time_control: _referee_pb2.TimeControl
    referee_id: str
    def __init__(self, match_id: _Optional[int] = ..., attempt: _Optional[int] = ..., game_string: _Optional[str] = ..., seed_commitment: _Optional[str] = ..., players: _Optional[_Iterable[_Union[_referee_pb2.PlayerInfo, _Mapping]]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., referee_id: _Optional[str] = ...) -> None: ...

class Progress(_message.Message):
    __slots__ = ("step", "decisions")
    STEP_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    step: int
    decisions: int
    def __init__(self, step: _Optional[int] = ..., decisions: _Optional[int] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("seat", "bot_id", "rank", "score", "verdict", "time_used_ms", "decisions", "debug_notes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    TIME_USED_MS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    DEBUG_NOTES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_id: int
    rank: int
    score: float
    verdict: str
    time_used_ms: int
    decisions: int
    debug_notes: _containers.RepeatedCompositeFieldContainer[DebugNote]
    def __init__(self, seat: _Optional[int] = ..., bot_id: _Optional[int] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ..., verdict: _Optional[str] = ..., time_used_ms: _Optional[int] = ..., decisions: _Optional[int] = ..., debug_notes: _Optional[_Iterable[_Union[DebugNote, _Mapping]]] = ...) -> None: ...

class DebugNote(_message.Message):
    __slots__ = ("step", "text")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    step: int
    text: str
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("status", "seats", "replay_json", "match_id", "attempt", "reason", "referee_id")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    REPLAY_JSON_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REFEREE_ID_FIELD_NUMBER: _ClassVar[int]
    status: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    replay_json: str
    match_id: int
    attempt: int
    reason: str
    referee_id: str
    def __init__(self, status: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ..., replay_json: _Optional[str] = ..., match_id: _Optional[int] = ..., attempt: _Optional[int] = ..., reason: _Optional[str] = ..., referee_id: _Optional[str] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("started", "progress", "result")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    started: MatchStartedInfo
    progress: Progress
    result: MatchResult
    def __init__(self, started: _Optional[_Union[MatchStartedInfo, _Mapping]] = ..., progress: _Optional[_Union[Progress, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...
