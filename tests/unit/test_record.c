/*
 * Unit tests of model/record.c and of the http_exchange events of
 * model/history.c (Check): what a gateway keeps of an answer, the session
 * a run's outputs make (and each thing that makes none), and the replay's
 * mocks rebuilt from it.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "model/error.h"
#include "model/history.h"
#include "model/limits.h"
#include "model/record.h"
#include "tests/unit/unit.h"

static char *compact(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void assert_json(json_t *v, const char *want)
{
	json_t *w = unit_json(want);
	char *got = compact(v), *exp = compact(w);

	ck_assert_str_eq(got, exp);
	free(got);
	free(exp);
	json_decref(w);
}

static void assert_unrecordable(json_t *rec, const char *why)
{
	ck_assert_ptr_nonnull(rec);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "unrecordable")) ?: "(a mock)",
	                 why);
	json_decref(rec);
}

/* ---- model_record_http -------------------------------------------------- */

START_TEST(test_http_answer)
{
	json_t *h = unit_json("[[\"Content-Type\",\"application/json\"],[\"Content-Length\",\"7\"],"
	                      "[\"Set-Cookie\",\"s=1\"],[\"Vary\",\"a\"],[\"vary\",\"b\"],"
	                      "[\"Connection\",\"close\"]]");
	json_t *rec = model_record_http("POST", "https://api.example.com/v1/x", "{\"q\":1}", 7, 201,
	                                h, "{\"a\":2}", 7);

	/* framing, hop-by-hop and credential headers left out; a repeated
	 * one joined under its first spelling */
	assert_json(rec, "{\"http\":{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/x\","
	                 "\"body\":\"{\\\"q\\\":1}\"},\"response\":{\"status\":201,\"headers\":"
	                 "{\"Content-Type\":\"application/json\",\"Vary\":\"a, b\"},"
	                 "\"body\":\"{\\\"a\\\":2}\"}}");
	json_decref(rec);
	json_decref(h);
	/* no request body is the exact empty body; no header is none */
	rec = model_record_http("GET", "http://t.example/a", NULL, 0, 200, NULL, "x", 1);
	assert_json(rec,
	            "{\"http\":{\"method\":\"GET\",\"url\":\"http://t.example/a\",\"body\":\"\"},"
	            "\"response\":{\"status\":200,\"body\":\"x\"}}");
	json_decref(rec);
	/* 204: no body member */
	rec = model_record_http("DELETE", "http://t.example/a", NULL, 0, 204, NULL, "", 0);
	assert_json(rec, "{\"http\":{\"method\":\"DELETE\",\"url\":\"http://t.example/a\","
	                 "\"body\":\"\"},\"response\":{\"status\":204}}");
	json_decref(rec);
}
END_TEST

START_TEST(test_http_unrecordable)
{
	char *big = unit_rep('a', MODEL_MAX_RESPONSE_BYTES + 1);

	assert_unrecordable(
	    model_record_http("GET", "http://t.example/", NULL, 0, 200, NULL, big, strlen(big)),
	    "the response body is 65537 bytes, over the 65536 a recording holds");
	assert_unrecordable(
	    model_record_http("POST", "http://t.example/", big, strlen(big), 200, NULL, "", 0),
	    "the request body is 65537 bytes, over the 65536 a recording holds");
	assert_unrecordable(
	    model_record_http("GET", "http://t.example/", NULL, 0, 200, NULL, "\xff\xfe", 2),
	    "the response body is not UTF-8 text");
	assert_unrecordable(
	    model_record_http("GET", "http://t.example/", NULL, 0, 200, NULL, "a\0b", 3),
	    "the response body is not UTF-8 text");
	assert_unrecordable(
	    model_record_http("GET", "http://t.example/", NULL, 0, 101, NULL, "", 0),
	    "the status 101 cannot be recorded (200 to 599)");
	/* what a scenario's mock would refuse is not recorded either: a
	 * credential in an answer is never stored in a session */
	assert_unrecordable(model_record_http("GET", "http://t.example/", NULL, 0, 200, NULL,
	                                      "AKIAIOSFODNN7EXAMPLE", 20),
	                    "mock.response.body looks like a credential (AWS access key id)");
	free(big);
}
END_TEST

/* ---- model_record_session ----------------------------------------------- */

static const char *const MOCKS = "[{\"resource\":\"profile:ada\",\"response\":\"Ada\"},"
                                 "{\"http\":{\"method\":\"GET\",\"url\":\"http://t.example/s\"},"
                                 "\"response\":{\"body\":\"found\"}}]";

