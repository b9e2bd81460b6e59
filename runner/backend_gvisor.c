/*
 * gvisor: the agent runs in a gVisor sandbox started by `runsc create` +
 * `runsc start` on a throw-away OCI bundle, and the runner
 * drives it through the agent protocol (runner/agent.h). `runsc do` is not
 * used: it shows the host's root filesystem and environment to the agent.
 *
 * The bundle lives in a fresh directory (mkdtemp, 0700) under /run, or /tmp
 * when /run is not writable, holding:
 *   bundle/config.json  built here with jansson (below);
 *   bundle/rootfs/      empty but for the mount points, read-only root;
 *   state/              runsc --root, the container's state;
 *   sandbox.pid         runsc create --pid-file;
 *   tmp/                where the host tmpfs of the sandbox's /tmp is
 *                       mounted, in the runner's own mount namespace
 *                       only, until runsc create has made the sandbox
 *                       (tmp_mount).
 * What the agent sees: / read-only with only the binds of the spec (default
 * /usr; /bin /lib /lib64 /sbin symlinks into usr/ unless a bind takes the
 * name), the agent program at /agent (read-only), its own /proc, a /tmp of
 * limits.tmpfs_mb MiB and RUNNER_TMP_INODES(tmpfs_mb) inodes (a host tmpfs
 * the gofer serves), uid/gid 65534, no capability, no_new_privs, the
 * environment PATH, HOME, LANG only, descriptors 0-2 only, hostname
 * "sandbox", new pid, network, ipc, uts and mount namespaces, and runsc's
 * --network=none (a loopback of the sandbox's own netstack, nothing else).
 * An OCI seccomp filter (linux.seccomp, applied by the sentry to the agent
 * and everything it starts: runsc --oci-seccomp) refuses ptrace, unshare,
 * setns, mount, umount2, pivot_root and chroot with EPERM (this runsc
 * gives EPERM for every refusal, whatever a rule's errnoRet says; clone3
 * has no rule, so that threads work: runner/gvisor_oci.c); without it the
 * sentry let the agent PTRACE_TRACEME and unshare a user namespace (of
 * the emulated kernel only, but both are refused on every OS-level
 * backend).
 *
 * The platform is ptrace unless olivares-runner --gvisor-platform names
 * another ([runner] gvisor_platform): every runsc command gets
 * --platform=NAME. On these machines only ptrace runs: this runsc does not
 * know systrap (runsc create fails, "unknown platform: systrap"), and
 * with kvm the sandbox's boot hangs in the sentry's KVM set-up (/dev/kvm
 * opens, nested KVM does not get further): the run fails closed at its
 * wall-clock limit, naming the platform.
 *
 * Limits, as measured with runsc 0.0~20221219 on ptrace (tests/unit/
 * test_gvisor.c shows each one):
 *   RLIMIT_NPROC  = processes, enforced by the sentry (a fork bomb stops at
 *                   processes - 1 children with EAGAIN); the spec's
 *                   linux.resources.pids.limit cannot be processes: runsc
 *                   puts the sentry's and the gofer's own threads in that
 *                   host cgroup (a 32 limit kills the gofer at boot, and 31
 *                   sandboxed processes take about 430 host tasks), so it is
 *                   a host-side backstop of RUNNER_GV_PIDS_BASE + RUNNER_GV_PIDS_PER_PROC
 *                   * processes;
 *   RLIMIT_AS     = memory_mb, enforced by the sentry (mmap fails ENOMEM);
 *                   the sandbox as a whole (memfds and tmpfs included, all
 *                   the agent's processes together) is bounded by
 *                   linux.resources.memory.limit, a host memory cgroup of
 *                   RUNNER_GV_MEM_BASE_MB + memory_mb; an out-of-memory
 *                   kill in it (the cgroup's own count) stops the run with
 *                   a reason naming memory_mb (runner/cgroup.h);
 *   RLIMIT_NOFILE = open_files;
 *   RLIMIT_CPU    = cpu_seconds is passed but this runsc does NOT enforce
 *                   it (a spin ran 30 s under a 2 s limit): the runner
 *                   reads the sandbox's cgroup's CPU time (the sentry's and
 *                   the gofer's included) while it waits for the agent and
 *                   stops the run at cpu_seconds, naming it.
 *
 * isolated is 1 only when runsc create exited 0 (the sandbox booted with
 * this config), the sandbox process it names is alive, is runsc's "boot" of
 * this container id and has --network=none and --oci-seccomp=true on its
 * command line and no platform but the run's (runsc writes --platform= there
 * only for a platform that is not its default: none for ptrace here), the
 * sandbox's own cgroup (where runsc put it, named for the container) holds
 * the memory limit the bundle asked for (its counters are the whole-run
 * bounds, runner/cgroup.h), and runsc start exited 0 (the agent's ELF was
 * loaded and started in it).
 * That the filter itself is in place is runsc's to do once it was told
 * (--oci-seccomp on the boot line, linux.seccomp in the config it read):
 * nothing outside the sandbox shows the sentry's filter of the agent.
 * Otherwise no step is sent and the run fails closed with the reason;
 * nothing falls back to another backend.
 *
 * Why create + start and not `runsc run`: with run, a sandbox that fails
 * to start would only show as an agent that never answers its first step;
 * with create + start the runner knows before sending any step. runsc is
 * run as `runsc --root <state> --network=none --platform=<platform>
 * --oci-seccomp <cmd>` with an empty environment; cgroups are left on
 * (runsc applies the pids backstop and the memory limit with them).
 *
 * The guard: a fork of the runner in its own session, started before the
 * bundle is filled, that kills every process of the run (by the run's
 * directory on its command line or the container's cgroup), deletes the
 * container and removes its cgroups and the directory if the runner dies
 * first (a worker SIGKILLing a runner must not leave a sandbox spinning:
 * runsc create's sandbox is not tied to the runner's life). It retries
 * until all of it is gone, never on a fixed short budget (guard_clean). It
 * is dismissed by a normal teardown that removed everything, and finishes
 * one that did not.
 *
 * Teardown (always, also on the deadline): stdin of the agent closed, a
 * grace period for it to exit (a run that completed says in its shutdown
 * note when the agent outlived it), `runsc delete --force`, SIGKILL of every
 * descendant left (the runner is their subreaper: runsc create's gofer and
 * sandbox, and the processes the ptrace platform starts for the agent, are re-parented to it) until
 * wait reports no child but the guard, the container's cgroups removed
 * (retried while their last tasks leave them) and checked gone, the
 * directory removed without crossing a mount point and checked gone. If any
 * of it fails, left_behind is set, the summary says destroyed false, and
 * the guard is left to finish the removal after the runner.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/agent.h"
#include "runner/backend.h"
#include "runner/cgroup.h"
#include "runner/gateway_env.h"
#include "runner/gateway_run.h"
#include "runner/gvisor_oci.h"
#include "runner/interp.h"

/* Where runsc may be installed; the runner has no PATH. */
static const char *const runsc_paths[] = {"/usr/bin/runsc", "/usr/sbin/runsc",
                                          "/usr/local/bin/runsc", NULL};
