/*
 * Unit tests of the JUnit export (fcgi/export/junit.c), Check: a scored
 * run's cases are its expectations (a passing run has no <failure>, a mock
 * miss no expectation failed on is a property, a failed expectation of a
 * run that did not pass is a failure with the detail's message); an
 * unscored run keeps one case per step; a comparison has a case per side
 * and one for the verdict. Every document is validated against
 * tests/fixtures/junit.xsd (OLV_JUNIT_XSD), the schema of the e2e tests.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <libxml/xpath.h>

#include "fcgi/export/junit.h"
#include "tests/unit/unit.h"

#ifndef OLV_JUNIT_XSD
#error "OLV_JUNIT_XSD must name tests/fixtures/junit.xsd"
#endif

/* ---- helpers ------------------------------------------------------------ */

/* xml parsed and validated against the schema; a test failure otherwise.
 * Caller xmlFreeDoc. */
static xmlDocPtr parse_valid(const char *xml, size_t len)
{
	xmlSchemaParserCtxtPtr pctx;
	xmlSchemaValidCtxtPtr vctx;
	xmlSchemaPtr schema;
	xmlDocPtr doc;
	int rc;

	doc = xmlReadMemory(xml, (int)len, NULL, "UTF-8", XML_PARSE_NONET);
	ck_assert_msg(doc != NULL, "not XML: %s", xml);
	pctx = xmlSchemaNewParserCtxt(OLV_JUNIT_XSD);
	ck_assert_ptr_nonnull(pctx);
	schema = xmlSchemaParse(pctx);
	ck_assert_ptr_nonnull(schema);
	vctx = xmlSchemaNewValidCtxt(schema);
	rc = xmlSchemaValidateDoc(vctx, doc);
	ck_assert_msg(rc == 0, "not valid against junit.xsd (%d): %s", rc, xml);
	xmlSchemaFreeValidCtxt(vctx);
	xmlSchemaFree(schema);
	xmlSchemaFreeParserCtxt(pctx);
	return doc;
}

/* The number of nodes expr selects in doc. */
static int count(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST expr, ctx);
	int n;

	ck_assert_ptr_nonnull(r);
	n = r->nodesetval ? r->nodesetval->nodeNr : 0;
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);
	return n;
}

/* The string value of expr in doc (caller frees). */
static char *text(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	char wrapped[512];
	xmlXPathObjectPtr r;
	char *out;

	snprintf(wrapped, sizeof(wrapped), "string(%s)", expr);
	r = xmlXPathEvalExpression(BAD_CAST wrapped, ctx);
	ck_assert_ptr_nonnull(r);
	out = strdup((const char *)r->stringval);
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);
	return out;
}

static void assert_text(xmlDocPtr doc, const char *expr, const char *want)
{
	char *got = text(doc, expr);

	ck_assert_msg(strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"", expr, got, want);
	free(got);
}

/* The walkthrough's two outputs: step-1 resolved, step-2 a mock miss. */
#define WALK_OUTPUTS                                                                               \
	"[{\"seq\":1,\"key\":\"step-1\",\"status\":\"ok\",\"error_kind\":null,"                    \
	"\"output\":\"first synthetic account\",\"duration_ms\":13},"                              \
	"{\"seq\":2,\"key\":\"step-2\",\"status\":\"error\",\"error_kind\":\"mock_miss\","         \
	"\"output\":\"[[mock-miss:agent:user2@example.test]]\",\"duration_ms\":2}]"

/* A completed run of the walkthrough with the given scoring members. */
static json_t *walk_run(const char *scoring)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	         "{\"id\":\"run-1\",\"kind\":\"simulation\",\"scenario_id\":\"sc-1\","
	         "\"variant\":\"v1\",\"status\":\"completed\",\"started_at\":"
	         "\"2026-01-01T00:00:00.000Z\",\"finished_at\":\"2026-01-01T00:00:01.500Z\",%s}",
	         scoring);
	return unit_json(buf);
}

static xmlDocPtr render_run(json_t *run, json_t *outputs)
{
	char *xml = NULL;
	size_t len = 0;
	xmlDocPtr doc;

	ck_assert_int_eq(http_junit_render(run, outputs, &xml, &len), 0);
	doc = parse_valid(xml, len);
	free(xml);
	return doc;
}

static xmlDocPtr render_cmp(json_t *cmp)
{
	char *xml = NULL;
	size_t len = 0;
	xmlDocPtr doc;

	ck_assert_int_eq(http_junit_render_comparison(cmp, &xml, &len), 0);
	doc = parse_valid(xml, len);
	free(xml);
	return doc;
}

