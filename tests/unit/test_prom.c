/*
 * Unit tests of fcgi/http/prom.c (Check): the Prometheus text format's
 * HELP and TYPE lines, samples with and without labels, label values
 * escaped (backslash, double quote, line feed), the value forms, and a
 * text that outgrows its cap marked as such.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "fcgi/http/prom.h"
#include "tests/unit/unit.h"

START_TEST(test_prom_family_and_samples)
{
	struct http_prom p;
	const char *l[] = {"route", "/v1/m/sandbox/runs/{id}", "method", "GET", "status", "200"};

	http_prom_init(&p, 4096);
	http_prom_family(&p, "olivares_x_total", "counter", "Things.\nSecond line \\ end");
	http_prom_sample(&p, "olivares_x_total", l, 3, 12);
	http_prom_sample(&p, "olivares_up", NULL, 0, 1);
	ck_assert_int_eq(p.overflow, 0);
	ck_assert_str_eq(p.buf.data,
	                 "# HELP olivares_x_total Things.\\nSecond line \\\\ end\n"
	                 "# TYPE olivares_x_total counter\n"
	                 "olivares_x_total{route=\"/v1/m/sandbox/runs/{id}\",method=\"GET\","
	                 "status=\"200\"} 12\n"
	                 "olivares_up 1\n");
	http_prom_release(&p);
}
END_TEST

START_TEST(test_prom_escape)
{
	struct http_prom p;
	const char *l[] = {"tenant", "a\\b\"c\nd", "skipped", NULL, "x", ""};

	http_prom_init(&p, 4096);
	http_prom_sample(&p, "olivares_runs", l, 3, 2);
	/* the NULL value's pair is left out; an empty value stays */
	ck_assert_str_eq(p.buf.data, "olivares_runs{tenant=\"a\\\\b\\\"c\\nd\",x=\"\"} 2\n");
	http_prom_release(&p);
	/* only the first label given is NULL: no stray comma */
	http_prom_init(&p, 4096);
	l[1] = NULL;
	http_prom_sample(&p, "olivares_runs", l, 3, 2);
	ck_assert_str_eq(p.buf.data, "olivares_runs{x=\"\"} 2\n");
	http_prom_release(&p);
	/* every label NULL: no braces */
	http_prom_init(&p, 4096);
	http_prom_sample(&p, "olivares_runs", l, 2, 2);
	ck_assert_str_eq(p.buf.data, "olivares_runs 2\n");
	http_prom_release(&p);
	/* HELP escapes backslash and line feed, not the quote */
	http_prom_init(&p, 4096);
	http_prom_family(&p, "m", "gauge", "say \"hi\"");
	ck_assert_str_eq(p.buf.data, "# HELP m say \"hi\"\n# TYPE m gauge\n");
	http_prom_release(&p);
}
END_TEST

START_TEST(test_prom_values)
{
	struct http_prom p;

	http_prom_init(&p, 4096);
	http_prom_sample(&p, "a", NULL, 0, 0);
	http_prom_sample(&p, "b", NULL, 0, 0.25);
	http_prom_sample(&p, "c", NULL, 0, 1796305864.596);
	http_prom_sample(&p, "d", NULL, 0, INFINITY);
	http_prom_sample(&p, "e", NULL, 0, -INFINITY);
	http_prom_sample(&p, "f", NULL, 0, NAN);
	http_prom_sample(&p, "g", NULL, 0, 18446744073709551616.0);
	http_prom_sample(&p, "h", NULL, 0, -3);
	ck_assert_str_eq(p.buf.data, "a 0\nb 0.25\nc 1796305864.596\nd +Inf\ne -Inf\nf NaN\n"
	                             "g 1.84467440737096e+19\nh -3\n");
	http_prom_release(&p);
}
END_TEST

START_TEST(test_prom_overflow)
{
	struct http_prom p;
	const char *l[] = {"k", "0123456789"};

	http_prom_init(&p, 20);
	http_prom_sample(&p, "olivares_a", NULL, 0, 1);
	ck_assert_int_eq(p.overflow, 0);
	http_prom_sample(&p, "olivares_b", l, 1, 1);
	ck_assert_int_eq(p.overflow, 1);
	/* stays set: nothing more is appended */
	http_prom_sample(&p, "c", NULL, 0, 1);
	ck_assert_int_eq(p.overflow, 1);
	ck_assert(p.buf.len <= 20);
	http_prom_release(&p);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const tests[] = {test_prom_family_and_samples, test_prom_escape,
	                              test_prom_values, test_prom_overflow, NULL};
	Suite *s = suite_create("prom");

	unit_tcase(s, "prom", tests);
	return s;
}
