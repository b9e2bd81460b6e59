/*
 * The route table of the REST API (routes.h). The router checks each
 * route's role and module before its handler runs, so the roles are read
 * here, in one place: V viewer, E editor, A admin. IDEM marks the creates
 * that honour an Idempotency-Key (fcgi/http/idempotency.c). The last column
 * is the scope a scoped token needs (S_*): GET read, runs and replays run,
 * comparisons compare, other writes write, approvals approve, the module
 * switch and the audit admin.
 */
#include "fcgi/api/routes.h"

#include "fcgi/api/api_internal.h"

#define V STORE_ROLE_VIEWER
#define E STORE_ROLE_EDITOR
#define A STORE_ROLE_ADMIN
#define SB API_MODULE_SANDBOX
#define OBJ HTTP_BODY_OBJECT
#define NOB HTTP_BODY_NONE
#define IDEM HTTP_ROUTE_IDEMPOTENT
/* the scope a scoped token needs (store.h, enum store_scope) */
#define S_READ STORE_SCOPE_READ
#define S_RUN STORE_SCOPE_RUN
#define S_CMP STORE_SCOPE_COMPARE
#define S_WRITE STORE_SCOPE_WRITE
#define S_APPR STORE_SCOPE_APPROVE
#define S_ADMIN STORE_SCOPE_ADMIN

const struct http_route http_routes[] = {
    {"GET", "/healthz", HTTP_ROLE_PUBLIC, NULL, NOB, api_healthz, 0, S_READ},
    {"GET", "/v1/evidence/key", HTTP_ROLE_PUBLIC, NULL, NOB, api_evidence_key, 0, S_READ},
    {"GET", "/v1/openapi.json", HTTP_ROLE_PUBLIC, NULL, NOB, api_openapi, 0, S_READ},
    /* the web server lets only loopback in (docs/metrics.md) */
    {"GET", "/metrics", HTTP_ROLE_PUBLIC, NULL, NOB, api_metrics, HTTP_ROUTE_STORE_OPTIONAL,
     S_READ},
    {"GET", "/v1/modules", V, NULL, NOB, api_modules_list, 0, S_READ},
    /* first: the literal wins over {name} below */
    {"PUT", "/v1/modules/sandbox", A, NULL, OBJ, api_module_set, 0, S_ADMIN},
    {"PUT", "/v1/modules/{name}", A, NULL, OBJ, api_module_unknown, 0, S_ADMIN},
    {"POST", "/v1/m/sandbox/synthetic-data", E, SB, OBJ, api_generate, 0, S_WRITE},
    {"POST", "/v1/m/sandbox/scenarios", E, SB, OBJ, api_scenario_create, IDEM, S_WRITE},
    {"GET", "/v1/m/sandbox/scenarios", V, SB, NOB, api_scenario_list, 0, S_READ},
    {"GET", "/v1/m/sandbox/scenarios/{id}", V, SB, NOB, api_scenario_get, 0, S_READ},
    {"PUT", "/v1/m/sandbox/scenarios/{id}", E, SB, OBJ, api_scenario_update, 0, S_WRITE},
    {"DELETE", "/v1/m/sandbox/scenarios/{id}", E, SB, NOB, api_scenario_delete, 0, S_WRITE},
    {"POST", "/v1/m/sandbox/scenarios/{id}/runs", E, SB, OBJ, api_run_create, IDEM, S_RUN},
    {"POST", "/v1/m/sandbox/suites", E, SB, OBJ, api_suite_create, 0, S_WRITE},
    {"GET", "/v1/m/sandbox/suites", V, SB, NOB, api_suite_list, 0, S_READ},
    {"GET", "/v1/m/sandbox/suites/{name}", V, SB, NOB, api_suite_get, 0, S_READ},
    {"PUT", "/v1/m/sandbox/suites/{name}", E, SB, OBJ, api_suite_update, 0, S_WRITE},
    {"GET", "/v1/m/sandbox/runs", V, SB, NOB, api_run_list, 0, S_READ},
    {"GET", "/v1/m/sandbox/runs/{id}", V, SB, NOB, api_run_get, 0, S_READ},
    {"GET", "/v1/m/sandbox/runs/{id}/outputs", V, SB, NOB, api_run_outputs, 0, S_READ},
    {"GET", "/v1/m/sandbox/runs/{id}/junit", V, SB, NOB, api_run_junit, 0, S_READ},
    {"GET", "/v1/m/sandbox/runs/{id}/log", V, SB, NOB, api_run_log, 0, S_READ},
    {"POST", "/v1/m/sandbox/runs/{id}/cancel", E, SB, NOB, api_run_cancel, 0, S_RUN},
    /* comparisons are append-only evidence: no PUT or DELETE route exists,
     * so the router answers 405 to both */
    {"POST", "/v1/m/sandbox/comparisons", A, SB, OBJ, api_comparison_create, IDEM, S_CMP},
    {"GET", "/v1/m/sandbox/comparisons", V, SB, NOB, api_comparison_list, 0, S_READ},
    {"GET", "/v1/m/sandbox/comparisons/{id}", V, SB, NOB, api_comparison_get, 0, S_READ},
    {"GET", "/v1/m/sandbox/comparisons/{id}/junit", V, SB, NOB, api_comparison_junit, 0, S_READ},
    {"POST", "/v1/m/sandbox/comparisons/{id}/approval", A, SB, OBJ, api_comparison_approve, 0,
     S_APPR},
    {"GET", "/v1/m/sandbox/comparisons/{id}/evidence", V, SB, NOB, api_comparison_evidence, 0,
     S_READ},
    /* sessions are append-only history: no PUT or DELETE route exists,
     * so the router answers 405 to both */
    {"POST", "/v1/m/sandbox/sessions", E, SB, OBJ, api_session_create, IDEM, S_WRITE},
    {"GET", "/v1/m/sandbox/sessions", V, SB, NOB, api_session_list, 0, S_READ},
    {"GET", "/v1/m/sandbox/sessions/{id}", V, SB, NOB, api_session_get, 0, S_READ},
    {"POST", "/v1/m/sandbox/replays", E, SB, OBJ, api_replay_create, IDEM, S_RUN},
    {"GET", "/v1/m/sandbox/backends", V, SB, NOB, api_backends, 0, S_READ},
    {"GET", "/v1/m/sandbox/agents", V, SB, NOB, api_agents, 0, S_READ},
    {"GET", "/v1/m/sandbox/audit", A, SB, NOB, api_audit_list, 0, S_ADMIN},
};

const size_t http_routes_count = sizeof(http_routes) / sizeof(http_routes[0]);
