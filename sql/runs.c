/*
 * Runs and their outputs: a run that ends at once is recorded whole, in one
 * transaction (its row, every output row and its audit event); a queued
 * one is inserted the same way and then advanced by jobs.c. store_run_insert
 * and store_run_check also serve the comparisons (comparisons.c), which
 * record two runs with their comparison.
 */
#include "sql/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* runner, output_digest, started_at and finished_at are '' until a queued
 * run knows them (migration 008): null in the object. */
static const struct colspec run_cols[] = {{"id", C_TEXT},
                                          {"kind", C_TEXT},
                                          {"scenario_id", C_TEXT},
                                          {"scenario_version", C_INT},
                                          {"scenario_digest", C_TEXT},
                                          {"variant", C_TEXT},
                                          {"status", C_TEXT},
                                          {"runner", C_TEXT_SET},
                                          {"backend", C_TEXT},
                                          {"isolated", C_BOOL},
                                          {"destroyed", C_BOOL},
                                          {"steps_total", C_INT},
                                          {"steps_ok", C_INT},
                                          {"steps_error", C_INT},
                                          {"suite", C_TEXT},
                                          {"scored", C_BOOL},
                                          {"score", C_REAL},
                                          {"passed", C_BOOL},
                                          {"reason", C_TEXT},
                                          {"output_digest", C_TEXT_SET},
                                          {"started_at", C_TEXT_SET},
                                          {"finished_at", C_TEXT_SET},
                                          {"created_by", C_TEXT},
                                          {"score_details", C_JSON},
                                          {"session_id", C_TEXT},
                                          {"divergence", C_JSON},
                                          {"shutdown", C_TEXT},
                                          {"queued_at", C_TEXT},
                                          {"steps_done", C_INT},
                                          {"executor", C_TEXT},
                                          {"comparison_id", C_TEXT},
                                          {"cancel_requested", C_BOOL},
                                          {"agent_name", C_TEXT},
                                          {"agent_sha256", C_TEXT},
                                          {"mocks_digest", C_TEXT},
                                          {"egress_requests", C_INT},
                                          {"record_asked", C_BOOL},
                                          {"record_error", C_TEXT},
                                          {"suite_version", C_INT}};
#define RUN_SELECT                                                                                 \
	"SELECT id, kind, scenario_id, scenario_version, scenario_digest, variant, status, "       \
	"runner, backend, isolated, destroyed, steps_total, steps_ok, steps_error, suite, "        \
	"scored, score, passed, reason, output_digest, started_at, finished_at, created_by, "      \
	"score_details, session_id, divergence, shutdown, queued_at, steps_done, executor, "       \
	"comparison_id, cancel_requested, agent_name, agent_sha256, mocks_digest, "                \
	"egress_requests, record_asked, record_error, suite_version FROM runs"

static const struct colspec output_cols[] = {
    {"seq", C_INT},     {"key", C_TEXT},        {"input", C_TEXT},        {"output", C_TEXT},
    {"status", C_TEXT}, {"error_kind", C_TEXT}, {"duration_ms", C_US_MS}, {"trace", C_JSON}};

struct run_arg {
	const char *tenant_id;
	const char *actor;
	const char *id;
	const struct store_run *run;
	const struct store_idem *idem; /* record only; NULL: none */
	struct store_run_filter filter;
	int limit, offset;
	json_t *out;
};

/* The row's agent_name and agent_sha256 as one "agent" object
 * {"name","sha256"}, or null when no name is recorded (a run recorded
 * before migration 011); and "hermetic" from egress_requests. */
