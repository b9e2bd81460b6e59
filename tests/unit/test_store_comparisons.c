/*
 * The store's comparisons (sql/comparisons.c): recording a baseline and a
 * candidate run with their verdict in one transaction, rollback when any
 * part fails, tenant isolation, append-only, and the verdict filter.
 * Part of the test_store program (store_fixture.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

/* Outputs of one side of a comparison: step-1 "same", step-2 "<text>". */
static json_t *side_outputs(const char *second)
{
	return json_pack("[{s:i,s:s,s:s,s:s,s:s,s:n},{s:i,s:s,s:s,s:s,s:s,s:n}]", "seq", 1, "key",
	                 "step-1", "input", "agent:user1@example.test", "output", "same", "status",
	                 "ok", "error_kind", "seq", 2, "key", "step-2", "input",
	                 "agent:user2@example.test", "output", second, "status", "ok",
	                 "error_kind");
}

struct cmp_fixture {
	json_t *bouts, *kouts, *diff;
	struct store_run b, k;
	struct store_comparison c;
};

static void cmp_fixture(struct cmp_fixture *f, const char *scenario_id)
{
	memset(f, 0, sizeof *f);
	f->bouts = side_outputs("old answer");
	f->kouts = side_outputs("new answer");
	f->diff = jload("[{\"seq\":2,\"key\":\"step-2\",\"baseline_output\":\"old answer\","
	                "\"candidate_output\":\"new answer\"}]");
	f->b = sample_run(scenario_id, f->bouts);
	f->b.kind = "comparison";
	f->b.variant = "v1";
	f->b.suite = "smoke";
	f->b.scored = 1;
	f->b.score = 0.25;
	f->b.passed = 0;
	f->k = f->b;
	f->k.outputs = f->kouts;
	f->k.variant = "v2";
	f->k.score = 0.75;
	f->k.passed = 1;
	f->c.scenario_id = scenario_id;
	f->c.scenario_version = 3;
	f->c.suite = "smoke";
	f->c.tolerance = 0.1;
	f->c.baseline = &f->b;
	f->c.candidate = &f->k;
	f->c.verdict = "improved";
	f->c.has_delta = 1;
	f->c.delta = 0.5;
	f->c.reason = NULL;
	f->c.differing_steps = f->diff;
}

static void cmp_fixture_free(struct cmp_fixture *f)
{
	json_decref(f->bouts);
	json_decref(f->kouts);
	json_decref(f->diff);
}

/* Record f's comparison with the two sides' agents and mocks; its
 * same_agent (a new reference). */
static json_t *same_agent_of(const char *tenant, struct cmp_fixture *f, const char *bname,
                             const char *bsha, const char *kname, const char *ksha,
                             const char *kmocks)
{
	static const char mocks[] =
	    "1111111111111111111111111111111111111111111111111111111111111111";
	json_t *c = NULL, *same;

	f->b.agent_name = bname;
	f->b.agent_sha256 = bsha;
	f->b.mocks_digest = mocks;
	f->k.agent_name = kname;
	f->k.agent_sha256 = ksha;
	f->k.mocks_digest = kmocks ? kmocks : mocks;
	ck_assert_int_eq(
	    store_comparison_record(st, tenant, "33333333333333333333333333333333", &f->c, &c),
	    STORE_OK);
	same = json_incref(json_object_get(c, "same_agent"));
	json_decref(c);
	return same;
}

/* same_agent: the same program (sha256, or the same built-in agent) on
 * the same mocks, and each side's agent object. */
