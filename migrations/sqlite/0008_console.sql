-- Operator console sign-in. A one-time link (sent by `/console` in a direct
-- chat) is kept only as the SHA-256 of its token; opening it once turns it
-- into a browser session, also kept hashed, with its CSRF token. Both live
-- in the control plane so any gateway of a cluster can serve the console.
CREATE TABLE console_links (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE TABLE console_sessions (
    id_hash    TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    csrf       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
-- Spend per model provider and day, beside the per-agent ledger, so the
-- console can show both.
CREATE TABLE provider_cost (
    provider    TEXT NOT NULL,
    day         TEXT NOT NULL,
    calls       BIGINT NOT NULL DEFAULT 0,
    tokens_in   BIGINT NOT NULL DEFAULT 0,
    tokens_out  BIGINT NOT NULL DEFAULT 0,
    cost_micros BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (provider, day)
);
-- Who started the work that asks, for the console's pending list.
ALTER TABLE approvals ADD COLUMN requested_by TEXT;
