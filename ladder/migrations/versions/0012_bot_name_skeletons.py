"""Bot names unique by their skeleton: look-alike names are one name.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-08

Under ``bot_name_key`` (migration 0010) ``housegreedy``, ``h0use-greedy`` and
``hоuse-greedy`` (a Cyrillic ``о``) were three names, none of them
``house-greedy``. Now:

* ``bot_name_skeleton(name)``: what a name reads as (docs/participants.md,
  "Bot names"): NFKC; Cyrillic and Greek letters that look like Latin ones
  read as those (:data:`SCRIPTS`, before lower case, so that an upper-case
  ``Н`` reads as ``h`` and not as the ``н`` it lowers to); lower case; digits
  and signs that look like letters read as those (:data:`SIGNS`: ``0`` as
  ``o``; ``1``, ``i`` and ``|`` as ``l``; ``3`` as ``e``; ``5`` and ``$`` as
  ``s``); every space and punctuation mark dropped; then ``rn`` read as ``m``
  and ``vv`` as ``w``.
* ``bots_name_skeleton``: a unique index on it, beside ``bots_name_norm``
  (0010's key stays unique too: ``a$b`` and ``a-b`` were one name and stay
  so), over the bots whose name is not ``name_legacy``: the race between two
  look-alike registrations is the database's, whoever owns the bots.
* ``bots_house_prefix``: only a house bot's name has a skeleton starting with
  ``house`` (it was: a key starting with ``house-``; every name that was
  refused still is).
* Existing rows that now clash keep working, as in 0010: every bot that is not
  a house bot and whose skeleton starts with ``house``, and every bot but the
  first (by id) of a group with one skeleton, is marked ``name_legacy``, left
  out of the index and the check; no new bot can take a name that reads as one
  of theirs, because the first of each group stays in the index and the house
  namespace is closed. ``SELECT id, name FROM bots WHERE name_legacy`` lists them.
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

SCRIPTS = {
    # Cyrillic, upper and lower case
    "А": "a", "а": "a", "В": "b", "в": "b", "Е": "e", "е": "e", "Ё": "e", "ё": "e", "Һ": "h", "һ": "h",
    "Н": "h", "н": "h", "І": "i", "і": "i", "Ї": "i", "ї": "i", "Ј": "j", "ј": "j", "К": "k", "к": "k",
    "М": "m", "м": "m", "О": "o", "о": "o", "Р": "p", "р": "p", "Ԛ": "q", "ԛ": "q", "С": "c", "с": "c",
    "Ѕ": "s", "ѕ": "s", "Т": "t", "т": "t", "У": "y", "у": "y", "Х": "x", "х": "x", "Ԁ": "d", "ԁ": "d",
    "Ԝ": "w", "ԝ": "w", "Ь": "b", "п": "n",
    # Greek, upper and lower case
    "Α": "a", "α": "a", "Β": "b", "β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "η": "n", "Ι": "i", "ι": "i",
    "Κ": "k", "κ": "k", "Μ": "m", "Ν": "n", "ν": "v", "Ο": "o", "ο": "o", "Ρ": "p", "ρ": "p", "Τ": "t",
    "τ": "t", "Υ": "y", "υ": "u", "Χ": "x", "χ": "x", "γ": "y", "ω": "w",
}
"""Cyrillic and Greek letters read as the Latin letter they look like (applied before lower case)."""

SIGNS = {"0": "o", "1": "l", "i": "l", "|": "l", "3": "e", "5": "s", "$": "s"}
"""Digits, signs and letters read as the letter they look like (applied after lower case)."""

HOUSE_SKELETON = "house"
"""The skeleton of the house bots' prefix ``house-``."""


def _translate(table: dict[str, str]) -> str:
    return f"'{''.join(table)}', '{''.join(table.values())}'"


UPGRADE = rf"""
CREATE FUNCTION bot_name_skeleton(name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN replace(replace(regexp_replace(
        translate(lower(translate(normalize(name, NFKC), {_translate(SCRIPTS)})), {_translate(SIGNS)}),
        '[[:space:][:punct:]]+', '', 'g'), 'rn', 'm'), 'vv', 'w');
COMMENT ON FUNCTION bot_name_skeleton(text) IS
    'what a bot name reads as: NFKC, Cyrillic and Greek look-alikes as Latin, lower case, 0 1 i | 3 5 $ as '
    'o l l l e s s, no spaces or punctuation, rn as m, vv as w (docs/participants.md, "Bot names")';
UPDATE bots SET name_legacy = true
    WHERE NOT house AND NOT name_legacy AND starts_with(bot_name_skeleton(name), '{HOUSE_SKELETON}');
UPDATE bots b SET name_legacy = true
    FROM (SELECT id, row_number() OVER (PARTITION BY bot_name_skeleton(name) ORDER BY id) AS n
          FROM bots WHERE NOT name_legacy) r
    WHERE r.id = b.id AND r.n > 1;
ALTER TABLE bots DROP CONSTRAINT bots_house_prefix;
ALTER TABLE bots ADD CONSTRAINT bots_house_prefix
    CHECK (house OR name_legacy OR NOT starts_with(bot_name_skeleton(name), '{HOUSE_SKELETON}'));
CREATE UNIQUE INDEX bots_name_skeleton ON bots (bot_name_skeleton(name)) WHERE NOT name_legacy;
"""

DOWNGRADE = """
DROP INDEX bots_name_skeleton;
ALTER TABLE bots DROP CONSTRAINT bots_house_prefix;
ALTER TABLE bots ADD CONSTRAINT bots_house_prefix
    CHECK (house OR name_legacy OR NOT starts_with(bot_name_key(name), 'house-'));
DROP FUNCTION bot_name_skeleton(text);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
