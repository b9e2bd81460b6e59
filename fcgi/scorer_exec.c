/*
 * The external scorer adapter (scorer_exec.h): one posix_spawn per call,
 * the run's outputs on stdin, one JSON answer on stdout, a time limit.
 *
 * Nothing the scorer says is believed until checked: an answer that is not
 * exactly the documented object, a score outside [0, 1], a crash, a
 * non-zero exit or silence past the deadline all leave the run not scored,
 * with the reason.
 */
#include "fcgi/scorer_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/scorer.h"
#include "model/alloc.h"
#include "model/buf.h"

/* Without a pidfd, how often to look for the scorer's exit (ms). */
#define EXEC_EXIT_POLL_MS 5

struct exec_scorer {
	char *words;                               /* the command line, NULs between words */
	char *argv[HTTP_SCORER_EXEC_MAX_ARGS + 1]; /* into words (argv[0]: see abs0) */
	char *abs0;                                /* argv[0] made absolute */
	int timeout_ms;
};

struct child {
	pid_t pid;
	int in;    /* write end of its stdin, -1 once closed */
	int out;   /* read end of its stdout, -1 at EOF */
	int pidfd; /* readable when it exits; -1 if unsupported */
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

static int not_scored(struct model_score_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fill the reason (printable ASCII only: parts of it may quote the
 * scorer's bytes through jansson's messages) and return -1. */
static int not_scored(struct model_score_result *res, const char *fmt, ...)
{
	va_list ap;
	char *p;

	json_decref(res->details);
	res->details = NULL;
	res->scored = 0;
	res->score = 0.0;
	res->passed = 0;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
	for (p = res->reason; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return -1;
}

/* Move *fd above 2, close-on-exec, so the child's dup2 onto 0..2 cannot
 * clobber another end sitting there (a worker may run with 0..2 closed). */
static int lift_fd(int *fd)
{
	int nfd;

	if (*fd > 2)
		return 0;
	nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * posix_spawn with: stdin/stdout the pipe ends, stderr /dev/null, every
 * fd from 3 up closed (addclosefrom_np, glibc 2.34), its own process group
 * (a kill of the group reaches whatever it starts), every signal at its
 * default and none blocked, an empty environment. Returns 0 or an errno.
 */
static int spawn_scorer(const struct exec_scorer *x, int in_r, int out_w, pid_t *pid)
{
	static char *const envp[] = {NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	int rc;

	*pid = -1;
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
	if (!rc)
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
		rc = posix_spawn(pid, x->abs0, &fa, &at, x->argv, envp);
	if (rc)
		*pid = -1;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Kill the child's group and reap it. */
static void kill_reap(struct child *c, int *status)
{
	int st = 0;

	kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
	c->pid = -1;
}

/* Start the scorer. Returns 0, or an errno (nothing left open or running). */
static int start(const struct exec_scorer *x, struct child *c)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	int e = 0;

	c->pid = -1;
	c->in = c->out = c->pidfd = -1;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || lift_fd(&in[0]) || lift_fd(&out[1])) {
		e = errno;
		goto out;
	}
	e = spawn_scorer(x, in[0], out[1], &c->pid);
	if (e)
		goto out;
	c->in = in[1];
	c->out = out[0];
	in[1] = out[0] = -1;
	if (set_nonblock(c->in) || set_nonblock(c->out)) {
		e = errno;
		kill_reap(c, NULL);
		close_fd(&c->in);
		close_fd(&c->out);
		goto out;
	}
	/* pidfds are close-on-exec by definition; ENOSYS on old kernels */
	c->pidfd = pidfd_open(c->pid, 0);
out:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	return e;
}

/* Has it exited? Looks without reaping: the zombie keeps its pid and
 * process group reserved, so killing the group stays safe. */
static int child_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

enum pump_end { PUMP_DONE, PUMP_TIMEOUT, PUMP_OVER_CAP, PUMP_ERROR };

/* Read what is there on c->out into b. 1 at EOF, 0 when drained (or after
 * 16 reads, so a flood cannot hold off the deadline check), -1 over cap. */
static int drain(struct child *c, struct model_buf *b)
{
	char chunk[65536];
	ssize_t r;
	int reads;

	for (reads = 0; reads < 16; reads++) {
		r = read(c->out, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0) {
			close_fd(&c->out);
			return 1;
		}
		if (model_buf_add(b, chunk, (size_t)r))
			return -1;
	}
	return 0;
}

/*
 * Feed stdin and collect stdout at the same time (a large input exceeds
 * the pipe buffer: writing first, reading after could deadlock). Ends when
 * the scorer has exited and its stdout is at EOF, or at the deadline.
 */
static enum pump_end pump(struct child *c, const char *in, size_t in_len, int64_t deadline,
                          struct model_buf *out)
{
	struct pollfd pfd[3];
	size_t written = 0;
	int exited = 0, swept = 0;
	int64_t left;
	nfds_t nfd;
	int timeout, r;
	int i_in, i_out, i_pid;
	ssize_t w;

	for (;;) {
		if (!exited && c->pidfd < 0)
			exited = child_exited(c->pid);
		if (exited && !swept) {
			/* anything left in its group could only hold stdout open */
			kill(-c->pid, SIGKILL);
			swept = 1;
		}
		if (exited && c->out < 0)
			return PUMP_DONE;
		left = deadline - now_ms();
		if (left <= 0)
			return PUMP_TIMEOUT;
		timeout = left > 1000000 ? 1000000 : (int)left;
		nfd = 0;
		i_in = i_out = i_pid = -1;
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
		if (!exited && c->pidfd >= 0) {
			pfd[nfd].fd = c->pidfd;
			pfd[nfd].events = POLLIN;
			i_pid = (int)nfd++;
		} else if (!exited && timeout > EXEC_EXIT_POLL_MS) {
			timeout = EXEC_EXIT_POLL_MS;
		}
		r = poll(pfd, nfd, timeout);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return PUMP_ERROR;
		if (i_in >= 0 && pfd[i_in].revents) {
			w = write(c->in, in + written, in_len - written);
			if (w > 0)
				written += (size_t)w;
			/* EPIPE: it stopped reading; its answer will tell */
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == in_len)
				close_fd(&c->in);
		}
		if (i_out >= 0 && pfd[i_out].revents && drain(c, out) < 0)
			return PUMP_OVER_CAP;
		if (i_pid >= 0 && pfd[i_pid].revents)
			exited = child_exited(c->pid);
	}
}

/* Check one element of "details"; 0 or -1 with why. */
static int detail_check(json_t *d, size_t i, char *why, size_t n)
{
	const char *k;
	json_t *v;
	int have_passed = 0;

	if (!json_is_object(d)) {
		snprintf(why, n, "details[%zu] is not an object", i);
		return -1;
	}
	json_object_foreach(d, k, v)
	{
		if (strcmp(k, "passed") == 0) {
			have_passed = json_is_boolean(v);
			if (!have_passed)
				break;
		} else if (strcmp(k, "seq") == 0) {
			if (!json_is_integer(v) && !json_is_null(v))
				break;
		} else if (strcmp(k, "key") == 0) {
			if (!json_is_string(v) && !json_is_null(v))
				break;
		} else if (strcmp(k, "check") == 0 || strcmp(k, "message") == 0) {
			if (!json_is_string(v))
				break;
		} else {
			snprintf(why, n, "details[%zu] has an unknown field \"%.40s\"", i, k);
			return -1;
		}
	}
	if (k) {
		snprintf(why, n, "details[%zu].%.40s has the wrong type", i, k);
		return -1;
	}
	if (!have_passed) {
		snprintf(why, n, "details[%zu].passed must be true or false", i);
		return -1;
	}
	return 0;
}

/* Check the answer object and fill res; 0 or -1 (res not scored). */
static int take_answer(json_t *a, struct model_score_result *res)
{
	json_t *score = NULL, *passed = NULL, *details = NULL;
	json_t *v, *d;
	const char *k;
	char why[160];
	size_t i;
	double s;

	if (!json_is_object(a))
		return not_scored(res, "scorer answer: not a JSON object");
	json_object_foreach(a, k, v)
	{
		if (strcmp(k, "score") == 0)
			score = v;
		else if (strcmp(k, "passed") == 0)
			passed = v;
		else if (strcmp(k, "details") == 0)
			details = v;
		else
			return not_scored(res, "scorer answer: unknown field \"%.40s\"", k);
	}
	if (!score)
		return not_scored(res, "scorer answer: score is missing");
	if (!json_is_number(score))
		return not_scored(res, "scorer answer: score must be a number");
	s = json_number_value(score);
	if (!(s >= 0.0 && s <= 1.0))
		return not_scored(res, "scorer answer: score %g is outside [0, 1]", s);
	if (!json_is_boolean(passed))
		return not_scored(res, "scorer answer: passed must be true or false");
	if (details) {
		if (!json_is_array(details))
			return not_scored(res, "scorer answer: details must be an array");
		if (json_array_size(details) > HTTP_SCORER_EXEC_MAX_DETAILS)
			return not_scored(res, "scorer answer: more than %d details",
			                  HTTP_SCORER_EXEC_MAX_DETAILS);
		json_array_foreach(details, i, d)
		{
			if (detail_check(d, i, why, sizeof(why)))
				return not_scored(res, "scorer answer: %s", why);
		}
	}
	res->scored = 1;
	res->score = s;
	res->passed = json_is_true(passed);
	res->details = json_incref(details);
	res->reason[0] = '\0';
	return 0;
}

/* SIGPIPE ignored (a scorer that stops reading must not kill the worker)
 * and SIGCHLD at its default (no inherited handler or SIG_IGN may reap the
 * scorer behind our back) for the duration of one call. */
struct saved_signals {
	struct sigaction pipe, chld;
};

static void signals_enter(struct saved_signals *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &s->pipe);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, &s->chld);
}

static void signals_leave(const struct saved_signals *s)
{
	sigaction(SIGPIPE, &s->pipe, NULL);
	sigaction(SIGCHLD, &s->chld, NULL);
}

static int exec_score(void *ctx, const char *suite, json_t *outputs, struct model_score_result *res)
{
	struct exec_scorer *x = ctx;
	struct saved_signals sigs;
	struct child c = {-1, -1, -1, -1};
	struct model_buf out;
	json_error_t jerr;
	json_t *input = NULL, *answer = NULL;
	char *in = NULL;
	const char *abbrev;
	enum pump_end end;
	int status = 0;
	int e;
	int rc = -1;

	model_score_result_clear(res);
	model_buf_init(&out, HTTP_SCORER_EXEC_MAX_OUTPUT);
	signals_enter(&sigs);
	if (!model_suite_name_valid(suite)) {
		not_scored(res, "invalid suite name");
		goto out;
	}
	if (!json_is_array(outputs)) {
		not_scored(res, "outputs are not an array");
		goto out;
	}
	input = json_pack("{s:s, s:O}", "suite", suite, "outputs", outputs);
	in = input ? json_dumps(input, JSON_COMPACT) : NULL;
	if (!in) {
		not_scored(res, "cannot encode the scorer's input");
		goto out;
	}
	e = start(x, &c);
	if (e) {
		not_scored(res, "cannot start the scorer: %s", strerror(e));
		goto out;
	}
	end = pump(&c, in, strlen(in), now_ms() + x->timeout_ms, &out);
	if (end != PUMP_DONE) {
		kill_reap(&c, NULL);
		if (end == PUMP_TIMEOUT)
			not_scored(res, "scorer timed out after %d ms", x->timeout_ms);
		else if (end == PUMP_OVER_CAP)
			not_scored(res, "scorer answered more than %d bytes",
			           HTTP_SCORER_EXEC_MAX_OUTPUT);
		else
			not_scored(res, "scorer: poll: %s", strerror(errno));
		goto out;
	}
	while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR)
		;
	c.pid = -1;
	if (WIFSIGNALED(status)) {
		abbrev = sigabbrev_np(WTERMSIG(status));
		if (abbrev)
			not_scored(res, "scorer killed by SIG%s", abbrev);
		else
			not_scored(res, "scorer killed by signal %d", WTERMSIG(status));
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		not_scored(res, "scorer exited with status %d",
		           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	answer = json_loadb(out.data, out.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!answer) {
		not_scored(res, "scorer answered invalid JSON: %s", jerr.text);
		goto out;
	}
	rc = take_answer(answer, res);
out:
	if (c.pid > 0)
		kill_reap(&c, NULL);
	close_fd(&c.in);
	close_fd(&c.out);
	close_fd(&c.pidfd);
	signals_leave(&sigs);
	json_decref(answer);
	json_decref(input);
	free(in);
	model_buf_release(&out);
	return rc;
}

static void exec_destroy(void *ctx)
{
	struct exec_scorer *x = ctx;

	if (!x)
		return;
	free(x->abs0);
	free(x->words);
	free(x);
}

static const struct model_scorer_ops exec_ops = {
    .name = "exec",
    .score = exec_score,
    .destroy = exec_destroy,
};

int http_scorer_exec_new(const char *command_line, int timeout_ms, struct model_scorer *out,
                         char *err, size_t n)
{
	struct exec_scorer *x;
	struct stat st;
	char *p;
	int argc = 0;

	if (timeout_ms < HTTP_SCORER_TIMEOUT_MIN_MS || timeout_ms > HTTP_SCORER_TIMEOUT_MAX_MS) {
		snprintf(err, n, "exec scorer: timeout_ms must be %d..%d",
		         HTTP_SCORER_TIMEOUT_MIN_MS, HTTP_SCORER_TIMEOUT_MAX_MS);
		return -1;
	}
	x = model_xcalloc(1, sizeof(*x));
	x->timeout_ms = timeout_ms;
	x->words = model_xstrdup(command_line);
	/* split on spaces: no shell, no quoting */
	for (p = x->words; *p;) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc == HTTP_SCORER_EXEC_MAX_ARGS) {
			snprintf(err, n, "exec scorer: more than %d words in the command",
			         HTTP_SCORER_EXEC_MAX_ARGS);
			goto fail;
		}
		x->argv[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	x->argv[argc] = NULL;
	if (argc == 0) {
		snprintf(err, n, "exec scorer: empty command");
		goto fail;
	}
	/* the scorer has no PATH (empty environment): name it by its path */
	if (x->argv[0][0] == '/') {
		x->abs0 = model_xstrdup(x->argv[0]);
	} else {
		x->abs0 = realpath(x->argv[0], NULL);
		if (!x->abs0) {
			snprintf(err, n, "exec scorer: %s: %s", x->argv[0], strerror(errno));
			goto fail;
		}
	}
	if (stat(x->abs0, &st) != 0 || !S_ISREG(st.st_mode) || access(x->abs0, X_OK) != 0) {
		snprintf(err, n, "exec scorer: %s is not an executable file", x->argv[0]);
		goto fail;
	}
	out->ops = &exec_ops;
	out->ctx = x;
	return 0;
fail:
	exec_destroy(x);
	return -1;
}
