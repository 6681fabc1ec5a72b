-- A schedule paused (issue 25 §3): when, why, and by whom (a team token's
-- name, never the token). NULL while it runs. A tick handled on resume for
-- the time it was paused is `paused`. `resumed_at`: the latest resume
-- (runs before it do not count towards `pause_after`, the trigger's limits
-- of consecutive failed and partial runs, NULL when it has none).
ALTER TABLE schedules ADD COLUMN paused_at TIMESTAMPTZ;
ALTER TABLE schedules ADD COLUMN paused_reason TEXT;
ALTER TABLE schedules ADD COLUMN paused_by TEXT;
ALTER TABLE schedules ADD COLUMN resumed_at TIMESTAMPTZ;
ALTER TABLE schedules ADD COLUMN pause_after_failed BIGINT;
ALTER TABLE schedules ADD COLUMN pause_after_partial BIGINT;
