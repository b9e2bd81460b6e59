/*
 * Unit tests of the hooked runner dispatch (fcgi/run/dispatch.h:
 * http_dispatch_run_hooked, http_dispatch_output_digest): steps handed to
 * a hook as they end, ticks while the runner runs, a run stopped by a hook
 * and the outputs kept when something else ends it.
 *
 * The runner is the built binary named by OLIVARES_RUNNER (Makefile.am's
 * AM_TESTS_ENVIRONMENT sets it), run through the fork server as the
 * worker and the executor run it. Its mocks' delay_ms (model/runspec.h)
 * make a run last: the runner waits that long before it answers a step.
 * This binary is also a fake runner: run as `test_dispatch --backend
 * fixture-garbage-after-3` it writes three good step lines (one of them in
 * two pieces), then one that is not JSON, then a summary.
 *
 * The namespaces and gvisor cases need root and a backend whose preflight
 * passes: elsewhere they say why on stderr and check nothing.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcgi/run/dispatch.h"
#include "fcgi/run/runner_server.h"
#include "tests/unit/runner_harness.h"

#define SEEN_MAX 64

static char self_exe[4096];

static const char *runner(void)
{
	return env_path("OLIVARES_RUNNER");
}

/* What the hooks saw of a run. */
struct seen {
	json_t *outputs;          /* a copy of each output handed to step, in order */
	long long at[SEEN_MAX];   /* now_ms() of each step call */
	int alive[SEEN_MAX];      /* the runner was still running at that call */
	pid_t runner;             /* the served runner, found at the first step call */
	int ticks;                /* tick calls */
	size_t stop_after;        /* tick asks to stop once this many steps were seen (0: never) */
	int step_calls_after_end; /* step calls after the run returned (must stay 0) */
	int ended;
};

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	s->outputs = json_array();
	s->runner = -1;
}

/* The runner the fork server runs now: the one child of the server that
 * leads a process group of its own (a spare makes its group only when it
 * takes a run). -1 when none. */
static pid_t served_runner(void)
{
	pid_t server = http_runner_server_pid();
	char path[96], buf[1024];
	pid_t found = -1, p;
	char *tok;
	FILE *f;

	if (server <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)server, (int)server);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
		p = (pid_t)atol(tok);
		if (getpgid(p) == p)
			found = p;
	}
	return found;
}

/* pid exists and is not a zombie. */
static int running(pid_t pid)
{
	char path[64], buf[512];
	char *close_paren;
	FILE *f;
	int ok = 0;

	if (pid <= 0 || kill(pid, 0) != 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		close_paren = strrchr(buf, ')');
		ok = close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' &&
		     close_paren[2] != 'X';
	}
	fclose(f);
	return ok;
}

static int on_step(void *ctx, json_t *output)
{
	struct seen *s = ctx;
	size_t n = json_array_size(s->outputs);

	if (s->ended)
		s->step_calls_after_end++;
	if (s->runner < 0)
		s->runner = served_runner();
	if (n < SEEN_MAX) {
		s->at[n] = now_ms();
		s->alive[n] = running(s->runner);
	}
	json_array_append_new(s->outputs, json_deep_copy(output));
	return 0;
}

static int on_tick(void *ctx)
{
	struct seen *s = ctx;

	s->ticks++;
	return s->stop_after && json_array_size(s->outputs) >= s->stop_after;
}

/* n steps "s1".."sn", each answered by a mock after delay_ms. */
static json_t *slow_spec(int n, long delay_ms)
{
	json_t *spec = spec_new(NULL, NULL);
	char key[16], input[32], answer[32];
	int i;

	for (i = 1; i <= n; i++) {
		snprintf(key, sizeof(key), "s%d", i);
		snprintf(input, sizeof(input), "tool:slow-%d", i);
		snprintf(answer, sizeof(answer), "answer %d", i);
		spec_step(spec, key, input);
		spec_mock_delayed(spec, input, answer, delay_ms);
	}
	return spec;
}

