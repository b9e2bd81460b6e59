/*
 * What the runner's suites share (tests/unit/runner_harness.h).
 */
#include "tests/unit/runner_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/sweep.h"

const char *env_path(const char *name)
{
	const char *p = getenv(name);

	ck_assert_msg(p && *p, "%s is not set (make check sets it)", name);
	ck_assert_msg(access(p, X_OK) == 0, "%s=%s is not executable", name, p);
	return p;
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

void result_free(struct result *r)
{
	json_decref(r->steps);
	json_decref(r->summary);
	free(r->log);
	r->log = NULL;
}

/* A log line of r's runner: its data appended to r->log. */
static void take_log_line(struct result *r, json_t *j)
{
	json_t *data = json_object_get(j, "data"), *dropped = json_object_get(j, "dropped");
	size_t n;

	ck_assert_msg(r->summary == NULL, "a log line after the summary");
	ck_assert_msg(json_is_string(data) && json_is_integer(dropped) && json_object_size(j) == 3,
	              "a log line is {type, data: string, dropped: integer}");
	ck_assert_msg(json_integer_value(dropped) >= r->log_dropped,
	              "a log line drops fewer bytes than the one before");
	n = json_string_length(data);
	r->log = realloc(r->log, r->log_len + n + 1);
	ck_assert_ptr_nonnull(r->log);
	memcpy(r->log + r->log_len, json_string_value(data), n);
	r->log_len += n;
	r->log[r->log_len] = '\0';
	r->log_dropped = json_integer_value(dropped);
	r->log_lines++;
}

pid_t spawn_runner_with(const char *const *args, json_t *spec, char *const *env,
                        int (*setup)(void *ctx), void *ctx, int *out)
{
	char *text = spec ? json_dumps(spec, JSON_COMPACT) : strdup("");
	int in[2], o[2];
	ssize_t w;
	pid_t pid;

	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(o), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		close(in[0]);
		close(in[1]);
		close(o[0]);
		close(o[1]);
		if (setup && setup(ctx) != 0)
			_exit(126);
		execve(args[0], (char *const *)args, env);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	/* A runner that refuses the run before reading its spec (a failed
	 * preflight) may close stdin first: EPIPE is then expected (the
	 * suites ignore SIGPIPE). */
	w = write(in[1], text, strlen(text));
	ck_assert(w == (ssize_t)strlen(text) || (w < 0 && errno == EPIPE));
	close(in[1]);
	free(text);
	*out = o[0];
	return pid;
}

struct result collect_text(pid_t pid, const char *text, size_t len, long long t0)
{
	struct result r;
	char *buf, *line, *save = NULL;
	json_error_t e;
	json_t *j;

	memset(&r, 0, sizeof(r));
	r.first_ms = -1;
	r.steps = json_array();
	r.log = calloc(1, 1);
	ck_assert_ptr_nonnull(r.log);
	ck_assert_int_eq(waitpid(pid, &r.status, 0), pid);
	r.ms = now_ms() - t0;
	buf = malloc(len + 1);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		j = json_loads(line, 0, &e);
		ck_assert_msg(j != NULL, "runner line is not JSON: %s", line);
		if (strcmp(json_string_value(json_object_get(j, "type")), "step") == 0) {
			ck_assert_msg(r.summary == NULL, "a step line after the summary");
			json_array_append_new(r.steps, j);
		} else if (strcmp(json_string_value(json_object_get(j, "type")), "log") == 0) {
			take_log_line(&r, j);
			json_decref(j);
		} else {
			ck_assert_msg(r.summary == NULL, "two summary lines");
			r.summary = j;
		}
	}
	free(buf);
	return r;
}

void text_add(struct text *t, const char *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2;
		t->data = realloc(t->data, t->cap);
		ck_assert_ptr_nonnull(t->data);
	}
	memcpy(t->data + t->len, p, n);
	t->len += n;
}

struct result collect(pid_t pid, int fd, long long t0)
{
	struct text out = {NULL, 0, 0};
	struct result r;
	char chunk[65536];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		text_add(&out, chunk, (size_t)n);
	close(fd);
	r = collect_text(pid, out.data ? out.data : "", out.len, t0);
	free(out.data);
	return r;
}

json_t *spec_new(const char *variant, const char *agent)
{
	json_t *s = json_pack("{s:o, s:[], s:[]}", "variant",
	                      variant ? json_string(variant) : json_null(), "steps", "mocks");

	if (agent)
		json_object_set_new(s, "agent", json_string(agent));
	return s;
}

void spec_step(json_t *spec, const char *key, const char *input)
{
	json_array_append_new(json_object_get(spec, "steps"),
	                      json_pack("{s:s, s:s}", "key", key, "input", input));
}

void spec_mock(json_t *spec, const char *resource, const char *response, const char *variant)
{
	json_t *m = json_pack("{s:s, s:s}", "resource", resource, "response", response);

	if (variant)
		json_object_set_new(m, "variant", json_string(variant));
	json_array_append_new(json_object_get(spec, "mocks"), m);
}

void spec_mock_delayed(json_t *spec, const char *resource, const char *response, long delay_ms)
{
	json_array_append_new(json_object_get(spec, "mocks"),
	                      json_pack("{s:s, s:s, s:I}", "resource", resource, "response",
	                                response, "delay_ms", (json_int_t)delay_ms));
}

json_t *delay_spec(long delay_ms)
{
	json_t *spec = spec_new(NULL, NULL);

	spec_step(spec, "slow", "tool:slow");
	spec_step(spec, "quick", "tool:quick");
	spec_mock_delayed(spec, "tool:slow", "slow answer", delay_ms);
	spec_mock(spec, "tool:quick", "quick answer", NULL);
	return spec;
}

