/*
 * One run from the request to the record (job.h): the backend policy, the
 * agent program of a variant, the run's fields of a body, the scenario,
 * the spec, the runner hand-off, the scoring, and the replay's own cases
 * (its history, its mocks, a timeline that cannot be rebuilt).
 */
#include "fcgi/run/job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/run/agent_file.h"
#include "model/agent.h"
#include "model/history.h"
#include "model/http_mock.h"
#include "model/limits.h"
#include "model/runspec.h"
#include "model/suite.h"
#include "model/scenario.h"
#include "model/text.h"

/* SHA-256 hex of nothing: the digest of a run with no outputs. */
static void empty_digest(char hex[65])
{
	http_sha256_hex("", 0, hex);
}

/* ---- backend policy and agents ------------------------------------------------ */

/* The [tenant NAME] section of the caller's tenant into *pol, NULL when
 * none applies. The ids of the sections are kept in the worker
 * (policy_tenant_ids): a tenant's id never changes, so a name is looked up
 * until its tenant exists, then never again. */
static int tenant_section(struct http_request *req, const struct http_tenant_policy **pol,
                          struct model_error *err)
{
	const struct http_config *cfg = req->cfg;
	struct http_worker *w = req->worker;
	char id[33];
	enum store_rc rc;
	int i;

	*pol = NULL;
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
			*pol = &cfg->tenants[i];
			return 0;
		}
	}
	return 0;
}

int http_run_tenant_policy(struct http_request *req, const char **backends, const char **def,
                           struct model_error *err)
{
	const struct http_tenant_policy *pol;

	http_config_policy(req->cfg, NULL, backends, def);
	if (tenant_section(req, &pol, err))
		return -1;
	if (pol) {
		*backends = pol->backends;
		*def = pol->default_backend;
	}
	return 0;
}

/* The tenant's egress hosts and secrets file (http_config_egress,
 * http_config_egress_secrets): its section's, or [runner]'s. 0, or -1
 * with *err. */
static int tenant_egress(struct http_request *req, const char **egress, const char **secrets,
                         struct model_error *err)
{
	const struct http_tenant_policy *pol;

	*egress = req->cfg->egress_allow;
	*secrets = req->cfg->egress_secrets;
	if (tenant_section(req, &pol, err))
		return -1;
	if (pol) {
		*egress = pol->egress_allow;
		*secrets = pol->egress_secrets;
	}
	return 0;
}

int http_run_choose_backend(struct http_request *req, const char *requested, const char **backend,
                            struct model_error *err)
{
	const char *allowed, *def;
	char shown[72];
	char list[320];
	size_t i, j;

	if (http_run_tenant_policy(req, &allowed, &def, err))
		return -1;
	if (!requested) {
		*backend = def;
		return 0;
	}
	if (http_config_list_has(allowed, requested)) {
		*backend = requested;
		return 0;
	}
	http_printable(shown, sizeof(shown), requested);
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

/*
 * http_run_resolve_agent (job.h). The agent program of variant: the file
 * <agents_dir>/<variant> when it exists, canonicalised with realpath and
 * required to lie inside realpath(agents_dir) and to be a regular
 * executable file that every
 * user may read and execute (the backends run it as an unprivileged
 * user); *agent is then a request-owned absolute path. No such file (or a
 * variant that cannot name one): *agent is NULL. Anything else (a symlink
 * out of the directory, a dangling one, a directory, a file that is not
 * executable) is refused with 422 invalid.
 *
 * Names that map to files are resolved under their root, canonicalised,
 * with ".." and symlink escapes refused; that is an application check,
 * not a kernel boundary: the file can change between this check and the
 * runner's exec. Isolation never relies on it: whatever the path names
 * runs inside the backend's jail, which is the boundary.
 */
int http_run_resolve_agent(struct http_request *req, const char *variant, const char **agent,
                           struct model_error *err)
{
	char path[PATH_MAX];
	char *real = NULL, *root = NULL;
	struct stat sb;
	size_t rl;
	int ret = -1;

