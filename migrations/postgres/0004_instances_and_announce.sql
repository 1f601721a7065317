-- Which process runs what. Each `run` or `chat` process registers an
-- instance with a heartbeat; at start, and while it runs, a process
-- reclaims only the runs and approvals of instances that are gone (stale
-- heartbeat, or a process that no longer exists on the same host), so a
-- second process on the same database leaves the first one's work alone.
CREATE TABLE instances (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          BIGINT NOT NULL,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);
ALTER TABLE runs ADD COLUMN instance_id TEXT;
ALTER TABLE approvals ADD COLUMN instance_id TEXT;
-- 'pending' while a run's end still has to be announced, 'done' once the
-- announcement is queued (or skipped on purpose): a crash in between is
-- found at the next start and announced then.
ALTER TABLE runs ADD COLUMN announce TEXT;
-- Background tasks running when this migration ran are announced when
-- they end or are found lost, as they were before this column existed.
UPDATE runs SET announce = 'pending' WHERE status = 'running' AND label = 'background';
CREATE INDEX runs_to_announce ON runs (announce);
