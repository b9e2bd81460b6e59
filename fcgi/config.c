/*
 * Configuration loader (config.h): defaults, then the INI file (inih), then
 * the environment. Creates nothing: the data directory is only named here
 * (olivares-admin migrate creates it).
 */
#include "fcgi/config.h"
#include "fcgi/run/dispatch.h" /* HTTP_DISPATCH_GRACE_MS (macros only) */
#include "fcgi/run/preflight_cache.h" /* PREFLIGHT_CACHE_BACKENDS */
#include "fcgi/scorer/scorer.h"   /* the [scorer] timeout_ms bounds (macros only) */

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

/* Backends the runner knows (DESIGN.md §1); the list may allow any subset. */
const char *const http_config_known_backends[] = {"inproc-mock", "namespaces", "gvisor",
                                                  "firecracker", NULL};
/* every backend has a record in the pool's preflight answers */
_Static_assert(sizeof(http_config_known_backends) / sizeof(http_config_known_backends[0]) - 1 <=
                   PREFLIGHT_CACHE_BACKENDS,
               "PREFLIGHT_CACHE_BACKENDS (fcgi/preflight_cache.h) below the known backends");

/* gVisor platforms the runner accepts (runner/backend.h
 * runner_gvisor_platforms, the first is the default): the loader refuses
 * any other, so the runner never gets a platform it would refuse. */
const char *const http_config_gvisor_platforms[] = {"ptrace", "kvm", "systrap", NULL};

/* Defaults and bounds of the agent limits: those of runner/backend.h
 * (RUNNER_DEFAULT_*) and of the runner's spec check (runner/main.c,
 * limit_keys), so a configuration the loader accepts is never refused by
 * the runner. fcgi/ does not include runner/ headers (DESIGN.md §2). */
struct limit_key {
	const char *name;
	size_t offset;
	long min, max, def;
};

static const struct limit_key limit_keys[] = {
    {"cpu_seconds", offsetof(struct http_run_limits, cpu_seconds), 1, 600, 5},
    {"memory_mb", offsetof(struct http_run_limits, memory_mb), 16, 16384, 256},
    {"processes", offsetof(struct http_run_limits, processes), 2, 4096, 32},
    {"open_files", offsetof(struct http_run_limits, open_files), 8, 65536, 64},
    {"tmpfs_mb", offsetof(struct http_run_limits, tmpfs_mb), 1, 4096, 16},
    {NULL, 0, 0, 0, 0},
};

/* Bounds of [runner] timeout_ms: the runner's limits.wall_ms bounds. */
#define TIMEOUT_MS_MIN 100
#define TIMEOUT_MS_MAX 600000
#define MAX_BINDS 32
#define MAX_BIND_PATH 1024
#define TENANT_PREFIX "tenant "

/* Keys a file may give: [server], [runner], [scorer], [admin] and two per
 * [tenant NAME] section, with room to spare. */
#define CONFIG_MAX_KEYS 256

struct load_ctx {
	struct http_config *cfg;
	char *err;
	size_t errlen;
	int failed;
	/* keys given explicitly, so derived defaults do not override them */
	int have_dsn, have_socket, have_runner, have_data_dir, have_agents_dir;
	char file[512];
	/* the file's directory, absolute: relative paths in the file are
	 * taken from it, wherever the server is started */
	char dir[PATH_MAX];
	/* every [section] key given so far (FNV-1a of "section\nname"): one
	 * given twice is an error, not a later line that silently wins */
	unsigned long long seen[CONFIG_MAX_KEYS];
	int nseen;
};

static int seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
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

/* What the last parse_int() that failed wanted, for the error message. */
static char int_wanted[96];

