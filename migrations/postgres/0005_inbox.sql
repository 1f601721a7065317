-- Durable inbound. Every message the gateway takes from a channel is
-- written here in the same transaction as the channel's cursor (Telegram
-- offset, Matrix sync token), and marked done in the same transaction as
-- its reply's outbox row: after a crash a message is either answered (its
-- reply queued) or still pending, and pending rows are handled at start.
CREATE TABLE inbox (
    id           BIGSERIAL PRIMARY KEY,
    -- Our own id for the row (the router and transcripts refer to it).
    key          TEXT NOT NULL UNIQUE,
    channel      TEXT NOT NULL,
    chat         TEXT NOT NULL,
    -- The platform's id of the message: a redelivery is a no-op.
    platform_id  TEXT NOT NULL,
    sender       TEXT NOT NULL,
    -- The message as the adapter saw it (JSON).
    body         TEXT NOT NULL,
    -- 'pending' until answered, then 'done'.
    status       TEXT NOT NULL,
    instance_id  TEXT,
    received_at  BIGINT NOT NULL,
    done_at      BIGINT
);
CREATE UNIQUE INDEX inbox_once ON inbox (channel, chat, platform_id);
CREATE INDEX inbox_by_status ON inbox (status, id);
-- Which inbound message a transcript message belongs to (NULL for runs
-- that no message started): tells what an interrupted turn had done.
ALTER TABLE messages ADD COLUMN turn TEXT;
-- Replies wait in the outbox too: the message they answer, and the
-- instance delivering them right now (others leave the row alone until
-- that instance is gone).
ALTER TABLE announce_outbox ADD COLUMN reply_to TEXT;
ALTER TABLE announce_outbox ADD COLUMN instance_id TEXT;
