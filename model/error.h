#ifndef OLIVARES_MODEL_ERROR_H
#define OLIVARES_MODEL_ERROR_H
/**
 * The one error type of the model and HTTP layers for what a request is
 * refused or fails with. Functions return 0 on success or -1 and fill a
 * struct model_error; the HTTP layer turns it into a status and a JSON
 * body in one helper (http_reply_error). What a run or a score records
 * as its reason goes in the run layer's shape, struct model_reason below.
 *
 *   code                 HTTP  JSON error.code
 *   MODEL_E_MALFORMED    400   "malformed"       bad JSON, wrong type, unknown field, bad UTF-8
 *   MODEL_E_LIMIT        422   "limit_exceeded"  a bound of limits.h is crossed
 *   MODEL_E_INVALID      422   "invalid"         well-formed but refused
 *                                                (duplicate mock, credential)
 *   MODEL_E_NOT_FOUND    404   "not_found"
 *   MODEL_E_TOO_LARGE    413   "too_large"       request body over 1 MiB
 *   MODEL_E_BUSY         429   "busy"            over a tenant's active runs: try again
 *                                                (sent with Retry-After)
 *   MODEL_E_CONFLICT     409   "conflict"        a state change that no longer applies
 *                                                (cancel of a finished run)
 *   MODEL_E_STORAGE      503   "storage_unavailable"
 *   MODEL_E_QUOTA        507   "quota_exceeded"  over a tenant's storage quota
 *                                                (the figures in used_bytes,
 *                                                limit_bytes, request_bytes)
 *   MODEL_E_INTERNAL     500   "internal"
 */
#include <stdarg.h>

enum model_err {
	MODEL_OK = 0,
	MODEL_E_MALFORMED,
	MODEL_E_LIMIT,
	MODEL_E_INVALID,
	MODEL_E_NOT_FOUND,
	MODEL_E_TOO_LARGE,
	MODEL_E_BUSY,
	MODEL_E_STORAGE,
	MODEL_E_INTERNAL,
	MODEL_E_CONFLICT,
	MODEL_E_QUOTA,
};

struct model_error {
	enum model_err code;
	char field[64];    /* JSON path of the offending field ("steps[3].input"), or "" */
	char message[256]; /* one human sentence, never containing secret values */
	/* MODEL_E_QUOTA only (model_error_set leaves them as they are): what
	 * the tenant stores, its quota and what the refused write would have
	 * added, in bytes; the reply carries them beside the message */
	long long used_bytes, limit_bytes, request_bytes;
};

/** Fill *err (if not NULL) and return -1, so callers can write
 * `return model_error_set(err, MODEL_E_LIMIT, "count", "count must be ...");` */
int model_error_set(struct model_error *err, enum model_err code, const char *field,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** model_error_set with a va_list, for helpers that forward their own
 * format arguments. Same return (-1) and the same truncation rules: field and
 * message are cut to fit and never end inside a UTF-8 sequence. */
int model_error_setv(struct model_error *err, enum model_err code, const char *field,
                     const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/** Bytes of a reason recorded on a run or a score, its NUL included
 * (http_dispatch_result and model_score_result hold one). */
#define MODEL_REASON_BYTES 512

/**
 * The error shape of the run layer: why a run failed, a score was not
 * made, a timeline could not be rebuilt or a source could not answer,
 * in text that is recorded as a run's or a score's reason (or logged)
 * as it is. It is not a request's refusal (struct model_error, whose one
 * sentence is cut at 255 bytes for an HTTP body); it carries no code, as
 * no caller tells its failures apart, and up to MODEL_REASON_BYTES - 1
 * bytes, so a reason is never shortened on its way to the record.
 */
struct model_reason {
	char text[MODEL_REASON_BYTES]; /* NUL-terminated, "" when nothing was said */
};

/**
 * Fill *r (if not NULL) with the printf-formatted text and return -1, so a
 * failure is one line:
 *   return model_reason_set(why, "step %zu: status and error_kind disagree", seq);
 * The text is cut at MODEL_REASON_BYTES - 1 bytes as snprintf cuts, byte
 * for byte: whoever records it makes it printable or valid UTF-8 its own
 * way. The format's arguments may not point into r->text.
 */
int model_reason_set(struct model_reason *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The JSON error.code string for a code ("malformed", ...). */
const char *model_error_name(enum model_err code);

/** The HTTP status for a code (400, 422, 404, 413, 429, 409, 503, 507, 500). */
int model_error_http_status(enum model_err code);

#endif