/* The digest of outputs, from dispatch.h's definition. */
static void digest_of(json_t *outputs, char hex[65])
{
	http_dispatch_output_digest(outputs, hex);
	ck_assert_uint_eq(strlen(hex), 64);
}

/* ---- steps as they end --------------------------------------------------- */

START_TEST(test_steps_handed_as_they_end)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = slow_spec(4, 500);
	struct seen s;
	long long t0, end;
	char want[65];
	size_t i;
	int rc;

	seen_init(&s);
	hooks.ctx = &s;
	hooks.step = on_step;
	t0 = now_ms();
	rc = http_dispatch_run_hooked(runner(), 1, "inproc-mock", NULL, 20000, spec, &hooks, &r);
	end = now_ms();
	s.ended = 1;
	ck_assert_msg(rc == 0, "run: %s", r.reason);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 4);
	ck_assert_int_eq(r.isolated, 1);
	ck_assert_uint_eq(json_array_size(s.outputs), 4);
	ck_assert_msg(json_equal(r.outputs, s.outputs), "the outputs are not the hook's");
	for (i = 0; i < 4; i++) {
		json_t *o = json_array_get(s.outputs, i);
		char key[16];

		snprintf(key, sizeof(key), "s%zu", i + 1);
		ck_assert_int_eq(json_integer_value(json_object_get(o, "seq")), (json_int_t)i + 1);
		ck_assert_str_eq(json_string_value(json_object_get(o, "key")), key);
		ck_assert(i == 0 || s.at[i] >= s.at[i - 1]);
		ck_assert_msg(s.at[i] >= t0 && s.at[i] <= end, "step %zu called outside the run",
		              i + 1);
	}
	/* Each step but the last came while the runner was still running
	 * (it had at least one more 500 ms delay to wait), and the first
	 * at least 500 ms before the run ended (three delays came after it:
	 * a bound that leaves 1 s for a loaded machine). */
	ck_assert_int_gt(s.runner, 0);
	for (i = 0; i < 3; i++)
		ck_assert_msg(s.alive[i], "step %zu was handed after the runner had ended", i + 1);
	ck_assert_msg(s.at[0] <= end - 500,
	              "step 1 came %lld ms before the run's end, not at least 500 ms",
	              end - s.at[0]);
	digest_of(s.outputs, want);
	ck_assert_str_eq(r.output_digest, want);
	ck_assert_int_eq(s.step_calls_after_end, 0);
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
	http_runner_server_stop();
}
END_TEST

START_TEST(test_ticks_while_running)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = slow_spec(1, 2000);
	struct seen s;
	int rc;

	seen_init(&s);
	hooks.ctx = &s;
	hooks.tick = on_tick;
	hooks.tick_ms = 100;
	rc = http_dispatch_run_hooked(runner(), 1, "inproc-mock", NULL, 20000, spec, &hooks, &r);
	ck_assert_msg(rc == 0, "run: %s", r.reason);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_uint_eq(json_array_size(r.outputs), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.outputs, 0), "output")),
	                 "answer 1");
	/* about 20 expected: a generous bound */
	ck_assert_msg(s.ticks >= 5, "%d ticks in a 2 s run at tick_ms 100, not at least 5",
	              s.ticks);
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
	http_runner_server_stop();
}
END_TEST

/* ---- a run stopped by a hook ----------------------------------------------- */

/* Every descendant of ours (the subreaper) gone within 30 s of the fork
 * server's stop: what the runner started (a jail, a sandbox, their
 * guards) included. Returns how many were reaped. */
static int descendants_gone(void)
{
	long long give_up = now_ms() + 30000;
	int reaped = 0;
	pid_t p;

	http_runner_server_stop();
	for (;;) {
		p = waitpid(-1, NULL, WNOHANG);
		if (p < 0) {
			ck_assert_int_eq(errno, ECHILD);
			return reaped;
		}
		if (p > 0) {
			reaped++;
			continue;
		}
		ck_assert_msg(now_ms() < give_up,
		              "a process the run started is still alive 30 s after the stop");
		sleep_ms(20);
	}
}

