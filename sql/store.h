#ifndef OLIVARES_SQL_STORE_H
#define OLIVARES_SQL_STORE_H
/**
 * The store: the only code that holds SQL (no other folder contains any;
 * the HTTP layer and the executor reach the database only through these
 * functions). Every statement is parameter-bound; every query on tenant
 * data is filtered by tenant_id.
 * Works on SQLite (libsqliteodbc, driver "SQLite3") and PostgreSQL
 * (odbc-postgresql, driver "PostgreSQL Unicode") through unixODBC.
 *
 * Ids are generated here (16 random bytes from OpenSSL as 32 lowercase hex)
 * and timestamps too (UTC "YYYY-MM-DDTHH:MM:SS.mmmZ"), so the same SQL runs
 * on both dialects. Booleans are SMALLINT 0/1 in the database and JSON true/
 * false in the objects returned. Reals (scores, tolerance, delta) keep 15
 * significant digits (DBL_DIG): libsqliteodbc reads them back as "%.15g"
 * text; PostgreSQL returns them exactly.
 *
 * Return codes: every function returns enum store_rc. STORE_OK is 0, so
 * `if (rc)` tests for failure. "database is locked" is retried internally
 * (bounded) and then reported as STORE_UNAVAILABLE, never as success.
 *
 * Objects returned as json_t* are new references owned by the caller.
 * A struct store is used by one thread at a time (one per FastCGI worker).
 */
#include <jansson.h>
#include <stddef.h>

enum store_rc {
	STORE_OK = 0,
	STORE_NOT_FOUND,   /* no such row for this tenant (or another tenant's) */
	STORE_CONFLICT,    /* unique constraint (e.g. tenant name taken) */
	STORE_UNAVAILABLE, /* connection lost, locked past retries, migration missing */
	STORE_ERROR,       /* anything else; details in store_last_error */
	STORE_LIMIT,       /* over a tenant's limit (max_active_runs); nothing written */
	STORE_QUOTA,       /* the write would pass the tenant's storage quota (store_quota_guard);
	                    * nothing written */
};

enum store_role { STORE_ROLE_VIEWER = 1, STORE_ROLE_EDITOR = 2, STORE_ROLE_ADMIN = 3 };

struct store;

/**
 * Connect with an ODBC connection string (e.g. "Driver=SQLite3;Database=
 * /var/olivares/olivares.db;Timeout=5000;JournalMode=WAL;SyncPragma=NORMAL;
 * FKSupport=1"). The dialect is detected from the driver. On failure
 * returns STORE_UNAVAILABLE and *out is NULL; store_last_error(NULL) gives
 * the reason.
 * SQLite: a "Database=" file that does not exist is created mode 0600
 * whatever the umask (its -wal and -shm follow: SQLite gives them the
 * database file's mode), and so is the file a symbolic link there points
 * to when that does not exist yet; an existing file keeps its mode; with NoCreat=1
 * nothing is created (the driver then fails). The directory must exist.
 * (On every connection, reconnections included.)
 */
enum store_rc store_open(const char *dsn, struct store **out);
/** Roll back what is open, disconnect and free st (its prepared statements
 * too). NULL is a no-op. */
void store_close(struct store *st);

/**
 * Drop the connection and connect again with the same connection string.
 * Not needed in normal use: after a lost connection (the call that noticed
 * it returned STORE_UNAVAILABLE) the next call on st reconnects by itself,
 * once; a write that was in flight is never replayed. Returns STORE_OK or
 * STORE_UNAVAILABLE (store_last_error(st) says why).
 */
enum store_rc store_reconnect(struct store *st);

/**
 * The SQLite file named by "Database=" in dsn when its "Driver=" is an
 * SQLite one (keys case-insensitive), copied into out (n bytes). Returns 1,
 * or 0 (out "") when the DSN is not SQLite, names no file or the name does
 * not fit.
 */
int store_sqlite_file(const char *dsn, char *out, size_t n);

/** "sqlite" or "postgres": the dialect detected at connection time
 * (SQLGetInfo SQL_DBMS_NAME). Static storage. */
const char *store_dialect(const struct store *st);

/** Last error text of this connection (or of the last failed store_open when
 * st is NULL). Never contains bound parameter values. Static storage. */
const char *store_last_error(const struct store *st);

/** Apply every migration not yet applied (table schema_migrations), each in
 * its own transaction. *applied (may be NULL) receives how many ran. */
enum store_rc store_migrate(struct store *st, int *applied);
/** STORE_OK if every migration is applied, STORE_UNAVAILABLE otherwise. */
enum store_rc store_check_schema(struct store *st);

/* ---- tenants and tokens ---------------------------------------------- */

/** Create a tenant named name (1..128 bytes, unique). id_out gets its id. */
enum store_rc store_tenant_create(struct store *st, const char *name, char id_out[33]);
/** Find a tenant by name. */
enum store_rc store_tenant_find(struct store *st, const char *name, char id_out[33]);
/** {"tenants":[{"id","name","created_at"}]} ordered by name (operator
 * tool only: tenants are not tenant data). */
enum store_rc store_tenant_list(struct store *st, json_t **out);

/* ---- storage usage (usage.c) ------------------------------------------- */

/** What one tenant stores, in bytes of text (UTF-8 bytes on both
 * dialects), as a storage quota counts it: its scenarios as they are
 * now (name, description, steps, mocks), its runs' outputs (key,
 * input, output, trace), its runs' logs, its sessions (external id,
 * events) and every version of its suites. runs is the number of its
 * runs (any status), not bytes. */
struct store_usage {
	long long scenarios, outputs, logs, sessions, suites;
	long long total; /* the five sums */
	long long runs;
};

/**
 * Fill *u with the usage of tenant_id (one read; zeroed first).
 * STORE_NOT_FOUND (u zeroed) for a NULL or malformed id; an id without
 * rows has every figure 0.
 */
enum store_rc store_tenant_usage(struct store *st, const char *tenant_id, struct store_usage *u);

/**
 * Make the next write transaction of st (the next store_tx call) hold
 * tenant_id's storage quota: just before its commit, with the tenant's
 * row held (so concurrent guarded writes of the tenant commit one after
 * the other and each sums what the previous ones committed), the
 * tenant's usage is summed again inside the transaction, and when it
 * passes limit_bytes the transaction is rolled back and the call returns
 * STORE_QUOTA (nothing written). A check made before the write alone
 * lets concurrent creates all pass it. The guard is used by one write
 * call and then cleared; tenant_id is copied. A NULL or malformed
 * tenant_id, or limit_bytes <= 0, clears it.
 */
