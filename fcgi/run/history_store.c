/*
 * The store adapter of the history port (history_store.h).
 */
#include "fcgi/run/history_store.h"

#include <string.h>

#include "model/text.h"
#include "sql/store.h"

static int store_load(void *ctx, const char *tenant_id, const char *session_id, json_t **events,
                      char *external_id, size_t n, struct model_reason *why)
{
	struct http_worker *w = ctx;
	json_t *session = NULL, *ev;
	const char *ext;
	enum store_rc rc;
	size_t len;

	*events = NULL;
	if (n)
		external_id[0] = '\0';
	why->text[0] = '\0';
	/* an id that is not well-formed names no session: not found, never a
	 * 5xx nor another record, as for ids in paths */
	if (!tenant_id || !session_id || !model_id_valid(session_id))
		return 1;
	if (!w || !w->store)
		return model_reason_set(why, "history source: the store is not connected");
	rc = store_session_get(w->store, tenant_id, session_id, &session);
	if (rc == STORE_NOT_FOUND)
		return 1;
	if (rc) {
		if (rc == STORE_UNAVAILABLE)
			w->store_broken = 1;
		return model_reason_set(why, "history source: %s", store_last_error(w->store));
	}
	ev = json_object_get(session, "events");
	ext = json_string_value(json_object_get(session, "external_id"));
	if (!json_is_array(ev) || !ext) {
		json_decref(session);
		return model_reason_set(why, "history source: stored session is incomplete");
	}
	if (n) {
		/* external ids are at most 128 bytes: callers pass room for them */
		len = strlen(ext);
		if (len >= n)
			len = n - 1;
		memcpy(external_id, ext, len);
		external_id[len] = '\0';
	}
	*events = json_incref(ev);
	json_decref(session);
	return 0;
}

const struct model_history_ops http_history_store_ops = {"store", store_load};

void http_history_store(struct http_worker *w, struct model_history_source *src)
{
	src->ops = &http_history_store_ops;
	src->ctx = w;
}
