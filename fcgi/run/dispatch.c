/*
 * Runner dispatch (dispatch.h): one olivares-runner process per run,
 * forked by the worker's runner fork server (fcgi/run/runner_server.h), or
 * spawned (a preflight question; fake runners in tests).
 *
 * The worker trusts nothing the runner says until it has checked it: every
 * line is parsed strictly, step lines must come in seq order and repeat the
 * spec's keys and inputs, and the summary's counters must agree with the
 * step lines. Anything else fails the run here, isolated 0, with the reason.
 *
 * The spawn itself, the feeding of the spec, the reading under a deadline
 * and the reaping are fcgi/run/spawn.c's; not thread-safe, as it is.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fcgi/run/dispatch.h"
#include "fcgi/run/spawn.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/runlog.h"
#include "model/mock.h"
#include "model/runspec.h"

#define DISPATCH_STDERR_KEEP 4096u
/* A preflight answer is one short line. */
#define DISPATCH_PREFLIGHT_MAX 65536u
/* SHA-256 over seq NUL key NUL output NUL status NUL, per output (dispatch.h). */
void http_dispatch_output_digest(json_t *outputs, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx;
	json_t *o;
	size_t i;
	unsigned int j;
	char seq[32];
	static const char *const fields[] = {"key", "output", "status"};
	size_t f;
	int ok;

	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
	json_array_foreach(outputs, i, o)
	{
		snprintf(seq, sizeof(seq), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(json_object_get(o, "seq")));
		ok = ok && EVP_DigestUpdate(ctx, seq, strlen(seq) + 1) == 1;
		for (f = 0; f < 3; f++) {
			json_t *s = json_object_get(o, fields[f]);

			ok = ok && EVP_DigestUpdate(ctx, json_string_value(s),
			                            json_string_length(s)) == 1;
			ok = ok && EVP_DigestUpdate(ctx, "", 1) == 1;
		}
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 32;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		/* Only an allocation failure inside OpenSSL gets here: same
		 * policy as model/alloc.h. */
		fputs("olivares: SHA-256 failed\n", stderr);
		abort();
	}
	for (j = 0; j < md_len; j++)
		snprintf(hex + 2 * j, 3, "%02x", md[j]);
	hex[64] = '\0';
}

/* Copy src into dst[n], cutting only at a UTF-8 character boundary, so a
 * stored reason is always valid UTF-8 (src is, since jansson parsed it). */
