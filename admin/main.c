/*
 * olivares-admin: operator tool on the server host: migrate the schema,
 * create and list tenants, create, list and revoke API tokens (a token is
 * printed once and stored hashed), switch a tenant's module, show what
 * each tenant stores against its quota, purge the runs past their
 * retention.
 * Reads the same configuration and environment as olivares-fcgi
 * (http_config_load), so OLIVARES_DATA=... olivares-admin ... acts on the
 * stack started with that OLIVARES_DATA.
 *
 * Exit status: 0 success, 1 failure, 2 usage error.
 * A token is printed once, on stdout, alone on its line; everything else
 * (ids, hints) goes to stderr, so `tok=$(olivares-admin token create ...)`
 * captures only the token. Only its SHA-256 hex digest is stored.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fcgi/config.h"
#include "fcgi/retention.h"
#include "model/text.h"
#include "sql/store.h"

#define EXIT_USAGE 2
#define ADMIN_ACTOR "olivares-admin"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *help;
};

static const char *prog = "olivares-admin";

static int cmd_migrate(int argc, char **argv);
static int cmd_tenant(int argc, char **argv);
static int cmd_token(int argc, char **argv);
static int cmd_module(int argc, char **argv);
static int cmd_executor(int argc, char **argv);
static int cmd_purge(int argc, char **argv);

static const struct command commands[] = {
    {"migrate", cmd_migrate, "migrate",
     "Create the data directory (and the SQLite file, mode 0600) if needed and apply\n"
     "every schema migration not yet applied. Safe to run again."},
    {"tenant", cmd_tenant, "tenant create NAME | tenant list | tenant usage [--json]",
     "create NAME   create a tenant; prints tenant_id=<id> on stdout\n"
     "list          print id, name and creation time of every tenant\n"
     "usage         one line per tenant, by name, tab-separated after a header: name,\n"
     "              the MiB its scenarios, run outputs, run logs, sessions and suites\n"
     "              store, their total, its quota (max_stored_mb, its [tenant NAME]\n"
     "              section's or [server]'s, or none), its runs, and OVER when the\n"
     "              total passes the quota (its creates get 507 quota_exceeded)\n"
     "  --json      the same as {\"tenants\":[...]} with the figures in bytes"},
    {"token", cmd_token,
     "token create --tenant NAME --role viewer|editor|admin [--label L]\n"
     "              [--scopes read,run,compare,write,approve,admin]\n"
     "       olivares-admin token list --tenant NAME\n"
     "       olivares-admin token revoke --tenant NAME TOKEN_ID",
     "create  Create an API token for a tenant. The token (olv_ + 64 hex) is printed\n"
     "        ONCE on stdout, alone on its line; only its SHA-256 digest is stored.\n"
     "        The token id and role go to stderr. --scopes narrows the token to the\n"
     "        routes of those scopes (its role still applies; admin holds them all);\n"
     "        without it the role alone decides.\n"
     "list    One line per token of the tenant, oldest first: id, role, state\n"
     "        (active|revoked), creation time, label and scopes (comma-separated,\n"
     "        '-' for none), tab-separated (control characters of a label shown\n"
     "        as '?'). No secret can be shown: only\n"
     "        digests are stored.\n"
     "revoke  Revoke the token TOKEN_ID (from create or list) at once: the API and\n"
     "        the admin view refuse it, and its admin view sessions end. Audited as\n"
     "        token.revoke."},
    {"module", cmd_module, "module enable|disable --tenant NAME sandbox",
     "Switch a module on or off for a tenant (data is kept when off)."},
    {"executor", cmd_executor, "executor list",
     "list    One line per registered executor, newest heartbeat first: id, state\n"
     "        (live|stopped|lost: no heartbeat within [executor] lease_seconds), the\n"
     "        backends it offers, runs running, slots, host and last heartbeat,\n"
     "        tab-separated."},
    {"purge", cmd_purge, "purge [--dry-run] [--tenant NAME] [--include-referenced]",
     "Delete the runs past their tenant's retention ([server] retention_days, a\n"
     "[tenant NAME] retention_days) with their outputs and logs, as the server's\n"
     "automatic purge does: runs that ended (completed, failed, degraded, cancelled)\n"
     "more than that many days ago; never a queued or running run, and never a run\n"
     "a comparison (or its approval) rests on unless --include-referenced (or\n"
     "[server] retention_include_referenced = true): then its outputs and log go,\n"
     "and its record too but for the first run of each side, which the comparison\n"
     "holds; the runs of a comparison not settled yet stay whole. Comparisons,\n"
     "approvals, scenarios, suites, sessions, the audit log and the evidence chain\n"
     "are never purged. Audited per tenant as retention.purge with the counts.\n"
     "Prints one line per tenant, tab-separated: name, retention_days=D (0: kept\n"
     "forever, nothing done), runs=N, outputs=N, logs=N, kept=N (expired runs whose\n"
     "record stays).\n"
     "--dry-run             count what would go; delete and audit nothing\n"
     "--tenant NAME         only this tenant\n"
     "--include-referenced  also the runs a comparison rests on (see above)\n"
     "Exit status 1 when a tenant's purge failed (the others are still done)."},
};

static void usage_all(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s COMMAND [ARGS]\n\ncommands:\n", prog);
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %s %s\n", prog, commands[i].usage);
	fprintf(f,
	        "\n%s COMMAND --help gives details. Configuration: $OLIVARES_CONF, or\n"
	        "$OLIVARES_DATA/olivares.conf; environment OLIVARES_DATA (default ./var) and\n"
	        "OLIVARES_DSN. Exit status: 0 ok, 1 failure, 2 usage error.\n",
	        prog);
}

static int usage_cmd(const struct command *c, FILE *f, int rc)
{
	fprintf(f, "usage: %s %s\n\n%s\n", prog, c->usage, c->help);
	return rc;
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static const char *argv0_path;

static int load_config(struct http_config *cfg)
{
	struct http_config_error err;

	if (http_config_load(cfg, argv0_path, &err)) {
		fprintf(stderr, "%s: configuration: %s\n", prog, err.message);
		return -1;
	}
	return 0;
}

/* Open the store; with check, refuse an unmigrated schema. */
static int open_store(const struct http_config *cfg, int check, struct store **st)
{
	char file[512];
	struct stat sb;

	if (check && store_sqlite_file(cfg->dsn, file, sizeof file) && stat(file, &sb) != 0) {
		fprintf(stderr,
		        "%s: database %s does not exist: is the data dir right (OLIVARES_DATA, "
		        "or the DSN: OLIVARES_DSN, [server] dsn)? For a new one, run %s migrate "
		        "first\n",
		        prog, file, prog);
		return -1;
	}
	if (store_open(cfg->dsn, st)) {
		fprintf(stderr, "%s: cannot open the store: %s\n", prog, store_last_error(NULL));
		return -1;
	}
	if (check && store_check_schema(*st)) {
		fprintf(stderr, "%s: %s\n", prog, store_last_error(*st));
		store_close(*st);
		*st = NULL;
		return -1;
	}
	return 0;
}

