/*
 * The checks and replies the REST handlers share (api_internal.h).
 */
#include "fcgi/api/api_internal.h"

#include <string.h>

int api_only_fields(json_t *obj, const char *const *allowed, struct model_error *err)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i])
			return model_error_set(err, MODEL_E_MALFORMED, key,
			                       "unknown field \"%.64s\"", key);
	}
	(void)v;
	return 0;
}

int api_one_of(const char *word, const char *const *words)
{
	size_t i;

	for (i = 0; words[i]; i++)
		if (strcmp(word, words[i]) == 0)
			return 1;
	return 0;
}

int api_list_window(struct http_request *req, int *limit, int *offset, struct model_error *err)
{
	if (http_query_int(req, "limit", API_LIST_LIMIT_DEFAULT, 1, API_LIST_LIMIT_MAX, limit, err))
		return -1;
	return http_query_int(req, "offset", 0, 0, API_OFFSET_MAX, offset, err);
}

int api_reply_stored(struct http_request *req, enum store_rc rc, const char *what, int status,
                     json_t *out, struct model_error *err)
{
	if (rc)
		return http_store_fail(req, rc, what, err);
	return http_reply_json(req, status, http_req_own(req, out));
}

int api_reply_item(struct http_request *req, api_store_get_fn get, const char *what,
                   struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;

	rc = get(req->store, req->who.tenant_id, req->params[0], &out);
	return api_reply_stored(req, rc, what, 200, out, err);
}

int api_reply_page(struct http_request *req, api_store_list_fn list, const char *what,
                   struct model_error *err)
{
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (api_list_window(req, &limit, &offset, err))
		return -1;
	rc = list(req->store, req->who.tenant_id, limit, offset, &out);
	return api_reply_stored(req, rc, what, 200, out, err);
}
