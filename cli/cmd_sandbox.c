/*
 * olivares sandbox …: generate, scenarios create|list|get|delete|run,
 * suites create|get|list|update,
 * runs list|get|outputs|junit|log, agents list, backends, compare, comparisons,
 * gate,
 * sessions, replay (the /v1/m/sandbox routes, docs/api.md; compare,
 * comparisons, gate and runs junit live in cli/cmd_compare.c, sessions and
 * replay in cli/cmd_replay.c).
 *
 * Every command builds a path (ids percent-encoded: they are opaque tokens
 * and the server is the one that says "not found") and maybe a body, makes
 * one call, and prints the answer as JSON or as a table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/limits.h"
#include "model/runlog.h"
#include "model/suite.h"

/* ---- table printers ------------------------------------------------------ */

static char *sample_input(const json_t *item)
{
	return cli_render(json_object_get(item, "input"));
}

static void print_samples(const json_t *samples)
{
	size_t i;
	const json_t *item;
	char *line;

	json_array_foreach((json_t *)samples, i, item)
	{
		line = sample_input(item);
		puts(line);
		free(line);
	}
}

static const struct cli_column step_columns[] = {
    {"KEY", "key", NULL},
    {"INPUT", "input", NULL},
    {NULL, NULL, NULL},
};

/* a mock without delay_ms answers at once: 0, not "-" (which says unknown) */
static char *delay_cell(const json_t *item)
{
	const json_t *d = json_object_get(item, "delay_ms");

	return d ? cli_render(d) : model_xstrdup("0");
}

/* cell escaped for the table (a tool's name or an error message may hold
 * a newline), cell freed */
static char *escaped(char *cell)
{
	char *esc = cli_escape(cell, strlen(cell));

	free(cell);
	return esc;
}

/* What a mock answers to: a resource mock's resource; a tool mock's
 * "tool NAME ARGS (MATCH)", its args as compact JSON, keys sorted */
static char *request_cell(const json_t *item)
{
	const json_t *tool = json_object_get(item, "tool");
	const json_t *match = json_object_get(item, "match");
	char *args, *cell;
	size_t n;

	if (json_is_object(json_object_get(item, "http"))) {
		/* an http mock: "http METHOD URL" */
		n = json_string_length(json_object_get(json_object_get(item, "http"), "url")) + 48;
		cell = model_xmalloc(n);
		snprintf(
		    cell, n, "http %s %s",
		    json_string_value(json_object_get(json_object_get(item, "http"), "method")),
		    json_string_value(json_object_get(json_object_get(item, "http"), "url")));
		return escaped(cell);
	}
	if (json_is_object(json_object_get(item, "llm"))) {
		/* a chat mock: "chat CONDITION", its condition as compact JSON */
		args = json_dumps(json_object_get(item, "llm"), JSON_COMPACT | JSON_SORT_KEYS);
		n = (args ? strlen(args) : 2) + 8;
		cell = model_xmalloc(n);
		snprintf(cell, n, "chat %s", args ? args : "{}");
		free(args);
		return escaped(cell);
	}
	if (!json_is_string(tool))
		return cli_render(json_object_get(item, "resource"));
	args = json_dumps(json_object_get(item, "args"), JSON_COMPACT | JSON_SORT_KEYS);
	n = json_string_length(tool) + (args ? strlen(args) : 2) + 32;
	cell = model_xmalloc(n);
	snprintf(cell, n, "tool %s %s (%s)", json_string_value(tool), args ? args : "{}",
	         json_is_string(match) ? json_string_value(match) : "exact");
	free(args);
	return escaped(cell);
}

/* A tool mock's answer: its response as compact JSON, "sequence of N: […]"
 * or "error: MESSAGE"; a resource mock's response as is. */
static char *response_cell(const json_t *item)
{
	const json_t *seq = json_object_get(item, "sequence");
	const json_t *err = json_object_get(item, "error");
	char *text, *cell;
	size_t n;

	if (!json_is_string(json_object_get(item, "tool")) && !json_object_get(item, "http") &&
	    !json_object_get(item, "llm"))
		return cli_render(json_object_get(item, "response"));
	if (json_is_string(err)) {
		n = json_string_length(err) + 8;
		cell = model_xmalloc(n);
		snprintf(cell, n, "error: %s", json_string_value(err));
		return escaped(cell);
	}
	text = json_dumps(seq ? seq : json_object_get(item, "response"),
	                  JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!seq)
		return escaped(text ? text : model_xstrdup("null"));
	n = (text ? strlen(text) : 0) + 32;
	cell = model_xmalloc(n);
	snprintf(cell, n, "sequence of %zu: %s", json_array_size(seq), text ? text : "");
	free(text);
	return escaped(cell);
}

static const struct cli_column mock_columns[] = {
    {"RESOURCE", "resource", request_cell},
    {"VARIANT", "variant", NULL},
    {"DELAY_MS", "delay_ms", delay_cell},
    {"RESPONSE", "response", response_cell},
    {NULL, NULL, NULL},
};

static void print_scenario(const json_t *s)
{
	static const char *const skip[] = {"steps", "mocks", NULL};

	cli_print_fields(s, skip);
	printf("\nsteps (%zu):\n", json_array_size(json_object_get(s, "steps")));
	cli_print_table(json_object_get(s, "steps"), step_columns);
	printf("\nmocks (%zu):\n", json_array_size(json_object_get(s, "mocks")));
	cli_print_table(json_object_get(s, "mocks"), mock_columns);
}

