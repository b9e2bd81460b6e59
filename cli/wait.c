/*
 * Waiting for what a command made: a run is a job on the server, answered
 * 202 while it is queued or running (a comparison: pending until its two
 * runs end and it has a verdict). The creating commands ask the server to
 * hold the answer a little ("Prefer: wait=N"), then poll the record with
 * GET at a modest pace until it is done, and print the finished record as
 * the server's 201 would have been printed, so a user sees no difference.
 *
 * While waiting, a progress line on stderr when it is a terminal (and
 * nothing when it is not: pipelines and tests compare stderr), and SIGINT
 * ends the wait, not the run: the command says how to follow it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

/* Longest progress line kept (bytes); longer ones are cut. */
#define PROGRESS_MAX 512

static volatile sig_atomic_t got_sigint;

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

void cli_catch_sigint(void)
{
	struct sigaction sa, old;

	/* a SIGINT that was ignored (a background job of a shell without
	 * job control, nohup) stays ignored */
	if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a sleep under way returns early */
	sa.sa_flags = 0;
	sigaction(SIGINT, &sa, NULL);
}

int cli_interrupted(void)
{
	return got_sigint != 0;
}

void cli_sleep_ms(long ms)
{
	struct timespec left;

	left.tv_sec = ms / 1000;
	left.tv_nsec = (ms % 1000) * 1000000L;
	while (!got_sigint && nanosleep(&left, &left) != 0 && errno == EINTR)
		;
}

/* ---- the progress line --------------------------------------------------- */

static int progress_tty = -1; /* unknown, 0 or 1 */
static char progress_line[PROGRESS_MAX + 1];
static size_t progress_len; /* bytes of the line shown, 0: none */

static int progress_on(void)
{
	if (progress_tty < 0)
		progress_tty = isatty(STDERR_FILENO) ? 1 : 0;
	return progress_tty;
}

/* Columns of the terminal on stderr, less one so that the line never
 * wraps (a wrapped line cannot be rewritten with "\r"). */
static size_t progress_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col - 1 < PROGRESS_MAX ? ws.ws_col - 1 : PROGRESS_MAX;
	return 79;
}

void cli_progress_show(const char *line)
{
	size_t n = strlen(line), width = progress_width(), old = progress_len;

	if (!progress_on())
		return;
	if (n > width)
		n = width;
	if (n == progress_len && memcmp(progress_line, line, n) == 0)
		return;
	/* spaces over what the old line had beyond the new one */
	fprintf(stderr, "\r%.*s", (int)n, line);
	if (old > n)
		fprintf(stderr, "%*s\r%.*s", (int)(old - n), "", (int)n, line);
	fflush(stderr);
	memcpy(progress_line, line, n);
	progress_len = n;
}

void cli_progress_clear(void)
{
	if (progress_len == 0)
		return;
	fprintf(stderr, "\r%*s\r", (int)progress_len, "");
	fflush(stderr);
	progress_len = 0;
}

/* ---- what is done -------------------------------------------------------- */

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A run is done unless queued or running: a status this CLI does not know
 * (or none, from a server that answers finished runs only) ends the wait
 * rather than polling forever. A comparison is done unless pending. */
static int done(enum cli_job_kind kind, const json_t *rec)
{
	const char *s = str(rec, "status");

	if (!s)
		return 1;
	if (kind == CLI_JOB_COMPARISON)
		return strcmp(s, "pending") != 0;
	return strcmp(s, "queued") != 0 && strcmp(s, "running") != 0;
}

static const char *kind_noun(enum cli_job_kind kind)
{
	return kind == CLI_JOB_COMPARISON ? "comparison" : "run";
}

static const char *kind_prefix(enum cli_job_kind kind)
{
	return kind == CLI_JOB_COMPARISON ? "/v1/m/sandbox/comparisons/" : "/v1/m/sandbox/runs/";
}

/* "STATUS" or "STATUS<steps>D/T" (D the steps stored so far; steps ", step
 * " for a run's line, " " for a comparison's side, so that both sides fit
 * one line) of a run, appended to b; escaped, as every value the server
 * sends. */
