/*
 * olivares-gateway: one run's gateway, started by olivares-runner (the
 * wire is runner/gateway_run.h). It makes the run's CA, writes its
 * certificate where the jail reads it, serves the jail's gateway socket
 * (runner/gateway.h) and answers every request from the run's mocks
 * (model/http_mock.h), writing each request's trace entry to the runner
 * before its answer goes out. It reaches outside only for a request no
 * mock answers to a host of the run's egress list (controlled egress),
 * and then says so in that request's entry.
 */
#ifdef GATEWAY_EGRESS
#include <curl/curl.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/http_mock.h"
#include "model/record.h"
#include "runner/fdpass.h"
#include "runner/gateway.h"
#include "runner/gateway_env.h"
#include "runner/gateway_secrets.h"

/* What it reads on stdin at most: the mocks of a scenario (bounded at 1 MiB
 * by the API) as the runner re-encodes them, with room. */
#define GATEWAY_MAX_INPUT (8u << 20)
/* The whole of one forwarded exchange (egress), ms. */
#define GATEWAY_EGRESS_MS 30000

struct gateway_state {
	json_t *mocks;
	const char *variant;
	json_t *egress_allow; /* array of "host" / "host:port", may be empty */
	/* the headers added for egress hosts ([runner] egress_secrets), or NULL */
	struct runner_gateway_secrets *secrets;
	int record;           /* the run is recorded: each answer goes in its entry */
	pthread_mutex_t lock; /* guards calls, seq, stopping */
	pthread_cond_t stop_cond;
	int stopping;
	size_t *calls;            /* per mock: the calls it answered (sequences) */
	size_t seq;               /* chat completions answered, for their ids */
	pthread_mutex_t out_lock; /* one line at a time on stdout */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One line to the runner: {"type": type, ...obj}. */
static void say(struct gateway_state *st, json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	size_t len, off = 0;
	ssize_t w;

	if (!s)
		return;
	len = strlen(s);
	s[len] = '\n';
	pthread_mutex_lock(&st->out_lock);
	while (off <= len) {
		w = write(1, s + off, len + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	pthread_mutex_unlock(&st->out_lock);
	free(s);
}

static void say_entry(struct gateway_state *st, json_t *entry)
{
	json_t *line = json_pack("{s:s, s:o}", "type", "request", "entry", entry);

	say(st, line);
	json_decref(line);
}

/* A mock's delay, cut short when the gateway stops. Under st->lock. */
static void wait_delay(struct gateway_state *st, long delay_ms)
{
	struct timespec until;

	if (delay_ms <= 0)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += delay_ms / 1000;
	until.tv_nsec += (delay_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!st->stopping &&
	       pthread_cond_timedwait(&st->stop_cond, &st->lock, &until) != ETIMEDOUT)
		;
}

#ifdef GATEWAY_EGRESS
/* Is rq's host and port one of the egress hosts? "host" alone allows the
 * scheme's default port. */
static int egress_allowed(const struct gateway_state *st, const struct runner_gateway_request *rq)
{
	return runner_gateway_egress_allows(st->egress_allow, rq->scheme, rq->host, rq->port);
}

/* Headers as the trace keeps them: those that carry credentials masked.
 * The name is taken as a server would: blanks around it do not make it
 * another header. */
static json_t *masked_headers(json_t *headers)
{
	json_t *out = json_array(), *h;
	const char *name;
	size_t i;

	json_array_foreach(headers, i, h)
	{
		name = json_string_value(json_array_get(h, 0));
		if (!name)
			continue;
		json_array_append_new(out, json_pack("[s, o]", name,
		                                     model_http_header_is_credential(name)
		                                         ? json_string("[masked]")
		                                         : json_incref(json_array_get(h, 1))));
	}
	return out;
}

/* headers (borrowed) without those named name (any case): a new array. */
static json_t *headers_without(json_t *headers, const char *name)
{
	json_t *out = json_array(), *h;
	const char *n;
	size_t i;

	json_array_foreach(headers, i, h)
	{
		n = json_string_value(json_array_get(h, 0));
		if (!n || strcasecmp(n, name) != 0)
			json_array_append(out, h);
	}
	return out;
}

/* A request no mock answered, to an egress host: forwarded, and the miss's
 * entry becomes the exchange's (not a miss; the run is not hermetic). The
 * host's secrets, if it has any, replace the agent's headers of their
 * names; the trace keeps the agent's headers and the names alone. */
static void egress(const struct gateway_state *st, const struct runner_gateway_request *rq,
                   struct model_gateway_answer *a)
{
	json_t *inject = runner_gateway_secrets_for(st->secrets, rq->scheme, rq->host, rq->port);
	struct runner_gateway_request out = *rq;
	struct runner_gateway_response up;
	json_t *ex, *names = NULL;
	char why[256];
	int rc;

	memset(&up, 0, sizeof(up));
	if (inject)
		out.headers = runner_gateway_secrets_apply(rq->headers, inject, &names);
	/* a recorded answer is text: asked for without a content coding
	 * (identity is always acceptable), so that a compressed body does
	 * not make the run unrecordable */
	if (st->record) {
		json_t *plain = headers_without(out.headers, "Accept-Encoding");

		if (inject)
			json_decref(out.headers);
		out.headers = plain;
	}
	rc = runner_gateway_forward(&out, NULL, GATEWAY_EGRESS_MS, &up, why, sizeof(why));
	if (inject || st->record)
		json_decref(out.headers);
	if (rc != 0) {
		ex = json_pack("{s:o, s:s}", "request_headers", masked_headers(rq->headers),
		               "error", why);
		free(a->body);
		a->body = NULL;
		a->body_len = 0;
		a->status = 502;
		if (asprintf(&a->body, "[[gateway-egress-failed:%s]]", why) < 0)
			a->body = NULL;
		a->body_len = a->body ? strlen(a->body) : 0;
		json_decref(a->headers);
		a->headers = NULL;
	} else {
		ex = json_pack("{s:o, s:o, s:I}", "request_headers", masked_headers(rq->headers),
		               "response_headers", masked_headers(up.headers), "response_bytes",
		               (json_int_t)up.body_len);
		runner_gateway_secrets_mask(json_object_get(ex, "response_headers"), inject);
		free(a->body);
		json_decref(a->headers);
		a->status = up.status;
		a->headers = up.headers;
		a->body = up.body;
		a->body_len = up.body_len;
		up.headers = NULL;
		up.body = NULL;
	}
	json_decref(up.headers);
	free(up.body);
	if (names)
		json_object_set_new(ex, "injected", names);
	if (a->trace) {
		json_object_del(a->trace, "near_miss");
		json_object_set_new(a->trace, "status", json_integer(a->status));
		json_object_set_new(a->trace, "egress", ex);
	} else {
		json_decref(ex);
	}
}

#endif

/* A recorded run's answer, kept in its entry for the session
 * (model/record.h): what a mock or the egress answered. A miss or a
 * failed forward is not an answer to replay. */
static void record_answer(const struct runner_gateway_request *rq, struct model_gateway_answer *a)
{
	json_t *ex = json_object_get(a->trace, "egress");
	json_t *url = json_object_get(json_object_get(a->trace, "http"), "url");
	json_t *rec;

	if (ex && json_object_get(ex, "error"))
		rec = json_pack("{s:s}", "unrecordable", "the upstream gave no answer");
	else if (a->hit || ex)
		rec = model_record_http(rq->method, json_string_value(url), rq->body, rq->body_len,
		                        a->status, a->headers, a->body, a->body_len);
	else
		return;
	json_object_set_new(a->trace, "record", rec);
}

static int answer(void *ctx, const struct runner_gateway_request *rq,
                  struct runner_gateway_response *rs)
{
	struct gateway_state *st = ctx;
	struct model_gateway_answer a;
	long long start = now_ns(), us;
	int rc;

	memset(&a, 0, sizeof(a));
	pthread_mutex_lock(&st->lock);
	rc = model_gateway_resolve(st->mocks, st->variant, rq->method, rq->url, rq->headers,
	                           rq->body, rq->body_len, st->calls, st->seq, &a);
	if (rc == 0 && a.llm)
		st->seq++;
	if (rc == 0)
		wait_delay(st, a.delay_ms);
	pthread_mutex_unlock(&st->lock);
	if (rc != 0) {
		model_gateway_answer_clear(&a);
		return -1;
	}
#ifdef GATEWAY_EGRESS
	if (!a.hit && egress_allowed(st, rq))
		egress(st, rq, &a);
	else
#endif
	    if (!a.hit && json_array_size(st->egress_allow) > 0 && a.trace)
		json_object_set_new(a.trace, "refused",
		                    json_string("egress to this host is not allowed "
		                                "(the tenant's egress_allow)"));
	if (st->record && a.trace)
		record_answer(rq, &a);
	us = (now_ns() - start + 999) / 1000;
	if (a.trace) {
		json_object_set_new(a.trace, "duration_us", json_integer(us > 0 ? us : 0));
		say_entry(st, a.trace);
		a.trace = NULL;
	}
	rs->status = a.status;
	rs->headers = a.headers;
	rs->body = a.body;
	rs->body_len = a.body_len;
	rs->delay_ms = 0;
	a.headers = NULL;
	a.body = NULL;
	model_gateway_answer_clear(&a);
	return 0;
}

static void refused(void *ctx, const struct runner_gateway_request *rq, const char *reason)
{
	struct gateway_state *st = ctx;
	json_t *entry =
	    model_trace_http_refused(rq ? rq->method : NULL, rq ? rq->url : NULL, reason);

	if (!entry)
		return;
	json_object_set_new(entry, "duration_us", json_integer(0));
	say_entry(st, entry);
}

static int fail(struct gateway_state *st, const char *what)
{
	json_t *line = json_pack("{s:s, s:s}", "type", "error", "message", what);

	say(st, line);
	json_decref(line);
	return 1;
}

/* DIR's two files of the gateway, then DIR, each if there. */
static void remove_dir(const char *dir)
{
	static const char *const files[] = {RUNNER_GATEWAY_CA_FILE, RUNNER_GATEWAY_SOCK_FILE};
	char path[4096 + 32];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The listening socket the runner hands over on fd 3 once the jail
 * stands (runner/gateway_run.h): 0 with *fd; 1 when a signal in set came
 * first, or the channel ended without one (stopped: the run did not
 * start, or its runner is gone); -1 with why when it broke. SIGTERM,
 * blocked, is watched here too: a channel held open elsewhere must not
 * keep a gateway whose runner is gone. */
static int receive_socket(const sigset_t *set, int *fd, char *why, size_t why_len)
{
	struct pollfd p[2];
	int got, sfd = signalfd(-1, set, SFD_CLOEXEC), rc = -1;

	if (sfd < 0) {
		snprintf(why, why_len, "signalfd: %s", strerror(errno));
		return -1;
	}
	p[0].fd = 3;
	p[0].events = POLLIN;
	p[1].fd = sfd;
	p[1].events = POLLIN;
	while (poll(p, 2, -1) < 0)
		if (errno != EINTR) {
			snprintf(why, why_len, "poll: %s", strerror(errno));
			goto out;
		}
	if (p[1].revents) {
		rc = 1;
		goto out;
	}
	/* (the byte comes with its socket: a hang-up alone is end of file) */
	got = runner_fd_recv(3, 0, fd);
	if (got == 0) {
		rc = 1;
		goto out;
	}
	if (got < 0) {
		snprintf(why, why_len, "descriptor 3 did not bring one listening socket: %s",
		         strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(sfd);
	close(3);
	return rc;
}

static int usage(FILE *to, int status)
{
	fputs("usage: olivares-gateway --dir DIR\n"
#ifndef GATEWAY_EGRESS
	      "       olivares-gateway --serve\n"
#endif
	      "One run's gateway, started by olivares-runner: the run's mocks on stdin, the\n"
	      "jail's listening socket handed over descriptor 3 (a unix socket), a line per\n"
	      "request on stdout.\n"
#ifndef GATEWAY_EGRESS
	      "--serve: the gateway server of a runner's fork server (a SOCK_SEQPACKET\n"
	      "socket on stdin), which forks a run's gateway for each request.\n"
#endif

	      "See olivares-gateway(8).\n",
	      to);
	return status;
}

/* Wait until the gateway is to stop: a signal of set, or its runner gone
 * (the read end of its stdout closed: POLLERR on the write end). A
 * gateway forked by the gateway server is not the runner's child, so
 * the parent-death signal alone would not tell it. */
static void wait_stop(const sigset_t *set)
{
	struct pollfd p[2];
	int sig, sfd = signalfd(-1, set, SFD_CLOEXEC);

	if (sfd < 0) {
		while (sigwait(set, &sig) != 0)
			;
		return;
	}
	p[0].fd = sfd;
	p[0].events = POLLIN;
	p[1].fd = 1;
	p[1].events = 0; /* POLLERR and POLLHUP are always reported */
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	close(sfd);
}

/* One run's gateway, its wire on descriptors 0, 1 and 3 (the file's
 * head): dir the run's directory; ca made already (the gateway server's
 * spares make theirs in advance; taken here), or NULL to make one. */
static int gateway_main(const char *dir, struct runner_gateway_ca *ca)
{
	struct gateway_state st;
	struct runner_gateway_hooks hooks;
	struct runner_gateway *gw = NULL;
	struct runner_error err;
	struct model_buf in;
	char path[4096 + 16];
	char chunk[65536];
	const char *secrets;
	json_t *wire = NULL, *wire_ready;
	json_error_t jerr;
	sigset_t set;
	ssize_t r;
	int sig, lfd = -1, rc = 1;
#ifdef GATEWAY_EGRESS
	int curl_ready = 0;
#endif

	memset(&st, 0, sizeof(st));
	pthread_mutex_init(&st.lock, NULL);
	pthread_mutex_init(&st.out_lock, NULL);
	pthread_cond_init(&st.stop_cond, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* SIGTERM is waited for, by this thread only: blocked before any
	 * thread starts, so every thread inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	model_buf_init(&in, GATEWAY_MAX_INPUT);
#ifndef GATEWAY_EGRESS
	/* OpenSSL's defaults only: this build reaches no host outside (the
	 * egress one keeps the system's settings for its upstream TLS) */
	if (!ca && runner_gateway_openssl_init(&err) != 0) {
		rc = fail(&st, err.message);
		goto out;
	}
#endif
	for (;;) {
		r = read(0, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (model_buf_add(&in, chunk, (size_t)r) != 0) {
			rc = fail(&st, "the mocks are over 8 MiB");
			goto out;
		}
	}
	wire = json_loadb(in.data, in.len, JSON_REJECT_DUPLICATES, &jerr);
	st.mocks = json_object_get(wire, "mocks");
	if (!json_is_array(st.mocks)) {
		snprintf(chunk, sizeof(chunk), "the wire is not {mocks, variant}: %s", jerr.text);
		rc = fail(&st, chunk);
		goto out;
	}
	st.variant = json_string_value(json_object_get(wire, "variant"));
	st.egress_allow = json_object_get(wire, "egress_allow");
	secrets = json_string_value(json_object_get(wire, "egress_secrets"));
	st.record = json_is_true(json_object_get(wire, "record"));
#ifdef GATEWAY_EGRESS
	/* before any thread: runner_gateway_forward's libcurl */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rc = fail(&st, "libcurl cannot start");
		goto out;
	}
	curl_ready = 1;
	/* the values stay in this process: read here, outside the jail */
	if (secrets && runner_gateway_secrets_load(secrets, st.egress_allow, geteuid(), &st.secrets,
	                                           &err) != 0) {
		rc = fail(&st, err.message);
		goto out;
	}
#else
	/* this build forwards nothing: the runner starts the egress one for
	 * a run that may reach a host */
	if (json_array_size(st.egress_allow) > 0 || secrets) {
		rc = fail(&st, "egress hosts given to the gateway without egress "
		               "(olivares-gateway-egress forwards)");
		goto out;
	}
#endif
	st.calls = model_xcalloc(json_array_size(st.mocks) + 1, sizeof(*st.calls));
	if (!ca)
		ca = runner_gateway_ca_new(&err);
	if (!ca) {
		rc = fail(&st, err.message);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, RUNNER_GATEWAY_CA_FILE);
	if (runner_gateway_ca_write_pem(ca, path, &err) != 0) {
		rc = fail(&st, err.message);
		goto out;
	}
	sig = receive_socket(&set, &lfd, chunk, sizeof(chunk));
	if (sig != 0) {
		rc = sig > 0 ? 0 : fail(&st, chunk);
		goto out;
	}
	hooks.answer = answer;
	hooks.refused = refused;
	hooks.ctx = &st;
	gw = runner_gateway_start(lfd, ca, &hooks, &err);
	if (!gw) {
		rc = fail(&st, err.message);
		goto out;
	}
	wire_ready = json_pack("{s:s}", "type", "ready");
	say(&st, wire_ready);
	json_decref(wire_ready);
	wait_stop(&set);
	rc = 0;
out:
	/* The run's directory goes with a stopped gateway, also when the
	 * runner died (its parent-death signal is SIGTERM): the runner
	 * removes it too, whichever comes first. One that could not start
	 * leaves it to the runner, which is building the jail on it and
	 * waits for this reason. */
	if (rc == 0)
		remove_dir(dir);
	pthread_mutex_lock(&st.lock);
	st.stopping = 1;
	pthread_cond_broadcast(&st.stop_cond);
	pthread_mutex_unlock(&st.lock);
	if (gw)
		runner_gateway_stop(gw);
	if (ca)
		runner_gateway_ca_free(ca);
#ifdef GATEWAY_EGRESS
	if (curl_ready)
		curl_global_cleanup();
	runner_gateway_secrets_free(st.secrets);
#endif
	free(st.calls);
	json_decref(wire);
	model_buf_release(&in);
	return rc;
}

#ifndef GATEWAY_EGRESS
/* The gateway server (--serve): started once by a runner's fork server,
 * with a SOCK_SEQPACKET socket as its stdin, so that a run's gateway is a
 * fork of a process whose libraries are loaded and whose OpenSSL is
 * started, not an exec: the exec, the dynamic linking and OpenSSL's first
 * use are most of what a gateway's start costs (bench/RESULTS.md). The
 * wire (runner/gateway_run.h): one request is one message, the run's
 * directory as its bytes (NUL-terminated) and three descriptors, the
 * gateway's fds 0, 1 and 3. Two children are kept: a spare waits for a
 * request with its run's CA made already, and takes it: it replies on the
 * request's fd 3 with a pidfd of itself, and becomes that run's gateway.
 * Every child has SIGTERM as its parent-death signal. */
#define SERVE_CHILDREN 2
#define SERVE_SPARE_FAILED 125
#define SERVE_SPARE_FAILURES_MAX 10
#define SERVE_RETRY_MS 100

/* A spare: its CA made, then one request taken; returns gateway_main's
 * status, never to the server. */
static int serve_spare(pid_t server)
{
	char dir[4096 + 1];
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct runner_gateway_ca *ca;
	struct runner_error err;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	int fds[3], nfds = 0, fd, self, i;
	size_t k, j;
	ssize_t n;

	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
		_exit(SERVE_SPARE_FAILED);
	if (getppid() != server)
		_exit(0);
	/* the server's pidfds of its other children */
	close_range(3, ~0U, 0);
	/* a fork shares its parent's random state: fresh seed for this CA */
	if (RAND_poll() != 1 || !(ca = runner_gateway_ca_new(&err)))
		_exit(SERVE_SPARE_FAILED);
	iov.iov_base = dir;
	iov.iov_len = sizeof(dir) - 1;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do
		n = recvmsg(0, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (n == 0 && mh.msg_controllen == 0))
		_exit(0); /* the fork server hung up */
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (j = 0; j < k; j++) {
			memcpy(&fd, CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
			if (nfds < 3)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	/* taken: a group of its own tells the server so (serve_gateways) */
	setpgid(0, 0);
	if (nfds != 3 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n < 2 || dir[n - 1] != '\0' ||
	    dir[0] != '/' || memchr(dir, '\0', (size_t)n - 1))
		_exit(2);
	/* the pidfd first, on the run's channel: the runner stops this
	 * process through it (it is not the runner's child) */
	self = pidfd_open(getpid(), 0);
	if (self < 0 || runner_fd_send(fds[2], self) != 0)
		_exit(2);
	close(self);
	/* above every target first, so that the moves cannot overwrite
	 * one another */
	for (i = 0; i < 3; i++) {
		fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
		if (fd < 0)
			_exit(2);
		close(fds[i]);
		fds[i] = fd;
	}
	if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 3) < 0)
		_exit(2);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	return gateway_main(dir, ca);
}

static int crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

/* Kill and reap children; with idle_only, only those that took no request
 * (gateways of runs keep serving them). */
static void kill_children(pid_t *pid, int *pidfd, int *n, int idle_only)
{
	int i, st;

	for (i = *n - 1; i >= 0; i--) {
		if (idle_only && getpgid(pid[i]) == pid[i])
			continue;
		kill(pid[i], SIGKILL);
		while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
			;
		close(pidfd[i]);
		pid[i] = pid[*n - 1];
		pidfd[i] = pidfd[*n - 1];
		(*n)--;
	}
}

static int serve_gateways(void)
{
	struct pollfd pfd[1 + SERVE_CHILDREN];
	pid_t pid[SERVE_CHILDREN], server = getpid(), p;
	int pidfd[SERVE_CHILDREN], n = 0, failures = 0, type = 0, st, fd, i, r;
	socklen_t len = sizeof(type);
	struct runner_error err;

	if (getsockopt(0, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
		fputs("olivares-gateway: --serve needs a SOCK_SEQPACKET socket on stdin; it is "
		      "started by olivares-runner's fork server, not by hand\n",
		      stderr);
		return 2;
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	/* OpenSSL started and used once here, so that no spare pays for it */
	if (runner_gateway_openssl_init(&err) != 0) {
		fprintf(stderr, "olivares-gateway: %s\n", err.message);
		return 1;
	}
	runner_gateway_ca_free(runner_gateway_ca_new(&err));
	for (;;) {
		while (n < SERVE_CHILDREN) {
			p = fork();
			if (p == 0)
				exit(serve_spare(server));
			if (p < 0)
				break;
			fd = pidfd_open(p, 0);
			if (fd < 0) {
				kill(p, SIGKILL);
				waitpid(p, &st, 0);
				break;
			}
			pid[n] = p;
			pidfd[n] = fd;
			n++;
		}
		pfd[0].fd = 0;
		pfd[0].events = 0; /* hang-up only: requests are the spares' */
		for (i = 0; i < n; i++) {
			pfd[1 + i].fd = pidfd[i];
			pfd[1 + i].events = POLLIN;
		}
		r = poll(pfd, (nfds_t)(1 + n), n ? -1 : SERVE_RETRY_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || pfd[0].revents) {
			kill_children(pid, pidfd, &n, 0);
			return 0;
		}
		for (i = n - 1; i >= 0; i--) {
			if (!pfd[1 + i].revents)
				continue;
			while ((r = waitpid(pid[i], &st, 0)) < 0 && errno == EINTR)
				;
			close(pidfd[i]);
			pid[i] = pid[n - 1];
			pidfd[i] = pidfd[n - 1];
			n--;
			if (WIFEXITED(st) && WEXITSTATUS(st) == SERVE_SPARE_FAILED) {
				if (++failures >= SERVE_SPARE_FAILURES_MAX) {
					fprintf(stderr,
					        "olivares-gateway: %d spares in a row could "
					        "not get ready; stopping\n",
					        failures);
					kill_children(pid, pidfd, &n, 1);
					return 1;
				}
				poll(NULL, 0, SERVE_RETRY_MS);
				continue;
			}
			failures = 0;
			if (WIFSIGNALED(st) && crash_signal(WTERMSIG(st))) {
				/* A gateway died of a fault (it parses what the
				 * agent sends): every fork shares this process's
				 * address layout and stack canary, so no more
				 * forks of it; the fork server starts a new server. */
				kill_children(pid, pidfd, &n, 1);
				return 3;
			}
		}
	}
}
#endif

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--help") == 0)
		return usage(stdout, 0);
#ifndef GATEWAY_EGRESS
	if (argc == 2 && strcmp(argv[1], "--serve") == 0)
		return serve_gateways();
#endif
	if (argc != 3 || strcmp(argv[1], "--dir") != 0 || argv[2][0] != '/')
		return usage(stderr, 2);
	return gateway_main(argv[2], NULL);
}
