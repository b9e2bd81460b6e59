-- Approvals and scoped tokens, PostgreSQL dialect.
-- comparison_approvals: an admin's decision on a settled comparison,
-- append-only like the comparison it judges (a later decision is a new
-- row; the newest one counts). api_tokens.scopes narrows a token: a
-- bitmask of read 1, run 2, compare 4, write 8, approve 16, admin 32; 0
-- (every token before this migration) means "what the role allows".
-- Statements end with ";" at the end of a line.
CREATE TABLE comparison_approvals (
	ord BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	comparison_id TEXT NOT NULL,
	decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
	reason TEXT NOT NULL,
	decided_by TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX comparison_approvals_tenant_cmp ON comparison_approvals (tenant_id, comparison_id, ord);
CREATE OR REPLACE FUNCTION comparison_approvals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'approvals are append-only'; END $$;
CREATE TRIGGER comparison_approvals_no_change BEFORE UPDATE OR DELETE ON comparison_approvals FOR EACH ROW EXECUTE FUNCTION comparison_approvals_append_only();
ALTER TABLE api_tokens ADD COLUMN scopes INTEGER NOT NULL DEFAULT 0;
