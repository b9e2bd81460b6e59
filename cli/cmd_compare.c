/*
 * olivares sandbox compare | comparisons list|get|junit | gate | approve | reject |
 * runs junit: the comparison, approval and export routes (docs/scoring.md).
 *
 * compare posts one comparison (both variants run and scored on the server,
 * the verdict decided there by model/verdict.h); gate reads the newest
 * comparison of a scenario and turns its verdict into the exit status a CI
 * pipeline gates on; runs junit prints the server's JUnit XML byte for byte.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"

/* ---- rendering ----------------------------------------------------------- */

/* A JSON number as the shortest decimal that reads back as the same double
 * ("0.1", not "0.10000000000000001"); null as "null"; malloc'ed. */
static char *number_text(const json_t *v)
{
	char buf[64];
	double d;
	int prec;

	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return model_xstrdup(buf);
	}
	if (!json_is_real(v))
		return model_xstrdup(json_is_null(v) || !v ? "null" : "?");
	d = json_real_value(v);
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return model_xstrdup(buf);
}

static char *delta_cell(const json_t *item)
{
	const json_t *d = json_object_get(item, "delta");

	return json_is_number(d) ? number_text(d) : model_xstrdup("-");
}

static char *score_cell(const json_t *item)
{
	const json_t *s = json_object_get(item, "score");

	return json_is_number(s) ? number_text(s) : model_xstrdup("-");
}

static char *baseline_cell(const json_t *item)
{
	return cli_render(json_object_get(json_object_get(item, "baseline"), "variant"));
}

static char *candidate_cell(const json_t *item)
{
	return cli_render(json_object_get(json_object_get(item, "candidate"), "variant"));
}

static const struct cli_column side_columns[] = {
    {"SIDE", "side", NULL},     {"VARIANT", "variant", NULL}, {"RUN", "run_id", NULL},
    {"STATUS", "status", NULL}, {"SCORED", "scored", NULL},   {"SCORE", NULL, score_cell},
    {NULL, NULL, NULL},
};

