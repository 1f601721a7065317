-- Switchboard control plane (SQLite). Keep in step with migrations/postgres.
-- Times are Unix milliseconds.

CREATE TABLE sessions (
    key           TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    channel       TEXT,
    chat          TEXT,
    thread        TEXT,
    model_override TEXT,
    history_from  BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key  TEXT NOT NULL,
    role         TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX messages_by_session ON messages (session_key, id);

CREATE TABLE runs (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    parent_id      TEXT,
    root_id        TEXT NOT NULL,
    owner_chain    TEXT NOT NULL,
    depth          BIGINT NOT NULL,
    agent          TEXT NOT NULL,
    session_key    TEXT NOT NULL,
    requester_session TEXT,
    origin_channel TEXT,
    origin_chat    TEXT,
    origin_thread  TEXT,
    label          TEXT,
    task           TEXT,
    model          TEXT,
    status         TEXT NOT NULL,
    cleanup        TEXT NOT NULL DEFAULT 'keep',
    heartbeat_at   BIGINT,
    progress       TEXT,
    created_at     BIGINT NOT NULL,
    started_at     BIGINT,
    ended_at       BIGINT,
    tokens_in      BIGINT NOT NULL DEFAULT 0,
    tokens_out     BIGINT NOT NULL DEFAULT 0,
    cost_micros    BIGINT NOT NULL DEFAULT 0,
    output         TEXT,
    error          TEXT,
    archived_at    BIGINT
);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_parent ON runs (parent_id);

CREATE TABLE announce_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          TEXT NOT NULL UNIQUE,
    channel         TEXT NOT NULL,
    chat            TEXT NOT NULL,
    thread          TEXT,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error      TEXT,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT
);
CREATE INDEX outbox_pending ON announce_outbox (status, next_attempt_at);

CREATE TABLE approvals (
    id             TEXT PRIMARY KEY,
    run_id         TEXT,
    agent          TEXT NOT NULL,
    caller_chain   TEXT NOT NULL,
    tool           TEXT NOT NULL,
    summary        TEXT NOT NULL,
    risk           TEXT NOT NULL,
    channel        TEXT,
    chat           TEXT,
    thread         TEXT,
    prompt_message TEXT,
    status         TEXT NOT NULL,
    deadline_at    BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    decided_at     BIGINT,
    decided_by     TEXT,
    decided_from   TEXT,
    reason         TEXT
);
CREATE INDEX approvals_by_status ON approvals (status);

CREATE TABLE memories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent       TEXT NOT NULL,
    key         TEXT NOT NULL,
    content     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (agent, key)
);

CREATE TABLE cost_ledger (
    agent       TEXT NOT NULL,
    day         TEXT NOT NULL,
    calls       BIGINT NOT NULL DEFAULT 0,
    tokens_in   BIGINT NOT NULL DEFAULT 0,
    tokens_out  BIGINT NOT NULL DEFAULT 0,
    cost_micros BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent, day)
);

CREATE TABLE channel_cursors (
    channel     TEXT PRIMARY KEY,
    cursor      TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);
