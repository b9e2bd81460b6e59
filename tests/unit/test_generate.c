/*
 * Unit tests of model/generate.c (Check): the request's rules at their
 * edges, the template expansion, and the 1 MiB envelope of a batch.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/error.h"
#include "model/generate.h"
#include "model/limits.h"
#include "tests/unit/unit.h"

/* ---- helpers ------------------------------------------------------------ */

static size_t keys_len(long count)
{
	size_t n;
	long i;
	char k[32];

	n = 0;
	for (i = 1; i <= count; i++)
		n += (size_t)snprintf(k, sizeof(k), "step-%ld", i);
	return n;
}

/* ---- generate: request parsing ------------------------------------------- */

static enum model_err gen_parse_code(json_t *body, const char *field)
{
	struct model_gen_request r;
	struct model_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = model_gen_request_parse(body, &r, &e);
	json_decref(body);
	if (rc == 0) {
		model_gen_request_free(&r);
		return MODEL_OK;
	}
	ck_assert_int_eq(rc, -1);
	if (field)
		ck_assert_str_eq(e.field, field);
	ck_assert(e.message[0] != '\0');
	return e.code;
}

START_TEST(test_gen_defaults)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;
	json_t *s;
	size_t i;
	char want[64];

	body = unit_json("{}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_str_eq(r.subject, "agent");
	ck_assert_uint_eq(r.subject_len, 5);
	ck_assert_int_eq(r.count, 10);
	ck_assert_str_eq(r.tmpl, "{{subject_kind}}-sample-{{index}}");
	ck_assert_uint_eq(r.tmpl_len, strlen("{{subject_kind}}-sample-{{index}}"));
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_array_size(samples), 10);
	json_array_foreach(samples, i, s)
	{
		ck_assert_uint_eq(json_object_size(s), 2);
		snprintf(want, sizeof(want), "step-%zu", i + 1);
		ck_assert_str_eq(json_string_value(json_object_get(s, "key")), want);
		snprintf(want, sizeof(want), "agent-sample-%zu", i + 1);
		ck_assert_str_eq(json_string_value(json_object_get(s, "input")), want);
	}
	json_decref(samples);
	model_gen_request_free(&r);
}
END_TEST

START_TEST(test_gen_count_bounds)
{
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":0}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":1}"), NULL), MODEL_OK);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":100}"), NULL), MODEL_OK);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":101}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":-1}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":4294967297}"), "count"),
	                 MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":-9223372036854775808}"), "count"),
	                 MODEL_E_LIMIT);
}
END_TEST

START_TEST(test_gen_count_message)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;

	body = unit_json("{\"count\":101}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), -1);
	json_decref(body);
	ck_assert_str_eq(e.message, "count must be between 1 and 100");
	ck_assert_int_eq(model_error_http_status(e.code), 422);
}
END_TEST

START_TEST(test_gen_types)
{
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":2.0}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":\"2\"}"), "count"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":true}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":null}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"subject_kind\":7}"), "subject_kind"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"subject_kind\":null}"), "subject_kind"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"seed\":[\"a\"]}"), "seed"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"seed\":{}}"), "seed"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("[]"), ""), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(json_string("x"), ""), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(NULL, ""), MODEL_E_MALFORMED);
	/* unknown fields, named */
	ck_assert_int_eq(gen_parse_code(unit_json("{\"foo\":1}"), "foo"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"Count\":1}"), "Count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"template\":\"x\"}"), "template"),
	                 MODEL_E_MALFORMED);
	/* a structural error wins over a bound, whatever the order */
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":0,\"foo\":1}"), "foo"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"count\":0,\"seed\":1}"), "seed"),
	                 MODEL_E_MALFORMED);
	/* defense in depth: a string jansson did not validate */
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "seed", json_stringn_nocheck("a\0b", 3)), "seed"),
	    MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "subject_kind",
	                                          json_stringn_nocheck("\xED\xA0\x80", 3)),
	                                "subject_kind"),
	                 MODEL_E_MALFORMED);
}
END_TEST

