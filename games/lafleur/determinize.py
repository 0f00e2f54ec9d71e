"""Determinization: a La Fleur observation -> a random full state consistent with it.

Rulebook: La Fleur, "Player Setup" (Flower cards in hand: "Do not show these
cards to the other players") and the decks of "Game Board Setup" (face down,
only their sizes are known). What a seat does not see, once every Character
and Artisan is revealed (see :mod:`games.lafleur.observation`): the other
players' Flower cards in hand (except those everybody saw taken face-up from
the Flower Market) and the content of the six decks. The observation is a
snapshot, so the cards of each deck that the observation does not show (on
the board, in a Château, in a discard pile, in the seat's own hand or seen
face-up in another hand) are *unseen*: a determinization deals the unseen
Flower cards, uniformly at random, to the hidden places of the other hands
(as many as ``cards_in_hand`` says) and to the Flower deck (as many as
``flower_deck`` says); the other decks get that many of their unseen cards
(the rest, for example Characters returned to the box, are out of play).

**Which positions.** The state of a match carries a stack of pending rule
steps (an effect half resolved, a Garden Party in progress) that a snapshot
does not show. The pending steps are fixed, and rebuilt here, only where a
seat is asked to *place an Artisan* (phase ``place``) in a game of 2-4
players: the rest of the round is then "more turns, the Garden Party, End of
Round". Every other decision (a Character or Artisans at setup, the
sub-decisions of a location or an effect, the solo game) raises
:class:`UnsupportedPosition`; the search bot plays those by the greedy
strategy (decision recorded in ``docs/search.md``). The searched tree still
goes through every sub-decision, inside the determinized states.

Method: determinized search for imperfect-information games (Cowling, Powley
& Whitehouse 2012, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2)).
"""

from __future__ import annotations

import random
from typing import Any

from games.api import Game
from games.lafleur.cards import (
    ALLURE_INDEX,
    D_ARTISAN,
    D_CHARACTER,
    D_EVENT,
    D_FEATURE,
    D_FLOWER,
    D_VISITOR,
    DECK_NAMES,
    DECKS,
    EVENTS,
    FEATURE_COUNTS,
    INDEX,
    LOCATION_INDEX,
)
from games.lafleur.constants import P_PLACE, PHASE_NAMES, SOIREE
from games.lafleur.state import LaFleurState
from games.native import set_fields

_DECK_OBS = ("flower_deck", "feature_deck", "visitor_deck", "artisan_deck", "", "event_deck")
"""Observation field with the size of each deck, by deck number ("" = not shown: Characters)."""
_DISCARD_OBS = ("flower_discard", "feature_discard", "visitor_discard", "artisan_discard", "", "event_discard")


class DeterminizeError(ValueError):
    """The observation is not one this game can produce (wrong shape, unknown cards, counts)."""


class UnsupportedPosition(DeterminizeError):
    """A position whose pending rule steps a snapshot does not fix (see the module docstring)."""


def supported(observation: dict[str, Any]) -> bool:
    """True when :func:`determinize` can rebuild ``observation``'s position (phase ``place``, 2-4 players)."""
    return (not observation.get("solo", False) and int(observation.get("num_players", 0)) >= 2
            and observation.get("phase") == PHASE_NAMES[P_PLACE]
            and int(observation.get("current_player", -1)) == int(observation.get("seat", -2)))


