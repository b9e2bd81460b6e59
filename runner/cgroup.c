/*
 * A run's cgroup (runner/cgroup.h): where the hierarchies are, making and
 * removing a run's cgroup, moving the runner in and out around the jail's
 * clone, and reading the counters that say whether a whole-run bound was
 * reached.
 *
 * The hierarchies come from /proc/self/mountinfo (a v1 "cgroup" mount
 * whose options name the controller, else the "cgroup2" mount), the
 * runner's own place in them from /proc/self/cgroup; nothing assumes
 * /sys/fs/cgroup's layout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/cgroup.h"

/* A hierarchy as mounted: its version, mount point, and the cgroup its
 * mount point shows (the mountinfo "root": "/" but in a container that
 * was given a sub-tree). */
struct hier {
	int version;
	char mnt[RUNNER_CGROUP_PATH_BYTES];
	char root[RUNNER_CGROUP_PATH_BYTES];
};

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown error";
}

/* Is tok one of the comma-separated words of list? */
static int has_word(const char *list, const char *tok, char sep)
{
	size_t n = strlen(tok);
	const char *p = list;

	while (p && *p) {
		if (strncmp(p, tok, n) == 0 && (p[n] == sep || p[n] == '\0' || p[n] == '\n'))
			return 1;
		p = strchr(p, sep);
		if (p)
			p++;
	}
	return 0;
}

/* Read the small file path into buf (NUL-terminated). Returns its length,
 * -1 with errno. */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	do
		r = read(fd, buf, n - 1);
	while (r < 0 && errno == EINTR);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

/* Write text to dir/file. Returns 0, -1 with errno. */
static int write_at(const char *dir, const char *file, const char *text)
{
	char path[RUNNER_CGROUP_PATH_BYTES + 64];
	size_t len = strlen(text);
	ssize_t w;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		w = write(fd, text, len);
	while (w < 0 && errno == EINTR);
	e = errno;
	close(fd);
	errno = e;
	if (w >= 0 && (size_t)w != len)
		errno = EIO;
	return w == (ssize_t)len ? 0 : -1;
}

/* The value of "key N" in the flat-keyed file dir/file into *v. Returns 0,
 * -1 when the file or the key is missing. */
static int keyed_value(const char *dir, const char *file, const char *key, long long *v)
{
	char path[RUNNER_CGROUP_PATH_BYTES + 64], buf[4096];
	size_t n = strlen(key);
	const char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == ' ')
			return sscanf(p + n + 1, "%lld", v) == 1 ? 0 : -1;
	return -1;
}

/* The number in dir/file into *v ("max" is -1). Returns 0 or -1. */
static int number_value(const char *dir, const char *file, long long *v)
{
	char path[RUNNER_CGROUP_PATH_BYTES + 64], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	if (strncmp(buf, "max", 3) == 0) {
		*v = -1;
		return 0;
	}
	return sscanf(buf, "%lld", v) == 1 ? 0 : -1;
}

/*
 * The hierarchy that holds controller ("memory", "cpuacct"): a v1 mount
 * that has it, else the v2 mount when it does (v2 needs no controller for
 * the CPU time: cpu.stat's usage_usec is always there). Returns 0 with *h,
 * -1 when there is none.
 */
static int find_hier(const char *controller, struct hier *h)
{
	char line[4096], fstype[64], super[1024], mnt[RUNNER_CGROUP_PATH_BYTES],
	    root[RUNNER_CGROUP_PATH_BYTES], path[RUNNER_CGROUP_PATH_BYTES + 32], ctl[1024];
	const char *dash;
	struct hier v2;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	memset(&v2, 0, sizeof(v2));
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype source super */
		dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		if (strcmp(fstype, "cgroup") == 0 && has_word(super, controller, ',')) {
			h->version = 1;
			found = 1;
		} else if (strcmp(fstype, "cgroup2") == 0 && !v2.version) {
			snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
			if (strcmp(controller, "cpuacct") == 0 ||
			    (read_small(path, ctl, sizeof(ctl)) >= 0 &&
			     has_word(ctl, controller, ' '))) {
				v2.version = 2;
				snprintf(v2.mnt, sizeof(v2.mnt), "%s", mnt);
				snprintf(v2.root, sizeof(v2.root), "%s", root);
			}
			continue;
		} else {
			continue;
		}
		snprintf(h->mnt, sizeof(h->mnt), "%s", mnt);
		snprintf(h->root, sizeof(h->root), "%s", root);
	}
	fclose(f);
	if (!found && v2.version) {
		*h = v2;
		found = 1;
	}
	return found ? 0 : -1;
}