START_TEST(test_gen_subject_template_bounds)
{
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "subject_kind", unit_jstr_rep('s', 200)), NULL),
	    MODEL_OK);
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "subject_kind", unit_jstr_rep('s', 201)),
	                                "subject_kind"),
	                 MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(unit_json("{\"subject_kind\":\"\"}"), "subject_kind"),
	                 MODEL_E_LIMIT);
	/* bytes, not characters: 100 x "é" is 200 bytes, 101 is 202 */
	{
		char s[203];
		size_t i;

		for (i = 0; i < 101; i++) {
			s[2 * i] = (char)0xC3;
			s[2 * i + 1] = (char)0xA9;
		}
		ck_assert_int_eq(
		    gen_parse_code(json_pack("{s:s%}", "subject_kind", s, (size_t)200), NULL),
		    MODEL_OK);
		ck_assert_int_eq(gen_parse_code(json_pack("{s:s%}", "subject_kind", s, (size_t)202),
		                                "subject_kind"),
		                 MODEL_E_LIMIT);
	}
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "seed", unit_jstr_rep('t', 8192)), NULL),
	                 MODEL_OK);
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "seed", unit_jstr_rep('t', 8193)), "seed"),
	    MODEL_E_LIMIT);
	/* an empty template is allowed: it yields empty inputs */
	ck_assert_int_eq(gen_parse_code(unit_json("{\"seed\":\"\"}"), NULL), MODEL_OK);
}
END_TEST

/* ---- generate: expansion -------------------------------------------------- */

/* expand tmpl with subject for index; returns malloc'd text */
static char *expand(const char *tmpl, const char *subject, long index)
{
	struct model_error e;
	char *out;
	size_t len;

	out = NULL;
	ck_assert_int_eq(
	    model_generate_one(tmpl, strlen(tmpl), subject, strlen(subject), index, &out, &len, &e),
	    0);
	ck_assert_uint_eq(len, strlen(out));
	return out;
}

#define ck_expand(tmpl, subject, index, want)                                                      \
	do {                                                                                       \
		char *got_ = expand((tmpl), (subject), (index));                                   \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

START_TEST(test_gen_page_example)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body = unit_json("{\"subject_kind\":\"agent\",\"count\":2,"
	                 "\"seed\":\"{{subject_kind}}:user{{index}}@example.test\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	ck_assert_uint_eq(json_array_size(samples), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "key")),
	                 "step-1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "input")),
	                 "agent:user1@example.test");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 1), "key")),
	                 "step-2");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 1), "input")),
	                 "agent:user2@example.test");
	json_decref(samples);
}
END_TEST

START_TEST(test_gen_expansion_rules)
{
	/* substituted text is never scanned again */
	ck_expand("{{subject_kind}}-{{index}}", "{{index}}", 1, "{{index}}-1");
	ck_expand("{{subject_kind}}", "{{subject_kind}}", 3, "{{subject_kind}}");
	ck_expand("{{subject_kind}}index}}", "{{", 1, "{{index}}");
	/* exact and case-sensitive */
	ck_expand("{{INDEX}} {{Index}} {{ index }} {{index }}", "a", 1,
	          "{{INDEX}} {{Index}} {{ index }} {{index }}");
	ck_expand("{{SUBJECT_KIND}} {{subject}} {{subject-kind}}", "a", 1,
	          "{{SUBJECT_KIND}} {{subject}} {{subject-kind}}");
	ck_expand("{{name}} {{}} {{", "a", 1, "{{name}} {{}} {{");
	/* stray braces around placeholders */
	ck_expand("{{{index}}}", "a", 1, "{1}");
	ck_expand("{{{{index}}}}", "a", 7, "{{7}}");
	ck_expand("{{index}", "a", 1, "{{index}");
	ck_expand("{index}}", "a", 1, "{index}}");
	ck_expand("}}{{", "a", 1, "}}{{");
	ck_expand("{", "a", 1, "{");
	ck_expand("{{index}}{{index}}", "a", 42, "4242");
	ck_expand("x{{subject_kind}}{{subject_kind}}y", "ab", 1, "xababy");
	/* CR, LF, a final newline and UTF-8 are kept byte for byte */
	ck_expand("a\r\n{{index}}\n", "s", 1, "a\r\n1\n");
	ck_expand("line\n", "s", 1, "line\n");
	ck_expand("\xC3\xA9{{index}}\xE2\x86\x92", "s", 9,
	          "\xC3\xA9"
	          "9\xE2\x86\x92");
	ck_expand("{{subject_kind}}", "\xE6\x97\xA5", 1, "\xE6\x97\xA5");
	ck_expand("", "s", 1, "");
	ck_expand("{{index}}", "s", 100, "100");
}
END_TEST

START_TEST(test_gen_final_newline_request)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body =
	    unit_json("{\"count\":1,\"seed\":\"{{subject_kind}}:user{{index}}@example.test\\n\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "input")),
	                 "agent:user1@example.test\n");
	json_decref(samples);
}
END_TEST

