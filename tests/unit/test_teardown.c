/*
 * The teardown suite of the OS-level backends: a runner killed with
 * SIGKILL at each stage of a run, on a host kept busy, leaves nothing
 * behind. For gvisor and for namespaces, the runner (OLIVARES_RUNNER) runs
 * the hostile agent (OLIVARES_HOSTILE_AGENT) and is killed
 *
 *   booting      while the sandbox or the jail is being made, before the
 *                first step: once a `runsc create` is seen, once the
 *                sandbox's gofer is, once a `runsc start` is (gvisor); once
 *                the runner has a child that has not exec'd the agent yet
 *                (namespaces);
 *   mid-step     while the agent is inside a step that sleeps: once the
 *                line of the step before it came, at once and once the
 *                agent sits in that step;
 *   tearing down after the last step's line, while the agent lingers past
 *                the end of its input: at that line (the runner waits its
 *                grace), and once the teardown itself is seen (a `runsc
 *                delete` running, for gvisor; the jail's pid 1 gone while
 *                the runner lives, for namespaces),
 *
 * every stage OLIVARES_TEST_TEARDOWN_REPEATS times (default 3), each time
 * from an event seen from outside, never a sleep alone. After each kill,
 * within LEFT_BOUND_MS, nothing of that run may be left: no process it
 * started (by pid and start time), no process anywhere on the host whose
 * command line names its bundle directory or container id, whose cgroup
 * is one of the run's, or that is in one of its pid or mount namespaces;
 * no mount under its directory or naming its id, no nsfs mount of its
 * namespaces; no cgroup of the run under any cgroup hierarchy (the
 * olivares-* cgroups its processes were seen in, and the container id's
 * under every controller); no runsc state (its --root under the bundle
 * directory, and none under /run/runsc); no bundle directory.
 *
 * The host is kept busy by OLIVARES_TEST_HOGS busy-looping processes
 * (default 3; 0 for an idle run), started before each test case and
 * stopped and reaped after it by Check's unchecked fixture, in the suite's
 * own process, so that a failed test stops them too; they also die with
 * that process (parent-death signal).
 *
 * The runner's parent here is no subreaper, as a worker is not: what the
 * killed runner leaves goes to pid 1, and is found by the names above.
 * Other runs on the host (other suites, a stack) are never counted: only
 * what this test saw of its own run is looked for.
 *
 * Without gvisor on this host (no runsc, not root) the gvisor cases say so
 * on stderr and check nothing; OLIVARES_REQUIRE_GVISOR=1 makes that a
 * failure.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/runner_harness.h"

/* How long what a killed runner leaves may take to go: its guard's own
 * budget (RUNNER_GV_TEARDOWN_MS, 5 s) three times over, for a loaded
 * host. */
#define LEFT_BOUND_MS 15000
/* How long a stage may take to show (a gVisor boot on a loaded host). */
#define STAGE_WAIT_MS 30000
/* A stage caught at most once in this many tries counts as not shown. */
#define TRIES_PER_HIT 8

static int gvisor_ok;
static char gvisor_why[512];

/* ---- the hogs --------------------------------------------------------------- */

static pid_t hogs[16];
static int nhogs;

static void hogs_start(void)
{
	const char *v = getenv("OLIVARES_TEST_HOGS");
	pid_t parent = getpid();
	int n = v ? atoi(v) : 3, i;
	volatile unsigned long spin = 0;

	if (n < 0)
		n = 0;
	if (n > (int)(sizeof(hogs) / sizeof(hogs[0])))
		n = (int)(sizeof(hogs) / sizeof(hogs[0]));
	for (i = 0; i < n; i++) {
		hogs[nhogs] = fork();
		if (hogs[nhogs] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			if (getppid() != parent)
				_exit(0);
			for (;;)
				spin++;
		}
		if (hogs[nhogs] > 0)
			nhogs++;
	}
}

static void hogs_stop(void)
{
	int i;

	for (i = 0; i < nhogs; i++)
		kill(hogs[i], SIGKILL);
	for (i = 0; i < nhogs; i++)
		while (waitpid(hogs[i], NULL, 0) < 0 && errno == EINTR)
			;
	nhogs = 0;
}

/* ---- what a run was seen to hold --------------------------------------------- */

struct proc_id {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat starttime: a reused pid is another */
};

