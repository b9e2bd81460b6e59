/*
 * The firecracker gate (runner/backend_firecracker.c) past its first
 * missing primitive. Each case runs the built runner in a mount namespace
 * of its own where tmpfs mounts stand in for what the host has or lacks
 * (a firecracker binary in /usr/local/bin and /usr/bin, the guest kernel
 * and root filesystem under /var/lib/olivares/firecracker), so nothing of
 * the host is changed: the preflight names each missing primitive in its
 * order, and a run fails closed in every case, with all of them present
 * too ("not implemented"), never with a step or isolated true.
 *
 * Needs root (the mount namespace) and a usable /dev/kvm, the first
 * primitive; without them it checks what it can and says what it skipped.
 * The expected reasons are written out, not recomputed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/runner_harness.h"

/* What the host stands in for, case by case. */
enum fc_host { FC_NO_BINARY, FC_NO_KERNEL, FC_NO_ROOTFS, FC_ALL };

static int kvm_usable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0)
		return -1;
	if (write(fd, "stand-in\n", 9) != 9) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* In the child: a private mount namespace holding the host of case *ctx
 * (an enum fc_host). */
static int stand_in(void *ctx)
{
	enum fc_host c = *(const enum fc_host *)ctx;

	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -1;
	/* no firecracker binary at either place unless the case has one */
	if (mount("tmpfs", "/usr/local/bin", "tmpfs", 0, "size=1m") != 0 ||
	    mount("tmpfs", "/usr/bin", "tmpfs", 0, "size=1m") != 0 ||
	    mount("tmpfs", "/var/lib", "tmpfs", 0, "size=1m") != 0)
		return -1;
	if (mkdir("/var/lib/olivares", 0755) != 0 ||
	    mkdir("/var/lib/olivares/firecracker", 0755) != 0)
		return -1;
	if (c >= FC_NO_KERNEL && make_file("/usr/local/bin/firecracker", 0755) != 0)
		return -1;
	if (c >= FC_NO_ROOTFS && make_file("/var/lib/olivares/firecracker/vmlinux", 0644) != 0)
		return -1;
	if (c >= FC_ALL && make_file("/var/lib/olivares/firecracker/rootfs.ext4", 0644) != 0)
		return -1;
	return 0;
}

/* Run `runner args...` on host case c with spec on stdin (NULL: none); the
 * last line of its stdout as JSON (the preflight line or the summary, a
 * new reference), and the number of step lines in *steps. */
static json_t *run_on(enum fc_host c, const char *const *args, json_t *spec, int *steps)
{
	static char *const env[] = {"HOME=/root", NULL};
	struct result r;
	json_t *last;
	int fd;
	pid_t pid;

	pid = spawn_runner_with(args, spec, env, stand_in, &c, &fd);
	r = collect(pid, fd, now_ms());
	ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 126,
	              "the stand-in host could not be set up");
	*steps = (int)json_array_size(r.steps);
	last = json_incref(r.summary);
	result_free(&r);
	ck_assert_msg(last != NULL, "no line from the runner");
	return last;
}

/* Does s start with the n bytes of prefix? */
static int starts(const char *s, const char *prefix, size_t n)
{
	return s && strncmp(s, prefix, n) == 0;
}

/* Is got what want says: want itself, or, ending in "*", a prefix? */
static int matches(const char *got, const char *want)
{
	size_t n = strlen(want);

	if (n && want[n - 1] == '*')
		return starts(got, want, n - 1);
	return got && strcmp(got, want) == 0;
}

/* The preflight on case c gives ok and reason; a run of the page's first
 * step fails closed with run_reason. A reason ending in "*" is a prefix. */
static void check_case(enum fc_host c, int ok, const char *reason, const char *run_reason)
{
	const char *pf[] = {env_path("OLIVARES_RUNNER"), "--preflight", "firecracker", NULL};
	const char *run[] = {env_path("OLIVARES_RUNNER"), "--backend", "firecracker", NULL};
	json_t *spec = spec_new("candidate", NULL);
	json_t *j;
	int steps;

	spec_step(spec, "step-1", "agent:user1@example.test");
	spec_mock(spec, "agent:user1@example.test", "first synthetic account", NULL);

	j = run_on(c, pf, NULL, &steps);
	ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "preflight");
	ck_assert_int_eq(json_is_true(json_object_get(j, "ok")), ok);
	if (reason)
		ck_assert_msg(matches(json_string_value(json_object_get(j, "reason")), reason),
		              "preflight reason: %s",
		              json_string_value(json_object_get(j, "reason")));
	else
		ck_assert(json_is_null(json_object_get(j, "reason")));
	json_decref(j);

	j = run_on(c, run, spec, &steps);
	ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "summary");
	ck_assert_str_eq(json_string_value(json_object_get(j, "backend")), "firecracker");
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "failed");
	ck_assert(json_is_false(json_object_get(j, "isolated")));
	ck_assert_int_eq(json_integer_value(json_object_get(j, "steps_total")), 0);
	ck_assert_int_eq(steps, 0);
	ck_assert_msg(matches(json_string_value(json_object_get(j, "reason")), run_reason),
	              "run reason: %s", json_string_value(json_object_get(j, "reason")));
	json_decref(j);
	json_decref(spec);
}

START_TEST(test_gate_in_order)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_firecracker: needs root for its mount namespaces: skipped\n");
		return;
	}
	if (!kvm_usable()) {
		/* the first primitive missing (absent, or not usable): every
		 * case stops at it */
		check_case(FC_ALL, 0, "/dev/kvm not *",
		           "backend firecracker unavailable: /dev/kvm not *");
		fprintf(stderr,
		        "test_firecracker: no usable /dev/kvm here: later primitives skipped\n");
		return;
	}
	check_case(FC_NO_BINARY, 0,
	           "firecracker binary not found (looked in /usr/bin, /usr/local/bin)",
	           "backend firecracker unavailable: firecracker binary not found (looked in "
	           "/usr/bin, /usr/local/bin)");
	check_case(FC_NO_KERNEL, 0,
	           "firecracker kernel /var/lib/olivares/firecracker/vmlinux not found",
	           "backend firecracker unavailable: firecracker kernel "
	           "/var/lib/olivares/firecracker/vmlinux not found");
	check_case(FC_NO_ROOTFS, 0,
	           "firecracker rootfs /var/lib/olivares/firecracker/rootfs.ext4 not found",
	           "backend firecracker unavailable: firecracker rootfs "
	           "/var/lib/olivares/firecracker/rootfs.ext4 not found");
	/* everything there: the gate opens, and the run still fails closed */
	check_case(FC_ALL, 1, NULL, "firecracker runs are not implemented in this version");
}
END_TEST

int main(void)
{
	const TTest *const gate[] = {test_gate_in_order, NULL};
	Suite *s = suite_create("firecracker");

	/* a runner that fails closed may exit before it reads its spec */
	signal(SIGPIPE, SIG_IGN);
	suite_add_tests(s, "gate", 60, gate);
	return suite_main(s, CK_NORMAL);
}
