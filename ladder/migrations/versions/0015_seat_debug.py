"""A seat's own debug text per decision, kept apart from the replay (docs/bots.md, "Debug text").

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07

* ``seat_debug``: one row per seat of a finished match whose bot sent debug text
  (``Decision.debug``, contract revision 3): ``data`` is a zstd frame of the UTF-8 JSON
  list ``[[step, text], ...]`` in step order, each text already cut to 1,000 bytes by the
  referee, at most 100,000 bytes of text per seat. It is read only by the owner's seat view
  (``web/owner.py``, which checks the seat's bot is the caller's); the replay, its export,
  the dataset and the live feed never see it, which is why it is not in ``replays``.
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE seat_debug (
    match_id    bigint NOT NULL,
    seat        int NOT NULL,
    compression text NOT NULL DEFAULT 'zstd' CHECK (compression = 'zstd'),
    data        bytea NOT NULL,
    notes       int NOT NULL CHECK (notes >= 1),
    raw_bytes   int NOT NULL CHECK (raw_bytes >= 0),
    PRIMARY KEY (match_id, seat),
    FOREIGN KEY (match_id, seat) REFERENCES seats (match_id, seat) ON DELETE CASCADE
);
COMMENT ON TABLE seat_debug IS 'a seat''s own debug text per decision, for its owner only (docs/bots.md, "Debug text")';
COMMENT ON COLUMN seat_debug.data IS 'zstd frame of the UTF-8 JSON [[step, text], ...]';
"""

DOWNGRADE = """
DROP TABLE seat_debug;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
