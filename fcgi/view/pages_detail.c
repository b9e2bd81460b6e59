/*
 * The detail pages of a run and of a comparison (view_internal.h): GET
 * /admin/runs/{id} (attestation, counters, score, divergence, each step,
 * the agent's log)
 * and GET /admin/comparisons/{id} (both runs side by side, step by step).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "fcgi/view/pages.h"
#include "model/runlog.h"
#include "model/text.h"
#include "sql/store.h"

/* ---- run detail --------------------------------------------------------------------- */

static void run_summary(xmlNodePtr main, json_t *run, const struct view_names *nm)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "run-summary");
	json_t *agent;
	char text[1024];

	view_dl_item(dl, "Status", "run-status", view_jstr(run, "status", ""));
	view_dl_item(dl, "Kind", "run-kind", view_jstr(run, "kind", ""));
	view_dl_item(dl, "Backend", "run-backend", view_jstr(run, "backend", ""));
	view_dl_item(dl, "Runner", "run-runner", view_jstr(run, "runner", VIEW_NONE_TEXT));
	view_dl_item(dl, "Isolated", "run-isolated", view_jbool(run, "isolated"));
	view_dl_item(dl, "Destroyed", "run-destroyed", view_jbool(run, "destroyed"));
	/* whether anything it got came from outside its mocks */
	view_dl_item(dl, "Hermetic", "run-hermetic", view_jbool(run, "hermetic"));
	if (json_is_integer(json_object_get(run, "egress_requests")))
		snprintf(text, sizeof(text), "%lld", view_jint(run, "egress_requests"));
	else
		snprintf(text, sizeof(text), "unknown (the run ended without its count)");
	view_dl_item(dl, "Egress requests", "run-egress", text);
	view_progress_text(run, text, sizeof(text));
	view_dl_item(dl, "Progress", "run-progress", text);
	view_counters_text(run, text, sizeof(text));
	view_dl_item(dl, "Steps", "run-counters", text);
	view_dl_item(dl, "Suite", "run-suite", view_jstr(run, "suite", VIEW_NONE_TEXT));
	view_score_text(run, 1, text, sizeof(text));
	view_dl_item(dl, "Score", "run-score", text);
	view_dl_item(dl, "Reason", "run-reason", view_jstr(run, "reason", VIEW_NONE_TEXT));
	/* the agent killed after every step completed: said, never hidden */
	view_dl_item(dl, "Agent shutdown", "run-shutdown",
	             view_jstr(run, "shutdown", VIEW_NONE_TEXT));
	view_dl_item(dl, "Variant", "run-variant", view_jstr(run, "variant", VIEW_NONE_TEXT));
	/* which program ran, so that a variant that names none (the built-in
	 * agent) is seen as such */
	agent = json_object_get(run, "agent");
	view_dl_item(dl, "Agent", "run-agent", view_jstr(agent, "name", VIEW_NONE_TEXT));
	html_elc(view_dl_item(dl, "Agent SHA-256", "run-agent-sha256", NULL), "code", NULL,
	         view_jstr(agent, "sha256", VIEW_NONE_TEXT));
	view_scenario_link(view_dl_item(dl, "Scenario", "run-scenario", NULL), nm,
	                   view_jstr(run, "scenario_id", NULL));
	if (strcmp(view_jstr(run, "kind", ""), "replay") == 0 || view_jstr(run, "session_id", NULL))
		view_dl_item(dl, "Session", "run-session",
		             view_jstr(run, "session_id", VIEW_NONE_TEXT));
	/* a run started to be recorded: the session it made, or why none */
	if (json_is_true(json_object_get(run, "record"))) {
		if (view_jstr(run, "record_error", NULL))
			snprintf(text, sizeof(text), "no session: %s",
			         view_jstr(run, "record_error", ""));
		else if (view_jstr(run, "session_id", NULL))
			snprintf(text, sizeof(text), "as session %s",
			         view_jstr(run, "session_id", ""));
		else
			snprintf(text, sizeof(text), "when it completes");
		view_dl_item(dl, "Recorded", "run-record", text);
	}
	html_elc(view_dl_item(dl, "Output digest", "run-digest", NULL), "code", NULL,
	         view_jstr(run, "output_digest", ""));
	view_dl_item(dl, "Executor", "run-executor", view_jstr(run, "executor", VIEW_NONE_TEXT));
	view_time_el(view_dl_item(dl, "Queued", "run-queued", NULL),
	             view_jstr(run, "queued_at", NULL));
	if (view_jstr(run, "started_at", NULL))
		view_time_el(view_dl_item(dl, "Started", "run-started", NULL),
		             view_jstr(run, "started_at", NULL));
	else
		view_dl_item(dl, "Started", "run-started", "not started");
	view_time_el(view_dl_item(dl, "Finished", "run-finished", NULL),
	             view_jstr(run, "finished_at", NULL));
	/* asked for, not yet done: the executor ends it at its next heartbeat */
	if (view_run_live(run) && json_is_true(json_object_get(run, "cancel_requested")))
		view_dl_item(dl, "Cancel", "run-cancel-requested",
		             "requested; the run stops within a second or two");
}

