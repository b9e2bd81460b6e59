/*
 * Configuration loader (config.h): defaults, then the INI file (inih), then
 * the environment. Creates nothing: the data directory is only named here
 * (olivares-admin migrate creates it).
 *
 * Every key is one entry of http_config_keys: the parser looks the key up
 * there and stores the value as its type says, the defaults are the
 * entries' own, and a bad value's message says what the type wants. What
 * depends on other keys (the paths under the data dir, a tenant's policy
 * from [runner]) is resolved once the file and the environment are read,
 * in http_config_load.
 */
#include "fcgi/config.h"
#include "fcgi/run/dispatch.h"        /* HTTP_DISPATCH_GRACE_MS (macros only) */
#include "fcgi/run/preflight_cache.h" /* PREFLIGHT_CACHE_BACKENDS */
#include "fcgi/scorer/scorer.h"       /* the [scorer] timeout_ms bounds (macros only) */

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Backends the runner knows; a list may allow any subset. */
const char *const http_config_known_backends[] = {"inproc-mock", "namespaces", "gvisor",
                                                  "firecracker", NULL};
/* every backend has a record in the pool's preflight answers */
_Static_assert(sizeof(http_config_known_backends) / sizeof(http_config_known_backends[0]) - 1 <=
                   PREFLIGHT_CACHE_BACKENDS,
               "PREFLIGHT_CACHE_BACKENDS (fcgi/run/preflight_cache.h) below the known backends");

/* gVisor platforms the runner accepts (runner/backend.h
 * runner_gvisor_platforms, the first is the default): the loader refuses
 * any other, so the runner never gets a platform it would refuse. */
const char *const http_config_gvisor_platforms[] = {"ptrace", "kvm", "systrap", NULL};

/* the values of a yes/no key (an HTTP_CONFIG_ENUM) */
const char *const http_config_booleans[] = {"false", "true", NULL};

/* Bounds of [runner] timeout_ms: the runner's limits.wall_ms bounds. */
#define TIMEOUT_MS_MIN 100
#define TIMEOUT_MS_MAX 600000
/* [server] workers */
#define WORKERS_MAX 64
/* [runner] binds: what the runner's spec check accepts (runner/main.c) */
#define MAX_BINDS 32
#define MAX_BIND_PATH 1024
/* the jail's own paths (runner/main.c bind_reserved): a bind under one is
 * refused here, at load, rather than by every run's spec */
static const char *const bind_reserved[] = {"/proc",       "/tmp",      "/agent",
                                            "/agent-exec", "/olivares", NULL};

/* the help of timeout_ms names the grace */
_Static_assert(HTTP_DISPATCH_GRACE_MS == 3000, "[runner] timeout_ms's help says 3 s");

#define STR_(x) #x
#define STR(x) STR_(x)

/* An entry's field: offset and size of a member of struct http_config, or
 * of struct http_tenant_policy for [tenant NAME]. */
#define IN_CONFIG(member)                                                                          \
	.offset = offsetof(struct http_config, member),                                            \
	.size = sizeof(((struct http_config *)0)->member)
#define IN_TENANT(member)                                                                          \
	.offset = offsetof(struct http_tenant_policy, member),                                     \
	.size = sizeof(((struct http_tenant_policy *)0)->member)

const struct http_config_section http_config_sections[] = {
    {.name = "server",
     .title = "the server and its database",
     .help = "Where the server keeps its files, the database it connects to, the pool of "
             "workers that nginx talks to over the FastCGI socket, and every tenant's "
             "storage quota, retention and metrics labels."},
    {.name = "runner",
     .title = "runs and their isolation",
     .help = "How a run is executed: the runner program, the backends tenants may use, the "
             "operator's agent programs, the limits sent in every run spec (their defaults "
             "and bounds are the runner's own, so the runner never refuses them), and how "
             "many runs a tenant may have queued or running at once."},
    {.name = "tenant",
     .named = 1,
     .title = "one tenant's own policy",
     .help = "The policy of the tenant named NAME (as created with `olivares-admin "
             "tenant create`): its backends, egress, runs at once, storage quota and "
             "retention, each key in place of the `[runner]` or `[server]` one for that "
             "tenant; a key the section does not set, and every other tenant, take those. "
             "Blanks around NAME are not part of it, and "
             "names are compared exactly, case included. A section whose tenant does not "
             "exist (yet) is kept and applies once a tenant of that name is created; the "
             "server logs a note of it at start-up. NAME may be at most 42 bytes long (the "
             "INI reader keeps 49 bytes of a section header); a longer one is refused, never "
             "cut to another tenant's name."},
    {.name = "scorer",
     .title = "the scorer adapter",
     .help = "How runs that name an eval suite the tenant's store does not have are scored "
             "(a suite in the store needs no adapter). The adapter's syntax is checked "
             "when the file is loaded, its directory or program when the server starts "
             "(and by `olivares-fcgi --check-config`)."},
    {.name = "admin", .title = "the admin view", .help = "The HTML admin view, under `/admin`."},
    {.name = "executor",
     .title = "the executors that run the runs",
     .help = "`olivares-executor`, the processes that claim queued runs from the store and "
             "hand each to `olivares-runner`: how many `scripts/stack up` starts, how many "
             "runs each runs at once, and how long a run may go without a heartbeat before "
             "it is ended as lost. Every host that runs executors reads its own file; they "
             "share only the database."},
    {.name = NULL},
};

#define LIMIT_HELP " One of the run spec's limits."

