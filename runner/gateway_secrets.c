/*
 * The egress gateway's secrets file (runner/gateway_secrets.h): opened and
 * checked once at the gateway's start, read with inih through a reader of
 * ours that sees each raw line first, so that every refusal names its
 * line and what inih would read differently from what is written is
 * refused rather than cut.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "model/alloc.h"
#include "model/http_mock.h"
#include "runner/gateway_internal.h"
#include "runner/gateway_secrets.h"

/* inih copies a section's name into 50 bytes (INI_MAX_SECTION as built
 * by Debian) and cuts a longer one. */
#define SECRETS_MAX_SECTION 49

struct secret_host {
	char host[SECRETS_MAX_SECTION + 1];
	int port;        /* 0: the scheme's default */
	int line;        /* of its section header */
	json_t *headers; /* [[name, value], ...] */
};

struct runner_gateway_secrets {
	struct secret_host hosts[RUNNER_GATEWAY_SECRETS_MAX_HOSTS];
	size_t n;
};

/* What the reader and the handler share while the file is read. */
struct secrets_read {
	const char *path;
	const char *data; /* the whole file, NUL-terminated */
	size_t len, pos;
	int line;             /* the line inih works on */
	json_t *egress_allow; /* the run's */
	struct runner_gateway_secrets *s;
	struct secret_host *cur; /* the section of the lines now read, or NULL */
	struct runner_error *err;
	int failed;
};

/* Refuse the file at the line being read: "egress_secrets PATH:LINE: "
 * and the message, whose arguments name a key, a header or a host, never
 * a value. Returns 0 (inih's "error at this line"). */
