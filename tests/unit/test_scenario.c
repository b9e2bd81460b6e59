/*
 * Unit tests of model/scenario.c (Check): the scenario check at its edges
 * (types, bounds, duplicates, credentials, updates), mock resolution and
 * the mock-miss marker, and the sandbox walkthrough on the model side.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/error.h"
#include "model/generate.h"
#include "model/scenario.h"
#include "model/text.h"
#include "tests/unit/unit.h"

/* ---- scenario check ------------------------------------------------------- */

static void scn_expect(json_t *body, int is_update, enum model_err code, const char *field)
{
	struct model_error e;
	json_t *norm;
	char *dump;

	norm = NULL;
	memset(&e, 0, sizeof(e));
	dump = body ? json_dumps(body, JSON_COMPACT) : NULL;
	ck_assert_msg(model_scenario_check(body, is_update, &norm, &e) == -1, "accepted: %.200s",
	              dump ? dump : "(null)");
	ck_assert_ptr_null(norm);
	ck_assert_msg(e.code == code, "code %s, want %s (%s) for %.200s", model_error_name(e.code),
	              model_error_name(code), e.message, dump ? dump : "(null)");
	ck_assert_msg(strcmp(e.field, field) == 0, "field '%s', want '%s' (%s)", e.field, field,
	              e.message);
	ck_assert(e.message[0] != '\0');
	free(dump);
	json_decref(body);
}

static json_t *scn_ok(json_t *body, int is_update)
{
	struct model_error e;
	json_t *norm;

	norm = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_msg(model_scenario_check(body, is_update, &norm, &e) == 0, "refused: %s %s: %s",
	              model_error_name(e.code), e.field, e.message);
	json_decref(body);
	ck_assert_ptr_nonnull(norm);
	return norm;
}

#define S(text) unit_json(text)

START_TEST(test_scn_minimal_defaults)
{
	json_t *n;
	char *dump;

	n = scn_ok(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"key\":\"k\",\"input\":\"\"},"
	             "{\"input\":\"c\\n\"}]}"),
	           0);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"name\":\"n\",\"description\":\"\",\"subject_kind\":\"agent\","
	                       "\"steps\":[{\"key\":\"step-1\",\"input\":\"a\"},"
	                       "{\"key\":\"k\",\"input\":\"\"},"
	                       "{\"key\":\"step-3\",\"input\":\"c\\n\"}],\"mocks\":[]}");
	free(dump);
	json_decref(n);
}
END_TEST

START_TEST(test_scn_mocks_normalized)
{
	json_t *n;
	char *dump;

	n = scn_ok(S("{\"name\":\"generated\",\"description\":\"d\",\"subject_kind\":\"bot\","
	             "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"}],"
	             "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	             "\"response\":\"first synthetic account\"},"
	             "{\"variant\":null,\"resource\":\"r\",\"response\":\"\"},"
	             "{\"resource\":\"r\",\"response\":\"x\",\"variant\":\"candidate\"}]}"),
	           0);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump,
	                 "{\"name\":\"generated\",\"description\":\"d\",\"subject_kind\":\"bot\","
	                 "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"}],"
	                 "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	                 "\"response\":\"first synthetic account\"},"
	                 "{\"resource\":\"r\",\"response\":\"\"},"
	                 "{\"resource\":\"r\",\"response\":\"x\",\"variant\":\"candidate\"}]}");
	free(dump);
	json_decref(n);
}
END_TEST

/* delay_ms: kept when above 0, left out at 0 (its default), refused as
 * malformed (400) naming mocks[N].delay_ms when it is not an integer of 0
 * or more, and over its limit (422) above 60000; a malformed delay wins
 * over a 422 refusal met earlier. */
