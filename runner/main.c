/*
 * olivares-runner: executes one run spec (model/runspec.h) and exits.
 *
 * Order matters, and is the guarantee: (1) drop every inherited descriptor
 * above stderr and the whole environment, (2) pick the backend and run its
 * preflight, (3) read the spec from stdin (at most 8 MiB) and validate its
 * shape, (4) hand it to the backend, which confines the process before the
 * first step, (5) release the spec, (6) write the summary line.
 *
 * Exit status (model/runspec.h): 0 when a summary line was written, 1 when
 * it could not be, 2 on a usage error (no summary). An unknown backend, a
 * failed preflight, an oversize or malformed spec all still produce a
 * summary with status "failed", isolated false and the reason, and exit 0:
 * the worker records that reason instead of guessing from an exit code.
 *
 * destroyed is true only when a spec was parsed and every byte of it (steps,
 * mocks, outputs) has been released before the summary is written; a run
 * that never got a spec (unknown backend, unreadable spec) reports false:
 * there was nothing to attest. It is false too when a backend reports that
 * something of its confinement may remain (runner_summary.left_behind).
 *
 * OS-level fields of the spec ("agent", "limits", "binds") are checked
 * strictly here (absolute normalised paths, known limit keys within fixed
 * bounds: refused, never clamped); the path of the built-in mock agent is
 * resolved from /proc/self/exe before anything is closed. --preflight NAME
 * prints one line and reads no spec. --gvisor-platform NAME (gvisor only,
 * one of runner_gvisor_platforms, else a usage error) is host
 * configuration ([runner] gvisor_platform), so it comes on the command
 * line, never in the spec.
 *
 * --serve makes this process the fork server of one FastCGI worker
 * (runner/serve.h): each run then happens in a fork of it that enters
 * run_main() with the run's arguments and descriptors, with everything
 * above done there, per run, as in a runner started with exec.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stddef.h>
#include <stdarg.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/forkserver.h"
#include "model/http_mock.h"
#include "model/runspec.h"
#include "model/stats.h"
#include "runner/backend.h"
#include "runner/jail.h"
#include "runner/gateway_run.h"
#include "runner/serve.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define RUNNER_ID MODEL_RUNNER_NAME "/" PACKAGE_VERSION

static const struct runner_backend *const backends[] = {
    &runner_backend_inproc_mock,
    &runner_backend_namespaces,
    &runner_backend_gvisor,
    &runner_backend_firecracker,
    NULL,
};

/* Bounds of the "limits" keys (model/runspec.h; the values are
 * model/limits.h's MODEL_RUN_*): a spec outside them is refused, not
 * clamped, so what a run records is what it ran with. */
struct limit_key {
	const char *name;
	size_t offset;
	long min, max, def;
};

static const struct limit_key limit_keys[] = {
    {"wall_ms", offsetof(struct runner_limits, wall_ms), MODEL_RUN_WALL_MS_MIN,
     MODEL_RUN_WALL_MS_MAX, MODEL_RUN_WALL_MS_DEFAULT},
    {"cpu_seconds", offsetof(struct runner_limits, cpu_seconds), MODEL_RUN_CPU_SECONDS_MIN,
     MODEL_RUN_CPU_SECONDS_MAX, MODEL_RUN_CPU_SECONDS_DEFAULT},
    {"memory_mb", offsetof(struct runner_limits, memory_mb), MODEL_RUN_MEMORY_MB_MIN,
     MODEL_RUN_MEMORY_MB_MAX, MODEL_RUN_MEMORY_MB_DEFAULT},
    {"processes", offsetof(struct runner_limits, processes), MODEL_RUN_PROCESSES_MIN,
     MODEL_RUN_PROCESSES_MAX, MODEL_RUN_PROCESSES_DEFAULT},
    {"open_files", offsetof(struct runner_limits, open_files), MODEL_RUN_OPEN_FILES_MIN,
     MODEL_RUN_OPEN_FILES_MAX, MODEL_RUN_OPEN_FILES_DEFAULT},
    {"tmpfs_mb", offsetof(struct runner_limits, tmpfs_mb), MODEL_RUN_TMPFS_MB_MIN,
     MODEL_RUN_TMPFS_MB_MAX, MODEL_RUN_TMPFS_MB_DEFAULT},
    {NULL, 0, 0, 0, 0},
};

