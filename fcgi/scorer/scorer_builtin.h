#ifndef OLIVARES_FCGI_SCORER_SCORER_BUILTIN_H
#define OLIVARES_FCGI_SCORER_SCORER_BUILTIN_H
/**
 * The builtin reference scorer adapter ("builtin:<dir>", model/scorer.h):
 * the suite named S is the file <dir>/S.json, in the format of
 * model/suite.h, evaluated with model_suite_evaluate.
 *
 * The file is resolved with realpath and refused unless it lies inside
 * realpath(<dir>) (no "..", no symlink out of the directory), must be a
 * regular file of at most HTTP_SCORER_SUITE_MAX_BYTES, and is parsed with
 * JSON_REJECT_DUPLICATES then checked (model_suite_check). Reasons when not
 * scored: "invalid suite name", "unknown suite S", "suite S is outside the
 * suites directory", "suite S: <read error>", "suite S is not valid JSON:
 * <jansson message>", "invalid suite S: <field>: <message>". The suite is
 * read again at each call (an operator may edit it; no state between
 * calls).
 */
#include <stddef.h>

#include "model/scorer.h"

/** Largest suite file read, bytes (1 MiB, the request cap). */
#define HTTP_SCORER_SUITE_MAX_BYTES (1024 * 1024)

/**
 * Build the adapter for the directory dir (must exist and be a
 * directory). Returns 0 with *out set (ctx owned by it), or -1 with *err
 * (may be NULL) saying why, for the log.
 */
int http_scorer_builtin_new(const char *dir, struct model_scorer *out, struct model_reason *err);

#endif
