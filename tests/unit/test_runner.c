/*
 * Unit tests of olivares-runner (runner/) and of the worker-side dispatch
 * (fcgi/run/dispatch.c) that fork/execs it.
 *
 * The runner under test is the built binary named by OLIVARES_RUNNER
 * (Makefile.am's AM_TESTS_ENVIRONMENT sets it; export it when running by
 * hand). Fake runners are scripts in tests/fixtures/runner-*, found through
 * $srcdir (set by `make check`) or, by hand, next to this source file.
 * This binary is also its own fake runner: run as `test_runner --backend
 * fixture-fds` it reports the descriptors it holds and its environment
 * (see fake_runner_fds), which a shell script could not do exactly.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/run/dispatch.h"
#include "fcgi/run/runner_server.h"
#include "fcgi/run/spawn.h"
#include "model/forkserver.h"
#include "runner/serve.h"
#include "tests/unit/runner_harness.h"

extern char **environ;

static char self_exe[4096];

/* ---- helpers ------------------------------------------------------------ */

static const char *runner(void)
{
	return env_path("OLIVARES_RUNNER");
}

static const char *fixture(const char *name)
{
	static char path[4096];
	const char *srcdir = getenv("srcdir");
	const char *tail = "/tests/unit/test_runner.c";
	char dir[4096];
	size_t n;

	if (srcdir && *srcdir) {
		snprintf(dir, sizeof(dir), "%s", srcdir);
	} else {
		snprintf(dir, sizeof(dir), "%s", __FILE__);
		n = strlen(dir);
		if (n >= strlen(tail) && strcmp(dir + n - strlen(tail), tail) == 0)
			dir[n - strlen(tail)] = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
	}
	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", dir, name);
	ck_assert_msg(access(path, X_OK) == 0, "fixture %s is not executable", path);
	return path;
}

static const char *out_str(const struct http_dispatch_result *r, size_t i, const char *field)
{
	json_t *o = json_array_get(r->outputs, i);

	ck_assert_ptr_nonnull(o);
	return json_string_value(json_object_get(o, field));
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

/* Wait (up to 2 s) until no descendant is left; every one reaped must have
 * been SIGKILLed. Returns how many were reaped. Needs the subreaper bit. */
static int reap_descendants(void)
{
	int64_t give_up = now_ms() + 2000;
	int status;
	int reaped = 0;
	pid_t p;

	for (;;) {
		p = waitpid(-1, &status, WNOHANG);
		if (p < 0) {
			ck_assert_int_eq(errno, ECHILD);
			return reaped;
		}
		if (p > 0) {
			ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
			reaped++;
			continue;
		}
		ck_assert_msg(now_ms() < give_up, "a runner descendant is still alive");
		usleep(10000);
	}
}

/* Independent SHA-256 of the walkthrough outputs, per dispatch.h. */
static void expected_walk_digest(char hex[65])
{
	static const char bytes[] = "1\0step-1\0first synthetic account\0ok\0"
	                            "2\0step-2\0[[mock-miss:agent:user2@example.test]]\0error\0";
	unsigned char md[32];
	unsigned int len = 0;
	unsigned int i;

	ck_assert_int_eq(EVP_Digest(bytes, sizeof(bytes) - 1, md, &len, EVP_sha256(), NULL), 1);
	ck_assert_uint_eq(len, 32);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* Run `runner --probe op`; returns its stdout (caller frees) and status. */
static char *run_probe(const char *op, int *status)
{
	char buf[4096];
	size_t len = 0;
	ssize_t r;
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(runner(), runner(), "--probe", op, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, status, 0), pid);
	return strdup(buf);
}

/* ---- the page's walkthrough --------------------------------------------- */

/* The outputs without their "duration_ms", after checking each has one: a
 * real above 0 and below max_ms (the wall time around the run). A new
 * reference. */
static json_t *outputs_timed(json_t *outputs, int64_t max_ms)
{
	json_t *copy = json_deep_copy(outputs);
	json_t *o, *d, *e;
	size_t i, j;

	json_array_foreach(copy, i, o)
	{
		d = json_object_get(o, "duration_ms");
		ck_assert_msg(json_is_real(d), "output %zu: duration_ms is not a number", i + 1);
		ck_assert_msg(json_real_value(d) > 0 && json_real_value(d) < (double)max_ms,
		              "output %zu: duration_ms %g not in (0, %lld)", i + 1,
		              json_real_value(d), (long long)max_ms);
		json_object_del(o, "duration_ms");
		/* inproc-mock's trace: the one lookup, timed as well */
		ck_assert_uint_eq(json_array_size(json_object_get(o, "trace")), 1);
		json_array_foreach(json_object_get(o, "trace"), j, e)
		{
			ck_assert(json_is_integer(json_object_get(e, "duration_us")));
			json_object_del(e, "duration_us");
		}
	}
	return copy;
}

START_TEST(test_walkthrough)
{
	struct http_dispatch_result r1, r2;
	json_t *spec = walk_spec();
	json_t *o1, *o2;
	int64_t t0, ms1, ms2;
	char want[65];
	size_t i;

	t0 = now_ms();
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r1), 0);
	ms1 = now_ms() - t0 + 1;
	ck_assert_str_eq(r1.status, "completed");
	ck_assert_str_eq(r1.reason, "");
	ck_assert_str_eq(r1.backend, "inproc-mock");
	ck_assert_msg(strncmp(r1.runner, "olivares-runner/", 16) == 0, "runner %s", r1.runner);
	ck_assert_int_eq(r1.steps_total, 2);
	ck_assert_int_eq(r1.steps_ok, 1);
	ck_assert_int_eq(r1.steps_error, 1);
	ck_assert_int_eq(r1.isolated, 1);
	ck_assert_int_eq(r1.destroyed, 1);
	ck_assert_uint_eq(json_array_size(r1.outputs), 2);

	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(r1.outputs, 0), "seq")),
	                 1);
	ck_assert_str_eq(out_str(&r1, 0, "key"), "step-1");
	ck_assert_str_eq(out_str(&r1, 0, "input"), "agent:user1@example.test");
	ck_assert_str_eq(out_str(&r1, 0, "output"), "first synthetic account");
	ck_assert_str_eq(out_str(&r1, 0, "status"), "ok");
	ck_assert(json_is_null(json_object_get(json_array_get(r1.outputs, 0), "error_kind")));

	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(r1.outputs, 1), "seq")),
	                 2);
	ck_assert_str_eq(out_str(&r1, 1, "input"), "agent:user2@example.test");
	ck_assert_str_eq(out_str(&r1, 1, "output"), "[[mock-miss:agent:user2@example.test]]");
	ck_assert_str_eq(out_str(&r1, 1, "status"), "error");
	ck_assert_str_eq(out_str(&r1, 1, "error_kind"), "mock_miss");

	ck_assert_uint_eq(strlen(r1.output_digest), 64);
	for (i = 0; i < 64; i++)
		ck_assert(strchr("0123456789abcdef", r1.output_digest[i]) != NULL);
	expected_walk_digest(want);
	ck_assert_str_eq(r1.output_digest, want);

	/* Deterministic: the same spec gives the same outputs and digest. */
	t0 = now_ms();
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r2), 0);
	ms2 = now_ms() - t0 + 1;
	ck_assert_str_eq(r2.output_digest, r1.output_digest);
	/* each step timed, within the run; all else the same */
	o1 = outputs_timed(r1.outputs, ms1);
	o2 = outputs_timed(r2.outputs, ms2);
	ck_assert(json_equal(o1, o2));
	json_decref(o1);
	json_decref(o2);

	http_dispatch_result_free(&r1);
	http_dispatch_result_free(&r2);
	ck_assert_ptr_null(r1.outputs);
	json_decref(spec);
}
END_TEST

