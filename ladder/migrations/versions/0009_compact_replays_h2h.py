"""Compact stored replays, and covering indexes for the bot page's head-to-head (docs/benchmarks.md).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

* ``replays.format`` is the version of a row: ``parterre-replay/1`` rows (all
  rows before this revision) hold zstd of the replay JSON text;
  ``parterre-replay-compact/1`` rows hold zstd of the compact form
  (``ladder.replay_store``), re-simulated into the same text on load. No row
  is rewritten: old rows load as they always did (any format but the compact
  one is read as zstd text). Only the column comment changes.
* ``seats_h2h`` (``seats (match_id) INCLUDE (bot_id, rank)``) and
  ``matches_game_by_id`` (``matches (id) INCLUDE (game)``) let the head-to-head
  query (``ladder.read.bots.BOT_HEAD_TO_HEAD_SQL``) read the opponents' seats
  and the matches' games with index-only scans: 7.9 → 2.2 ms median for a bot
  with ≈ 400 matches (100k matches / 1k bots, bench/bench_web.py's data).
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

UPGRADE = """
COMMENT ON COLUMN replays.data IS
    'zstd frame of the UTF-8 replay JSON text (format parterre-replay/1), or of the compact form '
    '(format parterre-replay-compact/1, ladder.replay_store)';
CREATE INDEX seats_h2h ON seats (match_id) INCLUDE (bot_id, rank);
CREATE INDEX matches_game_by_id ON matches (id) INCLUDE (game);
"""

DOWNGRADE = """
DROP INDEX matches_game_by_id;
DROP INDEX seats_h2h;
COMMENT ON COLUMN replays.data IS 'zstd frame of the UTF-8 replay JSON text';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