	*agent = NULL;
	if (!variant || !model_agent_name_ok(variant))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", req->cfg->agents_dir, variant) >=
	    sizeof(path))
		return 0;
	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		http_log_error("agents directory: cannot look up a variant: %s", strerror(errno));
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

/* ---- the run's fields of a body and its scenario ------------------------------ */

int http_run_parse_variant(struct http_request *req, json_t *v, const char *field, int required,
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

int http_run_parse_suite(json_t *v, int required, const char **suite, struct model_error *err)
{
	char name[MODEL_MAX_SUITE_NAME_BYTES + 1];
	int version;

	*suite = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		return model_error_set(err, MODEL_E_MALFORMED, "suite", "suite is required");
	}
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "suite", "suite must be a string");
	if (model_suite_ref_parse(json_string_value(v), name, sizeof(name), &version))
		return model_error_set(err, MODEL_E_INVALID, "suite",
		                       "suite must be 1..128 characters of [A-Za-z0-9._-], "
		                       "starting with a letter or digit, optionally followed by "
		                       "@VERSION");
	*suite = json_string_value(v);
	return 0;
}

int http_run_pin_suite(struct http_request *req, const char **suite, int *version,
                       struct model_error *err)
{
	char name[MODEL_MAX_SUITE_NAME_BYTES + 1];
	json_t *doc = NULL;
	enum store_rc rc;
	int asked;

	*version = 0;
	if (!*suite)
		return 0;
	if (model_suite_ref_parse(*suite, name, sizeof(name), &asked))
		return model_error_set(err, MODEL_E_INVALID, "suite", "suite is not a suite name");
	rc = store_suite_get(req->store, req->who.tenant_id, name, asked, &doc);
	if (rc == STORE_OK) {
		*version = (int)json_integer_value(json_object_get(doc, "version"));
		json_decref(doc);
		*suite = http_req_strdup(req, name);
		return 0;
	}
	if (rc != STORE_NOT_FOUND)
		return http_store_fail(req, rc, "suite get", err);
	/* not in the store: a name the operator's adapter may know, when one
	 * is configured; a version is only ever the store's */
	if (asked == 0 && req->cfg->scorer[0] && strcmp(req->cfg->scorer, "none") != 0)
		return 0;
	if (asked)
		return model_error_set(err, MODEL_E_INVALID, "suite",
		                       "suite %s has no version %d in the store", name, asked);
	return model_error_set(err, MODEL_E_INVALID, "suite",
	                       "suite %s is not in the store (POST /v1/m/sandbox/suites creates "
	                       "it) and no scorer adapter is configured",
	                       name);
}

int http_run_parse_backend(json_t *v, const char **backend, struct model_error *err)
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

/* resolve_agent, then the one combination that cannot run: a program on
 * inproc-mock. */
int http_run_variant_agent(struct http_request *req, const char *variant, const char *backend,
                           const char **agent, struct model_error *err)
{
	char reason[MODEL_REASON_BYTES];

	if (http_run_resolve_agent(req, variant, agent, err))
		return -1;
	if (*agent && strcmp(backend, MODEL_BACKEND_INPROC_MOCK) == 0)
		return model_error_set(err, MODEL_E_INVALID, "backend",
		                       "variant %s runs agent program %s from the agents "
		                       "directory; backend inproc-mock cannot run programs; "
		                       "choose an OS-level backend",
		                       variant, variant);
	/* refused early when its interpreter cannot run in the jail; the
	 * runner checks it again before the exec, on the file as it is then */
	if (*agent &&
	    http_run_agent_interp(req, variant, *agent, reason, sizeof(reason), NULL, NULL, NULL,
	                          0) == 0 &&
	    reason[0])
		return model_error_set(err, MODEL_E_INVALID, "variant", "%s", reason);
	return 0;
}

int http_run_agent_interp(struct http_request *req, const char *name, const char *path,
                          char *reason, size_t n, struct model_interp *ip, int *verdict,
                          char *resolved, size_t rn)
{
	char head[MODEL_AGENT_HEAD_BYTES];
	struct model_interp local;
	json_t *binds = binds_array(req->cfg->binds);
	ssize_t got;
	int fd, v, parsed;

	if (!ip)
		ip = &local;
	reason[0] = '\0';
	/* "" unless a #! line's interpreter is resolved below (a binary has
	 * none: read uninitialised, it listed garbage) */
	if (resolved && rn)
		resolved[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		json_decref(binds);
		return -1;
	}
	got = read(fd, head, sizeof(head));
	close(fd);
	parsed = got < 0 ? -1 : model_interp_parse(head, (size_t)got, ip);
	if (parsed <= 0) {
		/* a binary (no "#!"), or a line the kernel would refuse */
		if (verdict)
			*verdict = parsed == 0 ? 2 : MODEL_INTERP_MISSING;
		json_decref(binds);
		if (parsed < 0)
			snprintf(reason, n,
			         "agent program %s: its \"#!\" line names no interpreter", name);
		return 0;
	}
	v = model_interp_in_jail(ip, binds, http_agent_probe, NULL, resolved, rn);
	json_decref(binds);
	if (verdict)
		*verdict = v;
	model_interp_reason(name, ip, v, reason, n);
	return 0;
}

