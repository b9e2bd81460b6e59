/*
 * The worker's side of the runner fork server (runner_server.h).
 */
#include "fcgi/run/runner_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/log.h"
#include "fcgi/run/spawn.h"
#include "model/forkserver.h"

/* How long a stopped server may take to kill its runner and exit (ms). */
#define RUNNER_SERVER_STOP_GRACE_MS 2000
/* How long a request may wait for its STARTED (ms): a waiting spare
 * answers within microseconds; a new server within a few ms. */
#define RUNNER_SERVER_STARTED_MS 5000

/* How many refused requests' ends are remembered (refusals are of
 * malformed requests: none in normal operation). */
#define RUNNER_SERVER_REFUSED_MAX 4

static struct {
	pid_t pid;
	int sock;
	char path[4096];
	/* The end of a runner that died before its STARTED (read while the
	 * request waited for it), kept for http_runner_server_wait; pid -1
	 * when none. */
	struct {
		pid_t pid;
		int status;
		long long cpu_us;
	} early;
	/* Spares that refused a request: their ENDED may follow, and is
	 * theirs, not the next request's; 0 in unused slots. */
	pid_t refused[RUNNER_SERVER_REFUSED_MAX];
} srv = {-1, -1, "", {-1, 0, 0}, {0}};

/* Was pid a spare that refused a request (forgotten once its end is
 * read)? */
static int refused_end(pid_t pid)
{
	int i;

	for (i = 0; i < RUNNER_SERVER_REFUSED_MAX; i++) {
		if (srv.refused[i] == pid && pid > 0) {
			srv.refused[i] = 0;
			return 1;
		}
	}
	return 0;
}

static void refused_add(pid_t pid)
{
	int i;

	for (i = 0; i < RUNNER_SERVER_REFUSED_MAX; i++) {
		if (srv.refused[i] == 0) {
			srv.refused[i] = pid;
			return;
		}
	}
	/* full: the oldest goes (its end is most likely read already) */
	memmove(srv.refused, srv.refused + 1, sizeof(srv.refused) - sizeof(srv.refused[0]));
	srv.refused[RUNNER_SERVER_REFUSED_MAX - 1] = pid;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void http_runner_server_stop(void)
{
	struct pollfd pfd;
	pid_t r;
	int p;

	/* Its end of the socket closed, the server kills the runner it may
	 * have, reaps it and exits. A program that is no fork server (a
	 * wrong [runner] path) may not: it gets SIGKILL after a grace. */
	if (srv.sock >= 0)
		close(srv.sock);
	srv.sock = -1;
	if (srv.pid > 0) {
		pfd.fd = pidfd_open(srv.pid, 0);
		pfd.events = POLLIN;
		p = 0;
		if (pfd.fd >= 0) {
			do {
				p = poll(&pfd, 1, RUNNER_SERVER_STOP_GRACE_MS);
			} while (p < 0 && errno == EINTR);
			close(pfd.fd);
		}
		if (p <= 0) {
			/* its process group too (its idle spare, or what a
			 * wrong program started); not reaped yet, so the
			 * group id is still its own */
			kill(-srv.pid, SIGKILL);
			kill(srv.pid, SIGKILL);
		}
		do {
			r = waitpid(srv.pid, NULL, 0);
		} while (r < 0 && errno == EINTR);
	}
	srv.pid = -1;
	srv.path[0] = '\0';
	srv.early.pid = -1;
	memset(srv.refused, 0, sizeof(srv.refused));
}

pid_t http_runner_server_pid(void)
{
	return srv.pid;
}

static int start_server(const char *path)
{
	char *argv[3];
	int sv[2];
	int devnull;
	int e;

	if (strlen(path) >= sizeof(srv.path))
		return ENAMETOOLONG;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return errno;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0) {
		e = errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	argv[0] = (char *)path;
	argv[1] = (char *)MODEL_FORKSERVER_ARG;
	argv[2] = NULL;
	/* stderr: the worker's own (its log), if it has one. */
	e = http_spawn_process(path, argv, sv[1], devnull, fcntl(2, F_GETFD) >= 0 ? 2 : -1,
	                       &srv.pid);
	close(sv[1]);
	close(devnull);
	if (e) {
		close(sv[0]);
		srv.pid = -1;
		return e;
	}
	srv.sock = sv[0];
	memcpy(srv.path, path, strlen(path) + 1);
	return 0;
}

/* One reply, waiting at most timeout_ms (-1: no limit); *fd gets the
 * descriptor that came with it (STARTED: the runner's pidfd), else -1.
 * Returns 0, 1 on timeout, or an errno value when the server is gone or
 * broke the wire. */
static int read_reply(struct model_forkserver_reply *r, int timeout_ms, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct pollfd pfd;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t n;
	int p;

	*fd = -1;
	pfd.fd = srv.sock;
	pfd.events = POLLIN;
	do {
		p = poll(&pfd, 1, timeout_ms);
	} while (p < 0 && errno == EINTR);
	if (p < 0)
		return errno;
	if (p == 0)
		return 1;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = r;
	iov.iov_len = sizeof(*r);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(srv.sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return EPIPE;
	if (n < 0)
		return errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)) && *fd < 0)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	}
	if (n != (ssize_t)sizeof(*r) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (r->kind != MODEL_FORKSERVER_STARTED && r->kind != MODEL_FORKSERVER_ENDED) ||
	    (r->kind == MODEL_FORKSERVER_STARTED && r->value == 0 && *fd < 0)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return EPROTO;
	}
	return 0;
}

/* Send the request; then the STARTED reply, waited for until deadline but
 * at most RUNNER_SERVER_STARTED_MS. 0, or an errno value; *dead is set
 * when the server turned out to be gone or silent (worth one restart),
 * *refused when it answered the request with an error. */
