/*
 * The namespaces backend's whole-run bounds (runner/cgroup.c): memory_mb
 * and cpu_seconds over all of a run's processes, and the run's cgroup
 * made and removed. Part of the test_namespaces program (its helpers are
 * tests/unit/test_namespaces.h).
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/runner_harness.h"
#include "tests/unit/test_namespaces.h"

/* ---- whole-run bounds: memory_mb and cpu_seconds over all processes ------
 * The greedy agent (tests/fixtures/agents/greedy.c) spreads its load over
 * processes that each stay inside the per-process limits: only the run's
 * cgroup (runner/cgroup.h) stops them together. */

static const char *greedy(void)
{
	return env_path("OLIVARES_GREEDY_AGENT");
}

/* Run the greedy agent on one step with the given limits (0: default);
 * the run must be isolated and destroyed. */
static struct result greedy_run(const char *input, long cpu, long mem, long procs, long wall)
{
	return agent_run(greedy(), input, cpu, mem, procs, wall, 0);
}

/* Six processes of 20 MiB each, under memory_mb 64: each is far inside
 * its own address-space limit, together they are over the run's. */
START_TEST(test_whole_run_memory_bound)
{
	const char *why = "memory_mb limit (64 MiB for the whole run) reached: the kernel's "
	                  "out-of-memory killer ended a process of the run";
	struct result r = greedy_run("hold 6 20", 0, 64, 16, 30000);
	char marker[256];

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_str_eq(sum_str(&r, "reason"), why);
	ck_assert_int_eq(sum_int(&r, "steps_error"), 1);
	snprintf(marker, sizeof(marker), "[[agent-error:%s]]", why);
	ck_assert_str_eq(step_str(&r, 0, "output"), marker);
	result_free(&r);
}
END_TEST

/* Two of them fit: the run completes, both held their share. */
START_TEST(test_whole_run_memory_under_bound)
{
	struct result r = greedy_run("hold 2 20", 0, 64, 16, 30000);

	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert_str_eq(step_str(&r, 0, "output"), "hold: 2 of 2 x 20 MiB held");
	result_free(&r);
}
END_TEST

/* One spin, the wall clock far above the budget: stopped by cpu_seconds,
 * by the run's budget or the process's own RLIMIT_CPU, whichever the
 * kernel and the runner see first (both name the limit). */
START_TEST(test_whole_run_cpu_spin)
{
	static const char whole[] =
	    "cpu_seconds limit (2 s of CPU time for the whole run) reached: ";
	struct result r = greedy_run("spin 1", 2, 0, 0, 60000);
	const char *why = sum_str(&r, "reason");

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_msg(strcmp(why, "agent error in step 1: agent killed by SIGKILL at its CPU time "
	                          "limit of 2 s (cpu_seconds, per process)") == 0 ||
	                  (strncmp(why, whole, strlen(whole)) == 0 && reason_cpu_used(why) >= 2.0),
	              "%s", why);
	/* well before the wall clock's 60 s (generous: 2 s of CPU on a
	 * loaded machine) */
	ck_assert_msg(r.ms < 40000, "took %lld ms", r.ms);
	result_free(&r);
}
END_TEST

/* Four spinning processes share one budget: stopped once the four of them
 * together used cpu_seconds, not four times it (each one's RLIMIT_CPU
 * alone would allow 8 s in all). The bound is generous: under twice the
 * budget. */
START_TEST(test_whole_run_cpu_shared)
{
	struct result r = greedy_run("spin 4", 2, 0, 16, 60000);
	const char *why = sum_str(&r, "reason");
	double used = reason_cpu_used(why);

	ck_assert_str_eq(sum_str(&r, "status"), "failed");
	ck_assert_msg(
	    strncmp(why, "cpu_seconds limit (2 s of CPU time for the whole run) reached: ", 63) ==
	        0,
	    "%s", why);
	ck_assert_msg(used >= 2.0 && used < 4.0, "used %.2f s (bound: under 4 s): %s", used, why);
	result_free(&r);
}
END_TEST

