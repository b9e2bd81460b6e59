/*
 * Unit tests of model/stats.c (Check): the paired statistics of a
 * comparison with repeats: known deltas to their exact interval, p-value
 * and verdict, the same runs to the same numbers, and repeats 1 keeping the
 * single-run rules.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/stats.h"
#include "tests/unit/unit.h"

#define R_MAX MODEL_STATS_MAX_REPEATS

struct sides {
	struct model_stats_run b[R_MAX], c[R_MAX];
	json_t *keep[4 * R_MAX];
	int nkeep;
};

static json_t *kept(struct sides *s, json_t *v)
{
	s->keep[s->nkeep++] = v;
	return v;
}

/* repeat r of one side: completed, scored score, one detail line that
 * passed when passed, one output "text" at seq 1 */
static void run_set(struct sides *s, struct model_stats_run *run, double score, int passed,
                    const char *text)
{
	memset(run, 0, sizeof *run);
	run->status = "completed";
	run->scored = 1;
	run->score = score;
	run->details =
	    kept(s, json_pack("[{s:i, s:s, s:b}]", "seq", 1, "key", "step-1", "passed", passed));
	run->outputs =
	    kept(s, json_pack("[{s:i, s:s, s:s}]", "seq", 1, "key", "step-1", "output", text));
}

static void sides_free(struct sides *s)
{
	int i;

	for (i = 0; i < s->nkeep; i++)
		json_decref(s->keep[i]);
	s->nkeep = 0;
}

static double num(json_t *o, const char *k)
{
	ck_assert_msg(json_is_number(json_object_get(o, k)), "%s is a number", k);
	return json_number_value(json_object_get(o, k));
}

START_TEST(test_stats_splitmix_fixed)
{
	uint64_t st = 0;

	/* the reference splitmix64 sequence from seed 0 */
	ck_assert(model_stats_splitmix64(&st) == UINT64_C(0xe220a8397b1dcdaf));
	ck_assert(model_stats_splitmix64(&st) == UINT64_C(0x6e789e6aa1b965f4));
}
END_TEST

START_TEST(test_stats_sign_test)
{
	const double five_up[] = {0.5, 0.5, 0.5, 0.5, 0.5};
	const double two_one[] = {0.1, 0.2, -0.3};
	const double nine_one[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, -1};
	const double zeros[] = {0, 0, 0};
	const double with_zero[] = {0, 1, 1, 0, 1};

	ck_assert_double_eq(model_stats_sign_test(five_up, 5), 0.0625);
	ck_assert_double_eq(model_stats_sign_test(two_one, 3), 1.0);
	ck_assert_double_eq(model_stats_sign_test(nine_one, 10), 0.021484375);
	ck_assert_double_eq(model_stats_sign_test(zeros, 3), 1.0);
	/* the zeros dropped: 3 positive of 3, 2 / 8 */
	ck_assert_double_eq(model_stats_sign_test(with_zero, 5), 0.25);
}
END_TEST

START_TEST(test_stats_bootstrap)
{
	const double same[] = {0.25, 0.25, 0.25, 0.25, 0.25};
	const double tenth[] = {0.1, 0.1, 0.1};
	const double mixed[] = {0, -1, 0, -1, 0};
	double lo, hi, lo2, hi2;

	ck_assert_int_eq(model_stats_bootstrap_ci(same, 5, &lo, &hi), 0);
	ck_assert_double_eq(lo, 0.25);
	ck_assert_double_eq(hi, 0.25);
	/* 0.1 + 0.1 + 0.1 is not 0.3 in binary: rounded back to 0.1 */
	ck_assert_int_eq(model_stats_bootstrap_ci(tenth, 3, &lo, &hi), 0);
	ck_assert_double_eq(lo, 0.1);
	ck_assert_double_eq(hi, 0.1);
	ck_assert_int_eq(model_stats_bootstrap_ci(mixed, 5, &lo, &hi), 0);
	/* resampled means of five draws from {0,0,0,-1,-1} are k/5 */
	ck_assert_double_eq(lo, -0.8);
	ck_assert_double_eq(hi, 0.0);
	ck_assert_int_eq(model_stats_bootstrap_ci(mixed, 5, &lo2, &hi2), 0);
	ck_assert(memcmp(&lo, &lo2, sizeof lo) == 0 && memcmp(&hi, &hi2, sizeof hi) == 0);
	ck_assert_int_eq(model_stats_bootstrap_ci(mixed, 0, &lo, &hi), -1);
	ck_assert_int_eq(model_stats_bootstrap_ci(mixed, 21, &lo, &hi), -1);
}
END_TEST

