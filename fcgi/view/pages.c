/*
 * The pieces the GET pages of the admin view share (pages.h): reading the
 * API's JSON, the texts of a run (score, counters, attestation, delta),
 * the markup pieces (links, times, cells, tables, forms) and the API calls
 * that reply the error page themselves.
 */
#include "fcgi/view/pages.h"

#include <stdio.h>
#include <string.h>

#include "model/text.h"

/* ---- JSON reading ------------------------------------------------------------ */

const char *view_jstr(json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

const char *view_jbool(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key)) ? "true" : "false";
}

long long view_jint(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

int view_one_of(const char *word, const char *const *words)
{
	size_t i = 0;

	while (words[i] && strcmp(word, words[i]) != 0)
		i++;
	return words[i] != NULL;
}

int view_run_live(json_t *run)
{
	static const char *const live[] = {"queued", "running", NULL};

	return view_one_of(view_jstr(run, "status", ""), live);
}

/* A run that did not execute: over without completing (failed, degraded
 * or cancelled) and no step was run (a degraded replay whose timeline
 * cannot be rebuilt, a failed fail-closed backend, a run cancelled while
 * queued: its steps_total is its spec's, its steps_done 0). A comparison
 * side has no steps_total: never "not executed"; nor is a run still
 * queued or running. */
static int not_executed(json_t *o)
{
	static const char *const over[] = {"failed", "degraded", "cancelled", NULL};
	json_t *total = json_object_get(o, "steps_total");
	json_t *done = json_object_get(o, "steps_done");

	return json_is_integer(total) &&
	       (json_integer_value(total) == 0 ||
	        (json_is_integer(done) && json_integer_value(done) == 0)) &&
	       view_one_of(view_jstr(o, "status", ""), over);
}

void view_number_text(double x, int sign, char *out, size_t n)
{
	size_t len, dot;

	snprintf(out, n, sign ? "%+.9f" : "%.9f", x);
	len = strlen(out);
	dot = strcspn(out, ".");
	while (len > dot + 5 && out[len - 1] == '0')
		out[--len] = '\0';
}

void view_score_text(json_t *o, int with_reason, char *out, size_t n)
{
	json_t *score = json_object_get(o, "score");
	json_t *passed = json_object_get(o, "passed");
	const char *reason = view_jstr(o, "reason", NULL);
	const char *what = not_executed(o) ? "not executed" : "executed, not scored";

	/* nothing is scored before the end: not "executed, not scored" yet */
	if (view_run_live(o)) {
		snprintf(out, n, "not scored yet (%s)", view_jstr(o, "status", ""));
		return;
	}
	if (json_is_true(json_object_get(o, "scored")) && json_is_number(score)) {
		view_number_text(json_number_value(score), 0, out, n);
		snprintf(out + strlen(out), n - strlen(out), "%s",
		         json_is_boolean(passed) ? (json_is_true(passed) ? " passed" : " failed")
		                                 : "");
		return;
	}
	/* a run that executed and named no suite: its reason, if any, is
	 * the run's failure (shown beside), not the score's */
	if (with_reason && !not_executed(o) && json_is_null(json_object_get(o, "suite")))
		snprintf(out, n, "%s (no suite named)", what);
	else if (with_reason && reason && reason[0])
		snprintf(out, n, "%s (%s)", what, reason);
	else
		snprintf(out, n, "%s", what);
}

void view_counters_text(json_t *run, char *out, size_t n)
{
	snprintf(out, n, "%lld/%lld ok, %lld error", view_jint(run, "steps_ok"),
	         view_jint(run, "steps_total"), view_jint(run, "steps_error"));
}

void view_progress_text(json_t *run, char *out, size_t n)
{
	snprintf(out, n, "%lld of %lld steps done", view_jint(run, "steps_done"),
	         view_jint(run, "steps_total"));
}

void view_attestation_text(json_t *run, char *out, size_t n)
{
	snprintf(out, n, "isolated: %s \xc2\xb7 destroyed: %s", view_jbool(run, "isolated"),
	         view_jbool(run, "destroyed"));
}

void view_delta_text(json_t *cmp, char *out, size_t n)
{
	json_t *d = json_object_get(cmp, "delta");

	if (json_is_number(d))
		view_number_text(json_number_value(d), 1, out, n);
	else
		snprintf(out, n, "%s", VIEW_NONE_TEXT);
}

/* ---- markup pieces ------------------------------------------------------------- */

void view_verdict_el(xmlNodePtr parent, json_t *cmp)
{
	static const char *const known[] = {"improved", "regressed", "unchanged", "inconclusive",
	                                    "pending"};
	const char *v = view_jstr(cmp, "verdict", NULL);
	char cls[32];
	size_t i;

	if (!v && strcmp(view_jstr(cmp, "status", ""), "pending") == 0)
		v = "pending";
	for (i = 0; v && i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(v, known[i]) == 0) {
			/* the class is built from the list, never from the value */
			snprintf(cls, sizeof(cls), "verdict-%s", known[i]);
			html_elc(parent, "span", cls, known[i]);
			return;
		}
	}
	html_text(parent, v ? v : "");
}

