/*
 * Unit tests of model/http_mock.c and model/llm_mock.c (Check): HTTP and
 * chat mocks as model_scenario_check validates them (normalized shapes,
 * each field's errors, bad regexes, ambiguity), url normalization, the
 * gateway's resolution (matching, precedence, sequences, misses and their
 * near misses), the chat answer's JSON and server-sent events, and http
 * entries in model_trace_check.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"
#include "model/error.h"
#include "model/http_mock.h"
#include "model/mock.h"
#include "model/scenario.h"
#include "tests/unit/unit.h"

#define S(text) unit_json(text)

static json_t *body_with(const char *mocks)
{
	size_t n = strlen(mocks) + 128;
	char *buf = malloc(n);
	json_t *j;

	snprintf(buf, n, "{\"name\":\"n\",\"steps\":[{\"input\":\"i\"}],\"mocks\":%s}", mocks);
	j = S(buf);
	free(buf);
	return j;
}

static void refused(const char *mocks, enum model_err code, const char *field, const char *words)
{
	struct model_error e;
	json_t *body = body_with(mocks), *norm = NULL;

	memset(&e, 0, sizeof(e));
	ck_assert_msg(model_scenario_check(body, 0, &norm, &e) == -1, "accepted: %s", mocks);
	ck_assert_msg(e.code == code, "code %s, want %s (%s) for %s", model_error_name(e.code),
	              model_error_name(code), e.message, mocks);
	ck_assert_msg(strcmp(e.field, field) == 0, "field '%s', want '%s' (%s) for %s", e.field,
	              field, e.message, mocks);
	if (words)
		ck_assert_msg(strstr(e.message, words) != NULL, "message '%s' lacks '%s'",
		              e.message, words);
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

static void assert_json(json_t *v, const char *want)
{
	char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_t *w = S(want);
	char *wd = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	ck_assert_str_eq(got, wd);
	free(got);
	free(wd);
	json_decref(w);
}

/* Resolve with no headers and a NUL-terminated body. */
static void resolve(json_t *mocks, const char *variant, const char *method, const char *url,
                    const char *body, size_t *calls, size_t seq, struct model_gateway_answer *a)
{
	ck_assert_int_eq(model_gateway_resolve(mocks, variant, method, url, NULL, body,
	                                       body ? strlen(body) : 0, calls, seq, a),
	                 0);
}

/* The value of header name in a's pairs, or NULL. */
static const char *header(struct model_gateway_answer *a, const char *name)
{
	json_t *p;
	size_t i;

	json_array_foreach(a->headers, i, p)
	{
		if (strcmp(json_string_value(json_array_get(p, 0)), name) == 0)
			return json_string_value(json_array_get(p, 1));
	}
	return NULL;
}

/* ---- validation ------------------------------------------------------------- */

START_TEST(test_normalized)
{
	json_t *m = accepted(
	    "[{\"http\":{\"method\":\"get\",\"url\":\"HTTPS://API.Example.COM:443?q=1\"},"
	    "\"response\":{\"body\":\"hi\"}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://h:8080\",\"body\":{\"json_subset\":"
	    "{\"a\":1}}},\"sequence\":[{\"status\":201,\"json\":[1]},{\"status\":503,\"headers\":"
	    "{\"Retry-After\":\"1\"}}],\"variant\":\"b\",\"delay_ms\":7},"
	    "{\"llm\":{\"last_user_message\":\"hi\"},\"response\":{\"content\":\"yo\"}},"
	    "{\"llm\":{\"messages\":[{\"role\":\"user\"}],\"model\":\"gpt-x\"},"
	    "\"response\":{\"tool_calls\":[{\"name\":\"search\"}]}},"
	    "{\"llm\":{},\"response\":{\"content\":\"any\"}},"
	    "{\"tool\":\"t\",\"response\":1},{\"resource\":\"r\",\"response\":\"R\"}]");

	/* method upper-cased, url normalized, status and match and arguments
	 * filled in, variant and delay kept as for other mocks */
	assert_json(
	    m,
	    "[{\"http\":{\"method\":\"GET\",\"url\":\"https://api.example.com/?q=1\"},"
	    "\"response\":{\"status\":200,\"body\":\"hi\"}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://h:8080/\",\"body\":{\"json_subset\":"
	    "{\"a\":1}}},\"sequence\":[{\"status\":201,\"json\":[1]},{\"status\":503,\"headers\":"
	    "{\"Retry-After\":\"1\"}}],\"variant\":\"b\",\"delay_ms\":7},"
	    "{\"llm\":{\"last_user_message\":\"hi\",\"match\":\"exact\"},\"response\":"
	    "{\"content\":\"yo\"}},"
	    "{\"llm\":{\"messages\":[{\"role\":\"user\"}],\"match\":\"subset\",\"model\":"
	    "\"gpt-x\"},\"response\":{\"tool_calls\":[{\"name\":\"search\",\"arguments\":{}}]}},"
	    "{\"llm\":{},\"response\":{\"content\":\"any\"}},"
	    "{\"tool\":\"t\",\"args\":{},\"match\":\"exact\",\"response\":1},"
	    "{\"resource\":\"r\",\"response\":\"R\"}]");
	json_decref(m);
}
END_TEST

START_TEST(test_url_normalize)
{
	static const char *const good[][2] = {
	    {"HTTP://Example.COM", "http://example.com/"},
	    {"http://example.com:80/a/B?X=Y", "http://example.com/a/B?X=Y"},
	    {"https://example.com:443", "https://example.com/"},
	    {"https://example.com:80/", "https://example.com:80/"},
	    {"http://example.com:/p", "http://example.com/p"},
	    {"http://example.com:0080/p", "http://example.com/p"},
	    {"http://example.com:08080/p", "http://example.com:8080/p"},
	    {"http://example.com?q", "http://example.com/?q"},
	    {"https://[::1]:8443/v1", "https://[::1]:8443/v1"},
	    {"https://[FE80::1]", "https://[fe80::1]/"},
	    {"http://h/%7Euser", "http://h/%7Euser"},
	};
	static const char *const bad[][2] = {
	    {"ftp://h/", "http:// or https://"},
	    {"/v1/x", "http:// or https://"},
	    {"http:///x", "no host"},
	    {"http://:80/x", "no host"},
	    {"http://u:p@h/", "user information"},
	    {"http://h/x#frag", "fragment"},
	    {"http://h:99999/", "over 65535"},
	    {"http://h:0/", "port is 0"},
	    {"http://h:8a/", "not a number"},
	    {"http://h/a b", "space or a control"},
	    {"http://[::1/", "closing bracket"},
	    {"http://[::1]x/", "other than a port"},
	};
	size_t i;
	char *out;
	const char *why;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(
		    model_http_url_normalize(good[i][0], strlen(good[i][0]), &out, &why) == 0,
		    "refused %s", good[i][0]);
		ck_assert_str_eq(out, good[i][1]);
		free(out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(model_http_url_normalize(bad[i][0], strlen(bad[i][0]), &out, &why) ==
		                  -1,
		              "accepted %s", bad[i][0]);
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(why, bad[i][1]) != NULL, "%s: '%s'", bad[i][0], why);
	}
	ck_assert_int_eq(model_http_is_chat_path("https://api.openai.com/v1/chat/completions"), 1);
	ck_assert_int_eq(model_http_is_chat_path("http://h/chat/completions?x=1"), 1);
	ck_assert_int_eq(model_http_is_chat_path("http://h/v1/chat/completions/x"), 0);
	ck_assert_int_eq(model_http_is_chat_path("http://h/v1/completions"), 0);
}
END_TEST

#define H(http, resp) "[{\"http\":" http ",\"response\":" resp "}]"
#define GET "{\"method\":\"GET\",\"url\":\"http://h/\"}"