/* The cancel form of a run that has not ended, for those who may cancel
 * (editor and admin; a viewer is shown no form it could not submit). */
static void cancel_form(struct view_ctx *ctx, xmlNodePtr main, json_t *run, const char *id)
{
	char action[128];
	xmlNodePtr form;

	if (!view_run_live(run) || ctx->req->who.role < STORE_ROLE_EDITOR)
		return;
	snprintf(action, sizeof(action), "/admin/runs/%s/cancel", id);
	form = view_post_form(ctx, main, "cancel-form", action);
	view_submit_button(form, "Cancel run");
}

/* A replay's divergence from its recorded session: the steps whose
 * output differs from the recorded one (the run's "divergence"). */
static void run_divergence(xmlNodePtr main, json_t *div)
{
	xmlNodePtr sec, dl;
	json_t *first;
	char text[32];

	if (!json_is_object(div))
		return;
	sec = html_attr(html_el(main, "section", NULL), "id", "divergence");
	html_el(sec, "h2", "Divergence");
	html_elf(sec, "p", "%lld of %lld compared steps diverge", view_jint(div, "diverging"),
	         view_jint(div, "compared"));
	first = json_object_get(div, "first");
	if (!json_is_object(first))
		return;
	dl = html_el(sec, "dl", NULL);
	snprintf(text, sizeof(text), "%lld", view_jint(first, "seq"));
	view_dl_item(dl, "First at step", "divergence-seq", text);
	view_dl_item(dl, "Key", "divergence-key", view_jstr(first, "key", ""));
	html_el(view_dl_item(dl, "Recorded", "divergence-recorded", NULL), "pre",
	        view_jstr(first, "recorded", ""));
	html_el(view_dl_item(dl, "Replayed", "divergence-replayed", NULL), "pre",
	        view_jstr(first, "replayed", ""));
}

static int is_mock_miss(json_t *out)
{
	return strcmp(view_jstr(out, "error_kind", ""), "mock_miss") == 0 ||
	       strncmp(view_jstr(out, "output", ""), "[[mock-miss:", 12) == 0;
}

static void output_row(xmlNodePtr tbody, json_t *out)
{
	int miss = is_mock_miss(out);
	xmlNodePtr tr = html_elc(tbody, "tr", miss ? "output mock-miss" : "output", NULL);
	xmlNodePtr status;
	const char *kind = view_jstr(out, "error_kind", NULL);
	json_t *dur;
	char seq[24], ms[48];

	snprintf(seq, sizeof(seq), "%lld", view_jint(out, "seq"));
	html_attr(tr, "data-seq", seq);
	html_elc(tr, "td", "seq", seq);
	html_elc(tr, "td", "key", view_jstr(out, "key", ""));
	view_cell_pre(tr, "input", view_jstr(out, "input", ""));
	view_cell_pre(tr, "output", view_jstr(out, "output", ""));
	status = html_elc(tr, "td", "step-status", view_jstr(out, "status", ""));
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
		snprintf(ms, sizeof(ms), "%s", VIEW_NONE_TEXT);
	html_elc(tr, "td", "duration", ms);
}

