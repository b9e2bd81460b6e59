/*
 * A run's gateway, the runner's side (runner/gateway_run.h): the
 * directory, the olivares-gateway process, its lines.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/agent.h"
#include "runner/fdpass.h"
#include "runner/gateway_env.h"
#include "runner/gateway_run.h"
#include "runner/serve.h"

#include "model/record.h"

/* How long the gateway gets to start (its CA made and written). */
#define RUNNER_GATEWAY_START_MS 3000
/* A line from the gateway: one trace entry, bounded by the trace's own
 * bounds (urls, near misses), with room. */
/* A line holds one entry; a recorded run's entry also holds its two
 * bodies (64 KiB each, at worst six times longer JSON-escaped). */
#define RUNNER_GATEWAY_MAX_LINE (2 * 1024 * 1024)

/* The files a run's directory may hold, then the directory, each if
 * there. */
static int remove_run_dir(const char *dir)
{
	static const char *const files[] = {RUNNER_GATEWAY_CA_FILE, RUNNER_GATEWAY_SOCK_FILE};
	char path[PATH_MAX + 32];
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (unlink(path) != 0 && errno != ENOENT)
			rc = -1;
	}
	if (rmdir(dir) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/* The directories runners that are gone left in tmp: named with their
 * pid ("olivares-gateway-<pid>-XXXXXX"), removed when no process has that
 * pid (a runner killed while its jail was being built, before its gateway,
 * which removes the directory when the runner dies, had started). A pid
 * taken again by another process keeps its directory until that one is
 * gone too: never a live runner's. */
static void sweep_dead(const char *tmp)
{
	char path[PATH_MAX];
	struct dirent *e;
	long pid;
	char *end;
	DIR *d = opendir(tmp);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, RUNNER_GATEWAY_DIR_PREFIX,
		            strlen(RUNNER_GATEWAY_DIR_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(RUNNER_GATEWAY_DIR_PREFIX), &end, 10);
		if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name) < sizeof(path))
			remove_run_dir(path);
	}
	closedir(d);
}

int runner_gateway_run_prepare(struct runner_gateway_run *g, const struct runner_spec *spec,
                               struct runner_error *err)
{
	const char *tmp = getenv("TMPDIR");

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	g->pid = -1;
	g->pidfd = -1;
	g->out = -1;
	g->chan = -1;
	g->pending = json_array();
	model_buf_init(&g->in, RUNNER_GATEWAY_MAX_LINE);
	if (!tmp || tmp[0] != '/' || strlen(tmp) > PATH_MAX - 64)
		tmp = "/tmp";
	sweep_dead(tmp);
	snprintf(g->dir, sizeof(g->dir), "%s/" RUNNER_GATEWAY_DIR_PREFIX "%ld-XXXXXX", tmp,
	         (long)getpid());
	if (!mkdtemp(g->dir)) {
		g->dir[0] = '\0';
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "cannot make the gateway's directory: %s", strerror(errno));
	}
	/* the jail's root, another uid, reads the certificate */
	if (chmod(g->dir, 0755) != 0)
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "cannot open the gateway's directory to the jail: %s",
		                        strerror(errno));
	return 0;
}

int runner_gateway_run_listen_unix(struct runner_gateway_run *g, int *fd, struct runner_error *err)
{
	struct sockaddr_un sun;
	int s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", g->dir,
	             RUNNER_GATEWAY_SOCK_FILE) >= (int)sizeof(sun.sun_path))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "the gateway's socket path is too long");
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return runner_error_set(err, RUNNER_E_SETUP, "socket for the gateway: %s",
		                        strerror(errno));
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		close(s);
		return runner_error_set(err, RUNNER_E_SETUP, "bind of the gateway's socket: %s",
		                        strerror(errno));
	}
	g->sock_made = 1;
	/* the sandbox's relay connects as another uid */
	if (chmod(sun.sun_path, 0666) != 0 || listen(s, RUNNER_GATEWAY_BACKLOG) != 0) {
		close(s);
		return runner_error_set(err, RUNNER_E_SETUP, "listen on the gateway's socket: %s",
		                        strerror(errno));
	}
	*fd = s;
	return 0;
}

/* A recorded run's answers, together, stay inside what a session may
 * hold: past it an entry's record says so, and the run gives no session
 * (model/record.h), rather than this process and the run's output growing
 * with every answer. */
