-- The person whose message started the tree a run belongs to: `/subagents
-- kill` on someone else's run needs an approver.
ALTER TABLE runs ADD COLUMN requester TEXT;
CREATE INDEX runs_by_origin ON runs (origin_channel, origin_chat);