void store_quota_guard(struct store *st, const char *tenant_id, long long limit_bytes);

/** Store a token: only its SHA-256 hex digest (64 chars) is kept, with the
 * role and a label. id_out gets the token's id (not secret). With actor
 * (not NULL), the audit event "token.create" {"token_id","role"} by actor
 * is appended in the same transaction: the token exists only if its
 * event does. */
enum store_rc store_token_create(struct store *st, const char *tenant_id, enum store_role role,
                                 const char *sha256_hex, const char *label, const char *actor,
                                 char id_out[33]);

/**
 * A token's scopes, a bitmask: 0 (no scopes, every token made without
 * them) means "what the role allows"; any other value also limits the token
 * to the routes whose scope it holds (the route table names one per route).
 */
enum store_scope {
	STORE_SCOPE_READ = 1,
	STORE_SCOPE_RUN = 2,
	STORE_SCOPE_COMPARE = 4,
	STORE_SCOPE_WRITE = 8,
	STORE_SCOPE_APPROVE = 16,
	STORE_SCOPE_ADMIN = 32
};
#define STORE_SCOPE_ALL 63u

/** store_token_create with scopes (a mask of enum store_scope, 0 for
 *  none); the "token.create" event's detail also lists them as
 *  "scopes":[names]. STORE_ERROR for a mask outside STORE_SCOPE_ALL. */
enum store_rc store_token_create_scoped(struct store *st, const char *tenant_id,
                                        enum store_role role, unsigned scopes,
                                        const char *sha256_hex, const char *label,
                                        const char *actor, char id_out[33]);

/** The name of one scope bit ("read", "run", "compare", "write",
 *  "approve", "admin"), NULL for anything else. */
const char *store_scope_name(unsigned bit);

/** Parse a comma-separated list of scope names ("compare,read") into
 *  *mask: 0, or -1 (with *bad pointing at the first unknown or empty
 *  name, *mask 0) when a name is not one of the six. */
int store_scopes_parse(const char *list, unsigned *mask, const char **bad);

/** The names of mask in the fixed order read, run, compare, write,
 *  approve, admin, joined by sep into out (size n, always terminated);
 *  "" for 0; a name that does not fit is left out with the rest. */
void store_scopes_format(unsigned mask, const char *sep, char *out, size_t n);

struct store_principal {
	char tenant_id[33];
	char token_id[33];
	enum store_role role;
	unsigned scopes;     /* enum store_scope mask; 0: the role decides */
	char sha256_hex[65]; /* as stored, for the caller's constant-time compare */
};

/** {"tokens":[{"id","role":"viewer"|"editor"|"admin","label","created_at",
 *  "revoked":bool,"scopes":[names]}]} of tenant_id, oldest first (operator tool only; the
 *  digests are never returned). */
enum store_rc store_token_list(struct store *st, const char *tenant_id, json_t **out);

/**
 * Revoke the token token_id of tenant_id: it stops authenticating at once
 * (API and admin view), its admin view sessions are deleted, and the audit
 * event "token.revoke" (detail {"sessions": N ended}) is appended by actor,
 * all in one transaction. Tokens are never deleted (the audit names them).
 * STORE_NOT_FOUND (nothing written) when the tenant has no such unrevoked
 * token.
 */
enum store_rc store_token_revoke(struct store *st, const char *tenant_id, const char *token_id,
                                 const char *actor);

/** Look up an unrevoked token by the SHA-256 hex digest of the presented
 * secret. STORE_NOT_FOUND when unknown. */
enum store_rc store_token_lookup(struct store *st, const char *sha256_hex,
                                 struct store_principal *out);

/** store_token_lookup and store_module_get in one query (the API's hot
 * path: every request authenticates, and most are gated by a module).
 * *enabled = 1 if module is on for the token's own tenant (0 for no row or
 * an unknown module). STORE_NOT_FOUND when the token is unknown (*out
 * zeroed, *enabled 0). */
enum store_rc store_token_lookup_module(struct store *st, const char *sha256_hex,
                                        const char *module, struct store_principal *out,
                                        int *enabled);

/* ---- modules --------------------------------------------------------- */

/** *enabled = 1 if the module is on for the tenant; a tenant with no row has
 * every module off. */
enum store_rc store_module_get(struct store *st, const char *tenant_id, const char *module,
                               int *enabled);
/** Switch a module for the tenant. With actor (not NULL), the audit event
 * "module.enable" or "module.disable" by actor, with detail (borrowed, may
 * be NULL), is appended in the same transaction: the switch happens only
 * with its event. */
enum store_rc store_module_set(struct store *st, const char *tenant_id, const char *module,
                               int enabled, const char *actor, json_t *detail);
/** {"modules":[{"name":"sandbox","enabled":bool}]} for the known modules. */
enum store_rc store_module_list(struct store *st, const char *tenant_id, json_t **out);

/* ---- audit (append-only) --------------------------------------------- */

/** Append an event. action e.g. "sandbox.generate"; target_id may be NULL;
 * detail is a JSON object (borrowed, may be NULL) serialised as is: callers
 * put only non-secret facts in it (the generation event holds only the count). */
enum store_rc store_audit_append(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *action,
                                 const char *target_id, json_t *detail);
/** {"events":[{"id","actor","action","target_id","detail","created_at",
 * "actor_role","actor_label"}]}, newest first, at most limit (1..500).
 * actor_role ("viewer"|"editor"|"admin") and actor_label are those of the
 * tenant's token named by actor (revoked or not), null when the actor is
 * not one (e.g. "olivares-admin"). */
enum store_rc store_audit_list(struct store *st, const char *tenant_id, int limit, json_t **out);

/* ---- scenarios ------------------------------------------------------- */

/**
 * Insert a scenario from an object validated by model_scenario_check (name,
 * description, subject_kind, steps, mocks), version 1, and append the audit
 * event "sandbox.scenario.create" by actor in the same transaction.
 * *out receives the stored object (see store_scenario_get).
 */
enum store_rc store_scenario_create(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, json_t *scenario, json_t **out);

/** {"id","name","description","subject_kind","steps":[…],"mocks":[…],
 *  "version","digest" (SHA-256 hex of the canonical steps+mocks JSON),
 *  "created_at","updated_at"}. STORE_NOT_FOUND for an unknown id or another
 *  tenant's id. */
enum store_rc store_scenario_get(struct store *st, const char *tenant_id, const char *id,
                                 json_t **out);

/** {"scenarios":[{id,name,description,subject_kind,version,steps_count,
 *  mocks_count,created_at,updated_at}]}, newest first, limit 1..500, offset >= 0. */
