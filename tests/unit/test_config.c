/*
 * The configuration (fcgi/config.h): every key of its table (the default,
 * a value it takes and how it is stored, values it refuses and their
 * message), the defaults computed at load and the environment, the rules
 * between keys, what an unknown section or a key given twice says, and
 * that the committed reference (docs/) is what the table generates, and
 * that a removed key is refused with what replaced it; and the pool's
 * preflight answers (fcgi/run/preflight_cache.h).
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

#include "fcgi/config_reference.h"
#include "fcgi/config.h"
#include "fcgi/run/preflight_cache.h"

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

/* The configuration file the last load_env() wrote (removed since), as
 * the messages name it. */
static char loaded_path[64];
/* the kind of error of the last load_env() (0 when it loaded) */
static enum http_config_err loaded_kind;
/* OLIVARES_DSN for load_env() (NULL: unset) */
static const char *dsn_env;

/* http_config_load with an INI holding text, OLIVARES_DATA set to data
 * (NULL: unset) and OLIVARES_DSN to dsn_env; returns its result, the message in
 * err. */
static int load_env(const char *text, const char *data, struct http_config *cfg, char *err,
                    size_t n)
{
	char path[] = "/tmp/olv-config-XXXXXX";
	struct http_config_error why;
	int fd = mkstemp(path);
	size_t used;
	int rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	setenv("OLIVARES_CONF", path, 1);
	if (data)
		setenv("OLIVARES_DATA", data, 1);
	else
		unsetenv("OLIVARES_DATA");
	if (dsn_env)
		setenv("OLIVARES_DSN", dsn_env, 1);
	else
		unsetenv("OLIVARES_DSN");
	memset(cfg, 0, sizeof(*cfg));
	rc = http_config_load(cfg, "olivares-fcgi", &why);
	loaded_kind = why.kind;
	/* the tests' buffers are smaller than a message may be: cut to n */
	used = strnlen(why.message, n - 1);
	memcpy(err, why.message, used);
	err[used] = '\0';
	unlink(path);
	return rc;
}

/* The same with OLIVARES_DATA=/tmp. */
static int load(const char *text, struct http_config *cfg, char *err, size_t n)
{
	return load_env(text, "/tmp", cfg, err, n);
}

/* [server] max_stored_mb is every tenant's quota (0: none); a [tenant
 * NAME] section's own wins, 0 included, wherever [server] comes; the
 * bytes are MiB times 1048576. */
