/*
 * One log line on stderr (log.h).
 */
#include "fcgi/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/text.h"

/* A code point a terminal or a log reader acts on: C0 controls (the
 * newline that would start a forged line among them), DEL, and the C1
 * controls (U+009B is a CSI as good as ESC [). */
static int log_control(long c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f);
}

size_t olv_log_escape(const char *in, char *out, size_t n)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t avail = strlen(in), len, w = 0, k;
	char esc[8];
	long c;

	if (n == 0)
		return 0;
	while (avail > 0) {
		c = model_text_utf8_at(s, avail, &len);
		if (c < 0 || log_control(c)) {
			/* a stray byte as itself, a C1 control as its code point */
			if (c < 0 || c < 0x80)
				snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)s[0]);
			else
				snprintf(esc, sizeof(esc), "\\u%04lx", (unsigned long)c);
			k = strlen(esc);
			if (w + k >= n)
				break;
			memcpy(out + w, esc, k);
		} else {
			k = len;
			if (w + k >= n)
				break;
			memcpy(out + w, s, k);
		}
		w += k;
		s += len;
		avail -= len;
	}
	out[w] = '\0';
	return w;
}

void olv_log_line(const char *prog, const char *fmt, va_list ap)
{
	char msg[1024], line[1024];
	int n;
	size_t w;

	n = snprintf(line, sizeof(line), "%s[%ld]: ", prog, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* a request's path, a store's message: text from outside, which must
	 * stay one line of this log and never reach a terminal as a control */
	w = (size_t)n + olv_log_escape(msg, line + n, sizeof(line) - 1 - (size_t)n);
	line[w++] = '\n';
	if (write(STDERR_FILENO, line, w) < 0)
		return;
}