START_TEST(test_comparison_same_agent)
{
	static const char s1[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char s2[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	static const char m2[] = "2222222222222222222222222222222222222222222222222222222222222222";
	char a[33];
	struct cmp_fixture f;
	json_t *v, *c = NULL;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, "0123456789abcdef0123456789abcdef");
	v = same_agent_of(a, &f, "builtin:mock-agent", NULL, "builtin:mock-agent", NULL, NULL);
	ck_assert_msg(json_is_true(v), "the built-in agent on both sides, same mocks");
	json_decref(v);
	v = same_agent_of(a, &f, "builtin:mock-agent", NULL, "builtin:mock-agent", NULL, m2);
	ck_assert_msg(json_is_false(v), "other mocks: not the same");
	json_decref(v);
	v = same_agent_of(a, &f, "p1", s1, "p2", s1, NULL);
	ck_assert_msg(json_is_true(v), "two names, one program");
	json_decref(v);
	v = same_agent_of(a, &f, "p1", s1, "p1", s2, NULL);
	ck_assert_msg(json_is_false(v), "one name, the program changed");
	json_decref(v);
	v = same_agent_of(a, &f, "p1", NULL, "p1", NULL, NULL);
	ck_assert_msg(json_is_false(v), "a program never hashed is not known to be the same");
	json_decref(v);
	v = same_agent_of(a, &f, "builtin:mock-agent", NULL, "p1", s1, NULL);
	ck_assert_msg(json_is_false(v), "the built-in agent against a program");
	json_decref(v);
	ck_assert_int_eq(
	    store_comparison_record(st, a, "33333333333333333333333333333333", &f.c, &c), STORE_OK);
	ck_assert_str_eq(jstr(json_object_get(json_object_get(c, "candidate"), "agent"), "name"),
	                 "p1");
	ck_assert_str_eq(jstr(json_object_get(json_object_get(c, "candidate"), "agent"), "sha256"),
	                 s1);
	ck_assert(json_is_null(
	    json_object_get(json_object_get(json_object_get(c, "baseline"), "agent"), "sha256")));
	json_decref(c);
	cmp_fixture_free(&f);
}
END_TEST

START_TEST(test_comparisons)
{
	const char *actor = "33333333333333333333333333333333";
	const char *sid = "0123456789abcdef0123456789abcdef";
	const char *other = "fedcba9876543210fedcba9876543210";
	char a[33];
	struct cmp_fixture f;
	json_t *c1 = NULL, *c2 = NULL, *c3 = NULL, *g = NULL, *list = NULL, *x = NULL;
	json_t *side, *items, *ev;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, actor, &f.c, &c1), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(c1, "id")), 32);
	ck_assert_str_eq(jstr(c1, "scenario_id"), sid);
	ck_assert_int_eq(jint(c1, "scenario_version"), 3);
	ck_assert_str_eq(jstr(c1, "suite"), "smoke");
	ck_assert(json_real_value(json_object_get(c1, "tolerance")) == 0.1);
	ck_assert_str_eq(jstr(c1, "verdict"), "improved");
	ck_assert(json_real_value(json_object_get(c1, "delta")) == 0.5);
	ck_assert(json_is_null(json_object_get(c1, "reason")));
	ck_assert(json_equal(json_object_get(c1, "differing_steps"), f.diff));
	ck_assert_str_eq(jstr(c1, "decided_by"), actor);
	ck_assert_uint_eq(strlen(jstr(c1, "created_at")), 24);
	ck_assert_str_eq(jstr(c1, "status"), "decided");
	ck_assert_uint_eq(json_object_size(c1), 20);
	/* recorded whole without statistics: one pair, stats null */
	ck_assert_int_eq(jint(c1, "repeats"), 1);
	ck_assert_str_eq(json_string_value(json_array_get(
	                     json_object_get(json_object_get(c1, "runs"), "baseline"), 0)),
	                 jstr(json_object_get(c1, "baseline"), "run_id"));
	ck_assert(json_is_null(json_object_get(c1, "stats")));
	ck_assert_uint_eq(json_array_size(json_object_get(c1, "flaky_steps")), 0);
	/* runs without an agent name (sample_run's): unknown */
	ck_assert(json_is_null(json_object_get(c1, "same_agent")));
	side = json_object_get(c1, "baseline");
	ck_assert_uint_eq(json_object_size(side), 7);
	ck_assert(json_is_null(json_object_get(side, "agent")));
	ck_assert_str_eq(jstr(side, "variant"), "v1");
	ck_assert_str_eq(jstr(side, "status"), "completed");
	ck_assert(json_is_true(json_object_get(side, "scored")));
	ck_assert(json_real_value(json_object_get(side, "score")) == 0.25);
	/* each side carries its run's shutdown note, null when none */
	ck_assert_msg(json_object_get(side, "shutdown") != NULL, "no baseline shutdown key");
	ck_assert(json_is_null(json_object_get(side, "shutdown")));
	side = json_object_get(c1, "candidate");
	ck_assert_uint_eq(json_object_size(side), 7);
	ck_assert_str_eq(jstr(side, "variant"), "v2");
	ck_assert(json_real_value(json_object_get(side, "score")) == 0.75);
	ck_assert(json_is_null(json_object_get(side, "shutdown")));

	/* both runs are recorded, kind "comparison", with their outputs */
	ck_assert_int_eq(store_run_get(st, a, jstr(json_object_get(c1, "baseline"), "run_id"), &x),
	                 STORE_OK);
	ck_assert_str_eq(jstr(x, "kind"), "comparison");
	ck_assert_str_eq(jstr(x, "variant"), "v1");
	ck_assert_str_eq(jstr(x, "created_by"), actor);
	json_decref(x);
	ck_assert_int_eq(
	    store_run_outputs(st, a, jstr(json_object_get(c1, "candidate"), "run_id"), &x),
	    STORE_OK);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(x, "outputs"), 1), "output"),
	                 "new answer");
	json_decref(x);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE kind = 'comparison'"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 4);

	/* audit: two "sandbox.run" and one "sandbox.compare", newest first */
	ck_assert_int_eq(store_audit_list(st, a, 10, &x), STORE_OK);
	items = json_object_get(x, "events");
	ck_assert_uint_eq(json_array_size(items), 3);
	ev = json_array_get(items, 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.compare");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(c1, "id"));
	ck_assert_str_eq(jstr(ev, "actor"), actor);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "verdict"), "improved");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "candidate_run_id"),
	                 jstr(json_object_get(c1, "candidate"), "run_id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "sandbox.run");
	ck_assert_str_eq(jstr(json_array_get(items, 2), "action"), "sandbox.run");
	json_decref(x);

	/* get gives back exactly what record returned */
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c1, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, c1));
	json_decref(g);

	/* the same comparison again: same verdict and delta; this time the
	 * candidate's agent had to be killed after its last step: its side
	 * says so (read from its run), the baseline's does not, and the
	 * verdict is the scores' */
	f.k.shutdown = "agent did not exit within its 1000 ms grace after the end of its input: "
	               "killed";
	ck_assert_int_eq(store_comparison_record(st, a, actor, &f.c, &c2), STORE_OK);
	ck_assert_str_ne(jstr(c2, "id"), jstr(c1, "id"));
	ck_assert_str_eq(jstr(c2, "verdict"), jstr(c1, "verdict"));
	ck_assert(json_equal(json_object_get(c2, "delta"), json_object_get(c1, "delta")));
	ck_assert_msg(jstr(json_object_get(c2, "candidate"), "shutdown") != NULL,
	              "no candidate shutdown note");
	ck_assert_str_eq(jstr(json_object_get(c2, "candidate"), "shutdown"), f.k.shutdown);
	ck_assert(json_is_null(json_object_get(json_object_get(c2, "baseline"), "shutdown")));
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c2, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, c2));
	json_decref(g);
	f.k.shutdown = NULL;

	/* inconclusive on another scenario: candidate failed, not scored */
	f.c.scenario_id = other;
	f.k.status = "failed";
	f.k.scored = 0;
	f.k.reason = "wall-clock limit of 10000 ms exceeded";
	f.k.outputs = NULL;
	f.c.verdict = "inconclusive";
	f.c.has_delta = 0;
	f.c.reason = "candidate run failed: wall-clock limit of 10000 ms exceeded";
	json_decref(f.diff);
	f.diff = json_array();
	f.c.differing_steps = f.diff;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c3), STORE_OK);
	ck_assert_str_eq(jstr(c3, "verdict"), "inconclusive");
	ck_assert(json_is_null(json_object_get(c3, "delta")));
	ck_assert(json_is_null(json_object_get(c3, "decided_by")));
	ck_assert_str_eq(jstr(c3, "reason"), f.c.reason);
	ck_assert_uint_eq(json_array_size(json_object_get(c3, "differing_steps")), 0);
	side = json_object_get(c3, "candidate");
	ck_assert_str_eq(jstr(side, "status"), "failed");
	ck_assert(json_is_false(json_object_get(side, "scored")));
	ck_assert(json_is_null(json_object_get(side, "score")));
	ck_assert(json_real_value(json_object_get(json_object_get(c3, "baseline"), "score")) ==
	          0.25);

	/* list: newest first, filtered by scenario, latest = limit 1 */
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c3, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(c2, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 2), "id"), jstr(c1, "id"));
	ck_assert(json_equal(json_array_get(items, 1), c2));
	ck_assert(json_equal(json_array_get(items, 2), c1));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c2, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 1, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c2, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, other, 1, 0, &list), STORE_OK);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "comparisons"), 0), "id"),
	                 jstr(c3, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 1, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);
	ck_assert_int_eq(
	    store_comparison_list(st, a, "ffffffffffffffffffffffffffffffff", 1, 0, &list),
	    STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);

	/* unknown or malformed ids */
	ck_assert_int_eq(store_comparison_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
	                 STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_comparison_get(st, a, "x' OR '1'='1", &g), STORE_NOT_FOUND);

	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	cmp_fixture_free(&f);
}
END_TEST