static const struct cli_column scenario_columns[] = {
    {"ID", "id", NULL},
    {"NAME", "name", NULL},
    {"SUBJECT", "subject_kind", NULL},
    {"VERSION", "version", NULL},
    {"STEPS", "steps_count", NULL},
    {"MOCKS", "mocks_count", NULL},
    {"UPDATED_AT", "updated_at", NULL},
    {NULL, NULL, NULL},
};

static void print_scenario_list(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "scenarios"), scenario_columns);
}

static void print_fields(const json_t *resp)
{
	cli_print_fields(resp, NULL);
}

static const struct cli_column run_columns[] = {
    {"ID", "id", NULL},
    {"STATUS", "status", NULL},
    {"SCENARIO", "scenario_id", NULL},
    {"VARIANT", "variant", NULL},
    {"BACKEND", "backend", NULL},
    {"ISOLATED", "isolated", NULL},
    {"HERMETIC", "hermetic", NULL},
    {"TOTAL", "steps_total", NULL},
    {"OK", "steps_ok", NULL},
    {"ERRORS", "steps_error", NULL},
    {"STARTED_AT", "started_at", NULL},
    {"KIND", "kind", NULL},
    {NULL, NULL, NULL},
};

static void print_run_list(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "runs"), run_columns);
}

/* "ok", or "error" followed by the error kind: "error (mock_miss)" */
static char *output_status(const json_t *item)
{
	const json_t *kind = json_object_get(item, "error_kind");
	struct model_buf b;
	char *status, *k;

	status = cli_render(json_object_get(item, "status"));
	if (!json_is_string(kind))
		return status;
	k = cli_render(kind);
	model_buf_init(&b, strlen(status) + strlen(k) + 4);
	model_buf_must_fit(model_buf_printf(&b, "%s (%s)", status, k));
	free(status);
	free(k);
	status = model_buf_detach(&b, NULL);
	model_buf_release(&b);
	return status;
}

/* DURATION_MS: the step's wall time in ms to the microsecond, always three
 * decimals ("0.260", as the admin view and JUnit write it, not jansson's
 * shortest "0.26"); "-" when unknown (older runs); a number too long for
 * that (over 1e28, from a server that does not bound it) in its shortest
 * form ("1e30"), never an empty cell */
static char *output_duration(const json_t *item)
{
	const json_t *d = json_object_get(item, "duration_ms");
	struct model_buf b;
	char *s;

	if (!json_is_number(d))
		return cli_render(d);
	model_buf_init(&b, 32);
	if (model_buf_printf(&b, "%.3f", json_number_value(d)) != 0) {
		model_buf_release(&b);
		return cli_render(d);
	}
	s = model_buf_detach(&b, NULL);
	model_buf_release(&b);
	return s;
}

static const struct cli_column output_columns[] = {
    {"SEQ", "seq", NULL},
    {"KEY", "key", NULL},
    {"STATUS", NULL, output_status},
    {"DURATION_MS", NULL, output_duration},
    {"OUTPUT", "output", NULL},
    {NULL, NULL, NULL},
};

static void print_outputs(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "outputs"), output_columns);
}

/* ---- generate ------------------------------------------------------------ */

static int cmd_generate(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *seed_file = cli_arg(a, "seed-file");
	const char *count = cli_arg(a, "count");
	struct model_buf seed;
	json_t *body, *resp = NULL, *samples;
	long long n;
	int have_seed = 0;
	int rc = CLI_EXIT_USAGE;

	body = json_object();
	/* only the flags given: the server applies the page's defaults */
	if (cli_body_set_string(ctx, body, "subject_kind", a, "subject"))
		goto out;
	if (count) {
		if (cli_parse_int(ctx, "count", count, &n))
			goto out;
		json_object_set_new(body, "count", json_integer(n));
	}
	rc = CLI_EXIT_FAIL;
	if (seed_file) {
		if (cli_read_text_file(seed_file, &seed))
			goto out;
		have_seed = 1;
		/* the bytes as read, a final newline included */
		json_object_set_new(body, "seed", json_stringn(seed.data, seed.len));
	}
	if (cli_http_call(ctx, "POST", "/v1/m/sandbox/synthetic-data", body, &resp))
		goto out;
	samples = json_object_get(resp, "samples");
	if (!json_is_array(samples)) {
		cli_fail("unexpected response: no \"samples\" array");
		goto out;
	}
	/* -o json: exactly the samples array, which --steps-file accepts */
	if (ctx->format == CLI_FORMAT_JSON)
		cli_print_json(samples);
	else
		print_samples(samples);
	rc = CLI_EXIT_OK;
out:
	json_decref(resp);
	json_decref(body);
	if (have_seed)
		model_buf_release(&seed);
	return rc;
}

/* ---- suites -------------------------------------------------------------- */

static void print_suite(const json_t *s)
{
	static const char *const skip[] = {"document", NULL};
	const json_t *doc = json_object_get(s, "document");
	const json_t *th = json_object_get(doc, "threshold");
	json_t *shown = json_copy((json_t *)s);

	/* the document's shape in two lines; '-o json' has all of it */
	json_object_set_new(shown, "threshold", json_real(th ? json_number_value(th) : 1.0));
	json_object_set_new(
	    shown, "expectations",
	    json_integer((json_int_t)json_array_size(json_object_get(doc, "expectations"))));
	cli_print_fields(shown, skip);
	json_decref(shown);
}