static void report(struct store *st, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, store_last_error(st));
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int mkdir_p(const char *path)
{
	char tmp[512];
	char *p;

	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
		return -1;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

static int cmd_migrate(int argc, char **argv)
{
	struct http_config cfg;
	struct store *st = NULL;
	char file[512];
	int applied = 0;
	int fd;
	int rc = 1;

	if (argc != 1)
		return usage_cmd(find_command("migrate"), stderr, EXIT_USAGE);
	(void)argv;
	if (load_config(&cfg))
		return 1;
	if (mkdir_p(cfg.data_dir)) {
		fprintf(stderr, "%s: cannot create data dir %s: %s\n", prog, cfg.data_dir,
		        strerror(errno));
		return 1;
	}
	if (store_sqlite_file(cfg.dsn, file, sizeof file)) {
		char dir[512];
		char *slash;

		/* the file may live outside the data dir (OLIVARES_DSN) */
		snprintf(dir, sizeof dir, "%s", file);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			if (mkdir_p(dir)) {
				fprintf(stderr, "%s: cannot create %s: %s\n", prog, dir,
				        strerror(errno));
				return 1;
			}
		}
		/* create the database file ourselves so it is 0600 from the start */
		fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, file, strerror(errno));
			return 1;
		}
		close(fd);
	}
	if (open_store(&cfg, 0, &st))
		return 1;
	if (store_migrate(st, &applied)) {
		report(st, "migrate");
		goto out;
	}
	fprintf(stderr, "%s: %d migration(s) applied (%s)\n", prog, applied, store_dialect(st));
	rc = 0;
