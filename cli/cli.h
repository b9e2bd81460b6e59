#ifndef OLIVARES_CLI_CLI_H
#define OLIVARES_CLI_CLI_H
/**
 * The `olivares` CLI: a libcurl + jansson client of the REST API
 * (docs/api.md, docs/cli.md). This header is private to cli/.
 *
 * Exit status of the program (and of every command function):
 *   CLI_EXIT_OK     0  success
 *   CLI_EXIT_FAIL   1  the server refused, the server could not be reached,
 *                      a local file could not be read or is not valid input
 *   CLI_EXIT_USAGE  2  bad command line (unknown command or option, missing
 *                      or malformed value); the message ends with a hint to --help
 *   CLI_EXIT_NO_COMPARISON 3  `sandbox gate` only: the scenario has no
 *                      comparison of its current steps and mocks (a gate that
 *                      finds no evidence stays closed; regressed and
 *                      inconclusive verdicts exit 1)
 *   CLI_EXIT_NOT_APPROVED 4  `sandbox gate --require-approval` only: the
 *                      verdict would open the gate but no one approved it yet
 *                      (a rejected one exits 1)
 *   CLI_EXIT_INTERRUPTED 130  a command that waits for a run (or a
 *                      comparison) got SIGINT: the run goes on on the server,
 *                      and stderr says how to follow it (128 + SIGINT, what a
 *                      shell reports for a process the signal killed)
 *
 * Every message goes to stderr, starts with "olivares: " and never contains
 * the API token.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

#include "model/buf.h"

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_NO_COMPARISON = 3,
	CLI_EXIT_NOT_APPROVED = 4,
	CLI_EXIT_INTERRUPTED = 130,
};

/** Largest file the CLI reads (seed, steps, mocks): the API's request limit,
 * 1 MiB (model/limits.h MODEL_MAX_REQUEST_BYTES); a file one byte longer is
 * refused before any request is sent. */
#define CLI_MAX_FILE_BYTES (1024 * 1024)

/** Largest response body the CLI accepts (bytes). A run's outputs can hold
 * 1000 steps of 64 KiB each, JSON-escaped: 256 MiB leaves room for that. */
#define CLI_MAX_RESPONSE_BYTES (256u * 1024 * 1024)

/** Request timeout in seconds (connect + transfer) of a GET, PUT or
 * DELETE. */
#define CLI_TIMEOUT_SECONDS 60L
/** How long the commands that create a run or a comparison (scenarios
 * run, replay, compare) ask the server to hold their POST for the end
 * ("Prefer: wait=N", 1..60 on the server): short, so that one CLI does not
 * hold a FastCGI worker for long; after it the CLI polls the record. */
#define CLI_WAIT_SECONDS 10L
/** The timeout of a POST: the server runs nothing inside a request any
 * more (a run is a job it answers 202 for), so the normal timeout plus the
 * longest Prefer wait this CLI asks for. */
#define CLI_POST_TIMEOUT_SECONDS (CLI_TIMEOUT_SECONDS + CLI_WAIT_SECONDS)
/** Pace of the polls of a run or comparison that is not done: the first
 * after this many milliseconds, each next one half as long again, at most
 * CLI_POLL_MAX_MS apart. */
#define CLI_POLL_FIRST_MS 100L
#define CLI_POLL_MAX_MS 1000L
/** How long a request answered 429 busy (the tenant over its max_active_runs: nothing was
 * run or written) is tried again, waiting as its Retry-After says, before
 * the 429 is the answer: OLIVARES_BUSY_WAIT seconds (0: never), default
 * this. */
#define CLI_BUSY_WAIT_DEFAULT 60L

enum cli_format {
	CLI_FORMAT_TABLE = 0,
	CLI_FORMAT_JSON,
};

/** What the configuration file gave (cli_config_load): url and token are
 * malloc'ed strings or NULL (owned; cli_config_release). */
struct cli_config {
	char path[4096]; /* the file looked at, "" when none (OLIVARES_CONFIG=) */
	char *url;
	char *token; /* never printed */
};

