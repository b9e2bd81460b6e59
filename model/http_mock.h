#ifndef OLIVARES_MODEL_HTTP_MOCK_H
#define OLIVARES_MODEL_HTTP_MOCK_H
/**
 * HTTP mocks and OpenAI-style chat (LLM) mocks, and how a run's gateway
 * answers one request from them. Pure: no I/O, no clock, no randomness;
 * the gateway (runner/) parses HTTP and calls model_gateway_resolve.
 * docs/http-mocks.md is the user's description of the same rules.
 *
 * Two more kinds of a scenario's "mocks" items (model/scenario.h):
 *
 *   {"http": {"method": token (1..MODEL_MAX_HTTP_METHOD_BYTES; upper-cased),
 *             "url": "http://" | "https://" absolute url (1..MODEL_MAX_HTTP_URL_BYTES),
 *             "body"?: string (exact bytes) | {"json_subset": any JSON}
 *                      | {"regex": POSIX ERE (1..MODEL_MAX_HTTP_REGEX_BYTES)}},
 *    one of "response": R | "sequence": [R, ...] (1..MODEL_MAX_SEQUENCE),
 *    "variant"?, "delay_ms"? as for resource mocks}
 *   R = {"status"?: integer 200..599 (default 200),
 *        "headers"?: {"Name": "value", ...} (at most MODEL_MAX_HTTP_HEADERS),
 *        one or none of "body": string | "json": any JSON}
 *
 *   {"llm": {"last_user_message"?: string, "messages"?: [object, ...] (not both),
 *            "match"?: "exact" | "contains" | "regex" (with last_user_message,
 *                      default "exact") | "exact" | "subset" (with messages,
 *                      default "subset"),
 *            "model"?: string (1..MODEL_MAX_LLM_MODEL_BYTES)},
 *    one of "response": C | "sequence": [C, ...], "variant"?, "delay_ms"?}
 *   C = {"content"?: string, "tool_calls"?: [{"name": string (1..MODEL_MAX_TOOL_BYTES),
 *        "arguments"?: object (default {})}, ...] (1..MODEL_MAX_LLM_TOOL_CALLS)},
 *       at least one of the two.
 *
 * Normalized (what model_http_mock_check produces), an http mock holds
 * http {method (upper case), url (normalized, model_http_url_normalize),
 * body? as given} and each response with its status filled in; an llm
 * mock holds llm {the condition, match filled in, model?} and each answer
 * with every tool call's arguments filled in.
 *
 * Matching an HTTP request: method equal byte for byte; url equal after
 * normalization; the body condition: a string is the exact bytes of the
 * request's body; json_subset holds when the body parses as JSON and the
 * mock's value is a subset of it (model_mock_args_match's subset rule);
 * regex holds when regexec finds the pattern anywhere in the body
 * (REG_EXTENDED; anchor with ^ and $; a body holding a NUL byte never
 * matches a regex). Precedence among the mocks that match: the run's
 * variant over none; then an exact body over json_subset or regex over no
 * body condition; then, among json_subsets, the heavier
 * (model_mock_args_weight). Two mocks that could tie are refused at
 * validation (model_http_mocks_check_ambiguity).
 *
 * Matching a chat request (a POST whose url's path ends in
 * "/chat/completions", any host, and whose body is a JSON object with a
 * "messages" array; tried before the HTTP mocks): "model", when the mock
 * has one, equal to the request's; the last user message (the "content"
 * of the last message whose role is "user": a string, or the "text" of
 * the parts of type "text" of an array, joined with "\n"; absent when no
 * message has that role or its content is neither) equal to, containing,
 * or matched (regexec, REG_EXTENDED) by the mock's text; "messages" of the
 * request of the mock's length, each of its items equal to (exact) or a
 * superset of (subset) the mock's item at the same position, where each
 * request message's content array is taken as its joined text first; no
 * condition matches every chat request. Precedence: variant; then exact
 * over contains/regex/subset over no condition; then a mock naming the
 * model over one that does not; then, among contains, the longer text and,
 * among subsets, the heavier messages. Ties are refused at validation.
 *
 * A sequence answers its mock's successive calls with its successive
 * items, the last repeating (as tool sequences do).
 */
#include <jansson.h>
#include <stddef.h>

#include "check.h"

/* the "created" of every chat answer: fixed (2024-01-01T00:00:00Z) so that
 * an answer depends on nothing but the request, the mocks and the counter */
#define MODEL_LLM_CREATED 1704067200

/**
 * url (len bytes) normalized into *out (a new NUL-terminated string,
 * caller frees): scheme and host lower-cased, a default port (80 for
 * http, 443 for https) and an empty port removed, another port written
 * in decimal without leading zeros, an empty path made "/"; path and
 * query kept byte for byte. Returns 0, or -1 with *why (a static
 * sentence) when url is not an absolute http or https url: another
 * scheme, no host, user information ("user@"), a fragment, a port that
 * is not a number in 1..65535, a control character or a space, or over
 * MODEL_MAX_HTTP_URL_BYTES.
 */