void assert_delayed_run(const struct result *r, long delay_ms)
{
	json_int_t slow;

	ck_assert_msg(r->summary != NULL, "no summary line from the runner");
	ck_assert_msg(strcmp(sum_str(r, "status"), "completed") == 0, "status %s: %s",
	              sum_str(r, "status"), sum_str(r, "reason") ? sum_str(r, "reason") : "");
	ck_assert_int_eq(sum_int(r, "steps_ok"), 2);
	ck_assert_int_eq(json_array_size(r->steps), 2);
	ck_assert_str_eq(step_str(r, 0, "output"), "slow answer");
	ck_assert_str_eq(step_str(r, 1, "output"), "quick answer");
	slow = json_integer_value(json_object_get(json_array_get(r->steps, 0), "duration_us"));
	ck_assert_msg(slow >= (json_int_t)delay_ms * 1000 && slow <= r->ms * 1000,
	              "slow step: %lld us, want at least its delay of %ld ms, within the %lld ms "
	              "run",
	              (long long)slow, delay_ms, r->ms);
}

void spec_slow_and_quick(json_t *spec)
{
	spec_step(spec, "slow", "sleep 300");
	spec_step(spec, "quick", "sleep 0");
}

void assert_slow_and_quick(const struct result *r)
{
	json_int_t slow, quick;

	ck_assert_str_eq(sum_str(r, "status"), "completed");
	ck_assert_int_eq(json_array_size(r->steps), 2);
	ck_assert_str_eq(step_str(r, 0, "output"), "sleep: 300 ms");
	slow = json_integer_value(json_object_get(json_array_get(r->steps, 0), "duration_us"));
	quick = json_integer_value(json_object_get(json_array_get(r->steps, 1), "duration_us"));
	ck_assert_msg(slow >= 300000 && slow <= r->ms * 1000, "slow step: %lld us in a %lld ms run",
	              (long long)slow, r->ms);
	ck_assert_msg(quick >= 1 && quick < 300000, "quick step: %lld us", (long long)quick);
}

void spec_limit(json_t *spec, const char *key, long value)
{
	json_t *l = json_object_get(spec, "limits");

	if (!l) {
		l = json_object();
		json_object_set_new(spec, "limits", l);
	}
	json_object_set_new(l, key, json_integer(value));
}

json_t *walk_spec(void)
{
	json_t *spec = spec_new("candidate", NULL);

	spec_step(spec, "step-1", "agent:user1@example.test");
	spec_step(spec, "step-2", "agent:user2@example.test");
	spec_mock(spec, "agent:user1@example.test", "first synthetic account", NULL);
	return spec;
}

json_t *steps_timed(const struct result *r)
{
	json_t *copy = json_deep_copy(r->steps);
	json_t *step, *d, *e;
	size_t i, j;

	json_array_foreach(copy, i, step)
	{
		d = json_object_get(step, "duration_us");
		ck_assert_msg(json_is_integer(d), "step %zu has no integer duration_us", i + 1);
		ck_assert_int_ge(json_integer_value(d), 1);
		ck_assert_int_le(json_integer_value(d), (r->ms + 1) * 1000);
		json_object_del(step, "duration_us");
		/* each traced request has its own time too; the rest of the
		 * trace (what was asked, what answered) is the same everywhere */
		json_array_foreach(json_object_get(step, "trace"), j, e)
		{
			ck_assert_msg(json_is_integer(json_object_get(e, "duration_us")),
			              "step %zu, trace[%zu] has no integer duration_us", i + 1, j);
			json_object_del(e, "duration_us");
		}
	}
	return copy;
}

void assert_same_as_inproc(const struct result *a, const struct result *b)
{
	static const char *const counters[] = {"status",   "steps_total", "steps_ok", "steps_error",
	                                       "isolated", "destroyed",   "reason",   "shutdown"};
	json_t *sa, *sb;
	size_t i;

	ck_assert_int_eq(json_array_size(b->steps), 2);
	/* the same lines but for each step's own time */
	sa = steps_timed(a);
	sb = steps_timed(b);
	ck_assert_msg(json_equal(sa, sb), "step lines differ");
	json_decref(sa);
	json_decref(sb);
	ck_assert_str_eq(step_str(b, 0, "output"), "first synthetic account");
	ck_assert_str_eq(step_str(b, 1, "output"), "[[mock-miss:agent:user2@example.test]]");
	ck_assert_str_eq(step_str(b, 1, "error_kind"), "mock_miss");
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		ck_assert_msg(json_equal(json_object_get(a->summary, counters[i]),
		                         json_object_get(b->summary, counters[i])),
		              "summary %s differs", counters[i]);
}

const char *sum_str(const struct result *r, const char *key)
{
	return json_string_value(json_object_get(r->summary, key));
}

long long sum_int(const struct result *r, const char *key)
{
	return json_integer_value(json_object_get(r->summary, key));
}

int sum_bool(const struct result *r, const char *key)
{
	return json_is_true(json_object_get(r->summary, key));
}

const char *step_str(const struct result *r, size_t i, const char *key)
{
	json_t *s = json_array_get(r->steps, i);

	ck_assert_msg(s != NULL, "no step line %zu", i + 1);
	return json_string_value(json_object_get(s, key));
}

TCase *suite_add_tests(Suite *s, const char *name, double timeout, const TTest *const *tests)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
	suite_add_tcase(s, tc);
	return tc;
}

int suite_main(Suite *s, enum print_output mode)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, mode);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

double reason_cpu_used(const char *reason)
{
	const char *p;
	double used = -1;

	if (!reason || strncmp(reason, "cpu_seconds limit (", 19) != 0)
		return -1;
	p = strstr(reason, ") reached: ");
	if (!p || sscanf(p, ") reached: %lf s used", &used) != 1)
		return -1;
	return used;
}

int runner_preflight_ok(const char *backend, char *why, size_t n)
{
	const char *runner = getenv("OLIVARES_RUNNER");
	char cmd[1024], line[2048];
	json_t *j;
	FILE *p;
	int ok = 0;

	snprintf(why, n, "no answer from --preflight %s", backend);
	if (!runner)
		return 0;
	snprintf(cmd, sizeof(cmd), "'%s' --preflight %s", runner, backend);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (fgets(line, sizeof(line), p)) {
		j = json_loads(line, 0, NULL);
		ok = json_is_true(json_object_get(j, "ok"));
		if (json_is_string(json_object_get(j, "reason")))
			snprintf(why, n, "%s", json_string_value(json_object_get(j, "reason")));
		json_decref(j);
	}
	pclose(p);
	return ok;
}

