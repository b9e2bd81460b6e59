/*
 * Unit tests of model/evidence.c (Check): the canonical form, the link
 * hash (against a value computed outside this code), a bundle that
 * verifies, and the changes that must make it fail: any one byte, a
 * dropped link, a record changed and re-signed, a forked chain, another
 * key.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/evidence.h"
#include "tests/unit/unit.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"
#define RUN_B "b0000000000000000000000000000001"
#define RUN_C "c0000000000000000000000000000002"
#define OTHER "d0000000000000000000000000000003"
#define CMP "e0000000000000000000000000000004"

static char *priv_pem, *pub_pem;

static void keys_setup(void)
{
	ck_assert_int_eq(model_evidence_keygen(&priv_pem, &pub_pem), 0);
}

static void keys_teardown(void)
{
	free(priv_pem);
	free(pub_pem);
}

static json_t *run_record(const char *id, const char *variant, double score)
{
	json_t *api =
	    json_pack("{s:s,s:s,s:s,s:s,s:b,s:f,s:s,s:s}", "id", id, "kind", "simulation",
	              "variant", variant, "status", "completed", "scored", 1, "score", score,
	              "started_at", "2026-12-03T07:00:00Z", "recording", "mutable, not covered");
	json_t *r = model_evidence_run_record(api);

	json_decref(api);
	return r;
}

static json_t *outputs_of(const char *text)
{
	json_t *o = json_array();

	unit_add_output(o, "step-1", text, NULL);
	unit_add_output(o, "step-2", "caf\xc3\xa9", "mock_miss");
	return o;
}

/* Append to links the next link for kind/id over body (a new reference
 * taken over), chained after the last one. */
static void chain(json_t *links, const char *kind, const char *id, json_t *body)
{
	size_t n = json_array_size(links);
	const char *prev =
	    n ? json_string_value(json_object_get(json_array_get(links, n - 1), "hash")) : ZEROS;
	char *canon = model_evidence_canonical(body);
	json_t *l = model_evidence_link((long long)n + 1, kind, id, prev, canon);

	ck_assert_ptr_nonnull(l);
	json_array_append_new(links, l);
	free(canon);
	json_decref(body);
}

/* A signed bundle: baseline run, another run of the tenant, candidate run,
 * comparison (links 1..4); the bundle holds all four links. */
static json_t *make_bundle(void)
{
	json_t *b = run_record(RUN_B, "baseline", 0.5), *c = run_record(RUN_C, "candidate", 0.75);
	json_t *bo = outputs_of("first synthetic account"), *co = outputs_of("second");
	json_t *cmp = json_pack("{s:s,s:s,s:i,s:f,s:s,s:f}", "id", CMP, "scenario_id",
	                        "s0000000000000000000000000000005", "scenario_version", 2,
	                        "tolerance", 0.1, "verdict", "improved", "delta", 0.25);
	json_t *links = json_array(), *bundle;

	chain(links, "run", RUN_B, model_evidence_run_body(b, bo));
	chain(links, "run", OTHER, json_pack("{s:s}", "unrelated", "run"));
	chain(links, "run", RUN_C, model_evidence_run_body(c, co));
	chain(links, "comparison", CMP, json_incref(cmp));
	bundle = json_pack("{s:o,s:[o,o],s:{s:o,s:o},s:n,s:o}", "comparison", cmp, "runs", b, c,
	                   "outputs", RUN_B, bo, RUN_C, co, "suite", "links", links);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	return bundle;
}

static int verify_json(const json_t *bundle, const char *pem, char *why, size_t n)
{
	char *text = model_evidence_canonical(bundle);
	int rc = model_evidence_verify(text, strlen(text), pem, NULL, why, n);

	free(text);
	return rc;
}

START_TEST(test_evidence_canonical)
{
	json_t *v = unit_json("{\"b\": [1, 2.5, \"\\u00e9\"], \"a\": {\"z\": null, \"y\": true}}");
	char *s = model_evidence_canonical(v), *again;
	json_t *back;

	ck_assert_str_eq(s, "{\"a\":{\"y\":true,\"z\":null},\"b\":[1,2.5,\"\\u00E9\"]}");
	/* reading the canonical form back and writing it again gives the same
	 * bytes */
	back = unit_json(s);
	again = model_evidence_canonical(back);
	ck_assert_str_eq(again, s);
	free(s);
	free(again);
	json_decref(v);
	json_decref(back);
	v = json_real(0.1);
	s = model_evidence_canonical(v);
	ck_assert_str_eq(s, "0.10000000000000001");
	free(s);
	json_decref(v);
}
END_TEST

