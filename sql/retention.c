/*
 * Retention (store.h "retention", docs/retention.md): the
 * purge of one tenant's ended runs older than its retention, with their
 * outputs and logs.
 *
 * A purge walks the tenant's expired runs in "ord" order, at most
 * RETENTION_BATCH runs a transaction, so a tenant with a year of runs
 * never holds the database's writer lock (SQLite) or a huge transaction
 * (PostgreSQL) for the whole of it; each transaction deletes its runs'
 * outputs, logs and records and appends its "retention.purge" audit
 * event, so the audit says exactly what went, never more, never less.
 * The walk resumes after the last ord it saw, so the runs it keeps are
 * not read again by the next transaction of the same purge.
 *
 * What hangs off a run (sql/migrations): run_outputs and run_logs (deleted
 * with it); comparisons and comparison_jobs (append-only, with foreign
 * keys to their first runs: a run they name is kept, and with
 * include_referenced loses only its outputs and log while one of those
 * rows holds it); evidence_links (no foreign key: the chain keeps the
 * run's linked body, which is what a comparison's evidence bundle reads);
 * audit_events and idempotency_keys (they name a run's id in text only).
 */
#include "sql/store_internal.h"

#include <string.h>

/* Runs one transaction of a purge looks at (deleted or kept). */
#define RETENTION_BATCH 100

/* A run is referenced when a comparison rests on it: it was queued as a
 * side of one (comparison_id: every repeat), or a comparison or a
 * comparison job recorded before that column names it. An approval judges
 * a comparison, so its runs are those of the comparison. Even with
 * include_referenced, a "held" run keeps its record (it is a foreign key
 * of an append-only row: the first run of each side), and a "pending"
 * one is kept whole (its comparison has not settled: the verdict still
 * needs its outputs). */
#define RETENTION_HELD                                                                             \
	"(EXISTS (SELECT 1 FROM comparisons c WHERE c.tenant_id = r.tenant_id AND "                \
	"(c.baseline_run_id = r.id OR c.candidate_run_id = r.id)) OR EXISTS (SELECT 1 FROM "       \
	"comparison_jobs j WHERE j.tenant_id = r.tenant_id AND (j.baseline_run_id = r.id OR "      \
	"j.candidate_run_id = r.id)))"
#define RETENTION_PENDING                                                                          \
	"(r.comparison_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM comparisons s WHERE "          \
	"s.tenant_id = r.tenant_id AND s.id = r.comparison_id))"

static const char batch_sql[] =
    "SELECT r.ord, r.id, CASE WHEN r.comparison_id IS NOT NULL OR " RETENTION_HELD
    " THEN 1 ELSE 0 END, CASE WHEN " RETENTION_HELD
    " THEN 1 ELSE 0 END, CASE WHEN " RETENTION_PENDING " THEN 1 ELSE 0 END "
    "FROM runs r WHERE r.tenant_id = ? AND r.ord > ? "
    "AND r.status IN ('completed', 'failed', 'degraded', 'cancelled') "
    "AND r.finished_at <> '' AND r.finished_at < ? ORDER BY r.ord LIMIT ?";

static const struct colspec batch_cols[] = {
    {"ord", C_INT}, {"id", C_TEXT}, {"referenced", C_INT}, {"held", C_INT}, {"pending", C_INT}};
static const struct colspec count_cols[] = {{"n", C_INT}};

struct purge_arg {
	const char *tenant_id;
	const struct store_retention *opt;
	const char *actor;
	char cutoff[32];
	long long after; /* the last ord a committed batch looked at */
	/* this batch's, reset at each attempt */
	struct store_retention_result got;
	long long last_ord;
	int seen;
};