enum store_rc store_scenario_list(struct store *st, const char *tenant_id, int limit, int offset,
                                  json_t **out);

/** Replace the fields present in patch (validated, is_update = 1), bump the
 * version, audit "sandbox.scenario.update"; one transaction. *out as get. */
enum store_rc store_scenario_update(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *id, json_t *patch,
                                    json_t **out);

/** Delete a scenario (its runs and outputs stay: they are evidence), audit
 * "sandbox.scenario.delete"; one transaction. */
enum store_rc store_scenario_delete(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *id);

/* ---- suites ---------------------------------------------------------- */

/*
 * A suite is a scoring document of model/suite.h kept by name (1..128 of
 * [A-Za-z0-9._-], model_suite_name_valid) and version. The object returned
 * is {"name","version","document","created_by","created_at"}.
 */

/**
 * Store document (borrowed) as version 1 of suite name, with the audit
 * event "sandbox.suite.create" {"name","version"} by actor, in one
 * transaction. The document must pass model_suite_check and its "name"
 * must equal name (STORE_ERROR otherwise, nothing written). STORE_CONFLICT
 * when the tenant already has a suite of that name. *out: the stored object.
 */
enum store_rc store_suite_create(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *name, json_t *document,
                                 json_t **out);
/** Version version (0: the latest) of suite name of the tenant into *out;
 * STORE_NOT_FOUND for none (or another tenant's). */
enum store_rc store_suite_get(struct store *st, const char *tenant_id, const char *name,
                              int version, json_t **out);
/** {"suites":[{name,version,created_at}]}: the latest version of each of
 * the tenant's suites, by name; limit 1..500, offset >= 0. */
enum store_rc store_suite_list(struct store *st, const char *tenant_id, int limit, int offset,
                               json_t **out);
/**
 * Store document as the next version of the existing suite name (the
 * older versions stay), audit "sandbox.suite.update", one transaction;
 * checked as store_suite_create. STORE_NOT_FOUND when the tenant has no
 * suite of that name. *out: the stored object.
 */
enum store_rc store_suite_update(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *name, json_t *document,
                                 json_t **out);

/* ---- runs and outputs -------------------------------------------------- */

/**
 * A finished run, recorded whole in one transaction (run row, every output
 * row, and the audit event "sandbox.run"): a run is never left in
 * "running" by a crash, because nothing is written until it is terminal.
 */
struct store_run {
	const char *kind;        /* "simulation" | "replay" | "comparison" */
	const char *scenario_id; /* NULL only for a replay run without a scenario */
	int scenario_version;
	const char *scenario_digest; /* 64 hex */
	const char *variant;         /* may be NULL */
	const char *status;          /* "completed" | "failed" | "degraded" | "cancelled" */
	const char *runner;          /* e.g. "olivares-runner/0.1.0" */
	const char *backend;         /* backend that actually ran */
	int isolated, destroyed;
	int steps_total, steps_ok, steps_error;
	const char *suite;                    /* may be NULL */
	int suite_version;                    /* the store suite's pinned version;
	                                       * 0: none (an adapter's, or unscored) */
	int scored;                           /* 1: score and passed are recorded */
	const char *reason;                   /* why failed / not scored; may be NULL */
	const char *output_digest;            /* 64 hex, SHA-256 over the ordered outputs */
	const char *started_at, *finished_at; /* ISO 8601 UTC */
	json_t *outputs;                      /* array of {"seq","key","input","output",
				       * "status","error_kind","duration_ms"?,
				       * "trace"?} (borrowed); duration_ms: a
				       * number in [0, STORE_DURATION_MAX_MS], or
				       * null or absent when unknown (stored
				       * NULL); trace: the step's requests, an
				       * array (model/mock.h), or null or absent
				       * (stored NULL); anything else is
				       * malformed */
	/* Scoring (members added after the others, so a zeroed struct is "not
	 * scored").
	 * score and passed are stored only when scored is 1 (else NULL);
	 * score must then be in [0, 1]. score_details is the details array of
	 * struct model_score_result (model/scorer.h), borrowed, stored as is
	 * when it is an array (NULL: stored NULL). */
	double score;
	int passed;
	json_t *score_details;
	/* Replay (added after scoring, so a zeroed tail is "not a replay").
	 * session_id names a session of the same tenant (checked when the run
	 * is recorded: another tenant's or an unknown one gives
	 * STORE_NOT_FOUND and nothing is written); NULL for other kinds.
	 * divergence is the object of model_replay_divergence (model/
	 * history.h), borrowed, stored as is when it is an object (NULL: stored
	 * NULL, as for a degraded replay). When scenario_id is NULL (a replay
	 * without a scenario) scenario_version is stored NULL too. */
	const char *session_id;
	json_t *divergence;
	/* Shutdown (added last, so a zeroed tail is "no note"): the runner's
	 * shutdown note (model/runspec.h "shutdown"), NULL when none: the
	 * agent had to be killed after every step completed. Stored beside
	 * status and reason, never in them. */
	const char *shutdown;
	/* Agent (added after the shutdown note; zeroed: unknown, stored NULL).
	 * agent_name: the program's name in the agents directory, or a
	 * built-in name (MODEL_AGENT_BUILTIN_MOCK, MODEL_AGENT_BUILTIN_INPROC);
	 * agent_sha256: 64 lower-case hex of the program file that ran, NULL
	 * for a built-in agent or when nothing ran; mocks_digest: 64 hex of
	 * the mocks the run's variant sees (model_mocks_digest). The run
	 * object shows the first two as "agent": {"name","sha256"} (null when
	 * no name is recorded: a run of an older version) and the third as
	 * "mocks_digest". */
	const char *agent_name;
	const char *agent_sha256;
	const char *mocks_digest;
	/* Egress (added last; zeroed: none): the requests the run's gateway
	 * forwarded outside the sandbox (the summary's "egress_requests"). The
	 * run object shows it as "egress_requests" and "hermetic" (true when
	 * it is 0). */
	long egress_requests;
	/* Recording (added last; zeroed: not recorded). record: the run was
	 * started with "record": true (written when it is queued). On the
	 * end (store_run_finish): session, an import body as
	 * model_session_check normalizes it (borrowed), stored as a new
	 * session of the run's tenant in the same transaction and linked as
	 * the run's session_id, audited "sandbox.session.record" (detail
	 * {"events": N, "run_id"}); or record_error, why none was made.
	 * Both NULL: nothing to record. The run object shows "record" and
	 * "record_error". */
	int record;
	json_t *session;
	const char *record_error;
};

