#ifndef OLIVARES_FCGI_VIEW_PAGES_H
#define OLIVARES_FCGI_VIEW_PAGES_H
/**
 * What the GET pages of the admin view share (pages.c), used by the page
 * files only: pages_lists.c (the lists and the overview),
 * pages_scenario.c (a scenario with its run and compare forms) and
 * pages_detail.c (a run, a comparison). The pages themselves are declared
 * in view_internal.h.
 *
 * Every page reads its data through view_api, i.e. the REST API's own
 * handlers run as the signed-in principal, so roles, the module gate and
 * tenant scoping are the API's; a page never touches the store. Values go
 * into the tree as text (html.h), so the serializer escapes them. Query
 * strings sent to the API are built only from validated values: ids
 * (model_id_valid), words from fixed lists, and integers formatted here.
 */
#include <stddef.h>

#include <jansson.h>
#include <libxml/tree.h>

#include "fcgi/view/view_internal.h"

/** An id shown in a cell: its first characters, the link holds the whole. */
#define VIEW_SHORT_ID_LEN 8
/** "—": an absent value. */
#define VIEW_NONE_TEXT "\xe2\x80\x94"
/** How many scenarios (sessions) one page asks for to name them (the API's
 * largest page, API_LIST_LIMIT_MAX in fcgi/api/api_internal.h). */
#define VIEW_NAMES_LIMIT "500"
/** A page title: a fixed part and a name (MODEL_MAX_NAME_BYTES). */
#define VIEW_TITLE_BYTES 256

/**
 * The tenant's scenarios and sessions by id, to show a name (or an
 * external id) instead of an id. Both are JSON objects owned by the
 * request, in the API's order; an id missing from them (a deleted
 * scenario, beyond the first VIEW_NAMES_LIMIT) is shown as its prefix.
 */
struct view_names {
	json_t *scenarios; /* id -> name */
	json_t *sessions;  /* id -> external_id */
};

/* ---- JSON reading and the texts of a run ---- */

/** The string member key of o, or dflt when absent, null or not a string. */
const char *view_jstr(json_t *o, const char *key, const char *dflt);

/** A boolean member as the JSON spells it. */
const char *view_jbool(json_t *o, const char *key);

/** An integer member, 0 when absent or not an integer. */
long long view_jint(json_t *o, const char *key);

/** 1 if word is one of the NULL-terminated list words, else 0. */
int view_one_of(const char *word, const char *const *words);

/** 1 when run (or a comparison side) is queued or running: not ended,
 * so its page refreshes itself and it may be cancelled; 0 otherwise. */
int view_run_live(json_t *run);

/** x as recorded (9 decimals, model_score_round), written with at least 4
 * decimals and no trailing zero past them: 0.75 "0.7500", 0.99999
 * "0.99999", so no score or delta reads rounded to another value; with
 * sign, a "+" before a value that is not negative. */
void view_number_text(double x, int sign, char *out, size_t n);

/**
 * The score of a run object (or of a comparison side, which has no
 * "passed" nor "reason"): "0.7500 passed", "0.7500", "not executed" or
 * "executed, not scored" and, when with_reason and the object has one,
 * " (reason)", or " (no suite named)" for a run that named none; a run
 * still queued or running: "not scored yet (running)". Never a pass that
 * was not scored.
 */
void view_score_text(json_t *o, int with_reason, char *out, size_t n);

/** "3 of 10 steps done": the run's steps_done of its steps_total. */
void view_progress_text(json_t *run, char *out, size_t n);

/** "1/2 ok, 1 error" */
void view_counters_text(json_t *run, char *out, size_t n);

/** "isolated: true · destroyed: true" */
void view_attestation_text(json_t *run, char *out, size_t n);

/** A delta with its sign (view_number_text), or "—" when there is none. */
void view_delta_text(json_t *cmp, char *out, size_t n);

