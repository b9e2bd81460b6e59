-- Run agent, PostgreSQL dialect: which agent program a run ran. agent_name is
-- the program's name in the agents directory (the variant), or a built-in
-- name ("builtin:mock-agent" on the OS-level backends, "builtin:inproc-mock"
-- on inproc-mock), recorded when the run is asked for. agent_sha256 is the
-- SHA-256 of the program file, computed by the executor just before it
-- hands the run to the runner: NULL for a built-in agent, for a run that
-- never reached an executor, and for runs recorded before this migration.
-- mocks_digest is the SHA-256 of the mocks the run's variant sees, so two
-- runs can be told to have run the same program on the same mocks.
-- Statements end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN agent_name TEXT;
ALTER TABLE runs ADD COLUMN agent_sha256 TEXT;
ALTER TABLE runs ADD COLUMN mocks_digest TEXT;
