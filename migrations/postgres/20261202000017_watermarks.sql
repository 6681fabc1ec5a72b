-- Watermarks of incremental walks (issue 25 §1): per team (the empty
-- string in a local store), workflow and step, the highest value of the
-- step's field a complete walk read (JSON, in the form the API wrote it),
-- the scale it compares on (time | number), the keys of the rows read at
-- that value (JSON list, for dedupe_by; NULL when none are kept), and the
-- run that moved it there.
CREATE TABLE IF NOT EXISTS watermarks (
    team_id    TEXT NOT NULL,
    workflow   TEXT NOT NULL,
    step       TEXT NOT NULL,
    value      TEXT NOT NULL,
    scale      TEXT NOT NULL,
    row_keys   TEXT,
    run_id     TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (team_id, workflow, step)
);
