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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from games.api import CHANCE, TERMINAL, Action, Game, State
from games.replay import REPLAY_FORMAT

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


LocalStep = tuple[int, Action, int | None]
"""One applied step of :func:`play_local`'s ``record``: the player (``CHANCE`` for chance), the action, and
the decision's time in whole milliseconds as this loop measured it (None for chance)."""


def play_local(game: Game, seats: Sequence[Seat], rng: random.Random,
               record: list[LocalStep] | None = None) -> LocalResult:
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
        record: if given, every applied step is appended to it (:data:`LocalStep`; the faulting
            decision, not applied, is not), from which :func:`local_replay` writes the game's replay.

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
            outcome = state.sample_chance(rng)
            state.apply_action(outcome)
            steps += 1
            if record is not None:
                record.append((CHANCE, outcome, None))
            continue
        legal = state.legal_actions()
        decisions += 1
        began = time.perf_counter()
        choice = seats[player](Decision(name, player, decisions, state, legal))
        if isinstance(choice, int) and 0 <= choice < len(legal):
            state.apply_action(legal[choice])
            steps += 1
            if record is not None:
                record.append((player, legal[choice], round((time.perf_counter() - began) * 1000)))
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


HASH_EVERY = 10
"""A step whose index ends in 9 records the state's hash, as the referee's replays (``referee.replay.wants_hash``)."""


def local_replay(game: Game, seed: str, record: Sequence[LocalStep], result: LocalResult,
                 players: Sequence[dict[str, Any]], *, match_id: int = 0) -> dict[str, Any]:
    """The ``parterre-replay/1`` dict of a game :func:`play_local` played with chance from
    ``random.Random(seed)`` and recorded in ``record`` (docs/architecture.md, "Replay JSON"): rebuilt
    through the engine, so it re-simulates (``games.replay.verify_replay``) and every viewer shows it.

    A game a fault ended stops at the faulting decision: no ``outcome``, the seat's verdict in
    ``verdicts`` and ``fault_reasons``, ``result_ranks`` the fault rule's.

    Args:
        players: per seat ``{"bot_id", "name", "version"}`` as the replay names them.
    """
    state = game.new_initial_state()
    steps: list[dict[str, Any]] = []
    for i, (player, action, ms) in enumerate(record):
        state.apply_action(action)
        step: dict[str, Any] = {"i": i, "player": player, "action": action.to_json(), "label": action.label(),
                                "time_ms": ms, "fallback": False}
        if i % HASH_EVERY == HASH_EVERY - 1:
            step["hash"] = state.state_hash()
        steps.append(step)
    n = game.num_players
    verdicts, reasons = ["normal"] * n, [""] * n
    if result.fault_seat is not None:
        verdicts[result.fault_seat] = result.fault
        reasons[result.fault_seat] = f"decision {result.decisions}: {result.fault}" + \
            (f" ({result.detail})" if result.detail else "")
    replay: dict[str, Any] = {
        "format": REPLAY_FORMAT, "match_id": match_id, "attempt": 1, "game": game.name,
        "game_string": game.game_string(), "rules_revision": game.rules_revision, "seed": seed,
        "seed_commitment": hashlib.sha256(seed.encode()).hexdigest(),
        "players": [{"seat": s, "bot_id": int(p.get("bot_id", 0)), "name": str(p.get("name", "")),
                     "version": str(p.get("version", ""))} for s, p in enumerate(players)],
        "steps": steps, "verdicts": verdicts, "fault_reasons": reasons, "result_ranks": list(result.ranks),
        "final_hash": state.state_hash(), "status": "finished",
        "reason": "game over" if result.fault_seat is None else f"seat {result.fault_seat}: {result.fault}",
    }
    if state.is_terminal():
        replay["outcome"] = state.outcome().to_json()
    return replay
