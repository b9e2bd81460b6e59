/*
 * Unit tests of model/suite.c (Check): the builtin suite format, its
 * check at its edges, and its evaluation against a run's outputs (every
 * kind of expectation, step selection, weights and threshold).
 *
 * The fixture suites are tests/fixtures/suites (unit_fixture).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/error.h"
#include "model/limits.h"
#include "model/scorer.h"
#include "model/suite.h"
#include "tests/unit/unit.h"

/* ---- helpers ------------------------------------------------------------ */

/* Evaluate suite text against outs; asserts it is scored; returns score. */
static double eval_ok(const char *suite_text, json_t *outs, struct model_score_result *res)
{
	json_t *suite = unit_json(suite_text);
	int rc;

	rc = model_suite_evaluate(suite, outs, res);
	ck_assert_msg(rc == 0, "not scored: %s", res->reason);
	ck_assert_int_eq(res->scored, 1);
	ck_assert_str_eq(res->reason, "");
	ck_assert_ptr_nonnull(res->details);
	json_decref(suite);
	return res->score;
}

/* ---- suite evaluation ---------------------------------------------------- */

/*
 * The fixture suite tests/fixtures/suites/walkthrough.json against the
 * walkthrough's outputs:
 *   step-1 equals "first synthetic account", weight 2   -> holds   2 / 2
 *   every step not a mock miss, weight 1: step-1        -> holds   1 / 1
 *                                         step-2        -> fails   0 / 1
 *   score = 3 / 4 = 0.75 >= threshold 0.5 -> passed.
 */
