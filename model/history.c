/*
 * Historical sessions: import check, timeline reconstruction, divergence
 * (history.h).
 *
 * The import check follows scenario.c's error priority: a structural
 * problem (wrong type, unknown or missing field, bad UTF-8: malformed, 400)
 * wins over a refusal of well-formed content (a bound or a credential:
 * 422), and among refusals the first met in document order is reported.
 *
 * The reconstruction never trusts the stored events: it is pure, takes any
 * JSON value, and either rebuilds the whole timeline or says which event
 * makes it impossible. It never repairs a history (no renumbering, no
 * guessing of a missing seq): a replay of a repaired history would be a
 * fabricated one.
 */
#include "history.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "http_mock.h"
#include "limits.h"
#include "text.h"

/* ---- import check ------------------------------------------------------- */

static int kind_is(json_t *ev, const char *kind)
{
	json_t *k;

	k = json_object_get(ev, "kind");
	return json_is_string(k) && strcmp(json_string_value(k), kind) == 0 &&
	       strlen(kind) == json_string_length(k);
}

static int check_string(struct model_check *c, json_t *v, const char *path, size_t min, size_t max)
{
	if (!json_is_string(v))
		return model_check_malformed(c, path, "%s must be a string", path);
	return model_check_text(c, json_string_value(v), json_string_length(v), path, min, max);
}

/*
 * seq is kept as recorded, whatever its type (a broken source is imported
 * so that the replay can name what breaks it), but every string inside it,
 * object keys included, is text like any other: UTF-8, no credential.
 */
static int check_seq_value(struct model_check *c, json_t *v, const char *path)
{
	return model_check_json_text(c, v, path, (size_t)-1);
}

static const char *const top_fields[] = {"external_id", "events", NULL};
static const char *const event_fields[] = {"seq", "kind", "text",     "resource",
                                           "key", "http", "response", NULL};

/* The bound of an event's text by kind (history.h). */
static size_t text_max(const char *kind)
{
	if (strcmp(kind, "input") == 0 || strcmp(kind, "output") == 0)
		return MODEL_MAX_INPUT_BYTES;
	return MODEL_MAX_RESPONSE_BYTES;
}

/*
 * An http_exchange's "http" and "response" are an HTTP mock's
 * (model/http_mock.h), checked as one, and kept normalized in copy (its
 * url as the gateway matches it): the replay answers with that mock.
 */
static int check_exchange(struct model_check *c, json_t *ev, const char *prefix, json_t *copy)
{
	json_t *item, *norm = NULL;
	char path[48];
	int rc;

	if (!kind_is(ev, "http_exchange")) {
		snprintf(path, sizeof(path), "%s.%s", prefix,
		         json_object_get(ev, "http") ? "http" : "response");
		return model_check_malformed(c, path, "%s is only for an http_exchange event",
		                             path);
	}
	item = json_pack("{s:O*, s:O*}", "http", json_object_get(ev, "http"), "response",
	                 json_object_get(ev, "response"));
	rc = model_http_mock_check(c, item, prefix, &norm);
	json_decref(item);
	if (rc == 0 && norm) {
		json_object_set(copy, "http", json_object_get(norm, "http"));
		json_object_set(copy, "response", json_object_get(norm, "response"));
	}
	json_decref(norm);
	return rc;
}

