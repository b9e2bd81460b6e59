/*
 * Unit tests of the per-run gateway (runner/gateway.h), with no jail: a
 * gateway on a loopback TCP socket (and one on a unix socket) whose answer
 * hook echoes what it got as JSON, driven by libcurl (as a proxy, TLS
 * verified against the run's CA) and by raw sockets for what a library
 * client would never send; python3's urllib once, as agents use it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "model/alloc.h"
#include "runner/gateway.h"
#include "tests/unit/unit.h"

/* ---- the echo hook ---------------------------------------------------------- */

struct rec {
	pthread_mutex_t lock;
	int answered;
	int nrefused;
	char refused[16][256];
	char refused_method[16][16];
};

static struct rec rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *hdr(json_t *headers, const char *name)
{
	size_t i;
	json_t *h;

	json_array_foreach(headers, i, h)
	{
		if (strcasecmp(json_string_value(json_array_get(h, 0)), name) == 0)
			return json_string_value(json_array_get(h, 1));
	}
	return NULL;
}

/* Echo the request as JSON; "X-Delay: N" asks for delay_ms N, "X-Status: N"
 * for status N, "X-Fail: 1" for the hook to fail, "X-Size: N" for a body
 * of N bytes of 'z'. */
static int echo_answer(void *ctx, const struct runner_gateway_request *rq,
                       struct runner_gateway_response *rs)
{
	json_t *o;
	const char *v;

	(void)ctx;
	pthread_mutex_lock(&rec.lock);
	rec.answered++;
	pthread_mutex_unlock(&rec.lock);
	if (hdr(rq->headers, "x-fail") != NULL)
		return -1;
	rs->status = 200;
	v = hdr(rq->headers, "x-status");
	if (v != NULL)
		rs->status = atoi(v);
	v = hdr(rq->headers, "x-delay");
	if (v != NULL)
		rs->delay_ms = atol(v);
	rs->headers = json_pack("[[ss][ss][ss]]", "X-Echo", "1", "Content-Type", "application/json",
	                        "Content-Length", "999");
	v = hdr(rq->headers, "x-size");
	if (v != NULL) {
		rs->body_len = (size_t)atol(v);
		rs->body = unit_rep('z', rs->body_len);
		return 0;
	}
	o = json_pack("{ss ss ss ss si sO ss#}", "method", rq->method, "url", rq->url, "scheme",
	              rq->scheme, "host", rq->host, "port", rq->port, "headers", rq->headers,
	              "body", rq->body, rq->body_len);
	ck_assert_ptr_nonnull(o);
	rs->body = json_dumps(o, JSON_COMPACT);
	rs->body_len = strlen(rs->body);
	json_decref(o);
	return 0;
}

static void echo_refused(void *ctx, const struct runner_gateway_request *rq, const char *reason)
{
	(void)ctx;
	pthread_mutex_lock(&rec.lock);
	if (rec.nrefused < 16) {
		snprintf(rec.refused[rec.nrefused], sizeof(rec.refused[0]), "%s", reason);
		snprintf(rec.refused_method[rec.nrefused], sizeof(rec.refused_method[0]), "%s",
		         rq->method != NULL ? rq->method : "");
		rec.nrefused++;
	}
	pthread_mutex_unlock(&rec.lock);
}

/* The first refusal's reason, waiting up to 2 s for one ("" if none). */
static const char *refused_reason(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		pthread_mutex_lock(&rec.lock);
		if (rec.nrefused > 0) {
			pthread_mutex_unlock(&rec.lock);
			return rec.refused[0];
		}
		pthread_mutex_unlock(&rec.lock);
		usleep(10000);
	}
	return "";
}

/* ---- gateways --------------------------------------------------------------- */

struct gw_fixture {
	struct runner_gateway_ca *ca;
	struct runner_gateway *gw;
	int port;
	char ca_file[64];
};

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int tcp_listener(int *port)
{
	struct sockaddr_in a;
	socklen_t len;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 64), 0);
	len = sizeof(a);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A gateway with its own CA (written to a temp file) on loopback TCP. */
static void gw_up(struct gw_fixture *f, long idle_ms)
{
	struct runner_gateway_hooks hooks = {
	    .answer = echo_answer, .refused = echo_refused, .ctx = NULL, .idle_ms = idle_ms};
	struct runner_error err;
	int fd;

	memset(&rec.refused, 0, sizeof(rec.refused));
	rec.nrefused = 0;
	rec.answered = 0;
	f->ca = runner_gateway_ca_new(&err);
	ck_assert_msg(f->ca != NULL, "%s", err.message);
	snprintf(f->ca_file, sizeof(f->ca_file), "/tmp/olv-gw-ca-XXXXXX");
	fd = mkstemp(f->ca_file);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(runner_gateway_ca_write_pem(f->ca, f->ca_file, &err), 0);
	fd = tcp_listener(&f->port);
	f->gw = runner_gateway_start(fd, f->ca, &hooks, &err);
	ck_assert_msg(f->gw != NULL, "%s", err.message);
}

