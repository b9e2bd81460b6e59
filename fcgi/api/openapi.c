/*
 * GET /v1/openapi.json (public): the OpenAPI 3.1 document of this API,
 * docs/openapi.json as it was when the binary was built (embedded by
 * fcgi/api/embed-openapi.sh), so the document served is always the one of
 * the routes this binary has. tests/openapi/check.sh keeps it in step with
 * the route table.
 */
#include "fcgi/api/api_internal.h"

int api_openapi(struct http_request *req, struct model_error *err)
{
	(void)err;
	return http_reply_body(req, 200, "application/json", (const char *)api_openapi_doc,
	                       api_openapi_doc_len);
}
