#ifndef OLIVARES_MODEL_SUITE_H
#define OLIVARES_MODEL_SUITE_H
/**
 * The builtin reference suite format and its evaluation (pure; the file is
 * read by fcgi/scorer/scorer_builtin.c).
 *
 * A suite is one JSON object:
 *   {"name": string,
 *    "threshold": number in [0,1] (default 1.0: every expectation must hold),
 *    "expectations": [ 1..1000 of
 *       {"key": step key | "seq": 1-based step number | "step": "*" (every step),
 *        and exactly one check:
 *          "equals": string        output == string (exact bytes)
 *          "contains": string      output contains string
 *          "regex": string         POSIX extended regex matches output
 *          "not_mock_miss": true   the step is not a mock miss
 *          "calls": [{"tool","args"?} | {"resource"}, ...] with "order":
 *                  "in_order" (default: a subsequence of the trace), "any"
 *                  (each call its own request) or "exact" (the trace is
 *                  exactly these calls); listed args must be equal, more
 *                  may be sent
 *          "call_count": {"tool" | "resource", "equals" | "min"/"max"}
 *                  requests to that tool or resource, 0..100
 *          "max_duration_ms": N    the step's duration_ms <= N
 *          "json_path": {"path": "$.a[0][\"b\"]", one of "equals": V,
 *                  "exists": bool, "contains": S, "regex": S}
 *                  on the output parsed as JSON
 *        "weight": number > 0 (optional, default 1)} ]}
 * Unknown fields are refused. An expectation whose step does not exist in
 * the run fails ("no such step").
 * score = sum(weights of expectations that hold) / sum(all weights),
 * rounded to 9 decimals (model_score_round, as it is recorded);
 * passed = score >= threshold, on that rounded score.
 *
 * Details of the implementation (model/suite.c):
 *   - "name" is required (1..128 bytes); "key" is 1..128 bytes; "weight"
 *     is at most 1000000; "regex" at most 1024 bytes, without NUL, and
 *     must compile (REG_EXTENDED | REG_NOSUB, no REG_NEWLINE: "^"/"$" are
 *     the ends of the whole output); a "seq" selects the first output
 *     with that seq (a run's seqs are unique).
 *   - "key" selects every output with that key: a run's keys are unique
 *     for a scenario, but a replay keeps a history's keys as recorded
 *     (model/history.h), so one key may name several steps. The
 *     expectation then counts once per such step, like "*" restricted
 *     to the key: one detail line per step, in step order, each with the
 *     expectation's weight; it holds only where each step satisfies it.
 *     Never only the first or the last silently.
 *   - "step": "*" counts as one expectation per step of the run, each
 *     with the expectation's weight; on a run without steps it is one
 *     failed line ("run has no steps"), never a vacuous pass.
 *   - content checks (equals/contains/regex) on an output that is not a
 *     string fail ("step has no output"); not_mock_miss fails when the
 *     output's error_kind is "mock_miss"; the call checks fail on a step
 *     without a trace ("step has no trace"), max_duration_ms on one
 *     without a duration ("step has no duration"), json_path on an
 *     output that is not JSON or has a duplicate key.
 *   - details: one line per evaluated expectation, in suite order (a "*"
 *     expands in step order): {"seq": N|null, "key": K|null, "passed":
 *     bool, "check": the check's name,
 *     "message": fixed English sentence} — never the output's text.
 *   - check errors: structure (wrong type, unknown or missing field, not
 *     exactly one selector / one check) MODEL_E_MALFORMED; a bound
 *     (threshold, weight, seq, lengths, 1..1000 expectations)
 *     MODEL_E_LIMIT; not_mock_miss false, a regex that does not compile
 *     MODEL_E_INVALID. err->field is the JSON path
 *     ("expectations[3].regex").
 *
 * Example (tests/fixtures/suites/walkthrough.json, the page's walkthrough:
 * step-1 answers "first synthetic account", step-2 is a mock miss):
 *   [{"key":"step-1","equals":"first synthetic account","weight":2},
 *    {"step":"*","not_mock_miss":true}], threshold 0.5
 *   -> (2 + 1 + 0) / (2 + 1 + 1) = 0.75, passed.
 */
#include <jansson.h>

#include "error.h"
#include "scorer.h"

/** Check a suite document; 0 or -1 with *err (malformed / invalid, with the
 * field path). */
int model_suite_check(json_t *suite, struct model_error *err);

/** Evaluate a checked suite against outputs (array of output objects);
 * fills *res (scored 1, score, passed, details). Returns 0, or -1 with
 * res->reason for a suite that fails model_suite_check or an invalid regex. */
int model_suite_evaluate(json_t *suite, json_t *outputs, struct model_score_result *res);

/** The largest version a suite reference may name ("name@N"). */
#define MODEL_SUITE_VERSION_MAX 1000000000

/**
 * Split a suite reference "name" or "name@N" (N a decimal 1..
 * MODEL_SUITE_VERSION_MAX without a sign or leading zero): name (n bytes,
 * at least MODEL_MAX_SUITE_NAME_BYTES + 1) gets the name, *version N or 0
 * for "the latest". Returns 0, or -1 when ref is NULL, the name is not
 * model_suite_name_valid or N is not such a number.
 */
int model_suite_ref_parse(const char *ref, char *name, size_t n, int *version);

#endif
