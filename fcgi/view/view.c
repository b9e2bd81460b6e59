/*
 * The admin view's request plumbing (fcgi/view/view.h,
 * fcgi/view/view_internal.h): routing of /admin paths, sign-in sessions
 * and bearer auth, CSRF and Origin checks, form and query decoding, the
 * POST actions, the page frame and every reply with its security headers.
 * The GET pages are in fcgi/view/pages*.c.
 */
#include "fcgi/view/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <libxml/uri.h>

#include "fcgi/view/form.h"
#include "fcgi/view/view_internal.h"
#include "model/alloc.h"
#include "model/error.h"
#include "model/text.h"

#define VIEW_COOKIE "olivares_session"
#define VIEW_STYLESHEET "/static/style.css"
#define VIEW_ICON "/static/favicon.svg"
#define VIEW_PRODUCT "olivares sandbox"
/* data of the CSRF token's HMAC: versioned, so a change of
 * scheme invalidates old tokens */
#define VIEW_CSRF_LABEL "olivares-csrf-v1"
#define VIEW_CONTENT_TYPE "text/html; charset=utf-8"
#define VIEW_FORM_TYPE "application/x-www-form-urlencoded"
/* the longest sign-in token looked at (ours are 68 bytes; the API's cap) */
#define VIEW_MAX_TOKEN 256
/* http_reply_raw adds X-Content-Type-Options: nosniff and Cache-Control:
 * no-store; these are the others every /admin reply carries. The CSP
 * allows the site's own stylesheet and nothing else (no script at all). */
#define VIEW_SECURITY_HEADERS                                                                      \
	"Content-Security-Policy: default-src 'none'; style-src 'self'; img-src 'self'; "          \
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'\r\n"                          \
	"Referrer-Policy: no-referrer\r\n"                                                         \
	"X-Frame-Options: DENY\r\n"

/* One request: what the pages see (ctx) and what only this file needs. */
struct view_state {
	struct view_ctx ctx;
	char id[65];           /* the {id} segment of the path, "" if none */
	char session_hash[65]; /* SHA-256 hex of the cookie secret (cookie auth) */
};

typedef int (*view_fn)(struct view_state *st);

/* Who may reach a route: anyone (the sign-in) or a signed-in caller; roles
 * are the API's business (view_api), so the view has exactly its rules. */
enum view_access { VIEW_PUBLIC = 0, VIEW_SIGNED };

/* One row of the view's route table (the role check is the router's, as
 * in the API's). pattern segments are
 * literals or "{id}" (a model id; anything else is 404). */
struct view_route {
	const char *method;
	const char *pattern;
	enum view_access access;
	view_fn fn;
};

/* ---- small helpers ------------------------------------------------------- */

static const char *param(struct view_ctx *ctx, const char *name)
{
	return FCGX_GetParam(name, ctx->req->fcgx->envp);
}

static const char *role_name(enum store_role role)
{
	switch (role) {
	case STORE_ROLE_ADMIN:
		return "admin";
	case STORE_ROLE_EDITOR:
		return "editor";
	case STORE_ROLE_VIEWER:
		return "viewer";
	}
	return "none";
}

static int is_lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The page title of an error status. */
static const char *status_title(int status)
{
	switch (status) {
	case 400:
		return "Bad request";
	case 401:
		return "Not signed in";
	case 403:
		return "Forbidden";
	case 404:
		return "Not found";
	case 405:
		return "Method not allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Too large";
	case 422:
		return "Refused";
	case 429:
		return "Busy";
	case 503:
		return "Unavailable";
	case 507:
		return "Over the storage quota";
	}
	return "Error";
}

/* ---- replies --------------------------------------------------------------- */

/* Every reply of the view: HTML content type, the security headers and
 * extra (may be NULL). */
static int reply(struct view_ctx *ctx, int status, const char *extra, const char *body, size_t len)
{
	char hdr[1536];

	snprintf(hdr, sizeof(hdr), "%s%s", VIEW_SECURITY_HEADERS, extra ? extra : "");
	http_reply_raw(ctx->req, status, VIEW_CONTENT_TYPE, hdr, body, len);
	return 0;
}

/* 303 to location (a path we built: no CR or LF), with extra headers. */
static int redirect(struct view_ctx *ctx, const char *location, const char *extra)
{
	char hdr[1024];

	snprintf(hdr, sizeof(hdr), "Location: %s\r\n%s", location, extra ? extra : "");
	return reply(ctx, 303, hdr, NULL, 0);
}

int view_redirect(struct view_ctx *ctx, const char *location)
{
	return redirect(ctx, location, NULL);
}

/* view_page_send with extra headers (may be NULL). */
static int page_send_hdr(struct view_ctx *ctx, htmlDocPtr doc, int status, const char *extra)
{
	static const char fallback[] = "<!DOCTYPE html>\n<html lang=\"en\"><head><title>Error"
	                               "</title></head><body><p id=\"error\" class=\"error\">"
	                               "internal error</p></body></html>";
	char *out = NULL;
	size_t len = 0;

	if (html_serialize(doc, &out, &len)) {
		http_log_error("admin view: page serialization failed");
		reply(ctx, 500, NULL, fallback, sizeof(fallback) - 1);
	} else {
		reply(ctx, status, extra, out, len);
	}
	free(out);
	xmlFreeDoc(doc);
	return 0;
}

int view_page_send(struct view_ctx *ctx, htmlDocPtr doc, int status)
{
	/* busy (the tenant at its max_active_runs), as the API says it */
	return page_send_hdr(ctx, doc, status, status == 429 ? "Retry-After: 1\r\n" : NULL);
}

void view_error_line(xmlNodePtr parent, const char *message)
{
	xmlNodePtr p;

	/* attribute order as in the markup contract: id, then class */
	p = html_el(parent, "p", message);
	html_attr(p, "id", "error");
	html_attr(p, "class", "error");
}

/* An error page with, when back is set, a link back to the page the
 * failed form was on (its input is lost: no script keeps it). */
