/*
 * Request parsing, routing, auth and replies (http.h). Everything that
 * touches FastCGI streams for a request is here, so handlers only see a
 * struct http_request and reply through one of the helpers.
 */
#include "fcgi/http/http.h"
#include "fcgi/http/metrics.h"
#include "fcgi/log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "fcgi/view/form.h"
#include "model/alloc.h"
#include "model/limits.h"
#include "model/text.h"

/* Replies are compact; a real is written with 15 significant digits, so a
 * score recorded to 9 decimals reads as recorded (0.666666667), not as the
 * binary double's 17 digits (0.66666666699999999). */
#define HTTP_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

/* A body announced above the limit is read and dropped up to this many
 * bytes, so a web server still writing it does not see a reset; beyond
 * that the reply goes out without reading the rest. */
#define HTTP_DISCARD_MAX (8u * 1024 * 1024)
/* The longest Authorization token looked at; ours are 68 bytes. */
#define HTTP_MAX_TOKEN 256
#define HTTP_IO_CHUNK 16384

/* ---- logging and time ------------------------------------------------- */

void http_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-fcgi", OLV_LOG_INFO, fmt, ap);
	va_end(ap);
}

void http_log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-fcgi", OLV_LOG_WARNING, fmt, ap);
	va_end(ap);
}

void http_log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-fcgi", OLV_LOG_ERROR, fmt, ap);
	va_end(ap);
}

int http_iso_plus_seconds(const char now[25], long seconds, char out[25])
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (strlen(now) != 24 || !strptime(now, "%Y-%m-%dT%H:%M:%S", &tm))
		return -1;
	t = timegm(&tm) + (time_t)seconds;
	if (!gmtime_r(&t, &tm) || strftime(out, 25, "%Y-%m-%dT%H:%M:%S", &tm) != 19)
		return -1;
	memcpy(out + 19, now + 19, 6); /* ".mmmZ" and the NUL */
	return 0;
}

void http_now_iso(char out[25])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, 25, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n != 19) {
		memcpy(out, "1970-01-01T00:00:00.000Z", 25);
		return;
	}
	out[19] = '.';
	out[20] = (char)('0' + ts.tv_nsec / 100000000 % 10);
	out[21] = (char)('0' + ts.tv_nsec / 10000000 % 10);
	out[22] = (char)('0' + ts.tv_nsec / 1000000 % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

void http_printable(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

/* ---- request-owned memory -------------------------------------------- */

void *http_req_alloc(struct http_request *req, size_t n)
{
	void *p;

	if (req->nowned == req->owned_alloc) {
		req->owned_alloc = req->owned_alloc ? 2 * req->owned_alloc : 16;
		req->owned = model_xrealloc(req->owned, req->owned_alloc * sizeof(*req->owned));
	}
	p = model_xmalloc(n);
	req->owned[req->nowned++] = p;
	return p;
}

char *http_req_strdup(struct http_request *req, const char *s)
{
	size_t n;
	char *p;

	n = strlen(s);
	p = http_req_alloc(req, n + 1);
	memcpy(p, s, n + 1);
	return p;
}

json_t *http_req_own(struct http_request *req, json_t *j)
{
	if (!j)
		return NULL;
	if (req->njowned == req->jowned_alloc) {
		req->jowned_alloc = req->jowned_alloc ? 2 * req->jowned_alloc : 16;
		req->jowned = model_xrealloc(req->jowned, req->jowned_alloc * sizeof(*req->jowned));
	}
	req->jowned[req->njowned++] = j;
	return j;
}

/* The one place a request's memory is released. */
static void req_release(struct http_request *req)
{
	size_t i;

	for (i = 0; i < req->njowned; i++)
		json_decref(req->jowned[i]);
	for (i = 0; i < req->nowned; i++)
		free(req->owned[i]);
	free(req->jowned);
	free(req->owned);
	model_buf_release(&req->body);
}

/* ---- replies ------------------------------------------------------------ */

static const char *status_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 303:
		return "See Other";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Payload Too Large";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Entity";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "Unknown";
	}
}

/* The method as the client sent it, for log lines: a HEAD is served as
 * its GET (http_serve) but logged as what it was. */
static const char *method_sent(const struct http_request *req)
{
	return req->head ? "HEAD" : req->method;
}

/* Add method to the "Allow: A, B" list in allow[0..n) unless it is there
 * already (two routes of one path may share a method) or would not fit. */
