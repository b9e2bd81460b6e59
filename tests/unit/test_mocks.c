/*
 * Unit tests of model/mock.c (Check): tool mocks as model_scenario_check
 * validates them (each field's errors, ambiguity refused), their matching
 * and precedence, sequences and error mocks, near-miss explanations of
 * resources and tool calls, and the trace check.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/error.h"
#include "model/mock.h"
#include "model/scenario.h"
#include "tests/unit/unit.h"

#define S(text) unit_json(text)

/* A create body with mocks (JSON text). */
static json_t *body_with(const char *mocks)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), "{\"name\":\"n\",\"steps\":[{\"input\":\"i\"}],\"mocks\":%s}",
	         mocks);
	return S(buf);
}

static void refused(const char *mocks, enum model_err code, const char *field)
{
	struct model_error e;
	json_t *body = body_with(mocks), *norm = NULL;

	memset(&e, 0, sizeof(e));
	ck_assert_msg(model_scenario_check(body, 0, &norm, &e) == -1, "accepted: %s", mocks);
	ck_assert_msg(e.code == code, "code %s, want %s (%s) for %s", model_error_name(e.code),
	              model_error_name(code), e.message, mocks);
	ck_assert_msg(strcmp(e.field, field) == 0, "field '%s', want '%s' (%s) for %s", e.field,
	              field, e.message, mocks);
	json_decref(body);
}

static json_t *accepted(const char *mocks)
{
	struct model_error e;
	json_t *body = body_with(mocks), *norm = NULL, *m;

	memset(&e, 0, sizeof(e));
	ck_assert_msg(model_scenario_check(body, 0, &norm, &e) == 0, "refused %s: %s %s", mocks,
	              e.field, e.message);
	json_decref(body);
	m = json_incref(json_object_get(norm, "mocks"));
	json_decref(norm);
	return m;
}

START_TEST(test_tool_mock_normalized)
{
	json_t *m = accepted("[{\"tool\":\"search\",\"response\":{\"hits\":[1,2]}},"
	                     "{\"tool\":\"search\",\"args\":{\"q\":\"x\"},\"match\":\"subset\","
	                     "\"sequence\":[1,2],\"variant\":\"b\",\"delay_ms\":5},"
	                     "{\"tool\":\"fail\",\"error\":\"down\"},"
	                     "{\"resource\":\"r\",\"response\":\"R\"}]");
	char *dump = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);

	/* args defaults to {}, match to exact; the answer kept as given */
	ck_assert_str_eq(dump, "[{\"args\":{},\"match\":\"exact\",\"response\":{\"hits\":[1,2]},"
	                       "\"tool\":\"search\"},"
	                       "{\"args\":{\"q\":\"x\"},\"delay_ms\":5,\"match\":\"subset\","
	                       "\"sequence\":[1,2],\"tool\":\"search\",\"variant\":\"b\"},"
	                       "{\"args\":{},\"error\":\"down\",\"match\":\"exact\",\"tool\":"
	                       "\"fail\"},"
	                       "{\"resource\":\"r\",\"response\":\"R\"}]");
	free(dump);
	json_decref(m);
}
END_TEST