int model_http_url_normalize(const char *url, size_t len, char **out, const char **why);

/**
 * 1 when the url's path (before any "?") ends in "/chat/completions", the
 * path of an OpenAI-style chat completions request; else 0.
 */
int model_http_is_chat_path(const char *url);

/**
 * Check the mock item at prefix ("mocks[3]") that has "http" or "llm", in
 * the walk of model_scenario_check (model/check.h: a structural problem
 * returns -1 at once; a refusal is kept in c and 0 returned). The item's
 * keys were checked against the mock fields already; here a member of
 * another kind (resource, tool, args, match, error; http with llm) is
 * malformed. On 0, *out is a new object holding the normalized kind and
 * answer (see above); variant and delay_ms are the caller's to add. On
 * -1, *out is NULL.
 *
 * Errors: wrong types, unknown fields, a missing method, url or answer,
 * both or neither of response/sequence, both body and json in a
 * response, both last_user_message and messages, a status that is not an
 * integer: malformed; an empty or overlong string, a sequence of 0 or too
 * many items, too many headers or tool calls, a body or JSON value over
 * MODEL_MAX_RESPONSE_BYTES: limit_exceeded; a method that is not an HTTP
 * token, a url model_http_url_normalize refuses, a regex regcomp refuses,
 * a status outside 200..599, a body with 204 or 304, a header name that is
 * not a token, a value with CR, LF or NUL, a header the gateway sets itself
 * (Content-Length, Transfer-Encoding, Connection), two headers differing in
 * case only, a match that does not go with the condition, an answer with
 * neither content nor tool_calls: invalid.
 */
int model_http_mock_check(struct model_check *c, json_t *item, const char *prefix, json_t **out);

/**
 * For a reader of a run spec (the runner): 0 when item is an http or llm
 * mock as a scenario's normalized mocks hold it (model_http_mock_check
 * finds nothing to refuse; members: http or llm, response or sequence,
 * variant, delay_ms, whose values are the caller's to check), else -1
 * with *err (field paths below "mock", e.g. "mock.http.url"; err may be
 * NULL). Ambiguity between mocks is not checked here.
 */
int model_http_mock_spec_check(json_t *item, struct model_error *err);

/**
 * Refuse (invalid, field "mocks[j]", j the later of the first pair in
 * document order) two http mocks, or two llm mocks, of normalized mocks
 * (borrowed) that could answer one request with equal precedence: for
 * http, the same method, url and variant and: no body condition both, an
 * equal exact body, a regex against a json_subset or a regex, or two
 * json_subsets of equal weight whose values are compatible; for llm, the
 * same variant, kind of condition and model presence (two different models
 * never tie) and: no condition both, equal exact conditions, a regex
 * against anything at its rank, two contains of equal length, a contains
 * against messages, two subsets of equal length and weight with compatible
 * items. The message says how to make them distinct.
 */
void model_http_mocks_check_ambiguity(struct model_check *c, json_t *mocks);

/**
 * The last user message of a chat request body (an object, borrowed): a
 * new string (caller frees, *len its bytes), or NULL when there is none
 * (the rule above).
 */
char *model_llm_last_user_message(json_t *request, size_t *len);

/**
 * 1 when the header named name (blanks around it ignored, any case)
 * carries credentials: Authorization, Proxy-Authorization, Cookie,
 * Set-Cookie, WWW-Authenticate, X-Api-Key, Api-Key, X-Auth-Token,
 * X-Goog-Api-Key, Ocp-Apim-Subscription-Key, X-Amz-Security-Token. The
 * gateway masks them in a trace and a recording leaves them out.
 */
int model_http_header_is_credential(const char *name);

/**
 * 1 when the header named name (any case) is one the gateway frames or
 * carries hop by hop, never passed on nor answered from a mock:
 * Connection, Keep-Alive, TE, Trailer(s), Transfer-Encoding, Upgrade,
 * Content-Length and every Proxy-* one (RFC 9110, 7.6.1).
 */
int model_http_header_is_hop(const char *name);

/** What a gateway answers one request with (model_gateway_resolve). */
struct model_gateway_answer {
	int hit;         /* 1: a mock answered */
	size_t mock;     /* its index in mocks (0 on a miss) */
	int llm;         /* 1: an llm mock answered */
	int status;      /* the HTTP status to answer */
	json_t *headers; /* new array of [name, value] pairs, Content-Type always among them;
	                    never Content-Length (the gateway frames the body) */
	char *body;      /* malloc'd, NUL-terminated (body_len bytes before the NUL) */
	size_t body_len;
	long delay_ms; /* how long to wait before answering (the mock's delay_ms; 0 on a miss) */
	int stream;    /* 1: body is a text/event-stream (a chat request with "stream": true) */
	json_t *trace; /* the step's trace entry for this request (model/mock.h), without
	                   duration_us: the gateway adds it when the answer is sent */
};