static void run_state(struct model_buf *b, const json_t *run, const char *steps)
{
	char *status = cli_render(json_object_get(run, "status"));
	const json_t *d = json_object_get(run, "steps_done"),
	             *t = json_object_get(run, "steps_total");
	int rc;

	/* a queued run has done nothing yet: its status says it all */
	if (json_is_string(json_object_get(run, "status")) &&
	    strcmp(json_string_value(json_object_get(run, "status")), "queued") == 0)
		rc = model_buf_adds(b, status);
	else if (json_is_integer(d) && json_is_integer(t))
		rc = model_buf_printf(b, "%s%s%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
		                      status, steps, json_integer_value(d), json_integer_value(t));
	else if (json_is_integer(d))
		rc = model_buf_printf(b, "%s%s%" JSON_INTEGER_FORMAT, status, steps,
		                      json_integer_value(d));
	else
		rc = model_buf_adds(b, status);
	(void)rc; /* a line cut at the cap is still a progress line */
	free(status);
}

/* The id of rec, shortened for the progress line (the messages that say
 * how to follow a run give it whole). */
static void short_id(struct model_buf *b, const json_t *rec, const char *key)
{
	char *id = cli_render(json_object_get(rec, key));

	if (model_buf_printf(b, "%.8s", id))
		model_buf_reset(b);
	free(id);
}

/* A comparison's side for its progress line: "baseline running 2/5",
 * from its run (looked up quietly: a progress line that cannot be had is
 * no error), or the status the comparison gives for it. */
static void side_state(struct cli_ctx *ctx, struct model_buf *b, const json_t *cmp,
                       const char *side)
{
	static const struct cli_http_opts quiet = {NULL, 0, 1};
	const json_t *s = json_object_get(cmp, side);
	const char *id = str(s, "run_id");
	struct model_buf path;
	json_t *run = NULL;
	int rc;

	rc = model_buf_printf(b, "%s ", side);
	if (id && model_id_valid(id)) {
		cli_path_id(&path, "/v1/m/sandbox/runs/", id, "");
		if (cli_http_request(ctx, "GET", path.data, NULL, &quiet, &run, NULL) != 0)
			run = NULL;
		model_buf_release(&path);
	}
	if (run)
		run_state(b, run, " ");
	else if (str(s, "status"))
		run_state(b, s, " ");
	else
		rc = model_buf_adds(b, "pending");
	(void)rc;
	json_decref(run);
}

static void show_progress(struct cli_ctx *ctx, enum cli_job_kind kind, const json_t *rec)
{
	struct model_buf line, id;
	int rc;

	if (!progress_on())
		return;
	model_buf_init(&line, PROGRESS_MAX);
	model_buf_init(&id, 64);
	short_id(&id, rec, "id");
	rc = model_buf_printf(&line, "olivares: %s %s: ", kind_noun(kind), id.data);
	if (kind == CLI_JOB_COMPARISON) {
		side_state(ctx, &line, rec, "baseline");
		rc = model_buf_adds(&line, ", ");
		side_state(ctx, &line, rec, "candidate");
	} else {
		run_state(&line, rec, ", step ");
	}
	(void)rc;
	cli_progress_show(line.data);
	model_buf_release(&line);
	model_buf_release(&id);
}

/* "olivares: WHY: run ID goes on; follow it with …": the record is still
 * being made on the server, and the CLI stopped waiting for it. */
static void say_goes_on(enum cli_job_kind kind, const json_t *rec, const char *why)
{
	char *id = cli_render(json_object_get(rec, "id"));
	char *b, *c;

	cli_progress_clear();
	if (kind == CLI_JOB_RUN) {
		fprintf(
		    stderr,
		    "olivares: %s: run %s goes on; follow it with 'olivares sandbox runs watch %s' "
		    "(stop it with 'olivares sandbox runs cancel %s')\n",
		    why, id, id, id);
	} else {
		b = cli_render(json_object_get(json_object_get(rec, "baseline"), "run_id"));
		c = cli_render(json_object_get(json_object_get(rec, "candidate"), "run_id"));
		fprintf(
		    stderr,
		    "olivares: %s: comparison %s goes on; see it with 'olivares sandbox "
		    "comparisons get %s', follow its runs with 'olivares sandbox runs watch %s' "
		    "and 'olivares sandbox runs watch %s'\n",
		    why, id, id, b, c);
		free(b);
		free(c);
	}
	free(id);
}

/*
 * Poll *rec (a record of kind, owned) until it is done; *rec is then the
 * finished record. Returns CLI_EXIT_OK, CLI_EXIT_FAIL (the error printed,
 * then that the record goes on) or CLI_EXIT_INTERRUPTED.
 */