/**
 * Read the CLI's configuration file into *cfg (initialised here): the file
 * $OLIVARES_CONFIG names (empty: no file), else
 * $XDG_CONFIG_HOME/olivares/config (XDG_CONFIG_HOME absolute), else
 * $HOME/.config/olivares/config. An INI file: the keys url and token,
 * before any section or in [olivares]. A default file that does not exist
 * gives nothing. Returns CLI_EXIT_OK, or CLI_EXIT_USAGE after printing
 * "olivares: FILE: ..." (the file named by OLIVARES_CONFIG missing, not a
 * regular file, readable or writable by group or others, or malformed:
 * "line N: ..." naming the key, never a value); *cfg then holds nothing.
 */
int cli_config_load(struct cli_config *cfg);

/** Free what cli_config_load kept (the token's bytes are zeroed first). */
void cli_config_release(struct cli_config *cfg);

/** Settings of one invocation. Strings point into argv, the environment or
 * config (not owned). url and token are NULL until the command line is
 * parsed and cli_settings_resolve has run. */
struct cli_ctx {
	enum cli_format format;
	const char *url;   /* base URL, e.g. "http://127.0.0.1:8080" */
	const char *token; /* API token or NULL; never printed */
	char cmd[128];     /* "olivares sandbox generate", for messages */
	/* the Idempotency-Key of this command's POST (--idempotency-key), or
	 * NULL: every POST then gets a random one of its own (cli/http.c) */
	const char *idempotency_key;
	/* where cli_idempotency_key_fix keeps the key it made */
	char own_idempotency_key[33];
	/* the configuration file's settings (owned: cli_config_release) */
	struct cli_config config;
};

/** The --idempotency-key option of the commands that create (scenarios
 * create, scenarios run, compare, replay): one entry of their option
 * table. */
#define CLI_OPT_IDEMPOTENCY_KEY                                                                    \
	{                                                                                          \
		"idempotency-key", "KEY",                                                          \
		    "Idempotency-Key of the request (default: a random one); the same KEY "        \
		    "again gets the first answer"                                                  \
	}

/** Longest Idempotency-Key the server takes (bytes). */
#define CLI_IDEMPOTENCY_KEY_MAX 255

/** The --no-wait option of the commands that wait for what they create
 * (scenarios run, replay, compare): a flag. */
#define CLI_OPT_NO_WAIT                                                                            \
	{                                                                                          \
		"no-wait", NULL,                                                                   \
		    "do not wait: print what the server took (queued, pending), exit 0"            \
	}

/** Most options a leaf command declares (besides the common ones). */
#define CLI_MAX_OPTS 16

/** One option of a leaf command: `--name VALUE`, or a flag `--name` when
 * metavar is NULL (cli_arg then gives a non-NULL value when it was
 * given). */
struct cli_opt {
	const char *name;    /* long name without "--", e.g. "count" */
	const char *metavar; /* "N", "FILE|-", or NULL for a flag */
	const char *help;    /* one line for --help */
};

/** Parsed command line of a leaf command. val[i] is the value given for
 * opts[i] (NULL if absent; the last occurrence wins); pos is the positional
 * argument (NULL if the command takes none). */
struct cli_args {
	const struct cli_opt *opts;
	const char *val[CLI_MAX_OPTS];
	const char *pos;
};

/** Value of option `name` or NULL if it was not given. `name` must be one
 * of the command's declared options (abort otherwise: a programming error). */
const char *cli_arg(const struct cli_args *a, const char *name);

/**
 * A node of the command tree (a table of commands, as git's commands[]). A
 * group has `sub` (terminated by an entry whose name is NULL) and no `fn`; a
 * leaf has `fn`, its options and at most one positional argument.
 */
struct cli_command {
	const char *name;
	int (*fn)(struct cli_ctx *ctx, const struct cli_args *args);
	const char *summary;           /* one line in the parent's command list */
	const struct cli_command *sub; /* group: subcommands */
	const struct cli_opt *opts;    /* leaf: options, terminated by {NULL} */
	const char *positional;        /* leaf: "ID", "MODULE", or NULL */
	const char *details;           /* leaf: description and output, for --help */
};

/** The command tables (cli/cmd_modules.c, cli/cmd_sandbox.c). */
extern const struct cli_command cli_modules_commands[];
extern const struct cli_command cli_sandbox_commands[];

/* ---- comparisons, gate, JUnit export (cli/cmd_compare.c) -----------------
 * Registered in cli_sandbox_commands (cli/cmd_sandbox.c): each leaf is its
 * function, its option list (terminated by {NULL}) and its --help text. */