START_TEST(test_scn_mock_delay)
{
	static const char *const bad[] = {"-1",   "1.5",  "200.0", "\"200\"",
	                                  "null", "true", "[200]", "{}"};
	static const char *const over[] = {"60001", "9223372036854775807"};
	json_t *n;
	char *dump;
	char body[512];
	size_t i;

	n = scn_ok(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"resource\":\"a\",\"response\":\"A\",\"delay_ms\":200},"
	             "{\"resource\":\"b\",\"response\":\"B\",\"delay_ms\":0},"
	             "{\"resource\":\"c\",\"response\":\"C\",\"delay_ms\":60000,"
	             "\"variant\":\"v\"}]}"),
	           0);
	dump = json_dumps(json_object_get(n, "mocks"), JSON_COMPACT);
	ck_assert_str_eq(dump, "[{\"resource\":\"a\",\"response\":\"A\",\"delay_ms\":200},"
	                       "{\"resource\":\"b\",\"response\":\"B\"},"
	                       "{\"resource\":\"c\",\"response\":\"C\",\"variant\":\"v\","
	                       "\"delay_ms\":60000}]");
	free(dump);
	json_decref(n);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body),
		         "{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
		         "{\"resource\":\"a\",\"response\":\"A\"},"
		         "{\"resource\":\"b\",\"response\":\"B\",\"delay_ms\":%s}]}",
		         bad[i]);
		scn_expect(S(body), 0, MODEL_E_MALFORMED, "mocks[1].delay_ms");
	}
	/* the 400 wins over a 422 met earlier in the body (an empty resource) */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"\",\"response\":\"A\"},"
	             "{\"resource\":\"b\",\"response\":\"B\",\"delay_ms\":-5}]}"),
	           0, MODEL_E_MALFORMED, "mocks[1].delay_ms");
	for (i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		snprintf(body, sizeof(body),
		         "{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
		         "{\"resource\":\"a\",\"response\":\"A\"},"
		         "{\"resource\":\"b\",\"response\":\"B\",\"delay_ms\":%s}]}",
		         over[i]);
		scn_expect(S(body), 0, MODEL_E_LIMIT, "mocks[1].delay_ms");
	}
	/* an update that replaces the mocks is checked the same way */
	scn_expect(S("{\"mocks\":[{\"resource\":\"a\",\"response\":\"A\",\"delay_ms\":60001}]}"), 1,
	           MODEL_E_LIMIT, "mocks[0].delay_ms");
	scn_expect(S("{\"mocks\":[{\"resource\":\"a\",\"response\":\"A\",\"delay_ms\":-1}]}"), 1,
	           MODEL_E_MALFORMED, "mocks[0].delay_ms");
}
END_TEST

START_TEST(test_scn_required_and_types)
{
	scn_expect(S("[]"), 0, MODEL_E_MALFORMED, "");
	scn_expect(NULL, 0, MODEL_E_MALFORMED, "");
	scn_expect(S("{\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED, "name");
	scn_expect(S("{\"name\":\"n\"}"), 0, MODEL_E_MALFORMED, "steps");
	scn_expect(S("{\"name\":1,\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED, "name");
	scn_expect(S("{\"name\":null,\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED,
	           "name");
	scn_expect(S("{\"name\":\"n\",\"description\":false,\"steps\":[{\"input\":\"a\"}]}"), 0,
	           MODEL_E_MALFORMED, "description");
	scn_expect(S("{\"name\":\"n\",\"subject_kind\":[],\"steps\":[{\"input\":\"a\"}]}"), 0,
	           MODEL_E_MALFORMED, "subject_kind");
	scn_expect(S("{\"name\":\"n\",\"steps\":{}}"), 0, MODEL_E_MALFORMED, "steps");
	scn_expect(S("{\"name\":\"n\",\"steps\":[\"a\"]}"), 0, MODEL_E_MALFORMED, "steps[0]");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"key\":\"b\"}]}"), 0,
	           MODEL_E_MALFORMED, "steps[1].input");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":5}]}"), 0, MODEL_E_MALFORMED,
	           "steps[0].input");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\",\"key\":null}]}"), 0,
	           MODEL_E_MALFORMED, "steps[0].key");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":{}}"), 0,
	           MODEL_E_MALFORMED, "mocks");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":null}"), 0,
	           MODEL_E_MALFORMED, "mocks");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":[1]}"), 0,
	           MODEL_E_MALFORMED, "mocks[0]");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"response\":\"x\"}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].resource");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"resource\":\"x\"}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].response");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"resource\":\"x\",\"response\":\"y\",\"variant\":3}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].variant");
	/* defense in depth: strings that bypassed the decoder */
	scn_expect(json_pack("{s:s,s:[{s:o}]}", "name", "n", "steps", "input",
	                     json_stringn_nocheck("a\0b", 3)),
	           0, MODEL_E_MALFORMED, "steps[0].input");
	scn_expect(json_pack("{s:o,s:[{s:s}]}", "name", json_stringn_nocheck("\xC0\x80", 2),
	                     "steps", "input", "a"),
	           0, MODEL_E_MALFORMED, "name");
}
END_TEST