void view_id_link(xmlNodePtr parent, const char *base, const char *id)
{
	char href[96], text[VIEW_SHORT_ID_LEN + 1];

	if (!id || !model_id_valid(id)) {
		html_text(parent, VIEW_NONE_TEXT);
		return;
	}
	snprintf(href, sizeof(href), "%s/%s", base, id);
	snprintf(text, sizeof(text), "%s", id);
	html_attr(html_link(parent, href, text), "title", id);
}

/* id -> field of each item of GET path?limit=VIEW_NAMES_LIMIT's array member;
 * {} when the call fails (the page then shows ids). */
static json_t *name_map(struct view_ctx *ctx, const char *path, const char *member,
                        const char *field)
{
	json_t *map = http_req_own(ctx->req, json_object()), *reply = NULL, *item;
	const char *id, *name;
	size_t i;

	if (view_api(ctx, "GET", path, "limit=" VIEW_NAMES_LIMIT, NULL, &reply) >= 400)
		return map;
	json_array_foreach(json_object_get(reply, member), i, item)
	{
		id = view_jstr(item, "id", NULL);
		name = view_jstr(item, field, NULL);
		if (id && name)
			json_object_set_new(map, id, json_string(name));
	}
	return map;
}

void view_names_load(struct view_ctx *ctx, struct view_names *nm, int sessions)
{
	nm->scenarios = name_map(ctx, "/v1/m/sandbox/scenarios", "scenarios", "name");
	nm->sessions =
	    sessions ? name_map(ctx, "/v1/m/sandbox/sessions", "sessions", "external_id") : NULL;
}

const char *view_name_of(json_t *map, const char *id)
{
	return id ? json_string_value(json_object_get(map, id)) : NULL;
}

void view_scenario_link(xmlNodePtr parent, const struct view_names *nm, const char *id)
{
	const char *name = view_name_of(nm->scenarios, id);
	char href[96];

	if (!name || !model_id_valid(id)) {
		view_id_link(parent, "/admin/scenarios", id);
		return;
	}
	snprintf(href, sizeof(href), "/admin/scenarios/%s", id);
	html_attr(html_link(parent, href, name), "title", id);
}

void view_time_el(xmlNodePtr parent, const char *iso)
{
	char text[20];
	xmlNodePtr t;
	int api_shape;

	if (!iso || !iso[0]) {
		html_text(parent, VIEW_NONE_TEXT);
		return;
	}
	api_shape = strlen(iso) >= 19 && iso[10] == 'T';
	if (api_shape)
		snprintf(text, sizeof(text), "%.10s %.8s", iso, iso + 11);
	t = html_elc(parent, "time", "time", api_shape ? text : iso);
	html_attr(t, "datetime", iso);
	html_attr(t, "title", iso);
}

