/*
 * Executors (store.h "run jobs"): the processes that claim queued runs,
 * registered with the backends that passed preflight on their host, and
 * live while they heartbeat. The table is the operator's, not tenant data:
 * nothing here is filtered by tenant, and nothing here reads a tenant's
 * records beyond counting the runs an executor holds.
 */
#include "sql/store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/runspec.h"

/* The backends a run may name, in the order store_backends_parse binds them. */
static const char *const known_backends[STORE_BACKENDS_MAX] = {
    MODEL_BACKEND_INPROC_MOCK, MODEL_BACKEND_NAMESPACES, MODEL_BACKEND_GVISOR,
    MODEL_BACKEND_FIRECRACKER};

int store_backend_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < STORE_BACKENDS_MAX; i++)
		if (strlen(known_backends[i]) == len && memcmp(known_backends[i], name, len) == 0)
			return (int)i;
	return -1;
}

int store_backends_parse(const char *list, const char *out[STORE_BACKENDS_MAX])
{
	const char *p = list, *end;
	int i, n = 0;

	for (i = 0; i < STORE_BACKENDS_MAX; i++)
		out[i] = NULL;
	if (!list)
		return -1;
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end > p) {
			i = store_backend_index(p, (size_t)(end - p));
			if (i < 0)
				return -1;
			if (!out[i])
				n++;
			out[i] = known_backends[i];
		}
		p = *end ? end + 1 : end;
	}
	return n;
}

int store_executor_id_ok(const char *id)
{
	const char *p;

	if (!store_text_ok(id, 1, 128))
		return 0;
	for (p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == ':' || *p == '-'))
			return 0;
	return 1;
}

struct executor_arg {
	const struct store_executor *ex;
	const char *id;
	const char *preflight; /* register: the JSON text */
	const char *backend;   /* offers */
	char cutoff[32];       /* offers, list: live means heartbeat_at >= cutoff */
	int offered;
	char *why;
	size_t why_n;
	json_t *out;
};

static enum store_rc tx_register(struct store *st, void *arg)
{
	struct executor_arg *a = arg;
	const struct store_executor *ex = a->ex;
	char now[32];
	SQLLEN rows = 0;
	enum store_rc rc;