const struct http_config_key http_config_keys[] = {
    /* [server] */
    {.section = "server",
     .name = "data_dir",
     .type = HTTP_CONFIG_PATH,
     .default_doc = "`$OLIVARES_DATA`, else `./var`",
     .help = "The data dir, made absolute: the default place of the database, the socket and "
             "the agent programs. `OLIVARES_DATA` wins over it.",
     IN_CONFIG(data_dir),
     .flags = HTTP_CONFIG_LONG},
    {.section = "server",
     .name = "dsn",
     .type = HTTP_CONFIG_STRING,
     .default_doc = "`Driver=SQLite3;Database=<data_dir>/olivares.db;Timeout=2000;"
                    "JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1`",
     .help = "The ODBC connection string of the store, SQLite or PostgreSQL. `OLIVARES_DSN` "
             "wins over it. In the default, `Timeout=2000` is SQLite's busy wait per attempt, "
             "in ms: with the store's retries, a locked database gives a `503 "
             "storage_unavailable` in about 10 s, well under nginx's `fastcgi_read_timeout` "
             "of 60 s. It may hold a password: a bad value is not shown, `--check-config` "
             "masks `PWD` and `Password`, and the file is best kept mode 0600. A string "
             "longer than a line of the file takes goes in `OLIVARES_DSN`.",
     IN_CONFIG(dsn),
     .flags = HTTP_CONFIG_SECRET | HTTP_CONFIG_LONG},
    {.section = "server",
     .name = "socket",
     .type = HTTP_CONFIG_PATH,
     .default_doc = "`<data_dir>/olivares.sock`",
     .help = "The unix socket the workers accept nginx's FastCGI connections on. Unused when "
             "spawn-fcgi hands the server a listening socket on fd 0.",
     IN_CONFIG(socket_path),
     .flags = HTTP_CONFIG_LONG},
    {.section = "server",
     .name = "socket_mode",
     .type = HTTP_CONFIG_MODE,
     .min = 0,
     .max = 0777,
     .def = "0600",
     .help = "The mode of the socket. Others may not write to it: any local user could talk "
             "to the workers as nginx does, behind its back. For an nginx running as another "
             "user, 0660 and a `socket` outside the data dir (which is 0700), in a setgid "
             "directory of nginx's group, so that the socket gets that group.",
     IN_CONFIG(socket_mode)},
    {.section = "server",
     .name = "workers",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = WORKERS_MAX,
     .default_doc = "2 x the online CPUs, at most " STR(WORKERS_MAX),
     .help = "The workers of the pool, each serving one request at a time. A worker never "
             "runs a run (the executors do); it waits for nginx's close after each reply, "
             "and for a run's end while a client's `Prefer: wait` asks (at most 60 s), so "
             "one per core leaves cores idle.",
     IN_CONFIG(workers)},
    {.section = "server",
     .name = "wait_max_seconds",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = 60,
     .def = "60",
     .help = "The longest a request waits for the end of the run it made when the client "
             "asks with `Prefer: wait=N` (N is cut to it; 0: every run, replay and "
             "comparison is answered `202` at once). The admin view's forms wait 10 s at "
             "most, and never longer than this. A request holds its worker at most this "
             "plus 10 s for its store calls (`request_seconds_max`, 70 s by default): the "
             "web server's read timeout for the pool (nginx's `fastcgi_read_timeout`, 60 s "
             "unless set) must be at least that, or this lower.",
     IN_CONFIG(wait_max_seconds)},
    {.section = "server",
     .name = "metrics_tenant_labels",
     .type = HTTP_CONFIG_ENUM,
     .choices = http_config_booleans,
     .def = "false",
     .help = "`true`: `GET /metrics` also counts the runs by tenant (a `tenant` label of "
             "`olivares_runs` holding the tenant's name). Off by default: a scrape then holds "
             "no tenant's name or id, so a monitoring system needs no tenant data, and the "
             "series stay few whatever the number of tenants.",
     IN_CONFIG(metrics_tenant_labels)},
    {.section = "server",
     .name = "backlog",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 65535,
     .def = "1024",
     .help = "The listen(2) queue of the FastCGI socket, where nginx's connections wait for "
             "a free worker; 64 made a burst of 150 parallel requests get nginx's 502. The "
             "kernel caps it at `net.core.somaxconn` (4096 on current kernels); the server "
             "logs a line when the value is above the cap.",
     IN_CONFIG(backlog)},
    /* storage quota */
    {.section = "server",
     .name = "max_stored_mb",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = HTTP_MAX_STORED_MB_MAX,
     .def = "0",
     .help = "The storage quota of every tenant, in MiB (1 MiB = 1048576 bytes): the bytes of "
             "its scenarios, runs' outputs, runs' logs, sessions and suites. A write that would "
             "take the tenant past it is refused with `507 quota_exceeded` and writes nothing; "
             "a run whose outputs pass it ends `failed`. 0: no quota, and nothing is counted. "
             "A `[tenant NAME]` section may set its own (`olivares-admin tenant usage` shows "
             "the figures).",
     IN_CONFIG(max_stored_mb)},

    /* [server]: retention (docs/retention.md) */
    {.section = "server",
     .name = "retention_days",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = HTTP_RETENTION_DAYS_MAX,
     .def = "0",
     .help = "How long a tenant's ended runs are kept, in days: a run that ended (completed, "
             "failed, degraded or cancelled) longer ago is deleted with its outputs and log by "
             "the purge (`purge_interval_seconds`, `olivares-admin purge`), unless a comparison "
             "rests on it. 0: kept forever. A `[tenant NAME]` section may set its own. "
             "Comparisons, approvals, scenarios, suites, sessions, the audit log and the "
             "evidence chain are never purged.",
     IN_CONFIG(retention_days)},
    {.section = "server",
     .name = "retention_include_referenced",
     .type = HTTP_CONFIG_ENUM,
     .choices = http_config_booleans,
     .def = "false",
     .help = "`true`: the purge also takes the expired runs a comparison (and so its "
             "approval) rests on: their outputs and logs go, and their records too but for "
             "the first run of each side, which the append-only comparison holds (the runs "
             "of a comparison not settled yet stay whole). `false`: "
             "those runs are kept whole, so a kept comparison's runs stay readable. Its "
             "evidence bundle verifies either way (it is built from the evidence chain).",
     IN_CONFIG(retention_include_referenced)},
    {.section = "server",
     .name = "purge_interval_seconds",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = 86400,
     .def = "3600",
     .help =
         "How often the olivares-fcgi master starts a purge of the runs past their "
         "retention, in seconds (the first one a minute after start-up at most): a "
         "short-lived process of its own, with its own store connection, ended when it "
         "runs past " STR(HTTP_PURGE_DEADLINE_S) " s, which logs one line with its "
                                                 "counts. 0: no automatic purge (`olivares-admin "
                                                 "purge` only). Nothing is started "
                                                 "while no tenant has a retention.",
     IN_CONFIG(purge_interval_seconds)},

    /* [runner] */
    {.section = "runner",
     .name = "path",
     .type = HTTP_CONFIG_PATH,
     .default_doc = "`olivares-runner` beside the running executable",
     .help = "The olivares-runner program.",
     IN_CONFIG(runner_path),
     .flags = HTTP_CONFIG_LONG},
    {.section = "runner",
     .name = "timeout_ms",
     .type = HTTP_CONFIG_INT,
     .min = TIMEOUT_MS_MIN,
     .max = TIMEOUT_MS_MAX,
     .def = "10000",
     .help = "The wall-clock limit of a run, in ms: the run spec's `limits.wall_ms`, which "
             "the runner enforces; the executor kills the runner's process group 3 s after "
             "it.",
     IN_CONFIG(run_timeout_ms)},
    {.section = "runner",
     .name = "backends",
     .type = HTTP_CONFIG_BACKENDS,
     .def = "inproc-mock",
     .help = "The backends a tenant without a `[tenant NAME]` section may use.",
     IN_CONFIG(backends)},
    {.section = "runner",
     .name = "default_backend",
     .type = HTTP_CONFIG_BACKEND,
     .def = "inproc-mock",
     .help = "The backend of a run that names none; one of `backends`.",
     IN_CONFIG(default_backend)},
    {.section = "runner",
     .name = "agents_dir",
     .type = HTTP_CONFIG_PATH,
     .default_doc = "`<data_dir>/agents`",
     .help = "The operator's agent programs, one executable per variant name: a run of a "
             "variant that has one, on an OS-level backend, executes it inside the jail; any "
             "other runs the built-in mock agent. Need not exist (`--check-config` warns "
             "when it does not).",
     IN_CONFIG(agents_dir),
     .flags = HTTP_CONFIG_LONG},
    {.section = "runner",
     .name = "binds",
     .type = HTTP_CONFIG_BINDS,
     .def = "/usr",
     .help = "Host paths bound read-only into the jail of the OS-level backends (`/usr`: the "
             "programs a `#!` agent runs). Empty: none.",
     IN_CONFIG(binds),
     .flags = HTTP_CONFIG_LONG},
    {.section = "runner",
     .name = "egress_allow",
     .type = HTTP_CONFIG_HOSTS,
     .def = "",
     .help = "The hosts a run's gateway may forward a request to when no mock answers it "
             "(controlled egress: the gateway, outside the jail, makes the request; the "
             "exchange is traced and the run is then not hermetic). Each item is `host` "
             "(the scheme's default port) or `host:port`. Empty: none, every such request "
             "is a mock miss.",
     IN_CONFIG(egress_allow),
     .flags = HTTP_CONFIG_LONG},
    {.section = "runner",
     .name = "egress_secrets",
     .type = HTTP_CONFIG_ABSFILE,
     .def = "",
     .help = "The file of headers the gateway adds to a request it forwards to an egress "
             "host (credentials for upstreams, which the agent never sees): `[host NAME]` or "
             "`[host NAME:PORT]` sections of `header = Name: value` lines, for hosts of "
             "`egress_allow`. Only its path goes in the run spec; the egress gateway opens "
             "it, outside the jail, and refuses to start unless it is a regular file owned "
             "by its user (or root) with no access for group or others (mode 0600). Empty: "
             "none, a request goes out with the agent's headers alone.",
     IN_CONFIG(egress_secrets),
     .flags = HTTP_CONFIG_LONG},
    {.section = "runner",
     .name = "cpu_seconds",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 600,
     .def = "5",
     .help = "The CPU time of the whole run, in seconds: all its processes together (their "
             "cgroup's CPU time; on gvisor the sandbox's sentry and gofer count too), and "
             "RLIMIT_CPU of each process." LIMIT_HELP,
     IN_CONFIG(limits.cpu_seconds)},
    {.section = "runner",
     .name = "memory_mb",
     .type = HTTP_CONFIG_INT,
     .min = 16,
     .max = 16384,
     .def = "256",
     .help = "The memory of the whole run, in MiB: the memory cgroup limit of all its "
             "processes together (on gvisor 256 MiB more, the sandbox's sentry and gofer), and "
             "RLIMIT_AS of each process." LIMIT_HELP,
     IN_CONFIG(limits.memory_mb)},
    {.section = "runner",
     .name = "processes",
     .type = HTTP_CONFIG_INT,
     .min = 2,
     .max = 4096,
     .def = "32",
     .help = "RLIMIT_NPROC and the pids limit of the agent." LIMIT_HELP,
     IN_CONFIG(limits.processes)},
    {.section = "runner",
     .name = "open_files",
     .type = HTTP_CONFIG_INT,
     .min = 8,
     .max = 65536,
     .def = "64",
     .help = "RLIMIT_NOFILE of the agent." LIMIT_HELP,
     IN_CONFIG(limits.open_files)},
    {.section = "runner",
     .name = "tmpfs_mb",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 4096,
     .def = "16",
     .help = "The size of the agent's /tmp, in MiB, on namespaces and gvisor, with one inode "
             "per KiB of it (1024 per MiB: files, directories and symlinks; creating one more "
             "fails with ENOSPC); on namespaces also the size of the jail's tmpfs root." LIMIT_HELP,
     IN_CONFIG(limits.tmpfs_mb)},
    {.section = "runner",
     .name = "max_active_runs",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 1000000,
     .def = "100",
     .help = "The runs one tenant may have queued or running at once; a run over it is "
             "refused with `429 busy` (a comparison counts two). A `[tenant NAME]` section "
             "may set its own.",
     IN_CONFIG(max_active_runs)},
    {.section = "runner",
     .name = "gvisor_platform",
     .type = HTTP_CONFIG_ENUM,
     .choices = http_config_gvisor_platforms,
     .def = "ptrace",
     .help = "The gVisor platform of the `gvisor` backend's sandboxes, passed to the runner "
             "on its command line (`--gvisor-platform`), not in the run spec. Whether the "
             "installed runsc and the host can run it shows in the backends listing's "
             "preflight; a run that cannot fails closed, naming it. `ptrace` needs no KVM.",
     IN_CONFIG(gvisor_platform)},

    /* [tenant NAME] */
    {.section = "tenant",
     .name = "backends",
     .type = HTTP_CONFIG_BACKENDS,
     .default_doc = "the `[runner]` `backends`",
     .help = "The backends the tenant may use; it may name one the `[runner]` list does not.",
     IN_TENANT(backends)},
    {.section = "tenant",
     .name = "default_backend",
     .type = HTTP_CONFIG_BACKEND,
     .default_doc = "the `[runner]` `default_backend`",
     .help = "The tenant's default backend; one of the section's `backends` (so without this "
             "key, the `[runner]` default must be one of them).",
     IN_TENANT(default_backend)},
    {.section = "tenant",
     .name = "max_active_runs",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 1000000,
     .default_doc = "the `[runner]` `max_active_runs`",
     .help = "The tenant's own limit of runs queued or running at once.",
     IN_TENANT(max_active_runs)},
    {.section = "tenant",
     .name = "egress_allow",
     .type = HTTP_CONFIG_HOSTS,
     .default_doc = "the `[runner]` `egress_allow`",
     .help = "The tenant's own egress hosts; empty (`egress_allow =`) for none whatever "
             "`[runner]` allows.",
     IN_TENANT(egress_allow),
     .flags = HTTP_CONFIG_LONG},
    {.section = "tenant",
     .name = "egress_secrets",
     .type = HTTP_CONFIG_ABSFILE,
     .default_doc = "the `[runner]` `egress_secrets`",
     .help = "The tenant's own egress secrets file; empty (`egress_secrets =`) for none "
             "whatever `[runner]` gives.",
     IN_TENANT(egress_secrets),
     .flags = HTTP_CONFIG_LONG},
    /* storage quota */
    {.section = "tenant",
     .name = "max_stored_mb",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = HTTP_MAX_STORED_MB_MAX,
     .default_doc = "the `[server]` `max_stored_mb`",
     .help = "The tenant's own storage quota, in MiB; 0 for none whatever `[server]` sets.",
     IN_TENANT(max_stored_mb)},
    /* [tenant NAME]: retention */
    {.section = "tenant",
     .name = "retention_days",
     .type = HTTP_CONFIG_INT,
     .min = 0,
     .max = HTTP_RETENTION_DAYS_MAX,
     .default_doc = "the `[server]` `retention_days`",
     .help = "How long the tenant's ended runs are kept, in days; 0: forever, whatever "
             "`[server]` says.",
     IN_TENANT(retention_days)},

    /* [scorer] */
    {.section = "scorer",
     .name = "adapter",
     .type = HTTP_CONFIG_SCORER,
     .def = "none",
     .help = "The scorer adapter: `none` (only the store's suites score; a run naming "
             "another suite is refused), `builtin:<dir>` (suite S is the file `<dir>/S.json`, "
             "evaluated in the "
             "server) or `exec:<command line>` (an external program: the line split on "
             "spaces, no shell, an empty environment).",
     IN_CONFIG(scorer),
     .flags = HTTP_CONFIG_LONG},
    {.section = "scorer",
     .name = "timeout_ms",
     .type = HTTP_CONFIG_INT,
     .min = HTTP_SCORER_TIMEOUT_MIN_MS,
     .max = HTTP_SCORER_TIMEOUT_MAX_MS,
     .def = STR(HTTP_SCORER_TIMEOUT_DEFAULT_MS),
     .help = "The time limit of one call of the `exec:` adapter, in ms.",
     IN_CONFIG(scorer_timeout_ms)},

    /* [admin] */
    {.section = "admin",
     .name = "session_minutes",
     .type = HTTP_CONFIG_INT,
     .min = HTTP_SESSION_MINUTES_MIN,
     .max = HTTP_SESSION_MINUTES_MAX,
     .def = STR(HTTP_SESSION_MINUTES_DEFAULT),
     .help = "The lifetime of an admin view sign-in session, in minutes (10080: a week): "
             "its cookie's Max-Age and the stored expiry.",
     IN_CONFIG(session_minutes)},

    /* [executor] */
    {.section = "executor",
     .name = "processes",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "How many `olivares-executor` processes `scripts/stack up` starts on this host.",
     IN_CONFIG(executor_processes)},
    {.section = "executor",
     .name = "slots",
     .type = HTTP_CONFIG_INT,
     .min = 1,
     .max = 256,
     .def = "4",
     .help = "Runs one executor process runs at once (one slot process each, with its own "
             "database connection and runner fork server).",
     IN_CONFIG(executor_slots)},
    {.section = "executor",
     .name = "lease_seconds",
     .type = HTTP_CONFIG_INT,
     .min = 3,
     .max = 3600,
     .def = "15",
     .help = "How long a running run may go without its executor's heartbeat (sent every "
             "third of it) before any executor ends it `failed`, reason `executor <id> lost: "
             "no heartbeat for N s`, its recorded steps kept; it is never run again. Also how "
             "long an executor that stopped heartbeating still counts as offering its "
             "backends. Every host must use the same value.",
     IN_CONFIG(executor_lease_seconds)},
    {.section = "executor",
     .name = "host_id",
     .type = HTTP_CONFIG_STRING,
     .default_doc = "the host's name",
     .help = "The host's name in executor ids (`<host_id>-<pid>`), which runs record and the "
             "lost reason names.",
     IN_CONFIG(executor_host_id)},
    {.name = NULL},
};

