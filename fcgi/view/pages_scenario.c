/*
 * GET /admin/scenarios/{id} (view_internal.h): a scenario's summary,
 * steps and mocks, the run form (editor) and the compare form (admin),
 * with the page of a form the API refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fcgi/view/pages.h"
#include "sql/store.h"

/* ---- scenario detail --------------------------------------------------------------- */

static void scenario_summary(xmlNodePtr main, json_t *sc)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "scenario-summary");
	char text[32], href[128];
	const char *desc;
	xmlNodePtr dd;

	view_dl_item(dl, "Name", "scenario-name", view_jstr(sc, "name", ""));
	snprintf(text, sizeof(text), "%lld", view_jint(sc, "version"));
	view_dl_item(dl, "Version", "scenario-version", text);
	desc = view_jstr(sc, "description", "");
	view_dl_item(dl, "Description", "scenario-description", desc[0] ? desc : VIEW_NONE_TEXT);
	view_dl_item(dl, "Subject kind", "scenario-subject-kind",
	             view_jstr(sc, "subject_kind", VIEW_NONE_TEXT));
	html_elc(view_dl_item(dl, "Digest", "scenario-digest", NULL), "code", NULL,
	         view_jstr(sc, "digest", ""));
	view_time_el(view_dl_item(dl, "Updated", "scenario-updated", NULL),
	             view_jstr(sc, "updated_at", NULL));
	dd = view_dl_item(dl, "History", "scenario-history", NULL);
	snprintf(href, sizeof(href), "/admin/runs?scenario=%s", view_jstr(sc, "id", ""));
	html_link(dd, href, "runs");
	html_text(dd, " \xc2\xb7 ");
	snprintf(href, sizeof(href), "/admin/comparisons?scenario=%s", view_jstr(sc, "id", ""));
	html_link(dd, href, "comparisons");
}

static void steps_table(xmlNodePtr main, json_t *steps)
{
	static const char *const headers[] = {"Key", "Input", NULL};
	xmlNodePtr tbody, tr;
	json_t *step;
	size_t i;

	html_el(main, "h2", "Steps");
	tbody = view_table_new(main, "steps", headers, NULL);
	json_array_foreach(steps, i, step)
	{
		tr = html_elc(tbody, "tr", "step", NULL);
		html_elc(tr, "td", "key", view_jstr(step, "key", ""));
		view_cell_pre(tr, "input", view_jstr(step, "input", ""));
	}
}

/* A tool mock's row: "tool NAME ARGS (MATCH)" where a resource mock has
 * its resource; its response as JSON, its sequence, or its error. */
