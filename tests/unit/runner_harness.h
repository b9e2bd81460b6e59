#ifndef OLIVARES_TESTS_RUNNER_HARNESS_H
#define OLIVARES_TESTS_RUNNER_HARNESS_H
/**
 * What the runner's suites share (tests/unit/test_runner.c,
 * test_namespaces.c, test_gvisor.c, test_firecracker.c): starting the
 * built runner with a spec on its stdin, reading its lines (one JSON
 * object each, model/runspec.h), building specs, reading a summary, and
 * running a Check suite. Every helper asserts (ck_assert) what it needs:
 * call them from a test.
 *
 * Makefile.am's AM_TESTS_ENVIRONMENT sets the OLIVARES_* paths they read;
 * export them when running a suite by hand.
 */
#include <check.h>
#include <jansson.h>
#include <sys/types.h>

/** The path an environment variable names (OLIVARES_RUNNER, ...), which
 * must be set and executable. */
const char *env_path(const char *name);

/** CLOCK_MONOTONIC now, in ms. */
long long now_ms(void);

/** Sleep ms milliseconds. */
void sleep_ms(long ms);

/** What a runner said and how it ended. */
struct result {
	json_t *steps;      /* its step lines, in order (owned) */
	json_t *summary;    /* its one other line (summary, preflight), or NULL (owned) */
	int status;         /* its wait status */
	long long ms;       /* its wall time, start to exit */
	long long first_ms; /* when its first line came (if the caller timed it), else -1 */
	char *log;          /* its log lines' data joined, NUL-terminated (owned; "" if none) */
	size_t log_len;
	long long log_dropped; /* the last log line's "dropped" (0 if none) */
	int log_lines;         /* how many log lines came */
};

/** Release what r holds. */
void result_free(struct result *r);

/**
 * Start args[0] (argv args, NULL-terminated) with env as its whole
 * environment, stdin a pipe that gets spec (compact JSON; "" for NULL)
 * then end of file, and stdout a pipe whose read end goes to *out.
 * setup(ctx), if not NULL, runs in the child just before the exec, its
 * stdin and stdout in place: a non-zero return makes the child exit 126. A runner that refuses the
 * run before it reads its spec may close its stdin first: that is no error. Returns the child's
 * pid.
 */
pid_t spawn_runner_with(const char *const *args, json_t *spec, char *const *env,
                        int (*setup)(void *ctx), void *ctx, int *out);

/** Read fd to its end (then close it), reap pid and parse what it wrote:
 * every line must be JSON; "step" lines go to steps, "log" lines to log
 * (each {type, data, dropped}, dropped never going down), the one other
 * line to summary (a second one, or a step or log line after it, fails
 * the test). ms is
 * measured from t0 (now_ms()). */
struct result collect(pid_t pid, int fd, long long t0);

/** collect() of what pid wrote, already read into text[0..len). */
struct result collect_text(pid_t pid, const char *text, size_t len, long long t0);

/** A spec {"variant", "steps": [], "mocks": []}, with "agent" when agent is
 * not NULL (new reference). */
json_t *spec_new(const char *variant, const char *agent);
/** Append the step {key, input} to spec. */
void spec_step(json_t *spec, const char *key, const char *input);
/** Append the mock {resource, response[, variant]} to spec. */
void spec_mock(json_t *spec, const char *resource, const char *response, const char *variant);
/** Append the mock {resource, response, delay_ms} to spec. */
void spec_mock_delayed(json_t *spec, const char *resource, const char *response, long delay_ms);
/** Set spec's limits.key to value. */
void spec_limit(json_t *spec, const char *key, long value);

/** The walkthrough's spec (README, scripts/demo): variant "candidate",
 * steps step-1 and step-2, a mock for the first only (new reference). */
json_t *walk_spec(void);

/** r's step lines without their "duration_us", after checking each has
 * one: an integer of at least 1 us and at most the runner's whole wall time
 * (r->ms). A new reference. */
json_t *steps_timed(const struct result *r);

/** b, the walkthrough's run (walk_spec) on an OS-level backend, gave the
 * same step lines as a, its run on inproc-mock, but for each step's own
 * time (two steps: the first mocked, the second a mock miss), and the same
 * summary (status, counters, isolated, destroyed, reason, shutdown). */
