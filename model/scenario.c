/*
 * Scenario validation and mock resolution (scenario.h).
 *
 * Errors have a priority: a structural problem (wrong type, unknown or
 * missing field, bad UTF-8: malformed, 400) wins over a refusal of
 * well-formed content (a bound: limit_exceeded; a duplicate or a
 * credential: invalid; both 422), whatever their order in the body. The
 * walk stops at the first structural problem and remembers only the first
 * refusal, which is reported if the structure is sound.
 */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "http_mock.h"
#include "limits.h"
#include "mock.h"
#include "text.h"

/*
 * A string member: type and UTF-8 are structural; the byte bounds
 * [min, max] and the credential rule are refusals. On success *out is a
 * new copy of the string (NULL if a refusal was recorded is fine too: the
 * caller discards the result then).
 */
static int check_string(struct model_check *c, json_t *v, const char *path, size_t min, size_t max,
                        json_t **out)
{
	const char *s;
	size_t n;

	*out = NULL;
	if (!json_is_string(v))
		return model_check_malformed(c, path, "%s must be a string", path);
	s = json_string_value(v);
	n = json_string_length(v);
	if (model_check_text(c, s, n, path, min, max))
		return -1;
	*out = json_stringn_nocheck(s, n);
	return 0;
}

static const char *const top_fields[] = {"name",  "description", "subject_kind",
                                         "steps", "mocks",       NULL};
static const char *const step_fields[] = {"key", "input", NULL};
static const char *const mock_fields[] = {"resource", "response", "variant", "delay_ms",
                                          "tool",     "args",     "match",   "sequence",
                                          "error",    "http",     "llm",     NULL};
/* the members a resource mock may not have (they are a tool mock's, or an
 * http or llm mock's) */
static const char *const tool_only_fields[] = {"args", "match", "sequence", "error",
                                               "http", "llm",   NULL};

/*
 * A mock's "delay_ms": an integer in [0, MODEL_MAX_MOCK_DELAY_MS]. Anything
 * but an integer of 0 or more (null, a real, a string, a negative) is
 * malformed: the field has no other meaning than a wait. An integer over
 * the cap is over a field limit (422), as an over-long response is.
 * *out is the value (0 when absent or refused).
 */
static int check_delay(struct model_check *c, json_t *v, const char *path, json_int_t *out)
{
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return model_check_malformed(c, path, "%s must be an integer from 0 to %d (ms)",
		                             path, MODEL_MAX_MOCK_DELAY_MS);
	if (json_integer_value(v) > MODEL_MAX_MOCK_DELAY_MS) {
		model_check_refuse(c, MODEL_E_LIMIT, path,
		                   "%s must be an integer from 0 to %d (ms)", path,
		                   MODEL_MAX_MOCK_DELAY_MS);
		return 0;
	}
	*out = json_integer_value(v);
	return 0;
}