static void run_fold_agent(json_t *row)
{
	json_t *name = json_object_get(row, "agent_name");
	json_t *sha = json_object_get(row, "agent_sha256");
	json_int_t egress;

	if (json_is_string(name))
		json_object_set_new_nocheck(
		    row, "agent",
		    json_pack("{s:O,s:O}", "name", name, "sha256", sha ? sha : json_null()));
	else
		json_object_set_new_nocheck(row, "agent", json_null());
	json_object_del(row, "agent_name");
	json_object_del(row, "agent_sha256");
	/* hermetic: nothing the run got came from outside its mocks; -1 is
	 * a count that never came (the run was allowed egress and ended
	 * without its runner's summary): unknown, so never hermetic */
	egress = json_integer_value(json_object_get(row, "egress_requests"));
	json_object_set_new_nocheck(row, "hermetic", json_boolean(egress == 0));
	if (egress < 0)
		json_object_set_new_nocheck(row, "egress_requests", json_null());
	json_object_set_nocheck(row, "record", json_object_get(row, "record_asked"));
	json_object_del(row, "record_asked");
}

enum store_rc store_run_read(struct store *st, const char *tenant_id, const char *id, json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(id)};
	enum store_rc rc;

	rc = store_q_row(st, RUN_SELECT " WHERE tenant_id = ? AND id = ?", p, NPARAMS(p), run_cols,
	                 NPARAMS(run_cols), out);
	if (!rc)
		run_fold_agent(*out);
	return rc;
}

/* Every run row of sql into arr (a store_rows_fn for the run list). */
static enum store_rc run_rows(struct store *st, const char *sql, struct param *p, size_t n,
                              json_t *arr)
{
	size_t before = json_array_size(arr), i;
	enum store_rc rc;

	rc = store_q_rows(st, sql, p, n, run_cols, NPARAMS(run_cols), arr);
	for (i = before; !rc && i < json_array_size(arr); i++)
		run_fold_agent(json_array_get(arr, i));
	return rc;
}

/* An output's "duration_ms" as the microseconds stored: 1 with *us set
 * when it is a number in [0, STORE_DURATION_MAX_MS], 0 with *us -1 when it
 * is absent or null (unknown: stored NULL), -1 when it is anything else. */
static int output_duration_us(json_t *o, long long *us)
{
	json_t *v = json_object_get(o, "duration_ms");
	double ms;

	*us = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return -1;
	ms = json_number_value(v);
	/* !(a <= b) also refuses NaN */
	if (!(ms >= 0 && ms <= STORE_DURATION_MAX_MS))
		return -1;
	*us = (long long)(ms * 1000.0 + 0.5); /* to the nearest microsecond */
	return 1;
}

static int output_ok(json_t *o)
{
	json_t *ek = json_object_get(o, "error_kind");
	long long us;

	return json_is_object(o) && output_duration_us(o, &us) >= 0 &&
	       json_is_integer(json_object_get(o, "seq")) &&
	       json_integer_value(json_object_get(o, "seq")) >= 0 &&
	       json_integer_value(json_object_get(o, "seq")) <= 0x7fffffff &&
	       json_is_string(json_object_get(o, "key")) &&
	       json_is_string(json_object_get(o, "input")) &&
	       json_is_string(json_object_get(o, "output")) &&
	       json_is_string(json_object_get(o, "status")) &&
	       (!ek || json_is_null(ek) || json_is_string(ek)) &&
	       (!json_object_get(o, "trace") || json_is_null(json_object_get(o, "trace")) ||
	        json_is_array(json_object_get(o, "trace")));
}

/*
 * Insert the outputs of run run_id, OUTPUTS_PER_INSERT rows per statement:
 * libsqliteodbc prepares a non-SELECT statement again on every execution
 * (measured: one sqlite3_prepare_v2 and one sqlite3_finalize per
 * SQLExecute of an INSERT, even on a kept handle), so ten one-row INSERTs
 * cost ten compilations where one ten-row INSERT costs one. The SQL text
 * is built from fixed fragments only (one "(?, …)" group per row); every
 * value is bound. At most OUTPUTS_PER_INSERT distinct texts exist, so the
 * statement cache holds them all.
 */
#define OUTPUTS_PER_INSERT 10
#define OUTPUT_COLS 10

