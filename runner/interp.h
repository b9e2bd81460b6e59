#ifndef OLIVARES_RUNNER_INTERP_H
#define OLIVARES_RUNNER_INTERP_H
/**
 * The interpreter check of the OS-level backends, before the jail is
 * built: a script whose "#!" interpreter (or the program its env looks
 * up) is not inside the jail of spec->binds would fail in the jail as an
 * unexplained ENOENT of execve; it fails here instead, naming the
 * interpreter and the [runner] binds setting (model_interp_reason).
 */
#include "runner/backend.h"

/**
 * Check the interpreter of agent (the program about to run; spec->agent,
 * or the built-in mock agent, which is static and never checked).
 * Returns 0 when it can run (a binary, an interpreter in the jail, env
 * with options this check does not follow, a file it cannot read: the
 * backend then reports that itself), -1 with sum->reason set and nothing
 * started when it cannot.
 */
int runner_interp_check(const struct runner_spec *spec, const char *agent,
                        struct runner_summary *sum);

#endif
