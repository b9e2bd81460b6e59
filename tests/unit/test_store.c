/*
 * Unit tests of the store (sql/) on SQLite through libsqliteodbc, and,
 * when OLIVARES_TEST_PG_DSN is set, the very same cases on PostgreSQL
 * through odbc-postgresql. Every case gets a fresh database: a new temp file
 * for SQLite; for PostgreSQL every table is dropped first, so the suite can
 * be run again and again on one database.
 *
 * A raw ODBC connection (not the store) looks at the rows themselves, to
 * check what is stored (no token secret anywhere) and what is not (no run
 * left behind by a failed transaction).
 *
 * One program from several files: this one (migrations, tenants, tokens,
 * modules, audit, text round trips, the connection and its locks) builds
 * the suite; test_store_runs.c, test_store_comparisons.c,
 * test_store_sessions.c, test_store_idem.c, test_store_jobs.c,
 * test_store_suites.c and test_store_metrics.c add theirs;
 * store_fixture.c is what they share.
 * One program, not one per file, because the PostgreSQL cases share one
 * database that each case empties: two programs run side by side (make -j
 * check) would drop each other's tables.
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sql/store.h"
#include "tests/unit/store_fixture.h"

/* ---- cases -------------------------------------------------------------------- */

START_TEST(test_migrate_idempotent)
{
	int n = -1;

	ck_assert_int_eq(store_check_schema(st), STORE_UNAVAILABLE);
	ck_assert_int_eq(store_migrate(st, &n), STORE_OK);
	ck_assert_int_ge(n, 1);
	ck_assert_int_eq(store_check_schema(st), STORE_OK);
	ck_assert_int_eq(store_migrate(st, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_check_schema(st), STORE_OK);
	ck_assert_int_ge(raw_count("SELECT COUNT(*) FROM schema_migrations"), 1);
}
END_TEST

START_TEST(test_tenant_token)
{
	char a[33], b[33], found[33], tok_id[33], tok_id2[33], sha[65], sha2[65];
	const char *token = "olv_5f3c0c1e9d2b4a6f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817";
	struct store_principal p;
	json_t *list = NULL, *ev;

	two_tenants(a, b);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(store_tenant_create(st, "acme", found), STORE_CONFLICT);
	ck_assert_int_eq(store_tenant_create(st, "", found), STORE_ERROR);
	ck_assert_int_eq(store_tenant_find(st, "acme", found), STORE_OK);
	ck_assert_str_eq(found, a);
	ck_assert_int_eq(store_tenant_find(st, "nobody", found), STORE_NOT_FOUND);
	ck_assert_int_eq(store_tenant_list(st, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "tenants")), 2);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "tenants"), 0), "name"), "acme");
	json_decref(list);

	sha256_hex(token, strlen(token), sha);
	ck_assert_int_eq(store_token_create(st, a, STORE_ROLE_EDITOR, sha, "ci", NULL, tok_id),
	                 STORE_OK);
	ck_assert_uint_eq(strlen(tok_id), 32);
	/* the same digest twice is refused, and its audit event is not
	 * written either (one transaction) */
	ck_assert_int_eq(
	    store_token_create(st, b, STORE_ROLE_ADMIN, sha, "", "olivares-admin", tok_id2),
	    STORE_CONFLICT);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'token.create'"),
	                 0);
	/* with an actor, the token and its event together */
	sha256_hex("olv_audited", 11, sha2);
	ck_assert_int_eq(
	    store_token_create(st, b, STORE_ROLE_VIEWER, sha2, "", "olivares-admin", tok_id2),
	    STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'token.create' AND actor = 'olivares-admin'"),
	                 1);
	ck_assert_int_eq(store_audit_list(st, b, 1, &list), STORE_OK);
	ev = json_array_get(json_object_get(list, "events"), 0);
	ck_assert_str_eq(jstr(ev, "target_id"), tok_id2);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "token_id"), tok_id2);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "role"), "viewer");
	json_decref(list);
	/* unknown tenant */
	ck_assert_int_eq(
	    store_token_create(st, "0123456789abcdef0123456789abcdef", STORE_ROLE_ADMIN,
	                       "aa23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	                       "", NULL, tok_id2),
	    STORE_NOT_FOUND);

	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	ck_assert_str_eq(p.token_id, tok_id);
	ck_assert_str_eq(p.sha256_hex, sha);
	ck_assert_int_eq(p.role, STORE_ROLE_EDITOR);
	ck_assert_int_eq(store_token_lookup(st, "00", &p), STORE_NOT_FOUND);
	ck_assert_int_eq(
	    store_token_lookup(
	        st, "0000000000000000000000000000000000000000000000000000000000000000", &p),
	    STORE_NOT_FOUND);

	/* the digest is stored; the secret, whole or without its prefix, is not */
	ck_assert_int_eq(raw_cells_containing(sha), 1);
	ck_assert_int_eq(raw_cells_containing(token), 0);
	ck_assert_int_eq(raw_cells_containing(token + 4), 0);

	/* a revoked token no longer authenticates */
	ck_assert_int_eq(raw_exec("UPDATE api_tokens SET revoked = 1"), 0);
	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_NOT_FOUND);
}
END_TEST

