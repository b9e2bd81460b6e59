/*
 * POST /v1/m/sandbox/synthetic-data (editor): step inputs expanded from a
 * template by the model (model/generate.h), nothing stored but an audit
 * event.
 */
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "model/generate.h"

int api_generate(struct http_request *req, struct model_error *err)
{
	struct model_gen_request gr;
	json_t *samples = NULL, *detail;
	enum store_rc rc;
	int ret = -1;

	memset(&gr, 0, sizeof(gr));
	if (model_gen_request_parse(req->json, &gr, err))
		return -1;
	if (model_generate(&gr, &samples, err))
		goto out;
	http_req_own(req, samples);
	/* the audit event holds the count only, never the inputs (what the
	 * product requires of generation) */
	detail = http_req_own(req, json_pack("{s:I}", "count", (json_int_t)gr.count));
	rc = store_audit_append(req->store, req->who.tenant_id, req->who.token_id,
	                        "sandbox.generate", NULL, detail);
	if (rc) {
		http_store_fail(req, rc, "generate audit", err);
		goto out;
	}
	http_reply_json(req, 200,
	                http_req_own(req, json_pack("{s:I,s:O}", "count", (json_int_t)gr.count,
	                                            "samples", samples)));
	ret = 0;
out:
	model_gen_request_free(&gr);
	return ret;
}
