/*
 * Runs as jobs in the store (sql/jobs.c, sql/executors.c): a run queued,
 * claimed once by one executor, heartbeated, given its outputs, finished;
 * the claim's fairness and its exactly-once under two processes; the
 * tenant's max_active; the sweep of a lost executor's run; cancel; a queued
 * comparison settled once; the executors' registry; an idempotent enqueue.
 * Part of the test_store program (store_fixture.h).
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/verdict.h"
#include "tests/unit/store_fixture.h"

#define SCN "5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c"
#define DIG "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ACTOR "44444444444444444444444444444444"
#define EX1 "host-a:1234"
#define EX2 "host-b:99"

/* A simulation job on backend with three steps; job object borrowed. */
static struct store_run_job mkjob(json_t *job, const char *backend)
{
	struct store_run_job j;

	memset(&j, 0, sizeof j);
	j.kind = "simulation";
	j.scenario_id = SCN;
	j.scenario_version = 1;
	j.scenario_digest = DIG;
	j.variant = "candidate";
	j.backend = backend;
	j.steps_total = 3;
	j.job = job;
	return j;
}

/* Queue one run of tenant (the case fails unless it is queued); its id
 * into id (may be NULL). */
static void enqueue(const char *tenant, json_t *job, const char *backend, char id[33])
{
	struct store_run_job j = mkjob(job, backend);
	json_t *run = NULL;
	enum store_rc rc;

	rc = store_run_enqueue(st, tenant, ACTOR, &j, 100000, NULL, &run);
	ck_assert_msg(rc == STORE_OK, "enqueue: %d %s", rc, store_last_error(st));
	if (id)
		snprintf(id, 33, "%s", jstr(run, "id"));
	json_decref(run);
}

static void mk_executor(const char *id, const char *backends, json_t *preflight)
{
	struct store_executor ex = {.id = id,
	                            .host = "host",
	                            .pid = 1234,
	                            .slots = 4,
	                            .backends = backends,
	                            .preflight = preflight};
	enum store_rc rc = store_executor_register(st, &ex);

	ck_assert_msg(rc == STORE_OK, "register: %s", store_last_error(st));
}

/* Claim as executor (the case fails unless a run is claimed). */
static void claim(const char *executor, const char *backends, struct store_claim *c)
{
	enum store_rc rc = store_run_claim(st, executor, backends, c);

	ck_assert_msg(rc == STORE_OK, "claim: %d %s", rc, store_last_error(st));
}

/* A finished run's terminal fields over outputs (borrowed). */
static struct store_run ended(json_t *outputs, const char *status)
{
	struct store_run r = sample_run(NULL, outputs);

	r.kind = NULL;
	r.scenario_id = NULL;
	r.started_at = NULL;
	r.status = status;
	return r;
}

/* The SHA-256 hex over outputs as the dispatch digests them, made here
 * with OpenSSL directly. */
static void digest_of(json_t *outputs, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32];
	unsigned int len = 0, i;
	char buf[64];
	json_t *o;
	size_t k;

	ck_assert(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1);
	json_array_foreach(outputs, k, o)
	{
		snprintf(buf, sizeof buf, "%lld", (long long)jint(o, "seq"));
		EVP_DigestUpdate(ctx, buf, strlen(buf) + 1);
		EVP_DigestUpdate(ctx, jstr(o, "key"), strlen(jstr(o, "key")) + 1);
		EVP_DigestUpdate(ctx, jstr(o, "output"), strlen(jstr(o, "output")) + 1);
		EVP_DigestUpdate(ctx, jstr(o, "status"), strlen(jstr(o, "status")) + 1);
	}
	ck_assert(EVP_DigestFinal_ex(ctx, md, &len) == 1);
	EVP_MD_CTX_free(ctx);
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

/* How many runs are run id and match cond (0 or 1). */
static long run_where(const char *id, const char *cond)
{
	char sql[512];

	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM runs WHERE id = '%s' AND %s", id, cond);
	return raw_count(sql);
}

/* A comparison of scenario SCN by suite "smoke", tolerance 0.1, between
 * jb and jk (made kind "comparison" here). */
static struct store_comparison_job mk_cj(struct store_run_job *jb, struct store_run_job *jk)
{
	struct store_comparison_job cj;

	jb->kind = jk->kind = "comparison";
	memset(&cj, 0, sizeof cj);
	cj.scenario_id = SCN;
	cj.scenario_version = 1;
	cj.suite = "smoke";
	cj.tolerance = 0.1;
	cj.baseline = jb;
	cj.candidate = jk;
	return cj;
}

/* An Idempotency-Key key of a run create, valid from T0 to T8. */
static struct store_idem mk_idem(const char *key)
{
	struct store_idem k;

	memset(&k, 0, sizeof k);
	k.key = key;
	k.route = "POST /v1/m/sandbox/scenarios/" SCN "/runs";
	k.request_sha256 = DIG;
	k.status = 202;
	k.now = T0;
	k.expires_at = T8;
	return k;
}

/* A queued run, claimed, heartbeated, given its outputs twice, finished:
 * every field read back. */
