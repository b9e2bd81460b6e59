/* Placeholder while the firecracker backend is being written: it can never run,
 * so every run on it fails closed with this reason. */
#include <stdio.h>

#include "runner/backend.h"

static int firecracker_preflight(char *why, size_t n)
{
	snprintf(why, n, "firecracker backend is not built in this version");
	return -1;
}

static int firecracker_run(const struct runner_spec *spec, FILE *out, struct runner_summary *sum)
{
	(void)spec;
	(void)out;
	sum->status = "failed";
	sum->isolated = 0;
	snprintf(sum->reason, sizeof(sum->reason), "firecracker backend is not built in this version");
	return -1;
}

const struct runner_backend runner_backend_firecracker = {
    .name = "firecracker",
    .preflight = firecracker_preflight,
    .run = firecracker_run,
    .probe = NULL,
};