static const struct cli_column suite_columns[] = {
    {"NAME", "name", NULL},
    {"VERSION", "version", NULL},
    {"CREATED_AT", "created_at", NULL},
    {NULL, NULL, NULL},
};

static void print_suite_list(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "suites"), suite_columns);
}

static int cmd_suites_create(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *body;

	if (cli_load_object(a->pos, &body))
		return CLI_EXIT_FAIL;
	return cli_call_print(ctx, "POST", "/v1/m/sandbox/suites", body, print_suite, NULL);
}

/*
 * method on /v1/m/sandbox/suites/REF: ref is a suite name, or with
 * with_version also "name@N". Checked here (a usage error) because it
 * goes into the path as it is: its characters need no escaping. Takes
 * body.
 */
static int suite_call(struct cli_ctx *ctx, const char *method, const char *ref, int with_version,
                      json_t *body)
{
	char name[MODEL_MAX_SUITE_NAME_BYTES + 1];
	struct model_buf path;
	int version, rc;

	if (model_suite_ref_parse(ref, name, sizeof name, &version) || (version && !with_version)) {
		json_decref(body);
		return cli_usage_error(ctx,
		                       with_version ? "'%s' is not a suite name or NAME@VERSION"
		                                    : "'%s' is not a suite name",
		                       ref);
	}
	model_buf_init(&path, CLI_PATH_MAX_BYTES);
	/* a constant prefix and at most 128 + 11 bytes: far below the cap */
	model_buf_must_fit(model_buf_printf(&path, "/v1/m/sandbox/suites/%s", ref));
	rc = cli_call_print(ctx, method, path.data, body, print_suite, NULL);
	model_buf_release(&path);
	return rc;
}

static int cmd_suites_update(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *body;

	if (cli_load_object(a->pos2, &body))
		return CLI_EXIT_FAIL;
	return suite_call(ctx, "PUT", a->pos, 0, body);
}

static int cmd_suites_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	return suite_call(ctx, "GET", a->pos, 1, NULL);
}

static int cmd_suites_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_list(ctx, a, "/v1/m/sandbox/suites", NULL, print_suite_list);
}

/* ---- scenarios ----------------------------------------------------------- */

/* The scenario fields given on the command line into body: --name,
 * --description, --subject, and the files of --steps-file and --mocks-file
 * (read and checked here). CLI_EXIT_OK, or the exit status of the error
 * printed. */
static int scenario_fields(struct cli_ctx *ctx, const struct cli_args *a, json_t *body)
{
	const char *steps_file = cli_arg(a, "steps-file");
	const char *mocks_file = cli_arg(a, "mocks-file");
	json_t *list = NULL;

	if (steps_file && mocks_file && strcmp(steps_file, "-") == 0 &&
	    strcmp(mocks_file, "-") == 0)
		return cli_usage_error(ctx, "--steps-file and --mocks-file cannot both read stdin");
	if (cli_body_set_string(ctx, body, "name", a, "name") ||
	    cli_body_set_string(ctx, body, "description", a, "description") ||
	    cli_body_set_string(ctx, body, "subject_kind", a, "subject"))
		return CLI_EXIT_USAGE;
	if (steps_file) {
		if (cli_load_steps(steps_file, &list))
			return CLI_EXIT_FAIL;
		json_object_set_new(body, "steps", list);
	}
	if (mocks_file) {
		if (cli_load_mocks(mocks_file, &list))
			return CLI_EXIT_FAIL;
		json_object_set_new(body, "mocks", list);
	}
	return CLI_EXIT_OK;
}

static int cmd_scenarios_create(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *body;
	int rc;

	if (!cli_arg(a, "name"))
		return cli_usage_error(ctx, "--name is required");
	if (!cli_arg(a, "steps-file"))
		return cli_usage_error(ctx, "--steps-file is required");
	if (cli_idempotency_key_opt(ctx, a))
		return CLI_EXIT_USAGE;
	body = json_object();
	rc = scenario_fields(ctx, a, body);
	if (rc) {
		json_decref(body);
		return rc;
	}
	return cli_call_print(ctx, "POST", "/v1/m/sandbox/scenarios", body, print_scenario, NULL);
}

static int cmd_scenarios_update(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *body;
	int rc;

	body = json_object();
	rc = scenario_fields(ctx, a, body);
	if (!rc && json_object_size(body) == 0)
		rc = cli_usage_error(ctx,
		                     "nothing to change: give --name, --description, --subject, "
		                     "--steps-file or --mocks-file");
	if (rc) {
		json_decref(body);
		return rc;
	}
	return cli_call_print_id(ctx, "PUT", "/v1/m/sandbox/scenarios/", a->pos, "", body,
	                         print_scenario, NULL);
}

static int cmd_scenarios_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_list(ctx, a, "/v1/m/sandbox/scenarios", NULL, print_scenario_list);
}

static int cmd_scenarios_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "GET", "/v1/m/sandbox/scenarios/", a->pos, "", NULL,
	                         print_scenario, NULL);
}

static int cmd_scenarios_delete(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "DELETE", "/v1/m/sandbox/scenarios/", a->pos, "", NULL,
	                         print_fields, NULL);
}