/* An http entry that hit with its record, as the gateway writes it. */
static json_t *http_entry(const char *method, const char *url, const char *req, const char *body)
{
	json_t *e = json_pack("{s:{s:s, s:s}, s:i, s:b, s:i, s:i}", "http", "method", method, "url",
	                      url, "status", 200, "hit", 1, "mock", 1, "duration_us", 5);

	json_object_set_new(
	    e, "record",
	    model_record_http(method, url, req, strlen(req), 200, NULL, body, strlen(body)));
	return e;
}

static json_t *output(const char *key, const char *input, const char *out, json_t *trace)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o}", "key", key, "input", input, "output", out,
	                 "status", "ok", "trace", trace);
}

START_TEST(test_session_events)
{
	struct model_reason why;
	json_t *mocks = unit_json(MOCKS), *outs = json_array(), *session = NULL, *t;

	t = json_array();
	json_array_append_new(t, unit_json("{\"resource\":\"profile:ada\",\"hit\":true,\"mock\":0,"
	                                   "\"duration_us\":3}"));
	json_array_append_new(t, http_entry("GET", "http://t.example/s", "", "found"));
	json_array_append_new(t, unit_json("{\"resource\":\"nope\",\"hit\":false,\"mock\":null,"
	                                   "\"duration_us\":3}"));
	/* a miss has no record: replayed, it misses again */
	json_array_append_new(t, unit_json("{\"http\":{\"method\":\"GET\",\"url\":\"http://x/\"},"
	                                   "\"status\":404,\"hit\":false,\"mock\":null,"
	                                   "\"duration_us\":3}"));
	json_array_append_new(outs, output("one", "ada", "Ada found", t));
	json_array_append_new(outs, output("", "two", "done", json_array()));
	ck_assert_int_eq(model_record_session(mocks, outs, 2, "olivares-run-x", &session, &why), 0);
	ck_assert_str_eq(why.text, "");
	assert_json(
	    session,
	    "{\"external_id\":\"olivares-run-x\",\"events\":["
	    "{\"seq\":1,\"kind\":\"input\",\"text\":\"ada\",\"key\":\"one\"},"
	    "{\"seq\":2,\"kind\":\"tool_call\",\"resource\":\"profile:ada\"},"
	    "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"profile:ada\",\"text\":\"Ada\"},"
	    "{\"seq\":4,\"kind\":\"http_exchange\",\"http\":{\"method\":\"GET\",\"url\":"
	    "\"http://t.example/"
	    "s\",\"body\":\"\"},\"response\":{\"status\":200,\"body\":\"found\"}},"
	    "{\"seq\":5,\"kind\":\"tool_call\",\"resource\":\"nope\"},"
	    "{\"seq\":6,\"kind\":\"output\",\"text\":\"Ada found\"},"
	    "{\"seq\":7,\"kind\":\"input\",\"text\":\"two\",\"key\":\"\"},"
	    "{\"seq\":8,\"kind\":\"output\",\"text\":\"done\"}]}");
	json_decref(session);
	/* stripped for the store: the answers live in the session only */
	model_record_strip(json_array_get(outs, 0));
	ck_assert_ptr_null(json_object_get(json_array_get(t, 1), "record"));
	ck_assert_ptr_nonnull(json_object_get(json_array_get(t, 1), "http"));
	json_decref(outs);
	json_decref(mocks);
}
END_TEST

static void expect_no_session(json_t *outs, size_t steps, const char *reason)
{
	struct model_reason why;
	json_t *mocks = unit_json(MOCKS), *session = (json_t *)1;

	ck_assert_int_eq(model_record_session(mocks, outs, steps, "r", &session, &why), -1);
	ck_assert_ptr_null(session);
	ck_assert_str_eq(why.text, reason);
	json_decref(mocks);
	json_decref(outs);
}

START_TEST(test_session_refused)
{
	json_t *outs, *t, *e;

	outs = json_array();
	json_array_append_new(outs, output("a", "x", "y", json_array()));
	expect_no_session(outs, 2, "1 of the 2 steps have an output");

	outs = json_array();
	t = json_array();
	json_array_append_new(t, unit_json("{\"tool\":\"search\",\"args\":{},\"hit\":true,"
	                                   "\"mock\":0,\"duration_us\":1}"));
	json_array_append_new(outs, output("a", "x", "y", t));
	expect_no_session(outs, 1, "step 1 called the tool search: tool calls are not recorded");

	outs = json_array();
	t = json_array();
	e = http_entry("GET", "http://t.example/s", "", "found");
	json_object_set_new(e, "record", json_pack("{s:s}", "unrecordable", "too big"));
	json_array_append_new(t, e);
	json_array_append_new(outs, output("a", "x", "y", t));
	expect_no_session(outs, 1, "step 1: GET http://t.example/s cannot be recorded: too big");

	outs = json_array();
	t = json_array();
	json_array_append_new(t, unit_json("{\"resource\":\"r\",\"hit\":false,\"mock\":null,"
	                                   "\"truncated\":true,\"duration_us\":1}"));
	json_array_append_new(outs, output("a", "x", "y", t));
	expect_no_session(outs, 1, "step 1 made a request cut to fit the trace");

	/* what an import refuses, a recording does not make either */
	outs = json_array();
	json_array_append_new(outs, output("a", "x", "key AKIAIOSFODNN7EXAMPLE", json_array()));
	expect_no_session(outs, 1,
	                  "the session would be refused: events[1].text looks like a credential "
	                  "(AWS access key id)");
}
END_TEST

