/*
 * Unit tests of the scoring port (Check): the builtin suite format and its
 * evaluation (model/suite.h), the verdict rules (model/verdict.h), and the
 * adapters none, builtin:<dir> and exec:<command> (fcgi/scorer/scorer*.h).
 *
 * The exec adapter runs the scripts tests/fixtures/scorer-*; the builtin
 * adapter reads tests/fixtures/suites and suites written to a temporary
 * directory. Fixtures are found through $srcdir (set by `make check`) or,
 * by hand, next to this source file.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/scorer/scorer.h"
#include "fcgi/scorer/scorer_builtin.h"
#include "fcgi/scorer/scorer_exec.h"
#include "model/alloc.h"
#include "model/error.h"
#include "model/scorer.h"
#include "model/suite.h"
#include "model/verdict.h"

/* ---- helpers ------------------------------------------------------------ */

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v;

	v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", text, jerr.text);
	return v;
}

/* The tree's top directory (srcdir under make check). */
static const char *top_dir(void)
{
	static char dir[4096];
	const char *srcdir = getenv("srcdir");
	const char *tail = "/tests/unit/test_scorer.c";
	size_t n;

	if (srcdir && *srcdir) {
		snprintf(dir, sizeof(dir), "%s", srcdir);
		return dir;
	}
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	n = strlen(dir);
	if (n >= strlen(tail) && strcmp(dir + n - strlen(tail), tail) == 0)
		dir[n - strlen(tail)] = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	return dir;
}

static const char *fixture(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", top_dir(), name);
	return path;
}

/* One output object as the store returns it. kind: NULL (ok) or an
 * error_kind ("mock_miss"). */
static void add_output(json_t *outs, const char *key, const char *output, const char *kind)
{
	json_t *o;

	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:o}", "seq",
	              (json_int_t)json_array_size(outs) + 1, "key", key, "input", "synthetic input",
	              "output", output, "status", kind ? "error" : "ok", "error_kind",
	              kind ? json_string(kind) : json_null());
	ck_assert_ptr_nonnull(o);
	json_array_append_new(outs, o);
}

/* The outputs of the page's walkthrough: step-1 resolves the mock, step-2
 * is a mock miss (sandbox page, "Exécuter un scénario généré"). */
static json_t *walkthrough_outputs(void)
{
	json_t *outs = json_array();

	add_output(outs, "step-1", "first synthetic account", NULL);
	add_output(outs, "step-2", "[[mock-miss:agent:user2@example.test]]", "mock_miss");
	return outs;
}

/* Evaluate suite text against outs; asserts it is scored; returns score. */
static double eval_ok(const char *suite_text, json_t *outs, struct model_score_result *res)
{
	json_t *suite = parse(suite_text);
	int rc;

	rc = model_suite_evaluate(suite, outs, res);
	ck_assert_msg(rc == 0, "not scored: %s", res->reason);
	ck_assert_int_eq(res->scored, 1);
	ck_assert_str_eq(res->reason, "");
	ck_assert_ptr_nonnull(res->details);
	json_decref(suite);
	return res->score;
}

/* details[i] field helpers */
static json_t *detail(const struct model_score_result *res, size_t i)
{
	json_t *d = json_array_get(res->details, i);

	ck_assert_msg(d != NULL, "no details[%zu]", i);
	return d;
}

static void assert_detail(const struct model_score_result *res, size_t i, json_int_t seq,
                          const char *key, int passed, const char *check, const char *message)
{
	json_t *d = detail(res, i);

	if (seq > 0)
		ck_assert_int_eq(json_integer_value(json_object_get(d, "seq")), seq);
	else
		ck_assert(json_is_null(json_object_get(d, "seq")));
	if (key)
		ck_assert_str_eq(json_string_value(json_object_get(d, "key")), key);
	else
		ck_assert(json_is_null(json_object_get(d, "key")));
	ck_assert_int_eq(json_is_true(json_object_get(d, "passed")), passed);
	ck_assert_str_eq(json_string_value(json_object_get(d, "check")), check);
	ck_assert_str_eq(json_string_value(json_object_get(d, "message")), message);
	ck_assert_int_eq(json_object_size(d), 5);
}

/* ---- suite names, none adapter ------------------------------------------- */

START_TEST(test_suite_name)
{
	char long_name[200];

	ck_assert_int_eq(model_suite_name_valid("walkthrough"), 1);
	ck_assert_int_eq(model_suite_name_valid("a"), 1);
	ck_assert_int_eq(model_suite_name_valid("v1.2_rc-3"), 1);
	ck_assert_int_eq(model_suite_name_valid("9lives"), 1);
	ck_assert_int_eq(model_suite_name_valid(NULL), 0);
	ck_assert_int_eq(model_suite_name_valid(""), 0);
	ck_assert_int_eq(model_suite_name_valid(".hidden"), 0);
	ck_assert_int_eq(model_suite_name_valid("-x"), 0);
	ck_assert_int_eq(model_suite_name_valid("../x"), 0);
	ck_assert_int_eq(model_suite_name_valid("a/b"), 0);
	ck_assert_int_eq(model_suite_name_valid("a b"), 0);
	ck_assert_int_eq(model_suite_name_valid("caf\xc3\xa9"), 0);
	memset(long_name, 'a', 128);
	long_name[128] = '\0';
	ck_assert_int_eq(model_suite_name_valid(long_name), 1);
	long_name[128] = 'a';
	long_name[129] = '\0';
	ck_assert_int_eq(model_suite_name_valid(long_name), 0);
}
END_TEST

START_TEST(test_none_adapter)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	char err[256];

	memset(&res, 0, sizeof(res));
	res.scored = 1;
	res.score = 1.0;
	res.passed = 1;
	ck_assert_int_eq(http_scorer_from_config("none", 5000, &s, err, sizeof(err)), 0);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_str_eq(s.ops->name, "none");
	ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_int_eq(res.passed, 0);
	ck_assert(res.score == 0.0);
	ck_assert_ptr_null(res.details);
	ck_assert_str_eq(res.reason, "no scorer adapter is wired");
	http_scorer_release(&s);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	json_decref(outs);
}
END_TEST

