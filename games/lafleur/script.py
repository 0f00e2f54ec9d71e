"""Scripted play: reach exact La Fleur positions.

Because chance is explicit (docs/architecture.md, "games: the rules engines"), a test or a tool decides which card
each draw gives, then plays named decisions. Used by the tests of the
rulebook's worked examples (hidden-card resampling is :mod:`games.lafleur.chance`).

Example (a 2-player match where seat 0 is First Player and the round's
Visitors are Camille, André and Louise Marie Madeleine)::

    state = new_match("lafleur(players=2)", first=0,
                      queues={"visitor": ["V19", "V01", "V25"]})
    play(state, "place A01 coin", ...)   # or apply actions directly

Board-editing helpers (:func:`set_allure`, :func:`give`, ...) move cards out
of their decks so the state stays consistent; they are for tests only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from games.api import Action, GameError
from games.lafleur import actions as A
from games.lafleur.cards import ALLURE, DECK_NAMES, DECKS, INDEX
from games.lafleur.chance import DRAW, FIRST
from games.lafleur.game import LaFleurGame
from games.lafleur.state import LaFleurState
from games.registry import load_game

Queues = MutableMapping[str, list[Any]]
"""Deck name (``flower``, ``visitor``, ...) or ``first`` -> card ids (seats) to draw next, in order."""


def card_id(name: str) -> str:
    """The id of the card called ``name`` (an Artisan by its occupation).

    Raises:
        KeyError: no such card.
    """
    for cards in DECKS.values():
        for c in cards:
            if getattr(c, "name", None) == name or getattr(c, "occupation", None) == name:
                return str(c.id)
    raise KeyError(name)


def chance_step(state: LaFleurState, queues: Queues | None = None) -> None:
    """Apply one chance outcome: the next id queued for the deck, else the lowest-index
    card of the deck that no queue reserves (``first``: the queued seat, else seat 0).

    Raises:
        IllegalActionError: a queued card is not in its deck now.
    """
    queues = queues if queues is not None else {}
    d, _ = state._chance
    if d < 0:
        q = queues.get("first")
        state.apply_action(FIRST[q.pop(0) if q else 0])
        return
    q = queues.get(DECK_NAMES[d])
    if q:
        state.apply_action(A.Draw(DECK_NAMES[d], q.pop(0)))
        return
    seq = state._chance_seq()
    state.apply_action(DRAW[d][seq[0]])


def resolve_chance(state: LaFleurState, queues: Queues | None = None) -> None:
    """Apply chance outcomes (:func:`chance_step`) until a decision or the end."""
    while state.is_chance_node():
        chance_step(state, queues)


def new_match(
    game: str | LaFleurGame,
    first: int = 0,
    queues: Queues | None = None,
    characters: Iterable[str] | None = None,
    artisans: Iterable[tuple[str, str]] | None = None,
) -> LaFleurState:
    """A state at the first placement of round 1.

    Args:
        game: game string or game.
        first: the First Player (multiplayer).
        queues: cards to draw, per deck (see :func:`resolve_chance`); setup
            draws come first: per seat 2 Characters, then per seat 3
            Artisans, then 3 Flower cards per player.
        characters: Character kept by each seat (default: the first dealt).
        artisans: Artisan pair kept by each seat (default: the first two dealt).
    """
    g = load_game(game) if isinstance(game, str) else game
    assert isinstance(g, LaFleurGame)
    q: Queues = {k: list(v) for k, v in (queues or {}).items()}
    q.setdefault("first", [first])
    state = g.new_initial_state()
    chars = list(characters) if characters is not None else None
    arts = list(artisans) if artisans is not None else None
    resolve_chance(state, q)
    for seat in range(g.num_players):
        state.apply_action(A.ChooseCharacter(chars[seat]) if chars else state.legal_actions()[0])
        state.apply_action(A.KeepArtisans(tuple(sorted(arts[seat]))) if arts else state.legal_actions()[0])
    resolve_chance(state, q)
    return state


def play(state: LaFleurState, *actions: Action | Mapping[str, Any], queues: Queues | None = None) -> None:
    """Apply decisions (actions or their JSON), resolving chance nodes in between."""
    for a in actions:
        resolve_chance(state, queues)
        state.apply_action(a if isinstance(a, Action) else state.game.action_from_json(dict(a)))
    resolve_chance(state, queues)


def place_everyone_on_coin(state: LaFleurState, queues: Queues | None = None) -> None:
    """Place every remaining Artisan on the Coin location until the Garden Party starts."""
    resolve_chance(state, queues)
    while state._phase == 3:  # P_PLACE
        coin = [a for a in state.legal_actions() if getattr(a, "location", "") == "coin"]
        if not coin:
            raise GameError("no Coin placement available")
        play(state, coin[0], queues=queues)


def advance(state: LaFleurState, until: Any, queues: Queues | None = None, limit: int = 100_000) -> None:
    """Step until ``until(state)`` is true (checked after every step, chance included).

    Chance nodes use :func:`chance_step`; a decision takes the first legal
    action, or a Coin placement when placing. Stops at the end of the game.

    Raises:
        GameError: ``limit`` steps were not enough.
    """
    for _ in range(limit):
        if state.is_terminal() or until(state):
            return
        if state.is_chance_node():
            chance_step(state, queues)
            continue
        legal = state.legal_actions()
        coin = [a for a in legal if getattr(a, "location", "") == "coin"]
        state.apply_action(coin[0] if coin else legal[0])
    raise GameError("advance: limit reached")


# -- board editing (tests) -------------------------------------------------------------------
def _take_out(state: LaFleurState, card: str) -> tuple[int, int]:
    d, x = INDEX[card]
    if x in state._deck[d]:
        state._deck[d].remove(x)
        state._in_deck[d][x] = 0
    return d, x


def set_allure(state: LaFleurState, player: int, allure: Mapping[str, int], on_features: bool = True) -> None:
    """Set a player's Allure tracker (and, by default, the Allure counted on its Garden Features)."""
    values = [int(allure.get(t, 0)) for t in ALLURE]
    state._allure[player] = values
    if on_features:
        state._feature_allure[player] = list(values)
    state._legal_cache = None


