-- Runs at scale (SPEC §9, issue 11): the lease a process holds on a run it
-- executes, and the attempt counter incremented at every claim. The
-- counter is the fencing token: a process whose lease was taken over holds
-- an older attempt, and writes conditioned on its attempt change nothing.
-- Leases expire by the database clock only (milliseconds since the epoch).

ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
-- Who holds the lease (host, pid and a random tag), NULL when nobody does.
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at INTEGER;
CREATE INDEX IF NOT EXISTS runs_claimable ON runs (status, lease_expires_at);
