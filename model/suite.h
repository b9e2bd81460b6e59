#ifndef OLIVARES_MODEL_SUITE_H
#define OLIVARES_MODEL_SUITE_H
/**
 * The builtin reference suite format and its evaluation (pure; the file is
 * read by fcgi/scorer_builtin.c).
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
 *        "weight": number > 0 (optional, default 1)} ]}
 * Unknown fields are refused. An expectation whose step does not exist in
 * the run fails ("no such step").
 * score = sum(weights of expectations that hold) / sum(all weights);
 * passed = score >= threshold.
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

#endif
