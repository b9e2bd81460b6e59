/*
 * REST handlers (handlers.h). Each one parses its input with the model,
 * calls the store with the caller's tenant, and replies; failures return
 * -1 with a struct model_error and the router replies it, so a rejected
 * request writes nothing.
 */
#include "fcgi/handlers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/export/junit.h"
#include "fcgi/run/dispatch.h"
#include "fcgi/run/preflight_cache.h"
#include "model/generate.h"
#include "model/history.h"
#include "model/limits.h"
#include "model/runspec.h"
#include "model/scenario.h"
#include "model/scorer.h"
#include "model/text.h"
#include "model/verdict.h"

#define LIST_LIMIT_DEFAULT 50
#define LIST_LIMIT_MAX 500
#define AUDIT_LIMIT_DEFAULT 100
#define OFFSET_MAX 1000000000
#define MODULE_SANDBOX "sandbox"
/* GET /v1/m/sandbox/backends: each preflight may take this long (a gVisor
 * preflight starts a sandbox, 0.3 - 0.7 s of a worker), and its answer is
 * reused by every worker of the pool for PREFLIGHT_CACHE_MS
 * (fcgi/run/preflight_cache.h), so a viewer polling the
 * listing does not start four runners per request: at 30 s, a constant
 * poller costs each worker about 2 % of its time (at 5 s it was 10 - 14 %,
 * found by an adversarial review). A host change (runsc installed) shows
 * within that time. */
#define PREFLIGHT_TIMEOUT_MS 8000
#define PREFLIGHT_CACHE_MS 30000
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

/* 1 if word is one of the NULL-terminated list words. */
static int one_of(const char *word, const char *const *words)
{
	size_t i;

	for (i = 0; words[i]; i++)
		if (strcmp(word, words[i]) == 0)
			return 1;
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
	http_sha256_hex("", 0, hex);
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
	/* the switch and its audit event in one transaction */
	detail = http_req_own(req, json_pack("{s:s}", "module", MODULE_SANDBOX));
	rc = store_module_set(req->store, req->who.tenant_id, MODULE_SANDBOX, on, req->who.token_id,
	                      detail);
	if (rc)
		return http_store_fail(req, rc, "module set", err);
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
 * the tenant's policy allows it, else 422 invalid: a name the runner does
 * not know (or an empty one) is said to be unknown, with the known ones;
 * a known one outside the policy, with the allowed ones.
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
	for (i = 0; http_config_known_backends[i]; i++)
		if (strcmp(http_config_known_backends[i], requested) == 0)
			break;
	if (!http_config_known_backends[i]) {
		for (i = 0, j = 0; http_config_known_backends[i]; i++)
			j += (size_t)snprintf(list + j, sizeof(list) - j, "%s%s", i ? ", " : "",
			                      http_config_known_backends[i]);
		if (!requested[0])
			return model_error_set(err, MODEL_E_INVALID, "backend",
			                       "backend is empty (known: %s)", list);
		return model_error_set(err, MODEL_E_INVALID, "backend",
		                       "unknown backend \"%s\" (known: %s)", shown, list);
	}
	for (i = 0, j = 0; allowed[i] && j + 3 < sizeof(list); i++) {
		list[j++] = allowed[i];
		if (allowed[i] == ',')
			list[j++] = ' ';
	}
	list[j] = '\0';
	return model_error_set(err, MODEL_E_INVALID, "backend",
	                       "backend %s is not allowed by policy (allowed: %s; the server's "
	                       "[runner] or [tenant NAME] backends set it)",
	                       shown, list);
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
 * executable file that every user may read and execute (the backends run
 * it as an unprivileged user); *agent is then a request-owned absolute
 * path. No such
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
	/* The backends run it as an unprivileged user: every user must be
	 * able to execute it and to read it (a script's interpreter reads
	 * it; gVisor reads a program to load it). Refused here rather than
	 * as a run that failed to start. */
	if ((sb.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH)) {
		model_error_set(err, MODEL_E_INVALID, "variant",
		                "variant %s names an agent program that other users may not %s "
		                "(mode %04o): the backends run it as an unprivileged user "
		                "(chmod o+rx)",
		                variant, !(sb.st_mode & S_IXOTH) ? "execute" : "read",
		                (unsigned)(sb.st_mode & 07777));
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

/* ---- run execution (runs and comparisons) ------------------------------------ */

/*
 * A variant given in a body: NULL or absent gives *variant NULL when
 * optional (runs), is refused when required (comparisons); otherwise a
 * non-empty string of at most MODEL_MAX_VARIANT_BYTES that does not look
 * like a credential, copied into request memory.
 */
static int parse_variant(struct http_request *req, json_t *v, const char *field, int required,
                         const char **variant, struct model_error *err)
{
	const char *kind;
	size_t n;

	*variant = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		return model_error_set(err, MODEL_E_MALFORMED, field, "%s is required (a variant)",
		                       field);
	}
	if (!json_is_string(v))
		return model_error_set(
		    err, MODEL_E_MALFORMED, field,
		    required ? "%s must be a string" : "%s must be a string or null", field);
	n = json_string_length(v);
	if (n == 0)
		return model_error_set(err, MODEL_E_INVALID, field, "%s must not be empty", field);
	if (n > MODEL_MAX_VARIANT_BYTES)
		return model_error_set(err, MODEL_E_LIMIT, field, "%s must be at most %d bytes",
		                       field, MODEL_MAX_VARIANT_BYTES);
	if (model_text_find_credential(json_string_value(v), n, &kind))
		return model_error_set(err, MODEL_E_INVALID, field,
		                       "%s looks like a credential (%s)", field, kind);
	*variant = http_req_strdup(req, json_string_value(v));
	return 0;
}

/* "suite": absent or null gives *suite NULL unless required; else a name
 * of model_suite_name_valid (model/scorer.h), 422 otherwise. */
static int parse_suite(json_t *v, int required, const char **suite, struct model_error *err)
{
	*suite = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		return model_error_set(err, MODEL_E_MALFORMED, "suite", "suite is required");
	}
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "suite", "suite must be a string");
	if (!model_suite_name_valid(json_string_value(v)))
		return model_error_set(err, MODEL_E_INVALID, "suite",
		                       "suite must be 1..128 characters of [A-Za-z0-9._-], "
		                       "starting with a letter or digit");
	*suite = json_string_value(v);
	return 0;
}