/* The logging agent's run on backend of the steps "a", "b", ... whose
 * inputs are the NULL-terminated inputs. */
static struct result logger_run(struct result (*run)(const char *backend, json_t *spec),
                                const char *backend, const char *const *inputs)
{
	static const char *const keys[] = {"a", "b", "c"};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_LOGGER_AGENT"));
	struct result r;
	size_t i;

	for (i = 0; inputs[i] && i < sizeof(keys) / sizeof(keys[0]); i++)
		spec_step(spec, keys[i], inputs[i]);
	r = run(backend, spec);
	json_decref(spec);
	return r;
}

void assert_agent_log(struct result (*run)(const char *backend, json_t *spec), const char *backend)
{
	static const char *const two[] = {"x", "y", NULL}, *const flood[] = {"flood", NULL};
	static const char *const escape[] = {"escape", NULL}, *const die[] = {"x", "die", NULL};
	const char *reason;
	struct result r;
	size_t i;

	/* prints between the protocol's lines: the log, in order */
	r = logger_run(run, backend, two);
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 0, "output"), "logged");
	ck_assert_str_eq(step_str(&r, 1, "output"), "logged");
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 2);
	ck_assert_str_eq(r.log, "start: on stdout\n"
	                        "step: on stdout\nstep: on stderr\n"
	                        "step: on stdout\nstep: on stderr\n"
	                        "end: on stderr\n");
	ck_assert_int_eq(r.log_dropped, 0);
	result_free(&r);

	/* past the cap: exactly 1 MiB kept, every other byte counted */
	r = logger_run(run, backend, flood);
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "flooded");
	ck_assert_uint_eq(r.log_len, 1024 * 1024);
	ck_assert(strncmp(r.log, "start: on stdout\nxxx", 20) == 0);
	for (i = 17; i < r.log_len; i++)
		ck_assert_msg(r.log[i] == 'x', "log byte %zu is not the flood's", i);
	/* 17 bytes of start, 1100000 of flood, 15 of end */
	ck_assert_int_eq(r.log_dropped, 17 + 1100000 + 15 - 1024 * 1024);
	result_free(&r);

	/* agent-controlled bytes made harmless */
	r = logger_run(run, backend, escape);
	ck_assert_str_eq(step_str(&r, 0, "output"), "escaped");
	ck_assert_str_eq(r.log,
	                 "start: on stdout\n\xef\xbf\xbd[31mred\xef\xbf\xbd\nend: on stderr\n");
	result_free(&r);

	/* a traceback: one line of reason, the whole of it in the log */
	r = logger_run(run, backend, die);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 1, "error_kind"), "agent_error");
	reason = sum_str(&r, "reason");
	ck_assert_msg(strncmp(reason, "agent error in step 2: agent ", 29) == 0 &&
	                  strstr(reason, "(agent log: Traceback (most recent call last):)") &&
	                  !strchr(reason, '\n'),
	              "reason: %s", reason);
	ck_assert_str_eq(r.log, "start: on stdout\nstep: on stdout\nstep: on stderr\n"
	                        "Traceback (most recent call last):\n  File \"agent\", line 1\n"
	                        "RuntimeError: boom\n");
	result_free(&r);
}

void assert_sdk_agent_run(struct result (*run)(const char *backend, json_t *spec),
                          const char *backend)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_SDK_AGENT"));
	json_t *mocks = json_object_get(spec, "mocks");
	json_t *trace, *near;
	struct result r;

	ck_assert_msg(access("/usr/bin/python3", X_OK) == 0,
	              "/usr/bin/python3 is not installed (Debian: python3): the Python agent "
	              "cannot run");
	json_array_append_new(
	    mocks, json_pack("{s:s, s:s}", "resource", "profile:ada", "response", "Ada"));
	json_array_append_new(mocks, json_pack("{s:s, s:{s:s}, s:[i,i,i]}", "tool", "search",
	                                       "args", "q", "ada", "response", 1, 2, 3));
	json_array_append_new(
	    mocks, json_pack("{s:s, s:s}", "resource", "profile:bob\n", "response", "Bob"));
	spec_step(spec, "s1", "ada");
	spec_step(spec, "s2", "bob\r\n");
	spec_step(spec, "s3", "raise");
	r = run(backend, spec);
	json_decref(spec);

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 3: ValueError: step 3 cannot be answered");
	ck_assert_int_eq(sum_int(&r, "steps_total"), 3);
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 1);
	ck_assert_int_eq(json_array_size(r.steps), 3);
	ck_assert_str_eq(step_str(&r, 0, "output"), "Ada/3/4 threads");
	ck_assert_str_eq(step_str(&r, 0, "status"), "ok");
	trace = json_object_get(json_array_get(r.steps, 0), "trace");
	ck_assert_int_eq(json_array_size(trace), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(trace, 0), "resource")),
	                 "profile:ada");
	ck_assert(json_is_true(json_object_get(json_array_get(trace, 0), "hit")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(trace, 0), "mock")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(trace, 1), "tool")),
	                 "search");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(trace, 1), "mock")), 1);

	/* the CRLF miss: the marker as the agent got it, the nearest mock and
	 * the byte where they part */
	ck_assert_str_eq(step_str(&r, 1, "output"),
	                 "[[mock-miss:profile:bob\r\n]]/[[mock-miss:tool search]]/4 threads");
	ck_assert_str_eq(step_str(&r, 1, "error_kind"), "mock_miss");
	trace = json_object_get(json_array_get(r.steps, 1), "trace");
	near = json_object_get(json_array_get(trace, 0), "near_miss");
	ck_assert_int_eq(json_integer_value(json_object_get(near, "mock")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(near, "offset")), 11);
	ck_assert_str_eq(json_string_value(json_object_get(near, "request_has")), "CR (U+000D)");
	ck_assert_str_eq(json_string_value(json_object_get(near, "mock_has")), "LF (U+000A)");

	ck_assert_str_eq(step_str(&r, 2, "error_kind"), "agent_error");
	ck_assert_str_eq(step_str(&r, 2, "output"),
	                 "[[agent-error:ValueError: step 3 cannot be answered]]");
	/* the log: the prints of every step, then the whole traceback */
	ck_assert_msg(strstr(r.log, "stdout: step 1 input ada\n") != NULL, "log: %s", r.log);
	ck_assert_msg(strstr(r.log, "stderr: step 3\n") != NULL, "log: %s", r.log);
	ck_assert_msg(strstr(r.log, "Traceback (most recent call last):\n") != NULL, "log: %s",
	              r.log);
	ck_assert_msg(strstr(r.log, "    raise ValueError(\"step %d cannot be answered\" % "
	                            "s.seq)\nValueError: step 3 cannot be answered\n") != NULL,
	              "log: %s", r.log);
	result_free(&r);
}

