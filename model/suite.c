/*
 * Builtin suite format: check and evaluation (suite.h). Pure: the file is
 * read by fcgi/scorer/scorer_builtin.c; POSIX <regex.h> is libc, no I/O.
 */
#include "suite.h"

#include <math.h> /* isfinite: a macro, no libm */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"

enum check_kind { CHECK_EQUALS, CHECK_CONTAINS, CHECK_REGEX, CHECK_NOT_MOCK_MISS };

static const char *const check_names[] = {
    [CHECK_EQUALS] = "equals",
    [CHECK_CONTAINS] = "contains",
    [CHECK_REGEX] = "regex",
    [CHECK_NOT_MOCK_MISS] = "not_mock_miss",
};
#define NCHECKS (sizeof(check_names) / sizeof(check_names[0]))

/* "expectations[i].key", the key cut to 32 bytes at a character boundary
 * (it comes from the document: valid UTF-8). */
static int cut_utf8(const char *k, size_t max)
{
	size_t len = strlen(k);

	if (len > max) {
		len = max;
		while (len > 0 && ((unsigned char)k[len] & 0xc0) == 0x80)
			len--;
	}
	return (int)len;
}

static void field_path(char *f, size_t n, size_t i, const char *k)
{
	snprintf(f, n, "expectations[%zu].%.*s", i, cut_utf8(k, 32), k);
}

static int expectation_check(json_t *e, size_t i, struct model_error *err)
{
	char f[64];
	const char *k;
	json_t *v;
	int nsel = 0, nchk = 0;
	size_t c;
	regex_t re;
	int rc;

	snprintf(f, sizeof(f), "expectations[%zu]", i);
	if (!json_is_object(e))
		return model_error_set(err, MODEL_E_MALFORMED, f, "an expectation is an object");
	json_object_foreach(e, k, v)
	{
		field_path(f, sizeof(f), i, k);
		if (strcmp(k, "key") == 0) {
			nsel++;
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "key must be a string");
			if (json_string_length(v) < 1 ||
			    json_string_length(v) > MODEL_MAX_SUITE_KEY_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "key must be 1 to %d bytes",
				                       MODEL_MAX_SUITE_KEY_BYTES);
		} else if (strcmp(k, "seq") == 0) {
			nsel++;
			if (!json_is_integer(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "seq must be an integer");
			if (json_integer_value(v) < 1)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "seq is a 1-based step number");
		} else if (strcmp(k, "step") == 0) {
			nsel++;
			if (!json_is_string(v) || strcmp(json_string_value(v), "*") != 0 ||
			    json_string_length(v) != 1)
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "step must be \"*\" (every step)");
		} else if (strcmp(k, "weight") == 0) {
			if (!json_is_number(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "weight must be a number");
			if (!(json_number_value(v) > 0 &&
			      json_number_value(v) <= MODEL_MAX_SUITE_WEIGHT))
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "weight must be > 0 and <= 1000000");
		} else {
			for (c = 0; c < NCHECKS; c++)
				if (strcmp(k, check_names[c]) == 0)
					break;
			if (c == NCHECKS)
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "unknown field \"%.*s\"", cut_utf8(k, 64),
				                       k);
			nchk++;
			if (c == CHECK_NOT_MOCK_MISS) {
				if (!json_is_boolean(v))
					return model_error_set(err, MODEL_E_MALFORMED, f,
					                       "not_mock_miss must be true");
				if (!json_is_true(v))
					return model_error_set(err, MODEL_E_INVALID, f,
					                       "not_mock_miss must be true");
				continue;
			}
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "%s must be a string", check_names[c]);
			if (c != CHECK_REGEX)
				continue;
			if (json_string_length(v) > MODEL_MAX_SUITE_REGEX_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "regex is at most %d bytes",
				                       MODEL_MAX_SUITE_REGEX_BYTES);
			if (strlen(json_string_value(v)) != json_string_length(v))
				return model_error_set(err, MODEL_E_INVALID, f,
				                       "regex must not contain NUL");
			rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char msg[128];

				regerror(rc, &re, msg, sizeof(msg));
				return model_error_set(err, MODEL_E_INVALID, f,
				                       "invalid regular expression: %s", msg);
			}
			regfree(&re);
		}
	}
	snprintf(f, sizeof(f), "expectations[%zu]", i);
	if (nsel != 1)
		return model_error_set(err, MODEL_E_MALFORMED, f,
		                       "an expectation names exactly one of key, seq, step");
	if (nchk != 1)
		return model_error_set(
		    err, MODEL_E_MALFORMED, f,
		    "an expectation has exactly one of equals, contains, regex, not_mock_miss");
	return 0;
}