START_TEST(test_jobs_lifecycle)
{
	static const int s12[] = {1, 2}, s3[] = {3}, s1234[] = {1, 2, 3, 4}, s2[] = {2};
	char a[33], b[33], id[33];
	json_t *job = jload("{\"spec\":{\"steps\":3},\"recorded\":[1,2]}");
	json_t *o12 = make_outputs(s12, 2), *o3 = make_outputs(s3, 1);
	json_t *o1234 = make_outputs(s1234, 4), *o2 = make_outputs(s2, 1);
	struct store_run_job j = mkjob(job, "inproc-mock");
	struct store_claim c, none;
	struct store_run fin;
	json_t *run = NULL, *got = NULL, *outs = NULL, *audit = NULL, *ev;
	int cancel = -1;

	two_tenants(a, b);
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	snprintf(id, sizeof id, "%s", jstr(run, "id"));
	ck_assert_str_eq(jstr(run, "status"), "queued");
	ck_assert_str_eq(jstr(run, "kind"), "simulation");
	ck_assert_str_eq(jstr(run, "backend"), "inproc-mock");
	ck_assert_int_eq(jint(run, "steps_total"), 3);
	ck_assert_int_eq(jint(run, "steps_done"), 0);
	ck_assert_uint_eq(strlen(jstr(run, "queued_at")), 24);
	ck_assert(json_is_null(json_object_get(run, "runner")));
	ck_assert(json_is_null(json_object_get(run, "output_digest")));
	ck_assert(json_is_null(json_object_get(run, "started_at")));
	ck_assert(json_is_null(json_object_get(run, "finished_at")));
	ck_assert(json_is_null(json_object_get(run, "executor")));
	ck_assert(json_is_null(json_object_get(run, "comparison_id")));
	ck_assert(json_is_false(json_object_get(run, "cancel_requested")));
	ck_assert(json_is_false(json_object_get(run, "isolated")));
	ck_assert(json_is_false(json_object_get(run, "scored")));
	/* egress_requests and hermetic: none left, so hermetic */
	ck_assert_int_eq(jint(run, "egress_requests"), 0);
	ck_assert(json_is_true(json_object_get(run, "hermetic")));
	ck_assert_uint_eq(json_object_size(run), 38);
	/* the job is stored as compact JSON text; the audit event says queued */
	ck_assert_int_eq(run_where(id, "job = '{\"spec\":{\"steps\":3},\"recorded\":[1,2]}'"), 1);
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.run");
	ck_assert_str_eq(jstr(ev, "target_id"), id);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "status"), "queued");
	json_decref(audit);
	/* another tenant does not see it */
	ck_assert_int_eq(store_run_get(st, b, id, &got), STORE_NOT_FOUND);

	/* a claim for other backends takes nothing */
	ck_assert_int_eq(store_run_claim(st, EX1, "gvisor,namespaces", &none), STORE_NOT_FOUND);
	ck_assert_ptr_null(none.run);
	ck_assert_int_eq(store_run_claim(st, EX1, "gvisor,bogus", &none), STORE_ERROR);
	claim(EX1, "gvisor,inproc-mock", &c);
	ck_assert_str_eq(c.run_id, id);
	ck_assert_str_eq(c.tenant_id, a);
	ck_assert_str_eq(c.backend, "inproc-mock");
	ck_assert(json_equal(c.job, job));
	ck_assert_str_eq(jstr(c.run, "status"), "running");
	ck_assert_str_eq(jstr(c.run, "executor"), EX1);
	ck_assert_uint_eq(strlen(jstr(c.run, "started_at")), 24);
	ck_assert(json_is_null(json_object_get(c.run, "finished_at")));
	store_claim_clear(&c);
	ck_assert_ptr_null(c.run);
	/* claimed once */
	ck_assert_int_eq(store_run_claim(st, EX2, "inproc-mock", &none), STORE_NOT_FOUND);

	ck_assert_int_eq(store_run_heartbeat(st, id, EX1, &cancel), STORE_OK);
	ck_assert_int_eq(cancel, 0);
	ck_assert_int_eq(store_run_heartbeat(st, id, EX2, &cancel), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_append(st, id, EX1, o12), STORE_OK);
	ck_assert_int_eq(store_run_get(st, a, id, &got), STORE_OK);
	ck_assert_int_eq(jint(got, "steps_done"), 2);
	json_decref(got);
	/* the append path keeps a step's trace (migration 010) */
	json_object_set_new(json_array_get(o3, 0), "trace",
	                    jload("[{\"tool\":\"search\",\"args\":{\"q\":\"w\"},\"hit\":false,"
	                          "\"mock\":null,\"duration_us\":5,\"near_miss\":{\"mock\":0,"
	                          "\"tool\":\"search\",\"path\":\"$.q\",\"why\":\"missing\"}}]"));
	ck_assert_int_eq(store_run_append(st, id, EX1, o3), STORE_OK);
	/* a seq already stored, or the wrong executor: nothing written */
	ck_assert_int_eq(store_run_append(st, id, EX1, o2), STORE_ERROR);
	ck_assert_int_eq(store_run_append(st, id, EX2, o1234), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_outputs(st, a, id, &outs), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(outs, "outputs")), 3);
	ck_assert_int_eq(jint(json_array_get(json_object_get(outs, "outputs"), 2), "seq"), 3);
	ck_assert_str_eq(
	    jstr(json_object_get(
	             json_array_get(
	                 json_object_get(json_array_get(json_object_get(outs, "outputs"), 2),
	                                 "trace"),
	                 0),
	             "near_miss"),
	         "path"),
	    "$.q");
	ck_assert(json_is_null(
	    json_object_get(json_array_get(json_object_get(outs, "outputs"), 0), "trace")));
	json_decref(outs);
	ck_assert_int_eq(store_run_get(st, a, id, &got), STORE_OK);
	ck_assert_int_eq(jint(got, "steps_done"), 3);
	ck_assert_str_eq(jstr(got, "status"), "running");
	json_decref(got);

	/* finish: the output not stored yet (seq 4) is appended; a status
	 * outside completed|failed|cancelled is refused */
	fin = ended(o1234, "degraded");
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, NULL), STORE_ERROR);
	fin = ended(o1234, "completed");
	fin.steps_total = 4;
	fin.steps_ok = 4;
	ck_assert_int_eq(store_run_finish(st, id, EX2, &fin, NULL), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "completed");
	ck_assert_str_eq(jstr(got, "runner"), "olivares-runner/0.1.0");
	ck_assert_str_eq(jstr(got, "output_digest"), fin.output_digest);
	ck_assert_str_eq(jstr(got, "finished_at"), fin.finished_at);
	ck_assert_int_eq(jint(got, "steps_done"), 4);
	ck_assert_int_eq(jint(got, "steps_ok"), 4);
	ck_assert(json_is_true(json_object_get(got, "isolated")));
	ck_assert_str_eq(jstr(got, "kind"), "simulation");
	ck_assert_str_eq(jstr(got, "executor"), EX1);
	json_decref(got);
	ck_assert_int_eq(run_where(id, "job IS NULL"), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", id), 4);
	/* ended: the executor's calls find nothing */
	ck_assert_int_eq(store_run_heartbeat(st, id, EX1, &cancel), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, NULL), STORE_NOT_FOUND);
	json_decref(run);
	json_decref(job);
	json_decref(o12);
	json_decref(o3);
	json_decref(o1234);
	json_decref(o2);
}
END_TEST

/* The agent's log of a run (sql/logs.c): written by the executor that
 * holds the run, read back as written by its tenant only, replaced by a
 * second put, refused when it is not cleaned text or the run is not the
 * executor's; a run without a log reads back empty. */
START_TEST(test_jobs_log)
{
	static const char text[] = "line one\n\xef\xbf\xbd <b>two</b> & \"three\"\n";
	char a[33], b[33], id[33], other[33];
	json_t *job = jload("{\"spec\":{\"steps\":3}}");
	struct store_claim c;
	json_t *got = NULL;

	two_tenants(a, b);
	enqueue(a, job, "namespaces", id);
	enqueue(a, job, "namespaces", other);
	/* not claimed yet: no executor holds it */
	ck_assert_int_eq(store_run_log_put(st, id, EX1, "x", 1, 0), STORE_NOT_FOUND);
	claim(EX1, "namespaces", &c);
	ck_assert_str_eq(c.run_id, id);
	store_claim_clear(&c);
	/* the run of another executor, or text that is not cleaned: nothing */
	ck_assert_int_eq(store_run_log_put(st, id, EX2, "x", 1, 0), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_log_put(st, id, EX1, "esc \033[31m", 9, 0), STORE_ERROR);
	ck_assert_int_eq(store_run_log_put(st, id, EX1, "bad \xff", 5, 0), STORE_ERROR);
	ck_assert_int_eq(store_run_log_put(st, id, EX1, "x", 1, -1), STORE_ERROR);
	ck_assert_int_eq(count_where("run_logs", "run_id", id), 0);
	ck_assert_int_eq(store_run_log_put(st, id, EX1, "first", 5, 0), STORE_OK);
	ck_assert_int_eq(store_run_log_put(st, id, EX1, text, sizeof(text) - 1, 5000000000LL),
	                 STORE_OK);
	ck_assert_int_eq(count_where("run_logs", "run_id", id), 1);
	ck_assert_int_eq(store_run_log(st, a, id, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "run_id"), id);
	ck_assert_str_eq(jstr(got, "text"), text);
	ck_assert_int_eq(json_integer_value(json_object_get(got, "dropped")), 5000000000LL);
	json_decref(got);
	/* another tenant: not found, as for a run that does not exist */
	ck_assert_int_eq(store_run_log(st, b, id, &got), STORE_NOT_FOUND);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(store_run_log(st, a, "00000000000000000000000000000000", &got),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_log(st, a, "not an id' OR 1=1 --", &got), STORE_NOT_FOUND);
	/* a run that logged nothing: empty */
	ck_assert_int_eq(store_run_log(st, a, other, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "text"), "");
	ck_assert_int_eq(json_integer_value(json_object_get(got, "dropped")), 0);
	json_decref(got);
	json_decref(job);
}
END_TEST