struct trace {
	struct proc_id procs[512];
	int nprocs;
	char dirs[8][128]; /* bundle directories (the mkdtemp one) */
	int ndirs;
	char ids[8][64]; /* container ids */
	int nids;
	char cgroups[64][320]; /* absolute cgroup directories named olivares-* */
	int ncgroups;
	char ns[16][40]; /* "pid:[N]", "mnt:[N]" of the run that are not ours */
	int nns;
	/* the stage events seen so far */
	int creates, starts, deletes, gofers, sandboxes;
	int child_booting;  /* the jail's pid 1 has not exec'd the agent yet */
	int agent_alive;    /* the jail's pid 1 runs the agent now */
	int agent_seen;     /* one ever did */
	int agent_asleep;   /* the agent sits in a sleep (poll, nanosleep) */
	const char *tmpdir; /* the runner's TMPDIR: its gateway's directory goes there */
};

static void add_str(char *list, size_t width, int *n, int max, const char *v, size_t len)
{
	int i;

	if (len == 0 || len >= width || *n >= max)
		return;
	for (i = 0; i < *n; i++)
		if (strlen(list + (size_t)i * width) == len &&
		    strncmp(list + (size_t)i * width, v, len) == 0)
			return;
	memcpy(list + (size_t)*n * width, v, len);
	list[(size_t)*n * width + len] = '\0';
	(*n)++;
}

static ssize_t read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

/* ppid, state and start time of pid; -1 when it is gone. */
static int proc_stat(pid_t pid, pid_t *ppid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	int ppid_i = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');
	/* fields after comm: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice
	 * threads itrealvalue starttime */
	if (!p || sscanf(p + 2,
	                 "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
	                 "%*d %*d %*d %llu",
	                 state, &ppid_i, start) != 3)
		return -1;
	*ppid = ppid_i;
	return 0;
}

/* The cgroup hierarchies mounted here: mount point, and the controllers
 * (super options) of each; v2 has none. */
struct cg_mount {
	char dir[256];
	char opts[520];
	int v2;
};
static struct cg_mount cg_mounts[32];
static int ncg_mounts;

static void cg_mounts_read(void)
{
	char line[4096], dir[256], fstype[64], opts[512];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *sep;

	ncg_mounts = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && ncg_mounts < 32) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", dir) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup") != 0 && strcmp(fstype, "cgroup2") != 0)
			continue;
		snprintf(cg_mounts[ncg_mounts].dir, sizeof(cg_mounts[0].dir), "%s", dir);
		snprintf(cg_mounts[ncg_mounts].opts, sizeof(cg_mounts[0].opts), ",%s,", opts);
		cg_mounts[ncg_mounts].v2 = strcmp(fstype, "cgroup2") == 0;
		ncg_mounts++;
	}
	fclose(f);
}

/* The mount point of the hierarchy of /proc/PID/cgroup's controllers
 * field (NULL when none is mounted). */
static const char *cg_mount_of(const char *ctrls)
{
	char want[128], first[96];
	int i;

	if (!ctrls[0]) {
		for (i = 0; i < ncg_mounts; i++)
			if (cg_mounts[i].v2)
				return cg_mounts[i].dir;
		return NULL;
	}
	snprintf(first, sizeof(first), "%s", ctrls);
	first[strcspn(first, ",")] = '\0';
	snprintf(want, sizeof(want), ",%s,", first);
	for (i = 0; i < ncg_mounts; i++)
		if (!cg_mounts[i].v2 && strstr(cg_mounts[i].opts, want))
			return cg_mounts[i].dir;
	return NULL;
}

/* Note the olivares-* cgroups pid is in. */
static void trace_cgroups(struct trace *t, pid_t pid)
{
	char path[64], buf[4096], ctrls[128], cg[2048], full[320];
	const char *mnt, *line;
	char *nl;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return;
	for (line = buf; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		ctrls[0] = cg[0] = '\0';
		if (sscanf(line, "%*[0-9]:%127[^:]:%2047[^\n]", ctrls, cg) != 2 &&
		    sscanf(line, "%*[0-9]::%2047[^\n]", cg) != 1)
			continue;
		if (!strstr(cg, "/olivares-"))
			continue;
		mnt = cg_mount_of(line[strcspn(line, ":") + 1] == ':' ? "" : ctrls);
		if (!mnt)
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%s%s", mnt, cg) < sizeof(full))
			add_str(&t->cgroups[0][0], sizeof(t->cgroups[0]), &t->ncgroups, 64, full,
			        strlen(full));
	}
}

