/*
 * The namespace jail (runner/jail.h). Three processes:
 *
 * - the runner (outside): opens what the jail will hold (O_PATH, before any
 *   namespace exists, so no path is resolved by the jail's unprivileged
 *   uid), creates the pipes, clone()s the agent-to-be into new namespaces
 *   (it is pid 1 of the new pid namespace), writes its uid/gid maps, then
 *   waits until the jail is built and the agent has exec'd, and verifies
 *   the agent's confinement from outside through /proc;
 * - the agent-to-be, pid 1 (jail_main): forks the builder first, then makes
 *   the jail's network namespace (unshare: about 0.7 ms of kernel work on
 *   these machines, the most costly namespace by far) and confines itself
 *   (rlimits, no capability, no_new_privs, seccomp) while the builder
 *   builds the filesystem; once the builder has exited with success and
 *   the runner has said that its guard stands, it execs /agent. Until
 *   then it runs only this code;
 * - the builder, pid 2 (build_jail): builds the filesystem, pivots into it
 *   (pivot_root moves the root and working directory of every process of
 *   the mount namespace that was on the old root, pid 1's included;
 *   verify_agent() checks the agent's root from outside), detaches the old
 *   root, reports the new root's identity and exits.
 *
 * With the agent as pid 1 there is no process of ours left in the jail
 * while the agent runs, and the jail ends with it: when pid 1 exits the
 * kernel kills every other process of the pid namespace, and once the
 * runner has reaped it the namespaces and the tmpfs are gone. It is also
 * what the gvisor backend does (the agent is the sandbox's pid 1). Outside
 * the jail, a guard (a child of the runner) kills pid 1 if the runner dies.
 *
 * Every setup step is checked; the first one that fails is reported to the
 * runner with its errno ("pivot_root failed: EPERM"), and the run fails
 * closed: no step is sent to an agent that is not fully confined. The
 * builder reports on a SOCK_SEQPACKET socket (messages keep their
 * boundaries); pid 1 reports on a close-on-exec pipe whose end of file,
 * with pid 1 still alive, is how the runner learns that the exec happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/jail.h"

/* Where the builder builds the new root: /tmp of the jail's private mount
 * namespace (a tmpfs mounted over it there), so nothing is created on the
 * host. */
#define JAIL_ROOT "/tmp"

/*
 * The host's character devices every jail holds, at the same paths (the
 * usual ones a rootless container runtime binds; never /dev/tty): opened
 * by the runner before any namespace exists and checked to be these
 * devices, bound by the builder read-only, nosuid and noexec but not
 * nodev (a nodev mount refuses to open a device; a read-only one does not
 * stop writes to it: /dev/null stays writable). verify_mounts() accepts a
 * mount without nodev at these paths only, showing these devices.
 */
static const struct jail_dev {
	const char *path;
	unsigned int major, minor;
} jail_devs[] = {
    {"/dev/null", 1, 3},   {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
    {"/dev/random", 1, 8}, {"/dev/urandom", 1, 9},
};
#define JAIL_NDEVS (sizeof(jail_devs) / sizeof(jail_devs[0]))

enum report_kind { REPORT_BUILT = 1, REPORT_FAILED, REPORT_CONFINED };

struct report {
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
	const char *agent_path;
	int new_session;             /* the runner has a controlling terminal */
	int agent_fd;                /* O_PATH of the agent file */
	int bind_fd[RUNNER_SPEC_MAX_BINDS]; /* O_PATH of each bind */
	const char *bind_path[RUNNER_SPEC_MAX_BINDS];
	size_t nbinds;
	int dev_fd[JAIL_NDEVS]; /* O_PATH of each of jail_devs */
};

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown error";
}

static void report_raw(int fd, const struct report *r)
{
	ssize_t w;

	/* fd is the builder's report socket or pid 1's exec pipe. */
	do {
		w = send(fd, r, sizeof(*r), MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, r, sizeof(*r));
	} while (w < 0 && errno == EINTR);
}

/* A setup step failed inside the jail: say which, then die. */
static void __attribute__((noreturn)) die(int fd, const char *what)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	r.kind = REPORT_FAILED;
	r.err = errno;
	snprintf(r.what, sizeof(r.what), "%s", what);
	report_raw(fd, &r);
	_exit(127);
}

/* The runner's go-aheads on go, three bytes in all: one for each of the
 * jail's two processes once the uid/gid maps are written, and a last one
 * for pid 1 once the runner's guard stands (pid 1 reads it just before
 * its exec). Reads one. Returns 0, or -1 when the runner gave up or died
 * (it then kills the jail, or its guard or pid 1's parent-death signal
 * does). */
static int await_go(int go)
{
	ssize_t got;
	char b;

	do
		got = read(go, &b, 1);
	while (got < 0 && errno == EINTR);
	return got == 1 ? 0 : -1;
}

/* ---- pid 1, the agent-to-be: confine, then exec ---------------------------- */

/* The agent's seccomp program: the refused calls are listed in
 * runner/agent-filter-gen.c, which libseccomp compiles into this array when
 * the runner is built (runner/agent-filter.inc, in the build tree). */
#include "runner/agent-filter.inc"

static void set_limit(int fd, int res, rlim_t cur, rlim_t max, const char *what)
{
	struct rlimit rl;

	rl.rlim_cur = cur;
	rl.rlim_max = max;
	if (setrlimit(res, &rl) != 0)
		die(fd, what);
}

/* The agent's own confinement, in the jail's namespaces as the jail's
 * root, before its exec. Reports failures on fd. The CPU limit is one
 * number, soft and hard: as pid 1 of its pid namespace the agent ignores
 * SIGXCPU (the kernel drops signals a namespace's init has no handler for,
 * SIGKILL and SIGSTOP aside), so the limit ends it with SIGKILL. */
static void agent_confine(const struct jail_args *a, int fd)
{
	const struct runner_limits *l = &a->spec->limits;
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	struct sock_fprog prog;
	int c;

	/* Out of the runner's process group, always: kill(0, ...) and
	 * setpriority(PRIO_PGRP, 0, ...) reach the caller's group whatever
	 * its pid namespace, and when the runner is not root the agent runs
	 * as the runner's uid. Out of its session too when that has a
	 * controlling terminal; without one the agent, not a session leader,
	 * cannot get one, and setsid() would cost a scheduler autogroup
	 * (0.13 ms here) for nothing. */
	if (a->new_session) {
		if (setsid() < 0)
			die(fd, "setsid");
	} else if (setpgid(0, 0) != 0) {
		die(fd, "setpgid");
	}
	set_limit(fd, RLIMIT_CPU, (rlim_t)l->cpu_seconds, (rlim_t)l->cpu_seconds, "RLIMIT_CPU");
	set_limit(fd, RLIMIT_NOFILE, (rlim_t)l->open_files, (rlim_t)l->open_files,
	          "RLIMIT_NOFILE");
	set_limit(fd, RLIMIT_NPROC, (rlim_t)l->processes, (rlim_t)l->processes, "RLIMIT_NPROC");
	set_limit(fd, RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
	/* No capability survives, not even in the jail's user namespace:
	 * empty bounding set (so exec as uid 0 regains nothing), no ambient,
	 * nothing permitted, effective or inheritable. */
	for (c = 0; c < RUNNER_JAIL_CAP_MAX; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		die(fd, "PR_CAPBSET_DROP");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		die(fd, "PR_CAP_AMBIENT_CLEAR_ALL");
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) != 0)
		die(fd, "capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die(fd, "PR_SET_NO_NEW_PRIVS");
	/* As seccomp_load() would: after no_new_privs, no flag. (The kernel
	 * copies the program; it never writes to it.) */
	prog.len = sizeof(agent_filter_insns) / sizeof(agent_filter_insns[0]);
	prog.filter = (struct sock_filter *)agent_filter_insns;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		die(fd, "seccomp filter");
}

static void __attribute__((noreturn)) build_jail(struct jail_args *a);

/* Has the runner closed its end of exec_w (it died, or gave up and is
 * killing the jail)? */
static int runner_gone(int exec_w)
{
	struct pollfd p;

	p.fd = exec_w;
	p.events = 0;
	p.revents = 0;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP));
}