/* ---- a mock's delay_ms on inproc-mock ------------------------------------------ */

/* A 200 ms delay makes its step last at least 200 ms (a lower bound only:
 * the machine may be loaded); the mock-less step is a miss and answered
 * without the delay of a mock for another variant, whose 60 s would pass
 * the run's 5 s wall clock: the run completes. */
START_TEST(test_mock_delay)
{
	struct http_dispatch_result r;
	json_t *spec = delay_spec(200);
	json_t *m;
	double slow;

	spec_step(spec, "miss", "tool:other-variant");
	m = json_pack("{s:s, s:s, s:s, s:i}", "resource", "tool:other-variant", "response", "late",
	              "variant", "other", "delay_ms", 60000);
	json_array_append_new(json_object_get(spec, "mocks"), m);
	spec_limit(spec, "wall_ms", 5000);
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 20000, spec, &r), 0);
	ck_assert_msg(strcmp(r.status, "completed") == 0, "status %s: %s", r.status, r.reason);
	ck_assert_int_eq(r.steps_total, 3);
	ck_assert_int_eq(r.steps_ok, 2);
	ck_assert_int_eq(r.steps_error, 1);
	ck_assert_int_eq(r.isolated, 1);
	ck_assert_str_eq(out_str(&r, 0, "output"), "slow answer");
	ck_assert_str_eq(out_str(&r, 1, "output"), "quick answer");
	ck_assert_str_eq(out_str(&r, 2, "error_kind"), "mock_miss");
	slow = json_real_value(json_object_get(json_array_get(r.outputs, 0), "duration_ms"));
	ck_assert_msg(slow >= 200.0, "slow step: %g ms, want at least its 200 ms delay", slow);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* A delay past the run's wall_ms ends the run at the wall clock, with the
 * wall clock's reason, the cut step recorded as on the OS-level backends,
 * and no later step: not at the worker's deadline (20 s, whose reason
 * would differ), and not after the delay's 60 s. */
START_TEST(test_mock_delay_past_wall_clock)
{
	struct http_dispatch_result r;
	json_t *spec = delay_spec(60000);
	double cut;

	spec_limit(spec, "wall_ms", 300);
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 20000, spec, &r), 0);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "wall-clock limit of 300 ms exceeded");
	ck_assert_int_eq(r.isolated, 1);
	ck_assert_int_eq(r.steps_total, 1);
	ck_assert_int_eq(r.steps_error, 1);
	ck_assert_uint_eq(json_array_size(r.outputs), 1);
	ck_assert_str_eq(out_str(&r, 0, "key"), "slow");
	ck_assert_str_eq(out_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_str_eq(out_str(&r, 0, "output"),
	                 "[[agent-error:wall-clock limit of 300 ms exceeded]]");
	/* it waited up to the wall clock (the step starts after the filter,
	 * a little after the run's clock did) */
	cut = json_real_value(json_object_get(json_array_get(r.outputs, 0), "duration_ms"));
	ck_assert_msg(cut >= 200.0, "cut step: %g ms, want close to the 300 ms wall clock", cut);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* The runner refuses a delay_ms that is not an integer in 0..60000, as it
 * refuses a limit out of bounds: never clamped, no step run. */
START_TEST(test_mock_delay_refused)
{
	static const char *const bad[] = {"-1", "60001", "2.5", "\"100\"", "null"};
	struct http_dispatch_result r;
	json_t *spec;
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
		         "{\"steps\":[{\"key\":\"k\",\"input\":\"a\"}],"
		         "\"mocks\":[{\"resource\":\"a\",\"response\":\"A\",\"delay_ms\":%s}]}",
		         bad[i]);
		spec = json_loads(text, 0, NULL);
		ck_assert_ptr_nonnull(spec);
		ck_assert_int_eq(
		    http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
		ck_assert_str_eq(r.status, "failed");
		ck_assert_msg(
		    strstr(r.reason, "mocks[0].delay_ms must be an integer from 0 to 60000"),
		    "delay_ms %s: reason %s", bad[i], r.reason);
		ck_assert_int_eq(r.steps_total, 0);
		http_dispatch_result_free(&r);
		json_decref(spec);
	}
}
END_TEST

START_TEST(test_final_newline)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);

	/* The template ends in a newline: the input does not match the mock. */
	spec_step(spec, "step-1", "agent:user1@example.test\n");
	spec_step(spec, "step-2", "agent:user2@example.test\n");
	spec_mock(spec, "agent:user1@example.test", "first synthetic account", NULL);
	spec_mock(spec, "agent:user2@example.test\n", "with newline", NULL);
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_str_eq(out_str(&r, 0, "output"), "[[mock-miss:agent:user1@example.test\n]]");
	ck_assert_str_eq(out_str(&r, 0, "error_kind"), "mock_miss");
	ck_assert_str_eq(out_str(&r, 1, "output"), "with newline");
	ck_assert_int_eq(r.steps_ok, 1);
	ck_assert_int_eq(r.steps_error, 1);
	ck_assert_int_eq(r.isolated, 1);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

static void check_variant(const char *variant, const char *want_r, const char *want_q)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(variant, NULL);

	spec_step(spec, "r", "resource-r");
	spec_step(spec, "q", "resource-q");
	spec_mock(spec, "resource-r", "default answer", NULL);
	spec_mock(spec, "resource-r", "candidate answer", "candidate");
	spec_mock(spec, "resource-q", "baseline only", "baseline");
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_str_eq(out_str(&r, 0, "output"), want_r);
	ck_assert_str_eq(out_str(&r, 1, "output"), want_q);
	http_dispatch_result_free(&r);
	json_decref(spec);
}

START_TEST(test_variants)
{
	check_variant("candidate", "candidate answer", "[[mock-miss:resource-q]]");
	check_variant("baseline", "default answer", "baseline only");
	check_variant(NULL, "default answer", "[[mock-miss:resource-q]]");
	check_variant("other", "default answer", "[[mock-miss:resource-q]]");
}
END_TEST

/* ---- the seccomp filter ------------------------------------------------- */

START_TEST(test_probes_refused)
{
	static const char *const ops[] = {"open", "socket", "fork", "exec", "ptrace"};
	char want[256];
	char *out;
	int status;
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		out = run_probe(ops[i], &status);
		snprintf(
		    want, sizeof(want),
		    "{\"type\":\"probe\",\"op\":\"%s\",\"allowed\":false,\"errno\":\"EPERM\"}\n",
		    ops[i]);
		ck_assert_str_eq(out, want);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		free(out);
	}
}
END_TEST

START_TEST(test_probe_unlisted_killed)
{
	char *out;
	int status;

	/* A call on neither list: the default action kills the runner. */
	out = run_probe("unlisted", &status);
	ck_assert_str_eq(out, "");
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGSYS);
	free(out);
}
END_TEST

/* ---- fail closed and honest --------------------------------------------- */

