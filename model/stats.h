#ifndef OLIVARES_MODEL_STATS_H
#define OLIVARES_MODEL_STATS_H
/**
 * The statistics of a comparison with repeats (pure, no I/O): R runs per
 * side, repeat r of the baseline paired with repeat r of the candidate.
 *
 * Method "paired-bootstrap" (R >= 2, every run completed and scored):
 *   - delta_r = candidate_r - baseline_r (each run's score, the suite's
 *     weights over its score_details lines), rounded to 9 decimals; n = R;
 *   - delta: the mean of the delta_r, rounded to 9 decimals;
 *   - ci_low, ci_high: percentile bootstrap 95% interval of the mean,
 *     MODEL_STATS_RESAMPLES resamples of n deltas drawn with replacement
 *     by splitmix64 from MODEL_STATS_SEED (index = next() % n); the
 *     resampled means sorted ascending, ci_low the one at index 50 and
 *     ci_high the one at index 1949, both rounded to 9 decimals. The same
 *     deltas give the same interval bit for bit;
 *   - p_value: exact two-sided sign test on the nonzero deltas (m of them,
 *     k = min(#positive, #negative)): min(1, 2 * sum_{i<=k} C(m,i) / 2^m),
 *     1 when every delta is 0;
 *   - verdict: improved when ci_low > tolerance, regressed when
 *     ci_high < -tolerance, unchanged when -tolerance <= ci_low and
 *     ci_high <= tolerance, otherwise inconclusive with repeats_needed
 *     N = max(R + 1, ceil(3.8416 * s^2 / g^2)), s^2 the sample variance
 *     of the deltas (n - 1), g the distance of the mean from the nearer
 *     of -tolerance and tolerance. N above MODEL_STATS_MAX_REPEATS is
 *     still given (at most MODEL_STATS_NEEDED_CAP, which also stands for
 *     g = 0 or s = 0) with "repeats_note" saying it is more than a
 *     comparison may ask for.
 * Method "single-run" (R = 1): the verdict of model_verdict_decide exactly;
 *   stats {"method":"single-run","n":1,"delta","ci_low":null,
 *   "ci_high":null,"p_value":null}: one pair has no variance estimate.
 * Any run of either side failed, degraded or not scored: inconclusive, the
 * reason of model_verdict_decide for the first such pair (prefixed
 * "repeat r: " when R >= 2), delta and interval null.
 *
 * pass_k {"baseline","candidate"}: per side, the share of score_details
 * lines (matched by position) that passed in EVERY repeat (rounded to 9
 * decimals; a line missing from a repeat did not pass there); null for a
 * side with a run not scored.
 * flaky_steps: [{"side","key","seq"}], per side (baseline first) the steps
 * whose output differs between repeat 0 and any other repeat, in seq
 * order; [] for R = 1.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

#define MODEL_STATS_MAX_REPEATS 20
#define MODEL_STATS_RESAMPLES 2000
#define MODEL_STATS_SEED UINT64_C(0x6f6c697661726573) /* "olivares" */
#define MODEL_STATS_NEEDED_CAP 10000

/** One run of one side. details (the run's score_details array) and
 * outputs (its output objects in seq order) are borrowed; either may be
 * NULL (no line, no output). */
struct model_stats_run {
	const char *status;
	int scored;
	double score;
	const char *reason;
	json_t *details;
	json_t *outputs;
};

/** What model_stats_compare decides; every json_t is a new reference
 * owned by the result (model_stats_result_clear). */
struct model_stats_result {
	enum model_verdict verdict;
	int has_delta;
	double delta;        /* the mean delta when has_delta */
	json_t *stats;       /* {"method","n","delta","ci_low","ci_high","p_value",...} */
	json_t *pass_k;      /* {"baseline","candidate"} */
	json_t *flaky_steps; /* [{"side","key","seq"}] */
	char reason[600];    /* why, set only when inconclusive ("" otherwise) */
};

/**
 * Decide a comparison of repeats (1..MODEL_STATS_MAX_REPEATS) runs per
 * side (base[r], cand[r] the runs of repeat r) at tolerance (in [0, 1]).
 * Fills *res (clear it with model_stats_result_clear). Returns 0, or -1
 * (res zeroed) when repeats or tolerance is out of range, an array or a
 * run's status is NULL, or a scored score is outside [0, 1].
 */
int model_stats_compare(const struct model_stats_run *base, const struct model_stats_run *cand,
                        int repeats, double tolerance, struct model_stats_result *res);

/** Release what res holds and zero it. */
void model_stats_result_clear(struct model_stats_result *res);

/** The next value of the splitmix64 generator at *state (advances it). */
uint64_t model_stats_splitmix64(uint64_t *state);

/** The percentile bootstrap 95% interval of the mean of d[0..n-1] (n >= 1)
 * as described above, into *lo and *hi. Returns 0, or -1 for n < 1 or
 * n > MODEL_STATS_MAX_REPEATS. */
int model_stats_bootstrap_ci(const double *d, int n, double *lo, double *hi);

/** The exact two-sided sign-test p-value of d[0..n-1] (zeros dropped;
 * 1 when none is left), rounded to 9 decimals; n in 0..60. */
double model_stats_sign_test(const double *d, int n);

/** repeats_needed for deltas d[0..n-1] (n >= 2) whose mean is at distance
 * gap (>= 0) from the nearer boundary, as described above (capped at
 * MODEL_STATS_NEEDED_CAP). */
int model_stats_repeats_needed(const double *d, int n, double gap);

#endif
