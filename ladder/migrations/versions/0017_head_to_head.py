"""Head-to-head counts kept as matches finish: a bot page reads its rows, not every match of the bot.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07

* ``bot_head_to_head``: per (bot, game, opponent) the matches in which both held a ranked seat, and
  how many the bot finished ahead of, level with and behind the opponent; derived, maintained by the
  trigger ``matches_finished_head_to_head`` when a match becomes ``finished`` (seats get their ranks
  in the same transaction, ``ladder.matches.record_result``). A bot that held two seats against one
  opponent counts each pair of seats, as the counting over ``seats`` did.

The bot page counted these from ``seats`` at every view: 0.3 s of PostgreSQL for a bot of 75,000
matches and several seconds for a house bot that meets everyone, on a public page. :data:`REBUILD`
recomputes the table from the seats (the migration runs it; tests compare it with the trigger's
result).
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

REBUILD = """
DELETE FROM bot_head_to_head;
INSERT INTO bot_head_to_head (bot_id, game, opponent_id, matches, wins, draws, losses)
SELECT me.bot_id, m.game, o.bot_id, count(*), count(*) FILTER (WHERE me.rank < o.rank),
       count(*) FILTER (WHERE me.rank = o.rank), count(*) FILTER (WHERE me.rank > o.rank)
FROM seats me JOIN matches m ON m.id = me.match_id
JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id
WHERE me.rank IS NOT NULL AND o.rank IS NOT NULL
GROUP BY me.bot_id, m.game, o.bot_id;
"""
"""SQL recomputing ``bot_head_to_head`` from the ranked seats (run in one transaction)."""

UPGRADE = f"""
CREATE TABLE bot_head_to_head (
    bot_id      bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    game        text NOT NULL,
    opponent_id bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    matches     int NOT NULL CHECK (matches >= 1),
    wins        int NOT NULL DEFAULT 0,
    draws       int NOT NULL DEFAULT 0,
    losses      int NOT NULL DEFAULT 0,
    PRIMARY KEY (bot_id, game, opponent_id)
);
COMMENT ON TABLE bot_head_to_head IS
    'derived: ranked meetings per (bot, game, opponent); maintained by trigger matches_finished_head_to_head';

CREATE FUNCTION bot_head_to_head_on_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bot_head_to_head AS t (bot_id, game, opponent_id, matches, wins, draws, losses)
    SELECT me.bot_id, NEW.game, o.bot_id, count(*), count(*) FILTER (WHERE me.rank < o.rank),
           count(*) FILTER (WHERE me.rank = o.rank), count(*) FILTER (WHERE me.rank > o.rank)
    FROM seats me JOIN seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id
    WHERE me.match_id = NEW.id AND me.rank IS NOT NULL AND o.rank IS NOT NULL
    GROUP BY me.bot_id, o.bot_id
    ORDER BY me.bot_id, o.bot_id
    ON CONFLICT (bot_id, game, opponent_id) DO UPDATE SET
        matches = t.matches + EXCLUDED.matches,
        wins = t.wins + EXCLUDED.wins,
        draws = t.draws + EXCLUDED.draws,
        losses = t.losses + EXCLUDED.losses;
    RETURN NULL;
END
$$;

CREATE TRIGGER matches_finished_head_to_head AFTER UPDATE OF status ON matches
    FOR EACH ROW WHEN (NEW.status = 'finished' AND OLD.status IS DISTINCT FROM 'finished')
    EXECUTE FUNCTION bot_head_to_head_on_finish();

{REBUILD}
"""

DOWNGRADE = """
DROP TRIGGER matches_finished_head_to_head ON matches;
DROP FUNCTION bot_head_to_head_on_finish();
DROP TABLE bot_head_to_head;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
