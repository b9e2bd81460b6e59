/*
 * bench/gateway-stub: a stand-in for olivares-gateway that keeps its wire
 * (runner/gateway_run.h) and does nothing else (not part of the build;
 * bench/gateway compiles it with cc -static into a temp dir, as
 * olivares-gateway beside a copy of olivares-runner). It reads its stdin
 * to end of file, then the message on fd 3 that brings its socket (which
 * it drops), says {"type":"ready"}, and exits on SIGTERM: a run with
 * it costs what a run with a gateway costs less the gateway's own work
 * (its libraries, OpenSSL, the CA, the server), that is the runner's side
 * of the wiring: the run's directory and its bind mount in the jail, the
 * jail's loopback and listening socket, the socket handed out of the jail,
 * a process started and stopped.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const char ready[] = "{\"type\":\"ready\"}\n";
	char buf[65536];
	sigset_t set;
	ssize_t r;
	int sig;

	/* no gateway server: the runner execs this stub for every run, so
	 * that the row keeps measuring the wiring with a process of its own */
	if (argc == 2 && strcmp(argv[1], "--serve") == 0)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	do
		r = read(0, buf, sizeof(buf));
	while (r > 0 || (r < 0 && errno == EINTR));
	do
		r = read(3, buf, sizeof(buf));
	while (r < 0 && errno == EINTR);
	if (r != 1)
		return 1;
	if (write(1, ready, sizeof(ready) - 1) != (ssize_t)sizeof(ready) - 1)
		return 1;
	while (sigwait(&set, &sig) != 0)
		;
	return 0;
}
