"""Leagues: promotions past the house bots' gates (docs/ladder.md "Leagues").

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07

* ``league_promotions``: one row per bot, game and league it was promoted to (``bronze``,
  ``silver``, ``gold``; every bot starts in ``wood``, which has no row), with the boss of the
  gate (a house bot), when (``promoted_at``, the ``now`` of the run that decided it) and the
  evidence it was decided on: rated head-to-head games against the boss, wins, draws, the
  score share and the one-sided 95 % Wilson lower bound of that share. The primary key makes a
  promotion happen once, whoever decides it (two ticks at once insert one row).
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE league_promotions (
    bot_id       bigint NOT NULL REFERENCES bots(id),
    game         text NOT NULL,
    league       text NOT NULL CHECK (league IN ('bronze', 'silver', 'gold')),
    boss_id      bigint NOT NULL REFERENCES bots(id),
    promoted_at  timestamptz NOT NULL,
    games        int NOT NULL CHECK (games >= 1),
    wins         int NOT NULL CHECK (wins >= 0),
    draws        int NOT NULL CHECK (draws >= 0),
    score        double precision NOT NULL CHECK (score >= 0 AND score <= 1),
    lower_bound  double precision NOT NULL CHECK (lower_bound >= 0 AND lower_bound <= 1),
    CHECK (wins + draws <= games),
    CHECK (bot_id <> boss_id),
    PRIMARY KEY (bot_id, game, league)
);
CREATE INDEX league_promotions_by_game ON league_promotions (game, league);
COMMENT ON TABLE league_promotions IS 'a bot promoted past a house bot''s gate (docs/ladder.md "Leagues")';
"""

DOWNGRADE = """
DROP TABLE IF EXISTS league_promotions;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