static int parse_int(const char *value, long min, long max, int base, long *out)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(value, &end, base);
	if (errno || end == value || *end != '\0' || v < min || v > max) {
		if (base == 8)
			snprintf(int_wanted, sizeof int_wanted, "an octal number from %lo to 0%lo",
			         min, max);
		else
			snprintf(int_wanted, sizeof int_wanted, "a whole number from %ld to %ld",
			         min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int gvisor_platform_known(const char *name)
{
	size_t i;

	for (i = 0; http_config_gvisor_platforms[i]; i++)
		if (strcmp(name, http_config_gvisor_platforms[i]) == 0)
			return 1;
	return 0;
}

static int backend_known(const char *name, size_t len)
{
	size_t i;

	for (i = 0; http_config_known_backends[i]; i++)
		if (strlen(http_config_known_backends[i]) == len &&
		    strncmp(name, http_config_known_backends[i], len) == 0)
			return 1;
	return 0;
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

/* Every item of a normalised list is a known backend. */
static int backends_valid(const char *list)
{
	const char *p = list;
	const char *comma;
	size_t len;

	if (!*list)
		return 0;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!backend_known(p, len))
			return 0;
		if (!comma)
			return 1;
		p = comma + 1;
	}
}

int http_config_request_seconds_max(const struct http_config *cfg)
{
	long per_run_ms =
	    (long)cfg->run_timeout_ms + HTTP_DISPATCH_GRACE_MS + 2000 + cfg->scorer_timeout_ms;

	return (int)(2 * ((per_run_ms + 999) / 1000));
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
	static const char *const reserved[] = {"/proc", "/tmp", "/agent", NULL};
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
	for (i = 0; reserved[i]; i++) {
		rl = strlen(reserved[i]);
		if (len >= rl && strncmp(s, reserved[i], rl) == 0 && (len == rl || s[rl] == '/'))
			return 0;
	}
	return 1;
}

/* Every item of a normalised list is a valid bind; at most MAX_BINDS. */
static int binds_valid(const char *list)
{
	const char *p = list;
	const char *comma;
	size_t len;
	int count = 0;

	if (!*list)
		return 1;
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!bind_valid(p, len) || ++count > MAX_BINDS)
			return 0;
		if (!comma)
			return 1;
		p = comma + 1;
	}
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

/* The syntax of fcgi/scorer.h (http_scorer_spec_valid, not linked into
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

static int make_absolute(char *path, size_t n);

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

/* 1 when section's key name was given before (and remembers it). */
static int given_twice(struct load_ctx *c, const char *section, const char *name)
{
	unsigned long long h = 14695981039346656037ULL;
	const char *parts[3] = {section, "\n", name};
	const unsigned char *p;
	int i;

	for (i = 0; i < 3; i++)
		for (p = (const unsigned char *)parts[i]; *p; p++) {
			h ^= *p;
			h *= 1099511628211ULL;
		}
	for (i = 0; i < c->nseen; i++)
		if (c->seen[i] == h)
			return 1;
	if (c->nseen == CONFIG_MAX_KEYS)
		return -1;
	c->seen[c->nseen++] = h;
	return 0;
}

/* The sections of the file: [server], [runner], [scorer], [admin] and
 * [tenant NAME]. */
#define KNOWN_SECTIONS "[server], [runner], [tenant NAME], [scorer], [admin]"

static int section_known(const char *section)
{
	return strcmp(section, "server") == 0 || strcmp(section, "runner") == 0 ||
	       strcmp(section, "scorer") == 0 || strcmp(section, "admin") == 0 ||
	       strncmp(section, TENANT_PREFIX, strlen(TENANT_PREFIX)) == 0;
}

