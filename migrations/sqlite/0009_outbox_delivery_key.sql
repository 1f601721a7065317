-- The outbox's key column was still called `run_id` although it holds any
-- delivery key: a run id for announcements, `reply:<inbox key>` for
-- replies. Named for what it holds (its UNIQUE constraint follows it).
ALTER TABLE outbox RENAME COLUMN run_id TO delivery_key;
