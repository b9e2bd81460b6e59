/*
 * The namespace jail (runner/jail.h). Three processes:
 *
 * - the runner (outside): opens what the jail will hold (O_PATH, before any
 *   namespace exists, so no path is resolved by the jail's unprivileged
 *   uid), creates the pipes, clone()s the agent-to-be into new namespaces
 *   (it is pid 1 of the new pid namespace), writes its uid/gid maps, then
 *   waits until the jail is built and the agent has exec'd, and verifies
 *   the agent's confinement from outside through /proc;
 * - the agent-to-be, pid 1 (jail_pid1_main): forks the builder first,
 *   then makes the jail's network namespace (unshare: about 0.7 ms of
 *   kernel work on these machines, the most costly namespace by far) and
 *   confines itself (rlimits, no capability, no_new_privs, seccomp) while
 *   the builder builds the filesystem; once the builder has exited with
 *   success and the runner has said that its guard stands, it execs
 *   /agent. Until then it runs only the runner's code;
 * - the builder, pid 2: builds the filesystem, pivots into it (pivot_root
 *   moves the root and working directory of every process of the mount
 *   namespace that was on the old root, pid 1's included;
 *   jail_verify_agent() checks the agent's root from outside), detaches
 *   the old root, reports the new root's identity and exits.
 *
 * The code of pid 1 and the builder is runner/jail_inside.c, the checks
 * from outside runner/jail_verify.c; this file is the runner's side.
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

#include "runner/fdpass.h"
#include "runner/jail_internal.h"

/*
 * The host's character devices every jail holds, at the same paths (the
 * usual ones a rootless container runtime binds; never /dev/tty): opened
 * by the runner before any namespace exists and checked to be these
 * devices, bound by the builder read-only, nosuid and noexec but not
 * nodev (a nodev mount refuses to open a device; a read-only one does not
 * stop writes to it: /dev/null stays writable). verify_mounts() accepts a
 * mount without nodev at these paths only, showing these devices.
 */
const struct jail_dev jail_devs[JAIL_NDEVS] = {
    {"/dev/null", 1, 3},   {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
    {"/dev/random", 1, 8}, {"/dev/urandom", 1, 9},
};

/* Is the file held by src the character device d of jail_devs? */
int jail_is_dev(int src, size_t d)
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
		                        jail_devs[d].path, jail_ename(errno));
	if (!jail_is_dev(*fd, d))
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "the host's %s is not the character device %u:%u",
		                        jail_devs[d].path, jail_devs[d].major, jail_devs[d].minor);
	/* A bind keeps its source's nodev: the jail's device would not open
	 * (EACCES), and every run would fail at the agent's first use. */
	if (fstatvfs(*fd, &sv) != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "cannot read the mount flags of the host's %s: %s",
		                        jail_devs[d].path, jail_ename(errno));
	if (sv.f_flag & ST_NODEV)
		return runner_error_set(
		    err, RUNNER_E_MISSING,
		    "the host's %s is on a nodev mount (a device does not open through it)",
		    jail_devs[d].path);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
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

