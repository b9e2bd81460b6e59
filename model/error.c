/*
 * The project's error types (error.h): a request's error (a code, a JSON
 * path and one sentence) and the run layer's reason.
 */
#include "error.h"

#include <stdio.h>
#include <string.h>

/*
 * snprintf may cut a multi-byte UTF-8 sequence in half when the text is
 * longer than the field. The HTTP layer puts these strings in JSON, and
 * jansson refuses invalid UTF-8, so drop any incomplete trailing sequence.
 */
static void trim_utf8_tail(char *s)
{
	size_t n;
	size_t start;
	size_t need;
	unsigned char lead;

	n = strlen(s);
	if (n == 0)
		return;
	start = n;
	/* walk back over continuation bytes (at most 3) to the lead byte */
	while (start > 0 && n - start < 4 && ((unsigned char)s[start - 1] & 0xC0) == 0x80)
		start--;
	if (start == 0) {
		if (((unsigned char)s[0] & 0xC0) == 0x80)
			s[0] = '\0';
		return;
	}
	lead = (unsigned char)s[start - 1];
	if (lead < 0x80) {
		/* ASCII lead: any continuation bytes after it are stray */
		s[start] = '\0';
		return;
	}
	if ((lead & 0xE0) == 0xC0)
		need = 2;
	else if ((lead & 0xF0) == 0xE0)
		need = 3;
	else if ((lead & 0xF8) == 0xF0)
		need = 4;
	else
		need = 0;
	if (need == 0 || n - (start - 1) < need)
		s[start - 1] = '\0';
	else if (n - (start - 1) > need)
		s[start - 1 + need] = '\0';
}

int model_error_setv(struct model_error *err, enum model_err code, const char *field,
                     const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	err->code = code;
	snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
	trim_utf8_tail(err->field);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	trim_utf8_tail(err->message);
	return -1;
}

int model_error_set(struct model_error *err, enum model_err code, const char *field,
                    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	model_error_setv(err, code, field, fmt, ap);
	va_end(ap);
	return -1;
}

int model_reason_set(struct model_reason *r, const char *fmt, ...)
{
	va_list ap;

	if (!r)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	return -1;
}

const char *model_error_name(enum model_err code)
{
	switch (code) {
	case MODEL_OK:
		return "ok";
	case MODEL_E_MALFORMED:
		return "malformed";
	case MODEL_E_LIMIT:
		return "limit_exceeded";
	case MODEL_E_INVALID:
		return "invalid";
	case MODEL_E_NOT_FOUND:
		return "not_found";
	case MODEL_E_TOO_LARGE:
		return "too_large";
	case MODEL_E_BUSY:
		return "busy";
	case MODEL_E_STORAGE:
		return "storage_unavailable";
	case MODEL_E_CONFLICT:
		return "conflict";
	case MODEL_E_QUOTA:
		return "quota_exceeded";
	case MODEL_E_INTERNAL:
		break;
	}
	return "internal";
}

int model_error_http_status(enum model_err code)
{
	switch (code) {
	case MODEL_OK:
		return 200;
	case MODEL_E_MALFORMED:
		return 400;
	case MODEL_E_LIMIT:
	case MODEL_E_INVALID:
		return 422;
	case MODEL_E_NOT_FOUND:
		return 404;
	case MODEL_E_TOO_LARGE:
		return 413;
	case MODEL_E_BUSY:
		return 429;
	case MODEL_E_STORAGE:
		return 503;
	case MODEL_E_CONFLICT:
		return 409;
	case MODEL_E_QUOTA:
		return 507;
	case MODEL_E_INTERNAL:
		break;
	}
	return 500;
}