/* inih handler: returns 1 on success, 0 to report an error on this line. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	struct http_config *cfg = c->cfg;
	const struct limit_key *k;
	struct http_tenant_policy *t;
	const char *tname, *wanted = NULL;
	char canon[256];
	size_t k_len;
	long v;
	int bad = 0, r;

	if (c->failed)
		return 0;
	/* [tenant  a] is [tenant a]: one section, compared as such */
	if (strncmp(section, TENANT_PREFIX, strlen(TENANT_PREFIX)) == 0) {
		tname = section + strlen(TENANT_PREFIX);
		while (isspace((unsigned char)*tname))
			tname++;
		snprintf(canon, sizeof canon, "%s%s", TENANT_PREFIX, tname);
		/* and [tenant a ] too: a name never ends in white space */
		for (k_len = strlen(canon);
		     k_len > strlen(TENANT_PREFIX) && isspace((unsigned char)canon[k_len - 1]);)
			canon[--k_len] = '\0';
	} else {
		snprintf(canon, sizeof canon, "%s", section);
	}
	r = given_twice(c, canon, name);
	if (r) {
		c->failed = 1;
		if (r < 0)
			seterr(c->err, c->errlen, "%s: more than %d keys", c->file,
			       CONFIG_MAX_KEYS);
		else
			seterr(c->err, c->errlen,
			       "%s: [%s] %s is given twice (again on a later line, or continued on "
			       "an indented line): give it once, on one line",
			       c->file, canon, name);
		return 0;
	}
	int_wanted[0] = '\0';
	if (strcmp(section, "server") == 0) {
		if (strcmp(name, "data_dir") == 0) {
			bad = file_path(c, value, cfg->data_dir, sizeof cfg->data_dir);
			c->have_data_dir = 1;
		} else if (strcmp(name, "dsn") == 0) {
			bad = copy_str(cfg->dsn, sizeof cfg->dsn, value) || !*value;
			c->have_dsn = 1;
		} else if (strcmp(name, "socket") == 0) {
			bad = file_path(c, value, cfg->socket_path, sizeof cfg->socket_path);
			c->have_socket = 1;
		} else if (strcmp(name, "socket_mode") == 0) {
			bad = parse_int(value, 0, 0777, 8, &v);
			cfg->socket_mode = (unsigned)v;
			/* write access for others: any local user could talk to
			 * the workers as nginx does, behind its back */
			if (!bad && (v & 0002)) {
				bad = 1;
				snprintf(int_wanted, sizeof int_wanted,
				         "no write access for others: 0660 and the socket's group "
				         "for nginx's user");
			}
		} else if (strcmp(name, "workers") == 0) {
			bad = parse_int(value, 1, 64, 10, &v);
			cfg->workers = (int)v;
		} else if (strcmp(name, "backlog") == 0) {
			bad = parse_int(value, 1, 65535, 10, &v);
			cfg->backlog = (int)v;
		} else {
			goto unknown;
		}
	} else if (strcmp(section, "runner") == 0) {
		if (strcmp(name, "path") == 0) {
			bad = file_path(c, value, cfg->runner_path, sizeof cfg->runner_path);
			c->have_runner = 1;
		} else if (strcmp(name, "timeout_ms") == 0) {
			bad = parse_int(value, TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, 10, &v);
			cfg->run_timeout_ms = (int)v;
		} else if (strcmp(name, "max_runs") == 0) {
			/* against workers once the whole file is read */
			bad = parse_int(value, 1, 64, 10, &v);
			cfg->max_runs = (int)v;
		} else if (strcmp(name, "max_runs_per_tenant") == 0) {
			bad = parse_int(value, 1, 64, 10, &v);
			cfg->max_runs_per_tenant = (int)v;
		} else if (strcmp(name, "backends") == 0) {
			bad = normalize_list(cfg->backends, sizeof cfg->backends, value, 0) ||
			      !backends_valid(cfg->backends);
		} else if (strcmp(name, "default_backend") == 0) {
			bad = copy_str(cfg->default_backend, sizeof cfg->default_backend, value) ||
			      !backend_known(value, strlen(value));
		} else if (strcmp(name, "agents_dir") == 0) {
			bad = file_path(c, value, cfg->agents_dir, sizeof cfg->agents_dir);
			c->have_agents_dir = 1;
		} else if (strcmp(name, "binds") == 0) {
			bad = normalize_list(cfg->binds, sizeof cfg->binds, value, 1) ||
			      !binds_valid(cfg->binds);
		} else if (strcmp(name, "gvisor_platform") == 0) {
			bad = !gvisor_platform_known(value) ||
			      copy_str(cfg->gvisor_platform, sizeof cfg->gvisor_platform, value);
		} else {
			for (k = limit_keys; k->name; k++)
				if (strcmp(k->name, name) == 0)
					break;
			if (!k->name)
				goto unknown;
			bad = parse_int(value, k->min, k->max, 10, &v);
			if (!bad)
				*(long *)((char *)&cfg->limits + k->offset) = v;
		}
	} else if (strncmp(section, TENANT_PREFIX, strlen(TENANT_PREFIX)) == 0) {
		/* the name as canonicalised above: no space around it */
		tname = canon + strlen(TENANT_PREFIX);
		if (!*tname || strlen(tname) > 128) {
			c->failed = 1;
			seterr(c->err, c->errlen, "%s: [%s]: a tenant name is 1 to 128 bytes",
			       c->file, section);
			return 0;
		}
		t = tenant_entry(cfg, tname);
		if (!t) {
			c->failed = 1;
			seterr(c->err, c->errlen, "%s: more than %d [tenant NAME] sections",
			       c->file, HTTP_MAX_TENANT_POLICIES);
			return 0;
		}
		if (strcmp(name, "backends") == 0)
			bad = normalize_list(t->backends, sizeof t->backends, value, 0) ||
			      !backends_valid(t->backends);
		else if (strcmp(name, "default_backend") == 0)
			bad = copy_str(t->default_backend, sizeof t->default_backend, value) ||
			      !backend_known(value, strlen(value));
		else
			goto unknown;
	} else if (strcmp(section, "scorer") == 0) {
		if (strcmp(name, "adapter") == 0) {
			bad = !scorer_valid(value) ||
			      scorer_from_file(c, value, cfg->scorer, sizeof cfg->scorer);
		} else if (strcmp(name, "timeout_ms") == 0) {
			bad = parse_int(value, HTTP_SCORER_TIMEOUT_MIN_MS,
			                HTTP_SCORER_TIMEOUT_MAX_MS, 10, &v);
			if (!bad)
				cfg->scorer_timeout_ms = (int)v;
		} else {
			goto unknown;
		}
	} else if (strcmp(section, "admin") == 0) {
		if (strcmp(name, "session_minutes") != 0)
			goto unknown;
		bad = parse_int(value, HTTP_SESSION_MINUTES_MIN, HTTP_SESSION_MINUTES_MAX, 10, &v);
		if (!bad)
			cfg->session_minutes = (int)v;
	} else {
		c->failed = 1;
		seterr(c->err, c->errlen, "%s: unknown section [%s] (known: " KNOWN_SECTIONS ")",
		       c->file, section);
		return 0;
	}
	if (bad) {
		c->failed = 1;
		if (int_wanted[0])
			wanted = int_wanted;
		else if (strcmp(name, "backends") == 0 || strcmp(name, "default_backend") == 0)
			wanted = "known backends: inproc-mock, namespaces, gvisor, firecracker";
		else if (strcmp(name, "binds") == 0)
			wanted =
			    "absolute normalised paths other than /, /proc, /tmp and /agent, at "
			    "most 32";
		else if (strcmp(name, "adapter") == 0)
			wanted = "none, builtin:<dir> or exec:<command line>";
		else if (strcmp(name, "gvisor_platform") == 0)
			wanted = "ptrace, kvm or systrap";
		else
			wanted = "a value that is not empty and not too long";
		/* the value is shown, but never a connection string's (it may
		 * hold a password) */
		if (strcmp(name, "dsn") == 0)
			seterr(c->err, c->errlen, "%s: bad value for [%s] %s (%s)", c->file,
			       section, name, wanted);
		else
			seterr(c->err, c->errlen, "%s: bad value \"%.80s\" for [%s] %s (%s)",
			       c->file, value, section, name, wanted);
		return 0;
	}
	return 1;
