"""The ladder at ten million matches: the matchmaking's look-ups and the bot page's head-to-head (docs/benchmarks.md).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-08

What ``bench/bench_ten_million.py`` found slow at 10^6 and 10^7 matches with 10^4 bots, and what fixes it:

* ``matches_plan_key_without_tournament`` (the unique key of plan keys without a tournament,
  migration 0001) is made again with the ``text_pattern_ops`` operator class: the same key (its
  equality is byte equality, as before), and now also a range scan for ``starts_with(plan_key, ...)``,
  which the default collation (``C.UTF-8``, not ``C``) could not serve. The continuous ladder asks
  twice per game and round whether the round's matches exist
  (``ladder.ladder_rounds.plan_ladder_round``): a scan of every match without it (0.4 s at 10^6).
* ``matches_free_by_created`` (``matches (game, created_at)``, matches without a tournament or
  competition): the rated matches between two accounts in the last 24 hours
  (``ladder.fair_play.ladder_pair_counts``, once per game and round) start from that day's matches
  instead of every seat of every online bot's account (0.35 s at 10^6, growing with the history).
* ``bots_revoked`` (the revoked bots' ids): a leaderboard's size and a bot's rank count the ratings
  of a game, less the revoked bots' (``ladder.read.leaderboards``, ``ladder.read.bots``), instead of
  joining each of 10^4 ratings with its bot (8 ms against 2 ms for a rank at 10^4 bots).
* ``bot_head_to_head (bot_id, game, opponent_id)``: each bot's finished matches against each
  opponent, with its wins, draws and losses against that opponent (ranked above, level, below),
  casual matches included, as the bot page showed them (``ladder.read.bots.BOT_HEAD_TO_HEAD_SQL``
  read two index entries per match of the bot: 0.26 s for the busiest bot at 10^6, ten times that at
  10^7). Derived data like ``bot_player_stats``: the trigger ``matches_finished_head_to_head``
  adds a finished match (the last write of ``ladder.matches.record_result``, after its seats have
  their ranks), one upsert per ordered pair of seats in (bot, opponent) order; :data:`REBUILD`
  recomputes it (after rows were bulk-loaded, or finished matches deleted). The upgrade fills it
  from the finished matches (minutes at 10^7 matches).
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

REBUILD = """
DELETE FROM bot_head_to_head;
INSERT INTO bot_head_to_head (bot_id, game, opponent_id, matches, wins, draws, losses)
SELECT me.bot_id, m.game, o.bot_id, count(*), count(*) FILTER (WHERE me.rank < o.rank),
       count(*) FILTER (WHERE me.rank = o.rank), count(*) FILTER (WHERE me.rank > o.rank)
FROM seats me JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id
JOIN matches m ON m.id = me.match_id
WHERE m.status = 'finished' AND me.rank IS NOT NULL AND o.rank IS NOT NULL
GROUP BY me.bot_id, m.game, o.bot_id
ORDER BY me.bot_id, m.game, o.bot_id;
"""
"""SQL recomputing ``bot_head_to_head`` from the seats of finished matches (run in one transaction; the rows go in
in key order, so the key's index is filled from left to right)."""

UPGRADE = f"""
CREATE UNIQUE INDEX matches_plan_key_without_tournament_new ON matches (plan_key text_pattern_ops)
    WHERE tournament_id IS NULL;
DROP INDEX matches_plan_key_without_tournament;
ALTER INDEX matches_plan_key_without_tournament_new RENAME TO matches_plan_key_without_tournament;

CREATE INDEX matches_free_by_created ON matches (game, created_at)
    WHERE tournament_id IS NULL AND competition_id IS NULL;

CREATE INDEX bots_revoked ON bots (id) WHERE revoked_at IS NOT NULL;

CREATE TABLE bot_head_to_head (
    bot_id      bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    game        text NOT NULL,
    opponent_id bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    matches     int NOT NULL CHECK (matches >= 1),
    wins        int NOT NULL CHECK (wins >= 0),
    draws       int NOT NULL CHECK (draws >= 0),
    losses      int NOT NULL CHECK (losses >= 0),
    PRIMARY KEY (bot_id, game, opponent_id)
);
COMMENT ON TABLE bot_head_to_head IS
    'derived: finished matches per (bot, game, opponent), ranked above / level / below it; '
    'maintained by trigger matches_finished_head_to_head';

CREATE FUNCTION bot_head_to_head_on_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bot_head_to_head AS t (bot_id, game, opponent_id, matches, wins, draws, losses)
    SELECT me.bot_id, NEW.game, o.bot_id, 1, (me.rank < o.rank)::int, (me.rank = o.rank)::int,
           (me.rank > o.rank)::int
    FROM seats me JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id
    WHERE me.match_id = NEW.id AND me.rank IS NOT NULL AND o.rank IS NOT NULL
    ORDER BY me.bot_id, o.bot_id
    ON CONFLICT (bot_id, game, opponent_id) DO UPDATE SET
        matches = t.matches + 1,
        wins = t.wins + EXCLUDED.wins,
        draws = t.draws + EXCLUDED.draws,
        losses = t.losses + EXCLUDED.losses;
    RETURN NULL;
END
$$;

CREATE TRIGGER matches_finished_head_to_head AFTER UPDATE OF status ON matches
    FOR EACH ROW WHEN (NEW.status = 'finished' AND OLD.status IS DISTINCT FROM 'finished')
    EXECUTE FUNCTION bot_head_to_head_on_finish();

{REBUILD}
"""

DOWNGRADE = """
DROP TRIGGER matches_finished_head_to_head ON matches;
DROP FUNCTION bot_head_to_head_on_finish();
DROP TABLE bot_head_to_head;
DROP INDEX bots_revoked;
DROP INDEX matches_free_by_created;
CREATE UNIQUE INDEX matches_plan_key_without_tournament_old ON matches (plan_key) WHERE tournament_id IS NULL;
DROP INDEX matches_plan_key_without_tournament;
ALTER INDEX matches_plan_key_without_tournament_old RENAME TO matches_plan_key_without_tournament;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
