/*
 * Signed evidence (docs/evidence.md): the server's public key, and the
 * signed bundle of a settled comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/evidence/key.h"
#include "model/evidence.h"

static int no_key(struct http_request *req)
{
	return http_reply_error_code(req, 503, "evidence_unavailable",
	                             "this server has no evidence key: its log says why", NULL);
}

int api_evidence_key(struct http_request *req, struct model_error *err)
{
	const struct http_evidence_key *k = req->worker->evidence;

	(void)err;
	if (!k)
		return no_key(req);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s,s:s,s:s}", "algorithm", "Ed25519", "key_id",
	                                k->key_id, "public_key", k->public_pem)));
}

int api_comparison_evidence(struct http_request *req, struct model_error *err)
{
	const struct http_evidence_key *k = req->worker->evidence;
	json_t *bundle = NULL;
	enum store_rc rc;
	char *text, *body;
	size_t len;
	int out;

	if (!k)
		return no_key(req);
	rc = store_evidence_bundle(req->store, req->who.tenant_id, req->params[0], &bundle);
	if (rc == STORE_CONFLICT)
		return model_error_set(err, MODEL_E_CONFLICT, NULL, "%s",
		                       store_last_error(req->store));
	if (rc)
		return http_store_fail(req, rc, "comparison evidence", err);
	http_req_own(req, bundle);
	if (model_evidence_sign(bundle, k->private_pem))
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "the bundle could not be signed");
	/* the canonical form is the bundle's file: what verify reads back */
	text = model_evidence_canonical(bundle);
	len = strlen(text);
	body = malloc(len + 2);
	if (!body)
		abort();
	memcpy(body, text, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	free(text);
	out = http_reply_body(req, 200, "application/json", body, len + 1);
	free(body);
	return out;
}