START_TEST(test_unknown_backend)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();

	ck_assert_int_eq(http_dispatch_run(runner(), 1, "firecracker-x", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "unknown backend: firecracker-x");
	ck_assert_str_eq(r.backend, "firecracker-x");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(r.steps_total, 0);
	ck_assert_uint_eq(json_array_size(r.outputs), 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* [runner] gvisor_platform reaches the runner on its command line
 * (--gvisor-platform), for gvisor only: a name the runner refuses shows
 * which runs and preflights got it. */
START_TEST(test_gvisor_platform_passed)
{
	struct http_dispatch_result r;
	struct http_preflight pf;
	json_t *spec = walk_spec();

	ck_assert_int_eq(http_dispatch_run(runner(), 1, "gvisor", "warp", 10000, spec, &r), -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_uint_eq(json_array_size(r.outputs), 0);
	ck_assert_msg(strstr(r.reason, "runner exited with status 2") &&
	                  strstr(r.reason, "unknown gVisor platform \"warp\""),
	              "%s", r.reason);
	http_dispatch_result_free(&r);
	/* not passed for another backend */
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", "warp", 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	http_dispatch_result_free(&r);
	/* a platform the runner knows: the run is the runner's to judge
	 * (root with runsc: it fails closed naming systrap, which this
	 * runsc does not know; elsewhere gvisor's preflight fails first) */
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "gvisor", "systrap", 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_msg(strstr(r.reason, "(platform systrap)") ||
	                  strncmp(r.reason, "backend gvisor unavailable: ", 28) == 0,
	              "%s", r.reason);
	http_dispatch_result_free(&r);
	json_decref(spec);

	ck_assert_int_eq(http_dispatch_preflight(runner(), "gvisor", "warp", 8000, &pf), -1);
	ck_assert_int_eq(pf.ok, 0);
	ck_assert_msg(strstr(pf.reason, "unknown gVisor platform \"warp\""), "%s", pf.reason);
	ck_assert_int_eq(http_dispatch_preflight(runner(), "inproc-mock", "warp", 8000, &pf), 0);
	ck_assert_int_eq(pf.ok, 1);
}
END_TEST

START_TEST(test_spec_with_extra_field)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();

	/* Nothing but steps, mocks and variant may reach the runner. */
	json_object_set_new(spec, "tenant", json_string("t1"));
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "invalid run spec: unknown field \"tenant\"");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(r.steps_total, 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* egress_secrets: a normalised absolute path, only beside egress hosts,
 * and never where a bind would put it in the jail (the default /usr
 * included). */
START_TEST(test_spec_egress_secrets)
{
	static const struct {
		const char *path, *allow, *bind, *reason;
	} cases[] = {
	    {"secrets.ini", "a.example", NULL, "must be"},
	    {"/etc/../s.ini", "a.example", NULL, "must be"},
	    {"/etc/olivares/s.ini", NULL, NULL, "must be"},
	    {"/usr/share/s.ini", "a.example", NULL, "under"},
	    {"/srv/o/s.ini", "a.example", "/srv", "under"},
	    {"/srv", "a.example", "/srv", "under"},
	};
	struct http_dispatch_result r;
	char want[256];
	json_t *spec;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spec = walk_spec();
		json_object_set_new(spec, "egress_secrets", json_string(cases[i].path));
		if (cases[i].allow)
			json_object_set_new(spec, "egress_allow", json_pack("[s]", cases[i].allow));
		if (cases[i].bind)
			json_object_set_new(spec, "binds", json_pack("[s]", cases[i].bind));
		ck_assert_int_eq(
		    http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
		ck_assert_str_eq(r.status, "failed");
		snprintf(want, sizeof(want), "invalid run spec: %s",
		         strcmp(cases[i].reason, "under") == 0
		             ? "egress_secrets is under a path bound into the jail"
		             : "egress_secrets must be an absolute normalised path of at most "
		               "1024 bytes, with egress_allow hosts");
		ck_assert_msg(strcmp(r.reason, want) == 0, "%s: %s", cases[i].path, r.reason);
		ck_assert_int_eq(r.steps_total, 0);
		http_dispatch_result_free(&r);
		json_decref(spec);
	}
}
END_TEST

START_TEST(test_spec_over_cap)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	size_t len = 9u * 1024u * 1024u;
	char *big = malloc(len + 1);

	/* 9 MiB: the runner refuses it before reading it all; the worker
	 * must survive the broken pipe (no SIGPIPE) and record the reason. */
	memset(big, 'a', len);
	big[len] = '\0';
	spec_step(spec, "k", big);
	free(big);
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 20000, spec, &r), 0);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "run spec over 8388608 bytes (8 MiB)");
	ck_assert_int_eq(r.isolated, 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* runner-sleep (a script: a background sleeper in its group and a
 * foreground one) at a 300 ms deadline, spawned (fork_server 0) or given
 * as the runner path of a fork server it cannot be (1): the run fails
 * with reason, within max_ms, and every process
 * of the script's group is killed (orphans come back to us, the
 * subreaper, so we can see that none survives). */
static void check_sleeper_killed(int fork_server, const char *reason, int64_t max_ms)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();
	int64_t t0, elapsed;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	t0 = now_ms();
	ck_assert_int_eq(http_dispatch_run(fixture("runner-sleep"), fork_server, "inproc-mock",
	                                   NULL, 300, spec, &r),
	                 -1);
	elapsed = now_ms() - t0;
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, reason);
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_uint_eq(json_array_size(r.outputs), 0);
	ck_assert_msg(elapsed >= 300 && elapsed < max_ms, "returned after %lld ms",
	              (long long)elapsed);
	ck_assert_int_eq(http_runner_server_pid(), -1);
	ck_assert_int_eq(reap_descendants(), 1);
	http_dispatch_result_free(&r);
	json_decref(spec);
}

START_TEST(test_timeout_kills_group)
{
	check_sleeper_killed(
	    0, "runner still running at the worker's deadline, 300 ms after its start; killed",
	    1500);
}
END_TEST

START_TEST(test_stderr_flood_times_out)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();
	int64_t t0, elapsed;

	t0 = now_ms();
	ck_assert_int_eq(http_dispatch_run(fixture("runner-stderr-flood"), 0, "inproc-mock", NULL,
	                                   300, spec, &r),
	                 -1);
	elapsed = now_ms() - t0;
	ck_assert_str_eq(
	    r.reason,
	    "runner still running at the worker's deadline, 300 ms after its start; killed");
	ck_assert_msg(elapsed >= 300 && elapsed < 1500, "returned after %lld ms",
	              (long long)elapsed);
	ck_assert_int_eq(r.isolated, 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_straggler_killed_at_exit)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();
	int64_t t0, elapsed;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	t0 = now_ms();
	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-straggler"), 0, "inproc-mock", NULL, 10000, spec, &r),
	    0);
	elapsed = now_ms() - t0;
	ck_assert_msg(elapsed < 2000, "waited %lld ms for a straggler", (long long)elapsed);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 2);
	ck_assert_str_eq(out_str(&r, 1, "output"), "[[mock-miss:agent:user2@example.test]]");
	ck_assert_int_eq(reap_descendants(), 1);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