START_TEST(test_tool_mock_field_errors)
{
	char big[400];

	refused("[{\"tool\":3,\"response\":1}]", MODEL_E_MALFORMED, "mocks[0].tool");
	refused("[{\"tool\":\"\",\"response\":1}]", MODEL_E_LIMIT, "mocks[0].tool");
	memset(big, 'a', 129);
	big[129] = '\0';
	{
		char buf[512];

		snprintf(buf, sizeof(buf), "[{\"tool\":\"%s\",\"response\":1}]", big);
		refused(buf, MODEL_E_LIMIT, "mocks[0].tool");
	}
	refused("[{\"tool\":\"t\",\"args\":[1],\"response\":1}]", MODEL_E_MALFORMED,
	        "mocks[0].args");
	refused("[{\"tool\":\"t\",\"match\":1,\"response\":1}]", MODEL_E_MALFORMED,
	        "mocks[0].match");
	refused("[{\"tool\":\"t\",\"match\":\"fuzzy\",\"response\":1}]", MODEL_E_INVALID,
	        "mocks[0].match");
	refused("[{\"tool\":\"t\"}]", MODEL_E_MALFORMED, "mocks[0].response");
	refused("[{\"tool\":\"t\",\"response\":1,\"error\":\"e\"}]", MODEL_E_MALFORMED,
	        "mocks[0].error");
	refused("[{\"tool\":\"t\",\"sequence\":{}}]", MODEL_E_MALFORMED, "mocks[0].sequence");
	refused("[{\"tool\":\"t\",\"sequence\":[]}]", MODEL_E_LIMIT, "mocks[0].sequence");
	refused("[{\"tool\":\"t\",\"error\":\"\"}]", MODEL_E_LIMIT, "mocks[0].error");
	refused("[{\"tool\":\"t\",\"error\":7}]", MODEL_E_MALFORMED, "mocks[0].error");
	refused("[{\"tool\":\"t\",\"resource\":\"r\",\"response\":\"x\"}]", MODEL_E_MALFORMED,
	        "mocks[0].resource");
	/* a resource mock has no tool fields */
	refused("[{\"resource\":\"r\",\"response\":\"x\",\"match\":\"exact\"}]", MODEL_E_MALFORMED,
	        "mocks[0].match");
	refused("[{\"tool\":\"t\",\"response\":1,\"delay_ms\":-1}]", MODEL_E_MALFORMED,
	        "mocks[0].delay_ms");
	refused("[{\"tool\":\"t\",\"response\":1,\"variant\":\"\"}]", MODEL_E_LIMIT,
	        "mocks[0].variant");
	/* credentials anywhere in a tool mock: args, response, sequence items */
	refused("[{\"tool\":\"t\",\"args\":{\"k\":\"AKIAIOSFODNN7EXAMPLE\"},\"response\":1}]",
	        MODEL_E_INVALID, "mocks[0].args");
	refused("[{\"tool\":\"t\",\"sequence\":[1,{\"k\":\"AKIAIOSFODNN7EXAMPLE\"}]}]",
	        MODEL_E_INVALID, "mocks[0].sequence[1]");
}
END_TEST

START_TEST(test_tool_mock_ambiguity)
{
	json_t *m;

	/* exact: equal args (key order irrelevant) */
	refused("[{\"tool\":\"t\",\"args\":{\"a\":1,\"b\":2},\"response\":1},"
	        "{\"tool\":\"t\",\"args\":{\"b\":2,\"a\":1},\"response\":2}]",
	        MODEL_E_INVALID, "mocks[1]");
	/* subset: equal weight, compatible args (a call {a:1,b:2} matches both) */
	refused("[{\"resource\":\"r\",\"response\":\"x\"},"
	        "{\"tool\":\"t\",\"args\":{\"a\":1},\"match\":\"subset\",\"response\":1},"
	        "{\"tool\":\"t\",\"args\":{\"b\":2},\"match\":\"subset\",\"response\":2}]",
	        MODEL_E_INVALID, "mocks[2]");
	/* subset: nested compatible objects of equal weight */
	refused("[{\"tool\":\"t\",\"args\":{\"f\":{\"x\":1}},\"match\":\"subset\",\"response\":1},"
	        "{\"tool\":\"t\",\"args\":{\"f\":{\"y\":1}},\"match\":\"subset\",\"response\":2}]",
	        MODEL_E_INVALID, "mocks[1]");
	/* accepted: different weights, incompatible values, other variant,
	 * other match kind, other tool */
	m = accepted(
	    "[{\"tool\":\"t\",\"args\":{\"a\":1},\"match\":\"subset\",\"response\":1},"
	    "{\"tool\":\"t\",\"args\":{\"a\":1,\"b\":2},\"match\":\"subset\",\"response\":2},"
	    "{\"tool\":\"t\",\"args\":{\"a\":2},\"match\":\"subset\",\"response\":3},"
	    "{\"tool\":\"t\",\"args\":{\"a\":1},\"match\":\"subset\",\"variant\":\"v\","
	    "\"response\":4},"
	    "{\"tool\":\"t\",\"args\":{\"a\":1},\"response\":5},"
	    "{\"tool\":\"u\",\"args\":{\"a\":1},\"response\":6}]");
	ck_assert_int_eq((int)json_array_size(m), 6);
	json_decref(m);
}
END_TEST