START_TEST(test_suite_walkthrough)
{
	struct model_score_result res;
	json_error_t jerr;
	json_t *suite, *outs = unit_walkthrough_outputs();

	memset(&res, 0, sizeof(res));
	suite =
	    json_load_file(unit_fixture("suites/walkthrough.json"), JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(suite != NULL, "%s", jerr.text);
	ck_assert_int_eq(model_suite_evaluate(suite, outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 3);
	unit_assert_detail(&res, 0, 1, "step-1", 1, "equals", "output equals the expected text");
	unit_assert_detail(&res, 1, 1, "step-1", 1, "not_mock_miss", "step is not a mock miss");
	unit_assert_detail(&res, 2, 2, "step-2", 0, "not_mock_miss", "step is a mock miss");
	model_score_result_clear(&res);
	ck_assert_ptr_null(res.details);
	ck_assert_int_eq(res.scored, 0);
	json_decref(suite);

	/* the strict twin: every weight 1, threshold 1.0 -> 2/3, not passed */
	suite = json_load_file(unit_fixture("suites/walkthrough-strict.json"),
	                       JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(suite != NULL, "%s", jerr.text);
	ck_assert_int_eq(model_suite_evaluate(suite, outs, &res), 0);
	/* 2/3 as recorded: 9 decimals */
	ck_assert_double_eq(res.score, model_score_round(2.0 / 3.0));
	ck_assert_int_eq(res.passed, 0);
	model_score_result_clear(&res);
	json_decref(suite);
	json_decref(outs);
}
END_TEST

/*
 * One expectation of each kind, alone in a suite, against three outputs
 * (greet "Hello, World", count "42 items\n", miss a mock miss): what it
 * scores (1 when it holds, 0 when not: it passes the default threshold 1.0
 * only when it holds) and, when check is set, its detail line.
 */
struct one_check {
	const char *expectation;
	double score;
	json_int_t seq;
	const char *key;
	const char *check;
	const char *message;
};

static const struct one_check one_checks[] = {
    /* equals: exact bytes (case, trailing newline) */
    {"{\"key\":\"greet\",\"equals\":\"Hello, World\"}", 1.0, 0, NULL, NULL, NULL},
    {"{\"key\":\"greet\",\"equals\":\"hello, world\"}", 0.0, 1, "greet", "equals",
     "output differs from the expected text"},
    {"{\"key\":\"count\",\"equals\":\"42 items\"}", 0.0, 0, NULL, NULL, NULL},
    {"{\"key\":\"count\",\"equals\":\"42 items\\n\"}", 1.0, 0, NULL, NULL, NULL},
    /* contains */
    {"{\"seq\":1,\"contains\":\"o, W\"}", 1.0, 1, "greet", "contains",
     "output contains the expected text"},
    {"{\"seq\":1,\"contains\":\"world\"}", 0.0, 1, "greet", "contains",
     "output does not contain the expected text"},
    /* the empty string is contained in every output */
    {"{\"seq\":1,\"contains\":\"\"}", 1.0, 0, NULL, NULL, NULL},
    /* regex: POSIX extended, unanchored unless anchored */
    {"{\"key\":\"count\",\"regex\":\"^[0-9]+ items\"}", 1.0, 2, "count", "regex",
     "output matches the regular expression"},
    /* no REG_NEWLINE: "$" is the end of the output, not of a line */
    {"{\"key\":\"count\",\"regex\":\"items$\"}", 0.0, 0, NULL, NULL, NULL},
    {"{\"key\":\"count\",\"regex\":\"items\\n$\"}", 1.0, 0, NULL, NULL, NULL},
    {"{\"key\":\"count\",\"regex\":\"^[0-9]{3} items\"}", 0.0, 2, "count", "regex",
     "output does not match the regular expression"},
    {"{\"key\":\"greet\",\"regex\":\"(Hello|Bye), W.r\"}", 1.0, 0, NULL, NULL, NULL},
    /* not_mock_miss */
    {"{\"key\":\"miss\",\"not_mock_miss\":true}", 0.0, 3, "miss", "not_mock_miss",
     "step is a mock miss"},
    {"{\"key\":\"greet\",\"not_mock_miss\":true}", 1.0, 0, NULL, NULL, NULL},
};

START_TEST(test_suite_checks)
{
	const struct one_check *c = &one_checks[_i];
	struct model_score_result res;
	json_t *outs = json_array();
	char suite[256];

	memset(&res, 0, sizeof(res));
	unit_add_output(outs, "greet", "Hello, World", NULL);
	unit_add_output(outs, "count", "42 items\n", NULL);
	unit_add_output(outs, "miss", "[[mock-miss:agent:x]]", "mock_miss");
	snprintf(suite, sizeof(suite), "{\"name\":\"s\",\"expectations\":[%s]}", c->expectation);
	ck_assert_msg(eval_ok(suite, outs, &res) == c->score, "%s: score %g, want %g", suite,
	              res.score, c->score);
	ck_assert_int_eq(res.passed, c->score == 1.0);
	if (c->check)
		unit_assert_detail(&res, 0, c->seq, c->key, c->score == 1.0, c->check, c->message);
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

/* ---- checks on the trace, the time and a JSON output --------------------- */

/* text with ' for " (the suites below are JSON in C strings); the caller
 * frees it */
static char *sq(const char *text)
{
	char *t = model_xstrdup(text);
	char *c;

	for (c = t; *c; c++)
		if (*c == '\'')
			*c = '"';
	return t;
}

/*
 * Three steps:
 *   seq 1 "ask": a JSON output, 12.5 ms, trace: GET /a, search(q weather,
 *     page 1), lookup (no args), search(q paris)
 *   seq 2 "old": a text output, a run from before traces and step times
 *     (trace and duration_ms null)
 *   seq 3 "none": no output (null), 0 ms, an empty trace
 */
static json_t *trace_outputs(void)
{
	return unit_json(
	    "[{\"seq\":1,\"key\":\"ask\",\"input\":\"i\",\"status\":\"ok\",\"error_kind\":null,"
	    "\"output\":\"{\\\"answer\\\":{\\\"city\\\":\\\"Paris\\\",\\\"temps\\\":[12,14.5]},"
	    "\\\"n\\\":1,\\\"page size\\\":20}\\n\","
	    "\"duration_ms\":12.5,\"trace\":["
	    "{\"resource\":\"GET /a\\n\",\"hit\":true,\"mock\":0,\"duration_us\":3},"
	    "{\"tool\":\"search\",\"args\":{\"q\":\"weather\",\"page\":1},\"hit\":true,\"mock\":1,"
	    "\"duration_us\":5},"
	    "{\"tool\":\"lookup\",\"args\":null,\"hit\":false,\"mock\":null,\"duration_us\":2},"
	    "{\"tool\":\"search\",\"args\":{\"q\":\"paris\"},\"hit\":true,\"mock\":2,"
	    "\"duration_us\":4}]},"
	    "{\"seq\":2,\"key\":\"old\",\"input\":\"i\",\"status\":\"ok\",\"error_kind\":null,"
	    "\"output\":\"plain text\",\"duration_ms\":null,\"trace\":null},"
	    "{\"seq\":3,\"key\":\"none\",\"input\":\"i\",\"status\":\"error\","
	    "\"error_kind\":\"agent_error\",\"output\":null,\"duration_ms\":0,\"trace\":[]}]");
}

struct step_check {
	const char *expectation; /* ' for " */
	int holds;
	json_int_t seq;
	const char *key;
	const char *check;
	const char *message;
};

static const struct step_check step_checks[] = {
    /* calls, in order (the default): a subsequence of the trace */
    {"{'key':'ask','calls':[{'tool':'search'},{'tool':'lookup'}]}", 1, 1, "ask", "calls",
     "the step made the expected calls in order"},
    {"{'key':'ask','calls':[{'resource':'GET /a\\n'},{'tool':'search'},{'tool':'search'}],"
     "'order':'in_order'}",
     1, 1, "ask", "calls", "the step made the expected calls in order"},
    {"{'key':'ask','calls':[{'tool':'lookup'},{'resource':'GET /a\\n'}]}", 0, 1, "ask", "calls",
     "the step did not make the expected calls in order"},
    /* a resource is its exact bytes */
    {"{'key':'ask','calls':[{'resource':'GET /a'}]}", 0, 1, "ask", "calls",
     "the step did not make the expected calls in order"},
    /* args: the listed keys equal, extra keys in the call fine, numbers
     * by value */
    {"{'key':'ask','calls':[{'tool':'search','args':{'q':'paris'}}]}", 1, 1, "ask", "calls",
     "the step made the expected calls in order"},
    {"{'key':'ask','calls':[{'tool':'search','args':{'page':1.0}}]}", 1, 1, "ask", "calls",
     "the step made the expected calls in order"},
    {"{'key':'ask','calls':[{'tool':'search','args':{'q':'rome'}}]}", 0, 1, "ask", "calls",
     "the step did not make the expected calls in order"},
    {"{'key':'ask','calls':[{'tool':'search','args':{'q':'weather','lang':'en'}}]}", 0, 1, "ask",
     "calls", "the step did not make the expected calls in order"},
    /* a call that sent no args has none of the listed keys */
    {"{'key':'ask','calls':[{'tool':'lookup','args':{}}]}", 0, 1, "ask", "calls",
     "the step did not make the expected calls in order"},
    {"{'key':'ask','calls':[{'tool':'search','args':{'q':'paris'}},{'tool':'lookup'}]}", 0, 1,
     "ask", "calls", "the step did not make the expected calls in order"},
    /* exact: these requests and no other, in this order */
    {"{'key':'ask','order':'exact','calls':[{'resource':'GET /a\\n'},{'tool':'search'},"
     "{'tool':'lookup'},{'tool':'search','args':{'q':'paris'}}]}",
     1, 1, "ask", "calls", "the step's requests are exactly the expected calls"},
    {"{'key':'ask','order':'exact','calls':[{'tool':'search'},{'tool':'lookup'},"
     "{'tool':'search'}]}",
     0, 1, "ask", "calls", "the step's requests are not exactly the expected calls"},
    {"{'key':'ask','order':'exact','calls':[{'tool':'search'},{'resource':'GET /a\\n'},"
     "{'tool':'lookup'},{'tool':'search'}]}",
     0, 1, "ask", "calls", "the step's requests are not exactly the expected calls"},
    /* any: each call its own request, in any order; the loose first entry
     * must not take the only request the strict second one matches */
    {"{'key':'ask','order':'any','calls':[{'tool':'search'},"
     "{'tool':'search','args':{'q':'weather'}}]}",
     1, 1, "ask", "calls", "the step made the expected calls"},
    {"{'key':'ask','order':'any','calls':[{'tool':'lookup'},{'resource':'GET /a\\n'}]}", 1, 1,
     "ask", "calls", "the step made the expected calls"},
    {"{'key':'ask','order':'any','calls':[{'tool':'search'},{'tool':'search'},"
     "{'tool':'search'}]}",
     0, 1, "ask", "calls", "the step did not make every expected call"},
    /* no trace (a run from before traces): never a pass */
    {"{'key':'old','calls':[{'tool':'search'}]}", 0, 2, "old", "calls", "step has no trace"},
    {"{'key':'none','calls':[{'tool':'search'}],'order':'any'}", 0, 3, "none", "calls",
     "the step did not make every expected call"},
    /* call_count */
    {"{'key':'ask','call_count':{'tool':'search','equals':2}}", 1, 1, "ask", "call_count",
     "the number of calls is within the bounds"},
    {"{'key':'ask','call_count':{'tool':'search','equals':1}}", 0, 1, "ask", "call_count",
     "the number of calls is outside the bounds"},
    {"{'key':'ask','call_count':{'tool':'search','min':3}}", 0, 1, "ask", "call_count",
     "the number of calls is outside the bounds"},
    {"{'key':'ask','call_count':{'tool':'search','min':1,'max':2}}", 1, 1, "ask", "call_count",
     "the number of calls is within the bounds"},
    {"{'key':'ask','call_count':{'tool':'search','max':1}}", 0, 1, "ask", "call_count",
     "the number of calls is outside the bounds"},
    {"{'key':'ask','call_count':{'resource':'GET /a\\n','equals':1}}", 1, 1, "ask", "call_count",
     "the number of calls is within the bounds"},
    {"{'key':'ask','call_count':{'tool':'weather','max':0}}", 1, 1, "ask", "call_count",
     "the number of calls is within the bounds"},
    {"{'key':'none','call_count':{'tool':'search','equals':0}}", 1, 3, "none", "call_count",
     "the number of calls is within the bounds"},
    {"{'key':'old','call_count':{'tool':'search','equals':0}}", 0, 2, "old", "call_count",
     "step has no trace"},
    /* max_duration_ms: duration_ms <= N */
    {"{'key':'ask','max_duration_ms':12.5}", 1, 1, "ask", "max_duration_ms",
     "step took at most the allowed time"},
    {"{'key':'ask','max_duration_ms':12}", 0, 1, "ask", "max_duration_ms",
     "step took longer than the allowed time"},
    {"{'key':'none','max_duration_ms':0}", 1, 3, "none", "max_duration_ms",
     "step took at most the allowed time"},
    {"{'key':'old','max_duration_ms':1000000}", 0, 2, "old", "max_duration_ms",
     "step has no duration"},
    /* json_path */
    {"{'key':'ask','json_path':{'path':'$.answer.city','equals':'Paris'}}", 1, 1, "ask",
     "json_path", "the value at the path equals the expected value"},
    {"{'key':'ask','json_path':{'path':'$.answer.city','equals':'paris'}}", 0, 1, "ask",
     "json_path", "the value at the path differs from the expected value"},
    {"{'key':'ask','json_path':{'path':'$.answer.temps[1]','equals':14.5}}", 1, 1, "ask",
     "json_path", "the value at the path equals the expected value"},
    {"{'key':'ask','json_path':{'path':'$[\\'answer\\'][\\'temps\\'][0]','equals':12.0}}", 1, 1,
     "ask", "json_path", "the value at the path equals the expected value"},
    {"{'key':'ask','json_path':{'path':'$[\\'page size\\']','equals':20}}", 1, 1, "ask",
     "json_path", "the value at the path equals the expected value"},
    {"{'key':'ask','json_path':{'path':'$.answer','equals':{'temps':[12,14.5],'city':'Paris'}}}", 1,
     1, "ask", "json_path", "the value at the path equals the expected value"},
    {"{'key':'ask','json_path':{'path':'$.answer','equals':{'city':'Paris'}}}", 0, 1, "ask",
     "json_path", "the value at the path differs from the expected value"},
    {"{'key':'ask','json_path':{'path':'$.n','equals':'1'}}", 0, 1, "ask", "json_path",
     "the value at the path differs from the expected value"},
    {"{'key':'ask','json_path':{'path':'$.n','exists':true}}", 1, 1, "ask", "json_path",
     "the path is in the output"},
    {"{'key':'ask','json_path':{'path':'$.n','exists':false}}", 0, 1, "ask", "json_path",
     "the path is in the output"},
    {"{'key':'ask','json_path':{'path':'$.answer.temps[2]','exists':true}}", 0, 1, "ask",
     "json_path", "the path is not in the output"},
    {"{'key':'ask','json_path':{'path':'$.answer.missing','exists':false}}", 1, 1, "ask",
     "json_path", "the path is not in the output"},
    /* an index into an object, a name into an array: not in the output */
    {"{'key':'ask','json_path':{'path':'$.answer[0]','exists':false}}", 1, 1, "ask", "json_path",
     "the path is not in the output"},
    {"{'key':'ask','json_path':{'path':'$.answer.temps.city','equals':1}}", 0, 1, "ask",
     "json_path", "the path is not in the output"},
    {"{'key':'ask','json_path':{'path':'$.answer.city','contains':'ari'}}", 1, 1, "ask",
     "json_path", "the value at the path contains the expected text"},
    {"{'key':'ask','json_path':{'path':'$.answer.city','contains':'Rome'}}", 0, 1, "ask",
     "json_path", "the value at the path does not contain the expected text"},
    {"{'key':'ask','json_path':{'path':'$.answer.city','regex':'^P[a-z]+$'}}", 1, 1, "ask",
     "json_path", "the value at the path matches the regular expression"},
    {"{'key':'ask','json_path':{'path':'$.answer.city','regex':'^p'}}", 0, 1, "ask", "json_path",
     "the value at the path does not match the regular expression"},
    {"{'key':'ask','json_path':{'path':'$.n','contains':'1'}}", 0, 1, "ask", "json_path",
     "the value at the path is not a string"},
    {"{'key':'ask','json_path':{'path':'$','exists':true}}", 1, 1, "ask", "json_path",
     "the path is in the output"},
    {"{'key':'old','json_path':{'path':'$','exists':true}}", 0, 2, "old", "json_path",
     "output is not JSON"},
    {"{'key':'none','json_path':{'path':'$','exists':true}}", 0, 3, "none", "json_path",
     "step has no output"},
};

START_TEST(test_suite_step_checks)
{
	const struct step_check *c = &step_checks[_i];
	struct model_score_result res;
	json_t *outs = trace_outputs();
	char *e = sq(c->expectation);
	char suite[1024];

	memset(&res, 0, sizeof(res));
	snprintf(suite, sizeof(suite), "{\"name\":\"s\",\"expectations\":[%s]}", e);
	ck_assert_msg(eval_ok(suite, outs, &res) == (c->holds ? 1.0 : 0.0), "%s: score %g", suite,
	              res.score);
	ck_assert_int_eq(res.passed, c->holds);
	ck_assert_int_eq(json_array_size(res.details), 1);
	unit_assert_detail(&res, 0, c->seq, c->key, c->holds, c->check, c->message);
	model_score_result_clear(&res);
	free(e);
	json_decref(outs);
}
END_TEST

/* "*" with a trace check: one line per step; the step without a trace
 * fails, never passes vacuously; the weights count as for any check */
START_TEST(test_suite_step_checks_every_step)
{
	struct model_score_result res;
	json_t *outs = trace_outputs();
	char *suite = sq("{'name':'s','threshold':0.5,'expectations':["
	                 "{'step':'*','call_count':{'tool':'search','max':2}},"
	                 "{'key':'ask','max_duration_ms':100,'weight':3}]}");

	memset(&res, 0, sizeof(res));
	/* (1 + 0 + 1 + 3) / 6 */
	ck_assert_double_eq(eval_ok(suite, outs, &res), model_score_round(5.0 / 6.0));
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 4);
	unit_assert_detail(&res, 0, 1, "ask", 1, "call_count",
	                   "the number of calls is within the bounds");
	unit_assert_detail(&res, 1, 2, "old", 0, "call_count", "step has no trace");
	unit_assert_detail(&res, 2, 3, "none", 1, "call_count",
	                   "the number of calls is within the bounds");
	unit_assert_detail(&res, 3, 1, "ask", 1, "max_duration_ms",
	                   "step took at most the allowed time");
	model_score_result_clear(&res);
	free(suite);
	json_decref(outs);
}
END_TEST

/* A path's escapes (\" and \\ in ["name"]), built without JSON escaping;
 * a JSON output with a duplicate key is refused, a scalar output is JSON. */
START_TEST(test_suite_json_path_names)
{
	struct model_score_result res;
	json_t *outs = json_array();
	json_t *suite;

	memset(&res, 0, sizeof(res));
	unit_add_output(outs, "q", "{\"a\\\"b\":{\"c\\\\d\":[true]}}", NULL);
	unit_add_output(outs, "dup", "{\"a\":1,\"a\":2}", NULL);
	unit_add_output(outs, "num", " 42 ", NULL);
	suite = json_pack(
	    "{s:s, s:[{s:s, s:{s:s, s:b}}, {s:s, s:{s:s, s:b}}, {s:s, s:{s:s, s:i}}]}", "name", "s",
	    "expectations", "key", "q", "json_path", "path", "$[\"a\\\"b\"][\"c\\\\d\"][0]",
	    "equals", 1, "key", "dup", "json_path", "path", "$.a", "exists", 1, "key", "num",
	    "json_path", "path", "$", "equals", 42);
	ck_assert_ptr_nonnull(suite);
	ck_assert_int_eq(model_suite_evaluate(suite, outs, &res), 0);
	ck_assert_double_eq(res.score, model_score_round(2.0 / 3.0));
	unit_assert_detail(&res, 0, 1, "q", 1, "json_path",
	                   "the value at the path equals the expected value");
	unit_assert_detail(&res, 1, 2, "dup", 0, "json_path", "output is not JSON");
	unit_assert_detail(&res, 2, 3, "num", 1, "json_path",
	                   "the value at the path equals the expected value");
	model_score_result_clear(&res);
	json_decref(suite);
	json_decref(outs);
}
END_TEST

START_TEST(test_suite_selection)
{
	struct model_score_result res;
	json_t *outs = json_array();
	json_t *empty = json_array();

	memset(&res, 0, sizeof(res));
	unit_add_output(outs, "a", "x", NULL);
	unit_add_output(outs, "b", "y", "mock_miss");
	unit_add_output(outs, "c", "x", NULL);

	/* "*": one line per step, each with the expectation's weight */
	ck_assert_double_eq(
	    eval_ok("{\"name\":\"s\",\"expectations\":[{\"step\":\"*\",\"equals\":\"x\"}]}", outs,
	            &res),
	    model_score_round(2.0 / 3.0));
	ck_assert_int_eq(json_array_size(res.details), 3);
	unit_assert_detail(&res, 0, 1, "a", 1, "equals", "output equals the expected text");
	unit_assert_detail(&res, 1, 2, "b", 0, "equals", "output differs from the expected text");
	unit_assert_detail(&res, 2, 3, "c", 1, "equals", "output equals the expected text");
	model_score_result_clear(&res);

	/* seq picks the step by number, key by key */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":3,\"equals\":\"x\"},"
	                  "{\"key\":\"b\",\"equals\":\"y\"}]}",
	                  outs, &res) == 1.0);
	unit_assert_detail(&res, 0, 3, "c", 1, "equals", "output equals the expected text");
	unit_assert_detail(&res, 1, 2, "b", 1, "equals", "output equals the expected text");
	model_score_result_clear(&res);

	/* a missing step fails, naming what was asked for */
	ck_assert(
	    eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":4,\"equals\":\"x\"},"
	            "{\"key\":\"zz\",\"not_mock_miss\":true},{\"key\":\"a\",\"equals\":\"x\"}]}",
	            outs, &res) == model_score_round(1.0 / 3.0));
	unit_assert_detail(&res, 0, 4, NULL, 0, "equals", "no such step");
	unit_assert_detail(&res, 1, 0, "zz", 0, "not_mock_miss", "no such step");
	model_score_result_clear(&res);

	/* "*" over a run without steps is one failed line, not a vacuous pass */
	ck_assert(eval_ok("{\"name\":\"s\",\"threshold\":0,\"expectations\":[{\"step\":\"*\","
	                  "\"not_mock_miss\":true}]}",
	                  empty, &res) == 0.0);
	ck_assert_int_eq(res.passed, 1); /* threshold 0: 0 >= 0 */
	unit_assert_detail(&res, 0, 0, NULL, 0, "not_mock_miss", "run has no steps");
	model_score_result_clear(&res);

	/* an output that is not a string fails content checks */
	json_object_set_new(json_array_get(outs, 0), "output", json_null());
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"a\",\"contains\":\"\"}]}",
	                  outs, &res) == 0.0);
	unit_assert_detail(&res, 0, 1, "a", 0, "contains", "step has no output");
	model_score_result_clear(&res);
	json_decref(outs);
	json_decref(empty);
}
END_TEST

