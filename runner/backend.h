#ifndef OLIVARES_RUNNER_BACKEND_H
#define OLIVARES_RUNNER_BACKEND_H
/**
 * The one interface every olivares-runner backend implements (the wire is
 * model/runspec.h).
 *
 * runner/main.c owns the process: it closes inherited descriptors, clears
 * the environment, reads and validates the run spec, looks the backend up in
 * a static table (runner_backends[]), calls preflight() then run(), releases
 * the spec and writes the summary line. A backend only executes steps and
 * says whether its confinement was verified in place.
 *
 * Fail closed (a backend provisioned but unable to confine fails closed):
 * a backend whose preflight fails, or whose confinement cannot be verified
 * in run(), executes no step, reports isolated 0 and never hands the run to
 * another backend.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "model/runlog.h"
#include "runner/error.h"
#include "runner/limits.h"

/**
 * A validated run spec (model/runspec.h). All pointers are borrowed from
 * `root`, which runner/main.c owns and releases after run() returns:
 * the run's state lives in the call and is thrown away on return.
 *   steps:   array of {"key": string, "input": string}
 *   mocks:   array of {"resource": string, "response": string, "variant"?: string|null,
 *            "delay_ms"?: integer 0..MODEL_MAX_MOCK_DELAY_MS}
 *   variant: the run's variant, or NULL
 *   unconfined: 1 only under --no-seccomp, a test aid for valgrind (which
 *     cannot run a seccomp-filtered process): the backend then runs without
 *     its confinement and must report isolated 0. The worker never passes it.
 */
/* A spec's "limits", each within its MODEL_RUN_* bounds and defaulting to
 * its MODEL_RUN_*_DEFAULT (model/limits.h). */
struct runner_limits {
	long wall_ms;     /* whole run */
	long cpu_seconds; /* RLIMIT_CPU of each process, and the whole run's CPU budget */
	long memory_mb;   /* RLIMIT_AS of each process, and the whole run's memory bound */
	long processes;   /* RLIMIT_NPROC / pids limit */
	long open_files;  /* RLIMIT_NOFILE */
	long tmpfs_mb;    /* size of the jail's tmpfs root */
};

struct runner_spec {
	json_t *root;
	json_t *steps;
	json_t *mocks;
	const char *variant;
	int unconfined;
	/* OS-level backends (model/runspec.h): */
	const char *agent;           /* absolute path, or NULL for the built-in mock agent */
	const char *mock_agent;      /* absolute path of olivares-agent-mock beside the runner */
	const char *agent_exec;      /* absolute path of olivares-agent-exec beside the runner
	                         * (gvisor's first program in the container), or NULL */
	const char *sdk_dir;         /* absolute path of the directory holding olivares_agent.py
	                         * (the Python module for agents), bound read-only at
	                         * RUNNER_SDK_JAIL_DIR, or NULL when none was found */
	json_t *binds;               /* array of absolute host paths to bind read-only */
	int gateway;                 /* the run has a gateway (runner/gateway_run.h): the
	                         * spec asks for one, or a mock is an http or llm mock */
	const char *gateway_program; /* absolute path of olivares-gateway beside the
	                              * runner, or NULL when it was not found */
	json_t *egress_allow;        /* the hosts the gateway may forward to (array of
	                              * "host" or "host:port"), or NULL for none */
	const char *egress_secrets;  /* absolute path of the operator's file of headers
	                              * for those hosts (runner/gateway_secrets.h), or
	                              * NULL: the gateway reads it, the jail never sees it */
	int record;                  /* the run is recorded: its gateway keeps each
	                              * answer in the request's entry (model/record.h) */
	int has_repeat;              /* the run is repeat "repeat" (0-based) of a side of a
	                              * comparison: the agent gets OLIVARES_REPEAT */
	int repeat;
	struct runner_limits limits;
};

/**
 * What run() reports; runner/main.c turns it into the summary line.
 * status is "completed" or "failed"; reason is "" when none; shutdown is
 * "" when none (main.c writes it only on a completed run). isolated is 1
 * only when the backend verified its confinement in place before the first
 * step and kept it for the whole run. destroyed is set by main.c, not by a
 * backend (it is true only once the spec has been released and the
 * backend did not set left_behind).
 */