static int message_page(struct view_ctx *ctx, int status, const char *title, const char *message,
                        const char *back)
{
	htmlDocPtr doc;
	xmlNodePtr main;

	main = view_page_begin(ctx, title, &doc);
	view_error_line(main, message);
	if (ctx->auth == VIEW_AUTH_NONE && status == 401)
		html_link(html_el(main, "p", NULL), "/admin/login", "Sign in");
	if (back)
		html_attr(html_link(html_el(main, "p", NULL), back, "Back to the form"), "id",
		          "back");
	return view_page_send(ctx, doc, status);
}

int view_page_message(struct view_ctx *ctx, int status, const char *title, const char *message)
{
	return message_page(ctx, status, title, message, NULL);
}

static int page_status(struct view_ctx *ctx, int status, const char *message)
{
	return view_page_message(ctx, status, status_title(status), message);
}

/* 405 with allow ("Allow: …\r\n"): a method other than GET and POST, or
 * a path that has only the other one. */
static int reply_405(struct view_ctx *ctx, const char *allow)
{
	htmlDocPtr doc;
	xmlNodePtr main;

	main = view_page_begin(ctx, status_title(405), &doc);
	view_error_line(main, "method not allowed on this page");
	return page_send_hdr(ctx, doc, 405, allow);
}

/* view_page_api_error with a link back (may be NULL). */
static int api_error_page(struct view_ctx *ctx, int status, json_t *reply_json, const char *back)
{
	const char *msg;

	msg = json_string_value(json_object_get(json_object_get(reply_json, "error"), "message"));
	if (status < 400 || status > 599) {
		/* a success reply the view could not use */
		http_log_warn("admin view: unexpected API reply status %d", status);
		status = 500;
		msg = NULL;
	}
	return message_page(ctx, status, status_title(status), msg ? msg : "error", back);
}

int view_page_api_error(struct view_ctx *ctx, int status, json_t *reply_json)
{
	return api_error_page(ctx, status, reply_json, NULL);
}

/* A store failure as a page (http_store_fail logs it and schedules the
 * reconnection). */
static int store_fail_page(struct view_ctx *ctx, enum store_rc rc, const char *what)
{
	struct model_error err;

	memset(&err, 0, sizeof(err));
	http_store_fail(ctx->req, rc, what, &err);
	return page_status(ctx, model_error_http_status(err.code), err.message);
}

/* ---- the page frame ------------------------------------------------------- */

void view_form_csrf(struct view_ctx *ctx, xmlNodePtr form)
{
	if (ctx->auth == VIEW_AUTH_COOKIE)
		html_input(form, "hidden", "csrf", ctx->csrf);
}

xmlNodePtr view_post_form(struct view_ctx *ctx, xmlNodePtr parent, const char *id,
                          const char *action)
{
	xmlNodePtr form;

	form = html_el(parent, "form", NULL);
	html_attr(form, "id", id);
	html_attr(form, "method", "post");
	html_attr(form, "action", action);
	view_form_csrf(ctx, form);
	return form;
}

static void nav(struct view_ctx *ctx, xmlNodePtr header)
{
	static const char *const links[][2] = {
	    {"/admin/", "Overview"},       {"/admin/scenarios", "Scenarios"},
	    {"/admin/runs", "Runs"},       {"/admin/comparisons", "Comparisons"},
	    {"/admin/replays", "Replays"},
	};
	xmlNodePtr n;
	size_t i;

	n = html_el(header, "nav", NULL);
	/* while the module is off every other page is its 404: only the
	 * overview (where an admin turns it on) is offered */
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (i == 0 || ctx->module_on)
			html_link(n, links[i][0], links[i][1]);
	if (ctx->module_on && ctx->req->who.role == STORE_ROLE_ADMIN)
		html_link(n, "/admin/audit", "Audit");
}

xmlNodePtr view_page_begin(struct view_ctx *ctx, const char *title, htmlDocPtr *doc)
{
	char full[512];
	xmlNodePtr body, head, meta, icon, header, who, form, main;

	snprintf(full, sizeof(full), "%s · %s", title, VIEW_PRODUCT);
	*doc = html_doc_new(full, VIEW_STYLESHEET, &body);
	head = xmlDocGetRootElement(*doc)->children;
	meta = html_el(head, "meta", NULL);
	html_attr(meta, "name", "viewport");
	html_attr(meta, "content", "width=device-width, initial-scale=1");
	icon = html_el(head, "link", NULL);
	html_attr(icon, "rel", "icon");
	html_attr(icon, "href", VIEW_ICON);
	header = html_el(body, "header", NULL);
	html_elc(header, "p", "brand", VIEW_PRODUCT);
	if (ctx->auth != VIEW_AUTH_NONE) {
		nav(ctx, header);
		who = html_elc(header, "p", "who", "Signed in as ");
		html_attr(html_el(who, "span", role_name(ctx->req->who.role)), "id", "whoami");
		if (ctx->auth == VIEW_AUTH_COOKIE) {
			form = view_post_form(ctx, header, "signout", "/admin/logout");
			html_attr(html_el(form, "button", "Sign out"), "type", "submit");
		}
	}
	main = html_el(body, "main", NULL);
	html_attr(main, "id", "main");
	html_el(main, "h1", title);
	return main;
}

void view_page_refresh(htmlDocPtr doc, int seconds)
{
	xmlNodePtr head = xmlDocGetRootElement(doc)->children, meta;
	char text[16];

	snprintf(text, sizeof(text), "%d", seconds);
	meta = html_el(head, "meta", NULL);
	html_attr(meta, "http-equiv", "refresh");
	html_attr(meta, "content", text);
}

/* ---- forms and queries ------------------------------------------------------ */