int model_suite_check(json_t *suite, struct model_error *err)
{
	const char *k;
	json_t *v, *e;
	json_t *exps = NULL;
	int have_name = 0;
	size_t i;

	if (!json_is_object(suite))
		return model_error_set(err, MODEL_E_MALFORMED, "", "a suite is a JSON object");
	json_object_foreach(suite, k, v)
	{
		if (strcmp(k, "name") == 0) {
			have_name = 1;
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, "name",
				                       "name must be a string");
			if (json_string_length(v) < 1 ||
			    json_string_length(v) > MODEL_MAX_SUITE_NAME_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, "name",
				                       "name must be 1 to %d bytes",
				                       MODEL_MAX_SUITE_NAME_BYTES);
		} else if (strcmp(k, "threshold") == 0) {
			if (!json_is_number(v))
				return model_error_set(err, MODEL_E_MALFORMED, "threshold",
				                       "threshold must be a number");
			if (!(json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0))
				return model_error_set(err, MODEL_E_LIMIT, "threshold",
				                       "threshold must be in [0, 1]");
		} else if (strcmp(k, "expectations") == 0) {
			exps = v;
		} else {
			return model_error_set(err, MODEL_E_MALFORMED, "", "unknown field \"%.*s\"",
			                       cut_utf8(k, 64), k);
		}
	}
	if (!have_name)
		return model_error_set(err, MODEL_E_MALFORMED, "name", "name is required");
	if (!exps)
		return model_error_set(err, MODEL_E_MALFORMED, "expectations",
		                       "expectations is required");
	if (!json_is_array(exps))
		return model_error_set(err, MODEL_E_MALFORMED, "expectations",
		                       "expectations must be an array");
	if (json_array_size(exps) < 1 || json_array_size(exps) > MODEL_MAX_SUITE_EXPECTATIONS)
		return model_error_set(err, MODEL_E_LIMIT, "expectations",
		                       "a suite has 1 to %d expectations",
		                       MODEL_MAX_SUITE_EXPECTATIONS);
	json_array_foreach(exps, i, e)
	{
		if (expectation_check(e, i, err))
			return -1;
	}
	return 0;
}

/* ---- evaluation --------------------------------------------------------- */

struct expect {
	enum check_kind kind;
	json_t *arg; /* the string of equals/contains/regex (borrowed) */
	regex_t re;  /* compiled when kind == CHECK_REGEX */
	int have_re;
	double weight;
};

/* jansson allocation failure: the policy of alloc.h (print, abort). Only
 * memory can fail here: every string packed is valid UTF-8 already. */
static void oom(void)
{
	fputs("olivares: out of memory\n", stderr);
	abort();
}

struct tally {
	json_t *details;
	double held, total;
};

/* Does output object o satisfy x? Writes the detail message. */
static int holds(const struct expect *x, json_t *o, const char **msg)
{
	json_t *out = json_object_get(o, "output");
	json_t *kind = json_object_get(o, "error_kind");
	const char *s;
	size_t n;
	regmatch_t m;

	if (x->kind == CHECK_NOT_MOCK_MISS) {
		if (json_is_string(kind) && strcmp(json_string_value(kind), "mock_miss") == 0) {
			*msg = "step is a mock miss";
			return 0;
		}
		*msg = "step is not a mock miss";
		return 1;
	}
	if (!json_is_string(out)) {
		*msg = "step has no output";
		return 0;
	}
	s = json_string_value(out);
	n = json_string_length(out);
	switch (x->kind) {
	case CHECK_EQUALS:
		if (n == json_string_length(x->arg) &&
		    memcmp(s, json_string_value(x->arg), n) == 0) {
			*msg = "output equals the expected text";
			return 1;
		}
		*msg = "output differs from the expected text";
		return 0;
	case CHECK_CONTAINS:
		if (memmem(s, n, json_string_value(x->arg), json_string_length(x->arg))) {
			*msg = "output contains the expected text";
			return 1;
		}
		*msg = "output does not contain the expected text";
		return 0;
	default:
		/* REG_STARTEND: the output's length rules, not a NUL */
		m.rm_so = 0;
		m.rm_eo = (regoff_t)n;
		if (regexec(&x->re, s, 1, &m, REG_STARTEND) == 0) {
			*msg = "output matches the regular expression";
			return 1;
		}
		*msg = "output does not match the regular expression";
		return 0;
	}
}

static void record(struct tally *t, const struct expect *x, json_t *seq, json_t *key, int ok,
                   const char *msg)
{
	json_t *d;

	d = json_pack("{s:O, s:O, s:b, s:s, s:s}", "seq", seq ? seq : json_null(), "key",
	              key ? key : json_null(), "passed", ok, "check", check_names[x->kind],
	              "message", msg);
	if (!d || json_array_append_new(t->details, d))
		oom();
	t->total += x->weight;
	if (ok)
		t->held += x->weight;
}

static void evaluate_on(struct tally *t, const struct expect *x, json_t *o)
{
	const char *msg;
	int ok = holds(x, o, &msg);

	record(t, x, json_object_get(o, "seq"), json_object_get(o, "key"), ok, msg);
}

