#ifndef OLIVARES_RUNNER_JAIL_INTERNAL_H
#define OLIVARES_RUNNER_JAIL_INTERNAL_H
/*
 * Private to the namespace jail (runner/jail.h), shared by its three
 * files: runner/jail.c (the runner's side: start, guard, teardown,
 * preflight), runner/jail_inside.c (pid 1 and the builder, inside the new
 * namespaces until the agent's exec) and runner/jail_verify.c (the
 * runner's checks of the agent from outside, through /proc).
 */
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "runner/jail.h"

/* Where the builder builds the new root: /tmp of the jail's private mount
 * namespace (a tmpfs mounted over it there), so nothing is created on the
 * host. */
#define JAIL_ROOT "/tmp"

/* The host's character devices every jail holds in its /dev, each bound
 * read-only, nosuid and noexec (runner/jail.c says why these). */
struct jail_dev {
	const char *path;
	unsigned int major, minor;
};
#define JAIL_NDEVS 5
extern const struct jail_dev jail_devs[JAIL_NDEVS];

/* What the jail's two processes report to the runner: pid 1 on its exec
 * pipe, the builder on its report socket. */
enum report_kind { REPORT_BUILT = 1, REPORT_FAILED, REPORT_CONFINED };

struct jail_report {
	int kind;
	int err; /* errno of the failed step */
	char what[160];
	/* the jail's root once built (REPORT_BUILT, from the builder) */
	unsigned long long root_dev, root_ino;
};

/* What the jail's two processes need, prepared by the runner before
 * clone(). */
struct jail_args {
	const struct runner_spec *spec;
	int in_r, out_w, err_w, go_r, report_w, exec_w; /* the jail's ends */
	int in_w, out_r, err_r, go_w, report_r, exec_r; /* the runner's ends */
	int gw_w, gw_r;          /* the gateway's socket pair (-1 without a gateway): pid 1
	                 * sends the listening socket it made in the jail's
	                 * network on gw_w, the runner receives it on gw_r */
	const char *gateway_dir; /* host directory bound at RUNNER_GATEWAY_JAIL_DIR, or NULL */
	int gateway_dir_fd;      /* O_PATH of it, or -1 */
	const char *agent_path;
	int new_session;                    /* the runner has a controlling terminal */
	int agent_fd;                       /* O_PATH of the agent file */
	int sdk_fd;                         /* O_PATH of spec->sdk_dir, or -1 */
	int bind_fd[RUNNER_SPEC_MAX_BINDS]; /* O_PATH of each bind */
	const char *bind_path[RUNNER_SPEC_MAX_BINDS];
	size_t nbinds;
	int dev_fd[JAIL_NDEVS]; /* O_PATH of each of jail_devs */
};

/* errno's name ("EPERM"), for a reason. */
static inline const char *jail_ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown error";
}

/** Is the file held by src (any descriptor) the character device d of
 * jail_devs? (runner/jail.c) */
int jail_is_dev(int src, size_t d);

/**
 * pid 1 of the jail, from the clone to the agent's exec (runner/
 * jail_inside.c): forks the builder, confines itself, execs /agent. Never
 * returns: a failed step is reported on a->exec_w, and it exits.
 */
void jail_pid1_main(struct jail_args *a) __attribute__((noreturn));

/**
 * Is a namespace kind of the jail missing on this host? Returns 0, or -1
 * with *err naming it (kind RUNNER_E_MISSING). (runner/jail_verify.c)
 */
int jail_missing_ns_kind(struct runner_error *err);

/**
 * From outside the jail, check what the agent (pid agent, as the runner
 * sees it) runs under: its own namespaces, the root the builder reported
 * in *built, seccomp filter mode, no_new_privs, no capability, host uid
 * host_uid, and its mounts. Returns 0, or -1 with *err: kind
 * RUNNER_E_UNVERIFIED when a check fails, RUNNER_E_GONE when the agent's
 * /proc entries are gone (it is exiting or has exited), RUNNER_E_CLOSED
 * when they are closed to this process (before its exec pid 1 is not
 * dumpable, and a runner that is not root may not look into it then).
 * (runner/jail_verify.c)
 */
int jail_verify_agent(pid_t agent, const struct jail_report *built, uid_t host_uid,
                      struct runner_error *err);

#endif
