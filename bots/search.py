"""The search bot: determinized search from the observation alone.

Default method (``method="pimc"``): paired flat Monte Carlo over the
root, :mod:`bots.pimc` (one determinization and one chance seed per round,
every candidate played to the end by the greedy strategy; docs/search.md).
The rest of this docstring is the older ``method="ismcts"``.

Method: SO-ISMCTS (Cowling, Powley & Whitehouse 2012, "Information Set Monte
Carlo Tree Search", IEEE TCIAIG 4(2), Algorithm 2). Each iteration draws a
*determinization* — a full state consistent with the seat's observation, from
the game package's ``determinize`` (``games/<game>/determinize.py``) — and
walks one tree whose edges are actions (shared by every determinization),
choosing among the children legal in that determinization by UCB1 with
availability counts; one new node is added, then a rollout (chance sampled)
per the game's :data:`ROLLOUTS`: Floriferous stops at once and evaluates the
position (:data:`EVALUATORS`); La Fleur and Flowar play the greedy strategy to
the end. Every seat's node stores that seat's mean reward (:func:`reward_of`,
:func:`evaluated_rewards`). Where the game has a prior (:data:`PRIORS`: La
Fleur, Flowar), the root searches only the greedy strategy's best
``candidates`` actions (:func:`root_candidates`).

The answer is the most visited root action. The bot reads only the request's
observation and legal actions (never the referee's state), so it runs over the
wire (``parterre bot run search``) and as ``builtin:search``. Thinking time per
decision: ``think_ms`` (default :data:`THINK_MS`, 450 ms; docs/search.md "Time"),
capped at ``fraction`` (0.25) of the decision's remaining time minus ``margin_ms`` (50 ms) when the request carries
a clock (at 200 ms per decision: no time beyond one iteration, or the greedy
answer when that iteration cannot finish in time). Games without a ``determinize`` module, and positions its
``supported(observation)`` rejects, are played by the greedy strategy.
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


FRACTION = 0.25
"""Share of a decision's remaining time the search may use (the rest is the safety margin: the bot's
reading and answering threads share one interpreter with the search; 0.5 timed out at 200 ms per
decision on a loaded 2-core machine, docs/search.md)."""

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


class ActionCountMismatch(ValueError):
    """A determinization offers another number of legal actions than the request (a determinizer bug)."""


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


def _lafleur_scores(state: Any) -> list[float]:
    """Prestige if the game ended now (Rulebook: La Fleur, "End-of-Game Scoring": 1 per 8 Coins and per
    3 Flower cards), plus 0.1 per Allure (the tie-break, and what draws Visitors; a weight of ours)."""
    out = []
    for p in state.full_state()["players"][: state.game.num_players]:
        out.append(p["prestige"] + p["coins"] // 8 + len(p["hand"]) // 3 + 0.1 * sum(p["allure"]))
    return out


def _flowar_scores(state: Any) -> list[float]:
    """Final MP if the game ended now (Rulebook: Flowar, "End of the Game": MP, +3 without Torches, the
    Torch table, -3 per unpaid Loan), plus the Coins at this round's exchange rate (a weight of ours)."""
    from games.flowar.cards import exchange_rate
    from games.flowar.scoring import breakdown

    f = state.full_state()
    rate = exchange_rate(max(1, min(4, int(f["round"]))))
    return [breakdown(f["mp"][s], f["torches"][s], f["loans"][s], f["coins"][s], 0, 0, 0).total
            + f["coins"][s] / rate for s in range(state.game.num_players)]


EVALUATORS: dict[str, Any] = {"floriferous": _floriferous_scores, "lafleur": _lafleur_scores,
                              "flowar": _flowar_scores}
"""Game -> ``state -> per-seat score if the game ended now`` (Floriferous: the greedy strategy's evaluation)."""


ROLLOUTS: dict[str, tuple[int, str]] = {
    "floriferous": (0, "random"),
    "lafleur": (-1, "greedy"),
    "flowar": (-1, "greedy"),
}
"""Game -> default (``horizon``, ``rollout``): decisions before the evaluation (-1: play to the end) and the
rollout policy (``random`` or ``greedy``); chosen by the measurements in ``docs/search.md``."""


@functools.cache
def greedy_policy(game: str) -> Any:
    """``state -> action``: the game's greedy strategy, played from the mover's own observation."""
    from bots.reference import strategy_for

    strategy = strategy_for("greedy", game)
    if strategy is None:
        raise ValueError(f"no greedy strategy for {game}")

    def policy(state: Any) -> Any:
        seat = state.current_player()
        legal = state.legal_actions()
        i = strategy(state.observation(seat), [a.to_json() for a in legal], seat)
        return legal[i if isinstance(i, int) and 0 <= i < len(legal) else 0]

    return policy


def _lafleur_prior(observation: dict[str, Any], legal: list[dict[str, Any]], seat: int) -> list[float]:
    from bots.strategies.lafleur import Evaluator

    ev = Evaluator(observation, seat)
    return [ev.value(a) for a in legal]


