/*
 * olivares sandbox sessions import|list|get | replay: the historical
 * sessions and replay routes (docs/replay.md; session format and
 * reconstruction rules in model/history.h).
 *
 * import reads a sessions file (a JSON array of session objects, or JSON
 * lines: one session per line), checks all of it locally, then posts one
 * session per request, stopping at the first refusal; replay posts one
 * replay run and shows, besides the run, how its outputs diverge from the
 * recorded ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/limits.h"

/* A sessions file may hold many sessions (each posted on its own, each
 * within the API's 1 MiB request limit): 16 MiB for the whole file. */
#define SESSIONS_FILE_MAX_BYTES (16u * 1024 * 1024)

/* ---- reading the sessions file ------------------------------------------- */

static const char *display_name(const char *name)
{
	return strcmp(name, "-") == 0 ? "<stdin>" : name;
}

/*
 * One session of the file, and where it came from for messages: "index 3"
 * (0-based, in an array) or "line 7" (1-based, in JSON lines).
 */
struct session_item {
	json_t *session;
	char where[48];
};

struct session_list {
	struct session_item *items;
	size_t n, alloc;
};

static void list_push(struct session_list *l, json_t *session, const char *where)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 16;
		l->items = model_xrealloc(l->items, l->alloc * sizeof(*l->items));
	}
	l->items[l->n].session = session;
	snprintf(l->items[l->n].where, sizeof(l->items[l->n].where), "%s", where);
	l->n++;
}

