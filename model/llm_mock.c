/*
 * OpenAI-style chat (llm) mocks: validation, matching, near misses and the
 * chat completion answer, plain or streamed (http_mock.h, llm_mock.h).
 *
 * The answer's shape follows the public chat completions API (the
 * ChatCompletion and ChatCompletionChunk objects): what the official
 * clients read is there, with fixed values where the service would put a
 * clock or randomness, so that an answer depends only on the request, the
 * mocks and the caller's counter.
 */
#include "llm_mock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "limits.h"
#include "mock.h"

static const char *const llm_fields[] = {"last_user_message", "messages", "match", "model", NULL};
static const char *const answer_fields[] = {"content", "tool_calls", NULL};
static const char *const call_fields[] = {"name", "arguments", NULL};

/* the model an answer names when neither the request nor the mock does */
#define DEFAULT_MODEL "olivares-mock"
/* a streamed answer's bytes at most: its parts are bounded (content and
 * each tool call's arguments by MODEL_MAX_RESPONSE_BYTES, the calls by
 * MODEL_MAX_LLM_TOOL_CALLS) and escaping at most sextuples them */
#define ANSWER_MAX_BYTES ((size_t)MODEL_MAX_RESPONSE_BYTES * 6 * (MODEL_MAX_LLM_TOOL_CALLS + 2))

/* ---- the request ------------------------------------------------------------- */

/* A message's content as text: a string, or the "text" of its parts of
 * type "text" joined with "\n"; NULL when it is neither. New string. */
static char *content_text(json_t *content, size_t *len)
{
	struct model_buf b;
	json_t *part, *t;
	size_t i;
	int first = 1;
	char *text;

	if (json_is_string(content)) {
		*len = json_string_length(content);
		return model_xmemdup(json_string_value(content), *len);
	}
	if (!json_is_array(content))
		return NULL;
	model_buf_init(&b, (size_t)-1 / 2);
	json_array_foreach(content, i, part)
	{
		t = json_object_get(part, "text");
		if (!json_is_string(json_object_get(part, "type")) ||
		    strcmp(json_string_value(json_object_get(part, "type")), "text") != 0 ||
		    !json_is_string(t))
			continue;
		if (!first)
			model_buf_must_fit(model_buf_add(&b, "\n", 1));
		model_buf_must_fit(model_buf_add(&b, json_string_value(t), json_string_length(t)));
		first = 0;
	}
	text = model_buf_detach(&b, len);
	model_buf_release(&b);
	return text;
}

char *model_llm_last_user_message(json_t *request, size_t *len)
{
	json_t *msgs = json_object_get(request, "messages"), *msg, *role;
	size_t i;

	*len = 0;
	if (!json_is_array(msgs))
		return NULL;
	for (i = json_array_size(msgs); i > 0; i--) {
		msg = json_array_get(msgs, i - 1);
		role = json_object_get(msg, "role");
		if (json_is_string(role) && strcmp(json_string_value(role), "user") == 0)
			return content_text(json_object_get(msg, "content"), len);
	}
	return NULL;
}

/* The request's messages with each content array replaced by its text, so
 * that a mock's "content": "..." matches a client that sends parts. */
static json_t *flat_messages(json_t *request)
{
	json_t *msgs = json_object_get(request, "messages"), *out = json_array(), *m, *copy;
	size_t i, n;
	char *text;

	json_array_foreach(msgs, i, m)
	{
		copy = json_is_object(m) ? json_copy(m) : json_incref(m);
		if (json_is_object(m) && json_is_array(json_object_get(m, "content"))) {
			text = content_text(json_object_get(m, "content"), &n);
			json_object_set_new(copy, "content", json_stringn(text, n));
			free(text);
		}
		json_array_append_new(out, copy);
	}
	return out;
}

/* ---- validation -------------------------------------------------------------- */

static int check_string(struct model_check *c, json_t *v, const char *path, size_t min, size_t max)
{
	if (!json_is_string(v))
		return model_check_malformed(c, path, "%s must be a string", path);
	return model_check_text(c, json_string_value(v), json_string_length(v), path, min, max);
}

