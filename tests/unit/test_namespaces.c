/*
 * The containment suite of the namespaces backend, what the jail must
 * show: the built runner (OLIVARES_RUNNER) runs the hostile agent
 * (OLIVARES_HOSTILE_AGENT, tests/fixtures/agents/hostile.c) in its jail,
 * one test per attack, each asserting the exact outcome the agent saw.
 * Plus: the walkthrough (README) gives the same lines on namespaces as on
 * inproc-mock, the example agent shows a variant difference, bad specs and
 * a missing agent fail closed, and nothing of a jail is left behind (no
 * process of the jail's host uid, no new mount, no new entry in /tmp).
 *
 * Makefile.am's AM_TESTS_ENVIRONMENT sets the OLIVARES_* paths; export them
 * when running by hand. The runner's stdout is parsed directly (one JSON
 * object per line, model/runspec.h).
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <netinet/in.h>
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
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/runner_harness.h"
#include "tests/unit/test_namespaces.h"
#include "tests/unit/sweep.h"

#define JAIL_HOST_UID 200000

/* ---- helpers ------------------------------------------------------------ */

const char *hostile(void)
{
	return env_path("OLIVARES_HOSTILE_AGENT");
}

/* The session the runner is started in by run_argv(): this process's
 * (SESSION_INHERIT), a new one without a controlling terminal
 * (SESSION_NO_TTY), or a new one whose controlling terminal is a fresh
 * pseudo-terminal (SESSION_TTY). */
enum { SESSION_INHERIT, SESSION_NO_TTY, SESSION_TTY };
static int run_session = SESSION_INHERIT;
/* The uid (and gid) run_argv() starts the runner as; 0: this process's. */
static uid_t run_as_uid = 0;
/* When set, run_argv() moves the runner into these cgroups (their
 * cgroup.procs files, NULL-terminated) before it drops to run_as_uid: a
 * cgroup delegated to that uid. */
static const char *const *run_cgroups = NULL;
/* The open-file limit (soft and hard) run_argv() starts the runner
 * under; 0: this process's. */
static rlim_t run_nofile = 0;

/* When set, run_argv() starts the runner under an inherited seccomp
 * filter that refuses new user namespaces (clone, clone3, unshare): a host
 * without the primitive the jail needs. */
static int run_deny_userns = 0;

/* When set, run_argv() starts the runner in a mount namespace of its own
 * where the host's /dev/zero is bound over /dev/null (1: a host whose
 * /dev/null is another device), or /dev/null over itself nodev (2). */
static int run_swap_dev_null = 0;

/* In the runner's child, before its exec: the mounts of
 * run_swap_dev_null. 0, or -1. */
static int swap_dev_null(void)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -1;
	if (run_swap_dev_null == 2)
		/* /dev/null bound onto itself, nodev */
		return mount("/dev/null", "/dev/null", NULL, MS_BIND, NULL) != 0 ||
		               mount(NULL, "/dev/null", NULL, MS_REMOUNT | MS_BIND | MS_NODEV,
		                     NULL) != 0
		           ? -1
		           : 0;
	return mount("/dev/zero", "/dev/null", NULL, MS_BIND, NULL) != 0 ? -1 : 0;
}

/* In the runner's child, before its exec: the filter of run_deny_userns.
 * 0, or -1. */
static int deny_userns(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = -1;

	if (ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
	                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0 &&
	    seccomp_load(ctx) == 0)
		rc = 0;
	seccomp_release(ctx);
	return rc;
}

/* In the runner's child, before its exec: the host the run_* settings
 * above describe (ctx: the pseudo-terminal's master for SESSION_TTY). */
static int runner_host(void *ctx)
{
	int pty = *(int *)ctx;
	int tty;

	if (run_session != SESSION_INHERIT && setsid() < 0)
		return -1;
	for (size_t c = 0; run_cgroups && run_cgroups[c]; c++) {
		char self[32];
		int fd = open(run_cgroups[c], O_WRONLY | O_CLOEXEC);

		snprintf(self, sizeof(self), "%d", (int)getpid());
		if (fd < 0 || write(fd, self, strlen(self)) != (ssize_t)strlen(self))
			return -1;
		close(fd);
	}
	if (run_as_uid != 0 &&
	    (setgroups(0, NULL) != 0 || setresgid(run_as_uid, run_as_uid, run_as_uid) != 0 ||
	     setresuid(run_as_uid, run_as_uid, run_as_uid) != 0))
		return -1;
	if (run_nofile != 0 &&
	    setrlimit(RLIMIT_NOFILE, &(struct rlimit){run_nofile, run_nofile}) != 0)
		return -1;
	if (run_deny_userns && deny_userns() != 0)
		return -1;
	if (run_swap_dev_null && swap_dev_null() != 0)
		return -1;
	/* A session leader without a terminal that opens one gets it as its
	 * controlling terminal. */
	if (run_session == SESSION_TTY) {
		tty = open(ptsname(pty), O_RDWR | O_CLOEXEC);
		if (tty < 0)
			return -1;
	}
	return 0;
}

/* Run `runner argv...` with spec on stdin and extra_env as its whole
 * environment, on the host the run_* settings describe; parse every
 * stdout line (each must be JSON). */
static struct result run_argv(const char *const *args, json_t *spec, char *const *extra_env)
{
	struct result r;
	long long t0;
	int pty = -1, fd;
	pid_t pid;

	if (run_session == SESSION_TTY) {
		pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		ck_assert_int_ge(pty, 0);
		ck_assert_int_eq(grantpt(pty), 0);
		ck_assert_int_eq(unlockpt(pty), 0);
	}
	t0 = now_ms();
	pid = spawn_runner_with(args, spec, extra_env, runner_host, &pty, &fd);
	r = collect(pid, fd, t0);
	if (pty >= 0)
		close(pty);
	return r;
}

/* `runner --preflight namespaces` on the host the run_* settings describe
 * says the jail cannot be built here, and why. */
static void assert_preflight_refused(const char *reason)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--preflight", "namespaces", NULL};
	static char *const env[] = {"HOME=/root", NULL};
	struct result r = run_argv(args, NULL, env);

	ck_assert_msg(r.summary != NULL, "no preflight line");
	ck_assert_str_eq(sum_str(&r, "type"), "preflight");
	ck_assert(!sum_bool(&r, "ok"));
	ck_assert_str_eq(sum_str(&r, "reason"), reason);
	result_free(&r);
}

static struct result run_backend(const char *backend, json_t *spec)
{
	static char *const env[] = {"OLIVARES_DB_PASSWORD=server-secret", "HOME=/root", NULL};
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	struct result r = run_argv(args, spec, env);

	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	return r;
}

/* Run agent on one step of input with the given limits (0 = default); the
 * run must be isolated and destroyed. */
struct result agent_run(const char *agent, const char *input, long cpu, long mem, long procs,
                        long wall, long tmpfs_mb)
{
	const char *const names[] = {"cpu_seconds", "memory_mb", "processes", "wall_ms",
	                             "tmpfs_mb"};
	const long values[] = {cpu, mem, procs, wall, tmpfs_mb};
	json_t *spec = spec_new(NULL, agent);
	struct result r;
	size_t i;

	spec_step(spec, "probe", input);
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (values[i])
			spec_limit(spec, names[i], values[i]);
	r = run_backend("namespaces", spec);
	json_decref(spec);
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert_msg(sum_bool(&r, "destroyed"), "not destroyed: %s", sum_str(&r, "reason"));
	ck_assert_str_eq(sum_str(&r, "backend"), "namespaces");
	return r;
}

/* Run the hostile agent on one probe with the given limits (0 = default):
 * agent_run(). */
static struct result probe_limits(const char *input, long cpu, long mem, long procs, long wall)
{
	return agent_run(hostile(), input, cpu, mem, procs, wall, 0);
}

/* One step of agent on input, with tmpfs_mb (0: the default): the run must
 * complete, isolated and destroyed. Returns the step's output (static
 * copy). */
static const char *agent_step(const char *agent, const char *input, long tmpfs_mb)
{
	static char out[8192];
	struct result r = agent_run(agent, input, 0, 0, 0, 0, tmpfs_mb);

	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "run failed: %s",
	              sum_str(&r, "reason"));
	ck_assert_int_eq(sum_int(&r, "steps_total"), 1);
	ck_assert_str_eq(step_str(&r, 0, "status"), "ok");
	snprintf(out, sizeof(out), "%s", step_str(&r, 0, "output"));
	result_free(&r);
	return out;
}

/* One probe of the hostile agent that completes: agent_step(). */
static const char *probe(const char *input)
{
	return agent_step(hostile(), input, 0);
}

/* ---- containment: one test per attack ------------------------------------ */

START_TEST(test_connect_host_loopback)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct pollfd p;
	char input[64], want[128];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(s, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	snprintf(input, sizeof(input), "connect 127.0.0.1:%d", ntohs(sa.sin_port));
	snprintf(want, sizeof(want), "%s: denied (ENETUNREACH)", input);
	ck_assert_str_eq(probe(input), want);
	/* and nothing reached the host's listener */
	p.fd = s;
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	close(s);
}
END_TEST

