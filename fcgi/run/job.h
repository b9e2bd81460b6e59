#ifndef OLIVARES_FCGI_RUN_JOB_H
#define OLIVARES_FCGI_RUN_JOB_H
/**
 * One run, from the request that asks for it to the job the store
 * queues: what the request decides (the backend under the tenant's
 * policy, the agent program of the variant, the scenario), the run spec
 * an executor hands to the runner (model/runspec.h), and the reply. The
 * handlers of runs, comparisons and replays (fcgi/api/) all go through
 * here, so the three kinds of run are chosen and queued alike.
 *
 * A handler, in order: parse the body's fields (http_run_parse_*), choose
 * the backend (http_run_choose_backend), resolve the variant's agent
 * (http_run_variant_agent), load the scenario (http_run_load_scenario);
 * every refusal comes before anything is written. Then the run is queued
 * (http_run_submit: the job for an executor, olivares-executor, which
 * runs it; the worker never runs an agent) and the reply says where to
 * follow it, after waiting for its end as long as the client's Prefer:
 * wait=N asks (http_run_reply). A run that no live executor can run is
 * failed at once instead (http_run_fail_now), never left waiting.
 * http_run_job_free releases what the job holds.

 * Every function here is for a handler: it takes the request being served
 * (its tenant, its worker's configuration, scorer and history source, and
 * request-owned memory), and a failure returns -1 with *err filled for the
 * router to reply.
 */
#include <jansson.h>

#include "fcgi/http/http.h"
#include "model/agent.h"
#include "model/error.h"
#include "model/scorer.h"
#include "sql/store.h"

/**
 * One run to execute: what the request chose (filled by the handler), then
 * what happened (filled by http_run_execute or http_run_replay_degraded).
 * run is ready for the store once one of those returns; its strings point
 * into this struct, the request or res, so the job lives until the run is
 * recorded. Zero it before use; release with http_run_job_free.
 */
struct http_run_job {
	const char *kind;        /* "simulation" | "comparison" | "replay" */
	const char *scenario_id; /* request-owned; NULL for a replay without one */
	json_t *sc;              /* the stored scenario (request-owned), or NULL */
	json_t *plan;            /* {"steps","mocks"} to run (request-owned);
	                          * NULL: the scenario's own */
	json_t *recorded;        /* a replay's recorded outputs (request-owned), for
	                          * its divergence, else NULL */
	const char *session_id;  /* the session a replay replays, else NULL */
	const char *variant;     /* may be NULL */
	const char *backend;
	const char *agent;           /* may be NULL */
	const char *suite;           /* may be NULL: not scored, no reason added */
	int suite_version;           /* http_run_pin_suite: the store suite's
	                              * version; 0: an adapter's suite */
	int record;                  /* a simulation run recorded as a session
	                              * (model/record.h) */
	struct store_run_job queued; /* http_run_prepare: the run as queued (its
	                              * job object owned) */
	struct store_run run;        /* a run recorded at once (failed, degraded) */
	char started[25], finished[25];
	char nodigest[65];
	char mocks_digest[65]; /* http_run_prepare, recorded_at_once: SHA-256 of
	                        * model_mocks_for_variant of the plan */
	char reason[640];
};

/** How long the admin view's forms wait for the run they start (s). */
#define HTTP_RUN_VIEW_WAIT_SECONDS 10

/**
 * The agent program of variant (may be NULL): *agent gets the request-owned
 * canonical path of <agents_dir>/<variant> when the variant names a
 * regular file inside the agents directory that every user may read and
 * execute, NULL when it names none (a name a program cannot have, or no
 * such file: the built-in agent runs). Returns 0, or -1 with *err (422
 * invalid, field "variant") for a file that is there but may not run (a
 * symlink out of the directory, not executable, ...). The agents listing
 * applies the same rules to each entry.
 */
int http_run_resolve_agent(struct http_request *req, const char *variant, const char **agent,
                           struct model_error *err);

/**
 * The interpreter of agent program name at path, checked against the jail
 * of the configured [runner] binds (model/agent.h). reason (n bytes) gets
 * "" when it can run there, else the run's reason (model_interp_reason;
 * a "#!" line with no interpreter says so). ip (may be NULL) gets the
 * parsed line; *verdict (may be NULL) an enum model_interp_jail, or 2 for a
 * binary (no "#!" line); resolved (rn bytes, may be NULL) what env finds.
 * Returns 0, or -1 when the file cannot be read (reason "").
 */
