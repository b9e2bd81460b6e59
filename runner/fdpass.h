#ifndef OLIVARES_RUNNER_FDPASS_H
#define OLIVARES_RUNNER_FDPASS_H
/**
 * One descriptor handed between processes over a unix socket: one message
 * of one byte that carries it (SCM_RIGHTS). The jail's pid 1 hands the
 * runner the jail's gateway socket so (runner/jail.c), and the runner
 * hands it on to the run's gateway (runner/gateway_run.h).
 */

/**
 * Send fd over the unix socket sock, never raising SIGPIPE. fd stays the
 * caller's (the receiver gets a copy). Returns 0, or -1 with errno.
 */
int runner_fd_send(int sock, int fd);

/**
 * Receive one descriptor from the unix socket sock into *fd (close-on-
 * exec, the caller's to close); flags are recvmsg's (MSG_DONTWAIT, ...).
 * Returns 1 with *fd, 0 at end of file, or -1 with errno (EBADMSG when the
 * message brought no single descriptor).
 */
int runner_fd_recv(int sock, int flags, int *fd);

#endif
