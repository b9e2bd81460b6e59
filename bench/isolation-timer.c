/*
 * bench/isolation-timer: the timing harness of bench/isolation (not part of
 * the build; bench/isolation compiles it with cc into a temp dir, with
 * fcgi/run/runner_server.c, fcgi/run/spawn.c, model/buf.c and model/alloc.c).
 *
 *   isolation-timer [--samples] [--served] N WARMUP INPUT EXPECT -- PROGRAM [ARG...]
 *
 * Starts PROGRAM N times (after WARMUP untimed starts), one at a time, the
 * way the worker starts the runner: posix_spawn with stdin, stdout and
 * stderr on pipes, an empty environment; writes the file INPUT ("-" for
 * nothing) to its stdin, reads its stdout to EOF, reaps it. The time of one
 * iteration is from just before posix_spawn to just after waitpid
 * (CLOCK_MONOTONIC). A run counts as good when it exits 0 and, if EXPECT is
 * not "-", its stdout contains EXPECT. The CPU time of one iteration is
 * the user + system time wait4() reports for PROGRAM, which includes every
 * descendant it reaped (for the runner: the jail's pid 1 and, through it,
 * the agent); work the kernel defers to its own threads (freeing a network
 * namespace) is not in it. Prints one line:
 *   n=N good=G median_ms=M p95_ms=P min_ms=X max_ms=Y cpu_median_ms=C
 * Exit 0 when every run was good.
 *
 * --served: the way the worker starts olivares-runner, with the worker's
 * own code (fcgi/run/runner_server.c, compiled in by bench/isolation). PROGRAM
 * is started once, by the first warm-up start (at least one), as
 * `PROGRAM --serve`; each start hands it ARG... and the three pipe ends,
 * and ends when stdout is at EOF and the server has reported the runner's
 * end, whose wait status and CPU time (the runner and every process it
 * reaped) are used as wait4's are otherwise. To each start's CPU time is
 * added the server's own CPU time over the timed starts divided by N (its
 * forks of the runners, which the runners' own times leave out).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/run/runner_server.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f;
	char *buf = NULL;
	long n;

	*len = 0;
	if (strcmp(path, "-") == 0)
		return calloc(1, 1);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* --served: the program whose fork server runs the starts. */
static const char *served_program;

/* The CPU time the fork server itself has used, ms (its forks of the
 * runners are its own work): /proc/PID/schedstat's first field, ns. */
static double server_cpu_ms(void)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)http_runner_server_pid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return (double)ns / 1e6;
}