static int check_steps(struct model_check *c, json_t *steps, json_t *out)
{
	json_t *item;
	json_t *key;
	json_t *input;
	json_t *skey;
	json_t *sinput;
	json_t *seen;
	json_t *prev;
	size_t i;
	char prefix[48];
	char path[64];
	char defkey[32];
	int ret;

	if (!json_is_array(steps))
		return model_check_malformed(c, "steps", "steps must be an array");
	if (json_array_size(steps) < 1 || json_array_size(steps) > MODEL_MAX_STEPS)
		model_check_refuse(c, MODEL_E_LIMIT, "steps", "steps must hold 1 to %d items",
		                   MODEL_MAX_STEPS);
	ret = -1;
	skey = NULL;
	sinput = NULL;
	/* key -> index of the step that holds it */
	seen = json_object();
	json_array_foreach(steps, i, item)
	{
		snprintf(prefix, sizeof(prefix), "steps[%zu]", i);
		if (!json_is_object(item)) {
			model_check_malformed(c, prefix, "%s must be an object", prefix);
			goto out;
		}
		if (model_check_keys(c, item, prefix, step_fields))
			goto out;
		input = json_object_get(item, "input");
		key = json_object_get(item, "key");
		snprintf(path, sizeof(path), "%s.input", prefix);
		if (!input) {
			model_check_malformed(c, path, "%s is required", path);
			goto out;
		}
		if (check_string(c, input, path, 0, MODEL_MAX_INPUT_BYTES, &sinput))
			goto out;
		if (key) {
			snprintf(path, sizeof(path), "%s.key", prefix);
			if (check_string(c, key, path, 1, MODEL_MAX_KEY_BYTES, &skey))
				goto out;
		} else {
			/* a missing key defaults to its 1-based position */
			snprintf(defkey, sizeof(defkey), "step-%zu", i + 1);
			skey = json_string(defkey);
		}
		prev = json_object_get(seen, json_string_value(skey));
		if (prev && key)
			model_check_refuse(c, MODEL_E_INVALID, path,
			                   "%s repeats the key of steps[%zu]", path,
			                   (size_t)json_integer_value(prev));
		else if (prev)
			model_check_refuse(
			    c, MODEL_E_INVALID, prefix,
			    "%s has no key and its default key %s is already used by "
			    "steps[%zu]",
			    prefix, defkey, (size_t)json_integer_value(prev));
		else
			json_object_set_new(seen, json_string_value(skey),
			                    json_integer((json_int_t)i));
		json_array_append_new(out, json_pack("{s:o,s:o}", "key", skey, "input", sinput));
		skey = NULL;
		sinput = NULL;
	}
	ret = 0;
out:
	json_decref(skey);
	json_decref(sinput);
	json_decref(seen);
	return ret;
}

struct mock_ref {
	const char *res;
	size_t res_len;
	const char *var; /* NULL when the mock has no variant */
	size_t var_len;
	size_t idx;
};

static int bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int r;

	r = memcmp(a, b, alen < blen ? alen : blen);
	if (r)
		return r;
	return (alen > blen) - (alen < blen);
}

/* Order by (variant presence, variant, resource). */
static int mock_key_cmp(const struct mock_ref *a, const struct mock_ref *b)
{
	int r;

	if (!a->var != !b->var)
		return a->var ? 1 : -1;
	if (a->var) {
		r = bytes_cmp(a->var, a->var_len, b->var, b->var_len);
		if (r)
			return r;
	}
	return bytes_cmp(a->res, a->res_len, b->res, b->res_len);
}

/* qsort order: by key, then position, so equal (resource, variant) pairs
 * end up adjacent, earliest first. */
static int mock_ref_cmp(const void *pa, const void *pb)
{
	const struct mock_ref *a = pa;
	const struct mock_ref *b = pb;
	int r;

	r = mock_key_cmp(a, b);
	if (r)
		return r;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Refuse two mocks with the same resource and variant, naming the first
 * mock (by position) that repeats an earlier one. */
static void check_mock_duplicates(struct model_check *c, json_t *mocks)
{
	struct mock_ref *refs;
	json_t *m;
	json_t *var;
	size_t n;
	size_t i;
	size_t dup;
	size_t orig;
	size_t total;

	total = json_array_size(mocks);
	if (total < 2)
		return;
	refs = model_xcalloc(total, sizeof(*refs));
	n = 0;
	json_array_foreach(mocks, i, m)
	{
		/* tool mocks have their own rule (check_tool_ambiguity) */
		if (!json_is_string(json_object_get(m, "resource")))
			continue;
		refs[n].res = json_string_value(json_object_get(m, "resource"));
		refs[n].res_len = json_string_length(json_object_get(m, "resource"));
		var = json_object_get(m, "variant");
		refs[n].var = var ? json_string_value(var) : NULL;
		refs[n].var_len = var ? json_string_length(var) : 0;
		refs[n].idx = i;
		n++;
	}
	qsort(refs, n, sizeof(*refs), mock_ref_cmp);
	dup = total;
	orig = 0;
	for (i = 1; i < n; i++) {
		if (mock_key_cmp(&refs[i - 1], &refs[i]) == 0 && refs[i].idx < dup) {
			dup = refs[i].idx;
			orig = refs[i - 1].idx;
		}
	}
	free(refs);
	if (dup < total) {
		char path[32];

		snprintf(path, sizeof(path), "mocks[%zu]", dup);
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s has the same resource and variant as mocks[%zu]; resolution "
		                   "must not be ambiguous",
		                   path, orig);
	}
}

