#ifndef OLIVARES_FCGI_VIEW_VIEW_H
#define OLIVARES_FCGI_VIEW_VIEW_H
/**
 * The admin HTML view, served by the FastCGI pool behind nginx at
 * /admin/. Pages are rendered with libxml2 (fcgi/view/html.h) from the same API
 * handlers the REST clients use (http_call), so the view has exactly the
 * API's validation, roles, module gate and tenant scoping.
 *
 * Auth: a sign-in form exchanges an API token for a session cookie
 * (olivares_session: random 32 bytes, stored as SHA-256 only, HttpOnly,
 * SameSite=Strict, Path=/admin/, Secure when served over TLS, Max-Age =
 * [admin] session_minutes); or an "Authorization: Bearer" API token on any
 * page (no cookie, no CSRF token needed). Every state-changing form of a
 * session carries a CSRF token bound to the session (HMAC-SHA256 keyed by
 * the session secret), checked in constant time.
 *
 * Every reply carries the security headers: a Content-Security-Policy that
 * allows only the site's own stylesheet, X-Content-Type-Options: nosniff,
 * Referrer-Policy: no-referrer, X-Frame-Options: DENY (and
 * frame-ancestors 'none').
 */
#include "fcgi/http/http.h"

/** Serve one request whose path is /admin or under /admin/ (the body is
 * already read into req->body). Always replies (an HTML page, a redirect,
 * or an HTML error page); never fails. Wired as http_worker.view by
 * fcgi/main.c. */
void view_serve(struct http_request *req);

#endif