static int wait_done(struct cli_ctx *ctx, enum cli_job_kind kind, json_t **rec)
{
	long pause = CLI_POLL_FIRST_MS;
	struct model_buf path;
	const char *id;
	json_t *next;
	int rc = CLI_EXIT_OK;

	id = str(*rec, "id");
	if (!done(kind, *rec) && !id)
		return cli_fail("unexpected response: a %s that is not done has no id",
		                kind_noun(kind));
	cli_path_id(&path, kind_prefix(kind), id ? id : "-", "");
	while (!done(kind, *rec)) {
		show_progress(ctx, kind, *rec);
		cli_sleep_ms(pause);
		pause = pause * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : pause * 3 / 2;
		if (cli_interrupted()) {
			rc = CLI_EXIT_INTERRUPTED;
			break;
		}
		if (cli_http_call(ctx, "GET", path.data, NULL, &next)) {
			rc = cli_interrupted() ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
			break;
		}
		json_decref(*rec);
		*rec = next;
	}
	if (rc == CLI_EXIT_INTERRUPTED)
		say_goes_on(kind, *rec, "interrupted");
	else if (rc == CLI_EXIT_FAIL)
		say_goes_on(kind, *rec, "stopped waiting");
	cli_progress_clear();
	model_buf_release(&path);
	return rc;
}

int cli_create_and_wait(struct cli_ctx *ctx, int wait, enum cli_job_kind kind, const char *path,
                        json_t *body, cli_printer table, cli_printer queued_table, cli_printer note)
{
	return cli_create_and_wait_keep(ctx, wait, kind, path, body, table, queued_table, note,
	                                NULL);
}

int cli_create_and_wait_keep(struct cli_ctx *ctx, int wait, enum cli_job_kind kind,
                             const char *path, json_t *body, cli_printer table,
                             cli_printer queued_table, cli_printer note, json_t **out)
{
	struct cli_http_opts opts = {NULL, 0, 0};
	char prefer[32];
	json_t *rec = NULL;
	int rc;

	if (!wait) {
		rc = cli_http_call(ctx, "POST", path, body, &rec);
		json_decref(body);
		if (rc)
			return CLI_EXIT_FAIL;
		cli_print_answer(ctx, rec, queued_table, note);
		json_decref(rec);
		return CLI_EXIT_OK;
	}
	/* a key of our own, so that an interrupted POST can be taken up again
	 * without making a second run */
	if (cli_idempotency_key_fix(ctx)) {
		json_decref(body);
		return cli_fail("cannot make a random Idempotency-Key");
	}
	snprintf(prefer, sizeof(prefer), "Prefer: wait=%ld", CLI_WAIT_SECONDS);
	opts.header = prefer;
	cli_catch_sigint();
	rc = cli_http_request(ctx, "POST", path, body, &opts, &rec, NULL);
	json_decref(body);
	if (rc) {
		if (!cli_interrupted())
			return CLI_EXIT_FAIL;
		fprintf(stderr,
		        "olivares: interrupted before the server answered: if it took the request, "
		        "the %s goes on; the same command with --idempotency-key %s follows it "
		        "without making another\n",
		        kind_noun(kind), ctx->idempotency_key);
		return CLI_EXIT_INTERRUPTED;
	}
	rc = wait_done(ctx, kind, &rec);
	if (rc == CLI_EXIT_OK)
		cli_print_answer(ctx, rec, table, note);
	if (rc == CLI_EXIT_OK && out)
		*out = rec;
	else
		json_decref(rec);
	return rc;
}

int cli_wait_run_id(struct cli_ctx *ctx, const char *id, json_t **run)
{
	struct model_buf path;
	int rc;

	*run = NULL;
	cli_catch_sigint();
	cli_path_id(&path, "/v1/m/sandbox/runs/", id, "");
	rc = cli_http_call(ctx, "GET", path.data, NULL, run);
	model_buf_release(&path);
	if (rc) {
		if (!cli_interrupted())
			return CLI_EXIT_FAIL;
		/* the run is whatever it was: watching it is what stopped */
		*run = json_pack("{ss}", "id", model_id_valid(id) ? id : "-");
		say_goes_on(CLI_JOB_RUN, *run, "interrupted");
		json_decref(*run);
		*run = NULL;
		return CLI_EXIT_INTERRUPTED;
	}
	rc = wait_done(ctx, CLI_JOB_RUN, run);
	if (rc) {
		json_decref(*run);
		*run = NULL;
	}
	return rc;
}
