/*
 * GET /metrics (public here; the web server lets only loopback in): the
 * Prometheus text format 0.0.4 (docs/metrics.md). The pool's own counters
 * come from the shared mapping (fcgi/http/metrics.h), the store's figures
 * from one read at scrape time (store_metrics_read). A store that does not
 * answer is olivares_store_up 0 beside the pool's counters, never a 503:
 * the scrape is how the operator sees it is down.
 */
#include <stdio.h>
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/http/metrics.h"
#include "fcgi/http/prom.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* a scrape past this is a bug (the series are bounded), answered 500 */
#define SCRAPE_MAX (8u << 20)

/* bounds (seconds) of the store's histograms: a run lasts up to the
 * runner's 600 s timeout, a step from a millisecond to a minute */
static const double run_bounds[] = {0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
static const double step_bounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60};

static void le_label(char *out, size_t n, double bound)
{
	snprintf(out, n, "%g", bound);
}

/* name_bucket{extra...,le}, name_sum, name_count from cumulative counts */
static void histogram(struct http_prom *p, const char *name, const double *bounds, size_t nb,
                      const unsigned long long *le, unsigned long long count, double sum)
{
	char bucket[96], suffix[96], b[32];
	const char *labels[2];
	size_t i;

	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	labels[0] = "le";
	for (i = 0; i < nb; i++) {
		le_label(b, sizeof(b), bounds[i]);
		labels[1] = b;
		http_prom_sample(p, bucket, labels, 1, (double)le[i]);
	}
	labels[1] = "+Inf";
	http_prom_sample(p, bucket, labels, 1, (double)count);
	snprintf(suffix, sizeof(suffix), "%s_sum", name);
	http_prom_sample(p, suffix, NULL, 0, sum);
	snprintf(suffix, sizeof(suffix), "%s_count", name);
	http_prom_sample(p, suffix, NULL, 0, (double)count);
}

static void store_histogram(struct http_prom *p, const char *name, const double *bounds, size_t nb,
                            const struct store_metrics_hist *h)
{
	unsigned long long le[STORE_METRICS_BUCKETS_MAX];
	size_t i;

	for (i = 0; i < nb; i++)
		le[i] = h->le[i] < 0 ? 0 : (unsigned long long)h->le[i];
	histogram(p, name, bounds, nb, le, h->count < 0 ? 0 : (unsigned long long)h->count, h->sum);
}

static const char *route_label(const struct http_request *req, int slot)
{
	if (slot == HTTP_METRICS_SLOT_ADMIN)
		return "/admin";
	if (slot >= HTTP_METRICS_SLOT_ROUTE &&
	    (size_t)(slot - HTTP_METRICS_SLOT_ROUTE) < req->worker->nroutes)
		return req->worker->routes[slot - HTTP_METRICS_SLOT_ROUTE].pattern;
	return "unmatched";
}

static void pool_metrics(struct http_request *req, struct http_prom *p)
{
	static struct http_metrics_series series[HTTP_METRICS_SERIES];
	struct http_metrics_totals t;
	const char *labels[6];
	char status[8];
	size_t n, i;

	http_prom_family(p, "olivares_build_info", "gauge",
	                 "The version of olivares-fcgi answering, always 1.");
	labels[0] = "version";
	labels[1] = PACKAGE_VERSION;
	http_prom_sample(p, "olivares_build_info", labels, 1, 1);

	http_prom_family(p, "olivares_http_requests_total", "counter",
	                 "Requests the pool answered, by route pattern, method and status.");
	n = http_metrics_series(series, HTTP_METRICS_SERIES);
	for (i = 0; i < n; i++) {
		labels[0] = "route";
		labels[1] = route_label(req, series[i].slot);
		labels[2] = "method";
		labels[3] = (size_t)series[i].method < http_metrics_nmethods
		                ? http_metrics_methods[series[i].method]
		                : "other";
		labels[4] = "status";
		snprintf(status, sizeof(status), "%d", series[i].status);
		labels[5] = status;
		http_prom_sample(p, "olivares_http_requests_total", labels, 3, (double)series[i].n);
	}

	http_metrics_totals(&t);
	http_prom_family(p, "olivares_http_request_duration_seconds", "histogram",
	                 "Time from a request's start in the worker to its reply.");
	histogram(p, "olivares_http_request_duration_seconds", http_metrics_duration_bounds,
	          HTTP_METRICS_DURATION_BUCKETS, t.duration_le, t.duration_count, t.duration_sum);
	http_prom_family(p, "olivares_http_requests_uncounted_total", "counter",
	                 "Requests left out of olivares_http_requests_total: its table was full.");
	http_prom_sample(p, "olivares_http_requests_uncounted_total", NULL, 0, (double)t.dropped);
	http_prom_family(p, "olivares_worker_restarts_total", "counter",
	                 "Workers that died and that the master replaced.");
	http_prom_sample(p, "olivares_worker_restarts_total", NULL, 0, (double)t.worker_restarts);
	http_prom_family(p, "olivares_store_retries_total", "counter",
	                 "Store transactions the workers ran again: on a lock or serialization "
	                 "conflict, or on a new connection after one was lost.");
	http_prom_sample(p, "olivares_store_retries_total", NULL, 0, (double)t.store_retries);
	http_prom_family(p, "olivares_store_unavailable_total", "counter",
	                 "API answers 503 storage_unavailable.");
	http_prom_sample(p, "olivares_store_unavailable_total", NULL, 0,
	                 (double)t.store_unavailable);
}

