/*
 * A tenant's stored bytes (sql/usage.c, store_tenant_usage): each sum
 * counts the UTF-8 bytes of the tenant's texts (not characters), only
 * the tenant's rows, and drops what is deleted; a malformed id is refused.
 * Part of the test_store program (store_fixture.h).
 */
#include <stdio.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

#define ACTOR "55555555555555555555555555555555"

/* sample_scenario(name) whose one mock answers n copies of unit (a
 * string of one character: ASCII or not). */
static json_t *scenario_answering(const char *name, const char *unit, int n)
{
	json_t *sc = sample_scenario(name);
	char buf[4096] = "";
	int i;

	for (i = 0; i < n; i++)
		strcat(buf, unit);
	json_object_set_new(json_array_get(json_object_get(sc, "mocks"), 0), "response",
	                    json_string(buf));
	return sc;
}

static void usage_of(const char *tenant, struct store_usage *u)
{
	ck_assert_int_eq(store_tenant_usage(st, tenant, u), STORE_OK);
	ck_assert_int_eq(u->total, u->scenarios + u->outputs + u->logs + u->sessions + u->suites);
}

START_TEST(test_usage_sums)
{
	const int seqs[] = {1, 2};
	char a[33], b[33], sql[256];
	struct store_usage u, u1, u2, ub;
	json_t *ascii = scenario_answering("ascii", "e", 1000);
	json_t *wide = scenario_answering("wide", "\xc3\xa9", 1000); /* é: 2 bytes */
	json_t *outs = make_outputs(seqs, 2), *o;
	json_t *sa = NULL, *sw = NULL, *run = NULL, *sess = NULL, *suite = NULL, *doc;
	struct store_run r;
	long long out_bytes = 0, s_ascii;
	size_t i;

	two_tenants(a, b);
	usage_of(a, &u);
	ck_assert_int_eq(u.total, 0);
	ck_assert_int_eq(u.runs, 0);

	/* scenarios: bytes, not characters */
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, ascii, &sa), STORE_OK);
	usage_of(a, &u1);
	ck_assert_int_gt(u1.scenarios, 1000);
	ck_assert_int_eq(u1.total, u1.scenarios);
	s_ascii = u1.scenarios;
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, wide, &sw), STORE_OK);
	usage_of(a, &u2);
	/* "wide" is as long a name as "ascii" minus one byte, its answer 1000
	 * bytes longer */
	ck_assert_int_eq(u2.scenarios, 2 * s_ascii + 1000 - 1);

	/* outputs: key, input and output of each (no trace) */
	r = sample_run(jstr(sa, "id"), outs);
	ck_assert_int_eq(store_run_record(st, a, ACTOR, &r, &run), STORE_OK);
	json_array_foreach(outs, i, o) out_bytes +=
	    (long long)(strlen(jstr(o, "key")) + strlen(jstr(o, "input")) +
	                strlen(jstr(o, "output")));
	usage_of(a, &u);
	ck_assert_int_eq(u.outputs, out_bytes);
	ck_assert_int_eq(u.runs, 1);

	/* logs: "h\xc3\xa9llo" is 5 characters, 6 bytes */
	snprintf(sql, sizeof sql,
	         "INSERT INTO run_logs (run_id, tenant_id, text, dropped_bytes) VALUES "
	         "('%s', '%s', 'h\xc3\xa9llo', 0)",
	         jstr(run, "id"), a);
	ck_assert_int_eq(raw_exec(sql), 0);
	usage_of(a, &u);
	ck_assert_int_eq(u.logs, 6);

	/* sessions: external id and the events' JSON text ("[]") */
	doc = jload("{\"external_id\":\"ext-1\",\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, ACTOR, doc, &sess), STORE_OK);
	json_decref(doc);
	usage_of(a, &u);
	ck_assert_int_eq(u.sessions, 7);

	/* suites: every version counts */
	doc = jload("{\"name\":\"s\",\"threshold\":0.5,\"expectations\":"
	            "[{\"step\":\"*\",\"not_mock_miss\":true}]}");
	ck_assert_int_eq(store_suite_create(st, a, ACTOR, "s", doc, &suite), STORE_OK);
	json_decref(suite);
	usage_of(a, &u1);
	ck_assert_int_gt(u1.suites, 20);
	ck_assert_int_eq(store_suite_update(st, a, ACTOR, "s", doc, &suite), STORE_OK);
	usage_of(a, &u);
	ck_assert_int_eq(u.suites, 2 * u1.suites);
	ck_assert_int_eq(u.total, u2.scenarios + out_bytes + 6 + 7 + 2 * u1.suites);

	/* the other tenant stores nothing */
	usage_of(b, &ub);
	ck_assert_int_eq(ub.total, 0);
	ck_assert_int_eq(ub.runs, 0);

	/* a deleted scenario no longer counts */
	ck_assert_int_eq(store_scenario_delete(st, a, ACTOR, jstr(sw, "id")), STORE_OK);
	usage_of(a, &u1);
	ck_assert_int_eq(u1.scenarios, s_ascii);
	ck_assert_int_eq(u1.total, u.total - (u.scenarios - u1.scenarios));

	/* a malformed id names no tenant */
	memset(&u, 0x5a, sizeof u);
	ck_assert_int_eq(store_tenant_usage(st, "not-an-id", &u), STORE_NOT_FOUND);
	ck_assert_int_eq(u.total, 0);
	ck_assert_int_eq(store_tenant_usage(st, NULL, &u), STORE_NOT_FOUND);

	json_decref(doc);
	json_decref(suite);
	json_decref(sess);
	json_decref(run);
	json_decref(sa);
	json_decref(sw);
	json_decref(outs);
	json_decref(ascii);
	json_decref(wide);
}
END_TEST

