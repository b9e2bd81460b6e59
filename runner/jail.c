/*
 * The namespace jail (runner/jail.h). Two halves:
 *
 * - the runner (outside): opens what the jail will hold (O_PATH, before any
 *   namespace exists, so no path is resolved by the jail's unprivileged
 *   uid), creates the pipes, clone()s pid 1 into new namespaces, writes its
 *   uid/gid maps, lets it go, then waits for its report and verifies the
 *   agent's confinement from outside through /proc;
 * - pid 1 (inside): forks the agent first (which makes the network
 *   namespace and confines itself meanwhile, agent_main), builds the
 *   filesystem, pivots into it, joins the agent's network namespace, lets
 *   the agent exec /agent, and then only reaps.
 *
 * Every setup step is checked; the first one that fails is reported to the
 * runner with its errno ("pivot_root failed: EPERM"), and the run fails
 * closed: no step is sent to an agent that is not fully confined.
 *
 * Reports travel on a SOCK_SEQPACKET socket pair: messages keep their
 * boundaries and order, and with SO_PASSCRED the kernel stamps each one
 * with its sender's pid as the runner sees it, which is how the runner
 * learns the agent's host pid to verify its confinement (this kernel has no
 * /proc/PID/task/TID/children).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include "runner/jail.h"

/* Where pid 1 builds the new root: /tmp of its private mount namespace
 * (a tmpfs mounted over it there), so nothing is created on the host. */
#define JAIL_ROOT "/tmp"
#define JAIL_MAX_BINDS 32
#define JAIL_SETUP_MS 5000

enum report_kind { REPORT_HELLO = 1, REPORT_READY, REPORT_FAILED, REPORT_EXITED };

struct report {
	int kind;
	int err;    /* errno of the failed step */
	int status; /* wait status of the agent (REPORT_EXITED) */
	char what[160];
	/* pid 1's root once the jail is built (REPORT_READY from pid 1) */
	unsigned long long root_dev, root_ino;
};

/* What pid 1 needs, prepared by the runner before clone(). */
struct jail_args {
	const struct runner_spec *spec;
	int in_r, out_w, err_w, go_r, report_w; /* pid 1's ends */
	int in_w, out_r, err_r, go_w, report_r; /* the runner's ends */
	const char *agent_path;
	int agent_fd;                /* O_PATH of the agent file */
	int bind_fd[JAIL_MAX_BINDS]; /* O_PATH of each bind */
	const char *bind_path[JAIL_MAX_BINDS];
	size_t nbinds;
};

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown error";
}

static void report_raw(int fd, const struct report *r)
{
	ssize_t w;

	/* fd is a report socket or, in the agent before exec, a pipe. */
	do {
		w = send(fd, r, sizeof(*r), MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, r, sizeof(*r));
	} while (w < 0 && errno == EINTR);
}

static void report_send(int fd, int kind, int err, int status, const char *what)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.err = err;
	r.status = status;
	if (what)
		snprintf(r.what, sizeof(r.what), "%s", what);
	report_raw(fd, &r);
}

/* A setup step failed inside the jail: say which, then die. */
static void __attribute__((noreturn)) die(int fd, const char *what)
{
	report_send(fd, REPORT_FAILED, errno, 0, what);
	_exit(127);
}

/* ---- the agent: confine, then exec ---------------------------------------- */

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
 * root, before its exec (agent_main). Reports failures on execp. */