/* The built-in mock agent, beside the runner's own executable; resolved
 * first thing in main(), before descriptors are closed or filters loaded.
 * Empty when not found. */
static char mock_agent[4096];
static char agent_exec[4096];
static char gateway_program[4096];
static char gateway_egress[4096];
static char sdk_dir[4096];
/* The directory of the runner's own executable, read once per process, or
 * once per fork server (warm_for_serve): its forks run the same
 * executable. "" until read. */
static char exe_dir[4096];

static const struct runner_backend *backend_find(const char *name)
{
	size_t i;

	for (i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

static void usage(FILE *f)
{
	const char *const *op;
	size_t i;

	fprintf(f,
	        "usage: %s --backend NAME < spec.json\n"
	        "       %s --backend NAME --no-seccomp < spec.json   (test aid)\n"
	        "       %s --preflight NAME\n"
	        "       %s --backend gvisor|--preflight gvisor --gvisor-platform PLATFORM\n"
	        "       %s --probe OP [--backend NAME]\n"
	        "       %s --serve   (fork server of an executor slot; socket on stdin)\n"
	        "       %s --help | --version\n\n"
	        "Runs one sandbox run spec (JSON on stdin) and writes one JSON line per\n"
	        "step, then a summary line, on stdout. --preflight prints one line\n"
	        "{\"type\":\"preflight\",\"backend\":NAME,\"ok\":bool,\"reason\":null|string}.\n"
	        "Backends:",
	        MODEL_RUNNER_NAME, MODEL_RUNNER_NAME, MODEL_RUNNER_NAME, MODEL_RUNNER_NAME,
	        MODEL_RUNNER_NAME, MODEL_RUNNER_NAME, MODEL_RUNNER_NAME);
	for (i = 0; backends[i]; i++)
		fprintf(f, " %s", backends[i]->name);
	fprintf(f, "\n\n--gvisor-platform is the gVisor platform of runsc (default %s):",
	        runner_gvisor_platforms[0]);
	for (i = 0; runner_gvisor_platforms[i]; i++)
		fprintf(f, " %s", runner_gvisor_platforms[i]);
	fprintf(f, "\n\n--probe OP is a self-test of the confinement: it installs the\n"
	           "backend's filter exactly as a run does, tries OP and prints\n"
	           "{\"type\":\"probe\",\"op\":OP,\"allowed\":bool,\"errno\":NAME|null}.\n"
	           "OP is one of:");
	for (op = runner_probe_ops; *op; op++)
		fprintf(f, " %s", *op);
	fprintf(f,
	        " (unlisted: a call outside the allowlist, which kills the runner with SIGSYS).\n"
	        "\n--no-seccomp runs without the filter and reports isolated false: a\n"
	        "test aid for valgrind, which cannot run a seccomp-filtered process.\n");
}

/* A printable copy of an untrusted name for a reason string. */
static void printable(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

/* Read stdin to EOF into b (capped at RUNNER_SPEC_MAX_BYTES). Returns 0,
 * or -1 with *err: kind RUNNER_E_SPEC when the spec is over the cap,
 * RUNNER_E_INTERNAL on a read error. */
static int read_spec(struct model_buf *b, struct runner_error *err)
{
	char chunk[65536];
	ssize_t r;

	for (;;) {
		r = read(0, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return runner_error_set(err, RUNNER_E_INTERNAL,
			                        "cannot read the run spec: %s", strerror(errno));
		if (r == 0)
			return 0;
		if (model_buf_add(b, chunk, (size_t)r) != 0)
			return runner_error_set(err, RUNNER_E_SPEC,
			                        "run spec over %u bytes (8 MiB)",
			                        RUNNER_SPEC_MAX_BYTES);
	}
}

static int only_keys(json_t *obj, const char *const *allowed, const char **bad)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach(obj, k, v)
	{
		(void)v;
		for (i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], k) == 0)
				break;
		if (!allowed[i]) {
			*bad = k;
			return -1;
		}
	}
	return 0;
}

/* A tool mock of the spec (model/mock.h): the shape the worker validated
 * (model_scenario_check), checked again, since the runner trusts no input. */
static int tool_mock_ok(json_t *m)
{
	static const char *const keys[] = {"tool",  "args",    "match",    "response", "sequence",
	                                   "error", "variant", "delay_ms", NULL};
	json_t *v = json_object_get(m, "match");
	json_t *seq = json_object_get(m, "sequence");
	const char *bad = NULL;
	int answers;

	answers = !!json_object_get(m, "response") + !!seq + !!json_object_get(m, "error");
	return only_keys(m, keys, &bad) == 0 && json_is_string(json_object_get(m, "tool")) &&
	       (!json_object_get(m, "args") || json_is_object(json_object_get(m, "args"))) &&
	       (!v || (json_is_string(v) && (strcmp(json_string_value(v), "exact") == 0 ||
	                                     strcmp(json_string_value(v), "subset") == 0))) &&
	       answers == 1 && (!seq || (json_is_array(seq) && json_array_size(seq) > 0)) &&
	       (!json_object_get(m, "error") || json_is_string(json_object_get(m, "error"))) &&
	       (!json_object_get(m, "variant") || json_is_null(json_object_get(m, "variant")) ||
	        json_is_string(json_object_get(m, "variant")));
}

/* An absolute, normalised path: starts with '/', no empty, "." or ".."
 * component, no trailing '/', no NUL, at most RUNNER_SPEC_MAX_PATH bytes. */
static int path_ok(json_t *v)
{
	const char *s = json_string_value(v);
	const char *p;
	size_t len;

	if (!s)
		return 0;
	len = json_string_length(v);
	if (len < 2 || len > RUNNER_SPEC_MAX_PATH || strlen(s) != len || s[0] != '/' ||
	    s[len - 1] == '/')
		return 0;
	for (p = s; *p; p++) {
		if (*p != '/')
			continue;
		if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || !p[3])))
			return 0;
	}
	return 1;
}