json_t *tool_spec(const char *agent)
{
	json_t *spec = spec_new(NULL, agent);
	json_t *mocks = json_object_get(spec, "mocks");

	spec_step(spec, "w", "weather");
	spec_step(spec, "crlf", "GET /a\r\n");
	spec_step(spec, "w2", "weather");
	spec_mock(spec, "weather", "sunny", NULL);
	spec_mock(spec, "GET /a\n", "A", NULL);
	json_array_append_new(mocks, json_pack("{s:s, s:{s:s}, s:s, s:[{s:i}, {s:i}]}", "tool",
	                                       "search", "args", "q", "weather", "match", "exact",
	                                       "sequence", "hits", 1, "hits", 2));
	json_array_append_new(mocks, json_pack("{s:s, s:{}, s:s, s:s}", "tool", "search", "args",
	                                       "match", "subset", "error", "search is down"));
	return spec;
}

/* Step i's trace entry j: its kind ("tool" or "resource") and name, hit
 * and mock index (-1: null). */
static void assert_trace_entry(const struct result *r, size_t i, size_t j, const char *kind,
                               const char *name, int hit, int mock)
{
	json_t *trace = json_object_get(json_array_get(r->steps, i), "trace");
	json_t *e = json_array_get(trace, j);
	json_t *m = json_object_get(e, "mock");

	ck_assert_msg(json_is_object(e), "step %zu: no trace entry %zu", i + 1, j);
	ck_assert_msg(json_is_string(json_object_get(e, kind)) &&
	                  strcmp(json_string_value(json_object_get(e, kind)), name) == 0,
	              "step %zu, trace[%zu]: not the %s %s", i + 1, j, kind, name);
	ck_assert_int_eq(json_is_true(json_object_get(e, "hit")), hit);
	ck_assert_int_eq(json_is_null(m) ? -1 : (int)json_integer_value(m), mock);
	ck_assert(json_is_integer(json_object_get(e, "duration_us")));
}

void assert_tool_run(const struct result *r)
{
	json_t *near;
	size_t i;

	ck_assert_msg(r->summary != NULL, "no summary line from the runner");
	ck_assert_msg(strcmp(sum_str(r, "status"), "completed") == 0, "status %s: %s",
	              sum_str(r, "status"), sum_str(r, "reason") ? sum_str(r, "reason") : "");
	ck_assert_int_eq(sum_int(r, "steps_total"), 3);
	ck_assert_int_eq(sum_int(r, "steps_ok"), 2);
	ck_assert_int_eq(sum_int(r, "steps_error"), 1);
	ck_assert_str_eq(step_str(r, 0, "output"), "{\"hits\":1}|sunny");
	ck_assert_str_eq(step_str(r, 1, "output"), "error:search is down|[[mock-miss:GET /a\r\n]]");
	ck_assert_str_eq(step_str(r, 1, "error_kind"), "mock_miss");
	ck_assert_str_eq(step_str(r, 2, "output"), "{\"hits\":2}|sunny");
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(
		    json_array_size(json_object_get(json_array_get(r->steps, i), "trace")), 2);
	assert_trace_entry(r, 0, 0, "tool", "search", 1, 2);
	assert_trace_entry(r, 0, 1, "resource", "weather", 1, 0);
	assert_trace_entry(r, 1, 0, "tool", "search", 1, 3);
	assert_trace_entry(r, 1, 1, "resource", "GET /a\r\n", 0, -1);
	assert_trace_entry(r, 2, 0, "tool", "search", 1, 2);
	ck_assert(json_is_true(json_object_get(
	    json_array_get(json_object_get(json_array_get(r->steps, 1), "trace"), 0), "error")));
	near = json_object_get(
	    json_array_get(json_object_get(json_array_get(r->steps, 1), "trace"), 1), "near_miss");
	ck_assert_int_eq(json_integer_value(json_object_get(near, "mock")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(near, "offset")), 6);
	ck_assert_str_eq(json_string_value(json_object_get(near, "request_has")), "CR (U+000D)");
	ck_assert_str_eq(json_string_value(json_object_get(near, "mock_has")), "LF (U+000A)");
}

void interp_fixture_script(struct interp_fixture *f, const char *line)
{
	FILE *fp = fopen(f->script, "w");

	ck_assert_msg(fp != NULL, "cannot write %s", f->script);
	fprintf(fp, "%s\n", line);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(chmod(f->script, 0755), 0);
}

void interp_fixture_make(struct interp_fixture *f, const char *binary)
{
	char buf[65536], line[128];
	ssize_t got;
	int in, out;

	snprintf(f->dir, sizeof(f->dir), "/var/tmp/olv-interp-XXXXXX");
	ck_assert_msg(mkdtemp(f->dir) != NULL, "mkdtemp: %s", strerror(errno));
	ck_assert_int_eq(chmod(f->dir, 0755), 0);
	snprintf(f->interp, sizeof(f->interp), "%s/interp", f->dir);
	snprintf(f->script, sizeof(f->script), "%s/profile", f->dir);
	in = open(binary, O_RDONLY | O_CLOEXEC);
	out = open(f->interp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert_msg(in >= 0 && out >= 0, "cannot copy %s", binary);
	while ((got = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)got), got);
	close(in);
	ck_assert_int_eq(close(out), 0);
	ck_assert_int_eq(chmod(f->interp, 0755), 0);
	snprintf(line, sizeof(line), "#!%s", f->interp);
	interp_fixture_script(f, line);
}