static void check_fake_fails(const char *fake, const char *reason_prefix)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();

	ck_assert_int_eq(http_dispatch_run(fixture(fake), 0, "inproc-mock", NULL, 5000, spec, &r),
	                 -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_msg(strncmp(r.reason, reason_prefix, strlen(reason_prefix)) == 0,
	              "%s: reason \"%s\"", fake, r.reason);
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(r.destroyed, 0);
	ck_assert_int_eq(r.steps_total, 0);
	ck_assert_uint_eq(json_array_size(r.outputs), 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}

START_TEST(test_fake_runners_fail)
{
	check_fake_fails("runner-garbage", "runner output malformed: line 1 is not a JSON object");
	check_fake_fails("runner-wrong-count",
	                 "runner output inconsistent: summary counts 2/1/1, step lines 1/1/0");
	check_fake_fails("runner-bad-status",
	                 "runner output inconsistent: step 1: status and error_kind disagree");
	check_fake_fails("runner-other-backend", "runner output inconsistent: backend gvisor "
	                                         "reported, inproc-mock requested");
	check_fake_fails("runner-sigsys", "runner killed by SIGSYS (seccomp): about to die");
	check_fake_fails("runner-flood", "runner output over 7340032 bytes");
	check_fake_fails("runner-shutdown-failed",
	                 "runner output inconsistent: a shutdown note on a failed run");
}
END_TEST

/* The agent's log lines (model/runspec.h): joined, the dropped count the
 * last line's; a line that is not cleaned text fails the run; what came
 * before the worker killed a hung runner is kept. */
START_TEST(test_log_lines)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();

	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-log"), 0, "inproc-mock", NULL, 5000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 2);
	ck_assert_str_eq(r.log.data, "start\n<b>one</b> & \"two\"\nend");
	ck_assert_int_eq(r.log_dropped, 7);
	http_dispatch_result_free(&r);

	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-log-dirty"), 0, "inproc-mock", NULL, 5000, spec, &r),
	    -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "runner output malformed: log line 1 is not cleaned text");
	http_dispatch_result_free(&r);

	/* the deadline (1 s) kills the hung runner; its log stays */
	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-log-hangs"), 0, "inproc-mock", NULL, 1000, spec, &r),
	    -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.log.data, "before the hang\n");
	http_dispatch_result_free(&r);

	/* the real runner on inproc-mock runs no agent: no log */
	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_uint_eq(r.log.len, 0);
	ck_assert_int_eq(r.log_dropped, 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* The summary's shutdown note (model/runspec.h): kept as the runner said
 * on a completed run, which stays completed; none from a runner that says
 * null (the real one on inproc-mock) or, an older one, nothing. */
START_TEST(test_shutdown_note)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();

	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-shutdown"), 0, "inproc-mock", NULL, 5000, spec, &r),
	    0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_str_eq(r.reason, "");
	ck_assert_int_eq(r.steps_total, 2);
	ck_assert_str_eq(r.shutdown, "agent did not exit within its 1000 ms grace after the end of "
	                             "its input: killed");
	http_dispatch_result_free(&r);

	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_str_eq(r.shutdown, "");
	http_dispatch_result_free(&r);

	/* without the key: accepted, no note */
	ck_assert_int_eq(http_dispatch_run(fixture("runner-old-summary"), 0, "inproc-mock", NULL,
	                                   5000, spec, &r),
	                 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 2);
	ck_assert_str_eq(r.shutdown, "");
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

/* A step line's duration_us: kept as duration_ms when it is an integer in
 * [0, the deadline in us]; anything else (absent, negative, past the
 * deadline, a string, a real) leaves the step, unknown (null), and the run
 * sound. */
START_TEST(test_step_durations_judged)
{
	static const char *const want[] = {"1.5", NULL, NULL, NULL, NULL, NULL, "0", "5000"};
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	json_t *d;
	char key[8], input[8], got[64];
	size_t i;

	for (i = 1; i <= 8; i++) {
		snprintf(key, sizeof(key), "d%zu", i);
		snprintf(input, sizeof(input), "i%zu", i);
		spec_step(spec, key, input);
	}
	ck_assert_int_eq(
	    http_dispatch_run(fixture("runner-durations"), 0, "inproc-mock", NULL, 5000, spec, &r),
	    0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 8);
	ck_assert_uint_eq(json_array_size(r.outputs), 8);
	for (i = 0; i < 8; i++) {
		d = json_object_get(json_array_get(r.outputs, i), "duration_ms");
		ck_assert_ptr_nonnull(d);
		if (!want[i]) {
			ck_assert_msg(json_is_null(d), "step %zu: a duration was made up", i + 1);
			continue;
		}
		ck_assert_msg(json_is_real(d), "step %zu: duration_ms is not a number", i + 1);
		snprintf(got, sizeof(got), "%.15g", json_real_value(d));
		ck_assert_str_eq(got, want[i]);
	}
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_exec_failure)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();
	char path[400], want[512], part[101];

	ck_assert_int_eq(http_dispatch_run("/nonexistent/olivares-runner", 0, "inproc-mock", NULL,
	                                   5000, spec, &r),
	                 -1);
	ck_assert_str_eq(r.status, "failed");
	ck_assert_str_eq(r.reason, "cannot start the runner /nonexistent/olivares-runner: "
	                           "No such file or directory");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	http_dispatch_result_free(&r);

	/* Through the fork server: the server cannot be started either, same
	 * words, nothing left running. */
	ck_assert_int_eq(http_dispatch_run("/nonexistent/olivares-runner", 1, "inproc-mock", NULL,
	                                   5000, spec, &r),
	                 -1);
	ck_assert_str_eq(r.reason, "cannot start the runner /nonexistent/olivares-runner: "
	                           "No such file or directory");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(http_runner_server_pid(), -1);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	http_dispatch_result_free(&r);

	/* A reason longer than a request error's message (255 bytes) is
	 * recorded whole: a runner path of 3 components of 100 bytes. */
	memset(part, 'd', 100);
	part[100] = '\0';
	snprintf(path, sizeof(path), "/nonexistent/%s/%s/%s/olivares-runner", part, part, part);
	ck_assert_int_eq(http_dispatch_run(path, 0, "inproc-mock", NULL, 5000, spec, &r), -1);
	snprintf(want, sizeof(want), "cannot start the runner %s: No such file or directory", path);
	ck_assert_str_eq(r.reason, want);
	ck_assert_uint_eq(strlen(r.reason), 382);
	http_dispatch_result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_fails_closed_without_filter)
{
	struct http_dispatch_result r;
	scmp_filter_ctx ctx;
	json_t *spec = walk_spec();
	char buf[1024];
	ssize_t n;
	int fds[2];
	int status;
	pid_t pid;

	/* A host where the runner cannot confine itself: a filter inherited
	 * from us makes its prctl(PR_SET_NO_NEW_PRIVS) fail. It must run no
	 * step and say why, isolated false. Done in a child so the filter
	 * does not outlive this test. */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(2);
		ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
		                     SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS)) != 0 ||
		    seccomp_load(ctx) != 0) {
			json_decref(spec);
			_exit(3);
		}
		seccomp_release(ctx);
		http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r);
		n = snprintf(buf, sizeof(buf), "%s|%d|%d|%zu|%s", r.status, r.isolated,
		             r.steps_total, json_array_size(r.outputs), r.reason);
		http_dispatch_result_free(&r);
		json_decref(spec);
		if (write(fds[1], buf, (size_t)n) != n)
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(!WIFEXITED(status) || WEXITSTATUS(status) != 3,
	              "cannot install a seccomp filter here (under valgrind? exclude the "
	              "needs-seccomp tag)");
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "failed|0|0|0|seccomp filter not in place: "
	                      "prctl(PR_SET_NO_NEW_PRIVS) failed: Operation not permitted");
	json_decref(spec);
}
END_TEST

/* ---- what the child inherits -------------------------------------------- */

/* The fixture (this binary), spawned (fork_server 0) or forked by its own
 * fork server (1), reports only 0, 1, 2 and an empty environment, while
 * the worker holds descriptors not marked CLOEXEC and a secret in its
 * environment. */