/** Largest step duration_ms a run output may carry (one day): anything
 * above, or negative, or not a number, makes the output malformed
 * (STORE_ERROR, nothing written). Stored as integer microseconds
 * (run_outputs.duration_us, migration 006), rounded to the nearest. */
#define STORE_DURATION_MAX_MS 86400000.0

/** Record a run and its outputs; *out receives the stored run object (see
 * store_run_get). The "sandbox.run" audit event's detail is {"scenario_id",
 * "variant","status"}, plus "session_id" for a run that names a session.
 * A session_id that is not one of the tenant's sessions gives
 * STORE_NOT_FOUND and writes nothing. */
enum store_rc store_run_record(struct store *st, const char *tenant_id, const char *actor_token_id,
                               const struct store_run *run, json_t **out);

/** {"id","kind","scenario_id","scenario_version","scenario_digest","variant",
 *  "status","runner","backend","isolated","destroyed","steps_total",
 *  "steps_ok","steps_error","suite","scored","score","passed","reason",
 *  "output_digest","started_at","finished_at","created_by","score_details",
 *  "session_id","divergence","shutdown",…,"suite_version"}
 *  (null for absent; suite_version the pinned store suite version or null; score_details is the stored array or null; divergence
 *  the stored object or null; shutdown the runner's note or null). */
enum store_rc store_run_get(struct store *st, const char *tenant_id, const char *id, json_t **out);

/** {"runs":[run objects]}, newest first; scenario_id and status filters may
 * be NULL; limit 1..500, offset >= 0. Same as store_run_list_filtered with
 * only those two filters. */
enum store_rc store_run_list(struct store *st, const char *tenant_id, const char *scenario_id,
                             const char *status, int limit, int offset, json_t **out);

/** Filters of store_run_list_filtered: each NULL member matches every run;
 * the others must all match (exact text; a value that names nothing
 * matches no run). */
struct store_run_filter {
	const char *scenario_id;
	const char *status;     /* "queued" | "running" | "completed" | "failed" | "degraded" |
	                         * "cancelled" */
	const char *kind;       /* "simulation" | "replay" | "comparison" */
	const char *session_id; /* the history session a replay replayed */
};

/** {"runs":[run objects]} of the tenant that match every filter of *filter
 * (may be NULL: no filter), newest first; limit 1..500, offset >= 0. */
enum store_rc store_run_list_filtered(struct store *st, const char *tenant_id,
                                      const struct store_run_filter *filter, int limit, int offset,
                                      json_t **out);

/**
 * Record the agent's log of a run that executor_id holds (running under
 * it), before its end is recorded: text (len bytes, NUL-terminated, the
 * cleaned text of model/runlog.h, at most MODEL_RUN_LOG_MAX bytes) and
 * dropped, the agent's bytes counted past the cap and not kept (0: the
 * whole log). Stored under the run's own tenant; a second put for the
 * same run replaces the first. STORE_NOT_FOUND when the run is not
 * running under this executor; STORE_ERROR (nothing written) for text
 * that is not cleaned, over the cap, or a negative dropped.
 */
enum store_rc store_run_log_put(struct store *st, const char *run_id, const char *executor_id,
                                const char *text, size_t len, long long dropped);

/** {"run_id","text","dropped"}: the tenant's run's log, as stored (no
 * truncation mark: whoever shows it adds model_runlog_mark() when dropped
 * is not 0); "" and 0 for a run that logged nothing. STORE_NOT_FOUND when
 * the run is unknown for the tenant (another tenant's included). */
enum store_rc store_run_log(struct store *st, const char *tenant_id, const char *run_id,
                            json_t **out);

/** {"run_id","outputs":[{"seq","key","input","output","status","error_kind",
 * "duration_ms","trace"}]} ordered by seq; duration_ms is the step's wall time in
 * milliseconds (a real, microsecond precision) or null when unknown (runs
 * recorded before migration 006, a runner line without one); trace is the
 * step's requests as stored (model/mock.h) or null (runs recorded before
 * migration 010, a runner line without one).
 * STORE_NOT_FOUND when the run is unknown for the tenant. */
enum store_rc store_run_outputs(struct store *st, const char *tenant_id, const char *run_id,
                                json_t **out);

/* ---- comparisons (append-only) ------------------------------------------ */

/*
 * A pre/post-deployment comparison: a baseline and a candidate run of one
 * scenario, scored by one suite, and the verdict of model/verdict.h.
 * Comparisons are evidence: there is no function to update or delete one,
 * and the schema refuses UPDATE and DELETE on the table (triggers of
 * migration 002).
 */
struct store_comparison {
	const char *scenario_id;
	int scenario_version;
	const char *suite;                 /* 1..128 bytes */
	double tolerance;                  /* in [0, 1] */
	const struct store_run *baseline;  /* recorded by the same call */
	const struct store_run *candidate; /* (kind "comparison" expected) */
	const char *verdict;               /* "improved" | "regressed" | "unchanged" |
					  * "inconclusive" (model_verdict_name) */
	int has_delta;                     /* 1: delta is recorded (both sides scored) */
	double delta;                      /* candidate score - baseline score */
	const char *reason;                /* why inconclusive; may be NULL */
	json_t *differing_steps;           /* array of {"seq","key","baseline_output",
					  * "candidate_output"} (borrowed) */
	/* With repeats (model/stats.h), all borrowed; NULL stats, pass_k and
	 * flaky_steps are recorded as NULL (0 repeats as 1). run_ids is
	 * {"baseline":[ids],"candidate":[ids]} in repeat order; NULL: the one
	 * pair of baseline/candidate. */
	int repeats;
	json_t *run_ids;
	json_t *stats;       /* {"method","n","delta","ci_low","ci_high","p_value",...} */
	json_t *pass_k;      /* {"baseline","candidate"} */
	json_t *flaky_steps; /* [{"side","key","seq"}] */
};

/**
 * Record a comparison whole, in ONE transaction: the baseline run and its
 * outputs, the candidate run and its outputs (each with its "sandbox.run"
 * audit event, as store_run_record), the comparison row, and the audit
 * event "sandbox.compare" (detail: scenario_id, baseline_run_id,
 * candidate_run_id, verdict) by actor, who is also "decided_by". Any
 * failure rolls everything back: no run, output, comparison or event is
 * left. Both runs are checked as store_run_record checks one; the verdict
 * must be one of the four names; has_delta requires both runs scored.
 * *out receives the stored comparison (see store_comparison_get).
 */
enum store_rc store_comparison_record(struct store *st, const char *tenant_id,
                                      const char *actor_token_id,
                                      const struct store_comparison *cmp, json_t **out);