/*
 * Generated input at the edge: subject of 200 bytes, template of
 * 7991 'a' + "{{subject_kind}}{{index}}" (8016 bytes, under the template
 * limit). Index 1..9 gives 7991 + 200 + 1 = 8192 bytes; index 10 gives 8193.
 */
static void edge_request(struct model_gen_request *r, long count)
{
	char *a;

	memset(r, 0, sizeof(*r));
	a = unit_rep('a', 7991);
	r->tmpl_len = 7991 + strlen("{{subject_kind}}{{index}}");
	r->tmpl = model_xmalloc(r->tmpl_len + 1);
	snprintf(r->tmpl, r->tmpl_len + 1, "%s{{subject_kind}}{{index}}", a);
	free(a);
	r->subject = unit_rep('S', 200);
	r->subject_len = 200;
	r->count = count;
}

START_TEST(test_gen_input_edge)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *samples;
	json_t *s;
	size_t i;
	char *out;
	size_t len;

	edge_request(&r, 9);
	ck_assert_uint_le(r.tmpl_len, MODEL_MAX_TEMPLATE_BYTES);
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_array_size(samples), 9);
	json_array_foreach(samples, i, s)
	{
		ck_assert_uint_eq(json_string_length(json_object_get(s, "input")), 8192);
	}
	json_decref(samples);

	/* index 10 is 8193 bytes: the whole request fails, no partial batch */
	r.count = 10;
	samples = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(model_generate(&r, &samples, &e), -1);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	ck_assert_int_eq(model_error_http_status(e.code), 422);

	/* model_generate_one directly: 8192 ok, 8193 refused, nothing allocated */
	out = NULL;
	ck_assert_int_eq(
	    model_generate_one(r.tmpl, r.tmpl_len, r.subject, r.subject_len, 9, &out, &len, &e), 0);
	ck_assert_uint_eq(len, 8192);
	ck_assert_int_eq(out[8191], '9');
	free(out);
	out = NULL;
	len = 12345;
	ck_assert_int_eq(
	    model_generate_one(r.tmpl, r.tmpl_len, r.subject, r.subject_len, 10, &out, &len, &e),
	    -1);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 12345);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	model_gen_request_free(&r);
}
END_TEST

/* a template of exactly 8192 plain bytes yields inputs of exactly 8192 */
START_TEST(test_gen_template_max_plain)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body = json_pack("{s:o,s:i}", "seed", unit_jstr_rep('p', 8192), "count", 3);
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_string_length(json_object_get(json_array_get(samples, 2), "input")),
	                  8192);
	json_decref(samples);
	model_gen_request_free(&r);
}
END_TEST

/* ---- generate: the 1 MiB envelope ----------------------------------------- */

START_TEST(test_gen_envelope_reserve)
{
	/* 60 bytes of keys and punctuation + 770 + 6146 + 1202 */
	ck_assert_uint_eq(strlen("{\"name\":,\"description\":,\"subject_kind\":,\"steps\":,"
	                         "\"mocks\":[]}"),
	                  60);
	ck_assert_uint_eq(model_scenario_envelope_reserve(), 8178);
}
END_TEST

static int gen_with_template(const char *tmpl, size_t tmpl_len, long count, json_t **samples,
                             struct model_error *e)
{
	struct model_gen_request r;

	memset(&r, 0, sizeof(r));
	r.tmpl = model_xmemdup(tmpl, tmpl_len);
	r.tmpl_len = tmpl_len;
	r.subject = model_xstrdup("agent");
	r.subject_len = 5;
	r.count = count;
	*samples = NULL;
	memset(e, 0, sizeof(*e));
	if (model_generate(&r, samples, e)) {
		model_gen_request_free(&r);
		return -1;
	}
	model_gen_request_free(&r);
	return 0;
}

START_TEST(test_gen_envelope_plain_passes)
{
	struct model_error e;
	json_t *samples;
	char *t;

	/* 100 inputs of 8192 ASCII bytes: 822093 bytes encoded, fits */
	t = unit_rep('a', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), 0);
	free(t);
	ck_assert_uint_eq(json_array_size(samples), 100);
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT),
	                  2 + 99 + 100 * (8 + 11 + 2 + 8192) + keys_len(100));
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT), 822093);
	json_decref(samples);
}
END_TEST