int http_run_load_scenario(struct http_request *req, const char *id, const char *field, json_t **sc,
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

/* ---- spec, execution and scoring ------------------------------------------------ */

/* The run spec (model/runspec.h): steps, mocks, variant, agent, limits,
 * binds, and the tenant's egress hosts when it has any, with the path of
 * its secrets file when it has one (the path only: the spec is stored).
 * Nothing else: no id, tenant or token. */
static json_t *run_spec(struct http_request *req, json_t *sc, const char *variant,
                        const char *agent, const char *egress, const char *secrets)
{
	const struct http_config *cfg = req->cfg;
	json_t *mocks = json_object_get(sc, "mocks");
	json_t *spec;

	if (!json_is_array(mocks))
		mocks = http_req_own(req, json_array());
	spec = json_pack("{s:s?, s:O, s:O, s:o, s:{s:i, s:I, s:I, s:I, s:I, s:I}, s:o}", "variant",
	                 variant, "steps", json_object_get(sc, "steps"), "mocks", mocks, "agent",
	                 agent ? json_string(agent) : json_null(), "limits", "wall_ms",
	                 cfg->run_timeout_ms, "cpu_seconds", (json_int_t)cfg->limits.cpu_seconds,
	                 "memory_mb", (json_int_t)cfg->limits.memory_mb, "processes",
	                 (json_int_t)cfg->limits.processes, "open_files",
	                 (json_int_t)cfg->limits.open_files, "tmpfs_mb",
	                 (json_int_t)cfg->limits.tmpfs_mb, "binds", binds_array(cfg->binds));
	if (spec && egress && egress[0])
		json_object_set_new(spec, "egress_allow", binds_array(egress));
	if (spec && egress && egress[0] && secrets && secrets[0])
		json_object_set_new(spec, "egress_secrets", json_string(secrets));
	return spec;
}

void http_run_job_free(struct http_run_job *job)
{
	json_decref(job->queued.job);
	job->queued.job = NULL;
}

/* The agent name a run records: the program's name in the agents
 * directory (its variant) when the variant names one, else the built-in
 * one of its backend. */
static const char *agent_name(const struct http_run_job *job)
{
	if (job->agent)
		return job->variant;
	if (job->backend && strcmp(job->backend, MODEL_BACKEND_INPROC_MOCK) == 0)
		return MODEL_AGENT_BUILTIN_INPROC;
	return MODEL_AGENT_BUILTIN_MOCK;
}

/* job->mocks_digest: SHA-256 of the compact JSON of the mocks the run's
 * variant sees, so that two runs that see the same mocks have the same
 * digest whatever their variants. */
static void mocks_digest(struct http_run_job *job)
{
	json_t *plan = job->plan ? job->plan : job->sc;
	json_t *seen = model_mocks_for_variant(json_object_get(plan, "mocks"), job->variant);
	char *text = seen ? json_dumps(seen, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	/* out of memory: the one policy (model/alloc.h) is to abort */
	if (!text)
		abort();
	http_sha256_hex(text, strlen(text), job->mocks_digest);
	free(text);
	json_decref(seen);
}

/* What a run is of, whatever happens to it: kind, scenario (id, version,
 * digest; none for a replay without a scenario), variant, session, agent
 * name and mocks. */
static void run_identity(struct http_run_job *job)
{
	struct store_run *run = &job->run;

	mocks_digest(job);
	run->agent_name = agent_name(job);
	run->mocks_digest = job->mocks_digest;

	run->kind = job->kind;
	run->scenario_id = job->scenario_id;
	run->scenario_version =
	    job->sc ? (int)json_integer_value(json_object_get(job->sc, "version")) : 0;
	run->scenario_digest =
	    job->sc ? json_string_value(json_object_get(job->sc, "digest")) : NULL;
	run->variant = job->variant;
	run->session_id = job->session_id;
}

int http_run_prepare(struct http_request *req, struct http_run_job *job, struct model_error *err)
{
	struct store_run_job *q = &job->queued;
	json_t *plan = job->plan ? job->plan : job->sc;
	const char *egress, *secrets;
	json_t *spec;

	memset(q, 0, sizeof(*q));
	if (tenant_egress(req, &egress, &secrets, err))
		return -1;
	/* a replay's hermetic by its nature: no egress, whatever the policy */
	if (job->session_id) {
		egress = "";
		secrets = "";
	}
	spec = run_spec(req, plan, job->variant, job->agent, egress, secrets);
	if (!spec)
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the run spec");
	if (job->record)
		json_object_set_new(spec, "record", json_true());
	q->job = json_pack("{s:o}", "spec", spec);
	if (!q->job || (job->recorded && json_object_set(q->job, "recorded", job->recorded)))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the run's job");
	q->kind = job->kind;
	q->scenario_id = job->scenario_id;
	q->scenario_version =
	    job->sc ? (int)json_integer_value(json_object_get(job->sc, "version")) : 0;
	q->scenario_digest = job->sc ? json_string_value(json_object_get(job->sc, "digest")) : NULL;
	q->variant = job->variant;
	q->backend = job->backend;
	q->suite = job->suite;
	q->suite_version = job->suite_version;
	q->session_id = job->session_id;
	q->steps_total = (int)json_array_size(json_object_get(plan, "steps"));
	mocks_digest(job);
	q->agent_name = agent_name(job);
	q->mocks_digest = job->mocks_digest;
	q->record = job->record;
	return 0;
}

int http_run_offered(struct http_request *req, const char *backend, char *why, size_t n,
                     struct model_error *err)
{
	enum store_rc rc;
	int offered = 0;

	why[0] = '\0';
	rc = store_executor_offers(req->store, backend, req->cfg->executor_lease_seconds, &offered,
	                           why, n);
	if (rc)
		return http_store_fail(req, rc, "executor offers", err);
	return offered ? 0 : 1;
}

/* Fill job->run for a run recorded at once, with nothing run: status,
 * job->reason (already written), runner "none", the backend that would
 * have run, not isolated, no output, the digest of none. */
static void recorded_at_once(struct http_run_job *job, const char *status)
{
	struct store_run *run = &job->run;

	http_now_iso(job->started);
	memcpy(job->finished, job->started, sizeof(job->finished));
	empty_digest(job->nodigest);
	memset(run, 0, sizeof(*run));
	run_identity(job);
	run->status = status;
	run->runner = "none";
	run->backend = job->backend;
	run->suite = job->suite;
	run->suite_version = job->suite_version;
	run->reason = job->reason;
	run->output_digest = job->nodigest;
	run->started_at = job->started;
	run->finished_at = job->finished;
	run->record = job->record;
	run->record_error = job->record ? "the run did not run: nothing to record" : NULL;
}

void http_run_fail_now(struct http_run_job *job, const char *why)
{
	snprintf(job->reason, sizeof(job->reason), "%s", why);
	recorded_at_once(job, "failed");
}

int http_run_max_active(struct http_request *req, int *max, struct model_error *err)
{
	const struct http_tenant_policy *pol;

	*max = req->cfg->max_active_runs;
	if (tenant_section(req, &pol, err))
		return -1;
	if (pol && pol->max_active_runs)
		*max = pol->max_active_runs;
	return 0;
}

int http_run_limit_error(int max, int runs, struct model_error *err)
{
	/* the store refuses the runs that would take the tenant over max: a
	 * single run when the tenant is at max, a comparison's two already
	 * when it is one below, so only the first may say it has max */
	if (runs == 1)
		return model_error_set(
		    err, MODEL_E_BUSY, NULL,
		    "the tenant has as many runs queued or running as its limit "
		    "allows (max_active_runs = %d): nothing was queued; try again "
		    "when one has ended",
		    max);
	return model_error_set(err, MODEL_E_BUSY, NULL,
	                       "a comparison (%d runs) would take the tenant over its limit of "
	                       "runs queued or running (max_active_runs = %d): nothing was "
	                       "queued; try again when one has ended",
	                       runs, max);
}

/* ---- storage quota ------------------------------------------------------------ */

int http_quota_check(struct http_request *req, json_t *record, struct model_error *err)
{
	const struct http_tenant_policy *pol;
	struct store_usage u;
	long long limit, adds = 0;
	enum store_rc rc;
	int mb;

	if (tenant_section(req, &pol, err))
		return -1;
	mb = pol ? pol->max_stored_mb : req->cfg->max_stored_mb;
	if (mb <= 0)
		return 0;
	limit = (long long)mb * 1048576LL;
	if (record)
		adds = (long long)json_dumpb(record, NULL, 0, JSON_COMPACT);
	rc = store_tenant_usage(req->store, req->who.tenant_id, &u);
	if (rc)
		return http_store_fail(req, rc, "tenant usage", err);
	if (record ? u.total + adds <= limit : u.total < limit) {
		/* the figure above was read before the write: the write's own
		 * transaction sums again before its commit, so concurrent
		 * creates cannot all pass on the same figure */
		if (record) {
			req->quota_mb = mb;
			req->quota_adds = adds;
			store_quota_guard(req->store, req->who.tenant_id, limit);
		}
		return 0;
	}
	return http_quota_refuse(req, &u, limit, mb, record ? adds : -1, err);
}

/* ---- Prefer: wait=N and the reply -------------------------------------------- */

int http_run_wait_seconds(struct http_request *req)
{
	const char *h, *p;
	char *end;
	long n;

	/* the admin view's forms wait a little, so the page they lead to
	 * shows the finished run when it is quick */
	if (req->internal)
		return HTTP_RUN_VIEW_WAIT_SECONDS < req->cfg->wait_max_seconds
		           ? HTTP_RUN_VIEW_WAIT_SECONDS
		           : req->cfg->wait_max_seconds;
	h = req->fcgx ? FCGX_GetParam("HTTP_PREFER", req->fcgx->envp) : NULL;
	for (p = h; p && *p; p++) {
		/* a preference is a token at the start or after a comma or a
		 * semicolon (RFC 7240), compared case-insensitively */
		if (p != h && p[-1] != ',' && p[-1] != ';' && p[-1] != ' ' && p[-1] != '\t')
			continue;
		if (strncasecmp(p, "wait=", 5) != 0)
			continue;
		n = strtol(p + 5, &end, 10);
		if (end == p + 5 || n < 0)
			return 0;
		return n > req->cfg->wait_max_seconds ? req->cfg->wait_max_seconds : (int)n;
	}
	return 0;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

static int terminal_run(json_t *run)
{
	const char *st = json_string_value(json_object_get(run, "status"));

	return st && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

static int decided(json_t *cmp)
{
	const char *st = json_string_value(json_object_get(cmp, "status"));

	return st && strcmp(st, "pending") != 0;
}

int http_run_reply(struct http_request *req, int comparison, json_t *rec, int wait,
                   struct model_error *err)
{
	char headers[160];
	struct timespec pause = {0, 5000000};
	const char *id = json_string_value(json_object_get(rec, "id"));
	long long until;
	enum store_rc rc;
	json_t *now;
	int done = comparison ? decided(rec) : terminal_run(rec);

	if (!id || !model_id_valid(id))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "the record has no id");
	id = http_req_strdup(req, id);
	until = mono_ms() + (long long)wait * 1000LL;
	while (!done && wait > 0 && mono_ms() < until) {
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 100000000L)
			pause.tv_nsec *= 2;
		now = NULL;
		rc = comparison ? store_comparison_get(req->store, req->who.tenant_id, id, &now)
		                : store_run_get(req->store, req->who.tenant_id, id, &now);
		if (rc)
			return http_store_fail(
			    req, rc, comparison ? "comparison get (wait)" : "run get (wait)", err);
		rec = http_req_own(req, now);
		done = comparison ? decided(rec) : terminal_run(rec);
	}
	snprintf(headers, sizeof(headers), "Location: /v1/m/sandbox/%s/%s\r\n%s%.0d%s",
	         comparison ? "comparisons" : "runs", id,
	         wait > 0 ? "Preference-Applied: wait=" : "", wait, wait > 0 ? "\r\n" : "");
	return http_reply_json_hdr(req, done ? 201 : 202, headers, rec);
}

int http_run_submit(struct http_request *req, struct http_run_job *job, struct model_error *err)
{
	char why[MODEL_REASON_BYTES];
	json_t *out = NULL;
	enum store_rc rc;
	int max, offered;

	offered = http_run_offered(req, job->backend, why, sizeof(why), err);
	if (offered < 0)
		return -1;
	if (offered > 0) {
		/* no live executor can run it: it fails closed now, never
		 * waits for one and never goes to another backend */
		http_run_fail_now(job, why);
		rc = store_run_record_idem(req->store, req->who.tenant_id, req->who.token_id,
		                           &job->run, http_req_idem(req, 201), &out);
		if (rc)
			return http_store_fail(req, rc, "run record", err);
		return http_run_reply(req, 0, http_req_own(req, out), 0, err);
	}
	if (http_run_max_active(req, &max, err) || http_run_prepare(req, job, err))
		return -1;
	rc = store_run_enqueue(req->store, req->who.tenant_id, req->who.token_id, &job->queued, max,
	                       http_req_idem(req, 202), &out);
	if (rc == STORE_LIMIT)
		return http_run_limit_error(max, 1, err);
	if (rc)
		return http_store_fail(req, rc, "run enqueue", err);
	return http_run_reply(req, 0, http_req_own(req, out), http_run_wait_seconds(req), err);
}

/* ---- replays ----------------------------------------------------------------------- */

int http_run_load_session(struct http_request *req, const char *session_id, json_t **events,
                          struct model_error *err)
{
	const struct model_history_source *hs = req->worker->history;
	char external_id[MODEL_MAX_EXTERNAL_ID_BYTES + 1];
	struct model_reason why;
	int rc;

	*events = NULL;
	if (!hs || !hs->ops || !hs->ops->load) {
		http_log_error("replay: no history source is wired");
		return model_error_set(err, MODEL_E_STORAGE, NULL, "history source unavailable");
	}
	why.text[0] = '\0';
	rc = hs->ops->load(hs->ctx, req->who.tenant_id, session_id, events, external_id,
	                   sizeof(external_id), &why);
	if (rc < 0) {
		http_log_error("replay: the %s history source is unavailable (%s)", hs->ops->name,
		               why.text);
		return model_error_set(err, MODEL_E_STORAGE, NULL, "history source unavailable");
	}
	if (rc > 0 || !*events)
		return model_error_set(err, MODEL_E_NOT_FOUND, "session_id", "session not found");
	http_req_own(req, *events);
	return 0;
}

/* The key a recorded http exchange and a scenario's http mock share when
 * they answer the same requests: method and url. A new string. */
static char *http_mock_key(json_t *m)
{
	json_t *h = json_object_get(m, "http");
	char *key;

	if (asprintf(&key, "%s %s", json_string_value(json_object_get(h, "method")) ?: "",
	             json_string_value(json_object_get(h, "url")) ?: "") < 0)
		abort();
	return key;
}

json_t *http_run_replay_mocks(json_t *recorded, json_t *sc)
{
	json_t *all = json_array();
	json_t *seen = json_object();
	json_t *m;
	const char *res;
	char *key;
	size_t i;
	int chat = 0, found;

	json_array_foreach(recorded, i, m)
	{
		res = json_string_value(json_object_get(m, "resource"));
		if (res)
			json_object_set_new(seen, res, json_true());
		if (json_object_get(m, "http")) {
			key = http_mock_key(m);
			json_object_set_new(seen, key, json_true());
			free(key);
			chat |= model_http_is_chat_path(
			    json_string_value(json_object_get(json_object_get(m, "http"), "url")));
		}
		json_array_append(all, m);
	}
	json_array_foreach(json_object_get(sc, "mocks"), i, m)
	{
		/* tool mocks have no resource: a session records none of
		 * theirs, so the scenario's stand; a recorded exchange wins
		 * over the scenario's http mock of its method and url, and a
		 * recorded chat over its llm mocks (tried first otherwise) */
		res = json_string_value(json_object_get(m, "resource"));
		if (res && json_object_get(seen, res))
			continue;
		if (json_object_get(m, "llm") && chat)
			continue;
		if (json_object_get(m, "http")) {
			key = http_mock_key(m);
			found = json_object_get(seen, key) != NULL;
			free(key);
			if (found)
				continue;
		}
		json_array_append(all, m);
	}
	json_decref(seen);
	return all;
}

void http_run_replay_degraded(struct http_request *req, struct http_run_job *job, const char *why)
{
	snprintf(job->reason, sizeof(job->reason), "timeline cannot be rebuilt: %s", why);
	recorded_at_once(job, "degraded");
	job->run.outputs = http_req_own(req, json_array());
}