static void allow_add(char *allow, size_t n, const char *method)
{
	const char *p = allow + strlen("Allow: ");
	size_t len = strlen(method);

	while (*p) {
		if (strncmp(p, method, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return;
		p = strchr(p, ',');
		if (!p)
			break;
		p += 2; /* ", " */
	}
	if (strlen(allow) + len + 3 >= n)
		return;
	if (allow[strlen("Allow: ")])
		strcat(allow, ", ");
	strcat(allow, method);
}

/* FCGX_PutStr takes an int length: write in bounded chunks until done. */
static int put_all(FCGX_Stream *out, const char *p, size_t n)
{
	int chunk, w;

	while (n > 0) {
		chunk = n > 65536 ? 65536 : (int)n;
		w = FCGX_PutStr(p, chunk, out);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write the head and len bytes of body, once per request. */
static int reply_raw(struct http_request *req, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t len)
{
	char head[2048];
	int n, rc = -1;

	if (req->status) {
		/* a handler bug: never write two replies into one response */
		http_log_error("second reply (%d after %d) for %s %s dropped", status, req->status,
		               method_sent(req), req->path);
		return -1;
	}
	if (req->internal) {
		/* http_call captures JSON only (http_reply_json_hdr); any other
		 * reply is not something the view can render */
		req->status = 500;
		req->captured = json_pack("{s:{s:s,s:s}}", "error", "code", "internal", "message",
		                          "this resource is not JSON");
		return 0;
	}
	n = snprintf(head, sizeof(head),
	             "Status: %d %s\r\n"
	             "Content-Type: %s\r\n"
	             "Cache-Control: no-store\r\n"
	             "X-Content-Type-Options: nosniff\r\n"
	             "X-Request-Id: %s\r\n"
	             "Content-Length: %zu\r\n"
	             "%s\r\n",
	             status, status_reason(status), content_type, req->request_id, len,
	             extra_headers ? extra_headers : "");
	req->status = status;
	if (n < 0 || (size_t)n >= sizeof(head))
		goto out;
	/* a HEAD gets the GET's head, Content-Length included, and no body
	 * (RFC 9110 §9.3.2) */
	if (put_all(req->fcgx->out, head, (size_t)n) ||
	    (!req->head && put_all(req->fcgx->out, body, len)) || put_all(req->fcgx->out, "", 0))
		goto out;
	rc = 0;
out:
	if (rc)
		http_log_warn("writing the reply failed (client gone?) for %s %s", method_sent(req),
		              req->path);
	return rc;
}

int http_reply_json_hdr(struct http_request *req, int status, const char *extra_headers,
                        json_t *body)
{
	/* One reply buffer per worker process (workers serve one request at a
	 * time): jansson encodes into it in one pass, with no growth and no
	 * final copy (json_dumpb); a larger reply takes json_dumps. Same
	 * bytes either way (HTTP_JSON_FLAGS). */
	static char quick[64 * 1024];
	char *text;
	size_t n;
	int rc;

	if (req->status) {
		http_log_error("second reply (%d after %d) for %s %s dropped", status, req->status,
		               method_sent(req), req->path);
		return -1;
	}
	if (req->internal) {
		req->status = status;
		req->captured = json_incref(body);
		return 0;
	}
	n = json_dumpb(body, quick, sizeof(quick), HTTP_JSON_FLAGS);
	if (n > 0 && n <= sizeof(quick))
		return reply_raw(req, status, "application/json; charset=utf-8", extra_headers,
		                 quick, n);
	text = json_dumps(body, HTTP_JSON_FLAGS);
	if (!text) {
		/* cannot happen for the objects we build; fall back to a fixed error */
		text = model_xstrdup(
		    "{\"error\":{\"code\":\"internal\",\"message\":\"internal error\"}}");
		status = 500;
	}
	rc = reply_raw(req, status, "application/json; charset=utf-8", extra_headers, text,
	               strlen(text));
	free(text);
	return rc;
}

int http_reply_body(struct http_request *req, int status, const char *content_type,
                    const char *body, size_t len)
{
	return reply_raw(req, status, content_type, NULL, body, len);
}

int http_reply_raw(struct http_request *req, int status, const char *content_type,
                   const char *extra_headers, const char *body, size_t len)
{
	return reply_raw(req, status, content_type, extra_headers, body ? body : "", len);
}

int http_reply_json(struct http_request *req, int status, json_t *body)
{
	return http_reply_json_hdr(req, status, NULL, body);
}

static int reply_error_hdr(struct http_request *req, int status, const char *code,
                           const char *message, const char *field, const char *extra,
                           const struct model_error *quota)
{
	json_t *e, *body, *msg;

	e = json_object();
	json_object_set_new(e, "code", json_string(code));
	/* messages are built by us or by jansson; json_string refuses invalid
	 * UTF-8, so fall back to a fixed text rather than drop the field */
	msg = json_string(message);
	json_object_set_new(e, "message", msg ? msg : json_string("invalid request"));
	if (field && field[0])
		json_object_set_new(e, "field", json_string(field));
	/* a quota refusal's figures, for a client to act on without parsing
	 * the message */
	if (quota) {
		json_object_set_new(e, "used_bytes", json_integer(quota->used_bytes));
		json_object_set_new(e, "limit_bytes", json_integer(quota->limit_bytes));
		json_object_set_new(e, "request_bytes", json_integer(quota->request_bytes));
	}
	body = http_req_own(req, json_pack("{s:o}", "error", e));
	/* the request's access line says the code (http_serve); a call from
	 * the admin view has no line of its own, so its 5xx is said here */
	if (!req->status)
		req->error_code = code;
	if (status >= 500 && req->internal)
		http_log_error("internal call %s %s -> %d %s", req->method ? req->method : "-",
		               req->path ? req->path : "-", status, code);
	http_reply_json_hdr(req, status, extra, body);
	return 0;
}

int http_reply_error_code(struct http_request *req, int status, const char *code,
                          const char *message, const char *field)
{
	return reply_error_hdr(req, status, code, message, field, NULL, NULL);
}

int http_reply_error(struct http_request *req, const struct model_error *err)
{
	enum model_err code;

	code = err->code == MODEL_OK ? MODEL_E_INTERNAL : err->code;
	/* busy: a slot frees when a run ends (seconds at most) */
	return reply_error_hdr(req, model_error_http_status(code), model_error_name(code),
	                       err->message[0] ? err->message : model_error_name(code), err->field,
	                       code == MODEL_E_BUSY ? "Retry-After: 1\r\n" : NULL,
	                       code == MODEL_E_QUOTA ? err : NULL);
}

/* "scenario not found" when the n bytes at word are "scenario" (or, with
 * plural, "scenarios"), and likewise for our other kinds; else "not
 * found". */
static const char *kind_not_found(const char *word, size_t n, int plural)
{
	static const char *const kinds[] = {"scenario", "run", "session", "comparison"};
	static const char *const messages[] = {"scenario not found", "run not found",
	                                       "session not found", "comparison not found"};
	size_t i, k;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		k = strlen(kinds[i]);
		if (n == k + (plural ? 1 : 0) && strncmp(word, kinds[i], k) == 0 &&
		    (!plural || word[k] == 's'))
			return messages[i];
	}
	return "not found";
}

/* For what = "scenario get": the thing a store call looked for is the
 * first word of its what. */
static const char *not_found_message(const char *what)
{
	return kind_not_found(what, strcspn(what, " "), 0);
}

/* For a route pattern ".../runs/{id}...": the collection before the id. */
static const char *id_not_found_message(const char *pattern)
{
	const char *id = strstr(pattern, "/{id}"), *seg;

	if (!id)
		return "not found";
	seg = id;
	while (seg > pattern && seg[-1] != '/')
		seg--;
	return kind_not_found(seg, (size_t)(id - seg), 1);
}

int http_quota_refuse(struct http_request *req, const struct store_usage *used, long long limit,
                      int mb, long long adds, struct model_error *err)
{
	struct store_usage fresh;
	const struct store_usage *u = used;

	if (!u) {
		/* refused by the write's own check: the figures as they are now */
		if (store_tenant_usage(req->store, req->who.tenant_id, &fresh))
			memset(&fresh, 0, sizeof fresh);
		u = &fresh;
	}
	if (adds >= 0)
		model_error_set(
		    err, MODEL_E_QUOTA, NULL,
		    "over the storage quota: the tenant stores %lld bytes of its %lld "
		    "(max_stored_mb = %d) and this write adds %lld: nothing was written",
		    u->total, limit, mb, adds);
	else
		model_error_set(err, MODEL_E_QUOTA, NULL,
		                "over the storage quota: the tenant stores %lld bytes of its %lld "
		                "(max_stored_mb = %d), no room for a run's outputs: nothing was "
		                "queued",
		                u->total, limit, mb);
	err->used_bytes = u->total;
	err->limit_bytes = limit;
	err->request_bytes = adds >= 0 ? adds : 0;
	return -1;
}

int http_store_fail(struct http_request *req, enum store_rc rc, const char *what,
                    struct model_error *err)
{
	switch (rc) {
	case STORE_CONFLICT:
		/* expected when a concurrent request took this request's
		 * Idempotency-Key first: the router answers with its answer
		 * (http_idem_after_fail) */
		if (req->has_idem) {
			http_log_warn("store conflict in %s (answered from the Idempotency-Key's "
			              "first answer if it is one): %s",
			              what, store_last_error(req->store));
			return model_error_set(err, MODEL_E_INTERNAL, NULL, "internal error");
		}
		/* fall through */
	case STORE_OK:
	case STORE_ERROR:
		http_log_error("store error in %s: %s", what, store_last_error(req->store));
		/* an error the store could not classify may be a connection
		 * to a database that is not the one expected (a file replaced,
		 * a schema gone): the next request starts on a new one */
		if (rc == STORE_ERROR)
			req->worker->store_broken = 1;
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "internal error");
	case STORE_NOT_FOUND:
		return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "%s", not_found_message(what));
	case STORE_QUOTA:
		/* the write's own check (http_quota_check set its guard) */
		return http_quota_refuse(req, NULL, (long long)req->quota_mb * 1048576LL,
		                         req->quota_mb, req->quota_adds, err);
	case STORE_LIMIT:
		/* the handlers that can meet a tenant's limit word it themselves */
		return model_error_set(err, MODEL_E_BUSY, NULL,
		                       "over the tenant's limit of active runs");
	case STORE_UNAVAILABLE:
		http_log_error("storage unavailable in %s: %s", what, store_last_error(req->store));
		req->worker->store_broken = 1;
		return model_error_set(err, MODEL_E_STORAGE, NULL, "storage unavailable");
	}
	return model_error_set(err, MODEL_E_INTERNAL, NULL, "internal error");
}

/* ---- query string ------------------------------------------------------ */

/* req->query_params from req->query: 0, or -1 when a parameter does not
 * decode (then the object is left empty). */
static int decode_query(struct http_request *req)
{
	json_t *params = json_object();

	if (http_form_decode(req->query, strlen(req->query), params)) {
		json_object_clear(params);
		req->query_params = http_req_own(req, params);
		return -1;
	}
	req->query_params = http_req_own(req, params);
	return 0;
}

const char *http_query_get(struct http_request *req, const char *name)
{
	if (!req->query_params)
		decode_query(req);
	return json_string_value(json_object_get(req->query_params, name));
}

/* Strict decimal: optional '-', 1..10 digits, nothing else. */
static int parse_int(const char *s, long long *out)
{
	const char *p = s;
	long long v = 0;
	int neg = 0, digits = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || ++digits > 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (!digits)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

int http_query_int(struct http_request *req, const char *name, int def, int min, int max, int *out,
                   struct model_error *err)
{
	const char *s;
	long long v;

	s = http_query_get(req, name);
	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_int(s, &v) || v < min || v > max)
		return model_error_set(err, MODEL_E_MALFORMED, name,
		                       "%s must be an integer from %d to %d", name, min, max);
	*out = (int)v;
	return 0;
}

/* ---- body --------------------------------------------------------------- */

/* CONTENT_LENGTH: digits only; a value past any limit saturates, so an
 * absurd announcement is "too large", not "malformed". */
static int parse_length(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!*s)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v < (1ULL << 40))
			v = v * 10 + (unsigned)(*p - '0');
	}
	*out = v;
	return 0;
}

