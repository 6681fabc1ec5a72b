-- Team secrets (issue 21): the values a team's workflows name as
-- credentials on a server, sealed (AES-256-GCM under DRAGNET_SECRETS_KEY,
-- the team and name bound in), one row per team and name. Values are
-- never stored in the clear.
CREATE TABLE IF NOT EXISTS team_secrets (
    team_id    TEXT NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    sealed     BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, name)
);