/*
 * pid 1, from the clone to the agent's exec. It forks the builder first,
 * so that the two longest steps of a jail run side by side: pid 1 makes
 * the network namespace and confines itself while the builder builds the
 * filesystem. Until the exec it holds of the host only what it was cloned
 * with: its root (which the builder's pivot_root() moves to the new root),
 * its working directory (changed to the new root before the exec),
 * close-on-exec descriptors and the runner's stdio, replaced by the
 * agent's pipes before the exec. Reports failures on exec_w.
 */
static void __attribute__((noreturn)) jail_main(struct jail_args *a)
{
	static char *const argv[] = {"agent", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/", "LANG=C.UTF-8", NULL};
	const struct runner_limits *l = &a->spec->limits;
	int fd = a->exec_w;
	struct report r;
	pid_t builder, p;
	int status;

	close(a->in_w);
	close(a->out_r);
	close(a->err_r);
	close(a->go_w);
	close(a->report_r);
	close(a->exec_r);
	builder = fork();
	if (builder < 0)
		die(fd, "fork of the jail's builder");
	if (builder == 0)
		build_jail(a);
	close(a->report_w);
	/* The runner's go-ahead (the uid maps are written) before anything
	 * costly: the clone has just put the runner behind this process on
	 * its CPU, and a pid 1 busy in unshare() here kept it from writing
	 * the maps, which the builder needs (measured: the builder then
	 * started 0.5 ms later). */
	if (await_go(a->go_r) != 0)
		_exit(127);
	if (setresgid(0, 0, 0) != 0)
		die(fd, "setresgid");
	if (setresuid(0, 0, 0) != 0)
		die(fd, "setresuid");
	/* After the uid change (which clears it): die with the runner, until
	 * the runner's guard stands (the agent could shed this signal; the
	 * guard, standing before the exec, is the lifeline once it runs). A
	 * runner that died before this line has closed exec_r, which poll()
	 * reports as an error on exec_w. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		die(fd, "PR_SET_PDEATHSIG");
	if (runner_gone(fd))
		_exit(127);
	/* Nobody reads our copy of the spec until the exec replaces it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die(fd, "PR_SET_DUMPABLE");
	if (unshare(CLONE_NEWNET) != 0)
		die(fd, "unshare of the network namespace");
	agent_confine(a, fd);
	/* The jail is complete when the builder exits 0; otherwise it has
	 * reported why (or died, which the runner sees). */
	do
		p = waitpid(builder, &status, 0);
	while (p < 0 && errno == EINTR);
	if (p != builder)
		die(fd, "waiting for the jail's builder");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		_exit(127);
	/* Confined, in the finished jail: the runner verifies this process
	 * from outside while it execs (the exec keeps every property it
	 * checks: namespaces, root, seccomp, no_new_privs, no capability
	 * with an empty bounding set, uid) and sends the first step once the
	 * exec is done. */
	memset(&r, 0, sizeof(r));
	r.kind = REPORT_CONFINED;
	report_raw(fd, &r);
	if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0)
		die(fd, "dup2");
	/* Required: pid 1 was cloned in the runner's working directory, on
	 * the host, and pivot_root() moved it only if it was the old root
	 * (the runner cannot check this one from outside: the agent may
	 * change directory as soon as it runs). */
	if (chdir("/") != 0)
		die(fd, "chdir /");
	/* Every descriptor above stderr closes at exec (exec_w included: its
	 * end of file is how the runner learns that the exec succeeded). */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		die(fd, "close_range");
	/* No agent code runs before the runner's guard stands: the runner
	 * forks it once the builder has reported (while this process waits
	 * for the builder's exit, rather than while the two compete for the
	 * CPUs) and then sends the last byte. */
	if (await_go(a->go_r) != 0)
		_exit(127);
	/* Last: nothing after it maps memory (a sanitizer build of this code
	 * would fail to; the agent starts under the limit either way). */
	set_limit(fd, RLIMIT_AS, (rlim_t)l->memory_mb << 20, (rlim_t)l->memory_mb << 20,
	          "RLIMIT_AS");
	execve("/agent", argv, envp);
	die(fd, "execve /agent");
}

/* ---- the builder (pid 2): build the filesystem ---------------------------- */

static void mkdirs(int fd, char *path, mode_t mode)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) != 0 && errno != EEXIST)
			die(fd, "mkdir");
		*p = '/';
	}
	if (mkdir(path, mode) != 0 && errno != EEXIST)
		die(fd, "mkdir");
}

/* Bind the file or directory held by src (O_PATH) at target, with every
 * mount below it (MS_REC: a host mount under a bound directory is part of
 * what the operator bound), and make every one of them read-only, nosuid
 * and nodev: mount_setattr(AT_RECURSIVE), not a remount, which changes
 * the top mount only (a tmpfs under a bound /dev or /run stayed writable,
 * a way to leave files on the host). Attributes are only added: those the
 * kernel has locked on the source (noexec, atime) stay as they are. */
static void bind_ro(int fd, int src, const char *target, const char *what)
{
	char from[64];
	char msg[160];
	struct mount_attr attr;

	snprintf(from, sizeof(from), "/proc/self/fd/%d", src);
	snprintf(msg, sizeof(msg), "bind mount of %.120s", what);
	if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) != 0)
		die(fd, msg);
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	snprintf(msg, sizeof(msg), "read-only remount of %.120s", what);
	if (syscall(SYS_mount_setattr, AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof(attr)) != 0)
		die(fd, msg);
}

static void make_target(int fd, int src, char *target)
{
	struct stat st;
	char *slash;
	int f;

	if (fstat(src, &st) != 0)
		die(fd, "fstat of a bind");
	if (S_ISDIR(st.st_mode)) {
		mkdirs(fd, target, 0755);
		return;
	}
	slash = strrchr(target, '/');
	*slash = '\0';
	mkdirs(fd, target, 0755);
	*slash = '/';
	f = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	if (f < 0)
		die(fd, "creating a bind target");
	close(f);
}

/* Is the file held by src the character device d of jail_devs? */
static int is_jail_dev(int src, size_t d)
{
	struct stat st;

	return fstat(src, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == jail_devs[d].major && minor(st.st_rdev) == jail_devs[d].minor;
}

/* Open (O_PATH) the host's device d of jail_devs into *fd and check that
 * it is that character device on a mount a device opens through (not
 * nodev). Returns 0; -1 with *err naming the device (kind
 * RUNNER_E_MISSING: "the host's /dev/null is not the character device
 * 1:3"), *fd then open or -1. Shared by runner_jail_start() and the
 * listing's preflight, which must not pass on a host where every run would
 * fail here. */
static int open_jail_dev(size_t d, int *fd, struct runner_error *err)
{
	struct statvfs sv;

	*fd = open(jail_devs[d].path, O_PATH | O_CLOEXEC);
	if (*fd < 0)
		return runner_error_set(err, RUNNER_E_MISSING, "cannot open %s: %s",
		                        jail_devs[d].path, ename(errno));
	if (!is_jail_dev(*fd, d))
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "the host's %s is not the character device %u:%u",
		                        jail_devs[d].path, jail_devs[d].major, jail_devs[d].minor);
	/* A bind keeps its source's nodev: the jail's device would not open
	 * (EACCES), and every run would fail at the agent's first use. */
	if (fstatvfs(*fd, &sv) != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "cannot read the mount flags of the host's %s: %s",
		                        jail_devs[d].path, ename(errno));
	if (sv.f_flag & ST_NODEV)
		return runner_error_set(
		    err, RUNNER_E_MISSING,
		    "the host's %s is on a nodev mount (a device does not open through it)",
		    jail_devs[d].path);
	return 0;
}

/* The jail's /dev: an empty directory of its tmpfs (nodev, like the rest
 * of it) holding a bind of each of jail_devs, read-only, nosuid and
 * noexec, not nodev: the one kind of mount of the jail a device opens
 * through. The bind is of the device's own mount only (no MS_REC: a
 * device file has nothing below it). */