static int refuse(struct secrets_read *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int refuse(struct secrets_read *r, const char *fmt, ...)
{
	char text[RUNNER_ERROR_BYTES];
	va_list ap;

	if (r->failed)
		return 0;
	r->failed = 1;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	runner_error_set(r->err, RUNNER_E_SETUP, "egress_secrets %s:%d: %s", r->path, r->line,
	                 text);
	return 0;
}

/* Whether item ("host" or "host:port") is for host; *port then its port,
 * 0 when it gives none. */
static int item_for(const char *item, const char *host, int *port)
{
	const char *colon = item ? strchr(item, ':') : NULL;
	size_t hl;

	if (!item || !host)
		return 0;
	hl = colon ? (size_t)(colon - item) : strlen(item);
	*port = colon ? atoi(colon + 1) : 0;
	return strlen(host) == hl && strncmp(host, item, hl) == 0;
}

int runner_gateway_egress_allows(json_t *egress_allow, const char *scheme, const char *host,
                                 int port)
{
	int def = scheme && strcmp(scheme, "https") == 0 ? 443 : 80;
	size_t i;
	int p;

	for (i = 0; scheme && i < json_array_size(egress_allow); i++)
		if (item_for(json_string_value(json_array_get(egress_allow, i)), host, &p) &&
		    (p ? p == port : port == def))
			return 1;
	return 0;
}

/* Whether a section for host (port 0: the default one) and an item or a
 * section for host (port 0 likewise) cover a host:port in common. */
static int ports_meet(int a, int b)
{
	if (a && b)
		return a == b;
	if (!a && !b)
		return 1;
	a = a ? a : b;
	return a == 80 || a == 443;
}

static int in_egress(json_t *egress_allow, const char *host, int port)
{
	size_t i;
	int p;

	for (i = 0; i < json_array_size(egress_allow); i++)
		if (item_for(json_string_value(json_array_get(egress_allow, i)), host, &p) &&
		    ports_meet(port, p))
			return 1;
	return 0;
}

/* A section header's name, the text between '[' and ']': "host NAME" or
 * "host NAME:PORT", blanks around NAME aside. */
static void section(struct secrets_read *r, char *name)
{
	struct secret_host *h;
	char *p, *end, *colon;
	size_t i;
	long port = 0;

	if (strlen(name) > SECRETS_MAX_SECTION) {
		refuse(r, "a section name over 49 bytes");
		return;
	}
	/* [ host a ] is [host a] */
	while (*name == ' ' || *name == '\t')
		name++;
	if (strncmp(name, "host", 4) != 0 || (name[4] != ' ' && name[4] != '\t')) {
		refuse(r, "unknown section (a section is [host NAME] or [host NAME:PORT])");
		return;
	}
	for (p = name + 4; *p == ' ' || *p == '\t'; p++)
		;
	for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t'); end--)
		;
	*end = '\0';
	colon = strchr(p, ':');
	if (colon) {
		*colon = '\0';
		for (i = 1; colon[i] >= '0' && colon[i] <= '9' && port <= 65535; i++)
			port = port * 10 + (colon[i] - '0');
		if (i == 1 || colon[i] != '\0' || colon[1] == '0' || port < 1 || port > 65535) {
			refuse(r, "the port of [host %s:...] is not a number from 1 to 65535", p);
			return;
		}
	}
	if (!*p || strpbrk(p, " \t")) {
		refuse(r, "a section is [host NAME] or [host NAME:PORT]");
		return;
	}
	*end = '\0';
	if (!in_egress(r->egress_allow, p, (int)port)) {
		if (colon)
			*colon = ':';
		refuse(r, "host %s is in no egress_allow item of the run", p);
		return;
	}
	for (i = 0; i < r->s->n; i++) {
		h = &r->s->hosts[i];
		if (strcmp(h->host, p) == 0 && ports_meet(h->port, (int)port)) {
			if (colon)
				*colon = ':';
			refuse(r, "a second section for %s (a host:port has one section)", p);
			return;
		}
	}
	if (r->s->n == RUNNER_GATEWAY_SECRETS_MAX_HOSTS) {
		refuse(r, "more than 32 [host] sections");
		return;
	}
	h = &r->s->hosts[r->s->n++];
	snprintf(h->host, sizeof(h->host), "%s", p);
	h->port = (int)port;
	h->line = r->line;
	h->headers = json_array();
	r->cur = h;
}

/* The section before the one starting now (or the end of the file) has a
 * header. */
static void section_done(struct secrets_read *r)
{
	int line;

	if (!r->cur || json_array_size(r->cur->headers) > 0)
		return;
	line = r->line;
	r->line = r->cur->line;
	refuse(r, "a [host] section without a header line");
	r->line = line;
}

/* A raw line (len bytes at text, NUL-terminated past them, no newline),
 * before inih reads it. */
static void raw_line(struct secrets_read *r, const char *text, size_t len)
{
	const char *p, *end;
	char name[RUNNER_GATEWAY_SECRETS_MAX_LINE + 1];

	if (memchr(text, '\0', len)) {
		refuse(r, "a NUL byte");
		return;
	}
	if (len > RUNNER_GATEWAY_SECRETS_MAX_LINE) {
		refuse(r, "a line over 198 bytes");
		return;
	}
	/* inih skips a UTF-8 byte order mark at the start of the file */
	if (r->line == 1 && strncmp(text, "\xef\xbb\xbf", 3) == 0)
		text += 3;
	for (p = text; *p == ' ' || *p == '\t' || *p == '\r'; p++)
		;
	if (*p == ';' || *p == '#' || *p == '\0')
		return;
	if (p > text) {
		refuse(r, "a line that starts with a blank (inih takes it as the rest of the "
		          "line before)");
		return;
	}
	for (p = text + 1; *p; p++)
		if (*p == ';' && (p[-1] == ' ' || p[-1] == '\t')) {
			refuse(r,
			       "\" ;\", which starts a comment here (inline comments are refused: "
			       "a value holding one would be cut)");
			return;
		}
	if (text[0] != '[')
		return;
	end = strchr(text, ']');
	for (p = end ? end + 1 : NULL; p && (*p == ' ' || *p == '\t' || *p == '\r'); p++)
		;
	if (!end || *p) {
		refuse(r, "a section header is [host NAME] alone on its line");
		return;
	}
	section_done(r);
	memcpy(name, text + 1, (size_t)(end - text - 1));
	name[end - text - 1] = '\0';
	section(r, name);
}

/* inih's reader: the next line of the file into str (at most num bytes,
 * NUL-terminated), NULL at the end or once something is refused. The
 * file's buffer has a NUL past its end: a last line without a newline is
 * NUL-terminated there. */
static char *reader(char *str, int num, void *stream)
{
	struct secrets_read *r = stream;
	char line[RUNNER_GATEWAY_SECRETS_MAX_LINE + 1];
	const char *start, *nl;
	size_t len;

	if (r->failed || r->pos >= r->len)
		return NULL;
	start = r->data + r->pos;
	nl = memchr(start, '\n', r->len - r->pos);
	len = nl ? (size_t)(nl - start) : r->len - r->pos;
	r->line++;
	r->pos += len + (nl ? 1 : 0);
	if (len <= RUNNER_GATEWAY_SECRETS_MAX_LINE) {
		memcpy(line, start, len);
		line[len] = '\0';
		start = line;
	}
	raw_line(r, start, len);
	if (r->failed || len >= (size_t)num)
		return NULL;
	memcpy(str, start, len);
	str[len] = '\0';
	return str;
}

/* An HTTP token (RFC 9110 tchar). */
static int token(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("!#$%&'*+-.^_`|~", s[i])))
			return 0;
	return 1;
}

