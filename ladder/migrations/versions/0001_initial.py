"""Initial ladder schema: bots, tournaments, matches, attempts, seats, replays, ratings.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Match lifecycle (ladder/README.md, "Match lifecycle"): ``planned`` -> ``running`` (claimed, attempt + 1)
-> ``finished`` (result recorded, ``result_seq`` assigned) or back to
``planned`` after an ``infra_error`` / ``aborted_no_show`` attempt, until the
attempt limit makes it ``failed`` / ``aborted_no_show`` for good.
"""

from __future__ import annotations

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

VERDICTS = "'normal','timeout','illegal_action','disconnect','crash','resigned','no_show'"

UPGRADE = f"""
CREATE TABLE bots (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 64),
    version     text NOT NULL DEFAULT '1' CHECK (char_length(version) BETWEEN 1 AND 64),
    owner       text,
    token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{{64}}$'),
    revoked_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN bots.token_hash IS 'sha256 hex of the token; the token itself is never stored';

CREATE TABLE tournaments (
    id            bigserial PRIMARY KEY,
    name          text NOT NULL,
    game          text NOT NULL,
    game_options  jsonb NOT NULL DEFAULT '{{}}'::jsonb,
    format        text NOT NULL CHECK (format IN ('round_robin','gauntlet','duplicate','ladder')),
    player_counts int[] NOT NULL CHECK (cardinality(player_counts) >= 1),
    rounds        int NOT NULL CHECK (rounds >= 1),
    time_control  jsonb NOT NULL,
    status        text NOT NULL DEFAULT 'created' CHECK (status IN ('created','planned','cancelled')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN tournaments.time_control IS '{{base_ms, increment_ms, cap_ms, margin_ms}}, milliseconds';

CREATE TABLE tournament_bots (
    tournament_id bigint NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    bot_id        bigint NOT NULL REFERENCES bots(id),
    position      int NOT NULL,
    PRIMARY KEY (tournament_id, bot_id),
    UNIQUE (tournament_id, position)
);

CREATE SEQUENCE match_result_seq AS bigint;

CREATE TABLE matches (
    id              bigserial PRIMARY KEY,
    tournament_id   bigint REFERENCES tournaments(id),
    plan_key        text NOT NULL,
    game            text NOT NULL,
    game_string     text NOT NULL,
    seed            text NOT NULL,
    seed_commitment text NOT NULL,
    time_control    jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'planned'
                    CHECK (status IN ('planned','running','finished','aborted_no_show','failed')),
    attempt         int NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    claimed_by      text,
    lease_until     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    result_seq      bigint UNIQUE,
    CONSTRAINT matches_tournament_plan_key UNIQUE (tournament_id, plan_key),
    CONSTRAINT matches_result_seq_iff_finished CHECK ((status = 'finished') = (result_seq IS NOT NULL))
);
COMMENT ON COLUMN matches.result_seq IS 'order in which results were applied to ratings (rebuilds replay this order)';
COMMENT ON COLUMN matches.seed_commitment IS 'sha256 hex of the seed text (ASCII)';
CREATE UNIQUE INDEX matches_plan_key_without_tournament ON matches (plan_key) WHERE tournament_id IS NULL;
CREATE INDEX matches_game_finished ON matches (game, finished_at DESC);
CREATE INDEX matches_open ON matches (status, lease_until) WHERE status IN ('planned','running');

CREATE TABLE match_attempts (
    match_id   bigint NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    attempt    int NOT NULL CHECK (attempt >= 1),
    status     text NOT NULL CHECK (status IN ('running','finished','infra_error','aborted_no_show')),
    worker     text,
    error      text,
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at   timestamptz,
    PRIMARY KEY (match_id, attempt)
);

CREATE TABLE seats (
    match_id     bigint NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    seat         int NOT NULL CHECK (seat >= 0),
    bot_id       bigint NOT NULL REFERENCES bots(id),
    rank         int CHECK (rank >= 1),
    score        double precision,
    verdict      text CHECK (verdict IN ({VERDICTS})),
    time_used_ms bigint CHECK (time_used_ms >= 0),
    decisions    int CHECK (decisions >= 0),
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, bot_id)
);
CREATE INDEX seats_by_bot ON seats (bot_id, match_id DESC);

CREATE TABLE replays (
    match_id    bigint PRIMARY KEY REFERENCES matches(id) ON DELETE CASCADE,
    format      text NOT NULL,
    compression text NOT NULL DEFAULT 'zstd' CHECK (compression = 'zstd'),
    data        bytea NOT NULL,
    raw_bytes   int NOT NULL CHECK (raw_bytes >= 0),
    stored_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN replays.data IS 'zstd frame of the UTF-8 replay JSON text';

CREATE TABLE ratings (
    bot_id      bigint NOT NULL REFERENCES bots(id),
    game        text NOT NULL,
    elo         double precision NOT NULL,
    games       int NOT NULL DEFAULT 0,
    wins        int NOT NULL DEFAULT 0,
    draws       int NOT NULL DEFAULT 0,
    losses      int NOT NULL DEFAULT 0,
    score_sum   double precision NOT NULL DEFAULT 0,
    last_played timestamptz,
    PRIMARY KEY (bot_id, game)
);
CREATE INDEX ratings_leaderboard ON ratings (game, elo DESC);

CREATE TABLE rating_history (
    match_id   bigint NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    bot_id     bigint NOT NULL REFERENCES bots(id),
    game       text NOT NULL,
    result_seq bigint NOT NULL,
    elo_before double precision NOT NULL,
    elo_after  double precision NOT NULL,
    delta      double precision NOT NULL,
    PRIMARY KEY (match_id, bot_id)
);
CREATE INDEX rating_history_by_bot ON rating_history (bot_id, game, result_seq);
CREATE INDEX rating_history_by_seq ON rating_history (game, result_seq);
"""

DOWNGRADE = """
DROP TABLE rating_history;
DROP TABLE ratings;
DROP TABLE replays;
DROP TABLE seats;
DROP TABLE match_attempts;
DROP TABLE matches;
DROP SEQUENCE match_result_seq;
DROP TABLE tournament_bots;
DROP TABLE tournaments;
DROP TABLE bots;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
