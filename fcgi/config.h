#ifndef OLIVARES_FCGI_CONFIG_H
#define OLIVARES_FCGI_CONFIG_H
/**
 * The configuration of olivares-fcgi and olivares-admin: one INI file
 * (parsed with inih), every key with a built-in default, so that no file
 * is needed.
 *
 * Sources, later ones winning:
 *   1. built-in defaults;
 *   2. the INI file: $OLIVARES_CONF if set, else $OLIVARES_DATA/olivares.conf
 *      if it exists;
 *   3. environment: OLIVARES_DATA (the data dir, default "./var") and
 *      OLIVARES_DSN (the ODBC connection string) win over [server] data_dir
 *      and dsn.
 *
 * A relative path in the file (data_dir, socket, [runner] path and
 * agents_dir, the directory of [scorer] builtin: and the program of exec:)
 * is taken from the file's own directory, so the server reads the same
 * files wherever it is started; OLIVARES_DATA is taken from the current
 * directory.
 *
 * The keys are the table http_config_keys below: section, name, type,
 * bounds, default, help and the field of struct http_config each lands in.
 * The table drives the parser, the defaults, the messages of a bad value,
 * what olivares-fcgi --check-config prints and the reference
 * (docs/configuration.md, docs/man/olivares.conf.5: fcgi/config_reference.h).
 * Rules between keys (a default backend outside its list, a tenant's
 * policy completed from [runner]) are checked once the whole file is read.
 * A key that was removed ([runner] max_runs, max_runs_per_tenant) is
 * refused with what replaced it.
 */
#include <stddef.h>

/** [admin] session_minutes: default and bounds (minutes). */
#define HTTP_SESSION_MINUTES_DEFAULT 480
#define HTTP_SESSION_MINUTES_MIN 1
#define HTTP_SESSION_MINUTES_MAX 10080

/** The largest [server] / [tenant NAME] max_stored_mb (MiB): 16 TiB. */
#define HTTP_MAX_STORED_MB_MAX 16777216
/** [server] retention_days: the most (100 years; sql/store.h's bound). */
#define HTTP_RETENTION_DAYS_MAX 36500
/** The longest one automatic purge may run before the master ends it (s). */
#define HTTP_PURGE_DEADLINE_S 600

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
	int max_active_runs;      /* the tenant's, or [runner]'s */
	char egress_allow[1024];  /* the tenant's, or [runner]'s: comma list of host[:port] */
	char egress_secrets[512]; /* the tenant's, or [runner]'s: absolute path, "" for none */
	int max_stored_mb;        /* the tenant's, or [server]'s: MiB, 0 for no quota */
	int retention_days;       /* the tenant's, or [server]'s: days, 0 for forever */
};

struct http_config {
	char data_dir[512];
	char dsn[1024];
	char socket_path[512];
	unsigned socket_mode;
	int workers;
	int backlog;
	int wait_max_seconds;
	char runner_path[512];
	int run_timeout_ms;
	char backends[256]; /* comma list, no spaces */
	char default_backend[64];
	char scorer[512];      /* [scorer] adapter */
	int scorer_timeout_ms; /* [scorer] timeout_ms */
	char agents_dir[512];  /* absolute */
	char binds[1024];      /* comma list, no spaces; "" for none */
	/* [runner] egress_allow: the hosts a run's gateway may forward to,
	 * comma list of host[:port], no spaces; "" (the default) for none */
	char egress_allow[1024];
	/* [runner] egress_secrets: the absolute path of the file of headers the
	 * egress gateway adds for its hosts; "" (the default) for none */
	char egress_secrets[512];
	/* [runner] gvisor_platform, one of http_config_gvisor_platforms */
	char gvisor_platform[16];
	struct http_run_limits limits;
	struct http_tenant_policy tenants[HTTP_MAX_TENANT_POLICIES];
	int ntenants;
	int session_minutes; /* [admin] session_minutes */
	int max_active_runs; /* [runner] max_active_runs: queued + running, per tenant */
	int max_stored_mb;   /* [server] max_stored_mb: MiB per tenant, 0 for no quota */
	/* [server] metrics_tenant_labels: "true" or "false" (GET /metrics) */
	char metrics_tenant_labels[8];
	/* [executor] */
	int executor_processes;
	int executor_slots;
	int executor_lease_seconds;
	char executor_host_id[129];
	char file[512]; /* the INI file read, "" when none was */
	/* the DSN the workers connect with, set by olivares-fcgi once the
	 * database exists (a SQLite one with NoCreat=1: a file deleted under
	 * the server is never created again, empty, to take writes); "" until
	 * then, meaning dsn */
	char worker_dsn[1040];
	/* [server] retention: days (0 keeps forever), "false"|"true", and
	 * the master's purge interval in seconds (0: none) */
	int retention_days;
	char retention_include_referenced[8];
	int purge_interval_seconds;
};