START_TEST(test_stats_repeats_needed)
{
	const double mixed[] = {0, -1, 0, -1, 0};
	const double same[] = {0.5, 0.5};

	/* s^2 = 1.2 / 4 = 0.3, g = 0.4: 3.8416 * 0.3 / 0.16 = 7.203 -> 8 */
	ck_assert_int_eq(model_stats_repeats_needed(mixed, 5, 0.4), 8);
	/* a gap so wide that R + 1 is the floor */
	ck_assert_int_eq(model_stats_repeats_needed(mixed, 5, 10.0), 6);
	ck_assert_int_eq(model_stats_repeats_needed(mixed, 5, 0.0), MODEL_STATS_NEEDED_CAP);
	ck_assert_int_eq(model_stats_repeats_needed(same, 2, 0.1), MODEL_STATS_NEEDED_CAP);
}
END_TEST

/* a deterministic pair: every repeat the same, candidate 0.75 over 0.5 */
START_TEST(test_stats_zero_width_improved)
{
	struct sides s = {0};
	struct model_stats_result res;
	int r, i;

	for (r = 0; r < 5; r++) {
		run_set(&s, &s.b[r], 0.5, 1, "same");
		run_set(&s, &s.c[r], 0.75, 1, "same");
	}
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(model_stats_compare(s.b, s.c, 5, 0.0, &res), 0);
		ck_assert_int_eq(res.verdict, MODEL_VERDICT_IMPROVED);
		ck_assert_str_eq(json_string_value(json_object_get(res.stats, "method")),
		                 "paired-bootstrap");
		ck_assert_int_eq(json_integer_value(json_object_get(res.stats, "n")), 5);
		ck_assert_double_eq(num(res.stats, "delta"), 0.25);
		ck_assert_double_eq(num(res.stats, "ci_low"), 0.25);
		ck_assert_double_eq(num(res.stats, "ci_high"), 0.25);
		ck_assert_double_eq(num(res.stats, "p_value"), 0.0625);
		ck_assert_ptr_null(json_object_get(res.stats, "repeats_needed"));
		ck_assert_double_eq(num(res.pass_k, "baseline"), 1.0);
		ck_assert_double_eq(num(res.pass_k, "candidate"), 1.0);
		ck_assert_int_eq(json_array_size(res.flaky_steps), 0);
		ck_assert_str_eq(res.reason, "");
		model_stats_result_clear(&res);
	}
	/* the same above a tolerance it does not clear: unchanged */
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 5, 0.25, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_UNCHANGED);
	model_stats_result_clear(&res);
	/* swapped: regressed */
	ck_assert_int_eq(model_stats_compare(s.c, s.b, 5, 0.1, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_REGRESSED);
	ck_assert_double_eq(num(res.stats, "ci_high"), -0.25);
	model_stats_result_clear(&res);
	sides_free(&s);
}
END_TEST

