#ifndef OLIVARES_RUNNER_ERROR_H
#define OLIVARES_RUNNER_ERROR_H
/**
 * The runner's one error shape: what kind of thing went wrong, which a
 * caller may act on, and one line that says it. Functions of runner/
 * return 0, or -1 with a struct runner_error filled; the line is what a
 * run's reason is made of (backend_*.c wrap it: "namespace jail not in
 * place: <message>"), so its bytes are recorded on the run and matter.
 *
 * A message is cut at RUNNER_ERROR_BYTES - 1 bytes (runner/limits.h), byte
 * for byte like snprintf: a reason that quotes a path may end inside a
 * UTF-8 sequence, which runner/main.c replaces by a printable copy when it
 * writes the summary.
 */
#include <stdarg.h>

#include "runner/limits.h"

enum runner_err {
	RUNNER_OK = 0,
	/* The host lacks a primitive the backend needs (a preflight, or a run
	 * that found one missing): the run fails closed, naming it. */
	RUNNER_E_MISSING,
	/* A step of building or starting the confinement failed (its errno
	 * named): no step of the run is sent. */
	RUNNER_E_SETUP,
	/* The confinement was built, but a check of it from outside failed
	 * (a namespace shared, a mount writable, a capability kept...). */
	RUNNER_E_UNVERIFIED,
	/* The agent's /proc entries are gone (it is exiting, or has exited):
	 * nothing of it can be checked any more, and how it ended is the
	 * better reason. */
	RUNNER_E_GONE,
	/* The agent's /proc entries are closed to this process: before its
	 * exec the jail's pid 1 is not dumpable, and a runner that is not
	 * root may not look into it then; checked again after the exec. */
	RUNNER_E_CLOSED,
	/* A deadline passed: the jail's setup budget, a runsc command cut at
	 * its bound. */
	RUNNER_E_TIMEOUT,
	/* The agent ended, or said something the protocol refuses: the
	 * message says how ("agent exited with status 3"). */
	RUNNER_E_AGENT,
	/* The run spec is refused (shape, a field out of its bounds). */
	RUNNER_E_SPEC,
	/* A teardown could not remove something of the confinement (a
	 * process, a cgroup, a directory): the run reports destroyed false. */
	RUNNER_E_LEFT_BEHIND,
	/* Anything else: a system call that was not expected to fail. */
	RUNNER_E_INTERNAL,
};

struct runner_error {
	enum runner_err kind;
	char message[RUNNER_ERROR_BYTES]; /* one line, NUL-terminated */
};

/**
 * Fill *err (if not NULL) with kind and the printf-formatted message, and
 * return -1, so that a failure is one line:
 *   return runner_error_set(err, RUNNER_E_MISSING, "%s namespaces unavailable", name);
 * The format's arguments may not point into err->message.
 */
int runner_error_set(struct runner_error *err, enum runner_err kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Append printf-formatted text to err->message (if err is not NULL), cut
 * as runner_error_set cuts; the kind stays. Returns -1. The format's
 * arguments may not point into err->message.
 */
int runner_error_append(struct runner_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
