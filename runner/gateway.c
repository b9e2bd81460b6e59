/*
 * The per-run gateway's server (runner/gateway.h): the accept thread, one
 * thread per connection, HTTP/1.1 parsed by llhttp, CONNECT tunnels served
 * with OpenSSL, the answers framed with Content-Length.
 *
 * Every socket is non-blocking and every wait is a poll() on it and on the
 * gateway's stop eventfd, bounded by the idle timeout: nothing blocks in a
 * read or a write, so stop only has to make the eventfd readable (it is
 * never read, so it stays readable for every thread) and join.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/http.h>
#include <openssl/ssl.h>

#include "llhttp.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/http_mock.h"
#include "runner/gateway_internal.h"

/* Bytes read from a socket at a time. */
#define GW_READ_CHUNK (16 * 1024)
/* A refusal's reason, bytes with its NUL. */
#define GW_REASON_BYTES 256

struct gw_leaf {
	char *host;
	SSL_CTX *ctx;
	struct gw_leaf *next;
};

struct gw_slot {
	pthread_t thread;
	int used; /* a thread was started and not joined yet */
	int done; /* that thread has finished: the accept thread joins it */
};

struct runner_gateway {
	int listen_fd;
	int stop_fd; /* eventfd, readable once stop began */
	atomic_int stopping;
	struct runner_gateway_ca *ca; /* borrowed */
	struct runner_gateway_hooks hooks;
	long idle_ms;
	pthread_t accept_thread;
	pthread_mutex_t lock; /* slots, leaves */
	struct gw_slot slots[RUNNER_GATEWAY_MAX_CONNS];
	EVP_PKEY *leaf_key; /* one key for every leaf of this gateway */
	struct gw_leaf *leaves;
	size_t nleaves;
};

/* Why a wait or an I/O ended without data. */
enum gw_io {
	GW_IO_OK = 0,
	GW_IO_EOF,
	GW_IO_STOP,
	GW_IO_TIMEOUT,
	GW_IO_ERROR,
};

struct gw_conn {
	struct runner_gateway *gw;
	struct gw_slot *slot;
	int fd;
	SSL *ssl;          /* inside a CONNECT tunnel, else NULL */
	char *tunnel_host; /* the CONNECT's host, lower-case */
	int tunnel_port;
	llhttp_t parser;
	char in[GW_READ_CHUNK];
	size_t in_len;
	size_t in_off;
	enum gw_io io; /* how the last failed wait or I/O ended */
	char io_why[GW_REASON_BYTES];
	/* the request being parsed */
	struct model_buf url;
	struct model_buf field;
	struct model_buf value;
	struct model_buf body;
	json_t *headers;
	size_t head_bytes;
	int in_message; /* bytes of a request came, and it is not complete */
	int have_target;
	int keep_alive;
	int refuse_status; /* set by a callback: answer it, then close */
	char refuse_reason[GW_REASON_BYTES];
	unsigned requests;
};

/* ---- time and waits -------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until fd is ready for events, at most timeout_ms (-1: no fd, only
 * the timeout and stop). GW_IO_OK, GW_IO_STOP, GW_IO_TIMEOUT or
 * GW_IO_ERROR.
 */
static enum gw_io gw_wait(struct runner_gateway *gw, int fd, short events, long timeout_ms)
{
	struct pollfd p[2];
	long long deadline;
	long long left;
	int n;

	deadline = now_ms() + timeout_ms;
	for (;;) {
		if (atomic_load(&gw->stopping))
			return GW_IO_STOP;
		left = deadline - now_ms();
		if (left <= 0)
			return fd < 0 ? GW_IO_OK : GW_IO_TIMEOUT;
		p[0].fd = gw->stop_fd;
		p[0].events = POLLIN;
		p[1].fd = fd;
		p[1].events = events;
		p[0].revents = p[1].revents = 0;
		n = poll(p, fd < 0 ? 1 : 2, left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return GW_IO_ERROR;
		if (p[0].revents)
			return GW_IO_STOP;
		/* POLLHUP and POLLERR: the read or write says what happened */
		if (fd >= 0 && p[1].revents)
			return GW_IO_OK;
	}
}

static void conn_set_io(struct gw_conn *c, enum gw_io io, const char *why)
{
	c->io = io;
	snprintf(c->io_why, sizeof(c->io_why), "%s", why);
}

static enum gw_io conn_wait(struct gw_conn *c, short events)
{
	enum gw_io io;