void view_cell_time(xmlNodePtr tr, const char *cls, const char *iso)
{
	view_time_el(html_elc(tr, "td", cls, NULL), iso);
}

xmlNodePtr view_cell_pre(xmlNodePtr tr, const char *cls, const char *text)
{
	xmlNodePtr td = html_elc(tr, "td", cls, NULL);

	html_el(td, "pre", text);
	return td;
}

void view_cell_link(xmlNodePtr tr, const char *cls, const char *base, const char *id)
{
	view_id_link(html_elc(tr, "td", cls, NULL), base, id);
}

xmlNodePtr view_table_new(xmlNodePtr parent, const char *id, const char *const *headers,
                          xmlNodePtr *head)
{
	xmlNodePtr wrap = html_elc(parent, "div", "table-wrap", NULL);
	xmlNodePtr table = html_attr(html_el(wrap, "table", NULL), "id", id);
	xmlNodePtr tr = html_el(html_el(table, "thead", NULL), "tr", NULL);
	size_t i;

	for (i = 0; headers && headers[i]; i++)
		html_el(tr, "th", headers[i]);
	if (head)
		*head = tr;
	return html_el(table, "tbody", NULL);
}

xmlNodePtr view_row_new(xmlNodePtr tbody, const char *cls, json_t *item)
{
	xmlNodePtr tr = html_elc(tbody, "tr", cls, NULL);

	return html_attr(tr, "data-id", view_jstr(item, "id", NULL));
}

xmlNodePtr view_dl_item(xmlNodePtr dl, const char *term, const char *id, const char *text)
{
	html_el(dl, "dt", term);
	return html_attr(html_el(dl, "dd", text), "id", id);
}

void view_labelled_input(xmlNodePtr form, const char *text, const char *type, const char *name,
                         const char *value)
{
	html_input(html_el(form, "label", text), type, name, value);
}

xmlNodePtr view_select_new(xmlNodePtr form, const char *text, const char *name,
                           const char *first_text)
{
	xmlNodePtr select = html_el(html_el(form, "label", text), "select", NULL);

	html_attr(select, "name", name);
	html_attr(html_el(select, "option", first_text), "value", "");
	return select;
}

xmlNodePtr view_option_add(xmlNodePtr select, const char *value, const char *text,
                           const char *selected)
{
	xmlNodePtr opt = html_attr(html_el(select, "option", text), "value", value);

	if (selected && strcmp(selected, value) == 0)
		html_attr(opt, "selected", "selected");
	return opt;
}

void view_labelled_select(xmlNodePtr form, const char *text, const char *name,
                          const char *first_text, const char *const *values, const char *selected)
{
	xmlNodePtr select = view_select_new(form, text, name, first_text);
	size_t i;

	for (i = 0; values[i]; i++)
		view_option_add(select, values[i], values[i], selected);
}

void view_submit_button(xmlNodePtr form, const char *text)
{
	html_attr(html_el(form, "button", text), "type", "submit");
}

/* ---- API calls ------------------------------------------------------------------ */

int view_api_get(struct view_ctx *ctx, const char *path, const char *query, json_t **reply)
{
	int status = view_api(ctx, "GET", path, query, NULL, reply);

	if (status >= 400) {
		view_page_api_error(ctx, status, *reply);
		return -1;
	}
	return 0;
}

int view_api_get_item(struct view_ctx *ctx, const char *collection, const char *id,
                      const char *suffix, json_t **reply)
{
	char path[128];

	if (!id || !model_id_valid(id)) {
		view_page_message(ctx, 404, "Not found", "not found");
		return -1;
	}
	snprintf(path, sizeof(path), "/v1/m/sandbox/%s/%s%s", collection, id, suffix);
	return view_api_get(ctx, path, "", reply);
}
