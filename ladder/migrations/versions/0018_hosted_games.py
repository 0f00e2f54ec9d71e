"""The games of a hosted version's validation and regression test, each with its replay (docs/hosted.md).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07

* ``hosted_games``: one row per game a worker played to validate or regression-test a hosted
  version (``kind`` ``validation`` or ``regression``; ``n`` counts a kind's games from 0 in play
  order): the game string, the deal's seed, the seat the uploaded version sat in (from 0), the
  ranks, the fault (``{"side", "verdict", "detail"?}``) if a side did wrong, and the replay as the
  ladder stores replays (``ladder.replay_store.pack``: ``replay_format``, ``replay``). Read by the
  version's owner only (``ladder.submissions.version_games``, ``game_replay``); a version taken
  again after a lost lease writes its games again over the same numbers.
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE hosted_games (
    version_id    bigint NOT NULL REFERENCES hosted_versions(id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('validation', 'regression')),
    n             int NOT NULL CHECK (n >= 0),
    game          text NOT NULL,
    seed          text NOT NULL,
    seat          int NOT NULL CHECK (seat >= 0),
    ranks         int[] NOT NULL,
    fault         jsonb,
    replay_format text,
    replay        bytea,
    played_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (version_id, kind, n)
);
COMMENT ON TABLE hosted_games IS 'a hosted version''s validation and regression games with their replays (owner only)';
"""

DOWNGRADE = """
DROP TABLE hosted_games;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