static int check_llm_part(struct model_check *c, json_t *v, const char *prefix, json_t **out)
{
	json_t *text, *msgs, *match, *model, *m;
	const char *mt;
	char path[112];
	size_t i;

	*out = NULL;
	snprintf(path, sizeof(path), "%s.llm", prefix);
	if (!json_is_object(v))
		return model_check_malformed(c, path, "%s must be an object", path);
	if (model_check_keys(c, v, path, llm_fields))
		return -1;
	text = json_object_get(v, "last_user_message");
	msgs = json_object_get(v, "messages");
	match = json_object_get(v, "match");
	model = json_object_get(v, "model");
	if (text && msgs) {
		snprintf(path, sizeof(path), "%s.llm.messages", prefix);
		return model_check_malformed(c, path,
		                             "%s: an llm mock has last_user_message or messages, "
		                             "not both",
		                             path);
	}
	snprintf(path, sizeof(path), "%s.llm.match", prefix);
	if (match && !json_is_string(match))
		return model_check_malformed(c, path, "%s must be a string", path);
	mt = match ? json_string_value(match) : msgs ? "subset" : "exact";
	if (match && !text && !msgs)
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s needs last_user_message or messages to apply to", path);
	else if (text && strcmp(mt, "exact") != 0 && strcmp(mt, "contains") != 0 &&
	         strcmp(mt, "regex") != 0)
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s must be \"exact\", \"contains\" or \"regex\" with "
		                   "last_user_message",
		                   path);
	else if (msgs && strcmp(mt, "exact") != 0 && strcmp(mt, "subset") != 0)
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s must be \"exact\" or \"subset\" with messages", path);
	*out = json_object();
	if (text) {
		snprintf(path, sizeof(path), "%s.llm.last_user_message", prefix);
		if (strcmp(mt, "regex") == 0
		        ? model_http_check_regex(c, text, path)
		        : check_string(c, text, path, 1, MODEL_MAX_RESPONSE_BYTES))
			goto fail;
		json_object_set_new(*out, "last_user_message", json_copy(text));
	}
	if (msgs) {
		snprintf(path, sizeof(path), "%s.llm.messages", prefix);
		if (!json_is_array(msgs)) {
			model_check_malformed(c, path, "%s must be an array of objects", path);
			goto fail;
		}
		json_array_foreach(msgs, i, m)
		{
			if (!json_is_object(m)) {
				model_check_malformed(c, path, "%s must be an array of objects",
				                      path);
				goto fail;
			}
		}
		if (json_array_size(msgs) == 0)
			model_check_refuse(c, MODEL_E_LIMIT, path, "%s must not be empty", path);
		if (model_check_json_value(c, msgs, path))
			goto fail;
		json_object_set_new(*out, "messages", json_deep_copy(msgs));
	}
	if (text || msgs)
		json_object_set_new(*out, "match", json_string(mt));
	if (model) {
		snprintf(path, sizeof(path), "%s.llm.model", prefix);
		if (check_string(c, model, path, 1, MODEL_MAX_LLM_MODEL_BYTES))
			goto fail;
		json_object_set_new(*out, "model", json_copy(model));
	}
	return 0;
fail:
	json_decref(*out);
	*out = NULL;
	return -1;
}

static int check_tool_call(struct model_check *c, json_t *v, const char *path, json_t **out)
{
	json_t *name, *args;
	char sub[144];

	*out = NULL;
	if (!json_is_object(v))
		return model_check_malformed(c, path, "%s must be an object", path);
	if (model_check_keys(c, v, path, call_fields))
		return -1;
	name = json_object_get(v, "name");
	args = json_object_get(v, "arguments");
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!name)
		return model_check_malformed(c, sub, "%s is required", sub);
	if (check_string(c, name, sub, 1, MODEL_MAX_TOOL_BYTES))
		return -1;
	snprintf(sub, sizeof(sub), "%s.arguments", path);
	if (args && !json_is_object(args))
		return model_check_malformed(c, sub, "%s must be an object", sub);
	if (args && model_check_json_value(c, args, sub))
		return -1;
	*out = json_pack("{s:O, s:o}", "name", name, "arguments",
	                 args ? json_deep_copy(args) : json_object());
	return 0;
}

