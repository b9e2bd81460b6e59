/*
 * Tenants, API tokens, module switches and the audit trail: the operator
 * tool's records and what every request authenticates and is gated by.
 * store_audit_insert, the audit row that every write of the store appends
 * inside its own transaction, lives here too (store_internal.h).
 */
#include "sql/store_internal.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Modules a tenant can switch on (store_module_list reports all of them). */
static const char *const store_known_modules[] = {"sandbox"};

static int module_known(const char *module)
{
	size_t i;

	for (i = 0; module && i < sizeof store_known_modules / sizeof store_known_modules[0]; i++)
		if (strcmp(module, store_known_modules[i]) == 0)
			return 1;
	return 0;
}

/* ---- tenants and tokens --------------------------------------------------- */

struct tenant_arg {
	const char *name;
	char *id_out;
	json_t *out;
};

static enum store_rc tx_tenant_create(struct store *st, void *arg)
{
	struct tenant_arg *a = arg;
	char id[33];
	char now[32];
	enum store_rc rc;

	rc = store_new_id(st, id);
	if (rc)
		return rc;
	store_now_iso(now);
	{
		struct param p[] = {PT(id), PT(a->name), PT(now)};

		rc = store_q_exec(st, "INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	if (rc == STORE_CONFLICT)
		store_seterr(st, "a tenant with this name already exists");
	if (!rc)
		memcpy(a->id_out, id, 33);
	return rc;
}

enum store_rc store_tenant_create(struct store *st, const char *name, char id_out[33])
{
	struct tenant_arg a = {.name = name, .id_out = id_out};

	id_out[0] = '\0';
	if (!store_text_ok(name, 1, MODEL_MAX_TENANT_NAME_BYTES)) {
		store_seterr(st, "tenant name must be 1..%d bytes of UTF-8",
		             MODEL_MAX_TENANT_NAME_BYTES);
		return STORE_ERROR;
	}
	return store_tx(st, tx_tenant_create, &a);
}

static enum store_rc tx_tenant_find(struct store *st, void *arg)
{
	static const struct colspec cols[] = {{"id", C_TEXT}};
	struct tenant_arg *a = arg;
	struct param p[] = {PT(a->name)};
	json_t *row = NULL;
	enum store_rc rc;
	const char *id;

	rc = store_q_row(st, "SELECT id FROM tenants WHERE name = ?", p, NPARAMS(p), cols, 1, &row);
	if (rc)
		return rc;
	id = json_string_value(json_object_get(row, "id"));
	if (!store_is_lower_hex(id, MODEL_ID_LEN)) {
		store_seterr(st, "malformed tenant id in the database");
		rc = STORE_ERROR;
	} else {
		memcpy(a->id_out, id, 33);
	}
	json_decref(row);
	return rc;
}

enum store_rc store_tenant_find(struct store *st, const char *name, char id_out[33])
{
	struct tenant_arg a = {.name = name, .id_out = id_out};

	id_out[0] = '\0';
	if (!name)
		return STORE_NOT_FOUND;
	return store_read(st, tx_tenant_find, &a);
}

static enum store_rc tx_tenant_list(struct store *st, void *arg)
{
	static const struct colspec cols[] = {
	    {"id", C_TEXT}, {"name", C_TEXT}, {"created_at", C_TEXT}};
	struct tenant_arg *a = arg;

	json_decref(a->out);
	return store_q_list(st, "SELECT id, name, created_at FROM tenants ORDER BY name", NULL, 0,
	                    cols, NPARAMS(cols), "tenants", &a->out);
}

/* A role column (1..3, or NULL) as its name, or JSON null: a new
 * reference. */
static json_t *role_json(json_t *v)
{
	static const char *const names[] = {"viewer", "editor", "admin"};
	json_int_t role = json_integer_value(v);

	if (!json_is_integer(v) || role < STORE_ROLE_VIEWER || role > STORE_ROLE_ADMIN)
		return json_null();
	return json_string(names[role - STORE_ROLE_VIEWER]);
}

static const char *const scope_names[] = {"read", "run", "compare", "write", "approve", "admin"};

const char *store_scope_name(unsigned bit)
{
	size_t i;

	for (i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++)
		if (bit == 1u << i)
			return scope_names[i];
	return NULL;
}

int store_scopes_parse(const char *list, unsigned *mask, const char **bad)
{
	const char *p = list, *end;
	size_t i, len;
	int hit;

	*mask = 0;
	*bad = NULL;
	if (!list)
		return 0;
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		hit = 0;
		for (i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++) {
			if (strlen(scope_names[i]) == len && strncmp(p, scope_names[i], len) == 0) {
				*mask |= 1u << i;
				hit = 1;
			}
		}
		if (!hit) {
			*mask = 0;
			*bad = p;
			return -1;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

void store_scopes_format(unsigned mask, const char *sep, char *out, size_t n)
{
	size_t i, used = 0;
	int w;

	if (n == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++) {
		if (!(mask & (1u << i)))
			continue;
		w = snprintf(out + used, n - used, "%s%s", used ? sep : "", scope_names[i]);
		if (w < 0 || (size_t)w >= n - used) {
			out[used] = '\0'; /* whole names only */
			return;
		}
		used += (size_t)w;
	}
}

/* A scopes mask as the array of its names: a new reference. */
static json_t *scopes_json(unsigned mask)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++)
		if (mask & (1u << i))
			json_array_append_new(arr, json_string(scope_names[i]));
	return arr;
}

struct token_list_arg {
	const char *tenant_id;
	json_t *out;
};

static enum store_rc tx_token_list(struct store *st, void *arg)
{
	static const struct colspec cols[] = {{"id", C_TEXT},      {"role", C_INT},
	                                      {"label", C_TEXT},   {"created_at", C_TEXT},
	                                      {"revoked", C_BOOL}, {"scopes", C_INT}};
	struct token_list_arg *a = arg;
	struct param p[] = {PT(a->tenant_id)};
	json_t *t;
	enum store_rc rc;
	size_t i;

	json_decref(a->out);
	rc = store_q_list(st,
	                  "SELECT id, role, label, created_at, revoked, scopes FROM api_tokens "
	                  "WHERE tenant_id = ? ORDER BY created_at, id",
	                  p, NPARAMS(p), cols, NPARAMS(cols), "tokens", &a->out);
	if (rc)
		return rc;
	/* the role as its name, as everywhere the tool prints one */
	json_array_foreach(json_object_get(a->out, "tokens"), i, t)
	{
		json_object_set_new(t, "role", role_json(json_object_get(t, "role")));
		json_object_set_new(
		    t, "scopes",
		    scopes_json((unsigned)json_integer_value(json_object_get(t, "scopes"))));
	}
	return STORE_OK;
}

enum store_rc store_token_list(struct store *st, const char *tenant_id, json_t **out)
{
	struct token_list_arg a = {.tenant_id = tenant_id};

	*out = NULL;
	if (!store_is_lower_hex(tenant_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	return store_read_json(st, tx_token_list, &a, &a.out, out);
}

enum store_rc store_tenant_list(struct store *st, json_t **out)
{
	struct tenant_arg a = {0};

	return store_read_json(st, tx_tenant_list, &a, &a.out, out);
}

struct token_arg {
	const char *tenant_id;
	enum store_role role;
	unsigned scopes;
	const char *sha;
	const char *module; /* store_token_lookup_module, else NULL */
	int enabled;
	const char *label;
	const char *actor; /* store_token_create: the audit event's actor, or NULL */
	char *id_out;
	struct store_principal *pr;
};

static enum store_rc tx_token_create(struct store *st, void *arg)
{
	struct token_arg *a = arg;
	struct param t[] = {PT(a->tenant_id)};
	char id[33];
	char now[32];
	enum store_rc rc;
	int found;

	rc = store_q_exists(st, "SELECT 1 FROM tenants WHERE id = ?", t, NPARAMS(t), &found);
	if (rc)
		return rc;
	if (!found) {
		store_seterr(st, "no such tenant");
		return STORE_NOT_FOUND;
	}
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),       PT(a->tenant_id), PI(a->role),       PT(a->sha),
		                    PT(a->label), PT(now),          PI((int)a->scopes)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO api_tokens (id, tenant_id, role, token_sha256, label, "
		    "created_at, revoked, scopes) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	if (!rc && a->actor) {
		json_t *n = json_integer(a->role), *detail;

		detail = a->scopes ? json_pack("{s:s,s:o,s:o}", "token_id", id, "role",
		                               role_json(n), "scopes", scopes_json(a->scopes))
		                   : json_pack("{s:s,s:o}", "token_id", id, "role", role_json(n));
		json_decref(n);
		rc = detail ? store_audit_insert(st, a->tenant_id, a->actor, "token.create", id,
		                                 detail)
		            : STORE_ERROR;
		json_decref(detail);
	}
	if (!rc)
		memcpy(a->id_out, id, 33);
	return rc;
}

enum store_rc store_token_create(struct store *st, const char *tenant_id, enum store_role role,
                                 const char *sha256_hex, const char *label, const char *actor,
                                 char id_out[33])
{
	return store_token_create_scoped(st, tenant_id, role, 0, sha256_hex, label, actor, id_out);
}

enum store_rc store_token_create_scoped(struct store *st, const char *tenant_id,
                                        enum store_role role, unsigned scopes,
                                        const char *sha256_hex, const char *label,
                                        const char *actor, char id_out[33])
{
	struct token_arg a = {.tenant_id = tenant_id,
	                      .role = role,
	                      .scopes = scopes,
	                      .sha = sha256_hex,
	                      .label = label ? label : "",
	                      .actor = actor,
	                      .id_out = id_out};

	id_out[0] = '\0';
	if (!store_is_lower_hex(tenant_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	if (role < STORE_ROLE_VIEWER || role > STORE_ROLE_ADMIN || (scopes & ~STORE_SCOPE_ALL) ||
	    !store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN) ||
	    !store_text_ok(a.label, 0, MODEL_MAX_TOKEN_LABEL_BYTES)) {
		store_seterr(st,
		             "token: role 1..3, known scopes, 64 lowercase hex digest and a label "
		             "of at most "
		             "%d bytes of UTF-8 are required",
		             MODEL_MAX_TOKEN_LABEL_BYTES);
		return STORE_ERROR;
	}
	return store_tx(st, tx_token_create, &a);
}

static enum store_rc tx_token_lookup(struct store *st, void *arg)
{
	/* Authentication is the one lookup that precedes knowing the tenant:
	 * the digest itself selects the row (unique), revoked tokens excluded.
	 * With a module, the same statement reads that module's setting for
	 * the token's own tenant (the join is on t.tenant_id): one query
	 * authenticates and gates a request. */
	static const char *const sql_token =
	    "SELECT id, tenant_id, role, token_sha256, scopes FROM api_tokens "
	    "WHERE token_sha256 = ? AND revoked = 0";
	static const char *const sql_module =
	    "SELECT t.id, t.tenant_id, t.role, t.token_sha256, t.scopes, m.enabled "
	    "FROM api_tokens t LEFT JOIN module_settings m "
	    "ON m.tenant_id = t.tenant_id AND m.module = ? "
	    "WHERE t.token_sha256 = ? AND t.revoked = 0";
	struct token_arg *a = arg;
	struct param p1[] = {PT(a->sha)};
	struct param p2[] = {PT(a->module), PT(a->sha)};
	struct store_principal *pr = a->pr;
	SQLHSTMT h = SQL_NULL_HSTMT;
	enum store_rc rc;
	long long on = 0;
	int row = 0, null_on = 1;

	memset(pr, 0, sizeof *pr);
	a->enabled = 0;
	if (a->module)
		rc = store_q_exec(st, sql_module, p2, NPARAMS(p2), &h, NULL);
	else
		rc = store_q_exec(st, sql_token, p1, NPARAMS(p1), &h, NULL);
	if (rc)
		return rc;
	rc = store_q_fetch(st, h, &row);
	if (rc)
		goto out;
	if (!row) {
		rc = STORE_NOT_FOUND;
		goto out;
	}
	rc = store_principal_row(st, h, pr);
	if (!rc && a->module)
		rc = store_col_int(st, h, 6, &on, &null_on);
	if (rc)
		goto out;
	/* no row for the module: off (a new tenant has every module off) */
	a->enabled = !null_on && on != 0;
out:
	store_q_free(st, h, rc != STORE_OK && rc != STORE_NOT_FOUND);
	if (rc)
		memset(pr, 0, sizeof *pr);
	return rc;
}

enum store_rc store_token_lookup(struct store *st, const char *sha256_hex,
                                 struct store_principal *out)
{
	struct token_arg a = {.sha = sha256_hex, .pr = out};

	memset(out, 0, sizeof *out);
	if (!store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN))
		return STORE_NOT_FOUND;
	return store_read(st, tx_token_lookup, &a);
}

enum store_rc store_token_lookup_module(struct store *st, const char *sha256_hex,
                                        const char *module, struct store_principal *out,
                                        int *enabled)
{
	struct token_arg a = {.sha = sha256_hex, .pr = out};
	enum store_rc rc;

	memset(out, 0, sizeof *out);
	*enabled = 0;
	if (!store_is_lower_hex(sha256_hex, STORE_SHA256_HEX_LEN))
		return STORE_NOT_FOUND;
	if (!module_known(module))
		return store_read(st, tx_token_lookup, &a); /* an unknown module is off */
	a.module = module;
	rc = store_read(st, tx_token_lookup, &a);
	if (!rc)
		*enabled = a.enabled;
	return rc;
}

/* ---- modules ----------------------------------------------------------------- */

struct module_arg {
	const char *tenant_id;
	const char *module;
	int enabled;
	const char *actor; /* store_module_set: the audit event's actor, or NULL */
	json_t *detail;    /* and its detail (borrowed) */
	json_t *out;
};

static enum store_rc module_read(struct store *st, const char *tenant_id, const char *module,
                                 int *enabled)
{
	static const struct colspec cols[] = {{"enabled", C_BOOL}};
	struct param p[] = {PT(tenant_id), PT(module)};
	json_t *row = NULL;
	enum store_rc rc;

	*enabled = 0;
	rc = store_q_row(st,
	                 "SELECT enabled FROM module_settings WHERE tenant_id = ? AND module = ?",
	                 p, NPARAMS(p), cols, 1, &row);
	if (rc == STORE_NOT_FOUND)
		return STORE_OK; /* no row: off (a new tenant has every module off) */
	if (rc)
		return rc;
	*enabled = json_is_true(json_object_get(row, "enabled"));
	json_decref(row);
	return STORE_OK;
}

static enum store_rc tx_module_get(struct store *st, void *arg)
{
	struct module_arg *a = arg;

	return module_read(st, a->tenant_id, a->module, &a->enabled);
}

enum store_rc store_module_get(struct store *st, const char *tenant_id, const char *module,
                               int *enabled)
{
	struct module_arg a = {.tenant_id = tenant_id, .module = module};
	enum store_rc rc;

	*enabled = 0;
	if (!tenant_id || !module_known(module))
		return STORE_OK;
	rc = store_read(st, tx_module_get, &a);
	if (!rc)
		*enabled = a.enabled;
	return rc;
}

static enum store_rc tx_module_set(struct store *st, void *arg)
{
	struct module_arg *a = arg;
	struct param t[] = {PT(a->tenant_id)};
	char now[32];
	int found;
	enum store_rc rc;

	rc = store_q_exists(st, "SELECT 1 FROM tenants WHERE id = ?", t, NPARAMS(t), &found);
	if (rc)
		return rc;
	if (!found)
		return STORE_NOT_FOUND;
	store_now_iso(now);
	{
		struct param p[] = {PT(a->tenant_id), PT(a->module), PI(a->enabled ? 1 : 0),
		                    PT(now)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO module_settings (tenant_id, module, enabled, updated_at) "
		    "VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, module) DO UPDATE SET "
		    "enabled = excluded.enabled, updated_at = excluded.updated_at",
		    p, NPARAMS(p), NULL, NULL);
	}
	if (!rc && a->actor)
		rc = store_audit_insert(st, a->tenant_id, a->actor,
		                        a->enabled ? "module.enable" : "module.disable", NULL,
		                        a->detail);
	return rc;
}

enum store_rc store_module_set(struct store *st, const char *tenant_id, const char *module,
                               int enabled, const char *actor, json_t *detail)
{
	struct module_arg a = {.tenant_id = tenant_id,
	                       .module = module,
	                       .enabled = enabled,
	                       .actor = actor,
	                       .detail = detail};

	if (!tenant_id)
		return STORE_NOT_FOUND;
	if (!module_known(module)) {
		store_seterr(st, "unknown module");
		return STORE_NOT_FOUND;
	}
	return store_tx(st, tx_module_set, &a);
}

static enum store_rc tx_module_list(struct store *st, void *arg)
{
	struct module_arg *a = arg;
	json_t *arr;
	enum store_rc rc;
	size_t i;
	int on;

	json_decref(a->out);
	a->out = NULL;
	arr = json_array();
	for (i = 0; i < sizeof store_known_modules / sizeof store_known_modules[0]; i++) {
		rc = module_read(st, a->tenant_id, store_known_modules[i], &on);
		if (rc) {
			json_decref(arr);
			return rc;
		}
		json_array_append_new(
		    arr, json_pack("{s:s,s:b}", "name", store_known_modules[i], "enabled", on));
	}
	a->out = json_pack("{s:o}", "modules", arr);
	return STORE_OK;
}

enum store_rc store_module_list(struct store *st, const char *tenant_id, json_t **out)
{
	struct module_arg a = {.tenant_id = tenant_id ? tenant_id : ""};

	return store_read_json(st, tx_module_list, &a, &a.out, out);
}

/* ---- audit ----------------------------------------------------------------------- */

enum store_rc store_audit_insert(struct store *st, const char *tenant_id, const char *actor,
                                 const char *action, const char *target_id, json_t *detail)
{
	char id[33];
	char now[32];
	char *text = NULL;
	enum store_rc rc;

	rc = store_new_id(st, id);
	if (rc)
		return rc;
	if (detail) {
		text = json_dumps(detail, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!text) {
			store_seterr(st, "audit detail does not encode");
			return STORE_ERROR;
		}
	}
	store_now_iso(now);
	{
		struct param p[] = {PT(id),        PT(tenant_id), PT(actor), PT(action),
		                    PT(target_id), PT(text),      PT(now)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO audit_events (id, tenant_id, actor, action, target_id, "
		    "detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	free(text);
	return rc;
}

struct token_revoke_arg {
	const char *tenant_id, *token_id, *actor;
};

static enum store_rc tx_token_revoke(struct store *st, void *arg)
{
	struct token_revoke_arg *a = arg;
	struct param p[] = {PT(a->token_id), PT(a->tenant_id)};
	json_t *detail;
	enum store_rc rc;
	SQLLEN n = 0, ended = 0;

	rc = store_q_exec(st,
	                  "UPDATE api_tokens SET revoked = 1 WHERE id = ? AND tenant_id = ? AND "
	                  "revoked = 0",
	                  p, NPARAMS(p), NULL, &n);
	if (rc)
		return rc;
	if (n != 1) {
		store_seterr(st, "no such unrevoked token for this tenant");
		return STORE_NOT_FOUND;
	}
	rc = store_q_exec(st, "DELETE FROM web_sessions WHERE token_id = ? AND tenant_id = ?", p,
	                  NPARAMS(p), NULL, &ended);
	if (rc)
		return rc;
	detail = json_pack("{s:I}", "sessions", (json_int_t)(ended > 0 ? ended : 0));
	rc = store_audit_insert(st, a->tenant_id, a->actor, "token.revoke", a->token_id, detail);
	json_decref(detail);
	return rc;
}

enum store_rc store_token_revoke(struct store *st, const char *tenant_id, const char *token_id,
                                 const char *actor)
{
	struct token_revoke_arg a = {.tenant_id = tenant_id, .token_id = token_id, .actor = actor};

	if (!store_is_lower_hex(tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(token_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	if (!actor || !store_text_ok(actor, 1, MODEL_MAX_ACTOR_BYTES)) {
		store_seterr(st, "token revoke: an actor of 1..%d bytes is required",
		             MODEL_MAX_ACTOR_BYTES);
		return STORE_ERROR;
	}
	return store_tx(st, tx_token_revoke, &a);
}

struct audit_arg {
	const char *tenant_id;
	const char *actor;
	const char *action;
	const char *target_id;
	json_t *detail;
	int limit, offset;
	json_t *out;
};

static enum store_rc tx_audit_append(struct store *st, void *arg)
{
	struct audit_arg *a = arg;

	return store_audit_insert(st, a->tenant_id, a->actor, a->action, a->target_id, a->detail);
}

enum store_rc store_audit_append(struct store *st, const char *tenant_id,
                                 const char *actor_token_id, const char *action,
                                 const char *target_id, json_t *detail)
{
	struct audit_arg a = {.tenant_id = tenant_id,
	                      .actor = actor_token_id,
	                      .action = action,
	                      .target_id = target_id,
	                      .detail = detail};

	if (!tenant_id || !store_text_ok(action, 1, MODEL_MAX_ACTION_BYTES)) {
		store_seterr(st, "audit: tenant and action (1..%d bytes) are required",
		             MODEL_MAX_ACTION_BYTES);
		return STORE_ERROR;
	}
	return store_tx(st, tx_audit_append, &a);
}

static enum store_rc tx_audit_list(struct store *st, void *arg)
{
	static const struct colspec cols[] = {{"id", C_TEXT},        {"actor", C_TEXT},
	                                      {"action", C_TEXT},    {"target_id", C_TEXT},
	                                      {"detail", C_JSON},    {"created_at", C_TEXT},
	                                      {"actor_role", C_INT}, {"actor_label", C_TEXT}};
	struct audit_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PI(a->limit), PI(a->offset)};
	json_t *ev;
	size_t i;
	enum store_rc rc;

	json_decref(a->out);
	/* the actor's token, when the actor is one of the tenant's tokens (the
	 * operator tool's events name "olivares-admin"): its role and label */
	rc = store_q_list(st,
	                  "SELECT e.id, e.actor, e.action, e.target_id, e.detail, e.created_at, "
	                  "t.role, t.label FROM audit_events e LEFT JOIN api_tokens t "
	                  "ON t.id = e.actor AND t.tenant_id = e.tenant_id "
	                  "WHERE e.tenant_id = ? ORDER BY e.ord DESC LIMIT ? OFFSET ?",
	                  p, NPARAMS(p), cols, NPARAMS(cols), "events", &a->out);
	if (rc)
		return rc;
	json_array_foreach(json_object_get(a->out, "events"), i, ev)
	{
		json_object_set_new(ev, "actor_role", role_json(json_object_get(ev, "actor_role")));
	}
	return STORE_OK;
}

enum store_rc store_audit_list_page(struct store *st, const char *tenant_id, int limit, int offset,
                                    json_t **out)
{
	struct audit_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                      .limit = store_clamp_limit(limit),
	                      .offset = offset < 0 ? 0 : offset};

	return store_read_json(st, tx_audit_list, &a, &a.out, out);
}

enum store_rc store_audit_list(struct store *st, const char *tenant_id, int limit, json_t **out)
{
	return store_audit_list_page(st, tenant_id, limit, 0, out);
}

enum store_rc store_tenant_hold(struct store *st, const char *tenant_id)
{
	struct param p[] = {PT(tenant_id)};
	SQLLEN rows = 0;
	enum store_rc rc;
	int found = 0;

	if (st->dialect == DIALECT_POSTGRES) {
		rc = store_q_exists(st, "SELECT id FROM tenants WHERE id = ? FOR NO KEY UPDATE", p,
		                    NPARAMS(p), &found);
	} else {
		rc = store_q_exec(st, "UPDATE tenants SET name = name WHERE id = ?", p, NPARAMS(p),
		                  NULL, &rows);
		found = rows > 0;
	}
	if (!rc && !found) {
		store_seterr(st, "no such tenant");
		rc = STORE_NOT_FOUND;
	}
	return rc;
}
