/*
 * The store's scenarios and runs (sql/scenarios.c, sql/runs.c): the
 * scenario catalogue, recording a run with its outputs (scored or not),
 * step durations, rollback of a malformed run, and tenant isolation.
 * Part of the test_store program (store_fixture.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

START_TEST(test_scenario_crud)
{
	char a[33], digest[65];
	const char *actor = "11111111111111111111111111111111";
	json_t *in = sample_scenario("walkthrough");
	json_t *s = NULL, *g = NULL, *u = NULL, *list = NULL, *patch, *audit = NULL;
	json_t *items;
	char id[33];
	int i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_scenario_create(st, a, actor, in, &s), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(s, "id")), 32);
	snprintf(id, sizeof id, "%s", jstr(s, "id"));
	ck_assert_str_eq(jstr(s, "name"), "walkthrough");
	ck_assert_int_eq(jint(s, "version"), 1);
	expected_digest(json_object_get(in, "steps"), json_object_get(in, "mocks"), digest);
	ck_assert_str_eq(jstr(s, "digest"), digest);
	ck_assert_uint_eq(strlen(jstr(s, "created_at")), 24);
	ck_assert(jstr(s, "created_at")[23] == 'Z');

	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_OK);
	ck_assert(json_equal(g, s));
	ck_assert(json_equal(json_object_get(g, "steps"), json_object_get(in, "steps")));
	ck_assert(json_equal(json_object_get(g, "mocks"), json_object_get(in, "mocks")));
	json_decref(g);

	/* name only: version bump, same digest */
	patch = jload("{\"name\":\"renamed\"}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_OK);
	json_decref(patch);
	ck_assert_int_eq(jint(u, "version"), 2);
	ck_assert_str_eq(jstr(u, "name"), "renamed");
	ck_assert_str_eq(jstr(u, "digest"), digest);
	ck_assert_str_eq(jstr(u, "created_at"), jstr(s, "created_at"));
	ck_assert(strcmp(jstr(u, "updated_at"), jstr(s, "updated_at")) >= 0);
	json_decref(u);
	/* steps: digest changes */
	patch = jload("{\"steps\":[{\"key\":\"step-1\",\"input\":\"other\"}]}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_OK);
	ck_assert_int_eq(jint(u, "version"), 3);
	ck_assert_str_ne(jstr(u, "digest"), digest);
	expected_digest(json_object_get(patch, "steps"), json_object_get(in, "mocks"), digest);
	ck_assert_str_eq(jstr(u, "digest"), digest);
	json_decref(patch);
	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_OK);
	ck_assert(json_equal(g, u));
	ck_assert_str_eq(jstr(g, "description"), "d");
	json_decref(g);
	json_decref(u);
	/* unknown field in a patch: refused, nothing changes */
	patch = jload("{\"bogus\":1}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_ERROR);
	ck_assert_ptr_null(u);
	json_decref(patch);

	/* list: newest first, with counts; limit and offset */
	for (i = 0; i < 2; i++) {
		json_t *more = sample_scenario(i == 0 ? "second" : "third");

		ck_assert_int_eq(store_scenario_create(st, a, actor, more, &g), STORE_OK);
		json_decref(g);
		json_decref(more);
	}
	ck_assert_int_eq(store_scenario_list(st, a, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "scenarios");
	ck_assert_uint_eq(json_array_size(items), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "third");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "name"), "second");
	ck_assert_str_eq(jstr(json_array_get(items, 2), "name"), "renamed");
	ck_assert_int_eq(jint(json_array_get(items, 2), "steps_count"), 1);
	ck_assert_int_eq(jint(json_array_get(items, 2), "mocks_count"), 1);
	ck_assert_int_eq(jint(json_array_get(items, 2), "version"), 3);
	ck_assert_ptr_null(json_object_get(json_array_get(items, 0), "steps"));
	json_decref(list);
	ck_assert_int_eq(store_scenario_list(st, a, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "scenarios");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "second");
	json_decref(list);

	/* delete */
	ck_assert_int_eq(store_scenario_delete(st, a, actor, id), STORE_OK);
	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_scenario_delete(st, a, actor, id), STORE_NOT_FOUND);

	/* audit: newest first, the actor, the targets */
	ck_assert_int_eq(store_audit_list(st, a, 100, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 6);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "sandbox.scenario.delete");
	ck_assert_str_eq(jstr(json_array_get(items, 0), "target_id"), id);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "actor"), actor);
	ck_assert_str_eq(jstr(json_array_get(items, 3), "action"), "sandbox.scenario.update");
	ck_assert_int_eq(jint(json_object_get(json_array_get(items, 3), "detail"), "version"), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 5), "action"), "sandbox.scenario.create");
	json_decref(audit);
	ck_assert_int_eq(store_audit_list(st, a, 2, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 2);
	json_decref(audit);

	json_decref(s);
	json_decref(in);
}
END_TEST

