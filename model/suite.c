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

#include "alloc.h"
#include "limits.h"

enum check_kind {
	CHECK_EQUALS,
	CHECK_CONTAINS,
	CHECK_REGEX,
	CHECK_NOT_MOCK_MISS,
	CHECK_CALLS,
	CHECK_CALL_COUNT,
	CHECK_MAX_DURATION,
	CHECK_JSON_PATH
};

static const char *const check_names[] = {
    [CHECK_EQUALS] = "equals",
    [CHECK_CONTAINS] = "contains",
    [CHECK_REGEX] = "regex",
    [CHECK_NOT_MOCK_MISS] = "not_mock_miss",
    [CHECK_CALLS] = "calls",
    [CHECK_CALL_COUNT] = "call_count",
    [CHECK_MAX_DURATION] = "max_duration_ms",
    [CHECK_JSON_PATH] = "json_path",
};
#define NCHECKS (sizeof(check_names) / sizeof(check_names[0]))

enum call_order { ORDER_IN_ORDER, ORDER_EXACT, ORDER_ANY };

/* the one test of a "json_path" */
enum path_test { PATH_EQUALS, PATH_EXISTS, PATH_CONTAINS, PATH_REGEX };

static const char *const path_tests[] = {
    [PATH_EQUALS] = "equals",
    [PATH_EXISTS] = "exists",
    [PATH_CONTAINS] = "contains",
    [PATH_REGEX] = "regex",
};
#define NPATHTESTS (sizeof(path_tests) / sizeof(path_tests[0]))

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

/* ---- json_path paths ---------------------------------------------------- */

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/*
 * Walk path p from root: "$", then any of .name (a letter or "_", then
 * letters, digits, "_"), ["name"] (any bytes, \" and \\ the only escapes)
 * and [N] (a decimal index from 0, no leading zero). Returns -1 with *why
 * on a syntax error; else 0 with *out the value, or NULL when the path is
 * not in root (root NULL: the syntax only). p is at most
 * MODEL_MAX_SUITE_PATH_BYTES, so a name fits the buffer.
 */