/* A replay keeps a history's keys as recorded (model/history.h): a key
 * expectation on a repeated key applies to every step with that key, with
 * one line and the full weight each; neither the first nor the last alone
 * decides (model/suite.h). */
START_TEST(test_suite_repeated_key)
{
	struct model_score_result res;
	json_t *outs = json_array();

	memset(&res, 0, sizeof(res));
	unit_add_output(outs, "lookup", "first synthetic account", NULL);
	unit_add_output(outs, "other", "x", NULL);
	unit_add_output(outs, "lookup", "second synthetic account", NULL);

	/* the first holds, the last does not: 1 of 2, not a pass */
	ck_assert_double_eq(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"lookup\","
	                            "\"equals\":\"first synthetic account\",\"weight\":2}]}",
	                            outs, &res),
	                    0.5);
	ck_assert_int_eq(res.passed, 0);
	ck_assert_int_eq(json_array_size(res.details), 2);
	unit_assert_detail(&res, 0, 1, "lookup", 1, "equals", "output equals the expected text");
	unit_assert_detail(&res, 1, 3, "lookup", 0, "equals",
	                   "output differs from the expected text");
	model_score_result_clear(&res);

	/* the last holds, the first does not: the same, the other way round */
	ck_assert_double_eq(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"lookup\","
	                            "\"equals\":\"second synthetic account\"}]}",
	                            outs, &res),
	                    0.5);
	ck_assert_int_eq(res.passed, 0);
	unit_assert_detail(&res, 0, 1, "lookup", 0, "equals",
	                   "output differs from the expected text");
	unit_assert_detail(&res, 1, 3, "lookup", 1, "equals", "output equals the expected text");
	model_score_result_clear(&res);

	/* both hold: passed; each line weighs the expectation's weight, so
	 * beside a failing unique key it is (3 + 3) / (3 + 3 + 1) */
	ck_assert_double_eq(eval_ok("{\"name\":\"s\",\"threshold\":0.8,\"expectations\":[{\"key\":"
	                            "\"lookup\",\"contains\":\"synthetic account\",\"weight\":3},"
	                            "{\"key\":\"other\",\"equals\":\"y\"}]}",
	                            outs, &res),
	                    model_score_round(6.0 / 7.0));
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 3);
	unit_assert_detail(&res, 0, 1, "lookup", 1, "contains",
	                   "output contains the expected text");
	unit_assert_detail(&res, 1, 3, "lookup", 1, "contains",
	                   "output contains the expected text");
	unit_assert_detail(&res, 2, 2, "other", 0, "equals",
	                   "output differs from the expected text");
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