/* 1 when the request body is a form (or empty without a content type). */
static int form_content_type(struct view_ctx *ctx)
{
	const char *ct;
	size_t n = strlen(VIEW_FORM_TYPE);

	ct = param(ctx, "CONTENT_TYPE");
	if (!ct || !*ct)
		return ctx->req->body.len == 0;
	return strncasecmp(ct, VIEW_FORM_TYPE, n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

const char *view_query(struct view_ctx *ctx, const char *name)
{
	const char *v;

	v = json_string_value(json_object_get(ctx->query, name));
	return v && *v ? v : NULL;
}

const char *view_form(struct view_ctx *ctx, const char *name)
{
	return json_string_value(json_object_get(ctx->form, name));
}

/* ---- auth --------------------------------------------------------------------- */

/*
 * The session secret of the Cookie header h into secret. Returns 0, or -1
 * when there is none, or when the header carries olivares_session more
 * than once with different values: a cookie planted for a narrower path
 * or a sibling domain would be sent first and could put the user in
 * somebody else's session, so an ambiguous header signs nobody in.
 */
static int cookie_secret(const char *h, char secret[65])
{
	const size_t nl = strlen(VIEW_COOKIE);
	const char *p = h, *v, *e;
	int found = 0;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		v = p + nl + 1;
		if (strncmp(p, VIEW_COOKIE "=", nl + 1) == 0 && v <= e) {
			while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (e - v != 64 || !is_lower_hex(v, 64))
				return -1;
			if (found && memcmp(secret, v, 64) != 0)
				return -1;
			memcpy(secret, v, 64);
			secret[64] = '\0';
			found = 1;
		}
		p = strchr(p, ';');
	}
	return found ? 0 : -1;
}

/* The CSRF token of a session: hex HMAC-SHA256 keyed by its secret. "" on
 * an OpenSSL failure (then no form field can match). */
static void csrf_token(const char secret[65], char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	out[0] = '\0';
	if (!HMAC(EVP_sha256(), secret, 64, (const unsigned char *)VIEW_CSRF_LABEL,
	          strlen(VIEW_CSRF_LABEL), md, &n) ||
	    n != 32)
		return;
	model_hex_encode(md, 32, out);
}

static int csrf_ok(struct view_ctx *ctx)
{
	const char *v;

	v = view_form(ctx, "csrf");
	if (!v || strlen(v) != 64 || strlen(ctx->csrf) != 64)
		return 0;
	return CRYPTO_memcmp(v, ctx->csrf, 64) == 0;
}

/* origin (not "null") is this site's own: scheme from the HTTPS param,
 * host from HTTP_HOST. Debian's fastcgi_params sends HTTP_HOST as nginx's
 * $host, without the port (the raw Host header is not trusted there), so
 * the port is SERVER_PORT, the one nginx took the request on: the origin
 * must name it, unless it is the scheme's default (80, 443). */
static int origin_is_own(struct view_ctx *ctx, const char *origin)
{
	const char *host, *https, *port, *rest, *colon;
	char own[600];
	size_t n;

	host = param(ctx, "HTTP_HOST");
	https = param(ctx, "HTTPS");
	port = param(ctx, "SERVER_PORT");
	if (!host || !*host || strlen(host) > 512)
		return 0;
	if (https && strcasecmp(https, "on") == 0)
		rest = strncasecmp(origin, "https://", 8) == 0 ? origin + 8 : NULL;
	else
		rest = strncasecmp(origin, "http://", 7) == 0 ? origin + 7 : NULL;
	if (!rest)
		return 0;
	/* A Host that names its port ("[::1]" alone does not) is compared
	 * as it is; nor can it be completed without SERVER_PORT. */
	colon = strrchr(host, ':');
	if ((colon && !strchr(colon, ']')) || !port || !*port)
		return strcasecmp(rest, host) == 0;
	/* A Host without its port (nginx's $host, as Debian's fastcgi_params
	 * pass it): the Origin names the port the request came to, which a
	 * browser leaves out only when it is the scheme's default. */
	if (strcmp(port, https && strcasecmp(https, "on") == 0 ? "443" : "80") == 0 &&
	    strcasecmp(rest, host) == 0)
		return 1;
	n = (size_t)snprintf(own, sizeof(own), "%s:%s", host, port);
	return n < sizeof(own) && strcasecmp(rest, own) == 0;
}

/*
 * A POST is refused when it comes from another site: an Origin header
 * that is present and not this site's own, or a Sec-Fetch-Site other than
 * "same-origin". Origin "null" counts as foreign, except when the browser
 * also says Sec-Fetch-Site: same-origin: our own pages are served with
 * Referrer-Policy: no-referrer, and under that policy browsers send
 * "Origin: null" on every form POST (Fetch standard, "append a request
 * Origin header"), our own forms included; Sec-Fetch-Site is set by the
 * browser alone (pages cannot forge it). A client that sends neither
 * header (curl, scripts) is not a browser and passes: the CSRF token is
 * what protects a session's forms.
 */
static int origin_ok(struct view_ctx *ctx)
{
	const char *origin, *site;

	origin = param(ctx, "HTTP_ORIGIN");
	site = param(ctx, "HTTP_SEC_FETCH_SITE");
	if (site && strcmp(site, "same-origin") != 0)
		return 0;
	if (!origin)
		return 1;
	if (strcmp(origin, "null") == 0)
		return site != NULL;
	return origin_is_own(ctx, origin);
}

static void principal_set(struct http_principal *who, const struct store_principal *p)
{
	memcpy(who->tenant_id, p->tenant_id, sizeof(who->tenant_id));
	who->tenant_id[32] = '\0';
	memcpy(who->token_id, p->token_id, sizeof(who->token_id));
	who->token_id[32] = '\0';
	who->role = p->role;
	who->scopes = p->scopes;
}

/* The admin view acts with every right of the signed-in token, so a token
 * narrowed by scopes signs in only when one of them is admin. */
static int view_scopes_ok(unsigned scopes)
{
	return scopes == 0 || (scopes & STORE_SCOPE_ADMIN) != 0;
}

#define VIEW_SCOPED_REFUSED                                                                        \
	"this token's scopes do not include admin: the admin view signs in only with a token "     \
	"without scopes or with the admin scope"

/* Look the session up, reconnecting once when the connection was lost. */
static enum store_rc session_lookup(struct view_ctx *ctx, const char *hash,
                                    struct store_principal *p)
{
	struct model_error err;
	char now[25];
	enum store_rc rc;

	http_now_iso(now);
	if (http_req_store(ctx->req))
		return STORE_UNAVAILABLE;
	rc = store_web_session_lookup(ctx->req->store, hash, now, p);
	if (rc != STORE_UNAVAILABLE)
		return rc;
	http_store_fail(ctx->req, rc, "web session lookup", &err);
	if (http_req_store(ctx->req))
		return STORE_UNAVAILABLE;
	return store_web_session_lookup(ctx->req->store, hash, now, p);
}

/* The session cookie. Returns 0 signed in, 1 no (valid) session, -1 the
 * store failed (a page was replied unless quiet). */
static int auth_cookie(struct view_state *st, int quiet)
{
	struct view_ctx *ctx = &st->ctx;
	struct store_principal p;
	const char *h;
	char secret[65], hash[65];
	enum store_rc rc;
	int ret = 1;

	h = param(ctx, "HTTP_COOKIE");
	if (!h || cookie_secret(h, secret))
		return 1;
	http_sha256_hex(secret, 64, hash);
	memset(&p, 0, sizeof(p));
	rc = session_lookup(ctx, hash, &p);
	if (rc == STORE_NOT_FOUND)
		goto out;
	if (rc) {
		ret = -1;
		if (!quiet)
			store_fail_page(ctx, rc, "web session lookup");
		goto out;
	}
	if (strlen(p.sha256_hex) != 64 || CRYPTO_memcmp(p.sha256_hex, hash, 64) != 0)
		goto out;
	principal_set(&ctx->req->who, &p);
	memcpy(st->session_hash, hash, sizeof(hash));
	csrf_token(secret, ctx->csrf);
	ctx->auth = VIEW_AUTH_COOKIE;
	ret = 0;
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	return ret;
}

/* Bearer header first (a wrong one is 401 even with a cookie), then the
 * cookie. Returns 0 signed in, 1 not signed in, -1 replied (unless quiet:
 * then 1 for every failure). */
static int authenticate(struct view_state *st, int quiet)
{
	struct view_ctx *ctx = &st->ctx;
	int rc;

	if (param(ctx, "HTTP_AUTHORIZATION")) {
		rc = http_auth_bearer(ctx->req);
		if (rc == 0 && !view_scopes_ok(ctx->req->who.scopes)) {
			memset(&ctx->req->who, 0, sizeof(ctx->req->who));
			if (quiet)
				return 1;
			page_status(ctx, 403, VIEW_SCOPED_REFUSED);
			return -1;
		}
		if (rc == 0) {
			ctx->auth = VIEW_AUTH_BEARER;
			return 0;
		}
		if (quiet)
			return 1;
		if (rc == 2) {
			page_status(ctx, 401, "invalid token");
			return -1;
		}
		if (rc < 0) {
			page_status(ctx, 503, "storage unavailable");
			return -1;
		}
	}
	rc = auth_cookie(st, quiet);
	return quiet && rc < 0 ? 1 : rc;
}

/* The sandbox module's state for the signed-in tenant. */
static int module_state(struct view_ctx *ctx)
{
	enum store_rc rc;

	if (http_req_store(ctx->req)) {
		store_fail_page(ctx, STORE_UNAVAILABLE, "module state");
		return -1;
	}
	rc = store_module_get(ctx->req->store, ctx->req->who.tenant_id, "sandbox", &ctx->module_on);
	if (rc) {
		store_fail_page(ctx, rc, "module state");
		return -1;
	}
	return 0;
}

/* ---- the API -------------------------------------------------------------- */

int view_api(struct view_ctx *ctx, const char *method, const char *path, const char *query,
             json_t *body, json_t **reply_json)
{
	int status = 500;

	*reply_json = NULL;
	http_call(ctx->req, &ctx->req->who, method, path, query ? query : "", body, &status,
	          reply_json);
	if (!*reply_json)
		*reply_json = json_pack("{s:{s:s,s:s}}", "error", "code", "internal", "message",
		                        "internal error");
	http_req_own(ctx->req, *reply_json);
	return status;
}

/*
 * A scenario page's form (form_id) refused with status and message: that
 * page again, with the error in the form and what was posted in its
 * fields, when the refusal is about the input (4xx other than 401 and
 * 403, which are about who asks, and the page can be shown: a valid
 * scenario_id); otherwise an error page with a link back to the form's
 * page (the scenarios list without a valid scenario_id).
 */
static int form_refused(struct view_ctx *ctx, const char *scenario_id, const char *form_id,
                        int status, const char *message)
{
	struct view_refusal refused;
	char back[128] = "/admin/scenarios";
	int valid = scenario_id && model_id_valid(scenario_id);

	if (valid && status >= 400 && status <= 499 && status != 401 && status != 403) {
		refused.form = form_id;
		refused.status = status;
		refused.message = message;
		return view_page_scenario(ctx, scenario_id, &refused);
	}
	if (valid)
		snprintf(back, sizeof(back), "/admin/scenarios/%s", scenario_id);
	return message_page(ctx, status, status_title(status), message, back);
}

/* Where a refused POST comes back (api_then_redirect): the scenario page
 * scenario_id with its form form_id refilled (form_refused). */
struct refusal_page {
	const char *scenario_id;
	const char *form_id;
};

/* status is the success ok: a create (ok 201) that queues a job answers
 * 202 when the job had not ended within the view's wait; its record
 * (queued, running, or a pending comparison) is as good a page to go to. */
static int reply_ok(int status, int ok)
{
	return status == ok || (ok == 201 && status == 202);
}

/* Call the API with body (stolen) and on success (reply_ok) redirect to
 * prefix + the reply's id (prefix NULL: to the overview). An API error is
 * its page, with a link to back (may be NULL: none), the page of the form;
 * with refill set, a refused input is that form's page again
 * (form_refused). */
static int api_then_redirect(struct view_ctx *ctx, const char *method, const char *path,
                             json_t *body, int ok, const char *prefix, const char *back,
                             const struct refusal_page *refill)
{
	json_t *r;
	const char *id, *msg;
	char loc[128];
	int status;

	status = view_api(ctx, method, path, "", body, &r);
	json_decref(body);
	if (!reply_ok(status, ok) && refill && status >= 400 && status <= 499) {
		msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
		return form_refused(ctx, refill->scenario_id, refill->form_id, status,
		                    msg ? msg : "error");
	}
	if (!reply_ok(status, ok))
		return api_error_page(ctx, status, r, back);
	if (!prefix)
		return view_redirect(ctx, "/admin/");
	id = json_string_value(json_object_get(r, "id"));
	if (!id || !model_id_valid(id)) {
		http_log_error("admin view: %s %s replied no id", method, path);
		return page_status(ctx, 500, "internal error");
	}
	snprintf(loc, sizeof(loc), "%s%s", prefix, id);
	return view_redirect(ctx, loc);
}

/* Copy form field name into body as a string when it is not empty. */
static void body_field(struct view_ctx *ctx, json_t *body, const char *name)
{
	const char *v;

	v = view_form(ctx, name);
	if (v && *v)
		json_object_set_new(body, name, json_string(v));
}

/* ---- the routes ------------------------------------------------------------- */

/*
 * The page to go to after signing in: next when it is one of our pages,
 * else the overview. One of ours: "/admin/" and then only letters, digits,
 * '/', '-', '_', no "//"; then, optionally, '?' and a query of letters,
 * digits and "-_.~%=&+" (what our pages' filters and paging hold); 256
 * characters at most. Never another site: an open redirect would let a
 * link sign a user in and send them anywhere; and nothing that could end
 * the Location header it goes into.
 */
static const char *next_page(const char *next)
{
	static const char path_ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                              "0123456789/-_";
	static const char query_ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                               "0123456789-_.~%=&+";
	const char *q;

	if (!next || strncmp(next, "/admin/", 7) != 0 || strlen(next) > 256 || strstr(next, "//"))
		return "/admin/";
	q = next + strspn(next, path_ok);
	if (*q && (*q != '?' || strspn(q + 1, query_ok) != strlen(q + 1)))
		return "/admin/";
	return next;
}

static void signin_form(xmlNodePtr main, const char *next)
{
	xmlNodePtr form, p, in;

	form = html_el(main, "form", NULL);
	html_attr(form, "id", "signin");
	html_attr(form, "method", "post");
	html_attr(form, "action", "/admin/login");
	p = html_el(form, "p", NULL);
	html_attr(html_el(p, "label", "API token"), "for", "token");
	in = html_input(p, "password", "token", NULL);
	html_attr(in, "id", "token");
	html_attr(in, "autocomplete", "off");
	html_attr(in, "required", "required");
	if (strcmp(next, "/admin/") != 0)
		html_input(form, "hidden", "next", next);
	html_attr(html_el(form, "button", "Sign in"), "type", "submit");
	html_elc(main, "p", "hint",
	         "Sign in with an API token of your tenant (olv_…), as made by "
	         "olivares-admin token create; the page keeps only a session cookie.");
}

static int login_page(struct view_state *st, int status, const char *error)
{
	struct view_ctx *ctx = &st->ctx;
	const char *next;
	htmlDocPtr doc;
	xmlNodePtr main;

	next = next_page(view_form(ctx, "next") ? view_form(ctx, "next") : view_query(ctx, "next"));
	main = view_page_begin(ctx, "Sign in", &doc);
	if (error)
		view_error_line(main, error);
	else if (view_query(ctx, "ended"))
		html_attr(
		    html_elc(main, "p", "notice",
		             "Your session has ended (it expired, you signed out, or its token "
		             "was revoked). Sign in again."),
		    "id", "notice");
	signin_form(main, next);
	return view_page_send(ctx, doc, status);
}

static int r_login_get(struct view_state *st)
{
	return login_page(st, 200, NULL);
}

/* The token of the sign-in form: its principal into *p. Returns 0, 1 for
 * a token that is not a known one, -1 (store failure, page replied). */
static int login_token(struct view_state *st, struct store_principal *p)
{
	struct view_ctx *ctx = &st->ctx;
	const char *tok;
	char hash[65];
	size_t n;
	enum store_rc rc;

	tok = view_form(ctx, "token");
	if (!tok)
		return 1;
	/* a pasted token often brings blanks or a newline along */
	while (*tok == ' ' || *tok == '\t' || *tok == '\r' || *tok == '\n')
		tok++;
	n = strlen(tok);
	while (n > 0 && strchr(" \t\r\n", tok[n - 1]))
		n--;
	if (n == 0 || n > VIEW_MAX_TOKEN)
		return 1;
	if (http_req_store(ctx->req)) {
		store_fail_page(ctx, STORE_UNAVAILABLE, "sign-in");
		return -1;
	}
	http_sha256_hex(tok, n, hash);
	memset(p, 0, sizeof(*p));
	rc = store_token_lookup(ctx->req->store, hash, p);
	if (rc == STORE_NOT_FOUND)
		return 1;
	if (rc) {
		store_fail_page(ctx, rc, "sign-in token lookup");
		return -1;
	}
	if (strlen(p->sha256_hex) != 64 || CRYPTO_memcmp(p->sha256_hex, hash, 64) != 0)
		return 1;
	return 0;
}

/* The Set-Cookie line: value "" with Max-Age 0 expires the cookie. */
static void cookie_header(struct view_ctx *ctx, const char *value, int max_age, char *out, size_t n)
{
	const char *https;

	https = param(ctx, "HTTPS");
	snprintf(out, n,
	         "Set-Cookie: " VIEW_COOKIE "=%s; Path=/admin/; Max-Age=%d; HttpOnly; "
	         "SameSite=Strict%s\r\n",
	         value, max_age, https && strcasecmp(https, "on") == 0 ? "; Secure" : "");
}

static int r_login_post(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	struct store_principal p;
	unsigned char raw[32];
	char secret[65], hash[65], now[25], expires[25], id[33], cookie[256];
	enum store_rc rc;
	int ret;

	memset(secret, 0, sizeof(secret));
	ret = login_token(st, &p);
	if (ret)
		return ret < 0 ? 0 : login_page(st, 401, "invalid token");
	if (!view_scopes_ok(p.scopes))
		return login_page(st, 403, VIEW_SCOPED_REFUSED);
	/* a new sign-in ends the session this browser had (no fixation, no
	 * forgotten live session) */
	if (auth_cookie(st, 1) == 0 &&
	    store_web_session_delete(ctx->req->store, ctx->req->who.tenant_id,
	                             ctx->req->who.token_id,
	                             st->session_hash) == STORE_UNAVAILABLE) {
		ret = store_fail_page(ctx, STORE_UNAVAILABLE, "web session delete");
		goto out;
	}
	memset(&ctx->req->who, 0, sizeof(ctx->req->who));
	ctx->auth = VIEW_AUTH_NONE;
	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		http_log_error("admin view: RAND_bytes failed");
		ret = page_status(ctx, 500, "internal error");
		goto out;
	}
	model_hex_encode(raw, sizeof(raw), secret);
	http_sha256_hex(secret, 64, hash);
	http_now_iso(now);
	if (http_iso_plus_seconds(now, (long)ctx->req->cfg->session_minutes * 60, expires)) {
		ret = page_status(ctx, 500, "internal error");
		goto out;
	}
	rc = store_web_session_create(ctx->req->store, p.tenant_id, p.token_id, hash, now, expires,
	                              id);
	if (rc == STORE_NOT_FOUND) {
		ret = login_page(st, 401, "invalid token");
		goto out;
	}
	if (rc) {
		ret = store_fail_page(ctx, rc, "web session create");
		goto out;
	}
	cookie_header(ctx, secret, ctx->req->cfg->session_minutes * 60, cookie, sizeof(cookie));
	ret = redirect(ctx, next_page(view_form(ctx, "next")), cookie);
	OPENSSL_cleanse(cookie, sizeof(cookie));
out:
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(secret, sizeof(secret));
	return ret;
}