/* Note pid's pid and mount namespaces that are not this process's. */
static void trace_ns(struct trace *t, pid_t pid)
{
	static const char *const kinds[] = {"pid", "mnt"};
	char path[64], mine[64], its[64];
	ssize_t a, b;
	size_t k;

	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[k]);
		a = readlink(path, mine, sizeof(mine) - 1);
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kinds[k]);
		b = readlink(path, its, sizeof(its) - 1);
		if (a <= 0 || b <= 0)
			continue;
		mine[a] = its[b] = '\0';
		if (strcmp(mine, its) != 0)
			add_str(&t->ns[0][0], sizeof(t->ns[0]), &t->nns, 16, its, (size_t)b);
	}
}

/* Note what a command line (NUL-separated, len bytes) names: the bundle
 * directory (--root=DIR/state, --bundle DIR/bundle), the container id (a
 * last argument olivares-<32 hex>), and which runsc command it is. */
static void trace_cmdline(struct trace *t, const char *args, size_t len)
{
	const char *a, *last = NULL, *end, *dir;
	size_t off, n0 = strlen(args);
	int runsc = n0 >= 6 && strcmp(args + n0 - 6, "/runsc") == 0;

	if (strcmp(args, "runsc-gofer") == 0)
		t->gofers++;
	if (strcmp(args, "runsc-sandbox") == 0)
		t->sandboxes++;
	for (off = 0; off < len; off += strlen(args + off) + 1) {
		a = args + off;
		dir = strncmp(a, "--root=", 7) == 0     ? a + 7
		      : strncmp(a, "--bundle=", 9) == 0 ? a + 9
		                                        : a;
		if (dir[0] == '/' && strstr(dir, "/olivares-gvisor.")) {
			end = strstr(dir, "/olivares-gvisor.") + strlen("/olivares-gvisor.");
			end += strcspn(end, "/");
			add_str(&t->dirs[0][0], sizeof(t->dirs[0]), &t->ndirs, 8, dir,
			        (size_t)(end - dir));
		}
		if (runsc && strcmp(a, "create") == 0)
			t->creates++;
		if (runsc && strcmp(a, "start") == 0)
			t->starts++;
		if (runsc && strcmp(a, "delete") == 0)
			t->deletes++;
		last = a;
	}
	if (last && strncmp(last, "olivares-", 9) == 0 && strlen(last) == 9 + 32)
		add_str(&t->ids[0][0], sizeof(t->ids[0]), &t->nids, 8, last, strlen(last));
}

/* Is pid, the jail's pid 1, asleep in a timed wait (the agent's
 * sleep probe: poll with no descriptor, or nanosleep)? x86-64 and
 * aarch64 numbers of poll, ppoll, nanosleep, clock_nanosleep. */
static int asleep(pid_t pid)
{
	char path[64], buf[256];
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%ld", &nr) != 1)
		return 0;
#if defined(__x86_64__)
	return nr == 7 || nr == 271 || nr == 35 || nr == 230;
#elif defined(__aarch64__)
	return nr == 73 || nr == 101 || nr == 115;
#else
	return 0;
#endif
}

/* Is pid in a pid namespace other than this process's? */
static int in_other_pidns(pid_t pid)
{
	char path[64], mine[64], its[64];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	a = readlink("/proc/self/ns/pid", mine, sizeof(mine) - 1);
	b = readlink(path, its, sizeof(its) - 1);
	if (a <= 0 || b <= 0)
		return 0;
	mine[a] = its[b] = '\0';
	return strcmp(mine, its) != 0;
}

/* Look at every descendant of this process now, runner being the run's
 * runner (its children's state goes to the stage events), and note what
 * they hold. */
