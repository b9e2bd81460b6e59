-- Recorded runs, SQLite dialect: a run started with "record": true turns
-- its exchanges into a history session when it completes (linked through
-- session_id, as a replay names the session it replays). record_asked
-- says it was asked for; record_error why no session was made (a tool
-- call, an answer over the bounds, a run that did not complete), NULL
-- otherwise. 0 and NULL for the runs before this migration.
-- Statements end with ";" at the end of a line.
ALTER TABLE runs ADD COLUMN record_asked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN record_error TEXT;
