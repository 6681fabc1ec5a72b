-- Cancelling a run another process executes (SPEC §9): the API sets the
-- flag; the process holding the run's lease reads it with its next
-- heartbeat's renewal and cancels the run there.
ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