/* inih's handler: one key = value of the line r->line. */
static int on_key(void *user, const char *sect, const char *key, const char *value)
{
	struct secrets_read *r = user;
	const char *colon, *v;
	char name[RUNNER_GATEWAY_SECRETS_MAX_LINE + 1];
	size_t i, nl;
	json_t *h;

	(void)sect;
	if (r->failed)
		return 0;
	if (!r->cur)
		return refuse(r, "a key before any [host NAME] section");
	if (strcmp(key, "header") != 0)
		return refuse(r, "unknown key (a [host] section has header = Name: value)");
	colon = strchr(value, ':');
	nl = colon ? (size_t)(colon - value) : 0;
	if (!colon || !token(value, nl))
		return refuse(r, "header is \"Name: value\", Name an HTTP token");
	memcpy(name, value, nl);
	name[nl] = '\0';
	if (model_http_header_is_hop(name) || strcasecmp(name, "host") == 0 ||
	    strcasecmp(name, "expect") == 0)
		return refuse(r, "header %s is one the gateway sets itself", name);
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	if (!*v)
		return refuse(r, "header %s has an empty value", name);
	for (i = 0; v[i]; i++)
		if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
			return refuse(r, "the value of header %s holds a control character", name);
	json_array_foreach(r->cur->headers, i, h)
	{
		if (strcasecmp(json_string_value(json_array_get(h, 0)), name) == 0)
			return refuse(r, "header %s twice in one section", name);
	}
	if (json_array_size(r->cur->headers) == RUNNER_GATEWAY_SECRETS_MAX_HEADERS)
		return refuse(r, "more than 16 headers in a section");
	/* a value that is not UTF-8 cannot be held (jansson): refused too */
	h = json_pack("[ss]", name, v);
	if (!h)
		return refuse(r, "the value of header %s is not UTF-8", name);
	json_array_append_new(r->cur->headers, h);
	return 1;
}

/* The file open on fd, checked: regular, owned by uid or root, no access
 * for group or others. 0, or -1 with *err. */
static int check_file(int fd, const char *path, uid_t uid, struct stat *sb,
                      struct runner_error *err)
{
	if (fstat(fd, sb) != 0)
		return runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: %s", path,
		                        strerror(errno));
	if (!S_ISREG(sb->st_mode))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "egress_secrets %s: not a regular file", path);
	if (sb->st_uid != uid && sb->st_uid != 0)
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "egress_secrets %s: owned by uid %u, not by the gateway's "
		                        "user (uid %u) or root",
		                        path, (unsigned)sb->st_uid, (unsigned)uid);
	if (sb->st_mode & (S_IRWXG | S_IRWXO))
		return runner_error_set(err, RUNNER_E_SETUP,
		                        "egress_secrets %s: mode %04o gives group or others access "
		                        "(chmod 600)",
		                        path, (unsigned)(sb->st_mode & 07777));
	if (sb->st_size > RUNNER_GATEWAY_SECRETS_MAX_FILE)
		return runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: over %d bytes",
		                        path, RUNNER_GATEWAY_SECRETS_MAX_FILE);
	return 0;
}