/* Whether the secrets file (NULL: none) would be in the jail: under one
 * of binds, or the agent's file. The file stays where the operator put it;
 * a bind over it would hand the agent what the gateway adds for it. */
static int secrets_bound(const char *secrets, json_t *binds, const char *agent)
{
	const char *b;
	size_t i, len;
	json_t *item;

	if (!secrets)
		return 0;
	if (agent && strcmp(agent, secrets) == 0)
		return 1;
	/* no binds given: the default, /usr */
	if (!binds)
		return strncmp(secrets, "/usr/", 5) == 0;
	json_array_foreach(binds, i, item)
	{
		b = json_string_value(item);
		len = strlen(b);
		if (strncmp(secrets, b, len) == 0 && (secrets[len] == '/' || secrets[len] == '\0'))
			return 1;
	}
	return 0;
}

/* The first component of a bind may not be one the jail itself owns. */
static int bind_reserved(const char *s)
{
	static const char *const reserved[] = {"/proc",       "/tmp",      "/agent",
	                                       "/agent-exec", "/olivares", NULL};
	size_t i, n;

	for (i = 0; reserved[i]; i++) {
		n = strlen(reserved[i]);
		if (strncmp(s, reserved[i], n) == 0 && (s[n] == '\0' || s[n] == '/'))
			return 1;
	}
	return 0;
}