static void make_dev(int fd, const struct jail_args *a)
{
	char from[64], target[64], msg[96];
	struct mount_attr attr;
	size_t d;
	int f;

	mkdirs(fd, (char[]){JAIL_ROOT "/dev"}, 0755);
	for (d = 0; d < JAIL_NDEVS; d++) {
		snprintf(target, sizeof(target), JAIL_ROOT "%s", jail_devs[d].path);
		f = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (f < 0)
			die(fd, "creating a device's mount point");
		close(f);
		snprintf(from, sizeof(from), "/proc/self/fd/%d", a->dev_fd[d]);
		snprintf(msg, sizeof(msg), "bind mount of %s", jail_devs[d].path);
		if (mount(from, target, NULL, MS_BIND, NULL) != 0)
			die(fd, msg);
		memset(&attr, 0, sizeof(attr));
		attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
		snprintf(msg, sizeof(msg), "read-only remount of %s", jail_devs[d].path);
		if (syscall(SYS_mount_setattr, AT_FDCWD, target, 0, &attr, sizeof(attr)) != 0)
			die(fd, msg);
	}
}

static void __attribute__((noreturn)) build_jail(struct jail_args *a)
{
	const struct runner_limits *l = &a->spec->limits;
	static const char *const links[][2] = {{"usr/bin", "/bin"},
	                                       {"usr/lib", "/lib"},
	                                       {"usr/lib64", "/lib64"},
	                                       {"usr/sbin", "/sbin"}};
	char opts[64];
	char path[4200];
	struct report r;
	struct stat st;
	int fd = a->report_w;
	size_t i;

	/* Of the agent's pipes and the runner's stdio the builder keeps
	 * nothing: the runner sees end of file when the agent is gone. */
	close(a->exec_w);
	close(a->in_r);
	close(a->out_w);
	close(a->err_w);
	close(0);
	close(1);
	close(2);
	if (await_go(a->go_r) != 0)
		_exit(127);
	close(a->go_r);
	/*
	 * Open what the jail will hold now, in this mount namespace (a bind
	 * source must be a mount of the namespace it is bound in: the
	 * runner's own O_PATH descriptors point into the host's and give
	 * EINVAL) and before the uid change: until setresuid() this process
	 * is still the host's uid 0 for permission checks, so it reaches
	 * the same paths the runner validated.
	 */
	close(a->agent_fd);
	a->agent_fd = open(a->agent_path, O_PATH | O_CLOEXEC);
	if (a->agent_fd < 0)
		die(fd, "opening the agent");
	for (i = 0; i < a->nbinds; i++) {
		close(a->bind_fd[i]);
		a->bind_fd[i] = open(a->bind_path[i], O_PATH | O_CLOEXEC);
		if (a->bind_fd[i] < 0)
			die(fd, "opening a bind");
	}
	/* the devices too, and they must still be those the runner checked */
	for (i = 0; i < JAIL_NDEVS; i++) {
		close(a->dev_fd[i]);
		a->dev_fd[i] = open(jail_devs[i].path, O_PATH | O_CLOEXEC);
		if (a->dev_fd[i] < 0)
			die(fd, "opening a device");
		if (!is_jail_dev(a->dev_fd[i], i)) {
			errno = ENODEV;
			die(fd, "checking a device");
		}
	}
	if (setresgid(0, 0, 0) != 0)
		die(fd, "setresgid");
	if (setresuid(0, 0, 0) != 0)
		die(fd, "setresuid");
	/* The builder holds a copy of the spec: nobody in the jail may read
	 * it (and it is gone before the agent's exec). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die(fd, "PR_SET_DUMPABLE");

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die(fd, "making / private");
	snprintf(opts, sizeof(opts), "size=%ldm,mode=0755", l->tmpfs_mb);
	if (mount("tmpfs", JAIL_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		die(fd, "tmpfs root mount");
	/* Before the binds: a bind of /dev (or of a device) then covers
	 * these, nodev, rather than taking their mount points. */
	make_dev(fd, a);
	for (i = 0; i < a->nbinds; i++) {
		snprintf(path, sizeof(path), JAIL_ROOT "%s", a->bind_path[i]);
		make_target(fd, a->bind_fd[i], path);
		bind_ro(fd, a->bind_fd[i], path, a->bind_path[i]);
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), JAIL_ROOT "%s", links[i][1]);
		if (symlink(links[i][0], path) != 0 && errno != EEXIST)
			die(fd, "symlink");
	}
	snprintf(path, sizeof(path), JAIL_ROOT "/agent");
	make_target(fd, a->agent_fd, path);
	bind_ro(fd, a->agent_fd, path, "the agent");
	mkdirs(fd, (char[]){JAIL_ROOT "/proc"}, 0555);
	/* Read-only: nothing of the host is in this proc, but some of its
	 * files write to what the jail shares with the runner's session,
	 * such as the scheduler autogroup's nice value. */
	if (mount("proc", JAIL_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	          NULL) != 0)
		die(fd, "proc mount");
	mkdirs(fd, (char[]){JAIL_ROOT "/tmp"}, 01777);
	/* Its inodes too: each costs about 1 KiB of kernel memory that size=
	 * does not count, so at most one per KiB of the size (an agent
	 * creating empty files could otherwise hold memory no limit sees). */
	snprintf(opts, sizeof(opts), "size=%ldm,nr_inodes=%ld,mode=1777", l->tmpfs_mb,
	         l->tmpfs_mb * 1024);
	if (mount("tmpfs", JAIL_ROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		die(fd, "tmpfs /tmp mount");
	/* The filesystem jail proper (a mount namespace that keeps the old
	 * root keeps the host's tree in reach): the old root goes away. */
	if (chdir(JAIL_ROOT) != 0)
		die(fd, "chdir to the new root");
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		die(fd, "pivot_root");
	if (umount2(".", MNT_DETACH) != 0)
		die(fd, "umount2 of the old root");
	if (chdir("/") != 0)
		die(fd, "chdir /");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) !=
	    0)
		die(fd, "read-only remount of /");
	if (sethostname(RUNNER_JAIL_HOSTNAME, strlen(RUNNER_JAIL_HOSTNAME)) != 0)
		die(fd, "sethostname");
	/* Built: the identity of the jail's root, which the runner compares
	 * with the agent's (it may not read this process's /proc entries: it
	 * is not dumpable, and gone by then). */
	if (stat("/", &st) != 0)
		die(fd, "stat of the new root");
	memset(&r, 0, sizeof(r));
	r.kind = REPORT_BUILT;
	r.root_dev = (unsigned long long)st.st_dev;
	r.root_ino = (unsigned long long)st.st_ino;
	report_raw(fd, &r);
	_exit(0);
}

/* ---- the guard: the jail dies with the runner ------------------------------ */

/*
 * pid 1's parent-death signal is no lifeline once the agent runs: it is
 * kept per thread, and a thread of the agent that execs takes the process
 * over with none (or the agent clears it). So the runner forks a guard
 * once the jail is built, before it lets pid 1 exec: a child in a process
 * group of its own (a kill of the runner's group, the worker's way to end
 * a runner, leaves it standing; the runner puts it there itself, before
 * going on) that holds a pidfd of pid 1 and the read end of a lifeline
 * pipe whose only write end is the runner's. When the runner is gone,
 * however it died, the guard reads end of file and sends SIGKILL to pid 1
 * through the pidfd (from the parent pid namespace, which pid 1 cannot
 * ignore; a pidfd cannot name another process once pid 1 is reaped). It
 * is a fork, not a thread or a CLONE_VM child: the kernel's out-of-memory
 * killer kills every process that shares the victim's memory, and the
 * guard must outlive a runner killed that way. When pid 1 has exited the
 * guard has nothing left to do and exits.
 */
