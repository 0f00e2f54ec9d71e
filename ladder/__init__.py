"""Parterre's ladder: PostgreSQL schema and migrations, Elo maths, result recording, the read model.

The only package with database code (docs/architecture.md "Packages and arrows"). It may import ``games``
and ``proto``, never ``referee``, ``workers`` or ``parterre``.

Public API (all functions take an open ``psycopg_pool.ConnectionPool`` unless noted):

Connections and schema (:mod:`ladder.db`)
    ``make_pool(url, *, min_size=1, max_size=10, timeout_s=10.0) -> ConnectionPool``
    ``migrate(url, revision="head") -> str | None``  (alembic, advisory-locked, idempotent)
    ``current_revision(url) -> str | None``; ``head_revision() -> str``
    ``alembic_config(url=None)``, ``sqlalchemy_url(url)``, ``redact_url(url)``
    ``connection(pool)`` (context manager), ``run_transaction(pool, fn, *, retries=5)``, ``is_unavailable(exc)``

Elo, pure maths (:mod:`ladder.elo`)
    ``expected(ra, rb) -> float``  (logistic: 1 / (1 + 10 ** ((rb - ra) / 400)))
    ``pairwise_deltas(ratings, ranks, k=32.0) -> list[float]``  (K / (N - 1) per pair)
    ``seat_outcomes(ranks) -> list[str]``; ``INITIAL_RATING``, ``DEFAULT_K``

Bots and tokens (:mod:`ladder.bots`)
    ``register_bot(pool, name, *, version="1", owner=None, redis=None, key=TOKENS_KEY) -> (bot_id, token)``
    ``revoke_bot(pool, bot_id_or_name, *, redis=None, key=TOKENS_KEY) -> Bot``
    ``publish_tokens(pool, redis_client, key=TOKENS_KEY) -> int``
    ``issue_token(pool, bot_id_or_name, *, redis=None, key=TOKENS_KEY) -> str``  (rotation)
    ``find_bot(pool, name_or_id) -> Bot | None``; ``list_bots(pool, *, include_revoked=False)``
    ``token_hash(token) -> str``

Tournaments (:mod:`ladder.tournaments`, :mod:`ladder.entries`, :mod:`ladder.tournament_tables`)
    ``create_tournament(pool, *, name, game, game_options=None, format="round_robin",
    player_counts=(2,), rounds=1, time_control=None, bot_ids=(), candidate_bot_id=None,
    entry_deadline=None, organiser_id=None, autostart=False) -> int``
    ``plan_tournament(pool, tournament_id) -> list[int]``  (any format, idempotent, docs/faults.md F-12);
    ``plan_round_robin``, ``plan_gauntlet``, ``plan_duplicate`` (one format each)
    ``enter_tournament(pool, tournament_id, bot_id) -> None``; ``close_due_entries(pool)``
    ``plan_match(pool, *, game_string, bot_ids, plan_key, time_control=None,
    tournament_id=None, seed=None) -> int``  (one match, idempotent on plan_key)
    ``tournament_status(pool, tournament_id) -> dict``; ``TimeControl``

Competitions (:mod:`ladder.competitions`, :mod:`ladder.competition_season`, :mod:`ladder.competition_final`;
docs/competitions.md; every call takes ``now``)
    ``create_competition(pool, *, organiser_id, name, game, deadline_at, now, ...) -> Competition``;
    ``get_competition``, ``list_competitions``, ``entrants``; ``enter_competition(pool, competition_id, bot_id, *,
    account_id, now) -> Entrant``; ``lock_versions``; ``disqualify``, ``extend_deadline``, ``rerun``, ``events``;
    ``match_versions(pool, match_id, bot_ids)``; ``plan_season_round``, ``season_table``;
    ``start_evaluation``, ``advance_evaluation``, ``evaluation``, ``final_table``

Challenges (:mod:`ladder.challenges`)
    ``create_challenge(pool, *, game_string, bot_ids, rated, time_control=None,
    challenger_id=None, expires_after_s=300.0) -> int`` (the match id)
    ``challenge_status(pool, match_id) -> ChallengeInfo``; ``list_challenges(pool, *,
    challenger_id=None, bot_id=None, limit=50, before=None, asked_of=None, pending=False)``;
    ``dispatch_challenges(pool, online)``; owners' answers (:mod:`ladder.challenge_answers`):
    ``answer_challenge(pool, match_id, account_id, *, accept, now=None) -> str``

Running matches, for workers (:mod:`ladder.matches`)
    ``claim_match(pool, match_id, worker, lease_s=600.0, *, max_attempts=None) -> MatchSpec | None``
    ``extend_lease(pool, match_id, attempt, lease_s=600.0) -> bool``
    ``record_result(pool, match_id, attempt, result, *, k=32.0) -> bool``
    ``record_failed_attempt(pool, match_id, attempt, status, error, max_attempts) -> str``
    ``requeue_expired(pool, *, max_attempts=None) -> dict[int, str]``  (the reaper)
    ``requeue_worker(pool, worker, *, max_attempts=None) -> dict[int, str]``

Reading (:mod:`ladder.read`, shared by the web site and the CLI; its own docstring lists every page)
    ``leaderboard(pool, game, *, limit=None, include_revoked=False) -> list[LeaderboardEntry]``
    ``recent_matches(pool, game=None, limit=20, *, status=None, tournament_id=None,
    bot_id=None) -> list[MatchListItem]``
    ``export_replay(pool, match_id) -> dict``; ``replay_json(pool, match_id) -> str | None``
    ``tournament_standings(pool, tournament_id) -> list[StandingEntry]``

Leagues (:mod:`ladder.leagues`; docs/ladder.md "Leagues")
    ``promote(pool, *, now, games=None) -> list[Promotion]`` (idempotent; ``parterre.league_tick``);
    ``bot_leagues(conn, bot_id, games)``, ``leagues_by_bot(conn, game, bot_ids)``, ``next_bosses``;
    ``wilson_lower_bound(score, games)``; ``LEAGUES``, ``BOSSES``, ``MIN_GAMES``

Rebuilding ratings (:mod:`ladder.ratings`)
    ``rebuild_ratings(pool, game=None, *, k=32.0) -> dict``

Fair play (:mod:`ladder.fair_play`; docs/participants.md "Fair play")
    seats of one account are never rated against each other (checked where Elo is applied);
    ``MAX_RATED_PER_ACCOUNT_PAIR`` rated challenges per pair of accounts a day; ``MAX_RATED_GAP``

Errors (:mod:`ladder.errors`): ``LadderError`` and ``DatabaseUnavailableError``,
``BotExistsError``, ``InvalidBotNameError``, ``BotNotFoundError``, ``BotRevokedError``,
``TournamentError``, ``TournamentClosedError``, ``TournamentNotFoundError``,
``MatchNotFoundError``, ``ResultError``, ``ChallengeError``, ``CompetitionError``,
``CompetitionClosedError``, ``CompetitionLimitError``, ``CompetitionNotFoundError``,
``CompetitionPermissionError``. Errors of the rules engines
(``games.api.UnknownGameError``, ``games.api.InvalidOptionError``) pass through unchanged.
"""