static void bound_record(struct runner_gateway_run *g, json_t *entry)
{
	json_t *rec = json_object_get(entry, "record");
	size_t n;

	if (!rec || json_object_get(rec, "unrecordable"))
		return;
	n = json_dumpb(rec, NULL, 0, JSON_COMPACT);
	if (g->recorded_bytes + n <= MODEL_RECORD_MAX_BYTES) {
		g->recorded_bytes += n;
		return;
	}
	json_object_set_new(entry, "record",
	                    json_pack("{s:s}", "unrecordable",
	                              "the run's recorded answers are over 1 MiB together"));
}

/* One whole line from the gateway (len bytes at s). */
static void gateway_line(struct runner_gateway_run *g, const char *s, size_t len)
{
	json_t *line = json_loadb(s, len, 0, NULL);
	const char *type = json_string_value(json_object_get(line, "type"));
	json_t *entry = json_object_get(line, "entry");

	if (type && strcmp(type, "request") == 0 && json_is_object(entry)) {
		g->requests++;
		/* answered from outside: not a miss, and not hermetic */
		if (json_is_object(json_object_get(entry, "egress")))
			g->egress++;
		else if (!json_is_true(json_object_get(entry, "hit")))
			g->missed = 1;
		/* Bounded here, where they come, not when the driver takes them
		 * (an agent that never ends its step would grow this process
		 * without end): past a step's worth, counted and dropped, and
		 * the step fails at its next take. */
		if (json_array_size(g->pending) >= RUNNER_AGENT_MAX_REQUESTS) {
			g->dropped++;
			json_decref(line);
			return;
		}
		bound_record(g, entry);
		json_array_append(g->pending, entry);
	} else if (!type || strcmp(type, "ready") != 0) {
		g->broken = 1;
	}
	json_decref(line);
}

void runner_gateway_run_drain(struct runner_gateway_run *g)
{
	char chunk[16384];
	char *nl;
	size_t n;
	ssize_t r;

	while (g->out >= 0) {
		r = read(g->out, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			close(g->out);
			g->out = -1;
			return;
		}
		if (model_buf_add(&g->in, chunk, (size_t)r) != 0) {
			g->broken = 1;
			model_buf_reset(&g->in);
			continue;
		}
		while ((nl = memchr(g->in.data, '\n', g->in.len)) != NULL) {
			n = (size_t)(nl - g->in.data);
			gateway_line(g, g->in.data, n);
			memmove(g->in.data, nl + 1, g->in.len - n - 1);
			g->in.len -= n + 1;
			g->in.data[g->in.len] = '\0';
		}
	}
}

/* Wait for the gateway's first line until deadline_ms: 0 when it is
 * "ready", else -1 with *err. */
static int await_ready(struct runner_gateway_run *g, long long deadline_ms,
                       struct runner_error *err)
{
	struct pollfd p;
	json_t *line;
	const char *type, *msg;
	char *nl;
	long long left;
	int rc;

	for (;;) {
		nl = g->in.len ? memchr(g->in.data, '\n', g->in.len) : NULL;
		if (nl) {
			line = json_loadb(g->in.data, (size_t)(nl - g->in.data), 0, NULL);
			type = json_string_value(json_object_get(line, "type"));
			msg = json_string_value(json_object_get(line, "message"));
			rc = type && strcmp(type, "ready") == 0 ? 0 : -1;
			if (rc != 0)
				runner_error_set(err, RUNNER_E_SETUP,
				                 "the gateway did not start: %.300s",
				                 msg ? msg : "it said something else");
			json_decref(line);
			memmove(g->in.data, nl + 1, g->in.len - (size_t)(nl - g->in.data) - 1);
			g->in.len -= (size_t)(nl - g->in.data) + 1;
			g->in.data[g->in.len] = '\0';
			return rc;
		}
		left = deadline_ms - runner_now_ms();
		if (left <= 0)
			return runner_error_set(err, RUNNER_E_TIMEOUT,
			                        "the gateway did not start within %d ms",
			                        RUNNER_GATEWAY_START_MS);
		if (g->out < 0)
			return runner_error_set(err, RUNNER_E_SETUP,
			                        "the gateway exited before it was ready");
		p.fd = g->out;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return runner_error_set(err, RUNNER_E_SETUP, "poll: %s", strerror(errno));
		/* only the first line: the rest is left for the driver */
		while (g->out >= 0 && !memchr(g->in.data, '\n', g->in.len)) {
			char chunk[4096];
			ssize_t r = read(g->out, chunk, sizeof(chunk));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (r <= 0) {
				close(g->out);
				g->out = -1;
				break;
			}
			if (model_buf_add(&g->in, chunk, (size_t)r) != 0)
				return runner_error_set(err, RUNNER_E_SETUP,
				                        "the gateway's first line is too long");
		}
	}
}

