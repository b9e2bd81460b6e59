#ifndef OLIVARES_FCGI_RETENTION_H
#define OLIVARES_FCGI_RETENTION_H
/**
 * The retention policy applied tenant by tenant (docs/retention.md):
 * which tenants have a retention and how long, from the
 * configuration, and the store's purge of each (sql/store.h
 * store_retention_purge). Shared by the olivares-fcgi master's automatic
 * purge and olivares-admin purge.
 */
#include "fcgi/config.h"
#include "sql/store.h"

/** How a policy run goes. */
struct http_retention_opts {
	const char *tenant_name; /* only this tenant (NULL: every tenant of the store) */
	int include_referenced;  /* store_retention.include_referenced */
	int dry_run;             /* store_retention.dry_run */
	const char *actor;       /* the audit events' actor */
};

/** One tenant's outcome, handed to the report callback. days 0: the
 * tenant keeps everything (nothing was asked of the store, r zeroed);
 * rc the store's answer for it (STORE_OK, or what failed: r then holds
 * what was committed before). */
struct http_retention_tenant {
	const char *id;
	const char *name;
	int days;
	enum store_rc rc;
	struct store_retention_result r;
};

/** Called once per tenant looked at, in name order (borrowed pointers,
 * valid during the call); st is the store, for store_last_error. */
typedef void (*http_retention_report_fn)(void *ctx, struct store *st,
                                         const struct http_retention_tenant *t);

/**
 * Purge every tenant of st (or opts->tenant_name only) by its retention
 * (http_config_retention_days), reporting each to report (may be NULL),
 * and add the counts of all to *total (zeroed first) and the number of
 * tenants with a retention to *tenants (may be NULL). A tenant whose purge
 * fails does not stop the others. Returns 0, or -1 when the tenants
 * cannot be listed (store_last_error(st) says why) or a tenant's purge
 * failed.
 */
int http_retention_run(const struct http_config *cfg, struct store *st,
                       const struct http_retention_opts *opts, http_retention_report_fn report,
                       void *ctx, struct store_retention_result *total, int *tenants);

#endif
