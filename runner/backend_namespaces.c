/*
 * namespaces: the agent runs in a jail of Linux namespaces with pivot_root
 * into a fresh tmpfs (runner/jail.h), and the runner drives it through the
 * agent protocol (runner/agent.h).
 *
 * isolated is 1 only when every setup step of the jail succeeded (the
 * builder reported the jail built and the agent exec'd) and the runner
 * verified from outside that the agent runs in its own namespaces, in the
 * jail's root, under seccomp, no_new_privs, no capabilities and the
 * unprivileged host uid; otherwise no step runs and the reason names the
 * failing primitive. The run's jail is always torn down before run()
 * returns: the agent, the jail's pid 1, gets its grace period to exit on
 * end of file, is SIGKILLed if it has not (the kernel kills the whole pid
 * namespace with it; a run that completed then says so in its shutdown
 * note) and is reaped; with its last process gone, the mount
 * namespace and the tmpfs in it are gone too. If pid 1 could not be
 * reaped, left_behind is set and the summary says destroyed false.
 *
 * The whole run is bounded by a cgroup of its own (runner/cgroup.h),
 * made before the jail and removed after it: memory_mb for all of the
 * jail's processes together, and cpu_seconds of their CPU time, which
 * the driver reads while it waits for the agent (io.check); a run whose
 * cgroup cannot be made fails closed. If it is not removed, left_behind
 * is set as for the jail.
 *
 * A run with a gateway (runner/gateway_run.h) gets its directory and its
 * gateway started before the jail (the gateway makes its CA while the jail
 * is built), and the jail's listening socket handed to it once the jail
 * stands; the gateway stops after the jail is gone, and a directory left
 * behind sets left_behind.
 *
 * The runner process itself stays unfiltered here: it must keep wait4,
 * kill and poll, and it is the one process outside the jail; what it reads
 * from the agent is parsed strictly and bounded (runner/agent.c).
 */
#include <stdio.h>
#include <string.h>

#include "runner/agent.h"
#include "runner/backend.h"
#include "runner/cgroup.h"
#include "runner/gateway_run.h"
#include "runner/interp.h"
#include "runner/jail.h"

/* Before every run: cheap checks only; runner_jail_start() checks every
 * primitive anyway and fails closed naming the one that is missing, and
 * so does the run's cgroup when it cannot be made. */
static int ns_preflight(struct runner_error *err)
{
	if (runner_jail_preflight(0, err) != 0)
		return -1;
	return runner_cgroup_preflight(0, err);
}

/* --preflight namespaces: also try the primitives in a throw-away child,
 * and make and remove a throw-away cgroup. */
static int ns_preflight_full(struct runner_error *err)
{
	if (runner_jail_preflight(1, err) != 0)
		return -1;
	return runner_cgroup_preflight(1, err);
}

/* One run: the jail and the cgroup that holds it. */
struct ns_run {
	struct runner_jail j;
	struct runner_cgroup cg;
};

/* The run's cgroup removed once every process of it is gone (pid 1
 * reaped): -1 with *left when it stays. */
static int ns_cgroup_remove(struct runner_cgroup *cg, struct runner_error *left)
{
	struct runner_error why;

	if (runner_cgroup_remove(cg, runner_now_ms() + RUNNER_CGROUP_RMDIR_MS, &why) != 0)
		return runner_error_set(left, RUNNER_E_LEFT_BEHIND, "%s", why.message);
	return 0;
}

/* runner_agent_teardown's destroy: the whole jail killed once the agent's
 * grace is over (the kernel kills the pid namespace with its pid 1), then
 * its cgroup removed. */
static int ns_destroy(void *ctx, long long grace_deadline_ms, int *killed,
                      struct runner_error *left)
{
	struct ns_run *r = ctx;
	int rc = runner_jail_destroy(&r->j, grace_deadline_ms);

	*killed = r->j.killed;
	if (rc != 0)
		return runner_error_set(left, RUNNER_E_LEFT_BEHIND,
		                        "the jail's pid 1 could not be reaped");
	return ns_cgroup_remove(&r->cg, left);
}

static int ns_run(const struct runner_spec *spec, FILE *out, struct runner_summary *sum)
{
	struct runner_agent_io io;
	struct runner_gateway_run gw;
	struct ns_run r;
	const char *agent = runner_agent_program(spec, "namespaces", sum);
	struct runner_error err, left;
	long long deadline;
	int rc;

	if (!agent || runner_interp_check(spec, agent, sum) != 0)
		return -1;
	deadline = runner_now_ms() + spec->limits.wall_ms;
	/* The whole-run bounds first: no jail is built without them. */
	if (runner_cgroup_make(&spec->limits, &r.cg, &err) != 0) {
		snprintf(sum->reason, sizeof(sum->reason), "namespace jail not in place: %s",
		         err.message);
		return -1;
	}
	memset(&gw, 0, sizeof(gw));
	/* The gateway starts first and readies itself (its libraries, its
	 * CA) while the jail is built: it only waits for its socket then. */
	if (spec->gateway && (runner_gateway_run_prepare(&gw, spec, &err) != 0 ||
	                      runner_gateway_run_start(&gw, &err) != 0)) {
		if (ns_cgroup_remove(&r.cg, &left) != 0)
			sum->left_behind = 1;
		goto gateway_failed;
	}
	if (runner_jail_start(spec, agent, spec->gateway ? gw.dir : NULL, &r.cg, &r.j, &err) != 0)
		goto not_in_place;
	if (spec->gateway) {
		rc = runner_gateway_run_serve(&gw, r.j.gateway_fd, deadline, &err);
		r.j.gateway_fd = -1;
		if (rc != 0)
			goto not_in_place;
	}
	sum->isolated = 1;
	memset(&io, 0, sizeof(io));
	io.gateway = spec->gateway ? &gw : NULL;
	io.err_fd = r.j.err_agent;
	io.exit_reason = runner_jail_agent_reason;
	io.end_input = runner_jail_end_input;
	io.ctx = &r.j;
	io.check = runner_cgroup_poll;
	io.check_ctx = &r.cg;
	rc = runner_agent_drive_ex(spec, r.j.to_agent, r.j.from_agent, deadline, out, sum, &io);
	/* Done or failed: the agent gets its grace period to exit on EOF,
	 * never past the run's deadline, then the whole jail is killed. */
	rc = runner_agent_teardown(spec, &io, deadline, rc, ns_destroy, &r, sum);
	runner_gateway_run_end(&gw, sum);
	return rc;
not_in_place:
	if (runner_jail_destroy(&r.j, 0) != 0 || ns_cgroup_remove(&r.cg, &left) != 0)
		sum->left_behind = 1;
gateway_failed:
	runner_gateway_run_end(&gw, sum);
	snprintf(sum->reason, sizeof(sum->reason), "namespace jail not in place: %s", err.message);
	return -1;
}

const struct runner_backend runner_backend_namespaces = {
    .name = "namespaces",
    .preflight = ns_preflight,
    .run = ns_run,
    .probe = NULL,
    .preflight_full = ns_preflight_full,
};
