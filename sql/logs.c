/*
 * Run logs (store.h, migration 009): the agent's log of a run, written
 * once by the executor that holds the run, read by tenant.
 */
#include "sql/store_internal.h"

#include <string.h>

#include "model/runlog.h"

struct log_arg {
	const char *run_id;
	const char *executor_id;
	const char *text;
	long long dropped;
};

static const struct colspec log_cols[] = {{"text", C_TEXT}, {"dropped_bytes", C_INT}};

static enum store_rc tx_log_put(struct store *st, void *arg)
{
	struct log_arg *a = arg;
	struct param held[] = {PT(a->run_id), PT(a->executor_id)};
	struct param del[] = {PT(a->run_id)};
	struct param ins[] = {
	    PT(a->text), {.type = P_BIGINT, .i = a->dropped}, PT(a->run_id), PT(a->executor_id)};
	SQLLEN rows = 0;
	enum store_rc rc;
	int found;

	rc = store_q_exists(
	    st, "SELECT 1 FROM runs WHERE id = ? AND executor = ? AND status = 'running'", held,
	    NPARAMS(held), &found);
	if (rc)
		return rc;
	if (!found) {
		store_seterr(st, "run log: not running under this executor");
		return STORE_NOT_FOUND;
	}
	/* a retried put (an ambiguous commit) replaces, never adds */
	rc = store_q_exec(st, "DELETE FROM run_logs WHERE run_id = ?", del, NPARAMS(del), NULL,
	                  NULL);
	if (rc)
		return rc;
	/* the tenant is the run's own, never the caller's word */
	rc = store_q_exec(st,
	                  "INSERT INTO run_logs (run_id, tenant_id, text, dropped_bytes) "
	                  "SELECT id, tenant_id, ?, ? FROM runs WHERE id = ? AND executor = ?",
	                  ins, NPARAMS(ins), NULL, &rows);
	if (!rc && rows != 1) {
		store_seterr(st, "run log: the run went away");
		rc = STORE_NOT_FOUND;
	}
	return rc;
}

enum store_rc store_run_log_put(struct store *st, const char *run_id, const char *executor_id,
                                const char *text, size_t len, long long dropped)
{
	struct log_arg a = {.run_id = run_id, .executor_id = executor_id, .dropped = dropped};

	if (!store_is_lower_hex(run_id, MODEL_ID_LEN) || !store_executor_id_ok(executor_id))
		return STORE_NOT_FOUND;
	if (!text || len > MODEL_RUN_LOG_MAX || strlen(text) != len ||
	    !model_runlog_is_clean(text, len) || dropped < 0) {
		store_seterr(st, "run log: text must be a cleaned log of at most %u bytes",
		             MODEL_RUN_LOG_MAX);
		return STORE_ERROR;
	}
	a.text = text;
	return store_tx(st, tx_log_put, &a);
}

/* store_get's reader: the tenant's run's log, "" for a run that logged
 * nothing, STORE_NOT_FOUND for a run the tenant does not have. */
static enum store_rc log_read(struct store *st, const char *tenant_id, const char *run_id,
                              json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(run_id)};
	json_t *row = NULL;
	enum store_rc rc;
	int found;

	rc = store_q_exists(st, "SELECT 1 FROM runs WHERE tenant_id = ? AND id = ?", p, NPARAMS(p),
	                    &found);
	if (rc)
		return rc;
	if (!found)
		return STORE_NOT_FOUND;
	rc = store_q_row(st,
	                 "SELECT text, dropped_bytes FROM run_logs WHERE tenant_id = ? AND "
	                 "run_id = ?",
	                 p, NPARAMS(p), log_cols, NPARAMS(log_cols), &row);
	if (rc == STORE_NOT_FOUND) {
		*out = json_pack("{s:s, s:s, s:I}", "run_id", run_id, "text", "", "dropped",
		                 (json_int_t)0);
		return STORE_OK;
	}
	if (rc)
		return rc;
	if (!json_is_string(json_object_get(row, "text")) ||
	    !json_is_integer(json_object_get(row, "dropped_bytes"))) {
		json_decref(row);
		store_seterr(st, "run log: malformed row in the database");
		return STORE_ERROR;
	}
	*out = json_pack("{s:s, s:O, s:O}", "run_id", run_id, "text", json_object_get(row, "text"),
	                 "dropped", json_object_get(row, "dropped_bytes"));
	json_decref(row);
	return STORE_OK;
}

enum store_rc store_run_log(struct store *st, const char *tenant_id, const char *run_id,
                            json_t **out)
{
	return store_get(st, log_read, tenant_id, run_id, out);
}
