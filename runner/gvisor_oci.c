/*
 * The gvisor backend's OCI bundle, as JSON (runner/gvisor_oci.h): the
 * config.json that `runsc create` reads, with the sandbox's seccomp
 * section, rlimits, mounts and host cgroup limits. No I/O here: the
 * backend (runner/backend_gvisor.c) writes it into the bundle.
 */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <string.h>

#include "runner/agent.h"
#include "runner/gvisor_oci.h"
#include "runner/gateway_env.h"
#include "runner/limits.h"

/* What the agent is refused inside the sandbox, with EPERM, by the OCI
 * seccomp filter the sentry applies (runsc --oci-seccomp): the mount,
 * namespace and cross-process calls the namespaces backend's filter
 * refuses for the same reason (an agent may neither mount nor ptrace),
 * the new mount API included; clone3 is named by no rule (oci_seccomp). Every
 * name must be one this runsc knows: an unknown one fails runsc create
 * (the run fails closed). */
/* clang-format off */
static const char *const gv_refused[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    NULL,
};
/* clang-format on */

/* uid and gid of the agent inside the sandbox. */
#define GV_UID 65534
#define GV_GID 65534

static json_t *rlimit(const char *type, long long v)
{
	return json_pack("{s:s, s:I, s:I}", "type", type, "hard", (json_int_t)v, "soft",
	                 (json_int_t)v);
}

static json_t *bind_mount(const char *src, const char *dst, int writable)
{
	return json_pack("{s:s, s:s, s:s, s:[s,s,s,s]}", "destination", dst, "type", "bind",
	                 "source", src, "options", "rbind", writable ? "rw" : "ro", "nosuid",
	                 "nodev");
}

/*
 * linux.seccomp of config.json: gv_refused get EPERM, and so does a
 * clone() with any of gv_clone_ns among its flags (unshare refused alone
 * would be a half-truth: clone(CLONE_NEWUSER) made a user namespace);
 * everything else is allowed (the sentry's own emulation bounds it).
 *
 * No rule names clone3, on purpose. Its flags are in memory, out of a
 * filter's reach, so the only rule it could have is a refusal of every
 * clone3, and glibc makes threads with clone3 and falls back to clone()
 * only on ENOSYS. This runsc ignores a rule's errnoRet (and
 * defaultErrnoRet): every SCMP_ACT_ERRNO gives EPERM, so a clone3 rule
 * made pthread_create fail with EPERM. This runsc does not implement
 * clone3 at all (ENOSYS with or without a filter), so without a rule
 * glibc falls back to clone(), which the rules above see. A runsc that
 * implements clone3 would let CLONE_NEWUSER through it (a user namespace
 * of the emulated kernel): tests/unit/test_gvisor.c checks that clone3
 * gives ENOSYS inside the sandbox, so such a runsc fails the suite.
 */
static json_t *oci_seccomp(void)
{
	static const unsigned long gv_clone_ns[] = {CLONE_NEWUSER,  CLONE_NEWNS,  CLONE_NEWPID,
	                                            CLONE_NEWNET,   CLONE_NEWIPC, CLONE_NEWUTS,
	                                            CLONE_NEWCGROUP};
	json_t *names = json_array(), *rules;
	size_t i;

	for (i = 0; names && gv_refused[i]; i++)
		json_array_append_new(names, json_string(gv_refused[i]));
	rules = json_pack("[{s:o, s:s, s:i}]", "names", names, "action", "SCMP_ACT_ERRNO",
	                  "errnoRet", EPERM);
	for (i = 0; rules && i < sizeof(gv_clone_ns) / sizeof(gv_clone_ns[0]); i++)
		json_array_append_new(
		    rules, json_pack("{s:[s], s:s, s:i, s:[{s:i, s:I, s:I, s:s}]}", "names",
		                     "clone", "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM, "args",
		                     "index", 0, "value", (json_int_t)gv_clone_ns[i], "valueTwo",
		                     (json_int_t)gv_clone_ns[i], "op", "SCMP_CMP_MASKED_EQ"));
	return json_pack("{s:s, s:o}", "defaultAction", "SCMP_ACT_ALLOW", "syscalls", rules);
}

/* The sandbox's host memory limit, bytes: the whole run's memory_mb and
 * the sentry's and gofer's own share (RUNNER_GV_MEM_BASE_MB), once for
 * all the agent's processes together. */