unknown:
	c->failed = 1;
	seterr(c->err, c->errlen, "%s: unknown key \"%s\" in section [%s]", c->file, name, section);
	return 0;
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

static int prescan(const char *path, int *unknown_line, char *unknown, size_t unknown_n)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *p, *end;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, found = 0;

	if (!f)
		return -1;
	*unknown_line = 0;
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
			if (!section_known(p + 1)) {
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
 * Default pool size: two workers per online CPU (at least 2, at most 64).
 * A libfcgi worker is idle for part of every request, waiting for nginx to
 * close the connection (libfcgi's lingering close; no keepalive, DESIGN.md
 * §9) and, for a run, for the runner: with one worker per core the cores
 * sit idle in those waits. Measured with bench/api on 2 cores: 4 workers
 * serve about 1.5x the GET rate and 1.3x the runs of 2 workers; 6 or 8 add
 * nothing to GETs and lose runs to SQLite write contention (README,
 * "Performance").
 */
static int default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > 32)
		n = 32;
	return (int)(2 * n);
}

int http_config_load(struct http_config *cfg, const char *argv0, char *err, size_t errlen)
{
	struct load_ctx c;
	const char *env;
	const char *conf = NULL;
	const struct limit_key *k;
	struct http_tenant_policy *t;
	char probe[1024];
	char in_file[sizeof c.file + 2] = "";
	char unknown[CONFIG_MAX_LINE + 1];
	struct stat sb;
	int r, i, unknown_line;

	memset(cfg, 0, sizeof *cfg);
	memset(&c, 0, sizeof c);
	c.cfg = cfg;
	c.err = err;
	c.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';

	/* 1. defaults */
	env = getenv("OLIVARES_DATA");
	if (copy_str(cfg->data_dir, sizeof cfg->data_dir, env && *env ? env : "./var"))
		return seterr(err, errlen, "OLIVARES_DATA is too long");
	cfg->socket_mode = 0600;
	cfg->workers = default_workers();
	cfg->backlog = 1024;
	cfg->run_timeout_ms = 10000;
	strcpy(cfg->backends, "inproc-mock");
	strcpy(cfg->default_backend, "inproc-mock");
	strcpy(cfg->scorer, "none");
	cfg->scorer_timeout_ms = HTTP_SCORER_TIMEOUT_DEFAULT_MS;
	cfg->session_minutes = HTTP_SESSION_MINUTES_DEFAULT;
	strcpy(cfg->binds, "/usr");
	strcpy(cfg->gvisor_platform, http_config_gvisor_platforms[0]);
	for (k = limit_keys; k->name; k++)
		*(long *)((char *)&cfg->limits + k->offset) = k->def;

	/* 2. the INI file */
	env = getenv("OLIVARES_CONF");
	if (env && *env) {
		conf = env;
	} else {
		if ((size_t)snprintf(probe, sizeof probe, "%s/olivares.conf", cfg->data_dir) <
		        sizeof probe &&
		    stat(probe, &sb) == 0)
			conf = probe;
	}
	if (conf) {
		if (copy_str(c.file, sizeof c.file, conf) || copy_str(c.dir, sizeof c.dir, conf) ||
		    make_absolute(c.dir, sizeof c.dir))
			return seterr(err, errlen, "configuration path is too long");
		*strrchr(c.dir, '/') = '\0';
		if (!c.dir[0])
			strcpy(c.dir, "/");
		r = prescan(conf, &unknown_line, unknown, sizeof unknown);
		if (r == -1)
			return seterr(err, errlen, "%s: cannot open: %s", conf, strerror(errno));
		if (r > 0)
			return seterr(err, errlen,
			              "%s:%d: line longer than %d bytes (a long connection string "
			              "goes in OLIVARES_DSN; shorten other values)",
			              conf, r, CONFIG_MAX_LINE);
		if (unknown_line)
			return seterr(err, errlen,
			              "%s:%d: unknown section [%s] (known: " KNOWN_SECTIONS ")",
			              conf, unknown_line, unknown);
		r = ini_parse(conf, on_key, &c);
		if (r == -1)
			return seterr(err, errlen, "%s: cannot open: %s", conf, strerror(errno));
		if (r == -2)
			return seterr(err, errlen, "%s: out of memory", conf);
		if (r != 0) {
			if (!c.failed)
				seterr(err, errlen, "%s:%d: syntax error", conf, r);
			else if (err && errlen) {
				char msg[512];

				snprintf(msg, sizeof msg, "%s", err);
				/* put the line number after the file name */
				seterr(err, errlen, "%s (line %d)", msg, r);
			}
			return -1;
		}
	}

	strcpy(cfg->file, c.file);

	/* 3. environment: OLIVARES_DATA wins over the file's data_dir */
	env = getenv("OLIVARES_DATA");
	if (env && *env && copy_str(cfg->data_dir, sizeof cfg->data_dir, env))
		return seterr(err, errlen, "OLIVARES_DATA is too long");
	if (make_absolute(cfg->data_dir, sizeof cfg->data_dir))
		return seterr(err, errlen, "data_dir: cannot make \"%s\" absolute", cfg->data_dir);
	env = getenv("OLIVARES_DSN");
	if (env && *env) {
		if (copy_str(cfg->dsn, sizeof cfg->dsn, env))
			return seterr(err, errlen, "OLIVARES_DSN is too long");
		c.have_dsn = 1;
	}

	/* derived defaults, from the final data_dir */
	if (!c.have_dsn && (size_t)snprintf(cfg->dsn, sizeof cfg->dsn,
	                                    "Driver=SQLite3;Database=%s/olivares.db;Timeout=2000;"
	                                    "JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1",
	                                    cfg->data_dir) >= sizeof cfg->dsn)
		return seterr(err, errlen, "data_dir is too long for the default dsn");
	if (!c.have_socket &&
	    (size_t)snprintf(cfg->socket_path, sizeof cfg->socket_path, "%s/olivares.sock",
	                     cfg->data_dir) >= sizeof cfg->socket_path)
		return seterr(err, errlen, "data_dir is too long for the default socket path");
	if (!c.have_runner)
		default_runner(cfg->runner_path, sizeof cfg->runner_path, argv0);
	if (!c.have_agents_dir &&
	    (size_t)snprintf(cfg->agents_dir, sizeof cfg->agents_dir, "%s/agents", cfg->data_dir) >=
	        sizeof cfg->agents_dir)
		return seterr(err, errlen, "data_dir is too long for the default agents_dir");
	if (make_absolute(cfg->agents_dir, sizeof cfg->agents_dir))
		return seterr(err, errlen, "agents_dir: cannot make \"%s\" absolute",
		              cfg->agents_dir);
	/* the errors between keys name the file they come from */
	if (c.file[0])
		snprintf(in_file, sizeof in_file, "%s: ", c.file);
	if (!http_config_list_has(cfg->backends, cfg->default_backend))
		return seterr(
		    err, errlen,
		    "%s[runner] default_backend \"%s\" is not in [runner] backends \"%s\"", in_file,
		    cfg->default_backend, cfg->backends);
	/* run slots: one worker left for the other requests, one slot left
	 * for the other tenants, unless set */
	if (!cfg->max_runs)
		cfg->max_runs = cfg->workers > 1 ? cfg->workers - 1 : 1;
	if (cfg->max_runs > cfg->workers)
		return seterr(err, errlen,
		              "%s[runner] max_runs = %d is more than the %d workers (1..workers)",
		              in_file, cfg->max_runs, cfg->workers);
	if (!cfg->max_runs_per_tenant)
		cfg->max_runs_per_tenant = cfg->max_runs > 1 ? cfg->max_runs - 1 : 1;
	if (cfg->max_runs_per_tenant > cfg->max_runs)
		return seterr(err, errlen,
		              "%s[runner] max_runs_per_tenant = %d is more than max_runs = %d "
		              "(1..max_runs)",
		              in_file, cfg->max_runs_per_tenant, cfg->max_runs);
	/* complete each tenant's policy from the [runner] pair (the sections
	 * may come before [runner] in the file, so only now) */
	for (i = 0; i < cfg->ntenants; i++) {
		const char *hint;

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
		if (!http_config_list_has(t->backends, t->default_backend))
			return seterr(err, errlen,
			              "%s[tenant %s] default_backend \"%s\" is not in its backends "
			              "\"%s\" (%s)",
			              in_file, t->name, t->default_backend, t->backends, hint);
	}
	return 0;
}
