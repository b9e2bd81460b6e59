/*
 * Unit tests of fcgi/log.c (Check): a log line is one JSON object on one
 * line whatever the text it quotes, no control reaches the log as
 * itself, and text that is not UTF-8 still gives a valid line.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi/log.h"
#include "tests/unit/unit.h"

static const char T0[25] = "2026-12-03T13:44:11.123Z";

/* The line's bytes: printable ASCII only, then its one newline at the end. */
static void assert_one_printable_line(const char *line, size_t n)
{
	size_t i;

	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(strlen(line), n);
	ck_assert_int_eq(line[n - 1], '\n');
	for (i = 0; i + 1 < n; i++)
		ck_assert_msg(line[i] >= 0x20 && line[i] < 0x7f, "byte 0x%02x at %zu of %s",
		              (unsigned char)line[i], i, line);
}

/* Encode msg (and fields) and parse the line back: its object (caller
 * decrefs), after checking it is one printable line. */
static json_t *encode(const char *msg, json_t *fields, char *line, size_t n)
{
	size_t w;

	w = olv_log_encode(line, n, T0, "olivares-fcgi", 4242, OLV_LOG_ERROR, "req-1", msg, fields);
	assert_one_printable_line(line, w);
	return unit_json(line);
}

static const char *msg_of(json_t *o)
{
	ck_assert_ptr_nonnull(json_string_value(json_object_get(o, "msg")));
	return json_string_value(json_object_get(o, "msg"));
}

START_TEST(test_core_fields)
{
	char line[OLV_LOG_LINE_MAX];
	json_t *o;

	o = encode("listening on /run/x.sock", NULL, line, sizeof(line));
	/* the time first, where the watchdog stamps it */
	ck_assert_int_eq(strncmp(line, "{\"time\":\"2026-12-03T13:44:11.123Z\"", 34), 0);
	ck_assert_int_eq(memcmp(line + OLV_LOG_TIME_OFFSET, T0, 24), 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "level")), "error");
	ck_assert_str_eq(json_string_value(json_object_get(o, "prog")), "olivares-fcgi");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), 4242);
	ck_assert_str_eq(json_string_value(json_object_get(o, "request_id")), "req-1");
	ck_assert_str_eq(msg_of(o), "listening on /run/x.sock");
	ck_assert_ptr_null(json_object_get(o, "truncated"));
	json_decref(o);
}
END_TEST

START_TEST(test_levels)
{
	char line[512];
	size_t w;

	ck_assert_str_eq(olv_log_level_name(OLV_LOG_ERROR), "error");
	ck_assert_str_eq(olv_log_level_name(OLV_LOG_WARNING), "warning");
	ck_assert_str_eq(olv_log_level_name(OLV_LOG_INFO), "info");
	w = olv_log_encode(line, sizeof(line), T0, "olivares-executor", 1, OLV_LOG_WARNING, NULL,
	                   "m", NULL);
	ck_assert_str_eq(line, "{\"time\":\"2026-12-03T13:44:11.123Z\",\"level\":\"warning\","
	                       "\"prog\":\"olivares-executor\",\"pid\":1,\"msg\":\"m\"}\n");
	ck_assert_uint_eq(w, strlen(line));
	w = olv_log_encode(line, sizeof(line), T0, "p", 1, OLV_LOG_INFO, "", "m", NULL);
	ck_assert_ptr_nonnull(strstr(line, "\"level\":\"info\""));
	/* no request id: no field */
	ck_assert_ptr_null(strstr(line, "request_id"));
}
END_TEST

START_TEST(test_controls)
{
	char line[OLV_LOG_LINE_MAX];
	json_t *o;

	/* the forged line: a newline and a fake entry after it */
	o = encode("GET /a\n{\"level\":\"info\",\"msg\":\"admin login ok\"}", NULL, line,
	           sizeof(line));
	ck_assert_str_eq(msg_of(o), "GET /a\n{\"level\":\"info\",\"msg\":\"admin login ok\"}");
	ck_assert_ptr_nonnull(strstr(line, "GET /a\\n{\\\"level\\\""));
	json_decref(o);
	/* every other C0 control */
	o = encode("\r\t\x01\x1b[2J", NULL, line, sizeof(line));
	ck_assert_str_eq(msg_of(o), "\r\t\x01\x1b[2J");
	ck_assert_ptr_nonnull(strstr(line, "\"msg\":\"\\r\\t\\u0001\\u001B[2J\""));
	json_decref(o);
}
END_TEST