/* The gateway server asked for g's gateway: DIR and its three
 * descriptors in one message (runner/gateway_run.h). 0 when sent; -1 when
 * the server is gone or its socket full (the caller forks its own). */
static int ask_server(struct runner_gateway_run *g, int in, int out, int ch)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	int fds[3] = {in, out, ch};
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t w;

	memset(&ctl, 0, sizeof(ctl));
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = g->dir;
	iov.iov_len = strlen(g->dir) + 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	do
		w = sendmsg(runner_gateway_server_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)iov.iov_len)
		return 0;
	/* a server that is gone stays gone for this runner */
	if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		close(runner_gateway_server_fd);
		runner_gateway_server_fd = -1;
	}
	return -1;
}

/* A served gateway's pidfd, its first message on the channel: waited for
 * until deadline_ms. 0 with g->pidfd, else -1. */
static int served_pidfd(struct runner_gateway_run *g, long long deadline_ms)
{
	struct pollfd p;
	long long left;
	int fd;

	if (g->pidfd >= 0)
		return 0;
	if (g->chan < 0)
		return -1;
	for (;;) {
		p.fd = g->chan;
		p.events = POLLIN;
		p.revents = 0;
		left = deadline_ms - runner_now_ms();
		if (poll(&p, 1, left > 0 ? (int)left : 0) < 0 && errno == EINTR)
			continue;
		if (!p.revents)
			return -1;
		if (runner_fd_recv(g->chan, MSG_DONTWAIT, &fd) != 1)
			return -1;
		g->pidfd = fd;
		return 0;
	}
}

int runner_gateway_run_start(struct runner_gateway_run *g, struct runner_error *err)
{
	const struct runner_spec *spec = g->spec;
	char *const envp[] = {NULL};
	int in[2] = {-1, -1}, out[2] = {-1, -1}, ch[2] = {-1, -1};
	json_t *wire;
	char *text = NULL;
	size_t len, off;
	ssize_t w;
	int rc = -1;

	if (!spec->gateway_program) {
		runner_error_set(err, RUNNER_E_MISSING, "%s was not found beside the runner",
		                 json_array_size(spec->egress_allow) > 0 ? "olivares-gateway-egress"
		                                                         : "olivares-gateway");
		goto out;
	}
	wire = json_pack("{s:O, s:s?, s:O, s:b}", "mocks", spec->mocks, "variant", spec->variant,
	                 "egress_allow", spec->egress_allow ? spec->egress_allow : json_null(),
	                 "record", spec->record);
	if (wire && spec->egress_secrets)
		json_object_set_new(wire, "egress_secrets", json_string(spec->egress_secrets));
	text = wire ? json_dumps(wire, JSON_COMPACT) : NULL;
	json_decref(wire);
	if (!text || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the gateway: %s",
		                 strerror(errno));
		goto out;
	}
	/* room for a step's entries, so that the gateway never waits on the
	 * runner while the runner waits on the agent */
	fcntl(out[0], F_SETPIPE_SZ, 1 << 20);
	/* the mocks whole in the pipe, if they fit: a spare reads them only
	 * once it has taken the request */
	len = strlen(text);
	if (len > 65536)
		fcntl(in[1], F_SETPIPE_SZ, (int)(len < (1u << 20) ? len : 1u << 20));
	if (!spec->egress_allow || json_array_size(spec->egress_allow) == 0) {
		if (runner_gateway_server_fd >= 0 && ask_server(g, in[0], out[1], ch[1]) == 0) {
			g->served = 1;
			goto started;
		}
	}
	g->pid = fork();
	if (g->pid < 0) {
		runner_error_set(err, RUNNER_E_SETUP, "fork of the gateway: %s", strerror(errno));
		goto out;
	}
	if (g->pid == 0) {
		char *argv[] = {(char *)"olivares-gateway", (char *)"--dir", g->dir, NULL};

		/* a runner that dies takes its gateway with it, which removes
		 * the run's directory on its way out (SIGTERM, not SIGKILL) */
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		signal(SIGPIPE, SIG_DFL);
		/* stderr stays the runner's: the gateway says nothing there,
		 * but a sanitizer build's report must reach the server's log.
		 * dup2 onto itself keeps close-on-exec: cleared by hand then. */
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
		    (ch[1] == 3 ? fcntl(3, F_SETFD, 0) : dup2(ch[1], 3)) < 0)
			_exit(126);
		close_range(4, ~0U, 0);
		execve(spec->gateway_program, argv, envp);
		_exit(127);
	}
