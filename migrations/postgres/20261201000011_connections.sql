-- Connected apps (SPEC §7, issue 12): a caller's own credentials for an
-- `app` provider, sealed (AES-256-GCM, the owner and provider bound in),
-- one row per organisation, owner (`user:…` or `tenant:…`) and provider.
CREATE TABLE IF NOT EXISTS connections (
    org TEXT NOT NULL,
    owner TEXT NOT NULL,
    provider TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    PRIMARY KEY (org, owner, provider)
);