START_TEST(test_del_and_c1)
{
	char line[OLV_LOG_LINE_MAX];
	json_t *o;

	/* DEL, which jansson leaves as itself */
	o = encode("a\x7f"
	           "b",
	           NULL, line, sizeof(line));
	ck_assert_str_eq(msg_of(o), "a\x7f"
	                            "b");
	ck_assert_ptr_nonnull(strstr(line, "\"msg\":\"a\\u007Fb\""));
	json_decref(o);
	/* the 8-bit CSI (U+009B) and the rest of the text as \u escapes */
	o = encode("\xc2\x9b"
	           "2J h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",
	           NULL, line, sizeof(line));
	ck_assert_str_eq(msg_of(o), "\xc2\x9b"
	                            "2J h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
	ck_assert_ptr_nonnull(
	    strstr(line, "\"msg\":\"\\u009B2J h\\u00E9llo \\u20AC \\uD83D\\uDE00\""));
	json_decref(o);
}
END_TEST

START_TEST(test_invalid_utf8)
{
	char line[OLV_LOG_LINE_MAX];
	json_t *o;

	/* stray, truncated, overlong, surrogate, above U+10FFFF: each byte as
	 * the text \xHH, the valid text around them kept */
	o = encode("a\xff"
	           "b\x80"
	           "c\xe2\x82",
	           NULL, line, sizeof(line));
	ck_assert_str_eq(msg_of(o), "a\\xffb\\x80c\\xe2\\x82");
	json_decref(o);
	o = encode("\xc0\x8a|\xed\xa0\x80|\xf4\x90\x80\x80|\xc3\xa9", NULL, line, sizeof(line));
	ck_assert_str_eq(msg_of(o), "\\xc0\\x8a|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|\xc3\xa9");
	json_decref(o);
}
END_TEST

START_TEST(test_fields)
{
	char line[OLV_LOG_LINE_MAX];
	json_t *f, *o;

	f = json_object();
	json_object_set_new(f, "path", olv_log_text("/v1/x\n\x1b[31m\xff", 1024));
	json_object_set_new(f, "status", json_integer(503));
	/* a field named as a core one does not replace it */
	json_object_set_new(f, "level", json_string("info"));
	o = encode("request", f, line, sizeof(line));
	ck_assert_str_eq(json_string_value(json_object_get(o, "path")), "/v1/x\n\x1b[31m\\xff");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "status")), 503);
	ck_assert_str_eq(json_string_value(json_object_get(o, "level")), "error");
	json_decref(o);
	json_decref(f);
}
END_TEST

START_TEST(test_text_cut)
{
	json_t *j;

	/* cut at a whole character or escape, within max bytes */
	j = olv_log_text("ab\xc3\xa9\xc3\xa9", 5);
	ck_assert_str_eq(json_string_value(j), "ab\xc3\xa9");
	json_decref(j);
	j = olv_log_text("ab\xff\xff", 5);
	ck_assert_str_eq(json_string_value(j), "ab");
	json_decref(j);
	j = olv_log_text("ab\xff\xff", 6);
	ck_assert_str_eq(json_string_value(j), "ab\\xff");
	json_decref(j);
	j = olv_log_text(NULL, 8);
	ck_assert_str_eq(json_string_value(j), "");
	json_decref(j);
}
END_TEST