static int check_event(struct model_check *c, json_t *ev, size_t i, json_t *out)
{
	json_t *v;
	json_t *kind;
	char prefix[32];
	char path[48];

	snprintf(prefix, sizeof(prefix), "events[%zu]", i);
	if (!json_is_object(ev))
		return model_check_malformed(c, prefix, "%s must be an object", prefix);
	if (model_check_keys(c, ev, prefix, event_fields))
		return -1;
	kind = json_object_get(ev, "kind");
	snprintf(path, sizeof(path), "%s.kind", prefix);
	if (!kind)
		return model_check_malformed(c, path, "%s is required", path);
	if (check_string(c, kind, path, 1, MODEL_MAX_KIND_BYTES))
		return -1;
	v = json_object_get(ev, "seq");
	snprintf(path, sizeof(path), "%s.seq", prefix);
	if (v && check_seq_value(c, v, path))
		return -1;
	v = json_object_get(ev, "text");
	snprintf(path, sizeof(path), "%s.text", prefix);
	if (v && check_string(c, v, path, 0, text_max(json_string_value(kind))))
		return -1;
	v = json_object_get(ev, "resource");
	snprintf(path, sizeof(path), "%s.resource", prefix);
	if (v && check_string(c, v, path, 0, MODEL_MAX_RESOURCE_BYTES))
		return -1;
	v = json_object_get(ev, "key");
	snprintf(path, sizeof(path), "%s.key", prefix);
	if (v && check_string(c, v, path, 0, MODEL_MAX_KEY_BYTES))
		return -1;
	/* only known members are left: the copy is the event as recorded */
	json_array_append_new(out, json_deep_copy(ev));
	if (json_object_get(ev, "http") || json_object_get(ev, "response"))
		return check_exchange(c, ev, prefix, json_array_get(out, json_array_size(out) - 1));
	return 0;
}