/* One request of a step's trace (model/mock.h) as a list item: what was
 * asked, what answered it, and for a miss its near miss. Every text goes
 * through libxml2, which escapes it. */
static void trace_item(xmlNodePtr ol, json_t *e)
{
	json_t *near = json_object_get(e, "near_miss");
	json_t *args = json_object_get(e, "args");
	int hit = json_is_true(json_object_get(e, "hit"));
	/* forwarded to an allowed host: answered from outside, not a miss */
	int egress = json_is_object(json_object_get(e, "egress"));
	xmlNodePtr li = html_elc(ol, "li",
	                         hit      ? "trace-hit"
	                         : egress ? "trace-forwarded"
	                                  : "trace-miss",
	                         NULL);
	xmlNodePtr nm;
	char *text;

	if (json_is_string(json_object_get(e, "tool"))) {
		html_text(li, "tool ");
		html_elc(li, "code", "trace-tool", view_jstr(e, "tool", ""));
		text =
		    json_is_object(args) ? json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		html_text(li, " ");
		html_elc(li, "code", "trace-args", text ? text : "null");
		free(text);
	} else if (json_is_object(json_object_get(e, "http"))) {
		/* a request through the run's gateway (docs/gateway.md) */
		html_text(li, json_is_true(json_object_get(e, "llm")) ? "chat " : "http ");
		html_elc(li, "code", "trace-http",
		         view_jstr(json_object_get(e, "http"), "method", ""));
		html_text(li, " ");
		html_elc(li, "code", "trace-url", view_jstr(json_object_get(e, "http"), "url", ""));
		if (json_is_integer(json_object_get(e, "status")))
			html_elf(li, "span", " status %lld", view_jint(e, "status"));
		if (egress)
			html_elc(li, "span", "trace-egress", " forwarded outside (egress)");
		if (json_is_string(json_object_get(e, "refused")))
			html_elf(li, "span", " refused: %s", view_jstr(e, "refused", ""));
	} else {
		html_text(li, "resource ");
		html_elc(li, "code", "trace-resource", view_jstr(e, "resource", ""));
	}
	if (hit)
		html_elf(li, "span", " hit mocks[%lld]%s, %lld us", view_jint(e, "mock"),
		         json_is_true(json_object_get(e, "error")) ? " (tool error)" : "",
		         view_jint(e, "duration_us"));
	else if (egress)
		html_elf(li, "span", ", %lld us", view_jint(e, "duration_us"));
	else
		html_elf(li, "span", " miss, %lld us", view_jint(e, "duration_us"));
	if (!json_is_object(near))
		return;
	nm = html_elc(li, "div", "near-miss", NULL);
	html_elf(nm, "span", "nearest mocks[%lld] ", view_jint(near, "mock"));
	html_elc(nm, "code", "near-miss-mock",
	         view_jstr(near, "resource", view_jstr(near, "tool", view_jstr(near, "url", ""))));
	if (json_is_string(json_object_get(near, "path")))
		html_elf(nm, "span", ": %s at %s", view_jstr(near, "why", ""),
		         view_jstr(near, "path", ""));
	else
		html_elf(nm, "span", ": %s at byte %lld (request has %s, mock has %s)",
		         view_jstr(near, "why", ""), view_jint(near, "offset"),
		         view_jstr(near, "request_has", ""), view_jstr(near, "mock_has", ""));
}

/* The step's trace, in a row of its own under the step's. */
static void trace_row(xmlNodePtr tbody, json_t *out)
{
	json_t *trace = json_object_get(out, "trace");
	xmlNodePtr td, ol;
	json_t *e;
	size_t i;

	if (!json_is_array(trace) || json_array_size(trace) == 0)
		return;
	td = html_el(html_elc(tbody, "tr", "trace", NULL), "td", NULL);
	html_attr(td, "colspan", "6");
	ol = html_elc(td, "ol", "trace", NULL);
	json_array_foreach(trace, i, e)
	{
		trace_item(ol, e);
	}
}