static long find(json_t *mocks, const char *variant, const char *tool, const char *args)
{
	json_t *a = args ? S(args) : NULL;
	size_t i = 999;
	int hit = model_mock_tool_find(mocks, variant, tool, a, &i);

	json_decref(a);
	return hit ? (long)i : -1;
}

START_TEST(test_tool_match_and_precedence)
{
	json_t *m = accepted(
	    "[{\"tool\":\"s\",\"args\":{},\"match\":\"subset\",\"response\":0},"
	    "{\"tool\":\"s\",\"args\":{\"q\":\"x\"},\"match\":\"subset\",\"response\":1},"
	    "{\"tool\":\"s\",\"args\":{\"q\":\"x\",\"n\":{\"k\":1}},\"match\":\"subset\","
	    "\"response\":2},"
	    "{\"tool\":\"s\",\"args\":{\"q\":\"x\"},\"response\":3},"
	    "{\"tool\":\"s\",\"args\":{\"q\":\"x\"},\"match\":\"subset\",\"variant\":\"v\","
	    "\"response\":4},"
	    "{\"tool\":\"s\",\"args\":{\"tags\":[1,2]},\"response\":5}]");

	/* exact over subset */
	ck_assert_int_eq(find(m, NULL, "s", "{\"q\":\"x\"}"), 3);
	/* a variant's mock over a variant-less one, even exact */
	ck_assert_int_eq(find(m, "v", "s", "{\"q\":\"x\"}"), 4);
	/* among subsets, the heavier: nested keys count */
	ck_assert_int_eq(find(m, NULL, "s", "{\"q\":\"x\",\"n\":{\"k\":1,\"z\":0}}"), 2);
	ck_assert_int_eq(find(m, NULL, "s", "{\"q\":\"x\",\"n\":{\"k\":2}}"), 1);
	/* {} as a subset matches every call of its tool, args absent too */
	ck_assert_int_eq(find(m, NULL, "s", "{\"q\":\"y\"}"), 0);
	ck_assert_int_eq(find(m, NULL, "s", NULL), 0);
	/* arrays must be equal, in order */
	ck_assert_int_eq(find(m, NULL, "s", "{\"tags\":[1,2]}"), 5);
	ck_assert_int_eq(find(m, NULL, "s", "{\"tags\":[2,1]}"), 0);
	/* another tool: a miss; another variant's mock never applies */
	ck_assert_int_eq(find(m, NULL, "other", "{}"), -1);
	/* JSON equality as jansson has it: 1 and 1.0 differ */
	{
		json_t *x = S("{\"a\":1}"), *y = S("{\"a\":1.0}");

		ck_assert_int_eq(model_mock_args_match(x, y, 0), 0);
		json_decref(x);
		json_decref(y);
	}
	json_decref(m);
}
END_TEST