static int cmd_scenarios_run(struct cli_ctx *ctx, const struct cli_args *a)
{
	struct model_buf path;
	json_t *body;
	int rc;

	if (cli_idempotency_key_opt(ctx, a))
		return CLI_EXIT_USAGE;
	body = json_object();
	if (cli_body_set_string(ctx, body, "variant", a, "variant") ||
	    cli_body_set_string(ctx, body, "backend", a, "backend") ||
	    cli_body_set_string(ctx, body, "suite", a, "suite")) {
		json_decref(body);
		return CLI_EXIT_USAGE;
	}
	if (cli_arg(a, "record"))
		json_object_set_new(body, "record", json_true());
	cli_path_id(&path, "/v1/m/sandbox/scenarios/", a->pos, "/runs");
	rc = cli_create_and_wait(ctx, !cli_arg(a, "no-wait"), CLI_JOB_RUN, path.data, body,
	                         print_fields, print_fields, cli_note_run_outcome);
	model_buf_release(&path);
	return rc;
}

/* ---- runs ---------------------------------------------------------------- */

static int cmd_runs_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	static const char *const filters[] = {"scenario", "status", "kind", "session", NULL};

	return cli_call_list(ctx, a, "/v1/m/sandbox/runs", filters, print_run_list);
}

static int cmd_runs_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "GET", "/v1/m/sandbox/runs/", a->pos, "", NULL, print_fields,
	                         NULL);
}

/* runs log ID: the agent's log as the server sends it, made harmless
 * once more (model/runlog.h: the server sends cleaned text; a server
 * that does not still puts no terminal escape on this terminal). */
static int cmd_runs_log(struct cli_ctx *ctx, const struct cli_args *a)
{
	struct model_runlog clean;
	struct model_buf body;
	struct model_buf path;
	const char *text;
	size_t len;
	int rc = CLI_EXIT_FAIL;

	cli_path_id(&path, "/v1/m/sandbox/runs/", a->pos, "/log");
	/* U+FFFD is three bytes: room for a body of nothing but bad bytes */
	model_runlog_init_max(&clean, 3 * (size_t)CLI_MAX_RESPONSE_BYTES);
	if (cli_http_get_raw(ctx, path.data, "text/plain", &body))
		goto out;
	text = body.data;
	len = body.len;
	if (!model_runlog_is_clean(text, len)) {
		model_runlog_add(&clean, body.data, body.len);
		model_runlog_end(&clean);
		text = clean.text.data;
		len = clean.text.len;
	}
	/* the log as it is (-o does not apply): an empty log prints nothing */
	if (len && fwrite(text, 1, len, stdout) != len)
		goto out;
	if (len && text[len - 1] != '\n')
		fputc('\n', stdout);
	rc = CLI_EXIT_OK;
out:
	model_runlog_release(&clean);
	model_buf_release(&path);
	model_buf_release(&body);
	return rc;
}

static int cmd_runs_outputs(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "GET", "/v1/m/sandbox/runs/", a->pos, "/outputs", NULL,
	                         print_outputs, NULL);
}

/* A run followed to its end: printed as runs get prints it, with what
 * scenarios run says about a run that did not complete. */
static int cmd_runs_watch(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *run;
	int rc;

	rc = cli_wait_run_id(ctx, a->pos, &run);
	if (rc)
		return rc;
	cli_print_answer(ctx, run, print_fields, cli_note_run_outcome);
	json_decref(run);
	return CLI_EXIT_OK;
}

/* 409: the run has already ended; its status, read back, says how. */
static int runs_cancel_conflict(struct cli_ctx *ctx, const char *id)
{
	static const struct cli_http_opts quiet = {NULL, 0, 1};
	struct model_buf path;
	json_t *run = NULL;
	char *shown, *status = NULL;

	cli_path_id(&path, "/v1/m/sandbox/runs/", id, "");
	if (cli_http_request(ctx, "GET", path.data, NULL, &quiet, &run, NULL) == 0 &&
	    json_is_string(json_object_get(run, "status")))
		status = cli_render(json_object_get(run, "status"));
	shown = cli_escape(id, strlen(id));
	if (status)
		cli_fail("run %s has already ended (%s)", shown, status);
	else
		cli_fail("run %s has already ended", shown);
	free(shown);
	free(status);
	json_decref(run);
	model_buf_release(&path);
	return CLI_EXIT_FAIL;
}

static int cmd_runs_cancel(struct cli_ctx *ctx, const struct cli_args *a)
{
	static const struct cli_http_opts conflict = {NULL, 409, 0};
	struct model_buf path;
	json_t *run = NULL, *body = json_object();
	int rc;

	cli_path_id(&path, "/v1/m/sandbox/runs/", a->pos, "/cancel");
	rc = cli_http_request(ctx, "POST", path.data, body, &conflict, &run, NULL);
	json_decref(body);
	model_buf_release(&path);
	if (rc == 1) {
		json_decref(run);
		return runs_cancel_conflict(ctx, a->pos);
	}
	if (rc)
		return CLI_EXIT_FAIL;
	cli_print_answer(ctx, run, print_fields, NULL);
	json_decref(run);
	return CLI_EXIT_OK;
}

/* ---- backends ------------------------------------------------------------ */

/* "ok" or "failed", from the item's preflight.ok */
static char *preflight_cell(const json_t *item)
{
	const json_t *pf = json_object_get(item, "preflight");

	return model_xstrdup(json_is_true(json_object_get(pf, "ok")) ? "ok" : "failed");
}

static char *preflight_reason(const json_t *item)
{
	return cli_render(json_object_get(json_object_get(item, "preflight"), "reason"));
}