/* One start: returns 1 when good, 0 when not, -1 when it could not start. */
static int one(char *const argv[], const char *input, size_t input_len, const char *expect,
               char *out, size_t out_cap, double *cpu_ms)
{
	long long end_cpu_us = 0;
	int srv_sock, runner_pidfd = -1;
	struct rusage ru;
	static char *const envp[] = {NULL};
	posix_spawn_file_actions_t fa;
	int in[2], o[2], e[2];
	struct pollfd pfd[3];
	size_t written = 0, got = 0;
	char sink[4096];
	pid_t pid;
	ssize_t r;
	int status = 0, rc, open_fds;

	*cpu_ms = 0;
	if (pipe2(in, O_CLOEXEC) || pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -1;
	if (served_program) {
		rc = http_runner_server_start(served_program, (char *const *)argv, in[0], o[1],
		                              e[1], 60000, &pid, &runner_pidfd, &srv_sock);
	} else {
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, o[1], 1);
		posix_spawn_file_actions_adddup2(&fa, e[1], 2);
		rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in[0]);
	close(o[1]);
	close(e[1]);
	if (rc) {
		close(in[1]);
		close(o[0]);
		close(e[0]);
		errno = rc;
		return -1;
	}
	if (input_len == 0) {
		close(in[1]);
		in[1] = -1;
	}
	out[0] = '\0';
	for (;;) {
		open_fds = 0;
		pfd[0].fd = in[1];
		pfd[0].events = POLLOUT;
		pfd[1].fd = o[0];
		pfd[1].events = POLLIN;
		pfd[2].fd = e[0];
		pfd[2].events = POLLIN;
		open_fds = (in[1] >= 0) + (o[0] >= 0) + (e[0] >= 0);
		if (!open_fds)
			break;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (in[1] >= 0 && pfd[0].revents) {
			r = write(in[1], input + written, input_len - written);
			if (r > 0)
				written += (size_t)r;
			if (r < 0 || written == input_len) {
				close(in[1]);
				in[1] = -1;
			}
		}
		if (o[0] >= 0 && pfd[1].revents) {
			r = read(o[0], sink, sizeof(sink));
			if (r <= 0) {
				close(o[0]);
				o[0] = -1;
			} else if (got + (size_t)r < out_cap) {
				memcpy(out + got, sink, (size_t)r);
				got += (size_t)r;
				out[got] = '\0';
			}
		}
		if (e[0] >= 0 && pfd[2].revents) {
			r = read(e[0], sink, sizeof(sink));
			if (r <= 0) {
				close(e[0]);
				e[0] = -1;
			}
		}
	}
	if (served_program) {
		close(runner_pidfd);
		if (http_runner_server_wait(pid, -1, &status, &end_cpu_us) != 0)
			return -1;
		*cpu_ms = (double)end_cpu_us / 1000.0;
	} else {
		memset(&ru, 0, sizeof(ru));
		while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
		*cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
		          (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       (strcmp(expect, "-") == 0 || strstr(out, expect) != NULL);
}

int main(int argc, char **argv)
{
	static char out[1 << 20];
	double *t, *cpu;
	double t0, c, server0, share;
	int *oks;
	char *input;
	size_t input_len;
	long n, warm, i, good = 0;
	int samples = 0, served = 0;
	int r;

	if (argc > 1 && strcmp(argv[1], "--samples") == 0) {
		samples = 1;
		argv++;
		argc--;
	}
	if (argc > 1 && strcmp(argv[1], "--served") == 0) {
		served = 1;
		argv++;
		argc--;
	}
	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr,
		        "usage: %s [--samples] [--served] N WARMUP INPUT EXPECT -- PROGRAM "
		        "[ARG...]\n",
		        argv[0]);
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	warm = strtol(argv[2], NULL, 10);
	input = slurp(argv[3], &input_len);
	if (n < 1 || warm < 0 || !input) {
		fprintf(stderr, "%s: bad N, WARMUP or INPUT\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (served)
		served_program = argv[6]; /* started by the first start, untimed: a warm-up */
	if (served && warm < 1)
		warm = 1;
	t = calloc((size_t)n, sizeof(*t));
	cpu = calloc((size_t)n, sizeof(*cpu));
	oks = calloc((size_t)n, sizeof(*oks));
	for (i = 0; i < warm; i++)
		one(argv + 6, input, input_len, argv[4], out, sizeof(out), &c);
	server0 = served ? server_cpu_ms() : 0;
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		r = one(argv + 6, input, input_len, argv[4], out, sizeof(out), &cpu[i]);
		t[i] = now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "%s: cannot start %s: %s\n", argv[0], argv[6],
			        strerror(errno));
			return 1;
		}
		good += r;
		oks[i] = r;
		if (!r && good == i)
			fprintf(stderr, "first bad run's output: %.300s\n", out);
	}
	share = served ? (server_cpu_ms() - server0) / (double)n : 0;
	for (i = 0; i < n; i++) {
		cpu[i] += share;
		if (samples)
			printf("sample %.3f %.3f %d\n", t[i], cpu[i], oks[i]);
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	qsort(cpu, (size_t)n, sizeof(*cpu), cmp_double);
	printf("n=%ld good=%ld median_ms=%.3f p95_ms=%.3f min_ms=%.3f max_ms=%.3f "
	       "cpu_median_ms=%.3f\n",
	       n, good, n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2,
	       t[(size_t)((double)n * 0.95 + 0.999) - 1], t[0], t[n - 1],
	       n % 2 ? cpu[n / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2);
	free(t);
	free(cpu);
	free(oks);
	free(input);
	return good == n ? 0 : 1;
}