START_TEST(test_tool_sequence_and_error)
{
	json_t *m = accepted("[{\"tool\":\"s\",\"sequence\":[\"a\",{\"b\":1}]},"
	                     "{\"tool\":\"f\",\"error\":\"down\"},"
	                     "{\"tool\":\"r\",\"response\":null}]");
	const char *error = "x";
	json_t *r;
	char *marker;

	r = model_mock_tool_answer(json_array_get(m, 0), 0, &error);
	ck_assert_ptr_null(error);
	ck_assert_str_eq(json_string_value(r), "a");
	r = model_mock_tool_answer(json_array_get(m, 0), 1, &error);
	ck_assert_int_eq((int)json_integer_value(json_object_get(r, "b")), 1);
	/* after the last, the last again */
	ck_assert_ptr_eq(model_mock_tool_answer(json_array_get(m, 0), 2, &error), r);
	ck_assert_ptr_eq(model_mock_tool_answer(json_array_get(m, 0), 50, &error), r);
	ck_assert_ptr_null(model_mock_tool_answer(json_array_get(m, 1), 0, &error));
	ck_assert_str_eq(error, "down");
	/* a null response is a response */
	r = model_mock_tool_answer(json_array_get(m, 2), 0, &error);
	ck_assert(json_is_null(r));
	ck_assert_ptr_null(error);
	marker = model_mock_tool_miss_marker("search", 6);
	ck_assert_str_eq(marker, "[[mock-miss:tool search]]");
	free(marker);
	json_decref(m);
}
END_TEST

/* The near miss of a resource request against mocks (JSON text). */
static json_t *near_res(const char *mocks, const char *variant, const char *input)
{
	json_t *m = S(mocks);
	json_t *n = model_mock_near_miss_resource(m, variant, input, strlen(input));

	json_decref(m);
	return n;
}

#define NSTR(n, k) json_string_value(json_object_get((n), (k)))
#define NINT(n, k) ((int)json_integer_value(json_object_get((n), (k))))

START_TEST(test_near_miss_crlf)
{
	json_t *n = near_res("[{\"resource\":\"GET /b\\n\",\"response\":\"\"},"
	                     "{\"resource\":\"GET /a\\n\",\"response\":\"\"}]",
	                     NULL, "GET /a\r\n");

	ck_assert_int_eq(NINT(n, "mock"), 1);
	ck_assert_str_eq(NSTR(n, "resource"), "GET /a\n");
	ck_assert_int_eq(NINT(n, "offset"), 6);
	ck_assert_str_eq(NSTR(n, "request_has"), "CR (U+000D)");
	ck_assert_str_eq(NSTR(n, "mock_has"), "LF (U+000A)");
	ck_assert_str_eq(NSTR(n, "why"), "line ending: CR LF in the request, LF in the mock");
	json_decref(n);
}
END_TEST

START_TEST(test_near_miss_white_space)
{
	json_t *n = near_res("[{\"resource\":\"weather\",\"response\":\"\"}]", NULL, "weather ");

	ck_assert_int_eq(NINT(n, "offset"), 7);
	ck_assert_str_eq(NSTR(n, "request_has"), "SPACE (U+0020)");
	ck_assert_str_eq(NSTR(n, "mock_has"), "end of text");
	ck_assert_str_eq(NSTR(n, "why"), "trailing white space in the request");
	json_decref(n);
	n = near_res("[{\"resource\":\"weather\",\"response\":\"\"}]", NULL, " weather");
	ck_assert_int_eq(NINT(n, "offset"), 0);
	ck_assert_str_eq(NSTR(n, "why"), "leading white space in the request");
	json_decref(n);
	n = near_res("[{\"resource\":\"weather\\n\",\"response\":\"\"}]", NULL, "weather");
	ck_assert_str_eq(NSTR(n, "why"), "trailing white space missing in the request");
	json_decref(n);
}
END_TEST

