/*
 * REST handlers (handlers.h). Each one parses its input with the model,
 * calls the store with the caller's tenant, and replies; failures return
 * -1 with a struct model_error and the router replies it, so a rejected
 * request writes nothing.
 */
#include "fcgi/handlers.h"

#include <string.h>

#include <openssl/evp.h>

#include "fcgi/dispatch.h"
#include "model/generate.h"
#include "model/limits.h"
#include "model/runspec.h"
#include "model/scenario.h"
#include "model/text.h"

#define LIST_LIMIT_DEFAULT 50
#define LIST_LIMIT_MAX 500
#define AUDIT_LIMIT_DEFAULT 100
#define OFFSET_MAX 1000000000
#define MODULE_SANDBOX "sandbox"

/* ---- helpers ---------------------------------------------------------------- */

/* Refuse any member of obj not in the NULL-terminated list allowed. */
static int only_fields(json_t *obj, const char *const *allowed, struct model_error *err)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i])
			return model_error_set(err, MODEL_E_MALFORMED, key,
			                       "unknown field \"%.64s\"", key);
	}
	(void)v;
	return 0;
}

static int list_window(struct http_request *req, int *limit, int *offset, struct model_error *err)
{
	if (http_query_int(req, "limit", LIST_LIMIT_DEFAULT, 1, LIST_LIMIT_MAX, limit, err))
		return -1;
	return http_query_int(req, "offset", 0, 0, OFFSET_MAX, offset, err);
}

/* SHA-256 hex of nothing: the digest of a run with no outputs. */
static void empty_digest(char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	memset(hex, 0, 65);
	if (!EVP_Digest("", 0, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		return;
	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
}

/* ---- GET /healthz ------------------------------------------------------------- */

static int h_healthz(struct http_request *req, struct model_error *err)
{
	enum store_rc rc;

	rc = store_check_schema(req->store);
	if (rc)
		return http_store_fail(req, rc, "health check", err);
	return http_reply_json(req, 200, http_req_own(req, json_pack("{s:s}", "status", "ok")));
}

/* ---- modules ------------------------------------------------------------------- */

static int h_modules_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_module_list(req->store, req->who.tenant_id, &out);
	if (rc)
		return http_store_fail(req, rc, "module list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_module_set(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"enabled", NULL};
	json_t *enabled, *detail;
	enum store_rc rc;
	int on;

	if (only_fields(req->json, fields, err))
		return -1;
	enabled = json_object_get(req->json, "enabled");
	if (!json_is_boolean(enabled))
		return model_error_set(err, MODEL_E_MALFORMED, "enabled",
		                       "enabled must be true or false");
	on = json_is_true(enabled);
	rc = store_module_set(req->store, req->who.tenant_id, MODULE_SANDBOX, on);
	if (rc)
		return http_store_fail(req, rc, "module set", err);
	detail = http_req_own(req, json_pack("{s:s}", "module", MODULE_SANDBOX));
	rc = store_audit_append(req->store, req->who.tenant_id, req->who.token_id,
	                        on ? "module.enable" : "module.disable", NULL, detail);
	if (rc)
		return http_store_fail(req, rc, "module audit", err);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s,s:b}", "name", MODULE_SANDBOX, "enabled", on)));
}

/* ---- POST /v1/m/sandbox/synthetic-data -------------------------------------- */

static int h_generate(struct http_request *req, struct model_error *err)
{
	struct model_gen_request gr;
	json_t *samples = NULL, *detail;
	enum store_rc rc;
	int ret = -1;

	memset(&gr, 0, sizeof(gr));
	if (model_gen_request_parse(req->json, &gr, err))
		return -1;
	if (model_generate(&gr, &samples, err))
		goto out;
	http_req_own(req, samples);
	/* the audit event holds the count only, never the inputs (page) */
	detail = http_req_own(req, json_pack("{s:I}", "count", (json_int_t)gr.count));
	rc = store_audit_append(req->store, req->who.tenant_id, req->who.token_id,
	                        "sandbox.generate", NULL, detail);
	if (rc) {
		http_store_fail(req, rc, "generate audit", err);
		goto out;
	}
	http_reply_json(req, 200,
	                http_req_own(req, json_pack("{s:I,s:O}", "count", (json_int_t)gr.count,
	                                            "samples", samples)));
	ret = 0;
out:
	model_gen_request_free(&gr);
	return ret;
}

/* ---- scenarios ------------------------------------------------------------------ */

static int h_scenario_create(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_scenario_check(req->json, 0, &norm, err))
		return -1;
	http_req_own(req, norm);
	rc = store_scenario_create(req->store, req->who.tenant_id, req->who.token_id, norm, &out);
	if (rc)
		return http_store_fail(req, rc, "scenario create", err);
	return http_reply_json(req, 201, http_req_own(req, out));
}

