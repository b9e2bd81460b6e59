/*
 * Unit tests of the scoring port (Check): its shared parts (model/scorer.c:
 * suite names, the none adapter) and the adapters none, builtin:<dir> and
 * exec:<command> (fcgi/scorer/scorer*.h). The suite format and the verdict rules
 * have their own programs (test_suite.c, test_verdict.c).
 *
 * The exec adapter runs the scripts tests/fixtures/scorer-*; the builtin
 * adapter reads tests/fixtures/suites and suites written to a temporary
 * directory. Fixtures are found as unit_fixture says (tests/unit/unit.h).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/scorer/scorer.h"
#include "fcgi/scorer/scorer_builtin.h"
#include "fcgi/scorer/scorer_exec.h"
#include "model/scorer.h"
#include "tests/unit/unit.h"

/* ---- suite names, none adapter ------------------------------------------- */

START_TEST(test_suite_name)
{
	char long_name[200];

	ck_assert_int_eq(model_suite_name_valid("walkthrough"), 1);
	ck_assert_int_eq(model_suite_name_valid("a"), 1);
	ck_assert_int_eq(model_suite_name_valid("v1.2_rc-3"), 1);
	ck_assert_int_eq(model_suite_name_valid("9lives"), 1);
	ck_assert_int_eq(model_suite_name_valid(NULL), 0);
	ck_assert_int_eq(model_suite_name_valid(""), 0);
	ck_assert_int_eq(model_suite_name_valid(".hidden"), 0);
	ck_assert_int_eq(model_suite_name_valid("-x"), 0);
	ck_assert_int_eq(model_suite_name_valid("../x"), 0);
	ck_assert_int_eq(model_suite_name_valid("a/b"), 0);
	ck_assert_int_eq(model_suite_name_valid("a b"), 0);
	ck_assert_int_eq(model_suite_name_valid("caf\xc3\xa9"), 0);
	memset(long_name, 'a', 128);
	long_name[128] = '\0';
	ck_assert_int_eq(model_suite_name_valid(long_name), 1);
	long_name[128] = 'a';
	long_name[129] = '\0';
	ck_assert_int_eq(model_suite_name_valid(long_name), 0);
}
END_TEST

START_TEST(test_none_adapter)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	struct model_reason err;

	memset(&res, 0, sizeof(res));
	res.scored = 1;
	res.score = 1.0;
	res.passed = 1;
	ck_assert_int_eq(http_scorer_from_config("none", 5000, &s, &err), 0);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_str_eq(s.ops->name, "none");
	ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_int_eq(res.passed, 0);
	ck_assert(res.score == 0.0);
	ck_assert_ptr_null(res.details);
	ck_assert_str_eq(res.reason, "no scorer adapter is wired");
	http_scorer_release(&s);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	json_decref(outs);
}
END_TEST

