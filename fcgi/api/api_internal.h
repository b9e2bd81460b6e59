#ifndef OLIVARES_FCGI_API_API_INTERNAL_H
#define OLIVARES_FCGI_API_API_INTERNAL_H
/**
 * What the REST handlers of fcgi/api/ share: the helpers that check a
 * body or a query and reply a store's answer (common.c), and the handlers
 * themselves, one file per resource, which the route table (routes.c)
 * names. Not used outside fcgi/api/.
 *
 * The router (fcgi/http/http.c) applies auth, the module gate, the method
 * and role checks and the id check before a handler runs, so a handler
 * only parses its input, calls the model and the store with the caller's
 * tenant (req->who.tenant_id), and replies. A handler replies once and
 * returns 0, or returns -1 with *err filled and the router replies the
 * error (http_handler_fn), so a rejected request writes nothing.
 */
#include <jansson.h>

#include "fcgi/http/http.h"
#include "model/error.h"
#include "sql/store.h"

/** The page size of a list when the query names none. */
#define API_LIST_LIMIT_DEFAULT 50
/** The largest page a list answers (?limit=). */
#define API_LIST_LIMIT_MAX 500
/** The largest ?offset= a list accepts. */
#define API_OFFSET_MAX 1000000000
/** The one module of this service, as routes and the modules API name it. */
#define API_MODULE_SANDBOX "sandbox"

/**
 * Refuse any member of the object obj whose name is not in the
 * NULL-terminated list allowed: -1 with *err 400 malformed ("unknown field
 * \"NAME\"", the name cut to 64 bytes, field NAME), else 0.
 */
int api_only_fields(json_t *obj, const char *const *allowed, struct model_error *err);

/** 1 if word is one of the NULL-terminated list words, else 0. */
int api_one_of(const char *word, const char *const *words);

/**
 * The page of a list from the query: ?limit= (default
 * API_LIST_LIMIT_DEFAULT, 1..API_LIST_LIMIT_MAX) and ?offset= (default 0,
 * 0..API_OFFSET_MAX). Returns 0, or -1 with *err 400 (http_query_int).
 */
int api_list_window(struct http_request *req, int *limit, int *offset, struct model_error *err);

/**
 * Reply what one store call answered: status with out (a new reference,
 * handed to the request) when rc is STORE_OK, else the store's failure
 * (http_store_fail with what, e.g. "scenario get": its 404 names the
 * scenario) and -1. For the handlers whose work is one store call.
 */
int api_reply_stored(struct http_request *req, enum store_rc rc, const char *what, int status,
                     json_t *out, struct model_error *err);

/** A store read of one item of a tenant by id (store_scenario_get, …). */
typedef enum store_rc (*api_store_get_fn)(struct store *st, const char *tenant_id, const char *id,
                                          json_t **out);
/** A store read of one page of a tenant's items (store_scenario_list, …). */
typedef enum store_rc (*api_store_list_fn)(struct store *st, const char *tenant_id, int limit,
                                           int offset, json_t **out);

/** The handler of GET …/{id} whose work is one store read: get of the
 * caller's tenant and the path's id, replied with api_reply_stored (200;
 * what names it in a 404 and in the log). */
int api_reply_item(struct http_request *req, api_store_get_fn get, const char *what,
                   struct model_error *err);

/** The handler of a list whose work is one store read: the page of the
 * query (api_list_window) of list for the caller's tenant, replied with
 * api_reply_stored (200). */
int api_reply_page(struct http_request *req, api_store_list_fn list, const char *what,
                   struct model_error *err);

/* ---- the handlers (http_handler_fn), by resource; routes.c has their routes
 * and roles ---- */

/* healthz.c */
/** GET /healthz: {"status":"ok"} when the store answers with its schema. */
int api_healthz(struct http_request *req, struct model_error *err);

/* openapi.c */
/** The OpenAPI 3.1 document of the API (docs/openapi.json), embedded at
 * build time by fcgi/api/embed-openapi.sh: api_openapi_doc_len bytes, then
 * a NUL. Static, never freed. */
extern const unsigned char api_openapi_doc[];
extern const size_t api_openapi_doc_len;
/** GET /v1/openapi.json (public): the embedded document, application/json. */
int api_openapi(struct http_request *req, struct model_error *err);

/* metrics.c */
/** GET /metrics (public; HTTP_ROUTE_STORE_OPTIONAL): the Prometheus text
 * format 0.0.4 of the pool's counters and the store's figures, or
 * olivares_store_up 0 without the latter when the store does not answer
 * (docs/metrics.md). 500 only when the text outgrows its cap. */
int api_metrics(struct http_request *req, struct model_error *err);

/* modules.c */
/** GET /v1/modules: the modules and their state for the caller's tenant. */
int api_modules_list(struct http_request *req, struct model_error *err);
/** PUT /v1/modules/sandbox {"enabled":bool}: the switch and its audit event. */
int api_module_set(struct http_request *req, struct model_error *err);
/** PUT /v1/modules/{name} for any other name: 404 naming the known ones. */
int api_module_unknown(struct http_request *req, struct model_error *err);

