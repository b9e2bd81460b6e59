-- Comparisons with repeats, PostgreSQL dialect (model/stats.h): a comparison
-- runs its scenario "repeats" times per side, each run recording the side
-- it is (comparison_side: 'baseline' | 'candidate') and its repeat index
-- (0..repeats-1); NULL for the runs that are no side of a comparison.
-- run_ids is the JSON text {"baseline":[ids],"candidate":[ids]} in repeat
-- order (NULL for the comparisons before this migration: their one pair
-- is baseline_run_id / candidate_run_id, which stay the first repeat's).
-- stats, pass_k and flaky_steps are the JSON texts of model_stats_compare
-- (NULL before this migration). Columns added to append-only tables are
-- written with their row, never afterwards.
-- Statements end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN comparison_side TEXT;
ALTER TABLE runs ADD COLUMN repeat_index INTEGER;
ALTER TABLE comparison_jobs ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1;
ALTER TABLE comparison_jobs ADD COLUMN run_ids TEXT;
ALTER TABLE comparisons ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1;
ALTER TABLE comparisons ADD COLUMN run_ids TEXT;
ALTER TABLE comparisons ADD COLUMN stats TEXT;
ALTER TABLE comparisons ADD COLUMN pass_k TEXT;
ALTER TABLE comparisons ADD COLUMN flaky_steps TEXT;
