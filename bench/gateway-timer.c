/*
 * bench/gateway-timer: the per-request harness of bench/gateway (not part
 * of the build; bench/gateway compiles it with cc into a temp dir, linked
 * with libcurl).
 *
 *   gateway-timer http GATEWAY N ROUNDS WARMUP
 *
 * Starts GATEWAY (olivares-gateway) as the runner does (runner/gateway_run.h:
 * --dir DIR, the mocks on stdin then end of file, a socket listening on
 * 127.0.0.1 handed over fd 3, a unix socket, once it has started, the
 * "ready" line awaited on its stdout, its stdout
 * read by a thread of its own, as the runner's driver reads it, so that
 * the gateway never waits on a full pipe), with one http mock:
 *   GET http://tools.example.com/search?q=ada -> 200, body "hello"
 * and a minimal responder of its own on 127.0.0.1 (a thread that answers
 * every request head, found by its blank line, with the same five bytes).
 * Then one libcurl easy handle per side, each keeping its connection open
 * (keep-alive, as an agent's client library does), makes N GETs to each:
 * "direct", the url http://127.0.0.1:PORT/search?q=ada on the responder,
 * and "gateway", the mock's url with the gateway as its HTTP proxy. The
 * GETs are taken in ROUNDS rounds of N/ROUNDS (rounded up) on each side in
 * turn, the side that goes first alternating, each side's block after
 * WARMUP untimed GETs; a GET is from just before curl_easy_perform to just
 * after it (CLOCK_MONOTONIC), and it counts as good when it answered 200
 * with the body "hello".
 *
 * CPU time: the client's (this thread's, CLOCK_THREAD_CPUTIME_ID) and the
 * server's (the responder thread's clock, or the gateway process's, which
 * counts every one of its threads, from clock_getcpuclockid) over the
 * timed blocks, per GET.
 *
 * Prints, for each side:
 *   SIDE n=N good=G median_us=M p95_us=P client_cpu_us=C server_cpu_us=S
 * then the gateway's trace lines it read (every GET through it must be one,
 * a hit) and the overhead round by round:
 *   traced requests=R hits=H other_lines=O
 *   rounds n=K diff_min_us=A diff_max_us=B
 * Exit 0 when every GET was good and traced.
 *
 *   gateway-timer start GATEWAY N [--samples]
 *
 * Starts and stops GATEWAY N times, one at a time, with no mock (as a run
 * with "gateway": true and no http mock starts it): for each, the time
 * from just before fork to its "ready" line (the exec, the dynamic
 * linking, libcurl's start, the run's CA made and written), the time from
 * SIGTERM to its reaping, and the CPU time wait4 reports. Prints
 *   start n=N good=G ready_median_ms=R ready_p95_ms=Q stop_median_ms=S cpu_median_ms=C
 * and before it, with --samples, one line per start: "sample READY_MS STOP_MS
 * CPU_MS GOOD" (GOOD 0 for a start that did not say ready).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/fdpass.h"

#define BODY "hello"
#define MOCK_URL "http://tools.example.com/search?q=ada"
#define MOCKS                                                                                      \
	"{\"mocks\":[{\"http\":{\"method\":\"GET\",\"url\":\"" MOCK_URL "\"},"                     \
	"\"response\":{\"status\":200,\"body\":\"" BODY "\"}}],\"variant\":null}"
/* What the responder answers: what the gateway answers for the mock, less
 * its own framing headers, so that both sides carry the same bytes. */
#define RESPONSE                                                                                   \
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "           \
	"5\r\n\r\n" BODY

static double now_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median (mean of the middle two when n is even) and the p95 (the
 * ceil(0.95 n)-th smallest) of v[0..n), sorted here. */
static void stats(double *v, size_t n, double *median, double *p95)
{
	size_t k;

	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	k = (size_t)((double)n * 0.95);
	if ((double)k < (double)n * 0.95)
		k++;
	*p95 = v[k - 1];
}