static void outputs_table(xmlNodePtr main, json_t *outputs, int live)
{
	static const char *const headers[] = {"#",      "Key",       "Input", "Output",
	                                      "Status", "Time (ms)", NULL};
	xmlNodePtr tbody;
	json_t *out;
	size_t i;

	html_el(main, "h2", "Steps");
	tbody = view_table_new(main, "outputs", headers, NULL);
	json_array_foreach(outputs, i, out)
	{
		output_row(tbody, out);
		trace_row(tbody, out);
	}
	if (json_array_size(outputs) == 0)
		html_elc(main, "p", "none",
		         live ? "No step has ended yet." : "No step was executed.");
}

/* Each expectation's result, as the scorer recorded it (score_details:
 * one {"seq","key","passed","check","message"} per evaluated expectation),
 * so that a reviewer sees which held and why one did not; nothing for a
 * run that was not scored. */
static void expectations_table(xmlNodePtr main, json_t *run)
{
	static const char *const headers[] = {"Step", "Check", "Passed", "Message", NULL};
	json_t *details = json_object_get(run, "score_details");
	xmlNodePtr sec, tbody, tr;
	const char *key;
	json_t *d, *seq;
	char step[200];
	int held;
	size_t i;

	if (!json_is_array(details))
		return;
	sec = html_attr(html_el(main, "section", NULL), "id", "expectations-section");
	html_el(sec, "h2", "Expectations");
	if (json_array_size(details) == 0) {
		html_elc(sec, "p", "none", "The scorer gave no detail per expectation.");
		return;
	}
	tbody = view_table_new(sec, "expectations", headers, NULL);
	json_array_foreach(details, i, d)
	{
		held = json_is_true(json_object_get(d, "passed"));
		tr = html_elc(tbody, "tr", held ? "expectation held" : "expectation failed", NULL);
		key = view_jstr(d, "key", NULL);
		seq = json_object_get(d, "seq");
		/* the step as the run names it: "2 step-2", or the one it has */
		if (json_is_integer(seq) && key)
			snprintf(step, sizeof(step), "%" JSON_INTEGER_FORMAT " %.180s",
			         json_integer_value(seq), key);
		else if (json_is_integer(seq))
			snprintf(step, sizeof(step), "%" JSON_INTEGER_FORMAT,
			         json_integer_value(seq));
		else
			snprintf(step, sizeof(step), "%.180s", key ? key : VIEW_NONE_TEXT);
		html_elc(tr, "td", "step", step);
		html_elc(tr, "td", "check", view_jstr(d, "check", VIEW_NONE_TEXT));
		html_elc(tr, "td", held ? "passed ok" : "passed off", held ? "yes" : "no");
		view_cell_pre(tr, "message", view_jstr(d, "message", VIEW_NONE_TEXT));
	}
}

/* The agent's log (runs/{id}/log as the API serves it: the stored text
 * and the truncation mark) in <pre id="run-log">: a text node, so the
 * agent's markup is escaped, and the text was cleaned of control
 * characters and invalid UTF-8 when it was kept (model/runlog.h). */
static void run_log(struct view_ctx *ctx, xmlNodePtr main, const char *id, int live)
{
	json_t *log = NULL, *text;
	struct model_buf shown;
	xmlNodePtr sec;
	size_t len;

	sec = html_attr(html_el(main, "section", NULL), "id", "log");
	html_el(sec, "h2", "Agent log");
	if (store_run_log(ctx->req->store, ctx->req->who.tenant_id, id, &log) != STORE_OK) {
		html_elc(sec, "p", "none", "The log cannot be read now.");
		return;
	}
	text = json_object_get(log, "text");
	len = json_string_length(text);
	model_buf_init(&shown, len + MODEL_RUN_LOG_MARK_BYTES + 2);
	model_buf_must_fit(
	    model_runlog_shown(&shown, json_string_value(text), len,
	                       (long long)json_integer_value(json_object_get(log, "dropped"))));
	if (shown.len == 0)
		html_elc(sec, "p", "none",
		         live ? "The log is kept when the run ends." : "The agent logged nothing.");
	html_attr(html_el(sec, "pre", shown.data), "id", "run-log");
	model_buf_release(&shown);
	json_decref(log);
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
	return view_jstr(reply, field, NULL);
}