static void trace_poll(struct trace *t, pid_t runner)
{
	static pid_t pid[32768], ppid[32768];
	static unsigned long long start[32768];
	static char mark[32768];
	char path[64], buf[8192], exe[4096], runner_exe[4096], state;
	struct dirent *e;
	size_t n = 0, i, j;
	int changed, k, found;
	ssize_t r;
	DIR *d = opendir("/proc");

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL && n < 32768) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid[n] = atoi(e->d_name);
		if (proc_stat(pid[n], &ppid[n], &state, &start[n]) != 0 || state == 'Z')
			continue;
		mark[n] = ppid[n] == getpid() && pid[n] == runner;
		n++;
	}
	closedir(d);
	do {
		changed = 0;
		for (i = 0; i < n; i++) {
			if (mark[i])
				continue;
			for (j = 0; j < n; j++)
				if (mark[j] && pid[j] == ppid[i]) {
					mark[i] = 1;
					changed = 1;
					break;
				}
		}
	} while (changed);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)runner);
	r = readlink(path, runner_exe, sizeof(runner_exe) - 1);
	runner_exe[r > 0 ? r : 0] = '\0';
	t->child_booting = 0;
	t->agent_alive = 0;
	t->agent_asleep = 0;
	for (i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		found = 0;
		for (k = 0; k < t->nprocs; k++)
			if (t->procs[k].pid == pid[i] && t->procs[k].start == start[i])
				found = 1;
		if (!found && t->nprocs < (int)(sizeof(t->procs) / sizeof(t->procs[0]))) {
			t->procs[t->nprocs].pid = pid[i];
			t->procs[t->nprocs].start = start[i];
			t->nprocs++;
		}
		trace_cgroups(t, pid[i]);
		trace_ns(t, pid[i]);
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid[i]);
		r = read_small(path, buf, sizeof(buf));
		if (r > 0)
			trace_cmdline(t, buf, (size_t)r);
		if (ppid[i] != runner || !in_other_pidns(pid[i]))
			continue;
		/* the jail's pid 1: the runner's image until it execs the
		 * agent (the guard and runsc's commands stay in this pid
		 * namespace) */
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid[i]);
		r = readlink(path, exe, sizeof(exe) - 1);
		if (r <= 0)
			continue;
		exe[r] = '\0';
		if (strcmp(exe, runner_exe) == 0) {
			t->child_booting = 1;
		} else {
			t->agent_alive = t->agent_seen = 1;
			t->agent_asleep |= asleep(pid[i]);
		}
	}
}

/* ---- what is left ------------------------------------------------------------- */

static char left_what[1024];

static void __attribute__((format(printf, 2, 3))) left_note(int *n, const char *fmt, ...)
{
	size_t used = strlen(left_what);
	va_list ap;

	(*n)++;
	if (used + 200 >= sizeof(left_what))
		return;
	va_start(ap, fmt);
	vsnprintf(left_what + used, sizeof(left_what) - used, fmt, ap);
	va_end(ap);
}

/* Does text (len bytes) name anything of t? */
static int names_run(const struct trace *t, const char *text, size_t len)
{
	int i;

	for (i = 0; i < t->ndirs; i++)
		if (memmem(text, len, t->dirs[i], strlen(t->dirs[i])))
			return 1;
	for (i = 0; i < t->nids; i++)
		if (memmem(text, len, t->ids[i], strlen(t->ids[i])))
			return 1;
	return 0;
}

/* The cgroup walk's run and count: a directory named a container id at
 * any depth below a hierarchy's root. */
static const struct trace *walk_trace;
static int walk_left;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	int i;

	(void)st;
	if (flag != FTW_D)
		return 0;
	for (i = 0; i < walk_trace->nids; i++)
		if (strcmp(path + ftw->base, walk_trace->ids[i]) == 0)
			left_note(&walk_left, "cgroup %s; ", path);
	return 0;
}

