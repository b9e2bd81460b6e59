#ifndef OLIVARES_TESTS_UNIT_H
#define OLIVARES_TESTS_UNIT_H
/**
 * What the Check programs of tests/unit share (tests/unit/unit.c): their
 * main(), the building of their test cases, and the helpers more than one
 * of them needs.
 *
 * A program defines unit_suite(); main() runs that suite with Check's
 * normal output (its summary line "N%: Checks: …" is what scripts/test
 * reports) and exits EXIT_FAILURE when a test failed or errored.
 */
#include <check.h>
#include <jansson.h>
#include <stddef.h>

#include "model/scorer.h"

/** The program's suite, built by its test file; main() frees it. */
Suite *unit_suite(void);

/**
 * Add to s a test case named name holding the tests of the NULL-terminated
 * list tests (names made by START_TEST), in that order. Returns the test
 * case, owned by s, for what some need besides (a timeout, a checked
 * fixture, a test that must raise a signal, a loop test).
 */
TCase *unit_tcase(Suite *s, const char *name, const TTest *const tests[]);

/* ---- JSON and text ------------------------------------------------------ */

/** text parsed as JSON, duplicate keys refused; a test failure (naming the
 * text) when it is not JSON. Caller json_decref. */
json_t *unit_json(const char *text);

/** n copies of c, NUL-terminated; malloc'ed (caller frees). */
char *unit_rep(char c, size_t n);

/** A JSON string of n copies of c (caller json_decref). */
json_t *unit_jstr_rep(char c, size_t n);

/* ---- fixtures ----------------------------------------------------------- */

/**
 * The path of tests/fixtures/NAME in the source tree: under $srcdir (set
 * by `make check`) or, run by hand, the tree this file was compiled from.
 * Points into a static buffer that the next call overwrites.
 */
const char *unit_fixture(const char *name);

/* ---- run outputs and scores (model/scorer.h) ---------------------------- */

/** Append to outs one output object as the store returns it, seq the next
 * number; kind NULL for a step that succeeded, else its error_kind
 * ("mock_miss"). */
void unit_add_output(json_t *outs, const char *key, const char *output, const char *kind);

/** The outputs of the two-step walkthrough: step-1 resolves its mock
 * ("first synthetic account"), step-2 is a mock miss. Caller json_decref. */
json_t *unit_walkthrough_outputs(void);

/** res->details[i] (borrowed); a test failure when there is none. */
json_t *unit_detail(const struct model_score_result *res, size_t i);

/**
 * Check res->details[i]: exactly the five members seq (null when seq is 0
 * or less), key (null when key is NULL), passed, check and message.
 */
void unit_assert_detail(const struct model_score_result *res, size_t i, json_int_t seq,
                        const char *key, int passed, const char *check, const char *message);

#endif
