/*
 * One API request with libcurl. The response is collected in a capped
 * model_buf (the cap is enforced where the bytes are appended), decoded with
 * jansson, and any failure is turned into one message on stderr here, so the
 * commands only see "got JSON" or "already reported".
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

#define SNIPPET_BYTES 200

struct response {
	struct model_buf body;
	int overflow; /* the body crossed CLI_MAX_RESPONSE_BYTES */
	long status;  /* the HTTP status, once answered */
	long handled; /* a non-2xx status the caller reports itself, or 0 */
	int quiet;    /* say nothing on failure */
};

static void response_init(struct response *r)
{
	model_buf_init(&r->body, CLI_MAX_RESPONSE_BYTES);
	r->overflow = 0;
	r->status = 0;
	r->handled = 0;
	r->quiet = 0;
}

/* One message of a failed request, "olivares: …" on stderr, unless the
 * caller asked for silence or the user interrupted the command (the
 * command then says what goes on). A progress line is ended first, so the
 * message starts a line of its own. */
static void say(const struct response *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct response *r, const char *fmt, ...)
{
	va_list ap;

	if (r->quiet || cli_interrupted())
		return;
	va_start(ap, fmt);
	cli_vfail(fmt, ap);
	va_end(ap);
}

/* libcurl's progress callback, also called while a transfer waits: a
 * SIGINT ends the request at once (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	(void)p;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return cli_interrupted() ? 1 : 0;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *userdata)
{
	struct response *r = userdata;
	size_t n = size * nmemb;

	if (model_buf_add(&r->body, p, n)) {
		r->overflow = 1;
		return 0; /* makes curl stop with CURLE_WRITE_ERROR */
	}
	return n;
}

char *cli_http_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, (int)strlen(s));
	char *copy;

	if (!e) {
		fputs("olivares: out of memory\n", stderr);
		abort();
	}
	copy = model_xstrdup(e);
	curl_free(e);
	return copy;
}

/* The token goes into a header line: refuse what would break the line or
 * the Bearer syntax, without echoing the value. */
static int token_ok(const char *t)
{
	const unsigned char *p;

	for (p = (const unsigned char *)t; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f)
			return 0;
	}
	return 1;
}

/* A non-2xx answer, on stderr. url NULL: the shorter form of
 * cli_http_get_raw (no URL, no field line). */
static void report_http_error(long status, const struct response *r, const char *url)
{
	json_t *doc = NULL, *error, *code, *message, *field;
	char *msg = NULL, *snippet = NULL, *code_s = NULL;
	size_t n;

	doc = json_loadb(r->body.data, r->body.len, 0, NULL);
	error = doc ? json_object_get(doc, "error") : NULL;
	code = json_object_get(error, "code");
	message = json_object_get(error, "message");
	if (json_is_string(code) && json_is_string(message)) {
		msg = cli_escape(json_string_value(message), json_string_length(message));
		code_s = cli_escape(json_string_value(code), json_string_length(code));
		say(r, "%s (%s, HTTP %ld)", msg, code_s, status);
		field = json_object_get(error, "field");
		if (url && json_is_string(field) && json_string_length(field) > 0) {
			free(msg);
			msg = cli_escape(json_string_value(field), json_string_length(field));
			say(r, "field: %s", msg);
		}
		/* a route the server does not have: most often a base URL
		 * with a path of its own */
		if (url && status == 404 && strcmp(json_string_value(code), "not_found") == 0 &&
		    strcmp(json_string_value(message), "no such resource") == 0)
			say(r, "asked for %s%s", url,
			    strstr(url, "/v1/v1/") ? " (--url / OLIVARES_URL is the server's root, "
			                             "without /v1)"
			                           : "");
		goto out;
	}
	if (r->body.len == 0) {
		if (url)
			say(r, "HTTP %ld from %s (empty body)", status, url);
		else
			say(r, "HTTP %ld: (empty body)", status);
		goto out;
	}
	n = r->body.len < SNIPPET_BYTES ? r->body.len : SNIPPET_BYTES;
	snippet = cli_escape(r->body.data, n);
	if (url)
		say(r, "HTTP %ld from %s: %s%s", status, url, snippet, n < r->body.len ? "…" : "");
	else
		say(r, "HTTP %ld: %s%s", status, snippet, n < r->body.len ? "…" : "");
out:
	free(msg);
	free(code_s);
	free(snippet);
	json_decref(doc);
}