enum { CLAIMERS = 2, QUEUED = 60 };

/* Two processes, each with its own connection, claim until the queue is
 * empty: every run is claimed exactly once. */
START_TEST(test_jobs_claim_concurrent)
{
	char a[33], b[33], line[40];
	char seen[QUEUED][33];
	json_t *job = jload("{\"spec\":{}}");
	pid_t pids[CLAIMERS];
	int fds[2], i, k, n = 0, status;
	FILE *in;

	two_tenants(a, b);
	for (i = 0; i < QUEUED; i++)
		enqueue(i % 3 ? a : b, job, "inproc-mock", NULL);
	ck_assert_int_eq(pipe(fds), 0);
	for (i = 0; i < CLAIMERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct store *mine = NULL;
			struct store_claim c;
			enum store_rc rc;
			char ex[32];
			int busy = 0;

			close(fds[0]);
			snprintf(ex, sizeof ex, "claimer-%d", i);
			if (store_open(g_dsn, &mine))
				_exit(2);
			for (;;) {
				rc = store_run_claim(mine, ex, "inproc-mock", &c);
				if (rc == STORE_NOT_FOUND)
					break;
				if (rc == STORE_UNAVAILABLE && ++busy < 50)
					continue; /* locked past the retries: ask again */
				if (rc)
					_exit(3);
				dprintf(fds[1], "%s\n", c.run_id);
				store_claim_clear(&c);
			}
			store_close(mine);
			_exit(0);
		}
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	while (fgets(line, sizeof line, in)) {
		line[strcspn(line, "\n")] = '\0';
		ck_assert_uint_eq(strlen(line), 32);
		ck_assert_int_lt(n, QUEUED);
		for (k = 0; k < n; k++)
			ck_assert_msg(strcmp(seen[k], line) != 0, "run %s claimed twice", line);
		memcpy(seen[n++], line, 33);
	}
	fclose(in);
	for (i = 0; i < CLAIMERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
	ck_assert_int_eq(n, QUEUED);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE status = 'running'"), QUEUED);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE status = 'running' AND "
	                           "executor IN ('claimer-0', 'claimer-1')"),
	                 QUEUED);
	json_decref(job);
}
END_TEST

/* Tenant A queues 30 runs, then tenant B one: B's run is among the first
 * two claims (the tenant with fewer runs running goes first). */
START_TEST(test_jobs_fair)
{
	char a[33], b[33], bid[33];
	json_t *job = jload("{}");
	struct store_claim c1, c2;
	int i;

	two_tenants(a, b);
	for (i = 0; i < 30; i++)
		enqueue(a, job, "inproc-mock", NULL);
	enqueue(b, job, "inproc-mock", bid);
	claim(EX1, "inproc-mock", &c1);
	claim(EX1, "inproc-mock", &c2);
	ck_assert_msg(strcmp(c1.run_id, bid) == 0 || strcmp(c2.run_id, bid) == 0,
	              "tenant B's run is not among the first two claims");
	ck_assert_str_eq(c1.tenant_id, a); /* both idle: the oldest run first */
	ck_assert_str_eq(c2.tenant_id, b);
	store_claim_clear(&c1);
	store_claim_clear(&c2);
	json_decref(job);
}
END_TEST

/* A claim with 5,000 runs of one tenant queued: its time goes to the log
 * (no assertion on it), and it takes the oldest. */
START_TEST(test_jobs_claim_cost)
{
	char a[33], b[33], sql[2048], first[33];
	struct store_claim c;
	struct timespec t0, t1;
	json_t *job = jload("{}");
	double ms;

	two_tenants(a, b);
	enqueue(a, job, "inproc-mock", first);
	snprintf(
	    sql, sizeof sql,
	    "INSERT INTO runs (id, tenant_id, kind, status, runner, backend, isolated, "
	    "destroyed, steps_total, steps_ok, steps_error, scored, output_digest, started_at, "
	    "finished_at, created_at, queued_at, job) SELECT %s, '%s', 'simulation', 'queued', "
	    "'', 'inproc-mock', 0, 0, 1, 0, 0, 0, '', '', '', '2030-01-01T00:00:00.000Z', "
	    "'2030-01-01T00:00:00.000Z', '{}' FROM %s",
	    g_pg ? "lpad(i::text, 32, '0')" : "printf('%032d', i)", a,
	    g_pg ? "generate_series(1, 5000) AS i"
	         : "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE "
	           "i < 5000) SELECT i FROM n)");
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE status = 'queued'"), 5001);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	claim(EX1, "inproc-mock", &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	fprintf(stderr, "test_store_jobs: %s: one claim with 5001 runs queued took %.2f ms\n",
	        g_pg ? "postgres" : "sqlite", ms);
	ck_assert_str_eq(c.run_id, first);
	store_claim_clear(&c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	claim(EX1, "inproc-mock", &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	fprintf(stderr, "test_store_jobs: %s: the next claim took %.2f ms\n",
	        g_pg ? "postgres" : "sqlite", ms);
	store_claim_clear(&c);
	json_decref(job);
}
END_TEST

/* Over max_active: STORE_LIMIT and nothing written (no run, no event, no
 * key); a comparison counts as two. */
START_TEST(test_jobs_max_active)
{
	char a[33], b[33], id[33];
	json_t *job = jload("{}"), *run = NULL, *cmp = NULL;
	struct store_run_job j = mkjob(job, "inproc-mock"), jb, jk;
	struct store_comparison_job cj;
	struct store_idem k;
	long events;

	two_tenants(a, b);
	enqueue(a, job, "inproc-mock", id);
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 2, NULL, &run), STORE_OK);
	json_decref(run);
	events = count_where("audit_events", "tenant_id", a);
	k = mk_idem("limit-key");
	run = NULL;
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 2, &k, &run), STORE_LIMIT);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 2);
	ck_assert_int_eq(count_where("audit_events", "tenant_id", a), events);
	ck_assert_int_eq(count_where("idempotency_keys", "tenant_id", a), 0);
	/* the other tenant has its own count */
	ck_assert_int_eq(store_run_enqueue(st, b, ACTOR, &j, 1, NULL, &run), STORE_OK);
	json_decref(run);

	/* one slot left: a comparison needs two */
	jb = mkjob(job, "inproc-mock");
	jk = mkjob(job, "inproc-mock");
	cj = mk_cj(&jb, &jk);
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 3, NULL, &cmp), STORE_LIMIT);
	ck_assert_ptr_null(cmp);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparison_jobs"), 0);
	/* a run that ends frees its slot */
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, id, &run), STORE_OK);
	json_decref(run);
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 2, NULL, &run), STORE_OK);
	json_decref(run);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 3);
	json_decref(job);
}
END_TEST