/* The directory of pid's cgroup in hierarchy h into *d, from
 * /proc/PID/cgroup ("0::/path" on v2, "N:memory:/path" on v1). Returns 0,
 * -1 when it is not there or not under the mount's root. */
static int cgroup_dir_of(pid_t pid, const struct hier *h, const char *controller,
                         struct runner_cgroup_dir *d)
{
	char path[64], line[RUNNER_CGROUP_PATH_BYTES + 256];
	char *ctl, *cg;
	const char *rel;
	size_t rl = strlen(h->root);
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctl = strchr(line, ':');
		cg = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!cg)
			continue;
		ctl++;
		/* the controllers field alone, for has_word() */
		*cg = '\0';
		cg++;
		if (h->version == 2 ? (strncmp(line, "0:", 2) != 0 || ctl[0] != '\0')
		                    : !has_word(ctl, controller, ','))
			continue;
		/* the path below the mount's root ("/" shows all of it) */
		if (strcmp(h->root, "/") == 0)
			rel = cg;
		else if (strncmp(cg, h->root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
			rel = cg + rl;
		else
			continue;
		d->version = h->version;
		if ((size_t)snprintf(d->path, sizeof(d->path), "%s%s", h->mnt,
		                     strcmp(rel, "/") == 0 ? "" : rel) < sizeof(d->path))
			found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Both hierarchies, or -1 with *err naming the one that is missing. */
static int find_both(struct hier *mem, struct hier *cpu, struct runner_error *err)
{
	if (find_hier("memory", mem) != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "no memory cgroup controller mounted (v1 or v2): the "
		                        "whole-run memory bound needs one");
	if (find_hier("cpuacct", cpu) != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "no CPU accounting cgroup mounted (v1 cpuacct or v2): the "
		                        "whole-run CPU budget needs one");
	return 0;
}

int runner_cgroup_preflight(int trial, struct runner_error *err)
{
	struct runner_limits l;
	struct runner_cgroup cg;
	struct hier mem, cpu;
	struct runner_error left;

	if (find_both(&mem, &cpu, err) != 0)
		return -1;
	if (!trial)
		return 0;
	memset(&l, 0, sizeof(l));
	l.memory_mb = MODEL_RUN_MEMORY_MB_DEFAULT;
	l.cpu_seconds = MODEL_RUN_CPU_SECONDS_DEFAULT;
	if (runner_cgroup_make(&l, &cg, err) != 0)
		return -1;
	if (runner_cgroup_remove(&cg, runner_now_ms() + RUNNER_CGROUP_RMDIR_MS, &left) != 0)
		return runner_error_set(err, RUNNER_E_MISSING, "trial cgroup not removed: %s",
		                        left.message);
	return 0;
}

/* Remove the run cgroups under base that a runner killed before its
 * teardown left (the jail died with it, through its guard, but nobody
 * removed the directory): named olivares-run-*, empty (no process in
 * cgroup.procs) and made more than RUNNER_CGROUP_STALE_S ago; a run's own
 * cgroup holds its jail within milliseconds of being made and is removed
 * as soon as the jail is gone, so no live run's is ever one of them. Best
 * effort: what cannot be removed stays for the next run to try. */
static void sweep_stale(const char *base)
{
	char path[RUNNER_CGROUP_PATH_BYTES + 64], procs[16];
	struct dirent *e;
	struct stat st;
	time_t now = time(NULL);
	DIR *d = opendir(base);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "olivares-run-", 13) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%.100s", base, e->d_name);
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
		    now - st.st_ctime < RUNNER_CGROUP_STALE_S)
			continue;
		snprintf(path, sizeof(path), "%s/%.100s/cgroup.procs", base, e->d_name);
		if (read_small(path, procs, sizeof(procs)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%.100s", base, e->d_name);
		rmdir(path);
	}
	closedir(d);
}

/* Make dir d->path (the run's cgroup) under base (a directory of
 * hierarchy h) for controller; on v2 the memory controller must be on in
 * base's subtree. Returns 0, -1 with errno. */
static int make_under(const char *base, const char *name, const struct hier *h,
                      const char *controller, struct runner_cgroup_dir *d)
{
	char ctl[1024], path[RUNNER_CGROUP_PATH_BYTES + 64];

	if ((size_t)snprintf(d->path, sizeof(d->path), "%s/%s", base, name) >= sizeof(d->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	d->version = h->version;
	if (h->version == 2 && strcmp(controller, "memory") == 0) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
		if (read_small(path, ctl, sizeof(ctl)) < 0)
			return -1;
		if (!has_word(ctl, "memory", ' ') &&
		    write_at(base, "cgroup.subtree_control", "+memory") != 0)
			return -1;
	}
	if (mkdir(d->path, 0755) != 0)
		return -1;
	sweep_stale(base);
	return 0;
}

/* Make the run's directory in hierarchy h: at its root, else (the root
 * refused to this runner) where a host may have delegated a sub-tree to
 * it: under its own cgroup on v1; on v2 beside it, under its parent (a
 * v2 cgroup that holds processes can give no controller to a child, so a
 * delegated runner lives in a leaf of the delegated cgroup). *self gets
 * the runner's own cgroup. */
static int make_dir(const struct hier *h, const char *controller, const char *name,
                    struct runner_cgroup_dir *d, struct runner_cgroup_dir *self,
                    struct runner_error *err)
{
	char deleg[RUNNER_CGROUP_PATH_BYTES];
	char *slash;
	int e;

	if (cgroup_dir_of(getpid(), h, controller, self) != 0)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "the runner's own %s cgroup is not under %s", controller,
		                        h->mnt);
	if (make_under(h->mnt, name, h, controller, d) == 0)
		return 0;
	e = errno;
	snprintf(deleg, sizeof(deleg), "%s", self->path);
	slash = strrchr(deleg, '/');
	if (h->version == 2 && slash)
		*slash = '\0';
	if ((e == EACCES || e == EPERM || e == EROFS) && strlen(deleg) > strlen(h->mnt) &&
	    make_under(deleg, name, h, controller, d) == 0)
		return 0;
	return runner_error_set(err, RUNNER_E_MISSING,
	                        "cannot create the run's cgroup under %.200s: %s (the whole-run "
	                        "memory and CPU bounds need a cgroup; the runner runs as uid %d)",
	                        h->mnt, ename(e), (int)geteuid());
}

/* Set the memory limit of d to bytes (swap included where accounted). */
static int set_memory(const struct runner_cgroup_dir *d, long long bytes, struct runner_error *err)
{
	char v[32], path[RUNNER_CGROUP_PATH_BYTES + 64];

	snprintf(v, sizeof(v), "%lld", bytes);
	if (d->version == 1) {
		if (write_at(d->path, "memory.limit_in_bytes", v) != 0)
			return runner_error_set(err, RUNNER_E_SETUP,
			                        "cannot set memory.limit_in_bytes: %s",
			                        ename(errno));
		/* memory + swap: absent when the host does not account swap */
		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", d->path);
		if (access(path, F_OK) == 0 &&
		    write_at(d->path, "memory.memsw.limit_in_bytes", v) != 0)
			return runner_error_set(err, RUNNER_E_SETUP,
			                        "cannot set memory.memsw.limit_in_bytes: %s",
			                        ename(errno));
		return 0;
	}
	if (write_at(d->path, "memory.max", v) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot set memory.max: %s",
		                        ename(errno));
	snprintf(path, sizeof(path), "%s/memory.swap.max", d->path);
	if (access(path, F_OK) == 0 && write_at(d->path, "memory.swap.max", "0") != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot set memory.swap.max: %s",
		                        ename(errno));
	/* The kernel ends every process of the run at once when one must go. */
	snprintf(path, sizeof(path), "%s/memory.oom.group", d->path);
	if (access(path, F_OK) == 0 && write_at(d->path, "memory.oom.group", "1") != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot set memory.oom.group: %s",
		                        ename(errno));
	return 0;
}

static void cg_init(const struct runner_limits *limits, struct runner_cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->memory_mb = limits->memory_mb;
	cg->cpu_seconds = limits->cpu_seconds;
	cg->base_of = "";
	cg->guard = -1;
	cg->lifeline = -1;
}

/* ---- the guard: a run's cgroup goes with its runner ----------------------
 * The run's cgroup is made before the jail and removed after it. A runner
 * killed in between (SIGKILL, the worker's kill of its process group, the
 * out-of-memory killer) leaves the jail to the jail's own guard, which
 * kills pid 1, but nothing would remove the emptied cgroup. So the runner
 * forks this guard once the cgroup is made: in a process group of its
 * own (a kill of the runner's group leaves it standing), holding only the
 * read end of a lifeline whose write end only the runner holds. End of
 * file on it means the runner is gone or done: the guard then kills any
 * process still in the cgroup (from the host's pid namespace, which the
 * jail's processes cannot ignore) and removes its directories, retrying
 * while the last processes leave, for up to RUNNER_CGROUP_GUARD_MS. After
 * a teardown that removed them itself, it finds them gone and exits. */

/* SIGKILL every process listed in dir's cgroup.procs; returns how many. */
static int kill_members(const struct runner_cgroup_dir *d)
{
	char path[RUNNER_CGROUP_PATH_BYTES + 16];
	FILE *f;
	long pid;
	int n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", d->path);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

/* 1 when d is gone (or was never made), 0 while it stays. */
static int dir_gone(const struct runner_cgroup_dir *d)
{
	struct stat st;

	if (!d->path[0])
		return 1;
	if (rmdir(d->path) == 0)
		return 1;
	return lstat(d->path, &st) != 0 && errno == ENOENT;
}

static void __attribute__((noreturn)) guard_main(const struct runner_cgroup *cg, int lifeline_r)
{
	struct pollfd w = {.fd = lifeline_r, .events = POLLIN};
	struct timespec ts = {0, 0};
	long long deadline;
	long pause_ms = 5;
	int two = cg->cpu.path[0] && strcmp(cg->cpu.path, cg->mem.path) != 0;
	char byte;

	/* nothing but the lifeline */
	if (lifeline_r > 0)
		syscall(SYS_close_range, 0, lifeline_r - 1, 0);
	syscall(SYS_close_range, lifeline_r + 1, ~0U, 0);
	for (;;) {
		if (poll(&w, 1, -1) < 0 && errno == EINTR)
			continue;
		if (read(lifeline_r, &byte, 1) <= 0)
			break; /* end of file: the runner is gone or done */
	}
	deadline = runner_now_ms() + RUNNER_CGROUP_GUARD_MS;
	for (;;) {
		kill_members(&cg->mem);
		if (two)
			kill_members(&cg->cpu);
		if ((!two || dir_gone(&cg->cpu)) && dir_gone(&cg->mem))
			_exit(0);
		if (runner_now_ms() >= deadline)
			_exit(1);
		ts.tv_nsec = pause_ms * 1000000L;
		nanosleep(&ts, NULL);
		if (pause_ms < 200)
			pause_ms *= 2;
	}
}

/* Start cg's guard; 0, or -1 with errno (no guard then). */
static int guard_start(struct runner_cgroup *cg)
{
	int lp[2];
	pid_t g;
	int e;

	if (pipe2(lp, O_CLOEXEC) != 0)
		return -1;
	g = fork();
	if (g == 0) {
		setpgid(0, 0);
		guard_main(cg, lp[0]);
	}
	e = errno;
	close(lp[0]);
	if (g < 0) {
		close(lp[1]);
		errno = e;
		return -1;
	}
	/* out of the runner's process group now, not whenever it runs */
	if (setpgid(g, g) != 0 && errno != EACCES) {
		e = errno;
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
		close(lp[1]);
		errno = e;
		return -1;
	}
	cg->guard = g;
	cg->lifeline = lp[1];
	return 0;
}

/* Stop cg's guard: its lifeline closed; reaped when the cgroup is gone
 * (it finds nothing to do), left to go on otherwise. */
static void guard_stop(struct runner_cgroup *cg, int gone)
{
	pid_t p;

	if (cg->lifeline >= 0) {
		close(cg->lifeline);
		cg->lifeline = -1;
	}
	if (cg->guard <= 0 || !gone)
		return;
	do
		p = waitpid(cg->guard, NULL, 0);
	while (p < 0 && errno == EINTR);
	cg->guard = -1;
}

int runner_cgroup_make(const struct runner_limits *limits, struct runner_cgroup *cg,
                       struct runner_error *err)
{
	struct hier mem, cpu;
	unsigned char rnd[16];
	char name[64];
	long long got;
	struct runner_error left;
	size_t i;

	cg_init(limits, cg);
	if (find_both(&mem, &cpu, err) != 0)
		return -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "no random bytes for the cgroup's name");
	memcpy(name, "olivares-run-", 13);
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(name + 13 + 2 * i, 3, "%02x", rnd[i]);
	if (make_dir(&mem, "memory", name, &cg->mem, &cg->self_mem, err) != 0)
		return -1;
	cg->made = 1;
	if (mem.version == 2 && cpu.version == 2) {
		cg->cpu = cg->mem;
		cg->self_cpu = cg->self_mem;
	} else if (make_dir(&cpu, "cpuacct", name, &cg->cpu, &cg->self_cpu, err) != 0) {
		goto fail;
	}
	if (guard_start(cg) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "cannot start the cgroup's guard: %s",
		                 ename(errno));
		goto fail;
	}
	if (set_memory(&cg->mem, (long long)limits->memory_mb << 20, err) != 0)
		goto fail;
	if (runner_cgroup_memory_limit(cg, &got, err) != 0)
		goto fail;
	if (got != (long long)limits->memory_mb << 20) {
		runner_error_set(err, RUNNER_E_SETUP,
		                 "the run's cgroup holds a memory limit of %lld bytes, not %ld MiB",
		                 got, limits->memory_mb);
		goto fail;
	}
	return 0;
fail:
	runner_cgroup_remove(cg, runner_now_ms() + RUNNER_CGROUP_RMDIR_MS, &left);
	return -1;
}

