/*
 * The agent's interpreter against the jail (interp.h).
 */
#include "runner/interp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/agent.h"

/* model_path_probe on the runner's host: the jail binds host paths as
 * they are, so a path the jail shows exists when the host's does. */
static int probe(void *ctx, const char *host_path, char *real, size_t n)
{
	struct stat sb;
	char *r = realpath(host_path, NULL);
	int ok;

	(void)ctx;
	if (!r)
		return 0;
	ok = stat(r, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & S_IXOTH) &&
	     (size_t)snprintf(real, n, "%s", r) < n;
	free(r);
	return ok;
}

int runner_interp_check(const struct runner_spec *spec, const char *agent,
                        struct runner_summary *sum)
{
	char head[MODEL_AGENT_HEAD_BYTES];
	const char *name = spec->variant ? spec->variant : "(unnamed)";
	struct model_interp ip;
	ssize_t got;
	int fd, rc, v;

	if (!spec->agent)
		return 0;
	/* a file that cannot be read is the backend's to report, with the
	 * reason it has for any program it cannot run */
	fd = open(agent, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	got = read(fd, head, sizeof(head));
	close(fd);
	rc = got < 0 ? -1 : model_interp_parse(head, (size_t)got, &ip);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		snprintf(sum->reason, sizeof(sum->reason),
		         "agent program %s: its \"#!\" line names no interpreter", name);
		return -1;
	}
	v = model_interp_in_jail(&ip, spec->binds, probe, NULL, NULL, 0);
	if (v == MODEL_INTERP_IN_JAIL || v == MODEL_INTERP_UNKNOWN)
		return 0;
	model_interp_reason(name, &ip, v, sum->reason, sizeof(sum->reason));
	return -1;
}