/** `sandbox compare`: POST /v1/m/sandbox/comparisons (docs/scoring.md). */
int cli_cmd_compare(struct cli_ctx *ctx, const struct cli_args *args);
extern const struct cli_opt cli_compare_opts[];
extern const char cli_compare_help[];

/** `sandbox gate --scenario ID`: the verdict of the newest comparison as the
 * exit status: CLI_EXIT_OK for improved or unchanged, CLI_EXIT_FAIL for
 * regressed, inconclusive or any error (a missing scenario included),
 * CLI_EXIT_NO_COMPARISON for none of the scenario's current steps and mocks
 * (of another version whose baseline run's scenario_digest is not the
 * scenario's digest). */
int cli_cmd_gate(struct cli_ctx *ctx, const struct cli_args *args);
extern const struct cli_opt cli_gate_opts[];
extern const char cli_gate_help[];
/** sandbox approve|reject ID --reason TEXT: POST …/comparisons/ID/approval
 * with decision approved or rejected; prints the approval. */
int cli_cmd_approve(struct cli_ctx *ctx, const struct cli_args *args);
int cli_cmd_reject(struct cli_ctx *ctx, const struct cli_args *args);
extern const struct cli_opt cli_approval_opts[];
extern const char cli_approve_help[];
extern const char cli_reject_help[];

/** `sandbox runs junit ID`: the run's JUnit XML, printed byte for byte. */
int cli_cmd_runs_junit(struct cli_ctx *ctx, const struct cli_args *args);
extern const char cli_runs_junit_help[];

/** `sandbox comparisons list|get`. */
extern const struct cli_command cli_comparisons_commands[];

/* ---- sessions and replay (cli/cmd_replay.c) ------------------------------
 * docs/replay.md; registered in cli_sandbox_commands. */

/** `sandbox replay SESSION`: POST /v1/m/sandbox/replays; the run, and in a
 * table its divergence from the recorded outputs. */
int cli_cmd_replay(struct cli_ctx *ctx, const struct cli_args *args);
extern const struct cli_opt cli_replay_opts[];
extern const char cli_replay_help[];

/** `sandbox sessions import|list|get`. import reads a JSON array or JSON
 * lines of at most 16 MiB, checks all of it, then posts one session per
 * request and stops at the first refusal. */
extern const struct cli_command cli_sessions_commands[];

/* ---- messages (cli/main.c) ---------------------------------------------- */

/** Print "olivares: <message>" to stderr (after erasing a progress line,
 * cli_progress_clear); returns CLI_EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** cli_fail with a va_list. */