void interp_fixture_clean(struct interp_fixture *f)
{
	unlink(f->script);
	unlink(f->interp);
	rmdir(f->dir);
}

/* One run of script on backend with binds (NULL: the default). */
static struct result interp_run(struct result (*run)(const char *, json_t *), const char *backend,
                                const struct interp_fixture *f, json_t *binds)
{
	json_t *spec = spec_new("profile", f->script);
	struct result r;

	spec_step(spec, "probe", "socketpair seqpacket");
	if (binds)
		json_object_set_new(spec, "binds", binds);
	r = run(backend, spec);
	json_decref(spec);
	return r;
}

static void assert_interp_refused(const struct result *r, const char *want)
{
	ck_assert_str_eq(sum_str(r, "status"), "failed");
	ck_assert_msg(!sum_bool(r, "isolated"), "a run refused before its jail is not isolated");
	ck_assert_int_eq(json_array_size(r->steps), 0);
	ck_assert_str_eq(sum_str(r, "reason"), want);
}

void assert_interp_cases(struct result (*run)(const char *, json_t *), const char *backend,
                         const char *binary)
{
	struct interp_fixture f;
	struct result r;
	char want[512];

	interp_fixture_make(&f, binary);
	/* the interpreter exists on the host, outside every bind */
	r = interp_run(run, backend, &f, NULL);
	snprintf(want, sizeof(want),
	         "agent program profile: its interpreter %s is not inside the jail (add its "
	         "directory to [runner] binds)",
	         f.interp);
	assert_interp_refused(&r, want);
	result_free(&r);
	/* its directory bound: the same script runs, the copy interpreting it */
	r = interp_run(run, backend, &f, json_pack("[s, s]", "/usr", f.dir));
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "with the bind: %s",
	              sum_str(&r, "reason"));
	ck_assert(sum_bool(&r, "isolated"));
	ck_assert_int_eq(json_array_size(r.steps), 1);
	result_free(&r);
	/* env is in the jail, the program it looks up is not */
	interp_fixture_script(&f, "#!/usr/bin/env olv-no-such-interpreter");
	r = interp_run(run, backend, &f, NULL);
	assert_interp_refused(&r, "agent program profile: its interpreter /usr/bin/env finds no "
	                          "olv-no-such-interpreter inside the jail (PATH /usr/bin:/bin; "
	                          "add its directory to [runner] binds)");
	result_free(&r);
	interp_fixture_clean(&f);
}

/* The runner's environment in the gateway's tests. */
static char *const gateway_env[] = {"HOME=/root", NULL};

/* An HTTP mock: GET url answered status and body. */
static json_t *http_mock(const char *url, int status, const char *body)
{
	return json_pack("{s:{s:s, s:s}, s:{s:i, s:s}}", "http", "method", "GET", "url", url,
	                 "response", "status", status, "body", body);
}

/* The trace entry n of step i of r. */
static json_t *trace_entry(const struct result *r, size_t i, size_t n)
{
	return json_array_get(json_object_get(json_array_get(r->steps, i), "trace"), n);
}

void assert_gateway_run(const char *backend)
{
	char dir[] = "/tmp/olv-gw-test-XXXXXX";
	char tmpenv[64];
	char *env[] = {"HOME=/root", tmpenv, NULL};
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT"));
	json_t *mocks = json_object_get(spec, "mocks");
	json_t *e, *http;
	struct result r;
	int fd;
	pid_t pid;

	ck_assert_msg(access("/usr/bin/python3", X_OK) == 0,
	              "/usr/bin/python3 is not installed (Debian: python3): the Python agent "
	              "cannot run");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", dir);
	json_array_append_new(mocks,
	                      http_mock("http://tools.example.com/search?q=ada", 200, "found ada"));
	json_array_append_new(mocks, json_pack("{s:{s:s}, s:{s:s}}", "llm", "last_user_message",
	                                       "hello", "response", "content", "Hi there"));
	json_array_append_new(mocks, json_pack("{s:{s:s}, s:[{s:[{s:s, s:{s:s}}]}, {s:s}]}", "llm",
	                                       "last_user_message", "find ada", "sequence",
	                                       "tool_calls", "name", "search", "arguments", "q",
	                                       "ada", "content", "ada is found"));
	spec_step(spec, "tool", "tool ada");
	spec_step(spec, "chat", "chat hello");
	spec_step(spec, "stream", "stream hello");
	spec_step(spec, "loop", "loop find ada");
	spec_step(spec, "miss", "miss");
	spec_step(spec, "direct", "direct");
	spec_step(spec, "env", "env");
	pid = spawn_runner_with(args, spec, env, NULL, NULL, &fd);
	r = collect(pid, fd, now_ms());
	json_decref(spec);

	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert_msg(sum_bool(&r, "destroyed"), "not destroyed: %s", sum_str(&r, "reason"));
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "%s; log: %s",
	              sum_str(&r, "reason"), r.log);
	ck_assert_int_eq(json_array_size(r.steps), 7);
	/* an HTTP tool through HTTP_PROXY, answered by its mock */
	ck_assert_str_eq(step_str(&r, 0, "output"), "tool: 200 found ada");
	ck_assert_str_eq(step_str(&r, 0, "status"), "ok");
	e = trace_entry(&r, 0, 0);
	http = json_object_get(e, "http");
	ck_assert_str_eq(json_string_value(json_object_get(http, "method")), "GET");
	ck_assert_str_eq(json_string_value(json_object_get(http, "url")),
	                 "http://tools.example.com/search?q=ada");
	ck_assert(json_is_true(json_object_get(e, "hit")));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "mock")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "status")), 200);
	ck_assert_ptr_null(trace_entry(&r, 0, 1));
	/* a chat completion over HTTPS through CONNECT, verified against the
	 * run's CA, non-streaming and streaming */
	ck_assert_str_eq(step_str(&r, 1, "output"), "chat: Hi there");
	e = trace_entry(&r, 1, 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "http"), "url")),
	                 "https://api.openai.com/v1/chat/completions");
	ck_assert(json_is_true(json_object_get(e, "llm")));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "mock")), 1);
	ck_assert_str_eq(step_str(&r, 2, "output"), "stream: Hi there");
	/* a model loop scripted by a sequence: tool call, the tool, answer */
	ck_assert_str_eq(step_str(&r, 3, "output"), "loop: ada is found");
	ck_assert_int_eq(json_integer_value(json_object_get(trace_entry(&r, 3, 0), "mock")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(trace_entry(&r, 3, 1), "mock")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(trace_entry(&r, 3, 2), "mock")), 2);
	ck_assert_ptr_null(trace_entry(&r, 3, 3));
	/* a request no mock answers: the 404 with the marker, a mock miss */
	ck_assert_str_eq(step_str(&r, 4, "output"),
	                 "miss: 404 [[mock-miss:GET http://tools.example.com/nothing]]");
	ck_assert_str_eq(step_str(&r, 4, "error_kind"), "mock_miss");
	e = trace_entry(&r, 4, 0);
	ck_assert(json_is_false(json_object_get(e, "hit")));
	ck_assert(json_is_null(json_object_get(e, "mock")));
	ck_assert_ptr_nonnull(json_object_get(e, "near_miss"));
	/* straight to the gateway's port, origin-form: a miss as well */
	ck_assert_str_eq(step_str(&r, 5, "output"), "direct: HTTP/1.1 404 Not Found");
	ck_assert_str_eq(step_str(&r, 6, "output"), "env: HTTPS_PROXY=http://127.0.0.1:3128 "
	                                            "SSL_CERT_FILE=/olivares/gateway/ca.pem");
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 5);
	result_free(&r);
	/* the run's directory, its CA certificate (and socket) with it, is
	 * gone with the run; the CA's key was never in it */
	ck_assert_msg(rmdir(dir) == 0, "%s is not empty after the run", dir);
}

