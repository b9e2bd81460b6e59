/*
 * The store's suites (sql/suites.c): create, get (latest or one version),
 * list (the latest of each), update (a new version, the older ones kept),
 * tenant isolation, and the refusals that write nothing; a run records the
 * suite version it was pinned to.
 * Part of the test_store program (store_fixture.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

#define ACTOR "44444444444444444444444444444444"

/* A suite document named name whose threshold is threshold. */
static json_t *sample_suite(const char *name, double threshold)
{
	json_t *s =
	    jload("{\"expectations\":["
	          "{\"key\":\"step-1\",\"equals\":\"first synthetic account\",\"weight\":2},"
	          "{\"step\":\"*\",\"not_mock_miss\":true}]}");

	json_object_set_new(s, "name", json_string(name));
	json_object_set_new(s, "threshold", json_real(threshold));
	return s;
}

/* The threshold of a stored suite object's document. */
static double threshold_of(json_t *suite)
{
	return json_number_value(json_object_get(json_object_get(suite, "document"), "threshold"));
}

static long suite_rows(void)
{
	return raw_count("SELECT COUNT(*) FROM suites");
}

static long suite_events(void)
{
	return raw_count("SELECT COUNT(*) FROM audit_events WHERE action LIKE 'sandbox.suite.%'");
}

START_TEST(test_suite_create_get)
{
	char a[33], b[33];
	json_t *doc = sample_suite("walkthrough", 0.5);
	json_t *s = NULL, *g = NULL, *audit = NULL, *ev;

	two_tenants(a, b);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", doc, &s), STORE_OK);
	ck_assert_uint_eq(json_object_size(s), 5);
	ck_assert_str_eq(jstr(s, "name"), "walkthrough");
	ck_assert_int_eq(jint(s, "version"), 1);
	ck_assert(json_equal(json_object_get(s, "document"), doc));
	ck_assert_str_eq(jstr(s, "created_by"), ACTOR);
	ck_assert_uint_eq(strlen(jstr(s, "created_at")), 24);
	ck_assert_int_eq(jstr(s, "created_at")[23], 'Z');

	/* the latest (0) and version 1 are the same object */
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 0, &g), STORE_OK);
	ck_assert(json_equal(g, s));
	json_decref(g);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 1, &g), STORE_OK);
	ck_assert(json_equal(g, s));
	json_decref(g);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 2, &g), STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_suite_get(st, a, "nosuch", 0, &g), STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", -1, &g), STORE_NOT_FOUND);
	ck_assert_int_eq(store_suite_get(st, a, "bad name", 0, &g), STORE_NOT_FOUND);

	/* one audit event, its detail the name and version */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 1);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.suite.create");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "name"), "walkthrough");
	ck_assert_int_eq(jint(json_object_get(ev, "detail"), "version"), 1);
	ck_assert_int_eq(suite_rows(), 1);

	json_decref(audit);
	json_decref(s);
	json_decref(doc);
}
END_TEST

