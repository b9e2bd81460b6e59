#ifndef OLIVARES_MODEL_MOCK_H
#define OLIVARES_MODEL_MOCK_H
/**
 * Structured tool mocks and near-miss explanations. Pure: no I/O.
 *
 * A scenario's "mocks" array holds resource mocks ({"resource", "response",
 * ...}, model/scenario.h) and tool mocks:
 *   {"tool": string (1..MODEL_MAX_TOOL_BYTES),
 *    "args": object (default {}),
 *    "match": "exact" | "subset" (default "exact"),
 *    one of "response": any JSON | "sequence": [JSON, ...] (1..MODEL_MAX_SEQUENCE)
 *           | "error": string (1..MODEL_MAX_TOOL_ERROR_BYTES),
 *    "variant"?, "delay_ms"? as for resource mocks}
 *
 * Matching a call {tool, args}: "exact" is JSON equality of the args
 * (object key order irrelevant); "subset" holds when every key of the
 * mock's args is in the call's args with an equal value, recursively for
 * objects (arrays and scalars must be equal).
 *
 * Precedence among the mocks that match a call (a mock for another variant
 * never applies): a mock of the run's variant over a mock without one;
 * then exact over subset; then, among subsets, the one with the larger
 * weight (model_mock_args_weight: its keys counted at every depth).
 * model_mock_tool_ambiguous refuses the pairs that could tie.
 *
 * A "sequence" answers its mock's successive calls in a run with its
 * successive items; every call after the last gets the last item again.
 * An "error" mock answers every call with a tool error (found, not a miss).
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

/** How mock (borrowed) applies to a run of variant (NULL: none): 2 when
 * the mock is that variant's, 1 when it has none (it applies to every
 * variant, below the variant's own), 0 when it is another variant's. */
int model_mock_variant_tier(json_t *mock, const char *variant);

/** Weight of a subset mock's args: the number of object keys at every
 * depth ({"a":1,"b":{"c":2}} weighs 3). args is borrowed. */
size_t model_mock_args_weight(json_t *args);

/** 1 when call matches mock_args: JSON equality when subset is 0, the
 * subset rule above when it is 1; else 0. Both borrowed. */
int model_mock_args_match(json_t *mock_args, json_t *call, int subset);

/**
 * 1 when tool mocks a and b (validated shapes, borrowed) could answer one
 * call with equal precedence: the same tool, the same variant (absent is
 * one variant), the same match, and for exact equal args; for subset an
 * equal weight and compatible args (every key they share holds equal
 * values, or compatible objects), so that the call holding both args
 * matches both. Else 0.
 */
int model_mock_tool_ambiguous(json_t *a, json_t *b);

/**
 * Resolve a tool call against mocks (borrowed) for variant (NULL: only
 * variant-less mocks apply). args may be NULL (taken as {}). Returns 1
 * with *index the winning mock's position, 0 on a miss.
 */
int model_mock_tool_find(json_t *mocks, const char *variant, const char *tool, json_t *args,
                         size_t *index);

/**
 * The answer of tool mock `mock` (borrowed) to its call number `call`
 * (0-based count of the calls it answered before in the run): the
 * response (borrowed from mock) with *error NULL, or NULL with *error
 * the mock's error message (borrowed).
 */
json_t *model_mock_tool_answer(json_t *mock, size_t call, const char **error);

/** The marker a tool miss answers: "[[mock-miss:tool " tool "]]", as a new
 * string (caller frees). */
char *model_mock_tool_miss_marker(const char *tool, size_t tool_len);

/**
 * Why a resource request missed: a new object (caller decrefs), or NULL
 * when no resource mock applies to variant. The nearest applicable
 * resource mock is the one sharing the longest common byte prefix with
 * the request, then the smallest length difference, then the first in
 * order (work bounded by MODEL_MAX_MOCKS x MODEL_MAX_RESOURCE_BYTES byte
 * comparisons). Shape:
 *   {"mock": index, "resource": the mock's resource, "offset": byte offset
 *    of the first difference (at the start of its UTF-8 character),
 *    "request_has": what the request has there, "mock_has": what the mock
 *    has there (model_mock_describe_char), "why": one of "trailing white
 *    space in the request", "trailing white space missing in the request",
 *    "leading white space in the request", "leading white space missing in
 *    the request", "line ending: CR LF in the request, LF in the mock",
 *    "line ending: LF in the request, CR LF in the mock", "look-alike: <a>
 *    in the request for <b> in the mock" (or the reverse), "the request is
 *    shorter", "the request is longer", "different character"}
 */
json_t *model_mock_near_miss_resource(json_t *mocks, const char *variant, const char *input,
                                      size_t input_len);

/**
 * Why a tool call missed: a new object (caller decrefs), or NULL when no
 * tool mock applies to variant. Among the applicable mocks of the same
 * tool, the nearest agrees on the most top-level keys of its args, then
 * has the fewest differing keys, then comes first; the answer is
 *   {"mock": index, "tool": T, "match": "exact"|"subset", "path": "$.q",
 *    "why": "missing" | "different value" | "extra key",
 *    "expected"?: the mock's value, "got"?: the call's value}
 * at the first difference in a walk over sorted keys (nested objects
 * descended; an extra key only for exact). With no mock of that tool, the
 * nearest tool name (as for resources) is given:
 *   {"mock", "tool", "why": "no mock for this tool", "offset",
 *    "request_has", "mock_has"}.
 * Values over MODEL_NEAR_MISS_VALUE_BYTES are left out.
 */
