/*
 * The store's evidence chain (sql/evidence.c): a link for every recorded
 * run and comparison, in the same transaction, seq and prev per tenant;
 * the bundle of a comparison, signed, verifies offline
 * (model/evidence.h); another tenant's chain is its own; an unknown
 * comparison is not found. Part of the test_store program
 * (store_fixture.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/evidence.h"
#include "tests/unit/store_fixture.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"

static json_t *ev_outputs(const char *second)
{
	return json_pack("[{s:i,s:s,s:s,s:s,s:s,s:n},{s:i,s:s,s:s,s:s,s:s,s:n}]", "seq", 1, "key",
	                 "step-1", "input", "agent:user1@example.test", "output", "same", "status",
	                 "ok", "error_kind", "seq", 2, "key", "step-2", "input",
	                 "agent:user2@example.test", "output", second, "status", "ok",
	                 "error_kind");
}

/* Record a comparison of tenant (improved, 0.25 -> 0.75); its API object. */
static json_t *ev_compare(const char *tenant)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	json_t *bo = ev_outputs("old answer"), *ko = ev_outputs("new answer"), *c = NULL;
	json_t *diff = json_array();
	struct store_run b = sample_run(sid, bo), k;
	struct store_comparison cmp;
	enum store_rc rc;

	b.kind = "comparison";
	b.variant = "v1";
	b.suite = "smoke";
	b.scored = 1;
	b.score = 0.25;
	k = b;
	k.outputs = ko;
	k.variant = "v2";
	k.score = 0.75;
	k.passed = 1;
	memset(&cmp, 0, sizeof cmp);
	cmp.scenario_id = sid;
	cmp.scenario_version = 3;
	cmp.suite = "smoke";
	cmp.tolerance = 0.1;
	cmp.baseline = &b;
	cmp.candidate = &k;
	cmp.verdict = "improved";
	cmp.has_delta = 1;
	cmp.delta = 0.5;
	cmp.differing_steps = diff;
	rc = store_comparison_record(st, tenant, "33333333333333333333333333333333", &cmp, &c);
	ck_assert_msg(rc == STORE_OK, "rc %d: %s", rc, store_last_error(st));
	json_decref(bo);
	json_decref(ko);
	json_decref(diff);
	return c;
}

START_TEST(test_evidence_chain_and_bundle)
{
	char a[33], b[33], *priv, *pub, *text, why[512];
	json_t *c1, *c2, *c3, *bundle = NULL, *links, *l;
	size_t i;

	two_tenants(a, b);
	c1 = ev_compare(a);
	c2 = ev_compare(b);
	c3 = ev_compare(a);
	/* three links per comparison, each tenant's numbered from 1 */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM evidence_links"), 9);
	ck_assert_int_eq(count_where("evidence_links", "tenant_id", a), 6);
	ck_assert_int_eq(count_where("evidence_links", "tenant_id", b), 3);
	ck_assert_int_eq(count_where("evidence_links", "kind", "comparison"), 3);
	ck_assert_int_eq(count_where("evidence_links", "prev", ZEROS), 2);

	ck_assert_int_eq(store_evidence_bundle(st, a, jstr(c3, "id"), &bundle), STORE_OK);
	links = json_object_get(bundle, "links");
	ck_assert_uint_eq(json_array_size(links), 3);
	json_array_foreach(links, i, l) ck_assert_int_eq(jint(l, "seq"), 4 + (json_int_t)i);
	ck_assert_str_eq(jstr(json_array_get(links, 2), "kind"), "comparison");
	ck_assert_str_eq(jstr(json_array_get(links, 2), "id"), jstr(c3, "id"));
	ck_assert_str_eq(jstr(json_object_get(bundle, "comparison"), "verdict"), "improved");
	ck_assert_uint_eq(json_array_size(json_object_get(bundle, "runs")), 2);
	ck_assert(json_is_null(json_object_get(bundle, "suite")));
	ck_assert_str_eq(
	    jstr(json_array_get(json_object_get(json_object_get(bundle, "outputs"),
	                                        jstr(json_object_get(c3, "candidate"), "run_id")),
	                        1),
	         "output"),
	    "new answer");

	/* signed, the bundle verifies offline */
	ck_assert_int_eq(model_evidence_keygen(&priv, &pub), 0);
	ck_assert_int_eq(model_evidence_sign(bundle, priv), 0);
	text = model_evidence_canonical(bundle);
	ck_assert_msg(model_evidence_verify(text, strlen(text), pub, NULL, why, sizeof why) == 0,
	              "%s", why);
	free(text);
	json_decref(bundle);

	/* another tenant's comparison is not found; a malformed id neither */
	ck_assert_int_eq(store_evidence_bundle(st, b, jstr(c1, "id"), &bundle), STORE_NOT_FOUND);
	ck_assert_ptr_null(bundle);
	ck_assert_int_eq(store_evidence_bundle(st, a, "nope", &bundle), STORE_NOT_FOUND);

	/* the first comparison's segment starts at seq 1 */
	ck_assert_int_eq(store_evidence_bundle(st, a, jstr(c1, "id"), &bundle), STORE_OK);
	l = json_array_get(json_object_get(bundle, "links"), 0);
	ck_assert_int_eq(jint(l, "seq"), 1);
	ck_assert_str_eq(jstr(l, "prev"), ZEROS);
	json_decref(bundle);

	/* a record linked twice is refused (one link per record) */
	ck_assert_int_eq(
	    raw_exec("INSERT INTO evidence_links (tenant_id, seq, kind, record_id, "
	             "prev, body_sha256, hash, body, created_at) SELECT tenant_id, 99, "
	             "kind, record_id, prev, body_sha256, hash, body, created_at FROM "
	             "evidence_links WHERE seq = 1"),
	    -1);
	free(priv);
	free(pub);
	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
}
END_TEST

