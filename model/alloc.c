/*
 * Allocation policy (alloc.h): out of memory is not recovered from. The
 * process prints one line to stderr and aborts; its parent respawns it.
 * That line is the only I/O model/ ever does.
 */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
	fputs("olivares: out of memory\n", stderr);
	abort();
}

void *model_xmalloc(size_t n)
{
	void *p;

	p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *model_xcalloc(size_t count, size_t size)
{
	void *p;

	if (count && size > (size_t)-1 / count)
		oom();
	p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *model_xrealloc(void *p, size_t n)
{
	void *q;

	q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *model_xstrdup(const char *s)
{
	return model_xmemdup(s, strlen(s));
}

char *model_xmemdup(const void *p, size_t n)
{
	char *q;

	if (n == (size_t)-1)
		oom();
	q = model_xmalloc(n + 1);
	if (n)
		memcpy(q, p, n);
	q[n] = '\0';
	return q;
}
