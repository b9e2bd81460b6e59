/*
 * Recording a run as a history session (record.h).
 *
 * Recording never guesses: an exchange that cannot be replayed as it was
 * answered is not recorded as something close to it, and a run with one
 * gives no session at all. A session that replays part of a run would
 * diverge for a reason nobody could see in it.
 */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "history.h"
#include "http_mock.h"
#include "limits.h"
#include "text.h"

static json_t *unrecordable(const char *why)
{
	return json_pack("{s:s}", "unrecordable", why);
}

/* Headers a recorded answer leaves out: the framing the gateway sets
 * itself, the hop-by-hop ones, and those that carry credentials (a
 * session is stored and shown; a cookie or a key is not replay data). */
static int header_left_out(const char *name)
{
	return model_http_header_is_credential(name) || model_http_header_is_hop(name);
}

/* {name: value} of the headers kept, the first spelling of a name, the
 * values of a repeated one joined with ", " (RFC 9110, 5.3). */
static json_t *recorded_headers(json_t *pairs)
{
	json_t *out = json_object(), *h, *have;
	const char *name, *value, *key;
	char *joined;
	size_t i;
	int found;

	json_array_foreach(pairs, i, h)
	{
		name = json_string_value(json_array_get(h, 0));
		value = json_string_value(json_array_get(h, 1));
		if (!name || !value || header_left_out(name))
			continue;
		found = 0;
		json_object_foreach(out, key, have)
		{
			if (strcasecmp(key, name) != 0)
				continue;
			found = 1;
			if (asprintf(&joined, "%s, %s", json_string_value(have), value) >= 0) {
				json_object_set_new(out, key, json_string(joined));
				free(joined);
			}
			break;
		}
		if (!found)
			json_object_set_new(out, name, json_string(value));
	}
	return out;
}

/* A body as a JSON string, or NULL with *why when it cannot be one. */
static json_t *body_text(const char *what, const char *s, size_t n, char *why, size_t why_len)
{
	if (n > MODEL_MAX_RESPONSE_BYTES) {
		snprintf(why, why_len, "the %s body is %zu bytes, over the %d a recording holds",
		         what, n, MODEL_MAX_RESPONSE_BYTES);
		return NULL;
	}
	if (!model_text_valid_utf8(s ? s : "", n)) {
		snprintf(why, why_len, "the %s body is not UTF-8 text", what);
		return NULL;
	}
	return json_stringn(s ? s : "", n);
}

json_t *model_record_http(const char *method, const char *url, const char *req_body, size_t req_len,
                          int status, json_t *headers, const char *body, size_t body_len)
{
	struct model_error err;
	json_t *rb, *ab, *mock, *hs, *response;
	char why[320];

	if (status < 200 || status > 599) {
		snprintf(why, sizeof(why), "the status %d cannot be recorded (200 to 599)", status);
		return unrecordable(why);
	}
	rb = body_text("request", req_body, req_len, why, sizeof(why));
	if (!rb)
		return unrecordable(why);
	ab = body_text("response", body, body_len, why, sizeof(why));
	if (!ab) {
		json_decref(rb);
		return unrecordable(why);
	}
	response = json_pack("{s:i}", "status", status);
	hs = recorded_headers(headers);
	if (json_object_size(hs) > 0)
		json_object_set_new(response, "headers", hs);
	else
		json_decref(hs);
	/* 204 and 304 have no body: a mock refuses one, and there is none */
	if (json_string_length(ab) > 0 || (status != 204 && status != 304))
		json_object_set_new(response, "body", ab);
	else
		json_decref(ab);
	mock = json_pack("{s:{s:s, s:s, s:o}, s:o}", "http", "method", method ? method : "", "url",
	                 url ? url : "", "body", rb, "response", response);
	if (!mock)
		return unrecordable("the exchange cannot be encoded");
	/* the replay's mock must be one a scenario could hold */
	if (model_http_mock_spec_check(mock, &err) != 0) {
		json_decref(mock);
		snprintf(why, sizeof(why), "%s", err.message);
		return unrecordable(why);
	}
	return mock;
}

/* ---- the session -------------------------------------------------------- */

static void add_event(json_t *events, json_t *ev)
{
	json_object_set_new(ev, "seq", json_integer((json_int_t)json_array_size(events) + 1));
	json_array_append_new(events, ev);
}

/* The events of one trace entry of step n, or -1 with *why. */
static int entry_events(json_t *mocks, json_t *e, size_t n, json_t *events,
                        struct model_reason *why)
{
	json_t *res = json_object_get(e, "resource"), *rec, *m, *text;
	const char *s;