/*
 * One request: method on ctx->url + path, with "Accept: <accept>" and, when
 * body is not NULL, body as compact JSON. The 2xx response's body is left
 * in r->body (initialised by the caller). Returns 0, or -1 after printing
 * why (a non-2xx answer in the short form when raw).
 */
/* OLIVARES_BUSY_WAIT (whole seconds, 0..3600), else CLI_BUSY_WAIT_DEFAULT. */
static long busy_wait_seconds(void)
{
	const char *e = getenv("OLIVARES_BUSY_WAIT");
	char *end;
	long v;

	if (!e || !*e)
		return CLI_BUSY_WAIT_DEFAULT;
	errno = 0;
	v = strtol(e, &end, 10);
	if (errno || end == e || *end || v < 0 || v > 3600) {
		cli_fail("OLIVARES_BUSY_WAIT must be whole seconds from 0 to 3600; waiting %ld s",
		         CLI_BUSY_WAIT_DEFAULT);
		return CLI_BUSY_WAIT_DEFAULT;
	}
	return v;
}

/* One line on stderr for a 429 that will be tried again: the server's
 * message (from the JSON error body, when there is one). */
static void busy_say(const struct response *r, long seconds)
{
	json_t *j = json_loadb(r->body.data, r->body.len, 0, NULL);
	const char *msg =
	    json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	char *shown = msg ? cli_escape(msg, strlen(msg)) : NULL;

	say(r, "busy (HTTP 429%s%s); trying again in %ld s", shown ? ": " : "", shown ? shown : "",
	    seconds);
	free(shown);
	json_decref(j);
}

static int idempotency_key_ok(const char *k)
{
	size_t n = strlen(k), i;

	if (n == 0 || n > CLI_IDEMPOTENCY_KEY_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && !strchr("-_.:~+/=", k[i]))
			return 0;
	return 1;
}

int cli_idempotency_key_opt(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *k = cli_arg(a, "idempotency-key");

	if (!k)
		return 0;
	if (!idempotency_key_ok(k)) {
		cli_usage_error(ctx,
		                "--idempotency-key must be 1 to %d characters of A-Z a-z 0-9 and "
		                "- _ . : ~ + / =",
		                CLI_IDEMPOTENCY_KEY_MAX);
		return -1;
	}
	ctx->idempotency_key = k;
	return 0;
}

int cli_idempotency_key_fix(struct cli_ctx *ctx)
{
	unsigned char r[16];

	if (ctx->idempotency_key)
		return 0;
	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	model_hex_encode(r, sizeof(r), ctx->own_idempotency_key);
	ctx->idempotency_key = ctx->own_idempotency_key;
	return 0;
}

/* "Idempotency-Key: K" into out: ctx's key, or 16 random bytes (OpenSSL) as
 * 32 hex characters. 0, or -1 when the generator fails. */
static int idempotency_header(const struct cli_ctx *ctx, char *out, size_t n)
{
	unsigned char r[16];
	char hex[33];

	if (ctx->idempotency_key && idempotency_key_ok(ctx->idempotency_key)) {
		snprintf(out, n, "Idempotency-Key: %s", ctx->idempotency_key);
		return 0;
	}
	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	model_hex_encode(r, sizeof(r), hex);
	snprintf(out, n, "Idempotency-Key: %s", hex);
	return 0;
}

