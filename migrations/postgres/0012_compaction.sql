-- Compaction (docs/conversations.md): the oldest part of a conversation is
-- replaced, for the model, by a summary kept in the transcript as a
-- `summary` message. `summary_id` is that message; messages up to
-- `compacted_upto` are what it replaces (they stay stored).
ALTER TABLE sessions ADD COLUMN summary_id BIGINT;
ALTER TABLE sessions ADD COLUMN compacted_upto BIGINT;
