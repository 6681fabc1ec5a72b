-- What started a run (issue 21): its kind (manual, api, schedule, rerun),
-- the tick a scheduled run was for and when it fired, its schedule, and
-- who started it (a team token's name, never the token). NULL on rows
-- written before this.
ALTER TABLE runs ADD COLUMN trigger_kind TEXT;
ALTER TABLE runs ADD COLUMN trigger_scheduled_for TIMESTAMPTZ;
ALTER TABLE runs ADD COLUMN trigger_fired_at TIMESTAMPTZ;
ALTER TABLE runs ADD COLUMN trigger_schedule_id TEXT;
ALTER TABLE runs ADD COLUMN started_by TEXT;
CREATE INDEX IF NOT EXISTS runs_trigger_kind ON runs (trigger_kind, started_at DESC, run_id DESC);