START_TEST(test_modules)
{
	char a[33], b[33];
	int on = -1;
	json_t *list = NULL;
	json_t *m;

	two_tenants(a, b);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(store_module_list(st, a, &list), STORE_OK);
	m = json_array_get(json_object_get(list, "modules"), 0);
	ck_assert_str_eq(jstr(m, "name"), "sandbox");
	ck_assert(json_is_false(json_object_get(m, "enabled")));
	json_decref(list);

	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, NULL, NULL), STORE_OK);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 1);
	ck_assert_int_eq(store_module_list(st, a, &list), STORE_OK);
	ck_assert(json_is_true(
	    json_object_get(json_array_get(json_object_get(list, "modules"), 0), "enabled")));
	json_decref(list);
	/* another tenant is untouched */
	ck_assert_int_eq(store_module_get(st, b, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	/* off again (upsert), unknown modules refused */
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 0, NULL, NULL), STORE_OK);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(store_module_set(st, a, "evals", 1, NULL, NULL), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM module_settings"), 1);
	/* with an actor, the switch and its event together */
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, "actor-1", NULL), STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'module.enable' AND actor = 'actor-1'"),
	                 1);
	ck_assert_int_eq(
	    store_module_set(st, "0123456789abcdef0123456789abcdef", "sandbox", 0, "actor-1", NULL),
	    STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE actor = 'actor-1'"), 1);
}
END_TEST

/* Text that must come back byte for byte. */
static const char *const tricky[] = {
    "line one\nline two\n",
    "quotes \" and 'single' and backslash \\ and \\n literal",
    "unicode: é à ü — 日本語 — 🎉 — \xe2\x80\xa8",
    "tabs\tand\r\nCRLF and {{index}} {{subject_kind}} {{other}} }{",
    "",
    "trailing newline\n",
};