out:
	store_close(st);
	return rc;
}

/* ---- tenant usage --------------------------------------------------------------- */

/* n bytes as MiB with two decimals ("0.02"). */
static void print_mib(long long n, const char *after)
{
	printf("%.2f%s", (double)n / 1048576.0, after);
}

/* tenant usage [--json]: every tenant's stored bytes (store_tenant_usage)
 * against the quota this host's configuration gives it. */
static int tenant_usage(const struct http_config *cfg, struct store *st, int as_json)
{
	json_t *list = NULL, *t, *rows = NULL, *row;
	struct store_usage u;
	const char *name, *id;
	long long quota;
	size_t i;
	int rc = 1;

	if (store_tenant_list(st, &list)) {
		report(st, "tenant list");
		return 1;
	}
	rows = json_array();
	if (!as_json)
		printf("name\tscenarios_mib\toutputs_mib\tlogs_mib\tsessions_mib\tsuites_mib\t"
		       "total_mib\tquota\truns\tstate\n");
	json_array_foreach(json_object_get(list, "tenants"), i, t)
	{
		name = json_string_value(json_object_get(t, "name"));
		id = json_string_value(json_object_get(t, "id"));
		if (store_tenant_usage(st, id, &u)) {
			report(st, "tenant usage");
			goto out;
		}
		quota = http_config_quota_bytes(cfg, name);
		if (as_json) {
			row = json_pack(
			    "{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:I,s:b}", "name", name, "id", id,
			    "scenarios_bytes", (json_int_t)u.scenarios, "outputs_bytes",
			    (json_int_t)u.outputs, "logs_bytes", (json_int_t)u.logs,
			    "sessions_bytes", (json_int_t)u.sessions, "suites_bytes",
			    (json_int_t)u.suites, "total_bytes", (json_int_t)u.total, "quota_bytes",
			    quota > 0 ? json_integer(quota) : json_null(), "runs",
			    (json_int_t)u.runs, "over_quota", quota > 0 && u.total > quota);
			json_array_append_new(rows, row);
			continue;
		}
		printf("%s\t", name);
		print_mib(u.scenarios, "\t");
		print_mib(u.outputs, "\t");
		print_mib(u.logs, "\t");
		print_mib(u.sessions, "\t");
		print_mib(u.suites, "\t");
		print_mib(u.total, "\t");
		if (quota > 0)
			printf("%lld MiB\t", quota / 1048576LL);
		else
			printf("none\t");
		printf("%lld\t%s\n", u.runs, quota > 0 && u.total > quota ? "OVER" : "ok");
	}
	if (as_json) {
		row = json_pack("{s:O}", "tenants", rows);
		if (!row || json_dumpf(row, stdout, JSON_INDENT(2)) != 0) {
			json_decref(row);
			fprintf(stderr, "%s: cannot print the usage\n", prog);
			goto out;
		}
		putchar('\n');
		json_decref(row);
	}
	rc = 0;
out:
	json_decref(rows);
	json_decref(list);
	return rc;
}

