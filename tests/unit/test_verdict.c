/*
 * Unit tests of model/verdict.c (Check): the verdict of a comparison from
 * its two sides (scores, tolerance edges, inconclusive sides, refused
 * inputs) and the verdicts a gate lets through.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/verdict.h"
#include "tests/unit/unit.h"

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

Suite *unit_suite(void)
{
	const TTest *const verdict[] = {test_verdict_scored,       test_verdict_tolerance_edges,
	                                test_verdict_inconclusive, test_verdict_refused,
	                                test_verdict_names_gate,   NULL};
	Suite *s;

	s = suite_create("verdict");
	unit_tcase(s, "verdict", verdict);
	return s;
}
