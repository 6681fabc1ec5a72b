-- A cache entry's payload moves to a row of its own, so that a run's step
-- served from the cache can point at the payload it was served from
-- rather than store a second copy of the same rows (about 7 ms of a
-- 30 ms cached `dragnet run` on PostgreSQL: compressing the copy again
-- and writing it). A payload row goes once neither a cache entry nor a
-- step points at it (the sweep, and a put replacing its entry); the
-- foreign keys make a step's pointer and that deletion exclusive.
CREATE TABLE IF NOT EXISTS cache_payloads (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    -- 'lz4' (see cache_entries.codec).
    codec         TEXT      NOT NULL,
    payload       BLOB      NOT NULL,
    -- Its size uncompressed (checked when it is read back).
    payload_bytes INTEGER   NOT NULL
);

-- Set on rows written from now on; their own `payload` is then empty.
ALTER TABLE cache_entries ADD COLUMN payload_id INTEGER REFERENCES cache_payloads (id);
CREATE INDEX IF NOT EXISTS cache_entries_payload ON cache_entries (payload_id);

-- A step served from the cache: the payload it was served from and its
-- `_loop` object's text; its output is that payload written with it.
ALTER TABLE run_steps ADD COLUMN output_payload INTEGER REFERENCES cache_payloads (id);
ALTER TABLE run_steps ADD COLUMN output_loop TEXT;
CREATE INDEX IF NOT EXISTS run_steps_output_payload ON run_steps (output_payload)
    WHERE output_payload IS NOT NULL;