/* "backend": absent gives NULL (the tenant's default), else a string. */
static int parse_backend(json_t *v, const char **backend, struct model_error *err)
{
	*backend = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "backend",
		                       "backend must be a string");
	*backend = json_string_value(v);
	return 0;
}

/* The agent program of variant on backend (resolve_agent), refusing the
 * one combination that cannot run: a program on inproc-mock. */
static int variant_agent(struct http_request *req, const char *variant, const char *backend,
                         const char **agent, struct model_error *err)
{
	if (resolve_agent(req, variant, agent, err))
		return -1;
	if (*agent && strcmp(backend, MODEL_BACKEND_INPROC_MOCK) == 0)
		return model_error_set(err, MODEL_E_INVALID, "backend",
		                       "variant %s runs agent program %s from the agents "
		                       "directory; backend inproc-mock cannot run programs; "
		                       "choose an OS-level backend",
		                       variant, variant);
	return 0;
}

/* The caller's stored scenario id (request-owned), with the fields a run
 * needs. field: the body's member that named it ("scenario_id"), named by
 * a 404, or NULL when the path did. */
static int load_scenario(struct http_request *req, const char *id, const char *field, json_t **sc,
                         struct model_error *err)
{
	enum store_rc rc;

	*sc = NULL;
	rc = store_scenario_get(req->store, req->who.tenant_id, id, sc);
	if (rc == STORE_NOT_FOUND && field)
		return model_error_set(err, MODEL_E_NOT_FOUND, field, "scenario not found");
	if (rc)
		return http_store_fail(req, rc, "scenario get (run)", err);
	http_req_own(req, *sc);
	if (!json_is_array(json_object_get(*sc, "steps")) ||
	    !json_string_value(json_object_get(*sc, "digest")))
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "stored scenario is incomplete");
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

/*
 * One run to execute: what the request chose (filled by the caller), then
 * what happened (filled by run_execute). run is ready for the store once
 * run_execute returns; its strings point into this struct, the request or
 * res, so the job lives until the run is recorded. Release with
 * run_job_free.
 */
struct run_job {
	const char *kind;        /* "simulation" | "comparison" | "replay" */
	const char *scenario_id; /* request-owned; NULL for a replay without one */
	json_t *sc;              /* the stored scenario (request-owned), or NULL */
	json_t *plan;            /* {"steps","mocks"} to run (request-owned);
	                          * NULL: the scenario's own */
	const char *session_id;  /* the session a replay replays, else NULL */
	const char *variant;     /* may be NULL */
	const char *backend;
	const char *agent; /* may be NULL */
	const char *suite; /* may be NULL: not scored, no reason added */
	struct http_dispatch_result res;
	struct model_score_result score;
	struct store_run run;
	char started[25], finished[25];
	char nodigest[65];
	char reason[640];
};

static void run_job_free(struct run_job *job)
{
	http_dispatch_result_free(&job->res);
	model_score_result_clear(&job->score);
}

/*
 * Score a completed run with the wired adapter (issue 4): scored, score,
 * passed and details when it answers a score in [0, 1]; otherwise
 * "executed, not scored: <cause>". A run that did not complete is never
 * sent to the scorer: its reason stays its failure.
 */