/* A run whose executor stopped heartbeating: the sweep ends it failed with
 * the reason, its steps kept, and the executor's calls then find nothing. */
START_TEST(test_jobs_sweep)
{
	static const int s12[] = {1, 2}, s3[] = {3};
	char a[33], b[33], lost[33], fresh[33], old[32], digest[65], sql[256];
	json_t *job = jload("{}"), *o12 = make_outputs(s12, 2), *o3 = make_outputs(s3, 1);
	json_t *got = NULL, *stored = NULL;
	struct store_claim c1, c2;
	struct store_run fin = ended(o3, "completed");
	const char *reason, *prefix = "executor " EX1 " lost: no heartbeat for ";
	long secs;
	time_t then;
	struct tm tm;
	int cancel, n = -1;

	two_tenants(a, b);
	enqueue(a, job, "inproc-mock", lost);
	enqueue(b, job, "inproc-mock", fresh);
	claim(EX1, "inproc-mock", &c1);
	claim(EX2, "inproc-mock", &c2);
	ck_assert_str_eq(c1.run_id, lost);
	ck_assert_str_eq(c2.run_id, fresh);
	/* one step ok, one an error */
	json_object_set_new(json_array_get(o12, 1), "status", json_string("error"));
	json_object_set_new(json_array_get(o12, 1), "error_kind", json_string("mock_miss"));
	ck_assert_int_eq(store_run_append(st, lost, EX1, o12), STORE_OK);
	/* its last heartbeat 100 s ago */
	then = time(NULL) - 100;
	gmtime_r(&then, &tm);
	strftime(old, sizeof old, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
	snprintf(sql, sizeof sql, "UPDATE runs SET heartbeat_at = '%s' WHERE id = '%s'", old, lost);
	ck_assert_int_eq(raw_exec(sql), 0);

	ck_assert_int_eq(store_runs_sweep(st, 30, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_run_get(st, a, lost, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "failed");
	reason = jstr(got, "reason");
	ck_assert_msg(reason && strncmp(reason, prefix, strlen(prefix)) == 0, "reason: %s",
	              reason ? reason : "(null)");
	secs = strtol(reason + strlen(prefix), NULL, 10);
	/* 100 s since the heartbeat, plus however long this case took on a
	 * loaded machine: generously under 400 s */
	ck_assert_msg(secs >= 100 && secs < 400, "N = %ld", secs);
	ck_assert_str_eq(reason + strlen(reason) - 2, " s");
	/* not a recorded run: nothing to say about a session */
	ck_assert(json_is_null(json_object_get(got, "record_error")));
	ck_assert(json_is_false(json_object_get(got, "isolated")));
	ck_assert(json_is_false(json_object_get(got, "destroyed")));
	ck_assert_int_eq(jint(got, "steps_ok"), 1);
	ck_assert_int_eq(jint(got, "steps_error"), 1);
	ck_assert_int_eq(jint(got, "steps_done"), 2);
	ck_assert_uint_eq(strlen(jstr(got, "finished_at")), 24);
	ck_assert_int_eq(store_run_outputs(st, a, lost, &stored), STORE_OK);
	digest_of(json_object_get(stored, "outputs"), digest);
	ck_assert_str_eq(jstr(got, "output_digest"), digest);
	ck_assert_int_eq(run_where(lost, "job IS NULL"), 1);
	json_decref(got);
	json_decref(stored);
	/* the other run heartbeats within the lease: untouched */
	ck_assert_int_eq(store_run_get(st, b, fresh, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "running");
	json_decref(got);

	/* the lost executor comes back: nothing it sends is written */
	ck_assert_int_eq(store_run_heartbeat(st, lost, EX1, &cancel), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_append(st, lost, EX1, o3), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_finish(st, lost, EX1, &fin, NULL), STORE_NOT_FOUND);
	ck_assert_int_eq(count_where("run_outputs", "run_id", lost), 2);
	ck_assert_int_eq(store_runs_sweep(st, 30, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	store_claim_clear(&c1);
	store_claim_clear(&c2);
	json_decref(job);
	json_decref(o12);
	json_decref(o3);
}
END_TEST

/* Cancel: a queued run ends at once, a running one is marked for its
 * executor, an ended one is a conflict; each audited. */
START_TEST(test_jobs_cancel)
{
	static const int s1[] = {1};
	char a[33], b[33], q[33], r[33], nothing[65];
	json_t *job = jload("{}"), *o1 = make_outputs(s1, 1), *got = NULL, *audit = NULL, *ev;
	struct store_claim c;
	struct store_run fin = ended(o1, "cancelled");
	long events;
	int cancel = -1;

	two_tenants(a, b);
	sha256_hex("", 0, nothing);
	enqueue(a, job, "inproc-mock", q);
	enqueue(a, job, "inproc-mock", r);
	ck_assert_int_eq(store_run_cancel(st, b, ACTOR, q, &got), STORE_NOT_FOUND);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, q, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "cancelled");
	ck_assert_str_eq(jstr(got, "reason"), "cancelled before it started");
	ck_assert_str_eq(jstr(got, "output_digest"), nothing);
	ck_assert_uint_eq(strlen(jstr(got, "finished_at")), 24);
	ck_assert(json_is_null(json_object_get(got, "runner")));
	ck_assert(json_is_null(json_object_get(got, "started_at")));
	ck_assert_int_eq(jint(got, "steps_done"), 0);
	ck_assert(json_is_false(json_object_get(got, "isolated")));
	json_decref(got);
	ck_assert_int_eq(run_where(q, "job IS NULL"), 1);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.run.cancel");
	ck_assert_str_eq(jstr(ev, "target_id"), q);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "status_before"), "queued");
	json_decref(audit);

	/* the cancelled run is never claimed: the claim takes the other */
	claim(EX1, "inproc-mock", &c);
	ck_assert_str_eq(c.run_id, r);
	store_claim_clear(&c);
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, r, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "running");
	ck_assert(json_is_true(json_object_get(got, "cancel_requested")));
	json_decref(got);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "status_before"), "running");
	json_decref(audit);
	ck_assert_int_eq(store_run_heartbeat(st, r, EX1, &cancel), STORE_OK);
	ck_assert_int_eq(cancel, 1);
	ck_assert_int_eq(store_run_finish(st, r, EX1, &fin, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "cancelled");
	ck_assert_int_eq(jint(got, "steps_done"), 1);
	json_decref(got);

	/* ended: a conflict, nothing written */
	events = count_where("audit_events", "tenant_id", a);
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, q, &got), STORE_CONFLICT);
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, r, &got), STORE_CONFLICT);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(count_where("audit_events", "tenant_id", a), events);
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, "not-an-id", &got), STORE_NOT_FOUND);
	json_decref(job);
	json_decref(o1);
}
END_TEST

/* A queued comparison: pending until both runs end, then settled once with
 * the verdict model_verdict_decide gives over the stored runs. */
