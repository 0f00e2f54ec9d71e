"""Hosted bots' platform-held credentials (issue 15: hosted bots in rated ladder matches).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

* ``hosted_versions.token_hash``: sha256 hex of the token the workers connect
  an active hosted version with (``ladder.submissions.hosted_token``: derived
  from a secret only the workers hold, never stored in clear, never given to
  the bot's code). Published to the referees' token hash while the version is
  active; ``token_revoked_at`` is stamped, and the hash removed from Redis,
  when the version is superseded or the bot is revoked.
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE hosted_versions ADD COLUMN token_hash text, ADD COLUMN token_revoked_at timestamptz;
CREATE UNIQUE INDEX hosted_versions_token_hash ON hosted_versions (token_hash) WHERE token_hash IS NOT NULL;
"""

DOWNGRADE = """
DROP INDEX hosted_versions_token_hash;
ALTER TABLE hosted_versions DROP COLUMN token_hash, DROP COLUMN token_revoked_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
