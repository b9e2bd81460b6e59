/*
 * Suites: a tenant's scoring suites (the document of model/suite.h), by
 * name and version. A create is version 1; an update inserts version + 1
 * and leaves the older ones in place, so a run pinned to a version is
 * scored against the document it named.
 */
#include "sql/store_internal.h"

#include <stdlib.h>
#include <string.h>

#include "model/scorer.h"
#include "model/suite.h"

static const struct colspec suite_cols[] = {{"name", C_TEXT},
                                            {"version", C_INT},
                                            {"document", C_JSON},
                                            {"created_by", C_TEXT},
                                            {"created_at", C_TEXT}};

static const struct colspec summary_cols[] = {
    {"name", C_TEXT}, {"version", C_INT}, {"created_at", C_TEXT}};

static const struct colspec version_cols[] = {{"version", C_INT}};

struct suite_arg {
	const char *tenant_id;
	const char *actor;
	const char *name;
	int version; /* get: 0 for the latest */
	json_t *doc;
	int limit, offset;
	json_t *out;
};

/* The highest version of name in the tenant into *version (0: none). */
static enum store_rc suite_latest(struct store *st, const char *tenant_id, const char *name,
                                  int *version)
{
	struct param p[] = {PT(tenant_id), PT(name)};
	json_t *row = NULL;
	enum store_rc rc;

	*version = 0;
	rc = store_q_row(st, "SELECT MAX(version) FROM suites WHERE tenant_id = ? AND name = ?", p,
	                 NPARAMS(p), version_cols, NPARAMS(version_cols), &row);
	if (rc == STORE_NOT_FOUND)
		return STORE_OK;
	if (rc)
		return rc;
	*version = (int)json_integer_value(json_object_get(row, "version"));
	json_decref(row);
	return STORE_OK;
}

static enum store_rc suite_read(struct store *st, const char *tenant_id, const char *name,
                                int version, json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(name), PI(version)};

	return store_q_row(st,
	                   "SELECT name, version, document, created_by, created_at FROM suites "
	                   "WHERE tenant_id = ? AND name = ? AND version = ?",
	                   p, NPARAMS(p), suite_cols, NPARAMS(suite_cols), out);
}

