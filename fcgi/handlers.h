#ifndef OLIVARES_FCGI_HANDLERS_H
#define OLIVARES_FCGI_HANDLERS_H
/**
 * The route table of the REST API (briefs/api.md, DESIGN.md §4) and its
 * handlers. The router (http.c) applies auth, the module gate, the method
 * and role checks and the id check before a handler runs, so each handler
 * only parses its input, calls the model and the store, and replies.
 * Every handler is tenant-scoped with req->who.tenant_id.
 */
#include <stddef.h>

#include "fcgi/http/http.h"

/** The routes, in no particular order; http_routes_count entries. */
extern const struct http_route http_routes[];
extern const size_t http_routes_count;

#endif