START_TEST(test_jobs_comparison)
{
	static const int s12[] = {1, 2};
	char a[33], b[33], cid[33], bid[33], kid[33];
	json_t *job = jload("{\"spec\":{}}"), *bo = make_outputs(s12, 2),
	       *ko = make_outputs(s12, 2);
	json_t *cmp = NULL, *got = NULL, *list = NULL, *side, *diff;
	struct store_run_job jb = mkjob(job, "inproc-mock"), jk = mkjob(job, "inproc-mock");
	struct store_comparison_job cj;
	struct store_claim c1, c2;
	struct store_run fb, fk;
	struct model_verdict_side vb = {"completed", 1, 0.5, NULL},
	                          vk = {"completed", 1, 0.75, NULL};
	enum model_verdict verdict;
	double delta = 0;
	int has_delta = 0;

	two_tenants(a, b);
	jb.variant = "baseline";
	cj = mk_cj(&jb, &jk);
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 10, NULL, &cmp), STORE_OK);
	snprintf(cid, sizeof cid, "%s", jstr(cmp, "id"));
	ck_assert_str_eq(jstr(cmp, "status"), "pending");
	ck_assert(json_is_null(json_object_get(cmp, "verdict")));
	ck_assert(json_is_null(json_object_get(cmp, "delta")));
	ck_assert(json_is_null(json_object_get(cmp, "reason")));
	ck_assert_uint_eq(json_array_size(json_object_get(cmp, "differing_steps")), 0);
	ck_assert_str_eq(jstr(cmp, "decided_by"), ACTOR);
	ck_assert_str_eq(jstr(cmp, "suite"), "smoke");
	ck_assert_uint_eq(json_object_size(cmp), 20);
	/* pending: not known yet */
	ck_assert(json_is_null(json_object_get(cmp, "same_agent")));
	side = json_object_get(cmp, "baseline");
	ck_assert_str_eq(jstr(side, "variant"), "baseline");
	ck_assert_str_eq(jstr(side, "status"), "queued");
	ck_assert(json_is_null(json_object_get(side, "score")));
	snprintf(bid, sizeof bid, "%s", jstr(side, "run_id"));
	snprintf(kid, sizeof kid, "%s", jstr(json_object_get(cmp, "candidate"), "run_id"));
	ck_assert_int_eq(store_run_get(st, a, bid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "comparison_id"), cid);
	ck_assert_str_eq(jstr(got, "kind"), "comparison");
	json_decref(got);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert(json_equal(got, cmp));
	json_decref(got);
	ck_assert_int_eq(store_comparison_get(st, b, cid, &got), STORE_NOT_FOUND);
	/* pending ones are not listed */
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 10, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);
	ck_assert_int_eq(count_where("audit_events", "action", "sandbox.run"), 2);
	/* no verdict yet: nothing to approve (409 at the API), nothing written;
	 * another tenant does not learn it exists */
	ck_assert_int_eq(store_approval_append(st, a, ACTOR, cid, "approved", "early", &got),
	                 STORE_CONFLICT);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(store_approval_append(st, b, ACTOR, cid, "approved", "early", &got),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparison_approvals"), 0);
	ck_assert_int_eq(count_where("audit_events", "action", "sandbox.approval"), 0);

	claim(EX1, "inproc-mock", &c1);
	claim(EX1, "inproc-mock", &c2);
	ck_assert_str_eq(c1.run_id, bid);
	ck_assert_str_eq(c2.run_id, kid);
	json_object_set_new(json_array_get(ko, 1), "output", json_string("changed"));
	fb = ended(bo, "completed");
	fb.scored = 1;
	fb.score = 0.5;
	fb.passed = 1;
	fk = ended(ko, "completed");
	fk.scored = 1;
	fk.score = 0.75;
	fk.passed = 1;
	ck_assert_int_eq(store_run_finish(st, bid, EX1, &fb, NULL), STORE_OK);
	/* one side ended: still pending, settle finds nothing to decide */
	ck_assert_int_eq(store_comparison_settle(st, cid), STORE_NOT_FOUND);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "pending");
	ck_assert_str_eq(jstr(json_object_get(got, "baseline"), "status"), "completed");
	ck_assert(json_real_value(json_object_get(json_object_get(got, "baseline"), "score")) ==
	          0.5);
	json_decref(got);
	/* the second finish settles it; more settles change nothing */
	ck_assert_int_eq(store_run_finish(st, kid, EX1, &fk, NULL), STORE_OK);
	ck_assert_int_eq(store_comparison_settle(st, cid), STORE_OK);
	ck_assert_int_eq(store_comparison_settle(st, cid), STORE_OK);
	ck_assert_int_eq(count_where("comparisons", "id", cid), 1);
	ck_assert_int_eq(count_where("audit_events", "action", "sandbox.compare"), 1);
	ck_assert_int_eq(count_where("audit_events", "target_id", cid), 1);
	/* settled: now it can be approved */
	ck_assert_int_eq(store_approval_append(st, a, ACTOR, cid, "approved", "settled", &got),
	                 STORE_OK);
	json_decref(got);
	got = NULL;

	ck_assert_int_eq(model_verdict_decide(&vb, &vk, 0.1, &verdict, &has_delta, &delta, NULL, 0),
	                 0);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "decided");
	ck_assert_str_eq(jstr(got, "verdict"), model_verdict_name(verdict));
	ck_assert_str_eq(jstr(got, "verdict"), "improved");
	ck_assert(has_delta && json_real_value(json_object_get(got, "delta")) == delta);
	ck_assert(json_is_null(json_object_get(got, "reason")));
	ck_assert_str_eq(jstr(got, "decided_by"), ACTOR);
	diff = model_differing_steps(bo, ko);
	ck_assert_uint_eq(json_array_size(diff), 1);
	ck_assert(json_equal(json_object_get(got, "differing_steps"), diff));
	json_decref(diff);
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 10, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 1);
	ck_assert(json_equal(json_array_get(json_object_get(list, "comparisons"), 0), got));
	json_decref(list);
	json_decref(got);
	store_claim_clear(&c1);
	store_claim_clear(&c2);
	json_decref(cmp);
	json_decref(job);
	json_decref(bo);
	json_decref(ko);
}
END_TEST

/* A comparison with repeats 3: six runs queued in pair order, each with
 * its side, repeat index and "repeat" in its job; pending until the sixth
 * ends, then settled once by model_stats_compare over all of them. */
