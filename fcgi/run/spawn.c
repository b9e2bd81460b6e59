/*
 * One child process run to its end under a deadline (spawn.h): the spawn,
 * the feeding of its stdin and the reading of its stdout/stderr, the kill
 * of its group and the reaping, for fcgi/run/dispatch.c and fcgi/scorer/scorer_exec.c.
 */
#include "fcgi/run/spawn.h"
#include "fcgi/run/runner_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Without a pidfd, how often to look for the child's exit (ms). */
#define SPAWN_EXIT_POLL_MS 5
/* How long the runner's fork server may take to report a runner that got
 * SIGKILL (ms); SIGKILL ends a process at once, so only a broken server
 * takes longer. */
#define SPAWN_SERVED_REAP_MS 5000

struct child {
	pid_t pid;
	int in;     /* write end of its stdin, -1 once closed */
	int out;    /* read end of its stdout, -1 at EOF */
	int err;    /* read end of its stderr, -1 at EOF or when not kept */
	int pidfd;  /* readable when it exits; -1 if unsupported */
	int served; /* started by the runner's fork server, not by us */
	int srv;    /* served: readable when its end is reported (borrowed
	             * from runner_server.c); -1 once the server is gone */
	int ended;  /* served: its end has been read (end_status, or lost) */
	int end_status;
	int end_errno; /* served, ended: 0, or why the end was lost */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Move *fd above 2 (close-on-exec), so the child's dup2 onto 0..2 can never
 * clobber another end that happened to sit there (a worker may run with
 * 0..2 closed). */
static int lift_fd(int *fd)
{
	int nfd;

	if (*fd < 0 || *fd > 2)
		return 0;
	nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

/*
 * The posix_spawn of http_spawn_process (spawn.h), once no end sits on
 * 0..2. glibc implements it with clone(CLONE_VM | CLONE_VFORK): no
 * copy of the worker's page tables (a fork did copy them, for a process
 * that execs at once), and an exec failure comes back as the return value.
 * The guarantees of the fork + exec it replaces, all applied in the child
 * before exec:
 *   - fds: the pipe ends dup2'ed onto 0/1/2 (2: /dev/null when err_w < 0),
 *     everything from 3 up closed (addclosefrom_np, glibc 2.34);
 *   - its own process group (SETPGROUP 0);
 *   - every signal back to its default action (SETSIGDEF over a full set:
 *     SIG_IGN dispositions such as the worker's SIGPIPE survive exec
 *     otherwise) and an empty signal mask (SETSIGMASK). One difference
 *     with the fork + exec it replaces: glibc leaves its two internal
 *     signals (32 and 33, which sigfillset leaves out and no glibc program
 *     can handle) ignored in the child; the worker only ever stops a child
 *     with SIGKILL, so nothing depends on them;
 *   - an empty environment (envp = {NULL}).
 * Returns 0 with *pid set, or an errno value (nothing started).
 */
static int spawn_lifted(const char *path, char *const argv[], char *const envp[], int in_r,
                        int out_w, int err_w, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	int rc;

	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return rc;
	rc = posix_spawnattr_init(&at);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	sigfillset(&all);
	sigemptyset(&none);
	rc = posix_spawn_file_actions_adddup2(&fa, in_r, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, out_w, 1);
	if (!rc && err_w >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, err_w, 2);
	else if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
		                                       POSIX_SPAWN_SETSIGMASK);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &all);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (!rc)
		rc = posix_spawn(pid, path, &fa, &at, argv, envp);
	if (rc)
		*pid = -1;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

int http_spawn_process(const char *path, char *const argv[], int in_r, int out_w, int err_w,
                       pid_t *pid)
{
	static char *const envp[] = {NULL};
	int lifted[3] = {-1, -1, -1};
	int *ends[3];
	int rc = 0;
	int i;

	*pid = -1;
	ends[0] = &in_r;
	ends[1] = &out_w;
	ends[2] = &err_w;
	for (i = 0; i < 3 && !rc; i++) {
		if (*ends[i] < 0 || *ends[i] > 2)
			continue;
		lifted[i] = fcntl(*ends[i], F_DUPFD_CLOEXEC, 3);
		if (lifted[i] < 0)
			rc = errno;
		else
			*ends[i] = lifted[i];
	}
	if (!rc)
		rc = spawn_lifted(path, argv, envp, in_r, out_w, err_w, pid);
	for (i = 0; i < 3; i++)
		close_fd(&lifted[i]);
	return rc;
}

/* Is the process of this pidfd still running? */
static int runner_alive(int pidfd)
{
	struct pollfd pfd;

	if (pidfd < 0)
		return 0;
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	return poll(&pfd, 1, 0) == 0;
}

/* Kill the child's group (and the child, should it have left it) and reap
 * it; *status receives the wait status (0 when it was lost). A served
 * runner is reaped by its server, which reports its end (until then its
 * pid and group are reserved, as a child's zombie's are). */
static pid_t kill_reap(struct child *c, int *status, int *reap_errno)
{
	long long cpu_us;
	pid_t r;

	*status = 0;
	if (c->served && c->ended) {
		*status = c->end_status;
		if (c->end_errno && reap_errno)
			*reap_errno = c->end_errno;
		return c->end_errno ? -1 : c->pid;
	}
	if (c->served) {
		/* The runner through its pidfd: the server may have reaped it,
		 * and the kernel handed its pid out again, by now. Its group
		 * while it lives (the group id is then its own): the server
		 * kills the group too, before it reaps it, unless it is broken.
		 * A server that does not report a SIGKILLed runner within the
		 * bound is broken (stopped, hung): stopped in turn, so the
		 * worker is never held by it; the status is then lost. */
		if (runner_alive(c->pidfd))
			kill(-c->pid, SIGKILL);
		pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		r = http_runner_server_wait(c->pid, SPAWN_SERVED_REAP_MS, status, &cpu_us);
		if (r == 1) {
			http_runner_server_stop();
			errno = ETIMEDOUT;
		}
		if (r != 0) {
			if (reap_errno)
				*reap_errno = errno;
			*status = 0;
			return -1;
		}
		return c->pid;
	}
	kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	do {
		r = waitpid(c->pid, status, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0 && reap_errno)
		*reap_errno = errno;
	return r;
}

/* Start the child (stderr on a pipe when keep_err), through the runner's
 * fork server when served. Returns 0, or -1 with res->start_step and
 * res->start_errno (nothing left open or running). */
static int start(const char *path, char *const argv[], int served, int keep_err, int timeout_ms,
                 struct child *c, struct http_spawn_result *res)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
	int status;
	int e;
	int rc = -1;

	c->pid = -1;
	c->in = c->out = c->err = c->pidfd = c->srv = -1;
	c->ended = c->end_status = c->end_errno = 0;
	c->served = served;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || (keep_err && pipe2(err, O_CLOEXEC))) {
		res->start_step = "pipe";
		res->start_errno = errno;
		goto out;
	}
	if (lift_fd(&in[0]) || lift_fd(&out[1]) || lift_fd(&err[1])) {
		res->start_step = "fcntl";
		res->start_errno = errno;
		goto out;
	}
	if (served && !keep_err) {
		/* The server needs a descriptor for every stdio slot. */
		err[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (err[1] < 0) {
			res->start_step = "open /dev/null";
			res->start_errno = errno;
			goto out;
		}
	}
	if (served)
		e = http_runner_server_start(path, argv, in[0], out[1], err[1], timeout_ms, &c->pid,
		                             &c->pidfd, &c->srv);
	else
		e = http_spawn_process(path, argv, in[0], out[1], err[1], &c->pid);
	if (e) {
		res->start_step = "spawn";
		res->start_errno = e;
		c->pid = -1;
		goto out;
	}
	c->in = in[1];
	c->out = out[0];
	c->err = err[0];
	in[1] = out[0] = err[0] = -1;
	if (set_nonblock(c->in) || set_nonblock(c->out) || (c->err >= 0 && set_nonblock(c->err))) {
		res->start_step = "fcntl";
		res->start_errno = errno;
		kill_reap(c, &status, NULL);
		c->pid = -1;
		close_fd(&c->in);
		close_fd(&c->out);
		close_fd(&c->err);
		goto out;
	}
	/* pidfds are close-on-exec by definition; ENOSYS on old kernels. A
	 * served runner is not our child: its end comes from its server, and
	 * its pidfd (from the runner itself) is only for signals. */
	if (!served)
		c->pidfd = pidfd_open(c->pid, 0);
	rc = 0;
out:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	return rc;
}

/* Has the child exited? Looks without reaping: the zombie keeps its pid
 * and process group reserved, so killing the group stays safe. */
static int child_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

/* Served: has the server reported the runner's end? Reads only what is
 * there. A server that died first lost the status (its runner died with
 * it): that is an end too, with end_errno. */
static int served_ended(struct child *c)
{
	if (!c->ended) {
		switch (http_runner_server_wait(c->pid, 0, &c->end_status, NULL)) {
		case 0:
			c->ended = 1;
			break;
		case 1:
			break;
		default:
			/* The server died first: the runner gets SIGKILL (its
			 * parent-death signal), but nobody else kills its
			 * group, whose members would hold the pipes open. The
			 * group id stays taken while a member lives; with none
			 * left the kill could only reach a group whose leader
			 * got this pid again, which the kernel's cyclic pid
			 * allocation (pid_max) puts far beyond this moment.
			 * The one kill by pid number left in the served path,
			 * and only after a server's death. */
			c->end_errno = errno;
			kill(-c->pid, SIGKILL);
			pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
			c->end_status = 0;
			c->ended = 1;
			c->srv = -1; /* gone, and reaped by runner_server.c */
			break;
		}
	}
	return c->ended;
}

/* Drain what is readable on fd into b (stdout: the cap is an error) or keep
 * the first bytes only (stderr). Returns 1 at EOF, 0 when drained (or after
 * 16 reads, so a child flooding a pipe cannot keep us from the deadline
 * check), -1 over cap. */
static int drain(int *fd, struct model_buf *b, int is_stdout)
{
	char chunk[65536];
	ssize_t r;
	size_t room;
	int reads;

	for (reads = 0; reads < 16; reads++) {
		r = read(*fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0) {
			close_fd(fd);
			return 1;
		}
		if (is_stdout) {
			if (model_buf_add(b, chunk, (size_t)r) != 0)
				return -1;
		} else {
			/* at most room bytes: cannot cross the cap */
			room = b->max - b->len;
			if (model_buf_add(b, chunk, (size_t)r < room ? (size_t)r : room) != 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Feed stdin and collect stdout/stderr at the same time, telling watch
 * (may be NULL) of new stdout and of the time passing. Ends when the
 * child has exited and its pipes are at EOF, at the deadline, or when a
 * watch callback asks to stop.
 */
static enum http_spawn_end pump(struct child *c, const char *in, size_t in_len, int64_t deadline,
                                struct model_buf *out, struct model_buf *err,
                                const struct http_spawn_watch *watch, int *sys_errno)
{
	struct pollfd pfd[5];
	size_t written = 0;
	int exited = 0;
	int group_killed = 0;
	int runner_gone = 0;   /* served: its pidfd says it has exited */
	int64_t report_by = 0; /* served, runner_gone: the server's report due */
	int64_t next_tick = 0; /* 0: no tick */
	int64_t left;
	size_t before;
	nfds_t nfd;
	int timeout;
	ssize_t w;
	int i_in, i_out, i_err, i_pid, i_runner;
	int r;

	if (watch && watch->tick && watch->tick_ms > 0)
		next_tick = now_ms() + watch->tick_ms;

	/* A served runner's end may be known already (it died before its
	 * STARTED, runner_server.h): nothing on the socket would say it */
	if (c->served)
		exited = served_ended(c);
	for (;;) {
		if (!exited && runner_gone && now_ms() >= report_by) {
			/* The runner has exited, its server has not said so in
			 * SPAWN_SERVED_REAP_MS: broken (stopped, hung). Stopped
			 * in turn; the end is known, its status is lost. */
			http_runner_server_stop();
			c->srv = -1;
			c->ended = 1;
			c->end_status = 0;
			c->end_errno = ETIMEDOUT;
			exited = 1;
			/* Its group, which the server did not kill: same
			 * reasoning as in served_ended. */
			kill(-c->pid, SIGKILL);
		}
		if (!exited && !c->served && c->pidfd < 0)
			exited = child_exited(c->pid);
		if (exited && !group_killed) {
			/* The child is gone; anything left in its group could
			 * only keep the pipes open. Its zombie, not yet reaped,
			 * still holds the pgid, so this cannot hit another group.
			 * A served runner's server did the same before its
			 * report, and has reaped it since. */
			if (!c->served)
				kill(-c->pid, SIGKILL);
			group_killed = 1;
		}
		if (exited && c->out < 0 && c->err < 0)
			return HTTP_SPAWN_DONE;
		left = deadline - now_ms();
		if (left <= 0)
			return HTTP_SPAWN_TIMEOUT;
		if (next_tick && now_ms() >= next_tick) {
			if (watch->tick(watch->ctx))
				return HTTP_SPAWN_STOPPED;
			/* from the tick's end: a slow tick does not make them
			 * come back to back */
			next_tick = now_ms() + watch->tick_ms;
			continue;
		}
		if (next_tick && next_tick - now_ms() < left)
			left = next_tick - now_ms() > 0 ? next_tick - now_ms() : 0;
		if (!exited && runner_gone && report_by - now_ms() < left)
			left = report_by - now_ms() > 0 ? report_by - now_ms() : 0;
		timeout = left > 1000000 ? 1000000 : (int)left;
		nfd = 0;
		i_in = i_out = i_err = i_pid = i_runner = -1;
		if (c->in >= 0) {
			pfd[nfd].fd = c->in;
			pfd[nfd].events = POLLOUT;
			i_in = (int)nfd++;
		}
		if (c->out >= 0) {
			pfd[nfd].fd = c->out;
			pfd[nfd].events = POLLIN;
			i_out = (int)nfd++;
		}
		if (c->err >= 0) {
			pfd[nfd].fd = c->err;
			pfd[nfd].events = POLLIN;
			i_err = (int)nfd++;
		}
		if (!exited && (c->served || c->pidfd >= 0)) {
			pfd[nfd].fd = c->served ? c->srv : c->pidfd;
			pfd[nfd].events = POLLIN;
			i_pid = (int)nfd++;
		} else if (!exited && timeout > SPAWN_EXIT_POLL_MS) {
			timeout = SPAWN_EXIT_POLL_MS;
		}
		if (!exited && c->served && !runner_gone && c->pidfd >= 0) {
			pfd[nfd].fd = c->pidfd;
			pfd[nfd].events = POLLIN;
			i_runner = (int)nfd++;
		}
		r = poll(pfd, nfd, timeout);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*sys_errno = errno;
			return HTTP_SPAWN_ERROR;
		}
		if (i_in >= 0 && pfd[i_in].revents) {
			w = write(c->in, in + written, in_len - written);
			if (w > 0)
				written += (size_t)w;
			/* EPIPE: the child stopped reading (it may have refused
			 * its input already); what it answers will say why. */
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == in_len)
				close_fd(&c->in);
		}
		if (i_out >= 0 && pfd[i_out].revents) {
			before = out->len;
			r = drain(&c->out, out, 1);
			/* what came before a read that crossed the cap is told too */
			if (watch && watch->out && out->len > before && watch->out(watch->ctx, out))
				return HTTP_SPAWN_STOPPED;
			if (r < 0)
				return HTTP_SPAWN_OVER_CAP;
		}
		if (i_err >= 0 && pfd[i_err].revents)
			drain(&c->err, err, 0);
		if (i_pid >= 0 && pfd[i_pid].revents)
			exited = c->served ? served_ended(c) : child_exited(c->pid);
		if (i_runner >= 0 && pfd[i_runner].revents && !exited) {
			runner_gone = 1;
			report_by = now_ms() + SPAWN_SERVED_REAP_MS;
		}
	}
}

static int run(const char *path, char *const argv[], int served, const char *input,
               size_t input_len, int timeout_ms, struct model_buf *out, struct model_buf *err,
               const struct http_spawn_watch *watch, struct http_spawn_result *res)
{
	struct sigaction ign, dfl, old_pipe, old_chld;
	struct child c;
	int64_t deadline;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->end = HTTP_SPAWN_ERROR;
	res->reaped = -1;
	memset(&c, 0, sizeof(c));
	c.pid = -1;
	c.in = c.out = c.err = c.pidfd = c.srv = -1;

	memset(&ign, 0, sizeof(ign));
	sigemptyset(&ign.sa_mask);
	ign.sa_handler = SIG_IGN;
	memset(&dfl, 0, sizeof(dfl));
	sigemptyset(&dfl.sa_mask);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGCHLD, &dfl, &old_chld);

	deadline = now_ms() + timeout_ms;
	if (start(path, argv, served, err != NULL, timeout_ms, &c, res) != 0)
		goto out;
	if (input_len == 0)
		close_fd(&c.in); /* nothing to say: EOF at once */
	res->end = pump(&c, input, input_len, deadline, out, err, watch, &res->sys_errno);
	if (res->end != HTTP_SPAWN_DONE || c.served) {
		/* (served and DONE: its end is already read, nothing is killed) */
		res->reaped = kill_reap(&c, &res->status, &res->reap_errno);
	} else {
		do {
			res->reaped = waitpid(c.pid, &res->status, 0);
		} while (res->reaped < 0 && errno == EINTR);
		if (res->reaped < 0)
			res->reap_errno = errno;
	}
	if (res->reaped < 0)
		res->status = 0;
	c.pid = -1;
	rc = 0;
out:
	close_fd(&c.in);
	close_fd(&c.out);
	close_fd(&c.err);
	close_fd(&c.pidfd);
	sigaction(SIGCHLD, &old_chld, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	return rc;
}

int http_spawn_run(const char *path, char *const argv[], const char *input, size_t input_len,
                   int timeout_ms, struct model_buf *out, struct model_buf *err,
                   const struct http_spawn_watch *watch, struct http_spawn_result *res)
{
	return run(path, argv, 0, input, input_len, timeout_ms, out, err, watch, res);
}

int http_spawn_run_runner(const char *runner_path, char *const argv[], const char *input,
                          size_t input_len, int timeout_ms, struct model_buf *out,
                          struct model_buf *err, const struct http_spawn_watch *watch,
                          struct http_spawn_result *res)
{
	return run(runner_path, argv, 1, input, input_len, timeout_ms, out, err, watch, res);
}