#define NKEYS (sizeof(http_config_keys) / sizeof(http_config_keys[0]) - 1)

/* Keys that were removed and what took their place: a file that still sets
 * one is refused with that, not loaded as if the bound were still there
 * nor refused as a mere typo. */
#define RUN_SLOTS_GONE                                                                             \
	"runs are run by olivares-executor; set [executor] slots (runs at once per executor) "     \
	"and [runner] max_active_runs (per tenant)"
static const struct {
	const char *section, *name, *replaced_by;
} gone_keys[] = {
    {"runner", "max_runs", RUN_SLOTS_GONE},
    {"runner", "max_runs_per_tenant", RUN_SLOTS_GONE},
    {NULL, NULL, NULL},
};

/* What replaced the removed key name of section s, or NULL. */
static const char *gone_key(const struct http_config_section *s, const char *name)
{
	size_t i;

	for (i = 0; gone_keys[i].name; i++)
		if (strcmp(gone_keys[i].section, s->name) == 0 &&
		    strcmp(gone_keys[i].name, name) == 0)
			return gone_keys[i].replaced_by;
	return NULL;
}

struct load_ctx {
	struct http_config *cfg;
	struct http_config_error *err;
	int failed;
	char file[512];
	/* the file's directory, absolute: relative paths in the file are
	 * taken from it, wherever the server is started */
	char dir[PATH_MAX];
	/* the keys given so far, by index in http_config_keys (those of
	 * [tenant NAME] per tenant): one given twice is an error, not a
	 * later line that silently wins, and a key given is not replaced by
	 * its derived default */
	unsigned char given[NKEYS];
	unsigned char tenant_given[HTTP_MAX_TENANT_POLICIES][NKEYS];
};