static void agent_confine(const struct jail_args *a, int execp)
{
	const struct runner_limits *l = &a->spec->limits;
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	struct sock_fprog prog;
	int c;

	/* Tell the runner our pid (the kernel stamps the message with it as
	 * the runner sees it), so it can verify us from outside. */
	report_send(a->report_w, REPORT_HELLO, 0, 0, NULL);
	if (setsid() < 0)
		die(execp, "setsid");
	set_limit(execp, RLIMIT_CPU, (rlim_t)l->cpu_seconds, (rlim_t)l->cpu_seconds + 1,
	          "RLIMIT_CPU");
	set_limit(execp, RLIMIT_NOFILE, (rlim_t)l->open_files, (rlim_t)l->open_files,
	          "RLIMIT_NOFILE");
	set_limit(execp, RLIMIT_NPROC, (rlim_t)l->processes, (rlim_t)l->processes, "RLIMIT_NPROC");
	set_limit(execp, RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
	/* No capability survives, not even in the jail's user namespace:
	 * empty bounding set (so exec as uid 0 regains nothing), no ambient,
	 * nothing permitted, effective or inheritable. */
	for (c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		die(execp, "PR_CAPBSET_DROP");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		die(execp, "PR_CAP_AMBIENT_CLEAR_ALL");
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) != 0)
		die(execp, "capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die(execp, "PR_SET_NO_NEW_PRIVS");
	/* As seccomp_load() would: after no_new_privs, no flag. (The kernel
	 * copies the program; it never writes to it.) */
	prog.len = sizeof(agent_filter_insns) / sizeof(agent_filter_insns[0]);
	prog.filter = (struct sock_filter *)agent_filter_insns;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		die(execp, "seccomp filter");
}

/* One byte from pid 1 on fsp. Returns 0, or -1 when pid 1 is gone (it
 * reports why itself, and its exit ends every process of the jail). */
static int await_pid1(int fsp)
{
	ssize_t got;
	char b;

	do
		got = read(fsp, &b, 1);
	while (got < 0 && errno == EINTR);
	return got == 1 ? 0 : -1;
}

/*
 * The agent, from its fork to its exec. pid 1 forks it first thing, so
 * that the two longest steps of a jail run side by side: the agent makes
 * the jail's network namespace (unshare: about half a millisecond of
 * kernel work on these machines, the most costly namespace by far) and
 * confines itself while pid 1 builds the filesystem. pid 1 joins that
 * namespace (its descriptor travels on netp: pid 1 may not open this
 * process's /proc entries, which is not dumpable), and says on fsp when
 * the uid maps are written ("g": the agent may take the jail's uid) and
 * when the jail is complete ("f": the agent may exec). Until then the agent
 * runs only this code, and of the host it holds only what pid 1 held when
 * it forked: its root (which pivot_root() moves to the new root for every
 * process of the mount namespace that was on the old one; verify_agent()
 * checks it from outside), its working directory (left here for "/") and
 * close-on-exec descriptors. Reports failures on netp until the namespace
 * exists, then on execp (close-on-exec: EOF means the exec happened).
 */
static void __attribute__((noreturn))
agent_main(const struct jail_args *a, int netp, int fsp, int execp)
{
	static char *const argv[] = {"agent", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/", "LANG=C.UTF-8", NULL};
	const struct runner_limits *l = &a->spec->limits;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct report r;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	ssize_t got;
	int nsfd;

	if (unshare(CLONE_NEWNET) != 0)
		die(netp, "unshare of the network namespace");
	nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		die(netp, "opening the network namespace");
	memset(&r, 0, sizeof(r));
	r.kind = REPORT_READY;
	memset(&mh, 0, sizeof(mh));
	memset(&cbuf, 0, sizeof(cbuf));
	iov.iov_base = &r;
	iov.iov_len = sizeof(r);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &nsfd, sizeof(int));
	do
		got = sendmsg(netp, &mh, MSG_NOSIGNAL);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(r))
		die(netp, "sending the network namespace");
	close(nsfd);
	close(netp);

	if (await_pid1(fsp) != 0)
		_exit(127);
	/* As pid 1 does: the jail's root, and nobody reads our copy of the
	 * spec until the exec replaces it. */
	if (setresgid(0, 0, 0) != 0)
		die(execp, "setresgid");
	if (setresuid(0, 0, 0) != 0)
		die(execp, "setresuid");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die(execp, "PR_SET_DUMPABLE");
	agent_confine(a, execp);

	if (await_pid1(fsp) != 0)
		_exit(127);
	close(fsp);
	if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 || dup2(a->err_w, 2) < 0)
		die(execp, "dup2");
	if (chdir("/") != 0)
		die(execp, "chdir /");
	/* Every descriptor above stderr closes at exec (execp included: its
	 * EOF is how pid 1 learns that exec succeeded). */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		die(execp, "close_range");
	/* Last: nothing after it maps memory (a sanitizer build of this code
	 * would fail to; the agent starts under the limit either way). */
	set_limit(execp, RLIMIT_AS, (rlim_t)l->memory_mb << 20, (rlim_t)l->memory_mb << 20,
	          "RLIMIT_AS");
	execve("/agent", argv, envp);
	die(execp, "execve /agent");
}

