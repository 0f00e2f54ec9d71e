"""House bots by flag, bot names unique under normalisation, why a match is unrated.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07

* ``bots.house``: the operator's mark of a house bot (:mod:`ladder.house`), set
  only by ``ensure_house_bot``; house bots were found by their ``house_bots``
  row, which ``ensure_house_bot`` wrote for whatever bot held the name
  ``house-<kind>``: a participant who registered ``house-expert`` first had
  their bot listed as a house bot. A house bot belongs to no account
  (``bots_house_no_account``). Existing ``house_bots`` rows of bots that belong
  to an account are deleted; the others' bots get the flag.
* ``bot_name_key(name)``: the form bot names are unique under (``bots_name_norm``
  unique index), as usernames are unique under ``lower(username)``:
  NFKC-normalised (full-width and other compatibility forms fold to their plain
  letters), lower case, every run of spaces and punctuation one ``-``, none
  at either end. ``Rose_Bud``, ``rose-bud.`` and ``ROSE BUD`` are one name.
* ``bots_house_prefix``: only a house bot's name key starts with ``house-``.
* ``bots.name_legacy``: names registered before these rules that break them
  keep working (the bot can still be revoked, rotated, held): every bot but the
  first of a group that clashes under ``bot_name_key``, and every bot that is
  not a house bot in the ``house-`` namespace. Such rows are left out of the
  index and the check; no new bot can take any of their names (a new name's key
  is checked against the index, and the house namespace is closed).
* ``matches.unrated_reason``: why a match that was asked to be rated is not
  (seats of one account, the daily cap between two accounts, the rating gap:
  docs/participants.md "Fair play").
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION bot_name_key(name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN btrim(regexp_replace(lower(normalize(name, NFKC)), '[[:space:][:punct:]]+', '-', 'g'), '-');
COMMENT ON FUNCTION bot_name_key(text) IS
    'the form bot names are unique under: NFKC, lower case, runs of spaces and punctuation as one -, trimmed';
ALTER TABLE bots ADD COLUMN house boolean NOT NULL DEFAULT false,
                 ADD COLUMN name_legacy boolean NOT NULL DEFAULT false;
DELETE FROM house_bots h USING bots b WHERE b.id = h.bot_id AND b.account_id IS NOT NULL;
UPDATE bots SET house = true WHERE id IN (SELECT bot_id FROM house_bots);
ALTER TABLE bots ADD CONSTRAINT bots_house_no_account CHECK (NOT house OR account_id IS NULL);
UPDATE bots b SET name_legacy = true
    WHERE (NOT house AND starts_with(bot_name_key(name), 'house-'))
       OR EXISTS (SELECT 1 FROM bots o WHERE bot_name_key(o.name) = bot_name_key(b.name) AND o.id < b.id);
ALTER TABLE bots ADD CONSTRAINT bots_house_prefix
    CHECK (house OR name_legacy OR NOT starts_with(bot_name_key(name), 'house-'));
CREATE UNIQUE INDEX bots_name_norm ON bots (bot_name_key(name)) WHERE NOT name_legacy;
ALTER TABLE matches ADD COLUMN unrated_reason text;
"""

DOWNGRADE = """
ALTER TABLE matches DROP COLUMN unrated_reason;
DROP INDEX bots_name_norm;
ALTER TABLE bots DROP CONSTRAINT bots_house_prefix, DROP CONSTRAINT bots_house_no_account;
ALTER TABLE bots DROP COLUMN name_legacy, DROP COLUMN house;
DROP FUNCTION bot_name_key(text);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
