/*
 * History sessions imported for replay: POST and GET (list and one)
 * /v1/m/sandbox/sessions. A session is checked by the model
 * (model/history.h) before the store sees it; sessions are append-only.
 */
#include "fcgi/api/api_internal.h"
#include "fcgi/run/job.h"
#include "model/history.h"

int api_session_create(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_session_check(req->json, &norm, err))
		return -1;
	http_req_own(req, norm);
	if (http_quota_check(req, norm, err))
		return -1;
	rc = store_session_create_idem(req->store, req->who.tenant_id, req->who.token_id, norm,
	                               http_req_idem(req, 201), &out);
	return api_reply_stored(req, rc, "session import", 201, out, err);
}

int api_session_list(struct http_request *req, struct model_error *err)
{
	return api_reply_page(req, store_session_list, "session list", err);
}

int api_session_get(struct http_request *req, struct model_error *err)
{
	return api_reply_item(req, store_session_get, "session get", err);
}
