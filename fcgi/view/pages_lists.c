/*
 * The list pages of the admin view (view_internal.h): scenarios, runs,
 * replays, comparisons and the audit trail, each one table of the API's
 * list with its filters and pager; and the overview (GET /admin/), whose
 * recent runs are rows of the runs list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fcgi/view/pages.h"
#include "model/text.h"
#include "sql/store.h"

/* The largest offset the API accepts (API_OFFSET_MAX, fcgi/api/api_internal.h). */
#define PAGE_OFFSET_MAX 1000000000
/* How many runs the overview shows. */
#define RECENT_RUNS "5"

static const char *const run_statuses[] = {"queued",   "running",   "completed", "failed",
                                           "degraded", "cancelled", NULL};
static const char *const verdicts[] = {"improved", "regressed", "unchanged", "inconclusive", NULL};

/* The role's name as the API's messages spell it (enum store_role). */
static const char *role_name(enum store_role role)
{
	static const char *const names[] = {"unknown", "viewer", "editor", "admin"};

	return role >= STORE_ROLE_VIEWER && role <= STORE_ROLE_ADMIN ? names[role] : names[0];
}

/* ---- lists: filters, pagination, the table ------------------------------------- */

typedef void (*list_row_fn)(xmlNodePtr tbody, json_t *item, const struct view_names *nm);

/* One list page: where it is, what it asks the API, how a row looks. */
struct list_spec {
	const char *title;
	const char *base;      /* the page, e.g. "/admin/runs" */
	const char *api_path;  /* e.g. "/v1/m/sandbox/runs" */
	const char *api_fixed; /* a fixed filter ("kind=replay") or NULL */
	const char *member;    /* the reply's array, e.g. "runs" */
	const char *table_id;  /* also the row class's plural */
	const char *empty;     /* the text of #empty */
	const char *choice;    /* "status" | "verdict": the filter form's
	                        * select (with a scenario input); NULL: no filter */
	const char *const *choices;
	const char *const *headers;
	list_row_fn row;
	int sessions; /* the rows name sessions (external ids) */
};

/* The validated filters of one request. */
struct list_filter {
	const char *scenario; /* an id or NULL */
	const char *choice;   /* one of spec->choices or NULL */
	int offset;
};

/* A decimal offset in [0, PAGE_OFFSET_MAX]; 0 when absent. */
static int parse_offset(const char *s, int *out)
{
	long v = 0;
	size_t i;

	*out = 0;
	if (!s)
		return 0;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 10)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > PAGE_OFFSET_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

/* Read and check the filters; a bad one: *why says which, -1. */
static int list_filter_read(struct view_ctx *ctx, const struct list_spec *spec,
                            struct list_filter *f, const char **why)
{
	memset(f, 0, sizeof(*f));
	if (parse_offset(view_query(ctx, "offset"), &f->offset)) {
		*why = "offset must be a whole number from 0 to 1000000000";
		return -1;
	}
	if (!spec->choice)
		return 0;
	f->scenario = view_query(ctx, "scenario");
	if (f->scenario && !model_id_valid(f->scenario)) {
		*why = "scenario must be a scenario id (32 lowercase hex characters)";
		return -1;
	}
	f->choice = view_query(ctx, spec->choice);
	if (f->choice && !view_one_of(f->choice, spec->choices)) {
		*why = strcmp(spec->choice, "verdict") == 0
		           ? "verdict must be improved, regressed, unchanged or inconclusive"
		           : "status must be queued, running, completed, failed, degraded or "
		             "cancelled";
		return -1;
	}
	return 0;
}

/* "scenario=…&<choice>=…&" for the filters that are set (validated
 * values only), into out. */
static void filter_query(const struct list_spec *spec, const struct list_filter *f, char *out,
                         size_t n)
{
	int len = 0;

	out[0] = '\0';
	if (f->scenario)
		len = snprintf(out, n, "scenario=%s&", f->scenario);
	if (f->choice && len >= 0 && (size_t)len < n)
		snprintf(out + len, n - (size_t)len, "%s=%s&", spec->choice, f->choice);
}

/* The query sent to the API: fixed filter, filters, limit PAGE_SIZE+1
 * (one more than shown: whether a next page exists), offset. */