started:
	close(in[0]);
	in[0] = -1;
	close(out[1]);
	out[1] = -1;
	close(ch[1]);
	ch[1] = -1;
	g->out = out[0];
	out[0] = -1;
	g->chan = ch[0];
	ch[0] = -1;
	fcntl(g->out, F_SETFL, fcntl(g->out, F_GETFL) | O_NONBLOCK);
	/* the mocks, then end of file: it reads them whole before it serves */
	for (off = 0; off < len; off += (size_t)w) {
		w = write(in[1], text + off, len - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w < 0) {
			runner_error_set(err, RUNNER_E_SETUP,
			                 "cannot hand the gateway its mocks: %s", strerror(errno));
			goto out;
		}
	}
	close(in[1]);
	in[1] = -1;
	rc = 0;
out:
	free(text);
	if (ch[0] >= 0)
		close(ch[0]);
	if (ch[1] >= 0)
		close(ch[1]);
	if (in[0] >= 0)
		close(in[0]);
	if (in[1] >= 0)
		close(in[1]);
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	return rc;
}

int runner_gateway_run_hand(struct runner_gateway_run *g, int listen_fd, struct runner_error *err)
{
	int rc = 0;

	if (g->chan < 0) {
		rc = runner_error_set(err, RUNNER_E_SETUP, "the gateway was not started");
		goto out;
	}
	if (g->served && served_pidfd(g, runner_now_ms() + RUNNER_GATEWAY_START_MS) != 0) {
		rc = runner_error_set(err, RUNNER_E_SETUP,
		                      "the gateway server did not start the run's gateway");
		close(g->chan);
		g->chan = -1;
		goto out;
	}
	if (runner_fd_send(g->chan, listen_fd) != 0)
		rc = runner_error_set(err, RUNNER_E_SETUP, "cannot hand the gateway its socket: %s",
		                      strerror(errno));
	/* one socket per run: the channel has done its work */
	close(g->chan);
	g->chan = -1;
out:
	if (listen_fd >= 0)
		close(listen_fd);
	return rc;
}

int runner_gateway_run_ready(struct runner_gateway_run *g, long long deadline_ms,
                             struct runner_error *err)
{
	long long until = runner_now_ms() + RUNNER_GATEWAY_START_MS;

	if (until > deadline_ms)
		until = deadline_ms;
	return await_ready(g, until, err);
}

int runner_gateway_run_serve(struct runner_gateway_run *g, int listen_fd, long long deadline_ms,
                             struct runner_error *err)
{
	struct runner_error why;

	if (runner_gateway_run_hand(g, listen_fd, err) == 0)
		return runner_gateway_run_ready(g, deadline_ms, err);
	/* A gateway that could not take its socket has most likely failed
	 * already and said why (or exited): that, rather than the broken
	 * channel. One still waiting finds the channel closed and exits. */
	if (g->out >= 0 && runner_gateway_run_ready(g, deadline_ms, &why) != 0 &&
	    why.kind != RUNNER_E_TIMEOUT)
		*err = why;
	return -1;
}

int runner_gateway_run_fd(const struct runner_gateway_run *g)
{
	return g && g->spec ? g->out : -1;
}

int runner_gateway_run_take(struct runner_gateway_run *g, json_t *trace, int *missed,
                            const char **why)
{
	size_t i;
	int over = 0;

	runner_gateway_run_drain(g);
	if (g->broken) {
		if (why)
			*why = "the gateway wrote a line that is not its wire";
		return -1;
	}
	for (i = 0; i < json_array_size(g->pending); i++) {
		if (json_array_size(trace) >= RUNNER_AGENT_MAX_REQUESTS) {
			over = 1;
			break;
		}
		json_array_append(trace, json_array_get(g->pending, i));
	}
	json_array_clear(g->pending);
	if (g->dropped)
		over = 1;
	g->dropped = 0;
	if (g->missed)
		*missed = 1;
	g->missed = 0;
	if (over && why)
		*why = NULL;
	return over ? -1 : 0;
}

