#ifndef OLIVARES_RUNNER_JAIL_H
#define OLIVARES_RUNNER_JAIL_H
/**
 * The namespace jail of the namespaces backend. A mount namespace without
 * pivot_root is no filesystem jail (the host's tree stays in reach through
 * the old root), so this one pivots into a fresh tmpfs.
 *
 * Layout seen by the agent: / is a tmpfs (read-only once built) holding
 * read-only, nosuid, nodev binds of spec->binds (default /usr), the agent
 * program at /agent, /bin /lib /lib64 /sbin as symlinks into usr/, a proc
 * of the jail's own pid namespace at /proc, a writable tmpfs at /tmp (both
 * tmpfs sized limits.tmpfs_mb), and a /dev holding only the host's
 * /dev/null, zero, full, random and urandom, each bound read-only, nosuid
 * and noexec but not nodev (the only mounts of the jail a device opens
 * through; the runner checks them from outside, as it checks every mount). New user, pid, mount,
 * net, ipc, uts and cgroup namespaces; the jail's root is an unprivileged host uid
 * (RUNNER_JAIL_HOST_UID when the runner is root, the runner's own uid
 * otherwise); hostname "sandbox"; no network interface up, except the
 * jail's own loopback for a run with a gateway, where the one listening
 * socket is the gateway's (served by the runner, outside).
 *
 * Processes: the agent is pid 1 of the jail's pid namespace, as under
 * gvisor. Before its exec it is a copy of the runner that forks a builder
 * (pid 2) to build and pivot into the filesystem, makes the jail's network
 * namespace meanwhile, gives itself rlimits (CPU, AS, NOFILE, NPROC, CORE
 * 0), an empty capability set, no_new_privs and a seccomp filter (compiled
 * when the runner is built: runner/agent-filter-gen.c lists the refused
 * calls), waits for the builder's success, keeps descriptors 0-4 only
 * (stdin /dev/null, stdout and stderr the log, 3 and 4 the protocol:
 * runner/agent.h) and execs with the environment PATH, HOME, LANG and the
 * two entries naming the protocol's descriptors only. When it exits the
 * kernel kills whatever is left in the pid namespace. As a namespace's
 * init it ignores signals it has no handler for, SIGXCPU included: the CPU
 * limit ends it with SIGKILL (soft and hard limit are the same). If the
 * runner dies, the jail dies too: pid 1's parent-death signal until the
 * agent runs (an agent can shed it: it is per thread, and a thread that
 * execs takes over with none), and from then on a guard outside the jail,
 * a child of the runner in a process group of its own that kills pid 1
 * when the runner's end of a pipe closes.
 *
 * Limit defaults are the MODEL_RUN_*_DEFAULT of model/limits.h.
 */
#include <stddef.h>
#include <sys/types.h>

#include "runner/backend.h"
#include "runner/cgroup.h"

/** Host uid and gid of the jail's root when the runner runs as root. */
#define RUNNER_JAIL_HOST_UID 200000
#define RUNNER_JAIL_HOST_GID 200000
/** Hostname inside the jail. */
#define RUNNER_JAIL_HOSTNAME "sandbox"

/**
 * A running jail, owned by the runner. Every descriptor is the runner's end
 * of a pipe, or a pidfd, -1 once closed. pid is the jail's pid 1, the
 * agent, as the runner sees it, -1 once reaped (and with it the whole
 * jail).
 */
struct runner_jail {
	pid_t pid;
	int to_agent;           /* agent's protocol input, its fd 3 (write end) */
	int from_agent;         /* agent's protocol output, its fd 4 (read end) */
	int err_agent;          /* agent's log, its stdout and stderr (read end) */
	int pidfd;              /* pidfd of pid 1: readable once it exited */
	int agent_status;       /* the agent's wait status once reaped, else -1 */
	long long agent_cpu_ms; /* its own CPU time then, -1 if unknown */
	long cpu_seconds;       /* its CPU limit, to name it in a reason */
	pid_t guard;            /* the guard (runner/jail.c), -1 once reaped */
	int lifeline;           /* the guard's lifeline (write end) */
	int lost;               /* pid 1 could not be reaped */
	int gateway_fd;         /* the listening socket of the jail's gateway, made by
	                         * pid 1 in the jail's network (127.0.0.1:
	                         * RUNNER_GATEWAY_PORT there), or -1: the caller
	                         * takes it (and closes it) */
	int killed;             /* runner_jail_destroy() found pid 1 still
	                              * running and killed it (it did not exit
	                              * by the deadline it was given) */
};