START_TEST(test_runs)
{
	static const int seqs[] = {3, 1, 2};
	const char *actor = "22222222222222222222222222222222";
	char a[33];
	json_t *sc = NULL, *in = sample_scenario("s");
	json_t *outs = make_outputs(seqs, 3);
	json_t *run1 = NULL, *run2 = NULL, *run3 = NULL, *g = NULL, *list = NULL, *ro = NULL;
	json_t *audit = NULL;
	json_t *items, *ev;
	struct store_run r;
	char b[33];
	int i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_scenario_create(st, a, actor, in, &sc), STORE_OK);
	r = sample_run(jstr(sc, "id"), outs);
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run1), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(run1, "id")), 32);
	ck_assert_str_eq(jstr(run1, "kind"), "simulation");
	ck_assert_str_eq(jstr(run1, "scenario_id"), jstr(sc, "id"));
	ck_assert_int_eq(jint(run1, "scenario_version"), 1);
	ck_assert_str_eq(jstr(run1, "variant"), "candidate");
	ck_assert_str_eq(jstr(run1, "status"), "completed");
	ck_assert_str_eq(jstr(run1, "backend"), "inproc-mock");
	ck_assert(json_is_true(json_object_get(run1, "isolated")));
	ck_assert(json_is_true(json_object_get(run1, "destroyed")));
	ck_assert(json_is_false(json_object_get(run1, "scored")));
	ck_assert(json_is_null(json_object_get(run1, "score")));
	ck_assert(json_is_null(json_object_get(run1, "passed")));
	ck_assert(json_is_null(json_object_get(run1, "suite")));
	ck_assert(json_is_null(json_object_get(run1, "reason")));
	ck_assert_int_eq(jint(run1, "steps_total"), 3);
	ck_assert_str_eq(jstr(run1, "created_by"), actor);
	ck_assert_str_eq(jstr(run1, "started_at"), "2024-01-01T00:00:00.000Z");
	ck_assert(json_is_null(json_object_get(run1, "score_details")));
	/* every run object carries session_id and divergence (replays) */
	ck_assert(json_is_null(json_object_get(run1, "session_id")));
	ck_assert(json_is_null(json_object_get(run1, "divergence")));
	/* and its shutdown note, null when none */
	ck_assert_msg(json_object_get(run1, "shutdown") != NULL, "no shutdown key");
	ck_assert(json_is_null(json_object_get(run1, "shutdown")));
	/* a run recorded whole: queued when it started, every step done */
	ck_assert_str_eq(jstr(run1, "queued_at"), jstr(run1, "started_at"));
	ck_assert_int_eq(jint(run1, "steps_done"), 3);
	ck_assert(json_is_null(json_object_get(run1, "executor")));
	ck_assert(json_is_null(json_object_get(run1, "comparison_id")));
	ck_assert(json_is_false(json_object_get(run1, "cancel_requested")));
	/* agent and mocks_digest: null, none recorded by sample_run */
	ck_assert(json_is_null(json_object_get(run1, "agent")));
	/* egress_requests and hermetic: none left, so hermetic */
	ck_assert_int_eq(jint(run1, "egress_requests"), 0);
	ck_assert(json_is_true(json_object_get(run1, "hermetic")));
	/* not recorded as a session */
	ck_assert(json_is_false(json_object_get(run1, "record")));
	ck_assert(json_is_null(json_object_get(run1, "record_error")));
	/* no store suite pinned */
	ck_assert(json_is_null(json_object_get(run1, "suite_version")));
	ck_assert_uint_eq(json_object_size(run1), 39);

	ck_assert_int_eq(store_run_get(st, a, jstr(run1, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run1));
	json_decref(g);

	ck_assert_int_eq(store_run_outputs(st, a, jstr(run1, "id"), &ro), STORE_OK);
	ck_assert_str_eq(jstr(ro, "run_id"), jstr(run1, "id"));
	items = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(items), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(jint(json_array_get(items, (size_t)i), "seq"), i + 1);
		ck_assert(
		    json_is_null(json_object_get(json_array_get(items, (size_t)i), "error_kind")));
	}
	ck_assert_str_eq(jstr(json_array_get(items, 0), "output"), "response 1\nline two");
	json_decref(ro);

	/* a second run: failed, not isolated, with a reason, no variant */
	r.status = "failed";
	r.isolated = 0;
	r.destroyed = 0;
	r.variant = NULL;
	r.reason = "namespaces: user namespaces unavailable";
	r.outputs = NULL;
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run2), STORE_OK);
	ck_assert(json_is_false(json_object_get(run2, "isolated")));
	ck_assert(json_is_null(json_object_get(run2, "variant")));
	ck_assert_str_eq(jstr(run2, "reason"), r.reason);

	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run2, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, NULL, "completed", 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, jstr(sc, "id"), "failed", 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 1);
	json_decref(list);
	ck_assert_int_eq(
	    store_run_list(st, a, "ffffffffffffffffffffffffffffffff", NULL, 50, 0, &list),
	    STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run2, "id"), &ro), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(ro, "outputs")), 0);
	json_decref(ro);

	/* audit: "sandbox.run" with only scenario_id, variant, status */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 3);
	ev = json_array_get(items, 1);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.run");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(run1, "id"));
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 3);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "scenario_id"), jstr(sc, "id"));
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "variant"), "candidate");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "status"), "completed");
	ck_assert(json_is_null(
	    json_object_get(json_object_get(json_array_get(items, 0), "detail"), "variant")));
	json_decref(audit);

	/* unknown run */
	ck_assert_int_eq(store_run_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_outputs(st, a, "not an id' OR 1=1 --", &ro), STORE_NOT_FOUND);

	/* a completed run whose agent had to be killed, and not scored: the
	 * shutdown note and the reason are stored side by side, each as
	 * given, and read back the same */
	r.status = "completed";
	r.reason = "executed, not scored: no scorer adapter is wired";
	r.shutdown = "agent did not exit within its 1000 ms grace after the end of its input: "
	             "killed";
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run3), STORE_OK);
	ck_assert_str_eq(jstr(run3, "status"), "completed");
	ck_assert_str_eq(jstr(run3, "reason"), r.reason);
	ck_assert_msg(jstr(run3, "shutdown") != NULL, "no shutdown note");
	ck_assert_str_eq(jstr(run3, "shutdown"), r.shutdown);
	ck_assert_int_eq(store_run_get(st, a, jstr(run3, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run3));
	json_decref(g);
	/* and another tenant does not see it */
	mk_tenant("other", b);
	ck_assert_int_eq(store_run_get(st, b, jstr(run3, "id"), &g), STORE_NOT_FOUND);

	json_decref(run1);
	json_decref(run2);
	json_decref(run3);
	json_decref(outs);
	json_decref(sc);
	json_decref(in);
}
END_TEST