void assert_same_as_inproc(const struct result *a, const struct result *b);

/** A spec for the built-in mock agent (agent NULL): step "slow" whose
 * resource's mock waits delay_ms before it answers "slow answer", then step
 * "quick" whose mock answers "quick answer" at once (new reference). */
json_t *delay_spec(long delay_ms);

/** r, the run of delay_spec(delay_ms), completed with both steps ok and
 * their answers, the slow step lasting at least delay_ms (a lower bound
 * only: the machine may be loaded) and at most the runner's wall time. */
void assert_delayed_run(const struct result *r, long delay_ms);

/** spec with a "slow" step whose hostile agent waits 300 ms ("sleep 300")
 * and a "quick" one ("sleep 0") added. */
void spec_slow_and_quick(json_t *spec);

/** r, the run of a spec_slow_and_quick() spec, completed with its two
 * steps, the slow one timed at 300 ms or more (and at most the runner's
 * wall time), the quick one under 300 ms: a step's duration_us is the
 * agent's time. */
void assert_slow_and_quick(const struct result *r);

/** A spec for the tool-bot agent (agent, OLIVARES_TOOL_BOT): step "w"
 * ("weather"), whose tool call {"q":"weather"} hits a sequence mock and whose
 * resource hits; step "crlf" ("GET /a\r\n"), whose tool call hits the
 * subset error mock and whose resource misses "GET /a\n" by its CR; step
 * "w2" ("weather") again, the sequence's second item (new reference). */
json_t *tool_spec(const char *agent);

/** r, the run of tool_spec(): completed 3/2/1, each step's output and its
 * trace (a tool call then a resource, in order, hit and mock index), the
 * CRLF step's near miss naming mocks[1] and byte 6. */
void assert_tool_run(const struct result *r);

/** Bytes read from a runner, grown as they come (data NULL until then). */
struct text {
	char *data;
	size_t len, cap;
};
/** Append the n bytes at p to t. */
void text_add(struct text *t, const char *p, size_t n);

/** A member of r's summary: a string (or NULL), an integer, a boolean. */
const char *sum_str(const struct result *r, const char *key);
long long sum_int(const struct result *r, const char *key);
int sum_bool(const struct result *r, const char *key);
/** A string member of step line i (0-based), which must exist. */
const char *step_str(const struct result *r, size_t i, const char *key);

/**
 * The agent's log on an OS-level backend (run: the suite's run_backend),
 * with the logging agent (OLIVARES_LOGGER_AGENT, tests/fixtures/agents/
 * logger.sh): its prints between its protocol lines are the log, in order,
 * and the run's outputs are right; a log over its 1 MiB keeps exactly 1
 * MiB and counts the rest; a terminal escape and a byte that is not UTF-8
 * come out as U+FFFD; an agent that dies with a traceback fails its step
 * with a one-line reason and the log holds the whole traceback.
 */
void assert_agent_log(struct result (*run)(const char *backend, json_t *spec), const char *backend);

/**
 * A Python agent written on olivares_agent (OLIVARES_SDK_AGENT,
 * tests/fixtures/agents/sdk_agent.py), which the runner makes importable
 * inside the jail, on an OS-level backend (run: the suite's run_backend):
 * it prints to stdout and stderr, starts threads, asks for a resource and
 * calls a tool mock each step, and raises on its last. Step 1's outputs
 * and trace (the resource, then the tool, both hit, with their mocks'
 * indexes), step 2's CRLF near miss (the nearest mock, byte 11, CR against
 * LF), step 3 the agent error with the exception's type and message as the
 * run's one-line reason, and the log with the prints and the whole
 * traceback.
 */
void assert_sdk_agent_run(struct result (*run)(const char *backend, json_t *spec),
                          const char *backend);

/** The seconds a whole-run cpu_seconds reason (runner/cgroup.h) says were
 * used ("cpu_seconds limit (...) reached: 2.07 s used"), or -1 when
 * reason is not one. */
double reason_cpu_used(const char *reason);

/** Ask $OLIVARES_RUNNER --preflight BACKEND: 1 when its first line says ok,
 * else 0 with its reason (or why there was none) in why[n]. */
int runner_preflight_ok(const char *backend, char *why, size_t n);