/* ---- pid 1: build the jail ---------------------------------------------- */

/* One byte to the agent on fsp. A failure means the agent is gone: it has
 * said why (netp or execp), or pid 1 sees it die. */
static void tell_agent(int fsp, char what)
{
	ssize_t w;

	do
		w = write(fsp, &what, 1);
	while (w < 0 && errno == EINTR);
}

/* The agent's first report on netp, and the descriptor it carries (*nsfd,
 * -1 if none). Returns 1, or 0 on EOF, a short message or an error. */
static int recv_netns(int fd, struct report *r, int *nsfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	ssize_t got;

	*nsfd = -1;
	memset(&mh, 0, sizeof(mh));
	memset(r, 0, sizeof(*r));
	iov.iov_base = r;
	iov.iov_len = sizeof(*r);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	do
		got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&mh); got > 0 && c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(nsfd, CMSG_DATA(c), sizeof(int));
	if (got != (ssize_t)sizeof(*r)) {
		if (*nsfd >= 0)
			close(*nsfd);
		*nsfd = -1;
		return 0;
	}
	r->what[sizeof(r->what) - 1] = '\0';
	return 1;
}

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

/* Bind the file or directory held by src (O_PATH) at target, read-only,
 * nosuid, nodev; flags the kernel has locked on the source are kept. */
static void bind_ro(int fd, int src, const char *target, const char *what)
{
	char from[64];
	char msg[160];
	struct statvfs sv;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;

	snprintf(from, sizeof(from), "/proc/self/fd/%d", src);
	snprintf(msg, sizeof(msg), "bind mount of %.120s", what);
	if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) != 0)
		die(fd, msg);
	if (statvfs(target, &sv) != 0)
		die(fd, "statvfs");
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	snprintf(msg, sizeof(msg), "read-only remount of %.120s", what);
	if (mount(NULL, target, NULL, flags, NULL) != 0)
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