static int check_chat_answer(struct model_check *c, json_t *v, const char *path, json_t **out)
{
	json_t *content, *calls, *arr, *one;
	char sub[128];
	size_t i, n;

	*out = NULL;
	if (!json_is_object(v))
		return model_check_malformed(c, path, "%s must be an object", path);
	if (model_check_keys(c, v, path, answer_fields))
		return -1;
	content = json_object_get(v, "content");
	calls = json_object_get(v, "tool_calls");
	snprintf(sub, sizeof(sub), "%s.content", path);
	if (content && check_string(c, content, sub, 0, MODEL_MAX_RESPONSE_BYTES))
		return -1;
	snprintf(sub, sizeof(sub), "%s.tool_calls", path);
	if (calls && !json_is_array(calls))
		return model_check_malformed(c, sub, "%s must be an array", sub);
	if (!content && !calls)
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s needs content or tool_calls (or both)", path);
	n = json_array_size(calls);
	if (calls && (n < 1 || n > MODEL_MAX_LLM_TOOL_CALLS))
		model_check_refuse(c, MODEL_E_LIMIT, sub, "%s must hold 1 to %d calls", sub,
		                   MODEL_MAX_LLM_TOOL_CALLS);
	*out = json_object();
	if (content)
		json_object_set_new(*out, "content", json_copy(content));
	if (!calls)
		return 0;
	arr = json_array();
	json_object_set_new(*out, "tool_calls", arr);
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s.tool_calls[%zu]", path, i);
		if (check_tool_call(c, json_array_get(calls, i), sub, &one)) {
			json_decref(*out);
			*out = NULL;
			return -1;
		}
		json_array_append_new(arr, one);
	}
	return 0;
}

int model_llm_mock_check(struct model_check *c, json_t *item, const char *prefix, json_t **out)
{
	json_t *part, *norm;

	*out = NULL;
	if (check_llm_part(c, json_object_get(item, "llm"), prefix, &part))
		return -1;
	norm = json_pack("{s:o}", "llm", part);
	if (model_http_check_answers(c, item, prefix, check_chat_answer, norm)) {
		json_decref(norm);
		return -1;
	}
	*out = norm;
	return 0;
}

/* ---- precedence and ambiguity -------------------------------------------------- */

/* A condition's rank: 3 exact, 2 contains, regex or subset, 1 none. */
static int cond_rank(json_t *llm)
{
	const char *m = json_string_value(json_object_get(llm, "match"));

	if (!m)
		return 1;
	return strcmp(m, "exact") == 0 ? 3 : 2;
}

static int is_match(json_t *llm, const char *m)
{
	json_t *v = json_object_get(llm, "match");

	return json_is_string(v) && strcmp(json_string_value(v), m) == 0;
}

/* The weight of a subset condition's messages: their keys at every depth. */
static size_t msgs_weight(json_t *msgs)
{
	json_t *m;
	size_t i, w = 0;

	json_array_foreach(msgs, i, m) w += model_mock_args_weight(m);
	return w;
}

static int msgs_compatible(json_t *a, json_t *b)
{
	size_t i;

	if (json_array_size(a) != json_array_size(b))
		return 0;
	for (i = 0; i < json_array_size(a); i++)
		if (!model_http_compatible(json_array_get(a, i), json_array_get(b, i)))
			return 0;
	return 1;
}

/* Exact conditions a (last_user_message) and b (messages) both hold for
 * the request whose messages are b's. */
