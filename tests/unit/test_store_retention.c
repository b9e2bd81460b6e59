/*
 * The store's retention purge (sql/retention.c): old ended runs go with
 * their outputs and logs, recent, queued and running ones stay, runs a
 * comparison rests on stay unless asked (and then only what no
 * append-only row holds, and nothing of a comparison that has not
 * settled), the counts and the audit event are right, a dry
 * run changes nothing, a kept comparison's evidence bundle is the same
 * after a purge, batches are transactions of their own, and another
 * tenant is untouched. Part of the test_store program (store_fixture.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/unit/store_fixture.h"

#define SID "0123456789abcdef0123456789abcdef"
#define ACTOR "olivares-test"

/* Two outputs, "ok". */
static json_t *two_outputs(void)
{
	static const int seqs[] = {1, 2};

	return make_outputs(seqs, 2);
}

/* Record an ended simulation run of tenant (finished 2024-01-01, long
 * past any retention), with two outputs and, when log is set, a log row;
 * id gets its id. */
static void old_run(const char *tenant, int log, char id[33])
{
	json_t *outs = two_outputs(), *r = NULL;
	struct store_run run = sample_run(SID, outs);
	char sql[256];

	ck_assert_int_eq(store_run_record(st, tenant, ACTOR, &run, &r), STORE_OK);
	snprintf(id, 33, "%s", jstr(r, "id"));
	json_decref(r);
	json_decref(outs);
	if (log) {
		snprintf(sql, sizeof sql,
		         "INSERT INTO run_logs (run_id, tenant_id, text, dropped_bytes) VALUES "
		         "('%s', '%s', 'agent said hello\n', 0)",
		         id, tenant);
		ck_assert_int_eq(raw_exec(sql), 0);
	}
}

/* Set column col of run id to the text value (a test's only way to make
 * a run recent, queued or running without an executor). */
static void set_run(const char *id, const char *col, const char *value)
{
	char sql[256];

	snprintf(sql, sizeof sql, "UPDATE runs SET %s = '%s' WHERE id = '%s'", col, value, id);
	ck_assert_int_eq(raw_exec(sql), 0);
}

