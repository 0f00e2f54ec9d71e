"""Hosted bots: submitted versions, their verdicts, the owner's regression setting (docs/hosted.md).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

* ``hosted_versions``: one row per uploaded version of a bot: its number
  (1, 2, ... per bot), the archive (bytea, at most 8 MiB: ``ladder.submissions``)
  and its sha256, the checked manifest, the status (``validating``,
  ``rejected``, ``testing``, ``active``, ``superseded``, ``failed_test``),
  the reason and the log (the bot's stderr, owner only), the validation
  matches and the regression test's result (JSON), and the worker that
  holds it (``worker``, ``lease_until``) while it validates or tests it. At most one active
  version per bot (a partial unique index). A trigger refuses any change of
  ``archive``, ``sha256``, ``size``, ``manifest``, ``number`` or ``bot_id``:
  versions are immutable.
* ``hosted_settings``: per bot, whether a failed regression test blocks the
  new version (default yes).
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE hosted_versions (
    id bigserial PRIMARY KEY,
    bot_id bigint NOT NULL REFERENCES bots(id),
    number integer NOT NULL CHECK (number >= 1),
    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size integer NOT NULL CHECK (size BETWEEN 1 AND 8388608),
    archive bytea NOT NULL,
    manifest jsonb NOT NULL,
    status text NOT NULL DEFAULT 'validating'
        CHECK (status IN ('validating','rejected','testing','active','superseded','failed_test')),
    reason text NOT NULL DEFAULT '',
    log text NOT NULL DEFAULT '',
    validation jsonb NOT NULL DEFAULT '{}'::jsonb,
    regression jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz,
    worker text NOT NULL DEFAULT '',
    lease_until timestamptz,
    UNIQUE (bot_id, number)
);
CREATE UNIQUE INDEX hosted_versions_one_active ON hosted_versions (bot_id) WHERE status = 'active';

CREATE FUNCTION hosted_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.archive IS DISTINCT FROM OLD.archive OR NEW.sha256 IS DISTINCT FROM OLD.sha256
       OR NEW.size IS DISTINCT FROM OLD.size OR NEW.manifest IS DISTINCT FROM OLD.manifest
       OR NEW.number IS DISTINCT FROM OLD.number OR NEW.bot_id IS DISTINCT FROM OLD.bot_id THEN
        RAISE EXCEPTION 'hosted versions are immutable (version %)', OLD.id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER hosted_versions_immutable BEFORE UPDATE ON hosted_versions
    FOR EACH ROW EXECUTE FUNCTION hosted_versions_immutable();

CREATE TABLE hosted_settings (
    bot_id bigint PRIMARY KEY REFERENCES bots(id),
    block_on_regression boolean NOT NULL DEFAULT true
);
"""

DOWNGRADE = """
DROP TABLE hosted_settings;
DROP TABLE hosted_versions;
DROP FUNCTION hosted_versions_immutable();
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