/* Count what is left of t's run (left_what says what, in part). */
static int leftovers(const struct trace *t)
{
	char path[600], buf[8192], line[4096], its[64];
	unsigned long long start;
	struct dirent *e;
	struct stat st;
	char state;
	pid_t pp;
	int n = 0, i, k;
	ssize_t r;
	FILE *f;
	DIR *d;

	left_what[0] = '\0';
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	/* the gateway's directory (and with it the run's CA certificate) */
	if (t->tmpdir && (d = opendir(t->tmpdir)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				left_note(&n, "%s/%s; ", t->tmpdir, e->d_name);
		closedir(d);
	}
	/* the processes it started */
	for (i = 0; i < t->nprocs; i++)
		if (proc_stat(t->procs[i].pid, &pp, &state, &start) == 0 &&
		    start == t->procs[i].start && state != 'Z')
			left_note(&n, "process %d; ", (int)t->procs[i].pid);
	/* anything on the host that names it, is in its cgroups or in its
	 * namespaces */
	d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		pid_t pid;
		int hit = 0;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = atoi(e->d_name);
		if (pid == getpid() || proc_stat(pid, &pp, &state, &start) != 0 || state == 'Z')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		r = read_small(path, buf, sizeof(buf));
		if (r > 0 && names_run(t, buf, (size_t)r))
			hit = 1;
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		r = read_small(path, buf, sizeof(buf));
		if (r > 0 && names_run(t, buf, (size_t)r))
			hit = 1;
		for (i = 0; r > 0 && i < t->ncgroups; i++) {
			const char *rel = NULL;

			for (k = 0; k < ncg_mounts; k++)
				if (strncmp(t->cgroups[i], cg_mounts[k].dir,
				            strlen(cg_mounts[k].dir)) == 0)
					rel = t->cgroups[i] + strlen(cg_mounts[k].dir);
			if (rel && memmem(buf, (size_t)r, rel, strlen(rel)))
				hit = 1;
		}
		for (i = 0; i < t->nns; i++) {
			snprintf(path, sizeof(path), "/proc/%d/ns/%.3s", (int)pid, t->ns[i]);
			r = readlink(path, its, sizeof(its) - 1);
			if (r > 0) {
				its[r] = '\0';
				if (strcmp(its, t->ns[i]) == 0)
					hit = 1;
			}
		}
		if (hit)
			left_note(&n, "process %d (on the host); ", (int)pid);
	}
	closedir(d);
	/* mounts: under its directory, naming its id, or of its namespaces */
	f = fopen("/proc/self/mountinfo", "re");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		int hit = names_run(t, line, strlen(line));

		for (i = 0; i < t->nns; i++)
			if (strstr(line, t->ns[i]))
				hit = 1;
		if (hit)
			left_note(&n, "mount %.150s; ", line);
	}
	fclose(f);
	/* cgroups: the olivares-* ones its processes were in, the container
	 * id's anywhere under every hierarchy */
	for (i = 0; i < t->ncgroups; i++)
		if (lstat(t->cgroups[i], &st) == 0)
			left_note(&n, "cgroup %s; ", t->cgroups[i]);
	walk_trace = t;
	walk_left = 0;
	for (k = 0; k < ncg_mounts && t->nids > 0; k++)
		nftw(cg_mounts[k].dir, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	n += walk_left;
	/* runsc state: its --root is under the directory; none elsewhere */
	for (i = 0; i < t->nids; i++) {
		snprintf(path, sizeof(path), "/run/runsc/%s", t->ids[i]);
		if (lstat(path, &st) == 0)
			left_note(&n, "runsc state %s; ", path);
		snprintf(path, sizeof(path), "/var/run/runsc/%s", t->ids[i]);
		if (lstat(path, &st) == 0)
			left_note(&n, "runsc state %s; ", path);
	}
	for (i = 0; i < t->ndirs; i++)
		if (lstat(t->dirs[i], &st) == 0)
			left_note(&n, "bundle directory %s; ", t->dirs[i]);
	return n;
}

/* ---- one killed run ------------------------------------------------------------ */

enum stage { BOOTING, MID_STEP, TEARING_DOWN };
static const char *const stage_names[] = {"booting", "mid-step", "tearing down"};

/* A run being watched: its runner and what it has said. */
struct watch {
	pid_t runner;
	int fd;
	int lines;   /* step lines read */
	int summary; /* its summary came: the run ended before the stage */
	int eof;
	char buf[65536];
	size_t len;
	long long line_ms; /* when the last step line came */
	struct trace t;
};

/* Read what the runner has written within ms; count its lines. */
static void watch_read(struct watch *w, int ms)
{
	struct pollfd p = {w->fd, POLLIN, 0};
	ssize_t r;
	char *nl;

	if (w->eof || poll(&p, 1, ms) <= 0)
		return;
	r = read(w->fd, w->buf + w->len, sizeof(w->buf) - 1 - w->len);
	if (r <= 0) {
		w->eof = 1;
		return;
	}
	w->len += (size_t)r;
	w->buf[w->len] = '\0';
	while ((nl = strchr(w->buf, '\n')) != NULL) {
		*nl = '\0';
		if (strstr(w->buf, "\"type\":\"step\"")) {
			w->lines++;
			w->line_ms = now_ms();
		} else if (strstr(w->buf, "\"type\":\"summary\"")) {
			w->summary = 1;
		}
		w->len -= (size_t)(nl + 1 - w->buf);
		memmove(w->buf, nl + 1, w->len + 1);
	}
	if (w->len + 1 >= sizeof(w->buf))
		w->len = 0;
}

