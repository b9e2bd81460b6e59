/*
 * History sessions (append-only), imported for replay, and the sign-in
 * sessions of the admin view. A history session is evidence like a
 * comparison: no function updates or deletes one, and the schema refuses
 * UPDATE and DELETE on its table (triggers of migration 003).
 */
#include "sql/store_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/history.h"

/* ---- history sessions (append-only) ------------------------------------------------ */

static const struct colspec session_cols[] = {{"id", C_TEXT},
                                              {"external_id", C_TEXT},
                                              {"events", C_JSON},
                                              {"events_count", C_INT},
                                              {"created_at", C_TEXT}};
static const struct colspec session_summary_cols[] = {
    {"id", C_TEXT}, {"external_id", C_TEXT}, {"events_count", C_INT}, {"created_at", C_TEXT}};

struct session_arg {
	const char *tenant_id;
	const char *actor;
	json_t *session;               /* create only: the import body */
	const struct store_idem *idem; /* create only; NULL: none */
	int limit, offset;
	json_t *out;
};

enum store_rc store_session_insert(struct store *st, const char *tenant_id, const char *actor,
                                   const char *action, json_t *session, const char *run_id,
                                   char id_out[33], json_t **out)
{
	const char *external_id = json_string_value(json_object_get(session, "external_id"));
	json_t *events = json_object_get(session, "events"), *detail;
	size_t count = json_array_size(events);
	char *text = NULL;
	char id[33];
	char now[32];
	enum store_rc rc;

	if (out)
		*out = NULL;
	if (!tenant_id || !store_text_ok(external_id, 1, MODEL_MAX_EXTERNAL_ID_BYTES) ||
	    !json_is_array(events)) {
		store_seterr(st,
		             "session: tenant, external_id (1..%d bytes) and an events array "
		             "are required",
		             MODEL_MAX_EXTERNAL_ID_BYTES);
		return STORE_ERROR;
	}
	text = json_dumps(events, JSON_COMPACT);
	if (!text) {
		store_seterr(st, "session: events do not encode");
		return STORE_ERROR;
	}
	rc = store_new_id(st, id);
	if (rc)
		goto out;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),   PT(tenant_id),        PT(external_id),
		                    PT(text), PI((long long)count), PT(now)};

		rc = store_q_exec(st,
		                  "INSERT INTO sessions (id, tenant_id, external_id, events, "
		                  "events_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	if (rc)
		goto out;
	/* the count only: events may hold what users typed, and the audit
	 * trail never holds content */
	detail = json_pack("{s:I, s:s*}", "events", (json_int_t)count, "run_id", run_id);
	rc = store_audit_insert(st, tenant_id, actor, action, id, detail);
	json_decref(detail);
	if (rc)
		goto out;
	memcpy(id_out, id, 33);
	if (out) {
		*out = json_pack("{s:s,s:s,s:I,s:s}", "id", id, "external_id", external_id,
		                 "events_count", (json_int_t)count, "created_at", now);
		if (!*out) {
			store_seterr(st, "session: cannot build the stored object");
			rc = STORE_ERROR;
		}
	}
out:
	free(text);
	return rc;
}

static enum store_rc tx_session_create(struct store *st, void *arg)
{
	struct session_arg *a = arg;
	char id[33];
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	rc = store_session_insert(st, a->tenant_id, a->actor, "sandbox.session.import", a->session,
	                          NULL, id, &a->out);
	if (rc)
		return rc;
	return store_idem_insert(st, a->tenant_id, a->idem, a->out);
}

enum store_rc store_session_create(struct store *st, const char *tenant_id,
                                   const char *actor_token_id, json_t *session, json_t **out)
{
	return store_session_create_idem(st, tenant_id, actor_token_id, session, NULL, out);
}

enum store_rc store_session_create_idem(struct store *st, const char *tenant_id,
                                        const char *actor_token_id, json_t *session,
                                        const struct store_idem *idem, json_t **out)
{
	struct session_arg a = {
	    .tenant_id = tenant_id, .actor = actor_token_id, .idem = idem, .session = session};

	*out = NULL;
	if (!json_is_object(session)) {
		store_seterr(st, "session: the session must be an object");
		return STORE_ERROR;
	}
	return store_tx_json(st, tx_session_create, &a, &a.out, out);
}

/* The reads of sessions below run without an explicit transaction
 * (store_get, store_read_json): each is one SELECT of rows never changed. */