static long long jint_of(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* What hangs off a run and goes with it: counted (dry run) or deleted. */
struct run_rows {
	const char *count_sql;
	const char *delete_sql;
};

static const struct run_rows outputs_rows = {
    "SELECT COUNT(*) FROM run_outputs WHERE tenant_id = ? AND run_id = ?",
    "DELETE FROM run_outputs WHERE tenant_id = ? AND run_id = ?"};
static const struct run_rows logs_rows = {
    "SELECT COUNT(*) FROM run_logs WHERE tenant_id = ? AND run_id = ?",
    "DELETE FROM run_logs WHERE tenant_id = ? AND run_id = ?"};

/* The rows t of the tenant's run id, added to *n. */
static enum store_rc take_rows(struct store *st, struct purge_arg *a, const struct run_rows *t,
                               const char *id, long long *n)
{
	struct param p[] = {PT(a->tenant_id), PT(id)};
	json_t *row = NULL;
	SQLLEN rows = 0;
	enum store_rc rc;

	if (a->opt->dry_run) {
		rc = store_q_row(st, t->count_sql, p, NPARAMS(p), count_cols, NPARAMS(count_cols),
		                 &row);
		if (!rc)
			*n += jint_of(row, "n");
		json_decref(row);
		return rc;
	}
	rc = store_q_exec(st, t->delete_sql, p, NPARAMS(p), NULL, &rows);
	if (!rc && rows > 0)
		*n += (long long)rows;
	return rc;
}

static enum store_rc purge_run(struct store *st, struct purge_arg *a, const char *id, int held)
{
	struct param p[] = {PT(a->tenant_id), PT(id)};
	SQLLEN rows = 0;
	enum store_rc rc;

	rc = take_rows(st, a, &outputs_rows, id, &a->got.outputs);
	if (!rc)
		rc = take_rows(st, a, &logs_rows, id, &a->got.logs);
	if (rc)
		return rc;
	if (held) {
		a->got.kept++;
		return STORE_OK;
	}
	if (a->opt->dry_run) {
		a->got.runs++;
		return STORE_OK;
	}
	rc = store_q_exec(st, "DELETE FROM runs WHERE tenant_id = ? AND id = ?", p, NPARAMS(p),
	                  NULL, &rows);
	if (!rc && rows > 0)
		a->got.runs += (long long)rows;
	return rc;
}

static enum store_rc tx_purge_batch(struct store *st, void *arg)
{
	struct purge_arg *a = arg;
	struct param p[] = {PT(a->tenant_id),
	                    {.type = P_BIGINT, .i = a->after},
	                    PT(a->cutoff),
	                    PI(RETENTION_BATCH)};
	json_t *list = json_array(), *r, *detail;
	enum store_rc rc;
	size_t i;

	memset(&a->got, 0, sizeof a->got);
	a->last_ord = a->after;
	a->seen = 0;
	rc = store_q_rows(st, batch_sql, p, NPARAMS(p), batch_cols, NPARAMS(batch_cols), list);
	json_array_foreach(list, i, r)
	{
		if (rc)
			break;
		a->seen++;
		a->last_ord = jint_of(r, "ord");
		if (jint_of(r, "referenced") &&
		    (!a->opt->include_referenced || jint_of(r, "pending"))) {
			a->got.kept++;
			continue;
		}
		rc = purge_run(st, a, json_string_value(json_object_get(r, "id")),
		               (int)jint_of(r, "held"));
	}
	json_decref(list);
	if (rc || a->opt->dry_run || a->got.runs + a->got.outputs + a->got.logs == 0)
		return rc;
	/* counts only: which runs went is not kept anywhere but the chain */
	detail = json_pack("{s:I,s:I,s:I,s:I,s:i,s:b}", "runs", (json_int_t)a->got.runs, "outputs",
	                   (json_int_t)a->got.outputs, "logs", (json_int_t)a->got.logs, "kept",
	                   (json_int_t)a->got.kept, "retention_days", a->opt->retention_days,
	                   "include_referenced", a->opt->include_referenced);
	rc = detail
	         ? store_audit_insert(st, a->tenant_id, a->actor, "retention.purge", NULL, detail)
	         : STORE_ERROR;
	json_decref(detail);
	return rc;
}

enum store_rc store_retention_purge(struct store *st, const char *tenant_id,
                                    const struct store_retention *opt, const char *actor,
                                    struct store_retention_result *out)
{
	struct purge_arg a;
	enum store_rc rc;

	memset(out, 0, sizeof *out);
	if (!tenant_id || !store_is_lower_hex(tenant_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	if (!opt || opt->retention_days < 1 || opt->retention_days > STORE_RETENTION_DAYS_MAX) {
		store_seterr(st, "retention: retention_days must be from 1 to %d",
		             STORE_RETENTION_DAYS_MAX);
		return STORE_ERROR;
	}
	memset(&a, 0, sizeof a);
	a.tenant_id = tenant_id;
	a.opt = opt;
	a.actor = actor;
	store_iso_from_now(-(long long)opt->retention_days * 86400000LL, a.cutoff);
	for (;;) {
		/* a dry run writes nothing: plain reads */
		rc = opt->dry_run ? store_read(st, tx_purge_batch, &a)
		                  : store_tx(st, tx_purge_batch, &a);
		if (rc)
			return rc;
		out->runs += a.got.runs;
		out->outputs += a.got.outputs;
		out->logs += a.got.logs;
		out->kept += a.got.kept;
		out->transactions += !opt->dry_run && a.got.runs + a.got.outputs + a.got.logs > 0;
		if (a.seen < RETENTION_BATCH)
			return STORE_OK;
		a.after = a.last_ord;
	}
}
