/*
 * The CLI's configuration file: `url` and `token` for users who would rather
 * not export them in every shell (docs/cli.md#the-configuration-file). An
 * INI file read with inih; it holds a token, so a file that group or others
 * may read or write is refused, as ssh refuses a private key.
 */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* State of one read: the line inih is on, for the messages. */
struct config_read {
	struct cli_config *cfg;
	FILE *f;
	int line;
	int failed;
	int url_line, token_line;
};

/* Print "olivares: FILE: line N: <message>" once; returns 0 (inih's "stop"
 * for a handler). */
static int refuse(struct config_read *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int refuse(struct config_read *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return 0;
	r->failed = 1;
	fprintf(stderr, "olivares: %s: line %d: ", r->cfg->path, r->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 0;
}

/* inih's reader: the next line into str (num bytes at most), counting lines
 * so that the handler can name the one it refuses. A line that does not fit
 * is refused rather than read as two. */
static char *reader(char *str, int num, void *stream)
{
	struct config_read *r = stream;
	int c;

	if (r->failed || !fgets(str, num, r->f))
		return NULL;
	r->line++;
	if (!strchr(str, '\n')) {
		c = getc(r->f);
		if (c != EOF) {
			refuse(r, "longer than %d bytes", num - 2);
			return NULL;
		}
	}
	return str;
}

/* inih's handler: one key = value of line r->line. The messages name the
 * key, never the value (it may be the token). */
static int on_key(void *user, const char *section, const char *key, const char *value)
{
	struct config_read *r = user;
	char **slot;
	int *seen;

	if (r->failed)
		return 0;
	if (section[0] != '\0' && strcmp(section, "olivares") != 0)
		return refuse(r,
		              "unknown section [%s] (the keys go before any section or in "
		              "[olivares])",
		              section);
	if (strcmp(key, "url") == 0) {
		slot = &r->cfg->url;
		seen = &r->url_line;
	} else if (strcmp(key, "token") == 0) {
		slot = &r->cfg->token;
		seen = &r->token_line;
	} else {
		return refuse(r, "unknown key '%s' (the keys are url and token)", key);
	}
	if (*seen)
		return refuse(r, "%s given twice (first on line %d)", key, *seen);
	if (value[0] == '\0')
		return refuse(r, "%s has an empty value", key);
	*seen = r->line;
	*slot = strdup(value);
	if (!*slot) {
		fputs("olivares: out of memory\n", stderr);
		abort();
	}
	return 1;
}

/* The file to read into cfg->path: $OLIVARES_CONFIG (empty: none), else
 * $XDG_CONFIG_HOME/olivares/config (an absolute XDG_CONFIG_HOME only, as
 * the XDG base directory specification says), else
 * $HOME/.config/olivares/config. Returns 1 when it was named explicitly, 0
 * for the default path, -1 for no file. */
static int config_path(struct cli_config *cfg)
{
	const char *env = getenv("OLIVARES_CONFIG");
	int n;

	cfg->path[0] = '\0';
	if (env) {
		if (env[0] == '\0')
			return -1;
		n = snprintf(cfg->path, sizeof(cfg->path), "%s", env);
		return n < 0 || (size_t)n >= sizeof(cfg->path) ? -1 : 1;
	}
	env = getenv("XDG_CONFIG_HOME");
	if (env && env[0] == '/') {
		n = snprintf(cfg->path, sizeof(cfg->path), "%s/olivares/config", env);
	} else {
		env = getenv("HOME");
		if (!env || env[0] == '\0')
			return -1;
		n = snprintf(cfg->path, sizeof(cfg->path), "%s/.config/olivares/config", env);
	}
	if (n < 0 || (size_t)n >= sizeof(cfg->path)) {
		cfg->path[0] = '\0';
		return -1;
	}
	return 0;
}

int cli_config_load(struct cli_config *cfg)
{
	struct config_read r;
	struct stat sb;
	int named, fd, ir;

	memset(cfg, 0, sizeof(*cfg));
	named = config_path(cfg);
	if (named < 0) {
		if (getenv("OLIVARES_CONFIG") && getenv("OLIVARES_CONFIG")[0]) {
			fputs("olivares: OLIVARES_CONFIG: path too long\n", stderr);
			return CLI_EXIT_USAGE;
		}
		return CLI_EXIT_OK;
	}
	/* O_NONBLOCK: a FIFO in its place must not hang the command; it is
	 * refused below as not a regular file */
	fd = open(cfg->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT && !named)
			return CLI_EXIT_OK;
		fprintf(stderr, "olivares: %s: %s%s\n", cfg->path, strerror(errno),
		        named ? " (named by OLIVARES_CONFIG)" : "");
		return CLI_EXIT_USAGE;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fprintf(stderr, "olivares: %s: not a regular file\n", cfg->path);
		close(fd);
		return CLI_EXIT_USAGE;
	}
	if (sb.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
		fprintf(stderr,
		        "olivares: %s: mode %04o lets group or others read or write it, and it "
		        "may hold the API token: refused (chmod 600 %s)\n",
		        cfg->path, (unsigned)(sb.st_mode & 07777), cfg->path);
		close(fd);
		return CLI_EXIT_USAGE;
	}
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.f = fdopen(fd, "r");
	if (!r.f) {
		fprintf(stderr, "olivares: %s: %s\n", cfg->path, strerror(errno));
		close(fd);
		return CLI_EXIT_USAGE;
	}
	ir = ini_parse_stream(reader, &r, on_key, &r);
	if (!r.failed && ir > 0) {
		r.line = ir;
		refuse(&r, "not a [section], a key = value or a comment");
	}
	if (!r.failed && (ir < 0 || ferror(r.f))) {
		fprintf(stderr, "olivares: %s: cannot be read\n", cfg->path);
		r.failed = 1;
	}
	fclose(r.f);
	if (r.failed) {
		cli_config_release(cfg);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

void cli_config_release(struct cli_config *cfg)
{
	if (cfg->token) {
		explicit_bzero(cfg->token, strlen(cfg->token));
		free(cfg->token);
	}
	free(cfg->url);
	cfg->url = NULL;
	cfg->token = NULL;
}
