#ifndef OLIVARES_FCGI_HTTP_HTTP_H
#define OLIVARES_FCGI_HTTP_HTTP_H
/**
 * The HTTP layer of olivares-fcgi: one FastCGI request in, one JSON reply
 * out, for the REST API (/v1/…, /healthz).
 *
 * A request goes through http_serve in this order:
 *   0. its request id (the client's X-Request-Id when valid, else a new
 *      one), sent back on every reply and in every log line until it
 *      ends; the worker's begin hook;
 *   1. body read by CONTENT_LENGTH into a buffer capped at
 *      MODEL_MAX_REQUEST_BYTES (413 too_large above it, without buffering
 *      it; 400 malformed when fewer bytes arrive than announced);
 *   2. route lookup in a static table on the path as sent, REQUEST_URI
 *      without its query string (http_path_match; unknown path: 404
 *      not_found);
 *   3. auth: "Authorization: Bearer <token>", SHA-256 hex of the token,
 *      store_token_lookup, CRYPTO_memcmp (401 unauthorized, no detail);
 *      for routes of a module, store_token_lookup_module reads the
 *      module's setting for the caller's tenant in the same query;
 *   4. a path that exists with another method: 405 method_not_allowed;
 *   5. module gate for routes of a module (404 module_disabled while off);
 *   6. role check (403 forbidden, "requires role R; your token has R'");
 *      ids in the path must be well-formed as sent (model_id_valid) or
 *      the reply is the 404 not_found of an unknown record;
 *   7. JSON body decoded with JSON_REJECT_DUPLICATES for routes that take
 *      one (400 malformed; an empty body is {});
 *   8. the handler;
 *   9. its access line in the log (method, path, status, duration,
 *      tenant and token ids; level error for a 5xx).
 * Every error reply is {"error":{"code","message","field"?}} and goes
 * through http_reply_error / http_reply_error_code.
 *
 * Memory: everything a handler allocates for the request is handed to the
 * request (http_req_alloc, http_req_strdup, http_req_own) and released in
 * one place when the request ends, so no handler frees on its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <fcgiapp.h>
#include <jansson.h>

#include "fcgi/config.h"
#include "fcgi/log.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/history.h"
#include "model/scorer.h"
#include "sql/store.h"

/** The longest request id taken from a client's X-Request-Id (the log's
 * own limit). */
#define HTTP_REQUEST_ID_MAX OLV_LOG_REQUEST_ID_MAX

struct http_request;
struct http_route;

/** Per-worker state, lives for the worker's whole life. */
struct http_evidence_key;

struct http_worker {
	const struct http_config *cfg; /* borrowed */
	struct store *store;           /* this worker's own connection; NULL
	                                * until connected (reconnected lazily
	                                * after STORE_UNAVAILABLE) */
	int store_broken;              /* 1: close and reopen before next use */
	/* ids of the tenants named by cfg->tenants[i] (fcgi/run/job.c,
	 * backend policy), "" until found: a name is looked up until its tenant
	 * exists, then kept (a tenant's id never changes) */
	char policy_tenant_ids[HTTP_MAX_TENANT_POLICIES][33];
	/* the scorer adapter, built by the composition root (fcgi/main.c,
	 * the only place that chooses it) for this worker; borrowed. NULL
	 * means none is wired (model_scorer_none). */
	const struct model_scorer *scorer;
	/* the history source of replays (model/history.h), wired by the
	 * composition root (fcgi/main.c, the only place that chooses it);
	 * borrowed. NULL: none is wired, replays answer 503. */
	const struct model_history_source *history;
	/* the admin HTML view (fcgi/view/view.h), wired by the composition root:
	 * http_serve hands it every request whose path is /admin or starts
	 * with /admin/, after the body is read. NULL: those paths get the
	 * API's 404. */
	void (*view)(struct http_request *req);
	/* the API route table the view calls through http_call (borrowed) */
	const struct http_route *routes;
	size_t nroutes;
	/* the evidence signing key (fcgi/evidence/key.h), loaded by the
	 * master before the fork; borrowed. NULL: none could be loaded, the
	 * evidence routes answer 503. */
	const struct http_evidence_key *evidence;
	/* called by http_serve for every request, once its method, path and
	 * request id are known and before its body is read (the composition
	 * root arms its request watchdog there). NULL: nothing is called. */
	void (*begin)(const struct http_request *req);
};

