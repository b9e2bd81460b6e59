/*
 * GET /v1/m/sandbox/audit (admin): the tenant's audit trail, newest first,
 * a page at a time.
 */
#include "fcgi/api/api_internal.h"

/* A page of the audit trail when the query names none: longer than the
 * other lists' (API_LIST_LIMIT_DEFAULT). */
#define AUDIT_LIMIT_DEFAULT 100

int api_audit_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (http_query_int(req, "limit", AUDIT_LIMIT_DEFAULT, 1, API_LIST_LIMIT_MAX, &limit, err) ||
	    http_query_int(req, "offset", 0, 0, API_OFFSET_MAX, &offset, err))
		return -1;
	rc = store_audit_list_page(req->store, req->who.tenant_id, limit, offset, &out);
	return api_reply_stored(req, rc, "audit list", 200, out, err);
}