static int listen_loopback(int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(s, 16) != 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) != 0) {
		close(s);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return s;
}

/* ---- the direct side: a responder that only finds the end of each head -- */

static void *responder_main(void *arg)
{
	int ls = *(int *)arg, c, one = 1;
	char buf[16384];
	size_t len;
	ssize_t r;
	char *end;

	for (;;) {
		c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		len = 0;
		for (;;) {
			/* a GET has no body: its head ends the request */
			while ((end = memmem(buf, len, "\r\n\r\n", 4)) != NULL) {
				len -= (size_t)(end + 4 - buf);
				memmove(buf, end + 4, len);
				if (write(c, RESPONSE, sizeof(RESPONSE) - 1) !=
				    sizeof(RESPONSE) - 1)
					goto next;
			}
			if (len == sizeof(buf))
				goto next;
			r = read(c, buf + len, sizeof(buf) - len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				goto next;
			len += (size_t)r;
		}
	next:
		close(c);
	}
}

/* ---- the gateway, started as the runner starts it ----------------------- */

struct gateway {
	pid_t pid;
	int out;                  /* its stdout */
	char dir[64];             /* its --dir */
	pthread_t reader;         /* reads out after the ready line */
	pthread_mutex_t lock;     /* guards the counts */
	long requests, hits, bad; /* its trace lines */
	char line[65536];
	size_t len;
};

static void gateway_line(struct gateway *g, const char *s, size_t n)
{
	pthread_mutex_lock(&g->lock);
	if (memmem(s, n, "\"type\":\"request\"", 16)) {
		g->requests++;
		if (memmem(s, n, "\"hit\":true", 10))
			g->hits++;
	} else {
		g->bad++;
	}
	pthread_mutex_unlock(&g->lock);
}

/* Read g->out into whole lines; returns 1 at the first line when
 * first_only, else 0 at end of file (or -1 on an error). */
static int gateway_read(struct gateway *g, int first_only, char *first, size_t first_cap)
{
	char *nl;
	size_t n;
	ssize_t r;

	for (;;) {
		while ((nl = memchr(g->line, '\n', g->len)) != NULL) {
			n = (size_t)(nl - g->line);
			if (first_only) {
				snprintf(first, first_cap, "%.*s", (int)n, g->line);
				g->len -= n + 1;
				memmove(g->line, nl + 1, g->len);
				return 1;
			}
			gateway_line(g, g->line, n);
			g->len -= n + 1;
			memmove(g->line, nl + 1, g->len);
		}
		if (g->len == sizeof(g->line))
			g->len = 0; /* a line past any trace entry's size: not its wire */
		r = read(g->out, g->line + g->len, sizeof(g->line) - g->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		g->len += (size_t)r;
	}
}

static void *gateway_reader(void *arg)
{
	gateway_read(arg, 0, NULL, 0);
	return NULL;
}

/* Start GATEWAY on listen_fd (closed here) with mocks: 0 when it said
 * ready, else -1 with its first line (or nothing) in why. */
static int gateway_start(struct gateway *g, const char *program, int listen_fd, const char *mocks,
                         char *why, size_t why_cap)
{
	char *const envp[] = {NULL};
	char first[4096];
	int in[2] = {-1, -1}, out[2] = {-1, -1}, ch[2] = {-1, -1}, null, rc = -1;
	size_t len = strlen(mocks), off;
	ssize_t w;

	why[0] = '\0';
	g->pid = -1;
	g->out = -1;
	g->len = 0;
	snprintf(g->dir, sizeof(g->dir), "/tmp/olv-bench-gw.XXXXXX");
	if (!mkdtemp(g->dir)) {
		snprintf(why, why_cap, "mkdtemp: %s", strerror(errno));
		g->dir[0] = '\0';
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) != 0) {
		snprintf(why, why_cap, "pipe: %s", strerror(errno));
		goto out;
	}
	g->pid = fork();
	if (g->pid < 0) {
		snprintf(why, why_cap, "fork: %s", strerror(errno));
		goto out;
	}
	if (g->pid == 0) {
		char *argv[] = {(char *)"olivares-gateway", (char *)"--dir", g->dir, NULL};

		null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(null, 2) < 0 ||
		    (ch[1] == 3 ? fcntl(3, F_SETFD, 0) : dup2(ch[1], 3)) < 0)
			_exit(126);
		execve(program, argv, envp);
		_exit(127);
	}
	close(ch[1]);
	ch[1] = -1;
	close(in[0]);
	in[0] = -1;
	close(out[1]);
	out[1] = -1;
	g->out = out[0];
	out[0] = -1;
	for (off = 0; off < len; off += (size_t)w) {
		w = write(in[1], mocks + off, len - off);
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w < 0)
			goto out;
	}
	close(in[1]);
	in[1] = -1;
	/* its socket, as the runner hands it once the jail stands */
	if (runner_fd_send(ch[0], listen_fd) != 0) {
		snprintf(why, why_cap, "sendmsg: %s", strerror(errno));
		goto out;
	}
	if (gateway_read(g, 1, first, sizeof(first)) != 1) {
		snprintf(why, why_cap, "it exited before a line");
		goto out;
	}
	if (!strstr(first, "\"type\":\"ready\"")) {
		snprintf(why, why_cap, "%.300s", first);
		goto out;
	}
	rc = 0;