void assert_gateway_contained(const char *backend)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char input[64], want[128];
	struct result r;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int fd;
	pid_t pid;

	/* a listener on the host's loopback, which the agent tries to reach */
	ck_assert_int_ge(s, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	snprintf(input, sizeof(input), "connect 127.0.0.1:%d", ntohs(sa.sin_port));
	json_object_set_new(spec, "gateway", json_true());
	spec_step(spec, "host", input);
	spec_step(spec, "gateway", "connect 127.0.0.1:3128");
	pid = spawn_runner_with(args, spec, gateway_env, NULL, NULL, &fd);
	r = collect(pid, fd, now_ms());
	json_decref(spec);
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	/* the jail's loopback is its own: the host's listener is not there,
	 * and only the gateway listens */
	snprintf(want, sizeof(want), "%s: denied (ECONNREFUSED)", input);
	ck_assert_str_eq(step_str(&r, 0, "output"), want);
	ck_assert_str_eq(step_str(&r, 1, "output"), "connect 127.0.0.1:3128: allowed");
	ck_assert_msg(sum_bool(&r, "destroyed"), "not destroyed: %s", sum_str(&r, "reason"));
	result_free(&r);
	ck_assert_int_lt(accept(s, NULL, NULL), 0);
	ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
	close(s);
}

/* A spec for the HTTP agent whose one step's tool answers body. */
static json_t *gateway_spec(const char *body)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT"));

	json_array_append_new(json_object_get(spec, "mocks"),
	                      http_mock("http://tools.example.com/search?q=ada", 200, body));
	/* a slow tool: both runs are up at once */
	json_object_set_new(json_array_get(json_object_get(spec, "mocks"), 0), "delay_ms",
	                    json_integer(300));
	spec_step(spec, "tool", "tool ada");
	return spec;
}

void assert_gateway_own_run(const char *backend)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *a = gateway_spec("run A"), *b = gateway_spec("run B");
	struct result ra, rb;
	int fa, fb;
	pid_t pa, pb;

	pa = spawn_runner_with(args, a, gateway_env, NULL, NULL, &fa);
	pb = spawn_runner_with(args, b, gateway_env, NULL, NULL, &fb);
	ra = collect(pa, fa, now_ms());
	rb = collect(pb, fb, now_ms());
	json_decref(a);
	json_decref(b);
	ck_assert_msg(ra.summary && rb.summary, "no summary line from a runner");
	ck_assert_msg(strcmp(sum_str(&ra, "status"), "completed") == 0, "A: %s; log: %s",
	              sum_str(&ra, "reason"), ra.log);
	ck_assert_msg(strcmp(sum_str(&rb, "status"), "completed") == 0, "B: %s; log: %s",
	              sum_str(&rb, "reason"), rb.log);
	/* each run's 127.0.0.1:3128 is its own gateway, with its own mocks */
	ck_assert_str_eq(step_str(&ra, 0, "output"), "tool: 200 run A");
	ck_assert_str_eq(step_str(&rb, 0, "output"), "tool: 200 run B");
	result_free(&ra);
	result_free(&rb);
}

/* A host's upstream for the egress test: one connection on a loopback
 * listener, answered "hello" whatever it asked. */
struct upstream {
	int listener;
	char got[4096];
	pthread_t thread;
};

static void *upstream_main(void *arg)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	                             "Content-Length: 5\r\nConnection: close\r\n\r\nhello";
	struct upstream *u = arg;
	size_t n = 0;
	ssize_t r;
	int c = accept(u->listener, NULL, NULL);

	if (c < 0)
		return NULL;
	/* the request's head, whole, before the answer */
	while (n < sizeof(u->got) - 1 && !strstr(u->got, "\r\n\r\n")) {
		r = read(c, u->got + n, sizeof(u->got) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		u->got[n] = '\0';
	}
	if (write(c, answer, sizeof(answer) - 1) < 0)
		n = 0;
	close(c);
	return NULL;
}

/* u's loopback listener and its thread; returns its port. */
static int upstream_start(struct upstream *u)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	memset(u, 0, sizeof(*u));
	u->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(u->listener, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(u->listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(u->listener, 4), 0);
	ck_assert_int_eq(getsockname(u->listener, (struct sockaddr *)&sa, &sl), 0);
	ck_assert_int_eq(pthread_create(&u->thread, NULL, upstream_main, u), 0);
	return ntohs(sa.sin_port);
}

