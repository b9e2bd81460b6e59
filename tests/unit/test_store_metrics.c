/*
 * The store's part of a /metrics scrape (sql/metrics.c): runs counted by
 * status and backend (and tenant name only when asked), the queue, the run
 * and step duration histograms from the stored rows, the executors by
 * state; bounds that are not ascending refused. Part of the test_store
 * program (store_fixture.h): on SQLite and, with OLIVARES_TEST_PG_DSN, on
 * PostgreSQL.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/unit/store_fixture.h"

#define ACTOR "44444444444444444444444444444444"
#define SCN "5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c"

static const double run_b[] = {0.5, 2, 60};
static const double step_b[] = {0.001, 0.01, 1};

/* Record a run of tenant: status, backend, finished seconds after its
 * start, outputs (borrowed; may be NULL for none). */
static void record(const char *tenant, const char *status, const char *backend,
                   const char *finished_at, json_t *outputs)
{
	json_t *none = json_array(), *run = NULL;
	struct store_run r = sample_run(NULL, outputs ? outputs : none);
	enum store_rc rc;

	r.status = status;
	r.backend = backend;
	r.finished_at = finished_at;
	if (strcmp(status, "completed") != 0) {
		r.steps_ok = 0;
		r.steps_error = r.steps_total;
		r.reason = "agent exited with status 1";
	}
	rc = store_run_record(st, tenant, ACTOR, &r, &run);
	ck_assert_msg(rc == STORE_OK, "record: %d %s", rc, store_last_error(st));
	json_decref(run);
	json_decref(none);
}

static void queue_one(const char *tenant)
{
	struct store_run_job j;
	json_t *job = jload("{\"steps\":[]}"), *run = NULL;
	enum store_rc rc;

	memset(&j, 0, sizeof j);
	j.kind = "simulation";
	j.scenario_id = SCN;
	j.scenario_version = 1;
	j.scenario_digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	j.variant = "candidate";
	j.backend = "inproc-mock";
	j.steps_total = 1;
	j.job = job;
	rc = store_run_enqueue(st, tenant, ACTOR, &j, 100, NULL, &run);
	ck_assert_msg(rc == STORE_OK, "enqueue: %d %s", rc, store_last_error(st));
	json_decref(run);
	json_decref(job);
}

/* The count of the runs entry with status and backend (and tenant when
 * not NULL); -1 when there is none. */
static long long runs_n(json_t *runs, const char *status, const char *backend, const char *tenant)
{
	json_t *e;
	size_t i;

	json_array_foreach(runs, i, e)
	{
		if (strcmp(jstr(e, "status"), status) == 0 &&
		    strcmp(jstr(e, "backend"), backend) == 0 &&
		    (!tenant || (jstr(e, "tenant") && strcmp(jstr(e, "tenant"), tenant) == 0)))
			return jint(e, "n");
	}
	return -1;
}

static struct store_metrics_query query(int by_tenant)
{
	struct store_metrics_query q;

	memset(&q, 0, sizeof q);
	q.run_bounds = run_b;
	q.nrun_bounds = 3;
	q.step_bounds = step_b;
	q.nstep_bounds = 3;
	q.lease_seconds = 15;
	q.by_tenant = by_tenant;
	return q;
}

