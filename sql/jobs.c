/*
 * Runs as jobs (store.h "run jobs"): a run is queued by the API, claimed by
 * one executor, heartbeated, given its outputs as its steps end, and ended
 * by its executor, by a cancel before it started, or by the sweep when its
 * executor is lost; a comparison's verdict is recorded once both of its
 * runs have ended.
 *
 * The API's calls (enqueue, cancel) are the tenant's and filtered by
 * tenant like every other. The executors' calls (claim, heartbeat, append,
 * finish), the sweep and the settle of a comparison are the operator's:
 * they cross tenants by design, and act on a run only through its id and
 * the executor that holds it (status = 'running' AND executor = ?), then
 * read and write its tenant's rows with the tenant_id stored on the run.
 */
#include "sql/store_internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/text.h"
#include "model/stats.h"
#include "model/verdict.h"

/* Guesses of a claim that lost its pick to another executor before it
 * retries the whole transaction (store_call's busy retry). */
#define CLAIM_PICKS 4
/* Runs one sweep ends at most; the next sweep (lease/3 later) takes the rest. */
#define SWEEP_BATCH 500

static int is_terminal(const char *status)
{
	return status && (strcmp(status, "completed") == 0 || strcmp(status, "failed") == 0 ||
	                  strcmp(status, "degraded") == 0 || strcmp(status, "cancelled") == 0);
}

/* Member k of o as text, "" when it is not a string. */
static const char *jtext(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "";
}

/* Tell store_call that this transaction lost a race and must run again. */
static enum store_rc lost_race(struct store *st, const char *what)
{
	st->busy = 1;
	store_seterr(st, "%s: changed by another connection meanwhile", what);
	return STORE_UNAVAILABLE;
}

/*
 * SHA-256 over the outputs in seq order, as the dispatch computes a run's
 * output_digest: for each output its decimal seq, key, output and status,
 * each followed by a NUL byte; lowercase hex into hex. Over no output it is
 * the SHA-256 of nothing.
 */
