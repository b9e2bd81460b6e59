-- Approvals and scoped tokens, SQLite dialect.
-- comparison_approvals: an admin's decision on a settled comparison,
-- append-only like the comparison it judges (a later decision is a new
-- row; the newest one counts). api_tokens.scopes narrows a token: a
-- bitmask of read 1, run 2, compare 4, write 8, approve 16, admin 32; 0
-- (every token before this migration) means "what the role allows".
-- Statements end with ";" at the end of a line.
CREATE TABLE comparison_approvals (
	ord INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	comparison_id TEXT NOT NULL,
	decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
	reason TEXT NOT NULL,
	decided_by TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX comparison_approvals_tenant_cmp ON comparison_approvals (tenant_id, comparison_id, ord);
CREATE TRIGGER comparison_approvals_no_update BEFORE UPDATE ON comparison_approvals BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
CREATE TRIGGER comparison_approvals_no_delete BEFORE DELETE ON comparison_approvals BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
ALTER TABLE api_tokens ADD COLUMN scopes INTEGER NOT NULL DEFAULT 0;