json_int_t runner_gv_memory_limit(const struct runner_limits *l)
{
	return ((json_int_t)RUNNER_GV_MEM_BASE_MB + (json_int_t)l->memory_mb) << 20;
}

/* config.json (OCI runtime spec 1.0) for spec, agent bound at /agent, the
 * host tmpfs at tmp (tmp_mount) bound writable at /tmp. */
json_t *runner_gv_oci_config(const struct runner_spec *spec, json_t *binds, const char *agent,
                             const char *exec, const char *tmp, const char *gateway_dir)
{
	static const char *const gateway_env[] = {RUNNER_GATEWAY_ENV, NULL};
	const struct runner_limits *l = &spec->limits;
	json_t *cfg, *mounts, *env;
	size_t i;

	mounts = json_pack("[{s:s, s:s, s:s, s:[s,s,s]}, o]", "destination", "/proc", "type",
	                   "proc", "source", "proc", "options", "nosuid", "nodev", "noexec",
	                   bind_mount(tmp, "/tmp", 1));
	for (i = 0; mounts && i < json_array_size(binds); i++)
		json_array_append_new(mounts,
		                      bind_mount(json_string_value(json_array_get(binds, i)),
		                                 json_string_value(json_array_get(binds, i)), 0));
	if (mounts)
		json_array_append_new(mounts, bind_mount(agent, "/agent", 0));
	if (mounts)
		json_array_append_new(mounts, bind_mount(exec, "/agent-exec", 0));
	if (mounts && spec->sdk_dir)
		json_array_append_new(mounts, bind_mount(spec->sdk_dir, RUNNER_SDK_JAIL_DIR, 0));
	if (mounts && gateway_dir)
		json_array_append_new(mounts, bind_mount(gateway_dir, RUNNER_GATEWAY_JAIL_DIR, 0));
	cfg = json_pack(
	    "{s:s, s:{s:b, s:{s:i, s:i}, s:[s], s:[s,s,s,s,s,s], s:s, s:b,"
	    "  s:{s:[], s:[], s:[], s:[], s:[]}, s:[o,o,o,o,o]},"
	    " s:{s:s, s:b}, s:s, s:o,"
	    " s:{s:[{s:s},{s:s},{s:s},{s:s},{s:s}], s:{s:{s:I}, s:{s:I}}}}",
	    "ociVersion", "1.0.2", "process", "terminal", 0, "user", "uid", GV_UID, "gid", GV_GID,
	    "args", "/agent-exec", "env", "PATH=/usr/bin:/bin", "HOME=/", "LANG=C.UTF-8",
	    RUNNER_AGENT_PROTO_ENV_IN, RUNNER_AGENT_PROTO_ENV_OUT, RUNNER_SDK_ENV, "cwd", "/",
	    "noNewPrivileges", 1, "capabilities", "bounding", "effective", "inheritable",
	    "permitted", "ambient", "rlimits", rlimit("RLIMIT_CPU", l->cpu_seconds),
	    rlimit("RLIMIT_AS", (long long)l->memory_mb * 1024 * 1024),
	    rlimit("RLIMIT_NOFILE", l->open_files), rlimit("RLIMIT_NPROC", l->processes),
	    rlimit("RLIMIT_CORE", 0), "root", "path", "rootfs", "readonly", 1, "hostname",
	    "sandbox", "mounts", mounts, "linux", "namespaces", "type", "pid", "type", "network",
	    "type", "ipc", "type", "uts", "type", "mount", "resources", "pids", "limit",
	    (json_int_t)(RUNNER_GV_PIDS_BASE + RUNNER_GV_PIDS_PER_PROC * l->processes), "memory",
	    "limit", runner_gv_memory_limit(l));
	env = cfg ? json_object_get(json_object_get(cfg, "process"), "env") : NULL;
	for (i = 0; env && gateway_dir && gateway_env[i]; i++)
		json_array_append_new(env, json_string(gateway_env[i]));
	/* a comparison's run tells its agent which repeat it is */
	if (env && spec->has_repeat)
		json_array_append_new(env, json_sprintf("OLIVARES_REPEAT=%d", spec->repeat));
	if (cfg &&
	    json_object_set_new(json_object_get(cfg, "linux"), "seccomp", oci_seccomp()) != 0) {
		json_decref(cfg);
		cfg = NULL;
	}
	return cfg;
}
