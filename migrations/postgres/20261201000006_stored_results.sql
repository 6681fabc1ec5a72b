-- Stored results of agent calls (SPEC §4): the whole text and the items of
-- a call, kept 15 minutes under an opaque id for the organisation and the
-- thread that made it. Both are LZ4 blocks; their lengths before are kept
-- beside them and checked when read.

CREATE TABLE IF NOT EXISTS stored_results (
    result_id     TEXT PRIMARY KEY,
    org           TEXT NOT NULL,
    thread        TEXT NOT NULL,
    text_packed   BYTEA NOT NULL,
    text_bytes    BIGINT NOT NULL,
    -- The payload in the cache's layout (items with their offsets).
    items_packed  BYTEA NOT NULL,
    items_bytes   BIGINT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS stored_results_expires_at ON stored_results (expires_at);
