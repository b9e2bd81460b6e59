/*
 * Scenarios: the synthetic fixtures a run executes (steps and mocks), with
 * a version bumped by every update and a digest over steps and mocks.
 */
#include "sql/store_internal.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "model/text.h"

static int sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return -1;
	model_hex_encode(md, 32, out);
	return 0;
}

static const struct colspec scenario_cols[] = {{"id", C_TEXT},          {"name", C_TEXT},
                                               {"description", C_TEXT}, {"subject_kind", C_TEXT},
                                               {"steps", C_JSON},       {"mocks", C_JSON},
                                               {"version", C_INT},      {"digest", C_TEXT},
                                               {"created_at", C_TEXT},  {"updated_at", C_TEXT}};
#define SCENARIO_SELECT                                                                            \
	"SELECT id, name, description, subject_kind, steps, mocks, version, digest, "              \
	"created_at, updated_at FROM scenarios"

static const struct colspec summary_cols[] = {
    {"id", C_TEXT},           {"name", C_TEXT},       {"description", C_TEXT},
    {"subject_kind", C_TEXT}, {"version", C_INT},     {"steps_count", C_INT},
    {"mocks_count", C_INT},   {"created_at", C_TEXT}, {"updated_at", C_TEXT}};

/* The stored text of steps and mocks, and the digest over both. */
struct scenario_text {
	char *steps;
	char *mocks;
	char digest[65];
};

static void scenario_text_free(struct scenario_text *t)
{
	free(t->steps);
	free(t->mocks);
	t->steps = t->mocks = NULL;
}

/*
 * digest = SHA-256 hex of json_dumps({"steps":…,"mocks":…},
 * JSON_COMPACT | JSON_SORT_KEYS): the same steps and mocks give the same
 * digest whatever the key order they arrived in.
 */
static enum store_rc scenario_encode(struct store *st, json_t *steps, json_t *mocks,
                                     struct scenario_text *t)
{
	json_t *both;
	char *canon;
	int bad;

	t->steps = json_dumps(steps, JSON_COMPACT);
	t->mocks = json_dumps(mocks, JSON_COMPACT);
	both = json_pack("{s:O,s:O}", "steps", steps, "mocks", mocks);
	canon = both ? json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(both);
	bad = !t->steps || !t->mocks || !canon || sha256_hex(canon, strlen(canon), t->digest);
	free(canon);
	if (bad) {
		scenario_text_free(t);
		store_seterr(st, "scenario steps/mocks do not encode");
		return STORE_ERROR;
	}
	return STORE_OK;
}

/* Fields of a scenario as they will be stored. Borrowed from the caller's
 * JSON except where noted. */
struct scenario_fields {
	const char *name;
	const char *description;
	const char *subject_kind;
	json_t *steps;
	json_t *mocks;
};

static int scenario_fields_ok(const struct scenario_fields *f)
{
	return store_text_ok(f->name, 1, MODEL_MAX_NAME_BYTES) &&
	       store_text_ok(f->description, 0, MODEL_MAX_DESCRIPTION_BYTES) &&
	       store_text_ok(f->subject_kind, 0, MODEL_MAX_SUBJECT_BYTES) &&
	       json_is_array(f->steps) && json_is_array(f->mocks);
}

static json_t *scenario_object(const char *id, const struct scenario_fields *f, int version,
                               const char *digest, const char *created, const char *updated)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:i,s:s,s:s,s:s}", "id", id, "name", f->name,
	                 "description", f->description, "subject_kind", f->subject_kind, "steps",
	                 json_deep_copy(f->steps), "mocks", json_deep_copy(f->mocks), "version",
	                 version, "digest", digest, "created_at", created, "updated_at", updated);
}

struct scenario_arg {
	const char *tenant_id;
	const char *actor;
	const char *id;
	json_t *body;
	const struct store_idem *idem; /* create only; NULL: none */
	int limit, offset;
	json_t *out;
};

static enum store_rc tx_scenario_create(struct store *st, void *arg)
{
	struct scenario_arg *a = arg;
	struct scenario_fields f;
	struct scenario_text t = {0};
	char id[33];
	char now[32];
	enum store_rc rc;
	json_t *detail;

