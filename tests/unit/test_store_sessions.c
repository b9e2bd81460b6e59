/*
 * The store's sessions (sql/sessions.c): history sessions imported for
 * replay and the replay runs that name them, and the admin view's sign-in
 * sessions (create, look up, purge, sign out).
 * Part of the test_store program (store_fixture.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/store_fixture.h"

/* A session as model_session_check leaves it: faithful, so a broken seq
 * ("x", 2.5, absent) and unknown kinds are kept as recorded. */
static json_t *sample_session(const char *external_id)
{
	json_t *s = jload("{\"events\":["
	                  "{\"seq\":1,\"kind\":\"input\",\"text\":\"caf\\u00e9 \\\"q\\\"\\nline\"},"
	                  "{\"seq\":2,\"kind\":\"tool_call\",\"resource\":\"crm:1\"},"
	                  "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"crm:1\","
	                  "\"text\":\"\\u65e5\\u672c \\ud83d\\ude00\"},"
	                  "{\"seq\":4,\"kind\":\"output\",\"text\":\"done\",\"key\":\"k\"},"
	                  "{\"seq\":\"x\",\"kind\":\"weird\"},"
	                  "{\"seq\":2.5,\"kind\":\"input\",\"text\":\"\"},"
	                  "{\"kind\":\"output\"}]}");

	json_object_set_new(s, "external_id", json_string(external_id));
	return s;
}

START_TEST(test_sessions)
{
	const char *actor = "33333333333333333333333333333333";
	char a[33];
	json_t *in1 = sample_session("ext-1"), *in2 = sample_session("ext-2");
	json_t *s1 = NULL, *s2 = NULL, *g = NULL, *list = NULL, *audit = NULL, *items, *ev, *bad;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, actor, in1, &s1), STORE_OK);
	ck_assert_uint_eq(json_object_size(s1), 4);
	ck_assert_uint_eq(strlen(jstr(s1, "id")), 32);
	ck_assert_str_eq(jstr(s1, "external_id"), "ext-1");
	ck_assert_int_eq(jint(s1, "events_count"), 7);
	ck_assert_uint_eq(strlen(jstr(s1, "created_at")), 24);
	ck_assert_int_eq(jstr(s1, "created_at")[23], 'Z');

	/* the events read back exactly as imported, in order */
	ck_assert_int_eq(store_session_get(st, a, jstr(s1, "id"), &g), STORE_OK);
	ck_assert_uint_eq(json_object_size(g), 5);
	ck_assert_str_eq(jstr(g, "id"), jstr(s1, "id"));
	ck_assert_str_eq(jstr(g, "external_id"), "ext-1");
	ck_assert_int_eq(jint(g, "events_count"), 7);
	ck_assert_str_eq(jstr(g, "created_at"), jstr(s1, "created_at"));
	ck_assert(json_equal(json_object_get(g, "events"), json_object_get(in1, "events")));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "events"), 0), "text"),
	                 "caf\xc3\xa9 \"q\"\nline");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "events"), 4), "seq"), "x");
	ck_assert(
	    json_is_real(json_object_get(json_array_get(json_object_get(g, "events"), 5), "seq")));
	json_decref(g);

	/* the audit event holds the count only, never the content */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ev = json_array_get(items, 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.session.import");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(s1, "id"));
	ck_assert_str_eq(jstr(ev, "actor"), actor);
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 1);
	ck_assert_int_eq(jint(json_object_get(ev, "detail"), "events"), 7);
	json_decref(audit);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE detail LIKE '%crm:1%'"),
	                 0);

	/* newest first, with limit and offset */
	json_array_remove(json_object_get(in2, "events"), 6);
	ck_assert_int_eq(store_session_create(st, a, actor, in2, &s2), STORE_OK);
	ck_assert_int_eq(jint(s2, "events_count"), 6);
	ck_assert_str_ne(jstr(s1, "id"), jstr(s2, "id"));
	ck_assert_int_eq(store_session_list(st, a, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "sessions");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert(json_equal(json_array_get(items, 0), s2));
	ck_assert(json_equal(json_array_get(items, 1), s1));
	json_decref(list);
	ck_assert_int_eq(store_session_list(st, a, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "sessions");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(s1, "id"));
	json_decref(list);

	/* an empty events array is a session too (a replay says it is degraded) */
	bad = jload("{\"external_id\":\"empty\",\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_OK);
	ck_assert_int_eq(jint(g, "events_count"), 0);
	json_decref(g);
	json_decref(bad);

	/* malformed objects are refused before anything is written */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 3);
	bad = jload("{\"external_id\":\"\",\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	ck_assert_ptr_null(g);
	json_decref(bad);
	bad = jload("{\"external_id\":\"e\",\"events\":{}}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	json_decref(bad);
	bad = jload("{\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	json_decref(bad);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 3);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);

	/* unknown and malformed ids */
	ck_assert_int_eq(store_session_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
	                 STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_session_get(st, a, "x' OR '1'='1", &g), STORE_NOT_FOUND);

	json_decref(s1);
	json_decref(s2);
	json_decref(in1);
	json_decref(in2);
}
END_TEST

START_TEST(test_session_tenant_isolation)
{
	static const int seqs[] = {1};
	char a[33], b[33];
	json_t *in = sample_session("private"), *s = NULL, *x = NULL, *run = NULL;
	json_t *outs = make_outputs(seqs, 1);
	struct store_run r = sample_run(NULL, outs);
	struct store_run_filter f;

	two_tenants(a, b);
	ck_assert_int_eq(store_session_create(st, a, NULL, in, &s), STORE_OK);

	ck_assert_int_eq(store_session_get(st, b, jstr(s, "id"), &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_session_list(st, b, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "sessions")), 0);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);

	/* a run of tenant B cannot name tenant A's session: nothing written */
	r.kind = "replay";
	r.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_record(st, b, NULL, &r, &run), STORE_NOT_FOUND);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 1);
	/* nor can tenant A name a session that does not exist */
	r.session_id = "ffffffffffffffffffffffffffffffff";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);

	/* tenant A's replay, invisible to B, even by session filter */
	r.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	memset(&f, 0, sizeof f);
	f.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_list_filtered(st, b, &f, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 1);
	json_decref(x);

	/* A's session is intact */
	ck_assert_int_eq(store_session_get(st, a, jstr(s, "id"), &x), STORE_OK);
	ck_assert(json_equal(json_object_get(x, "events"), json_object_get(in, "events")));
	json_decref(x);

	json_decref(run);
	json_decref(outs);
	json_decref(s);
	json_decref(in);
}
END_TEST

