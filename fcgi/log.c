/*
 * Structured log lines on stderr (log.h).
 */
#include "fcgi/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/text.h"

/* jansson's encoding of every line: one line (compact), no byte above
 * 0x7e (every non-ASCII character as \uXXXX, C1 controls among them), a
 * duration to the microsecond without binary noise (0.412, not
 * 0.41199999999999998) */
#define LOG_JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9))

static char log_request_id[OLV_LOG_REQUEST_ID_MAX + 1];

const char *olv_log_level_name(enum olv_log_level level)
{
	switch (level) {
	case OLV_LOG_ERROR:
		return "error";
	case OLV_LOG_WARNING:
		return "warning";
	case OLV_LOG_INFO:
		break;
	}
	return "info";
}

static void put_digits(char *p, long v, int width)
{
	while (width-- > 0) {
		p[width] = (char)('0' + v % 10);
		v /= 10;
	}
}

void olv_log_time(const struct timespec *ts, char out[25])
{
	long long t = (long long)ts->tv_sec, days, secs, z, era, doe, yoe, y, doy, mp, d, m;

	/* the civil date of a day count (H. Hinnant's days_from_civil
	 * inverse): gmtime_r may take a lock, which a signal handler must not */
	days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
	secs = t - days * 86400;
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (y < 0 || y > 9999) {
		memcpy(out, "1970-01-01T00:00:00.000Z", 25);
		return;
	}
	memcpy(out, "0000-00-00T00:00:00.000Z", 25);
	put_digits(out, (long)y, 4);
	put_digits(out + 5, (long)m, 2);
	put_digits(out + 8, (long)d, 2);
	put_digits(out + 11, (long)(secs / 3600), 2);
	put_digits(out + 14, (long)(secs / 60 % 60), 2);
	put_digits(out + 17, (long)(secs % 60), 2);
	put_digits(out + 20, (long)(ts->tv_nsec / 1000000 % 1000), 3);
}

/* The length of the valid UTF-8 character at s (avail bytes readable) as
 * jansson accepts it, or 0: model_text_utf8_at does not tell overlongs,
 * surrogates and code points above U+10FFFF apart, json_stringn refuses
 * them. */
static size_t utf8_char(const unsigned char *s, size_t avail)
{
	size_t len;
	long c;

	c = model_text_utf8_at(s, avail, &len);
	if (c < 0 || (len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
	    (len == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

json_t *olv_log_text(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t avail = strlen((const char *)p), w = 0, len;
	char *buf;
	json_t *j;

	buf = malloc(max + 1);
	if (!buf)
		return NULL;
	while (avail > 0) {
		len = utf8_char(p, avail);
		if (len == 0) {
			/* a byte that is no text: as text, so the line stays valid */
			if (w + 4 > max)
				break;
			snprintf(buf + w, 5, "\\x%02x", (unsigned)p[0]);
			w += 4;
			len = 1;
		} else {
			if (w + len > max)
				break;
			memcpy(buf + w, p, len);
			w += len;
		}
		p += len;
		avail -= len;
	}
	j = json_stringn(buf, w);
	free(buf);
	return j;
}

/* Copy the n bytes of the jansson text in to out (cap bytes) with every
 * DEL, which jansson leaves as itself, as \u007F (a DEL can only be
 * inside a string: JSON's own syntax is printable). Returns the bytes
 * written, or 0 when they do not fit. */
static size_t copy_escaping_del(char *out, size_t cap, const char *in, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++) {
		if (in[i] == 0x7f) {
			if (w + 6 > cap)
				return 0;
			memcpy(out + w, "\\u007F", 6);
			w += 6;
		} else {
			if (w + 1 > cap)
				return 0;
			out[w++] = in[i];
		}
	}
	return w;
}

/* The object of one line; NULL when jansson failed. */
static json_t *line_object(const char time[25], const char *prog, long pid,
                           enum olv_log_level level, const char *request_id, const char *msg,
                           size_t msg_max, int truncated, json_t *fields)
{
	json_t *o = json_object();
	int rc = 0;

	if (!o)
		return NULL;
	/* time first: OLV_LOG_TIME_OFFSET */
	rc |= json_object_set_new(o, "time", json_string(time));
	rc |= json_object_set_new(o, "level", json_string(olv_log_level_name(level)));
	rc |= json_object_set_new(o, "prog", olv_log_text(prog, 64));
	rc |= json_object_set_new(o, "pid", json_integer(pid));
	if (request_id && request_id[0])
		rc |= json_object_set_new(o, "request_id",
		                          olv_log_text(request_id, OLV_LOG_REQUEST_ID_MAX));
	rc |= json_object_set_new(o, "msg", olv_log_text(msg, msg_max));
	if (truncated)
		rc |= json_object_set_new(o, "truncated", json_true());
	if (fields && json_is_object(fields))
		rc |= json_object_update_missing(o, fields);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

size_t olv_log_encode(char *out, size_t n, const char time[25], const char *prog, long pid,
                      enum olv_log_level level, const char *request_id, const char *msg,
                      json_t *fields)
{
	char tmp[OLV_LOG_LINE_MAX];
	size_t cap, msg_max, len, w;
	json_t *o;
	int attempt;

	if (n < 256)
		return 0;
	/* room for the newline and the NUL */
	cap = n - 2 < sizeof(tmp) ? n - 2 : sizeof(tmp);
	msg_max = OLV_LOG_MSG_MAX;
	for (attempt = 0; attempt < 16; attempt++) {
		/* the last tries: no fields, then an empty message */
		o = line_object(time, prog, pid, level, request_id,
		                attempt < 15 ? msg : "(log line too long)", msg_max,
		                attempt > 0 || strlen(msg) > OLV_LOG_MSG_MAX,
		                attempt < 14 ? fields : NULL);
		if (!o)
			return 0;
		len = json_dumpb(o, tmp, sizeof(tmp), LOG_JSON_FLAGS);
		json_decref(o);
		w = len > 0 && len <= sizeof(tmp) ? copy_escaping_del(out, cap, tmp, len) : 0;
		if (w > 0) {
			out[w++] = '\n';
			out[w] = '\0';
			return w;
		}
		/* an escaped byte takes up to 6: shorten the text by halves */
		msg_max /= 2;
	}
	return 0;
}

void olv_log_set_request_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n > OLV_LOG_REQUEST_ID_MAX)
		n = OLV_LOG_REQUEST_ID_MAX;
	if (n)
		memcpy(log_request_id, id, n);
	log_request_id[n] = '\0';
}

const char *olv_log_request_id(void)
{
	return log_request_id;
}

void olv_log_vfields(const char *prog, enum olv_log_level level, json_t *fields, const char *fmt,
                     va_list ap)
{
	char msg[OLV_LOG_MSG_MAX + 2], line[OLV_LOG_LINE_MAX], now[25];
	struct timespec ts;
	size_t w;

	/* one byte over the cap, so a cut message is known to be cut */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	clock_gettime(CLOCK_REALTIME, &ts);
	olv_log_time(&ts, now);
	w = olv_log_encode(line, sizeof(line), now, prog, (long)getpid(), level, log_request_id,
	                   msg, fields);
	if (w > 0 && write(STDERR_FILENO, line, w) < 0)
		return;
}

void olv_log_line(const char *prog, enum olv_log_level level, const char *fmt, va_list ap)
{
	olv_log_vfields(prog, level, NULL, fmt, ap);
}

void olv_log(enum olv_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_vfields(program_invocation_short_name, level, NULL, fmt, ap);
	va_end(ap);
}
