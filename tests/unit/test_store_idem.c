/*
 * The store's idempotency keys (sql/idempotency.c): a key recorded with
 * the answer of the create it came with, in the create's own transaction;
 * a lookup with the same route and body gets that answer, another body or
 * route is a conflict, another tenant's same key is independent, and an
 * expired key is gone. Part of the test_store program (store_fixture.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

#define T12 "2030-01-01T12:00:00.000Z"
#define T2D "2030-01-03T00:00:00.000Z"
#define T3D "2030-01-04T00:00:00.000Z"
#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ROUTE "POST /v1/m/sandbox/scenarios"

static struct store_idem idem(const char *key, const char *route, const char *sha, const char *now,
                              const char *expires)
{
	struct store_idem k;

	memset(&k, 0, sizeof k);
	k.key = key;
	k.route = route;
	k.request_sha256 = sha;
	k.status = 201;
	k.now = now;
	k.expires_at = expires;
	return k;
}

static long keys_of(const char *tenant)
{
	return count_where("idempotency_keys", "tenant_id", tenant);
}

/* Same key, same route and body: the first answer, whole; another body or
 * route: a conflict; nothing is written by a lookup. */
START_TEST(test_idem_scenario)
{
	const char *actor = "33333333333333333333333333333333";
	char a[33], b[33];
	struct store_idem k = idem("retry-1", ROUTE, SHA_A, T0, T8);
	struct store_idem later = idem("retry-1", ROUTE, SHA_A, T0, T8);
	json_t *sc = sample_scenario("first"), *out = NULL, *again = NULL;
	char *d1, *d2;
	int status = 0;

	two_tenants(a, b);
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &again), STORE_NOT_FOUND);
	ck_assert_ptr_null(again);
	ck_assert_int_eq(store_scenario_create_idem(st, a, actor, sc, &k, &out), STORE_OK);
	ck_assert_int_eq(keys_of(a), 1);

	later.now = "2030-01-01T07:59:59.999Z"; /* still before expires_at */
	ck_assert_int_eq(store_idem_lookup(st, a, &later, &status, &again), STORE_OK);
	ck_assert_int_eq(status, 201);
	d1 = json_dumps(out, JSON_COMPACT);
	d2 = json_dumps(again, JSON_COMPACT);
	ck_assert_str_eq(d1, d2);
	ck_assert_str_eq(jstr(again, "name"), "first");
	free(d1);
	free(d2);
	json_decref(again);
	again = NULL;

	/* the same key with another body, or on another path: a conflict */
	later.request_sha256 = SHA_B;
	ck_assert_int_eq(store_idem_lookup(st, a, &later, &status, &again), STORE_CONFLICT);
	ck_assert_ptr_null(again);
	later.request_sha256 = SHA_A;
	later.route = "POST /v1/m/sandbox/sessions";
	ck_assert_int_eq(store_idem_lookup(st, a, &later, &status, &again), STORE_CONFLICT);
	ck_assert_ptr_null(again);
	ck_assert_int_eq(count_where("scenarios", "tenant_id", a), 1);

	/* malformed keys are refused before any SQL */
	later = idem("", ROUTE, SHA_A, T0, T8);
	ck_assert_int_eq(store_idem_lookup(st, a, &later, &status, &again), STORE_ERROR);
	later = idem("k", ROUTE, "not-a-digest", T0, T8);
	ck_assert_int_eq(store_idem_lookup(st, a, &later, &status, &again), STORE_ERROR);
	json_decref(out);
	json_decref(sc);
}
END_TEST

/* A key already taken (a concurrent request that committed first) makes
 * the create fail whole: no second scenario, no second audit event. */
START_TEST(test_idem_taken_rolls_back)
{
	char a[33], b[33];
	struct store_idem k = idem("taken", ROUTE, SHA_A, T0, T8);
	json_t *sc = sample_scenario("one"), *out = NULL, *out2 = NULL;
	long events;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, &k, &out), STORE_OK);
	events = count_where("audit_events", "tenant_id", a);
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, &k, &out2), STORE_CONFLICT);
	ck_assert_ptr_null(out2);
	ck_assert_int_eq(count_where("scenarios", "tenant_id", a), 1);
	ck_assert_int_eq(count_where("audit_events", "tenant_id", a), events);
	ck_assert_int_eq(keys_of(a), 1);
	/* without a key, nothing changes */
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, NULL, &out2), STORE_OK);
	ck_assert_int_eq(count_where("scenarios", "tenant_id", a), 2);
	ck_assert_int_eq(keys_of(a), 1);
	json_decref(out);
	json_decref(out2);
	json_decref(sc);
}
END_TEST

/* A key is its tenant's: the other tenant's same key finds nothing and
 * records its own answer. */