/** What a key's value is: how it is parsed, printed and documented. */
enum http_config_type {
	HTTP_CONFIG_INT,      /* a whole number from min to max (an int or long field) */
	HTTP_CONFIG_MODE,     /* an octal file mode from min to max, not writable by
	                       * others (an unsigned field) */
	HTTP_CONFIG_STRING,   /* any text but the empty one (a char array) */
	HTTP_CONFIG_PATH,     /* a path, relative ones from the file's directory */
	HTTP_CONFIG_ENUM,     /* one of choices, exactly */
	HTTP_CONFIG_BACKEND,  /* one of http_config_known_backends */
	HTTP_CONFIG_BACKENDS, /* a comma list of known backends, kept without blanks */
	HTTP_CONFIG_BINDS,    /* a comma list of bind paths (may be empty), kept
	                       * without blanks */
	HTTP_CONFIG_SCORER,   /* none, builtin:<dir> or exec:<command line> */
	HTTP_CONFIG_HOSTS,    /* a comma list (may be empty) of host[:port], kept
	                       * without blanks */
	HTTP_CONFIG_ABSFILE,  /* an absolute normalised path, or empty for none */
};

/** Flags of a key. */
enum {
	/** Its value may hold a password: never shown in a message, and printed
	 * by --check-config with the passwords masked. */
	HTTP_CONFIG_SECRET = 1,
	/** Its value may be longer than a line of the file takes (a path, a
	 * connection string): --check-config prints a note in its place when
	 * "key = value" would not fit HTTP_CONFIG_MAX_LINE. */
	HTTP_CONFIG_LONG = 2,
};

/** A section of the file. A named one ([tenant NAME]) may be given once
 * per NAME; its keys land in one struct http_tenant_policy each. */
struct http_config_section {
	const char *name;  /* "server"; the word before NAME for a named one */
	int named;         /* 1 for [name NAME] */
	const char *title; /* what the section is about, a few words */
	const char *help;  /* a paragraph for the reference */
};

/** One key of the file. */
struct http_config_key {
	const char *section; /* the name of its http_config_sections entry */
	const char *name;
	enum http_config_type type;
	long min, max;              /* HTTP_CONFIG_INT, HTTP_CONFIG_MODE: the bounds */
	const char *const *choices; /* HTTP_CONFIG_ENUM: NULL-terminated */
	/* the default as the file would write it, applied (parsed as a value
	 * of the file) before the file is read; NULL when it is computed at
	 * load, as default_doc says */
	const char *def;
	const char *default_doc; /* the default for the reference when def is NULL */
	const char *help;        /* what it does, a paragraph for the reference */
	/* where the value lands: offset and size of a field of struct
	 * http_config, or of struct http_tenant_policy for a named section */
	size_t offset, size;
	unsigned flags; /* HTTP_CONFIG_SECRET, HTTP_CONFIG_LONG */
};

/** The sections in the order the reference lists them (the order an
 * unknown section's message names them), ended by a NULL name. */
extern const struct http_config_section http_config_sections[];

/** The keys, grouped by section in the order of http_config_sections and,
 * within one, in the order --check-config prints them; ended by a NULL
 * name. */
extern const struct http_config_key http_config_keys[];

/** The http_config_sections entry named name, or NULL. */
const struct http_config_section *http_config_section_find(const char *name);

/**
 * What a value of key k must be, as the message of a bad value says it
 * ("a whole number from 1 to 64"), into out (n bytes, cut to fit).
 */
void http_config_wanted(const struct http_config_key *k, char *out, size_t n);

/**
 * What a value of key k may be, for the reference ("a comma list of
 * `inproc-mock`, `namespaces`, ..."): the values the file takes literally
 * in backticks. Into out (n bytes, cut to fit).
 */
void http_config_value_doc(const struct http_config_key *k, char *out, size_t n);

/**
 * The value of key k in cfg as the file would write it, into out (n
 * bytes): the number in decimal (a mode in octal, "%04o"), else the text
 * as it was stored (a secret unmasked). For a key of a named section,
 * tenant is the index in cfg->tenants (else ignored). Returns 0, or -1
 * when out is too small (out then holds the cut value).
 */
int http_config_format(const struct http_config *cfg, const struct http_config_key *k, int tenant,
                       char *out, size_t n);