void assert_gateway_egress(const char *backend)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT"));
	struct upstream u;
	char input[128], allowed[64], want[160];
	json_t *e, *ex;
	struct result r;
	int fd, port;
	pid_t pid;

	port = upstream_start(&u);
	snprintf(allowed, sizeof(allowed), "127.0.0.1:%d", port);
	json_object_set_new(spec, "egress_allow", json_pack("[s]", allowed));
	snprintf(input, sizeof(input), "get http://127.0.0.1:%d/hello", port);
	spec_step(spec, "allowed", input);
	spec_step(spec, "refused", "get http://refused.example.com/x");
	pid = spawn_runner_with(args, spec, gateway_env, NULL, NULL, &fd);
	r = collect(pid, fd, now_ms());
	json_decref(spec);
	pthread_join(u.thread, NULL);
	close(u.listener);

	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	/* the allowed host answered, from outside the jail; not a miss */
	ck_assert_str_eq(step_str(&r, 0, "output"), "get: 200 hello");
	ck_assert_str_eq(step_str(&r, 0, "status"), "ok");
	ck_assert_msg(strncmp(u.got, "GET /hello HTTP/1.1\r\n", 21) == 0, "upstream got: %s",
	              u.got);
	e = trace_entry(&r, 0, 0);
	ex = json_object_get(e, "egress");
	ck_assert_msg(json_is_object(ex), "no egress in the trace entry");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "status")), 200);
	ck_assert_int_eq(json_integer_value(json_object_get(ex, "response_bytes")), 5);
	ck_assert(json_is_false(json_object_get(e, "hit")));
	/* a host that is not allowed: the miss, said refused */
	ck_assert_str_eq(step_str(&r, 1, "output"),
	                 "get: 404 [[mock-miss:GET http://refused.example.com/x]]");
	ck_assert_str_eq(step_str(&r, 1, "error_kind"), "mock_miss");
	e = trace_entry(&r, 1, 0);
	snprintf(want, sizeof(want),
	         "egress to this host is not allowed (the tenant's egress_allow)");
	ck_assert_str_eq(json_string_value(json_object_get(e, "refused")), want);
	ck_assert_ptr_null(json_object_get(e, "egress"));
	/* the run says one request left it */
	ck_assert_int_eq(sum_int(&r, "egress_requests"), 1);
	result_free(&r);
}

/* The runner's whole output for spec, raw, into *out (caller frees);
 * the parsed result returned. */
static struct result run_raw(const char *backend, json_t *spec, struct text *out)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	char chunk[65536];
	ssize_t n;
	pid_t pid;
	int fd;

	memset(out, 0, sizeof(*out));
	pid = spawn_runner_with(args, spec, gateway_env, NULL, NULL, &fd);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		text_add(out, chunk, (size_t)n);
	close(fd);
	text_add(out, "", 1);
	return collect_text(pid, out->data, out->len - 1, now_ms());
}

void assert_gateway_egress_secrets(const char *backend)
{
	static const char secret[] = "olv-test-4e1a-value";
	char dir[128], path[sizeof(dir) + 16], text[256], input[sizeof(path) + 16], allowed[64],
	    want[512];
	json_t *spec, *e, *ex;
	struct upstream u;
	struct text out;
	struct result r;
	FILE *f;
	int port;

	port = upstream_start(&u);
	snprintf(allowed, sizeof(allowed), "127.0.0.1:%d", port);

	/* the operator's file, 0600, where the jail has no view; named so that
	 * the next run sweeps it when an assertion below ends this one early */
	ck_assert_int_eq(sweep_mkdtemp(dir, sizeof(dir), "/var/tmp", "olv-egress-secrets-"), 0);
	snprintf(path, sizeof(path), "%s/secrets.ini", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[host %s]\nheader = Authorization: Bearer %s\n", allowed, secret);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0600), 0);

	spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT"));
	json_object_set_new(spec, "egress_allow", json_pack("[s]", allowed));
	json_object_set_new(spec, "egress_secrets", json_string(path));
	snprintf(input, sizeof(input), "getauth http://%s/hello", allowed);
	spec_step(spec, "upstream", input);
	spec_step(spec, "environ", "environ");
	snprintf(input, sizeof(input), "read %s", path);
	spec_step(spec, "read", input);
	r = run_raw(backend, spec, &out);
	pthread_join(u.thread, NULL);
	close(u.listener);

	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "%s; log: %s",
	              sum_str(&r, "reason"), r.log);
	/* the upstream got the operator's header, not the agent's */
	ck_assert_str_eq(step_str(&r, 0, "output"), "getauth: 200 hello");
	snprintf(text, sizeof(text), "\r\nAuthorization: Bearer %s\r\n", secret);
	ck_assert_msg(strstr(u.got, text) != NULL, "upstream got: %s", u.got);
	ck_assert_msg(strstr(u.got, "agent-own") == NULL, "upstream got: %s", u.got);
	/* the trace names it and keeps the agent's, masked */
	e = trace_entry(&r, 0, 0);
	ex = json_object_get(e, "egress");
	ck_assert_msg(json_is_object(ex), "no egress in the trace entry");
	ck_assert_int_eq(json_array_size(json_object_get(ex, "injected")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(ex, "injected"), 0)),
	                 "Authorization");
	/* the agent: not in its environment, no such file in its jail */
	ck_assert_msg(strncmp(step_str(&r, 1, "output"), "environ: ", 9) == 0 &&
	                  strstr(step_str(&r, 1, "output"), "HTTPS_PROXY=") != NULL,
	              "%s", step_str(&r, 1, "output"));
	ck_assert_ptr_null(strstr(step_str(&r, 1, "output"), secret));
	ck_assert_ptr_null(strstr(step_str(&r, 1, "output"), path));
	ck_assert_str_eq(step_str(&r, 2, "output"), "read: No such file or directory");
	/* nothing of the runner's output holds the value */
	ck_assert_msg(strstr(out.data, secret) == NULL, "the value is in the output: %s", out.data);
	ck_assert_ptr_nonnull(strstr(out.data, "\"injected\":[\"Authorization\"]"));
	ck_assert_ptr_nonnull(strstr(out.data, "[\"Authorization\",\"[masked]\"]"));
	free(out.data);
	result_free(&r);

	/* readable by others: the gateway does not start, the run fails */
	ck_assert_int_eq(chmod(path, 0644), 0);
	r = run_raw(backend, spec, &out);
	json_decref(spec);
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	snprintf(want, sizeof(want),
	         "egress_secrets %s: mode 0644 gives group or others access (chmod 600)", path);
	ck_assert_msg(strstr(sum_str(&r, "reason"), want) != NULL, "reason: %s",
	              sum_str(&r, "reason"));
	ck_assert_int_eq(json_array_size(r.steps), 0);
	ck_assert_msg(strstr(out.data, secret) == NULL, "the value is in the output: %s", out.data);
	free(out.data);
	result_free(&r);
	unlink(path);
	rmdir(dir);
}