START_TEST(test_idem_tenants)
{
	char a[33], b[33];
	struct store_idem k = idem("shared-key", ROUTE, SHA_A, T0, T8);
	json_t *sa = sample_scenario("of-a"), *sb = sample_scenario("of-b");
	json_t *oa = NULL, *ob = NULL, *got = NULL;
	int status = 0;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sa, &k, &oa), STORE_OK);
	ck_assert_int_eq(store_idem_lookup(st, b, &k, &status, &got), STORE_NOT_FOUND);
	ck_assert_int_eq(store_scenario_create_idem(st, b, NULL, sb, &k, &ob), STORE_OK);
	ck_assert_str_ne(jstr(oa, "id"), jstr(ob, "id"));
	ck_assert_int_eq(store_idem_lookup(st, b, &k, &status, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "id"), jstr(ob, "id"));
	json_decref(got);
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "id"), jstr(oa, "id"));
	json_decref(got);
	ck_assert_int_eq(keys_of(a), 1);
	ck_assert_int_eq(keys_of(b), 1);
	json_decref(oa);
	json_decref(ob);
	json_decref(sa);
	json_decref(sb);
}
END_TEST

/* An expired key is ignored by lookups and deleted by the tenant's next
 * key write (only that tenant's expired ones), after which the key can be
 * used again. */
START_TEST(test_idem_expiry)
{
	char a[33], b[33];
	struct store_idem k = idem("old", ROUTE, SHA_A, T0, T8);
	struct store_idem kb = idem("old", ROUTE, SHA_A, T0, T8);
	struct store_idem other = idem("new", ROUTE, SHA_B, T2D, T3D);
	json_t *sc = sample_scenario("s"), *out = NULL, *got = NULL;
	int status = 0;

	two_tenants(a, b);
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, &k, &out), STORE_OK);
	json_decref(out);
	ck_assert_int_eq(store_scenario_create_idem(st, b, NULL, sc, &kb, &out), STORE_OK);
	json_decref(out);
	k.now = T12;
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &got), STORE_NOT_FOUND);
	k.now = T8; /* expires_at is the first instant it is gone */
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &got), STORE_NOT_FOUND);
	ck_assert_int_eq(keys_of(a), 1); /* a lookup deletes nothing */

	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, &other, &out), STORE_OK);
	json_decref(out);
	ck_assert_int_eq(keys_of(a), 1);
	ck_assert_int_eq(count_where("idempotency_keys", "idem_key", "old"), 1); /* b's */
	ck_assert_int_eq(keys_of(b), 1);

	/* the expired key is free again */
	k = idem("old", ROUTE, SHA_B, T2D, T3D);
	ck_assert_int_eq(store_scenario_create_idem(st, a, NULL, sc, &k, &out), STORE_OK);
	json_decref(out);
	ck_assert_int_eq(store_idem_lookup(st, a, &k, &status, &got), STORE_OK);
	json_decref(got);
	ck_assert_int_eq(count_where("scenarios", "tenant_id", a), 3);
	json_decref(sc);
}
END_TEST

/* Runs, sessions and comparisons record their key with their answer too. */
START_TEST(test_idem_other_creates)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33], b[33];
	struct store_idem kr =
	    idem("run-key", "POST /v1/m/sandbox/scenarios/x/runs", SHA_A, T0, T8);
	struct store_idem ks = idem("session-key", "POST /v1/m/sandbox/sessions", SHA_A, T0, T8);
	static const int seqs[] = {1, 2};
	json_t *outs = make_outputs(seqs, 2), *out = NULL, *got = NULL;
	json_t *sess = jload("{\"external_id\":\"conv-1\",\"events\":[]}");
	struct store_run r = sample_run(sid, outs);
	int status = 0;

	two_tenants(a, b);
	ck_assert_int_eq(store_run_record_idem(st, a, NULL, &r, &kr, &out), STORE_OK);
	ck_assert_int_eq(store_idem_lookup(st, a, &kr, &status, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "id"), jstr(out, "id"));
	ck_assert_int_eq(jint(got, "steps_total"), jint(out, "steps_total"));
	json_decref(got);
	json_decref(out);
	ck_assert_int_eq(store_run_record_idem(st, a, NULL, &r, &kr, &out), STORE_CONFLICT);
	ck_assert_int_eq(count_where("runs", "tenant_id", a), 1);

	ck_assert_int_eq(store_session_create_idem(st, a, NULL, sess, &ks, &out), STORE_OK);
	ck_assert_int_eq(store_idem_lookup(st, a, &ks, &status, &got), STORE_OK);
	ck_assert_str_eq(jstr(got, "id"), jstr(out, "id"));
	json_decref(got);
	json_decref(out);
	ck_assert_int_eq(store_session_create_idem(st, a, NULL, sess, &ks, &out), STORE_CONFLICT);
	ck_assert_int_eq(count_where("sessions", "tenant_id", a), 1);
	json_decref(sess);
	json_decref(outs);
}
END_TEST

void store_idem_cases(TCase *tc)
{
	tcase_add_test(tc, test_idem_scenario);
	tcase_add_test(tc, test_idem_taken_rolls_back);
	tcase_add_test(tc, test_idem_tenants);
	tcase_add_test(tc, test_idem_expiry);
	tcase_add_test(tc, test_idem_other_creates);
}