START_TEST(test_scn_unknown_fields)
{
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"foo\":1}"), 0,
	           MODEL_E_MALFORMED, "foo");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"input\":\"b\"},"
	             "{\"input\":\"c\",\"foo\":1}]}"),
	           0, MODEL_E_MALFORMED, "steps[2].foo");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"x\"},"
	             "{\"resource\":\"s\",\"response\":\"y\",\"bar\":null}]}"),
	           0, MODEL_E_MALFORMED, "mocks[1].bar");
	scn_expect(S("{\"id\":\"0123\",\"name\":\"n\"}"), 1, MODEL_E_MALFORMED, "id");
	scn_expect(S("{\"version\":2}"), 1, MODEL_E_MALFORMED, "version");
	/* malformed wins over earlier refusals */
	scn_expect(S("{\"name\":\"\",\"steps\":[{\"input\":\"a\",\"x\":1}]}"), 0, MODEL_E_MALFORMED,
	           "steps[0].x");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"a\",\"input\":\"a\"},"
	             "{\"key\":\"a\",\"input\":\"b\"}],\"mocks\":[{\"resource\":1}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].resource");
}
END_TEST

/* a body holding name and one step, plus field=value set by the caller */
static json_t *scn_body(void)
{
	return S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}]}");
}

static json_t *with(json_t *body, const char *key, json_t *value)
{
	json_object_set_new(body, key, value);
	return body;
}

static json_t *one_step(const char *key, json_t *input)
{
	json_t *step;

	step = json_object();
	if (key)
		json_object_set_new(step, "key", json_string(key));
	json_object_set_new(step, "input", input);
	return json_pack("[o]", step);
}

static json_t *one_mock(json_t *resource, json_t *response, json_t *variant)
{
	json_t *m;

	m = json_pack("{s:o,s:o}", "resource", resource, "response", response);
	if (variant)
		json_object_set_new(m, "variant", variant);
	return json_pack("[o]", m);
}

START_TEST(test_scn_string_bounds)
{
	json_t *n;
	json_t *step;

	json_decref(scn_ok(with(scn_body(), "name", unit_jstr_rep('n', 128)), 0));
	scn_expect(with(scn_body(), "name", unit_jstr_rep('n', 129)), 0, MODEL_E_LIMIT, "name");
	scn_expect(with(scn_body(), "name", json_string("")), 0, MODEL_E_LIMIT, "name");
	json_decref(scn_ok(with(scn_body(), "description", unit_jstr_rep('d', 1024)), 0));
	scn_expect(with(scn_body(), "description", unit_jstr_rep('d', 1025)), 0, MODEL_E_LIMIT,
	           "description");
	json_decref(scn_ok(with(scn_body(), "subject_kind", unit_jstr_rep('s', 200)), 0));
	scn_expect(with(scn_body(), "subject_kind", unit_jstr_rep('s', 201)), 0, MODEL_E_LIMIT,
	           "subject_kind");
	scn_expect(with(scn_body(), "subject_kind", json_string("")), 0, MODEL_E_LIMIT,
	           "subject_kind");

	n = scn_ok(with(scn_body(), "steps", one_step(NULL, unit_jstr_rep('i', 8192))), 0);
	step = json_array_get(json_object_get(n, "steps"), 0);
	ck_assert_uint_eq(json_string_length(json_object_get(step, "input")), 8192);
	json_decref(n);
	scn_expect(with(scn_body(), "steps", one_step(NULL, unit_jstr_rep('i', 8193))), 0,
	           MODEL_E_LIMIT, "steps[0].input");
	{
		char *k128 = unit_rep('k', 128);
		char *k129 = unit_rep('k', 129);

		json_decref(scn_ok(with(scn_body(), "steps", one_step(k128, json_string("a"))), 0));
		scn_expect(with(scn_body(), "steps", one_step(k129, json_string("a"))), 0,
		           MODEL_E_LIMIT, "steps[0].key");
		free(k128);
		free(k129);
	}
	scn_expect(with(scn_body(), "steps", one_step("", json_string("a"))), 0, MODEL_E_LIMIT,
	           "steps[0].key");

	json_decref(scn_ok(with(scn_body(), "mocks",
	                        one_mock(unit_jstr_rep('r', 8192), unit_jstr_rep('p', 65536),
	                                 unit_jstr_rep('v', 64))),
	                   0));
	scn_expect(
	    with(scn_body(), "mocks", one_mock(unit_jstr_rep('r', 8193), json_string(""), NULL)), 0,
	    MODEL_E_LIMIT, "mocks[0].resource");
	scn_expect(with(scn_body(), "mocks", one_mock(json_string(""), json_string("x"), NULL)), 0,
	           MODEL_E_LIMIT, "mocks[0].resource");
	scn_expect(
	    with(scn_body(), "mocks", one_mock(json_string("r"), unit_jstr_rep('p', 65537), NULL)),
	    0, MODEL_E_LIMIT, "mocks[0].response");
	scn_expect(with(scn_body(), "mocks",
	                one_mock(json_string("r"), json_string("x"), unit_jstr_rep('v', 65))),
	           0, MODEL_E_LIMIT, "mocks[0].variant");
	scn_expect(with(scn_body(), "mocks",
	                one_mock(json_string("r"), json_string("x"), json_string(""))),
	           0, MODEL_E_LIMIT, "mocks[0].variant");
}
END_TEST