static int perform(const struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                   const char *accept, const char *extra, int raw, struct response *r)
{
	char errbuf[CURL_ERROR_SIZE];
	char idem[32 + CLI_IDEMPOTENCY_KEY_MAX];
	struct curl_slist *headers = NULL;
	struct model_buf url, auth;
	char *payload = NULL;
	CURL *curl = NULL;
	CURLcode res;
	curl_off_t retry_after;
	long status = 0, waited, busy_wait;
	size_t base_len;
	int rc = -1;

	model_buf_init(&url, 64 * 1024);
	model_buf_init(&auth, 64 * 1024);

	if (!ctx->token && !ctx->public_route) {
		if (ctx->config.path[0])
			say(r,
			    "no API token: set OLIVARES_TOKEN, pass --token or put token = ... in "
			    "%s",
			    ctx->config.path);
		else
			say(r, "no API token: set OLIVARES_TOKEN or pass --token");
		goto out;
	}
	if (ctx->token && !token_ok(ctx->token)) {
		say(r, "the API token contains spaces or control characters");
		goto out;
	}
	/* base URL without its trailing slashes, then the path */
	base_len = strlen(ctx->url);
	while (base_len > 0 && ctx->url[base_len - 1] == '/')
		base_len--;
	if (model_buf_add(&url, ctx->url, base_len) || model_buf_adds(&url, path) ||
	    (ctx->token && model_buf_printf(&auth, "Authorization: Bearer %s", ctx->token))) {
		say(r, "URL or token too long");
		goto out;
	}

	curl = curl_easy_init();
	if (!curl) {
		say(r, "cannot initialise libcurl");
		goto out;
	}
	if (ctx->token)
		headers = curl_slist_append(headers, auth.data);
	headers = curl_slist_append(headers, accept);
	/* one key per request, kept by the 429 retries below (the same handle
	 * and headers): the server answers a create it already made with its
	 * first answer instead of making it again */
	if (strcmp(method, "POST") == 0) {
		if (idempotency_header(ctx, idem, sizeof(idem))) {
			say(r, "cannot make a random Idempotency-Key");
			goto out;
		}
		headers = curl_slist_append(headers, idem);
	}
	if (extra)
		headers = curl_slist_append(headers, extra);
	/* no "Expect: 100-continue" round trip for bodies near 1 MiB */
	headers = curl_slist_append(headers, "Expect:");
	if (body) {
		payload = json_dumps(body, JSON_COMPACT);
		if (!payload) {
			say(r, "cannot encode the request body");
			goto out;
		}
		headers = curl_slist_append(headers, "Content-Type: application/json");
	}
	if (!headers) {
		say(r, "out of memory");
		goto out;
	}

	errbuf[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url.data);
	/* the path as built: ids that are not ids are already "-" (cli_path_id) */
	curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT,
	                 strcmp(method, "POST") == 0 ? CLI_POST_TIMEOUT_SECONDS
	                                             : CLI_TIMEOUT_SECONDS);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "olivares-cli");
	/* redirects are not followed: the bearer token stays with this server */
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	if (payload) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	}
	/* POSTFIELDS makes a POST; any other verb is named explicitly */
	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);

	waited = 0;
	busy_wait = busy_wait_seconds();
again:
	res = curl_easy_perform(curl);
	if (res == CURLE_OK) {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		/* busy: nothing was run or written, so the same request may go
		 * again, after the server's Retry-After (1 - 10 s) */
		if (status == 429 && waited < busy_wait) {
			retry_after = 0;
			curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &retry_after);
			retry_after = retry_after < 1 ? 1 : retry_after > 10 ? 10 : retry_after;
			if (waited + retry_after > busy_wait)
				retry_after = busy_wait - waited;
			busy_say(r, (long)retry_after);
			/* a SIGINT cuts the sleep short (a 429 made nothing) */
			cli_sleep_ms((long)retry_after * 1000);
			if (cli_interrupted())
				goto out;
			waited += retry_after;
			r->body.len = 0;
			r->body.data[0] = '\0';
			r->overflow = 0;
			goto again;
		}
	}
	if (res == CURLE_ABORTED_BY_CALLBACK && cli_interrupted())
		goto out;
	if (res == CURLE_WRITE_ERROR && r->overflow) {
		say(r, "the response from %.*s is larger than %u bytes", (int)base_len, ctx->url,
		    CLI_MAX_RESPONSE_BYTES);
		goto out;
	}
	if (res != CURLE_OK) {
		say(r, "cannot reach %.*s: %s", (int)base_len, ctx->url,
		    errbuf[0] ? errbuf : curl_easy_strerror(res));
		goto out;
	}
	r->status = status;
	if ((status < 200 || status > 299) && status == r->handled)
		goto out;
	if (status < 200 || status > 299) {
		report_http_error(status, r, raw ? NULL : url.data);
		if (status == 429 && waited > 0)
			say(r,
			    "still busy after %ld s of trying (OLIVARES_BUSY_WAIT=%ld): "
			    "gave up",
			    waited, busy_wait);
		goto out;
	}
	rc = 0;