/* Where the throw-away bundle goes, first writable wins. */
static const char *const tmp_dirs[] = {"/run", "/tmp", NULL};
/* The container cgroups runsc creates (v1 controllers here, v2 root). */
static const char *const cgroup_roots[] = {"/sys/fs/cgroup/pids",
                                           "/sys/fs/cgroup/memory",
                                           "/sys/fs/cgroup/cpu",
                                           "/sys/fs/cgroup/cpuacct",
                                           "/sys/fs/cgroup/cpuset",
                                           "/sys/fs/cgroup/devices",
                                           "/sys/fs/cgroup/freezer",
                                           "/sys/fs/cgroup/blkio",
                                           "/sys/fs/cgroup/systemd",
                                           "/sys/fs/cgroup/perf_event",
                                           "/sys/fs/cgroup/hugetlb",
                                           "/sys/fs/cgroup",
                                           NULL};

/* The gVisor platforms the runner accepts; the first is the default
 * (ptrace works on every host of this project, with or without KVM). Set
 * per run by
 * --gvisor-platform ([runner] gvisor_platform). */
const char *const runner_gvisor_platforms[] = {"ptrace", "kvm", "systrap", NULL};
static const char *gv_platform = "ptrace";
/* The sandbox's host cgroup limits and the bounds of every wait are
 * RUNNER_GV_* (runner/limits.h). */

/* One sandbox, from bundle to teardown. Descriptors are -1 once closed. */
struct gv {
	const char *runsc;
	char top[64];                        /* the mkdtemp directory, "" until made */
	char path[5][128];                   /* bundle, rootfs, state, pid file, tmp */
	char id[48];                         /* container id: olivares-<32 hex> */
	int created;                         /* runsc create was started */
	pid_t sandbox;                       /* the sandbox process, -1 when unknown or reaped */
	int sandbox_status;                  /* its wait status once reaped, else -1 */
	int to_agent, from_agent, err_agent; /* runner's ends */
	pid_t guard;                         /* the guard process, -1 when none */
	int guard_fd;                        /* write end of the guard's pipe */
	int killed; /* gv_destroy found the sandbox still running at the end of
	             * the agent's grace and deleted it (killed) */
	/* The host tmpfs of /tmp is mounted at path[P_TMP] in the runner's
	 * own mount namespace (tmp_mount, until tmp_detach). */
	int tmp_mounted;
	/* The run's gateway directory (runner/gateway_run.h), bound at
	 * RUNNER_GATEWAY_JAIL_DIR, or NULL without a gateway: runsc then
	 * runs with --host-uds=open, so that the sandbox's relay reaches the
	 * gateway's socket there (agents/agent-exec.c). */
	const char *gateway_dir;
};

enum { P_BUNDLE, P_ROOTFS, P_STATE, P_PIDFILE, P_TMP };

int runner_gvisor_platform_set(const char *name)
{
	size_t i;

	for (i = 0; runner_gvisor_platforms[i]; i++) {
		if (strcmp(runner_gvisor_platforms[i], name) == 0) {
			gv_platform = runner_gvisor_platforms[i];
			return 0;
		}
	}
	return -1;
}

