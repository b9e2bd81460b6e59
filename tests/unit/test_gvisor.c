/*
 * The containment suite of the gvisor backend, what the sandbox must
 * show, and the firecracker gate. The built runner (OLIVARES_RUNNER) runs
 * the hostile agent (OLIVARES_HOSTILE_AGENT, tests/fixtures/agents/
 * hostile.c) in a gVisor sandbox, one test per attack, each asserting the
 * exact outcome the agent saw; plus the walkthrough (README) gives the same
 * lines on gvisor as on inproc-mock, bad input fails closed with zero
 * steps, nothing is left behind (no runsc process, no bundle or state
 * directory, no container cgroup, no mount), also when the runner itself
 * is SIGKILLed mid-run; and firecracker fails closed on a host without it.
 *
 * Where gVisor differs from the namespaces jail the test asserts what was
 * observed with runsc 0.0~20221219 on ptrace, and says so: RLIMIT_CPU is
 * not enforced by this runsc (a spin is stopped by the wall clock), and
 * the sandbox has its own loopback interface, up, on gVisor's netstack
 * (not the host's). ptrace, unshare and mount are refused with EPERM by
 * the OCI seccomp filter the sentry applies (runsc --oci-seccomp).
 *
 * The platform ([runner] gvisor_platform, olivares-runner
 * --gvisor-platform): every runsc command carries it, and on this host
 * only ptrace runs; systrap (unknown to this runsc) and kvm (its sandbox
 * never boots here) fail closed, with a reason naming the platform.
 *
 * When `olivares-runner --preflight gvisor` fails on this host (no runsc,
 * not root), every gvisor test asserts the fail-closed result instead
 * (failed, isolated false, zero steps, the preflight's reason) and says so
 * on stderr; OLIVARES_REQUIRE_GVISOR=1 turns that into a failure.
 *
 * Makefile.am's AM_TESTS_ENVIRONMENT sets the OLIVARES_* paths; export them
 * when running by hand.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/runner_harness.h"
#include "tests/unit/sweep.h"

/* Did --preflight gvisor pass on this host? Set once in main(). */
static int gvisor_ok;
static char gvisor_why[512];
/* The uid (and gid) spawn_runner() starts the runner as; 0: this
 * process's. */
static uid_t run_as_uid = 0;

/* ---- helpers ------------------------------------------------------------ */

/* A copy of a server-ish environment: none of it may reach the agent. */
static char *const server_env[] = {"OLIVARES_DB_PASSWORD=server-secret",
                                   "OLIVARES_TOKEN_PEPPER=pepper", "HOME=/root",
                                   "PATH=/usr/local/bin:/usr/bin:/bin", NULL};

/* When set, runner_host() starts the runner under an inherited seccomp
 * filter that refuses unshare(CLONE_NEWNS) with EPERM: a host where the
 * runner cannot make the mount namespace of the sandbox's /tmp. */
static int run_deny_newns = 0;

/* The filter of run_deny_newns (classic BPF: the test links no
 * libseccomp). 0, or -1. */
static int deny_newns(void)
{
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNS, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}

/* In the runner's child, before its exec: run_as_uid, and a descriptor 9
 * left open without close-on-exec (a worker's leak the agent must not
 * see); the filter of run_deny_newns. */
static int runner_host(void *ctx)
{
	int leak;

	(void)ctx;
	if (run_deny_newns && deny_newns() != 0)
		return -1;
	if (run_as_uid != 0 &&
	    (setgroups(0, NULL) != 0 || setresgid(run_as_uid, run_as_uid, run_as_uid) != 0 ||
	     setresuid(run_as_uid, run_as_uid, run_as_uid) != 0))
		return -1;
	leak = open("/dev/null", O_RDONLY);
	if (leak >= 0 && leak != 9) {
		dup2(leak, 9);
		close(leak);
	}
	return 0;
}

/* Start the runner with args, spec on its stdin (then EOF), server_env
 * and the host of runner_host(). Returns the pid; *out is its stdout. */
static pid_t spawn_runner(const char *const *args, json_t *spec, int *out)
{
	return spawn_runner_with(args, spec, server_env, runner_host, NULL, out);
}

static struct result run_backend(const char *backend, json_t *spec)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	long long t0 = now_ms();
	struct result r;
	int fd;
	pid_t pid = spawn_runner(args, spec, &fd);

	r = collect(pid, fd, t0);
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	return r;
}

/* ---- leftovers ------------------------------------------------------------ */

/*
 * Other runners may use gvisor on this host at the same time (a bench, an
 * end-to-end run), so leftovers are counted for this test's own runs only:
 * the test process is the subreaper of everything its runners start, so a
 * process they leave behind stays its descendant; and the bundle
 * directories and container ids are learnt from the command lines of those
 * descendants while they run (runsc --root=<dir>/state ..., the sandbox's
 * last argument is the container id).
 */
struct seen {
	char dirs[16][128];
	char ids[16][64];
	int ndirs, nids;
	/* The runner's runsc commands (argv[0] a runsc binary): */
	int runsc_cmds;    /* 1 once one was seen */
	char platform[32]; /* the --platform= value of the first one, "" when none */
	int runsc_odd;     /* 1 when one lacked --oci-seccomp or that --platform= */
	/* The sandbox's boot command line (argv[0] "runsc-sandbox"): */
	int boot_seen, boot_seccomp;
	char boot_platform[32]; /* its --platform= value, "" when it had none */
	/* The container's host cgroup limits, read while it ran (the last
	 * value read; 0 when never read, -1 for "max"). */
	long long pids_max, mem_limit;
};

static void seen_add(char (*list)[128], int *n, const char *v, size_t len)
{
	int i;

	if (len >= 128 || *n >= 16)
		return;
	for (i = 0; i < *n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], v, len) == 0)
			return;
	memcpy(list[*n], v, len);
	list[*n][len] = '\0';
	(*n)++;
}

static void seen_id(struct seen *seen, const char *v)
{
	int i;

	if (strlen(v) >= 64 || seen->nids >= 16)
		return;
	for (i = 0; i < seen->nids; i++)
		if (strcmp(seen->ids[i], v) == 0)
			return;
	snprintf(seen->ids[seen->nids++], 64, "%s", v);
}

/* Note what a runsc command line (args NUL-separated, len bytes) says of
 * the platform and the OCI seccomp flag. */
static void seen_flags(struct seen *seen, const char *args, size_t len)
{
	size_t off, n0 = strlen(args);
	const char *platform = NULL;
	int seccomp = 0, runsc, boot;

	runsc = n0 >= 6 && strcmp(args + n0 - 6, "/runsc") == 0;
	boot = strcmp(args, "runsc-sandbox") == 0;
	if (!runsc && !boot)
		return;
	for (off = 0; off < len; off += strlen(args + off) + 1) {
		if (strncmp(args + off, "--platform=", 11) == 0)
			platform = args + off + 11;
		if (strcmp(args + off, "--oci-seccomp") == 0 ||
		    strcmp(args + off, "--oci-seccomp=true") == 0)
			seccomp = 1;
	}
	if (boot) {
		seen->boot_seen = 1;
		seen->boot_seccomp = seccomp;
		snprintf(seen->boot_platform, sizeof(seen->boot_platform), "%s",
		         platform ? platform : "");
		return;
	}
	if (!seen->runsc_cmds)
		snprintf(seen->platform, sizeof(seen->platform), "%s", platform ? platform : "");
	seen->runsc_cmds = 1;
	if (!seccomp || !platform || strcmp(platform, seen->platform) != 0)
		seen->runsc_odd = 1;
}

/* Read a cgroup file of the container's as a number into *v (-1 for
 * "max"); *v is left alone when the file is not there (yet, or any
 * more). */
static void seen_cgroup_value(const char *path, long long *v)
{
	char buf[64];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return;
	buf[r] = '\0';
	*v = strncmp(buf, "max", 3) == 0 ? -1 : atoll(buf);
}

/* The host cgroup limits of the containers seen so far, where runsc puts
 * them: /sys/fs/cgroup/<controller>/<container id> (no cgroupsPath in
 * the OCI config). */
static void seen_cgroups(struct seen *seen)
{
	char path[300];
	int i;

	for (i = 0; i < seen->nids; i++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/pids/%s/pids.max", seen->ids[i]);
		seen_cgroup_value(path, &seen->pids_max);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/memory/%s/memory.limit_in_bytes",
		         seen->ids[i]);
		seen_cgroup_value(path, &seen->mem_limit);
	}
}

/* Note the bundle directory and container id on a runsc command line
 * (args NUL-separated, len bytes), and its flags (seen_flags). */