static int r_logout(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	char cookie[256];
	enum store_rc rc;

	if (ctx->auth == VIEW_AUTH_COOKIE) {
		rc = store_web_session_delete(ctx->req->store, ctx->req->who.tenant_id,
		                              ctx->req->who.token_id, st->session_hash);
		if (rc && rc != STORE_NOT_FOUND)
			return store_fail_page(ctx, rc, "web session delete");
	}
	cookie_header(ctx, "", 0, cookie, sizeof(cookie));
	return redirect(ctx, "/admin/login", cookie);
}

/* A form that only need may send: 1 after a 403 page for a lower role
 * (worded as the API's), before the view checks the form's fields, as
 * the API checks the role before the body. */
static int role_refused(struct view_ctx *ctx, enum store_role need)
{
	char msg[96];

	if (ctx->req->who.role >= need)
		return 0;
	snprintf(msg, sizeof(msg), "requires role %s; your token has %s", role_name(need),
	         role_name(ctx->req->who.role));
	page_status(ctx, 403, msg);
	return 1;
}

static int r_module(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	const char *v;

	if (role_refused(ctx, STORE_ROLE_ADMIN))
		return 0;
	v = view_form(ctx, "enabled");
	if (!v || (strcmp(v, "1") != 0 && strcmp(v, "0") != 0))
		return page_status(ctx, 400, "enabled must be 1 or 0");
	return api_then_redirect(ctx, "PUT", "/v1/modules/sandbox",
	                         json_pack("{s:b}", "enabled", v[0] == '1'), 200, NULL, "/admin/",
	                         NULL);
}

