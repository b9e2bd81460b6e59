/*
 * The store's part of the /metrics scrape (store.h, store_metrics_read):
 * counts over every tenant's runs, outputs and the executors, read in one
 * snapshot-free read (each SELECT its own statement). The operator's view,
 * like store_executor_list: no row of a tenant is returned, only counts,
 * and a tenant's name only when the operator asked for it (by_tenant).
 * Every bound and cutoff is a bound parameter.
 */
#include <stdio.h>
#include <string.h>

#include "model/buf.h"
#include "sql/store.h"
#include "sql/store_internal.h"

struct metrics_arg {
	const struct store_metrics_query *q;
	struct store_metrics *m;
	char cutoff[32];
};

static const struct colspec runs_cols[] = {{"status", C_TEXT}, {"backend", C_TEXT}, {"n", C_INT}};
static const struct colspec runs_tenant_cols[] = {
    {"status", C_TEXT}, {"backend", C_TEXT}, {"tenant", C_TEXT}, {"n", C_INT}};
static const struct colspec queue_cols[] = {{"n", C_INT}, {"oldest", C_TEXT}};
static const struct colspec exec_cols[] = {
    {"id", C_TEXT}, {"host", C_TEXT}, {"heartbeat_at", C_TEXT}};
static const struct colspec exec_state_cols[] = {
    {"live", C_INT}, {"lost", C_INT}, {"stopped", C_INT}};

/* The histogram columns: count, sum and one per bound, named c, s, b0.. */
static const struct colspec hist_cols[2 + STORE_METRICS_BUCKETS_MAX] = {
    {"c", C_INT},   {"s", C_REAL},  {"b0", C_INT},  {"b1", C_INT},  {"b2", C_INT},  {"b3", C_INT},
    {"b4", C_INT},  {"b5", C_INT},  {"b6", C_INT},  {"b7", C_INT},  {"b8", C_INT},  {"b9", C_INT},
    {"b10", C_INT}, {"b11", C_INT}, {"b12", C_INT}, {"b13", C_INT}, {"b14", C_INT}, {"b15", C_INT}};

static int bounds_ok(const double *b, size_t n)
{
	size_t i;

	if (!b || n < 1 || n > STORE_METRICS_BUCKETS_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!(b[i] > 0) || (i && !(b[i] > b[i - 1])))
			return 0;
	return 1;
}

/*
 * One histogram: SELECT COUNT(v), SUM(v), SUM(CASE WHEN v <= ? ...) ...
 * FROM (inner) x, where inner yields the values in column v (seconds) and
 * the bounds are bound. scale multiplies a bound into the unit of v.
 */
static enum store_rc read_hist(struct store *st, const char *inner, const double *bounds, size_t n,
                               double scale, double sum_scale, struct store_metrics_hist *h)
{
	struct param p[STORE_METRICS_BUCKETS_MAX];
	struct model_buf sql;
	json_t *row = NULL;
	enum store_rc rc;
	size_t i;
	char key[24];

	memset(h, 0, sizeof(*h));
	memset(p, 0, sizeof(p));
	model_buf_init(&sql, 4096);
	model_buf_must_fit(model_buf_adds(&sql, "SELECT COUNT(v), SUM(v)"));
	for (i = 0; i < n; i++) {
		p[i].type = P_REAL;
		p[i].d = bounds[i] * scale;
		model_buf_must_fit(
		    model_buf_adds(&sql, ", SUM(CASE WHEN v <= ? THEN 1 ELSE 0 END)"));
	}
	model_buf_must_fit(model_buf_printf(&sql, " FROM (%s) x", inner));
	rc = store_q_row(st, sql.data, p, n, hist_cols, 2 + n, &row);
	if (rc)
		goto out;
	h->count = json_integer_value(json_object_get(row, "c"));
	h->sum = json_number_value(json_object_get(row, "s")) * sum_scale;
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "b%zu", i);
		h->le[i] = json_integer_value(json_object_get(row, key));
	}
out:
	json_decref(row);
	model_buf_release(&sql);
	return rc;
}

static enum store_rc tx_metrics(struct store *st, void *arg)
{
	struct metrics_arg *a = arg;
	struct store_metrics *m = a->m;
	struct param cut[] = {PT(a->cutoff), PT(a->cutoff)};
	json_t *row = NULL, *e;
	const char *s;
	char now[32];
	long long ms, now_ms;
	enum store_rc rc;
	size_t i;