int runner_cgroup_of(pid_t pid, const struct runner_limits *limits, long base_mb,
                     const char *base_of, struct runner_cgroup *cg, struct runner_error *err)
{
	struct hier mem, cpu;

	cg_init(limits, cg);
	cg->base_mb = base_mb;
	cg->base_of = base_of ? base_of : "";
	if (find_both(&mem, &cpu, err) != 0)
		return -1;
	if (cgroup_dir_of(pid, &mem, "memory", &cg->mem) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "the memory cgroup of process %d cannot be read", (int)pid);
	if (cgroup_dir_of(pid, &cpu, "cpuacct", &cg->cpu) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "the CPU accounting cgroup of process %d cannot be read",
		                        (int)pid);
	return 0;
}

int runner_cgroup_memory_limit(const struct runner_cgroup *cg, long long *bytes,
                               struct runner_error *err)
{
	const char *file = cg->mem.version == 1 ? "memory.limit_in_bytes" : "memory.max";

	if (number_value(cg->mem.path, file, bytes) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "cannot read %.200s/%s",
		                        cg->mem.path, file);
	return 0;
}

int runner_cgroup_move_self(struct runner_cgroup *cg, int in, struct runner_error *err)
{
	const struct runner_cgroup_dir *m = in ? &cg->mem : &cg->self_mem;
	const struct runner_cgroup_dir *c = in ? &cg->cpu : &cg->self_cpu;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (write_at(m->path, "cgroup.procs", pid) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot move the runner %s %.200s: %s",
		                        in ? "into" : "back into", m->path, ename(errno));
	if (strcmp(c->path, m->path) != 0 && write_at(c->path, "cgroup.procs", pid) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "cannot move the runner %s %.200s: %s",
		                        in ? "into" : "back into", c->path, ename(errno));
	return 0;
}