START_TEST(test_session_append_only)
{
	char a[33];
	json_t *in = sample_session("kept"), *s = NULL, *x = NULL;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, NULL, in, &s), STORE_OK);

	ck_assert_int_ne(raw_exec("UPDATE sessions SET external_id = 'changed'"), 0);
	ck_assert_int_ne(raw_exec("UPDATE sessions SET events = '[]', events_count = 0"), 0);
	ck_assert_int_ne(raw_exec("DELETE FROM sessions"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions WHERE external_id = 'kept' "
	                           "AND events_count = 7"),
	                 1);
	ck_assert_int_eq(store_session_get(st, a, jstr(s, "id"), &x), STORE_OK);
	ck_assert(json_equal(json_object_get(x, "events"), json_object_get(in, "events")));
	json_decref(x);
	json_decref(s);
	json_decref(in);
}
END_TEST

START_TEST(test_run_replay)
{
	static const int seqs[] = {1, 2};
	const char *actor = "44444444444444444444444444444444";
	char a[33];
	json_t *in = sample_session("replayed"), *ses = NULL, *other = NULL;
	json_t *sin = sample_scenario("s"), *sc = NULL;
	json_t *outs = make_outputs(seqs, 2);
	json_t *div = jload("{\"compared\":2,\"diverging\":1,\"first\":{\"seq\":2,\"key\":"
	                    "\"seq-3\",\"recorded\":\"r\\u00e9\",\"replayed\":\"x\\ny\"}}");
	json_t *rp = NULL, *dg = NULL, *sim = NULL, *rs = NULL, *g = NULL, *list = NULL;
	json_t *audit = NULL, *items, *detail;
	struct store_run r;
	struct store_run_filter f;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, actor, in, &ses), STORE_OK);
	ck_assert_int_eq(store_session_create(st, a, actor, in, &other), STORE_OK);
	ck_assert_int_eq(store_scenario_create(st, a, actor, sin, &sc), STORE_OK);

	/* a replay without a scenario */
	r = sample_run(NULL, outs);
	r.kind = "replay";
	r.scenario_digest = NULL;
	r.scenario_version = 7; /* ignored: no scenario, no version */
	r.session_id = jstr(ses, "id");
	r.divergence = div;
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rp), STORE_OK);
	/* egress_requests and hermetic: none left, so hermetic */
	ck_assert_int_eq(jint(rp, "egress_requests"), 0);
	ck_assert(json_is_true(json_object_get(rp, "hermetic")));
	/* no store suite pinned */
	ck_assert(json_is_null(json_object_get(rp, "suite_version")));
	ck_assert_uint_eq(json_object_size(rp), 39);
	ck_assert_str_eq(jstr(rp, "kind"), "replay");
	ck_assert(json_is_null(json_object_get(rp, "scenario_id")));
	ck_assert(json_is_null(json_object_get(rp, "scenario_version")));
	ck_assert(json_is_null(json_object_get(rp, "scenario_digest")));
	ck_assert_str_eq(jstr(rp, "session_id"), jstr(ses, "id"));
	ck_assert(json_equal(json_object_get(rp, "divergence"), div));
	ck_assert_str_eq(
	    jstr(json_object_get(json_object_get(rp, "divergence"), "first"), "recorded"),
	    "r\xc3\xa9");
	ck_assert_int_eq(store_run_get(st, a, jstr(rp, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, rp));
	json_decref(g);

	/* a degraded replay (no divergence), with a scenario */
	r = sample_run(jstr(sc, "id"), NULL);
	r.kind = "replay";
	r.status = "degraded";
	r.runner = "none";
	r.isolated = 0;
	r.destroyed = 0;
	r.steps_total = r.steps_ok = r.steps_error = 0;
	r.reason = "timeline cannot be rebuilt: session has no input";
	r.output_digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	r.session_id = jstr(other, "id");
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &dg), STORE_OK);
	ck_assert_str_eq(jstr(dg, "status"), "degraded");
	ck_assert_str_eq(jstr(dg, "runner"), "none");
	ck_assert_str_eq(jstr(dg, "scenario_id"), jstr(sc, "id"));
	ck_assert_int_eq(jint(dg, "scenario_version"), 1);
	ck_assert_str_eq(jstr(dg, "session_id"), jstr(other, "id"));
	ck_assert(json_is_null(json_object_get(dg, "divergence")));
	ck_assert_str_eq(jstr(dg, "reason"), r.reason);

	/* a simulation: no session, no divergence */
	r = sample_run(jstr(sc, "id"), outs);
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &sim), STORE_OK);
	ck_assert(json_is_null(json_object_get(sim, "session_id")));
	ck_assert(json_is_null(json_object_get(sim, "divergence")));

	/* the audit event of a replay names its session; a simulation's does not */
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	detail = json_object_get(json_array_get(json_object_get(audit, "events"), 0), "detail");
	ck_assert_uint_eq(json_object_size(detail), 3);
	json_decref(audit);
	ck_assert_int_eq(store_audit_list(st, a, 3, &audit), STORE_OK);
	detail = json_object_get(json_array_get(json_object_get(audit, "events"), 2), "detail");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(audit, "events"), 2), "target_id"),
	                 jstr(rp, "id"));
	ck_assert_uint_eq(json_object_size(detail), 4);
	ck_assert_str_eq(jstr(detail, "session_id"), jstr(ses, "id"));
	ck_assert(json_is_null(json_object_get(detail, "scenario_id")));
	json_decref(audit);

	/* filters: kind, session, both, with the old ones; old callers unchanged */
	memset(&f, 0, sizeof f);
	f.kind = "replay";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(rp, "id"));
	json_decref(list);
	f.kind = "simulation";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(sim, "id"));
	json_decref(list);
	f.kind = "comparison";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	memset(&f, 0, sizeof f);
	f.session_id = jstr(ses, "id");
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert(json_equal(json_array_get(items, 0), rp));
	json_decref(list);
	f.kind = "replay";
	f.status = "degraded";
	f.session_id = jstr(other, "id");
	f.scenario_id = jstr(sc, "id");
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	json_decref(list);
	f.status = "completed";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(store_run_list_filtered(st, a, NULL, 2, 1, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(rp, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, jstr(sc, "id"), NULL, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 2);
	json_decref(list);

	/* a divergence that is not an object, or a session id that is not one,
	 * is refused before anything is written */
	r = sample_run(NULL, NULL);
	r.kind = "replay";
	r.session_id = jstr(ses, "id");
	r.divergence = json_array();
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rs), STORE_ERROR);
	json_decref(r.divergence);
	r.divergence = NULL;
	r.session_id = "not-an-id";
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rs), STORE_ERROR);
	ck_assert_ptr_null(rs);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 3);

	json_decref(rp);
	json_decref(dg);
	json_decref(sim);
	json_decref(div);
	json_decref(outs);
	json_decref(sc);
	json_decref(sin);
	json_decref(ses);
	json_decref(other);
	json_decref(in);
}
END_TEST

