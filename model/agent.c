/*
 * Agent programs (agent.h): names, "#!" lines, and the jail's view of a
 * path. Pure: every file system question goes to the caller's probe.
 */
#include "agent.h"

#include <stdio.h>
#include <string.h>

int model_agent_name_ok(const char *v)
{
	size_t i;
	char ch;

	for (i = 0; v[i]; i++) {
		ch = v[i];
		if (i == MODEL_AGENT_NAME_MAX)
			return 0;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9'))
			continue;
		if (i > 0 && (ch == '.' || ch == '_' || ch == '-'))
			continue;
		return 0;
	}
	return i > 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

int model_interp_parse(const char *head, size_t n, struct model_interp *out)
{
	size_t i, start, end;

	memset(out, 0, sizeof(*out));
	if (n > MODEL_AGENT_HEAD_BYTES)
		n = MODEL_AGENT_HEAD_BYTES;
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return 0;
	for (end = 2; end < n && head[end] != '\n'; end++)
		;
	if (end == n)
		return -1; /* no end of line within what the kernel reads */
	/* the kernel also drops a CR or blanks before the newline */
	while (end > 2 && (blank(head[end - 1]) || head[end - 1] == '\r'))
		end--;
	for (i = 2; i < end && blank(head[i]); i++)
		;
	start = i;
	while (i < end && !blank(head[i]))
		i++;
	if (i == start)
		return -1;
	memcpy(out->path, head + start, i - start);
	while (i < end && blank(head[i]))
		i++;
	memcpy(out->arg, head + i, end - i);
	return 1;
}

/* 1 when p equals dir or lies under it ("/usr" holds "/usr/bin/x", not
 * "/usrx"). */
static int under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return 1;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int bind_is(json_t *binds, const char *dir)
{
	json_t *b;
	size_t i;

	json_array_foreach(binds, i, b)
	{
		if (json_is_string(b) && strcmp(json_string_value(b), dir) == 0)
			return 1;
	}
	return 0;
}

/* The host path behind jail path p (absolute) into out: /bin, /lib,
 * /lib64 and /sbin lead into /usr unless a bind takes them. 1 when it
 * lies under a bind, 0 when the jail does not hold it. */
static int jail_host(const char *p, json_t *binds, char *out, size_t n)
{
	static const char *const links[] = {"/bin", "/lib", "/lib64", "/sbin"};
	json_t *b;
	size_t i;

	snprintf(out, n, "%s", p);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (under(p, links[i]) && !bind_is(binds, links[i])) {
			if ((size_t)snprintf(out, n, "/usr%s", p) >= n)
				return 0;
			break;
		}
	}
	json_array_foreach(binds, i, b)
	{
		if (json_is_string(b) && under(out, json_string_value(b)))
			return 1;
	}
	return 0;
}

int model_jail_sees(const char *jail_path, json_t *binds, model_path_probe probe, void *ctx)
{
	char abs[4096], host[4096], real[4096], again[4096];
	json_t *def = NULL;
	int ok;

	if ((size_t)snprintf(abs, sizeof(abs), "%s%s", jail_path[0] == '/' ? "" : "/", jail_path) >=
	    sizeof(abs))
		return 0;
	if (!binds)
		binds = def = json_pack("[s]", "/usr");
	ok = jail_host(abs, binds, host, sizeof(host)) &&
	     probe(ctx, host, real, sizeof(real)) == 1 &&
	     jail_host(real, binds, again, sizeof(again));
	json_decref(def);
	return ok;
}

static const char *last_part(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int model_interp_in_jail(const struct model_interp *ip, json_t *binds, model_path_probe probe,
                         void *ctx, char *resolved, size_t n)
{
	char prog[MODEL_AGENT_HEAD_BYTES], cand[MODEL_AGENT_HEAD_BYTES + 16];
	const char *a = ip->arg, *dir, *colon;
	size_t len;

	if (resolved && n)
		resolved[0] = '\0';
	if (!model_jail_sees(ip->path, binds, probe, ctx))
		return MODEL_INTERP_MISSING;
	if (strcmp(last_part(ip->path), "env") != 0 || !a[0])
		return MODEL_INTERP_IN_JAIL;
	/* env gets the rest of the line as one argument: "-S" splits it */
	if (a[0] == '-') {
		if (a[1] != 'S')
			return MODEL_INTERP_UNKNOWN;
		a += 2;
		while (blank(*a))
			a++;
		if (!*a || *a == '-')
			return MODEL_INTERP_UNKNOWN;
	}
	for (len = 0; a[len] && !(ip->arg[0] == '-' && blank(a[len])); len++)
		;
	memcpy(prog, a, len);
	prog[len] = '\0';
	if (strchr(prog, '/')) {
		if (!model_jail_sees(prog, binds, probe, ctx))
			return MODEL_INTERP_LOOKUP;
		if (resolved && n)
			snprintf(resolved, n, "%s", prog);
		return MODEL_INTERP_IN_JAIL;
	}
	for (dir = MODEL_AGENT_JAIL_PATH; *dir; dir = colon ? colon + 1 : dir + strlen(dir)) {
		colon = strchr(dir, ':');
		len = colon ? (size_t)(colon - dir) : strlen(dir);
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, dir, prog);
		if (model_jail_sees(cand, binds, probe, ctx)) {
			if (resolved && n)
				snprintf(resolved, n, "%s", cand);
			return MODEL_INTERP_IN_JAIL;
		}
	}
	return MODEL_INTERP_LOOKUP;
}

void model_interp_reason(const char *name, const struct model_interp *ip, int verdict, char *buf,
                         size_t n)
{
	if (verdict == MODEL_INTERP_MISSING)
		snprintf(buf, n,
		         "agent program %s: its interpreter %s is not inside the jail (add its "
		         "directory to [runner] binds)",
		         name, ip->path);
	else if (verdict == MODEL_INTERP_LOOKUP)
		snprintf(buf, n,
		         "agent program %s: its interpreter %s finds no %s inside the jail (PATH "
		         "%s; add its directory to [runner] binds)",
		         name, ip->path, ip->arg, MODEL_AGENT_JAIL_PATH);
	else if (n)
		buf[0] = '\0';
}