/* A run of 10 steps (300 ms each) on backend whose tick asks to stop after
 * step 2: stopped there, the runner and its group gone, nothing of the run
 * left. */
static void check_cancel(const char *backend)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = slow_spec(10, 300);
	struct seen s;
	char want[65];
	int rc;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	seen_init(&s);
	hooks.ctx = &s;
	hooks.step = on_step;
	hooks.tick = on_tick;
	hooks.tick_ms = 100;
	s.stop_after = 2;
	rc = http_dispatch_run_hooked(runner(), 1, backend, NULL, 60000, spec, &hooks, &r);
	s.ended = 1;
	ck_assert_msg(rc == 1, "%s: returned %d: %s", backend, rc, r.reason);
	ck_assert_str_eq(r.status, "cancelled");
	ck_assert_str_eq(r.reason, "cancelled while running (2 of 10 steps done)");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(r.destroyed, 0);
	ck_assert_int_eq(r.steps_total, 2);
	ck_assert_int_eq(r.steps_ok, 2);
	ck_assert_int_eq(r.steps_error, 0);
	ck_assert_str_eq(r.shutdown, "");
	ck_assert_uint_eq(json_array_size(r.outputs), 2);
	ck_assert_msg(json_equal(r.outputs, s.outputs), "the outputs are not the hook's");
	digest_of(s.outputs, want);
	ck_assert_str_eq(r.output_digest, want);
	/* The runner was running when it was stopped, and is gone with its
	 * whole group by the time the call returns (reaped by its server). */
	ck_assert_int_gt(s.runner, 0);
	ck_assert(s.alive[0] && s.alive[1]);
	errno = 0;
	ck_assert_msg(kill(s.runner, 0) == -1 && errno == ESRCH, "%s: runner %d still there",
	              backend, (int)s.runner);
	errno = 0;
	ck_assert_msg(kill(-s.runner, 0) == -1 && errno == ESRCH,
	              "%s: a process is left in the runner's group %d", backend, (int)s.runner);
	ck_assert_int_eq(s.step_calls_after_end, 0);
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
	descendants_gone();
}

/* root and a backend whose preflight passes, else 0 with the reason on stderr */
static int backend_usable(const char *backend)
{
	char why[512];

	if (geteuid() != 0) {
		fprintf(stderr, "test_dispatch: %s cancel: needs root, skipped\n", backend);
		return 0;
	}
	if (!runner_preflight_ok(backend, why, sizeof(why))) {
		fprintf(stderr, "test_dispatch: %s cancel: preflight failed (%s), skipped\n",
		        backend, why);
		return 0;
	}
	return 1;
}

START_TEST(test_cancel_inproc_mock)
{
	check_cancel("inproc-mock");
}
END_TEST

START_TEST(test_cancel_namespaces)
{
	if (backend_usable("namespaces"))
		check_cancel("namespaces");
}
END_TEST

START_TEST(test_cancel_gvisor)
{
	if (backend_usable("gvisor"))
		check_cancel("gvisor");
}
END_TEST

/* The step hook itself stops the run: the step it was given is kept. */
static int step_then_stop(void *ctx, json_t *output)
{
	on_step(ctx, output);
	return 1;
}

START_TEST(test_step_hook_stops)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = slow_spec(5, 200);
	struct seen s;

	seen_init(&s);
	hooks.ctx = &s;
	hooks.step = step_then_stop;
	ck_assert_int_eq(
	    http_dispatch_run_hooked(runner(), 1, "inproc-mock", NULL, 20000, spec, &hooks, &r), 1);
	ck_assert_str_eq(r.status, "cancelled");
	ck_assert_str_eq(r.reason, "cancelled while running (1 of 5 steps done)");
	ck_assert_uint_eq(json_array_size(r.outputs), 1);
	ck_assert(json_equal(r.outputs, s.outputs));
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
	http_runner_server_stop();
}
END_TEST

