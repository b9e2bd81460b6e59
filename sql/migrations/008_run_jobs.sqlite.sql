-- Runs as jobs, SQLite dialect: a run is recorded "queued" when it is asked
-- for, claimed by an executor ("running"), heartbeated while its steps are
-- appended, then ended (completed, failed, cancelled; a degraded replay is
-- still recorded whole). Conventions as in 001_init: ids and timestamps
-- from the application, booleans SMALLINT 0/1, "ord" for order.
--
-- runner, output_digest, started_at and finished_at stay NOT NULL: SQLite
-- cannot drop a NOT NULL without rebuilding "runs", which run_outputs and
-- comparisons reference. A run stores '' there while the value is not
-- known yet (both dialects alike, so the same SQL runs on both), and the
-- run object reads '' back as JSON null.
--
-- queued_at: when it was asked for (for runs recorded before this
-- migration, and for runs still recorded whole, its started_at).
-- steps_done: outputs stored so far (backfilled from the stored outputs).
-- executor, heartbeat_at: the executor holding it and its last heartbeat
-- (NULL until claimed). cancel_requested: 1 once a cancel of a running run
-- was asked for (its executor ends it). job: the executor's input (compact
-- JSON text), set back to NULL when the run ends. comparison_id: the
-- comparison the run is one side of, when it was queued as one.
-- Statements end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN queued_at TEXT;
UPDATE runs SET queued_at = started_at;
ALTER TABLE runs ADD COLUMN steps_done INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET steps_done = (SELECT COUNT(*) FROM run_outputs o WHERE o.run_id = runs.id);
ALTER TABLE runs ADD COLUMN executor TEXT;
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN job TEXT;
ALTER TABLE runs ADD COLUMN comparison_id TEXT;

-- A claim takes the oldest queued run of one tenant (ORDER BY ord LIMIT 1
-- over tenant_id, status), and a tenant's active count is a range of the
-- same index; the sweep and the executors' running counts read the
-- running runs by heartbeat.
CREATE INDEX runs_tenant_status_ord ON runs (tenant_id, status, ord);
CREATE INDEX runs_status_heartbeat ON runs (status, heartbeat_at);

-- A comparison asked for: its two runs are queued with it, and its
-- "comparisons" row (same id) is written when both have ended. Append-only
-- like "comparisons".
CREATE TABLE comparison_jobs (
	ord INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	scenario_id TEXT NOT NULL,
	scenario_version INTEGER NOT NULL,
	suite TEXT NOT NULL,
	tolerance REAL NOT NULL CHECK (tolerance >= 0 AND tolerance <= 1),
	baseline_run_id TEXT NOT NULL REFERENCES runs (id),
	candidate_run_id TEXT NOT NULL REFERENCES runs (id),
	created_by TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX comparison_jobs_tenant_ord ON comparison_jobs (tenant_id, ord);
CREATE TRIGGER comparison_jobs_no_update BEFORE UPDATE ON comparison_jobs BEGIN SELECT RAISE(ABORT, 'comparison jobs are append-only'); END;
CREATE TRIGGER comparison_jobs_no_delete BEFORE DELETE ON comparison_jobs BEGIN SELECT RAISE(ABORT, 'comparison jobs are append-only'); END;

-- The executors (the operator's, not tenant data): backends is the comma
-- list of the backends that passed preflight on its host, preflight the
-- JSON text of its preflight answers; stopped_at is set by a clean stop.
CREATE TABLE executors (
	id TEXT PRIMARY KEY,
	host TEXT NOT NULL,
	pid INTEGER NOT NULL,
	slots INTEGER NOT NULL CHECK (slots >= 1),
	backends TEXT NOT NULL,
	preflight TEXT,
	started_at TEXT NOT NULL,
	heartbeat_at TEXT NOT NULL,
	stopped_at TEXT
);