static int path_walk(const char *p, json_t *root, json_t **out, const char **why)
{
	char name[MODEL_MAX_SUITE_PATH_BYTES + 1];
	json_t *cur = root;
	size_t n, idx;

	*out = NULL;
	if (*p++ != '$') {
		*why = "a path starts with $";
		return -1;
	}
	while (*p) {
		n = 0;
		if (*p == '.') {
			p++;
			if (!is_name_start(*p)) {
				*why =
				    "after . comes a name: a letter or _, then letters, digits, _";
				return -1;
			}
			while (is_name_char(*p))
				name[n++] = *p++;
			name[n] = '\0';
			cur = json_is_object(cur) ? json_object_get(cur, name) : NULL;
		} else if (p[0] == '[' && p[1] == '"') {
			p += 2;
			while (*p && *p != '"') {
				if (*p == '\\') {
					p++;
					if (*p != '"' && *p != '\\') {
						*why = "in [\"name\"] the only escapes are \\\" "
						       "and \\\\";
						return -1;
					}
				}
				name[n++] = *p++;
			}
			if (p[0] != '"' || p[1] != ']') {
				*why = "a [\"name\"] ends with \"]";
				return -1;
			}
			p += 2;
			name[n] = '\0';
			cur = json_is_object(cur) ? json_object_get(cur, name) : NULL;
		} else if (*p == '[') {
			p++;
			if (!(*p >= '0' && *p <= '9') ||
			    (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) {
				*why = "an index is a decimal number from 0, without leading zeros";
				return -1;
			}
			idx = 0;
			while (*p >= '0' && *p <= '9') {
				if (++n > 9) {
					*why = "an index has at most 9 digits";
					return -1;
				}
				idx = idx * 10 + (size_t)(*p++ - '0');
			}
			if (*p++ != ']') {
				*why = "an index ends with ]";
				return -1;
			}
			cur = json_is_array(cur) ? json_array_get(cur, idx) : NULL;
		} else {
			*why = "a path goes on with .name, [\"name\"] or [N]";
			return -1;
		}
	}
	*out = cur;
	return 0;
}

/* ---- checks of the new kinds -------------------------------------------- */

/* A tool, resource or bound integer of a call entry: base is the entry's
 * path ("expectations[2].calls[0]"). calls entries may have "args" (with
 * "tool"); a call_count has "min", "max", "equals" instead. */
static int call_entry_check(json_t *c, const char *base, int counting, struct model_error *err)
{
	char f[160];
	const char *k;
	json_t *v;
	int nsel = 0, nbound = 0;

	if (!json_is_object(c))
		return model_error_set(err, MODEL_E_MALFORMED, base,
		                       counting ? "call_count is an object"
		                                : "a call is an object");
	json_object_foreach(c, k, v)
	{
		snprintf(f, sizeof(f), "%s.%.*s", base, cut_utf8(k, 16), k);
		if (strcmp(k, "tool") == 0) {
			nsel++;
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "tool must be a string");
			if (json_string_length(v) < 1 ||
			    json_string_length(v) > MODEL_MAX_TOOL_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "tool must be 1 to %d bytes",
				                       MODEL_MAX_TOOL_BYTES);
		} else if (strcmp(k, "resource") == 0) {
			nsel++;
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "resource must be a string");
			if (json_string_length(v) < 1 ||
			    json_string_length(v) > MODEL_MAX_RESOURCE_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "resource must be 1 to %d bytes",
				                       MODEL_MAX_RESOURCE_BYTES);
		} else if (!counting && strcmp(k, "args") == 0) {
			if (!json_is_object(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "args must be an object");
			if (!json_object_get(c, "tool"))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "args goes with a tool");
		} else if (counting && (strcmp(k, "min") == 0 || strcmp(k, "max") == 0 ||
		                        strcmp(k, "equals") == 0)) {
			nbound++;
			if (!json_is_integer(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "%s must be an integer", k);
			if (json_integer_value(v) < 0 ||
			    json_integer_value(v) > MODEL_MAX_SUITE_CALLS)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "%s must be 0 to %d (a step's requests)", k,
				                       MODEL_MAX_SUITE_CALLS);
		} else {
			return model_error_set(err, MODEL_E_MALFORMED, f, "unknown field \"%.*s\"",
			                       cut_utf8(k, 64), k);
		}
	}
	if (nsel != 1)
		return model_error_set(err, MODEL_E_MALFORMED, base,
		                       "%s names exactly one of tool, resource",
		                       counting ? "call_count" : "a call");
	if (!counting)
		return 0;
	if (nbound == 0)
		return model_error_set(err, MODEL_E_MALFORMED, base,
		                       "call_count has min, max or equals");
	if (json_object_get(c, "equals") && nbound > 1)
		return model_error_set(err, MODEL_E_MALFORMED, base,
		                       "call_count has equals, or min and max, not both");
	if (json_object_get(c, "min") && json_object_get(c, "max") &&
	    json_integer_value(json_object_get(c, "min")) >
	        json_integer_value(json_object_get(c, "max"))) {
		snprintf(f, sizeof(f), "%s.max", base);
		return model_error_set(err, MODEL_E_INVALID, f, "max must be at least min");
	}
	return 0;
}

static int regex_check(json_t *v, const char *f, struct model_error *err)
{
	regex_t re;
	int rc;

	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, f, "regex must be a string");
	if (json_string_length(v) > MODEL_MAX_SUITE_REGEX_BYTES)
		return model_error_set(err, MODEL_E_LIMIT, f, "regex is at most %d bytes",
		                       MODEL_MAX_SUITE_REGEX_BYTES);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return model_error_set(err, MODEL_E_INVALID, f, "regex must not contain NUL");
	rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		return model_error_set(err, MODEL_E_INVALID, f, "invalid regular expression: %s",
		                       msg);
	}
	regfree(&re);
	return 0;
}

