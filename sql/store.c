/*
 * The store's entity functions (store.h), moved out file by file.
 */
#include "sql/store_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sql.h>
#include <sqlext.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

/* ---- comparisons (append-only) --------------------------------------------------- */

/* The flat row; comparison_shape nests it as store.h documents. status,
 * scored and shutdown of each side are read from its run (the runs are
 * written with the comparison and never change). */
static const struct colspec comparison_cols[] = {
	{"id", C_TEXT},		       {"scenario_id", C_TEXT},	   {"scenario_version", C_INT},
	{"suite", C_TEXT},	       {"tolerance", C_REAL},	   {"b_variant", C_TEXT},
	{"b_run_id", C_TEXT},	       {"b_status", C_TEXT},	   {"b_scored", C_BOOL},
	{"b_score", C_REAL},	       {"b_shutdown", C_TEXT},	   {"c_variant", C_TEXT},
	{"c_run_id", C_TEXT},	       {"c_status", C_TEXT},	   {"c_scored", C_BOOL},
	{"c_score", C_REAL},	       {"c_shutdown", C_TEXT},	   {"delta", C_REAL},
	{"verdict", C_TEXT},	       {"reason", C_TEXT},	   {"differing_steps", C_JSON},
	{"decided_by", C_TEXT},	       {"created_at", C_TEXT}};
/* Both joins stay inside the tenant: a run id of another tenant never
 * matches. */
#define COMPARISON_SELECT                                                                    \
	"SELECT c.id, c.scenario_id, c.scenario_version, c.suite, c.tolerance, "             \
	"c.baseline_variant, c.baseline_run_id, b.status, b.scored, c.baseline_score, "      \
	"b.shutdown, "                                                                       \
	"c.candidate_variant, c.candidate_run_id, k.status, k.scored, c.candidate_score, "   \
	"k.shutdown, "                                                                       \
	"c.delta, c.verdict, c.reason, c.differing_steps, c.decided_by, c.created_at "       \
	"FROM comparisons c "                                                                \
	"JOIN runs b ON b.tenant_id = c.tenant_id AND b.id = c.baseline_run_id "             \
	"JOIN runs k ON k.tenant_id = c.tenant_id AND k.id = c.candidate_run_id"

static const char *const comparison_verdicts[] = {"improved", "regressed", "unchanged",
						  "inconclusive"};

struct comparison_arg {
	const char *tenant_id;
	const char *actor;
	const char *id;
	const struct store_comparison *cmp;
	const char *scenario_id; /* list filters; NULL matches every row */
	const char *verdict;
	int limit, offset;
	json_t *out;
};

/* One side {"variant","run_id","status","scored","score","shutdown"} from
 * the flat row's columns prefixed p ("b_" or "c_"). */
static json_t *comparison_side(json_t *flat, const char *p)
{
	static const char *const keys[] = {"variant", "run_id", "status",
					   "scored",  "score",	"shutdown"};
	char col[32];
	json_t *side = json_object();
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		snprintf(col, sizeof col, "%s%s", p, keys[i]);
		v = json_object_get(flat, col);
		json_object_set_nocheck(side, keys[i], v ? v : json_null());
	}
	return side;
}

/* The API object of a flat comparison row (new reference; flat borrowed). */
static json_t *comparison_shape(json_t *flat)
{
	static const char *const top[] = {"id", "scenario_id", "scenario_version", "suite",
					  "tolerance"};
	static const char *const rest[] = {"delta", "verdict", "reason", "differing_steps",
					   "decided_by", "created_at"};
	json_t *o = json_object();
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof top / sizeof top[0]; i++) {
		v = json_object_get(flat, top[i]);
		json_object_set_nocheck(o, top[i], v ? v : json_null());
	}
	json_object_set_new_nocheck(o, "baseline", comparison_side(flat, "b_"));
	json_object_set_new_nocheck(o, "candidate", comparison_side(flat, "c_"));
	for (i = 0; i < sizeof rest / sizeof rest[0]; i++) {
		v = json_object_get(flat, rest[i]);
		json_object_set_nocheck(o, rest[i], v ? v : json_null());
	}
	return o;
}

/* Every row of sql into arr as API objects. */
static enum store_rc comparison_rows(struct store *st, const char *sql, struct param *p,
				     size_t n, json_t *arr)
{
	json_t *flat = json_array();
	json_t *row;
	enum store_rc rc;
	size_t i;

	rc = store_q_rows(st, sql, p, n, comparison_cols, NPARAMS(comparison_cols), flat);
	if (!rc)
		json_array_foreach(flat, i, row)
			json_array_append_new(arr, comparison_shape(row));
	json_decref(flat);
	return rc;
}