START_TEST(test_roundtrip_bytes)
{
	char a[33];
	json_t *in, *steps, *mocks, *s = NULL, *g = NULL, *outs, *ro = NULL, *run = NULL;
	struct store_run r;
	size_t big_len = 900 * 1024, i;
	char *big;
	char key[16];
	char *want, *got;

	migrated();
	mk_tenant("acme", a);
	/* ~900 KiB of mixed ASCII, newlines and multi-byte characters */
	big = malloc(big_len + 1);
	for (i = 0; i + 4 <= big_len; i += 4)
		memcpy(big + i, (i / 4) % 64 == 63 ? "é\n\"" : (i / 4) % 3 ? "日\\" : "ab\nc", 4);
	big[i] = '\0';
	big_len = strlen(big);

	steps = json_array();
	mocks = json_array();
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		snprintf(key, sizeof key, "step-%zu", i + 1);
		json_array_append_new(steps,
		                      json_pack("{s:s,s:s}", "key", key, "input", tricky[i]));
		json_array_append_new(
		    mocks, json_pack("{s:s,s:s}", "resource", tricky[i], "response", tricky[i]));
	}
	json_array_append_new(steps, json_pack("{s:s,s:s}", "key", "big", "input", big));
	in = json_pack("{s:s,s:s,s:s,s:o,s:o}", "name", "名前 \"quoted\"\n", "description",
	               tricky[1], "subject_kind", tricky[2], "steps", steps, "mocks", mocks);
	ck_assert_int_eq(store_scenario_create(st, a, NULL, in, &s), STORE_OK);
	ck_assert_int_eq(store_scenario_get(st, a, jstr(s, "id"), &g), STORE_OK);
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		json_t *step = json_array_get(json_object_get(g, "steps"), i);

		ck_assert_str_eq(jstr(step, "input"), tricky[i]);
		ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "mocks"), i), "response"),
		                 tricky[i]);
	}
	ck_assert_uint_eq(json_string_length(json_object_get(
	                      json_array_get(json_object_get(g, "steps"), i), "input")),
	                  big_len);
	ck_assert(memcmp(jstr(json_array_get(json_object_get(g, "steps"), i), "input"), big,
	                 big_len) == 0);
	ck_assert_str_eq(jstr(g, "name"), "名前 \"quoted\"\n");
	ck_assert_str_eq(jstr(g, "subject_kind"), tricky[2]);
	/* the JSON text itself survives byte for byte */
	want = json_dumps(in, JSON_COMPACT | JSON_SORT_KEYS);
	json_object_del(g, "id");
	json_object_del(g, "version");
	json_object_del(g, "digest");
	json_object_del(g, "created_at");
	json_object_del(g, "updated_at");
	got = json_dumps(g, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(got, want);
	free(want);
	free(got);

	/* outputs too, including a ~900 KiB one */
	outs = json_array();
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++)
		json_array_append_new(outs,
		                      json_pack("{s:i,s:s,s:s,s:s,s:s,s:s}", "seq", (int)i + 1,
		                                "key", "k", "input", tricky[i], "output", tricky[i],
		                                "status", "error", "error_kind", "mock_miss"));
	json_array_append_new(outs, json_pack("{s:i,s:s,s:s,s:s,s:s,s:n}", "seq", (int)i + 1, "key",
	                                      "big", "input", "x", "output", big, "status", "ok",
	                                      "error_kind"));
	/* the first step carries a trace (migration 010): a tool call and a
	 * resource miss with its near miss, tricky bytes in both */
	json_object_set_new(
	    json_array_get(outs, 0), "trace",
	    json_pack("[{s:s, s:{s:s}, s:b, s:i, s:i}, {s:s, s:b, s:n, s:i, s:{s:i, s:s, s:i, "
	              "s:s, s:s, s:s}}]",
	              "tool", "search", "args", "q", tricky[1], "hit", 1, "mock", 1, "duration_us",
	              42, "resource", "GET /a\r\n", "hit", 0, "mock", "duration_us", 7, "near_miss",
	              "mock", 0, "resource", "GET /a\n", "offset", 6, "request_has", "CR (U+000D)",
	              "mock_has", "LF (U+000A)", "why",
	              "line ending: CR LF in the request, LF in the mock"));
	r = sample_run(jstr(s, "id"), outs);
	r.variant = "é\n";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "variant"), "é\n");
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(
	        json_object_get(
	            json_array_get(
	                json_object_get(json_array_get(json_object_get(ro, "outputs"), 0), "trace"),
	                1),
	            "near_miss"),
	        "offset")),
	    6);
	/* no duration given: each reads back unknown; no trace given: null */
	for (i = 0; i < json_array_size(outs); i++) {
		json_object_set_new(json_array_get(outs, i), "duration_ms", json_null());
		if (i > 0)
			json_object_set_new(json_array_get(outs, i), "trace", json_null());
	}
	ck_assert(json_equal(json_object_get(ro, "outputs"), outs));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(ro, "outputs"), 2), "output"),
	                 tricky[2]);

	json_decref(ro);
	json_decref(run);
	json_decref(outs);
	json_decref(g);
	json_decref(s);
	json_decref(in);
	free(big);
}
END_TEST

