/*
 * The scenario catalogue: POST, GET (list and one), PUT (a new version)
 * and DELETE /v1/m/sandbox/scenarios. A scenario is checked and clamped by
 * the model (model/scenario.h) before the store sees it.
 */
#include "fcgi/api/api_internal.h"
#include "fcgi/run/job.h"
#include "model/scenario.h"

int api_scenario_create(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_scenario_check(req->json, 0, &norm, err))
		return -1;
	http_req_own(req, norm);
	if (http_quota_check(req, norm, err))
		return -1;
	rc = store_scenario_create_idem(req->store, req->who.tenant_id, req->who.token_id, norm,
	                                http_req_idem(req, 201), &out);
	return api_reply_stored(req, rc, "scenario create", 201, out, err);
}

int api_scenario_list(struct http_request *req, struct model_error *err)
{
	return api_reply_page(req, store_scenario_list, "scenario list", err);
}

int api_scenario_get(struct http_request *req, struct model_error *err)
{
	return api_reply_item(req, store_scenario_get, "scenario get", err);
}

int api_scenario_update(struct http_request *req, struct model_error *err)
{
	json_t *norm = NULL, *out = NULL;
	enum store_rc rc;

	if (model_scenario_check(req->json, 1, &norm, err))
		return -1;
	http_req_own(req, norm);
	/* the whole new version counts: the one it replaces is freed only
	 * once it is stored */
	if (http_quota_check(req, norm, err))
		return -1;
	rc = store_scenario_update(req->store, req->who.tenant_id, req->who.token_id,
	                           req->params[0], norm, &out);
	return api_reply_stored(req, rc, "scenario update", 200, out, err);
}

int api_scenario_delete(struct http_request *req, struct model_error *err)
{
	enum store_rc rc;

	rc = store_scenario_delete(req->store, req->who.tenant_id, req->who.token_id,
	                           req->params[0]);
	if (rc)
		return http_store_fail(req, rc, "scenario delete", err);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s,s:b}", "id", req->params[0], "deleted", 1)));
}