static void check_clean_descriptors_and_env(int fork_server)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	int leak;
	int p[2];

	leak = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(leak, 3);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(setenv("OLIVARES_TOKEN", "olv_secret", 1), 0);

	spec_step(spec, "fds", "fds");
	spec_step(spec, "env", "env");
	ck_assert_int_eq(
	    http_dispatch_run(self_exe, fork_server, "fixture-fds", NULL, 5000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_str_eq(out_str(&r, 0, "output"), "0,1,2");
	ck_assert_str_eq(out_str(&r, 1, "output"), "");
	ck_assert_int_eq(r.isolated, 0); /* the fake said so: never upgraded */
	http_dispatch_result_free(&r);
	ck_assert_int_eq(http_runner_server_pid() > 0, fork_server);
	http_runner_server_stop();
	json_decref(spec);
	close(leak);
	close(p[0]);
	close(p[1]);
}

START_TEST(test_clean_descriptors_and_env)
{
	check_clean_descriptors_and_env(0);
}
END_TEST

START_TEST(test_big_spec)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	char *input = malloc(8193);
	char *response = malloc(8193);
	char *huge = malloc(1024 * 1024 + 1);
	char key[32];
	size_t i;

	/* About 1.5 MiB of spec (64 inputs of 8 KiB, one of 1 MiB) and about
	 * 3 MiB of answer: far beyond a pipe buffer both ways, under the
	 * worker's 4 MiB output cap (fcgi/run/dispatch.h). */
	memset(response, 'r', 8192);
	response[8192] = '\0';
	for (i = 0; i < 64; i++) {
		memset(input, 'a' + (int)(i % 26), 8192);
		snprintf(input, 8193, "%03zu", i);
		input[3] = 'x';
		input[8192] = '\0';
		snprintf(key, sizeof(key), "step-%zu", i + 1);
		spec_step(spec, key, input);
		if (i % 2 == 0)
			spec_mock(spec, input, response, NULL);
	}
	memset(huge, 'h', 1024 * 1024);
	huge[1024 * 1024] = '\0';
	spec_step(spec, "huge", huge);

	ck_assert_int_eq(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 30000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 65);
	ck_assert_int_eq(r.steps_ok, 32);
	ck_assert_int_eq(r.steps_error, 33);
	ck_assert_int_eq(r.isolated, 1);
	ck_assert_str_eq(out_str(&r, 0, "output"), response);
	ck_assert_uint_eq(strlen(out_str(&r, 64, "output")), 1024 * 1024 + 14);
	ck_assert(strncmp(out_str(&r, 64, "output"), "[[mock-miss:hhh", 15) == 0);
	http_dispatch_result_free(&r);
	json_decref(spec);
	free(input);
	free(response);
	free(huge);
}
END_TEST

START_TEST(test_no_leaks_across_runs)
{
	struct http_dispatch_result r;
	json_t *spec = walk_spec();
	int before = count_fds();
	int i;

	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(
		    http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r), 0);
		ck_assert_int_eq(r.isolated, 1);
		http_dispatch_result_free(&r);
		ck_assert_int_eq(http_dispatch_run(fixture("runner-garbage"), 0, "inproc-mock",
		                                   NULL, 10000, spec, &r),
		                 -1);
		http_dispatch_result_free(&r);
	}
	/* The fork server (started by the first run) is the one child and
	 * descriptor left by design; stopped, it takes its socket along. */
	ck_assert_int_gt(http_runner_server_pid(), 0);
	ck_assert_int_eq(count_fds(), before + 1);
	http_runner_server_stop();
	ck_assert_int_eq(http_runner_server_pid(), -1);
	ck_assert_int_eq(count_fds(), before);
	/* Every runner was reaped: no child, zombie or not, is left. */
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	/* SIGPIPE and SIGCHLD dispositions are restored. */
	{
		struct sigaction sa;

		sigaction(SIGPIPE, NULL, &sa);
		ck_assert(sa.sa_handler == SIG_DFL);
	}
	json_decref(spec);
}
END_TEST

/* ---- the runner fork server (runner/serve.c, fcgi/run/runner_server.c) ------- */

/* A temporary file for a fixture to write a pid into. */
static void pidfile_new(char path[64])
{
	int fd;

	snprintf(path, 64, "/tmp/olv-test-pid-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static pid_t pidfile_read(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(path);
	return (pid_t)atol(buf);
}

/* pid, orphaned to us (the subreaper), must end killed by SIGKILL. */
static void expect_killed(pid_t pid)
{
	int status = 0;

	ck_assert_int_gt(pid, 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	              "pid %d ended with status %#x", (int)pid, status);
}

/* One run of fixture_name through the fork server (the test binary
 * serving itself) with a "pidfile" step (the fixture writes to path the
 * pid of what it leaves behind) and, unless extra is NULL, a step named
 * extra; first made the subreaper, so that orphans come back to us.
 * Returns http_dispatch_run()'s value, *elapsed_ms how long it took. */
static int served_pidfile_run(const char *fixture_name, const char *extra, int timeout_ms,
                              char path[64], struct http_dispatch_result *r, int64_t *elapsed_ms)
{
	json_t *spec = spec_new(NULL, NULL);
	int64_t t0;
	int rc;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pidfile_new(path);
	spec_step(spec, "pidfile", path);
	if (extra)
		spec_step(spec, extra, extra);
	t0 = now_ms();
	rc = http_dispatch_run(self_exe, 1, fixture_name, NULL, timeout_ms, spec, r);
	*elapsed_ms = now_ms() - t0;
	json_decref(spec);
	return rc;
}

/* The next run of spec (runner_path, backend) completes, on a fork server
 * other than first (which died or was replaced); then the server is
 * stopped and spec released. Returns that run's isolated. */
static int check_next_on_new_server(const char *runner_path, const char *backend, json_t *spec,
                                    pid_t first)
{
	struct http_dispatch_result r;
	int isolated;

	ck_assert_msg(http_dispatch_run(runner_path, 1, backend, NULL, 10000, spec, &r) == 0,
	              "the run after server %d: %s", (int)first, r.reason);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_gt(http_runner_server_pid(), 0);
	ck_assert_int_ne(http_runner_server_pid(), first);
	isolated = r.isolated;
	http_dispatch_result_free(&r);
	http_runner_server_stop();
	json_decref(spec);
	return isolated;
}

START_TEST(test_served_clean_descriptors_and_env)
{
	check_clean_descriptors_and_env(1);
}
END_TEST

START_TEST(test_served_timeout_kills_group)
{
	struct http_dispatch_result r;
	json_t *spec;
	char path[64];
	int64_t elapsed;

	/* The deadline leaves a fork server started afresh under ASan on a
	 * busy host time to hand the run over (300 ms did not, once); the
	 * bound on the return is generous for the same reason. */
	ck_assert_int_eq(served_pidfile_run("fixture-sleep", NULL, 1000, path, &r, &elapsed), -1);
	ck_assert_str_eq(
	    r.reason,
	    "runner still running at the worker's deadline, 1000 ms after its start; killed");
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_msg(elapsed >= 1000 && elapsed < 4000, "returned after %lld ms",
	              (long long)elapsed);
	/* The sleeper the fixture left in its process group died with it. */
	expect_killed(pidfile_read(path));
	http_dispatch_result_free(&r);
	/* The server survived the kill of its runner and takes the next run. */
	spec = spec_new(NULL, NULL);
	spec_step(spec, "fds", "fds");
	spec_step(spec, "env", "env");
	ck_assert_int_eq(http_dispatch_run(self_exe, 1, "fixture-fds", NULL, 5000, spec, &r), 0);
	ck_assert_str_eq(r.status, "completed");
	http_dispatch_result_free(&r);
	http_runner_server_stop();
	json_decref(spec);
}
END_TEST

START_TEST(test_served_straggler_killed_at_exit)
{
	struct http_dispatch_result r;
	char path[64];
	int64_t elapsed;

	ck_assert_int_eq(served_pidfile_run("fixture-straggler", NULL, 10000, path, &r, &elapsed),
	                 0);
	ck_assert_msg(elapsed < 2000, "waited %lld ms for a straggler", (long long)elapsed);
	ck_assert_str_eq(r.status, "completed");
	ck_assert_int_eq(r.steps_total, 1);
	/* The server killed the group before it reported the end. */
	expect_killed(pidfile_read(path));
	http_dispatch_result_free(&r);
	http_runner_server_stop();
}
END_TEST

START_TEST(test_served_server_dies_mid_run)
{
	struct http_dispatch_result r;
	json_t *spec;
	char path[64];
	int64_t elapsed;
	pid_t first;

	ck_assert_int_eq(
	    served_pidfile_run("fixture-sleep", "kill-server", 10000, path, &r, &elapsed), -1);
	/* Not the deadline: the end is known as soon as the server is gone. */
	ck_assert_msg(elapsed < 3000, "returned after %lld ms", (long long)elapsed);
	ck_assert_msg(strncmp(r.reason, "runner exit status lost: ", 25) == 0, "reason \"%s\"",
	              r.reason);
	ck_assert_int_eq(r.isolated, 0);
	ck_assert_int_eq(http_runner_server_pid(), -1);
	expect_killed(pidfile_read(path));
	http_dispatch_result_free(&r);

	/* A server killed between runs: the next run starts another. */
	spec = walk_spec();
	ck_assert_msg(http_dispatch_run(runner(), 1, "inproc-mock", NULL, 10000, spec, &r) == 0,
	              "after the server died: %s", r.reason);
	ck_assert_str_eq(r.status, "completed");
	http_dispatch_result_free(&r);
	first = http_runner_server_pid();
	ck_assert_int_gt(first, 0);
	ck_assert_int_eq(kill(first, SIGKILL), 0);
	/* Dead (not reaped: that is the dispatcher's job) before the next
	 * run: a server killed while a request is in flight is the case
	 * above, whose run is lost. */
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		ck_assert_int_eq(waitid(P_PID, (id_t)first, &si, WEXITED | WNOWAIT), 0);
	}
	ck_assert_int_eq(check_next_on_new_server(runner(), "inproc-mock", spec, first), 1);
}
END_TEST