/* ---- scored runs -------------------------------------------------------- */

/* A run its suite passed, whose mock miss no expectation looks at: one
 * case per expectation, no failure, the miss a property of the suite. */
START_TEST(test_scored_pass_allowed_miss)
{
	json_t *run =
	    walk_run("\"suite\":\"walkthrough-allow-miss\",\"scored\":true,"
	             "\"score\":1,\"passed\":true,\"score_details\":["
	             "{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":\"equals\","
	             "\"message\":null},"
	             "{\"seq\":2,\"key\":\"step-2\",\"passed\":true,\"check\":\"contains\","
	             "\"message\":null}]");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//failure"), 0);
	ck_assert_int_eq(count(doc, "//error"), 0);
	ck_assert_int_eq(count(doc, "//testcase"), 2);
	assert_text(doc, "//testcase[1]/@name", "step-1: equals");
	assert_text(doc, "//testcase[2]/@name", "step-2: contains");
	assert_text(doc, "//testcase[1]/@time", "0.013");
	assert_text(doc, "/testsuites/testsuite/@tests", "2");
	assert_text(doc, "/testsuites/testsuite/@failures", "0");
	assert_text(doc, "/testsuites/@failures", "0");
	assert_text(doc, "//property[@name='mock_miss']/@value", "step-2 (seq 2)");
	assert_text(doc, "//property[@name='expectations']/@value", "2");
	assert_text(doc, "//property[@name='expectations_failed']/@value", "0");
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* The walkthrough suite passes (0.75 >= 0.5) although not_mock_miss fails
 * on step-2: the threshold tolerates it, so still no <failure>: the case
 * tells it in <system-out>, the suite in a property. */
START_TEST(test_scored_pass_tolerated)
{
	json_t *run = walk_run(
	    "\"suite\":\"walkthrough\",\"scored\":true,\"score\":0.75,\"passed\":true,"
	    "\"score_details\":["
	    "{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":\"equals\",\"message\":null},"
	    "{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":\"not_mock_miss\","
	    "\"message\":null},"
	    "{\"seq\":2,\"key\":\"step-2\",\"passed\":false,\"check\":\"not_mock_miss\","
	    "\"message\":\"step was a mock miss\"}]");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//failure"), 0);
	ck_assert_int_eq(count(doc, "//testcase"), 3);
	assert_text(doc, "//testcase[3]/@name", "step-2: not_mock_miss");
	assert_text(doc, "//testcase[3]/system-out",
	            "expectation did not hold, tolerated: the run passed its suite: step was a "
	            "mock miss");
	assert_text(doc, "//property[@name='expectation_tolerated']/@value",
	            "step-2: not_mock_miss: step was a mock miss");
	assert_text(doc, "//property[@name='expectations_failed']/@value", "1");
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* A run that did not pass: each failed expectation is a <failure> with the
 * detail's message, the held ones are green cases, and the step's own mock
 * miss is still no failure of its own. */
START_TEST(test_scored_failed_expectation)
{
	json_t *run = walk_run(
	    "\"suite\":\"walkthrough-strict\",\"scored\":true,\"score\":0.666666667,"
	    "\"passed\":false,\"score_details\":["
	    "{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":\"equals\",\"message\":null},"
	    "{\"seq\":2,\"key\":\"step-2\",\"passed\":false,\"check\":\"not_mock_miss\","
	    "\"message\":\"step was a mock miss <&>\"},"
	    "{\"key\":\"step-9\",\"passed\":false,\"check\":\"equals\","
	    "\"message\":\"no such step\"}]");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//testcase"), 3);
	ck_assert_int_eq(count(doc, "//failure"), 2);
	ck_assert_int_eq(count(doc, "//testcase[1]/failure"), 0);
	assert_text(doc, "//testcase[2]/failure/@type", "expectation");
	assert_text(doc, "//testcase[2]/failure/@message", "expectation failed: not_mock_miss");
	assert_text(doc, "//testcase[2]/failure", "step was a mock miss <&>");
	assert_text(doc, "//testcase[3]/@name", "step-9: equals");
	assert_text(doc, "//testcase[3]/@time", "0");
	assert_text(doc, "//testcase[3]/failure", "no such step");
	assert_text(doc, "/testsuites/testsuite/@failures", "2");
	assert_text(doc, "/testsuites/@failures", "2");
	ck_assert_int_eq(count(doc, "//failure[@type='mock_miss']"), 0);
	assert_text(doc, "//property[@name='mock_miss']/@value", "step-2 (seq 2)");
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* A scorer that gives no details: a run that did not pass still has a
 * failure (a "suite" case), one that passed a green "suite" case. */
START_TEST(test_scored_no_details)
{
	json_t *run = walk_run("\"suite\":\"ext\",\"scored\":true,\"score\":0.2,"
	                       "\"passed\":false,\"reason\":\"too low\",\"score_details\":[]");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//testcase"), 1);
	assert_text(doc, "//testcase/@name", "suite ext");
	assert_text(doc, "//testcase/failure/@type", "suite_not_passed");
	assert_text(doc, "//testcase/failure/@message", "suite not passed (score 0.2)");
	xmlFreeDoc(doc);
	json_decref(run);

	run = walk_run("\"suite\":\"ext\",\"scored\":true,\"score\":1,\"passed\":true");
	doc = render_run(run, outputs);
	ck_assert_int_eq(count(doc, "//testcase"), 1);
	ck_assert_int_eq(count(doc, "//failure"), 0);
	assert_text(doc, "//testcase/@name", "suite ext");
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* ---- unscored runs ------------------------------------------------------ */

/* No suite: one case per step as before, the mock miss a failure. */
START_TEST(test_unscored_per_step)
{
	json_t *run = walk_run("\"suite\":null,\"scored\":false,\"score\":null,\"passed\":null");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//testcase"), 2);
	assert_text(doc, "//testcase[1]/@name", "step-1");
	assert_text(doc, "//testcase[2]/@name", "step-2");
	ck_assert_int_eq(count(doc, "//testcase[1]/failure"), 0);
	assert_text(doc, "//testcase[2]/failure/@type", "mock_miss");
	assert_text(doc, "//testcase[2]/failure/@message", "mock miss");
	assert_text(doc, "/testsuites/testsuite/@failures", "1");
	assert_text(doc, "/testsuites/testsuite/@time", "1.500");
	ck_assert_int_eq(count(doc, "//property[@name='mock_miss']"), 0);
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* A suite asked for and not applied: per-step cases and the "score"
 * error, never a green suite. */
START_TEST(test_unscored_suite_error)
{
	json_t *run = walk_run("\"suite\":\"walkthrough\",\"scored\":false,\"score\":null,"
	                       "\"passed\":null,\"reason\":\"executed, not scored: no scorer\"");
	json_t *outputs = unit_json(WALK_OUTPUTS);
	xmlDocPtr doc = render_run(run, outputs);

	ck_assert_int_eq(count(doc, "//testcase"), 3);
	assert_text(doc, "//testcase[1]/@name", "step-1");
	assert_text(doc, "//testcase[3]/@name", "score");
	assert_text(doc, "//testcase[3]/error/@type", "not_scored");
	assert_text(doc, "/testsuites/testsuite/@errors", "1");
	xmlFreeDoc(doc);
	json_decref(run);
	json_decref(outputs);
}
END_TEST

/* ---- comparisons -------------------------------------------------------- */

static json_t *cmp_json(const char *verdict, const char *delta, const char *cand_status,
                        const char *cand_scored, const char *reason)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	         "{\"id\":\"cmp-1\",\"scenario_id\":\"sc-1\",\"scenario_version\":2,"
	         "\"suite\":\"walkthrough\",\"tolerance\":0.02,\"status\":\"decided\","
	         "\"baseline\":{\"variant\":\"v1\",\"run_id\":\"run-b\",\"status\":\"completed\","
	         "\"scored\":true,\"score\":0.75},"
	         "\"candidate\":{\"variant\":\"v2\",\"run_id\":\"run-c\",\"status\":\"%s\","
	         "\"scored\":%s,\"score\":%s},"
	         "\"delta\":%s,\"verdict\":\"%s\",\"reason\":%s,\"differing_steps\":[],"
	         "\"created_at\":\"2026-01-01T00:00:02.000Z\"}",
	         cand_status, cand_scored, strcmp(cand_scored, "true") == 0 ? "1" : "null", delta,
	         verdict, reason);
	return unit_json(buf);
}

/* improved: three cases, no failure, the verdict's numbers as properties */
START_TEST(test_comparison_improved)
{
	json_t *cmp = cmp_json("improved", "0.25", "completed", "true", "null");
	xmlDocPtr doc = render_cmp(cmp);

	ck_assert_int_eq(count(doc, "//testcase"), 3);
	assert_text(doc, "//testcase[1]/@name", "baseline");
	assert_text(doc, "//testcase[2]/@name", "candidate");
	assert_text(doc, "//testcase[3]/@name", "verdict");
	ck_assert_int_eq(count(doc, "//failure"), 0);
	assert_text(doc, "/testsuites/testsuite/@name", "sc-1:v1..v2");
	assert_text(doc, "/testsuites/testsuite/@id", "cmp-1");
	assert_text(doc, "/testsuites/testsuite/@tests", "3");
	assert_text(doc, "//property[@name='verdict']/@value", "improved");
	assert_text(doc, "//property[@name='delta']/@value", "0.25");
	assert_text(doc, "//property[@name='tolerance']/@value", "0.02");
	assert_text(doc, "//property[@name='baseline_run_id']/@value", "run-b");
	assert_text(doc, "//property[@name='candidate_run_id']/@value", "run-c");
	assert_text(doc, "//property[@name='comparison_id']/@value", "cmp-1");
	xmlFreeDoc(doc);
	json_decref(cmp);
}
END_TEST

/* regressed: only the verdict case fails */
START_TEST(test_comparison_regressed)
{
	json_t *cmp = cmp_json("regressed", "-0.25", "completed", "true", "null");
	xmlDocPtr doc = render_cmp(cmp);

	ck_assert_int_eq(count(doc, "//failure"), 1);
	assert_text(doc, "//testcase[3]/failure/@type", "regressed");
	assert_text(doc, "//testcase[3]/failure/@message",
	            "verdict regressed (delta -0.25, tolerance 0.02)");
	assert_text(doc, "/testsuites/testsuite/@failures", "1");
	xmlFreeDoc(doc);
	json_decref(cmp);
}
END_TEST

/* inconclusive because the candidate was not scored, or failed: its side
 * case fails with the reason, and the verdict case too */
START_TEST(test_comparison_inconclusive)
{
	json_t *cmp = cmp_json("inconclusive", "null", "completed", "false",
	                       "\"candidate run not scored: unknown suite\"");
	xmlDocPtr doc = render_cmp(cmp);

	ck_assert_int_eq(count(doc, "//failure"), 2);
	ck_assert_int_eq(count(doc, "//testcase[1]/failure"), 0);
	assert_text(doc, "//testcase[2]/failure/@type", "not_scored");
	assert_text(doc, "//testcase[2]/failure/@message", "candidate run run-c not scored");
	assert_text(doc, "//testcase[2]/failure", "candidate run not scored: unknown suite");
	assert_text(doc, "//testcase[3]/failure/@type", "inconclusive");
	ck_assert_int_eq(count(doc, "//property[@name='delta']"), 0);
	xmlFreeDoc(doc);
	json_decref(cmp);

	cmp = cmp_json("inconclusive", "null", "failed", "false",
	               "\"candidate run failed: agent exited\"");
	doc = render_cmp(cmp);
	assert_text(doc, "//testcase[2]/failure/@type", "run_failed");
	assert_text(doc, "//testcase[2]/failure/@message", "candidate run run-c failed");
	assert_text(doc, "/testsuites/@failures", "2");
	xmlFreeDoc(doc);
	json_decref(cmp);
}
END_TEST

/* no id: refused, nothing allocated */
START_TEST(test_comparison_no_id)
{
	json_t *cmp = unit_json("{\"verdict\":\"improved\"}");
	char *xml = (char *)1;
	size_t len = 7;

	ck_assert_int_eq(http_junit_render_comparison(cmp, &xml, &len), -1);
	ck_assert_ptr_null(xml);
	ck_assert_uint_eq(len, 0);
	json_decref(cmp);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const scored[] = {test_scored_pass_allowed_miss, test_scored_pass_tolerated,
	                               test_scored_failed_expectation, test_scored_no_details,
	                               NULL};
	const TTest *const unscored[] = {test_unscored_per_step, test_unscored_suite_error, NULL};
	const TTest *const comparison[] = {test_comparison_improved, test_comparison_regressed,
	                                   test_comparison_inconclusive, test_comparison_no_id,
	                                   NULL};
	Suite *s;

	s = suite_create("junit");
	unit_tcase(s, "scored", scored);
	unit_tcase(s, "unscored", unscored);
	unit_tcase(s, "comparison", comparison);
	return s;
}