static void seen_cmdline(struct seen *seen, const char *args, size_t len)
{
	const char *a, *last = NULL, *dir, *end;
	size_t off;

	seen_flags(seen, args, len);
	for (off = 0; off < len; off += strlen(args + off) + 1) {
		a = args + off;
		dir = strstr(a, "/olivares-gvisor.");
		if (dir && (strncmp(a, "--root=", 7) == 0 || a[0] == '/')) {
			dir = strncmp(a, "--root=", 7) == 0 ? a + 7 : a;
			end = strstr(dir, "/state");
			if (end)
				seen_add(seen->dirs, &seen->ndirs, dir, (size_t)(end - dir));
		}
		last = a;
	}
	if (last && strncmp(last, "olivares-", 9) == 0 && strlen(last) == 9 + 32)
		seen_id(seen, last);
}

/* The descendants of this process now; their runsc
 * command lines are noted in seen (may be NULL). *sandboxes counts the
 * runsc-sandbox processes among them (may be NULL). */
static int descendants(struct seen *seen, int *sandboxes)
{
	static pid_t pid[65536], ppid[65536];
	static char mark[65536];
	char path[300], buf[8192];
	struct dirent *e;
	size_t n = 0, i;
	int changed, count = 0, fd;
	ssize_t r;
	char *p;
	DIR *d;

	d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL && n < 65536) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %d", &ppid[n]) != 1)
			continue;
		pid[n] = atoi(e->d_name);
		mark[n] = 0;
		n++;
	}
	closedir(d);
	do {
		changed = 0;
		for (i = 0; i < n; i++) {
			size_t j;

			if (mark[i])
				continue;
			if (ppid[i] == getpid()) {
				mark[i] = 1;
				changed = 1;
				continue;
			}
			for (j = 0; j < n; j++)
				if (mark[j] && pid[j] == ppid[i]) {
					mark[i] = 1;
					changed = 1;
					break;
				}
		}
	} while (changed);
	if (sandboxes)
		*sandboxes = 0;
	for (i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		count++;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid[i]);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if (sandboxes && strcmp(buf, "runsc-sandbox") == 0)
			(*sandboxes)++;
		if (seen)
			seen_cmdline(seen, buf, (size_t)r);
	}
	return count;
}

/* What is left of this test's runs: descendants, bundle directories,
 * container cgroups. */
static int leftovers(const struct seen *seen)
{
	static const char *const cgroups[] = {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory",
	                                      "/sys/fs/cgroup/cpu", "/sys/fs/cgroup", NULL};
	char path[300];
	struct stat st;
	int n, i, k;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	n = descendants(NULL, NULL);

	for (i = 0; seen && i < seen->ndirs; i++)
		if (lstat(seen->dirs[i], &st) == 0)
			n++;
	for (i = 0; seen && i < seen->nids; i++)
		for (k = 0; cgroups[k]; k++) {
			snprintf(path, sizeof(path), "%s/%s", cgroups[k], seen->ids[i]);
			if (lstat(path, &st) == 0)
				n++;
		}
	return n;
}

/* Wait up to ms for the leftovers to go (a killed runner's guard cleans
 * up asynchronously); returns what is left then. */
static int leftovers_after(const struct seen *seen, long ms)
{
	long long until = now_ms() + ms;
	int n;

	while ((n = leftovers(seen)) != 0 && now_ms() < until)
		sleep_ms(50);
	return n;
}

/* run_backend("gvisor", spec) with --gvisor-platform platform (NULL: none),
 * watching the runner's descendants while it runs to learn its bundle
 * directory, container id, runsc flags and cgroup limits (struct seen).
 * The test process becomes their subreaper. */
static struct result run_watched_on(json_t *spec, struct seen *seen, const char *platform)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"),           "--backend", "gvisor",
	                      platform ? "--gvisor-platform" : NULL, platform,    NULL};
	long long t0 = now_ms(), first_ms = -1;
	struct text out = {NULL, 0, 0};
	struct pollfd pfd;
	char chunk[65536];
	struct result r;
	ssize_t got;
	int fd;
	pid_t pid;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pid = spawn_runner(args, spec, &fd);
	for (;;) {
		descendants(seen, NULL);
		seen_cgroups(seen);
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		got = read(fd, chunk, sizeof(chunk));
		if (got <= 0)
			break;
		if (first_ms < 0)
			first_ms = now_ms() - t0;
		text_add(&out, chunk, (size_t)got);
	}
	close(fd);
	r = collect_text(pid, out.data ? out.data : "", out.len, t0);
	free(out.data);
	r.first_ms = first_ms;
	ck_assert_msg(r.summary != NULL, "no summary line from the runner");
	ck_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	return r;
}

static struct result run_watched(json_t *spec, struct seen *seen)
{
	return run_watched_on(spec, seen, NULL);
}

/* The runsc commands of a run carried --platform=platform and
 * --oci-seccomp, and so did its sandbox's boot line, where runsc writes
 * the platform only when it is not runsc's default (observed: none for
 * ptrace on 0.0~20221219): there, no other platform. */
static void assert_platform(const struct seen *seen, const char *platform)
{
	ck_assert_msg(seen->runsc_cmds, "no runsc command seen");
	ck_assert_str_eq(seen->platform, platform);
	ck_assert_msg(!seen->runsc_odd, "a runsc command without --platform=%s --oci-seccomp",
	              platform);
	ck_assert_msg(seen->boot_seen, "no sandbox seen");
	ck_assert_msg(seen->boot_seccomp, "the sandbox runs without --oci-seccomp=true");
	ck_assert_msg(!seen->boot_platform[0] || strcmp(seen->boot_platform, platform) == 0,
	              "the sandbox runs on platform %s", seen->boot_platform);
}

/* A run that must have failed closed: nothing ran, nothing claimed. */
static void assert_fail_closed(const struct result *r, const char *backend, const char *reason_has)
{
	ck_assert_str_eq(sum_str(r, "backend"), backend);
	ck_assert_str_eq(sum_str(r, "status"), "failed");
	ck_assert(!sum_bool(r, "isolated"));
	ck_assert_int_eq(sum_int(r, "steps_total"), 0);
	ck_assert_int_eq(sum_int(r, "steps_ok"), 0);
	ck_assert_int_eq(sum_int(r, "steps_error"), 0);
	ck_assert_int_eq(json_array_size(r->steps), 0);
	ck_assert_ptr_nonnull(sum_str(r, "reason"));
	ck_assert_msg(strstr(sum_str(r, "reason"), reason_has) != NULL,
	              "reason \"%s\" lacks \"%s\"", sum_str(r, "reason"), reason_has);
}

/* On a host where gvisor's preflight fails, a gvisor run must fail closed
 * with that reason. Returns 1 when the test is done (gvisor unavailable). */
static int gvisor_unavailable_checked(json_t *spec)
{
	struct result r;

	if (gvisor_ok)
		return 0;
	r = run_backend("gvisor", spec);
	assert_fail_closed(&r, "gvisor", "backend gvisor unavailable: ");
	result_free(&r);
	return 1;
}

/* Run the hostile agent on spec's one probe (spec is the caller's). The
 * run must be isolated, on ptrace with the seccomp filter, and destroyed;
 * *seen is what was seen of it. -1 when gvisor is unavailable on this
 * host (then the fail-closed result was asserted). */
static int probe_spec_run(json_t *spec, struct result *r, struct seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	if (gvisor_unavailable_checked(spec))
		return -1;
	*r = run_watched(spec, seen);
	/* every probe also checks that nothing of its run is left */
	ck_assert_int_ge(seen->ndirs, 1);
	ck_assert_int_eq(leftovers(seen), 0);
	ck_assert_str_eq(sum_str(r, "backend"), "gvisor");
	ck_assert_msg(sum_bool(r, "isolated"), "not isolated: %s", sum_str(r, "reason"));
	ck_assert_msg(sum_bool(r, "destroyed"), "not destroyed: %s", sum_str(r, "reason"));
	ck_assert_int_eq(sum_int(r, "steps_total"), 1);
	/* without --gvisor-platform, the default */
	assert_platform(seen, "ptrace");
	return 0;
}

/* Run agent (an OLIVARES_* variable naming it) on one step with the given
 * limits (0 = default): probe_spec_run(). */
static int agent_run(const char *agent, const char *input, long mem, long procs, long cpu,
                     long wall, struct result *r)
{
	json_t *spec = spec_new(NULL, env_path(agent));
	struct seen seen;
	int rc;

	spec_step(spec, "probe", input);
	if (mem)
		spec_limit(spec, "memory_mb", mem);
	if (procs)
		spec_limit(spec, "processes", procs);
	if (cpu)
		spec_limit(spec, "cpu_seconds", cpu);
	if (wall)
		spec_limit(spec, "wall_ms", wall);
	rc = probe_spec_run(spec, r, &seen);
	json_decref(spec);
	return rc;
}