static void list_api_query(const struct list_spec *spec, const struct list_filter *f, char *out,
                           size_t n)
{
	char filters[128];

	filter_query(spec, f, filters, sizeof(filters));
	snprintf(out, n, "%s%s%slimit=%d&offset=%d", spec->api_fixed ? spec->api_fixed : "",
	         spec->api_fixed ? "&" : "", filters, VIEW_PAGE_SIZE + 1, f->offset);
}

/* <a id="id" href="base?filters&offset=N">text</a> */
static void page_link(xmlNodePtr parent, const struct list_spec *spec, const struct list_filter *f,
                      const char *id, int offset, const char *text)
{
	char filters[128], href[256];

	filter_query(spec, f, filters, sizeof(filters));
	snprintf(href, sizeof(href), "%s?%soffset=%d", spec->base, filters, offset);
	html_attr(html_link(parent, href, text), "id", id);
}

/* Previous / next links, each only when there is such a page. */
static void list_pager(xmlNodePtr main, const struct list_spec *spec, const struct list_filter *f,
                       int has_next)
{
	xmlNodePtr p;
	int prev = f->offset > VIEW_PAGE_SIZE ? f->offset - VIEW_PAGE_SIZE : 0;

	has_next = has_next && f->offset <= PAGE_OFFSET_MAX - VIEW_PAGE_SIZE;
	if (f->offset == 0 && !has_next)
		return;
	p = html_elc(main, "p", "pager", NULL);
	if (f->offset > 0)
		page_link(p, spec, f, "prev-page", prev, "\xe2\x86\x90 Previous");
	if (has_next)
		page_link(p, spec, f, "next-page", f->offset + VIEW_PAGE_SIZE, "Next \xe2\x86\x92");
}

/* <select name="scenario">: "" (any), then the scenarios by name, value
 * the id; the current filter is selected (an unknown one is listed by its
 * id). */
static void scenario_select(xmlNodePtr form, const struct view_names *nm, const char *current)
{
	xmlNodePtr select = view_select_new(form, "Scenario ", "scenario", "(any)");
	const char *id;
	json_t *name;

	json_object_foreach(nm->scenarios, id, name)
	{
		view_option_add(select, id, json_string_value(name), current);
	}
	if (current && !view_name_of(nm->scenarios, current))
		view_option_add(select, current, current, current);
}

/* <form id="filter" method="get"> with the scenario and choice selects. */
static void list_filter_form(xmlNodePtr main, const struct list_spec *spec,
                             const struct list_filter *f, const struct view_names *nm)
{
	xmlNodePtr form = html_attr(html_el(main, "form", NULL), "id", "filter");

	html_attr(form, "method", "get");
	html_attr(form, "action", spec->base);
	scenario_select(form, nm, f->scenario);
	view_labelled_select(form, strcmp(spec->choice, "verdict") == 0 ? "Verdict " : "Status ",
	                     spec->choice, "(any)", spec->choices, f->choice);
	view_submit_button(form, "Filter");
}

/* Any list page: filters, one API call, the table or #empty, the pager. */
static int list_page(struct view_ctx *ctx, const struct list_spec *spec)
{
	struct list_filter f;
	struct view_names nm;
	const char *why = NULL;
	char query[256];
	json_t *reply = NULL, *items;
	htmlDocPtr doc = NULL;
	xmlNodePtr main, tbody;
	size_t i, n;

	if (list_filter_read(ctx, spec, &f, &why))
		return view_page_message(ctx, 400, "Bad request", why);
	list_api_query(spec, &f, query, sizeof(query));
	if (view_api_get(ctx, spec->api_path, query, &reply))
		return 0;
	items = json_object_get(reply, spec->member);
	n = json_array_size(items);
	memset(&nm, 0, sizeof(nm));
	if (spec->choice) /* the lists that name scenarios */
		view_names_load(ctx, &nm, spec->sessions);
	main = view_page_begin(ctx, spec->title, &doc);
	if (spec->choice)
		list_filter_form(main, spec, &f, &nm);
	if (n == 0) {
		html_attr(html_el(main, "p", spec->empty), "id", "empty");
	} else {
		tbody = view_table_new(main, spec->table_id, spec->headers, NULL);
		for (i = 0; i < n && i < VIEW_PAGE_SIZE; i++)
			spec->row(tbody, json_array_get(items, i), &nm);
	}
	list_pager(main, spec, &f, n > VIEW_PAGE_SIZE);
	return view_page_send(ctx, doc, 200);
}

/* ---- list rows ------------------------------------------------------------------- */