/* The cgroup's CPU time, in microseconds. Returns 0 or -1. */
static int cpu_usec(const struct runner_cgroup *cg, long long *us)
{
	long long ns;

	if (cg->cpu.version == 2)
		return keyed_value(cg->cpu.path, "cpu.stat", "usage_usec", us);
	if (number_value(cg->cpu.path, "cpuacct.usage", &ns) != 0)
		return -1;
	*us = ns / 1000;
	return 0;
}

/* Out-of-memory kills in the cgroup so far. v1 kernels before 4.13 have
 * no oom_kill line: under_oom (the cgroup at its limit with nothing left
 * to reclaim) counts then. Returns 0 or -1. */
static int oom_kills(const struct runner_cgroup *cg, long long *n)
{
	if (cg->mem.version == 2)
		return keyed_value(cg->mem.path, "memory.events", "oom_kill", n);
	if (keyed_value(cg->mem.path, "memory.oom_control", "oom_kill", n) == 0)
		return 0;
	return keyed_value(cg->mem.path, "memory.oom_control", "under_oom", n);
}

int runner_cgroup_check(struct runner_cgroup *cg, struct runner_error *why)
{
	char bound[160];
	long long n = 0, us = 0;

	if (cg->base_mb > 0)
		snprintf(bound, sizeof(bound),
		         "%ld MiB for the whole run, with %ld MiB more for %s", cg->memory_mb,
		         cg->base_mb, cg->base_of);
	else
		snprintf(bound, sizeof(bound), "%ld MiB for the whole run", cg->memory_mb);
	if (oom_kills(cg, &n) != 0)
		return runner_error_set(
		    why, RUNNER_E_AGENT,
		    "memory_mb limit (%s) not verifiable: the run's memory cgroup "
		    "%.200s cannot be read",
		    bound, cg->mem.path);
	if (n > 0)
		return runner_error_set(why, RUNNER_E_AGENT,
		                        "memory_mb limit (%s) reached: the kernel's out-of-memory "
		                        "killer ended a process of the run",
		                        bound);
	if (cpu_usec(cg, &us) != 0)
		return runner_error_set(
		    why, RUNNER_E_AGENT,
		    "cpu_seconds limit (%ld s of CPU time for the whole run) not "
		    "verifiable: the run's CPU accounting cgroup %.200s cannot be "
		    "read",
		    cg->cpu_seconds, cg->cpu.path);
	if (us >= cg->cpu_seconds * 1000000LL)
		return runner_error_set(
		    why, RUNNER_E_AGENT,
		    "cpu_seconds limit (%ld s of CPU time for the whole run%s%s%s) "
		    "reached: %lld.%02lld s used",
		    cg->cpu_seconds, cg->base_of[0] ? ", " : "", cg->base_of,
		    cg->base_of[0] ? " included" : "", us / 1000000, (us % 1000000) / 10000);
	return 0;
}

