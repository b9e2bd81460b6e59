#ifndef OLIVARES_MODEL_VERDICT_H
#define OLIVARES_MODEL_VERDICT_H
/**
 * Verdict rules of a pre/post-deployment comparison (sandbox page:
 * "Comparaison pré/post-déploiement — exécuter le même scénario contre une
 * variante de référence et une variante candidate, noter les deux, et
 * enregistrer un verdict (improved / regressed / unchanged / inconclusive)
 * avec le delta").
 *
 * Rules:
 *   - both runs completed AND scored: delta = candidate - baseline;
 *       delta >  tolerance  -> improved
 *       delta < -tolerance  -> regressed
 *       otherwise           -> unchanged
 *   - otherwise (either run failed, degraded, or not scored): inconclusive,
 *     no delta, and a reason naming the side and the cause
 *     ("candidate run failed: …", "baseline run not scored: …").
 * tolerance is in [0, 1]; default MODEL_DEFAULT_TOLERANCE.
 *
 * delta is rounded to 9 decimal places (half away from zero, never -0)
 * before it is compared and recorded: 0.8 - 0.7 is 0.10000000000000009 in
 * binary and must sit on the edge of a 0.1 tolerance (unchanged), and the
 * same two scores must always give the same recorded delta.
 * A side's status other than "completed" is a failure whatever its score.
 * A reason starting "executed, not scored: " (how the store words it) is
 * quoted without that prefix; with both sides inconclusive both are named,
 * baseline first, joined by "; ".
 */
#include <jansson.h>
#include <stddef.h>

#define MODEL_DEFAULT_TOLERANCE 0.0

enum model_verdict {
	MODEL_VERDICT_IMPROVED,
	MODEL_VERDICT_REGRESSED,
	MODEL_VERDICT_UNCHANGED,
	MODEL_VERDICT_INCONCLUSIVE,
};

/** One side of a comparison as the rules need it. status is the run's
 * status ("completed", "failed", "degraded"); reason its reason or NULL. */
struct model_verdict_side {
	const char *status;
	int scored;
	double score;
	const char *reason;
};

/**
 * Decide. Fills *verdict; *has_delta = 1 and *delta set when both sides are
 * scored and completed, else *has_delta = 0; why gets a one-line
 * explanation (n bytes; may be NULL): the inconclusive reason above, or
 * for a scored pair "delta +0.25 (candidate 0.75 - baseline 0.5) above
 * tolerance 0" (the API records it only when inconclusive). Returns 0,
 * or -1 if tolerance is outside [0, 1] (or NaN), a side is NULL or has a
 * NULL status, a scored side's score is outside [0, 1], or an out
 * pointer (verdict, has_delta, delta) is NULL.
 */
int model_verdict_decide(const struct model_verdict_side *baseline,
                         const struct model_verdict_side *candidate, double tolerance,
                         enum model_verdict *verdict, int *has_delta, double *delta, char *why,
                         size_t n);

/** "improved", "regressed", "unchanged", "inconclusive". */
const char *model_verdict_name(enum model_verdict v);

/** 1 when a deployment gate may pass on this verdict (improved or
 * unchanged), else 0. */
int model_verdict_gate_passes(enum model_verdict v);

/**
 * The steps whose outputs differ between two runs' outputs (base and cand:
 * arrays of output objects in seq order, borrowed), matched by seq: a new
 * array of {"seq","key","baseline_output","candidate_output"}, a side that
 * has no such step giving null. What a comparison records beside its
 * verdict.
 */
json_t *model_differing_steps(json_t *base, json_t *cand);

#endif