/* Has the run reached the moment variant of stage (on backend) names? */
static int at_stage(const struct watch *w, const char *backend, enum stage stage, int variant)
{
	const struct trace *t = &w->t;
	int gv = strcmp(backend, "gvisor") == 0;

	switch (stage) {
	case BOOTING:
		if (w->lines)
			return 0;
		if (!gv)
			return t->child_booting;
		return variant % 3 == 0   ? t->creates > 0
		       : variant % 3 == 1 ? t->gofers > 0
		                          : t->starts > 0;
	case MID_STEP:
		/* step 1 answered at once, step 2 sleeps: the runner has sent
		 * it once step 1's line came; the agent is in it once it
		 * sleeps (namespaces: seen from outside; gvisor: its sentry is
		 * no host process of the agent's, so the line alone) */
		if (w->lines != 1)
			return 0;
		if (variant % 2 == 0 || gv)
			return 1;
		return t->agent_asleep;
	case TEARING_DOWN:
		/* both steps answered; the agent lingers at the end of its
		 * input, the runner waits its grace, then tears down */
		if (w->lines != 2)
			return 0;
		if (variant % 2 == 0)
			return 1;
		return gv ? t->deletes > 0 : t->agent_seen && !t->agent_alive;
	}
	return 0;
}

/* The spec of stage: booting and mid-step sleep in their second step,
 * tearing down lingers after its last. */
static json_t *stage_spec(enum stage stage)
{
	json_t *spec = spec_new(NULL, env_path("OLIVARES_HOSTILE_AGENT"));

	spec_step(spec, "a", stage == TEARING_DOWN ? "linger" : "fds");
	spec_step(spec, "b", stage == TEARING_DOWN ? "fds" : "sleep 5000");
	spec_limit(spec, "wall_ms", 60000);
	/* with a gateway: its process and its directory must go too */
	json_object_set_new(spec, "gateway", json_true());
	return spec;
}

/*
 * Start a run of spec on backend and SIGKILL its runner once at_stage()
 * says so; then wait up to LEFT_BOUND_MS for what it leaves to go.
 * Returns 1 when the stage was caught (and nothing was left: asserted),
 * 0 when the run got past it first (it was killed then anyway, and
 * nothing may be left either).
 */
static int kill_at(const char *backend, enum stage stage, int variant)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", backend, NULL};
	char tmpdir[] = "/tmp/olv-teardown-tmp-XXXXXX";
	char tmpenv[64];
	char *const env[] = {"PATH=/usr/bin:/bin", tmpenv, NULL};
	json_t *spec = stage_spec(stage);
	struct watch *w = calloc(1, sizeof(*w));
	long long until, killed_ms;
	int caught = 0, st, left;

	ck_assert_ptr_nonnull(w);
	/* the run's TMPDIR, where its gateway's directory is made */
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", tmpdir);
	w->t.tmpdir = tmpdir;
	cg_mounts_read();
	w->runner = spawn_runner_with(args, spec, env, NULL, NULL, &w->fd);
	json_decref(spec);
	until = now_ms() + STAGE_WAIT_MS;
	for (;;) {
		trace_poll(&w->t, w->runner);
		watch_read(w, 0);
		if (at_stage(w, backend, stage, variant)) {
			caught = 1;
			break;
		}
		if (w->summary || w->eof || now_ms() >= until)
			break;
		/* a stage that lasts milliseconds (the jail's build) is
		 * looked for without a pause */
		if (!(stage == BOOTING && strcmp(backend, "namespaces") == 0))
			watch_read(w, 2);
	}
	ck_assert_msg(now_ms() < until || caught, "%s: no %s stage within %d ms", backend,
	              stage_names[stage], STAGE_WAIT_MS);
	ck_assert_int_eq(kill(w->runner, SIGKILL), 0);
	killed_ms = now_ms();
	ck_assert_int_eq(waitpid(w->runner, &st, 0), w->runner);
	close(w->fd);
	/* what the runner had started until its death, learnt from the
	 * host: its runsc commands name the directory */
	until = now_ms() + LEFT_BOUND_MS;
	while ((left = leftovers(&w->t)) != 0 && now_ms() < until)
		sleep_ms(50);
	ck_assert_msg(left == 0,
	              "%s killed %s (variant %d, %d step lines): %d left %lld ms after the kill "
	              "(bound %d ms): %s",
	              backend, stage_names[stage], variant, w->lines, left, now_ms() - killed_ms,
	              LEFT_BOUND_MS, left_what);
	ck_assert_msg(rmdir(tmpdir) == 0, "%s killed %s: the gateway's directory is left in %s",
	              backend, stage_names[stage], tmpdir);
	if (strcmp(backend, "gvisor") == 0)
		ck_assert_msg(w->t.nids == 1 && w->t.ndirs == 1,
		              "gvisor run killed %s: %d container ids and %d directories seen",
		              stage_names[stage], w->t.nids, w->t.ndirs);
	if (caught)
		fprintf(stderr,
		        "test_teardown: %s killed %s (variant %d): nothing left after %lld ms\n",
		        backend, stage_names[stage], variant, now_ms() - killed_ms);
	free(w);
	return caught;
}

