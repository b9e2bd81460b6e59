/*
 * The agent's log of a run (runlog.h): cleaned to harmless UTF-8 as it
 * comes, bounded where it is appended.
 */
#include "model/runlog.h"

#include <stdio.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void model_runlog_init_max(struct model_runlog *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	model_buf_init(&l->text, max);
}

void model_runlog_init(struct model_runlog *l)
{
	model_runlog_init_max(l, MODEL_RUN_LOG_MAX);
}

void model_runlog_release(struct model_runlog *l)
{
	model_buf_release(&l->text);
	l->part_len = 0;
}

/* Keep the n bytes of one cleaned character (raw: the agent's bytes it
 * stands for), or count raw as dropped once the cap is reached: nothing
 * after the first character that did not fit is kept, so the text kept
 * is a prefix of the log. */
static void keep(struct model_runlog *l, const char *s, size_t n, size_t raw)
{
	if (l->dropped == 0 && model_buf_add(&l->text, s, n) == 0)
		return;
	l->dropped += (long long)raw;
}

/* The length of the valid UTF-8 sequence at s (avail bytes there), 0 when
 * it is invalid, or -1 when it is a valid start cut at avail. */
static int seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++) {
		if ((size_t)i >= avail)
			return -1;
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return len;
}

/* Clean the n bytes at s; a valid start cut at the end is kept in part
 * when more may come (final 0), else replaced. */
static void clean(struct model_runlog *l, const unsigned char *s, size_t n, int final)
{
	size_t i = 0;
	int len;

	while (i < n) {
		if (s[i] < 0x80) {
			if (s[i] == '\n' || s[i] == '\t' || (s[i] >= 0x20 && s[i] < 0x7f))
				keep(l, (const char *)s + i, 1, 1);
			else
				keep(l, replacement, 3, 1);
			i++;
			continue;
		}
		len = seq_len(s + i, n - i);
		if (len < 0 && !final) {
			memcpy(l->part, s + i, n - i);
			l->part_len = n - i;
			return;
		}
		if (len <= 0) {
			keep(l, replacement, 3, 1);
			i++;
			continue;
		}
		/* U+0080..U+009F, the C1 controls, are C2 80..C2 9F */
		if (len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0)
			keep(l, replacement, 3, 2);
		else
			keep(l, (const char *)s + i, (size_t)len, (size_t)len);
		i += (size_t)len;
	}
}

void model_runlog_add(struct model_runlog *l, const char *s, size_t n)
{
	unsigned char joined[8];
	size_t take, had = l->part_len;

	if (n == 0)
		return;
	if (had) {
		/* complete the cut sequence with the first bytes of this chunk */
		take = n < sizeof(joined) - had ? n : sizeof(joined) - had;
		if (take > 3)
			take = 3;
		memcpy(joined, l->part, had);
		memcpy(joined + had, s, take);
		l->part_len = 0;
		if (seq_len(joined, had + take) < 0 && take == n) {
			/* still cut: wait for more */
			memcpy(l->part, joined, had + take);
			l->part_len = had + take;
			return;
		}
		/* clean the joined bytes up to the end of the first character */
		{
			int len = seq_len(joined, had + take);
			size_t used = len > 0 ? (size_t)len : 1;

			clean(l, joined, used, 1);
			/* the bytes of this chunk that character did not use */
			if (used > had) {
				s += used - had;
				n -= used - had;
			} else if (used < had) {
				/* an invalid start: the rest of part is cleaned again */
				clean(l, joined + used, had - used, 1);
			}
		}
	}
	clean(l, (const unsigned char *)s, n, 0);
}

void model_runlog_end(struct model_runlog *l)
{
	unsigned char part[4];
	size_t n = l->part_len;

	if (!n)
		return;
	memcpy(part, l->part, n);
	l->part_len = 0;
	clean(l, part, n, 1);
}

void model_runlog_mark(long long dropped, char *buf, size_t n)
{
	snprintf(buf, n, "[[log truncated: %lld bytes dropped]]", dropped);
}

int model_runlog_is_clean(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int len;

	while (i < n) {
		if (u[i] < 0x80) {
			if (!(u[i] == '\n' || u[i] == '\t' || (u[i] >= 0x20 && u[i] < 0x7f)))
				return 0;
			i++;
			continue;
		}
		len = seq_len(u + i, n - i);
		if (len <= 0 || (len == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0))
			return 0;
		i += (size_t)len;
	}
	return 1;
}

int model_runlog_shown(struct model_buf *out, const char *text, size_t len, long long dropped)
{
	char mark[MODEL_RUN_LOG_MARK_BYTES];
	size_t before = out->len;

	if (model_buf_add(out, text, len) != 0)
		return -1;
	if (dropped == 0)
		return 0;
	model_runlog_mark(dropped, mark, sizeof(mark));
	if ((len > 0 && text[len - 1] != '\n' && model_buf_add(out, "\n", 1) != 0) ||
	    model_buf_adds(out, mark) != 0 || model_buf_add(out, "\n", 1) != 0) {
		out->len = before;
		out->data[before] = '\0';
		return -1;
	}
	return 0;
}
