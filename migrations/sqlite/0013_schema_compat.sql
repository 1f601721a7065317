-- Rolling upgrades (docs/operations.md, "Upgrades"). Which build migrated
-- the database to each schema, and the oldest schema a build must know to
-- work with it; each instance's build and schema (shown by `switchboard
-- status`); and, per inbox row, the oldest schema that can read it (a row
-- of a kind older builds do not know is left for a newer one).
CREATE TABLE schema_compat (
    schema_version BIGINT PRIMARY KEY,
    needs_schema BIGINT NOT NULL,
    written_by TEXT NOT NULL
);
ALTER TABLE instances ADD COLUMN version TEXT NOT NULL DEFAULT '';
ALTER TABLE instances ADD COLUMN schema_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inbox ADD COLUMN needs_schema BIGINT NOT NULL DEFAULT 0;
