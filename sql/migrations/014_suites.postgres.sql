-- Suites in the store, PostgreSQL dialect: a tenant's scoring suites (the
-- document of model/suite.h), versioned by name. An update inserts the
-- next version; the old versions stay, so a run pinned to one is scored
-- against what it named. runs.suite_version is the version a run was
-- pinned to when it was queued; NULL for a suite scored by an adapter
-- (builtin:<dir>, exec:) and for the runs before this migration.
-- Statements end with ";" at the end of a line.
CREATE TABLE suites (
	ord BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	name TEXT NOT NULL,
	version INTEGER NOT NULL,
	document TEXT NOT NULL,
	created_by TEXT,
	created_at TEXT NOT NULL,
	UNIQUE (tenant_id, name, version)
);
ALTER TABLE runs ADD COLUMN suite_version INTEGER;
