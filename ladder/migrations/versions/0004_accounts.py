"""Participants: accounts, API tokens, owned bots, per-seat bot versions (docs/participants.md).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

* ``accounts``: a participant, organiser or admin. ``username`` is 2-32 of
  ``[A-Za-z0-9_.-]`` starting with a letter or digit, unique ignoring case;
  ``password_hash`` is an argon2id PHC string (argon2-cffi); ``status`` is
  ``active``, ``pending`` (waiting for an admin's approval) or ``disabled``;
  ``session_epoch`` is bumped on a password change so older sessions die.
* ``api_tokens``: personal API tokens, stored as sha256 hex only, with their
  scopes (``bot:manage``, ``tournament:create``, ``challenge``).
* ``auth_events``: sign-ups and login attempts (address, username, outcome,
  time, never a password): the rate limits count them, the operator reads them.
* ``bots`` gains its owning account, a description, the games it plays,
  whether (and for which games) it accepts challenges, and when its token was
  last rotated. ``seats`` gains ``bot_version`` (what the bot announced in
  ``Hello`` for that match) and ``fault_reason`` (the referee's words).
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE accounts (
    id             bigserial PRIMARY KEY,
    username       text NOT NULL CHECK (username ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{1,31}$'),
    password_hash  text NOT NULL,
    role           text NOT NULL DEFAULT 'participant' CHECK (role IN ('participant', 'organiser', 'admin')),
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending', 'disabled')),
    session_epoch  int NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    password_changed_at timestamptz
);
CREATE UNIQUE INDEX accounts_username_ci ON accounts (lower(username));

CREATE TABLE api_tokens (
    id           bigserial PRIMARY KEY,
    account_id   bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    token_hash   text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    prefix       text NOT NULL,
    label        text NOT NULL DEFAULT '' CHECK (char_length(label) <= 64),
    scopes       text[] NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_by_account ON api_tokens (account_id, id);
COMMENT ON COLUMN api_tokens.token_hash IS 'sha256 hex of the token; the token itself is never stored';

CREATE TABLE auth_events (
    id        bigserial PRIMARY KEY,
    kind      text NOT NULL CHECK (kind IN ('login_ok', 'login_failed', 'signup')),
    address   text NOT NULL,
    username  text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX auth_events_by_address ON auth_events (kind, address, at);
CREATE INDEX auth_events_by_username ON auth_events (kind, lower(username), at);

ALTER TABLE bots
    ADD COLUMN account_id bigint REFERENCES accounts(id),
    ADD COLUMN description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    ADD COLUMN games text[] NOT NULL DEFAULT '{}',
    ADD COLUMN accepts_challenges boolean NOT NULL DEFAULT false,
    ADD COLUMN challenge_games text[],
    ADD COLUMN token_rotated_at timestamptz;
CREATE INDEX bots_by_account ON bots (account_id, id);

ALTER TABLE seats
    ADD COLUMN bot_version text,
    ADD COLUMN fault_reason text;
"""

DOWNGRADE = """
ALTER TABLE seats DROP COLUMN fault_reason, DROP COLUMN bot_version;
DROP INDEX bots_by_account;
ALTER TABLE bots DROP COLUMN token_rotated_at, DROP COLUMN challenge_games, DROP COLUMN accepts_challenges,
    DROP COLUMN games, DROP COLUMN description, DROP COLUMN account_id;
DROP TABLE auth_events;
DROP TABLE api_tokens;
DROP TABLE accounts;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
