#ifndef OLIVARES_FCGI_VIEW_VIEW_INTERNAL_H
#define OLIVARES_FCGI_VIEW_VIEW_INTERNAL_H
/**
 * What fcgi/view/view.c (request plumbing: auth, sessions, CSRF, forms, the
 * POST actions, the page frame) and the GET pages (fcgi/view/pages*.c)
 * share.
 * Not used outside the view. The markup contract (ids, classes, form field
 * names) that the tests read is in README "Admin view", "Markup contract".
 */
#include <jansson.h>
#include <libxml/tree.h>

#include "fcgi/http/http.h"
#include "fcgi/view/html.h"

/** How the caller of a page was authenticated. */
enum view_auth {
	VIEW_AUTH_NONE = 0, /* not signed in */
	VIEW_AUTH_COOKIE,   /* session cookie: forms carry ctx->csrf */
	VIEW_AUTH_BEARER,   /* Authorization: Bearer: no CSRF token needed */
};

/** One admin view request. */
struct view_ctx {
	struct http_request *req; /* req->who is the principal once signed in */
	enum view_auth auth;
	char csrf[65]; /* this session's CSRF token (64 hex), "" unless cookie */
	int module_on; /* the sandbox module is enabled for the tenant */
	json_t *form;  /* POST form fields as a JSON object of strings
	                 * (decoded, valid UTF-8), owned by req; {} for GET */
	json_t *query; /* query parameters, decoded likewise, owned by req */
};

/**
 * Call the API as the signed-in principal (http_call with ctx->req->who):
 * method, path, query ("" or "k=v&…", values the caller built from ids,
 * integers and words only), body (borrowed, may be NULL). Returns the
 * HTTP status; *reply is the JSON reply, owned by the request (never
 * NULL).
 */
int view_api(struct view_ctx *ctx, const char *method, const char *path, const char *query,
             json_t *body, json_t **reply);

/** A decoded query parameter or NULL (absent or empty). */
const char *view_query(struct view_ctx *ctx, const char *name);
/** A decoded form field or NULL (absent). */
const char *view_form(struct view_ctx *ctx, const char *name);

/**
 * Start a page: the document with the stylesheet /static/style.css, a
 * <header> with the product name, the nav (Overview /admin/, Scenarios,
 * Runs, Comparisons, Replays, and Audit for an admin), who is signed in
 * (role) and, for a cookie session, the sign-out form (id "signout",
 * POST /admin/logout, with the CSRF field); then <h1>title</h1> inside
 * <main id="main">. *doc receives the document; returns the <main> node
 * to fill.
 */
xmlNodePtr view_page_begin(struct view_ctx *ctx, const char *title, htmlDocPtr *doc);

/** How often (s) a page of a run that has not ended reloads itself. */
#define VIEW_REFRESH_SECONDS 2

/** Make the page of doc (from view_page_begin) reload itself every
 * seconds: <meta http-equiv="refresh" content="seconds"> in its head. No
 * script is involved, so the CSP (default-src 'none') does not stop it:
 * the browser reloads the page's own address. */
void view_page_refresh(htmlDocPtr doc, int seconds);

/** Serialize doc (html_serialize), reply it with status and the security
 * headers, and free doc. Returns 0. */
int view_page_send(struct view_ctx *ctx, htmlDocPtr doc, int status);

/** Append <p id="error" class="error">message</p> to parent (one per
 * page: the markup contract's error line). */
void view_error_line(xmlNodePtr parent, const char *message);

/** A whole error page: <h1>title</h1> and <p id="error" class="error">
 * message</p>, replied with status and the security headers. Returns 0. */
int view_page_message(struct view_ctx *ctx, int status, const char *title, const char *message);

/** The error page for an API reply that is not a success: status as the
 * API replied it, message from reply's error.message. Returns 0. */
int view_page_api_error(struct view_ctx *ctx, int status, json_t *reply);

/** Add the hidden CSRF field <input type="hidden" name="csrf"> to form
 * (nothing for a bearer caller). */
void view_form_csrf(struct view_ctx *ctx, xmlNodePtr form);

/** Append <form method="post" action="action" id="id"> with the CSRF
 * field to parent; returns the form. */
xmlNodePtr view_post_form(struct view_ctx *ctx, xmlNodePtr parent, const char *id,
                          const char *action);

/** Reply 303 See Other to location (a path under /admin/), with the
 * security headers. Returns 0. */
int view_redirect(struct view_ctx *ctx, const char *location);

/* ---- the GET pages (pages_*.c); each replies once and returns 0 ---- */

/** GET /admin/: the signed-in role, the sandbox module's state
 * (#module-status "enabled"/"disabled") and, for an admin, the form
 * "module-form" (POST /admin/modules/sandbox, field enabled = "1"/"0"). */
int view_page_home(struct view_ctx *ctx);
/** GET /admin/scenarios (offset). */
int view_page_scenarios(struct view_ctx *ctx);
/* A form that the API (or the view's own check) refused: its page comes
 * back with the error and the fields as they were posted. */
struct view_refusal {
	const char *form;    /* the form's id: "run-form" or "compare-form" */
	int status;          /* the reply's status, 400 - 499 */
	const char *message; /* why, shown in p#error.error inside the form */
};

/** GET /admin/scenarios/{id}: steps, mocks, the run form (editor) and the
 * compare form (admin). With refused (NULL for a GET), the page of a
 * refused POST: replied with refused->status, the named form holds
 * p#error.error with refused->message first, its fields hold what was
 * posted (ctx->form; a backend that is not an option selects none) and
 * its first field has autofocus, so that a browser shows the form. When
 * the scenario cannot be read, that reply's error page instead. */
int view_page_scenario(struct view_ctx *ctx, const char *id, const struct view_refusal *refused);
/** GET /admin/runs (scenario, status, offset). */
int view_page_runs(struct view_ctx *ctx);
/** GET /admin/runs/{id}: attestation, counters, score, each step; while
 * the run is queued or running, its progress, the outputs so far, a
 * reload every VIEW_REFRESH_SECONDS and, for an editor, the cancel form
 * (id "cancel-form", POST /admin/runs/{id}/cancel). Replied with status;
 * error (NULL: none) is shown in p#error.error above the summary (a
 * cancel that came too late). */
int view_page_run(struct view_ctx *ctx, const char *id, int status, const char *error);
/** GET /admin/comparisons (scenario, verdict, offset). */
int view_page_comparisons(struct view_ctx *ctx);
/** GET /admin/comparisons/{id}: the summary, the approval (the decision
 * that counts in #approval-decision, the history in table#approvals and,
 * for an admin on a settled comparison, the form "approval-form": POST
 * /admin/comparisons/{id}/approval, fields decision and reason) and both
 * runs side by side. */
int view_page_comparison(struct view_ctx *ctx, const char *id);
/** GET /admin/replays (scenario, status, offset): runs of kind replay. */
int view_page_replays(struct view_ctx *ctx);
/** GET /admin/audit (offset), admin only (the API's role check). */
int view_page_audit(struct view_ctx *ctx);

/** Page size of every list. */
#define VIEW_PAGE_SIZE 25

#endif
