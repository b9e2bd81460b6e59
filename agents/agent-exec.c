/*
 * olivares-agent-exec: the first program of a gvisor run's container, run
 * as the container's process at /agent-exec; it execs the agent at once
 * (the agent is then the container's process, pid 1 of its sandbox).
 *
 * Why it exists: the runsc of the supported hosts hands a container its
 * three stdio descriptors and no other (it has no --preserve-fds), while
 * an agent speaks its protocol on descriptors 3 and 4 and logs on stdout
 * and stderr (runner/agent.h). The runner gives runsc the protocol's
 * pipes as the container's stdin and stdout and the log pipe as its
 * stderr; this program moves them where the agent expects them: 0 to 3,
 * 1 to 4, 2 to 1 (stdout and stderr on the one log pipe), /dev/null (the
 * sandbox's) on 0, then execs /agent with its environment as it is (the
 * OCI process's, which names the descriptors). Statically linked, no
 * library, nothing else: a failure is said on stderr, in the run's log,
 * and the exit status 127 ends the run as an agent that died.
 *
 * In a run with a gateway (its socket is at RUNNER_GATEWAY_SOCK_PATH) it
 * first forks the relay: a process that listens on 127.0.0.1:
 * RUNNER_GATEWAY_PORT of the sandbox's own network and carries each
 * connection, byte for byte, to a connection of its own to the gateway's
 * socket (runsc --host-uds=open lets it connect there), so that the agent
 * finds the gateway where it does on namespaces. The agent execs only
 * once the relay listens. The relay is a child of the agent's process and
 * dies with the sandbox; it reads nothing and decides nothing (the
 * gateway, outside, does).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runner/gateway_env.h"

extern char **environ;

static int fail(const char *what)
{
	static const char pre[] = "olivares-agent-exec: cannot ";

	/* with no stderr either, the exit status says it alone */
	if (write(2, pre, sizeof(pre) - 1) > 0 && write(2, what, strlen(what)) > 0)
		(void)!write(2, "\n", 1);
	return 127;
}

/* ---- the relay ---------------------------------------------------------- */

/* Connections carried at once (the gateway's own bound is the same). */
#define RELAY_MAX 32
#define RELAY_BUF 16384

/* One connection: side 0 the agent's, side 1 the gateway's; buf[i] holds
 * what came from side i, not yet written to the other. */
struct relay_pair {
	int fd[2];
	char buf[2][RELAY_BUF];
	size_t len[2], off[2];
	int eof[2];
};

static struct relay_pair pairs[RELAY_MAX];

static void pair_close(struct relay_pair *p)
{
	close(p->fd[0]);
	close(p->fd[1]);
	memset(p, 0, sizeof(*p));
	p->fd[0] = p->fd[1] = -1;
}

static int gateway_connect(void)
{
	struct sockaddr_un sun;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, RUNNER_GATEWAY_SOCK_PATH, sizeof(RUNNER_GATEWAY_SOCK_PATH));
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		close(s);
		return -1;
	}
	return s;
}

/* Move what side i of p can give or take now; 0, or -1 when p is done. */
static int pair_step(struct relay_pair *p, int i, short rev)
{
	ssize_t r;
	int o = 1 - i;

	if ((rev & (POLLIN | POLLHUP | POLLERR)) && !p->eof[i] && p->len[i] == 0) {
		r = read(p->fd[i], p->buf[i], RELAY_BUF);
		if (r > 0) {
			p->len[i] = (size_t)r;
			p->off[i] = 0;
		} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
			p->eof[i] = 1;
			shutdown(p->fd[o], SHUT_WR);
		}
	}
	if ((rev & POLLOUT) && p->len[o] > 0) {
		r = write(p->fd[i], p->buf[o] + p->off[o], p->len[o] - p->off[o]);
		if (r < 0 && errno != EINTR && errno != EAGAIN)
			return -1;
		if (r > 0) {
			p->off[o] += (size_t)r;
			if (p->off[o] == p->len[o])
				p->len[o] = p->off[o] = 0;
		}
	}
	return p->eof[0] && p->eof[1] && !p->len[0] && !p->len[1] ? -1 : 0;
}

static void __attribute__((noreturn)) relay_main(int ready)
{
	struct pollfd pfd[1 + 2 * RELAY_MAX];
	struct sockaddr_in sin;
	struct relay_pair *p;
	int at[RELAY_MAX];
	int l, c, g, one = 1, n, i, k, side;

	for (i = 0; i < RELAY_MAX; i++)
		pairs[i].fd[0] = pairs[i].fd[1] = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(RUNNER_GATEWAY_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(l, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(l, RUNNER_GATEWAY_BACKLOG) != 0)
		_exit(fail("listen on the gateway's port in the sandbox"));
	(void)!write(ready, "r", 1);
	close(ready);
	for (;;) {
		/* the pairs in use only: poll() refuses more descriptors than
		 * RLIMIT_NOFILE, which may be small */
		n = 0;
		pfd[n].fd = l;
		pfd[n].events = POLLIN;
		pfd[n++].revents = 0;
		for (i = 0; i < RELAY_MAX; i++) {
			p = &pairs[i];
			if (p->fd[0] < 0)
				continue;
			at[i] = n;
			for (side = 0; side < 2; side++) {
				pfd[n].fd = p->fd[side];
				pfd[n].events = 0;
				if (!p->eof[side] && p->len[side] == 0)
					pfd[n].events |= POLLIN;
				if (p->len[1 - side] > 0)
					pfd[n].events |= POLLOUT;
				pfd[n].revents = 0;
				n++;
			}
		}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(fail("poll in the gateway's relay"));
		}
		for (i = 0; i < RELAY_MAX; i++) {
			p = &pairs[i];
			if (p->fd[0] < 0)
				continue;
			k = at[i];
			if (pair_step(p, 0, pfd[k].revents) != 0 ||
			    pair_step(p, 1, pfd[k + 1].revents) != 0)
				pair_close(p);
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		c = accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		for (i = 0; i < RELAY_MAX && pairs[i].fd[0] >= 0; i++)
			;
		g = i < RELAY_MAX ? gateway_connect() : -1;
		if (g < 0) {
			/* full, or the gateway is gone: the agent sees a reset */
			close(c);
			continue;
		}
		fcntl(g, F_SETFL, O_NONBLOCK);
		pairs[i].fd[0] = c;
		pairs[i].fd[1] = g;
	}
}

/* Fork the relay and wait until it listens. 0, or -1. */
static int relay_start(void)
{
	int ready[2];
	char byte;
	pid_t pid;

	if (pipe(ready) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(ready[0]);
		close(3);
		close(4);
		/* its own descriptors only: no protocol, no log but stderr */
		relay_main(ready[1]);
	}
	close(ready[1]);
	if (read(ready[0], &byte, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return 0;
}

int main(void)
{
	char *argv[] = {(char *)"agent", NULL};

	if (dup2(0, 3) < 0 || dup2(1, 4) < 0)
		return fail("move the protocol's descriptors");
	if (dup2(2, 1) < 0)
		return fail("move the log's descriptor");
	close(0);
	if (open("/dev/null", O_RDONLY) != 0)
		return fail("open /dev/null");
	if (access(RUNNER_GATEWAY_SOCK_PATH, F_OK) == 0 && relay_start() != 0)
		return fail("start the gateway's relay");
	execve("/agent", argv, environ);
	return fail("exec /agent");
}