	json_decref(a->out);
	a->out = NULL;
	f.name = json_string_value(json_object_get(a->body, "name"));
	f.description = json_string_value(json_object_get(a->body, "description"));
	f.subject_kind = json_string_value(json_object_get(a->body, "subject_kind"));
	f.steps = json_object_get(a->body, "steps");
	f.mocks = json_object_get(a->body, "mocks");
	if (!f.description)
		f.description = "";
	if (!f.subject_kind)
		f.subject_kind = "agent";
	if (!f.mocks)
		f.mocks = json_array(); /* our own reference, like the incref below */
	else
		json_incref(f.mocks);
	if (!scenario_fields_ok(&f)) {
		json_decref(f.mocks);
		store_seterr(st,
		             "scenario: name, description, subject_kind, steps, mocks malformed");
		return STORE_ERROR;
	}
	rc = scenario_encode(st, f.steps, f.mocks, &t);
	if (rc)
		goto out;
	rc = store_new_id(st, id);
	if (rc)
		goto out;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),
		                    PT(a->tenant_id),
		                    PT(f.name),
		                    PT(f.description),
		                    PT(f.subject_kind),
		                    PT(t.steps),
		                    PT(t.mocks),
		                    PI((long long)json_array_size(f.steps)),
		                    PI((long long)json_array_size(f.mocks)),
		                    PT(t.digest),
		                    PT(a->actor),
		                    PT(now),
		                    PT(now)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO scenarios (id, tenant_id, name, description, subject_kind, "
		    "steps, mocks, steps_count, mocks_count, version, digest, created_by, "
		    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	if (rc)
		goto out;
	detail = json_pack("{s:i}", "version", 1);
	rc = store_audit_insert(st, a->tenant_id, a->actor, "sandbox.scenario.create", id, detail);
	json_decref(detail);
	if (rc)
		goto out;
	a->out = scenario_object(id, &f, 1, t.digest, now, now);
	if (!a->out) {
		store_seterr(st, "scenario: cannot build the stored object");
		rc = STORE_ERROR;
		goto out;
	}
	rc = store_idem_insert(st, a->tenant_id, a->idem, a->out);
out:
	json_decref(f.mocks);
	scenario_text_free(&t);
	return rc;
}

enum store_rc store_scenario_create(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, json_t *scenario, json_t **out)
{
	return store_scenario_create_idem(st, tenant_id, actor_token_id, scenario, NULL, out);
}

enum store_rc store_scenario_create_idem(struct store *st, const char *tenant_id,
                                         const char *actor_token_id, json_t *scenario,
                                         const struct store_idem *idem, json_t **out)
{
	struct scenario_arg a = {
	    .tenant_id = tenant_id, .actor = actor_token_id, .body = scenario, .idem = idem};

	*out = NULL;
	if (!tenant_id || !json_is_object(scenario)) {
		store_seterr(st, "scenario: tenant and object required");
		return STORE_ERROR;
	}
	return store_tx_json(st, tx_scenario_create, &a, &a.out, out);
}

static enum store_rc scenario_read(struct store *st, const char *tenant_id, const char *id,
                                   json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(id)};

	return store_q_row(st, SCENARIO_SELECT " WHERE tenant_id = ? AND id = ?", p, NPARAMS(p),
	                   scenario_cols, NPARAMS(scenario_cols), out);
}

enum store_rc store_scenario_get(struct store *st, const char *tenant_id, const char *id,
                                 json_t **out)
{
	return store_get(st, scenario_read, tenant_id, id, out);
}

static enum store_rc tx_scenario_list(struct store *st, void *arg)
{
	struct scenario_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PI(a->limit), PI(a->offset)};

	json_decref(a->out);
	return store_q_list(
	    st,
	    "SELECT id, name, description, subject_kind, version, steps_count, "
	    "mocks_count, created_at, updated_at FROM scenarios WHERE tenant_id = ? "
	    "ORDER BY ord DESC LIMIT ? OFFSET ?",
	    p, NPARAMS(p), summary_cols, NPARAMS(summary_cols), "scenarios", &a->out);
}

enum store_rc store_scenario_list(struct store *st, const char *tenant_id, int limit, int offset,
                                  json_t **out)
{
	struct scenario_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                         .limit = store_clamp_limit(limit),
	                         .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return store_read_json(st, tx_scenario_list, &a, &a.out, out);
}

static enum store_rc tx_scenario_update(struct store *st, void *arg)
{
	static const char *const allowed[] = {"name", "description", "subject_kind", "steps",
	                                      "mocks"};
	struct scenario_arg *a = arg;
	struct scenario_fields f;
	struct scenario_text t = {0};
	json_t *cur = NULL;
	json_t *detail;
	const char *key;
	json_t *val;
	char now[32];
	enum store_rc rc;
	json_int_t version;
	SQLLEN rows = 0;
	size_t i;
	int known;