static void gw_down(struct gw_fixture *f)
{
	runner_gateway_stop(f->gw);
	runner_gateway_ca_free(f->ca);
	unlink(f->ca_file);
}

/* ---- clients --------------------------------------------------------------------- */

struct reply {
	long status;
	struct {
		char *data;
		size_t len;
	} body;
	CURLcode cc;
	json_t *echo; /* the body parsed, when it is JSON */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;

	r->body.data = model_xrealloc(r->body.data, r->body.len + size * n + 1);
	memcpy(r->body.data + r->body.len, p, size * n);
	r->body.len += size * n;
	r->body.data[r->body.len] = '\0';
	return size * n;
}

static void reply_free(struct reply *r)
{
	free(r->body.data);
	json_decref(r->echo);
}

/* One request with libcurl through the gateway as its proxy (unix_path
 * NULL), or straight to a unix socket; headers NULL-terminated. */
static void curl_do(CURL *h, const char *url, int port, const char *cainfo, const char *unix_path,
                    const char *body, const char *const *headers, struct reply *r)
{
	struct curl_slist *list;
	char proxy[64];
	size_t i;

	memset(r, 0, sizeof(*r));
	list = NULL;
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		list = curl_slist_append(list, headers[i]);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (unix_path != NULL) {
		curl_easy_setopt(h, CURLOPT_PROXY, "");
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, unix_path);
	} else {
		snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", port);
		curl_easy_setopt(h, CURLOPT_PROXY, proxy);
	}
	if (cainfo != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, cainfo);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (body != NULL)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	r->cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->body.data != NULL)
		r->echo = json_loads(r->body.data, 0, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(list);
}

static void curl_once(const char *url, int port, const char *cainfo, const char *body,
                      const char *const *headers, struct reply *r)
{
	CURL *h = curl_easy_init();

	curl_do(h, url, port, cainfo, NULL, body, headers, r);
	curl_easy_cleanup(h);
}

static const char *echo_str(const struct reply *r, const char *key)
{
	ck_assert_msg(r->echo != NULL, "not an echo: %s", r->body.data ? r->body.data : "(none)");
	return json_string_value(json_object_get(r->echo, key));
}

static int raw_connect(int port)
{
	struct sockaddr_in a;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void raw_send(int fd, const char *data, size_t len)
{
	size_t off;
	ssize_t n;

	for (off = 0; off < len; off += (size_t)n) {
		n = send(fd, data + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		/* a gateway that refused may close before all of it is sent */
		if (n <= 0)
			return;
	}
}

/* Everything the gateway sends until it closes (or timeout_ms), malloc'd. */
static char *raw_read_all(int fd, long timeout_ms)
{
	struct pollfd p;
	long long deadline;
	char *out;
	size_t len;
	ssize_t n;

	out = model_xmalloc(1);
	len = 0;
	deadline = ms_now() + timeout_ms;
	for (;;) {
		p.fd = fd;
		p.events = POLLIN;
		if (ms_now() >= deadline || poll(&p, 1, (int)(deadline - ms_now())) <= 0)
			break;
		out = model_xrealloc(out, len + 65536 + 1);
		n = recv(fd, out + len, 65536, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	return out;
}

/* Send req on a new connection, return all that comes back. */
static char *raw_exchange(int port, const char *req, size_t len)
{
	char *out;
	int fd;

	fd = raw_connect(port);
	raw_send(fd, req, len);
	out = raw_read_all(fd, 5000);
	close(fd);
	return out;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay != NULL; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* ---- plain http ---------------------------------------------------------------- */

START_TEST(test_http_proxy)
{
	struct gw_fixture f;
	struct reply r;
	const char *const hs[] = {"X-Trace: a1", NULL};
	json_t *h;

	gw_up(&f, 0);
	curl_once("http://Example.TEST/v1/items?q=1&r=2", f.port, NULL, NULL, hs, &r);
	ck_assert_int_eq(r.cc, CURLE_OK);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "method"), "GET");
	ck_assert_str_eq(echo_str(&r, "url"), "http://example.test/v1/items?q=1&r=2");
	ck_assert_str_eq(echo_str(&r, "scheme"), "http");
	ck_assert_str_eq(echo_str(&r, "host"), "example.test");
	ck_assert_int_eq(json_integer_value(json_object_get(r.echo, "port")), 80);
	ck_assert_str_eq(echo_str(&r, "body"), "");
	/* the headers as sent, in order: Host first (curl's), ours after */
	h = json_object_get(r.echo, "headers");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(h, 0), 0)), "Host");
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(h, 0), 1)),
	                 "Example.TEST");
	ck_assert_str_eq(hdr(h, "x-trace"), "a1");
	reply_free(&r);

	/* a port that is not the default is kept, a POST body passed whole */
	curl_once("http://api.test:8080/p", f.port, NULL, "{\"a\":1}", NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "method"), "POST");
	ck_assert_str_eq(echo_str(&r, "url"), "http://api.test:8080/p");
	ck_assert_int_eq(json_integer_value(json_object_get(r.echo, "port")), 8080);
	ck_assert_str_eq(echo_str(&r, "body"), "{\"a\":1}");
	reply_free(&r);

	/* an explicit default port is left out of the url; an IPv6 host is
	 * bracketed */
	curl_once("http://[::1]:80/six", f.port, NULL, NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "url"), "http://[::1]/six");
	ck_assert_str_eq(echo_str(&r, "host"), "[::1]");
	reply_free(&r);
	ck_assert_int_eq(rec.answered, 3);
	ck_assert_int_eq(rec.nrefused, 0);
	gw_down(&f);
}
END_TEST

