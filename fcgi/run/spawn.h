#ifndef OLIVARES_FCGI_RUN_SPAWN_H
#define OLIVARES_FCGI_RUN_SPAWN_H
/**
 * One child process, run to its end under a deadline: the mechanism shared
 * by the runner dispatch (fcgi/run/dispatch.c) and the external scorer
 * (fcgi/scorer/scorer_exec.c). The callers word every reason themselves.
 *
 * The runner is started through its fork server (http_spawn_run_runner,
 * fcgi/run/runner_server.h): a fork of a runner started once, with the same
 * descriptors, environment, process group and signal state as below, and
 * the same kill, reap and reporting. Any other program is started with
 * posix_spawn (http_spawn_run).
 *
 * The child is started with posix_spawn and gets: argv as given (argv[0]
 * is the caller's, path is what is executed: no PATH search); an empty
 * environment (envp = {NULL}); stdin and stdout on pipes; stderr on a pipe
 * when the caller keeps it, else /dev/null; every other descriptor closed
 * before exec (addclosefrom_np, glibc 2.34: the worker's FastCGI socket,
 * database connection, log file never leak); its own process group (so a
 * kill of the group reaches anything it started); every signal at its
 * default action and none blocked.
 *
 * Not thread-safe: for the duration of a call SIGPIPE is ignored (a child
 * that stops reading its stdin must not kill the worker) and SIGCHLD is at
 * its default (no inherited handler or SIG_IGN may reap the child behind
 * our back); both are restored before returning. FastCGI workers are
 * single-threaded.
 */
#include <stddef.h>
#include <sys/types.h>

#include "model/buf.h"

/** How the exchange with the child ended. */
enum http_spawn_end {
	HTTP_SPAWN_DONE,     /* it exited and its pipes reached EOF */
	HTTP_SPAWN_TIMEOUT,  /* the deadline passed first (group killed) */
	HTTP_SPAWN_OVER_CAP, /* stdout crossed out->max (group killed) */
	HTTP_SPAWN_ERROR,    /* poll failed, errno in sys_errno (group killed) */
	HTTP_SPAWN_STOPPED   /* a watch callback asked to stop (group killed) */
};

/**
 * What a caller follows while the child runs (every member optional: NULL,
 * 0). Both callbacks run inside the call, between polls; a nonzero return
 * stops the child as the deadline does (its group killed, the child
 * reaped) and the call ends HTTP_SPAWN_STOPPED.
 */
struct http_spawn_watch {
	void *ctx;
	/* After new bytes of stdout were appended to out (all of stdout so
	 * far, borrowed for the call: read it, never change it); the bytes
	 * of a read that would cross the cap are not appended, so never
	 * told. */
	int (*out)(void *ctx, const struct model_buf *out);
	/* At least every tick_ms (> 0) from the start of the exchange until
	 * the child has exited and its pipes are at EOF (not while a fork
	 * server is still being started or is taking the run). */
	int (*tick)(void *ctx);
	int tick_ms;
};

/** What http_spawn_run reports. */
struct http_spawn_result {
	enum http_spawn_end end;
	int sys_errno;  /* HTTP_SPAWN_ERROR: errno of poll */
	pid_t reaped;   /* waitpid's answer (the child's pid), -1 when it failed */
	int reap_errno; /* reaped < 0: errno of waitpid */
	int status;     /* wait status when reaped, else 0 */
	/* When nothing could be started (http_spawn_run returned -1): the step
	 * that failed, "pipe", "fcntl" or "spawn" (posix_spawn, including an
	 * exec failure), and its errno value. */
	const char *start_step;
	int start_errno;
};

/**
 * Spawn `path` with argv (NULL-terminated, borrowed), write input_len
 * bytes of input to its stdin then close it (input_len 0: closed at once),
 * and collect at the same time (writing first and reading after could
 * deadlock on a large input) its stdout into out and, when err is not
 * NULL, the first err->max bytes of its stderr into err (the rest is read
 * and dropped). out and err are initialised by the caller, whose caps
 * apply: stdout over out->max ends the call with HTTP_SPAWN_OVER_CAP.
 * Ends when the child has exited and its pipes are at EOF (after its exit
 * the rest of its group is killed: it could only hold them open), or when
 * timeout_ms (from the start of the call) pass, or when a callback of
 * watch (NULL: none) asks to stop. Unless it ended DONE the child's group
 * is killed with SIGKILL. The child is always reaped before return.
 *
 * Returns 0 with *res filled (end, and the wait status), or -1 when nothing
 * could be started (res->start_step, res->start_errno; no child, no
 * descriptor left).
 */
int http_spawn_run(const char *path, char *const argv[], const char *input, size_t input_len,
                   int timeout_ms, struct model_buf *out, struct model_buf *err,
                   const struct http_spawn_watch *watch, struct http_spawn_result *res);

/**
 * http_spawn_run for olivares-runner at runner_path, through the worker's
 * runner fork server (fcgi/run/runner_server.h, started or restarted as
 * needed): argv[1..] are the runner's arguments (argv[0] is not sent; the
 * runner calls itself "olivares-runner"). Everything else is as
 * http_spawn_run: same caps, deadline (which includes waiting for the
 * server), watch, kill of the group (the runner through its pidfd, its group
 * while it lives; the server kills the group again before it reaps it),
 * and the wait status the runner ended with (its server reaps it and
 * reports it). A server that has not reported a runner 5 s after its
 * SIGKILL, or 5 s after the runner's pidfd showed it gone, is stopped (2 s
 * grace, then SIGKILL): a broken server can add up to 7 s to the
 * deadline, never hold the worker; in the second case the run ends
 * before its deadline with its status lost (res->reaped -1, reap_errno
 * ETIMEDOUT). res->start_step "spawn" covers a
 * server that could not be started or did not take the run
 * (runner_server.h lists the errno values). When the server dies during
 * the run (its runner dies with it) the status is lost: res->reaped -1,
 * res->reap_errno set.
 */
int http_spawn_run_runner(const char *runner_path, char *const argv[], const char *input,
                          size_t input_len, int timeout_ms, struct model_buf *out,
                          struct model_buf *err, const struct http_spawn_watch *watch,
                          struct http_spawn_result *res);

/**
 * Start `path` with posix_spawn: argv as given (no PATH search), an empty
 * environment, in_r / out_w / err_w dup2'ed onto 0 / 1 / 2 (err_w < 0:
 * /dev/null; any of them may sit on 0..2), every other descriptor closed,
 * its own process group, every signal at its default action and none
 * blocked. The descriptors are borrowed. Returns 0 with *pid (the
 * caller's child, to reap), or an errno value (nothing started, *pid -1).
 */
int http_spawn_process(const char *path, char *const argv[], int in_r, int out_w, int err_w,
                       pid_t *pid);

#endif
