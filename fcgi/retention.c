/*
 * The retention policy applied tenant by tenant (retention.h): the
 * configuration says how long, the store deletes.
 */
#include "fcgi/retention.h"

#include <string.h>

_Static_assert(HTTP_RETENTION_DAYS_MAX == STORE_RETENTION_DAYS_MAX,
               "[server] retention_days and the store's bound differ");

int http_retention_run(const struct http_config *cfg, struct store *st,
                       const struct http_retention_opts *opts, http_retention_report_fn report,
                       void *ctx, struct store_retention_result *total, int *tenants)
{
	struct store_retention ret;
	struct http_retention_tenant t;
	json_t *list = NULL, *e;
	size_t i;
	int rc = 0;

	memset(total, 0, sizeof *total);
	if (tenants)
		*tenants = 0;
	if (store_tenant_list(st, &list))
		return -1;
	json_array_foreach(json_object_get(list, "tenants"), i, e)
	{
		memset(&t, 0, sizeof t);
		t.id = json_string_value(json_object_get(e, "id"));
		t.name = json_string_value(json_object_get(e, "name"));
		if (!t.id || !t.name)
			continue;
		if (opts->tenant_name && strcmp(opts->tenant_name, t.name) != 0)
			continue;
		t.days = http_config_retention_days(cfg, t.name);
		if (t.days > 0) {
			memset(&ret, 0, sizeof ret);
			ret.retention_days = t.days;
			ret.include_referenced = opts->include_referenced;
			ret.dry_run = opts->dry_run;
			t.rc = store_retention_purge(st, t.id, &ret, opts->actor, &t.r);
			if (t.rc)
				rc = -1;
			total->runs += t.r.runs;
			total->outputs += t.r.outputs;
			total->logs += t.r.logs;
			total->kept += t.r.kept;
			total->transactions += t.r.transactions;
			if (tenants)
				(*tenants)++;
		}
		if (report)
			report(ctx, st, &t);
	}
	json_decref(list);
	return rc;
}
