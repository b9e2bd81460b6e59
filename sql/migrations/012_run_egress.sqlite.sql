-- Run egress, SQLite dialect: how many requests of a run its gateway
-- forwarded to a host outside the sandbox (controlled egress, [runner]
-- egress_allow). A run with none is hermetic: everything it got came from
-- its mocks. 0 for runs recorded before this migration (they had no
-- gateway, so nothing could leave them).
-- Statements end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN egress_requests INTEGER NOT NULL DEFAULT 0;