/* a name of white space only is refused like an empty one, with its own
 * message; a name with white space around words is fine */
static void blank_name_expect(json_t *body, int is_update)
{
	struct model_error e;
	json_t *n;

	n = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(model_scenario_check(body, is_update, &n, &e), -1);
	json_decref(body);
	ck_assert_ptr_null(n);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	ck_assert_str_eq(e.field, "name");
	ck_assert_str_eq(e.message, "name must not be blank");
}

START_TEST(test_scn_blank_name)
{
	static const char *const blank[] = {
	    " ",
	    "   ",
	    "\t",
	    " \n\r\t\v\f ",
	    "\xC2\xA0",                  /* U+00A0 no-break space */
	    "\xE3\x80\x80 \xE2\x80\x83", /* U+3000 ideographic space, U+2003 em space */
	    "\xE2\x80\x8B\xEF\xBB\xBF",  /* U+200B zero width space, U+FEFF */
	};
	json_t *n;
	size_t i;

	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		ck_assert_int_eq(model_text_is_blank(blank[i], strlen(blank[i])), 1);
		blank_name_expect(with(scn_body(), "name", json_string(blank[i])), 0);
		blank_name_expect(json_pack("{s:s}", "name", blank[i]), 1);
	}
	ck_assert_int_eq(model_text_is_blank("", 0), 1);
	ck_assert_int_eq(model_text_is_blank(" a ", 3), 0);
	ck_assert_int_eq(model_text_is_blank(" \xC3\xA9", 3), 0);    /* U+00E9 */
	ck_assert_int_eq(model_text_is_blank("\xE2\x80\x8C", 3), 0); /* U+200C: a joiner */
	ck_assert_int_eq(model_text_is_blank("\xF0\x9F\x98\x80", 4), 0);
	/* the bound still wins when it comes first: 129 spaces */
	scn_expect(with(scn_body(), "name", unit_jstr_rep(' ', 129)), 0, MODEL_E_LIMIT, "name");
	/* an empty name keeps its own message */
	scn_expect(with(scn_body(), "name", json_string("")), 0, MODEL_E_LIMIT, "name");
	/* words with spaces around are a name */
	n = scn_ok(with(scn_body(), "name", json_string("  walkthrough  ")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(n, "name")), "  walkthrough  ");
	json_decref(n);
	n = scn_ok(json_pack("{s:s}", "name", "\xC2\xA0x"), 1);
	json_decref(n);
	/* blank name and a later credential: the first refusal is the name */
	blank_name_expect(with(with(scn_body(), "name", json_string("  ")), "description",
	                       json_string("AKIAIOSFODNN7EXAMPLE")),
	                  0);
}
END_TEST