/* The "record" of trace entry n of step i, which must be an answer. */
static json_t *recorded_answer(const struct result *r, size_t i, size_t n)
{
	json_t *rec = json_object_get(trace_entry(r, i, n), "record");

	ck_assert_msg(json_is_object(json_object_get(rec, "response")),
	              "step %zu, request %zu: no recorded answer", i + 1, n + 1);
	return rec;
}

void assert_gateway_record(const char *backend)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT")), *rec, *replay, *mocks;
	struct upstream u;
	struct result r, again;
	char input[128], allowed[64];
	size_t i;
	int fd, port;
	pid_t pid;

	port = upstream_start(&u);
	snprintf(allowed, sizeof(allowed), "127.0.0.1:%d", port);
	json_object_set_new(spec, "egress_allow", json_pack("[s]", allowed));
	json_object_set_new(spec, "record", json_true());
	json_array_append_new(json_object_get(spec, "mocks"),
	                      http_mock("http://tools.example.com/search?q=ada", 200, "found ada"));
	spec_step(spec, "tool", "tool ada");
	snprintf(input, sizeof(input), "get http://127.0.0.1:%d/hello", port);
	spec_step(spec, "egress", input);
	spec_step(spec, "miss", "miss");
	pid = spawn_runner_with(args, spec, gateway_env, NULL, NULL, &fd);
	r = collect(pid, fd, now_ms());
	pthread_join(u.thread, NULL);
	close(u.listener);
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "%s; log: %s",
	              sum_str(&r, "reason"), r.log);
	ck_assert_str_eq(step_str(&r, 1, "output"), "get: 200 hello");
	/* its gateway stood until the end: taking the jail down is not
	 * losing it */
	ck_assert_msg(json_object_get(r.summary, "gateway_lost") == NULL, "gateway_lost");

	/* a mock's answer and the upstream's are kept, each as the mock that
	 * answers its request so; the framing headers are not */
	rec = recorded_answer(&r, 0, 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "http"), "url")),
	                 "http://tools.example.com/search?q=ada");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "http"), "body")),
	                 "");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(rec, "response"), "body")),
	    "found ada");
	rec = recorded_answer(&r, 1, 0);
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(rec, "response"), "body")), "hello");
	ck_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(rec, "response"), "headers"), "Content-Type")),
	    "text/plain");
	ck_assert_uint_eq(
	    json_object_size(json_object_get(json_object_get(rec, "response"), "headers")), 1);
	/* a miss has nothing to keep: replayed, it misses again */
	ck_assert_ptr_null(json_object_get(trace_entry(&r, 2, 0), "record"));

	/* replayed from what was kept, with no egress and the upstream gone:
	 * the same outputs */
	replay = json_deep_copy(spec);
	json_object_del(replay, "egress_allow");
	json_object_del(replay, "record");
	mocks = json_object_get(replay, "mocks");
	json_array_clear(mocks);
	for (i = 0; i < 2; i++)
		json_array_append(mocks, recorded_answer(&r, i, 0));
	pid = spawn_runner_with(args, replay, gateway_env, NULL, NULL, &fd);
	again = collect(pid, fd, now_ms());
	ck_assert_msg(again.summary != NULL, "no summary line from the replay");
	ck_assert_msg(json_array_size(again.steps) == 3, "the replay: %s; log: %s",
	              sum_str(&again, "reason"), again.log);
	for (i = 0; i < 3; i++)
		ck_assert_str_eq(step_str(&again, i, "output"), step_str(&r, i, "output"));
	ck_assert_int_eq(sum_int(&again, "egress_requests"), 0);
	json_decref(replay);
	json_decref(spec);
	result_free(&again);
	result_free(&r);
}

/* The pid of parent's child whose command name starts with prefix, or -1
 * when it has none (yet). */
static pid_t child_named(pid_t parent, const char *prefix)
{
	char path[300], line[512], *p;
	struct dirent *d;
	DIR *dir = opendir("/proc");
	pid_t found = -1;
	long ppid;
	FILE *f;

	while (dir && found < 0 && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) != NULL &&
		    sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == parent &&
		    strncmp(strchr(line, '(') + 1, prefix, strlen(prefix)) == 0)
			found = (pid_t)atol(d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

void assert_gateway_lost(const char *backend)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HTTP_AGENT"));
	long long until;
	struct result r;
	pid_t pid, gw = -1;
	int fd;

	json_array_append_new(json_object_get(spec, "mocks"),
	                      http_mock("http://tools.example.com/search?q=ada", 200, "found ada"));
	/* the first answer waits: the gateway is killed with it in flight */
	json_object_set_new(json_array_get(json_object_get(spec, "mocks"), 0), "delay_ms",
	                    json_integer(1500));
	spec_step(spec, "first", "tool ada");
	spec_step(spec, "second", "tool ada");
	pid = spawn_runner_with(args, spec, gateway_env, NULL, NULL, &fd);
	for (until = now_ms() + 10000; gw < 0 && now_ms() < until; usleep(20000))
		gw = child_named(pid, "olivares-gatew");
	ck_assert_msg(gw > 0, "no gateway process under the runner");
	usleep(500000);
	kill(gw, SIGKILL);
	r = collect(pid, fd, now_ms());
	json_decref(spec);
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	/* said in the summary: what the agent asked after went unanswered */
	ck_assert_msg(sum_bool(&r, "gateway_lost"), "no gateway_lost in the summary");
	result_free(&r);
}