static int cmd_tenant(int argc, char **argv)
{
	const struct command *c = find_command("tenant");
	struct http_config cfg;
	struct store *st = NULL;
	char id[33];
	json_t *list = NULL;
	json_t *t;
	size_t i;
	int rc = 1;

	if (argc == 3 && strcmp(argv[1], "create") == 0) {
		if (!argv[2][0] || strlen(argv[2]) > 128 ||
		    !model_text_valid_utf8(argv[2], strlen(argv[2]))) {
			fprintf(stderr, "%s: tenant name must be 1..128 bytes of UTF-8\n", prog);
			return EXIT_USAGE;
		}
		if (load_config(&cfg) || open_store(&cfg, 1, &st))
			return 1;
		if (store_tenant_create(st, argv[2], id)) {
			report(st, "tenant create");
			goto out;
		}
		printf("tenant_id=%s\n", id);
		rc = 0;
	} else if (argc == 2 && strcmp(argv[1], "list") == 0) {
		if (load_config(&cfg) || open_store(&cfg, 1, &st))
			return 1;
		if (store_tenant_list(st, &list)) {
			report(st, "tenant list");
			goto out;
		}
		json_array_foreach(json_object_get(list, "tenants"), i, t)
		{
			printf("%s\t%s\t%s\n", json_string_value(json_object_get(t, "id")),
			       json_string_value(json_object_get(t, "name")),
			       json_string_value(json_object_get(t, "created_at")));
		}
		rc = 0;
	} else if ((argc == 2 || (argc == 3 && strcmp(argv[2], "--json") == 0)) &&
	           strcmp(argv[1], "usage") == 0) {
		if (load_config(&cfg) || open_store(&cfg, 1, &st))
			return 1;
		rc = tenant_usage(&cfg, st, argc == 3);
	} else {
		return usage_cmd(c, stderr, EXIT_USAGE);
	}
out:
	json_decref(list);
	store_close(st);
	return rc;
}

static int cmd_executor(int argc, char **argv)
{
	const struct command *c = find_command("executor");
	struct http_config cfg;
	struct store *st = NULL;
	json_t *list = NULL, *e, *b;
	const char *state;
	size_t i, j;
	int rc = 1;

	if (argc != 2 || strcmp(argv[1], "list") != 0)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (load_config(&cfg) || open_store(&cfg, 1, &st))
		return 1;
	if (store_executor_list(st, cfg.executor_lease_seconds, &list)) {
		report(st, "executor list");
		goto out;
	}
	json_array_foreach(json_object_get(list, "executors"), i, e)
	{
		if (json_is_true(json_object_get(e, "live")))
			state = "live";
		else if (json_is_string(json_object_get(e, "stopped_at")))
			state = "stopped";
		else
			state = "lost";
		printf("%s\t%s\t", json_string_value(json_object_get(e, "id")), state);
		json_array_foreach(json_object_get(e, "backends"), j, b)
		    printf("%s%s", j ? "," : "", json_string_value(b));
		printf("\t%lld\t%lld\t%s\t%s\n",
		       (long long)json_integer_value(json_object_get(e, "running")),
		       (long long)json_integer_value(json_object_get(e, "slots")),
		       json_string_value(json_object_get(e, "host")),
		       json_string_value(json_object_get(e, "heartbeat_at")));
	}
	rc = 0;
out:
	json_decref(list);
	store_close(st);
	return rc;
}

static int parse_role(const char *s, enum store_role *role)
{
	if (strcmp(s, "viewer") == 0)
		*role = STORE_ROLE_VIEWER;
	else if (strcmp(s, "editor") == 0)
		*role = STORE_ROLE_EDITOR;
	else if (strcmp(s, "admin") == 0)
		*role = STORE_ROLE_ADMIN;
	else
		return -1;
	return 0;
}

/* --tenant NAME, --role R, --label L after the subcommand. */
struct opts {
	const char *tenant;
	const char *role;
	const char *label;
	const char *scopes;
	const char *positional;
};

static int parse_opts(int argc, char **argv, struct opts *o, int want_role)
{
	static const struct option longopts[] = {{"tenant", required_argument, NULL, 't'},
	                                         {"role", required_argument, NULL, 'r'},
	                                         {"label", required_argument, NULL, 'l'},
	                                         {"scopes", required_argument, NULL, 's'},
	                                         {NULL, 0, NULL, 0}};
	int ch;

	memset(o, 0, sizeof o[0]);
	optind = 1;
	opterr = 0;
	/* argv[0] is the subcommand ("create", "enable", ...) */
	for (;;) {
		ch = getopt_long(argc, argv, "+", longopts, NULL);
		if (ch == -1)
			break;
		switch (ch) {
		case 't':
			o->tenant = optarg;
			break;
		case 'r':
			if (!want_role)
				goto bad;
			o->role = optarg;
			break;
		case 'l':
			if (!want_role)
				goto bad;
			o->label = optarg;
			break;
		case 's':
			if (!want_role)
				goto bad;
			o->scopes = optarg;
			break;
		default:
			goto bad;
		}
	}
	if (optind < argc)
		o->positional = argv[optind++];
	if (optind != argc)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "%s: unexpected or incomplete option\n", prog);
	return -1;
}