static void run_score(struct http_request *req, struct run_job *job)
{
	static const struct model_scorer none = {&model_scorer_none, NULL};
	const struct model_scorer *sc = req->worker->scorer ? req->worker->scorer : &none;
	struct store_run *run = &job->run;
	struct model_score_result *res = &job->score;
	const char *cause;
	int rc;

	run->suite = job->suite;
	if (!job->suite || strcmp(run->status, "completed") != 0)
		return;
	memset(res, 0, sizeof(*res));
	rc = sc->ops->score(sc->ctx, job->suite, run->outputs, res);
	if (rc == 0 && res->scored && res->score >= 0.0 && res->score <= 1.0 &&
	    (!res->details || json_is_array(res->details))) {
		run->scored = 1;
		/* recorded to 9 decimals: it reads back the same on every store */
		run->score = model_score_round(res->score);
		run->passed = res->passed ? 1 : 0;
		run->score_details = res->details;
		return;
	}
	if (rc == 0 && res->scored)
		cause = "the scorer answered a score outside [0, 1] or malformed details";
	else
		cause = res->reason[0] ? res->reason : "the scorer gave no reason";
	snprintf(job->reason, sizeof(job->reason), "executed, not scored: %s", cause);
	run->scored = 0;
	run->reason = job->reason;
	if (strcmp(sc->ops->name, "none") != 0)
		http_log("run not scored by the %s scorer", sc->ops->name);
}

/* What a run is of, whatever happens to it: kind, scenario (id, version,
 * digest; none for a replay without a scenario), variant and session. */
static void run_identity(struct run_job *job)
{
	struct store_run *run = &job->run;

	run->kind = job->kind;
	run->scenario_id = job->scenario_id;
	run->scenario_version =
	    job->sc ? (int)json_integer_value(json_object_get(job->sc, "version")) : 0;
	run->scenario_digest =
	    job->sc ? json_string_value(json_object_get(job->sc, "digest")) : NULL;
	run->variant = job->variant;
	run->session_id = job->session_id;
}

/*
 * Execute one run of job->sc (or of job->plan) on job->backend (the runner, then the scorer
 * when a suite is named) and fill job->run for the store. A run that fails
 * is still a run (recorded with its reason), so this only fails when the
 * spec cannot be built.
 */
static int run_execute(struct http_request *req, struct run_job *job, struct model_error *err)
{
	struct store_run *run = &job->run;
	json_t *spec;

	/* an agent program may take its whole wall-clock limit: a slot first
	 * (held until the request ends; a comparison's second run reuses
	 * it), or 429 before anything runs */
	if (strcmp(job->backend, MODEL_BACKEND_INPROC_MOCK) != 0 &&
	    http_runslot_take(&req->run_slot, req->who.tenant_id, err))
		return -1;
	spec = http_req_own(
	    req, run_spec(req, job->plan ? job->plan : job->sc, job->variant, job->agent));
	if (!spec)
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the run spec");
	memset(&job->res, 0, sizeof(job->res));
	http_now_iso(job->started);
	/* the runner enforces wall_ms itself; the worker's deadline is the
	 * backstop for a runner that does not (dispatch.h) */
	if (http_dispatch_run(req->cfg->runner_path, 1, job->backend, req->cfg->gvisor_platform,
	                      req->cfg->run_timeout_ms + HTTP_DISPATCH_GRACE_MS, spec, &job->res))
		http_log("a %s run failed in dispatch (recorded as failed)", job->kind);
	http_now_iso(job->finished);

	if (!job->res.output_digest[0])
		empty_digest(job->nodigest);
	memset(run, 0, sizeof(*run));
	run_identity(job);
	run->status = strcmp(job->res.status, "completed") == 0 ? "completed" : "failed";
	run->runner = job->res.runner[0] ? job->res.runner : MODEL_RUNNER_NAME;
	/* the backend the runner reported having run (dispatch refuses any
	 * other than the one asked for) */
	run->backend = job->res.backend[0] ? job->res.backend : job->backend;
	run->isolated = job->res.isolated ? 1 : 0;
	run->destroyed = job->res.destroyed ? 1 : 0;
	run->steps_total = job->res.steps_total;
	run->steps_ok = job->res.steps_ok;
	run->steps_error = job->res.steps_error;
	run->scored = 0;
	run->reason = job->res.reason[0] ? job->res.reason : NULL;
	/* the agent killed after every step completed: a note beside the
	 * status and the reason (scoring may still set that), never in them */
	run->shutdown = job->res.shutdown[0] ? job->res.shutdown : NULL;
	run->output_digest = job->res.output_digest[0] ? job->res.output_digest : job->nodigest;
	run->started_at = job->started;
	run->finished_at = job->finished;
	run->outputs = job->res.outputs ? job->res.outputs : http_req_own(req, json_array());
	run_score(req, job);
	return 0;
}