/* the half-right candidate: right on even repeats, wrong on odd ones */
START_TEST(test_stats_half_right)
{
	struct sides s = {0};
	struct model_stats_result res;
	json_t *f;
	int r;

	for (r = 0; r < 5; r++) {
		run_set(&s, &s.b[r], 1.0, 1, "right");
		run_set(&s, &s.c[r], r % 2 ? 0.0 : 1.0, !(r % 2), r % 2 ? "wrong" : "right");
	}
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 5, 0.0, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_double_eq(num(res.stats, "delta"), -0.4);
	ck_assert_double_eq(num(res.stats, "ci_low"), -0.8);
	ck_assert_double_eq(num(res.stats, "ci_high"), 0.0);
	/* two negative of two nonzero: 2 * 1/4 */
	ck_assert_double_eq(num(res.stats, "p_value"), 0.5);
	ck_assert_int_eq(json_integer_value(json_object_get(res.stats, "repeats_needed")), 8);
	ck_assert_double_eq(num(res.pass_k, "baseline"), 1.0);
	ck_assert_double_eq(num(res.pass_k, "candidate"), 0.0);
	ck_assert_int_eq(json_array_size(res.flaky_steps), 1);
	f = json_array_get(res.flaky_steps, 0);
	ck_assert_str_eq(json_string_value(json_object_get(f, "side")), "candidate");
	ck_assert_str_eq(json_string_value(json_object_get(f, "key")), "step-1");
	ck_assert_int_eq(json_integer_value(json_object_get(f, "seq")), 1);
	ck_assert_ptr_nonnull(strstr(res.reason, "about 8 repeats"));
	model_stats_result_clear(&res);
	sides_free(&s);
}
END_TEST

/* repeat r of one side on the walkthrough suite (docs/scoring.md's worked
 * example): three lines (step-1 equals, step-1 and step-2 not a mock
 * miss), the first held when right; outputs of step-1 and step-2 */
static void walk_set(struct sides *s, struct model_stats_run *run, int right)
{
	memset(run, 0, sizeof *run);
	run->status = "completed";
	run->scored = 1;
	run->score = right ? 1.0 : 0.5;
	run->details =
	    kept(s, json_pack("[{s:i, s:s, s:b}, {s:i, s:s, s:b}, {s:i, s:s, s:b}]", "seq", 1,
	                      "key", "step-1", "passed", right, "seq", 1, "key", "step-1", "passed",
	                      1, "seq", 2, "key", "step-2", "passed", 1));
	run->outputs =
	    kept(s, json_pack("[{s:i, s:s, s:s}, {s:i, s:s, s:s}]", "seq", 1, "key", "step-1",
	                      "output", right ? "first synthetic account" : "wrong account", "seq",
	                      2, "key", "step-2", "output", "second synthetic account"));
}

/* the worked example of docs/scoring.md, number for number: deltas
 * 0, -0.5, 0, -0.5, 0 */
START_TEST(test_stats_worked_example)
{
	const double d[] = {0, -0.5, 0, -0.5, 0};
	struct sides s = {0};
	struct model_stats_result res;
	double lo, hi;
	json_t *f;
	int r;

	ck_assert_int_eq(model_stats_bootstrap_ci(d, 5, &lo, &hi), 0);
	ck_assert_double_eq(lo, -0.4);
	ck_assert_double_eq(hi, 0.0);
	ck_assert_double_eq(model_stats_sign_test(d, 5), 0.5);
	/* s^2 = 0.3 / 4 = 0.075, g = 0.2: ceil(3.8416 * 0.075 / 0.04) = 8 */
	ck_assert_int_eq(model_stats_repeats_needed(d, 5, 0.2), 8);
	for (r = 0; r < 5; r++) {
		walk_set(&s, &s.b[r], 1);
		walk_set(&s, &s.c[r], r % 2 == 0);
	}
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 5, 0.0, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(json_string_value(json_object_get(res.stats, "method")),
	                 "paired-bootstrap");
	ck_assert_double_eq(num(res.stats, "delta"), -0.2);
	ck_assert_double_eq(num(res.stats, "ci_low"), -0.4);
	ck_assert_double_eq(num(res.stats, "ci_high"), 0.0);
	ck_assert_double_eq(num(res.stats, "p_value"), 0.5);
	ck_assert_int_eq(json_integer_value(json_object_get(res.stats, "repeats_needed")), 8);
	ck_assert_ptr_null(json_object_get(res.stats, "repeats_note"));
	ck_assert_double_eq(num(res.pass_k, "baseline"), 1.0);
	ck_assert_double_eq(num(res.pass_k, "candidate"), 0.666666667);
	ck_assert_int_eq(json_array_size(res.flaky_steps), 1);
	f = json_array_get(res.flaky_steps, 0);
	ck_assert_str_eq(json_string_value(json_object_get(f, "side")), "candidate");
	ck_assert_str_eq(json_string_value(json_object_get(f, "key")), "step-1");
	ck_assert_str_eq(res.reason,
	                 "the 95% interval [-0.4, 0] of the mean delta -0.2 crosses the "
	                 "tolerance 0; about 8 repeats would likely decide it");
	model_stats_result_clear(&res);
	/* at tolerance 0.5 the interval lies within [-0.5, 0.5]: unchanged */
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 5, 0.5, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_UNCHANGED);
	ck_assert_ptr_null(json_object_get(res.stats, "repeats_needed"));
	model_stats_result_clear(&res);
	sides_free(&s);
}
END_TEST