/** {"id","scenario_id","scenario_version","suite","tolerance",
 *  "baseline":{"variant","run_id","status","scored","score","shutdown"},
 *  "candidate":{"variant","run_id","status","scored","score","shutdown"},
 *  "delta": number|null, "verdict", "reason": string|null,
 *  "differing_steps":[…], "decided_by", "created_at"}
 *  (status, scored and shutdown are those of the recorded runs: shutdown
 *  is the run's note that its agent had to be killed after the last step,
 *  or null, as in store_run_get; it is not a score and does not enter the
 *  verdict), and "status": "decided". A comparison asked for with
 *  store_comparison_enqueue whose verdict is not recorded yet has the same
 *  members with "status": "pending", "verdict", "delta" and "reason" null,
 *  "differing_steps" [], a side's "score" null until it is scored, and
 *  "decided_by" the actor who asked. STORE_NOT_FOUND for an unknown id or
 *  another tenant's id. */
enum store_rc store_comparison_get(struct store *st, const char *tenant_id, const char *id,
                                   json_t **out);

/** {"comparisons":[comparison objects]} (decided ones only: a pending
 *  comparison has no verdict for a gate to read), newest first; scenario_id may be
 *  NULL (every scenario); limit 1..500, offset >= 0. The latest comparison
 *  of a scenario (what a deployment gate reads) is limit 1, offset 0. */
enum store_rc store_comparison_list(struct store *st, const char *tenant_id,
                                    const char *scenario_id, int limit, int offset, json_t **out);

/* ---- approvals (append-only) ---------------------------------------------- */

/** The longest approval reason the store keeps, in bytes (the API's bound
 *  is 1000 characters of UTF-8, at most 4 bytes each). */
#define STORE_APPROVAL_REASON_MAX_BYTES 4000

/**
 * Append an admin's decision on the settled comparison comparison_id of
 * tenant_id: decision "approved" | "rejected", reason 1..4000 bytes of
 * UTF-8, actor_token_id the deciding token. The row and the audit event
 * "sandbox.approval" (detail {"approval_id","comparison_id","decision",
 * "reason"}, target the comparison) are written in one transaction. A
 * later decision is a new row; the newest counts. *out gets {"id",
 * "comparison_id","decision","reason","decided_by","created_at"} (a new
 * reference). STORE_NOT_FOUND for an unknown or another tenant's id,
 * STORE_CONFLICT (nothing written) for a comparison asked for whose verdict
 * is not recorded yet, STORE_ERROR for a bad decision or reason.
 */
enum store_rc store_approval_append(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *comparison_id,
                                    const char *decision, const char *reason, json_t **out);

/** {"approvals":[approval objects as store_approval_append returns]} of the
 *  comparison comparison_id of tenant_id, oldest first (the last one is the
 *  decision that counts); [] for a comparison with none or of another
 *  tenant. */
enum store_rc store_approval_list(struct store *st, const char *tenant_id,
                                  const char *comparison_id, json_t **out);

/* ---- history sessions (append-only) --------------------------------------- */

/*
 * Sessions imported for replay: the recorded events of a conversation
 * (model/history.h), which a replay rebuilds into an ordered timeline. Like
 * comparisons they are evidence: there is no function to update or delete
 * one, and the schema refuses UPDATE and DELETE on the table (triggers of
 * migration 003).
 */

/**
 * Insert a session from an object normalised by model_session_check
 * ({"external_id": 1..128 bytes of UTF-8, "events": array}, borrowed; the
 * events are stored as they are, in order) and append the audit event
 * "sandbox.session.import" by actor, detail {"events": N} only (never the
 * content), in the same transaction. *out receives
 * {"id","external_id","events_count","created_at"}. STORE_ERROR (nothing
 * written) for a malformed object.
 */
enum store_rc store_session_create(struct store *st, const char *tenant_id,
                                   const char *actor_token_id, json_t *session, json_t **out);

/** {"id","external_id","events":[… as imported …],"events_count",
 *  "created_at"}. STORE_NOT_FOUND for an unknown id or another tenant's. */
enum store_rc store_session_get(struct store *st, const char *tenant_id, const char *id,
                                json_t **out);

/** {"sessions":[{"id","external_id","events_count","created_at"}]}, newest
 *  first, limit 1..500, offset >= 0. */
enum store_rc store_session_list(struct store *st, const char *tenant_id, int limit, int offset,
                                 json_t **out);

/* ---- admin view sessions --------------------------------------------------- */

/*
 * Sign-in sessions of the admin HTML view. A session is made
 * when a user signs in with an API token: the browser keeps a random secret
 * in a cookie, and only the SHA-256 hex of that secret is stored here,
 * beside the token it was made from. A session gives exactly the rights of
 * its token: the role is read from the token on every lookup, and revoking
 * the token ends its sessions.
 */

/**
 * Store a new session for the token token_id of tenant_id: sha256_hex is
 * the SHA-256 hex (64 chars) of the cookie secret, expires_at an ISO UTC
 * time ("YYYY-MM-DDTHH:MM:SS.mmmZ"). In the same transaction: delete the
 * sessions of every tenant whose expires_at is before now_iso (no other
 * cleanup job exists), and append the audit event "admin.signin" by the
 * token (detail {"session_id"} only). id_out gets the session id.
 * STORE_NOT_FOUND (nothing written) when the token is not an unrevoked
 * token of tenant_id.
 */
enum store_rc store_web_session_create(struct store *st, const char *tenant_id,
                                       const char *token_id, const char *sha256_hex,
                                       const char *now_iso, const char *expires_at,
                                       char id_out[33]);

/**
 * Find the session whose secret hashes to sha256_hex, that has not expired
 * (expires_at > now_iso) and whose token is not revoked. out gets the
 * session's tenant_id, its token's token_id and current role, and in
 * sha256_hex the stored session hash (for the caller's constant-time
 * compare). STORE_NOT_FOUND otherwise (*out zeroed).
 */
enum store_rc store_web_session_lookup(struct store *st, const char *sha256_hex,
                                       const char *now_iso, struct store_principal *out);

/**
 * Delete the session of tenant_id whose secret hashes to sha256_hex (sign-
 * out) and append the audit event "admin.signout" by actor_token_id, in one
 * transaction. STORE_NOT_FOUND (nothing written) when there is none.
 */
enum store_rc store_web_session_delete(struct store *st, const char *tenant_id,
                                       const char *actor_token_id, const char *sha256_hex);

/* ---- listings with more filters (the admin view's lists) ------------------ */

/** store_comparison_list with one more filter: verdict (NULL: every
 *  verdict; else one of "improved", "regressed", "unchanged",
 *  "inconclusive"; any other text matches nothing). */
