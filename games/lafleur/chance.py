"""La Fleur's chance actions, interned, and resampling of hidden cards through them.

Every draw is a chance action (docs/architecture.md, "games: the rules engines"): :data:`DRAW` and :data:`FIRST` hold
one instance per outcome so the state's chance nodes hand out the same objects.
:func:`resample` serves :meth:`games.lafleur.state.LaFleurState.resample_hidden`
(the observation-invariance tests, docs/faults.md F-20): it reads the position through
:class:`games.lafleur.state_protocol.LaFleurStateProtocol` only, so this module
does not import the state (no import cycle).
"""

from __future__ import annotations

import random

from games.api import Action, GameError, State
from games.lafleur import actions as A
from games.lafleur.cards import DECK_NAMES, DECKS, INDEX
from games.lafleur.state_protocol import LaFleurStateProtocol

DRAW: tuple[tuple[A.Draw, ...], ...] = tuple(
    tuple(A.Draw(DECK_NAMES[d], c.id) for c in DECKS[DECK_NAMES[d]]) for d in range(6)
)
"""Interned chance actions, ``DRAW[deck][card_index]``."""
FIRST: tuple[A.FirstPlayer, ...] = tuple(A.FirstPlayer(s) for s in range(4))


def hidden_pools(state: LaFleurStateProtocol, seat: int | None) -> dict[int, list[int]]:
    """Cards whose identity the viewers cannot know, per deck number.

    The viewers are ``seat``, or every seat when ``seat`` is None (then only
    what no observation shows moves: cards in the decks and the box, the
    unused Characters and Artisans once all have chosen, the solo opponent's
    face-down hand). A given ``seat`` also keeps its own unused cards where
    they are (it knows). A card seen face-up by everybody never moves.
    """
    viewers = set(range(state._num_seats)) if seat is None else {seat}
    others = [p for p in range(state._num_players) if p not in viewers]
    flowers = list(state._deck[0])
    for p in others:
        flowers += [x for x in state._hand[p] if x not in state._hand_open[p]]
    chars = list(state._deck[4])
    arts = list(state._deck[3])
    for p in range(state._num_seats):
        if state._revealed:
            unused_c = [c for c in state._dealt_characters[p] if c != state._chosen_character[p]]
            unused_a = [a for a in state._dealt_artisans[p] if a not in state._kept_artisans[p]]
            if p == seat:  # the seat knows where its own unused cards went
                arts = [a for a in arts if a not in unused_a]
            else:  # no observation shows them any more
                chars += unused_c
        elif p not in viewers:
            chars += state._dealt_characters[p]
            arts += state._dealt_artisans[p]
    return {0: sorted(flowers), 4: sorted(chars), 3: sorted(arts)}


def _remap(a: Action, maps: dict[int, dict[int, int]]) -> Action:
    def m(card: str) -> str:
        if not card or card not in INDEX:
            return card
        d, x = INDEX[card]
        y = maps.get(d, {}).get(x)
        return card if y is None else DRAW[d][y].card

    if isinstance(a, A.Draw):
        return A.Draw(a.deck, m(a.card))
    if isinstance(a, A.ChooseCharacter):
        return A.ChooseCharacter(m(a.card))
    if isinstance(a, A.KeepArtisans):
        return A.KeepArtisans(tuple(sorted((m(c) for c in a.cards), key=lambda c: INDEX[c][1])))
    return a


def resample(state: LaFleurStateProtocol, rng: random.Random, seat: int | None = None, tries: int = 10) -> State | None:
    """Implementation of :meth:`LaFleurState.resample_hidden`: permute the cards of
    :func:`hidden_pools` at random, deck by deck, through the whole history, and replay it
    on a new initial state of ``state.game``.

    Returns:
        The replayed twin, or None when none of ``tries`` permutations replays
        (the caller then returns a clone).
    """
    pools = hidden_pools(state, seat)
    history = [a for _, a in state.history]
    for _ in range(tries):
        maps: dict[int, dict[int, int]] = {}
        for d, pool in pools.items():
            shuffled = pool[:]
            rng.shuffle(shuffled)
            maps[d] = dict(zip(pool, shuffled, strict=True))
        twin = state.game.new_initial_state()
        try:
            for a in history:
                twin.apply_action(_remap(a, maps))
        except GameError:
            continue
        return twin
    return None
