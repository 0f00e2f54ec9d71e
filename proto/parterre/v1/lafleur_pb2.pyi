from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LaFleurObservation(_message.Message):
    __slots__ = ("num_players", "seat", "solo", "difficulty", "round", "max_rounds", "grande_soiree", "phase", "current_player", "first_player", "turn_order", "market", "garden_features", "visitors", "event", "flower_deck", "feature_deck", "visitor_deck", "artisan_deck", "event_deck", "visitor_deck_bottom", "flower_discard", "feature_discard", "visitor_discard", "artisan_discard", "event_discard", "players", "purchase", "prompt")
    class Allure(_message.Message):
        __slots__ = ("architecture", "paths", "water", "flowers", "vistas")
        ARCHITECTURE_FIELD_NUMBER: _ClassVar[int]
        PATHS_FIELD_NUMBER: _ClassVar[int]
        WATER_FIELD_NUMBER: _ClassVar[int]
        FLOWERS_FIELD_NUMBER: _ClassVar[int]
        VISTAS_FIELD_NUMBER: _ClassVar[int]
        architecture: int
        paths: int
        water: int
        flowers: int
        vistas: int
        def __init__(self, architecture: _Optional[int] = ..., paths: _Optional[int] = ..., water: _Optional[int] = ..., flowers: _Optional[int] = ..., vistas: _Optional[int] = ...) -> None: ...
    class BoardSpace(_message.Message):
        __slots__ = ("space", "card")
        SPACE_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        space: int
        card: str
        def __init__(self, space: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...
    class Visitor(_message.Message):
        __slots__ = ("card", "pawn", "romance", "overflow")
        CARD_FIELD_NUMBER: _ClassVar[int]
        PAWN_FIELD_NUMBER: _ClassVar[int]
        ROMANCE_FIELD_NUMBER: _ClassVar[int]
        OVERFLOW_FIELD_NUMBER: _ClassVar[int]
        card: str
        pawn: int
        romance: bool
        overflow: bool
        def __init__(self, card: _Optional[str] = ..., pawn: _Optional[int] = ..., romance: _Optional[bool] = ..., overflow: _Optional[bool] = ...) -> None: ...
    class Artisan(_message.Message):
        __slots__ = ("card", "placed", "tilted", "location")
        CARD_FIELD_NUMBER: _ClassVar[int]
        PLACED_FIELD_NUMBER: _ClassVar[int]
        TILTED_FIELD_NUMBER: _ClassVar[int]
        LOCATION_FIELD_NUMBER: _ClassVar[int]
        card: str
        placed: bool
        tilted: bool
        location: str
        def __init__(self, card: _Optional[str] = ..., placed: _Optional[bool] = ..., tilted: _Optional[bool] = ..., location: _Optional[str] = ...) -> None: ...
    class Player(_message.Message):
        __slots__ = ("seat", "automaton", "character", "chosen", "dealt_characters", "dealt_artisans", "artisans", "hand", "cards_in_hand", "coins", "prestige", "allure", "total_allure", "garden_features", "companion", "visitors", "used_prestige", "romancing")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        AUTOMATON_FIELD_NUMBER: _ClassVar[int]
        CHARACTER_FIELD_NUMBER: _ClassVar[int]
        CHOSEN_FIELD_NUMBER: _ClassVar[int]
        DEALT_CHARACTERS_FIELD_NUMBER: _ClassVar[int]
        DEALT_ARTISANS_FIELD_NUMBER: _ClassVar[int]
        ARTISANS_FIELD_NUMBER: _ClassVar[int]
        HAND_FIELD_NUMBER: _ClassVar[int]
        CARDS_IN_HAND_FIELD_NUMBER: _ClassVar[int]
        COINS_FIELD_NUMBER: _ClassVar[int]
        PRESTIGE_FIELD_NUMBER: _ClassVar[int]
        ALLURE_FIELD_NUMBER: _ClassVar[int]
        TOTAL_ALLURE_FIELD_NUMBER: _ClassVar[int]
        GARDEN_FEATURES_FIELD_NUMBER: _ClassVar[int]
        COMPANION_FIELD_NUMBER: _ClassVar[int]
        VISITORS_FIELD_NUMBER: _ClassVar[int]
        USED_PRESTIGE_FIELD_NUMBER: _ClassVar[int]
        ROMANCING_FIELD_NUMBER: _ClassVar[int]
        seat: int
        automaton: bool
        character: str
        chosen: bool
        dealt_characters: _containers.RepeatedScalarFieldContainer[str]
        dealt_artisans: _containers.RepeatedScalarFieldContainer[str]
        artisans: _containers.RepeatedCompositeFieldContainer[LaFleurObservation.Artisan]
        hand: _containers.RepeatedScalarFieldContainer[str]
        cards_in_hand: int
        coins: int
        prestige: int
        allure: LaFleurObservation.Allure
        total_allure: int
        garden_features: _containers.RepeatedScalarFieldContainer[str]
        companion: str
        visitors: _containers.RepeatedScalarFieldContainer[str]
        used_prestige: bool
        romancing: bool
        def __init__(self, seat: _Optional[int] = ..., automaton: _Optional[bool] = ..., character: _Optional[str] = ..., chosen: _Optional[bool] = ..., dealt_characters: _Optional[_Iterable[str]] = ..., dealt_artisans: _Optional[_Iterable[str]] = ..., artisans: _Optional[_Iterable[_Union[LaFleurObservation.Artisan, _Mapping]]] = ..., hand: _Optional[_Iterable[str]] = ..., cards_in_hand: _Optional[int] = ..., coins: _Optional[int] = ..., prestige: _Optional[int] = ..., allure: _Optional[_Union[LaFleurObservation.Allure, _Mapping]] = ..., total_allure: _Optional[int] = ..., garden_features: _Optional[_Iterable[str]] = ..., companion: _Optional[str] = ..., visitors: _Optional[_Iterable[str]] = ..., used_prestige: _Optional[bool] = ..., romancing: _Optional[bool] = ...) -> None: ...
    class Purchase(_message.Message):
        __slots__ = ("feature", "space", "remaining", "discount", "pair_allure", "pair_first")
        FEATURE_FIELD_NUMBER: _ClassVar[int]
        SPACE_FIELD_NUMBER: _ClassVar[int]
        REMAINING_FIELD_NUMBER: _ClassVar[int]
        DISCOUNT_FIELD_NUMBER: _ClassVar[int]
        PAIR_ALLURE_FIELD_NUMBER: _ClassVar[int]
        PAIR_FIRST_FIELD_NUMBER: _ClassVar[int]
        feature: str
        space: int
        remaining: LaFleurObservation.Allure
        discount: bool
        pair_allure: str
        pair_first: str
        def __init__(self, feature: _Optional[str] = ..., space: _Optional[int] = ..., remaining: _Optional[_Union[LaFleurObservation.Allure, _Mapping]] = ..., discount: _Optional[bool] = ..., pair_allure: _Optional[str] = ..., pair_first: _Optional[str] = ...) -> None: ...
    class Prompt(_message.Message):
        __slots__ = ("kind", "source", "text", "options")
        KIND_FIELD_NUMBER: _ClassVar[int]
        SOURCE_FIELD_NUMBER: _ClassVar[int]
        TEXT_FIELD_NUMBER: _ClassVar[int]
        OPTIONS_FIELD_NUMBER: _ClassVar[int]
        kind: str
        source: str
        text: str
        options: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, kind: _Optional[str] = ..., source: _Optional[str] = ..., text: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ...) -> None: ...
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SOLO_FIELD_NUMBER: _ClassVar[int]
    DIFFICULTY_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    MAX_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    GRANDE_SOIREE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_PLAYER_FIELD_NUMBER: _ClassVar[int]
    FIRST_PLAYER_FIELD_NUMBER: _ClassVar[int]
    TURN_ORDER_FIELD_NUMBER: _ClassVar[int]
    MARKET_FIELD_NUMBER: _ClassVar[int]
    GARDEN_FEATURES_FIELD_NUMBER: _ClassVar[int]
    VISITORS_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    FLOWER_DECK_FIELD_NUMBER: _ClassVar[int]
    FEATURE_DECK_FIELD_NUMBER: _ClassVar[int]
    VISITOR_DECK_FIELD_NUMBER: _ClassVar[int]
    ARTISAN_DECK_FIELD_NUMBER: _ClassVar[int]
    EVENT_DECK_FIELD_NUMBER: _ClassVar[int]
    VISITOR_DECK_BOTTOM_FIELD_NUMBER: _ClassVar[int]
    FLOWER_DISCARD_FIELD_NUMBER: _ClassVar[int]
    FEATURE_DISCARD_FIELD_NUMBER: _ClassVar[int]
    VISITOR_DISCARD_FIELD_NUMBER: _ClassVar[int]
    ARTISAN_DISCARD_FIELD_NUMBER: _ClassVar[int]
    EVENT_DISCARD_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PURCHASE_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    num_players: int
    seat: int
    solo: bool
    difficulty: str
    round: int
    max_rounds: int
    grande_soiree: bool
    phase: str
    current_player: int
    first_player: int
    turn_order: _containers.RepeatedScalarFieldContainer[int]
    market: _containers.RepeatedCompositeFieldContainer[LaFleurObservation.BoardSpace]
    garden_features: _containers.RepeatedCompositeFieldContainer[LaFleurObservation.BoardSpace]
    visitors: _containers.RepeatedCompositeFieldContainer[LaFleurObservation.Visitor]
    event: str
    flower_deck: int
    feature_deck: int
    visitor_deck: int
    artisan_deck: int
    event_deck: int
    visitor_deck_bottom: _containers.RepeatedScalarFieldContainer[str]
    flower_discard: _containers.RepeatedScalarFieldContainer[str]
    feature_discard: _containers.RepeatedScalarFieldContainer[str]
    visitor_discard: _containers.RepeatedScalarFieldContainer[str]
    artisan_discard: _containers.RepeatedScalarFieldContainer[str]
    event_discard: _containers.RepeatedScalarFieldContainer[str]
    players: _containers.RepeatedCompositeFieldContainer[LaFleurObservation.Player]
    purchase: LaFleurObservation.Purchase
    prompt: LaFleurObservation.Prompt
    def __init__(self, num_players: _Optional[int] = ..., seat: _Optional[int] = ..., solo: _Optional[bool] = ..., difficulty: _Optional[str] = ..., round: _Optional[int] = ..., max_rounds: _Optional[int] = ..., grande_soiree: _Optional[bool] = ..., phase: _Optional[str] = ..., current_player: _Optional[int] = ..., first_player: _Optional[int] = ..., turn_order: _Optional[_Iterable[int]] = ..., market: _Optional[_Iterable[_Union[LaFleurObservation.BoardSpace, _Mapping]]] = ..., garden_features: _Optional[_Iterable[_Union[LaFleurObservation.BoardSpace, _Mapping]]] = ..., visitors: _Optional[_Iterable[_Union[LaFleurObservation.Visitor, _Mapping]]] = ..., event: _Optional[str] = ..., flower_deck: _Optional[int] = ..., feature_deck: _Optional[int] = ..., visitor_deck: _Optional[int] = ..., artisan_deck: _Optional[int] = ..., event_deck: _Optional[int] = ..., visitor_deck_bottom: _Optional[_Iterable[str]] = ..., flower_discard: _Optional[_Iterable[str]] = ..., feature_discard: _Optional[_Iterable[str]] = ..., visitor_discard: _Optional[_Iterable[str]] = ..., artisan_discard: _Optional[_Iterable[str]] = ..., event_discard: _Optional[_Iterable[str]] = ..., players: _Optional[_Iterable[_Union[LaFleurObservation.Player, _Mapping]]] = ..., purchase: _Optional[_Union[LaFleurObservation.Purchase, _Mapping]] = ..., prompt: _Optional[_Union[LaFleurObservation.Prompt, _Mapping]] = ...) -> None: ...

class LaFleurAction(_message.Message):
    __slots__ = ("kind", "deck", "card", "seat", "cards", "artisan", "location", "space", "allure", "visitor", "romance", "accept", "option")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    ARTISAN_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    ALLURE_FIELD_NUMBER: _ClassVar[int]
    VISITOR_FIELD_NUMBER: _ClassVar[int]
    ROMANCE_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    kind: str
    deck: str
    card: str
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    artisan: str
    location: str
    space: int
    allure: str
    visitor: str
    romance: bool
    accept: bool
    option: int
    def __init__(self, kind: _Optional[str] = ..., deck: _Optional[str] = ..., card: _Optional[str] = ..., seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., artisan: _Optional[str] = ..., location: _Optional[str] = ..., space: _Optional[int] = ..., allure: _Optional[str] = ..., visitor: _Optional[str] = ..., romance: _Optional[bool] = ..., accept: _Optional[bool] = ..., option: _Optional[int] = ...) -> None: ...
