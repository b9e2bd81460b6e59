/*
 * GET /healthz (public): the store answers and its schema is the one this
 * build expects.
 */
#include "fcgi/api/api_internal.h"

int api_healthz(struct http_request *req, struct model_error *err)
{
	enum store_rc rc;

	rc = store_check_schema(req->store);
	if (rc)
		return http_store_fail(req, rc, "health check", err);
	return http_reply_json(req, 200, http_req_own(req, json_pack("{s:s}", "status", "ok")));
}
