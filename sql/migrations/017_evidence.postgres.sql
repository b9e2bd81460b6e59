-- Evidence chain, PostgreSQL dialect (docs/evidence.md, model/evidence.h): one
-- link per ended run, settled comparison and approval of a tenant, seq
-- 1, 2, ... per tenant, each hash over the link before it (prev; 64 zeros
-- for seq 1). body is the canonical JSON the link's body_sha256 covers,
-- kept so that a bundle shows the record exactly as it was linked.
-- Append-only: nothing updates or deletes a link.
-- Statements end with ";" at the end of a line.
CREATE TABLE evidence_links (
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	seq INTEGER NOT NULL CHECK (seq >= 1),
	kind TEXT NOT NULL CHECK (kind IN ('run', 'comparison', 'approval')),
	record_id TEXT NOT NULL,
	prev TEXT NOT NULL,
	body_sha256 TEXT NOT NULL,
	hash TEXT NOT NULL,
	body TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (tenant_id, seq),
	UNIQUE (tenant_id, kind, record_id)
);
