#ifndef OLIVARES_FCGI_RUN_DISPATCH_H
#define OLIVARES_FCGI_RUN_DISPATCH_H
/**
 * Runner dispatch: start olivares-runner for one run, feed it the
 * spec, read and check its JSON lines as they come, enforce a deadline
 * (model/runspec.h for the wire). The runner is the only process where agent work happens; the
 * worker never runs an agent itself. Also asks it for a backend's
 * preflight.
 *
 * The runner is a fork of the worker's runner fork server
 * (fcgi/run/runner_server.h, runner/serve.h), one process per run, which then
 * runs as a freshly executed runner would. It gets: argv {runner_path,
 * "--backend", backend, NULL} (a run) or {runner_path, "--preflight",
 * backend, NULL}, with "--gvisor-platform", platform before the NULL when
 * backend is gvisor and a platform is given ([runner] gvisor_platform:
 * host configuration, which the spec never carries); an empty environment
 * (envp = {NULL}); stdin/stdout/stderr on pipes; every other descriptor
 * closed (the worker's FastCGI socket, ODBC connection, log
 * file never leak); its own process group, killed whole at the end. A
 * run's stdout is capped at HTTP_DISPATCH_OUTPUT_MAX (4 MiB) plus the
 * room of its log lines (HTTP_DISPATCH_LOG_ROOM, 3 MiB): a 1 MiB
 * scenario whose 250 steps all hit one 64 KiB mock writes 16 MiB, so the
 * cap, not the request limit, bounds what a worker buffers. stderr is kept
 * (first 4 KiB) for the reason of a failure. At the deadline the child's
 * group gets SIGKILL and the run is failed with reason "runner still
 * running at the worker's deadline, N ms after its start; killed" (N is
 * the deadline, which for a run is its wall-clock limit plus
 * HTTP_DISPATCH_GRACE_MS; a runner that keeps its own limit reports that
 * limit itself). The child is always reaped before return.
 */
#include <jansson.h>

#include "model/buf.h"
#include "model/error.h"

/** Cap of a run's runner output (stdout) but its log lines, bytes. */
#define HTTP_DISPATCH_OUTPUT_MAX (4u * 1024u * 1024u)
/** Room for the log lines beside it: the log's 1 MiB of text
 * (MODEL_RUN_LOG_MAX) at worst twice as long JSON-escaped, and the lines'
 * own bytes. The whole output is capped at the sum: over it the run fails
 * with reason "runner output over 7340032 bytes". */
#define HTTP_DISPATCH_LOG_ROOM (3u * 1024u * 1024u)
/** Room added for a recorded run ("record": true in its spec): the
 * answers its traces carry, at most MODEL_RECORD_MAX_BYTES together
 * (model/record.h). */
#define HTTP_DISPATCH_RECORD_ROOM (1024u * 1024u)

/** What a caller adds to a run's own wall-clock limit (the spec's
 * limits.wall_ms, which the runner enforces itself and reports cleanly) to
 * get the dispatch deadline: the backend's setup and teardown (a gVisor
 * sandbox takes a few hundred ms) and the agent's grace period. Only a
 * runner that ignores its own limit reaches it. */
#define HTTP_DISPATCH_GRACE_MS 3000

struct http_dispatch_result {
	char status[16];  /* "completed" | "failed" | "cancelled" (a hook stopped it) */
	char runner[64];  /* from the summary, or "olivares-runner" */
	char backend[32]; /* the backend the runner reported (== the one requested:
	                   * anything else fails the run); the requested one when
	                   * the worker failed the run itself */
	int isolated;     /* the runner's summary as is (a jail that was in place when a
	                   * limit killed the agent is still isolated); 0 whenever
	                   * the worker failed the run itself */
	int destroyed;
	int steps_total, steps_ok, steps_error; /* the summary's; when the worker
	                                         * failed the run itself or a hook
	                                         * stopped it, those of outputs */
	/* "" when none */
	char reason[MODEL_REASON_BYTES];
	char shutdown[256];     /* the summary's shutdown note (model/runspec.h): "" when
	                         * none; set only on a completed run, never by the
	                         * worker's own failures */
	long egress_requests;   /* the summary's "egress_requests": requests the run's
	                         * gateway forwarded outside the sandbox (0 when absent) */
	int gateway_lost;       /* the summary's "gateway_lost": the run's gateway stopped
	                         * on its own before the run ended */
	char output_digest[65]; /* SHA-256 hex over the ordered outputs (see below) */
	/* The agent's log (model/runspec.h log lines): its parts joined, as
	 * far as they came, whatever ended the run (a run cut short keeps
	 * what it logged until then); log_dropped the last line's "dropped".
	 * Owned; log.data is NULL only before the run starts. */
	struct model_buf log;
	long long log_dropped;
	json_t *outputs; /* array of {"seq","key","input","output","status","error_kind",
	                         * "duration_ms"}; owned. duration_ms: the step line's
	                         * duration_us / 1000 (a real), or null when the line had
	                         * none or one that is not an integer in [0, timeout_ms *
	                         * 1000]: unknown, never made up */
};

