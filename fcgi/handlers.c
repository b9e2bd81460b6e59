/*
 * REST handlers (handlers.h). Each one parses its input with the model,
 * calls the store with the caller's tenant, and replies; failures return
 * -1 with a struct model_error and the router replies it, so a rejected
 * request writes nothing.
 */
#include "fcgi/handlers.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
/* GET /v1/m/sandbox/backends: each preflight may take this long (a gVisor
 * preflight starts a sandbox), and its answer is reused by this worker for
 * PREFLIGHT_CACHE_MS, so a viewer polling the listing does not start four
 * runners per request. */
#define PREFLIGHT_TIMEOUT_MS 8000
#define PREFLIGHT_CACHE_MS 5000
/* A variant name that may name an agent program: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
#define AGENT_NAME_MAX 64

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

/* A printable ASCII copy (at most n-1 bytes) of untrusted text for a message. */
static void printable(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
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

/* PUT /v1/modules/{name} for any other name than the modules above. */
static int h_module_unknown(struct http_request *req, struct model_error *err)
{
	char shown[72];

	printable(shown, sizeof(shown), req->params[0]);
	return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "unknown module %s (known: %s)", shown,
	                       MODULE_SANDBOX);
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

/* ---- backend policy and agents (issue 3 §6, §7) ------------------------------- */

/*
 * The backend policy of the caller's tenant (fcgi/config.h): the [tenant
 * NAME] section whose tenant is the caller's, else the [runner] pair. The
 * names of the sections are resolved to ids through the store once per
 * worker (a name whose tenant does not exist yet is asked again next time).
 */
static int tenant_policy(struct http_request *req, const char **backends, const char **def,
                         struct model_error *err)
{
	const struct http_config *cfg = req->cfg;
	struct http_worker *w = req->worker;
	char id[33];
	enum store_rc rc;
	int i;

	http_config_policy(cfg, NULL, backends, def);
	for (i = 0; i < cfg->ntenants; i++) {
		if (!w->policy_tenant_ids[i][0]) {
			memset(id, 0, sizeof(id));
			rc = store_tenant_find(req->store, cfg->tenants[i].name, id);
			if (rc == STORE_NOT_FOUND)
				continue;
			if (rc)
				return http_store_fail(req, rc, "tenant policy", err);
			memcpy(w->policy_tenant_ids[i], id, sizeof(id));
			w->policy_tenant_ids[i][32] = '\0';
		}
		if (strcmp(w->policy_tenant_ids[i], req->who.tenant_id) == 0) {
			*backends = cfg->tenants[i].backends;
			*def = cfg->tenants[i].default_backend;
			return 0;
		}
	}
	return 0;
}

/*
 * The backend of a run: requested (may be NULL: the tenant's default) if
 * the tenant's policy allows it, else 422 invalid. An unknown name is just
 * one that no policy allows.
 */
static int choose_backend(struct http_request *req, const char *requested, const char **backend,
                          struct model_error *err)
{
	const char *allowed, *def;
	char shown[72];
	char list[320];
	size_t i, j;

	if (tenant_policy(req, &allowed, &def, err))
		return -1;
	if (!requested) {
		*backend = def;
		return 0;
	}
	if (http_config_list_has(allowed, requested)) {
		*backend = requested;
		return 0;
	}
	printable(shown, sizeof(shown), requested);
	for (i = 0, j = 0; allowed[i] && j + 3 < sizeof(list); i++) {
		list[j++] = allowed[i];
		if (allowed[i] == ',')
			list[j++] = ' ';
	}
	list[j] = '\0';
	return model_error_set(err, MODEL_E_INVALID, "backend",
	                       "backend %s is not allowed by policy (allowed: %s)", shown, list);
}

/* [A-Za-z0-9][A-Za-z0-9._-]{0,63}: the only variant names looked up in
 * the agents directory ("." and ".." cannot match, nor can a '/'). */
static int agent_name_ok(const char *v)
{
	size_t i;
	char ch;

	for (i = 0; v[i]; i++) {
		ch = v[i];
		if (i == AGENT_NAME_MAX)
			return 0;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9'))
			continue;
		if (i > 0 && (ch == '.' || ch == '_' || ch == '-'))
			continue;
		return 0;
	}
	return i > 0;
}

/*
 * The agent program of variant (DESIGN.md §5, issue 3 §6): the file
 * <agents_dir>/<variant> when it exists, canonicalised with realpath and
 * required to lie inside realpath(agents_dir) and to be a regular
 * executable file; *agent is then a request-owned absolute path. No such
 * file (or a variant that cannot name one): *agent is NULL. Anything else
 * (a symlink out of the directory, a dangling one, a directory, a file
 * that is not executable) is refused with 422 invalid.
 *
 * This is an application check, not a kernel boundary (seed 004): the
 * file can change between this check and the runner's exec. Isolation
 * never relies on it: whatever the path names runs inside the backend's
 * jail, which is the boundary.
 */
static int resolve_agent(struct http_request *req, const char *variant, const char **agent,
                         struct model_error *err)
{
	char path[PATH_MAX];
	char *real = NULL, *root = NULL;
	struct stat sb;
	size_t rl;
	int ret = -1;

	*agent = NULL;
	if (!variant || !agent_name_ok(variant))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", req->cfg->agents_dir, variant) >=
	    sizeof(path))
		return 0;
	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		http_log("agents directory: cannot look up a variant: %s", strerror(errno));
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "cannot read the agents directory");
	}
	root = realpath(req->cfg->agents_dir, NULL);
	real = realpath(path, NULL);
	if (!root || !real) {
		model_error_set(err, MODEL_E_INVALID, "variant",
		                "variant %s names an agent program that cannot be resolved",
		                variant);
		goto out;
	}
	rl = strlen(root);
	if (strncmp(real, root, rl) != 0 || real[rl] != '/' || !real[rl + 1]) {
		model_error_set(err, MODEL_E_INVALID, "variant",
		                "variant %s names an agent program outside the agents directory "
		                "(refused)",
		                variant);
		goto out;
	}
	if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode) || access(real, X_OK) != 0) {
		model_error_set(
		    err, MODEL_E_INVALID, "variant",
		    "variant %s names an agent program that is not a regular executable "
		    "file",
		    variant);
		goto out;
	}
	if (strlen(real) > 1024) {
		model_error_set(err, MODEL_E_INVALID, "variant",
		                "variant %s names an agent program whose path is too long",
		                variant);
		goto out;
	}
	*agent = http_req_strdup(req, real);
	ret = 0;