/* ---- POST /v1/m/sandbox/scenarios/{id}/runs ------------------------------------ */

static int h_run_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"variant", "backend", "suite", NULL};
	struct run_job job;
	const char *requested;
	json_t *out = NULL;
	enum store_rc rc;
	int ret = -1;

	memset(&job, 0, sizeof(job));
	job.kind = "simulation";
	job.scenario_id = req->params[0];
	/* every refusal comes before the runner starts: nothing is written */
	if (only_fields(req->json, fields, err) ||
	    parse_backend(json_object_get(req->json, "backend"), &requested, err) ||
	    parse_variant(req, json_object_get(req->json, "variant"), "variant", 0, &job.variant,
	                  err) ||
	    parse_suite(json_object_get(req->json, "suite"), 0, &job.suite, err))
		return -1;
	if (choose_backend(req, requested, &job.backend, err) ||
	    variant_agent(req, job.variant, job.backend, &job.agent, err) ||
	    load_scenario(req, job.scenario_id, NULL, &job.sc, err))
		return -1;
	if (run_execute(req, &job, err))
		goto out;
	rc = store_run_record(req->store, req->who.tenant_id, req->who.token_id, &job.run, &out);
	if (rc) {
		http_store_fail(req, rc, "run record", err);
		goto out;
	}
	http_reply_json(req, 201, http_req_own(req, out));
	ret = 0;
out:
	run_job_free(&job);
	return ret;
}

/* ---- comparisons (issue 4) -------------------------------------------------------- */

/* The tolerance of a comparison body: absent gives the default; a value
 * that is not a number is malformed (400, like every wrong type); a number
 * outside [0, 1] is over its bound (422). */
static int parse_tolerance(json_t *v, double *tolerance, struct model_error *err)
{
	*tolerance = MODEL_DEFAULT_TOLERANCE;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return model_error_set(err, MODEL_E_MALFORMED, "tolerance",
		                       "tolerance must be a number");
	if (!(json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0))
		return model_error_set(err, MODEL_E_LIMIT, "tolerance",
		                       "tolerance must be a number from 0 to 1");
	/* to 9 decimals, as the delta it is compared with is recorded */
	*tolerance = model_score_round(json_number_value(v));
	return 0;
}

/*
 * The steps whose outputs differ between two runs, by seq (both arrays in
 * seq order, as dispatch guarantees): [{"seq","key","baseline_output",
 * "candidate_output"}], a side that has no such step giving null.
 */
static json_t *differing_steps(json_t *base, json_t *cand)
{
	json_t *diff = json_array();
	json_t *b, *c, *bo, *co;
	json_int_t bs, cs;
	size_t i = 0, j = 0;

	while (i < json_array_size(base) || j < json_array_size(cand)) {
		b = json_array_get(base, i);
		c = json_array_get(cand, j);
		bs = b ? json_integer_value(json_object_get(b, "seq")) : 0;
		cs = c ? json_integer_value(json_object_get(c, "seq")) : 0;
		if (b && c && bs == cs) {
			i++;
			j++;
		} else if (b && (!c || bs < cs)) {
			c = NULL;
			i++;
		} else {
			b = NULL;
			j++;
		}
		bo = b ? json_object_get(b, "output") : NULL;
		co = c ? json_object_get(c, "output") : NULL;
		if (bo && co && json_equal(bo, co))
			continue;
		json_array_append_new(diff, json_pack("{s:I, s:O, s:O, s:O}", "seq", b ? bs : cs,
		                                      "key", json_object_get(b ? b : c, "key"),
		                                      "baseline_output", bo ? bo : json_null(),
		                                      "candidate_output", co ? co : json_null()));
	}
	return diff;
}

/* The verdict side of a recorded-to-be run. */
static void verdict_side(const struct store_run *run, struct model_verdict_side *side)
{
	side->status = run->status;
	side->scored = run->scored;
	side->score = run->score;
	side->reason = run->reason;
}

