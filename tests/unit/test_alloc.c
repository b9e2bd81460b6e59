/*
 * Unit tests of model/alloc.c (Check): the allocation policy (abort on
 * out-of-memory or overflow, never NULL).
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "tests/unit/unit.h"

START_TEST(test_alloc_basics)
{
	char *p;
	int *z;
	size_t i;

	p = model_xmalloc(0);
	ck_assert_ptr_nonnull(p);
	free(p);
	p = model_xmemdup("ab\0cd", 5);
	ck_assert_int_eq(memcmp(p, "ab\0cd", 5), 0);
	ck_assert_int_eq(p[5], '\0');
	free(p);
	p = model_xstrdup("olivares");
	ck_assert_str_eq(p, "olivares");
	p = model_xrealloc(p, 100);
	ck_assert_str_eq(p, "olivares");
	free(p);
	z = model_xcalloc(16, sizeof(*z));
	for (i = 0; i < 16; i++)
		ck_assert_int_eq(z[i], 0);
	free(z);
}
END_TEST

/* count * size overflows: the policy is abort, never NULL */
START_TEST(test_alloc_overflow_aborts)
{
	void *p;

	p = model_xcalloc(SIZE_MAX / 2, 4);
	ck_abort_msg("model_xcalloc returned %p instead of aborting", p);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const alloc[] = {test_alloc_basics, NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("alloc");
	tc = unit_tcase(s, "alloc", alloc);
	tcase_add_test_raise_signal(tc, test_alloc_overflow_aborts, SIGABRT);
	return s;
}
