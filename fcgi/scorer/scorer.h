#ifndef OLIVARES_FCGI_SCORER_SCORER_H
#define OLIVARES_FCGI_SCORER_SCORER_H
/**
 * Choosing the scorer adapter from the configuration (model/scorer.h): the
 * only place that knows the adapters; called by the composition root
 * (fcgi/main.c) once per worker.
 *
 *   "none"              model_scorer_none
 *   "builtin:<dir>"     fcgi/scorer/scorer_builtin.h (suite files in <dir>)
 *   "exec:<command>"    fcgi/scorer/scorer_exec.h (command split on spaces, no
 *                       shell; timeout_ms is its time limit)
 */
#include <stddef.h>

#include "model/scorer.h"

/** Bounds of [scorer] timeout_ms (fcgi/config.h), milliseconds. */
#define HTTP_SCORER_TIMEOUT_MIN_MS 100
#define HTTP_SCORER_TIMEOUT_MAX_MS 600000
#define HTTP_SCORER_TIMEOUT_DEFAULT_MS 5000

/**
 * 1 if adapter_spec has the syntax above ("none", "builtin:" + a non-empty
 * directory, "exec:" + a command with at least one word), else 0. Checks
 * syntax only (nothing is opened): config.c uses it at load.
 */
int http_scorer_spec_valid(const char *adapter_spec);

/**
 * Build the adapter adapter_spec names into *out. timeout_ms (see the
 * bounds above) only matters to exec. builtin needs an existing directory;
 * exec an executable program (a relative path is resolved against the
 * current directory now, since the scorer runs with an empty environment:
 * no PATH). Returns 0, or -1 with a one-line message in *err (may be NULL) and
 * *out set to the none adapter. Release with http_scorer_release.
 */
int http_scorer_from_config(const char *adapter_spec, int timeout_ms, struct model_scorer *out,
                            struct model_reason *err);

/** Destroy what s holds (s->ops->destroy) and reset it to the none
 * adapter. Safe on a zeroed struct and on the none adapter. */
void http_scorer_release(struct model_scorer *s);

#endif