static void store_part(struct http_request *req, struct http_prom *p, const struct store_metrics *m)
{
	const char *labels[6];
	json_t *e;
	size_t i;
	int by_tenant = strcmp(req->cfg->metrics_tenant_labels, "true") == 0;

	http_prom_family(p, "olivares_runs", "gauge",
	                 by_tenant ? "Runs the store holds, by status, backend and tenant name."
	                           : "Runs the store holds, by status and backend.");
	json_array_foreach(m->runs, i, e)
	{
		labels[0] = "status";
		labels[1] = json_string_value(json_object_get(e, "status"));
		labels[2] = "backend";
		labels[3] = json_string_value(json_object_get(e, "backend"));
		labels[4] = "tenant";
		labels[5] = by_tenant ? json_string_value(json_object_get(e, "tenant")) : NULL;
		if (!labels[1] || !labels[3])
			continue;
		http_prom_sample(p, "olivares_runs", labels, 3,
		                 (double)json_integer_value(json_object_get(e, "n")));
	}
	http_prom_family(p, "olivares_queue_depth", "gauge",
	                 "Runs queued, waiting for an executor to claim them.");
	http_prom_sample(p, "olivares_queue_depth", NULL, 0, (double)m->queue_depth);
	http_prom_family(p, "olivares_queue_oldest_age_seconds", "gauge",
	                 "Seconds since the oldest queued run was queued (0: none is queued).");
	http_prom_sample(p, "olivares_queue_oldest_age_seconds", NULL, 0, m->queue_oldest_age);
	http_prom_family(p, "olivares_run_duration_seconds", "histogram",
	                 "Duration of the ended runs the store holds (started to finished).");
	store_histogram(p, "olivares_run_duration_seconds", run_bounds,
	                sizeof(run_bounds) / sizeof(run_bounds[0]), &m->run_duration);
	http_prom_family(p, "olivares_step_duration_seconds", "histogram",
	                 "Duration of the recorded steps the store holds.");
	store_histogram(p, "olivares_step_duration_seconds", step_bounds,
	                sizeof(step_bounds) / sizeof(step_bounds[0]), &m->step_duration);
	http_prom_family(p, "olivares_executor_last_heartbeat_timestamp_seconds", "gauge",
	                 "Last heartbeat of each executor not stopped, seconds since the epoch.");
	json_array_foreach(m->executors, i, e)
	{
		labels[0] = "executor";
		labels[1] = json_string_value(json_object_get(e, "id"));
		labels[2] = "host";
		labels[3] = json_string_value(json_object_get(e, "host"));
		if (!labels[1] || !json_is_number(json_object_get(e, "heartbeat_seconds")))
			continue;
		http_prom_sample(p, "olivares_executor_last_heartbeat_timestamp_seconds", labels, 2,
		                 json_number_value(json_object_get(e, "heartbeat_seconds")));
	}
	http_prom_family(p, "olivares_executors", "gauge",
	                 "Executors registered, by state: live (heartbeat within the lease), lost "
	                 "(no heartbeat for longer, not stopped), stopped.");
	labels[0] = "state";
	labels[1] = "live";
	http_prom_sample(p, "olivares_executors", labels, 1, (double)m->executors_live);
	labels[1] = "lost";
	http_prom_sample(p, "olivares_executors", labels, 1, (double)m->executors_lost);
	labels[1] = "stopped";
	http_prom_sample(p, "olivares_executors", labels, 1, (double)m->executors_stopped);
}

int api_metrics(struct http_request *req, struct model_error *err)
{
	struct store_metrics_query q;
	struct store_metrics m;
	struct model_error ignored;
	struct http_prom p;
	enum store_rc rc = STORE_UNAVAILABLE;
	int up = 0;

	memset(&m, 0, sizeof(m));
	http_prom_init(&p, SCRAPE_MAX);
	pool_metrics(req, &p);
	if (req->store) {
		memset(&q, 0, sizeof(q));
		q.run_bounds = run_bounds;
		q.nrun_bounds = sizeof(run_bounds) / sizeof(run_bounds[0]);
		q.step_bounds = step_bounds;
		q.nstep_bounds = sizeof(step_bounds) / sizeof(step_bounds[0]);
		q.lease_seconds = req->cfg->executor_lease_seconds;
		q.by_tenant = strcmp(req->cfg->metrics_tenant_labels, "true") == 0;
		rc = store_metrics_read(req->store, &q, &m);
		if (rc)
			/* logged, and the connection reopened next time; the
			 * scrape itself still answers */
			http_store_fail(req, rc, "metrics", &ignored);
		up = rc == STORE_OK;
	}
	http_prom_family(&p, "olivares_store_up", "gauge",
	                 "1 when the store answered this scrape's queries, else 0 (and the "
	                 "store's figures are left out).");
	http_prom_sample(&p, "olivares_store_up", NULL, 0, up);
	if (up)
		store_part(req, &p, &m);
	store_metrics_clear(&m);
	if (p.overflow) {
		http_prom_release(&p);
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "metrics: the scrape is too large");
	}
	http_reply_raw(req, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, p.buf.data,
	               p.buf.len);
	http_prom_release(&p);
	return 0;
}