/* A host file with a secret, outside the jail. */
static void secret_file(char *dir, size_t dn, char *file, size_t fn)
{
	FILE *f;

	ck_assert_int_eq(sweep_mkdtemp(dir, dn, "/tmp", "olv-ns-test-"), 0);
	snprintf(file, fn, "%s/secret", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("host secret 7c1f\n", f);
	fclose(f);
}

START_TEST(test_read_host_file)
{
	char dir[64], file[128], input[160], want[200];

	secret_file(dir, sizeof(dir), file, sizeof(file));
	snprintf(input, sizeof(input), "read %s", file);
	snprintf(want, sizeof(want), "%s: denied (ENOENT)", input);
	ck_assert_str_eq(probe(input), want);
	ck_assert_str_eq(probe("read /etc/passwd"), "read /etc/passwd: denied (ENOENT)");
	ck_assert_str_eq(probe("read /root/.bash_history"),
	                 "read /root/.bash_history: denied (ENOENT)");
	unlink(file);
	rmdir(dir);
}
END_TEST

START_TEST(test_read_host_file_through_symlink)
{
	char dir[64], file[128], input[160], want[200];

	secret_file(dir, sizeof(dir), file, sizeof(file));
	snprintf(input, sizeof(input), "read-symlink %s", file);
	snprintf(want, sizeof(want), "%s: denied (ENOENT)", input);
	ck_assert_str_eq(probe(input), want);
	ck_assert_str_eq(probe("read-symlink /etc/shadow"),
	                 "read-symlink /etc/shadow: denied (ENOENT)");
	unlink(file);
	rmdir(dir);
}
END_TEST

START_TEST(test_write_outside_tmpfs)
{
	struct stat st;

	ck_assert_str_eq(probe("write /usr/olv-ns-x"), "write /usr/olv-ns-x: denied (EROFS)");
	ck_assert_str_eq(probe("write /olv-ns-outside"), "write /olv-ns-outside: denied (EROFS)");
	ck_assert_str_eq(probe("write /agent"), "write /agent: denied (EROFS)");
	/* the jail's own /tmp is writable, and is not the host's */
	ck_assert_str_eq(probe("write /tmp/olv-ns-inside"), "write /tmp/olv-ns-inside: allowed");
	ck_assert_int_ne(stat("/usr/olv-ns-x", &st), 0);
	ck_assert_int_ne(stat("/olv-ns-outside", &st), 0);
	ck_assert_int_ne(stat("/tmp/olv-ns-inside", &st), 0);
}
END_TEST

/* The agent is the jail's pid 1, alone (the builder is gone by its exec). */
START_TEST(test_proc_shows_only_the_jail)
{
	ck_assert_str_eq(probe("proc"), "proc: 1 pids: 1");
}
END_TEST

/* The agent starts in the jail's root, not in the runner's working
 * directory on the host (this test's, the build tree): getcwd() would
 * answer "(unreachable)/..." for a directory outside its root. */
START_TEST(test_cwd_is_the_jail_root)
{
	ck_assert_str_eq(probe("cwd"), "cwd: /");
}
END_TEST

/* Cgroups delegated to uid (v1: one in the memory and one in the cpuacct
 * hierarchy; v2: one, the runner in a leaf of it) for a runner that is not
 * root: their cgroup.procs into procs (NULL-terminated), their
 * directories into dirs, deepest first (for deleg_remove). */
static void deleg_make(uid_t uid, char dirs[3][128], char procs[3][160], const char *p[3])
{
	int v1 = access("/sys/fs/cgroup/memory/cgroup.procs", F_OK) == 0;
	static const char *const files[] = {"", "/cgroup.procs", "/tasks",
	                                    "/cgroup.subtree_control"};
	char path[200];
	size_t i, k, n = 0;

	memset(dirs, 0, 3 * 128);
	if (v1) {
		snprintf(dirs[0], 128, "/sys/fs/cgroup/memory/olv-ns-test-deleg-%d", (int)getpid());
		snprintf(dirs[1], 128, "/sys/fs/cgroup/cpuacct/olv-ns-test-deleg-%d",
		         (int)getpid());
		n = 2;
	} else {
		snprintf(dirs[1], 128, "/sys/fs/cgroup/olv-ns-test-deleg-%d", (int)getpid());
		snprintf(dirs[0], 128, "%s/leaf", dirs[1]);
		n = 2;
	}
	for (i = n; i-- > 0;) {
		ck_assert_msg(mkdir(dirs[i], 0755) == 0, "%s: %s", dirs[i], strerror(errno));
		if (!v1 && i == 1) {
			snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dirs[1]);
			int fd = open(path, O_WRONLY | O_CLOEXEC);

			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(write(fd, "+memory", 7), 7);
			close(fd);
		}
		for (k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			snprintf(path, sizeof(path), "%s%s", dirs[i], files[k]);
			if (access(path, F_OK) == 0)
				ck_assert_int_eq(chown(path, uid, uid), 0);
		}
	}
	for (i = 0; i < (v1 ? 2u : 1u); i++) {
		snprintf(procs[i], 160, "%s/cgroup.procs", dirs[i]);
		p[i] = procs[i];
	}
	p[i] = NULL;
}

/* Remove what deleg_make() made (its runners gone). */
static void deleg_remove(char dirs[3][128])
{
	long long until = now_ms() + 5000;
	size_t i;

	for (i = 0; i < 3; i++)
		while (dirs[i][0] && rmdir(dirs[i]) != 0 && errno == EBUSY && now_ms() < until)
			sleep_ms(10);
}

/* A runner that is not root builds the same jail (its root mapped to the
 * runner's own uid), and verifies it every time: before its exec pid 1 is
 * not dumpable, which closes its /proc entries to such a runner, so the
 * verification then waits for the exec. Five runs, as a race would show
 * in some of them. Its whole-run bounds need a cgroup it may make: without
 * one delegated to it the run fails closed, saying so; with one, under
 * it. */
START_TEST(test_runner_not_root)
{
	json_t *spec = spec_new(NULL, NULL);
	const char *end = "(the whole-run memory and CPU bounds need a cgroup; the runner runs "
	                  "as uid 65534)";
	char dirs[3][128], procs[3][160];
	const char *deleg[3];
	const char *why;
	struct result r;
	int i;

	spec_step(spec, "step-1", "agent:user1@example.test");
	spec_mock(spec, "agent:user1@example.test", "first synthetic account", NULL);
	run_as_uid = 65534;
	r = run_backend("namespaces", spec);
	why = sum_str(&r, "reason");
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert(!sum_bool(&r, "isolated"));
	ck_assert_int_eq(json_array_size(r.steps), 0);
	ck_assert_msg(strncmp(why,
	                      "namespace jail not in place: cannot create the run's cgroup "
	                      "under /sys/fs/cgroup",
	                      80) == 0 &&
	                  strlen(why) > strlen(end) &&
	                  strcmp(why + strlen(why) - strlen(end), end) == 0,
	              "%s", why);
	result_free(&r);
	deleg_make(65534, dirs, procs, deleg);
	run_cgroups = deleg;
	for (i = 0; i < 5; i++) {
		r = run_backend("namespaces", spec);
		ck_assert_msg(sum_bool(&r, "isolated"), "run %d: %s", i, sum_str(&r, "reason"));
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		ck_assert_str_eq(step_str(&r, 0, "output"), "first synthetic account");
		ck_assert(sum_bool(&r, "destroyed"));
		result_free(&r);
	}
	run_cgroups = NULL;
	run_as_uid = 0;
	deleg_remove(dirs);
	json_decref(spec);
}
END_TEST

/* probe() with the runner started in the given session (run_session). */
static const char *probe_in_session(int session, const char *input)
{
	const char *out;

	run_session = session;
	out = probe(input);
	run_session = SESSION_INHERIT;
	return out;
}

/* The agent leads a process group of its own, with a terminal or
 * without: kill(0, ...) from it reaches the jail only, never the runner's
 * group (the same uid as the agent's when the runner is not root). */
START_TEST(test_process_group_own)
{
	ck_assert_str_eq(probe_in_session(SESSION_INHERIT, "pgid"), "pgid: own");
	ck_assert_str_eq(probe_in_session(SESSION_NO_TTY, "pgid"), "pgid: own");
	ck_assert_str_eq(probe_in_session(SESSION_TTY, "pgid"), "pgid: own");
}
END_TEST

/* The jail's proc is read-only: nothing in it reaches what the agent
 * shares with the runner's session (the autogroup's nice value). */
START_TEST(test_proc_read_only)
{
	ck_assert_str_eq(probe("autogroup"), "autogroup: denied (EROFS)");
}
END_TEST