/* "agent", "limits", "binds" (model/runspec.h); defaults filled in. */
static int validate_os_fields(json_t *root, struct runner_spec *spec, struct runner_error *err)
{
	const struct limit_key *k;
	const char *key;
	json_t *v;
	json_t *item;
	json_int_t val;
	size_t i;

	for (k = limit_keys; k->name; k++)
		*(long *)((char *)&spec->limits + k->offset) = k->def;
	v = json_object_get(root, "agent");
	if (v && !json_is_null(v) && !path_ok(v))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "agent must be an absolute path or null");
	spec->agent = json_is_string(v) ? json_string_value(v) : NULL;

	v = json_object_get(root, "limits");
	if (v && !json_is_object(v))
		return runner_error_set(err, RUNNER_E_SPEC, "limits must be an object");
	json_object_foreach(v, key, item)
	{
		for (k = limit_keys; k->name; k++)
			if (strcmp(k->name, key) == 0)
				break;
		if (!k->name)
			return runner_error_set(err, RUNNER_E_SPEC, "unknown limit \"%.64s\"", key);
		val = json_is_integer(item) ? json_integer_value(item) : k->min - 1;
		if (val < k->min || val > k->max)
			return runner_error_set(err, RUNNER_E_SPEC,
			                        "limits.%s must be an integer from %ld to %ld",
			                        k->name, k->min, k->max);
		*(long *)((char *)&spec->limits + k->offset) = (long)val;
	}

	v = json_object_get(root, "binds");
	if (v && (!json_is_array(v) || json_array_size(v) > RUNNER_SPEC_MAX_BINDS))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "binds must be an array of at most %d paths",
		                        RUNNER_SPEC_MAX_BINDS);
	json_array_foreach(v, i, item)
	{
		if (!path_ok(item) || bind_reserved(json_string_value(item)))
			return runner_error_set(
			    err, RUNNER_E_SPEC,
			    "binds[%zu] must be an absolute normalised path other than /, "
			    "/proc, /tmp, /agent, /agent-exec and /olivares",
			    i);
	}
	spec->binds = v;
	if (secrets_bound(spec->egress_secrets, v, spec->agent))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "egress_secrets is under a path bound into the jail");
	spec->mock_agent = mock_agent[0] ? mock_agent : NULL;
	spec->agent_exec = agent_exec[0] ? agent_exec : NULL;
	/* only the egress build forwards (and only it loads libcurl) */
	if (json_array_size(spec->egress_allow) > 0)
		spec->gateway_program = gateway_egress[0] ? gateway_egress : NULL;
	else
		spec->gateway_program = gateway_program[0] ? gateway_program : NULL;
	spec->sdk_dir = sdk_dir[0] ? sdk_dir : NULL;
	return 0;
}

/* Shape check of model/runspec.h. Nothing else may ride along: no id, no
 * tenant, no token. An absent "variant" is null, absent "mocks" is []. */