/* Run the hostile agent on one probe with the given limits (0 = default):
 * probe_spec_run(). */
static int probe_run(const char *input, long mem, long procs, long cpu, long wall, struct result *r)
{
	return agent_run("OLIVARES_HOSTILE_AGENT", input, mem, procs, cpu, wall, r);
}

/* One step of agent on input with tmpfs_mb (0: the default), through
 * probe_spec_run (isolated, on ptrace with the filter, destroyed, nothing
 * left): the step's output (static copy), or NULL when gvisor is
 * unavailable here (the fail-closed result was asserted). */
static const char *agent_step(const char *agent, const char *input, long tmpfs_mb)
{
	static char out[8192];
	json_t *spec = spec_new(NULL, agent);
	struct seen seen;
	struct result r;
	int rc;

	spec_step(spec, "probe", input);
	if (tmpfs_mb)
		spec_limit(spec, "tmpfs_mb", tmpfs_mb);
	rc = probe_spec_run(spec, &r, &seen);
	json_decref(spec);
	if (rc != 0)
		return NULL;
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "run failed: %s",
	              sum_str(&r, "reason"));
	ck_assert_str_eq(step_str(&r, 0, "status"), "ok");
	snprintf(out, sizeof(out), "%s", step_str(&r, 0, "output"));
	result_free(&r);
	return out;
}

#define AGENT_STEP_EQ(agent, input, tmpfs_mb, want)                                                \
	do {                                                                                       \
		const char *got_ = agent_step(agent, input, tmpfs_mb);                             \
		if (got_)                                                                          \
			ck_assert_str_eq(got_, want);                                              \
	} while (0)

/* One probe of the hostile agent that completes: agent_step(). */
static const char *probe(const char *input)
{
	return agent_step(env_path("OLIVARES_HOSTILE_AGENT"), input, 0);
}

#define PROBE_EQ(input, want) AGENT_STEP_EQ(env_path("OLIVARES_HOSTILE_AGENT"), input, 0, want)

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (len + (size_t)n + 1 > cap) {
			cap = (len + (size_t)n + 1) * 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		memcpy(buf + len, chunk, (size_t)n);
		len += (size_t)n;
	}
	close(fd);
	if (!buf)
		buf = strdup("");
	buf[len] = '\0';
	return buf;
}

/* ---- containment: one test per attack ------------------------------------ */

START_TEST(test_connect_host_loopback)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char input[64], want[128];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	const char *got;

	/* A listener on the host's loopback; the agent tries to reach it. */
	ck_assert_int_ge(s, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	snprintf(input, sizeof(input), "connect 127.0.0.1:%d", ntohs(sa.sin_port));
	/* The sandbox's loopback is gVisor's own: nothing listens there. */
	snprintf(want, sizeof(want), "%s: denied (ECONNREFUSED)", input);
	got = probe(input);
	if (got)
		ck_assert_str_eq(got, want);
	/* and the host listener saw nothing */
	ck_assert_int_lt(accept(s, NULL, NULL), 0);
	ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
	close(s);
}
END_TEST

/* A host file the agent must not see, outside every bind. */
static const char *host_secret(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/var/tmp/olv-gv-secret-%d-XXXXXX", (int)getpid());
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	ck_assert_int_eq(write(fd, "host-secret\n", 12), 12);
	close(fd);
	return path;
}

START_TEST(test_read_host_file)
{
	const char *secret = host_secret();
	char input[128], want[160];

	snprintf(input, sizeof(input), "read %s", secret);
	snprintf(want, sizeof(want), "%s: denied (ENOENT)", input);
	PROBE_EQ(input, want);
	PROBE_EQ("read /etc/passwd", "read /etc/passwd: denied (ENOENT)");
	PROBE_EQ("read /etc/shadow", "read /etc/shadow: denied (ENOENT)");
	/* the sandbox's pid 1 root is the sandbox's root, not the host's */
	PROBE_EQ("read /proc/1/root/etc/passwd", "read /proc/1/root/etc/passwd: denied (ENOENT)");
	unlink(secret);
}
END_TEST

START_TEST(test_read_host_file_through_symlink)
{
	const char *secret = host_secret();
	char input[128], want[160];

	snprintf(input, sizeof(input), "read-symlink %s", secret);
	snprintf(want, sizeof(want), "%s: denied (ENOENT)", input);
	PROBE_EQ(input, want);
	PROBE_EQ("read-symlink /etc/shadow", "read-symlink /etc/shadow: denied (ENOENT)");
	unlink(secret);
}
END_TEST

START_TEST(test_write_outside_tmpfs)
{
	struct stat st;

	/* The root is read-only and owned by root: uid 65534 is refused. */
	PROBE_EQ("write /olv-gv-root", "write /olv-gv-root: denied (EACCES)");
	PROBE_EQ("write /usr/olv-gv-usr", "write /usr/olv-gv-usr: denied (EACCES)");
	PROBE_EQ("write /agent", "write /agent: denied (EACCES)");
	PROBE_EQ("write /etc/olv-gv-etc", "write /etc/olv-gv-etc: denied (ENOENT)");
	/* Only the sandbox's own /tmp is writable, and it is not the host's. */
	PROBE_EQ("write /tmp/olv-gv-inside", "write /tmp/olv-gv-inside: allowed");
	ck_assert_int_ne(stat("/usr/olv-gv-usr", &st), 0);
	ck_assert_int_ne(stat("/tmp/olv-gv-inside", &st), 0);
	ck_assert_int_ne(stat("/run/olv-gv-inside", &st), 0);
}
END_TEST

START_TEST(test_proc_shows_only_the_sandbox)
{
	/* The agent is the sandbox's pid 1 and alone in its /proc. */
	PROBE_EQ("proc", "proc: 1 pids: 1");
}
END_TEST