START_TEST(test_field_errors)
{
	static const struct {
		const char *mocks;
		enum model_err code;
		const char *field;
	} cases[] = {
	    /* structure: 400 */
	    {H("1", "{}"), MODEL_E_MALFORMED, "mocks[0].http"},
	    {H("{\"url\":\"http://h/\"}", "{}"), MODEL_E_MALFORMED, "mocks[0].http.method"},
	    {H("{\"method\":\"GET\"}", "{}"), MODEL_E_MALFORMED, "mocks[0].http.url"},
	    {H("{\"method\":1,\"url\":\"http://h/\"}", "{}"), MODEL_E_MALFORMED,
	     "mocks[0].http.method"},
	    {H("{\"method\":\"GET\",\"url\":\"http://h/\",\"x\":1}", "{}"), MODEL_E_MALFORMED,
	     "mocks[0].http.x"},
	    {H("{\"method\":\"GET\",\"url\":\"http://h/\",\"body\":1}", "{}"), MODEL_E_MALFORMED,
	     "mocks[0].http.body"},
	    {H("{\"method\":\"GET\",\"url\":\"http://h/\",\"body\":{\"regex\":\"a\","
	       "\"json_subset\":1}}",
	       "{}"),
	     MODEL_E_MALFORMED, "mocks[0].http.body"},
	    {"[{\"http\":" GET "}]", MODEL_E_MALFORMED, "mocks[0].response"},
	    {"[{\"http\":" GET ",\"response\":{},\"sequence\":[{}]}]", MODEL_E_MALFORMED,
	     "mocks[0].sequence"},
	    {"[{\"http\":" GET ",\"sequence\":{}}]", MODEL_E_MALFORMED, "mocks[0].sequence"},
	    {H(GET, "1"), MODEL_E_MALFORMED, "mocks[0].response"},
	    {H(GET, "{\"status\":\"200\"}"), MODEL_E_MALFORMED, "mocks[0].response.status"},
	    {H(GET, "{\"body\":\"a\",\"json\":1}"), MODEL_E_MALFORMED, "mocks[0].response.json"},
	    {H(GET, "{\"headers\":[]}"), MODEL_E_MALFORMED, "mocks[0].response.headers"},
	    {H(GET, "{\"headers\":{\"X\":1}}"), MODEL_E_MALFORMED, "mocks[0].response.headers.X"},
	    {H(GET, "{\"text\":\"a\"}"), MODEL_E_MALFORMED, "mocks[0].response.text"},
	    {"[{\"http\":" GET ",\"tool\":\"t\",\"response\":{}}]", MODEL_E_MALFORMED,
	     "mocks[0].http"},
	    {"[{\"http\":" GET ",\"resource\":\"r\",\"response\":{}}]", MODEL_E_MALFORMED,
	     "mocks[0].resource"},
	    {"[{\"http\":" GET ",\"args\":{},\"response\":{}}]", MODEL_E_MALFORMED,
	     "mocks[0].args"},
	    {"[{\"http\":" GET ",\"llm\":{},\"response\":{}}]", MODEL_E_MALFORMED, "mocks[0].llm"},
	    {"[{\"llm\":[],\"response\":{\"content\":\"a\"}}]", MODEL_E_MALFORMED, "mocks[0].llm"},
	    {"[{\"llm\":{\"last_user_message\":\"a\",\"messages\":[]},\"response\":"
	     "{\"content\":\"a\"}}]",
	     MODEL_E_MALFORMED, "mocks[0].llm.messages"},
	    {"[{\"llm\":{\"messages\":[1]},\"response\":{\"content\":\"a\"}}]", MODEL_E_MALFORMED,
	     "mocks[0].llm.messages"},
	    {"[{\"llm\":{\"match\":1},\"response\":{\"content\":\"a\"}}]", MODEL_E_MALFORMED,
	     "mocks[0].llm.match"},
	    {"[{\"llm\":{},\"response\":{\"content\":1}}]", MODEL_E_MALFORMED,
	     "mocks[0].response.content"},
	    {"[{\"llm\":{},\"response\":{\"tool_calls\":{}}}]", MODEL_E_MALFORMED,
	     "mocks[0].response.tool_calls"},
	    {"[{\"llm\":{},\"response\":{\"tool_calls\":[{\"arguments\":{}}]}}]", MODEL_E_MALFORMED,
	     "mocks[0].response.tool_calls[0].name"},
	    {"[{\"llm\":{},\"response\":{\"tool_calls\":[{\"name\":\"s\",\"arguments\":\"{}\"}]}}]",
	     MODEL_E_MALFORMED, "mocks[0].response.tool_calls[0].arguments"},
	    {"[{\"llm\":{},\"sequence\":[{\"content\":\"a\"},{\"role\":\"x\"}]}]",
	     MODEL_E_MALFORMED, "mocks[0].sequence[1].role"},
	    {"[{\"resource\":\"r\",\"response\":\"R\",\"http\":" GET "}]", MODEL_E_MALFORMED,
	     "mocks[0].resource"},
	    /* bounds: 422 limit_exceeded */
	    {H("{\"method\":\"\",\"url\":\"http://h/\"}", "{}"), MODEL_E_LIMIT,
	     "mocks[0].http.method"},
	    {H("{\"method\":\"GET\",\"url\":\"\"}", "{}"), MODEL_E_LIMIT, "mocks[0].http.url"},
	    {"[{\"http\":" GET ",\"sequence\":[]}]", MODEL_E_LIMIT, "mocks[0].sequence"},
	    {"[{\"llm\":{\"last_user_message\":\"\"},\"response\":{\"content\":\"a\"}}]",
	     MODEL_E_LIMIT, "mocks[0].llm.last_user_message"},
	    {"[{\"llm\":{\"messages\":[]},\"response\":{\"content\":\"a\"}}]", MODEL_E_LIMIT,
	     "mocks[0].llm.messages"},
	    {"[{\"llm\":{\"model\":\"\"},\"response\":{\"content\":\"a\"}}]", MODEL_E_LIMIT,
	     "mocks[0].llm.model"},
	    {"[{\"llm\":{},\"response\":{\"tool_calls\":[]}}]", MODEL_E_LIMIT,
	     "mocks[0].response.tool_calls"},
	    /* well-formed but refused: 422 invalid */
	    {H("{\"method\":\"GE T\",\"url\":\"http://h/\"}", "{}"), MODEL_E_INVALID,
	     "mocks[0].http.method"},
	    {H("{\"method\":\"GET\",\"url\":\"ftp://h/\"}", "{}"), MODEL_E_INVALID,
	     "mocks[0].http.url"},
	    {H(GET, "{\"status\":99}"), MODEL_E_INVALID, "mocks[0].response.status"},
	    {H(GET, "{\"status\":600}"), MODEL_E_INVALID, "mocks[0].response.status"},
	    {H(GET, "{\"status\":204,\"body\":\"x\"}"), MODEL_E_INVALID, "mocks[0].response"},
	    {H(GET, "{\"headers\":{\"Content-Length\":\"3\"}}"), MODEL_E_INVALID,
	     "mocks[0].response.headers.Content-Length"},
	    {H(GET, "{\"headers\":{\"transfer-encoding\":\"chunked\"}}"), MODEL_E_INVALID,
	     "mocks[0].response.headers.transfer-encoding"},
	    {H(GET, "{\"headers\":{\"X\":\"a\\r\\nSet-Cookie: b\"}}"), MODEL_E_INVALID,
	     "mocks[0].response.headers.X"},
	    {H(GET, "{\"headers\":{\"X Y\":\"a\"}}"), MODEL_E_INVALID,
	     "mocks[0].response.headers.X Y"},
	    {H(GET, "{\"headers\":{\"X-A\":\"a\",\"x-a\":\"b\"}}"), MODEL_E_INVALID,
	     "mocks[0].response.headers.x-a"},
	    {"[{\"llm\":{\"match\":\"exact\"},\"response\":{\"content\":\"a\"}}]", MODEL_E_INVALID,
	     "mocks[0].llm.match"},
	    {"[{\"llm\":{\"last_user_message\":\"a\",\"match\":\"subset\"},\"response\":"
	     "{\"content\":\"a\"}}]",
	     MODEL_E_INVALID, "mocks[0].llm.match"},
	    {"[{\"llm\":{\"messages\":[{}],\"match\":\"contains\"},\"response\":"
	     "{\"content\":\"a\"}}]",
	     MODEL_E_INVALID, "mocks[0].llm.match"},
	    {"[{\"llm\":{},\"response\":{}}]", MODEL_E_INVALID, "mocks[0].response"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused(cases[i].mocks, cases[i].code, cases[i].field, NULL);
}
END_TEST

START_TEST(test_limits)
{
	char *big = unit_rep('a', 8200), *buf = malloc(20000);

	snprintf(buf, 20000, H("{\"method\":\"GET\",\"url\":\"http://h/%s\"}", "{}"), big);
	refused(buf, MODEL_E_LIMIT, "mocks[0].http.url", "at most 8192 bytes");
	free(big);
	big = unit_rep('a', 1025);
	snprintf(buf, 20000,
	         H("{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":{\"regex\":\"%s\"}}", "{}"),
	         big);
	refused(buf, MODEL_E_LIMIT, "mocks[0].http.body.regex", "at most 1024 bytes");
	free(big);
	/* mocks of every kind count against the scenario's 1000 */
	{
		struct model_buf mb;
		size_t i;

		model_buf_init(&mb, 1 << 20);
		model_buf_must_fit(model_buf_adds(&mb, "["));
		for (i = 0; i < 1001; i++)
			model_buf_must_fit(model_buf_printf(
			    &mb,
			    "%s{\"http\":{\"method\":\"GET\",\"url\":\"http://h/%zu\"},"
			    "\"response\":{}}",
			    i ? "," : "", i));
		model_buf_must_fit(model_buf_adds(&mb, "]"));
		refused(mb.data, MODEL_E_LIMIT, "mocks", "at most 1000");
		model_buf_release(&mb);
	}
	big = unit_rep('a', 33);
	snprintf(buf, 20000, H("{\"method\":\"%s\",\"url\":\"http://h/\"}", "{}"), big);
	refused(buf, MODEL_E_LIMIT, "mocks[0].http.method", NULL);
	free(big);
	free(buf);
}
END_TEST

START_TEST(test_bad_regex)
{
	refused(H("{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":{\"regex\":\"a(b\"}}", "{}"),
	        MODEL_E_INVALID, "mocks[0].http.body.regex", "not a POSIX extended regular");
	refused("[{\"llm\":{\"last_user_message\":\"[z-a]\",\"match\":\"regex\"},\"response\":"
	        "{\"content\":\"a\"}}]",
	        MODEL_E_INVALID, "mocks[0].llm.last_user_message", "not a POSIX extended");
	/* the same text is fine as exact or contains */
	json_decref(accepted("[{\"llm\":{\"last_user_message\":\"[z-a]\",\"match\":\"contains\"},"
	                     "\"response\":{\"content\":\"a\"}}]"));
	/* a back-reference: exponential matching, refused in both kinds */
	refused(H("{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":{\"regex\":"
	          "\"^(a*)*\\\\1b\"}}",
	          "{}"),
	        MODEL_E_INVALID, "mocks[0].http.body.regex", "back-reference (\\1)");
	refused("[{\"llm\":{\"last_user_message\":\"(x)\\\\9\",\"match\":\"regex\"},\"response\":"
	        "{\"content\":\"a\"}}]",
	        MODEL_E_INVALID, "mocks[0].llm.last_user_message", "back-reference (\\9)");
	/* an escaped backslash before a digit is a backslash and a digit */
	json_decref(accepted(H("{\"method\":\"POST\",\"url\":\"http://h/\",\"body\":{\"regex\":"
	                       "\"a\\\\\\\\1\"}}",
	                       "{}")));
}
END_TEST

#define P(body) "{\"http\":{\"method\":\"POST\",\"url\":\"http://h/x\"" body "},\"response\":{}}"

START_TEST(test_ambiguity)
{
	static const char *const ambiguous[][2] = {
	    {"[" P("") "," P("") "]", "neither has a body"},
	    /* the url is compared normalized */
	    {"[{\"http\":{\"method\":\"get\",\"url\":\"HTTP://H:80\"},\"response\":{}},"
	     "{\"http\":{\"method\":\"GET\",\"url\":\"http://h/\"},\"response\":{}}]",
	     "neither has a body"},
	    {"[" P(",\"body\":\"a\"") "," P(",\"body\":\"a\"") "]", "the same exact body"},
	    {"[" P(",\"body\":{\"regex\":\"a\"}") "," P(",\"body\":{\"regex\":\"b\"}") "]",
	     "a regex body"},
	    {"[" P(",\"body\":{\"regex\":\"a\"}") "," P(",\"body\":{\"json_subset\":{}}") "]",
	     "a regex body"},
	    {"[" P(",\"body\":{\"json_subset\":{\"a\":1}}") "," P(
	         ",\"body\":{\"json_subset\":{\"b\":1}}") "]",
	     "json_subset bodies of the same weight"},
	    {"[{\"llm\":{},\"response\":{\"content\":\"a\"}},{\"llm\":{},\"response\":"
	     "{\"content\":\"b\"}}]",
	     "neither has a condition"},
	    {"[{\"llm\":{\"last_user_message\":\"hi\"},\"response\":{\"content\":\"a\"}},"
	     "{\"llm\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"match\":"
	     "\"exact\"},\"response\":{\"content\":\"b\"}}]",
	     "the same exact condition"},
	    {"[{\"llm\":{\"last_user_message\":\"ab\",\"match\":\"contains\"},\"response\":"
	     "{\"content\":\"a\"}},{\"llm\":{\"last_user_message\":\"cd\",\"match\":"
	     "\"contains\"},\"response\":{\"content\":\"b\"}}]",
	     "contains texts of the same length"},
	    {"[{\"llm\":{\"last_user_message\":\"a\",\"match\":\"regex\"},\"response\":"
	     "{\"content\":\"a\"}},{\"llm\":{\"messages\":[{}]},\"response\":{\"content\":"
	     "\"b\"}}]",
	     "a regex could match"},
	    {"[{\"llm\":{\"messages\":[{\"role\":\"user\"}]},\"response\":{\"content\":\"a\"}},"
	     "{\"llm\":{\"messages\":[{\"content\":\"x\"}]},\"response\":{\"content\":\"b\"}}]",
	     "messages subsets of the same weight"},
	};
	static const char *const fine[] = {
	    /* different method, url, variant, precedence or incompatible values */
	    "[" P("") ",{\"http\":{\"method\":\"GET\",\"url\":\"http://h/x\"},\"response\":{}}]",
	    "[" P("") ",{\"http\":{\"method\":\"POST\",\"url\":\"http://h/y\"},\"response\":{}}]",
	    "[" P("") ",{\"http\":{\"method\":\"POST\",\"url\":\"http://h/x\"},\"response\":{},"
	              "\"variant\":\"b\"}]",
	    "[" P("") "," P(",\"body\":\"a\"") "," P(",\"body\":{\"regex\":\"a\"}") "]",
	    "[" P(",\"body\":\"a\"") "," P(",\"body\":\"b\"") "]",
	    "[" P(",\"body\":{\"json_subset\":{\"a\":1}}") "," P(
	        ",\"body\":{\"json_subset\":{\"a\":2}}") "]",
	    "[" P(",\"body\":{\"json_subset\":{\"a\":1}}") "," P(
	        ",\"body\":{\"json_subset\":{\"a\":1,\"b\":2}}") "]",
	    "[{\"llm\":{},\"response\":{\"content\":\"a\"}},{\"llm\":{\"model\":\"m\"},"
	    "\"response\":{\"content\":\"b\"}}]",
	    "[{\"llm\":{\"model\":\"m1\"},\"response\":{\"content\":\"a\"}},{\"llm\":{\"model\":"
	    "\"m2\"},\"response\":{\"content\":\"b\"}}]",
	    "[{\"llm\":{\"last_user_message\":\"a\",\"match\":\"contains\"},\"response\":"
	    "{\"content\":\"a\"}},{\"llm\":{\"last_user_message\":\"ab\",\"match\":\"contains\"},"
	    "\"response\":{\"content\":\"b\"}}]",
	    "[{\"llm\":{\"last_user_message\":\"hi\"},\"response\":{\"content\":\"a\"}},"
	    "{\"llm\":{\"messages\":[{\"role\":\"user\",\"content\":\"ho\"}],\"match\":"
	    "\"exact\"},\"response\":{\"content\":\"b\"}}]",
	    "[{\"llm\":{\"messages\":[{\"role\":\"user\"}]},\"response\":{\"content\":\"a\"}},"
	    "{\"llm\":{\"messages\":[{\"role\":\"system\"}]},\"response\":{\"content\":\"b\"}}]",
	    /* an http mock and an llm mock never tie: llm mocks are tried first */
	    "[{\"llm\":{},\"response\":{\"content\":\"a\"}},{\"http\":{\"method\":\"POST\","
	    "\"url\":\"https://api.openai.com/v1/chat/completions\"},\"response\":{}}]",
	};
	size_t i;

	for (i = 0; i < sizeof(ambiguous) / sizeof(ambiguous[0]); i++)
		refused(ambiguous[i][0], MODEL_E_INVALID, "mocks[1]", ambiguous[i][1]);
	for (i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		json_decref(accepted(fine[i]));
	/* the later of the first pair, with the earlier one named */
	refused("[" P(",\"body\":\"a\"") "," P("") "," P(",\"body\":\"b\"") "," P("") "]",
	        MODEL_E_INVALID, "mocks[3]", "as mocks[1]");
}
END_TEST

START_TEST(test_spec_check)
{
	json_t *m = accepted("[{\"http\":" GET ",\"response\":{\"json\":1},\"variant\":\"v\","
	                     "\"delay_ms\":3},{\"llm\":{},\"sequence\":[{\"content\":\"a\"}]}]");
	struct model_error e;
	json_t *bad;

	/* what a scenario stores passes the runner's check */
	ck_assert_int_eq(model_http_mock_spec_check(json_array_get(m, 0), &e), 0);
	ck_assert_int_eq(model_http_mock_spec_check(json_array_get(m, 1), &e), 0);
	json_decref(m);
	bad = S("{\"http\":{\"method\":\"GET\",\"url\":\"ftp://h/\"},\"response\":{}}");
	ck_assert_int_eq(model_http_mock_spec_check(bad, &e), -1);
	ck_assert_str_eq(e.field, "mock.http.url");
	json_decref(bad);
	bad = S("{\"http\":" GET ",\"response\":{},\"resource\":\"r\"}");
	ck_assert_int_eq(model_http_mock_spec_check(bad, &e), -1);
	ck_assert_str_eq(e.field, "mock.resource");
	json_decref(bad);
	bad = S("{\"resource\":\"r\",\"response\":\"R\"}");
	ck_assert_int_eq(model_http_mock_spec_check(bad, &e), -1);
	ck_assert_int_eq(e.code, MODEL_E_MALFORMED);
	json_decref(bad);
}
END_TEST

/* ---- http matching ------------------------------------------------------------ */

START_TEST(test_http_match)
{
	json_t *m = accepted(
	    "[{\"http\":{\"method\":\"GET\",\"url\":\"https://api.example.com/v1/x?q=1\"},"
	    "\"response\":{\"body\":\"plain\",\"headers\":{\"X-Mock\":\"0\"}},\"delay_ms\":30},"
	    "{\"http\":{\"method\":\"GET\",\"url\":\"https://api.example.com/v1/x?q=1\"},"
	    "\"response\":{\"json\":{\"v\":\"b\"}},\"variant\":\"b\"},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://h/p\"},\"response\":{\"status\":"
	    "202,\"body\":\"none\"}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://h/p\",\"body\":{\"regex\":"
	    "\"^id=[0-9]+$\"}},\"response\":{\"body\":\"regex\"}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://h/p\",\"body\":\"id=7\"},"
	    "\"response\":{\"body\":\"exact\",\"headers\":{\"content-type\":\"text/x\"}}},"
	    "{\"http\":{\"method\":\"PUT\",\"url\":\"http://h/j\",\"body\":{\"json_subset\":"
	    "{\"a\":1}}},\"response\":{\"body\":\"light\"}},"
	    "{\"http\":{\"method\":\"PUT\",\"url\":\"http://h/j\",\"body\":{\"json_subset\":"
	    "{\"a\":1,\"b\":{\"c\":2}}}},\"response\":{\"body\":\"heavy\"}}]");
	struct model_gateway_answer a;
	size_t calls[7] = {0};

	/* the url is normalized on both sides; headers kept in order, then a
	 * Content-Type by default */
	resolve(m, NULL, "GET", "HTTPS://api.EXAMPLE.com:443/v1/x?q=1", NULL, calls, 0, &a);
	ck_assert_int_eq(a.hit, 1);
	ck_assert_uint_eq(a.mock, 0);
	ck_assert_int_eq(a.llm, 0);
	ck_assert_int_eq(a.status, 200);
	ck_assert_str_eq(a.body, "plain");
	ck_assert_uint_eq(a.body_len, 5);
	ck_assert_int_eq(a.delay_ms, 30);
	assert_json(a.headers,
	            "[[\"X-Mock\",\"0\"],[\"Content-Type\",\"text/plain; charset=utf-8\"]]");
	assert_json(a.trace, "{\"http\":{\"method\":\"GET\",\"url\":"
	                     "\"https://api.example.com/v1/x?q=1\"},\"status\":200,\"hit\":true,"
	                     "\"mock\":0}");
	ck_assert_uint_eq(calls[0], 1);
	model_gateway_answer_clear(&a);
	ck_assert_ptr_null(a.body);

	/* the run's variant wins; json as compact JSON */
	resolve(m, "b", "GET", "https://api.example.com/v1/x?q=1", NULL, calls, 0, &a);
	ck_assert_uint_eq(a.mock, 1);
	ck_assert_str_eq(a.body, "{\"v\":\"b\"}");
	ck_assert_str_eq(header(&a, "Content-Type"), "application/json");
	ck_assert_int_eq(a.delay_ms, 0);
	model_gateway_answer_clear(&a);
	/* another variant sees the variant-less mock; the query is part of the url */
	resolve(m, "c", "GET", "https://api.example.com/v1/x?q=1", NULL, calls, 0, &a);
	ck_assert_uint_eq(a.mock, 0);
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "GET", "https://api.example.com/v1/x?q=2", NULL, calls, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	model_gateway_answer_clear(&a);
	/* the method is compared as sent */
	resolve(m, NULL, "get", "https://api.example.com/v1/x?q=1", NULL, calls, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	model_gateway_answer_clear(&a);

	/* exact body over regex over no condition */
	resolve(m, NULL, "POST", "http://h/p", "id=7", calls, 0, &a);
	ck_assert_uint_eq(a.mock, 4);
	ck_assert_str_eq(a.body, "exact");
	/* a mock's own Content-Type, whatever its case, replaces the default */
	assert_json(a.headers, "[[\"content-type\",\"text/x\"]]");
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "POST", "http://h/p", "id=8", calls, 0, &a);
	ck_assert_uint_eq(a.mock, 3);
	model_gateway_answer_clear(&a);
	/* $ is the end of the body (no REG_NEWLINE): a final LF is not matched */
	resolve(m, NULL, "POST", "http://h/p", "id=8\n", calls, 0, &a);
	ck_assert_uint_eq(a.mock, 2);
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "POST", "http://h/p", "id=x", calls, 0, &a);
	ck_assert_uint_eq(a.mock, 2);
	ck_assert_int_eq(a.status, 202);
	model_gateway_answer_clear(&a);
	/* a NUL in the body never matches a regex */
	ck_assert_int_eq(
	    model_gateway_resolve(m, NULL, "POST", "http://h/p", NULL, "id=8\0", 5, calls, 0, &a),
	    0);
	ck_assert_uint_eq(a.mock, 2);
	model_gateway_answer_clear(&a);

	/* json_subset: the heavier that holds; a body that is not JSON misses */
	resolve(m, NULL, "PUT", "http://h/j", "{\"a\":1,\"b\":{\"c\":2,\"d\":3},\"e\":4}", calls, 0,
	        &a);
	ck_assert_str_eq(a.body, "heavy");
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "PUT", "http://h/j", "{\"a\":1,\"b\":{\"c\":3}}", calls, 0, &a);
	ck_assert_str_eq(a.body, "light");
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "PUT", "http://h/j", "a=1", calls, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

START_TEST(test_sequence)
{
	json_t *m = accepted("[{\"http\":{\"method\":\"GET\",\"url\":\"http://h/\"},\"sequence\":"
	                     "[{\"status\":503,\"body\":\"busy\"},{\"body\":\"ok\"}]}]");
	struct model_gateway_answer a;
	size_t calls[1] = {0};
	static const int want_status[] = {503, 200, 200};
	static const char *const want_body[] = {"busy", "ok", "ok"};
	size_t i;

	for (i = 0; i < 3; i++) {
		resolve(m, NULL, "GET", "http://h", NULL, calls, 0, &a);
		ck_assert_int_eq(a.status, want_status[i]);
		ck_assert_str_eq(a.body, want_body[i]);
		ck_assert_uint_eq(calls[0], i + 1);
		model_gateway_answer_clear(&a);
	}
	/* without counts, every call is the first */
	resolve(m, NULL, "GET", "http://h", NULL, NULL, 0, &a);
	ck_assert_int_eq(a.status, 503);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

START_TEST(test_miss)
{
	json_t *m = accepted(
	    "[{\"http\":{\"method\":\"GET\",\"url\":\"https://api.example.com/v1/items\"},"
	    "\"response\":{}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/orders\","
	    "\"body\":{\"json_subset\":{\"sku\":\"A1\",\"qty\":1}}},\"response\":{}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/echo\","
	    "\"body\":\"hello\"},\"response\":{}},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/re\","
	    "\"body\":{\"regex\":\"^x\"}},\"response\":{}},"
	    "{\"http\":{\"method\":\"GET\",\"url\":\"https://other.example/\"},\"variant\":\"z\","
	    "\"response\":{}}]");
	struct model_gateway_answer a;
	char *marker = model_http_miss_marker("GET", "http://h/x");
	json_t *near;

	ck_assert_str_eq(marker, "[[mock-miss:GET http://h/x]]");
	free(marker);

	/* a url near another: the resource near-miss words */
	resolve(m, NULL, "GET", "https://API.example.com/v1/item", NULL, NULL, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	ck_assert_int_eq(a.status, 404);
	ck_assert_str_eq(a.body, "[[mock-miss:GET https://api.example.com/v1/item]]");
	ck_assert_uint_eq(a.body_len, strlen(a.body));
	ck_assert_str_eq(header(&a, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_int_eq(a.delay_ms, 0);
	assert_json(a.trace,
	            "{\"http\":{\"method\":\"GET\",\"url\":\"https://api.example.com/v1/item\"},"
	            "\"status\":404,\"hit\":false,\"mock\":null,\"near_miss\":{\"mock\":0,"
	            "\"method\":\"GET\",\"url\":\"https://api.example.com/v1/items\",\"differs\":"
	            "\"url\",\"offset\":31,\"request_has\":\"end of text\",\"mock_has\":"
	            "\"'s' (U+0073)\",\"why\":\"the request is shorter\"}}");
	model_gateway_answer_clear(&a);

	/* the same url with another method */
	near = model_http_near_miss(m, NULL, "DELETE", "https://api.example.com/v1/items", NULL, 0);
	assert_json(near, "{\"mock\":0,\"method\":\"GET\",\"url\":"
	                  "\"https://api.example.com/v1/items\",\"differs\":\"method\","
	                  "\"request_has\":\"DELETE\",\"mock_has\":\"GET\",\"why\":"
	                  "\"method differs\"}");
	json_decref(near);

	/* the body: json_subset, exact, regex, not JSON */
	near = model_http_near_miss(m, NULL, "POST", "https://api.example.com/v1/orders",
	                            "{\"sku\":\"A1\",\"qty\":2}", 20);
	ck_assert_str_eq(json_string_value(json_object_get(near, "differs")), "body");
	ck_assert_str_eq(json_string_value(json_object_get(near, "path")), "$.qty");
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")), "different value");
	ck_assert_int_eq(json_integer_value(json_object_get(near, "expected")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(near, "got")), 2);
	json_decref(near);
	near = model_http_near_miss(m, NULL, "POST", "https://api.example.com/v1/orders", "x", 1);
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")), "the body is not JSON");
	json_decref(near);
	near =
	    model_http_near_miss(m, NULL, "POST", "https://api.example.com/v1/echo", "hello\n", 6);
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")),
	                 "trailing white space in the request");
	ck_assert_int_eq(json_integer_value(json_object_get(near, "offset")), 5);
	json_decref(near);
	near = model_http_near_miss(m, NULL, "POST", "https://api.example.com/v1/re", "y", 1);
	assert_json(near, "{\"mock\":3,\"method\":\"POST\",\"url\":"
	                  "\"https://api.example.com/v1/re\",\"differs\":\"body\",\"why\":"
	                  "\"the body does not match the regex\",\"regex\":\"^x\"}");
	json_decref(near);
	/* a mock of another variant is never the nearest */
	near = model_http_near_miss(m, NULL, "GET", "https://other.example/", NULL, 0);
	ck_assert_int_ne(json_integer_value(json_object_get(near, "mock")), 4);
	json_decref(near);
	/* no http mock applies: no near miss */
	json_decref(m);
	m = accepted("[{\"resource\":\"r\",\"response\":\"R\"}]");
	resolve(m, NULL, "GET", "not a url", NULL, NULL, 0, &a);
	ck_assert_str_eq(a.body, "[[mock-miss:GET not a url]]");
	ck_assert(json_is_null(json_object_get(a.trace, "near_miss")));
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

/* ---- chat mocks ---------------------------------------------------------------- */

#define CHAT "https://api.openai.com/v1/chat/completions"

static json_t *chat_mocks(void)
{
	return accepted(
	    "[{\"llm\":{\"last_user_message\":\"What is the weather?\"},\"response\":"
	    "{\"content\":\"exact\"}},"
	    "{\"llm\":{\"last_user_message\":\"weather\",\"match\":\"contains\"},\"response\":"
	    "{\"content\":\"contains\"}},"
	    "{\"llm\":{\"last_user_message\":\"^order [0-9]+$\",\"match\":\"regex\","
	    "\"model\":\"gpt-r\"},"
	    "\"response\":{\"content\":\"regex\"}},"
	    "{\"llm\":{\"messages\":[{\"role\":\"system\"},{\"role\":\"user\",\"content\":"
	    "\"two parts\"}],\"model\":\"gpt-s\"},\"response\":{\"content\":\"subset\"}},"
	    "{\"llm\":{\"model\":\"gpt-special\"},\"response\":{\"content\":\"model\"}},"
	    "{\"llm\":{},\"response\":{\"content\":\"fallback\"},\"variant\":\"v\"},"
	    "{\"http\":{\"method\":\"POST\",\"url\":\"http://local/v1/chat/completions\"},"
	    "\"response\":{\"body\":\"http\"}}]");
}

/* The answer's message content for a chat request body (JSON text). */
static void chat(json_t *mocks, const char *variant, const char *url, const char *body,
                 struct model_gateway_answer *a)
{
	resolve(mocks, variant, "POST", url, body, NULL, 1, a);
}

static const char *answered(struct model_gateway_answer *a)
{
	static char content[256];
	json_t *j;

	if (!a->llm)
		return a->hit ? "(http)" : "(miss)";
	j = S(a->body);
	snprintf(content, sizeof(content), "%s",
	         json_string_value(json_object_get(
	             json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message"),
	             "content")));
	json_decref(j);
	return content;
}

START_TEST(test_llm_match)
{
	static const struct {
		const char *variant, *url, *body, *want;
	} cases[] = {
	    {NULL, CHAT,
	     "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"What is the "
	     "weather?\"}]}",
	     "exact"},
	    /* the last user message, not the last message */
	    {NULL, CHAT,
	     "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the weather?\"},"
	     "{\"role\":\"assistant\",\"content\":\"x\"}]}",
	     "exact"},
	    {NULL, "https://any.host/openai/deployments/d/chat/completions?api-version=1",
	     "{\"messages\":[{\"role\":\"user\",\"content\":\"the weather, please\"}]}",
	     "contains"},
	    {NULL, CHAT,
	     "{\"model\":\"gpt-r\",\"messages\":[{\"role\":\"user\",\"content\":\"order 42\"}]}",
	     "regex"},
	    {NULL, CHAT,
	     "{\"model\":\"gpt-r\",\"messages\":[{\"role\":\"user\",\"content\":\"order 42!\"}]}",
	     "(miss)"},
	    /* content parts: text parts joined with LF, other parts left out */
	    {NULL, CHAT,
	     "{\"model\":\"gpt-r\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
	     "\"text\",\"text\":\"order\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}},{"
	     "\"type\":"
	     "\"text\",\"text\":\"7\"}]}]}",
	     "(miss)"},
	    {NULL, CHAT,
	     "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
	     "\"What is the\"},{\"type\":\"text\",\"text\":\"weather?\"}]}]}",
	     "contains"},
	    {NULL, CHAT,
	     "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
	     "\"What is the weather?\"}]}]}",
	     "exact"},
	    /* messages subset: same length, each a superset, content parts as text */
	    {NULL, CHAT,
	     "{\"model\":\"gpt-s\",\"messages\":[{\"role\":\"system\",\"content\":\"be "
	     "brief\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"two "
	     "parts\"}],\"name\":\"u\"}]}",
	     "subset"},
	    {NULL, CHAT,
	     "{\"model\":\"gpt-s\",\"messages\":[{\"role\":\"system\",\"content\":\"be "
	     "brief\"},{\"role\":\"user\",\"content\":\"two parts\"},{\"role\":\"user\","
	     "\"content\":\"more\"}]}",
	     "(miss)"},
	    /* model */
	    {NULL, CHAT, "{\"model\":\"gpt-special\",\"messages\":[]}", "model"},
	    /* a condition beats naming the model */
	    {NULL, CHAT,
	     "{\"model\":\"gpt-special\",\"messages\":[{\"role\":\"user\",\"content\":\"What "
	     "is the weather?\"}]}",
	     "exact"},
	    {NULL, CHAT, "{\"model\":\"gpt-other\",\"messages\":[]}", "(miss)"},
	    {"v", CHAT, "{\"model\":\"gpt-other\",\"messages\":[]}", "fallback"},
	    /* a variant's mock over variant-less ones even with a weaker condition */
	    {"v", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the weather?\"}]}",
	     "fallback"},
	    /* not a chat request: the http mocks */
	    {NULL, "http://local/v1/chat/completions", "{\"messages\":[]}", "(http)"},
	    {NULL, "http://local/v1/chat/completions", "not json", "(http)"},
	    {NULL, "http://local/v1/chat/completions", "{\"prompt\":\"x\"}", "(http)"},
	    {"v", "http://local/v1/chat/completions", "{\"prompt\":\"x\"}", "(http)"},
	};
	json_t *m = chat_mocks();
	struct model_gateway_answer a;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		chat(m, cases[i].variant, cases[i].url, cases[i].body, &a);
		ck_assert_msg(strcmp(answered(&a), cases[i].want) == 0, "case %zu: %s, want %s", i,
		              answered(&a), cases[i].want);
		model_gateway_answer_clear(&a);
	}
	/* only POST is a chat request */
	resolve(m, "v", "GET", CHAT, "{\"messages\":[]}", NULL, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

START_TEST(test_llm_messages_exact)
{
	json_t *m = accepted("[{\"llm\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
	                     "\"match\":\"exact\"},\"response\":{\"content\":\"exact\"}}]");
	struct model_gateway_answer a;

	chat(m, NULL, CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &a);
	ck_assert_str_eq(answered(&a), "exact");
	model_gateway_answer_clear(&a);
	/* content parts are their text here too */
	chat(m, NULL, CHAT,
	     "{\"messages\":[{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"role\":"
	     "\"user\"}]}",
	     &a);
	ck_assert_str_eq(answered(&a), "exact");
	model_gateway_answer_clear(&a);
	/* exact: an extra key is a difference */
	chat(m, NULL, CHAT,
	     "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"name\":\"u\"}]}", &a);
	ck_assert_str_eq(answered(&a), "(miss)");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(a.trace, "near_miss"), "why")),
	    "extra key");
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

START_TEST(test_last_user_message)
{
	json_t *r = S("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\","
	              "\"content\":[{\"type\":\"text\",\"text\":\"b\"},{\"type\":\"text\",\"text\":"
	              "\"c\"}]},{\"role\":\"tool\",\"content\":\"d\"}]}");
	size_t n;
	char *s = model_llm_last_user_message(r, &n);

	ck_assert_str_eq(s, "b\nc");
	ck_assert_uint_eq(n, 3);
	free(s);
	json_decref(r);
	r = S("{\"messages\":[{\"role\":\"system\",\"content\":\"a\"}]}");
	ck_assert_ptr_null(model_llm_last_user_message(r, &n));
	json_decref(r);
	r = S("{\"messages\":[{\"role\":\"user\",\"content\":null}]}");
	ck_assert_ptr_null(model_llm_last_user_message(r, &n));
	json_decref(r);
}
END_TEST

START_TEST(test_llm_near_miss)
{
	json_t *m = chat_mocks(), *near, *r;
	struct model_gateway_answer a;

	/* the exact mock is nearest: a text difference */
	chat(m, NULL, CHAT,
	     "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the wether?\"}]}", &a);
	ck_assert_int_eq(a.hit, 0);
	ck_assert_int_eq(a.status, 404);
	ck_assert_str_eq(a.body, "[[mock-miss:POST " CHAT "]]");
	near = json_object_get(a.trace, "near_miss");
	assert_json(near, "{\"mock\":0,\"llm\":true,\"differs\":\"last_user_message\","
	                  "\"offset\":14,\"request_has\":\"'t' (U+0074)\",\"mock_has\":"
	                  "\"'a' (U+0061)\",\"why\":\"different character\"}");
	model_gateway_answer_clear(&a);
	/* a model that differs */
	r = S("{\"model\":\"gpt-x\",\"messages\":[]}");
	json_decref(m);
	m = accepted("[{\"llm\":{\"model\":\"gpt-special\"},\"response\":{\"content\":\"a\"}}]");
	near = model_llm_near_miss(m, NULL, r);
	assert_json(near, "{\"mock\":0,\"llm\":true,\"differs\":\"model\",\"why\":"
	                  "\"model differs\",\"request_has\":\"gpt-x\",\"mock_has\":"
	                  "\"gpt-special\"}");
	json_decref(near);
	json_decref(r);
	json_decref(m);
	/* messages: the count, then the first item that differs */
	m = accepted("[{\"llm\":{\"messages\":[{\"role\":\"system\"},{\"role\":\"user\","
	             "\"content\":\"hi\"}]},\"response\":{\"content\":\"a\"}}]");
	r = S("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
	near = model_llm_near_miss(m, NULL, r);
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")),
	                 "the request has 1 messages, the mock 2");
	json_decref(near);
	json_decref(r);
	r = S("{\"messages\":[{\"role\":\"system\"},{\"role\":\"user\",\"content\":\"ho\"}]}");
	near = model_llm_near_miss(m, NULL, r);
	ck_assert_str_eq(json_string_value(json_object_get(near, "path")), "$[1].content");
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")), "different value");
	json_decref(near);
	/* no llm mock for the run's variant: none */
	json_decref(m);
	m = accepted("[{\"llm\":{},\"response\":{\"content\":\"a\"},\"variant\":\"x\"}]");
	ck_assert_ptr_null(model_llm_near_miss(m, NULL, r));
	ck_assert_ptr_null(model_llm_near_miss(m, "y", r));
	near = model_llm_near_miss(m, "x", r);
	ck_assert_int_eq(json_integer_value(json_object_get(near, "mock")), 0);
	json_decref(near);
	json_decref(r);
	json_decref(m);
	m = accepted("[{\"llm\":{\"last_user_message\":\"x\",\"match\":\"contains\"},\"response\":"
	             "{\"content\":\"a\"}},{\"llm\":{\"last_user_message\":\"^y\",\"match\":"
	             "\"regex\"},\"response\":{\"content\":\"a\"},\"variant\":\"r\"}]");
	r = S("{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}");
	near = model_llm_near_miss(m, NULL, r);
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")),
	                 "the last user message does not contain the mock's text");
	json_decref(near);
	json_decref(r);
	r = S("{\"messages\":[{\"role\":\"assistant\",\"content\":\"q\"}]}");
	near = model_llm_near_miss(m, "r", r);
	ck_assert_str_eq(json_string_value(json_object_get(near, "why")),
	                 "the request has no user message");
	json_decref(near);
	json_decref(r);
	json_decref(m);
}
END_TEST

/* ---- chat answers -------------------------------------------------------------- */

static json_t *tool_loop_mocks(void)
{
	return accepted("[{\"llm\":{},\"sequence\":["
	                "{\"tool_calls\":[{\"name\":\"search\",\"arguments\":{\"q\":\"olives\","
	                "\"n\":2}},{\"name\":\"now\"}]},"
	                "{\"content\":\"Olives are fruit.\"}]}]");
}

START_TEST(test_chat_answer)
{
	json_t *m = tool_loop_mocks(), *j, *choice, *msg, *tc, *args, *usage;
	struct model_gateway_answer a;
	size_t calls[1] = {0};
	const char *req = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\","
	                  "\"content\":\"tell me about olives\"}],\"tools\":[]}";

	resolve(m, NULL, "POST", CHAT, req, calls, 7, &a);
	ck_assert_int_eq(a.hit, 1);
	ck_assert_int_eq(a.llm, 1);
	ck_assert_int_eq(a.stream, 0);
	ck_assert_int_eq(a.status, 200);
	assert_json(a.headers, "[[\"Content-Type\",\"application/json\"]]");
	assert_json(a.trace, "{\"http\":{\"method\":\"POST\",\"url\":\"" CHAT "\"},\"status\":200,"
	                     "\"hit\":true,\"mock\":0,\"llm\":true}");
	ck_assert_uint_eq(a.body_len, strlen(a.body));
	j = S(a.body);
	ck_assert_uint_eq(json_object_size(j), 6);
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "chatcmpl-olivares-7");
	ck_assert_str_eq(json_string_value(json_object_get(j, "object")), "chat.completion");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "created")), MODEL_LLM_CREATED);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "gpt-4o-mini");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "choices")), 1);
	choice = json_array_get(json_object_get(j, "choices"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(choice, "index")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(choice, "finish_reason")), "tool_calls");
	ck_assert(json_is_null(json_object_get(choice, "logprobs")));
	msg = json_object_get(choice, "message");
	ck_assert_str_eq(json_string_value(json_object_get(msg, "role")), "assistant");
	ck_assert(json_is_null(json_object_get(msg, "content")));
	ck_assert_uint_eq(json_array_size(json_object_get(msg, "tool_calls")), 2);
	tc = json_array_get(json_object_get(msg, "tool_calls"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(tc, "id")), "call_olivares_7_0");
	ck_assert_str_eq(json_string_value(json_object_get(tc, "type")), "function");
	ck_assert_ptr_null(json_object_get(tc, "index"));
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(tc, "function"), "name")), "search");
	/* arguments are JSON text, as the API sends them */
	ck_assert(json_is_string(json_object_get(json_object_get(tc, "function"), "arguments")));
	args = S(json_string_value(json_object_get(json_object_get(tc, "function"), "arguments")));
	assert_json(args, "{\"q\":\"olives\",\"n\":2}");
	json_decref(args);
	tc = json_array_get(json_object_get(msg, "tool_calls"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(tc, "id")), "call_olivares_7_1");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(tc, "function"), "arguments")), "{}");
	/* usage: a quarter of the bytes, rounded up (20 bytes of prompt; 6 +
	 * 18 + 3 + 2 of calls) */
	usage = json_object_get(j, "usage");
	assert_json(usage, "{\"prompt_tokens\":5,\"completion_tokens\":8,\"total_tokens\":13}");
	json_decref(j);
	ck_assert_uint_eq(calls[0], 1);
	model_gateway_answer_clear(&a);

	/* the sequence's next answer: content, finish stop; no model in the
	 * request: the default */
	resolve(m, NULL, "POST", CHAT,
	        "{\"messages\":[{\"role\":\"user\",\"content\":\"tell me about olives\"},"
	        "{\"role\":\"assistant\",\"tool_calls\":[]},{\"role\":\"tool\",\"content\":"
	        "\"r\"}]}",
	        calls, 8, &a);
	j = S(a.body);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "olivares-mock");
	choice = json_array_get(json_object_get(j, "choices"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(choice, "finish_reason")), "stop");
	msg = json_object_get(choice, "message");
	assert_json(msg, "{\"role\":\"assistant\",\"content\":\"Olives are fruit.\"}");
	json_decref(j);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

