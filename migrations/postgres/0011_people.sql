-- People let in by pairing code (docs/routes.md, "Pairing"): one row per
-- request; a person may talk to an agent on a channel while a row of
-- theirs for both says `paired`. Kept in the control plane so every gateway of a
-- cluster admits them at once.
CREATE TABLE pairings (
    id             TEXT PRIMARY KEY,
    channel        TEXT NOT NULL,
    agent          TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    display_name   TEXT NOT NULL,
    chat           TEXT NOT NULL,
    code           TEXT NOT NULL,
    approvers      TEXT NOT NULL,
    status         TEXT NOT NULL,
    requested_at   BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    decided_by     TEXT,
    decided_from   TEXT,
    decided_at     BIGINT,
    prompt_channel TEXT,
    prompt_chat    TEXT,
    prompt_message TEXT
);
CREATE INDEX pairings_person ON pairings (channel, user_id, agent);
CREATE INDEX pairings_status ON pairings (status, channel);
-- Two-person approvals (docs/approvals.md): how many different people
-- must allow a request, and each person's allow, once per person.
ALTER TABLE approvals ADD COLUMN approvals_required BIGINT NOT NULL DEFAULT 1;
ALTER TABLE approvals ADD COLUMN allows BIGINT NOT NULL DEFAULT 0;
CREATE TABLE approval_votes (
    approval_id TEXT NOT NULL,
    person      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    choice      TEXT NOT NULL,
    voted_from  TEXT NOT NULL,
    voted_at    BIGINT NOT NULL,
    PRIMARY KEY (approval_id, person)
);