int runner_gateway_run_finish(struct runner_gateway_run *g)
{
	int rc = 0, st;
	pid_t r;

	if (!g->spec)
		return 0;
	if (g->pid > 0) {
		/* Killed, not asked: the run is over, its lines are read, the
		 * CA's key goes with the process, and the directory is removed
		 * here (a SIGTERM and its wait cost a run milliseconds). */
		kill(g->pid, SIGKILL);
		do
			r = waitpid(g->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		if (r != g->pid && !(r < 0 && errno == ECHILD))
			rc = -1;
		g->pid = -1;
	}
	/* A served one that took the request has said so on the channel by
	 * now, or will stop by itself when it finds the channel closed. */
	if (g->served && g->pidfd < 0)
		served_pidfd(g, runner_now_ms() + 100);
	/* killed first, the directory removed while it exits, then its end
	 * awaited: its exit (its threads, its mappings) overlaps the removal */
	if (g->pidfd >= 0 && pidfd_send_signal(g->pidfd, SIGKILL, NULL, 0) != 0 && errno != ESRCH)
		rc = -1;
	if (g->out >= 0)
		close(g->out);
	g->out = -1;
	if (g->chan >= 0)
		close(g->chan);
	g->chan = -1;
	if (g->dir[0]) {
		if (remove_run_dir(g->dir) != 0)
			rc = -1;
		g->dir[0] = '\0';
	}
	if (g->pidfd >= 0) {
		struct pollfd p = {.fd = g->pidfd, .events = POLLIN, .revents = 0};

		/* exited (not reaped: it is the gateway server's child) is
		 * gone: its descriptors are closed and its memory freed */
		while (poll(&p, 1, RUNNER_GATEWAY_START_MS) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN))
			rc = -1;
		close(g->pidfd);
		g->pidfd = -1;
	}
	json_decref(g->pending);
	g->pending = NULL;
	model_buf_release(&g->in);
	g->spec = NULL;
	return rc;
}

void runner_gateway_run_check_lost(struct runner_gateway_run *g)
{
	/* its output at end of file while the run goes on: it ended on its
	 * own, and the agent's later requests went unanswered */
	runner_gateway_run_drain(g);
	if ((g->pid > 0 || g->served) && g->out < 0)
		g->lost = 1;
}

void runner_gateway_run_end(struct runner_gateway_run *g, struct runner_summary *sum)
{
	if (!g->spec)
		return;
	/* the lines the gateway wrote after the driver's last look count too */
	runner_gateway_run_drain(g);
	sum->gateway = 1;
	sum->egress_requests = g->egress;
	sum->gateway_lost = g->lost;
	if (runner_gateway_run_finish(g) != 0)
		sum->left_behind = 1;
}

size_t runner_gateway_run_outside(struct runner_gateway_run *g, char *buf, size_t n)
{
	const char *method, *url;
	size_t used = 0, i;
	json_t *e, *http;
	int w;

	runner_gateway_run_drain(g);
	if (n)
		buf[0] = '\0';
	json_array_foreach(g->pending, i, e)
	{
		http = json_object_get(e, "http");
		method = json_string_value(json_object_get(http, "method"));
		url = json_string_value(json_object_get(http, "url"));
		w = snprintf(
		    buf + used, n - used,
		    "olivares: a gateway request outside a step, in no trace: %s %s (%s)\n",
		    method ? method : "-", url ? url : "-",
		    json_is_object(json_object_get(e, "egress")) ? "forwarded outside: egress"
		    : json_is_true(json_object_get(e, "hit"))    ? "answered by a mock"
		                                                 : "a miss");
		if (w < 0 || (size_t)w >= n - used)
			break;
		used += (size_t)w;
	}
	if (g->dropped && used + 80 < n)
		used += (size_t)snprintf(buf + used, n - used,
		                         "olivares: %ld more gateway requests outside a step, not "
		                         "kept\n",
		                         g->dropped);
	json_array_clear(g->pending);
	g->missed = 0;
	g->dropped = 0;
	return used;
}