/* Nothing of a comparison is left when any part of it fails. */
static void assert_nothing_written(const char *tenant)
{
	json_t *x = NULL;

	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 0);
	ck_assert_int_eq(store_comparison_list(st, tenant, NULL, 50, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
}

START_TEST(test_comparison_rollback)
{
	static const int dup[] = {1, 2, 2};
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33];
	struct cmp_fixture f;
	json_t *dups = make_outputs(dup, 3);
	json_t *c = NULL, *bad;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);

	/* the candidate's outputs break a constraint after the baseline run,
	 * its outputs and its audit event were written: all rolled back */
	f.k.outputs = dups;
	ck_assert_int_ne(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);
	ck_assert_ptr_null(c);
	assert_nothing_written(a);
	f.k.outputs = f.kouts;

	/* an unknown tenant: a foreign key fails inside the transaction:
	 * nothing written */
	ck_assert_int_ne(
	    store_comparison_record(st, "99999999999999999999999999999999", NULL, &f.c, &c),
	    STORE_OK);
	ck_assert_ptr_null(c);
	assert_nothing_written(a);

	/* refused before anything runs: bad verdict, tolerance, delta without
	 * scores, malformed output, missing differing_steps */
	f.c.verdict = "better";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.verdict = "improved";
	f.c.tolerance = 1.5;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.tolerance = -0.01;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.tolerance = 0;
	f.k.scored = 0;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.k.scored = 1;
	bad = jload("[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":7,\"status\":\"ok\"}]");
	f.b.outputs = bad;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.b.outputs = f.bouts;
	json_decref(bad);
	f.c.differing_steps = NULL;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.differing_steps = f.diff;
	f.c.suite = "";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.suite = "smoke";
	ck_assert_ptr_null(c);
	assert_nothing_written(a);

	/* and the store still works afterwards */
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);
	ck_assert_str_eq(jstr(c, "verdict"), "improved");
	json_decref(c);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 2);

	json_decref(dups);
	cmp_fixture_free(&f);
}
END_TEST