static enum store_rc outputs_digest(struct store *st, json_t *outputs, char hex[65])
{
	static const char *const fields[] = {"key", "output", "status"};
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx;
	char seq[32];
	json_t *o, *v;
	size_t i, f;
	int ok;

	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
	json_array_foreach(outputs, i, o)
	{
		snprintf(seq, sizeof seq, "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(o, "seq")));
		ok = ok && EVP_DigestUpdate(ctx, seq, strlen(seq) + 1) == 1;
		for (f = 0; f < sizeof fields / sizeof fields[0]; f++) {
			v = json_object_get(o, fields[f]);
			ok = ok &&
			     EVP_DigestUpdate(ctx, json_string_value(v) ? json_string_value(v) : "",
			                      json_string_length(v)) == 1;
			ok = ok && EVP_DigestUpdate(ctx, "", 1) == 1;
		}
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 32;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		store_seterr(st, "SHA-256 of the outputs failed");
		return STORE_ERROR;
	}
	model_hex_encode(md, md_len, hex);
	return STORE_OK;
}

struct job_arg {
	const char *tenant_id;
	const char *actor;
	const struct store_run_job *job;
	const struct store_comparison_job *cj;
	int max_active;
	const struct store_idem *idem;
	const char *run_id;
	const char *executor_id;
	const char *backends[STORE_BACKENDS_MAX];
	const struct store_run *run;
	json_t *outputs;
	char cutoff[32];
	int flag;                 /* heartbeat: cancel asked; sweep: the run was ended */
	int want_out;             /* finish: read the ended run back into out */
	char comparison_id[33];   /* to settle after the commit ("" for none) */
	struct store_claim claim; /* claim: what the transaction took */
	json_t *out;
};

/* ---- queueing ----------------------------------------------------------------- */

static int kind_known(const char *kind)
{
	return kind && (strcmp(kind, "simulation") == 0 || strcmp(kind, "replay") == 0 ||
	                strcmp(kind, "comparison") == 0);
}

static enum store_rc job_check(struct store *st, const struct store_run_job *j)
{
	if (!j || !kind_known(j->kind) ||
	    (j->scenario_id ? !store_text_ok(j->scenario_id, 1, MODEL_MAX_SCENARIO_REF_BYTES) ||
	                          !store_is_lower_hex(j->scenario_digest, STORE_SHA256_HEX_LEN)
	                    : strcmp(j->kind, "replay") != 0 || j->scenario_digest != NULL) ||
	    (j->variant && !store_text_ok(j->variant, 0, MODEL_MAX_VARIANT_BYTES)) || !j->backend ||
	    store_backend_index(j->backend, strlen(j->backend)) < 0 ||
	    (j->suite && !store_text_ok(j->suite, 1, MODEL_MAX_SUITE_NAME_BYTES)) ||
	    (j->session_id && !store_is_lower_hex(j->session_id, MODEL_ID_LEN)) ||
	    j->steps_total < 0 || !json_is_object(j->job)) {
		store_seterr(st,
		             "run job: a known kind and backend, a scenario id and digest (none "
		             "only for a replay), a session id or none, steps_total >= 0 and "
		             "a job object are required");
		return STORE_ERROR;
	}
	return STORE_OK;
}

static const struct colspec count_cols[] = {{"n", C_INT}};

/* STORE_LIMIT when adding more runs would take the tenant's queued and
 * running runs above max_active. */
static enum store_rc active_room(struct store *st, const char *tenant_id, int adding,
                                 int max_active)
{
	struct param p[] = {PT(tenant_id)};
	json_t *row = NULL;
	json_int_t n;
	enum store_rc rc;

	rc = store_tenant_hold(st, tenant_id);
	if (rc)
		return rc;
	rc = store_q_row(st,
	                 "SELECT COUNT(*) FROM runs WHERE tenant_id = ? AND status IN ('queued', "
	                 "'running')",
	                 p, NPARAMS(p), count_cols, NPARAMS(count_cols), &row);
	if (rc)
		return rc;
	n = json_integer_value(json_object_get(row, "n"));
	json_decref(row);
	if (n + adding > max_active) {
		store_seterr(st, "the tenant has %lld runs queued or running (max_active_runs %d)",
		             (long long)n, max_active);
		return STORE_LIMIT;
	}
	return STORE_OK;
}

/* Insert j as a queued run of the tenant (its row and "sandbox.run" event);
 * id_out gets its id. */
static enum store_rc queue_run(struct store *st, const char *tenant_id, const char *actor,
                               const struct store_run_job *j, const char *comparison_id,
                               const char *side, int repeat, char id_out[33])
{
	struct store_run r;
	struct store_run_queue q;
	char now[32];
	char *text;
	json_t *job;
	enum store_rc rc;

	/* a side of a comparison tells its runner which repeat it is (the
	 * spec's "repeat"), so that the agent may know it (OLIVARES_REPEAT) */
	job = json_deep_copy(j->job);
	if (job && side && json_is_object(json_object_get(job, "spec")))
		json_object_set_new_nocheck(json_object_get(job, "spec"), "repeat",
		                            json_integer(repeat));
	text = job ? json_dumps(job, JSON_COMPACT) : NULL;
	json_decref(job);
	if (!text) {
		store_seterr(st, "run job: the job object does not encode");
		return STORE_ERROR;
	}
	memset(&r, 0, sizeof r);
	r.kind = j->kind;
	r.scenario_id = j->scenario_id;
	r.scenario_version = j->scenario_version;
	r.scenario_digest = j->scenario_digest;
	r.variant = j->variant;
	r.status = "queued";
	/* not known until the run ends: '' (read as null) in NOT NULL columns */
	r.runner = "";
	r.output_digest = "";
	r.started_at = "";
	r.finished_at = "";
	r.backend = j->backend;
	r.steps_total = j->steps_total;
	r.suite = j->suite;
	r.suite_version = j->suite_version;
	r.session_id = j->session_id;
	r.agent_name = j->agent_name;
	r.mocks_digest = j->mocks_digest;
	r.record = j->record;
	r.outputs = json_array();
	store_now_iso(now);
	q.queued_at = now;
	q.job = text;
	q.comparison_id = comparison_id;
	rc = store_run_insert_queued(st, tenant_id, actor, &r, &q, id_out);
	json_decref(r.outputs);
	free(text);
	if (!rc && side) {
		struct param p[] = {PT(side), PI(repeat), PT(tenant_id), PT(id_out)};

		rc = store_q_exec(st,
		                  "UPDATE runs SET comparison_side = ?, repeat_index = ? WHERE "
		                  "tenant_id = ? AND id = ?",
		                  p, NPARAMS(p), NULL, NULL);
	}
	return rc;
}

static enum store_rc tx_enqueue(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	char id[33];
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	rc = active_room(st, a->tenant_id, 1, a->max_active);
	if (!rc)
		rc = queue_run(st, a->tenant_id, a->actor, a->job, NULL, NULL, 0, id);
	if (!rc)
		rc = store_run_read(st, a->tenant_id, id, &a->out);
	if (!rc)
		rc = store_idem_insert(st, a->tenant_id, a->idem, a->out);
	return rc;
}

enum store_rc store_run_enqueue(struct store *st, const char *tenant_id, const char *actor_token_id,
                                const struct store_run_job *job, int max_active,
                                const struct store_idem *idem, json_t **out)
{
	struct job_arg a = {.tenant_id = tenant_id,
	                    .actor = actor_token_id,
	                    .job = job,
	                    .max_active = max_active,
	                    .idem = idem};

	*out = NULL;
	if (!tenant_id || max_active < 1) {
		store_seterr(st, "run job: a tenant and max_active >= 1 are required");
		return STORE_ERROR;
	}
	if (job_check(st, job))
		return STORE_ERROR;
	return store_tx_json(st, tx_enqueue, &a, &a.out, out);
}

static enum store_rc tx_comparison_enqueue(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	const struct store_comparison_job *cj = a->cj;
	char cid[33], bid[33], kid[33], first_b[33], first_k[33], now[32];
	int repeats = cj->repeats > 0 ? cj->repeats : 1;
	json_t *ids, *bl, *kl;
	char *ids_text;
	enum store_rc rc;
	int r;

	json_decref(a->out);
	a->out = NULL;
	rc = active_room(st, a->tenant_id, 2 * repeats, a->max_active);
	if (!rc)
		rc = store_new_id(st, cid);
	if (rc)
		return rc;
	bl = json_array();
	kl = json_array();
	ids = json_pack("{s:o, s:o}", "baseline", bl, "candidate", kl);
	for (r = 0; r < repeats && !rc; r++) {
		rc = queue_run(st, a->tenant_id, a->actor, cj->baseline, cid, "baseline", r, bid);
		if (!rc)
			rc = queue_run(st, a->tenant_id, a->actor, cj->candidate, cid, "candidate",
			               r, kid);
		if (rc)
			break;
		json_array_append_new(bl, json_string(bid));
		json_array_append_new(kl, json_string(kid));
		if (r == 0) {
			memcpy(first_b, bid, sizeof first_b);
			memcpy(first_k, kid, sizeof first_k);
		}
	}
	ids_text = rc ? NULL : json_dumps(ids, JSON_COMPACT);
	json_decref(ids);
	if (rc)
		return rc;
	if (!ids_text) {
		store_seterr(st, "comparison job: the run ids do not encode");
		return STORE_ERROR;
	}
	store_now_iso(now);
	{
		struct param p[] = {PT(cid),
		                    PT(a->tenant_id),
		                    PT(cj->scenario_id),
		                    PI(cj->scenario_version),
		                    PT(cj->suite),
		                    PR(1, cj->tolerance),
		                    PT(first_b),
		                    PT(first_k),
		                    PT(a->actor),
		                    PT(now),
		                    PI(repeats),
		                    PT(ids_text)};

		rc = store_q_exec(st,
		                  "INSERT INTO comparison_jobs (id, tenant_id, scenario_id, "
		                  "scenario_version, suite, tolerance, baseline_run_id, "
		                  "candidate_run_id, created_by, created_at, repeats, run_ids) "
		                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	free(ids_text);
	if (!rc)
		rc = store_comparison_read(st, a->tenant_id, cid, &a->out);
	if (!rc)
		rc = store_idem_insert(st, a->tenant_id, a->idem, a->out);
	return rc;
}

enum store_rc store_comparison_enqueue(struct store *st, const char *tenant_id,
                                       const char *actor_token_id,
                                       const struct store_comparison_job *cj, int max_active,
                                       const struct store_idem *idem, json_t **out)
{
	struct job_arg a = {.tenant_id = tenant_id,
	                    .actor = actor_token_id,
	                    .cj = cj,
	                    .max_active = max_active,
	                    .idem = idem};

	*out = NULL;
	if (!tenant_id || max_active < 1 || !cj ||
	    !store_text_ok(cj->scenario_id, 1, MODEL_MAX_SCENARIO_REF_BYTES) ||
	    !store_text_ok(cj->suite, 1, MODEL_MAX_SUITE_NAME_BYTES) ||
	    !(cj->tolerance >= 0.0 && cj->tolerance <= 1.0) || cj->repeats < 0 ||
	    cj->repeats > MODEL_STATS_MAX_REPEATS) {
		store_seterr(st,
		             "comparison job: a tenant, max_active >= 1, a scenario_id, a "
		             "suite (1..%d bytes), a tolerance in [0, 1] and repeats 1..%d are "
		             "required",
		             MODEL_MAX_SUITE_NAME_BYTES, MODEL_STATS_MAX_REPEATS);
		return STORE_ERROR;
	}
	if (job_check(st, cj->baseline) || job_check(st, cj->candidate))
		return STORE_ERROR;
	return store_tx_json(st, tx_comparison_enqueue, &a, &a.out, out);
}

/* ---- claiming ------------------------------------------------------------------ */

static const struct colspec pick_tenant_cols[] = {{"id", C_TEXT}};
static const struct colspec pick_run_cols[] = {
    {"id", C_TEXT}, {"tenant_id", C_TEXT}, {"backend", C_TEXT}, {"job", C_JSON}};

/*
 * The fair tenant: of the tenants with a queued run on one of the
 * backends, the one with the fewest runs running, then the one whose
 * oldest such run is oldest. Both subqueries are short ranges of
 * runs_tenant_status_ord (the oldest queued run is its first entry that
 * matches), so the cost grows with the number of tenants, not of queued
 * runs. Crosses tenants: a claim is the operator's.
 */
#define PICK_TENANT                                                                                \
	"SELECT id FROM (SELECT t.id AS id, (SELECT COUNT(*) FROM runs x WHERE x.tenant_id = "     \
	"t.id AND x.status = 'running') AS busy, (SELECT q.ord FROM runs q WHERE q.tenant_id = "   \
	"t.id AND q.status = 'queued' AND q.backend IN (?, ?, ?, ?) ORDER BY q.ord LIMIT 1) AS "   \
	"first FROM tenants t) s WHERE first IS NOT NULL ORDER BY busy, first LIMIT 1"
#define PICK_RUN                                                                                   \
	"SELECT id, tenant_id, backend, job FROM runs WHERE tenant_id = ? AND status = 'queued' "  \
	"AND backend IN (?, ?, ?, ?) ORDER BY ord LIMIT 1"
/* every tenant's oldest, when the fair tenant's queued runs are all being
 * claimed by other executors (PostgreSQL only: SQLite claims one at a time) */
#define PICK_ANY                                                                                   \
	"SELECT id, tenant_id, backend, job FROM runs WHERE status = 'queued' AND backend IN (?, " \
	"?, ?, ?) ORDER BY ord LIMIT 1 FOR UPDATE SKIP LOCKED"

/* One guess at the run to claim: *pick the row (id, tenant_id, backend,
 * job), locked on PostgreSQL; STORE_NOT_FOUND when nothing is queued. */
static enum store_rc claim_pick(struct store *st, struct job_arg *a, json_t **pick)
{
	const char **b = a->backends;
	struct param pb[] = {PT(b[0]), PT(b[1]), PT(b[2]), PT(b[3])};
	json_t *t = NULL;
	enum store_rc rc;
	int pg = st->dialect == DIALECT_POSTGRES;

	*pick = NULL;
	rc = store_q_row(st, PICK_TENANT, pb, NPARAMS(pb), pick_tenant_cols,
	                 NPARAMS(pick_tenant_cols), &t);
	if (rc)
		return rc;
	{
		struct param p[] = {PT(jtext(t, "id")), PT(b[0]), PT(b[1]), PT(b[2]), PT(b[3])};

		rc = store_q_row(st, pg ? PICK_RUN " FOR UPDATE SKIP LOCKED" : PICK_RUN, p,
		                 NPARAMS(p), pick_run_cols, NPARAMS(pick_run_cols), pick);
	}
	json_decref(t);
	if (rc == STORE_NOT_FOUND && pg) {
		struct param p[] = {PT(b[0]), PT(b[1]), PT(b[2]), PT(b[3])};

		rc = store_q_row(st, PICK_ANY, p, NPARAMS(p), pick_run_cols, NPARAMS(pick_run_cols),
		                 pick);
	}
	return rc;
}

static void claim_reset(struct store_claim *c)
{
	json_decref(c->run);
	json_decref(c->job);
	memset(c, 0, sizeof *c);
}

static enum store_rc tx_claim(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	struct store_claim *c = &a->claim;
	json_t *pick = NULL;
	const char *id, *tenant, *backend;
	char now[32];
	SQLLEN rows = 0;
	enum store_rc rc;
	int attempt;

	claim_reset(c);
	store_now_iso(now);
	{
		struct param p[] = {PT(now), PT(a->executor_id)};

		/* a write first: on SQLite the transaction then holds the
		 * write lock before it reads the queue (a claim waits its turn
		 * instead of failing to upgrade a stale read); on both, a claim
		 * is a sign of life of its executor */
		rc = store_q_exec(st, "UPDATE executors SET heartbeat_at = ? WHERE id = ?", p,
		                  NPARAMS(p), NULL, NULL);
		if (rc)
			return rc;
	}
	for (attempt = 0; attempt < CLAIM_PICKS; attempt++) {
		rc = claim_pick(st, a, &pick);
		if (rc)
			return rc;
		id = json_string_value(json_object_get(pick, "id"));
		tenant = json_string_value(json_object_get(pick, "tenant_id"));
		backend = json_string_value(json_object_get(pick, "backend"));
		if (!store_is_lower_hex(id, MODEL_ID_LEN) ||
		    !store_is_lower_hex(tenant, MODEL_ID_LEN) || !backend ||
		    strlen(backend) >= sizeof c->backend) {
			json_decref(pick);
			store_seterr(st, "claim: malformed run row in the database");
			return STORE_ERROR;
		}
		{
			struct param p[] = {PT(a->executor_id), PT(now), PT(now), PT(id)};

			/* the guard makes the claim exactly-once whatever the pick saw */
			rc = store_q_exec(
			    st,
			    "UPDATE runs SET status = 'running', executor = ?, "
			    "started_at = ?, heartbeat_at = ? WHERE id = ? AND status = "
			    "'queued'",
			    p, NPARAMS(p), NULL, &rows);
		}
		if (!rc && rows == 1) {
			memcpy(c->run_id, id, 33);
			memcpy(c->tenant_id, tenant, 33);
			snprintf(c->backend, sizeof c->backend, "%s", backend);
			c->job = json_incref(json_object_get(pick, "job"));
			json_decref(pick);
			return store_run_read(st, c->tenant_id, c->run_id, &c->run);
		}
		json_decref(pick);
		if (rc)
			return rc;
	}
	return lost_race(st, "claim");
}

enum store_rc store_run_claim(struct store *st, const char *executor_id, const char *backends,
                              struct store_claim *out)
{
	struct job_arg a = {.executor_id = executor_id};
	enum store_rc rc;
	int n;

	memset(out, 0, sizeof *out);
	n = store_backends_parse(backends, a.backends);
	if (!store_executor_id_ok(executor_id) || n < 0) {
		store_seterr(st, "claim: an executor id and a comma list of known backends are "
		                 "required");
		return STORE_ERROR;
	}
	if (n == 0)
		return STORE_NOT_FOUND;
	rc = store_tx(st, tx_claim, &a);
	if (rc) {
		claim_reset(&a.claim);
		return rc;
	}
	*out = a.claim;
	return STORE_OK;
}

void store_claim_clear(struct store_claim *c)
{
	if (c)
		claim_reset(c);
}

/* ---- the executor's run: heartbeat, append, finish ------------------------------ */

static const struct colspec held_cols[] = {
    {"tenant_id", C_TEXT}, {"comparison_id", C_TEXT}, {"cancel_requested", C_BOOL}};

/*
 * Heartbeat run_id if executor_id holds it (status running, its executor):
 * the guarded write comes first, so on PostgreSQL the row is locked for
 * the rest of the transaction (a sweep waits, then finds it fresh) and on
 * SQLite the write lock is held. *held (may be NULL) gets its tenant_id,
 * comparison_id and cancel_requested. STORE_NOT_FOUND when it is not held.
 */
static enum store_rc run_hold(struct store *st, const char *run_id, const char *executor_id,
                              json_t **held)
{
	char now[32];
	struct param p[] = {PT(now), PT(run_id), PT(executor_id)};
	struct param q[] = {PT(run_id)};
	SQLLEN rows = 0;
	enum store_rc rc;

	if (held)
		*held = NULL;
	store_now_iso(now);
	rc =
	    store_q_exec(st,
	                 "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND status = 'running' AND "
	                 "executor = ?",
	                 p, NPARAMS(p), NULL, &rows);
	if (rc)
		return rc;
	if (rows == 0) {
		store_seterr(st, "run: not running under this executor");
		return STORE_NOT_FOUND;
	}
	if (!held)
		return STORE_OK;
	rc = store_q_row(st,
	                 "SELECT tenant_id, comparison_id, cancel_requested FROM runs WHERE id = ?",
	                 q, NPARAMS(q), held_cols, NPARAMS(held_cols), held);
	if (!rc && !store_is_lower_hex(jtext(*held, "tenant_id"), MODEL_ID_LEN)) {
		store_seterr(st, "run: malformed run row in the database");
		rc = STORE_ERROR;
	}
	return rc;
}

static enum store_rc tx_heartbeat(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	json_t *held = NULL;
	enum store_rc rc;

	a->flag = 0;
	rc = run_hold(st, a->run_id, a->executor_id, &held);
	if (!rc)
		a->flag = json_is_true(json_object_get(held, "cancel_requested"));
	json_decref(held);
	return rc;
}

static int held_args_ok(const char *run_id, const char *executor_id)
{
	return store_is_lower_hex(run_id, MODEL_ID_LEN) && store_executor_id_ok(executor_id);
}

enum store_rc store_run_heartbeat(struct store *st, const char *run_id, const char *executor_id,
                                  int *cancel)
{
	struct job_arg a = {.run_id = run_id, .executor_id = executor_id};
	enum store_rc rc;

	*cancel = 0;
	if (!held_args_ok(run_id, executor_id))
		return STORE_NOT_FOUND;
	rc = store_tx(st, tx_heartbeat, &a);
	if (!rc)
		*cancel = a.flag;
	return rc;
}

static const struct colspec seq_cols[] = {{"seq", C_INT}};

/* The seqs stored for the tenant's run, ascending, as a JSON array of
 * {"seq"} (a new reference in *out). */
static enum store_rc stored_seqs(struct store *st, const char *tenant_id, const char *run_id,
                                 json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(run_id)};
	enum store_rc rc;

	*out = json_array();
	rc = store_q_rows(st,
	                  "SELECT seq FROM run_outputs WHERE tenant_id = ? AND run_id = ? "
	                  "ORDER BY seq",
	                  p, NPARAMS(p), seq_cols, NPARAMS(seq_cols), *out);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* 1 when the array of {"seq"} rows stored (ascending) holds seq. */
static int seq_stored(json_t *stored, json_int_t seq)
{
	size_t lo = 0, hi = json_array_size(stored), mid;
	json_int_t v;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		v = json_integer_value(json_object_get(json_array_get(stored, mid), "seq"));
		if (v == seq)
			return 1;
		if (v < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* steps_done of the run: the outputs stored now. */
static enum store_rc steps_done_set(struct store *st, const char *tenant_id, const char *run_id)
{
	struct param p[] = {PT(tenant_id), PT(run_id), PT(run_id)};

	return store_q_exec(
	    st,
	    "UPDATE runs SET steps_done = (SELECT COUNT(*) FROM run_outputs o WHERE "
	    "o.tenant_id = ? AND o.run_id = ?) WHERE id = ?",
	    p, NPARAMS(p), NULL, NULL);
}

static enum store_rc tx_append(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	json_t *held = NULL, *stored = NULL, *o;
	const char *tenant;
	json_int_t last = -1, seq;
	enum store_rc rc;
	size_t i;

	rc = run_hold(st, a->run_id, a->executor_id, &held);
	if (rc)
		goto out;
	tenant = jtext(held, "tenant_id");
	rc = stored_seqs(st, tenant, a->run_id, &stored);
	if (rc)
		goto out;
	if (json_array_size(stored))
		last = json_integer_value(
		    json_object_get(json_array_get(stored, json_array_size(stored) - 1), "seq"));
	json_array_foreach(a->outputs, i, o)
	{
		seq = json_integer_value(json_object_get(o, "seq"));
		if (seq <= last) {
			store_seterr(st, "run append: output %zu has seq %lld, not above %lld", i,
			             (long long)seq, (long long)last);
			rc = STORE_ERROR;
			goto out;
		}
		last = seq;
	}
	rc = store_outputs_insert(st, a->run_id, tenant, a->outputs);
	if (!rc)
		rc = steps_done_set(st, tenant, a->run_id);
out:
	json_decref(held);
	json_decref(stored);
	return rc;
}

enum store_rc store_run_append(struct store *st, const char *run_id, const char *executor_id,
                               json_t *outputs)
{
	struct job_arg a = {.run_id = run_id, .executor_id = executor_id, .outputs = outputs};

	if (!held_args_ok(run_id, executor_id))
		return STORE_NOT_FOUND;
	if (!json_is_array(outputs)) {
		store_seterr(st, "run append: outputs must be an array");
		return STORE_ERROR;
	}
	if (store_outputs_check(st, outputs))
		return STORE_ERROR;
	return store_tx(st, tx_append, &a);
}

/* A recorded run's session, made with the run's end: stored for the
 * run's tenant and linked as its session_id, or nothing at all. */
static enum store_rc link_recorded(struct store *st, const char *tenant, const char *run_id,
                                   json_t *session)
{
	char sid[33];
	enum store_rc rc;

	rc = store_session_insert(st, tenant, "olivares-executor", "sandbox.session.record",
	                          session, run_id, sid, NULL);
	if (rc)
		return rc;
	{
		struct param p[] = {PT(sid), PT(tenant), PT(run_id)};

		return store_q_exec(st,
		                    "UPDATE runs SET session_id = ? WHERE tenant_id = ? AND id = ?",
		                    p, NPARAMS(p), NULL, NULL);
	}
}

static enum store_rc tx_finish(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	const struct store_run *r = a->run;
	json_t *held = NULL, *stored = NULL, *missing = json_array(), *o;
	char *details = NULL, *divergence = NULL;
	const char *tenant;
	SQLLEN rows = 0;
	enum store_rc rc;
	size_t i;

	json_decref(a->out);
	a->out = NULL;
	a->comparison_id[0] = '\0';
	rc = run_hold(st, a->run_id, a->executor_id, &held);
	if (rc)
		goto out;
	tenant = jtext(held, "tenant_id");
	rc = stored_seqs(st, tenant, a->run_id, &stored);
	if (rc)
		goto out;
	json_array_foreach(r->outputs, i, o)
	{
		if (!seq_stored(stored, json_integer_value(json_object_get(o, "seq"))))
			json_array_append(missing, o);
	}
	rc = store_outputs_insert(st, a->run_id, tenant, missing);
	if (rc)
		goto out;
	rc = store_run_json_text(st, r, &details, &divergence);
	if (rc)
		goto out;
	{
		struct param p[] = {PT(r->status),
		                    PT(r->runner),
		                    PT(r->backend),
		                    PI(r->isolated ? 1 : 0),
		                    PI(r->destroyed ? 1 : 0),
		                    PI(r->steps_total),
		                    PI(r->steps_ok),
		                    PI(r->steps_error),
		                    PI(r->scored ? 1 : 0),
		                    PR(r->scored, r->score),
		                    PIN(r->scored, r->passed ? 1 : 0),
		                    PT(details),
		                    PT(r->reason),
		                    PT(r->output_digest),
		                    PT(r->finished_at),
		                    PT(divergence),
		                    PT(r->shutdown),
		                    PT(r->agent_sha256),
		                    PI(r->egress_requests),
		                    PT(r->record_error),
		                    PT(tenant),
		                    PT(a->run_id),
		                    PT(a->run_id),
		                    PT(a->executor_id)};

		/* score and passed only for a scored run, as store_run_insert:
		 * an unscored run never reads as a pass */
		rc = store_q_exec(
		    st,
		    "UPDATE runs SET status = ?, runner = ?, backend = ?, isolated = ?, destroyed "
		    "= ?, "
		    "steps_total = ?, steps_ok = ?, steps_error = ?, scored = ?, score = ?, passed "
		    "= ?, "
		    "score_details = ?, reason = ?, output_digest = ?, finished_at = ?, divergence "
		    "= ?, "
		    "shutdown = ?, agent_sha256 = ?, egress_requests = ?, record_error = ?, job = "
		    "NULL, steps_done = "
		    "(SELECT COUNT(*) "
		    "FROM run_outputs o "
		    "WHERE "
		    "o.tenant_id = ? AND o.run_id = ?) WHERE id = ? AND status = 'running' AND "
		    "executor = ?",
		    p, NPARAMS(p), NULL, &rows);
	}
	if (!rc && rows != 1)
		rc = lost_race(st, "run finish");
	if (!rc && r->session)
		rc = link_recorded(st, tenant, a->run_id, r->session);
	if (rc)
		goto out;
	snprintf(a->comparison_id, sizeof a->comparison_id, "%s", jtext(held, "comparison_id"));
	/* the ended run read back only for a caller that asked for it: the
	 * executor does not, and the read would hold SQLite's write lock */
	if (a->want_out)
		rc = store_run_read(st, tenant, a->run_id, &a->out);
	if (!rc)
		rc = store_evidence_link_run(st, tenant, a->run_id);
out:
	free(details);
	free(divergence);
	json_decref(held);
	json_decref(stored);
	json_decref(missing);
	return rc;
}

/* After a commit that ended a side of a comparison: its verdict, when the
 * other side has ended too. A failure here leaves the comparison pending
 * for the next sweep (store_runs_sweep settles what is left), so it does
 * not make the call that ended the run fail. */
static void settle_after(struct store *st, const char *comparison_id)
{
	char err[sizeof st->err];

	if (!comparison_id[0])
		return;
	memcpy(err, st->err, sizeof err);
	(void)store_comparison_settle(st, comparison_id);
	memcpy(st->err, err, sizeof err);
}

enum store_rc store_run_finish(struct store *st, const char *run_id, const char *executor_id,
                               const struct store_run *run, json_t **out)
{
	struct job_arg a = {.run_id = run_id, .executor_id = executor_id, .want_out = out != NULL};
	struct store_run shape, copy;
	json_t *empty = NULL, *res = NULL;
	enum store_rc rc;

	if (out)
		*out = NULL;
	if (!held_args_ok(run_id, executor_id))
		return STORE_NOT_FOUND;
	if (!run || !run->status ||
	    (strcmp(run->status, "completed") != 0 && strcmp(run->status, "failed") != 0 &&
	     strcmp(run->status, "cancelled") != 0)) {
		store_seterr(st, "run finish: status must be completed, failed or cancelled");
		return STORE_ERROR;
	}
	/* kind and started_at are the queued run's: store_run_check requires
	 * them, so stand-ins fill them; they are not written */
	shape = *run;
	if (!shape.kind)
		shape.kind = "simulation";
	if (!shape.started_at)
		shape.started_at = "";
	shape.session_id = NULL;
	rc = store_run_check(st, &shape, &copy, &empty);
	if (rc)
		return rc;
	a.run = &copy;
	rc = store_tx_json(st, tx_finish, &a, &a.out, &res);
	json_decref(empty);
	if (rc)
		return rc;
	settle_after(st, a.comparison_id);
	if (out)
		*out = res;
	else
		json_decref(res);
	return STORE_OK;
}

/* ---- cancel ------------------------------------------------------------------------ */

static const struct colspec status_cols[] = {{"status", C_TEXT}};

static enum store_rc tx_cancel(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	char now[32], nothing[65];
	const char *before;
	json_t *row = NULL, *detail;
	SQLLEN rows = 0;
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	a->comparison_id[0] = '\0';
	store_now_iso(now);
	rc = outputs_digest(st, NULL, nothing);
	if (rc)
		return rc;
	{
		struct param p[] = {PT(now), PT(nothing), PT(a->tenant_id), PT(a->run_id)};

		/* a write first (guarded by the status it changes): a claim that
		 * got there first wins, and the run is then cancelled running */
		rc = store_q_exec(st,
		                  "UPDATE runs SET status = 'cancelled', finished_at = ?, reason = "
		                  "'cancelled before it started', output_digest = ?, runner = '', "
		                  "record_error = CASE WHEN record_asked = 1 THEN 'the run did not "
		                  "run: nothing to record' END, "
		                  "job = NULL WHERE tenant_id = ? AND id = ? AND status = 'queued'",
		                  p, NPARAMS(p), NULL, &rows);
	}
	if (rc)
		return rc;
	before = "queued";
	if (rows == 0) {
		struct param p[] = {PT(a->tenant_id), PT(a->run_id)};

		rc = store_q_exec(
		    st,
		    "UPDATE runs SET cancel_requested = 1 WHERE tenant_id = ? AND id = ? "
		    "AND status = 'running'",
		    p, NPARAMS(p), NULL, &rows);
		if (rc)
			return rc;
		before = "running";
	}
	if (rows == 0) {
		struct param p[] = {PT(a->tenant_id), PT(a->run_id)};

		rc = store_q_row(st, "SELECT status FROM runs WHERE tenant_id = ? AND id = ?", p,
		                 NPARAMS(p), status_cols, NPARAMS(status_cols), &row);
		if (rc)
			return rc;
		rc = is_terminal(jtext(row, "status")) ? STORE_CONFLICT
		                                       : lost_race(st, "run cancel");
		if (rc == STORE_CONFLICT)
			store_seterr(st, "run cancel: the run has already ended (%s)",
			             jtext(row, "status"));
		json_decref(row);
		return rc;
	}
	detail = json_pack("{s:s}", "status_before", before);
	rc =
	    store_audit_insert(st, a->tenant_id, a->actor, "sandbox.run.cancel", a->run_id, detail);
	json_decref(detail);
	if (!rc)
		rc = store_run_read(st, a->tenant_id, a->run_id, &a->out);
	/* a run cancelled before it started has ended: its evidence link */
	if (!rc && strcmp(before, "queued") == 0)
		rc = store_evidence_link_run(st, a->tenant_id, a->run_id);
	if (!rc && strcmp(before, "queued") == 0)
		snprintf(a->comparison_id, sizeof a->comparison_id, "%s",
		         jtext(a->out, "comparison_id"));
	return rc;
}

enum store_rc store_run_cancel(struct store *st, const char *tenant_id, const char *actor_token_id,
                               const char *id, json_t **out)
{
	struct job_arg a = {.tenant_id = tenant_id, .actor = actor_token_id, .run_id = id};
	json_t *res = NULL;
	enum store_rc rc;

	*out = NULL;
	if (!tenant_id || !store_is_lower_hex(id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	rc = store_tx_json(st, tx_cancel, &a, &a.out, &res);
	if (rc)
		return rc;
	settle_after(st, a.comparison_id);
	*out = res;
	return STORE_OK;
}

/* ---- the sweep ------------------------------------------------------------------- */

static const struct colspec id_cols[] = {{"id", C_TEXT}};
static const struct colspec lost_cols[] = {{"tenant_id", C_TEXT},
                                           {"executor", C_TEXT},
                                           {"heartbeat_at", C_TEXT},
                                           {"comparison_id", C_TEXT}};

static enum store_rc tx_sweep_list(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	struct param p[] = {PT(a->cutoff), PI(SWEEP_BATCH)};

	json_decref(a->out);
	a->out = NULL;
	/* every tenant's: the sweep is the operator's */
	return store_q_list(st,
	                    "SELECT id FROM runs WHERE status = 'running' AND heartbeat_at < ? "
	                    "ORDER BY heartbeat_at LIMIT ?",
	                    p, NPARAMS(p), id_cols, NPARAMS(id_cols), "runs", &a->out);
}

/* End the run a->run_id as lost, if it still is: running, heartbeat older
 * than the cutoff (a heartbeat since the list was read keeps it). */
static enum store_rc tx_sweep_one(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	struct param p[] = {PT(a->run_id), PT(a->cutoff)};
	json_t *row = NULL, *outputs = json_array(), *o;
	char now[32], digest[65], reason[256];
	long long now_ms, hb_ms;
	const char *tenant, *hb;
	int ok = 0, err = 0;
	SQLLEN rows = 0;
	enum store_rc rc;
	size_t i;

	a->flag = 0;
	a->comparison_id[0] = '\0';
	rc = store_q_row(st,
	                 st->dialect == DIALECT_POSTGRES
	                     ? "SELECT tenant_id, executor, heartbeat_at, comparison_id FROM runs "
	                       "WHERE id = ? AND status = 'running' AND heartbeat_at < ? FOR UPDATE"
	                     : "SELECT tenant_id, executor, heartbeat_at, comparison_id FROM runs "
	                       "WHERE id = ? AND status = 'running' AND heartbeat_at < ?",
	                 p, NPARAMS(p), lost_cols, NPARAMS(lost_cols), &row);
	if (rc == STORE_NOT_FOUND) {
		rc = STORE_OK;
		goto out;
	}
	if (rc)
		goto out;
	tenant = jtext(row, "tenant_id");
	hb = jtext(row, "heartbeat_at");
	rc = store_run_outputs_read(st, tenant, a->run_id, outputs);
	if (!rc)
		rc = outputs_digest(st, outputs, digest);
	if (rc)
		goto out;
	json_array_foreach(outputs, i, o)
	{
		if (strcmp(jtext(o, "status"), "ok") == 0)
			ok++;
		else
			err++;
	}
	store_now_iso(now);
	if (store_iso_ms(now, &now_ms) || store_iso_ms(hb, &hb_ms)) {
		store_seterr(st, "sweep: malformed heartbeat time in the database");
		rc = STORE_ERROR;
		goto out;
	}
	snprintf(reason, sizeof reason, "executor %s lost: no heartbeat for %lld s",
	         jtext(row, "executor"), (now_ms - hb_ms) / 1000);
	{
		struct param u[] = {PT(reason), PI(ok),  PI(err),       PI(ok + err),
		                    PT(digest), PT(now), PT(a->run_id), PT(hb)};

		/* nobody saw the jail torn down: isolated and destroyed 0; nor
		 * the gateway's count: a run whose spec allowed egress is never
		 * called hermetic (-1, unknown; the text test errs that way
		 * only) */
		rc = store_q_exec(st,
		                  "UPDATE runs SET status = 'failed', reason = ?, isolated = 0, "
		                  "destroyed = 0, steps_ok = ?, steps_error = ?, steps_done = ?, "
		                  "output_digest = ?, finished_at = ?, egress_requests = CASE WHEN "
		                  "job LIKE '%\"egress_allow\"%' THEN -1 ELSE egress_requests END, "
		                  "record_error = CASE WHEN record_asked = 1 THEN 'the run did not "
		                  "complete: nothing recorded' END, "
		                  "job = NULL WHERE id = ? AND status = 'running' AND "
		                  "heartbeat_at = ?",
		                  u, NPARAMS(u), NULL, &rows);
	}
	if (!rc && rows != 1)
		rc = lost_race(st, "sweep");
	if (!rc)
		rc = store_evidence_link_run(st, tenant, a->run_id);
	if (rc)
		goto out;
	a->flag = 1;
	snprintf(a->comparison_id, sizeof a->comparison_id, "%s", jtext(row, "comparison_id"));
out:
	json_decref(row);
	json_decref(outputs);
	return rc;
}

static enum store_rc tx_unsettled(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	struct param p[] = {PI(SWEEP_BATCH)};

	json_decref(a->out);
	a->out = NULL;
	/* every tenant's comparisons whose runs have all ended and that have
	 * no verdict yet (a settle that failed after its run's commit) */
	return store_q_list(
	    st,
	    "SELECT j.id FROM comparison_jobs j "
	    "JOIN runs b ON b.tenant_id = j.tenant_id AND b.id = j.baseline_run_id "
	    "JOIN runs k ON k.tenant_id = j.tenant_id AND k.id = j.candidate_run_id "
	    "WHERE b.status IN ('completed', 'failed', 'degraded', 'cancelled') "
	    "AND k.status IN ('completed', 'failed', 'degraded', 'cancelled') "
	    "AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.tenant_id = j.tenant_id AND "
	    "x.status IN ('queued', 'running') AND x.comparison_id = j.id) "
	    "AND NOT EXISTS (SELECT 1 FROM comparisons c WHERE c.id = j.id) ORDER BY j.ord LIMIT ?",
	    p, NPARAMS(p), id_cols, NPARAMS(id_cols), "comparisons", &a->out);
}

/*
 * One transaction per lost run: each end stands alone (one that fails is
 * retried by the next sweep without undoing the others), and SQLite's
 * write lock is held for one run's outputs at a time, not for the whole
 * batch while the API queues runs.
 */
enum store_rc store_runs_sweep(struct store *st, int lease_seconds, int *ended)
{
	struct job_arg a = {0};
	json_t *list = NULL, *e;
	enum store_rc rc;
	size_t i;
	int n = 0;

	if (ended)
		*ended = 0;
	if (lease_seconds < 1) {
		store_seterr(st, "sweep: a lease >= 1 s is required");
		return STORE_ERROR;
	}
	store_iso_from_now(-1000LL * lease_seconds, a.cutoff);
	rc = store_read_json(st, tx_sweep_list, &a, &a.out, &list);
	if (rc)
		return rc;
	json_array_foreach(json_object_get(list, "runs"), i, e)
	{
		a.run_id = jtext(e, "id");
		rc = store_tx(st, tx_sweep_one, &a);
		if (rc)
			break;
		n += a.flag;
	}
	json_decref(list);
	if (ended)
		*ended = n;
	if (rc)
		return rc;
	rc = store_read_json(st, tx_unsettled, &a, &a.out, &list);
	if (rc)
		return rc;
	json_array_foreach(json_object_get(list, "comparisons"), i, e)
	{
		rc = store_comparison_settle(st, jtext(e, "id"));
		if (rc == STORE_NOT_FOUND)
			rc = STORE_OK;
		if (rc)
			break;
	}
	json_decref(list);
	return rc;
}

/* ---- a comparison's verdict ---------------------------------------------------------- */

static const struct colspec cjob_cols[] = {
    {"tenant_id", C_TEXT},        {"scenario_id", C_TEXT},
    {"scenario_version", C_INT},  {"suite", C_TEXT},
    {"tolerance", C_REAL},        {"baseline_run_id", C_TEXT},
    {"candidate_run_id", C_TEXT}, {"created_by", C_TEXT},
    {"repeats", C_INT},           {"run_ids", C_JSON}};

/* The runs of one comparison as settle reads them: each run object and
 * its outputs, per side in repeat order. */
struct settle_runs {
	int repeats;
	json_t *run[2][MODEL_STATS_MAX_REPEATS];
	json_t *outputs[2][MODEL_STATS_MAX_REPEATS];
	struct model_stats_run side[2][MODEL_STATS_MAX_REPEATS];
};

static void settle_runs_free(struct settle_runs *sr)
{
	int s, r;

	for (s = 0; s < 2; s++)
		for (r = 0; r < MODEL_STATS_MAX_REPEATS; r++) {
			json_decref(sr->run[s][r]);
			json_decref(sr->outputs[s][r]);
		}
}

/* Read every run of the comparison job cj into sr: STORE_NOT_FOUND while
 * one has not ended. run_ids absent (a comparison queued before repeats)
 * is the one pair of baseline_run_id / candidate_run_id. */
static enum store_rc settle_read(struct store *st, const char *tenant, json_t *cj,
                                 struct settle_runs *sr)
{
	static const char *const sides[2] = {"baseline", "candidate"};
	static const char *const firsts[2] = {"baseline_run_id", "candidate_run_id"};
	json_t *ids = json_object_get(cj, "run_ids"), *list;
	struct model_stats_run *m;
	const char *id;
	enum store_rc rc;
	int s, r;

	if (!json_is_object(ids))
		ids = NULL;
	sr->repeats = ids ? (int)json_integer_value(json_object_get(cj, "repeats")) : 1;
	if (sr->repeats < 1 || sr->repeats > MODEL_STATS_MAX_REPEATS) {
		store_seterr(st, "comparison settle: repeats out of range");
		return STORE_ERROR;
	}
	for (s = 0; s < 2; s++) {
		list = json_object_get(ids, sides[s]);
		for (r = 0; r < sr->repeats; r++) {
			id =
			    ids ? json_string_value(json_array_get(list, r)) : jtext(cj, firsts[s]);
			if (!id) {
				store_seterr(st, "comparison settle: a run id is missing");
				return STORE_ERROR;
			}
			rc = store_run_read(st, tenant, id, &sr->run[s][r]);
			if (rc)
				return rc;
			if (!is_terminal(jtext(sr->run[s][r], "status"))) {
				store_seterr(st, "comparison settle: a run has not ended yet");
				return STORE_NOT_FOUND;
			}
			sr->outputs[s][r] = json_array();
			rc = store_run_outputs_read(st, tenant, id, sr->outputs[s][r]);
			if (rc)
				return rc;
			m = &sr->side[s][r];
			m->status = json_string_value(json_object_get(sr->run[s][r], "status"));
			m->scored = json_is_true(json_object_get(sr->run[s][r], "scored"));
			m->score = json_number_value(json_object_get(sr->run[s][r], "score"));
			m->reason = json_string_value(json_object_get(sr->run[s][r], "reason"));
			m->details = json_object_get(sr->run[s][r], "score_details");
			m->outputs = sr->outputs[s][r];
		}
	}
	return STORE_OK;
}

/* The run fields the comparison row keeps, from a run object. */
static void settle_row_side(json_t *run, struct store_run *r)
{
	memset(r, 0, sizeof *r);
	r->variant = json_string_value(json_object_get(run, "variant"));
	r->scored = json_is_true(json_object_get(run, "scored"));
	r->score = json_number_value(json_object_get(run, "score"));
}

static enum store_rc tx_settle(struct store *st, void *arg)
{
	struct job_arg *a = arg;
	struct param p[] = {PT(a->run_id)};
	json_t *cj = NULL;
	struct settle_runs sr;
	struct model_stats_result res;
	struct store_run br, kr;
	struct store_comparison c;
	const char *tenant;
	enum store_rc rc;
	int found = 0;

	memset(&c, 0, sizeof c);
	memset(&sr, 0, sizeof sr);
	memset(&res, 0, sizeof res);
	rc = store_q_row(st,
	                 "SELECT tenant_id, scenario_id, scenario_version, suite, tolerance, "
	                 "baseline_run_id, candidate_run_id, created_by, repeats, run_ids FROM "
	                 "comparison_jobs WHERE id = ?",
	                 p, NPARAMS(p), cjob_cols, NPARAMS(cjob_cols), &cj);
	if (rc)
		goto out;
	tenant = jtext(cj, "tenant_id");
	{
		struct param q[] = {PT(tenant), PT(a->run_id)};

		rc = store_q_exists(st, "SELECT 1 FROM comparisons WHERE tenant_id = ? AND id = ?",
		                    q, NPARAMS(q), &found);
	}
	if (rc || found)
		goto out;
	rc = settle_read(st, tenant, cj, &sr);
	if (rc)
		goto out;
	c.tolerance = json_number_value(json_object_get(cj, "tolerance"));
	if (model_stats_compare(sr.side[0], sr.side[1], sr.repeats, c.tolerance, &res)) {
		store_seterr(st, "comparison settle: the stored runs do not make a verdict");
		rc = STORE_ERROR;
		goto out;
	}
	/* the first repeat is the pair the comparison names, as before repeats */
	settle_row_side(sr.run[0][0], &br);
	settle_row_side(sr.run[1][0], &kr);
	c.scenario_id = jtext(cj, "scenario_id");
	c.scenario_version = (int)json_integer_value(json_object_get(cj, "scenario_version"));
	c.suite = jtext(cj, "suite");
	c.baseline = &br;
	c.candidate = &kr;
	c.verdict = model_verdict_name(res.verdict);
	c.has_delta = res.has_delta;
	c.delta = res.delta;
	/* the reason says why a comparison is inconclusive, and only then */
	c.reason = res.verdict == MODEL_VERDICT_INCONCLUSIVE && res.reason[0] ? res.reason : NULL;
	c.differing_steps = model_differing_steps(sr.outputs[0][0], sr.outputs[1][0]);
	c.repeats = sr.repeats;
	c.run_ids =
	    json_is_object(json_object_get(cj, "run_ids")) ? json_object_get(cj, "run_ids") : NULL;
	c.stats = res.stats;
	c.pass_k = res.pass_k;
	c.flaky_steps = res.flaky_steps;
	rc = store_comparison_insert(
	    st, tenant, json_string_value(json_object_get(cj, "created_by")), a->run_id, &c,
	    jtext(cj, "baseline_run_id"), jtext(cj, "candidate_run_id"));
	json_decref(c.differing_steps);
out:
	model_stats_result_clear(&res);
	settle_runs_free(&sr);
	json_decref(cj);
	return rc;
}

enum store_rc store_comparison_settle(struct store *st, const char *comparison_id)
{
	struct job_arg a = {.run_id = comparison_id};
	enum store_rc rc;

	if (!store_is_lower_hex(comparison_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	rc = store_tx(st, tx_settle, &a);
	/* the same id inserted by a concurrent settle that committed first:
	 * the verdict is recorded, once */
	if (rc == STORE_CONFLICT)
		rc = STORE_OK;
	return rc;
}