START_TEST(test_run_rollback)
{
	static const int dup[] = {1, 2, 2};
	char a[33];
	json_t *outs = make_outputs(dup, 3);
	json_t *run = NULL, *list = NULL, *audit = NULL;
	struct store_run r = sample_run("0123456789abcdef0123456789abcdef", outs);
	enum store_rc rc;

	migrated();
	mk_tenant("acme", a);
	rc = store_run_record(st, a, NULL, &r, &run);
	ck_assert_int_ne(rc, STORE_OK);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 0);
	json_decref(audit);
	json_decref(outs);

	/* a malformed output is refused before anything is written */
	outs = jload("[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":7,\"status\":\"ok\"}]");
	r.outputs = outs;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	json_decref(outs);

	/* and the store still works afterwards */
	r.outputs = NULL;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	json_decref(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 1);
}
END_TEST

/* Migration 006: each output's duration_ms is stored as integer
 * microseconds (past 2^31 too) and read back exactly; null or absent is
 * unknown (SQL NULL), as is every row written before the column existed;
 * a duration that is not a number in [0, STORE_DURATION_MAX_MS] makes the
 * run malformed and writes nothing. */
START_TEST(test_run_durations)
{
	static const char *const bad[] = {"-1", "-0.001", "\"5\"", "true", "86400000.001", "1e300"};
	char a[33], sql[512];
	json_t *outs, *run = NULL, *ro = NULL, *got;
	struct store_run r;
	size_t i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM schema_migrations WHERE version = 6"), 1);
	outs = jload("[{\"seq\":1,\"key\":\"k1\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":12.345},"
	             "{\"seq\":2,\"key\":\"k2\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":0.001},"
	             "{\"seq\":3,\"key\":\"k3\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":2400000.5},"
	             "{\"seq\":4,\"key\":\"k4\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":0},"
	             "{\"seq\":5,\"key\":\"k5\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":null},"
	             "{\"seq\":6,\"key\":\"k6\",\"input\":\"i\",\"output\":\"o\","
	             "\"status\":\"ok\",\"error_kind\":null}]");
	r = sample_run("0123456789abcdef0123456789abcdef", outs);
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	got = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(got), 6);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 0), "duration_ms")) ==
	          12.345);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 1), "duration_ms")) == 0.001);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 2), "duration_ms")) ==
	          2400000.5);
	ck_assert(json_is_real(json_object_get(json_array_get(got, 3), "duration_ms")));
	ck_assert(json_real_value(json_object_get(json_array_get(got, 3), "duration_ms")) == 0);
	ck_assert(json_is_null(json_object_get(json_array_get(got, 4), "duration_ms")));
	ck_assert(json_is_null(json_object_get(json_array_get(got, 5), "duration_ms")));
	/* the column holds microseconds, 64 bits */
	ck_assert_int_eq(
	    raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us = 2400000500"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us = 12345"),
	                 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us IS NULL"),
	                 2);
	/* a row as a writer before migration 006 left it: unknown */
	snprintf(sql, sizeof sql,
	         "INSERT INTO run_outputs (run_id, tenant_id, seq, key, input, output, status, "
	         "error_kind) VALUES ('%s', '%s', 7, 'k7', 'i', 'o', 'ok', NULL)",
	         jstr(run, "id"), a);
	ck_assert_int_eq(raw_exec(sql), 0);
	json_decref(ro);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	got = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(got), 7);
	ck_assert(json_is_null(json_object_get(json_array_get(got, 6), "duration_ms")));
	json_decref(ro);
	json_decref(run);
	json_decref(outs);

	/* refused, nothing written */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(sql, sizeof sql,
		         "[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":\"o\","
		         "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":%s}]",
		         bad[i]);
		outs = jload(sql);
		r = sample_run("0123456789abcdef0123456789abcdef", outs);
		run = NULL;
		ck_assert_msg(store_run_record(st, a, NULL, &r, &run) == STORE_ERROR,
		              "duration_ms %s accepted", bad[i]);
		ck_assert_ptr_null(run);
		json_decref(outs);
	}
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 7);
}
END_TEST