/*
 * The heading of the page of a run or comparison (what: "Run",
 * "Comparison") of scenario_id, into out: "WHAT of NAME"; the name asked
 * of the API when it is not in nm (beyond the first VIEW_NAMES_LIMIT). A
 * scenario that has none (deleted): "WHAT of a deleted scenario
 * (1a2b3c4d)". Without a scenario (a replay that names none): "Replay of
 * session EXTERNAL-ID" when session_id is set, else "WHAT 1a2b3c4d" of
 * own_id. Never "Run of" with nothing after it.
 */
static void page_heading(struct view_ctx *ctx, const struct view_names *nm, const char *what,
                         const char *scenario_id, const char *session_id, const char *own_id,
                         char *out, size_t n)
{
	const char *name = view_name_of(nm->scenarios, scenario_id), *ext;

	if (!name)
		name = item_field(ctx, "scenarios", scenario_id, "name");
	if (name) {
		snprintf(out, n, "%s of %s", what, name);
	} else if (scenario_id && model_id_valid(scenario_id)) {
		snprintf(out, n, "%s of a deleted scenario (%.*s)", what, VIEW_SHORT_ID_LEN,
		         scenario_id);
	} else if (session_id && model_id_valid(session_id)) {
		ext = item_field(ctx, "sessions", session_id, "external_id");
		if (ext)
			snprintf(out, n, "Replay of session %s", ext);
		else
			snprintf(out, n, "Replay of session %.*s", VIEW_SHORT_ID_LEN, session_id);
	} else {
		snprintf(out, n, "%s %.*s", what, VIEW_SHORT_ID_LEN, own_id);
	}
}

int view_page_run(struct view_ctx *ctx, const char *id, int status, const char *error)
{
	json_t *run = NULL, *outs = NULL;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;
	struct view_names nm;
	char title[VIEW_TITLE_BYTES];

	if (view_api_get_item(ctx, "runs", id, "", &run) ||
	    view_api_get_item(ctx, "runs", id, "/outputs", &outs))
		return 0;
	view_names_load(ctx, &nm, 0);
	page_heading(ctx, &nm, "Run", view_jstr(run, "scenario_id", NULL),
	             view_jstr(run, "session_id", NULL), id, title, sizeof(title));
	main = view_page_begin(ctx, title, &doc);
	/* a page of a run that has not ended follows it; an ended one is
	 * final and stays as it is */
	if (view_run_live(run))
		view_page_refresh(doc, VIEW_REFRESH_SECONDS);
	if (error)
		view_error_line(main, error);
	html_elc(main, "p", "id", id);
	run_summary(main, run, &nm);
	cancel_form(ctx, main, run, id);
	run_divergence(main, json_object_get(run, "divergence"));
	expectations_table(main, run);
	outputs_table(main, json_object_get(outs, "outputs"), view_run_live(run));
	run_log(ctx, main, id, view_run_live(run));
	return view_page_send(ctx, doc, status);
}

/* ---- comparison detail -------------------------------------------------------------- */

static int comparison_pending(json_t *cmp)
{
	return strcmp(view_jstr(cmp, "status", ""), "pending") == 0;
}

/* A side's run linked from the summary (both are there from the start). */
static void side_run_item(xmlNodePtr dl, const char *term, const char *id, json_t *side)
{
	xmlNodePtr dd = view_dl_item(dl, term, id, NULL);

	view_id_link(dd, "/admin/runs", view_jstr(side, "run_id", NULL));
	html_text(dd, " ");
	html_elc(dd, "span", "side-status", view_jstr(side, "status", ""));
}