START_TEST(test_token_revoke)
{
	char a[33], b[33], tok_a[33], tok_keep[33], tok_b[33], id1[33], id2[33], s1[65], s2[65];
	char secret[128], sha[65];
	struct store_principal p;
	json_t *audit = NULL, *ev;

	two_tenants(a, b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "keep", tok_keep);
	mk_token(b, STORE_ROLE_ADMIN, "b", tok_b);
	sign_in(a, tok_a, "r1", s1, id1);
	sign_in(a, tok_keep, "r2", s2, id2);

	/* another tenant's id, an unknown or malformed one: nothing changes */
	ck_assert_int_eq(store_token_revoke(st, b, tok_a, "olivares-admin"), STORE_NOT_FOUND);
	ck_assert_int_eq(
	    store_token_revoke(st, a, "0123456789abcdef0123456789abcdef", "olivares-admin"),
	    STORE_NOT_FOUND);
	ck_assert_int_eq(store_token_revoke(st, a, "x' OR '1'='1", "olivares-admin"),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(count_where("api_tokens", "revoked", "1"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);

	ck_assert_int_eq(store_token_revoke(st, a, tok_a, "olivares-admin"), STORE_OK);
	/* the token no longer authenticates, its session is gone, the other
	 * token and its session are untouched */
	snprintf(secret, sizeof secret, "olv_test_token_%s", "a");
	sha256_hex(secret, strlen(secret), sha);
	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_NOT_FOUND);
	assert_not_found_zeroed(s1, T0);
	ck_assert_int_eq(count_where("web_sessions", "id", id1), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_keep);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "token.revoke");
	ck_assert_str_eq(jstr(ev, "actor"), "olivares-admin");
	ck_assert_str_eq(jstr(ev, "target_id"), tok_a);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(json_object_get(ev, "detail"), "sessions")), 1);
	/* the operator tool is no token: no role, no label */
	ck_assert(json_is_null(json_object_get(ev, "actor_role")));
	ck_assert(json_is_null(json_object_get(ev, "actor_label")));
	json_decref(audit);
	/* the sign-ins name their tokens' role and label (revoked or not) */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	{
		json_t *e;
		size_t i;
		int seen = 0;

		json_array_foreach(json_object_get(audit, "events"), i, e)
		{
			if (strcmp(jstr(e, "action"), "admin.signin") != 0)
				continue;
			if (strcmp(jstr(e, "actor"), tok_a) == 0) {
				ck_assert_str_eq(jstr(e, "actor_role"), "editor");
				ck_assert_str_eq(jstr(e, "actor_label"), "a");
				seen |= 1;
			} else if (strcmp(jstr(e, "actor"), tok_keep) == 0) {
				ck_assert_str_eq(jstr(e, "actor_role"), "admin");
				ck_assert_str_eq(jstr(e, "actor_label"), "keep");
				seen |= 2;
			}
		}
		ck_assert_int_eq(seen, 3);
	}
	json_decref(audit);
	/* the listing: both tokens of acme, the revoked one marked, no
	 * digest; globex's is not there */
	{
		json_t *list = NULL, *arr, *t0, *t1;
		char *text;

		ck_assert_int_eq(store_token_list(st, a, &list), STORE_OK);
		arr = json_object_get(list, "tokens");
		ck_assert_uint_eq(json_array_size(arr), 2);
		/* two tokens made in the same millisecond order by id: find them */
		t0 = json_array_get(arr, 0);
		t1 = json_array_get(arr, 1);
		if (strcmp(jstr(t0, "id"), tok_a) != 0) {
			t0 = json_array_get(arr, 1);
			t1 = json_array_get(arr, 0);
		}
		ck_assert_str_eq(jstr(t0, "id"), tok_a);
		ck_assert_str_eq(jstr(t0, "role"), "editor");
		ck_assert_str_eq(jstr(t0, "label"), "a");
		ck_assert(json_is_true(json_object_get(t0, "revoked")));
		ck_assert_str_eq(jstr(t1, "id"), tok_keep);
		ck_assert_str_eq(jstr(t1, "role"), "admin");
		ck_assert(json_is_false(json_object_get(t1, "revoked")));
		ck_assert_uint_eq(json_object_size(t0), 6);
		ck_assert_uint_eq(json_array_size(json_object_get(t0, "scopes")), 0);
		text = json_dumps(list, 0);
		ck_assert_ptr_null(strstr(text, sha));
		free(text);
		json_decref(list);
		ck_assert_int_eq(store_token_list(st, b, &list), STORE_OK);
		ck_assert_uint_eq(json_array_size(json_object_get(list, "tokens")), 1);
		ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "tokens"), 0), "id"),
		                 tok_b);
		json_decref(list);
		ck_assert_int_eq(store_token_list(st, "nope", &list), STORE_NOT_FOUND);
		ck_assert_ptr_null(list);
	}
	/* a session cannot be made from it any more; twice is NOT_FOUND */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id1), STORE_NOT_FOUND);
	ck_assert_int_eq(store_token_revoke(st, a, tok_a, "olivares-admin"), STORE_NOT_FOUND);
}
END_TEST

