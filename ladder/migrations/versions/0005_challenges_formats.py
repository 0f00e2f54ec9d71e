"""Challenges, casual matches, gauntlets, entry windows, house bots (ladder/README.md, docs/participants.md).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

* ``matches.rated``: a casual match (``false``) is recorded and replayed like
  any other but changes no rating: ``ladder.matches.record_result`` skips the
  rating rows and history (it still takes a ``result_seq``: finished matches
  keep one), ``ratings rebuild`` and the Bradley-Terry fit read rated matches
  only, and ``bot_player_stats`` (the leaderboard's per-player-count figures)
  counts rated matches only.
* Two more match statuses: ``waiting`` (a challenge waiting for its bots to
  connect; never claimed by a worker, never requeued by the reaper) and
  ``expired`` (a challenge whose bots were not all connected in time).
* ``challenges``: one row per challenge match: who challenged (an account id
  of the accounts tables, kept as a bare nullable bigint so this revision
  needs none of them), rated or casual, ``waiting`` -> ``started`` or
  ``expired`` with the reason in words, and when it expires.
* ``tournaments``: status ``open`` (an entry window until ``entry_deadline``),
  ``organiser_id`` (bare nullable bigint, like ``challenger_id``),
  ``candidate_bot_id`` (the candidate of a gauntlet) and ``outcome`` (why a
  tournament was cancelled, e.g. too few entrants).
* ``house_bots``: which bots are the house's (``house-random``,
  ``house-greedy``), by kind, with the games they play.
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

MATCH_STATUSES = "'waiting','planned','running','finished','aborted_no_show','failed','expired'"

STATS_FUNCTION_TEMPLATE = """
CREATE OR REPLACE FUNCTION bot_player_stats_on_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{GUARD}    INSERT INTO bot_player_stats AS t (game, players, bot_id, games, wins, draws, losses, score_sum, last_played)
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
"""
"""The trigger function of migration 0002, with a guard ({GUARD}) inserted at its start."""

RATED_GUARD = "    IF NOT NEW.rated THEN\n        RETURN NULL;\n    END IF;\n"

UPGRADE = f"""
ALTER TABLE matches ADD COLUMN rated boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN matches.rated IS 'false = casual: recorded and replayed, never rated';
ALTER TABLE matches DROP CONSTRAINT matches_status_check;
ALTER TABLE matches ADD CONSTRAINT matches_status_check CHECK (status IN ({MATCH_STATUSES}));

CREATE TABLE challenges (
    match_id      bigint PRIMARY KEY REFERENCES matches(id) ON DELETE CASCADE,
    challenger_id bigint,
    rated         boolean NOT NULL,
    status        text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting','started','expired')),
    reason        text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    started_at    timestamptz
);
COMMENT ON COLUMN challenges.challenger_id IS 'account id of the challenger (accounts tables), or NULL';
CREATE INDEX challenges_waiting ON challenges (expires_at) WHERE status = 'waiting';
CREATE INDEX challenges_by_challenger ON challenges (challenger_id, match_id DESC);

ALTER TABLE tournaments DROP CONSTRAINT tournaments_status_check;
ALTER TABLE tournaments ADD CONSTRAINT tournaments_status_check
    CHECK (status IN ('open','created','planned','cancelled'));
ALTER TABLE tournaments ADD COLUMN entry_deadline timestamptz;
ALTER TABLE tournaments ADD COLUMN organiser_id bigint;
ALTER TABLE tournaments ADD COLUMN candidate_bot_id bigint REFERENCES bots(id);
ALTER TABLE tournaments ADD COLUMN outcome text;
COMMENT ON COLUMN tournaments.organiser_id IS 'account id of the organiser (accounts tables), or NULL';
CREATE INDEX tournaments_open ON tournaments (entry_deadline) WHERE status = 'open';

CREATE TABLE house_bots (
    bot_id bigint PRIMARY KEY REFERENCES bots(id),
    kind   text NOT NULL UNIQUE,
    games  text[] NOT NULL
);

{STATS_FUNCTION_TEMPLATE.replace("{GUARD}", RATED_GUARD)}"""

DOWNGRADE = f"""
{STATS_FUNCTION_TEMPLATE.replace("{GUARD}", "")}
DROP TABLE house_bots;
DROP INDEX tournaments_open;
ALTER TABLE tournaments DROP COLUMN outcome, DROP COLUMN candidate_bot_id, DROP COLUMN organiser_id,
    DROP COLUMN entry_deadline;
UPDATE tournaments SET status = 'created' WHERE status = 'open';
ALTER TABLE tournaments DROP CONSTRAINT tournaments_status_check;
ALTER TABLE tournaments ADD CONSTRAINT tournaments_status_check CHECK (status IN ('created','planned','cancelled'));
DROP TABLE challenges;
DELETE FROM matches WHERE status IN ('waiting', 'expired');
ALTER TABLE matches DROP CONSTRAINT matches_status_check;
ALTER TABLE matches ADD CONSTRAINT matches_status_check
    CHECK (status IN ('planned','running','finished','aborted_no_show','failed'));
ALTER TABLE matches DROP COLUMN rated;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