static const struct cli_column backend_columns[] = {
    {"NAME", "name", NULL},
    {"ALLOWED", "allowed", NULL},
    {"DEFAULT", "default", NULL},
    {"PREFLIGHT", NULL, preflight_cell},
    {"REASON", NULL, preflight_reason},
    {NULL, NULL, NULL},
};

static void print_backends(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "backends"), backend_columns);
}

static int cmd_backends(struct cli_ctx *ctx, const struct cli_args *a)
{
	(void)a;
	return cli_call_print(ctx, "GET", "/v1/m/sandbox/backends", NULL, print_backends, NULL);
}

/* ---- agents -------------------------------------------------------------- */

/* "yes", "NO" or "-" (a binary: no interpreter), from interpreter_in_jail */
static char *in_jail_cell(const json_t *item)
{
	const json_t *v = json_object_get(item, "interpreter_in_jail");

	return model_xstrdup(json_is_true(v) ? "yes" : json_is_false(v) ? "NO" : "-");
}

static const struct cli_column agent_columns[] = {
    {"NAME", "name", NULL},
    {"SIZE", "size", NULL},
    {"SHA256", "sha256", NULL},
    {"INTERPRETER", "interpreter", NULL},
    {"IN_JAIL", NULL, in_jail_cell},
    {"REASON", "reason", NULL},
    {NULL, NULL, NULL},
};

static void print_agents(const json_t *resp)
{
	if (!json_is_true(json_object_get(resp, "agents_dir_exists"))) {
		char *dir = cli_render(json_object_get(resp, "agents_dir"));

		fprintf(stderr,
		        "olivares: the server's agents directory %s does not exist: every variant "
		        "runs the built-in agent\n",
		        dir);
		free(dir);
	}
	cli_print_table(json_object_get(resp, "agents"), agent_columns);
}

static int cmd_agents_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	(void)a;
	return cli_call_print(ctx, "GET", "/v1/m/sandbox/agents", NULL, print_agents, NULL);
}

/* ---- command tables ------------------------------------------------------ */

static const struct cli_opt generate_opts[] = {
    {"count", "N", "number of inputs, 1..100 (server default 10)"},
    {"subject", "S", "value of {{subject_kind}}, at most 200 bytes (server default agent)"},
    {"seed-file", "FILE|-", "template file, read byte for byte; '-' reads stdin"},
    {NULL, NULL, NULL},
};

static const struct cli_opt create_opts[] = {
    {"name", "NAME", "scenario name, at most 128 bytes (required)"},
    {"description", "TEXT", "description, at most 1024 bytes"},
    {"subject", "S", "subject kind, at most 200 bytes"},
    {"steps-file", "FILE|-", "steps as JSON (required); '-' reads stdin"},
    {"mocks-file", "FILE|-", "mocks as JSON; '-' reads stdin"},
    CLI_OPT_IDEMPOTENCY_KEY,
    {NULL, NULL, NULL},
};

static const struct cli_opt update_opts[] = {
    {"name", "NAME", "new name, at most 128 bytes"},
    {"description", "TEXT", "new description, at most 1024 bytes"},
    {"subject", "S", "new subject kind, at most 200 bytes"},
    {"steps-file", "FILE|-", "new steps as JSON (replaces them all); '-' reads stdin"},
    {"mocks-file", "FILE|-", "new mocks as JSON (replaces them all); '-' reads stdin"},
    {NULL, NULL, NULL},
};

static const struct cli_opt scenarios_list_opts[] = {
    {"limit", "N", "at most N scenarios, 1..500 (default 50)"},
    {"offset", "N", "skip the first N scenarios, 0..1000000000 (default 0)"},
    {NULL, NULL, NULL},
};

static const struct cli_opt run_opts[] = {
    {"variant", "V", "variant to run (selects the mocks of that variant)"},
    {"backend", "NAME", "isolation backend (default: your tenant's; see 'sandbox backends')"},
    {"suite", "S", "score the run against suite S or S@N (see 'sandbox suites')"},
    {"record", NULL, "record the run's exchanges as a session to replay (see docs/replay.md)"},
    CLI_OPT_IDEMPOTENCY_KEY,
    CLI_OPT_NO_WAIT,
    {NULL, NULL, NULL},
};

static const struct cli_opt runs_list_opts[] = {
    {"scenario", "ID", "only the runs of this scenario"},
    {"status", "S",
     "only runs with this status (queued, running, completed, failed, degraded, cancelled)"},
    {"kind", "K", "only runs of this kind (simulation, replay, comparison)"},
    {"session", "ID", "only the replays of this session"},
    {"limit", "N", "at most N runs, 1..500 (default 50)"},
    {"offset", "N", "skip the first N runs, 0..1000000000 (default 0)"},
    {NULL, NULL, NULL},
};

static const struct cli_opt no_opts[] = {{NULL, NULL, NULL}};

