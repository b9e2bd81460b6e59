/*
 * The walk of a request body's check (check.h).
 */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "text.h"

int model_check_malformed(struct model_check *c, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	model_error_setv(c->err, MODEL_E_MALFORMED, field, fmt, ap);
	va_end(ap);
	return -1;
}

void model_check_refuse(struct model_check *c, enum model_err code, const char *field,
                        const char *fmt, ...)
{
	va_list ap;

	if (c->refused)
		return;
	va_start(ap, fmt);
	model_error_setv(&c->refusal, code, field, fmt, ap);
	va_end(ap);
	c->refused = 1;
}

int model_check_keys(struct model_check *c, json_t *obj, const char *prefix,
                     const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;
	char path[64];

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i])
			continue;
		if (prefix[0])
			snprintf(path, sizeof(path), "%s.%s", prefix, key);
		else
			snprintf(path, sizeof(path), "%s", key);
		return model_check_malformed(c, path, "unknown field \"%s\"", path);
	}
	return 0;
}

int model_check_text(struct model_check *c, const char *s, size_t n, const char *path, size_t min,
                     size_t max)
{
	const char *kind;

	/* jansson refuses these at decode; bodies built in code
	 * (json_stringn_nocheck) do not pass through the decoder */
	if (!model_text_valid_utf8(s, n))
		return model_check_malformed(c, path, "%s must be valid UTF-8 without NUL bytes",
		                             path);
	if (model_text_find_credential(s, n, &kind))
		model_check_refuse(c, MODEL_E_INVALID, path, "%s looks like a credential (%s)",
		                   path, kind);
	else if (n < min)
		model_check_refuse(c, MODEL_E_LIMIT, path, "%s must not be empty", path);
	else if (n > max)
		model_check_refuse(c, MODEL_E_LIMIT, path, "%s must be at most %zu bytes", path,
		                   max);
	return 0;
}

int model_check_done(struct model_check *c)
{
	if (!c->refused)
		return 0;
	if (c->err)
		*c->err = c->refusal;
	return -1;
}

int model_check_json_text(struct model_check *c, json_t *v, const char *path, size_t max)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_string(v))
		return model_check_text(c, json_string_value(v), json_string_length(v), path, 0,
		                        max);
	if (json_is_array(v)) {
		json_array_foreach(v, i, item)
		{
			if (model_check_json_text(c, item, path, max))
				return -1;
		}
		return 0;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, key, item)
		{
			if (model_check_text(c, key, strlen(key), path, 0, max) ||
			    model_check_json_text(c, item, path, max))
				return -1;
		}
	}
	return 0;
}

int model_check_json_value(struct model_check *c, json_t *v, const char *path)
{
	char *s;
	size_t n;

	if (model_check_json_text(c, v, path, MODEL_MAX_RESPONSE_BYTES))
		return -1;
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	n = s ? strlen(s) : 0;
	free(s);
	if (n > MODEL_MAX_RESPONSE_BYTES)
		model_check_refuse(c, MODEL_E_LIMIT, path,
		                   "%s must be at most %d bytes as compact JSON", path,
		                   MODEL_MAX_RESPONSE_BYTES);
	return 0;
}