int runner_cgroup_poll(void *ctx, int force, struct runner_error *why)
{
	struct runner_cgroup *cg = ctx;
	long long now = runner_now_ms();

	if (!force && now < cg->next_check_ms)
		return 0;
	cg->next_check_ms = now + RUNNER_CGROUP_POLL_MS;
	return runner_cgroup_check(cg, why);
}

/* rmdir d, retried while it is busy (its last tasks leaving), until
 * deadline; then checked gone. */
static int remove_dir(const struct runner_cgroup_dir *d, long long deadline_ms,
                      struct runner_error *err)
{
	struct timespec ts = {0, 0};
	long pause_us = 50;
	struct stat st;

	/* The last task leaves a cgroup a moment after it is reaped: the first
	 * pauses are short (a fixed 5 ms cost every run about that much). */
	while (rmdir(d->path) != 0 && errno == EBUSY && runner_now_ms() < deadline_ms) {
		ts.tv_nsec = pause_us * 1000L;
		nanosleep(&ts, NULL);
		if (pause_us < 5000)
			pause_us *= 2;
	}
	if (lstat(d->path, &st) == 0 || errno != ENOENT)
		return runner_error_set(err, RUNNER_E_LEFT_BEHIND, "cgroup %.200s left behind",
		                        d->path);
	return 0;
}

int runner_cgroup_remove(struct runner_cgroup *cg, long long deadline_ms, struct runner_error *err)
{
	int rc = 0;

	if (!cg->made)
		return 0;
	if (cg->cpu.path[0] && strcmp(cg->cpu.path, cg->mem.path) != 0 &&
	    remove_dir(&cg->cpu, deadline_ms, err) != 0)
		rc = -1;
	if (cg->mem.path[0] && remove_dir(&cg->mem, deadline_ms, rc ? NULL : err) != 0)
		rc = -1;
	if (rc == 0)
		cg->made = 0;
	guard_stop(cg, rc == 0);
	return rc;
}
