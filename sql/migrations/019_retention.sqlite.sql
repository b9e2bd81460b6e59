-- Retention, SQLite dialect (sql/retention.c, docs/operations.md
-- "Retention"): the purge of a tenant's old runs asks, for each run it
-- would delete, whether a comparison or a comparison job names it, and
-- deleting a run makes the database check the same foreign keys. These
-- indexes keep both lookups from reading every comparison of the tenant
-- for every run. No data changes. Statements end with ";" at the end of
-- a line.
CREATE INDEX comparisons_baseline_run ON comparisons (baseline_run_id);
CREATE INDEX comparisons_candidate_run ON comparisons (candidate_run_id);
CREATE INDEX comparison_jobs_baseline_run ON comparison_jobs (baseline_run_id);
CREATE INDEX comparison_jobs_candidate_run ON comparison_jobs (candidate_run_id);
