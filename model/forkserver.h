#ifndef OLIVARES_MODEL_FORKSERVER_H
#define OLIVARES_MODEL_FORKSERVER_H
/**
 * The wire between a FastCGI worker and its runner fork server
 * (`olivares-runner --serve`, runner/serve.h; the worker's side is
 * fcgi/run/runner_server.h). Header only: layouts and limits, no I/O.
 *
 * Why it exists: on the 2-CPU VMs we run on, starting the runner with
 * posix_spawn + execve costs about as much as the whole bare spawn of
 * /bin/true that bench/isolation compares against (a static runner's
 * exec, page faults and glibc's start-up). The server is one runner
 * process started once per worker; it keeps copies of itself forked in
 * advance ("spares"), and a run is handed to a spare. Each run still
 * gets its own process, which ends with the run; nothing of one run is in
 * the next one's process (spares are forked from the server, which never
 * runs a spec).
 *
 * The socket: AF_UNIX, SOCK_SEQPACKET (one message per send, never
 * merged or split), the server's fd 0. The worker is its only peer.
 *
 * Request (worker -> spare): the runner's arguments after argv[0], each
 * NUL-terminated, concatenated (e.g. "--backend\0namespaces\0"), at most
 * MODEL_FORKSERVER_ARGS_MAX arguments and MODEL_FORKSERVER_REQUEST_MAX
 * bytes; SCM_RIGHTS with exactly three descriptors, which become the
 * runner's stdin, stdout and stderr in that order.
 *
 * Replies (runner side -> worker), each one struct model_forkserver_reply:
 *   STARTED: sent by the spare that took the request, after it has put
 *     itself in a process group of its own (pgid = pid, done first for
 *     any request, good or not) and before it runs anything: pid is the
 *     runner's, value is 0 with SCM_RIGHTS carrying one pidfd of the
 *     runner (pidfd_open of itself), or an errno value and no descriptor
 *     when the request was malformed (EBADF: not three descriptors;
 *     EMSGSIZE: payload or control data cut short; EINVAL: arguments not
 *     as above) or the spare could not set itself up (the errno of
 *     setpgid or pidfd_open); it then exits 2 without running anything.
 *   ENDED: sent by the server once that process has exited, after it
 *     killed what was left in its process group and reaped it: value is
 *     the wait status, cpu_us its user + system CPU time and that of
 *     every process it reaped (wait4's rusage). The runner is reaped
 *     before ENDED is sent, so the worker signals it through the pidfd
 *     only, and its group -pid only while that pidfd shows it alive (the
 *     group id is then the runner's).
 * A spare that dies idle (it never led a group of its own) gets no ENDED
 * and no restart of the server; the worker skips any reply whose pid is
 * not the one it waits for all the same.
 * When the worker closes its end the server kills the runner it may have
 * running (and its group), reaps it and exits; when the server dies, its
 * runner gets SIGKILL (parent-death signal). After a runner (a spare
 * that had taken a request) that died of a fault (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGABRT, SIGTRAP, SIGSYS) the server kills its spares, then sends
 * its ENDED and exits 3, so that the worker's next run gets
 * a server started afresh (every fork shares the server's address layout,
 * stack canary and pointer guard).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define MODEL_FORKSERVER_ARG "--serve"
/** Longest request payload, bytes (arguments and their NULs). */
#define MODEL_FORKSERVER_REQUEST_MAX 4096
/** Most arguments in a request (after argv[0]). */
#define MODEL_FORKSERVER_ARGS_MAX 16

enum model_forkserver_kind { MODEL_FORKSERVER_STARTED = 1, MODEL_FORKSERVER_ENDED = 2 };

/** One reply; fixed layout, host byte order (both ends are on one host). */
struct model_forkserver_reply {
	int32_t kind;   /* enum model_forkserver_kind */
	int32_t pid;    /* the runner's pid (in the server's pid namespace) */
	int32_t value;  /* STARTED: 0 or errno; ENDED: wait status */
	int32_t pad;    /* 0 */
	int64_t cpu_us; /* ENDED: user + system CPU, microseconds; else 0 */
};

/** Control-data room for the most descriptors a message carries (3). */
union model_forkserver_ctl {
	char buf[CMSG_SPACE(3 * sizeof(int))];
	struct cmsghdr align;
};

/**
 * Fill *mh to send the len bytes at data with nfds (0 to 3) descriptors
 * from fds as SCM_RIGHTS. iov and ctl are the caller's storage and must
 * outlive the send; nothing is sent here (no I/O).
 */
static inline void model_forkserver_msg(struct msghdr *mh, struct iovec *iov,
                                        union model_forkserver_ctl *ctl, const void *data,
                                        size_t len, const int *fds, int nfds)
{
	struct cmsghdr *cm;

	memset(mh, 0, sizeof(*mh));
	memset(ctl, 0, sizeof(*ctl));
	iov->iov_base = (void *)data;
	iov->iov_len = len;
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	if (nfds <= 0)
		return;
	mh->msg_control = ctl->buf;
	mh->msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
}

#endif