static int r_run(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	const struct refusal_page refill = {st->id, "run-form"};
	char path[128], back[128];
	json_t *body;

	body = json_object();
	body_field(ctx, body, "variant");
	body_field(ctx, body, "backend");
	snprintf(path, sizeof(path), "/v1/m/sandbox/scenarios/%s/runs", st->id);
	snprintf(back, sizeof(back), "/admin/scenarios/%s", st->id);
	return api_then_redirect(ctx, "POST", path, body, 201, "/admin/runs/", back, &refill);
}

/*
 * The cancel form of a run's page: the API's cancel as the signed-in
 * principal (its role check: a viewer gets its 403), then back to the
 * run's page, which shows the run ending. A run that had already ended
 * (409) is its page again with the API's message, as a 409: the cancel
 * came too late, nothing is wrong with the page. Any other failure is its
 * error page, with a link back to the run unless the run is not there.
 */
static int r_cancel(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	char path[128], back[128];
	const char *msg;
	json_t *r;
	int status;

	snprintf(path, sizeof(path), "/v1/m/sandbox/runs/%s/cancel", st->id);
	snprintf(back, sizeof(back), "/admin/runs/%s", st->id);
	status = view_api(ctx, "POST", path, "", NULL, &r);
	if (status == 200)
		return view_redirect(ctx, back);
	if (status == 409) {
		msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
		return view_page_run(ctx, st->id, 409, msg ? msg : "the run has already ended");
	}
	return api_error_page(ctx, status, r, status == 404 ? NULL : back);
}