static int h_comparison_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"scenario_id", "baseline", "candidate", "suite",
	                                     "tolerance",   "backend",  NULL};
	struct run_job base, cand;
	struct store_comparison cmp;
	struct model_verdict_side bs, cs;
	enum model_verdict verdict;
	const char *requested, *suite, *scenario_id;
	char why[1400];
	json_t *v, *out = NULL;
	enum store_rc rc;
	int ret = -1;

	memset(&base, 0, sizeof(base));
	memset(&cand, 0, sizeof(cand));
	memset(&cmp, 0, sizeof(cmp));
	/* the whole body is checked before anything runs: nothing is written */
	if (only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "scenario_id");
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario_id",
		                       "scenario_id is required (a scenario id)");
	scenario_id = json_string_value(v);
	if (parse_variant(req, json_object_get(req->json, "baseline"), "baseline", 1, &base.variant,
	                  err) ||
	    parse_variant(req, json_object_get(req->json, "candidate"), "candidate", 1,
	                  &cand.variant, err) ||
	    parse_suite(json_object_get(req->json, "suite"), 1, &suite, err) ||
	    parse_tolerance(json_object_get(req->json, "tolerance"), &cmp.tolerance, err) ||
	    parse_backend(json_object_get(req->json, "backend"), &requested, err))
		return -1;
	if (choose_backend(req, requested, &base.backend, err))
		return -1;
	cand.backend = base.backend;
	if (variant_agent(req, base.variant, base.backend, &base.agent, err) ||
	    variant_agent(req, cand.variant, cand.backend, &cand.agent, err))
		return -1;
	/* an id that is not well-formed names no scenario: 404, as in paths */
	if (!model_id_valid(scenario_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "scenario_id", "scenario not found");
	scenario_id = http_req_strdup(req, scenario_id);
	if (load_scenario(req, scenario_id, "scenario_id", &base.sc, err))
		return -1;
	base.kind = cand.kind = "comparison";
	base.scenario_id = cand.scenario_id = scenario_id;
	cand.sc = base.sc;
	base.suite = cand.suite = suite;

	/* one after the other, on the same scenario version */
	if (run_execute(req, &base, err) || run_execute(req, &cand, err))
		goto out;
	verdict_side(&base.run, &bs);
	verdict_side(&cand.run, &cs);
	why[0] = '\0';
	if (model_verdict_decide(&bs, &cs, cmp.tolerance, &verdict, &cmp.has_delta, &cmp.delta, why,
	                         sizeof(why))) {
		model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot decide the verdict");
		goto out;
	}
	cmp.scenario_id = scenario_id;
	cmp.scenario_version = base.run.scenario_version;
	cmp.suite = suite;
	cmp.baseline = &base.run;
	cmp.candidate = &cand.run;
	cmp.verdict = model_verdict_name(verdict);
	/* the reason says why a comparison is inconclusive, and only then */
	cmp.reason = verdict == MODEL_VERDICT_INCONCLUSIVE && why[0] ? why : NULL;
	cmp.differing_steps =
	    http_req_own(req, differing_steps(base.run.outputs, cand.run.outputs));
	rc = store_comparison_record(req->store, req->who.tenant_id, req->who.token_id, &cmp, &out);
	if (rc) {
		http_store_fail(req, rc, "comparison record", err);
		goto out;
	}
	http_reply_json(req, 201, http_req_own(req, out));
	ret = 0;
out:
	run_job_free(&base);
	run_job_free(&cand);
	return ret;
}

static int h_comparison_list(struct http_request *req, struct model_error *err)
{
	static const char *const verdicts[] = {"improved", "regressed", "unchanged", "inconclusive",
	                                       NULL};
	const char *scenario, *latest, *verdict;
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (list_window(req, &limit, &offset, err))
		return -1;
	scenario = http_query_get(req, "scenario");
	if (scenario && !model_id_valid(scenario))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario",
		                       "scenario must be a scenario id");
	verdict = http_query_get(req, "verdict");
	if (verdict && !one_of(verdict, verdicts))
		return model_error_set(err, MODEL_E_MALFORMED, "verdict",
		                       "verdict must be improved, regressed, unchanged or "
		                       "inconclusive");
	latest = http_query_get(req, "latest");
	if (latest && strcmp(latest, "true") != 0 && strcmp(latest, "false") != 0)
		return model_error_set(err, MODEL_E_MALFORMED, "latest",
		                       "latest must be true or false");
	if (latest && strcmp(latest, "true") == 0) {
		/* what a deployment gate reads: the newest of one scenario */
		if (!scenario)
			return model_error_set(err, MODEL_E_MALFORMED, "scenario",
			                       "latest=true requires scenario");
		limit = 1;
		offset = 0;
	}
	rc = store_comparison_list_filtered(req->store, req->who.tenant_id, scenario, verdict,
	                                    limit, offset, &out);
	if (rc)
		return http_store_fail(req, rc, "comparison list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_comparison_get(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_comparison_get(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return http_store_fail(req, rc, "comparison get", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

/* ---- sessions and replays (issue 5) ----------------------------------------------- */

static int h_session_create(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_session_check(req->json, &norm, err))
		return -1;
	http_req_own(req, norm);
	rc = store_session_create(req->store, req->who.tenant_id, req->who.token_id, norm, &out);
	if (rc)
		return http_store_fail(req, rc, "session import", err);
	return http_reply_json(req, 201, http_req_own(req, out));
}