START_TEST(test_session_bounds)
{
	json_t *outs, *t, *e;
	char url[64], body[16];
	int k;

	/* more different answers to one request than a replay's sequence
	 * holds: no session, rather than one its replay finds degraded */
	outs = json_array();
	t = json_array();
	for (k = 0; k < MODEL_MAX_SEQUENCE + 1; k++) {
		snprintf(body, sizeof(body), "answer %d", k);
		json_array_append_new(t, http_entry("GET", "http://t.example/s", "", body));
	}
	json_array_append_new(outs, output("a", "x", "y", t));
	expect_no_session(outs, 1,
	                  "its replay could not rebuild it: GET http://t.example/s has 101 "
	                  "different recorded answers, over 100");

	/* a url that holds a credential is named as such, not repeated */
	outs = json_array();
	t = json_array();
	snprintf(url, sizeof(url), "http://t.example/?k=%s", "AKIAIOSFODNN7EXAMPLE");
	e = http_entry("GET", url, "", "x");
	json_array_append_new(t, e);
	json_array_append_new(outs, output("a", "x", "y", t));
	expect_no_session(outs, 1,
	                  "step 1: GET (a url that holds a credential) cannot be recorded: "
	                  "mock.http.url looks like a credential (AWS access key id)");

	/* the whole session inside what an import may be */
	outs = json_array();
	for (k = 0; k < 20; k++) {
		char *big = unit_rep('b', MODEL_MAX_RESPONSE_BYTES - 16);

		snprintf(url, sizeof(url), "http://t.example/%d", k);
		t = json_array();
		json_array_append_new(t, http_entry("GET", url, "", big));
		json_array_append_new(outs, output("a", "x", "y", t));
		free(big);
	}
	{
		struct model_reason why;
		json_t *mocks = unit_json(MOCKS), *session = NULL;

		ck_assert_int_eq(model_record_session(mocks, outs, 20, "r", &session, &why), -1);
		ck_assert_msg(strstr(why.text, "over the 1048576 an import may be") != NULL, "%s",
		              why.text);
		json_decref(mocks);
		json_decref(outs);
	}
}
END_TEST

START_TEST(test_http_credential_headers)
{
	json_t *h = unit_json("[[\"X-Amz-Security-Token\",\"t\"],[\"x-goog-api-key\",\"k\"],"
	                      "[\"WWW-Authenticate\",\"Basic\"],[\"X-Trace\",\"1\"]]");
	json_t *rec = model_record_http("GET", "http://t.example/", NULL, 0, 200, h, "x", 1);

	/* what carries a credential is never kept in a session */
	assert_json(json_object_get(json_object_get(rec, "response"), "headers"),
	            "{\"X-Trace\":\"1\"}");
	json_decref(rec);
	json_decref(h);
}
END_TEST

/* ---- replaying the session ---------------------------------------------- */

START_TEST(test_rebuild_exchanges)
{
	struct model_timeline tl;
	struct model_reason why;
	json_t *ev =
	    unit_json("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	              "{\"seq\":2,\"kind\":\"http_exchange\",\"http\":{\"method\":\"POST\",\"url\":"
	              "\"https://api.example.com/v1/chat/"
	              "completions\",\"body\":\"q\"},\"response\":{\"status\":"
	              "200,\"body\":\"one\"}},"
	              "{\"seq\":3,\"kind\":\"http_exchange\",\"http\":{\"method\":\"GET\",\"url\":"
	              "\"http://t.example/"
	              "s\",\"body\":\"\"},\"response\":{\"status\":200,\"body\":\"same\"}},"
	              "{\"seq\":4,\"kind\":\"http_exchange\",\"http\":{\"method\":\"POST\",\"url\":"
	              "\"https://api.example.com/v1/chat/"
	              "completions\",\"body\":\"q\"},\"response\":{\"status\":"
	              "200,\"body\":\"two\"}},"
	              "{\"seq\":5,\"kind\":\"http_exchange\",\"http\":{\"method\":\"GET\",\"url\":"
	              "\"http://t.example/"
	              "s\",\"body\":\"\"},\"response\":{\"status\":200,\"body\":\"same\"}},"
	              "{\"seq\":6,\"kind\":\"output\",\"text\":\"done\"}]");

	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), 0);
	/* the same request answered alike is one response; answered
	 * differently, its answers in turn */
	assert_json(tl.mocks,
	            "[{\"http\":{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/chat/"
	            "completions\",\"body\":\"q\"},\"sequence\":[{\"status\":200,\"body\":\"one\"},"
	            "{\"status\":200,\"body\":\"two\"}]},"
	            "{\"http\":{\"method\":\"GET\",\"url\":\"http://t.example/s\",\"body\":\"\"},"
	            "\"response\":{\"status\":200,\"body\":\"same\"}}]");
	assert_json(tl.recorded, "[\"done\"]");
	model_timeline_clear(&tl);
	json_decref(ev);
}
END_TEST