START_TEST(test_audit_pages)
{
	char a[33], b[33], action[32];
	json_t *page = NULL, *first = NULL, *items;
	int i;

	two_tenants(a, b);
	/* a's events test.1 .. test.5, interleaved with b's */
	for (i = 1; i <= 5; i++) {
		snprintf(action, sizeof action, "test.%d", i);
		ck_assert_int_eq(store_audit_append(st, a, NULL, action, NULL, NULL), STORE_OK);
		ck_assert_int_eq(store_audit_append(st, b, NULL, "other.tenant", NULL, NULL),
		                 STORE_OK);
	}

	ck_assert_int_eq(store_audit_list_page(st, a, 2, 0, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.5");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "test.4");
	/* store_audit_list is page 0 */
	ck_assert_int_eq(store_audit_list(st, a, 2, &first), STORE_OK);
	ck_assert(json_equal(page, first));
	json_decref(first);
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 2, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.3");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "test.2");
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 4, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.1");
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 5, &page), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(page, "events")), 0);
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 500, 3, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.2");
	json_decref(page);
	/* a negative offset counts as 0 */
	ck_assert_int_eq(store_audit_list_page(st, a, 1, -3, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.5");
	json_decref(page);
	/* b's pages hold only b's events */
	ck_assert_int_eq(store_audit_list_page(st, b, 500, 1, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 4);
	for (i = 0; i < 4; i++)
		ck_assert_str_eq(jstr(json_array_get(items, (size_t)i), "action"), "other.tenant");
	json_decref(page);
}
END_TEST

/* Several processes writing at once: every write lands (locks are waited
 * for or retried, never dropped). */
enum { WRITERS = 4, EACH = 15 };

/* Fork WRITERS processes that each record EACH runs through their own
 * connection (dsn); returns how many store_run_record calls said STORE_OK
 * and, in *unavailable, how many said STORE_UNAVAILABLE. */
static int concurrent_writes(const char *dsn, const char *tenant, int *unavailable)
{
	static const int seqs[] = {1, 2};
	pid_t pids[WRITERS];
	int i, status, ok = 0;

	*unavailable = 0;
	for (i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct store *mine = NULL;
			json_t *outs = make_outputs(seqs, 2);
			struct store_run r = sample_run(NULL, outs);
			json_t *run;
			enum store_rc rc;
			int k, good = 0, busy = 0;

			if (store_open(dsn, &mine))
				_exit(255);
			for (k = 0; k < EACH; k++) {
				run = NULL;
				rc = store_run_record(mine, tenant, NULL, &r, &run);
				if (rc == STORE_OK)
					good++;
				else if (rc == STORE_UNAVAILABLE)
					busy++;
				else
					_exit(254); /* any other answer is a defect */
				json_decref(run);
			}
			store_close(mine);
			json_decref(outs);
			_exit(good * 16 + busy);
		}
	}
	for (i = 0; i < WRITERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_lt(WEXITSTATUS(status), 254);
		ok += WEXITSTATUS(status) / 16;
		*unavailable += WEXITSTATUS(status) % 16;
	}
	return ok;
}

/* Several processes writing at once: every write lands (locks are waited
 * for or retried, never dropped). */
START_TEST(test_concurrent_writers)
{
	char a[33];
	json_t *list = NULL;
	int ok, unavailable;

	migrated();
	mk_tenant("acme", a);
	store_close(st);
	st = NULL;
	ok = concurrent_writes(g_dsn, a, &unavailable);
	ck_assert_int_eq(ok, WRITERS * EACH);
	ck_assert_int_eq(unavailable, 0);
	open_store();
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 500, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), WRITERS * EACH);
	json_decref(list);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), WRITERS * EACH * 2);
}
END_TEST

/* Hold SQLite's write lock from another process for hold_ms; returns once
 * the lock is held. The child commits its own row ("lockholder-<tag>"). */