json_t *model_mock_near_miss_tool(json_t *mocks, const char *variant, const char *tool,
                                  json_t *args);

/** The first difference of request text r (rn bytes) against mock text m
 * (mn bytes), as model_mock_near_miss_resource gives it: "offset",
 * "request_has", "mock_has" and "why" set in near (an object, borrowed;
 * members of those names are replaced). */
void model_mock_text_diff(json_t *near, const char *r, size_t rn, const char *m, size_t mn);

/** The first difference of call against want (both borrowed) under the
 * exact (subset 0) or subset rule, as model_mock_near_miss_tool gives it:
 * 1 with "path" (below path, e.g. "$"), "why", "expected"? and "got"? set
 * in near; 0 when call matches want. */
int model_mock_args_diff(json_t *want, json_t *call, int subset, const char *path, json_t *near);

/** What is at s[off] (n bytes in all, off <= n) in words, into buf:
 * "end of text", "CR (U+000D)", "LF (U+000A)", "TAB (U+0009)", "SPACE
 * (U+0020)", "'x' (U+0078)", "NO-BREAK SPACE (U+00A0)" and the other
 * look-alikes of the table in mock.c, "U+XXXX", or "byte 0xNN" (invalid
 * UTF-8). */
void model_mock_describe_char(const char *s, size_t n, size_t off, char *buf, size_t buflen);

/* ---- a step's trace ----------------------------------------------------------
 * A step line (model/runspec.h) and a stored output carry "trace": the
 * step's requests in order, at most MODEL_MAX_STEP_REQUESTS, each
 *   {"resource": R, "hit": bool, "mock": index or null, "duration_us": N,
 *    "near_miss"?: object or null}
 *   {"tool": T, "args": object or null, "hit": bool, "mock": index or null,
 *    "duration_us": N, "error"?: true, "near_miss"?: object or null}
 *   {"http": {"method": M, "url": U}, "status": S, "hit": bool, "mock": index
 *    or null, "duration_us": N, "llm"?: true, "near_miss"?: object or null,
 *    "refused"?: reason, "egress"?: object, "truncated"?: true}
 * "mock" is the answering mock's position in the scenario's mocks (null on
 * a miss); "near_miss" (a miss only) is model_mock_near_miss_resource or
 * _tool, null when no mock applied; "error" is true when an error mock
 * answered (a hit). duration_us: from the request read to its answer
 * sent, the mock's delay_ms included, integer microseconds rounded up. R
 * over MODEL_MAX_RESOURCE_BYTES and T over MODEL_MAX_TOOL_BYTES are cut at
 * a UTF-8 character boundary, args over MODEL_MAX_RESPONSE_BYTES (compact
 * JSON) become null; "truncated": true then says so.
 * An http entry is a request the run's gateway answered (model/http_mock.h):
 * its method and url (normalized when it could be; cut at
 * MODEL_MAX_HTTP_METHOD_BYTES and MODEL_MAX_HTTP_URL_BYTES), the status
 * answered, "llm": true when a chat mock answered, "near_miss" on a miss
 * (model_http_near_miss or model_llm_near_miss); "refused" (a miss) a
 * request the gateway refused, before any mock was tried (no near_miss;
 * its status absent when it answered none) or, to a host outside the
 * egress list, after (with its near_miss); "egress" (hit false, no
 * near_miss) a request passed to the allow-listed egress, which is not a
 * miss. */

/** The trace entry of a resource request (input, len bytes) that hit
 * mocks[mock] or missed (hit 0: the near miss is computed here). A new
 * object (caller decrefs). */
json_t *model_trace_resource(json_t *mocks, const char *variant, const char *input, size_t len,
                             int hit, size_t mock, long long duration_us);

/** The trace entry of a tool call (args borrowed, may be NULL) that hit
 * mocks[mock] (error 1: an error mock) or missed. A new object. */
json_t *model_trace_tool(json_t *mocks, const char *variant, const char *tool, json_t *args,
                         int hit, size_t mock, int error, long long duration_us);

/**
 * Check a trace a runner reported (the shape above; n_mocks the spec's
 * mocks): an array of at most MODEL_MAX_STEP_REQUESTS entries, each with
 * exactly one of resource/tool (a string) or http ({method, url}, two
 * strings), hit a boolean, mock an integer in [0, n_mocks) on a hit and
 * null on a miss, duration_us an integer >= 0, near_miss absent, null or
 * an object (a miss only) whose "mock" is in [0, n_mocks); an http entry's
 * status an integer 100..599 (optional when refused), llm true on a hit,
 * refused a string on a miss without llm or egress, egress an
 * object on a miss without near_miss; status, llm, refused and egress only
 * with http, args and error never; no other key. *misses is the number
 * of entries that missed (egress entries are not misses). Returns 0, or
 * -1 with *why filled.
 */
int model_trace_check(json_t *trace, size_t n_mocks, size_t *misses, struct model_reason *why);

#endif