static int json_path_check(json_t *jp, const char *base, struct model_error *err)
{
	char f[160];
	const char *k, *why;
	json_t *v, *unused;
	int ntest = 0;
	size_t t;

	if (!json_is_object(jp))
		return model_error_set(err, MODEL_E_MALFORMED, base, "json_path is an object");
	json_object_foreach(jp, k, v)
	{
		snprintf(f, sizeof(f), "%s.%.*s", base, cut_utf8(k, 16), k);
		if (strcmp(k, "path") == 0) {
			if (!json_is_string(v))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "path must be a string");
			if (json_string_length(v) > MODEL_MAX_SUITE_PATH_BYTES)
				return model_error_set(err, MODEL_E_LIMIT, f,
				                       "path is at most %d bytes",
				                       MODEL_MAX_SUITE_PATH_BYTES);
			if (strlen(json_string_value(v)) != json_string_length(v))
				return model_error_set(err, MODEL_E_INVALID, f,
				                       "path must not contain NUL");
			if (path_walk(json_string_value(v), NULL, &unused, &why))
				return model_error_set(err, MODEL_E_INVALID, f, "invalid path: %s",
				                       why);
			continue;
		}
		for (t = 0; t < NPATHTESTS; t++)
			if (strcmp(k, path_tests[t]) == 0)
				break;
		if (t == NPATHTESTS)
			return model_error_set(err, MODEL_E_MALFORMED, f, "unknown field \"%.*s\"",
			                       cut_utf8(k, 64), k);
		ntest++;
		if (t == PATH_EXISTS && !json_is_boolean(v))
			return model_error_set(err, MODEL_E_MALFORMED, f,
			                       "exists must be a boolean");
		if (t == PATH_CONTAINS && !json_is_string(v))
			return model_error_set(err, MODEL_E_MALFORMED, f,
			                       "contains must be a string");
		if (t == PATH_REGEX && regex_check(v, f, err))
			return -1;
	}
	if (!json_object_get(jp, "path")) {
		snprintf(f, sizeof(f), "%s.path", base);
		return model_error_set(err, MODEL_E_MALFORMED, f, "path is required");
	}
	if (ntest != 1)
		return model_error_set(
		    err, MODEL_E_MALFORMED, base,
		    "json_path has exactly one of equals, exists, contains, regex");
	return 0;
}

/* The argument v of check c of expectation i (path f), for the checks
 * that are not a plain string or true. */
static int new_check(enum check_kind c, json_t *v, const char *f, struct model_error *err)
{
	char g[96];
	json_t *e;
	size_t j;

	switch (c) {
	case CHECK_CALLS:
		if (!json_is_array(v))
			return model_error_set(err, MODEL_E_MALFORMED, f, "calls must be an array");
		if (json_array_size(v) < 1 || json_array_size(v) > MODEL_MAX_SUITE_CALLS)
			return model_error_set(err, MODEL_E_LIMIT, f, "calls has 1 to %d calls",
			                       MODEL_MAX_SUITE_CALLS);
		json_array_foreach(v, j, e)
		{
			snprintf(g, sizeof(g), "%s[%zu]", f, j);
			if (call_entry_check(e, g, 0, err))
				return -1;
		}
		return 0;
	case CHECK_CALL_COUNT:
		return call_entry_check(v, f, 1, err);
	case CHECK_MAX_DURATION:
		if (!json_is_number(v))
			return model_error_set(err, MODEL_E_MALFORMED, f,
			                       "max_duration_ms must be a number");
		if (!(json_number_value(v) >= 0 &&
		      json_number_value(v) <= MODEL_MAX_SUITE_DURATION_MS))
			return model_error_set(err, MODEL_E_LIMIT, f,
			                       "max_duration_ms must be 0 to %d",
			                       MODEL_MAX_SUITE_DURATION_MS);
		return 0;
	default:
		return json_path_check(v, f, err);
	}
}

static int expectation_check(json_t *e, size_t i, struct model_error *err)
{
	char f[64];
	const char *k;
	json_t *v;
	int nsel = 0, nchk = 0;
	size_t c;

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
		} else if (strcmp(k, "order") == 0) {
			if (!json_is_string(v) || (strcmp(json_string_value(v), "exact") != 0 &&
			                           strcmp(json_string_value(v), "in_order") != 0 &&
			                           strcmp(json_string_value(v), "any") != 0))
				return model_error_set(
				    err, MODEL_E_MALFORMED, f,
				    "order must be \"exact\", \"in_order\" or \"any\"");
			if (!json_object_get(e, "calls"))
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "order goes with calls");
		} else {
			for (c = 0; c < NCHECKS; c++)
				if (strcmp(k, check_names[c]) == 0)
					break;
			if (c == NCHECKS)
				return model_error_set(err, MODEL_E_MALFORMED, f,
				                       "unknown field \"%.*s\"", cut_utf8(k, 64),
				                       k);
			nchk++;
			if (c >= CHECK_CALLS) {
				if (new_check((enum check_kind)c, v, f, err))
					return -1;
				continue;
			}
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
			if (c == CHECK_REGEX && regex_check(v, f, err))
				return -1;
		}
	}
	snprintf(f, sizeof(f), "expectations[%zu]", i);
	if (nsel != 1)
		return model_error_set(err, MODEL_E_MALFORMED, f,
		                       "an expectation names exactly one of key, seq, step");
	if (nchk != 1)
		return model_error_set(
		    err, MODEL_E_MALFORMED, f,
		    "an expectation has exactly one of equals, contains, regex, not_mock_miss, "
		    "calls, call_count, max_duration_ms, json_path");
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
	json_t *arg; /* the check's value (borrowed) */
	regex_t re;  /* compiled for a regex, or a json_path's regex */
	int have_re;
	double weight;
	enum call_order order; /* calls */
	enum path_test test;   /* json_path */
	json_t *test_arg;      /* json_path: the test's value (borrowed) */
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