/* The fixture stops its server (SIGSTOP) during the run, then sleeps
 * (fixture-sleep: the deadline kills it) or answers and exits
 * (fixture-straggler). Either way the server never reports: it is
 * stopped for good after 5 s (plus the 2 s grace), the worker is not
 * held, the reason says what happened, and the sleeper the fixture left
 * in its group (which the stopped server could not kill) is killed. */
static void check_server_stopped(const char *fixture_name, int timeout_ms, const char *reason,
                                 int64_t min_ms)
{
	struct http_dispatch_result r;
	char path[64];
	int64_t elapsed;

	ck_assert_int_eq(
	    served_pidfile_run(fixture_name, "stop-server", timeout_ms, path, &r, &elapsed), -1);
	ck_assert_str_eq(r.reason, reason);
	ck_assert_msg(elapsed >= min_ms && elapsed < min_ms + 4700, "returned after %lld ms",
	              (long long)elapsed);
	ck_assert_int_eq(http_runner_server_pid(), -1);
	expect_killed(pidfile_read(path));
	http_dispatch_result_free(&r);
}

START_TEST(test_served_server_hung)
{
	/* Stopped while the runner runs: the deadline (300 ms) kills the
	 * runner, the server gets 5 s to report it. */
	check_server_stopped(
	    "fixture-sleep", 300,
	    "runner still running at the worker's deadline, 300 ms after its start; killed", 5300);
}
END_TEST

START_TEST(test_served_server_hung_after_exit)
{
	/* The runner answered and exited; 5 s after its pidfd showed it gone
	 * the run fails for what happened (its status is lost), long before
	 * its 30 s deadline. */
	check_server_stopped("fixture-straggler", 30000,
	                     "runner exit status lost: Connection timed out", 5000);
}
END_TEST

/* The children of the server (its spares, and the run in progress). */
static int server_children(void)
{
	char path[96], buf[256];
	int n = 0;
	char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)http_runner_server_pid(),
	         (int)http_runner_server_pid());
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	buf[0] = '\0';
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		n++;
	return n;
}

START_TEST(test_served_crash_restarts_server)
{
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	pid_t first;
	int64_t give_up;

	/* Between runs the server keeps two forks waiting. */
	spec_step(spec, "fds", "fds");
	spec_step(spec, "env", "env");
	ck_assert_int_eq(http_dispatch_run(self_exe, 1, "fixture-fds", NULL, 5000, spec, &r), 0);
	http_dispatch_result_free(&r);
	first = http_runner_server_pid();
	ck_assert_int_gt(first, 0);
	give_up = now_ms() + 2000;
	while (server_children() != 2 && now_ms() < give_up)
		usleep(1000);
	ck_assert_int_eq(server_children(), 2);

	/* A runner that dies of a fault: reported as such, and the server,
	 * whose forks all share its canary and layout, is replaced before
	 * the next run. */
	ck_assert_int_eq(http_dispatch_run(self_exe, 1, "fixture-crash", NULL, 5000, spec, &r), -1);
	ck_assert_msg(strncmp(r.reason, "runner killed by SIGSEGV", 24) == 0, "reason \"%s\"",
	              r.reason);
	http_dispatch_result_free(&r);
	check_next_on_new_server(self_exe, "fixture-fds", spec, first);
}
END_TEST

/* A fork server whose every request is taken by a spare killed as it
 * takes it: after it made its group (so the server reports its end), before
 * its STARTED. What a kill of the runner at its very start does; the test
 * binary serves this when started under the name "taker-dies". */