def _flowar_prior(observation: dict[str, Any], legal: list[dict[str, Any]], seat: int) -> list[float]:
    from bots.strategies.flowar import Evaluator

    ev = Evaluator(observation, seat)
    return [ev.menu_value(a) for a in legal]


PRIORS: dict[str, Any] = {"lafleur": _lafleur_prior, "flowar": _flowar_prior}
"""Game -> ``(observation, legal action dicts, seat) -> value per action``: the greedy strategy's own
valuation at the positions the determinizer rebuilds (La Fleur: placing an Artisan; Flowar: the turn menu)."""

ROOT_CANDIDATES = 4
PIMC_CANDIDATES = 6
"""Root actions the paired flat search compares (greedy's choice first, then by the prior; 0: all)."""

THINK_MS = 450.0
"""Default thinking time per decision (ms): the demo's clock share (``FRACTION`` × 2000 − 50 ms); at 300 ms
the search did not clear greedy at the demo's size (docs/search.md, "Time")."""

PIMC_DEFAULTS: dict[str, tuple[int, int]] = {"lafleur": (0, 2)}
"""Game -> (candidates, halving) of the paired flat search where they differ from (:data:`PIMC_CANDIDATES`, 0):
La Fleur compares all its 5-12 ``place`` actions with sequential halving (docs/search.md, measured)."""
"""Root actions searched when the game has a prior: the greedy choice and the next best by the prior."""


