#ifndef OLIVARES_RUNNER_JAIL_H
#define OLIVARES_RUNNER_JAIL_H
/**
 * The namespace jail of the namespaces backend (issue 3 §3; seed 004: a
 * mount namespace without pivot_root is no filesystem jail, so this one
 * pivots into a fresh tmpfs).
 *
 * Layout seen by the agent: / is a tmpfs (read-only once built) holding
 * read-only, nosuid, nodev binds of spec->binds (default /usr), the agent
 * program at /agent, /bin /lib /lib64 /sbin as symlinks into usr/, a proc
 * of the jail's own pid namespace at /proc, and a writable tmpfs at /tmp
 * (both tmpfs sized limits.tmpfs_mb). New user, pid, mount, net, ipc, uts
 * and cgroup namespaces; the jail's root is an unprivileged host uid
 * (RUNNER_JAIL_HOST_UID when the runner is root, the runner's own uid
 * otherwise); hostname "sandbox"; no network interface up.
 *
 * Processes: the jail's pid 1 is a copy of the runner that forks the agent,
 * builds the jail, lets the agent exec, reaps every process and reports the
 * agent's end, then exits (the kernel then kills whatever is left in the pid
 * namespace). The agent (pid 2) makes the jail's network namespace while
 * pid 1 builds the filesystem, and pid 1 joins it. Before its exec the agent
 * gives itself rlimits (CPU, AS, NOFILE, NPROC, CORE 0), an empty
 * capability set, no_new_privs, a seccomp filter (compiled when the runner
 * is built: runner/agent-filter-gen.c lists the refused calls), descriptors
 * 0-2 only, and the environment PATH, HOME, LANG only.
 *
 * Limit defaults are the RUNNER_DEFAULT_* of runner/backend.h.
 */
#include <stddef.h>
#include <sys/types.h>

#include "runner/backend.h"

/** Host uid and gid of the jail's root when the runner runs as root. */
#define RUNNER_JAIL_HOST_UID 200000
#define RUNNER_JAIL_HOST_GID 200000
/** Hostname inside the jail. */
#define RUNNER_JAIL_HOSTNAME "sandbox"

/**
 * A running jail, owned by the runner. Every descriptor is the runner's end
 * of a pipe, -1 once closed. pid is the jail's pid 1 as the runner sees it,
 * -1 once reaped.
 */
struct runner_jail {
	pid_t pid;
	int to_agent;     /* agent's stdin (write end) */
	int from_agent;   /* agent's stdout (read end) */
	int err_agent;    /* agent's stderr (read end) */
	int report;       /* pid 1's reports (read end) */
	int agent_status; /* the agent's wait status once reported, else -1 */
};

/**
 * Can this host build the jail? Checks that the kernel has every namespace
 * kind, that user namespaces are enabled and that seccomp filter mode is
 * available; with trial set it also tries the primitives in a forked
 * child (unshare user+mount namespaces, a tmpfs, pivot_root into it,
 * detach the old root). Returns 0, or -1 with why naming the missing
 * primitive ("pivot_root unavailable in a user namespace").
 */
int runner_jail_preflight(int trial, char *why, size_t n);

/**
 * Build the jail for spec and start agent_path (absolute path of a host
 * file, bound read-only at /agent) in it. Returns 0 once pid 1 reported the
 * jail complete and the agent exec'd, and the runner verified from outside
 * that the agent runs in namespaces of its own, with pid 1's root, seccomp
 * filter mode, no_new_privs, no capabilities and the jail's host uid; -1
 * otherwise, with why naming the step that failed
 * ("pivot_root failed: EPERM"); the jail is then already destroyed (j->pid
 * is -1) unless runner_jail_destroy() is still needed (j->pid > 0).
 */
int runner_jail_start(const struct runner_spec *spec, const char *agent_path, struct runner_jail *j,
                      char *why, size_t n);

/**
 * The agent's end as text ("agent killed by SIGKILL", "agent exited with
 * status 3"), waiting for pid 1's report until deadline_ms (CLOCK_MONOTONIC).
 * ctx is a struct runner_jail. Returns 0 with why filled, -1 if unknown.
 * Shape of runner_agent_io.exit_reason (runner/backend.h).
 */
int runner_jail_agent_reason(void *ctx, long long deadline_ms, char *why, size_t n);

/**
 * Tear the jail down: close the agent's stdin, give the agent until
 * grace_deadline_ms to exit, SIGKILL pid 1 (which kills the whole pid
 * namespace), reap it, close every descriptor. Returns 0 when pid 1 was
 * reaped (every process of the jail is gone, and with them the mount
 * namespace and its tmpfs), -1 otherwise.
 */
int runner_jail_destroy(struct runner_jail *j, long long grace_deadline_ms);

#endif