/** Why loading the configuration stopped (http_config_load). */
enum http_config_err {
	HTTP_CONFIG_E_FILE = 1, /* the file cannot be read, or its path is too long */
	HTTP_CONFIG_E_SYNTAX,   /* a line inih cannot parse, or one too long */
	HTTP_CONFIG_E_SECTION,  /* an unknown section, a bad tenant name, one tenant too many */
	HTTP_CONFIG_E_KEY,      /* an unknown key, or one given twice */
	HTTP_CONFIG_E_VALUE,    /* a value its key refuses */
	HTTP_CONFIG_E_RULE,     /* a rule between keys */
	HTTP_CONFIG_E_ENV,      /* the environment, or a path derived from the data dir, too long */
};

/** The configuration layer's error: its kind and one sentence for the
 * operator (cut to fit; it names the file, and the line where there is
 * one). */
struct http_config_error {
	enum http_config_err kind;
	char message[1024];
};

/**
 * Fill *cfg from defaults, file and environment as above. argv0 is used to
 * locate olivares-runner beside the executable. Returns 0 (*err zeroed),
 * or -1 with *err set for an unreadable file, a line too long or that
 * inih cannot parse, an unknown section or key, a key given twice, a bad
 * value (the message names the file and the line) or a rule between keys
 * broken (it names the file).
 */
int http_config_load(struct http_config *cfg, const char *argv0, struct http_config_error *err);

/**
 * The backend policy of the tenant named tenant_name: its [tenant NAME]
 * section if there is one, else the [runner] pair. tenant_name may be NULL
 * (the [runner] pair). *backends and *default_backend point into cfg.
 */
void http_config_policy(const struct http_config *cfg, const char *tenant_name,
                        const char **backends, const char **default_backend);

/**
 * The egress policy of the tenant named tenant_name (NULL: [runner]'s): the
 * hosts its runs' gateways may forward a request to that no mock answers,
 * a comma list of host or host:port (a host alone: the scheme's default
 * port), "" for none. Points into cfg.
 */
const char *http_config_egress(const struct http_config *cfg, const char *tenant_name);

/**
 * The egress secrets file of the tenant named tenant_name (NULL:
 * [runner]'s): the absolute path of the file of headers its runs'
 * egress gateways add for their hosts (runner/gateway_secrets.h), "" for
 * none. Only the path: the server never opens the file. Points into cfg.
 */
const char *http_config_egress_secrets(const struct http_config *cfg, const char *tenant_name);

/**
 * The storage quota of the tenant named tenant_name (NULL: [server]'s),
 * in bytes: its [tenant NAME] max_stored_mb if the section sets one, else
 * [server]'s, times 1048576; 0 for no quota.
 */
long long http_config_quota_bytes(const struct http_config *cfg, const char *tenant_name);

/** At most this many items in an egress_allow list. */
#define HTTP_CONFIG_MAX_EGRESS 32

/** 1 when name is one of the items of the comma list list (exact match). */
int http_config_list_has(const char *list, const char *name);

/** The longest line the INI file may have, in bytes: inih (as built by
 * Debian) reads a line into 200 bytes and parses the rest of a longer one
 * as a new line, so longer lines are refused at load. */
#define HTTP_CONFIG_MAX_LINE 198

/**
 * The longest a request can hold a worker, in whole seconds: a run, replay
 * or comparison is a job that an executor runs, so a request holds its
 * worker at most while it waits for its run's end ([server]
 * wait_max_seconds, the cut of a client's Prefer: wait=N) plus
 * HTTP_CONFIG_STORE_SECONDS for its store calls. A web server's read
 * timeout for the pool (nginx's fastcgi_read_timeout) shorter than this
 * answers 504 to a client that waits for a slow run. 70 with the
 * defaults.
 */
int http_config_request_seconds_max(const struct http_config *cfg);

/** What a request's store calls may add to its wait (s): the store gives a
 * locked database up after about 8 + 2 s with the default DSN
 * (sql/core.c). */
#define HTTP_CONFIG_STORE_SECONDS 10

/** The backends the runner knows, in listing order, NULL-terminated:
 * inproc-mock, namespaces, gvisor, firecracker (model/runspec.h). */
extern const char *const http_config_known_backends[];

/** The gVisor platforms [runner] gvisor_platform accepts, NULL-terminated,
 * the default first: ptrace, kvm, systrap (those olivares-runner
 * --gvisor-platform accepts). */
extern const char *const http_config_gvisor_platforms[];

/** The values of a yes/no key, NULL-terminated: "false", "true". */
extern const char *const http_config_booleans[];

/**
 * The retention of the tenant named tenant_name (NULL: [server]'s), in
 * days, 0 for forever: its [tenant NAME] retention_days if the section
 * sets one, else [server]'s.
 */
int http_config_retention_days(const struct http_config *cfg, const char *tenant_name);

/** 1 when any tenant may have a retention: [server] retention_days or a
 * [tenant NAME] one is not 0. */
int http_config_retention_any(const struct http_config *cfg);

#endif
