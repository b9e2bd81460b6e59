#ifndef OLIVARES_FCGI_CONFIG_H
#define OLIVARES_FCGI_CONFIG_H
/**
 * Configuration shared by olivares-fcgi and olivares-admin (DESIGN.md §6, §8).
 *
 * Sources, later ones winning:
 *   1. built-in defaults (every key has one; no file is needed);
 *   2. the INI file: $OLIVARES_CONF if set, else $OLIVARES_DATA/olivares.conf
 *      if it exists (parsed with inih);
 *   3. environment: OLIVARES_DATA (data dir, default "./var"),
 *      OLIVARES_DSN (ODBC connection string).
 *
 * A relative path in the file (data_dir, socket, [runner] path and
 * agents_dir, the directory of [scorer] builtin: and the program of exec:)
 * is taken from the file's own directory, so the server reads the same
 * files wherever it is started; OLIVARES_DATA is taken from the current
 * directory.
 *
 * INI keys (section [server] unless noted):
 *   data_dir        default $OLIVARES_DATA or ./var (made absolute)
 *   dsn             default "Driver=SQLite3;Database=<data_dir>/olivares.db;
 *                   Timeout=2000;JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1"
 *                   (Timeout: SQLite's busy wait per attempt, ms; with the
 *                   store's retry budget (sql/store.c) a locked database
 *                   gives a 503 storage_unavailable in about 10 s, well
 *                   under nginx's fastcgi_read_timeout of 60 s)
 *   socket          default <data_dir>/olivares.sock
 *   socket_mode     default 0600 (octal)
 *   workers         default 2 x the online CPUs (2..64): a worker waits
 *                   for nginx's close after each reply and for the runner
 *                   during a run, so one per core leaves cores idle
 *                   (measured: README "Performance"); 1..64
 *   backlog         default 1024 (1..65535): the listen(2) queue of the
 *                   FastCGI socket, where nginx's connections wait for a
 *                   free worker; 64 made a burst of 150 parallel requests
 *                   get 502. The kernel silently caps it at
 *                   net.core.somaxconn (4096 on current kernels).
 *   [runner] path   default: olivares-runner next to the running executable
 *   [runner] timeout_ms  wall-clock limit per run (the spec's
 *                   limits.wall_ms), 100..600000, default 10000
 *   [runner] backends    backends tenants may use, comma list of
 *                   inproc-mock, namespaces, gvisor, firecracker;
 *                   default "inproc-mock"
 *   [runner] default_backend  default "inproc-mock"; must be in backends
 *   [runner] agents_dir  directory of operator-provisioned agent programs,
 *                   one executable per variant name; default
 *                   <data_dir>/agents (need not exist)
 *   [runner] binds  host paths bound read-only into the jail of the
 *                   OS-level backends, comma list of absolute normalised
 *                   paths other than /, /proc, /tmp, /agent (at most 32);
 *                   default "/usr"; empty: none
 *   [runner] gvisor_platform  the gVisor platform of the gvisor backend's
 *                   sandboxes: ptrace, kvm or systrap; default "ptrace"
 *                   (it works on these machines). Passed to the runner
 *                   on its command line (--gvisor-platform), not in the
 *                   spec; whether the installed runsc and the host can
 *                   run it shows in the backends listing's preflight,
 *                   and a run that cannot fails closed naming it
 *   [runner] max_runs  runs on an OS-level backend (an agent program,
 *                   which may take its whole wall-clock limit) in progress
 *                   at once on this server, 1..workers; default workers
 *                   - 1 (at least 1), so that one worker is always left
 *                   for the other requests (/healthz, reads). A run over
 *                   it is refused with 429 busy (fcgi/runslots.h).
 *                   inproc-mock runs do not count: no agent runs there.
 *   [runner] max_runs_per_tenant  the same for one tenant, 1..max_runs;
 *                   default max_runs - 1 (at least 1), so that one tenant
 *                   cannot take every slot
 *   [runner] cpu_seconds (1..600, default 5), memory_mb (16..16384,
 *                   default 256), processes (2..4096, default 32),
 *                   open_files (8..65536, default 64), tmpfs_mb (1..4096,
 *                   default 16): the spec's limits (model/runspec.h); the
 *                   defaults and bounds are those of runner/backend.h and
 *                   runner/main.c, so the runner never refuses them
 *   [tenant NAME] backends, default_backend: the policy of the tenant named
 *                   NAME (as created with olivares-admin), replacing the
 *                   [runner] pair for it. An absent backends is the
 *                   [runner] list; an absent default_backend is the
 *                   [runner] default, which must then be in the list.
 *                   At most HTTP_MAX_TENANT_POLICIES sections.
 *   [scorer] adapter     none | builtin:<dir> | exec:<command line>
 *                   (fcgi/scorer.h); default "none"; the syntax is checked
 *                   at load, the directory or program when the worker
 *                   builds the adapter (http_scorer_from_config)
 *   [scorer] timeout_ms  time limit of one exec scorer call, 100..600000,
 *                   default 5000
 *
 *   [admin] session_minutes  lifetime of an admin view sign-in session
 *                   (fcgi/view.h): its cookie's Max-Age and the stored
 *                   expiry; 1..10080 (a week), default 480 (8 hours)
 * Validation at load: an unknown backend name, a default that is not in
 * its allowed list, a bad bind, an unknown gVisor platform or a limit out
 * of bounds is an error.
 */
