"""Shared helpers of the web tests and bench (no tests here): real matches played through the engines.

:func:`play_match` plays one planned match through the rules engine the way the
referee does (chance outcomes from ``random.Random(seed)`` via
``State.sample_chance``, a decision per seat from a simple policy, the
decision time measured) and records it with :func:`ladder.matches.record_result`,
so the stored replay is genuine: it re-simulates, hashes included.

:func:`seed_site` fills a migrated database with what the web tests look at:
bots (one named ``<script>alert(1)</script>``), a round-robin tournament in
progress, ladder matches with 2, 3 and 4 players, a solo match, a match with a
timeout verdict, an unfinished match, and a match of the toy game (no board
adapter: the generic panel).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games.api import CHANCE
from games.registry import load_game
from ladder.bots import register_bot, revoke_bot
from ladder.matches import MatchSpec, claim_match, record_result
from ladder.tournaments import create_tournament, plan_match, plan_round_robin
from referee.replay import FORMAT, dumps, seed_commitment, step_json, wants_hash

XSS_NAME = "<script>alert(1)</script>"
"""A bot name a hostile author might choose; every page must show it as text."""
XSS_VERSION = '"><img src=x onerror=alert(2)>'


def choose(state: Any, seat: int, policy: str, rng: random.Random) -> Any:
    """A legal action for ``seat``: ``greedy`` (Floriferous' greedy strategy), ``first`` or ``random``."""
    legal = state.legal_actions()
    if policy == "greedy" and state.game.name == "floriferous":
        from bots.strategies.floriferous import greedy_choice

        return legal[greedy_choice(state.observation(seat), [a.to_json() for a in legal], seat)]
    if policy == "first":
        return legal[0]
    return rng.choice(legal)


def play_replay(
    spec: MatchSpec, names: Sequence[str], policies: Sequence[str], *, timeout_seat: int | None = None
) -> dict[str, Any]:
    """Play a claimed match through its engine and return the referee-shaped result dict.

    Args:
        spec: the claim (game string, seed, seats).
        names: bot name per seat (recorded in the replay's ``players``).
        policies: ``greedy`` / ``random`` / ``first`` per seat.
        timeout_seat: a seat to treat as having timed out at its first
            decision: it is ranked last (docs/architecture.md, "Verdicts") and its moves are played by
            the fallback policy (the first legal action), flagged ``fallback``.

    Returns:
        ``{"status", "seats", "replay_json"}`` for :func:`ladder.matches.record_result`.
    """
    game = load_game(spec.game_string)
    state = game.new_initial_state()
    rng = random.Random(spec.seed)
    choice_rng = random.Random(spec.seed + "-bots")
    n = game.num_players
    used = [0.0] * n
    decisions = [0] * n
    steps = []
    while not state.is_terminal():
        player = state.current_player()
        fallback = False
        time_ms: float | None = None
        if player == CHANCE:
            action = state.sample_chance(rng)
        elif timeout_seat is not None and player == timeout_seat and decisions[player] > 0:
            action, fallback = state.legal_actions()[0], True
        else:
            t0 = time.perf_counter()
            action = choose(state, player, policies[player], choice_rng)
            time_ms = round((time.perf_counter() - t0) * 1000)  # whole ms, as the referee records
            used[player] += time_ms
            decisions[player] += 1
        state.apply_action(action)
        i = len(steps)
        steps.append(
            step_json(i, player, action.to_json(), action.label(), time_ms, fallback,
                      state.state_hash() if wants_hash(i) else None)
        )
    if steps and "hash" not in steps[-1]:
        steps[-1]["hash"] = state.state_hash()
    outcome = state.outcome()
    ranks = list(outcome.ranks)
    verdicts = ["normal"] * n
    if timeout_seat is not None:
        verdicts[timeout_seat] = "timeout"
        others = sorted((s for s in range(n) if s != timeout_seat), key=lambda s: ranks[s])
        ranks = [0] * n
        for r, s in enumerate(others, start=1):
            ranks[s] = r
        ranks[timeout_seat] = n
    replay = {
        "format": FORMAT,
        "match_id": spec.match_id,
        "attempt": spec.attempt,
        "game": game.name,
        "game_string": spec.game_string,
        "seed_commitment": seed_commitment(spec.seed),
        "seed": spec.seed,
        "players": [{"seat": i, "bot_id": b, "name": names[i], "version": "1"}
                    for i, b in enumerate(spec.seat_bot_ids)],
        "time_control": spec.time_control,
        "steps": steps,
        "verdicts": verdicts,
        "outcome": outcome.to_json(),
        "result_ranks": ranks,
        "final_hash": state.state_hash(),
        "started_at": "2025-01-01T00:00:00+00:00",
        "ended_at": "2025-01-01T00:05:00+00:00",
    }
    return {
        "status": "finished",
        "seats": [
            {"seat": s, "bot_id": spec.seat_bot_ids[s], "rank": ranks[s], "score": float(outcome.scores[s]),
             "verdict": verdicts[s], "time_used_ms": int(round(used[s])), "decisions": decisions[s]}
            for s in range(n)
        ],
        "replay_json": dumps(replay),
    }


def play_match(
    pool: Any, match_id: int, names: dict[int, str], policies: dict[int, str], *, timeout_seat: int | None = None
) -> MatchSpec:
    """Claim a planned match, play it through the engine, and record the result."""
    spec = claim_match(pool, match_id, "web-tests")
    assert spec is not None, f"match {match_id} could not be claimed"
    result = play_replay(
        spec, [names[b] for b in spec.seat_bot_ids], [policies.get(b, "random") for b in spec.seat_bot_ids],
        timeout_seat=timeout_seat,
    )
    assert record_result(pool, match_id, spec.attempt, result)
    return spec


@dataclass
class Site:
    """Ids of what :func:`seed_site` created."""

    bots: dict[str, int] = field(default_factory=dict)
    tournament_id: int = 0
    finished: list[int] = field(default_factory=list)
    four_player: int = 0
    solo: int = 0
    timeout_match: int = 0
    unfinished: int = 0
    toy: int = 0
    revoked: int = 0
    database_url: str = ""


_SHARED: dict[str, Site] = {}


def shared_site(admin_url: str, config: Any) -> Site:
    """One seeded database for all the web test modules of a session (seeding takes a few seconds).

    Created on first use and dropped when the session ends (``config.add_cleanup``).
    Tests that write to it (BT rows, an extra match) undo their writes.
    """
    if admin_url not in _SHARED:
        from test_ladder_helpers import module_database

        from ladder import make_pool

        databases = module_database(admin_url)
        url = next(databases)
        config.add_cleanup(lambda: next(databases, None))
        pool = make_pool(url, max_size=4)
        try:
            site = seed_site(pool)
        finally:
            pool.close()
        site.database_url = url
        _SHARED[admin_url] = site
    return _SHARED[admin_url]


def seed_site(pool: Any) -> Site:
    """Fill a migrated, empty database with real matches (about 1 s); see the module docstring."""
    from fixtures.toy_game import register_toy

    register_toy()
    site = Site()
    specs = [
        ("greedy-alpha", "2", "greedy"), ("greedy-beta", "1", "greedy"), ("random-gamma", "1", "random"),
        ("first-delta", "3", "first"), (XSS_NAME, XSS_VERSION, "random"), ("retired-epsilon", "1", "random"),
    ]
    policies: dict[int, str] = {}
    names: dict[int, str] = {}
    for name, version, policy in specs:
        bid, _ = register_bot(pool, name, version=version)
        site.bots[name] = bid
        policies[bid] = policy
        names[bid] = name
    b = site.bots
    core = [b["greedy-alpha"], b["greedy-beta"], b["random-gamma"], b["first-delta"]]
    site.four_player = plan_match(
        pool, game_string="floriferous(players=4)", bot_ids=[b[XSS_NAME], *core[:3]], plan_key="web:4p"
    )
    play_match(pool, site.four_player, names, policies)
    site.timeout_match = plan_match(
        pool, game_string="floriferous(players=2)", bot_ids=[b["random-gamma"], b[XSS_NAME]], plan_key="web:timeout"
    )
    play_match(pool, site.timeout_match, names, policies, timeout_seat=1)
    site.solo = plan_match(pool, game_string="floriferous(players=1)", bot_ids=[b["greedy-alpha"]], plan_key="web:solo")
    play_match(pool, site.solo, names, policies)
    retired = plan_match(
        pool, game_string="floriferous(players=2)", bot_ids=[b["retired-epsilon"], b["greedy-beta"]],
        plan_key="web:retired",
    )
    play_match(pool, retired, names, policies)
    revoke_bot(pool, b["retired-epsilon"])
    site.revoked = b["retired-epsilon"]
    site.toy = plan_match(pool, game_string="toy(players=2)", bot_ids=[b["greedy-alpha"], b["first-delta"]],
                          plan_key="web:toy")
    play_match(pool, site.toy, names, policies)
    # The tournament last: its two unfinished matches come after every other match in plan order,
    # so they hold back no result (ratings are applied in plan order per bot: ladder/rating_order.py).
    site.tournament_id = create_tournament(
        pool, name="Spring <em>Cup</em>", game="floriferous", bot_ids=core, player_counts=(2, 3), rounds=1,
    )
    planned = plan_round_robin(pool, site.tournament_id)
    for mid in planned[:-2]:
        play_match(pool, mid, names, policies)
        site.finished.append(mid)
    site.unfinished = planned[-1]
    claim_match(pool, planned[-2], "web-tests")  # running, never finished
    return site