START_TEST(test_fork_bomb_stopped)
{
	struct result r;

	/* RLIMIT_NPROC, enforced by the sentry: processes - 1 children. */
	if (probe_run("forkbomb", 0, 8, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "forkbomb: stopped after 7 forks (EAGAIN)");
	result_free(&r);
	PROBE_EQ("forkbomb", "forkbomb: stopped after 31 forks (EAGAIN)");
}
END_TEST

START_TEST(test_cpu_spin_killed_by_wall_clock)
{
	struct result r;

	/* With cpu_seconds far above the wall clock (30 s of CPU time for
	 * the run), the wall-clock limit stops the spin and tears the whole
	 * sandbox down. */
	if (probe_run("spin", 0, 0, 30, 2500, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), "wall-clock limit of 2500 ms exceeded");
	ck_assert_str_eq(step_str(&r, 0, "status"), "error");
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_str_eq(step_str(&r, 0, "output"),
	                 "[[agent-error:wall-clock limit of 2500 ms exceeded]]");
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	/* The spin is given up at the limit (the step's line is written
	 * then, before the teardown): near 2500 ms, not at the end of an
	 * unbounded spin. */
	ck_assert_int_ge(r.first_ms, 2500);
	ck_assert_int_lt(r.first_ms, 2500 + 2000);
	/* The teardown that stops it (runsc delete, every process reaped) is
	 * bounded by the runner too (RUNNER_GV_CMD_MS + RUNNER_GV_TEARDOWN_MS, 10 s): it
	 * took 0.4 - 1 s here, 4.2 s once under load (6663 ms in all). */
	ck_assert_int_ge(r.ms, 2500);
	ck_assert_int_lt(r.ms, 2500 + 10000);
	result_free(&r);
}
END_TEST

START_TEST(test_memory_balloon_stopped)
{
	struct result r;
	const char *out;
	int mib = -1;

	if (probe_run("balloon", 64, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	out = step_str(&r, 0, "output");
	ck_assert_msg(sscanf(out, "balloon: stopped at %d MiB (ENOMEM)", &mib) == 1, "%s", out);
	ck_assert_msg(strstr(out, "(ENOMEM)") != NULL, "%s", out);
	/* RLIMIT_AS 64 MiB, less the agent's own mappings */
	ck_assert_int_ge(mib, 32);
	ck_assert_int_lt(mib, 64);
	result_free(&r);
}
END_TEST

/* The reason of a run stopped at memory_mb 32 (runner/cgroup.c). */
#define GV_MEM_REASON_32                                                                           \
	"memory_mb limit (32 MiB for the whole run, with 256 MiB more for the gVisor sandbox's "   \
	"sentry and gofer) reached: the kernel's out-of-memory killer ended a process of the run"

START_TEST(test_memfd_balloon_stopped)
{
	struct result r;

	/* Written into memfds, the pages are the sentry's, in no address
	 * space of the agent: RLIMIT_AS does not see them, the sandbox's
	 * memory cgroup (256 + 32 MiB here) does. First, that the probe
	 * works: 16 MiB fit under the default limits. */
	if (probe_run("memfd-balloon 16", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "memfd-balloon: wrote 16 MiB");
	result_free(&r);
	if (probe_run("memfd-balloon 1024", 32, 2, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	/* the sentry killed in the sandbox's cgroup: the reason names the
	 * bound, from the cgroup's own count of out-of-memory kills */
	ck_assert_str_eq(step_str(&r, 0, "output"), "[[agent-error:" GV_MEM_REASON_32 "]]");
	ck_assert_str_eq(sum_str(&r, "reason"), GV_MEM_REASON_32);
	result_free(&r);
}
END_TEST

/* An interpreter outside the sandbox's root: the reason says so, before
 * any sandbox. */
START_TEST(test_interpreter_not_in_jail)
{
	if (!gvisor_ok)
		return; /* every other test already asserted the preflight's result */
	assert_interp_cases(run_backend, "gvisor", env_path("OLIVARES_HOSTILE_AGENT"));
}
END_TEST

START_TEST(test_host_unix_socket_in_bind_unreachable)
{
	struct sockaddr_un sa;
	char dir[64], input[160];
	json_t *spec;
	struct result r;
	const char *out;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	/* A host process listening on a path inside a bound directory. */
	ck_assert_int_eq(sweep_mkdtemp(dir, sizeof(dir), "/var/tmp", "olv-gv-bind-"), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/host.sock", dir);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(chmod(sa.sun_path, 0777), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	snprintf(input, sizeof(input), "connect-unix %s", sa.sun_path);
	spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	spec_step(spec, "probe", input);
	json_object_set_new(spec, "binds", json_pack("[s, s]", "/usr", dir));
	if (!gvisor_unavailable_checked(spec)) {
		r = run_backend("gvisor", spec);
		ck_assert_msg(sum_bool(&r, "isolated"), "%s", sum_str(&r, "reason"));
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		out = step_str(&r, 0, "output");
		ck_assert_msg(strncmp(out, input, strlen(input)) == 0 &&
		                  strncmp(out + strlen(input), ": denied (", 10) == 0,
		              "%s", out);
		result_free(&r);
		/* and the host listener saw nothing */
		ck_assert_int_lt(accept(s, NULL, NULL), 0);
		ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
	}
	json_decref(spec);
	close(s);
	unlink(sa.sun_path);
	rmdir(dir);
}
END_TEST

/* The sandbox's /dev is the Sentry's, and has the usual devices: what
 * the namespaces jail binds from the host (test_namespaces) works the
 * same here. */
START_TEST(test_dev_nodes)
{
	PROBE_EQ("dev", "dev: null wrote 6, zero read 16 zeros, urandom read 16, random read 16, "
	                "full denied (ENOSPC)");
}
END_TEST

START_TEST(test_mount_refused)
{
	PROBE_EQ("mount", "mount: denied (EPERM)");
	/* the rest of the mount and namespace calls, clone with a namespace
	 * flag among them (the OCI filter's rules on clone's flags) */
	PROBE_EQ("ns-calls", "ns-calls: clone denied (EPERM), setns denied (EPERM), umount2 denied "
	                     "(EPERM), pivot_root denied (EPERM), chroot denied (EPERM)");
}
END_TEST

START_TEST(test_ptrace_refused)
{
	char *status;

	/* Both refused by the OCI seccomp filter (runsc --oci-seccomp): the
	 * sentry itself emulates ptrace between the sandbox's own tasks and
	 * let PTRACE_TRACEME succeed without it. The host is not reached
	 * either way, as the next check shows. */
	PROBE_EQ("ptrace", "ptrace: attach 1 denied (EPERM), traceme denied (EPERM)");
	status = slurp("/proc/self/status");
	ck_assert_ptr_nonnull(strstr(status, "\nTracerPid:\t0\n"));
	free(status);
}
END_TEST

START_TEST(test_root_read_only)
{
	const char *got = probe("mount-opts /");

	if (!got)
		return;
	/* The OCI root is read-only (root.readonly). A write to / is refused
	 * with EACCES before the mount is ever asked (uid 65534 owns nothing
	 * there; test_write_outside_tmpfs), so only the mount's own options
	 * show a root made writable. Observed: "mount-opts /: ro". */
	ck_assert_msg(strncmp(got, "mount-opts /: ", 14) == 0, "%s", got);
	ck_assert_msg(strcspn(got + 14, ",") == 2 && strncmp(got + 14, "ro", 2) == 0, "%s", got);
}
END_TEST

START_TEST(test_open_files_limit)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct seen seen;
	struct result r;

	/* RLIMIT_NOFILE = open_files, enforced by the sentry */
	spec_step(spec, "probe", "nofile");
	spec_limit(spec, "open_files", 16);
	if (probe_spec_run(spec, &r, &seen) == 0) {
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		ck_assert_str_eq(step_str(&r, 0, "output"), "nofile: 16 open (EMFILE)");
		result_free(&r);
	}
	json_decref(spec);
}
END_TEST

START_TEST(test_host_cgroup_limits)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct seen seen;
	struct result r;

	/* Read while the sandbox ran (run_watched): the container's host
	 * cgroups, /sys/fs/cgroup/{pids,memory}/<container id>. pids: the
	 * backstop of 256 + 32 x processes; memory: the whole sandbox's
	 * 256 MiB + memory_mb, all its processes together
	 * (runner/backend_gvisor.c). */
	spec_step(spec, "probe", "fds");
	spec_limit(spec, "processes", 4);
	spec_limit(spec, "memory_mb", 64);
	if (probe_spec_run(spec, &r, &seen) == 0) {
		ck_assert_str_eq(step_str(&r, 0, "output"), "fds: 0 1 2 3 4");
		ck_assert_int_eq(seen.nids, 1);
		ck_assert_int_eq(seen.pids_max, 256 + 32 * 4);
		ck_assert_int_eq(seen.mem_limit, (256LL + 64) << 20);
		result_free(&r);
	}
	json_decref(spec);
}
END_TEST

START_TEST(test_no_descriptor_inherited)
{
	/* spawn_runner leaves descriptor 9 open across exec */
	PROBE_EQ("fds", "fds: 0 1 2 3 4");
}
END_TEST

START_TEST(test_environment_clean)
{
	PROBE_EQ("env",
	         "env: HOME=/ LANG=C.UTF-8 OLIVARES_PROTOCOL_IN_FD=3 OLIVARES_PROTOCOL_OUT_FD=4 "
	         "PATH=/usr/bin:/bin PYTHONPATH=/olivares/python");
}
END_TEST

START_TEST(test_identity)
{
	PROBE_EQ("uid", "uid: uid=65534 gid=65534 map=0 0 4294967295");
	PROBE_EQ("caps", "caps: CapEff=0000000000000000");
	PROBE_EQ("hostname", "hostname: sandbox");
	/* gVisor's own netstack loopback; --network=none gives nothing else */
	PROBE_EQ("net", "net: lo up");
	/* refused by the OCI seccomp filter; without it the sentry let an
	 * unprivileged task make a user namespace of the emulated kernel
	 * (nothing of the host) */
	PROBE_EQ("unshare", "unshare: denied (EPERM)");
}
END_TEST

START_TEST(test_agent_exit_mid_step)
{
	struct result r;

	if (probe_run("exit 3", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(step_str(&r, 0, "status"), "error");
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	ck_assert_str_eq(step_str(&r, 0, "output"), "[[agent-error:agent exited with status 3]]");
	ck_assert_ptr_nonnull(strstr(sum_str(&r, "reason"), "agent exited with status 3"));
	result_free(&r);
}
END_TEST

START_TEST(test_stderr_flood_drained)
{
	PROBE_EQ("stderr", "stderr: done");
}
END_TEST

/* Two outputs for one step: the second is refused, not recorded as the
 * next step's (the driver's checks, as on namespaces). */
START_TEST(test_agent_two_outputs)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct result r;

	spec_step(spec, "a", "two-outputs-seq");
	spec_step(spec, "b", "two-outputs-late");
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	r = run_backend("gvisor", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "first");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "agent error in step 2: a line for step 1 during step 2");
	result_free(&r);
	json_decref(spec);

	/* the last step's second output, 100 ms late */
	spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	spec_step(spec, "a", "two-outputs-late");
	r = run_backend("gvisor", spec);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), "agent error after step 1: a line came from the "
	                                        "agent after the output of the last step");
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* Every step answered, then EOF ignored: the run stays completed, and the
 * summary's shutdown note says the agent had to be killed at the end of
 * its grace, or at the wall-clock limit when that came first; a
 * well-behaved agent gets null. */
START_TEST(test_agent_outlives_its_grace)
{
	struct result r;
	char note[192];
	int tries, wall;

	if (probe_run("linger", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert(json_is_null(json_object_get(r.summary, "reason")));
	ck_assert_str_eq(step_str(&r, 0, "output"), "linger: armed");
	ck_assert_msg(sum_str(&r, "shutdown") != NULL, "no shutdown note");
	ck_assert_str_eq(sum_str(&r, "shutdown"), "agent did not exit within its 1000 ms grace "
	                                          "after the end of its input: killed");
	ck_assert_int_ge(r.ms, 1000);
	result_free(&r);

	/* a wall-clock limit ends within any grace (the last output comes
	 * after the start). It counts the sandbox's start (about 0.3 s on a
	 * quiet host, over a second under ASan on a busy one): a sandbox that
	 * did not start within it is tried again with a limit a second longer,
	 * at most four times (watched as probe_run does, but not yet asserted
	 * isolated: that is what a retry is for) */
	for (tries = 0, wall = 1000;; tries++, wall += 1000) {
		json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
		struct seen seen;
		char starting[128];

		memset(&seen, 0, sizeof(seen));
		spec_step(spec, "a", "linger");
		spec_limit(spec, "wall_ms", wall);
		r = run_watched(spec, &seen);
		json_decref(spec);
		ck_assert_int_eq(leftovers(&seen), 0);
		ck_assert_msg(sum_bool(&r, "destroyed"), "not destroyed: %s",
		              sum_str(&r, "reason"));
		snprintf(starting, sizeof(starting),
		         "wall-clock limit of %d ms exceeded while the gVisor sandbox was starting",
		         wall);
		if (tries == 4 || strcmp(sum_str(&r, "status"), "failed") != 0 ||
		    !strstr(sum_str(&r, "reason"), starting))
			break;
		result_free(&r);
	}
	ck_assert_msg(sum_bool(&r, "isolated"), "not isolated: %s", sum_str(&r, "reason"));
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "run failed: %s",
	              sum_str(&r, "reason"));
	ck_assert_msg(sum_str(&r, "shutdown") != NULL, "no shutdown note");
	snprintf(note, sizeof(note),
	         "agent did not exit before the wall-clock limit of %d ms, which came "
	         "within its 1000 ms grace after the end of its input: killed",
	         wall);
	ck_assert_str_eq(sum_str(&r, "shutdown"), note);
	result_free(&r);

	if (probe_run("cwd", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "shutdown not null");
	result_free(&r);

	/* An agent that exits by itself is not said killed, though its
	 * sandbox exits a few ms after it: 980 ms into its grace, and 1040
	 * (the sandbox gets 150 ms beyond the grace for its own exit, so an
	 * agent late by less than that is not said killed either). */
	if (probe_run("linger 980", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(step_str(&r, 0, "output"), "linger 980: armed");
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "980: shutdown %s",
	              sum_str(&r, "shutdown"));
	result_free(&r);
	if (probe_run("linger 1040", 0, 0, 0, 0, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(r.summary, "shutdown")), "1040: shutdown %s",
	              sum_str(&r, "shutdown"));
	result_free(&r);
}
END_TEST

/* ---- behaviour ------------------------------------------------------------- */

START_TEST(test_walkthrough_same_as_inproc)
{
	json_t *spec = walk_spec();
	struct result a, b;

	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	env_path("OLIVARES_AGENT_MOCK");
	a = run_backend("inproc-mock", spec);
	b = run_backend("gvisor", spec);
	ck_assert_str_eq(sum_str(&b, "backend"), "gvisor");
	assert_same_as_inproc(&a, &b);
	ck_assert_str_eq(step_str(&b, 0, "status"), "ok");
	ck_assert_int_eq(sum_int(&b, "steps_total"), 2);
	ck_assert_int_eq(sum_int(&b, "steps_ok"), 1);
	ck_assert_int_eq(sum_int(&b, "steps_error"), 1);
	ck_assert(sum_bool(&b, "isolated"));
	ck_assert(sum_bool(&b, "destroyed"));
	ck_assert_str_eq(sum_str(&b, "status"), "completed");
	ck_assert_msg(json_is_null(json_object_get(b.summary, "shutdown")), "shutdown not null");
	result_free(&a);
	result_free(&b);
	json_decref(spec);
}
END_TEST

/* A step's duration_us is the runner's measure of the agent's time: a step
 * whose agent waits 300 ms before answering takes at least that, and the
 * quick step after it less. */
START_TEST(test_step_duration_covers_the_agent)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct result r;

	spec_slow_and_quick(spec);
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	r = run_backend("gvisor", spec);
	assert_slow_and_quick(&r);
	result_free(&r);
	json_decref(spec);
}
END_TEST

/* A real agent calls a tool mock, then a resource mock, each step: the
 * right answers, and each step line's trace lists both requests in order,
 * with a CRLF near miss. */
START_TEST(test_tool_mocks_traced)
{
	json_t *spec = tool_spec(env_path("OLIVARES_TOOL_BOT"));
	struct result r;

	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	r = run_backend("gvisor", spec);
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

	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	r = run_backend("gvisor", spec);
	assert_delayed_run(&r, 300);
	ck_assert(sum_bool(&r, "isolated"));
	result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_fail_closed)
{
	struct seen seen;
	json_t *spec;
	struct result r;

	if (!gvisor_ok)
		return; /* every other test already asserted the preflight's result */
	/* an agent that is not there */
	spec = spec_new(NULL, "/nonexistent/olv-agent");
	spec_step(spec, "a", "fds");
	r = run_backend("gvisor", spec);
	assert_fail_closed(&r, "gvisor",
	                   "agent program /nonexistent/olv-agent is not an executable");
	result_free(&r);
	json_decref(spec);
	/* a bind of nothing */
	spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	spec_step(spec, "a", "fds");
	json_object_set_new(spec, "binds", json_pack("[s]", "/nonexistent-olv-bind"));
	r = run_backend("gvisor", spec);
	assert_fail_closed(&r, "gvisor", "bind /nonexistent-olv-bind: No such file or directory");
	result_free(&r);
	json_decref(spec);
	/* a deadline the sandbox cannot boot within: no step is sent */
	spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	spec_step(spec, "a", "fds");
	spec_limit(spec, "wall_ms", 100);
	memset(&seen, 0, sizeof(seen));
	r = run_watched(spec, &seen);
	assert_fail_closed(&r, "gvisor",
	                   "wall-clock limit of 100 ms exceeded while the gVisor sandbox was "
	                   "starting");
	ck_assert(sum_bool(&r, "destroyed"));
	result_free(&r);
	json_decref(spec);
	ck_assert_int_eq(leftovers(&seen), 0);
}
END_TEST

START_TEST(test_binds_shape_the_root)
{
	json_t *spec;
	struct result r;

	/* Without /usr bound nothing of it is there; a bound file is. */
	spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	spec_step(spec, "a", "read /usr/lib/os-release");
	spec_step(spec, "b", "read /etc/hostname");
	json_object_set_new(spec, "binds", json_pack("[s]", "/etc/hostname"));
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	r = run_backend("gvisor", spec);
	ck_assert_msg(sum_bool(&r, "isolated"), "%s", sum_str(&r, "reason"));
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "read /usr/lib/os-release: denied (ENOENT)");
	ck_assert_ptr_nonnull(strstr(step_str(&r, 1, "output"), "read /etc/hostname: allowed: "));
	result_free(&r);
	json_decref(spec);
}
END_TEST

START_TEST(test_nothing_left_behind)
{
	char *mounts_before = slurp("/proc/self/mountinfo");
	char *mounts_after;
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct seen seen;
	struct result r;

	memset(&seen, 0, sizeof(seen));
	spec_step(spec, "a", "write /tmp/olv-gv-inside");
	spec_step(spec, "b", "forkbomb");
	spec_step(spec, "c", "spin");
	/* The wall clock counts the sandbox's start and the fork bomb (over
	 * 8 s together under ASan on a busy host of a slow machine); the CPU
	 * budget is set above it so that the wall clock is what ends the
	 * spin. */
	spec_limit(spec, "wall_ms", 15000);
	spec_limit(spec, "cpu_seconds", 60);
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		free(mounts_before);
		return;
	}
	r = run_watched(spec, &seen);
	ck_assert(sum_bool(&r, "isolated"));
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), "wall-clock limit of 15000 ms exceeded");
	ck_assert(sum_bool(&r, "destroyed"));
	ck_assert_int_eq(json_array_size(r.steps), 3);
	ck_assert_int_eq(sum_int(&r, "steps_ok"), 2);
	result_free(&r);
	/* The runner has exited: no process it started (the test is their
	 * subreaper), no bundle or state directory, no container cgroup, no
	 * mount. The directory and the id were seen while it ran. */
	ck_assert_int_eq(seen.ndirs, 1);
	ck_assert_int_eq(seen.nids, 1);
	ck_assert_int_eq(leftovers(&seen), 0);
	mounts_after = slurp("/proc/self/mountinfo");
	ck_assert_str_eq(mounts_before, mounts_after);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	free(mounts_before);
	free(mounts_after);
	json_decref(spec);
}
END_TEST

START_TEST(test_runner_killed_mid_run)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", "gvisor", NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct seen seen;
	long long until;
	int fd, st, sandboxes = 0;
	pid_t pid;

	memset(&seen, 0, sizeof(seen));
	spec_step(spec, "a", "spin");
	spec_limit(spec, "wall_ms", 30000);
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pid = spawn_runner(args, spec, &fd);
	/* wait until the sandbox runs the spin, then kill the runner as a
	 * worker past its deadline would */
	until = now_ms() + 5000;
	while (now_ms() < until && (descendants(&seen, &sandboxes), sandboxes) < 1)
		sleep_ms(20);
	ck_assert_int_eq(sandboxes, 1);
	sleep_ms(300);
	descendants(&seen, NULL);
	ck_assert_int_eq(seen.ndirs, 1);
	ck_assert_int_eq(seen.nids, 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(fd);
	/* its guard deletes the sandbox and the directory; the sandbox,
	 * the gofer and the guard are re-parented to this test and reaped */
	ck_assert_int_eq(leftovers_after(&seen, 10000), 0);
	json_decref(spec);
}
END_TEST

START_TEST(test_preflight_lines)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--preflight", "gvisor", NULL};
	struct result r;
	int fd;
	pid_t pid;
	json_t *line;

	/* --preflight prints a line that collect() files as the summary; its
	 * trial sandbox must leave nothing either */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pid = spawn_runner(args, NULL, &fd);
	r = collect(pid, fd, now_ms());
	line = r.summary;
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(json_string_value(json_object_get(line, "type")), "preflight");
	ck_assert_str_eq(json_string_value(json_object_get(line, "backend")), "gvisor");
	ck_assert_int_eq(json_is_true(json_object_get(line, "ok")), gvisor_ok);
	if (gvisor_ok)
		ck_assert(json_is_null(json_object_get(line, "reason")));
	result_free(&r);
	ck_assert_int_eq(leftovers(NULL), 0);
}
END_TEST

/* ---- the platform ------------------------------------------------------------ */

/* Is the installed runsc the one the platform results below were observed
 * with (Debian's 0.0~20221219)? Another may know systrap, or boot kvm. */
static int runsc_observed(void)
{
	char line[256] = "";
	FILE *p = popen("runsc --version 2>/dev/null", "r");

	if (!p)
		return 0;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	return strncmp(line, "runsc version 0.0~20221219.", 27) == 0;
}

/* A run on platform: isolated on it, or failed closed with a reason
 * naming it. On the observed runsc, want NULL means it runs, else it fails
 * with reason want, or one starting with want_prefix (may be NULL). */
static void platform_run_wall(const char *platform, long wall_ms, const char *want,
                              const char *want_prefix)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	const char *reason;
	char named[64];
	struct seen seen;
	struct result r;

	memset(&seen, 0, sizeof(seen));
	spec_step(spec, "a", "fds");
	spec_limit(spec, "wall_ms", wall_ms);
	r = run_watched_on(spec, &seen, platform);
	ck_assert_msg(seen.runsc_cmds, "no runsc command seen");
	ck_assert_str_eq(seen.platform, platform);
	ck_assert(!seen.runsc_odd);
	if (sum_bool(&r, "isolated")) {
		/* a runsc and a host that run this platform */
		ck_assert_msg(!want || !runsc_observed(), "platform %s ran on this runsc",
		              platform);
		ck_assert_str_eq(sum_str(&r, "status"), "completed");
		assert_platform(&seen, platform);
	} else {
		ck_assert_msg(want != NULL, "platform %s failed: %s", platform,
		              sum_str(&r, "reason"));
		snprintf(named, sizeof(named), "(platform %s)", platform);
		assert_fail_closed(&r, "gvisor", named);
		reason = sum_str(&r, "reason");
		ck_assert_msg(
		    !runsc_observed() || strcmp(reason, want) == 0 ||
		        (want_prefix && strncmp(reason, want_prefix, strlen(want_prefix)) == 0),
		    "reason \"%s\"", reason);
	}
	ck_assert(sum_bool(&r, "destroyed"));
	ck_assert_int_eq(leftovers(&seen), 0);
	result_free(&r);
	json_decref(spec);
}