int model_session_check(json_t *body, json_t **normalized, struct model_error *err)
{
	struct model_check c;
	json_t *v;
	json_t *events;
	json_t *ev;
	json_t *out;
	size_t i;
	int ret;

	memset(&c, 0, sizeof(c));
	c.err = err;
	if (!json_is_object(body))
		return model_error_set(err, MODEL_E_MALFORMED, "", "body must be a JSON object");
	if (model_check_keys(&c, body, "", top_fields))
		return -1;
	v = json_object_get(body, "external_id");
	if (!v)
		return model_check_malformed(&c, "external_id", "external_id is required");
	if (check_string(&c, v, "external_id", 1, MODEL_MAX_EXTERNAL_ID_BYTES))
		return -1;
	events = json_object_get(body, "events");
	if (!events)
		return model_check_malformed(&c, "events", "events is required");
	if (!json_is_array(events))
		return model_check_malformed(&c, "events", "events must be an array");
	if (json_array_size(events) > MODEL_MAX_SESSION_EVENTS)
		model_check_refuse(&c, MODEL_E_LIMIT, "events", "events must hold at most %d items",
		                   MODEL_MAX_SESSION_EVENTS);
	ret = -1;
	out = json_pack("{s:o,s:[]}", "external_id", json_copy(v), "events");
	json_array_foreach(events, i, ev)
	{
		if (check_event(&c, ev, i, json_object_get(out, "events")))
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

/* ---- timeline ----------------------------------------------------------- */

/* An event of the timeline: its 1-based position in "events", its seq. */
struct ev_ref {
	size_t pos;
	json_int_t seq;
	json_t *ev;
};

/* The length of the longest prefix of s (n bytes of UTF-8) that holds at
 * most max bytes and does not end inside a character. */
static size_t utf8_prefix(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

/* Print the reason into *why. The reason goes into JSON: a cut must not
 * end inside a UTF-8 sequence. */
__attribute__((format(printf, 2, 3))) static int fail(struct model_reason *why, const char *fmt,
                                                      ...)
{
	va_list ap;
	size_t len;
	int i;

	if (!why)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	len = strlen(why->text);
	/* at most 3 bytes of a cut sequence to drop */
	for (i = 0; i < 3 && len > 0 && !model_text_valid_utf8(why->text, len); i++)
		why->text[--len] = '\0';
	return -1;
}

static int seq_cmp(const void *pa, const void *pb)
{
	const struct ev_ref *a = pa;
	const struct ev_ref *b = pb;

	if (a->seq != b->seq)
		return (a->seq > b->seq) - (a->seq < b->seq);
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int kind_known(json_t *ev)
{
	return kind_is(ev, "input") || kind_is(ev, "tool_call") || kind_is(ev, "tool_result") ||
	       kind_is(ev, "output") || kind_is(ev, "http_exchange");
}

/* A string member, or NULL when absent or of another type. */
static json_t *str_member(json_t *ev, const char *name)
{
	json_t *v;

	v = json_object_get(ev, name);
	return json_is_string(v) ? v : NULL;
}

static int same_bytes(json_t *a, json_t *b)
{
	return json_string_length(a) == json_string_length(b) &&
	       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
}

static int bytes_cmp(json_t *a, json_t *b)
{
	size_t alen;
	size_t blen;
	int r;

	alen = json_string_length(a);
	blen = json_string_length(b);
	r = memcmp(json_string_value(a), json_string_value(b), alen < blen ? alen : blen);
	if (r)
		return r;
	return (alen > blen) - (alen < blen);
}

/* tool_results sorted by (resource, seq): equal resources adjacent, in
 * timeline order */
static int result_cmp(const void *pa, const void *pb)
{
	const struct ev_ref *a = pa;
	const struct ev_ref *b = pb;
	int r;

	r = bytes_cmp(json_object_get(a->ev, "resource"), json_object_get(b->ev, "resource"));
	if (r)
		return r;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Rule 8: of every pair of tool_results for one resource with different
 * texts, report the one whose later result comes first in the timeline,
 * with the seq of the first result for that resource. */
static int check_results(struct ev_ref *refs, size_t n, struct model_reason *why)
{
	struct ev_ref *res;
	struct ev_ref *first;
	struct ev_ref *bad_first;
	struct ev_ref *bad;
	size_t m;
	size_t i;
	int ret;

	res = model_xcalloc(n ? n : 1, sizeof(*res));
	m = 0;
	for (i = 0; i < n; i++)
		if (kind_is(refs[i].ev, "tool_result"))
			res[m++] = refs[i];
	qsort(res, m, sizeof(*res), result_cmp);
	first = NULL;
	bad = NULL;
	bad_first = NULL;
	for (i = 0; i < m; i++) {
		if (!first || !same_bytes(json_object_get(first->ev, "resource"),
		                          json_object_get(res[i].ev, "resource"))) {
			first = &res[i];
			continue;
		}
		if (same_bytes(json_object_get(first->ev, "text"),
		               json_object_get(res[i].ev, "text")))
			continue;
		if (!bad || res[i].seq < bad->seq) {
			bad = &res[i];
			bad_first = first;
		}
		/* the rest of this resource's results come later */
		while (i + 1 < m && same_bytes(json_object_get(first->ev, "resource"),
		                               json_object_get(res[i + 1].ev, "resource")))
			i++;
	}
	ret = 0;
	if (bad) {
		json_t *r;
		size_t len;

		r = json_object_get(bad->ev, "resource");
		/* a resource may hold 8192 bytes: name it by its first ones */
		len = utf8_prefix(json_string_value(r), json_string_length(r),
		                  MODEL_RESOURCE_SHOWN_BYTES);
		ret = fail(
		    why,
		    "resource %.*s%s has two different recorded results (seq %" JSON_INTEGER_FORMAT
		    ", %" JSON_INTEGER_FORMAT ")",
		    (int)len, json_string_value(r), len < json_string_length(r) ? "…" : "",
		    bad_first->seq, bad->seq);
	}
	free(res);
	return ret;
}

/* Rules 5 to 8, each over the whole timeline in seq order. */
static int check_events(struct ev_ref *refs, size_t n, struct model_reason *why)
{
	json_t *k;
	json_t *r;
	size_t i;

	for (i = 0; i < n; i++) {
		if (kind_known(refs[i].ev))
			continue;
		k = str_member(refs[i].ev, "kind");
		return fail(why,
		            "event %zu (seq %" JSON_INTEGER_FORMAT ") has unknown kind \"%.*s\"",
		            refs[i].pos, refs[i].seq,
		            k ? (int)utf8_prefix(json_string_value(k), json_string_length(k),
		                                 MODEL_MAX_KIND_BYTES)
		              : 0,
		            k ? json_string_value(k) : "");
	}
	for (i = 0; i < n; i++)
		if (kind_is(refs[i].ev, "input") && !str_member(refs[i].ev, "text"))
			return fail(why,
			            "input event %zu (seq %" JSON_INTEGER_FORMAT ") has no text",
			            refs[i].pos, refs[i].seq);
	for (i = 0; i < n; i++) {
		if (!kind_is(refs[i].ev, "tool_result"))
			continue;
		r = str_member(refs[i].ev, "resource");
		/* an empty resource is no resource: no step can request it */
		if (!r || json_string_length(r) == 0)
			return fail(why,
			            "tool_result event %zu (seq %" JSON_INTEGER_FORMAT
			            ") has no resource",
			            refs[i].pos, refs[i].seq);
		if (!str_member(refs[i].ev, "text"))
			return fail(
			    why, "tool_result event %zu (seq %" JSON_INTEGER_FORMAT ") has no text",
			    refs[i].pos, refs[i].seq);
	}
	for (i = 0; i < n; i++) {
		struct model_error err;
		json_t *item;
		int bad;

		if (!kind_is(refs[i].ev, "http_exchange"))
			continue;
		if (!json_object_get(refs[i].ev, "http") ||
		    !json_object_get(refs[i].ev, "response"))
			return fail(
			    why, "http_exchange event %zu (seq %" JSON_INTEGER_FORMAT ") has no %s",
			    refs[i].pos, refs[i].seq,
			    json_object_get(refs[i].ev, "http") ? "response" : "http");
		item = json_pack("{s:O*, s:O*}", "http", json_object_get(refs[i].ev, "http"),
		                 "response", json_object_get(refs[i].ev, "response"));
		bad = model_http_mock_spec_check(item, &err) != 0;
		json_decref(item);
		if (bad)
			return fail(why,
			            "http_exchange event %zu (seq %" JSON_INTEGER_FORMAT
			            ") is not an exchange a mock can answer: %s",
			            refs[i].pos, refs[i].seq, err.message);
	}
	return check_results(refs, n, why);
}

/* Rules 2 to 4: every seq usable, unique and consecutive. On success refs
 * is sorted by seq. */
static int check_seqs(struct ev_ref *refs, size_t n, struct model_reason *why)
{
	struct ev_ref *dup;
	struct ev_ref *orig;
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *s;

		s = json_object_get(refs[i].ev, "seq");
		/* only a JSON integer: 1.0 or 1e0 is a real, "1" a string */
		if (!json_is_integer(s) || json_integer_value(s) < 1)
			return fail(why, "event %zu has no usable seq", refs[i].pos);
		refs[i].seq = json_integer_value(s);
	}
	qsort(refs, n, sizeof(*refs), seq_cmp);
	/* the first event (in "events" order) that repeats an earlier seq,
	 * named with the first event holding that seq */
	dup = NULL;
	orig = NULL;
	for (i = 1; i < n; i++) {
		if (refs[i].seq != refs[i - 1].seq)
			continue;
		if (!dup || refs[i].pos < dup->pos) {
			size_t j;

			j = i - 1;
			while (j > 0 && refs[j - 1].seq == refs[i].seq)
				j--;
			dup = &refs[i];
			orig = &refs[j];
		}
	}
	if (dup)
		return fail(why, "events %zu and %zu share seq %" JSON_INTEGER_FORMAT, orig->pos,
		            dup->pos, dup->seq);
	for (i = 1; i < n; i++)
		if (refs[i].seq != refs[i - 1].seq + 1)
			return fail(why,
			            "seq %" JSON_INTEGER_FORMAT
			            " is missing (between %" JSON_INTEGER_FORMAT
			            " and %" JSON_INTEGER_FORMAT ")",
			            refs[i - 1].seq + 1, refs[i - 1].seq, refs[i].seq);
	return 0;
}

/* What tells two recorded requests apart for a mock: method, url and the
 * body condition (absent and "" differ). A new string. */
static char *exchange_key(json_t *ev)
{
	json_t *http = json_object_get(ev, "http"), *body = json_object_get(http, "body");
	char *b = body ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	char *key;

	if (asprintf(&key, "%s %s %c%s", json_string_value(json_object_get(http, "method")),
	             json_string_value(json_object_get(http, "url")), b ? '=' : '-',
	             b ? b : "") < 0)
		key = NULL;
	free(b);
	return key;
}

/* An http_exchange into its mock: the first exchange of a request makes
 * it, each later one adds its answer; groups maps a request's key to the
 * answers so far. */
static void add_exchange(json_t *ev, json_t *mocks, json_t *groups)
{
	char *key = exchange_key(ev);
	json_t *answers = key ? json_object_get(groups, key) : NULL;

	if (!key)
		return;
	if (!answers) {
		answers = json_array();
		json_object_set_new(groups, key, answers);
		json_array_append_new(mocks,
		                      json_pack("{s:O, s:O}", "http", json_object_get(ev, "http"),
		                                "sequence", answers));
	}
	json_array_append(answers, json_object_get(ev, "response"));
	free(key);
}

/* A request answered alike every time is one response; one answered
 * differently replays its answers in turn (a mock's sequence). */
static int settle_exchanges(json_t *mocks, struct model_reason *why)
{
	json_t *m, *seq;
	size_t i, j;
	int same;

	json_array_foreach(mocks, i, m)
	{
		seq = json_object_get(m, "sequence");
		if (!seq)
			continue;
		for (same = 1, j = 1; j < json_array_size(seq) && same; j++)
			same = json_equal(json_array_get(seq, 0), json_array_get(seq, j));
		if (same) {
			json_object_set(m, "response", json_array_get(seq, 0));
			json_object_del(m, "sequence");
		} else if (json_array_size(seq) > MODEL_MAX_SEQUENCE) {
			json_t *http = json_object_get(m, "http");

			return fail(why, "%s %.400s has %zu different recorded answers, over %d",
			            json_string_value(json_object_get(http, "method")),
			            json_string_value(json_object_get(http, "url")),
			            json_array_size(seq), MODEL_MAX_SEQUENCE);
		}
	}
	return 0;
}

/* Build steps, mocks and recorded from a timeline that passed every rule. */
static void build(struct ev_ref *refs, size_t n, struct model_timeline *tl, json_t *groups)
{
	json_t *ev;
	json_t *key;
	json_t *text;
	json_t *res;
	json_t *m;
	size_t i;
	size_t j;
	size_t steps;
	char defkey[48];
	int known;

	tl->steps = json_array();
	tl->mocks = json_array();
	tl->recorded = json_array();
	steps = 0;
	for (i = 0; i < n; i++) {
		ev = refs[i].ev;
		text = str_member(ev, "text");
		if (kind_is(ev, "input")) {
			key = str_member(ev, "key");
			/* an empty key says nothing: the default names the step */
			if (!key || json_string_length(key) == 0) {
				snprintf(defkey, sizeof(defkey), "seq-%" JSON_INTEGER_FORMAT,
				         refs[i].seq);
				key = json_string(defkey);
			} else {
				key = json_copy(key);
			}
			json_array_append_new(tl->steps, json_pack("{s:o,s:o}", "key", key, "input",
			                                           json_copy(text)));
			json_array_append_new(tl->recorded, json_null());
			steps++;
		} else if (kind_is(ev, "output") && text && steps > 0) {
			/* the last output before the next input wins; outputs
			 * before the first input answer nothing we replay */
			json_array_set_new(tl->recorded, steps - 1, json_copy(text));
		} else if (kind_is(ev, "http_exchange")) {
			add_exchange(ev, tl->mocks, groups);
		} else if (kind_is(ev, "tool_result")) {
			res = json_object_get(ev, "resource");
			known = 0;
			json_array_foreach(tl->mocks, j, m)
			{
				if (same_bytes(json_object_get(m, "resource"), res)) {
					known = 1;
					break;
				}
			}
			if (!known)
				json_array_append_new(
				    tl->mocks, json_pack("{s:o,s:o}", "resource", json_copy(res),
				                         "response", json_copy(text)));
		}
	}
}

/* Recorded requests that one replayed request could match two ways (a
 * regex beside a json_subset of an imported session): refused as a
 * scenario's mocks would be, never resolved by guessing. */
static int exchanges_ambiguous(json_t *mocks, struct model_reason *why)
{
	struct model_error err;
	struct model_check c;

	memset(&c, 0, sizeof(c));
	c.err = &err;
	model_http_mocks_check_ambiguity(&c, mocks);
	if (model_check_done(&c) == 0)
		return 0;
	return fail(why, "the recorded requests are ambiguous: %s", err.message);
}

int model_timeline_rebuild(json_t *events, struct model_timeline *tl, struct model_reason *why)
{
	struct ev_ref *refs;
	json_t *groups;
	size_t count;
	size_t i;
	int has_input;
	int ret;

	memset(tl, 0, sizeof(*tl));
	if (why)
		why->text[0] = '\0';
	count = json_is_array(events) ? json_array_size(events) : 0;
	has_input = 0;
	for (i = 0; i < count; i++)
		if (kind_is(json_array_get(events, i), "input"))
			has_input = 1;
	if (!has_input)
		return fail(why, "session has no input");
	refs = model_xcalloc(count, sizeof(*refs));
	for (i = 0; i < count; i++) {
		refs[i].pos = i + 1;
		refs[i].ev = json_array_get(events, i);
	}
	ret = -1;
	if (check_seqs(refs, count, why))
		goto out;
	if (check_events(refs, count, why))
		goto out;
	groups = json_object();
	build(refs, count, tl, groups);
	json_decref(groups);
	if (settle_exchanges(tl->mocks, why) != 0 || exchanges_ambiguous(tl->mocks, why) != 0) {
		model_timeline_clear(tl);
		goto out;
	}
	ret = 0;
out:
	free(refs);
	return ret;
}

void model_timeline_clear(struct model_timeline *tl)
{
	if (!tl)
		return;
	json_decref(tl->steps);
	json_decref(tl->mocks);
	json_decref(tl->recorded);
	memset(tl, 0, sizeof(*tl));
}

/* ---- divergence --------------------------------------------------------- */

json_t *model_replay_divergence(json_t *recorded, json_t *outputs)
{
	json_t *rec;
	json_t *out;
	json_t *replayed;
	json_t *first;
	json_t *seq;
	json_t *key;
	size_t i;
	size_t compared;
	size_t diverging;

	compared = 0;
	diverging = 0;
	first = NULL;
	json_array_foreach(recorded, i, rec)
	{
		if (!json_is_string(rec))
			continue;
		compared++;
		out = json_array_get(outputs, i);
		replayed = str_member(out, "output");
		if (replayed && same_bytes(rec, replayed))
			continue;
		diverging++;
		if (first)
			continue;
		/* a step the runner never reached has no output object: name
		 * it by its position, as the runner would have */
		seq = json_object_get(out, "seq");
		key = json_object_get(out, "key");
		first = json_pack("{s:o,s:o,s:o,s:o}", "seq",
		                  seq ? json_copy(seq) : json_integer((json_int_t)(i + 1)), "key",
		                  key ? json_copy(key) : json_null(), "recorded", json_copy(rec),
		                  "replayed", replayed ? json_copy(replayed) : json_null());
	}
	return json_pack("{s:I,s:I,s:o}", "compared", (json_int_t)compared, "diverging",
	                 (json_int_t)diverging, "first", first ? first : json_null());
}
