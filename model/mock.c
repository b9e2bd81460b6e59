/*
 * Tool mocks and near-miss explanations (mock.h).
 *
 * Object keys are always walked in sorted order, so that "the first
 * difference" does not depend on the order a client wrote its keys in
 * (key order is no part of JSON equality).
 */
#include "mock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "limits.h"

size_t model_mock_args_weight(json_t *args)
{
	const char *k;
	json_t *v;
	size_t n = 0;

	if (!json_is_object(args))
		return 0;
	json_object_foreach(args, k, v)
	{
		(void)k;
		n += 1 + model_mock_args_weight(v);
	}
	return n;
}

static int subset_of(json_t *want, json_t *got)
{
	const char *k;
	json_t *v, *g;

	if (!json_is_object(want) || !json_is_object(got))
		return json_equal(want, got);
	json_object_foreach(want, k, v)
	{
		g = json_object_get(got, k);
		if (!g || !subset_of(v, g))
			return 0;
	}
	return 1;
}

int model_mock_args_match(json_t *mock_args, json_t *call, int subset)
{
	json_t *empty = NULL;
	int r;

	if (!mock_args || !call) {
		empty = json_object();
		if (!mock_args)
			mock_args = empty;
		if (!call)
			call = empty;
	}
	r = subset ? subset_of(mock_args, call) : json_equal(mock_args, call);
	json_decref(empty);
	return r;
}

/* Some call matches both under subset: the keys both name hold equal
 * values or, both objects, compatible ones. */
static int compatible(json_t *a, json_t *b)
{
	const char *k;
	json_t *v, *w;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b);
	json_object_foreach(a, k, v)
	{
		w = json_object_get(b, k);
		if (w && !compatible(v, w))
			return 0;
	}
	return 1;
}

static int same_string(json_t *a, json_t *b)
{
	if (!json_is_string(a) || !json_is_string(b))
		return !json_is_string(a) && !json_is_string(b);
	return json_string_length(a) == json_string_length(b) &&
	       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
}

static int is_subset(json_t *mock)
{
	const char *m = json_string_value(json_object_get(mock, "match"));

	return m && strcmp(m, "subset") == 0;
}

int model_mock_tool_ambiguous(json_t *a, json_t *b)
{
	json_t *aa = json_object_get(a, "args");
	json_t *ba = json_object_get(b, "args");

	if (!json_is_string(json_object_get(a, "tool")) ||
	    !same_string(json_object_get(a, "tool"), json_object_get(b, "tool")))
		return 0;
	if (!same_string(json_object_get(a, "variant"), json_object_get(b, "variant")))
		return 0;
	if (is_subset(a) != is_subset(b))
		return 0;
	if (!is_subset(a))
		return model_mock_args_match(aa, ba, 0);
	return model_mock_args_weight(aa) == model_mock_args_weight(ba) && compatible(aa, ba);
}

/* 0: the mock does not apply to variant; 1: a variant-less mock; 2: a mock
 * of that variant. */
int model_mock_variant_tier(json_t *mock, const char *variant)
{
	json_t *var = json_object_get(mock, "variant");
	size_t vlen;

	if (!var || json_is_null(var))
		return 1;
	if (!variant || !json_is_string(var))
		return 0;
	vlen = strlen(variant);
	return json_string_length(var) == vlen && memcmp(json_string_value(var), variant, vlen) == 0
	           ? 2
	           : 0;
}