static void platform_run(const char *platform, const char *want, const char *want_prefix)
{
	platform_run_wall(platform, 3000, want, want_prefix);
}

START_TEST(test_platform_from_command_line)
{
	if (!gvisor_ok)
		return; /* every other test already asserted the preflight's result */
	/* named explicitly, the default runs as without the flag (given the
	 * time a sandbox's start takes on a busy host) */
	platform_run_wall("ptrace", 20000, NULL, NULL);
	/* This runsc does not know systrap: runsc create refuses it. */
	platform_run("systrap",
	             "gVisor sandbox not created (platform systrap): runsc create exited with "
	             "status 128: FATAL ERROR: unknown platform: systrap",
	             NULL);
	/* /dev/kvm opens here, but the sandbox's boot hangs in the sentry's
	 * KVM machine set-up (observed for over 60 s, burning system time):
	 * the run fails at its wall-clock limit, no step sent. A host without
	 * /dev/kvm fails at runsc create. */
	platform_run("kvm",
	             "wall-clock limit of 3000 ms exceeded while the gVisor sandbox was starting "
	             "(platform kvm)",
	             "gVisor sandbox not created (platform kvm): ");
	/* with a long wall-clock limit, the sandbox's start is given up after
	 * 10 s, not held to the limit */
	platform_run_wall("kvm", 30000,
	                  "the gVisor sandbox did not start within 10000 ms (platform kvm); a "
	                  "sandbox boots in under a second",
	                  "gVisor sandbox not created (platform kvm): ");
}
END_TEST