/* the hook's headers are sent (hop-by-hop and its Content-Length
 * dropped), a failing hook is a 502, a status passes through */
START_TEST(test_answer_framing)
{
	struct gw_fixture f;
	const char req[] = "GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nX-Status: 404\r\n"
	                   "Connection: close\r\n\r\n";
	const char fail[] = "GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nX-Fail: 1\r\n"
	                    "Connection: close\r\n\r\n";
	const char head[] = "HEAD http://a.test/x HTTP/1.1\r\nHost: a.test\r\nX-Size: 10\r\n"
	                    "Connection: close\r\n\r\n";
	char *out;

	gw_up(&f, 0);
	out = raw_exchange(f.port, req, sizeof(req) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 404 Not Found\r\n", 24) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "\r\nX-Echo: 1\r\n"));
	ck_assert_ptr_null(strstr(out, "Content-Length: 999"));
	ck_assert_int_eq(count(out, "Content-Length:"), 1);
	ck_assert_ptr_nonnull(strstr(out, "\r\nConnection: close\r\n"));
	free(out);
	out = raw_exchange(f.port, fail, sizeof(fail) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 502 ", 13) == 0, "%s", out);
	ck_assert_ptr_nonnull(
	    strstr(out, "Content-Length: 17\r\nConnection: close\r\n\r\n[[gateway-error]]"));
	free(out);
	/* HEAD: the length of the body, no body */
	out = raw_exchange(f.port, head, sizeof(head) - 1);
	ck_assert_ptr_nonnull(strstr(out, "Content-Length: 10\r\n"));
	ck_assert_msg(strcmp(out + strlen(out) - 4, "\r\n\r\n") == 0, "%s", out);
	free(out);
	gw_down(&f);
}
END_TEST

START_TEST(test_origin_form)
{
	struct gw_fixture f;
	const char req[] =
	    "GET /v1/x?y=2 HTTP/1.1\r\nHost: API.local:9000\r\nConnection: close\r\n\r\n";
	const char nohost[] = "GET /v1/x HTTP/1.1\r\nConnection: close\r\n\r\n";
	const char badport[] =
	    "GET /v1/x HTTP/1.1\r\nHost: a.test:99999\r\nConnection: close\r\n\r\n";
	const char badhost[] = "GET /v1/x HTTP/1.1\r\nHost: a!b\r\nConnection: close\r\n\r\n";
	char *out;
	char *body;
	json_t *o;

	gw_up(&f, 0);
	out = raw_exchange(f.port, req, sizeof(req) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", out);
	body = strstr(out, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	o = json_loads(body + 4, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "url")),
	                 "http://api.local:9000/v1/x?y=2");
	ck_assert_str_eq(json_string_value(json_object_get(o, "host")), "api.local");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "port")), 9000);
	json_decref(o);
	free(out);
	/* without a Host there is no url to make */
	out = raw_exchange(f.port, nohost, sizeof(nohost) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 400 ", 13) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "[[gateway-refused:origin-form request without"));
	ck_assert_str_eq(refused_reason(), "origin-form request without a valid Host header");
	ck_assert_str_eq(rec.refused_method[0], "GET");
	free(out);
	rec.nrefused = 0;
	out = raw_exchange(f.port, badport, sizeof(badport) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 400 ", 13) == 0, "%s", out);
	ck_assert_str_eq(refused_reason(), "Host header a.test:99999 is not a host");
	free(out);
	rec.nrefused = 0;
	out = raw_exchange(f.port, badhost, sizeof(badhost) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 400 ", 13) == 0, "%s", out);
	ck_assert_str_eq(refused_reason(), "Host header a!b is not a host");
	free(out);
	ck_assert_int_eq(rec.answered, 1);
	gw_down(&f);
}
END_TEST

/* the jail's side of one backend: a unix stream socket */
START_TEST(test_unix_socket)
{
	struct runner_gateway_hooks hooks = {.answer = echo_answer, .refused = echo_refused};
	struct runner_error err;
	struct runner_gateway *gw;
	struct sockaddr_un a;
	struct reply r;
	char path[64];
	CURL *h;
	int fd;

	snprintf(path, sizeof(path), "/tmp/olv-gw-%d.sock", (int)getpid());
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	gw = runner_gateway_start(fd, NULL, &hooks, &err);
	ck_assert_msg(gw != NULL, "%s", err.message);
	h = curl_easy_init();
	curl_do(h, "http://localhost:3128/v1/models", 0, NULL, path, NULL, NULL, &r);
	ck_assert_int_eq(r.cc, CURLE_OK);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "url"), "http://localhost:3128/v1/models");
	reply_free(&r);
	curl_easy_cleanup(h);
	runner_gateway_stop(gw);
	unlink(path);

	/* a socket that is not listening is refused (and closed) */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_ptr_null(runner_gateway_start(fd, NULL, &hooks, &err));
	ck_assert_int_eq(err.kind, RUNNER_E_SETUP);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
}
END_TEST

/* ---- https ---------------------------------------------------------------------- */

START_TEST(test_https_connect)
{
	struct gw_fixture f;
	struct gw_fixture other;
	struct reply r;
	CURL *h;
	long connects;

	gw_up(&f, 0);
	h = curl_easy_init();
	curl_do(h, "https://API.openai.test/v1/chat/completions", f.port, f.ca_file, NULL,
	        "{\"model\":\"m\"}", NULL, &r);
	ck_assert_msg(r.cc == CURLE_OK, "%s", curl_easy_strerror(r.cc));
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "url"), "https://api.openai.test/v1/chat/completions");
	ck_assert_str_eq(echo_str(&r, "scheme"), "https");
	ck_assert_str_eq(echo_str(&r, "host"), "api.openai.test");
	ck_assert_int_eq(json_integer_value(json_object_get(r.echo, "port")), 443);
	ck_assert_str_eq(echo_str(&r, "body"), "{\"model\":\"m\"}");
	reply_free(&r);
	/* the tunnel is kept: a second request on it, no new connection */
	curl_do(h, "https://api.openai.test/v1/models", f.port, f.ca_file, NULL, NULL, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(echo_str(&r, "url"), "https://api.openai.test/v1/models");
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	ck_assert_int_eq(connects, 0);
	reply_free(&r);
	curl_easy_cleanup(h);

	/* an IP address: the leaf's SAN is an IP address */
	curl_once("https://127.0.0.9/ip", f.port, f.ca_file, NULL, NULL, &r);
	ck_assert_msg(r.cc == CURLE_OK, "%s", curl_easy_strerror(r.cc));
	ck_assert_str_eq(echo_str(&r, "url"), "https://127.0.0.9/ip");
	reply_free(&r);
	ck_assert_int_eq(rec.nrefused, 0);

	/* another run's CA does not verify this run's leaves */
	gw_up(&other, 0);
	rec.nrefused = 0;
	curl_once("https://api.openai.test/v1/models", f.port, other.ca_file, NULL, NULL, &r);
	ck_assert_int_eq(r.cc, CURLE_PEER_FAILED_VERIFICATION);
	ck_assert_ptr_nonnull(strstr(refused_reason(), "TLS handshake for api.openai.test failed"));
	reply_free(&r);
	gw_down(&other);
	gw_down(&f);
}
END_TEST

START_TEST(test_ca_pem)
{
	struct gw_fixture f;
	struct stat st;
	char buf[4096];
	char *pem;
	size_t len;
	ssize_t n;
	int fd;

	gw_up(&f, 0);
	ck_assert_int_eq(stat(f.ca_file, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	fd = open(f.ca_file, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	pem = runner_gateway_ca_pem(f.ca, &len);
	ck_assert_uint_eq(len, (size_t)n);
	ck_assert_str_eq(pem, buf);
	ck_assert_int_eq(strncmp(buf, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	ck_assert_int_eq(count(buf, "-----BEGIN "), 1);
	ck_assert_ptr_null(strstr(buf, "PRIVATE"));
	free(pem);
	gw_down(&f);
}
END_TEST

/* ---- keep-alive and bodies ------------------------------------------------------- */

START_TEST(test_keep_alive_pipelined)
{
	struct gw_fixture f;
	const char req[] =
	    "GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n"
	    "GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n";
	char *out;

	gw_up(&f, 0);
	/* both requests in one write: answered in order on one connection */
	out = raw_exchange(f.port, req, sizeof(req) - 1);
	ck_assert_int_eq(count(out, "HTTP/1.1 200 OK\r\n"), 2);
	ck_assert_ptr_nonnull(strstr(out, "\"url\":\"http://a.test/1\""));
	ck_assert_ptr_nonnull(strstr(out, "\"url\":\"http://a.test/2\""));
	ck_assert(strstr(out, "a.test/1\"") < strstr(out, "a.test/2\""));
	ck_assert_int_eq(count(out, "Connection: close"), 1);
	ck_assert_int_eq(rec.answered, 2);
	free(out);
	gw_down(&f);
}
END_TEST

START_TEST(test_chunked_body)
{
	struct gw_fixture f;
	const char req[] = "POST http://a.test/c HTTP/1.1\r\nHost: a.test\r\n"
	                   "Transfer-Encoding: chunked\r\nX-Empty:\r\nConnection: close\r\n\r\n"
	                   "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
	char *out;

	gw_up(&f, 0);
	out = raw_exchange(f.port, req, sizeof(req) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "\"body\":\"hello world\""));
	ck_assert_ptr_nonnull(strstr(out, "[\"Transfer-Encoding\",\"chunked\"]"));
	/* a header with an empty value is kept, empty */
	ck_assert_ptr_nonnull(strstr(out, "[\"X-Empty\",\"\"]"));
	free(out);
	gw_down(&f);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------- */

/* Send req, expect an answer starting with status_line and a refusal
 * whose reason holds reason_part. */
static void expect_refusal(int port, const char *req, size_t len, const char *status_line,
                           const char *reason_part)
{
	char *out;
	const char *why;

	rec.nrefused = 0;
	out = raw_exchange(port, req, len);
	ck_assert_msg(strncmp(out, status_line, strlen(status_line)) == 0, "got: %.200s", out);
	ck_assert_ptr_nonnull(strstr(out, "\r\nConnection: close\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "[[gateway-refused:"));
	ck_assert_msg(strstr(out, reason_part) != NULL, "got: %.300s", out);
	why = refused_reason();
	ck_assert_msg(strstr(why, reason_part) != NULL, "refused: %s", why);
	free(out);
}

START_TEST(test_refusals)
{
	struct gw_fixture f;
	const char c80[] = "CONNECT example.test:80 HTTP/1.1\r\nHost: example.test:80\r\n\r\n";
	const char h2[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	const char ws[] = "GET http://a.test/ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\n"
	                  "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n";
	const char bad[] = "GET http://a.test/x HTTP/1.1\r\nHost a.test\r\n\r\n";
	const char ftp[] = "GET ftp://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n";

	gw_up(&f, 0);
	expect_refusal(f.port, c80, sizeof(c80) - 1, "HTTP/1.1 403 Forbidden\r\n",
	               "CONNECT to port 80 refused: only 443 is served");
	ck_assert_str_eq(rec.refused_method[0], "CONNECT");
	expect_refusal(f.port, h2, sizeof(h2) - 1, "HTTP/1.1 505 ", "HTTP/2 connection preface");
	expect_refusal(f.port, ws, sizeof(ws) - 1, "HTTP/1.1 501 ",
	               "Upgrade to websocket not supported");
	expect_refusal(f.port, bad, sizeof(bad) - 1, "HTTP/1.1 400 ", "malformed request");
	expect_refusal(f.port, ftp, sizeof(ftp) - 1, "HTTP/1.1 400 ", "neither a path nor");
	ck_assert_int_eq(rec.answered, 0);
	gw_down(&f);
}
END_TEST

START_TEST(test_bounds)
{
	struct gw_fixture f;
	char *big;
	char *req;
	size_t n;
	const char cl[] = "POST http://a.test/b HTTP/1.1\r\nHost: a.test\r\n"
	                  "Content-Length: 2000000\r\n\r\nabc";
	const char head_ok[] =
	    "GET http://a.test/h HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n";

	gw_up(&f, 0);
	/* a head over 64 KiB: one header of 70 000 bytes */
	big = unit_rep('h', 70000);
	n = strlen(big) + 200;
	req = model_xmalloc(n);
	snprintf(req, n, "GET http://a.test/h HTTP/1.1\r\nHost: a.test\r\nX-Big: %s\r\n\r\n", big);
	expect_refusal(f.port, req, strlen(req), "HTTP/1.1 431 ", "request head over 65536 bytes");
	free(req);
	free(big);
	/* just under it is served */
	big = unit_rep('h', 60000);
	n = strlen(big) + 200;
	req = model_xmalloc(n);
	snprintf(req, n, "%sX-Big: %s\r\n\r\n", head_ok, big);
	big[0] = '\0';
	free(big);
	big = raw_exchange(f.port, req, strlen(req));
	ck_assert_msg(strncmp(big, "HTTP/1.1 200 OK\r\n", 17) == 0, "%.100s", big);
	free(big);
	free(req);
	/* a Content-Length over 1 MiB, refused before its body */
	expect_refusal(f.port, cl, sizeof(cl) - 1, "HTTP/1.1 413 ",
	               "request body over 1048576 bytes");
	/* a chunked body that grows past 1 MiB */
	big = unit_rep('b', 65536);
	n = 0;
	req = model_xmalloc(18 * (65536 + 16) + 200);
	n = (size_t)sprintf(req, "POST http://a.test/b HTTP/1.1\r\nHost: a.test\r\n"
	                         "Transfer-Encoding: chunked\r\n\r\n");
	for (int i = 0; i < 17; i++)
		n += (size_t)sprintf(req + n, "10000\r\n%s\r\n", big);
	n += (size_t)sprintf(req + n, "0\r\n\r\n");
	expect_refusal(f.port, req, n, "HTTP/1.1 413 ", "request body over 1048576 bytes");
	free(req);
	free(big);
	ck_assert_int_eq(rec.answered, 1);
	gw_down(&f);
}
END_TEST

/* a client that stops mid-request: 408 after the idle timeout */
START_TEST(test_idle_timeout)
{
	struct gw_fixture f;
	const char part[] =
	    "POST http://a.test/b HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n"
	    "\r\nab";
	long long t0;
	char *out;
	int fd;

	gw_up(&f, 300);
	fd = raw_connect(f.port);
	raw_send(fd, part, sizeof(part) - 1);
	t0 = ms_now();
	out = raw_read_all(fd, 5000);
	ck_assert_int_ge(ms_now() - t0, 250);
	ck_assert_int_lt(ms_now() - t0, 3000);
	ck_assert_msg(strncmp(out, "HTTP/1.1 408 ", 13) == 0, "%s", out);
	ck_assert_str_eq(refused_reason(), "idle timeout mid-request");
	free(out);
	close(fd);
	/* between requests the close is quiet */
	rec.nrefused = 0;
	fd = raw_connect(f.port);
	out = raw_read_all(fd, 5000);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(rec.nrefused, 0);
	free(out);
	close(fd);
	gw_down(&f);
}
END_TEST

START_TEST(test_too_many_connections)
{
	struct gw_fixture f;
	int fds[RUNNER_GATEWAY_MAX_CONNS];
	const char req[] = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
	char *out;
	int i;

	gw_up(&f, 0);
	for (i = 0; i < RUNNER_GATEWAY_MAX_CONNS; i++) {
		fds[i] = raw_connect(f.port);
		/* each is served, so each holds its thread */
		raw_send(fds[i], req, sizeof(req) - 1);
	}
	for (i = 0; i < 200 && rec.answered < RUNNER_GATEWAY_MAX_CONNS; i++)
		usleep(10000);
	ck_assert_int_eq(rec.answered, RUNNER_GATEWAY_MAX_CONNS);
	out = raw_exchange(f.port, req, sizeof(req) - 1);
	ck_assert_msg(strncmp(out, "HTTP/1.1 503 ", 13) == 0, "%s", out);
	ck_assert_str_eq(refused_reason(), "more than 32 connections at once");
	free(out);
	for (i = 0; i < RUNNER_GATEWAY_MAX_CONNS; i++)
		close(fds[i]);
	gw_down(&f);
}
END_TEST

/* ---- time ------------------------------------------------------------------------ */

START_TEST(test_delay)
{
	struct gw_fixture f;
	struct reply r;
	const char *const hs[] = {"X-Delay: 400", NULL};
	long long t0;

	gw_up(&f, 0);
	t0 = ms_now();
	curl_once("http://a.test/slow", f.port, NULL, NULL, hs, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_ge(ms_now() - t0, 400);
	ck_assert_int_lt(ms_now() - t0, 3000);
	reply_free(&r);
	gw_down(&f);
}
END_TEST

struct bg {
	int port;
	char *out;
};

static void *bg_delayed(void *arg)
{
	struct bg *b = arg;
	const char req[] = "GET http://a.test/d HTTP/1.1\r\nHost: a.test\r\nX-Delay: 20000\r\n\r\n";

	b->out = raw_exchange(b->port, req, sizeof(req) - 1);
	return NULL;
}

/* stop returns at once with an idle client, one mid-body and an answer
 * waiting out its delay */
START_TEST(test_stop_prompt)
{
	struct gw_fixture f;
	const char half[] =
	    "POST http://a.test/b HTTP/1.1\r\nHost: a.test\r\nContent-Length: 100\r\n"
	    "\r\n0123456789";
	struct bg b;
	pthread_t t;
	long long t0;
	int idle;
	int mid;
	int i;

	gw_up(&f, 0);
	idle = raw_connect(f.port);
	mid = raw_connect(f.port);
	raw_send(mid, half, sizeof(half) - 1);
	b.port = f.port;
	b.out = NULL;
	ck_assert_int_eq(pthread_create(&t, NULL, bg_delayed, &b), 0);
	for (i = 0; i < 200 && rec.answered < 1; i++)
		usleep(10000);
	ck_assert_int_eq(rec.answered, 1);
	usleep(100000);
	t0 = ms_now();
	runner_gateway_stop(f.gw);
	ck_assert_int_lt(ms_now() - t0, 1000);
	pthread_join(t, NULL);
	/* the delayed answer was never sent: the connection just closed */
	ck_assert_str_eq(b.out, "");
	free(b.out);
	/* the request cut mid-body is reported */
	ck_assert_str_eq(refused_reason(), "gateway stopped mid-request");
	close(idle);
	close(mid);
	runner_gateway_ca_free(f.ca);
	unlink(f.ca_file);
}
END_TEST

/* ---- egress ------------------------------------------------------------------------ */

/* A one-shot upstream that answers a body of 5 MiB. */
static void *big_upstream(void *arg)
{
	int lfd = *(int *)arg;
	const size_t n = 5u * 1024 * 1024;
	char head[128];
	char *body;
	char *req;
	int fd;

	fd = accept(lfd, NULL, NULL);
	req = raw_read_all(fd, 300);
	free(req);
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
	raw_send(fd, head, strlen(head));
	body = unit_rep('x', n);
	raw_send(fd, body, n);
	free(body);
	close(fd);
	return NULL;
}

START_TEST(test_forward)
{
	struct gw_fixture up;
	struct runner_gateway_request rq;
	struct runner_gateway_response rs;
	char url[128];
	char why[256];
	json_t *hs;
	json_t *extra;
	json_t *o;
	pthread_t t;
	int lfd;
	int port;

	gw_up(&up, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/fwd?x=1", up.port);
	hs = json_pack("[[ss][ss][ss][ss][ss]]", "X-A", "1", "Connection", "close, X-Hop", "X-Hop",
	               "h", "Proxy-Authorization", "Basic eA==", "Host", "elsewhere");
	extra = json_pack("[[ss]]", "Authorization", "Bearer upstream");
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.scheme = "http";
	rq.host = "127.0.0.1";
	rq.port = up.port;
	rq.headers = hs;
	rq.body = "abc";
	rq.body_len = 3;
	ck_assert_msg(runner_gateway_forward(&rq, extra, 5000, &rs, why, sizeof(why)) == 0, "%s",
	              why);
	ck_assert_int_eq(rs.status, 200);
	o = json_loadb(rs.body, rs.body_len, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "method")), "POST");
	ck_assert_str_eq(json_string_value(json_object_get(o, "url")), url);
	ck_assert_str_eq(json_string_value(json_object_get(o, "body")), "abc");
	ck_assert_str_eq(hdr(json_object_get(o, "headers"), "x-a"), "1");
	ck_assert_str_eq(hdr(json_object_get(o, "headers"), "authorization"), "Bearer upstream");
	ck_assert_ptr_null(hdr(json_object_get(o, "headers"), "proxy-authorization"));
	ck_assert_ptr_null(hdr(json_object_get(o, "headers"), "x-hop"));
	ck_assert_ptr_null(hdr(json_object_get(o, "headers"), "connection"));
	ck_assert_ptr_null(hdr(json_object_get(o, "headers"), "expect"));
	/* Host is the url's, not the one the agent sent */
	snprintf(why, sizeof(why), "127.0.0.1:%d", up.port);
	ck_assert_str_eq(hdr(json_object_get(o, "headers"), "host"), why);
	ck_assert_str_eq(hdr(rs.headers, "x-echo"), "1");
	ck_assert_ptr_null(hdr(rs.headers, "content-length"));
	json_decref(o);
	json_decref(rs.headers);
	free(rs.body);

	/* the timeout cuts a slow answer */
	json_array_append_new(hs, json_pack("[ss]", "X-Delay", "3000"));
	ck_assert_int_eq(runner_gateway_forward(&rq, NULL, 300, &rs, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "egress: ") == why && strstr(why, "timed out") != NULL, "%s",
	              why);
	ck_assert_ptr_null(rs.body);
	json_decref(hs);
	json_decref(extra);

	/* an answer over 4 MiB fails, naming the bound */
	lfd = tcp_listener(&port);
	ck_assert_int_eq(pthread_create(&t, NULL, big_upstream, &lfd), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", port);
	rq.method = "GET";
	rq.headers = NULL;
	rq.body = NULL;
	rq.body_len = 0;
	ck_assert_int_eq(runner_gateway_forward(&rq, NULL, 5000, &rs, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "response body over 4194304 bytes") != NULL, "%s", why);
	pthread_join(t, NULL);
	close(lfd);

	/* nothing listening: the reason is libcurl's */
	ck_assert_int_eq(runner_gateway_forward(&rq, NULL, 2000, &rs, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "onnect") != NULL, "%s", why);
	gw_down(&up);
}
END_TEST

/* ---- python3, as agents use it ----------------------------------------------------- */

START_TEST(test_python_urllib)
{
	struct gw_fixture f;
	char proxy[64];
	char out[8192];
	const char *script =
	    "import urllib.request, json\n"
	    "r = urllib.request.urlopen(urllib.request.Request("
	    "'https://api.openai.test/v1/chat/completions', data=b'{\"m\":1}', "
	    "headers={'Content-Type': 'application/json'}))\n"
	    "e = json.loads(r.read())\n"
	    "print(r.status, e['url'], e['body'])\n"
	    "e = json.loads(urllib.request.urlopen('http://plain.test/p').read())\n"
	    "print(e['url'])\n";
	int pipefd[2];
	long long deadline;
	int interrupted = 0;
	ssize_t n;
	size_t len;
	pid_t pid;
	int st;

	if (access("/usr/bin/python3", X_OK) != 0) {
		fprintf(stderr, "test_python_urllib: skipped: no /usr/bin/python3\n");
		return;
	}
	gw_up(&f, 0);
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", f.port);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		clearenv();
		setenv("HTTPS_PROXY", proxy, 1);
		setenv("HTTP_PROXY", proxy, 1);
		setenv("SSL_CERT_FILE", f.ca_file, 1);
		execl("/usr/bin/python3", "python3", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	/* Bounded, and said: a python3 that has not ended by the deadline
	 * (its start and TLS on a busy host take seconds; this is minutes)
	 * gets SIGINT, whose traceback shows where it waited, then SIGKILL. */
	deadline = ms_now() + 90000;
	len = 0;
	for (;;) {
		struct pollfd p = {.fd = pipefd[0], .events = POLLIN, .revents = 0};

		if (len >= sizeof(out) - 1)
			break;
		if (!interrupted && ms_now() >= deadline) {
			kill(pid, SIGINT);
			interrupted = 1;
			deadline = ms_now() + 5000;
		} else if (interrupted && ms_now() >= deadline) {
			kill(pid, SIGKILL);
		}
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(!interrupted, "python3 had not ended after 90 s: %s", out);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "python3 failed: %s", out);
	ck_assert_str_eq(out, "200 https://api.openai.test/v1/chat/completions {\"m\":1}\n"
	                      "http://plain.test/p\n");
	gw_down(&f);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const plain[] = {test_http_proxy, test_answer_framing, test_origin_form,
	                              test_unix_socket, NULL};
	const TTest *const tls[] = {test_https_connect, test_ca_pem, NULL};
	const TTest *const bodies[] = {test_keep_alive_pipelined, test_chunked_body, NULL};
	const TTest *const refusals[] = {test_refusals, test_bounds, test_idle_timeout,
	                                 test_too_many_connections, NULL};
	const TTest *const timing[] = {test_delay, test_stop_prompt, NULL};
	const TTest *const egress[] = {test_forward, test_python_urllib, NULL};
	Suite *s;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	s = suite_create("gateway");
	tcase_set_timeout(unit_tcase(s, "plain", plain), 30);
	tcase_set_timeout(unit_tcase(s, "tls", tls), 30);
	tcase_set_timeout(unit_tcase(s, "bodies", bodies), 30);
	tcase_set_timeout(unit_tcase(s, "refusals", refusals), 60);
	tcase_set_timeout(unit_tcase(s, "timing", timing), 30);
	/* python3's own start is in it: test_python_urllib bounds it at 90 s */
	tcase_set_timeout(unit_tcase(s, "egress", egress), 120);
	return s;
}