static int spec_validate(json_t *root, struct runner_spec *spec, struct runner_error *err)
{
	static const char *const top_keys[] = {
	    "variant", "steps",        "mocks",          "agent",  "limits", "binds",
	    "gateway", "egress_allow", "egress_secrets", "record", "repeat", NULL};
	static const char *const step_keys[] = {"key", "input", NULL};
	static const char *const mock_keys[] = {"resource", "response", "variant", "delay_ms",
	                                        NULL};
	const char *bad = NULL;
	struct model_error merr;
	json_t *v;
	json_t *item;
	size_t i;

	if (!json_is_object(root))
		return runner_error_set(err, RUNNER_E_SPEC, "the spec is not a JSON object");
	if (only_keys(root, top_keys, &bad) != 0)
		return runner_error_set(err, RUNNER_E_SPEC, "unknown field \"%.64s\"", bad);
	v = json_object_get(root, "variant");
	if (v && !json_is_null(v) && !json_is_string(v))
		return runner_error_set(err, RUNNER_E_SPEC, "variant must be a string or null");
	spec->variant = json_is_string(v) ? json_string_value(v) : NULL;

	spec->steps = json_object_get(root, "steps");
	if (!json_is_array(spec->steps))
		return runner_error_set(err, RUNNER_E_SPEC, "steps must be an array");
	json_array_foreach(spec->steps, i, item)
	{
		if (!json_is_object(item) || only_keys(item, step_keys, &bad) != 0 ||
		    !json_is_string(json_object_get(item, "key")) ||
		    !json_is_string(json_object_get(item, "input")))
			return runner_error_set(
			    err, RUNNER_E_SPEC,
			    "steps[%zu] must be {\"key\": string, \"input\": string}", i);
	}

	if (!json_object_get(root, "mocks"))
		json_object_set_new(root, "mocks", json_array());
	spec->mocks = json_object_get(root, "mocks");
	if (!json_is_array(spec->mocks))
		return runner_error_set(err, RUNNER_E_SPEC, "mocks must be an array");
	json_array_foreach(spec->mocks, i, item)
	{
		v = json_object_get(item, "variant");
		if (json_is_object(item) &&
		    (json_object_get(item, "http") || json_object_get(item, "llm"))) {
			if (model_http_mock_spec_check(item, &merr) != 0)
				return runner_error_set(err, RUNNER_E_SPEC, "mocks[%zu]: %s", i,
				                        merr.message);
			spec->gateway = 1;
		} else if (json_is_object(item) && json_object_get(item, "tool")) {
			if (!tool_mock_ok(item))
				return runner_error_set(
				    err, RUNNER_E_SPEC,
				    "mocks[%zu] must be {\"tool\": string, \"args\"?: object, "
				    "\"match\"?: \"exact\"|\"subset\", one of \"response\", "
				    "\"sequence\": [...], \"error\": string, \"variant\"?, "
				    "\"delay_ms\"?}",
				    i);
		} else if (!json_is_object(item) || only_keys(item, mock_keys, &bad) != 0 ||
		           !json_is_string(json_object_get(item, "resource")) ||
		           !json_is_string(json_object_get(item, "response")) ||
		           (v && !json_is_null(v) && !json_is_string(v)))
			return runner_error_set(
			    err, RUNNER_E_SPEC,
			    "mocks[%zu] must be {\"resource\": string, \"response\": string, "
			    "\"variant\"?: string|null, \"delay_ms\"?: integer}",
			    i);
		/* refused, never clamped, as the limits are: a run waits what
		 * its scenario says or does not run */
		v = json_object_get(item, "delay_ms");
		if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
		          json_integer_value(v) > MODEL_MAX_MOCK_DELAY_MS))
			return runner_error_set(
			    err, RUNNER_E_SPEC,
			    "mocks[%zu].delay_ms must be an integer from 0 to %d", i,
			    MODEL_MAX_MOCK_DELAY_MS);
	}
	v = json_object_get(root, "gateway");
	if (v && !json_is_boolean(v))
		return runner_error_set(err, RUNNER_E_SPEC, "gateway must be true or false");
	if (json_is_true(v))
		spec->gateway = 1;
	/* the tenant's egress hosts ([runner] egress_allow): a gateway forwards
	 * to them what no mock answers */
	v = json_object_get(root, "egress_allow");
	if (v && (!json_is_array(v) || json_array_size(v) > RUNNER_SPEC_MAX_EGRESS))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "egress_allow must be an array of at most %d hosts",
		                        RUNNER_SPEC_MAX_EGRESS);
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item) || json_string_length(item) == 0 ||
		    json_string_length(item) > 260)
			return runner_error_set(err, RUNNER_E_SPEC,
			                        "egress_allow[%zu] must be a host or host:port", i);
	}
	spec->egress_allow = v;
	if (json_array_size(v) > 0)
		spec->gateway = 1;
	/* the path of the operator's secrets file, never its content: the
	 * egress gateway opens it outside the jail */
	v = json_object_get(root, "egress_secrets");
	if (v && (!path_ok(v) || json_array_size(spec->egress_allow) == 0))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "egress_secrets must be an absolute normalised path of at "
		                        "most %d bytes, with egress_allow hosts",
		                        RUNNER_SPEC_MAX_PATH);
	spec->egress_secrets = json_string_value(v);
	v = json_object_get(root, "record");
	if (v && !json_is_boolean(v))
		return runner_error_set(err, RUNNER_E_SPEC, "record must be true or false");
	spec->record = json_is_true(v);
	/* which repeat of a comparison's side this run is, for the agent */
	v = json_object_get(root, "repeat");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
	          json_integer_value(v) >= MODEL_STATS_MAX_REPEATS))
		return runner_error_set(err, RUNNER_E_SPEC,
		                        "repeat must be an integer from 0 to %d",
		                        MODEL_STATS_MAX_REPEATS - 1);
	spec->has_repeat = v != NULL;
	spec->repeat = v ? (int)json_integer_value(v) : 0;
	if (validate_os_fields(root, spec, err) != 0)
		return -1;
	spec->root = root;
	return 0;
}