static int request(const char *payload, size_t len, const int fds[3], int64_t deadline, pid_t *pid,
                   int *pidfd, int *dead, int *refused)
{
	union model_forkserver_ctl ctl;
	struct model_forkserver_reply r;
	struct iovec iov;
	struct msghdr mh;
	int64_t started_by = now_ms() + RUNNER_SERVER_STARTED_MS;
	int64_t left;
	ssize_t w;
	int fd;
	int e;

	*dead = *refused = 0;
	model_forkserver_msg(&mh, &iov, &ctl, payload, len, fds, 3);
	do {
		w = sendmsg(srv.sock, &mh, MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
	if (w < 0) {
		e = errno;
		*dead = e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ECONNREFUSED;
		return e;
	}
	for (;;) {
		left = (deadline < started_by ? deadline : started_by) - now_ms();
		if (left <= 0) {
			/* A waiting spare answers at once: a silent server
			 * lost the request (a spare killed with it) or hangs. */
			*dead = now_ms() < deadline;
			return ETIMEDOUT;
		}
		e = read_reply(&r, left > 1000000 ? 1000000 : (int)left, &fd);
		if (e == 1)
			continue;
		if (e) {
			*dead = e == EPIPE || e == ECONNRESET;
			return e;
		}
		if (r.kind == MODEL_FORKSERVER_ENDED) {
			if (refused_end((pid_t)r.pid))
				continue; /* a spare that refused an earlier request */
			/* The server reports the end only of a spare that took
			 * a request, and every earlier run's end has been read:
			 * this is the spare that took ours, dead before its
			 * STARTED (killed as it took it). Its end is the run's,
			 * known now: waiting for a STARTED that cannot come
			 * would hold the worker for RUNNER_SERVER_STARTED_MS. */
			srv.early.pid = (pid_t)r.pid;
			srv.early.status = r.value;
			srv.early.cpu_us = r.cpu_us;
			*pid = (pid_t)r.pid;
			*pidfd = -1;
			return 0;
		}
		if (r.value != 0) {
			if (fd >= 0)
				close(fd);
			refused_add((pid_t)r.pid);
			*refused = 1;
			return r.value;
		}
		*pid = (pid_t)r.pid;
		*pidfd = fd;
		return 0;
	}
}

int http_runner_server_start(const char *runner_path, char *const argv[], int in_fd, int out_fd,
                             int err_fd, int timeout_ms, pid_t *pid, int *pidfd, int *sock)
{
	char payload[MODEL_FORKSERVER_REQUEST_MAX];
	int fds[3];
	int64_t deadline = now_ms() + timeout_ms;
	size_t len = 0;
	size_t n;
	int attempt;
	int dead, refused;
	int e = 0;
	int i;

	*pid = -1;
	*pidfd = -1;
	*sock = -1;
	for (i = 1; argv[i]; i++) {
		n = strlen(argv[i]) + 1;
		if (i > MODEL_FORKSERVER_ARGS_MAX || n > sizeof(payload) - len)
			return E2BIG;
		memcpy(payload + len, argv[i], n);
		len += n;
	}
	if (len == 0)
		return EINVAL;
	fds[0] = in_fd;
	fds[1] = out_fd;
	fds[2] = err_fd;
	for (attempt = 0; attempt < 2; attempt++) {
		if (srv.pid > 0 && strcmp(srv.path, runner_path) != 0)
			http_runner_server_stop();
		if (srv.pid <= 0) {
			e = start_server(runner_path);
			if (e)
				return e;
		}
		e = request(payload, len, fds, deadline, pid, pidfd, &dead, &refused);
		if (e == 0) {
			*sock = srv.sock;
			return 0;
		}
		if (refused)
			return e; /* the server itself is fine */
		/* A dead server (or one that broke the wire) is reaped; a
		 * dead one is worth one new start, the rest is an error. */
		if (dead && attempt == 0)
			olv_log(OLV_LOG_WARNING,
			        "runner fork server %ld gone or silent (%s); starting another",
			        (long)srv.pid, strerror(e));
		http_runner_server_stop();
		if (!dead)
			break;
	}
	return e;
}

int http_runner_server_wait(pid_t pid, int timeout_ms, int *status, long long *cpu_us)
{
	struct model_forkserver_reply r;
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int64_t left;
	int fd;
	int e;

	if (srv.early.pid > 0 && srv.early.pid == pid) {
		srv.early.pid = -1;
		*status = srv.early.status;
		if (cpu_us)
			*cpu_us = srv.early.cpu_us;
		return 0;
	}
	if (srv.sock < 0) {
		errno = EPIPE;
		return -1;
	}
	for (;;) {
		left = deadline - now_ms();
		if (timeout_ms < 0)
			left = -1;
		else if (left < 0)
			left = 0;
		e = read_reply(&r, left > 1000000 ? 1000000 : (int)left, &fd);
		if (fd >= 0)
			close(fd); /* only a STARTED carries one: not ours */
		if (e == 1 && (timeout_ms < 0 || now_ms() < deadline))
			continue;
		if (e == 1)
			return 1;
		if (e) {
			http_runner_server_stop();
			errno = e;
			return -1;
		}
		if (r.kind == MODEL_FORKSERVER_ENDED && r.pid != (int32_t)pid)
			refused_end((pid_t)r.pid);
		if (r.kind == MODEL_FORKSERVER_ENDED && r.pid == (int32_t)pid) {
			*status = r.value;
			if (cpu_us)
				*cpu_us = r.cpu_us;
			return 0;
		}
	}
}