START_TEST(test_from_config_syntax)
{
	struct model_scorer s;
	char err[256], spec[4200];

	ck_assert_int_eq(http_scorer_spec_valid("none"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("builtin:/x"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("exec:/bin/true"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("exec:   "), 0);
	ck_assert_int_eq(http_scorer_spec_valid("exec:"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("builtin:"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("None"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("evals"), 0);
	ck_assert_int_eq(http_scorer_spec_valid(""), 0);
	ck_assert_int_eq(http_scorer_spec_valid(NULL), 0);

	ck_assert_int_eq(http_scorer_from_config("bogus", 5000, &s, err, sizeof(err)), -1);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_ptr_nonnull(strstr(err, "none, builtin:<dir> or exec:<command>"));
	ck_assert_int_eq(http_scorer_from_config("none", 99, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "timeout_ms"));
	ck_assert_int_eq(http_scorer_from_config("none", 600001, &s, err, sizeof(err)), -1);
	ck_assert_int_eq(http_scorer_from_config("builtin:/nonexistent/olivares-suites", 5000, &s,
	                                         err, sizeof(err)),
	                 -1);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/olivares-suites"));
	ck_assert_int_eq(
	    http_scorer_from_config("builtin:/etc/hostname", 5000, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a directory"));
	ck_assert_int_eq(
	    http_scorer_from_config("exec:/nonexistent/scorer", 5000, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not an executable file"));
	/* a file without execute permission */
	snprintf(spec, sizeof(spec), "exec:%s", fixture("suites/walkthrough.json"));
	ck_assert_int_eq(http_scorer_from_config(spec, 5000, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not an executable file"));
	/* a directory */
	ck_assert_int_eq(http_scorer_from_config("exec:/tmp", 5000, &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not an executable file"));
	ck_assert_int_eq(
	    http_scorer_from_config("exec:no-such-relative-scorer", 5000, &s, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(http_scorer_from_config("exec:/bin/true a b c d e f g h i j k l m n o p q "
	                                         "r s t u v w x y z 1 2 3 4 5 6",
	                                         5000, &s, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 32 words"));
	/* 32 words is the bound, not over it */
	ck_assert_int_eq(http_scorer_from_config("exec:/bin/true a b c d e f g h i j k l m n o p q "
	                                         "r s t u v w x y z 1 2 3 4 5",
	                                         5000, &s, err, sizeof(err)),
	                 0);
	ck_assert_str_eq(s.ops->name, "exec");
	http_scorer_release(&s);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
}
END_TEST

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
	json_t *suite, *outs = walkthrough_outputs();

	memset(&res, 0, sizeof(res));
	suite = json_load_file(fixture("suites/walkthrough.json"), JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(suite != NULL, "%s", jerr.text);
	ck_assert_int_eq(model_suite_evaluate(suite, outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 3);
	assert_detail(&res, 0, 1, "step-1", 1, "equals", "output equals the expected text");
	assert_detail(&res, 1, 1, "step-1", 1, "not_mock_miss", "step is not a mock miss");
	assert_detail(&res, 2, 2, "step-2", 0, "not_mock_miss", "step is a mock miss");
	model_score_result_clear(&res);
	ck_assert_ptr_null(res.details);
	ck_assert_int_eq(res.scored, 0);
	json_decref(suite);

	/* the strict twin: every weight 1, threshold 1.0 -> 2/3, not passed */
	suite = json_load_file(fixture("suites/walkthrough-strict.json"), JSON_REJECT_DUPLICATES,
	                       &jerr);
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

START_TEST(test_suite_checks)
{
	struct model_score_result res;
	json_t *outs = json_array();

	memset(&res, 0, sizeof(res));
	add_output(outs, "greet", "Hello, World", NULL);
	add_output(outs, "count", "42 items\n", NULL);
	add_output(outs, "miss", "[[mock-miss:agent:x]]", "mock_miss");

	/* equals: exact bytes (case, trailing newline) */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"greet\",\"equals\":"
	                  "\"Hello, World\"}]}",
	                  outs, &res) == 1.0);
	ck_assert_int_eq(res.passed, 1);
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"greet\",\"equals\":"
	                  "\"hello, world\"}]}",
	                  outs, &res) == 0.0);
	ck_assert_int_eq(res.passed, 0);
	assert_detail(&res, 0, 1, "greet", 0, "equals", "output differs from the expected text");
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"equals\":"
	                  "\"42 items\"}]}",
	                  outs, &res) == 0.0);
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"equals\":"
	                  "\"42 items\\n\"}]}",
	                  outs, &res) == 1.0);
	model_score_result_clear(&res);

	/* contains */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"contains\":\"o, W\"}]}",
	                  outs, &res) == 1.0);
	assert_detail(&res, 0, 1, "greet", 1, "contains", "output contains the expected text");
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"contains\":\"world\"}]}",
	                  outs, &res) == 0.0);
	assert_detail(&res, 0, 1, "greet", 0, "contains",
	              "output does not contain the expected text");
	model_score_result_clear(&res);
	/* the empty string is contained in every output */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"contains\":\"\"}]}", outs,
	                  &res) == 1.0);
	model_score_result_clear(&res);

	/* regex: POSIX extended, unanchored unless anchored */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"regex\":"
	                  "\"^[0-9]+ items\"}]}",
	                  outs, &res) == 1.0);
	assert_detail(&res, 0, 2, "count", 1, "regex", "output matches the regular expression");
	model_score_result_clear(&res);
	/* no REG_NEWLINE: "$" is the end of the output, not of a line */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"regex\":"
	                  "\"items$\"}]}",
	                  outs, &res) == 0.0);
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"regex\":"
	                  "\"items\\n$\"}]}",
	                  outs, &res) == 1.0);
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"count\",\"regex\":"
	                  "\"^[0-9]{3} items\"}]}",
	                  outs, &res) == 0.0);
	assert_detail(&res, 0, 2, "count", 0, "regex",
	              "output does not match the regular expression");
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"greet\",\"regex\":"
	                  "\"(Hello|Bye), W.r\"}]}",
	                  outs, &res) == 1.0);
	model_score_result_clear(&res);

	/* not_mock_miss */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"miss\",\"not_mock_miss\":"
	                  "true}]}",
	                  outs, &res) == 0.0);
	assert_detail(&res, 0, 3, "miss", 0, "not_mock_miss", "step is a mock miss");
	model_score_result_clear(&res);
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"greet\",\"not_mock_miss\":"
	                  "true}]}",
	                  outs, &res) == 1.0);
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