/* The reason as JSON; a reason that quotes a truncated piece of the spec
 * may have cut a UTF-8 sequence, so fall back to a printable copy. */
static json_t *reason_json(const char *reason)
{
	char safe[512];
	json_t *j;

	if (!reason[0])
		return json_null();
	j = json_string(reason);
	if (j)
		return j;
	printable(safe, sizeof(safe), reason);
	return json_string(safe);
}

static int write_summary(const char *backend, const struct runner_summary *sum)
{
	json_t *line;
	int rc = -1;

	/* the shutdown note belongs to a completed run only: a failed one
	 * has its reason, which stays the one thing said */
	line = json_pack(
	    "{s:s, s:s, s:s, s:b, s:b, s:s, s:I, s:I, s:I, s:o, s:o}", "type", "summary", "runner",
	    RUNNER_ID, "backend", backend, "isolated", sum->isolated, "destroyed", sum->destroyed,
	    "status", sum->status, "steps_total", (json_int_t)sum->steps_total, "steps_ok",
	    (json_int_t)sum->steps_ok, "steps_error", (json_int_t)sum->steps_error, "reason",
	    reason_json(sum->reason), "shutdown",
	    strcmp(sum->status, "completed") == 0 ? reason_json(sum->shutdown) : json_null());
	/* a run with a gateway says how many of its requests left the
	 * sandbox (absent: none could) */
	if (line && sum->gateway)
		json_object_set_new(line, "egress_requests", json_integer(sum->egress_requests));
	if (line && sum->gateway_lost)
		json_object_set_new(line, "gateway_lost", json_true());
	if (!line)
		goto out;
	if (json_dumpf(line, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0)
		goto out;
	rc = 0;
out:
	json_decref(line);
	return rc;
}

/* --preflight NAME: one line, no spec read. An unknown name is ok false. */
static int write_preflight(const char *backend_name)
{
	const struct runner_backend *be = backend_find(backend_name);
	char name[64];
	struct runner_error err;
	char reason[512];
	json_t *line;
	int ok = 0;
	int rc = -1;

	printable(name, sizeof(name), backend_name);
	if (!be) {
		snprintf(reason, sizeof(reason), "unknown backend: %s", name);
	} else if ((be->preflight_full ? be->preflight_full : be->preflight)(&err) != 0) {
		snprintf(reason, sizeof(reason), "%s", err.message);
	} else {
		ok = 1;
		reason[0] = '\0';
	}
	line = json_pack("{s:s, s:s, s:b, s:o}", "type", "preflight", "backend", name, "ok", ok,
	                 "reason", reason_json(reason));
	if (line && json_dumpf(line, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF &&
	    fflush(stdout) == 0)
		rc = 0;
	json_decref(line);
	return rc;
}

/* exe_dir = dirname(/proc/self/exe), if not read yet; "" if unreadable. */
static void resolve_exe_dir(void)
{
	char exe[sizeof(exe_dir)];
	ssize_t len;

	if (exe_dir[0])
		return;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return;
	exe[len] = '\0';
	snprintf(exe_dir, sizeof(exe_dir), "%s", dirname(exe));
}

/* sdk_dir = the directory of olivares_agent.py, the Python module for
 * agents: python/ beside the runner (the build tree), else the package's
 * share/olivares/python beside its bin/ (an installed tree); canonical,
 * since the jail binds it. "" when neither holds the module: a Python
 * agent's import then fails in its log, and other agents run as before. */
static void resolve_sdk_dir(void)
{
	static const char *const tries[] = {"/python", "/../share/olivares/python"};
	char path[4096 + 64], module[sizeof(path) + 32];
	size_t i;
	int w;

	sdk_dir[0] = '\0';
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]) && !sdk_dir[0]; i++) {
		w = snprintf(path, sizeof(path), "%s%s", exe_dir, tries[i]);
		if (w < 0 || (size_t)w >= sizeof(path))
			continue;
		snprintf(module, sizeof(module), "%s/olivares_agent.py", path);
		if (access(module, R_OK) != 0 || !realpath(path, module) ||
		    strlen(module) >= sizeof(sdk_dir))
			continue;
		snprintf(sdk_dir, sizeof(sdk_dir), "%s", module);
	}
}