START_TEST(test_suite_weights_threshold)
{
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();

	memset(&res, 0, sizeof(res));
	/* weights 3 (holds) and 1 (fails) -> 0.75; swapped -> 0.25 */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":true,"
	                  "\"weight\":3},{\"seq\":2,\"not_mock_miss\":true}]}",
	                  outs, &res) == 0.75);
	ck_assert_int_eq(res.passed, 0); /* default threshold 1.0 */
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":true},"
	                  "{\"seq\":2,\"not_mock_miss\":true,\"weight\":3}]}",
	                  outs, &res) == 0.25);
	model_score_result_clear(&res);
	/* fractional weights */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":true,"
	                  "\"weight\":0.5},{\"seq\":2,\"not_mock_miss\":true,\"weight\":1.5}]}",
	                  outs, &res) == 0.25);
	model_score_result_clear(&res);
	/* threshold edge: score == threshold passes, just above it fails */
	ck_assert(
	    eval_ok("{\"name\":\"s\",\"threshold\":0.75,\"expectations\":[{\"seq\":1,"
	            "\"not_mock_miss\":true,\"weight\":3},{\"seq\":2,\"not_mock_miss\":true}]}",
	            outs, &res) == 0.75);
	ck_assert_int_eq(res.passed, 1);
	model_score_result_clear(&res);
	ck_assert(
	    eval_ok("{\"name\":\"s\",\"threshold\":0.76,\"expectations\":[{\"seq\":1,"
	            "\"not_mock_miss\":true,\"weight\":3},{\"seq\":2,\"not_mock_miss\":true}]}",
	            outs, &res) == 0.75);
	ck_assert_int_eq(res.passed, 0);
	model_score_result_clear(&res);
	/* 1 / 2.0000000004 is 0.4999999999: recorded as 0.5 (9 decimals), and
	 * passed is decided on that, as recorded */
	ck_assert(eval_ok("{\"name\":\"s\",\"threshold\":0.5,\"expectations\":[{\"seq\":1,"
	                  "\"not_mock_miss\":true},{\"seq\":2,\"not_mock_miss\":true,"
	                  "\"weight\":1.0000000004}]}",
	                  outs, &res) == 0.5);
	ck_assert_int_eq(res.passed, 1);
	model_score_result_clear(&res);
	/* every expectation holds: 1.0 passes the default threshold */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":true}]}",
	                  outs, &res) == 1.0);
	ck_assert_int_eq(res.passed, 1);
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