out:
	free(real);
	free(root);
	return ret;
}

/* The spec's "binds": the configured comma list as an array. */
static json_t *binds_array(const char *list)
{
	json_t *a = json_array();
	const char *p = list;
	const char *comma;

	while (*p) {
		comma = strchr(p, ',');
		if (!comma) {
			json_array_append_new(a, json_string(p));
			break;
		}
		json_array_append_new(a, json_stringn(p, (size_t)(comma - p)));
		p = comma + 1;
	}
	return a;
}

/* ---- POST /v1/m/sandbox/scenarios/{id}/runs ------------------------------------ */

/* Body {"variant": string or null, "backend": string or absent}: *variant
 * is NULL or a request-owned copy; *backend NULL (the tenant's default) or
 * the name asked for (borrowed from the body). */
static int parse_run_body(struct http_request *req, const char **variant, const char **backend,
                          struct model_error *err)
{
	static const char *const fields[] = {"variant", "backend", NULL};
	const char *kind;
	json_t *v;
	size_t n;

	*variant = NULL;
	*backend = NULL;
	if (only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "backend");
	if (v && !json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "backend",
		                       "backend must be a string");
	if (v)
		*backend = json_string_value(v);
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

/* The run spec (model/runspec.h): steps, mocks, variant, agent, limits,
 * binds. Nothing else: no id, tenant or token. */
static json_t *run_spec(struct http_request *req, json_t *sc, const char *variant,
                        const char *agent)
{
	const struct http_config *cfg = req->cfg;
	json_t *mocks = json_object_get(sc, "mocks");

	if (!json_is_array(mocks))
		mocks = http_req_own(req, json_array());
	return json_pack("{s:s?, s:O, s:O, s:o, s:{s:i, s:I, s:I, s:I, s:I, s:I}, s:o}", "variant",
	                 variant, "steps", json_object_get(sc, "steps"), "mocks", mocks, "agent",
	                 agent ? json_string(agent) : json_null(), "limits", "wall_ms",
	                 cfg->run_timeout_ms, "cpu_seconds", (json_int_t)cfg->limits.cpu_seconds,
	                 "memory_mb", (json_int_t)cfg->limits.memory_mb, "processes",
	                 (json_int_t)cfg->limits.processes, "open_files",
	                 (json_int_t)cfg->limits.open_files, "tmpfs_mb",
	                 (json_int_t)cfg->limits.tmpfs_mb, "binds", binds_array(cfg->binds));
}

static int h_run_create(struct http_request *req, struct model_error *err)
{
	struct http_dispatch_result res;
	struct store_run run;
	json_t *sc = NULL, *spec, *out = NULL, *outputs;
	const char *variant, *requested, *backend = NULL, *agent = NULL, *digest;
	char started[25], finished[25], nodigest[65];
	enum store_rc rc;
	int ret = -1;

	/* every refusal comes before the runner starts: nothing is written */
	if (parse_run_body(req, &variant, &requested, err))
		return -1;
	if (choose_backend(req, requested, &backend, err))
		return -1;
	if (resolve_agent(req, variant, &agent, err))
		return -1;
	if (agent && strcmp(backend, MODEL_BACKEND_INPROC_MOCK) == 0)
		return model_error_set(err, MODEL_E_INVALID, "backend",
		                       "variant %s runs agent program %s from the agents "
		                       "directory; backend inproc-mock cannot run programs; "
		                       "choose an OS-level backend",
		                       variant, variant);
	rc = store_scenario_get(req->store, req->who.tenant_id, req->params[0], &sc);
	if (rc)
		return http_store_fail(req, rc, "run: scenario get", err);
	http_req_own(req, sc);
	digest = json_string_value(json_object_get(sc, "digest"));
	if (!json_is_array(json_object_get(sc, "steps")) || !digest)
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "stored scenario is incomplete");