/** Add to s a test case name with a timeout of timeout s and the tests of
 * the NULL-terminated list tests, in order; returns it (owned by s). */
TCase *suite_add_tests(Suite *s, const char *name, double timeout, const TTest *const *tests);

/** Run every test of s (then free it), printing as mode says; the exit
 * status of a suite's main(): EXIT_SUCCESS when none failed. */
int suite_main(Suite *s, enum print_output mode);

/**
 * A script agent whose interpreter is a copy of binary outside every
 * default bind: dir (under /var/tmp, 0755), interp (the copy, 0755),
 * script (dir/profile, "#!<interp>\n", 0755). interp_fixture_script
 * rewrites the script's first line; interp_fixture_clean removes all.
 * The case fails when a file cannot be made.
 */
struct interp_fixture {
	char dir[64], interp[96], script[96];
};
void interp_fixture_make(struct interp_fixture *f, const char *binary);
void interp_fixture_script(struct interp_fixture *f, const char *line);
void interp_fixture_clean(struct interp_fixture *f);

/**
 * The interpreter check of an OS-level backend (runner/interp.h), through
 * run (the suite's own runner starter) on backend, binary being an agent
 * that answers the "socketpair seqpacket" probe: an interpreter outside
 * the binds fails with the reason naming it and [runner] binds, no step
 * run, not isolated; bound, the same script completes isolated; env with a
 * program the jail's PATH lacks fails naming both.
 */
void assert_interp_cases(struct result (*run)(const char *, json_t *), const char *backend,
                         const char *binary);

/**
 * A run with a gateway on backend: the Python agent of
 * tests/fixtures/agents/http_agent.py (OLIVARES_HTTP_AGENT) reaches an
 * HTTP tool and an HTTPS chat endpoint through the proxy variables, with
 * the standard library only, and is answered from HTTP and llm mocks
 * (plain, streaming, a model loop scripted by a sequence); a miss is the
 * 404 with its marker and a mock miss; every request is in its step's
 * trace; the run's directory (TMPDIR of the runner, a fresh one) is
 * empty afterwards.
 */
void assert_gateway_run(const char *backend);

/**
 * A run with a gateway stays contained on backend: the hostile agent
 * (OLIVARES_HOSTILE_AGENT) cannot reach a listener on the host's
 * loopback (ECONNREFUSED: the jail's loopback is its own, and nothing
 * reached the listener), and reaches its gateway on 127.0.0.1:3128.
 */
void assert_gateway_contained(const char *backend);

/**
 * Two runs at once, each with a gateway: each run's 127.0.0.1:3128
 * answers from that run's mocks only.
 */
void assert_gateway_own_run(const char *backend);

/**
 * Controlled egress on backend: with the spec's egress_allow naming a
 * listener on the host's loopback, a request no mock answers reaches it
 * (from the gateway, outside the jail), its exchange is in the trace
 * ("egress") and the summary counts it (egress_requests 1); a request to
 * a host not allowed is the 404 miss, traced as refused.
 */
void assert_gateway_egress(const char *backend);

/**
 * Secrets for upstream hosts on backend: with the spec's egress_secrets
 * naming a 0600 file outside the jail that gives the loopback upstream an
 * Authorization header, the upstream gets that header with its value in
 * place of the agent's own; the trace entry names it in "injected" and
 * keeps the agent's (masked); the agent finds the value neither in its
 * environment nor in the file, which it cannot open; the runner's whole
 * output holds no value. The same file with mode 0644 fails the run, its
 * reason saying why, and no step runs.
 */
void assert_gateway_egress_secrets(const char *backend);

/**
 * A recorded run on backend ("record": true): each answer its gateway gave
 * (a mock's, an allowed host's on the loopback) is kept in its trace entry
 * as the HTTP mock that answers it so, a miss keeps none, and a run of the
 * same steps against those mocks, with no egress, gives the same outputs.
 */
void assert_gateway_record(const char *backend);

/** A test case (Check's START_TEST) whose whole body is one assertion of
 * this harness on one backend: a backend's program lists the assertions
 * it shares with the others in one line each. */
#define HARNESS_CASE(name, assertion, backend)                                                     \
	START_TEST(name)                                                                           \
	{                                                                                          \
		assertion(backend);                                                                \
	}                                                                                          \
	END_TEST

#endif