/* JSON values equal, numbers by their value (1 == 1.0), objects
 * whatever the order of their keys. */
static int value_equal(json_t *a, json_t *b)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_is_object(a) && json_is_object(b)) {
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach(a, k, v)
		{
			json_t *w = json_object_get(b, k);

			if (!w || !value_equal(v, w))
				return 0;
		}
		return 1;
	}
	if (json_is_array(a) && json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b))
			return 0;
		json_array_foreach(a, i, v)
		{
			if (!value_equal(v, json_array_get(b, i)))
				return 0;
		}
		return 1;
	}
	return json_equal(a, b);
}

/* Is trace entry got the call want ({"tool","args"?} or {"resource"})?
 * The listed args must be in the call's args with equal values; the
 * call may have more. */
static int call_matches(json_t *want, json_t *got)
{
	json_t *tool = json_object_get(want, "tool");
	json_t *args, *gargs, *v, *w;
	const char *k;

	if (!json_is_object(got))
		return 0;
	if (!tool)
		return json_equal(json_object_get(want, "resource"),
		                  json_object_get(got, "resource"));
	if (!json_equal(tool, json_object_get(got, "tool")))
		return 0;
	args = json_object_get(want, "args");
	if (!args)
		return 1;
	gargs = json_object_get(got, "args");
	if (!json_is_object(gargs))
		return 0;
	json_object_foreach(args, k, v)
	{
		w = json_object_get(gargs, k);
		if (!w || !value_equal(v, w))
			return 0;
	}
	return 1;
}

/* Kuhn's augmenting path: can want[u] take a trace entry, moving the
 * others? match[t] is 1 + the want index holding trace entry t, or 0. */
static int augment(json_t *want, json_t *trace, size_t u, size_t *match, unsigned char *seen)
{
	json_t *g;
	size_t t;

	json_array_foreach(trace, t, g)
	{
		if (seen[t] || !call_matches(json_array_get(want, u), g))
			continue;
		seen[t] = 1;
		if (!match[t] || augment(want, trace, match[t] - 1, match, seen)) {
			match[t] = u + 1;
			return 1;
		}
	}
	return 0;
}

static int calls_hold(const struct expect *x, json_t *trace, const char **msg)
{
	size_t nw = json_array_size(x->arg), nt = json_array_size(trace);
	size_t u, t = 0, *match;
	unsigned char *seen;
	int ok = 1;

	switch (x->order) {
	case ORDER_EXACT:
		ok = nw == nt;
		for (u = 0; ok && u < nw; u++)
			ok = call_matches(json_array_get(x->arg, u), json_array_get(trace, u));
		*msg = ok ? "the step's requests are exactly the expected calls"
		          : "the step's requests are not exactly the expected calls";
		return ok;
	case ORDER_ANY:
		/* each expected call its own request: a maximum matching, so
		 * that a loose entry never takes the request a strict one needs */
		ok = nw <= nt;
		match = model_xcalloc(nt ? nt : 1, sizeof(*match));
		seen = model_xcalloc(nt ? nt : 1, 1);
		for (u = 0; ok && u < nw; u++) {
			memset(seen, 0, nt ? nt : 1);
			ok = augment(x->arg, trace, u, match, seen);
		}
		free(match);
		free(seen);
		*msg = ok ? "the step made the expected calls"
		          : "the step did not make every expected call";
		return ok;
	default:
		/* a subsequence: the earliest match of each call in turn is
		 * as good as any */
		for (u = 0; u < nw; u++) {
			while (t < nt &&
			       !call_matches(json_array_get(x->arg, u), json_array_get(trace, t)))
				t++;
			if (t == nt)
				break;
			t++;
		}
		ok = u == nw;
		*msg = ok ? "the step made the expected calls in order"
		          : "the step did not make the expected calls in order";
		return ok;
	}
}

static int call_count_holds(const struct expect *x, json_t *trace, const char **msg)
{
	json_t *g, *b;
	size_t t;
	json_int_t n = 0;
	int ok = 1;

	json_array_foreach(trace, t, g)
	{
		if (call_matches(x->arg, g))
			n++;
	}
	b = json_object_get(x->arg, "equals");
	if (b && n != json_integer_value(b))
		ok = 0;
	b = json_object_get(x->arg, "min");
	if (b && n < json_integer_value(b))
		ok = 0;
	b = json_object_get(x->arg, "max");
	if (b && n > json_integer_value(b))
		ok = 0;
	*msg = ok ? "the number of calls is within the bounds"
	          : "the number of calls is outside the bounds";
	return ok;
}