START_TEST(test_suite_selection)
{
	struct model_score_result res;
	json_t *outs = json_array();
	json_t *empty = json_array();

	memset(&res, 0, sizeof(res));
	add_output(outs, "a", "x", NULL);
	add_output(outs, "b", "y", "mock_miss");
	add_output(outs, "c", "x", NULL);

	/* "*": one line per step, each with the expectation's weight */
	ck_assert_double_eq(
	    eval_ok("{\"name\":\"s\",\"expectations\":[{\"step\":\"*\",\"equals\":\"x\"}]}", outs,
	            &res),
	    model_score_round(2.0 / 3.0));
	ck_assert_int_eq(json_array_size(res.details), 3);
	assert_detail(&res, 0, 1, "a", 1, "equals", "output equals the expected text");
	assert_detail(&res, 1, 2, "b", 0, "equals", "output differs from the expected text");
	assert_detail(&res, 2, 3, "c", 1, "equals", "output equals the expected text");
	model_score_result_clear(&res);

	/* seq picks the step by number, key by key */
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":3,\"equals\":\"x\"},"
	                  "{\"key\":\"b\",\"equals\":\"y\"}]}",
	                  outs, &res) == 1.0);
	assert_detail(&res, 0, 3, "c", 1, "equals", "output equals the expected text");
	assert_detail(&res, 1, 2, "b", 1, "equals", "output equals the expected text");
	model_score_result_clear(&res);

	/* a missing step fails, naming what was asked for */
	ck_assert(
	    eval_ok("{\"name\":\"s\",\"expectations\":[{\"seq\":4,\"equals\":\"x\"},"
	            "{\"key\":\"zz\",\"not_mock_miss\":true},{\"key\":\"a\",\"equals\":\"x\"}]}",
	            outs, &res) == model_score_round(1.0 / 3.0));
	assert_detail(&res, 0, 4, NULL, 0, "equals", "no such step");
	assert_detail(&res, 1, 0, "zz", 0, "not_mock_miss", "no such step");
	model_score_result_clear(&res);

	/* "*" over a run without steps is one failed line, not a vacuous pass */
	ck_assert(eval_ok("{\"name\":\"s\",\"threshold\":0,\"expectations\":[{\"step\":\"*\","
	                  "\"not_mock_miss\":true}]}",
	                  empty, &res) == 0.0);
	ck_assert_int_eq(res.passed, 1); /* threshold 0: 0 >= 0 */
	assert_detail(&res, 0, 0, NULL, 0, "not_mock_miss", "run has no steps");
	model_score_result_clear(&res);

	/* an output that is not a string fails content checks */
	json_object_set_new(json_array_get(outs, 0), "output", json_null());
	ck_assert(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"a\",\"contains\":\"\"}]}",
	                  outs, &res) == 0.0);
	assert_detail(&res, 0, 1, "a", 0, "contains", "step has no output");
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
	add_output(outs, "lookup", "first synthetic account", NULL);
	add_output(outs, "other", "x", NULL);
	add_output(outs, "lookup", "second synthetic account", NULL);

	/* the first holds, the last does not: 1 of 2, not a pass */
	ck_assert_double_eq(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"lookup\","
	                            "\"equals\":\"first synthetic account\",\"weight\":2}]}",
	                            outs, &res),
	                    0.5);
	ck_assert_int_eq(res.passed, 0);
	ck_assert_int_eq(json_array_size(res.details), 2);
	assert_detail(&res, 0, 1, "lookup", 1, "equals", "output equals the expected text");
	assert_detail(&res, 1, 3, "lookup", 0, "equals", "output differs from the expected text");
	model_score_result_clear(&res);

	/* the last holds, the first does not: the same, the other way round */
	ck_assert_double_eq(eval_ok("{\"name\":\"s\",\"expectations\":[{\"key\":\"lookup\","
	                            "\"equals\":\"second synthetic account\"}]}",
	                            outs, &res),
	                    0.5);
	ck_assert_int_eq(res.passed, 0);
	assert_detail(&res, 0, 1, "lookup", 0, "equals", "output differs from the expected text");
	assert_detail(&res, 1, 3, "lookup", 1, "equals", "output equals the expected text");
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
	assert_detail(&res, 0, 1, "lookup", 1, "contains", "output contains the expected text");
	assert_detail(&res, 1, 3, "lookup", 1, "contains", "output contains the expected text");
	assert_detail(&res, 2, 2, "other", 0, "equals", "output differs from the expected text");
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

START_TEST(test_suite_weights_threshold)
{
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();

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
};

