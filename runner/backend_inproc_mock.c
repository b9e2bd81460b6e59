/*
 * inproc-mock: the default backend, isolated by construction (a run on it
 * records isolated and destroyed true, which a test must be able to
 * check). Steps are resolved against the spec's mocks inside this
 * process; nothing real is ever reached. The guarantee is made checkable by
 * a seccomp filter loaded after the spec has been read and before the first
 * step: from then on the process can write to the descriptors it already
 * holds (stdout, stderr), manage its own memory and exit. Opening files,
 * sockets, forking, exec and ptrace fail with EPERM; any other system call
 * kills the process (SIGSYS).
 *
 * What this claims, and no more: the filter is a kernel
 * boundary on this one process, not a filesystem jail and not a VM. It is
 * why the runner may say isolated:true, and only once the kernel confirms
 * filter mode (prctl(PR_GET_SECCOMP) == 2) after seccomp_load() succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "model/mock.h"
#include "model/scenario.h"
#include "runner/backend.h"

#if defined(__SANITIZE_ADDRESS__)
/*
 * Sanitizer builds (configure --enable-sanitizers) only. LeakSanitizer
 * needs ptrace and /proc, which the filter refuses: it is off here, and
 * the runner's leaks are checked with valgrind instead. ASan and UBSan
 * error detection stays on; color=never keeps their reports from asking
 * isatty() (an ioctl the filter would answer with SIGSYS), so a sanitizer
 * report under the filter is printed and exits 1 as usual.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0:color=never";
}

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "color=never:print_stacktrace=1";
}
#endif

/* Allowed: what writing JSON lines to inherited descriptors, malloc/free,
 * and exiting need. Measured with strace -f on this runner: a run uses
 * only write, brk/mmap/munmap/mremap and exit_group after the filter; the
 * rest are descriptor- or memory-only calls that libc may make (fstat on
 * an fd, lseek, futex, getrandom, clock_gettime without the vDSO). The
 * signal and id calls are there so that abort() (model_xmalloc on
 * out-of-memory, a failed UBSan check) ends with SIGABRT rather than SIGSYS.
 * clock_nanosleep (and nanosleep, its older form) is how a mock's delay_ms
 * is waited: it only sleeps.
 * newfstatat is left out on purpose: it takes a path, and stdout gets its
 * buffer before the filter (runner/main.c) so stdio never needs it. */
static const int allowed_syscalls[] = {
    SCMP_SYS(write),
    SCMP_SYS(writev),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(brk),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(fstat),
    SCMP_SYS(lseek),
    SCMP_SYS(close),
    SCMP_SYS(futex),
    SCMP_SYS(getrandom),
    SCMP_SYS(clock_gettime),
    /* a mock's delay_ms: a wait on the clock, which reaches nothing */
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
};

/* Refused with EPERM: the calls that would reach a resource outside the
 * process. A clean error (rather than a kill) lets the probe report them. */
static const int refused_syscalls[] = {
    SCMP_SYS(open),       SCMP_SYS(openat),  SCMP_SYS(openat2),  SCMP_SYS(creat),  SCMP_SYS(socket),
    SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(fork),     SCMP_SYS(vfork),  SCMP_SYS(clone),
    SCMP_SYS(clone3),     SCMP_SYS(execve),  SCMP_SYS(execveat), SCMP_SYS(ptrace), SCMP_SYS(mount),
    SCMP_SYS(umount2),    SCMP_SYS(unshare), SCMP_SYS(setns),
};

/* Sanitizer builds only: UBSan's report reads /proc/self/exe with
 * readlink(), a path-based call; it gets EPERM like open() (measured with
 * strace: the report is still printed). And a runner forked by the fork
 * server (runner/serve.h) leaves through ASan's teardown of the thread
 * it was forked from, which reads and removes its alternate signal stack
 * (sigaltstack, measured with strace; a CHECK in ASan aborts on failure):
 * allowed, it touches only this thread's signal stack. */