/**
 * Run spec (an object per model/runspec.h, borrowed) on backend with the
 * runner at runner_path, killing it timeout_ms after the start (callers
 * pass the spec's limits.wall_ms + HTTP_DISPATCH_GRACE_MS). Always fills
 * *res (release with http_dispatch_result_free); returns 0 when the runner
 * produced a well-formed, consistent result (res->status may still be
 * "failed" if the runner said so), -1 when the worker had to fail the run
 * itself (spawn failure, timeout, crash, malformed or inconsistent output):
 * then res->status is "failed", isolated 0, outputs empty, and reason says
 * why.
 *
 * output_digest: SHA-256 over, for each output in seq order, the decimal
 * seq, NUL, key, NUL, output, NUL, status, NUL. Same outputs, same digest.
 *
 * platform: the gVisor platform of a gvisor run (one of
 * http_config_gvisor_platforms, fcgi/config.h), or NULL for the runner's
 * default; not passed for any other backend.
 *
 * fork_server: 1 (what the worker always passes) to start the runner
 * through the worker's runner fork server (fcgi/run/runner_server.h), which
 * is then runner_path run with --serve; 0 to posix_spawn runner_path
 * itself (tests whose fake runners are scripts, which serve nothing).
 */
int http_dispatch_run(const char *runner_path, int fork_server, const char *backend,
                      const char *platform, int timeout_ms, json_t *spec,
                      struct http_dispatch_result *res);

/**
 * What a caller follows while a run goes (the executor: it appends each
 * step's output to the store as it ends, heartbeats the run and notices a
 * cancel). Every member is optional (NULL, 0).
 */
struct http_dispatch_hooks {
	void *ctx;
	/* Each step's output object, as res->outputs will hold it (seq, key,
	 * input, output, status, error_kind, duration_ms; borrowed for the
	 * call), as soon as its line has been read and checked, in seq order:
	 * a step reported here is one of the spec's, never reported twice.
	 * Nonzero stops the run as tick does. */
	int (*step)(void *ctx, json_t *output);
	/* Called at least every tick_ms (> 0) while the runner runs (not
	 * while the fork server takes the run: up to 5 s), and after each
	 * step line taken (and its step call). Nonzero stops the run: the
	 * runner's group is killed and reaped, and the run ends with
	 * res->status "cancelled", isolated and destroyed 0, res->outputs the
	 * steps reported so far (the counts theirs), and reason "cancelled
	 * while running (N of M steps done)". */
	int (*tick)(void *ctx);
	int tick_ms;
};

/**
 * http_dispatch_run with hooks (may be NULL: then exactly
 * http_dispatch_run, which is this with NULL). Returns 0 or -1 as
 * http_dispatch_run does; a run stopped by a hook returns 1 (res->status
 * "cancelled"; the runner's group is killed and reaped as at the
 * deadline). With a step hook, whatever ends the run (a failure of the
 * worker's own included, where http_dispatch_run leaves no output),
 * res->outputs holds exactly the steps given to hooks->step, in order, and
 * output_digest is over them: a caller that stored them as they came has
 * stored the run's outputs, and stores nothing twice. The first line
 * refused ends the steps reported, not the run: the runner goes on to its
 * end, and a failure of its own (deadline, crash, output over the cap)
 * is the reason before the line's, as without hooks.
 */
int http_dispatch_run_hooked(const char *runner_path, int fork_server, const char *backend,
                             const char *platform, int timeout_ms, json_t *spec,
                             const struct http_dispatch_hooks *hooks,
                             struct http_dispatch_result *res);

/** The output digest of outputs (an array in seq order) into hex: as
 * http_dispatch_run computes output_digest (see above). */
void http_dispatch_output_digest(json_t *outputs, char hex[65]);

void http_dispatch_result_free(struct http_dispatch_result *res);

/** A backend's preflight on this host, as the runner reports it. */
struct http_preflight {
	int ok;                          /* 1: the backend can run here */
	char reason[MODEL_REASON_BYTES]; /* "" when ok, else the missing primitive */
};

/**
 * Ask the runner at runner_path for backend's preflight
 * (olivares-runner --preflight NAME [--gvisor-platform platform: as for
 * http_dispatch_run], one line {"type":"preflight",
 * "backend","ok","reason"}), spawned (posix_spawn, not the fork server: a
 * rare question, off the run path) with the same guarantees as a run:
 * empty environment, no inherited descriptor, nothing on stdin, killed at
 * timeout_ms. Returns 0 when the runner answered a well-formed line for
 * that backend (*out from it), -1 when it did not (out->ok 0, reason says
 * why, e.g. "preflight did not answer within 8000 ms").
 */
int http_dispatch_preflight(const char *runner_path, const char *backend, const char *platform,
                            int timeout_ms, struct http_preflight *out);

#endif
