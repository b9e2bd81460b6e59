/*
 * The Prometheus text exposition format (fcgi/http/prom.h).
 */
#include "fcgi/http/prom.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void http_prom_init(struct http_prom *p, size_t max)
{
	model_buf_init(&p->buf, max);
	p->overflow = 0;
}

void http_prom_release(struct http_prom *p)
{
	model_buf_release(&p->buf);
}

static void add(struct http_prom *p, const char *s, size_t n)
{
	if (!p->overflow && model_buf_add(&p->buf, s, n))
		p->overflow = 1;
}

static void adds(struct http_prom *p, const char *s)
{
	add(p, s, strlen(s));
}

/* s with '\\' and '\n' escaped, and '"' as well when quote is set */
static void add_escaped(struct http_prom *p, const char *s, int quote)
{
	const char *run = s;

	for (; *s; s++) {
		if (*s != '\\' && *s != '\n' && !(quote && *s == '"'))
			continue;
		add(p, run, (size_t)(s - run));
		adds(p, *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : "\\\"");
		run = s + 1;
	}
	add(p, run, (size_t)(s - run));
}

void http_prom_escape(struct http_prom *p, const char *v)
{
	add_escaped(p, v, 1);
}

void http_prom_family(struct http_prom *p, const char *name, const char *type, const char *help)
{
	adds(p, "# HELP ");
	adds(p, name);
	adds(p, " ");
	add_escaped(p, help, 0);
	adds(p, "\n# TYPE ");
	adds(p, name);
	adds(p, " ");
	adds(p, type);
	adds(p, "\n");
}

void http_prom_sample(struct http_prom *p, const char *name, const char *const *labels, size_t n,
                      double value)
{
	char num[40];
	size_t i;
	int first = 1;

	adds(p, name);
	for (i = 0; i < n; i++) {
		if (!labels[2 * i + 1])
			continue;
		adds(p, first ? "{" : ",");
		first = 0;
		adds(p, labels[2 * i]);
		adds(p, "=\"");
		http_prom_escape(p, labels[2 * i + 1]);
		adds(p, "\"");
	}
	if (!first)
		adds(p, "}");
	if (isnan(value))
		snprintf(num, sizeof(num), "NaN");
	else if (isinf(value))
		snprintf(num, sizeof(num), "%s", value > 0 ? "+Inf" : "-Inf");
	else if (value > -9007199254740992.0 && value < 9007199254740992.0 &&
	         (double)(long long)value == value)
		snprintf(num, sizeof(num), "%lld", (long long)value);
	else
		snprintf(num, sizeof(num), "%.15g", value);
	adds(p, " ");
	adds(p, num);
	adds(p, "\n");
}
