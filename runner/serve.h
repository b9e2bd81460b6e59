#ifndef OLIVARES_RUNNER_SERVE_H
#define OLIVARES_RUNNER_SERVE_H
/**
 * The runner's fork server: `olivares-runner --serve`, started by a
 * FastCGI worker (fcgi/run/runner_server.h) with a SOCK_SEQPACKET socket as
 * its stdin. The wire is model/forkserver.h.
 *
 * The server keeps two copies of itself forked in advance (spares),
 * blocked on the socket; the worker runs one run at a time, so while one
 * runs the other waits, and a run that follows another does not wait for
 * a fork. A spare first closes every descriptor above stderr (the
 * server's pidfds of its other children). The spare that receives a
 * request puts itself in a process group of its own, replies STARTED,
 * moves the three descriptors it was handed to stdin, stdout and stderr
 * and calls `run` with the request's arguments, exactly as a freshly
 * executed runner's main() would be called; it exits with run's return
 * value. The server waits for it to exit, kills what is left in its
 * group, reaps it, replies ENDED and forks a spare in its place. The
 * server itself never reads a spec, never runs a backend and holds no
 * descriptor but the socket, /dev/null, stderr, its children's pidfds and
 * its gateway server's socket and pidfd (runner/gateway_run.h: each spare
 * keeps that socket at fd 3, close-on-exec, for its run's gateway).
 *
 * Every process it forks has SIGKILL as its parent-death signal: a runner
 * does not outlive the server. The server has the same signal for the
 * worker, and exits when the worker's end of the socket closes, after
 * killing and reaping its children (and their groups); when the worker
 * dies, the server is killed at once, and its runner with it, and what
 * that runner left in its own process group is not killed by anyone
 * (the jail of an OS-level backend still dies with the runner, through
 * its guard).
 *
 * A spare that cannot get ready (PR_SET_PDEATHSIG fails) exits 125 and
 * is replaced after 100 ms; after 10 in a row the server gives up (exit
 * 1, a message on stderr). After a runner that died of a fault the server
 * kills its spares, then reports it and exits 3 (model/forkserver.h says
 * why; no spare is left to take the worker's next request).
 */

/**
 * Serve requests on fd 0 until the worker hangs up. `run` is the runner's
 * ordinary entry point (argc, argv with argv[0] "olivares-runner"); it is
 * called only in forked runners, never in the server. gateway_program
 * (olivares-gateway beside the runner, or NULL) is started with --serve
 * as the gateway server of this server's runners (runner/gateway_run.h),
 * and started again when it exits (at most ten times in a row after one
 * that lived under a second); each spare holds its socket at fd 3.
 *
 * Returns (in the server only) 0 when the worker closed its end, 2 when
 * fd 0 is not a SOCK_SEQPACKET socket (a message on stderr: the server is
 * not meant to be started by hand), 3 after a runner died of a fault, 1
 * on a failure that stops it (a message on stderr). Forked runners never
 * return: they exit.
 */
int runner_serve(int (*run)(int argc, char **argv), const char *gateway_program);

/**
 * Close every descriptor from 3 up: close_range(2), or one by one up to
 * the open-files limit (at most 65536) where the kernel or a container's
 * seccomp profile has no close_range. Used by runner/main.c first thing
 * in every run and by each spare of the fork server. No errors.
 */
void runner_close_from_3(void);

/**
 * The gateway server's socket (runner/gateway_run.h), set by a spare of
 * the fork server before it runs, or -1: a runner without one forks and
 * execs its gateway.
 */
extern int runner_gateway_server_fd;

/** Close every descriptor from first up, as runner_close_from_3. */
void runner_close_from(int first);

#endif