/*
 * A body sent without CONTENT_LENGTH: the stream up to its end, which the
 * web server marks (FastCGI's empty stdin record; at once when there is no
 * body). nginx always sends a length (it reads a chunked body whole first);
 * Apache's mod_proxy_fcgi streams a chunked body over about 64 KiB without
 * one. Past the limit the rest is dropped up to HTTP_DISCARD_MAX, never
 * buffered, and the answer is too_large.
 */
static int read_body_stream(struct http_request *req, struct model_error *err)
{
	static char chunk[HTTP_IO_CHUNK];
	size_t dropped = 0;
	int got;

	for (;;) {
		got = FCGX_GetStr(chunk, (int)sizeof(chunk), req->fcgx->in);
		if (got <= 0)
			return 0;
		if (model_buf_add(&req->body, chunk, (size_t)got))
			break;
	}
	while (dropped < HTTP_DISCARD_MAX) {
		got = FCGX_GetStr(chunk, (int)sizeof(chunk), req->fcgx->in);
		if (got <= 0)
			break;
		dropped += (size_t)got;
	}
	return model_error_set(err, MODEL_E_TOO_LARGE, NULL, "request body is larger than %d bytes",
	                       MODEL_MAX_REQUEST_BYTES);
}

/*
 * Read the body announced by CONTENT_LENGTH, or, without one, the stream
 * to its end (read_body_stream). Returns 0, or -1 with *err: too_large
 * (the body is over the limit: the bytes are dropped, never buffered) or
 * malformed (bad header, body shorter than announced).
 */
