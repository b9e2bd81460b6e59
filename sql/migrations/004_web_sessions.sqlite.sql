-- Admin view, SQLite dialect: sign-in sessions of the admin HTML view
-- (sql/store.h store_web_session_*). Conventions as in
-- 001_init: ids and timestamps from the application (timestamps ISO 8601
-- UTC text "YYYY-MM-DDTHH:MM:SS.mmmZ", which sort as they compare).
-- Statements end with ";" at the end of a line.

-- One session: the browser keeps a random secret in a cookie; only the
-- SHA-256 hex of that secret is stored (sha256), beside the API token it
-- was made from (token_id). The role is not copied here: it is read from
-- the token on every lookup, so revoking the token ends its sessions.
-- Expired rows are purged by store_web_session_create (expires_at index).
CREATE TABLE web_sessions (
	id TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	token_id TEXT NOT NULL REFERENCES api_tokens (id),
	sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
CREATE INDEX web_sessions_token ON web_sessions (token_id);