static const struct cli_column differing_columns[] = {
    {"SEQ", "seq", NULL},
    {"KEY", "key", NULL},
    {"BASELINE", "baseline_output", NULL},
    {"CANDIDATE", "candidate_output", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_column run_columns[] = {
    {"SIDE", "side", NULL},
    {"REPEAT", "repeat", NULL},
    {"RUN", "run_id", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_column flaky_columns[] = {
    {"SIDE", "side", NULL},
    {"SEQ", "seq", NULL},
    {"KEY", "key", NULL},
    {NULL, NULL, NULL},
};

static const struct cli_column comparison_columns[] = {
    {"ID", "id", NULL},
    {"SCENARIO", "scenario_id", NULL},
    {"SUITE", "suite", NULL},
    {"BASELINE", NULL, baseline_cell},
    {"CANDIDATE", NULL, candidate_cell},
    {"VERDICT", "verdict", NULL},
    {"DELTA", NULL, delta_cell},
    {"CREATED_AT", "created_at", NULL},
    {NULL, NULL, NULL},
};

/* A copy of the object o (or an empty one) whose numbers are in the
 * shortest exact form, as the gate prints them. */
static json_t *exact_numbers(const json_t *o)
{
	json_t *copy = json_is_object(o) ? json_deep_copy(o) : json_object(), *v;
	const char *key;
	char *text;

	json_object_foreach(copy, key, v)
	{
		if (json_is_real(v)) {
			text = number_text(v);
			json_object_set_new(copy, key, json_string(text));
			free(text);
		}
	}
	return copy;
}

/* Each side's runs, one row per repeat, from "runs" {"baseline":[ids],
 * "candidate":[ids]}. */
static json_t *run_rows(const json_t *runs)
{
	static const char *const sides[] = {"baseline", "candidate"};
	json_t *rows = json_array(), *ids, *id;
	size_t i, r;

	for (i = 0; i < 2; i++) {
		ids = json_object_get(runs, sides[i]);
		json_array_foreach(ids, r, id)
		{
			json_array_append_new(rows,
			                      json_pack("{s:s, s:I, s:O}", "side", sides[i],
			                                "repeat", (json_int_t)r, "run_id", id));
		}
	}
	return rows;
}

/* The repeats' statistics: stats and pass_k as fields ("-" while pending),
 * each side's runs per repeat, then the flaky steps. */
static void print_statistics(const json_t *c)
{
	const json_t *pass_k = json_object_get(c, "pass_k"),
	             *flaky = json_object_get(c, "flaky_steps");
	json_t *fields, *rows;

	printf("\nstatistics:\n");
	fields = json_object();
	if (json_is_object(json_object_get(c, "stats")))
		json_object_update(fields, json_object_get(c, "stats"));
	else
		json_object_set_new(fields, "method", json_null());
	json_object_set(fields, "pass_k_baseline",
	                json_object_get(pass_k, "baseline") ?: json_null());
	json_object_set(fields, "pass_k_candidate",
	                json_object_get(pass_k, "candidate") ?: json_null());
	rows = exact_numbers(fields);
	cli_print_fields(rows, NULL);
	json_decref(rows);
	json_decref(fields);
	rows = run_rows(json_object_get(c, "runs"));
	printf("\nruns (%zu):\n", json_array_size(rows));
	cli_print_table(rows, run_columns);
	json_decref(rows);
	printf("\nflaky steps (%zu):\n", json_array_size(flaky));
	cli_print_table(flaky, flaky_columns);
}

/* The comparison's own fields, then one row per side, then the steps whose
 * outputs differ, then the statistics of its repeats. */
static void print_comparison(const json_t *c)
{
	static const char *const skip[] = {"baseline", "candidate", "differing_steps", "runs",
	                                   "stats",    "pass_k",    "flaky_steps",     NULL};
	static const char *const sides[] = {"baseline", "candidate"};
	const json_t *diff = json_object_get(c, "differing_steps");
	json_t *fields, *rows, *row;
	char *delta;
	size_t i;

	/* numbers in the shortest exact form, as the gate prints them */
	fields = json_copy((json_t *)c);
	if (json_is_number(json_object_get(c, "delta"))) {
		delta = delta_cell(c);
		json_object_set_new(fields, "delta", json_string(delta));
		free(delta);
	}
	if (json_is_number(json_object_get(c, "tolerance"))) {
		delta = number_text(json_object_get(c, "tolerance"));
		json_object_set_new(fields, "tolerance", json_string(delta));
		free(delta);
	}
	cli_print_fields(fields, skip);
	json_decref(fields);

	rows = json_array();
	for (i = 0; i < 2; i++) {
		row = json_deep_copy(json_object_get(c, sides[i]));
		if (!json_is_object(row)) {
			json_decref(row);
			row = json_object();
		}
		json_object_set_new(row, "side", json_string(sides[i]));
		json_array_append_new(rows, row);
	}
	fputc('\n', stdout);
	cli_print_table(rows, side_columns);
	json_decref(rows);
	printf("\ndiffering steps (%zu):\n", json_array_size(diff));
	cli_print_table(diff, differing_columns);
	print_statistics(c);
}

/* ---- JUnit exports ------------------------------------------------------- */

/* GET prefix + id + "/junit" and write the XML as received to f (a final
 * newline added when it has none), or, with f NULL, to the file fname,
 * made only once the server has answered (a refused export leaves no empty
 * file). Returns 0, or -1 after saying why. */
static int junit_fetch(struct cli_ctx *ctx, const char *prefix, const char *id, FILE *f,
                       const char *fname)
{
	struct model_buf body;
	struct model_buf path;
	int rc = -1, bad;

	cli_path_id(&path, prefix, id, "/junit");
	/* the export is XML: kept as bytes (cli_http_call only hands back JSON) */
	if (cli_http_get_raw(ctx, path.data, "application/xml", &body))
		goto out;
	if (!f && !(f = fopen(fname, "w"))) {
		cli_fail("cannot write %s: %s", fname, strerror(errno));
		goto out;
	}
	/* the document as received, byte for byte (-o does not apply) */
	bad = body.len && fwrite(body.data, 1, body.len, f) != body.len;
	if (!bad && body.len && body.data[body.len - 1] != '\n')
		bad = fputc('\n', f) == EOF;
	if (fname) {
		bad |= fclose(f) != 0;
		if (bad)
			cli_fail("cannot write %s: %s", fname, strerror(errno));
	}
	rc = bad ? -1 : 0;
out:
	model_buf_release(&path);
	model_buf_release(&body);
	return rc;
}

/* ---- compare ------------------------------------------------------------- */

int cli_cmd_compare(struct cli_ctx *ctx, const struct cli_args *a)
{
	static const char *const required[] = {"scenario", "baseline", "candidate", "suite", NULL};
	const char *tol = cli_arg(a, "tolerance"), *junit = cli_arg(a, "junit"), *id;
	const char *repeats = cli_arg(a, "repeats");
	json_t *body, *rec = NULL;
	long long n;
	char *end;
	double t;
	int i, rc;

	body = json_object();
	for (i = 0; required[i]; i++) {
		if (!cli_arg(a, required[i])) {
			cli_usage_error(ctx, "--%s is required", required[i]);
			goto usage;
		}
	}
	if (cli_body_set_string(ctx, body, "scenario_id", a, "scenario") ||
	    cli_body_set_string(ctx, body, "baseline", a, "baseline") ||
	    cli_body_set_string(ctx, body, "candidate", a, "candidate") ||
	    cli_body_set_string(ctx, body, "suite", a, "suite") ||
	    cli_body_set_string(ctx, body, "backend", a, "backend") ||
	    cli_idempotency_key_opt(ctx, a))
		goto usage;
	if (tol) {
		/* a number here; whether it is in [0, 1] is the server's rule */
		errno = 0;
		t = strtod(tol, &end);
		if (tol[0] == '\0' || tol[0] == ' ' || *end != '\0' || errno != 0 || !isfinite(t)) {
			cli_usage_error(ctx, "--tolerance expects a number, got '%s'", tol);
			goto usage;
		}
		json_object_set_new(body, "tolerance", json_real(t));
	}
	if (repeats) {
		/* an integer here; whether it is in 1..20 is the server's rule */
		if (cli_parse_int(ctx, "repeats", repeats, &n))
			goto usage;
		json_object_set_new(body, "repeats", json_integer((json_int_t)n));
	}
	if (junit && junit[0] == '\0') {
		cli_usage_error(ctx, "--junit expects a file name");
		goto usage;
	}
	if (junit && cli_arg(a, "no-wait")) {
		/* a pending comparison has no verdict to export */
		cli_usage_error(ctx, "--junit needs the verdict: it cannot go with --no-wait");
		goto usage;
	}
	/* the verdict is about scores; an agent killed after its last step
	 * is said beside it, exit status unchanged */
	rc = cli_create_and_wait_keep(ctx, !cli_arg(a, "no-wait"), CLI_JOB_COMPARISON,
	                              "/v1/m/sandbox/comparisons", body, print_comparison,
	                              print_comparison, cli_note_comparison, junit ? &rec : NULL);
	if (rc || !junit)
		return rc;
	id = json_string_value(json_object_get(rec, "id"));
	if (!id)
		rc = cli_fail("unexpected response: the comparison has no id");
	else if (junit_fetch(ctx, "/v1/m/sandbox/comparisons/", id, NULL, junit))
		rc = CLI_EXIT_FAIL;
	json_decref(rec);
	return rc;
usage:
	json_decref(body);
	return CLI_EXIT_USAGE;
}

/* ---- comparisons list | get ---------------------------------------------- */

static void print_comparison_list(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "comparisons"), comparison_columns);
}

static int cmd_comparisons_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	static const char *const filters[] = {"scenario", NULL};

	return cli_call_list(ctx, a, "/v1/m/sandbox/comparisons", filters, print_comparison_list);
}

static int cmd_comparisons_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "GET", "/v1/m/sandbox/comparisons/", a->pos, "", NULL,
	                         print_comparison, NULL);
}

