#ifndef OLIVARES_FCGI_RUN_HISTORY_STORE_H
#define OLIVARES_FCGI_RUN_HISTORY_STORE_H
/**
 * The first adapter of the history port (model/history.h): sessions
 * imported into the store through POST /v1/m/sandbox/sessions
 * (store_session_get, tenant-scoped). Only the composition root
 * (fcgi/main.c) wires it, once per worker.
 *
 * Its context is the worker (struct http_worker, fcgi/http/http.h), not a store
 * handle: the worker drops and reopens its connection after a failure
 * (http.c), so the adapter reads w->store at every load and always uses
 * the connection the request runs on. A store failure marks the connection
 * for reopening exactly as http_store_fail does.
 *
 * load() returns 0 with *events (a new reference to the session's events
 * array, as imported) and external_id copied (cut to n - 1 bytes); 1 when
 * the session does not exist for the tenant (unknown id, another tenant's,
 * or not a well-formed id); -1 when the store cannot answer, with why
 * (why_n bytes) saying so without any request data.
 */
#include "fcgi/http/http.h"
#include "model/history.h"

/** The operations of the store adapter (name "store"). */
extern const struct model_history_ops http_history_store_ops;

/** Fill *src with the store adapter for worker w (borrowed: w must outlive
 * *src; the worker holds both). */
void http_history_store(struct http_worker *w, struct model_history_source *src);

#endif