/* store_quota_guard: the guarded write sums the tenant again before its
 * commit; one that passes the limit is rolled back whole (no scenario,
 * the usage unchanged), a write that fits commits, the guard holds one
 * write only, and another tenant's guard does not count this one's bytes. */
START_TEST(test_quota_guard)
{
	char a[33], b[33];
	struct store_usage u0, u1, u2;
	json_t *sc = scenario_answering("guarded", "e", 1000), *out = NULL, *list = NULL;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	out = NULL;
	usage_of(a, &u0);
	ck_assert_int_gt(u0.scenarios, 1000);

	/* a second copy would take the tenant to twice its bytes: one byte
	 * short of that is refused, and nothing of it stays */
	store_quota_guard(st, a, 2 * u0.total - 1);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_QUOTA);
	ck_assert_ptr_null(out);
	usage_of(a, &u1);
	ck_assert_int_eq(u1.total, u0.total);
	ck_assert_int_eq(store_scenario_list(st, a, 100, 0, &list), STORE_OK);
	ck_assert_int_eq(json_array_size(json_object_get(list, "scenarios")), 1);
	json_decref(list);
	list = NULL;

	/* the guard was used: the same write now goes (no quota) */
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	out = NULL;
	usage_of(a, &u2);
	ck_assert_int_eq(u2.total, 2 * u0.total);

	/* exactly at the limit fits */
	store_quota_guard(st, a, 3 * u0.total);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	out = NULL;

	/* tenant b's guard counts b's bytes only */
	store_quota_guard(st, b, u0.total);
	ck_assert_int_eq(store_scenario_create(st, b, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	out = NULL;

	/* a malformed tenant or a limit of 0 sets no guard */
	store_quota_guard(st, "not-an-id", 1);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	out = NULL;
	store_quota_guard(st, a, 0);
	ck_assert_int_eq(store_scenario_create(st, a, ACTOR, sc, &out), STORE_OK);
	json_decref(out);
	json_decref(sc);
}
END_TEST

void store_usage_cases(TCase *tc)
{
	tcase_add_test(tc, test_usage_sums);
	tcase_add_test(tc, test_quota_guard);
}