START_TEST(test_suite_update_versions)
{
	char a[33], b[33];
	json_t *d1 = sample_suite("walkthrough", 0.5), *d2 = sample_suite("walkthrough", 1.0);
	json_t *d3 = sample_suite("walkthrough", 0.25), *other = sample_suite("alpha", 0.5);
	json_t *s = NULL, *g = NULL, *list = NULL, *items;

	two_tenants(a, b);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", d1, &s), STORE_NOT_FOUND);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(suite_rows(), 0);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", d1, &s), STORE_OK);
	json_decref(s);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", d2, &s), STORE_OK);
	ck_assert_int_eq(jint(s, "version"), 2);
	ck_assert(json_equal(json_object_get(s, "document"), d2));
	json_decref(s);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", d3, &s), STORE_OK);
	ck_assert_int_eq(jint(s, "version"), 3);
	json_decref(s);

	/* every version stays readable as it was written */
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 0, &g), STORE_OK);
	ck_assert_int_eq(jint(g, "version"), 3);
	ck_assert(threshold_of(g) == 0.25);
	json_decref(g);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 1, &g), STORE_OK);
	ck_assert(json_equal(json_object_get(g, "document"), d1));
	json_decref(g);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 2, &g), STORE_OK);
	ck_assert(threshold_of(g) == 1.0);
	json_decref(g);
	ck_assert_int_eq(suite_rows(), 3);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events "
	                           "WHERE action = 'sandbox.suite.update'"),
	                 2);

	/* the list: the latest version of each, by name; limit and offset */
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "alpha", other, &s), STORE_OK);
	json_decref(s);
	ck_assert_int_eq(store_suite_list(st, a, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "suites");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "alpha");
	ck_assert_int_eq(jint(json_array_get(items, 0), "version"), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 1), "name"), "walkthrough");
	ck_assert_int_eq(jint(json_array_get(items, 1), "version"), 3);
	ck_assert_uint_eq(json_object_size(json_array_get(items, 1)), 3);
	json_decref(list);
	ck_assert_int_eq(store_suite_list(st, a, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "suites");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "walkthrough");
	json_decref(list);

	json_decref(d1);
	json_decref(d2);
	json_decref(d3);
	json_decref(other);
}
END_TEST

START_TEST(test_suite_tenant_isolation)
{
	char a[33], b[33];
	json_t *d1 = sample_suite("walkthrough", 0.5), *d2 = sample_suite("walkthrough", 0.75);
	json_t *s = NULL, *g = NULL, *list = NULL;

	two_tenants(a, b);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", d1, &s), STORE_OK);
	json_decref(s);

	/* b sees nothing of a's and cannot update it */
	ck_assert_int_eq(store_suite_get(st, b, "walkthrough", 0, &g), STORE_NOT_FOUND);
	ck_assert_int_eq(store_suite_get(st, b, "walkthrough", 1, &g), STORE_NOT_FOUND);
	ck_assert_int_eq(store_suite_list(st, b, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "suites")), 0);
	json_decref(list);
	ck_assert_int_eq(store_suite_update(st, b, ACTOR, "walkthrough", d2, &s), STORE_NOT_FOUND);
	ck_assert_int_eq(suite_rows(), 1);

	/* b's own suite of the same name is b's version 1; a's is untouched */
	ck_assert_int_eq(store_suite_create(st, b, ACTOR, "walkthrough", d2, &s), STORE_OK);
	ck_assert_int_eq(jint(s, "version"), 1);
	json_decref(s);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 0, &g), STORE_OK);
	ck_assert_int_eq(jint(g, "version"), 1);
	ck_assert(threshold_of(g) == 0.5);
	json_decref(g);
	ck_assert_int_eq(store_suite_get(st, b, "walkthrough", 0, &g), STORE_OK);
	ck_assert(threshold_of(g) == 0.75);
	json_decref(g);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events "
	                           "WHERE action = 'sandbox.suite.create'"),
	                 2);

	json_decref(d1);
	json_decref(d2);
}
END_TEST

