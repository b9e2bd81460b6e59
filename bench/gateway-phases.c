/*
 * bench/gateway-phases: where the start and stop of an unused gateway go
 * (not part of the build; bench/gateway compiles it with cc into a temp
 * dir, three times, when BENCH_PHASES is 1).
 *
 *   gateway-phases N PROGRAM
 *
 * Starts PROGRAM (this same source, built as one of the variants below)
 * N times, one at a time, the way the runner starts olivares-gateway: fork,
 * execve with an empty environment, a socket listening on 127.0.0.1 as fd
 * 3, its stdout on a pipe. The child, once in main, takes the steps
 * olivares-gateway takes before its "ready" line (runner/gateway_main.c),
 * with the product's own functions, and writes the CLOCK_MONOTONIC time
 * (system-wide, so comparable across the two processes) after each; it
 * then waits for SIGTERM and undoes them as olivares-gateway does. The
 * variants, by what is compiled in and linked:
 *   full  (-DPHASES_FULL) libcurl, OpenSSL and jansson linked, as
 *         olivares-gateway is: curl_global_init, the run's CA
 *         (runner_gateway_ca_new, runner_gateway_ca_write_pem), the server
 *         started on fd 3 (runner_gateway_start); at SIGTERM
 *         runner_gateway_stop, runner_gateway_ca_free, curl_global_cleanup;
 *   ssl   (-DPHASES_SSL) the same without libcurl, linked with OpenSSL and
 *         jansson only, as olivares-gateway is (olivares-gateway-egress is
 *         the full one): runner_gateway_openssl_init in place of
 *         curl_global_init, then the same steps;
 *   bare  neither: a dynamic program of libc alone.
 * Prints the medians over the N starts, ms:
 *   phases n=N exec_to_main=A lib_init=B ca_new=C ca_write=D serve=E
 *          main_to_ready=F term_to_cleaned=G cleaned_to_reaped=H ca_again=I
 *          total=T
 * exec_to_main is from just before fork to the child's first instruction of
 * main (fork, exec, the dynamic linker's loading and relocation of every
 * library, their constructors); main_to_ready is from there to the parent's
 * read of the child's ready line; term_to_cleaned from the parent's SIGTERM
 * to the end of the child's cleanup; cleaned_to_reaped from there to the
 * parent's waitpid (exit: the address space and its mappings torn down;
 * the child's last line, written after ca_again, starts it); ca_again a
 * second CA made after the cleanup, when OpenSSL has started already (the
 * key and the certificate alone, not part of any other phase);
 * total the sum of the medians of those four (the parent's own pause
 * between the ready line and its SIGTERM left out).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(PHASES_FULL) || defined(PHASES_SSL)
#include "runner/gateway.h"
#endif
#ifdef PHASES_FULL
#include <curl/curl.h>
#endif

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#if defined(PHASES_FULL) || defined(PHASES_SSL)
static int answer(void *ctx, const struct runner_gateway_request *rq,
                  struct runner_gateway_response *rs)
{
	(void)ctx;
	(void)rq;
	(void)rs;
	return -1;
}

static void refused(void *ctx, const struct runner_gateway_request *rq, const char *reason)
{
	(void)ctx;
	(void)rq;
	(void)reason;
}
#endif

/* The child: "T_MAIN T_CURL T_CA T_PEM T_SERVE\n" once ready (a phase not
 * compiled in takes the time before it), "T_TERM T_CLEANED CA_AGAIN_MS
 * T_LINE\n" once cleaned up after SIGTERM (CA_AGAIN_MS: a second CA made
 * after the cleanup, timed; T_LINE: just before that line). */
