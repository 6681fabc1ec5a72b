-- The cache of complete walks (SPEC §5) and run records (SPEC §8, §9).
-- Timestamps are timestamptz, stored at millisecond precision.

CREATE TABLE IF NOT EXISTS cache_entries (
    scope         TEXT        NOT NULL,
    key           TEXT        NOT NULL,
    tool          TEXT        NOT NULL,
    -- The stored payload, zlib-compressed.
    payload       BYTEA       NOT NULL,
    -- Its size uncompressed (checked when it is read back).
    payload_bytes BIGINT      NOT NULL,
    items         BIGINT      NOT NULL,
    -- Its size at rest, i.e. octet_length(payload).
    stored_bytes  BIGINT      NOT NULL,
    cached_at     TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS cache_entries_expires_at ON cache_entries (expires_at);
CREATE INDEX IF NOT EXISTS cache_entries_tool ON cache_entries (tool);

CREATE TABLE IF NOT EXISTS runs (
    run_id       TEXT        PRIMARY KEY,
    workflow     TEXT        NOT NULL,
    source       TEXT        NOT NULL,
    -- running | succeeded | partial | failed | cancelled | interrupted
    status       TEXT        NOT NULL,
    -- JSON text.
    inputs       TEXT        NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ,
    duration_ms  BIGINT      NOT NULL DEFAULT 0,
    -- Who runs it: the host name and process id of the writer.
    host         TEXT        NOT NULL,
    pid          BIGINT      NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS runs_running ON runs (heartbeat_at) WHERE status = 'running';

CREATE TABLE IF NOT EXISTS run_steps (
    run_id      TEXT        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    -- The step's position in the workflow.
    idx         BIGINT      NOT NULL,
    id          TEXT        NOT NULL,
    kind        TEXT        NOT NULL,
    -- pending | running | succeeded | failed | skipped | cancelled | interrupted
    status      TEXT        NOT NULL,
    reason      TEXT,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    duration_ms BIGINT      NOT NULL DEFAULT 0,
    attempts    BIGINT      NOT NULL DEFAULT 0,
    -- JSON text: the step's verdict and its output.
    verdict     TEXT,
    output      TEXT,
    PRIMARY KEY (run_id, idx)
);