/*
 * The approval form of a comparison's page: an admin's decision goes to
 * the API as the signed-in principal (which checks the role, the scope,
 * the decision and the reason), then back to the comparison's page, which
 * shows it. A refusal is its error page with a link back.
 */
static int r_approval(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	char path[128], back[128];
	json_t *body, *r;
	int status;

	if (role_refused(ctx, STORE_ROLE_ADMIN))
		return 0;
	body = json_object();
	body_field(ctx, body, "decision");
	body_field(ctx, body, "reason");
	snprintf(path, sizeof(path), "/v1/m/sandbox/comparisons/%s/approval", st->id);
	snprintf(back, sizeof(back), "/admin/comparisons/%s", st->id);
	status = view_api(ctx, "POST", path, "", body, &r);
	json_decref(body);
	if (status == 201 || status == 200)
		return view_redirect(ctx, back);
	return api_error_page(ctx, status, r, status == 404 ? NULL : back);
}

/* tolerance: absent or empty is the API's default; otherwise a plain
 * decimal number ("0.05", "1e-3": digits, one sign, '.', 'e') that is
 * finite goes as a number (the API checks its range). Returns 0, or -1
 * for anything else (nan, inf, hex floats, blanks: strtod would take
 * them). */
static int tolerance_field(struct view_ctx *ctx, json_t *body)
{
	const char *v;
	char *end;
	double d;

	v = view_form(ctx, "tolerance");
	if (!v || !*v)
		return 0;
	if (strspn(v, "0123456789.eE+-") != strlen(v))
		return -1;
	d = strtod(v, &end);
	if (end == v || *end != '\0' || !isfinite(d))
		return -1;
	json_object_set_new(body, "tolerance", json_real(d));
	return 0;
}