static void comparison_summary(xmlNodePtr main, json_t *cmp, const struct view_names *nm)
{
	xmlNodePtr dl = html_attr(html_el(main, "dl", NULL), "id", "comparison-summary");
	char text[64];

	view_dl_item(dl, "Status", "comparison-status", view_jstr(cmp, "status", ""));
	/* no verdict before both runs have ended: said, not left blank */
	view_verdict_el(view_dl_item(dl, "Verdict", "verdict", NULL), cmp);
	view_delta_text(cmp, text, sizeof(text));
	view_dl_item(dl, "Delta", "delta", text);
	view_dl_item(dl, "Reason", "reason", view_jstr(cmp, "reason", VIEW_NONE_TEXT));
	/* beside the verdict, not in it (a note is not a score): each side's
	 * agent killed after its last step, as #run-shutdown on its run page */
	view_dl_item(dl, "Baseline agent shutdown", "baseline-shutdown",
	             view_jstr(json_object_get(cmp, "baseline"), "shutdown", VIEW_NONE_TEXT));
	view_dl_item(dl, "Candidate agent shutdown", "candidate-shutdown",
	             view_jstr(json_object_get(cmp, "candidate"), "shutdown", VIEW_NONE_TEXT));
	side_run_item(dl, "Baseline run", "baseline-run", json_object_get(cmp, "baseline"));
	side_run_item(dl, "Candidate run", "candidate-run", json_object_get(cmp, "candidate"));
	view_dl_item(dl, "Suite", "suite", view_jstr(cmp, "suite", ""));
	view_number_text(json_number_value(json_object_get(cmp, "tolerance")), 0, text,
	                 sizeof(text));
	view_dl_item(dl, "Tolerance", "tolerance", text);
	view_scenario_link(view_dl_item(dl, "Scenario", "comparison-scenario", NULL), nm,
	                   view_jstr(cmp, "scenario_id", NULL));
	view_dl_item(dl, "Decided by", "decided-by", view_jstr(cmp, "decided_by", VIEW_NONE_TEXT));
	view_time_el(view_dl_item(dl, "Created", "created", NULL),
	             view_jstr(cmp, "created_at", NULL));
}

/* A statistic of stats (or pass_k) as view_number_text writes it (with
 * sign: a delta), VIEW_NONE_TEXT when it is not a number. */
static void stat_text(json_t *o, const char *key, int sign, char *out, size_t n)
{
	json_t *v = json_object_get(o, key);

	if (json_is_number(v))
		view_number_text(json_number_value(v), sign, out, n);
	else
		snprintf(out, n, "%s", VIEW_NONE_TEXT);
}

/* The runs of one side, repeat by repeat, each linking its page. */
static void repeat_runs_item(xmlNodePtr dl, const char *term, const char *id, json_t *ids)
{
	xmlNodePtr ol = html_el(view_dl_item(dl, term, id, NULL), "ol", NULL), li;
	json_t *rid;
	size_t i;

	html_attr(ol, "start", "0");
	json_array_foreach(ids, i, rid)
	{
		li = html_el(ol, "li", NULL);
		view_id_link(li, "/admin/runs", json_string_value(rid));
	}
}

/*
 * How sure the verdict is (docs/scoring.md, repeats): the repeats, the
 * method, n, the mean delta, its 95% interval, the sign test's p-value,
 * repeats_needed when inconclusive, each side's pass^k, the runs per
 * repeat and the flaky steps. A single run says it has no interval.
 */