static void __attribute__((noreturn)) guard_main(int lifeline_r, int pidfd)
{
	struct pollfd w[2];
	int lo = lifeline_r < pidfd ? lifeline_r : pidfd;
	int hi = lifeline_r < pidfd ? pidfd : lifeline_r;
	int got;

	/* nothing but its two descriptors */
	if (lo > 0)
		syscall(SYS_close_range, 0, lo - 1, 0);
	if (hi > lo + 1)
		syscall(SYS_close_range, lo + 1, hi - 1, 0);
	syscall(SYS_close_range, hi + 1, ~0U, 0);
	for (;;) {
		w[0].fd = lifeline_r;
		w[0].events = POLLIN;
		w[0].revents = 0;
		w[1].fd = pidfd;
		w[1].events = POLLIN;
		w[1].revents = 0;
		got = poll(w, 2, -1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got > 0 && w[1].revents && !w[0].revents)
			_exit(0); /* pid 1 has exited: the jail is gone */
		break;
	}
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	_exit(0);
}

/* Start the guard of the jail whose pid 1 has pidfd. Returns its pid and
 * *lifeline (the write end, close-on-exec), or -1 with errno. */
static pid_t guard_start(int pidfd, int *lifeline)
{
	int lp[2];
	pid_t g;
	int e;

	if (pipe2(lp, O_CLOEXEC) != 0)
		return -1;
	g = fork();
	if (g == 0) {
		close(lp[1]);
		guard_main(lp[0], pidfd);
	}
	e = errno;
	close(lp[0]);
	if (g < 0) {
		close(lp[1]);
		errno = e;
		return -1;
	}
	/* Out of the runner's process group now, not whenever it runs. */
	if (setpgid(g, g) != 0) {
		e = errno;
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
		close(lp[1]);
		errno = e;
		return -1;
	}
	*lifeline = lp[1];
	return g;
}

static void close_fd(int *fd);

/* Stop the guard: with the jail reaped it has nothing left to do, and is
 * killed; otherwise it gets the end of its lifeline and kills what is left
 * of the jail first. Reaps it either way. */
static void guard_stop(struct runner_jail *j)
{
	pid_t p;

	if (j->guard > 0 && j->pid <= 0 && !j->lost)
		kill(j->guard, SIGKILL);
	close_fd(&j->lifeline);
	if (j->guard <= 0)
		return;
	do
		p = waitpid(j->guard, NULL, 0);
	while (p < 0 && errno == EINTR);
	j->guard = -1;
}

/* ---- the runner's side --------------------------------------------------- */


/* The namespace kinds of the jail, as named under /proc/PID/ns. */
static const char *const ns_names[] = {"user", "pid", "mnt", "net", "ipc", "uts", "cgroup"};
#define NS_KINDS (sizeof(ns_names) / sizeof(ns_names[0]))

/* The runner's own namespace i ("net:[4026531833]"), read once per
 * process (the runner never changes namespace), or once per fork server
 * (runner_jail_warm: its forks are in its namespaces); "" if unreadable,
 * and then read again at the next call. */
static const char *own_ns(size_t i)
{
	static char ids[NS_KINDS][64];
	static int done[NS_KINDS];
	char path[64];
	ssize_t len;

	if (!done[i]) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		len = readlink(path, ids[i], sizeof(ids[i]) - 1);
		ids[i][len > 0 ? len : 0] = '\0';
		done[i] = len > 0;
	}
	return ids[i];
}

void runner_jail_warm(void)
{
	size_t i;

	for (i = 0; i < NS_KINDS; i++)
		own_ns(i);
	seccomp_api_get();
}

/* Is a namespace kind of the jail missing on this host? Returns 0, or -1
 * with *err naming it (kind RUNNER_E_MISSING). */
static int missing_ns_kind(struct runner_error *err)
{
	size_t i;

	for (i = 0; i < NS_KINDS; i++) {
		if (!own_ns(i)[0])
			return runner_error_set(err, RUNNER_E_MISSING,
			                        "%s namespaces unavailable in this kernel",
			                        ns_names[i]);
	}
	return 0;
}

/* Read "Key:\tvalue" of /proc/PID/status into val. Returns 0 or -1. */
static int status_field(const char *status, const char *key, char *val, size_t n)
{
	const char *p = status;
	size_t klen = strlen(key);
	size_t i;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			for (i = 0; i + 1 < n && p[i] && p[i] != '\n'; i++)
				val[i] = p[i];
			val[i] = '\0';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static int verify_mounts(pid_t agent, struct runner_error *err);

/* What a failed look at the agent's /proc entries means, from its errno e:
 * RUNNER_E_GONE (ENOENT, ESRCH: the agent is exiting or has exited),
 * RUNNER_E_CLOSED (EACCES, EPERM: closed to this process), else
 * RUNNER_E_UNVERIFIED. */
static enum runner_err proc_err(int e)
{
	if (e == ENOENT || e == ESRCH)
		return RUNNER_E_GONE;
	if (e == EACCES || e == EPERM)
		return RUNNER_E_CLOSED;
	return RUNNER_E_UNVERIFIED;
}

/* From outside the jail, check what the agent runs under: its own
 * namespaces (none shared with the runner), the jail's root (the one the
 * builder reported, not the runner's), seccomp filter mode, no_new_privs,
 * no capability, the unprivileged host uid, and its mounts (verify_mounts).
 * Returns 0, or -1 with *err: kind RUNNER_E_UNVERIFIED when a check fails,
 * RUNNER_E_GONE when the agent's /proc entries are gone (it is exiting or
 * has exited), RUNNER_E_CLOSED when they are closed to this process
 * (before its exec pid 1 is not dumpable, and a runner that is not root
 * may not look into it then). */
static int verify_agent(pid_t agent, const struct report *built, uid_t host_uid,
                        struct runner_error *err)
{
	char path[64], theirs[64], status[4096], val[64], want[64];
	struct stat ra, rr;
	const char *mine;
	ssize_t len;
	size_t i;
	int fd, e;

	for (i = 0; i < NS_KINDS; i++) {
		mine = own_ns(i);
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)agent, ns_names[i]);
		len = readlink(path, theirs, sizeof(theirs) - 1);
		e = errno;
		theirs[len > 0 ? len : 0] = '\0';
		/* an exiting process has lost its namespaces already; one not
		 * dumpable may be closed to a runner that is not root */
		if (!mine[0] || !theirs[0] || strcmp(mine, theirs) == 0)
			return runner_error_set(err, len < 0 ? proc_err(e) : RUNNER_E_UNVERIFIED,
			                        "agent is not in a %s namespace of its own",
			                        ns_names[i]);
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)agent);
	if (stat(path, &ra) != 0)
		return runner_error_set(err, proc_err(errno), "agent's root is not the jail's");
	if (stat("/proc/self/root", &rr) != 0 || (unsigned long long)ra.st_dev != built->root_dev ||
	    (unsigned long long)ra.st_ino != built->root_ino ||
	    (ra.st_dev == rr.st_dev && ra.st_ino == rr.st_ino))
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "agent's root is not the jail's");
	snprintf(path, sizeof(path), "/proc/%d/status", (int)agent);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return runner_error_set(
		    err, e == ENOENT || e == ESRCH ? RUNNER_E_GONE : RUNNER_E_UNVERIFIED,
		    "cannot read the agent's status: %s", ename(e));
	}
	len = read(fd, status, sizeof(status) - 1);
	close(fd);
	status[len > 0 ? len : 0] = '\0';
	if (status_field(status, "Seccomp", val, sizeof(val)) != 0 || strcmp(val, "2") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent is not under a seccomp filter");
	if (status_field(status, "NoNewPrivs", val, sizeof(val)) != 0 || strcmp(val, "1") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent does not have no_new_privs");
	if (status_field(status, "CapEff", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapPrm", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapBnd", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "agent still holds capabilities");
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)host_uid, (unsigned)host_uid,
	         (unsigned)host_uid, (unsigned)host_uid);
	if (status_field(status, "Uid", val, sizeof(val)) != 0 || strcmp(val, want) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent does not run as host uid %u", (unsigned)host_uid);
	return verify_mounts(agent, err);
}

/* Is word one of the comma-separated words of list? */
static int has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	for (;;) {
		if (strncmp(p, word, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
		p = strchr(p, ',');
		if (!p)
			return 0;
		p++;
	}
}

/* Filesystems that show the host kernel's state (or hand out its
 * devices): in the jail only as its own /proc, the procfs of its pid
 * namespace that the builder mounts. */
static const char *const host_state_fs[] = {
    "proc",        "sysfs",  "cgroup",   "cgroup2",   "debugfs",  "tracefs",
    "securityfs",  "bpf",    "configfs", "pstore",    "efivarfs", "fusectl",
    "binfmt_misc", "mqueue", "devpts",   "hugetlbfs", NULL,
};

/*
 * A mount without nodev at mnt, from outside: accepted only when mnt is
 * exactly the path of one of jail_devs (index *d) not seen before (seen:
 * a bit per device), the mount is read-only, nosuid and noexec, and the
 * node at mnt in the agent's root (root: an O_PATH descriptor of
 * /proc/PID/root, opened on first use; resolved in it, no symlink
 * followed) is that character device, on the filesystem the mount line
 * names (majmin, its MAJ:MIN field). Returns 0, or -1 with *err (kinds as
 * verify_agent's: RUNNER_E_GONE and RUNNER_E_CLOSED when /proc/PID/root
 * cannot be opened).
 */
static int verify_dev_mount(pid_t agent, int *root, unsigned *seen, const char *mnt,
                            const char *majmin, const char *opts, struct runner_error *err)
{
	struct open_how how;
	struct stat st;
	char path[64];
	unsigned int fs_major, fs_minor;
	size_t d;
	int fd, ok, e;

	for (d = 0; d < JAIL_NDEVS && strcmp(mnt, jail_devs[d].path) != 0; d++)
		;
	if (d == JAIL_NDEVS)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a mount of the jail is writable, suid or dev: %.200s",
		                        mnt);
	if (!has_word(opts, "ro") || !has_word(opts, "nosuid") || !has_word(opts, "noexec"))
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a device mount of the jail is writable, suid or exec: %s",
		                        mnt);
	if (*seen & (1u << d))
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a device of the jail is mounted twice: %s", mnt);
	*seen |= 1u << d;
	if (*root < 0) {
		snprintf(path, sizeof(path), "/proc/%d/root", (int)agent);
		*root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*root < 0) {
			e = errno;
			return runner_error_set(err, proc_err(e),
			                        "cannot look at the jail's %s: %s", mnt, ename(e));
		}
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, *root, mnt + 1, &how, sizeof(how));
	ok = fd >= 0 && fstat(fd, &st) == 0 && sscanf(majmin, "%u:%u", &fs_major, &fs_minor) == 2 &&
	     S_ISCHR(st.st_mode) && major(st.st_rdev) == jail_devs[d].major &&
	     minor(st.st_rdev) == jail_devs[d].minor && major(st.st_dev) == fs_major &&
	     minor(st.st_dev) == fs_minor;
	if (fd >= 0)
		close(fd);
	if (!ok)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "the jail's %s is not the host's character device %u:%u",
		                        mnt, jail_devs[d].major, jail_devs[d].minor);
	return 0;
}

