#ifndef OLIVARES_FCGI_API_ROUTES_H
#define OLIVARES_FCGI_API_ROUTES_H
/**
 * The route table of the REST API: {method, pattern, minimum role, module,
 * body, handler} per route (struct http_route, fcgi/http/http.h), whose
 * handlers are in fcgi/api/, one file per resource. The composition root
 * (fcgi/main.c) hands it to http_serve, and the admin view reaches the
 * same routes through http_call.
 */
#include <stddef.h>

#include "fcgi/http/http.h"

/** The routes, in no particular order but one (a literal segment before
 * the {name} it would also match); http_routes_count entries. */
extern const struct http_route http_routes[];
extern const size_t http_routes_count;

#endif