START_TEST(test_comparison_tenant_isolation)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33], b[33];
	struct cmp_fixture f;
	json_t *c = NULL, *x = NULL;

	two_tenants(a, b);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);

	ck_assert_int_eq(store_comparison_get(st, b, jstr(c, "id"), &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_comparison_list(st, b, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
	ck_assert_int_eq(store_comparison_list(st, b, sid, 1, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_get(st, b, jstr(json_object_get(c, "baseline"), "run_id"), &x),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);

	/* tenant A still sees it */
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c, "id"), &x), STORE_OK);
	ck_assert(json_equal(x, c));
	json_decref(x);
	json_decref(c);
	cmp_fixture_free(&f);
}
END_TEST

/* Append-only: the store has no update or delete function for comparisons
 * (store.h), and the schema refuses both to any other writer. */
START_TEST(test_comparison_append_only)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33];
	struct cmp_fixture f;
	json_t *c = NULL, *x = NULL;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);

	ck_assert_int_ne(raw_exec("UPDATE comparisons SET verdict = 'regressed'"), 0);
	ck_assert_int_ne(raw_exec("UPDATE comparisons SET delta = NULL"), 0);
	ck_assert_int_ne(raw_exec("DELETE FROM comparisons"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons WHERE verdict = 'improved' "
	                           "AND delta IS NOT NULL"),
	                 1);
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c, "id"), &x), STORE_OK);
	ck_assert(json_equal(x, c));
	json_decref(x);
	json_decref(c);
	cmp_fixture_free(&f);
}
END_TEST