/* mock_agent = exe_dir/olivares-agent-mock, if executable (checked at
 * every run: the file may come or go while a fork server runs). */
static void resolve_mock_agent(void)
{
	int w;

	mock_agent[0] = '\0';
	resolve_exe_dir();
	if (!exe_dir[0])
		return;
	w = snprintf(mock_agent, sizeof(mock_agent), "%s/olivares-agent-mock", exe_dir);
	if (w < 0 || (size_t)w >= sizeof(mock_agent) || access(mock_agent, X_OK) != 0)
		mock_agent[0] = '\0';
	agent_exec[0] = '\0';
	w = snprintf(agent_exec, sizeof(agent_exec), "%s/olivares-agent-exec", exe_dir);
	if (w < 0 || (size_t)w >= sizeof(agent_exec) || access(agent_exec, X_OK) != 0)
		agent_exec[0] = '\0';
	gateway_program[0] = '\0';
	w = snprintf(gateway_program, sizeof(gateway_program), "%s/olivares-gateway", exe_dir);
	if (w < 0 || (size_t)w >= sizeof(gateway_program) || access(gateway_program, X_OK) != 0)
		gateway_program[0] = '\0';
	gateway_egress[0] = '\0';
	w = snprintf(gateway_egress, sizeof(gateway_egress), "%s/olivares-gateway-egress", exe_dir);
	if (w < 0 || (size_t)w >= sizeof(gateway_egress) || access(gateway_egress, X_OK) != 0)
		gateway_egress[0] = '\0';
	resolve_sdk_dir();
}

/* What the fork server reads once for all its runners, instead of each
 * reading it again: where the runner's executable is, and the jail's
 * (runner_jail_warm). */
static void warm_for_serve(void)
{
	resolve_mock_agent();
	runner_jail_warm();
}

static void fail(struct runner_summary *sum, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct runner_summary *sum, const char *fmt, ...)
{
	va_list ap;

	sum->status = "failed";
	sum->isolated = 0;
	va_start(ap, fmt);
	vsnprintf(sum->reason, sizeof(sum->reason), fmt, ap);
	va_end(ap);
}

/* Parse, validate and run; the spec and everything derived from it live in
 * this call only and are released before it returns. */
static void run_spec(const struct runner_backend *be, int unconfined, struct runner_summary *sum)
{
	struct model_buf raw;
	struct runner_spec spec;
	json_error_t jerr;
	json_t *root = NULL;
	struct runner_error err;

	memset(&spec, 0, sizeof(spec));
	model_buf_init(&raw, RUNNER_SPEC_MAX_BYTES);
	if (read_spec(&raw, &err) != 0) {
		fail(sum, "%s", err.message);
		goto out;
	}
	root = json_loadb(raw.data, raw.len, JSON_REJECT_DUPLICATES, &jerr);
	model_buf_release(&raw);
	model_buf_init(&raw, 0);
	if (!root) {
		fail(sum, "malformed run spec: %s", jerr.text);
		goto out;
	}
	if (spec_validate(root, &spec, &err) != 0) {
		fail(sum, "invalid run spec: %s", err.message);
		goto out;
	}
	spec.unconfined = unconfined;
	if (be == &runner_backend_inproc_mock && spec.agent) {
		fail(sum, "inproc-mock cannot run agent programs; choose an OS-level backend");
		goto out;
	}
	be->run(&spec, stdout, sum);
out:
	model_buf_release(&raw);
	if (root) {
		/* The one reference is ours: dropping it frees steps, mocks and
		 * every string in them. Only then is the state destroyed (and
		 * only if the backend tore its confinement down: left_behind). */
		sum->destroyed = root->refcount == 1 && !sum->left_behind;
		json_decref(root);
	}
}

/* One run (or preflight, or probe) in this process: a freshly executed
 * runner's main(), and what each forked runner of the fork server calls. */