START_TEST(test_suite_refused)
{
	char a[33], b[33];
	json_t *good = sample_suite("walkthrough", 0.5);
	json_t *bounds = sample_suite("walkthrough", 2.0);
	json_t *other = sample_suite("other", 0.5);
	json_t *empty = jload("{\"name\":\"walkthrough\",\"expectations\":[]}");
	json_t *unknown = jload("{\"name\":\"walkthrough\",\"expectations\":"
	                        "[{\"key\":\"step-1\",\"equals\":\"x\",\"bogus\":1}]}");
	json_t *bad_name = sample_suite("bad name!", 0.5);
	json_t *s = NULL, *g = NULL;
	char long_name[130];

	two_tenants(a, b);
	/* none of these writes a row or an audit event */
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "bad name!", bad_name, &s), STORE_ERROR);
	ck_assert_ptr_null(s);
	memset(long_name, 'x', 129);
	long_name[129] = '\0';
	json_object_set_new(bad_name, "name", json_string(long_name));
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, long_name, bad_name, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "", bad_name, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", bounds, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", empty, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", unknown, &s), STORE_ERROR);
	/* the document names another suite */
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", other, &s), STORE_ERROR);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(suite_rows(), 0);
	ck_assert_int_eq(suite_events(), 0);

	/* a name that exists: a conflict, nothing added */
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", good, &s), STORE_OK);
	json_decref(s);
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "walkthrough", good, &s), STORE_CONFLICT);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(suite_rows(), 1);
	ck_assert_int_eq(suite_events(), 1);

	/* a bad update leaves version 1 the latest */
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", bounds, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", empty, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "walkthrough", other, &s), STORE_ERROR);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "bad name!", good, &s), STORE_NOT_FOUND);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(suite_rows(), 1);
	ck_assert_int_eq(suite_events(), 1);
	ck_assert_int_eq(store_suite_get(st, a, "walkthrough", 0, &g), STORE_OK);
	ck_assert_int_eq(jint(g, "version"), 1);
	ck_assert(json_equal(json_object_get(g, "document"), good));
	json_decref(g);

	json_decref(good);
	json_decref(bounds);
	json_decref(other);
	json_decref(empty);
	json_decref(unknown);
	json_decref(bad_name);
}
END_TEST

/* A run records its suite and the version it was pinned to, recorded whole
 * or queued; one that names no store suite has null. */
START_TEST(test_suite_version_of_runs)
{
	static const int seqs[] = {1, 2};
	char a[33], b[33];
	json_t *sc = NULL, *in = sample_scenario("s"), *outs = make_outputs(seqs, 2);
	json_t *job = jload("{\"spec\":{}}");
	json_t *run = NULL, *g = NULL;
	struct store_run r;
	struct store_run_job j;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, in, &sc), STORE_OK);
	r = sample_run(jstr(sc, "id"), outs);
	r.suite = "walkthrough";
	r.suite_version = 2;
	r.scored = 1;
	r.score = 0.75;
	r.passed = 1;
	ck_assert_int_eq(store_run_record(st, a, ACTOR, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "suite"), "walkthrough");
	ck_assert_int_eq(jint(run, "suite_version"), 2);
	ck_assert_int_eq(store_run_get(st, a, jstr(run, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run));
	json_decref(g);
	json_decref(run);

	/* an adapter's suite: a name, no version */
	r.suite_version = 0;
	ck_assert_int_eq(store_run_record(st, a, ACTOR, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "suite"), "walkthrough");
	ck_assert(json_is_null(json_object_get(run, "suite_version")));
	json_decref(run);

	memset(&j, 0, sizeof j);
	j.kind = "simulation";
	j.scenario_id = jstr(sc, "id");
	j.scenario_version = 1;
	j.scenario_digest = jstr(sc, "digest");
	j.variant = "candidate";
	j.backend = "inproc-mock";
	j.suite = "walkthrough";
	j.suite_version = 7;
	j.steps_total = 2;
	j.job = job;
	ck_assert_int_eq(store_run_enqueue(st, a, ACTOR, &j, 10, NULL, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "status"), "queued");
	ck_assert_int_eq(jint(run, "suite_version"), 7);
	ck_assert_int_eq(store_run_get(st, a, jstr(run, "id"), &g), STORE_OK);
	ck_assert_int_eq(jint(g, "suite_version"), 7);
	json_decref(g);
	json_decref(run);

	json_decref(job);
	json_decref(outs);
	json_decref(in);
	json_decref(sc);
}
END_TEST

void store_suites_cases(TCase *tc)
{
	tcase_add_test(tc, test_suite_create_get);
	tcase_add_test(tc, test_suite_update_versions);
	tcase_add_test(tc, test_suite_tenant_isolation);
	tcase_add_test(tc, test_suite_refused);
	tcase_add_test(tc, test_suite_version_of_runs);
}