/* Insert version of the checked document a->doc and its audit event. */
static enum store_rc suite_insert(struct store *st, struct suite_arg *a, int version,
                                  const char *action)
{
	char id[33], now[32];
	char *text;
	json_t *detail;
	enum store_rc rc;

	text = json_dumps(a->doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text) {
		store_seterr(st, "suite: the document does not encode");
		return STORE_ERROR;
	}
	store_now_iso(now);
	rc = store_new_id(st, id);
	if (!rc) {
		struct param p[] = {PT(id),   PT(a->tenant_id), PT(a->name), PI(version),
		                    PT(text), PT(a->actor),     PT(now)};

		rc = store_q_exec(st,
		                  "INSERT INTO suites (id, tenant_id, name, version, document, "
		                  "created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	free(text);
	if (rc)
		return rc;
	detail = json_pack("{s:s,s:i}", "name", a->name, "version", version);
	rc = store_audit_insert(st, a->tenant_id, a->actor, action, id, detail);
	json_decref(detail);
	if (rc)
		return rc;
	return suite_read(st, a->tenant_id, a->name, version, &a->out);
}

static enum store_rc tx_suite_create(struct store *st, void *arg)
{
	struct suite_arg *a = arg;
	enum store_rc rc;
	int latest;

	json_decref(a->out);
	a->out = NULL;
	rc = suite_latest(st, a->tenant_id, a->name, &latest);
	if (rc)
		return rc;
	if (latest > 0) {
		store_seterr(st, "suite %s exists (version %d)", a->name, latest);
		return STORE_CONFLICT;
	}
	return suite_insert(st, a, 1, "sandbox.suite.create");
}

static enum store_rc tx_suite_update(struct store *st, void *arg)
{
	struct suite_arg *a = arg;
	enum store_rc rc;
	int latest;

	json_decref(a->out);
	a->out = NULL;
	rc = suite_latest(st, a->tenant_id, a->name, &latest);
	if (rc)
		return rc;
	if (latest == 0)
		return STORE_NOT_FOUND;
	/* two updates at once: the second insert of latest + 1 breaks the
	 * unique (tenant, name, version) and is refused, never merged */
	return suite_insert(st, a, latest + 1, "sandbox.suite.update");
}

/* Refuse what must never be written: a bad name, a document that fails
 * model_suite_check or names another suite. */
static enum store_rc suite_write_ok(struct store *st, const char *tenant_id, const char *name,
                                    json_t *doc)
{
	struct model_error err;
	const char *docname;

	if (!tenant_id || !model_suite_name_valid(name)) {
		store_seterr(st,
		             "suite: a tenant and a name of 1..128 [A-Za-z0-9._-] are required");
		return STORE_ERROR;
	}
	memset(&err, 0, sizeof(err));
	if (!json_is_object(doc) || model_suite_check(doc, &err)) {
		store_seterr(st, "suite: the document does not check (%s)", err.message);
		return STORE_ERROR;
	}
	docname = json_string_value(json_object_get(doc, "name"));
	if (!docname || strcmp(docname, name) != 0) {
		store_seterr(st, "suite: the document's name is not %s", name);
		return STORE_ERROR;
	}
	return STORE_OK;
}

enum store_rc store_suite_create(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *name, json_t *document,
                                 json_t **out)
{
	struct suite_arg a = {
	    .tenant_id = tenant_id, .actor = actor_token_id, .name = name, .doc = document};
	enum store_rc rc;

	*out = NULL;
	rc = suite_write_ok(st, tenant_id, name, document);
	if (rc)
		return rc;
	return store_tx_json(st, tx_suite_create, &a, &a.out, out);
}

enum store_rc store_suite_update(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *name, json_t *document,
                                 json_t **out)
{
	struct suite_arg a = {
	    .tenant_id = tenant_id, .actor = actor_token_id, .name = name, .doc = document};
	enum store_rc rc;

	*out = NULL;
	if (tenant_id && !model_suite_name_valid(name))
		return STORE_NOT_FOUND;
	rc = suite_write_ok(st, tenant_id, name, document);
	if (rc)
		return rc;
	return store_tx_json(st, tx_suite_update, &a, &a.out, out);
}

static enum store_rc tx_suite_get(struct store *st, void *arg)
{
	struct suite_arg *a = arg;
	enum store_rc rc;
	int version = a->version;

	json_decref(a->out);
	a->out = NULL;
	if (version == 0) {
		rc = suite_latest(st, a->tenant_id, a->name, &version);
		if (rc)
			return rc;
		if (version == 0)
			return STORE_NOT_FOUND;
	}
	return suite_read(st, a->tenant_id, a->name, version, &a->out);
}

enum store_rc store_suite_get(struct store *st, const char *tenant_id, const char *name,
                              int version, json_t **out)
{
	struct suite_arg a = {.tenant_id = tenant_id, .name = name, .version = version};

	*out = NULL;
	if (!tenant_id || !model_suite_name_valid(name) || version < 0)
		return STORE_NOT_FOUND;
	return store_read_json(st, tx_suite_get, &a, &a.out, out);
}

static enum store_rc tx_suite_list(struct store *st, void *arg)
{
	struct suite_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PI(a->limit), PI(a->offset)};

	json_decref(a->out);
	a->out = NULL;
	return store_q_list(st,
	                    "SELECT s.name, s.version, s.created_at FROM suites s WHERE "
	                    "s.tenant_id = ? AND s.version = (SELECT MAX(t.version) FROM suites t "
	                    "WHERE t.tenant_id = s.tenant_id AND t.name = s.name) "
	                    "ORDER BY s.name LIMIT ? OFFSET ?",
	                    p, NPARAMS(p), summary_cols, NPARAMS(summary_cols), "suites", &a->out);
}

enum store_rc store_suite_list(struct store *st, const char *tenant_id, int limit, int offset,
                               json_t **out)
{
	struct suite_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                      .limit = store_clamp_limit(limit),
	                      .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return store_read_json(st, tx_suite_list, &a, &a.out, out);
}