int http_run_agent_interp(struct http_request *req, const char *name, const char *path,
                          char *reason, size_t n, struct model_interp *ip, int *verdict,
                          char *resolved, size_t rn);

/**
 * The backend policy of the caller's tenant (fcgi/config.h): the [tenant
 * NAME] section whose tenant is the caller's, else the [runner] pair.
 * *backends gets the allowed comma list and *def the default backend,
 * both borrowed from the configuration. The names of the sections are
 * resolved to ids through the store once per worker (a name whose tenant
 * does not exist yet is asked again next time). Returns 0, or -1 with
 * *err when the store fails (http_store_fail).
 */
int http_run_tenant_policy(struct http_request *req, const char **backends, const char **def,
                           struct model_error *err);

/**
 * The backend of a run into *backend (borrowed): requested (may be NULL:
 * the tenant's default) if the tenant's policy allows it, else -1 with
 * *err 422 invalid on field "backend": a name the runner does not know
 * (or an empty one) is said to be unknown, with the known ones; a known
 * one outside the policy, with the allowed ones.
 */
int http_run_choose_backend(struct http_request *req, const char *requested, const char **backend,
                            struct model_error *err);

/**
 * A variant given in a body member v named field: NULL or absent gives
 * *variant NULL when optional (runs, replays) and is refused (400) when
 * required (comparisons); otherwise a non-empty string of at most
 * MODEL_MAX_VARIANT_BYTES that does not look like a credential (422
 * otherwise), copied into request memory.
 */
int http_run_parse_variant(struct http_request *req, json_t *v, const char *field, int required,
                           const char **variant, struct model_error *err);

/**
 * The body's "suite" v: absent or null gives *suite NULL unless required
 * (400); else a name of model_suite_name_valid (model/scorer.h), 422
 * otherwise. *suite is borrowed from v.
 */
int http_run_parse_suite(json_t *v, int required, const char **suite, struct model_error *err);

/**
 * Pin the suite *suite (from http_run_parse_suite; NULL: nothing to do) at
 * queue time: when the tenant's store has it ("name" the latest, "name@N"
 * version N), *suite becomes the bare name (request-owned) and *version
 * its version, which the executor scores against. A bare name the store
 * does not have is left for the configured scorer adapter (*version 0);
 * with no adapter configured, or a version the store does not have, 422
 * on field "suite" and nothing is queued.
 */
int http_run_pin_suite(struct http_request *req, const char **suite, int *version,
                       struct model_error *err);

/** The body's "backend" v: absent gives *backend NULL (the tenant's
 * default), else a string (borrowed from v); 400 for another type. */
int http_run_parse_backend(json_t *v, const char **backend, struct model_error *err);

/**
 * The agent program of variant on backend into *agent: a request-owned
 * absolute path when variant names a program in [runner] agents_dir, NULL
 * when it names none. A variant matching [A-Za-z0-9][A-Za-z0-9._-]{0,63}
 * names <agents_dir>/<variant> when that file exists; it must resolve
 * (realpath) inside the agents directory to a regular file that every
 * user may read and execute (the backends run it as an unprivileged
 * user), else 422 invalid on "variant". A program on inproc-mock, which
 * cannot run programs, is refused with 422 on "backend".
 *
 * This is an application check, not a kernel boundary: the file can
 * change between this check and the runner's exec. Isolation never relies
 * on it: whatever the path names runs inside the backend's jail.
 */
int http_run_variant_agent(struct http_request *req, const char *variant, const char *backend,
                           const char **agent, struct model_error *err);

/**
 * The caller's stored scenario id into *sc (request-owned), checked to
 * have the fields a run needs (steps, digest: 500 otherwise). field: the
 * body's member that named it ("scenario_id"), named by a 404 "scenario
 * not found", or NULL when the path named it (the store's 404).
 */
int http_run_load_scenario(struct http_request *req, const char *id, const char *field, json_t **sc,
                           struct model_error *err);

/**
 * Fill job->queued for store_run_enqueue: the run spec (model/runspec.h:
 * steps, mocks, variant, agent, limits, binds; nothing else) of job->plan
 * or job->sc, in the job object {"spec", "recorded"?} the executor runs
 * (owned by the job), and the run's identity. -1 (500) when the spec
 * cannot be built.
 */