static int read_body(struct http_request *req, struct model_error *err)
{
	static char chunk[HTTP_IO_CHUNK];
	const char *cl;
	unsigned long long announced;
	size_t left, want, dropped = 0;
	int got;

	model_buf_init(&req->body, MODEL_MAX_REQUEST_BYTES);
	cl = FCGX_GetParam("CONTENT_LENGTH", req->fcgx->envp);
	if (!cl || !cl[0])
		return read_body_stream(req, err);
	if (parse_length(cl, &announced))
		return model_error_set(err, MODEL_E_MALFORMED, NULL,
		                       "CONTENT_LENGTH is not a valid length");
	if (announced > MODEL_MAX_REQUEST_BYTES) {
		left = announced > HTTP_DISCARD_MAX ? HTTP_DISCARD_MAX : (size_t)announced;
		while (dropped < left) {
			want = left - dropped > sizeof(chunk) ? sizeof(chunk) : left - dropped;
			got = FCGX_GetStr(chunk, (int)want, req->fcgx->in);
			if (got <= 0)
				break;
			dropped += (size_t)got;
		}
		return model_error_set(err, MODEL_E_TOO_LARGE, NULL,
		                       "request body is larger than %d bytes",
		                       MODEL_MAX_REQUEST_BYTES);
	}
	left = (size_t)announced;
	while (left > 0) {
		want = left > sizeof(chunk) ? sizeof(chunk) : left;
		got = FCGX_GetStr(chunk, (int)want, req->fcgx->in);
		if (got <= 0)
			break;
		if (model_buf_add(&req->body, chunk, (size_t)got))
			break; /* cannot happen: announced <= cap */
		left -= (size_t)got;
	}
	if (left > 0)
		return model_error_set(err, MODEL_E_MALFORMED, NULL,
		                       "request body is shorter than its Content-Length");
	return 0;
}

/* Decode the body as a JSON object; an empty body is {}. */
static int decode_body(struct http_request *req, struct model_error *err)
{
	json_error_t jerr;
	json_t *j;

	if (req->body.len == 0) {
		req->json = http_req_own(req, json_object());
		return 0;
	}
	j = json_loadb(req->body.data, req->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return model_error_set(err, MODEL_E_MALFORMED, NULL, "invalid JSON: %s", jerr.text);
	http_req_own(req, j);
	if (!json_is_object(j))
		return model_error_set(err, MODEL_E_MALFORMED, NULL,
		                       "request body must be a JSON object");
	req->json = j;
	return 0;
}

/* ---- auth ---------------------------------------------------------------- */

void http_sha256_hex(const char *s, size_t n, char hex[65])
{
	/* Fetched once per process: EVP_sha256() makes EVP_Digest look the
	 * implementation up in the provider tables on every call, which cost
	 * more than hashing the token itself (callgrind, bench/api). */
	static EVP_MD *sha256;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (!sha256)
		sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!sha256 || !EVP_Digest(s, n, md, &mdlen, sha256, NULL) || mdlen != 32) {
		/* never compare equal to a stored digest */
		memset(hex, 'x', 64);
		hex[64] = '\0';
		return;
	}
	model_hex_encode(md, 32, hex);
}

