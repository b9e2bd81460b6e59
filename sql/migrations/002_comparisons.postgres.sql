-- Scoring, PostgreSQL dialect: scoring details of a run and the append-only
-- comparisons (model/verdict.h). Conventions as in 001_init: ids and
-- timestamps from the application, booleans SMALLINT 0/1, "ord" for
-- newest-first listing. Statements end with ";" at the end of a line.

-- details of struct model_score_result (JSON array text) or NULL
ALTER TABLE runs ADD COLUMN score_details TEXT;

-- One pre/post-deployment comparison. Both runs are rows of "runs" (kind
-- "comparison"), recorded in the same transaction. scenario_id has no
-- foreign key on purpose: deleting a scenario keeps its evidence.
-- baseline_score / candidate_score are NULL for a side that was not scored;
-- delta is NULL unless both sides completed and were scored;
-- differing_steps is a JSON array text [{"seq","key","baseline_output",
-- "candidate_output"}].
CREATE TABLE comparisons (
	ord BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	scenario_id TEXT NOT NULL,
	scenario_version INTEGER NOT NULL,
	suite TEXT NOT NULL,
	tolerance DOUBLE PRECISION NOT NULL CHECK (tolerance >= 0 AND tolerance <= 1),
	baseline_variant TEXT,
	baseline_run_id TEXT NOT NULL REFERENCES runs (id),
	baseline_score DOUBLE PRECISION,
	candidate_variant TEXT,
	candidate_run_id TEXT NOT NULL REFERENCES runs (id),
	candidate_score DOUBLE PRECISION,
	delta DOUBLE PRECISION,
	verdict TEXT NOT NULL CHECK (verdict IN ('improved', 'regressed', 'unchanged', 'inconclusive')),
	reason TEXT,
	differing_steps TEXT NOT NULL,
	decided_by TEXT,
	created_at TEXT NOT NULL
);
CREATE INDEX comparisons_tenant_ord ON comparisons (tenant_id, ord);
CREATE INDEX comparisons_tenant_scenario_ord ON comparisons (tenant_id, scenario_id, ord);

-- Append-only in the database too: no route and no store function changes
-- a comparison, and this makes any other writer fail as well.
CREATE OR REPLACE FUNCTION comparisons_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'comparisons are append-only'; END $$;
CREATE TRIGGER comparisons_no_change BEFORE UPDATE OR DELETE ON comparisons FOR EACH ROW EXECUTE FUNCTION comparisons_append_only();
