/*
 * Capped growable buffer (buf.h). The cap is checked before any byte is
 * copied, so a refused append leaves the buffer exactly as it was.
 */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define BUF_INITIAL 64

void model_buf_init(struct model_buf *b, size_t max)
{
	b->alloc = BUF_INITIAL;
	b->data = model_xmalloc(b->alloc);
	b->data[0] = '\0';
	b->len = 0;
	b->max = max;
}

/* Make room for len + n bytes plus the NUL; the caller checked the cap. */
static void buf_reserve(struct model_buf *b, size_t n)
{
	size_t need;
	size_t want;

	need = b->len + n + 1;
	if (need <= b->alloc)
		return;
	want = b->alloc;
	while (want < need) {
		if (want > (size_t)-1 / 2) {
			want = need;
			break;
		}
		want *= 2;
	}
	/* never allocate much beyond what the cap can ever use */
	if (want > b->max + 1 && need <= b->max + 1)
		want = b->max + 1;
	b->data = model_xrealloc(b->data, want);
	b->alloc = want;
}

int model_buf_add(struct model_buf *b, const void *p, size_t n)
{
	if (n > b->max || b->len > b->max - n)
		return -1;
	if (n == 0)
		return 0;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int model_buf_adds(struct model_buf *b, const char *s)
{
	return model_buf_add(b, s, strlen(s));
}

int model_buf_printf(struct model_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n > b->max || b->len > b->max - (size_t)n)
		return -1;
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, b->alloc - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	b->data[b->len] = '\0';
	return 0;
}

void model_buf_must_fit(int rc)
{
	if (rc == 0)
		return;
	fputs("olivares: an append crossed a buffer cap sized to hold it\n", stderr);
	abort();
}

void model_buf_reset(struct model_buf *b)
{
	b->len = 0;
	b->data[0] = '\0';
}

char *model_buf_detach(struct model_buf *b, size_t *len_out)
{
	char *p;

	p = b->data;
	if (len_out)
		*len_out = b->len;
	model_buf_init(b, b->max);
	return p;
}

void model_buf_release(struct model_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
}