START_TEST(test_near_miss_lookalike)
{
	/* a non-breaking space (C2 A0) for a space */
	json_t *n =
	    near_res("[{\"resource\":\"new york\",\"response\":\"\"}]", NULL, "new\xc2\xa0york");

	ck_assert_int_eq(NINT(n, "offset"), 3);
	ck_assert_str_eq(NSTR(n, "request_has"), "NO-BREAK SPACE (U+00A0)");
	ck_assert_str_eq(NSTR(n, "mock_has"), "SPACE (U+0020)");
	ck_assert_str_eq(NSTR(n, "why"),
	                 "look-alike: NO-BREAK SPACE (U+00A0) in the request for SPACE (U+0020) "
	                 "in the mock");
	json_decref(n);
	/* a Cyrillic a (D0 B0) for a Latin one, after a shared multi-byte
	 * character: the offset is the character's first byte */
	n = near_res("[{\"resource\":\"\xc3\xa9tat\",\"response\":\"\"}]", NULL,
	             "\xc3\xa9t\xd0\xb0t");
	ck_assert_int_eq(NINT(n, "offset"), 3);
	ck_assert_str_eq(NSTR(n, "request_has"), "CYRILLIC SMALL LETTER A (U+0430)");
	ck_assert_str_eq(NSTR(n, "mock_has"), "'a' (U+0061)");
	json_decref(n);
	/* two characters sharing their lead byte: backed up to it */
	n = near_res("[{\"resource\":\"x\xc3\xa9\",\"response\":\"\"}]", NULL, "x\xc3\xa8");
	ck_assert_int_eq(NINT(n, "offset"), 1);
	ck_assert_str_eq(NSTR(n, "request_has"), "U+00E8");
	ck_assert_str_eq(NSTR(n, "why"), "different character");
	json_decref(n);
}
END_TEST

START_TEST(test_near_miss_nearest_and_variants)
{
	json_t *n;

	/* longest common prefix wins, then the smaller length difference */
	n = near_res("[{\"resource\":\"abc\",\"response\":\"\"},"
	             "{\"resource\":\"abxyz\",\"response\":\"\"},"
	             "{\"resource\":\"abx\",\"response\":\"\"}]",
	             NULL, "abxy");
	ck_assert_int_eq(NINT(n, "mock"), 1);
	json_decref(n);
	n = near_res("[{\"resource\":\"abx12\",\"response\":\"\"},"
	             "{\"resource\":\"abx1\",\"response\":\"\"}]",
	             NULL, "abx9");
	ck_assert_int_eq(NINT(n, "mock"), 1);
	ck_assert_str_eq(NSTR(n, "why"), "different character");
	json_decref(n);
	/* another variant's mock is never the nearest; none left: NULL */
	ck_assert_ptr_null(
	    near_res("[{\"resource\":\"a\",\"response\":\"\",\"variant\":\"v\"}]", "w", "a "));
	ck_assert_ptr_null(near_res("[{\"tool\":\"t\",\"response\":1}]", NULL, "t"));
}
END_TEST

static json_t *near_tool(const char *mocks, const char *tool, const char *args)
{
	json_t *m = accepted(mocks);
	json_t *a = S(args);
	json_t *n = model_mock_near_miss_tool(m, NULL, tool, a);

	json_decref(m);
	json_decref(a);
	return n;
}

START_TEST(test_near_miss_tool_args)
{
	json_t *n;

	n = near_tool("[{\"tool\":\"s\",\"args\":{\"q\":\"x\",\"lang\":\"en\"},\"response\":1},"
	              "{\"tool\":\"s\",\"args\":{\"q\":\"weather\",\"lang\":\"en\"},"
	              "\"response\":2}]",
	              "s", "{\"lang\":\"en\",\"q\":\"weather \"}");
	ck_assert_int_eq(NINT(n, "mock"), 0); /* both agree on lang: the first */
	ck_assert_str_eq(NSTR(n, "path"), "$.q");
	ck_assert_str_eq(NSTR(n, "why"), "different value");
	ck_assert_str_eq(NSTR(n, "expected"), "x");
	ck_assert_str_eq(NSTR(n, "got"), "weather ");
	json_decref(n);
	/* missing key, nested path */
	n = near_tool("[{\"tool\":\"s\",\"args\":{\"f\":{\"day\":1,\"to\":2}},\"match\":\"subset\","
	              "\"response\":1}]",
	              "s", "{\"f\":{\"day\":1}}");
	ck_assert_str_eq(NSTR(n, "path"), "$.f.to");
	ck_assert_str_eq(NSTR(n, "why"), "missing");
	ck_assert_str_eq(NSTR(n, "match"), "subset");
	json_decref(n);
	/* an extra key, for exact only; a key that is no identifier */
	n = near_tool("[{\"tool\":\"s\",\"args\":{\"q\":\"x\"},\"response\":1}]", "s",
	              "{\"q\":\"x\",\"page size\":2}");
	ck_assert_str_eq(NSTR(n, "path"), "$[\"page size\"]");
	ck_assert_str_eq(NSTR(n, "why"), "extra key");
	json_decref(n);
	/* no mock of that tool: the nearest tool name */
	n = near_tool("[{\"tool\":\"search\",\"response\":1},{\"tool\":\"fetch\",\"response\":1}]",
	              "searc", "{}");
	ck_assert_int_eq(NINT(n, "mock"), 0);
	ck_assert_str_eq(NSTR(n, "tool"), "search");
	ck_assert_str_eq(NSTR(n, "why"), "no mock for this tool");
	ck_assert_int_eq(NINT(n, "offset"), 5);
	json_decref(n);
}
END_TEST