def determinize(game: Game, observation: dict[str, Any], rng: random.Random) -> LaFleurState:
    """A full state drawn uniformly among those consistent with ``observation``.

    Args:
        game: the :class:`~games.lafleur.game.LaFleurGame` of the match (2-4 players).
        observation: the observation of the seat to act (``State.observation(seat)``)
            at a ``place`` decision.
        rng: source of the random choices.

    Returns:
        A state whose ``observation(seat)`` equals ``observation`` and whose legal
        actions are those of the observed position, in the same order. Its history
        is empty (a position, not a replay).

    Raises:
        UnsupportedPosition: not a ``place`` decision of the observing seat, or solo.
        DeterminizeError: the observation does not fit ``game`` (player count,
            unknown cards, more hidden places than unseen cards).
    """
    obs = observation
    n = game.num_players
    if int(obs.get("num_players", 0)) != n:
        raise DeterminizeError(f"observation has {obs.get('num_players')} players, the game {n}")
    if not supported(obs):
        raise UnsupportedPosition(f"no determinization at phase {obs.get('phase')!r} (solo: {obs.get('solo')})")
    seat = int(obs["seat"])
    st = game.new_initial_state()
    assert isinstance(st, LaFleurState)

    seen: list[set[int]] = [set() for _ in range(6)]

    def card(deck: int, cid: str) -> int:
        where = INDEX.get(cid)
        if where is None or where[0] != deck:
            raise DeterminizeError(f"{cid!r} is not a {DECK_NAMES[deck]} card")
        seen[deck].add(where[1])
        return where[1]

    market = [card(D_FLOWER, m["card"]) if m.get("card") else -1 for m in obs.get("market", [])]
    display = [card(D_FEATURE, g["card"]) if g.get("card") else -1 for g in obs.get("garden_features", [])]
    vis = obs.get("visitors", [])
    visitors = [card(D_VISITOR, v["card"]) for v in vis]
    disc = [[card(d, c) for c in obs.get(_DISCARD_OBS[d], [])] if _DISCARD_OBS[d] else [] for d in range(6)]
    event = card(D_EVENT, obs["event"]) if obs.get("event") else -1
    vbottom = [card(D_VISITOR, v) for v in obs.get("visitor_deck_bottom", [])]

    players = obs.get("players", [])
    if len(players) != n:
        raise DeterminizeError("one record per player expected")
    hands: list[list[int]] = []
    opened: list[list[int]] = []
    hidden_slots: list[int] = []
    arts: list[list[int]] = []
    for p, rec in enumerate(players):
        shown = [card(D_FLOWER, c) for c in rec.get("hand", [])]
        hands.append(shown)
        opened.append([] if p == seat else list(shown))
        hidden_slots.append(0 if p == seat else int(rec.get("cards_in_hand", 0)) - len(shown))
        if hidden_slots[-1] < 0:
            raise DeterminizeError(f"player {p} shows more cards than it holds")
        arts.append([card(D_ARTISAN, a["card"]) for a in rec.get("artisans", [])])
    features = [[card(D_FEATURE, f) for f in rec.get("garden_features", [])] for rec in players]
    party = [[card(D_VISITOR, v) for v in rec.get("visitors", [])] for rec in players]
    companion = [card(D_VISITOR, rec["companion"]) if rec.get("companion") else -1 for rec in players]
    character = [card(D_CHARACTER, rec["character"]) if rec.get("character") else -1 for rec in players]

    # Unseen cards of each deck, dealt at random to the hidden hands and the decks.
    pools = [[x for x in range(len(DECKS[DECK_NAMES[d]])) if x not in seen[d]] for d in range(6)]
    for pool in pools:
        rng.shuffle(pool)
    flowers = pools[D_FLOWER]
    for p in range(n):
        k = hidden_slots[p]
        if k > len(flowers):
            raise DeterminizeError("more hidden Flower cards than unseen ones")
        hands[p].extend(flowers[:k])
        del flowers[:k]
    decks: list[list[int]] = []
    for d in range(6):
        size = int(obs.get(_DECK_OBS[d], 0)) if _DECK_OBS[d] else len(pools[d])
        if d == D_VISITOR:
            size -= len(vbottom)
        if size > len(pools[d]) or size < 0:
            raise DeterminizeError(f"the {DECK_NAMES[d]} deck has {size} cards, {len(pools[d])} unseen")
        decks.append(sorted(pools[d][:size]))
    indeck = []
    for d in range(6):
        flags = bytearray(len(DECKS[DECK_NAMES[d]]))
        for x in decks[d]:
            flags[x] = 1
        indeck.append(flags)

    fallure = [[sum(FEATURE_COUNTS[f][t] for f in features[p]) for t in range(5)] for p in range(n)]
    rnd = int(obs.get("round", 0))
    first = int(obs.get("first_player", 0))
    final = bool(obs.get("grande_soiree", False))
    prestige = [int(r.get("prestige", 0)) for r in players]
    order = [int(s) for s in obs.get("turn_order", [])]
    cur = int(obs["current_player"])
    modify: dict[str, Any] = {}
    if event >= 0 and EVENTS[event].ability.timing == "round":
        modify = dict(EVENTS[event].ability.effect.get("modify", {}))

    set_fields(st, dict(  # through games.native: a compiled state keeps these outside __dict__
        _deck=decks, _in_deck=indeck, _discards=disc, _visitor_bottom=vbottom, _visitor_search=[], _character_box=[],
        _hand_open=opened, _market=market, _display=display,
        _visitors=visitors, _visitor_pawn=[int(v.get("pawn", -1)) for v in vis],
        _visitor_romance=[bool(v.get("romance", False)) for v in vis],
        _event=event, _event_modifiers=modify,
        _coins=[int(r.get("coins", 0)) for r in players], _prestige=prestige,
        _allure=[[int(r.get("allure", {}).get(t, 0)) for t in ALLURE_INDEX] for r in players],
        _feature_allure=fallure, _hand=hands, _features=features, _companion=companion, _character=character,
        _dealt_characters=[[c] if c >= 0 else [] for c in character], _chosen_character=list(character),
        _dealt_artisans=[a[:2] for a in arts], _kept_artisans=[a[:2] for a in arts], _revealed=True,
        _artisans=arts,
        _placed=[[bool(a.get("placed", False)) for a in r.get("artisans", [])] for r in players],
        _tilted=[[bool(a.get("tilted", False)) for a in r.get("artisans", [])] for r in players],
        _artisan_locations=[[LOCATION_INDEX[a["location"]] if a.get("location") else -1 for a in r.get("artisans", [])]
               for r in players],
        _used_prestige=[bool(r.get("used_prestige", False)) for r in players],
        _romancing=[bool(r.get("romancing", False)) for r in players],
        _party=party, _character_used=False,
        _round=rnd, _first_player=first, _first_player_round1=(first - (rnd - 1)) % n, _order=order,
        _turn_index=(order.index(cur) + 1) % n if cur in order else 0,
        _final=final, _trigger=[p for p in range(n) if prestige[p] >= SOIREE] if final else [],
        _end_reason=None, _end={},
        _ability_player=-1, _ability_slot=-1, _active_ability=None, _buys=0, _optional=False,
        _pay_feature=-1, _pay_space=-1, _pay_need=(0, 0, 0, 0, 0), _pay_free=0, _pair_allure=-1, _pair_first=-1,
        _swap_new=-1, _prompt=(), _discard_left=0, _after_discard=(), _result=None,
        # The rest of the round: more turns, the Garden Party, End of Round (see _t_start_round).
        _tasks=[("_t_end_round",), ("_t_party",), ("_t_turn",)],
        _waiting=True, _phase=P_PLACE, _cur=cur, _chance=(-1, ()),
    ))
    st.history = []
    st._legal_cache = None
    st._sampled = None
    return st


def game_from_observation(observation: dict[str, Any]) -> Game:
    """The game of an observation (its player count; the solo difficulty when solo)."""
    from games.registry import load_game

    options: dict[str, Any] = {"players": int(observation.get("num_players", 0))}
    if observation.get("difficulty"):
        options["difficulty"] = observation["difficulty"]
    return load_game("lafleur", options)