out:
	close(listen_fd);
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

/* SIGTERM, reap (CPU time into *cpu_ms when not NULL), the directory
 * removed. */
static void gateway_stop(struct gateway *g, double *cpu_ms)
{
	char path[128];
	struct rusage ru;
	int st;

	if (g->pid > 0) {
		kill(g->pid, SIGTERM);
		memset(&ru, 0, sizeof(ru));
		while (wait4(g->pid, &st, 0, &ru) < 0 && errno == EINTR)
			;
		if (cpu_ms)
			*cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			          (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
		g->pid = -1;
	}
	if (g->dir[0]) {
		snprintf(path, sizeof(path), "%s/ca.pem", g->dir);
		unlink(path);
		rmdir(g->dir);
		g->dir[0] = '\0';
	}
}

/* ---- http: the N GETs on each side -------------------------------------- */

struct side {
	const char *name;
	CURL *curl;
	clockid_t server_clock;
	double *wall; /* per timed GET, us */
	int *round;   /* its round */
	size_t n, good;
	double client_cpu, server_cpu; /* us, over the timed GETs */
	char body[64];
	size_t body_len;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct side *s = ctx;
	size_t n = size * nmemb;

	if (s->body_len + n < sizeof(s->body)) {
		memcpy(s->body + s->body_len, data, n);
		s->body_len += n;
	} else {
		s->body_len = sizeof(s->body); /* too long: never BODY */
	}
	return n;
}

/* One GET: 1 when good. */
static int get(struct side *s)
{
	long status = 0;

	s->body_len = 0;
	if (curl_easy_perform(s->curl) != CURLE_OK)
		return 0;
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	return status == 200 && s->body_len == sizeof(BODY) - 1 &&
	       memcmp(s->body, BODY, s->body_len) == 0;
}

static void block(struct side *s, long count, long warm, int round)
{
	double t0, c0, s0;
	long i;

	for (i = 0; i < warm; i++)
		get(s);
	c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
	s0 = now_us(s->server_clock);
	for (i = 0; i < count; i++) {
		t0 = now_us(CLOCK_MONOTONIC);
		s->good += (size_t)get(s);
		s->wall[s->n] = now_us(CLOCK_MONOTONIC) - t0;
		s->round[s->n++] = round;
	}
	s->client_cpu += now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
	s->server_cpu += now_us(s->server_clock) - s0;
}

static void side_report(struct side *s)
{
	double *v = malloc(s->n * sizeof(*v)), med, p95;

	memcpy(v, s->wall, s->n * sizeof(*v));
	stats(v, s->n, &med, &p95);
	printf("%s n=%zu good=%zu median_us=%.1f p95_us=%.1f client_cpu_us=%.1f "
	       "server_cpu_us=%.1f\n",
	       s->name, s->n, s->good, med, p95, s->client_cpu / (double)s->n,
	       s->server_cpu / (double)s->n);
	free(v);
}

/* The median of side s's GETs of round r, us. */
static double round_median(const struct side *s, int r)
{
	double *v = malloc(s->n * sizeof(*v)), med, p95;
	size_t i, k = 0;

	for (i = 0; i < s->n; i++)
		if (s->round[i] == r)
			v[k++] = s->wall[i];
	stats(v, k, &med, &p95);
	free(v);
	return med;
}

static int run_http(const char *program, long n, long rounds, long warm)
{
	struct gateway g;
	struct side sides[2], *a, *b;
	pthread_t responder;
	char url[128], proxy[64], why[512];
	int rport, gport, rls, gls, r;
	long per = (n + rounds - 1) / rounds;
	double lo = 0, hi = 0, d;
	size_t total;
	int rc = 1;

	memset(&g, 0, sizeof(g));
	memset(sides, 0, sizeof(sides));
	pthread_mutex_init(&g.lock, NULL);
	rls = listen_loopback(&rport);
	gls = listen_loopback(&gport);
	if (rls < 0 || gls < 0) {
		fprintf(stderr, "gateway-timer: cannot listen on 127.0.0.1: %s\n", strerror(errno));
		return 1;
	}
	if (gateway_start(&g, program, gls, MOCKS, why, sizeof(why)) != 0) {
		fprintf(stderr, "gateway-timer: the gateway did not start: %s\n", why);
		gateway_stop(&g, NULL);
		return 1;
	}
	pthread_create(&g.reader, NULL, gateway_reader, &g);
	pthread_create(&responder, NULL, responder_main, &rls);
	total = (size_t)(per * rounds);
	sides[0].name = "direct";
	sides[1].name = "gateway";
	if (pthread_getcpuclockid(responder, &sides[0].server_clock) != 0 ||
	    clock_getcpuclockid(g.pid, &sides[1].server_clock) != 0) {
		fprintf(stderr, "gateway-timer: no CPU clock for the servers\n");
		goto out;
	}
	for (r = 0; r < 2; r++) {
		sides[r].wall = calloc(total, sizeof(double));
		sides[r].round = calloc(total, sizeof(int));
		sides[r].curl = curl_easy_init();
		curl_easy_setopt(sides[r].curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(sides[r].curl, CURLOPT_WRITEDATA, &sides[r]);
		curl_easy_setopt(sides[r].curl, CURLOPT_TCP_NODELAY, 1L);
		curl_easy_setopt(sides[r].curl, CURLOPT_TIMEOUT_MS, 10000L);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/search?q=ada", rport);
	curl_easy_setopt(sides[0].curl, CURLOPT_URL, url);
	/* "" is no proxy at all, whatever the environment says */
	curl_easy_setopt(sides[0].curl, CURLOPT_PROXY, "");
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", gport);
	curl_easy_setopt(sides[1].curl, CURLOPT_URL, MOCK_URL);
	curl_easy_setopt(sides[1].curl, CURLOPT_PROXY, proxy);
	for (r = 1; r <= rounds; r++) {
		a = &sides[r % 2];
		b = &sides[1 - r % 2];
		block(a, per, warm, r);
		block(b, per, warm, r);
		d = round_median(&sides[1], r) - round_median(&sides[0], r);
		if (r == 1 || d < lo)
			lo = d;
		if (r == 1 || d > hi)
			hi = d;
	}
	side_report(&sides[0]);
	side_report(&sides[1]);
	for (r = 0; r < 2; r++)
		curl_easy_cleanup(sides[r].curl); /* the gateway's connection closed */
	gateway_stop(&g, NULL);                   /* its stdout at EOF: the reader ends */
	pthread_join(g.reader, NULL);
	close(g.out);
	printf("traced requests=%ld hits=%ld other_lines=%ld\n", g.requests, g.hits, g.bad);
	printf("rounds n=%ld diff_min_us=%.1f diff_max_us=%.1f\n", rounds, lo, hi);
	/* every GET through the gateway, warm-ups too, is one hit */
	rc = sides[0].good == total && sides[1].good == total &&
	             g.requests == (long)(total + (size_t)(warm * rounds)) &&
	             g.hits == g.requests && g.bad == 0
	         ? 0
	         : 1;
	free(sides[0].wall);
	free(sides[0].round);
	free(sides[1].wall);
	free(sides[1].round);
	return rc;
out:
	gateway_stop(&g, NULL);
	return rc;
}

/* ---- start: the gateway's own start and stop ------------------------------ */

static int run_start(const char *program, long n, int samples)
{
	struct gateway g;
	double *ready = calloc((size_t)n, sizeof(double)),
	       *stop = calloc((size_t)n, sizeof(double));
	double *cpu = calloc((size_t)n, sizeof(double));
	double t0, t1, rmed, rp95, smed, sp95, cmed, cp95;
	char why[512];
	long i, good = 0;
	int ls, port, ok;

	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.lock, NULL);
	for (i = 0; i < n; i++) {
		ls = listen_loopback(&port);
		if (ls < 0) {
			fprintf(stderr, "gateway-timer: cannot listen: %s\n", strerror(errno));
			return 1;
		}
		t0 = now_us(CLOCK_MONOTONIC);
		ok = gateway_start(&g, program, ls, "{\"mocks\":[],\"variant\":null}", why,
		                   sizeof(why)) == 0;
		good += ok;
		if (!ok && good == i)
			fprintf(stderr, "gateway-timer: the gateway did not start: %s\n", why);
		t1 = now_us(CLOCK_MONOTONIC);
		gateway_stop(&g, &cpu[i]);
		stop[i] = (now_us(CLOCK_MONOTONIC) - t1) / 1e3;
		ready[i] = (t1 - t0) / 1e3;
		if (g.out >= 0)
			close(g.out);
		if (samples)
			printf("sample %.3f %.3f %.3f %d\n", ready[i], stop[i], cpu[i], ok);
	}
	stats(ready, (size_t)n, &rmed, &rp95);
	stats(stop, (size_t)n, &smed, &sp95);
	stats(cpu, (size_t)n, &cmed, &cp95);
	printf("start n=%ld good=%ld ready_median_ms=%.3f ready_p95_ms=%.3f stop_median_ms=%.3f "
	       "cpu_median_ms=%.3f\n",
	       n, good, rmed, rp95, smed, cmed);
	free(ready);
	free(stop);
	free(cpu);
	return good == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	long n, rounds, warm;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 6 && strcmp(argv[1], "http") == 0) {
		n = strtol(argv[3], NULL, 10);
		rounds = strtol(argv[4], NULL, 10);
		warm = strtol(argv[5], NULL, 10);
		if (n < 1 || rounds < 1 || warm < 0) {
			fprintf(stderr, "gateway-timer: bad N, ROUNDS or WARMUP\n");
			return 2;
		}
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return 1;
		return run_http(argv[2], n, rounds, warm);
	}
	if ((argc == 4 || (argc == 5 && strcmp(argv[4], "--samples") == 0)) &&
	    strcmp(argv[1], "start") == 0) {
		n = strtol(argv[3], NULL, 10);
		if (n < 1) {
			fprintf(stderr, "gateway-timer: bad N\n");
			return 2;
		}
		return run_start(argv[2], n, argc == 5);
	}
	fprintf(stderr,
	        "usage: %s http GATEWAY N ROUNDS WARMUP\n"
	        "       %s start GATEWAY N [--samples]\n",
	        argv[0], argv[0]);
	return 2;
}