enum store_rc store_comparison_list_filtered(struct store *st, const char *tenant_id,
                                             const char *scenario_id, const char *verdict,
                                             int limit, int offset, json_t **out);

/** store_audit_list with an offset (>= 0) into the newest-first list, for
 *  pagination. */
enum store_rc store_audit_list_page(struct store *st, const char *tenant_id, int limit, int offset,
                                    json_t **out);

/* ---- idempotency keys ------------------------------------------------------ */

/*
 * The first answer of a create request sent with an Idempotency-Key (the
 * POSTs of scenarios, runs, replays, comparisons and sessions), kept so
 * that a retry with the same key gets that answer back and writes nothing
 * new. A key is the tenant's (another tenant's same key is another key).
 * Its row is written by the create's own transaction (the *_idem
 * functions below): the record and its key are committed together or not
 * at all. Rows live until expires_at; an expired row is ignored by
 * store_idem_lookup and deleted when the tenant writes its next key.
 */

/** The longest key, in bytes (the HTTP layer bounds its charset). */
#define STORE_IDEM_KEY_MAX 255
/** The longest route ("METHOD /path as sent"), in bytes. */
#define STORE_IDEM_ROUTE_MAX 2048

/** One key as a request presents it (every member borrowed). */
struct store_idem {
	const char *key;            /* 1..STORE_IDEM_KEY_MAX bytes */
	const char *route;          /* method and path as sent, e.g.
	                             * "POST /v1/m/sandbox/scenarios/<id>/runs" */
	const char *request_sha256; /* 64 lowercase hex: the request body's digest */
	int status;                 /* the 2xx status the create replies */
	const char *now;            /* ISO UTC, the request's time (created_at) */
	const char *expires_at;     /* ISO UTC, after now */
};

/**
 * Find the tenant's unexpired key idem->key (expires_at > idem->now).
 * STORE_OK: the same route and request digest; *status and *response (a
 * new reference, the stored reply body) are the first answer.
 * STORE_CONFLICT: the key was used with another route or body (nothing
 * returned). STORE_NOT_FOUND: no such key (or only an expired one).
 * idem->status and idem->expires_at must be well-formed but are not read.
 */
enum store_rc store_idem_lookup(struct store *st, const char *tenant_id,
                                const struct store_idem *idem, int *status, json_t **response);

/** store_scenario_create that also records idem (NULL: none) with the
 * answer *out in the same transaction. STORE_CONFLICT (nothing written)
 * when the tenant's key is already taken (a concurrent request). */
enum store_rc store_scenario_create_idem(struct store *st, const char *tenant_id,
                                         const char *actor_token_id, json_t *scenario,
                                         const struct store_idem *idem, json_t **out);
/** store_session_create with idem, as store_scenario_create_idem. */
enum store_rc store_session_create_idem(struct store *st, const char *tenant_id,
                                        const char *actor_token_id, json_t *session,
                                        const struct store_idem *idem, json_t **out);
/** store_run_record with idem, as store_scenario_create_idem. */
enum store_rc store_run_record_idem(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const struct store_run *run,
                                    const struct store_idem *idem, json_t **out);
/** store_comparison_record with idem, as store_scenario_create_idem. */
enum store_rc store_comparison_record_idem(struct store *st, const char *tenant_id,
                                           const char *actor_token_id,
                                           const struct store_comparison *cmp,
                                           const struct store_idem *idem, json_t **out);

/* ---- run jobs: queued runs, the executors that claim them ------------------ */

/*
 * A run is a job: store_run_enqueue records it "queued" with what an
 * executor needs to run it (its job object), an executor claims it
 * ("running": executor, started_at, heartbeat_at set), heartbeats it,
 * appends its outputs as steps end, and finishes it (terminal: completed,
 * failed, cancelled; a degraded replay is recorded whole with
 * store_run_record). A run is claimed at most once: nothing here puts a
 * run back in the queue. A running run whose heartbeat is older than the
 * lease is ended "failed" by store_runs_sweep with reason "executor <id>
 * lost: no heartbeat for N s", its outputs kept.
 *
 * Columns not known before the end (runner, output_digest, started_at,
 * finished_at) read as null in a run object until they are; the run object
 * of store_run_get also has "queued_at", "steps_done" (outputs stored so
 * far), "executor" (null until claimed) and "comparison_id" (null unless
 * the run is one side of a comparison).
 */

/** What a queued run is: everything but what its execution decides.
 * Every member borrowed. */
struct store_run_job {
	const char *kind;        /* "simulation" | "replay" | "comparison" */
	const char *scenario_id; /* NULL only for a replay without a scenario */
	int scenario_version;
	const char *scenario_digest; /* 64 hex, or NULL with scenario_id NULL */
	const char *variant;         /* may be NULL */
	const char *backend;         /* the backend chosen (a known name) */
	const char *suite;           /* may be NULL */
	int suite_version;           /* pinned store suite version; 0: none */
	const char *session_id;      /* a replay's session (checked as store_run_record
	                              * does), else NULL */
	int steps_total;             /* the steps the spec holds */
	json_t *job;                 /* the executor's input, an object stored as is
	                              * (e.g. {"spec": run spec, "recorded": […]});
	                              * returned by store_run_claim, dropped when the
	                              * run ends */
	const char *agent_name;      /* as struct store_run's (the sha256 is the
	                              * executor's, recorded with the end) */
	const char *mocks_digest;
	int record; /* started with "record": true (struct store_run's record) */
};

/**
 * Record job as a queued run of tenant_id, with its "sandbox.run" audit
 * event (detail {"scenario_id","variant","status":"queued"}, plus
 * "session_id" for a replay) and idem (NULL: none) in one transaction.
 * max_active >= 1: STORE_LIMIT (nothing written) when the tenant already
 * has max_active runs queued or running. *out gets the run object
 * (store_run_get).
 */
enum store_rc store_run_enqueue(struct store *st, const char *tenant_id, const char *actor_token_id,
                                const struct store_run_job *job, int max_active,
                                const struct store_idem *idem, json_t **out);

/** A comparison to run: its two runs are queued together, and its verdict
 * is recorded when both have ended (store_comparison_settle). */
struct store_comparison_job {
	const char *scenario_id;
	int scenario_version;
	const char *suite;                                /* 1..128 bytes */
	double tolerance;                                 /* in [0, 1] */
	const struct store_run_job *baseline, *candidate; /* kind "comparison" */
	/* runs per side, 1..MODEL_STATS_MAX_REPEATS (0 reads as 1): each side's
	 * job is queued that many times, run r's job with "repeat": r in its
	 * "spec" object (the runner's spec, model/runspec.h),
	 * and the verdict waits for all of them */
	int repeats;
};

