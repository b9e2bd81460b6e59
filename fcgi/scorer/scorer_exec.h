#ifndef OLIVARES_FCGI_SCORER_SCORER_EXEC_H
#define OLIVARES_FCGI_SCORER_SCORER_EXEC_H
/**
 * The external scorer adapter ("exec:<command line>", model/scorer.h).
 *
 * The command line is split on spaces (no shell, no quoting, at most
 * HTTP_SCORER_EXEC_MAX_ARGS words); the program is started with
 * posix_spawn with an EMPTY environment, only fds 0..2 (stderr is
 * /dev/null), in a process group of its own, signals at their defaults.
 * Its stdin receives one JSON object {"suite": S, "outputs": [...]} (the
 * run's outputs as given), then EOF. Its stdout (at most
 * HTTP_SCORER_EXEC_MAX_OUTPUT bytes) must be exactly one JSON object
 *   {"score": number in [0, 1], "passed": bool,
 *    "details"?: [{"passed": bool, "seq"?: integer, "key"?: string|null,
 *                  "check"?: string, "message"?: string}, ...] }
 * (no other field; at most 10000 details) and it must exit 0.
 *
 * Not scored, with the reason (never a silent pass):
 *   "scorer timed out after N ms"        (its group is killed with SIGKILL)
 *   "scorer killed by SIGSEGV"           (any signal, by name)
 *   "scorer exited with status N"
 *   "scorer answered more than 1 MiB"
 *   "scorer answered invalid JSON: <jansson message>"
 *   "scorer answer: <what is wrong>"     (missing score, score out of range,
 *                                         passed not a boolean, ...)
 *   "cannot start the scorer: <errno>"
 * Not thread-safe (fcgi/run/spawn.h: SIGPIPE ignored and SIGCHLD at its
 * default for the duration of a call, then restored).
 */
#include <stddef.h>

#include "model/scorer.h"

#define HTTP_SCORER_EXEC_MAX_ARGS 32
#define HTTP_SCORER_EXEC_MAX_OUTPUT (1024 * 1024)
#define HTTP_SCORER_EXEC_MAX_DETAILS 10000

/**
 * Build the adapter for command_line with a time limit of timeout_ms per
 * call (HTTP_SCORER_TIMEOUT_MIN_MS..MAX_MS of fcgi/scorer/scorer.h). argv[0] must
 * name an executable file; a relative one is made absolute now. Returns 0
 * with *out set (ctx owned by it), or -1 with *err (may be NULL) saying why,
 * for the log.
 */
int http_scorer_exec_new(const char *command_line, int timeout_ms, struct model_scorer *out,
                         struct model_reason *err);

#endif