START_TEST(test_scn_array_bounds)
{
	json_t *steps;
	json_t *mocks;
	json_t *n;
	char res[32];
	size_t i;

	scn_expect(with(scn_body(), "steps", json_array()), 0, MODEL_E_LIMIT, "steps");
	steps = json_array();
	for (i = 0; i < 1000; i++)
		json_array_append_new(steps, json_pack("{s:s}", "input", "x"));
	n = scn_ok(with(scn_body(), "steps", json_deep_copy(steps)), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "steps")), 1000);
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(json_object_get(n, "steps"), 999), "key")),
	                 "step-1000");
	json_decref(n);
	json_array_append_new(steps, json_pack("{s:s}", "input", "x"));
	scn_expect(with(scn_body(), "steps", steps), 0, MODEL_E_LIMIT, "steps");

	mocks = json_array();
	for (i = 0; i < 1000; i++) {
		snprintf(res, sizeof(res), "resource-%zu", i);
		json_array_append_new(mocks,
		                      json_pack("{s:s,s:s}", "resource", res, "response", "r"));
	}
	n = scn_ok(with(scn_body(), "mocks", json_deep_copy(mocks)), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "mocks")), 1000);
	json_decref(n);
	json_array_append_new(mocks,
	                      json_pack("{s:s,s:s}", "resource", "resource-1000", "response", "r"));
	scn_expect(with(scn_body(), "mocks", mocks), 0, MODEL_E_LIMIT, "mocks");
}
END_TEST

START_TEST(test_scn_duplicate_steps)
{
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"a\",\"input\":\"1\"},"
	             "{\"key\":\"b\",\"input\":\"2\"},{\"key\":\"a\",\"input\":\"3\"}]}"),
	           0, MODEL_E_INVALID, "steps[2].key");
	/* a default key collides with a later explicit one */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"1\"},"
	             "{\"key\":\"step-1\",\"input\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "steps[1].key");
	/* an explicit key takes the default key of a later step */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"step-2\",\"input\":\"1\"},"
	             "{\"input\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "steps[1]");
	/* keys are case-sensitive and explicit keys equal to their own default are fine */
	json_decref(scn_ok(S("{\"name\":\"n\",\"steps\":[{\"key\":\"step-1\",\"input\":\"1\"},"
	                     "{\"input\":\"2\"},{\"key\":\"Step-1\",\"input\":\"3\"}]}"),
	                   0));
}
END_TEST

START_TEST(test_scn_duplicate_mocks)
{
	struct model_error e;
	json_t *n;
	json_t *body;

	/* same resource, no variant twice */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\"},"
	             "{\"resource\":\"r\",\"response\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "mocks[1]");
	/* null and absent are the same (no) variant */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\",\"variant\":null},"
	             "{\"resource\":\"r\",\"response\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "mocks[1]");
	/* same resource, same variant; the later of the pair is named */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\",\"variant\":\"v\"},"
	             "{\"resource\":\"q\",\"response\":\"2\",\"variant\":\"v\"},"
	             "{\"resource\":\"r\",\"response\":\"3\"},"
	             "{\"resource\":\"r\",\"response\":\"4\",\"variant\":\"v\"}]}"),
	           0, MODEL_E_INVALID, "mocks[3]");
	/* the first repeat by position wins when there are several */
	body = S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	         "{\"resource\":\"z\",\"response\":\"1\"},"
	         "{\"resource\":\"a\",\"response\":\"2\"},"
	         "{\"resource\":\"a\",\"response\":\"3\"},"
	         "{\"resource\":\"z\",\"response\":\"4\"}]}");
	n = NULL;
	ck_assert_int_eq(model_scenario_check(body, 0, &n, &e), -1);
	ck_assert_str_eq(e.field, "mocks[2]");
	ck_assert_ptr_nonnull(strstr(e.message, "mocks[1]"));
	json_decref(body);
	/* same resource, different variants (and none): allowed */
	n = scn_ok(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\"},"
	             "{\"resource\":\"r\",\"response\":\"2\",\"variant\":\"baseline\"},"
	             "{\"resource\":\"r\",\"response\":\"3\",\"variant\":\"candidate\"},"
	             "{\"resource\":\"r\\n\",\"response\":\"4\"},"
	             "{\"resource\":\"R\",\"response\":\"5\"}]}"),
	           0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "mocks")), 5);
	json_decref(n);
}
END_TEST

struct cred_case {
	const char *secret;
	const char *kind;
};