/* A runner with a controlling terminal puts the agent in a session of its
 * own (the agent, pid 1, leads it); without one, the agent stays in the
 * runner's session, whose leader is outside its pid namespace (getsid 0),
 * and which has no terminal for it to reach. */
START_TEST(test_session_with_tty)
{
	ck_assert_str_eq(probe_in_session(SESSION_TTY, "session"), "session: own");
	ck_assert_str_eq(probe_in_session(SESSION_NO_TTY, "session"), "session: outside");
}
END_TEST

START_TEST(test_fork_bomb_stopped)
{
	struct result r = probe_limits("forkbomb", 0, 0, 16, 0);
	const char *out = step_str(&r, 0, "output");
	int forks = -1;

	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(sscanf(out, "forkbomb: stopped after %d forks", &forks) == 1, "%s", out);
	/* 16 processes for the jail's uid: the agent (pid 1) holds one */
	ck_assert_int_eq(forks, 15);
	ck_assert_ptr_nonnull(strstr(out, "(EAGAIN)"));
	result_free(&r);
}
END_TEST

START_TEST(test_cpu_spin_killed_by_rlimit)
{
	struct result r = probe_limits("spin", 1, 0, 0, 20000);
	const char *why = sum_str(&r, "reason");

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	/* As pid 1 the agent ignores SIGXCPU: the limit is hard at 1 s. The
	 * run's own budget of 1 s (the run's cgroup, read every 100 ms) may
	 * see it first: either reason names cpu_seconds. */
	if (strncmp(why, "cpu_seconds limit (1 s of CPU time for the whole run) reached: ", 63) !=
	    0) {
		ck_assert_str_eq(
		    step_str(&r, 0, "output"),
		    "[[agent-error:agent killed by SIGKILL at its CPU time limit of 1 s "
		    "(cpu_seconds, per process)]]");
		ck_assert_str_eq(why,
		                 "agent error in step 1: agent killed by SIGKILL at its CPU time "
		                 "limit of 1 s (cpu_seconds, per process)");
	}
	ck_assert_str_eq(step_str(&r, 0, "status"), "error");
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	ck_assert_msg(r.ms < 5000, "took %lld ms", r.ms);
	result_free(&r);
}
END_TEST

START_TEST(test_cpu_spin_killed_by_wall_clock)
{
	struct result r = probe_limits("spin", 60, 0, 0, 800);

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(step_str(&r, 0, "output"),
	                 "[[agent-error:wall-clock limit of 800 ms exceeded]]");
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_str_eq(sum_str(&r, "reason"), "wall-clock limit of 800 ms exceeded");
	ck_assert_msg(r.ms >= 800 && r.ms < 3000, "took %lld ms", r.ms);
	result_free(&r);
}
END_TEST

START_TEST(test_memory_balloon_stopped)
{
	struct result r = probe_limits("balloon", 0, 64, 0, 0);
	const char *out = step_str(&r, 0, "output");
	int mib = -1;

	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(sscanf(out, "balloon: stopped at %d MiB", &mib) == 1, "%s", out);
	ck_assert_int_gt(mib, 0);
	ck_assert_int_lt(mib, 64);
	ck_assert_ptr_nonnull(strstr(out, "(ENOMEM)"));
	result_free(&r);
}
END_TEST

START_TEST(test_mount_refused)
{
	ck_assert_str_eq(probe("mount"), "mount: denied (EPERM)");
	ck_assert_str_eq(probe("unshare"), "unshare: denied (EPERM)");
	ck_assert_str_eq(probe("ns-calls"), "ns-calls: clone denied (EPERM), setns denied (EPERM), "
	                                    "umount2 denied (EPERM), pivot_root denied (EPERM), "
	                                    "chroot denied (EPERM)");
}
END_TEST

START_TEST(test_ptrace_refused)
{
	ck_assert_str_eq(probe("ptrace"),
	                 "ptrace: attach 1 denied (EPERM), traceme denied (EPERM)");
}
END_TEST

START_TEST(test_no_descriptor_inherited)
{
	/* A descriptor the worker forgot to close (no CLOEXEC): it must not
	 * reach the agent. */
	int leak = open("/etc/hostname", O_RDONLY);

	ck_assert_int_ge(leak, 3);
	ck_assert_str_eq(probe("fds"), "fds: 0 1 2 3 4");
	close(leak);
}
END_TEST

START_TEST(test_environment_clean)
{
	ck_assert_str_eq(
	    probe("env"),
	    "env: HOME=/ LANG=C.UTF-8 OLIVARES_PROTOCOL_IN_FD=3 OLIVARES_PROTOCOL_OUT_FD=4 "
	    "PATH=/usr/bin:/bin PYTHONPATH=/olivares/python");
}
END_TEST

START_TEST(test_identity_and_host_view)
{
	char want[64];

	snprintf(want, sizeof(want), "uid: uid=0 gid=0 map=0 %d 1", JAIL_HOST_UID);
	ck_assert_str_eq(probe("uid"), want);
	ck_assert_str_eq(probe("caps"), "caps: CapEff=0000000000000000");
	ck_assert_str_eq(probe("hostname"), "hostname: sandbox");
	ck_assert_str_eq(probe("net"), "net: lo down");
}
END_TEST

START_TEST(test_agent_exit_mid_step)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;

	spec_step(spec, "a", "env");
	spec_step(spec, "b", "exit 3");
	spec_step(spec, "c", "env");
	r = run_backend("namespaces", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 1, "output"), "[[agent-error:agent exited with status 3]]");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 2: agent exited with status 3");
	ck_assert_int_eq(sum_int(&r, "steps_total"), 2);
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 1);
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* A line that is not JSON: the reason quotes it (printable ASCII only)
 * and the first line the agent wrote on stderr just after it. */
/* An agent that fails a step itself (agent_error, an "error" line): its
 * message is the step's marker and the run's reason, nothing of its log
 * added, no later step run; a message over 200 characters is cut, with
 * "...". */
START_TEST(test_agent_fails_its_step)
{
	json_t *spec = spec_new(NULL, hostile());
	char long_msg[300], want[400];
	struct result r;

	spec_step(spec, "a", "fail the upstream said no");
	spec_step(spec, "b", "cwd");
	r = run_backend("namespaces", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), "agent error in step 1: the upstream said no");
	ck_assert_int_eq(json_array_size(r.steps), 1);
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_str_eq(step_str(&r, 0, "output"), "[[agent-error:the upstream said no]]");
	result_free(&r);
	json_decref(spec);

	memset(long_msg, 'x', 250);
	long_msg[250] = '\0';
	snprintf(want, sizeof(want), "fail %s", long_msg);
	spec = spec_new(NULL, hostile());
	spec_step(spec, "a", want);
	r = run_backend("namespaces", spec);
	snprintf(want, sizeof(want), "agent error in step 1: %.200s...", long_msg);
	ck_assert_str_eq(sum_str(&r, "reason"), want);
	result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_agent_malformed_line_quoted)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;

	spec_step(spec, "a", "garbage");
	r = run_backend("namespaces", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(
	    step_str(&r, 0, "output"),
	    "[[agent-error:malformed line from the agent (not JSON): \"hello ? world\"]]");
	ck_assert_str_eq(
	    sum_str(&r, "reason"),
	    "agent error in step 1: malformed line from the agent (not JSON): \"hello ? "
	    "world\" (agent log: garbage: the line above is not JSON)");
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);

	/* a type the protocol does not have is named */
	spec = spec_new(NULL, hostile());
	spec_step(spec, "a", "unknown-type");
	r = run_backend("namespaces", spec);
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 1: unexpected line from the agent: type \"thinking\" "
	                 "(an agent sends \"resource\", \"tool\", \"output\" or \"error\")");
	result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_stderr_flood_drained)
{
	ck_assert_str_eq(probe("stderr"), "stderr: done");
}
END_TEST

/* A line the agent did not answer for the step being driven is refused,
 * never credited to another step, whatever the timing: with the step's
 * seq on its lines always; without seq, the lines are taken in order and
 * the one left over after the last step fails the run (the driver is
 * runner/agent.c, shared with gvisor). */
static struct result lines_run(const char *first, const char *second)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;

	spec_step(spec, "a", first);
	spec_step(spec, "b", second);
	r = run_backend("namespaces", spec);
	json_decref(spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert(sum_bool(&r, "destroyed"));
	return r;
}