/* Now minus hours, as a stored timestamp. */
static void hours_ago(int hours, char out[32])
{
	time_t t = time(NULL) - (time_t)hours * 3600;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

static long runs_named(const char *id)
{
	return count_where("runs", "id", id);
}

/* Record a comparison of tenant with both runs old; its id and its runs'. */
static void old_comparison(const char *tenant, char cid[33], char bid[33], char kid[33])
{
	json_t *bo = two_outputs(), *ko = two_outputs(), *diff = json_array(), *c = NULL;
	struct store_run b = sample_run(SID, bo), k;
	struct store_comparison cmp;

	b.kind = "comparison";
	b.variant = "v1";
	b.suite = "smoke";
	b.scored = 1;
	b.score = 0.5;
	b.passed = 1;
	k = b;
	k.outputs = ko;
	k.variant = "v2";
	memset(&cmp, 0, sizeof cmp);
	cmp.scenario_id = SID;
	cmp.scenario_version = 1;
	cmp.suite = "smoke";
	cmp.tolerance = 0.1;
	cmp.baseline = &b;
	cmp.candidate = &k;
	cmp.verdict = "unchanged";
	cmp.has_delta = 1;
	cmp.delta = 0;
	cmp.differing_steps = diff;
	ck_assert_int_eq(store_comparison_record(st, tenant, ACTOR, &cmp, &c), STORE_OK);
	snprintf(cid, 33, "%s", jstr(c, "id"));
	snprintf(bid, 33, "%s", jstr(json_object_get(c, "baseline"), "run_id"));
	snprintf(kid, 33, "%s", jstr(json_object_get(c, "candidate"), "run_id"));
	json_decref(c);
	json_decref(bo);
	json_decref(ko);
	json_decref(diff);
}

/* The tenant's "retention.purge" events, newest first (a new reference). */
static json_t *purge_events(const char *tenant)
{
	json_t *list = NULL, *out = json_array(), *e;
	size_t i;

	ck_assert_int_eq(store_audit_list(st, tenant, 500, &list), STORE_OK);
	json_array_foreach(json_object_get(list, "events"), i, e)
	{
		if (strcmp(jstr(e, "action"), "retention.purge") == 0)
			json_array_append(out, e);
	}
	json_decref(list);
	return out;
}

static void purge(const char *tenant, int days, int referenced, int dry,
                  struct store_retention_result *r)
{
	struct store_retention opt = {
	    .retention_days = days, .include_referenced = referenced, .dry_run = dry};

	ck_assert_int_eq(store_retention_purge(st, tenant, &opt, ACTOR, r), STORE_OK);
}

START_TEST(test_retention_purge)
{
	char a[33], b[33], old1[33], old2[33], recent[33], queued[33], running[33], marked[33];
	char pending[33];
	char other[33], cid[33], bid[33], kid[33], when[32];
	struct store_retention_result r;
	json_t *ev, *d, *bundle = NULL, *after = NULL;

	two_tenants(a, b);
	old_run(a, 1, old1);
	old_run(a, 0, old2);
	old_run(a, 1, recent);
	hours_ago(2, when);
	set_run(recent, "finished_at", when);
	old_run(a, 0, queued);
	set_run(queued, "status", "queued");
	old_run(a, 0, running);
	set_run(running, "status", "running");
	old_comparison(a, cid, bid, kid);
	/* a repeat of the settled comparison (comparison_id, no foreign key) */
	old_run(a, 1, marked);
	set_run(marked, "comparison_id", cid);
	/* a side of a comparison that has not settled */
	old_run(a, 1, pending);
	set_run(pending, "comparison_id", "fedcba9876543210fedcba9876543210");
	old_run(b, 1, other);
	ck_assert_int_eq(store_evidence_bundle(st, a, cid, &bundle), STORE_OK);

	/* a dry run counts what would go and changes nothing */
	purge(a, 30, 0, 1, &r);
	ck_assert_int_eq(r.runs, 2);
	ck_assert_int_eq(r.outputs, 4);
	ck_assert_int_eq(r.logs, 1);
	ck_assert_int_eq(r.kept, 4);
	ck_assert_int_eq(r.transactions, 0);
	ck_assert_int_eq(runs_named(old1), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", old1), 2);
	ev = purge_events(a);
	ck_assert_uint_eq(json_array_size(ev), 0);
	json_decref(ev);

	/* the purge: old1 and old2 go whole; the rest stays */
	purge(a, 30, 0, 0, &r);
	ck_assert_int_eq(r.runs, 2);
	ck_assert_int_eq(r.outputs, 4);
	ck_assert_int_eq(r.logs, 1);
	ck_assert_int_eq(r.kept, 4);
	ck_assert_int_eq(r.transactions, 1);
	ck_assert_int_eq(runs_named(old1), 0);
	ck_assert_int_eq(runs_named(old2), 0);
	ck_assert_int_eq(count_where("run_outputs", "run_id", old1), 0);
	ck_assert_int_eq(count_where("run_logs", "run_id", old1), 0);
	ck_assert_int_eq(runs_named(recent), 1);
	ck_assert_int_eq(count_where("run_logs", "run_id", recent), 1);
	ck_assert_int_eq(runs_named(queued), 1);
	ck_assert_int_eq(runs_named(running), 1);
	ck_assert_int_eq(runs_named(marked), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", marked), 2);
	ck_assert_int_eq(runs_named(bid), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", bid), 2);
	ck_assert_int_eq(runs_named(kid), 1);
	/* the evidence chain keeps the deleted runs' links */
	ck_assert_int_eq(count_where("evidence_links", "record_id", old1), 1);
	/* another tenant's old run: untouched */
	ck_assert_int_eq(runs_named(other), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", other), 2);
	ck_assert_int_eq(count_where("run_logs", "run_id", other), 1);

	/* one event, counts only */
	ev = purge_events(a);
	ck_assert_uint_eq(json_array_size(ev), 1);
	ck_assert_str_eq(jstr(json_array_get(ev, 0), "actor"), ACTOR);
	d = json_object_get(json_array_get(ev, 0), "detail");
	ck_assert_int_eq(jint(d, "runs"), 2);
	ck_assert_int_eq(jint(d, "outputs"), 4);
	ck_assert_int_eq(jint(d, "logs"), 1);
	ck_assert_int_eq(jint(d, "kept"), 4);
	ck_assert_int_eq(jint(d, "retention_days"), 30);
	ck_assert(json_is_false(json_object_get(d, "include_referenced")));
	ck_assert_uint_eq(json_object_size(d), 6);
	json_decref(ev);
	ev = purge_events(b);
	ck_assert_uint_eq(json_array_size(ev), 0);
	json_decref(ev);

	/* again: nothing left to remove, no new event */
	purge(a, 30, 0, 0, &r);
	ck_assert_int_eq(r.runs + r.outputs + r.logs, 0);
	ck_assert_int_eq(r.kept, 4);
	ev = purge_events(a);
	ck_assert_uint_eq(json_array_size(ev), 1);
	json_decref(ev);

	/* a retention longer than the runs' age: nothing is expired */
	purge(a, STORE_RETENTION_DAYS_MAX, 1, 0, &r);
	ck_assert_int_eq(r.runs + r.outputs + r.logs + r.kept, 0);

	/* with include_referenced: the marked run goes whole; the comparison's
	 * own runs lose outputs and logs, their records stay (the comparison
	 * holds them), and its evidence bundle is unchanged */
	purge(a, 30, 1, 0, &r);
	ck_assert_int_eq(r.runs, 1);
	ck_assert_int_eq(r.outputs, 6);
	ck_assert_int_eq(r.logs, 1);
	ck_assert_int_eq(r.kept, 3);
	ck_assert_int_eq(runs_named(marked), 0);
	ck_assert_int_eq(runs_named(pending), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", pending), 2);
	ck_assert_int_eq(count_where("run_logs", "run_id", pending), 1);
	ck_assert_int_eq(runs_named(bid), 1);
	ck_assert_int_eq(runs_named(kid), 1);
	ck_assert_int_eq(count_where("run_outputs", "run_id", bid), 0);
	ck_assert_int_eq(count_where("comparisons", "id", cid), 1);
	ck_assert_int_eq(store_evidence_bundle(st, a, cid, &after), STORE_OK);
	ck_assert(json_equal(bundle, after));
	ev = purge_events(a);
	ck_assert_uint_eq(json_array_size(ev), 2);
	d = json_object_get(json_array_get(ev, 0), "detail");
	ck_assert_int_eq(jint(d, "runs"), 1);
	ck_assert_int_eq(jint(d, "outputs"), 6);
	ck_assert(json_is_true(json_object_get(d, "include_referenced")));
	json_decref(ev);
	ck_assert_int_eq(runs_named(recent), 1);
	ck_assert_int_eq(runs_named(queued), 1);
	ck_assert_int_eq(runs_named(running), 1);
	ck_assert_int_eq(runs_named(other), 1);
	json_decref(bundle);
	json_decref(after);
}
END_TEST

/* More expired runs than one transaction takes: every one goes, in two
 * transactions with one event each, whose counts add up. */
START_TEST(test_retention_batches)
{
	char a[33], b[33], id[33];
	struct store_retention_result r;
	json_t *ev;
	long long sum = 0;
	size_t i;
	int n;

	two_tenants(a, b);
	for (n = 0; n < 130; n++)
		old_run(a, 0, id);
	purge(a, 1, 0, 0, &r);
	ck_assert_int_eq(r.runs, 130);
	ck_assert_int_eq(r.outputs, 260);
	ck_assert_int_eq(r.transactions, 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ev = purge_events(a);
	ck_assert_uint_eq(json_array_size(ev), 2);
	for (i = 0; i < 2; i++)
		sum += jint(json_object_get(json_array_get(ev, i), "detail"), "runs");
	ck_assert_int_eq(sum, 130);
	json_decref(ev);
}
END_TEST

/* Bad arguments: refused, nothing done. */
START_TEST(test_retention_bad_args)
{
	char a[33], b[33], id[33];
	struct store_retention_result r;
	struct store_retention opt = {.retention_days = 0};

	two_tenants(a, b);
	old_run(a, 0, id);
	ck_assert_int_eq(store_retention_purge(st, a, &opt, ACTOR, &r), STORE_ERROR);
	opt.retention_days = STORE_RETENTION_DAYS_MAX + 1;
	ck_assert_int_eq(store_retention_purge(st, a, &opt, ACTOR, &r), STORE_ERROR);
	opt.retention_days = 1;
	ck_assert_int_eq(store_retention_purge(st, "nope", &opt, ACTOR, &r), STORE_NOT_FOUND);
	ck_assert_int_eq(store_retention_purge(st, NULL, &opt, ACTOR, &r), STORE_NOT_FOUND);
	ck_assert_int_eq(runs_named(id), 1);
}
END_TEST

void store_retention_cases(TCase *tc)
{
	tcase_add_test(tc, test_retention_purge);
	tcase_add_test(tc, test_retention_batches);
	tcase_add_test(tc, test_retention_bad_args);
}