	io = gw_wait(c->gw, c->fd, events, c->gw->idle_ms);
	if (io == GW_IO_STOP)
		conn_set_io(c, io, "gateway stopped");
	else if (io == GW_IO_TIMEOUT)
		conn_set_io(c, io, "idle timeout");
	else if (io == GW_IO_ERROR)
		conn_set_io(c, io, strerror(errno));
	return io;
}

/* OpenSSL's first queued reason (or what errno says), into c->io_why. */
static void conn_ssl_why(struct gw_conn *c, int sslerr)
{
	unsigned long e;
	char buf[200];

	e = ERR_get_error();
	if (e != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	else if (sslerr == SSL_ERROR_SYSCALL && errno != 0)
		snprintf(buf, sizeof(buf), "%s", strerror(errno));
	else if (sslerr == SSL_ERROR_SYSCALL)
		snprintf(buf, sizeof(buf), "connection closed");
	else
		snprintf(buf, sizeof(buf), "TLS error %d", sslerr);
	ERR_clear_error();
	conn_set_io(c, GW_IO_ERROR, buf);
}

/* ---- reads and writes --------------------------------------------------------- */

/* Read what comes, at most cap bytes, into buf: GW_IO_OK with *got > 0,
 * or GW_IO_EOF, or a failure (c->io, c->io_why). */
static enum gw_io conn_read(struct gw_conn *c, char *buf, size_t cap, size_t *got)
{
	ssize_t n;
	int r;
	int e;

	for (;;) {
		if (c->ssl != NULL) {
			ERR_clear_error();
			r = SSL_read(c->ssl, buf, (int)cap);
			if (r > 0) {
				*got = (size_t)r;
				return GW_IO_OK;
			}
			e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_ZERO_RETURN) {
				conn_set_io(c, GW_IO_EOF, "connection closed");
				return GW_IO_EOF;
			}
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
				if (conn_wait(c, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT) !=
				    GW_IO_OK)
					return c->io;
				continue;
			}
			conn_ssl_why(c, e);
			return GW_IO_ERROR;
		}
		n = recv(c->fd, buf, cap, 0);
		if (n > 0) {
			*got = (size_t)n;
			return GW_IO_OK;
		}
		if (n == 0) {
			conn_set_io(c, GW_IO_EOF, "connection closed");
			return GW_IO_EOF;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			conn_set_io(c, GW_IO_ERROR, strerror(errno));
			return GW_IO_ERROR;
		}
		if (conn_wait(c, POLLIN) != GW_IO_OK)
			return c->io;
	}
}

/* Write all of data: 0, or -1 (c->io, c->io_why). */
static int conn_write(struct gw_conn *c, const char *data, size_t len)
{
	size_t off;
	ssize_t n;
	int r;
	int e;

	off = 0;
	while (off < len) {
		if (c->ssl != NULL) {
			ERR_clear_error();
			r = SSL_write(c->ssl, data + off, (int)(len - off));
			if (r > 0) {
				off += (size_t)r;
				continue;
			}
			e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
				if (conn_wait(c, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT) !=
				    GW_IO_OK)
					return -1;
				continue;
			}
			conn_ssl_why(c, e);
			return -1;
		}
		n = send(c->fd, data + off, len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			conn_set_io(c, GW_IO_ERROR, strerror(errno));
			return -1;
		}
		if (conn_wait(c, POLLOUT) != GW_IO_OK)
			return -1;
	}
	return 0;
}

/* ---- answers ------------------------------------------------------------------ */

static const char *status_text(int status)
{
	static const struct {
		int status;
		const char *text;
	} texts[] = {
	    {100, "Continue"},
	    {200, "OK"},
	    {201, "Created"},
	    {202, "Accepted"},
	    {204, "No Content"},
	    {301, "Moved Permanently"},
	    {302, "Found"},
	    {304, "Not Modified"},
	    {400, "Bad Request"},
	    {401, "Unauthorized"},
	    {403, "Forbidden"},
	    {404, "Not Found"},
	    {405, "Method Not Allowed"},
	    {408, "Request Timeout"},
	    {409, "Conflict"},
	    {413, "Content Too Large"},
	    {422, "Unprocessable Content"},
	    {429, "Too Many Requests"},
	    {431, "Request Header Fields Too Large"},
	    {500, "Internal Server Error"},
	    {501, "Not Implemented"},
	    {502, "Bad Gateway"},
	    {503, "Service Unavailable"},
	    {504, "Gateway Timeout"},
	    {505, "HTTP Version Not Supported"},
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].status == status)
			return texts[i].text;
	return "Status";
}

/* Whether s may be sent as a header name (a token) or value (no CR, LF
 * or NUL; jansson strings may hold a NUL). */
static int header_ok(const char *s, size_t len, int name)
{
	size_t i;

	if (name && len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\r' || ch == '\n' || ch == '\0')
			return 0;
		if (name && (ch <= ' ' || ch == ':' || ch >= 0x7f))
			return 0;
	}
	return 1;
}

/*
 * Write one answer: status, the hook's headers (hop-by-hop dropped),
 * Content-Length (unless 1xx/204/304), Connection: close when closing; the
 * body unless head_only. 0, or -1 (the connection is lost).
 */
static int conn_answer(struct gw_conn *c, int status, json_t *headers, const char *body,
                       size_t body_len, int head_only, int closing)
{
	struct model_buf out;
	size_t i;
	json_t *h;
	int bodyless;
	int rc;

	bodyless = (status >= 100 && status < 200) || status == 204 || status == 304;
	model_buf_init(&out, RUNNER_GATEWAY_MAX_HEAD + RUNNER_GATEWAY_MAX_RESPONSE + 1024);
	model_buf_must_fit(
	    model_buf_printf(&out, "HTTP/1.1 %d %s\r\n", status, status_text(status)));
	json_array_foreach(headers, i, h)
	{
		const char *name = json_string_value(json_array_get(h, 0));

		if (model_http_header_is_hop(name))
			continue;
		/* sizes were checked by answer_check; a head past its cap is cut */
		if (model_buf_printf(&out, "%s: %s\r\n", name,
		                     json_string_value(json_array_get(h, 1))) != 0)
			break;
	}
	if (!bodyless)
		model_buf_must_fit(model_buf_printf(&out, "Content-Length: %zu\r\n", body_len));
	if (closing)
		model_buf_must_fit(model_buf_adds(&out, "Connection: close\r\n"));
	else if (llhttp_get_http_minor(&c->parser) == 0)
		model_buf_must_fit(model_buf_adds(&out, "Connection: keep-alive\r\n"));
	model_buf_must_fit(model_buf_adds(&out, "\r\n"));
	if (!bodyless && !head_only && body_len > 0)
		model_buf_must_fit(model_buf_add(&out, body, body_len));
	rc = conn_write(c, out.data, out.len);
	model_buf_release(&out);
	return rc;
}

