-- The outbox carries chat replies as well as run announcements: named for
-- what it is. (`run_id` keeps its name: it is the row's delivery key, a
-- run id for announcements and `reply:<inbox key>` for replies.)
ALTER TABLE announce_outbox RENAME TO outbox;