static int sha256_hex(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;

	if (EVP_Digest(s, strlen(s), md, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return -1;
	model_hex_encode(md, 32, out);
	return 0;
}

/*
 * Load the configuration, open the store (migrated) into *st and find the
 * tenant named name into tenant_id. Returns 0, or 1 after saying why on
 * stderr (*st is then NULL or open: store_close takes both).
 */
static int open_tenant(const char *name, struct store **st, char tenant_id[33])
{
	struct http_config cfg;
	enum store_rc src;

	*st = NULL;
	if (load_config(&cfg) || open_store(&cfg, 1, st))
		return 1;
	src = store_tenant_find(*st, name, tenant_id);
	if (src == STORE_NOT_FOUND) {
		fprintf(stderr, "%s: no tenant named \"%s\" (olivares-admin tenant create)\n", prog,
		        name);
		return 1;
	}
	if (src) {
		report(*st, "tenant lookup");
		return 1;
	}
	return 0;
}

/* token list --tenant NAME */
static int token_list(const struct command *c, int argc, char **argv)
{
	struct store *st = NULL;
	struct opts o;
	char tenant_id[33];
	json_t *out = NULL, *t, *sc;
	char label[257];
	char scopes[64]; /* the six names and their commas fit */
	const char *l;
	size_t i, j, k;
	int rc = 1;

	if (parse_opts(argc, argv, &o, 0) || !o.tenant || o.positional)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (open_tenant(o.tenant, &st, tenant_id))
		goto out;
	if (store_token_list(st, tenant_id, &out)) {
		report(st, "token list");
		goto out;
	}
	json_array_foreach(json_object_get(out, "tokens"), i, t)
	{
		l = json_string_value(json_object_get(t, "label"));
		for (k = 0; l && l[k] && k + 1 < sizeof label; k++)
			label[k] = (unsigned char)l[k] < 0x20 || l[k] == 0x7f ? '?' : l[k];
		label[k] = '\0';
		scopes[0] = '\0';
		json_array_foreach(json_object_get(t, "scopes"), j, sc)
		{
			if (j)
				strcat(scopes, ",");
			strcat(scopes, json_string_value(sc));
		}
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", json_string_value(json_object_get(t, "id")),
		       json_string_value(json_object_get(t, "role")),
		       json_is_true(json_object_get(t, "revoked")) ? "revoked" : "active",
		       json_string_value(json_object_get(t, "created_at")), label,
		       scopes[0] ? scopes : "-");
	}
	rc = 0;
out:
	json_decref(out);
	store_close(st);
	return rc;
}

/* token revoke --tenant NAME TOKEN_ID */
static int token_revoke(const struct command *c, int argc, char **argv)
{
	struct store *st = NULL;
	struct opts o;
	char tenant_id[33];
	enum store_rc src;
	int rc = 1;

	if (parse_opts(argc, argv, &o, 0) || !o.tenant || !o.positional)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (!model_id_valid(o.positional)) {
		fprintf(stderr, "%s: TOKEN_ID must be a token id (32 lowercase hex)\n", prog);
		return EXIT_USAGE;
	}
	if (open_tenant(o.tenant, &st, tenant_id))
		goto out;
	src = store_token_revoke(st, tenant_id, o.positional, ADMIN_ACTOR);
	if (src == STORE_NOT_FOUND) {
		fprintf(stderr, "%s: tenant %s has no unrevoked token %s\n", prog, o.tenant,
		        o.positional);
		goto out;
	}
	if (src) {
		report(st, "token revoke");
		goto out;
	}
	fprintf(stderr, "%s: token %s of tenant %s revoked\n", prog, o.positional, o.tenant);
	rc = 0;
out:
	store_close(st);
	return rc;
}

static int cmd_token(int argc, char **argv)
{
	const struct command *c = find_command("token");
	struct store *st = NULL;
	struct opts o;
	enum store_role role;
	unsigned char raw[32];
	char token[4 + 64 + 1];
	char sha[65];
	char tenant_id[33];
	char token_id[33];
	char shown[64];
	const char *bad = NULL;
	unsigned scopes = 0;
	int rc = 1;

	if (argc >= 2 && strcmp(argv[1], "revoke") == 0)
		return token_revoke(c, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return token_list(c, argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "create") != 0)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (parse_opts(argc - 1, argv + 1, &o, 1) || o.positional)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (!o.tenant || !o.role) {
		fprintf(stderr, "%s: token create needs --tenant and --role\n", prog);
		return usage_cmd(c, stderr, EXIT_USAGE);
	}
	if (parse_role(o.role, &role)) {
		fprintf(stderr, "%s: --role must be viewer, editor or admin\n", prog);
		return EXIT_USAGE;
	}
	if (o.label &&
	    (strlen(o.label) > 256 || !model_text_valid_utf8(o.label, strlen(o.label)))) {
		fprintf(stderr, "%s: --label must be at most 256 bytes of UTF-8\n", prog);
		return EXIT_USAGE;
	}
	if (o.scopes && (store_scopes_parse(o.scopes, &scopes, &bad) || !scopes)) {
		fprintf(stderr,
		        "%s: --scopes must be a comma-separated list of read, run, compare, "
		        "write, approve, admin\n",
		        prog);
		return EXIT_USAGE;
	}
	if (open_tenant(o.tenant, &st, tenant_id))
		goto out;
	if (RAND_bytes(raw, sizeof raw) != 1) {
		fprintf(stderr, "%s: RAND_bytes failed\n", prog);
		goto out;
	}
	memcpy(token, MODEL_TOKEN_PREFIX, 4);
	model_hex_encode(raw, sizeof raw, token + 4);
	OPENSSL_cleanse(raw, sizeof raw);
	if (sha256_hex(token, sha)) {
		fprintf(stderr, "%s: SHA-256 failed\n", prog);
		goto out;
	}
	/* the token and its audit event in one transaction */
	if (store_token_create_scoped(st, tenant_id, role, scopes, sha, o.label ? o.label : "",
	                              ADMIN_ACTOR, token_id)) {
		report(st, "token create");
		goto out;
	}
	store_scopes_format(scopes, ",", shown, sizeof shown);
	fprintf(stderr, "%s: token_id=%s tenant=%s role=%s%s%s (the token below is shown once)\n",
	        prog, token_id, o.tenant, o.role, scopes ? " scopes=" : "", shown);
	printf("%s\n", token);
	fflush(stdout);
	rc = 0;
out:
	OPENSSL_cleanse(token, sizeof token);
	store_close(st);
	return rc;
}

static int cmd_module(int argc, char **argv)
{
	const struct command *c = find_command("module");
	struct store *st = NULL;
	struct opts o;
	char tenant_id[33];
	json_t *detail = NULL;
	int enable;
	int rc = 1;

	if (argc < 2)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (strcmp(argv[1], "enable") == 0)
		enable = 1;
	else if (strcmp(argv[1], "disable") == 0)
		enable = 0;
	else
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (parse_opts(argc - 1, argv + 1, &o, 0) || !o.tenant || !o.positional)
		return usage_cmd(c, stderr, EXIT_USAGE);
	if (strcmp(o.positional, "sandbox") != 0) {
		fprintf(stderr, "%s: unknown module \"%s\" (known: sandbox)\n", prog, o.positional);
		return EXIT_USAGE;
	}
	if (open_tenant(o.tenant, &st, tenant_id))
		goto out;
	/* the switch and its audit event in one transaction */
	detail = json_pack("{s:s,s:b}", "name", o.positional, "enabled", enable);
	if (store_module_set(st, tenant_id, o.positional, enable, ADMIN_ACTOR, detail)) {
		report(st, "module");
		goto out;
	}
	fprintf(stderr, "%s: module %s %s for tenant %s\n", prog, o.positional,
	        enable ? "enabled" : "disabled", o.tenant);
	rc = 0;
out:
	json_decref(detail);
	store_close(st);
	return rc;
}

/* ---- purge (docs/retention.md) ------------------------------ */

static void purge_print(void *ctx, struct store *st, const struct http_retention_tenant *t)
{
	char name[129];
	size_t k;

	(void)ctx;
	/* as token list shows a label: no control character reaches the terminal */
	for (k = 0; t->name[k] && k + 1 < sizeof name; k++)
		name[k] = (unsigned char)t->name[k] < 0x20 || t->name[k] == 0x7f ? '?' : t->name[k];
	name[k] = '\0';
	if (t->rc)
		fprintf(stderr, "%s: purge of tenant %s: %s\n", prog, name, store_last_error(st));
	/* a failed tenant's line says so: its counts are what committed before
	 * the failure, and must not read as a tenant with nothing to purge */
	printf("%s\tretention_days=%d\truns=%lld\toutputs=%lld\tlogs=%lld\tkept=%lld%s\n", name,
	       t->days, t->r.runs, t->r.outputs, t->r.logs, t->r.kept, t->rc ? "\tfailed" : "");
}

static int cmd_purge(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"dry-run", no_argument, NULL, 'n'},
	    {"tenant", required_argument, NULL, 't'},
	    {"include-referenced", no_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	const struct command *c = find_command("purge");
	struct http_retention_opts o = {.actor = ADMIN_ACTOR};
	struct store_retention_result total;
	struct http_config cfg;
	struct store *st = NULL;
	char tenant_id[33];
	int opt, referenced = 0, tenants = 0, rc = 1;

	optind = 1;
	opterr = 0; /* the usage below says what is wrong, as for the other commands */
	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			o.dry_run = 1;
			break;
		case 't':
			/* one tenant: a second --tenant would silently replace the first */
			if (o.tenant_name)
				return usage_cmd(c, stderr, EXIT_USAGE);
			o.tenant_name = optarg;
			break;
		case 'r':
			referenced = 1;
			break;
		default:
			fprintf(stderr, "%s: unexpected or incomplete option\n", prog);
			return usage_cmd(c, stderr, EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: purge takes no argument: %s\n", prog, argv[optind]);
		return usage_cmd(c, stderr, EXIT_USAGE);
	}
	if (o.tenant_name) {
		if (open_tenant(o.tenant_name, &st, tenant_id))
			goto out;
		store_close(st);
		st = NULL;
	}
	if (load_config(&cfg) || open_store(&cfg, 1, &st))
		goto out;
	o.include_referenced = referenced || strcmp(cfg.retention_include_referenced, "true") == 0;
	rc = http_retention_run(&cfg, st, &o, purge_print, NULL, &total, &tenants) ? 1 : 0;
	if (rc && !tenants) {
		report(st, "purge");
		goto out;
	}
	fprintf(stderr,
	        "%s: %s%s%d tenant(s) with a retention: %lld run(s), %lld output(s), %lld log(s) "
	        "%s, %lld expired run(s) kept%s\n",
	        prog, o.dry_run ? "dry run: " : "", rc ? "incomplete: " : "", tenants, total.runs,
	        total.outputs, total.logs, o.dry_run ? "would be deleted" : "deleted", total.kept,
	        o.include_referenced ? "" : " (a comparison rests on them)");
out:
	store_close(st);
	return rc;
}

int main(int argc, char **argv)
{
	const struct command *c;

	argv0_path = argv[0];
	/* files we create (the SQLite database, its -wal and -shm) are private */
	umask(077);
	if (argc < 2) {
		usage_all(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage_all(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "%s: unknown command \"%s\"\n\n", prog, argv[1]);
		usage_all(stderr);
		return EXIT_USAGE;
	}
	if (wants_help(argc - 1, argv + 1))
		return usage_cmd(c, stdout, 0);
	return c->fn(argc - 1, argv + 1);
}