/* synthetic.c */
/** POST /v1/m/sandbox/synthetic-data: step inputs from a template. */
int api_generate(struct http_request *req, struct model_error *err);

/* scenarios.c */
/** POST /v1/m/sandbox/scenarios: a checked scenario, 201. */
int api_scenario_create(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/scenarios (limit, offset). */
int api_scenario_list(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/scenarios/{id}. */
int api_scenario_get(struct http_request *req, struct model_error *err);
/** PUT /v1/m/sandbox/scenarios/{id}: a new version. */
int api_scenario_update(struct http_request *req, struct model_error *err);
/** DELETE /v1/m/sandbox/scenarios/{id}. */
int api_scenario_delete(struct http_request *req, struct model_error *err);

/* suites.c */
/** POST /v1/m/sandbox/suites: a checked suite document, version 1, 201. */
int api_suite_create(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/suites (limit, offset): the latest of each. */
int api_suite_list(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/suites/{name}: the latest, or "name@N" version N. */
int api_suite_get(struct http_request *req, struct model_error *err);
/** PUT /v1/m/sandbox/suites/{name}: the next version, 200. */
int api_suite_update(struct http_request *req, struct model_error *err);

/* runs.c */
/** POST /v1/m/sandbox/scenarios/{id}/runs {variant?, backend?, suite?}:
 * a simulation run, executed and recorded, 201. */
int api_run_create(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/runs (scenario, status, kind, session, limit, offset). */
/** POST …/runs/{id}/cancel: store_run_cancel; 409 when the run has ended. */
int api_run_cancel(struct http_request *req, struct model_error *err);
int api_run_list(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/runs/{id}. */
int api_run_get(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/runs/{id}/outputs. */
int api_run_outputs(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/runs/{id}/junit: the run as JUnit XML
 * (fcgi/export/junit.h). */
int api_run_junit(struct http_request *req, struct model_error *err);

/** GET /v1/m/sandbox/comparisons/{id}/junit: a decided comparison as JUnit
 * XML (fcgi/export/junit.h); 409 while it is pending, 404 for another
 * tenant's. */
int api_comparison_junit(struct http_request *req, struct model_error *err);
/** GET runs/{id}/log: the agent's log as text/plain (fcgi/api/runs.c). */
int api_run_log(struct http_request *req, struct model_error *err);

/* comparisons.c */
/** POST /v1/m/sandbox/comparisons: a baseline and a candidate run of one
 * scenario, their verdict, recorded together, 201. */
int api_comparison_create(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/comparisons (scenario, verdict, latest, limit, offset). */
int api_comparison_list(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/comparisons/{id}. */
int api_comparison_get(struct http_request *req, struct model_error *err);
/** POST /v1/m/sandbox/comparisons/{id}/approval (admin, scope approve):
 * {"decision":"approved"|"rejected","reason": 1..API_APPROVAL_REASON_MAX
 * characters}; 201 with the approval, 409 while the comparison is
 * pending, 404 for an unknown or another tenant's id, 400 for a bad body. */
int api_comparison_approve(struct http_request *req, struct model_error *err);
/** The longest approval reason, in characters. */
#define API_APPROVAL_REASON_MAX 1000

/* evidence.c */
/** GET /v1/evidence/key (public): {"algorithm","key_id","public_key"}. */
int api_evidence_key(struct http_request *req, struct model_error *err);
/** GET …/comparisons/{id}/evidence: the signed bundle (its canonical form
 * and "\n"); 409 while the comparison is pending. */
int api_comparison_evidence(struct http_request *req, struct model_error *err);

/* sessions.c */
/** POST /v1/m/sandbox/sessions: import a history session, 201. */
int api_session_create(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/sessions (limit, offset). */
int api_session_list(struct http_request *req, struct model_error *err);
/** GET /v1/m/sandbox/sessions/{id}. */
int api_session_get(struct http_request *req, struct model_error *err);

/* replays.c */
/** POST /v1/m/sandbox/replays: a session's timeline run as a simulation,
 * or recorded degraded when it cannot be rebuilt, 201. */
int api_replay_create(struct http_request *req, struct model_error *err);

/* agents.c */
/** GET /v1/m/sandbox/agents: {"agents_dir","agents_dir_exists","agents":
 * [{"name","size","sha256","interpreter","interpreter_in_jail",
 * "interpreter_resolved","reason"}]} sorted by name (docs/api.md). */
int api_agents(struct http_request *req, struct model_error *err);

/* backends.c */
/** GET /v1/m/sandbox/backends (preflight=true|false|cached): each backend,
 * whether the tenant's policy allows it, the default, its preflight. */
int api_backends(struct http_request *req, struct model_error *err);

/* audit.c */
/** GET /v1/m/sandbox/audit (limit, offset): the tenant's audit trail. */
int api_audit_list(struct http_request *req, struct model_error *err);

#endif