/**
 * Can this host build the jail? Checks that the kernel has every namespace
 * kind, that user namespaces are enabled and that seccomp filter mode is
 * available; with trial set it also checks the host's devices the jail's
 * /dev binds (/dev/null, zero, full, random, urandom must be the character
 * devices 1:3, 1:5, 1:7, 1:8, 1:9, on a mount without nodev, as
 * runner_jail_start() requires) and tries the primitives in a forked child
 * (unshare user+mount namespaces, a tmpfs, pivot_root into it, detach the
 * old root). Returns 0, or -1 with *err naming the missing primitive
 * (kind RUNNER_E_MISSING: "pivot_root unavailable in a user namespace",
 * "the host's /dev/null is not the character device 1:3", "the host's
 * /dev/null is on a nodev mount (a device does not open through it)"; or
 * RUNNER_E_INTERNAL when the trial child could not be forked or waited
 * for).
 */
int runner_jail_preflight(int trial, struct runner_error *err);

/**
 * Read ahead, in a fork server before it forks its runners, what every
 * jail start reads the same in this process and its forks: the runner's
 * own namespace ids (jail_verify_agent() compares the agent's with them) and
 * libseccomp's API level (runner_jail_preflight()). Each forked runner
 * then starts with them read instead of reading them again (about 0.1 ms
 * of a run). What cannot be read is read again, and reported, by the run
 * that needs it. No errors, no descriptor left open.
 */
void runner_jail_warm(void);

/**
 * Build the jail for spec and start agent_path (absolute path of a host
 * file, bound read-only at /agent) in it. With spec->gateway, gateway_dir
 * (a host directory, the run's own) is bound read-only at
 * RUNNER_GATEWAY_JAIL_DIR, the jail's loopback is up and pid 1 listens on
 * 127.0.0.1:RUNNER_GATEWAY_PORT there before it confines itself: the
 * socket comes back in j->gateway_fd (runner/gateway_env.h), and the
 * agent's environment gets RUNNER_GATEWAY_ENV. Inside the run's cgroup cg
 * (runner/cgroup.h; NULL: none) when not NULL: the runner moves itself
 * into cg for the clone and back right after, so every process of the
 * jail starts in it. Returns 0 once the builder
 * reported the jail complete and the agent exec'd, and the runner verified
 * from outside that the agent runs in namespaces of its own, in the root
 * the builder pivoted into, with seccomp filter mode, no_new_privs, no
 * capabilities and the jail's host uid; -1 otherwise, with *err naming
 * the step that failed ("pivot_root failed: EPERM"; kind RUNNER_E_SETUP,
 * RUNNER_E_MISSING for a primitive the host lacks, RUNNER_E_TIMEOUT for a
 * setup past its time, RUNNER_E_UNVERIFIED for a check from outside,
 * RUNNER_E_AGENT or RUNNER_E_GONE for an agent that ended meanwhile); the
 * jail is then already destroyed (j->pid is -1) unless
 * runner_jail_destroy() is still needed (j->pid > 0).
 */
int runner_jail_start(const struct runner_spec *spec, const char *agent_path,
                      const char *gateway_dir, struct runner_cgroup *cg, struct runner_jail *j,
                      struct runner_error *err);

/**
 * The agent's end as text ("agent exited with status 3", "agent killed by
 * SIGSEGV", "agent killed by SIGKILL at its CPU time limit of 2 s
 * (cpu_seconds, per process)"),
 * waiting until deadline_ms (CLOCK_MONOTONIC) for it to exit; reaps it
 * (j->pid is -1 after: the jail is gone). ctx is a struct runner_jail.
 * Returns 0 with *how filled (kind RUNNER_E_AGENT), -1 if it has not
 * exited by then. Shape of runner_agent_io.exit_reason (runner/backend.h).
 */
int runner_jail_agent_reason(void *ctx, long long deadline_ms, struct runner_error *how);

/**
 * Close the agent's protocol input (ctx: the struct runner_jail), its cue
 * to exit:
 * runner_agent_io.end_input. The jail's to_agent is -1 afterwards, so
 * runner_jail_destroy() does not close it again.
 */
void runner_jail_end_input(void *ctx);

/**
 * Tear the jail down: close the agent's protocol input, give the agent until
 * grace_deadline_ms to exit, SIGKILL it if it has not (it is pid 1: that
 * kills the whole pid namespace), reap it, close every descriptor. Sets
 * j->killed when pid 1 was still running then (an agent that exited by
 * itself, even one not reaped yet, leaves it 0). Returns 0 when pid 1 was
 * reaped (every process of the jail is gone, and with them the mount
 * namespace and its tmpfs), -1 otherwise.
 */
int runner_jail_destroy(struct runner_jail *j, long long grace_deadline_ms);

#endif