static void __attribute__((noreturn)) jail_init(struct jail_args *a)
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
	int netp[2], fsp[2], execp[2];
	int status;
	int nsfd;
	size_t i;
	ssize_t got;
	pid_t agent, p;
	char go;

	close(a->in_w);
	close(a->out_r);
	close(a->err_r);
	close(a->go_w);
	close(a->report_r);
	/* The agent first: it makes the network namespace meanwhile
	 * (agent_main). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, netp) != 0 ||
	    pipe2(fsp, O_CLOEXEC) != 0 || pipe2(execp, O_CLOEXEC) != 0)
		die(fd, "pipes to the agent");
	agent = fork();
	if (agent < 0)
		die(fd, "fork of the agent");
	if (agent == 0) {
		close(netp[0]);
		close(fsp[1]);
		close(execp[0]);
		close(a->go_r);
		agent_main(a, netp[1], fsp[0], execp[1]);
	}
	close(netp[1]);
	close(fsp[0]);
	close(execp[1]);
	/* A write to an agent that died is an error return (and after the
	 * fork: the agent must not inherit an ignored SIGPIPE). */
	signal(SIGPIPE, SIG_IGN);
	/* The agent's stdio is the agent's: pid 1 drops its copies (and the
	 * runner's stdio) so that the runner sees EOF when the agent is gone. */
	close(a->in_r);
	close(a->out_w);
	close(a->err_w);
	close(0);
	close(1);
	close(2);
	/* Wait until the runner has written our uid/gid maps, and pass it on
	 * (an agent that died meanwhile has said why on netp). */
	do
		got = read(a->go_r, &go, 1);
	while (got < 0 && errno == EINTR);
	if (got != 1)
		_exit(127);
	close(a->go_r);
	tell_agent(fsp[1], 'g');
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
	if (setresgid(0, 0, 0) != 0)
		die(fd, "setresgid");
	if (setresuid(0, 0, 0) != 0)
		die(fd, "setresuid");
	/* After the uid change (which clears it): die with the runner. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		die(fd, "PR_SET_PDEATHSIG");
	/* pid 1 holds a copy of the spec: nobody in the jail may read it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die(fd, "PR_SET_DUMPABLE");

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die(fd, "making / private");
	snprintf(opts, sizeof(opts), "size=%ldm,mode=0755", l->tmpfs_mb);
	if (mount("tmpfs", JAIL_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		die(fd, "tmpfs root mount");
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
	if (mount("proc", JAIL_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		die(fd, "proc mount");
	mkdirs(fd, (char[]){JAIL_ROOT "/tmp"}, 01777);
	snprintf(opts, sizeof(opts), "size=%ldm,mode=1777", l->tmpfs_mb);
	if (mount("tmpfs", JAIL_ROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		die(fd, "tmpfs /tmp mount");
	/* The filesystem jail proper (seed 004): the old root goes away. */
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
	/* Into the agent's network namespace (nothing of the jail stays in
	 * the host's), once it exists. */
	got = recv_netns(netp[0], &r, &nsfd);
	close(netp[0]);
	if (got == 1 && r.kind == REPORT_FAILED) {
		report_send(fd, REPORT_FAILED, r.err, 0, r.what);
		_exit(127);
	}
	if (got != 1 || r.kind != REPORT_READY || nsfd < 0) {
		errno = ECHILD;
		die(fd, "starting the agent");
	}
	if (setns(nsfd, CLONE_NEWNET) != 0)
		die(fd, "joining the agent's network namespace");
	close(nsfd);
	/* The jail is complete: the agent may exec. */
	tell_agent(fsp[1], 'f');
	close(fsp[1]);
	do
		got = read(execp[0], &r, sizeof(r));
	while (got < 0 && errno == EINTR);
	close(execp[0]);
	if (got > 0) {
		/* The agent's own setup failed: forward it, and stop. */
		report_send(fd, REPORT_FAILED, r.err, 0, r.what);
		kill(agent, SIGKILL);
		waitpid(agent, NULL, 0);
		_exit(127);
	}
	/* EOF without a report: exec succeeded, unless the agent died
	 * before it (a crash says nothing); a dead agent is no ready jail. */
	if (waitpid(agent, &status, WNOHANG) == agent) {
		errno = ECHILD;
		die(fd, "starting the agent");
	}
	/* Ready, with the identity of the jail's root, which the runner
	 * compares with the agent's (it may not read pid 1's /proc entries:
	 * pid 1 is not dumpable). */
	if (stat("/", &st) != 0)
		die(fd, "stat of the new root");
	memset(&r, 0, sizeof(r));
	r.kind = REPORT_READY;
	r.root_dev = (unsigned long long)st.st_dev;
	r.root_ino = (unsigned long long)st.st_ino;
	report_raw(fd, &r);
	for (;;) {
		p = waitpid(-1, &status, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			_exit(0);
		if (p == agent) {
			report_send(fd, REPORT_EXITED, 0, status, NULL);
			/* Exiting kills every process left in the namespace. */
			_exit(0);
		}
	}
}

/* ---- the runner's side --------------------------------------------------- */

/* Receive one report before deadline_ms; *pid gets its sender's pid as the
 * runner sees it (0 if the kernel attached none). Returns 1, 0 on EOF or a
 * short message, -1 on timeout or error. */
static int report_recv(int fd, long long deadline_ms, struct report *r, pid_t *pid)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	struct pollfd p;
	struct ucred uc;
	long long left;
	ssize_t got;
	int rc;

	*pid = 0;
	for (;;) {
		left = deadline_ms - runner_now_ms();
		if (left <= 0)
			return -1;
		p.fd = fd;
		p.events = POLLIN;
		p.revents = 0;
		rc = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc > 0)
			break;
	}
	memset(&mh, 0, sizeof(mh));
	memset(r, 0, sizeof(*r));
	iov.iov_base = r;
	iov.iov_len = sizeof(*r);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	do
		got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(*r))
		return got < 0 ? -1 : 0;
	r->what[sizeof(r->what) - 1] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
	}
	return 1;
}

/* The namespace kinds of the jail, as named under /proc/PID/ns. */
static const char *const ns_names[] = {"user", "pid", "mnt", "net", "ipc", "uts", "cgroup"};
#define NS_KINDS (sizeof(ns_names) / sizeof(ns_names[0]))