/* A suite model_suite_check refuses: its code and field path. */
struct bad_suite {
	const char *text;
	enum model_err code;
	const char *field;
};

static const struct bad_suite bad_suites[] = {
    {"[]", MODEL_E_MALFORMED, ""},
    {"{\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}", MODEL_E_MALFORMED, "name"},
    {"{\"name\":\"s\"}", MODEL_E_MALFORMED, "expectations"},
    {"{\"name\":\"s\",\"expectations\":{}}", MODEL_E_MALFORMED, "expectations"},
    {"{\"name\":\"s\",\"expectations\":[]}", MODEL_E_LIMIT, "expectations"},
    {"{\"name\":\"\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}", MODEL_E_LIMIT, "name"},
    {"{\"name\":7,\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}", MODEL_E_MALFORMED, "name"},
    {"{\"name\":\"s\",\"extra\":1,\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}",
     MODEL_E_MALFORMED, ""},
    {"{\"name\":\"s\",\"threshold\":1.5,\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}",
     MODEL_E_LIMIT, "threshold"},
    {"{\"name\":\"s\",\"threshold\":-0.1,\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}",
     MODEL_E_LIMIT, "threshold"},
    {"{\"name\":\"s\",\"threshold\":\"high\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}",
     MODEL_E_MALFORMED, "threshold"},
    {"{\"name\":\"s\",\"expectations\":[7]}", MODEL_E_MALFORMED, "expectations[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"},{\"equals\":\"x\"}]}",
     MODEL_E_MALFORMED, "expectations[1]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"key\":\"a\",\"equals\":\"x\"}]}",
     MODEL_E_MALFORMED, "expectations[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1}]}", MODEL_E_MALFORMED, "expectations[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"contains\":\"x\"}]}",
     MODEL_E_MALFORMED, "expectations[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":0,\"equals\":\"x\"}]}", MODEL_E_LIMIT,
     "expectations[0].seq"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":\"1\",\"equals\":\"x\"}]}", MODEL_E_MALFORMED,
     "expectations[0].seq"},
    {"{\"name\":\"s\",\"expectations\":[{\"key\":\"\",\"equals\":\"x\"}]}", MODEL_E_LIMIT,
     "expectations[0].key"},
    {"{\"name\":\"s\",\"expectations\":[{\"step\":\"all\",\"equals\":\"x\"}]}", MODEL_E_MALFORMED,
     "expectations[0].step"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":3}]}", MODEL_E_MALFORMED,
     "expectations[0].equals"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":false}]}", MODEL_E_INVALID,
     "expectations[0].not_mock_miss"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"not_mock_miss\":1}]}", MODEL_E_MALFORMED,
     "expectations[0].not_mock_miss"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"weight\":0}]}", MODEL_E_LIMIT,
     "expectations[0].weight"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"weight\":-1}]}",
     MODEL_E_LIMIT, "expectations[0].weight"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"weight\":\"2\"}]}",
     MODEL_E_MALFORMED, "expectations[0].weight"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"colour\":\"red\"}]}",
     MODEL_E_MALFORMED, "expectations[0].colour"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"},{\"seq\":2,\"regex\":"
     "\"(unclosed\"}]}",
     MODEL_E_INVALID, "expectations[1].regex"},
    /* calls */
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":{\"tool\":\"a\"}}]}",
     MODEL_E_MALFORMED, "expectations[0].calls"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[]}]}", MODEL_E_LIMIT,
     "expectations[0].calls"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[7]}]}", MODEL_E_MALFORMED,
     "expectations[0].calls[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\"},{}]}]}",
     MODEL_E_MALFORMED, "expectations[0].calls[1]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\",\"resource\":"
     "\"b\"}]}]}",
     MODEL_E_MALFORMED, "expectations[0].calls[0]"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"resource\":\"b\",\"args\":{}}]}"
     "]}",
     MODEL_E_MALFORMED, "expectations[0].calls[0].args"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\",\"args\":[1]}]}]}",
     MODEL_E_MALFORMED, "expectations[0].calls[0].args"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"\"}]}]}", MODEL_E_LIMIT,
     "expectations[0].calls[0].tool"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":3}]}]}", MODEL_E_MALFORMED,
     "expectations[0].calls[0].tool"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"resource\":\"\"}]}]}",
     MODEL_E_LIMIT, "expectations[0].calls[0].resource"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\",\"colour\":1}]}]}",
     MODEL_E_MALFORMED, "expectations[0].calls[0].colour"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\"}],\"order\":"
     "\"sorted\"}]}",
     MODEL_E_MALFORMED, "expectations[0].order"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"order\":\"any\"}]}",
     MODEL_E_MALFORMED, "expectations[0].order"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"calls\":[{\"tool\":\"a\"}],\"equals\":"
     "\"x\"}]}",
     MODEL_E_MALFORMED, "expectations[0]"},
    /* call_count */
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":[]}]}", MODEL_E_MALFORMED,
     "expectations[0].call_count"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\"}}]}",
     MODEL_E_MALFORMED, "expectations[0].call_count"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"min\":1}}]}",
     MODEL_E_MALFORMED, "expectations[0].call_count"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"equals\":1,"
     "\"min\":0}}]}",
     MODEL_E_MALFORMED, "expectations[0].call_count"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"min\":2,"
     "\"max\":1}}]}",
     MODEL_E_INVALID, "expectations[0].call_count.max"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"min\":-1}}]}",
     MODEL_E_LIMIT, "expectations[0].call_count.min"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"max\":101}}]}",
     MODEL_E_LIMIT, "expectations[0].call_count.max"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"min\":"
     "\"1\"}}]}",
     MODEL_E_MALFORMED, "expectations[0].call_count.min"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"call_count\":{\"tool\":\"a\",\"args\":{},"
     "\"min\":1}}]}",
     MODEL_E_MALFORMED, "expectations[0].call_count.args"},
    /* max_duration_ms */
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"max_duration_ms\":\"5\"}]}", MODEL_E_MALFORMED,
     "expectations[0].max_duration_ms"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"max_duration_ms\":-1}]}", MODEL_E_LIMIT,
     "expectations[0].max_duration_ms"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"max_duration_ms\":86400001}]}", MODEL_E_LIMIT,
     "expectations[0].max_duration_ms"},
    /* json_path */
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":\"$.a\"}]}", MODEL_E_MALFORMED,
     "expectations[0].json_path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"equals\":1}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\"}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\",\"exists\":"
     "true,\"equals\":1}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":7,\"exists\":true}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\",\"exists\":"
     "1}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path.exists"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\",\"contains\":"
     "1}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path.contains"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\",\"regex\":"
     "\"(x\"}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.regex"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a\",\"exists\":"
     "true,\"colour\":1}}]}",
     MODEL_E_MALFORMED, "expectations[0].json_path.colour"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"a\",\"exists\":true}}]"
     "}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"\",\"exists\":true}}]"
     "}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$a\",\"exists\":true}}"
     "]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.\",\"exists\":true}}"
     "]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.1a\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$.a-b\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[01]\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[-1]\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[1234567890]\","
     "\"exists\":true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[1\",\"exists\":true}"
     "}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[]\",\"exists\":true}"
     "}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[\\\"a]\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$[\\\"a\\\\n\\\"]\","
     "\"exists\":true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
    {"{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"json_path\":{\"path\":\"$..a\",\"exists\":"
     "true}}]}",
     MODEL_E_INVALID, "expectations[0].json_path.path"},
};