static void scenario_row(xmlNodePtr tbody, json_t *sc, const struct view_names *nm)
{
	xmlNodePtr tr = view_row_new(tbody, "scenario", sc);
	char href[96];

	snprintf(href, sizeof(href), "/admin/scenarios/%s", view_jstr(sc, "id", ""));
	html_link(html_elc(tr, "td", "name", NULL), href, view_jstr(sc, "name", ""));
	html_elf(tr, "td", "%lld", view_jint(sc, "version"));
	html_elf(tr, "td", "%lld", view_jint(sc, "steps_count"));
	html_elf(tr, "td", "%lld", view_jint(sc, "mocks_count"));
	view_cell_time(tr, "updated", view_jstr(sc, "updated_at", NULL));
	(void)nm;
}

/* The status; a run that has not ended also its progress, span.progress
 * "3/10" (steps_done of steps_total). */
static void status_cell(xmlNodePtr tr, json_t *run)
{
	xmlNodePtr td = html_elc(tr, "td", "status", view_jstr(run, "status", ""));

	if (!view_run_live(run))
		return;
	html_text(td, " ");
	html_attr(html_elf(td, "span", "%lld/%lld", view_jint(run, "steps_done"),
	                   view_jint(run, "steps_total")),
	          "class", "progress");
}

static void run_row(xmlNodePtr tbody, json_t *run, const struct view_names *nm)
{
	xmlNodePtr tr = view_row_new(tbody, "run", run);
	char text[160];

	view_cell_link(tr, "id", "/admin/runs", view_jstr(run, "id", NULL));
	html_elc(tr, "td", "kind", view_jstr(run, "kind", ""));
	view_scenario_link(html_elc(tr, "td", "scenario", NULL), nm,
	                   view_jstr(run, "scenario_id", NULL));
	html_elc(tr, "td", "variant", view_jstr(run, "variant", VIEW_NONE_TEXT));
	status_cell(tr, run);
	html_elc(tr, "td", "backend", view_jstr(run, "backend", ""));
	view_attestation_text(run, text, sizeof(text));
	html_elc(tr, "td", "attestation", text);
	view_counters_text(run, text, sizeof(text));
	html_elc(tr, "td", "counters", text);
	view_score_text(run, 0, text, sizeof(text));
	html_elc(tr, "td", "score", text);
	view_cell_time(tr, "created", view_jstr(run, "started_at", NULL));
}

/* A replay's session: its external id (title: the id), else its id
 * prefix, else "—". */
static void session_cell(xmlNodePtr tr, const struct view_names *nm, const char *id)
{
	xmlNodePtr td = html_elc(tr, "td", "session", NULL);
	const char *ext = view_name_of(nm->sessions, id);
	char text[VIEW_SHORT_ID_LEN + 1];

	if (!id) {
		html_text(td, VIEW_NONE_TEXT);
		return;
	}
	snprintf(text, sizeof(text), "%s", id);
	html_attr(html_el(td, "span", ext ? ext : text), "title", id);
}

/* "1 of 3 steps diverge" from a replay's divergence, "—" without one
 * (a degraded replay). */
static void divergence_text(json_t *div, char *out, size_t n)
{
	if (json_is_object(div))
		snprintf(out, n, "%lld of %lld steps diverge", view_jint(div, "diverging"),
		         view_jint(div, "compared"));
	else
		snprintf(out, n, "%s", VIEW_NONE_TEXT);
}

static void replay_row(xmlNodePtr tbody, json_t *run, const struct view_names *nm)
{
	xmlNodePtr tr = view_row_new(tbody, "replay", run);
	const char *status = view_jstr(run, "status", "");
	char text[64];

	view_cell_link(tr, "id", "/admin/runs", view_jstr(run, "id", NULL));
	session_cell(tr, nm, view_jstr(run, "session_id", NULL));
	view_scenario_link(html_elc(tr, "td", "scenario", NULL), nm,
	                   view_jstr(run, "scenario_id", NULL));
	status_cell(tr, run);
	/* only a degraded replay has a reason worth this column */
	html_elc(tr, "td", "reason",
	         strcmp(status, "degraded") == 0 ? view_jstr(run, "reason", VIEW_NONE_TEXT)
	                                         : VIEW_NONE_TEXT);
	html_elc(tr, "td", "backend", view_jstr(run, "backend", ""));
	view_counters_text(run, text, sizeof(text));
	html_elc(tr, "td", "counters", text);
	divergence_text(json_object_get(run, "divergence"), text, sizeof(text));
	html_elc(tr, "td", "divergence", text);
	view_cell_time(tr, "created", view_jstr(run, "started_at", NULL));
}