/* Whether the hook's answer can be sent: status, header shapes, body size. */
static int answer_check(const struct runner_gateway_response *rs)
{
	size_t i;
	size_t head;
	json_t *h;

	if (rs->status < 100 || rs->status > 599 || rs->status == 101)
		return -1;
	if (rs->body_len > RUNNER_GATEWAY_MAX_RESPONSE || (rs->body == NULL && rs->body_len > 0))
		return -1;
	if (rs->headers == NULL)
		return 0;
	if (!json_is_array(rs->headers))
		return -1;
	head = 0;
	json_array_foreach(rs->headers, i, h)
	{
		json_t *n = json_array_get(h, 0);
		json_t *v = json_array_get(h, 1);

		if (!json_is_array(h) || json_array_size(h) != 2 || !json_is_string(n) ||
		    !json_is_string(v))
			return -1;
		if (!header_ok(json_string_value(n), json_string_length(n), 1) ||
		    !header_ok(json_string_value(v), json_string_length(v), 0))
			return -1;
		head += json_string_length(n) + json_string_length(v) + 4;
	}
	return head <= RUNNER_GATEWAY_MAX_HEAD ? 0 : -1;
}

/* The request as known so far, for a refused call. */
static void partial_request(struct gw_conn *c, struct runner_gateway_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	if (c->have_target)
		rq->method = llhttp_method_name((llhttp_method_t)llhttp_get_method(&c->parser));
	if (c->tunnel_host != NULL) {
		rq->scheme = "https";
		rq->host = c->tunnel_host;
		rq->port = c->tunnel_port;
	}
	rq->headers = c->headers;
}

/* After a refusal: stop writing, then read and drop what the client still
 * sends for a moment, so that closing does not reset the connection before
 * the client has read the answer. */
static void conn_linger(struct gw_conn *c)
{
	char buf[4096];
	long long deadline;
	size_t dropped;
	ssize_t n;

	if (c->ssl != NULL)
		SSL_shutdown(c->ssl);
	shutdown(c->fd, SHUT_WR);
	deadline = now_ms() + RUNNER_GATEWAY_LINGER_MS;
	dropped = 0;
	while (dropped < RUNNER_GATEWAY_LINGER_BYTES) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			dropped += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return;
		if (now_ms() >= deadline ||
		    gw_wait(c->gw, c->fd, POLLIN, (long)(deadline - now_ms())) != GW_IO_OK)
			return;
	}
}

/*
 * Refuse: answer status (0: no answer can be given) with the body
 * "[[gateway-refused:<reason>]]", tell the refused hook, linger. rq may be
 * NULL for what partial_request knows. The connection is to be closed
 * after.
 */
static void conn_refuse(struct gw_conn *c, const struct runner_gateway_request *rq, int status,
                        const char *reason)
{
	struct runner_gateway_request known;
	char body[GW_REASON_BYTES + 32];
	int n;

	if (rq == NULL) {
		partial_request(c, &known);
		rq = &known;
	}
	/* told before the answer goes, as every request's entry is: a client
	 * that has its answer finds the refusal traced */
	if (c->gw->hooks.refused != NULL)
		c->gw->hooks.refused(c->gw->hooks.ctx, rq, reason);
	if (status > 0) {
		n = snprintf(body, sizeof(body), "[[gateway-refused:%s]]\n", reason);
		if (n >= (int)sizeof(body))
			n = (int)sizeof(body) - 1;
		if (conn_answer(c, status, NULL, body, (size_t)n, 0, 1) != 0)
			status = 0;
	}
	if (status > 0)
		conn_linger(c);
}

/* ---- llhttp's callbacks -------------------------------------------------------- */

/* Record a refusal for the loop to answer; returns HPE_USER, which stops
 * llhttp (a callback's error). */
