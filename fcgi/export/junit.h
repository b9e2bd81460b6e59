#ifndef OLIVARES_FCGI_EXPORT_JUNIT_H
#define OLIVARES_FCGI_EXPORT_JUNIT_H
/**
 * JUnit XML export of one run (GET /v1/m/sandbox/runs/{id}/junit), for CI
 * systems: built with libxml2's tree API, so every name, value and text is
 * escaped by construction, and valid against tests/fixtures/junit.xsd (the
 * common JUnit vocabulary that Ant, Jenkins and GitLab read).
 *
 *   <testsuites name="olivares-sandbox" tests=N failures=F errors=E>
 *     <testsuite name="<scenario_id>:<variant>" id=run_id tests=N
 *                failures=F errors=E skipped="0" time=finished_at - started_at
 *                (seconds, "0" when unknown) timestamp=started_at>
 *       <properties> run_id, kind, scenario_id, scenario_version, variant,
 *         status, backend, runner, isolated, destroyed, suite, scored,
 *         score, passed, reason, output_digest, steps_total, steps_ok,
 *         steps_error, session_id, shutdown (the agent killed after its
 *         last step: a note, no failure) (absent values are left out)
 *       </properties>
 *       <testcase name=<step key> classname="olivares.sandbox.<scenario_id>"
 *                 time=the output's duration_ms in seconds, 3 decimals
 *                 ("0.013"), "0" when unknown (null)>   one per output, in
 *                 seq order, with at most ONE <failure>, whose reasons are
 *         type="mock_miss" message="mock miss" (text: the output) for a mock miss,
 *         type="agent_error" message="agent error" (text: the output) for an
 *                  agent error,
 *         type="expectation" message="expectation failed: <check>" (text: the
 *                  detail's message) for each failed expectation of
 *                  score_details whose seq (or key) is this step's;
 *         one reason is written as is; several are merged: type the
 *         first's (the step's own failure comes first), message their
 *         messages joined by "; " ("mock miss; expectation failed:
 *         not_mock_miss"), text one line "message: text" per reason
 *         (several readers show only a case's first failure);
 *       <testcase name="suite <suite>" time="0"> holds the failed
 *                 expectations that name no step of the run ("no such
 *                 step"), merged into one <failure> the same way, when there
 *                 are any;
 *       <testcase name="run"> with <error type="run_<status>"> when the run
 *                 did not complete (failed or degraded), so a run that could
 *                 not execute is never exported as a green suite.
 * failures counts the test cases with a failure; errors the error test
 * case (0 or 1: a "run" or a "score" case, with one <error>). A variant of null is written
 * "default"; a run without a scenario (a replay that names none) uses "session-<session_id>" for
 * the scenario part, or "run" without a session either. Text that XML 1.0 cannot carry (control
 * characters other than tab, newline and carriage return, U+FFFE, U+FFFF) is replaced with U+FFFD;
 * the input is UTF-8 (as the store returns it).
 */
#include <stddef.h>

#include <jansson.h>

/**
 * Render run (a run object of store_run_get, borrowed) and outputs (the
 * "outputs" array of store_run_outputs, borrowed) as a UTF-8 XML document
 * with an XML declaration. *out receives a NUL-terminated buffer of *len
 * bytes allocated with malloc (the caller frees it). Returns 0, or -1 (out
 * of memory in libxml2, or a run object without an id) with *out NULL.
 */
int http_junit_render(json_t *run, json_t *outputs, char **out, size_t *len);

/**
 * Render a decided comparison (an object of store_comparison_get,
 * borrowed; the caller refuses a pending one) as JUnit XML, valid against
 * the same schema (GET /v1/m/sandbox/comparisons/{id}/junit):
 *
 *   <testsuites name="olivares-sandbox" tests="3" failures=F errors="0">
 *     <testsuite name="<scenario_id>:<baseline variant>..<candidate variant>"
 *                id=comparison id tests="3" time="0" timestamp=created_at>
 *       <properties> comparison_id, scenario_id, scenario_version, suite,
 *         verdict, delta, tolerance, reason, same_agent, decided_by,
 *         created_at, baseline_{variant,run_id,status,scored,score},
 *         candidate_{…}, and stats.<member> for each scalar member of
 *         "stats" when the comparison has one (absent values left out)
 *       <testcase name="baseline">   <failure type="run_<status>"> when that
 *                 side's run did not complete, type="not_scored" when it
 *                 completed unscored (text: the comparison's reason)
 *       <testcase name="candidate">  the same for the candidate
 *       <testcase name="verdict">    <failure type="regressed" or
 *                 "inconclusive" message="verdict V (delta D, tolerance T)">
 *                 (what the gate refuses); none for improved, unchanged
 * (classname "olivares.sandbox.<scenario_id>.comparison"). *out and *len as
 * http_junit_render's; -1 for an object without an id.
 */
int http_junit_render_comparison(json_t *cmp, char **out, size_t *len);

#endif
