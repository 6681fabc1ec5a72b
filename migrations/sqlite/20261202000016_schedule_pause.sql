-- A schedule paused (issue 25 §3): when (milliseconds since the epoch),
-- why, and by whom (a team token's name, never the token). NULL while it
-- runs. A tick handled on resume for the time it was paused is `paused`.
ALTER TABLE schedules ADD COLUMN paused_at INTEGER;
ALTER TABLE schedules ADD COLUMN paused_reason TEXT;
ALTER TABLE schedules ADD COLUMN paused_by TEXT;
