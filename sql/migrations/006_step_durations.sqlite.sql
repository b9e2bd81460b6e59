-- Per-step durations, SQLite dialect: how long each step of a run took,
-- as the runner measured it (model/runspec.h "duration_us": wall time on
-- CLOCK_MONOTONIC, integer microseconds). NULL when unknown: every row
-- recorded before this migration, and a step whose runner line had no
-- usable duration (the dispatcher then records none). The API shows it as
-- duration_ms.
-- Statements end with ";" at the end of a line.
ALTER TABLE run_outputs ADD COLUMN duration_us INTEGER CHECK (duration_us IS NULL OR duration_us >= 0);
