/*
 * The GET pages of the admin view (issue 6, briefs/admin.md "Markup
 * contract"). Every page reads its data through view_api, i.e. the REST
 * API's own handlers run as the signed-in principal, so roles, the module
 * gate and tenant scoping are the API's; a page never touches the store.
 * Values go into the tree as text (html.h), so the serializer escapes
 * them. Query strings sent to the API are built only from validated
 * values: ids (model_id_valid), words from the fixed lists below, and
 * integers formatted here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fcgi/view/view_internal.h"
#include "model/text.h"
#include "sql/store.h"

/* The largest offset the API accepts (API_OFFSET_MAX, fcgi/api/api_internal.h). */
#define PAGE_OFFSET_MAX 1000000000
/* An id shown in a cell: its first characters, the link holds the whole. */
#define SHORT_ID_LEN 8
#define NONE_TEXT "\xe2\x80\x94" /* "—": an absent value */
/* How many scenarios (sessions) one page asks for to name them (the API's
 * largest page, API_LIST_LIMIT_MAX in fcgi/api/api_internal.h). */
#define NAMES_LIMIT "500"
/* How many runs the overview shows. */
#define RECENT_RUNS "5"
/* A page title: a fixed part and a name (MODEL_MAX_NAME_BYTES). */
#define TITLE_BYTES 256

static const char *const run_statuses[] = {"running", "completed", "failed", "degraded", NULL};
static const char *const verdicts[] = {"improved", "regressed", "unchanged", "inconclusive", NULL};

/* ---- JSON reading ------------------------------------------------------------ */

/* The string member key of o, or dflt when absent, null or not a string. */
static const char *jstr(json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

/* A boolean member as the JSON spells it. */
static const char *jbool(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key)) ? "true" : "false";
}