#if defined(__SANITIZE_ADDRESS__)
static const int sanitizer_refused_syscalls[] = {
    SCMP_SYS(readlink),
};
static const int sanitizer_allowed_syscalls[] = {
    SCMP_SYS(sigaltstack),
};
#endif

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int add_rules(scmp_filter_ctx ctx, uint32_t action, const int *calls, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		/* A negative number is libseccomp's pseudo-number for a call this
		 * architecture does not have (open on aarch64): nothing to add. */
		if (calls[i] < 0)
			continue;
		if (seccomp_rule_add(ctx, action, calls[i], 0) != 0)
			return -1;
	}
	return 0;
}

/*
 * Load the filter and verify it is in place. Returns 0 only when
 * seccomp_load() succeeded and the kernel reports filter mode afterwards;
 * otherwise -1 with *err filled. Used identically by run() and probe().
 */
static int filter_install(struct runner_error *err)
{
	scmp_filter_ctx ctx = NULL;
	pid_t self = getpid();
	int rc = -1;
	int mode;

	/* jansson seeds its hash function from /dev/urandom on first use;
	 * do it now, while open() still works. */
	json_object_seed(0);
	/* Buffer stdout now so that no first-write allocation surprises us. */
	fflush(stdout);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "prctl(PR_SET_NO_NEW_PRIVS) failed: %s",
		                 strerror(errno));
		goto out;
	}
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx) {
		runner_error_set(err, RUNNER_E_SETUP, "seccomp_init failed");
		goto out;
	}
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot set the bad-architecture action");
		goto out;
	}
	if (add_rules(ctx, SCMP_ACT_ALLOW, allowed_syscalls, NELEM(allowed_syscalls)) ||
	    add_rules(ctx, SCMP_ACT_ERRNO(EPERM), refused_syscalls, NELEM(refused_syscalls))) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot build the syscall allowlist");
		goto out;
	}
#if defined(__SANITIZE_ADDRESS__)
	if (add_rules(ctx, SCMP_ACT_ERRNO(EPERM), sanitizer_refused_syscalls,
	              NELEM(sanitizer_refused_syscalls)) ||
	    add_rules(ctx, SCMP_ACT_ALLOW, sanitizer_allowed_syscalls,
	              NELEM(sanitizer_allowed_syscalls))) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot build the sanitizer rules");
		goto out;
	}
#endif
	/* prctl only to read the seccomp mode back; tgkill only at ourselves
	 * (abort() raises SIGABRT with it). */
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
	                     SCMP_A0(SCMP_CMP_EQ, PR_GET_SECCOMP)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
	                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot build the conditional rules");
		goto out;
	}
	rc = seccomp_load(ctx);
	if (rc != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "seccomp_load failed: %s", strerror(-rc));
		rc = -1;
		goto out;
	}
	mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (mode != SECCOMP_MODE_FILTER) {
		runner_error_set(err, RUNNER_E_SETUP,
		                 "kernel reports seccomp mode %d after loading", mode);
		rc = -1;
		goto out;
	}
	rc = 0;
out:
	if (ctx)
		seccomp_release(ctx);
	return rc;
}

static int inproc_preflight(struct runner_error *err)
{
	int api = seccomp_api_get();

	/* API level 3 brings SCMP_ACT_KILL_PROCESS (kernel >= 4.14). */
	if (api < 3)
		return runner_error_set(
		    err, RUNNER_E_MISSING,
		    "seccomp filter unavailable (libseccomp API level %d, need 3)", api);
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "seccomp unavailable in this kernel: %s", strerror(errno));
	return 0;
}

/* One compact JSON line, flushed, so the worker reads whole lines. */
static int write_line(FILE *out, json_t *line)
{
	if (json_dumpf(line, out, JSON_COMPACT) != 0)
		return -1;
	if (fputc('\n', out) == EOF)
		return -1;
	return fflush(out) == 0 ? 0 : -1;
}