/* The events of an SSE body: the data of each, in order (a new array of
 * parsed JSON, "[DONE]" kept as a string). */
static json_t *sse_events(const char *body)
{
	json_t *out = json_array();
	const char *p = body, *end;
	char *data;

	while (*p) {
		end = strstr(p, "\n\n");
		ck_assert_msg(end != NULL, "an event without its blank line: %s", p);
		ck_assert_msg(strncmp(p, "data: ", 6) == 0, "not a data line: %s", p);
		data = strndup(p + 6, (size_t)(end - p - 6));
		ck_assert_ptr_null(strchr(data, '\n'));
		if (strcmp(data, "[DONE]") == 0)
			json_array_append_new(out, json_string(data));
		else
			json_array_append_new(out, S(data));
		free(data);
		p = end + 2;
	}
	return out;
}

static void assert_chunk(json_t *c, const char *id, const char *model)
{
	ck_assert_str_eq(json_string_value(json_object_get(c, "id")), id);
	ck_assert_str_eq(json_string_value(json_object_get(c, "object")), "chat.completion.chunk");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "created")), MODEL_LLM_CREATED);
	ck_assert_str_eq(json_string_value(json_object_get(c, "model")), model);
}

START_TEST(test_chat_stream)
{
	json_t *m = tool_loop_mocks(), *ev, *c, *d, *tc, *args;
	struct model_gateway_answer a;
	size_t calls[1] = {0}, i;
	const char *req = "{\"model\":\"m1\",\"stream\":true,\"messages\":[{\"role\":\"user\","
	                  "\"content\":\"hi\"}]}";

	resolve(m, NULL, "POST", CHAT, req, calls, 3, &a);
	ck_assert_int_eq(a.stream, 1);
	ck_assert_str_eq(header(&a, "Content-Type"), "text/event-stream");
	ck_assert_uint_eq(a.body_len, strlen(a.body));
	ev = sse_events(a.body);
	/* role, two tool calls, finish, [DONE] */
	ck_assert_uint_eq(json_array_size(ev), 5);
	for (i = 0; i < 4; i++) {
		c = json_array_get(ev, i);
		assert_chunk(c, "chatcmpl-olivares-3", "m1");
		ck_assert_uint_eq(json_array_size(json_object_get(c, "choices")), 1);
		ck_assert_int_eq(json_integer_value(json_object_get(
		                     json_array_get(json_object_get(c, "choices"), 0), "index")),
		                 0);
	}
	d = json_object_get(json_array_get(json_object_get(json_array_get(ev, 0), "choices"), 0),
	                    "delta");
	assert_json(d, "{\"role\":\"assistant\"}");
	for (i = 0; i < 2; i++) {
		c = json_array_get(json_object_get(json_array_get(ev, 1 + i), "choices"), 0);
		ck_assert(json_is_null(json_object_get(c, "finish_reason")));
		tc = json_object_get(json_object_get(c, "delta"), "tool_calls");
		ck_assert_uint_eq(json_array_size(tc), 1);
		tc = json_array_get(tc, 0);
		ck_assert_int_eq(json_integer_value(json_object_get(tc, "index")), (json_int_t)i);
		ck_assert_str_eq(json_string_value(json_object_get(tc, "type")), "function");
		ck_assert_str_eq(json_string_value(json_object_get(tc, "id")),
		                 i == 0 ? "call_olivares_3_0" : "call_olivares_3_1");
		ck_assert_str_eq(
		    json_string_value(json_object_get(json_object_get(tc, "function"), "name")),
		    i == 0 ? "search" : "now");
		args = S(json_string_value(
		    json_object_get(json_object_get(tc, "function"), "arguments")));
		assert_json(args, i == 0 ? "{\"q\":\"olives\",\"n\":2}" : "{}");
		json_decref(args);
	}
	c = json_array_get(json_object_get(json_array_get(ev, 3), "choices"), 0);
	assert_json(json_object_get(c, "delta"), "{}");
	ck_assert_str_eq(json_string_value(json_object_get(c, "finish_reason")), "tool_calls");
	ck_assert_str_eq(json_string_value(json_array_get(ev, 4)), "[DONE]");
	json_decref(ev);
	model_gateway_answer_clear(&a);

	/* content, with usage asked for: a last chunk without choices */
	resolve(m, NULL, "POST", CHAT,
	        "{\"model\":\"m1\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
	        "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
	        calls, 4, &a);
	ev = sse_events(a.body);
	ck_assert_uint_eq(json_array_size(ev), 5);
	d = json_object_get(json_array_get(json_object_get(json_array_get(ev, 1), "choices"), 0),
	                    "delta");
	assert_json(d, "{\"content\":\"Olives are fruit.\"}");
	c = json_array_get(json_object_get(json_array_get(ev, 2), "choices"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "finish_reason")), "stop");
	c = json_array_get(ev, 3);
	assert_chunk(c, "chatcmpl-olivares-4", "m1");
	ck_assert_uint_eq(json_array_size(json_object_get(c, "choices")), 0);
	assert_json(json_object_get(c, "usage"),
	            "{\"prompt_tokens\":1,\"completion_tokens\":5,\"total_tokens\":6}");
	ck_assert_str_eq(json_string_value(json_array_get(ev, 4)), "[DONE]");
	json_decref(ev);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