START_TEST(test_agent_lines_for_other_steps)
{
	static const char after_last[] = "agent error after step 2: a line came from the agent "
	                                 "after the output of the last step";
	struct result r;

	/* two outputs for step 1, with seq: the second is refused in step 2 */
	r = lines_run("two-outputs-seq", "env");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 0, "output"), "first");
	ck_assert_str_eq(step_str(&r, 1, "error_kind"), "agent_error");
	ck_assert_str_eq(step_str(&r, 1, "output"),
	                 "[[agent-error:a line for step 1 during step 2]]");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 2: a line for step 1 during step 2");
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 1);
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	result_free(&r);

	/* two outputs for the last step, in one write or 100 ms apart: the
	 * run fails, and no line is added */
	r = lines_run("env", "two-outputs");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 1, "output"), "first");
	ck_assert_str_eq(sum_str(&r, "reason"), after_last);
	ck_assert_int_eq(sum_int(&r, "steps_total"), 2);
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 2);
	result_free(&r);
	r = lines_run("env", "two-outputs-late");
	ck_assert_str_eq(step_str(&r, 1, "output"), "first");
	ck_assert_str_eq(sum_str(&r, "reason"), after_last);
	result_free(&r);

	/* without seq, two outputs for step 1: taken in order (step 2 gets
	 * "second"), and step 2's own answer, left over, fails the run */
	r = lines_run("two-outputs", "env");
	ck_assert_int_eq(json_array_size(r.steps), 2);
	ck_assert_str_eq(step_str(&r, 1, "output"), "second");
	ck_assert_str_eq(sum_str(&r, "reason"), after_last);
	result_free(&r);

	/* an output that names another step's seq */
	r = lines_run("seq-other", "env");
	ck_assert_int_eq(json_array_size(r.steps), 1);
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 1: a line for step 2 during step 1");
	result_free(&r);
}
END_TEST

/* ---- an agent that outlives its exit grace ------------------------------- */

#define GRACE_NOTE "agent did not exit within its 1000 ms grace after the end of its input: killed"
#define DEADLINE_NOTE                                                                              \
	"agent did not exit before the wall-clock limit of 500 ms, which came within its 1000 ms " \
	"grace after the end of its input: killed"

/* Every step answered, then EOF ignored (stdout open, or closed): the run
 * stays completed, its outputs stand, and the summary's shutdown note says
 * the agent had to be killed; a well-behaved agent gets null. */
START_TEST(test_agent_outlives_its_grace)
{
	static const char *const lingers[] = {"linger", "linger-closed"};
	char want[64];
	struct result r;
	size_t i;

	for (i = 0; i < 2; i++) {
		r = probe_limits(lingers[i], 0, 0, 0, 0);
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		ck_assert(json_is_null(json_object_get(r.summary, "reason")));
		ck_assert_int_eq(sum_int(&r, "steps_ok"), 1);
		snprintf(want, sizeof(want), "%s: armed", lingers[i]);
		ck_assert_str_eq(step_str(&r, 0, "output"), want);
		ck_assert_msg(sum_str(&r, "shutdown") != NULL, "%s: no shutdown note", lingers[i]);
		ck_assert_str_eq(sum_str(&r, "shutdown"), GRACE_NOTE);
		/* the whole grace was given, not more */
		ck_assert_int_ge(r.ms, 1000);
		ck_assert_int_lt(r.ms, 5000);
		result_free(&r);
	}

	/* the wall-clock limit comes first: it is the one named */
	r = probe_limits("linger", 0, 0, 0, 500);
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(sum_str(&r, "shutdown") != NULL, "no shutdown note");
	ck_assert_str_eq(sum_str(&r, "shutdown"), DEADLINE_NOTE);
	result_free(&r);

	/* a well-behaved agent: the key is there, null */
	r = probe_limits("cwd", 0, 0, 0, 0);
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "shutdown not null");
	result_free(&r);

	/* a slow one that exits by itself within its grace: not said killed */
	r = probe_limits("linger 900", 0, 0, 0, 0);
	ck_assert_str_eq(step_str(&r, 0, "output"), "linger 900: armed");
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "shutdown %s",
	              sum_str(&r, "shutdown"));
	ck_assert_int_ge(r.ms, 900);
	result_free(&r);
}
END_TEST

/* A run that failed keeps its first reason and no shutdown note, though
 * its agent would have lingered too. */
START_TEST(test_failed_run_keeps_its_reason)
{
	struct result r = lines_run("linger", "seq-other");

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 2: a line for step 3 during step 2");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "shutdown not null");
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
}
END_TEST

/* A step's duration_us is the runner's measure of the agent's time: a step
 * whose agent waits 300 ms before answering takes at least that, and the
 * quick step after it less. */
START_TEST(test_step_duration_covers_the_agent)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;

	spec_slow_and_quick(spec);
	r = run_backend("namespaces", spec);
	assert_slow_and_quick(&r);
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* A real agent calls a tool mock, then a resource mock, each step: the
 * right answers (a sequence, an error mock), and each step line's trace
 * lists both requests in order, with a CRLF near miss. */
START_TEST(test_tool_mocks_traced)
{
	json_t *spec = tool_spec(env_path("OLIVARES_TOOL_BOT"));
	struct result r;

	r = run_backend("namespaces", spec);
	assert_tool_run(&r);
	ck_assert(sum_bool(&r, "isolated"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* A mock's delay_ms, waited by the runner before it answers the agent's
 * request: the step lasts at least the delay. */
START_TEST(test_mock_delay)
{
	json_t *spec = delay_spec(300);
	struct result r;

	r = run_backend("namespaces", spec);
	assert_delayed_run(&r, 300);
	ck_assert(sum_bool(&r, "isolated"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* ---- same results as inproc-mock ----------------------------------------- */

START_TEST(test_walkthrough_same_as_inproc)
{
	json_t *spec = walk_spec();
	struct result a = run_backend("inproc-mock", spec);
	struct result b = run_backend("namespaces", spec);

	assert_same_as_inproc(&a, &b);
	ck_assert(sum_bool(&b, "isolated"));
	ck_assert_str_eq(sum_str(&b, "status"), "completed");
	/* the mock agent exits at the end of its input; inproc-mock runs no
	 * agent process: neither has a shutdown note */
	ck_assert_msg(json_is_null(json_object_get(b.summary, "shutdown")), "shutdown not null");
	result_free(&a);
	result_free(&b);
	json_decref(spec);
}
END_TEST

START_TEST(test_profile_bot_variants)
{
	const char *bot = env_path("OLIVARES_PROFILE_BOT");
	const char *variants[] = {"baseline", "candidate"};
	const char *want[] = {"hello Alice (baseline)", "hello Alice (candidate)"};
	json_t *spec;
	struct result r;
	int i;

	for (i = 0; i < 2; i++) {
		spec = spec_new(variants[i], bot);
		spec_step(spec, "s1", "alice");
		spec_step(spec, "s2", "bob");
		spec_mock(spec, "profile:alice", "Alice (baseline)", "baseline");
		spec_mock(spec, "profile:alice", "Alice (candidate)", "candidate");
		r = run_backend("namespaces", spec);
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		ck_assert_str_eq(step_str(&r, 0, "output"), want[i]);
		ck_assert_str_eq(step_str(&r, 1, "output"), "hello [[mock-miss:profile:bob]]");
		ck_assert_str_eq(step_str(&r, 1, "error_kind"), "mock_miss");
		ck_assert_int_eq(sum_int(&r, "steps_ok"), 1);
		ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
		result_free(&r);
		json_decref(spec);
	}
}
END_TEST

/* ---- fail closed ----------------------------------------------------------- */

static void assert_refused(json_t *spec, const char *backend, const char *reason)
{
	struct result r = run_backend(backend, spec);

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert(!sum_bool(&r, "isolated"));
	ck_assert_int_eq(json_array_size(r.steps), 0);
	ck_assert_int_eq(sum_int(&r, "steps_total"), 0);
	ck_assert_str_eq(sum_str(&r, "reason"), reason);
	result_free(&r);
	json_decref(spec);
}

/* An interpreter outside the jail: the reason says so, before any jail. */
START_TEST(test_interpreter_not_in_jail)
{
	assert_interp_cases(run_backend, "namespaces", hostile());
}
END_TEST

START_TEST(test_fail_closed)
{
	char dir[64], file[128];
	json_t *spec;

	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string("/nonexistent/agent"));
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: cannot open the agent program: ENOENT");

	secret_file(dir, sizeof(dir), file, sizeof(file));
	ck_assert_int_eq(chmod(file, 0644), 0);
	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string(file));
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: the agent program is not a file every user "
	               "may execute");
	/* executable but not a program: exec fails inside, reported as such */
	ck_assert_int_eq(chmod(file, 0755), 0);
	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string(file));
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: execve /agent failed: ENOEXEC");
	unlink(file);
	rmdir(dir);

	spec = walk_spec();
	json_object_set_new(spec, "binds", json_pack("[s]", "/nonexistent-bind"));
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: cannot open bind /nonexistent-bind: ENOENT");

	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string(hostile()));
	assert_refused(spec, "inproc-mock",
	               "inproc-mock cannot run agent programs; choose an OS-level backend");
}
END_TEST

START_TEST(test_spec_fields_strict)
{
	json_t *spec;

	spec = walk_spec();
	spec_limit(spec, "wall_ms", 5);
	assert_refused(spec, "namespaces",
	               "invalid run spec: limits.wall_ms must be an integer from 100 to 600000");

	spec = walk_spec();
	spec_limit(spec, "swap_mb", 5);
	assert_refused(spec, "namespaces", "invalid run spec: unknown limit \"swap_mb\"");

	spec = walk_spec();
	json_object_set_new(spec, "limits", json_pack("{s:s}", "memory_mb", "64"));
	assert_refused(spec, "namespaces",
	               "invalid run spec: limits.memory_mb must be an integer from 16 to 16384");

	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string("relative/agent"));
	assert_refused(spec, "namespaces",
	               "invalid run spec: agent must be an absolute path or null");

	spec = walk_spec();
	json_object_set_new(spec, "agent", json_string("/usr/../etc/agent"));
	assert_refused(spec, "namespaces",
	               "invalid run spec: agent must be an absolute path or null");

	spec = walk_spec();
	json_object_set_new(spec, "binds", json_pack("[s]", "/"));
	assert_refused(
	    spec, "namespaces",
	    "invalid run spec: binds[0] must be an absolute normalised path other than /, "
	    "/proc, /tmp, /agent, /agent-exec and /olivares");

	spec = walk_spec();
	json_object_set_new(spec, "binds", json_pack("[s, s]", "/usr", "/tmp/x"));
	assert_refused(
	    spec, "namespaces",
	    "invalid run spec: binds[1] must be an absolute normalised path other than /, "
	    "/proc, /tmp, /agent, /agent-exec and /olivares");
}
END_TEST