START_TEST(test_platform_refused)
{
	const char *runner = env_path("OLIVARES_RUNNER");
	const char *bad[] = {runner, "--backend", "gvisor", "--gvisor-platform", "warp", NULL};
	const char *other[] = {runner,   "--backend", "namespaces", "--gvisor-platform",
	                       "ptrace", NULL};
	const char *pf[] = {runner, "--preflight", "gvisor", "--gvisor-platform", "systrap", NULL};
	const char *pf_kvm[] = {runner, "--preflight", "gvisor", "--gvisor-platform", "kvm", NULL};
	json_t *spec = spec_new(NULL, NULL);
	struct result r;
	int fd;
	pid_t pid;

	/* An unknown platform, or one for another backend, is a usage
	 * error: exit 2, no line (the worker never sends either). */
	spec_step(spec, "a", "agent:x");
	pid = spawn_runner(bad, spec, &fd);
	r = collect(pid, fd, now_ms());
	ck_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
	ck_assert_ptr_null(r.summary);
	ck_assert_int_eq(json_array_size(r.steps), 0);
	result_free(&r);
	pid = spawn_runner(other, spec, &fd);
	r = collect(pid, fd, now_ms());
	ck_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
	ck_assert_ptr_null(r.summary);
	result_free(&r);
	json_decref(spec);
	if (!gvisor_ok)
		return;

	/* The listing's preflight boots its trial sandbox on the platform. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	pid = spawn_runner(pf, NULL, &fd);
	r = collect(pid, fd, now_ms());
	ck_assert_ptr_nonnull(r.summary);
	if (runsc_observed()) {
		ck_assert(json_is_false(json_object_get(r.summary, "ok")));
		ck_assert_str_eq(
		    json_string_value(json_object_get(r.summary, "reason")),
		    "gVisor sandbox not created (platform systrap): runsc create exited "
		    "with status 128: FATAL ERROR: unknown platform: systrap");
	}
	result_free(&r);
	ck_assert_int_eq(leftovers(NULL), 0);
	/* A sandbox that never boots is given up within the worker's 8 s
	 * for a preflight answer (fcgi/api/backends.c), with its reason. */
	pid = spawn_runner(pf_kvm, NULL, &fd);
	r = collect(pid, fd, now_ms());
	ck_assert_ptr_nonnull(r.summary);
	ck_assert_int_lt(r.ms, 8000);
	if (json_is_false(json_object_get(r.summary, "ok")))
		ck_assert_ptr_nonnull(strstr(
		    json_string_value(json_object_get(r.summary, "reason")), "(platform kvm)"));
	result_free(&r);
	ck_assert_int_eq(leftovers(NULL), 0);
}
END_TEST

