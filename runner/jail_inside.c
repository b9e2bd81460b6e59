/*
 * Inside the namespace jail (runner/jail.h), until the agent's exec: pid 1
 * (jail_pid1_main), the agent-to-be, which forks the builder and confines
 * itself, and the builder (pid 2, build_jail), which builds the filesystem
 * and pivots into it. Both report a failed step to the runner with its
 * errno and exit; the runner's side is runner/jail.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/agent.h"
#include "runner/gateway_env.h"
#include "runner/fdpass.h"
#include "runner/jail_internal.h"

static void report_raw(int fd, const struct jail_report *r)
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
	struct jail_report r;

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
	set_limit(fd, RLIMIT_NOFILE, (rlim_t)l->open_files, (rlim_t)l->open_files, "RLIMIT_NOFILE");
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
 * The agent's descriptors (runner/agent.h): stdin /dev/null (the jail's,
 * pid 1's root being the jail's once the builder is done), stdout and
 * stderr the log pipe, the protocol's two pipes at 3 and 4. The pipes go
 * to 0, 1, 2 first (the runner's stdio, never one of them), so that no
 * later dup2() overwrites one still to be copied, and no descriptor is
 * made at or above RLIMIT_NOFILE (already set). Returns 0, or -1.
 */
static int agent_fds(const struct jail_args *a)
{
	if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0)
		return -1;
	if (dup2(0, RUNNER_AGENT_PROTO_IN_FD) < 0 || dup2(1, RUNNER_AGENT_PROTO_OUT_FD) < 0 ||
	    dup2(2, 1) < 0)
		return -1;
	close(0);
	/* the lowest free descriptor: 0 */
	return open("/dev/null", O_RDONLY) == 0 ? 0 : -1;
}

/*
 * The gateway's end in the jail (pid 1, in its new network namespace,
 * before it confines itself): the loopback up, a socket listening on
 * 127.0.0.1:RUNNER_GATEWAY_PORT, sent to the runner on gw_w and closed
 * here. The runner serves it from outside (a socket belongs to the
 * network it was made in, whoever accepts on it), so the gateway is
 * reachable from this jail only, and nothing else is listening.
 */
