-- Per-step traces, PostgreSQL dialect: the ordered requests of a step (resource
-- and tool requests, which mock answered each, near misses), as JSON text
-- (model/mock.h "trace"). NULL when unknown: every row recorded before this
-- migration, and a step whose runner line had no trace.
-- Statements end with ";" at the end of a line.
ALTER TABLE run_outputs ADD COLUMN trace TEXT;