static int run_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"backend", required_argument, NULL, 'b'},
	    {"probe", required_argument, NULL, 'p'},
	    {"preflight", required_argument, NULL, 'P'},
	    {"no-seccomp", no_argument, NULL, 'n'},
	    {"gvisor-platform", required_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	/* stdout gets a fixed buffer before the filter exists: stdio would
	 * otherwise allocate one on first write, after fstat() and, on a
	 * terminal or /dev/null, an ioctl() the filter refuses. Every line
	 * is flushed explicitly. */
	static char outbuf[65536];
	struct runner_summary sum;
	const struct runner_backend *be;
	const char *backend_name = NULL;
	const char *probe_op = NULL;
	const char *preflight_name = NULL;
	const char *platform = NULL;
	char name[64];
	struct runner_error err;
	int unconfined = 0;
	int c;

	/* Before anything is closed or filtered: where the mock agent is. */
	resolve_mock_agent();
	/* First, before anything can use them: descriptors above stderr are
	 * none of the runner's business (but the gateway server's socket a
	 * fork server put at 3, close-on-exec); whatever the parent forgot
	 * to mark close-on-exec dies here. */
	runner_close_from(runner_gateway_server_fd == 3 ? 4 : 3);
	/* Children are reaped by this process, whatever it inherited: an
	 * ignored SIGCHLD would have the kernel reap them behind its back. */
	signal(SIGCHLD, SIG_DFL);
	clearenv();
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	/* One allocation policy (model/alloc.h): jansson aborts on OOM too. */
	json_set_alloc_funcs(model_xmalloc, free);

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			backend_name = optarg;
			break;
		case 'p':
			probe_op = optarg;
			break;
		case 'P':
			preflight_name = optarg;
			break;
		case 'n':
			unconfined = 1;
			break;
		case 'g':
			platform = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s\n", RUNNER_ID);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (!backend_name && !probe_op && !preflight_name) ||
	    (preflight_name && (backend_name || probe_op))) {
		usage(stderr);
		return 2;
	}
	/* A platform is for gvisor only, and one the runner knows: anything
	 * else is the caller's mistake, not a run to record. */
	if (platform) {
		if (probe_op || strcmp(preflight_name ? preflight_name : backend_name,
		                       runner_backend_gvisor.name) != 0) {
			fprintf(stderr,
			        "%s: --gvisor-platform is for --backend gvisor or "
			        "--preflight gvisor only\n",
			        MODEL_RUNNER_NAME);
			return 2;
		}
		if (runner_gvisor_platform_set(platform) != 0) {
			printable(name, sizeof(name), platform);
			fprintf(stderr,
			        "%s: unknown gVisor platform \"%s\" (known:", MODEL_RUNNER_NAME,
			        name);
			for (c = 0; runner_gvisor_platforms[c]; c++)
				fprintf(stderr, " %s", runner_gvisor_platforms[c]);
			fputs(")\n", stderr);
			return 2;
		}
	}
	if (preflight_name)
		return write_preflight(preflight_name) == 0 ? 0 : 1;
	if (probe_op) {
		if (!backend_name)
			backend_name = MODEL_BACKEND_INPROC_MOCK;
		be = backend_find(backend_name);
		if (!be || !be->probe) {
			fprintf(stderr, "%s: no probe for backend %s\n", MODEL_RUNNER_NAME,
			        backend_name);
			return 2;
		}
		return be->probe(probe_op, stdout) == 0 ? 0 : 1;
	}

	memset(&sum, 0, sizeof(sum));
	sum.status = "failed";
	printable(name, sizeof(name), backend_name);
	be = backend_find(backend_name);
	if (!be) {
		fail(&sum, "unknown backend: %s", name);
	} else if (!unconfined && be->preflight(&err) != 0) {
		fail(&sum, "backend %s unavailable: %s", be->name, err.message);
	} else {
		run_spec(be, unconfined, &sum);
	}
	return write_summary(name, &sum) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	/* Before anything else, and only alone: the fork server owns this
	 * process, and each runner it forks goes through run_main(). */
	if (argc == 2 && strcmp(argv[1], MODEL_FORKSERVER_ARG) == 0) {
		warm_for_serve();
		return runner_serve(run_main, gateway_program[0] ? gateway_program : NULL);
	}
	return run_main(argc, argv);
}