/* The token of "Bearer <token>", or NULL (missing, other scheme, empty). */
static const char *bearer_token(const char *h, size_t *len)
{
	const char *p, *end;

	if (!h || strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
		return NULL;
	p = h + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p;
	while (*end && *end != ' ' && *end != '\t')
		end++;
	if (end == p || (size_t)(end - p) > HTTP_MAX_TOKEN)
		return NULL;
	*len = (size_t)(end - p);
	while (*end == ' ' || *end == '\t')
		end++;
	return *end ? NULL : p;
}

static int ensure_store(struct http_worker *w);

/*
 * Read the caller's bearer token and, in the same query, whether module
 * (NULL: none) is enabled for the caller's tenant into *enabled (may be
 * NULL when module is NULL). Returns 0 with req->who filled, 1 when there
 * is no Authorization header, 2 for a header that is not a known token,
 * -1 when the store does not answer (after one reconnection if retry is
 * set). Replies nothing.
 */
static int token_principal(struct http_request *req, const char *module, int *enabled, int retry)
{
	struct store_principal p;
	struct model_error err;
	const char *h, *tok;
	char hex[65];
	size_t len = 0;
	enum store_rc rc;
	int rc2;

	h = FCGX_GetParam("HTTP_AUTHORIZATION", req->fcgx->envp);
	if (!h)
		return 1;
	tok = bearer_token(h, &len);
	if (!tok)
		return 2;
	http_sha256_hex(tok, len, hex);
	memset(&p, 0, sizeof(p));
	if (module)
		rc = store_token_lookup_module(req->store, hex, module, &p, enabled);
	else
		rc = store_token_lookup(req->store, hex, &p);
	if (rc == STORE_NOT_FOUND)
		return 2;
	if (rc == STORE_UNAVAILABLE && retry) {
		/* a connection lost since the last request (database restart):
		 * the lookup only reads, so reconnect once and ask again */
		http_store_fail(req, rc, "token lookup", &err);
		/* ensure_store closed the old store: never use it again, even
		 * when the new one could not be opened (NULL then) */
		rc2 = ensure_store(req->worker);
		req->store = req->worker->store;
		if (rc2 == 0)
			return token_principal(req, module, enabled, 0);
	}
	if (rc) {
		http_store_fail(req, rc, "token lookup", &err);
		return -1;
	}
	if (strlen(p.sha256_hex) != 64 || CRYPTO_memcmp(hex, p.sha256_hex, 64) != 0)
		return 2;
	memcpy(req->who.tenant_id, p.tenant_id, sizeof(req->who.tenant_id));
	req->who.tenant_id[32] = '\0';
	memcpy(req->who.token_id, p.token_id, sizeof(req->who.token_id));
	req->who.token_id[32] = '\0';
	req->who.role = p.role;
	req->who.scopes = p.scopes;
	return 0;
}

/*
 * Authenticate the caller and read the module's setting (token_principal).
 * Returns 0 with req->who filled, or -1 after replying (401 for a missing
 * or unknown token, with no detail about which; 503 when the store does
 * not answer).
 */
static int authenticate(struct http_request *req, const char *module, int *enabled)
{
	struct model_error err;
	int rc;

	rc = token_principal(req, module, enabled, 1);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		model_error_set(&err, MODEL_E_STORAGE, NULL, "storage unavailable");
		http_reply_error(req, &err);
		return -1;
	}
	reply_error_hdr(req, 401, "unauthorized", "a valid bearer token is required", NULL,
	                "WWW-Authenticate: Bearer\r\n", NULL);
	return -1;
}

int http_auth_bearer(struct http_request *req)
{
	if (http_req_store(req))
		return -1;
	return token_principal(req, NULL, NULL, 1);
}

/* ---- store connection ---------------------------------------------------- */

/* Make sure the worker holds a live connection. 0, or -1 (not connected). */
static int ensure_store(struct http_worker *w)
{
	enum store_rc rc;

	if (w->store && w->store_broken) {
		http_metrics_store(w->store, 1);
		store_close(w->store);
		w->store = NULL;
	}
	w->store_broken = 0;
	if (w->store)
		return 0;
	/* the workers' DSN: a SQLite file deleted under the server is not
	 * created again, empty, to take writes (config.h, worker_dsn) */
	rc = store_open(w->cfg->worker_dsn[0] ? w->cfg->worker_dsn : w->cfg->dsn, &w->store);
	if (rc) {
		http_log_error("cannot connect to the store: %s", store_last_error(NULL));
		w->store = NULL;
		return -1;
	}
	return 0;
}

int http_req_store(struct http_request *req)
{
	if (req->store && !req->worker->store_broken)
		return 0;
	if (ensure_store(req->worker)) {
		req->store = NULL;
		return -1;
	}
	req->store = req->worker->store;
	return 0;
}

/* ---- routing --------------------------------------------------------------- */

/* ---- paths ----------------------------------------------------------------- */

static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte of the escape "%XX" at seg[i] (n bytes left from i), or -1
 * when it is not one or is %00 (no text holds a NUL). */
static int escape_at(const char *seg, size_t n)
{
	int hi, lo;

	if (n < 3 || (hi = hex_digit((unsigned char)seg[1])) < 0 ||
	    (lo = hex_digit((unsigned char)seg[2])) < 0 || (hi == 0 && lo == 0))
		return -1;
	return hi << 4 | lo;
}

/* The next byte of the segment seg[0..sn) percent-decoded once, from
 * *i (advanced past it), or -1 when it does not decode. */
static int segment_byte(const char *seg, size_t sn, size_t *i)
{
	int c = (unsigned char)seg[*i];

	if (c != '%') {
		(*i)++;
		return c;
	}
	c = escape_at(seg + *i, sn - *i);
	*i += 3;
	return c;
}

/* Is the segment seg[0..sn), percent-decoded once, the literal lit[0..ln)?
 * A segment that does not decode is no literal. */
static int segment_is(const char *lit, size_t ln, const char *seg, size_t sn)
{
	size_t i = 0, k = 0;
	int c;

	while (i < sn) {
		c = segment_byte(seg, sn, &i);
		if (c < 0 || k == ln || (unsigned char)lit[k] != c)
			return 0;
		k++;
	}
	return k == ln;
}