static int child(const char *dir)
{
	double t[7], again;
	sigset_t set;
	int sig;
#if defined(PHASES_FULL) || defined(PHASES_SSL)
	struct runner_gateway_hooks hooks = {.answer = answer, .refused = refused, .ctx = NULL};
	struct runner_gateway_ca *ca;
	struct runner_gateway *gw;
	struct runner_error err;
	char path[4096];
#endif

	t[0] = now_ms();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
#ifdef PHASES_FULL
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
#elif defined(PHASES_SSL)
	if (runner_gateway_openssl_init(&err) != 0)
		return 1;
#endif
	t[1] = now_ms();
#if defined(PHASES_FULL) || defined(PHASES_SSL)
	ca = runner_gateway_ca_new(&err);
	if (!ca)
		return 1;
	t[2] = now_ms();
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	if (runner_gateway_ca_write_pem(ca, path, &err) != 0)
		return 1;
	t[3] = now_ms();
	gw = runner_gateway_start(3, ca, &hooks, &err);
	if (!gw)
		return 1;
#else
	(void)dir;
	t[2] = t[3] = t[1];
#endif
	t[4] = now_ms();
	printf("%.4f %.4f %.4f %.4f %.4f\n", t[0], t[1], t[2], t[3], t[4]);
	fflush(stdout);
	while (sigwait(&set, &sig) != 0)
		;
	t[5] = now_ms();
#if defined(PHASES_FULL) || defined(PHASES_SSL)
	runner_gateway_stop(gw);
	runner_gateway_ca_free(ca);
	unlink(path);
#endif
#ifdef PHASES_FULL
	curl_global_cleanup();
#endif
	t[6] = now_ms();
	again = 0;
#if defined(PHASES_FULL) || defined(PHASES_SSL)
	/* a second CA, OpenSSL's first use behind it: the key and the
	 * certificate alone */
	ca = runner_gateway_ca_new(&err);
	again = now_ms() - t[6];
	runner_gateway_ca_free(ca);
#endif
	printf("%.4f %.4f %.4f %.4f\n", t[5], t[6], again, now_ms());
	fflush(stdout);
	return 0;
}

static int listen_loopback(void)
{
	struct sockaddr_in sin;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(s, 16) != 0) {
		close(s);
		return -1;
	}
	return s;
}

/* One start and stop of program: the phases into ph[0..9), 0 when every
 * line came. */
static int one(const char *program, double ph[9])
{
	char *const envp[] = {NULL};
	char dir[] = "/tmp/olv-bench-phases.XXXXXX";
	double t0, ready, term, reaped, c[9];
	char buf[512];
	FILE *f;
	pid_t pid;
	int out[2], ls, st, rc = -1;

	if (!mkdtemp(dir) || (ls = listen_loopback()) < 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	t0 = now_ms();
	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)"gateway-phases", (char *)"--child", dir, NULL};

		/* dup2 onto itself keeps close-on-exec */
		if (dup2(out[1], 1) < 0 || (ls == 3 ? fcntl(3, F_SETFD, 0) : dup2(ls, 3)) < 0)
			_exit(126);
		execve(program, argv, envp);
		_exit(127);
	}
	close(out[1]);
	close(ls);
	f = fdopen(out[0], "r");
	if (pid < 0 || !f)
		goto out;
	if (!fgets(buf, sizeof(buf), f) ||
	    sscanf(buf, "%lf %lf %lf %lf %lf", &c[0], &c[1], &c[2], &c[3], &c[4]) != 5)
		goto reap;
	ready = now_ms();
	term = now_ms();
	kill(pid, SIGTERM);
	if (!fgets(buf, sizeof(buf), f) ||
	    sscanf(buf, "%lf %lf %lf %lf", &c[5], &c[6], &c[7], &c[8]) != 4)
		goto reap;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	reaped = now_ms();
	ph[0] = c[0] - t0;
	ph[1] = c[1] - c[0];
	ph[2] = c[2] - c[1];
	ph[3] = c[3] - c[2];
	ph[4] = c[4] - c[3];
	ph[5] = ready - c[0];
	ph[6] = c[6] - term;
	ph[7] = reaped - c[8];
	ph[8] = c[7];
	rc = 0;
	pid = -1;
reap:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
out:
	if (f)
		fclose(f);
	else
		close(out[0]);
	/* a child that failed after its CA was written leaves it */
	snprintf(buf, sizeof(buf), "%s/ca.pem", dir);
	unlink(buf);
	rmdir(dir);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
	    "exec_to_main",    "lib_init",          "ca_new",  "ca_write", "serve", "main_to_ready",
	    "term_to_cleaned", "cleaned_to_reaped", "ca_again"};
	double *v[9], ph[9], total;
	long n, i, k;

	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child(argv[2]);
	if (argc != 3 || (n = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: %s N PROGRAM\n", argv[0]);
		return 2;
	}
	for (k = 0; k < 9; k++)
		v[k] = calloc((size_t)n, sizeof(double));
	for (i = 0; i < n; i++) {
		if (one(argv[2], ph) != 0) {
			fprintf(stderr, "%s: a start of %s failed\n", argv[0], argv[2]);
			return 1;
		}
		for (k = 0; k < 9; k++)
			v[k][i] = ph[k];
	}
	printf("phases n=%ld", n);
	total = 0;
	for (k = 0; k < 9; k++) {
		ph[k] = median(v[k], n);
		if (k == 0 || (k >= 5 && k <= 7))
			total += ph[k];
		printf(" %s=%.3f", names[k], ph[k]);
		free(v[k]);
	}
	printf(" total=%.3f\n", total);
	return 0;
}