static long long now_ms(void)
{
	return runner_now_ms();
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static const char *find_runsc(void)
{
	struct stat st;
	size_t i;

	for (i = 0; runsc_paths[i]; i++)
		if (stat(runsc_paths[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    access(runsc_paths[i], X_OK) == 0)
			return runsc_paths[i];
	return NULL;
}

/* Length of the glog prefix runsc writes before a message
 * ("W1130 06:41:49.393090    8132 util.go:64] "), 0 when there is none:
 * its time and pid would make every reason a different string. */
static size_t glog_prefix(const char *s, size_t len)
{
	const char *end = memchr(s, ']', len);
	size_t i;

	if (len < 8 || !strchr("IWEF", s[0]) || !end || (size_t)(end - s) + 2 > len ||
	    end[1] != ' ')
		return 0;
	for (i = 1; i < 5; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	if (s[5] != ' ')
		return 0;
	return (size_t)(end - s) + 2;
}

/* The first line of what a failed runsc said, trimmed and without its
 * glog prefix, for a reason. dst may be src. */
static void first_line(char *dst, size_t n, const char *src, size_t len)
{
	size_t i, j = 0, eol;

	for (i = 0; i < len && src[i] == '\n'; i++)
		;
	for (eol = i; eol < len && src[eol] != '\n'; eol++)
		;
	i += glog_prefix(src + i, eol - i);
	for (; i < eol && j + 1 < n; i++)
		dst[j++] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[j] = '\0';
}

/* Read what is in fd now (non-blocking), at most n - 1 bytes, as text. */
static void read_now(int fd, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;
	int fl;

	buf[0] = '\0';
	if (fd < 0)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (len + 1 < n) {
		r = read(fd, buf + len, n - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
}

/*
 * Wait for the child pid until deadline without killing it, reaping every
 * other child that ends meanwhile: runsc waits for the gofer and the
 * sandbox to be gone, and once they are the runner's children (it is
 * their subreaper) a zombie would still count as there. The sandbox's
 * status is kept in g. Returns 0 with *status set once pid is reaped, 1
 * when it still runs at the deadline, -1 on error (pid is no child).
 */
static int wait_pid(struct gv *g, pid_t pid, long long deadline, int *status)
{
	long step = 1;
	pid_t r;
	int st;

	for (;;) {
		r = waitpid(-1, &st, WNOHANG);
		if (r > 0) {
			if (r == g->sandbox) {
				g->sandbox = -1;
				g->sandbox_status = st;
			}
			if (r == pid) {
				*status = st;
				return 0;
			}
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (now_ms() >= deadline)
			return 1;
		sleep_ms(step);
		if (step < 8)
			step *= 2;
	}
}

/* Wait for the child pid until deadline; SIGKILL it (and its process
 * group) then. Returns 0 with *status set, 1 when it had to be killed, -1
 * on error. */
static int wait_until(struct gv *g, pid_t pid, long long deadline, int *status)
{
	int w = wait_pid(g, pid, deadline, status);

	if (w != 1)
		return w;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 1;
}

/*
 * Run `runsc --root STATE --network=none --platform=P --oci-seccomp <cmd...>` with in,
 * out, err_fd as its stdio (-1: /dev/null; err_fd -1 gets a pipe whose
 * first line goes to the message). Returns 0 when it exited 0 before
 * deadline, -1 otherwise with *err saying why (kind RUNNER_E_TIMEOUT when
 * it was cut at the deadline, RUNNER_E_SETUP when it failed,
 * RUNNER_E_INTERNAL when it could not be run or waited for).
 */
static int runsc_cmd(struct gv *g, const char *const *cmd, int in, int out, int err_fd,
                     long long deadline, struct runner_error *err)
{
	char *argv[16];
	char *const envp[] = {NULL};
	char platform[32];
	char said[RUNNER_GV_SAID_BYTES];
	int errp[2] = {-1, -1};
	int status = 0, null, w, rc = -1;
	size_t k = 0, i;
	long long started = runner_now_ms();
	pid_t pid;

	err->kind = RUNNER_OK;
	err->message[0] = '\0';
	argv[k++] = (char *)g->runsc;
	argv[k++] = (char *)"--root";
	argv[k++] = (char *)g->path[P_STATE];
	argv[k++] = (char *)"--network=none";
	snprintf(platform, sizeof(platform), "--platform=%s", gv_platform);
	argv[k++] = platform;
	argv[k++] = (char *)"--oci-seccomp";
	if (g->gateway_dir)
		argv[k++] = (char *)"--host-uds=open";
	for (i = 0; cmd[i] && k + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[k++] = (char *)cmd[i];
	argv[k] = NULL;
	if (err_fd < 0) {
		if (pipe2(errp, O_CLOEXEC) != 0)
			return runner_error_set(err, RUNNER_E_INTERNAL, "pipe: %s",
			                        strerror(errno));
		err_fd = errp[1];
	}
	pid = fork();
	if (pid < 0) {
		runner_error_set(err, RUNNER_E_INTERNAL, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* Its own process group, so that a deadline kills runsc and
		 * whatever it forked that did not leave the group. */
		setpgid(0, 0);
		/* A runsc command never outlives the process that waits for it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(in >= 0 ? in : null, 0) < 0 ||
		    dup2(out >= 0 ? out : null, 1) < 0 || dup2(err_fd, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		execve(g->runsc, argv, envp);
		_exit(127);
	}
	close_fd(&errp[1]);
	w = wait_until(g, pid, deadline, &status);
	read_now(errp[0], said, sizeof(said));
	if (w == 1) {
		runner_error_set(err, RUNNER_E_TIMEOUT, "runsc %s did not finish within %lld ms",
		                 cmd[0], deadline - started);
		goto out;
	}
	if (w < 0) {
		runner_error_set(err, RUNNER_E_INTERNAL, "waiting for runsc %s: %s", cmd[0],
		                 strerror(errno));
		goto out;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = 0;
		goto out;
	}
	first_line(said, sizeof(said), said, strlen(said));
	if (WIFSIGNALED(status))
		runner_error_set(err, RUNNER_E_SETUP, "runsc %s killed by signal %d%s%s", cmd[0],
		                 WTERMSIG(status), said[0] ? ": " : "", said);
	else
		runner_error_set(err, RUNNER_E_SETUP, "runsc %s exited with status %d%s%s", cmd[0],
		                 WEXITSTATUS(status), said[0] ? ": " : "", said);
out:
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	return rc;
}

/* ---- the bundle ----------------------------------------------------------- */

/* mkdir -p of path (absolute, inside the rootfs), 0755. */
static int mkdirs(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* An empty mount point in the rootfs for host path src: a directory for a
 * directory, an empty file for anything else that is a regular file. */
static int mount_point(const struct gv *g, const char *src, const char *dst,
                       struct runner_error *err)
{
	char target[4096];
	struct stat st;
	char *slash;
	int fd;

	if (stat(src, &st) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "bind %.200s: %s", src,
		                        strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "bind %.200s: not a directory or a regular file", src);
	if ((size_t)snprintf(target, sizeof(target), "%s%s", g->path[P_ROOTFS], dst) >=
	    sizeof(target))
		return runner_error_set(err, RUNNER_E_SETUP, "bind %.200s: path too long", src);
	if (S_ISDIR(st.st_mode)) {
		if (mkdirs(target) != 0)
			goto fail;
		return 0;
	}
	slash = strrchr(target, '/');
	*slash = '\0';
	if (slash != target && mkdirs(target) != 0)
		goto fail;
	*slash = '/';
	fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	return runner_error_set(err, RUNNER_E_SETUP, "mount point for %.200s: %s", src,
	                        strerror(errno));
}

/* Is name (one path component, e.g. "lib") the first component of a bind? */
static int bind_takes(json_t *binds, const char *name)
{
	const char *b;
	size_t i, len = strlen(name);

	for (i = 0; i < json_array_size(binds); i++) {
		b = json_string_value(json_array_get(binds, i));
		if (b && strncmp(b + 1, name, len) == 0 &&
		    (b[1 + len] == '\0' || b[1 + len] == '/'))
			return 1;
	}
	return 0;
}

/* The sandbox's own cgroup, where runsc put the sandbox process, into *cg
 * for the whole-run bounds (runner_cgroup_check()): it must be the
 * container's (its name ends in the container id: not the runner's own
 * cgroup) and hold the memory limit the bundle asked for. Returns 0, or
 * -1 with *err (RUNNER_E_UNVERIFIED). */
static int gv_cgroup(const struct gv *g, const struct runner_spec *spec, struct runner_cgroup *cg,
                     struct runner_error *err)
{
	const char *base;
	long long bytes;
	size_t n = strlen(g->id);
	size_t i;

	if (runner_cgroup_of(g->sandbox, &spec->limits, RUNNER_GV_MEM_BASE_MB,
	                     "the gVisor sandbox's sentry and gofer", cg, err) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		base = i == 0 ? cg->mem.path : cg->cpu.path;
		if (strlen(base) <= n || strcmp(base + strlen(base) - n, g->id) != 0 ||
		    base[strlen(base) - n - 1] != '/')
			return runner_error_set(
			    err, RUNNER_E_UNVERIFIED,
			    "the sandbox is not in a cgroup of its own (%.200s)", base);
	}
	if (runner_cgroup_memory_limit(cg, &bytes, err) != 0)
		return -1;
	if (bytes != runner_gv_memory_limit(&spec->limits))
		return runner_error_set(
		    err, RUNNER_E_UNVERIFIED,
		    "the sandbox's memory cgroup holds a limit of %lld bytes, not "
		    "%lld",
		    bytes, (long long)runner_gv_memory_limit(&spec->limits));
	return 0;
}

/* Pick the container id and make the run's directory (0700) with its
 * bundle and state directories. Returns 0 or -1 with *err. */
static int bundle_dir(struct gv *g, struct runner_error *err)
{
	unsigned char rnd[16];
	size_t i;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "no random bytes for the container id");
	memcpy(g->id, "olivares-", 9);
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(g->id + 9 + 2 * i, 3, "%02x", rnd[i]);
	for (i = 0; tmp_dirs[i]; i++) {
		snprintf(g->top, sizeof(g->top), "%s/olivares-gvisor.XXXXXX", tmp_dirs[i]);
		if (access(tmp_dirs[i], W_OK) == 0 && mkdtemp(g->top))
			break;
		g->top[0] = '\0';
	}
	if (!g->top[0])
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "cannot make the bundle directory under /run or /tmp: %s",
		                        strerror(errno));
	snprintf(g->path[P_BUNDLE], sizeof(g->path[0]), "%s/bundle", g->top);
	snprintf(g->path[P_ROOTFS], sizeof(g->path[0]), "%s/bundle/rootfs", g->top);
	snprintf(g->path[P_STATE], sizeof(g->path[0]), "%s/state", g->top);
	snprintf(g->path[P_PIDFILE], sizeof(g->path[0]), "%s/sandbox.pid", g->top);
	snprintf(g->path[P_TMP], sizeof(g->path[0]), "%s/tmp", g->top);
	if (mkdir(g->path[P_BUNDLE], 0700) != 0 || mkdir(g->path[P_ROOTFS], 0755) != 0 ||
	    mkdir(g->path[P_STATE], 0700) != 0 || mkdir(g->path[P_TMP], 0700) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot make the bundle: %s",
		                        strerror(errno));
	return 0;
}

/* Fill the rootfs with its mount points and write config.json. Returns 0
 * or -1 with *err. */
static int bundle_fill(struct gv *g, const struct runner_spec *spec, const char *agent,
                       struct runner_error *err)
{
	static const char *const links[][2] = {
	    {"usr/bin", "bin"}, {"usr/sbin", "sbin"}, {"usr/lib", "lib"}, {"usr/lib64", "lib64"}};
	char path[4096];
	json_t *binds = NULL, *cfg = NULL;
	size_t i;
	int rc = -1;

	binds = spec->binds ? json_incref(spec->binds) : json_pack("[s]", "/usr");
	for (i = 0; i < json_array_size(binds); i++) {
		const char *b = json_string_value(json_array_get(binds, i));

		if (mount_point(g, b, b, err) != 0)
			goto out;
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (bind_takes(binds, links[i][1]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", g->path[P_ROOTFS], links[i][1]);
		if (symlink(links[i][0], path) != 0) {
			runner_error_set(err, RUNNER_E_SETUP, "symlink /%s: %s", links[i][1],
			                 strerror(errno));
			goto out;
		}
	}
	if (mount_point(g, agent, "/agent", err) != 0 ||
	    mount_point(g, spec->agent_exec, "/agent-exec", err) != 0 ||
	    (spec->sdk_dir && mount_point(g, spec->sdk_dir, RUNNER_SDK_JAIL_DIR, err) != 0) ||
	    (g->gateway_dir && mount_point(g, g->gateway_dir, RUNNER_GATEWAY_JAIL_DIR, err) != 0))
		goto out;
	snprintf(path, sizeof(path), "%s/proc", g->path[P_ROOTFS]);
	if (mkdir(path, 0555) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/tmp", g->path[P_ROOTFS]);
	if (mkdir(path, 01777) != 0)
		goto fail;
	cfg = runner_gv_oci_config(spec, binds, agent, spec->agent_exec, g->path[P_TMP],
	                           g->gateway_dir);
	snprintf(path, sizeof(path), "%s/config.json", g->path[P_BUNDLE]);
	if (!cfg || json_dump_file(cfg, path, JSON_COMPACT) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot write the OCI config");
		goto out;
	}
	rc = 0;
	goto out;
fail:
	runner_error_set(err, RUNNER_E_SETUP, "cannot make the rootfs: %s", strerror(errno));
out:
	json_decref(cfg);
	json_decref(binds);
	return rc;
}

/*
 * The sandbox's /tmp: a host tmpfs of tmpfs_mb MiB and
 * RUNNER_TMP_INODES(tmpfs_mb) inodes (RUNNER_TMP_OPTIONS, as on
 * namespaces), mounted at path[P_TMP] and bound into the sandbox, where
 * the gofer serves it. Not the sentry's own tmpfs: this runsc's honours
 * size= but ignores nr_inodes= (100,000 empty files made there without an
 * error, each one the sentry's memory).
 *
 * It is mounted in a mount namespace of the runner's own (unshared here,
 * after the guard was forked: the guard stays in the host's), with every
 * mount a slave, so nothing of it reaches the host's mount table: if the
 * runner dies, the mount goes with the last process of its namespace,
 * and the guard, which never saw it, finds an empty directory to remove.
 * runsc create gives the gofer and the sandbox mount namespaces of their
 * own, copies of the runner's taken then, which keep the tmpfs while they
 * live; tmp_detach then drops the runner's own copy, so that the
 * teardown finds a plain empty directory at path[P_TMP] (and the tmpfs is
 * freed once the sandbox and the gofer are gone). Returns 0 or -1 with
 * *err naming what failed (the run then fails closed).
 */
static int tmp_mount(struct gv *g, const struct runner_limits *l, struct runner_error *err)
{
	char opts[96];

	if (unshare(CLONE_NEWNS) != 0)
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "cannot unshare a mount namespace for /tmp: %s",
		                        strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "cannot make the runner's mounts slaves for /tmp: %s",
		                        strerror(errno));
	snprintf(opts, sizeof(opts), RUNNER_TMP_OPTIONS, l->tmpfs_mb,
	         RUNNER_TMP_INODES(l->tmpfs_mb));
	if (mount("olivares-tmp", g->path[P_TMP], "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot mount the /tmp tmpfs (%s): %s",
		                        opts, strerror(errno));
	g->tmp_mounted = 1;
	return 0;
}

/* Drop the runner's copy of the /tmp tmpfs (tmp_mount); the sandbox's and
 * the gofer's stay theirs. Returns 0, or -1 with *err when it stays. */
static int tmp_detach(struct gv *g, struct runner_error *err)
{
	if (!g->tmp_mounted)
		return 0;
	if (umount2(g->path[P_TMP], MNT_DETACH) != 0)
		return runner_error_set(err, RUNNER_E_LEFT_BEHIND,
		                        "the /tmp tmpfs at %.200s stays mounted: %s",
		                        g->path[P_TMP], strerror(errno));
	g->tmp_mounted = 0;
	return 0;
}

/* ---- checks from outside ---------------------------------------------------- */

static pid_t read_pidfile(const char *path)
{
	char buf[32];
	long v;
	char *end;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || v <= 1)
		return -1;
	return (pid_t)v;
}

/*
 * Is pid runsc's sandbox ("boot") of container id, with --network=none,
 * the OCI seccomp filter on (--oci-seccomp=true) and platform? The boot
 * command line is runsc's own record of the configuration it booted with;
 * runsc writes a flag there only when its value is not runsc's default
 * (observed: no --platform= for ptrace on 0.0~20221219), so the platform
 * is in place when its flag is there or when no --platform= is: the
 * --platform=NAME runsc create was given is then runsc's default.
 */
static int sandbox_verified(pid_t pid, const char *id, const char *platform,
                            struct runner_error *err)
{
	char path[64], buf[4096], want[32];
	const char *arg, *last = NULL;
	int boot = 0, nonet = 0, seccomp = 0, other = 0, fd;
	ssize_t r;
	size_t off;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "the sandbox process %d is gone",
		                        (int)pid);
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "the sandbox process %d has no command line", (int)pid);
	buf[r] = '\0';
	snprintf(want, sizeof(want), "--platform=%s", platform);
	for (off = 0; off < (size_t)r; off += strlen(buf + off) + 1) {
		arg = buf + off;
		if (strcmp(arg, "boot") == 0)
			boot = 1;
		if (strcmp(arg, "--network=none") == 0)
			nonet = 1;
		if (strcmp(arg, "--oci-seccomp=true") == 0)
			seccomp = 1;
		if (strncmp(arg, "--platform=", 11) == 0 && strcmp(arg, want) != 0)
			other = 1;
		last = arg;
	}
	if (!boot || !nonet || !seccomp || other || !last || strcmp(last, id) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "process %d is not the gVisor sandbox of this run with "
		                        "--network=none, --oci-seccomp and platform %s",
		                        (int)pid, platform);
	return 0;
}

/* The agent's end as text, from the sandbox's exit status: runsc boot exits
 * with the root container's status (128 + n when signal n killed it).
 * Shape of runner_agent_io.exit_reason. */
/* runner_agent_io.end_input: the agent's protocol input (the
 * container's stdin, the agent's descriptor 3) closed, its cue to exit
 * (gv_destroy then finds it closed). */
static void agent_end_input(void *ctx)
{
	struct gv *g = ctx;

	close_fd(&g->to_agent);
}

static int agent_end(void *ctx, long long deadline_ms, struct runner_error *how)
{
	struct gv *g = ctx;
	int st = g->sandbox_status;
	int code;

	if (g->sandbox > 0 && st < 0) {
		if (wait_pid(g, g->sandbox, deadline_ms, &st) != 0)
			return -1;
	}
	if (st < 0)
		return -1;
	if (WIFSIGNALED(st)) {
		runner_error_set(how, RUNNER_E_AGENT, "the gVisor sandbox was killed by SIG%s",
		                 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
		return 0;
	}
	code = WEXITSTATUS(st);
	if (code > 128 && code < 128 + 65 && sigabbrev_np(code - 128))
		runner_error_set(how, RUNNER_E_AGENT, "agent killed by SIG%s",
		                 sigabbrev_np(code - 128));
	else
		runner_error_set(how, RUNNER_E_AGENT, "agent exited with status %d", code);
	return 0;
}

/* ---- start and teardown ----------------------------------------------------- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Does /proc/<name>/<file> (at most n - 1 bytes of it) contain needle? */
static int proc_has(const char *name, const char *file, char *buf, size_t n, const char *needle)
{
	char path[64];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%.20s/%s", name, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	r = read(fd, buf, n - 1);
	close(fd);
	return r > 0 && memmem(buf, (size_t)r, needle, strlen(needle)) != NULL;
}

/*
 * SIGKILL every process but this one that is of g's run: its command
 * line names a path under the run's directory (runsc create and start,
 * the gofer and the sandbox with the ptrace platform's processes all carry --root or
 * --bundle under it, and the name is mkdtemp's, so nothing else does), or
 * it is in a cgroup of the container (named by its id: whatever runsc
 * put there, under whatever name it runs). Returns how many were
 * signalled. A process that has exited has an empty command line and has
 * left its cgroups, so a zombie is not counted.
 */
static int kill_run(const struct gv *g)
{
	char buf[4096], needle[80];
	struct dirent *e;
	DIR *d = opendir("/proc");
	pid_t self = getpid(), pid;
	int n = 0;

	if (!d)
		return 0;
	snprintf(needle, sizeof(needle), "%s/", g->top);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = atoi(e->d_name);
		if (pid == self)
			continue;
		if ((proc_has(e->d_name, "cmdline", buf, sizeof(buf), needle) ||
		     (g->id[0] && proc_has(e->d_name, "cgroup", buf, sizeof(buf), g->id))) &&
		    kill(pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Remove the container's cgroups under every controller; returns how many
 * are still there. */
static int rm_cgroups(const struct gv *g)
{
	char path[256];
	int left = 0;
	size_t i;

	for (i = 0; cgroup_roots[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", cgroup_roots[i], g->id);
		if (rmdir(path) != 0 && errno != ENOENT)
			left++;
	}
	return left;
}

/* Does directory path hold any entry (runsc's state of the container)? */
static int dir_has_entries(const char *path)
{
	struct dirent *e;
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		return 0;
	while (!n && (e = readdir(d)) != NULL)
		n = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/*
 * What the guard does once the runner is gone. The runner was the
 * subreaper of runsc's processes: they are now re-parented away from
 * anything that would kill them, and `runsc delete --force` alone is not
 * enough. On a loaded machine a delete that exits 0 leaves the
 * container's cgroups (its rmdir comes before the sandbox's last tasks
 * have left them), a gofer and a sandbox have outlived it (with the
 * directory, their state, removed after it nothing could name them any
 * more), and any of these steps can take seconds. So, in rounds until
 * nothing of the run is left: kill by name and cgroup until no process
 * of the run is left, delete while runsc still has a state for it,
 * remove the cgroups, then the directory; a round that leaves something
 * is tried again after a pause that grows to RUNNER_GV_GUARD_PAUSE_MS.
 * Never on a fixed short budget (cleanup must not depend on the machine
 * being idle): it gives up only after RUNNER_GV_GUARD_MS.
 */
static void guard_clean(struct gv *g)
{
	const char *del[] = {"delete", "--force", g->id, NULL};
	long long give_up = now_ms() + RUNNER_GV_GUARD_MS;
	struct runner_error ignored;
	struct stat st;
	long pause = 5;
	int left;

	g->sandbox = -1;
	for (;;) {
		while (kill_run(g) > 0 && now_ms() < give_up)
			sleep_ms(5);
		if (dir_has_entries(g->path[P_STATE]))
			runsc_cmd(g, del, -1, -1, -1, now_ms() + RUNNER_GV_CMD_MS, &ignored);
		/* delete forked nothing that outlives it, but a process of the
		 * run still exiting may hold a cgroup for a moment */
		left = kill_run(g) + rm_cgroups(g);
		if (!left)
			nftw(g->top, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		if (lstat(g->top, &st) == 0 || errno != ENOENT)
			left++;
		if (!left || now_ms() >= give_up)
			break;
		sleep_ms(pause);
		if (pause < RUNNER_GV_GUARD_PAUSE_MS)
			pause *= 2;
	}
}

/*
 * The guard: a process outside the sandbox, in its own session, that
 * kills what is left of the run, deletes the container and removes its
 * cgroups and the directory if the runner dies before its own teardown
 * (a worker that SIGKILLs a runner past the deadline must not leave a
 * sandbox running): guard_clean. It waits on a pipe whose only write end
 * the runner holds: 'q' means the runner tore everything down itself;
 * EOF means the runner is gone.
 */
static int guard_start(struct gv *g, struct runner_error *err)
{
	int p[2], null;
	ssize_t r;
	char c = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		runner_error_set(err, RUNNER_E_SETUP, "fork of the guard: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		setsid();
		/* Never hold the runner's stdout (the worker reads it to EOF). */
		null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		close(p[1]);
		if (dup2(p[0], 3) < 0)
			_exit(1);
		close_range(4, ~0U, 0);
		do
			r = read(3, &c, 1);
		while (r < 0 && errno == EINTR);
		if (r == 1 && c == 'q')
			_exit(0);
		guard_clean(g);
		_exit(0);
	}
	close(p[0]);
	g->guard = pid;
	g->guard_fd = p[1];
	return 0;
}

/* The runner tore the sandbox down itself: the guard may go (and is
 * reaped: it exits at once). */
static void guard_dismiss(struct gv *g)
{
	ssize_t r;

	if (g->guard_fd < 0)
		return;
	do
		r = write(g->guard_fd, "q", 1);
	while (r < 0 && errno == EINTR);
	close_fd(&g->guard_fd);
	if (g->guard > 0)
		while (waitpid(g->guard, NULL, 0) < 0 && errno == EINTR)
			;
	g->guard = -1;
}

/* The runner could not remove everything: the guard goes on with it now
 * (end of file on its pipe), for as long as it takes, and outlives the
 * runner if it must. */
static void guard_hand_over(struct gv *g)
{
	close_fd(&g->guard_fd);
	g->guard = -1;
}

/*
 * Create and start the sandbox for spec with agent at /agent. Returns 0
 * once it is verified in place (see the header comment), -1 with *err
 * (kind RUNNER_E_TIMEOUT when runsc create or start was cut at deadline).
 */
static int gv_start(struct gv *g, const struct runner_spec *spec, const char *agent,
                    long long deadline, struct runner_cgroup *cg, struct runner_error *err)
{
	const char *create[] = {
	    "create", "--bundle", g->path[P_BUNDLE], "--pid-file", g->path[P_PIDFILE], g->id, NULL};
	const char *start[] = {"start", g->id, NULL};
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct runner_error step, left;
	char said[256];
	int rc = -1, created;

	if (bundle_dir(g, err) != 0)
		return -1;
	/* From here on a dying runner leaves nothing: the guard removes it. */
	if (guard_start(g, err) != 0)
		return -1;
	if (bundle_fill(g, spec, agent, err) != 0)
		return -1;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(errp, O_CLOEXEC) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "pipe: %s", strerror(errno));
		goto out;
	}
	if (tmp_mount(g, &spec->limits, &step) != 0) {
		runner_error_set(err, step.kind, "gVisor sandbox not created: %s", step.message);
		goto out;
	}
	/* The container's stdio are runsc create's: it hands them to the
	 * sandbox, which keeps them after create exits. */
	g->created = 1;
	created = runsc_cmd(g, create, in[0], out[1], errp[1], deadline, &step);
	/* Whether create worked or not, the runner's copy of /tmp goes now:
	 * the sandbox (if any) has its own. */
	if (tmp_detach(g, &left) != 0) {
		runner_error_set(err, left.kind, "gVisor sandbox not in place: %s", left.message);
		goto out;
	}
	if (created != 0) {
		/* What runsc create said went to the container's stderr. */
		read_now(errp[0], said, sizeof(said));
		first_line(said, sizeof(said), said, strlen(said));
		runner_error_set(err, step.kind, "gVisor sandbox not created (platform %s): %s%s%s",
		                 gv_platform, step.message, said[0] ? ": " : "", said);
		goto out;
	}
	g->sandbox = read_pidfile(g->path[P_PIDFILE]);
	if (g->sandbox <= 0) {
		runner_error_set(err, RUNNER_E_SETUP, "runsc create wrote no sandbox pid");
		goto out;
	}
	/* Checked while it waits for start: an agent that exits at once
	 * takes its sandbox with it. */
	if (sandbox_verified(g->sandbox, g->id, gv_platform, &step) != 0) {
		runner_error_set(err, step.kind, "gVisor sandbox not in place: %s", step.message);
		goto out;
	}
	/* Its whole-run bounds are read from its cgroup: none, no run. */
	if (gv_cgroup(g, spec, cg, &step) != 0) {
		runner_error_set(err, step.kind, "gVisor sandbox not in place: %s", step.message);
		goto out;
	}
	if (runsc_cmd(g, start, -1, -1, -1, deadline, &step) != 0) {
		runner_error_set(err, step.kind, "gVisor container not started (platform %s): %s",
		                 gv_platform, step.message);
		goto out;
	}
	rc = 0;
out:
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	g->to_agent = in[1];
	g->from_agent = out[0];
	g->err_agent = errp[0];
	return rc;
}

/* SIGKILL every child of this process but the guard (found through
 * /proc); returns how many were signalled. */
static int kill_children(pid_t guard)
{
	char path[64], buf[512];
	struct dirent *e;
	DIR *d = opendir("/proc");
	pid_t self = getpid();
	char *p;
	int ppid, fd, n = 0;
	pid_t pid;
	ssize_t r;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, so
		 * parse from the last ')'. */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		pid = atoi(e->d_name);
		if (ppid == self && pid != guard && kill(pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Reap every descendant (the runner is their subreaper), killing what
 * still runs, until none is left but the guard. Returns 0 then, -1 at
 * the deadline. */
static int reap_all(struct gv *g, long long deadline)
{
	pid_t r;
	int st;

	for (;;) {
		while ((r = waitpid(-1, &st, WNOHANG)) > 0) {
			if (r == g->sandbox) {
				g->sandbox = -1;
				g->sandbox_status = st;
			}
			if (r == g->guard)
				g->guard = -1; /* it died: nothing to hand over to */
		}
		if (r < 0 && errno == ECHILD)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		/* r is 0: a child runs; none but the guard once nothing is
		 * signalled (a zombie is, and is reaped on the next pass) */
		if (r == 0 && kill_children(g->guard) == 0 && g->guard > 0)
			return 0;
		if (now_ms() >= deadline)
			return -1;
		sleep_ms(2);
	}
}

/* Tear the sandbox down; returns 0 when nothing of it is left, else -1
 * with *err naming what is (kind RUNNER_E_LEFT_BEHIND). The agent has
 * until grace_deadline to exit (the sandbox exits with it); g->killed says
 * whether it was still running then. */
static int gv_destroy(struct gv *g, long long grace_deadline, struct runner_error *err)
{
	const char *del[] = {"delete", "--force", g->id, NULL};
	long long deadline;
	struct runner_error ignored;
	char path[256];
	struct stat st;
	size_t i;
	int ok = 1, st_exit;

	err->kind = RUNNER_OK;
	err->message[0] = '\0';
	/* EOF on its stdin is the agent's cue to exit; the sandbox exits
	 * with it. */
	close_fd(&g->to_agent);
	/* The sandbox exits a few ms after its agent: it gets RUNNER_GV_EXIT_SLACK_MS
	 * more, so an agent that exited by itself within its grace is never
	 * said killed (one later by less than that is not said either). */
	if (g->sandbox > 0 &&
	    wait_pid(g, g->sandbox, grace_deadline ? grace_deadline + RUNNER_GV_EXIT_SLACK_MS : 0,
	             &st_exit) == 1)
		g->killed = 1;
	/* delete kills the sandbox and the gofer and removes the state and
	 * the cgroups; whether it worked is checked below, not taken from
	 * its exit status (it fails on a container that was never made). */
	if (g->created)
		runsc_cmd(g, del, -1, -1, -1, now_ms() + RUNNER_GV_CMD_MS, &ignored);
	/* counted from here: a delete slowed by a loaded host does not eat
	 * the time the rest needs */
	deadline = now_ms() + RUNNER_GV_TEARDOWN_MS;
	if (reap_all(g, deadline) != 0) {
		ok = 0;
		runner_error_set(err, RUNNER_E_LEFT_BEHIND,
		                 "a process of the gVisor sandbox could not be reaped");
	}
	close_fd(&g->from_agent);
	close_fd(&g->err_agent);
	/* every task is reaped, but a cgroup may stay busy a moment longer
	 * after its last one left: retried until the deadline */
	while (g->created && rm_cgroups(g) != 0 && now_ms() < deadline)
		sleep_ms(10);
	for (i = 0; g->created && cgroup_roots[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", cgroup_roots[i], g->id);
		if (lstat(path, &st) == 0) {
			ok = 0;
			runner_error_set(err, RUNNER_E_LEFT_BEHIND, "cgroup %.200s left behind",
			                 path);
		}
	}
	if (g->top[0]) {
		/* Never across a mount point: nothing of the host is removed
		 * even if something were mounted in the rootfs. */
		nftw(g->top, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		if (lstat(g->top, &st) == 0 || errno != ENOENT) {
			ok = 0;
			runner_error_set(err, RUNNER_E_LEFT_BEHIND,
			                 "bundle directory %.200s left behind", g->top);
		}
	}
	/* What the runner could not remove is the guard's to finish (the
	 * run still says destroyed false: it was not gone when it ended). */
	if (ok) {
		guard_dismiss(g);
		g->top[0] = '\0';
	} else {
		guard_hand_over(g);
	}
	return ok ? 0 : -1;
}

/* ---- the backend ------------------------------------------------------------ */

static int gv_preflight(struct runner_error *err)
{
	const char *version[] = {"--version", NULL};
	struct runner_error ran;
	struct gv g;

	memset(&g, 0, sizeof(g));
	g.runsc = find_runsc();
	if (!g.runsc)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "runsc binary not found (looked in /usr/bin, /usr/sbin, "
		                        "/usr/local/bin)");
	if (geteuid() != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "runsc run needs root (the runner runs as uid %d)",
		                        (int)geteuid());
	/* --version takes no --root; runsc ignores the extra flags for it,
	 * but keep the call minimal: a state dir that does not exist. */
	snprintf(g.path[P_STATE], sizeof(g.path[0]), "/nonexistent");
	if (runsc_cmd(&g, version, -1, -1, -1, now_ms() + RUNNER_GV_CMD_MS, &ran) != 0)
		return runner_error_set(err, RUNNER_E_MISSING, "runsc does not run: %s",
		                        ran.message);
	/* the memory controller and CPU accounting the sandbox's cgroup is
	 * read from */
	return runner_cgroup_preflight(0, err);
}

/* Shared by run and the full preflight: prepare, mark the runner as the
 * subreaper of everything runsc starts. */
static int gv_init(struct gv *g, struct runner_error *err)
{
	memset(g, 0, sizeof(*g));
	g->sandbox = -1;
	g->sandbox_status = -1;
	g->to_agent = g->from_agent = g->err_agent = -1;
	g->guard = -1;
	g->guard_fd = -1;
	g->runsc = find_runsc();
	if (!g->runsc)
		return runner_error_set(err, RUNNER_E_MISSING, "runsc binary not found");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "PR_SET_CHILD_SUBREAPER failed: %s",
		                        strerror(errno));
	return 0;
}

/* --preflight gvisor: also boot a throw-away sandbox running /usr/bin/true
 * exactly as a run would, and check it exits 0 and is torn down. */
static int gv_preflight_full(struct runner_error *err)
{
	struct runner_spec spec;
	struct runner_error end, left;
	struct runner_cgroup cg;
	struct gv g;
	long long deadline = now_ms() + RUNNER_GV_TRIAL_MS;
	int rc = -1, st;

	if (gv_preflight(err) != 0)
		return -1;
	memset(&spec, 0, sizeof(spec));
	spec.limits = (struct runner_limits){
	    MODEL_RUN_WALL_MS_DEFAULT,   MODEL_RUN_CPU_SECONDS_DEFAULT, MODEL_RUN_MEMORY_MB_DEFAULT,
	    MODEL_RUN_PROCESSES_DEFAULT, MODEL_RUN_OPEN_FILES_DEFAULT,  MODEL_RUN_TMPFS_MB_DEFAULT};
	/* the trial asks whether a sandbox starts and ends here: its first
	 * program is /usr/bin/true too (a run's moves its descriptors) */
	spec.agent_exec = "/usr/bin/true";
	if (gv_init(&g, err) != 0)
		return -1;
	if (gv_start(&g, &spec, "/usr/bin/true", deadline, &cg, err) != 0)
		goto out;
	if (agent_end(&g, deadline, &end) != 0) {
		runner_error_set(err, RUNNER_E_MISSING,
		                 "trial sandbox running /usr/bin/true did not exit");
		goto out;
	}
	st = g.sandbox_status;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		runner_error_set(err, RUNNER_E_MISSING, "trial sandbox running /usr/bin/true: %s",
		                 end.message);
		goto out;
	}
	rc = 0;
out:
	if (gv_destroy(&g, 0, &left) != 0 && rc == 0) {
		runner_error_set(err, left.kind, "trial sandbox not torn down: %s", left.message);
		rc = -1;
	}
	return rc;
}

/* runner_agent_teardown's destroy: the sandbox deleted once the agent's
 * grace is over (its sandbox gets RUNNER_GV_EXIT_SLACK_MS more for its
 * own exit). */
static int gv_teardown(void *ctx, long long grace_deadline_ms, int *killed,
                       struct runner_error *left)
{
	struct gv *g = ctx;
	struct runner_error why;
	int rc = gv_destroy(g, grace_deadline_ms, &why);

	*killed = g->killed;
	if (rc != 0)
		return runner_error_set(left, why.kind, "the gVisor sandbox was not torn down: %s",
		                        why.message);
	return 0;
}

static int gv_run(const struct runner_spec *spec, FILE *out, struct runner_summary *sum)
{
	const char *agent = runner_agent_program(spec, "gvisor", sum);
	struct runner_gateway_run gw;
	struct runner_agent_io io;
	struct runner_cgroup cg;
	struct stat st;
	struct gv g;
	struct runner_error err;
	long long deadline = now_ms() + spec->limits.wall_ms, start_deadline;
	int rc = -1, lfd = -1;

	memset(&io, 0, sizeof(io));
	memset(&gw, 0, sizeof(gw));
	if (!agent)
		return -1;
	if (stat(agent, &st) != 0 || !S_ISREG(st.st_mode) || access(agent, X_OK) != 0) {
		snprintf(sum->reason, sizeof(sum->reason),
		         "agent program %.200s is not an executable regular file", agent);
		return -1;
	}
	/* the agent's descriptors are moved in the sandbox by this program:
	 * without it no agent could speak its protocol, so no run */
	if (!spec->agent_exec) {
		snprintf(sum->reason, sizeof(sum->reason),
		         "gVisor sandbox not in place: olivares-agent-exec was not found beside "
		         "the runner");
		return -1;
	}
	if (runner_interp_check(spec, agent, sum) != 0)
		return -1;
	if (gv_init(&g, &err) != 0) {
		snprintf(sum->reason, sizeof(sum->reason), "gVisor sandbox not in place: %s",
		         err.message);
		return -1;
	}
	/* The gateway serves before the sandbox exists: nothing reaches its
	 * socket but the sandbox's relay. It readies itself while the
	 * sandbox starts, and is waited for once the sandbox stands. */
	if (spec->gateway) {
		if (runner_gateway_run_prepare(&gw, spec, &err) != 0 ||
		    runner_gateway_run_start(&gw, &err) != 0 ||
		    runner_gateway_run_listen_unix(&gw, &lfd, &err) != 0 ||
		    runner_gateway_run_hand(&gw, lfd, &err) != 0) {
			snprintf(sum->reason, sizeof(sum->reason),
			         "gVisor sandbox not in place: %s", err.message);
			goto out;
		}
		g.gateway_dir = gw.dir;
	}
	start_deadline = now_ms() + RUNNER_GV_START_MS;
	if (start_deadline > deadline)
		start_deadline = deadline;
	if (gv_start(&g, spec, agent, start_deadline, &cg, &err) != 0) {
		/* a runsc command cut at the deadline: the reason names the
		 * limit that cut it */
		if (err.kind != RUNNER_E_TIMEOUT)
			snprintf(sum->reason, sizeof(sum->reason), "%s", err.message);
		else if (start_deadline == deadline)
			snprintf(sum->reason, sizeof(sum->reason),
			         "wall-clock limit of %ld ms exceeded while the gVisor sandbox "
			         "was starting (platform %s)",
			         spec->limits.wall_ms, gv_platform);
		else
			snprintf(sum->reason, sizeof(sum->reason),
			         "the gVisor sandbox did not start within %d ms (platform %s); a "
			         "sandbox boots in under a second",
			         RUNNER_GV_START_MS, gv_platform);
		goto out;
	}
	if (spec->gateway && runner_gateway_run_ready(&gw, deadline, &err) != 0) {
		snprintf(sum->reason, sizeof(sum->reason), "gVisor sandbox not in place: %s",
		         err.message);
		goto out;
	}
	sum->isolated = 1;
	memset(&io, 0, sizeof(io));
	io.err_fd = g.err_agent;
	io.exit_reason = agent_end;
	io.end_input = agent_end_input;
	io.ctx = &g;
	io.check = runner_cgroup_poll;
	io.check_ctx = &cg;
	io.gateway = spec->gateway ? &gw : NULL;
	rc = runner_agent_drive_ex(spec, g.to_agent, g.from_agent, deadline, out, sum, &io);
out:
	/* Done or failed: the agent gets its grace period to exit on EOF,
	 * never past the run's deadline, then the sandbox is deleted, and
	 * last the gateway stopped. */
	rc = runner_agent_teardown(spec, &io, deadline, rc, gv_teardown, &g, sum);
	runner_gateway_run_end(&gw, sum);
	return rc;
}

const struct runner_backend runner_backend_gvisor = {
    .name = "gvisor",
    .preflight = gv_preflight,
    .run = gv_run,
    .probe = NULL,
    .preflight_full = gv_preflight_full,
};