static int is_subset_mock(json_t *m);

/* A tool mock (model/mock.h) at prefix into *out (a new object). The
 * variant and delay are the caller's. */
static int check_tool_mock(struct model_check *c, json_t *item, const char *prefix, json_t **out)
{
	static const char *const answers[] = {"response", "sequence", "error"};
	json_t *v, *norm, *s = NULL, *answer = NULL;
	const char *which = NULL, *match = "exact";
	char path[80];
	size_t i, n;

	*out = NULL;
	if (json_object_get(item, "http") || json_object_get(item, "llm")) {
		snprintf(path, sizeof(path), "%s.%s", prefix,
		         json_object_get(item, "http") ? "http" : "llm");
		return model_check_malformed(
		    c, path, "%s: a mock has one of resource, tool, http and llm", path);
	}
	if (json_object_get(item, "resource")) {
		snprintf(path, sizeof(path), "%s.resource", prefix);
		return model_check_malformed(c, path,
		                             "%s: a mock has a resource or a tool, not both", path);
	}
	snprintf(path, sizeof(path), "%s.tool", prefix);
	if (check_string(c, json_object_get(item, "tool"), path, 1, MODEL_MAX_TOOL_BYTES, &s))
		return -1;
	norm = json_pack("{s:o}", "tool", s);
	snprintf(path, sizeof(path), "%s.args", prefix);
	v = json_object_get(item, "args");
	if (v && !json_is_object(v)) {
		json_decref(norm);
		return model_check_malformed(c, path, "%s must be an object", path);
	}
	if (v && model_check_json_text(c, v, path, MODEL_MAX_RESPONSE_BYTES)) {
		json_decref(norm);
		return -1;
	}
	json_object_set_new(norm, "args", v ? json_deep_copy(v) : json_object());
	snprintf(path, sizeof(path), "%s.match", prefix);
	v = json_object_get(item, "match");
	if (v && !json_is_string(v)) {
		json_decref(norm);
		return model_check_malformed(c, path, "%s must be \"exact\" or \"subset\"", path);
	}
	if (v && strcmp(json_string_value(v), "exact") != 0 &&
	    strcmp(json_string_value(v), "subset") != 0)
		model_check_refuse(c, MODEL_E_INVALID, path, "%s must be \"exact\" or \"subset\"",
		                   path);
	else if (v)
		match = json_string_value(v);
	json_object_set_new(norm, "match", json_string(match));
	for (i = 0; i < 3; i++) {
		v = json_object_get(item, answers[i]);
		if (!v)
			continue;
		if (which) {
			snprintf(path, sizeof(path), "%s.%s", prefix, answers[i]);
			json_decref(norm);
			return model_check_malformed(
			    c, path,
			    "%s: a tool mock has one of response, sequence and error, not %s too",
			    path, which);
		}
		which = answers[i];
		answer = v;
	}
	if (!which) {
		json_decref(norm);
		snprintf(path, sizeof(path), "%s.response", prefix);
		return model_check_malformed(
		    c, path, "%s is required (or sequence, or error) in a tool mock", path);
	}
	snprintf(path, sizeof(path), "%s.%s", prefix, which);
	if (strcmp(which, "response") == 0) {
		if (model_check_json_value(c, answer, path)) {
			json_decref(norm);
			return -1;
		}
	} else if (strcmp(which, "sequence") == 0) {
		if (!json_is_array(answer)) {
			json_decref(norm);
			return model_check_malformed(c, path, "%s must be an array", path);
		}
		n = json_array_size(answer);
		if (n < 1 || n > MODEL_MAX_SEQUENCE)
			model_check_refuse(c, MODEL_E_LIMIT, path, "%s must hold 1 to %d items",
			                   path, MODEL_MAX_SEQUENCE);
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s.sequence[%zu]", prefix, i);
			if (model_check_json_value(c, json_array_get(answer, i), path)) {
				json_decref(norm);
				return -1;
			}
		}
	} else {
		if (check_string(c, answer, path, 1, MODEL_MAX_TOOL_ERROR_BYTES, &s)) {
			json_decref(norm);
			return -1;
		}
		json_decref(s);
	}
	json_object_set_new(norm, which, json_deep_copy(answer));
	*out = norm;
	return 0;
}