static pid_t hold_write_lock(int hold_ms, char tag)
{
	char sql[256];
	int fds[2];
	pid_t pid;
	char c = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct raw r;
		SQLHSTMT h;

		close(fds[0]);
		raw_open(&r);
		SQLSetConnectAttr(r.dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
		SQLAllocHandle(SQL_HANDLE_STMT, r.dbc, &h);
		snprintf(sql, sizeof sql,
		         "INSERT INTO tenants (id, name, created_at) VALUES "
		         "('ffffffffffffffffffffffffffffff%c%c', 'lockholder-%c', 'x')",
		         tag, tag, tag);
		if (!SQL_SUCCEEDED(SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS))) {
			SQLCHAR state[6], msg[256];
			SQLINTEGER nat;
			SQLSMALLINT len;

			SQLGetDiagRec(SQL_HANDLE_STMT, h, 1, state, &nat, msg, sizeof msg, &len);
			fprintf(stderr, "lock holder: [%s] %s\n", state, msg);
			_exit(1);
		}
		SQLFreeHandle(SQL_HANDLE_STMT, h);
		if (write(fds[1], "L", 1) != 1)
			_exit(1);
		usleep((useconds_t)hold_ms * 1000);
		SQLEndTran(SQL_HANDLE_DBC, r.dbc, SQL_COMMIT);
		raw_close(&r);
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000L + (t1.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* SQLite with almost no busy wait in the driver (Timeout=1 ms; 0 would mean
 * the driver's default): "database is locked" comes back at once, so the
 * store's own bounded retry is what waits. A lock released in time: the
 * write lands. A lock held past the retries: STORE_UNAVAILABLE and nothing
 * written (never a silent loss, never a success that did not happen). */
START_TEST(test_sqlite_locked_retry)
{
	struct store_stats s0, s1, s2;
	char a[33], id[33];
	char dsn[2100];
	struct timespec t0;
	pid_t pid;
	int status;

	migrated();
	store_close(st);
	snprintf(dsn, sizeof dsn,
	         "Driver=SQLite3;Database=%s/t.db;Timeout=1;JournalMode=WAL;SyncPragma=NORMAL;"
	         "FKSupport=1",
	         g_dir);
	ck_assert_int_eq(store_open(dsn, &st), STORE_OK);
	/* store_stats: the connection's retries and unavailable answers */
	store_stats(st, &s0);
	ck_assert_uint_eq(s0.retries, 0);
	ck_assert_uint_eq(s0.unavailable, 0);

	pid = hold_write_lock(150, '1');
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(store_tenant_create(st, "patient", a) == STORE_OK, "%s",
	              store_last_error(st));
	ck_assert_int_ge(ms_since(&t0), 100);
	store_stats(st, &s1);
	ck_assert_uint_ge(s1.retries, 1);
	ck_assert_uint_eq(s1.unavailable, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(store_tenant_find(st, "patient", id), STORE_OK);
	ck_assert_str_eq(id, a);

	pid = hold_write_lock(3000, '2');
	ck_assert_int_eq(store_tenant_create(st, "impatient", a), STORE_UNAVAILABLE);
	ck_assert(strstr(store_last_error(st), "busy") != NULL);
	store_stats(st, &s2);
	ck_assert_uint_gt(s2.retries, s1.retries);
	ck_assert_uint_eq(s2.unavailable, 1);
	store_stats(NULL, &s2);
	ck_assert_uint_eq(s2.retries + s2.unavailable, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(store_tenant_find(st, "impatient", id), STORE_NOT_FOUND);
	ck_assert_int_eq(store_tenant_find(st, "lockholder-1", id), STORE_OK);
	ck_assert_int_eq(store_tenant_find(st, "lockholder-2", id), STORE_OK);
}
END_TEST

/* mode & 07777 of path, or -1 when it does not exist */
static int file_mode(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return -1;
	return (int)(sb.st_mode & 07777);
}

/* SQLite only: a new database holds token hashes and tenant data, so the
 * store creates it 0600 whatever the umask (sql/store.h), and SQLite gives
 * its -wal and -shm that mode; an existing database keeps the mode the
 * operator gave it. */
START_TEST(test_sqlite_file_mode)
{
	char dsn[2100], path[600], wal[700], shm[700];
	struct store *mine = NULL;
	struct stat lsb;
	int applied = 0;
	int fd;

	store_close(st);
	st = NULL;
	umask(022);
	snprintf(path, sizeof path, "%s/new.db", g_dir);
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(shm, sizeof shm, "%s-shm", path);
	snprintf(dsn, sizeof dsn,
	         "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL;SyncPragma=NORMAL;"
	         "FKSupport=1",
	         path);
	ck_assert_int_eq(file_mode(path), -1);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_gt(applied, 0);
	/* the connection is open in WAL mode: both exist now */
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_int_eq(file_mode(wal), 0600);
	ck_assert_int_eq(file_mode(shm), 0600);
	store_close(mine);
	mine = NULL;

	/* a umask that takes the owner's bits: still 0600, and usable */
	snprintf(path, sizeof path, "%s/strict.db", g_dir);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL", path);
	umask(0277);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	umask(022);
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	store_close(mine);
	mine = NULL;

	/* a symbolic link to a database not made yet (a data directory
	 * pointed elsewhere), through a second link: the file at the end of
	 * the chain is the new database, 0600 too; the links stay links */
	umask(022);
	snprintf(path, sizeof path, "%s/linked.db", g_dir);
	snprintf(wal, sizeof wal, "%s/hop.db", g_dir);
	snprintf(shm, sizeof shm, "%s/target.db", g_dir);
	ck_assert_int_eq(symlink("hop.db", path), 0);
	ck_assert_int_eq(symlink(shm, wal), 0);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000", path);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_int_eq(file_mode(shm), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_eq(file_mode(shm), 0600);
	store_close(mine);
	mine = NULL;
	ck_assert_int_eq(lstat(path, &lsb), 0);
	ck_assert(S_ISLNK(lsb.st_mode));
	ck_assert_int_eq(lstat(wal, &lsb), 0);
	ck_assert(S_ISLNK(lsb.st_mode));

	/* NoCreat=1 (the workers' DSN): nothing is created, the open fails */
	snprintf(path, sizeof path, "%s/nocreat.db", g_dir);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;NoCreat=1", path);
	ck_assert_int_eq(store_open(dsn, &mine), STORE_UNAVAILABLE);
	ck_assert_ptr_null(mine);
	ck_assert_int_eq(file_mode(path), -1);

	/* an existing database keeps its mode: 0640 stays 0640 */
	snprintf(path, sizeof path, "%s/existing.db", g_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0640), 0);
	close(fd);
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL", path);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_eq(file_mode(path), 0640);
	ck_assert_int_eq(file_mode(wal), 0640);
	ck_assert_int_eq(store_reconnect(mine), STORE_OK);
	ck_assert_int_eq(file_mode(path), 0640);
	store_close(mine);
}
END_TEST

/* PostgreSQL only: the server drops the connection (a restart, a stale
 * connection after a long run). The call that notices before its commit
 * reconnects once and runs again: the database committed nothing of it,
 * so a read and a write both succeed, the write once. */
START_TEST(test_pg_connection_lost)
{
	static const char terminate[] = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
	                                "WHERE datname = current_database() AND pid <> "
	                                "pg_backend_pid()";
	char a[33], b[33], found[33];
	enum store_rc rc;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(raw_exec(terminate), 0);
	rc = store_tenant_find(st, "acme", found);
	ck_assert_msg(rc == STORE_OK, "rc %d: %s", rc, store_last_error(st));
	ck_assert_str_eq(found, a);
	ck_assert_int_eq(raw_exec(terminate), 0);
	rc = store_tenant_create(st, "globex", b);
	ck_assert_msg(rc == STORE_OK, "rc %d: %s", rc, store_last_error(st));
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM tenants WHERE name = 'globex'"), 1);
}
END_TEST

/* Token scopes: stored with the token, read back by every lookup (API and
 * admin view session), listed by name; a token without scopes has 0; the
 * names parse and print in one order. */
START_TEST(test_token_scopes)
{
	char a[33], id1[33], id2[33], id3[33], sha1[65], sha2[65], csha[65], sid[33], text[64];
	struct store_principal p;
	json_t *list = NULL, *t, *ev;
	const char *bad = NULL;
	unsigned mask = 99;
	int enabled = -1;

	migrated();
	mk_tenant("acme", a);
	sha256_hex("olv_scoped", 10, sha1);
	sha256_hex("olv_plain", 9, sha2);
	ck_assert_int_eq(store_token_create_scoped(st, a, STORE_ROLE_ADMIN,
	                                           STORE_SCOPE_COMPARE | STORE_SCOPE_READ, sha1,
	                                           "ci", "olivares-admin", id1),
	                 STORE_OK);
	ck_assert_int_eq(store_token_create(st, a, STORE_ROLE_ADMIN, sha2, "", NULL, id2),
	                 STORE_OK);
	/* its own id buffer: a refused create clears the one it is given */
	ck_assert_int_eq(
	    store_token_create_scoped(st, a, STORE_ROLE_ADMIN, 64, sha2, "", NULL, id3),
	    STORE_ERROR);
	ck_assert_str_eq(id3, "");

	ck_assert_int_eq(store_token_lookup(st, sha1, &p), STORE_OK);
	ck_assert_uint_eq(p.scopes, STORE_SCOPE_COMPARE | STORE_SCOPE_READ);
	ck_assert_int_eq(p.role, STORE_ROLE_ADMIN);
	ck_assert_int_eq(store_token_lookup_module(st, sha1, "sandbox", &p, &enabled), STORE_OK);
	ck_assert_uint_eq(p.scopes, STORE_SCOPE_COMPARE | STORE_SCOPE_READ);
	ck_assert_int_eq(enabled, 0);
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, NULL, NULL), STORE_OK);
	ck_assert_int_eq(store_token_lookup_module(st, sha1, "sandbox", &p, &enabled), STORE_OK);
	ck_assert_int_eq(enabled, 1);
	ck_assert_int_eq(store_token_lookup(st, sha2, &p), STORE_OK);
	ck_assert_uint_eq(p.scopes, 0);
	/* a session of the scoped token carries its scopes */
	sign_in(a, id1, "cookie-scoped", csha, sid);
	ck_assert_int_eq(store_web_session_lookup(st, csha, T0, &p), STORE_OK);
	ck_assert_uint_eq(p.scopes, STORE_SCOPE_COMPARE | STORE_SCOPE_READ);

	ck_assert_int_eq(store_token_list(st, a, &list), STORE_OK);
	/* same created_at to the millisecond: the order is then by id */
	t = json_array_get(json_object_get(list, "tokens"), 0);
	if (strcmp(jstr(t, "id"), id1) != 0)
		t = json_array_get(json_object_get(list, "tokens"), 1);
	ck_assert_str_eq(jstr(t, "id"), id1);
	ck_assert_uint_eq(json_array_size(json_object_get(t, "scopes")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(t, "scopes"), 0)),
	                 "read");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(t, "scopes"), 1)),
	                 "compare");
	t = json_array_get(
	    json_object_get(list, "tokens"),
	    strcmp(jstr(json_array_get(json_object_get(list, "tokens"), 0), "id"), id1) == 0);
	ck_assert_str_eq(jstr(t, "id"), id2);
	ck_assert_uint_eq(json_array_size(json_object_get(t, "scopes")), 0);
	json_decref(list);
	ck_assert_int_eq(store_audit_list(st, a, 10, &list), STORE_OK);
	ev = json_array_get(json_object_get(list, "events"),
	                    json_array_size(json_object_get(list, "events")) - 1);
	ck_assert_str_eq(jstr(ev, "action"), "token.create");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(ev, "detail"), "scopes")),
	                  2);
	json_decref(list);

	ck_assert_int_eq(store_scopes_parse("compare,read", &mask, &bad), 0);
	ck_assert_uint_eq(mask, STORE_SCOPE_COMPARE | STORE_SCOPE_READ);
	ck_assert_int_eq(store_scopes_parse("read,run,compare,write,approve,admin", &mask, &bad),
	                 0);
	ck_assert_uint_eq(mask, STORE_SCOPE_ALL);
	ck_assert_int_eq(store_scopes_parse("read,bogus", &mask, &bad), -1);
	ck_assert_str_eq(bad, "bogus");
	ck_assert_uint_eq(mask, 0);
	ck_assert_int_eq(store_scopes_parse("read,", &mask, &bad), -1);
	ck_assert_int_eq(store_scopes_parse("rea", &mask, &bad), -1);
	ck_assert_int_eq(store_scopes_parse("", &mask, &bad), -1);
	store_scopes_format(STORE_SCOPE_COMPARE | STORE_SCOPE_READ, ", ", text, sizeof text);
	ck_assert_str_eq(text, "read, compare");
	store_scopes_format(0, ",", text, sizeof text);
	ck_assert_str_eq(text, "");
	store_scopes_format(STORE_SCOPE_ALL, ",", text, 9);
	ck_assert_str_eq(text, "read,run");
	store_scopes_format(STORE_SCOPE_ALL, ",", text, 12);
	ck_assert_str_eq(text, "read,run");
	ck_assert_str_eq(store_scope_name(STORE_SCOPE_APPROVE), "approve");
	ck_assert_ptr_null(store_scope_name(3));
}
END_TEST