START_TEST(test_web_sessions)
{
	char a[33], tok_e[33], tok_v[33], id1[33], id2[33], s1[65], s2[65], sql[512];
	struct store_principal p;
	json_t *audit = NULL, *ev, *detail;

	migrated();
	mk_tenant("acme", a);
	mk_token(a, STORE_ROLE_EDITOR, "editor", tok_e);
	mk_token(a, STORE_ROLE_VIEWER, "viewer", tok_v);
	cookie_sha("1", s1);
	cookie_sha("2", s2);

	ck_assert_msg(store_web_session_create(st, a, tok_e, s1, T0, T8, id1) == STORE_OK, "%s",
	              store_last_error(st));
	ck_assert_uint_eq(strlen(id1), 32);

	/* found while now < expires_at, with the token's tenant, id and role */
	memset(&p, 0, sizeof p);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	ck_assert_str_eq(p.token_id, tok_e);
	ck_assert_str_eq(p.sha256_hex, s1);
	ck_assert_int_eq(p.role, STORE_ROLE_EDITOR);
	ck_assert_int_eq(store_web_session_lookup(st, s1, "2030-01-01T07:59:59.999Z", &p),
	                 STORE_OK);
	ck_assert_str_eq(p.token_id, tok_e);
	/* expired: at expires_at and after */
	assert_not_found_zeroed(s1, T8);
	assert_not_found_zeroed(s1, "2030-01-01T08:00:00.001Z");
	assert_not_found_zeroed(s1, "2031-06-01T00:00:00.000Z");
	/* unknown, malformed, upper-case or SQL-looking digests; a bad "now" */
	assert_not_found_zeroed(s2, T0);
	assert_not_found_zeroed("abc", T0);
	assert_not_found_zeroed("' OR '1'='1", T0);
	{
		char up[65];
		size_t i;

		for (i = 0; i < 64; i++)
			up[i] = (char)(s1[i] >= 'a' && s1[i] <= 'f' ? s1[i] - 32 : s1[i]);
		up[64] = '\0';
		ck_assert_str_ne(up, s1); /* a SHA-256 hex has letters */
		assert_not_found_zeroed(up, T0);
	}
	assert_not_found_zeroed(s1, "now");

	/* the role is read from the token on every lookup */
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET role = 3 WHERE id = '%s'", tok_e);
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_int_eq(p.role, STORE_ROLE_ADMIN);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET role = 1 WHERE id = '%s'", tok_e);
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_int_eq(p.role, STORE_ROLE_VIEWER);

	/* a second session, of the viewer token; revoking that token ends it
	 * and leaves the editor's session alone */
	ck_assert_int_eq(store_web_session_create(st, a, tok_v, s2, T0, T8, id2), STORE_OK);
	ck_assert_str_ne(id1, id2);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_v);
	ck_assert_int_eq(p.role, STORE_ROLE_VIEWER);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET revoked = 1 WHERE id = '%s'", tok_v);
	ck_assert_int_eq(raw_exec(sql), 0);
	assert_not_found_zeroed(s2, T0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_e);

	/* stored: the digest, the token, the times; never the secret */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	snprintf(sql, sizeof sql,
	         "SELECT COUNT(*) FROM web_sessions WHERE id = '%s' AND tenant_id = '%s' AND "
	         "token_id = '%s' AND sha256 = '%s' AND created_at = '%s' AND expires_at = '%s'",
	         id1, a, tok_e, s1, T0, T8);
	ck_assert_int_eq(raw_count(sql), 1);
	ck_assert_int_eq(raw_cells_containing(s1), 1);
	ck_assert_int_eq(raw_cells_containing("cookie-secret-"), 0);

	/* audit: "admin.signin" by the token, target and detail the session id */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 2);
	ev = json_array_get(json_object_get(audit, "events"), 1);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signin");
	ck_assert_str_eq(jstr(ev, "actor"), tok_e);
	ck_assert_str_eq(jstr(ev, "target_id"), id1);
	detail = json_object_get(ev, "detail");
	ck_assert_uint_eq(json_object_size(detail), 1);
	ck_assert_str_eq(jstr(detail, "session_id"), id1);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signin");
	ck_assert_str_eq(jstr(ev, "actor"), tok_v);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "session_id"), id2);
	json_decref(audit);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE detail LIKE "
	                           "'%cookie%'"),
	                 0);
	ck_assert_int_eq(raw_cells_containing(s2), 1);
}
END_TEST

