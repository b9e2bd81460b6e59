-- Idempotency keys, SQLite dialect: the first answer of a create request
-- (POST of a scenario, a run, a replay, a comparison or a session) sent
-- with an Idempotency-Key header, so that a retry with the same key gets
-- that answer back instead of creating a second record. A row is written
-- in the transaction of the record it answers for: one never exists
-- without the other. request_sha256 is the SHA-256 hex of the request's
-- body in canonical JSON; route is the method and the path as sent; status
-- and response are the reply (compact JSON text). Rows are kept until
-- expires_at (24 h after created_at); expired rows of a tenant are ignored
-- by lookups and deleted when that tenant's next key is written.
-- Statements end with ";" at the end of a line.
CREATE TABLE idempotency_keys (
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	idem_key TEXT NOT NULL,
	route TEXT NOT NULL,
	request_sha256 TEXT NOT NULL,
	status INTEGER NOT NULL,
	response TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	PRIMARY KEY (tenant_id, idem_key)
);
CREATE INDEX idempotency_keys_tenant_expiry ON idempotency_keys (tenant_id, expires_at);