START_TEST(test_evidence_link_hash)
{
	char h[65], body[65];
	json_t *l;

	/* printf 'olivares-evidence/1\n7\nrun\nabc\n<64 zeros>\n<sha256 of {}>\n' | sha256sum */
	model_evidence_sha256_hex("{}", 2, body);
	ck_assert_str_eq(body, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
	ck_assert_int_eq(model_evidence_link_hash(7, "run", "abc", ZEROS, body, h), 0);
	ck_assert_str_eq(h, "e99fe837ac18a38d1955793ef5aed58200221c57de4bc6a398839e1af8956833");
	l = model_evidence_link(7, "run", "abc", ZEROS, "{}");
	ck_assert_str_eq(json_string_value(json_object_get(l, "hash")), h);
	ck_assert_str_eq(json_string_value(json_object_get(l, "body_sha256")), body);
	ck_assert_int_eq(json_integer_value(json_object_get(l, "seq")), 7);
	json_decref(l);
	ck_assert_int_eq(model_evidence_link_hash(0, "run", "abc", ZEROS, body, h), -1);
	ck_assert_int_eq(model_evidence_link_hash(1, "vote", "abc", ZEROS, body, h), -1);
	ck_assert_int_eq(model_evidence_link_hash(1, "run", "a\nb", ZEROS, body, h), -1);
	ck_assert_int_eq(model_evidence_link_hash(1, "run", "abc", "00", body, h), -1);
	ck_assert_int_eq(model_evidence_link_hash(1, "run", "abc", ZEROS, ZEROS "0", h), -1);
}
END_TEST

START_TEST(test_evidence_bundle_verifies)
{
	json_t *bundle = make_bundle(), *out = NULL;
	char *text = model_evidence_canonical(bundle), *withnl, why[512] = "", kid[65];

	ck_assert_int_eq(model_evidence_verify(text, strlen(text), pub_pem, &out, why, sizeof why),
	                 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(out, "comparison"), "id")), CMP);
	json_decref(out);
	/* the mutable run field stayed out of the record */
	ck_assert_ptr_null(
	    json_object_get(json_array_get(json_object_get(bundle, "runs"), 0), "recording"));
	ck_assert_int_eq(model_evidence_key_id(pub_pem, kid), 0);
	ck_assert_str_eq(json_string_value(json_object_get(bundle, "key_id")), kid);
	ck_assert_int_eq(model_evidence_key_id(priv_pem, kid), 0);
	ck_assert_str_eq(json_string_value(json_object_get(bundle, "key_id")), kid);
	/* one trailing newline is allowed, as a file written by a shell has */
	withnl = malloc(strlen(text) + 3);
	strcpy(withnl, text);
	strcat(withnl, "\n");
	ck_assert_int_eq(
	    model_evidence_verify(withnl, strlen(withnl), pub_pem, NULL, why, sizeof why), 0);
	strcat(withnl, "\n");
	ck_assert_int_eq(
	    model_evidence_verify(withnl, strlen(withnl), pub_pem, NULL, why, sizeof why), -1);
	ck_assert_str_eq(why, "bundle is not in canonical form");
	/* the public key derived from the private one is the same key */
	{
		char *pub2 = model_evidence_public_pem(priv_pem);

		ck_assert_str_eq(pub2, pub_pem);
		free(pub2);
	}
	free(withnl);
	free(text);
	json_decref(bundle);
}
END_TEST

START_TEST(test_evidence_one_byte)
{
	json_t *bundle = make_bundle();
	char *text = model_evidence_canonical(bundle), why[512];
	size_t n = strlen(text), i, tried = 0;
	unsigned char flips[] = {0x01, 0x20, 0x80};

	/* every byte in the first 300 and every 7th after, each flipped three
	 * ways (low bit, letter case, high bit) */
	for (i = 0; i < n; i++) {
		size_t f;

		if (i >= 300 && i % 7)
			continue;
		for (f = 0; f < sizeof flips; f++) {
			char save = text[i];

			text[i] = (char)(text[i] ^ flips[f]);
			why[0] = '\0';
			if (model_evidence_verify(text, n, pub_pem, NULL, why, sizeof why) != -1)
				ck_abort_msg("byte %zu ^ 0x%02x verified", i, flips[f]);
			ck_assert_str_ne(why, "");
			text[i] = save;
			tried++;
		}
	}
	ck_assert_uint_gt(tried, 900);
	ck_assert_int_eq(model_evidence_verify(text, n, pub_pem, NULL, why, sizeof why), 0);
	free(text);
	json_decref(bundle);
}
END_TEST

START_TEST(test_evidence_dropped_link)
{
	json_t *bundle = make_bundle(), *links = json_object_get(bundle, "links");
	char why[512];

	/* the unrelated run's link (seq 2) removed: the signature no longer
	 * holds, and signed again the chain still does not */
	json_array_remove(links, 1);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "link 3: seq does not follow link 1 (a link is missing)");
	json_decref(bundle);

	/* a record's own link removed */
	bundle = make_bundle();
	links = json_object_get(bundle, "links");
	json_array_remove(links, 3);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "comparison " CMP ": no link in the chain");
	json_decref(bundle);
}
END_TEST

START_TEST(test_evidence_forked_chain)
{
	json_t *bundle = make_bundle(), *links = json_object_get(bundle, "links"), *l;
	char why[512];

	/* link 2 replaced by one whose own hash holds but that does not follow
	 * link 1 (a fork) */
	l = model_evidence_link(2, "run", OTHER, ZEROS, "{\"unrelated\":\"run\"}");
	json_array_set_new(links, 1, l);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "link 2: prev does not match link 1's hash");
	json_decref(bundle);

	/* a link's contents changed without its hash */
	bundle = make_bundle();
	links = json_object_get(bundle, "links");
	json_object_set_new(json_array_get(links, 2), "id", json_string(OTHER));
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "link 3: hash does not match its contents");
	json_decref(bundle);
}
END_TEST