static void comparison_row(xmlNodePtr tbody, json_t *cmp, const struct view_names *nm)
{
	xmlNodePtr tr = view_row_new(tbody, "comparison", cmp);
	char text[64];

	view_cell_link(tr, "id", "/admin/comparisons", view_jstr(cmp, "id", NULL));
	view_scenario_link(html_elc(tr, "td", "scenario", NULL), nm,
	                   view_jstr(cmp, "scenario_id", NULL));
	view_verdict_el(html_elc(tr, "td", "verdict", NULL), cmp);
	view_delta_text(cmp, text, sizeof(text));
	html_elc(tr, "td", "delta", text);
	html_elc(tr, "td", "baseline", view_jstr(json_object_get(cmp, "baseline"), "variant", ""));
	html_elc(tr, "td", "candidate",
	         view_jstr(json_object_get(cmp, "candidate"), "variant", ""));
	view_cell_time(tr, "created", view_jstr(cmp, "created_at", NULL));
}

/* The actor: its token's role and label when it is one of the tenant's
 * tokens (the id in title), else the actor as recorded. */
static void actor_cell(xmlNodePtr tr, json_t *ev)
{
	const char *actor = view_jstr(ev, "actor", VIEW_NONE_TEXT);
	const char *role = view_jstr(ev, "actor_role", NULL);
	const char *label = view_jstr(ev, "actor_label", "");
	xmlNodePtr td;

	if (!role) {
		html_elc(tr, "td", "actor", actor);
		return;
	}
	td = label[0] ? html_elf(tr, "td", "%s · %s", role, label) : html_el(tr, "td", role);
	html_attr(td, "class", "actor");
	html_attr(td, "title", actor);
}

static void audit_row(xmlNodePtr tbody, json_t *ev, const struct view_names *nm)
{
	xmlNodePtr tr = html_elc(tbody, "tr", "event", NULL);
	json_t *detail = json_object_get(ev, "detail");
	char *text = NULL;

	view_cell_time(tr, "time", view_jstr(ev, "created_at", NULL));
	actor_cell(tr, ev);
	html_elc(tr, "td", "action", view_jstr(ev, "action", ""));
	html_elc(tr, "td", "target", view_jstr(ev, "target_id", VIEW_NONE_TEXT));
	if (detail && !json_is_null(detail))
		text = json_dumps(detail, JSON_COMPACT | JSON_ENCODE_ANY);
	html_elc(html_elc(tr, "td", "detail", NULL), "code", NULL, text ? text : VIEW_NONE_TEXT);
	free(text);
	(void)nm;
}

/* ---- the list pages ------------------------------------------------------------- */

static const char *const scenario_headers[] = {"Name",  "Version", "Steps",
                                               "Mocks", "Updated", NULL};
static const char *const run_headers[] = {"Run",    "Kind",    "Scenario",    "Variant",
                                          "Status", "Backend", "Attestation", "Steps",
                                          "Score",  "Started", NULL};
static const char *const replay_headers[] = {
    "Run",     "Session", "Scenario",   "Status",  "Degraded reason",
    "Backend", "Steps",   "Divergence", "Started", NULL};
static const char *const comparison_headers[] = {"Comparison", "Scenario",  "Verdict", "Delta",
                                                 "Baseline",   "Candidate", "Created", NULL};
static const char *const audit_headers[] = {"Time", "Actor", "Action", "Target", "Detail", NULL};