static void list_clear(struct session_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		json_decref(l->items[i].session);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* Each session must be an object and fit one request once encoded the way
 * cli_http_call sends it. */
static int check_session(const char *name, const json_t *s, const char *where)
{
	char *enc;
	size_t len;

	if (!json_is_object(s)) {
		cli_fail("%s: %s: a session must be a JSON object", display_name(name), where);
		return -1;
	}
	enc = json_dumps(s, JSON_COMPACT);
	if (!enc) {
		cli_fail("%s: %s: cannot encode the session", display_name(name), where);
		return -1;
	}
	len = strlen(enc);
	free(enc);
	if (len > MODEL_MAX_REQUEST_BYTES) {
		cli_fail("%s: %s: the session is %zu bytes as JSON, more than the API's "
		         "request limit of %d bytes (1 MiB)",
		         display_name(name), where, len, MODEL_MAX_REQUEST_BYTES);
		return -1;
	}
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int parse_array(const char *name, const struct model_buf *file, struct session_list *l)
{
	json_error_t jerr;
	json_t *doc, *item;
	char where[48];
	size_t i;
	int rc = -1;

	doc = json_loadb(file->data, file->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		cli_fail("%s: invalid JSON at line %d column %d: %s", display_name(name), jerr.line,
		         jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_array(doc)) {
		cli_fail("%s: expected a JSON array of sessions or JSON lines", display_name(name));
		goto out;
	}
	json_array_foreach(doc, i, item)
	{
		snprintf(where, sizeof(where), "index %zu", i);
		if (check_session(name, item, where))
			goto out;
		list_push(l, json_incref(item), where);
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

/* JSON lines: one session per line; blank lines are skipped. */
static int parse_lines(const char *name, const struct model_buf *file, struct session_list *l)
{
	const char *p = file->data, *end = file->data + file->len, *eol;
	json_error_t jerr;
	json_t *s;
	char where[48];
	size_t line = 0, i, len;
	int blank;

	while (p < end) {
		line++;
		eol = memchr(p, '\n', (size_t)(end - p));
		len = eol ? (size_t)(eol - p) : (size_t)(end - p);
		blank = 1;
		for (i = 0; i < len && blank; i++)
			blank = is_space(p[i]);
		snprintf(where, sizeof(where), "line %zu", line);
		if (!blank) {
			s = json_loadb(p, len, JSON_REJECT_DUPLICATES, &jerr);
			if (!s) {
				cli_fail("%s: line %zu: invalid JSON at column %d: %s",
				         display_name(name), line, jerr.column, jerr.text);
				return -1;
			}
			if (check_session(name, s, where)) {
				json_decref(s);
				return -1;
			}
			list_push(l, s, where);
		}
		p += len + (eol ? 1 : 0);
	}
	return 0;
}

/* A file that is one JSON object as a whole (one session, maybe spread over
 * several lines as an exporter indents it): 1 and the session, else 0 (JSON
 * lines: more than one value, or not JSON at all). */
static int parse_single(const char *name, const struct model_buf *file, struct session_list *l,
                        int *rc)
{
	json_t *doc;

	doc = json_loadb(file->data, file->len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return 0;
	}
	*rc = check_session(name, doc, "the session");
	if (*rc)
		json_decref(doc);
	else
		list_push(l, doc, "the session");
	return 1;
}

/*
 * The whole file, checked before anything is sent: a broken line 5 must not
 * leave lines 1..4 imported. The first non-blank byte decides: '[' is one
 * JSON array; otherwise a file that is a single JSON object is one session,
 * and anything else is JSON lines.
 */
static int load_sessions(const char *name, struct session_list *l)
{
	struct model_buf file;
	size_t i;
	int rc = -1;

	if (cli_read_file_max(name, SESSIONS_FILE_MAX_BYTES, "16 MiB, the limit of a sessions file",
	                      &file))
		return -1;
	for (i = 0; i < file.len && is_space(file.data[i]); i++)
		;
	if (i < file.len && file.data[i] == '[')
		rc = parse_array(name, &file, l);
	else if (!parse_single(name, &file, l, &rc))
		rc = parse_lines(name, &file, l);
	if (rc == 0 && l->n == 0) {
		cli_fail("%s: no session to import", display_name(name));
		rc = -1;
	}
	model_buf_release(&file);
	return rc;
}

/* ---- sessions import ----------------------------------------------------- */

/* One line per imported session: id external_id events_count */
static void print_import_line(const json_t *resp)
{
	char *id = cli_render(json_object_get(resp, "id"));
	char *ext = cli_render(json_object_get(resp, "external_id"));
	char *n = cli_render(json_object_get(resp, "events_count"));

	printf("%s %s %s\n", id, ext, n);
	/* a long import shows its progress */
	fflush(stdout);
	free(id);
	free(ext);
	free(n);
}

static int cmd_sessions_import(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *file = cli_arg(a, "file");
	struct session_list l = {NULL, 0, 0};
	json_t *done, *resp;
	size_t i;
	int rc = CLI_EXIT_USAGE;

	done = json_array();
	if (!file || file[0] == '\0') {
		cli_usage_error(ctx, "--file is required (a file, or '-' for stdin)");
		goto out;
	}
	rc = CLI_EXIT_FAIL;
	if (load_sessions(file, &l))
		goto out;
	for (i = 0; i < l.n; i++) {
		if (cli_http_call(ctx, "POST", "/v1/m/sandbox/sessions", l.items[i].session,
		                  &resp)) {
			cli_fail("%s: %s (session %zu of %zu) was not imported; %zu imported "
			         "before it, none after",
			         display_name(file), l.items[i].where, i + 1, l.n, i);
			goto print;
		}
		json_array_append_new(done, resp);
		if (ctx->format == CLI_FORMAT_TABLE)
			print_import_line(resp);
	}
	rc = CLI_EXIT_OK;
print:
	/* -o json: the responses of the sessions imported, even after a refusal */
	if (ctx->format == CLI_FORMAT_JSON)
		cli_print_json(done);
out:
	list_clear(&l);
	json_decref(done);
	return rc;
}

/* ---- sessions list | get ------------------------------------------------- */

static const struct cli_column session_columns[] = {
    {"ID", "id", NULL},
    {"EXTERNAL_ID", "external_id", NULL},
    {"EVENTS", "events_count", NULL},
    {"CREATED_AT", "created_at", NULL},
    {NULL, NULL, NULL},
};

/* An http_exchange's cell: its request ("GET url") or its answer ("200
 * body"), rendered (escaped) as any cell is; another event's member. */
static char *exchange_cell(const json_t *item, int answer, const char *key)
{
	const json_t *http = json_object_get(item, "http");
	const json_t *res = json_object_get(item, "response");
	json_t *text;
	char *body = NULL, *s, *out;

	if (!json_is_object(http))
		return cli_render(json_object_get(item, key));
	if (answer) {
		if (json_object_get(res, "json"))
			body = json_dumps(json_object_get(res, "json"),
			                  JSON_COMPACT | JSON_ENCODE_ANY);
		if (asprintf(&s, "%lld %s",
		             (long long)(json_integer_value(json_object_get(res, "status")) ?: 200),
		             body            ? body
		             : json_string_value(json_object_get(res, "body")) ?: "") < 0)
			abort();
		free(body);
	} else if (asprintf(&s, "%s %s", json_string_value(json_object_get(http, "method")) ?: "",
	                    json_string_value(json_object_get(http, "url")) ?: "") < 0) {
		abort();
	}
	text = json_string(s);
	free(s);
	out = cli_render(text ? text : json_null());
	json_decref(text);
	return out;
}

static char *event_resource_cell(const json_t *item)
{
	return exchange_cell(item, 0, "resource");
}

static char *event_text_cell(const json_t *item)
{
	return exchange_cell(item, 1, "text");
}

static const struct cli_column event_columns[] = {
    {"SEQ", "seq", NULL},
    {"KIND", "kind", NULL},
    {"KEY", "key", NULL},
    {"RESOURCE", "resource", event_resource_cell},
    {"TEXT", "text", event_text_cell},
    {NULL, NULL, NULL},
};

static void print_session_list(const json_t *resp)
{
	cli_print_table(json_object_get(resp, "sessions"), session_columns);
}

static int cmd_sessions_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_list(ctx, a, "/v1/m/sandbox/sessions", NULL, print_session_list);
}

/* The session's fields, then its events as imported. */
static void print_session(const json_t *resp)
{
	static const char *const skip[] = {"events", NULL};

	cli_print_fields(resp, skip);
	printf("\nevents (%zu):\n", json_array_size(json_object_get(resp, "events")));
	cli_print_table(json_object_get(resp, "events"), event_columns);
}

static int cmd_sessions_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	return cli_call_print_id(ctx, "GET", "/v1/m/sandbox/sessions/", a->pos, "", NULL,
	                         print_session, NULL);
}

/* ---- replay -------------------------------------------------------------- */

/* The run's fields, then its divergence from the recorded outputs. */
static void print_replay(const json_t *run)
{
	static const char *const skip[] = {"divergence", NULL};
	const json_t *div = json_object_get(run, "divergence");
	const json_t *first = json_object_get(div, "first");
	json_t *rows;

	cli_print_fields(run, skip);
	fputc('\n', stdout);
	if (!json_is_object(div)) {
		/* degraded: nothing was replayed, so nothing was compared */
		puts("divergence: - (nothing replayed)");
		return;
	}
	rows = json_object();
	json_object_set(rows, "compared", json_object_get(div, "compared"));
	json_object_set(rows, "diverging", json_object_get(div, "diverging"));
	if (json_is_object(first)) {
		json_object_set(rows, "first_seq", json_object_get(first, "seq"));
		json_object_set(rows, "first_key", json_object_get(first, "key"));
		json_object_set(rows, "first_recorded", json_object_get(first, "recorded"));
		json_object_set(rows, "first_replayed", json_object_get(first, "replayed"));
	} else {
		json_object_set_new(rows, "first", json_null());
	}
	puts("divergence:");
	cli_print_fields(rows, NULL);
	json_decref(rows);
}

/* A replay as the server took it (--no-wait): its fields as 'runs get'
 * prints them; a divergence comes with its end. */
static void print_replay_queued(const json_t *run)
{
	cli_print_fields(run, NULL);
}

int cli_cmd_replay(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *body, *sid;

	body = json_object();
	sid = json_string(a->pos);
	if (!sid) {
		cli_usage_error(ctx, "SESSION must be UTF-8 text");
		goto usage;
	}
	json_object_set_new(body, "session_id", sid);
	if (cli_body_set_string(ctx, body, "variant", a, "variant") ||
	    cli_body_set_string(ctx, body, "backend", a, "backend") ||
	    cli_body_set_string(ctx, body, "suite", a, "suite") ||
	    cli_body_set_string(ctx, body, "scenario_id", a, "scenario") ||
	    cli_idempotency_key_opt(ctx, a))
		goto usage;
	return cli_create_and_wait(ctx, !cli_arg(a, "no-wait"), CLI_JOB_RUN,
	                           "/v1/m/sandbox/replays", body, print_replay, print_replay_queued,
	                           cli_note_run_outcome);
usage:
	json_decref(body);
	return CLI_EXIT_USAGE;
}

/* ---- command tables ------------------------------------------------------ */

const struct cli_opt cli_replay_opts[] = {
    {"variant", "V", "variant replayed (selects mocks and agent like a run)"},
    {"backend", "NAME", "isolation backend (default: your tenant's)"},
    {"suite", "S", "score the replay against suite S or S@N, as 'scenarios run'"},
    {"scenario", "ID", "also use this scenario's mocks (the session's win)"},
    CLI_OPT_IDEMPOTENCY_KEY,
    CLI_OPT_NO_WAIT,
    {NULL, NULL, NULL},
};

const char cli_replay_help[] =
    "POST /v1/m/sandbox/replays {\"session_id\",\"variant\",\"backend\",\"suite\",\n"
    "\"scenario_id\"} (editor). The server rebuilds the session's input timeline\n"
    "(model/history.h: inputs ordered by seq; the recorded tool results become\n"
    "the mocks, plus the mocks of --scenario, a session result winning on the\n"
    "same resource) and runs it like a scenario, as a run of kind replay: same\n"
    "runner, backends, policy checks, agents and scoring.\n"
    "A timeline that cannot be rebuilt (no input, a missing, duplicated or\n"
    "non-integer seq, an input without text, …) is still recorded, as a run\n"
    "with status degraded, zero steps, no outputs, isolated false and a reason\n"
    "naming the event that breaks it: never a fabricated replay.\n"
    "The same session, variant and backend always give the same output_digest\n"
    "(SHA-256 of the ordered outputs). divergence compares the replayed outputs\n"
    "with the session's recorded output events: compared (steps with a recorded\n"
    "output), diverging, and the first diverging step with both texts.\n"
    "Example:\n"
    "  olivares sandbox replay SESSION_ID --variant candidate\n"
    "  olivares sandbox runs outputs RUN_ID\n"
    "The replay is a run: the command waits for its end as 'scenarios run' does\n"
    "(progress on stderr when it is a terminal, Ctrl-C exits 130 and the replay\n"
    "goes on: 'olivares sandbox runs watch ID'); --no-wait prints it as the server\n"
    "took it (queued; its fields as 'runs get' prints them) and exits 0.\n"
    "Table output: the run's fields (status, steps_total, output_digest, reason,\n"
    "…), then 'divergence:' with compared, diverging and first_seq, first_key,\n"
    "first_recorded, first_replayed (or first -), or 'divergence: - (nothing replayed)' for a\n"
    "degraded replay. A replay recorded failed or degraded, or completed with a\n"
    "shutdown note (its agent had to be killed after its last step), also gets\n"
    "one line on stderr ('olivares: run ID …'); the exit status stays 0.\n";

static const struct cli_opt import_opts[] = {
    {"file", "FILE|-", "sessions file (required); '-' reads stdin"},
    {NULL, NULL, NULL},
};

static const struct cli_opt sessions_list_opts[] = {
    {"limit", "N", "at most N sessions, 1..500 (default 50)"},
    {"offset", "N", "skip the first N sessions (default 0)"},
    {NULL, NULL, NULL},
};

static const struct cli_opt no_opts[] = {{NULL, NULL, NULL}};

const struct cli_command cli_sessions_commands[] = {
    {"import", cmd_sessions_import, "Import historical sessions from a file (editor).", NULL,
     import_opts, NULL,
     "POST /v1/m/sandbox/sessions, once per session. The file (at most 16 MiB, read\n"
     "byte for byte) is either a JSON array of session objects or JSON lines, one\n"
     "session object per line (blank lines skipped): a first non-blank byte '['\n"
     "means an array; a file that is one JSON object is one session. A session is\n"
     "  {\"external_id\":\"…\",\"events\":[{\"seq\":1,\"kind\":\"input\",\"text\":\"…\"},\n"
     "   {\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"…\",\"text\":\"…\"},\n"
     "   {\"seq\":3,\"kind\":\"output\",\"text\":\"…\"},…]}\n"
     "(kinds input, tool_call, tool_result, output; optional key). The server\n"
     "keeps a session as recorded, broken or not: a replay says what breaks it.\n"
     "The whole file is checked first (JSON, one object per session, each within\n"
     "the 1 MiB request limit) and nothing is sent if any of it is wrong; then the\n"
     "sessions are posted in order and the import stops at the first refusal,\n"
     "naming its index (array, from 0) or line (from 1).\n"
     "Sessions are append-only: they cannot be changed or deleted.\n"
     "Example:\n"
     "  olivares sandbox sessions import --file sessions.jsonl\n"
     "  export-history | olivares sandbox sessions import --file -\n"
     "Table output: one line per imported session: ID EXTERNAL_ID EVENTS_COUNT.\n"
     "JSON output: the array of the server's answers (those imported, on error).\n"},
    {"list", cmd_sessions_list, "List imported sessions, newest first (any role).", NULL,
     sessions_list_opts, NULL,
     "GET /v1/m/sandbox/sessions?limit=N&offset=N.\n"
     "Table output: one row per session: ID EXTERNAL_ID EVENTS CREATED_AT.\n"},
    {"get", cmd_sessions_get, "Show one session with its events as imported (any role).", NULL,
     no_opts, "ID",
     "GET /v1/m/sandbox/sessions/ID.\n"
     "Table output: the session's fields, then its events in the order imported\n"
     "(SEQ KIND KEY RESOURCE TEXT; an http_exchange shows its request as\n"
     "RESOURCE and its answer's status and body as TEXT); control characters\n"
     "are shown escaped.\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