static long long jint(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* The role's name as the API's messages spell it (enum store_role). */
static const char *role_name(enum store_role role)
{
	static const char *const names[] = {"unknown", "viewer", "editor", "admin"};

	return role >= STORE_ROLE_VIEWER && role <= STORE_ROLE_ADMIN ? names[role] : names[0];
}

static int one_of(const char *word, const char *const *words)
{
	size_t i = 0;

	while (words[i] && strcmp(word, words[i]) != 0)
		i++;
	return words[i] != NULL;
}

/* A run that did not execute: over without completing (failed or
 * degraded) and no step was run (a degraded replay whose timeline cannot
 * be rebuilt, a failed fail-closed backend). A comparison side has no
 * steps_total: never "not executed"; nor is a run still running. */
static int not_executed(json_t *o)
{
	static const char *const over[] = {"failed", "degraded", NULL};
	json_t *total = json_object_get(o, "steps_total");

	return json_is_integer(total) && json_integer_value(total) == 0 &&
	       one_of(jstr(o, "status", ""), over);
}

/* x as recorded (9 decimals, model_score_round), written with at least 4
 * decimals and no trailing zero past them: 0.75 "0.7500", 0.99999
 * "0.99999", so no score or delta reads rounded to another value; with
 * sign, a "+" before a value that is not negative. */
static void number_text(double x, int sign, char *out, size_t n)
{
	size_t len, dot;

	snprintf(out, n, sign ? "%+.9f" : "%.9f", x);
	len = strlen(out);
	dot = strcspn(out, ".");
	while (len > dot + 5 && out[len - 1] == '0')
		out[--len] = '\0';
}

/*
 * The score of a run object (or of a comparison side, which has no
 * "passed" nor "reason"): "0.7500 passed", "0.7500", "not executed" or
 * "executed, not scored" and, when with_reason and the object has one,
 * " (reason)", or " (no suite named)" for a run that named none. Never a
 * pass that was not scored.
 */
static void score_text(json_t *o, int with_reason, char *out, size_t n)
{
	json_t *score = json_object_get(o, "score");
	json_t *passed = json_object_get(o, "passed");
	const char *reason = jstr(o, "reason", NULL);
	const char *what = not_executed(o) ? "not executed" : "executed, not scored";

	if (json_is_true(json_object_get(o, "scored")) && json_is_number(score)) {
		number_text(json_number_value(score), 0, out, n);
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

/* "1/2 ok, 1 error" */
static void counters_text(json_t *run, char *out, size_t n)
{
	snprintf(out, n, "%lld/%lld ok, %lld error", jint(run, "steps_ok"),
	         jint(run, "steps_total"), jint(run, "steps_error"));
}

/* "isolated: true · destroyed: true" */
static void attestation_text(json_t *run, char *out, size_t n)
{
	snprintf(out, n, "isolated: %s \xc2\xb7 destroyed: %s", jbool(run, "isolated"),
	         jbool(run, "destroyed"));
}

/* A delta with its sign (number_text), or "—" when there is none. */
static void delta_text(json_t *cmp, char *out, size_t n)
{
	json_t *d = json_object_get(cmp, "delta");

	if (json_is_number(d))
		number_text(json_number_value(d), 1, out, n);
	else
		snprintf(out, n, "%s", NONE_TEXT);
}

/* ---- markup pieces ------------------------------------------------------------- */

/* <a href="base/id" title="id">first chars of id</a>, or "—" as text when
 * id is not an id (a replay without scenario). */
static void id_link(xmlNodePtr parent, const char *base, const char *id)
{
	char href[96], text[SHORT_ID_LEN + 1];

	if (!id || !model_id_valid(id)) {
		html_text(parent, NONE_TEXT);
		return;
	}
	snprintf(href, sizeof(href), "%s/%s", base, id);
	snprintf(text, sizeof(text), "%s", id);
	html_attr(html_link(parent, href, text), "title", id);
}

/* The tenant's scenarios and sessions by id, to show a name (or an
 * external id) instead of an id. Both are JSON objects owned by the
 * request, in the API's order; an id missing from them (a deleted
 * scenario, beyond the first NAMES_LIMIT) is shown as its prefix. */
struct names {
	json_t *scenarios; /* id -> name */
	json_t *sessions;  /* id -> external_id */
};

/* id -> field of each item of GET path?limit=NAMES_LIMIT's array member;
 * {} when the call fails (the page then shows ids). */
static json_t *name_map(struct view_ctx *ctx, const char *path, const char *member,
                        const char *field)
{
	json_t *map = http_req_own(ctx->req, json_object()), *reply = NULL, *item;
	const char *id, *name;
	size_t i;

	if (view_api(ctx, "GET", path, "limit=" NAMES_LIMIT, NULL, &reply) >= 400)
		return map;
	json_array_foreach(json_object_get(reply, member), i, item)
	{
		id = jstr(item, "id", NULL);
		name = jstr(item, field, NULL);
		if (id && name)
			json_object_set_new(map, id, json_string(name));
	}
	return map;
}

static void names_load(struct view_ctx *ctx, struct names *nm, int sessions)
{
	nm->scenarios = name_map(ctx, "/v1/m/sandbox/scenarios", "scenarios", "name");
	nm->sessions =
	    sessions ? name_map(ctx, "/v1/m/sandbox/sessions", "sessions", "external_id") : NULL;
}

/* The name of id in map, or NULL. */
static const char *name_of(json_t *map, const char *id)
{
	return id ? json_string_value(json_object_get(map, id)) : NULL;
}

/* A scenario's name linking its page (title: the id); its id prefix when
 * the name is unknown; "—" when id is not an id. */
static void scenario_link(xmlNodePtr parent, const struct names *nm, const char *id)
{
	const char *name = name_of(nm->scenarios, id);
	char href[96];

	if (!name || !model_id_valid(id)) {
		id_link(parent, "/admin/scenarios", id);
		return;
	}
	snprintf(href, sizeof(href), "/admin/scenarios/%s", id);
	html_attr(html_link(parent, href, name), "title", id);
}

/* <time class="time" datetime="iso" title="iso">YYYY-MM-DD HH:MM:SS</time>:
 * the API's "YYYY-MM-DDTHH:MM:SS.mmmZ" without its milliseconds; another
 * shape is shown as it is; NULL or "" as "—". */
static void time_el(xmlNodePtr parent, const char *iso)
{
	char text[20];
	xmlNodePtr t;
	int api_shape;

	if (!iso || !iso[0]) {
		html_text(parent, NONE_TEXT);
		return;
	}
	api_shape = strlen(iso) >= 19 && iso[10] == 'T';
	if (api_shape)
		snprintf(text, sizeof(text), "%.10s %.8s", iso, iso + 11);
	t = html_elc(parent, "time", "time", api_shape ? text : iso);
	html_attr(t, "datetime", iso);
	html_attr(t, "title", iso);
}

/* <td class="cls"> with time_el(iso) */
static void cell_time(xmlNodePtr tr, const char *cls, const char *iso)
{
	time_el(html_elc(tr, "td", cls, NULL), iso);
}

/* <td class="cls"><pre>text</pre></td> */
static xmlNodePtr cell_pre(xmlNodePtr tr, const char *cls, const char *text)
{
	xmlNodePtr td = html_elc(tr, "td", cls, NULL);

	html_el(td, "pre", text);
	return td;
}

/* A <td> holding a link to base/id. */
static void cell_link(xmlNodePtr tr, const char *cls, const char *base, const char *id)
{
	id_link(html_elc(tr, "td", cls, NULL), base, id);
}

/* <table id="id"> (in a <div class="table-wrap"> that scrolls a wide
 * table on a narrow screen) with a header row of headers (NULL-terminated,
 * may be NULL: the caller writes it in *head); returns the <tbody> that
 * receives the rows. */
static xmlNodePtr table_new(xmlNodePtr parent, const char *id, const char *const *headers,
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

/* A row <tr class="cls" data-id="id">. */
static xmlNodePtr row_new(xmlNodePtr tbody, const char *cls, json_t *item)
{
	xmlNodePtr tr = html_elc(tbody, "tr", cls, NULL);

	return html_attr(tr, "data-id", jstr(item, "id", NULL));
}

/* <dt>term</dt><dd id="id">text</dd> in dl; returns the <dd>. */
static xmlNodePtr dl_item(xmlNodePtr dl, const char *term, const char *id, const char *text)
{
	html_el(dl, "dt", term);
	return html_attr(html_el(dl, "dd", text), "id", id);
}

/* <label>text <input type name value></label> */
static void labelled_input(xmlNodePtr form, const char *text, const char *type, const char *name,
                           const char *value)
{
	html_input(html_el(form, "label", text), type, name, value);
}

/* <label>text <select name="name"> with a first option "" showing
 * first_text; returns the select. */
static xmlNodePtr select_new(xmlNodePtr form, const char *text, const char *name,
                             const char *first_text)
{
	xmlNodePtr select = html_el(html_el(form, "label", text), "select", NULL);

	html_attr(select, "name", name);
	html_attr(html_el(select, "option", first_text), "value", "");
	return select;
}

/* <option value="value">text</option>, selected when value is selected
 * (may be NULL); returns the option. */
static xmlNodePtr option_add(xmlNodePtr select, const char *value, const char *text,
                             const char *selected)
{
	xmlNodePtr opt = html_attr(html_el(select, "option", text), "value", value);

	if (selected && strcmp(selected, value) == 0)
		html_attr(opt, "selected", "selected");
	return opt;
}

/* select_new, then one option per word of values (selected: the current
 * one, may be NULL). */
static void labelled_select(xmlNodePtr form, const char *text, const char *name,
                            const char *first_text, const char *const *values, const char *selected)
{
	xmlNodePtr select = select_new(form, text, name, first_text);
	size_t i;

	for (i = 0; values[i]; i++)
		option_add(select, values[i], values[i], selected);
}

static void submit_button(xmlNodePtr form, const char *text)
{
	html_attr(html_el(form, "button", text), "type", "submit");
}

/* ---- API calls ------------------------------------------------------------------ */

/* GET path?query as the principal; on an API error the error page is
 * replied and -1 returned (the page then returns 0). */
static int api_get(struct view_ctx *ctx, const char *path, const char *query, json_t **reply)
{
	int status = view_api(ctx, "GET", path, query, NULL, reply);

	if (status >= 400) {
		view_page_api_error(ctx, status, *reply);
		return -1;
	}
	return 0;
}

/* GET /v1/m/sandbox/<collection>/<id><suffix>; an id that is not well formed
 * names nothing: 404 page, as the API says for such a path. */
static int api_get_item(struct view_ctx *ctx, const char *collection, const char *id,
                        const char *suffix, json_t **reply)
{
	char path[128];

	if (!id || !model_id_valid(id)) {
		view_page_message(ctx, 404, "Not found", "not found");
		return -1;
	}
	snprintf(path, sizeof(path), "/v1/m/sandbox/%s/%s%s", collection, id, suffix);
	return api_get(ctx, path, "", reply);
}

/* ---- lists: filters, pagination, the table ------------------------------------- */

typedef void (*list_row_fn)(xmlNodePtr tbody, json_t *item, const struct names *nm);

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
	if (f->choice && !one_of(f->choice, spec->choices)) {
		*why = strcmp(spec->choice, "verdict") == 0
		           ? "verdict must be improved, regressed, unchanged or inconclusive"
		           : "status must be running, completed, failed or degraded";
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
static void scenario_select(xmlNodePtr form, const struct names *nm, const char *current)
{
	xmlNodePtr select = select_new(form, "Scenario ", "scenario", "(any)");
	const char *id;
	json_t *name;

	json_object_foreach(nm->scenarios, id, name)
	{
		option_add(select, id, json_string_value(name), current);
	}
	if (current && !name_of(nm->scenarios, current))
		option_add(select, current, current, current);
}

/* <form id="filter" method="get"> with the scenario and choice selects. */
static void list_filter_form(xmlNodePtr main, const struct list_spec *spec,
                             const struct list_filter *f, const struct names *nm)
{
	xmlNodePtr form = html_attr(html_el(main, "form", NULL), "id", "filter");

	html_attr(form, "method", "get");
	html_attr(form, "action", spec->base);
	scenario_select(form, nm, f->scenario);
	labelled_select(form, strcmp(spec->choice, "verdict") == 0 ? "Verdict " : "Status ",
	                spec->choice, "(any)", spec->choices, f->choice);
	submit_button(form, "Filter");
}

/* Any list page: filters, one API call, the table or #empty, the pager. */
static int list_page(struct view_ctx *ctx, const struct list_spec *spec)
{
	struct list_filter f;
	struct names nm;
	const char *why = NULL;
	char query[256];
	json_t *reply = NULL, *items;
	htmlDocPtr doc = NULL;
	xmlNodePtr main, tbody;
	size_t i, n;

	if (list_filter_read(ctx, spec, &f, &why))
		return view_page_message(ctx, 400, "Bad request", why);
	list_api_query(spec, &f, query, sizeof(query));
	if (api_get(ctx, spec->api_path, query, &reply))
		return 0;
	items = json_object_get(reply, spec->member);
	n = json_array_size(items);
	memset(&nm, 0, sizeof(nm));
	if (spec->choice) /* the lists that name scenarios */
		names_load(ctx, &nm, spec->sessions);
	main = view_page_begin(ctx, spec->title, &doc);
	if (spec->choice)
		list_filter_form(main, spec, &f, &nm);
	if (n == 0) {
		html_attr(html_el(main, "p", spec->empty), "id", "empty");
	} else {
		tbody = table_new(main, spec->table_id, spec->headers, NULL);
		for (i = 0; i < n && i < VIEW_PAGE_SIZE; i++)
			spec->row(tbody, json_array_get(items, i), &nm);
	}
	list_pager(main, spec, &f, n > VIEW_PAGE_SIZE);
	return view_page_send(ctx, doc, 200);
}

/* ---- list rows ------------------------------------------------------------------- */

static void scenario_row(xmlNodePtr tbody, json_t *sc, const struct names *nm)
{
	xmlNodePtr tr = row_new(tbody, "scenario", sc);
	char href[96];

	snprintf(href, sizeof(href), "/admin/scenarios/%s", jstr(sc, "id", ""));
	html_link(html_elc(tr, "td", "name", NULL), href, jstr(sc, "name", ""));
	html_elf(tr, "td", "%lld", jint(sc, "version"));
	html_elf(tr, "td", "%lld", jint(sc, "steps_count"));
	html_elf(tr, "td", "%lld", jint(sc, "mocks_count"));
	cell_time(tr, "updated", jstr(sc, "updated_at", NULL));
	(void)nm;
}

static void run_row(xmlNodePtr tbody, json_t *run, const struct names *nm)
{
	xmlNodePtr tr = row_new(tbody, "run", run);
	char text[160];

	cell_link(tr, "id", "/admin/runs", jstr(run, "id", NULL));
	html_elc(tr, "td", "kind", jstr(run, "kind", ""));
	scenario_link(html_elc(tr, "td", "scenario", NULL), nm, jstr(run, "scenario_id", NULL));
	html_elc(tr, "td", "variant", jstr(run, "variant", NONE_TEXT));
	html_elc(tr, "td", "status", jstr(run, "status", ""));
	html_elc(tr, "td", "backend", jstr(run, "backend", ""));
	attestation_text(run, text, sizeof(text));
	html_elc(tr, "td", "attestation", text);
	counters_text(run, text, sizeof(text));
	html_elc(tr, "td", "counters", text);
	score_text(run, 0, text, sizeof(text));
	html_elc(tr, "td", "score", text);
	cell_time(tr, "created", jstr(run, "started_at", NULL));
}

/* A replay's session: its external id (title: the id), else its id
 * prefix, else "—". */
static void session_cell(xmlNodePtr tr, const struct names *nm, const char *id)
{
	xmlNodePtr td = html_elc(tr, "td", "session", NULL);
	const char *ext = name_of(nm->sessions, id);
	char text[SHORT_ID_LEN + 1];

	if (!id) {
		html_text(td, NONE_TEXT);
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
		snprintf(out, n, "%lld of %lld steps diverge", jint(div, "diverging"),
		         jint(div, "compared"));
	else
		snprintf(out, n, "%s", NONE_TEXT);
}

static void replay_row(xmlNodePtr tbody, json_t *run, const struct names *nm)
{
	xmlNodePtr tr = row_new(tbody, "replay", run);
	const char *status = jstr(run, "status", "");
	char text[64];

	cell_link(tr, "id", "/admin/runs", jstr(run, "id", NULL));
	session_cell(tr, nm, jstr(run, "session_id", NULL));
	scenario_link(html_elc(tr, "td", "scenario", NULL), nm, jstr(run, "scenario_id", NULL));
	html_elc(tr, "td", "status", status);
	/* only a degraded replay has a reason worth this column */
	html_elc(tr, "td", "reason",
	         strcmp(status, "degraded") == 0 ? jstr(run, "reason", NONE_TEXT) : NONE_TEXT);
	html_elc(tr, "td", "backend", jstr(run, "backend", ""));
	counters_text(run, text, sizeof(text));
	html_elc(tr, "td", "counters", text);
	divergence_text(json_object_get(run, "divergence"), text, sizeof(text));
	html_elc(tr, "td", "divergence", text);
	cell_time(tr, "created", jstr(run, "started_at", NULL));
}

static void comparison_row(xmlNodePtr tbody, json_t *cmp, const struct names *nm)
{
	xmlNodePtr tr = row_new(tbody, "comparison", cmp);
	char text[64];

	cell_link(tr, "id", "/admin/comparisons", jstr(cmp, "id", NULL));
	scenario_link(html_elc(tr, "td", "scenario", NULL), nm, jstr(cmp, "scenario_id", NULL));
	html_elc(tr, "td", "verdict", jstr(cmp, "verdict", ""));
	delta_text(cmp, text, sizeof(text));
	html_elc(tr, "td", "delta", text);
	html_elc(tr, "td", "baseline", jstr(json_object_get(cmp, "baseline"), "variant", ""));
	html_elc(tr, "td", "candidate", jstr(json_object_get(cmp, "candidate"), "variant", ""));
	cell_time(tr, "created", jstr(cmp, "created_at", NULL));
}

/* The actor: its token's role and label when it is one of the tenant's
 * tokens (the id in title), else the actor as recorded. */
static void actor_cell(xmlNodePtr tr, json_t *ev)
{
	const char *actor = jstr(ev, "actor", NONE_TEXT);
	const char *role = jstr(ev, "actor_role", NULL);
	const char *label = jstr(ev, "actor_label", "");
	xmlNodePtr td;

	if (!role) {
		html_elc(tr, "td", "actor", actor);
		return;
	}
	td = label[0] ? html_elf(tr, "td", "%s · %s", role, label) : html_el(tr, "td", role);
	html_attr(td, "class", "actor");
	html_attr(td, "title", actor);
}

static void audit_row(xmlNodePtr tbody, json_t *ev, const struct names *nm)
{
	xmlNodePtr tr = html_elc(tbody, "tr", "event", NULL);
	json_t *detail = json_object_get(ev, "detail");
	char *text = NULL;

	cell_time(tr, "time", jstr(ev, "created_at", NULL));
	actor_cell(tr, ev);
	html_elc(tr, "td", "action", jstr(ev, "action", ""));
	html_elc(tr, "td", "target", jstr(ev, "target_id", NONE_TEXT));
	if (detail && !json_is_null(detail))
		text = json_dumps(detail, JSON_COMPACT | JSON_ENCODE_ANY);
	html_elc(html_elc(tr, "td", "detail", NULL), "code", NULL, text ? text : NONE_TEXT);
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
		if (strcmp(jstr(m, "name", ""), "sandbox") == 0)
			return json_is_true(json_object_get(m, "enabled"));
	}
	return 0;
}

static void module_form(struct view_ctx *ctx, xmlNodePtr main, int on)
{
	xmlNodePtr form = view_post_form(ctx, main, "module-form", "/admin/modules/sandbox");

	html_input(form, "hidden", "enabled", on ? "0" : "1");
	submit_button(form, on ? "Turn off" : "Turn on");
}

/* The RECENT_RUNS newest runs (#recent-runs, rows as on /admin/runs);
 * nothing when the call fails. */
static void recent_runs(struct view_ctx *ctx, xmlNodePtr main)
{
	json_t *reply = NULL, *runs, *run;
	struct names nm;
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
	names_load(ctx, &nm, 0);
	tbody = table_new(main, "recent-runs", run_headers, NULL);
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

	if (api_get(ctx, "/v1/modules", "", &reply))
		return 0;
	on = sandbox_enabled(reply);
	main = view_page_begin(ctx, "Overview", &doc);
	dl = html_attr(html_el(main, "dl", NULL), "id", "overview");
	dl_item(dl, "Signed in as", "role", role_name(ctx->req->who.role));
	dd = dl_item(dl, "Sandbox module", "module-status", on ? "enabled" : "disabled");
	html_attr(dd, "class", on ? "ok" : "off");
	if (ctx->req->who.role >= STORE_ROLE_ADMIN)
		module_form(ctx, main, on);
	if (on)
		recent_runs(ctx, main);
	return view_page_send(ctx, doc, 200);
}

/* ---- scenario detail --------------------------------------------------------------- */

static void scenario_summary(xmlNodePtr main, json_t *sc)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "scenario-summary");
	char text[32], href[128];
	const char *desc;
	xmlNodePtr dd;

	dl_item(dl, "Name", "scenario-name", jstr(sc, "name", ""));
	snprintf(text, sizeof(text), "%lld", jint(sc, "version"));
	dl_item(dl, "Version", "scenario-version", text);
	desc = jstr(sc, "description", "");
	dl_item(dl, "Description", "scenario-description", desc[0] ? desc : NONE_TEXT);
	dl_item(dl, "Subject kind", "scenario-subject-kind", jstr(sc, "subject_kind", NONE_TEXT));
	html_elc(dl_item(dl, "Digest", "scenario-digest", NULL), "code", NULL,
	         jstr(sc, "digest", ""));
	time_el(dl_item(dl, "Updated", "scenario-updated", NULL), jstr(sc, "updated_at", NULL));
	dd = dl_item(dl, "History", "scenario-history", NULL);
	snprintf(href, sizeof(href), "/admin/runs?scenario=%s", jstr(sc, "id", ""));
	html_link(dd, href, "runs");
	html_text(dd, " \xc2\xb7 ");
	snprintf(href, sizeof(href), "/admin/comparisons?scenario=%s", jstr(sc, "id", ""));
	html_link(dd, href, "comparisons");
}

static void steps_table(xmlNodePtr main, json_t *steps)
{
	static const char *const headers[] = {"Key", "Input", NULL};
	xmlNodePtr tbody, tr;
	json_t *step;
	size_t i;

	html_el(main, "h2", "Steps");
	tbody = table_new(main, "steps", headers, NULL);
	json_array_foreach(steps, i, step)
	{
		tr = html_elc(tbody, "tr", "step", NULL);
		html_elc(tr, "td", "key", jstr(step, "key", ""));
		cell_pre(tr, "input", jstr(step, "input", ""));
	}
}

static void mocks_table(xmlNodePtr main, json_t *mocks)
{
	static const char *const headers[] = {"Resource", "Variant", "Response", NULL};
	xmlNodePtr tbody, tr;
	json_t *mock;
	size_t i;

	html_el(main, "h2", "Mocks");
	tbody = table_new(main, "mocks", headers, NULL);
	json_array_foreach(mocks, i, mock)
	{
		tr = html_elc(tbody, "tr", "mock", NULL);
		html_elc(tr, "td", "resource", jstr(mock, "resource", ""));
		html_elc(tr, "td", "variant", jstr(mock, "variant", NONE_TEXT));
		cell_pre(tr, "response", jstr(mock, "response", ""));
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
		v = jstr(mock, "variant", NULL);
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

/* labelled_input for a variant, suggesting the mock variants (the
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
	snprintf(title, n, "preflight failed %lld s ago: %s", jint(pf, "age_s"),
	         jstr(pf, "reason", "no reason given"));
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
	xmlNodePtr select = select_new(form, "Backend ", "backend", "(tenant default)");
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
			name = jstr(b, "name", "");
			mark = preflight_mark(b, title, sizeof(title));
			snprintf(text, sizeof(text), "%s%s%s%s%s", name, pass || mark ? " (" : "",
			         pass ? "default" : "", pass && mark ? ", " : "", mark ? mark : "");
			if (pass || mark)
				snprintf(text + strlen(text), sizeof(text) - strlen(text), ")");
			opt = option_add(select, name, text, selected);
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
			html_text(note, jstr(json_object_get(b, "preflight"), "reason", ""));
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
	submit_button(form, "Run");
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
	labelled_input(form, "Tolerance ", "text", "tolerance", refilled(ctx, here, "tolerance"));
	backend_select(ctx, form, refilled(ctx, here, "backend"), "compare-backend-preflight");
	submit_button(form, "Compare");
}

/* view_page_begin with the title "prefix name" (name may be NULL: prefix
 * alone). */
static xmlNodePtr page_begin_named(struct view_ctx *ctx, const char *prefix, const char *name,
                                   htmlDocPtr *doc)
{
	char title[TITLE_BYTES];

	snprintf(title, sizeof(title), "%s%s%s", prefix, name ? " " : "", name ? name : "");
	return view_page_begin(ctx, title, doc);
}

int view_page_scenario(struct view_ctx *ctx, const char *id, const struct view_refusal *refused)
{
	json_t *sc = NULL, *variants;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;

	if (api_get_item(ctx, "scenarios", id, "", &sc))
		return 0;
	variants = mock_variants(ctx, sc);
	main = page_begin_named(ctx, "Scenario:", jstr(sc, "name", NULL), &doc);
	scenario_summary(main, sc);
	steps_table(main, json_object_get(sc, "steps"));
	mocks_table(main, json_object_get(sc, "mocks"));
	if (ctx->req->who.role >= STORE_ROLE_EDITOR)
		run_form(ctx, main, id, variants, refused);
	if (ctx->req->who.role >= STORE_ROLE_ADMIN)
		compare_form(ctx, main, id, variants, refused);
	return view_page_send(ctx, doc, refused ? refused->status : 200);
}

/* ---- run detail --------------------------------------------------------------------- */

static void run_summary(xmlNodePtr main, json_t *run, const struct names *nm)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "run-summary");
	char text[1024];

	dl_item(dl, "Status", "run-status", jstr(run, "status", ""));
	dl_item(dl, "Kind", "run-kind", jstr(run, "kind", ""));
	dl_item(dl, "Backend", "run-backend", jstr(run, "backend", ""));
	dl_item(dl, "Runner", "run-runner", jstr(run, "runner", NONE_TEXT));
	dl_item(dl, "Isolated", "run-isolated", jbool(run, "isolated"));
	dl_item(dl, "Destroyed", "run-destroyed", jbool(run, "destroyed"));
	counters_text(run, text, sizeof(text));
	dl_item(dl, "Steps", "run-counters", text);
	dl_item(dl, "Suite", "run-suite", jstr(run, "suite", NONE_TEXT));
	score_text(run, 1, text, sizeof(text));
	dl_item(dl, "Score", "run-score", text);
	dl_item(dl, "Reason", "run-reason", jstr(run, "reason", NONE_TEXT));
	/* the agent killed after every step completed: said, never hidden */
	dl_item(dl, "Agent shutdown", "run-shutdown", jstr(run, "shutdown", NONE_TEXT));
	dl_item(dl, "Variant", "run-variant", jstr(run, "variant", NONE_TEXT));
	scenario_link(dl_item(dl, "Scenario", "run-scenario", NULL), nm,
	              jstr(run, "scenario_id", NULL));
	if (strcmp(jstr(run, "kind", ""), "replay") == 0 || jstr(run, "session_id", NULL))
		dl_item(dl, "Session", "run-session", jstr(run, "session_id", NONE_TEXT));
	html_elc(dl_item(dl, "Output digest", "run-digest", NULL), "code", NULL,
	         jstr(run, "output_digest", ""));
	time_el(dl_item(dl, "Started", "run-started", NULL), jstr(run, "started_at", NULL));
	time_el(dl_item(dl, "Finished", "run-finished", NULL), jstr(run, "finished_at", NULL));
}

/* A replay's divergence from its recorded session (briefs/api5.md). */
static void run_divergence(xmlNodePtr main, json_t *div)
{
	xmlNodePtr sec, dl;
	json_t *first;
	char text[32];

	if (!json_is_object(div))
		return;
	sec = html_attr(html_el(main, "section", NULL), "id", "divergence");
	html_el(sec, "h2", "Divergence");
	html_elf(sec, "p", "%lld of %lld compared steps diverge", jint(div, "diverging"),
	         jint(div, "compared"));
	first = json_object_get(div, "first");
	if (!json_is_object(first))
		return;
	dl = html_el(sec, "dl", NULL);
	snprintf(text, sizeof(text), "%lld", jint(first, "seq"));
	dl_item(dl, "First at step", "divergence-seq", text);
	dl_item(dl, "Key", "divergence-key", jstr(first, "key", ""));
	html_el(dl_item(dl, "Recorded", "divergence-recorded", NULL), "pre",
	        jstr(first, "recorded", ""));
	html_el(dl_item(dl, "Replayed", "divergence-replayed", NULL), "pre",
	        jstr(first, "replayed", ""));
}

static int is_mock_miss(json_t *out)
{
	return strcmp(jstr(out, "error_kind", ""), "mock_miss") == 0 ||
	       strncmp(jstr(out, "output", ""), "[[mock-miss:", 12) == 0;
}

static void output_row(xmlNodePtr tbody, json_t *out)
{
	int miss = is_mock_miss(out);
	xmlNodePtr tr = html_elc(tbody, "tr", miss ? "output mock-miss" : "output", NULL);
	xmlNodePtr status;
	const char *kind = jstr(out, "error_kind", NULL);
	json_t *dur;
	char seq[24], ms[48];

	snprintf(seq, sizeof(seq), "%lld", jint(out, "seq"));
	html_attr(tr, "data-seq", seq);
	html_elc(tr, "td", "seq", seq);
	html_elc(tr, "td", "key", jstr(out, "key", ""));
	cell_pre(tr, "input", jstr(out, "input", ""));
	cell_pre(tr, "output", jstr(out, "output", ""));
	status = html_elc(tr, "td", "step-status", jstr(out, "status", ""));
	if (miss || kind)
		html_text(status, " ");
	if (miss)
		html_elc(status, "span", "mock-miss-marker", "mock miss");
	else if (kind)
		html_elc(status, "span", "error-kind", kind);
	/* the step's time, ms to the microsecond; "—" when unknown (a run
	 * recorded before step times existed) */
	dur = json_object_get(out, "duration_ms");
	if (json_is_number(dur))
		snprintf(ms, sizeof(ms), "%.3f", json_number_value(dur));
	else
		snprintf(ms, sizeof(ms), "%s", NONE_TEXT);
	html_elc(tr, "td", "duration", ms);
}

static void outputs_table(xmlNodePtr main, json_t *outputs)
{
	static const char *const headers[] = {"#",      "Key",       "Input", "Output",
	                                      "Status", "Time (ms)", NULL};
	xmlNodePtr tbody;
	json_t *out;
	size_t i;

	html_el(main, "h2", "Steps");
	tbody = table_new(main, "outputs", headers, NULL);
	json_array_foreach(outputs, i, out)
	{
		output_row(tbody, out);
	}
	if (json_array_size(outputs) == 0)
		html_elc(main, "p", "none", "No step was executed.");
}

/* A field of the item GET /v1/m/sandbox/collection/id, or NULL (not an
 * id, not found, no such field). */
static const char *item_field(struct view_ctx *ctx, const char *collection, const char *id,
                              const char *field)
{
	json_t *reply = NULL;
	char path[128];

	if (!id || !model_id_valid(id))
		return NULL;
	snprintf(path, sizeof(path), "/v1/m/sandbox/%s/%s", collection, id);
	if (view_api(ctx, "GET", path, "", NULL, &reply) != 200)
		return NULL;
	return jstr(reply, field, NULL);
}

/*
 * The heading of the page of a run or comparison (what: "Run",
 * "Comparison") of scenario_id, into out: "WHAT of NAME"; the name asked
 * of the API when it is not in nm (beyond the first NAMES_LIMIT). A
 * scenario that has none (deleted): "WHAT of a deleted scenario
 * (1a2b3c4d)". Without a scenario (a replay that names none): "Replay of
 * session EXTERNAL-ID" when session_id is set, else "WHAT 1a2b3c4d" of
 * own_id. Never "Run of" with nothing after it.
 */
static void page_heading(struct view_ctx *ctx, const struct names *nm, const char *what,
                         const char *scenario_id, const char *session_id, const char *own_id,
                         char *out, size_t n)
{
	const char *name = name_of(nm->scenarios, scenario_id), *ext;

	if (!name)
		name = item_field(ctx, "scenarios", scenario_id, "name");
	if (name) {
		snprintf(out, n, "%s of %s", what, name);
	} else if (scenario_id && model_id_valid(scenario_id)) {
		snprintf(out, n, "%s of a deleted scenario (%.*s)", what, SHORT_ID_LEN,
		         scenario_id);
	} else if (session_id && model_id_valid(session_id)) {
		ext = item_field(ctx, "sessions", session_id, "external_id");
		if (ext)
			snprintf(out, n, "Replay of session %s", ext);
		else
			snprintf(out, n, "Replay of session %.*s", SHORT_ID_LEN, session_id);
	} else {
		snprintf(out, n, "%s %.*s", what, SHORT_ID_LEN, own_id);
	}
}

int view_page_run(struct view_ctx *ctx, const char *id)
{
	json_t *run = NULL, *outs = NULL;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;
	struct names nm;
	char title[TITLE_BYTES];

	if (api_get_item(ctx, "runs", id, "", &run) ||
	    api_get_item(ctx, "runs", id, "/outputs", &outs))
		return 0;
	names_load(ctx, &nm, 0);
	page_heading(ctx, &nm, "Run", jstr(run, "scenario_id", NULL), jstr(run, "session_id", NULL),
	             id, title, sizeof(title));
	main = view_page_begin(ctx, title, &doc);
	html_elc(main, "p", "id", id);
	run_summary(main, run, &nm);
	run_divergence(main, json_object_get(run, "divergence"));
	outputs_table(main, json_object_get(outs, "outputs"));
	return view_page_send(ctx, doc, 200);
}

/* ---- comparison detail -------------------------------------------------------------- */

static void comparison_summary(xmlNodePtr main, json_t *cmp, const struct names *nm)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "comparison-summary");
	char text[64];

	dl_item(dl, "Verdict", "verdict", jstr(cmp, "verdict", ""));
	delta_text(cmp, text, sizeof(text));
	dl_item(dl, "Delta", "delta", text);
	dl_item(dl, "Reason", "reason", jstr(cmp, "reason", NONE_TEXT));
	/* beside the verdict, not in it (a note is not a score): each side's
	 * agent killed after its last step, as #run-shutdown on its run page */
	dl_item(dl, "Baseline agent shutdown", "baseline-shutdown",
	        jstr(json_object_get(cmp, "baseline"), "shutdown", NONE_TEXT));
	dl_item(dl, "Candidate agent shutdown", "candidate-shutdown",
	        jstr(json_object_get(cmp, "candidate"), "shutdown", NONE_TEXT));
	dl_item(dl, "Suite", "suite", jstr(cmp, "suite", ""));
	number_text(json_number_value(json_object_get(cmp, "tolerance")), 0, text, sizeof(text));
	dl_item(dl, "Tolerance", "tolerance", text);
	scenario_link(dl_item(dl, "Scenario", "comparison-scenario", NULL), nm,
	              jstr(cmp, "scenario_id", NULL));
	dl_item(dl, "Decided by", "decided-by", jstr(cmp, "decided_by", NONE_TEXT));
	time_el(dl_item(dl, "Created", "created", NULL), jstr(cmp, "created_at", NULL));
}

/* The header cell of one side: label, variant, run link, status, score. */
static void side_head(xmlNodePtr tr, const char *cls, const char *label, json_t *side)
{
	xmlNodePtr th = html_elc(tr, "th", cls, NULL);
	char text[128];

	html_el(th, "div", label);
	html_elc(th, "div", "side-variant", jstr(side, "variant", NONE_TEXT));
	id_link(html_elc(th, "div", "side-run", NULL), "/admin/runs", jstr(side, "run_id", NULL));
	html_elc(th, "div", "side-status", jstr(side, "status", ""));
	score_text(side, 0, text, sizeof(text));
	html_elc(th, "div", "side-score", text);
}

static int step_differs(json_t *differing, json_int_t seq)
{
	json_t *d;
	size_t i;

	json_array_foreach(differing, i, d)
	{
		if (json_integer_value(json_object_get(d, "seq")) == seq)
			return 1;
	}
	return 0;
}

/* One side's output of a step (out may be NULL: that side has no such
 * step, "—"), a mock miss marked as on the run page. */
static void side_cell(xmlNodePtr tr, const char *cls, json_t *out)
{
	xmlNodePtr td = cell_pre(tr, cls, out ? jstr(out, "output", "") : NONE_TEXT);

	if (out && is_mock_miss(out))
		html_elc(td, "span", "mock-miss-marker", "mock miss");
}

/* One row; a differing step says so in words too (.differs-marker). */
static void side_row(xmlNodePtr tbody, json_t *b, json_t *c, json_t *differing)
{
	json_t *any = b ? b : c;
	json_int_t seq = json_integer_value(json_object_get(any, "seq"));
	int differs = step_differs(differing, seq);
	xmlNodePtr tr, key;
	char text[24];

	tr = html_elc(tbody, "tr", differs ? "step differs" : "step", NULL);
	snprintf(text, sizeof(text), "%lld", (long long)seq);
	html_attr(tr, "data-seq", text);
	key = html_elc(tr, "td", "key", jstr(any, "key", ""));
	if (differs) {
		html_text(key, " ");
		html_elc(key, "span", "differs-marker", "differs");
	}
	side_cell(tr, "baseline", b);
	side_cell(tr, "candidate", c);
}

/* Both runs' outputs merged by seq (each in seq order). */
static void side_by_side(xmlNodePtr main, json_t *cmp, json_t *base, json_t *cand)
{
	json_t *differing = json_object_get(cmp, "differing_steps"), *b, *c;
	json_int_t bs, cs;
	xmlNodePtr tr, tbody;
	size_t i = 0, j = 0;

	html_el(main, "h2", "Side by side");
	tbody = table_new(main, "side-by-side", NULL, &tr);
	html_el(tr, "th", "Step");
	side_head(tr, "baseline", "Baseline", json_object_get(cmp, "baseline"));
	side_head(tr, "candidate", "Candidate", json_object_get(cmp, "candidate"));
	while (i < json_array_size(base) || j < json_array_size(cand)) {
		b = json_array_get(base, i);
		c = json_array_get(cand, j);
		bs = json_integer_value(json_object_get(b, "seq"));
		cs = json_integer_value(json_object_get(c, "seq"));
		if (b && c && bs != cs) {
			if (bs < cs)
				c = NULL;
			else
				b = NULL;
		}
		i += b != NULL;
		j += c != NULL;
		side_row(tbody, b, c, differing);
	}
}

/* The outputs array of a comparison side's run (or an error page). */
static int side_outputs(struct view_ctx *ctx, json_t *cmp, const char *side, json_t **outputs)
{
	json_t *reply = NULL;

	if (api_get_item(ctx, "runs", jstr(json_object_get(cmp, side), "run_id", NULL), "/outputs",
	                 &reply))
		return -1;
	*outputs = json_object_get(reply, "outputs");
	return 0;
}

int view_page_comparison(struct view_ctx *ctx, const char *id)
{
	json_t *cmp = NULL, *base = NULL, *cand = NULL;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;
	struct names nm;
	char title[TITLE_BYTES];

	if (api_get_item(ctx, "comparisons", id, "", &cmp) ||
	    side_outputs(ctx, cmp, "baseline", &base) || side_outputs(ctx, cmp, "candidate", &cand))
		return 0;
	names_load(ctx, &nm, 0);
	page_heading(ctx, &nm, "Comparison", jstr(cmp, "scenario_id", NULL), NULL, id, title,
	             sizeof(title));
	main = view_page_begin(ctx, title, &doc);
	html_elc(main, "p", "id", id);
	comparison_summary(main, cmp, &nm);
	side_by_side(main, cmp, base, cand);
	return view_page_send(ctx, doc, 200);
}