	/* re-runnable: drop what an earlier attempt built */
	store_metrics_clear(m);
	memset(m, 0, sizeof(*m));
	m->runs = json_array();
	m->executors = json_array();
	if (a->q->by_tenant)
		rc = store_q_rows(st,
		                  "SELECT r.status, r.backend, t.name, COUNT(*) FROM runs r JOIN "
		                  "tenants t ON t.id = r.tenant_id GROUP BY r.status, r.backend, "
		                  "t.name ORDER BY r.status, r.backend, t.name",
		                  NULL, 0, runs_tenant_cols, NPARAMS(runs_tenant_cols), m->runs);
	else
		rc = store_q_rows(st,
		                  "SELECT status, backend, COUNT(*) FROM runs GROUP BY status, "
		                  "backend ORDER BY status, backend",
		                  NULL, 0, runs_cols, NPARAMS(runs_cols), m->runs);
	if (rc)
		return rc;
	rc = store_q_row(st, "SELECT COUNT(*), MIN(queued_at) FROM runs WHERE status = 'queued'",
	                 NULL, 0, queue_cols, NPARAMS(queue_cols), &row);
	if (rc)
		return rc;
	m->queue_depth = json_integer_value(json_object_get(row, "n"));
	s = json_string_value(json_object_get(row, "oldest"));
	if (m->queue_depth > 0 && s && store_iso_ms(s, &ms) == 0) {
		store_iso_from_now(0, now);
		if (store_iso_ms(now, &now_ms) == 0 && now_ms > ms)
			m->queue_oldest_age = (double)(now_ms - ms) / 1000.0;
	}
	json_decref(row);
	row = NULL;
	/* a run's time is finished_at - started_at; both are set ('' while
	 * unknown) once it ended; cast from the stored ISO text */
	rc = read_hist(st,
	               st->dialect == DIALECT_POSTGRES
	                   ? "SELECT EXTRACT(EPOCH FROM (CAST(finished_at AS TIMESTAMPTZ) - "
	                     "CAST(started_at AS TIMESTAMPTZ))) AS v FROM runs WHERE status IN "
	                     "('completed', 'failed', 'degraded', 'cancelled') AND started_at <> "
	                     "'' AND finished_at <> ''"
	                   : "SELECT (julianday(finished_at) - julianday(started_at)) * 86400.0 AS "
	                     "v FROM runs WHERE status IN ('completed', 'failed', 'degraded', "
	                     "'cancelled') AND started_at <> '' AND finished_at <> ''",
	               a->q->run_bounds, a->q->nrun_bounds, 1.0, 1.0, &m->run_duration);
	if (rc)
		return rc;
	/* steps: duration_us, compared in microseconds, summed in seconds */
	rc = read_hist(st, "SELECT duration_us AS v FROM run_outputs WHERE duration_us IS NOT NULL",
	               a->q->step_bounds, a->q->nstep_bounds, 1e6, 1e-6, &m->step_duration);
	if (rc)
		return rc;
	rc = store_q_row(st,
	                 "SELECT SUM(CASE WHEN stopped_at IS NULL AND heartbeat_at >= ? THEN 1 "
	                 "ELSE 0 END), SUM(CASE WHEN stopped_at IS NULL AND heartbeat_at < ? "
	                 "THEN 1 ELSE 0 END), SUM(CASE WHEN stopped_at IS NULL THEN 0 ELSE 1 "
	                 "END) FROM executors",
	                 cut, NPARAMS(cut), exec_state_cols, NPARAMS(exec_state_cols), &row);
	if (rc)
		return rc;
	m->executors_live = json_integer_value(json_object_get(row, "live"));
	m->executors_lost = json_integer_value(json_object_get(row, "lost"));
	m->executors_stopped = json_integer_value(json_object_get(row, "stopped"));
	json_decref(row);
	/* the stopped ones are left out: their number only grows */
	rc = store_q_rows(st,
	                  "SELECT id, host, heartbeat_at FROM executors WHERE stopped_at IS "
	                  "NULL ORDER BY heartbeat_at DESC, id LIMIT 200",
	                  NULL, 0, exec_cols, NPARAMS(exec_cols), m->executors);
	if (rc)
		return rc;
	json_array_foreach(m->executors, i, e)
	{
		s = json_string_value(json_object_get(e, "heartbeat_at"));
		if (s && store_iso_ms(s, &ms) == 0)
			json_object_set_new(e, "heartbeat_seconds", json_real((double)ms / 1000.0));
	}
	return STORE_OK;
}

enum store_rc store_metrics_read(struct store *st, const struct store_metrics_query *q,
                                 struct store_metrics *out)
{
	struct metrics_arg a;
	enum store_rc rc;

	memset(out, 0, sizeof(*out));
	if (!q || !bounds_ok(q->run_bounds, q->nrun_bounds) ||
	    !bounds_ok(q->step_bounds, q->nstep_bounds) || q->lease_seconds < 1) {
		store_seterr(st,
		             "metrics: ascending positive bounds (1..%d) and a lease >= 1 s "
		             "are required",
		             STORE_METRICS_BUCKETS_MAX);
		return STORE_ERROR;
	}
	memset(&a, 0, sizeof(a));
	a.q = q;
	a.m = out;
	store_iso_from_now(-1000LL * q->lease_seconds, a.cutoff);
	rc = store_read(st, tx_metrics, &a);
	if (rc) {
		store_metrics_clear(out);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void store_metrics_clear(struct store_metrics *m)
{
	json_decref(m->runs);
	m->runs = NULL;
	json_decref(m->executors);
	m->executors = NULL;
}