/* store_comparison_list_filtered, checked: STORE_OK and n comparisons.
 * *list gets the answer (the caller decrefs it); returns its array. */
static json_t *filtered(const char *tenant, const char *scenario_id, const char *verdict, int limit,
                        int offset, size_t n, json_t **list)
{
	json_t *items;

	ck_assert_int_eq(
	    store_comparison_list_filtered(st, tenant, scenario_id, verdict, limit, offset, list),
	    STORE_OK);
	items = json_object_get(*list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), n);
	return items;
}

START_TEST(test_comparison_verdict_filter)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	const char *other = "fedcba9876543210fedcba9876543210";
	char a[33], b[33];
	struct cmp_fixture f;
	json_t *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL, *list = NULL, *all = NULL;
	json_t *items;

	two_tenants(a, b);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c1), STORE_OK);
	f.c.verdict = "regressed";
	f.c.delta = -0.5;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c2), STORE_OK);
	f.c.scenario_id = other;
	f.c.verdict = "inconclusive";
	f.c.has_delta = 0;
	f.c.reason = "no suite";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c3), STORE_OK);
	f.c.verdict = "improved";
	f.c.has_delta = 1;
	f.c.delta = 0.5;
	f.c.reason = NULL;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c4), STORE_OK);
	/* tenant b has an improved one too: never listed for a */
	ck_assert_int_eq(store_comparison_record(st, b, NULL, &f.c, &list), STORE_OK);
	json_decref(list);

	/* a verdict alone: newest first, only that verdict */
	items = filtered(a, NULL, "improved", 50, 0, 2, &list);
	ck_assert(json_equal(json_array_get(items, 0), c4));
	ck_assert(json_equal(json_array_get(items, 1), c1));
	json_decref(list);
	items = filtered(a, NULL, "regressed", 50, 0, 1, &list);
	ck_assert(json_equal(json_array_get(items, 0), c2));
	ck_assert_str_eq(jstr(json_array_get(items, 0), "verdict"), "regressed");
	json_decref(list);
	items = filtered(a, NULL, "inconclusive", 50, 0, 1, &list);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c3, "id"));
	json_decref(list);
	filtered(a, NULL, "unchanged", 50, 0, 0, &list);
	json_decref(list);
	/* any other text matches nothing */
	filtered(a, NULL, "' OR '1'='1", 50, 0, 0, &list);
	json_decref(list);
	filtered(a, NULL, "Improved", 50, 0, 0, &list);
	json_decref(list);

	/* with the scenario filter, and paging */
	items = filtered(a, sid, "improved", 50, 0, 1, &list);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);
	filtered(a, other, "regressed", 50, 0, 0, &list);
	json_decref(list);
	items = filtered(a, NULL, "improved", 1, 1, 1, &list);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);

	/* NULL verdict: every comparison, exactly as store_comparison_list */
	filtered(a, NULL, NULL, 50, 0, 4, &list);
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 50, 0, &all), STORE_OK);
	ck_assert(json_equal(list, all));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(all, "comparisons"), 0), "id"),
	                 jstr(c4, "id"));
	json_decref(list);
	json_decref(all);
	filtered(a, sid, NULL, 50, 0, 2, &list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 0, &all), STORE_OK);
	ck_assert(json_equal(list, all));
	json_decref(list);
	json_decref(all);

	/* tenant b sees only its own */
	filtered(b, NULL, "improved", 50, 0, 1, &list);
	json_decref(list);
	filtered(b, NULL, "regressed", 50, 0, 0, &list);
	json_decref(list);

	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	json_decref(c4);
	cmp_fixture_free(&f);
}
END_TEST

/* Approvals: appended, the newest counts, audited, tenant-scoped,
 * append-only in the schema, bad input refused with nothing written. */