static int r_compare(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	static const char *const names[] = {"scenario_id", "baseline", "candidate", "suite"};
	struct refusal_page refill = {NULL, "compare-form"};
	char back[128] = "/admin/scenarios";
	json_t *body;
	const char *v;
	size_t i;

	if (role_refused(ctx, STORE_ROLE_ADMIN))
		return 0;
	body = json_object();
	/* required fields go even when empty: the API names what is wrong */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		v = view_form(ctx, names[i]);
		if (v)
			json_object_set_new(body, names[i], json_string(v));
	}
	refill.scenario_id = view_form(ctx, "scenario_id");
	if (refill.scenario_id && model_id_valid(refill.scenario_id))
		snprintf(back, sizeof(back), "/admin/scenarios/%s", refill.scenario_id);
	if (tolerance_field(ctx, body)) {
		json_decref(body);
		return form_refused(ctx, refill.scenario_id, refill.form_id, 400,
		                    "tolerance must be a decimal number from 0 to 1");
	}
	body_field(ctx, body, "backend");
	return api_then_redirect(ctx, "POST", "/v1/m/sandbox/comparisons", body, 201,
	                         "/admin/comparisons/", back, &refill);
}

static int r_home(struct view_state *st)
{
	return view_page_home(&st->ctx);
}
static int r_scenarios(struct view_state *st)
{
	return view_page_scenarios(&st->ctx);
}
static int r_scenario(struct view_state *st)
{
	return view_page_scenario(&st->ctx, st->id, NULL);
}
static int r_runs(struct view_state *st)
{
	return view_page_runs(&st->ctx);
}
static int r_run_page(struct view_state *st)
{
	return view_page_run(&st->ctx, st->id, 200, NULL);
}
static int r_comparisons(struct view_state *st)
{
	return view_page_comparisons(&st->ctx);
}
static int r_comparison(struct view_state *st)
{
	return view_page_comparison(&st->ctx, st->id);
}
static int r_replays(struct view_state *st)
{
	return view_page_replays(&st->ctx);
}
static int r_audit(struct view_state *st)
{
	return view_page_audit(&st->ctx);
}

static const struct view_route view_routes[] = {
    {"GET", "/admin/login", VIEW_PUBLIC, r_login_get},
    {"POST", "/admin/login", VIEW_PUBLIC, r_login_post},
    {"POST", "/admin/logout", VIEW_SIGNED, r_logout},
    {"GET", "/admin/", VIEW_SIGNED, r_home},
    {"POST", "/admin/modules/sandbox", VIEW_SIGNED, r_module},
    {"GET", "/admin/scenarios", VIEW_SIGNED, r_scenarios},
    {"GET", "/admin/scenarios/{id}", VIEW_SIGNED, r_scenario},
    {"POST", "/admin/scenarios/{id}/runs", VIEW_SIGNED, r_run},
    {"GET", "/admin/runs", VIEW_SIGNED, r_runs},
    {"GET", "/admin/runs/{id}", VIEW_SIGNED, r_run_page},
    {"POST", "/admin/runs/{id}/cancel", VIEW_SIGNED, r_cancel},
    {"GET", "/admin/comparisons", VIEW_SIGNED, r_comparisons},
    {"POST", "/admin/comparisons", VIEW_SIGNED, r_compare},
    {"GET", "/admin/comparisons/{id}", VIEW_SIGNED, r_comparison},
    {"POST", "/admin/comparisons/{id}/approval", VIEW_SIGNED, r_approval},
    {"GET", "/admin/replays", VIEW_SIGNED, r_replays},
    {"GET", "/admin/audit", VIEW_SIGNED, r_audit},
};

/* path against pattern, matched as the API's routes are (http_path_match:
 * the path as sent, literals decoded, ids not); an {id} segment (at most 64
 * bytes, as sent) goes to id. */
static int route_match(const char *pattern, const char *path, char id[65])
{
	struct http_path_capture cap;
	int n = 0;

	if (!http_path_match(pattern, path, &cap, 1, &n))
		return 0;
	if (n == 1) {
		if (cap.len > 64)
			return 0;
		memcpy(id, cap.at, cap.len);
		id[cap.len] = '\0';
	}
	return 1;
}

/* The route of method and path, or NULL; *known tells whether the path
 * exists with another method. */
static const struct view_route *route_find(const char *method, const char *path, char id[65],
                                           int *known)
{
	size_t i;

	*known = 0;
	for (i = 0; i < sizeof(view_routes) / sizeof(view_routes[0]); i++) {
		if (!route_match(view_routes[i].pattern, path, id))
			continue;
		*known = 1;
		if (strcmp(view_routes[i].method, method) == 0)
			return &view_routes[i];
	}
	id[0] = '\0';
	return NULL;
}