def root_candidates(game: str, observation: dict[str, Any], legal: list[dict[str, Any]], seat: int,
                    greedy_index: int, k: int = ROOT_CANDIDATES) -> list[int] | None:
    """Indexes of the root actions to search, greedy's choice first, then by the prior (None: all, no prior).

    With a few dozen iterations a decision of 20-40 actions cannot even try each
    once; searching the strategy's best few keeps the budget on plausible moves
    (progressive-widening style pruning, Chaslot et al. 2008).
    """
    prior = PRIORS.get(game)
    if prior is None or k <= 0:
        return None
    values = prior(observation, legal, seat)
    order = sorted(range(len(legal)), key=lambda i: (-values[i], i))
    out = [greedy_index] + [i for i in order if i != greedy_index]
    return out[:k]


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
           evaluate: Any = None, horizon: int = 0, num_actions: int | None = None,
           policy: Any = None, candidates: list[int] | None = None) -> tuple[int, int]:
    """Run SO-ISMCTS until ``deadline`` (``time.monotonic()``); returns (root action index, iterations).

    The index is into the legal actions of the observed position (every
    determinization has the same ones, in the same order). The clock is read
    before every iteration; one iteration is one tree walk plus a rollout
    truncated after ``horizon`` decisions when the game has an evaluation.
    Rollout decisions are uniformly random, or ``policy(state) -> action``.
    ``candidates`` (indexes into the legal actions, best first) restricts the
    root to those actions, tried in that order; ties in visits go to the
    earlier one. A ``policy`` playout still running at the deadline is
    dropped (from the first iteration on when there are candidates: the
    answer is then ``candidates[0]`` with 0 iterations).

    Raises:
        ActionCountMismatch: ``num_actions`` is given and the determinization
            has another number of legal actions.
    """
    root = _Node(-1)
    first = determinize(game, observation, rng)
    legal = first.legal_actions()
    if num_actions is not None and len(legal) != num_actions:
        raise ActionCountMismatch(f"determinization has {len(legal)} legal actions, the request {num_actions}")
    if len(legal) == 1:
        return 0, 0
    allowed = None if candidates is None else [legal[i] for i in candidates]
    iterations = 0
    while iterations < max_iterations and (iterations == 0 or time.monotonic() < deadline):
        state = first if iterations == 0 else determinize(game, observation, rng)
        iterations += 1
        node = root
        path = [root]
        expanded = False
        late = False
        depth = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(state.sample_chance(rng))
                continue
            actions = state.legal_actions()
            if expanded:  # rollout (truncated after ``horizon`` decisions when there is an evaluation)
                if evaluate is not None and 0 <= horizon <= depth:
                    break
                if policy is not None and (iterations > 1 or allowed is not None) and time.monotonic() >= deadline:
                    late = True  # a greedy playout past the deadline: dropped, the answer goes now
                    break
                depth += 1
                state.apply_action(actions[rng.randrange(len(actions))] if policy is None else policy(state))
                continue
            player = state.current_player()
            children = node.children
            if node is root and allowed is not None:
                actions = allowed
            untried = [a for a in actions if a not in children]
            if untried:
                action = untried[0] if node is root and allowed is not None else untried[rng.randrange(len(untried))]
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
        if late:  # dropped; with none completed, the first candidate (the greedy choice) is the answer
            iterations -= 1
            if iterations == 0 and candidates is not None:
                return candidates[0], 0
            break
        r = rewards(state) if state.is_terminal() else evaluated_rewards(state, evaluate)
        for nd in path[1:]:
            nd.n += 1
            nd.w += r[nd.player]
    best_index, best_n = 0, -1
    for i in candidates if candidates is not None else range(len(legal)):
        a = legal[i]
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
        horizon: rollout decisions before the evaluation (-1: play to the end); None: the game's
            default in :data:`ROLLOUTS`.
        iterations: a fixed iteration count (0: as many as the time allows); the deadline still stops it.
        rollout: ``"random"`` or ``"greedy"`` rollout decisions; None: the game's default.
        candidates: root actions searched (ISMCTS: where the game has a prior, :data:`PRIORS`); 0: all;
            None: the method's and game's default (:data:`ROOT_CANDIDATES`, :data:`PIMC_CANDIDATES`,
            :data:`PIMC_DEFAULTS`).
        method: ``"pimc"`` (paired flat Monte Carlo, :mod:`bots.pimc`, the default) or ``"ismcts"``.
        margin_weight: reward per point of score margin (``"pimc"``); None: :data:`bots.pimc.MARGIN_WEIGHT`.
        halving: sequential halving's first phase in rounds (``"pimc"``; 0: off); None: the game's default.
        **kwargs: see :class:`bots.sdk.Bot`.

    Raises:
        ValueError: an unknown ``rollout`` or ``method``.
    """

    name = "search"
    threaded = True

    def __init__(self, seed: int | str | None = None, think_ms: float = THINK_MS, fraction: float = FRACTION,
                 margin_ms: float = 50.0, horizon: int | None = None, iterations: int = 0,
                 rollout: str | None = None, candidates: int | None = None, method: str = "pimc",
                 margin_weight: float | None = None, halving: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.think_ms = float(think_ms)
        self.fraction = float(fraction)
        self.margin_ms = float(margin_ms)
        self.horizon = None if horizon is None else int(horizon)
        if rollout not in (None, "random", "greedy"):
            raise ValueError(f"rollout must be 'random' or 'greedy', not {rollout!r}")
        self.rollout = rollout
        if method not in ("pimc", "ismcts"):
            raise ValueError(f"method must be 'pimc' or 'ismcts', not {method!r}")
        self.method = method
        self.candidates = None if candidates is None else int(candidates)
        self.margin_weight = None if margin_weight is None else float(margin_weight)
        self.halving = None if halving is None else int(halving)
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
        supported = getattr(module, "supported", None)
        if supported is not None and not supported(request.observation):
            return super().choose(request)  # a position the determinizer does not rebuild (its docstring)
        game = self._game(request, module)
        if self.method == "pimc":
            return self._pimc(request, module, game, start + max(budget, 1.0) / 1000.0)
        candidates = None
        k = ROOT_CANDIDATES if self.candidates is None else self.candidates
        if k and request.game in PRIORS:
            greedy = super().choose(request)
            candidates = root_candidates(request.game, request.observation, request.legal_actions, request.seat,
                                         greedy, k)
        default_horizon, default_rollout = ROLLOUTS.get(request.game, (0, "random"))
        horizon = default_horizon if self.horizon is None else self.horizon
        rollout = self.rollout or default_rollout
        try:
            index, self.last_iterations = ismcts(
                game, request.observation, module.determinize, self.rng, start + max(budget, 1.0) / 1000.0,
                evaluate=EVALUATORS.get(request.game) if horizon >= 0 else None, horizon=horizon,
                max_iterations=self.iterations or 1_000_000, num_actions=request.num_actions,
                policy=greedy_policy(request.game) if rollout == "greedy" else None, candidates=candidates)
        except (module.DeterminizeError, ActionCountMismatch) as exc:  # cannot happen when determinize is right
            log.warning("search: %s; playing greedy", exc)
            return super().choose(request)
        return index

    def _pimc(self, request: DecisionRequest, module: Any, game: Any, deadline: float) -> int:
        """Paired flat Monte Carlo over greedy's choice and the prior's next best (:mod:`bots.pimc`)."""
        from bots.pimc import MARGIN_WEIGHT, pimc

        greedy = super().choose(request)
        order = list(range(request.num_actions))
        prior = PRIORS.get(request.game)
        if prior is not None:
            values = prior(request.observation, request.legal_actions, request.seat)
            order.sort(key=lambda i: (-values[i], i))
        candidates = [greedy] + [i for i in order if i != greedy]
        k, halving = PIMC_DEFAULTS.get(request.game, (PIMC_CANDIDATES, 0))
        k = k if self.candidates is None else self.candidates
        halving = halving if self.halving is None else self.halving
        if k > 0:
            candidates = candidates[:k]
        weight = MARGIN_WEIGHT if self.margin_weight is None else self.margin_weight
        try:
            index, self.last_iterations, _ = pimc(
                game, request.observation, module.determinize, self.rng, deadline, request.seat,
                greedy_policy(request.game), candidates, max_playouts=self.iterations or 1_000_000,
                num_actions=request.num_actions, margin_weight=weight, halving=halving)
        except (module.DeterminizeError, ValueError) as exc:  # cannot happen when determinize is right
            log.warning("search: %s; playing greedy", exc)
            self.last_iterations = 0
            return greedy
        return index
