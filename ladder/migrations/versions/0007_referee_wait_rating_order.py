"""Waiting for a referee, and ratings applied in plan order (docs/faults.md F-22, F-26).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

* ``matches.referee_wait_since`` / ``referee_wait_tries`` / ``referee_wait_last`` /
  ``referee_wait_error``: a claim that found no referee (every address
  ``UNAVAILABLE`` before the match started) is not an attempt: the claim is
  given back (``attempt`` back to what it was, its ``match_attempts`` row
  deleted) and these columns say since when, how often and why the match
  waits for a referee (``ladder.matches.release_unstarted``). They are
  cleared when an attempt that started ends.
* ``matches.rating_seq``: when the match's Elo update was applied (values of
  ``match_result_seq``, taken at that moment); NULL for a casual match and
  for a finished match whose update is held until the earlier planned
  matches of its bots have ended (``ladder.rating_order``). Ratings rebuilds
  replay this order. Existing finished rated matches were applied when
  recorded: they get their ``result_seq``.
* ``matches_rating_held``: the held results of a game, in plan order.
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE matches
    ADD COLUMN referee_wait_since timestamptz,
    ADD COLUMN referee_wait_tries int NOT NULL DEFAULT 0 CHECK (referee_wait_tries >= 0),
    ADD COLUMN referee_wait_last timestamptz,
    ADD COLUMN referee_wait_error text,
    ADD COLUMN rating_seq bigint UNIQUE,
    ADD CONSTRAINT matches_rating_seq_only_finished CHECK (rating_seq IS NULL OR status = 'finished');
COMMENT ON COLUMN matches.referee_wait_since IS 'first claim of this run that found no referee';
COMMENT ON COLUMN matches.rating_seq IS 'when the Elo update was applied; NULL = casual or held';
COMMENT ON COLUMN matches.result_seq IS 'order in which results were recorded';
UPDATE matches SET rating_seq = result_seq WHERE status = 'finished' AND rated;
CREATE INDEX matches_rating_held ON matches (game, id) WHERE status = 'finished' AND rated AND rating_seq IS NULL;
"""

DOWNGRADE = """
DROP INDEX matches_rating_held;
ALTER TABLE matches
    DROP CONSTRAINT matches_rating_seq_only_finished,
    DROP COLUMN rating_seq,
    DROP COLUMN referee_wait_error,
    DROP COLUMN referee_wait_last,
    DROP COLUMN referee_wait_tries,
    DROP COLUMN referee_wait_since;
COMMENT ON COLUMN matches.result_seq IS 'order in which results were applied to ratings (rebuilds replay this order)';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
