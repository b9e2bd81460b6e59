/*
 * Synthetic step inputs by local template expansion (generate.h).
 */
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "limits.h"
#include "text.h"

#define PH_INDEX "{{index}}"
#define PH_SUBJECT "{{subject_kind}}"

/*
 * The scenario-create request around a generated steps array, with every
 * value removed:
 *
 *   {"name":,"description":,"subject_kind":,"steps":,"mocks":[]}
 *
 *   {  "name":  ,  "description":  ,  "subject_kind":  ,  "steps":  ,  "mocks":[]  }
 *   1 +   7   + 1 +     14       + 1 +     15        + 1 +   8    + 1 +    10    + 1  = 60
 *
 * plus the three bounded strings at their worst escaped size
 * (model_text_json_worst: 6n + 2, every byte as \u00XX, quotes included):
 *
 *   name         128 bytes -> 6*128  + 2 =  770
 *   description 1024 bytes -> 6*1024 + 2 = 6146
 *   subject      200 bytes -> 6*200  + 2 = 1202
 *
 * Total 60 + 770 + 6146 + 1202 = 8178 bytes, so the compact steps array may
 * take at most 1048576 - 8178 = 1040398 bytes.
 */
static const char envelope_skeleton[] =
    "{\"name\":,\"description\":,\"subject_kind\":,\"steps\":,\"mocks\":[]}";

size_t model_scenario_envelope_reserve(void)
{
	return (sizeof(envelope_skeleton) - 1) + model_text_json_worst(MODEL_MAX_NAME_BYTES) +
	       model_text_json_worst(MODEL_MAX_DESCRIPTION_BYTES) +
	       model_text_json_worst(MODEL_MAX_SUBJECT_BYTES);
}

static int known_field(const char *key)
{
	return strcmp(key, "subject_kind") == 0 || strcmp(key, "count") == 0 ||
	       strcmp(key, "seed") == 0;
}

/* A string field: type and (defense in depth, jansson checks at decode)
 * UTF-8 without NUL. */
static int string_field(json_t *v, const char *name, struct model_error *err)
{
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, name, "%s must be a string", name);
	if (!model_text_valid_utf8(json_string_value(v), json_string_length(v)))
		return model_error_set(err, MODEL_E_MALFORMED, name,
		                       "%s must be valid UTF-8 without NUL bytes", name);
	return 0;
}

int model_gen_request_parse(json_t *body, struct model_gen_request *out, struct model_error *err)
{
	const char *key;
	json_t *v;
	json_t *subject;
	json_t *count;
	json_t *seed;
	json_int_t n;

	if (!json_is_object(body))
		return model_error_set(err, MODEL_E_MALFORMED, "", "body must be a JSON object");
	json_object_foreach(body, key, v)
	{
		if (!known_field(key))
			return model_error_set(err, MODEL_E_MALFORMED, key, "unknown field \"%s\"",
			                       key);
	}
	subject = json_object_get(body, "subject_kind");
	count = json_object_get(body, "count");
	seed = json_object_get(body, "seed");

	/* malformed (400) before limits (422) */
	if (subject && string_field(subject, "subject_kind", err))
		return -1;
	if (seed && string_field(seed, "seed", err))
		return -1;
	if (count && !json_is_integer(count))
		return model_error_set(err, MODEL_E_MALFORMED, "count", "count must be an integer");

	n = count ? json_integer_value(count) : MODEL_DEFAULT_COUNT;
	if (n < MODEL_MIN_COUNT || n > MODEL_MAX_COUNT)
		return model_error_set(err, MODEL_E_LIMIT, "count",
		                       "count must be between %d and %d", MODEL_MIN_COUNT,
		                       MODEL_MAX_COUNT);
	/* An empty subject is refused: "{{subject_kind}}" would expand to
	 * nothing and the scenario it feeds would have no subject. */
	if (subject && json_string_length(subject) == 0)
		return model_error_set(err, MODEL_E_LIMIT, "subject_kind",
		                       "subject_kind must not be empty");
	if (subject && json_string_length(subject) > MODEL_MAX_SUBJECT_BYTES)
		return model_error_set(err, MODEL_E_LIMIT, "subject_kind",
		                       "subject_kind must be at most %d bytes",
		                       MODEL_MAX_SUBJECT_BYTES);
	if (seed && json_string_length(seed) > MODEL_MAX_TEMPLATE_BYTES)
		return model_error_set(err, MODEL_E_LIMIT, "seed", "seed must be at most %d bytes",
		                       MODEL_MAX_TEMPLATE_BYTES);

	memset(out, 0, sizeof(*out));
	out->count = (long)n;
	if (subject) {
		out->subject_len = json_string_length(subject);
		out->subject = model_xmemdup(json_string_value(subject), out->subject_len);
	} else {
		out->subject_len = strlen(MODEL_DEFAULT_SUBJECT);
		out->subject = model_xstrdup(MODEL_DEFAULT_SUBJECT);
	}
	if (seed) {
		out->tmpl_len = json_string_length(seed);
		out->tmpl = model_xmemdup(json_string_value(seed), out->tmpl_len);
	} else {
		out->tmpl_len = strlen(MODEL_DEFAULT_TEMPLATE);
		out->tmpl = model_xstrdup(MODEL_DEFAULT_TEMPLATE);
	}
	return 0;
}