START_TEST(test_preflight_lines)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--preflight", "namespaces", NULL};
	const char *args2[] = {env_path("OLIVARES_RUNNER"), "--preflight", "warp-drive", NULL};
	char *const env[] = {NULL};
	struct result r = run_argv(args, NULL, env);

	ck_assert_ptr_nonnull(r.summary);
	ck_assert_str_eq(sum_str(&r, "type"), "preflight");
	ck_assert_str_eq(sum_str(&r, "backend"), "namespaces");
	ck_assert(sum_bool(&r, "ok"));
	ck_assert(json_is_null(json_object_get(r.summary, "reason")));
	result_free(&r);
	r = run_argv(args2, NULL, env);
	ck_assert(!sum_bool(&r, "ok"));
	ck_assert_str_eq(sum_str(&r, "reason"), "unknown backend: warp-drive");
	result_free(&r);
}
END_TEST

/* ---- nothing left behind ------------------------------------------------- */

/* The text of a file, or NULL when it cannot be opened (a process that
 * ended between readdir() and here). */
static char *slurp_or_null(const char *path)
{
	char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return strdup(buf);
}

/* Call fn(pid, status text, ctx) for each process of /proc whose status
 * this process may read, until fn returns nonzero. Returns that value, or
 * 0 when every process was seen. */
static int each_proc_status(int (*fn)(const char *pid, const char *status, void *ctx), void *ctx)
{
	char path[300], *st;
	struct dirent *e;
	DIR *d = opendir("/proc");
	int r = 0;

	ck_assert_ptr_nonnull(d);
	while (!r && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		st = slurp_or_null(path);
		if (!st)
			continue;
		r = fn(e->d_name, st, ctx);
		free(st);
	}
	closedir(d);
	return r;
}

/* each_proc_status() callback: counts in *(int *)ctx the processes of the
 * jail's host uid whose parent is this process. */
static int count_jail_child(const char *pid, const char *st, void *ctx)
{
	char want[64];
	const char *u = strstr(st, "\nUid:\t");

	(void)pid;
	snprintf(want, sizeof(want), "\nPPid:\t%d\n", (int)getpid());
	/* our descendant, or a jail process at all */
	if (strstr(st, want) && u && atoi(u + 6) == JAIL_HOST_UID)
		(*(int *)ctx)++;
	return 0;
}

/*
 * Processes left of a jail. This test process is a child subreaper, so a
 * jail's pid 1 that outlived the runner would be re-parented here (and the
 * agent and its children cannot outlive their pid 1: the kernel kills the
 * pid namespace with it). Counts processes of the jail's host uid whose
 * parent is this process, plus one if any child at all (live or zombie)
 * is left. A global count of the jail's uid would race with other jails
 * running at the same time (make -j check, the gvisor suite).
 */
static int jail_leftovers(void)
{
	int n = 0;

	each_proc_status(count_jail_child, &n);
	/* no child of ours at all, not even a zombie */
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
		n++;
	return n;
}

/* Entries of the host's /tmp a jail could have made: owned by the jail's
 * host uid, or named like the file the test's agent writes in its /tmp.
 * (Counting all of /tmp would race with other processes of the host.) */
static int tmp_jail_entries(void)
{
	char path[600];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir("/tmp");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		if (lstat(path, &st) == 0 &&
		    (st.st_uid == JAIL_HOST_UID || strcmp(e->d_name, "olv-ns-inside") == 0))
			n++;
	}
	closedir(d);
	return n;
}

/* The jail's mounts (its tmpfs root and /tmp among them) live only in
 * its own mount namespace, which ends with its last process: no process
 * left is what shows them gone. (Comparing the host's mount table before
 * and after showed nothing of the jail, and raced with whatever else
 * mounted on the host meanwhile.) */
START_TEST(test_nothing_left_behind)
{
	struct result r;
	json_t *spec = spec_new(NULL, hostile());

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ck_assert_int_eq(jail_leftovers(), 0);
	ck_assert_int_eq(tmp_jail_entries(), 0);
	spec_step(spec, "a", "write /tmp/olv-ns-inside");
	spec_step(spec, "b", "forkbomb");
	spec_step(spec, "c", "spin");
	spec_limit(spec, "cpu_seconds", 1);
	r = run_backend("namespaces", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert(sum_bool(&r, "destroyed"));
	ck_assert_int_eq(json_array_size(r.steps), 3);
	result_free(&r);
	/* the runner has exited and reaped its jail: nothing of it is left */
	ck_assert_int_eq(jail_leftovers(), 0);
	ck_assert_int_eq(tmp_jail_entries(), 0);
	json_decref(spec);
}
END_TEST

/* destroyed: true means the jail is gone by the time the runner says so:
 * an agent that outlives its wall-clock limit (and has shed pid 1's
 * parent-death signal, so only the runner's teardown ends it) is killed
 * and reaped before the summary, not left to the guard or to whoever
 * inherits it. Checked at once, with no grace. */
START_TEST(test_destroyed_once_the_jail_is_reaped)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ck_assert_int_eq(jail_leftovers(), 0);
	spec_step(spec, "probe", "pdeathsig");
	spec_limit(spec, "cpu_seconds", 30);
	spec_limit(spec, "wall_ms", 800);
	r = run_backend("namespaces", spec);
	ck_assert_int_eq(jail_leftovers(), 0);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), "wall-clock limit of 800 ms exceeded");
	ck_assert(sum_bool(&r, "isolated"));
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* The open-files limit is the one asked for: the highest descriptor the
 * agent gets is one below it. */
START_TEST(test_open_files_limit)
{
	struct result r;
	json_t *spec = spec_new(NULL, hostile());

	spec_step(spec, "probe", "nofile");
	spec_limit(spec, "open_files", 16);
	r = run_backend("namespaces", spec);
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "nofile: 16 open (EMFILE)");
	result_free(&r);
	json_decref(spec);
	/* and the mounts as the agent sees them: / read-only, /tmp its own */
	ck_assert_str_eq(probe("mount-opts /"), "mount-opts /: ro,nosuid,nodev,relatime");
	ck_assert_str_eq(probe("mount-opts /tmp"), "mount-opts /tmp: rw,nosuid,nodev,relatime");
}
END_TEST

/* What find_agent() looks for: a process named "agent" whose parent is
 * runner and whose command line (NULs as spaces) is cmdline. */
struct agent_wanted {
	pid_t runner;
	const char *cmdline;
};

