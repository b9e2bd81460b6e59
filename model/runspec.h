#ifndef OLIVARES_MODEL_RUNSPEC_H
#define OLIVARES_MODEL_RUNSPEC_H
/**
 * The wire between the FastCGI worker and olivares-runner (DESIGN.md §1).
 *
 * argv:   olivares-runner --backend inproc-mock
 * stdin:  one JSON object, the run spec, then EOF:
 *   {"variant": string or null,
 *    "steps": [{"key": string, "input": string}, ...],
 *    "mocks": [{"resource": string, "response": string, "variant": string?}, ...]}
 *   Nothing else: no ids, no tenant, no token, no database handle.
 * stdout: one JSON object per line. For each step, in order:
 *   {"type":"step","seq":N (1-based),"key":…,"input":…,"output":…,
 *    "status":"ok"|"error","error_kind":null|"mock_miss"}
 *   then exactly one final line:
 *   {"type":"summary","runner":"olivares-runner/<version>","backend":…,
 *    "isolated":bool,"destroyed":bool,"status":"completed"|"failed",
 *    "steps_total":N,"steps_ok":N,"steps_error":N,"reason":null|string}
 *   "isolated" is true only when the backend's confinement was verified in
 *   place for the whole run (inproc-mock: the seccomp filter was loaded).
 * exit:   0 when a summary was written, non-zero otherwise.
 * A worker that sees no summary line, a malformed line, counters that
 * disagree with the step lines, or the wall-clock limit pass records the run
 * as failed, isolated false, with the reason.
 */
#define MODEL_RUNNER_NAME "olivares-runner"
#define MODEL_BACKEND_INPROC_MOCK "inproc-mock"

#endif
