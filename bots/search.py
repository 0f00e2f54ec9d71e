"""The search bot: single-observer information-set MCTS from the observation alone.

Method: SO-ISMCTS (Cowling, Powley & Whitehouse 2012, "Information Set Monte
Carlo Tree Search", IEEE TCIAIG 4(2), Algorithm 2). Each iteration draws a
*determinization* — a full state consistent with the seat's observation, from
the game package's ``determinize`` (``games/<game>/determinize.py``) — and
walks one tree whose edges are actions (shared by every determinization),
choosing among the children legal in that determinization by UCB1 with
availability counts; one new node is added, then a uniformly random rollout
plays to the end (chance sampled). Every seat's node stores that seat's mean
reward: ``0.75 * rank value + 0.25 * score margin`` (rank value 1 for first,
0 for last, ties share; margin ``(1 + tanh((score - best rival) / 10)) / 2``).

The answer is the most visited root action. The bot reads only the request's
observation and legal actions (never the referee's state), so it runs over the
wire (``parterre bot run search``) and as ``builtin:search``. Thinking time per
decision: ``think_ms`` (default 300 ms), capped at ``fraction`` (0.5) of the
decision's remaining time minus ``margin_ms`` (50 ms) when the request carries
a clock. Games without a ``determinize`` module are played by the greedy
strategy (logged once per game).
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
import random
import time
from typing import Any

from bots.reference import GreedyBot
from bots.sdk import DecisionRequest, MatchInfo

log = logging.getLogger(__name__)

_TANH_SCALE = 5.0
"""Score difference (points) at which the margin term is ~0.88 of its range."""


EXPLORATION = 0.5
"""UCB1 exploration constant (rewards lie in [0, 1])."""


@functools.cache
def determinizer_for(game: str) -> Any | None:
    """The ``games.<game>.determinize`` module, or None when the game has none."""
    name = f"games.{game}.determinize"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in (name, f"games.{game}"):
            return None
        raise


class _Node:
    __slots__ = ("player", "children", "n", "w", "avail")

    def __init__(self, player: int) -> None:
        self.player = player  # the seat that chose the edge into this node
        self.children: dict[Any, _Node] = {}
        self.n = 0
        self.w = 0.0
        self.avail = 1


def _floriferous_scores(state: Any) -> list[float]:
    from bots.strategies.floriferous import Evaluator

    obs = state.observation(0)  # every seat sees the same thing in Floriferous
    return [Evaluator(obs, s).base for s in range(state.game.num_players)]


EVALUATORS: dict[str, Any] = {"floriferous": _floriferous_scores}
"""Game -> ``state -> per-seat score if the game ended now`` (the greedy strategy's evaluation)."""


def rewards(state: Any) -> list[float]:
    """Per-seat reward in [0, 1] of a terminal state (see the module docstring)."""
    out = state.outcome()
    return reward_of(out.scores, out.ranks)


def evaluated_rewards(state: Any, evaluate: Any) -> list[float]:
    """Per-seat reward of a non-terminal state: the margin term alone, from the evaluation's scores
    (ranks of a game not over are too coarse a signal)."""
    scores = [float(x) for x in evaluate(state)]
    n = len(scores)
    if n == 1:
        return [0.5 + 0.5 * math.tanh(scores[0] / (4 * _TANH_SCALE))]
    return [0.5 + 0.5 * math.tanh((scores[s] - max(scores[o] for o in range(n) if o != s)) / _TANH_SCALE)
            for s in range(n)]


def reward_of(scores: Any, ranks: Any) -> list[float]:
    """``0.5 * rank value + 0.5 * margin`` per seat (see the module docstring)."""
    n = len(scores)
    if n == 1:
        return [0.5 + 0.5 * math.tanh(float(scores[0]) / (4 * _TANH_SCALE))]
    res = []
    for s in range(n):
        rank_value = sum((ranks[s] < ranks[o]) + 0.5 * (ranks[s] == ranks[o]) for o in range(n) if o != s) / (n - 1)
        best = max(float(scores[o]) for o in range(n) if o != s)
        margin = 0.5 + 0.5 * math.tanh((float(scores[s]) - best) / _TANH_SCALE)
        res.append(0.5 * rank_value + 0.5 * margin)
    return res


def ismcts(game: Any, observation: dict[str, Any], determinize: Any, rng: random.Random,
           deadline: float, *, max_iterations: int = 1_000_000, exploration: float = EXPLORATION,
           evaluate: Any = None, horizon: int = 0) -> tuple[int, int]:
    """Run SO-ISMCTS until ``deadline`` (``time.monotonic()``); returns (root action index, iterations).

    The index is into the legal actions of the observed position (every
    determinization has the same ones, in the same order).
    """
    root = _Node(-1)
    first = determinize(game, observation, rng)
    legal = first.legal_actions()
    if len(legal) == 1:
        return 0, 0
    iterations = 0
    while iterations < max_iterations and (iterations == 0 or time.monotonic() < deadline):
        state = first if iterations == 0 else determinize(game, observation, rng)
        iterations += 1
        node = root
        path = [root]
        expanded = False
        depth = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
                continue
            actions = state.legal_actions()
            if expanded:  # rollout (truncated after ``horizon`` decisions when there is an evaluation)
                if evaluate is not None and depth >= horizon:
                    break
                depth += 1
                state.apply_action(actions[rng.randrange(len(actions))])
                continue
            player = state.current_player()
            children = node.children
            untried = [a for a in actions if a not in children]
            if untried:
                action = untried[rng.randrange(len(untried))]
                child = _Node(player)
                children[action] = child
                for a in actions:
                    if a is not action and a in children:
                        children[a].avail += 1
                expanded = True
            else:
                best, pick = -1.0, actions[0]
                for a in actions:
                    c = children[a]
                    c.avail += 1
                    v = c.w / c.n + exploration * math.sqrt(math.log(c.avail) / c.n)
                    if v > best:
                        best, pick = v, a
                action, child = pick, children[pick]
            state.apply_action(action)
            node = child
            path.append(node)
        r = rewards(state) if state.is_terminal() else evaluated_rewards(state, evaluate)
        for nd in path[1:]:
            nd.n += 1
            nd.w += r[nd.player]
    best_index, best_n = 0, -1
    for i, a in enumerate(legal):
        visits = root.children[a].n if a in root.children else -1
        if visits > best_n:
            best_index, best_n = i, visits
    return best_index, iterations


class SearchBot(GreedyBot):
    """SO-ISMCTS over determinizations of the observation (see the module docstring).

    Args:
        seed: seed of the search's ``random.Random``.
        think_ms: thinking time per decision (ms).
        fraction: at most this fraction of the decision's remaining time is used.
        margin_ms: kept back from the remaining time for the answer's trip.
        **kwargs: see :class:`bots.sdk.Bot`.
    """

    name = "search"
    threaded = True

    def __init__(self, seed: int | str | None = None, think_ms: float = 300.0, fraction: float = 0.5,
                 margin_ms: float = 50.0, horizon: int = 0, iterations: int = 0, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.think_ms = float(think_ms)
        self.fraction = float(fraction)
        self.margin_ms = float(margin_ms)
        self.horizon = int(horizon)
        self.iterations = int(iterations)
        self.last_iterations = 0
        self._games: dict[str, Any] = {}

    def _game(self, request: DecisionRequest, module: Any) -> Any:
        """The match's game: from ``MatchStarted``'s game string, else from the observation (direct play)."""
        match = getattr(request, "match", None)
        if match is not None:
            key = match.game_string
            if key not in self._games:
                from games.registry import load_game

                self._games[key] = load_game(key)
            return self._games[key]
        return module.game_from_observation(request.observation)

    def on_match_started(self, match: MatchInfo) -> None:
        """Load the game and its determinizer before the first decision (keeps the first answer quick)."""
        super().on_match_started(match)
        if determinizer_for(match.game) is not None and match.game_string not in self._games:
            from games.registry import load_game

            self._games[match.game_string] = load_game(match.game_string)

    def choose(self, request: DecisionRequest) -> int:
        """The most visited root action after ``think_ms`` of search (greedy for games without a determinizer)."""
        start = getattr(request, "received_at", None) or time.monotonic()
        if request.num_actions <= 1:
            return 0
        module = determinizer_for(request.game)
        if module is None:
            if request.game not in self._games:
                self._games[request.game] = None
                log.info("search: no determinizer for %s, playing greedy", request.game)
            return super().choose(request)
        budget = self.think_ms
        remaining = getattr(request, "remaining_ms", None)
        if callable(remaining) and getattr(request, "deadline_ms", 0) > 0:
            budget = min(budget, self.fraction * remaining() - self.margin_ms)
        game = self._game(request, module)
        index, self.last_iterations = ismcts(game, request.observation, module.determinize, self.rng,
                                             start + max(budget, 1.0) / 1000.0,
                                             evaluate=EVALUATORS.get(request.game) if self.horizon >= 0 else None,
                                             horizon=self.horizon,
                                             max_iterations=self.iterations or 1_000_000)
        if not 0 <= index < request.num_actions:  # cannot happen when determinize is right
            log.warning("search: index %d out of range; playing greedy", index)
            return super().choose(request)
        return index