START_TEST(test_suite_malformed)
{
	const struct bad_suite *b = &bad_suites[_i];
	struct model_error err;
	struct model_score_result res;
	json_t *suite = parse(b->text);
	json_t *outs = walkthrough_outputs();

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
	suite = parse("{\"name\":\"s\",\"expectations\":[]}");
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
	suite = parse("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\","
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
	json_t *suite = parse("{\"name\":\"s\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}");
	json_t *obj = json_object();
	json_t *arr = parse("[1]");

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

/* ---- verdict rules ------------------------------------------------------- */

struct decided {
	int rc;
	enum model_verdict v;
	int has_delta;
	double delta;
	char why[512];
};

static struct decided decide(const char *bstatus, int bscored, double bscore, const char *breason,
                             const char *cstatus, int cscored, double cscore, const char *creason,
                             double tol)
{
	struct model_verdict_side b = {bstatus, bscored, bscore, breason};
	struct model_verdict_side c = {cstatus, cscored, cscore, creason};
	struct decided d;

	memset(&d, 0, sizeof(d));
	d.v = (enum model_verdict) - 1;
	d.has_delta = -1;
	d.rc =
	    model_verdict_decide(&b, &c, tol, &d.v, &d.has_delta, &d.delta, d.why, sizeof(d.why));
	return d;
}

/* both scored and completed */
static struct decided scores(double b, double c, double tol)
{
	return decide("completed", 1, b, NULL, "completed", 1, c, NULL, tol);
}

START_TEST(test_verdict_scored)
{
	struct decided d;

	d = scores(0.5, 0.75, 0.0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_IMPROVED);
	ck_assert_int_eq(d.has_delta, 1);
	ck_assert(d.delta == 0.25);
	ck_assert_str_ne(d.why, "");

	d = scores(0.75, 0.5, 0.0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_REGRESSED);
	ck_assert(d.delta == -0.25);

	d = scores(0.75, 0.75, 0.0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert_int_eq(d.has_delta, 1);
	ck_assert(d.delta == 0.0);
	ck_assert(!signbit(d.delta));

	/* within the tolerance either way */
	d = scores(0.5, 0.55, 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	d = scores(0.55, 0.5, 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);

	/* extremes */
	d = scores(0.0, 1.0, 1.0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == 1.0);
	d = scores(0.0, 1.0, 0.999);
	ck_assert_int_eq(d.v, MODEL_VERDICT_IMPROVED);
	d = scores(1.0, 0.0, 0.0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_REGRESSED);
	ck_assert(d.delta == -1.0);
}
END_TEST

START_TEST(test_verdict_tolerance_edges)
{
	struct decided d;

	/* delta exactly = tolerance: unchanged (the rule is strict >) */
	d = scores(0.5, 0.75, 0.25);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == 0.25);
	d = scores(0.75, 0.5, 0.25);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == -0.25);
	/* binary noise: 0.8 - 0.7 is 0.10000000000000009 in doubles, 0.6 -
	 * 0.5 is 0.09999999999999998; both are recorded as 0.1 and sit on
	 * the edge of a 0.1 tolerance */
	ck_assert(0.8 - 0.7 > 0.1);
	d = scores(0.7, 0.8, 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == 0.1);
	d = scores(0.8, 0.7, 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == -0.1);
	d = scores(0.5, 0.6, 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == 0.1);
	/* just past the edge, at the precision kept (1e-9) */
	d = scores(0.5, 0.750000001, 0.25);
	ck_assert_int_eq(d.v, MODEL_VERDICT_IMPROVED);
	d = scores(0.750000001, 0.5, 0.25);
	ck_assert_int_eq(d.v, MODEL_VERDICT_REGRESSED);
	/* below the precision kept: the same score */
	d = scores(0.5, 0.5000000000001, 0.0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_UNCHANGED);
	ck_assert(d.delta == 0.0);
	/* the same comparison twice gives the same verdict and delta */
	{
		struct decided a = scores(1.0 / 3.0, 2.0 / 3.0, 0.05);
		struct decided b = scores(1.0 / 3.0, 2.0 / 3.0, 0.05);

		ck_assert_int_eq(a.v, MODEL_VERDICT_IMPROVED);
		ck_assert_int_eq(a.v, b.v);
		ck_assert(a.delta == b.delta);
		ck_assert(a.delta == 0.333333333);
		ck_assert_str_eq(a.why, b.why);
	}
}
END_TEST

START_TEST(test_verdict_inconclusive)
{
	struct decided d;

	d = decide("failed", 0, 0, "runner timed out after 10000 ms", "completed", 1, 0.9, NULL, 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_int_eq(d.has_delta, 0);
	ck_assert_str_eq(d.why, "baseline run failed: runner timed out after 10000 ms");

	d = decide("completed", 1, 0.9, NULL, "failed", 0, 0, "agent crashed", 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_int_eq(d.has_delta, 0);
	ck_assert_str_eq(d.why, "candidate run failed: agent crashed");

	/* a failed run that was (somehow) scored is still inconclusive */
	d = decide("completed", 1, 0.2, NULL, "failed", 1, 0.9, NULL, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(d.why, "candidate run failed");

	d = decide("degraded", 1, 0.5, "gvisor unavailable", "completed", 1, 0.9, NULL, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_int_eq(d.has_delta, 0);
	ck_assert_str_eq(d.why, "baseline run degraded: gvisor unavailable");

	d = decide("completed", 1, 0.5, NULL, "degraded", 0, 0, NULL, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(d.why, "candidate run degraded");

	/* not scored: the store's "executed, not scored: " prefix is dropped */
	d = decide("completed", 0, 0, "executed, not scored: no scorer adapter is wired",
	           "completed", 1, 0.5, NULL, 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_int_eq(d.has_delta, 0);
	ck_assert_str_eq(d.why, "baseline run not scored: no scorer adapter is wired");

	d = decide("completed", 1, 0.5, NULL, "completed", 0, 0,
	           "executed, not scored: scorer timed out after 5000 ms", 0);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(d.why, "candidate run not scored: scorer timed out after 5000 ms");

	d = decide("completed", 0, 0, NULL, "completed", 1, 0.5, NULL, 0);
	ck_assert_str_eq(d.why, "baseline run not scored");

	/* both sides: both named, baseline first */
	d = decide("completed", 0, 0, "executed, not scored: unknown suite x", "failed", 0, 0,
	           "agent error", 0.1);
	ck_assert_int_eq(d.v, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_int_eq(d.has_delta, 0);
	ck_assert_str_eq(d.why, "baseline run not scored: unknown suite x; candidate run failed: "
	                        "agent error");

	/* why may be omitted */
	{
		struct model_verdict_side b = {"completed", 1, 0.5, NULL};
		enum model_verdict v;
		int hd;
		double delta;

		ck_assert_int_eq(model_verdict_decide(&b, &b, 0, &v, &hd, &delta, NULL, 0), 0);
		ck_assert_int_eq(v, MODEL_VERDICT_UNCHANGED);
	}
}
END_TEST

START_TEST(test_verdict_refused)
{
	struct model_verdict_side ok = {"completed", 1, 0.5, NULL};
	struct model_verdict_side nostatus = {NULL, 1, 0.5, NULL};
	struct model_verdict_side badscore = {"completed", 1, 1.5, NULL};
	struct model_verdict_side nanscore = {"completed", 1, NAN, NULL};
	enum model_verdict v;
	int hd;
	double delta;
	char why[128];

	ck_assert_int_eq(scores(0.5, 0.5, -0.1).rc, -1);
	ck_assert_int_eq(scores(0.5, 0.5, 1.1).rc, -1);
	ck_assert_int_eq(scores(0.5, 0.5, NAN).rc, -1);
	ck_assert_int_eq(scores(0.5, 0.5, -0.0).rc, 0);
	ck_assert_int_eq(scores(0.5, 0.5, 0.0).rc, 0);
	ck_assert_int_eq(scores(0.5, 0.5, 1.0).rc, 0);
	ck_assert_int_eq(model_verdict_decide(&nostatus, &ok, 0, &v, &hd, &delta, why, sizeof(why)),
	                 -1);
	ck_assert_int_eq(model_verdict_decide(&ok, &nostatus, 0, &v, &hd, &delta, why, sizeof(why)),
	                 -1);
	ck_assert_int_eq(model_verdict_decide(NULL, &ok, 0, &v, &hd, &delta, why, sizeof(why)), -1);
	ck_assert_int_eq(model_verdict_decide(&badscore, &ok, 0, &v, &hd, &delta, why, sizeof(why)),
	                 -1);
	ck_assert_int_eq(model_verdict_decide(&ok, &nanscore, 0, &v, &hd, &delta, why, sizeof(why)),
	                 -1);
}
END_TEST

START_TEST(test_verdict_names_gate)
{
	ck_assert_str_eq(model_verdict_name(MODEL_VERDICT_IMPROVED), "improved");
	ck_assert_str_eq(model_verdict_name(MODEL_VERDICT_REGRESSED), "regressed");
	ck_assert_str_eq(model_verdict_name(MODEL_VERDICT_UNCHANGED), "unchanged");
	ck_assert_str_eq(model_verdict_name(MODEL_VERDICT_INCONCLUSIVE), "inconclusive");
	ck_assert_int_eq(model_verdict_gate_passes(MODEL_VERDICT_IMPROVED), 1);
	ck_assert_int_eq(model_verdict_gate_passes(MODEL_VERDICT_UNCHANGED), 1);
	ck_assert_int_eq(model_verdict_gate_passes(MODEL_VERDICT_REGRESSED), 0);
	ck_assert_int_eq(model_verdict_gate_passes(MODEL_VERDICT_INCONCLUSIVE), 0);
	ck_assert_int_eq(model_verdict_gate_passes((enum model_verdict)42), 0);
	ck_assert_float_eq(MODEL_DEFAULT_TOLERANCE, 0.0);
}
END_TEST

/* ---- builtin adapter ----------------------------------------------------- */

static char tmp_root[256];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* tmp_root/suites (the adapter's directory) and tmp_root/outside. */
static void builtin_setup(void)
{
	char path[512];

	snprintf(tmp_root, sizeof(tmp_root), "/tmp/olv-test-scorer-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp_root));
	snprintf(path, sizeof(path), "%s/suites", tmp_root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/outside", tmp_root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static void builtin_teardown(void)
{
	rm_rf(tmp_root);
}

static int builtin_score(struct model_scorer *s, const char *suite, json_t *outs,
                         struct model_score_result *res)
{
	return s->ops->score(s->ctx, suite, outs, res);
}

static void assert_not_scored(const struct model_score_result *res, const char *reason)
{
	ck_assert_int_eq(res->scored, 0);
	ck_assert_int_eq(res->passed, 0);
	ck_assert(res->score == 0.0);
	ck_assert_ptr_null(res->details);
	ck_assert_str_eq(res->reason, reason);
}

START_TEST(test_builtin_fixture_dir)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	char spec[4200], err[256];

	memset(&res, 0, sizeof(res));
	snprintf(spec, sizeof(spec), "builtin:%s", fixture("suites"));
	ck_assert_msg(http_scorer_from_config(spec, 5000, &s, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(s.ops->name, "builtin");
	ck_assert_int_eq(builtin_score(&s, "walkthrough", outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 3);
	/* no state between calls: the same answer again */
	ck_assert_int_eq(builtin_score(&s, "walkthrough", outs, &res), 0);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(json_array_size(res.details), 3);
	ck_assert_int_eq(builtin_score(&s, "walkthrough-strict", outs, &res), 0);
	ck_assert_int_eq(res.passed, 0);
	ck_assert_int_eq(builtin_score(&s, "nope", outs, &res), -1);
	assert_not_scored(&res, "unknown suite nope");
	/* README.md is not a suite: only <name>.json is looked at */
	ck_assert_int_eq(builtin_score(&s, "README", outs, &res), -1);
	assert_not_scored(&res, "unknown suite README");
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

START_TEST(test_builtin_confinement)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	char dir[512], outside[512], link[600], err[256];
	static const char good[] =
	    "{\"name\":\"g\",\"expectations\":[{\"key\":\"step-1\",\"contains\":\"synthetic\"}]}";

	memset(&res, 0, sizeof(res));
	snprintf(dir, sizeof(dir), "%s/suites", tmp_root);
	snprintf(outside, sizeof(outside), "%s/outside", tmp_root);
	write_file(dir, "good.json", good);
	write_file(outside, "x.json", good);
	write_file(tmp_root, "x.json", good);
	ck_assert_int_eq(http_scorer_builtin_new(dir, &s, err, sizeof(err)), 0);

	ck_assert_int_eq(builtin_score(&s, "good", outs, &res), 0);
	ck_assert(res.score == 1.0);

	/* "../x" never reaches the file system (and would be outside) */
	ck_assert_int_eq(builtin_score(&s, "../x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	ck_assert_int_eq(builtin_score(&s, "../outside/x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	ck_assert_int_eq(builtin_score(&s, "", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");

	/* a symlink out of the directory is refused, however it is named */
	snprintf(link, sizeof(link), "%s/evil.json", dir);
	ck_assert_int_eq(symlink("../outside/x.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "evil", outs, &res), -1);
	assert_not_scored(&res, "suite evil is outside the suites directory");
	snprintf(link, sizeof(link), "%s/abs.json", dir);
	ck_assert_int_eq(symlink("/etc/passwd", link), 0);
	ck_assert_int_eq(builtin_score(&s, "abs", outs, &res), -1);
	assert_not_scored(&res, "suite abs is outside the suites directory");
	/* a directory link whose target shares the prefix "suites" */
	snprintf(link, sizeof(link), "%s/suites-evil", tmp_root);
	ck_assert_int_eq(mkdir(link, 0700), 0);
	write_file(link, "p.json", good);
	snprintf(link, sizeof(link), "%s/p.json", dir);
	ck_assert_int_eq(symlink("../suites-evil/p.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "p", outs, &res), -1);
	assert_not_scored(&res, "suite p is outside the suites directory");
	/* a symlink inside the directory is fine */
	snprintf(link, sizeof(link), "%s/alias.json", dir);
	ck_assert_int_eq(symlink("good.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "alias", outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	/* a dangling link is an unknown suite */
	snprintf(link, sizeof(link), "%s/dangling.json", dir);
	ck_assert_int_eq(symlink("missing.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "dangling", outs, &res), -1);
	assert_not_scored(&res, "unknown suite dangling");
	model_score_result_clear(&res);
	http_scorer_release(&s);

	/* the directory itself may be reached through a symlink */
	snprintf(link, sizeof(link), "%s/suites-link", tmp_root);
	ck_assert_int_eq(symlink("suites", link), 0);
	ck_assert_int_eq(http_scorer_builtin_new(link, &s, err, sizeof(err)), 0);
	ck_assert_int_eq(builtin_score(&s, "good", outs, &res), 0);
	ck_assert_int_eq(builtin_score(&s, "evil", outs, &res), -1);
	assert_not_scored(&res, "suite evil is outside the suites directory");
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

START_TEST(test_builtin_bad_files)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	char dir[512], path[600], err[256];
	FILE *f;
	long i;

	memset(&res, 0, sizeof(res));
	snprintf(dir, sizeof(dir), "%s/suites", tmp_root);
	ck_assert_int_eq(http_scorer_builtin_new(dir, &s, err, sizeof(err)), 0);

	write_file(dir, "broken.json", "{\"name\":\"b\",");
	ck_assert_int_eq(builtin_score(&s, "broken", outs, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_msg(strncmp(res.reason, "suite broken is not valid JSON: ", 32) == 0, "%s",
	              res.reason);

	write_file(
	    dir, "dup.json",
	    "{\"name\":\"d\",\"name\":\"e\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}");
	ck_assert_int_eq(builtin_score(&s, "dup", outs, &res), -1);
	ck_assert_msg(strncmp(res.reason, "suite dup is not valid JSON: duplicate", 38) == 0, "%s",
	              res.reason);

	write_file(dir, "bad.json",
	           "{\"name\":\"b\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"weight\":0}]}");
	ck_assert_int_eq(builtin_score(&s, "bad", outs, &res), -1);
	assert_not_scored(&res, "invalid suite bad: expectations[0].weight: weight must be > 0 and "
	                        "<= 1000000");

	write_file(dir, "re.json",
	           "{\"name\":\"r\",\"expectations\":[{\"seq\":1,\"regex\":\"[\"}]}");
	ck_assert_int_eq(builtin_score(&s, "re", outs, &res), -1);
	ck_assert_msg(strncmp(res.reason, "invalid suite re: expectations[0].regex: invalid", 48) ==
	                  0,
	              "%s", res.reason);

	/* a directory named like a suite */
	snprintf(path, sizeof(path), "%s/d.json", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(builtin_score(&s, "d", outs, &res), -1);
	assert_not_scored(&res, "suite d: not a regular file");

	/* over 1 MiB: refused, even though it is valid JSON */
	snprintf(path, sizeof(path), "%s/huge.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"name\":\"h\",\"expectations\":[{\"seq\":1,\"equals\":\"", f);
	for (i = 0; i < HTTP_SCORER_SUITE_MAX_BYTES; i++)
		fputc('x', f);
	fputs("\"}]}", f);
	fclose(f);
	ck_assert_int_eq(builtin_score(&s, "huge", outs, &res), -1);
	assert_not_scored(&res, "suite huge: larger than 1048576 bytes");

	/* just under the cap is read */
	snprintf(path, sizeof(path), "%s/big.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"name\":\"h\",\"expectations\":[{\"seq\":1,\"contains\":\"", f);
	for (i = 0; i < HTTP_SCORER_SUITE_MAX_BYTES - 100; i++)
		fputc('x', f);
	fputs("\"}]}", f);
	fclose(f);
	ck_assert_int_eq(builtin_score(&s, "big", outs, &res), 0);
	ck_assert(res.score == 0.0);

	/* unreadable (skipped as root, who reads anything) */
	if (geteuid() != 0) {
		write_file(dir, "secret.json", "{}");
		snprintf(path, sizeof(path), "%s/secret.json", dir);
		ck_assert_int_eq(chmod(path, 0), 0);
		ck_assert_int_eq(builtin_score(&s, "secret", outs, &res), -1);
		ck_assert_ptr_nonnull(strstr(res.reason, "Permission denied"));
	}
	model_score_result_clear(&res);
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

/* ---- exec adapter -------------------------------------------------------- */

static int exec_make(const char *fixture_name, int timeout_ms, struct model_scorer *s)
{
	char spec[4200], err[256];
	int rc;

	snprintf(spec, sizeof(spec), "exec:%s", fixture(fixture_name));
	rc = http_scorer_from_config(spec, timeout_ms, s, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: %s", spec, err);
	ck_assert_str_eq(s->ops->name, "exec");
	return rc;
}

/* Run fixture scorer name on the walkthrough; returns score()'s value. */
static int exec_run(const char *name, int timeout_ms, struct model_score_result *res)
{
	struct model_scorer s;
	json_t *outs = walkthrough_outputs();
	int rc;

	exec_make(name, timeout_ms, &s);
	memset(res, 0, sizeof(*res));
	rc = s.ops->score(s.ctx, "walkthrough", outs, res);
	http_scorer_release(&s);
	json_decref(outs);
	return rc;
}

START_TEST(test_exec_good)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	json_t *input;
	char *in;
	char want[128];
	int k;

	/* the exact bytes the scorer should see on stdin: a step's time as
	 * the API writes it, 0.137 (jansson's default, 17 digits, writes
	 * 0.13700000000000001) */
	json_object_set_new(json_array_get(outs, 0), "duration_ms", json_real(0.137));
	input = json_pack("{s:s, s:O}", "suite", "walkthrough", "outputs", outs);
	in = json_dumps(input, JSON_COMPACT | JSON_REAL_PRECISION(15));
	ck_assert_ptr_nonnull(strstr(in, "\"duration_ms\":0.137}"));
	snprintf(want, sizeof(want), "suite=walkthrough bytes=%zu", strlen(in));
	memset(&res, 0, sizeof(res));
	exec_make("scorer-good", 5000, &s);
	for (k = 0; k < 3; k++) { /* no state between calls */
		ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), 0);
		ck_assert_int_eq(res.scored, 1);
		ck_assert(res.score == 0.5);
		ck_assert_int_eq(res.passed, 1);
		ck_assert_str_eq(res.reason, "");
		ck_assert_int_eq(json_array_size(res.details), 1);
		assert_detail(&res, 0, 1, "step-1", 1, "stdin", want);
	}
	/* an invalid suite name is refused before anything is started */
	ck_assert_int_eq(s.ops->score(s.ctx, "../x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	model_score_result_clear(&res);
	http_scorer_release(&s);
	free(in);
	json_decref(input);
	json_decref(outs);
}
END_TEST

START_TEST(test_exec_empty_environment)
{
	struct model_score_result res;
	int fd;

	/* something to leak if the adapter passed the environment or fds on */
	ck_assert_int_eq(setenv("OLV_TEST_SECRET", "do-not-pass", 1), 0);
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 57), 57);
	close(fd);
	ck_assert(fcntl(57, F_GETFD) >= 0 && !(fcntl(57, F_GETFD) & FD_CLOEXEC));

	ck_assert_int_eq(exec_run("scorer-env", 5000, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert_str_eq(json_string_value(json_object_get(detail(&res, 0), "message")),
	                 "environ=0 fd57=closed");
	model_score_result_clear(&res);
	close(57);
}
END_TEST

/* Number of live (not zombie) processes in process group pgid, after
 * waiting up to 2 s for SIGKILLed ones to die: members reparented to a
 * pid 1 that does not reap stay zombies, which are dead. */
static int group_alive(pid_t pgid)
{
	char path[300], buf[512];
	const char *p;
	struct dirent *de;
	DIR *d;
	FILE *f;
	int alive = 0, tries;
	char state;
	long pgrp;

	for (tries = 0; tries < 200; tries++) {
		alive = 0;
		d = opendir("/proc");
		ck_assert_ptr_nonnull(d);
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f)) {
				/* after "pid (comm)": state ppid pgrp */
				p = strrchr(buf, ')');
				if (p && sscanf(p + 1, " %c %*d %ld", &state, &pgrp) == 2 &&
				    pgrp == (long)pgid && state != 'Z')
					alive++;
			}
			fclose(f);
		}
		closedir(d);
		if (!alive)
			break;
		usleep(10000);
	}
	return alive;
}

START_TEST(test_exec_timeout)
{
	struct model_scorer s;
	struct model_score_result res;
	struct timespec t0, t1;
	json_t *outs = walkthrough_outputs();
	char dir[] = "/tmp/olv-test-hang-XXXXXX";
	char pidfile[64], spec[4300], err[256];
	double elapsed;
	long pgid = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
	snprintf(spec, sizeof(spec), "exec:%s %s", fixture("scorer-hang"), pidfile);
	ck_assert_int_eq(http_scorer_from_config(spec, 300, &s, err, sizeof(err)), 0);
	memset(&res, 0, sizeof(res));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_not_scored(&res, "scorer timed out after 300 ms");
	ck_assert_msg(elapsed >= 0.29 && elapsed < 3.0, "took %.3f s", elapsed);
	/* the whole group is gone, the background sleeper included */
	f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &pgid), 1);
	fclose(f);
	ck_assert_int_gt(pgid, 1);
	ck_assert_msg(group_alive((pid_t)pgid) == 0, "process group %ld still has live members",
	              pgid);
	http_scorer_release(&s);
	json_decref(outs);
	unlink(pidfile);
	rmdir(dir);
}
END_TEST

START_TEST(test_exec_failures)
{
	struct model_score_result res;

	ck_assert_int_eq(exec_run("scorer-crash", 5000, &res), -1);
	assert_not_scored(&res, "scorer killed by SIGSEGV");

	ck_assert_int_eq(exec_run("scorer-exit3", 5000, &res), -1);
	assert_not_scored(&res, "scorer exited with status 3");

	ck_assert_int_eq(exec_run("scorer-garbage", 5000, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_ptr_null(res.details);
	ck_assert_msg(strncmp(res.reason, "scorer answered invalid JSON: ", 30) == 0 &&
	                  strlen(res.reason) > 30,
	              "%s", res.reason);

	ck_assert_int_eq(exec_run("scorer-out-of-range", 5000, &res), -1);
	assert_not_scored(&res, "scorer answer: score 1.5 is outside [0, 1]");

	ck_assert_int_eq(exec_run("scorer-no-score", 5000, &res), -1);
	assert_not_scored(&res, "scorer answer: score is missing");

	ck_assert_int_eq(exec_run("scorer-flood", 5000, &res), -1);
	assert_not_scored(&res, "scorer answered more than 1048576 bytes");
}
END_TEST

/* Answers checked field by field: /bin/echo as a scorer prints its
 * arguments, so the command line is the answer (it never reads stdin). */
START_TEST(test_exec_answer_shapes)
{
	static const struct {
		const char *answer;
		int scored;
		const char *reason;
	} cases[] = {
	    {"{\"score\":0,\"passed\":false}", 1, ""},
	    {"{\"score\":1,\"passed\":true,\"details\":[]}", 1, ""},
	    {"{\"score\":0.25,\"passed\":false,\"details\":[{\"passed\":false,\"seq\":2,\"key\":"
	     "null,\"check\":\"c\",\"message\":\"m\"}]}",
	     1, ""},
	    {"[1]", 0, "scorer answer: not a JSON object"},
	    {"{\"score\":\"1\",\"passed\":true}", 0, "scorer answer: score must be a number"},
	    {"{\"score\":-0.01,\"passed\":true}", 0,
	     "scorer answer: score -0.01 is outside [0, 1]"},
	    {"{\"score\":1}", 0, "scorer answer: passed must be true or false"},
	    {"{\"score\":1,\"passed\":\"yes\"}", 0, "scorer answer: passed must be true or false"},
	    {"{\"score\":1,\"passed\":true,\"verdict\":\"great\"}", 0,
	     "scorer answer: unknown field \"verdict\""},
	    {"{\"score\":1,\"passed\":true,\"details\":{}}", 0,
	     "scorer answer: details must be an array"},
	    {"{\"score\":1,\"passed\":true,\"details\":[3]}", 0,
	     "scorer answer: details[0] is not an object"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"seq\":1}]}", 0,
	     "scorer answer: details[0].passed must be true or false"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"passed\":true,\"seq\":\"1\"}]}", 0,
	     "scorer answer: details[0].seq has the wrong type"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"passed\":true,\"x\":1}]}", 0,
	     "scorer answer: details[0] has an unknown field \"x\""},
	    {"{\"score\":1,\"passed\":true,\"score\":0}", 0, NULL},
	    {"{\"score\":1,\"passed\":true} {}", 0, NULL},
	};
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = walkthrough_outputs();
	char spec[512], err[256];
	size_t i;
	int rc;

	memset(&res, 0, sizeof(res));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the command line splits on spaces and echo joins its
		 * arguments with one: single spaces survive */
		snprintf(spec, sizeof(spec), "exec:/bin/echo %s", cases[i].answer);
		ck_assert_int_eq(http_scorer_from_config(spec, 5000, &s, err, sizeof(err)), 0);
		rc = s.ops->score(s.ctx, "walkthrough", outs, &res);
		ck_assert_msg(rc == (cases[i].scored ? 0 : -1), "%s: %s", cases[i].answer,
		              res.reason);
		ck_assert_int_eq(res.scored, cases[i].scored);
		if (cases[i].reason)
			ck_assert_str_eq(res.reason, cases[i].reason);
		else
			ck_assert_msg(strncmp(res.reason, "scorer answered invalid JSON: ", 30) ==
			                  0,
			              "%s", res.reason);
		if (!cases[i].scored)
			ck_assert_ptr_null(res.details);
		http_scorer_release(&s);
	}
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

/* The worker's signal dispositions are put back, and a SIGCHLD of SIG_IGN
 * (which would auto-reap) does not hide the scorer's exit status. */
START_TEST(test_exec_signals_restored)
{
	struct sigaction ign, cur;
	struct model_score_result res;

	memset(&ign, 0, sizeof(ign));
	sigemptyset(&ign.sa_mask);
	ign.sa_handler = SIG_IGN;
	ck_assert_int_eq(sigaction(SIGCHLD, &ign, NULL), 0);
	ign.sa_handler = SIG_DFL;
	ck_assert_int_eq(sigaction(SIGPIPE, &ign, NULL), 0);

	ck_assert_int_eq(exec_run("scorer-exit3", 5000, &res), -1);
	assert_not_scored(&res, "scorer exited with status 3");
	ck_assert_int_eq(exec_run("scorer-good", 5000, &res), 0);
	model_score_result_clear(&res);

	ck_assert_int_eq(sigaction(SIGCHLD, NULL, &cur), 0);
	ck_assert_ptr_eq((void *)cur.sa_handler, (void *)SIG_IGN);
	ck_assert_int_eq(sigaction(SIGPIPE, NULL, &cur), 0);
	ck_assert_ptr_eq((void *)cur.sa_handler, (void *)SIG_DFL);
}
END_TEST

/* ---- main ---------------------------------------------------------------- */

static Suite *scorer_suite(void)
{
	Suite *s = suite_create("scorer");
	TCase *tc;

	tc = tcase_create("model");
	tcase_add_test(tc, test_suite_name);
	tcase_add_test(tc, test_none_adapter);
	tcase_add_test(tc, test_from_config_syntax);
	tcase_add_test(tc, test_suite_walkthrough);
	tcase_add_test(tc, test_suite_checks);
	tcase_add_test(tc, test_suite_selection);
	tcase_add_test(tc, test_suite_repeated_key);
	tcase_add_test(tc, test_suite_weights_threshold);
	tcase_add_loop_test(tc, test_suite_malformed, 0,
	                    (int)(sizeof(bad_suites) / sizeof(bad_suites[0])));
	tcase_add_test(tc, test_suite_limits);
	tcase_add_test(tc, test_suite_bad_outputs);
	suite_add_tcase(s, tc);

	tc = tcase_create("verdict");
	tcase_add_test(tc, test_verdict_scored);
	tcase_add_test(tc, test_verdict_tolerance_edges);
	tcase_add_test(tc, test_verdict_inconclusive);
	tcase_add_test(tc, test_verdict_refused);
	tcase_add_test(tc, test_verdict_names_gate);
	suite_add_tcase(s, tc);

	tc = tcase_create("builtin");
	tcase_add_checked_fixture(tc, builtin_setup, builtin_teardown);
	tcase_add_test(tc, test_builtin_fixture_dir);
	tcase_add_test(tc, test_builtin_confinement);
	tcase_add_test(tc, test_builtin_bad_files);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("exec");
	tcase_add_test(tc, test_exec_good);
	tcase_add_test(tc, test_exec_empty_environment);
	tcase_add_test(tc, test_exec_timeout);
	tcase_add_test(tc, test_exec_failures);
	tcase_add_test(tc, test_exec_answer_shapes);
	tcase_add_test(tc, test_exec_signals_restored);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(scorer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