/* pid's memory cgroup (the v1 memory hierarchy's line of
 * /proc/PID/cgroup, else the v2 line), relative to its hierarchy, into
 * buf; 0 or -1. */
static int proc_cgroup(pid_t pid, int v1, char *buf, size_t n)
{
	char path[64], line[1024];
	char *ctl, *at;
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (rc != 0 && fgets(line, sizeof(line), f)) {
		ctl = strchr(line, ':');
		at = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!at)
			continue;
		*ctl++ = '\0';
		*at++ = '\0';
		at[strcspn(at, "\n")] = '\0';
		if (v1 ? strcmp(ctl, "memory") == 0 : strcmp(line, "0") == 0) {
			snprintf(buf, n, "%s", at);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* While a run goes on, its jail is in a cgroup of its own, named for the
 * run, holding memory_mb for everything in it; the runner and its guard
 * are not in it; once the run has ended it is gone. */
START_TEST(test_whole_run_cgroup_made_and_removed)
{
	const char *args[] = {env_path("OLIVARES_RUNNER"), "--backend", "namespaces", NULL};
	char *const env[] = {NULL};
	json_t *spec = spec_new(NULL, hostile());
	char kids[256], cg[512], own[512], path[640], lim[64] = "";
	int v1 = access("/sys/fs/cgroup/memory/cgroup.procs", F_OK) == 0;
	long long t0, until;
	struct stat st;
	struct result r;
	FILE *f;
	pid_t pid, child = 0;
	int fd;

	spec_step(spec, "probe", "sleep 2000");
	spec_limit(spec, "memory_mb", 48);
	t0 = now_ms();
	pid = spawn_runner_with(args, spec, env, NULL, NULL, &fd);
	cg[0] = '\0';
	/* pid 1 of the jail is a child of the runner, in a cgroup that is
	 * not the runner's */
	for (until = now_ms() + 10000; !cg[0] && now_ms() < until; sleep_ms(20)) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		kids[0] = '\0';
		if (!fgets(kids, sizeof(kids), f))
			kids[0] = '\0';
		fclose(f);
		for (char *k = strtok(kids, " \n"); k && !cg[0]; k = strtok(NULL, " \n")) {
			child = (pid_t)atoi(k);
			if (proc_cgroup(child, v1, cg, sizeof(cg)) != 0 ||
			    !strstr(cg, "/olivares-run-"))
				cg[0] = '\0';
		}
	}
	ck_assert_msg(cg[0], "no process of the run in a cgroup of its own");
	ck_assert_int_eq(proc_cgroup(pid, v1, own, sizeof(own)), 0);
	ck_assert_msg(strcmp(own, cg) != 0, "the runner is in the run's cgroup %s", cg);
	snprintf(path, sizeof(path), "%s%s/%s", v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup", cg,
	         v1 ? "memory.limit_in_bytes" : "memory.max");
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_ptr_nonnull(fgets(lim, sizeof(lim), f));
	fclose(f);
	ck_assert_int_eq(atoll(lim), 48LL << 20);
	r = collect(pid, fd, t0);
	ck_assert_str_eq(sum_str(&r, "status"), "completed");
	ck_assert(sum_bool(&r, "destroyed"));
	snprintf(path, sizeof(path), "%s%s", v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup", cg);
	ck_assert_msg(stat(path, &st) != 0 && errno == ENOENT, "%s left behind", path);
	result_free(&r);
	json_decref(spec);
}
END_TEST

void namespaces_add_bounds(Suite *s)
{
	const TTest *const bounds[] = {
	    test_whole_run_memory_bound,
	    test_whole_run_memory_under_bound,
	    test_whole_run_cpu_spin,
	    test_whole_run_cpu_shared,
	    test_whole_run_cgroup_made_and_removed,
	    NULL,
	};

	suite_add_tests(s, "bounds", 90, bounds);
}