/* The runner's own namespace i ("net:[4026531833]"), read once per
 * process (the runner never changes namespace); "" if unreadable. */
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
		done[i] = 1;
	}
	return ids[i];
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

/* From outside the jail, check what the agent runs under: its own
 * namespaces (none shared with the runner), the jail's root (the one pid 1
 * reported in ready, not the runner's), seccomp filter mode, no_new_privs,
 * no capability, the unprivileged host uid. */
static int verify_agent(pid_t agent, const struct report *ready, uid_t host_uid, char *why,
                        size_t n)
{
	char path[64], theirs[64], status[4096], val[64], want[64];
	struct stat ra, rr;
	const char *mine;
	ssize_t len;
	size_t i;
	int fd;

	for (i = 0; i < NS_KINDS; i++) {
		mine = own_ns(i);
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)agent, ns_names[i]);
		len = readlink(path, theirs, sizeof(theirs) - 1);
		theirs[len > 0 ? len : 0] = '\0';
		if (!mine[0] || !theirs[0] || strcmp(mine, theirs) == 0) {
			snprintf(why, n, "agent is not in a %s namespace of its own", ns_names[i]);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)agent);
	if (stat(path, &ra) != 0 || stat("/proc/self/root", &rr) != 0 ||
	    (unsigned long long)ra.st_dev != ready->root_dev ||
	    (unsigned long long)ra.st_ino != ready->root_ino ||
	    (ra.st_dev == rr.st_dev && ra.st_ino == rr.st_ino)) {
		snprintf(why, n, "agent's root is not the jail's");
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)agent);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "cannot read the agent's status: %s", ename(errno));
		return -1;
	}
	len = read(fd, status, sizeof(status) - 1);
	close(fd);
	status[len > 0 ? len : 0] = '\0';
	if (status_field(status, "Seccomp", val, sizeof(val)) != 0 || strcmp(val, "2") != 0) {
		snprintf(why, n, "agent is not under a seccomp filter");
		return -1;
	}
	if (status_field(status, "NoNewPrivs", val, sizeof(val)) != 0 || strcmp(val, "1") != 0) {
		snprintf(why, n, "agent does not have no_new_privs");
		return -1;
	}
	if (status_field(status, "CapEff", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapPrm", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapBnd", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0) {
		snprintf(why, n, "agent still holds capabilities");
		return -1;
	}
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)host_uid, (unsigned)host_uid,
	         (unsigned)host_uid, (unsigned)host_uid);
	if (status_field(status, "Uid", val, sizeof(val)) != 0 || strcmp(val, want) != 0) {
		snprintf(why, n, "agent does not run as host uid %u", (unsigned)host_uid);
		return -1;
	}
	return 0;
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

