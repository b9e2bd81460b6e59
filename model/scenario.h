#ifndef OLIVARES_MODEL_SCENARIO_H
#define OLIVARES_MODEL_SCENARIO_H
/**
 * Scenario validation (clamping before persistence) and mock resolution.
 *
 * A scenario travels as JSON. Request body of POST (create) and PUT (update)
 * /v1/m/sandbox/scenarios[/{id}]:
 *   {"name": string (1..128 bytes, required on create),
 *    "description": string (<= 1024 bytes, default ""),
 *    "subject_kind": string (<= 200 bytes, default "agent"),
 *    "steps": [{"key": string (1..128 bytes, unique), "input": string (<= 8192 bytes)}]
 *             (1..1000 items, required on create),
 *    "mocks": [{"resource": string (1..8192 bytes), "response": string (<= 65536 bytes),
 *               "variant": string (1..64 bytes) or null/absent,
 *               "delay_ms": integer 0..60000 (MODEL_MAX_MOCK_DELAY_MS), default 0}
 *              or a tool mock (model/mock.h): {"tool", "args"?, "match"?,
 *               "response" | "sequence" | "error", "variant"?, "delay_ms"?}
 *              or an http or llm mock (model/http_mock.h, whose errors and
 *               normalized shapes are there): {"http" | "llm", "response" |
 *               "sequence", "variant"?, "delay_ms"?}]
 *             (<= 1000 items, default [])}
 * A tool mock's errors: tool not a string, args not an object, match not a
 * string, sequence not an array, none or two of response/sequence/error,
 * both resource and tool: malformed; tool of 0 or over 128 bytes, an empty
 * sequence or one over 100 items, a response or item over 65536 bytes as
 * compact JSON, an error message of 0 or over 1024 bytes: limit_exceeded;
 * a match other than "exact"/"subset", and two tool mocks that could answer
 * one call with equal precedence (model_mock_tool_ambiguous; field
 * "mocks[i]", i the later of the first such pair): invalid. Normalized, a
 * tool mock has tool, args (default {}), match (default "exact"), its one
 * answer, and variant/delay_ms as a resource mock has them.
 * A mock's delay_ms is how long the runner waits before it answers a request
 * that mock answers (a hit); a miss is answered at once.
 * A step may be given without "key"; it then gets "step-<position>".
 * Unknown fields anywhere are refused (malformed). Two mocks with the same
 * resource and the same variant (absent counts as one variant) are refused
 * (invalid, 422): resolution is never ambiguous. Any string that looks like
 * a credential (model_text_find_credential) is refused (invalid, 422) with
 * the field path in err->field.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

/**
 * Validate a create (is_update = 0) or update (is_update = 1: every field
 * optional, at least one present) body. On success returns 0 and sets
 * *normalized to a new object holding only the validated fields, with
 * defaults applied on create and step keys filled in (caller owns it).
 * On failure returns -1 with *err and *normalized untouched.
 *
 * Errors (err->field is the JSON path, e.g. "steps[2].input", "mocks[1]"):
 *   malformed (400): body not an object, unknown field at any level,
 *     wrong type, a required field missing (name/steps on create, input in
 *     a step, resource/response in a mock), invalid UTF-8 or NUL, a mock's
 *     delay_ms that is not an integer in 0..60000 (field "mocks[i].delay_ms");
 *   limit_exceeded (422): any bound above; empty or blank (white space
 *     only) name; empty subject_kind, key, resource or variant; 0 or more than 1000 steps;
 *   invalid (422): duplicate step key (a default "step-<position>" that
 *     collides with an explicit key included), duplicate (resource,
 *     variant) mock (field "mocks[i]", i the later of the pair), credential
 *     content in any string (message names the format, never the value),
 *     an update body with no field.
 * A malformed problem anywhere wins over a 422 refusal; among refusals the
 * first met in document order is reported. The normalized object has the
 * keys name, description, subject_kind, steps [{key,input}], mocks
 * [{resource,response[,variant][,delay_ms]}] ("variant" omitted when absent
 * or null, "delay_ms" when absent or 0).
 */
int model_scenario_check(json_t *body, int is_update, json_t **normalized, struct model_error *err);

/**
 * Resolve a step's input against a scenario's mocks (the array validated
 * above). Exact byte match of input against "resource", newlines included.
 * A mock whose "variant" equals variant wins over a mock without a variant;
 * mocks for other variants are ignored. variant may be NULL (only
 * variant-less mocks apply). Returns 1 and points *response and *response_len
 * into the mocks array (borrowed) on a hit, 0 on a miss.
 */
int model_mock_resolve(json_t *mocks, const char *variant, const char *input, size_t input_len,
                       const char **response, size_t *response_len);

/**
 * The resource mock that answers input (the rule of model_mock_resolve):
 * 1 with *index its position in mocks, 0 on a miss. Tool mocks never
 * answer a resource (model/mock.h).
 */
int model_mock_find(json_t *mocks, const char *variant, const char *input, size_t input_len,
                    size_t *index);

/**
 * model_mock_resolve() that also gives the winning mock's delay: on a hit,
 * *delay_ms (when delay_ms is not NULL) is model_mock_delay_ms() of that
 * mock; on a miss it is left untouched (a miss has no delay). Same return.
 */
int model_mock_lookup(json_t *mocks, const char *variant, const char *input, size_t input_len,
                      const char **response, size_t *response_len, long *delay_ms);

/**
 * The mocks that a run of variant sees (variant may be NULL), as a new
 * array in the scenario's order: every mock for that variant, and every
 * variant-less mock whose resource has none for it; each a copy without
 * its "variant" key, every other key kept. Two variants that see the same
 * array resolve every input alike: the run's mocks_digest is over it.
 * Returns NULL only when out of memory. mocks is borrowed.
 */
json_t *model_mocks_for_variant(json_t *mocks, const char *variant);

/** A mock's "delay_ms" in ms: the integer when it is one in
 * 0..MODEL_MAX_MOCK_DELAY_MS, else 0 (absent, or not a valid value). mock
 * is borrowed. */
long model_mock_delay_ms(json_t *mock);

/** The marker for a miss: "[[mock-miss:" input "]]", allocated (caller frees),
 * length in *out_len. */
char *model_mock_miss_marker(const char *input, size_t input_len, size_t *out_len);

#endif
