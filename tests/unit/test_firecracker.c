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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the host stands in for, case by case. */
enum fc_host { FC_NO_BINARY, FC_NO_KERNEL, FC_NO_ROOTFS, FC_ALL };

static const char *runner_path(void)
{
	const char *p = getenv("OLIVARES_RUNNER");

	ck_assert_msg(p && *p, "OLIVARES_RUNNER is not set (make check sets it)");
	ck_assert_msg(access(p, X_OK) == 0, "OLIVARES_RUNNER=%s is not executable", p);
	return p;
}

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

/* In the child: a private mount namespace holding the host of case c. */
static int stand_in(enum fc_host c)
{
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

/* Run `runner args...` on host case c with input on stdin; the last line
 * of its stdout as JSON (the preflight line or the summary), and the
 * number of step lines in *steps. */
static json_t *run_on(enum fc_host c, const char *const *args, const char *input, int *steps)
{
	static char *const env[] = {"HOME=/root", NULL};
	char buf[65536], *line, *save = NULL;
	json_t *last = NULL, *j;
	size_t len = 0;
	ssize_t n;
	int in[2], out[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (stand_in(c) != 0)
			_exit(125);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execve(args[0], (char *const *)args, env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (input)
		ck_assert_int_eq(write(in[1], input, strlen(input)), (ssize_t)strlen(input));
	close(in[1]);
	while (len < sizeof(buf) - 1 && (n = read(out[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(out[0]);
	buf[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 125,
	              "the stand-in host could not be set up");
	*steps = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		j = json_loads(line, 0, NULL);
		ck_assert_msg(j != NULL, "runner line is not JSON: %s", line);
		if (strcmp(json_string_value(json_object_get(j, "type")), "step") == 0)
			(*steps)++;
		json_decref(last);
		last = j;
	}
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
	const char *pf[] = {runner_path(), "--preflight", "firecracker", NULL};
	const char *run[] = {runner_path(), "--backend", "firecracker", NULL};
	const char *spec =
	    "{\"variant\":\"candidate\",\"steps\":[{\"key\":\"step-1\","
	    "\"input\":\"agent:user1@example.test\"}],\"mocks\":[{\"resource\":"
	    "\"agent:user1@example.test\",\"response\":\"first synthetic account\"}]}";
	json_t *j;
	int steps;

	j = run_on(c, pf, NULL, &steps);
	ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "preflight");
	ck_assert_int_eq(json_is_true(json_object_get(j, "ok")), ok);
	if (reason)
		ck_assert_msg(matches(json_string_value(json_object_get(j, "reason")), reason),
		              "preflight reason: %s", json_string_value(json_object_get(j, "reason")));
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
	Suite *s = suite_create("firecracker");
	TCase *tc = tcase_create("gate");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gate_in_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
