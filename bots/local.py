"""Playing bots in this process, without the wire: the one local match loop, the request a bot reads,
and the deal seeds.

:func:`play_local` is the only loop that plays a match outside the referee. ``parterre regress``'s
``direct`` backend (``parterre/regress/direct.py``), the hosted bots' head-to-head validation and
regression games of stdio bots (``workers/hosting/head_to_head.py``) and the engines' bench
(``bench/bench_games.py``) all call it, so they agree on the deal (chance from one
``random.Random``), the seat order, what each seat is shown and how a fault ends the game.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from games.api import CHANCE, TERMINAL, Action, Game, State

FAULT_VERDICTS = ("timeout", "illegal_action", "crash", "resigned")
"""The verdicts a seat of :func:`play_local` may return instead of an action index (docs/bots.md,
"The clock and the verdicts"); an index out of range is an ``illegal_action``."""


def deal_seed(run_seed: str, index: int) -> str:
    """The seed of deal ``index`` of a run: sha256 hex of ``"{run_seed}:{index}"`` (64 hex characters;
    docs/regression.md, "Duplicate deals")."""
    return hashlib.sha256(f"{run_seed}:{index}".encode()).hexdigest()


class LocalRequest:
    """What ``Bot.choose`` reads from a decision request (``bots.sdk``), built without the wire.

    Attributes:
        game: the game's registry name. seat: the deciding seat.
        observation: the seat's observation dict. legal_actions: the legal actions' JSON dicts.
        match_id: always 0 (no match was planned).
    """

    __slots__ = ("game", "seat", "observation", "legal_actions", "match_id")

    def __init__(self, game: str, seat: int, observation: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        self.game, self.seat, self.observation, self.legal_actions = game, seat, observation, legal
        self.match_id = 0

    @property
    def num_actions(self) -> int:
        """How many legal actions there are (valid answers are ``0..num_actions - 1``)."""
        return len(self.legal_actions)


class Decision:
    """One decision :func:`play_local` asks a seat for.

    Nothing is encoded until a seat asks for it (a random playout needs no observation).

    Attributes:
        game: the game's registry name. seat: the deciding seat.
        seq: the decision's number in the match (1 for the first decision of any seat).
        state: the live state (read it; never apply to it). legal: its legal actions, in the engine's order.
    """

    __slots__ = ("game", "seat", "seq", "state", "legal")

    def __init__(self, game: str, seat: int, seq: int, state: State, legal: list[Action]) -> None:
        self.game, self.seat, self.seq, self.state, self.legal = game, seat, seq, state, legal

    def observation(self) -> dict[str, Any]:
        """The deciding seat's observation (``State.observation(seat)``), what the referee sends it."""
        return self.state.observation(self.seat)

    def request(self) -> LocalRequest:
        """The request a ``bots.sdk`` bot's ``choose`` reads: the observation and the legal actions' JSON."""
        return LocalRequest(self.game, self.seat, self.observation(), [a.to_json() for a in self.legal])


Seat = Callable[[Decision], "int | str"]
"""A seat of :func:`play_local`: given the decision, the index of its action in ``Decision.legal``, or
one of :data:`FAULT_VERDICTS`."""


@dataclass(frozen=True, slots=True)
class LocalResult:
    """How a game of :func:`play_local` ended.

    Attributes:
        ranks: per seat, 1 = first (the rules' own outcome, or the fault rule of :func:`play_local`).
        fault_seat: the seat that faulted, or None. fault: its verdict (:data:`FAULT_VERDICTS`), else ``""``.
        detail: what the faulting seat answered when it was an index out of range, else ``""``.
        steps: actions applied, chance outcomes included. decisions: decisions the seats made.
    """

    ranks: tuple[int, ...]
    fault_seat: int | None
    fault: str
    detail: str
    steps: int
    decisions: int


def play_local(game: Game, seats: Sequence[Seat], rng: random.Random) -> LocalResult:
    """Play one game of ``game`` with ``seats[i]`` deciding for seat ``i``, as the referee drives it.

    Chance outcomes are drawn with ``state.sample_chance(rng)`` (the referee draws them from
    ``random.Random(seed)`` with the match seed: pass that to play the deal a referee would deal); each
    seat in turn gets a :class:`Decision` with the legal actions in the engine's order. There is no
    clock here: a seat that keeps time (``workers.hosting.head_to_head``'s stdio children) answers ``timeout``
    itself.

    A seat that answers a verdict of :data:`FAULT_VERDICTS`, or an index outside ``0..len(legal) - 1``
    (``illegal_action``), ends the game: it is ranked last and every other seat first. In a game of
    two this is the referee's rule ("a faulting bot simply loses", docs/architecture.md "Verdicts");
    the referee would instead play a faulted seat's remaining decisions in a game of three or four.

    Args:
        game: the game (``games.registry.load_game``), at its rules revision.
        seats: one seat callable per player (``game.num_players`` of them).
        rng: chance's random source (consumed).

    Returns:
        The ranks, the fault if any, and the counts of steps and decisions.

    Raises:
        ValueError: not one seat per player.
    """
    players = game.num_players
    if len(seats) != players:
        raise ValueError(f"{game.game_string()} seats {players} players, {len(seats)} seats given")
    state = game.new_initial_state()
    name = game.name
    steps = decisions = 0
    while True:
        player = state.current_player()
        if player == TERMINAL:
            return LocalResult(tuple(state.outcome().ranks), None, "", "", steps, decisions)
        if player == CHANCE:
            state.apply_action(state.sample_chance(rng))
            steps += 1
            continue
        legal = state.legal_actions()
        decisions += 1
        choice = seats[player](Decision(name, player, decisions, state, legal))
        if isinstance(choice, int) and 0 <= choice < len(legal):
            state.apply_action(legal[choice])
            steps += 1
        else:
            if isinstance(choice, str):
                fault, detail = (choice if choice in FAULT_VERDICTS else "illegal_action"), ""
            else:
                fault, detail = "illegal_action", f"chose {choice!r}, not in 0..{len(legal) - 1}"
            ranks = [1] * players
            ranks[player] = players
            return LocalResult(tuple(ranks), player, fault, detail, steps, decisions)


def sdk_seat(bot: Any) -> Seat:
    """The seat of a ``bots.sdk`` bot (any object with ``choose(request) -> int``): it is given
    :meth:`Decision.request`."""
    return lambda decision: bot.choose(decision.request())