	json_decref(a->out);
	a->out = NULL;
	json_object_foreach(a->body, key, val)
	{
		known = 0;
		for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
			if (strcmp(key, allowed[i]) == 0)
				known = 1;
		if (!known) {
			store_seterr(st, "scenario update: unknown field");
			return STORE_ERROR;
		}
	}
	rc = scenario_read(st, a->tenant_id, a->id, &cur);
	if (rc)
		return rc;
	/* the patch wins field by field over the stored row */
	json_object_update(cur, a->body);
	f.name = json_string_value(json_object_get(cur, "name"));
	f.description = json_string_value(json_object_get(cur, "description"));
	f.subject_kind = json_string_value(json_object_get(cur, "subject_kind"));
	f.steps = json_object_get(cur, "steps");
	f.mocks = json_object_get(cur, "mocks");
	version = json_integer_value(json_object_get(cur, "version"));
	if (!scenario_fields_ok(&f)) {
		store_seterr(st, "scenario update: malformed field");
		rc = STORE_ERROR;
		goto out;
	}
	rc = scenario_encode(st, f.steps, f.mocks, &t);
	if (rc)
		goto out;
	store_now_iso(now);
	{
		struct param p[] = {PT(f.name),
		                    PT(f.description),
		                    PT(f.subject_kind),
		                    PT(t.steps),
		                    PT(t.mocks),
		                    PI((long long)json_array_size(f.steps)),
		                    PI((long long)json_array_size(f.mocks)),
		                    PI(version + 1),
		                    PT(t.digest),
		                    PT(now),
		                    PT(a->tenant_id),
		                    PT(a->id),
		                    PI(version)};

		/* "AND version = ?": a concurrent update in between makes this
		 * match nothing, and the transaction is retried on fresh data. */
		rc = store_q_exec(
		    st,
		    "UPDATE scenarios SET name = ?, description = ?, subject_kind = ?, "
		    "steps = ?, mocks = ?, steps_count = ?, mocks_count = ?, version = ?, "
		    "digest = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND version = ?",
		    p, NPARAMS(p), NULL, &rows);
	}
	if (rc)
		goto out;
	if (rows != 1) {
		st->busy = 1;
		store_seterr(st, "scenario changed concurrently");
		rc = STORE_UNAVAILABLE;
		goto out;
	}
	detail = json_pack("{s:I}", "version", version + 1);
	rc = store_audit_insert(st, a->tenant_id, a->actor, "sandbox.scenario.update", a->id,
	                        detail);
	json_decref(detail);
	if (rc)
		goto out;
	a->out = scenario_object(a->id, &f, (int)(version + 1), t.digest,
	                         json_string_value(json_object_get(cur, "created_at")), now);
	if (!a->out) {
		store_seterr(st, "scenario: cannot build the stored object");
		rc = STORE_ERROR;
	}
out:
	scenario_text_free(&t);
	json_decref(cur);
	return rc;
}

enum store_rc store_scenario_update(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *id, json_t *patch,
                                    json_t **out)
{
	struct scenario_arg a = {
	    .tenant_id = tenant_id, .actor = actor_token_id, .id = id, .body = patch};

	*out = NULL;
	if (!tenant_id || !id)
		return STORE_NOT_FOUND;
	if (!json_is_object(patch)) {
		store_seterr(st, "scenario update: object required");
		return STORE_ERROR;
	}
	return store_tx_json(st, tx_scenario_update, &a, &a.out, out);
}

static enum store_rc tx_scenario_delete(struct store *st, void *arg)
{
	struct scenario_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->id)};
	SQLLEN rows = 0;
	enum store_rc rc;

	rc = store_q_exec(st, "DELETE FROM scenarios WHERE tenant_id = ? AND id = ?", p, NPARAMS(p),
	                  NULL, &rows);
	if (rc)
		return rc;
	if (rows == 0)
		return STORE_NOT_FOUND;
	return store_audit_insert(st, a->tenant_id, a->actor, "sandbox.scenario.delete", a->id,
	                          NULL);
}

enum store_rc store_scenario_delete(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *id)
{
	struct scenario_arg a = {.tenant_id = tenant_id, .actor = actor_token_id, .id = id};

	if (!tenant_id || !id)
		return STORE_NOT_FOUND;
	return store_tx_json(st, tx_scenario_delete, &a, &a.out, NULL);
}
