#ifndef OLIVARES_RUNNER_CGROUP_H
#define OLIVARES_RUNNER_CGROUP_H
/**
 * A run's cgroup: the whole-run bounds of the OS-level backends. Per
 * process rlimits bound each process; only a cgroup bounds all the
 * processes of a run together, so memory_mb and cpu_seconds are checked
 * against one:
 *   - memory: the cgroup's memory limit (v1 memory.limit_in_bytes, v2
 *     memory.max) stops the run's processes together at the bound; that
 *     the bound was reached is read from the cgroup's own counters (v2
 *     memory.events oom_kill, v1 memory.oom_control oom_kill), never
 *     guessed from how a process died;
 *   - CPU: the runner reads the cgroup's CPU time (v1 cpuacct.usage, v2
 *     cpu.stat usage_usec) while the run goes on and stops the run when
 *     it is over the budget (runner_cgroup_check()).
 *
 * The namespaces backend makes one per run (runner_cgroup_make(), removed
 * by runner_cgroup_remove()); the gvisor backend reads the one runsc made
 * for the sandbox (runner_cgroup_of()), which holds the sentry and the
 * gofer as well as what they run for the agent. Both cgroup versions: each
 * controller is taken from a v1 hierarchy that has it, else from the v2
 * hierarchy (a host with both, such as v1 controllers beside an empty
 * "unified" v2 mount, uses the v1 ones).
 *
 * Errors are struct runner_error (runner/error.h); a cgroup that cannot
 * be made or read is RUNNER_E_MISSING or RUNNER_E_SETUP, and the backend
 * fails closed on it: a run is never started without its bounds.
 */
#include <sys/types.h>

#include "runner/backend.h"
#include "runner/error.h"

/** The longest path of a cgroup directory the runner handles, with NUL. */
#define RUNNER_CGROUP_PATH_BYTES 512

/** One controller's directory: version 1 or 2, and its path under the
 * hierarchy's mount point. */
struct runner_cgroup_dir {
	int version;
	char path[RUNNER_CGROUP_PATH_BYTES];
};

/**
 * A run's cgroup. mem is where the memory controller is, cpu where the
 * CPU time is read (the same directory on v2). made is set when
 * runner_cgroup_make() created the directories (runner_cgroup_remove()
 * then removes them); self_mem and self_cpu are the runner's own cgroups
 * then, to return to after runner_cgroup_move_self().
 */
struct runner_cgroup {
	struct runner_cgroup_dir mem, cpu;
	struct runner_cgroup_dir self_mem, self_cpu;
	int made;
	/* the guard that removes a made cgroup if the runner dies first
	 * (runner_cgroup_make()), and the write end of its lifeline; -1
	 * when there is none */
	pid_t guard;
	int lifeline;
	/* what runner_cgroup_check() names in a reason: the run's memory_mb
	 * and cpu_seconds, and the MiB the cgroup holds beyond memory_mb (the
	 * gVisor sandbox's own base, 0 on namespaces) with who holds it */
	long memory_mb, cpu_seconds, base_mb;
	const char *base_of;
	long long next_check_ms; /* runner_cgroup_poll(): when to read again */
};

/**
 * Can this host give a run a cgroup? Finds a memory controller and CPU
 * accounting (v1 or v2) and, with trial set, makes and removes a
 * throw-away cgroup exactly as a run does. Returns 0, or -1 with *err
 * (kind RUNNER_E_MISSING: "no memory cgroup controller mounted", "cannot
 * create a cgroup under /sys/fs/cgroup/memory: EACCES ...").
 */
int runner_cgroup_preflight(int trial, struct runner_error *err);

/**
 * Make a fresh cgroup for one run (named olivares-run-<32 hex>, at the
 * root of each hierarchy, else under the runner's own cgroup when only
 * that one is delegated to it) with a memory limit of limits->memory_mb
 * MiB for everything in it together (swap included where the host
 * accounts it; on v2 memory.oom.group, so that the kernel ends the run's
 * processes together). Fills *cg for runner_cgroup_check(). A guard
 * process (a fork in a process group of its own, holding the read end of
 * a lifeline pipe whose write end only the runner has) removes the cgroup
 * if the runner dies before runner_cgroup_remove(): it kills what is left
 * in it and removes it, for up to RUNNER_CGROUP_GUARD_MS. Returns 0, or
 * -1 with *err (kind RUNNER_E_MISSING or RUNNER_E_SETUP); nothing is left
 * behind then.
 */
int runner_cgroup_make(const struct runner_limits *limits, struct runner_cgroup *cg,
                       struct runner_error *err);

/**
 * Fill *cg with the cgroup the process pid is in (its memory and CPU
 * accounting directories, from /proc/PID/cgroup), for
 * runner_cgroup_check() with limits and base_mb MiB beyond memory_mb held
 * by base_of ("the gVisor sandbox's sentry and gofer"); the directories
 * are someone else's (cg->made 0). Returns 0, or -1 with *err (kind
 * RUNNER_E_UNVERIFIED when pid's cgroup cannot be read or found).
 */
int runner_cgroup_of(pid_t pid, const struct runner_limits *limits, long base_mb,
                     const char *base_of, struct runner_cgroup *cg, struct runner_error *err);

/**
 * The cgroup's memory limit as the kernel holds it, in bytes, into
 * *bytes. Returns 0, or -1 with *err (RUNNER_E_UNVERIFIED).
 */
int runner_cgroup_memory_limit(const struct runner_cgroup *cg, long long *bytes,
                               struct runner_error *err);

/**
 * Move the calling process into cg (in 1) or back into the cgroups it
 * was in before (in 0). Between the two, whatever it forks or clones
 * starts inside cg, before it runs a single instruction outside it.
 * Returns 0, or -1 with *err (RUNNER_E_SETUP).
 */
int runner_cgroup_move_self(struct runner_cgroup *cg, int in, struct runner_error *err);

/**
 * Has the run gone past a whole-run bound? Reads the cgroup's counters:
 * an out-of-memory kill in it means memory_mb was reached ("memory_mb
 * limit (64 MiB for the whole run) reached: ..."), CPU time at or over
 * cpu_seconds means the budget is spent ("cpu_seconds limit (2 s of CPU
 * time for the whole run) reached: 2.04 s used"). Returns 0 when neither,
 * -1 with *why (kind RUNNER_E_AGENT) when one was; a counter that cannot
 * be read counts as reached (the run is stopped rather than left
 * unbounded), and says so.
 */
int runner_cgroup_check(struct runner_cgroup *cg, struct runner_error *why);

/**
 * runner_cgroup_check() at most every RUNNER_CGROUP_POLL_MS (ctx: the
 * struct runner_cgroup): the shape of runner_agent_io.check. With force
 * set it reads the counters now.
 */
int runner_cgroup_poll(void *ctx, int force, struct runner_error *why);

/**
 * Remove a cgroup runner_cgroup_make() made (nothing for one it did not),
 * once every process of it is gone, retrying until deadline_ms
 * (CLOCK_MONOTONIC) while the last of them leave it, and check it is gone;
 * then stop its guard (reaped when the cgroup is gone; when it is not, the
 * guard is left to go on removing it after the runner). Returns 0, or -1
 * with *err naming what is left (RUNNER_E_LEFT_BEHIND).
 */
int runner_cgroup_remove(struct runner_cgroup *cg, long long deadline_ms, struct runner_error *err);

#endif