int runner_gateway_secrets_load(const char *path, json_t *egress_allow, uid_t uid,
                                struct runner_gateway_secrets **out, struct runner_error *err)
{
	struct secrets_read r;
	struct stat sb;
	char *data = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, rc = -1, ir;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	/* O_NONBLOCK: a FIFO put there does not hang the start; it is then
	 * refused as not a regular file */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: %s", path,
		                        strerror(errno));
	if (check_file(fd, path, uid, &sb, err) != 0)
		goto out;
	data = model_xmalloc(RUNNER_GATEWAY_SECRETS_MAX_FILE + 2);
	while (got <= RUNNER_GATEWAY_SECRETS_MAX_FILE) {
		n = read(fd, data + got, RUNNER_GATEWAY_SECRETS_MAX_FILE + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: %s", path,
			                 strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > RUNNER_GATEWAY_SECRETS_MAX_FILE) {
		runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: over %d bytes", path,
		                 RUNNER_GATEWAY_SECRETS_MAX_FILE);
		goto out;
	}
	data[got] = '\0';
	r.path = path;
	r.data = data;
	r.len = got;
	r.egress_allow = egress_allow;
	r.s = model_xcalloc(1, sizeof(*r.s));
	r.err = err;
	ir = ini_parse_stream(reader, &r, on_key, &r);
	if (!r.failed && ir > 0) {
		r.line = ir;
		refuse(&r, "not a section, a key = value or a comment");
	}
	if (!r.failed && ir < 0)
		runner_error_set(err, RUNNER_E_SETUP, "egress_secrets %s: cannot be read", path);
	if (!r.failed && ir >= 0)
		section_done(&r);
	if (!r.failed && ir == 0 && r.s->n == 0) {
		r.line = r.line > 0 ? r.line : 1;
		refuse(&r, "no [host NAME] section");
	}
	if (r.failed || ir != 0)
		goto out;
	*out = r.s;
	r.s = NULL;
	rc = 0;
out:
	runner_gateway_secrets_free(r.s);
	if (data) {
		/* the values stay in the parsed headers only */
		memset(data, 0, got);
		free(data);
	}
	close(fd);
	return rc;
}

void runner_gateway_secrets_free(struct runner_gateway_secrets *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		json_decref(s->hosts[i].headers);
	free(s);
}

json_t *runner_gateway_secrets_for(const struct runner_gateway_secrets *s, const char *scheme,
                                   const char *host, int port)
{
	int def = scheme && strcmp(scheme, "https") == 0 ? 443 : 80;
	size_t i;

	if (!s || !host)
		return NULL;
	for (i = 0; i < s->n; i++)
		if (strcmp(s->hosts[i].host, host) == 0 &&
		    (s->hosts[i].port ? s->hosts[i].port == port : port == def))
			return s->hosts[i].headers;
	return NULL;
}

/* Whether name, blanks around it aside, is the name of one of inject's. */
static int injected(const char *name, json_t *inject)
{
	const char *p = name;
	size_t i, len;
	json_t *h;

	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, " \t");
	json_array_foreach(inject, i, h)
	{
		const char *n = json_string_value(json_array_get(h, 0));

		if (n && strlen(n) == len && strncasecmp(p, n, len) == 0)
			return 1;
	}
	return 0;
}

json_t *runner_gateway_secrets_apply(json_t *headers, json_t *inject, json_t **names)
{
	json_t *out = json_array(), *h;
	size_t i;

	if (names)
		*names = json_array();
	json_array_foreach(headers, i, h)
	{
		const char *n = json_string_value(json_array_get(h, 0));

		if (n && !injected(n, inject))
			json_array_append(out, h);
	}
	json_array_foreach(inject, i, h)
	{
		json_array_append(out, h);
		if (names)
			json_array_append(*names, json_array_get(h, 0));
	}
	return out;
}

void runner_gateway_secrets_mask(json_t *headers, json_t *inject)
{
	size_t i, k;
	json_t *h, *in;

	json_array_foreach(headers, i, h)
	{
		const char *v = json_string_value(json_array_get(h, 1));

		json_array_foreach(inject, k, in)
		{
			const char *secret = json_string_value(json_array_get(in, 1));

			if (v && secret && strstr(v, secret)) {
				json_array_set_new(h, 1, json_string("[masked]"));
				break;
			}
		}
	}
}