/* Refuse two tool mocks that could answer one call with equal precedence
 * (model_mock_tool_ambiguous), naming the later one of the first such
 * pair in document order. */
static void check_tool_ambiguity(struct model_check *c, json_t *mocks)
{
	size_t i, j, n = json_array_size(mocks);
	json_t *a, *b;
	char path[32];

	for (j = 1; j < n; j++) {
		b = json_array_get(mocks, j);
		if (!json_object_get(b, "tool"))
			continue;
		for (i = 0; i < j; i++) {
			a = json_array_get(mocks, i);
			if (!json_object_get(a, "tool") || !model_mock_tool_ambiguous(a, b))
				continue;
			snprintf(path, sizeof(path), "mocks[%zu]", j);
			model_check_refuse(
			    c, MODEL_E_INVALID, path,
			    "%s could answer the same call as mocks[%zu] (same tool, variant and "
			    "match, %s); resolution must not be ambiguous",
			    path, i,
			    is_subset_mock(b) ? "compatible args of the same weight"
			                      : "equal args");
			return;
		}
	}
}

static int is_subset_mock(json_t *m)
{
	return json_is_string(json_object_get(m, "match")) &&
	       strcmp(json_string_value(json_object_get(m, "match")), "subset") == 0;
}

static int check_mocks(struct model_check *c, json_t *mocks, json_t *out)
{
	json_t *item;
	json_t *v;
	json_t *sres;
	json_t *sresp;
	json_t *svar;
	json_t *norm;
	json_int_t delay;
	size_t i, k;
	char prefix[48];
	char path[64];
	int ret;

	if (!json_is_array(mocks))
		return model_check_malformed(c, "mocks", "mocks must be an array");
	if (json_array_size(mocks) > MODEL_MAX_MOCKS)
		model_check_refuse(c, MODEL_E_LIMIT, "mocks", "mocks must hold at most %d items",
		                   MODEL_MAX_MOCKS);
	ret = -1;
	sres = NULL;
	sresp = NULL;
	svar = NULL;
	json_array_foreach(mocks, i, item)
	{
		snprintf(prefix, sizeof(prefix), "mocks[%zu]", i);
		if (!json_is_object(item)) {
			model_check_malformed(c, prefix, "%s must be an object", prefix);
			goto out;
		}
		if (model_check_keys(c, item, prefix, mock_fields))
			goto out;
		if (json_object_get(item, "tool")) {
			if (check_tool_mock(c, item, prefix, &norm))
				goto out;
			goto common;
		}
		if (json_object_get(item, "http") || json_object_get(item, "llm")) {
			if (model_http_mock_check(c, item, prefix, &norm))
				goto out;
			goto common;
		}
		for (k = 0; tool_only_fields[k]; k++) {
			if (!json_object_get(item, tool_only_fields[k]))
				continue;
			snprintf(path, sizeof(path), "%s.%s", prefix, tool_only_fields[k]);
			model_check_malformed(c, path, "unknown field \"%s\" (a resource mock)",
			                      path);
			goto out;
		}
		snprintf(path, sizeof(path), "%s.resource", prefix);
		v = json_object_get(item, "resource");
		if (!v) {
			model_check_malformed(c, path, "%s is required", path);
			goto out;
		}
		if (check_string(c, v, path, 1, MODEL_MAX_RESOURCE_BYTES, &sres))
			goto out;
		snprintf(path, sizeof(path), "%s.response", prefix);
		v = json_object_get(item, "response");
		if (!v) {
			model_check_malformed(c, path, "%s is required", path);
			goto out;
		}
		if (check_string(c, v, path, 0, MODEL_MAX_RESPONSE_BYTES, &sresp))
			goto out;
		norm = json_pack("{s:o,s:o}", "resource", sres, "response", sresp);
		sres = NULL;
		sresp = NULL;
	common:
		snprintf(path, sizeof(path), "%s.variant", prefix);
		v = json_object_get(item, "variant");
		/* "variant": null means the same as no variant */
		if (v && !json_is_null(v) &&
		    check_string(c, v, path, 1, MODEL_MAX_VARIANT_BYTES, &svar)) {
			json_decref(norm);
			goto out;
		}
		snprintf(path, sizeof(path), "%s.delay_ms", prefix);
		if (check_delay(c, json_object_get(item, "delay_ms"), path, &delay)) {
			json_decref(norm);
			goto out;
		}
		if (svar)
			json_object_set_new(norm, "variant", svar);
		svar = NULL;
		/* 0 is the default and is left out, as an absent variant is: a
		 * scenario without delays keeps the shape (and digest) it had */
		if (delay > 0)
			json_object_set_new(norm, "delay_ms", json_integer(delay));
		json_array_append_new(out, norm);
	}
	check_mock_duplicates(c, out);
	check_tool_ambiguity(c, out);
	model_http_mocks_check_ambiguity(c, out);
	ret = 0;
out:
	json_decref(sres);
	json_decref(sresp);
	json_decref(svar);
	return ret;
}