	store_now_iso(now);
	{
		struct param p[] = {PT(ex->host),     PI(ex->pid), PI(ex->slots), PT(ex->backends),
		                    PT(a->preflight), PT(now),     PT(now),       PT(ex->id)};

		/* the same id again is the same executor restarted: replaced,
		 * live again (update, or insert when there is no row: both
		 * dialects, no upsert syntax) */
		rc =
		    store_q_exec(st,
		                 "UPDATE executors SET host = ?, pid = ?, slots = ?, backends = ?, "
		                 "preflight = ?, started_at = ?, heartbeat_at = ?, stopped_at = "
		                 "NULL WHERE id = ?",
		                 p, NPARAMS(p), NULL, &rows);
	}
	if (rc || rows > 0)
		return rc;
	{
		struct param p[] = {PT(ex->id),       PT(ex->host),     PI(ex->pid), PI(ex->slots),
		                    PT(ex->backends), PT(a->preflight), PT(now),     PT(now)};

		return store_q_exec(
		    st,
		    "INSERT INTO executors (id, host, pid, slots, backends, "
		    "preflight, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, "
		    "?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
}

enum store_rc store_executor_register(struct store *st, const struct store_executor *ex)
{
	struct executor_arg a = {.ex = ex};
	const char *b[STORE_BACKENDS_MAX];
	char *text = NULL;
	enum store_rc rc;

	if (!ex || !store_executor_id_ok(ex->id) || !store_text_ok(ex->host, 1, 128) ||
	    ex->pid < 0 || ex->slots < 1 || store_backends_parse(ex->backends, b) < 0 ||
	    (ex->preflight && !json_is_object(ex->preflight))) {
		store_seterr(st, "executor: an id (1..128 bytes of [A-Za-z0-9._:-]), a host "
		                 "(1..128 bytes), a pid, slots >= 1, a comma list of known "
		                 "backends and a preflight object are required");
		return STORE_ERROR;
	}
	if (ex->preflight) {
		text = json_dumps(ex->preflight, JSON_COMPACT);
		if (!text) {
			store_seterr(st, "executor: preflight does not encode");
			return STORE_ERROR;
		}
	}
	a.preflight = text;
	rc = store_tx(st, tx_register, &a);
	free(text);
	return rc;
}

/* The executor a->id's heartbeat_at (or stopped_at, with stop) now. */
static enum store_rc executor_touch(struct store *st, const char *id, int stop)
{
	char now[32];
	struct param p[] = {PT(now), PT(id)};
	SQLLEN rows = 0;
	enum store_rc rc;

	store_now_iso(now);
	rc = store_q_exec(st,
	                  stop ? "UPDATE executors SET stopped_at = ? WHERE id = ?"
	                       : "UPDATE executors SET heartbeat_at = ? WHERE id = ?",
	                  p, NPARAMS(p), NULL, &rows);
	if (!rc && rows == 0) {
		store_seterr(st, "executor: not registered");
		rc = STORE_NOT_FOUND;
	}
	return rc;
}

static enum store_rc tx_heartbeat(struct store *st, void *arg)
{
	return executor_touch(st, ((struct executor_arg *)arg)->id, 0);
}

static enum store_rc tx_stop(struct store *st, void *arg)
{
	return executor_touch(st, ((struct executor_arg *)arg)->id, 1);
}

enum store_rc store_executor_heartbeat(struct store *st, const char *executor_id)
{
	struct executor_arg a = {.id = executor_id};

	if (!store_executor_id_ok(executor_id))
		return STORE_NOT_FOUND;
	return store_tx(st, tx_heartbeat, &a);
}

enum store_rc store_executor_stop(struct store *st, const char *executor_id)
{
	struct executor_arg a = {.id = executor_id};

	if (!store_executor_id_ok(executor_id))
		return STORE_NOT_FOUND;
	return store_tx(st, tx_stop, &a);
}

static const struct colspec live_cols[] = {
    {"id", C_TEXT}, {"backends", C_TEXT}, {"preflight", C_JSON}};

/* 1 when the comma list list names backend. */
static int list_has(const char *list, const char *backend)
{
	const char *b[STORE_BACKENDS_MAX];
	int i;

	if (store_backends_parse(list, b) < 0)
		return 0;
	for (i = 0; i < STORE_BACKENDS_MAX; i++)
		if (b[i] && strcmp(b[i], backend) == 0)
			return 1;
	return 0;
}

static enum store_rc tx_offers(struct store *st, void *arg)
{
	struct executor_arg *a = arg;
	struct param p[] = {PT(a->cutoff)};
	const char *refusal = NULL;
	json_t *live = json_array(), *e, *pf;
	enum store_rc rc;
	size_t i;

	a->offered = 0;
	a->why[0] = '\0';
	rc = store_q_rows(st,
	                  "SELECT id, backends, preflight FROM executors WHERE stopped_at IS NULL "
	                  "AND heartbeat_at >= ? ORDER BY heartbeat_at DESC",
	                  p, NPARAMS(p), live_cols, NPARAMS(live_cols), live);
	if (rc)
		goto out;
	json_array_foreach(live, i, e)
	{
		if (list_has(json_string_value(json_object_get(e, "backends")), a->backend)) {
			a->offered = 1;
			goto out;
		}
		pf = json_object_get(json_object_get(e, "preflight"), a->backend);
		if (!refusal && json_is_false(json_object_get(pf, "ok")))
			refusal = json_string_value(json_object_get(pf, "reason"));
	}
	if (json_array_size(live) == 0)
		snprintf(a->why, a->why_n, "no executor is running");
	else if (refusal)
		snprintf(a->why, a->why_n, "no live executor offers backend %s: %s", a->backend,
		         refusal);
	else
		snprintf(a->why, a->why_n, "no live executor offers backend %s", a->backend);
out:
	json_decref(live);
	return rc;
}

enum store_rc store_executor_offers(struct store *st, const char *backend, int lease_seconds,
                                    int *offered, char *why, size_t n)
{
	char none[1];
	struct executor_arg a = {.backend = backend, .why = n ? why : none, .why_n = n ? n : 1};
	enum store_rc rc;

	*offered = 0;
	a.why[0] = '\0';
	if (!backend || store_backend_index(backend, strlen(backend)) < 0 || lease_seconds < 1) {
		store_seterr(st,
		             "executor offers: a known backend and a lease >= 1 s are required");
		return STORE_ERROR;
	}
	store_iso_from_now(-1000LL * lease_seconds, a.cutoff);
	rc = store_read(st, tx_offers, &a);
	if (rc)
		a.why[0] = '\0';
	else
		*offered = a.offered;
	return rc;
}

static const struct colspec executor_cols[] = {
    {"id", C_TEXT},         {"host", C_TEXT},      {"pid", C_INT},         {"slots", C_INT},
    {"backends", C_TEXT},   {"preflight", C_JSON}, {"started_at", C_TEXT}, {"heartbeat_at", C_TEXT},
    {"stopped_at", C_TEXT}, {"live", C_BOOL},      {"running", C_INT}};

static enum store_rc tx_list(struct store *st, void *arg)
{
	struct executor_arg *a = arg;
	struct param p[] = {PT(a->cutoff)};
	const char *b[STORE_BACKENDS_MAX];
	json_t *arr, *e, *names;
	enum store_rc rc;
	size_t i;
	int k;

	json_decref(a->out);
	a->out = NULL;
	/* running: the runs it holds, of every tenant (an operator's view) */
	rc = store_q_list(
	    st,
	    "SELECT e.id, e.host, e.pid, e.slots, e.backends, e.preflight, e.started_at, "
	    "e.heartbeat_at, e.stopped_at, CASE WHEN e.stopped_at IS NULL AND e.heartbeat_at >= ? "
	    "THEN 1 ELSE 0 END, (SELECT COUNT(*) FROM runs r WHERE r.status = 'running' AND "
	    "r.executor = e.id) FROM executors e ORDER BY e.heartbeat_at DESC, e.id",
	    p, NPARAMS(p), executor_cols, NPARAMS(executor_cols), "executors", &a->out);
	if (rc)
		return rc;
	arr = json_object_get(a->out, "executors");
	json_array_foreach(arr, i, e)
	{
		names = json_array();
		if (store_backends_parse(json_string_value(json_object_get(e, "backends")), b) >= 0)
			for (k = 0; k < STORE_BACKENDS_MAX; k++)
				if (b[k])
					json_array_append_new(names, json_string(b[k]));
		json_object_set_new(e, "backends", names);
	}
	return STORE_OK;
}

enum store_rc store_executor_list(struct store *st, int lease_seconds, json_t **out)
{
	struct executor_arg a = {0};

	*out = NULL;
	if (lease_seconds < 1) {
		store_seterr(st, "executor list: a lease >= 1 s is required");
		return STORE_ERROR;
	}
	store_iso_from_now(-1000LL * lease_seconds, a.cutoff);
	return store_read_json(st, tx_list, &a, &a.out, out);
}