def give(state: LaFleurState, player: int, hand: Iterable[str] = (), features: Iterable[str] = ()) -> None:
    """Put Flower cards in a hand and Garden Features in a player's area (taken out of their decks).

    Garden Features added this way do not change the Allure tracker (use :func:`set_allure`).
    """
    for c in hand:
        state._to_hand(player, _take_out(state, c)[1], face_up=False)
    for c in features:
        state._features[player].append(_take_out(state, c)[1])
    state._legal_cache = None


def set_hand(state: LaFleurState, player: int, hand: Iterable[str]) -> None:
    """Replace a player's hand (the old cards go back into the deck)."""
    for x in state._hand[player]:
        state._deck[0].append(x)
        state._in_deck[0][x] = 1
    state._deck[0].sort()
    state._hand[player] = []
    state._hand_open[player] = []
    give(state, player, hand=hand)


def put_visitors(state: LaFleurState, visitors: Iterable[str]) -> None:
    """Replace the face-up Visitors with ``visitors`` (the old ones go back into the deck)."""
    for v in state._visitors:
        state._deck[2].append(v)
        state._in_deck[2][v] = 1
    state._deck[2].sort()
    state._visitors = [_take_out(state, v)[1] for v in visitors]
    state._visitor_pawn = [-1] * len(state._visitors)
    state._visitor_romance = [False] * len(state._visitors)
    state._legal_cache = None


def set_market(state: LaFleurState, cards: Iterable[str]) -> None:
    """Replace the face-up Flower cards (the old ones go back into the deck)."""
    for x in state._market:
        if x >= 0:
            state._deck[0].append(x)
            state._in_deck[0][x] = 1
    state._deck[0].sort()
    new = [_take_out(state, c)[1] for c in cards]
    state._market = new + [-1] * (4 - len(new))
    state._legal_cache = None


def set_display(state: LaFleurState, cards: Iterable[str]) -> None:
    """Replace the face-up Garden Features (the old ones go back into the deck)."""
    for x in state._display:
        if x >= 0:
            state._deck[1].append(x)
            state._in_deck[1][x] = 1
    state._deck[1].sort()
    new = [_take_out(state, c)[1] for c in cards]
    state._display = new + [-1] * (5 - len(new))
    state._legal_cache = None