/* ---- start, the agent's end, teardown ------------------------------------ */

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
                       enum setup_stage want, struct setup_seen *seen, struct jail_report *built,
                       struct runner_error *err)
{
	struct pollfd p[2];
	struct jail_report r;
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
			                        jail_ename(errno));
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
				                        r.what, jail_ename(r.err));
			if (got == (ssize_t)sizeof(r) && r.kind == REPORT_CONFINED &&
			    !seen->confined) {
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
				                        r.what, jail_ename(r.err));
			if (got != (ssize_t)sizeof(r) || r.kind != REPORT_BUILT) {
				memset(&si, 0, sizeof(si));
				if (waitid(P_PID, (id_t)pid1, &si, WEXITED | WNOHANG | WNOWAIT) ==
				        0 &&
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

/* The gateway's listening socket, sent by pid 1 on gw_r before it said it
 * was confined (so it is there now): 0 with *sock, or -1 with *err. */
static int gateway_receive(int gw_r, int *sock, struct runner_error *err)
{
	if (runner_fd_recv(gw_r, MSG_DONTWAIT, sock) != 1)
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "the jail's gateway socket did not come");
	return 0;
}

int runner_jail_start(const struct runner_spec *spec, const char *agent_path,
                      const char *gateway_dir, struct runner_cgroup *cg, struct runner_jail *j,
                      struct runner_error *err)
{
	static const char *const default_binds[] = {"/usr"};
	/* The seventh, the network namespace, is made by pid 1 itself while
	 * the builder builds the filesystem (jail_pid1_main). */
	const unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
	                            CLONE_NEWUTS | CLONE_NEWCGROUP;
	struct jail_args a;
	struct jail_report built;
	struct stat st;
	char map[64];
	const char *bpath;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, go[2] = {-1, -1};
	int rep[2] = {-1, -1}, ex[2] = {-1, -1}, gw[2] = {-1, -1};
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
	j->gateway_fd = -1;
	j->cpu_seconds = spec->limits.cpu_seconds;
	a.spec = spec;
	a.agent_path = agent_path;
	a.agent_fd = -1;
	a.sdk_fd = -1;
	a.gw_w = a.gw_r = -1;
	a.gateway_dir_fd = -1;
	for (i = 0; i < JAIL_NDEVS; i++)
		a.dev_fd[i] = -1;

	/* Everything the jail holds is opened here, by the runner, before
	 * any namespace exists. */
	a.agent_fd = open(agent_path, O_PATH | O_CLOEXEC);
	if (a.agent_fd < 0 || fstat(a.agent_fd, &st) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot open the agent program: %s",
		                 jail_ename(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH)) {
		runner_error_set(err, RUNNER_E_SETUP,
		                 "the agent program is not a file every user may execute");
		goto out;
	}
	if (spec->sdk_dir) {
		a.sdk_fd = open(spec->sdk_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (a.sdk_fd < 0) {
			runner_error_set(err, RUNNER_E_SETUP,
			                 "cannot open the agent module's directory %.200s: %s",
			                 spec->sdk_dir, jail_ename(errno));
			goto out;
		}
	}
	if (spec->gateway) {
		if (!gateway_dir) {
			runner_error_set(err, RUNNER_E_SETUP, "the run's gateway has no directory");
			goto out;
		}
		a.gateway_dir = gateway_dir;
		a.gateway_dir_fd = open(gateway_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (a.gateway_dir_fd < 0) {
			runner_error_set(err, RUNNER_E_SETUP,
			                 "cannot open the gateway's directory %.200s: %s",
			                 gateway_dir, jail_ename(errno));
			goto out;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gw) != 0) {
			runner_error_set(err, RUNNER_E_SETUP,
			                 "cannot create the gateway's socket pair: %s",
			                 jail_ename(errno));
			goto out;
		}
		a.gw_r = gw[0];
		a.gw_w = gw[1];
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
			                 jail_ename(errno));
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
		runner_error_set(err, RUNNER_E_SETUP, "setgroups failed: %s", jail_ename(errno));
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(errp, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot create the jail's pipes: %s",
		                 jail_ename(errno));
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
	/* The clone is made inside the run's cgroup, so that pid 1 and all it
	 * forks (the builder first, at once) are in it from their first
	 * instruction, and its cgroup namespace's root is the run's cgroup;
	 * the runner goes back to its own right after. */
	if (cg && runner_cgroup_move_self(cg, 1, err) != 0)
		goto out;
	/* fork()-like clone (no new stack): pid 1 of the new namespaces, the
	 * agent once it execs. CLONE_PIDFD: pidfd_ret gets a pidfd of it,
	 * readable once it has exited, for waits with a deadline. */
	j->pid =
	    (pid_t)syscall(SYS_clone, flags | SIGCHLD | CLONE_PIDFD, NULL, &pidfd_ret, NULL, NULL);
	e = errno;
	if (j->pid != 0 && cg && runner_cgroup_move_self(cg, 0, &ended) != 0) {
		*err = ended;
		if (j->pid < 0)
			j->pid = -1;
		else
			j->pidfd = pidfd_ret;
		goto out;
	}
	if (j->pid < 0) {
		/* Name the primitive that is missing, as the preflight's trial
		 * finds it (a user namespace refused here, ...): on this
		 * failure path only. */
		if (jail_missing_ns_kind(err) == 0) {
			if (runner_jail_preflight(1, err) == 0)
				runner_error_set(err, RUNNER_E_SETUP,
				                 "clone of the namespaces failed: %s",
				                 jail_ename(e));
			else
				runner_error_append(err, " (clone: %s)", jail_ename(e));
		}
		j->pid = -1;
		goto out;
	}
	if (j->pid == 0)
		jail_pid1_main(&a);
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
	close_fd(&gw[1]);
	j->pidfd = pidfd_ret;
	/* Jail root = an unprivileged host uid: RLIMIT_NPROC binds it, and
	 * nothing it does is done as host root. */
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_uid);
	if (write_file(j->pid, "uid_map", map) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "uid_map failed: %s", jail_ename(errno));
		goto out;
	}
	if (write_file(j->pid, "setgroups", "deny") != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "setgroups deny failed: %s",
		                 jail_ename(errno));
		goto out;
	}
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_gid);
	if (write_file(j->pid, "gid_map", map) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "gid_map failed: %s", jail_ename(errno));
		goto out;
	}
	/* One byte for pid 1, one for the builder. */
	if (write(go[1], "gg", 2) != 2) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the jail: %s",
		                 jail_ename(errno));
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
		                 jail_ename(errno));
		goto out;
	}
	/* EPIPE: pid 1 failed a step meanwhile (or died), and the next wait
	 * reads its report. */
	if (write(go[1], "g", 1) != 1 && errno != EPIPE) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the agent: %s",
		                 jail_ename(errno));
		goto out;
	}
	close_fd(&go[1]);
	if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_CONFINED, &seen, &built,
	                err) != 0)
		goto out;
	if (spec->gateway && gateway_receive(gw[0], &j->gateway_fd, err) != 0)
		goto out;
	/* An agent whose /proc entries went missing under the check is gone
	 * or on its way out: say that, once it has ended
	 * (RUNNER_JAIL_EXIT_WAIT_MS for it to finish exiting, on this path
	 * only). Any other failed check stands as it is. */
	e = jail_verify_agent(j->pid, &built, host_uid, err);
	if (e != 0 && err->kind == RUNNER_E_CLOSED && !seen.exec_done) {
		/* not root: verify after the exec, as the agent */
		if (await_setup(j->pid, rep[0], ex[0], deadline, budget, SETUP_EXEC, &seen, &built,
		                err) != 0)
			goto out;
		e = jail_verify_agent(j->pid, &built, host_uid, err);
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
	close_fd(&a.sdk_fd);
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
	close_fd(&gw[0]);
	close_fd(&gw[1]);
	close_fd(&a.gateway_dir_fd);
	if (rc != 0) {
		close_fd(&j->gateway_fd);
		runner_jail_destroy(j, 0);
	}
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
	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
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
		                 "agent killed by SIGKILL at its CPU time limit of %lld s "
		                 "(cpu_seconds, per process)",
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
	close_fd(&j->gateway_fd);
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
	 * jail_verify_agent() does anyway, after the agent's exec). */
	if (trial && jail_missing_ns_kind(err) != 0)
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
		                        jail_ename(errno));
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
		return runner_error_set(err, RUNNER_E_INTERNAL, "fork failed: %s",
		                        jail_ename(errno));
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
			                        jail_ename(errno));
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