static int seterr(struct http_config_error *err, enum http_config_err kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int seterr(struct http_config_error *err, enum http_config_err kind, const char *fmt, ...)
{
	va_list ap;

	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

/* Copy value into dst (size n); -1 if it does not fit. */
static int copy_str(char *dst, size_t n, const char *value)
{
	size_t len = strlen(value);

	if (len >= n)
		return -1;
	memcpy(dst, value, len + 1);
	return 0;
}

/* value as a number in base from min to max, into *out; -1 if it is not. */
static int parse_long(const char *value, long min, long max, int base, long *out)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(value, &end, base);
	if (errno || end == value || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* 1 when name is one of the NULL-terminated list (its first len bytes). */
static int among(const char *const *list, const char *name, size_t len)
{
	size_t i;

	for (i = 0; list[i]; i++)
		if (strlen(list[i]) == len && strncmp(name, list[i], len) == 0)
			return 1;
	return 0;
}

static int backend_known(const char *name, size_t len)
{
	return among(http_config_known_backends, name, len);
}

/*
 * Copy the comma list value into dst (size n) with the blanks around each
 * item removed. Returns 0, or -1 when it does not fit or an item is empty
 * (allow_empty: the whole list may be empty).
 */
static int normalize_list(char *dst, size_t n, const char *value, int allow_empty)
{
	const char *p = value;
	const char *b, *e;
	size_t used = 0, len;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p) {
		if (!allow_empty || n == 0)
			return -1;
		dst[0] = '\0';
		return 0;
	}
	for (;;) {
		b = p;
		while (*p && *p != ',')
			p++;
		e = p;
		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		len = (size_t)(e - b);
		if (len == 0 || used + len + 2 > n)
			return -1;
		if (used)
			dst[used++] = ',';
		memcpy(dst + used, b, len);
		used += len;
		dst[used] = '\0';
		if (!*p)
			return 0;
		p++;
	}
}

/* 1 when every item of the normalised list passes ok (the empty list:
 * empty_ok), at most max items. */
static int list_all(const char *list, int (*ok)(const char *item, size_t len), int empty_ok,
                    int max)
{
	const char *p = list;
	const char *comma;
	size_t len;
	int count = 0;

	if (!*list)
		return empty_ok;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!ok(p, len) || ++count > max)
			return 0;
		if (!comma)
			return 1;
		p = comma + 1;
	}
}

/* An egress_allow item (len bytes at s): a host (lower-case letters,
 * digits, '-' and '.', not starting or ending with '.' or '-', at most 253
 * bytes) and optionally ':' and a port from 1 to 65535. */