from __future__ import annotations

from ladder.bots import (
    Bot,
    find_bot,
    issue_token,
    list_bots,
    publish_tokens,
    register_bot,
    revoke_bot,
    token_hash,
)
from ladder.challenges import ChallengeInfo, challenge_status, create_challenge, list_challenges
from ladder.db import (
    alembic_config,
    connection,
    current_revision,
    head_revision,
    make_pool,
    migrate,
    redact_url,
    run_transaction,
    sqlalchemy_url,
)
from ladder.elo import DEFAULT_K, INITIAL_RATING, expected, pairwise_deltas, seat_outcomes
from ladder.entries import enter_tournament
from ladder.errors import (
    BotExistsError,
    BotNotFoundError,
    BotRevokedError,
    ChallengeError,
    DatabaseUnavailableError,
    InvalidBotNameError,
    LadderError,
    MatchNotFoundError,
    ResultError,
    TournamentClosedError,
    TournamentError,
    TournamentNotFoundError,
)
from ladder.matches import (
    MatchSpec,
    claim_match,
    extend_lease,
    record_failed_attempt,
    record_result,
    requeue_expired,
    requeue_worker,
)
from ladder.ratings import rebuild_ratings
from ladder.read import (
    LeaderboardEntry,
    MatchListItem,
    SeatResult,
    StandingEntry,
    export_replay,
    leaderboard,
    recent_matches,
    replay_json,
    tournament_standings,
)
from ladder.tournaments import (
    TimeControl,
    create_tournament,
    plan_match,
    plan_round_robin,
    plan_tournament,
    tournament_status,
)

__all__ = [
    "DEFAULT_K",
    "INITIAL_RATING",
    "Bot",
    "BotExistsError",
    "BotNotFoundError",
    "BotRevokedError",
    "ChallengeError",
    "ChallengeInfo",
    "DatabaseUnavailableError",
    "InvalidBotNameError",
    "LadderError",
    "LeaderboardEntry",
    "MatchNotFoundError",
    "MatchSpec",
    "MatchListItem",
    "ResultError",
    "SeatResult",
    "StandingEntry",
    "TimeControl",
    "TournamentClosedError",
    "TournamentError",
    "TournamentNotFoundError",
    "alembic_config",
    "claim_match",
    "challenge_status",
    "connection",
    "create_challenge",
    "create_tournament",
    "current_revision",
    "expected",
    "export_replay",
    "extend_lease",
    "enter_tournament",
    "find_bot",
    "head_revision",
    "issue_token",
    "leaderboard",
    "list_challenges",
    "list_bots",
    "make_pool",
    "migrate",
    "pairwise_deltas",
    "plan_match",
    "plan_round_robin",
    "plan_tournament",
    "publish_tokens",
    "rebuild_ratings",
    "recent_matches",
    "record_failed_attempt",
    "record_result",
    "redact_url",
    "register_bot",
    "replay_json",
    "requeue_expired",
    "requeue_worker",
    "revoke_bot",
    "run_transaction",
    "seat_outcomes",
    "sqlalchemy_url",
    "token_hash",
    "tournament_standings",
    "tournament_status",
]