START_TEST(test_rebuild_bad_exchange)
{
	struct model_timeline tl;
	struct model_reason why;
	json_t *ev = unit_json("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	                       "{\"seq\":2,\"kind\":\"http_exchange\"}]");

	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	ck_assert_str_eq(why.text, "http_exchange event 2 (seq 2) has no http");
	json_decref(ev);
	ev = unit_json("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	               "{\"seq\":2,\"kind\":\"http_exchange\",\"http\":{\"method\":\"GET\","
	               "\"url\":\"http://t.example/\"},\"response\":{\"status\":99}}]");
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	ck_assert_str_eq(why.text,
	                 "http_exchange event 2 (seq 2) is not an exchange a mock can "
	                 "answer: mock.response.status must be an HTTP status from 200 to 599");
	json_decref(ev);
	/* a regex beside a json_subset of one request: which answers is not
	 * decidable, so the timeline is refused */
	ev =
	    unit_json("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	              "{\"seq\":2,\"kind\":\"http_exchange\",\"http\":{\"method\":\"POST\",\"url\":"
	              "\"http://t.example/\",\"body\":{\"regex\":\"a\"}},\"response\":{}},"
	              "{\"seq\":3,\"kind\":\"http_exchange\",\"http\":{\"method\":\"POST\",\"url\":"
	              "\"http://t.example/\",\"body\":{\"json_subset\":{\"a\":1}}},"
	              "\"response\":{}}]");
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	ck_assert_msg(strncmp(why.text, "the recorded requests are ambiguous: ", 37) == 0, "%s",
	              why.text);
	json_decref(ev);
}
END_TEST

START_TEST(test_import_exchange)
{
	struct model_error err;
	json_t *body, *norm = NULL;

	/* normalized as a mock is: the method upper-cased, the url's
	 * default port dropped */
	body = unit_json("{\"external_id\":\"e\",\"events\":[{\"seq\":1,\"kind\":\"http_exchange\","
	                 "\"http\":{\"method\":\"get\",\"url\":\"HTTP://T.example:80/a\"},"
	                 "\"response\":{\"body\":\"x\"}}]}");
	ck_assert_int_eq(model_session_check(body, &norm, &err), 0);
	assert_json(json_object_get(json_array_get(json_object_get(norm, "events"), 0), "http"),
	            "{\"method\":\"GET\",\"url\":\"http://t.example/a\"}");
	json_decref(norm);
	json_decref(body);
	/* http belongs to an http_exchange only */
	body = unit_json("{\"external_id\":\"e\",\"events\":[{\"seq\":1,\"kind\":\"input\","
	                 "\"text\":\"a\",\"http\":{}}]}");
	ck_assert_int_eq(model_session_check(body, &norm, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_MALFORMED);
	ck_assert_str_eq(err.field, "events[0].http");
	json_decref(body);
	/* a url a mock refuses */
	body = unit_json("{\"external_id\":\"e\",\"events\":[{\"seq\":1,\"kind\":\"http_exchange\","
	                 "\"http\":{\"method\":\"GET\",\"url\":\"ftp://t.example/\"},"
	                 "\"response\":{}}]}");
	ck_assert_int_eq(model_session_check(body, &norm, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_INVALID);
	ck_assert_str_eq(err.field, "events[0].http.url");
	json_decref(body);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const http[] = {test_http_answer, test_http_unrecordable,
	                             test_http_credential_headers, NULL};
	const TTest *const session[] = {test_session_events, test_session_refused,
	                                test_session_bounds, NULL};
	const TTest *const replay[] = {test_rebuild_exchanges, test_rebuild_bad_exchange,
	                               test_import_exchange, NULL};
	Suite *s = suite_create("record");

	unit_tcase(s, "http", http);
	unit_tcase(s, "session", session);
	unit_tcase(s, "replay", replay);
	return s;
}
