-- Shutdown note, SQLite dialect: the shutdown note of a run (model/runspec.h
-- "shutdown"): NULL unless every step completed and the agent then had to
-- be killed, because it did not exit by itself within its grace after the
-- end of its input (or before the wall-clock limit, when that came first).
-- A note beside status and reason, never in them: the run stays completed
-- and reason keeps its meaning (why it failed or is not scored). Statements
-- end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN shutdown TEXT;