/**
 * Queue the runs of cj, repeats per side in the order baseline 0,
 * candidate 0, baseline 1, ... (each with its "sandbox.run" event and its
 * comparison side and repeat index, counted against max_active as
 * 2 * repeats) and the comparison request, with idem, in one
 * transaction. *out gets the comparison object of store_comparison_get,
 * which is pending (verdict null) until store_comparison_settle records
 * it.
 */
enum store_rc store_comparison_enqueue(struct store *st, const char *tenant_id,
                                       const char *actor_token_id,
                                       const struct store_comparison_job *cj, int max_active,
                                       const struct store_idem *idem, json_t **out);

/** An executor as it registers: every member borrowed. */
struct store_executor {
	const char *id;       /* 1..128 bytes, [A-Za-z0-9._:-] */
	const char *host;     /* the host id it runs on, 1..128 bytes */
	int pid, slots;       /* slots >= 1 */
	const char *backends; /* comma list of the backends that passed preflight
	                       * on its host ("" when none) */
	json_t *preflight;    /* {"<backend>": {"ok": bool, "reason": text|null}}, stored as is */
};

/** Register ex (a new row, or the same id again: replaced, live again),
 * heartbeat now. Not tenant data (an operator's table). */
enum store_rc store_executor_register(struct store *st, const struct store_executor *ex);
/** The executor's heartbeat: now. STORE_NOT_FOUND when it is not registered. */
enum store_rc store_executor_heartbeat(struct store *st, const char *executor_id);
/** The executor stopped cleanly: no longer live (its runs are its own to end). */
enum store_rc store_executor_stop(struct store *st, const char *executor_id);

/**
 * Whether a live executor (heartbeat within lease_seconds, not stopped)
 * offers backend: *offered 1 or 0. When 0, why (n bytes) says so:
 * "no live executor offers backend B" plus, when a live executor's
 * preflight refused it, ": <its reason>"; or "no executor is running"
 * when none is live at all.
 */
enum store_rc store_executor_offers(struct store *st, const char *backend, int lease_seconds,
                                    int *offered, char *why, size_t n);

/** {"executors":[{"id","host","pid","slots","backends":[…],"preflight",
 * "started_at","heartbeat_at","stopped_at","live":bool,"running":N}]},
 * newest heartbeat first (operator tool and /backends). */
enum store_rc store_executor_list(struct store *st, int lease_seconds, json_t **out);

/** A claimed run (store_run_claim): release with store_claim_clear. */
struct store_claim {
	char run_id[33];
	char tenant_id[33];
	char backend[32];
	json_t *run; /* the run object (store_run_get), status "running" */
	json_t *job; /* the job object it was queued with */
};

/**
 * Claim one queued run whose backend is in backends (comma list) for
 * executor_id: status "running", executor, started_at and heartbeat_at
 * now, atomically (on PostgreSQL with SELECT … FOR UPDATE SKIP LOCKED, on
 * SQLite in one immediate transaction), so two executors never claim one
 * run. Fair across tenants: the run taken is the oldest queued one of the
 * tenant that has the fewest runs running. STORE_OK with *out filled,
 * STORE_NOT_FOUND when there is nothing to claim.
 */
enum store_rc store_run_claim(struct store *st, const char *executor_id, const char *backends,
                              struct store_claim *out);
void store_claim_clear(struct store_claim *c);

/**
 * Heartbeat run_id held by executor_id (heartbeat_at now); *cancel gets 1
 * when a cancel was asked for. STORE_NOT_FOUND when the run is no longer
 * running under that executor (swept as lost, or ended): stop it.
 */
enum store_rc store_run_heartbeat(struct store *st, const char *run_id, const char *executor_id,
                                  int *cancel);

/**
 * Append outputs (an array of output objects as store_run records them,
 * seq ascending and above every seq stored) to run_id held by
 * executor_id, set steps_done to the outputs stored and heartbeat it, in
 * one transaction. STORE_NOT_FOUND as store_run_heartbeat (nothing
 * written); STORE_ERROR for a malformed output.
 */
enum store_rc store_run_append(struct store *st, const char *run_id, const char *executor_id,
                               json_t *outputs);

/**
 * End run_id held by executor_id with the terminal fields of run (status
 * "completed" | "failed" | "cancelled", runner, backend, isolated,
 * destroyed, steps_*, scored/score/passed/score_details, reason,
 * output_digest, finished_at, divergence, shutdown, agent_sha256; kind,
 * scenario, variant, suite, session, started_at, agent_name and
 * mocks_digest are the queued run's and are not read). run->outputs (may be NULL) are the run's outputs: those whose seq
 * is not stored yet are appended. The job object is dropped. Then, when
 * the run is one side of a comparison, store_comparison_settle. *out (may
 * be NULL) gets the run object. STORE_NOT_FOUND (nothing written) as
 * store_run_heartbeat.
 */
enum store_rc store_run_finish(struct store *st, const char *run_id, const char *executor_id,
                               const struct store_run *run, json_t **out);

/**
 * Cancel the tenant's run id, audited "sandbox.run.cancel" by actor: a
 * queued run ends "cancelled" at once (reason "cancelled before it
 * started", no step); a running one is marked, and its executor ends it
 * "cancelled" with the steps done (its next heartbeat sees the mark).
 * STORE_CONFLICT (nothing written) for a run already terminal;
 * STORE_NOT_FOUND for an unknown id or another tenant's. *out gets the run
 * object after the change.
 */
enum store_rc store_run_cancel(struct store *st, const char *tenant_id, const char *actor_token_id,
                               const char *id, json_t **out);

/**
 * End every running run whose heartbeat is older than lease_seconds:
 * "failed", reason "executor <id> lost: no heartbeat for N s" (N whole
 * seconds since its last heartbeat), its stored outputs kept (steps_ok,
 * steps_error and output_digest computed from them), not isolated
 * claims dropped (isolated and destroyed 0: nobody saw the jail torn
 * down). Then settle the comparisons whose two runs are terminal and have
 * no verdict yet. *ended (may be NULL) gets how many runs it ended. Any
 * process may call it (executors do, each lease/3 seconds).
 */
enum store_rc store_runs_sweep(struct store *st, int lease_seconds, int *ended);

/**
 * Record the verdict of comparison_id once all of its runs are terminal
 * (model_stats_compare of model/stats.h over their stored scores,
 * score_details, tolerance and outputs; with one repeat the rules of
 * model/verdict.h), with
 * the audit event "sandbox.compare" by the actor who asked for it, in one
 * transaction. STORE_OK when it is recorded now or already was (a second
 * caller loses the race harmlessly); STORE_NOT_FOUND when it has no such
 * comparison or a side is not terminal yet.
 */