int runner_jail_start(const struct runner_spec *spec, const char *agent_path, struct runner_jail *j,
                      char *why, size_t n)
{
	static const char *const default_binds[] = {"/usr"};
	/* The seventh, the network namespace, is made by the agent itself
	 * while pid 1 builds the filesystem (agent_main). */
	const unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
	                            CLONE_NEWUTS | CLONE_NEWCGROUP;
	struct jail_args a;
	struct report r;
	struct stat st;
	char map[64];
	const char *bpath;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, go[2] = {-1, -1};
	int rep[2] = {-1, -1};
	int one = 1;
	uid_t host_uid;
	gid_t host_gid;
	pid_t agent = 0, sender;
	size_t i;
	long long deadline;
	int got;
	int rc = -1;

	memset(&a, 0, sizeof(a));
	memset(j, 0, sizeof(*j));
	j->pid = -1;
	j->to_agent = j->from_agent = j->err_agent = j->report = -1;
	j->agent_status = -1;
	a.spec = spec;
	a.agent_path = agent_path;
	a.agent_fd = -1;

	/* Everything the jail holds is opened here, by the runner, before
	 * any namespace exists. */
	a.agent_fd = open(agent_path, O_PATH | O_CLOEXEC);
	if (a.agent_fd < 0 || fstat(a.agent_fd, &st) != 0) {
		snprintf(why, n, "cannot open the agent program: %s", ename(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH)) {
		snprintf(why, n, "the agent program is not a file every user may execute");
		goto out;
	}
	a.nbinds = spec->binds ? json_array_size(spec->binds) : 1;
	if (a.nbinds > JAIL_MAX_BINDS) {
		snprintf(why, n, "more than %d binds", JAIL_MAX_BINDS);
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
			snprintf(why, n, "cannot open bind %.200s: %s", bpath, ename(errno));
			goto out;
		}
	}
	host_uid = geteuid() == 0 ? RUNNER_JAIL_HOST_UID : geteuid();
	host_gid = geteuid() == 0 ? RUNNER_JAIL_HOST_GID : getegid();
	/* Root's supplementary groups would follow the jail's processes
	 * (setgroups is denied inside): drop them from this throw-away
	 * process first. */
	if (geteuid() == 0 && setgroups(0, NULL) != 0) {
		snprintf(why, n, "setgroups failed: %s", ename(errno));
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
	    pipe2(go, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) != 0 ||
	    setsockopt(rep[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0) {
		snprintf(why, n, "cannot create the jail's pipes: %s", ename(errno));
		goto out;
	}
	a.in_r = in[0];
	a.in_w = in[1];
	a.out_r = out[0];
	a.out_w = out[1];
	a.err_r = err[0];
	a.err_w = err[1];
	a.go_r = go[0];
	a.go_w = go[1];
	a.report_r = rep[0];
	a.report_w = rep[1];
	fflush(stdout);
	fflush(stderr);
	/* fork()-like clone (no new stack): pid 1 of the new namespaces. */
	j->pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (j->pid < 0) {
		snprintf(why, n, "clone of the namespaces failed: %s", ename(errno));
		j->pid = -1;
		goto out;
	}
	if (j->pid == 0)
		jail_init(&a);
	/* From here on a write to a dead pid 1 is an error return, not the
	 * runner's death (set after the clone: the agent must not inherit an
	 * ignored SIGPIPE). */
	signal(SIGPIPE, SIG_IGN);

	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&go[0]);
	close_fd(&rep[1]);
	/* Jail root = an unprivileged host uid: RLIMIT_NPROC binds it, and
	 * nothing it does is done as host root. */
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_uid);
	if (write_file(j->pid, "uid_map", map) != 0) {
		snprintf(why, n, "uid_map failed: %s", ename(errno));
		goto out;
	}
	if (write_file(j->pid, "setgroups", "deny") != 0) {
		snprintf(why, n, "setgroups deny failed: %s", ename(errno));
		goto out;
	}
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_gid);
	if (write_file(j->pid, "gid_map", map) != 0) {
		snprintf(why, n, "gid_map failed: %s", ename(errno));
		goto out;
	}
	if (write(go[1], "g", 1) != 1) {
		snprintf(why, n, "cannot start the jail: %s", ename(errno));
		goto out;
	}
	close_fd(&go[1]);

	deadline = runner_now_ms() + JAIL_SETUP_MS;
	for (;;) {
		got = report_recv(rep[0], deadline, &r, &sender);
		if (got <= 0) {
			snprintf(why, n, "jail setup %s", got < 0 ? "timed out" : "died");
			goto out;
		}
		if (r.kind == REPORT_HELLO) {
			agent = sender;
			continue;
		}
		if (r.kind == REPORT_FAILED) {
			snprintf(why, n, "%s failed: %s", r.what, ename(r.err));
			goto out;
		}
		if (r.kind == REPORT_READY)
			break;
		snprintf(why, n, "unexpected report from the jail");
		goto out;
	}
	if (agent <= 0) {
		snprintf(why, n, "the agent's pid is unknown: cannot verify its confinement");
		goto out;
	}
	if (verify_agent(agent, &r, host_uid, why, n) != 0)
		goto out;
	j->to_agent = in[1];
	j->from_agent = out[0];
	j->err_agent = err[0];
	j->report = rep[0];
	in[1] = out[0] = err[0] = rep[0] = -1;
	rc = 0;
out:
	close_fd(&a.agent_fd);
	for (i = 0; i < a.nbinds && i < JAIL_MAX_BINDS; i++)
		close_fd(&a.bind_fd[i]);
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	close_fd(&go[0]);
	close_fd(&go[1]);
	close_fd(&rep[1]);
	if (rc != 0) {
		close_fd(&rep[0]);
		runner_jail_destroy(j, 0);
	}
	return rc;
}