/** Under parent, the comparison cmp's verdict as <span class="verdict-V">V</span>
 * for the four verdicts (www/style.css gives each its colour and a sign:
 * "▲ improved", "▼ regressed", "= unchanged", "? inconclusive"), "pending"
 * (class verdict-pending) before it is decided; any other value as plain
 * escaped text. */
void view_verdict_el(xmlNodePtr parent, json_t *cmp);

/* ---- markup pieces ---- */

/** <a href="base/id" title="id">first chars of id</a>, or "—" as text when
 * id is not an id (a replay without scenario). */
void view_id_link(xmlNodePtr parent, const char *base, const char *id);

/** The tenant's scenarios into nm->scenarios and, when sessions, its
 * sessions into nm->sessions (else NULL), each from one API call of
 * VIEW_NAMES_LIMIT items; a call that fails gives {} (the page then shows
 * ids). */
void view_names_load(struct view_ctx *ctx, struct view_names *nm, int sessions);

/** The name of id in map, or NULL. */
const char *view_name_of(json_t *map, const char *id);

/** A scenario's name linking its page (title: the id); its id prefix when
 * the name is unknown; "—" when id is not an id. */
void view_scenario_link(xmlNodePtr parent, const struct view_names *nm, const char *id);

/** <time class="time" datetime="iso" title="iso">YYYY-MM-DD HH:MM:SS</time>:
 * the API's "YYYY-MM-DDTHH:MM:SS.mmmZ" without its milliseconds; another
 * shape is shown as it is; NULL or "" as "—". */
void view_time_el(xmlNodePtr parent, const char *iso);

/** <td class="cls"> with view_time_el(iso) */
void view_cell_time(xmlNodePtr tr, const char *cls, const char *iso);

/** <td class="cls"><pre>text</pre></td> */
xmlNodePtr view_cell_pre(xmlNodePtr tr, const char *cls, const char *text);

/** A <td> holding a link to base/id. */
void view_cell_link(xmlNodePtr tr, const char *cls, const char *base, const char *id);

/** <table id="id"> (in a <div class="table-wrap"> that scrolls a wide
 * table on a narrow screen) with a header row of headers (NULL-terminated,
 * may be NULL: the caller writes it in *head); returns the <tbody> that
 * receives the rows. */
xmlNodePtr view_table_new(xmlNodePtr parent, const char *id, const char *const *headers,
                          xmlNodePtr *head);

/** A row <tr class="cls" data-id="id">. */
xmlNodePtr view_row_new(xmlNodePtr tbody, const char *cls, json_t *item);

/** <dt>term</dt><dd id="id">text</dd> in dl; returns the <dd>. */
xmlNodePtr view_dl_item(xmlNodePtr dl, const char *term, const char *id, const char *text);

/** <label>text <input type name value></label> */
void view_labelled_input(xmlNodePtr form, const char *text, const char *type, const char *name,
                         const char *value);

/** <label>text <select name="name"> with a first option "" showing
 * first_text; returns the select. */
xmlNodePtr view_select_new(xmlNodePtr form, const char *text, const char *name,
                           const char *first_text);

/** <option value="value">text</option>, selected when value is selected
 * (may be NULL); returns the option. */
xmlNodePtr view_option_add(xmlNodePtr select, const char *value, const char *text,
                           const char *selected);

/** view_select_new, then one option per word of values (selected: the current
 * one, may be NULL). */
void view_labelled_select(xmlNodePtr form, const char *text, const char *name,
                          const char *first_text, const char *const *values, const char *selected);

/** <button type="submit">text</button> in form. */
void view_submit_button(xmlNodePtr form, const char *text);

/* ---- API calls ---- */

/** GET path?query as the principal; on an API error the error page is
 * replied and -1 returned (the page then returns 0). */
int view_api_get(struct view_ctx *ctx, const char *path, const char *query, json_t **reply);

/** GET /v1/m/sandbox/<collection>/<id><suffix>; an id that is not well formed
 * names nothing: 404 page, as the API says for such a path. */
int view_api_get_item(struct view_ctx *ctx, const char *collection, const char *id,
                      const char *suffix, json_t **reply);

#endif