int http_run_prepare(struct http_request *req, struct http_run_job *job, struct model_error *err);

/**
 * Whether a live executor offers backend (store_executor_offers with
 * [executor] lease_seconds): 0 yes; 1 no, with why (n bytes) the reason
 * a run fails with; -1 with *err when the store fails.
 */
int http_run_offered(struct http_request *req, const char *backend, char *why, size_t n,
                     struct model_error *err);

/** Fill job->run for a run that fails now, before any executor has it:
 * status "failed", reason why, runner "none", no step, not isolated. */
void http_run_fail_now(struct http_run_job *job, const char *why);

/** The caller's tenant's max_active_runs (its [tenant NAME] section's,
 * else [runner]'s) into *max. */
int http_run_max_active(struct http_request *req, int *max, struct model_error *err);

/** The 429 of a tenant at its limit max, for a request of runs runs. */
int http_run_limit_error(int max, int runs, struct model_error *err);

/**
 * Refuse a write of the caller's tenant that would pass its storage quota
 * (max_stored_mb: its [tenant NAME] section's, else [server]'s; 0 for
 * none, and then nothing is counted): record is what the write stores
 * (its compact JSON text is counted), or NULL for a run, replay or
 * comparison, which stores its outputs later. A record is refused when
 * the tenant's usage (store_tenant_usage) plus its bytes passes the
 * quota, a run when the usage is at or over it. 0 when the write may go
 * on; -1 with *err 507 quota_exceeded (the figures in the message and in
 * used_bytes, limit_bytes, request_bytes), or 503 when the usage cannot
 * be read.
 */
int http_quota_check(struct http_request *req, json_t *record, struct model_error *err);

/** The wait the request asks for with Prefer: wait=N (RFC 7240), in
 * seconds, cut to [server] wait_max_seconds; 0 when it asks none;
 * HTTP_RUN_VIEW_WAIT_SECONDS (or wait_max_seconds, when lower) for the
 * admin view's calls. */
int http_run_wait_seconds(struct http_request *req);

/**
 * Reply with rec, a run (comparison 0) or a comparison object just
 * recorded: after waiting up to wait seconds (reading it again from the
 * store) for its end (a terminal status; a comparison's "decided"), 201
 * with the record when it has ended, else 202 with its latest state; a
 * Location header names it, and Preference-Applied: wait=N says that a
 * wait was honoured.
 */
int http_run_reply(struct http_request *req, int comparison, json_t *rec, int wait,
                   struct model_error *err);

/**
 * Queue job (a simulation or a replay, its fields chosen): failed at once
 * (201) when no live executor offers its backend; else queued unless the
 * tenant is at max_active_runs (429), and replied by http_run_reply with
 * the request's wait. The Idempotency-Key's answer is the first reply.
 */
int http_run_submit(struct http_request *req, struct http_run_job *job, struct model_error *err);

/** Release what job holds (its queued job object); the job itself is the
 * caller's. */
void http_run_job_free(struct http_run_job *job);

/**
 * Load session_id of the caller's tenant through the worker's history
 * source (model/history.h) into *events (request-owned). 404 "session not
 * found" on field session_id when the tenant has no such session; 503
 * when no source is wired or the source cannot answer (logged with the
 * source's reason).
 */
int http_run_load_session(struct http_request *req, const char *session_id, json_t **events,
                          struct model_error *err);

/**
 * The mocks of a replay (a new array): the session's recorded results,
 * then the mocks of the scenario sc (may be NULL) whose resource has no
 * recorded result, and its mocks that have no resource (tool, http and
 * llm mocks: a session records no results of theirs). A recorded result wins on its resource, whatever the
 * variant of the scenario's mock, so no resource is ever answered twice
 * (the timeline's results are distinct per resource, the scenario's per
 * resource and variant).
 */
json_t *http_run_replay_mocks(json_t *recorded, json_t *sc);

/**
 * Fill job->run for a replay whose timeline cannot be rebuilt: it is
 * recorded, never fabricated, and nothing runs: status "degraded", no
 * step and no output, runner "none", the backend that would have run, not
 * isolated and not destroyed (no runner existed), the digest of no
 * output, and the reason "timeline cannot be rebuilt: <why>". A suite it
 * names is kept; it is not scored.
 */
void http_run_replay_degraded(struct http_request *req, struct http_run_job *job, const char *why);

#endif