/* The loop of docs/http-mocks.md: a tool call, the tool's HTTP answer (or
 * a variant's 503), the content, then the content again; streamed, the
 * bytes the page shows. */
START_TEST(test_example_loop)
{
	json_t *m = accepted(
	    "[{\"llm\":{\"model\":\"gpt-4o-mini\"},\"sequence\":["
	    "{\"tool_calls\":[{\"name\":\"search\",\"arguments\":{\"q\":\"olives\"}}]},"
	    "{\"content\":\"Olives are the fruit of Olea europaea.\"}]},"
	    "{\"http\":{\"method\":\"GET\",\"url\":\"https://search.example/api?q=olives\"},"
	    "\"response\":{\"json\":{\"hits\":[\"Olea europaea is a tree of the "
	    "Mediterranean.\"]}}},"
	    "{\"http\":{\"method\":\"GET\",\"url\":\"https://search.example/api?q=olives\"},"
	    "\"response\":{\"status\":503,\"body\":\"busy\"},\"variant\":\"flaky-search\"}]");
	const char *req = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\","
	                  "\"content\":\"Tell me about olives\"}]}";
	struct model_gateway_answer a;
	size_t calls[3] = {0};
	json_t *j, *msg;

	resolve(m, NULL, "POST", CHAT, req, calls, 1, &a);
	j = S(a.body);
	msg = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_array_get(json_object_get(msg, "tool_calls"), 0), "function"),
	        "arguments")),
	    "{\"q\":\"olives\"}");
	assert_json(json_object_get(j, "usage"),
	            "{\"prompt_tokens\":5,\"completion_tokens\":5,\"total_tokens\":10}");
	json_decref(j);
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "GET", "https://search.example/api?q=olives", NULL, calls, 0, &a);
	ck_assert_str_eq(a.body, "{\"hits\":[\"Olea europaea is a tree of the Mediterranean.\"]}");
	model_gateway_answer_clear(&a);
	resolve(m, "flaky-search", "GET", "https://search.example/api?q=olives", NULL, calls, 0,
	        &a);
	ck_assert_int_eq(a.status, 503);
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "POST", CHAT, req, calls, 2, &a);
	ck_assert_str_eq(answered(&a), "Olives are the fruit of Olea europaea.");
	model_gateway_answer_clear(&a);
	resolve(m, NULL, "POST", CHAT,
	        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[]}", calls, 2, &a);
	ck_assert_str_eq(
	    a.body,
	    "data: {\"id\":\"chatcmpl-olivares-2\",\"object\":\"chat.completion.chunk\","
	    "\"created\":1704067200,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"role\":\"assistant\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
	    "data: {\"id\":\"chatcmpl-olivares-2\",\"object\":\"chat.completion.chunk\","
	    "\"created\":1704067200,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"content\":\"Olives are the fruit of Olea europaea.\"},\"logprobs\":"
	    "null,\"finish_reason\":null}]}\n\n"
	    "data: {\"id\":\"chatcmpl-olivares-2\",\"object\":\"chat.completion.chunk\","
	    "\"created\":1704067200,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,"
	    "\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n"
	    "data: [DONE]\n\n");
	ck_assert_uint_eq(calls[0], 3);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