/* A top-level string member, or its default on create. */
static int check_top_string(struct model_check *c, json_t *body, json_t *out, const char *name,
                            size_t min, size_t max, const char *dflt, int is_update)
{
	json_t *v;
	json_t *s;

	v = json_object_get(body, name);
	if (!v) {
		if (is_update)
			return 0;
		if (!dflt)
			return model_check_malformed(c, name, "%s is required", name);
		json_object_set_new(out, name, json_string(dflt));
		return 0;
	}
	if (check_string(c, v, name, min, max, &s))
		return -1;
	json_object_set_new(out, name, s);
	return 0;
}

int model_scenario_check(json_t *body, int is_update, json_t **normalized, struct model_error *err)
{
	struct model_check c;
	json_t *out;
	json_t *v;
	json_t *arr;
	int ret;

	memset(&c, 0, sizeof(c));
	c.err = err;
	if (!json_is_object(body))
		return model_error_set(err, MODEL_E_MALFORMED, "", "body must be a JSON object");
	if (model_check_keys(&c, body, "", top_fields))
		return -1;
	if (is_update && json_object_size(body) == 0)
		return model_error_set(err, MODEL_E_INVALID, "",
		                       "an update must contain at least one field");
	ret = -1;
	out = json_object();
	if (check_top_string(&c, body, out, "name", 1, MODEL_MAX_NAME_BYTES, NULL, is_update))
		goto out;
	/* a name of white space only says nothing; the same class of refusal
	 * as an empty one (an empty name was refused just above) */
	v = json_object_get(out, "name");
	if (v && json_string_length(v) > 0 &&
	    model_text_is_blank(json_string_value(v), json_string_length(v)))
		model_check_refuse(&c, MODEL_E_LIMIT, "name", "name must not be blank");
	if (check_top_string(&c, body, out, "description", 0, MODEL_MAX_DESCRIPTION_BYTES, "",
	                     is_update) ||
	    check_top_string(&c, body, out, "subject_kind", 1, MODEL_MAX_SUBJECT_BYTES,
	                     MODEL_DEFAULT_SUBJECT, is_update))
		goto out;

	v = json_object_get(body, "steps");
	if (!v && !is_update) {
		model_check_malformed(&c, "steps", "steps is required");
		goto out;
	}
	if (v) {
		arr = json_array();
		json_object_set_new(out, "steps", arr);
		if (check_steps(&c, v, arr))
			goto out;
	}

	v = json_object_get(body, "mocks");
	if (v || !is_update) {
		arr = json_array();
		json_object_set_new(out, "mocks", arr);
		if (v && check_mocks(&c, v, arr))
			goto out;
	}

	if (model_check_done(&c) != 0)
		goto out;
	*normalized = out;
	out = NULL;
	ret = 0;
out:
	json_decref(out);
	return ret;
}

int model_mock_resolve(json_t *mocks, const char *variant, const char *input, size_t input_len,
                       const char **response, size_t *response_len)
{
	return model_mock_lookup(mocks, variant, input, input_len, response, response_len, NULL);
}