/** Who is calling: filled by auth from the token's row. */
struct http_principal {
	char tenant_id[33];
	char token_id[33];
	enum store_role role;
	unsigned scopes; /* enum store_scope mask of the token; 0: the role decides */
};

/** Maximum number of {id} segments in a route pattern. */
#define HTTP_MAX_PARAMS 4

/**
 * A handler replies once (http_reply_json or an error helper) and returns
 * 0, or returns -1 with *err filled and the router replies the error.
 */
typedef int (*http_handler_fn)(struct http_request *req, struct model_error *err);

/** Whether a route reads a JSON object body. */
enum http_body { HTTP_BODY_NONE = 0, HTTP_BODY_OBJECT };

/** Role value for a route that needs no token (GET /healthz). */
#define HTTP_ROLE_PUBLIC 0

/**
 * One row of the route table: the router, not each handler, checks the
 * role and the module of a route. pattern is an absolute path whose
 * segments are literals, "{id}" or "{name}", matched against the path as
 * the client sent it (http_path_match): an "{id}" is one path segment as
 * sent, checked with model_id_valid (a malformed one is the route's 404,
 * the body of an unknown record), captured in order into req->params; a
 * "{name}" is one non-empty segment, percent-decoded once and captured (the
 * handler checks it). min_role is an enum store_role value or
 * HTTP_ROLE_PUBLIC. module is the module whose enablement gates the route
 * ("sandbox") or NULL.
 */
struct http_route {
	const char *method;
	const char *pattern;
	int min_role;
	const char *module;
	enum http_body body;
	http_handler_fn handler;
	unsigned flags; /* HTTP_ROUTE_* (0 for most routes) */
	/* the enum store_scope a scoped token needs (its role is checked
	 * too); 0 is read as STORE_SCOPE_ADMIN, so a route that names none
	 * is closed to every scoped token without the admin scope */
	unsigned scope;
};

/**
 * Route flag: a create that honours an Idempotency-Key request header
 * (fcgi/http/idempotency.c). The router checks the key and answers a
 * retry with the first answer before the handler runs; the handler writes
 * its record with http_req_idem(req, status) handed to the store's *_idem
 * create, and replies that status with the store's answer.
 */
#define HTTP_ROUTE_IDEMPOTENT 1u

/**
 * Route flag: a public route that answers without the store (GET
 * /metrics: the pool's own counters, and olivares_store_up 0). The router
 * still connects req->store when it can, but an unreachable store is not
 * the router's 503: the handler finds req->store NULL and says so itself.
 */
#define HTTP_ROUTE_STORE_OPTIONAL 2u

