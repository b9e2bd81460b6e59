/*
 * The configuration (fcgi/config.h): the run slot keys' defaults and
 * bounds, what a bad value or a key given twice says; and the run slots
 * (fcgi/run/runslots.h) across processes, as the workers of one pool hold
 * them.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h" /* CLI_POST_TIMEOUT_SECONDS (a macro) */
#include "fcgi/config.h"
#include "fcgi/run/preflight_cache.h"
#include "fcgi/run/runslots.h"

#define T1 "11111111111111111111111111111111"
#define T2 "22222222222222222222222222222222"
#define T3 "33333333333333333333333333333333"

/* A worker: a child that takes a slot for tenant, says how it went on the
 * pipe ('y' or 'n') and keeps it until killed. */
static pid_t holder(const char *tenant)
{
	struct http_runslot s;
	struct model_error err;
	int p[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(&s, 0, sizeof(s));
		c = http_runslot_take(&s, tenant, &err) == 0 && s.held ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	ck_assert_msg(c == 'y', "holder for %s got no slot", tenant);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

/* This process asks a slot for tenant and is refused, 429 busy, with
 * message (NULL: any), holding none. */
static void expect_busy(const char *tenant, const char *message)
{
	struct http_runslot s;
	struct model_error err;

	memset(&s, 0, sizeof(s));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(http_runslot_take(&s, tenant, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_BUSY);
	if (message)
		ck_assert_str_eq(err.message, message);
	ck_assert_int_eq(s.held, 0);
}

START_TEST(test_without_init_nothing_is_bounded)
{
	struct http_runslot s;
	struct model_error err;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(http_runslot_take(&s, T1, &err), 0);
	ck_assert_int_eq(s.held, 0);
	http_runslot_release(&s);
}
END_TEST

START_TEST(test_limits_across_processes)
{
	struct http_runslot s;
	struct model_error err;
	struct model_error why;
	pid_t a, b;

	ck_assert_int_eq(http_runslots_init(2, 1, &why), 0);
	memset(&s, 0, sizeof(s));

	/* tenant 1 holds its one slot in another process: its next run is
	 * refused, 429 busy, naming the tenant's limit */
	a = holder(T1);
	expect_busy(T1, "this tenant has 1 run on OS-level backends in progress already "
	                "([runner] max_runs_per_tenant = 1): try again when one has ended");

	/* tenant 2 takes the server's second slot; tenant 3 finds none */
	b = holder(T2);
	expect_busy(T3, "2 runs on OS-level backends are in progress on this server ([runner] "
	                "max_runs = 2): try again when one has ended");

	/* a worker that dies frees its slots (nobody released them) */
	stop(a);
	ck_assert_int_eq(http_runslot_take(&s, T3, &err), 0);
	ck_assert_int_eq(s.held, 1);
	/* the same request's second run keeps what it holds */
	ck_assert_int_eq(http_runslot_take(&s, T3, &err), 0);
	ck_assert_int_eq(s.held, 1);
	http_runslot_release(&s);
	ck_assert_int_eq(s.held, 0);
	http_runslot_release(&s);

	/* released: another process may take it */
	stop(holder(T1));
	stop(b);
}
END_TEST

START_TEST(test_refused_tenant_keeps_no_server_slot)
{
	struct model_error why;
	pid_t a;

	/* one server slot: tenant 1 holds it; tenant 2's refusal (server)
	 * must not keep tenant 2's own slot locked behind it */
	ck_assert_int_eq(http_runslots_init(1, 1, &why), 0);
	a = holder(T1);
	expect_busy(T2, NULL);
	stop(a);
	stop(holder(T2));
}
END_TEST

START_TEST(test_init_refuses_bad_limits)
{
	struct model_error why;

	ck_assert_int_eq(http_runslots_init(0, 1, &why), -1);
	ck_assert_int_eq(http_runslots_init(2, 3, &why), -1);
	ck_assert_str_eq(why.message, "run slots: bad limits 2 and 3");
	ck_assert_int_eq(why.code, MODEL_E_INVALID);
}
END_TEST

/* ---- the pool's preflight answers ------------------------------------------ */

#define NO_FC "firecracker binary not found (looked in /usr/bin, /usr/local/bin)"

/* A worker that records ok/reason as backend i's answer from a check
 * started at started_ms, then exits. */
static void put_started_in_child(size_t i, int ok, const char *reason, long long started_ms)
{
	struct http_preflight pf;
	pid_t pid;
	int status;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(&pf, 0, sizeof(pf));
		pf.ok = ok;
		snprintf(pf.reason, sizeof(pf.reason), "%s", reason);
		http_preflight_cache_put(i, &pf, started_ms);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The same, from a check that started now. */
static void put_in_child(size_t i, int ok, const char *reason)
{
	put_started_in_child(i, ok, reason, http_preflight_cache_now_ms());
}

START_TEST(test_preflight_answers_shared_by_the_pool)
{
	struct http_preflight pf;
	long long before, at_ms = -1;
	struct model_error why;

	ck_assert_int_eq(http_preflight_cache_init(&why), 0);
	/* a new pool knows nothing */
	ck_assert_int_eq(http_preflight_cache_get(3, &pf, &at_ms), 1);
	ck_assert_int_eq(at_ms, -1);

	/* one worker lists the backends: every other (here, this process)
	 * reads its answers, with the time they were checked */
	before = http_preflight_cache_now_ms();
	put_in_child(3, 0, NO_FC);
	put_in_child(1, 1, "");
	memset(&pf, 0x55, sizeof(pf));
	ck_assert_int_eq(http_preflight_cache_get(3, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 0);
	ck_assert_str_eq(pf.reason, NO_FC);
	ck_assert(at_ms >= before && at_ms <= http_preflight_cache_now_ms());
	ck_assert_int_eq(http_preflight_cache_get(1, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 1);
	ck_assert_str_eq(pf.reason, "");
	ck_assert_int_eq(http_preflight_cache_get(2, &pf, &at_ms), 1);

	/* a newer answer replaces the older one, whoever recorded it */
	put_in_child(3, 1, "");
	ck_assert_int_eq(http_preflight_cache_get(3, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 1);

	/* an index past the records is neither kept nor found */
	put_in_child(PREFLIGHT_CACHE_BACKENDS, 0, NO_FC);
	ck_assert_int_eq(http_preflight_cache_get(PREFLIGHT_CACHE_BACKENDS, &pf, &at_ms), 1);

	/* a new pool (init again) starts empty */
	ck_assert_int_eq(http_preflight_cache_init(&why), 0);
	ck_assert_int_eq(http_preflight_cache_get(1, &pf, &at_ms), 1);
}
END_TEST

START_TEST(test_preflight_answers_without_init_are_the_process_own)
{
	struct http_preflight pf;
	long long at_ms;

	put_in_child(0, 0, "a child's answer");
	ck_assert_int_eq(http_preflight_cache_get(0, &pf, &at_ms), 1);
	memset(&pf, 0, sizeof(pf));
	snprintf(pf.reason, sizeof(pf.reason), "%s", NO_FC);
	http_preflight_cache_put(0, &pf, http_preflight_cache_now_ms());
	ck_assert_int_eq(http_preflight_cache_get(0, &pf, &at_ms), 0);
	ck_assert_str_eq(pf.reason, NO_FC);
}
END_TEST

/* The pool's records descriptor, inherited as a worker inherits it
 * (found by its memfd name), or -1. */
static int pool_fd(void)
{
	char path[300], target[128];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	ssize_t len;
	int fd = -1;

	ck_assert_ptr_nonnull(d);
	while (fd < 0 && (e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "memfd:olivares-preflight-cache"))
			fd = atoi(e->d_name);
	}
	closedir(d);
	return fd;
}

/* A worker stopped while it holds a record (a SIGSTOP, a debugger): the
 * others neither wait for it nor read or write that record (nothing
 * known, the put skipped), and the other records stay theirs. */
START_TEST(test_preflight_locked_record_is_given_up)
{
	struct http_preflight pf;
	struct flock fl;
	long long t0, at_ms;
	struct model_error why;
	char c;
	int ready[2], fd, status;
	pid_t pid;

	ck_assert_int_eq(http_preflight_cache_init(&why), 0);
	put_in_child(1, 1, "");
	put_in_child(2, 1, "");
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* holds record 0 (its first byte) until killed */
		fd = pool_fd();
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		fl.l_start = 0;
		fl.l_len = 1;
		c = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	ck_assert_msg(c == 'y', "the holder could not lock");
	t0 = http_preflight_cache_now_ms();
	ck_assert_int_eq(http_preflight_cache_get(0, &pf, &at_ms), 1);
	ck_assert_msg(http_preflight_cache_now_ms() - t0 < 1000, "waited %lld ms for a lock",
	              http_preflight_cache_now_ms() - t0);
	memset(&pf, 0, sizeof(pf));
	snprintf(pf.reason, sizeof(pf.reason), "%s", NO_FC);
	http_preflight_cache_put(0, &pf, http_preflight_cache_now_ms());
	ck_assert_msg(http_preflight_cache_now_ms() - t0 < 1000, "waited %lld ms for a lock",
	              http_preflight_cache_now_ms() - t0);
	/* another record is not held */
	ck_assert_int_eq(http_preflight_cache_get(2, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 1);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/* its holder gone, the record is free again: the put while it was
	 * held wrote nothing */
	ck_assert_int_eq(http_preflight_cache_get(0, &pf, &at_ms), 1);
	ck_assert_int_eq(http_preflight_cache_get(1, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 1);
	close(ready[0]);
	close(ready[1]);
}
END_TEST

/* Two workers check one backend: A's check starts first and is slow (a
 * gVisor trial sandbox, a runner cut at 8 s), B's starts later (the host
 * fixed meanwhile) and ends first. A's older answer, recorded last, must
 * not replace B's: the pool would say "failed" for 30 s after a check
 * passed, with an age counted from A's end, not from when it looked. */
START_TEST(test_preflight_newest_check_wins)
{
	struct http_preflight pf;
	long long a_started, b_started, at_ms = -1;
	struct model_error why;

	ck_assert_int_eq(http_preflight_cache_init(&why), 0);
	a_started = http_preflight_cache_now_ms() - 5000;
	b_started = a_started + 3000;
	put_started_in_child(2, 1, "", b_started);
	put_started_in_child(2, 0, "runsc not found", a_started);
	ck_assert_int_eq(http_preflight_cache_get(2, &pf, &at_ms), 0);
	ck_assert_msg(pf.ok == 1, "the older check's answer replaced the newer: %s", pf.reason);
	ck_assert_int_eq(at_ms, b_started);

	/* a check that started later still replaces it, with its start */
	put_started_in_child(2, 0, NO_FC, b_started + 1);
	ck_assert_int_eq(http_preflight_cache_get(2, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 0);
	ck_assert_str_eq(pf.reason, NO_FC);
	ck_assert_int_eq(at_ms, b_started + 1);
}
END_TEST

/* The same rule for a process's own answers (no pool). */
START_TEST(test_preflight_newest_check_wins_without_init)
{
	struct http_preflight pf;
	long long t0 = http_preflight_cache_now_ms(), at_ms = -1;

	memset(&pf, 0, sizeof(pf));
	pf.ok = 1;
	http_preflight_cache_put(1, &pf, t0);
	pf.ok = 0;
	snprintf(pf.reason, sizeof(pf.reason), "%s", NO_FC);
	http_preflight_cache_put(1, &pf, t0 - 2000);
	ck_assert_int_eq(http_preflight_cache_get(1, &pf, &at_ms), 0);
	ck_assert_int_eq(pf.ok, 1);
	ck_assert_int_eq(at_ms, t0);
}
END_TEST

/* ---- the configuration --------------------------------------------------- */

/* http_config_load with an INI holding text; returns its result, the
 * message in err. */
static int load(const char *text, struct http_config *cfg, char *err, size_t n)
{
	char path[] = "/tmp/olv-config-XXXXXX";
	int fd = mkstemp(path);
	int rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	setenv("OLIVARES_CONF", path, 1);
	setenv("OLIVARES_DATA", "/tmp", 1);
	memset(cfg, 0, sizeof(*cfg));
	err[0] = '\0';
	rc = http_config_load(cfg, "olivares-fcgi", err, n);
	unlink(path);
	return rc;
}

START_TEST(test_config_defaults_and_bounds)
{
	struct http_config cfg;
	char err[512];

	/* one worker left for the other requests, one slot for the other tenants */
	ck_assert_int_eq(load("[server]\nworkers = 4\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.max_runs, 3);
	ck_assert_int_eq(cfg.max_runs_per_tenant, 2);
	ck_assert_int_eq(load("[server]\nworkers = 2\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.max_runs, 1);
	ck_assert_int_eq(cfg.max_runs_per_tenant, 1);
	ck_assert_int_eq(load("[server]\nworkers = 1\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.max_runs, 1);
	ck_assert_int_eq(cfg.max_runs_per_tenant, 1);
	ck_assert_int_eq(load("[server]\nworkers = 8\n[runner]\nmax_runs = 8\n"
	                      "max_runs_per_tenant = 8\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(cfg.max_runs, 8);
	ck_assert_int_eq(cfg.max_runs_per_tenant, 8);

	ck_assert_int_eq(
	    load("[server]\nworkers = 4\n[runner]\nmax_runs = 5\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(
	    strstr(err, "/tmp/olv-config-")); /* the file is named: the key is in it */
	ck_assert_ptr_nonnull(strstr(err, ": [runner] max_runs = 5 is more than the 4 workers "
	                                  "(1..workers)"));
	ck_assert_int_eq(load("[server]\nworkers = 4\n[runner]\nmax_runs = 2\n"
	                      "max_runs_per_tenant = 3\n",
	                      &cfg, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, ": [runner] max_runs_per_tenant = 3 is more than "
	                                  "max_runs = 2 (1..max_runs)"));
	ck_assert_int_eq(load("[runner]\nmax_runs = 0\n", &cfg, err, sizeof(err)), -1);
}
END_TEST

/* [runner] gvisor_platform: ptrace by default, one of the platforms the
 * runner accepts, anything else refused at load naming the key and the
 * allowed values. */
START_TEST(test_gvisor_platform)
{
	static const char *const accepted[] = {"ptrace", "kvm", "systrap", NULL};
	struct http_config cfg;
	char text[128], err[512];
	size_t i;

	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.gvisor_platform, "ptrace");
	for (i = 0; accepted[i]; i++) {
		snprintf(text, sizeof(text), "[runner]\ngvisor_platform = %s\n", accepted[i]);
		ck_assert_msg(load(text, &cfg, err, sizeof(err)) == 0, "%s: %s", accepted[i], err);
		ck_assert_str_eq(cfg.gvisor_platform, accepted[i]);
		ck_assert_str_eq(http_config_gvisor_platforms[i], accepted[i]);
	}
	ck_assert_ptr_null(http_config_gvisor_platforms[i]);
	ck_assert_int_eq(load("[runner]\ngvisor_platform = warp\n", &cfg, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ": bad value \"warp\" for [runner] gvisor_platform (ptrace, kvm "
	                          "or systrap) (line 2)"),
	              "%s", err);
	/* exact names only */
	ck_assert_int_eq(load("[runner]\ngvisor_platform = PTRACE\n", &cfg, err, sizeof(err)), -1);
	ck_assert_int_eq(load("[runner]\ngvisor_platform =\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "for [runner] gvisor_platform (ptrace, kvm or systrap)"));
	/* a [runner] key: not one of a tenant's */
	ck_assert_int_eq(load("[tenant a]\ngvisor_platform = kvm\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown key \"gvisor_platform\" in section [tenant a]"));
}
END_TEST

/* How long a request can take follows the two timeouts, and the CLI waits
 * for a POST as long as the largest of them allow. */
START_TEST(test_request_seconds_max)
{
	struct http_config cfg;
	char err[512];

	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), 2 * (10 + 3 + 2 + 5));
	ck_assert_int_eq(load("[runner]\ntimeout_ms = 40000\n[scorer]\ntimeout_ms = 100\n", &cfg,
	                      err, sizeof(err)),
	                 0);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), 2 * 46);
	ck_assert_int_eq(load("[runner]\ntimeout_ms = 600000\n[scorer]\ntimeout_ms = 600000\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), CLI_POST_TIMEOUT_SECONDS);
}
END_TEST

START_TEST(test_config_messages)
{
	struct http_config cfg;
	char err[512];

	/* a bad value is shown with what was wanted */
	ck_assert_int_eq(load("[runner]\ntimeout_ms = 50\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ": bad value \"50\" for [runner] timeout_ms (a whole "
	                                  "number from 100 to 600000) (line 2)"));
	ck_assert_int_eq(load("[runner]\nbackends = inproc-mock, bogus\n", &cfg, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, "bad value \"inproc-mock, bogus\" for [runner] backends "
	                                  "(known backends: inproc-mock, namespaces, gvisor, "
	                                  "firecracker)"));
	/* a connection string is never shown: it may hold a password */
	ck_assert_int_eq(load("[server]\ndsn =\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "bad value for [server] dsn ("));
	/* others may not write to the FastCGI socket */
	ck_assert_int_eq(load("[server]\nsocket_mode = 0777\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "bad value \"0777\" for [server] socket_mode (no write "
	                                  "access for others"));
	ck_assert_int_eq(load("[server]\nsocket_mode = 0660\n", &cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.socket_mode, 0660);
	/* an unknown section is named, with or without keys under it */
	ck_assert_int_eq(load("[server]\nworkers = 2\n[bogus]\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":3: unknown section [bogus] (known: [server], "
	                                  "[runner], [tenant NAME], [scorer], [admin])"));
	ck_assert_int_eq(load("[ runner ]\ntimeout_ms = 5000\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":1: unknown section [ runner ]"));
	ck_assert_int_eq(load("[tenant acme]\n[admin]\n", &cfg, err, sizeof(err)), 0);
	/* a key given twice, in one section or in a section given twice */
	ck_assert_int_eq(
	    load("[runner]\ntimeout_ms = 5000\ntimeout_ms = 6000\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ": [runner] timeout_ms is given twice (again on a later "
	                                  "line, or continued on an indented line): give it once, "
	                                  "on one line (line 3)"));
	/* a section named with more spaces is the same section */
	ck_assert_int_eq(
	    load("[tenant a]\nbackends = gvisor\n[tenant  a]\nbackends = inproc-mock\n", &cfg, err,
	         sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "[tenant a] backends is given twice"));
	/* a value continued on an indented line is refused, not cut */
	ck_assert_int_eq(load("[runner]\nbinds = /usr\n  /opt\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "[runner] binds is given twice"));
	ck_assert_int_eq(load("[tenant a]\nbackends = gvisor\n[runner]\ntimeout_ms = 5000\n"
	                      "[tenant a]\nbackends = inproc-mock\n",
	                      &cfg, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, "[tenant a] backends is given twice"));
	/* spaces around a tenant's name are not part of it */
	ck_assert_int_eq(
	    load("[tenant  acme ]\nbackends = inproc-mock, gvisor\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.ntenants, 1);
	ck_assert_str_eq(cfg.tenants[0].name, "acme");
	ck_assert_int_eq(
	    load("[tenant acme\t]\nbackends = inproc-mock, gvisor\n", &cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.tenants[0].name, "acme");
	/* an unknown section is named as such, at its own line */
	ck_assert_int_eq(load("[bogus]\nx = 1\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":1: unknown section [bogus] (known: [server], [runner], "
	                                  "[tenant NAME], [scorer], [admin])"));
	/* the same key in two sections is two keys */
	ck_assert_int_eq(load("[runner]\ntimeout_ms = 5000\n[scorer]\ntimeout_ms = 5000\n", &cfg,
	                      err, sizeof(err)),
	                 0);
	/* a tenant's default outside its backends: the hint names the key
	 * the section lacks (it had said "set default_backend" when that was
	 * set and backends came from [runner]) */
	ck_assert_int_eq(
	    load("[tenant acme]\ndefault_backend = namespaces\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err,
	                             "[tenant acme] default_backend \"namespaces\" is not in "
	                             "its backends \"inproc-mock\" (the section has no backends: "
	                             "it takes [runner]'s; add backends to the section)"));
	ck_assert_int_eq(load("[runner]\nbackends = inproc-mock, namespaces\ndefault_backend = "
	                      "namespaces\n[tenant acme]\nbackends = inproc-mock\n",
	                      &cfg, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err,
	                             "(the section has no default_backend: it takes [runner]'s; "
	                             "set default_backend in the section)"));
	ck_assert_int_eq(load("[tenant acme]\nbackends = inproc-mock\ndefault_backend = gvisor\n",
	                      &cfg, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, "(make default_backend one of the section's backends)"));
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("slots");

	tcase_add_test(tc, test_without_init_nothing_is_bounded);
	tcase_add_test(tc, test_limits_across_processes);
	tcase_add_test(tc, test_refused_tenant_keeps_no_server_slot);
	tcase_add_test(tc, test_init_refuses_bad_limits);
	suite_add_tcase(s, tc);
	tc = tcase_create("preflight");
	tcase_add_test(tc, test_preflight_answers_shared_by_the_pool);
	tcase_add_test(tc, test_preflight_answers_without_init_are_the_process_own);
	tcase_add_test(tc, test_preflight_newest_check_wins);
	tcase_add_test(tc, test_preflight_locked_record_is_given_up);
	tcase_add_test(tc, test_preflight_newest_check_wins_without_init);
	suite_add_tcase(s, tc);
	tc = tcase_create("config");
	tcase_add_test(tc, test_config_defaults_and_bounds);
	tcase_add_test(tc, test_config_messages);
	tcase_add_test(tc, test_request_seconds_max);
	tcase_add_test(tc, test_gvisor_platform);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