	if (json_is_true(json_object_get(e, "truncated")))
		return model_reason_set(why, "step %zu made a request cut to fit the trace", n);
	if (json_object_get(e, "tool")) {
		s = json_string_value(json_object_get(e, "tool"));
		return model_reason_set(
		    why, "step %zu called the tool %.128s: tool calls are not recorded", n,
		    s ? s : "");
	}
	if (json_is_string(res)) {
		add_event(events, json_pack("{s:s, s:O}", "kind", "tool_call", "resource", res));
		if (!json_is_true(json_object_get(e, "hit")))
			return 0;
		m = json_array_get(mocks, (size_t)json_integer_value(json_object_get(e, "mock")));
		text = json_object_get(m, "response");
		if (!json_is_string(text))
			return model_reason_set(
			    why,
			    "step %zu: the mock that answered %.200s is not in the run's "
			    "spec",
			    n, json_string_value(res));
		add_event(events, json_pack("{s:s, s:O, s:O}", "kind", "tool_result", "resource",
		                            res, "text", text));
		return 0;
	}
	if (!json_is_object(json_object_get(e, "http")))
		return model_reason_set(why, "step %zu: a trace entry of no known kind", n);
	rec = json_object_get(e, "record");
	if (!rec)
		return 0; /* a miss or a refusal: replayed the same way */
	s = json_string_value(json_object_get(rec, "unrecordable"));
	if (s || !json_object_get(rec, "http")) {
		const char *url =
		    json_string_value(json_object_get(json_object_get(e, "http"), "url")) ?: "";
		const char *kind;

		/* the reason is shown and stored: a url that holds a
		 * credential is named as such, never repeated */
		if (model_text_find_credential(url, strlen(url), &kind))
			url = "(a url that holds a credential)";
		return model_reason_set(
		    why, "step %zu: %.200s %.400s cannot be recorded: %.300s", n,
		    json_string_value(json_object_get(json_object_get(e, "http"), "method")) ?: "",
		    url, s ? s : "no recorded answer");
	}
	add_event(events, json_pack("{s:s, s:O, s:O}", "kind", "http_exchange", "http",
	                            json_object_get(rec, "http"), "response",
	                            json_object_get(rec, "response")));
	return 0;
}

int model_record_session(json_t *mocks, json_t *outputs, size_t steps, const char *external_id,
                         json_t **session, struct model_reason *why)
{
	struct model_timeline tl;
	struct model_reason rebuilt;
	struct model_error err;
	json_t *events = json_array(), *body, *o, *e, *key;
	size_t i, j, size;
	int rc;

	*session = NULL;
	why->text[0] = '\0';
	if (json_array_size(outputs) != steps) {
		json_decref(events);
		return model_reason_set(why, "%zu of the %zu steps have an output",
		                        json_array_size(outputs), steps);
	}
	json_array_foreach(outputs, i, o)
	{
		key = json_object_get(o, "key");
		if (!json_is_string(json_object_get(o, "input")) ||
		    !json_is_string(json_object_get(o, "output"))) {
			json_decref(events);
			return model_reason_set(why, "step %zu has no input or output text", i + 1);
		}
		add_event(events, json_pack("{s:s, s:O, s:s}", "kind", "input", "text",
		                            json_object_get(o, "input"), "key",
		                            json_is_string(key) ? json_string_value(key) : ""));
		json_array_foreach(json_object_get(o, "trace"), j, e)
		{
			if (entry_events(mocks, e, i + 1, events, why) != 0) {
				json_decref(events);
				return -1;
			}
		}
		add_event(events, json_pack("{s:s, s:O}", "kind", "output", "text",
		                            json_object_get(o, "output")));
	}
	body = json_pack("{s:s, s:o}", "external_id", external_id, "events", events);
	size = body ? json_dumpb(body, NULL, 0, JSON_COMPACT) : 0;
	if (size > MODEL_MAX_REQUEST_BYTES) {
		json_decref(body);
		return model_reason_set(
		    why, "the session would be %zu bytes, over the %d an import may be", size,
		    MODEL_MAX_REQUEST_BYTES);
	}
	rc = body ? model_session_check(body, session, &err) : -1;
	json_decref(body);
	if (rc != 0) {
		*session = NULL;
		return model_reason_set(why, "the session would be refused: %s",
		                        body ? err.message : "encoding");
	}
	/* a session its replay would find degraded is not a recording of
	 * the run (a request with more answers than a sequence holds, …) */
	if (model_timeline_rebuild(json_object_get(*session, "events"), &tl, &rebuilt) != 0) {
		json_decref(*session);
		*session = NULL;
		return model_reason_set(why, "its replay could not rebuild it: %s", rebuilt.text);
	}
	model_timeline_clear(&tl);
	return 0;
}

void model_record_strip(json_t *output)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(output, "trace"), i, e) json_object_del(e, "record");
}