START_TEST(test_tenant_isolation)
{
	static const int seqs[] = {1, 2};
	char a[33], b[33];
	json_t *in = sample_scenario("private"), *sc = NULL, *run = NULL, *x = NULL, *patch;
	json_t *outs = make_outputs(seqs, 2);
	struct store_run r;
	const char *sid, *rid;
	int on;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create(st, a, NULL, in, &sc), STORE_OK);
	sid = jstr(sc, "id");
	r = sample_run(sid, outs);
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	rid = jstr(run, "id");
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, NULL, NULL), STORE_OK);

	ck_assert_int_eq(store_scenario_get(st, b, sid, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	patch = jload("{\"name\":\"stolen\"}");
	ck_assert_int_eq(store_scenario_update(st, b, NULL, sid, patch, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	json_decref(patch);
	ck_assert_int_eq(store_scenario_delete(st, b, NULL, sid), STORE_NOT_FOUND);
	ck_assert_int_eq(store_scenario_list(st, b, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "scenarios")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_get(st, b, rid, &x), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_outputs(st, b, rid, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_run_list(st, b, NULL, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_list(st, b, sid, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);
	ck_assert_int_eq(store_module_get(st, b, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);

	/* tenant A's data is intact and untouched */
	ck_assert_int_eq(store_scenario_get(st, a, sid, &x), STORE_OK);
	ck_assert_str_eq(jstr(x, "name"), "private");
	ck_assert_int_eq(jint(x, "version"), 1);
	json_decref(x);
	ck_assert_int_eq(store_run_outputs(st, a, rid, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "outputs")), 2);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, a, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 2);
	json_decref(x);

	json_decref(outs);
	json_decref(run);
	json_decref(sc);
	json_decref(in);
}
END_TEST

START_TEST(test_run_scored)
{
	static const int seqs[] = {1, 2};
	char a[33];
	json_t *outs = make_outputs(seqs, 2);
	json_t *details =
	    jload("[{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":"
	          "\"equals\",\"message\":\"ok\"},{\"seq\":2,\"key\":\"step-2\","
	          "\"passed\":false,\"check\":\"contains\",\"message\":\"<&\\\"é\"}]");
	json_t *run = NULL, *g = NULL;
	struct store_run r = sample_run("0123456789abcdef0123456789abcdef", outs);

	migrated();
	mk_tenant("acme", a);
	r.suite = "smoke.v1";
	r.scored = 1;
	r.score = 0.75;
	r.passed = 0;
	r.score_details = details;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "suite"), "smoke.v1");
	ck_assert(json_is_true(json_object_get(run, "scored")));
	ck_assert(json_real_value(json_object_get(run, "score")) == 0.75);
	ck_assert(json_is_false(json_object_get(run, "passed")));
	ck_assert(json_equal(json_object_get(run, "score_details"), details));
	ck_assert_int_eq(store_run_get(st, a, jstr(run, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run));
	json_decref(g);
	json_decref(run);

	/* a score with no short decimal form keeps 15 significant digits
	 * (libsqliteodbc reads reals as "%.15g" text; PostgreSQL is exact) */
	r.score = 2.0 / 3.0;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_msg(fabs(json_real_value(json_object_get(run, "score")) - 2.0 / 3.0) < 1e-14,
	              "score %.17g", json_real_value(json_object_get(run, "score")));
	json_decref(run);

	/* passed true and a perfect score */
	r.score = 1.0;
	r.passed = 1;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert(json_is_true(json_object_get(run, "passed")));
	ck_assert(json_real_value(json_object_get(run, "score")) == 1.0);
	json_decref(run);

	/* not scored: score and passed are null whatever the struct holds */
	r.scored = 0;
	r.score = 0.5;
	r.passed = 1;
	r.score_details = NULL;
	r.reason = "executed, not scored: no scorer adapter is wired";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert(json_is_false(json_object_get(run, "scored")));
	ck_assert(json_is_null(json_object_get(run, "score")));
	ck_assert(json_is_null(json_object_get(run, "passed")));
	ck_assert(json_is_null(json_object_get(run, "score_details")));
	ck_assert_str_eq(jstr(run, "reason"), r.reason);
	json_decref(run);

	/* a score outside [0, 1] or details that are not an array: refused */
	r.scored = 1;
	r.score = 1.5;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	r.score = -0.1;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	r.score = 0.5;
	r.score_details = json_object_get(json_array_get(outs, 0), "key");
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 4);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE score IS NULL"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE passed IS NULL"), 1);

	json_decref(details);
	json_decref(outs);
}
END_TEST

void store_runs_cases(TCase *tc)
{
	tcase_add_test(tc, test_scenario_crud);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_run_rollback);
	tcase_add_test(tc, test_run_durations);
	tcase_add_test(tc, test_tenant_isolation);
	tcase_add_test(tc, test_run_scored);
}