/* "Allow: GET[, POST]\r\n" for the methods path has in the table. */
static void route_allow(const char *path, char *out, size_t n)
{
	char id[65];
	size_t i;
	int len;

	len = snprintf(out, n, "Allow:");
	for (i = 0; i < sizeof(view_routes) / sizeof(view_routes[0]); i++) {
		if (route_match(view_routes[i].pattern, path, id) && len > 0 && (size_t)len < n)
			len +=
			    snprintf(out + len, n - (size_t)len, "%s %s%s",
			             len > (int)strlen("Allow:") ? "," : "", view_routes[i].method,
			             strcmp(view_routes[i].method, "GET") == 0 ? ", HEAD" : "");
	}
	if (len > 0 && (size_t)len < n)
		snprintf(out + len, n - (size_t)len, "\r\n");
}

/* A POST's form into ctx->form. 0, or -1 with a 400 page replied. */
static int read_form(struct view_ctx *ctx)
{
	if (!form_content_type(ctx)) {
		page_status(ctx, 400,
		            "the body must be a form (application/x-www-form-urlencoded)");
		return -1;
	}
	if (http_form_decode(ctx->req->body.data, ctx->req->body.len, ctx->form)) {
		page_status(ctx, 400, "a form field is not valid UTF-8 text");
		return -1;
	}
	return 0;
}

/* Not signed in: a page goes to the sign-in (which comes back to it, and
 * says so when a session cookie was sent but is no longer valid), a form
 * post is 401. */
static int not_signed_in(struct view_ctx *ctx, int post)
{
	const struct http_request *req = ctx->req;
	const char *cookie;
	const char *next;
	char want[300];
	char loc[820];
	xmlChar *esc;
	int ended, w;

	if (post)
		return page_status(ctx, 401, "sign in first (your session may have ended)");
	cookie = param(ctx, "HTTP_COOKIE");
	ended = cookie && strstr(cookie, VIEW_COOKIE "=") != NULL;
	/* Back to the page asked for, its query included (a filtered list
	 * comes back filtered), or to the page alone when the query is not
	 * one next_page() keeps. */
	next = next_page(req->path);
	if (req->query[0]) {
		w = snprintf(want, sizeof(want), "%s?%s", req->path, req->query);
		if (w > 0 && (size_t)w < sizeof(want) && next_page(want) == want)
			next = want;
	}
	/* next as one query value: its '?', '&', '=' and '%' escaped */
	esc = xmlURIEscapeStr((const xmlChar *)next, (const xmlChar *)"/");
	if (!esc)
		return page_status(ctx, 500, "internal error");
	snprintf(loc, sizeof(loc), "/admin/login?next=%s%s", (const char *)esc,
	         ended ? "&ended=1" : "");
	xmlFree(esc);
	return view_redirect(ctx, loc);
}

/* Everything after the route was found: checks in order, then the route. */
static int serve_route(struct view_state *st, const struct view_route *r)
{
	struct view_ctx *ctx = &st->ctx;
	int post = strcmp(r->method, "POST") == 0;
	int rc;

	if (post && !origin_ok(ctx))
		return page_status(ctx, 403, "cross-origin form refused");
	if (r->access == VIEW_PUBLIC)
		return post && read_form(ctx) ? 0 : r->fn(st);
	/* who is calling before the body is decoded: an anonymous post costs
	 * no form parsing */
	rc = authenticate(st, 0);
	if (rc < 0)
		return 0;
	if (rc > 0)
		return not_signed_in(ctx, post);
	if (post && read_form(ctx))
		return 0;
	/* before anything is called: a wrong token changes nothing */
	if (post && ctx->auth == VIEW_AUTH_COOKIE && !csrf_ok(ctx))
		return page_status(ctx, 403,
		                   "CSRF token missing or wrong; reload the page and retry");
	if (strstr(r->pattern, "{id}") && !model_id_valid(st->id))
		return page_status(ctx, 404, "not found");
	if (module_state(ctx))
		return 0;
	return r->fn(st);
}

/* No route for method and path (known: the path exists with another
 * method): sign-in first, as for every page, then 405 or 404. */
static int serve_unrouted(struct view_state *st, int known)
{
	struct view_ctx *ctx = &st->ctx;
	char allow[64];
	int rc;

	rc = authenticate(st, 0);
	if (rc < 0)
		return 0;
	if (rc > 0)
		return not_signed_in(ctx, strcmp(ctx->req->method, "POST") == 0);
	if (!known)
		return page_status(ctx, 404, "no such page");
	route_allow(ctx->req->path, allow, sizeof(allow));
	return reply_405(ctx, allow);
}

static int serve(struct view_state *st)
{
	struct view_ctx *ctx = &st->ctx;
	struct http_request *req = ctx->req;
	const struct view_route *r;
	char allow[64];
	int known;

	/* (a HEAD comes as its GET: http_serve) Another method: 405 with the
	 * methods the page has, or 404 where there is no page. */
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "POST") != 0) {
		route_allow(req->path, allow, sizeof(allow));
		if (strcmp(allow, "Allow:\r\n") == 0)
			return page_status(ctx, 404, "no such page");
		return reply_405(ctx, allow);
	}
	/* the cookie's Path is /admin/, which /admin is not under */
	if (strcmp(req->path, "/admin") == 0 && strcmp(req->method, "GET") == 0)
		return view_redirect(ctx, "/admin/");
	if (http_form_decode(req->query, strlen(req->query), ctx->query))
		return page_status(ctx, 400, "a query parameter is not valid UTF-8 text");
	r = route_find(req->method, req->path, st->id, &known);
	if (r)
		return serve_route(st, r);
	return serve_unrouted(st, known);
}

void view_serve(struct http_request *req)
{
	struct view_state st;

	memset(&st, 0, sizeof(st));
	st.ctx.req = req;
	st.ctx.auth = VIEW_AUTH_NONE;
	st.ctx.form = http_req_own(req, json_object());
	st.ctx.query = http_req_own(req, json_object());
	serve(&st);
	if (!req->status) {
		http_log_error("admin view: %s replied nothing", req->path);
		page_status(&st.ctx, 500, "internal error");
	}
}