/** One request. Fields are valid for the handler's whole call. */
struct http_request {
	FCGX_Request *fcgx;                  /* borrowed */
	struct http_worker *worker;          /* borrowed */
	const struct http_config *cfg;       /* == worker->cfg */
	struct store *store;                 /* connected store (never NULL in a handler
	                                      * of a route that is not public) */
	const char *method;                  /* REQUEST_METHOD; "GET" for a HEAD */
	int head;                            /* a HEAD: served as the GET, no body written */
	const char *path;                    /* as sent (REQUEST_URI), without the
	                                      * query string: not decoded, "..", "."
	                                      * and "//" kept */
	const char *query;                   /* QUERY_STRING, "" when none */
	json_t *query_params;                /* query decoded (route step 5), else NULL */
	struct model_buf body;               /* raw body bytes (NUL-terminated) */
	json_t *json;                        /* decoded body object (HTTP_BODY_OBJECT), else NULL */
	struct http_principal who;           /* the caller (zeroed on public routes) */
	const char *params[HTTP_MAX_PARAMS]; /* {id} captures, in pattern order */
	int nparams;
	int status; /* status replied, 0 until a reply is written */
	/* one cleanup path: pointers to free() and json references to decref */
	void **owned;
	size_t nowned, owned_alloc;
	json_t **jowned;
	size_t njowned, jowned_alloc;
	/* http_call: the principal is given (no token is read), the module
	 * gate reads store_module_get, and the reply is captured into
	 * captured (a new reference) instead of being written */
	int internal;
	json_t *captured;
	/* the Idempotency-Key of a create (HTTP_ROUTE_IDEMPOTENT) that was not
	 * used before: has_idem 1 and idem filled (its strings request-owned) */
	int has_idem;
	/* http_quota_check's figures for a record it let through, for the
	 * 507 of the write's own check (STORE_QUOTA) */
	int quota_mb;
	long long quota_adds;
	struct store_idem idem;
	/* the request id (X-Request-Id, http_serve): sent back on every
	 * reply and in every log line written while the request is served */
	char request_id[HTTP_REQUEST_ID_MAX + 1];
	struct timespec started; /* CLOCK_MONOTONIC, for the access line */
	const char *error_code;  /* the first error reply's code (static), or NULL */
	/* for the metrics (fcgi/http/metrics.h): the route route() matched by
	 * its path, HTTP_METRICS_SLOT_ROUTE + its index (0: none matched) */
	int route_slot;
};

/** One "{id}" or "{name}" segment that http_path_match captured: len bytes
 * at at, in the path as sent (not decoded, not NUL-terminated). */
struct http_path_capture {
	const char *at;
	size_t len;
	int is_id;
};

/**
 * Match path (absolute, as the client sent it, without the query string)
 * against pattern (a route pattern, struct http_route), segment by
 * segment. The path is split on its own '/' only and nothing is merged or
 * resolved: "//", "." and ".." are segments like any other, so they match
 * no literal and no id. A literal segment of the pattern matches the
 * path's segment percent-decoded once ("%73cenarios" is "scenarios"; a
 * '%' without two hex digits, or %00, matches nothing); "{id}" and
 * "{name}" match any non-empty segment, captured as sent into caps[0..max)
 * (caps may be NULL to count only; a pattern with more than max of them
 * matches nothing). Returns 1 with *ncaps on a match, else 0. Pure: no
 * allocation.
 */
int http_path_match(const char *pattern, const char *path, struct http_path_capture *caps, int max,
                    int *ncaps);

/**
 * Serve one accepted FastCGI request with the route table routes[0..n-1]
 * and release everything it allocated. Never fails: every problem becomes
 * a JSON error reply; every request, one access line in the log.
 */
void http_serve(struct http_worker *w, FCGX_Request *fr, const struct http_route *routes, size_t n);

/** Write a reply: status line, the JSON headers, extra_headers (each line
 * ending in "\r\n", may be NULL), and the compact JSON of body (borrowed).
 * Loops until the whole body is written. Returns 0, -1 on a write error. */
int http_reply_json_hdr(struct http_request *req, int status, const char *extra_headers,
                        json_t *body);
/** http_reply_json_hdr without extra headers. */
int http_reply_json(struct http_request *req, int status, json_t *body);

/** Write a reply that is not JSON (the JUnit XML export): status line,
 * "Content-Type: content_type", the same caching and nosniff headers as
 * the JSON replies, and len bytes of body (borrowed), written whole.
 * Returns 0, -1 on a write error. */
int http_reply_body(struct http_request *req, int status, const char *content_type,
                    const char *body, size_t len);

/** Write a reply with any content type: status line, "Content-Type:
 * content_type", "Cache-Control: no-store", "X-Content-Type-Options:
 * nosniff", extra_headers (each line ending in "\r\n", may be NULL; at
 * most 1536 bytes in all) and len bytes of body (borrowed, may be NULL when
 * len is 0), written whole. Statuses 303 (See Other, with a Location in
 * extra_headers) and the error statuses have their reason phrase.
 * Returns 0, -1 on a write error or when a reply was already written. */