/* each_proc_status() callback: the pid of the agent wanted, or 0. */
static int find_agent(const char *pid, const char *st, void *ctx)
{
	const struct agent_wanted *w = ctx;
	char path[300], want[64], cmd[256];
	ssize_t len, i;
	int fd;

	snprintf(want, sizeof(want), "\nPPid:\t%d\n", (int)w->runner);
	if (!strstr(st, want) || strncmp(st, "Name:\tagent\n", 12) != 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY);
	len = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : -1;
	if (fd >= 0)
		close(fd);
	for (i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[len > 0 ? len : 0] = '\0';
	return strcmp(cmd, w->cmdline) == 0 ? atoi(pid) : 0;
}

/* Start the runner on one probe of the hostile agent (stdout to
 * /dev/null), wait until the agent runs with want_cmdline (its
 * /proc/PID/cmdline, NULs as spaces), SIGKILL the runner, and return
 * whether the agent was gone within 3 s (reaping what is re-parented to
 * this process, a child subreaper). */
static int agent_dies_with_runner(const char *input, const char *want_cmdline)
{
	static char *const env[] = {"HOME=/root", NULL};
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", "namespaces", NULL};
	json_t *spec = spec_new(NULL, hostile());
	struct agent_wanted w;
	char *text;
	int in[2], gone;
	pid_t runner, agent = 0;
	long long until;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	spec_step(spec, "probe", input);
	spec_limit(spec, "cpu_seconds", 30);
	spec_limit(spec, "wall_ms", 30000);
	text = json_dumps(spec, JSON_COMPACT);
	ck_assert_int_eq(pipe(in), 0);
	runner = fork();
	ck_assert_int_ge(runner, 0);
	if (runner == 0) {
		dup2(in[0], 0);
		close(in[0]);
		close(in[1]);
		close(1);
		if (open("/dev/null", O_WRONLY) != 1)
			_exit(126);
		execve(args[0], (char *const *)args, env);
		_exit(127);
	}
	close(in[0]);
	ck_assert_int_eq(write(in[1], text, strlen(text)), (ssize_t)strlen(text));
	close(in[1]);
	free(text);
	/* the agent: the runner's child with the jail's uid, running the
	 * image asked for */
	w.runner = runner;
	w.cmdline = want_cmdline;
	for (until = now_ms() + 5000; !agent && now_ms() < until; usleep(10000))
		agent = (pid_t)each_proc_status(find_agent, &w);
	ck_assert_msg(agent > 0, "the agent never ran as \"%s\"", want_cmdline);
	ck_assert_int_eq(kill(runner, SIGKILL), 0);
	ck_assert_int_eq(waitpid(runner, NULL, 0), runner);
	for (until = now_ms() + 3000; now_ms() < until; usleep(10000)) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (kill(agent, 0) != 0 && errno == ESRCH)
			break;
	}
	gone = kill(agent, 0) != 0 && errno == ESRCH;
	if (!gone)
		kill(agent, SIGKILL);
	/* The runner's guard, re-parented here with the jail's pid 1, exits
	 * once it has killed it: reap it and whatever else comes, until this
	 * process has no child left. */
	for (until = now_ms() + 3000; now_ms() < until; usleep(10000))
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			break;
	json_decref(spec);
	return gone;
}

/* A runner killed mid-run takes its jail with it: the agent (spinning,
 * far from its limits) is gone soon after, not re-parented and left. */
START_TEST(test_jail_dies_with_runner)
{
	ck_assert_msg(agent_dies_with_runner("spin", "agent "), "the agent outlived its runner");
	ck_assert_int_eq(jail_leftovers(), 0);
}
END_TEST

/* Also when the agent has shed pid 1's parent-death signal (a thread of
 * it exec'd): the runner's guard ends the jail. */
START_TEST(test_jail_dies_with_runner_after_thread_exec)
{
	ck_assert_msg(agent_dies_with_runner("pdeathsig", "agent --sleep "),
	              "the agent outlived its runner");
	ck_assert_int_eq(jail_leftovers(), 0);
}
END_TEST

/* An agent that exits at once fails the run with a reason that says so:
 * either before it could be verified (no step ran) or in its first step. */
/* A step of pid 1's confinement that fails is the run's reason, however
 * it falls in with the runner's last go-ahead (once, a pid 1 that had
 * failed and exited before it was sent made the run fail with "cannot
 * start the agent: EPIPE"): pid 1 cannot raise its open-file limit above
 * the runner's own hard limit. 100 runs, the race having shown in about
 * one of 130. */
START_TEST(test_confinement_failure_named)
{
	json_t *spec = walk_spec();
	struct result r;
	int i;

	spec_limit(spec, "open_files", 65536);
	run_nofile = 1024;
	for (i = 0; i < 100; i++) {
		r = run_backend("namespaces", spec);
		ck_assert_str_eq(sum_str(&r, "status"), "failed");
		ck_assert_str_eq(sum_str(&r, "reason"),
		                 "namespace jail not in place: RLIMIT_NOFILE failed: EPERM");
		ck_assert(!sum_bool(&r, "isolated"));
		ck_assert(sum_bool(&r, "destroyed"));
		ck_assert_int_eq(json_array_size(r.steps), 0);
		result_free(&r);
	}
	run_nofile = 0;
	json_decref(spec);
}
END_TEST

START_TEST(test_agent_exits_at_once)
{
	json_t *spec = spec_new(NULL, "/bin/true");
	struct result r;
	const char *reason;

	spec_step(spec, "s", "anything");
	r = run_backend("namespaces", spec);
	reason = sum_str(&r, "reason");
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_msg(
	    (strcmp(reason, "namespace jail not in place: the agent ended before its confinement "
	                    "could be verified (exit status 0)") == 0 &&
	     !sum_bool(&r, "isolated") && json_array_size(r.steps) == 0) ||
	        (strcmp(reason, "agent error in step 1: agent exited with status 0") == 0 &&
	         sum_bool(&r, "isolated") && json_array_size(r.steps) == 1),
	    "%s", reason);
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* ---- memory and sockets out of the rlimits' and the netns' reach --------- */

START_TEST(test_memory_outside_address_space_refused)
{
	/* a memfd, a System V segment or queue holds pages in no address
	 * space: RLIMIT_AS would not see them */
	ck_assert_str_eq(probe("memfd"), "memfd: denied (ENOSYS)");
	ck_assert_str_eq(probe("memfd-balloon 64"), "memfd-balloon: stopped at 0 MiB (ENOSYS)");
	ck_assert_str_eq(probe("sysv"), "sysv: shmget denied (ENOSYS), msgget denied (ENOSYS), "
	                                "semget denied (ENOSYS)");
	ck_assert_str_eq(probe("memfd_secret"), "memfd_secret: denied (ENOSYS)");
	/* a byte vmspliced into a pipe pins its whole (huge) page */
	ck_assert_str_eq(probe("vmsplice"), "vmsplice: denied (ENOSYS)");
	/* socket buffers stay at the kernel's default size, however the
	 * level's register is dressed up */
	ck_assert_str_eq(probe("pipesz"),
	                 "pipesz: F_SETPIPE_SZ denied (EPERM), high cmd denied (EPERM)");
	ck_assert_str_eq(probe("sockbuf"), "sockbuf: SO_SNDBUF denied (EPERM), SO_RCVBUF denied "
	                                   "(EPERM), high level denied (EPERM)");
	/* io_uring's operations are calls the filter never sees */
	ck_assert_str_eq(probe("io_uring"), "io_uring: denied (ENOSYS)");
}
END_TEST

START_TEST(test_socket_families)
{
	static const char *const refused[] = {"unix", "vsock", "packet", "alg"};
	static const char *const allowed[] = {"inet", "inet6", "netlink"};
	char input[64], want[128];
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(input, sizeof(input), "socket %s", refused[i]);
		snprintf(want, sizeof(want), "%s: denied (EAFNOSUPPORT)", input);
		ck_assert_str_eq(probe(input), want);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		snprintf(input, sizeof(input), "socket %s", allowed[i]);
		snprintf(want, sizeof(want), "%s: allowed", input);
		ck_assert_str_eq(probe(input), want);
	}
	/* a connected pair cannot be pointed at a path; a datagram one can */
	ck_assert_str_eq(probe("socketpair stream"), "socketpair stream: allowed");
	ck_assert_str_eq(probe("socketpair seqpacket"), "socketpair seqpacket: allowed");
	ck_assert_str_eq(probe("socketpair dgram"), "socketpair dgram: denied (EAFNOSUPPORT)");
	ck_assert_str_eq(probe("socketpair raw"), "socketpair raw: denied (EAFNOSUPPORT)");
}
END_TEST

/* A directory to bind (binds may not be under /tmp, the jail's own),
 * named for this process (tests/unit/sweep.h). */
static void bind_dir(char *dir, size_t n)
{
	ck_assert_int_eq(sweep_mkdtemp(dir, n, "/var/tmp", "olv-ns-bind-"), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
}

/* A run of the hostile agent with /usr and dir bound, one step per probe. */
static struct result probe_with_bind(const char *dir, const char *const *inputs, size_t n)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;
	size_t i;

	for (i = 0; i < n; i++)
		spec_step(spec, "probe", inputs[i]);
	json_object_set_new(spec, "binds", json_pack("[s, s]", "/usr", dir));
	r = run_backend("namespaces", spec);
	json_decref(spec);
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert(sum_bool(&r, "destroyed"));
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_int_eq(sum_int(&r, "steps_ok"), (long long)n);
	return r;
}

START_TEST(test_host_unix_socket_in_bind_unreachable)
{
	struct sockaddr_un sa;
	struct pollfd p;
	char dir[64], input[160], want[200];
	const char *inputs[1];
	struct result r;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* a host process listening on a path inside a bound directory: a
	 * read-only bind does not stop a connect() */
	bind_dir(dir, sizeof(dir));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/host.sock", dir);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(chmod(sa.sun_path, 0777), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	snprintf(input, sizeof(input), "connect-unix %s", sa.sun_path);
	inputs[0] = input;
	r = probe_with_bind(dir, inputs, 1);
	snprintf(want, sizeof(want), "%s: denied (socket: EAFNOSUPPORT)", input);
	ck_assert_str_eq(step_str(&r, 0, "output"), want);
	result_free(&r);
	p.fd = s;
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	close(s);
	unlink(sa.sun_path);
	rmdir(dir);
}
END_TEST

