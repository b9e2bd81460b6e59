/*
 * The statistics of a comparison with repeats (stats.h). No libm: the
 * interval needs sums and a sort, repeats_needed a variance (no square
 * root) and a ceiling of a positive number.
 */
#include "scorer.h"
#include "stats.h"

#include <math.h> /* isfinite: a macro, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2.5th and 97.5th percentiles of the sorted resampled means */
#define CI_LOW_INDEX 50
#define CI_HIGH_INDEX 1949
/* z(0.975)^2: the half-width of a 95% interval is 1.96 s / sqrt(N) */
#define Z2 3.8416

uint64_t model_stats_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double mean_of(const double *d, int n)
{
	double sum = 0.0;
	int i;

	for (i = 0; i < n; i++)
		sum += d[i];
	return sum / n;
}

int model_stats_bootstrap_ci(const double *d, int n, double *lo, double *hi)
{
	static double means[MODEL_STATS_RESAMPLES];
	uint64_t state = MODEL_STATS_SEED;
	double sum;
	int b, i;

	if (!d || !lo || !hi || n < 1 || n > MODEL_STATS_MAX_REPEATS)
		return -1;
	for (b = 0; b < MODEL_STATS_RESAMPLES; b++) {
		sum = 0.0;
		for (i = 0; i < n; i++)
			sum += d[model_stats_splitmix64(&state) % (uint64_t)n];
		means[b] = sum / n;
	}
	qsort(means, MODEL_STATS_RESAMPLES, sizeof means[0], cmp_double);
	*lo = model_score_round(means[CI_LOW_INDEX]);
	*hi = model_score_round(means[CI_HIGH_INDEX]);
	return 0;
}

double model_stats_sign_test(const double *d, int n)
{
	double c = 1.0, tail = 0.0, total = 1.0, p;
	int pos = 0, neg = 0, m, k, i;

	for (i = 0; d && i < n && i < 60; i++) {
		if (d[i] > 0)
			pos++;
		else if (d[i] < 0)
			neg++;
	}
	m = pos + neg;
	if (m == 0)
		return 1.0;
	k = pos < neg ? pos : neg;
	/* C(m,i) by the recurrence C(m,i+1) = C(m,i) (m-i) / (i+1): exact
	 * in a double for m <= 60 at the sizes of a comparison */
	for (i = 0; i <= k; i++) {
		tail += c;
		c = c * (m - i) / (i + 1);
	}
	for (i = 0; i < m; i++)
		total *= 2.0;
	p = 2.0 * tail / total;
	return model_score_round(p > 1.0 ? 1.0 : p);
}

int model_stats_repeats_needed(const double *d, int n, double gap)
{
	double mean, var = 0.0, want;
	int i, need;

	if (!d || n < 2)
		return MODEL_STATS_NEEDED_CAP;
	mean = mean_of(d, n);
	for (i = 0; i < n; i++)
		var += (d[i] - mean) * (d[i] - mean);
	var /= n - 1;
	if (!(gap > 0.0) || !(var > 0.0))
		return MODEL_STATS_NEEDED_CAP;
	want = Z2 * var / (gap * gap);
	if (!(want < MODEL_STATS_NEEDED_CAP))
		return MODEL_STATS_NEEDED_CAP;
	need = (int)want;
	if ((double)need < want)
		need++;
	return need < n + 1 ? n + 1 : need;
}

static int run_valid(const struct model_stats_run *r)
{
	return r->status &&
	       (!r->scored || (isfinite(r->score) && r->score >= 0.0 && r->score <= 1.0));
}

static void side_of(const struct model_stats_run *r, struct model_verdict_side *s)
{
	s->status = r->status;
	s->scored = r->scored;
	s->score = r->score;
	s->reason = r->reason;
}

/* pass^k of one side: a new number, or null when a run is not scored. */
static json_t *pass_k(const struct model_stats_run *runs, int repeats)
{
	size_t lines = 0, held = 0, i;
	int r, all;

	for (r = 0; r < repeats; r++) {
		if (!runs[r].scored)
			return json_null();
		if (json_array_size(runs[r].details) > lines)
			lines = json_array_size(runs[r].details);
	}
	if (lines == 0)
		return json_null();
	for (i = 0; i < lines; i++) {
		all = 1;
		for (r = 0; r < repeats && all; r++)
			all = json_is_true(
			    json_object_get(json_array_get(runs[r].details, i), "passed"));
		held += all;
	}
	return json_real(model_score_round((double)held / (double)lines));
}

static int has_seq(json_t *list, const char *side, json_int_t seq)
{
	json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "side")), side) == 0 &&
		    json_integer_value(json_object_get(e, "seq")) == seq)
			return 1;
	}
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "seq"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "seq"));

	return (x > y) - (x < y);
}

