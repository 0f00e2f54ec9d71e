"""The web site's read paths: per-player-count statistics and a tournament index (web, docs/web.md).

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02

* ``bot_player_stats (game, players, bot_id)``: per bot, per game and per
  player count (seats of the match), the finished matches and their wins,
  draws, losses (as :func:`ladder.elo.seat_outcomes`: a win is a sole first
  place), score sum and last finish time. The leaderboard's player-count
  filter and the bot page read it; aggregating the seats of every finished
  match instead takes about a second at 100,000 matches.

  It is derived data, maintained by the trigger
  ``matches_finished_player_stats``: when a match's status becomes
  ``finished`` (the last write of ``ladder.matches.record_result``, after its
  seats are filled, in the same transaction), one upsert per seat, in bot-id
  order. ``record_result`` already holds the seated bots' rating rows of that
  game (locked in bot-id order) at that point, so two results that share a bot
  are serialised before they reach these rows: no new lock order. The upgrade
  backfills it from the finished matches; :data:`REBUILD` recomputes it (for
  instance after finished matches were deleted or rows were bulk-loaded).
* ``matches_by_tournament (tournament_id, id) INCLUDE (status)``: a
  tournament's matches page by page and its counts by status (index-only).
* ``seats_by_bot`` and ``rating_history_by_bot`` (migration 0001) are
  replaced by the same indexes, same names and keys, carrying the columns the
  bot page reads (``INCLUDE``), so its queries are index-only scans instead
  of one heap page per match (a bot's rows are scattered over the tables).
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

REBUILD = """
DELETE FROM bot_player_stats;
INSERT INTO bot_player_stats (game, players, bot_id, games, wins, draws, losses, score_sum, last_played)
SELECT x.game, x.n, x.bot_id, count(*),
       count(*) FILTER (WHERE x.rank = 1 AND x.firsts = 1),
       count(*) FILTER (WHERE x.rank = 1 AND x.firsts > 1),
       count(*) FILTER (WHERE x.rank IS DISTINCT FROM 1),
       sum(coalesce(x.score, 0)), max(x.finished_at)
FROM (
    SELECT m.game, m.finished_at, s.bot_id, s.rank, s.score,
           count(*) OVER (PARTITION BY s.match_id) AS n,
           count(*) FILTER (WHERE s.rank = 1) OVER (PARTITION BY s.match_id) AS firsts
    FROM matches m JOIN seats s ON s.match_id = m.id
    WHERE m.status = 'finished'
) x
GROUP BY x.game, x.n, x.bot_id;
"""
"""SQL recomputing ``bot_player_stats`` from the seats of finished matches (run in one transaction)."""

UPGRADE = f"""
CREATE TABLE bot_player_stats (
    game        text NOT NULL,
    players     int NOT NULL CHECK (players >= 1),
    bot_id      bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    games       int NOT NULL DEFAULT 0 CHECK (games >= 0),
    wins        int NOT NULL DEFAULT 0,
    draws       int NOT NULL DEFAULT 0,
    losses      int NOT NULL DEFAULT 0,
    score_sum   double precision NOT NULL DEFAULT 0,
    last_played timestamptz,
    PRIMARY KEY (game, players, bot_id)
);
COMMENT ON TABLE bot_player_stats IS
    'derived: finished matches per (game, seat count, bot); maintained by trigger matches_finished_player_stats';
CREATE INDEX bot_player_stats_by_bot ON bot_player_stats (bot_id);

CREATE FUNCTION bot_player_stats_on_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bot_player_stats AS t (game, players, bot_id, games, wins, draws, losses, score_sum, last_played)
    SELECT NEW.game, s.n, s.bot_id, 1,
           (s.rank = 1 AND s.firsts = 1)::int,
           (s.rank = 1 AND s.firsts > 1)::int,
           (s.rank IS DISTINCT FROM 1)::int,
           coalesce(s.score, 0), NEW.finished_at
    FROM (SELECT bot_id, rank, score, count(*) OVER () AS n,
                 count(*) FILTER (WHERE rank = 1) OVER () AS firsts
          FROM seats WHERE match_id = NEW.id) s
    ORDER BY s.bot_id
    ON CONFLICT (game, players, bot_id) DO UPDATE SET
        games = t.games + 1,
        wins = t.wins + EXCLUDED.wins,
        draws = t.draws + EXCLUDED.draws,
        losses = t.losses + EXCLUDED.losses,
        score_sum = t.score_sum + EXCLUDED.score_sum,
        last_played = greatest(t.last_played, EXCLUDED.last_played);
    RETURN NULL;
END
$$;

CREATE TRIGGER matches_finished_player_stats AFTER UPDATE OF status ON matches
    FOR EACH ROW WHEN (NEW.status = 'finished' AND OLD.status IS DISTINCT FROM 'finished')
    EXECUTE FUNCTION bot_player_stats_on_finish();

{REBUILD}

CREATE INDEX matches_by_tournament ON matches (tournament_id, id) INCLUDE (status)
    WHERE tournament_id IS NOT NULL;

DROP INDEX seats_by_bot;
CREATE INDEX seats_by_bot ON seats (bot_id, match_id DESC) INCLUDE (rank, verdict);
DROP INDEX rating_history_by_bot;
CREATE INDEX rating_history_by_bot ON rating_history (bot_id, game, result_seq) INCLUDE (match_id, elo_after);
"""

DOWNGRADE = """
DROP INDEX rating_history_by_bot;
CREATE INDEX rating_history_by_bot ON rating_history (bot_id, game, result_seq);
DROP INDEX seats_by_bot;
CREATE INDEX seats_by_bot ON seats (bot_id, match_id DESC);
DROP INDEX matches_by_tournament;
DROP TRIGGER matches_finished_player_stats ON matches;
DROP FUNCTION bot_player_stats_on_finish();
DROP TABLE bot_player_stats;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