static void add_cases(TCase *tc)
{
	tcase_add_test(tc, test_token_scopes);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_migrate_idempotent);
	tcase_add_test(tc, test_tenant_token);
	tcase_add_test(tc, test_modules);
	tcase_add_test(tc, test_roundtrip_bytes);
	tcase_add_test(tc, test_token_revoke);
	tcase_add_test(tc, test_audit_pages);
	tcase_add_test(tc, test_concurrent_writers);
	store_runs_cases(tc);
	store_comparisons_cases(tc);
	store_sessions_cases(tc);
	store_idem_cases(tc);
	store_jobs_cases(tc);
	store_evidence_cases(tc);
	store_suites_cases(tc);
	store_usage_cases(tc);
	store_metrics_cases(tc);
	store_retention_cases(tc);
}

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc;
	const char *pg = getenv("OLIVARES_TEST_PG_DSN");

	tc = tcase_create("sqlite");
	tcase_add_unchecked_fixture(tc, setup_root, teardown_root);
	tcase_add_checked_fixture(tc, setup_sqlite, teardown_sqlite);
	add_cases(tc);
	tcase_add_test(tc, test_sqlite_locked_retry);
	tcase_add_test(tc, test_sqlite_file_mode);
	suite_add_tcase(s, tc);
	if (pg && *pg) {
		tc = tcase_create("postgres");
		tcase_add_checked_fixture(tc, setup_pg, teardown_pg);
		add_cases(tc);
		tcase_add_test(tc, test_pg_connection_lost);
		suite_add_tcase(s, tc);
	} else {
		fprintf(stderr,
		        "test_store: OLIVARES_TEST_PG_DSN not set, PostgreSQL cases skipped\n");
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
