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
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int fail(const char *what)
{
	static const char pre[] = "olivares-agent-exec: cannot ";

	/* with no stderr either, the exit status says it alone */
	if (write(2, pre, sizeof(pre) - 1) > 0 && write(2, what, strlen(what)) > 0)
		(void)!write(2, "\n", 1);
	return 127;
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
	execve("/agent", argv, environ);
	return fail("exec /agent");
}