/*
 * The agent's mounts, from outside (/proc/PID/mountinfo): every one
 * read-only, nosuid and nodev but /tmp (a tmpfs: writable, nosuid,
 * nodev) and the devices of the jail's /dev (verify_dev_mount: not nodev,
 * at those exact paths only), and no filesystem of the host kernel's
 * state (host_state_fs) but the jail's /proc. What the builder made is
 * checked as it came out, whatever the binds held (a bind of a path that
 * is a symlink to /proc bound the host's procfs). Returns 0, or -1 with
 * *err naming the mount (kinds as verify_agent's).
 */
static int verify_mounts(pid_t agent, struct runner_error *err)
{
	char path[64];
	char *line = NULL, *field[RUNNER_JAIL_MOUNTINFO_FIELDS], *save = NULL, *tok;
	const char *mnt, *opts, *fstype;
	size_t cap = 0, i, nf;
	unsigned devs_seen = 0;
	FILE *f;
	int seen = 0, rc = 0, e, root = -1;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)agent);
	f = fopen(path, "re");
	if (!f) {
		e = errno;
		/* EINVAL: an exiting process has lost its namespaces */
		return runner_error_set(err, e == EINVAL ? RUNNER_E_GONE : proc_err(e),
		                        "cannot read the agent's mounts: %s", ename(e));
	}
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE
	 * SUPEROPTIONS, split on spaces (a space in a path is written \040):
	 * whole fields, never cut at a width, so a long path cannot spill into
	 * the options read after it. */
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		nf = 0;
		for (tok = strtok_r(line, " \n", &save); tok && nf < RUNNER_JAIL_MOUNTINFO_FIELDS;
		     tok = strtok_r(NULL, " \n", &save))
			field[nf++] = tok;
		for (i = 6; i < nf && strcmp(field[i], "-") != 0; i++)
			;
		if (nf < 7 || tok || i + 1 >= nf) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "cannot read the agent's mounts: a line is not a mount");
			rc = -1;
			break;
		}
		mnt = field[4];
		opts = field[5];
		fstype = field[i + 1];
		seen++;
		for (i = 0; host_state_fs[i] && rc == 0; i++)
			if (strcmp(fstype, host_state_fs[i]) == 0 &&
			    !(strcmp(fstype, "proc") == 0 && strcmp(mnt, "/proc") == 0)) {
				runner_error_set(
				    err, RUNNER_E_UNVERIFIED,
				    "a mount of the jail shows the host's kernel state: "
				    "%.200s (%.40s)",
				    mnt, fstype);
				rc = -1;
			}
		if (rc == 0 && strcmp(mnt, "/tmp") == 0 && strcmp(fstype, "tmpfs") != 0) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "the jail's /tmp is not its tmpfs (%.40s)", fstype);
			rc = -1;
		}
		if (rc == 0 && !has_word(opts, "nodev")) {
			rc = verify_dev_mount(agent, &root, &devs_seen, mnt, field[2], opts, err);
		} else if (rc == 0 && (!has_word(opts, "nosuid") ||
		                       (strcmp(mnt, "/tmp") != 0 && !has_word(opts, "ro")))) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "a mount of the jail is writable, suid or dev: %.200s",
			                 mnt);
			rc = -1;
		}
	}
	if (rc == 0 && (ferror(f) || seen == 0)) {
		runner_error_set(err, RUNNER_E_UNVERIFIED, "cannot read the agent's mounts");
		rc = -1;
	}
	if (root >= 0)
		close(root);
	free(line);
	fclose(f);
	return rc;
}

static int write_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	ssize_t w;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	w = write(fd, text, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Has pid 1 ended (before the runner could verify it), or does it end
 * within wait_ms (an exiting process loses its /proc entries before it
 * is a zombie)? Then 1, with *how saying so with its wait status (kind
 * RUNNER_E_AGENT); pid 1 is left to be reaped. Else 0, *how untouched. */
static int agent_ended(pid_t pid1, int pidfd, int wait_ms, struct runner_error *how)
{
	struct pollfd p;
	siginfo_t si;
	const char *sig;

	if (wait_ms > 0 && pidfd >= 0) {
		p.fd = pidfd;
		p.events = POLLIN;
		p.revents = 0;
		while (poll(&p, 1, wait_ms) < 0 && errno == EINTR)
			;
	}
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid1, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid1)
		return 0;
	if (si.si_code == CLD_EXITED) {
		runner_error_set(
		    how, RUNNER_E_AGENT,
		    "the agent ended before its confinement could be verified (exit status %d)",
		    si.si_status);
	} else {
		sig = sigabbrev_np(si.si_status);
		runner_error_set(
		    how, RUNNER_E_AGENT,
		    "the agent ended before its confinement could be verified (killed by SIG%s)",
		    sig ? sig : "?");
	}
	return 1;
}

/* How far the jail's setup has come, as the runner has heard. */
struct setup_seen {
	int built;     /* the builder reported the jail built */
	int confined;  /* pid 1 reported itself confined */
	int exec_done; /* end of file on exec_r */
};