/* ---- gate ---------------------------------------------------------------- */

/*
 * Is comparison c about the scenario sc as it is now? Yes (1) when it is
 * of sc's version; or, for an older version, when its baseline run was of
 * the same steps and mocks (the run's scenario_digest is sc's digest: the
 * scenario was renamed or re-saved, its content unchanged). No (0): says
 * why on stderr. -1 when the baseline run could not be read (the error
 * printed): the gate's error, not "no evidence".
 */
static int same_scenario_content(struct cli_ctx *ctx, const json_t *sc, const json_t *c)
{
	const json_t *now = json_object_get(sc, "version"),
	             *v = json_object_get(c, "scenario_version");
	const char *run_id, *digest, *was;
	struct model_buf path;
	json_t *run = NULL;
	int same;

	if (json_is_integer(v) && json_integer_value(v) == json_integer_value(now))
		return 1;
	if (!json_is_integer(v)) {
		cli_fail("the newest comparison does not say which scenario version it compared: "
		         "the gate stays closed; compare again");
		return 0;
	}
	run_id = json_string_value(json_object_get(json_object_get(c, "baseline"), "run_id"));
	digest = json_string_value(json_object_get(sc, "digest"));
	same = 0;
	if (run_id && digest) {
		cli_path_id(&path, "/v1/m/sandbox/runs/", run_id, "");
		if (cli_http_call(ctx, "GET", path.data, NULL, &run) != 0) {
			model_buf_release(&path);
			cli_fail(
			    "the gate stays closed: the comparison's baseline run cannot be read");
			return -1;
		}
		was = json_string_value(json_object_get(run, "scenario_digest"));
		same = was && strcmp(was, digest) == 0;
		model_buf_release(&path);
		json_decref(run);
	}
	if (same)
		return 1;
	cli_fail(
	    "no comparison of the scenario's current steps and mocks (version %" JSON_INTEGER_FORMAT
	    "; the newest comparison is of version %" JSON_INTEGER_FORMAT
	    ", whose steps or mocks differ): the gate stays closed; compare again",
	    json_integer_value(now), json_integer_value(v));
	return 0;
}

