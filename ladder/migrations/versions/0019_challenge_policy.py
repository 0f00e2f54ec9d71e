"""A bot's challenge policy, and challenges that wait for its owner's answer (docs/participants.md "Challenges").

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07

* ``bots.challenge_policy`` replaces ``bots.accepts_challenges``: ``accept`` (every challenge
  is played once the bots are connected), ``none`` (every challenge is refused) or ``ask`` (each
  challenge waits for the owner's answer). Existing rows keep their meaning: ``true`` becomes
  ``accept``, ``false`` becomes ``none``; the downgrade maps back (``ask`` becomes ``false``).
* ``challenges.status`` gains ``asked`` (waiting for the answers of the asked bots' owners) and
  ``declined`` (an owner said no: never played); ``matches.status`` gains ``declined`` for its
  match. The index of challenges still to be dispatched covers ``asked`` ones too (they expire).
* ``challenge_answers``: one row per bot whose owner is asked, its answer (``accepted``,
  ``declined``, or NULL while pending) and when it was given. The owner is the bot's
  ``account_id`` (bots never change hands), so ownership is checked by a join, not a copy.
"""

from __future__ import annotations

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

OLD_MATCH_STATUSES = "'waiting','planned','running','finished','aborted_no_show','failed','expired'"
MATCH_STATUSES = OLD_MATCH_STATUSES + ",'declined'"

UPGRADE = f"""
ALTER TABLE bots ADD COLUMN challenge_policy text NOT NULL DEFAULT 'none'
    CHECK (challenge_policy IN ('accept', 'ask', 'none'));
UPDATE bots SET challenge_policy = 'accept' WHERE accepts_challenges;
ALTER TABLE bots DROP COLUMN accepts_challenges;
COMMENT ON COLUMN bots.challenge_policy IS
    'accept: challenges are played; ask: each waits for the owner''s answer; none: refused';

ALTER TABLE matches DROP CONSTRAINT matches_status_check;
ALTER TABLE matches ADD CONSTRAINT matches_status_check CHECK (status IN ({MATCH_STATUSES}));
ALTER TABLE challenges DROP CONSTRAINT challenges_status_check;
ALTER TABLE challenges ADD CONSTRAINT challenges_status_check
    CHECK (status IN ('asked', 'waiting', 'started', 'expired', 'declined'));
DROP INDEX challenges_waiting;
CREATE INDEX challenges_waiting ON challenges (expires_at) WHERE status IN ('asked', 'waiting');

CREATE TABLE challenge_answers (
    match_id    bigint NOT NULL REFERENCES challenges(match_id) ON DELETE CASCADE,
    bot_id      bigint NOT NULL REFERENCES bots(id),
    answer      text CHECK (answer IN ('accepted', 'declined')),
    answered_at timestamptz,
    PRIMARY KEY (match_id, bot_id),
    CHECK ((answer IS NULL) = (answered_at IS NULL))
);
COMMENT ON TABLE challenge_answers IS 'bots of a challenge whose owner is asked (policy ask), and the answers';
CREATE INDEX challenge_answers_by_bot ON challenge_answers (bot_id, match_id DESC);
"""

DOWNGRADE = f"""
DROP TABLE challenge_answers;
UPDATE challenges SET status = 'expired', reason = coalesce(reason, 'not answered before the downgrade')
    WHERE status IN ('asked', 'declined');
UPDATE matches SET status = 'expired' WHERE status = 'declined'
    OR (status = 'waiting' AND id IN (SELECT match_id FROM challenges WHERE status = 'expired'));
DROP INDEX challenges_waiting;
CREATE INDEX challenges_waiting ON challenges (expires_at) WHERE status = 'waiting';
ALTER TABLE challenges DROP CONSTRAINT challenges_status_check;
ALTER TABLE challenges ADD CONSTRAINT challenges_status_check CHECK (status IN ('waiting', 'started', 'expired'));
ALTER TABLE matches DROP CONSTRAINT matches_status_check;
ALTER TABLE matches ADD CONSTRAINT matches_status_check CHECK (status IN ({OLD_MATCH_STATUSES}));
ALTER TABLE bots ADD COLUMN accepts_challenges boolean NOT NULL DEFAULT false;
UPDATE bots SET accepts_challenges = true WHERE challenge_policy = 'accept';
ALTER TABLE bots DROP COLUMN challenge_policy;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