static int h_session_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (list_window(req, &limit, &offset, err))
		return -1;
	rc = store_session_list(req->store, req->who.tenant_id, limit, offset, &out);
	if (rc)
		return http_store_fail(req, rc, "session list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

static int h_session_get(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_session_get(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return http_store_fail(req, rc, "session get", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

/*
 * The mocks of a replay (new array): the session's recorded results, then
 * the mocks of the scenario sc (may be NULL) whose resource has no
 * recorded result. A recorded result wins on its resource, whatever the
 * variant of the scenario's mock, so no resource is ever answered twice
 * (the timeline's results are distinct per resource, the scenario's per
 * resource and variant).
 */
static json_t *replay_mocks(json_t *recorded, json_t *sc)
{
	json_t *all = json_array();
	json_t *seen = json_object();
	json_t *m;
	const char *res;
	size_t i;

	json_array_foreach(recorded, i, m)
	{
		res = json_string_value(json_object_get(m, "resource"));
		if (res)
			json_object_set_new(seen, res, json_true());
		json_array_append(all, m);
	}
	json_array_foreach(json_object_get(sc, "mocks"), i, m)
	{
		res = json_string_value(json_object_get(m, "resource"));
		if (!res || json_object_get(seen, res))
			continue;
		json_array_append(all, m);
	}
	json_decref(seen);
	return all;
}

/*
 * A replay whose timeline cannot be rebuilt (api5.md, DESIGN.md §5): it is
 * recorded, never fabricated, and nothing runs: status "degraded", no step
 * and no output, runner "none", the backend that would have run, not
 * isolated and not destroyed (no runner existed), the digest of no output,
 * and the model's reason. A suite it names is kept; it is not scored.
 */
static void replay_degraded(struct http_request *req, struct run_job *job, const char *why)
{
	struct store_run *run = &job->run;

	http_now_iso(job->started);
	memcpy(job->finished, job->started, sizeof(job->finished));
	empty_digest(job->nodigest);
	snprintf(job->reason, sizeof(job->reason), "timeline cannot be rebuilt: %s", why);
	memset(run, 0, sizeof(*run));
	run_identity(job);
	run->status = "degraded";
	run->runner = "none";
	run->backend = job->backend;
	run->suite = job->suite;
	run->reason = job->reason;
	run->output_digest = job->nodigest;
	run->started_at = job->started;
	run->finished_at = job->finished;
	run->outputs = http_req_own(req, json_array());
}

/* Load session_id of the caller's tenant through the history port:
 * *events request-owned; 404 when it has no such session, 503 when the
 * source cannot answer. */
static int load_session(struct http_request *req, const char *session_id, json_t **events,
                        struct model_error *err)
{
	const struct model_history_source *hs = req->worker->history;
	char external_id[MODEL_MAX_EXTERNAL_ID_BYTES + 1];
	char why[512];
	int rc;

	*events = NULL;
	if (!hs || !hs->ops || !hs->ops->load) {
		http_log("replay: no history source is wired");
		return model_error_set(err, MODEL_E_STORAGE, NULL, "history source unavailable");
	}
	why[0] = '\0';
	rc = hs->ops->load(hs->ctx, req->who.tenant_id, session_id, events, external_id,
	                   sizeof(external_id), why, sizeof(why));
	if (rc < 0) {
		http_log("replay: the %s history source is unavailable (%s)", hs->ops->name, why);
		return model_error_set(err, MODEL_E_STORAGE, NULL, "history source unavailable");
	}
	if (rc > 0 || !*events)
		return model_error_set(err, MODEL_E_NOT_FOUND, "session_id", "session not found");
	http_req_own(req, *events);
	return 0;
}

/*
 * POST /v1/m/sandbox/replays (briefs/api5.md): rebuild the session's
 * timeline and run it like a simulation (same policy, agent resolution,
 * dispatch and scoring: run_execute), with the recorded tool results as
 * mocks; then compare the outputs with the recorded ones. The digest is
 * dispatch's, over the ordered outputs: the same session, variant and
 * backend give the same digest.
 */
static int h_replay_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"session_id", "variant",     "backend",
	                                     "suite",      "scenario_id", NULL};
	struct model_timeline tl;
	struct run_job job;
	const char *requested, *session_id, *scenario_id;
	char why[512];
	json_t *v, *events = NULL, *out = NULL;
	enum store_rc rc;
	int ret = -1;

	memset(&job, 0, sizeof(job));
	memset(&tl, 0, sizeof(tl));
	job.kind = "replay";
	/* the whole body is checked and every id resolved before anything
	 * runs: a refused request writes nothing */
	if (only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "session_id");
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "session_id",
		                       "session_id is required (a session id)");
	session_id = json_string_value(v);
	v = json_object_get(req->json, "scenario_id");
	if (v && !json_is_null(v) && !json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario_id",
		                       "scenario_id must be a scenario id or null");
	scenario_id = json_string_value(v);
	if (parse_backend(json_object_get(req->json, "backend"), &requested, err) ||
	    parse_variant(req, json_object_get(req->json, "variant"), "variant", 0, &job.variant,
	                  err) ||
	    parse_suite(json_object_get(req->json, "suite"), 0, &job.suite, err))
		return -1;
	if (choose_backend(req, requested, &job.backend, err) ||
	    variant_agent(req, job.variant, job.backend, &job.agent, err))
		return -1;
	/* ids that are not well-formed name nothing: 404, as in paths */
	if (!model_id_valid(session_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "session_id", "session not found");
	if (scenario_id && !model_id_valid(scenario_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "scenario_id", "scenario not found");
	job.session_id = http_req_strdup(req, session_id);
	if (load_session(req, job.session_id, &events, err))
		return -1;
	if (scenario_id) {
		job.scenario_id = http_req_strdup(req, scenario_id);
		if (load_scenario(req, job.scenario_id, "scenario_id", &job.sc, err))
			return -1;
	}

	why[0] = '\0';
	if (model_timeline_rebuild(events, &tl, why, sizeof(why))) {
		replay_degraded(req, &job, why[0] ? why : "the history source gave no reason");
	} else {
		job.plan = http_req_own(req, json_pack("{s:O, s:o}", "steps", tl.steps, "mocks",
		                                       replay_mocks(tl.mocks, job.sc)));
		if (!job.plan) {
			model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the replay");
			goto out;
		}
		if (run_execute(req, &job, err))
			goto out;
		job.run.divergence =
		    http_req_own(req, model_replay_divergence(tl.recorded, job.run.outputs));
	}
	rc = store_run_record(req->store, req->who.tenant_id, req->who.token_id, &job.run, &out);
	if (rc) {
		http_store_fail(req, rc, "replay record", err);
		goto out;
	}
	http_reply_json(req, 201, http_req_own(req, out));
	ret = 0;
out:
	model_timeline_clear(&tl);
	run_job_free(&job);
	return ret;
}

/* ---- GET /v1/m/sandbox/backends -------------------------------------------------- */

/* The pool's answer of backend i when its check started under
 * PREFLIGHT_CACHE_MS ago, else a new one from the runner, recorded for the
 * pool with the time it started (fcgi/run/preflight_cache.h: the newest check
 * wins, whichever worker ends it last). */
static void preflight(const struct http_config *cfg, size_t i, const char *name,
                      struct http_preflight *pf)
{
	long long at_ms, started;

	started = http_preflight_cache_now_ms();
	if (http_preflight_cache_get(i, pf, &at_ms) == 0 && started - at_ms < PREFLIGHT_CACHE_MS)
		return;
	if (http_dispatch_preflight(cfg->runner_path, name, cfg->gvisor_platform,
	                            PREFLIGHT_TIMEOUT_MS, pf))
		http_log("preflight of %s: no answer from the runner (%s)", name, pf->reason);
	http_preflight_cache_put(i, pf, started);
}

/* The pool's newest preflight answer for backend i, whatever its age, as
 * {"ok","reason","age_s"} (whole seconds since its check started), or JSON
 * null when it has none: nothing is started. */
static json_t *preflight_cached(size_t i)
{
	struct http_preflight pf;
	long long at_ms, age;

	if (http_preflight_cache_get(i, &pf, &at_ms))
		return json_null();
	age = (http_preflight_cache_now_ms() - at_ms) / 1000;
	return json_pack("{s:b, s:o, s:I}", "ok", pf.ok, "reason",
	                 pf.ok ? json_null() : json_string(pf.reason), "age_s",
	                 (json_int_t)(age < 0 ? 0 : age));
}

static int h_backends(struct http_request *req, struct model_error *err)
{
	enum { PF_RUN, PF_NONE, PF_CACHED } mode = PF_RUN;
	struct http_preflight pf;
	const char *allowed, *def, *name, *want;
	json_t *list, *item, *checked;
	size_t i;

	/* ?preflight=false: the tenant's policy only, without starting a
	 * runner per backend; ?preflight=cached: with the pool's last
	 * answers, still without starting one (what the admin view's forms
	 * need: a page view must not cost a gVisor sandbox) */
	want = http_query_get(req, "preflight");
	if (want && strcmp(want, "false") == 0)
		mode = PF_NONE;
	else if (want && strcmp(want, "cached") == 0)
		mode = PF_CACHED;
	else if (want && strcmp(want, "true") != 0)
		return model_error_set(err, MODEL_E_MALFORMED, "preflight",
		                       "preflight must be true, false or cached");
	if (tenant_policy(req, &allowed, &def, err))
		return -1;
	list = http_req_own(req, json_array());
	for (i = 0; http_config_known_backends[i]; i++) {
		name = http_config_known_backends[i];
		checked = json_null();
		if (mode == PF_RUN) {
			preflight(req->cfg, i, name, &pf);
			checked = json_pack("{s:b, s:o}", "ok", pf.ok, "reason",
			                    pf.ok ? json_null() : json_string(pf.reason));
		} else if (mode == PF_CACHED) {
			checked = preflight_cached(i);
		}
		item = json_pack("{s:s, s:b, s:b, s:o}", "name", name, "allowed",
		                 http_config_list_has(allowed, name), "default",
		                 strcmp(def, name) == 0, "preflight", checked);
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
	static const char *const kinds[] = {"simulation", "replay", "comparison", NULL};
	struct store_run_filter f;
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (list_window(req, &limit, &offset, err))
		return -1;
	memset(&f, 0, sizeof(f));
	f.scenario_id = http_query_get(req, "scenario");
	if (f.scenario_id && !model_id_valid(f.scenario_id))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario",
		                       "scenario must be a scenario id");
	f.status = http_query_get(req, "status");
	if (f.status && !one_of(f.status, statuses))
		return model_error_set(err, MODEL_E_MALFORMED, "status",
		                       "status must be running, completed, failed or degraded");
	f.kind = http_query_get(req, "kind");
	if (f.kind && !one_of(f.kind, kinds))
		return model_error_set(err, MODEL_E_MALFORMED, "kind",
		                       "kind must be simulation, replay or comparison");
	f.session_id = http_query_get(req, "session");
	if (f.session_id && !model_id_valid(f.session_id))
		return model_error_set(err, MODEL_E_MALFORMED, "session",
		                       "session must be a session id");
	rc = store_run_list_filtered(req->store, req->who.tenant_id, &f, limit, offset, &out);
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

/* GET /v1/m/sandbox/runs/{id}/junit: the run as JUnit XML (fcgi/export/junit.h). */
static int h_run_junit(struct http_request *req, struct model_error *err)
{
	json_t *run = NULL, *outputs = NULL;
	enum store_rc rc;
	char *xml = NULL;
	size_t len = 0;

	rc = store_run_get(req->store, req->who.tenant_id, req->params[0], &run);
	if (rc)
		return http_store_fail(req, rc, "run get (junit)", err);
	http_req_own(req, run);
	rc = store_run_outputs(req->store, req->who.tenant_id, req->params[0], &outputs);
	if (rc)
		return http_store_fail(req, rc, "run outputs (junit)", err);
	http_req_own(req, outputs);
	if (http_junit_render(run, json_object_get(outputs, "outputs"), &xml, &len))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot render the JUnit XML");
	http_reply_body(req, 200, "application/xml; charset=utf-8", xml, len);
	free(xml);
	return 0;
}

/* ---- GET /v1/m/sandbox/audit --------------------------------------------------- */

static int h_audit_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (http_query_int(req, "limit", AUDIT_LIMIT_DEFAULT, 1, LIST_LIMIT_MAX, &limit, err) ||
	    http_query_int(req, "offset", 0, 0, OFFSET_MAX, &offset, err))
		return -1;
	rc = store_audit_list_page(req->store, req->who.tenant_id, limit, offset, &out);
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
    {"GET", "/v1/m/sandbox/runs/{id}/junit", V, SB, NOB, h_run_junit},
    /* comparisons are append-only evidence: no PUT or DELETE route exists,
     * so the router answers 405 to both */
    {"POST", "/v1/m/sandbox/comparisons", A, SB, OBJ, h_comparison_create},
    {"GET", "/v1/m/sandbox/comparisons", V, SB, NOB, h_comparison_list},
    {"GET", "/v1/m/sandbox/comparisons/{id}", V, SB, NOB, h_comparison_get},
    /* sessions are append-only history (issue 5): no PUT or DELETE route
     * exists, so the router answers 405 to both */
    {"POST", "/v1/m/sandbox/sessions", E, SB, OBJ, h_session_create},
    {"GET", "/v1/m/sandbox/sessions", V, SB, NOB, h_session_list},
    {"GET", "/v1/m/sandbox/sessions/{id}", V, SB, NOB, h_session_get},
    {"POST", "/v1/m/sandbox/replays", E, SB, OBJ, h_replay_create},
    {"GET", "/v1/m/sandbox/backends", V, SB, NOB, h_backends},
    {"GET", "/v1/m/sandbox/audit", A, SB, NOB, h_audit_list},
};

const size_t http_routes_count = sizeof(http_routes) / sizeof(http_routes[0]);
