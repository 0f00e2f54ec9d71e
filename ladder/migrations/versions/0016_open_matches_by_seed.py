"""Open matches by seed: the twin check is an index look-up (docs/web.md, "Decisions": a held replay).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07

* ``matches_open_by_seed``: a partial index on ``matches (seed)`` of the matches not over yet
  (``waiting``, ``planned``, ``running``: ``ladder.read.replays.OPEN_STATUSES``). The question "is
  another match on this seed still to be played?" (``ladder.read.TWIN_OPEN_SQL``, S-20) is asked by
  every match page, every replay served, each rules page's example replays and each file of a
  competition's dataset; without it each one read the whole ``matches`` table (0.1 s at 305,000
  matches, four minutes for a 4,000-match dataset). Only open matches are indexed, so the index
  stays as small as the queue.
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE INDEX matches_open_by_seed ON matches (seed) WHERE status IN ('waiting', 'planned', 'running');
"""

DOWNGRADE = """
DROP INDEX matches_open_by_seed;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