static void gateway_listen(struct jail_args *a, int fd)
{
	struct sockaddr_in sin;
	struct ifreq ifr;
	int s, one = 1;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		die(fd, "socket for the jail's loopback");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		die(fd, "reading the jail's loopback");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		die(fd, "bringing the jail's loopback up");
	close(s);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		die(fd, "socket for the gateway");
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		die(fd, "SO_REUSEADDR on the gateway's socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(RUNNER_GATEWAY_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		die(fd, "bind of the gateway's socket");
	if (listen(s, RUNNER_GATEWAY_BACKLOG) != 0)
		die(fd, "listen on the gateway's socket");
	if (runner_fd_send(a->gw_w, s) != 0)
		die(fd, "sending the gateway's socket");
	close(s);
	close(a->gw_w);
	a->gw_w = -1;
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
void jail_pid1_main(struct jail_args *a)
{
	static char *const argv[] = {"agent", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin",
	                             "HOME=/",
	                             "LANG=C.UTF-8",
	                             RUNNER_AGENT_PROTO_ENV_IN,
	                             RUNNER_AGENT_PROTO_ENV_OUT,
	                             RUNNER_SDK_ENV,
	                             NULL};
	static char *const envp_gateway[] = {"PATH=/usr/bin:/bin",
	                                     "HOME=/",
	                                     "LANG=C.UTF-8",
	                                     RUNNER_AGENT_PROTO_ENV_IN,
	                                     RUNNER_AGENT_PROTO_ENV_OUT,
	                                     RUNNER_SDK_ENV,
	                                     RUNNER_GATEWAY_ENV,
	                                     NULL};
	char repeat_env[32];
	char *env[sizeof(envp_gateway) / sizeof(envp_gateway[0]) + 1];
	char *const *base;
	size_t ne = 0;
	const struct runner_limits *l = &a->spec->limits;
	int fd = a->exec_w;
	struct jail_report r;
	pid_t builder, p;
	int status;

	close(a->in_w);
	close(a->out_r);
	close(a->err_r);
	close(a->go_w);
	close(a->report_r);
	close(a->exec_r);
	if (a->gw_r >= 0)
		close(a->gw_r);
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
	if (a->spec->gateway)
		gateway_listen(a, fd);
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
	if (agent_fds(a) != 0)
		die(fd, "dup2");
	/* Required: pid 1 was cloned in the runner's working directory, on
	 * the host, and pivot_root() moved it only if it was the old root
	 * (the runner cannot check this one from outside: the agent may
	 * change directory as soon as it runs). */
	if (chdir("/") != 0)
		die(fd, "chdir /");
	/* Every descriptor above the protocol's closes at exec (exec_w
	 * included: its end of file is how the runner learns that the exec
	 * succeeded). */
	if (syscall(SYS_close_range, RUNNER_AGENT_PROTO_OUT_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		die(fd, "close_range");
	/* No agent code runs before the runner's guard stands: the runner
	 * forks it once the builder has reported (while this process waits
	 * for the builder's exit, rather than while the two compete for the
	 * CPUs) and then sends the last byte. */
	if (await_go(a->go_r) != 0)
		_exit(127);
	/* Last: nothing after it maps memory (a sanitizer build of this code
	 * would fail to; the agent starts under the limit either way). */
	/* the environment before the limit: a comparison's run tells its
	 * agent which repeat it is (docs/agent-protocol.md) */
	for (base = a->spec->gateway ? envp_gateway : envp; *base; base++)
		env[ne++] = *base;
	if (a->spec->has_repeat) {
		snprintf(repeat_env, sizeof(repeat_env), "OLIVARES_REPEAT=%d", a->spec->repeat);
		env[ne++] = repeat_env;
	}
	env[ne] = NULL;
	set_limit(fd, RLIMIT_AS, (rlim_t)l->memory_mb << 20, (rlim_t)l->memory_mb << 20,
	          "RLIMIT_AS");
	execve("/agent", argv, env);
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
	struct jail_report r;
	struct stat st;
	int fd = a->report_w;
	size_t i;

	/* Of the agent's pipes and the runner's stdio the builder keeps
	 * nothing: the runner sees end of file when the agent is gone. */
	close(a->exec_w);
	close(a->in_r);
	close(a->out_w);
	close(a->err_w);
	if (a->gw_w >= 0)
		close(a->gw_w);
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
	if (a->sdk_fd >= 0) {
		close(a->sdk_fd);
		a->sdk_fd = open(a->spec->sdk_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (a->sdk_fd < 0)
			die(fd, "opening the agent module's directory");
	}
	if (a->gateway_dir_fd >= 0) {
		close(a->gateway_dir_fd);
		a->gateway_dir_fd = open(a->gateway_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (a->gateway_dir_fd < 0)
			die(fd, "opening the gateway's directory");
	}
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
		if (!jail_is_dev(a->dev_fd[i], i)) {
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
	if (a->sdk_fd >= 0) {
		snprintf(path, sizeof(path), JAIL_ROOT RUNNER_SDK_JAIL_DIR);
		make_target(fd, a->sdk_fd, path);
		bind_ro(fd, a->sdk_fd, path, "the agent module");
	}
	if (a->gateway_dir_fd >= 0) {
		snprintf(path, sizeof(path), JAIL_ROOT RUNNER_GATEWAY_JAIL_DIR);
		make_target(fd, a->gateway_dir_fd, path);
		bind_ro(fd, a->gateway_dir_fd, path, "the gateway's directory");
	}
	mkdirs(fd, (char[]){JAIL_ROOT "/proc"}, 0555);
	/* Read-only: nothing of the host is in this proc, but some of its
	 * files write to what the jail shares with the runner's session,
	 * such as the scheduler autogroup's nice value. */
	if (mount("proc", JAIL_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	          NULL) != 0)
		die(fd, "proc mount");
	mkdirs(fd, (char[]){JAIL_ROOT "/tmp"}, 01777);
	/* Its inodes too, not only its size (RUNNER_TMP_INODES says why). */
	snprintf(opts, sizeof(opts), RUNNER_TMP_OPTIONS, l->tmpfs_mb,
	         RUNNER_TMP_INODES(l->tmpfs_mb));
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