out:
	free(payload);
	curl_slist_free_all(headers);
	if (curl)
		curl_easy_cleanup(curl);
	model_buf_release(&url);
	/* our copy of the Authorization line held the token: wipe it */
	memset(auth.data, 0, auth.len);
	model_buf_release(&auth);
	return rc;
}

int cli_http_request(const struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                     const struct cli_http_opts *opts, json_t **out, long *status)
{
	struct response r;
	json_error_t jerr;
	int rc = -1;

	*out = NULL;
	response_init(&r);
	if (opts) {
		r.handled = opts->handled_status;
		r.quiet = opts->quiet;
	}
	if (perform(ctx, method, path, body, "Accept: application/json", opts ? opts->header : NULL,
	            0, &r)) {
		if (r.handled && r.status == r.handled) {
			*out = json_loadb(r.body.data, r.body.len, 0, NULL);
			rc = 1;
		}
		goto out;
	}
	*out = json_loadb(r.body.data, r.body.len, 0, &jerr);
	if (!*out) {
		/* only a 2xx answer gets here */
		say(&r, "invalid JSON in the response (HTTP %ld): %s", r.status, jerr.text);
		goto out;
	}
	rc = 0;
out:
	if (status)
		*status = r.status;
	model_buf_release(&r.body);
	return rc;
}

int cli_http_call(const struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                  json_t **out)
{
	return cli_http_request(ctx, method, path, body, NULL, out, NULL) == 0 ? 0 : -1;
}

int cli_http_get_raw(const struct cli_ctx *ctx, const char *path, const char *accept,
                     struct model_buf *out)
{
	struct response r;
	struct model_buf header;
	int rc;

	response_init(&r);
	model_buf_init(&header, 1024);
	if (model_buf_printf(&header, "Accept: %s", accept)) {
		say(&r, "Accept header too long");
		rc = -1;
	} else {
		rc = perform(ctx, "GET", path, NULL, header.data, NULL, 1, &r);
	}
	model_buf_release(&header);
	*out = r.body; /* the caller's to release, also on failure */
	return rc;
}

void cli_path_id(struct model_buf *path, const char *prefix, const char *id, const char *suffix)
{
	model_buf_init(path, CLI_PATH_MAX_BYTES);
	/* constant prefix and suffix around 32 characters or "-": far below the cap */
	model_buf_must_fit(
	    model_buf_printf(path, "%s%s%s", prefix, model_id_valid(id) ? id : "-", suffix));
}

int cli_query_add(const struct cli_ctx *ctx, struct model_buf *path, const char *name,
                  const char *value)
{
	char *e;
	int rc;

	if (!value)
		return 0;
	e = cli_http_escape(value);
	rc = model_buf_printf(path, "%c%s=%s", strchr(path->data, '?') ? '&' : '?', name, e);
	free(e);
	if (rc)
		cli_usage_error(ctx, "--%s is too long", name);
	return rc;
}

int cli_query_add_int(const struct cli_ctx *ctx, struct model_buf *path, const struct cli_args *a,
                      const char *name)
{
	const char *v = cli_arg(a, name);
	char num[32];
	long long n;

	if (!v)
		return 0;
	if (cli_parse_int(ctx, name, v, &n))
		return -1;
	snprintf(num, sizeof(num), "%lld", n);
	return cli_query_add(ctx, path, name, num);
}