static int h_scenario_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (list_window(req, &limit, &offset, err))
		return -1;
	rc = store_scenario_list(req->store, req->who.tenant_id, limit, offset, &out);
	if (rc)
		return http_store_fail(req, rc, "scenario list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_scenario_get(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_scenario_get(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return http_store_fail(req, rc, "scenario get", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_scenario_update(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_scenario_check(req->json, 1, &norm, err))
		return -1;
	http_req_own(req, norm);
	rc = store_scenario_update(req->store, req->who.tenant_id, req->who.token_id,
	                           req->params[0], norm, &out);
	if (rc)
		return http_store_fail(req, rc, "scenario update", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_scenario_delete(struct http_request *req, struct model_error *err)
{
	enum store_rc rc;

	rc = store_scenario_delete(req->store, req->who.tenant_id, req->who.token_id,
	                           req->params[0]);
	if (rc)
		return http_store_fail(req, rc, "scenario delete", err);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s,s:b}", "id", req->params[0], "deleted", 1)));
}

/* ---- POST /v1/m/sandbox/scenarios/{id}/runs ------------------------------------ */

/* Body {"variant": string or null}: *variant is NULL or a request-owned copy. */
static int parse_run_body(struct http_request *req, const char **variant, struct model_error *err)
{
	static const char *const fields[] = {"variant", NULL};
	const char *kind;
	json_t *v;
	size_t n;

	*variant = NULL;
	if (only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "variant");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "variant",
		                       "variant must be a string or null");
	n = json_string_length(v);
	if (n == 0)
		return model_error_set(err, MODEL_E_INVALID, "variant",
		                       "variant must not be empty");
	if (n > MODEL_MAX_VARIANT_BYTES)
		return model_error_set(err, MODEL_E_LIMIT, "variant",
		                       "variant must be at most %d bytes", MODEL_MAX_VARIANT_BYTES);
	if (model_text_find_credential(json_string_value(v), n, &kind))
		return model_error_set(err, MODEL_E_INVALID, "variant",
		                       "variant looks like a credential (%s)", kind);
	*variant = http_req_strdup(req, json_string_value(v));
	return 0;
}

static int h_run_create(struct http_request *req, struct model_error *err)
{
	struct http_dispatch_result res;
	struct store_run run;
	json_t *sc = NULL, *spec, *mocks, *out = NULL, *outputs;
	const char *variant, *digest;
	char started[25], finished[25], nodigest[65];
	enum store_rc rc;
	int ret = -1;

	if (parse_run_body(req, &variant, err))
		return -1;
	rc = store_scenario_get(req->store, req->who.tenant_id, req->params[0], &sc);
	if (rc)
		return http_store_fail(req, rc, "run: scenario get", err);
	http_req_own(req, sc);
	digest = json_string_value(json_object_get(sc, "digest"));
	if (!json_is_array(json_object_get(sc, "steps")) || !digest)
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "stored scenario is incomplete");

	/* the runner gets the steps and mocks only: no id, tenant or token */
	mocks = json_object_get(sc, "mocks");
	if (!json_is_array(mocks))
		mocks = http_req_own(req, json_array());
	spec = http_req_own(req, json_pack("{s:s?,s:O,s:O}", "variant", variant, "steps",
	                                   json_object_get(sc, "steps"), "mocks", mocks));
	if (!spec)
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the run spec");

	memset(&res, 0, sizeof(res));
	http_now_iso(started);
	if (http_dispatch_run(req->cfg->runner_path, MODEL_BACKEND_INPROC_MOCK,
	                      req->cfg->run_timeout_ms, spec, &res))
		http_log("run of a scenario failed in dispatch (recorded as failed)");
	http_now_iso(finished);

	/* a failed run is still a run: it is recorded with its reason */
	outputs = res.outputs ? res.outputs : http_req_own(req, json_array());
	if (!res.output_digest[0])
		empty_digest(nodigest);
	memset(&run, 0, sizeof(run));
	run.kind = "simulation";
	run.scenario_id = req->params[0];
	run.scenario_version = (int)json_integer_value(json_object_get(sc, "version"));
	run.scenario_digest = digest;
	run.variant = variant;
	run.status = strcmp(res.status, "completed") == 0 ? "completed" : "failed";
	run.runner = res.runner[0] ? res.runner : MODEL_RUNNER_NAME;
	run.backend = res.backend[0] ? res.backend : MODEL_BACKEND_INPROC_MOCK;
	run.isolated = res.isolated ? 1 : 0;
	run.destroyed = res.destroyed ? 1 : 0;
	run.steps_total = res.steps_total;
	run.steps_ok = res.steps_ok;
	run.steps_error = res.steps_error;
	run.suite = NULL;
	run.scored = 0;
	run.reason = res.reason[0] ? res.reason : NULL;
	run.output_digest = res.output_digest[0] ? res.output_digest : nodigest;
	run.started_at = started;
	run.finished_at = finished;
	run.outputs = outputs;
	rc = store_run_record(req->store, req->who.tenant_id, req->who.token_id, &run, &out);
	if (rc) {
		http_store_fail(req, rc, "run record", err);
		goto out;
	}
	http_reply_json(req, 201, http_req_own(req, out));
	ret = 0;