/* Append the flaky steps of one side to flaky, in seq order. */
static void flaky_side(json_t *flaky, const char *side, const struct model_stats_run *runs,
                       int repeats)
{
	json_t *found = json_array(), *diff, *e;
	json_t **v;
	size_t i, n;
	int r;

	for (r = 1; r < repeats; r++) {
		diff = model_differing_steps(runs[0].outputs, runs[r].outputs);
		json_array_foreach(diff, i, e)
		{
			json_int_t seq = json_integer_value(json_object_get(e, "seq"));

			if (!has_seq(found, side, seq))
				json_array_append_new(
				    found, json_pack("{s:s, s:O, s:I}", "side", side, "key",
				                     json_object_get(e, "key"), "seq", seq));
		}
		json_decref(diff);
	}
	n = json_array_size(found);
	v = n ? calloc(n, sizeof *v) : NULL;
	if (n && !v)
		abort();
	for (i = 0; i < n; i++)
		v[i] = json_array_get(found, i);
	if (n)
		qsort(v, n, sizeof *v, by_seq);
	for (i = 0; i < n; i++)
		json_array_append(flaky, v[i]);
	free(v);
	json_decref(found);
}

void model_stats_result_clear(struct model_stats_result *res)
{
	if (!res)
		return;
	json_decref(res->stats);
	json_decref(res->pass_k);
	json_decref(res->flaky_steps);
	memset(res, 0, sizeof *res);
}

static json_t *num_or_null(int has, double v)
{
	return has ? json_real(v) : json_null();
}

int model_stats_compare(const struct model_stats_run *base, const struct model_stats_run *cand,
                        int repeats, double tolerance, struct model_stats_result *res)
{
	struct model_verdict_side bs, cs;
	double d[MODEL_STATS_MAX_REPEATS], lo, hi, p, gap, dlo, dhi;
	char why[600];
	int r, has, need;
	enum model_verdict v;

	if (!res)
		return -1;
	memset(res, 0, sizeof *res);
	if (!base || !cand || repeats < 1 || repeats > MODEL_STATS_MAX_REPEATS ||
	    !(tolerance >= 0.0 && tolerance <= 1.0))
		return -1;
	for (r = 0; r < repeats; r++)
		if (!run_valid(&base[r]) || !run_valid(&cand[r]))
			return -1;
	res->pass_k = json_pack("{s:o, s:o}", "baseline", pass_k(base, repeats), "candidate",
	                        pass_k(cand, repeats));
	res->flaky_steps = json_array();
	flaky_side(res->flaky_steps, "baseline", base, repeats);
	flaky_side(res->flaky_steps, "candidate", cand, repeats);

	/* every pair by the rules of a single run: the first that cannot be
	 * compared makes the whole comparison inconclusive */
	for (r = 0; r < repeats; r++) {
		side_of(&base[r], &bs);
		side_of(&cand[r], &cs);
		why[0] = '\0';
		if (model_verdict_decide(&bs, &cs, tolerance, &v, &has, &d[r], why, sizeof why))
			goto fail;
		if (!has) {
			res->verdict = MODEL_VERDICT_INCONCLUSIVE;
			if (repeats > 1)
				snprintf(res->reason, sizeof res->reason, "repeat %d: %s", r, why);
			else
				snprintf(res->reason, sizeof res->reason, "%s", why);
			res->stats = json_pack("{s:s, s:i, s:n, s:n, s:n, s:n}", "method",
			                       repeats > 1 ? "paired-bootstrap" : "single-run", "n",
			                       repeats, "delta", "ci_low", "ci_high", "p_value");
			return 0;
		}
		if (repeats == 1) {
			res->verdict = v;
			res->has_delta = 1;
			res->delta = d[0];
			res->stats =
			    json_pack("{s:s, s:i, s:o, s:n, s:n, s:n}", "method", "single-run", "n",
			              1, "delta", json_real(d[0]), "ci_low", "ci_high", "p_value");
			return 0;
		}
	}

	res->has_delta = 1;
	res->delta = model_score_round(mean_of(d, repeats));
	if (model_stats_bootstrap_ci(d, repeats, &lo, &hi))
		goto fail;
	p = model_stats_sign_test(d, repeats);
	res->stats = json_pack("{s:s, s:i, s:o, s:o, s:o, s:o}", "method", "paired-bootstrap", "n",
	                       repeats, "delta", num_or_null(1, res->delta), "ci_low",
	                       json_real(lo), "ci_high", json_real(hi), "p_value", json_real(p));
	if (lo > tolerance) {
		res->verdict = MODEL_VERDICT_IMPROVED;
	} else if (hi < -tolerance) {
		res->verdict = MODEL_VERDICT_REGRESSED;
	} else if (lo >= -tolerance && hi <= tolerance) {
		res->verdict = MODEL_VERDICT_UNCHANGED;
	} else {
		res->verdict = MODEL_VERDICT_INCONCLUSIVE;
		dlo = res->delta - -tolerance;
		dhi = res->delta - tolerance;
		dlo = dlo < 0 ? -dlo : dlo;
		dhi = dhi < 0 ? -dhi : dhi;
		gap = dlo < dhi ? dlo : dhi;
		need = model_stats_repeats_needed(d, repeats, gap);
		json_object_set_new_nocheck(res->stats, "repeats_needed", json_integer(need));
		if (need > MODEL_STATS_MAX_REPEATS)
			json_object_set_new_nocheck(
			    res->stats, "repeats_note",
			    json_string("more than the 20 repeats a comparison may ask for"));
		snprintf(res->reason, sizeof res->reason,
		         "the 95%% interval [%.9g, %.9g] of the mean delta %+.9g crosses the "
		         "tolerance %.9g; about %d repeats would likely decide it",
		         lo, hi, res->delta, tolerance, need);
	}
	return 0;
fail:
	model_stats_result_clear(res);
	return -1;
}