/* How far await_setup() waits. */
enum setup_stage {
	SETUP_BUILT,    /* the builder reported the jail built */
	SETUP_CONFINED, /* and pid 1 confined: its verification can start */
	SETUP_EXEC      /* and the agent exec'd */
};

/*
 * Wait until the setup has come as far as want, or until a step failed,
 * the jail died or deadline_ms passed. *built gets the builder's report.
 * Returns 0, or -1 with *err (kind RUNNER_E_TIMEOUT when deadline_ms
 * passed).
 */
static int await_setup(pid_t pid1, int report_r, int exec_r, long long deadline_ms, long budget_ms,
                       enum setup_stage want, struct setup_seen *seen, struct report *built,
                       struct runner_error *err)
{
	struct pollfd p[2];
	struct report r;
	siginfo_t si;
	long long left;
	ssize_t got;
	int rc;

	while (!seen->built || (want >= SETUP_CONFINED && !seen->confined) ||
	       (want == SETUP_EXEC && !seen->exec_done)) {
		left = deadline_ms - runner_now_ms();
		if (left <= 0)
			return runner_error_set(err, RUNNER_E_TIMEOUT,
			                        "jail setup took longer than %ld ms", budget_ms);
		/* poll() skips a negative descriptor */
		p[0].fd = seen->built ? -1 : report_r;
		p[0].events = POLLIN;
		p[0].revents = 0;
		p[1].fd = seen->exec_done ? -1 : exec_r;
		p[1].events = POLLIN;
		p[1].revents = 0;
		rc = poll(p, 2, left > RUNNER_POLL_MAX_MS ? RUNNER_POLL_MAX_MS : (int)left);
		if (rc < 0 && errno != EINTR)
			return runner_error_set(err, RUNNER_E_SETUP, "poll failed: %s",
			                        ename(errno));
		if (rc <= 0)
			continue;
		/* pid 1's messages first: when one of the two fails, the other
		 * dies of it, and its end of file says nothing. */
		if (p[1].revents) {
			memset(&r, 0, sizeof(r));
			do
				got = read(exec_r, &r, sizeof(r));
			while (got < 0 && errno == EINTR);
			r.what[sizeof(r.what) - 1] = '\0';
			if (got == (ssize_t)sizeof(r) && r.kind == REPORT_FAILED)
				return runner_error_set(err, RUNNER_E_SETUP, "%s failed: %s",
				                        r.what, ename(r.err));
			if (got == (ssize_t)sizeof(r) && r.kind == REPORT_CONFINED && !seen->confined) {
				seen->confined = 1;
			} else if (got == 0 && seen->confined) {
				seen->exec_done = 1;
			} else if (got == 0) {
				/* pid 1 died before it was confined: the builder's
				 * report, if any, says why */
				seen->exec_done = 1;
				if (seen->built || p[0].revents)
					continue;
				return runner_error_set(err, RUNNER_E_SETUP,
				                        "the jail's pid 1 died during setup");
			} else {
				return runner_error_set(err, RUNNER_E_SETUP,
				                        "unexpected message from the jail");
			}
		}
		if (p[0].revents) {
			memset(&r, 0, sizeof(r));
			do
				got = recv(report_r, &r, sizeof(r), 0);
			while (got < 0 && errno == EINTR);
			r.what[sizeof(r.what) - 1] = '\0';
			if (got == (ssize_t)sizeof(r) && r.kind == REPORT_FAILED)
				return runner_error_set(err, RUNNER_E_SETUP, "%s failed: %s",
				                        r.what, ename(r.err));
			if (got != (ssize_t)sizeof(r) || r.kind != REPORT_BUILT) {
				memset(&si, 0, sizeof(si));
				if (waitid(P_PID, (id_t)pid1, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
				    si.si_pid == pid1)
					runner_error_set(err, RUNNER_E_SETUP,
					                 "the jail's pid 1 died during setup");
				else
					runner_error_set(err, RUNNER_E_SETUP,
					                 "the jail's builder died");
				return -1;
			}
			*built = r;
			seen->built = 1;
		}
		/* end of file before pid 1 said it was confined, and no report
		 * from the builder explains it */
		if (seen->exec_done && !seen->confined && seen->built)
			return runner_error_set(err, RUNNER_E_SETUP,
			                        "the jail's pid 1 died during setup");
	}
	if (want != SETUP_EXEC)
		return 0;
	/* End of file without a report: the exec happened, unless pid 1 died
	 * before it (a crash says nothing); a dead agent is no ready jail. */
	return agent_ended(pid1, -1, 0, err) ? -1 : 0;
}

/* Has this process a controlling terminal? /dev/tty opens if it has, and
 * fails with ENXIO if it has none; any other answer counts as yes. */
static int has_controlling_tty(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno != ENXIO;
}

int runner_jail_start(const struct runner_spec *spec, const char *agent_path, struct runner_jail *j,
                      struct runner_error *err)
{
	static const char *const default_binds[] = {"/usr"};
	/* The seventh, the network namespace, is made by pid 1 itself while
	 * the builder builds the filesystem (jail_main). */
	const unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
	                            CLONE_NEWUTS | CLONE_NEWCGROUP;
	struct jail_args a;
	struct report built;
	struct stat st;
	char map[64];
	const char *bpath;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, go[2] = {-1, -1};
	int rep[2] = {-1, -1}, ex[2] = {-1, -1};
	uid_t host_uid;
	gid_t host_gid;
	size_t i;
	int rc = -1;
	int pidfd_ret = -1;
	int e;
	long budget;
	long long deadline;
	struct setup_seen seen;
	struct runner_error ended;

	memset(&a, 0, sizeof(a));
	memset(&built, 0, sizeof(built));
	memset(j, 0, sizeof(*j));
	j->pid = -1;
	j->to_agent = j->from_agent = j->err_agent = j->pidfd = -1;
	j->agent_status = -1;
	j->agent_cpu_ms = -1;
	j->guard = -1;
	j->lifeline = -1;
	j->cpu_seconds = spec->limits.cpu_seconds;
	a.spec = spec;
	a.agent_path = agent_path;
	a.agent_fd = -1;
	for (i = 0; i < JAIL_NDEVS; i++)
		a.dev_fd[i] = -1;