/* ---- a runner that is not root --------------------------------------------- */

/* Bundle directories of uid under /tmp (/run is root's only). */
static int bundle_dirs_of(uid_t uid)
{
	struct dirent *e;
	struct stat st;
	char path[300];
	DIR *d = opendir("/tmp");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "olivares-gvisor.", 16) != 0)
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		if (lstat(path, &st) == 0 && st.st_uid == uid)
			n++;
	}
	closedir(d);
	return n;
}

START_TEST(test_runner_not_root_fails_closed)
{
	const char *pf[] = {env_path("OLIVARES_RUNNER"), "--preflight", "gvisor", NULL};
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct result r;
	int before, fd;
	pid_t pid;

	if (geteuid() != 0) {
		/* the runner is not root here either: every test asserted that */
		json_decref(spec);
		return;
	}
	spec_step(spec, "a", "fds");
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	before = bundle_dirs_of(65534);
	run_as_uid = 65534;
	r = run_backend("gvisor", spec);
	pid = spawn_runner(pf, NULL, &fd);
	run_as_uid = 0;
	assert_fail_closed(&r, "gvisor", "");
	ck_assert_str_eq(sum_str(&r, "reason"),
	                 "backend gvisor unavailable: runsc run needs root (the runner runs as uid "
	                 "65534)");
	/* refused before the spec was read: nothing to attest destroyed */
	ck_assert(!sum_bool(&r, "destroyed"));
	result_free(&r);
	r = collect(pid, fd, now_ms());
	ck_assert_ptr_nonnull(r.summary);
	ck_assert(json_is_false(json_object_get(r.summary, "ok")));
	ck_assert_str_eq(json_string_value(json_object_get(r.summary, "reason")),
	                 "runsc run needs root (the runner runs as uid 65534)");
	result_free(&r);
	/* nothing started, nothing made */
	ck_assert_int_eq(leftovers(NULL), 0);
	ck_assert_int_eq(bundle_dirs_of(65534), before);
	json_decref(spec);
}
END_TEST

/* ---- firecracker ------------------------------------------------------------ */

/* What firecracker's preflight must say on this host, worked out here the
 * same way an operator would check it by hand. */
static const char *firecracker_expected(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? "/dev/kvm not present" : "/dev/kvm not usable";
	close(fd);
	if (access("/usr/bin/firecracker", X_OK) != 0 &&
	    access("/usr/local/bin/firecracker", X_OK) != 0)
		return "firecracker binary not found (looked in /usr/bin, /usr/local/bin)";
	if (access("/var/lib/olivares/firecracker/vmlinux", R_OK) != 0)
		return "firecracker kernel /var/lib/olivares/firecracker/vmlinux not found";
	if (access("/var/lib/olivares/firecracker/rootfs.ext4", R_OK) != 0)
		return "firecracker rootfs /var/lib/olivares/firecracker/rootfs.ext4 not found";
	return "firecracker runs are not implemented in this version";
}

START_TEST(test_firecracker_fails_closed)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--preflight", "firecracker", NULL};
	json_t *spec = spec_new(NULL, NULL);
	const char *want = firecracker_expected();
	struct result r;
	json_t *line;
	int fd;
	pid_t pid;

	spec_step(spec, "step-1", "agent:user1@example.test");
	spec_mock(spec, "agent:user1@example.test", "first synthetic account", NULL);
	r = run_backend("firecracker", spec);
	assert_fail_closed(&r, "firecracker", want);
	ck_assert(!sum_bool(&r, "destroyed") || strstr(want, "not implemented"));
	result_free(&r);
	json_decref(spec);

	pid = spawn_runner(args, NULL, &fd);
	r = collect(pid, fd, now_ms());
	line = r.summary;
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(json_string_value(json_object_get(line, "backend")), "firecracker");
	if (strstr(want, "not implemented")) {
		ck_assert(json_is_true(json_object_get(line, "ok")));
	} else {
		ck_assert(json_is_false(json_object_get(line, "ok")));
		ck_assert_str_eq(json_string_value(json_object_get(line, "reason")), want);
	}
	result_free(&r);
}
END_TEST

/* ---- whole-run bounds: memory_mb and cpu_seconds over all processes ------
 * The greedy agent (tests/fixtures/agents/greedy.c) spreads its load over
 * processes that each stay inside the per-process limits: only the
 * sandbox's cgroup (256 MiB + memory_mb, CPU time read by the runner)
 * stops them together. */

/* Run the greedy agent on one step with the given limits (0: default):
 * probe_spec_run() (isolated, destroyed, nothing left). */
static int greedy_run(const char *input, long mem, long procs, long cpu, long wall,
                      struct result *r)
{
	return agent_run("OLIVARES_GREEDY_AGENT", input, mem, procs, cpu, wall, r);
}

/* 18 processes of 24 MiB under memory_mb 64: each far inside its own
 * address-space limit, together (432 MiB) over the sandbox's 320. */
START_TEST(test_whole_run_memory_bound)
{
	const char *why = "memory_mb limit (64 MiB for the whole run, with 256 MiB more for the "
	                  "gVisor sandbox's sentry and gofer) reached: the kernel's out-of-memory "
	                  "killer ended a process of the run";
	struct result r;

	if (greedy_run("hold 18 24", 64, 32, 0, 30000, &r) != 0)
		return;
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), why);
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	result_free(&r);
}
END_TEST

/* Four of them fit: the run completes, each held its share. */
START_TEST(test_whole_run_memory_under_bound)
{
	struct result r;

	if (greedy_run("hold 4 24", 64, 32, 0, 30000, &r) != 0)
		return;
	ck_assert_msg(strcmp(sum_str(&r, "status"), "completed") == 0, "%s", sum_str(&r, "reason"));
	ck_assert_str_eq(step_str(&r, 0, "output"), "hold: 4 of 4 x 24 MiB held");
	result_free(&r);
}
END_TEST

/* A spin, which this runsc's RLIMIT_CPU does not stop, is stopped by the
 * run's budget, long before its wall clock of 60 s. */
START_TEST(test_cpu_spin_stopped_by_budget)
{
	const char *want = "cpu_seconds limit (2 s of CPU time for the whole run, the gVisor "
	                   "sandbox's sentry and gofer included) reached: ";
	const char *why;
	struct result r;

	if (greedy_run("spin 1", 0, 0, 2, 60000, &r) != 0)
		return;
	why = sum_str(&r, "reason");
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_msg(strncmp(why, want, strlen(want)) == 0 && reason_cpu_used(why) >= 2.0, "%s",
	              why);
	ck_assert_str_eq(step_str(&r, 0, "error_kind"), "agent_error");
	/* generous: 2 s of CPU on a loaded machine, far from the 60 s */
	ck_assert_msg(r.ms < 40000, "took %lld ms", r.ms);
	result_free(&r);
}
END_TEST

/* Four spinning processes share one budget: stopped once they used
 * cpu_seconds together, not four times it (generous bound: under twice
 * the budget). */
START_TEST(test_whole_run_cpu_shared)
{
	const char *why;
	struct result r;
	double used;

	if (greedy_run("spin 4", 0, 16, 2, 60000, &r) != 0)
		return;
	why = sum_str(&r, "reason");
	used = reason_cpu_used(why);
	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_msg(used >= 2.0 && used < 4.0, "used %.2f s (bound: under 4 s): %s", used, why);
	result_free(&r);
}
END_TEST

/* ---- threads and a bounded /tmp ------------------------------------------- */

/* An agent that starts 4 pthreads gets each one's result. glibc makes a
 * thread with clone3 and falls back to clone() only on ENOSYS; this runsc
 * gives EPERM for every OCI seccomp refusal whatever its errnoRet, so no
 * rule names clone3, which this runsc does not implement: ENOSYS. A runsc
 * that implements clone3 would let its namespace flags through (no filter
 * can read them): the clone3 step fails then, and the filter must be
 * revisited. */
