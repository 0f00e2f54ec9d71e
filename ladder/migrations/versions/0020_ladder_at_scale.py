"""The ladder at ten million matches: the matchmaking's look-ups and a bot's rank (docs/benchmarks.md).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07

What ``bench/bench_ten_million.py`` found slow at 10^6 and 10^7 matches with 10^4 bots, and what fixes it:

* ``matches_plan_key_without_tournament`` (the unique key of plan keys without a tournament,
  migration 0001) is made again with the ``text_pattern_ops`` operator class: the same key (its
  equality is byte equality, as before), and now also a range scan for ``starts_with(plan_key, ...)``,
  which the default collation (``C.UTF-8``, not ``C``) could not serve. The continuous ladder asks
  twice per game and round whether the round's matches exist
  (``ladder.ladder_rounds.plan_ladder_round``): a scan of every match without it (0.4 s at 10^6).
* ``matches_free_by_created`` (``matches (game, created_at)``, matches without a tournament or
  competition): the rated matches between two accounts in the last 24 hours
  (``ladder.fair_play.ladder_pair_counts``, once per game and round) start from that day's matches
  instead of every seat of every online bot's account (0.35 s at 10^6, growing with the history).
* ``bots_revoked`` (the revoked bots' ids): a leaderboard's size and a bot's rank count the ratings
  of a game, less the revoked bots' (``ladder.read.leaderboards``, ``ladder.read.bots``), instead of
  joining each of 10^4 ratings with its bot (8 ms against 2 ms for a rank at 10^4 bots).

The bot page's head-to-head is the derived table ``bot_head_to_head`` of migration 0017.
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE UNIQUE INDEX matches_plan_key_without_tournament_new ON matches (plan_key text_pattern_ops)
    WHERE tournament_id IS NULL;
DROP INDEX matches_plan_key_without_tournament;
ALTER INDEX matches_plan_key_without_tournament_new RENAME TO matches_plan_key_without_tournament;

CREATE INDEX matches_free_by_created ON matches (game, created_at)
    WHERE tournament_id IS NULL AND competition_id IS NULL;

CREATE INDEX bots_revoked ON bots (id) WHERE revoked_at IS NOT NULL;
"""

DOWNGRADE = """
DROP INDEX bots_revoked;
DROP INDEX matches_free_by_created;
CREATE UNIQUE INDEX matches_plan_key_without_tournament_old ON matches (plan_key) WHERE tournament_id IS NULL;
DROP INDEX matches_plan_key_without_tournament;
ALTER INDEX matches_plan_key_without_tournament_old RENAME TO matches_plan_key_without_tournament;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
