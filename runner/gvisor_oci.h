#ifndef OLIVARES_RUNNER_GVISOR_OCI_H
#define OLIVARES_RUNNER_GVISOR_OCI_H
/*
 * The OCI runtime configuration (config.json, runtime spec 1.0) of a
 * gvisor run, built from its spec; the backend writes it into the bundle
 * and checks from outside that runsc applied it (runner/backend_gvisor.c).
 */
#include <jansson.h>

#include "runner/backend.h"

/**
 * The sandbox's host memory limit, bytes: the whole run's memory_mb and
 * the sentry's and gofer's own share (RUNNER_GV_MEM_BASE_MB), once for all
 * the agent's processes together. The backend checks the sandbox's
 * cgroup holds exactly this.
 */
json_int_t runner_gv_memory_limit(const struct runner_limits *l);

/**
 * config.json for spec: binds (a JSON array of absolute host paths, bound
 * read-only at the same place), the agent program bound read-only at
 * /agent, exec (olivares-agent-exec, agents/agent-exec.c) bound read-only
 * at /agent-exec and run as the container's process (it moves the
 * protocol's descriptors and execs /agent; the environment names them,
 * runner/agent.h), the host tmpfs at tmp bound writable at /tmp, uid/gid 65534, no
 * capability, the spec's rlimits, the host pids and memory limits, and a
 * seccomp section the Sentry applies to the agent; with gateway_dir (a run
 * with a gateway, runner/gateway_env.h) that directory bound read-only at
 * RUNNER_GATEWAY_JAIL_DIR and RUNNER_GATEWAY_ENV in the environment.
 * Returns a new
 * reference (the caller owns it), or NULL when out of memory.
 */
json_t *runner_gv_oci_config(const struct runner_spec *spec, json_t *binds, const char *agent,
                             const char *exec, const char *tmp, const char *gateway_dir);

#endif