static void comparison_statistics(xmlNodePtr main, json_t *cmp)
{
	static const char *const headers[] = {"Side", "Step", "Key", NULL};
	json_t *stats = json_object_get(cmp, "stats"), *pass_k = json_object_get(cmp, "pass_k");
	json_t *runs = json_object_get(cmp, "runs"), *flaky = json_object_get(cmp, "flaky_steps");
	json_t *f;
	xmlNodePtr dl, tbody, tr;
	char text[80], lo[32], hi[32];
	size_t i;

	html_el(main, "h2", "Statistics");
	dl = html_attr(html_el(main, "dl", NULL), "id", "comparison-statistics");
	snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
	         json_is_integer(json_object_get(cmp, "repeats"))
	             ? json_integer_value(json_object_get(cmp, "repeats"))
	             : (json_int_t)1);
	view_dl_item(dl, "Repeats per side", "stats-repeats", text);
	view_dl_item(dl, "Method", "stats-method", view_jstr(stats, "method", VIEW_NONE_TEXT));
	if (json_is_integer(json_object_get(stats, "n")))
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(stats, "n")));
	else
		snprintf(text, sizeof(text), "%s", VIEW_NONE_TEXT);
	view_dl_item(dl, "Pairs (n)", "stats-n", text);
	stat_text(stats, "delta", 1, text, sizeof(text));
	view_dl_item(dl, "Mean delta", "stats-delta", text);
	if (json_is_number(json_object_get(stats, "ci_low")) &&
	    json_is_number(json_object_get(stats, "ci_high"))) {
		stat_text(stats, "ci_low", 1, lo, sizeof(lo));
		stat_text(stats, "ci_high", 1, hi, sizeof(hi));
		snprintf(text, sizeof(text), "[%s, %s]", lo, hi);
		view_dl_item(dl, "95% interval", "stats-ci", text);
	} else {
		/* one pair (or none scored) has no variance estimate: said */
		view_dl_item(dl, "95% interval", "stats-ci",
		             VIEW_NONE_TEXT " (no variance estimate)");
	}
	stat_text(stats, "p_value", 0, text, sizeof(text));
	view_dl_item(dl, "p-value (sign test)", "stats-p-value", text);
	if (json_is_integer(json_object_get(stats, "repeats_needed")))
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(stats, "repeats_needed")));
	else
		snprintf(text, sizeof(text), "%s", VIEW_NONE_TEXT);
	view_dl_item(dl, "Repeats needed", "stats-repeats-needed", text);
	if (json_is_string(json_object_get(stats, "repeats_note")))
		view_dl_item(dl, "Note", "stats-repeats-note",
		             view_jstr(stats, "repeats_note", ""));
	stat_text(pass_k, "baseline", 0, text, sizeof(text));
	view_dl_item(dl, "pass^k baseline", "pass-k-baseline", text);
	stat_text(pass_k, "candidate", 0, text, sizeof(text));
	view_dl_item(dl, "pass^k candidate", "pass-k-candidate", text);
	repeat_runs_item(dl, "Baseline runs by repeat", "baseline-runs",
	                 json_object_get(runs, "baseline"));
	repeat_runs_item(dl, "Candidate runs by repeat", "candidate-runs",
	                 json_object_get(runs, "candidate"));

	html_el(main, "h3", "Flaky steps");
	if (json_array_size(flaky) == 0) {
		html_attr(
		    html_el(main, "p", "None: every step's output was the same in every repeat."),
		    "id", "no-flaky-steps");
		return;
	}
	tbody = view_table_new(main, "flaky-steps", headers, NULL);
	json_array_foreach(flaky, i, f)
	{
		tr = html_elc(tbody, "tr", "flaky-step", NULL);
		html_elc(tr, "td", "side", view_jstr(f, "side", ""));
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(f, "seq")));
		html_elc(tr, "td", "seq", text);
		html_elc(tr, "td", "key", view_jstr(f, "key", ""));
	}
}

