/*
 * Unit tests of fcgi/log.c (Check): a log line stays one line whatever
 * the text it quotes, and no control reaches the log as itself.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi/log.h"
#include "tests/unit/unit.h"

static const char *esc(const char *in)
{
	static char out[256];

	olv_log_escape(in, out, sizeof(out));
	return out;
}

START_TEST(test_escape_controls)
{
	ck_assert_str_eq(esc("GET /v1/x -> 500"), "GET /v1/x -> 500");
	/* the forged line: a newline and a fake entry after it */
	ck_assert_str_eq(esc("/a\nolivares-fcgi[1]: admin login ok"),
	                 "/a\\x0aolivares-fcgi[1]: admin login ok");
	ck_assert_str_eq(esc("\r\t\x01"), "\\x0d\\x09\\x01");
	/* a terminal escape, 7-bit and 8-bit */
	ck_assert_str_eq(esc("\x1b[2J"), "\\x1b[2J");
	ck_assert_str_eq(esc("\xc2\x9b"
	                     "2J"),
	                 "\\u009b2J");
	ck_assert_str_eq(esc("\x7f"), "\\x7f");
	/* text stays as it is, invalid bytes do not */
	ck_assert_str_eq(esc("h\xc3\xa9llo \xe2\x82\xac"), "h\xc3\xa9llo \xe2\x82\xac");
	ck_assert_str_eq(esc("a\xff"
	                     "b\x80"),
	                 "a\\xffb\\x80");
	ck_assert_str_eq(esc("\xe2\x82"), "\\xe2\\x82");
}
END_TEST

START_TEST(test_escape_bounds)
{
	char out[7];

	/* cut at a whole escape, never half of one, always terminated */
	ck_assert_uint_eq(olv_log_escape("abc\ndef", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(olv_log_escape("ab\xc3\xa9\xc3\xa9\xc3\xa9", out, sizeof(out)), 6);
	ck_assert_str_eq(out, "ab\xc3\xa9\xc3\xa9");
	ck_assert_uint_eq(olv_log_escape("x", out, 1), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

static void log_to(int fd, const char *fmt, ...)
{
	va_list ap;
	int saved = dup(STDERR_FILENO);

	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	va_start(ap, fmt);
	olv_log_line("olivares-fcgi", fmt, ap);
	va_end(ap);
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
}

START_TEST(test_line_is_one_line)
{
	char buf[4096], big[3000], *nl;
	int p[2];
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	log_to(p[1], "%s %s -> %d %s", "GET", "/x\nolivares-fcgi[7]: forged\x1b[31m", 500,
	       "internal");
	n = read(p[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_ptr_eq(nl, buf + n - 1); /* one line, ending the write */
	ck_assert_ptr_nonnull(strstr(buf, "]: GET /x\\x0aolivares-fcgi[7]: forged\\x1b[31m -> 500 "
	                                  "internal\n"));
	ck_assert_ptr_null(strchr(buf, '\x1b'));

	/* over the line's size: cut, still one line with its newline */
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_to(p[1], "%s", big);
	n = read(p[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	ck_assert_int_le(n, 1023);
	buf[n] = '\0';
	ck_assert_ptr_eq(strchr(buf, '\n'), buf + n - 1);
	close(p[0]);
	close(p[1]);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const escape[] = {test_escape_controls, test_escape_bounds, NULL};
	const TTest *const line[] = {test_line_is_one_line, NULL};
	Suite *s;

	s = suite_create("log");
	unit_tcase(s, "escape", escape);
	unit_tcase(s, "line", line);
	return s;
}