enum store_rc store_outputs_insert(struct store *st, const char *run_id, const char *tenant_id,
                                   json_t *outputs)
{
	static const char head[] = "INSERT INTO run_outputs (run_id, tenant_id, seq, key, input, "
	                           "output, status, error_kind, duration_us, trace) VALUES ";
	static const char row[] = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	char sql[sizeof head + OUTPUTS_PER_INSERT * (sizeof row + 2)];
	struct param p[OUTPUTS_PER_INSERT * OUTPUT_COLS];
	char *traces[OUTPUTS_PER_INSERT];
	size_t total = json_array_size(outputs);
	size_t done, k, n, len;
	enum store_rc rc;
	long long us;
	json_t *o;

	for (done = 0; done < total; done += n) {
		n = total - done < OUTPUTS_PER_INSERT ? total - done : OUTPUTS_PER_INSERT;
		memcpy(sql, head, sizeof head - 1);
		len = sizeof head - 1;
		memset(p, 0, sizeof p);
		memset(traces, 0, sizeof traces);
		for (k = 0; k < n; k++) {
			struct param *q = &p[k * OUTPUT_COLS];

			if (k) {
				memcpy(sql + len, ", ", 2);
				len += 2;
			}
			memcpy(sql + len, row, sizeof row - 1);
			len += sizeof row - 1;
			o = json_array_get(outputs, done + k);
			q[0].type = P_TEXT;
			q[0].s = run_id;
			q[1].type = P_TEXT;
			q[1].s = tenant_id;
			q[2].type = P_INT;
			q[2].i = json_integer_value(json_object_get(o, "seq"));
			q[3].type = P_TEXT;
			q[3].s = json_string_value(json_object_get(o, "key"));
			q[4].type = P_TEXT;
			q[4].s = json_string_value(json_object_get(o, "input"));
			q[5].type = P_TEXT;
			q[5].s = json_string_value(json_object_get(o, "output"));
			q[6].type = P_TEXT;
			q[6].s = json_string_value(json_object_get(o, "status"));
			q[7].type = P_TEXT;
			q[7].s = json_string_value(json_object_get(o, "error_kind"));
			/* checked by output_ok: unknown (-1) is NULL */
			output_duration_us(o, &us);
			q[8].type = P_BIGINT;
			q[8].i = us;
			q[8].null = us < 0;
			/* the step's trace as JSON text (migration 010); none: NULL */
			if (json_is_array(json_object_get(o, "trace")))
				traces[k] = json_dumps(json_object_get(o, "trace"), JSON_COMPACT);
			q[9].type = P_TEXT;
			q[9].s = traces[k];
			q[9].null = traces[k] == NULL;
		}
		sql[len] = '\0';
		rc = store_q_exec(st, sql, p, n * OUTPUT_COLS, NULL, NULL);
		for (k = 0; k < n; k++)
			free(traces[k]);
		if (rc)
			return rc;
	}
	return STORE_OK;
}

/* The session a replay names must be one of the tenant's (the foreign key
 * alone would accept another tenant's id). */
static enum store_rc session_owned(struct store *st, const char *tenant_id, const char *session_id)
{
	struct param p[] = {PT(tenant_id), PT(session_id)};
	enum store_rc rc;
	int found = 0;

	rc = store_q_exists(st, "SELECT 1 FROM sessions WHERE tenant_id = ? AND id = ?", p,
	                    NPARAMS(p), &found);
	if (rc)
		return rc;
	if (!found) {
		store_seterr(st, "run: no such session for this tenant");
		return STORE_NOT_FOUND;
	}
	return STORE_OK;
}

enum store_rc store_run_json_text(struct store *st, const struct store_run *r, char **details,
                                  char **divergence)
{
	*details = NULL;
	*divergence = NULL;
	if (json_is_array(r->score_details)) {
		*details = json_dumps(r->score_details, JSON_COMPACT);
		if (!*details) {
			store_seterr(st, "run: score_details do not encode");
			return STORE_ERROR;
		}
	}
	if (json_is_object(r->divergence)) {
		*divergence = json_dumps(r->divergence, JSON_COMPACT);
		if (!*divergence) {
			free(*details);
			*details = NULL;
			store_seterr(st, "run: divergence does not encode");
			return STORE_ERROR;
		}
	}
	return STORE_OK;
}