START_TEST(test_jobs_comparison_repeats)
{
	static const int s12[] = {1, 2};
	char a[33], b[33], cid[33], ids[6][33], cond[64];
	json_t *job = jload("{\"spec\":{}}"), *cmp = NULL, *got = NULL, *st_o, *f, *outs[6];
	json_t *details_ok = jload("[{\"seq\":1,\"key\":\"k1\",\"passed\":true}]");
	struct store_run_job jb = mkjob(job, "inproc-mock"), jk = mkjob(job, "inproc-mock");
	struct store_comparison_job cj;
	struct store_claim c[6];
	struct store_run fr;
	int i;

	two_tenants(a, b);
	cj = mk_cj(&jb, &jk);
	cj.tolerance = 0;
	cj.repeats = 3;
	/* 6 runs do not fit in 5 */
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 5, NULL, &cmp), STORE_LIMIT);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 0);
	cj.repeats = 21;
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 50, NULL, &cmp), STORE_ERROR);
	cj.repeats = 3;
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 10, NULL, &cmp), STORE_OK);
	snprintf(cid, sizeof cid, "%s", jstr(cmp, "id"));
	ck_assert_int_eq(jint(cmp, "repeats"), 3);
	ck_assert_uint_eq(
	    json_array_size(json_object_get(json_object_get(cmp, "runs"), "baseline")), 3);
	ck_assert(json_is_null(json_object_get(cmp, "stats")));
	ck_assert_int_eq(count_where("runs", "comparison_id", cid), 6);
	ck_assert_int_eq(count_where("runs", "comparison_side", "baseline"), 3);
	ck_assert_int_eq(count_where("runs", "comparison_side", "candidate"), 3);
	/* the first pair is the one the comparison names */
	ck_assert_str_eq(jstr(json_object_get(cmp, "baseline"), "run_id"),
	                 json_string_value(json_array_get(
	                     json_object_get(json_object_get(cmp, "runs"), "baseline"), 0)));
	for (i = 0; i < 6; i++) {
		claim(EX1, "inproc-mock", &c[i]);
		memcpy(ids[i], c[i].run_id, sizeof ids[i]);
		ck_assert_str_eq(ids[i], json_string_value(json_array_get(
		                             json_object_get(json_object_get(cmp, "runs"),
		                                             i % 2 ? "candidate" : "baseline"),
		                             i / 2)));
		ck_assert_int_eq(jint(json_object_get(c[i].job, "spec"), "repeat"), i / 2);
		snprintf(cond, sizeof cond, "repeat_index = %d", i / 2);
		ck_assert_int_eq(run_where(ids[i], cond), 1);
	}
	for (i = 0; i < 6; i++) {
		outs[i] = make_outputs(s12, 2);
		/* the candidate's repeat 1 answers step 2 otherwise */
		if (i == 3)
			json_object_set_new(json_array_get(outs[i], 1), "output",
			                    json_string("changed"));
		fr = ended(outs[i], "completed");
		fr.scored = 1;
		fr.score = i % 2 ? 0.75 : 0.5;
		fr.passed = 1;
		fr.score_details = details_ok;
		ck_assert_int_eq(store_run_finish(st, ids[i], EX1, &fr, NULL), STORE_OK);
		if (i < 5)
			ck_assert_int_eq(store_comparison_settle(st, cid), STORE_NOT_FOUND);
	}
	ck_assert_int_eq(store_comparison_settle(st, cid), STORE_OK);
	ck_assert_int_eq(count_where("comparisons", "id", cid), 1);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "decided");
	ck_assert_str_eq(jstr(got, "verdict"), "improved");
	ck_assert_int_eq(jint(got, "repeats"), 3);
	ck_assert(json_real_value(json_object_get(got, "delta")) == 0.25);
	st_o = json_object_get(got, "stats");
	ck_assert_str_eq(jstr(st_o, "method"), "paired-bootstrap");
	ck_assert_int_eq(jint(st_o, "n"), 3);
	ck_assert(json_real_value(json_object_get(st_o, "ci_low")) == 0.25);
	ck_assert(json_real_value(json_object_get(st_o, "ci_high")) == 0.25);
	ck_assert(json_real_value(json_object_get(st_o, "p_value")) == 0.25);
	ck_assert(json_real_value(json_object_get(json_object_get(got, "pass_k"), "candidate")) ==
	          1.0);
	ck_assert_uint_eq(json_array_size(json_object_get(got, "flaky_steps")), 1);
	f = json_array_get(json_object_get(got, "flaky_steps"), 0);
	ck_assert_str_eq(jstr(f, "side"), "candidate");
	ck_assert_int_eq(jint(f, "seq"), 2);
	ck_assert_uint_eq(
	    json_array_size(json_object_get(json_object_get(got, "runs"), "candidate")), 3);
	ck_assert_uint_eq(json_object_size(got), 20);
	json_decref(got);
	ck_assert_int_eq(store_comparison_get(st, b, cid, &got), STORE_NOT_FOUND);
	for (i = 0; i < 6; i++) {
		store_claim_clear(&c[i]);
		json_decref(outs[i]);
	}
	json_decref(details_ok);
	json_decref(cmp);
	json_decref(job);
}
END_TEST

/* A queued comparison whose one run is cancelled before it starts and the
 * other lost: settled by the sweep, inconclusive. */
START_TEST(test_jobs_comparison_swept)
{
	char a[33], b[33], cid[33], sql[256];
	json_t *job = jload("{}"), *cmp = NULL, *got = NULL;
	struct store_run_job jb = mkjob(job, "inproc-mock"), jk = mkjob(job, "gvisor");
	struct store_comparison_job cj;
	struct store_claim c;
	int n = -1;

	two_tenants(a, b);
	cj = mk_cj(&jb, &jk);
	cj.tolerance = 0;
	ck_assert_int_eq(store_comparison_enqueue(st, a, ACTOR, &cj, 10, NULL, &cmp), STORE_OK);
	snprintf(cid, sizeof cid, "%s", jstr(cmp, "id"));
	claim(EX1, "inproc-mock", &c);
	snprintf(sql, sizeof sql,
	         "UPDATE runs SET heartbeat_at = '2020-01-01T00:00:00.000Z' WHERE id = '%s'",
	         c.run_id);
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(
	    store_run_cancel(st, a, ACTOR, jstr(json_object_get(cmp, "candidate"), "run_id"), &got),
	    STORE_OK);
	json_decref(got);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "pending");
	json_decref(got);
	ck_assert_int_eq(store_runs_sweep(st, 30, &n), STORE_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_comparison_get(st, a, cid, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "status"), "decided");
	ck_assert_str_eq(jstr(got, "verdict"), "inconclusive");
	ck_assert_msg(jstr(got, "reason") &&
	                  strstr(jstr(got, "reason"), "baseline run failed: executor " EX1 " lost"),
	              "reason: %s", jstr(got, "reason"));
	json_decref(got);
	ck_assert_int_eq(count_where("comparisons", "id", cid), 1);
	store_claim_clear(&c);
	json_decref(cmp);
	json_decref(job);
}
END_TEST

/* Executors: registered twice (one row, replaced), listed, offering their
 * backends while live, the reason when none offers one. */