static enum store_rc session_read(struct store *st, const char *tenant_id, const char *id,
                                  json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(id)};

	return store_q_row(st,
	                   "SELECT id, external_id, events, events_count, created_at FROM sessions "
	                   "WHERE tenant_id = ? AND id = ?",
	                   p, NPARAMS(p), session_cols, NPARAMS(session_cols), out);
}

static enum store_rc tx_session_list(struct store *st, void *arg)
{
	struct session_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PI(a->limit), PI(a->offset)};

	json_decref(a->out);
	return store_q_list(st,
	                    "SELECT id, external_id, events_count, created_at FROM sessions "
	                    "WHERE tenant_id = ? ORDER BY ord DESC LIMIT ? OFFSET ?",
	                    p, NPARAMS(p), session_summary_cols, NPARAMS(session_summary_cols),
	                    "sessions", &a->out);
}

enum store_rc store_session_get(struct store *st, const char *tenant_id, const char *id,
                                json_t **out)
{
	return store_get(st, session_read, tenant_id, id, out);
}

enum store_rc store_session_list(struct store *st, const char *tenant_id, int limit, int offset,
                                 json_t **out)
{
	struct session_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                        .limit = store_clamp_limit(limit),
	                        .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return store_read_json(st, tx_session_list, &a, &a.out, out);
}

/* ---- admin view sessions ------------------------------------------------------------ */

/*
 * Sessions of the admin HTML view: only the SHA-256 hex of the cookie
 * secret is stored (column sha256), with the token the session was made
 * from. The role is never copied: every lookup joins api_tokens, so a
 * revoked token (revoked = 1) ends its sessions at once and a role change
 * applies to them too. Times are ISO text of one fixed format, compared as
 * text (they sort as they compare; the PostgreSQL column is COLLATE "C").
 */

struct web_session_arg {
	const char *tenant_id;
	const char *token_id; /* create: the token; delete: the actor */
	const char *sha;
	const char *now;
	const char *expires_at;
	char id[33];
	struct store_principal *pr;
};

/* "YYYY-MM-DDTHH:MM:SS.mmmZ", the one format of every stored timestamp
 * (store_now_iso): text comparison of two of them is time comparison. */
static int iso_ok(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	size_t i;

	if (!s || strlen(s) != sizeof shape - 1)
		return 0;
	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return 0;
	}
	return 1;
}

static enum store_rc tx_web_session_create(struct store *st, void *arg)
{
	struct web_session_arg *a = arg;
	struct param tok[] = {PT(a->token_id), PT(a->tenant_id)};
	struct param purge[] = {PT(a->now)};
	enum store_rc rc;
	json_t *detail;
	int found = 0;

