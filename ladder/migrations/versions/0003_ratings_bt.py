"""Cached Bradley-Terry ratings with bootstrap intervals (ladder/stats).

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03

Two tables, written only by ``ladder.stats.store.refresh_bradley_terry`` (the
worker task ``parterre.recompute_bradley_terry`` and the CLI leaderboard):

* ``ratings_bt_fits``: one row per game: which results the fit includes
  (``result_seq`` = the largest ``matches.result_seq`` of the game's finished
  matches at the time, NULL when it had none, and ``finished`` = how many
  there were), how it was computed, and when. A fit is stale when the game's
  finished matches no longer have that count and largest ``result_seq``
  (the count catches a result whose ``result_seq`` is smaller but whose
  transaction committed later).
* ``ratings_bt``: one row per (game, bot) of that fit: the maximum-likelihood
  rating and its bootstrap interval (logistic Elo points, mean 1500), the
  matches played, and ``p_above_next``, the bootstrap probability that the
  bot is stronger than the next one down the table.
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE ratings_bt_fits (
    game        text PRIMARY KEY,
    result_seq  bigint,
    finished    int NOT NULL CHECK (finished >= 0),
    matches     int NOT NULL CHECK (matches >= 0),
    bootstrap   int NOT NULL CHECK (bootstrap >= 0),
    confidence  double precision NOT NULL CHECK (confidence > 0 AND confidence < 1),
    seed        bigint,
    model       text NOT NULL,
    elapsed_ms  int NOT NULL DEFAULT 0 CHECK (elapsed_ms >= 0),
    computed_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN ratings_bt_fits.result_seq IS 'largest matches.result_seq included; NULL = no finished match';
COMMENT ON COLUMN ratings_bt_fits.finished IS 'finished matches of the game included (solo ones too)';
COMMENT ON COLUMN ratings_bt_fits.matches IS 'matches with two or more seats used by the fit';

CREATE TABLE ratings_bt (
    game         text NOT NULL REFERENCES ratings_bt_fits(game) ON DELETE CASCADE,
    bot_id       bigint NOT NULL REFERENCES bots(id),
    rank         int NOT NULL CHECK (rank >= 1),
    elo          double precision NOT NULL,
    elo_low      double precision NOT NULL,
    elo_high     double precision NOT NULL,
    games        int NOT NULL CHECK (games >= 0),
    p_above_next double precision CHECK (p_above_next BETWEEN 0 AND 1),
    PRIMARY KEY (game, bot_id)
);
CREATE INDEX ratings_bt_by_rank ON ratings_bt (game, rank);
COMMENT ON COLUMN ratings_bt.elo IS 'Bradley-Terry MLE, logistic Elo points, mean of the fit 1500';
"""

DOWNGRADE = """
DROP TABLE ratings_bt;
DROP TABLE ratings_bt_fits;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