START_TEST(test_metrics_read)
{
	struct store_metrics m;
	struct store_metrics_query q = query(0);
	struct store_executor ex = {.id = "host-a:1",
	                            .host = "host-a",
	                            .pid = 1,
	                            .slots = 2,
	                            .backends = "inproc-mock",
	                            .preflight = NULL};
	static const int seqs[] = {1, 2};
	json_t *outs = make_outputs(seqs, 2), *e;
	char a[33], b[33];
	size_t i;

	two_tenants(a, b);
	/* steps of 2 ms and 700 ms */
	json_object_set_new(json_array_get(outs, 0), "duration_ms", json_real(2.0));
	json_object_set_new(json_array_get(outs, 1), "duration_ms", json_real(700.0));
	/* runs of 1 s, 45 s (acme) and 1 s (globex) */
	record(a, "completed", "inproc-mock", "2024-01-01T00:00:01.000Z", outs);
	record(a, "completed", "inproc-mock", "2024-01-01T00:00:45.000Z", NULL);
	record(b, "failed", "namespaces", "2024-01-01T00:00:01.000Z", NULL);
	queue_one(b);
	ck_assert_int_eq(store_executor_register(st, &ex), STORE_OK);

	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_OK);
	ck_assert_uint_eq(json_array_size(m.runs), 3);
	ck_assert_int_eq(runs_n(m.runs, "completed", "inproc-mock", NULL), 2);
	ck_assert_int_eq(runs_n(m.runs, "failed", "namespaces", NULL), 1);
	ck_assert_int_eq(runs_n(m.runs, "queued", "inproc-mock", NULL), 1);
	/* no tenant by default, neither name nor id */
	json_array_foreach(m.runs, i, e)
	{
		ck_assert_ptr_null(json_object_get(e, "tenant"));
		ck_assert_ptr_null(json_object_get(e, "tenant_id"));
	}
	ck_assert_int_eq(m.queue_depth, 1);
	ck_assert(m.queue_oldest_age >= 0 && m.queue_oldest_age < 600);
	/* the queued run has not ended: three runs of 1, 45 and 1 s */
	ck_assert_int_eq(m.run_duration.count, 3);
	ck_assert_int_eq(m.run_duration.le[0], 0);
	ck_assert_int_eq(m.run_duration.le[1], 2);
	ck_assert_int_eq(m.run_duration.le[2], 3);
	ck_assert_msg(fabs(m.run_duration.sum - 47.0) < 0.01, "sum %f", m.run_duration.sum);
	/* only the outputs with a duration */
	ck_assert_int_eq(m.step_duration.count, 2);
	ck_assert_int_eq(m.step_duration.le[0], 0);
	ck_assert_int_eq(m.step_duration.le[1], 1);
	ck_assert_int_eq(m.step_duration.le[2], 2);
	ck_assert_msg(fabs(m.step_duration.sum - 0.702) < 1e-6, "sum %f", m.step_duration.sum);
	ck_assert_int_eq(m.executors_live, 1);
	ck_assert_int_eq(m.executors_lost, 0);
	ck_assert_int_eq(m.executors_stopped, 0);
	ck_assert_uint_eq(json_array_size(m.executors), 1);
	e = json_array_get(m.executors, 0);
	ck_assert_str_eq(jstr(e, "id"), "host-a:1");
	ck_assert_str_eq(jstr(e, "host"), "host-a");
	ck_assert(fabs(json_number_value(json_object_get(e, "heartbeat_seconds")) -
	               (double)time(NULL)) < 600);
	store_metrics_clear(&m);

	/* stopped: counted as such, and no heartbeat series any more */
	ck_assert_int_eq(store_executor_stop(st, "host-a:1"), STORE_OK);
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_OK);
	ck_assert_int_eq(m.executors_live, 0);
	ck_assert_int_eq(m.executors_stopped, 1);
	ck_assert_uint_eq(json_array_size(m.executors), 0);
	store_metrics_clear(&m);

	/* by tenant: the tenant's name, never its id */
	q = query(1);
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_OK);
	ck_assert_uint_eq(json_array_size(m.runs), 3);
	ck_assert_int_eq(runs_n(m.runs, "completed", "inproc-mock", "acme"), 2);
	ck_assert_int_eq(runs_n(m.runs, "failed", "namespaces", "globex"), 1);
	ck_assert_int_eq(runs_n(m.runs, "queued", "inproc-mock", "globex"), 1);
	ck_assert_int_eq(runs_n(m.runs, "completed", "inproc-mock", "globex"), -1);
	store_metrics_clear(&m);
	json_decref(outs);
}
END_TEST

/* An empty store: zeros, and empty histograms. Bad bounds: refused. */
START_TEST(test_metrics_empty_and_bad)
{
	static const double desc[] = {2, 1};
	struct store_metrics m;
	struct store_metrics_query q = query(0);

	migrated();
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_OK);
	ck_assert_uint_eq(json_array_size(m.runs), 0);
	ck_assert_int_eq(m.queue_depth, 0);
	ck_assert(m.queue_oldest_age == 0);
	ck_assert_int_eq(m.run_duration.count, 0);
	ck_assert_int_eq(m.run_duration.le[2], 0);
	ck_assert(m.run_duration.sum == 0);
	ck_assert_int_eq(m.step_duration.count, 0);
	ck_assert_int_eq(m.executors_live + m.executors_lost + m.executors_stopped, 0);
	store_metrics_clear(&m);

	q.run_bounds = desc;
	q.nrun_bounds = 2;
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_ERROR);
	ck_assert_ptr_null(m.runs);
	ck_assert_ptr_null(m.executors);
	q = query(0);
	q.nstep_bounds = STORE_METRICS_BUCKETS_MAX + 1;
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_ERROR);
	q = query(0);
	q.lease_seconds = 0;
	ck_assert_int_eq(store_metrics_read(st, &q, &m), STORE_ERROR);
}
END_TEST

void store_metrics_cases(TCase *tc)
{
	tcase_add_test(tc, test_metrics_read);
	tcase_add_test(tc, test_metrics_empty_and_bad);
}