/**
 * Resolve one request the gateway got against a run's mocks (borrowed, a
 * scenario's normalized mocks) for variant (NULL: only variant-less mocks
 * apply): method as received (compared byte for byte with the mocks'
 * upper-case methods), url absolute ("https://host/path?q", the scheme
 * the agent used: https for a request inside a CONNECT tunnel), headers
 * the request's [name, value] pairs (borrowed, may be NULL: no mock
 * matches on headers yet), body (body_len bytes, may be NULL when 0).
 * calls[] holds, per mock (indexed like mocks), how many requests it
 * answered before in the run: the winner's count picks its sequence item
 * and is incremented here (calls may be NULL: every call is the first).
 * seq is a number the caller gives the request, used as is in a chat
 * answer's ids ("chatcmpl-olivares-<seq>", "call_olivares_<seq>_<i>"): a
 * per-run counter (the request's 1-based number in the run, say) keeps
 * them distinct and the same from one run to the next.
 *
 * Order: a chat request tries the llm mocks first; then the http mocks;
 * else a miss: status 404, Content-Type text/plain; charset=utf-8, body
 * model_http_miss_marker(method, url), and in the trace a near miss: the
 * nearest llm mock's when the path was chat completions and one applies,
 * else the nearest http mock's (model_http_near_miss).
 *
 * An http hit answers the response's status, headers (its Content-Type,
 * else application/json for "json" or text/plain; charset=utf-8) and body
 * ("json" as compact JSON). A chat hit answers 200 with an OpenAI chat
 * completion (application/json) or, when the request has "stream": true,
 * its chunks as server-sent events (text/event-stream): docs/http-mocks.md
 * gives both shapes.
 *
 * On 0 every member of *a is set (release with model_gateway_answer_clear).
 * Returns -1 only when out of memory (which the project's policy aborts
 * on first, model/alloc.h), with *a cleared.
 */
int model_gateway_resolve(json_t *mocks, const char *variant, const char *method, const char *url,
                          json_t *headers, const char *body, size_t body_len, size_t *calls,
                          size_t seq, struct model_gateway_answer *a);

/** Release what *a holds and zero it (safe on a zeroed answer). */
void model_gateway_answer_clear(struct model_gateway_answer *a);

/** The body a request no mock answers: "[[mock-miss:" method " " url "]]",
 * a new string (caller frees). */
char *model_http_miss_marker(const char *method, const char *url);

/**
 * Why a request missed: a new object (caller decrefs), or NULL when no
 * http mock applies to variant. The nearest applicable http mock is one of
 * the same url and method (then "differs": "body"), else of the same url
 * ("differs": "method"), else the one whose url shares the longest prefix
 * with the request's, then the smallest length difference, then the first
 * ("differs": "url"). Shape:
 *   {"mock": index, "method": its method, "url": its url, "differs": "url" |
 *    "method" | "body", "why": ...,
 *    for url and exact body: "offset", "request_has", "mock_has" (and "why")
 *      as model_mock_near_miss_resource gives them;
 *    for method: "request_has" and "mock_has" the two methods, "why":
 *      "method differs";
 *    for json_subset: "why": "the body is not JSON" or "path", "why",
 *      "expected"?, "got"? as model_mock_near_miss_tool gives them;
 *    for regex: "why": "the body does not match the regex", "regex"}
 * url is the request's (normalized when it can be).
 */
json_t *model_http_near_miss(json_t *mocks, const char *variant, const char *method,
                             const char *url, const char *body, size_t body_len);

/**
 * Why a chat request (request: its parsed body, borrowed) missed the llm
 * mocks: a new object, or NULL when no llm mock applies to variant. The
 * nearest is one naming the request's model or none, then one whose
 * condition is of the request's shape, then the first. Shape:
 *   {"mock": index, "llm": true, "differs": "model" | "last_user_message" |
 *    "messages", "why": ...,
 *    model: "request_has", "mock_has" (the request's "(none)" when absent),
 *      "why": "model differs";
 *    last_user_message: "why": "the request has no user message"; for exact
 *      the text difference (offset, request_has, mock_has, why); for
 *      contains "why": "the last user message does not contain the mock's
 *      text"; for regex "why": "the last user message does not match the
 *      regex";
 *    messages: "why": "the request has N messages, the mock M" or, at the
 *      first item that differs, "path" ("$[i]..."), "why", "expected"?,
 *      "got"? as model_mock_near_miss_tool gives them}
 */
json_t *model_llm_near_miss(json_t *mocks, const char *variant, json_t *request);

/**
 * The trace entry of a request the gateway refused before any mock was
 * tried (a malformed request, a CONNECT it does not serve, a body over its
 * bound): {"http": {"method", "url"}, "hit": false, "mock": null,
 * "refused": reason} (method, url and reason cut as the trace's rules say;
 * method or url NULL is recorded as ""). "status" is left out: the caller
 * sets it (json_object_set_new) when it answered one. A new object.
 */
json_t *model_trace_http_refused(const char *method, const char *url, const char *reason);

#endif