/* Apply expectation e (checked) to the outputs. */
static void evaluate_one(struct tally *t, json_t *e, const struct expect *x, json_t *outputs)
{
	json_t *sel, *o;
	json_t *seqv = NULL;
	size_t i;
	int found = 0;

	if (json_object_get(e, "step")) {
		json_array_foreach(outputs, i, o)
		{
			evaluate_on(t, x, o);
			found = 1;
		}
		if (!found)
			record(t, x, NULL, NULL, 0, "run has no steps");
		return;
	}
	sel = json_object_get(e, "key");
	if (sel) {
		/* A replay keeps a history's keys as recorded (history.h): a
		 * key may name several steps. Picking one would score the
		 * others silently; the expectation holds on each of them. */
		json_array_foreach(outputs, i, o)
		{
			if (json_equal(json_object_get(o, "key"), sel)) {
				evaluate_on(t, x, o);
				found = 1;
			}
		}
		if (!found)
			record(t, x, NULL, sel, 0, "no such step");
		return;
	}
	sel = json_object_get(e, "seq");
	json_array_foreach(outputs, i, o)
	{
		seqv = json_object_get(o, "seq");
		if (json_is_integer(seqv) && json_integer_value(seqv) == json_integer_value(sel)) {
			evaluate_on(t, x, o);
			return;
		}
	}
	record(t, x, sel, NULL, 0, "no such step");
}

/* Read expectation e (checked) into x; -1 only if its regex fails to compile. */
static int expect_load(json_t *e, struct expect *x)
{
	json_t *w = json_object_get(e, "weight");
	size_t c;

	memset(x, 0, sizeof(*x));
	x->weight = w ? json_number_value(w) : 1.0;
	for (c = 0; c < NCHECKS; c++) {
		x->arg = json_object_get(e, check_names[c]);
		if (x->arg)
			break;
	}
	x->kind = (enum check_kind)c;
	if (x->kind == CHECK_REGEX) {
		if (regcomp(&x->re, json_string_value(x->arg), REG_EXTENDED | REG_NOSUB) != 0)
			return -1;
		x->have_re = 1;
	}
	return 0;
}

int model_suite_evaluate(json_t *suite, json_t *outputs, struct model_score_result *res)
{
	struct model_error err;
	struct tally t = {NULL, 0.0, 0.0};
	struct expect x;
	json_t *exps, *e, *o, *th;
	double threshold = 1.0;
	size_t i;
	int rc = -1;

	model_score_result_clear(res);
	memset(&err, 0, sizeof(err));
	if (model_suite_check(suite, &err)) {
		snprintf(res->reason, sizeof(res->reason), "invalid suite: %s%s%s", err.field,
		         err.field[0] ? ": " : "", err.message);
		return -1;
	}
	if (!json_is_array(outputs)) {
		snprintf(res->reason, sizeof(res->reason), "outputs are not an array");
		return -1;
	}
	json_array_foreach(outputs, i, o)
	{
		if (!json_is_object(o)) {
			snprintf(res->reason, sizeof(res->reason), "outputs[%zu] is not an object",
			         i);
			return -1;
		}
	}
	th = json_object_get(suite, "threshold");
	if (th)
		threshold = json_number_value(th);
	exps = json_object_get(suite, "expectations");
	t.details = json_array();
	if (!t.details)
		oom();
	json_array_foreach(exps, i, e)
	{
		if (expect_load(e, &x)) {
			snprintf(
			    res->reason, sizeof(res->reason),
			    "invalid suite: expectations[%zu].regex: invalid regular expression",
			    i);
			goto out;
		}
		evaluate_one(&t, e, &x, outputs);
		if (x.have_re)
			regfree(&x.re);
	}
	res->scored = 1;
	/* total > 0: every expectation records at least one weighted line */
	res->score = t.held / t.total;
	if (res->score > 1.0)
		res->score = 1.0;
	/* passed is decided on the score as recorded (9 decimals), so that
	 * the recorded score and pass always agree */
	res->score = model_score_round(res->score);
	res->passed = res->score >= threshold;
	res->details = t.details;
	t.details = NULL;
	rc = 0;
out:
	json_decref(t.details);
	return rc;
}

int model_suite_ref_parse(const char *ref, char *name, size_t n, int *version)
{
	const char *at;
	size_t len;
	long long v = 0;
	const char *d;

	*version = 0;
	if (n)
		name[0] = '\0';
	if (!ref)
		return -1;
	at = strchr(ref, '@');
	len = at ? (size_t)(at - ref) : strlen(ref);
	if (len == 0 || len >= n)
		return -1;
	memcpy(name, ref, len);
	name[len] = '\0';
	if (!model_suite_name_valid(name)) {
		name[0] = '\0';
		return -1;
	}
	if (!at)
		return 0;
	d = at + 1;
	if (*d < '1' || *d > '9')
		goto bad;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			goto bad;
		v = v * 10 + (*d - '0');
		if (v > MODEL_SUITE_VERSION_MAX)
			goto bad;
	}
	*version = (int)v;
	return 0;
bad:
	name[0] = '\0';
	return -1;
}