START_TEST(test_bind_read_only_all_the_way_down)
{
	char dir[64], sub[96], in_sub[128], top[128], host_file[192];
	const char *inputs[2];
	struct result r;

	/* a host mount below a bound directory (a tmpfs under a bound /dev
	 * or /run) is read-only in the jail too */
	if (geteuid() != 0) {
		fprintf(stderr,
		        "test_bind_read_only_all_the_way_down: needs root to mount, skipped\n");
		return;
	}
	bind_dir(dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0777), 0);
	ck_assert_int_eq(mount("tmpfs", sub, "tmpfs", 0, "size=1m,mode=1777"), 0);
	snprintf(in_sub, sizeof(in_sub), "write %s/x", sub);
	snprintf(top, sizeof(top), "write %s/y", dir);
	inputs[0] = in_sub;
	inputs[1] = top;
	r = probe_with_bind(dir, inputs, 2);
	snprintf(host_file, sizeof(host_file), "%s: denied (EROFS)", in_sub);
	ck_assert_str_eq(step_str(&r, 0, "output"), host_file);
	snprintf(host_file, sizeof(host_file), "%s: denied (EROFS)", top);
	ck_assert_str_eq(step_str(&r, 1, "output"), host_file);
	result_free(&r);
	snprintf(host_file, sizeof(host_file), "%s/x", sub);
	ck_assert_int_ne(access(host_file, F_OK), 0);
	ck_assert_int_eq(umount(sub), 0);
	rmdir(sub);
	rmdir(dir);
}
END_TEST

START_TEST(test_bind_of_host_kernel_state_refused)
{
	char dir[64], link[96], want[256];
	json_t *spec;

	/* a bind whose path leads to the host's procfs (a symlink) or one of
	 * sysfs: seen in the agent's mounts, the run fails closed */
	bind_dir(dir, sizeof(dir));
	snprintf(link, sizeof(link), "%s/proc-link", dir);
	ck_assert_int_eq(symlink("/proc", link), 0);
	spec = walk_spec();
	json_object_set_new(spec, "binds", json_pack("[s, s]", "/usr", link));
	snprintf(want, sizeof(want),
	         "namespace jail not in place: a mount of the jail shows the host's kernel "
	         "state: %s (proc)",
	         link);
	assert_refused(spec, "namespaces", want);
	spec = walk_spec();
	json_object_set_new(spec, "binds", json_pack("[s, s]", "/usr", "/sys"));
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: a mount of the jail shows the host's kernel "
	               "state: /sys (sysfs)");
	unlink(link);
	rmdir(dir);
}
END_TEST

/* The jail's /dev: the five usual character devices of the host, each
 * usable (/dev/null writable on its read-only mount, /dev/full full),
 * read-only, nosuid and noexec, and nothing else; no device node can be
 * made. */
START_TEST(test_dev_nodes)
{
	ck_assert_str_eq(probe("dev"), "dev: null wrote 6, zero read 16 zeros, urandom read 16, "
	                               "random read 16, full denied (ENOSPC)");
	ck_assert_str_eq(probe("ls /dev"), "ls /dev: full null random urandom zero");
	ck_assert_str_eq(probe("mount-opts /dev/null"),
	                 "mount-opts /dev/null: ro,nosuid,noexec,relatime");
	ck_assert_str_eq(probe("mount-opts /dev/urandom"),
	                 "mount-opts /dev/urandom: ro,nosuid,noexec,relatime");
	ck_assert_str_eq(probe("write /dev/tty"), "write /dev/tty: denied (EROFS)");
	ck_assert_str_eq(probe("mknod"),
	                 "mknod: char denied (EPERM), block denied (EPERM), fifo allowed");
}
END_TEST

/* Any other device stays out of reach: a device node under a bound
 * directory (the bind is nodev: it does not open), and a host whose
 * /dev/null is another device fails the run closed (and its preflight). */
START_TEST(test_other_device_unreachable)
{
	char dir[64], node[96], input[128], want[192];
	const char *inputs[1];
	struct result r;
	json_t *spec;
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "test_other_device_unreachable: needs root to mknod, skipped\n");
		return;
	}
	bind_dir(dir, sizeof(dir));
	snprintf(node, sizeof(node), "%s/zero", dir);
	ck_assert_int_eq(mknod(node, S_IFCHR | 0666, makedev(1, 5)), 0);
	/* it is a device the host opens */
	fd = open(node, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(input, sizeof(input), "read %s", node);
	inputs[0] = input;
	r = probe_with_bind(dir, inputs, 1);
	snprintf(want, sizeof(want), "%s: denied (EACCES)", input);
	ck_assert_str_eq(step_str(&r, 0, "output"), want);
	result_free(&r);
	unlink(node);
	rmdir(dir);

	spec = walk_spec();
	run_swap_dev_null = 1;
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: the host's /dev/null is not the character "
	               "device 1:3");
	/* and the listing's preflight says so, rather than ok on a host
	 * where every run fails closed */
	assert_preflight_refused("the host's /dev/null is not the character device 1:3");
	run_swap_dev_null = 0;

	/* the right device on a nodev mount: it would not open in the jail */
	spec = walk_spec();
	run_swap_dev_null = 2;
	assert_refused(spec, "namespaces",
	               "namespace jail not in place: the host's /dev/null is on a nodev mount (a "
	               "device does not open through it)");
	assert_preflight_refused(
	    "the host's /dev/null is on a nodev mount (a device does not open through it)");
	run_swap_dev_null = 0;
}
END_TEST

START_TEST(test_tmpfs_inodes_bounded)
{
	json_t *spec = spec_new(NULL, hostile());
	struct result r;
	const char *out;
	long files = -1;

	/* one inode per KiB of the tmpfs: 1024 with tmpfs_mb 1, its root
	 * directory included */
	spec_step(spec, "probe", "inodes");
	spec_limit(spec, "tmpfs_mb", 1);
	r = run_backend("namespaces", spec);
	json_decref(spec);
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	out = step_str(&r, 0, "output");
	ck_assert_msg(sscanf(out, "inodes: %ld files, then ENOSPC", &files) == 1, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "then ENOSPC"));
	ck_assert_int_ge(files, 1000);
	ck_assert_int_lt(files, 1024);
	result_free(&r);
}
END_TEST

/* The leftovers of a failed test are swept at the next run's start: a
 * stale bind directory (its maker gone) with a tmpfs still mounted in
 * sub/ goes, mount and all; one whose maker lives (a run beside this
 * one), a name of another shape, and a stale name on another user's or a
 * world-writable entry stay. */
START_TEST(test_stale_leftovers_swept)
{
	char stale[64], sub[96], file[128], live[64], other[64], line[4096];
	char foreign[64], open_dir[64];
	FILE *f;
	pid_t dead;
	int found = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "test_stale_leftovers_swept: needs root to mount, skipped\n");
		return;
	}
	/* a pid that was a process and is none any more */
	dead = fork();
	ck_assert_int_ge(dead, 0);
	if (dead == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
	snprintf(stale, sizeof(stale), "/var/tmp/olv-ns-bind-%d-XXXXXX", (int)dead);
	ck_assert_ptr_nonnull(mkdtemp(stale));
	snprintf(sub, sizeof(sub), "%s/sub", stale);
	ck_assert_int_eq(mkdir(sub, 0777), 0);
	ck_assert_int_eq(mount("tmpfs", sub, "tmpfs", 0, "size=1m,mode=1777"), 0);
	snprintf(file, sizeof(file), "%s/x", sub);
	ck_assert_int_eq(mknod(file, S_IFREG | 0644, 0), 0);
	snprintf(file, sizeof(file), "%s/host.sock", stale);
	ck_assert_int_eq(mknod(file, S_IFREG | 0644, 0), 0);
	bind_dir(live, sizeof(live));
	snprintf(other, sizeof(other), "/var/tmp/olv-ns-bind-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(other));
	/* stale names of entries this suite did not make: another user's (in
	 * a world-writable /var/tmp anyone can name one so, and swap a
	 * directory inside it for a link while the sweep walks it) and a
	 * world-writable one: both stay */
	snprintf(foreign, sizeof(foreign), "/var/tmp/olv-ns-bind-%d-XXXXXX", (int)dead);
	ck_assert_ptr_nonnull(mkdtemp(foreign));
	snprintf(file, sizeof(file), "%s/theirs", foreign);
	ck_assert_int_eq(mknod(file, S_IFREG | 0644, 0), 0);
	ck_assert_int_eq(chown(foreign, 65534, 65534), 0);
	snprintf(open_dir, sizeof(open_dir), "/var/tmp/olv-ns-bind-%d-XXXXXX", (int)dead);
	ck_assert_ptr_nonnull(mkdtemp(open_dir));
	ck_assert_int_eq(chmod(open_dir, 01777), 0);

	ck_assert_int_ge(sweep_stale("/var/tmp", "olv-ns-bind-"), 1);
	ck_assert_int_eq(access(file, F_OK), 0);
	ck_assert_int_eq(access(open_dir, F_OK), 0);
	unlink(file);
	rmdir(foreign);
	rmdir(open_dir);
	ck_assert_int_ne(access(stale, F_OK), 0);
	ck_assert_int_eq(errno, ENOENT);
	f = fopen("/proc/self/mountinfo", "re");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		found += strstr(line, stale) != NULL;
	fclose(f);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(access(live, F_OK), 0);
	ck_assert_int_eq(access(other, F_OK), 0);
	rmdir(live);
	rmdir(other);
}
END_TEST

/* A host where the jail's primitive is missing (here, a filter this
 * process inherits refuses user namespaces): the preflight says so, and
 * a run fails closed (no step, isolated false, the reason names it), with
 * nothing run elsewhere. */
START_TEST(test_fail_closed_without_user_namespaces)
{
	struct result r;
	json_t *spec;

	run_deny_userns = 1;
	assert_preflight_refused("cannot create a user namespace (unshare CLONE_NEWUSER)");
	run_deny_userns = 0;

	spec = walk_spec();
	run_deny_userns = 1;
	r = run_backend("namespaces", spec);
	run_deny_userns = 0;
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "backend"), "namespaces");
	ck_assert(!sum_bool(&r, "isolated"));
	ck_assert_int_eq(json_array_size(r.steps), 0);
	ck_assert_int_eq(sum_int(&r, "steps_total"), 0);
	ck_assert_str_eq(sum_str(&r, "reason"), "namespace jail not in place: cannot create a user "
	                                        "namespace (unshare CLONE_NEWUSER) (clone: EPERM)");
	result_free(&r);
	json_decref(spec);
	ck_assert_int_eq(jail_leftovers(), 0);
}
END_TEST