/* ---- the trace ----------------------------------------------------------------- */

START_TEST(test_trace_refused)
{
	json_t *e = model_trace_http_refused("CONNECT", "evil.example:25", "port not served");
	char *big = unit_rep('a', 9000);

	assert_json(e, "{\"http\":{\"method\":\"CONNECT\",\"url\":\"evil.example:25\"},\"hit\":"
	               "false,\"mock\":null,\"refused\":\"port not served\"}");
	json_decref(e);
	e = model_trace_http_refused(NULL, big, "too long");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "http"), "method")),
	                 "");
	ck_assert_uint_eq(json_string_length(json_object_get(json_object_get(e, "http"), "url")),
	                  8192);
	ck_assert(json_is_true(json_object_get(e, "truncated")));
	json_decref(e);
	free(big);
}
END_TEST

/* What a gateway may be sent: an overlong url, bytes that are not UTF-8.
 * The trace entry stays JSON text inside its bounds and passes the check. */
START_TEST(test_trace_bounds)
{
	json_t *m = accepted("[{\"http\":{\"method\":\"GET\",\"url\":\"http://h/\"},"
	                     "\"response\":{}}]"),
	       *t;
	struct model_gateway_answer a;
	struct model_reason why;
	char *url = malloc(9100);
	size_t misses;

	memcpy(url, "http://h/", 9);
	memset(url + 9, 'a', 9000);
	/* a 2-byte character across the cut */
	memcpy(url + 8191, "\xc3\xa9", 2);
	url[9009] = '\0';
	resolve(m, NULL, "GET", url, NULL, NULL, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	ck_assert_uint_eq(a.body_len, strlen("[[mock-miss:GET ]]") + 9009);
	t = json_object_get(json_object_get(a.trace, "http"), "url");
	ck_assert_uint_eq(json_string_length(t), 8191);
	ck_assert(json_is_true(json_object_get(a.trace, "truncated")));
	json_object_set_new(a.trace, "duration_us", json_integer(1));
	t = json_pack("[O]", a.trace);
	ck_assert_int_eq(model_trace_check(t, 1, &misses, &why), 0);
	json_decref(t);
	model_gateway_answer_clear(&a);
	free(url);

	resolve(m, NULL, "GET", "http://h/\xff", NULL, NULL, 0, &a);
	ck_assert_int_eq(a.hit, 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(a.trace, "http"), "url")),
	    "(not UTF-8)");
	ck_assert_str_eq(a.body, "[[mock-miss:GET http://h/\xff]]");
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

