/*
 * A run's cgroup (runner/cgroup.c), driven directly: made with the run's
 * memory limit, joined by a process forked from inside it, its counters
 * read against memory_mb and cpu_seconds, found again from a member's
 * /proc/PID/cgroup, removed and checked gone. As root (the runner of the
 * OS-level backends); otherwise, making one fails closed with the reason
 * a run gives.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/cgroup.h"
#include "tests/unit/unit.h"

static struct runner_limits limits(long memory_mb, long cpu_seconds)
{
	struct runner_limits l;

	memset(&l, 0, sizeof(l));
	l.memory_mb = memory_mb;
	l.cpu_seconds = cpu_seconds;
	return l;
}

/* Fork a child inside cg (the parent moves in for the fork and back out)
 * that runs fn; returns its pid. */
static pid_t fork_inside(struct runner_cgroup *cg, void (*fn)(void))
{
	struct runner_error err;
	pid_t pid;

	ck_assert_msg(runner_cgroup_move_self(cg, 1, &err) == 0, "%s", err.message);
	pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	ck_assert_msg(runner_cgroup_move_self(cg, 0, &err) == 0, "%s", err.message);
	ck_assert_int_gt(pid, 0);
	return pid;
}

static void spin(void)
{
	volatile unsigned long x = 0;

	for (;;)
		x++;
}

/* 64 MiB touched a page at a time, in a cgroup of 32 */
static void balloon(void)
{
	size_t len = 64u << 20, i;
	char *p = malloc(len);

	for (i = 0; p && i < len; i += 4096)
		p[i] = 1;
	for (;;)
		pause();
}

static int gone(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 && errno == ENOENT;
}

START_TEST(test_made_bounded_removed)
{
	struct runner_limits l = limits(32, 1);
	struct runner_cgroup cg, found;
	struct runner_error err;
	char mem[RUNNER_CGROUP_PATH_BYTES];
	long long bytes = 0, until;
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		ck_assert_int_eq(runner_cgroup_make(&l, &cg, &err), -1);
		ck_assert_msg(strstr(err.message, "cannot create the run's cgroup under ") != NULL,
		              "%s", err.message);
		fprintf(stderr, "test_cgroup: not root: only the fail-closed case checked\n");
		return;
	}
	ck_assert_msg(runner_cgroup_make(&l, &cg, &err) == 0, "%s", err.message);
	ck_assert(cg.made);
	ck_assert_ptr_nonnull(strstr(cg.mem.path, "/olivares-run-"));
	ck_assert_int_eq(runner_cgroup_memory_limit(&cg, &bytes, &err), 0);
	ck_assert_int_eq(bytes, 32LL << 20);
	/* nothing ran in it yet: no bound reached */
	ck_assert_msg(runner_cgroup_check(&cg, &err) == 0, "%s", err.message);

	/* a spin forked from inside is found there, and spends the budget */
	pid = fork_inside(&cg, spin);
	ck_assert_msg(runner_cgroup_of(pid, &l, 0, NULL, &found, &err) == 0, "%s", err.message);
	ck_assert_str_eq(found.mem.path, cg.mem.path);
	ck_assert_str_eq(found.cpu.path, cg.cpu.path);
	ck_assert(!found.made);
	/* generous: 1 s of CPU on a loaded machine */
	for (until = runner_now_ms() + 60000; runner_now_ms() < until; usleep(50000))
		if (runner_cgroup_check(&cg, &err) != 0)
			break;
	ck_assert_msg(
	    strncmp(err.message,
	            "cpu_seconds limit (1 s of CPU time for the whole run) reached: ", 62) == 0,
	    "%s", err.message);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);

	/* a balloon over memory_mb is killed by the kernel, and the cgroup
	 * says so (the CPU budget is spent already: memory is read first) */
	pid = fork_inside(&cg, balloon);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
	ck_assert_int_eq(runner_cgroup_check(&cg, &err), -1);
	ck_assert_str_eq(err.message, "memory_mb limit (32 MiB for the whole run) reached: the "
	                              "kernel's out-of-memory killer ended a process of the run");

	snprintf(mem, sizeof(mem), "%s", cg.mem.path);
	ck_assert_msg(runner_cgroup_remove(&cg, runner_now_ms() + 5000, &err) == 0, "%s",
	              err.message);
	ck_assert(!cg.made);
	ck_assert_msg(gone(mem), "%s left", mem);
	ck_assert_msg(gone(cg.cpu.path), "%s left", cg.cpu.path);
}
END_TEST

/* The runner's own cgroup is found, and is not one of a run. */
START_TEST(test_own_cgroup_found)
{
	struct runner_limits l = limits(64, 5);
	struct runner_cgroup cg;
	struct runner_error err;

	ck_assert_msg(runner_cgroup_preflight(0, &err) == 0, "%s", err.message);
	ck_assert_msg(runner_cgroup_of(getpid(), &l, 256, "x", &cg, &err) == 0, "%s", err.message);
	ck_assert_int_ge(cg.mem.version, 1);
	ck_assert_int_le(cg.mem.version, 2);
	ck_assert_ptr_null(strstr(cg.mem.path, "/olivares-run-"));
	ck_assert_msg(access(cg.mem.path, F_OK) == 0, "%s", cg.mem.path);
	ck_assert_msg(access(cg.cpu.path, F_OK) == 0, "%s", cg.cpu.path);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const tests[] = {test_made_bounded_removed, test_own_cgroup_found, NULL};
	Suite *s = suite_create("cgroup");

	tcase_set_timeout(unit_tcase(s, "cgroup", tests), 90);
	return s;
}