static int json_path_holds(const struct expect *x, const char *s, size_t n, const char **msg)
{
	json_t *doc, *v;
	const char *why;
	regmatch_t m;
	int ok;

	/* duplicate keys refused: which of them a path names would be a guess */
	doc = json_loadb(s, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (!doc) {
		*msg = "output is not JSON";
		return 0;
	}
	path_walk(json_string_value(json_object_get(x->arg, "path")), doc, &v, &why);
	if (x->test == PATH_EXISTS) {
		ok = (v != NULL) == json_is_true(x->test_arg);
		*msg = v ? "the path is in the output" : "the path is not in the output";
	} else if (!v) {
		ok = 0;
		*msg = "the path is not in the output";
	} else if (x->test == PATH_EQUALS) {
		ok = value_equal(v, x->test_arg);
		*msg = ok ? "the value at the path equals the expected value"
		          : "the value at the path differs from the expected value";
	} else if (!json_is_string(v)) {
		ok = 0;
		*msg = "the value at the path is not a string";
	} else if (x->test == PATH_CONTAINS) {
		ok =
		    memmem(json_string_value(v), json_string_length(v),
		           json_string_value(x->test_arg), json_string_length(x->test_arg)) != NULL;
		*msg = ok ? "the value at the path contains the expected text"
		          : "the value at the path does not contain the expected text";
	} else {
		m.rm_so = 0;
		m.rm_eo = (regoff_t)json_string_length(v);
		ok = regexec(&x->re, json_string_value(v), 1, &m, REG_STARTEND) == 0;
		*msg = ok ? "the value at the path matches the regular expression"
		          : "the value at the path does not match the regular expression";
	}
	json_decref(doc);
	return ok;
}

/* The checks on a step's trace and time, which do not read its output. */
static int holds_step(const struct expect *x, json_t *o, const char **msg)
{
	json_t *trace = json_object_get(o, "trace");
	json_t *d;

	if (x->kind == CHECK_MAX_DURATION) {
		d = json_object_get(o, "duration_ms");
		if (!json_is_number(d)) {
			*msg = "step has no duration";
			return 0;
		}
		if (json_number_value(d) <= json_number_value(x->arg)) {
			*msg = "step took at most the allowed time";
			return 1;
		}
		*msg = "step took longer than the allowed time";
		return 0;
	}
	if (!json_is_array(trace)) {
		*msg = "step has no trace";
		return 0;
	}
	if (x->kind == CHECK_CALLS)
		return calls_hold(x, trace, msg);
	return call_count_holds(x, trace, msg);
}

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
	if (x->kind == CHECK_CALLS || x->kind == CHECK_CALL_COUNT || x->kind == CHECK_MAX_DURATION)
		return holds_step(x, o, msg);
	if (!json_is_string(out)) {
		*msg = "step has no output";
		return 0;
	}
	s = json_string_value(out);
	n = json_string_length(out);
	switch (x->kind) {
	case CHECK_JSON_PATH:
		return json_path_holds(x, s, n, msg);
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
	if (x->kind == CHECK_CALLS) {
		const char *o = json_string_value(json_object_get(e, "order"));

		x->order = !o                        ? ORDER_IN_ORDER
		           : strcmp(o, "exact") == 0 ? ORDER_EXACT
		           : strcmp(o, "any") == 0   ? ORDER_ANY
		                                     : ORDER_IN_ORDER;
	}
	if (x->kind == CHECK_JSON_PATH) {
		for (c = 0; c < NPATHTESTS; c++) {
			x->test_arg = json_object_get(x->arg, path_tests[c]);
			if (x->test_arg)
				break;
		}
		x->test = (enum path_test)c;
	}
	if (x->kind == CHECK_REGEX || (x->kind == CHECK_JSON_PATH && x->test == PATH_REGEX)) {
		if (regcomp(&x->re,
		            json_string_value(x->kind == CHECK_REGEX ? x->arg : x->test_arg),
		            REG_EXTENDED | REG_NOSUB) != 0)
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
			snprintf(res->reason, sizeof(res->reason),
			         "invalid suite: expectations[%zu].%s: invalid regular expression",
			         i, x.kind == CHECK_REGEX ? "regex" : "json_path.regex");
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
