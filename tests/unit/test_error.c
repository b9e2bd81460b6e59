/*
 * Unit tests of model/error.c (Check): error codes, their names and HTTP
 * statuses, the truncation of long fields and messages, and the run
 * layer's reason.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/error.h"
#include "model/text.h"
#include "tests/unit/unit.h"

START_TEST(test_error_codes)
{
	struct model_error e;

	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(model_error_set(&e, MODEL_E_LIMIT, "count", "count must be %d", 5), -1);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	ck_assert_str_eq(e.field, "count");
	ck_assert_str_eq(e.message, "count must be 5");
	ck_assert_int_eq(model_error_set(NULL, MODEL_E_LIMIT, "x", "y"), -1);
	ck_assert_int_eq(model_error_set(&e, MODEL_E_INTERNAL, NULL, "z"), -1);
	ck_assert_str_eq(e.field, "");

	ck_assert_str_eq(model_error_name(MODEL_E_MALFORMED), "malformed");
	ck_assert_str_eq(model_error_name(MODEL_E_LIMIT), "limit_exceeded");
	ck_assert_str_eq(model_error_name(MODEL_E_INVALID), "invalid");
	ck_assert_str_eq(model_error_name(MODEL_E_NOT_FOUND), "not_found");
	ck_assert_str_eq(model_error_name(MODEL_E_TOO_LARGE), "too_large");
	ck_assert_str_eq(model_error_name(MODEL_E_BUSY), "busy");
	ck_assert_str_eq(model_error_name(MODEL_E_STORAGE), "storage_unavailable");
	ck_assert_str_eq(model_error_name(MODEL_E_INTERNAL), "internal");
	ck_assert_str_eq(model_error_name(MODEL_E_QUOTA), "quota_exceeded");
	ck_assert_int_eq(model_error_http_status(MODEL_E_QUOTA), 507);
	ck_assert_int_eq(model_error_http_status(MODEL_E_MALFORMED), 400);
	ck_assert_int_eq(model_error_http_status(MODEL_E_LIMIT), 422);
	ck_assert_int_eq(model_error_http_status(MODEL_E_INVALID), 422);
	ck_assert_int_eq(model_error_http_status(MODEL_E_NOT_FOUND), 404);
	ck_assert_int_eq(model_error_http_status(MODEL_E_TOO_LARGE), 413);
	ck_assert_int_eq(model_error_http_status(MODEL_E_BUSY), 429);
	ck_assert_int_eq(model_error_http_status(MODEL_E_STORAGE), 503);
	ck_assert_int_eq(model_error_http_status(MODEL_E_INTERNAL), 500);
}
END_TEST

/* truncation never leaves half a UTF-8 sequence (the text goes into JSON) */
START_TEST(test_error_truncation_utf8)
{
	struct model_error e;
	char big[1024];
	size_t i;
	size_t off;

	off = 0;
	big[off++] = 'x'; /* shift so that the cut falls inside a sequence */
	for (i = 0; off + 2 < sizeof(big); i++) {
		big[off++] = (char)0xC3;
		big[off++] = (char)0xA9; /* é */
	}
	big[off] = '\0';
	model_error_set(&e, MODEL_E_MALFORMED, big, "%s", big);
	ck_assert_uint_lt(strlen(e.field), sizeof(e.field));
	ck_assert_uint_gt(strlen(e.field), sizeof(e.field) - 4);
	ck_assert(model_text_valid_utf8(e.field, strlen(e.field)));
	ck_assert(model_text_valid_utf8(e.message, strlen(e.message)));
	ck_assert_uint_gt(strlen(e.message), sizeof(e.message) - 4);
	/* the other parity: cut falls between sequences */
	model_error_set(&e, MODEL_E_MALFORMED, big + 1, "%s", big + 1);
	ck_assert(model_text_valid_utf8(e.field, strlen(e.field)));
	ck_assert(model_text_valid_utf8(e.message, strlen(e.message)));
	ck_assert_uint_eq(strlen(e.field) % 2, 0);
}
END_TEST

/* A reason holds what a request error's message would cut: up to 511
 * bytes whole, then cut byte for byte as snprintf cuts. */
START_TEST(test_reason)
{
	struct model_error e;
	struct model_reason r;
	char *text;

	/* 400 bytes: more than a message holds, kept whole */
	text = unit_rep('a', 400);
	ck_assert_int_eq(model_reason_set(&r, "reason: %s", text), -1);
	ck_assert_uint_eq(strlen(r.text), 408);
	ck_assert_int_eq(strncmp(r.text, "reason: ", 8), 0);
	ck_assert_str_eq(r.text + 8, text);
	model_error_set(&e, MODEL_E_INTERNAL, NULL, "reason: %s", text);
	ck_assert_uint_eq(strlen(e.message), sizeof(e.message) - 1);
	free(text);

	/* over the size: the first 511 bytes, even inside a UTF-8 sequence
	 * (whoever records it makes it printable or valid its own way) */
	text = unit_rep('b', 510);
	ck_assert_int_eq(model_reason_set(&r, "%s\xc3\xa9 and more", text), -1);
	ck_assert_uint_eq(strlen(r.text), MODEL_REASON_BYTES - 1);
	ck_assert_int_eq(strncmp(r.text, text, 510), 0);
	ck_assert_int_eq((unsigned char)r.text[510], 0xc3);
	free(text);

	model_reason_set(&r, "%s", "");
	ck_assert_str_eq(r.text, "");
	/* no reason asked for */
	ck_assert_int_eq(model_reason_set(NULL, "x %d", 1), -1);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const error[] = {test_error_codes, test_error_truncation_utf8, test_reason,
	                              NULL};
	Suite *s;

	s = suite_create("error");
	unit_tcase(s, "error", error);
	return s;
}