enum store_rc store_comparison_settle(struct store *st, const char *comparison_id);

/* ---- evidence (sql/evidence.c, docs/evidence.md) ---------------------- */

/**
 * Append to tenant_id's evidence chain the link of the record id of kind
 * ("run", "comparison" or "approval") whose canonical JSON body is
 * canonical_body (model_evidence_canonical; kept with the link): seq the
 * tenant's next, prev the hash of its last link (64 zeros for the first).
 * Runs INSIDE the caller's transaction (call it from a store_tx callback,
 * in the transaction that writes the record), so the link exists exactly
 * when the record does; PostgreSQL serialises a tenant's appenders with a
 * transaction-scoped advisory lock. STORE_CONFLICT when the record already
 * has a link; STORE_ERROR for a malformed kind or id.
 */
enum store_rc store_evidence_append(struct store *st, const char *tenant_id, const char *kind,
                                    const char *id, const char *canonical_body);

/**
 * The unsigned evidence bundle of the tenant's settled comparison
 * comparison_id (model/evidence.h; "key_id" and "signature" are the
 * caller's to add with model_evidence_sign): the comparison and both runs
 * as they were linked, the runs' outputs, "suite": null, and the links from
 * the first to the last of its three records. *out a new reference.
 * STORE_NOT_FOUND: no such comparison; STORE_CONFLICT (reason in the error
 * text): not settled yet, or settled before evidence was kept.
 */
enum store_rc store_evidence_bundle(struct store *st, const char *tenant_id,
                                    const char *comparison_id, json_t **out);

/* ---- metrics (sql/metrics.c, docs/metrics.md) ----------------------------- */

/** Most bucket bounds of one histogram (store_metrics_read). */
#define STORE_METRICS_BUCKETS_MAX 16

/** A histogram computed from stored rows: count of values, their sum
 * (seconds), and le[i] the count of values <= the caller's bound i. */
struct store_metrics_hist {
	long long count;
	double sum;
	long long le[STORE_METRICS_BUCKETS_MAX];
};

/** What store_metrics_read computes: bucket bounds in seconds, ascending
 * (borrowed, 1..STORE_METRICS_BUCKETS_MAX of each), the executors' lease
 * and whether the runs are also counted by tenant name. */
struct store_metrics_query {
	const double *run_bounds;
	size_t nrun_bounds;
	const double *step_bounds;
	size_t nstep_bounds;
	int lease_seconds;
	int by_tenant;
};

/** The store's part of a scrape (store_metrics_read). runs, a new
 * reference: [{"status","backend","tenant"?,"n"}] (tenant, the tenant's
 * name, only with by_tenant); executors, a new reference:
 * [{"id","host","heartbeat_at","heartbeat_seconds"}] (seconds since the
 * epoch, a real) of the executors not stopped (live or lost), at most
 * 200, newest heartbeat first; queue_oldest_age the seconds since the
 * oldest queued run was queued (0 when nothing is queued). */
struct store_metrics {
	json_t *runs;
	long long queue_depth;
	double queue_oldest_age;
	struct store_metrics_hist run_duration;  /* ended runs, finished_at - started_at */
	struct store_metrics_hist step_duration; /* outputs with a duration */
	json_t *executors;
	long long executors_live, executors_lost, executors_stopped;
};

/**
 * Read the figures of every tenant for the operator's /metrics scrape
 * (not tenant data: counts only, a tenant's name only with by_tenant) into
 * *out, in one read. The histograms are computed from the runs and
 * outputs the store holds, so a purge lowers them. STORE_ERROR for bounds
 * out of range or not ascending; on any failure *out holds no reference.
 * Release with store_metrics_clear.
 */
enum store_rc store_metrics_read(struct store *st, const struct store_metrics_query *q,
                                 struct store_metrics *out);
/** Drop the references of m (idempotent). */
void store_metrics_clear(struct store_metrics *m);

/** This connection's counters since store_open (store_stats). */
struct store_stats {
	unsigned long long retries;     /* a transaction run again: on a lock or
	                                 * serialization conflict, or once on a
	                                 * new connection after one was lost */
	unsigned long long unavailable; /* calls that returned STORE_UNAVAILABLE */
};

/** Copy st's counters into *out (zeros for NULL st). */
void store_stats(const struct store *st, struct store_stats *out);
/* ---- retention (sql/retention.c, docs/retention.md) ------- */

/** The longest retention_days a purge takes (100 years). */
#define STORE_RETENTION_DAYS_MAX 36500

/** How one tenant's purge runs. */
struct store_retention {
	/** Runs that ended (completed, failed, degraded, cancelled) more than
	 * this many days ago are purged: 1..STORE_RETENTION_DAYS_MAX. */
	int retention_days;
	/** 0: a run a comparison rests on (and so an approval too) is kept
	 * whole. 1: its outputs and log go, and its record too unless a
	 * comparison or comparison job row (append-only) holds it by foreign
	 * key, the first run of each side; the runs of a comparison that has
	 * not settled are still kept whole. */
	int include_referenced;
	/** 1: count what would go, delete nothing, audit nothing. */
	int dry_run;
};

/** What a purge removed (would remove, on a dry run). */
struct store_retention_result {
	long long runs;         /* run records deleted */
	long long outputs;      /* run_outputs rows deleted */
	long long logs;         /* run_logs rows deleted */
	long long kept;         /* expired runs whose record stays: a comparison rests on it */
	long long transactions; /* committed transactions that removed something
	                         * (one "retention.purge" audit event each) */
};

/**
 * Purge tenant_id's runs that ended more than opt->retention_days ago, with
 * their outputs and logs; runs queued or running are never touched, nor
 * are comparisons, approvals, scenarios, suites, sessions, the audit log
 * or the evidence chain (a kept comparison's evidence bundle still
 * verifies). Works in transactions of at most 100 runs each; each one that
 * removes something appends, in the same transaction, the audit event
 * "retention.purge" by actor (may be NULL) with counts only:
 * {"runs","outputs","logs","kept","retention_days","include_referenced"}.
 * *out (zeroed first) gets the totals of the committed transactions, also
 * when a later one fails. STORE_NOT_FOUND for a malformed tenant id,
 * STORE_ERROR for a retention_days out of bounds (nothing done).
 */
enum store_rc store_retention_purge(struct store *st, const char *tenant_id,
                                    const struct store_retention *opt, const char *actor,
                                    struct store_retention_result *out);

#endif