START_TEST(test_trace_entries_and_check)
{
	json_t *m = accepted("[{\"resource\":\"GET /a\\n\",\"response\":\"A\"},"
	                     "{\"tool\":\"s\",\"args\":{\"q\":1},\"error\":\"down\"}]");
	json_t *t = json_array(), *e, *a = S("{\"q\":1}");
	struct model_reason why;
	size_t misses = 9;

	json_array_append_new(t, model_trace_tool(m, NULL, "s", a, 1, 1, 1, 12));
	json_array_append_new(t, model_trace_resource(m, NULL, "GET /a\r\n", 8, 0, 0, 3));
	e = json_array_get(t, 0);
	ck_assert(json_is_true(json_object_get(e, "error")));
	ck_assert_int_eq(NINT(e, "mock"), 1);
	e = json_array_get(t, 1);
	ck_assert(json_is_null(json_object_get(e, "mock")));
	ck_assert_int_eq(NINT(json_object_get(e, "near_miss"), "offset"), 6);
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), 0);
	ck_assert_int_eq((int)misses, 1);
	/* a mock index outside the spec's mocks */
	ck_assert_int_eq(model_trace_check(t, 1, &misses, &why), -1);
	ck_assert_msg(strstr(why.text, "trace[0].mock") != NULL, "%s", why.text);
	/* a hit without a mock, an unknown key, both resource and tool */
	json_object_set_new(json_array_get(t, 0), "mock", json_null());
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), -1);
	json_object_set_new(json_array_get(t, 0), "mock", json_integer(1));
	json_object_set_new(json_array_get(t, 1), "x", json_true());
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), -1);
	json_object_del(json_array_get(t, 1), "x");
	json_object_set_new(json_array_get(t, 1), "tool", json_string("s"));
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), -1);
	json_object_del(json_array_get(t, 1), "tool");
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), 0);
	/* over the bound of requests a step */
	while (json_array_size(t) <= 100)
		json_array_append(t, json_array_get(t, 0));
	ck_assert_int_eq(model_trace_check(t, 2, &misses, &why), -1);
	json_decref(a);
	a = S("{}");
	ck_assert_int_eq(model_trace_check(a, 2, &misses, &why), -1);
	json_decref(a);
	json_decref(t);
	json_decref(m);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const check[] = {test_tool_mock_normalized, test_tool_mock_field_errors,
	                              test_tool_mock_ambiguity, NULL};
	const TTest *const match[] = {test_tool_match_and_precedence, test_tool_sequence_and_error,
	                              NULL};
	const TTest *const near[] = {test_near_miss_crlf,
	                             test_near_miss_white_space,
	                             test_near_miss_lookalike,
	                             test_near_miss_nearest_and_variants,
	                             test_near_miss_tool_args,
	                             test_trace_entries_and_check,
	                             NULL};
	Suite *s = suite_create("mocks");

	unit_tcase(s, "check", check);
	unit_tcase(s, "match", match);
	unit_tcase(s, "near", near);
	return s;
}