int model_mock_tool_find(json_t *mocks, const char *variant, const char *tool, json_t *args,
                         size_t *index)
{
	json_t *m, *t;
	size_t i, best = 0, tl = strlen(tool);
	/* rank: tier, exact, weight; compared in that order */
	long long rank, best_rank = -1;
	int tier, subset;

	json_array_foreach(mocks, i, m)
	{
		t = json_object_get(m, "tool");
		if (!json_is_string(t) || json_string_length(t) != tl ||
		    memcmp(json_string_value(t), tool, tl) != 0)
			continue;
		tier = model_mock_variant_tier(m, variant);
		if (!tier)
			continue;
		subset = is_subset(m);
		if (!model_mock_args_match(json_object_get(m, "args"), args, subset))
			continue;
		rank = (long long)tier * 4000000000LL + (subset ? 0 : 2000000000LL) +
		       (long long)model_mock_args_weight(json_object_get(m, "args"));
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	if (best_rank < 0)
		return 0;
	*index = best;
	return 1;
}

json_t *model_mock_tool_answer(json_t *mock, size_t call, const char **error)
{
	json_t *seq = json_object_get(mock, "sequence");
	json_t *err = json_object_get(mock, "error");

	*error = NULL;
	if (json_is_string(err)) {
		*error = json_string_value(err);
		return NULL;
	}
	if (json_is_array(seq) && json_array_size(seq) > 0) {
		/* after the last item, the last again */
		if (call >= json_array_size(seq))
			call = json_array_size(seq) - 1;
		return json_array_get(seq, call);
	}
	return json_object_get(mock, "response");
}

char *model_mock_tool_miss_marker(const char *tool, size_t tool_len)
{
	static const char open[] = "[[mock-miss:tool ";
	size_t n = sizeof(open) - 1 + tool_len + 2;
	char *p = model_xmalloc(n + 1);

	memcpy(p, open, sizeof(open) - 1);
	memcpy(p + sizeof(open) - 1, tool, tool_len);
	memcpy(p + n - 2, "]]", 3);
	return p;
}

/* ---- characters ----------------------------------------------------------- */

/* Decode the UTF-8 character at s[off]: its code point, or -1 for an
 * invalid byte; *len its bytes (1 for an invalid byte). */
static long decode(const unsigned char *s, size_t n, size_t off, size_t *len)
{
	unsigned char c = s[off];
	size_t need, i;
	long cp;

	*len = 1;
	if (c < 0x80)
		return c;
	if ((c & 0xe0) == 0xc0) {
		need = 1;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		need = 2;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		need = 3;
		cp = c & 0x07;
	} else {
		return -1;
	}
	for (i = 1; i <= need; i++) {
		if (off + i >= n || (s[off + i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[off + i] & 0x3f);
	}
	*len = need + 1;
	return cp;
}

/* The look-alikes the explanations name: a character that is easily
 * taken for another (ascii), mostly white space, dashes, quotes and the
 * Cyrillic and Greek capitals and small letters shaped as Latin ones. */
static const struct lookalike {
	long cp;
	const char *name;
	char ascii;
} lookalikes[] = {
    {0x00a0, "NO-BREAK SPACE", ' '},
    {0x2007, "FIGURE SPACE", ' '},
    {0x2009, "THIN SPACE", ' '},
    {0x202f, "NARROW NO-BREAK SPACE", ' '},
    {0x3000, "IDEOGRAPHIC SPACE", ' '},
    {0x200b, "ZERO WIDTH SPACE", 0},
    {0xfeff, "ZERO WIDTH NO-BREAK SPACE (BOM)", 0},
    {0x2010, "HYPHEN", '-'},
    {0x2011, "NON-BREAKING HYPHEN", '-'},
    {0x2013, "EN DASH", '-'},
    {0x2014, "EM DASH", '-'},
    {0x2212, "MINUS SIGN", '-'},
    {0x2018, "LEFT SINGLE QUOTATION MARK", '\''},
    {0x2019, "RIGHT SINGLE QUOTATION MARK", '\''},
    {0x201c, "LEFT DOUBLE QUOTATION MARK", '"'},
    {0x201d, "RIGHT DOUBLE QUOTATION MARK", '"'},
    {0x0410, "CYRILLIC CAPITAL LETTER A", 'A'},
    {0x0412, "CYRILLIC CAPITAL LETTER VE", 'B'},
    {0x0415, "CYRILLIC CAPITAL LETTER IE", 'E'},
    {0x041a, "CYRILLIC CAPITAL LETTER KA", 'K'},
    {0x041c, "CYRILLIC CAPITAL LETTER EM", 'M'},
    {0x041d, "CYRILLIC CAPITAL LETTER EN", 'H'},
    {0x041e, "CYRILLIC CAPITAL LETTER O", 'O'},
    {0x0420, "CYRILLIC CAPITAL LETTER ER", 'P'},
    {0x0421, "CYRILLIC CAPITAL LETTER ES", 'C'},
    {0x0422, "CYRILLIC CAPITAL LETTER TE", 'T'},
    {0x0425, "CYRILLIC CAPITAL LETTER HA", 'X'},
    {0x0430, "CYRILLIC SMALL LETTER A", 'a'},
    {0x0435, "CYRILLIC SMALL LETTER IE", 'e'},
    {0x043e, "CYRILLIC SMALL LETTER O", 'o'},
    {0x0440, "CYRILLIC SMALL LETTER ER", 'p'},
    {0x0441, "CYRILLIC SMALL LETTER ES", 'c'},
    {0x0443, "CYRILLIC SMALL LETTER U", 'y'},
    {0x0445, "CYRILLIC SMALL LETTER HA", 'x'},
    {0x0456, "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", 'i'},
    {0x0458, "CYRILLIC SMALL LETTER JE", 'j'},
    {0x0391, "GREEK CAPITAL LETTER ALPHA", 'A'},
    {0x0392, "GREEK CAPITAL LETTER BETA", 'B'},
    {0x0395, "GREEK CAPITAL LETTER EPSILON", 'E'},
    {0x039f, "GREEK CAPITAL LETTER OMICRON", 'O'},
    {0x03bf, "GREEK SMALL LETTER OMICRON", 'o'},
};

static const struct lookalike *lookalike_of(long cp)
{
	size_t i;

	for (i = 0; i < sizeof(lookalikes) / sizeof(lookalikes[0]); i++)
		if (lookalikes[i].cp == cp)
			return &lookalikes[i];
	return NULL;
}

void model_mock_describe_char(const char *s, size_t n, size_t off, char *buf, size_t buflen)
{
	const struct lookalike *la;
	size_t len;
	long cp;

	if (off >= n) {
		snprintf(buf, buflen, "end of text");
		return;
	}
	cp = decode((const unsigned char *)s, n, off, &len);
	if (cp < 0)
		snprintf(buf, buflen, "byte 0x%02x", (unsigned char)s[off]);
	else if (cp == '\r')
		snprintf(buf, buflen, "CR (U+000D)");
	else if (cp == '\n')
		snprintf(buf, buflen, "LF (U+000A)");
	else if (cp == '\t')
		snprintf(buf, buflen, "TAB (U+0009)");
	else if (cp == ' ')
		snprintf(buf, buflen, "SPACE (U+0020)");
	else if (cp > 0x20 && cp < 0x7f)
		snprintf(buf, buflen, "'%c' (U+%04lX)", (char)cp, cp);
	else if ((la = lookalike_of(cp)) != NULL)
		snprintf(buf, buflen, "%s (U+%04lX)", la->name, cp);
	else
		snprintf(buf, buflen, "U+%04lX", cp);
}

static int is_ws(long cp)
{
	const struct lookalike *la;

	if (cp == ' ' || cp == '\t' || cp == '\r' || cp == '\n' || cp == '\v' || cp == '\f')
		return 1;
	la = lookalike_of(cp);
	return la && (la->ascii == ' ' || la->ascii == 0);
}

/* 1 when s[off..n) is all white space (and not empty). */
static int rest_is_ws(const char *s, size_t n, size_t off)
{
	size_t len;

	if (off >= n)
		return 0;
	while (off < n) {
		if (!is_ws(decode((const unsigned char *)s, n, off, &len)))
			return 0;
		off += len;
	}
	return 1;
}

static long cp_at(const char *s, size_t n, size_t off)
{
	size_t len;

	return off < n ? decode((const unsigned char *)s, n, off, &len) : -2;
}

/* The first difference between request r and mock m: its offset, at the
 * start of a UTF-8 character. */
static size_t first_diff(const char *r, size_t rn, const char *m, size_t mn)
{
	size_t i = 0;

	while (i < rn && i < mn && r[i] == m[i])
		i++;
	/* back to the start of the character both share the lead of */
	while (i > 0 && ((i < rn && ((unsigned char)r[i] & 0xc0) == 0x80) ||
	                 (i < mn && ((unsigned char)m[i] & 0xc0) == 0x80)))
		i--;
	return i;
}

/* Why r and m differ at off, in words (mock.h's list). */
static void why_differ(const char *r, size_t rn, const char *m, size_t mn, size_t off, char *buf,
                       size_t buflen)
{
	long rc = cp_at(r, rn, off), mc = cp_at(m, mn, off);
	const struct lookalike *la;
	char a[96], b[96];

	if (off >= mn && rest_is_ws(r, rn, off))
		snprintf(buf, buflen, "trailing white space in the request");
	else if (off >= rn && rest_is_ws(m, mn, off))
		snprintf(buf, buflen, "trailing white space missing in the request");
	else if (rc == '\r' && mc == '\n')
		snprintf(buf, buflen, "line ending: CR LF in the request, LF in the mock");
	else if (rc == '\n' && mc == '\r')
		snprintf(buf, buflen, "line ending: LF in the request, CR LF in the mock");
	else if (off == 0 && rc >= 0 && is_ws(rc))
		snprintf(buf, buflen, "leading white space in the request");
	else if (off == 0 && mc >= 0 && is_ws(mc))
		snprintf(buf, buflen, "leading white space missing in the request");
	else if (((la = lookalike_of(rc)) != NULL && la->ascii && la->ascii == mc) ||
	         ((la = lookalike_of(mc)) != NULL && la->ascii && la->ascii == rc)) {
		model_mock_describe_char(r, rn, off, a, sizeof(a));
		model_mock_describe_char(m, mn, off, b, sizeof(b));
		snprintf(buf, buflen, "look-alike: %s in the request for %s in the mock", a, b);
	} else if (off >= rn)
		snprintf(buf, buflen, "the request is shorter");
	else if (off >= mn)
		snprintf(buf, buflen, "the request is longer");
	else
		snprintf(buf, buflen, "different character");
}

/* The mock nearest s (n bytes) among those of variant whose member key is
 * a string: longest common prefix, then smallest length difference, then
 * first. Returns its index, or -1 when no mock applies. */
static long nearest_text(json_t *mocks, const char *variant, const char *key, const char *s,
                         size_t n)
{
	json_t *m, *v;
	size_t i, p, best_p = 0, d, best_d = 0, vn;
	long best = -1;

	json_array_foreach(mocks, i, m)
	{
		v = json_object_get(m, key);
		if (!json_is_string(v) || !model_mock_variant_tier(m, variant))
			continue;
		vn = json_string_length(v);
		p = 0;
		while (p < n && p < vn && s[p] == json_string_value(v)[p])
			p++;
		d = vn > n ? vn - n : n - vn;
		if (best < 0 || p > best_p || (p == best_p && d < best_d)) {
			best = (long)i;
			best_p = p;
			best_d = d;
		}
	}
	return best;
}

void model_mock_text_diff(json_t *near, const char *r, size_t rn, const char *m, size_t mn)
{
	char a[96], b[96], why[256];
	size_t off = first_diff(r, rn, m, mn);

	model_mock_describe_char(r, rn, off, a, sizeof(a));
	model_mock_describe_char(m, mn, off, b, sizeof(b));
	why_differ(r, rn, m, mn, off, why, sizeof(why));
	json_object_set_new(near, "offset", json_integer((json_int_t)off));
	json_object_set_new(near, "request_has", json_string(a));
	json_object_set_new(near, "mock_has", json_string(b));
	json_object_set_new(near, "why", json_string(why));
}

json_t *model_mock_near_miss_resource(json_t *mocks, const char *variant, const char *input,
                                      size_t input_len)
{
	long i = nearest_text(mocks, variant, "resource", input, input_len);
	json_t *res, *near;

	if (i < 0)
		return NULL;
	res = json_object_get(json_array_get(mocks, (size_t)i), "resource");
	near = json_pack("{s:I, s:O}", "mock", (json_int_t)i, "resource", res);
	model_mock_text_diff(near, input, input_len, json_string_value(res),
	                     json_string_length(res));
	return near;
}

/* ---- tool arguments -------------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of obj, sorted (caller frees the array, not the keys). */
static const char **sorted_keys(json_t *obj, size_t *n)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t i = 0;

	*n = json_object_size(obj);
	keys = model_xcalloc(*n ? *n : 1, sizeof(*keys));
	json_object_foreach(obj, k, v)
	{
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, *n, sizeof(*keys), key_cmp);
	return keys;
}

static int ident_key(const char *k)
{
	const char *p;

	if (!*k)
		return 0;
	for (p = k; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		      (p != k && *p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/* path + ".k" or path + "[\"k\"]" (JSON-escaped), into a new string. */
static char *path_join(const char *path, const char *k)
{
	json_t *s;
	char *q, *out;
	size_t n;

	if (ident_key(k)) {
		n = strlen(path) + strlen(k) + 2;
		out = model_xmalloc(n);
		snprintf(out, n, "%s.%s", path, k);
		return out;
	}
	s = json_string(k);
	q = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	json_decref(s);
	n = strlen(path) + (q ? strlen(q) : 2) + 3;
	out = model_xmalloc(n);
	snprintf(out, n, "%s[%s]", path, q ? q : "\"\"");
	free(q);
	return out;
}

/* v as a near miss's value: a new reference, or NULL when over the cap. */
static json_t *shown_value(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t n = s ? strlen(s) : 0;

	free(s);
	return n > 0 && n <= MODEL_NEAR_MISS_VALUE_BYTES ? json_incref(v) : NULL;
}

int model_mock_args_diff(json_t *want, json_t *call, int subset, const char *path, json_t *near)
{
	const char **keys;
	size_t n, i;
	json_t *w, *g, *x;
	char *p;
	int found = 0;

	if (!json_is_object(want) || !json_is_object(call)) {
		if (json_equal(want, call))
			return 0;
		json_object_set_new(near, "path", json_string(path));
		json_object_set_new(near, "why", json_string("different value"));
		if ((x = shown_value(want)) != NULL)
			json_object_set_new(near, "expected", x);
		if ((x = shown_value(call)) != NULL)
			json_object_set_new(near, "got", x);
		return 1;
	}
	keys = sorted_keys(want, &n);
	for (i = 0; i < n && !found; i++) {
		w = json_object_get(want, keys[i]);
		g = json_object_get(call, keys[i]);
		p = path_join(path, keys[i]);
		if (!g) {
			json_object_set_new(near, "path", json_string(p));
			json_object_set_new(near, "why", json_string("missing"));
			if ((x = shown_value(w)) != NULL)
				json_object_set_new(near, "expected", x);
			found = 1;
		} else {
			found = model_mock_args_diff(w, g, subset, p, near);
		}
		free(p);
	}
	free(keys);
	if (found || subset)
		return found;
	keys = sorted_keys(call, &n);
	for (i = 0; i < n && !found; i++) {
		if (json_object_get(want, keys[i]))
			continue;
		p = path_join(path, keys[i]);
		json_object_set_new(near, "path", json_string(p));
		json_object_set_new(near, "why", json_string("extra key"));
		if ((x = shown_value(json_object_get(call, keys[i]))) != NULL)
			json_object_set_new(near, "got", x);
		free(p);
		found = 1;
	}
	free(keys);
	return found;
}

/* How near the call's args are to a mock's: top-level keys agreeing
 * (*agree) and differing (missing, different, or extra for exact). */
static void closeness(json_t *want, json_t *call, int subset, size_t *agree, size_t *differ)
{
	const char *k;
	json_t *v, *g;

	*agree = *differ = 0;
	json_object_foreach(want, k, v)
	{
		g = json_object_get(call, k);
		if (g && model_mock_args_match(v, g, subset))
			(*agree)++;
		else
			(*differ)++;
	}
	if (subset)
		return;
	json_object_foreach(call, k, v)
	{
		(void)v;
		if (!json_object_get(want, k))
			(*differ)++;
	}
}

json_t *model_mock_near_miss_tool(json_t *mocks, const char *variant, const char *tool,
                                  json_t *args)
{
	json_t *m, *t, *near, *empty = NULL, *margs;
	size_t i, tl = strlen(tool), agree, differ, best_a = 0, best_d = 0;
	long best = -1;
	int subset;

	if (!args)
		args = empty = json_object();
	json_array_foreach(mocks, i, m)
	{
		t = json_object_get(m, "tool");
		if (!json_is_string(t) || json_string_length(t) != tl ||
		    memcmp(json_string_value(t), tool, tl) != 0 ||
		    !model_mock_variant_tier(m, variant))
			continue;
		margs = json_object_get(m, "args");
		agree = differ = 0;
		/* args absent: {} (a validated mock always has them) */
		if (json_is_object(margs))
			closeness(margs, args, is_subset(m), &agree, &differ);
		if (best < 0 || agree > best_a || (agree == best_a && differ < best_d)) {
			best = (long)i;
			best_a = agree;
			best_d = differ;
		}
	}
	if (best >= 0) {
		m = json_array_get(mocks, (size_t)best);
		subset = is_subset(m);
		near = json_pack("{s:I, s:s, s:s}", "mock", (json_int_t)best, "tool", tool, "match",
		                 subset ? "subset" : "exact");
		margs = json_object_get(m, "args");
		if (!model_mock_args_diff(margs ? margs : args, args, subset, "$", near)) {
			/* matched after all (an unvalidated mock): say so plainly */
			json_object_set_new(near, "path", json_string("$"));
			json_object_set_new(near, "why", json_string("different value"));
		}
		json_decref(empty);
		return near;
	}
	json_decref(empty);
	best = nearest_text(mocks, variant, "tool", tool, tl);
	if (best < 0)
		return NULL;
	t = json_object_get(json_array_get(mocks, (size_t)best), "tool");
	near = json_pack("{s:I, s:O}", "mock", (json_int_t)best, "tool", t);
	model_mock_text_diff(near, tool, tl, json_string_value(t), json_string_length(t));
	json_object_set_new(near, "why", json_string("no mock for this tool"));
	return near;
}

/* ---- a step's trace ---------------------------------------------------------- */

/* s cut to at most max bytes at a character boundary: its new length. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* hit, mock, duration_us and, on a miss, near_miss (stolen) into e. */
static json_t *trace_tail(json_t *e, int hit, size_t mock, long long duration_us, json_t *near)
{
	json_object_set_new(e, "hit", json_boolean(hit));
	json_object_set_new(e, "mock", hit ? json_integer((json_int_t)mock) : json_null());
	json_object_set_new(e, "duration_us", json_integer(duration_us > 0 ? duration_us : 0));
	if (!hit)
		json_object_set_new(e, "near_miss", near ? near : json_null());
	return e;
}

json_t *model_trace_resource(json_t *mocks, const char *variant, const char *input, size_t len,
                             int hit, size_t mock, long long duration_us)
{
	size_t shown = utf8_cut(input, len, MODEL_MAX_RESOURCE_BYTES);
	json_t *e = json_object();

	json_object_set_new(e, "resource", json_stringn_nocheck(input, shown));
	if (shown < len)
		json_object_set_new(e, "truncated", json_true());
	return trace_tail(e, hit, mock, duration_us,
	                  hit ? NULL : model_mock_near_miss_resource(mocks, variant, input, len));
}

json_t *model_trace_tool(json_t *mocks, const char *variant, const char *tool, json_t *args,
                         int hit, size_t mock, int error, long long duration_us)
{
	size_t tl = strlen(tool);
	size_t shown = utf8_cut(tool, tl, MODEL_MAX_TOOL_BYTES);
	json_t *e = json_object();
	char *dump = args ? json_dumps(args, JSON_COMPACT) : NULL;
	int big = dump && strlen(dump) > MODEL_MAX_RESPONSE_BYTES;

	free(dump);
	json_object_set_new(e, "tool", json_stringn_nocheck(tool, shown));
	json_object_set_new(e, "args", args && !big ? json_deep_copy(args) : json_null());
	if (shown < tl || big)
		json_object_set_new(e, "truncated", json_true());
	if (hit && error)
		json_object_set_new(e, "error", json_true());
	return trace_tail(e, hit, mock, duration_us,
	                  hit ? NULL : model_mock_near_miss_tool(mocks, variant, tool, args));
}

static int index_ok(json_t *v, size_t n_mocks)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	       (unsigned long long)json_integer_value(v) < (unsigned long long)n_mocks;
}

/* The members only an http entry has (model/mock.h's trace comment):
 * http {method, url} strings, status, llm, refused, egress; resource,
 * tool, args and error never. hit and mock are checked by the caller. */
static int http_entry_check(json_t *e, size_t i, struct model_reason *why)
{
	json_t *h = json_object_get(e, "http"), *st = json_object_get(e, "status");
	json_t *hit = json_object_get(e, "hit"), *v;

	if (!json_is_object(h) || json_object_size(h) != 2 ||
	    !json_is_string(json_object_get(h, "method")) ||
	    !json_is_string(json_object_get(h, "url")))
		return model_reason_set(why, "trace[%zu].http must be {method, url}, two strings",
		                        i);
	if (json_object_get(e, "resource") || json_object_get(e, "tool") ||
	    json_object_get(e, "args") || json_object_get(e, "error"))
		return model_reason_set(why, "trace[%zu] has http and a resource or tool member",
		                        i);
	/* a request refused after the mocks were tried (egress to a host
	 * not allowed) keeps its near miss */
	v = json_object_get(e, "refused");
	if (v && (!json_is_string(v) || !json_is_false(hit) || json_object_get(e, "llm") ||
	          json_object_get(e, "egress")))
		return model_reason_set(why,
		                        "trace[%zu].refused must be a string, on a miss without "
		                        "llm or egress",
		                        i);
	/* a refused request may have been closed without an answer */
	if ((st || !v) &&
	    (!json_is_integer(st) || json_integer_value(st) < 100 || json_integer_value(st) > 599))
		return model_reason_set(why, "trace[%zu].status must be an HTTP status", i);
	v = json_object_get(e, "llm");
	if (v && (!json_is_true(v) || !json_is_true(hit)))
		return model_reason_set(why, "trace[%zu].llm must be true, on a hit", i);
	v = json_object_get(e, "egress");
	if (v && (!json_is_object(v) || !json_is_false(hit) || json_object_get(e, "near_miss")))
		return model_reason_set(why,
		                        "trace[%zu].egress must be an object, on a miss without "
		                        "near_miss",
		                        i);
	/* a recorded exchange (model/record.h): an answer a mock or the
	 * egress gave; what it holds is checked when the session is made */
	v = json_object_get(e, "record");
	if (v && (!json_is_object(v) || (!json_is_true(hit) && !json_object_get(e, "egress")) ||
	          (!json_is_string(json_object_get(v, "unrecordable")) &&
	           !(json_is_object(json_object_get(v, "http")) &&
	             json_is_object(json_object_get(v, "response"))))))
		return model_reason_set(why,
		                        "trace[%zu].record must be {http, response} or "
		                        "{unrecordable}, on a hit or an egress",
		                        i);
	return 0;
}

int model_trace_check(json_t *trace, size_t n_mocks, size_t *misses, struct model_reason *why)
{
	static const char *const allowed[] = {
	    "resource",  "tool", "args",   "hit", "mock",    "duration_us", "near_miss", "error",
	    "truncated", "http", "status", "llm", "refused", "egress",      "record",    NULL};
	const char *k;
	json_t *e, *v, *hit, *mock, *near, *dur;
	size_t i, j;

	*misses = 0;
	if (!json_is_array(trace))
		return model_reason_set(why, "trace must be an array");
	if (json_array_size(trace) > MODEL_MAX_STEP_REQUESTS)
		return model_reason_set(why, "trace has %zu entries, more than %d",
		                        json_array_size(trace), MODEL_MAX_STEP_REQUESTS);
	json_array_foreach(trace, i, e)
	{
		if (!json_is_object(e))
			return model_reason_set(why, "trace[%zu] must be an object", i);
		json_object_foreach(e, k, v)
		{
			for (j = 0; allowed[j] && strcmp(allowed[j], k) != 0; j++)
				;
			if (!allowed[j])
				return model_reason_set(why, "trace[%zu] has an unknown key", i);
		}
		if (json_object_get(e, "http")) {
			if (http_entry_check(e, i, why))
				return -1;
		} else if (!json_is_string(json_object_get(e, "resource")) ==
		           !json_is_string(json_object_get(e, "tool"))) {
			return model_reason_set(
			    why, "trace[%zu] needs one of resource, tool and http", i);
		} else if (json_object_get(e, "status") || json_object_get(e, "llm") ||
		           json_object_get(e, "refused") || json_object_get(e, "egress") ||
		           json_object_get(e, "record")) {
			return model_reason_set(
			    why, "trace[%zu] has a member of an http entry without http", i);
		}
		v = json_object_get(e, "args");
		if (json_object_get(e, "resource") ? v != NULL
		                                   : (v && !json_is_object(v) && !json_is_null(v)))
			return model_reason_set(why,
			                        "trace[%zu].args is misplaced or not an object", i);
		hit = json_object_get(e, "hit");
		mock = json_object_get(e, "mock");
		near = json_object_get(e, "near_miss");
		dur = json_object_get(e, "duration_us");
		if (!json_is_boolean(hit))
			return model_reason_set(why, "trace[%zu].hit must be a boolean", i);
		if (json_is_true(hit) ? !index_ok(mock, n_mocks) : !json_is_null(mock))
			return model_reason_set(why,
			                        "trace[%zu].mock must be a mock's index on a hit, "
			                        "null on a miss",
			                        i);
		if (!json_is_integer(dur) || json_integer_value(dur) < 0)
			return model_reason_set(
			    why, "trace[%zu].duration_us must be an integer >= 0", i);
		if (near &&
		    (json_is_true(hit) ||
		     !(json_is_null(near) ||
		       (json_is_object(near) && index_ok(json_object_get(near, "mock"), n_mocks)))))
			return model_reason_set(why, "trace[%zu].near_miss is not a near miss", i);
		v = json_object_get(e, "error");
		if (v && (!json_is_true(v) || !json_is_true(hit)))
			return model_reason_set(why, "trace[%zu].error must be true, on a hit", i);
		v = json_object_get(e, "truncated");
		if (v && !json_is_boolean(v))
			return model_reason_set(why, "trace[%zu].truncated must be a boolean", i);
		/* a request passed to the allow-listed egress was answered by
		 * the outside, not missed */
		if (json_is_false(hit) && !json_object_get(e, "egress"))
			(*misses)++;
	}
	return 0;
}
