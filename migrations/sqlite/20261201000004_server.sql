-- The server (SPEC §8, issue 9): teams and their API tokens (only a hash
-- of each token is kept), workflows submitted over HTTP with every version
-- of their text, each run's owner and version, the events a run's stream
-- replays, and idempotency keys of run requests.

CREATE TABLE IF NOT EXISTS teams (
    team_id    TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS api_tokens (
    token_id   TEXT PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is shown once and never stored.
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE TABLE IF NOT EXISTS workflows (
    team_id         TEXT NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    current_version INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- Set by DELETE: the workflow is gone from listings, its versions and
    -- runs are kept, and a later PUT brings it back as a new version.
    deleted_at      INTEGER,
    PRIMARY KEY (team_id, name)
);

CREATE TABLE IF NOT EXISTS workflow_versions (
    team_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    version      INTEGER NOT NULL,
    -- SHA-256 of the text and the uploaded documents: unchanged content is
    -- not a new version.
    content_hash TEXT NOT NULL,
    -- The file name diagnostics and runs show.
    file_name    TEXT NOT NULL,
    source       TEXT NOT NULL,
    -- JSON object: path → text of documents uploaded with it.
    documents    TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (team_id, name, version),
    FOREIGN KEY (team_id, name) REFERENCES workflows (team_id, name) ON DELETE CASCADE
);

ALTER TABLE runs ADD COLUMN team_id TEXT;
ALTER TABLE runs ADD COLUMN workflow_version INTEGER;
CREATE INDEX IF NOT EXISTS runs_team_started ON runs (team_id, started_at DESC, run_id DESC);

CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    -- 1, 2, 3… in the order the run emitted them; the SSE event id.
    seq    INTEGER NOT NULL,
    event  TEXT NOT NULL,
    -- JSON text.
    data   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE IF NOT EXISTS idempotency_keys (
    team_id    TEXT NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    -- SHA-256 of the workflow name and the request body.
    body_hash  TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, key)
);
