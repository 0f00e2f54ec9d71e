from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FlowarObservation(_message.Message):
    __slots__ = ("num_players", "seat", "solo", "first_game_favors", "round", "phase", "current_player", "start_player", "taxus_seat", "turn_track", "passing_order", "turn_order", "turn_seat", "exchange_rate", "kingdoms", "contract_space", "market_space", "fellowship_guild", "fellowship_used", "strike_area", "strikes", "bag", "market", "contract_grid", "flower_deck", "flower_discard", "contract_deck", "contract_discard", "unchosen_contracts", "efficiency_supply", "favor_pool", "guild_tiles", "players", "context", "taxus", "torch_supply", "flower_discard_cards", "contract_discard_cards", "efficiency_discard", "market_redraws")
    class Workers(_message.Message):
        __slots__ = ("trentis", "humans", "foxes")
        TRENTIS_FIELD_NUMBER: _ClassVar[int]
        HUMANS_FIELD_NUMBER: _ClassVar[int]
        FOXES_FIELD_NUMBER: _ClassVar[int]
        trentis: int
        humans: int
        foxes: int
        def __init__(self, trentis: _Optional[int] = ..., humans: _Optional[int] = ..., foxes: _Optional[int] = ...) -> None: ...
    class TransportMeans(_message.Message):
        __slots__ = ("means", "name", "cost")
        MEANS_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        COST_FIELD_NUMBER: _ClassVar[int]
        means: str
        name: str
        cost: int
        def __init__(self, means: _Optional[str] = ..., name: _Optional[str] = ..., cost: _Optional[int] = ...) -> None: ...
    class KingdomBoard(_message.Message):
        __slots__ = ("kingdom", "name", "means", "efficiency", "favor", "next_favor", "workers")
        KINGDOM_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        MEANS_FIELD_NUMBER: _ClassVar[int]
        EFFICIENCY_FIELD_NUMBER: _ClassVar[int]
        FAVOR_FIELD_NUMBER: _ClassVar[int]
        NEXT_FAVOR_FIELD_NUMBER: _ClassVar[int]
        WORKERS_FIELD_NUMBER: _ClassVar[int]
        kingdom: str
        name: str
        means: _containers.RepeatedCompositeFieldContainer[FlowarObservation.TransportMeans]
        efficiency: int
        favor: int
        next_favor: int
        workers: FlowarObservation.Workers
        def __init__(self, kingdom: _Optional[str] = ..., name: _Optional[str] = ..., means: _Optional[_Iterable[_Union[FlowarObservation.TransportMeans, _Mapping]]] = ..., efficiency: _Optional[int] = ..., favor: _Optional[int] = ..., next_favor: _Optional[int] = ..., workers: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ...) -> None: ...
    class GuildTile(_message.Message):
        __slots__ = ("guild", "action", "amount", "flower_price", "workers", "owner")
        GUILD_FIELD_NUMBER: _ClassVar[int]
        ACTION_FIELD_NUMBER: _ClassVar[int]
        AMOUNT_FIELD_NUMBER: _ClassVar[int]
        FLOWER_PRICE_FIELD_NUMBER: _ClassVar[int]
        WORKERS_FIELD_NUMBER: _ClassVar[int]
        OWNER_FIELD_NUMBER: _ClassVar[int]
        guild: int
        action: str
        amount: int
        flower_price: int
        workers: FlowarObservation.Workers
        owner: int
        def __init__(self, guild: _Optional[int] = ..., action: _Optional[str] = ..., amount: _Optional[int] = ..., flower_price: _Optional[int] = ..., workers: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., owner: _Optional[int] = ...) -> None: ...
    class Player(_message.Message):
        __slots__ = ("seat", "coins", "mp", "torches", "loans", "loans_paid", "guild", "workers", "contracts", "hidden_contracts", "dealt", "fresh", "wilting", "below", "delivered", "board_used", "hired", "no_wither", "passed", "below_contracts")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        COINS_FIELD_NUMBER: _ClassVar[int]
        MP_FIELD_NUMBER: _ClassVar[int]
        TORCHES_FIELD_NUMBER: _ClassVar[int]
        LOANS_FIELD_NUMBER: _ClassVar[int]
        LOANS_PAID_FIELD_NUMBER: _ClassVar[int]
        GUILD_FIELD_NUMBER: _ClassVar[int]
        WORKERS_FIELD_NUMBER: _ClassVar[int]
        CONTRACTS_FIELD_NUMBER: _ClassVar[int]
        HIDDEN_CONTRACTS_FIELD_NUMBER: _ClassVar[int]
        DEALT_FIELD_NUMBER: _ClassVar[int]
        FRESH_FIELD_NUMBER: _ClassVar[int]
        WILTING_FIELD_NUMBER: _ClassVar[int]
        BELOW_FIELD_NUMBER: _ClassVar[int]
        DELIVERED_FIELD_NUMBER: _ClassVar[int]
        BOARD_USED_FIELD_NUMBER: _ClassVar[int]
        HIRED_FIELD_NUMBER: _ClassVar[int]
        NO_WITHER_FIELD_NUMBER: _ClassVar[int]
        PASSED_FIELD_NUMBER: _ClassVar[int]
        BELOW_CONTRACTS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        coins: int
        mp: int
        torches: int
        loans: int
        loans_paid: int
        guild: int
        workers: FlowarObservation.Workers
        contracts: _containers.RepeatedScalarFieldContainer[str]
        hidden_contracts: int
        dealt: _containers.RepeatedScalarFieldContainer[str]
        fresh: _containers.RepeatedScalarFieldContainer[str]
        wilting: _containers.RepeatedScalarFieldContainer[str]
        below: _containers.RepeatedScalarFieldContainer[int]
        delivered: _containers.RepeatedScalarFieldContainer[int]
        board_used: _containers.RepeatedScalarFieldContainer[str]
        hired: bool
        no_wither: bool
        passed: bool
        below_contracts: _containers.RepeatedCompositeFieldContainer[FlowarObservation.ContractPile]
        def __init__(self, seat: _Optional[int] = ..., coins: _Optional[int] = ..., mp: _Optional[int] = ..., torches: _Optional[int] = ..., loans: _Optional[int] = ..., loans_paid: _Optional[int] = ..., guild: _Optional[int] = ..., workers: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., contracts: _Optional[_Iterable[str]] = ..., hidden_contracts: _Optional[int] = ..., dealt: _Optional[_Iterable[str]] = ..., fresh: _Optional[_Iterable[str]] = ..., wilting: _Optional[_Iterable[str]] = ..., below: _Optional[_Iterable[int]] = ..., delivered: _Optional[_Iterable[int]] = ..., board_used: _Optional[_Iterable[str]] = ..., hired: _Optional[bool] = ..., no_wither: _Optional[bool] = ..., passed: _Optional[bool] = ..., below_contracts: _Optional[_Iterable[_Union[FlowarObservation.ContractPile, _Mapping]]] = ...) -> None: ...
    class ContractPile(_message.Message):
        __slots__ = ("contracts",)
        CONTRACTS_FIELD_NUMBER: _ClassVar[int]
        contracts: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, contracts: _Optional[_Iterable[str]] = ...) -> None: ...
    class Context(_message.Message):
        __slots__ = ("placed", "fired", "hired", "favor_used", "active_favors", "extra_placement", "strike_worker", "grid", "picks", "kingdom", "delivering", "owed", "exchange_picks", "wildcards", "used_baskets", "exchange_max", "sold")
        PLACED_FIELD_NUMBER: _ClassVar[int]
        FIRED_FIELD_NUMBER: _ClassVar[int]
        HIRED_FIELD_NUMBER: _ClassVar[int]
        FAVOR_USED_FIELD_NUMBER: _ClassVar[int]
        ACTIVE_FAVORS_FIELD_NUMBER: _ClassVar[int]
        EXTRA_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
        STRIKE_WORKER_FIELD_NUMBER: _ClassVar[int]
        GRID_FIELD_NUMBER: _ClassVar[int]
        PICKS_FIELD_NUMBER: _ClassVar[int]
        KINGDOM_FIELD_NUMBER: _ClassVar[int]
        DELIVERING_FIELD_NUMBER: _ClassVar[int]
        OWED_FIELD_NUMBER: _ClassVar[int]
        EXCHANGE_PICKS_FIELD_NUMBER: _ClassVar[int]
        WILDCARDS_FIELD_NUMBER: _ClassVar[int]
        USED_BASKETS_FIELD_NUMBER: _ClassVar[int]
        EXCHANGE_MAX_FIELD_NUMBER: _ClassVar[int]
        SOLD_FIELD_NUMBER: _ClassVar[int]
        placed: int
        fired: bool
        hired: bool
        favor_used: bool
        active_favors: _containers.RepeatedScalarFieldContainer[int]
        extra_placement: bool
        strike_worker: str
        grid: str
        picks: int
        kingdom: str
        delivering: _containers.RepeatedScalarFieldContainer[str]
        owed: _containers.RepeatedScalarFieldContainer[str]
        exchange_picks: int
        wildcards: int
        used_baskets: _containers.RepeatedScalarFieldContainer[str]
        exchange_max: int
        sold: int
        def __init__(self, placed: _Optional[int] = ..., fired: _Optional[bool] = ..., hired: _Optional[bool] = ..., favor_used: _Optional[bool] = ..., active_favors: _Optional[_Iterable[int]] = ..., extra_placement: _Optional[bool] = ..., strike_worker: _Optional[str] = ..., grid: _Optional[str] = ..., picks: _Optional[int] = ..., kingdom: _Optional[str] = ..., delivering: _Optional[_Iterable[str]] = ..., owed: _Optional[_Iterable[str]] = ..., exchange_picks: _Optional[int] = ..., wildcards: _Optional[int] = ..., used_baskets: _Optional[_Iterable[str]] = ..., exchange_max: _Optional[int] = ..., sold: _Optional[int] = ...) -> None: ...
    class MarketRedraw(_message.Message):
        __slots__ = ("round", "slot", "card")
        ROUND_FIELD_NUMBER: _ClassVar[int]
        SLOT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        round: int
        slot: int
        card: str
        def __init__(self, round: _Optional[int] = ..., slot: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...
    class Taxus(_message.Message):
        __slots__ = ("mp", "coins", "torches", "loans", "guild", "pile", "deck", "discard", "last_card", "passed")
        MP_FIELD_NUMBER: _ClassVar[int]
        COINS_FIELD_NUMBER: _ClassVar[int]
        TORCHES_FIELD_NUMBER: _ClassVar[int]
        LOANS_FIELD_NUMBER: _ClassVar[int]
        GUILD_FIELD_NUMBER: _ClassVar[int]
        PILE_FIELD_NUMBER: _ClassVar[int]
        DECK_FIELD_NUMBER: _ClassVar[int]
        DISCARD_FIELD_NUMBER: _ClassVar[int]
        LAST_CARD_FIELD_NUMBER: _ClassVar[int]
        PASSED_FIELD_NUMBER: _ClassVar[int]
        mp: int
        coins: int
        torches: int
        loans: int
        guild: int
        pile: int
        deck: int
        discard: _containers.RepeatedScalarFieldContainer[str]
        last_card: str
        passed: bool
        def __init__(self, mp: _Optional[int] = ..., coins: _Optional[int] = ..., torches: _Optional[int] = ..., loans: _Optional[int] = ..., guild: _Optional[int] = ..., pile: _Optional[int] = ..., deck: _Optional[int] = ..., discard: _Optional[_Iterable[str]] = ..., last_card: _Optional[str] = ..., passed: _Optional[bool] = ...) -> None: ...
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SOLO_FIELD_NUMBER: _ClassVar[int]
    FIRST_GAME_FAVORS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_PLAYER_FIELD_NUMBER: _ClassVar[int]
    START_PLAYER_FIELD_NUMBER: _ClassVar[int]
    TAXUS_SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_TRACK_FIELD_NUMBER: _ClassVar[int]
    PASSING_ORDER_FIELD_NUMBER: _ClassVar[int]
    TURN_ORDER_FIELD_NUMBER: _ClassVar[int]
    TURN_SEAT_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_RATE_FIELD_NUMBER: _ClassVar[int]
    KINGDOMS_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_SPACE_FIELD_NUMBER: _ClassVar[int]
    MARKET_SPACE_FIELD_NUMBER: _ClassVar[int]
    FELLOWSHIP_GUILD_FIELD_NUMBER: _ClassVar[int]
    FELLOWSHIP_USED_FIELD_NUMBER: _ClassVar[int]
    STRIKE_AREA_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    BAG_FIELD_NUMBER: _ClassVar[int]
    MARKET_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_GRID_FIELD_NUMBER: _ClassVar[int]
    FLOWER_DECK_FIELD_NUMBER: _ClassVar[int]
    FLOWER_DISCARD_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_DECK_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_DISCARD_FIELD_NUMBER: _ClassVar[int]
    UNCHOSEN_CONTRACTS_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_SUPPLY_FIELD_NUMBER: _ClassVar[int]
    FAVOR_POOL_FIELD_NUMBER: _ClassVar[int]
    GUILD_TILES_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TAXUS_FIELD_NUMBER: _ClassVar[int]
    TORCH_SUPPLY_FIELD_NUMBER: _ClassVar[int]
    FLOWER_DISCARD_CARDS_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_DISCARD_CARDS_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_DISCARD_FIELD_NUMBER: _ClassVar[int]
    MARKET_REDRAWS_FIELD_NUMBER: _ClassVar[int]
    num_players: int
    seat: int
    solo: bool
    first_game_favors: bool
    round: int
    phase: str
    current_player: int
    start_player: int
    taxus_seat: int
    turn_track: _containers.RepeatedScalarFieldContainer[int]
    passing_order: _containers.RepeatedScalarFieldContainer[int]
    turn_order: _containers.RepeatedScalarFieldContainer[int]
    turn_seat: int
    exchange_rate: int
    kingdoms: _containers.RepeatedCompositeFieldContainer[FlowarObservation.KingdomBoard]
    contract_space: FlowarObservation.Workers
    market_space: FlowarObservation.Workers
    fellowship_guild: int
    fellowship_used: bool
    strike_area: FlowarObservation.Workers
    strikes: _containers.RepeatedScalarFieldContainer[str]
    bag: FlowarObservation.Workers
    market: _containers.RepeatedScalarFieldContainer[str]
    contract_grid: _containers.RepeatedScalarFieldContainer[str]
    flower_deck: int
    flower_discard: int
    contract_deck: int
    contract_discard: int
    unchosen_contracts: int
    efficiency_supply: int
    favor_pool: int
    guild_tiles: _containers.RepeatedCompositeFieldContainer[FlowarObservation.GuildTile]
    players: _containers.RepeatedCompositeFieldContainer[FlowarObservation.Player]
    context: FlowarObservation.Context
    taxus: FlowarObservation.Taxus
    torch_supply: int
    flower_discard_cards: _containers.RepeatedScalarFieldContainer[str]
    contract_discard_cards: _containers.RepeatedScalarFieldContainer[str]
    efficiency_discard: _containers.RepeatedScalarFieldContainer[int]
    market_redraws: _containers.RepeatedCompositeFieldContainer[FlowarObservation.MarketRedraw]
    def __init__(self, num_players: _Optional[int] = ..., seat: _Optional[int] = ..., solo: _Optional[bool] = ..., first_game_favors: _Optional[bool] = ..., round: _Optional[int] = ..., phase: _Optional[str] = ..., current_player: _Optional[int] = ..., start_player: _Optional[int] = ..., taxus_seat: _Optional[int] = ..., turn_track: _Optional[_Iterable[int]] = ..., passing_order: _Optional[_Iterable[int]] = ..., turn_order: _Optional[_Iterable[int]] = ..., turn_seat: _Optional[int] = ..., exchange_rate: _Optional[int] = ..., kingdoms: _Optional[_Iterable[_Union[FlowarObservation.KingdomBoard, _Mapping]]] = ..., contract_space: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., market_space: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., fellowship_guild: _Optional[int] = ..., fellowship_used: _Optional[bool] = ..., strike_area: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., strikes: _Optional[_Iterable[str]] = ..., bag: _Optional[_Union[FlowarObservation.Workers, _Mapping]] = ..., market: _Optional[_Iterable[str]] = ..., contract_grid: _Optional[_Iterable[str]] = ..., flower_deck: _Optional[int] = ..., flower_discard: _Optional[int] = ..., contract_deck: _Optional[int] = ..., contract_discard: _Optional[int] = ..., unchosen_contracts: _Optional[int] = ..., efficiency_supply: _Optional[int] = ..., favor_pool: _Optional[int] = ..., guild_tiles: _Optional[_Iterable[_Union[FlowarObservation.GuildTile, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[FlowarObservation.Player, _Mapping]]] = ..., context: _Optional[_Union[FlowarObservation.Context, _Mapping]] = ..., taxus: _Optional[_Union[FlowarObservation.Taxus, _Mapping]] = ..., torch_supply: _Optional[int] = ..., flower_discard_cards: _Optional[_Iterable[str]] = ..., contract_discard_cards: _Optional[_Iterable[str]] = ..., efficiency_discard: _Optional[_Iterable[int]] = ..., market_redraws: _Optional[_Iterable[_Union[FlowarObservation.MarketRedraw, _Mapping]]] = ...) -> None: ...

class FlowarAction(_message.Message):
    __slots__ = ("kind", "favor", "value", "card", "guild", "worker", "seat", "taxus", "count", "space", "coins", "trentis", "humans", "foxes", "kingdom", "line", "slot", "mp", "give", "take")
    KIND_FIELD_NUMBER: _ClassVar[int]
    FAVOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    GUILD_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TAXUS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    COINS_FIELD_NUMBER: _ClassVar[int]
    TRENTIS_FIELD_NUMBER: _ClassVar[int]
    HUMANS_FIELD_NUMBER: _ClassVar[int]
    FOXES_FIELD_NUMBER: _ClassVar[int]
    KINGDOM_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    MP_FIELD_NUMBER: _ClassVar[int]
    GIVE_FIELD_NUMBER: _ClassVar[int]
    TAKE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    favor: int
    value: int
    card: str
    guild: int
    worker: str
    seat: int
    taxus: str
    count: int
    space: str
    coins: int
    trentis: int
    humans: int
    foxes: int
    kingdom: int
    line: str
    slot: int
    mp: int
    give: str
    take: str
    def __init__(self, kind: _Optional[str] = ..., favor: _Optional[int] = ..., value: _Optional[int] = ..., card: _Optional[str] = ..., guild: _Optional[int] = ..., worker: _Optional[str] = ..., seat: _Optional[int] = ..., taxus: _Optional[str] = ..., count: _Optional[int] = ..., space: _Optional[str] = ..., coins: _Optional[int] = ..., trentis: _Optional[int] = ..., humans: _Optional[int] = ..., foxes: _Optional[int] = ..., kingdom: _Optional[int] = ..., line: _Optional[str] = ..., slot: _Optional[int] = ..., mp: _Optional[int] = ..., give: _Optional[str] = ..., take: _Optional[str] = ...) -> None: ...
