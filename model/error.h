#ifndef OLIVARES_MODEL_ERROR_H
#define OLIVARES_MODEL_ERROR_H
/**
 * The one error type of the model and HTTP layers. Functions return 0 on
 * success or -1 and fill a struct model_error; the HTTP layer turns it into
 * a status and a JSON body in one helper (http_reply_error).
 *
 *   code                 HTTP  JSON error.code
 *   MODEL_E_MALFORMED    400   "malformed"       bad JSON, wrong type, unknown field, bad UTF-8
 *   MODEL_E_LIMIT        422   "limit_exceeded"  a bound of limits.h is crossed
 *   MODEL_E_INVALID      422   "invalid"         well-formed but refused
 *                                                (duplicate mock, credential)
 *   MODEL_E_NOT_FOUND    404   "not_found"
 *   MODEL_E_TOO_LARGE    413   "too_large"       request body over 1 MiB
 *   MODEL_E_BUSY         429   "busy"            every run slot is taken: try again
 *                                                (sent with Retry-After)
 *   MODEL_E_STORAGE      503   "storage_unavailable"
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
};

struct model_error {
	enum model_err code;
	char field[64];    /* JSON path of the offending field ("steps[3].input"), or "" */
	char message[256]; /* one human sentence, never containing secret values */
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

/** The JSON error.code string for a code ("malformed", ...). */
const char *model_error_name(enum model_err code);

/** The HTTP status for a code (400, 422, 404, 413, 503, 500). */
int model_error_http_status(enum model_err code);

#endif