struct runner_summary {
	const char *status;
	int isolated;
	int destroyed;
	/* Set by a backend when something of its confinement may remain
	 * (a process not reaped, a mount or a directory not removed):
	 * main.c then reports destroyed false. 0 by default. */
	int left_behind;
	long steps_total, steps_ok, steps_error;
	char reason[RUNNER_REASON_BYTES];
	/* "" unless every step completed and the agent then did not exit
	 * by itself within its grace (RUNNER_AGENT_GRACE_MS) after the end
	 * of its input, or before the run's wall-clock limit when that came
	 * first, and had to be killed: the note says which (set by
	 * runner_agent_shutdown_note(), runner/agent.h). It never changes
	 * status or reason. */
	char shutdown[RUNNER_SHUTDOWN_BYTES];
	/* The run had a gateway (runner/gateway_run.h), and how many of its
	 * requests the gateway forwarded outside the sandbox (the summary's
	 * "egress_requests", written only with a gateway). */
	int gateway;
	long egress_requests;
	/* The gateway stopped on its own before the run ended (it crashed, or
	 * was killed): requests after that were refused unanswered. The
	 * summary's "gateway_lost": true (absent otherwise). */
	int gateway_lost;
};

/**
 * One backend. Every hook is required except probe.
 *
 * preflight: can this host provide the backend's confinement? Returns 0, or
 *   -1 with *err naming the missing primitive (kind RUNNER_E_MISSING, or
 *   RUNNER_E_INTERNAL when the check itself could not be made). Called
 *   before the spec is read.
 * run: confine the process, then execute spec's steps in order, writing one
 *   JSON line per step to out (model/runspec.h) and flushing it; fills *sum.
 *   Returns 0 when the run completed, -1 when it failed (sum->status
 *   "failed", sum->reason set). Never writes the summary line.
 * probe: self-test of the confinement (--probe OP): install it exactly as
 *   run() does, try OP, write one {"type":"probe",...} line to out. Returns
 *   0 when the line was written, -1 otherwise (message on stderr). May be
 *   NULL for a backend without a probe.
 */
struct runner_backend {
	const char *name;
	int (*preflight)(struct runner_error *err);
	int (*run)(const struct runner_spec *spec, FILE *out, struct runner_summary *sum);
	int (*probe)(const char *op, FILE *out);
	/* Optional (may be NULL): a deeper preflight for --preflight NAME
	 * (the `backends` listing), e.g. one that tries the primitives in a
	 * throw-away child; preflight itself stays cheap because it runs
	 * before every run, whose own setup fails closed anyway. Same
	 * contract as preflight. */
	int (*preflight_full)(struct runner_error *err);
};

/** The inproc-mock backend (runner/backend_inproc_mock.c): mock resolution
 * inside the runner process, confined by a seccomp filter loaded after the
 * spec is read and before the first step. */
extern const struct runner_backend runner_backend_inproc_mock;

/** Linux namespaces + pivot_root jail (runner/backend_namespaces.c). */
extern const struct runner_backend runner_backend_namespaces;
/** gVisor through runsc run on a throw-away OCI bundle (runner/backend_gvisor.c). */
extern const struct runner_backend runner_backend_gvisor;
/** The gVisor platforms --gvisor-platform accepts ([runner]
 * gvisor_platform of olivares-fcgi), NULL-terminated: "ptrace" (the
 * default), "kvm", "systrap". Whether the installed runsc and this host can
 * run one is found out by the run, which fails closed if not. */
extern const char *const runner_gvisor_platforms[];
/** Make name the platform of every runsc command of this process's gvisor
 * runs and preflights (olivares-runner --gvisor-platform NAME). Returns 0,
 * or -1 when name is not one of runner_gvisor_platforms (nothing changed). */
int runner_gvisor_platform_set(const char *name);
/** Firecracker microVM: preflight only on hosts without it; never faked
 * (runner/backend_firecracker.c). */
extern const struct runner_backend runner_backend_firecracker;

/** The operations --probe accepts, NULL-terminated (for --help). */
extern const char *const runner_probe_ops[];

