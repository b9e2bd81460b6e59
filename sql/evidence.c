/*
 * The evidence chain (store.h, docs/evidence.md): a link appended in the
 * transaction that writes its record, and the unsigned bundle of a
 * settled comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/evidence.h"
#include "sql/store.h"
#include "sql/store_internal.h"

/* The links between a bundle's first and last record; a tenant that ran
 * more in between than this is refused rather than read whole. */
#define EVIDENCE_SEGMENT_MAX 10000

static const char zeros[] = "0000000000000000000000000000000000000000000000000000000000000000";

static const struct colspec last_cols[] = {{"seq", C_INT}, {"hash", C_TEXT}};
static const struct colspec link_cols[] = {{"seq", C_INT},          {"kind", C_TEXT},
                                           {"id", C_TEXT},          {"prev", C_TEXT},
                                           {"body_sha256", C_TEXT}, {"hash", C_TEXT}};
static const struct colspec body_cols[] = {{"seq", C_INT}, {"body", C_JSON}};

enum store_rc store_evidence_append(struct store *st, const char *tenant_id, const char *kind,
                                    const char *id, const char *canonical_body)
{
	json_t *last = NULL, *link = NULL;
	const char *prev = zeros;
	long long seq = 1;
	char now[32];
	enum store_rc rc;

	if (!tenant_id || !canonical_body) {
		store_seterr(st, "evidence: no tenant or body");
		return STORE_ERROR;
	}
	/* one appender per tenant at a time, so two executors never fork the
	 * chain: PostgreSQL takes a transaction-scoped advisory lock on the
	 * tenant (read committed: the read below then sees the last link
	 * the previous holder committed); SQLite's writer lock already
	 * serialises every write transaction */
	if (st->dialect == DIALECT_POSTGRES) {
		struct param p[] = {PT(tenant_id)};

		rc = store_q_exec(
		    st, "SELECT pg_advisory_xact_lock(hashtext('olivares-evidence:' || ?))", p,
		    NPARAMS(p), NULL, NULL);
		if (rc)
			return rc;
	}
	{
		struct param p[] = {PT(tenant_id)};

		rc = store_q_row(st,
		                 "SELECT seq, hash FROM evidence_links WHERE tenant_id = ? "
		                 "ORDER BY seq DESC LIMIT 1",
		                 p, NPARAMS(p), last_cols, NPARAMS(last_cols), &last);
	}
	if (rc == STORE_OK) {
		seq = (long long)json_integer_value(json_object_get(last, "seq")) + 1;
		prev = json_string_value(json_object_get(last, "hash"));
	} else if (rc != STORE_NOT_FOUND) {
		return rc;
	}
	link = model_evidence_link(seq, kind, id, prev ? prev : "", canonical_body);
	if (!link) {
		store_seterr(st, "evidence: link %lld of %s %s is malformed", seq,
		             kind ? kind : "?", id ? id : "?");
		json_decref(last);
		return STORE_ERROR;
	}
	store_now_iso(now);
	{
		struct param p[] = {PT(tenant_id),
		                    PI(seq),
		                    PT(kind),
		                    PT(id),
		                    PT(json_string_value(json_object_get(link, "prev"))),
		                    PT(json_string_value(json_object_get(link, "body_sha256"))),
		                    PT(json_string_value(json_object_get(link, "hash"))),
		                    PT(canonical_body),
		                    PT(now)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO evidence_links (tenant_id, seq, kind, record_id, prev, "
		    "body_sha256, hash, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	json_decref(last);
	json_decref(link);
	return rc;
}

/* Append the body of a JSON record (canonical form) under kind and id. */
static enum store_rc append_json(struct store *st, const char *tenant_id, const char *kind,
                                 const char *id, const json_t *body)
{
	char *canon = model_evidence_canonical(body);
	enum store_rc rc = store_evidence_append(st, tenant_id, kind, id, canon);

	free(canon);
	return rc;
}

enum store_rc store_evidence_link_run(struct store *st, const char *tenant_id, const char *run_id)
{
	json_t *run = NULL, *outputs = json_array(), *record = NULL, *body = NULL;
	enum store_rc rc;

	rc = store_run_read(st, tenant_id, run_id, &run);
	if (!rc)
		rc = store_run_outputs_read(st, tenant_id, run_id, outputs);
	if (rc)
		goto out;
	record = model_evidence_run_record(run);
	body = model_evidence_run_body(record, outputs);
	rc = append_json(st, tenant_id, "run", run_id, body);
out:
	json_decref(run);
	json_decref(outputs);
	json_decref(record);
	json_decref(body);
	return rc;
}

enum store_rc store_evidence_link_comparison(struct store *st, const char *tenant_id,
                                             const char *comparison_id)
{
	json_t *cmp = NULL, *record;
	enum store_rc rc;

	rc = store_comparison_read(st, tenant_id, comparison_id, &cmp);
	if (rc)
		return rc;
	record = model_evidence_comparison_record(cmp);
	rc = append_json(st, tenant_id, "comparison", comparison_id, record);
	json_decref(record);
	json_decref(cmp);
	return rc;
}

enum store_rc store_evidence_link_approval(struct store *st, const char *tenant_id,
                                           const json_t *approval)
{
	const char *id = json_string_value(json_object_get(approval, "id"));

	if (!id) {
		store_seterr(st, "evidence: an approval without an id");
		return STORE_ERROR;
	}
	return append_json(st, tenant_id, "approval", id, approval);
}

/* ---- the bundle -------------------------------------------------------- */

struct bundle_arg {
	const char *tenant_id;
	const char *id;
	json_t *out;
};

static enum store_rc body_of(struct store *st, const char *tenant_id, const char *kind,
                             const char *id, json_t **row)
{
	struct param p[] = {PT(tenant_id), PT(kind), PT(id)};

	return store_q_row(st,
	                   "SELECT seq, body FROM evidence_links WHERE tenant_id = ? AND kind = ? "
	                   "AND record_id = ?",
	                   p, NPARAMS(p), body_cols, NPARAMS(body_cols), row);
}

static long long seq_of(const json_t *row)
{
	return (long long)json_integer_value(json_object_get(row, "seq"));
}

/* One run's link body into runs and outputs (once: a run named twice is
 * held once), widening [lo, hi] to its seq. */
static enum store_rc bundle_run(struct store *st, const char *tenant_id, const char *cmp_id,
                                const char *run_id, json_t *runs, json_t *outputs, long long *lo,
                                long long *hi)
{
	json_t *row = NULL, *body;
	enum store_rc rc;

	if (json_object_get(outputs, run_id))
		return STORE_OK;
	rc = body_of(st, tenant_id, "run", run_id, &row);
	if (rc == STORE_NOT_FOUND) {
		store_seterr(st, "comparison %s: run %s has no evidence link", cmp_id, run_id);
		return STORE_CONFLICT;
	}
	if (rc)
		return rc;
	body = json_object_get(row, "body");
	json_array_append(runs, json_object_get(body, "run"));
	json_object_set(outputs, run_id, json_object_get(body, "outputs"));
	if (seq_of(row) < *lo)
		*lo = seq_of(row);
	if (seq_of(row) > *hi)
		*hi = seq_of(row);
	json_decref(row);
	return STORE_OK;
}

/* Every run the comparison rests on: each side's first, then each
 * repeat's, baseline before candidate. */
static enum store_rc bundle_runs(struct store *st, const struct bundle_arg *a, const json_t *cmp,
                                 json_t *runs, json_t *outputs, long long *lo, long long *hi)
{
	static const char *const sides[] = {"baseline", "candidate"};
	const json_t *v;
	const char *id;
	enum store_rc rc;
	size_t s, i;

	for (s = 0; s < 2; s++) {
		id = json_string_value(json_object_get(json_object_get(cmp, sides[s]), "run_id"));
		if (!id) {
			store_seterr(st, "evidence: comparison %s names no %s run", a->id,
			             sides[s]);
			return STORE_ERROR;
		}
		rc = bundle_run(st, a->tenant_id, a->id, id, runs, outputs, lo, hi);
		if (rc)
			return rc;
	}
	for (s = 0; s < 2; s++) {
		json_array_foreach(json_object_get(json_object_get(cmp, "runs"), sides[s]), i, v)
		{
			if (!json_is_string(v))
				continue;
			rc = bundle_run(st, a->tenant_id, a->id, json_string_value(v), runs,
			                outputs, lo, hi);
			if (rc)
				return rc;
		}
	}
	return STORE_OK;
}

/* The store suite the runs were scored against, pinned by their
 * suite_version: {"name","version","document"}; *out NULL when they
 * named none of the store's (an adapter's suite, or none). */
static enum store_rc bundle_suite(struct store *st, const char *tenant_id, const json_t *run,
                                  json_t **out)
{
	static const struct colspec cols[] = {
	    {"name", C_TEXT}, {"version", C_INT}, {"document", C_JSON}};
	const char *name = json_string_value(json_object_get(run, "suite"));
	json_t *v = json_object_get(run, "suite_version");
	enum store_rc rc;

	*out = NULL;
	if (!name || !json_is_integer(v) || json_integer_value(v) < 1)
		return STORE_OK;
	{
		struct param p[] = {PT(tenant_id), PT(name), PI((long long)json_integer_value(v))};

		rc = store_q_row(st,
		                 "SELECT name, version, document FROM suites WHERE tenant_id = ? "
		                 "AND name = ? AND version = ?",
		                 p, NPARAMS(p), cols, NPARAMS(cols), out);
	}
	if (rc == STORE_NOT_FOUND) {
		/* suites are never deleted: a pinned version is always there */
		store_seterr(st, "evidence: suite %s version %lld is not in the store", name,
		             (long long)json_integer_value(v));
		return STORE_ERROR;
	}
	return rc;
}

static enum store_rc tx_bundle(struct store *st, void *arg)
{
	struct bundle_arg *a = arg;
	json_t *c = NULL, *cmp = NULL, *links = NULL, *list = NULL;
	json_t *runs = NULL, *outputs = NULL, *suite = NULL;
	long long lo, hi;
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	rc = body_of(st, a->tenant_id, "comparison", a->id, &c);
	if (rc == STORE_NOT_FOUND) {
		rc = store_comparison_read(st, a->tenant_id, a->id, &cmp);
		if (rc)
			goto out;
		if (strcmp(json_string_value(json_object_get(cmp, "status")) ?: "", "pending") == 0)
			store_seterr(st, "comparison %s has not settled: no evidence yet", a->id);
		else
			store_seterr(st, "comparison %s was settled before evidence was kept",
			             a->id);
		rc = STORE_CONFLICT;
		goto out;
	}
	if (rc)
		goto out;
	cmp = json_incref(json_object_get(c, "body"));
	lo = hi = seq_of(c);
	runs = json_array();
	outputs = json_object();
	rc = bundle_runs(st, a, cmp, runs, outputs, &lo, &hi);
	if (rc)
		goto out;
	if (hi - lo >= EVIDENCE_SEGMENT_MAX) {
		store_seterr(st, "comparison %s: its chain segment holds more than %d links", a->id,
		             EVIDENCE_SEGMENT_MAX);
		rc = STORE_CONFLICT;
		goto out;
	}
	{
		struct param p[] = {PT(a->tenant_id), PI(lo), PI(hi)};

		rc = store_q_list(st,
		                  "SELECT seq, kind, record_id, prev, body_sha256, hash FROM "
		                  "evidence_links WHERE tenant_id = ? AND seq >= ? AND seq <= ? "
		                  "ORDER BY seq",
		                  p, NPARAMS(p), link_cols, NPARAMS(link_cols), "links", &list);
	}
	if (!rc)
		rc = bundle_suite(st, a->tenant_id, json_array_get(runs, 0), &suite);
	if (rc)
		goto out;
	links = json_incref(json_object_get(list, "links"));
	a->out = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O}", "format", MODEL_EVIDENCE_FORMAT,
	                   "comparison", cmp, "runs", runs, "outputs", outputs, "suite",
	                   suite ? suite : json_null(), "links", links);
	if (!a->out) {
		store_seterr(st, "evidence: a stored link body is malformed");
		rc = STORE_ERROR;
	}
out:
	json_decref(c);
	json_decref(runs);
	json_decref(outputs);
	json_decref(suite);
	json_decref(cmp);
	json_decref(links);
	json_decref(list);
	return rc;
}

enum store_rc store_evidence_bundle(struct store *st, const char *tenant_id,
                                    const char *comparison_id, json_t **out)
{
	struct bundle_arg a = {.tenant_id = tenant_id, .id = comparison_id};
	json_t *res = NULL;
	enum store_rc rc;

	*out = NULL;
	if (!tenant_id || !store_is_lower_hex(comparison_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	/* one snapshot: the links read together with the bodies */
	rc = store_tx_json(st, tx_bundle, &a, &a.out, &res);
	if (rc)
		return rc;
	*out = res;
	return STORE_OK;
}
