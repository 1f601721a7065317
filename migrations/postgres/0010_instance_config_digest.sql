-- Which configuration file each gateway runs (a digest of its bytes, set
-- at start and by every reload), shown by `switchboard status`.
ALTER TABLE instances ADD COLUMN config_digest TEXT NOT NULL DEFAULT '';