/* The segment seg[0..sn) percent-decoded once, as a request-owned string,
 * or NULL when it does not decode to text (a '%' without two hex digits,
 * %00, bytes that are not UTF-8). */
static char *segment_decode(struct http_request *req, const char *seg, size_t sn)
{
	char *out = http_req_alloc(req, sn + 1);
	size_t i = 0, k = 0;
	int c;

	while (i < sn) {
		c = segment_byte(seg, sn, &i);
		if (c < 0)
			return NULL;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return model_text_valid_utf8(out, k) ? out : NULL;
}

int http_path_match(const char *pattern, const char *path, struct http_path_capture *caps, int max,
                    int *ncaps)
{
	const char *pp = pattern, *sp = path, *pe, *se;
	size_t plen, slen;
	int n = 0;
	int is_id, is_name;

	for (;;) {
		if (*pp != '/' || *sp != '/')
			return 0;
		pp++;
		sp++;
		/* the path splits on its own '/' only: a decoded %2F is a byte of
		 * its segment, never a separator */
		pe = strchrnul(pp, '/');
		se = strchrnul(sp, '/');
		plen = (size_t)(pe - pp);
		slen = (size_t)(se - sp);
		is_id = plen == 4 && memcmp(pp, "{id}", 4) == 0;
		is_name = plen == 6 && memcmp(pp, "{name}", 6) == 0;
		if (is_id || is_name) {
			if (slen == 0 || n == max)
				return 0;
			if (caps) {
				caps[n].at = sp;
				caps[n].len = slen;
				caps[n].is_id = is_id;
			}
			n++;
		} else if (!segment_is(pp, plen, sp, slen)) {
			return 0;
		}
		pp = pe;
		sp = se;
		if (!*pp && !*sp)
			break;
	}
	*ncaps = n;
	return 1;
}

/*
 * Match path against pattern (http_path_match). On a match returns 1 and
 * fills params (request-owned: an {id} as sent, a {name} percent-decoded)
 * and, in *ids, one bit per param that is an {id} (checked by the router;
 * a {name} is checked by its handler). A {name} that does not decode to
 * text matches nothing.
 */
static int match(struct http_request *req, const char *pattern, const char *path,
                 const char **params, int *nparams, unsigned *ids)
{
	struct http_path_capture caps[HTTP_MAX_PARAMS];
	char *seg;
	int n, i;

	if (ids)
		*ids = 0;
	if (!http_path_match(pattern, path, caps, HTTP_MAX_PARAMS, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (caps[i].is_id) {
			if (ids)
				*ids |= 1u << i;
			if (!params)
				continue;
			seg = http_req_alloc(req, caps[i].len + 1);
			memcpy(seg, caps[i].at, caps[i].len);
			seg[caps[i].len] = '\0';
		} else {
			seg = segment_decode(req, caps[i].at, caps[i].len);
			if (!seg)
				return 0;
		}
		if (params)
			params[i] = seg;
	}
	*nparams = n;
	return 1;
}

/* The path of the request as the client sent it: REQUEST_URI without its
 * query string (nginx passes $request_uri, undecoded), so routing and the
 * id checks see the bytes that were sent, before any decoding or merging
 * of "..", "." and "//" that could turn one path into another record's.
 * Without it (a server that does not pass it), DOCUMENT_URI, else
 * SCRIPT_NAME + PATH_INFO. */
static const char *request_path(struct http_request *req)
{
	const char *s, *q, *pi;
	char *p;
	size_t n, m;

	s = FCGX_GetParam("REQUEST_URI", req->fcgx->envp);
	if (s && s[0] == '/') {
		q = strchr(s, '?');
		n = q ? (size_t)(q - s) : strlen(s);
		p = http_req_alloc(req, n + 1);
		memcpy(p, s, n);
		p[n] = '\0';
		return p;
	}
	s = FCGX_GetParam("DOCUMENT_URI", req->fcgx->envp);
	if (s && s[0] == '/')
		return http_req_strdup(req, s);
	s = FCGX_GetParam("SCRIPT_NAME", req->fcgx->envp);
	pi = FCGX_GetParam("PATH_INFO", req->fcgx->envp);
	s = s ? s : "";
	pi = pi ? pi : "";
	n = strlen(s);
	m = strlen(pi);
	p = http_req_alloc(req, n + m + 2);
	memcpy(p, s, n);
	memcpy(p + n, pi, m);
	p[n + m] = '\0';
	if (p[0] != '/') {
		memmove(p + 1, p, n + m + 1);
		p[0] = '/';
	}
	return p;
}

static int role_ok(const struct http_route *r, const struct http_principal *who)
{
	return r->min_role == HTTP_ROLE_PUBLIC || (int)who->role >= r->min_role;
}

/* A scoped token passes only the routes whose scope it holds; a token
 * without scopes is limited by its role alone. */
static unsigned route_scope(const struct http_route *r)
{
	return r->scope ? r->scope : STORE_SCOPE_ADMIN;
}

static int scope_ok(const struct http_route *r, const struct http_principal *who)
{
	/* the admin scope holds every other one (the role still applies) */
	return r->min_role == HTTP_ROLE_PUBLIC || who->scopes == 0 ||
	       (who->scopes & (route_scope(r) | STORE_SCOPE_ADMIN)) != 0;
}

static const char *role_name(int role)
{
	switch (role) {
	case STORE_ROLE_VIEWER:
		return "viewer";
	case STORE_ROLE_EDITOR:
		return "editor";
	case STORE_ROLE_ADMIN:
		return "admin";
	default:
		return "none";
	}
}

static void route(struct http_request *req, const struct http_route *routes, size_t n)
{
	const struct http_route *hit = NULL, *any = NULL;
	const char *params[HTTP_MAX_PARAMS];
	struct model_error err;
	char allow[128] = "Allow: ";
	char hdr[160];
	char msg[128];
	unsigned ids = 0;
	int nparams = 0, enabled = 0, i;
	size_t k;

	memset(&err, 0, sizeof(err));
	/* 1. route lookup by path, then by method */
	for (k = 0; k < n; k++) {
		if (!match(req, routes[k].pattern, req->path, NULL, &nparams, NULL))
			continue;
		if (!any)
			any = &routes[k];
		allow_add(allow, sizeof(allow), routes[k].method);
		/* every GET route answers HEAD too (http_serve) */
		if (strcmp(routes[k].method, "GET") == 0)
			allow_add(allow, sizeof(allow), "HEAD");
		if (!hit && strcmp(routes[k].method, req->method) == 0)
			hit = &routes[k];
	}
	if (!any) {
		http_reply_error_code(req, 404, "not_found", "no such resource", NULL);
		return;
	}
	req->route_slot = HTTP_METRICS_SLOT_ROUTE + (int)((hit ? hit : any) - routes);
	/* 2. auth: every route but the public ones needs a token (an internal
	 * call's principal was authenticated by its caller) */
	if (http_req_store(req) && !((hit ? hit : any)->flags & HTTP_ROUTE_STORE_OPTIONAL)) {
		http_reply_error_code(req, 503, "storage_unavailable", "storage unavailable", NULL);
		return;
	}
	if (req->internal) {
		if (any->module &&
		    store_module_get(req->store, req->who.tenant_id, any->module, &enabled)) {
			http_reply_error_code(req, 503, "storage_unavailable",
			                      "storage unavailable", NULL);
			return;
		}
	} else if ((hit ? hit : any)->min_role != HTTP_ROLE_PUBLIC &&
	           authenticate(req, any->module, &enabled)) {
		return;
	}
	/* 3. the module gate comes before the method and role checks, so a
	 * disabled module's routes are hidden whatever the method or role;
	 * the token lookup above read the module's setting for the caller's
	 * tenant (one query for both) */
	if (any->module) {
		if (!enabled) {
			http_reply_error_code(
			    req, 404, "module_disabled",
			    "the sandbox module is disabled for this tenant (an admin "
			    "of the tenant turns it on: olivares modules on sandbox)",
			    NULL);
			return;
		}
	}
	if (!hit) {
		snprintf(hdr, sizeof(hdr), "%s\r\n", allow);
		reply_error_hdr(req, 405, "method_not_allowed",
		                "method not allowed on this resource", NULL, hdr, NULL);
		return;
	}
	if (!role_ok(hit, &req->who)) {
		/* say which role is needed and which one the token has: the
		 * caller knows its own token's role anyway */
		snprintf(msg, sizeof(msg), "requires role %s; your token has %s",
		         role_name(hit->min_role), role_name((int)req->who.role));
		http_reply_error_code(req, 403, "forbidden", msg, NULL);
		return;
	}
	if (!scope_ok(hit, &req->who)) {
		char have[64];

		/* the token's own scopes, as the operator gave them */
		store_scopes_format(req->who.scopes, ", ", have, sizeof(have));
		snprintf(msg, sizeof(msg), "this token's scopes (%s) do not include %s", have,
		         store_scope_name(route_scope(hit)));
		http_reply_error_code(req, 403, "forbidden", msg, NULL);
		return;
	}
	/* 4. ids: an opaque token that is not well-formed is simply not found */
	match(req, hit->pattern, req->path, params, &nparams, &ids);
	for (i = 0; i < nparams; i++) {
		if ((ids & (1u << i)) && !model_id_valid(params[i])) {
			http_reply_error_code(req, 404, "not_found",
			                      id_not_found_message(hit->pattern), NULL);
			return;
		}
		req->params[i] = params[i];
	}
	req->nparams = nparams;
	/* 5. query and body, then the handler */
	if (decode_query(req)) {
		http_reply_error_code(req, 400, "malformed",
		                      "a query parameter holds %00 or is not UTF-8 text", NULL);
		return;
	}
	if (hit->body == HTTP_BODY_OBJECT && !req->internal && decode_body(req, &err)) {
		http_reply_error(req, &err);
		return;
	}
	/* 6. a retried create answers its first answer, the handler unrun */
	if ((hit->flags & HTTP_ROUTE_IDEMPOTENT) && http_idem_begin(req))
		return;
	memset(&err, 0, sizeof(err));
	if (hit->handler(req, &err)) {
		if (!http_idem_after_fail(req))
			http_reply_error(req, &err);
		return;
	}
	if (!req->status) {
		http_log_error("handler for %s %s replied nothing", method_sent(req), hit->pattern);
		http_reply_error_code(req, 500, "internal", "internal error", NULL);
	}
}

/* /admin or a path under /admin/: the admin view's (fcgi/view/view.h).
 * The first segment is compared decoded, as every literal is. */
static int is_view_path(const char *path)
{
	size_t n;

	if (path[0] != '/')
		return 0;
	n = strcspn(path + 1, "/");
	return segment_is("admin", 5, path + 1, n);
}

/* ---- request id and access line ------------------------------------------ */

/* 1 if id is a request id a client may choose (X-Request-Id): 1 to
 * HTTP_REQUEST_ID_MAX characters of A-Z a-z 0-9 . _ : -, which a log
 * line and a reply header can carry as they are. */
static int request_id_valid(const char *id)
{
	size_t n;

	if (!id)
		return 0;
	n = strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-");
	return n >= 1 && n <= HTTP_REQUEST_ID_MAX && id[n] == '\0';
}

/* The client's X-Request-Id when it is one we can repeat as it is (a
 * proxy's or a test's, to find the request in our log), else a new one:
 * 16 random bytes in hex; made the log's current id. */
static void request_id_pick(struct http_request *req)
{
	static unsigned long long fallback;
	unsigned char rnd[16];
	const char *h;

	h = FCGX_GetParam("HTTP_X_REQUEST_ID", req->fcgx->envp);
	if (request_id_valid(h)) {
		memcpy(req->request_id, h, strlen(h) + 1);
	} else if (RAND_bytes(rnd, sizeof(rnd)) == 1) {
		model_hex_encode(rnd, sizeof(rnd), req->request_id);
	} else {
		/* still unique within this worker, and says it is not random */
		snprintf(req->request_id, sizeof(req->request_id), "w%ld-%llu", (long)getpid(),
		         ++fallback);
	}
	olv_log_set_request_id(req->request_id);
}

/* The access line of the request just served: who asked what and how it
 * ended. The path only (a token pasted into a query string stays out),
 * the token's id and never the token. Ends the log's current request id. */
static void log_access(struct http_request *req)
{
	struct timespec now;
	json_t *f;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - req->started.tv_sec) * 1e3 +
	     (double)(now.tv_nsec - req->started.tv_nsec) / 1e6;
	f = json_object();
	if (f) {
		json_object_set_new(f, "method", olv_log_text(method_sent(req), 16));
		json_object_set_new(f, "path", olv_log_text(req->path, HTTP_LOG_PATH_MAX));
		json_object_set_new(f, "status", json_integer(req->status));
		json_object_set_new(f, "duration_ms",
		                    json_real((double)(long long)(ms * 1e3) / 1e3));
		if (req->who.tenant_id[0]) {
			json_object_set_new(f, "tenant_id", json_string(req->who.tenant_id));
			json_object_set_new(f, "token_id", json_string(req->who.token_id));
		}
		if (req->error_code)
			json_object_set_new(f, "error", json_string(req->error_code));
	}
	/* a tenant at its storage quota is the tenant's state, not a fault of
	 * the server: a warning, so that alerts on error lines stay quiet */
	http_log_fields(req->status == 507   ? OLV_LOG_WARNING
	                : req->status >= 500 ? OLV_LOG_ERROR
	                                     : OLV_LOG_INFO,
	                f, "request");
	json_decref(f);
	olv_log_set_request_id(NULL);
}

void http_log_fields(enum olv_log_level level, json_t *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_vfields("olivares-fcgi", level, fields, fmt, ap);
	va_end(ap);
}

void http_serve(struct http_worker *w, FCGX_Request *fr, const struct http_route *routes, size_t n)
{
	struct http_request req;
	struct model_error err;
	const char *m;

	memset(&req, 0, sizeof(req));
	memset(&err, 0, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &req.started);
	req.fcgx = fr;
	req.worker = w;
	req.cfg = w->cfg;
	request_id_pick(&req);
	m = FCGX_GetParam("REQUEST_METHOD", fr->envp);
	/* HEAD is the GET without its body (RFC 9110 §9.3.2: every
	 * general-purpose server supports both): routed, authorised and
	 * handled as the GET; reply_raw() leaves the body out */
	req.head = m && strcmp(m, "HEAD") == 0;
	req.method = http_req_strdup(&req, m && !req.head ? m : "GET");
	req.path = request_path(&req);
	m = FCGX_GetParam("QUERY_STRING", fr->envp);
	req.query = http_req_strdup(&req, m ? m : "");
	if (w->begin)
		w->begin(&req);
	/* the body is read (or dropped) before any reply, so the web server
	 * is never cut off while it is still sending it */
	if (read_body(&req, &err))
		http_reply_error(&req, &err);
	else if (w->view && is_view_path(req.path))
		w->view(&req);
	else
		route(&req, routes, n);
	/* a quota guard its write did not use must not hold the next request's */
	if (w->store)
		store_quota_guard(w->store, NULL, 0);
	log_access(&req);
	http_metrics_count(&req, w->view && is_view_path(req.path));
	req_release(&req);
}

int http_call(struct http_request *parent, const struct http_principal *who, const char *method,
              const char *path, const char *query, json_t *body, int *status, json_t **reply)
{
	struct http_request sub;
	const char *code;
	int rc = 0;

	memset(&sub, 0, sizeof(sub));
	sub.fcgx = parent->fcgx;
	sub.worker = parent->worker;
	sub.cfg = parent->cfg;
	sub.internal = 1;
	sub.who = *who;
	sub.method = method;
	sub.path = path;
	sub.query = query ? query : "";
	model_buf_init(&sub.body, 0);
	sub.json = http_req_own(&sub, body ? json_incref(body) : json_object());
	route(&sub, parent->worker->routes, parent->worker->nroutes);
	if (!sub.captured) {
		/* route() always replies; an unknown reply still gives the
		 * caller an object to render */
		sub.status = sub.status ? sub.status : 500;
		sub.captured = json_pack("{s:{s:s,s:s}}", "error", "code", "internal", "message",
		                         "internal error");
	}
	*status = sub.status;
	*reply = sub.captured;
	code = json_string_value(json_object_get(json_object_get(sub.captured, "error"), "code"));
	if (code && strcmp(code, "storage_unavailable") == 0)
		rc = -1;
	/* the parent keeps using the worker's connection, reopened or not */
	parent->store = parent->worker->store;
	req_release(&sub);
	return rc;
}