START_TEST(test_evidence_record_changed)
{
	json_t *bundle = make_bundle(), *run;
	char why[512];

	run = json_array_get(json_object_get(bundle, "runs"), 1);
	json_object_set_new(run, "score", json_real(1.0));
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "run " RUN_C ": body hash mismatch");
	json_decref(bundle);

	bundle = make_bundle();
	json_object_set_new(json_object_get(bundle, "comparison"), "verdict",
	                    json_string("regressed"));
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "comparison " CMP ": body hash mismatch");
	json_decref(bundle);

	/* an output changed */
	bundle = make_bundle();
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(bundle, "outputs"), RUN_B), 0), "output",
	    json_string("forged"));
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "run " RUN_B ": body hash mismatch");
	json_decref(bundle);
}
END_TEST

/* A comparison of repeats names every run it rests on: a bundle without
 * one of them does not verify, even signed; with it, it does. */
START_TEST(test_evidence_named_runs)
{
	json_t *b = run_record(RUN_B, "baseline", 0.5), *c = run_record(RUN_C, "candidate", 0.75);
	json_t *c2 = run_record(OTHER, "candidate", 0.75);
	json_t *bo = outputs_of("first synthetic account"), *co = outputs_of("second");
	json_t *co2 = outputs_of("second");
	json_t *cmp = json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:{s:[s],s:[s,s]}}", "id", CMP, "verdict",
	                        "improved", "baseline", "run_id", RUN_B, "candidate", "run_id",
	                        RUN_C, "runs", "baseline", RUN_B, "candidate", RUN_C, OTHER);
	json_t *links = json_array(), *bundle;
	char why[512];

	chain(links, "run", RUN_B, model_evidence_run_body(b, bo));
	chain(links, "run", RUN_C, model_evidence_run_body(c, co));
	chain(links, "run", OTHER, model_evidence_run_body(c2, co2));
	chain(links, "comparison", CMP, json_incref(cmp));
	bundle = json_pack("{s:O,s:[O,O],s:{s:O,s:O},s:n,s:O}", "comparison", cmp, "runs", b, c,
	                   "outputs", RUN_B, bo, RUN_C, co, "suite", "links", links);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_int_eq(verify_json(bundle, pub_pem, why, sizeof why), -1);
	ck_assert_str_eq(why, "candidate run " OTHER " (repeat 1): not in the bundle");
	json_array_append(json_object_get(bundle, "runs"), c2);
	json_object_set(json_object_get(bundle, "outputs"), OTHER, co2);
	ck_assert_int_eq(model_evidence_sign(bundle, priv_pem), 0);
	ck_assert_msg(verify_json(bundle, pub_pem, why, sizeof why) == 0, "%s", why);
	json_decref(bundle);
	json_decref(links);
	json_decref(cmp);
	json_decref(b);
	json_decref(c);
	json_decref(c2);
	json_decref(bo);
	json_decref(co);
	json_decref(co2);
}
END_TEST

START_TEST(test_evidence_wrong_key)
{
	json_t *bundle = make_bundle();
	char *priv2, *pub2, why[512], *canon;

	ck_assert_int_eq(model_evidence_keygen(&priv2, &pub2), 0);
	ck_assert_int_eq(verify_json(bundle, pub2, why, sizeof why), -1);
	ck_assert_msg(strstr(why, "bundle is signed by key ") == why, "%s", why);
	/* the key id set to the other key's: the signature is what fails */
	{
		char kid[65];

		ck_assert_int_eq(model_evidence_key_id(pub2, kid), 0);
		json_object_set_new(bundle, "key_id", json_string(kid));
	}
	ck_assert_int_eq(verify_json(bundle, pub2, why, sizeof why), -1);
	ck_assert_str_eq(why, "signature does not verify");
	/* not a key at all */
	canon = model_evidence_canonical(bundle);
	ck_assert_int_eq(
	    model_evidence_verify(canon, strlen(canon), "not a key", NULL, why, sizeof why), -1);
	ck_assert_str_eq(why, "the key is not an Ed25519 key (PEM)");
	ck_assert_int_eq(model_evidence_sign(bundle, "not a key"), -1);
	free(canon);
	free(priv2);
	free(pub2);
	json_decref(bundle);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const evidence[] = {test_evidence_canonical,       test_evidence_link_hash,
	                                 test_evidence_bundle_verifies, test_evidence_one_byte,
	                                 test_evidence_dropped_link,    test_evidence_forked_chain,
	                                 test_evidence_record_changed,  test_evidence_wrong_key,
	                                 test_evidence_named_runs,      NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("evidence");
	tc = unit_tcase(s, "evidence", evidence);
	tcase_add_checked_fixture(tc, keys_setup, keys_teardown);
	tcase_set_timeout(tc, 60);
	return s;
}
