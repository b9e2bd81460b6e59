/*
 * The external scorer adapter (scorer_exec.h): one posix_spawn per call,
 * the run's outputs on stdin, one JSON answer on stdout, a time limit.
 *
 * Nothing the scorer says is believed until checked: an answer that is not
 * exactly the documented object, a score outside [0, 1], a crash, a
 * non-zero exit or silence past the deadline all leave the run not scored,
 * with the reason.
 */
#include "fcgi/scorer/scorer_exec.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcgi/run/spawn.h"
#include "fcgi/scorer/scorer.h"
#include "model/alloc.h"
#include "model/buf.h"

struct exec_scorer {
	char *words;                               /* the command line, NULs between words */
	char *argv[HTTP_SCORER_EXEC_MAX_ARGS + 1]; /* into words (argv[0]: see abs0) */
	char *abs0;                                /* argv[0] made absolute */
	int timeout_ms;
};

static int not_scored(struct model_score_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fill the reason (printable ASCII only: parts of it may quote the
 * scorer's bytes through jansson's messages) and return -1. */
static int not_scored(struct model_score_result *res, const char *fmt, ...)
{
	va_list ap;
	char *p;

	json_decref(res->details);
	res->details = NULL;
	res->scored = 0;
	res->score = 0.0;
	res->passed = 0;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
	for (p = res->reason; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return -1;
}

/* Check one element of "details"; 0 or -1 with why. */
static int detail_check(json_t *d, size_t i, struct model_reason *why)
{
	const char *k;
	json_t *v;
	int have_passed = 0;

	if (!json_is_object(d))
		return model_reason_set(why, "details[%zu] is not an object", i);
	json_object_foreach(d, k, v)
	{
		if (strcmp(k, "passed") == 0) {
			have_passed = json_is_boolean(v);
			if (!have_passed)
				break;
		} else if (strcmp(k, "seq") == 0) {
			if (!json_is_integer(v) && !json_is_null(v))
				break;
		} else if (strcmp(k, "key") == 0) {
			if (!json_is_string(v) && !json_is_null(v))
				break;
		} else if (strcmp(k, "check") == 0 || strcmp(k, "message") == 0) {
			if (!json_is_string(v))
				break;
		} else {
			return model_reason_set(why, "details[%zu] has an unknown field \"%.40s\"",
			                        i, k);
		}
	}
	if (k)
		return model_reason_set(why, "details[%zu].%.40s has the wrong type", i, k);
	if (!have_passed)
		return model_reason_set(why, "details[%zu].passed must be true or false", i);
	return 0;
}

/* Check the answer object and fill res; 0 or -1 (res not scored). */
static int take_answer(json_t *a, struct model_score_result *res)
{
	json_t *score = NULL, *passed = NULL, *details = NULL;
	json_t *v, *d;
	const char *k;
	struct model_reason why;
	size_t i;
	double s;

	if (!json_is_object(a))
		return not_scored(res, "scorer answer: not a JSON object");
	json_object_foreach(a, k, v)
	{
		if (strcmp(k, "score") == 0)
			score = v;
		else if (strcmp(k, "passed") == 0)
			passed = v;
		else if (strcmp(k, "details") == 0)
			details = v;
		else
			return not_scored(res, "scorer answer: unknown field \"%.40s\"", k);
	}
	if (!score)
		return not_scored(res, "scorer answer: score is missing");
	if (!json_is_number(score))
		return not_scored(res, "scorer answer: score must be a number");
	s = json_number_value(score);
	if (!(s >= 0.0 && s <= 1.0))
		return not_scored(res, "scorer answer: score %g is outside [0, 1]", s);
	if (!json_is_boolean(passed))
		return not_scored(res, "scorer answer: passed must be true or false");
	if (details) {
		if (!json_is_array(details))
			return not_scored(res, "scorer answer: details must be an array");
		if (json_array_size(details) > HTTP_SCORER_EXEC_MAX_DETAILS)
			return not_scored(res, "scorer answer: more than %d details",
			                  HTTP_SCORER_EXEC_MAX_DETAILS);
		json_array_foreach(details, i, d)
		{
			if (detail_check(d, i, &why))
				return not_scored(res, "scorer answer: %s", why.text);
		}
	}
	res->scored = 1;
	res->score = s;
	res->passed = json_is_true(passed);
	res->details = json_incref(details);
	res->reason[0] = '\0';
	return 0;
}

static int exec_score(void *ctx, const char *suite, json_t *outputs, struct model_score_result *res)
{
	struct exec_scorer *x = ctx;
	struct http_spawn_result sr;
	struct model_buf out;
	json_error_t jerr;
	json_t *input = NULL, *answer = NULL;
	char *in = NULL;
	const char *abbrev;
	int status;
	int rc = -1;

	model_score_result_clear(res);
	model_buf_init(&out, HTTP_SCORER_EXEC_MAX_OUTPUT);
	if (!model_suite_name_valid(suite)) {
		not_scored(res, "invalid suite name");
		goto out;
	}
	if (!json_is_array(outputs)) {
		not_scored(res, "outputs are not an array");
		goto out;
	}
	input = json_pack("{s:s, s:O}", "suite", suite, "outputs", outputs);
	/* reals as the API writes them (0.137, not 0.13700000000000001) */
	in = input ? json_dumps(input, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
	if (!in) {
		not_scored(res, "cannot encode the scorer's input");
		goto out;
	}
	/* stderr NULL: the scorer's goes to /dev/null (scorer_exec.h) */
	if (http_spawn_run(x->abs0, x->argv, in, strlen(in), x->timeout_ms, &out, NULL, NULL,
	                   &sr)) {
		not_scored(res, "cannot start the scorer: %s", strerror(sr.start_errno));
		goto out;
	}
	if (sr.end == HTTP_SPAWN_TIMEOUT) {
		not_scored(res, "scorer timed out after %d ms", x->timeout_ms);
		goto out;
	}
	if (sr.end == HTTP_SPAWN_OVER_CAP) {
		not_scored(res, "scorer answered more than %d bytes", HTTP_SCORER_EXEC_MAX_OUTPUT);
		goto out;
	}
	if (sr.end == HTTP_SPAWN_ERROR) {
		not_scored(res, "scorer: poll: %s", strerror(sr.sys_errno));
		goto out;
	}
	/* a lost wait status reads as 0, as it always has here */
	status = sr.status;
	if (WIFSIGNALED(status)) {
		abbrev = sigabbrev_np(WTERMSIG(status));
		if (abbrev)
			not_scored(res, "scorer killed by SIG%s", abbrev);
		else
			not_scored(res, "scorer killed by signal %d", WTERMSIG(status));
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		not_scored(res, "scorer exited with status %d",
		           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	answer = json_loadb(out.data, out.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!answer) {
		not_scored(res, "scorer answered invalid JSON: %s", jerr.text);
		goto out;
	}
	rc = take_answer(answer, res);
out:
	json_decref(answer);
	json_decref(input);
	free(in);
	model_buf_release(&out);
	return rc;
}

static void exec_destroy(void *ctx)
{
	struct exec_scorer *x = ctx;

	if (!x)
		return;
	free(x->abs0);
	free(x->words);
	free(x);
}

static const struct model_scorer_ops exec_ops = {
    .name = "exec",
    .score = exec_score,
    .destroy = exec_destroy,
};

int http_scorer_exec_new(const char *command_line, int timeout_ms, struct model_scorer *out,
                         struct model_reason *err)
{
	struct exec_scorer *x;
	struct stat st;
	char *p;
	int argc = 0;

	if (timeout_ms < HTTP_SCORER_TIMEOUT_MIN_MS || timeout_ms > HTTP_SCORER_TIMEOUT_MAX_MS)
		return model_reason_set(err, "exec scorer: timeout_ms must be %d..%d",
		                        HTTP_SCORER_TIMEOUT_MIN_MS, HTTP_SCORER_TIMEOUT_MAX_MS);
	x = model_xcalloc(1, sizeof(*x));
	x->timeout_ms = timeout_ms;
	x->words = model_xstrdup(command_line);
	/* split on spaces: no shell, no quoting */
	for (p = x->words; *p;) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc == HTTP_SCORER_EXEC_MAX_ARGS) {
			model_reason_set(err, "exec scorer: more than %d words in the command",
			                 HTTP_SCORER_EXEC_MAX_ARGS);
			goto fail;
		}
		x->argv[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	x->argv[argc] = NULL;
	if (argc == 0) {
		model_reason_set(err, "exec scorer: empty command");
		goto fail;
	}
	/* the scorer has no PATH (empty environment): name it by its path */
	if (x->argv[0][0] == '/') {
		x->abs0 = model_xstrdup(x->argv[0]);
	} else {
		x->abs0 = realpath(x->argv[0], NULL);
		if (!x->abs0) {
			model_reason_set(err, "exec scorer: %s: %s", x->argv[0], strerror(errno));
			goto fail;
		}
	}
	if (stat(x->abs0, &st) != 0 || !S_ISREG(st.st_mode) || access(x->abs0, X_OK) != 0) {
		model_reason_set(err, "exec scorer: %s is not an executable file", x->argv[0]);
		goto fail;
	}
	out->ops = &exec_ops;
	out->ctx = x;
	return 0;
fail:
	exec_destroy(x);
	return -1;
}