static void describe(int status, char *why, size_t n)
{
	const char *sig;

	if (WIFSIGNALED(status)) {
		sig = sigabbrev_np(WTERMSIG(status));
		snprintf(why, n, "agent killed by SIG%s", sig ? sig : "?");
	} else if (WIFEXITED(status)) {
		snprintf(why, n, "agent exited with status %d", WEXITSTATUS(status));
	} else {
		snprintf(why, n, "agent ended (wait status %d)", status);
	}
}

int runner_jail_agent_reason(void *ctx, long long deadline_ms, char *why, size_t n)
{
	struct runner_jail *j = ctx;
	struct report r;
	pid_t sender;

	while (j->agent_status < 0 && j->report >= 0) {
		if (report_recv(j->report, deadline_ms, &r, &sender) != 1)
			break;
		if (r.kind == REPORT_EXITED)
			j->agent_status = r.status;
	}
	if (j->agent_status < 0)
		return -1;
	describe(j->agent_status, why, n);
	return 0;
}

int runner_jail_destroy(struct runner_jail *j, long long grace_deadline_ms)
{
	char ignored[8];
	int status;
	pid_t p;

	close_fd(&j->to_agent);
	if (j->pid > 0 && grace_deadline_ms > runner_now_ms())
		runner_jail_agent_reason(j, grace_deadline_ms, ignored, sizeof(ignored));
	close_fd(&j->from_agent);
	close_fd(&j->err_agent);
	close_fd(&j->report);
	if (j->pid <= 0)
		return 0;
	/* pid 1 of the namespace: the kernel kills every process in it. */
	kill(j->pid, SIGKILL);
	do
		p = waitpid(j->pid, &status, __WALL);
	while (p < 0 && errno == EINTR);
	if (p != j->pid)
		return -1;
	j->pid = -1;
	return 0;
}

/* ---- preflight ------------------------------------------------------------ */

int runner_jail_preflight(int trial, char *why, size_t n)
{
	FILE *f;
	long max = 0;
	size_t i;
	int status;
	int step;
	pid_t pid;

	/* Read once here, compared with the agent's by verify_agent(). */
	for (i = 0; i < NS_KINDS; i++) {
		if (!own_ns(i)[0]) {
			snprintf(why, n, "%s namespaces unavailable in this kernel", ns_names[i]);
			return -1;
		}
	}
	f = fopen("/proc/sys/user/max_user_namespaces", "re");
	if (!f || fscanf(f, "%ld", &max) != 1 || max <= 0) {
		if (f)
			fclose(f);
		snprintf(why, n, "user namespaces disabled (user.max_user_namespaces is 0)");
		return -1;
	}
	fclose(f);
	if (seccomp_api_get() < 3 || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
		snprintf(why, n, "seccomp filter unavailable");
		return -1;
	}
	if (!trial)
		return 0;
	/* Try the primitives for real in a throw-away child: a user and mount
	 * namespace, a tmpfs, pivot_root into it. Its exit code is the step
	 * that failed. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, n, "fork failed: %s", ename(errno));
		return -1;
	}
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
			_exit(10);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
			_exit(11);
		if (mount("tmpfs", JAIL_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0)
			_exit(12);
		if (chdir(JAIL_ROOT) != 0 || syscall(SYS_pivot_root, ".", ".") != 0)
			_exit(13);
		if (umount2(".", MNT_DETACH) != 0)
			_exit(14);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, n, "waitpid failed: %s", ename(errno));
			return -1;
		}
	step = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	switch (step) {
	case 0:
		return 0;
	case 10:
		snprintf(why, n, "cannot create a user namespace (unshare CLONE_NEWUSER)");
		break;
	case 11:
		snprintf(why, n, "cannot make mounts private in a user namespace");
		break;
	case 12:
		snprintf(why, n, "cannot mount a tmpfs in a user namespace");
		break;
	case 13:
		snprintf(why, n, "pivot_root unavailable in a user namespace");
		break;
	case 14:
		snprintf(why, n, "cannot detach the old root in a user namespace");
		break;
	default:
		snprintf(why, n, "namespace trial child died (status %d)", status);
		break;
	}
	return -1;
}
