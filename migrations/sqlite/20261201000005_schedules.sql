-- Cron schedules (SPEC §8, §9): one row per trigger of a team's current
-- workflow version, and one row per tick handled, written in the
-- transaction that creates the tick's run, so a tick fires once even when
-- two schedulers race or one restarts.

CREATE TABLE IF NOT EXISTS schedules (
    -- sch_ + a hash of the team, the workflow, the expression and the zone.
    schedule_id  TEXT PRIMARY KEY,
    team_id      TEXT NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
    workflow     TEXT NOT NULL,
    cron         TEXT NOT NULL,
    timezone     TEXT NOT NULL,
    -- none | last | all
    catch_up     TEXT NOT NULL,
    -- skip | allow | queue
    overlap      TEXT NOT NULL,
    -- 1 while the trigger is in the workflow's current version.
    active       INTEGER NOT NULL,
    -- The latest tick handled; ticks after it are due.
    last_tick_at INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS schedules_team ON schedules (team_id, workflow);

CREATE TABLE IF NOT EXISTS schedule_ticks (
    schedule_id   TEXT NOT NULL REFERENCES schedules (schedule_id) ON DELETE CASCADE,
    scheduled_for INTEGER NOT NULL,
    -- fired | skipped | missed | queued
    status        TEXT NOT NULL,
    reason        TEXT,
    run_id        TEXT,
    -- When the scheduler handled it, and when its run was created.
    handled_at    INTEGER NOT NULL,
    fired_at      INTEGER,
    PRIMARY KEY (schedule_id, scheduled_for)
);
CREATE INDEX IF NOT EXISTS schedule_ticks_run ON schedule_ticks (run_id);
