#ifndef OLIVARES_FCGI_RUN_RUNNER_SERVER_H
#define OLIVARES_FCGI_RUN_RUNNER_SERVER_H
/**
 * The worker's side of the runner fork server (model/forkserver.h is the
 * wire, runner/serve.h the server). One server per worker process, for
 * one runner path, started on first use with http_spawn_process() (an
 * empty environment, nothing inherited but the socket as its stdin,
 * /dev/null as stdout and the worker's stderr, its own process group),
 * and started again when it has died. fcgi/run/spawn.c runs the runner
 * through it (http_spawn_run_runner); nothing else needs to call these.
 *
 * Not thread-safe (the server's state is this file's): FastCGI workers
 * are single-threaded and run one request at a time.
 */
#include <sys/types.h>

/**
 * Hand a run to the server of `runner_path` (started, or restarted for a
 * new path or after it died: the old one is stopped and reaped first):
 * argv[1..] (NULL-terminated; argv[0] is not sent) become the runner's
 * arguments, in_fd, out_fd and err_fd (borrowed: the server gets copies,
 * the caller closes its own) its stdin, stdout and stderr. Waits at most
 * timeout_ms for the runner's STARTED reply (and at most 5 s: a server
 * that stays silent longer lost the request or hangs, and is replaced
 * once).
 *
 * Returns 0 with *pid, the runner's pid (for messages and for its process
 * group: the server kills the group -pid itself before it reaps the
 * runner), *pidfd, a pidfd of the runner, sent by the runner itself
 * (owned: close it; signal the runner through it only, as its pid may be
 * reaped and reused once it has exited), and *sock, a descriptor that
 * becomes readable when its end is reported (borrowed: poll it, never
 * read or close it). A runner that died before it could say STARTED
 * (killed as it took the request) is returned at once too, with *pidfd
 * -1: its end is already known, and the first http_runner_server_wait()
 * for it returns it without waiting. Returns an errno value when no run was started:
 * E2BIG (arguments over the request limits), the value the server's
 * spare refused the request with (EBADF, EINVAL, EMSGSIZE: malformed; or
 * the errno of its setpgid or pidfd_open), ETIMEDOUT, EPIPE (the server
 * died twice in a row), EPROTO (it broke the wire), or the error of
 * socketpair, posix_spawn or sendmsg.
 */
int http_runner_server_start(const char *runner_path, char *const argv[], int in_fd, int out_fd,
                             int err_fd, int timeout_ms, pid_t *pid, int *pidfd, int *sock);

/**
 * The end of runner `pid` (one http_runner_server_start() returned):
 * replies about other pids (spares that died idle) are skipped. Waits at
 * most timeout_ms for it (0: reads only what is already there; -1: no
 * limit).
 *
 * Returns 0 with *status (its wait status) and *cpu_us (user + system CPU
 * of it and every process it reaped, microseconds; may be NULL), 1 when
 * the end has not been reported within timeout_ms, -1 with errno when
 * the server died first (its runner died with it: parent-death signal);
 * the dead server is then reaped and forgotten.
 */
int http_runner_server_wait(pid_t pid, int timeout_ms, int *status, long long *cpu_us);

/**
 * Stop the server, if there is one: close the socket (it kills the runner
 * it may have, reaps it and exits), give it 2 s to exit (then SIGKILL: a
 * program that is no fork server may ignore the socket) and reap it. For
 * tests, for a change of runner path and after a broken exchange; a
 * worker that exits needs no call.
 */
void http_runner_server_stop(void);

/** The server's pid, or -1 when none is running (for tests). */
pid_t http_runner_server_pid(void);

#endif