int http_reply_raw(struct http_request *req, int status, const char *content_type,
                   const char *extra_headers, const char *body, size_t len);

/**
 * Call one API route from inside the worker (the admin view's way into the
 * API: the same handlers, so the same validation, roles, module gate and
 * tenant scoping). method, path (absolute, e.g.
 * "/v1/m/sandbox/runs/<id>") and query ("" or "a=b&c=d", no '?'; values
 * must already be in the form http_query_get reads: ids, integers, words)
 * are matched against w->routes as http_serve would; body is the JSON
 * object the route reads (borrowed; NULL is {}). The caller *who has been
 * authenticated by the caller (session or bearer token): no token is read.
 * The checks run in http_serve's order (404 unknown path, module gate with
 * store_module_get for who's tenant, 405, 403 with who's role, 404 for a
 * malformed id) and then the handler. Its reply is captured, not written:
 * *status gets the HTTP status and *reply a new reference to the JSON body
 * (the {"error":{…}} object for errors; never NULL; a non-JSON reply such
 * as JUnit becomes a 500 internal error object). parent is the request
 * being served (the worker, its store, and for request-owned memory);
 * returns 0, or -1 when the store is unreachable (*status 503 and
 * *reply the storage_unavailable error).
 */
int http_call(struct http_request *parent, const struct http_principal *who, const char *method,
              const char *path, const char *query, json_t *body, int *status, json_t **reply);

/**
 * Authenticate "Authorization: Bearer <token>" of the request exactly as
 * the API does (SHA-256, store_token_lookup, constant-time compare) into
 * req->who. Returns 0 (signed in), 1 (no Authorization header at all), 2
 * (a header that is not a valid, known token), or -1 (store unavailable).
 * Writes no reply. Connects req->store if needed.
 */
int http_auth_bearer(struct http_request *req);

/** Make sure req->store is a live connection (the worker's). 0, or -1
 * (the store is unreachable; nothing is replied). */
int http_req_store(struct http_request *req);

/** SHA-256 of n bytes of s as 64 lowercase hex + NUL (OpenSSL EVP). On an
 * OpenSSL failure hex is 64 'x' (never equal to a stored digest). */
void http_sha256_hex(const char *s, size_t n, char hex[65]);

/** Reply {"error":{"code","message","field"?}} for a model_error, with the
 * status of model_error_http_status(err->code). Returns 0. */
int http_reply_error(struct http_request *req, const struct model_error *err);
/** Reply an error with an explicit status and code (for the HTTP-only
 * codes: unauthorized, forbidden, module_disabled, method_not_allowed).
 * field may be NULL or "". Returns 0. */
int http_reply_error_code(struct http_request *req, int status, const char *code,
                          const char *message, const char *field);

/**
 * The 507 quota_exceeded of a write of the caller's tenant: *err gets the
 * message and the figures (used_bytes, limit_bytes, request_bytes). used
 * is the usage the refusal rests on, or NULL to read it now (a refusal by
 * the write's own check: the store's figures after its rollback; zeros
 * when they cannot be read); adds the bytes of the record refused, or -1
 * for a run, replay or comparison. Returns -1.
 */
int http_quota_refuse(struct http_request *req, const struct store_usage *used, long long limit,
                      int mb, long long adds, struct model_error *err);

/**
 * Turn a store failure into *err (STORE_NOT_FOUND: not_found, "scenario
 * not found" when what starts with "scenario " and likewise for run,
 * session and comparison, else "not found"; STORE_UNAVAILABLE: storage_unavailable and the
 * connection is reopened before the next request, anything else: internal) and log it without any
 * request data. Returns -1 so handlers can `return http_store_fail(...)`.
 */
int http_store_fail(struct http_request *req, enum store_rc rc, const char *what,
                    struct model_error *err);