static int host_valid(const char *s, size_t len)
{
	size_t i, hl = len;
	long port = 0;

	for (i = 0; i < len; i++)
		if (s[i] == ':') {
			hl = i;
			break;
		}
	if (hl == 0 || hl > 253 || s[0] == '.' || s[0] == '-' || s[hl - 1] == '.' ||
	    s[hl - 1] == '-')
		return 0;
	for (i = 0; i < hl; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return 0;
	if (hl == len)
		return 1;
	if (len - hl < 2 || len - hl > 6)
		return 0;
	for (i = hl + 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		port = port * 10 + (s[i] - '0');
	}
	return port >= 1 && port <= 65535 && s[hl + 1] != '0';
}

/* An egress_secrets value: empty, or an absolute path without empty, "."
 * or ".." parts and no trailing '/' (a file, named as the gateway opens
 * it: not from the configuration's directory, which the executor's host
 * may not share). */
static int absfile_valid(const char *s)
{
	const char *p;

	if (!*s)
		return 1;
	if (s[0] != '/' || s[strlen(s) - 1] == '/')
		return 0;
	for (p = s; *p; p++)
		if (*p == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
		                  (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return 0;
	return 1;
}

/* The [tenant NAME] section of tenant_name, or NULL (none, or NULL). */
static const struct http_tenant_policy *tenant_policy(const struct http_config *cfg,
                                                      const char *tenant_name)
{
	int i;

	for (i = 0; tenant_name && i < cfg->ntenants; i++)
		if (strcmp(cfg->tenants[i].name, tenant_name) == 0)
			return &cfg->tenants[i];
	return NULL;
}

const char *http_config_egress_secrets(const struct http_config *cfg, const char *tenant_name)
{
	const struct http_tenant_policy *t = tenant_policy(cfg, tenant_name);

	return t ? t->egress_secrets : cfg->egress_secrets;
}

const char *http_config_egress(const struct http_config *cfg, const char *tenant_name)
{
	const struct http_tenant_policy *t = tenant_policy(cfg, tenant_name);

	return t ? t->egress_allow : cfg->egress_allow;
}

long long http_config_quota_bytes(const struct http_config *cfg, const char *tenant_name)
{
	const struct http_tenant_policy *t = tenant_policy(cfg, tenant_name);

	return (long long)(t ? t->max_stored_mb : cfg->max_stored_mb) * 1048576LL;
}

int http_config_retention_days(const struct http_config *cfg, const char *tenant_name)
{
	const struct http_tenant_policy *t = tenant_policy(cfg, tenant_name);

	return t ? t->retention_days : cfg->retention_days;
}

int http_config_retention_any(const struct http_config *cfg)
{
	int i;

	if (cfg->retention_days)
		return 1;
	for (i = 0; i < cfg->ntenants; i++)
		if (cfg->tenants[i].retention_days)
			return 1;
	return 0;
}

int http_config_request_seconds_max(const struct http_config *cfg)
{
	return cfg->wait_max_seconds + HTTP_CONFIG_STORE_SECONDS;
}

int http_config_list_has(const char *list, const char *name)
{
	const char *p = list;
	const char *comma;
	size_t len;

	if (!*list)
		return 0;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == strlen(name) && strncmp(p, name, len) == 0)
			return 1;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* A bind the runner accepts (runner/main.c path_ok, bind_reserved): an
 * absolute path, no empty, "." or ".." component, no trailing '/', not /
 * itself, not /proc, /tmp, /agent or anything under them. */
static int bind_valid(const char *s, size_t len)
{
	size_t i, rl;

	if (len < 2 || len > MAX_BIND_PATH || s[0] != '/' || s[len - 1] == '/')
		return 0;
	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
		if (s[i] != '/')
			continue;
		if (i + 1 < len && s[i + 1] == '/')
			return 0;
		if (i + 1 < len && s[i + 1] == '.' && (i + 2 == len || s[i + 2] == '/'))
			return 0;
		if (i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.' &&
		    (i + 3 == len || s[i + 3] == '/'))
			return 0;
	}
	for (i = 0; bind_reserved[i]; i++) {
		rl = strlen(bind_reserved[i]);
		if (len >= rl && strncmp(s, bind_reserved[i], rl) == 0 &&
		    (len == rl || s[rl] == '/'))
			return 0;
	}
	return 1;
}

/* The [tenant NAME] entry for name, created if new; NULL when full. */
static struct http_tenant_policy *tenant_entry(struct http_config *cfg, const char *name)
{
	struct http_tenant_policy *t;
	int i;

	for (i = 0; i < cfg->ntenants; i++)
		if (strcmp(cfg->tenants[i].name, name) == 0)
			return &cfg->tenants[i];
	if (cfg->ntenants == HTTP_MAX_TENANT_POLICIES)
		return NULL;
	t = &cfg->tenants[cfg->ntenants++];
	memset(t, 0, sizeof(*t));
	memcpy(t->name, name, strlen(name) + 1);
	return t;
}

void http_config_policy(const struct http_config *cfg, const char *tenant_name,
                        const char **backends, const char **default_backend)
{
	int i;

	*backends = cfg->backends;
	*default_backend = cfg->default_backend;
	if (!tenant_name)
		return;
	for (i = 0; i < cfg->ntenants; i++) {
		if (strcmp(cfg->tenants[i].name, tenant_name) == 0) {
			*backends = cfg->tenants[i].backends;
			*default_backend = cfg->tenants[i].default_backend;
			return;
		}
	}
}

/* The syntax of fcgi/scorer/scorer.h (http_scorer_spec_valid, not linked into
 * olivares-admin): "none", "builtin:" + a directory, "exec:" + at least
 * one word. */
static int scorer_valid(const char *v)
{
	if (strcmp(v, "none") == 0)
		return 1;
	if (strncmp(v, "builtin:", 8) == 0 && v[8])
		return 1;
	if (strncmp(v, "exec:", 5) == 0 && v[5 + strspn(v + 5, " ")])
		return 1;
	return 0;
}

/* value, a path from the file, into out: as it is when absolute, else
 * under the file's directory ("./" prefixes dropped). -1 when empty or too
 * long. */
static int file_path(const struct load_ctx *c, const char *value, char *out, size_t n)
{
	if (!*value)
		return -1;
	/* absolute or not is decided on the value as written: ".//x" is
	 * relative, and stays so once its "./" and slashes are dropped */
	if (value[0] == '/')
		return copy_str(out, n, value);
	while (value[0] == '.' && value[1] == '/') {
		value += 2;
		while (value[0] == '/')
			value++;
	}
	if (!*value)
		return copy_str(out, n, c->dir);
	return (size_t)snprintf(out, n, "%s/%s", c->dir, value) >= n ? -1 : 0;
}

/* The [scorer] adapter with its directory (builtin:) or program (exec:,
 * the first word) taken from the file's directory when relative. */
static int scorer_from_file(const struct load_ctx *c, const char *value, char *out, size_t n)
{
	char path[PATH_MAX], prog_rel[PATH_MAX];
	const char *prog, *end;

	if (strncmp(value, "builtin:", 8) == 0)
		return file_path(c, value + 8, path, sizeof path) ||
		       (size_t)snprintf(out, n, "builtin:%s", path) >= n;
	if (strncmp(value, "exec:", 5) == 0) {
		prog = value + 5 + strspn(value + 5, " ");
		end = prog + strcspn(prog, " ");
		if (prog[0] == '/' || (size_t)(end - prog) >= sizeof prog_rel)
			return copy_str(out, n, value);
		memcpy(prog_rel, prog, (size_t)(end - prog));
		prog_rel[end - prog] = '\0';
		if (file_path(c, prog_rel, path, sizeof path))
			return -1;
		return (size_t)snprintf(out, n, "exec:%s%s", path, end) >= n;
	}
	return copy_str(out, n, value);
}

/* Append to out (n bytes, used so far *used, cut to fit). */
static void append(char *out, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *out, size_t n, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*used >= n)
		return;
	va_start(ap, fmt);
	r = vsnprintf(out + *used, n - *used, fmt, ap);
	va_end(ap);
	if (r > 0)
		*used = *used + (size_t)r < n ? *used + (size_t)r : n;
}

/* The items of list joined by ", ", the last by last_sep (", " or " or "). */
static void join(char *out, size_t n, size_t *used, const char *const *list, const char *last_sep)
{
	size_t i;

	for (i = 0; list[i]; i++)
		append(out, n, used, "%s%s", i == 0 ? "" : list[i + 1] ? ", " : last_sep, list[i]);
}

void http_config_wanted(const struct http_config_key *k, char *out, size_t n)
{
	size_t used = 0;

	if (n)
		out[0] = '\0';
	switch (k->type) {
	case HTTP_CONFIG_INT:
		append(out, n, &used, "a whole number from %ld to %ld", k->min, k->max);
		break;
	case HTTP_CONFIG_MODE:
		append(out, n, &used, "an octal number from %lo to 0%lo", k->min, k->max);
		break;
	case HTTP_CONFIG_ENUM:
		join(out, n, &used, k->choices, " or ");
		break;
	case HTTP_CONFIG_BACKEND:
	case HTTP_CONFIG_BACKENDS:
		append(out, n, &used, "known backends: ");
		join(out, n, &used, http_config_known_backends, ", ");
		break;
	case HTTP_CONFIG_BINDS:
		append(out, n, &used, "absolute normalised paths other than /, ");
		join(out, n, &used, bind_reserved, " and ");
		append(out, n, &used, ", at most %d", MAX_BINDS);
		break;
	case HTTP_CONFIG_SCORER:
		append(out, n, &used, "none, builtin:<dir> or exec:<command line>");
		break;
	case HTTP_CONFIG_HOSTS:
		append(out, n, &used,
		       "a comma list of at most %d host or host:port (lower-case names or IPv4 "
		       "addresses, ports 1 to 65535)",
		       HTTP_CONFIG_MAX_EGRESS);
		break;
	case HTTP_CONFIG_ABSFILE:
		append(out, n, &used,
		       "an absolute path without . or .. parts, or nothing for none");
		break;
	case HTTP_CONFIG_STRING:
	case HTTP_CONFIG_PATH:
		append(out, n, &used, "a value that is not empty and not too long");
		break;
	}
}

/* The items of list, each in backticks, joined as join() does. */
static void join_code(char *out, size_t n, size_t *used, const char *const *list,
                      const char *last_sep)
{
	size_t i;

	for (i = 0; list[i]; i++)
		append(out, n, used, "%s`%s`",
		       i == 0        ? ""
		       : list[i + 1] ? ", "
		                     : last_sep,
		       list[i]);
}

void http_config_value_doc(const struct http_config_key *k, char *out, size_t n)
{
	size_t used = 0;

	if (n)
		out[0] = '\0';
	switch (k->type) {
	case HTTP_CONFIG_INT:
		append(out, n, &used, "a whole number from %ld to %ld", k->min, k->max);
		break;
	case HTTP_CONFIG_MODE:
		append(out, n, &used,
		       "an octal mode from `%lo` to `0%lo`, no write access for others", k->min,
		       k->max);
		break;
	case HTTP_CONFIG_STRING:
		append(out, n, &used, "text, not empty");
		break;
	case HTTP_CONFIG_PATH:
		append(out, n, &used,
		       "a path, not empty (a relative one: from the file's directory)");
		break;
	case HTTP_CONFIG_ENUM:
		join_code(out, n, &used, k->choices, " or ");
		break;
	case HTTP_CONFIG_BACKEND:
		append(out, n, &used, "one of ");
		join_code(out, n, &used, http_config_known_backends, ", ");
		break;
	case HTTP_CONFIG_BACKENDS:
		append(out, n, &used, "a comma list of ");
		join_code(out, n, &used, http_config_known_backends, ", ");
		break;
	case HTTP_CONFIG_BINDS:
		append(
		    out, n, &used,
		    "a comma list, maybe empty, of at most %d absolute paths without `.` or `..` "
		    "parts, other than `/`, ",
		    MAX_BINDS);
		join_code(out, n, &used, bind_reserved, " and ");
		append(out, n, &used, " and what is under them");
		break;
	case HTTP_CONFIG_SCORER:
		append(out, n, &used, "`none`, `builtin:<dir>` or `exec:<command line>`");
		break;
	case HTTP_CONFIG_HOSTS:
		append(
		    out, n, &used,
		    "a comma list, maybe empty, of at most %d `host` or `host:port` (a lower-case "
		    "name or an IPv4 address; a port from 1 to 65535)",
		    HTTP_CONFIG_MAX_EGRESS);
		break;
	case HTTP_CONFIG_ABSFILE:
		append(out, n, &used,
		       "an absolute path without `.` or `..` parts, or nothing (none)");
		break;
	}
}

/* Store value, a value of key k from the file (or its default), into dst
 * (the key's field). Returns 0, or -1 with what was wanted in *err. */
static int set_value(const struct load_ctx *c, const struct http_config_key *k, void *dst,
                     const char *value, struct http_config_error *err)
{
	long v = 0;
	int bad;

	switch (k->type) {
	case HTTP_CONFIG_INT:
		bad = parse_long(value, k->min, k->max, 10, &v);
		if (bad)
			break;
		if (k->size == sizeof(int))
			*(int *)dst = (int)v;
		else
			*(long *)dst = v;
		break;
	case HTTP_CONFIG_MODE:
		bad = parse_long(value, k->min, k->max, 8, &v);
		/* write access for others: any local user could talk to the
		 * workers as nginx does, behind its back */
		if (!bad && (v & 0002))
			return seterr(err, HTTP_CONFIG_E_VALUE,
			              "no write access for others: 0660 and the socket's group for "
			              "nginx's user");
		if (!bad)
			*(unsigned *)dst = (unsigned)v;
		break;
	case HTTP_CONFIG_STRING:
		bad = copy_str(dst, k->size, value) || !*value;
		break;
	case HTTP_CONFIG_PATH:
		bad = file_path(c, value, dst, k->size);
		break;
	case HTTP_CONFIG_ENUM:
		bad = !among(k->choices, value, strlen(value)) || copy_str(dst, k->size, value);
		break;
	case HTTP_CONFIG_BACKEND:
		bad = copy_str(dst, k->size, value) || !backend_known(value, strlen(value));
		break;
	case HTTP_CONFIG_BACKENDS:
		bad = normalize_list(dst, k->size, value, 0) ||
		      !list_all(dst, backend_known, 0, INT_MAX);
		break;
	case HTTP_CONFIG_BINDS:
		bad = normalize_list(dst, k->size, value, 1) ||
		      !list_all(dst, bind_valid, 1, MAX_BINDS);
		break;
	case HTTP_CONFIG_SCORER:
		bad = !scorer_valid(value) || scorer_from_file(c, value, dst, k->size);
		break;
	case HTTP_CONFIG_HOSTS:
		bad = normalize_list(dst, k->size, value, 1) ||
		      !list_all(dst, host_valid, 1, HTTP_CONFIG_MAX_EGRESS);
		break;
	case HTTP_CONFIG_ABSFILE:
		bad = !absfile_valid(value) || copy_str(dst, k->size, value);
		break;
	default:
		bad = 1;
	}
	if (!bad)
		return 0;
	err->kind = HTTP_CONFIG_E_VALUE;
	http_config_wanted(k, err->message, sizeof(err->message));
	return -1;
}

int http_config_format(const struct http_config *cfg, const struct http_config_key *k, int tenant,
                       char *out, size_t n)
{
	const struct http_config_section *s = http_config_section_find(k->section);
	const char *base = (const char *)cfg;
	const char *field;
	int r;

	if (s && s->named) {
		if (tenant < 0 || tenant >= cfg->ntenants)
			return -1;
		base = (const char *)&cfg->tenants[tenant];
	}
	field = base + k->offset;
	switch (k->type) {
	case HTTP_CONFIG_INT:
		if (k->size == sizeof(int))
			r = snprintf(out, n, "%d", *(const int *)field);
		else
			r = snprintf(out, n, "%ld", *(const long *)field);
		break;
	case HTTP_CONFIG_MODE:
		r = snprintf(out, n, "%04o", *(const unsigned *)field);
		break;
	default:
		r = snprintf(out, n, "%s", field);
	}
	return r < 0 || (size_t)r >= n ? -1 : 0;
}

const struct http_config_section *http_config_section_find(const char *name)
{
	const struct http_config_section *s;

	for (s = http_config_sections; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* The section of the file named section: an unnamed one by its name, a
 * named one by its word and a space ("tenant acme"), with *rest at what
 * follows the space. NULL when it is none of ours. */
static const struct http_config_section *section_of(const char *section, const char **rest)
{
	const struct http_config_section *s;
	size_t len;

	*rest = NULL;
	for (s = http_config_sections; s->name; s++) {
		len = strlen(s->name);
		if (!s->named && strcmp(section, s->name) == 0)
			return s;
		if (s->named && strncmp(section, s->name, len) == 0 && section[len] == ' ') {
			*rest = section + len + 1;
			return s;
		}
	}
	return NULL;
}

/* The key name of section s, or NULL. */
static const struct http_config_key *key_of(const struct http_config_section *s, const char *name)
{
	const struct http_config_key *k;

	for (k = http_config_keys; k->name; k++)
		if (strcmp(k->section, s->name) == 0 && strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* 1 when the key name of the unnamed section section was in the file. */
static int given(const struct load_ctx *c, const char *section, const char *name)
{
	const struct http_config_key *k = key_of(http_config_section_find(section), name);

	return k && c->given[k - http_config_keys];
}

/* 1 when the [tenant NAME] key name was in tenant i's section. */
static int tenant_given(const struct load_ctx *c, int i, const char *name)
{
	const char *rest;
	const struct http_config_key *k = key_of(section_of("tenant NAME", &rest), name);

	return k && c->tenant_given[i][k - http_config_keys];
}

/* The sections of the file for the message of an unknown one:
 * "[server], [runner], [tenant NAME], [scorer], [admin]". */
static void known_sections(char *out, size_t n)
{
	const struct http_config_section *s;
	size_t used = 0;

	if (n)
		out[0] = '\0';
	for (s = http_config_sections; s->name; s++)
		append(out, n, &used, "%s[%s%s]", s == http_config_sections ? "" : ", ", s->name,
		       s->named ? " NAME" : "");
}

/* inih handler: returns 1 on success, 0 to report an error on this line. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	const struct http_config_section *s;
	const struct http_config_key *k;
	struct http_tenant_policy *t = NULL;
	struct http_config_error why;
	unsigned char *seen;
	const char *tname;
	char canon[256], known[128], *base;
	size_t len;

	if (c->failed)
		return 0;
	c->failed = 1; /* until the value is stored */
	s = section_of(section, &tname);
	if (!s) {
		known_sections(known, sizeof(known));
		seterr(c->err, HTTP_CONFIG_E_SECTION, "%s: unknown section [%s] (known: %s)",
		       c->file, section, known);
		return 0;
	}
	snprintf(canon, sizeof(canon), "%s", section);
	if (s->named) {
		/* [tenant  a] and [tenant a ] are [tenant a]: one section, the
		 * name without the blanks around it */
		while (isspace((unsigned char)*tname))
			tname++;
		snprintf(canon, sizeof(canon), "%s %s", s->name, tname);
		len = strlen(canon);
		while (len > strlen(s->name) + 1 && isspace((unsigned char)canon[len - 1]))
			canon[--len] = '\0';
		tname = canon + strlen(s->name) + 1;
		if (!*tname || strlen(tname) > sizeof(t->name) - 1) {
			seterr(c->err, HTTP_CONFIG_E_SECTION,
			       "%s: [%s]: a tenant name is 1 to %zu bytes", c->file, section,
			       sizeof(t->name) - 1);
			return 0;
		}
		t = tenant_entry(c->cfg, tname);
		if (!t) {
			seterr(c->err, HTTP_CONFIG_E_SECTION, "%s: more than %d [%s NAME] sections",
			       c->file, HTTP_MAX_TENANT_POLICIES, s->name);
			return 0;
		}
	}
	k = key_of(s, name);
	if (!k && gone_key(s, name)) {
		seterr(c->err, HTTP_CONFIG_E_KEY, "%s: [%s] %s is gone: %s", c->file, canon, name,
		       gone_key(s, name));
		return 0;
	}
	if (!k) {
		seterr(c->err, HTTP_CONFIG_E_KEY, "%s: unknown key \"%s\" in section [%s]", c->file,
		       name, section);
		return 0;
	}
	seen = t ? &c->tenant_given[t - c->cfg->tenants][k - http_config_keys]
	         : &c->given[k - http_config_keys];
	if (*seen) {
		seterr(c->err, HTTP_CONFIG_E_KEY,
		       "%s: [%s] %s is given twice (again on a later line, or continued on an "
		       "indented line): give it once, on one line",
		       c->file, canon, name);
		return 0;
	}
	*seen = 1;
	base = t ? (char *)t : (char *)c->cfg;
	if (set_value(c, k, base + k->offset, value, &why)) {
		/* the value is shown, but never a secret's (a connection
		 * string may hold a password) */
		if (k->flags & HTTP_CONFIG_SECRET)
			seterr(c->err, HTTP_CONFIG_E_VALUE, "%s: bad value for [%s] %s (%s)",
			       c->file, section, name, why.message);
		else
			seterr(c->err, HTTP_CONFIG_E_VALUE,
			       "%s: bad value \"%.80s\" for [%s] %s (%s)", c->file, value, section,
			       name, why.message);
		return 0;
	}
	c->failed = 0;
	return 1;
}

/*
 * inih reads a line into a 200-byte buffer (INI_MAX_LINE, as built by
 * Debian) and parses the rest of a longer line as a new line, so a long
 * value would be cut silently when its tail looks like a comment (a DSN's
 * ";"). Refuse such a file instead. Returns 0, or the first long line's
 * number, or -1 if the file cannot be read. Also, before that long line:
 * *unknown_line is the line of the first section header whose name
 * (copied into unknown) is not one of ours, or 0. inih calls the key
 * handler only for keys, so an empty unknown section is seen here only.
 */
#define CONFIG_MAX_LINE HTTP_CONFIG_MAX_LINE
/* inih copies a section's name into 50 bytes (INI_MAX_SECTION, as built by
 * Debian) and cuts a longer one: a [tenant NAME] of a long name would
 * apply to another name, its first bytes. Such a header is refused
 * (*long_name = 1, with its line and name as for an unknown one). */
#define CONFIG_MAX_SECTION 49

static int prescan(const char *path, int *unknown_line, char *unknown, size_t unknown_n,
                   int *long_name)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *p, *end;
	const char *rest;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, found = 0;

	if (!f)
		return -1;
	*unknown_line = 0;
	*long_name = 0;
	while (!found) {
		n = getline(&line, &cap, f);
		if (n == -1)
			break;
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		line[n] = '\0';
		if (n > CONFIG_MAX_LINE) {
			found = lineno;
			break;
		}
		/* a section header as inih reads it, the name between '[' and
		 * ']': one the handler never sees (no key under it) is still
		 * an unknown section, not ignored */
		for (p = line; isspace((unsigned char)*p); p++)
			;
		end = *p == '[' ? strchr(p, ']') : NULL;
		if (end && !*unknown_line) {
			*end = '\0';
			if (end - (p + 1) > CONFIG_MAX_SECTION) {
				*unknown_line = lineno;
				*long_name = 1;
				snprintf(unknown, unknown_n, "%s", p + 1);
			} else if (!section_of(p + 1, &rest)) {
				*unknown_line = lineno;
				snprintf(unknown, unknown_n, "%s", p + 1);
			}
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* path made absolute against the current directory (nothing is created, so
 * realpath cannot be used: the directory may not exist yet). */
static int make_absolute(char *path, size_t n)
{
	char cwd[PATH_MAX];
	char tmp[PATH_MAX + 512];
	const char *rel = path;

	if (path[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof cwd))
		return -1;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	if (strcmp(rel, ".") == 0 || rel[0] == '\0')
		snprintf(tmp, sizeof tmp, "%s", cwd);
	else
		snprintf(tmp, sizeof tmp, "%s/%s", cwd, rel);
	/* drop trailing slashes, keep "/" */
	while (strlen(tmp) > 1 && tmp[strlen(tmp) - 1] == '/')
		tmp[strlen(tmp) - 1] = '\0';
	return copy_str(path, n, tmp);
}

/* olivares-runner beside the running executable. */
static void default_runner(char *out, size_t n, const char *argv0)
{
	char exe[PATH_MAX];
	char *slash;
	char *real = NULL;

	real = realpath("/proc/self/exe", NULL);
	if (!real && argv0 && strchr(argv0, '/'))
		real = realpath(argv0, NULL);
	if (real && strlen(real) < sizeof exe) {
		strcpy(exe, real);
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, n, "%s/olivares-runner", exe) < n) {
				free(real);
				return;
			}
		}
	}
	free(real);
	snprintf(out, n, "olivares-runner");
}

/*
 * Default pool size: two workers per online CPU (at least 2, at most
 * WORKERS_MAX). A libfcgi worker is idle for part of every request,
 * waiting for nginx to close the connection (libfcgi's lingering close;
 * nginx keeps no FastCGI connection alive) and, under a client's Prefer:
 * wait, for a run's end: with one worker per core the cores sit idle in
 * those waits.
 * Measured with bench/api on 2 cores: 4 workers serve about 1.5x the GET
 * rate and 1.3x the runs of 2 workers; 6 or 8 add nothing to GETs and lose
 * runs to SQLite write contention (bench/RESULTS.md).
 */
static int default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > WORKERS_MAX / 2)
		n = WORKERS_MAX / 2;
	return (int)(2 * n);
}

/* 1. The defaults: the table's own (parsed as values of the file would
 * be), then those computed here. */
static int load_defaults(struct load_ctx *c)
{
	struct http_config *cfg = c->cfg;
	const struct http_config_key *k;
	const char *env = getenv("OLIVARES_DATA");
	struct http_config_error why;

	for (k = http_config_keys; k->name; k++) {
		if (!k->def || http_config_section_find(k->section)->named)
			continue;
		if (set_value(c, k, (char *)cfg + k->offset, k->def, &why))
			return seterr(c->err, HTTP_CONFIG_E_VALUE, "the default of [%s] %s: %s",
			              k->section, k->name, why.message);
	}
	if (copy_str(cfg->data_dir, sizeof cfg->data_dir, env && *env ? env : "./var"))
		return seterr(c->err, HTTP_CONFIG_E_ENV, "OLIVARES_DATA is too long");
	cfg->workers = default_workers();
	return 0;
}

/* 2. The INI file conf, if one is named or found. */
static int load_file(struct load_ctx *c, const char *conf)
{
	char unknown[CONFIG_MAX_LINE + 1], known[128], msg[sizeof(c->err->message)];
	int r, unknown_line, long_name;

	if (copy_str(c->file, sizeof c->file, conf) || copy_str(c->dir, sizeof c->dir, conf) ||
	    make_absolute(c->dir, sizeof c->dir))
		return seterr(c->err, HTTP_CONFIG_E_FILE, "configuration path is too long");
	*strrchr(c->dir, '/') = '\0';
	if (!c->dir[0])
		strcpy(c->dir, "/");
	r = prescan(conf, &unknown_line, unknown, sizeof unknown, &long_name);
	if (r == -1)
		return seterr(c->err, HTTP_CONFIG_E_FILE, "%s: cannot open: %s", conf,
		              strerror(errno));
	if (r > 0)
		return seterr(c->err, HTTP_CONFIG_E_SYNTAX,
		              "%s:%d: line longer than %d bytes (a long connection string goes in "
		              "OLIVARES_DSN; shorten other values)",
		              conf, r, CONFIG_MAX_LINE);
	if (unknown_line && long_name)
		return seterr(c->err, HTTP_CONFIG_E_SECTION,
		              "%s:%d: section name longer than %d bytes: [%s] (a [tenant NAME] "
		              "section takes a name of at most %d bytes)",
		              conf, unknown_line, CONFIG_MAX_SECTION, unknown,
		              CONFIG_MAX_SECTION - (int)strlen("tenant "));
	if (unknown_line) {
		known_sections(known, sizeof(known));
		return seterr(c->err, HTTP_CONFIG_E_SECTION,
		              "%s:%d: unknown section [%s] (known: %s)", conf, unknown_line,
		              unknown, known);
	}
	r = ini_parse(conf, on_key, c);
	if (r == -1)
		return seterr(c->err, HTTP_CONFIG_E_FILE, "%s: cannot open: %s", conf,
		              strerror(errno));
	if (r == -2)
		return seterr(c->err, HTTP_CONFIG_E_FILE, "%s: out of memory", conf);
	if (r != 0 && !c->failed)
		return seterr(c->err, HTTP_CONFIG_E_SYNTAX, "%s:%d: syntax error", conf, r);
	if (r != 0) {
		/* put the line number after the handler's message */
		snprintf(msg, sizeof(msg), "%s", c->err->message);
		return seterr(c->err, c->err->kind, "%s (line %d)", msg, r);
	}
	return 0;
}

/* 3. The environment, then what derives from the data dir and the rules
 * between keys, checked once the whole file is read. */
static int load_resolve(struct load_ctx *c, const char *argv0)
{
	struct http_config *cfg = c->cfg;
	struct http_tenant_policy *t;
	const char *env, *hint;
	char in_file[sizeof c->file + 2] = "";
	int i, have_dsn = given(c, "server", "dsn");

	/* OLIVARES_DATA wins over the file's data_dir */
	env = getenv("OLIVARES_DATA");
	if (env && *env && copy_str(cfg->data_dir, sizeof cfg->data_dir, env))
		return seterr(c->err, HTTP_CONFIG_E_ENV, "OLIVARES_DATA is too long");
	if (make_absolute(cfg->data_dir, sizeof cfg->data_dir))
		return seterr(c->err, HTTP_CONFIG_E_ENV, "data_dir: cannot make \"%s\" absolute",
		              cfg->data_dir);
	env = getenv("OLIVARES_DSN");
	if (env && *env) {
		if (copy_str(cfg->dsn, sizeof cfg->dsn, env))
			return seterr(c->err, HTTP_CONFIG_E_ENV, "OLIVARES_DSN is too long");
		have_dsn = 1;
	}

	/* derived defaults, from the final data_dir */
	if (!have_dsn && (size_t)snprintf(cfg->dsn, sizeof cfg->dsn,
	                                  "Driver=SQLite3;Database=%s/olivares.db;Timeout=2000;"
	                                  "JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1",
	                                  cfg->data_dir) >= sizeof cfg->dsn)
		return seterr(c->err, HTTP_CONFIG_E_ENV,
		              "data_dir is too long for the default dsn");
	if (!given(c, "server", "socket") &&
	    (size_t)snprintf(cfg->socket_path, sizeof cfg->socket_path, "%s/olivares.sock",
	                     cfg->data_dir) >= sizeof cfg->socket_path)
		return seterr(c->err, HTTP_CONFIG_E_ENV,
		              "data_dir is too long for the default socket path");
	if (!given(c, "runner", "path"))
		default_runner(cfg->runner_path, sizeof cfg->runner_path, argv0);
	if (!given(c, "executor", "host_id") &&
	    (gethostname(cfg->executor_host_id, sizeof cfg->executor_host_id) != 0 ||
	     !cfg->executor_host_id[0]))
		strcpy(cfg->executor_host_id, "localhost");
	cfg->executor_host_id[sizeof cfg->executor_host_id - 1] = '\0';
	if (!given(c, "runner", "agents_dir") &&
	    (size_t)snprintf(cfg->agents_dir, sizeof cfg->agents_dir, "%s/agents", cfg->data_dir) >=
	        sizeof cfg->agents_dir)
		return seterr(c->err, HTTP_CONFIG_E_ENV,
		              "data_dir is too long for the default agents_dir");
	if (make_absolute(cfg->agents_dir, sizeof cfg->agents_dir))
		return seterr(c->err, HTTP_CONFIG_E_ENV, "agents_dir: cannot make \"%s\" absolute",
		              cfg->agents_dir);

	/* the rules between keys name the file they come from */
	if (c->file[0])
		snprintf(in_file, sizeof in_file, "%s: ", c->file);
	if (!http_config_list_has(cfg->backends, cfg->default_backend))
		return seterr(
		    c->err, HTTP_CONFIG_E_RULE,
		    "%s[runner] default_backend \"%s\" is not in [runner] backends \"%s\"", in_file,
		    cfg->default_backend, cfg->backends);
	/* complete each tenant's policy from the [runner] pair (the sections
	 * may come before [runner] in the file, so only now) */
	for (i = 0; i < cfg->ntenants; i++) {
		t = &cfg->tenants[i];
		/* the hint names the key the section lacks, if one came from [runner] */
		if (!t->backends[0])
			hint = "the section has no backends: it takes [runner]'s; add backends "
			       "to the section";
		else if (!t->default_backend[0])
			hint = "the section has no default_backend: it takes [runner]'s; set "
			       "default_backend in the section";
		else
			hint = "make default_backend one of the section's backends";
		if (!t->backends[0])
			strcpy(t->backends, cfg->backends);
		if (!t->default_backend[0])
			strcpy(t->default_backend, cfg->default_backend);
		if (!t->max_active_runs)
			t->max_active_runs = cfg->max_active_runs;
		/* given, even empty, it stands; else [runner]'s */
		if (!tenant_given(c, i, "egress_allow"))
			strcpy(t->egress_allow, cfg->egress_allow);
		if (!tenant_given(c, i, "egress_secrets"))
			strcpy(t->egress_secrets, cfg->egress_secrets);
		/* given, even 0 (no quota), it stands; else [server]'s */
		if (!tenant_given(c, i, "max_stored_mb"))
			t->max_stored_mb = cfg->max_stored_mb;
		/* given, even 0, it stands; else [server]'s */
		if (!tenant_given(c, i, "retention_days"))
			t->retention_days = cfg->retention_days;
		if (!http_config_list_has(t->backends, t->default_backend))
			return seterr(c->err, HTTP_CONFIG_E_RULE,
			              "%s[tenant %s] default_backend \"%s\" is not in its backends "
			              "\"%s\" (%s)",
			              in_file, t->name, t->default_backend, t->backends, hint);
	}
	return 0;
}

int http_config_load(struct http_config *cfg, const char *argv0, struct http_config_error *err)
{
	struct load_ctx c;
	const char *env, *conf = NULL;
	char probe[1024];
	struct stat sb;
	int rc;

	memset(cfg, 0, sizeof *cfg);
	memset(&c, 0, sizeof c);
	memset(err, 0, sizeof(*err));
	c.cfg = cfg;
	c.err = err;
	rc = load_defaults(&c);
	if (!rc) {
		env = getenv("OLIVARES_CONF");
		if (env && *env)
			conf = env;
		else if ((size_t)snprintf(probe, sizeof probe, "%s/olivares.conf", cfg->data_dir) <
		             sizeof probe &&
		         stat(probe, &sb) == 0)
			conf = probe;
		if (conf)
			rc = load_file(&c, conf);
	}
	if (!rc) {
		strcpy(cfg->file, c.file);
		rc = load_resolve(&c, argv0);
	}
	return rc ? -1 : 0;
}