#include <stddef.h>

/** [admin] session_minutes: default and bounds (minutes). */
#define HTTP_SESSION_MINUTES_DEFAULT 480
#define HTTP_SESSION_MINUTES_MIN 1
#define HTTP_SESSION_MINUTES_MAX 10080

/** Most [tenant NAME] sections in one file. */
#define HTTP_MAX_TENANT_POLICIES 32

/** The agent limits sent in every run spec (model/runspec.h "limits";
 * wall_ms is http_config.run_timeout_ms). Units as named. */
struct http_run_limits {
	long cpu_seconds;
	long memory_mb;
	long processes;
	long open_files;
	long tmpfs_mb;
};

/** One [tenant NAME] section, completed at load: both fields always set. */
struct http_tenant_policy {
	char name[129];           /* tenant name, 1..128 bytes */
	char backends[256];       /* allowed backends, comma list, no spaces */
	char default_backend[64]; /* one of backends */
};

struct http_config {
	char data_dir[512];
	char dsn[1024];
	char socket_path[512];
	unsigned socket_mode;
	int workers;
	int backlog;
	char runner_path[512];
	int run_timeout_ms;
	int max_runs;            /* [runner] max_runs, resolved (never 0) */
	int max_runs_per_tenant; /* [runner] max_runs_per_tenant, resolved */
	char backends[256];      /* comma list, no spaces */
	char default_backend[64];
	char scorer[512];      /* [scorer] adapter */
	int scorer_timeout_ms; /* [scorer] timeout_ms */
	char agents_dir[512]; /* absolute */
	char binds[1024];     /* comma list, no spaces; "" for none */
	/* [runner] gvisor_platform, one of http_config_gvisor_platforms */
	char gvisor_platform[16];
	struct http_run_limits limits;
	struct http_tenant_policy tenants[HTTP_MAX_TENANT_POLICIES];
	int ntenants;
	int session_minutes; /* [admin] session_minutes */
	char file[512];      /* the INI file read, "" when none was */
	/* the DSN the workers connect with, set by olivares-fcgi once the
	 * database exists (a SQLite one with NoCreat=1: a file deleted under
	 * the server is never created again, empty, to take writes); "" until
	 * then, meaning dsn */
	char worker_dsn[1040];
};

/**
 * Fill *cfg from defaults, file and environment as above. argv0 is used to
 * locate olivares-runner beside the executable. Returns 0, or -1 with a
 * message in err (errlen bytes) for an unreadable file, an unknown key or a
 * bad value.
 */
int http_config_load(struct http_config *cfg, const char *argv0, char *err, size_t errlen);

/**
 * The backend policy of the tenant named tenant_name: its [tenant NAME]
 * section if there is one, else the [runner] pair. tenant_name may be NULL
 * (the [runner] pair). *backends and *default_backend point into cfg.
 */
void http_config_policy(const struct http_config *cfg, const char *tenant_name,
                        const char **backends, const char **default_backend);

/** 1 when name is one of the items of the comma list list (exact match). */
int http_config_list_has(const char *list, const char *name);

/** The longest line the INI file may have, in bytes: inih (as built by
 * Debian) reads a line into 200 bytes and parses the rest of a longer one
 * as a new line, so longer lines are refused at load. */
#define HTTP_CONFIG_MAX_LINE 198

/**
 * The longest a request can hold a worker, in whole seconds: a comparison
 * runs its scenario twice, each run taking up to [runner] timeout_ms plus
 * the worker's backstop grace (HTTP_DISPATCH_GRACE_MS, fcgi/dispatch.h)
 * and 2 s for its spec and records, then scored for up to [scorer]
 * timeout_ms. A web server's read timeout for the pool (nginx's
 * fastcgi_read_timeout) shorter than this cuts off requests whose work is
 * still done and recorded. 40 with the defaults.
 */
int http_config_request_seconds_max(const struct http_config *cfg);

/** The backends the runner knows, in listing order, NULL-terminated:
 * inproc-mock, namespaces, gvisor, firecracker (model/runspec.h). */
extern const char *const http_config_known_backends[];

/** The gVisor platforms [runner] gvisor_platform accepts, NULL-terminated,
 * the default first: ptrace, kvm, systrap (those olivares-runner
 * --gvisor-platform accepts). */
extern const char *const http_config_gvisor_platforms[];

#endif