static enum store_rc comparison_read(struct store *st, const char *tenant_id, const char *id,
				     json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(id)};
	json_t *arr = json_array();
	enum store_rc rc;

	*out = NULL;
	rc = comparison_rows(st, COMPARISON_SELECT " WHERE c.tenant_id = ? AND c.id = ?", p,
			     NPARAMS(p), arr);
	if (!rc && json_array_size(arr) == 0)
		rc = STORE_NOT_FOUND;
	if (!rc)
		*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return rc;
}

static enum store_rc tx_comparison_record(struct store *st, void *arg)
{
	struct comparison_arg *a = arg;
	const struct store_comparison *c = a->cmp;
	const struct store_run *b = c->baseline, *k = c->candidate;
	char bid[33], kid[33], id[33];
	char now[32];
	char *diff = NULL;
	enum store_rc rc;
	json_t *detail;

	json_decref(a->out);
	a->out = NULL;
	rc = store_run_insert(st, a->tenant_id, a->actor, b, bid);
	if (rc)
		return rc;
	rc = store_run_insert(st, a->tenant_id, a->actor, k, kid);
	if (rc)
		return rc;
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	diff = json_dumps(c->differing_steps, JSON_COMPACT);
	if (!diff) {
		store_seterr(st, "comparison: differing_steps do not encode");
		return STORE_ERROR;
	}
	store_now_iso(now);
	{
		struct param p[] = {PT(id),
				    PT(a->tenant_id),
				    PT(c->scenario_id),
				    PI(c->scenario_version),
				    PT(c->suite),
				    PR(1, c->tolerance),
				    PT(b->variant),
				    PT(bid),
				    PR(b->scored, b->score),
				    PT(k->variant),
				    PT(kid),
				    PR(k->scored, k->score),
				    PR(c->has_delta, c->delta),
				    PT(c->verdict),
				    PT(c->reason),
				    PT(diff),
				    PT(a->actor),
				    PT(now)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO comparisons (id, tenant_id, scenario_id, scenario_version, "
		    "suite, tolerance, baseline_variant, baseline_run_id, baseline_score, "
		    "candidate_variant, candidate_run_id, candidate_score, delta, verdict, "
		    "reason, differing_steps, decided_by, created_at) VALUES (?, ?, ?, ?, ?, "
		    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	free(diff);
	if (rc)
		return rc;
	detail = json_pack("{s:s,s:s,s:s,s:s}", "scenario_id", c->scenario_id, "baseline_run_id",
			   bid, "candidate_run_id", kid, "verdict", c->verdict);
	rc = store_audit_insert(st, a->tenant_id, a->actor, "sandbox.compare", id, detail);
	json_decref(detail);
	if (rc)
		return rc;
	return comparison_read(st, a->tenant_id, id, &a->out);
}

static int verdict_known(const char *v)
{
	size_t i;

	for (i = 0; v && i < sizeof comparison_verdicts / sizeof comparison_verdicts[0]; i++)
		if (strcmp(v, comparison_verdicts[i]) == 0)
			return 1;
	return 0;
}

enum store_rc store_comparison_record(struct store *st, const char *tenant_id,
				      const char *actor_token_id,
				      const struct store_comparison *cmp, json_t **out)
{
	struct comparison_arg a = {.tenant_id = tenant_id, .actor = actor_token_id};
	struct store_comparison c;
	struct store_run b, k;
	json_t *bempty = NULL, *kempty = NULL;
	enum store_rc rc;

	*out = NULL;
	if (!tenant_id || !cmp || !store_text_ok(cmp->scenario_id, 1, 128) ||
	    !store_text_ok(cmp->suite, 1, 128) || !verdict_known(cmp->verdict) ||
	    !(cmp->tolerance >= 0.0 && cmp->tolerance <= 1.0) ||
	    !json_is_array(cmp->differing_steps)) {
		store_seterr(st, "comparison: tenant, scenario_id, suite (1..128 bytes), a known "
		                 "verdict, a tolerance in [0, 1] and a differing_steps array are "
		                 "required");
		return STORE_ERROR;
	}
	rc = store_run_check(st, cmp->baseline, &b, &bempty);
	if (!rc)
		rc = store_run_check(st, cmp->candidate, &k, &kempty);
	if (rc)
		goto out;
	if (cmp->has_delta && (!b.scored || !k.scored)) {
		store_seterr(st, "comparison: a delta needs both runs scored");
		rc = STORE_ERROR;
		goto out;
	}
	c = *cmp;
	c.baseline = &b;
	c.candidate = &k;
	a.cmp = &c;
	rc = store_tx(st, tx_comparison_record, &a);
	if (rc) {
		json_decref(a.out);
		a.out = NULL;
	}
	*out = a.out;
out:
	json_decref(bempty);
	json_decref(kempty);
	return rc;
}

static enum store_rc tx_comparison_get(struct store *st, void *arg)
{
	struct comparison_arg *a = arg;

	json_decref(a->out);
	a->out = NULL;
	return comparison_read(st, a->tenant_id, a->id, &a->out);
}

/* A read of comparisons (store_read: a comparison and its runs are written
 * in one transaction and never changed). */
static enum store_rc comparison_call(struct store *st, store_tx_fn fn,
				     struct comparison_arg *a, json_t **out)
{
	enum store_rc rc;

	rc = store_read(st, fn, a);
	if (rc) {
		json_decref(a->out);
		a->out = NULL;
	}
	*out = a->out;
	return rc;
}

enum store_rc store_comparison_get(struct store *st, const char *tenant_id, const char *id,
				   json_t **out)
{
	struct comparison_arg a = {.tenant_id = tenant_id, .id = id};

	*out = NULL;
	if (!tenant_id || !id)
		return STORE_NOT_FOUND;
	return comparison_call(st, tx_comparison_get, &a, out);
}

/*
 * The list of comparisons: the WHERE clause is built from fixed fragments,
 * one "AND col = ?" per filter given (4 distinct texts, all kept by the
 * statement cache); every value is bound, so a verdict that names none of
 * the four matches no row.
 */
static enum store_rc tx_comparison_list(struct store *st, void *arg)
{
	struct comparison_arg *a = arg;
	const struct store_filter_cond conds[] = {{a->scenario_id, " AND c.scenario_id = ?"},
	                                          {a->verdict, " AND c.verdict = ?"}};
	struct param p[1 + NPARAMS(conds) + 2]; /* tenant, filters, limit, offset */
	struct model_buf sql;
	size_t n;
	json_t *arr;
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	memset(p, 0, sizeof p);
	model_buf_init(&sql, 4096);
	n = store_filtered_list_sql(&sql, p, COMPARISON_SELECT " WHERE c.tenant_id = ?",
	                            a->tenant_id, conds, NPARAMS(conds), " ORDER BY c.ord DESC",
	                            a->limit, a->offset);
	arr = json_array();
	rc = comparison_rows(st, sql.data, p, n, arr);
	model_buf_release(&sql);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	a->out = json_pack("{s:o}", "comparisons", arr);
	return STORE_OK;
}

enum store_rc store_comparison_list_filtered(struct store *st, const char *tenant_id,
					     const char *scenario_id, const char *verdict,
					     int limit, int offset, json_t **out)
{
	struct comparison_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                           .scenario_id = scenario_id,
	                           .verdict = verdict,
	                           .limit = store_clamp_limit(limit),
	                           .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return comparison_call(st, tx_comparison_list, &a, out);
}

enum store_rc store_comparison_list(struct store *st, const char *tenant_id,
				    const char *scenario_id, int limit, int offset, json_t **out)
{
	return store_comparison_list_filtered(st, tenant_id, scenario_id, NULL, limit, offset,
					      out);
}

/* ---- history sessions (append-only, issue 5) -------------------------------------- */

static const struct colspec session_cols[] = {{"id", C_TEXT},
					      {"external_id", C_TEXT},
					      {"events", C_JSON},
					      {"events_count", C_INT},
					      {"created_at", C_TEXT}};
static const struct colspec session_summary_cols[] = {{"id", C_TEXT},
						      {"external_id", C_TEXT},
						      {"events_count", C_INT},
						      {"created_at", C_TEXT}};

struct session_arg {
	const char *tenant_id;
	const char *actor;
	const char *id;
	const char *external_id;
	const char *events; /* JSON array text */
	size_t count;
	int limit, offset;
	json_t *out;
};

static enum store_rc tx_session_create(struct store *st, void *arg)
{
	struct session_arg *a = arg;
	char id[33];
	char now[32];
	enum store_rc rc;
	json_t *detail;

	json_decref(a->out);
	a->out = NULL;
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),	    PT(a->tenant_id),	      PT(a->external_id),
				    PT(a->events), PI((long long)a->count), PT(now)};

		rc = store_q_exec(st,
		                  "INSERT INTO sessions (id, tenant_id, external_id, events, "
		                  "events_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	if (rc)
		return rc;
	/* the count only: events may hold what users typed (api5.md) */
	detail = json_pack("{s:I}", "events", (json_int_t)a->count);
	rc = store_audit_insert(st, a->tenant_id, a->actor, "sandbox.session.import", id, detail);
	json_decref(detail);
	if (rc)
		return rc;
	a->out = json_pack("{s:s,s:s,s:I,s:s}", "id", id, "external_id", a->external_id,
			   "events_count", (json_int_t)a->count, "created_at", now);
	if (!a->out) {
		store_seterr(st, "session: cannot build the stored object");
		return STORE_ERROR;
	}
	return STORE_OK;
}

enum store_rc store_session_create(struct store *st, const char *tenant_id,
				   const char *actor_token_id, json_t *session, json_t **out)
{
	struct session_arg a = {.tenant_id = tenant_id, .actor = actor_token_id};
	json_t *events = json_object_get(session, "events");
	char *text = NULL;
	enum store_rc rc;

	*out = NULL;
	a.external_id = json_string_value(json_object_get(session, "external_id"));
	if (!tenant_id || !json_is_object(session) || !store_text_ok(a.external_id, 1, 128) ||
	    !json_is_array(events)) {
		store_seterr(st, "session: tenant, external_id (1..128 bytes) and an events array "
		                 "are required");
		return STORE_ERROR;
	}
	text = json_dumps(events, JSON_COMPACT);
	if (!text) {
		store_seterr(st, "session: events do not encode");
		return STORE_ERROR;
	}
	a.events = text;
	a.count = json_array_size(events);
	rc = store_tx(st, tx_session_create, &a);
	free(text);
	if (rc) {
		json_decref(a.out);
		a.out = NULL;
	}
	*out = a.out;
	return rc;
}

static enum store_rc tx_session_get(struct store *st, void *arg)
{
	struct session_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->id)};

