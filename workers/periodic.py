"""The periodic tasks ``parterre beat`` sends: the continuous ladder's
round, the leagues' promotions, waiting challenges, tournaments whose entry window closed, competitions (season
rounds, locks, final batches), and hosted versions waiting for validation or their
regression test.

Each is idempotent (a redelivered or doubled tick plans nothing twice): the claims and
unique keys in PostgreSQL decide. Matches they plan run through
:func:`workers.tasks.run_match`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from psycopg_pool import ConnectionPool

from ladder import challenges as ladder_challenges
from ladder import competition_final, competition_season
from ladder import competitions as ladder_competitions
from ladder import entries as ladder_entries
from ladder import leagues as ladder_leagues
from ladder import submissions as ladder_submissions
from ladder import tournaments as ladder_tournaments
from ladder.errors import DatabaseUnavailableError
from workers import directory
from workers.app import app
from workers.hosting import validation as hosted
from workers.hosting.validation import process_version, sandbox_snapshot, token_secret
from workers.settings import WorkerSettings
from workers.tasks import _settings, _worker_name, get_pool, plan_tournament, queue_matches, run_match

log = logging.getLogger(__name__)

def ladder_games(cfg: WorkerSettings) -> list[str]:
    """The ladder's game strings: ``PARTERRE_LADDER_GAMES`` (separated by ``;``; "" = none), else
    every registered game that has a 2-player mode."""
    games = cfg.ladder_games
    if games is None:
        games = ";".join(_two_player_games())
    return [g.strip() for g in games.split(";") if g.strip()]


def _two_player_games() -> list[str]:
    """``<game>(players=2)`` for every registered game that has a 2-player mode."""
    from games.api import GameError
    from games.registry import game_names, load_game

    out = []
    for name in game_names():
        try:
            out.append(load_game(f"{name}(players=2)").game_string())
        except GameError:
            continue
    return out


@app.task(name="parterre.ladder_tick")
def ladder_tick(now: float | None = None, period_s: float | None = None) -> dict[str, int]:
    """Plan one round of the continuous ladder for every ladder game, and queue it.

    The round number is ``floor(now / period)``, so two beats firing in the
    same period plan the same round, and planning a round is idempotent
    (:func:`ladder.tournaments.plan_ladder_round`: one set of matches, FAULTS
    F-12). Online bots are those connected to a live referee (presence in
    Redis); a bot that announced games in its Hello is paired only in those.
    Hosted bots with an active version count as online in the games their
    manifest names (all when it names none): the worker starts them.

    Args:
        now: Unix time (tests); default the current time.
        period_s: the beat's period (sent with each tick); default ``PARTERRE_LADDER_PERIOD_S``.

    Returns:
        ``{game_string: matches queued}``.
    """
    cfg = _settings()
    now = time.time() if now is None else now
    period = float(period_s) if period_s else cfg.ladder_period_s
    round_no = int(now // period)
    referees = directory.read_referees(cfg.redis_url) if cfg.redis_url else []
    pool = get_pool()
    out: dict[str, int] = {}
    from games.registry import load_game

    for game_string in ladder_games(cfg):
        game = load_game(game_string).name
        online = sorted(set(directory.online_bots(referees, game)) | set(_hosted_players(pool, game)))
        ids = ladder_tournaments.plan_ladder_round(
            pool, game_string=game_string, round_no=round_no, bot_ids=online,
            max_pending=cfg.ladder_max_pending, time_control=cfg.ladder_time_control_ms,
        )
        queue_matches(ids)
        out[game_string] = len(ids)
    return out


@app.task(name="parterre.league_tick")
def league_tick(now: float | None = None) -> dict[str, int]:
    """Store the league promotions due at ``now`` (docs/ladder.md "Leagues").

    Sent by ``parterre beat`` with the ladder's round (every ``PARTERRE_LADDER_PERIOD_S``):
    a bot whose rated results against the boss of its next gate prove it stronger is promoted
    (:func:`ladder.leagues.promote`). Idempotent: a doubled or redelivered tick stores each
    promotion once.

    Args:
        now: Unix time (tests); default the current time.

    Returns:
        ``{"promoted": promotions stored by this tick}``.
    """
    now = time.time() if now is None else now
    new = ladder_leagues.promote(get_pool(), now=datetime.fromtimestamp(now, UTC))
    for p in new:
        log.info("league: bot %s promoted to %s in %s (%d games against %s, %.0f %% scored, lower bound %.0f %%)",
                 p.bot_id, p.league, p.game, p.evidence.games, p.boss_name, 100 * p.evidence.score,
                 100 * p.evidence.lower_bound)
    return {"promoted": len(new)}


def _hosted_players(pool: ConnectionPool, game: str) -> list[int]:
    """Bots with an active hosted version in ``game``: paired as if online, since the worker that runs
    their match starts them (docs/hosted.md); none when the workers hold no token secret."""
    if hosted.token_secret() is None:
        return []
    return sorted(ladder_submissions.playing_versions(pool, game=game))


# -- challenges and entry windows -----------------------------------------------------------------


@app.task(name="parterre.challenge_tick")
def challenge_tick() -> dict[str, int]:
    """Start the challenges whose bots are all connected, and expire those out of time.

    Sent by ``parterre beat`` every ``PARTERRE_CHALLENGE_PERIOD_S`` (1 s): the
    web process only writes the challenge (:func:`ladder.challenges.create_challenge`)
    and queues nothing. "Connected" is the referees' presence in Redis, for
    the challenge's game (a bot that announced other games only does not count);
    a hosted bot with a playing version counts as connected in its games (the
    worker that runs the match starts it).

    Returns:
        ``{"started", "expired"}`` counts.
    """
    cfg = _settings()
    referees = directory.read_referees(cfg.redis_url) if cfg.redis_url else []
    pool = get_pool()
    started, expired = ladder_challenges.dispatch_challenges(
        pool, lambda game: set(directory.online_bots(referees, game)) | set(_hosted_players(pool, game))
    )
    for match_id in started:
        run_match.delay(match_id)
    if started or expired:
        log.info("challenges: %d started %s, %d expired %s", len(started), started, len(expired), expired)
    return {"started": len(started), "expired": len(expired)}


@app.task(name="parterre.tournament_tick")
def tournament_tick() -> dict[str, int]:
    """Close the entry windows that are past their deadline; plan and queue those tournaments.

    Sent by ``parterre beat`` every ``PARTERRE_TOURNAMENT_PERIOD_S`` (5 s). A
    tournament with too few entrants is cancelled with the reason stored
    (:func:`ladder.entries.close_entries`). Closing and planning are
    idempotent, so two beats, or a redelivered tick, plan one set of matches.

    Returns:
        ``{"planned", "cancelled", "queued"}`` counts.
    """
    pool = get_pool()
    planned, cancelled = ladder_entries.close_due_entries(pool)
    queued = 0
    for tid in planned:
        try:
            queued += int(plan_tournament(tid))
        except DatabaseUnavailableError:
            raise
        except Exception as exc:  # one bad tournament must not stop the others; retried next tick
            log.warning("tournament %s: cannot plan it after its entry window closed: %s", tid, exc)
    if cancelled:
        log.info("tournaments %s cancelled at the end of their entry window", cancelled)
    return {"planned": len(planned), "cancelled": len(cancelled), "queued": queued}


@app.task(name="parterre.competition_tick")
def competition_tick(now: float | None = None, period_s: float | None = None) -> dict[str, int]:
    """Move every competition along its schedule (docs/competitions.md), and queue what it plans.

    At ``now`` each competition whose final table is not frozen gets, by its status: ``open``,
    one season round (round ``floor(now / period)``, idempotent:
    :func:`ladder.competition_season.plan_season_round`) among its entrants that are online
    (connected to a live referee for its game, or hosted with a playing version); ``locked``,
    the lock of its entrants' versions; ``evaluating``, the start of its final evaluation or,
    once a batch has ended, the next batch or the frozen table
    (:mod:`ladder.competition_final`). A competition that fails is logged and tried again at
    the next tick; the others go on.

    Args:
        now: Unix time (tests); default the current time.
        period_s: the beat's period (sent with each tick); default ``PARTERRE_COMPETITION_PERIOD_S``.

    Returns:
        ``{"season", "locked", "final"}``: matches queued for season rounds, competitions locked,
        matches queued for final batches.
    """
    cfg = _settings()
    now = time.time() if now is None else now
    period = float(period_s) if period_s else cfg.competition_period_s
    when = datetime.fromtimestamp(now, UTC)
    referees = directory.read_referees(cfg.redis_url) if cfg.redis_url else []
    pool = get_pool()
    out = {"season": 0, "locked": 0, "final": 0}
    for c in ladder_competitions.active_competitions(pool):
        try:
            status = c.status(when)
            queued: list[int] = []
            if status == "open":
                online = set(directory.online_bots(referees, c.game)) | set(_hosted_players(pool, c.game))
                queued = competition_season.plan_season_round(pool, c.id, round_no=int(now // period),
                                                              online=online, now=when)
                out["season"] += len(queued)
            elif status == "locked" and c.locked_at is None:
                ladder_competitions.lock_versions(pool, c.id, now=when)
                out["locked"] += 1
            elif status == "evaluating":
                if c.evaluation is None:
                    queued = competition_final.start_evaluation(pool, c.id, now=when)[1]
                else:
                    queued = competition_final.advance_evaluation(pool, c.id, now=when)
                out["final"] += len(queued)
            for match_id in queued:
                run_match.delay(match_id)
        except DatabaseUnavailableError:
            raise
        except Exception as exc:  # one bad competition must not stop the others; tried again next tick
            log.warning("competition %s: tick failed: %s", c.id, exc)
    return out


@app.task(name="parterre.hosted_tick")
def hosted_tick() -> dict[str, Any]:
    """Take one hosted version waiting for validation or its regression test, and decide it.

    Sent by ``parterre beat`` every ``PARTERRE_HOSTED_PERIOD_S`` (10 s); a version is
    claimed with a lease (:func:`ladder.submissions.claim_next`), so beats and workers
    never test one version twice at once.

    Returns:
        ``{"version": id or None, "status": the new status, **sandbox_snapshot()}``; ``status: refused`` (and
        ``reason``), claiming nothing, when this worker cannot hold the sandbox's limits
        (``workers.hosting.validation.sandbox_refusal``). Only versions of the runtimes installed here are
        claimed (``workers.hosting.validation.offered_runtimes``).
    """

    pool = get_pool()
    secret, url = token_secret(), _settings().redis_url
    if secret is not None and url:  # revocations, a flushed Redis and versions made active without a secret heal here
        from workers.directory import _redis_client

        redis = _redis_client(url)
        for missing in ladder_submissions.versions_without_credential(pool):
            ladder_submissions.activate_credential(pool, missing, secret, redis)
        ladder_submissions.sync_credentials(pool, redis)
    refusal = hosted.sandbox_refusal()
    if refusal:  # a worker that cannot hold the limits takes no version: another worker may
        return {"version": None, "status": "refused", "reason": refusal, **sandbox_snapshot()}
    version_id = ladder_submissions.claim_next(pool, _worker_name(), runtimes=hosted.offered_runtimes())
    status = process_version(pool, version_id) if version_id is not None else "idle"
    return {"version": version_id, "status": status, **sandbox_snapshot()}