START_TEST(test_gen_envelope_escaping_fails)
{
	struct model_error e;
	json_t *samples;
	char *t;

	/* each input is within 8192 bytes but '"' and '\n' escape to 2 bytes:
	 * ~1.6 MiB encoded, the whole request fails */
	t = unit_rep('"', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), -1);
	free(t);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	t = unit_rep('\n', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), -1);
	free(t);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	/* the same escaped inputs fit when there are fewer of them */
	t = unit_rep('"', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 60, &samples, &e), 0);
	free(t);
	ck_assert_uint_eq(json_array_size(samples), 60);
	json_decref(samples);
}
END_TEST

/*
 * Hit the envelope limit to the byte. The batch is count inputs of
 * m x "{{index}}" then L 'a' then q '"' ('"' encodes as 2 bytes); its
 * compact size is
 *   2 + (count-1) + 21*count + keys + m*digits + count*(L + 2q)
 * where 21 = len('{"key":"') + len('","input":"') + len('"}') and
 * digits = keys - 5*count (the digits of every index). Search count and m
 * so that target is reached exactly with a template of <= 8192 bytes
 * (then every input is <= 8192 bytes too: each index has <= 3 digits).
 */
static int envelope_template(size_t target, char **tmpl, size_t *tmpl_len, long *count)
{
	long c;
	long m;
	size_t base;
	size_t keys;
	size_t digits;
	size_t pmax;
	size_t enc;
	size_t p;
	size_t q;
	size_t off;
	long j;

	for (c = 100; c >= 40; c--) {
		keys = keys_len(c);
		digits = keys - 5 * (size_t)c;
		for (m = 1; m <= 9; m++) {
			base = 2 + (size_t)(c - 1) + 21 * (size_t)c + keys + (size_t)m * digits;
			if (target < base || (target - base) % (size_t)c)
				continue;
			enc = (target - base) / (size_t)c;               /* L + 2q per input */
			pmax = MODEL_MAX_TEMPLATE_BYTES - 9 * (size_t)m; /* L + q */
			p = enc < pmax ? enc : pmax;
			if (enc > 2 * p)
				continue;
			q = enc - p;
			*tmpl_len = (size_t)m * 9 + p;
			*tmpl = model_xmalloc(*tmpl_len + 1);
			off = 0;
			for (j = 0; j < m; j++) {
				memcpy(*tmpl + off, "{{index}}", 9);
				off += 9;
			}
			memset(*tmpl + off, 'a', p - q);
			memset(*tmpl + off + p - q, '"', q);
			(*tmpl)[*tmpl_len] = '\0';
			*count = c;
			return 0;
		}
	}
	return -1;
}

START_TEST(test_gen_envelope_exact_edge)
{
	struct model_error e;
	json_t *samples;
	char *t;
	size_t tlen;
	long count;
	size_t room;
	char want[64];

	room = MODEL_MAX_REQUEST_BYTES - model_scenario_envelope_reserve();
	ck_assert_uint_eq(room, 1040398);

	ck_assert_int_eq(envelope_template(room, &t, &tlen, &count), 0);
	ck_assert_uint_le(tlen, MODEL_MAX_TEMPLATE_BYTES);
	ck_assert_int_eq(gen_with_template(t, tlen, count, &samples, &e), 0);
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT), room);
	json_decref(samples);
	free(t);

	ck_assert_int_eq(envelope_template(room + 1, &t, &tlen, &count), 0);
	ck_assert_uint_le(tlen, MODEL_MAX_TEMPLATE_BYTES);
	ck_assert_int_eq(gen_with_template(t, tlen, count, &samples, &e), -1);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	snprintf(want, sizeof(want), "(%zu bytes)", room + 1);
	ck_assert_msg(strstr(e.message, want) != NULL, "message: %s", e.message);
	free(t);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const parse[] = {test_gen_defaults,
	                              test_gen_count_bounds,
	                              test_gen_count_message,
	                              test_gen_types,
	                              test_gen_subject_template_bounds,
	                              NULL};
	const TTest *const expand[] = {test_gen_page_example,          test_gen_expansion_rules,
	                               test_gen_final_newline_request, test_gen_input_edge,
	                               test_gen_template_max_plain,    NULL};
	const TTest *const envelope[] = {test_gen_envelope_reserve, test_gen_envelope_plain_passes,
	                                 test_gen_envelope_escaping_fails,
	                                 test_gen_envelope_exact_edge, NULL};
	Suite *s;

	s = suite_create("generate");
	unit_tcase(s, "generate_parse", parse);
	unit_tcase(s, "generate_expand", expand);
	tcase_set_timeout(unit_tcase(s, "generate_envelope", envelope), 30);
	return s;
}
