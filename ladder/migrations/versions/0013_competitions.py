"""Competitions: a season of rated matches until a deadline, then a final evaluation (docs/competitions.md).

Revision ID: 0013
Revises: 0011
Create Date: 2026-12-09

* ``competitions``: the game and its player counts, the time control, the schedule
  (``opens_at`` < ``deadline_at`` <= ``final_at``), the entry mode (``hosted``: hosted bots
  only; ``any``: connected bots too), the per-account limits (entrant bots, new hosted
  versions a day), the Markdown description and rules of conduct (raw text), the organiser
  (an account), the final evaluation's match budget and most batches, and ``locked_at``
  (when the entrants' versions were locked, after the deadline). The status is not stored:
  it follows from the clock and the evaluations (``ladder.competitions.competition_status``).
* ``competition_entrants``: one row per bot entered, with the account that entered it, the
  version locked at the deadline (``locked_version_id``, a hosted version, and
  ``locked_version``, the label its seats record) and a disqualification (when, why, by whom).
* ``matches.competition_id``: the competition a match was planned for (season rounds and
  final batches; their plan keys start ``competition:<id>:``), indexed.
* ``competition_evaluations``: each run of the final evaluation (a re-run is a new row; the
  one before it becomes ``superseded``): seed, parameters, the estimate made before it
  started, progress (batches, matches, pairs still overlapping) and why it stopped.
* ``competition_final_rows``: the frozen table of a finished evaluation: place (a shared
  place is a range), rating, interval, evidence against the next place (``z_next``), matches;
  disqualified entrants and bots retired before the
  evaluation (``withdrawn``) stay, without a place.
* ``competition_events``: what the organiser did (extensions, disqualifications, re-runs).
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE competitions (
    id                      bigserial PRIMARY KEY,
    name                    text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    game                    text NOT NULL,
    game_options            jsonb NOT NULL DEFAULT '{}'::jsonb,
    player_counts           int[] NOT NULL CHECK (cardinality(player_counts) >= 1),
    time_control            jsonb NOT NULL,
    opens_at                timestamptz NOT NULL,
    deadline_at             timestamptz NOT NULL,
    final_at                timestamptz NOT NULL,
    entry_mode              text NOT NULL CHECK (entry_mode IN ('hosted', 'any')),
    max_entrants_per_account int NOT NULL CHECK (max_entrants_per_account >= 1),
    max_versions_per_day    int NOT NULL CHECK (max_versions_per_day >= 1),
    description             text NOT NULL DEFAULT '',
    rules                   text NOT NULL DEFAULT '',
    organiser_id            bigint NOT NULL REFERENCES accounts(id),
    final_budget            int NOT NULL CHECK (final_budget >= 1),
    final_max_batches       int NOT NULL CHECK (final_max_batches >= 1),
    locked_at               timestamptz,
    created_at              timestamptz NOT NULL DEFAULT now(),
    CHECK (opens_at < deadline_at AND deadline_at <= final_at)
);
COMMENT ON TABLE competitions IS 'a season until deadline_at, then a final evaluation (docs/competitions.md)';

CREATE TABLE competition_entrants (
    competition_id      bigint NOT NULL REFERENCES competitions(id) ON DELETE CASCADE,
    bot_id              bigint NOT NULL REFERENCES bots(id),
    account_id          bigint NOT NULL REFERENCES accounts(id),
    entered_at          timestamptz NOT NULL,
    locked_version_id   bigint REFERENCES hosted_versions(id),
    locked_version      text,
    disqualified_at     timestamptz,
    disqualified_reason text,
    disqualified_by     bigint REFERENCES accounts(id),
    PRIMARY KEY (competition_id, bot_id)
);
CREATE INDEX competition_entrants_by_account ON competition_entrants (account_id, competition_id);
CREATE INDEX competition_entrants_by_bot ON competition_entrants (bot_id);

ALTER TABLE matches ADD COLUMN competition_id bigint REFERENCES competitions(id);
CREATE INDEX matches_by_competition ON matches (competition_id, id) WHERE competition_id IS NOT NULL;
COMMENT ON COLUMN matches.competition_id IS 'the competition that planned this match (season or final evaluation)';

CREATE TABLE competition_evaluations (
    id              bigserial PRIMARY KEY,
    competition_id  bigint NOT NULL REFERENCES competitions(id) ON DELETE CASCADE,
    run             int NOT NULL CHECK (run >= 1),
    seed            text NOT NULL CHECK (seed ~ '^[0-9a-f]{64}$'),
    params          jsonb NOT NULL,
    estimate        jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'superseded')),
    batches         int NOT NULL DEFAULT 0,
    matches_planned int NOT NULL DEFAULT 0,
    matches_played  int NOT NULL DEFAULT 0,
    overlapping     int,
    progress        jsonb NOT NULL DEFAULT '[]'::jsonb,
    stop_reason     text,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    recomputed_at   timestamptz,
    recomputed_reason text,
    UNIQUE (competition_id, run)
);
CREATE UNIQUE INDEX competition_evaluations_one_live ON competition_evaluations (competition_id)
    WHERE status <> 'superseded';

CREATE TABLE competition_final_rows (
    evaluation_id   bigint NOT NULL REFERENCES competition_evaluations(id) ON DELETE CASCADE,
    bot_id          bigint NOT NULL REFERENCES bots(id),
    place_low       int,
    place_high      int,
    rating          double precision,
    rating_low      double precision,
    rating_high     double precision,
    z_next          double precision,
    matches         int NOT NULL,
    standing        text NOT NULL CHECK (standing IN ('placed', 'disqualified', 'withdrawn')),
    PRIMARY KEY (evaluation_id, bot_id),
    CHECK ((place_low IS NULL) = (standing <> 'placed') AND (place_high IS NULL) = (place_low IS NULL)
           AND (place_low IS NULL OR place_low <= place_high))
);

CREATE TABLE competition_events (
    id              bigserial PRIMARY KEY,
    competition_id  bigint NOT NULL REFERENCES competitions(id) ON DELETE CASCADE,
    at              timestamptz NOT NULL,
    actor_id        bigint REFERENCES accounts(id),
    kind            text NOT NULL,
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX competition_events_by_competition ON competition_events (competition_id, id);
"""

DOWNGRADE = """
DROP TABLE competition_events;
DROP TABLE competition_final_rows;
DROP TABLE competition_evaluations;
DROP INDEX matches_by_competition;
ALTER TABLE matches DROP COLUMN competition_id;
DROP TABLE competition_entrants;
DROP TABLE competitions;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