out:
	http_dispatch_result_free(&res);
	return ret;
}

/* ---- runs ------------------------------------------------------------------------- */

static int h_run_list(struct http_request *req, struct model_error *err)
{
	static const char *const statuses[] = {"running", "completed", "failed", "degraded", NULL};
	const char *scenario, *status;
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset, i;

	if (list_window(req, &limit, &offset, err))
		return -1;
	scenario = http_query_get(req, "scenario");
	if (scenario && !model_id_valid(scenario))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario",
		                       "scenario must be a scenario id");
	status = http_query_get(req, "status");
	if (status) {
		for (i = 0; statuses[i]; i++)
			if (strcmp(status, statuses[i]) == 0)
				break;
		if (!statuses[i])
			return model_error_set(
			    err, MODEL_E_MALFORMED, "status",
			    "status must be running, completed, failed or degraded");
	}
	rc = store_run_list(req->store, req->who.tenant_id, scenario, status, limit, offset, &out);
	if (rc)
		return http_store_fail(req, rc, "run list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_run_get(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_run_get(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return http_store_fail(req, rc, "run get", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_run_outputs(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_run_outputs(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return http_store_fail(req, rc, "run outputs", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

/* ---- GET /v1/m/sandbox/audit --------------------------------------------------- */

static int h_audit_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit;

	if (http_query_int(req, "limit", AUDIT_LIMIT_DEFAULT, 1, LIST_LIMIT_MAX, &limit, err))
		return -1;
	rc = store_audit_list(req->store, req->who.tenant_id, limit, &out);
	if (rc)
		return http_store_fail(req, rc, "audit list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

/* ---- the table --------------------------------------------------------------------- */

#define V STORE_ROLE_VIEWER
#define E STORE_ROLE_EDITOR
#define A STORE_ROLE_ADMIN
#define SB MODULE_SANDBOX
#define OBJ HTTP_BODY_OBJECT
#define NOB HTTP_BODY_NONE

const struct http_route http_routes[] = {
    {"GET", "/healthz", HTTP_ROLE_PUBLIC, NULL, NOB, h_healthz},
    {"GET", "/v1/modules", V, NULL, NOB, h_modules_list},
    {"PUT", "/v1/modules/sandbox", A, NULL, OBJ, h_module_set},
    {"POST", "/v1/m/sandbox/synthetic-data", E, SB, OBJ, h_generate},
    {"POST", "/v1/m/sandbox/scenarios", E, SB, OBJ, h_scenario_create},
    {"GET", "/v1/m/sandbox/scenarios", V, SB, NOB, h_scenario_list},
    {"GET", "/v1/m/sandbox/scenarios/{id}", V, SB, NOB, h_scenario_get},
    {"PUT", "/v1/m/sandbox/scenarios/{id}", E, SB, OBJ, h_scenario_update},
    {"DELETE", "/v1/m/sandbox/scenarios/{id}", E, SB, NOB, h_scenario_delete},
    {"POST", "/v1/m/sandbox/scenarios/{id}/runs", E, SB, OBJ, h_run_create},
    {"GET", "/v1/m/sandbox/runs", V, SB, NOB, h_run_list},
    {"GET", "/v1/m/sandbox/runs/{id}", V, SB, NOB, h_run_get},
    {"GET", "/v1/m/sandbox/runs/{id}/outputs", V, SB, NOB, h_run_outputs},
    {"GET", "/v1/m/sandbox/audit", A, SB, NOB, h_audit_list},
};

const size_t http_routes_count = sizeof(http_routes) / sizeof(http_routes[0]);