	spec = http_req_own(req, run_spec(req, sc, variant, agent));
	if (!spec)
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the run spec");

	memset(&res, 0, sizeof(res));
	http_now_iso(started);
	/* the runner enforces wall_ms itself; the worker's deadline is the
	 * backstop for a runner that does not (dispatch.h) */
	if (http_dispatch_run(req->cfg->runner_path, backend,
	                      req->cfg->run_timeout_ms + HTTP_DISPATCH_GRACE_MS, spec, &res))
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
	/* the backend the runner reported having run (dispatch refuses any
	 * other than the one asked for) */
	run.backend = res.backend[0] ? res.backend : backend;
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

/* ---- GET /v1/m/sandbox/backends -------------------------------------------------- */

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* This worker's last preflight answers, by index in http_config_known_backends. */
static struct {
	long long at_ms; /* 0: none yet */
	struct http_preflight pf;
} preflight_cache[8];

static void preflight(const struct http_config *cfg, size_t i, const char *name,
                      struct http_preflight *pf)
{
	long long now = mono_ms();

	if (i < sizeof(preflight_cache) / sizeof(preflight_cache[0]) && preflight_cache[i].at_ms &&
	    now - preflight_cache[i].at_ms < PREFLIGHT_CACHE_MS) {
		*pf = preflight_cache[i].pf;
		return;
	}
	if (http_dispatch_preflight(cfg->runner_path, name, PREFLIGHT_TIMEOUT_MS, pf))
		http_log("preflight of %s: no answer from the runner (%s)", name, pf->reason);
	if (i < sizeof(preflight_cache) / sizeof(preflight_cache[0])) {
		preflight_cache[i].at_ms = mono_ms();
		preflight_cache[i].pf = *pf;
	}
}

static int h_backends(struct http_request *req, struct model_error *err)
{
	struct http_preflight pf;
	const char *allowed, *def, *name;
	json_t *list, *item;
	size_t i;

	if (tenant_policy(req, &allowed, &def, err))
		return -1;
	list = http_req_own(req, json_array());
	for (i = 0; http_config_known_backends[i]; i++) {
		name = http_config_known_backends[i];
		preflight(req->cfg, i, name, &pf);
		item = json_pack("{s:s, s:b, s:b, s:{s:b, s:o}}", "name", name, "allowed",
		                 http_config_list_has(allowed, name), "default",
		                 strcmp(def, name) == 0, "preflight", "ok", pf.ok, "reason",
		                 pf.ok ? json_null() : json_string(pf.reason));
		if (!item)
			return model_error_set(err, MODEL_E_INTERNAL, NULL,
			                       "cannot render the backends");
		json_array_append_new(list, item);
	}
	return http_reply_json(req, 200, http_req_own(req, json_pack("{s:O}", "backends", list)));
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
    /* first: the literal wins over {name} below */
    {"PUT", "/v1/modules/sandbox", A, NULL, OBJ, h_module_set},
    {"PUT", "/v1/modules/{name}", A, NULL, OBJ, h_module_unknown},
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
    {"GET", "/v1/m/sandbox/backends", V, SB, NOB, h_backends},
    {"GET", "/v1/m/sandbox/audit", A, SB, NOB, h_audit_list},
};

const size_t http_routes_count = sizeof(http_routes) / sizeof(http_routes[0]);
