#ifndef OLIVARES_RUNNER_BACKEND_H
#define OLIVARES_RUNNER_BACKEND_H
/**
 * The one interface every olivares-runner backend implements (DESIGN.md §1
 * and §5; the wire is model/runspec.h).
 *
 * runner/main.c owns the process: it closes inherited descriptors, clears
 * the environment, reads and validates the run spec, looks the backend up in
 * a static table (runner_backends[]), calls preflight() then run(), releases
 * the spec and writes the summary line. A backend only executes steps and
 * says whether its confinement was verified in place.
 *
 * Fail closed (seed 000, "Provisionné-mais-incapable échoue en mode fermé"):
 * a backend whose preflight fails, or whose confinement cannot be verified
 * in run(), executes no step, reports isolated 0 and never hands the run to
 * another backend.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/**
 * A validated run spec (model/runspec.h). All pointers are borrowed from
 * `root`, which runner/main.c owns and releases after run() returns:
 * the run's state lives in the call and is thrown away on return.
 *   steps:   array of {"key": string, "input": string}
 *   mocks:   array of {"resource": string, "response": string, "variant"?: string|null}
 *   variant: the run's variant, or NULL
 *   unconfined: 1 only under --no-seccomp, a test aid for valgrind (which
 *     cannot run a seccomp-filtered process): the backend then runs without
 *     its confinement and must report isolated 0. The worker never passes it.
 */
struct runner_spec {
	json_t *root;
	json_t *steps;
	json_t *mocks;
	const char *variant;
	int unconfined;
};

/**
 * What run() reports; runner/main.c turns it into the summary line.
 * status is "completed" or "failed"; reason is "" when none. isolated is 1
 * only when the backend verified its confinement in place before the first
 * step and kept it for the whole run. destroyed is set by main.c, not by a
 * backend (it is true only once the spec has been released).
 */
struct runner_summary {
	const char *status;
	int isolated;
	int destroyed;
	long steps_total, steps_ok, steps_error;
	char reason[512];
};

/**
 * One backend. Every hook is required except probe.
 *
 * preflight: can this host provide the backend's confinement? Returns 0, or
 *   -1 with a one-line reason naming the missing primitive in why[0..n).
 *   Called before the spec is read.
 * run: confine the process, then execute spec's steps in order, writing one
 *   JSON line per step to out (model/runspec.h) and flushing it; fills *sum.
 *   Returns 0 when the run completed, -1 when it failed (sum->status
 *   "failed", sum->reason set). Never writes the summary line.
 * probe: self-test of the confinement (--probe OP): install it exactly as
 *   run() does, try OP, write one {"type":"probe",...} line to out. Returns
 *   0 when the line was written, -1 otherwise (message on stderr). May be
 *   NULL for a backend without a probe.
 */
struct runner_backend {
	const char *name;
	int (*preflight)(char *why, size_t n);
	int (*run)(const struct runner_spec *spec, FILE *out, struct runner_summary *sum);
	int (*probe)(const char *op, FILE *out);
};

/** The inproc-mock backend (runner/backend_inproc_mock.c): mock resolution
 * inside the runner process, confined by a seccomp filter loaded after the
 * spec is read and before the first step. */
extern const struct runner_backend runner_backend_inproc_mock;

/** The operations --probe accepts, NULL-terminated (for --help). */
extern const char *const runner_probe_ops[];

#endif