static int cb_refuse(struct gw_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cb_refuse(struct gw_conn *c, int status, const char *fmt, ...)
{
	va_list ap;

	c->refuse_status = status;
	va_start(ap, fmt);
	vsnprintf(c->refuse_reason, sizeof(c->refuse_reason), fmt, ap);
	va_end(ap);
	return HPE_USER;
}

/* Count n more bytes of head: HPE_OK, or a 431 refusal. */
static int head_add(struct gw_conn *c, size_t n)
{
	c->head_bytes += n;
	if (c->head_bytes > RUNNER_GATEWAY_MAX_HEAD)
		return cb_refuse(c, 431, "request head over %d bytes", RUNNER_GATEWAY_MAX_HEAD);
	return HPE_OK;
}

static int on_message_begin(llhttp_t *p)
{
	struct gw_conn *c = p->data;

	model_buf_reset(&c->url);
	model_buf_reset(&c->field);
	model_buf_reset(&c->value);
	model_buf_reset(&c->body);
	json_decref(c->headers);
	c->headers = json_array();
	c->head_bytes = 0;
	c->in_message = 1;
	c->have_target = 0;
	return HPE_OK;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
	struct gw_conn *c = p->data;

	c->have_target = 1;
	if (head_add(c, len) != HPE_OK)
		return HPE_USER;
	/* the url buffer's cap is the head's: an add that fails is over it */
	if (model_buf_add(&c->url, at, len) != 0)
		return cb_refuse(c, 431, "request head over %d bytes", RUNNER_GATEWAY_MAX_HEAD);
	return HPE_OK;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
	struct gw_conn *c = p->data;

	if (head_add(c, len + 4) != HPE_OK)
		return HPE_USER;
	if (model_buf_add(&c->field, at, len) != 0)
		return cb_refuse(c, 431, "request head over %d bytes", RUNNER_GATEWAY_MAX_HEAD);
	return HPE_OK;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
	struct gw_conn *c = p->data;

	if (head_add(c, len) != HPE_OK)
		return HPE_USER;
	if (model_buf_add(&c->value, at, len) != 0)
		return cb_refuse(c, 431, "request head over %d bytes", RUNNER_GATEWAY_MAX_HEAD);
	return HPE_OK;
}

static int on_header_value_complete(llhttp_t *p)
{
	struct gw_conn *c = p->data;
	json_t *name;
	json_t *value;

	if (json_array_size(c->headers) >= RUNNER_GATEWAY_MAX_HEADERS)
		return cb_refuse(c, 431, "more than %d request headers",
		                 RUNNER_GATEWAY_MAX_HEADERS);
	name = json_stringn(c->field.data, c->field.len);
	value = json_stringn(c->value.data, c->value.len);
	if (name == NULL || value == NULL) {
		json_decref(name);
		json_decref(value);
		return cb_refuse(c, 400, "header %s is not UTF-8", name == NULL ? "name" : "value");
	}
	json_array_append_new(c->headers, json_pack("[oo]", name, value));
	model_buf_reset(&c->field);
	model_buf_reset(&c->value);
	return HPE_OK;
}

/* The first value of header name (any case), or NULL. */
static const char *header_get(json_t *headers, const char *name)
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

static int on_headers_complete(llhttp_t *p)
{
	struct gw_conn *c = p->data;
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	const char *v;
	int has_body;

	v = header_get(c->headers, "upgrade");
	if (v != NULL) {
		cb_refuse(c, 501, "Upgrade to %.80s not supported (HTTP/1.1 only)", v);
		return -1;
	}
	if ((p->flags & F_CONTENT_LENGTH) && p->content_length > RUNNER_GATEWAY_MAX_BODY) {
		cb_refuse(c, 413, "request body over %d bytes", RUNNER_GATEWAY_MAX_BODY);
		return -1;
	}
	has_body = (p->flags & F_CHUNKED) || ((p->flags & F_CONTENT_LENGTH) && p->content_length);
	v = header_get(c->headers, "expect");
	/* answer the client that waits for a go before its body (curl does,
	 * past 1 MiB): the bounds above were checked first */
	if (v != NULL && has_body && strcasecmp(v, "100-continue") == 0 &&
	    conn_write(c, cont, sizeof(cont) - 1) != 0) {
		cb_refuse(c, 0, "%s", c->io_why);
		return -1;
	}
	return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
	struct gw_conn *c = p->data;

	if (model_buf_add(&c->body, at, len) != 0)
		return cb_refuse(c, 413, "request body over %d bytes", RUNNER_GATEWAY_MAX_BODY);
	return HPE_OK;
}

static int on_message_complete(llhttp_t *p)
{
	struct gw_conn *c = p->data;

	c->keep_alive = llhttp_should_keep_alive(p);
	c->in_message = 0;
	/* one request at a time: the loop answers it, then resumes */
	return HPE_PAUSED;
}

static const llhttp_settings_t gw_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void conn_parser_init(struct gw_conn *c)
{
	llhttp_init(&c->parser, HTTP_REQUEST, &gw_settings);
	c->parser.data = c;
}

/* ---- urls ------------------------------------------------------------------------ */

/* Whether h is a host a url may carry: a name or address of letters,
 * digits and ".-_~%", or a bracketed IPv6 address. */
static int host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0)
		return 0;
	if (h[0] == '[')
		return n > 2 && h[n - 1] == ']' &&
		       strspn(h + 1, "0123456789abcdefABCDEF:.") == n - 2;
	return strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_~%") ==
	       n;
}

/*
 * Split an absolute url ("scheme://host[:port]...") with OpenSSL's url
 * parser: *host (malloc'd, lower-case, IPv6 bracketed) and *port (when
 * absent: 443 for https, 80 for any other scheme, or -1 when need_port).
 * 0, or -1 when it is not one.
 */
static int url_split(const char *url, int need_port, char **host, int *port)
{
	char *scheme;
	char *h;
	size_t i;
	int pn;
	int rc;

	rc = -1;
	scheme = h = NULL;
	*host = NULL;
	if (OSSL_parse_url(url, &scheme, NULL, &h, NULL, &pn, NULL, NULL, NULL) != 1)
		goto out;
	if (!host_ok(h))
		goto out;
	if (pn == 0)
		pn = need_port ? -1 : strcasecmp(scheme, "https") == 0 ? 443 : 80;
	*port = pn;
	for (i = 0; h[i] != '\0'; i++)
		if (h[i] >= 'A' && h[i] <= 'Z')
			h[i] = (char)(h[i] - 'A' + 'a');
	*host = model_xstrdup(h);
	rc = 0;
out:
	ERR_clear_error(); /* a url refused queues OpenSSL's reason */
	OPENSSL_free(scheme);
	OPENSSL_free(h);
	return rc;
}