/**
 * Extended agent driver (runner/agent.c), for backends that know more about
 * the agent than its two pipes. runner_agent_drive() is this with io NULL.
 *
 * err_fd: -1, or the read end of the agent's log, its stdout and stderr
 *   on one pipe (owned by the caller, left open). The driver drains it
 *   while it waits, so an agent cannot stall on a full pipe: the log is
 *   kept in log (model/runlog.h: cleaned, capped) and written out as log
 *   lines (model/runspec.h) as it comes; what came since the agent's last
 *   protocol line (its first RUNNER_AGENT_ERR_KEEP bytes) is in
 *   err[0..err_len), and its first line goes into an agent-error reason.
 * exit_reason: NULL, or called once when the agent's protocol output
 *   (from_agent) ends mid-step
 *   (EOF, or a read error) to say how the agent ended, e.g. "agent killed
 *   by SIGKILL" or "agent exited with status 3". It may wait, but not past
 *   deadline_ms (CLOCK_MONOTONIC, ms). Returns 0 with how->message
 *   filled (kind RUNNER_E_AGENT), or -1 when it does not know (the driver
 *   then says "agent closed its output mid-step"; *how unspecified).
 * end_input: NULL, or called once after the last step's output to close
 *   the agent's protocol input (its cue to exit): the driver then reads its
 *   protocol output to its end, for at most RUNNER_AGENT_GRACE_MS, and a line the
 *   agent writes meanwhile fails the run (it answers no step). Whoever
 *   owns to_agent must not close it again.
 * grace_until: set by the driver when it calls end_input (CLOCK_MONOTONIC
 *   ms): the end of the agent's grace period to exit, which the caller
 *   keeps when it waits for the exit (one grace, not two); 0 otherwise.
 * check: NULL, or the run's whole-run bounds (runner_cgroup_poll(),
 *   runner/cgroup.h; ctx check_ctx): called while the driver waits (at
 *   least every RUNNER_CGROUP_POLL_MS; it may skip a read when the last
 *   one was more recent, unless force is set), with force set when the
 *   agent's output ends mid-step (a bound may be what ended it) and once
 *   more after the last step. It returns 0, or -1 with why.message
 *   naming the bound reached: the run then fails with that reason (the
 *   step that was going on gets its agent-error line) and is torn down.
 */
struct runner_agent_io {
	int err_fd;
	int (*exit_reason)(void *ctx, long long deadline_ms, struct runner_error *how);
	void (*end_input)(void *ctx);
	int (*check)(void *check_ctx, int force, struct runner_error *why);
	void *check_ctx;
	long long grace_until;
	void *ctx;
	char err[RUNNER_AGENT_ERR_KEEP];
	size_t err_len;
	/* The log (set up by the driver, released by runner_agent_teardown):
	 * log_out is where its lines go, log_sent and log_dropped_sent what
	 * they said so far. */
	struct model_runlog log;
	FILE *log_out;
	size_t log_sent;
	long long log_dropped_sent;
	long long log_emitted_ms; /* CLOCK_MONOTONIC ms of the last log line */
	int log_on;
	/* The run's gateway (runner/gateway_run.h), or NULL: its requests
	 * join the step's trace as they come. */
	struct runner_gateway_run *gateway;
};

/** runner_agent_drive() (runner/agent.h) with the extras of struct
 * runner_agent_io; io may be NULL. Same return and same lines. */
int runner_agent_drive_ex(const struct runner_spec *spec, int to_agent, int from_agent,
                          long long deadline_ms, FILE *out, struct runner_summary *sum,
                          struct runner_agent_io *io);

/** CLOCK_MONOTONIC now, in milliseconds (the clock of every deadline). */
long long runner_now_ms(void);

/** CLOCK_MONOTONIC now, in nanoseconds: the start of a step's duration
 * (runner_step_us). */
long long runner_now_ns(void);

/** A step line's "duration_us" (model/runspec.h): the wall time from
 * start_ns (a runner_now_ns() value) to now on CLOCK_MONOTONIC, in
 * microseconds rounded up, so a step that took any time is at least 1; 0
 * only if the clock did not move. Never negative. */
long long runner_step_us(long long start_ns);

#endif