/* Every refused sign-in writes nothing: no session, no purge, no event. */
START_TEST(test_web_session_refused)
{
	char a[33], b[33], tok_a[33], tok_r[33], tok_b[33], id[33], s1[65], s2[65], s3[65];
	char sql[256];
	struct store_principal p;

	two_tenants(a, b);
	mk_token(a, STORE_ROLE_ADMIN, "admin-a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "revoked-a", tok_r);
	mk_token(b, STORE_ROLE_ADMIN, "admin-b", tok_b);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET revoked = 1 WHERE id = '%s'", tok_r);
	ck_assert_int_eq(raw_exec(sql), 0);
	cookie_sha("1", s1);
	cookie_sha("2", s2);
	cookie_sha("3", s3);
	/* a live session (s3), and an expired one (s1) that a successful
	 * sign-in would purge */
	ck_assert_int_eq(
	    store_web_session_create(st, a, tok_a, s3, "2020-01-01T00:00:00.000Z", T8, id),
	    STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, "2020-01-01T00:00:00.000Z",
	                                          "2020-01-01T08:00:00.000Z", id),
	                 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);

	/* a revoked token, another tenant's token, an unknown or malformed
	 * token id, an unknown tenant: STORE_NOT_FOUND */
	strcpy(id, "x");
	ck_assert_int_eq(store_web_session_create(st, a, tok_r, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_str_eq(id, "");
	ck_assert_int_eq(store_web_session_create(st, a, tok_b, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, b, tok_a, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_int_eq(
	    store_web_session_create(st, a, "ffffffffffffffffffffffffffffffff", s2, T0, T8, id),
	    STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, a, "' OR '1'='1", s2, T0, T8, id),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(
	    store_web_session_create(st, "99999999999999999999999999999999", tok_a, s2, T0, T8, id),
	    STORE_NOT_FOUND);
	/* malformed digest or times: STORE_ERROR */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, "abc", T0, T8, id), STORE_ERROR);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s2, "now", T8, id), STORE_ERROR);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s2, T0, "2030-01-01 08:00:00", id),
	                 STORE_ERROR);
	ck_assert_str_eq(id, "");
	/* the digest of a live session again: the unique index refuses it
	 * after the purge ran, and the purge is rolled back with it */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s3, T0, T8, id), STORE_CONFLICT);
	ck_assert_str_eq(id, "");

	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 1);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s3), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);
	assert_not_found_zeroed(s2, T0);

	/* and a good sign-in still works afterwards (and purges) */
	ck_assert_int_eq(store_web_session_create(st, b, tok_b, s2, T0, T8, id), STORE_OK);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, b);
	ck_assert_str_eq(p.token_id, tok_b);
	ck_assert_int_eq(p.role, STORE_ROLE_ADMIN);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 0);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s3), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
}
END_TEST

