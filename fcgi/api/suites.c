/*
 * Suites in the store: POST, GET (list and one) and PUT (a new version)
 * of /v1/m/sandbox/suites. A document is checked by the model
 * (model_suite_check) before the store sees it; a path's "name@N" names
 * version N, a bare name the latest.
 */
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/run/job.h"
#include "model/limits.h"
#include "model/suite.h"

/* The body as the document of suite name: its "name" filled from name when
 * absent, refused when it differs; then model_suite_check. */
static int suite_document(struct http_request *req, const char *name, json_t **doc,
                          struct model_error *err)
{
	json_t *v, *copy;

	*doc = NULL;
	v = json_object_get(req->json, "name");
	if (v && !json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "name", "name must be a string");
	if (!name) {
		if (!v)
			return model_error_set(err, MODEL_E_MALFORMED, "name",
			                       "name is required (the suite's name)");
		name = json_string_value(v);
	}
	if (!model_suite_name_valid(name))
		return model_error_set(err, MODEL_E_INVALID, "name",
		                       "name must be 1..128 characters of [A-Za-z0-9._-], "
		                       "starting with a letter or digit");
	if (v && strcmp(json_string_value(v), name) != 0)
		return model_error_set(err, MODEL_E_INVALID, "name",
		                       "name must be the suite's name in the path (%s)", name);
	copy = http_req_own(req, json_deep_copy(req->json));
	if (!copy || json_object_set_new(copy, "name", json_string(name)))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot copy the suite");
	if (model_suite_check(copy, err))
		return -1;
	*doc = copy;
	return 0;
}

int api_suite_create(struct http_request *req, struct model_error *err)
{
	json_t *doc, *out = NULL;
	const char *name;
	enum store_rc rc;

	if (suite_document(req, NULL, &doc, err) || http_quota_check(req, doc, err))
		return -1;
	name = json_string_value(json_object_get(doc, "name"));
	rc = store_suite_create(req->store, req->who.tenant_id, req->who.token_id, name, doc, &out);
	if (rc == STORE_CONFLICT)
		return model_error_set(err, MODEL_E_CONFLICT, "name",
		                       "suite %s exists: PUT /v1/m/sandbox/suites/%s makes a new "
		                       "version",
		                       name, name);
	return api_reply_stored(req, rc, "suite create", 201, out, err);
}

int api_suite_list(struct http_request *req, struct model_error *err)
{
	return api_reply_page(req, store_suite_list, "suite list", err);
}

int api_suite_get(struct http_request *req, struct model_error *err)
{
	char name[MODEL_MAX_SUITE_NAME_BYTES + 1];
	json_t *out = NULL;
	enum store_rc rc;
	int version;

	if (model_suite_ref_parse(req->params[0], name, sizeof(name), &version))
		return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "suite not found");
	rc = store_suite_get(req->store, req->who.tenant_id, name, version, &out);
	if (rc == STORE_NOT_FOUND)
		return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "suite %s not found",
		                       req->params[0]);
	return api_reply_stored(req, rc, "suite get", 200, out, err);
}

int api_suite_update(struct http_request *req, struct model_error *err)
{
	json_t *doc, *out = NULL;
	enum store_rc rc;

	if (!model_suite_name_valid(req->params[0]))
		return model_error_set(err, MODEL_E_NOT_FOUND, NULL, "suite not found");
	if (suite_document(req, req->params[0], &doc, err) || http_quota_check(req, doc, err))
		return -1;
	rc = store_suite_update(req->store, req->who.tenant_id, req->who.token_id, req->params[0],
	                        doc, &out);
	if (rc == STORE_NOT_FOUND)
		return model_error_set(err, MODEL_E_NOT_FOUND, NULL,
		                       "suite %s not found: POST /v1/m/sandbox/suites creates it",
		                       req->params[0]);
	return api_reply_stored(req, rc, "suite update", 200, out, err);
}