/*
 * Insert one run, its outputs and its "sandbox.run" audit event inside the
 * caller's transaction (store_run_record, store_comparison_record,
 * store_run_enqueue); id_out gets the new run's id. score and passed are
 * bound only for a scored run, score_details only when it is an array,
 * divergence only when it is an object, scenario_version only when there
 * is a scenario. Without q the run is recorded whole: queued when it
 * started, every step done.
 */
enum store_rc store_run_insert_queued(struct store *st, const char *tenant_id, const char *actor,
                                      const struct store_run *r, const struct store_run_queue *q,
                                      char id_out[33])
{
	char id[33];
	char now[32];
	char *details = NULL;
	char *divergence = NULL;
	enum store_rc rc;
	json_t *detail;

	id_out[0] = '\0';
	if (r->session_id) {
		rc = session_owned(st, tenant_id, r->session_id);
		if (rc)
			return rc;
	}
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	rc = store_run_json_text(st, r, &details, &divergence);
	if (rc)
		return rc;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),
		                    PT(tenant_id),
		                    PT(r->kind),
		                    PT(r->scenario_id),
		                    PIN(r->scenario_id != NULL, r->scenario_version),
		                    PT(r->scenario_digest),
		                    PT(r->variant),
		                    PT(r->status),
		                    PT(r->runner),
		                    PT(r->backend),
		                    PI(r->isolated ? 1 : 0),
		                    PI(r->destroyed ? 1 : 0),
		                    PI(r->steps_total),
		                    PI(r->steps_ok),
		                    PI(r->steps_error),
		                    PT(r->suite),
		                    PI(r->scored ? 1 : 0),
		                    PR(r->scored, r->score),
		                    PIN(r->scored, r->passed ? 1 : 0),
		                    PT(r->reason),
		                    PT(r->output_digest),
		                    PT(r->started_at),
		                    PT(r->finished_at),
		                    PT(actor),
		                    PT(now),
		                    PT(details),
		                    PT(r->session_id),
		                    PT(divergence),
		                    PT(r->shutdown),
		                    PT(q ? q->queued_at : r->started_at),
		                    PI(q ? 0 : (long long)json_array_size(r->outputs)),
		                    PT(q ? q->job : NULL),
		                    PT(q ? q->comparison_id : NULL),
		                    PT(r->agent_name),
		                    PT(r->agent_sha256),
		                    PT(r->mocks_digest),
		                    PI(r->record ? 1 : 0),
		                    PT(r->record_error),
		                    PIN(r->suite_version > 0, r->suite_version)};

		/* score and passed are NULL for a run that was not scored:
		 * it never reads as a pass */
		rc = store_q_exec(
		    st,
		    "INSERT INTO runs (id, tenant_id, kind, scenario_id, scenario_version, "
		    "scenario_digest, variant, status, runner, backend, isolated, destroyed, "
		    "steps_total, steps_ok, steps_error, suite, scored, score, passed, reason, "
		    "output_digest, started_at, finished_at, created_by, created_at, "
		    "score_details, session_id, divergence, shutdown, queued_at, steps_done, job, "
		    "comparison_id, agent_name, agent_sha256, mocks_digest, record_asked, "
		    "record_error, suite_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
		    "?, ?, ?, ?, ?, ?, "
		    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	free(details);
	free(divergence);
	if (rc)
		return rc;
	rc = store_outputs_insert(st, id, tenant_id, r->outputs);
	if (rc)
		return rc;
	detail = json_pack("{s:s?,s:s?,s:s}", "scenario_id", r->scenario_id, "variant", r->variant,
	                   "status", r->status);
	/* a replay also names its session (ids only, never content) */
	if (detail && r->session_id)
		json_object_set_new(detail, "session_id", json_string(r->session_id));
	rc = store_audit_insert(st, tenant_id, actor, "sandbox.run", id, detail);
	json_decref(detail);
	/* a run recorded whole has ended: its evidence link now */
	if (!rc && !q)
		rc = store_evidence_link_run(st, tenant_id, id);
	if (rc)
		return rc;
	memcpy(id_out, id, 33);
	return STORE_OK;
}