/* Whether an authority as sent (a Host header, a CONNECT target) holds
 * nothing but host and port. */
static int authority_ok(const char *a)
{
	return a[0] != '\0' && strcspn(a, "/?#@ \t\\") == strlen(a);
}

/* A request's parts, once parsed; the strings are malloc'd. */
struct gw_target {
	char *scheme_url; /* scheme://host[:port] */
	char *host;
	const char *scheme;
	int port;
	const char *path; /* into the target as sent */
	char *url;
};

static void target_free(struct gw_target *t)
{
	free(t->scheme_url);
	free(t->host);
	free(t->url);
}

/* Build t from the request target of c: 0, or -1 with why. */
static int target_build(struct gw_conn *c, struct gw_target *t, char *why, size_t why_len)
{
	const char *target;
	const char *hosth;
	const char *auth;
	char *tmp;
	size_t len;
	int def;

	memset(t, 0, sizeof(*t));
	target = c->url.data;
	if (target[0] == '/') {
		t->path = target;
	} else if (strncasecmp(target, "http://", 7) == 0 ||
	           strncasecmp(target, "https://", 8) == 0) {
		auth = strstr(target, "://") + 3;
		t->path = auth + strcspn(auth, "/?#");
	} else {
		snprintf(why, why_len, "request target %.80s is neither a path nor an http url",
		         target);
		return -1;
	}
	if (c->tunnel_host != NULL) {
		/* inside a tunnel the authority is the CONNECT's */
		t->scheme = "https";
		t->host = model_xstrdup(c->tunnel_host);
		t->port = c->tunnel_port;
	} else if (target[0] == '/') {
		hosth = header_get(c->headers, "host");
		if (hosth == NULL || !authority_ok(hosth)) {
			snprintf(why, why_len, "origin-form request without a valid Host header");
			return -1;
		}
		len = strlen(hosth) + 8;
		tmp = model_xmalloc(len);
		snprintf(tmp, len, "http://%s", hosth);
		t->scheme = "http";
		if (url_split(tmp, 0, &t->host, &t->port) != 0) {
			free(tmp);
			snprintf(why, why_len, "Host header %.80s is not a host", hosth);
			return -1;
		}
		free(tmp);
	} else {
		t->scheme = strncasecmp(target, "https://", 8) == 0 ? "https" : "http";
		if (url_split(target, 0, &t->host, &t->port) != 0) {
			snprintf(why, why_len, "request url %.80s is not a url", target);
			return -1;
		}
	}
	if (t->port <= 0 || t->port > 65535) {
		snprintf(why, why_len, "port out of range");
		return -1;
	}
	def = strcmp(t->scheme, "https") == 0 ? 443 : 80;
	len = strlen(t->scheme) + strlen(t->host) + 16;
	t->scheme_url = model_xmalloc(len);
	if (t->port == def)
		snprintf(t->scheme_url, len, "%s://%s", t->scheme, t->host);
	else
		snprintf(t->scheme_url, len, "%s://%s:%d", t->scheme, t->host, t->port);
	len = strlen(t->scheme_url) + strlen(t->path) + 2;
	t->url = model_xmalloc(len);
	/* an empty path is "/"; a fragment is the client's, never sent on */
	snprintf(t->url, len, "%s%s%.*s", t->scheme_url, t->path[0] == '/' ? "" : "/",
	         (int)strcspn(t->path, "#"), t->path);
	return 0;
}

/* ---- TLS ----------------------------------------------------------------------- */

/* ALPN: HTTP/1.1 when the client offers it, else no protocol chosen (and
 * the client then speaks HTTP/1.1, or gives up). */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char h1[] = "\x08http/1.1";
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, h1, sizeof(h1) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* The TLS context for host (made on first use, then cached): borrowed
 * until stop, or NULL with why. */
static SSL_CTX *leaf_get(struct runner_gateway *gw, const char *host, char *why, size_t why_len)
{
	struct runner_error err;
	struct gw_leaf *l;
	SSL_CTX *ctx;
	X509 *cert;

	ctx = NULL;
	cert = NULL;
	pthread_mutex_lock(&gw->lock);
	for (l = gw->leaves; l != NULL; l = l->next) {
		if (strcmp(l->host, host) == 0) {
			ctx = l->ctx;
			goto out;
		}
	}
	if (gw->nleaves >= RUNNER_GATEWAY_MAX_HOSTS) {
		snprintf(why, why_len, "more than %d https hosts", RUNNER_GATEWAY_MAX_HOSTS);
		goto out;
	}
	/* made at the first https host, not at the start: a run that never
	 * reaches one (most) does not pay for it */
	if (gw->leaf_key == NULL && gw->ca != NULL)
		gw->leaf_key = runner_gateway_key_new(&err);
	if (gw->leaf_key == NULL) {
		snprintf(why, why_len, "%.200s", gw->ca ? err.message : "no CA");
		goto out;
	}
	cert = runner_gateway_ca_issue(gw->ca, host, gw->leaf_key, &err);
	if (cert == NULL) {
		snprintf(why, why_len, "%.200s", err.message);
		goto out;
	}
	ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, gw->leaf_key) != 1) {
		snprintf(why, why_len, "TLS context for %.80s", host);
		ERR_clear_error();
		SSL_CTX_free(ctx);
		ctx = NULL;
		goto out;
	}
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	l = model_xcalloc(1, sizeof(*l));
	l->host = model_xstrdup(host);
	l->ctx = ctx;
	l->next = gw->leaves;
	gw->leaves = l;
	gw->nleaves++;