/*
 * --require-approval: the comparison c (improved or unchanged) opens the
 * gate only when it is of the scenario's current version now (an older
 * version is not approved evidence about this one, even with the same
 * content) and the newest approval of it is "approved". The exit status,
 * with stderr saying why the gate stays closed.
 */
static int approved_for(struct cli_ctx *ctx, const json_t *c, const json_t *now)
{
	const json_t *v = json_object_get(c, "scenario_version"), *ap;
	const char *id = json_string_value(json_object_get(c, "id")), *decision;
	struct model_buf path;
	json_t *full = NULL;
	char *reason = NULL;
	int rc = CLI_EXIT_FAIL;

	if (!json_is_integer(v) || json_integer_value(v) != json_integer_value(now)) {
		cli_fail("gate closed: the newest comparison is of scenario version "
		         "%" JSON_INTEGER_FORMAT
		         ", the scenario is at version %" JSON_INTEGER_FORMAT
		         " (an approval holds for the version compared): compare and approve again",
		         json_integer_value(v), json_integer_value(now));
		return CLI_EXIT_NO_COMPARISON;
	}
	if (!id) {
		cli_fail("unexpected response: the comparison has no id");
		return CLI_EXIT_FAIL;
	}
	cli_path_id(&path, "/v1/m/sandbox/comparisons/", id, "");
	if (cli_http_call(ctx, "GET", path.data, NULL, &full))
		goto out;
	ap = json_object_get(full, "approval");
	decision = json_string_value(json_object_get(ap, "decision"));
	if (!decision) {
		cli_fail("gate closed: the comparison %s is not approved yet (olivares sandbox "
		         "approve %s --reason TEXT)",
		         id, id);
		rc = CLI_EXIT_NOT_APPROVED;
		goto out;
	}
	if (strcmp(decision, "approved") != 0) {
		reason = cli_render(json_object_get(ap, "reason"));
		cli_fail("gate closed: the comparison was rejected (%s)", reason);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rc = CLI_EXIT_OK;
out:
	free(reason);
	json_decref(full);
	model_buf_release(&path);
	return rc;
}

int cli_cmd_gate(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *scenario = cli_arg(a, "scenario");
	const json_t *list, *c, *v, *now;
	const char *verdict;
	struct model_buf path, spath;
	json_t *resp = NULL, *sc = NULL;
	char *delta = NULL, *id = NULL, *reason = NULL, *shown = NULL;
	int rc = CLI_EXIT_USAGE;

	model_buf_init(&path, CLI_PATH_MAX_BYTES);
	memset(&spath, 0, sizeof(spath)); /* cli_path_id initialises it */
	if (!scenario || scenario[0] == '\0') {
		cli_usage_error(ctx, "--scenario is required");
		goto out;
	}
	/* The scenario first: one that does not exist (a typo in a
	 * pipeline) is an error, not "no evidence yet"; its version is what
	 * the evidence must be about. */
	cli_path_id(&spath, "/v1/m/sandbox/scenarios/", scenario, "");
	rc = CLI_EXIT_FAIL;
	if (cli_http_call(ctx, "GET", spath.data, NULL, &sc))
		goto out;
	now = json_object_get(sc, "version");
	if (!json_is_integer(now)) {
		cli_fail("unexpected response: the scenario has no version");
		goto out;
	}
	rc = CLI_EXIT_USAGE;
	model_buf_must_fit(model_buf_adds(&path, "/v1/m/sandbox/comparisons"));
	if (cli_query_add(ctx, &path, "scenario", scenario))
		goto out;
	/* only a --scenario that filled the path leaves no room for it */
	if (model_buf_adds(&path, "&latest=true")) {
		cli_usage_error(ctx, "--scenario is too long");
		goto out;
	}
	rc = CLI_EXIT_FAIL;
	if (cli_http_call(ctx, "GET", path.data, NULL, &resp))
		goto out;
	list = json_object_get(resp, "comparisons");
	if (!json_is_array(list)) {
		cli_fail("unexpected response: no \"comparisons\" array");
		goto out;
	}
	if (json_array_size(list) == 0) {
		reason = cli_escape(scenario, strlen(scenario));
		cli_fail("no comparison recorded for scenario %s: the gate stays closed", reason);
		rc = CLI_EXIT_NO_COMPARISON;
		goto out;
	}
	c = json_array_get(list, 0);
	v = json_object_get(c, "verdict");
	verdict = json_is_string(v) ? json_string_value(v) : "";
	delta = number_text(json_object_get(c, "delta"));
	id = cli_render(json_object_get(c, "id"));
	if (ctx->format == CLI_FORMAT_JSON) {
		cli_print_json(c);
	} else {
		/* escaped as every printed value: a verdict this CLI does not
		 * know could hold terminal controls ("regressed\r...improved") */
		shown = verdict[0] ? cli_escape(verdict, strlen(verdict)) : model_xstrdup("?");
		printf("verdict=%s delta=%s comparison=%s\n", shown, delta, id);
	}
	/* a gate opened on "improved" still says that a side's agent had to
	 * be killed after its last step (stderr; stdout and exit unchanged) */
	cli_note_comparison(c);
	/* Evidence about other steps or mocks is none about these: the gate
	 * stays closed until the scenario is compared again. */
	switch (same_scenario_content(ctx, sc, c)) {
	case 0:
		rc = CLI_EXIT_NO_COMPARISON;
		goto out;
	case -1:
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if ((strcmp(verdict, "improved") == 0 || strcmp(verdict, "unchanged") == 0) &&
	    cli_arg(a, "require-approval")) {
		rc = approved_for(ctx, c, now);
		goto out;
	}
	if (strcmp(verdict, "improved") == 0 || strcmp(verdict, "unchanged") == 0) {
		rc = CLI_EXIT_OK;
		goto out;
	}
	/* regressed, inconclusive, or a verdict this CLI does not know */
	reason = cli_render(json_object_get(c, "reason"));
	if (strcmp(verdict, "regressed") == 0)
		cli_fail("gate closed: the candidate regressed (delta %s)", delta);
	else if (strcmp(verdict, "inconclusive") == 0)
		cli_fail("gate closed: the comparison is inconclusive (%s)", reason);
	else
		cli_fail("gate closed: unknown verdict in the response");
	rc = CLI_EXIT_FAIL;
out:
	free(delta);
	free(id);
	free(reason);
	free(shown);
	json_decref(resp);
	json_decref(sc);
	model_buf_release(&path);
	model_buf_release(&spath);
	return rc;
}

/* ---- approve | reject ------------------------------------------------------ */

static int approval_post(struct cli_ctx *ctx, const struct cli_args *a, const char *decision)
{
	const char *reason = cli_arg(a, "reason");
	struct model_buf path;
	json_t *body, *out = NULL;
	char *id = NULL, *by = NULL;
	int rc;

	if (!reason || reason[0] == '\0') {
		cli_usage_error(ctx, "--reason is required");
		return CLI_EXIT_USAGE;
	}
	body = json_pack("{s:s,s:s}", "decision", decision, "reason", reason);
	if (!body) {
		/* jansson refuses a string that is not UTF-8 */
		cli_usage_error(ctx, "--reason must be UTF-8 text");
		return CLI_EXIT_USAGE;
	}
	cli_path_id(&path, "/v1/m/sandbox/comparisons/", a->pos, "/approval");
	rc = cli_http_call(ctx, "POST", path.data, body, &out);
	json_decref(body);
	model_buf_release(&path);
	if (rc)
		return CLI_EXIT_FAIL;
	if (ctx->format == CLI_FORMAT_JSON) {
		cli_print_json(out);
	} else {
		id = cli_render(json_object_get(out, "id"));
		by = cli_render(json_object_get(out, "decided_by"));
		printf("%s comparison=%s approval=%s by=%s\n", decision, a->pos, id, by);
	}
	free(id);
	free(by);
	json_decref(out);
	return CLI_EXIT_OK;
}

int cli_cmd_approve(struct cli_ctx *ctx, const struct cli_args *a)
{
	return approval_post(ctx, a, "approved");
}

int cli_cmd_reject(struct cli_ctx *ctx, const struct cli_args *a)
{
	return approval_post(ctx, a, "rejected");
}

const struct cli_opt cli_approval_opts[] = {
    {"reason", "TEXT", "why, 1..1000 characters (required)"},
    {NULL, NULL, NULL},
};

const char cli_approve_help[] =
    "POST /v1/m/sandbox/comparisons/ID/approval {\"decision\":\"approved\",\"reason\"}.\n"
    "Admin only, with the approve scope when the token has scopes. Approvals are\n"
    "append-only and audited (sandbox.approval): a later approve or reject is a\n"
    "new decision and the newest counts ('comparisons get ID' shows the history).\n"
    "A comparison still pending cannot be approved (409, exit 1).\n"
    "Table output: 'approved comparison=ID approval=ID by=TOKEN_ID'.\n"
    "JSON output: the approval object.\n";

const char cli_reject_help[] =
    "POST /v1/m/sandbox/comparisons/ID/approval {\"decision\":\"rejected\",\"reason\"}.\n"
    "As 'approve', with the decision rejected: 'gate --require-approval' then stays\n"
    "closed for this comparison.\n"
    "Table output: 'rejected comparison=ID approval=ID by=TOKEN_ID'.\n";

/* ---- runs junit | comparisons junit ---------------------------------- */

int cli_cmd_runs_junit(struct cli_ctx *ctx, const struct cli_args *a)
{
	return junit_fetch(ctx, "/v1/m/sandbox/runs/", a->pos, stdout, NULL) ? CLI_EXIT_FAIL
	                                                                     : CLI_EXIT_OK;
}

static int cmd_comparisons_junit(struct cli_ctx *ctx, const struct cli_args *a)
{
	return junit_fetch(ctx, "/v1/m/sandbox/comparisons/", a->pos, stdout, NULL) ? CLI_EXIT_FAIL
	                                                                            : CLI_EXIT_OK;
}

/* ---- command tables ------------------------------------------------------ */

const struct cli_opt cli_compare_opts[] = {
    {"scenario", "ID", "scenario to run on both variants (required)"},
    {"baseline", "V", "baseline variant, e.g. the deployed one (required)"},
    {"candidate", "V", "candidate variant, the one to deploy (required)"},
    {"suite", "S", "suite both runs are scored against (required)"},
    {"tolerance", "T", "|delta| <= T counts as unchanged, 0..1 (default 0)"},
    {"backend", "NAME", "isolation backend of both runs (default: your tenant's)"},
    {"junit", "FILE", "once decided, write the comparison's JUnit XML to FILE"},
    {"repeats", "N", "runs per side, 1..20, paired by repeat (default 1)"},
    CLI_OPT_IDEMPOTENCY_KEY,
    CLI_OPT_NO_WAIT,
    {NULL, NULL, NULL},
};

const char cli_compare_help[] =
    "POST /v1/m/sandbox/comparisons {\"scenario_id\",\"baseline\",\"candidate\",\"suite\",\n"
    "\"tolerance\",\"backend\",\"repeats\"}. Admin only (an editor gets 403).\n"
    "The server runs the scenario once per variant, scores both runs against the\n"
    "suite and records both runs, the comparison and an audit event together.\n"
    "Verdict: both runs completed and scored: delta = candidate - baseline;\n"
    "improved if delta > T, regressed if delta < -T, unchanged otherwise. Either\n"
    "run failed, degraded or not scored: inconclusive, no delta, and a reason.\n"
    "--repeats N (1..20) runs each variant N times, repeat r of the baseline paired\n"
    "with repeat r of the candidate: the verdict comes from the paired deltas' mean\n"
    "and its bootstrap 95% interval (fixed seed): improved if the interval lies\n"
    "above T, regressed if below -T, unchanged if within [-T, T], otherwise\n"
    "inconclusive with repeats_needed (docs/scoring.md). N = 1 keeps the rules above.\n"
    "Comparisons are append-only evidence: they cannot be changed or deleted.\n"
    "The comparison is pending until both runs end and it is decided: the command\n"
    "waits for the verdict as 'scenarios run' waits for a run (polling the\n"
    "comparison), with, when stderr is a terminal, a progress line for both sides\n"
    "('olivares: comparison ID: baseline running 2/5, candidate queued').\n"
    "Ctrl-C exits 130 and names the comparison and its two runs (they go on).\n"
    "--no-wait prints the pending comparison (verdict, delta and reason '-', both\n"
    "sides' run ids) and exits 0: 'olivares sandbox comparisons get ID' later.\n"
    "Example:\n"
    "  olivares sandbox compare --scenario ID --baseline v1 --candidate v2 \\\n"
    "      --suite walkthrough --tolerance 0.05\n"
    "Table output: the comparison's fields (verdict, delta, reason, …), one row per\n"
    "side (SIDE VARIANT RUN STATUS SCORED SCORE), then the steps whose outputs\n"
    "differ (SEQ KEY BASELINE CANDIDATE), then 'statistics:' (stats' method, n,\n"
    "delta, ci_low, ci_high, p_value, repeats_needed, and each side's pass^k), the\n"
    "runs (SIDE REPEAT RUN) and the flaky steps (SIDE SEQ KEY).\n"
    "A side whose run completed but whose agent had to be killed after its last\n"
    "step (the side's shutdown note) also gets a line on stderr, in either output\n"
    "format: 'olivares: baseline run ID completed, but NOTE' (or 'candidate run');\n"
    "the verdict (about scores) and the exit status are unchanged.\n"
    "--junit FILE: once the comparison is decided, GET /v1/m/sandbox/comparisons/ID/\n"
    "junit and write it to FILE (see 'comparisons junit --help'); the exit status\n"
    "is 1 when it cannot be fetched or written, otherwise unchanged (a regressed\n"
    "verdict still exits 0 here: 'gate' decides). Not with --no-wait.\n";

const struct cli_opt cli_gate_opts[] = {
    {"scenario", "ID", "scenario whose latest comparison decides (required)"},
    {"require-approval", NULL, "open only for an approved comparison of the current version"},
    {NULL, NULL, NULL},
};

const char cli_gate_help[] =
    "GET /v1/m/sandbox/scenarios/ID, then /v1/m/sandbox/comparisons?scenario=ID&\n"
    "latest=true (any role): the newest comparison of the scenario decides, so a CI\n"
    "pipeline can gate a deployment:\n"
    "  olivares sandbox compare --scenario ID --baseline v1 --candidate v2 --suite S\n"
    "  olivares sandbox gate --scenario ID || exit 1\n"
    "Exit status: 0 when the verdict is improved or unchanged; 1 when it is\n"
    "regressed or inconclusive, or on any error (server refused or unreachable, a\n"
    "scenario that does not exist); 3 when the scenario has no comparison of its\n"
    "current steps and mocks (none at all, or only of a version whose steps or\n"
    "mocks differ); 2 on a usage error.\n"
    "--require-approval: improved or unchanged opens the gate only when the\n"
    "comparison is of the scenario's current version (3 otherwise) and its newest\n"
    "approval is 'approved' (1 when rejected, 4 when it has no approval yet).\n"
    "Table output: one line 'verdict=V delta=D comparison=ID' (delta 'null' when\n"
    "inconclusive); when the gate stays closed, stderr says why.\n"
    "JSON output: the comparison object.\n"
    "Either format: a side whose agent had to be killed after its last step also\n"
    "gets 'olivares: candidate run ID completed, but NOTE' (or 'baseline run') on\n"
    "stderr; the verdict line and the exit status are unchanged.\n";

const char cli_runs_junit_help[] =
    "GET /v1/m/sandbox/runs/ID/junit.\n"
    "Prints the server's JUnit XML as received, whatever -o says (the common option\n"
    "is accepted, but XML is the only output): one testsuite for the run\n"
    "(properties run_id, backend, isolated, scored, …). A scored run has one\n"
    "testcase per expectation of its suite (score_details): a run that passed its\n"
    "suite has no <failure>, one that did not a <failure> per failed expectation;\n"
    "a mock miss is a property, not a failure. An unscored run has one testcase\n"
    "per step; a mock miss or an agent error is a <failure>.\n"
    "The document follows the common JUnit schema read by\n"
    "Jenkins, GitLab and others.\n"
    "Example:\n"
    "  olivares sandbox runs junit RUN_ID > olivares-junit.xml\n";

static const struct cli_opt comparisons_list_opts[] = {
    {"scenario", "ID", "only the comparisons of this scenario"},
    {"limit", "N", "at most N comparisons, 1..500 (default 50)"},
    {"offset", "N", "skip the first N comparisons (default 0)"},
    {NULL, NULL, NULL},
};

static const struct cli_opt comparisons_no_opts[] = {{NULL, NULL, NULL}};

const struct cli_command cli_comparisons_commands[] = {
    {"list", cmd_comparisons_list, "List comparisons, newest first (any role).", NULL,
     comparisons_list_opts, NULL,
     "GET /v1/m/sandbox/comparisons?scenario=ID&limit=N&offset=N.\n"
     "Table output: one row per comparison: ID SCENARIO SUITE BASELINE CANDIDATE\n"
     "VERDICT DELTA CREATED_AT (BASELINE and CANDIDATE are the variants; DELTA '-'\n"
     "when inconclusive).\n"},
    {"get", cmd_comparisons_get, "Show one comparison (any role).", NULL, comparisons_no_opts, "ID",
     "GET /v1/m/sandbox/comparisons/ID.\n"
     "Table output: the comparison's fields, one row per side (SIDE VARIANT RUN\n"
     "STATUS SCORED SCORE), the steps whose outputs differ, then 'statistics:'\n"
     "(stats and pass^k), the runs per repeat (SIDE REPEAT RUN) and the flaky\n"
     "steps (SIDE SEQ KEY).\n"},
    {"junit", cmd_comparisons_junit, "Export a decided comparison as JUnit XML (any role).", NULL,
     comparisons_no_opts, "ID",
     "GET /v1/m/sandbox/comparisons/ID/junit.\n"
     "Prints the server's JUnit XML as received, whatever -o says: one testsuite\n"
     "(properties verdict, delta, tolerance, baseline_run_id, candidate_run_id, …)\n"
     "with three testcases: baseline and candidate (a <failure> when that side's\n"
     "run failed or was not scored) and verdict (a <failure> when regressed or\n"
     "inconclusive). A pending comparison is refused (409): nothing is printed.\n"
     "Example:\n"
     "  olivares sandbox comparisons junit CMP_ID > olivares-junit.xml\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
