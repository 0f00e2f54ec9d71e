from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FloriferousObservation(_message.Message):
    __slots__ = ("num_players", "seat", "solo", "extended", "competitive_bounties", "day", "round", "num_rounds", "direction", "phase", "current_player", "turn_order", "garden", "players", "bounties", "tea_holder", "tea_tossed", "garden_deck", "desire_deck", "stone_supply", "crow")
    class Cell(_message.Message):
        __slots__ = ("column", "card", "face_down", "stones", "crow_stones", "pawn")
        COLUMN_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        FACE_DOWN_FIELD_NUMBER: _ClassVar[int]
        STONES_FIELD_NUMBER: _ClassVar[int]
        CROW_STONES_FIELD_NUMBER: _ClassVar[int]
        PAWN_FIELD_NUMBER: _ClassVar[int]
        column: int
        card: str
        face_down: bool
        stones: int
        crow_stones: bool
        pawn: int
        def __init__(self, column: _Optional[int] = ..., card: _Optional[str] = ..., face_down: _Optional[bool] = ..., stones: _Optional[int] = ..., crow_stones: _Optional[bool] = ..., pawn: _Optional[int] = ...) -> None: ...
    class GardenRow(_message.Message):
        __slots__ = ("row", "kind", "cells")
        ROW_FIELD_NUMBER: _ClassVar[int]
        KIND_FIELD_NUMBER: _ClassVar[int]
        CELLS_FIELD_NUMBER: _ClassVar[int]
        row: int
        kind: str
        cells: _containers.RepeatedCompositeFieldContainer[FloriferousObservation.Cell]
        def __init__(self, row: _Optional[int] = ..., kind: _Optional[str] = ..., cells: _Optional[_Iterable[_Union[FloriferousObservation.Cell, _Mapping]]] = ...) -> None: ...
    class Player(_message.Message):
        __slots__ = ("seat", "pawn_row", "pawn_column", "cards", "stones", "flower_tokens", "bounty_points")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        PAWN_ROW_FIELD_NUMBER: _ClassVar[int]
        PAWN_COLUMN_FIELD_NUMBER: _ClassVar[int]
        CARDS_FIELD_NUMBER: _ClassVar[int]
        STONES_FIELD_NUMBER: _ClassVar[int]
        FLOWER_TOKENS_FIELD_NUMBER: _ClassVar[int]
        BOUNTY_POINTS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        pawn_row: int
        pawn_column: int
        cards: _containers.RepeatedScalarFieldContainer[str]
        stones: int
        flower_tokens: int
        bounty_points: int
        def __init__(self, seat: _Optional[int] = ..., pawn_row: _Optional[int] = ..., pawn_column: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., stones: _Optional[int] = ..., flower_tokens: _Optional[int] = ..., bounty_points: _Optional[int] = ...) -> None: ...
    class BountyColumn(_message.Message):
        __slots__ = ("day", "points", "seats")
        DAY_FIELD_NUMBER: _ClassVar[int]
        POINTS_FIELD_NUMBER: _ClassVar[int]
        SEATS_FIELD_NUMBER: _ClassVar[int]
        day: int
        points: int
        seats: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, day: _Optional[int] = ..., points: _Optional[int] = ..., seats: _Optional[_Iterable[int]] = ...) -> None: ...
    class BountyCard(_message.Message):
        __slots__ = ("bounty", "requirements", "columns")
        BOUNTY_FIELD_NUMBER: _ClassVar[int]
        REQUIREMENTS_FIELD_NUMBER: _ClassVar[int]
        COLUMNS_FIELD_NUMBER: _ClassVar[int]
        bounty: str
        requirements: _containers.RepeatedScalarFieldContainer[str]
        columns: _containers.RepeatedCompositeFieldContainer[FloriferousObservation.BountyColumn]
        def __init__(self, bounty: _Optional[str] = ..., requirements: _Optional[_Iterable[str]] = ..., columns: _Optional[_Iterable[_Union[FloriferousObservation.BountyColumn, _Mapping]]] = ...) -> None: ...
    class Crow(_message.Message):
        __slots__ = ("deck", "discard", "last_card", "crow_card_stones")
        DECK_FIELD_NUMBER: _ClassVar[int]
        DISCARD_FIELD_NUMBER: _ClassVar[int]
        LAST_CARD_FIELD_NUMBER: _ClassVar[int]
        CROW_CARD_STONES_FIELD_NUMBER: _ClassVar[int]
        deck: int
        discard: _containers.RepeatedScalarFieldContainer[str]
        last_card: str
        crow_card_stones: int
        def __init__(self, deck: _Optional[int] = ..., discard: _Optional[_Iterable[str]] = ..., last_card: _Optional[str] = ..., crow_card_stones: _Optional[int] = ...) -> None: ...
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SOLO_FIELD_NUMBER: _ClassVar[int]
    EXTENDED_FIELD_NUMBER: _ClassVar[int]
    COMPETITIVE_BOUNTIES_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    NUM_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_PLAYER_FIELD_NUMBER: _ClassVar[int]
    TURN_ORDER_FIELD_NUMBER: _ClassVar[int]
    GARDEN_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BOUNTIES_FIELD_NUMBER: _ClassVar[int]
    TEA_HOLDER_FIELD_NUMBER: _ClassVar[int]
    TEA_TOSSED_FIELD_NUMBER: _ClassVar[int]
    GARDEN_DECK_FIELD_NUMBER: _ClassVar[int]
    DESIRE_DECK_FIELD_NUMBER: _ClassVar[int]
    STONE_SUPPLY_FIELD_NUMBER: _ClassVar[int]
    CROW_FIELD_NUMBER: _ClassVar[int]
    num_players: int
    seat: int
    solo: bool
    extended: bool
    competitive_bounties: bool
    day: int
    round: int
    num_rounds: int
    direction: str
    phase: str
    current_player: int
    turn_order: _containers.RepeatedScalarFieldContainer[int]
    garden: _containers.RepeatedCompositeFieldContainer[FloriferousObservation.GardenRow]
    players: _containers.RepeatedCompositeFieldContainer[FloriferousObservation.Player]
    bounties: _containers.RepeatedCompositeFieldContainer[FloriferousObservation.BountyCard]
    tea_holder: int
    tea_tossed: bool
    garden_deck: int
    desire_deck: int
    stone_supply: int
    crow: FloriferousObservation.Crow
    def __init__(self, num_players: _Optional[int] = ..., seat: _Optional[int] = ..., solo: _Optional[bool] = ..., extended: _Optional[bool] = ..., competitive_bounties: _Optional[bool] = ..., day: _Optional[int] = ..., round: _Optional[int] = ..., num_rounds: _Optional[int] = ..., direction: _Optional[str] = ..., phase: _Optional[str] = ..., current_player: _Optional[int] = ..., turn_order: _Optional[_Iterable[int]] = ..., garden: _Optional[_Iterable[_Union[FloriferousObservation.GardenRow, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[FloriferousObservation.Player, _Mapping]]] = ..., bounties: _Optional[_Iterable[_Union[FloriferousObservation.BountyCard, _Mapping]]] = ..., tea_holder: _Optional[int] = ..., tea_tossed: _Optional[bool] = ..., garden_deck: _Optional[int] = ..., desire_deck: _Optional[int] = ..., stone_supply: _Optional[int] = ..., crow: _Optional[_Union[FloriferousObservation.Crow, _Mapping]] = ...) -> None: ...

class FloriferousAction(_message.Message):
    __slots__ = ("kind", "bounty", "seat", "card", "crow", "row", "stones", "toss")
    KIND_FIELD_NUMBER: _ClassVar[int]
    BOUNTY_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CROW_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    STONES_FIELD_NUMBER: _ClassVar[int]
    TOSS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    bounty: str
    seat: int
    card: str
    crow: str
    row: int
    stones: int
    toss: bool
    def __init__(self, kind: _Optional[str] = ..., bounty: _Optional[str] = ..., seat: _Optional[int] = ..., card: _Optional[str] = ..., crow: _Optional[str] = ..., row: _Optional[int] = ..., stones: _Optional[int] = ..., toss: _Optional[bool] = ...) -> None: ...