/* The header cell of one side: label, variant, run link, status, score. */
static void side_head(xmlNodePtr tr, const char *cls, const char *label, json_t *side)
{
	xmlNodePtr th = html_elc(tr, "th", cls, NULL);
	char text[128];

	html_el(th, "div", label);
	html_elc(th, "div", "side-variant", view_jstr(side, "variant", VIEW_NONE_TEXT));
	view_id_link(html_elc(th, "div", "side-run", NULL), "/admin/runs",
	             view_jstr(side, "run_id", NULL));
	html_elc(th, "div", "side-status", view_jstr(side, "status", ""));
	view_score_text(side, 0, text, sizeof(text));
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
	xmlNodePtr td = view_cell_pre(tr, cls, out ? view_jstr(out, "output", "") : VIEW_NONE_TEXT);

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
	key = html_elc(tr, "td", "key", view_jstr(any, "key", ""));
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
	tbody = view_table_new(main, "side-by-side", NULL, &tr);
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

/* The decisions on a settled comparison: the one that counts (the
 * newest) in words and in its colour, the history oldest first, and for
 * an admin the form that appends one (POST /admin/comparisons/{id}/approval). */
static void approval_section(struct view_ctx *ctx, xmlNodePtr main, json_t *cmp, const char *id)
{
	static const char *const heads[] = {"Decided", "Decision", "Reason", "By", NULL};
	static const char *const decisions[] = {"approved", "rejected", NULL};
	json_t *now = json_object_get(cmp, "approval"), *hist = json_object_get(cmp, "approvals"),
	       *a;
	xmlNodePtr sec, p, tbody, tr, form;
	const char *decision;
	char action[128], cls[48];
	size_t i;

	sec = html_attr(html_el(main, "section", NULL), "id", "approval");
	html_el(sec, "h2", "Approval");
	p = html_attr(html_el(sec, "p", NULL), "id", "approval-decision");
	if (!json_is_object(now)) {
		html_text(p, comparison_pending(cmp) ? "not decided (the comparison is pending)"
		                                     : "not decided");
	} else {
		decision = view_jstr(now, "decision", "");
		snprintf(cls, sizeof(cls), "approval-%s", decision);
		html_elc(p, "span", cls, decision);
		html_text(p, " by ");
		html_text(p, view_jstr(now, "decided_by", VIEW_NONE_TEXT));
		html_text(p, " at ");
		view_time_el(p, view_jstr(now, "created_at", NULL));
	}
	if (json_array_size(hist)) {
		tbody = view_table_new(sec, "approvals", heads, NULL);
		json_array_foreach(hist, i, a)
		{
			tr = view_row_new(tbody, "approval", a);
			view_cell_time(tr, "decided", view_jstr(a, "created_at", NULL));
			html_elc(tr, "td", "decision", view_jstr(a, "decision", ""));
			view_cell_pre(tr, "reason", view_jstr(a, "reason", ""));
			html_elc(tr, "td", "decided-by", view_jstr(a, "decided_by", ""));
		}
	}
	if (comparison_pending(cmp) || ctx->req->who.role < STORE_ROLE_ADMIN)
		return;
	snprintf(action, sizeof(action), "/admin/comparisons/%s/approval", id);
	form = view_post_form(ctx, sec, "approval-form", action);
	view_labelled_select(form, "Decision", "decision", "choose", decisions, NULL);
	view_labelled_input(form, "Reason", "text", "reason", NULL);
	view_submit_button(form, "Record decision");
}

/* The outputs array of a comparison side's run (or an error page). */
static int side_outputs(struct view_ctx *ctx, json_t *cmp, const char *side, json_t **outputs)
{
	json_t *reply = NULL;

	if (view_api_get_item(ctx, "runs", view_jstr(json_object_get(cmp, side), "run_id", NULL),
	                      "/outputs", &reply))
		return -1;
	*outputs = json_object_get(reply, "outputs");
	return 0;
}

int view_page_comparison(struct view_ctx *ctx, const char *id)
{
	json_t *cmp = NULL, *base = NULL, *cand = NULL;
	htmlDocPtr doc = NULL;
	xmlNodePtr main;
	struct view_names nm;
	char title[VIEW_TITLE_BYTES];

	if (view_api_get_item(ctx, "comparisons", id, "", &cmp) ||
	    side_outputs(ctx, cmp, "baseline", &base) || side_outputs(ctx, cmp, "candidate", &cand))
		return 0;
	view_names_load(ctx, &nm, 0);
	page_heading(ctx, &nm, "Comparison", view_jstr(cmp, "scenario_id", NULL), NULL, id, title,
	             sizeof(title));
	main = view_page_begin(ctx, title, &doc);
	if (comparison_pending(cmp))
		view_page_refresh(doc, VIEW_REFRESH_SECONDS);
	html_elc(main, "p", "id", id);
	comparison_summary(main, cmp, &nm);
	comparison_statistics(main, cmp);
	approval_section(ctx, main, cmp, id);
	side_by_side(main, cmp, base, cand);
	return view_page_send(ctx, doc, 200);
}