/* ---- threads and a bounded /tmp ------------------------------------------- */

/* An agent that starts 4 pthreads gets each one's result: glibc's clone3
 * gets ENOSYS from the jail's filter (its flags are out of a filter's
 * reach) and glibc falls back to clone(), whose flags the filter sees. */
START_TEST(test_pthreads)
{
	ck_assert_str_eq(agent_step(env_path("OLIVARES_THREADS_AGENT"), "threads 4", 0),
	                 "threads 4: t1=500500 t2=2001000 t3=4501500 t4=8002000");
	ck_assert_str_eq(agent_step(env_path("OLIVARES_THREADS_AGENT"), "clone3", 0),
	                 "clone3: denied (ENOSYS)");
}
END_TEST

/* The agent's log: stdout and stderr merged in order, capped, cleaned, a
 * traceback kept whole (runner_harness.h assert_agent_log). */
START_TEST(test_agent_log)
{
	assert_agent_log(run_backend, "namespaces");
}
END_TEST

/* A Python agent on olivares_agent (runner_harness.h assert_sdk_agent_run). */
START_TEST(test_sdk_agent)
{
	assert_sdk_agent_run(run_backend, "namespaces");
}
END_TEST

/* The gateway (runner_harness.h says what each shows): an agent that
 * reaches its tools and model over HTTP(S), contained, its own run's only,
 * controlled egress, upstream secrets injected, a recorded run replayed. */
HARNESS_CASE(test_gateway, assert_gateway_run, "namespaces")
HARNESS_CASE(test_gateway_contained, assert_gateway_contained, "namespaces")
HARNESS_CASE(test_gateway_own_run, assert_gateway_own_run, "namespaces")
HARNESS_CASE(test_gateway_egress, assert_gateway_egress, "namespaces")
HARNESS_CASE(test_gateway_egress_secrets, assert_gateway_egress_secrets, "namespaces")
HARNESS_CASE(test_gateway_record, assert_gateway_record, "namespaces")
HARNESS_CASE(test_gateway_lost, assert_gateway_lost, "namespaces")

/* The same with Python's threading, the host's python3 run from the
 * default bind of /usr (the agent is a script whose #! names it). */
START_TEST(test_python_threading)
{
	ck_assert_msg(access("/usr/bin/python3", X_OK) == 0,
	              "/usr/bin/python3 is not installed (Debian: python3): the Python agent "
	              "cannot run");
	ck_assert_str_eq(agent_step(env_path("OLIVARES_PY_THREADS_AGENT"), "threads 4", 0),
	                 "py-threads 4: t1=500500 t2=2001000 t3=4501500 t4=8002000");
}
END_TEST

/* Writing past /tmp's size stops at the size (tmpfs_mb 2: 2 MiB), with
 * ENOSPC; its inodes are test_tmpfs_inodes_bounded. */
START_TEST(test_tmpfs_size_bounded)
{
	ck_assert_str_eq(agent_step(hostile(), "fill", 2), "fill: 2097152 bytes, then ENOSPC");
}
END_TEST

static Suite *namespaces_suite(void)
{
	const TTest *const containment[] = {
	    test_connect_host_loopback,
	    test_read_host_file,
	    test_read_host_file_through_symlink,
	    test_write_outside_tmpfs,
	    test_proc_shows_only_the_jail,
	    test_session_with_tty,
	    test_cwd_is_the_jail_root,
	    test_process_group_own,
	    test_proc_read_only,
	    test_runner_not_root,
	    test_fork_bomb_stopped,
	    test_cpu_spin_killed_by_rlimit,
	    test_cpu_spin_killed_by_wall_clock,
	    test_memory_balloon_stopped,
	    test_mount_refused,
	    test_memory_outside_address_space_refused,
	    test_socket_families,
	    test_host_unix_socket_in_bind_unreachable,
	    test_bind_read_only_all_the_way_down,
	    test_bind_of_host_kernel_state_refused,
	    test_dev_nodes,
	    test_other_device_unreachable,
	    test_tmpfs_inodes_bounded,
	    test_open_files_limit,
	    test_ptrace_refused,
	    test_no_descriptor_inherited,
	    test_environment_clean,
	    test_identity_and_host_view,
	    test_agent_exit_mid_step,
	    test_agent_lines_for_other_steps,
	    test_agent_outlives_its_grace,
	    test_failed_run_keeps_its_reason,
	    test_stderr_flood_drained,
	    test_agent_malformed_line_quoted,
	    test_agent_fails_its_step,
	    NULL,
	};
	const TTest *const behaviour[] = {
	    test_walkthrough_same_as_inproc,
	    test_step_duration_covers_the_agent,
	    test_mock_delay,
	    test_profile_bot_variants,
	    test_tool_mocks_traced,
	    test_fail_closed,
	    test_interpreter_not_in_jail,
	    test_fail_closed_without_user_namespaces,
	    test_spec_fields_strict,
	    test_preflight_lines,
	    test_nothing_left_behind,
	    test_destroyed_once_the_jail_is_reaped,
	    test_jail_dies_with_runner,
	    test_jail_dies_with_runner_after_thread_exec,
	    test_agent_exits_at_once,
	    test_confinement_failure_named,
	    test_stale_leftovers_swept,
	    NULL,
	};
	const TTest *const threads_tmp[] = {
	    test_pthreads,
	    test_python_threading,
	    test_agent_log,
	    test_sdk_agent,
	    test_tmpfs_size_bounded,
	    test_gateway,
	    test_gateway_contained,
	    test_gateway_own_run,
	    test_gateway_egress,
	    test_gateway_egress_secrets,
	    test_gateway_record,
	    test_gateway_lost,
	    NULL,
	};
	Suite *s = suite_create("namespaces");

	suite_add_tests(s, "containment", 60, containment);
	suite_add_tests(s, "behaviour", 60, behaviour);
	namespaces_add_bounds(s);
	suite_add_tests(s, "threads-tmp", 60, threads_tmp);
	return s;
}

/* What failed runs of this suite left (their tests ended at a failed
 * assertion, before their clean-up): swept before this run's tests, and
 * never what a run going on beside this one uses (tests/unit/sweep.h). */
static void sweep_leftovers(void)
{
	static const char *const where[][2] = {{"/var/tmp", "olv-ns-bind-"},
	                                       {"/tmp", "olv-ns-test-"},
	                                       {"/var/tmp", "olv-egress-secrets-"}};
	size_t i;
	int n;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		n = sweep_stale(where[i][0], where[i][1]);
		if (n < 0)
			fprintf(stderr, "test_namespaces: %s/%s*: a stale one stays\n", where[i][0],
			        where[i][1]);
		else if (n > 0)
			fprintf(stderr, "test_namespaces: %s/%s*: %d stale removed\n", where[i][0],
			        where[i][1], n);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	sweep_leftovers();
	return suite_main(namespaces_suite(), CK_NORMAL);
}
