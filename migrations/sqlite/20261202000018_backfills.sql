-- Backfills (issue 25 §2): the runs of every tick of a workflow's
-- schedules in a window, started at most `concurrency` at a time, in
-- `idx` order (oldest or newest first), listed, followed and cancelled as
-- a whole. status: running | succeeded | partial | failed | cancelled.
-- `turn_until` is set by the pass advancing it and cleared after: while
-- it is in the future no other process advances it, so two never start
-- its ticks at once (a pass that died frees it when the time passes).
CREATE TABLE IF NOT EXISTS backfills (
    backfill_id  TEXT PRIMARY KEY,
    team_id      TEXT NOT NULL,
    workflow     TEXT NOT NULL,
    window_from  INTEGER NOT NULL,
    window_to    INTEGER NOT NULL,
    newest_first INTEGER NOT NULL,
    concurrency  INTEGER NOT NULL,
    rerun        INTEGER NOT NULL,
    status       TEXT NOT NULL,
    created_by   TEXT,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    turn_until   INTEGER
);
CREATE INDEX IF NOT EXISTS backfills_team ON backfills (team_id, created_at DESC);
-- One row per tick: pending until its run is started (`started`, with the
-- run), `skipped` (a complete run of the tick exists; with the reason) or
-- `cancelled` (the backfill was cancelled before it started).
CREATE TABLE IF NOT EXISTS backfill_ticks (
    backfill_id   TEXT NOT NULL REFERENCES backfills (backfill_id) ON DELETE CASCADE,
    idx           INTEGER NOT NULL,
    scheduled_for INTEGER NOT NULL,
    schedule_id   TEXT NOT NULL,
    state         TEXT NOT NULL,
    run_id        TEXT,
    reason        TEXT,
    PRIMARY KEY (backfill_id, idx)
);