START_TEST(test_comparison_approvals)
{
	static const char actor[] = "33333333333333333333333333333333";
	char a[33], b[33], cid[33], first_id[33];
	struct cmp_fixture f;
	json_t *c = NULL, *ap = NULL, *list = NULL, *arr, *ev;
	char longer[STORE_APPROVAL_REASON_MAX_BYTES + 2];

	two_tenants(a, b);
	cmp_fixture(&f, "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(store_comparison_record(st, a, actor, &f.c, &c), STORE_OK);
	snprintf(cid, sizeof cid, "%s", jstr(c, "id"));
	json_decref(c);

	ck_assert_int_eq(store_approval_list(st, a, cid, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "approvals")), 0);
	json_decref(list);

	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "approved", "looks right", &ap),
	                 STORE_OK);
	ck_assert_str_eq(jstr(ap, "decision"), "approved");
	ck_assert_str_eq(jstr(ap, "reason"), "looks right");
	ck_assert_str_eq(jstr(ap, "decided_by"), actor);
	ck_assert_str_eq(jstr(ap, "comparison_id"), cid);
	ck_assert_uint_eq(strlen(jstr(ap, "id")), 32);
	ck_assert_uint_eq(json_object_size(ap), 6);
	snprintf(first_id, sizeof first_id, "%s", jstr(ap, "id"));
	json_decref(ap);
	/* the event, by the actor, about the comparison */
	ck_assert_int_eq(store_audit_list(st, a, 1, &list), STORE_OK);
	ev = json_array_get(json_object_get(list, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.approval");
	ck_assert_str_eq(jstr(ev, "actor"), actor);
	ck_assert_str_eq(jstr(ev, "target_id"), cid);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "decision"), "approved");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "approval_id"), first_id);
	json_decref(list);

	/* a later decision is a new row; the newest is last */
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "rejected", "flaky", &ap),
	                 STORE_OK);
	json_decref(ap);
	ck_assert_int_eq(store_approval_list(st, a, cid, &list), STORE_OK);
	arr = json_object_get(list, "approvals");
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "id"), first_id);
	ck_assert_str_eq(jstr(json_array_get(arr, 0), "decision"), "approved");
	ck_assert_str_eq(jstr(json_array_get(arr, 1), "decision"), "rejected");
	ck_assert_str_eq(jstr(json_array_get(arr, 1), "reason"), "flaky");
	json_decref(list);

	/* another tenant neither sees nor judges it */
	ck_assert_int_eq(store_approval_list(st, b, cid, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "approvals")), 0);
	json_decref(list);
	ck_assert_int_eq(store_approval_append(st, b, actor, cid, "approved", "mine?", &ap),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_approval_append(st, a, actor, "ffffffffffffffffffffffffffffffff",
	                                       "approved", "none", &ap),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_approval_append(st, a, actor, "not-an-id", "approved", "x", &ap),
	                 STORE_NOT_FOUND);

	/* bad input: nothing written */
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "maybe", "x", &ap), STORE_ERROR);
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "approved", "", &ap),
	                 STORE_ERROR);
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "approved", NULL, &ap),
	                 STORE_ERROR);
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "approved", "\xff", &ap),
	                 STORE_ERROR);
	memset(longer, 'x', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	ck_assert_int_eq(store_approval_append(st, a, actor, cid, "approved", longer, &ap),
	                 STORE_ERROR);
	ck_assert_ptr_null(ap);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparison_approvals"), 2);
	ck_assert_int_eq(count_where("audit_events", "action", "sandbox.approval"), 2);

	/* append-only in the schema too */
	ck_assert_int_ne(raw_exec("UPDATE comparison_approvals SET decision = 'approved'"), 0);
	ck_assert_int_ne(raw_exec("DELETE FROM comparison_approvals"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparison_approvals WHERE decision = "
	                           "'rejected'"),
	                 1);
	cmp_fixture_free(&f);
}
END_TEST

void store_comparisons_cases(TCase *tc)
{
	tcase_add_test(tc, test_comparison_approvals);
	tcase_add_test(tc, test_comparisons);
	tcase_add_test(tc, test_comparison_same_agent);
	tcase_add_test(tc, test_comparison_rollback);
	tcase_add_test(tc, test_comparison_tenant_isolation);
	tcase_add_test(tc, test_comparison_append_only);
	tcase_add_test(tc, test_comparison_verdict_filter);
}