int model_mock_find(json_t *mocks, const char *variant, const char *input, size_t input_len,
                    size_t *index)
{
	json_t *m;
	json_t *res;
	json_t *var;
	size_t i;
	size_t vlen;
	size_t fallback;
	int have_fallback;

	have_fallback = 0;
	fallback = 0;
	vlen = variant ? strlen(variant) : 0;
	json_array_foreach(mocks, i, m)
	{
		res = json_object_get(m, "resource");
		if (!json_is_string(res) || json_string_length(res) != input_len ||
		    memcmp(json_string_value(res), input, input_len) != 0 ||
		    !json_is_string(json_object_get(m, "response")))
			continue;
		var = json_object_get(m, "variant");
		if (!var || json_is_null(var)) {
			if (!have_fallback) {
				fallback = i;
				have_fallback = 1;
			}
			continue;
		}
		if (variant && json_is_string(var) && json_string_length(var) == vlen &&
		    memcmp(json_string_value(var), variant, vlen) == 0) {
			*index = i;
			return 1;
		}
	}
	if (!have_fallback)
		return 0;
	*index = fallback;
	return 1;
}

int model_mock_lookup(json_t *mocks, const char *variant, const char *input, size_t input_len,
                      const char **response, size_t *response_len, long *delay_ms)
{
	json_t *hit;
	json_t *res;
	size_t i;

	if (!model_mock_find(mocks, variant, input, input_len, &i))
		return 0;
	hit = json_array_get(mocks, i);
	res = json_object_get(hit, "response");
	*response = json_string_value(res);
	*response_len = json_string_length(res);
	if (delay_ms)
		*delay_ms = model_mock_delay_ms(hit);
	return 1;
}

long model_mock_delay_ms(json_t *mock)
{
	json_t *v = json_object_get(mock, "delay_ms");
	json_int_t ms;

	if (!json_is_integer(v))
		return 0;
	ms = json_integer_value(v);
	/* the bounds again: a caller that did not validate gets no odd wait */
	if (ms < 0 || ms > MODEL_MAX_MOCK_DELAY_MS)
		return 0;
	return (long)ms;
}

char *model_mock_miss_marker(const char *input, size_t input_len, size_t *out_len)
{
	static const char open[] = "[[mock-miss:";
	static const char close[] = "]]";
	size_t n;
	char *p;

	n = (sizeof(open) - 1) + input_len + (sizeof(close) - 1);
	p = model_xmalloc(n + 1);
	memcpy(p, open, sizeof(open) - 1);
	if (input_len)
		memcpy(p + sizeof(open) - 1, input, input_len);
	memcpy(p + sizeof(open) - 1 + input_len, close, sizeof(close) - 1);
	p[n] = '\0';
	if (out_len)
		*out_len = n;
	return p;
}

/* 1 when mock m is for variant (a string equal to it; never for NULL). */
static int mock_for(json_t *m, const char *variant)
{
	json_t *var = json_object_get(m, "variant");

	return variant && json_is_string(var) && strcmp(json_string_value(var), variant) == 0;
}

json_t *model_mocks_for_variant(json_t *mocks, const char *variant)
{
	json_t *out = json_array();
	json_t *m, *o, *var, *res, *other;
	size_t i, j;
	int shadowed;

	if (!out)
		return NULL;
	json_array_foreach(mocks, i, m)
	{
		var = json_object_get(m, "variant");
		if (var && !json_is_null(var) && !mock_for(m, variant))
			continue;
		if (!var || json_is_null(var)) {
			/* a mock for the variant wins over this one wherever it is */
			res = json_object_get(m, "resource");
			shadowed = 0;
			json_array_foreach(mocks, j, other)
			{
				if (mock_for(other, variant) &&
				    json_equal(json_object_get(other, "resource"), res))
					shadowed = 1;
			}
			if (shadowed)
				continue;
		}
		o = json_deep_copy(m);
		if (!o) {
			json_decref(out);
			return NULL;
		}
		json_object_del(o, "variant");
		json_array_append_new(out, o);
	}
	return out;
}
