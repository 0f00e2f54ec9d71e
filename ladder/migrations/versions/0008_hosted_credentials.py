"""Hosted bots' platform-held credentials and match logs (docs/hosted.md, "Rated matches").

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

* ``hosted_versions.token_hash``: sha256 hex of the token the workers connect
  an active hosted version with (``ladder.submissions.hosted_token``: derived
  from a secret only the workers hold, never stored in clear, never given to
  the bot's code). Published to the referees' token hash while the version is
  active; ``token_revoked_at`` is stamped, and the hash removed from Redis,
  when the version is superseded or the bot is revoked.
* ``hosted_match_logs``: the bot's stderr (capped) of each rated match attempt
  a hosted bot played, for its owner only.
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE hosted_versions ADD COLUMN token_hash text, ADD COLUMN token_revoked_at timestamptz;
CREATE UNIQUE INDEX hosted_versions_token_hash ON hosted_versions (token_hash) WHERE token_hash IS NOT NULL;
CREATE TABLE hosted_match_logs (
    match_id bigint NOT NULL REFERENCES matches(id),
    attempt integer NOT NULL,
    bot_id bigint NOT NULL REFERENCES bots(id),
    version_id bigint NOT NULL REFERENCES hosted_versions(id),
    log text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, attempt, bot_id)
);
CREATE INDEX hosted_match_logs_bot ON hosted_match_logs (bot_id, created_at DESC);
"""

DOWNGRADE = """
DROP TABLE hosted_match_logs;
DROP INDEX hosted_versions_token_hash;
ALTER TABLE hosted_versions DROP COLUMN token_hash, DROP COLUMN token_revoked_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