START_TEST(test_jobs_executors)
{
	char a[33], b[33], why[256];
	json_t *pf = jload("{\"inproc-mock\":{\"ok\":true,\"reason\":null},"
	                   "\"gvisor\":{\"ok\":false,\"reason\":\"runsc not found\"}}");
	json_t *list = NULL, *e, *job = jload("{}");
	struct store_claim c;
	int offered = -1;

	two_tenants(a, b);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 0);
	ck_assert_str_eq(why, "no executor is running");
	mk_executor(EX1, "namespaces", NULL);
	mk_executor(EX1, "inproc-mock", pf);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM executors"), 1);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 1);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(store_executor_offers(st, "gvisor", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 0);
	ck_assert_str_eq(why, "no live executor offers backend gvisor: runsc not found");
	ck_assert_int_eq(store_executor_offers(st, "namespaces", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 0);
	ck_assert_str_eq(why, "no live executor offers backend namespaces");

	enqueue(a, job, "inproc-mock", NULL);
	claim(EX1, "inproc-mock", &c);
	store_claim_clear(&c);
	ck_assert_int_eq(store_executor_list(st, 30, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "executors")), 1);
	e = json_array_get(json_object_get(list, "executors"), 0);
	ck_assert_str_eq(jstr(e, "id"), EX1);
	ck_assert_str_eq(jstr(e, "host"), "host");
	ck_assert_int_eq(jint(e, "pid"), 1234);
	ck_assert_int_eq(jint(e, "slots"), 4);
	ck_assert_uint_eq(json_array_size(json_object_get(e, "backends")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(e, "backends"), 0)),
	                 "inproc-mock");
	ck_assert(json_equal(json_object_get(e, "preflight"), pf));
	ck_assert(json_is_true(json_object_get(e, "live")));
	ck_assert_int_eq(jint(e, "running"), 1);
	ck_assert(json_is_null(json_object_get(e, "stopped_at")));
	json_decref(list);

	/* stale, then stopped: not live */
	ck_assert_int_eq(raw_exec("UPDATE executors SET heartbeat_at = '2020-01-01T00:00:00.000Z'"),
	                 0);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 0);
	ck_assert_str_eq(why, "no executor is running");
	ck_assert_int_eq(store_executor_heartbeat(st, EX1), STORE_OK);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 1);
	ck_assert_int_eq(store_executor_stop(st, EX1), STORE_OK);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 0);
	ck_assert_int_eq(store_executor_list(st, 30, &list), STORE_OK);
	e = json_array_get(json_object_get(list, "executors"), 0);
	ck_assert(json_is_false(json_object_get(e, "live")));
	ck_assert_uint_eq(strlen(jstr(e, "stopped_at")), 24);
	json_decref(list);
	/* registered again: live again */
	mk_executor(EX1, "inproc-mock", pf);
	ck_assert_int_eq(store_executor_offers(st, "inproc-mock", 30, &offered, why, sizeof why),
	                 STORE_OK);
	ck_assert_int_eq(offered, 1);
	ck_assert_int_eq(store_executor_heartbeat(st, "nobody"), STORE_NOT_FOUND);
	ck_assert_int_eq(store_executor_stop(st, "no one"), STORE_NOT_FOUND);
	json_decref(pf);
	json_decref(job);
}
END_TEST

/* An enqueue with an Idempotency-Key: the first answer comes back from the
 * lookup, and the same key again writes nothing. A replay's session must
 * be the tenant's. */
START_TEST(test_jobs_idem)
{
	char a[33], b[33];
	json_t *job = jload("{}"), *run = NULL, *again = NULL;
	struct store_run_job j = mkjob(job, "inproc-mock");
	struct store_idem k;
	int status = 0;

	two_tenants(a, b);
	k = mk_idem("enqueue-1");
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, &k, &run), STORE_OK);
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &again), STORE_OK);
	ck_assert_int_eq(status, 202);
	ck_assert(json_equal(again, run));
	json_decref(again);
	again = NULL;
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, &k, &again), STORE_CONFLICT);
	ck_assert_ptr_null(again);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 1);
	ck_assert_int_eq(count_where("audit_events", "tenant_id", a), 1);

	j.kind = "replay";
	j.session_id = "77777777777777777777777777777777";
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &again), STORE_NOT_FOUND);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 1);
	j.backend = "bogus";
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &again), STORE_ERROR);
	json_decref(run);
	json_decref(job);
}
END_TEST

enum { RACERS = 3, EACH_ENQUEUE = 8, MAX_ACTIVE = 5, ROUNDS = 6 };

/* Fork RACERS processes, each with its own connection, each running fn
 * once; the case fails unless every one exits 0. */
static void race(void (*fn)(struct store *mine, const char *arg), const char *arg)
{
	pid_t pids[RACERS];
	int i, status;

	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct store *mine = NULL;

			if (store_open(g_dsn, &mine))
				_exit(2);
			fn(mine, arg);
			store_close(mine);
			_exit(0);
		}
	}
	for (i = 0; i < RACERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
}

/* Queue EACH_ENQUEUE runs of tenant with max_active MAX_ACTIVE: every
 * answer is a run or STORE_LIMIT (a lock past the retries is asked again). */
static void enqueue_many(struct store *mine, const char *tenant)
{
	json_t *job = json_object(), *run;
	struct store_run_job j = mkjob(job, "inproc-mock");
	enum store_rc rc;
	int k, busy = 0;

	for (k = 0; k < EACH_ENQUEUE; k++) {
		run = NULL;
		rc = store_run_enqueue(mine, tenant, ACTOR, &j, MAX_ACTIVE, NULL, &run);
		json_decref(run);
		if (rc == STORE_UNAVAILABLE && ++busy < 50)
			k--;
		else if (rc != STORE_OK && rc != STORE_LIMIT)
			_exit(3);
	}
	json_decref(job);
}

static void settle_once(struct store *mine, const char *cid)
{
	if (store_comparison_settle(mine, cid) != STORE_OK)
		_exit(4);
}

/* Two processes at once: enqueues never pass max_active together, and two
 * settles of one comparison record it once. */
START_TEST(test_jobs_races)
{
	char a[33], b[33], t[33], name[32], cid[33], sql[256];
	json_t *job = jload("{}"), *cmp = NULL;
	struct store_run_job jb = mkjob(job, "inproc-mock"), jk = mkjob(job, "inproc-mock");
	struct store_comparison_job cj = mk_cj(&jb, &jk);
	int round;

	two_tenants(a, b);
	/* the race is at the last free slot: several rounds, one tenant each,
	 * give it several chances to show */
	for (round = 0; round < ROUNDS; round++) {
		snprintf(name, sizeof name, "racer-%d", round);
		mk_tenant(name, t);
		race(enqueue_many, t);
		ck_assert_int_eq(count_where("runs", "tenant_id", t), MAX_ACTIVE);
		ck_assert_int_eq(count_where("audit_events", "tenant_id", t), MAX_ACTIVE);
	}

	ck_assert_int_eq(store_comparison_enqueue(st, b, ACTOR, &cj, 10, NULL, &cmp), STORE_OK);
	snprintf(cid, sizeof cid, "%s", jstr(cmp, "id"));
	/* both sides ended without a settle (as after a crash between a
	 * finish's commit and its settle) */
	snprintf(sql, sizeof sql,
	         "UPDATE runs SET status = 'completed', job = NULL WHERE comparison_id = '%s'",
	         cid);
	ck_assert_int_eq(raw_exec(sql), 0);
	race(settle_once, cid);
	ck_assert_int_eq(count_where("comparisons", "id", cid), 1);
	ck_assert_int_eq(count_where("audit_events", "action", "sandbox.compare"), 1);
	json_decref(cmp);
	json_decref(job);
}
END_TEST

/* The agent a run ran: its name and mocks digest recorded when it is
 * queued, the program's sha256 with its end (the executor's), all read
 * back as "agent": {"name","sha256"} and "mocks_digest"; a run recorded
 * at once keeps a null sha256; a malformed sha256 is refused whole. */