/* repeats 1: exactly model_verdict_decide, no variance estimate */
START_TEST(test_stats_single_run)
{
	struct sides s = {0};
	struct model_stats_result res;

	run_set(&s, &s.b[0], 0.7, 1, "a");
	run_set(&s, &s.c[0], 0.8, 1, "b");
	/* 0.8 - 0.7 on the edge of 0.1: unchanged, as model_verdict_decide */
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 1, 0.1, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_UNCHANGED);
	ck_assert_str_eq(json_string_value(json_object_get(res.stats, "method")), "single-run");
	ck_assert_int_eq(json_integer_value(json_object_get(res.stats, "n")), 1);
	ck_assert_double_eq(num(res.stats, "delta"), 0.1);
	ck_assert(json_is_null(json_object_get(res.stats, "ci_low")));
	ck_assert(json_is_null(json_object_get(res.stats, "ci_high")));
	ck_assert(json_is_null(json_object_get(res.stats, "p_value")));
	ck_assert_int_eq(json_array_size(res.flaky_steps), 0);
	model_stats_result_clear(&res);
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 1, 0.0, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_IMPROVED);
	model_stats_result_clear(&res);
	/* a failed side: inconclusive with the single-run reason */
	s.c[0].status = "failed";
	s.c[0].reason = "agent crashed";
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 1, 0.0, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(res.reason, "candidate run failed: agent crashed");
	ck_assert(json_is_null(json_object_get(res.stats, "delta")));
	model_stats_result_clear(&res);
	sides_free(&s);
}
END_TEST

START_TEST(test_stats_failed_repeat_refused)
{
	struct sides s = {0};
	struct model_stats_result res;
	int r;

	for (r = 0; r < 3; r++) {
		run_set(&s, &s.b[r], 0.5, 1, "x");
		run_set(&s, &s.c[r], 1.0, 1, "x");
	}
	s.b[2].scored = 0;
	s.b[2].reason = "executed, not scored: no suite";
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 3, 0.0, &res), 0);
	ck_assert_int_eq(res.verdict, MODEL_VERDICT_INCONCLUSIVE);
	ck_assert_str_eq(res.reason, "repeat 2: baseline run not scored: no suite");
	ck_assert(json_is_null(json_object_get(res.stats, "ci_low")));
	ck_assert(json_is_null(json_object_get(res.pass_k, "baseline")));
	model_stats_result_clear(&res);
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 0, 0.0, &res), -1);
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 21, 0.0, &res), -1);
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 3, 1.5, &res), -1);
	s.c[1].score = 2.0;
	ck_assert_int_eq(model_stats_compare(s.b, s.c, 3, 0.0, &res), -1);
	ck_assert_ptr_null(res.stats);
	sides_free(&s);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const stats[] = {test_stats_splitmix_fixed,
	                              test_stats_sign_test,
	                              test_stats_bootstrap,
	                              test_stats_repeats_needed,
	                              test_stats_zero_width_improved,
	                              test_stats_half_right,
	                              test_stats_worked_example,
	                              test_stats_single_run,
	                              test_stats_failed_repeat_refused,
	                              NULL};
	Suite *s;

	s = suite_create("stats");
	unit_tcase(s, "stats", stats);
	return s;
}