	/* Everything the jail holds is opened here, by the runner, before
	 * any namespace exists. */
	a.agent_fd = open(agent_path, O_PATH | O_CLOEXEC);
	if (a.agent_fd < 0 || fstat(a.agent_fd, &st) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot open the agent program: %s",
		                 ename(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH)) {
		runner_error_set(err, RUNNER_E_SETUP,
		                 "the agent program is not a file every user may execute");
		goto out;
	}
	a.nbinds = spec->binds ? json_array_size(spec->binds) : 1;
	if (a.nbinds > RUNNER_SPEC_MAX_BINDS) {
		runner_error_set(err, RUNNER_E_SETUP, "more than %d binds", RUNNER_SPEC_MAX_BINDS);
		goto out;
	}
	for (i = 0; i < a.nbinds; i++)
		a.bind_fd[i] = -1;
	for (i = 0; i < a.nbinds; i++) {
		bpath = spec->binds ? json_string_value(json_array_get(spec->binds, i))
		                    : default_binds[i];
		a.bind_path[i] = bpath;
		a.bind_fd[i] = open(bpath, O_PATH | O_CLOEXEC);
		if (a.bind_fd[i] < 0) {
			runner_error_set(err, RUNNER_E_SETUP, "cannot open bind %.200s: %s", bpath,
			                 ename(errno));
			goto out;
		}
	}
	/* The devices of the jail's /dev: they must be these devices
	 * (a host whose /dev/null is something else fails closed). */
	for (i = 0; i < JAIL_NDEVS; i++)
		if (open_jail_dev(i, &a.dev_fd[i], err) != 0)
			goto out;
	a.new_session = has_controlling_tty();
	host_uid = geteuid() == 0 ? RUNNER_JAIL_HOST_UID : geteuid();
	host_gid = geteuid() == 0 ? RUNNER_JAIL_HOST_GID : getegid();
	/* Root's supplementary groups would follow the jail's processes
	 * (setgroups is denied inside): drop them from this throw-away
	 * process first. */
	if (geteuid() == 0 && setgroups(0, NULL) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "setgroups failed: %s", ename(errno));
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(errp, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot create the jail's pipes: %s",
		                 ename(errno));
		goto out;
	}
	a.in_r = in[0];
	a.in_w = in[1];
	a.out_r = out[0];
	a.out_w = out[1];
	a.err_r = errp[0];
	a.err_w = errp[1];
	a.go_r = go[0];
	a.go_w = go[1];
	a.report_r = rep[0];
	a.report_w = rep[1];
	a.exec_r = ex[0];
	a.exec_w = ex[1];
	fflush(stdout);
	fflush(stderr);
	/* fork()-like clone (no new stack): pid 1 of the new namespaces, the
	 * agent once it execs. CLONE_PIDFD: pidfd_ret gets a pidfd of it,
	 * readable once it has exited, for waits with a deadline. */
	j->pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD | CLONE_PIDFD, NULL, &pidfd_ret, NULL,
	                        NULL);
	if (j->pid < 0) {
		e = errno;
		/* Name the primitive that is missing, as the preflight's trial
		 * finds it (a user namespace refused here, ...): on this
		 * failure path only. */
		if (missing_ns_kind(err) == 0) {
			if (runner_jail_preflight(1, err) == 0)
				runner_error_set(err, RUNNER_E_SETUP,
				                 "clone of the namespaces failed: %s", ename(e));
			else
				runner_error_append(err, " (clone: %s)", ename(e));
		}
		j->pid = -1;
		goto out;
	}
	if (j->pid == 0)
		jail_main(&a);
	/* From here on a write to a dead agent is an error return, not the
	 * runner's death (set after the clone: the agent must not inherit an
	 * ignored SIGPIPE). */
	signal(SIGPIPE, SIG_IGN);

	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	close_fd(&go[0]);
	close_fd(&rep[1]);
	close_fd(&ex[1]);
	j->pidfd = pidfd_ret;
	/* Jail root = an unprivileged host uid: RLIMIT_NPROC binds it, and
	 * nothing it does is done as host root. */
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_uid);
	if (write_file(j->pid, "uid_map", map) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "uid_map failed: %s", ename(errno));
		goto out;
	}
	if (write_file(j->pid, "setgroups", "deny") != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "setgroups deny failed: %s", ename(errno));
		goto out;
	}
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_gid);
	if (write_file(j->pid, "gid_map", map) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "gid_map failed: %s", ename(errno));
		goto out;
	}
	/* One byte for pid 1, one for the builder. */
	if (write(go[1], "gg", 2) != 2) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the jail: %s", ename(errno));
		goto out;
	}

	/* Setup gets RUNNER_JAIL_SETUP_MS, and never more than the run's wall
	 * clock. The guard is forked once the jail is built; verification
	 * starts once pid 1 is confined, while it execs; the first step
	 * waits for the exec. */
	budget = spec->limits.wall_ms < RUNNER_JAIL_SETUP_MS ? spec->limits.wall_ms
	                                                     : RUNNER_JAIL_SETUP_MS;
	deadline = runner_now_ms() + budget;
	memset(&seen, 0, sizeof(seen));
	if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_BUILT, &seen, &built, err) !=
	    0)
		goto out;
	/* From here on, the jail dies with the runner however the runner
	 * dies; until now pid 1 ran only our code, which exits on end of
	 * file on go or once it finds the runner gone, and dies of its
	 * parent-death signal. Forked now, not with the jail: while pid 1
	 * makes its network namespace and the builder the filesystem, a
	 * third process wanting a CPU delays one of them (measured here: 0.1
	 * to 0.2 ms of a 4 ms run). pid 1 execs only after the last byte. */
	j->guard = guard_start(j->pidfd, &j->lifeline);
	if (j->guard < 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the jail's guard: %s",
		                 ename(errno));
		goto out;
	}
	/* EPIPE: pid 1 failed a step meanwhile (or died), and the next wait
	 * reads its report. */
	if (write(go[1], "g", 1) != 1 && errno != EPIPE) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the agent: %s", ename(errno));
		goto out;
	}
	close_fd(&go[1]);
	if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_CONFINED, &seen, &built,
	                err) != 0)
		goto out;
	/* An agent whose /proc entries went missing under the check is gone
	 * or on its way out: say that, once it has ended
	 * (RUNNER_JAIL_EXIT_WAIT_MS for it to finish exiting, on this path
	 * only). Any other failed check stands as it is. */
	e = verify_agent(j->pid, &built, host_uid, err);
	if (e != 0 && err->kind == RUNNER_E_CLOSED && !seen.exec_done) {
		/* not root: verify after the exec, as the agent */
		if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_EXEC, &seen, &built,
		                err) != 0)
			goto out;
		e = verify_agent(j->pid, &built, host_uid, err);
	}
	if (e != 0 && err->kind == RUNNER_E_GONE) {
		/* Its exec failed (pid 1's report says why) or it ended:
		 * wait a little for either to show. */
		if (await_setup(j->pid, rep[0], ex[0], runner_now_ms() + RUNNER_JAIL_EXIT_WAIT_MS,
		                RUNNER_JAIL_EXIT_WAIT_MS, SETUP_EXEC, &seen, &built, &ended) != 0 &&
		    ended.kind != RUNNER_E_TIMEOUT)
			*err = ended;
		else
			agent_ended(j->pid, j->pidfd, RUNNER_JAIL_EXIT_WAIT_MS, err);
	}
	if (e != 0)
		goto out;
	if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_EXEC, &seen, &built, err) !=
	    0)
		goto out;
	j->to_agent = in[1];
	j->from_agent = out[0];
	j->err_agent = errp[0];
	in[1] = out[0] = errp[0] = -1;
	rc = 0;
out:
	close_fd(&a.agent_fd);
	for (i = 0; i < a.nbinds && i < RUNNER_SPEC_MAX_BINDS; i++)
		close_fd(&a.bind_fd[i]);
	for (i = 0; i < JAIL_NDEVS; i++)
		close_fd(&a.dev_fd[i]);
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&go[0]);
	close_fd(&go[1]);
	close_fd(&rep[0]);
	close_fd(&rep[1]);
	close_fd(&ex[0]);
	close_fd(&ex[1]);
	if (rc != 0)
		runner_jail_destroy(j, 0);
	return rc;
}

/* The CPU time of the process pid itself, in ms: utime + stime of
 * /proc/PID/stat, which a zombie still has (not the children it reaped,
 * whose time rusage would add; RLIMIT_CPU counts a process's own). -1 if
 * unreadable. */
static long long own_cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	long tck = sysconf(_SC_CLK_TCK);
	const char *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || tck <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* after the command's closing parenthesis (the command may hold
	 * one): state ppid pgrp session tty_nr tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	                 &st) != 2)
		return -1;
	return (long long)((ut + st) * 1000ULL / (unsigned long long)tck);
}

/* The agent's end as text. A SIGKILL the runner did not send (it sends
 * one only when it destroys the jail, after asking for this text) with
 * the agent's own CPU time at the limit is the CPU limit's
 * (agent_confine). "At the limit" has a tolerance of a quarter of the
 * limit, 2 s at most (so that a SIGKILL from elsewhere, the OOM killer's,
 * is not taken for the limit's a minute early), two clock ticks at least:
 * the kernel enforces RLIMIT_CPU on the tick-sampled user + system time,
 * while /proc reports the precise run time split in their ratio, and on a
 * busy virtual machine the sampled time runs ahead of the precise one
 * (measured here at a load of 4 on 2 CPUs: spins killed at a 1 s limit
 * read back 840 to 950 ms; a tenth of the limit failed 2 runs in 5). */