static const struct cli_command agents_commands[] = {
    {"list", cmd_agents_list, "List the server's agent programs (any role).", NULL, no_opts, NULL,
     "GET /v1/m/sandbox/agents.\n"
     "One row per program of the server's agents directory that a variant of its\n"
     "name runs: NAME SIZE SHA256 INTERPRETER IN_JAIL REASON. INTERPRETER is the\n"
     "script's #! line ('-' for a binary); IN_JAIL says whether the jail of the\n"
     "OS-level backends holds it ([runner] binds, plus /usr by default); REASON is\n"
     "why a run of it would fail when it does not. A variant that names no program\n"
     "here runs the built-in agent (builtin:mock-agent).\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct cli_opt suites_list_opts[] = {
    {"limit", "N", "at most N suites, 1..500 (default 50)"},
    {"offset", "N", "skip the first N suites, 0..1000000000 (default 0)"},
    {NULL, NULL, NULL},
};

static const struct cli_command suites_commands[] = {
    {"create", cmd_suites_create, "Store a scoring suite, version 1 (editor).", NULL, no_opts,
     "FILE|-",
     "POST /v1/m/sandbox/suites with the suite document of FILE ('-' reads stdin):\n"
     "{\"name\":N,\"threshold\":T,\"expectations\":[…]} as docs/scoring.md describes.\n"
     "The server checks it; a malformed suite is refused (exit 1) and nothing is\n"
     "stored; a name that exists is refused too (use 'update'). A run or a\n"
     "comparison that names the suite ('--suite NAME' or 'NAME@VERSION') is scored\n"
     "against it by the server, with no scorer configuration.\n"
     "Example:\n"
     "  olivares sandbox suites create walkthrough.json\n"
     "Table output: name, version, created_by, created_at, threshold and the\n"
     "number of expectations.\n"},
    {"get", cmd_suites_get, "Show a suite, the latest or NAME@VERSION (any role).", NULL, no_opts,
     "NAME[@N]",
     "GET /v1/m/sandbox/suites/NAME (the latest version) or NAME@N (version N).\n"
     "'-o json' prints the stored object with its document.\n"
     "Table output: as for 'create'.\n"},
    {"list", cmd_suites_list, "List suites, the latest version of each (any role).", NULL,
     suites_list_opts, NULL,
     "GET /v1/m/sandbox/suites?limit=N&offset=N.\n"
     "Table output: NAME VERSION CREATED_AT, by name.\n"},
    {"update", cmd_suites_update, "Store a new version of a suite (editor).", NULL, no_opts,
     "NAME FILE|-",
     "PUT /v1/m/sandbox/suites/NAME with the document of FILE ('-' reads stdin);\n"
     "its \"name\" may be left out, or must be NAME. The version goes up by one;\n"
     "the older versions stay readable as NAME@N, and a run pinned to one is\n"
     "still scored against it.\n"
     "Table output: as for 'create'.\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct cli_command scenarios_commands[] = {
    {"create", cmd_scenarios_create,
     "Create a scenario from a steps file and a mocks file (editor).", NULL, create_opts, NULL,
     "POST /v1/m/sandbox/scenarios. Files are read byte for byte and must be at most\n"
     "1 MiB; they are checked as JSON before anything is sent.\n"
     "  steps file: a JSON array [{\"key\":\"step-1\",\"input\":\"…\"},…] (key optional), or an\n"
     "              object with a \"steps\" or \"samples\" array; 'sandbox generate -o json'\n"
     "              writes exactly this format.\n"
     "  mocks file: a JSON array [{\"resource\":\"…\",\"response\":\"…\",\"variant\":\"…\"},…]\n"
     "              (variant optional), or an object with a \"mocks\" array.\n"
     "Example:\n"
     "  olivares sandbox generate --count 2 --seed-file seed.txt -o json > steps.json\n"
     "  olivares sandbox scenarios create --name generated --steps-file steps.json \\\n"
     "      --mocks-file mocks.json -o json\n"
     "Table output: the scenario's fields, then its steps (KEY INPUT) and mocks\n"
     "(RESOURCE VARIANT RESPONSE); control characters are shown escaped (\\n, \\t, \\\\).\n"},
    {"update", cmd_scenarios_update,
     "Change a scenario's name, description, subject, steps or mocks (editor).", NULL, update_opts,
     "ID",
     "PUT /v1/m/sandbox/scenarios/ID with only the fields given; the version goes up\n"
     "by one. Files as for 'create'; a file replaces all the steps (or mocks).\n"
     "A comparison of the old version still counts for 'sandbox gate' only when the\n"
     "steps and mocks are unchanged (a new name or description keeps it).\n"
     "Example:\n"
     "  olivares sandbox scenarios update ID --mocks-file mocks-v2.json\n"
     "Table output: as for 'get'.\n"},
    {"list", cmd_scenarios_list, "List scenarios (any role).", NULL, scenarios_list_opts, NULL,
     "GET /v1/m/sandbox/scenarios?limit=N&offset=N.\n"
     "Scenarios come newest first, one page at a time: without --limit the server\n"
     "returns at most 50 (the largest page is 500; a value outside 1..500 is refused\n"
     "with 400). Page with --offset: --limit 50 --offset 50 gives the next 50.\n"
     "Table output: one row per scenario: ID NAME SUBJECT VERSION STEPS MOCKS UPDATED_AT.\n"},
    {"get", cmd_scenarios_get, "Show one scenario with its steps and mocks (any role).", NULL,
     no_opts, "ID",
     "GET /v1/m/sandbox/scenarios/ID.\n"
     "Table output: the scenario's fields, then its steps (KEY INPUT) and mocks\n"
     "(RESOURCE VARIANT RESPONSE); control characters are shown escaped.\n"},
    {"delete", cmd_scenarios_delete, "Delete a scenario (editor).", NULL, no_opts, "ID",
     "Sends DELETE /v1/m/sandbox/scenarios/ID.\n"
     "Table output: id and deleted.\n"},
    {"run", cmd_scenarios_run, "Run a scenario against its mocks (editor).", NULL, run_opts, "ID",
     "POST /v1/m/sandbox/scenarios/ID/runs {\"variant\":V,\"backend\":NAME,\"suite\":S,\n"
     "\"record\":true}.\n"
     "Without --backend the run uses your tenant's default backend (inproc-mock\n"
     "unless the server's policy says otherwise); a backend the policy does not\n"
     "allow is refused (422) and nothing runs. A backend the host cannot provide\n"
     "fails closed: the run is recorded failed, isolated false, with the reason.\n"
     "A variant that names an agent program on the server runs it (OS-level\n"
     "backends only). A step whose input matches no mock gives\n"
     "[[mock-miss:<input>]] and counts in steps_error; the run still completes.\n"
     "With --record the run, once completed, is also a history session (its step\n"
     "inputs, outputs and every answer it got, mocked or from an allowed host):\n"
     "the run's session_id names it, and 'sandbox replay SESSION' replays it with\n"
     "no egress; record_error says why a run made none.\n"
     "With --suite S the completed run is scored against the suite S stored with\n"
     "'sandbox suites create' (no server configuration needed), at the version\n"
     "pinned when the run is queued: the latest, or N for S@N; suite and\n"
     "suite_version are recorded with scored, score (0..1), passed and\n"
     "score_details. A name the store does not have goes to the server's scorer\n"
     "adapter when one is configured; with none, or a version the store does not\n"
     "have, the run is refused (422) and nothing runs. A scorer failure leaves\n"
     "the run 'executed, not scored' (scored false, passed null) with the reason:\n"
     "never a silent pass.\n"
     "Example:\n"
     "  olivares sandbox scenarios run ID --variant candidate --backend namespaces\n"
     "  olivares sandbox scenarios run ID --variant v2 --suite walkthrough\n"
     "The run is a job on the server: the command waits for its end (it asks the\n"
     "server to answer within 10 s, then polls the run, first after 100 ms, then\n"
     "slower, at most 1 s apart) and prints the finished run. While it waits and\n"
     "stderr is a terminal, a progress line there says 'olivares: run ID: running,\n"
     "step 3/10' (steps done so far / steps in all), erased before the output; with\n"
     "stderr not a terminal nothing more is printed. Ctrl-C (SIGINT) stops the\n"
     "waiting, not the run: stderr says how to follow it ('olivares sandbox runs\n"
     "watch ID') and the exit status is 130. With --no-wait the run is printed as\n"
     "the server took it (status queued, at least id and status), exit 0.\n"
     "Table output: the run's fields, one per line (id, status, steps_total, steps_ok,\n"
     "steps_error, isolated, destroyed, backend, shutdown, …); null is shown as '-'.\n"
     "A run recorded failed, degraded or cancelled also gets one line on stderr\n"
     "('olivares: run ID failed: REASON'), and so does a completed run whose agent\n"
     "had to be killed after its last step ('olivares: run ID completed, but agent\n"
     "did not exit …'); the exit status stays 0 (the run is recorded).\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct cli_command runs_commands[] = {
    {"list", cmd_runs_list, "List runs (any role).", NULL, runs_list_opts, NULL,
     "GET /v1/m/sandbox/runs?scenario=ID&status=S&kind=K&session=ID&limit=N&offset=N.\n"
     "Runs come newest first, one page at a time: without --limit the server returns\n"
     "at most 50 (the largest page is 500; a value outside 1..500 is refused with\n"
     "400). Page with --offset: --limit 50 --offset 50 gives the next 50.\n"
     "Table output: one row per run: ID STATUS SCENARIO VARIANT BACKEND ISOLATED TOTAL\n"
     "OK ERRORS STARTED_AT KIND.\n"},
    {"get", cmd_runs_get, "Show one run (any role).", NULL, no_opts, "ID",
     "GET /v1/m/sandbox/runs/ID.\n"
     "Table output: the run's fields, one per line (id, status, steps_total, steps_ok,\n"
     "steps_error, isolated, destroyed, backend, …); null is shown as '-'.\n"},
    {"outputs", cmd_runs_outputs, "Show the per-step outputs of a run (any role).", NULL, no_opts,
     "ID",
     "GET /v1/m/sandbox/runs/ID/outputs.\n"
     "Table output: one row per step: SEQ KEY STATUS DURATION_MS OUTPUT, where STATUS\n"
     "is 'ok' or 'error (<kind>)' and DURATION_MS the step's time in milliseconds\n"
     "(three decimals; '-' when unknown, for runs recorded before step times);\n"
     "control characters in outputs are shown escaped (\\n, \\t, \\\\).\n"},
    {"junit", cli_cmd_runs_junit, "Export a run as JUnit XML for CI systems (any role).", NULL,
     no_opts, "ID", cli_runs_junit_help},
    {"log", cmd_runs_log, "Print the agent's log of a run (any role).", NULL, no_opts, "ID",
     "GET /v1/m/sandbox/runs/ID/log.\n"
     "The agent's stdout and stderr, merged in the order they came, as the runner\n"
     "kept them: at most 1 MiB, then the line '[[log truncated: N bytes dropped]]';\n"
     "invalid UTF-8 and control characters but newline and tab are shown as U+FFFD.\n"
     "Printed as is (-o does not apply); a run that logged nothing prints nothing\n"
     "(inproc-mock runs no agent: its runs have no log). A run of another tenant, or\n"
     "none, is 'not found' (exit status 1).\n"},
    {"watch", cmd_runs_watch, "Follow a run to its end, then show it (any role).", NULL, no_opts,
     "ID",
     "GET /v1/m/sandbox/runs/ID until the run is neither queued nor running (first\n"
     "after 100 ms, then slower, at most 1 s apart), with the progress line of\n"
     "'scenarios run' on stderr when it is a terminal; then the run as 'runs get'\n"
     "prints it, and the stderr line of 'scenarios run' for a run that failed, was\n"
     "degraded or cancelled. Exit status 0 for any finished run, as 'scenarios run';\n"
     "130 on Ctrl-C (SIGINT; the run goes on).\n"
     "Example:\n"
     "  olivares sandbox scenarios run ID --no-wait -o json | jq -r .id\n"
     "  olivares sandbox runs watch RUN_ID\n"
     "Table output: as for 'get'.\n"},
    {"cancel", cmd_runs_cancel, "Cancel a queued or running run (editor).", NULL, no_opts, "ID",
     "POST /v1/m/sandbox/runs/ID/cancel. A queued run is cancelled at once; a\n"
     "running one stays running with cancel_requested true until its executor stops\n"
     "it (within a few seconds: 'runs watch ID' shows its end). A run that has\n"
     "already ended cannot be cancelled: 'olivares: run ID has already ended\n"
     "(completed)' on stderr, exit 1.\n"
     "Table output: the run as the server returns it, fields as for 'get'.\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

const struct cli_command cli_sandbox_commands[] = {
    {"generate", cmd_generate, "Generate step inputs from a local template (editor).", NULL,
     generate_opts, NULL,
     "POST /v1/m/sandbox/synthetic-data with only the flags given (the server applies\n"
     "its defaults: subject agent, count 10, template {{subject_kind}}-sample-{{index}}).\n"
     "Only {{index}} (from 1) and {{subject_kind}} are substituted. The seed file is\n"
     "read byte for byte, a final newline included, and must be UTF-8 without NUL.\n"
     "JSON output: exactly the samples array [{\"key\":\"step-1\",\"input\":\"…\"},…], ready\n"
     "for 'sandbox scenarios create --steps-file'.\n"
     "Table output: one input per line; control characters are shown escaped\n"
     "(\\n, \\r, \\t, \\\\, \\xHH).\n"
     "Example:\n"
     "  printf '%s' '{{subject_kind}}:user{{index}}@example.test' > seed.txt\n"
     "  olivares sandbox generate --count 2 --seed-file seed.txt -o json > steps.json\n"},
    {"scenarios", NULL, "Create, list, show, delete and run scenarios.", scenarios_commands, NULL,
     NULL, NULL},
    {"suites", NULL, "Store, list, show and update scoring suites.", suites_commands, NULL, NULL,
     NULL},
    {"runs", NULL, "List runs, show, follow or cancel a run, its outputs, log, JUnit XML.",
     runs_commands, NULL, NULL, NULL},
    {"agents", NULL, "List the server's agent programs, their digests and interpreters.",
     agents_commands, NULL, NULL, NULL},
    {"backends", cmd_backends,
     "List the isolation backends, your policy and their preflight (any role).", NULL, no_opts,
     NULL,
     "GET /v1/m/sandbox/backends.\n"
     "One row per backend the runner knows (inproc-mock, namespaces, gvisor,\n"
     "firecracker): ALLOWED and DEFAULT from your tenant's policy (server\n"
     "configuration), PREFLIGHT ok or failed as olivares-runner --preflight NAME\n"
     "says on the server host, and REASON, the missing primitive when it failed.\n"
     "A run on a backend whose preflight fails is recorded failed, isolated false.\n"
     "Table output: NAME ALLOWED DEFAULT PREFLIGHT REASON.\n"},
    {"compare", cli_cmd_compare,
     "Run and score a baseline and a candidate variant, record the verdict (admin).", NULL,
     cli_compare_opts, NULL, cli_compare_help},
    {"comparisons", NULL, "List and show recorded comparisons.", cli_comparisons_commands, NULL,
     NULL, NULL},
    {"gate", cli_cmd_gate, "Exit 0 only if the latest comparison improved or unchanged (any role).",
     NULL, cli_gate_opts, NULL, cli_gate_help},
    {"approve", cli_cmd_approve, "Approve a settled comparison, with a reason (admin).", NULL,
     cli_approval_opts, "ID", cli_approve_help},
    {"reject", cli_cmd_reject, "Reject a settled comparison, with a reason (admin).", NULL,
     cli_approval_opts, "ID", cli_reject_help},
    {"verify", cli_cmd_verify,
     "Verify a signed evidence bundle offline against the server's public key.", NULL,
     cli_verify_opts, "BUNDLE", cli_verify_help},
    {"evidence-key", cli_cmd_evidence_key,
     "Fetch the server's public evidence key, PEM (no token needed).", NULL, cli_evidence_file_opts,
     NULL, cli_evidence_key_help},
    {"sessions", NULL, "Import, list and show historical sessions.", cli_sessions_commands, NULL,
     NULL, NULL},
    {"replay", cli_cmd_replay,
     "Replay a session's inputs against its recorded tool results (editor).", NULL, cli_replay_opts,
     "SESSION", cli_replay_help},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