out:
	pthread_mutex_unlock(&gw->lock);
	X509_free(cert);
	return ctx;
}

/* The TLS handshake on c's socket: 0, or -1 (c->io_why). */
static int conn_tls_accept(struct gw_conn *c, SSL_CTX *ctx)
{
	int r;
	int e;

	c->ssl = SSL_new(ctx);
	if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
		conn_ssl_why(c, SSL_ERROR_SSL);
		return -1;
	}
	for (;;) {
		ERR_clear_error();
		r = SSL_accept(c->ssl);
		if (r == 1)
			return 0;
		e = SSL_get_error(c->ssl, r);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			if (conn_wait(c, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT) != GW_IO_OK)
				return -1;
			continue;
		}
		conn_ssl_why(c, e);
		return -1;
	}
}

/* CONNECT: check the target, answer 200, serve TLS. 1 to go on with HTTP
 * inside the tunnel, 0 to close. */
static int conn_connect(struct gw_conn *c)
{
	struct runner_gateway_request rq;
	char why[GW_REASON_BYTES];
	char url[300];
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	const char *target;
	SSL_CTX *ctx;
	char *host;
	char *tmp;
	size_t len;
	int port;
	int rc;

	rc = 0;
	host = NULL;
	partial_request(c, &rq);
	target = c->url.data;
	if (c->tunnel_host != NULL) {
		conn_refuse(c, &rq, 400, "CONNECT inside a CONNECT tunnel");
		return 0;
	}
	len = strlen(target) + 16;
	tmp = model_xmalloc(len);
	/* a scheme of no default port: a port absent is seen as absent */
	snprintf(tmp, len, "x-connect://%s", target);
	if (!authority_ok(target) || url_split(tmp, 1, &host, &port) != 0 || port < 0) {
		free(tmp);
		snprintf(why, sizeof(why), "CONNECT target %.80s is not host:port", target);
		conn_refuse(c, &rq, 400, why);
		return 0;
	}
	free(tmp);
	rq.scheme = "https";
	rq.host = host;
	rq.port = port;
	snprintf(url, sizeof(url), port == 443 ? "https://%s/" : "https://%s:%d/", host, port);
	rq.url = url;
	if (port != 443) {
		snprintf(why, sizeof(why), "CONNECT to port %d refused: only 443 is served", port);
		conn_refuse(c, &rq, 403, why);
		goto out;
	}
	if (c->gw->ca == NULL) {
		conn_refuse(c, &rq, 403, "CONNECT refused: this gateway serves no https");
		goto out;
	}
	if (c->in_off < c->in_len) {
		conn_refuse(c, &rq, 400, "bytes sent after CONNECT before its answer");
		goto out;
	}
	ctx = leaf_get(c->gw, host, why, sizeof(why));
	if (ctx == NULL) {
		conn_refuse(c, &rq, 403, why);
		goto out;
	}
	if (conn_write(c, ok, sizeof(ok) - 1) != 0)
		goto out;
	if (conn_tls_accept(c, ctx) != 0) {
		if (c->io != GW_IO_STOP) {
			snprintf(why, sizeof(why), "TLS handshake for %.80s failed: %.120s", host,
			         c->io_why);
			conn_refuse(c, &rq, 0, why);
		}
		goto out;
	}
	c->tunnel_host = host;
	c->tunnel_port = port;
	host = NULL;
	conn_parser_init(c);
	rc = 1;
out:
	free(host);
	return rc;
}

/* ---- one request ------------------------------------------------------------------ */

