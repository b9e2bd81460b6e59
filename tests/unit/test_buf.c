/*
 * Unit tests of model/buf.c (Check): the growable buffer and its cap.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"
#include "model/limits.h"
#include "tests/unit/unit.h"

START_TEST(test_buf_cap)
{
	struct model_buf b;
	char *p;
	size_t len;

	model_buf_init(&b, 10);
	ck_assert_ptr_nonnull(b.data);
	ck_assert_str_eq(b.data, "");
	ck_assert_int_eq(model_buf_add(&b, "0123456789", 10), 0);
	ck_assert_uint_eq(b.len, 10);
	/* one byte more than the cap: refused, buffer unchanged */
	ck_assert_int_eq(model_buf_add(&b, "x", 1), -1);
	ck_assert_int_eq(model_buf_adds(&b, "x"), -1);
	ck_assert_int_eq(model_buf_printf(&b, "%d", 7), -1);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_str_eq(b.data, "0123456789");
	/* adding nothing at the cap is fine */
	ck_assert_int_eq(model_buf_add(&b, "", 0), 0);
	model_buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	ck_assert_int_eq(model_buf_printf(&b, "%s-%d", "ab", 42), 0);
	ck_assert_str_eq(b.data, "ab-42");
	/* printf that would cross the cap leaves the buffer as it was */
	ck_assert_int_eq(model_buf_printf(&b, "%s", "123456"), -1);
	ck_assert_str_eq(b.data, "ab-42");
	ck_assert_int_eq(model_buf_printf(&b, "%s", "12345"), 0);
	ck_assert_str_eq(b.data, "ab-4212345");
	p = model_buf_detach(&b, &len);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(p, "ab-4212345");
	free(p);
	/* detached: empty again, same cap */
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.max, 10);
	ck_assert_str_eq(b.data, "");
	ck_assert_int_eq(model_buf_add(&b, "01234567890", 11), -1);
	model_buf_release(&b);
}
END_TEST

START_TEST(test_buf_growth_and_zero_cap)
{
	struct model_buf b;
	size_t i;

	model_buf_init(&b, MODEL_MAX_INPUT_BYTES);
	for (i = 0; i < MODEL_MAX_INPUT_BYTES; i++)
		ck_assert_int_eq(model_buf_add(&b, "z", 1), 0);
	ck_assert_uint_eq(b.len, MODEL_MAX_INPUT_BYTES);
	ck_assert_int_eq(b.data[b.len], '\0');
	ck_assert_int_eq(model_buf_add(&b, "z", 1), -1);
	ck_assert_int_eq(model_buf_add(&b, "z", SIZE_MAX), -1);
	model_buf_release(&b);

	model_buf_init(&b, 0);
	ck_assert_int_eq(model_buf_add(&b, "", 0), 0);
	ck_assert_int_eq(model_buf_add(&b, "a", 1), -1);
	ck_assert_str_eq(b.data, "");
	model_buf_release(&b);
}
END_TEST

/* An append that fits goes on: the text is there whole. */
START_TEST(test_buf_must_fit_passes)
{
	struct model_buf b;

	model_buf_init(&b, 5);
	model_buf_must_fit(model_buf_adds(&b, "12345"));
	ck_assert_str_eq(b.data, "12345");
	model_buf_release(&b);
}
END_TEST

/* One that crosses the cap never goes on with the text cut short. */
START_TEST(test_buf_must_fit_aborts)
{
	struct model_buf b;

	model_buf_init(&b, 5);
	model_buf_must_fit(model_buf_adds(&b, "123456"));
	ck_abort_msg("model_buf_must_fit returned after a refused append (len %zu)", b.len);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const buf[] = {test_buf_cap, test_buf_growth_and_zero_cap,
	                            test_buf_must_fit_passes, NULL};
	Suite *s;
	TCase *tc;

	s = suite_create("buf");
	tc = unit_tcase(s, "buf", buf);
	tcase_add_test_raise_signal(tc, test_buf_must_fit_aborts, SIGABRT);
	return s;
}