static void tool_mock_row(xmlNodePtr tbody, json_t *mock)
{
	xmlNodePtr tr = html_elc(tbody, "tr", "mock tool-mock", NULL);
	json_t *seq = json_object_get(mock, "sequence");
	char *args, *answer;

	args = json_dumps(json_object_get(mock, "args"), JSON_COMPACT | JSON_SORT_KEYS);
	html_attr(html_elf(tr, "td", "tool %s %s (%s)", view_jstr(mock, "tool", ""),
	                   args ? args : "{}", view_jstr(mock, "match", "exact")),
	          "class", "resource");
	free(args);
	html_elc(tr, "td", "variant", view_jstr(mock, "variant", VIEW_NONE_TEXT));
	if (json_is_string(json_object_get(mock, "error"))) {
		html_attr(html_elf(tr, "td", "error: %s", view_jstr(mock, "error", "")), "class",
		          "response");
		return;
	}
	answer = json_dumps(seq ? seq : json_object_get(mock, "response"),
	                    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	view_cell_pre(tr, "response", answer ? answer : "null");
	free(answer);
}

/* An http or llm mock's row (docs/http-mocks.md): what it answers ("http
 * GET URL" or "chat" and its condition as JSON) where a resource mock has
 * its resource; its response or sequence as JSON. */
static void gateway_mock_row(xmlNodePtr tbody, json_t *mock)
{
	xmlNodePtr tr = html_elc(tbody, "tr", "mock gateway-mock", NULL);
	json_t *http = json_object_get(mock, "http");
	json_t *seq = json_object_get(mock, "sequence");
	char *cond, *answer;

	if (http) {
		html_attr(html_elf(tr, "td", "http %s %s", view_jstr(http, "method", ""),
		                   view_jstr(http, "url", "")),
		          "class", "resource");
	} else {
		cond = json_dumps(json_object_get(mock, "llm"), JSON_COMPACT | JSON_SORT_KEYS);
		html_attr(html_elf(tr, "td", "chat %s", cond ? cond : "{}"), "class", "resource");
		free(cond);
	}
	html_elc(tr, "td", "variant", view_jstr(mock, "variant", VIEW_NONE_TEXT));
	answer = json_dumps(seq ? seq : json_object_get(mock, "response"),
	                    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	view_cell_pre(tr, "response", answer ? answer : "null");
	free(answer);
}

static void mocks_table(xmlNodePtr main, json_t *mocks)
{
	static const char *const headers[] = {"Resource", "Variant", "Response", NULL};
	xmlNodePtr tbody, tr;
	json_t *mock;
	size_t i;

	html_el(main, "h2", "Mocks");
	tbody = view_table_new(main, "mocks", headers, NULL);
	json_array_foreach(mocks, i, mock)
	{
		if (json_is_string(json_object_get(mock, "tool"))) {
			tool_mock_row(tbody, mock);
			continue;
		}
		if (json_object_get(mock, "http") || json_object_get(mock, "llm")) {
			gateway_mock_row(tbody, mock);
			continue;
		}
		tr = html_elc(tbody, "tr", "mock", NULL);
		html_elc(tr, "td", "resource", view_jstr(mock, "resource", ""));
		html_elc(tr, "td", "variant", view_jstr(mock, "variant", VIEW_NONE_TEXT));
		view_cell_pre(tr, "response", view_jstr(mock, "response", ""));
	}
	if (json_array_size(mocks) == 0)
		html_elc(main, "p", "none", "No mocks.");
}

/* The variants named in the scenario's mocks, once each, in order: a
 * JSON array owned by the request. */
static json_t *mock_variants(struct view_ctx *ctx, json_t *sc)
{
	json_t *seen = http_req_own(ctx->req, json_object());
	json_t *list = http_req_own(ctx->req, json_array()), *mock;
	const char *v;
	size_t i;

	json_array_foreach(json_object_get(sc, "mocks"), i, mock)
	{
		v = view_jstr(mock, "variant", NULL);
		if (v && v[0] && !json_object_get(seen, v)) {
			json_object_set_new(seen, v, json_true());
			json_array_append_new(list, json_string(v));
		}
	}
	return list;
}

/* <datalist id="variants"> of the mock variants and a hint listing them
 * (nothing when there is none): the variant inputs' suggestions. */
static void variants_hint(xmlNodePtr main, json_t *variants)
{
	xmlNodePtr p, list;
	json_t *v;
	size_t i;

	if (json_array_size(variants) == 0)
		return;
	p = html_elc(main, "p", "hint", "Variants named in this scenario's mocks: ");
	html_attr(p, "id", "variant-hint");
	list = html_attr(html_el(main, "datalist", NULL), "id", "variants");
	json_array_foreach(variants, i, v)
	{
		if (i > 0)
			html_text(p, ", ");
		html_elc(p, "code", NULL, json_string_value(v));
		html_attr(html_el(list, "option", NULL), "value", json_string_value(v));
	}
}

/* view_labelled_input for a variant, suggesting the mock variants (the
 * datalist of variants_hint) when there are some; value may be NULL. */
static xmlNodePtr variant_input(xmlNodePtr form, const char *text, const char *name,
                                json_t *variants, const char *value)
{
	xmlNodePtr in = html_input(html_el(form, "label", text), "text", name, value);

	if (json_array_size(variants) > 0)
		html_attr(in, "list", "variants");
	return in;
}

/* The mark of backend b's option from the pool's last preflight answer
 * (GET /v1/m/sandbox/backends?preflight=cached): NULL when it passed,
 * "preflight failed", or "not checked" when the pool has no answer yet
 * (a page view starts no preflight: a gVisor one boots a sandbox). *title
 * (n bytes, "" when it passed) says why or how to check. */
static const char *preflight_mark(json_t *b, char *title, size_t n)
{
	json_t *pf = json_object_get(b, "preflight");

	title[0] = '\0';
	if (!json_is_object(pf)) {
		snprintf(title, n,
		         "no preflight known on this server yet (olivares sandbox backends, or "
		         "GET /v1/m/sandbox/backends, checks it)");
		return "not checked";
	}
	if (json_is_true(json_object_get(pf, "ok")))
		return NULL;
	/* n holds the runner's reason (under 512 bytes) whole: never cut
	 * inside a UTF-8 character */
	snprintf(title, n, "preflight failed %lld s ago: %s", view_jint(pf, "age_s"),
	         view_jstr(pf, "reason", "no reason given"));
	return "preflight failed";
}

/*
 * <select name="backend">: "" (the tenant's default), then the backends
 * the tenant's policy allows, its default first and marked "(default)",
 * each marked with the pool's last preflight answer when it failed
 * ("preflight failed", the reason as the option's title and in a note
 * under the select: a run there fails closed) or when there is none yet
 * ("not checked") (GET /v1/m/sandbox/backends?preflight=cached: no runner
 * is started). selected (may be NULL) is the option to select; note_id is
 * the id of the note (one per form: a page holds both forms).
 */
static void backend_select(struct view_ctx *ctx, xmlNodePtr form, const char *selected,
                           const char *note_id)
{
	xmlNodePtr select = view_select_new(form, "Backend ", "backend", "(tenant default)");
	xmlNodePtr note = NULL, opt;
	json_t *reply = NULL, *list, *b;
	const char *mark, *name;
	char text[96], title[640];
	size_t i;
	int pass;

	if (view_api(ctx, "GET", "/v1/m/sandbox/backends", "preflight=cached", NULL, &reply) >= 400)
		return;
	list = json_object_get(reply, "backends");
	for (pass = 1; pass >= 0; pass--) { /* the default, then the others */
		json_array_foreach(list, i, b)
		{
			if (!json_is_true(json_object_get(b, "allowed")) ||
			    json_is_true(json_object_get(b, "default")) != pass)
				continue;
			name = view_jstr(b, "name", "");
			mark = preflight_mark(b, title, sizeof(title));
			snprintf(text, sizeof(text), "%s%s%s%s%s", name, pass || mark ? " (" : "",
			         pass ? "default" : "", pass && mark ? ", " : "", mark ? mark : "");
			if (pass || mark)
				snprintf(text + strlen(text), sizeof(text) - strlen(text), ")");
			opt = view_option_add(select, name, text, selected);
			if (title[0])
				html_attr(opt, "title", title);
			if (!mark || strcmp(mark, "preflight failed") != 0)
				continue;
			if (!note) {
				note = html_elc(form, "p", "note",
				                "Last preflight on this server failed (a run there "
				                "fails closed): ");
				html_attr(note, "id", note_id);
			} else {
				html_text(note, "; ");
			}
			html_text(note, name);
			html_text(note, ": ");
			html_text(note, view_jstr(json_object_get(b, "preflight"), "reason", ""));
		}
	}
}

/* refused when it is about the form form_id, else NULL (refused may be
 * NULL: a GET). */
static const struct view_refusal *refused_here(const struct view_refusal *refused,
                                               const char *form_id)
{
	return refused && strcmp(refused->form, form_id) == 0 ? refused : NULL;
}

/* What was posted in field name when the form was refused (here may be
 * NULL: the field starts empty). */
static const char *refilled(struct view_ctx *ctx, const struct view_refusal *here, const char *name)
{
	return here ? view_form(ctx, name) : NULL;
}

/* The editor's form: run this scenario with a variant and a backend. */
static void run_form(struct view_ctx *ctx, xmlNodePtr main, const char *id, json_t *variants,
                     const struct view_refusal *refused)
{
	const struct view_refusal *here = refused_here(refused, "run-form");
	char action[96];
	xmlNodePtr form, first;

	html_el(main, "h2", "Run");
	snprintf(action, sizeof(action), "/admin/scenarios/%s/runs", id);
	variants_hint(main, variants);
	form = view_post_form(ctx, main, "run-form", action);
	if (here)
		view_error_line(form, here->message);
	first =
	    variant_input(form, "Variant ", "variant", variants, refilled(ctx, here, "variant"));
	if (here)
		html_attr(first, "autofocus", "autofocus");
	backend_select(ctx, form, refilled(ctx, here, "backend"), "backend-preflight");
	view_submit_button(form, "Run");
}

/* The admin's form: compare two variants of this scenario. Without a
 * scorer on the server every comparison is inconclusive: say so. */
static void compare_form(struct view_ctx *ctx, xmlNodePtr main, const char *id, json_t *variants,
                         const struct view_refusal *refused)
{
	const struct view_refusal *here = refused_here(refused, "compare-form");
	xmlNodePtr form, first;

	html_el(main, "h2", "Compare");
	form = view_post_form(ctx, main, "compare-form", "/admin/comparisons");
	if (here)
		view_error_line(form, here->message);
	if (strcmp(ctx->req->cfg->scorer, "none") == 0)
		html_attr(
		    html_elc(form, "p", "note",
		             "No scorer is configured on this server ([scorer] adapter = none): "
		             "comparisons will be inconclusive."),
		    "id", "no-scorer");
	html_input(form, "hidden", "scenario_id", id);
	first =
	    variant_input(form, "Baseline ", "baseline", variants, refilled(ctx, here, "baseline"));
	html_attr(first, "required", "required");
	if (here)
		html_attr(first, "autofocus", "autofocus");
	html_attr(variant_input(form, "Candidate ", "candidate", variants,
	                        refilled(ctx, here, "candidate")),
	          "required", "required");
	html_attr(html_input(html_el(form, "label", "Suite "), "text", "suite",
	                     refilled(ctx, here, "suite")),
	          "required", "required");
	view_labelled_input(form, "Tolerance ", "text", "tolerance",
	                    refilled(ctx, here, "tolerance"));
	backend_select(ctx, form, refilled(ctx, here, "backend"), "compare-backend-preflight");
	view_submit_button(form, "Compare");
}

/* view_page_begin with the title "prefix name" (name may be NULL: prefix
 * alone). */
static xmlNodePtr page_begin_named(struct view_ctx *ctx, const char *prefix, const char *name,
                                   htmlDocPtr *doc)
{
	char title[VIEW_TITLE_BYTES];

	snprintf(title, sizeof(title), "%s%s%s", prefix, name ? " " : "", name ? name : "");
	return view_page_begin(ctx, title, doc);
}

int view_page_scenario(struct view_ctx *ctx, const char *id, const struct view_refusal *refused)
{
	json_t *sc = NULL, *variants;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;

	if (view_api_get_item(ctx, "scenarios", id, "", &sc))
		return 0;
	variants = mock_variants(ctx, sc);
	main = page_begin_named(ctx, "Scenario:", view_jstr(sc, "name", NULL), &doc);
	scenario_summary(main, sc);
	steps_table(main, json_object_get(sc, "steps"));
	mocks_table(main, json_object_get(sc, "mocks"));
	if (ctx->req->who.role >= STORE_ROLE_EDITOR)
		run_form(ctx, main, id, variants, refused);
	if (ctx->req->who.role >= STORE_ROLE_ADMIN)
		compare_form(ctx, main, id, variants, refused);
	return view_page_send(ctx, doc, refused ? refused->status : 200);
}
