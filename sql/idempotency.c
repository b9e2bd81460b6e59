/*
 * Idempotency keys: the first answer of a create request sent with an
 * Idempotency-Key, kept so that a retry gets it back (store.h). A key's
 * row is written by the create's own transaction (store_idem_insert,
 * called by each create), so the record and its key commit or roll back
 * together.
 */
#include "sql/store_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct colspec idem_cols[] = {
    {"route", C_TEXT}, {"request_sha256", C_TEXT}, {"status", C_INT}, {"response", C_JSON}};

static int idem_ok(const struct store_idem *idem)
{
	return idem && store_text_ok(idem->key, 1, STORE_IDEM_KEY_MAX) &&
	       store_text_ok(idem->route, 1, STORE_IDEM_ROUTE_MAX) &&
	       store_is_lower_hex(idem->request_sha256, STORE_SHA256_HEX_LEN) &&
	       store_text_ok(idem->now, 1, 31) && store_text_ok(idem->expires_at, 1, 31) &&
	       idem->status >= 200 && idem->status <= 299;
}

struct idem_arg {
	const char *tenant_id;
	const struct store_idem *idem;
	int status;
	json_t *out;
};

static enum store_rc tx_idem_lookup(struct store *st, void *arg)
{
	struct idem_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->idem->key), PT(a->idem->now)};
	const char *route, *sha;
	json_t *row = NULL;
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	/* an expired row is as good as none: it is deleted by the tenant's
	 * next key write, and its key may then be used again */
	rc = store_q_row(st,
	                 "SELECT route, request_sha256, status, response FROM idempotency_keys "
	                 "WHERE tenant_id = ? AND idem_key = ? AND expires_at > ?",
	                 p, NPARAMS(p), idem_cols, NPARAMS(idem_cols), &row);
	if (rc)
		return rc;
	route = json_string_value(json_object_get(row, "route"));
	sha = json_string_value(json_object_get(row, "request_sha256"));
	if (!route || !sha || strcmp(route, a->idem->route) != 0 ||
	    strcmp(sha, a->idem->request_sha256) != 0) {
		json_decref(row);
		return STORE_CONFLICT;
	}
	a->status = (int)json_integer_value(json_object_get(row, "status"));
	a->out = json_incref(json_object_get(row, "response"));
	json_decref(row);
	if (!a->out) {
		store_seterr(st, "idempotency key: the stored response does not decode");
		return STORE_ERROR;
	}
	return STORE_OK;
}

enum store_rc store_idem_lookup(struct store *st, const char *tenant_id,
                                const struct store_idem *idem, int *status, json_t **response)
{
	struct idem_arg a = {.tenant_id = tenant_id, .idem = idem};
	enum store_rc rc;

	*status = 0;
	*response = NULL;
	if (!tenant_id || !idem_ok(idem)) {
		store_seterr(st, "idempotency key: tenant, key, route, request digest, times and "
		                 "a 2xx status required");
		return STORE_ERROR;
	}
	rc = store_read_json(st, tx_idem_lookup, &a, &a.out, response);
	if (!rc)
		*status = a.status;
	return rc;
}

enum store_rc store_idem_insert(struct store *st, const char *tenant_id,
                                const struct store_idem *idem, json_t *response)
{
	char *text;
	enum store_rc rc;

	if (!idem)
		return STORE_OK;
	if (!idem_ok(idem) || !response) {
		store_seterr(st, "idempotency key: malformed key record");
		return STORE_ERROR;
	}
	{
		/* cleanup on write: no job sweeps the table, and a tenant's
		 * expired keys go when it writes its next one */
		struct param p[] = {PT(tenant_id), PT(idem->now)};

		rc = store_q_exec(
		    st, "DELETE FROM idempotency_keys WHERE tenant_id = ? AND expires_at <= ?", p,
		    NPARAMS(p), NULL, NULL);
		if (rc)
			return rc;
	}
	text = json_dumps(response, JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (!text) {
		store_seterr(st, "idempotency key: the response does not encode");
		return STORE_ERROR;
	}
	{
		struct param p[] = {
		    PT(tenant_id),    PT(idem->key), PT(idem->route), PT(idem->request_sha256),
		    PI(idem->status), PT(text),      PT(idem->now),   PT(idem->expires_at)};

		/* a key taken meanwhile (a concurrent request with the same
		 * key) is a unique violation: STORE_CONFLICT, and the whole
		 * create rolls back with it */
		rc = store_q_exec(st,
		                  "INSERT INTO idempotency_keys (tenant_id, idem_key, route, "
		                  "request_sha256, status, response, created_at, expires_at) "
		                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		                  p, NPARAMS(p), NULL, NULL);
	}
	free(text);
	return rc;
}