void model_gen_request_free(struct model_gen_request *r)
{
	if (!r)
		return;
	free(r->subject);
	free(r->tmpl);
	r->subject = NULL;
	r->tmpl = NULL;
	r->subject_len = 0;
	r->tmpl_len = 0;
}

int model_generate_one(const char *tmpl, size_t tmpl_len, const char *subject, size_t subject_len,
                       long index, char **out, size_t *out_len, struct model_error *err)
{
	struct model_buf b;
	char num[24];
	size_t i;
	size_t lit;
	const char *brace;
	int rc;

	model_buf_init(&b, MODEL_MAX_INPUT_BYTES);
	snprintf(num, sizeof(num), "%ld", index);
	rc = 0;
	i = 0;
	while (i < tmpl_len && rc == 0) {
		/* copy the literal run up to the next '{' in one append */
		brace = memchr(tmpl + i, '{', tmpl_len - i);
		lit = brace ? (size_t)(brace - (tmpl + i)) : tmpl_len - i;
		if (lit) {
			rc = model_buf_add(&b, tmpl + i, lit);
			i += lit;
			continue;
		}
		if (tmpl_len - i >= strlen(PH_INDEX) &&
		    memcmp(tmpl + i, PH_INDEX, strlen(PH_INDEX)) == 0) {
			rc = model_buf_adds(&b, num);
			i += strlen(PH_INDEX);
		} else if (tmpl_len - i >= strlen(PH_SUBJECT) &&
		           memcmp(tmpl + i, PH_SUBJECT, strlen(PH_SUBJECT)) == 0) {
			rc = model_buf_add(&b, subject, subject_len);
			i += strlen(PH_SUBJECT);
		} else {
			/* a brace that starts no placeholder is literal */
			rc = model_buf_add(&b, tmpl + i, 1);
			i++;
		}
	}
	if (rc) {
		model_buf_release(&b);
		return model_error_set(err, MODEL_E_LIMIT, "seed",
		                       "generated input %ld would exceed %d bytes", index,
		                       MODEL_MAX_INPUT_BYTES);
	}
	*out = model_buf_detach(&b, out_len);
	model_buf_release(&b);
	return 0;
}

int model_generate(const struct model_gen_request *r, json_t **samples, struct model_error *err)
{
	json_t *arr;
	json_t *item;
	json_t *input;
	char *text;
	size_t len;
	size_t encoded;
	size_t room;
	char key[32];
	long i;
	int ret;

	ret = -1;
	arr = json_array();
	if (!arr)
		return model_error_set(err, MODEL_E_INTERNAL, "", "out of memory");
	for (i = 1; i <= r->count; i++) {
		if (model_generate_one(r->tmpl, r->tmpl_len, r->subject, r->subject_len, i, &text,
		                       &len, err))
			goto out;
		input = json_stringn(text, len);
		free(text);
		if (!input) {
			/* template and subject are valid UTF-8 and placeholders
			 * are ASCII, so this is out of memory */
			model_error_set(err, MODEL_E_INTERNAL, "", "could not build sample %ld", i);
			goto out;
		}
		snprintf(key, sizeof(key), "step-%ld", i);
		item = json_pack("{s:s,s:o}", "key", key, "input", input);
		if (!item || json_array_append_new(arr, item)) {
			model_error_set(err, MODEL_E_INTERNAL, "", "could not build sample %ld", i);
			goto out;
		}
	}
	/* json_dumpb with no buffer returns the encoded size */
	encoded = json_dumpb(arr, NULL, 0, JSON_COMPACT);
	room = MODEL_MAX_REQUEST_BYTES - model_scenario_envelope_reserve();
	if (encoded == 0 || encoded > room) {
		model_error_set(err, MODEL_E_LIMIT, "count",
		                "the encoded batch (%zu bytes) would not fit a %d-byte scenario "
		                "request (at most %zu bytes for the steps)",
		                encoded, MODEL_MAX_REQUEST_BYTES, room);
		goto out;
	}
	*samples = arr;
	arr = NULL;
	ret = 0;
out:
	json_decref(arr);
	return ret;
}
