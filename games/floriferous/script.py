"""Scripted play: reach exact Floriferous positions by choosing every chance outcome.

Because chance is explicit (docs/architecture.md, "games: the rules engines"), a test or a tool can decide which card
each garden space receives and then play named picks. Used by the tests of the
rulebook's examples; handy for building puzzles for bots.

Example (a 2-player match where Blue, seat 0, starts on row 1)::

    state = new_match("floriferous(players=2)", bounties=("B6", "B5", "B7"), start_seat=0)
    deal_garden(state, {(3, 1): "F06", (3, 2): "F28"}, reserve={"F02"})
    play_round(state, {0: 3, 1: 1})   # seat 0 takes row 3, seat 1 row 1
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from games.api import CHANCE, Action, GameError
from games.floriferous import actions as A
from games.floriferous.cards import CARD_IDS, CARD_INDEX
from games.floriferous.game import FloriferousGame
from games.floriferous.phases import P_CROW_DEAL, P_DEAL, P_TEA
from games.floriferous.state import FloriferousState
from games.registry import load_game


def new_match(
    game: str | FloriferousGame,
    bounties: tuple[str, str, str] = ("B1", "B2", "B3"),
    start_seat: int = 0,
) -> FloriferousState:
    """A state right after the Bounty cards and (multiplayer) the starting player.

    Args:
        game: a game string or a game.
        bounties: the three Bounty cards, in reveal order.
        start_seat: the starting player (ignored in solo).

    Returns:
        A state at the first deal of day 1.
    """
    g = load_game(game) if isinstance(game, str) else game
    assert isinstance(g, FloriferousGame)
    state = g.new_initial_state()
    for b in bounties:
        state.apply_action(A.RevealBounty(b))
    if not g.solo:
        state.apply_action(A.ChooseStartPlayer(start_seat))
    return state


def deal_cell(state: FloriferousState) -> tuple[int, int]:
    """The space the next deal fills, as (rulebook row, 1-based column).

    Raises:
        GameError: the state is not at a deal.
    """
    if state._phase == P_DEAL:
        cell = state._queue[state._deal_index]
    elif state._phase == P_CROW_DEAL:
        cell = state._crow_target
    else:
        raise GameError("not at a deal")
    ri, c = divmod(cell, state._num_columns)
    return state._layout.rows[ri], c + 1


def deal_garden(
    state: FloriferousState,
    grid: Mapping[tuple[int, int], str] | None = None,
    reserve: Collection[str] = (),
) -> None:
    """Deal the whole garden of the current day.

    Args:
        state: a state at the first deal of a day.
        grid: ``{(row, column): card_id}`` for the spaces that matter.
        reserve: card ids never to use as filler (cards the script needs later).
            Other spaces get the lowest-index card of their deck not in
            ``grid`` or ``reserve``.

    Raises:
        IllegalActionError: a card of ``grid`` is not in its deck.
    """
    grid = dict(grid or {})
    keep = {CARD_INDEX[c] for c in reserve} | {CARD_INDEX[c] for c in grid.values()}
    while state._phase == P_DEAL:
        where = deal_cell(state)
        if where in grid:
            card = grid[where]
        else:
            deck = state._desire_deck if where[0] == 5 else state._garden_deck
            card = CARD_IDS[next(x for x in deck if x not in keep)]
        state.apply_action(A.DealCard(card))


def legal_for_row(state: FloriferousState, row: int) -> Action:
    """The current player's move into ``row`` of the next column (take, scatter or move).

    Raises:
        GameError: no such move.
    """
    for a in state.legal_actions():
        if getattr(a, "row", None) == row:
            return a
    raise GameError(f"no move into row {row}: {[a.label() for a in state.legal_actions()]}")


def play_round(state: FloriferousState, picks: Mapping[int, int]) -> None:
    """Play one round: each seat moves into the row ``picks[seat]``, in turn order.

    Stops before the solo tea decision and the crow (call :func:`reveal_crow`).
    """
    for _ in range(len(picks)):
        seat = state.current_player()
        if seat == CHANCE or seat not in picks:
            raise GameError(f"expected a turn of one of {sorted(picks)}, current player is {seat}")
        state.apply_action(legal_for_row(state, picks[seat]))


def reveal_crow(state: FloriferousState, crow: str, card: str | None = None, keep_tea: bool = True) -> None:
    """Solo: keep the Cup of Tea (if asked), reveal ``crow`` and deal ``card`` face-down if it places one."""
    if state._phase == P_TEA and keep_tea:
        state.apply_action(A.KEEP)
    state.apply_action(A.RevealCrow(crow))
    if state._phase == P_CROW_DEAL:
        if card is None:
            deck = state._desire_deck if deal_cell(state)[0] == 5 else state._garden_deck
            card = CARD_IDS[deck[0]]
        state.apply_action(A.DealCard(card))