/* Sleep until the CLOCK_MONOTONIC time until_ns (runner_now_ns()). */
static void sleep_until_ns(long long until_ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(until_ns / 1000000000LL);
	ts.tv_nsec = (long)(until_ns % 1000000000LL);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * The winning mock's delay_ms, waited inside the step, never past the
 * run's wall-clock deadline (deadline_ns, runner_now_ns() time): 0 when
 * the whole delay was waited, -1 when the deadline came first (waited up
 * to it).
 */
static int wait_delay(long delay_ms, long long deadline_ns)
{
	long long until_ns;

	if (delay_ms <= 0)
		return 0;
	until_ns = runner_now_ns() + (long long)delay_ms * 1000000LL;
	if (until_ns > deadline_ns) {
		sleep_until_ns(deadline_ns);
		return -1;
	}
	sleep_until_ns(until_ns);
	return 0;
}

/* Step i+1's outcome once known: its line written and counted. kind is
 * NULL (ok), "mock_miss" or "agent_error". Returns 0, or -1 when the line
 * could not be written. */
static int step_line(FILE *out, size_t i, json_t *key, json_t *input, json_t *output,
                     const char *kind, long long duration_us, json_t *trace,
                     struct runner_summary *sum)
{
	json_t *line;
	int rc;

	line =
	    json_pack("{s:s, s:I, s:O, s:O, s:O, s:s, s:o, s:I, s:O}", "type", "step", "seq",
	              (json_int_t)(i + 1), "key", key, "input", input, "output", output, "status",
	              kind ? "error" : "ok", "error_kind", kind ? json_string(kind) : json_null(),
	              "duration_us", (json_int_t)duration_us, "trace", trace);
	rc = line ? write_line(out, line) : -1;
	json_decref(line);
	if (rc != 0)
		return -1;
	sum->steps_total++;
	if (kind)
		sum->steps_error++;
	else
		sum->steps_ok++;
	return 0;
}

/* Returns 0 when the step's line was written, -1 when it could not be,
 * 1 when the wall-clock limit cut the step (its line written, the run
 * failed with the limit's reason in sum). */
static int run_step(const struct runner_spec *spec, size_t i, long long deadline_ns, FILE *out,
                    struct runner_summary *sum)
{
	json_t *step = json_array_get(spec->steps, i);
	json_t *key = json_object_get(step, "key");
	json_t *input = json_object_get(step, "input");
	const char *response = NULL;
	size_t response_len = 0;
	char *marker = NULL;
	size_t marker_len = 0;
	json_t *output = NULL;
	json_t *trace = NULL;
	long long start_ns, duration_us;
	size_t mock = 0;
	long delay_ms = 0;
	char cut[128];
	int hit;
	int rc = -1;

	/* The step's time: its input resolved against the mocks, the winning
	 * mock's delay, up to its output (no agent here: the runner answers
	 * itself). */
	start_ns = runner_now_ns();
	hit = model_mock_find(spec->mocks, spec->variant, json_string_value(input),
	                      json_string_length(input), &mock);
	if (hit)
		model_mock_lookup(spec->mocks, spec->variant, json_string_value(input),
		                  json_string_length(input), &response, &response_len, &delay_ms);
	if (hit && wait_delay(delay_ms, deadline_ns) != 0) {
		/* cut by the wall clock: the same line, reason and counters as
		 * on the OS-level backends, whose driver cuts the step the same
		 * way, so a scenario ends alike on every backend */
		duration_us = runner_step_us(start_ns);
		/* the one request of the step: its input, as a resource */
		trace = json_pack("[o]", model_trace_resource(
		                             spec->mocks, spec->variant, json_string_value(input),
		                             json_string_length(input), hit, mock, duration_us));
		snprintf(sum->reason, sizeof(sum->reason), "wall-clock limit of %ld ms exceeded",
		         spec->limits.wall_ms);
		snprintf(cut, sizeof(cut), "[[agent-error:wall-clock limit of %ld ms exceeded]]",
		         spec->limits.wall_ms);
		output = json_string(cut);
		if (!output || step_line(out, i, key, input, output, "agent_error", duration_us,
		                         trace, sum) != 0)
			goto out;
		sum->status = "failed";
		rc = 1;
		goto out;
	}
	if (hit) {
		output = json_stringn(response, response_len);
	} else {
		marker = model_mock_miss_marker(json_string_value(input), json_string_length(input),
		                                &marker_len);
		output = json_stringn(marker, marker_len);
	}
	if (!output)
		goto out;
	duration_us = runner_step_us(start_ns);
	trace = json_pack("[o]",
	                  model_trace_resource(spec->mocks, spec->variant, json_string_value(input),
	                                       json_string_length(input), hit, mock, duration_us));
	if (step_line(out, i, key, input, output, hit ? NULL : "mock_miss", duration_us, trace,
	              sum) != 0)
		goto out;
	rc = 0;
out:
	/* Each step's output is released as soon as its line is written. */
	json_decref(output);
	json_decref(trace);
	free(marker);
	return rc;
}

static int inproc_run(const struct runner_spec *spec, FILE *out, struct runner_summary *sum)
{
	struct runner_error err;
	const char *note;
	long long deadline_ns;
	size_t i;
	int r;

	sum->isolated = 0;
	if (spec->unconfined) {
		/* --no-seccomp (valgrind only): said in the reason, never isolated. */
		note = "run without the seccomp filter (--no-seccomp)";
	} else if (filter_install(&err) != 0) {
		/* Fail closed: no step runs without the filter. */
		sum->status = "failed";
		snprintf(sum->reason, sizeof(sum->reason), "seccomp filter not in place: %s",
		         err.message);
		return -1;
	} else {
		note = "";
		sum->isolated = 1;
	}
	/* the run's wall clock, which only a mock's delay can reach here */
	deadline_ns = runner_now_ns() + (long long)spec->limits.wall_ms * 1000000LL;
	for (i = 0; i < json_array_size(spec->steps); i++) {
		r = run_step(spec, i, deadline_ns, out, sum);
		if (r > 0)
			return -1;
		if (r != 0) {
			sum->status = "failed";
			snprintf(sum->reason, sizeof(sum->reason),
			         "cannot write the line of step %zu", i + 1);
			return -1;
		}
	}
	sum->status = "completed";
	snprintf(sum->reason, sizeof(sum->reason), "%s", note);
	return 0;
}

const char *const runner_probe_ops[] = {"open",   "socket",   "fork", "exec",
                                        "ptrace", "unlisted", NULL};

/* Try one operation under the filter. Returns the call's result (>= 0
 * means the kernel allowed it); errno is kept for the caller. */
static long probe_try(const char *op)
{
	static char *const argv[] = {"/bin/true", NULL};
	static char *const envp[] = {NULL};
	long r;

	if (strcmp(op, "open") == 0) {
		r = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (r >= 0)
			close((int)r);
		return r;
	}
	if (strcmp(op, "socket") == 0) {
		r = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (r >= 0)
			close((int)r);
		return r;
	}
	if (strcmp(op, "fork") == 0) {
		r = fork();
		if (r == 0)
			_exit(0);
		return r;
	}
	if (strcmp(op, "exec") == 0)
		return execve(argv[0], argv, envp);
	if (strcmp(op, "ptrace") == 0)
		return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	/* "unlisted": a harmless call outside both lists; the filter's
	 * default action kills the process with SIGSYS before it returns. */
	return syscall(SYS_getppid);
}

static int inproc_probe(const char *op, FILE *out)
{
	struct runner_error err;
	const char *const *p;
	json_t *line = NULL;
	long r;
	int saved;
	int rc = -1;

	for (p = runner_probe_ops; *p; p++)
		if (strcmp(*p, op) == 0)
			break;
	if (!*p) {
		fprintf(stderr, "olivares-runner: unknown probe: %s\n", op);
		return -1;
	}
	if (filter_install(&err) != 0) {
		fprintf(stderr, "olivares-runner: seccomp filter not in place: %s\n", err.message);
		return -1;
	}
	errno = 0;
	r = probe_try(op);
	saved = errno;
	line =
	    json_pack("{s:s, s:s, s:b, s:o}", "type", "probe", "op", op, "allowed", r >= 0, "errno",
	              r >= 0 ? json_null()
	                     : json_string(strerrorname_np(saved) ? strerrorname_np(saved) : "?"));
	if (line && write_line(out, line) == 0)
		rc = 0;
	json_decref(line);
	return rc;
}

const struct runner_backend runner_backend_inproc_mock = {
    .name = "inproc-mock",
    .preflight = inproc_preflight,
    .run = inproc_run,
    .probe = inproc_probe,
};