static const struct list_spec scenarios_spec = {
    .title = "Scenarios",
    .base = "/admin/scenarios",
    .api_path = "/v1/m/sandbox/scenarios",
    .member = "scenarios",
    .table_id = "scenarios",
    .empty = "No scenarios.",
    .headers = scenario_headers,
    .row = scenario_row,
};
static const struct list_spec runs_spec = {
    .title = "Runs",
    .base = "/admin/runs",
    .api_path = "/v1/m/sandbox/runs",
    .member = "runs",
    .table_id = "runs",
    .empty = "No runs.",
    .choice = "status",
    .choices = run_statuses,
    .headers = run_headers,
    .row = run_row,
};
static const struct list_spec replays_spec = {
    .title = "Replays",
    .base = "/admin/replays",
    .api_path = "/v1/m/sandbox/runs",
    .api_fixed = "kind=replay",
    .member = "runs",
    .table_id = "replays",
    .empty = "No replays.",
    .choice = "status",
    .choices = run_statuses,
    .headers = replay_headers,
    .row = replay_row,
    .sessions = 1,
};
static const struct list_spec comparisons_spec = {
    .title = "Comparisons",
    .base = "/admin/comparisons",
    .api_path = "/v1/m/sandbox/comparisons",
    .member = "comparisons",
    .table_id = "comparisons",
    .empty = "No comparisons.",
    .choice = "verdict",
    .choices = verdicts,
    .headers = comparison_headers,
    .row = comparison_row,
};
static const struct list_spec audit_spec = {
    .title = "Audit trail",
    .base = "/admin/audit",
    .api_path = "/v1/m/sandbox/audit",
    .member = "events",
    .table_id = "audit",
    .empty = "No events.",
    .headers = audit_headers,
    .row = audit_row,
};

int view_page_scenarios(struct view_ctx *ctx)
{
	return list_page(ctx, &scenarios_spec);
}

int view_page_runs(struct view_ctx *ctx)
{
	return list_page(ctx, &runs_spec);
}

int view_page_replays(struct view_ctx *ctx)
{
	return list_page(ctx, &replays_spec);
}

int view_page_comparisons(struct view_ctx *ctx)
{
	return list_page(ctx, &comparisons_spec);
}

int view_page_audit(struct view_ctx *ctx)
{
	return list_page(ctx, &audit_spec);
}

/* ---- overview ----------------------------------------------------------------------- */

/* Whether the sandbox module is on, from GET /v1/modules's reply. */
static int sandbox_enabled(json_t *reply)
{
	json_t *mods = json_object_get(reply, "modules"), *m;
	size_t i;

	json_array_foreach(mods, i, m)
	{
		if (strcmp(view_jstr(m, "name", ""), "sandbox") == 0)
			return json_is_true(json_object_get(m, "enabled"));
	}
	return 0;
}

static void module_form(struct view_ctx *ctx, xmlNodePtr main, int on)
{
	xmlNodePtr form = view_post_form(ctx, main, "module-form", "/admin/modules/sandbox");

	html_input(form, "hidden", "enabled", on ? "0" : "1");
	view_submit_button(form, on ? "Turn off" : "Turn on");
}

/* The RECENT_RUNS newest runs (#recent-runs, rows as on /admin/runs);
 * nothing when the call fails. */
static void recent_runs(struct view_ctx *ctx, xmlNodePtr main)
{
	json_t *reply = NULL, *runs, *run;
	struct view_names nm;
	xmlNodePtr tbody;
	size_t i;

	if (view_api(ctx, "GET", "/v1/m/sandbox/runs", "limit=" RECENT_RUNS, NULL, &reply) >= 400)
		return;
	runs = json_object_get(reply, "runs");
	html_el(main, "h2", "Recent runs");
	if (json_array_size(runs) == 0) {
		html_elc(main, "p", "none", "No runs yet.");
		return;
	}
	view_names_load(ctx, &nm, 0);
	tbody = view_table_new(main, "recent-runs", run_headers, NULL);
	json_array_foreach(runs, i, run)
	{
		run_row(tbody, run, &nm);
	}
	html_link(html_el(main, "p", NULL), "/admin/runs", "All runs \xe2\x86\x92");
}

int view_page_home(struct view_ctx *ctx)
{
	json_t *reply = NULL;
	htmlDocPtr doc = NULL;
	xmlNodePtr main, dl, dd;
	int on;

	if (view_api_get(ctx, "/v1/modules", "", &reply))
		return 0;
	on = sandbox_enabled(reply);
	main = view_page_begin(ctx, "Overview", &doc);
	dl = html_attr(html_el(main, "dl", NULL), "id", "overview");
	view_dl_item(dl, "Signed in as", "role", role_name(ctx->req->who.role));
	dd = view_dl_item(dl, "Sandbox module", "module-status", on ? "enabled" : "disabled");
	html_attr(dd, "class", on ? "ok" : "off");
	if (ctx->req->who.role >= STORE_ROLE_ADMIN)
		module_form(ctx, main, on);
	if (on)
		recent_runs(ctx, main);
	return view_page_send(ctx, doc, 200);
}