START_TEST(test_pthreads)
{
	AGENT_STEP_EQ(env_path("OLIVARES_THREADS_AGENT"), "threads 4", 0,
	              "threads 4: t1=500500 t2=2001000 t3=4501500 t4=8002000");
	AGENT_STEP_EQ(env_path("OLIVARES_THREADS_AGENT"), "clone3", 0, "clone3: denied (ENOSYS)");
}
END_TEST

/* The agent's log: stdout and stderr merged in order, capped, cleaned, a
 * traceback kept whole (runner_harness.h assert_agent_log). */
START_TEST(test_agent_log)
{
	assert_agent_log(run_backend, "gvisor");
}
END_TEST

/* A Python agent on olivares_agent (runner_harness.h assert_sdk_agent_run). */
START_TEST(test_sdk_agent)
{
	assert_sdk_agent_run(run_backend, "gvisor");
}
END_TEST

/* The gateway (runner_harness.h says what each shows): an agent that
 * reaches its tools and model over HTTP(S), contained, its own run's only,
 * controlled egress, upstream secrets injected, a recorded run replayed. */
HARNESS_CASE(test_gateway, assert_gateway_run, "gvisor")
HARNESS_CASE(test_gateway_contained, assert_gateway_contained, "gvisor")
HARNESS_CASE(test_gateway_own_run, assert_gateway_own_run, "gvisor")
HARNESS_CASE(test_gateway_egress, assert_gateway_egress, "gvisor")
HARNESS_CASE(test_gateway_egress_secrets, assert_gateway_egress_secrets, "gvisor")
HARNESS_CASE(test_gateway_record, assert_gateway_record, "gvisor")
HARNESS_CASE(test_gateway_lost, assert_gateway_lost, "gvisor")

/* The same with Python's threading, the host's python3 run from the
 * default bind of /usr (the agent is a script whose #! names it). */
START_TEST(test_python_threading)
{
	ck_assert_msg(access("/usr/bin/python3", X_OK) == 0,
	              "/usr/bin/python3 is not installed (Debian: python3): the Python agent "
	              "cannot run");
	AGENT_STEP_EQ(env_path("OLIVARES_PY_THREADS_AGENT"), "threads 4", 0,
	              "py-threads 4: t1=500500 t2=2001000 t3=4501500 t4=8002000");
}
END_TEST

/* /tmp is a host tmpfs served into the sandbox with nr_inodes (the
 * sentry's own tmpfs ignores it: 100,000 empty files were made there):
 * one inode per KiB, 1024 with tmpfs_mb 1, its root directory included;
 * creating files stops there with ENOSPC. */
START_TEST(test_tmp_inodes_bounded)
{
	const char *out = agent_step(env_path("OLIVARES_HOSTILE_AGENT"), "inodes", 1);
	long files = -1;

	if (!out)
		return;
	ck_assert_msg(sscanf(out, "inodes: %ld files, then ENOSPC", &files) == 1, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "then ENOSPC"));
	ck_assert_int_ge(files, 1000);
	ck_assert_int_lt(files, 1024);
}
END_TEST

/* Writing past /tmp's size stops at the size (tmpfs_mb 2: 2 MiB), with
 * ENOSPC. */
START_TEST(test_tmp_size_bounded)
{
	AGENT_STEP_EQ(env_path("OLIVARES_HOSTILE_AGENT"), "fill", 2,
	              "fill: 2097152 bytes, then ENOSPC");
}
END_TEST

/* A runner that cannot make the mount namespace of /tmp fails closed,
 * naming it: no step, isolated false, nothing left. */
START_TEST(test_tmp_mount_failure_fails_closed)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));
	struct seen seen;
	struct result r;

	memset(&seen, 0, sizeof(seen));
	spec_step(spec, "probe", "cwd");
	if (gvisor_unavailable_checked(spec)) {
		json_decref(spec);
		return;
	}
	run_deny_newns = 1;
	r = run_watched(spec, &seen);
	run_deny_newns = 0;
	assert_fail_closed(&r, "gvisor",
	                   "gVisor sandbox not created: cannot unshare a mount namespace for "
	                   "/tmp: Operation not permitted");
	ck_assert_msg(sum_bool(&r, "destroyed"), "not destroyed: %s", sum_str(&r, "reason"));
	ck_assert_int_eq(leftovers_after(&seen, 5000), 0);
	result_free(&r);
	json_decref(spec);
}
END_TEST

static Suite *gvisor_suite(void)
{
	const TTest *const containment[] = {
	    test_connect_host_loopback,
	    test_read_host_file,
	    test_read_host_file_through_symlink,
	    test_write_outside_tmpfs,
	    test_proc_shows_only_the_sandbox,
	    test_fork_bomb_stopped,
	    test_cpu_spin_killed_by_wall_clock,
	    test_memory_balloon_stopped,
	    test_memfd_balloon_stopped,
	    test_host_unix_socket_in_bind_unreachable,
	    test_dev_nodes,
	    test_mount_refused,
	    test_ptrace_refused,
	    test_root_read_only,
	    test_open_files_limit,
	    test_host_cgroup_limits,
	    test_no_descriptor_inherited,
	    test_environment_clean,
	    test_identity,
	    test_agent_exit_mid_step,
	    test_agent_two_outputs,
	    test_agent_outlives_its_grace,
	    test_stderr_flood_drained,
	    NULL,
	};
	const TTest *const behaviour[] = {
	    test_walkthrough_same_as_inproc,
	    test_step_duration_covers_the_agent,
	    test_mock_delay,
	    test_tool_mocks_traced,
	    test_fail_closed,
	    test_interpreter_not_in_jail,
	    test_binds_shape_the_root,
	    test_nothing_left_behind,
	    test_runner_killed_mid_run,
	    test_preflight_lines,
	    test_platform_from_command_line,
	    test_platform_refused,
	    test_runner_not_root_fails_closed,
	    test_firecracker_fails_closed,
	    NULL,
	};
	const TTest *const bounds[] = {
	    test_whole_run_memory_bound,
	    test_whole_run_memory_under_bound,
	    test_cpu_spin_stopped_by_budget,
	    test_whole_run_cpu_shared,
	    NULL,
	};
	const TTest *const threads_tmp[] = {
	    test_pthreads,
	    test_python_threading,
	    test_agent_log,
	    test_sdk_agent,
	    test_gateway,
	    test_gateway_contained,
	    test_gateway_own_run,
	    test_gateway_egress,
	    test_gateway_egress_secrets,
	    test_gateway_record,
	    test_gateway_lost,
	    test_tmp_inodes_bounded,
	    test_tmp_size_bounded,
	    test_tmp_mount_failure_fails_closed,
	    NULL,
	};
	Suite *s = suite_create("gvisor");

	suite_add_tests(s, "containment", 60, containment);
	suite_add_tests(s, "behaviour", 60, behaviour);
	suite_add_tests(s, "bounds", 90, bounds);
	suite_add_tests(s, "threads-tmp", 60, threads_tmp);
	return s;
}

/* Ask the runner whether gvisor can run here; the answer decides what
 * every gvisor test asserts. */
static void probe_gvisor(void)
{
	gvisor_ok = runner_preflight_ok("gvisor", gvisor_why, sizeof(gvisor_why));
}

/* What failed runs of this suite left (their tests ended at a failed
 * assertion, before their clean-up): swept before this run's tests, and
 * never what a run going on beside this one uses (tests/unit/sweep.h). */
static void sweep_leftovers(void)
{
	static const char *const prefixes[] = {"olv-gv-secret-", "olv-gv-bind-",
	                                       "olv-egress-secrets-"};
	size_t i;
	int n;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = sweep_stale("/var/tmp", prefixes[i]);
		if (n < 0)
			fprintf(stderr, "test_gvisor: /var/tmp/%s*: a stale one stays\n",
			        prefixes[i]);
		else if (n > 0)
			fprintf(stderr, "test_gvisor: /var/tmp/%s*: %d stale removed\n",
			        prefixes[i], n);
	}
}

int main(void)
{
	const char *req = getenv("OLIVARES_REQUIRE_GVISOR");

	signal(SIGPIPE, SIG_IGN);
	sweep_leftovers();

	probe_gvisor();
	if (!gvisor_ok) {
		fprintf(stderr,
		        "test_gvisor: gvisor is NOT available on this host (%s): every gvisor "
		        "test asserts the fail-closed result only\n",
		        gvisor_why);
		if (req && strcmp(req, "1") == 0) {
			fprintf(stderr, "test_gvisor: OLIVARES_REQUIRE_GVISOR=1: failing\n");
			return EXIT_FAILURE;
		}
	}
	return suite_main(gvisor_suite(), CK_NORMAL);
}
