/*
 * The runner's fork server (serve.h; the wire is model/forkserver.h).
 */
#include "runner/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/forkserver.h"
#include "model/runspec.h"
#include "runner/limits.h"

#define SERVE_SOCK 0
/* Children kept: one run and one spare waiting (serve.h). */
#define SERVE_CHILDREN 2
/* A spare's exit code when it could not get ready (no request taken);
 * RUNNER_SERVE_SPARE_FAILURES_MAX of them in a row and the server gives up
 * (exit 1, a message). */
#define SERVE_SPARE_FAILED 125

/* One reply; with fd >= 0 (STARTED: the runner's pidfd) attached. */
static int send_reply(int kind, pid_t pid, int value, long long cpu_us, int fd)
{
	union model_forkserver_ctl ctl;
	struct model_forkserver_reply r;
	struct iovec iov;
	struct msghdr mh;
	ssize_t w;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.pid = (int32_t)pid;
	r.value = value;
	r.cpu_us = cpu_us;
	model_forkserver_msg(&mh, &iov, &ctl, &r, sizeof(r), &fd, fd >= 0 ? 1 : 0);
	do {
		w = sendmsg(SERVE_SOCK, &mh, MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
	return w == (ssize_t)sizeof(r) ? 0 : -1;
}

void runner_close_from(int first)
{
	long max;
	long fd;

	if (close_range((unsigned)first, ~0U, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > RUNNER_CLOSE_FD_MAX)
		max = RUNNER_CLOSE_FD_MAX;
	for (fd = first; fd < max; fd++)
		close((int)fd);
}

void runner_close_from_3(void)
{
	runner_close_from(3);
}

int runner_gateway_server_fd = -1;

/* The gateway server (olivares-gateway --serve, runner/gateway_run.h):
 * its socket, its pidfd, when it started, and how many in a row lived
 * under a second. */
static int gw_sock = -1;
static int gw_pidfd = -1;
static pid_t gw_pid = -1;
static long long gw_started_ms;
static int gw_failures;
#define GATEWAY_SERVER_FAILURES_MAX 10

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

/* Start program --serve with a socket of ours as its stdin; harmless
 * when it cannot be (its runners then fork and exec their gateways). */
static void gateway_server_start(const char *program)
{
	char *const envp[] = {NULL};
	int sv[2];
	pid_t p;

	if (!program || gw_failures >= GATEWAY_SERVER_FAILURES_MAX ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return;
	p = fork();
	if (p == 0) {
		char *argv[] = {(char *)"olivares-gateway", (char *)"--serve", NULL};

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (dup2(sv[1], 0) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		execve(program, argv, envp);
		_exit(127);
	}
	close(sv[1]);
	if (p < 0 || (gw_pidfd = pidfd_open(p, 0)) < 0) {
		if (p > 0) {
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
		}
		close(sv[0]);
		gw_failures++;
		return;
	}
	gw_sock = sv[0];
	gw_pid = p;
	gw_started_ms = now_ms();
}

/* It exited: reaped, and counted when it lived under a second. */
static void gateway_server_reap(void)
{
	while (waitpid(gw_pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(gw_pidfd);
	close(gw_sock);
	gw_pidfd = gw_sock = -1;
	gw_pid = -1;
	if (now_ms() - gw_started_ms < 1000)
		gw_failures++;
	else
		gw_failures = 0;
}

/* Descriptors 0 - 2 of the spare are taken (socket, /dev/null, stderr), so
 * received ones are above them; should they not be, lift them first so
 * that the dup2() calls below cannot overwrite one another. */
static int install_stdio(int fds[3])
{
	int i;
	int fd;

	for (i = 0; i < 3; i++) {
		if (fds[i] > 2)
			continue;
		fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -1;
		fds[i] = fd;
	}
	for (i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0)
			return -1;
	}
	for (i = 0; i < 3; i++)
		close(fds[i]);
	return 0;
}

/* Split the payload into argv[1..]; -1 when it is not a list of
 * NUL-terminated strings within MODEL_FORKSERVER_ARGS_MAX. */
static int split_args(char *payload, size_t len, char **argv, int *argc)
{
	size_t at = 0;
	size_t n;
	int c = 1;

	if (len == 0 || payload[len - 1] != '\0')
		return -1;
	while (at < len) {
		if (c > MODEL_FORKSERVER_ARGS_MAX)
			return -1;
		n = strlen(payload + at);
		argv[c++] = payload + at;
		at += n + 1;
	}
	argv[c] = NULL;
	*argc = c;
	return 0;
}

/* The spare: take one request, become that run's runner. Never returns. */
static void spare(pid_t server, int (*run)(int, char **))
{
	static char payload[MODEL_FORKSERVER_REQUEST_MAX + 1];
	static char *argv[MODEL_FORKSERVER_ARGS_MAX + 2];
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	int fds[8];
	int nfds = 0;
	int argc = 0;
	int err = 0;
	int self = -1;
	ssize_t n;
	size_t k, j;
	int fd;
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		_exit(SERVE_SPARE_FAILED);
	if (getppid() != server)
		_exit(0); /* the server is gone already */
	/* The server's pidfds of its other children: not ours to hold. The
	 * gateway server's socket is, at fd 3, for this run's gateway. */
	if (gw_sock >= 0 && (gw_sock == 3 || dup3(gw_sock, 3, O_CLOEXEC) == 3)) {
		runner_close_from(4);
		runner_gateway_server_fd = 3;
	} else {
		runner_close_from_3();
	}
	iov.iov_base = payload;
	iov.iov_len = MODEL_FORKSERVER_REQUEST_MAX;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(SERVE_SOCK, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	/* 0 bytes and nothing attached: the worker hung up (the server
	 * sees it too); 0 bytes with descriptors: an empty request. */
	if (n < 0 || (n == 0 && mh.msg_controllen == 0))
		_exit(n == 0 ? 0 : SERVE_SPARE_FAILED);
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (j = 0; j < k; j++) {
			memcpy(&fd, CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
			if (nfds < (int)(sizeof(fds) / sizeof(fds[0])))
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	/* A group of its own first, request good or not: leading it is how
	 * the server tells a spare that took a request (and owes the worker
	 * an ENDED) from one that died idle. */
	if (setpgid(0, 0) != 0)
		err = errno;
	else if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		err = EMSGSIZE;
	else if (nfds != 3)
		err = EBADF;
	else if (split_args(payload, (size_t)n, argv, &argc) != 0)
		err = EINVAL;
	else if ((self = pidfd_open(getpid(), 0)) < 0)
		err = errno;
	/* With STARTED goes a pidfd of this process: the worker signals the
	 * runner through it, never by a pid that the server may have reaped
	 * (and the kernel handed out again) by the time it acts. */
	if (send_reply(MODEL_FORKSERVER_STARTED, getpid(), err, 0, self) != 0 || err) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		_exit(2);
	}
	close(self);
	if (install_stdio(fds) != 0)
		_exit(1);
	argv[0] = (char *)MODEL_RUNNER_NAME;
	exit(run(argc, argv));
}

/* Kill whatever is left of pid's run (its group, then pid itself), wait
 * for it to exit and reap it. *cpu_us gets its rusage; *took (if not
 * NULL) whether it had taken a request (it then leads its own process
 * group: a spare that died idle does not). */
static int finish(pid_t pid, int kill_first, long long *cpu_us, int *took)
{
	struct rusage ru;
	siginfo_t si;
	int status = 0;
	pid_t r;

	if (kill_first) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	/* Exited, not yet reaped: its pid, and so its group id, are still
	 * reserved, which is what makes the kill of -pid safe. */
	do {
		r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
	} while (r < 0 && errno == EINTR);
	if (took)
		*took = getpgid(pid) == pid; /* a zombie keeps its group */
	kill(-pid, SIGKILL);
	memset(&ru, 0, sizeof(ru));
	do {
		r = wait4(pid, &status, 0, &ru);
	} while (r < 0 && errno == EINTR);
	*cpu_us = (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec +
	          (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
	return status;
}

/* Signals a fault ends a process with (a crash, not a kill). */
static int crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

/* Kill every child's run and reap it: the worker is gone. */
static void finish_all(const pid_t *pid, const int *pidfd, int n)
{
	long long cpu_us;
	int i;

	for (i = 0; i < n; i++) {
		finish(pid[i], 1, &cpu_us, NULL);
		close(pidfd[i]);
	}
}

int runner_serve(int (*run)(int argc, char **argv), const char *gateway_program)
{
	struct pollfd pfd[2 + SERVE_CHILDREN];
	pid_t pid[SERVE_CHILDREN];
	int pidfd[SERVE_CHILDREN];
	long long cpu_us;
	socklen_t len = sizeof(int);
	pid_t server = getpid();
	pid_t p;
	int failures = 0;
	int crashed;
	int took;
	int n = 0;
	int type = 0;
	int status;
	int fd;
	int i;
	int r;

	if (getsockopt(SERVE_SOCK, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
	    type != SOCK_SEQPACKET) {
		fprintf(stderr,
		        "%s: %s needs a SOCK_SEQPACKET socket on stdin; it is started by "
		        "olivares-fcgi, not by hand\n",
		        MODEL_RUNNER_NAME, MODEL_FORKSERVER_ARG);
		return 2;
	}
	/* Dies with the worker; a worker already gone shows as the socket's
	 * hang-up at the first poll. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
		fprintf(stderr, "%s: fork server: PR_SET_PDEATHSIG: %s\n", MODEL_RUNNER_NAME,
		        strerror(errno));
		return 1;
	}
	signal(SIGCHLD, SIG_DFL);
	for (;;) {
		if (gw_pidfd < 0)
			gateway_server_start(gateway_program);
		/* Top up the children: the worker runs one run at a time, so
		 * with two of them one is always waiting when a request comes,
		 * even right after a run, while the server forks the next. */
		while (n < SERVE_CHILDREN) {
			p = fork();
			if (p == 0)
				spare(server, run);
			if (p < 0) {
				fprintf(stderr, "%s: fork server: fork: %s\n", MODEL_RUNNER_NAME,
				        strerror(errno));
				break;
			}
			fd = pidfd_open(p, 0);
			if (fd < 0) {
				fprintf(stderr, "%s: fork server: pidfd_open: %s\n",
				        MODEL_RUNNER_NAME, strerror(errno));
				finish(p, 1, &cpu_us, NULL);
				finish_all(pid, pidfd, n);
				return 1;
			}
			pid[n] = p;
			pidfd[n] = fd;
			n++;
		}
		pfd[0].fd = SERVE_SOCK;
		pfd[0].events = 0; /* hang-up only: requests are the spares' */
		for (i = 0; i < n; i++) {
			pfd[1 + i].fd = pidfd[i];
			pfd[1 + i].events = POLLIN;
		}
		pfd[1 + n].fd = gw_pidfd; /* ignored when -1 */
		pfd[1 + n].events = POLLIN;
		pfd[1 + n].revents = 0;
		/* Without a child (fork failing), try again after a while. */
		r = poll(pfd, (nfds_t)(2 + n), n ? -1 : RUNNER_SERVE_RETRY_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || pfd[0].revents) {
			/* The worker is gone (or poll broke): nobody is left to
			 * hear about a run. */
			finish_all(pid, pidfd, n);
			return r < 0 ? 1 : 0;
		}
		/* The gateway server exited (a gateway crashed, or it could not
		 * start): a new one at the top of the loop, for runners forked
		 * from then on; until then they exec their gateways. */
		if (gw_pidfd >= 0 && pfd[1 + n].revents)
			gateway_server_reap();
		for (i = n - 1; i >= 0; i--) {
			if (!pfd[1 + i].revents)
				continue;
			close(pidfd[i]);
			status = finish(pid[i], 0, &cpu_us, &took);
			p = pid[i];
			pid[i] = pid[n - 1];
			pidfd[i] = pidfd[n - 1];
			n--;
			if (WIFEXITED(status) && WEXITSTATUS(status) == SERVE_SPARE_FAILED) {
				/* It never got ready, so it took no request. */
				if (++failures >= RUNNER_SERVE_SPARE_FAILURES_MAX) {
					fprintf(stderr,
					        "%s: fork server: %d spares in a row could not get "
					        "ready; stopping\n",
					        MODEL_RUNNER_NAME, failures);
					finish_all(pid, pidfd, n);
					return 1;
				}
				poll(NULL, 0, RUNNER_SERVE_RETRY_MS);
				continue;
			}
			failures = 0;
			if (!took)
				continue; /* a spare that died idle: nobody waits for it */
			crashed = WIFSIGNALED(status) && crash_signal(WTERMSIG(status));
			if (crashed) {
				/* A runner died of a fault: every fork of this
				 * server has its address layout, stack canary and
				 * pointer guard, so the next run gets a server
				 * started afresh by the worker (it sees this one
				 * gone) instead of a sibling. The spares go before
				 * the report: the worker may send its next request
				 * as soon as it has it, and a spare left waiting
				 * would take it, only to be killed with the run
				 * lost. */
				finish_all(pid, pidfd, n);
				n = 0;
			}
			if (send_reply(MODEL_FORKSERVER_ENDED, p, status, cpu_us, -1) != 0) {
				finish_all(pid, pidfd, n);
				return 0; /* the worker is gone */
			}
			if (crashed)
				return 3;
		}
	}
}