START_TEST(test_long_message)
{
	char line[OLV_LOG_LINE_MAX];
	char *big;
	json_t *o, *f;
	size_t w;

	/* controls take 6 bytes each: the message is shortened until the
	 * line fits, and says so */
	big = unit_rep('\x01', 3000);
	w = olv_log_encode(line, sizeof(line), T0, "p", 1, OLV_LOG_INFO, NULL, big, NULL);
	assert_one_printable_line(line, w);
	ck_assert_uint_le(w, OLV_LOG_LINE_MAX - 1);
	o = unit_json(line);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	ck_assert_uint_gt(strlen(msg_of(o)), 100);
	ck_assert_uint_lt(strlen(msg_of(o)), 3000);
	json_decref(o);
	/* plain text over the message's cap */
	free(big);
	big = unit_rep('a', OLV_LOG_MSG_MAX + 1);
	o = encode(big, NULL, line, sizeof(line));
	ck_assert_uint_eq(strlen(msg_of(o)), OLV_LOG_MSG_MAX);
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);
	/* fields too large for any line: dropped, the line still valid */
	f = json_object();
	json_object_set_new(f, "a", olv_log_text(big, OLV_LOG_MSG_MAX));
	json_object_set_new(f, "b", olv_log_text(big, OLV_LOG_MSG_MAX));
	o = encode("x", f, line, sizeof(line));
	ck_assert_ptr_null(json_object_get(o, "a"));
	ck_assert(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);
	json_decref(f);
	free(big);
	/* a buffer too small for any line */
	ck_assert_uint_eq(olv_log_encode(line, 100, T0, "p", 1, OLV_LOG_INFO, NULL, "m", NULL), 0);
}
END_TEST

START_TEST(test_time)
{
	struct timespec ts;
	char out[25];

	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	olv_log_time(&ts, out);
	ck_assert_str_eq(out, "1970-01-01T00:00:00.000Z");
	ts.tv_sec = 951782400 + 86399; /* the end of 2000-02-29, a leap day */
	ts.tv_nsec = 999999999;
	olv_log_time(&ts, out);
	ck_assert_str_eq(out, "2000-02-29T23:59:59.999Z");
	ts.tv_sec = 1796305451; /* 2026-12-03T13:44:11Z */
	ts.tv_nsec = 123456789;
	olv_log_time(&ts, out);
	ck_assert_str_eq(out, "2026-12-03T13:44:11.123Z");
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	olv_log_time(&ts, out);
	ck_assert_str_eq(out, "1969-12-31T23:59:59.000Z");
}
END_TEST

static void log_to(int fd, const char *fmt, ...)
{
	va_list ap;
	int saved = dup(STDERR_FILENO);

	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	va_start(ap, fmt);
	olv_log_line("olivares-fcgi", OLV_LOG_INFO, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
}

START_TEST(test_line_is_one_write)
{
	char buf[2 * OLV_LOG_LINE_MAX], big[3000];
	json_t *o;
	int p[2];
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	olv_log_set_request_id("abc.DEF:1-2_3");
	log_to(p[1], "%s %s -> %d", "GET", "/x\n{\"forged\":1}\x1b[31m", 500);
	n = read(p[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	assert_one_printable_line(buf, (size_t)n);
	o = unit_json(buf);
	ck_assert_str_eq(msg_of(o), "GET /x\n{\"forged\":1}\x1b[31m -> 500");
	ck_assert_str_eq(json_string_value(json_object_get(o, "request_id")), "abc.DEF:1-2_3");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), getpid());
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(o, "time"))), 24);
	json_decref(o);
	ck_assert_str_eq(olv_log_request_id(), "abc.DEF:1-2_3");
	olv_log_set_request_id(NULL);
	ck_assert_str_eq(olv_log_request_id(), "");

	/* over the line's size: cut, still one line, one write */
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_to(p[1], "%s", big);
	n = read(p[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	ck_assert_int_le(n, OLV_LOG_LINE_MAX - 1);
	buf[n] = '\0';
	assert_one_printable_line(buf, (size_t)n);
	o = unit_json(buf);
	ck_assert_ptr_null(json_object_get(o, "request_id"));
	json_decref(o);
	close(p[0]);
	close(p[1]);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const encode_tests[] = {
	    test_core_fields, test_levels,   test_controls,     test_del_and_c1, test_invalid_utf8,
	    test_fields,      test_text_cut, test_long_message, test_time,       NULL};
	const TTest *const line[] = {test_line_is_one_write, NULL};
	Suite *s;

	s = suite_create("log");
	unit_tcase(s, "encode", encode_tests);
	unit_tcase(s, "line", line);
	return s;
}
