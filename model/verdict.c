/*
 * Verdict rules of a comparison (verdict.h).
 */
#include "scorer.h"
#include "verdict.h"

#include <math.h> /* isfinite: a macro, no libm */
#include <stdio.h>
#include <string.h>

/* The prefix a not-scored run's reason carries in the store (docs/scoring.md);
 * dropped when quoted, so a reason does not say it twice. */
#define NOT_SCORED_PREFIX "executed, not scored: "

static const char *const verdict_names[] = {
    [MODEL_VERDICT_IMPROVED] = "improved",
    [MODEL_VERDICT_REGRESSED] = "regressed",
    [MODEL_VERDICT_UNCHANGED] = "unchanged",
    [MODEL_VERDICT_INCONCLUSIVE] = "inconclusive",
};

const char *model_verdict_name(enum model_verdict v)
{
	if ((unsigned)v >= sizeof(verdict_names) / sizeof(verdict_names[0]))
		return "inconclusive";
	return verdict_names[v];
}

int model_verdict_gate_passes(enum model_verdict v)
{
	return v == MODEL_VERDICT_IMPROVED || v == MODEL_VERDICT_UNCHANGED;
}

static int side_valid(const struct model_verdict_side *s)
{
	if (!s || !s->status)
		return 0;
	/* a scored side must carry a real score */
	return !s->scored || (isfinite(s->score) && s->score >= 0.0 && s->score <= 1.0);
}

/* Why one side makes the comparison inconclusive, or NULL when it can be
 * compared. The cause is written to buf. */
static const char *side_cause(const struct model_verdict_side *s, char *buf, size_t n)
{
	const char *r = s->reason && s->reason[0] ? s->reason : NULL;
	size_t plen = strlen(NOT_SCORED_PREFIX);

	if (r && strncmp(r, NOT_SCORED_PREFIX, plen) == 0 && r[plen])
		r = r + plen;
	if (strcmp(s->status, "completed") != 0) {
		if (r)
			snprintf(buf, n, "run %s: %s", s->status, r);
		else
			snprintf(buf, n, "run %s", s->status);
		return buf;
	}
	if (!s->scored) {
		if (r)
			snprintf(buf, n, "run not scored: %s", r);
		else
			snprintf(buf, n, "run not scored");
		return buf;
	}
	return NULL;
}

int model_verdict_decide(const struct model_verdict_side *baseline,
                         const struct model_verdict_side *candidate, double tolerance,
                         enum model_verdict *verdict, int *has_delta, double *delta, char *why,
                         size_t n)
{
	char bc[600], cc[600];
	const char *b, *c;
	double d;

	if (!(tolerance >= 0.0 && tolerance <= 1.0) || !side_valid(baseline) ||
	    !side_valid(candidate) || !verdict || !has_delta || !delta)
		return -1;
	*has_delta = 0;
	*delta = 0.0;
	b = side_cause(baseline, bc, sizeof(bc));
	c = side_cause(candidate, cc, sizeof(cc));
	if (b || c) {
		*verdict = MODEL_VERDICT_INCONCLUSIVE;
		if (why && n) {
			if (b && c)
				snprintf(why, n, "baseline %s; candidate %s", b, c);
			else if (b)
				snprintf(why, n, "baseline %s", b);
			else
				snprintf(why, n, "candidate %s", c);
		}
		return 0;
	}
	d = model_score_round(candidate->score - baseline->score);
	*has_delta = 1;
	*delta = d;
	if (d > tolerance)
		*verdict = MODEL_VERDICT_IMPROVED;
	else if (d < -tolerance)
		*verdict = MODEL_VERDICT_REGRESSED;
	else
		*verdict = MODEL_VERDICT_UNCHANGED;
	if (why && n)
		snprintf(why, n, "delta %+.9g (candidate %.9g - baseline %.9g) %s tolerance %.9g",
		         d, candidate->score, baseline->score,
		         *verdict == MODEL_VERDICT_IMPROVED    ? "above"
		         : *verdict == MODEL_VERDICT_REGRESSED ? "below minus"
		                                               : "within",
		         tolerance);
	return 0;
}

json_t *model_differing_steps(json_t *base, json_t *cand)
{
	json_t *diff = json_array();
	json_t *b, *c, *bo, *co;
	json_int_t bs, cs;
	size_t i = 0, j = 0;

	while (i < json_array_size(base) || j < json_array_size(cand)) {
		b = json_array_get(base, i);
		c = json_array_get(cand, j);
		bs = b ? json_integer_value(json_object_get(b, "seq")) : 0;
		cs = c ? json_integer_value(json_object_get(c, "seq")) : 0;
		if (b && c && bs == cs) {
			i++;
			j++;
		} else if (b && (!c || bs < cs)) {
			c = NULL;
			i++;
		} else {
			b = NULL;
			j++;
		}
		bo = b ? json_object_get(b, "output") : NULL;
		co = c ? json_object_get(c, "output") : NULL;
		if (bo && co && json_equal(bo, co))
			continue;
		json_array_append_new(diff, json_pack("{s:I, s:O, s:O, s:O}", "seq", b ? bs : cs,
		                                      "key", json_object_get(b ? b : c, "key"),
		                                      "baseline_output", bo ? bo : json_null(),
		                                      "candidate_output", co ? co : json_null()));
	}
	return diff;
}