enum store_rc store_run_insert(struct store *st, const char *tenant_id, const char *actor,
                               const struct store_run *r, char id_out[33])
{
	return store_run_insert_queued(st, tenant_id, actor, r, NULL, id_out);
}

static enum store_rc tx_run_record(struct store *st, void *arg)
{
	struct run_arg *a = arg;
	char id[33];
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	rc = store_run_insert(st, a->tenant_id, a->actor, a->run, id);
	if (rc)
		return rc;
	rc = store_run_read(st, a->tenant_id, id, &a->out);
	if (rc)
		return rc;
	return store_idem_insert(st, a->tenant_id, a->idem, a->out);
}

enum store_rc store_outputs_check(struct store *st, json_t *outputs)
{
	json_t *o;
	size_t i;

	json_array_foreach(outputs, i, o)
	{
		if (!output_ok(o)) {
			store_seterr(st, "run: output %zu is malformed", i);
			return STORE_ERROR;
		}
	}
	return STORE_OK;
}

/*
 * Check a run before anything is written. *copy is filled with *run, with
 * an empty outputs array (*empty, to decref by the caller) when it has none.
 */
enum store_rc store_run_check(struct store *st, const struct store_run *run, struct store_run *copy,
                              json_t **empty)
{
	*empty = NULL;
	if (!run || !run->kind || !run->status || !run->runner || !run->backend ||
	    !run->output_digest || !run->started_at || !run->finished_at ||
	    (run->outputs && !json_is_array(run->outputs))) {
		store_seterr(st, "run: kind, status, runner, backend, output_digest, started_at, "
		                 "finished_at are required; outputs must be an array");
		return STORE_ERROR;
	}
	if (run->scored && !(run->score >= 0.0 && run->score <= 1.0)) {
		store_seterr(st, "run: a scored run needs a score in [0, 1]");
		return STORE_ERROR;
	}
	if (run->score_details && !json_is_array(run->score_details) &&
	    !json_is_null(run->score_details)) {
		store_seterr(st, "run: score_details must be an array");
		return STORE_ERROR;
	}
	if ((run->divergence && !json_is_object(run->divergence) &&
	     !json_is_null(run->divergence)) ||
	    (run->session_id && !store_is_lower_hex(run->session_id, MODEL_ID_LEN))) {
		store_seterr(st, "run: divergence must be an object, session_id a session id");
		return STORE_ERROR;
	}
	if ((run->agent_sha256 && !store_is_lower_hex(run->agent_sha256, 64)) ||
	    (run->mocks_digest && !store_is_lower_hex(run->mocks_digest, 64))) {
		store_seterr(st, "run: agent_sha256 and mocks_digest must be 64 lower-case hex");
		return STORE_ERROR;
	}
	if (store_outputs_check(st, run->outputs))
		return STORE_ERROR;
	*copy = *run;
	if (!run->outputs) {
		*empty = json_array();
		copy->outputs = *empty;
	}
	return STORE_OK;
}

enum store_rc store_run_record(struct store *st, const char *tenant_id, const char *actor_token_id,
                               const struct store_run *run, json_t **out)
{
	return store_run_record_idem(st, tenant_id, actor_token_id, run, NULL, out);
}

enum store_rc store_run_record_idem(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const struct store_run *run,
                                    const struct store_idem *idem, json_t **out)
{
	struct run_arg a = {.tenant_id = tenant_id, .actor = actor_token_id, .idem = idem};
	struct store_run copy;
	json_t *empty = NULL;
	enum store_rc rc;

	*out = NULL;
	if (!tenant_id) {
		store_seterr(st, "run: tenant required");
		return STORE_ERROR;
	}
	rc = store_run_check(st, run, &copy, &empty);
	if (rc)
		return rc;
	a.run = &copy;
	rc = store_tx_json(st, tx_run_record, &a, &a.out, out);
	json_decref(empty);
	return rc;
}