static void trace_ok(const char *text, size_t want_misses)
{
	json_t *t = S(text);
	struct model_reason why;
	size_t misses = 99;

	memset(&why, 0, sizeof(why));
	ck_assert_msg(model_trace_check(t, 3, &misses, &why) == 0, "refused %s: %s", text,
	              why.text);
	ck_assert_uint_eq(misses, want_misses);
	json_decref(t);
}

static void trace_bad(const char *text, const char *words)
{
	json_t *t = S(text);
	struct model_reason why;
	size_t misses;

	memset(&why, 0, sizeof(why));
	ck_assert_msg(model_trace_check(t, 3, &misses, &why) == -1, "accepted %s", text);
	ck_assert_msg(strstr(why.text, words) != NULL, "'%s' lacks '%s'", why.text, words);
	json_decref(t);
}

#define HE "\"http\":{\"method\":\"GET\",\"url\":\"http://h/\"}"

START_TEST(test_trace_check)
{
	json_t *m = chat_mocks(), *t;
	struct model_gateway_answer a;
	struct model_reason why;
	size_t misses;

	trace_ok("[{" HE ",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5},"
	         "{" HE ",\"status\":200,\"hit\":true,\"mock\":2,\"duration_us\":5,\"llm\":true},"
	         "{" HE ",\"status\":404,\"hit\":false,\"mock\":null,\"duration_us\":0,"
	         "\"near_miss\":{\"mock\":0}},"
	         "{" HE ",\"status\":404,\"hit\":false,\"mock\":null,\"duration_us\":0,"
	         "\"near_miss\":null,\"truncated\":true},"
	         "{" HE ",\"hit\":false,\"mock\":null,\"duration_us\":0,\"refused\":\"x\"},"
	         "{" HE ",\"status\":400,\"hit\":false,\"mock\":null,\"duration_us\":0,"
	         "\"refused\":\"x\"},"
	         "{" HE ",\"status\":200,\"hit\":false,\"mock\":null,\"duration_us\":9,"
	         "\"egress\":{\"host\":\"h\"}},"
	         "{\"resource\":\"r\",\"hit\":true,\"mock\":0,\"duration_us\":1}]",
	         4);
	trace_bad("[{" HE ",\"hit\":true,\"mock\":1,\"duration_us\":5}]", "status");
	trace_bad("[{" HE ",\"status\":99,\"hit\":true,\"mock\":1,\"duration_us\":5}]", "status");
	trace_bad("[{\"http\":{\"method\":\"GET\"},\"status\":200,\"hit\":true,\"mock\":1,"
	          "\"duration_us\":5}]",
	          "http must be");
	trace_bad("[{\"http\":{\"method\":\"GET\",\"url\":\"u\",\"x\":1},\"status\":200,\"hit\":"
	          "true,\"mock\":1,\"duration_us\":5}]",
	          "http must be");
	trace_bad("[{\"http\":\"GET u\",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5}]",
	          "http must be");
	trace_bad("[{" HE ",\"resource\":\"r\",\"status\":200,\"hit\":true,\"mock\":1,"
	          "\"duration_us\":5}]",
	          "http and a resource");
	trace_bad("[{" HE ",\"status\":200,\"hit\":false,\"mock\":null,\"duration_us\":5,"
	          "\"llm\":true}]",
	          "llm must be true, on a hit");
	trace_bad("[{" HE ",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5,"
	          "\"refused\":\"x\"}]",
	          "refused must be");
	trace_bad("[{" HE ",\"hit\":false,\"mock\":null,\"duration_us\":5,\"refused\":1}]",
	          "refused must be");
	/* refused after the mocks were tried (egress not allowed): with the
	 * near miss, one miss */
	trace_ok("[{" HE ",\"status\":404,\"hit\":false,\"mock\":null,\"duration_us\":5,"
	         "\"refused\":\"egress\",\"near_miss\":{\"mock\":0}}]",
	         1);
	/* a recorded answer: on a hit or an egress only, and of its shape */
	trace_ok("[{" HE ",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5,"
	         "\"record\":{\"http\":{},\"response\":{}}}]",
	         0);
	trace_bad("[{" HE ",\"status\":404,\"hit\":false,\"mock\":null,\"duration_us\":5,"
	          "\"record\":{\"http\":{},\"response\":{}}}]",
	          "record must be");
	trace_bad("[{" HE ",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5,"
	          "\"record\":{\"http\":{}}}]",
	          "record must be");
	trace_bad("[{\"resource\":\"r\",\"hit\":true,\"mock\":1,\"duration_us\":5,"
	          "\"record\":{\"unrecordable\":\"x\"}}]",
	          "member of an http entry");
	trace_bad("[{" HE ",\"status\":200,\"hit\":false,\"mock\":null,\"duration_us\":5,"
	          "\"egress\":true}]",
	          "egress must be");
	trace_bad("[{" HE ",\"status\":200,\"hit\":true,\"mock\":3,\"duration_us\":5}]",
	          "mock's index");
	trace_bad("[{" HE ",\"status\":200,\"hit\":true,\"mock\":1}]", "duration_us");
	trace_bad("[{\"resource\":\"r\",\"status\":200,\"hit\":true,\"mock\":1,\"duration_us\":5}]",
	          "without http");
	trace_bad("[{\"hit\":true,\"mock\":1,\"duration_us\":5}]",
	          "one of resource, tool and http");

	/* what model_gateway_resolve records passes once the gateway adds the time */
	chat(m, NULL, CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"What is it?\"}]}", &a);
	ck_assert_int_eq(a.hit, 0);
	json_object_set_new(a.trace, "duration_us", json_integer(12));
	t = json_pack("[O]", a.trace);
	ck_assert_int_eq(model_trace_check(t, json_array_size(m), &misses, &why), 0);
	ck_assert_uint_eq(misses, 1);
	json_decref(t);
	model_gateway_answer_clear(&a);
	json_decref(m);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const check[] = {
	    test_normalized, test_url_normalize, test_field_errors, test_limits,
	    test_bad_regex,  test_ambiguity,     test_spec_check,   NULL};
	const TTest *const http[] = {test_http_match, test_sequence, test_miss, NULL};
	const TTest *const llm[] = {
	    test_llm_match,   test_llm_messages_exact, test_last_user_message, test_llm_near_miss,
	    test_chat_answer, test_chat_stream,        test_example_loop,      NULL};
	const TTest *const trace[] = {test_trace_refused, test_trace_bounds, test_trace_check,
	                              NULL};
	Suite *s = suite_create("http_mock");

	unit_tcase(s, "check", check);
	unit_tcase(s, "http", http);
	unit_tcase(s, "llm", llm);
	unit_tcase(s, "trace", trace);
	return s;
}