/* A sign-in deletes the expired sessions of every tenant, and only those. */
START_TEST(test_web_session_purge)
{
	char a[33], b[33], tok_a[33], tok_b[33], id[33], live[33];
	char s1[65], s2[65], s3[65], s4[65], s5[65];
	struct store_principal p;

	two_tenants(a, b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(b, STORE_ROLE_VIEWER, "b", tok_b);
	cookie_sha("1", s1);
	cookie_sha("2", s2);
	cookie_sha("3", s3);
	cookie_sha("4", s4);
	cookie_sha("5", s5);
	/* expires at T8 (tenant a), at 00:10 (tenant b), at T8 + 1 day (b) */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id), STORE_OK);
	ck_assert_int_eq(
	    store_web_session_create(st, b, tok_b, s2, T0, "2030-01-01T00:10:00.000Z", id),
	    STORE_OK);
	ck_assert_int_eq(
	    store_web_session_create(st, b, tok_b, s3, T0, "2030-01-02T08:00:00.000Z", live),
	    STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 3);

	/* at 08:00 exactly, s1 (expires_at = now) is not purged: only
	 * expires_at < now is; s2 is */
	ck_assert_int_eq(
	    store_web_session_create(st, a, tok_a, s4, T8, "2030-01-01T09:00:00.000Z", id),
	    STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 3);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 1);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s2), 0);

	/* a day later: s1 and s4 of tenant a go; s3 of tenant b stays */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s5, "2030-01-02T00:00:00.000Z",
	                                          "2030-01-02T08:00:00.000Z", id),
	                 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 0);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s4), 0);
	ck_assert_int_eq(count_where("web_sessions", "id", live), 1);
	ck_assert_int_eq(store_web_session_lookup(st, s3, "2030-01-02T01:00:00.000Z", &p),
	                 STORE_OK);
	ck_assert_str_eq(p.tenant_id, b);
	ck_assert_int_eq(store_web_session_lookup(st, s5, "2030-01-02T01:00:00.000Z", &p),
	                 STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	/* the events are kept: one sign-in each */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'admin.signin'"),
	                 5);
}
END_TEST