/* ---- the outputs of a run the worker fails ------------------------------------ */

START_TEST(test_malformed_line_keeps_steps)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	struct seen s;
	char want[65];

	spec_step(spec, "k1", "i1");
	spec_step(spec, "k2", "i2");
	spec_step(spec, "k3", "i3");
	spec_step(spec, "k4", "i4");
	seen_init(&s);
	hooks.ctx = &s;
	hooks.step = on_step;
	ck_assert_int_eq(http_dispatch_run_hooked(self_exe, 0, "fixture-garbage-after-3", NULL,
	                                          5000, spec, &hooks, &r),
	                 -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "runner output malformed: line 4 is not a JSON object");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(r.destroyed, 0);
	ck_assert_uint_eq(json_array_size(s.outputs), 3);
	ck_assert_msg(json_equal(r.outputs, s.outputs), "the outputs are not the hook's");
	ck_assert_int_eq(r.steps_total, 3);
	ck_assert_int_eq(r.steps_ok, 2);
	ck_assert_int_eq(r.steps_error, 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.outputs, 2), "output")),
	                 "out 3");
	digest_of(s.outputs, want);
	ck_assert_str_eq(r.output_digest, want);
	http_dispatch_result_free(&r);

	/* without a step hook: the same reason, no output (as ever) */
	ck_assert_int_eq(
	    http_dispatch_run(self_exe, 0, "fixture-garbage-after-3", NULL, 5000, spec, &r), -1);
	ck_assert_str_eq(r.reason, "runner output malformed: line 4 is not a JSON object");
	ck_assert_uint_eq(json_array_size(r.outputs), 0);
	ck_assert_int_eq(r.steps_total, 0);
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
}
END_TEST

START_TEST(test_deadline_keeps_steps)
{
	struct http_dispatch_hooks hooks = {0};
	struct http_dispatch_result r;
	json_t *spec = slow_spec(10, 300);
	struct seen s;
	char want[65];

	/* The worker's deadline (1500 ms) before the runner's own wall
	 * clock (10 s): the worker kills it, and keeps the steps it handed. */
	seen_init(&s);
	hooks.ctx = &s;
	hooks.step = on_step;
	ck_assert_int_eq(
	    http_dispatch_run_hooked(runner(), 1, "inproc-mock", NULL, 1500, spec, &hooks, &r), -1);
	ck_assert_str_eq(
	    r.reason,
	    "runner still running at the worker's deadline, 1500 ms after its start; killed");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_uint_lt(json_array_size(s.outputs), 10);
	ck_assert_msg(json_equal(r.outputs, s.outputs), "the outputs are not the hook's");
	ck_assert_int_eq(r.steps_total, (int)json_array_size(s.outputs));
	digest_of(s.outputs, want);
	ck_assert_str_eq(r.output_digest, want);
	http_dispatch_result_free(&r);
	json_decref(s.outputs);
	json_decref(spec);
	http_runner_server_stop();
}
END_TEST

/* ---- the digest ------------------------------------------------------------------ */

/* A step line's trace is checked like the rest of the line and kept in
 * the output: inproc-mock's one lookup a step, its near miss on a CRLF;
 * a mock index outside the spec's mocks, or an "ok" step with a missed
 * request, fails the run. */