static int text_vs_messages(json_t *text, json_t *msgs)
{
	json_t *req = json_pack("{s:O}", "messages", msgs);
	size_t n;
	char *last = model_llm_last_user_message(req, &n);
	int r =
	    last && n == json_string_length(text) && memcmp(last, json_string_value(text), n) == 0;

	free(last);
	json_decref(req);
	return r;
}

int model_llm_mock_ambiguous(json_t *a, json_t *b, const char **how)
{
	json_t *la = json_object_get(a, "llm"), *lb = json_object_get(b, "llm");
	json_t *ta = json_object_get(la, "last_user_message"),
	       *tb = json_object_get(lb, "last_user_message");
	json_t *ma = json_object_get(la, "messages"), *mb = json_object_get(lb, "messages");
	json_t *moda = json_object_get(la, "model"), *modb = json_object_get(lb, "model");

	*how = NULL;
	if (!model_http_same_string(json_object_get(a, "variant"), json_object_get(b, "variant")) ||
	    cond_rank(la) != cond_rank(lb) || !moda != !modb ||
	    (moda && !model_http_same_string(moda, modb)))
		return 0;
	switch (cond_rank(la)) {
	case 1:
		*how = "neither has a condition: give one last_user_message, messages, a model "
		       "or a variant";
		return 1;
	case 3:
		if ((ta && tb && model_http_same_string(ta, tb)) ||
		    (ma && mb && json_equal(ma, mb)) || (ta && mb && text_vs_messages(ta, mb)) ||
		    (ma && tb && text_vs_messages(tb, ma)))
			*how = "the same exact condition: change one, or give one a variant";
		return *how != NULL;
	default:
		break;
	}
	if (is_match(la, "regex") || is_match(lb, "regex"))
		*how = "a regex could match what the other condition matches: use exact, or one "
		       "regex, or a variant";
	else if (!ta != !tb)
		*how = "a contains condition and a messages subset could both hold: use exact "
		       "conditions, or a variant";
	else if (ta && json_string_length(ta) == json_string_length(tb))
		*how = "contains texts of the same length, which one message can hold both of: "
		       "lengthen one, or use exact";
	else if (ma && msgs_weight(ma) == msgs_weight(mb) && msgs_compatible(ma, mb))
		*how = "messages subsets of the same weight that one request can hold both of: "
		       "add a key to one, or make a shared value differ";
	return *how != NULL;
}

/* ---- matching ------------------------------------------------------------------ */

/* 1 when messages subset (or exact) condition want holds for the request's
 * flattened messages got. */
static int msgs_match(json_t *want, json_t *got, int subset)
{
	size_t i;

	if (json_array_size(want) != json_array_size(got))
		return 0;
	for (i = 0; i < json_array_size(want); i++)
		if (!model_mock_args_match(json_array_get(want, i), json_array_get(got, i), subset))
			return 0;
	return 1;
}

static int find_mem(const char *hay, size_t hn, const char *needle, size_t nn)
{
	size_t i;

	if (nn > hn)
		return 0;
	for (i = 0; i + nn <= hn; i++)
		if (memcmp(hay + i, needle, nn) == 0)
			return 1;
	return 0;
}

/* What a chat request offers to match on, computed once. */
struct chat_req {
	json_t *request;
	json_t *model; /* the request's "model" (borrowed), may be NULL */
	char *last;    /* the last user message, or NULL */
	size_t last_len;
	json_t *flat; /* flattened messages */
};

static void chat_req_init(struct chat_req *r, json_t *request)
{
	r->request = request;
	r->model = json_object_get(request, "model");
	r->last = model_llm_last_user_message(request, &r->last_len);
	r->flat = flat_messages(request);
}

static void chat_req_free(struct chat_req *r)
{
	free(r->last);
	json_decref(r->flat);
}

