-- Run logs, SQLite dialect: the agent's log of a run (model/runlog.h), what
-- its stdout and stderr said, merged in the order it came, cleaned (valid
-- UTF-8, no control character but newline and tab) and capped at 1 MiB of
-- text. dropped_bytes counts the agent's bytes past the cap, not kept (0:
-- the whole log is here). One row per run that logged anything, written
-- by the executor that holds the run before its end is recorded; a run
-- without a row has an empty log. Read by tenant only. Statements end
-- with ";" at the end of a line.
CREATE TABLE run_logs (
	run_id TEXT NOT NULL PRIMARY KEY REFERENCES runs (id),
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	text TEXT NOT NULL,
	dropped_bytes INTEGER NOT NULL
);
CREATE INDEX run_logs_tenant_run ON run_logs (tenant_id, run_id);