static int repeats(void)
{
	const char *v = getenv("OLIVARES_TEST_TEARDOWN_REPEATS");
	int n = v ? atoi(v) : 3;

	return n > 0 ? n : 1;
}

/* Kill a run of backend at stage repeats() times, each variant of the
 * stage in turn; a try that got past the stage is one more kill that must
 * leave nothing, and does not count. */
static void kill_every_time(const char *backend, enum stage stage)
{
	int want = repeats(), hits = 0, tries = 0;

	while (hits < want && tries < want * TRIES_PER_HIT) {
		hits += kill_at(backend, stage, hits);
		tries++;
	}
	ck_assert_msg(hits == want, "%s: the %s stage was caught %d times of %d in %d tries",
	              backend, stage_names[stage], hits, want, tries);
}

static int gvisor_skipped(void)
{
	if (gvisor_ok)
		return 0;
	fprintf(stderr, "test_teardown: gvisor unavailable here (%s): not checked\n", gvisor_why);
	return 1;
}

START_TEST(test_gvisor_killed_booting)
{
	if (!gvisor_skipped())
		kill_every_time("gvisor", BOOTING);
}
END_TEST

START_TEST(test_gvisor_killed_mid_step)
{
	if (!gvisor_skipped())
		kill_every_time("gvisor", MID_STEP);
}
END_TEST

START_TEST(test_gvisor_killed_tearing_down)
{
	if (!gvisor_skipped())
		kill_every_time("gvisor", TEARING_DOWN);
}
END_TEST

START_TEST(test_namespaces_killed_booting)
{
	kill_every_time("namespaces", BOOTING);
}
END_TEST

START_TEST(test_namespaces_killed_mid_step)
{
	kill_every_time("namespaces", MID_STEP);
}
END_TEST

START_TEST(test_namespaces_killed_tearing_down)
{
	kill_every_time("namespaces", TEARING_DOWN);
}
END_TEST

static Suite *teardown_suite(void)
{
	const TTest *const gvisor[] = {
	    test_gvisor_killed_booting,
	    test_gvisor_killed_mid_step,
	    test_gvisor_killed_tearing_down,
	    NULL,
	};
	const TTest *const namespaces[] = {
	    test_namespaces_killed_booting,
	    test_namespaces_killed_mid_step,
	    test_namespaces_killed_tearing_down,
	    NULL,
	};
	Suite *s = suite_create("teardown");

	tcase_add_unchecked_fixture(suite_add_tests(s, "gvisor", 600, gvisor), hogs_start,
	                            hogs_stop);
	tcase_add_unchecked_fixture(suite_add_tests(s, "namespaces", 600, namespaces), hogs_start,
	                            hogs_stop);
	return s;
}

static void probe_gvisor(void)
{
	gvisor_ok = runner_preflight_ok("gvisor", gvisor_why, sizeof(gvisor_why));
}

int main(void)
{
	const char *req = getenv("OLIVARES_REQUIRE_GVISOR");

	signal(SIGPIPE, SIG_IGN);
	probe_gvisor();
	if (!gvisor_ok && req && strcmp(req, "1") == 0) {
		fprintf(stderr,
		        "test_teardown: gvisor unavailable (%s); OLIVARES_REQUIRE_GVISOR=1: "
		        "failing\n",
		        gvisor_why);
		return EXIT_FAILURE;
	}
	return suite_main(teardown_suite(), CK_NORMAL);
}
