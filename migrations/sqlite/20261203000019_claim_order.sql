-- The next run to claim (SPEC §9) is the oldest run nobody holds. Picking
-- it in `started_at` order used to walk the index of every run ever
-- started, the ended ones included, on every claim: with thousands of
-- ended runs a claim took milliseconds, more as the history grew, and the
-- claim passes (one claim after another) fell behind a backlog. This index
-- holds only the runs that can be claimed (queued or running, of a team),
-- in the order they are claimed; the claim statement names the same
-- conditions, so both backends use it.
CREATE INDEX IF NOT EXISTS runs_claim_order ON runs (started_at, run_id)
    WHERE status IN ('queued', 'running') AND team_id IS NOT NULL;