/* Answer the request just parsed: 1 to read the next one, 0 to close. */
static int conn_request(struct gw_conn *c)
{
	struct runner_gateway *gw = c->gw;
	struct runner_gateway_request rq;
	struct runner_gateway_response rs;
	struct gw_target t;
	char why[GW_REASON_BYTES];
	static const char gw_error[] = "[[gateway-error]]";
	long delay;
	int method;
	int closing;
	int rc;

	method = llhttp_get_method(&c->parser);
	if (method == HTTP_CONNECT)
		return conn_connect(c);
	if (target_build(c, &t, why, sizeof(why)) != 0) {
		conn_refuse(c, NULL, 400, why);
		target_free(&t);
		return 0;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = llhttp_method_name((llhttp_method_t)method);
	rq.url = t.url;
	rq.scheme = t.scheme;
	rq.host = t.host;
	rq.port = t.port;
	rq.headers = c->headers;
	rq.body = c->body.data;
	rq.body_len = c->body.len;
	memset(&rs, 0, sizeof(rs));
	rc = gw->hooks.answer(gw->hooks.ctx, &rq, &rs);
	if (rc != 0 || answer_check(&rs) != 0) {
		json_decref(rs.headers);
		free(rs.body);
		memset(&rs, 0, sizeof(rs));
		rs.status = 502;
		rs.body = model_xstrdup(gw_error);
		rs.body_len = sizeof(gw_error) - 1;
	}
	rc = 0;
	delay =
	    rs.delay_ms > RUNNER_GATEWAY_MAX_DELAY_MS ? RUNNER_GATEWAY_MAX_DELAY_MS : rs.delay_ms;
	if (delay > 0 && gw_wait(gw, -1, 0, delay) != GW_IO_OK)
		goto out; /* stopped: close without an answer */
	c->requests++;
	closing = !c->keep_alive || c->requests >= RUNNER_GATEWAY_MAX_REQUESTS ||
	          atomic_load(&gw->stopping);
	if (conn_answer(c, rs.status, rs.headers, rs.body, rs.body_len, method == HTTP_HEAD,
	                closing) != 0)
		goto out;
	rc = !closing;
out:
	json_decref(rs.headers);
	free(rs.body);
	target_free(&t);
	return rc;
}

/* ---- a connection ----------------------------------------------------------------- */

static void conn_serve(struct gw_conn *c)
{
	const char *start;
	char why[GW_REASON_BYTES];
	llhttp_errno_t e;
	enum gw_io io;
	size_t n;

	n = 0;
	conn_parser_init(c);
	for (;;) {
		if (c->in_off == c->in_len) {
			io = conn_read(c, c->in, sizeof(c->in), &n);
			if (io != GW_IO_OK) {
				if (!c->in_message)
					return; /* between requests: a quiet close */
				snprintf(why, sizeof(why), "%.200s mid-request", c->io_why);
				conn_refuse(c, NULL, io == GW_IO_TIMEOUT ? 408 : 0, why);
				return;
			}
			c->in_len = n;
			c->in_off = 0;
		}
		start = c->in + c->in_off;
		e = llhttp_execute(&c->parser, start, c->in_len - c->in_off);
		if (e == HPE_OK) {
			c->in_off = c->in_len;
			continue;
		}
		if (e == HPE_PAUSED) {
			c->in_off += (size_t)(llhttp_get_error_pos(&c->parser) - start);
			if (!conn_request(c))
				return;
			/* a new tunnel's parser is fresh; else go on after the pause */
			if (llhttp_get_errno(&c->parser) == HPE_PAUSED)
				llhttp_resume(&c->parser);
			continue;
		}
		if (e == HPE_PAUSED_H2_UPGRADE) {
			conn_refuse(
			    c, NULL, 505,
			    "HTTP/2 connection preface refused: this gateway speaks HTTP/1.1");
			return;
		}
		if (c->refuse_status > 0) {
			conn_refuse(c, NULL, c->refuse_status, c->refuse_reason);
		} else if (c->refuse_status == 0 && c->refuse_reason[0] == '\0') {
			snprintf(why, sizeof(why), "malformed request: %s (%s)",
			         llhttp_get_error_reason(&c->parser), llhttp_errno_name(e));
			conn_refuse(c, NULL, 400, why);
		} else {
			conn_refuse(c, NULL, 0, c->refuse_reason);
		}
		return;
	}
}

static void conn_free(struct gw_conn *c)
{
	if (c->ssl != NULL) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	close(c->fd);
	model_buf_release(&c->url);
	model_buf_release(&c->field);
	model_buf_release(&c->value);
	model_buf_release(&c->body);
	json_decref(c->headers);
	free(c->tunnel_host);
	free(c);
}

static void *conn_main(void *arg)
{
	struct gw_conn *c = arg;
	struct runner_gateway *gw = c->gw;
	struct gw_slot *slot = c->slot;

	conn_serve(c);
	conn_free(c);
	/* the thread's queue of OpenSSL errors */
	OPENSSL_thread_stop();
	pthread_mutex_lock(&gw->lock);
	slot->done = 1;
	pthread_mutex_unlock(&gw->lock);
	return NULL;
}

static struct gw_conn *conn_new(struct runner_gateway *gw, int fd)
{
	struct gw_conn *c;

	c = model_xcalloc(1, sizeof(*c));
	c->gw = gw;
	c->fd = fd;
	model_buf_init(&c->url, RUNNER_GATEWAY_MAX_HEAD);
	model_buf_init(&c->field, RUNNER_GATEWAY_MAX_HEAD);
	model_buf_init(&c->value, RUNNER_GATEWAY_MAX_HEAD);
	model_buf_init(&c->body, RUNNER_GATEWAY_MAX_BODY);
	c->headers = json_array();
	return c;
}

/* ---- accepting -------------------------------------------------------------------- */

/* Join the threads of connections that ended; the lock is not held. */
static void slots_reap(struct runner_gateway *gw)
{
	size_t i;
	int done;

	for (i = 0; i < RUNNER_GATEWAY_MAX_CONNS; i++) {
		pthread_mutex_lock(&gw->lock);
		done = gw->slots[i].used && gw->slots[i].done;
		pthread_mutex_unlock(&gw->lock);
		if (!done)
			continue;
		pthread_join(gw->slots[i].thread, NULL);
		gw->slots[i].used = 0;
		gw->slots[i].done = 0;
	}
}

/* Over the bound: a best-effort 503 (a non-blocking write, never a wait),
 * then close. */
static void accept_refuse(struct runner_gateway *gw, int fd, const char *reason)
{
	struct runner_gateway_request rq;
	char msg[GW_REASON_BYTES + 160];
	int n;

	/* traced before the answer goes (conn_refuse says why) */
	memset(&rq, 0, sizeof(rq));
	if (gw->hooks.refused != NULL)
		gw->hooks.refused(gw->hooks.ctx, &rq, reason);
	n = snprintf(msg, sizeof(msg),
	             "HTTP/1.1 503 Service Unavailable\r\nContent-Length: %zu\r\n"
	             "Connection: close\r\n\r\n[[gateway-refused:%s]]\n",
	             strlen(reason) + 21, reason);
	if (n > 0 && n < (int)sizeof(msg) && send(fd, msg, (size_t)n, MSG_NOSIGNAL) < 0) {
		/* nothing to do: the client sees the connection closed */
	}
	shutdown(fd, SHUT_WR);
	close(fd);
}

static void *accept_main(void *arg)
{
	struct runner_gateway *gw = arg;
	struct gw_conn *c;
	char reason[GW_REASON_BYTES];
	size_t i;
	int fd;

	for (;;) {
		if (gw_wait(gw, gw->listen_fd, POLLIN, 60000) == GW_IO_STOP)
			break;
		fd = accept4(gw->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			/* out of descriptors: wait a moment rather than spin */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				gw_wait(gw, -1, 0, 100);
			continue;
		}
		slots_reap(gw);
		for (i = 0; i < RUNNER_GATEWAY_MAX_CONNS && gw->slots[i].used; i++)
			;
		if (i == RUNNER_GATEWAY_MAX_CONNS) {
			snprintf(reason, sizeof(reason), "more than %d connections at once",
			         RUNNER_GATEWAY_MAX_CONNS);
			accept_refuse(gw, fd, reason);
			continue;
		}
		c = conn_new(gw, fd);
		c->slot = &gw->slots[i];
		gw->slots[i].used = 1;
		gw->slots[i].done = 0;
		if (pthread_create(&gw->slots[i].thread, NULL, conn_main, c) != 0) {
			gw->slots[i].used = 0;
			c->fd = -1;
			conn_free(c);
			accept_refuse(gw, fd, "no thread for the connection");
		}
	}
	OPENSSL_thread_stop();
	return NULL;
}

/* ---- start and stop ---------------------------------------------------------------- */

struct runner_gateway *runner_gateway_start(int listen_fd, struct runner_gateway_ca *ca,
                                            const struct runner_gateway_hooks *hooks,
                                            struct runner_error *err)
{
	struct runner_gateway *gw;
	sigset_t all;
	sigset_t old;
	socklen_t len;
	int type;
	int acc;
	int fl;

	type = acc = 0;
	len = sizeof(type);
	if (getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
		runner_error_set(err, RUNNER_E_SETUP,
		                 "gateway: descriptor %d is not a stream socket", listen_fd);
		close(listen_fd);
		return NULL;
	}
	len = sizeof(acc);
	if (getsockopt(listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) != 0 || !acc) {
		runner_error_set(err, RUNNER_E_SETUP, "gateway: socket %d is not listening",
		                 listen_fd);
		close(listen_fd);
		return NULL;
	}
	if (hooks == NULL || hooks->answer == NULL) {
		runner_error_set(err, RUNNER_E_INTERNAL, "gateway: no answer hook");
		close(listen_fd);
		return NULL;
	}
	gw = model_xcalloc(1, sizeof(*gw));
	gw->listen_fd = listen_fd;
	gw->ca = ca;
	gw->hooks = *hooks;
	gw->idle_ms = hooks->idle_ms > 0 ? hooks->idle_ms : RUNNER_GATEWAY_IDLE_MS;
	atomic_init(&gw->stopping, 0);
	pthread_mutex_init(&gw->lock, NULL);
	/* an accept woken for a connection that went away must not block */
	fl = fcntl(listen_fd, F_GETFL);
	gw->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) != 0 || gw->stop_fd < 0) {
		runner_error_set(err, RUNNER_E_INTERNAL, "gateway: %s", strerror(errno));
		goto fail;
	}
	/* the gateway's threads take no asynchronous signal (they inherit
	 * this mask, the connection threads from the accept thread) */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&gw->accept_thread, NULL, accept_main, gw) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		runner_error_set(err, RUNNER_E_INTERNAL, "gateway: no accept thread");
		goto fail;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return gw;
fail:
	if (gw->stop_fd >= 0)
		close(gw->stop_fd);
	close(listen_fd);
	EVP_PKEY_free(gw->leaf_key);
	pthread_mutex_destroy(&gw->lock);
	free(gw);
	return NULL;
}

void runner_gateway_stop(struct runner_gateway *gw)
{
	const uint64_t one = 1;
	struct gw_leaf *l;
	struct gw_leaf *next;
	size_t i;

	if (gw == NULL)
		return;
	atomic_store(&gw->stopping, 1);
	if (write(gw->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* the flag alone stops every wait within its next poll slice */
	}
	pthread_join(gw->accept_thread, NULL);
	/* the accept thread is gone: the slots are this thread's alone */
	for (i = 0; i < RUNNER_GATEWAY_MAX_CONNS; i++)
		if (gw->slots[i].used)
			pthread_join(gw->slots[i].thread, NULL);
	close(gw->listen_fd);
	close(gw->stop_fd);
	for (l = gw->leaves; l != NULL; l = next) {
		next = l->next;
		SSL_CTX_free(l->ctx);
		free(l->host);
		free(l);
	}
	EVP_PKEY_free(gw->leaf_key);
	pthread_mutex_destroy(&gw->lock);
	free(gw);
}