int cli_vfail(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/** Print "olivares: <message>" and "Try '<ctx->cmd> --help'." to stderr;
 * returns CLI_EXIT_USAGE. */
int cli_usage_error(const struct cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Parse a decimal integer option value (optional sign, no spaces, no
 * trailing text, within long long). Returns 0, or -1 after printing a usage
 * error naming `--opt`.
 */
int cli_parse_int(const struct cli_ctx *ctx, const char *opt, const char *s, long long *out);

/**
 * Set body[key] to the value of the option `opt` of a, when it was given,
 * as a JSON string. Returns 0 (also when it was not given), or -1 after a
 * usage error ("--opt must be UTF-8 text": jansson takes UTF-8 only).
 */
int cli_body_set_string(struct cli_ctx *ctx, json_t *body, const char *key,
                        const struct cli_args *a, const char *opt);

/* ---- HTTP (cli/http.c) -------------------------------------------------- */

/**
 * Perform one API request: `method` ("GET", "POST", "PUT", "DELETE") on
 * ctx->url + `path` (starts with "/", components already escaped with
 * cli_http_escape). `body`, if not NULL, is sent as compact JSON
 * (json_dumps JSON_COMPACT) with Content-Type: application/json; POST and
 * PUT always pass a body (an empty object at least).
 * On a 2xx response whose body is JSON, *out receives it (caller
 * json_decref) and 0 is returned. Otherwise the error is printed
 * ("olivares: <message> (<code>, HTTP <status>)", "olivares: cannot reach
 * <url>: <reason>", …) and -1 is returned.
 */
int cli_http_call(const struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                  json_t **out);

/** What cli_http_request adds to cli_http_call; every member may be 0. */
struct cli_http_opts {
	const char *header;  /* one more request header line ("Prefer: wait=10"), or NULL */
	long handled_status; /* a non-2xx status the caller reports itself, or 0 */
	int quiet;           /* print nothing on failure (a progress line's look-up) */
};

/**
 * cli_http_call with opts (NULL: none). Returns 0 on a 2xx JSON answer
 * (*out, caller json_decref); 1 on an answer of status
 * opts->handled_status, printing nothing (*out its JSON body, or NULL when
 * it is not JSON); -1 otherwise, the error printed unless opts->quiet or
 * the command was interrupted (cli_interrupted: then nothing is printed and
 * the caller says what goes on). *status (when not NULL) receives the HTTP
 * status, 0 when there was no answer.
 */
int cli_http_request(const struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                     const struct cli_http_opts *opts, json_t **out, long *status);

/**
 * GET ctx->url + `path` (as for cli_http_call) with "Accept: <accept>" and
 * keep the 2xx body as bytes in *out (initialised here, capped at
 * CLI_MAX_RESPONSE_BYTES; caller model_buf_release, also on failure).
 * Same token, timeout and no-redirect rules as cli_http_call. Returns 0,
 * or -1 after printing the error ("olivares: <message> (<code>, HTTP
 * <status>)", "olivares: HTTP <status>: <start of the body>", …).
 */
int cli_http_get_raw(const struct cli_ctx *ctx, const char *path, const char *accept,
                     struct model_buf *out);

/**
 * Take --idempotency-key of a (when given) as the key of the command's POST
 * (ctx->idempotency_key). The key must be 1..CLI_IDEMPOTENCY_KEY_MAX
 * characters of A-Z a-z 0-9 - _ . : ~ + / = (what the server accepts).
 * Returns 0, or -1 after a usage error.
 */
int cli_idempotency_key_opt(struct cli_ctx *ctx, const struct cli_args *a);

/**
 * Make sure the command's POST has a key the command knows (to name it in
 * a message): without --idempotency-key, 16 random bytes (OpenSSL) as 32
 * hex characters, kept in ctx->own_idempotency_key. Returns 0, or -1 when
 * the generator fails.
 */
int cli_idempotency_key_fix(struct cli_ctx *ctx);

/** Percent-encode s for one path segment or query value (RFC 3986
 * unreserved characters kept). Returns a malloc'ed string (caller frees). */
char *cli_http_escape(const char *s);

/** Longest request path the CLI builds (ids, query strings). */
#define CLI_PATH_MAX_BYTES (64 * 1024)

/** prefix + id + suffix into *path (initialised here, capped at
 * CLI_PATH_MAX_BYTES; caller model_buf_release). An id that is not an id
 * (model_id_valid: 32 lowercase hex characters) is sent as "-", so the
 * server answers 404 for it instead of the CLI guessing: a "/" or ".."
 * in it, escaped or not, would be resolved by the web server into another
 * path ("runs get ../../../modules" read the module list as a run). */
void cli_path_id(struct model_buf *path, const char *prefix, const char *id, const char *suffix);

/** Append "?name=value" or "&name=value" (value escaped) when value is not
 * NULL. Returns 0, or -1 after a usage error (the path would be too long). */
int cli_query_add(const struct cli_ctx *ctx, struct model_buf *path, const char *name,
                  const char *value);

/** Check the integer option `name` of a (if given) and append it to the
 * query in canonical form. Returns 0, or -1 after a usage error. */
int cli_query_add_int(const struct cli_ctx *ctx, struct model_buf *path, const struct cli_args *a,
                      const char *name);

/* ---- input files (cli/input.c) ------------------------------------------ */

/**
 * Read the file `name` ("-" = stdin) byte for byte into *out (initialised
 * here; caller model_buf_release). A final newline is kept. Refuses a file
 * larger than CLI_MAX_FILE_BYTES. Returns 0, or -1 after printing
 * "olivares: <name>: <reason>".
 */
int cli_read_file(const char *name, struct model_buf *out);

/**
 * cli_read_file with another cap: refuses a file larger than max bytes
 * with "olivares: <name>: larger than <max> bytes (<limit>)", limit
 * naming the rule (e.g. "16 MiB, the limit of a sessions file").
 */
int cli_read_file_max(const char *name, size_t max, const char *limit, struct model_buf *out);

/** cli_read_file, then check the bytes are valid UTF-8 without NUL (the
 * seed becomes a JSON string; the server refuses anything else). */
int cli_read_text_file(const char *name, struct model_buf *out);

/**
 * Load a steps file: a JSON array of step objects, or an object holding
 * such an array under "steps" or "samples" (the output of `sandbox
 * generate -o json`, or its raw API response). *out receives a new
 * reference to the array. Returns 0, or -1 after printing e.g.
 * "olivares: steps.json: invalid JSON at line 1 column 2: …".
 */
int cli_load_steps(const char *name, json_t **out);

/** Same for a mocks file: an array of mock objects or an object with a
 * "mocks" array. */
int cli_load_mocks(const char *name, json_t **out);

/* ---- output (cli/print.c) ----------------------------------------------- */

/** Print v as JSON indented by 2 spaces, then a newline, on stdout. */
void cli_print_json(const json_t *v);

/**
 * Copy of the n bytes at s with control characters escaped, so that one
 * value stays on one line of a table and reads as it is: backslash as
 * "\\", newline "\n", CR "\r", tab "\t", other bytes < 0x20 and 0x7f as
 * "\xHH"; the code points a reader could not see or that reorder the line
 * (model_text_invisible: C1 controls, zero-width and bidi marks,
 * overrides, isolates) as "\uXXXX", as the admin view writes them; a byte
 * that is not UTF-8 as "\xHH"; everything else (other UTF-8) kept.
 * Returns a malloc'ed string (caller frees).
 */
char *cli_escape(const char *s, size_t n);

/** A value rendered for a table cell: strings escaped, null as "-",
 * booleans "true"/"false", numbers as JSON, arrays and objects compact JSON.
 * malloc'ed (caller frees). */
char *cli_render(const json_t *v);

/** Print each member of obj as "key   value" (keys aligned), in the
 * server's order, skipping the keys listed in skip (NULL-terminated, may be
 * NULL). */
void cli_print_fields(const json_t *obj, const char *const *skip);

/**
 * A run the server recorded as failed, degraded or cancelled: one line on stderr,
 * "olivares: run ID STATUS: REASON" (escaped as cli_escape does), so that
 * an outcome a reader of the table or JSON might miss is said. A completed
 * run with a shutdown note (its agent had to be killed after the last
 * step, model/runspec.h) gets "olivares: run ID completed, but NOTE". The
 * exit status is not changed: the request succeeded and the run is
 * recorded (`sandbox gate` is what a pipeline decides on). run is
 * borrowed; other runs print nothing.
 */
void cli_note_run_outcome(const json_t *run);

/**
 * The shutdown notes of a comparison's two runs (the API's comparison
 * object, sql/store.h store_comparison_get): for each side, baseline then
 * candidate, whose run completed and whose "shutdown" is a string (its
 * agent had to be killed after the last step, model/runspec.h), one line on
 * stderr, "olivares: baseline run ID completed, but NOTE" (or "candidate
 * run"), escaped as cli_escape does. A side with shutdown null or absent
 * (an older server) prints nothing. The note is not a score: the verdict
 * and the exit status are not changed. Then, when its "same_agent" is
 * true, "olivares: warning: both sides ran the same agent program (NAME[,
 * sha256 HEX]) with the same mocks: …" (the built-in agent's line also
 * says that a variant naming no program runs it). cmp is borrowed.
 */
void cli_note_comparison(const json_t *cmp);

/** A table column: header title, and either the member `key` of each item
 * rendered with cli_render, or `cell(item)` (malloc'ed string). */
struct cli_column {
	const char *title;
	const char *key;
	char *(*cell)(const json_t *item);
};

/** Print a header row then one row per element of arr (an array of
 * objects); columns separated by two spaces and aligned, the last one not
 * padded. cols is terminated by an entry whose title is NULL. */
void cli_print_table(const json_t *arr, const struct cli_column *cols);

/** What prints an answer in table form, or says more about it on stderr
 * (resp borrowed). */
typedef void (*cli_printer)(const json_t *resp);

/** An answer resp printed: as JSON with -o json (cli_print_json), else by
 * table; then note(resp) when note is not NULL. resp borrowed. */
void cli_print_answer(const struct cli_ctx *ctx, const json_t *resp, cli_printer table,
                      cli_printer note);

/**
 * One API call, cli_http_call(ctx, method, path, body), then its answer
 * printed: as JSON with -o json (cli_print_json), else by table. note, if
 * not NULL, is then called on the answer in either format (what a run or a
 * comparison says on stderr: cli_note_run_outcome,
 * cli_note_comparison). Takes body (NULL for none). Returns
 * CLI_EXIT_OK, or CLI_EXIT_FAIL after the error was printed.
 */
int cli_call_print(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                   cli_printer table, cli_printer note);

/**
 * A list command: GET base, its query the options of a named in filters
 * (NULL-terminated, may be NULL: each a string option whose name is also
 * its query parameter) that were given, then the integer options limit and
 * offset (which the command declares), in that order; the answer printed
 * as cli_call_print does. Returns the exit status: CLI_EXIT_USAGE after a
 * usage error (a malformed --limit or --offset, a path too long).
 */
int cli_call_list(struct cli_ctx *ctx, const struct cli_args *a, const char *base,
                  const char *const *filters, cli_printer table);

/** cli_call_print on the path prefix + id + suffix (cli_path_id). */
int cli_call_print_id(struct cli_ctx *ctx, const char *method, const char *prefix, const char *id,
                      const char *suffix, json_t *body, cli_printer table, cli_printer note);

/* ---- waiting for runs and comparisons (cli/wait.c) ----------------------- */

/** Catch SIGINT from now on, unless it is ignored (a background job of a
 * shell without job control, nohup: it stays ignored): cli_interrupted()
 * then says it came, and a request or a sleep under way ends early. */
void cli_catch_sigint(void);

/** 1 once SIGINT came after cli_catch_sigint, else 0. */
int cli_interrupted(void);

/** Sleep ms milliseconds, less when SIGINT comes. */
void cli_sleep_ms(long ms);

/** Show line as the progress line on stderr when stderr is a terminal,
 * rewritten in place with "\r" and cut to the terminal's width; nothing
 * when it is not a terminal. line is copied. */
void cli_progress_show(const char *line);

/** Erase the progress line, if one is shown; every message and the final
 * output come after this (cli_fail calls it). */
void cli_progress_clear(void);

/** What a creating command makes. */
enum cli_job_kind {
	CLI_JOB_RUN = 0,    /* a run (scenarios run, replay): GET /v1/m/sandbox/runs/ID */
	CLI_JOB_COMPARISON, /* GET /v1/m/sandbox/comparisons/ID */
};

/**
 * The POST of a command that creates a run or a comparison, then its end.
 * wait (no --no-wait): the POST asks "Prefer: wait=CLI_WAIT_SECONDS"; an
 * answer that is not done (a run queued or running, a comparison pending)
 * is polled with GET (CLI_POLL_FIRST_MS, then slower up to
 * CLI_POLL_MAX_MS) until it is, with a progress line on stderr when it is a
 * terminal ("olivares: run ID: running, step 3/10"; a comparison shows both
 * sides); then the finished record is printed as cli_call_print prints
 * with table and note. !wait: the answer is printed as it came, by
 * queued_table in a table, then note. Takes body. Returns CLI_EXIT_OK,
 * CLI_EXIT_FAIL (the error printed; while polling, also that the run goes
 * on and how to follow it) or CLI_EXIT_INTERRUPTED (SIGINT: stderr says
 * the run goes on and how to follow it, or, before the server answered,
 * how to take the request up again with its Idempotency-Key).
 */
int cli_create_and_wait(struct cli_ctx *ctx, int wait, enum cli_job_kind kind, const char *path,
                        json_t *body, cli_printer table, cli_printer queued_table,
                        cli_printer note);

/**
 * cli_create_and_wait that also hands back what it printed: with wait and
 * CLI_EXIT_OK, *out (when out is not NULL) receives the finished record
 * (caller json_decref); it is left untouched otherwise.
 */
int cli_create_and_wait_keep(struct cli_ctx *ctx, int wait, enum cli_job_kind kind,
                             const char *path, json_t *body, cli_printer table,
                             cli_printer queued_table, cli_printer note, json_t **out);

/**
 * Follow the run id (GET /v1/m/sandbox/runs/ID until it is neither queued
 * nor running, progress as above); *run receives the finished run (caller
 * json_decref), NULL on failure. Returns as cli_create_and_wait.
 */
int cli_wait_run_id(struct cli_ctx *ctx, const char *id, json_t **run);

#endif
