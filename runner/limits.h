#ifndef OLIVARES_RUNNER_LIMITS_H
#define OLIVARES_RUNNER_LIMITS_H
/**
 * Every cap the runner applies on its own, in one place: what it reads,
 * what it keeps of an agent's words, how long it waits for each thing. The
 * bounds of a run spec's "limits" (wall clock, CPU, memory, processes,
 * open files, tmpfs), which the server checks too, are in model/limits.h
 * (MODEL_RUN_*). Times are CLOCK_MONOTONIC milliseconds unless said.
 */
#include "model/limits.h"

/* ---- the run spec (runner/main.c) ---------------------------------------- */

/* The most bytes of spec the runner reads: the worker sends at most a
 * 1 MiB scenario; 8 MiB leaves room for JSON escaping and is still a hard
 * bound on what the runner holds. */
#define RUNNER_SPEC_MAX_BYTES (8u * 1024u * 1024u)
/* The most "binds" of a spec, which is also how many the jail can hold. */
#define RUNNER_SPEC_MAX_BINDS 32
/* Hosts in a spec's "egress_allow" at most (the server's own bound). */
#define RUNNER_SPEC_MAX_EGRESS 32
/* The longest path a spec may name (the agent, a bind), bytes. */
#define RUNNER_SPEC_MAX_PATH 1024

/* ---- the summary and the reasons (runner/backend.h) ---------------------- */

/* The summary's "reason", bytes with its NUL. */
#define RUNNER_REASON_BYTES 512
/* The summary's "shutdown" note, bytes with its NUL. */
#define RUNNER_SHUTDOWN_BYTES 256
/* A struct runner_error's message (runner/error.h), bytes with its NUL:
 * what a backend's step says before the run's reason wraps it. */
#define RUNNER_ERROR_BYTES 384

/* ---- the agent protocol (runner/agent.h) --------------------------------- */

/* The longest line an agent may write, bytes (without its newline). */
#define RUNNER_AGENT_MAX_LINE (1024 * 1024)
/* The most requests (resource or tool) of one step: its trace's bound. */
#define RUNNER_AGENT_MAX_REQUESTS MODEL_MAX_STEP_REQUESTS
/* How long an agent has to exit after the end of its input. */
#define RUNNER_AGENT_GRACE_MS 1000
/* How long an agent error waits for the first line of the agent's stderr,
 * to put it in the reason (error path only). */
#define RUNNER_AGENT_ERR_WAIT_MS 100
/* How much of the agent's stderr is kept, bytes (the rest is drained and
 * dropped, so that the agent cannot stall on a full pipe). */
#define RUNNER_AGENT_ERR_KEEP 4096
/* The agent's log (runner/agent.h) is written out in log lines of what
 * came since the last one: at each step line and at the end, and between
 * them once this many bytes wait or this long passed. */
#define RUNNER_AGENT_LOG_LINE (16 * 1024)
#define RUNNER_AGENT_LOG_EVERY_MS 200
/* Characters of the first line of the agent's stderr a reason quotes. */
#define RUNNER_AGENT_ERR_SHOWN 160
/* Characters of a malformed line a reason quotes ("..." after when it is
 * longer). */
#define RUNNER_AGENT_LINE_SHOWN 80
/* Characters of an unknown line type a reason quotes. */
#define RUNNER_AGENT_TYPE_SHOWN 40
/* Characters of an agent's own error line ({"type":"error"}) a reason
 * quotes ("..." after when it is longer). */
#define RUNNER_AGENT_ERROR_SHOWN 200

/* The longest single poll() of a wait with a deadline: the wait goes on
 * polling until its deadline, this only keeps the timeout an int. */
#define RUNNER_POLL_MAX_MS 60000

/* ---- a run's /tmp (namespaces and gvisor) -------------------------------- */

/* The tmpfs mount options of a run's /tmp, on both OS-level backends: a
 * size of tmpfs_mb MiB (%ld) and RUNNER_TMP_INODES(tmpfs_mb) inodes (%ld),
 * sticky and writable by all (the agent runs as an unprivileged uid). */
#define RUNNER_TMP_OPTIONS "size=%ldm,nr_inodes=%ld,mode=1777"
/* A run's /tmp inodes: one per KiB of its size. Each costs about 1 KiB of
 * kernel memory that size= does not count, so an agent creating empty
 * files could otherwise hold memory no limit sees. Every file, directory
 * and symlink takes one, and the root directory one. */
#define RUNNER_TMP_INODES(tmpfs_mb) ((long)(tmpfs_mb)*1024L)

/* ---- the namespace jail (runner/jail.h) ---------------------------------- */

/* The jail's setup (clone to the agent's exec, checks included) gets at
 * most this long, and never more than the run's wall clock. */
#define RUNNER_JAIL_SETUP_MS 5000
/* An agent whose /proc entries vanish while it is checked gets this long
 * to show how it ended (a failed exec, an exit), on that path only. */
#define RUNNER_JAIL_EXIT_WAIT_MS 100
/* Capability numbers the jail drops from the bounding set: more than any
 * kernel defines; the loop stops at the first one the kernel does not
 * know. */
#define RUNNER_JAIL_CAP_MAX 64
/* How close to its CPU limit an agent killed by SIGKILL must have come for
 * the reason to name the limit: a quarter of the limit (250 ms a second),
 * at most 2 s, at least two clock ticks (runner/jail.c, describe()). */