START_TEST(test_jobs_agent_identity)
{
	static const char sha[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const char mocks[] =
	    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
	char a[33], id[33];
	struct store_run_job j;
	struct store_claim c;
	struct store_run fin, now;
	json_t *job = jload("{\"spec\":{}}");
	json_t *outputs = json_array();
	json_t *run = NULL, *got = NULL, *list = NULL, *agent;

	migrated();
	mk_tenant("acme", a);
	j = mkjob(job, "namespaces");
	j.agent_name = "profile";
	j.mocks_digest = mocks;
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	snprintf(id, sizeof id, "%s", jstr(run, "id"));
	agent = json_object_get(run, "agent");
	ck_assert_msg(json_is_object(agent), "a queued run has an agent object");
	ck_assert_str_eq(jstr(agent, "name"), "profile");
	ck_assert_msg(json_is_null(json_object_get(agent, "sha256")),
	              "no sha256 before an executor hashed the program");
	ck_assert_str_eq(jstr(run, "mocks_digest"), mocks);
	ck_assert_msg(!json_object_get(run, "agent_name") && !json_object_get(run, "agent_sha256"),
	              "the raw columns are folded into agent");
	json_decref(run);

	mk_executor(EX1, "namespaces", NULL);
	claim(EX1, "namespaces", &c);
	ck_assert_str_eq(jstr(json_object_get(c.run, "agent"), "name"), "profile");
	store_claim_clear(&c);
	fin = ended(outputs, "completed");
	fin.agent_sha256 = "NOT-HEX";
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, NULL), STORE_ERROR);
	fin.agent_sha256 = sha;
	/* the end cannot rename the agent or change its mocks */
	fin.agent_name = "other";
	fin.mocks_digest = sha;
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, &got), STORE_OK);
	agent = json_object_get(got, "agent");
	ck_assert_str_eq(jstr(agent, "name"), "profile");
	ck_assert_str_eq(jstr(agent, "sha256"), sha);
	ck_assert_str_eq(jstr(got, "mocks_digest"), mocks);
	json_decref(got);
	got = NULL;
	ck_assert_int_eq(store_run_get(st, a, id, &got), STORE_OK);
	ck_assert_str_eq(jstr(json_object_get(got, "agent"), "sha256"), sha);
	json_decref(got);

	/* recorded at once: the built-in name, no sha256 */
	now = sample_run(NULL, outputs);
	now.agent_name = "builtin:mock-agent";
	now.mocks_digest = mocks;
	got = NULL;
	ck_assert_int_eq(store_run_record(st, a, ACTOR, &now, &got), STORE_OK);
	ck_assert_str_eq(jstr(json_object_get(got, "agent"), "name"), "builtin:mock-agent");
	ck_assert(json_is_null(json_object_get(json_object_get(got, "agent"), "sha256")));
	json_decref(got);
	/* a run with no agent name (an older version's) reads agent null */
	now.agent_name = NULL;
	got = NULL;
	ck_assert_int_eq(store_run_record(st, a, ACTOR, &now, &got), STORE_OK);
	ck_assert_msg(json_is_null(json_object_get(got, "agent")), "no name: agent null");
	json_decref(got);

	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 10, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 3);
	ck_assert_str_eq(
	    jstr(json_object_get(json_array_get(json_object_get(list, "runs"), 2), "agent"),
	         "sha256"),
	    sha);
	json_decref(list);
	json_decref(outputs);
	json_decref(job);
}
END_TEST

/* A recorded run (struct store_run's record): queued with record true;
 * its end stores the session for its tenant, links it, audits it with
 * counts only; an end with a record_error links none and says why. */
START_TEST(test_jobs_record)
{
	char a[33], id[33], id2[33];
	struct store_run_job j;
	struct store_claim c;
	struct store_run fin;
	json_t *job = jload("{\"spec\":{\"record\":true}}");
	json_t *outputs = json_array();
	json_t *session = jload("{\"external_id\":\"olivares-run-x\",\"events\":["
	                        "{\"seq\":1,\"kind\":\"input\",\"text\":\"hi\"},"
	                        "{\"seq\":2,\"kind\":\"output\",\"text\":\"ho\"}]}");
	json_t *run = NULL, *got = NULL, *audit = NULL, *ev;

	migrated();
	mk_tenant("acme", a);
	mk_executor(EX1, "namespaces", NULL);
	j = mkjob(job, "namespaces");
	j.record = 1;
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	snprintf(id, sizeof id, "%s", jstr(run, "id"));
	ck_assert(json_is_true(json_object_get(run, "record")));
	ck_assert(json_is_null(json_object_get(run, "session_id")));
	json_decref(run);
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	snprintf(id2, sizeof id2, "%s", jstr(run, "id"));
	json_decref(run);

	claim(EX1, "namespaces", &c);
	store_claim_clear(&c);
	fin = ended(outputs, "completed");
	fin.session = session;
	ck_assert_int_eq(store_run_finish(st, id, EX1, &fin, &got), STORE_OK);
	ck_assert(json_is_true(json_object_get(got, "record")));
	ck_assert(json_is_null(json_object_get(got, "record_error")));
	ck_assert_uint_eq(strlen(jstr(got, "session_id")), 32);
	run = NULL;
	ck_assert_int_eq(store_session_get(st, a, jstr(got, "session_id"), &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "external_id"), "olivares-run-x");
	ck_assert_int_eq(jint(run, "events_count"), 2);
	json_decref(run);
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.session.record");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(got, "session_id"));
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "run_id"), id);
	ck_assert_int_eq(jint(json_object_get(ev, "detail"), "events"), 2);
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 2);
	json_decref(audit);
	json_decref(got);

	claim(EX1, "namespaces", &c);
	store_claim_clear(&c);
	fin = ended(outputs, "completed");
	fin.record_error = "not recorded: step 1 called the tool t: tool calls are not recorded";
	got = NULL;
	ck_assert_int_eq(store_run_finish(st, id2, EX1, &fin, &got), STORE_OK);
	ck_assert(json_is_null(json_object_get(got, "session_id")));
	ck_assert_str_eq(jstr(got, "record_error"), fin.record_error);
	json_decref(got);
	/* cancelled before it started: why there is no session */
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	snprintf(id2, sizeof id2, "%s", jstr(run, "id"));
	json_decref(run);
	got = NULL;
	ck_assert_int_eq(store_run_cancel(st, a, ACTOR, id2, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "record_error"), "the run did not run: nothing to record");
	json_decref(got);
	/* one session in all */
	ck_assert_int_eq(count_where("sessions", "tenant_id", a), 1);
	json_decref(session);
	json_decref(outputs);
	json_decref(job);
}
END_TEST

void store_jobs_cases(TCase *tc)
{
	tcase_add_test(tc, test_jobs_record);
	tcase_add_test(tc, test_jobs_agent_identity);
	tcase_add_test(tc, test_jobs_races);
	tcase_add_test(tc, test_jobs_lifecycle);
	tcase_add_test(tc, test_jobs_log);
	tcase_add_test(tc, test_jobs_claim_concurrent);
	tcase_add_test(tc, test_jobs_fair);
	tcase_add_test(tc, test_jobs_claim_cost);
	tcase_add_test(tc, test_jobs_max_active);
	tcase_add_test(tc, test_jobs_sweep);
	tcase_add_test(tc, test_jobs_cancel);
	tcase_add_test(tc, test_jobs_comparison);
	tcase_add_test(tc, test_jobs_comparison_swept);
	tcase_add_test(tc, test_jobs_comparison_repeats);
	tcase_add_test(tc, test_jobs_executors);
	tcase_add_test(tc, test_jobs_idem);
}