static void copy_utf8(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)src[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The counts of res->outputs, the steps the worker keeps of a run it
 * ended itself. */
static void count_outputs(struct http_dispatch_result *res)
{
	json_t *o;
	size_t i;

	res->steps_total = res->steps_ok = res->steps_error = 0;
	json_array_foreach(res->outputs, i, o)
	{
		res->steps_total++;
		if (strcmp(json_string_value(json_object_get(o, "status")), "ok") == 0)
			res->steps_ok++;
		else
			res->steps_error++;
	}
}

static int res_fail(struct http_dispatch_result *res, int keep_outputs, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The worker fails the run itself: nothing the runner said is kept but,
 * when keep_outputs (a step hook has them already), the steps it checked. */
static int res_fail(struct http_dispatch_result *res, int keep_outputs, const char *fmt, ...)
{
	va_list ap;
	char *p;

	snprintf(res->status, sizeof(res->status), "failed");
	res->isolated = 0;
	res->destroyed = 0;
	if (!keep_outputs)
		json_array_clear(res->outputs);
	count_outputs(res);
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
	res->shutdown[0] = '\0';
	res->egress_requests = 0;
	/* Parts of it may quote the runner (jansson's messages name keys and
	 * may be cut mid-character): keep it printable ASCII. */
	for (p = res->reason; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	http_dispatch_output_digest(res->outputs, res->output_digest);
	return -1;
}

/* A hook stopped the run (dispatch.h): the steps reported are kept, and
 * nothing the runner would have said after them is claimed. */
static int res_cancel(struct http_dispatch_result *res, json_t *spec_steps)
{
	snprintf(res->status, sizeof(res->status), "cancelled");
	res->isolated = 0;
	res->destroyed = 0;
	count_outputs(res);
	snprintf(res->reason, sizeof(res->reason), "cancelled while running (%d of %zu steps done)",
	         res->steps_total, json_array_size(spec_steps));
	res->shutdown[0] = '\0';
	http_dispatch_output_digest(res->outputs, res->output_digest);
	return 1;
}

/* "SIGSYS (seccomp)", "SIGKILL", ... */
static void signal_name(int sig, char *buf, size_t n)
{
	const char *abbrev = sigabbrev_np(sig);

	if (!abbrev)
		snprintf(buf, n, "signal %d", sig);
	else
		snprintf(buf, n, "SIG%s%s", abbrev, sig == SIGSYS ? " (seccomp)" : "");
}

/* First line of the runner's stderr, printable ASCII only, for a reason. */
static void stderr_excerpt(const struct model_buf *err, char *buf, size_t n)
{
	size_t i, j = 0;

	if (n == 0)
		return;
	for (i = 0; i < err->len && err->data[i] != '\n' && j + 1 < n && j < 200; i++) {
		unsigned char ch = (unsigned char)err->data[i];

		buf[j++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[j] = '\0';
}

/*
 * A step line's "duration_us" (dur, may be NULL) as the output's
 * "duration_ms" (a new reference): the microseconds over 1000, or null when
 * absent (an older runner) or not an integer in [0, max_us] (no step
 * outlasts the worker's deadline): an unknown duration is never made up,
 * and never fails the run (the step itself is sound).
 */
static json_t *duration_ms(json_t *dur, long long max_us)
{
	json_int_t us;

	if (!json_is_integer(dur))
		return json_null();
	us = json_integer_value(dur);
	if (us < 0 || us > max_us)
		return json_null();
	return json_real((double)us / 1000.0);
}

/* Check one step line against the seq expected and the spec's step and
 * mocks (n_mocks of them). */
static int check_step(json_t *line, size_t seq, json_t *spec_steps, size_t n_mocks,
                      struct model_reason *why)
{
	const char *type, *status;
	json_int_t got_seq;
	json_t *key, *input, *output, *kind, *dur = NULL, *trace = NULL;
	json_t *want;
	json_error_t e;
	struct model_reason detail;
	size_t misses = 0;

	/* duration_us is optional (duration_ms decides what it is worth), and
	 * so is trace (an older runner: stored null) */
	if (json_unpack_ex(line, &e, JSON_STRICT, "{s:s, s:I, s:o, s:o, s:o, s:s, s:o, s?o, s?o}",
	                   "type", &type, "seq", &got_seq, "key", &key, "input", &input, "output",
	                   &output, "status", &status, "error_kind", &kind, "duration_us", &dur,
	                   "trace", &trace) != 0)
		return model_reason_set(why, "step line %zu: %s", seq, e.text);
	/* the trace is checked like the rest of the line: its shape, its
	 * bound, mock indexes inside the spec's mocks, and a step with a
	 * missed request is never "ok" */
	if (trace && !json_is_null(trace) &&
	    model_trace_check(trace, n_mocks, &misses, &detail) != 0)
		return model_reason_set(why, "step %zu: %s", seq, detail.text);
	if (misses > 0 && strcmp(status, "ok") == 0)
		return model_reason_set(why, "step %zu: ok with a missed request in its trace",
		                        seq);
	if (got_seq < 0 || (size_t)got_seq != seq)
		return model_reason_set(why, "step line %zu has seq %" JSON_INTEGER_FORMAT, seq,
		                        got_seq);
	if (!json_is_string(key) || !json_is_string(input) || !json_is_string(output))
		return model_reason_set(why, "step %zu: key, input and output must be strings",
		                        seq);
	if (!((strcmp(status, "ok") == 0 && json_is_null(kind)) ||
	      (strcmp(status, "error") == 0 && json_is_string(kind) &&
	       json_string_length(kind) > 0)))
		return model_reason_set(why, "step %zu: status and error_kind disagree", seq);
	want = json_array_get(spec_steps, seq - 1);
	if (json_is_array(spec_steps) && (!want || !json_equal(key, json_object_get(want, "key")) ||
	                                  !json_equal(input, json_object_get(want, "input"))))
		return model_reason_set(why, "step %zu does not match the spec's step %zu", seq,
		                        seq);
	return 0;
}

/*
 * The runner's stdout, read line by line as it comes (the spawn layer's
 * watch): each step line is checked at once and, when it passes, appended
 * to res->outputs and given to the hooks; the summary is kept for the
 * checks at the end (finish_output). The first line refused stops the
 * reading (why says why; the run goes on to its end, whose own failure, if
 * any, is the reason: the same order as a whole output read at the end).
 */
struct stream {
	json_t *spec_steps; /* borrowed; may be NULL */
	size_t n_mocks;     /* the spec's mocks: bounds a trace's mock indexes */
	long long max_us;   /* bounds a step's duration (the worker's deadline) */
	struct http_dispatch_result *res;
	const struct http_dispatch_hooks *hooks; /* may be NULL */
	size_t done;                             /* bytes of stdout read (whole lines) */
	size_t lineno;
	size_t seq;
	long n_ok, n_err;
	json_t *summary; /* owned, once read */
	int refused;     /* a line was refused: why is set, nothing more is read */
	struct model_reason why;
};

/* A log line (model/runspec.h), checked: its data appended to the
 * result's log. Returns 0, or -1 with st->why. */
static int take_log(struct stream *st, json_t *line)
{
	struct http_dispatch_result *res = st->res;
	const char *type, *data;
	size_t len;
	json_int_t dropped;
	json_error_t e;

	if (json_unpack_ex(line, &e, JSON_STRICT, "{s:s, s:s%, s:I}", "type", &type, "data", &data,
	                   &len, "dropped", &dropped) != 0)
		return model_reason_set(&st->why, "runner output malformed: log line %zu: %s",
		                        st->lineno, e.text);
	if (!model_runlog_is_clean(data, len))
		return model_reason_set(&st->why,
		                        "runner output malformed: log line %zu is not cleaned text",
		                        st->lineno);
	if (dropped < res->log_dropped)
		return model_reason_set(
		    &st->why,
		    "runner output inconsistent: log line %zu drops fewer bytes "
		    "than the one before",
		    st->lineno);
	if (model_buf_add(&res->log, data, len) != 0)
		return model_reason_set(&st->why, "runner output inconsistent: log over %u bytes",
		                        MODEL_RUN_LOG_MAX);
	res->log_dropped = dropped;
	return 0;
}

/* Take one line (without its newline). Returns 0, 1 when a hook asks to
 * stop, -1 when the line is refused (st->why). */
static int take_line(struct stream *st, const char *p, size_t len)
{
	const struct http_dispatch_hooks *h = st->hooks;
	json_t *line, *output;
	json_error_t e;
	const char *type;
	struct model_reason detail;
	int stop = 0, rc;

	st->lineno++;
	if (st->summary)
		return model_reason_set(&st->why,
		                        "runner output inconsistent: a line follows the summary");
	line = json_loadb(p, len, JSON_REJECT_DUPLICATES, &e);
	if (!json_is_object(line)) {
		json_decref(line);
		return model_reason_set(
		    &st->why, "runner output malformed: line %zu is not a JSON object", st->lineno);
	}
	type = json_string_value(json_object_get(line, "type"));
	if (type && strcmp(type, "summary") == 0) {
		st->summary = line;
		return 0;
	}
	if (type && strcmp(type, "log") == 0) {
		rc = take_log(st, line);
		json_decref(line);
		return rc;
	}
	if (!type || strcmp(type, "step") != 0) {
		json_decref(line);
		return model_reason_set(
		    &st->why, "runner output malformed: line %zu has no known type", st->lineno);
	}
	st->seq++;
	if (check_step(line, st->seq, st->spec_steps, st->n_mocks, &detail) != 0) {
		json_decref(line);
		return model_reason_set(&st->why, "runner output inconsistent: %s", detail.text);
	}
	if (strcmp(json_string_value(json_object_get(line, "status")), "ok") == 0)
		st->n_ok++;
	else
		st->n_err++;
	output = json_pack(
	    "{s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:o}", "seq", json_object_get(line, "seq"), "key",
	    json_object_get(line, "key"), "input", json_object_get(line, "input"), "output",
	    json_object_get(line, "output"), "status", json_object_get(line, "status"),
	    "error_kind", json_object_get(line, "error_kind"), "duration_ms",
	    duration_ms(json_object_get(line, "duration_us"), st->max_us), "trace",
	    json_object_get(line, "trace") ? json_incref(json_object_get(line, "trace"))
	                                   : json_null());
	json_decref(line);
	json_array_append_new(st->res->outputs, output);
	/* the step is the result's before the hook sees it: a step the hook
	 * stopped the run on was reported, and is kept */
	if (h && h->step && h->step(h->ctx, output) != 0)
		stop = 1;
	if (!stop && h && h->tick && h->tick(h->ctx) != 0)
		stop = 1;
	return stop;
}

/* http_spawn_watch.out: take the whole lines not read yet. */
static int stream_out(void *ctx, const struct model_buf *out)
{
	struct stream *st = ctx;
	const char *nl;
	int rc;

	while (!st->refused) {
		nl = memchr(out->data + st->done, '\n', out->len - st->done);
		if (!nl)
			break;
		rc = take_line(st, out->data + st->done, (size_t)(nl - out->data) - st->done);
		st->done = (size_t)(nl - out->data) + 1;
		if (rc < 0)
			st->refused = 1;
		else if (rc > 0)
			return 1;
	}
	return 0;
}

/* http_spawn_watch.tick */
static int stream_tick(void *ctx)
{
	struct stream *st = ctx;

	return st->hooks->tick(st->hooks->ctx) != 0;
}

/*
 * The checks of a run's end, once its stdout has all been read into st:
 * no unterminated tail, a summary consistent with the step lines. Fills
 * res from the summary. Returns 0, or -1 with why filled (res untouched
 * but for the outputs taken).
 */
static int finish_output(struct stream *st, const struct model_buf *out, const char *backend,
                         struct http_dispatch_result *res, struct model_reason *why)
{
	json_t *spec_steps = st->spec_steps;
	json_t *summary = st->summary;
	json_t *reason, *shutdown = NULL, *egress = NULL, *lost = NULL;
	json_error_t e;
	const char *type;
	const char *runner, *be, *status;
	int isolated, destroyed;
	json_int_t total, ok, error;
	size_t seq = st->seq;

	if (st->refused) {
		*why = st->why;
		return -1;
	}
	if (st->done < out->len)
		return model_reason_set(why, "runner output malformed: line %zu is not terminated",
		                        st->lineno + 1);
	if (!summary)
		return model_reason_set(why, "runner output inconsistent: no summary line");
	if (json_unpack_ex(summary, &e, JSON_STRICT,
	                   "{s:s, s:s, s:s, s:b, s:b, s:s, s:I, s:I, s:I, s:o, s?o, s?o, s?o}",
	                   "type", &type, "runner", &runner, "backend", &be, "isolated", &isolated,
	                   "destroyed", &destroyed, "status", &status, "steps_total", &total,
	                   "steps_ok", &ok, "steps_error", &error, "reason", &reason, "shutdown",
	                   &shutdown, "egress_requests", &egress, "gateway_lost", &lost) != 0)
		return model_reason_set(why, "runner output malformed: summary: %s", e.text);
	if (strcmp(status, "completed") != 0 && strcmp(status, "failed") != 0)
		return model_reason_set(why, "runner output inconsistent: unknown status");
	if (strcmp(be, backend) != 0) {
		/* Never accept a run on another backend than the one asked for. */
		return model_reason_set(
		    why, "runner output inconsistent: backend %.32s reported, %.32s requested", be,
		    backend);
	}
	if (total != (json_int_t)seq || ok != st->n_ok || error != st->n_err)
		return model_reason_set(
		    why,
		    "runner output inconsistent: summary counts %" JSON_INTEGER_FORMAT
		    "/%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT ", step lines %zu/%ld/%ld",
		    total, ok, error, seq, st->n_ok, st->n_err);
	if (strcmp(status, "completed") == 0 && json_is_array(spec_steps) &&
	    seq != json_array_size(spec_steps))
		return model_reason_set(
		    why, "runner output inconsistent: completed with %zu of %zu steps", seq,
		    json_array_size(spec_steps));
	if (!json_is_null(reason) && !json_is_string(reason))
		return model_reason_set(why,
		                        "runner output malformed: reason must be a string or null");
	if (strcmp(status, "failed") == 0 && !json_is_string(reason))
		return model_reason_set(why, "runner output inconsistent: failed without a reason");
	/* absent (an older runner) is null */
	if (shutdown && !json_is_null(shutdown) && !json_is_string(shutdown))
		return model_reason_set(
		    why, "runner output malformed: shutdown must be a string or null");
	/* a failed run's reason is the one thing said (model/runspec.h) */
	if (strcmp(status, "failed") == 0 && json_is_string(shutdown))
		return model_reason_set(
		    why, "runner output inconsistent: a shutdown note on a failed run");
	/* absent (an older runner, or one with no gateway) is 0 */
	if (egress && (!json_is_integer(egress) || json_integer_value(egress) < 0))
		return model_reason_set(
		    why, "runner output malformed: egress_requests must be an integer >= 0");
	res->egress_requests = egress ? (long)json_integer_value(egress) : 0;
	if (lost && !json_is_true(lost))
		return model_reason_set(why, "runner output malformed: gateway_lost must be true");
	res->gateway_lost = lost != NULL;
	snprintf(res->status, sizeof(res->status), "%s", status);
	copy_utf8(res->runner, sizeof(res->runner), runner);
	/* As the runner says: a jail in place when a limit killed the agent
	 * (status failed) was still a jail. The worker's own failures
	 * (res_fail) always record 0. */
	res->isolated = isolated ? 1 : 0;
	copy_utf8(res->backend, sizeof(res->backend), be);
	res->destroyed = destroyed;
	res->steps_total = (int)total;
	res->steps_ok = (int)ok;
	res->steps_error = (int)error;
	copy_utf8(res->reason, sizeof(res->reason),
	          json_is_string(reason) ? json_string_value(reason) : "");
	copy_utf8(res->shutdown, sizeof(res->shutdown),
	          json_is_string(shutdown) ? json_string_value(shutdown) : "");
	return 0;
}

/* http_spawn_run (or _runner, through the fork server), with the runner's
 * words for what could not be started. */
static int spawn_runner(const char *path, int fork_server, char *const argv[], const char *input,
                        size_t input_len, int timeout_ms, struct model_buf *out,
                        struct model_buf *err, const struct http_spawn_watch *watch,
                        struct http_spawn_result *ce, struct model_reason *why)
{
	int rc;

	if (fork_server)
		rc = http_spawn_run_runner(path, argv, input, input_len, timeout_ms, out, err,
		                           watch, ce);
	else
		rc = http_spawn_run(path, argv, input, input_len, timeout_ms, out, err, watch, ce);
	if (rc == 0)
		return 0;
	if (strcmp(ce->start_step, "spawn") == 0)
		return model_reason_set(why, "cannot start the runner %s: %s", path,
		                        strerror(ce->start_errno));
	return model_reason_set(why, "cannot start the runner: %s: %s", ce->start_step,
	                        strerror(ce->start_errno));
}

/* Why a child did not end well, into why; 0 when it exited 0 in time.
 * HTTP_SPAWN_OVER_CAP is the caller's to word (its cap). */
static int child_failed(const struct http_spawn_result *ce, const struct model_buf *err,
                        int timeout_ms, struct model_reason *why)
{
	char sig[64];
	char excerpt[256];

	stderr_excerpt(err, excerpt, sizeof(excerpt));
	if (ce->end == HTTP_SPAWN_TIMEOUT) {
		/* Not the run's own limit: the runner enforces that and
		 * reports it; this is the caller's deadline (dispatch.h). */
		model_reason_set(
		    why,
		    "runner still running at the worker's deadline, %d ms after its start; killed",
		    timeout_ms);
	} else if (ce->end == HTTP_SPAWN_ERROR) {
		model_reason_set(why, "cannot talk to the runner: %s", strerror(ce->sys_errno));
	} else if (ce->reaped < 0) {
		model_reason_set(why, "runner exit status lost: %s", strerror(ce->reap_errno));
	} else if (WIFSIGNALED(ce->status)) {
		signal_name(WTERMSIG(ce->status), sig, sizeof(sig));
		model_reason_set(why, "runner killed by %s%s%s", sig, excerpt[0] ? ": " : "",
		                 excerpt);
	} else if (!WIFEXITED(ce->status) || WEXITSTATUS(ce->status) != 0) {
		model_reason_set(why, "runner exited with status %d%s%s",
		                 WIFEXITED(ce->status) ? WEXITSTATUS(ce->status) : -1,
		                 excerpt[0] ? ": " : "", excerpt);
	} else {
		return 0;
	}
	return -1;
}

/* argv of the runner: {runner_path, mode ("--backend" or "--preflight"),
 * backend, and for gvisor "--gvisor-platform", platform; NULL}. */
static void runner_argv(char *argv[6], const char *runner_path, const char *mode,
                        const char *backend, const char *platform)
{
	size_t k = 0;

	argv[k++] = (char *)runner_path;
	argv[k++] = (char *)mode;
	argv[k++] = (char *)backend;
	if (platform && strcmp(backend, MODEL_BACKEND_GVISOR) == 0) {
		argv[k++] = (char *)"--gvisor-platform";
		argv[k++] = (char *)platform;
	}
	argv[k] = NULL;
}

int http_dispatch_run(const char *runner_path, int fork_server, const char *backend,
                      const char *platform, int timeout_ms, json_t *spec,
                      struct http_dispatch_result *res)
{
	return http_dispatch_run_hooked(runner_path, fork_server, backend, platform, timeout_ms,
	                                spec, NULL, res);
}

int http_dispatch_run_hooked(const char *runner_path, int fork_server, const char *backend,
                             const char *platform, int timeout_ms, json_t *spec,
                             const struct http_dispatch_hooks *hooks,
                             struct http_dispatch_result *res)
{
	struct model_buf out, err;
	struct http_spawn_result ce;
	struct http_spawn_watch watch;
	struct stream st;
	char *argv[6];
	struct model_reason why;
	char *text = NULL;
	/* a step hook has every step it was given: the result keeps them,
	 * whatever ends the run (dispatch.h) */
	int keep = hooks && hooks->step;
	unsigned cap;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	snprintf(res->status, sizeof(res->status), "failed");
	snprintf(res->runner, sizeof(res->runner), "%s", MODEL_RUNNER_NAME);
	snprintf(res->backend, sizeof(res->backend), "%s", backend ? backend : "");
	res->outputs = json_array();
	model_buf_init(&res->log, MODEL_RUN_LOG_MAX);
	if (!res->outputs) {
		fputs("olivares: out of memory\n", stderr);
		abort();
	}
	cap = HTTP_DISPATCH_OUTPUT_MAX + HTTP_DISPATCH_LOG_ROOM +
	      (json_is_true(json_object_get(spec, "record")) ? HTTP_DISPATCH_RECORD_ROOM : 0);
	model_buf_init(&out, cap);
	model_buf_init(&err, DISPATCH_STDERR_KEEP);
	memset(&st, 0, sizeof(st));
	st.spec_steps = json_object_get(spec, "steps");
	st.n_mocks = json_array_size(json_object_get(spec, "mocks"));
	st.max_us = (long long)timeout_ms * 1000;
	st.res = res;
	st.hooks = hooks;
	memset(&watch, 0, sizeof(watch));
	watch.ctx = &st;
	watch.out = stream_out;
	if (hooks && hooks->tick && hooks->tick_ms > 0) {
		watch.tick = stream_tick;
		watch.tick_ms = hooks->tick_ms;
	}

	if (!runner_path || !backend || !json_is_object(spec) || timeout_ms <= 0) {
		res_fail(res, keep, "invalid dispatch arguments");
		goto out;
	}
	text = json_dumps(spec, JSON_COMPACT);
	if (!text) {
		res_fail(res, keep, "cannot serialise the run spec");
		goto out;
	}
	runner_argv(argv, runner_path, "--backend", backend, platform);
	if (spawn_runner(runner_path, fork_server, argv, text, strlen(text), timeout_ms, &out, &err,
	                 &watch, &ce, &why) != 0) {
		res_fail(res, keep, "%s", why.text);
		goto out;
	}
	if (ce.end == HTTP_SPAWN_STOPPED) {
		rc = res_cancel(res, st.spec_steps);
	} else if (ce.end == HTTP_SPAWN_OVER_CAP) {
		res_fail(res, keep, "runner output over %u bytes", cap);
	} else if (child_failed(&ce, &err, timeout_ms, &why) != 0) {
		res_fail(res, keep, "%s", why.text);
	} else if (finish_output(&st, &out, backend, res, &why) != 0) {
		res_fail(res, keep, "%s", why.text);
	} else {
		http_dispatch_output_digest(res->outputs, res->output_digest);
		rc = 0;
	}
out:
	json_decref(st.summary);
	free(text);
	model_buf_release(&out);
	model_buf_release(&err);
	return rc;
}

/* The one line of --preflight NAME, checked strictly. */
static int parse_preflight(const struct model_buf *out, const char *backend,
                           struct http_preflight *pf, struct model_reason *why)
{
	json_t *line = NULL;
	json_t *reason = NULL;
	json_error_t e;
	const char *type, *be;
	const char *nl;
	int ok = 0;
	int rc = -1;

	nl = out->len ? memchr(out->data, '\n', out->len) : NULL;
	if (!nl || (size_t)(nl - out->data) + 1 != out->len) {
		model_reason_set(why, "preflight answer malformed: not one line");
		goto out;
	}
	line = json_loadb(out->data, (size_t)(nl - out->data), JSON_REJECT_DUPLICATES, &e);
	if (!line ||
	    json_unpack_ex(line, &e, JSON_STRICT, "{s:s, s:s, s:b, s:o}", "type", &type, "backend",
	                   &be, "ok", &ok, "reason", &reason) != 0 ||
	    strcmp(type, "preflight") != 0) {
		model_reason_set(why, "preflight answer malformed");
		goto out;
	}
	if (strcmp(be, backend) != 0) {
		model_reason_set(why, "preflight answer is about another backend");
		goto out;
	}
	if ((ok && !json_is_null(reason)) || (!ok && !json_is_string(reason))) {
		model_reason_set(why, "preflight answer inconsistent: ok and reason disagree");
		goto out;
	}
	pf->ok = ok ? 1 : 0;
	copy_utf8(pf->reason, sizeof(pf->reason), ok ? "" : json_string_value(reason));
	rc = 0;
out:
	json_decref(line);
	return rc;
}

int http_dispatch_preflight(const char *runner_path, const char *backend, const char *platform,
                            int timeout_ms, struct http_preflight *pf)
{
	struct model_buf out, err;
	struct http_spawn_result ce;
	char *argv[6];
	struct model_reason why;
	int rc = -1;

	memset(pf, 0, sizeof(*pf));
	model_buf_init(&out, DISPATCH_PREFLIGHT_MAX);
	model_buf_init(&err, DISPATCH_STDERR_KEEP);
	if (!runner_path || !backend || timeout_ms <= 0) {
		model_reason_set(&why, "invalid dispatch arguments");
		goto out;
	}
	runner_argv(argv, runner_path, "--preflight", backend, platform);
	if (spawn_runner(runner_path, 0, argv, "", 0, timeout_ms, &out, &err, NULL, &ce, &why) != 0)
		goto out;
	if (ce.end == HTTP_SPAWN_TIMEOUT) {
		model_reason_set(&why, "preflight did not answer within %d ms", timeout_ms);
		goto out;
	}
	if (ce.end == HTTP_SPAWN_OVER_CAP) {
		model_reason_set(&why, "preflight answer over %u bytes", DISPATCH_PREFLIGHT_MAX);
		goto out;
	}
	if (child_failed(&ce, &err, timeout_ms, &why) != 0)
		goto out;
	if (parse_preflight(&out, backend, pf, &why) != 0)
		goto out;
	rc = 0;
out:
	if (rc) {
		pf->ok = 0;
		copy_utf8(pf->reason, sizeof(pf->reason), why.text);
	}
	model_buf_release(&out);
	model_buf_release(&err);
	return rc;
}

void http_dispatch_result_free(struct http_dispatch_result *res)
{
	if (!res)
		return;
	json_decref(res->outputs);
	res->outputs = NULL;
	model_buf_release(&res->log);
	res->log_dropped = 0;
}