/* The reads of runs below run without an explicit transaction
 * (store_get, store_read_json): one SELECT for a run; a run's outputs
 * are append-only, so outputs read a moment after the run's row are
 * those of a run at least as far along (no common snapshot is needed). */
enum store_rc store_run_get(struct store *st, const char *tenant_id, const char *id, json_t **out)
{
	return store_get(st, store_run_read, tenant_id, id, out);
}

/*
 * The list of runs: the WHERE clause is built from fixed fragments, one
 * "AND col = ?" per filter given (at most 16 distinct texts, all kept by
 * the statement cache); every value is bound.
 */
static enum store_rc tx_run_list(struct store *st, void *arg)
{
	struct run_arg *a = arg;
	const struct store_run_filter *f = &a->filter;
	const struct store_filter_cond conds[] = {{f->scenario_id, " AND scenario_id = ?"},
	                                          {f->status, " AND status = ?"},
	                                          {f->kind, " AND kind = ?"},
	                                          {f->session_id, " AND session_id = ?"}};
	const struct store_list_query q = {.head = RUN_SELECT " WHERE tenant_id = ?",
	                                   .order = " ORDER BY ord DESC",
	                                   .tenant_id = a->tenant_id,
	                                   .conds = conds,
	                                   .nconds = NPARAMS(conds),
	                                   .limit = a->limit,
	                                   .offset = a->offset};

	json_decref(a->out);
	a->out = NULL;
	return store_q_filtered(st, &q, run_rows, "runs", &a->out);
}

enum store_rc store_run_list_filtered(struct store *st, const char *tenant_id,
                                      const struct store_run_filter *filter, int limit, int offset,
                                      json_t **out)
{
	struct run_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                    .limit = store_clamp_limit(limit),
	                    .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	if (filter)
		a.filter = *filter;
	return store_read_json(st, tx_run_list, &a, &a.out, out);
}

enum store_rc store_run_list(struct store *st, const char *tenant_id, const char *scenario_id,
                             const char *status, int limit, int offset, json_t **out)
{
	struct store_run_filter f = {.scenario_id = scenario_id, .status = status};

	return store_run_list_filtered(st, tenant_id, &f, limit, offset, out);
}

enum store_rc store_run_outputs_read(struct store *st, const char *tenant_id, const char *run_id,
                                     json_t *arr)
{
	struct param p[] = {PT(tenant_id), PT(run_id)};

	return store_q_rows(
	    st,
	    "SELECT seq, key, input, output, status, error_kind, duration_us, trace FROM "
	    "run_outputs "
	    "WHERE tenant_id = ? AND run_id = ? ORDER BY seq",
	    p, NPARAMS(p), output_cols, NPARAMS(output_cols), arr);
}

static enum store_rc tx_run_outputs(struct store *st, void *arg)
{
	struct run_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->id)};
	json_t *arr;
	enum store_rc rc;
	int found;

	json_decref(a->out);
	a->out = NULL;
	rc = store_q_exists(st, "SELECT 1 FROM runs WHERE tenant_id = ? AND id = ?", p, NPARAMS(p),
	                    &found);
	if (rc)
		return rc;
	if (!found)
		return STORE_NOT_FOUND;
	arr = json_array();
	rc = store_run_outputs_read(st, a->tenant_id, a->id, arr);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	a->out = json_pack("{s:s,s:o}", "run_id", a->id, "outputs", arr);
	return STORE_OK;
}

enum store_rc store_run_outputs(struct store *st, const char *tenant_id, const char *run_id,
                                json_t **out)
{
	struct run_arg a = {.tenant_id = tenant_id, .id = run_id};

	*out = NULL;
	if (!tenant_id || !run_id)
		return STORE_NOT_FOUND;
	return store_read_json(st, tx_run_outputs, &a, &a.out, out);
}