static void describe(const struct runner_jail *j, int status, struct runner_error *how)
{
	long tck = sysconf(_SC_CLK_TCK);
	long long slack_ms = j->cpu_seconds * (long long)RUNNER_JAIL_CPU_SLACK_MS_PER_S;
	/* a tick is 10 ms when the clock's rate is unknown */
	long long ticks_ms =
	    tck > 0 ? RUNNER_JAIL_CPU_SLACK_TICKS * 1000 / tck : RUNNER_JAIL_CPU_SLACK_TICKS * 10;
	const char *sig;

	if (slack_ms > RUNNER_JAIL_CPU_SLACK_MAX_MS)
		slack_ms = RUNNER_JAIL_CPU_SLACK_MAX_MS;
	if (slack_ms < ticks_ms)
		slack_ms = ticks_ms;

	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && j->cpu_seconds > 0 &&
	    j->agent_cpu_ms >= 0 && j->agent_cpu_ms + slack_ms >= j->cpu_seconds * 1000LL) {
		runner_error_set(how, RUNNER_E_AGENT,
		                 "agent killed by SIGKILL at its CPU time limit of %lld s",
		                 (long long)j->cpu_seconds);
	} else if (WIFSIGNALED(status)) {
		sig = sigabbrev_np(WTERMSIG(status));
		runner_error_set(how, RUNNER_E_AGENT, "agent killed by SIG%s", sig ? sig : "?");
	} else if (WIFEXITED(status)) {
		runner_error_set(how, RUNNER_E_AGENT, "agent exited with status %d",
		                 WEXITSTATUS(status));
	} else {
		runner_error_set(how, RUNNER_E_AGENT, "agent ended (wait status %d)", status);
	}
}

int runner_jail_agent_reason(void *ctx, long long deadline_ms, struct runner_error *how)
{
	struct runner_jail *j = ctx;
	struct pollfd p;
	long long left;
	pid_t got;
	int status, rc;

	while (j->agent_status < 0 && j->pid > 0 && j->pidfd >= 0) {
		left = deadline_ms - runner_now_ms();
		if (left <= 0)
			break;
		p.fd = j->pidfd;
		p.events = POLLIN;
		p.revents = 0;
		rc = poll(&p, 1, left > RUNNER_POLL_MAX_MS ? RUNNER_POLL_MAX_MS : (int)left);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		/* The agent is pid 1: once it is reaped, the kernel has killed
		 * and reaped the rest of the jail too. Its own CPU time first,
		 * while it is a zombie. */
		j->agent_cpu_ms = own_cpu_ms(j->pid);
		do
			got = waitpid(j->pid, &status, WNOHANG | __WALL);
		while (got < 0 && errno == EINTR);
		if (got != j->pid)
			break;
		j->agent_status = status;
		j->pid = -1;
	}
	if (j->agent_status < 0)
		return -1;
	describe(j, j->agent_status, how);
	return 0;
}

void runner_jail_end_input(void *ctx)
{
	struct runner_jail *j = ctx;

	close_fd(&j->to_agent);
}

int runner_jail_destroy(struct runner_jail *j, long long grace_deadline_ms)
{
	struct runner_error ignored;
	int status;
	pid_t p;

	close_fd(&j->to_agent);
	if (j->pid > 0 && grace_deadline_ms > runner_now_ms())
		runner_jail_agent_reason(j, grace_deadline_ms, &ignored);
	close_fd(&j->from_agent);
	close_fd(&j->err_agent);
	if (j->pid > 0) {
		/* Exited by itself (a zombie not reaped yet) or still running:
		 * only the latter is killed here (j->killed, the run's
		 * shutdown note). */
		do
			p = waitpid(j->pid, &status, WNOHANG | __WALL);
		while (p < 0 && errno == EINTR);
		if (p == j->pid) {
			j->agent_status = status;
			j->pid = -1;
		} else if (p == 0) {
			j->killed = 1;
		}
	}
	if (j->pid > 0) {
		/* pid 1 of the namespace: the kernel kills every process in
		 * it. Through the pidfd when there is one (it cannot name
		 * another process if this one was reaped behind our back);
		 * by number only when pidfd_open() failed right after the
		 * clone, before anything could reap it. */
		if (j->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
		else
			kill(j->pid, SIGKILL);
		do
			p = waitpid(j->pid, &status, __WALL);
		while (p < 0 && errno == EINTR);
		if (p != j->pid)
			j->lost = 1; /* not ours to reap any more: never signal it by number */
		j->pid = -1;
	}
	close_fd(&j->pidfd);
	guard_stop(j);
	return j->lost ? -1 : 0;
}

/* ---- preflight ------------------------------------------------------------ */

/* The full preflight's trial child: its exit status is the step that
 * failed (0: none). */
enum trial_step {
	TRIAL_OK = 0,
	TRIAL_USERNS = 10, /* unshare of a user and a mount namespace */
	TRIAL_PRIVATE,     /* making the mounts private */
	TRIAL_TMPFS,       /* a tmpfs */
	TRIAL_PIVOT,       /* pivot_root into it */
	TRIAL_DETACH,      /* detaching the old root */
};

int runner_jail_preflight(int trial, struct runner_error *err)
{
	FILE *f;
	long max = 0;
	size_t d;
	int status;
	int step;
	int fd, e;
	pid_t pid;

	/* The listing names a missing namespace kind; before a run the
	 * clone() fails without it, and runner_jail_start() names it then
	 * (reading the runner's namespaces costs a /proc lookup each, which
	 * verify_agent() does anyway, after the agent's exec). */
	if (trial && missing_ns_kind(err) != 0)
		return -1;
	/* So do the jail's devices (checked again by each run's start) */
	for (d = 0; trial && d < JAIL_NDEVS; d++) {
		e = open_jail_dev(d, &fd, err);
		if (fd >= 0)
			close(fd);
		if (e != 0)
			return -1;
	}
	f = fopen("/proc/sys/user/max_user_namespaces", "re");
	if (!f || fscanf(f, "%ld", &max) != 1 || max <= 0) {
		if (f)
			fclose(f);
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "user namespaces disabled (user.max_user_namespaces is 0)");
	}
	fclose(f);
	if (seccomp_api_get() < 3 || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return runner_error_set(err, RUNNER_E_MISSING, "seccomp filter unavailable");
	/* The runner waits for the agent's end through a pidfd (Linux 5.3). */
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0)
		return runner_error_set(err, RUNNER_E_MISSING, "pidfd_open unavailable: %s",
		                        ename(errno));
	close(fd);
	if (!trial)
		return 0;
	/* Try the primitives for real in a throw-away child: a user and mount
	 * namespace, a tmpfs, pivot_root into it. Its exit code is the step
	 * that failed. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return runner_error_set(err, RUNNER_E_INTERNAL, "fork failed: %s", ename(errno));
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
			_exit(TRIAL_USERNS);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
			_exit(TRIAL_PRIVATE);
		if (mount("tmpfs", JAIL_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0)
			_exit(TRIAL_TMPFS);
		if (chdir(JAIL_ROOT) != 0 || syscall(SYS_pivot_root, ".", ".") != 0)
			_exit(TRIAL_PIVOT);
		if (umount2(".", MNT_DETACH) != 0)
			_exit(TRIAL_DETACH);
		_exit(TRIAL_OK);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return runner_error_set(err, RUNNER_E_INTERNAL, "waitpid failed: %s",
			                        ename(errno));
	step = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	switch (step) {
	case TRIAL_OK:
		return 0;
	case TRIAL_USERNS:
		runner_error_set(err, RUNNER_E_MISSING,
		                 "cannot create a user namespace (unshare CLONE_NEWUSER)");
		break;
	case TRIAL_PRIVATE:
		runner_error_set(err, RUNNER_E_MISSING,
		                 "cannot make mounts private in a user namespace");
		break;
	case TRIAL_TMPFS:
		runner_error_set(err, RUNNER_E_MISSING, "cannot mount a tmpfs in a user namespace");
		break;
	case TRIAL_PIVOT:
		runner_error_set(err, RUNNER_E_MISSING,
		                 "pivot_root unavailable in a user namespace");
		break;
	case TRIAL_DETACH:
		runner_error_set(err, RUNNER_E_MISSING,
		                 "cannot detach the old root in a user namespace");
		break;
	default:
		runner_error_set(err, RUNNER_E_MISSING, "namespace trial child died (status %d)",
		                 status);
		break;
	}
	return -1;
}
