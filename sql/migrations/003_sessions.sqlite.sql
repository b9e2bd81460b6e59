-- Replay, SQLite dialect: historical sessions (model/history.h) and the
-- replay columns of a run. Conventions as in 001_init: ids and timestamps
-- from the application, "ord" for newest-first listing. Statements end
-- with ";" at the end of a line.

-- One imported session, as model_session_check normalised it: events is
-- the JSON array text of its events, kept as recorded (a broken history is
-- stored as it was, so that a replay can say what breaks it).
CREATE TABLE sessions (
	ord INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL REFERENCES tenants (id),
	external_id TEXT NOT NULL,
	events TEXT NOT NULL,
	events_count INTEGER NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX sessions_tenant_ord ON sessions (tenant_id, ord);

-- Append-only in the database too: no route and no store function changes
-- a session, and these make any other writer fail as well.
CREATE TRIGGER sessions_no_update BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'sessions are append-only'); END;
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions BEGIN SELECT RAISE(ABORT, 'sessions are append-only'); END;

-- A replay run names the session it replayed (NULL for other kinds) and
-- records its divergence from the recorded outputs: the JSON object text
-- of model_replay_divergence, NULL for other kinds and degraded replays.
ALTER TABLE runs ADD COLUMN session_id TEXT REFERENCES sessions (id);
ALTER TABLE runs ADD COLUMN divergence TEXT;
CREATE INDEX runs_tenant_session_ord ON runs (tenant_id, session_id, ord);
CREATE INDEX runs_tenant_kind_ord ON runs (tenant_id, kind, ord);