START_TEST(test_max_stored_mb)
{
	struct http_config cfg;
	char err[512];

	ck_assert_int_eq(load("[tenant a]\nbackends = inproc-mock\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.max_stored_mb, 0);
	ck_assert_int_eq(cfg.tenants[0].max_stored_mb, 0);
	ck_assert(http_config_quota_bytes(&cfg, "a") == 0);
	ck_assert(http_config_quota_bytes(&cfg, NULL) == 0);

	ck_assert_int_eq(load("[tenant a]\nmax_stored_mb = 0\n[tenant b]\nmax_stored_mb = 2\n"
	                      "[tenant c]\nbackends = inproc-mock\n[server]\nmax_stored_mb = 5\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(cfg.max_stored_mb, 5);
	ck_assert_int_eq(cfg.tenants[0].max_stored_mb, 0);
	ck_assert_int_eq(cfg.tenants[1].max_stored_mb, 2);
	ck_assert_int_eq(cfg.tenants[2].max_stored_mb, 5);
	ck_assert(http_config_quota_bytes(&cfg, "a") == 0);
	ck_assert(http_config_quota_bytes(&cfg, "b") == 2LL * 1048576LL);
	ck_assert(http_config_quota_bytes(&cfg, "c") == 5LL * 1048576LL);
	ck_assert(http_config_quota_bytes(&cfg, "other") == 5LL * 1048576LL);
	ck_assert(http_config_quota_bytes(&cfg, NULL) == 5LL * 1048576LL);
	/* names are exact, case included */
	ck_assert(http_config_quota_bytes(&cfg, "B") == 5LL * 1048576LL);
}
END_TEST

/* retention_days: [server]'s for a tenant without the key, wherever
 * [server] comes in the file; a [tenant NAME] 0 stands (kept forever)
 * over a [server] retention; any says whether a purge has work. */
START_TEST(test_retention_days)
{
	struct http_config cfg;
	char err[512];

	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(http_config_retention_days(&cfg, "x"), 0);
	ck_assert_int_eq(http_config_retention_any(&cfg), 0);
	ck_assert_int_eq(cfg.purge_interval_seconds, 3600);
	ck_assert_str_eq(cfg.retention_include_referenced, "false");
	ck_assert_int_eq(load("[tenant a]\nbackends = inproc-mock\n[tenant b]\nretention_days = 0\n"
	                      "[tenant c]\nretention_days = 2\n[server]\nretention_days = 30\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(http_config_retention_days(&cfg, NULL), 30);
	ck_assert_int_eq(http_config_retention_days(&cfg, "a"), 30);
	ck_assert_int_eq(http_config_retention_days(&cfg, "b"), 0);
	ck_assert_int_eq(http_config_retention_days(&cfg, "c"), 2);
	ck_assert_int_eq(http_config_retention_days(&cfg, "not-in-the-file"), 30);
	ck_assert_int_eq(http_config_retention_any(&cfg), 1);
	/* one tenant's retention alone is work for the purge */
	ck_assert_int_eq(load("[tenant c]\nretention_days = 1\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(http_config_retention_days(&cfg, "c"), 1);
	ck_assert_int_eq(http_config_retention_days(&cfg, "d"), 0);
	ck_assert_int_eq(http_config_retention_any(&cfg), 1);
}
END_TEST

/* [runner] max_active_runs bounds a tenant's runs queued or running: 100
 * by default; a [tenant NAME] section may set its own, and one without
 * the key takes [runner]'s, wherever [runner] comes in the file. */
START_TEST(test_max_active_runs)
{
	struct http_config cfg;
	char err[512], want[512];

	ck_assert_int_eq(load("[tenant a]\nbackends = inproc-mock\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.max_active_runs, 100);
	ck_assert_int_eq(cfg.tenants[0].max_active_runs, 100);

	/* a tenant without the key takes [runner]'s, even from a later section */
	ck_assert_int_eq(
	    load("[tenant a]\nbackends = inproc-mock\n[tenant b]\nmax_active_runs = 2\n"
	         "[runner]\nmax_active_runs = 7\n",
	         &cfg, err, sizeof(err)),
	    0);
	ck_assert_int_eq(cfg.max_active_runs, 7);
	ck_assert_int_eq(cfg.ntenants, 2);
	ck_assert_str_eq(cfg.tenants[0].name, "a");
	ck_assert_int_eq(cfg.tenants[0].max_active_runs, 7);
	ck_assert_str_eq(cfg.tenants[1].name, "b");
	ck_assert_int_eq(cfg.tenants[1].max_active_runs, 2);
	/* the section's policy is completed from [runner] as before */
	ck_assert_str_eq(cfg.tenants[1].backends, "inproc-mock");
	ck_assert_str_eq(cfg.tenants[1].default_backend, "inproc-mock");

	/* a name the INI reader would cut is refused, naming the line; the
	 * longest it keeps whole is taken as it is */
	ck_assert_int_eq(
	    load("[runner]\n[tenant "
	         "abcdefghij-abcdefghij-abcdefghij-abcdefghij-x]\nmax_active_runs = 3\n",
	         &cfg, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, ":2: section name longer than 49 bytes: [tenant "
	                          "abcdefghij-abcdefghij-abcdefghij-abcdefghij-x] (a [tenant NAME] "
	                          "section takes a name of at most 42 bytes)") != NULL,
	              "%s", err);
	ck_assert_int_eq(load("[tenant abcdefghij-abcdefghij-abcdefghij-abcdefghi]\n"
	                      "max_active_runs = 3\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_str_eq(cfg.tenants[0].name, "abcdefghij-abcdefghij-abcdefghij-abcdefghi");
	ck_assert_int_eq(cfg.tenants[0].max_active_runs, 3);

	/* a tenant's own may be above [runner]'s */
	ck_assert_int_eq(load("[runner]\nmax_active_runs = 1\n[tenant big]\nmax_active_runs = "
	                      "1000000\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(cfg.max_active_runs, 1);
	ck_assert_int_eq(cfg.tenants[0].max_active_runs, 1000000);

	/* the bounds, in both sections, named with the section */
	ck_assert_int_eq(load("[runner]\nmax_active_runs = 0\n", &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
	         "%s: bad value \"0\" for [runner] max_active_runs (a whole number from 1 to "
	         "1000000) (line 2)",
	         loaded_path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(loaded_kind, HTTP_CONFIG_E_VALUE);
	ck_assert_int_eq(load("[tenant acme]\nmax_active_runs = 1000001\n", &cfg, err, sizeof(err)),
	                 -1);
	snprintf(want, sizeof(want),
	         "%s: bad value \"1000001\" for [tenant acme] max_active_runs (a whole number "
	         "from 1 to 1000000) (line 2)",
	         loaded_path);
	ck_assert_str_eq(err, want);
}
END_TEST

/* [runner] egress_secrets: none by default; a [tenant NAME] section
 * without the key takes [runner]'s (from a later section too), one that
 * gives it, even empty, has its own; http_config_egress_secrets answers
 * by tenant name. */
START_TEST(test_egress_secrets)
{
	struct http_config cfg;
	char err[512], want[512];

	ck_assert_int_eq(load("[tenant a]\nbackends = inproc-mock\n", &cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.egress_secrets, "");
	ck_assert_str_eq(cfg.tenants[0].egress_secrets, "");
	ck_assert_str_eq(http_config_egress_secrets(&cfg, "a"), "");

	ck_assert_int_eq(load("[tenant a]\nbackends = inproc-mock\n"
	                      "[tenant b]\negress_secrets = /srv/b.ini\n"
	                      "[tenant c]\negress_secrets =\n"
	                      "[runner]\negress_secrets = /etc/olivares/egress-secrets.ini\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(cfg.ntenants, 3);
	ck_assert_str_eq(cfg.egress_secrets, "/etc/olivares/egress-secrets.ini");
	ck_assert_str_eq(http_config_egress_secrets(&cfg, "a"), "/etc/olivares/egress-secrets.ini");
	ck_assert_str_eq(http_config_egress_secrets(&cfg, "b"), "/srv/b.ini");
	ck_assert_str_eq(http_config_egress_secrets(&cfg, "c"), "");
	/* a tenant without a section, and no tenant: [runner]'s */
	ck_assert_str_eq(http_config_egress_secrets(&cfg, "zed"),
	                 "/etc/olivares/egress-secrets.ini");
	ck_assert_str_eq(http_config_egress_secrets(&cfg, NULL),
	                 "/etc/olivares/egress-secrets.ini");

	/* a relative path is refused, not taken from the file's directory:
	 * the gateway that opens it may run on another host */
	ck_assert_int_eq(load("[runner]\negress_secrets = secrets.ini\n", &cfg, err, sizeof(err)),
	                 -1);
	snprintf(want, sizeof(want),
	         "%s: bad value \"secrets.ini\" for [runner] egress_secrets (an absolute path "
	         "without . or .. parts, or nothing for none) (line 2)",
	         loaded_path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(loaded_kind, HTTP_CONFIG_E_VALUE);
}
END_TEST

/* [executor]: processes, slots and lease_seconds with their defaults and
 * bounds; host_id the host's name unless set. */
START_TEST(test_executor_keys)
{
	struct http_config cfg;
	char err[512], want[512], host[256], text[512];

	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.executor_processes, 1);
	ck_assert_int_eq(cfg.executor_slots, 4);
	ck_assert_int_eq(cfg.executor_lease_seconds, 15);
	memset(host, 0, sizeof(host));
	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(cfg.executor_host_id) - 1] = '\0';
	ck_assert_str_eq(cfg.executor_host_id, host);

	ck_assert_int_eq(load("[executor]\nprocesses = 3\nslots = 8\nlease_seconds = 6\nhost_id = "
	                      "exec-a\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(cfg.executor_processes, 3);
	ck_assert_int_eq(cfg.executor_slots, 8);
	ck_assert_int_eq(cfg.executor_lease_seconds, 6);
	ck_assert_str_eq(cfg.executor_host_id, "exec-a");

	/* the bounds, each refused naming the key and what it takes */
	ck_assert_int_eq(load("[executor]\nprocesses = 65\n", &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
	         "%s: bad value \"65\" for [executor] processes (a whole number from 1 to 64) "
	         "(line 2)",
	         loaded_path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(load("[executor]\nslots = 0\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "for [executor] slots (a whole number from 1 to 256)"));
	ck_assert_int_eq(load("[executor]\nslots = 257\n", &cfg, err, sizeof(err)), -1);
	ck_assert_int_eq(load("[executor]\nlease_seconds = 2\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(
	    strstr(err, "for [executor] lease_seconds (a whole number from 3 to 3600)"));
	ck_assert_int_eq(load("[executor]\nlease_seconds = 3601\n", &cfg, err, sizeof(err)), -1);

	/* host_id: 1 to 128 bytes */
	snprintf(text, sizeof(text), "[executor]\nhost_id = %0128d\n", 0);
	ck_assert_int_eq(load(text, &cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(cfg.executor_host_id), 128);
	snprintf(text, sizeof(text), "[executor]\nhost_id = %0129d\n", 0);
	ck_assert_int_eq(load(text, &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "for [executor] host_id (a value that is not empty and "
	                                  "not too long) (line 2)"));
	ck_assert_int_eq(load("[executor]\nhost_id =\n", &cfg, err, sizeof(err)), -1);
}
END_TEST

/* The run slots' keys are gone: a file that still sets one does not load,
 * and says what bounds runs now, rather than being read as if the old
 * bound still held. */
START_TEST(test_run_slot_keys_are_gone)
{
	static const char *const gone[] = {"max_runs", "max_runs_per_tenant", NULL};
	struct http_config cfg;
	char err[1024], want[1024], text[256];
	size_t i;

	for (i = 0; gone[i]; i++) {
		snprintf(text, sizeof(text), "[server]\nworkers = 4\n[runner]\n%s = 2\n", gone[i]);
		ck_assert_int_eq(load(text, &cfg, err, sizeof(err)), -1);
		ck_assert_int_eq(loaded_kind, HTTP_CONFIG_E_KEY);
		snprintf(want, sizeof(want),
		         "%s: [runner] %s is gone: runs are run by olivares-executor; set "
		         "[executor] slots (runs at once per executor) and [runner] "
		         "max_active_runs (per tenant) (line 4)",
		         loaded_path, gone[i]);
		ck_assert_str_eq(err, want);
	}
	/* never a key of a tenant's section: an unknown one there */
	ck_assert_int_eq(load("[tenant a]\nmax_runs = 2\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ": unknown key \"max_runs\" in section [tenant a]"));
	/* nor does anything else of the slots' era load */
	ck_assert_int_eq(load("[runner]\nmax_run = 2\n", &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ": unknown key \"max_run\" in section [runner]"));
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

/* How long a request can hold a worker follows [server] wait_max_seconds,
 * the longest a request waits for its run, plus 10 s for its store calls;
 * the run and scorer timeouts no longer count (executors run the runs). */
START_TEST(test_request_seconds_max)
{
	struct http_config cfg;
	char err[512];

	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.wait_max_seconds, 60);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), 60 + 10);
	ck_assert_int_eq(load("[runner]\ntimeout_ms = 600000\n[scorer]\ntimeout_ms = 600000\n",
	                      &cfg, err, sizeof(err)),
	                 0);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), 60 + 10);
	ck_assert_int_eq(load("[server]\nwait_max_seconds = 0\n", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(http_config_request_seconds_max(&cfg), 10);
	ck_assert_int_eq(load("[server]\nwait_max_seconds = 61\n", &cfg, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "bad value \"61\" for [server] wait_max_seconds (a whole number "
	                          "from 0 to 60)") != NULL,
	              "%s", err);
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
	ck_assert_ptr_nonnull(strstr(err,
	                             ":3: unknown section [bogus] (known: [server], "
	                             "[runner], [tenant NAME], [scorer], [admin], [executor])"));
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
	                                  "[tenant NAME], [scorer], [admin], [executor])"));
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

/* ---- every key of the table ------------------------------------------------ */

/*
 * What each key does, written out here rather than read from the table, so
 * that a change of the table shows as a failure: its default (as
 * http_config_format gives it, after def_file, with OLIVARES_DATA=/tmp; NULL:
 * computed at load, checked by test_computed_defaults), a value it takes
 * (with extra lines after it, in the same section, when the key needs
 * them) and how that is stored, more values it takes as they are ('|'
 * between them), values it refuses ('|' between them) and what their
 * message says was wanted.
 */
struct key_case {
	const char *section, *name;
	const char *def_file, *def;         /* def_file NULL: an empty file */
	const char *valid, *extra, *stored; /* extra NULL: none */
	const char *also_ok;                /* NULL: none */
	const char *bad, *wanted;           /* bad "": the empty value alone */
};

#define WANT_TEXT "a value that is not empty and not too long"
#define WANT_BACKENDS "known backends: inproc-mock, namespaces, gvisor, firecracker"

static const struct key_case key_cases[] = {
    {"server", "data_dir", .def = "/tmp", .valid = "data", .stored = "/tmp/data",
     .also_ok = "/srv/olv", .bad = "", .wanted = WANT_TEXT},
    {"server", "dsn",
     .def =
         "Driver=SQLite3;Database=/tmp/olivares.db;Timeout=2000;JournalMode=WAL;SyncPragma=NORMAL;"
         "FKSupport=1",
     .valid = "Driver=X;Database=/tmp/x.db;PWD=p", .stored = "Driver=X;Database=/tmp/x.db;PWD=p",
     .also_ok = "x", .bad = "", .wanted = WANT_TEXT},
    {"server", "socket", .def = "/tmp/olivares.sock", .valid = "./olv.sock",
     .stored = "/tmp/olv.sock", .also_ok = "/run/s", .bad = "", .wanted = WANT_TEXT},
    {"server", "socket_mode", .def = "0600", .valid = "660", .stored = "0660",
     .also_ok = "0000|0770|0640", .bad = "0778|01000|8|x|",
     .wanted = "an octal number from 0 to 0777"},
    {"server", "workers", .valid = "3", .stored = "3", .also_ok = "1|64", .bad = "0|65|-1|x|3x|",
     .wanted = "a whole number from 1 to 64"},
    {"server", "wait_max_seconds", .def = "60", .valid = "20", .stored = "20", .also_ok = "0|60",
     .bad = "-1|61|x|", .wanted = "a whole number from 0 to 60"},
    {"server", "metrics_tenant_labels", .def = "false", .valid = "true", .stored = "true",
     .also_ok = "false", .bad = "TRUE|yes|1|on|", .wanted = "false or true"},
    {"server", "backlog", .def = "1024", .valid = "2048", .stored = "2048", .also_ok = "1|65535",
     .bad = "0|65536|", .wanted = "a whole number from 1 to 65535"},
    {"server", "max_stored_mb", .def = "0", .valid = "100", .stored = "100",
     .also_ok = "0|16777216", .bad = "-1|16777217|1.5|",
     .wanted = "a whole number from 0 to 16777216"},
    /* retention */
    {"server", "retention_days", .def = "0", .valid = "30", .stored = "30", .also_ok = "1|36500",
     .bad = "-1|36501|1d|", .wanted = "a whole number from 0 to 36500"},
    {"server", "retention_include_referenced", .def = "false", .valid = "true", .stored = "true",
     .also_ok = "false", .bad = "yes|1|True|", .wanted = "false or true"},
    {"server", "purge_interval_seconds", .def = "3600", .valid = "60", .stored = "60",
     .also_ok = "0|86400", .bad = "-1|86401|", .wanted = "a whole number from 0 to 86400"},
    {"runner", "path", .valid = "bin/runner", .stored = "/tmp/bin/runner",
     .also_ok = "/opt/olivares-runner", .bad = "", .wanted = WANT_TEXT},
    {"runner", "timeout_ms", .def = "10000", .valid = "40000", .stored = "40000",
     .also_ok = "100|600000", .bad = "99|600001|1e3|",
     .wanted = "a whole number from 100 to 600000"},
    {"runner", "backends", .def = "inproc-mock", .valid = " namespaces , gvisor",
     .extra = "default_backend = gvisor\n", .stored = "namespaces,gvisor",
     .bad = "inproc-mock, bogus|inproc-mock,,gvisor|,|Gvisor|", .wanted = WANT_BACKENDS},
    {"runner", "default_backend", .def = "inproc-mock", .valid = "namespaces",
     .extra = "backends = inproc-mock, namespaces\n", .stored = "namespaces",
     .also_ok = "inproc-mock", .bad = "bogus|gvisor,namespaces|", .wanted = WANT_BACKENDS},
    {"runner", "agents_dir", .def = "/tmp/agents", .valid = "my-agents", .stored = "/tmp/my-agents",
     .also_ok = "/srv/agents", .bad = "", .wanted = WANT_TEXT},
    {"runner", "binds", .def = "/usr", .valid = "/usr, /opt/x ", .stored = "/usr,/opt/x",
     .also_ok = "/lib|/procx",
     .bad = "/|/proc|/proc/1|/tmp|/agent/x|/usr/|/usr//lib|/usr/./x|/usr/../x|usr|/usr,,/lib",
     .wanted = "absolute normalised paths other than /, /proc, /tmp, /agent, /agent-exec and "
               "/olivares, at most 32"},
    {"runner", "cpu_seconds", .def = "5", .valid = "7", .stored = "7", .also_ok = "1|600",
     .bad = "0|601|", .wanted = "a whole number from 1 to 600"},
    {"runner", "memory_mb", .def = "256", .valid = "512", .stored = "512", .also_ok = "16|16384",
     .bad = "15|16385|", .wanted = "a whole number from 16 to 16384"},
    {"runner", "processes", .def = "32", .valid = "64", .stored = "64", .also_ok = "2|4096",
     .bad = "1|4097|", .wanted = "a whole number from 2 to 4096"},
    {"runner", "open_files", .def = "64", .valid = "128", .stored = "128", .also_ok = "8|65536",
     .bad = "7|65537|", .wanted = "a whole number from 8 to 65536"},
    {"runner", "tmpfs_mb", .def = "16", .valid = "32", .stored = "32", .also_ok = "1|4096",
     .bad = "0|4097|", .wanted = "a whole number from 1 to 4096"},
    {"runner", "max_active_runs", .def = "100", .valid = "5", .stored = "5", .also_ok = "1|1000000",
     .bad = "0|1000001|-1|5x|", .wanted = "a whole number from 1 to 1000000"},
    {"runner", "egress_allow", .def = "", .valid = "api.example.com, 10.0.0.5:8080 ",
     .stored = "api.example.com,10.0.0.5:8080", .also_ok = "|a-b.c:1|x:65535",
     .bad = "Api.example.com|a b|.x|x-|x:0|x:65536|x:08|x:|:80|a,,b|a_b",
     .wanted = "a comma list of at most 32 host or host:port (lower-case names or IPv4 "
               "addresses, ports 1 to 65535)"},
    {"runner", "egress_secrets", .def = "", .valid = "/etc/olivares/egress-secrets.ini",
     .stored = "/etc/olivares/egress-secrets.ini", .also_ok = "|/s|/a/.b/c..d",
     .bad = "secrets.ini|./s|/etc/|/etc//s|/etc/./s|/etc/../s|/etc/.|/etc/..",
     .wanted = "an absolute path without . or .. parts, or nothing for none"},
    {"runner", "gvisor_platform", .def = "ptrace", .valid = "kvm", .stored = "kvm",
     .also_ok = "ptrace|systrap", .bad = "PTRACE|warp|kvm,ptrace|",
     .wanted = "ptrace, kvm or systrap"},
    {"tenant", "backends", .def_file = "[tenant t]\ndefault_backend = inproc-mock\n",
     .def = "inproc-mock", .valid = "gvisor , firecracker", .extra = "default_backend = gvisor\n",
     .stored = "gvisor,firecracker", .bad = "bogus|gvisor,|", .wanted = WANT_BACKENDS},
    {"tenant", "default_backend", .def_file = "[tenant t]\nbackends = inproc-mock, gvisor\n",
     .def = "inproc-mock", .valid = "gvisor", .extra = "backends = inproc-mock, gvisor\n",
     .stored = "gvisor", .bad = "nope|", .wanted = WANT_BACKENDS},
    {"tenant", "max_active_runs", .def_file = "[tenant t]\nbackends = inproc-mock\n", .def = "100",
     .valid = "3", .stored = "3", .also_ok = "1|1000000", .bad = "0|1000001|",
     .wanted = "a whole number from 1 to 1000000"},
    {"tenant", "max_stored_mb",
     .def_file = "[server]\nmax_stored_mb = 7\n[tenant t]\nbackends = inproc-mock\n", .def = "7",
     .valid = "1", .stored = "1", .also_ok = "0|16777216", .bad = "-1|16777217|",
     .wanted = "a whole number from 0 to 16777216"},
    {"tenant", "egress_allow",
     .def_file = "[runner]\negress_allow = a.example\n[tenant t]\nbackends = inproc-mock\n",
     .def = "a.example", .valid = "b.example:8443", .stored = "b.example:8443", .also_ok = "",
     .bad = "B.example|b:0",
     .wanted = "a comma list of at most 32 host or host:port "
               "(lower-case names or IPv4 addresses, ports 1 to 65535)"},
    {"tenant", "egress_secrets",
     .def_file = "[runner]\negress_secrets = /etc/o/r.ini\n[tenant t]\nbackends = inproc-mock\n",
     .def = "/etc/o/r.ini", .valid = "/etc/o/t.ini", .stored = "/etc/o/t.ini", .also_ok = "",
     .bad = "t.ini|/etc/o/",
     .wanted = "an absolute path without . or .. parts, or nothing for none"},
    {"tenant", "retention_days",
     .def_file = "[server]\nretention_days = 9\n[tenant t]\nbackends = inproc-mock\n", .def = "9",
     .valid = "2", .stored = "2", .also_ok = "0|36500", .bad = "-1|36501|",
     .wanted = "a whole number from 0 to 36500"},
    {"scorer", "adapter", .def = "none", .valid = "exec:bin/score -q",
     .stored = "exec:/tmp/bin/score -q", .also_ok = "none|exec:/bin/true --x|builtin:/srv/suites",
     .bad = "exec:|builtin:|None|", .wanted = "none, builtin:<dir> or exec:<command line>"},
    {"scorer", "timeout_ms", .def = "5000", .valid = "7000", .stored = "7000",
     .also_ok = "100|600000", .bad = "99|600001|", .wanted = "a whole number from 100 to 600000"},
    {"admin", "session_minutes", .def = "480", .valid = "60", .stored = "60", .also_ok = "1|10080",
     .bad = "0|10081|", .wanted = "a whole number from 1 to 10080"},
    {"executor", "processes", .def = "1", .valid = "4", .stored = "4", .also_ok = "1|64",
     .bad = "0|65|", .wanted = "a whole number from 1 to 64"},
    {"executor", "slots", .def = "4", .valid = "8", .stored = "8", .also_ok = "1|256",
     .bad = "0|257|", .wanted = "a whole number from 1 to 256"},
    {"executor", "lease_seconds", .def = "15", .valid = "6", .stored = "6", .also_ok = "3|3600",
     .bad = "2|3601|", .wanted = "a whole number from 3 to 3600"},
    {"executor", "host_id", .valid = "exec-a", .stored = "exec-a", .also_ok = "h-1.example|x",
     .bad = "", .wanted = WANT_TEXT},
};

#define NKEY_CASES ((int)(sizeof(key_cases) / sizeof(key_cases[0])))

static const struct http_config_key *table_key(const char *section, const char *name)
{
	const struct http_config_key *k;

	for (k = http_config_keys; k->name; k++)
		if (strcmp(k->section, section) == 0 && strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* The section header of a case's file: a tenant's is [tenant t]. */
static const char *case_section(const struct key_case *kc)
{
	return strcmp(kc->section, "tenant") == 0 ? "tenant t" : kc->section;
}

/* k's value in cfg, formatted (a tenant's: of the first section). */
static const char *formatted(const struct http_config *cfg, const struct http_config_key *k,
                             char *out, size_t n)
{
	ck_assert_int_eq(http_config_format(cfg, k, 0, out, n), 0);
	return out;
}

/* The file "[section]\nname = value\n" + extra, loaded with data_dir's
 * case alone not under OLIVARES_DATA (which would win over it). */
static int load_key(const struct key_case *kc, const char *value, const char *extra,
                    struct http_config *cfg, char *err, size_t n)
{
	char text[1024];

	snprintf(text, sizeof(text), "[%s]\n%s = %s\n%s", case_section(kc), kc->name, value,
	         extra ? extra : "");
	return load_env(text, strcmp(kc->name, "data_dir") == 0 ? NULL : "/tmp", cfg, err, n);
}

/* The table and the cases name the same keys, each once. */
START_TEST(test_every_key_has_a_case)
{
	const struct http_config_key *k;
	int i, found, nkeys = 0;

	for (k = http_config_keys; k->name; k++) {
		nkeys++;
		found = 0;
		for (i = 0; i < NKEY_CASES; i++)
			if (strcmp(key_cases[i].section, k->section) == 0 &&
			    strcmp(key_cases[i].name, k->name) == 0)
				found++;
		ck_assert_msg(found == 1, "[%s] %s: %d cases", k->section, k->name, found);
		ck_assert_ptr_nonnull(http_config_section_find(k->section));
		ck_assert_msg(k->help && *k->help, "[%s] %s has no help", k->section, k->name);
		ck_assert_msg(k->def || k->default_doc, "[%s] %s: no default", k->section, k->name);
	}
	ck_assert_int_eq(nkeys, NKEY_CASES);
}
END_TEST

/* The next item of a '|' list at *p, NUL-terminated in place ("a|" is
 * "a" then ""); NULL after the last. */
static char *next_item(char **p)
{
	char *item = *p, *bar;

	if (!item)
		return NULL;
	bar = strchr(item, '|');
	if (bar) {
		*bar = '\0';
		*p = bar + 1;
	} else {
		*p = NULL;
	}
	return item;
}

START_TEST(test_key_case)
{
	const struct key_case *kc = &key_cases[_i];
	const struct http_config_key *k = table_key(kc->section, kc->name);
	struct http_config cfg;
	char err[512], want[1024], value[1100], list[512], *p, *item;

	ck_assert_msg(k != NULL, "[%s] %s is not in the table", kc->section, kc->name);
	/* the default */
	if (kc->def) {
		ck_assert_msg(load(kc->def_file ? kc->def_file : "", &cfg, err, sizeof(err)) == 0,
		              "%s", err);
		ck_assert_str_eq(formatted(&cfg, k, value, sizeof(value)), kc->def);
	}
	/* a value it takes, as it is stored */
	ck_assert_msg(load_key(kc, kc->valid, kc->extra, &cfg, err, sizeof(err)) == 0,
	              "[%s] %s = %s: %s", kc->section, kc->name, kc->valid, err);
	ck_assert_str_eq(formatted(&cfg, k, value, sizeof(value)), kc->stored);
	/* more values it takes as they are */
	snprintf(list, sizeof(list), "%s", kc->also_ok ? kc->also_ok : "");
	p = *list ? list : NULL;
	while ((item = next_item(&p)) != NULL) {
		ck_assert_msg(load_key(kc, item, kc->extra, &cfg, err, sizeof(err)) == 0,
		              "[%s] %s = %s: %s", kc->section, kc->name, item, err);
		ck_assert_str_eq(formatted(&cfg, k, value, sizeof(value)), item);
	}
	/* values it refuses, each named with what was wanted (but a
	 * secret's value, never shown) */
	http_config_wanted(k, want, sizeof(want));
	ck_assert_str_eq(want, kc->wanted);
	snprintf(list, sizeof(list), "%s", kc->bad);
	p = list;
	while ((item = next_item(&p)) != NULL) {
		ck_assert_msg(load_key(kc, item, "", &cfg, err, sizeof(err)) == -1,
		              "[%s] %s = %s was taken", kc->section, kc->name, item);
		if (k->flags & HTTP_CONFIG_SECRET)
			snprintf(want, sizeof(want), "%s: bad value for [%s] %s (%s) (line 2)",
			         loaded_path, case_section(kc), kc->name, kc->wanted);
		else
			snprintf(want, sizeof(want),
			         "%s: bad value \"%s\" for [%s] %s (%s) (line 2)", loaded_path,
			         item, case_section(kc), kc->name, kc->wanted);
		ck_assert_str_eq(err, want);
	}
}
END_TEST

/* The defaults computed at load, and the environment over the file. */
START_TEST(test_computed_defaults)
{
	struct http_config cfg;
	char err[512], cwd[4096], want[4200], *exe, *slash;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* two workers per online CPU, at most 64 */
	if (cpus < 1)
		cpus = 1;
	ck_assert_int_eq(load("", &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.workers, (int)(2 * (cpus > 32 ? 32 : cpus)));
	/* the runner beside the running executable */
	exe = realpath("/proc/self/exe", NULL);
	ck_assert_ptr_nonnull(exe);
	slash = strrchr(exe, '/');
	*slash = '\0';
	snprintf(want, sizeof(want), "%s/olivares-runner", exe);
	free(exe);
	ck_assert_str_eq(cfg.runner_path, want);
	ck_assert_str_eq(cfg.file, loaded_path);

	/* no OLIVARES_DATA: ./var, from the current directory */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(load_env("", NULL, &cfg, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/var", cwd);
	ck_assert_str_eq(cfg.data_dir, want);
	ck_assert_int_eq(load_env("", "rel/data", &cfg, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/rel/data", cwd);
	ck_assert_str_eq(cfg.data_dir, want);
	snprintf(want, sizeof(want), "%s/rel/data/olivares.sock", cwd);
	ck_assert_str_eq(cfg.socket_path, want);

	/* the file's data_dir names the places under it ... */
	ck_assert_int_eq(load_env("[server]\ndata_dir = /srv/olv\n", NULL, &cfg, err, sizeof(err)),
	                 0);
	ck_assert_str_eq(cfg.dsn, "Driver=SQLite3;Database=/srv/olv/olivares.db;Timeout=2000;"
	                          "JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1");
	ck_assert_str_eq(cfg.socket_path, "/srv/olv/olivares.sock");
	ck_assert_str_eq(cfg.agents_dir, "/srv/olv/agents");
	/* ... unless OLIVARES_DATA is set: it wins */
	ck_assert_int_eq(load("[server]\ndata_dir = /srv/olv\n", &cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.data_dir, "/tmp");
	ck_assert_str_eq(cfg.agents_dir, "/tmp/agents");
	/* keys given are not replaced by derived defaults */
	ck_assert_int_eq(load("[server]\nsocket = /run/o.sock\n[runner]\nagents_dir = /a\n", &cfg,
	                      err, sizeof(err)),
	                 0);
	ck_assert_str_eq(cfg.socket_path, "/run/o.sock");
	ck_assert_str_eq(cfg.agents_dir, "/a");

	/* OLIVARES_DSN wins over the file's dsn */
	dsn_env = "Driver=A";
	ck_assert_int_eq(load("[server]\ndsn = Driver=B\n", &cfg, err, sizeof(err)), 0);
	dsn_env = NULL;
	ck_assert_str_eq(cfg.dsn, "Driver=A");
}
END_TEST

/* No file at all: the defaults, and nothing read. */
START_TEST(test_no_file)
{
	struct http_config cfg;
	struct http_config_error err;

	memset(&err, 'x', sizeof(err));
	unsetenv("OLIVARES_CONF");
	unsetenv("OLIVARES_DSN");
	setenv("OLIVARES_DATA", "/nonexistent/olv", 1);
	ck_assert_int_eq(http_config_load(&cfg, "olivares-fcgi", &err), 0);
	ck_assert_str_eq(err.message, "");
	ck_assert_int_eq(err.kind, 0);
	ck_assert_str_eq(cfg.file, "");
	ck_assert_str_eq(cfg.data_dir, "/nonexistent/olv");
	ck_assert_str_eq(cfg.backends, "inproc-mock");
	ck_assert_int_eq(cfg.ntenants, 0);
	setenv("OLIVARES_DSN", "Driver=B", 1);
	ck_assert_int_eq(http_config_load(&cfg, "olivares-fcgi", &err), 0);
	ck_assert_str_eq(cfg.dsn, "Driver=B");
	unsetenv("OLIVARES_DSN");
	/* a file named but absent */
	setenv("OLIVARES_CONF", "/nonexistent/olivares.conf", 1);
	ck_assert_int_eq(http_config_load(&cfg, "olivares-fcgi", &err), -1);
	ck_assert_int_eq(err.kind, HTTP_CONFIG_E_FILE);
	ck_assert_str_eq(err.message,
	                 "/nonexistent/olivares.conf: cannot open: No such file or directory");
}
END_TEST

/* What the per-key cases cannot say: the socket mode that lets others
 * write, an empty bind list, a long list or value. */
START_TEST(test_value_rules)
{
	struct http_config cfg;
	char err[512], text[2048], want[1024];
	size_t used = 0;
	int i;

	ck_assert_int_eq(load("[server]\nsocket_mode = 0602\n", &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
	         "%s: bad value \"0602\" for [server] socket_mode (no write access for others: "
	         "0660 and the socket's group for nginx's user) (line 2)",
	         loaded_path);
	ck_assert_str_eq(err, want);

	/* binds: empty is none; 32 at most */
	ck_assert_int_eq(load("[runner]\nbinds =\n", &cfg, err, sizeof(err)), 0);
	ck_assert_str_eq(cfg.binds, "");
	used = (size_t)snprintf(text, sizeof(text), "[runner]\nbinds = ");
	for (i = 0; i < 33; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s/%c", i ? "," : "",
		                         'A' + i);
	snprintf(text + used, sizeof(text) - used, "\n");
	ck_assert_int_eq(load(text, &cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "at most 32) (line 2)"));
	text[used - 3] = '\n'; /* drop the 33rd */
	text[used - 2] = '\0';
	ck_assert_msg(load(text, &cfg, err, sizeof(err)) == 0, "%s", err);

	/* a bad value is shown cut at 80 bytes */
	snprintf(text, sizeof(text), "[runner]\ngvisor_platform = %090d\n", 7);
	ck_assert_int_eq(load(text, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: bad value \"%080d\" for [runner] gvisor_platform",
	         loaded_path, 0);
	ck_assert_ptr_nonnull(strstr(err, want));
}
END_TEST

/* The whole file path, NUL-terminated, allocated. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_ge(len, 0);
	rewind(f);
	text = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = '\0';
	fclose(f);
	return text;
}

/* The committed reference is what the table generates: the docs cannot
 * drift from the code. */
START_TEST(test_reference_is_current)
{
	static const struct {
		const char *path;
		enum http_config_reference_format format;
	} docs[] = {
	    {OLV_DOCS_DIR "/configuration.md", HTTP_CONFIG_REFERENCE_MARKDOWN},
	    {OLV_DOCS_DIR "/man/olivares.conf.5", HTTP_CONFIG_REFERENCE_MAN},
	};
	char *doc, *updated;
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		doc = slurp(docs[i].path);
		ck_assert_msg(http_config_reference_splice(doc, docs[i].format, &updated) == 0,
		              "%s: no config-reference markers", docs[i].path);
		ck_assert_msg(strcmp(doc, updated) == 0,
		              "%s differs from the table of fcgi/config.c: run `make "
		              "update-config-reference` and commit the result",
		              docs[i].path);
		free(doc);
		free(updated);
	}
	/* a document without the markers is refused, not rewritten */
	ck_assert_int_eq(http_config_reference_splice("# no markers\n",
	                                              HTTP_CONFIG_REFERENCE_MARKDOWN, &updated),
	                 -1);
	ck_assert_ptr_null(updated);
}
END_TEST

/* The suite's tests by test case; loops runs _i over 0..loops - 1. */
static const struct {
	const char *tcase;
	const TTest *const *test;
	int loops;
} tests[] = {
    {"preflight", &test_preflight_answers_shared_by_the_pool, 0},
    {"preflight", &test_preflight_answers_without_init_are_the_process_own, 0},
    {"preflight", &test_preflight_newest_check_wins, 0},
    {"preflight", &test_preflight_locked_record_is_given_up, 0},
    {"preflight", &test_preflight_newest_check_wins_without_init, 0},
    {"config", &test_max_active_runs, 0},
    {"config", &test_max_stored_mb, 0},
    {"config", &test_executor_keys, 0},
    {"config", &test_egress_secrets, 0},
    {"config", &test_run_slot_keys_are_gone, 0},
    {"config", &test_config_messages, 0},
    {"config", &test_request_seconds_max, 0},
    {"config", &test_gvisor_platform, 0},
    {"config", &test_retention_days, 0},
    {"keys", &test_every_key_has_a_case, 0},
    {"keys", &test_key_case, NKEY_CASES},
    {"keys", &test_computed_defaults, 0},
    {"keys", &test_no_file, 0},
    {"keys", &test_value_rules, 0},
    {"keys", &test_reference_is_current, 0},
};

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = NULL;
	const char *current = "";
	size_t i;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(current, tests[i].tcase) != 0) {
			current = tests[i].tcase;
			tc = tcase_create(current);
			suite_add_tcase(s, tc);
		}
		if (tests[i].loops)
			tcase_add_loop_test(tc, *tests[i].test, 0, tests[i].loops);
		else
			tcase_add_test(tc, *tests[i].test);
	}
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