/** Allocate n bytes owned by the request (abort on OOM). */
void *http_req_alloc(struct http_request *req, size_t n);
/** Copy of s owned by the request. */
char *http_req_strdup(struct http_request *req, const char *s);
/** Hand the reference j (may be NULL) to the request, which decrefs it at
 * the end; returns j so calls can be nested. */
json_t *http_req_own(struct http_request *req, json_t *j);

/**
 * The value of query parameter name, decoded as an HTML form's GET query
 * is (fcgi/view/form.h: '+' is a space, then %XX escapes, so "limit=%31" is
 * limit 1), a request-owned string, or NULL if absent. When the parameter
 * repeats, the first one wins. A query that does not decode (a value
 * holding %00 or bytes that are not UTF-8) was refused with a 400 before
 * the handler ran; called outside a handler, it then reads as empty.
 */
const char *http_query_get(struct http_request *req, const char *name);

/**
 * Integer query parameter: *out = def when absent; otherwise the value must
 * be a decimal integer in [min, max] or the call returns -1 with *err
 * (malformed, field = name).
 */
int http_query_int(struct http_request *req, const char *name, int def, int min, int max, int *out,
                   struct model_error *err);

/** Current UTC time as "YYYY-MM-DDTHH:MM:SS.mmmZ" into out (25 bytes). */
void http_now_iso(char out[25]);

/** How long an Idempotency-Key's first answer is kept (24 h). */
#define HTTP_IDEM_TTL_SECONDS (24L * 3600)

/**
 * The Idempotency-Key step of the router, for a route flagged
 * HTTP_ROUTE_IDEMPOTENT, after the body is decoded and before the handler:
 * no header, 0 (nothing changes); a malformed key, 400 malformed replied
 * (the key is 1..STORE_IDEM_KEY_MAX characters of A-Z a-z 0-9 - _ . : ~ + /
 * =, bare or as a quoted string); a key the tenant used for this route,
 * path and body, its first answer replied (with "Idempotent-Replayed:
 * true"); a key used for another route, path or body, 422
 * idempotency_key_reused replied; a key not seen (or expired), 0 with
 * req->idem filled. Returns 0 (run the handler) or 1 (replied).
 */
int http_idem_begin(struct http_request *req);

/**
 * After the handler of a request with a fresh key failed: when the key was
 * taken meanwhile by a concurrent request with the same key (the store
 * refused the create with STORE_CONFLICT and wrote nothing), reply that
 * request's answer (or the 422) as http_idem_begin would, and return 1;
 * otherwise 0 (the caller replies the handler's error).
 */
int http_idem_after_fail(struct http_request *req);

/**
 * The key the handler's store create records with its answer, with the
 * status the handler will reply (a 2xx), or NULL when the request has no
 * fresh key.
 */
const struct store_idem *http_req_idem(struct http_request *req, int status);

/** now (an http_now_iso time) plus seconds (may be negative), same format,
 * into out. Returns 0, or -1 when now is not in that format. */
int http_iso_plus_seconds(const char now[25], long seconds, char out[25]);

/** A printable ASCII copy of the untrusted text src for a message: at
 * most n - 1 bytes (n >= 1), each byte outside 0x20..0x7e replaced by '?',
 * NUL-terminated. */
void http_printable(char *dst, size_t n, const char *src);

/** One log line on stderr at level info (fcgi/log.h: a JSON object with
 * the time, "prog":"olivares-fcgi", the pid, the request id while a
 * request is served, and the message). Callers never pass tokens or
 * bodies. */
void http_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** http_log at level warning: something is wrong but the service works
 * (a configuration that will fail some runs). */
void http_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** http_log at level error: something failed (a store error, a reply not
 * written). */
void http_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** http_log at any level with fields (a JSON object, borrowed, may be
 * NULL) added to the line (olv_log_encode). */
void http_log_fields(enum olv_log_level level, json_t *fields, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** The bytes of a request's path its access line keeps. */
#define HTTP_LOG_PATH_MAX 1024

#endif