START_TEST(test_suite_malformed)
{
	const struct bad_suite *b = &bad_suites[_i];
	struct model_error err;
	struct model_score_result res;
	json_t *suite = unit_json(b->text);
	json_t *outs = unit_walkthrough_outputs();

	memset(&err, 0, sizeof(err));
	memset(&res, 0, sizeof(res));
	ck_assert_msg(model_suite_check(suite, &err) == -1, "accepted: %s", b->text);
	ck_assert_msg(err.code == b->code, "%s: code %d, want %d (%s)", b->text, err.code, b->code,
	              err.message);
	ck_assert_str_eq(err.field, b->field);
	ck_assert_str_ne(err.message, "");
	/* evaluate refuses it too, naming the field, and scores nothing */
	ck_assert_int_eq(model_suite_evaluate(suite, outs, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_ptr_null(res.details);
	ck_assert_msg(strncmp(res.reason, "invalid suite: ", 15) == 0, "%s", res.reason);
	ck_assert_ptr_nonnull(strstr(res.reason, b->field));
	json_decref(suite);
	json_decref(outs);
}
END_TEST

START_TEST(test_suite_limits)
{
	struct model_error err;
	json_t *suite, *exps;
	char *big;
	int i;

	/* 1000 expectations accepted, 1001 refused */
	suite = unit_json("{\"name\":\"s\",\"expectations\":[]}");
	exps = json_object_get(suite, "expectations");
	for (i = 0; i < 1000; i++)
		json_array_append_new(exps, json_pack("{s:i,s:s}", "seq", 1, "equals", "x"));
	ck_assert_int_eq(model_suite_check(suite, &err), 0);
	json_array_append_new(exps, json_pack("{s:i,s:s}", "seq", 1, "equals", "x"));
	ck_assert_int_eq(model_suite_check(suite, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_LIMIT);
	ck_assert_str_eq(err.field, "expectations");
	json_decref(suite);

	/* a regex of 1024 bytes is accepted, 1025 refused */
	big = model_xmalloc(1026);
	memset(big, 'a', 1025);
	big[1024] = '\0';
	suite =
	    json_pack("{s:s, s:[{s:i, s:s}]}", "name", "s", "expectations", "seq", 1, "regex", big);
	ck_assert_int_eq(model_suite_check(suite, &err), 0);
	json_decref(suite);
	big[1024] = 'a';
	big[1025] = '\0';
	suite =
	    json_pack("{s:s, s:[{s:i, s:s}]}", "name", "s", "expectations", "seq", 1, "regex", big);
	ck_assert_int_eq(model_suite_check(suite, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_LIMIT);
	ck_assert_str_eq(err.field, "expectations[0].regex");
	json_decref(suite);
	free(big);

	/* a regex with a NUL (only a built document can hold one: the
	 * suite reader refuses \u0000) */
	suite = json_pack("{s:s, s:[{s:i, s:s%}]}", "name", "s", "expectations", "seq", 1, "regex",
	                  "a\0b", (size_t)3);
	ck_assert_ptr_nonnull(suite);
	ck_assert_int_eq(model_suite_check(suite, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_INVALID);
	ck_assert_str_eq(err.field, "expectations[0].regex");
	json_decref(suite);

	/* a long non-ASCII unknown key is cut at a character boundary */
	suite =
	    unit_json("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\","
	              "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	              "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x\":1}]}");
	ck_assert_int_eq(model_suite_check(suite, &err), -1);
	ck_assert_str_eq(err.field,
	                 "expectations[0]."
	                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	json_decref(suite);
}
END_TEST

START_TEST(test_suite_bad_outputs)
{
	struct model_score_result res;
	json_t *suite =
	    unit_json("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}");
	json_t *obj = json_object();
	json_t *arr = unit_json("[1]");

	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(model_suite_evaluate(suite, obj, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_str_eq(res.reason, "outputs are not an array");
	ck_assert_int_eq(model_suite_evaluate(suite, arr, &res), -1);
	ck_assert_str_eq(res.reason, "outputs[0] is not an object");
	ck_assert_ptr_null(res.details);
	json_decref(suite);
	json_decref(obj);
	json_decref(arr);
}
END_TEST

/* "name" and "name@N": the name and N (0 for the latest), or -1 with the
 * name emptied */
START_TEST(test_suite_ref_parse)
{
	static const struct {
		const char *ref;
		int rc, version;
		const char *name;
	} cases[] = {
	    {"walkthrough", 0, 0, "walkthrough"},
	    {"walkthrough@1", 0, 1, "walkthrough"},
	    {"a.b_c-d@42", 0, 42, "a.b_c-d"},
	    {"w@1000000000", 0, 1000000000, "w"},
	    {"w@1000000001", -1, 0, ""},
	    {"w@99999999999999999999", -1, 0, ""},
	    {"w@0", -1, 0, ""},
	    {"w@01", -1, 0, ""},
	    {"w@", -1, 0, ""},
	    {"w@-1", -1, 0, ""},
	    {"w@+1", -1, 0, ""},
	    {"w@1x", -1, 0, ""},
	    {"w@1@2", -1, 0, ""},
	    {"@1", -1, 0, ""},
	    {"", -1, 0, ""},
	    {"bad name", -1, 0, ""},
	    {".hidden", -1, 0, ""},
	    {"../etc@1", -1, 0, ""},
	};
	char name[MODEL_MAX_SUITE_NAME_BYTES + 1], long_ref[MODEL_MAX_SUITE_NAME_BYTES + 8];
	size_t i;
	int version;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		version = -7;
		ck_assert_msg(model_suite_ref_parse(cases[i].ref, name, sizeof(name), &version) ==
		                  cases[i].rc,
		              "%s", cases[i].ref);
		ck_assert_int_eq(version, cases[i].version);
		ck_assert_str_eq(name, cases[i].name);
	}
	ck_assert_int_eq(model_suite_ref_parse(NULL, name, sizeof(name), &version), -1);
	/* a name of 128 bytes fits; 129 is no suite name */
	memset(long_ref, 'x', MODEL_MAX_SUITE_NAME_BYTES);
	strcpy(long_ref + MODEL_MAX_SUITE_NAME_BYTES, "@3");
	ck_assert_int_eq(model_suite_ref_parse(long_ref, name, sizeof(name), &version), 0);
	ck_assert_int_eq(version, 3);
	ck_assert_uint_eq(strlen(name), MODEL_MAX_SUITE_NAME_BYTES);
	memset(long_ref, 'x', MODEL_MAX_SUITE_NAME_BYTES + 1);
	strcpy(long_ref + MODEL_MAX_SUITE_NAME_BYTES + 1, "@3");
	ck_assert_int_eq(model_suite_ref_parse(long_ref, name, sizeof(name), &version), -1);
	/* a buffer too small for the name */
	ck_assert_int_eq(model_suite_ref_parse("walkthrough", name, 5, &version), -1);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const evaluate[] = {test_suite_walkthrough,
	                                 test_suite_selection,
	                                 test_suite_repeated_key,
	                                 test_suite_weights_threshold,
	                                 test_suite_limits,
	                                 test_suite_bad_outputs,
	                                 test_suite_step_checks_every_step,
	                                 test_suite_json_path_names,
	                                 test_suite_ref_parse,
	                                 NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("suite");
	tc = unit_tcase(s, "suite", evaluate);
	tcase_add_loop_test(tc, test_suite_checks, 0,
	                    (int)(sizeof(one_checks) / sizeof(one_checks[0])));
	tcase_add_loop_test(tc, test_suite_step_checks, 0,
	                    (int)(sizeof(step_checks) / sizeof(step_checks[0])));
	tcase_add_loop_test(tc, test_suite_malformed, 0,
	                    (int)(sizeof(bad_suites) / sizeof(bad_suites[0])));
	return s;
}