START_TEST(test_trace_checked)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	json_t *t0, *t1, *near;

	spec_step(spec, "hit", "GET /a\n");
	spec_step(spec, "crlf", "GET /a\r\n");
	spec_mock(spec, "GET /a\n", "A", NULL);
	ck_assert_int_eq(http_dispatch_run(runner(), 0, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	t0 = json_object_get(json_array_get(r.outputs, 0), "trace");
	t1 = json_object_get(json_array_get(r.outputs, 1), "trace");
	ck_assert_uint_eq(json_array_size(t0), 1);
	ck_assert(json_is_true(json_object_get(json_array_get(t0, 0), "hit")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(t0, 0), "mock")), 0);
	ck_assert(json_is_false(json_object_get(json_array_get(t1, 0), "hit")));
	near = json_object_get(json_array_get(t1, 0), "near_miss");
	ck_assert_int_eq(json_integer_value(json_object_get(near, "offset")), 6);
	ck_assert_str_eq(json_string_value(json_object_get(near, "request_has")), "CR (U+000D)");
	http_dispatch_result_free(&r);

	ck_assert_int_eq(http_dispatch_run(self_exe, 0, "fixture-bad-trace", NULL, 5000, spec, &r),
	                 -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_msg(strstr(r.reason, "step 1: trace[0].mock must be a mock's index") != NULL,
	              "reason: %s", r.reason);
	http_dispatch_result_free(&r);
	ck_assert_int_eq(http_dispatch_run(self_exe, 0, "fixture-ok-miss", NULL, 5000, spec, &r),
	                 -1);
	ck_assert_msg(strstr(r.reason, "step 1: ok with a missed request in its trace") != NULL,
	              "reason: %s", r.reason);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_output_digest)
{
	static const char bytes[] = "1\0a\0x\ny\0ok\0"
	                            "12\0b\0\0error\0";
	struct http_dispatch_result r;
	json_t *outputs, *spec = spec_new(NULL, NULL);
	unsigned char md[32];
	unsigned int len = 0, i;
	char want[65], got[65];

	/* SHA-256 over seq NUL key NUL output NUL status NUL, per output:
	 * computed here from the definition; other members do not count */
	outputs = json_pack("[{s:i, s:s, s:s, s:s, s:s}, {s:i, s:s, s:s, s:s, s:s, s:n}]", "seq", 1,
	                    "key", "a", "input", "ignored", "output", "x\ny", "status", "ok", "seq",
	                    12, "key", "b", "input", "also ignored", "output", "", "status",
	                    "error", "duration_ms");
	ck_assert_ptr_nonnull(outputs);
	ck_assert_int_eq(EVP_Digest(bytes, sizeof(bytes) - 1, md, &len, EVP_sha256(), NULL), 1);
	for (i = 0; i < 32; i++)
		snprintf(want + 2 * i, 3, "%02x", md[i]);
	http_dispatch_output_digest(outputs, got);
	ck_assert_str_eq(got, want);
	json_decref(outputs);

	outputs = json_array();
	http_dispatch_output_digest(outputs, got);
	ck_assert_str_eq(got, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	json_decref(outputs);

	/* what dispatch records is the same function's */
	spec_step(spec, "one", "tool:one");
	spec_step(spec, "two", "tool:two");
	spec_mock(spec, "tool:one", "first", NULL);
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_uint_eq(json_array_size(r.outputs), 2);
	http_dispatch_output_digest(r.outputs, got);
	ck_assert_str_eq(r.output_digest, got);
	http_dispatch_result_free(&r);
	json_decref(spec);
	http_runner_server_stop();
}
END_TEST

/* ---- this binary as a fake runner ------------------------------------------------- */

/* `test_dispatch --backend fixture-garbage-after-3`: the spec's first
 * three steps answered ("out N"; the third a mock miss; the second line
 * written in two halves 100 ms apart), then a line that is not JSON, then
 * a summary. */
static int fake_garbage_after_3(void)
{
	json_t *spec = json_loadf(stdin, 0, NULL);
	json_t *steps = json_object_get(spec, "steps");
	json_t *st, *line;
	char out[16];
	char *text;
	size_t i, half;

	for (i = 0; i < 3; i++) {
		st = json_array_get(steps, i);
		if (!st)
			return 2;
		snprintf(out, sizeof(out), "out %zu", i + 1);
		line = json_pack(
		    "{s:s, s:i, s:O, s:O, s:s, s:s, s:o, s:i}", "type", "step", "seq", (int)i + 1,
		    "key", json_object_get(st, "key"), "input", json_object_get(st, "input"),
		    "output", out, "status", i == 2 ? "error" : "ok", "error_kind",
		    i == 2 ? json_string("mock_miss") : json_null(), "duration_us", 10);
		text = json_dumps(line, JSON_COMPACT);
		json_decref(line);
		if (!text)
			return 2;
		/* the second line in two writes, apart: the worker joins them */
		half = i == 1 ? strlen(text) / 2 : 0;
		if (half) {
			fwrite(text, 1, half, stdout);
			fflush(stdout);
			sleep_ms(100);
		}
		printf("%s\n", text + half);
		fflush(stdout);
		free(text);
	}
	printf("not json\n");
	printf("{\"type\":\"summary\",\"runner\":\"fixture\",\"backend\":\"fixture-garbage-after-"
	       "3\",\"isolated\":false,\"destroyed\":false,\"status\":\"completed\","
	       "\"steps_total\":3,\"steps_ok\":2,\"steps_error\":1,\"reason\":null}\n");
	json_decref(spec);
	return 0;
}

/* `test_dispatch --backend fixture-bad-trace|fixture-ok-miss`: one step
 * line whose trace names a mock the spec does not have (bad-trace), or
 * says "ok" with a missed request (ok-miss), then a summary. */
static int fake_trace(const char *backend)
{
	json_t *spec = json_loadf(stdin, 0, NULL);
	json_t *st = json_array_get(json_object_get(spec, "steps"), 0);
	size_t n = json_array_size(json_object_get(spec, "mocks"));
	int bad = strcmp(backend, "fixture-bad-trace") == 0;
	json_t *line;

	if (!st)
		return 2;
	line = json_pack("{s:s, s:i, s:O, s:O, s:s, s:s, s:n, s:i, s:[{s:s, s:b, s:o, s:i}]}",
	                 "type", "step", "seq", 1, "key", json_object_get(st, "key"), "input",
	                 json_object_get(st, "input"), "output", "out", "status", "ok",
	                 "error_kind", "duration_us", 10, "trace", "resource", "r", "hit", bad,
	                 "mock", bad ? json_integer((json_int_t)n) : json_null(), "duration_us", 3);
	json_dumpf(line, stdout, JSON_COMPACT);
	printf("\n{\"type\":\"summary\",\"runner\":\"fixture\",\"backend\":\"%s\","
	       "\"isolated\":false,\"destroyed\":false,\"status\":\"completed\","
	       "\"steps_total\":1,\"steps_ok\":1,\"steps_error\":0,\"reason\":null}\n",
	       backend);
	fflush(stdout);
	json_decref(line);
	json_decref(spec);
	return 0;
}

static Suite *dispatch_suite(void)
{
	const TTest *const hooks[] = {
	    test_steps_handed_as_they_end,
	    test_ticks_while_running,
	    test_cancel_inproc_mock,
	    test_step_hook_stops,
	    test_malformed_line_keeps_steps,
	    test_deadline_keeps_steps,
	    test_output_digest,
	    test_trace_checked,
	    NULL,
	};
	const TTest *const backends[] = {
	    test_cancel_namespaces,
	    test_cancel_gvisor,
	    NULL,
	};
	Suite *s = suite_create("dispatch");

	suite_add_tests(s, "hooks", 60, hooks);
	suite_add_tests(s, "os-backends", 120, backends);
	return s;
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "--backend") == 0 &&
	    strcmp(argv[2], "fixture-garbage-after-3") == 0)
		return fake_garbage_after_3();
	if (argc == 3 && strcmp(argv[1], "--backend") == 0 &&
	    (strcmp(argv[2], "fixture-bad-trace") == 0 || strcmp(argv[2], "fixture-ok-miss") == 0))
		return fake_trace(argv[2]);
	if (argc != 1) {
		/* Never run the suite from a fixture invocation. */
		fprintf(stderr, "test_dispatch: unexpected arguments\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	return suite_main(dispatch_suite(), CK_ENV);
}