static const struct cred_case cred_cases[] = {
    {"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
     "private key block"},
    {"AKIAIOSFODNN7EXAMPLE", "AWS access key id"},
    {"ghp_0123456789abcdefghijABCDEFGHIJklmnop", "GitHub token"},
    {"xoxb-123456789012-1234567890123-AbCdEfGh", "Slack token"},
    {"AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key"},
    {"sk-proj-AbCdEf0123456789xyzXYZ", "API secret key"},
    {"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe live key"},
    {"olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "olivares API token"},
    {"OLV_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", "olivares API token"},
    {"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret access key"},
    {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
     "JSON Web Token"},
    {"Bearer 2YotnFZFEjr1zCsicMWpAA", "bearer token"},
};

/* the refusal names the field and the format, never the secret */
static void cred_expect(json_t *body, const char *field, const struct cred_case *c)
{
	struct model_error e;
	json_t *n;
	char want[128];

	n = NULL;
	ck_assert_int_eq(model_scenario_check(body, 0, &n, &e), -1);
	json_decref(body);
	ck_assert_ptr_null(n);
	ck_assert_int_eq(e.code, MODEL_E_INVALID);
	ck_assert_str_eq(e.field, field);
	snprintf(want, sizeof(want), "%s looks like a credential (%s)", field, c->kind);
	ck_assert_str_eq(e.message, want);
	ck_assert_ptr_null(strstr(e.message, c->secret));
	ck_assert_ptr_null(strstr(e.message, c->secret + 4));
}

START_TEST(test_scn_credentials)
{
	const struct cred_case *c = &cred_cases[_i];
	char text[256];

	/* embedded in ordinary text */
	snprintf(text, sizeof(text), "config:\n%s\n", c->secret);
	cred_expect(with(scn_body(), "name", json_string(c->secret)), "name", c);
	cred_expect(with(scn_body(), "description", json_string(text)), "description", c);
	cred_expect(with(scn_body(), "subject_kind", json_string(c->secret)), "subject_kind", c);
	cred_expect(
	    with(scn_body(), "steps", json_pack("[{s:s},{s:s}]", "input", "ok", "input", text)),
	    "steps[1].input", c);
	cred_expect(with(scn_body(), "steps", one_step(c->secret, json_string("a"))),
	            "steps[0].key", c);
	cred_expect(with(scn_body(), "mocks", one_mock(json_string(text), json_string("x"), NULL)),
	            "mocks[0].resource", c);
	cred_expect(with(scn_body(), "mocks",
	                 json_pack("[{s:s,s:s},{s:s,s:s}]", "resource", "a", "response", "b",
	                           "resource", "c", "response", text)),
	            "mocks[1].response", c);
	cred_expect(with(scn_body(), "mocks",
	                 one_mock(json_string("r"), json_string("x"), json_string(c->secret))),
	            "mocks[0].variant", c);
}
END_TEST

START_TEST(test_scn_credential_false_positives)
{
	json_t *n;

	n = scn_ok(
	    S("{\"name\":\"task-list review\",\"description\":\"AKIA is a prefix; "
	      "mail alice@example.com; the risk-assessment-of-2024-Q3 doc\","
	      "\"steps\":[{\"input\":\"agent:user1@example.test\"},"
	      "{\"input\":\"-----BEGIN PUBLIC KEY-----\\nMFkw\\n-----END PUBLIC KEY-----\"}],"
	      "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	      "\"response\":\"first synthetic account\"}]}"),
	    0);
	json_decref(n);
}
END_TEST

START_TEST(test_scn_update)
{
	json_t *n;
	char *dump;

	scn_expect(S("{}"), 1, MODEL_E_INVALID, "");
	n = scn_ok(S("{\"name\":\"renamed\"}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"name\":\"renamed\"}");
	free(dump);
	json_decref(n);
	n = scn_ok(S("{\"mocks\":[],\"description\":\"\"}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"description\":\"\",\"mocks\":[]}");
	free(dump);
	json_decref(n);
	n = scn_ok(S("{\"steps\":[{\"input\":\"x\"}]}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"steps\":[{\"key\":\"step-1\",\"input\":\"x\"}]}");
	free(dump);
	json_decref(n);
	scn_expect(S("{\"steps\":[]}"), 1, MODEL_E_LIMIT, "steps");
	scn_expect(S("{\"name\":\"\"}"), 1, MODEL_E_LIMIT, "name");
	scn_expect(S("{\"name\":null}"), 1, MODEL_E_MALFORMED, "name");
}
END_TEST

/* ---- mock resolution ---------------------------------------------------------- */

static json_t *resolve_mocks(void)
{
	return S("["
	         "{\"resource\":\"a\",\"response\":\"cand-first\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"a\\n\",\"response\":\"nl\"},"
	         "{\"resource\":\"a\",\"response\":\"plain\"},"
	         "{\"resource\":\"a\",\"response\":\"base\",\"variant\":\"baseline\"},"
	         "{\"resource\":\"b\",\"response\":\"only-cand\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"c\",\"response\":\"c-plain\",\"variant\":null},"
	         "{\"resource\":\"c\",\"response\":\"c-cand\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"line1\\nline2\\n\",\"response\":\"multi\"}"
	         "]");
}

static const char *resolve(json_t *mocks, const char *variant, const char *input)
{
	const char *resp;
	size_t len;

	resp = NULL;
	len = 999;
	if (!model_mock_resolve(mocks, variant, input, strlen(input), &resp, &len))
		return NULL;
	ck_assert_uint_eq(len, strlen(resp));
	return resp;
}

START_TEST(test_mock_resolve)
{
	json_t *m;

	m = resolve_mocks();
	ck_assert_str_eq(resolve(m, NULL, "a"), "plain");
	ck_assert_str_eq(resolve(m, "candidate", "a"), "cand-first");
	ck_assert_str_eq(resolve(m, "baseline", "a"), "base");
	ck_assert_str_eq(resolve(m, "other", "a"), "plain");
	ck_assert_str_eq(resolve(m, "", "a"), "plain");
	ck_assert_str_eq(resolve(m, "Candidate", "a"), "plain");
	ck_assert_str_eq(resolve(m, "candidat", "a"), "plain");
	/* variant-specific wins whatever the order */
	ck_assert_str_eq(resolve(m, NULL, "c"), "c-plain");
	ck_assert_str_eq(resolve(m, "candidate", "c"), "c-cand");
	/* mocks for another variant never apply */
	ck_assert_ptr_null(resolve(m, NULL, "b"));
	ck_assert_ptr_null(resolve(m, "baseline", "b"));
	ck_assert_str_eq(resolve(m, "candidate", "b"), "only-cand");
	/* exact bytes, newlines included */
	ck_assert_str_eq(resolve(m, NULL, "a\n"), "nl");
	ck_assert_str_eq(resolve(m, "candidate", "a\n"), "nl");
	ck_assert_ptr_null(resolve(m, NULL, "a\r\n"));
	ck_assert_ptr_null(resolve(m, NULL, "a "));
	ck_assert_ptr_null(resolve(m, NULL, "A"));
	ck_assert_ptr_null(resolve(m, NULL, ""));
	ck_assert_str_eq(resolve(m, NULL, "line1\nline2\n"), "multi");
	ck_assert_ptr_null(resolve(m, NULL, "line1\nline2"));
	ck_assert_ptr_null(resolve(m, NULL, "line1\nline2\n\n"));
	/* a length shorter than the string: prefix "a" of "ab" */
	{
		const char *r;
		size_t l;

		ck_assert_int_eq(model_mock_resolve(m, NULL, "ab", 1, &r, &l), 1);
		ck_assert_str_eq(r, "plain");
	}
	json_decref(m);
	/* empty or missing mocks: always a miss */
	m = json_array();
	ck_assert_ptr_null(resolve(m, NULL, "a"));
	json_decref(m);
	ck_assert_ptr_null(resolve(NULL, "candidate", "a"));
}
END_TEST

/* The delay of the mock that wins the resolution, and none on a miss. */
START_TEST(test_mock_lookup_delay)
{
	json_t *m;
	const char *r;
	size_t l;
	long delay;

	m = S("[{\"resource\":\"a\",\"response\":\"plain\",\"delay_ms\":250},"
	      "{\"resource\":\"a\",\"response\":\"cand\",\"variant\":\"candidate\"},"
	      "{\"resource\":\"b\",\"response\":\"slow-cand\",\"variant\":\"candidate\","
	      "\"delay_ms\":60000},"
	      "{\"resource\":\"c\",\"response\":\"odd\",\"delay_ms\":-3}]");
	delay = -1;
	ck_assert_int_eq(model_mock_lookup(m, NULL, "a", 1, &r, &l, &delay), 1);
	ck_assert_str_eq(r, "plain");
	ck_assert_int_eq(delay, 250);
	/* the variant's mock wins, and it has no delay */
	delay = -1;
	ck_assert_int_eq(model_mock_lookup(m, "candidate", "a", 1, &r, &l, &delay), 1);
	ck_assert_str_eq(r, "cand");
	ck_assert_int_eq(delay, 0);
	delay = -1;
	ck_assert_int_eq(model_mock_lookup(m, "candidate", "b", 1, &r, &l, &delay), 1);
	ck_assert_int_eq(delay, 60000);
	/* a miss leaves the delay as it was */
	delay = 7;
	ck_assert_int_eq(model_mock_lookup(m, NULL, "b", 1, &r, &l, &delay), 0);
	ck_assert_int_eq(delay, 7);
	/* a value outside the bounds (an unvalidated array) waits nothing */
	delay = -1;
	ck_assert_int_eq(model_mock_lookup(m, NULL, "c", 1, &r, &l, &delay), 1);
	ck_assert_int_eq(delay, 0);
	/* the delay is optional */
	ck_assert_int_eq(model_mock_lookup(m, NULL, "a", 1, &r, &l, NULL), 1);
	json_decref(m);
}
END_TEST

START_TEST(test_mock_miss_marker)
{
	char *p;
	size_t len;

	p = model_mock_miss_marker("agent:user2@example.test", 24, &len);
	ck_assert_str_eq(p, "[[mock-miss:agent:user2@example.test]]");
	ck_assert_uint_eq(len, strlen(p));
	free(p);
	p = model_mock_miss_marker("x\ny\n", 4, &len);
	ck_assert_str_eq(p, "[[mock-miss:x\ny\n]]");
	ck_assert_uint_eq(len, 18);
	free(p);
	p = model_mock_miss_marker("", 0, &len);
	ck_assert_str_eq(p, "[[mock-miss:]]");
	ck_assert_uint_eq(len, 14);
	free(p);
}
END_TEST

/* the page's walkthrough, model side: generate, create, resolve */
START_TEST(test_page_walkthrough)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;
	json_t *scn;
	json_t *mocks;
	json_t *step;
	const char *in;
	const char *resp;
	size_t len;
	char *miss;

	body = unit_json("{\"subject_kind\":\"agent\",\"count\":2,"
	                 "\"seed\":\"{{subject_kind}}:user{{index}}@example.test\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	mocks = unit_json("[{\"resource\":\"agent:user1@example.test\","
	                  "\"response\":\"first synthetic account\"}]");
	body = json_pack("{s:s,s:o,s:o}", "name", "generated", "steps", samples, "mocks", mocks);
	scn = scn_ok(body, 0);
	mocks = json_object_get(scn, "mocks");

	step = json_array_get(json_object_get(scn, "steps"), 0);
	in = json_string_value(json_object_get(step, "input"));
	ck_assert_int_eq(model_mock_resolve(mocks, "candidate", in, strlen(in), &resp, &len), 1);
	ck_assert_str_eq(resp, "first synthetic account");

	step = json_array_get(json_object_get(scn, "steps"), 1);
	in = json_string_value(json_object_get(step, "input"));
	ck_assert_int_eq(model_mock_resolve(mocks, "candidate", in, strlen(in), &resp, &len), 0);
	miss = model_mock_miss_marker(in, strlen(in), &len);
	ck_assert_str_eq(miss, "[[mock-miss:agent:user2@example.test]]");
	free(miss);
	json_decref(scn);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const scenario[] = {test_scn_minimal_defaults,
	                                 test_scn_mocks_normalized,
	                                 test_scn_mock_delay,
	                                 test_scn_required_and_types,
	                                 test_scn_unknown_fields,
	                                 test_scn_string_bounds,
	                                 test_scn_blank_name,
	                                 test_scn_array_bounds,
	                                 test_scn_duplicate_steps,
	                                 test_scn_duplicate_mocks,
	                                 test_scn_credential_false_positives,
	                                 test_scn_update,
	                                 NULL};
	const TTest *const mock[] = {test_mock_resolve, test_mock_lookup_delay,
	                             test_mock_miss_marker, test_page_walkthrough, NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("scenario");
	tc = unit_tcase(s, "scenario", scenario);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_scn_credentials, 0,
	                    (int)(sizeof(cred_cases) / sizeof(cred_cases[0])));
	unit_tcase(s, "mock", mock);
	return s;
}