static int llm_matches(json_t *llm, struct chat_req *r)
{
	json_t *text = json_object_get(llm, "last_user_message");
	json_t *msgs = json_object_get(llm, "messages");
	json_t *model = json_object_get(llm, "model");

	if (model && !model_http_same_string(model, r->model))
		return 0;
	if (msgs)
		return msgs_match(msgs, r->flat, is_match(llm, "subset"));
	if (!text)
		return 1;
	if (!r->last)
		return 0;
	if (is_match(llm, "contains"))
		return find_mem(r->last, r->last_len, json_string_value(text),
		                json_string_length(text));
	if (is_match(llm, "regex"))
		return model_http_regex_search(json_string_value(text), r->last, r->last_len);
	return json_string_length(text) == r->last_len &&
	       memcmp(json_string_value(text), r->last, r->last_len) == 0;
}

int model_llm_mock_find(json_t *mocks, const char *variant, json_t *request, size_t *index)
{
	struct chat_req r;
	json_t *m, *llm, *text;
	size_t i, best = 0;
	long long rank, best_rank = -1;
	int tier;

	chat_req_init(&r, request);
	json_array_foreach(mocks, i, m)
	{
		llm = json_object_get(m, "llm");
		if (!json_is_object(llm))
			continue;
		tier = model_mock_variant_tier(m, variant);
		if (!tier || !llm_matches(llm, &r))
			continue;
		text = json_object_get(llm, "last_user_message");
		rank = (long long)tier * 40000000000LL + (long long)cond_rank(llm) * 4000000000LL +
		       (json_object_get(llm, "model") ? 2000000000LL : 0) +
		       (is_match(llm, "contains") ? (long long)json_string_length(text) : 0) +
		       (is_match(llm, "subset")
		            ? (long long)msgs_weight(json_object_get(llm, "messages"))
		            : 0);
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	chat_req_free(&r);
	if (best_rank < 0)
		return 0;
	*index = best;
	return 1;
}

/* ---- near misses ----------------------------------------------------------------- */

static void llm_diff(json_t *near, json_t *llm, struct chat_req *r)
{
	json_t *text = json_object_get(llm, "last_user_message");
	json_t *msgs = json_object_get(llm, "messages");
	json_t *model = json_object_get(llm, "model");
	size_t i;
	char path[32];

	if (model && !model_http_same_string(model, r->model)) {
		json_object_set_new(near, "differs", json_string("model"));
		json_object_set_new(near, "why", json_string("model differs"));
		json_object_set_new(near, "request_has",
		                    json_is_string(r->model) ? json_copy(r->model)
		                                             : json_string("(none)"));
		json_object_set_new(near, "mock_has", json_copy(model));
		return;
	}
	if (msgs) {
		json_object_set_new(near, "differs", json_string("messages"));
		if (json_array_size(msgs) != json_array_size(r->flat)) {
			json_object_set_new(
			    near, "why",
			    json_sprintf("the request has %zu messages, the mock %zu",
			                 json_array_size(r->flat), json_array_size(msgs)));
			return;
		}
		for (i = 0; i < json_array_size(msgs); i++) {
			snprintf(path, sizeof(path), "$[%zu]", i);
			if (model_mock_args_diff(json_array_get(msgs, i),
			                         json_array_get(r->flat, i),
			                         is_match(llm, "subset"), path, near))
				return;
		}
		json_object_set_new(near, "why", json_string("different value"));
		return;
	}
	json_object_set_new(near, "differs", json_string("last_user_message"));
	if (!r->last)
		json_object_set_new(near, "why", json_string("the request has no user message"));
	else if (is_match(llm, "contains"))
		json_object_set_new(
		    near, "why",
		    json_string("the last user message does not contain the mock's text"));
	else if (is_match(llm, "regex"))
		json_object_set_new(near, "why",
		                    json_string("the last user message does not match the regex"));
	else
		model_mock_text_diff(near, r->last, r->last_len, json_string_value(text),
		                     json_string_length(text));
}

/* How near llm condition is to r: higher is nearer. */
static long long nearness(json_t *llm, struct chat_req *r)
{
	json_t *text = json_object_get(llm, "last_user_message");
	json_t *model = json_object_get(llm, "model");
	long long score = 0;
	size_t p = 0;

	if (!model || model_http_same_string(model, r->model))
		score += 1LL << 40;
	/* a condition the request could meet by its shape: messages always, a
	 * last user message when the request has one */
	if (json_object_get(llm, "messages") || (text && r->last))
		score += 1LL << 39;
	if (text && r->last && is_match(llm, "exact"))
		while (p < r->last_len && p < json_string_length(text) &&
		       r->last[p] == json_string_value(text)[p])
			p++;
	return score + (long long)p;
}

json_t *model_llm_near_miss(json_t *mocks, const char *variant, json_t *request)
{
	struct chat_req r;
	json_t *m, *llm, *near = NULL;
	size_t i, best = 0;
	long long s, best_s = -1;

	chat_req_init(&r, request);
	json_array_foreach(mocks, i, m)
	{
		llm = json_object_get(m, "llm");
		if (!json_is_object(llm) || !model_mock_variant_tier(m, variant))
			continue;
		s = nearness(llm, &r);
		if (s > best_s) {
			best_s = s;
			best = i;
		}
	}
	if (best_s >= 0) {
		near = json_pack("{s:I, s:b}", "mock", (json_int_t)best, "llm", 1);
		llm_diff(near, json_object_get(json_array_get(mocks, best), "llm"), &r);
	}
	chat_req_free(&r);
	return near;
}

/* ---- the answer -------------------------------------------------------------------- */

/* Tokens, estimated: a quarter of the bytes, rounded up (no tokenizer: a
 * deterministic count that grows with the text, for clients that read it). */
static json_int_t tokens(size_t bytes)
{
	return (json_int_t)((bytes + 3) / 4);
}

static size_t prompt_bytes(json_t *request)
{
	json_t *msgs = json_object_get(request, "messages"), *m;
	size_t i, n, total = 0;
	char *t;

	json_array_foreach(msgs, i, m)
	{
		t = content_text(json_object_get(m, "content"), &n);
		if (t)
			total += n;
		free(t);
	}
	return total;
}

/* The tool calls of answer in the API's shape: arguments as JSON text; in
 * a stream (indexed 1) each with its "index". *bytes grows by the text. */
static json_t *api_tool_calls(json_t *calls, size_t seq, int indexed, size_t *bytes)
{
	json_t *out = json_array(), *tc, *call;
	size_t i;
	char id[64], *args;

	json_array_foreach(calls, i, tc)
	{
		args = json_dumps(json_object_get(tc, "arguments"), JSON_COMPACT);
		if (!args)
			abort();
		snprintf(id, sizeof(id), "call_olivares_%zu_%zu", seq, i);
		call =
		    json_pack("{s:s, s:s, s:{s:O, s:s}}", "id", id, "type", "function", "function",
		              "name", json_object_get(tc, "name"), "arguments", args);
		if (indexed)
			json_object_set_new(call, "index", json_integer((json_int_t)i));
		*bytes += strlen(args) + json_string_length(json_object_get(tc, "name"));
		free(args);
		json_array_append_new(out, call);
	}
	return out;
}

/* A chunk of a streamed answer, with delta (stolen) and finish (NULL: null). */
static json_t *chunk(const char *id, json_t *model, json_t *delta, const char *finish)
{
	return json_pack("{s:s, s:s, s:I, s:O, s:[{s:i, s:o, s:n, s:o}]}", "id", id, "object",
	                 "chat.completion.chunk", "created", (json_int_t)MODEL_LLM_CREATED, "model",
	                 model, "choices", "index", 0, "delta", delta, "logprobs", "finish_reason",
	                 finish ? json_string(finish) : json_null());
}

static void sse(struct model_buf *b, json_t *event)
{
	char *s = json_dumps(event, JSON_COMPACT);

	if (!s)
		abort();
	model_buf_must_fit(model_buf_printf(b, "data: %s\n\n", s));
	free(s);
	json_decref(event);
}

void model_llm_answer(json_t *answer, json_t *request, size_t seq, struct model_gateway_answer *a)
{
	json_t *content = json_object_get(answer, "content");
	json_t *calls = json_object_get(answer, "tool_calls");
	json_t *model = json_object_get(request, "model"), *opts, *usage, *msg, *c, *tc;
	json_t *owned_model = NULL;
	const char *finish = calls ? "tool_calls" : "stop";
	struct model_buf b;
	size_t out_bytes = json_string_length(content), i;
	int with_usage;
	char id[64];

	/* a request without a model matches no mock that names one */
	if (!json_is_string(model))
		model = owned_model = json_string(DEFAULT_MODEL);
	snprintf(id, sizeof(id), "chatcmpl-olivares-%zu", seq);
	a->status = 200;
	a->stream = json_is_true(json_object_get(request, "stream"));
	model_buf_init(&b, ANSWER_MAX_BYTES);
	if (!a->stream) {
		msg = json_pack("{s:s, s:O}", "role", "assistant", "content",
		                content ? content : json_null());
		if (calls)
			json_object_set_new(msg, "tool_calls",
			                    api_tool_calls(calls, seq, 0, &out_bytes));
		usage = json_pack("{s:I, s:I, s:I}", "prompt_tokens", tokens(prompt_bytes(request)),
		                  "completion_tokens", tokens(out_bytes), "total_tokens",
		                  tokens(prompt_bytes(request)) + tokens(out_bytes));
		c = json_pack("{s:s, s:s, s:I, s:O, s:[{s:i, s:o, s:n, s:s}], s:o}", "id", id,
		              "object", "chat.completion", "created", (json_int_t)MODEL_LLM_CREATED,
		              "model", model, "choices", "index", 0, "message", msg, "logprobs",
		              "finish_reason", finish, "usage", usage);
		a->body = json_dumps(c, JSON_COMPACT);
		if (!a->body)
			abort();
		a->body_len = strlen(a->body);
		json_decref(c);
		json_array_append_new(a->headers,
		                      json_pack("[s,s]", "Content-Type", "application/json"));
		goto out;
	}
	/* streamed: the role first, then the content, then each tool call
	 * whole (one delta each, with its index), then the finish; usage, when
	 * asked for, in a last chunk without choices, as the API sends it */
	opts = json_object_get(request, "stream_options");
	with_usage = json_is_true(json_object_get(opts, "include_usage"));
	sse(&b, chunk(id, model, json_pack("{s:s}", "role", "assistant"), NULL));
	if (content)
		sse(&b, chunk(id, model, json_pack("{s:O}", "content", content), NULL));
	if (calls) {
		tc = api_tool_calls(calls, seq, 1, &out_bytes);
		for (i = 0; i < json_array_size(tc); i++)
			sse(&b,
			    chunk(id, model,
			          json_pack("{s:[O]}", "tool_calls", json_array_get(tc, i)), NULL));
		json_decref(tc);
	}
	c = chunk(id, model, json_object(), finish);
	if (with_usage)
		json_object_set_new(c, "usage", json_null());
	sse(&b, c);
	if (with_usage) {
		usage = json_pack("{s:I, s:I, s:I}", "prompt_tokens", tokens(prompt_bytes(request)),
		                  "completion_tokens", tokens(out_bytes), "total_tokens",
		                  tokens(prompt_bytes(request)) + tokens(out_bytes));
		sse(&b, json_pack("{s:s, s:s, s:I, s:O, s:[], s:o}", "id", id, "object",
		                  "chat.completion.chunk", "created", (json_int_t)MODEL_LLM_CREATED,
		                  "model", model, "choices", "usage", usage));
	}
	model_buf_must_fit(model_buf_adds(&b, "data: [DONE]\n\n"));
	a->body = model_buf_detach(&b, &a->body_len);
	json_array_append_new(a->headers, json_pack("[s,s]", "Content-Type", "text/event-stream"));
	json_array_append_new(a->headers, json_pack("[s,s]", "Cache-Control", "no-cache"));
out:
	model_buf_release(&b);
	json_decref(owned_model);
}