static int fake_server_taker_dies(void)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	union model_forkserver_ctl rctl;
	struct model_forkserver_reply rep;
	char payload[MODEL_FORKSERVER_REQUEST_MAX];
	struct cmsghdr *cm;
	struct iovec iov;
	struct msghdr mh;
	int status, fd;
	size_t k, j;
	ssize_t n;
	pid_t p;

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = payload;
		iov.iov_len = sizeof(payload);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(0, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			return 0; /* the worker hung up */
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (j = 0; j < k; j++) {
				memcpy(&fd, CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
				close(fd);
			}
		}
		p = fork();
		if (p == 0) {
			setpgid(0, 0);
			pause();
			_exit(0);
		}
		while (getpgid(p) != p)
			usleep(100);
		kill(p, SIGKILL);
		waitpid(p, &status, 0);
		memset(&rep, 0, sizeof(rep));
		rep.kind = MODEL_FORKSERVER_ENDED;
		rep.pid = (int32_t)p;
		rep.value = status;
		model_forkserver_msg(&mh, &iov, &rctl, &rep, sizeof(rep), NULL, 0);
		if (sendmsg(0, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
			return 0;
	}
}

START_TEST(test_served_runner_killed_before_started)
{
	/* The spare that took the run is killed before its STARTED: the
	 * server reports its end, which is the run's, at once. Without it the
	 * worker waited 5 s for the STARTED, replaced the server, waited 5 s
	 * again and failed with "Connection timed out". */
	char dir[] = "/tmp/olv-test-taker-XXXXXX";
	char link[64];
	struct http_dispatch_result r;
	json_t *spec = spec_new(NULL, NULL);
	int64_t t0, took;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/taker-dies", dir);
	ck_assert_int_eq(symlink(self_exe, link), 0);
	spec_step(spec, "fds", "fds");
	spec_step(spec, "env", "env");
	for (i = 0; i < 3; i++) {
		t0 = now_ms();
		ck_assert_int_eq(http_dispatch_run(link, 1, "fixture-fds", NULL, 10000, spec, &r),
		                 -1);
		took = now_ms() - t0;
		ck_assert_str_eq(r.status, "failed");
		ck_assert_msg(strncmp(r.reason, "runner killed by SIGKILL", 24) == 0,
		              "reason \"%s\"", r.reason);
		ck_assert_int_eq(r.isolated, 0);
		/* generous bound (a loaded machine): the 5 s wait is what it replaces */
		ck_assert_msg(took < 3000, "run %d failed after %lld ms, not within 3000 ms", i,
		              (long long)took);
		http_dispatch_result_free(&r);
	}
	http_runner_server_stop();
	unlink(link);
	rmdir(dir);
	/* the next run, on a real server, works */
	check_next_on_new_server(self_exe, "fixture-fds", spec, -1);
}
END_TEST

START_TEST(test_served_not_a_server)
{
	/* No fork server answers: nothing is started, the program is
	 * stopped (SIGKILL after the 2 s grace) and reaped, and so is its
	 * sleeper. */
	char reason[4200];

	snprintf(reason, sizeof(reason), "cannot start the runner %s: Connection timed out",
	         fixture("runner-sleep"));
	check_sleeper_killed(1, reason, 4000);
}
END_TEST

/* Start `runner --serve` by hand; *sock is our end. */
static pid_t serve_start(int *sock)
{
	char *argv[3];
	int sv[2];
	int devnull;
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	argv[0] = (char *)runner();
	argv[1] = (char *)MODEL_FORKSERVER_ARG;
	argv[2] = NULL;
	ck_assert_int_eq(http_spawn_process(runner(), argv, sv[1], devnull, devnull, &pid), 0);
	close(sv[1]);
	close(devnull);
	*sock = sv[0];
	return pid;
}

/* Send payload (len bytes) with nfds descriptors (the first one in_fd
 * when it is not -1, the others /dev/null); the STARTED, and into *pidfd
 * the descriptor that came with it (-1: none). */
static struct model_forkserver_reply serve_send_in(int sock, const char *payload, size_t len,
                                                   int nfds, int in_fd, int *pidfd)
{
	union {
		char buf[CMSG_SPACE(12 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct model_forkserver_reply rep;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	int fds[12];
	int i;

	memset(&ctl, 0, sizeof(ctl));
	memset(&mh, 0, sizeof(mh));
	for (i = 0; i < nfds; i++)
		fds[i] = i == 0 && in_fd >= 0 ? dup(in_fd) : open("/dev/null", O_RDWR | O_CLOEXEC);
	iov.iov_base = (void *)payload;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	ck_assert_int_eq(sendmsg(sock, &mh, 0), (ssize_t)len);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = &rep;
		iov.iov_len = sizeof(rep);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		ck_assert_int_eq(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC), (ssize_t)sizeof(rep));
		*pidfd = -1;
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(pidfd, CMSG_DATA(cm), sizeof(int));
		if (rep.kind == MODEL_FORKSERVER_STARTED)
			return rep;
		if (*pidfd >= 0)
			close(*pidfd);
	}
}

static struct model_forkserver_reply serve_send(int sock, const char *payload, size_t len, int nfds,
                                                int *pidfd)
{
	return serve_send_in(sock, payload, len, nfds, -1, pidfd);
}

/* The pid a pidfd refers to (its fdinfo's "Pid:" line; -1 once reaped). */
static pid_t pidfd_pid(int fd)
{
	char path[64], line[256];
	long pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	fclose(f);
	return (pid_t)pid;
}

/* The ENDED of pid (skipping others). */
static struct model_forkserver_reply serve_ended(int sock, pid_t pid)
{
	struct model_forkserver_reply rep;

	for (;;) {
		ck_assert_int_eq(recv(sock, &rep, sizeof(rep), 0), (ssize_t)sizeof(rep));
		if (rep.kind == MODEL_FORKSERVER_ENDED && rep.pid == (int32_t)pid)
			return rep;
	}
}

START_TEST(test_serve_refuses_malformed_requests)
{
	struct model_forkserver_reply rep;
	static const char good[] = "--backend\0inproc-mock";
	char many[64];
	int sock;
	int pidfd;
	int in[2];
	int status;
	pid_t server;
	size_t i;

	server = serve_start(&sock);
	/* Two descriptors instead of three; a refusal carries no pidfd. */
	rep = serve_send(sock, good, sizeof(good), 2, &pidfd);
	ck_assert_int_eq(rep.value, EBADF);
	ck_assert_int_eq(pidfd, -1);
	ck_assert_int_eq(serve_ended(sock, rep.pid).value, 2 << 8); /* exit 2 */
	/* Four. */
	rep = serve_send(sock, good, sizeof(good), 4, &pidfd);
	ck_assert_int_eq(rep.value, EBADF);
	serve_ended(sock, rep.pid);
	/* Twelve: more than the spare takes (control data cut short). */
	rep = serve_send(sock, good, sizeof(good), 12, &pidfd);
	ck_assert_int_eq(rep.value, EMSGSIZE);
	serve_ended(sock, rep.pid);
	/* No arguments at all (an empty message with its descriptors). */
	rep = serve_send(sock, "", 0, 3, &pidfd);
	ck_assert_int_eq(rep.value, EINVAL);
	serve_ended(sock, rep.pid);
	/* Arguments not NUL-terminated. */
	rep = serve_send(sock, "--backend", 9, 3, &pidfd);
	ck_assert_int_eq(rep.value, EINVAL);
	serve_ended(sock, rep.pid);
	/* Over MODEL_FORKSERVER_ARGS_MAX arguments. */
	for (i = 0; i < sizeof(many); i += 2) {
		many[i] = 'x';
		many[i + 1] = '\0';
	}
	rep = serve_send(sock, many, sizeof(many), 3, &pidfd);
	ck_assert_int_eq(rep.value, EINVAL);
	serve_ended(sock, rep.pid);
	/* After all that, a good request runs (the runner's usage error on
	 * stdin /dev/null still reports an end: exit 0 with a summary). */
	/* Its stdin a pipe we hold open: the runner waits for its spec. */
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	rep = serve_send_in(sock, good, sizeof(good), 3, in[0], &pidfd);
	close(in[0]);
	ck_assert_int_eq(rep.value, 0);
	ck_assert_int_gt(rep.pid, 0);
	ck_assert_int_ne(rep.pid, server);
	/* With STARTED comes a pidfd of that very runner. */
	ck_assert_int_ge(pidfd, 0);
	ck_assert_int_eq(pidfd_pid(pidfd), rep.pid);
	close(pidfd);
	close(in[1]); /* end of the (empty) spec */
	rep = serve_ended(sock, rep.pid);
	ck_assert(WIFEXITED(rep.value) && WEXITSTATUS(rep.value) == 0);
	ck_assert_int_gt(rep.cpu_us, 0);
	/* Our end closed: the server exits 0. */
	close(sock);
	ck_assert_int_eq(waitpid(server, &status, 0), server);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(test_serve_needs_a_socket)
{
	char cmd[4200];
	int status;

	/* Started by hand (stdin not a SOCK_SEQPACKET socket): exit 2. */
	snprintf(cmd, sizeof(cmd), "'%s' --serve </dev/null 2>/dev/null", runner());
	status = system(cmd);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}
END_TEST

/* ---- this binary as a fake runner --------------------------------------- */

/*
 * `test_runner --backend fixture-fds`: reads the spec, then answers two
 * steps with the list of its open descriptors ("0,1,2") and its environment
 * (entries joined by ';', "" when empty), with a consistent summary that
 * does not claim isolation.
 */
static int fake_runner_fds(void)
{
	char fds[1024] = "";
	char env[4096] = "";
	char chunk[4096];
	struct dirent *e;
	DIR *d;
	char **v;
	json_t *line;

	while (read(0, chunk, sizeof(chunk)) > 0)
		;
	d = opendir("/proc/self/fd");
	if (!d)
		return 1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(fds + strlen(fds), sizeof(fds) - strlen(fds), "%s%s", fds[0] ? "," : "",
		         e->d_name);
	}
	closedir(d);
	for (v = environ; *v; v++)
		snprintf(env + strlen(env), sizeof(env) - strlen(env), "%s%s", env[0] ? ";" : "",
		         *v);
	line = json_pack("{s:s,s:i,s:s,s:s,s:s,s:s,s:n}", "type", "step", "seq", 1, "key", "fds",
	                 "input", "fds", "output", fds, "status", "ok", "error_kind");
	json_dumpf(line, stdout, JSON_COMPACT);
	json_decref(line);
	line = json_pack("{s:s,s:i,s:s,s:s,s:s,s:s,s:n}", "type", "step", "seq", 2, "key", "env",
	                 "input", "env", "output", env, "status", "ok", "error_kind");
	printf("\n");
	json_dumpf(line, stdout, JSON_COMPACT);
	json_decref(line);
	printf("\n{\"type\":\"summary\",\"runner\":\"fixture\",\"backend\":\"fixture-fds\","
	       "\"isolated\":false,\"destroyed\":false,\"status\":\"completed\","
	       "\"steps_total\":2,\"steps_ok\":2,\"steps_error\":0,\"reason\":null}\n");
	return 0;
}

/* The spec on stdin, parsed (NULL when it is not JSON). */
static json_t *fake_read_spec(void)
{
	return json_loadf(stdin, 0, NULL);
}

/* Fork a sleeper into our process group and write its pid to path. */
static void fake_leave_sleeper(const char *path)
{
	FILE *f;
	pid_t pid = fork();

	if (pid == 0) {
		sleep(60);
		_exit(0);
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
}

/*
 * The runner this binary is when it serves (`test_runner --serve`):
 *   --backend fixture-fds        as fake_runner_fds()
 *   --backend fixture-sleep      leaves a sleeper (pid into the file the
 *                                first step's input names), kills (stops)
 *                                its server if a second step says
 *                                "kill-server" ("stop-server"), then sleeps
 *   --backend fixture-straggler  leaves a sleeper, stops its server if a
 *                                second step says "stop-server", answers
 *                                every step "done" and exits
 *   --backend fixture-crash      dies of SIGSEGV
 */
static int fake_served(int argc, char **argv)
{
	const char *path;
	json_t *spec, *steps, *st;
	size_t i;

	if (argc != 3 || strcmp(argv[1], "--backend") != 0)
		return 2;
	if (strcmp(argv[2], "fixture-fds") == 0)
		return fake_runner_fds();
	if (strcmp(argv[2], "fixture-crash") == 0) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 1;
	}
	spec = fake_read_spec();
	steps = json_object_get(spec, "steps");
	path = json_string_value(json_object_get(json_array_get(steps, 0), "input"));
	if (!path)
		return 2;
	fake_leave_sleeper(path);
	if (strcmp(argv[2], "fixture-sleep") == 0) {
		st = json_array_get(steps, 1);
		if (st &&
		    strcmp(json_string_value(json_object_get(st, "input")), "kill-server") == 0)
			kill(getppid(), SIGKILL);
		if (st &&
		    strcmp(json_string_value(json_object_get(st, "input")), "stop-server") == 0)
			kill(getppid(), SIGSTOP);
		sleep(60);
		return 1;
	}
	if (strcmp(argv[2], "fixture-straggler") != 0)
		return 2;
	st = json_array_get(steps, 1);
	if (st && strcmp(json_string_value(json_object_get(st, "input")), "stop-server") == 0)
		kill(getppid(), SIGSTOP);
	json_array_foreach(steps, i, st)
	{
		json_t *line = json_pack("{s:s,s:i,s:O,s:O,s:s,s:s,s:n}", "type", "step", "seq",
		                         (int)i + 1, "key", json_object_get(st, "key"), "input",
		                         json_object_get(st, "input"), "output", "done", "status",
		                         "ok", "error_kind");

		json_dumpf(line, stdout, JSON_COMPACT);
		printf("\n");
		json_decref(line);
	}
	printf("{\"type\":\"summary\",\"runner\":\"fixture\",\"backend\":\"fixture-straggler\","
	       "\"isolated\":false,\"destroyed\":false,\"status\":\"completed\","
	       "\"steps_total\":%zu,\"steps_ok\":%zu,\"steps_error\":0,\"reason\":null}\n",
	       json_array_size(steps), json_array_size(steps));
	json_decref(spec);
	return 0;
}

static Suite *runner_suite(void)
{
	const TTest *const core[] = {
	    test_walkthrough,
	    test_mock_delay,
	    test_mock_delay_past_wall_clock,
	    test_mock_delay_refused,
	    test_final_newline,
	    test_variants,
	    test_probes_refused,
	    test_probe_unlisted_killed,
	    test_unknown_backend,
	    test_gvisor_platform_passed,
	    test_spec_with_extra_field,
	    test_spec_egress_secrets,
	    test_spec_over_cap,
	    test_timeout_kills_group,
	    test_stderr_flood_times_out,
	    test_straggler_killed_at_exit,
	    test_fake_runners_fail,
	    test_shutdown_note,
	    test_log_lines,
	    test_step_durations_judged,
	    test_exec_failure,
	    test_clean_descriptors_and_env,
	    test_big_spec,
	    test_no_leaks_across_runs,
	    NULL,
	};
	const TTest *const fork_server[] = {
	    test_served_clean_descriptors_and_env,
	    test_served_timeout_kills_group,
	    test_served_straggler_killed_at_exit,
	    test_served_server_dies_mid_run,
	    test_served_server_hung,
	    test_served_server_hung_after_exit,
	    test_served_crash_restarts_server,
	    test_served_runner_killed_before_started,
	    test_served_not_a_server,
	    test_serve_refuses_malformed_requests,
	    test_serve_needs_a_socket,
	    NULL,
	};
	const TTest *const inherited_filter[] = {
	    test_fails_closed_without_filter,
	    NULL,
	};
	Suite *s = suite_create("runner");
	TCase *tc;

	suite_add_tests(s, "core", 60, core);
	suite_add_tests(s, "fork-server", 60, fork_server);
	/* Installs a seccomp filter in this process (in a child): valgrind
	 * cannot, so a valgrind run sets CK_EXCLUDE_TAGS=needs-seccomp. */
	tc = suite_add_tests(s, "inherited-filter", 60, inherited_filter);
	tcase_set_tags(tc, "needs-seccomp");
	return s;
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && strcmp(argv[1], MODEL_FORKSERVER_ARG) == 0) {
		n = (ssize_t)strlen(argv[0]);
		if (n >= 11 && strcmp(argv[0] + n - 11, "/taker-dies") == 0)
			return fake_server_taker_dies();
		return runner_serve(fake_served, NULL);
	}
	if (argc == 3 && strcmp(argv[1], "--backend") == 0 && strcmp(argv[2], "fixture-fds") == 0)
		return fake_runner_fds();
	if (argc != 1) {
		/* Never run the suite from a fixture invocation. */
		fprintf(stderr, "test_runner: unexpected arguments\n");
		return 2;
	}

	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	return suite_main(runner_suite(), CK_ENV);
}
