/*
 * Module enablement per tenant: GET /v1/modules, PUT /v1/modules/sandbox
 * (admin). While the module is off its routes answer 404 module_disabled
 * (the router's gate) and its data is kept.
 */
#include "fcgi/api/api_internal.h"

int api_modules_list(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = store_module_list(req->store, req->who.tenant_id, &out);
	return api_reply_stored(req, rc, "module list", 200, out, err);
}

int api_module_set(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"enabled", NULL};
	json_t *enabled, *detail;
	enum store_rc rc;
	int on;

	if (api_only_fields(req->json, fields, err))
		return -1;
	enabled = json_object_get(req->json, "enabled");
	if (!json_is_boolean(enabled))
		return model_error_set(err, MODEL_E_MALFORMED, "enabled",
		                       "enabled must be true or false");
	on = json_is_true(enabled);
	/* the switch and its audit event in one transaction */
	detail = http_req_own(req, json_pack("{s:s}", "module", API_MODULE_SANDBOX));
	rc = store_module_set(req->store, req->who.tenant_id, API_MODULE_SANDBOX, on,
	                      req->who.token_id, detail);
	if (rc)
		return http_store_fail(req, rc, "module set", err);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s,s:b}", "name", API_MODULE_SANDBOX, "enabled", on)));
}

int api_module_unknown(struct http_request *req, struct model_error *err)
{
	char shown[72];

	http_printable(shown, sizeof(shown), req->params[0]);
	return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "unknown module %s (known: %s)", shown,
	                       API_MODULE_SANDBOX);
}
