/*
 * A tenant's stored bytes (store.h, store_tenant_usage): what a storage
 * quota ([server] max_stored_mb) counts, one SELECT of sums over the
 * tenant's rows. The bytes of a text are its UTF-8 bytes on both
 * dialects (SQLite's LENGTH counts characters, so the text is cast to a
 * blob first; PostgreSQL has OCTET_LENGTH). Indexes, page slack and the
 * rows' fixed columns are not counted: the figure is the tenant's data,
 * not the database file.
 */
#include <string.h>

#include "sql/store_internal.h"

/* One statement per dialect, the same sums; the tenant is bound once per
 * sum. A NULL text (an output without a trace) counts 0. */
static const char usage_sqlite[] =
    "SELECT (SELECT COALESCE(SUM(COALESCE(LENGTH(CAST(name AS BLOB)), 0) + "
    "COALESCE(LENGTH(CAST(description AS BLOB)), 0) + COALESCE(LENGTH(CAST(steps AS BLOB)), 0) + "
    "COALESCE(LENGTH(CAST(mocks AS BLOB)), 0)), 0) FROM scenarios WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(LENGTH(CAST(key AS BLOB)), 0) + COALESCE(LENGTH(CAST(input AS "
    "BLOB)), 0) + COALESCE(LENGTH(CAST(output AS BLOB)), 0) + COALESCE(LENGTH(CAST(trace AS "
    "BLOB)), 0)), 0) FROM run_outputs WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(LENGTH(CAST(text AS BLOB)), 0)), 0) FROM run_logs WHERE "
    "tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(LENGTH(CAST(external_id AS BLOB)), 0) + "
    "COALESCE(LENGTH(CAST(events AS BLOB)), 0)), 0) FROM sessions WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(LENGTH(CAST(document AS BLOB)), 0)), 0) FROM suites WHERE "
    "tenant_id = ?), "
    "(SELECT COUNT(*) FROM runs WHERE tenant_id = ?)";
static const char usage_pg[] =
    "SELECT (SELECT COALESCE(SUM(COALESCE(OCTET_LENGTH(name), 0) + "
    "COALESCE(OCTET_LENGTH(description), 0) + COALESCE(OCTET_LENGTH(steps), 0) + "
    "COALESCE(OCTET_LENGTH(mocks), 0)), 0) FROM scenarios WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(OCTET_LENGTH(key), 0) + COALESCE(OCTET_LENGTH(input), 0) + "
    "COALESCE(OCTET_LENGTH(output), 0) + COALESCE(OCTET_LENGTH(trace), 0)), 0) FROM run_outputs "
    "WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(OCTET_LENGTH(text), 0)), 0) FROM run_logs WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(OCTET_LENGTH(external_id), 0) + COALESCE(OCTET_LENGTH(events), "
    "0)), 0) FROM sessions WHERE tenant_id = ?), "
    "(SELECT COALESCE(SUM(COALESCE(OCTET_LENGTH(document), 0)), 0) FROM suites WHERE tenant_id = "
    "?), "
    "(SELECT COUNT(*) FROM runs WHERE tenant_id = ?)";

struct usage_arg {
	const char *tenant_id;
	struct store_usage *u;
};

static enum store_rc tx_usage(struct store *st, void *arg)
{
	struct usage_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->tenant_id), PT(a->tenant_id),
	                    PT(a->tenant_id), PT(a->tenant_id), PT(a->tenant_id)};
	long long *fields[] = {&a->u->scenarios, &a->u->outputs, &a->u->logs,
	                       &a->u->sessions,  &a->u->suites,  &a->u->runs};
	SQLHSTMT h;
	enum store_rc rc;
	size_t i;
	int row = 0, null = 0;

	memset(a->u, 0, sizeof *a->u);
	rc = store_q_exec(st, st->dialect == DIALECT_POSTGRES ? usage_pg : usage_sqlite, p,
	                  NPARAMS(p), &h, NULL);
	if (rc)
		return rc;
	rc = store_q_fetch(st, h, &row);
	if (!rc && !row) {
		store_seterr(st, "the usage query returned no row");
		rc = STORE_ERROR;
	}
	for (i = 0; !rc && i < sizeof fields / sizeof fields[0]; i++)
		rc = store_col_int(st, h, (int)i + 1, fields[i], &null);
	store_q_free(st, h, rc != STORE_OK);
	if (rc) {
		memset(a->u, 0, sizeof *a->u);
		return rc;
	}
	a->u->total = a->u->scenarios + a->u->outputs + a->u->logs + a->u->sessions + a->u->suites;
	return STORE_OK;
}

enum store_rc store_tenant_usage(struct store *st, const char *tenant_id, struct store_usage *u)
{
	struct usage_arg a = {.tenant_id = tenant_id, .u = u};

	memset(u, 0, sizeof *u);
	if (!tenant_id || !store_is_lower_hex(tenant_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	return store_read(st, tx_usage, &a);
}

void store_quota_guard(struct store *st, const char *tenant_id, long long limit_bytes)
{
	if (!st)
		return;
	st->quota_limit = 0;
	st->quota_tenant[0] = '\0';
	if (!tenant_id || !store_is_lower_hex(tenant_id, MODEL_ID_LEN) || limit_bytes <= 0)
		return;
	memcpy(st->quota_tenant, tenant_id, MODEL_ID_LEN);
	st->quota_tenant[MODEL_ID_LEN] = '\0';
	st->quota_limit = limit_bytes;
}

enum store_rc store_quota_guard_check(struct store *st)
{
	struct store_usage u;
	struct usage_arg a = {.tenant_id = st->quota_tenant, .u = &u};
	enum store_rc rc;

	/* a concurrent guarded write of the tenant waits here, then sums
	 * what this one committed (a PostgreSQL statement sees what committed
	 * before it started) */
	rc = store_tenant_hold(st, st->quota_tenant);
	if (!rc)
		rc = tx_usage(st, &a);
	if (!rc && u.total > st->quota_limit) {
		store_seterr(st,
		             "the write would take the tenant to %lld bytes of its quota of %lld",
		             u.total, st->quota_limit);
		rc = STORE_QUOTA;
	}
	return rc;
}
