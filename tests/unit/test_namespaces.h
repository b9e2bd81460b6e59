#ifndef OLIVARES_TEST_NAMESPACES_H
#define OLIVARES_TEST_NAMESPACES_H
/* What the files of the test_namespaces program share (test_namespaces.c
 * and test_namespaces_bounds.c). */
#include <check.h>

#include "tests/unit/runner_harness.h"

/** The hostile agent's path (OLIVARES_HOSTILE_AGENT). */
const char *hostile(void);

/** Run agent on one step of input with the given limits (0 = default);
 * the run must be isolated and destroyed on namespaces. */
struct result agent_run(const char *agent, const char *input, long cpu, long mem, long procs,
                        long wall, long tmpfs_mb);

/** Add the "bounds" case (whole-run memory and CPU) to s. */
void namespaces_add_bounds(Suite *s);

#endif