/* store_evidence_append outside any record: a kind that is not one of the
 * three is refused and nothing is written. */
START_TEST(test_evidence_append_refused)
{
	char a[33], b[33];

	two_tenants(a, b);
	ck_assert_int_eq(store_evidence_append(st, a, "vote", "x", "{}"), STORE_ERROR);
	ck_assert_int_eq(store_evidence_append(st, a, "run", "x", NULL), STORE_ERROR);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM evidence_links"), 0);
}
END_TEST

/* An approval is chained in the transaction that appends it: its body is
 * the approval as the API shows it, its prev the comparison's link; a
 * refused one (a pending or unknown comparison) links nothing. */
START_TEST(test_evidence_approval_link)
{
	char a[33], b[33], *canon, hex[65], sql[1024];
	json_t *c, *ap = NULL;

	two_tenants(a, b);
	c = ev_compare(a);
	ck_assert_int_eq(store_approval_append(st, a, "44444444444444444444444444444444",
	                                       jstr(c, "id"), "approved", "reviewed", &ap),
	                 STORE_OK);
	ck_assert_int_eq(count_where("evidence_links", "kind", "approval"), 1);
	canon = model_evidence_canonical(ap);
	sha256_hex(canon, strlen(canon), hex);
	/* the ids are hex and the reason has no quote: safe to inline */
	snprintf(sql, sizeof sql,
	         "SELECT COUNT(*) FROM evidence_links WHERE kind = 'approval' AND seq = 4 "
	         "AND record_id = '%s' AND body = '%s' AND body_sha256 = '%s'",
	         jstr(ap, "id"), canon, hex);
	ck_assert_int_eq(raw_count(sql), 1);
	free(canon);
	json_decref(ap);
	ap = NULL;
	/* another tenant's comparison: not found, nothing linked */
	ck_assert_int_eq(store_approval_append(st, b, "44444444444444444444444444444444",
	                                       jstr(c, "id"), "approved", "not mine", &ap),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(count_where("evidence_links", "kind", "approval"), 1);
	ck_assert_int_eq(count_where("evidence_links", "tenant_id", b), 0);
	json_decref(c);
}
END_TEST

void store_evidence_cases(TCase *tc)
{
	tcase_add_test(tc, test_evidence_approval_link);
	tcase_add_test(tc, test_evidence_chain_and_bundle);
	tcase_add_test(tc, test_evidence_append_refused);
}