START_TEST(test_web_session_delete)
{
	const char *zeros = "0000000000000000000000000000000000000000000000000000000000000000";
	char a[33], b[33], tok_a[33], tok_a2[33], tok_b[33], id1[33], id2[33], s1[65], s2[65];
	struct store_principal p;
	json_t *audit = NULL, *ev;

	two_tenants(a, b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "a2", tok_a2);
	mk_token(b, STORE_ROLE_ADMIN, "b", tok_b);
	sign_in(a, tok_a, "1", s1, id1);
	sign_in(a, tok_a2, "2", s2, id2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);

	/* another tenant cannot end it: STORE_NOT_FOUND, nothing deleted or
	 * recorded */
	ck_assert_int_eq(store_web_session_delete(st, b, tok_b, s1), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_a);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);
	ck_assert_int_eq(store_audit_list(st, b, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 0);
	json_decref(audit);
	/* unknown or malformed digests */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, zeros), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, "' OR '1'='1"), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);

	/* sign-out: gone, the other session of the tenant stays */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, s1), STORE_OK);
	assert_not_found_zeroed(s1, T0);
	ck_assert_int_eq(count_where("web_sessions", "id", id1), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_a2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signout");
	ck_assert_str_eq(jstr(ev, "actor"), tok_a);
	ck_assert_str_eq(jstr(ev, "target_id"), id1);
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 1);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "session_id"), id1);
	json_decref(audit);

	/* twice: STORE_NOT_FOUND, no second event */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, s1), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
}
END_TEST

void store_sessions_cases(TCase *tc)
{
	tcase_add_test(tc, test_sessions);
	tcase_add_test(tc, test_session_tenant_isolation);
	tcase_add_test(tc, test_session_append_only);
	tcase_add_test(tc, test_run_replay);
	tcase_add_test(tc, test_web_sessions);
	tcase_add_test(tc, test_web_session_refused);
	tcase_add_test(tc, test_web_session_purge);
	tcase_add_test(tc, test_web_session_delete);
}
