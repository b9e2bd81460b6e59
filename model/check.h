#ifndef OLIVARES_MODEL_CHECK_H
#define OLIVARES_MODEL_CHECK_H
/**
 * The walk of a request body's check, shared by model_scenario_check
 * (model/scenario.h) and model_session_check (model/history.h): the first
 * structural error (400 malformed) stops the walk at once; a refusal (a
 * 422: a bound, a credential) is kept, the first one only, while the walk
 * goes on looking for a structural error, which wins over it. Pure: no
 * I/O.
 */
#include <jansson.h>

#include "error.h"

struct model_check {
	struct model_error *err;    /* where the outcome goes (may be NULL) */
	int refused;                /* a refusal is kept in refusal */
	struct model_error refusal; /* the first refusal */
};

/** A structural error: fill *c->err with MODEL_E_MALFORMED, field and the
 * message, and return -1 (the walk stops). */
int model_check_malformed(struct model_check *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** A refusal with code (MODEL_E_LIMIT, MODEL_E_INVALID): kept unless one
 * was kept already; the walk goes on. */
void model_check_refuse(struct model_check *c, enum model_err code, const char *field,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** Any member of obj not in the NULL-terminated list allowed is a
 * structural error naming it ("unknown field \"steps[3].x\""): prefix is ""
 * at the top level or the item's path ("steps[3]"). Returns 0 or -1. */
int model_check_keys(struct model_check *c, json_t *obj, const char *prefix,
                     const char *const *allowed);

/**
 * A text of n bytes at path: invalid UTF-8 (or a NUL) is structural; a
 * credential, then the bounds [min, max] bytes, are refusals. A credential
 * is reported before a bound of the same field (making it shorter would
 * not make it acceptable); the message names its format, never the
 * matched bytes. Returns 0, or -1 on a structural error.
 */
int model_check_text(struct model_check *c, const char *s, size_t n, const char *path, size_t min,
                     size_t max);

/**
 * Every string inside the JSON value v, object keys included, through
 * model_check_text at path with the bounds [0, max] (a value of another
 * type has no text and passes): UTF-8, no NUL, no credential. Returns 0,
 * or -1 on a structural error.
 */
int model_check_json_text(struct model_check *c, json_t *v, const char *path, size_t max);

/**
 * A JSON value a mock answers with (a tool's response, an http mock's
 * json, a chat tool call's arguments): model_check_json_text on its
 * strings, and at most MODEL_MAX_RESPONSE_BYTES as compact JSON (over it,
 * a MODEL_E_LIMIT refusal at path). Returns -1 only when c stopped (as
 * model_check_json_text), else 0.
 */
int model_check_json_value(struct model_check *c, json_t *v, const char *path);

/** The end of a walk without a structural error: -1 with the kept refusal
 * in *c->err if there is one, else 0. */
int model_check_done(struct model_check *c);

#endif