	a->id[0] = '\0';
	/* the token must be one of the tenant's and unrevoked: checked before
	 * anything is written (no purge either) */
	rc = store_q_exists(
	    st, "SELECT 1 FROM api_tokens WHERE id = ? AND tenant_id = ? AND revoked = 0", tok,
	    NPARAMS(tok), &found);
	if (rc)
		return rc;
	if (!found) {
		store_seterr(st, "web session: no such unrevoked token for this tenant");
		return STORE_NOT_FOUND;
	}
	/* no other cleanup job exists: every sign-in purges the expired
	 * sessions of every tenant (they no longer authenticate anyway) */
	rc = store_q_exec(st, "DELETE FROM web_sessions WHERE expires_at < ?", purge,
	                  NPARAMS(purge), NULL, NULL);
	if (rc)
		return rc;
	rc = store_new_id(st, a->id);
	if (rc)
		return rc;
	{
		struct param p[] = {PT(a->id),  PT(a->tenant_id), PT(a->token_id),
		                    PT(a->sha), PT(a->now),       PT(a->expires_at)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO web_sessions (id, tenant_id, token_id, sha256, created_at, "
		    "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	if (rc)
		return rc;
	/* the id only: never the hash, which identifies the cookie */
	detail = json_pack("{s:s}", "session_id", a->id);
	rc = store_audit_insert(st, a->tenant_id, a->token_id, "admin.signin", a->id, detail);
	json_decref(detail);
	return rc;
}

enum store_rc store_web_session_create(struct store *st, const char *tenant_id,
                                       const char *token_id, const char *sha256_hex,
                                       const char *now_iso, const char *expires_at, char id_out[33])
{
	struct web_session_arg a = {.tenant_id = tenant_id,
	                            .token_id = token_id,
	                            .sha = sha256_hex,
	                            .now = now_iso,
	                            .expires_at = expires_at};
	enum store_rc rc;

	id_out[0] = '\0';
	if (!store_is_lower_hex(tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(token_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	if (!store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN) || !iso_ok(now_iso) ||
	    !iso_ok(expires_at)) {
		store_seterr(st, "web session: a 64 lowercase hex digest and ISO UTC times "
		                 "(YYYY-MM-DDTHH:MM:SS.mmmZ) are required");
		return STORE_ERROR;
	}
	rc = store_tx(st, tx_web_session_create, &a);
	if (!rc)
		memcpy(id_out, a.id, 33);
	return rc;
}

static enum store_rc tx_web_session_lookup(struct store *st, void *arg)
{
	/* Like a token lookup, this precedes knowing the tenant: the digest
	 * selects the row (unique). The token is joined inside the session's
	 * tenant, unrevoked, for the current role. */
	static const char *const sql =
	    "SELECT t.id, w.tenant_id, t.role, w.sha256, t.scopes FROM web_sessions w "
	    "JOIN api_tokens t ON t.id = w.token_id AND t.tenant_id = w.tenant_id "
	    "WHERE w.sha256 = ? AND w.expires_at > ? AND t.revoked = 0";
	struct web_session_arg *a = arg;
	struct param p[] = {PT(a->sha), PT(a->now)};
	SQLHSTMT h = SQL_NULL_HSTMT;
	enum store_rc rc;
	int row = 0;

	memset(a->pr, 0, sizeof *a->pr);
	rc = store_q_exec(st, sql, p, NPARAMS(p), &h, NULL);
	if (rc)
		return rc;
	rc = store_q_fetch(st, h, &row);
	if (!rc && !row)
		rc = STORE_NOT_FOUND;
	if (!rc)
		rc = store_principal_row(st, h, a->pr);
	store_q_free(st, h, rc != STORE_OK && rc != STORE_NOT_FOUND);
	if (rc)
		memset(a->pr, 0, sizeof *a->pr);
	return rc;
}

enum store_rc store_web_session_lookup(struct store *st, const char *sha256_hex,
                                       const char *now_iso, struct store_principal *out)
{
	struct web_session_arg a = {.sha = sha256_hex, .now = now_iso, .pr = out};

	memset(out, 0, sizeof *out);
	if (!store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN) || !iso_ok(now_iso))
		return STORE_NOT_FOUND;
	return store_read(st, tx_web_session_lookup, &a);
}

static enum store_rc tx_web_session_delete(struct store *st, void *arg)
{
	static const struct colspec cols[] = {{"id", C_TEXT}};
	struct web_session_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->sha)};
	json_t *row = NULL;
	json_t *detail;
	const char *id;
	enum store_rc rc;
	SQLLEN n = 0;

	a->id[0] = '\0';
	rc = store_q_row(st, "SELECT id FROM web_sessions WHERE tenant_id = ? AND sha256 = ?", p,
	                 NPARAMS(p), cols, NPARAMS(cols), &row);
	if (rc)
		return rc;
	id = json_string_value(json_object_get(row, "id"));
	if (!store_is_lower_hex(id, MODEL_ID_LEN)) {
		json_decref(row);
		store_seterr(st, "malformed web session row in the database");
		return STORE_ERROR;
	}
	memcpy(a->id, id, 33);
	json_decref(row);
	{
		struct param d[] = {PT(a->tenant_id), PT(a->id)};

		rc = store_q_exec(st, "DELETE FROM web_sessions WHERE tenant_id = ? AND id = ?", d,
		                  NPARAMS(d), NULL, &n);
	}
	if (rc)
		return rc;
	if (n != 1) {
		store_seterr(st, "web session: deleted %ld rows, expected 1", (long)n);
		return STORE_NOT_FOUND;
	}
	detail = json_pack("{s:s}", "session_id", a->id);
	rc = store_audit_insert(st, a->tenant_id, a->token_id, "admin.signout", a->id, detail);
	json_decref(detail);
	return rc;
}

enum store_rc store_web_session_delete(struct store *st, const char *tenant_id,
                                       const char *actor_token_id, const char *sha256_hex)
{
	struct web_session_arg a = {
	    .tenant_id = tenant_id, .token_id = actor_token_id, .sha = sha256_hex};

	if (!store_is_lower_hex(tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN))
		return STORE_NOT_FOUND;
	return store_tx(st, tx_web_session_delete, &a);
}
