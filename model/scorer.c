/*
 * The scorer port's shared parts (scorer.h): the "none" adapter, the result
 * cleanup, the suite name rule.
 */
#include "scorer.h"

#include <stdio.h>
#include <string.h>

#include "limits.h"

void model_score_result_clear(struct model_score_result *res)
{
	if (!res)
		return;
	json_decref(res->details);
	memset(res, 0, sizeof(*res));
}

/* "none": nothing is wired, so nothing is scored and the run says so
 * (sandbox page: never a silent pass). */
static int none_score(void *ctx, const char *suite, json_t *outputs, struct model_score_result *res)
{
	(void)ctx;
	(void)suite;
	(void)outputs;
	model_score_result_clear(res);
	snprintf(res->reason, sizeof(res->reason), "no scorer adapter is wired");
	return -1;
}

static void none_destroy(void *ctx)
{
	(void)ctx;
}

const struct model_scorer_ops model_scorer_none = {
    .name = "none",
    .score = none_score,
    .destroy = none_destroy,
};

/* ASCII classes only: no locale. */
static int name_char(char c, int first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return 1;
	return !first && (c == '.' || c == '_' || c == '-');
}

int model_suite_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return 0;
	for (i = 0; name[i]; i++) {
		if (i >= MODEL_MAX_SUITE_NAME_BYTES || !name_char(name[i], i == 0))
			return 0;
	}
	return 1;
}

double model_score_round(double x)
{
	double y = x * 1e9;
	long long k;

	/* without libm: |x| is at most 1 for scores and deltas */
	k = (long long)(y < 0 ? y - 0.5 : y + 0.5);
	return k == 0 ? 0.0 : (double)k / 1e9; /* no "-0" */
}
