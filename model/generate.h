#ifndef OLIVARES_MODEL_GENERATE_H
#define OLIVARES_MODEL_GENERATE_H
/**
 * Synthetic step inputs by local template expansion (sandbox page, "Générer
 * les entrées d'un scénario").
 *
 * Request body of POST /v1/m/sandbox/synthetic-data, every field optional:
 *   {"subject_kind": string, "count": integer, "seed": string}
 * "seed" is the template. Unknown fields are refused (malformed).
 * Defaults: subject "agent", count 10, template
 * "{{subject_kind}}-sample-{{index}}".
 * Bounds: 1 <= count <= 100; subject <= 200 bytes; template <= 8192 bytes;
 * each generated input <= 8192 bytes (UTF-8 bytes of the decoded text).
 *
 * Expansion is one left-to-right pass: the exact, case-sensitive
 * placeholders "{{index}}" (1-based decimal) and "{{subject_kind}}" are
 * replaced; substituted text is never scanned again; every other byte is
 * kept as is (other {{...}}, stray braces, CR, a final newline).
 *
 * The batch must fit a scenario-create request: the compact JSON encoding of
 * the steps array plus model_scenario_envelope_reserve() (8178 bytes) must be <=
 * MODEL_MAX_REQUEST_BYTES, or the whole request fails (limit_exceeded) with
 * no partial sample.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

/** Bytes reserved in a scenario-create request for everything but the
 * steps: the object's punctuation and key names, the name (128 bytes), the
 * description (1024) and the subject (200) at their worst escaped size
 * (model_text_json_worst), and an empty mocks array. */
size_t model_scenario_envelope_reserve(void);

struct model_gen_request {
	char *subject; /* owned */
	size_t subject_len;
	long count;
	char *tmpl; /* owned */
	size_t tmpl_len;
};

/**
 * Parse and validate a request body (a JSON object, already decoded with
 * JSON_REJECT_DUPLICATES). Fills *out with defaults applied.
 * Returns 0, or -1 with *err: malformed (not an object, wrong type, unknown
 * field, count not an integer, a string field not valid UTF-8) or
 * limit_exceeded (count, subject, template; an empty subject_kind is refused
 * too: "{{subject_kind}}" would expand to nothing). An empty seed is
 * allowed (it yields empty inputs). err->field names the field.
 * On success release with model_gen_request_free.
 */
int model_gen_request_parse(json_t *body, struct model_gen_request *out, struct model_error *err);

void model_gen_request_free(struct model_gen_request *r);

/**
 * Expand one template for one index into *out (allocated, NUL-terminated,
 * caller frees; *out_len its length). Returns 0, or -1 with limit_exceeded
 * if the result would exceed MODEL_MAX_INPUT_BYTES (nothing allocated).
 */
int model_generate_one(const char *tmpl, size_t tmpl_len, const char *subject, size_t subject_len,
                       long index, char **out, size_t *out_len, struct model_error *err);

/**
 * Generate the whole batch: a new JSON array of {"key":"step-<i>","input":…}
 * for i = 1..count, in *samples (caller owns the reference). Returns 0, or
 * -1 with *err and *samples untouched (no partial batch) if any input is
 * oversize or the encoded batch does not fit the request limit.
 */
int model_generate(const struct model_gen_request *r, json_t **samples, struct model_error *err);

#endif
