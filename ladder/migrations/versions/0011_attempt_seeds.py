"""Each attempt of a match records the seed it was dealt; a retried attempt gets a new one.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

* ``match_attempts.seed`` / ``match_attempts.seed_commitment``: the seed an attempt was
  dealt and its commitment (``sha256`` hex of the seed text). The first attempt plays
  the planned seed; a later attempt of the same match is dealt a fresh one
  (``ladder.matches.claim_match``), because the bots of an ended attempt have seen part
  of its deal: retrying it on the same seed showed them the deal's future draws (after
  a no-show, which showed nobody a card, the seed is kept). The
  match's own ``seed`` / ``seed_commitment`` are those of its latest attempt.
* Existing rows: every attempt before this revision was played on its match's seed,
  so they get it.
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE match_attempts ADD COLUMN seed text, ADD COLUMN seed_commitment text;
UPDATE match_attempts a SET seed = m.seed, seed_commitment = m.seed_commitment FROM matches m WHERE m.id = a.match_id;
COMMENT ON COLUMN match_attempts.seed IS 'the seed this attempt was dealt (a retried attempt gets a new one)';
COMMENT ON COLUMN match_attempts.seed_commitment IS 'sha256 hex of the seed text (ASCII)';
"""

DOWNGRADE = """
ALTER TABLE match_attempts DROP COLUMN seed_commitment, DROP COLUMN seed;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
