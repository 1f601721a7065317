-- Several gateways on one database. Each chat platform account (a
-- Telegram bot, a Discord bot, a Matrix account) is run by one live
-- instance at a time, under a lease it renews with its heartbeat; a new
-- owner bumps the generation, and cursor writes carry the generation they
-- were read under, so a paused old owner cannot move a cursor back.
CREATE TABLE channel_leases (
    channel    TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    generation BIGINT NOT NULL,
    renewed_at BIGINT NOT NULL
);
-- A cron slot fires once across the cluster: the first instance to insert
-- its row runs it.
CREATE TABLE cron_slots (
    job         TEXT NOT NULL,
    slot        BIGINT NOT NULL,
    instance_id TEXT NOT NULL,
    fired_at    BIGINT NOT NULL,
    PRIMARY KEY (job, slot)
);
-- `run` or `chat`: a second `run` on one SQLite file is refused.
ALTER TABLE instances ADD COLUMN role TEXT NOT NULL DEFAULT 'run';
-- Who may decide (JSON list), so any instance can check a decision.
ALTER TABLE approvals ADD COLUMN approvers TEXT;
-- Each instance looks for its runs cancelled from another gateway.
CREATE INDEX runs_instance_status ON runs (instance_id, status);
-- Settings every instance follows (`/subagents pause` holds cluster-wide).
CREATE TABLE cluster_flags (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- Messages for a running child on another instance (`/subagents send`);
-- the instance running it moves them into the child's inbox.
CREATE TABLE child_mail (
    id          BIGSERIAL PRIMARY KEY,
    instance_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