#define RUNNER_JAIL_CPU_SLACK_MS_PER_S 250
#define RUNNER_JAIL_CPU_SLACK_MAX_MS 2000
#define RUNNER_JAIL_CPU_SLACK_TICKS 2
/* The most fields of a line of /proc/PID/mountinfo the jail's check reads
 * (a line with more is not a mount). */
#define RUNNER_JAIL_MOUNTINFO_FIELDS 32

/* ---- the gvisor backend (runner/backend_gvisor.c) ------------------------ */

/* Host pids cgroup backstop of a sandbox: RUNNER_GV_PIDS_BASE +
 * RUNNER_GV_PIDS_PER_PROC * processes (runsc puts the sentry's and the
 * gofer's own threads in that cgroup: a limit of processes kills the gofer
 * at boot, and 31 sandboxed processes take about 430 host tasks). */
#define RUNNER_GV_PIDS_BASE 256
#define RUNNER_GV_PIDS_PER_PROC 32
/* Host memory cgroup limit of the whole sandbox (sentry, gofer and all the
 * agent holds), MiB: RUNNER_GV_MEM_BASE_MB + memory_mb, for all the
 * agent's processes together (memory_mb is the whole run's bound).
 * RLIMIT_AS bounds each address space, not what an agent writes into a
 * memfd or its tmpfs: that is the sentry's memory, and an agent held 3 GiB
 * of it under memory_mb 32 before this limit. The base is the sentry's and
 * gofer's own share: their code, page tables and the sentry's bookkeeping,
 * which a sandbox holds before the agent holds anything. No swap limit is
 * set: on a host with swap, swapped pages are not bounded by it (these
 * machines have none). */
#define RUNNER_GV_MEM_BASE_MB 256
/* Bounds of the runsc helper commands that do not run the agent. */
#define RUNNER_GV_CMD_MS 5000
/* The runner's own teardown, after its runsc delete: reaping, cgroups,
 * the directory. What is still there then is left to the guard. */
#define RUNNER_GV_TEARDOWN_MS 5000
/* The guard of a killed runner (or the one the runner handed its teardown
 * over to) retries until nothing of the run is left, pausing between
 * rounds up to RUNNER_GV_GUARD_PAUSE_MS, and gives up only after
 * RUNNER_GV_GUARD_MS: on a loaded host a round can take seconds, and a
 * guard that stops early leaves a sandbox running for good. */
#define RUNNER_GV_GUARD_MS 300000
#define RUNNER_GV_GUARD_PAUSE_MS 500
/* How long the sandbox may take to exit after its agent did, beyond the
 * agent's grace, before the run's shutdown note says the agent was killed
 * (a few ms here; the note is about the agent, not the sandbox). */
#define RUNNER_GV_EXIT_SLACK_MS 150
/* The full preflight's trial sandbox, start to exit: under the worker's
 * 8 s for a preflight answer (PREFLIGHT_TIMEOUT_MS), so that a platform whose sandbox never boots
 * here (kvm: its boot hung in the sentry's machine set-up for over 60 s)
 * gets its reason listed, not the worker's timeout. A sandbox boots in 0.3
 * - 0.7 s. */
#define RUNNER_GV_TRIAL_MS 6000
/* A run's sandbox, create to start, gets at most this long (or its
 * wall-clock limit if shorter): a sandbox boots in 0.3 - 0.7 s, one that
 * does not within this never will (kvm here), and a long limit ([runner]
 * timeout_ms up to 600 s) would hold an executor's slot that long for
 * nothing. */
#define RUNNER_GV_START_MS 10000
/* How much of what a failed runsc command wrote on its stderr is read for
 * its reason, bytes with the NUL (its first line is quoted). */
#define RUNNER_GV_SAID_BYTES 512

/* ---- a run's cgroup (runner/cgroup.h) ------------------------------------ */

/* How often the runner reads a run's cgroup counters while it waits for
 * the agent (CPU time against cpu_seconds, out-of-memory kills against
 * memory_mb): a spin is stopped within about this much CPU time of its
 * budget per CPU the run can use, for two small file reads each time. */
#define RUNNER_CGROUP_POLL_MS 100
/* How long a cgroup the runner made may stay busy (its last processes
 * leaving it) before its removal counts as failed. */
#define RUNNER_CGROUP_RMDIR_MS 2000
/* A run cgroup with no process left, made longer ago than this (s), is
 * one that neither its runner's teardown nor its guard removed (a guard
 * killed too, or given up): the next run made beside it removes it (a live
 * run's holds its jail within milliseconds of being made). */
#define RUNNER_CGROUP_STALE_S 60
/* How long the cgroup's guard (runner/cgroup.c) goes on killing what is
 * left in a run's cgroup and removing it, once the runner that made it is
 * gone, before it gives up (the next run's sweep is the last resort). A
 * busy host delays the jail's end by seconds, not minutes. */
#define RUNNER_CGROUP_GUARD_MS 60000

/* ---- the fork server (runner/serve.h) ------------------------------------ */

/* After a failed fork, how long to wait before the next try. */
#define RUNNER_SERVE_RETRY_MS 100
/* So many spares in a row that could not get ready and the server gives up
 * (exit 1, a message on stderr). */
#define RUNNER_SERVE_SPARE_FAILURES_MAX 10
/* The highest descriptor closed one by one where close_range(2) is
 * missing (the open-files limit when lower). */
#define RUNNER_CLOSE_FD_MAX 65536

#endif
