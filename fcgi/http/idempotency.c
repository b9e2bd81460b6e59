/*
 * The Idempotency-Key request header on the creates (HTTP_ROUTE_IDEMPOTENT
 * routes, http.h): a client that retries a create it got no answer for
 * (a dropped connection, a 502 from a worker that died after its commit)
 * sends the same key and gets the first answer back, and nothing new is
 * written. The first answer is stored by the store with the record it
 * created, in one transaction (sql/idempotency.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/http/http.h"

static int key_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("-_.:~+/=", c) != NULL);
}

/* The key of the header value h, trimmed of spaces and of one pair of
 * double quotes (a structured-field string, as the IETF draft writes it),
 * as a request-owned string, or NULL when it is not a well-formed key. */
static const char *parse_key(struct http_request *req, const char *h)
{
	const char *p = h, *end = h + strlen(h);
	char *key;
	size_t n, i;

	while (*p == ' ' || *p == '\t')
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end - p >= 2 && *p == '"' && end[-1] == '"') {
		p++;
		end--;
	}
	n = (size_t)(end - p);
	if (n == 0 || n > STORE_IDEM_KEY_MAX)
		return NULL;
	for (i = 0; i < n; i++)
		if (!key_char((unsigned char)p[i]))
			return NULL;
	key = http_req_alloc(req, n + 1);
	memcpy(key, p, n);
	key[n] = '\0';
	return key;
}

/* Reply what store_idem_lookup answered: 1 when replied (the first answer,
 * the 422, or a store failure), 0 when the key is not taken. */
static int reply_lookup(struct http_request *req)
{
	struct model_error err;
	json_t *body = NULL;
	enum store_rc rc;
	int status = 0;

	rc = store_idem_lookup(req->store, req->who.tenant_id, &req->idem, &status, &body);
	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc == STORE_CONFLICT) {
		http_reply_error_code(req, 422, "idempotency_key_reused",
		                      "this Idempotency-Key was already used with another request "
		                      "body or path; send a new key for a new request",
		                      "Idempotency-Key");
		return 1;
	}
	if (rc) {
		memset(&err, 0, sizeof(err));
		http_store_fail(req, rc, "idempotency key lookup", &err);
		http_reply_error(req, &err);
		return 1;
	}
	http_reply_json_hdr(req, status, "Idempotent-Replayed: true\r\n", http_req_own(req, body));
	return 1;
}

int http_idem_begin(struct http_request *req)
{
	const char *h, *key;
	char *canon, *route, *now, *expires;
	char sha[65];
	size_t n;

	/* the admin view's internal calls carry no key of their own (the
	 * header would be the browser's request's) */
	if (req->internal)
		return 0;
	h = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", req->fcgx->envp);
	if (!h)
		return 0;
	key = parse_key(req, h);
	if (!key) {
		http_reply_error_code(req, 400, "malformed",
		                      "Idempotency-Key must be 1 to 255 characters of A-Z a-z 0-9 "
		                      "and - _ . : ~ + / =, bare or in double quotes",
		                      "Idempotency-Key");
		return 1;
	}
	/* the body's fingerprint is its canonical JSON (sorted keys, compact):
	 * a retry that re-encodes the same object matches */
	canon = json_dumps(req->json, JSON_COMPACT | JSON_SORT_KEYS);
	if (!canon) {
		http_reply_error_code(req, 500, "internal", "internal error", NULL);
		return 1;
	}
	http_sha256_hex(canon, strlen(canon), sha);
	free(canon);
	n = strlen(req->method) + 1 + strlen(req->path) + 1;
	if (n - 1 > STORE_IDEM_ROUTE_MAX) {
		http_reply_error_code(req, 400, "malformed",
		                      "the path is too long for an Idempotency-Key",
		                      "Idempotency-Key");
		return 1;
	}
	route = http_req_alloc(req, n);
	snprintf(route, n, "%s %s", req->method, req->path);
	now = http_req_alloc(req, 25);
	expires = http_req_alloc(req, 25);
	http_now_iso(now);
	if (http_iso_plus_seconds(now, HTTP_IDEM_TTL_SECONDS, expires)) {
		http_reply_error_code(req, 500, "internal", "internal error", NULL);
		return 1;
	}
	memset(&req->idem, 0, sizeof(req->idem));
	req->idem.key = key;
	req->idem.route = route;
	req->idem.request_sha256 = http_req_strdup(req, sha);
	req->idem.now = now;
	req->idem.expires_at = expires;
	/* looked up with a 2xx placeholder: the handler names its status */
	req->idem.status = 201;
	if (reply_lookup(req))
		return 1;
	req->has_idem = 1;
	return 0;
}

int http_idem_after_fail(struct http_request *req)
{
	if (!req->has_idem || req->status || !req->store || req->worker->store_broken)
		return 0;
	return reply_lookup(req);
}

const struct store_idem *http_req_idem(struct http_request *req, int status)
{
	if (!req->has_idem)
		return NULL;
	req->idem.status = status;
	return &req->idem;
}