	json_decref(a->out);
	a->out = NULL;
	return store_q_row(st,
	                   "SELECT id, external_id, events, events_count, created_at FROM sessions "
	                   "WHERE tenant_id = ? AND id = ?",
	                   p, NPARAMS(p), session_cols, NPARAMS(session_cols), &a->out);
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

/* A read of sessions (store_read: one SELECT of rows never changed). */
static enum store_rc session_call(struct store *st, store_tx_fn fn, struct session_arg *a,
				  json_t **out)
{
	enum store_rc rc;

	rc = store_read(st, fn, a);
	if (rc) {
		json_decref(a->out);
		a->out = NULL;
	}
	*out = a->out;
	return rc;
}

enum store_rc store_session_get(struct store *st, const char *tenant_id, const char *id,
				json_t **out)
{
	struct session_arg a = {.tenant_id = tenant_id, .id = id};

	*out = NULL;
	if (!tenant_id || !id)
		return STORE_NOT_FOUND;
	return session_call(st, tx_session_get, &a, out);
}

enum store_rc store_session_list(struct store *st, const char *tenant_id, int limit,
				 int offset, json_t **out)
{
	struct session_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                        .limit = store_clamp_limit(limit),
	                        .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return session_call(st, tx_session_list, &a, out);
}

/* ---- admin view sessions (issue 6) ------------------------------------------------ */

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
		struct param p[] = {PT(a->id),	PT(a->tenant_id), PT(a->token_id),
				    PT(a->sha), PT(a->now),	  PT(a->expires_at)};

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
				       const char *now_iso, const char *expires_at,
				       char id_out[33])
{
	struct web_session_arg a = {.tenant_id = tenant_id, .token_id = token_id,
				    .sha = sha256_hex, .now = now_iso, .expires_at = expires_at};
	enum store_rc rc;

	id_out[0] = '\0';
	if (!store_is_lower_hex(tenant_id, 32) || !store_is_lower_hex(token_id, 32))
		return STORE_NOT_FOUND;
	if (!store_is_lower_hex(sha256_hex, 64) || !iso_ok(now_iso) || !iso_ok(expires_at)) {
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
		"SELECT t.id, w.tenant_id, t.role, w.sha256 FROM web_sessions w "
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
	if (!store_is_lower_hex(sha256_hex, 64) || !iso_ok(now_iso))
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
	if (!store_is_lower_hex(id, 32)) {
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
	struct web_session_arg a = {.tenant_id = tenant_id, .token_id = actor_token_id,
				    .sha = sha256_hex};

	if (!store_is_lower_hex(tenant_id, 32) || !store_is_lower_hex(sha256_hex, 64))
		return STORE_NOT_FOUND;
	return store_tx(st, tx_web_session_delete, &a);
}
