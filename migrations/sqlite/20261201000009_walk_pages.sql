-- The page journal of server runs (SPEC §9, issue 11): every page a tool
-- step of a leased run fetched, LZ4-compressed, under the key of the
-- request that fetched it. A run taken over reads them back instead of
-- asking the upstream again. Written only by the attempt holding the run;
-- deleted when the run ends.

CREATE TABLE IF NOT EXISTS walk_pages (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    request_key TEXT NOT NULL,
    status INTEGER NOT NULL,
    body_packed BLOB NOT NULL,
    body_bytes INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    PRIMARY KEY (run_id, scope, request_key)
);