START_TEST(test_from_config_syntax)
{
	struct model_scorer s;
	struct model_reason err;
	char spec[4200], dir[400], want[512];
	char *part;

	ck_assert_int_eq(http_scorer_spec_valid("none"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("builtin:/x"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("exec:/bin/true"), 1);
	ck_assert_int_eq(http_scorer_spec_valid("exec:   "), 0);
	ck_assert_int_eq(http_scorer_spec_valid("exec:"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("builtin:"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("None"), 0);
	ck_assert_int_eq(http_scorer_spec_valid("evals"), 0);
	ck_assert_int_eq(http_scorer_spec_valid(""), 0);
	ck_assert_int_eq(http_scorer_spec_valid(NULL), 0);

	ck_assert_int_eq(http_scorer_from_config("bogus", 5000, &s, &err), -1);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_ptr_nonnull(strstr(err.text, "none, builtin:<dir> or exec:<command>"));
	ck_assert_int_eq(http_scorer_from_config("none", 99, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "timeout_ms"));
	ck_assert_int_eq(http_scorer_from_config("none", 600001, &s, &err), -1);
	ck_assert_int_eq(
	    http_scorer_from_config("builtin:/nonexistent/olivares-suites", 5000, &s, &err), -1);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
	ck_assert_ptr_nonnull(strstr(err.text, "/nonexistent/olivares-suites"));
	/* a message longer than a request error's (255 bytes) is kept whole:
	 * a directory of 3 components of 100 bytes */
	part = unit_rep('d', 100);
	snprintf(dir, sizeof(dir), "/nonexistent/%s/%s/%s", part, part, part);
	free(part);
	snprintf(spec, sizeof(spec), "builtin:%s", dir);
	ck_assert_int_eq(http_scorer_from_config(spec, 5000, &s, &err), -1);
	snprintf(want, sizeof(want),
	         "builtin scorer: suites directory %s: No such file or directory", dir);
	ck_assert_str_eq(err.text, want);
	ck_assert_uint_eq(strlen(err.text), 375);
	ck_assert_int_eq(http_scorer_from_config("builtin:/etc/hostname", 5000, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not a directory"));
	ck_assert_int_eq(http_scorer_from_config("exec:/nonexistent/scorer", 5000, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not an executable file"));
	/* a file without execute permission */
	snprintf(spec, sizeof(spec), "exec:%s", unit_fixture("suites/walkthrough.json"));
	ck_assert_int_eq(http_scorer_from_config(spec, 5000, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not an executable file"));
	/* a directory */
	ck_assert_int_eq(http_scorer_from_config("exec:/tmp", 5000, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not an executable file"));
	ck_assert_int_eq(http_scorer_from_config("exec:no-such-relative-scorer", 5000, &s, &err),
	                 -1);
	ck_assert_int_eq(http_scorer_from_config("exec:/bin/true a b c d e f g h i j k l m n o p q "
	                                         "r s t u v w x y z 1 2 3 4 5 6",
	                                         5000, &s, &err),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err.text, "more than 32 words"));
	/* 32 words is the bound, not over it */
	ck_assert_int_eq(http_scorer_from_config("exec:/bin/true a b c d e f g h i j k l m n o p q "
	                                         "r s t u v w x y z 1 2 3 4 5",
	                                         5000, &s, &err),
	                 0);
	ck_assert_str_eq(s.ops->name, "exec");
	http_scorer_release(&s);
	ck_assert_ptr_eq(s.ops, &model_scorer_none);
}
END_TEST

/* ---- builtin adapter ----------------------------------------------------- */

static char tmp_root[256];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* tmp_root/suites (the adapter's directory) and tmp_root/outside. */
static void builtin_setup(void)
{
	char path[512];

	snprintf(tmp_root, sizeof(tmp_root), "/tmp/olv-test-scorer-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp_root));
	snprintf(path, sizeof(path), "%s/suites", tmp_root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/outside", tmp_root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static void builtin_teardown(void)
{
	rm_rf(tmp_root);
}

static int builtin_score(struct model_scorer *s, const char *suite, json_t *outs,
                         struct model_score_result *res)
{
	return s->ops->score(s->ctx, suite, outs, res);
}

static void assert_not_scored(const struct model_score_result *res, const char *reason)
{
	ck_assert_int_eq(res->scored, 0);
	ck_assert_int_eq(res->passed, 0);
	ck_assert(res->score == 0.0);
	ck_assert_ptr_null(res->details);
	ck_assert_str_eq(res->reason, reason);
}

START_TEST(test_builtin_fixture_dir)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	struct model_reason err;
	char spec[4200];

	memset(&res, 0, sizeof(res));
	snprintf(spec, sizeof(spec), "builtin:%s", unit_fixture("suites"));
	ck_assert_msg(http_scorer_from_config(spec, 5000, &s, &err) == 0, "%s", err.text);
	ck_assert_str_eq(s.ops->name, "builtin");
	ck_assert_int_eq(builtin_score(&s, "walkthrough", outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(res.passed, 1);
	ck_assert_int_eq(json_array_size(res.details), 3);
	/* no state between calls: the same answer again */
	ck_assert_int_eq(builtin_score(&s, "walkthrough", outs, &res), 0);
	ck_assert(res.score == 0.75);
	ck_assert_int_eq(json_array_size(res.details), 3);
	ck_assert_int_eq(builtin_score(&s, "walkthrough-strict", outs, &res), 0);
	ck_assert_int_eq(res.passed, 0);
	ck_assert_int_eq(builtin_score(&s, "nope", outs, &res), -1);
	assert_not_scored(&res, "unknown suite nope");
	/* README.md is not a suite: only <name>.json is looked at */
	ck_assert_int_eq(builtin_score(&s, "README", outs, &res), -1);
	assert_not_scored(&res, "unknown suite README");
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

START_TEST(test_builtin_confinement)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	struct model_reason err;
	char dir[512], outside[512], link[600];
	static const char good[] =
	    "{\"name\":\"g\",\"expectations\":[{\"key\":\"step-1\",\"contains\":\"synthetic\"}]}";

	memset(&res, 0, sizeof(res));
	snprintf(dir, sizeof(dir), "%s/suites", tmp_root);
	snprintf(outside, sizeof(outside), "%s/outside", tmp_root);
	write_file(dir, "good.json", good);
	write_file(outside, "x.json", good);
	write_file(tmp_root, "x.json", good);
	ck_assert_int_eq(http_scorer_builtin_new(dir, &s, &err), 0);

	ck_assert_int_eq(builtin_score(&s, "good", outs, &res), 0);
	ck_assert(res.score == 1.0);

	/* "../x" never reaches the file system (and would be outside) */
	ck_assert_int_eq(builtin_score(&s, "../x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	ck_assert_int_eq(builtin_score(&s, "../outside/x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	ck_assert_int_eq(builtin_score(&s, "", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");

	/* a symlink out of the directory is refused, however it is named */
	snprintf(link, sizeof(link), "%s/evil.json", dir);
	ck_assert_int_eq(symlink("../outside/x.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "evil", outs, &res), -1);
	assert_not_scored(&res, "suite evil is outside the suites directory");
	snprintf(link, sizeof(link), "%s/abs.json", dir);
	ck_assert_int_eq(symlink("/etc/passwd", link), 0);
	ck_assert_int_eq(builtin_score(&s, "abs", outs, &res), -1);
	assert_not_scored(&res, "suite abs is outside the suites directory");
	/* a directory link whose target shares the prefix "suites" */
	snprintf(link, sizeof(link), "%s/suites-evil", tmp_root);
	ck_assert_int_eq(mkdir(link, 0700), 0);
	write_file(link, "p.json", good);
	snprintf(link, sizeof(link), "%s/p.json", dir);
	ck_assert_int_eq(symlink("../suites-evil/p.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "p", outs, &res), -1);
	assert_not_scored(&res, "suite p is outside the suites directory");
	/* a symlink inside the directory is fine */
	snprintf(link, sizeof(link), "%s/alias.json", dir);
	ck_assert_int_eq(symlink("good.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "alias", outs, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	/* a dangling link is an unknown suite */
	snprintf(link, sizeof(link), "%s/dangling.json", dir);
	ck_assert_int_eq(symlink("missing.json", link), 0);
	ck_assert_int_eq(builtin_score(&s, "dangling", outs, &res), -1);
	assert_not_scored(&res, "unknown suite dangling");
	model_score_result_clear(&res);
	http_scorer_release(&s);

	/* the directory itself may be reached through a symlink */
	snprintf(link, sizeof(link), "%s/suites-link", tmp_root);
	ck_assert_int_eq(symlink("suites", link), 0);
	ck_assert_int_eq(http_scorer_builtin_new(link, &s, &err), 0);
	ck_assert_int_eq(builtin_score(&s, "good", outs, &res), 0);
	ck_assert_int_eq(builtin_score(&s, "evil", outs, &res), -1);
	assert_not_scored(&res, "suite evil is outside the suites directory");
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

START_TEST(test_builtin_bad_files)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	struct model_reason err;
	char dir[512], path[600];
	FILE *f;
	long i;

	memset(&res, 0, sizeof(res));
	snprintf(dir, sizeof(dir), "%s/suites", tmp_root);
	ck_assert_int_eq(http_scorer_builtin_new(dir, &s, &err), 0);

	write_file(dir, "broken.json", "{\"name\":\"b\",");
	ck_assert_int_eq(builtin_score(&s, "broken", outs, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_msg(strncmp(res.reason, "suite broken is not valid JSON: ", 32) == 0, "%s",
	              res.reason);

	write_file(
	    dir, "dup.json",
	    "{\"name\":\"d\",\"name\":\"e\",\"expectations\":[{\"seq\":1,\"equals\":\"x\"}]}");
	ck_assert_int_eq(builtin_score(&s, "dup", outs, &res), -1);
	ck_assert_msg(strncmp(res.reason, "suite dup is not valid JSON: duplicate", 38) == 0, "%s",
	              res.reason);

	write_file(dir, "bad.json",
	           "{\"name\":\"b\",\"expectations\":[{\"seq\":1,\"equals\":\"x\",\"weight\":0}]}");
	ck_assert_int_eq(builtin_score(&s, "bad", outs, &res), -1);
	assert_not_scored(&res, "invalid suite bad: expectations[0].weight: weight must be > 0 and "
	                        "<= 1000000");

	write_file(dir, "re.json",
	           "{\"name\":\"r\",\"expectations\":[{\"seq\":1,\"regex\":\"[\"}]}");
	ck_assert_int_eq(builtin_score(&s, "re", outs, &res), -1);
	ck_assert_msg(strncmp(res.reason, "invalid suite re: expectations[0].regex: invalid", 48) ==
	                  0,
	              "%s", res.reason);

	/* a directory named like a suite */
	snprintf(path, sizeof(path), "%s/d.json", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(builtin_score(&s, "d", outs, &res), -1);
	assert_not_scored(&res, "suite d: not a regular file");

	/* over 1 MiB: refused, even though it is valid JSON */
	snprintf(path, sizeof(path), "%s/huge.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"name\":\"h\",\"expectations\":[{\"seq\":1,\"equals\":\"", f);
	for (i = 0; i < HTTP_SCORER_SUITE_MAX_BYTES; i++)
		fputc('x', f);
	fputs("\"}]}", f);
	fclose(f);
	ck_assert_int_eq(builtin_score(&s, "huge", outs, &res), -1);
	assert_not_scored(&res, "suite huge: larger than 1048576 bytes");

	/* just under the cap is read */
	snprintf(path, sizeof(path), "%s/big.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"name\":\"h\",\"expectations\":[{\"seq\":1,\"contains\":\"", f);
	for (i = 0; i < HTTP_SCORER_SUITE_MAX_BYTES - 100; i++)
		fputc('x', f);
	fputs("\"}]}", f);
	fclose(f);
	ck_assert_int_eq(builtin_score(&s, "big", outs, &res), 0);
	ck_assert(res.score == 0.0);

	/* unreadable (skipped as root, who reads anything) */
	if (geteuid() != 0) {
		write_file(dir, "secret.json", "{}");
		snprintf(path, sizeof(path), "%s/secret.json", dir);
		ck_assert_int_eq(chmod(path, 0), 0);
		ck_assert_int_eq(builtin_score(&s, "secret", outs, &res), -1);
		ck_assert_ptr_nonnull(strstr(res.reason, "Permission denied"));
	}
	model_score_result_clear(&res);
	http_scorer_release(&s);
	json_decref(outs);
}
END_TEST

/* ---- exec adapter -------------------------------------------------------- */

static int exec_make(const char *fixture_name, int timeout_ms, struct model_scorer *s)
{
	struct model_reason err;
	char spec[4200];
	int rc;

	snprintf(spec, sizeof(spec), "exec:%s", unit_fixture(fixture_name));
	rc = http_scorer_from_config(spec, timeout_ms, s, &err);
	ck_assert_msg(rc == 0, "%s: %s", spec, err.text);
	ck_assert_str_eq(s->ops->name, "exec");
	return rc;
}

/* Run fixture scorer name on the walkthrough; returns score()'s value. */
static int exec_run(const char *name, int timeout_ms, struct model_score_result *res)
{
	struct model_scorer s;
	json_t *outs = unit_walkthrough_outputs();
	int rc;

	exec_make(name, timeout_ms, &s);
	memset(res, 0, sizeof(*res));
	rc = s.ops->score(s.ctx, "walkthrough", outs, res);
	http_scorer_release(&s);
	json_decref(outs);
	return rc;
}

START_TEST(test_exec_good)
{
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	json_t *input;
	char *in;
	char want[128];
	int k;

	/* the exact bytes the scorer should see on stdin: a step's time as
	 * the API writes it, 0.137 (jansson's default, 17 digits, writes
	 * 0.13700000000000001) */
	json_object_set_new(json_array_get(outs, 0), "duration_ms", json_real(0.137));
	input = json_pack("{s:s, s:O}", "suite", "walkthrough", "outputs", outs);
	in = json_dumps(input, JSON_COMPACT | JSON_REAL_PRECISION(15));
	ck_assert_ptr_nonnull(strstr(in, "\"duration_ms\":0.137}"));
	snprintf(want, sizeof(want), "suite=walkthrough bytes=%zu", strlen(in));
	memset(&res, 0, sizeof(res));
	exec_make("scorer-good", 5000, &s);
	for (k = 0; k < 3; k++) { /* no state between calls */
		ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), 0);
		ck_assert_int_eq(res.scored, 1);
		ck_assert(res.score == 0.5);
		ck_assert_int_eq(res.passed, 1);
		ck_assert_str_eq(res.reason, "");
		ck_assert_int_eq(json_array_size(res.details), 1);
		unit_assert_detail(&res, 0, 1, "step-1", 1, "stdin", want);
	}
	/* an invalid suite name is refused before anything is started */
	ck_assert_int_eq(s.ops->score(s.ctx, "../x", outs, &res), -1);
	assert_not_scored(&res, "invalid suite name");
	model_score_result_clear(&res);
	http_scorer_release(&s);
	free(in);
	json_decref(input);
	json_decref(outs);
}
END_TEST

START_TEST(test_exec_empty_environment)
{
	struct model_score_result res;
	int fd;

	/* something to leak if the adapter passed the environment or fds on */
	ck_assert_int_eq(setenv("OLV_TEST_SECRET", "do-not-pass", 1), 0);
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 57), 57);
	close(fd);
	ck_assert(fcntl(57, F_GETFD) >= 0 && !(fcntl(57, F_GETFD) & FD_CLOEXEC));

	ck_assert_int_eq(exec_run("scorer-env", 5000, &res), 0);
	ck_assert_int_eq(res.scored, 1);
	ck_assert_str_eq(json_string_value(json_object_get(unit_detail(&res, 0), "message")),
	                 "environ=0 fd57=closed");
	model_score_result_clear(&res);
	close(57);
}
END_TEST

/* Number of live (not zombie) processes in process group pgid, after
 * waiting up to 2 s for SIGKILLed ones to die: members reparented to a
 * pid 1 that does not reap stay zombies, which are dead. */
static int group_alive(pid_t pgid)
{
	char path[300], buf[512];
	const char *p;
	struct dirent *de;
	DIR *d;
	FILE *f;
	int alive = 0, tries;
	char state;
	long pgrp;

	for (tries = 0; tries < 200; tries++) {
		alive = 0;
		d = opendir("/proc");
		ck_assert_ptr_nonnull(d);
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f)) {
				/* after "pid (comm)": state ppid pgrp */
				p = strrchr(buf, ')');
				if (p && sscanf(p + 1, " %c %*d %ld", &state, &pgrp) == 2 &&
				    pgrp == (long)pgid && state != 'Z')
					alive++;
			}
			fclose(f);
		}
		closedir(d);
		if (!alive)
			break;
		usleep(10000);
	}
	return alive;
}

START_TEST(test_exec_timeout)
{
	struct model_scorer s;
	struct model_score_result res;
	struct timespec t0, t1;
	json_t *outs = unit_walkthrough_outputs();
	char dir[] = "/tmp/olv-test-hang-XXXXXX";
	struct model_reason err;
	char pidfile[64], spec[4300];
	double elapsed;
	long pgid = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
	snprintf(spec, sizeof(spec), "exec:%s %s", unit_fixture("scorer-hang"), pidfile);
	ck_assert_int_eq(http_scorer_from_config(spec, 300, &s, &err), 0);
	memset(&res, 0, sizeof(res));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(s.ops->score(s.ctx, "walkthrough", outs, &res), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_not_scored(&res, "scorer timed out after 300 ms");
	ck_assert_msg(elapsed >= 0.29 && elapsed < 3.0, "took %.3f s", elapsed);
	/* the whole group is gone, the background sleeper included */
	f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &pgid), 1);
	fclose(f);
	ck_assert_int_gt(pgid, 1);
	ck_assert_msg(group_alive((pid_t)pgid) == 0, "process group %ld still has live members",
	              pgid);
	http_scorer_release(&s);
	json_decref(outs);
	unlink(pidfile);
	rmdir(dir);
}
END_TEST

START_TEST(test_exec_failures)
{
	struct model_score_result res;

	ck_assert_int_eq(exec_run("scorer-crash", 5000, &res), -1);
	assert_not_scored(&res, "scorer killed by SIGSEGV");

	ck_assert_int_eq(exec_run("scorer-exit3", 5000, &res), -1);
	assert_not_scored(&res, "scorer exited with status 3");

	ck_assert_int_eq(exec_run("scorer-garbage", 5000, &res), -1);
	ck_assert_int_eq(res.scored, 0);
	ck_assert_ptr_null(res.details);
	ck_assert_msg(strncmp(res.reason, "scorer answered invalid JSON: ", 30) == 0 &&
	                  strlen(res.reason) > 30,
	              "%s", res.reason);

	ck_assert_int_eq(exec_run("scorer-out-of-range", 5000, &res), -1);
	assert_not_scored(&res, "scorer answer: score 1.5 is outside [0, 1]");

	ck_assert_int_eq(exec_run("scorer-no-score", 5000, &res), -1);
	assert_not_scored(&res, "scorer answer: score is missing");

	ck_assert_int_eq(exec_run("scorer-flood", 5000, &res), -1);
	assert_not_scored(&res, "scorer answered more than 1048576 bytes");
}
END_TEST

/* Answers checked field by field: /bin/echo as a scorer prints its
 * arguments, so the command line is the answer (it never reads stdin). */
START_TEST(test_exec_answer_shapes)
{
	static const struct {
		const char *answer;
		int scored;
		const char *reason;
	} cases[] = {
	    {"{\"score\":0,\"passed\":false}", 1, ""},
	    {"{\"score\":1,\"passed\":true,\"details\":[]}", 1, ""},
	    {"{\"score\":0.25,\"passed\":false,\"details\":[{\"passed\":false,\"seq\":2,\"key\":"
	     "null,\"check\":\"c\",\"message\":\"m\"}]}",
	     1, ""},
	    {"[1]", 0, "scorer answer: not a JSON object"},
	    {"{\"score\":\"1\",\"passed\":true}", 0, "scorer answer: score must be a number"},
	    {"{\"score\":-0.01,\"passed\":true}", 0,
	     "scorer answer: score -0.01 is outside [0, 1]"},
	    {"{\"score\":1}", 0, "scorer answer: passed must be true or false"},
	    {"{\"score\":1,\"passed\":\"yes\"}", 0, "scorer answer: passed must be true or false"},
	    {"{\"score\":1,\"passed\":true,\"verdict\":\"great\"}", 0,
	     "scorer answer: unknown field \"verdict\""},
	    {"{\"score\":1,\"passed\":true,\"details\":{}}", 0,
	     "scorer answer: details must be an array"},
	    {"{\"score\":1,\"passed\":true,\"details\":[3]}", 0,
	     "scorer answer: details[0] is not an object"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"seq\":1}]}", 0,
	     "scorer answer: details[0].passed must be true or false"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"passed\":true,\"seq\":\"1\"}]}", 0,
	     "scorer answer: details[0].seq has the wrong type"},
	    {"{\"score\":1,\"passed\":true,\"details\":[{\"passed\":true,\"x\":1}]}", 0,
	     "scorer answer: details[0] has an unknown field \"x\""},
	    {"{\"score\":1,\"passed\":true,\"score\":0}", 0, NULL},
	    {"{\"score\":1,\"passed\":true} {}", 0, NULL},
	};
	struct model_scorer s;
	struct model_score_result res;
	json_t *outs = unit_walkthrough_outputs();
	struct model_reason err;
	char spec[512];
	size_t i;
	int rc;

	memset(&res, 0, sizeof(res));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the command line splits on spaces and echo joins its
		 * arguments with one: single spaces survive */
		snprintf(spec, sizeof(spec), "exec:/bin/echo %s", cases[i].answer);
		ck_assert_int_eq(http_scorer_from_config(spec, 5000, &s, &err), 0);
		rc = s.ops->score(s.ctx, "walkthrough", outs, &res);
		ck_assert_msg(rc == (cases[i].scored ? 0 : -1), "%s: %s", cases[i].answer,
		              res.reason);
		ck_assert_int_eq(res.scored, cases[i].scored);
		if (cases[i].reason)
			ck_assert_str_eq(res.reason, cases[i].reason);
		else
			ck_assert_msg(strncmp(res.reason, "scorer answered invalid JSON: ", 30) ==
			                  0,
			              "%s", res.reason);
		if (!cases[i].scored)
			ck_assert_ptr_null(res.details);
		http_scorer_release(&s);
	}
	model_score_result_clear(&res);
	json_decref(outs);
}
END_TEST

/* The worker's signal dispositions are put back, and a SIGCHLD of SIG_IGN
 * (which would auto-reap) does not hide the scorer's exit status. */
START_TEST(test_exec_signals_restored)
{
	struct sigaction ign, cur;
	struct model_score_result res;

	memset(&ign, 0, sizeof(ign));
	sigemptyset(&ign.sa_mask);
	ign.sa_handler = SIG_IGN;
	ck_assert_int_eq(sigaction(SIGCHLD, &ign, NULL), 0);
	ign.sa_handler = SIG_DFL;
	ck_assert_int_eq(sigaction(SIGPIPE, &ign, NULL), 0);

	ck_assert_int_eq(exec_run("scorer-exit3", 5000, &res), -1);
	assert_not_scored(&res, "scorer exited with status 3");
	ck_assert_int_eq(exec_run("scorer-good", 5000, &res), 0);
	model_score_result_clear(&res);

	ck_assert_int_eq(sigaction(SIGCHLD, NULL, &cur), 0);
	ck_assert_ptr_eq((void *)cur.sa_handler, (void *)SIG_IGN);
	ck_assert_int_eq(sigaction(SIGPIPE, NULL, &cur), 0);
	ck_assert_ptr_eq((void *)cur.sa_handler, (void *)SIG_DFL);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const port[] = {test_suite_name, test_none_adapter, test_from_config_syntax,
	                             NULL};
	const TTest *const builtin[] = {test_builtin_fixture_dir, test_builtin_confinement,
	                                test_builtin_bad_files, NULL};
	const TTest *const exec[] = {test_exec_good,
	                             test_exec_empty_environment,
	                             test_exec_timeout,
	                             test_exec_failures,
	                             test_exec_answer_shapes,
	                             test_exec_signals_restored,
	                             NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("scorer");
	unit_tcase(s, "port", port);
	tc = unit_tcase(s, "builtin", builtin);
	tcase_add_checked_fixture(tc, builtin_setup, builtin_teardown);
	tcase_set_timeout(tc, 30);
	tcase_set_timeout(unit_tcase(s, "exec", exec), 30);
	return s;
}
