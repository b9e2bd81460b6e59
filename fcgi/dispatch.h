#ifndef OLIVARES_FCGI_DISPATCH_H
#define OLIVARES_FCGI_DISPATCH_H
/**
 * Runner dispatch: fork/exec olivares-runner for one run, feed it the spec,
 * read its JSON lines, enforce the wall-clock limit (DESIGN.md §1,
 * model/runspec.h for the wire).
 *
 * The child gets: argv {runner_path, "--backend", backend, NULL}; an empty
 * environment (envp = {NULL}); stdin/stdout/stderr on pipes; every other
 * descriptor closed before exec (the worker's FastCGI socket, ODBC
 * connection, log file never leak). stdout is capped (16 MiB); stderr is
 * kept (first 4 KiB) for the reason of a failure. At the deadline the child
 * gets SIGKILL and the run is failed with reason "wall-clock limit of N ms
 * exceeded". The child is always reaped before return.
 */
#include <jansson.h>

struct http_dispatch_result {
	char status[16];      /* "completed" | "failed" */
	char runner[64];      /* from the summary, or "olivares-runner" */
	char backend[32];     /* backend requested/reported */
	int isolated;         /* 1 only if the runner's summary said so AND the run completed */
	int destroyed;
	int steps_total, steps_ok, steps_error;
	char reason[512];     /* "" when none */
	char output_digest[65]; /* SHA-256 hex over the ordered outputs (see below) */
	json_t *outputs;      /* array of {"seq","key","input","output","status","error_kind"}; owned */
};

/**
 * Run spec (an object per model/runspec.h, borrowed) on backend with the
 * runner at runner_path, with timeout_ms wall-clock limit. Always fills
 * *res (release with http_dispatch_result_free); returns 0 when the runner
 * produced a well-formed, consistent result (res->status may still be
 * "failed" if the runner said so), -1 when the worker had to fail the run
 * itself (spawn failure, timeout, crash, malformed or inconsistent output):
 * then res->status is "failed", isolated 0, outputs empty, and reason says
 * why.
 *
 * output_digest: SHA-256 over, for each output in seq order, the decimal
 * seq, NUL, key, NUL, output, NUL, status, NUL. Same outputs, same digest.
 */
int http_dispatch_run(const char *runner_path, const char *backend, int timeout_ms,
		      json_t *spec, struct http_dispatch_result *res);

void http_dispatch_result_free(struct http_dispatch_result *res);

#endif
