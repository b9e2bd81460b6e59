/*
 * Unit tests of model/: every rule at its edge (Check).
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/generate.h"
#include "model/limits.h"
#include "model/scenario.h"
#include "model/text.h"

/* ---- helpers ------------------------------------------------------------ */

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v;

	v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", text, jerr.text);
	return v;
}

/* n copies of c, NUL-terminated; caller frees */
static char *rep(char c, size_t n)
{
	char *s;

	s = model_xmalloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static json_t *jstr_rep(char c, size_t n)
{
	char *s;
	json_t *v;

	s = rep(c, n);
	v = json_stringn(s, n);
	free(s);
	ck_assert_ptr_nonnull(v);
	return v;
}

static size_t keys_len(long count)
{
	size_t n;
	long i;
	char k[32];

	n = 0;
	for (i = 1; i <= count; i++)
		n += (size_t)snprintf(k, sizeof(k), "step-%ld", i);
	return n;
}

/* ---- alloc and buf -------------------------------------------------------- */

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

/* ---- error ------------------------------------------------------------- */

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

/* ---- text: UTF-8 ---------------------------------------------------------- */

static int u8(const char *s)
{
	return model_text_valid_utf8(s, strlen(s));
}

START_TEST(test_utf8_valid)
{
	ck_assert_int_eq(model_text_valid_utf8("", 0), 1);
	ck_assert_int_eq(u8("plain ascii\r\n"), 1);
	ck_assert_int_eq(u8("h\xC3\xA9llo"), 1);             /* é */
	ck_assert_int_eq(u8("\xC2\x80"), 1);                 /* U+0080, smallest 2-byte */
	ck_assert_int_eq(u8("\xE0\xA0\x80"), 1);             /* U+0800, smallest 3-byte */
	ck_assert_int_eq(u8("\xE2\x82\xAC"), 1);             /* € */
	ck_assert_int_eq(u8("\xED\x9F\xBF"), 1);             /* U+D7FF, just below surrogates */
	ck_assert_int_eq(u8("\xEE\x80\x80"), 1);             /* U+E000, just above */
	ck_assert_int_eq(u8("\xEF\xBF\xBF"), 1);             /* U+FFFF */
	ck_assert_int_eq(u8("\xF0\x90\x80\x80"), 1);         /* U+10000 */
	ck_assert_int_eq(u8("\xF0\x9D\x84\x9E"), 1);         /* 𝄞 */
	ck_assert_int_eq(u8("\xF4\x8F\xBF\xBF"), 1);         /* U+10FFFF */
	ck_assert_int_eq(u8("\xE6\x97\xA5\xE6\x9C\xAC"), 1); /* 日本 */
}
END_TEST

START_TEST(test_utf8_invalid)
{
	ck_assert_int_eq(model_text_valid_utf8("a\0b", 3), 0); /* NUL */
	ck_assert_int_eq(model_text_valid_utf8("\0", 1), 0);
	ck_assert_int_eq(u8("\xC0\x80"), 0);                 /* overlong NUL */
	ck_assert_int_eq(u8("\xC1\xBF"), 0);                 /* overlong */
	ck_assert_int_eq(u8("\xE0\x80\x80"), 0);             /* overlong 3-byte */
	ck_assert_int_eq(u8("\xE0\x9F\xBF"), 0);             /* overlong U+07FF */
	ck_assert_int_eq(u8("\xF0\x80\x80\x80"), 0);         /* overlong 4-byte */
	ck_assert_int_eq(u8("\xF0\x8F\xBF\xBF"), 0);         /* overlong U+FFFF */
	ck_assert_int_eq(u8("\xED\xA0\x80"), 0);             /* U+D800 */
	ck_assert_int_eq(u8("\xED\xBF\xBF"), 0);             /* U+DFFF */
	ck_assert_int_eq(u8("\xED\xA0\xBD\xED\xB8\x80"), 0); /* CESU pair */
	ck_assert_int_eq(u8("\xF4\x90\x80\x80"), 0);         /* U+110000 */
	ck_assert_int_eq(u8("\xF5\x80\x80\x80"), 0);
	ck_assert_int_eq(u8("\xFF"), 0);
	ck_assert_int_eq(u8("\xFE"), 0);
	ck_assert_int_eq(u8("\x80"), 0); /* lone continuation */
	ck_assert_int_eq(u8("a\xBF"), 0);
	ck_assert_int_eq(u8("\xC3"), 0); /* truncated */
	ck_assert_int_eq(u8("\xE2\x82"), 0);
	ck_assert_int_eq(u8("\xF0\x9F\x98"), 0);
	ck_assert_int_eq(u8("\xE2\x82x"), 0); /* bad continuation */
	ck_assert_int_eq(u8("\xC3\xC3\xA9"), 0);
	/* truncation is measured against n, not the NUL */
	ck_assert_int_eq(model_text_valid_utf8("\xE2\x82\xAC", 2), 0);
	ck_assert_int_eq(model_text_valid_utf8("\xE2\x82\xAC", 3), 1);
}
END_TEST

START_TEST(test_hex_encode)
{
	const unsigned char in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char out[2 * sizeof in + 1];

	memset(out, '#', sizeof out);
	model_hex_encode(in, sizeof in, out);
	ck_assert_str_eq(out, "00017f80abff");
	model_hex_encode(in, 0, out);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_id_and_json_worst)
{
	ck_assert_int_eq(model_id_valid("0123456789abcdef0123456789abcdef"), 1);
	ck_assert_int_eq(model_id_valid("0123456789abcdef0123456789abcde"), 0);
	ck_assert_int_eq(model_id_valid("0123456789abcdef0123456789abcdef0"), 0);
	ck_assert_int_eq(model_id_valid("0123456789ABCDEF0123456789abcdef"), 0);
	ck_assert_int_eq(model_id_valid("0123456789abcdeg0123456789abcdef"), 0);
	ck_assert_int_eq(model_id_valid("../../etc/passwd"), 0);
	ck_assert_int_eq(model_id_valid(""), 0);
	ck_assert_int_eq(model_id_valid(NULL), 0);
	ck_assert_uint_eq(model_text_json_worst(0), 2);
	ck_assert_uint_eq(model_text_json_worst(128), 770);
	ck_assert_uint_eq(model_text_json_worst(1024), 6146);
	ck_assert_uint_eq(model_text_json_worst(200), 1202);
}
END_TEST

/* ---- text: credentials ---------------------------------------------------- */

static const char *cred_kind(const char *s)
{
	const char *kind;

	kind = NULL;
	if (!model_text_find_credential(s, strlen(s), &kind))
		return NULL;
	ck_assert_ptr_nonnull(kind);
	return kind;
}

START_TEST(test_credential_formats)
{
	ck_assert_str_eq(cred_kind("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n"),
	                 "private key block");
	ck_assert_str_eq(cred_kind("x\n-----BEGIN PRIVATE KEY-----\nMII"), "private key block");
	ck_assert_str_eq(cred_kind("-----BEGIN OPENSSH PRIVATE KEY-----"), "private key block");
	ck_assert_str_eq(cred_kind("-----BEGIN EC PRIVATE KEY-----"), "private key block");
	ck_assert_str_eq(cred_kind("-----BEGIN ENCRYPTED PRIVATE KEY-----"), "private key block");
	ck_assert_str_eq(cred_kind("-----BEGIN PGP PRIVATE KEY BLOCK-----"), "private key block");
	ck_assert_str_eq(cred_kind("AKIAIOSFODNN7EXAMPLE"), "AWS access key id");
	ck_assert_str_eq(cred_kind("key=ASIAY34FZKBOKMUTVV7A;"), "AWS access key id");
	ck_assert_str_eq(cred_kind("token ghp_0123456789abcdefghijABCDEFGHIJklmnop"),
	                 "GitHub token");
	ck_assert_str_eq(cred_kind("gho_0123456789abcdefghijABCDEFGHIJklmnop"), "GitHub token");
	ck_assert_str_eq(cred_kind("ghs_0123456789abcdefghijABCDEFGHIJklmnop"), "GitHub token");
	ck_assert_str_eq(cred_kind("github_pat_11ABCDEFG0123456789abcd_efghijklmnop"),
	                 "GitHub token");
	ck_assert_str_eq(cred_kind("xoxb-123456789012-1234567890123-AbCdEfGh"), "Slack token");
	ck_assert_str_eq(cred_kind("xoxp-1234567890"), "Slack token");
	ck_assert_str_eq(cred_kind("AIzaSyA1234567890abcdefghijklmnopqrstuv"), "Google API key");
	ck_assert_str_eq(cred_kind("Authorization: sk-proj-AbCdEf0123456789xyzXYZ"),
	                 "API secret key");
	ck_assert_str_eq(cred_kind("sk-ant-api03-abcdefghij0123456789"), "API secret key");
	ck_assert_str_eq(cred_kind("sk-0123456789abcdefghij"), "API secret key");
	ck_assert_str_eq(cred_kind("sk_live_4eC39HqLyjWDarjtT1zdp7dc"), "Stripe live key");
	ck_assert_str_eq(cred_kind("rk_live_4eC39HqLyjWDarjtT1zdp7dc"), "Stripe live key");
	ck_assert_str_eq(
	    cred_kind(
	        "Bearer olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
	    "olivares API token");
}
END_TEST

/* this service's tokens in any case: an upper-cased copy is the same secret */
START_TEST(test_credential_olivares_any_case)
{
	ck_assert_str_eq(
	    cred_kind("OLV_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"),
	    "olivares API token");
	ck_assert_str_eq(
	    cred_kind("olv_0123456789ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef"),
	    "olivares API token");
	ck_assert_str_eq(
	    cred_kind("token=OLV_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
	    "olivares API token");
	/* 63 hex, a non-hex byte inside, a longer word before: not tokens */
	ck_assert_ptr_null(
	    cred_kind("OLV_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDE"));
	ck_assert_ptr_null(
	    cred_kind("OLV_0123456789ABCDEF0123456789ABCDEFG123456789ABCDEF0123456789ABCDEF"));
	ck_assert_ptr_null(
	    cred_kind("xOLV_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"));
}
END_TEST

START_TEST(test_credential_aws_secret)
{
	const char *const k = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"; /* 40 */
	char text[256];

	ck_assert_uint_eq(strlen(k), 40);
	snprintf(text, sizeof(text), "aws_secret_access_key=%s", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "[default]\naws_secret_access_key = %s\n", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "aws_secret_access_key: %s", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "{\"aws_secret_access_key\": \"%s\"}", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "export AWS_SECRET_ACCESS_KEY=%s", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "MY_AWS_SECRET_ACCESS_KEY='%s'", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	/* a bare value right after an aws_secret key name */
	snprintf(text, sizeof(text), "aws_secret_key %s", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");
	snprintf(text, sizeof(text), "aws_secret\t%s", k);
	ck_assert_str_eq(cred_kind(text), "AWS secret access key");

	/* not 40 characters, a placeholder, no key name, no separator */
	snprintf(text, sizeof(text), "aws_secret_access_key=%.39s", k);
	ck_assert_ptr_null(cred_kind(text));
	snprintf(text, sizeof(text), "aws_secret_access_key=%sX", k);
	ck_assert_ptr_null(cred_kind(text));
	ck_assert_ptr_null(cred_kind("aws_secret_access_key=<your secret key>"));
	ck_assert_ptr_null(cred_kind("aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}"));
	ck_assert_ptr_null(cred_kind("set aws_secret_access_key in ~/.aws/credentials"));
	ck_assert_ptr_null(cred_kind("aws_secret_access_key"));
	ck_assert_ptr_null(cred_kind(k));
	snprintf(text, sizeof(text), "aws_secret_access_key=          %s", k);
	ck_assert_ptr_null(cred_kind(text)); /* 10 separator bytes: too far */
	snprintf(text, sizeof(text), "notaws_secret_key=%s", k);
	ck_assert_ptr_null(cred_kind(text));
}
END_TEST

START_TEST(test_credential_jwt)
{
	static const char *const jwt =
	    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
	    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
	    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
	char text[512];

	ck_assert_str_eq(cred_kind(jwt), "JSON Web Token");
	snprintf(text, sizeof(text), "the cookie was session=%s; path=/", jwt);
	ck_assert_str_eq(cred_kind(text), "JSON Web Token");
	snprintf(text, sizeof(text), "Authorization: Bearer %s", jwt);
	ck_assert_str_eq(cred_kind(text), "JSON Web Token");
	ck_assert_str_eq(cred_kind("eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.MEUCIQDx-4_b9sVNb2q8"),
	                 "JSON Web Token");

	ck_assert_ptr_null(cred_kind("eyJ"));
	ck_assert_ptr_null(cred_kind("a JWT starts with eyJ, the base64 of {\""));
	ck_assert_ptr_null(cred_kind("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"));
	ck_assert_ptr_null(
	    cred_kind("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"));
	/* no signature, a short signature, a short payload, a payload not "eyJ" */
	ck_assert_ptr_null(cred_kind("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0."));
	ck_assert_ptr_null(cred_kind("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc"));
	ck_assert_ptr_null(cred_kind("eyJhbGciOiJIUzI1NiJ9.eyJhIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P"));
	ck_assert_ptr_null(
	    cred_kind("eyJhbGciOiJIUzI1NiJ9.abcdefghijklmn.SflKxwRJSMeKKF2QT4fwpMeJf36P"));
	ck_assert_ptr_null(cred_kind("keyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
	                             "SflKxwRJSMeKKF2QT4fwpMeJf36P"));
}
END_TEST

START_TEST(test_credential_bearer)
{
	ck_assert_str_eq(cred_kind("Authorization: Bearer 2YotnFZFEjr1zCsicMWpAA"), "bearer token");
	ck_assert_str_eq(cred_kind("curl -H 'Authorization: Bearer mF_9.B5f-4.1JqM~+/xyz0==' -H x"),
	                 "bearer token");
	ck_assert_str_eq(cred_kind("bearer 0123456789abcdef0123456789abcdef01234567"),
	                 "bearer token");
	ck_assert_str_eq(cred_kind("BEARER\tya29.a0AfH6SMBx3kVabcdefghijklmnop"), "bearer token");
	ck_assert_str_eq(cred_kind("Bearer abcdefghijklmnopqrstuvwXYZ=="), "bearer token");
	/* a format of its own inside wins */
	ck_assert_str_eq(cred_kind("Bearer ghp_0123456789abcdefghijABCDEFGHIJklmnop"),
	                 "GitHub token");

	ck_assert_ptr_null(cred_kind("Bearer"));
	ck_assert_ptr_null(cred_kind("the Bearer scheme of RFC 6750"));
	ck_assert_ptr_null(cred_kind("bearer tokens are short-lived by design"));
	ck_assert_ptr_null(cred_kind("Authorization: Bearer <token>"));
	ck_assert_ptr_null(cred_kind("Authorization: Bearer $OLIVARES_TOKEN"));
	ck_assert_ptr_null(cred_kind("Authorization: Bearer YOUR_ACCESS_TOKEN_HERE"));
	ck_assert_ptr_null(cred_kind("Bearer mF_9.B5f-4.1JqM")); /* RFC 6750's: 15 < 20 */
	ck_assert_ptr_null(
	    cred_kind("bearer internationalization-of-strings")); /* one case, no digit */
	ck_assert_ptr_null(
	    cred_kind("Bearer\n2YotnFZFEjr1zCsicMWpAA")); /* blanks only, no newline */
	ck_assert_ptr_null(cred_kind("cardbearer 2YotnFZFEjr1zCsicMWpAA"));
}
END_TEST

START_TEST(test_credential_false_positives)
{
	static const char *const clean[] = {
	    "task-list",
	    "the task-list-for-the-quarterly-review-2024 is ready",
	    "risk-assessment-of-2024-Q3-results",
	    "sk-learn-tutorial-for-beginners-and-experts",
	    "sk-short1",
	    "AKIA",
	    "AKIA alone is a prefix",
	    "AKIAIOSFODNN7EXAMPL",   /* 19 characters */
	    "AKIAIOSFODNN7EXAMPLEX", /* 21 characters */
	    "XAKIAIOSFODNN7EXAMPLE", /* inside a longer word */
	    "AKIAiosfodnn7example",
	    "alice@example.com",
	    "agent:user1@example.test",
	    "agent-sample-1",
	    "-----BEGIN PUBLIC KEY-----",
	    "-----BEGIN CERTIFICATE-----",
	    "BEGIN PRIVATE KEY",
	    "-----BEGIN private key-----",
	    "our private key block policy",
	    "ghp_short",
	    "ghx_0123456789abcdefghijABCDEFGHIJklmnop",
	    "github_pat_",
	    "xoxb-",
	    "xoxb-abcdefghijkl",
	    "AIzaShort",
	    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
	    "sk_live_",
	    "olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
	    "Bearer",
	    "Authorization: Bearer",
	    "the bearer of this letter",
	    "eyJ",
	    "eyJhbGciOiJIUzI1NiJ9",
	    "aws_secret_access_key",
	    "AWS_SECRET_ACCESS_KEY=",
	    "alice.bearer@example.com",
	    "bearer.of.news@example.org",
	    "da39a3ee5e6b4b0d3255bfef95601890afd80709", /* a SHA-1 alone: 40 chars */
	    "{{subject_kind}}:user{{index}}@example.test",
	    "first synthetic account",
	    "",
	};
	size_t i;
	const char *kind;

	for (i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		kind = "unset";
		ck_assert_msg(!model_text_find_credential(clean[i], strlen(clean[i]), &kind),
		              "flagged as %s: %s", kind, clean[i]);
		ck_assert_str_eq(kind, "unset");
	}
}
END_TEST

/* the scan honours n: a key past n is not seen, a key cut by n is not one */
START_TEST(test_credential_length_bound)
{
	const char *s = "abc AKIAIOSFODNN7EXAMPLE";
	const char *kind;

	ck_assert_int_eq(model_text_find_credential(s, 4, &kind), 0);
	ck_assert_int_eq(model_text_find_credential(s, strlen(s) - 1, &kind), 0);
	ck_assert_int_eq(model_text_find_credential(s, strlen(s), &kind), 1);
	ck_assert_int_eq(model_text_find_credential(s, strlen(s), NULL), 1);
}
END_TEST

/* ---- generate: request parsing ------------------------------------------- */

static enum model_err gen_parse_code(json_t *body, const char *field)
{
	struct model_gen_request r;
	struct model_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = model_gen_request_parse(body, &r, &e);
	json_decref(body);
	if (rc == 0) {
		model_gen_request_free(&r);
		return MODEL_OK;
	}
	ck_assert_int_eq(rc, -1);
	if (field)
		ck_assert_str_eq(e.field, field);
	ck_assert(e.message[0] != '\0');
	return e.code;
}

START_TEST(test_gen_defaults)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;
	json_t *s;
	size_t i;
	char want[64];

	body = parse("{}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_str_eq(r.subject, "agent");
	ck_assert_uint_eq(r.subject_len, 5);
	ck_assert_int_eq(r.count, 10);
	ck_assert_str_eq(r.tmpl, "{{subject_kind}}-sample-{{index}}");
	ck_assert_uint_eq(r.tmpl_len, strlen("{{subject_kind}}-sample-{{index}}"));
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_array_size(samples), 10);
	json_array_foreach(samples, i, s)
	{
		ck_assert_uint_eq(json_object_size(s), 2);
		snprintf(want, sizeof(want), "step-%zu", i + 1);
		ck_assert_str_eq(json_string_value(json_object_get(s, "key")), want);
		snprintf(want, sizeof(want), "agent-sample-%zu", i + 1);
		ck_assert_str_eq(json_string_value(json_object_get(s, "input")), want);
	}
	json_decref(samples);
	model_gen_request_free(&r);
}
END_TEST

START_TEST(test_gen_count_bounds)
{
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":0}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":1}"), NULL), MODEL_OK);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":100}"), NULL), MODEL_OK);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":101}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":-1}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":4294967297}"), "count"), MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":-9223372036854775808}"), "count"),
	                 MODEL_E_LIMIT);
}
END_TEST

START_TEST(test_gen_count_message)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;

	body = parse("{\"count\":101}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), -1);
	json_decref(body);
	ck_assert_str_eq(e.message, "count must be between 1 and 100");
	ck_assert_int_eq(model_error_http_status(e.code), 422);
}
END_TEST

START_TEST(test_gen_types)
{
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":2.0}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":\"2\"}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":true}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":null}"), "count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"subject_kind\":7}"), "subject_kind"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"subject_kind\":null}"), "subject_kind"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"seed\":[\"a\"]}"), "seed"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"seed\":{}}"), "seed"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("[]"), ""), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(json_string("x"), ""), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(NULL, ""), MODEL_E_MALFORMED);
	/* unknown fields, named */
	ck_assert_int_eq(gen_parse_code(parse("{\"foo\":1}"), "foo"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"Count\":1}"), "Count"), MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"template\":\"x\"}"), "template"),
	                 MODEL_E_MALFORMED);
	/* a structural error wins over a bound, whatever the order */
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":0,\"foo\":1}"), "foo"),
	                 MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(parse("{\"count\":0,\"seed\":1}"), "seed"),
	                 MODEL_E_MALFORMED);
	/* defense in depth: a string jansson did not validate */
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "seed", json_stringn_nocheck("a\0b", 3)), "seed"),
	    MODEL_E_MALFORMED);
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "subject_kind",
	                                          json_stringn_nocheck("\xED\xA0\x80", 3)),
	                                "subject_kind"),
	                 MODEL_E_MALFORMED);
}
END_TEST

START_TEST(test_gen_subject_template_bounds)
{
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "subject_kind", jstr_rep('s', 200)), NULL), MODEL_OK);
	ck_assert_int_eq(
	    gen_parse_code(json_pack("{s:o}", "subject_kind", jstr_rep('s', 201)), "subject_kind"),
	    MODEL_E_LIMIT);
	ck_assert_int_eq(gen_parse_code(parse("{\"subject_kind\":\"\"}"), "subject_kind"),
	                 MODEL_E_LIMIT);
	/* bytes, not characters: 100 x "é" is 200 bytes, 101 is 202 */
	{
		char s[203];
		size_t i;

		for (i = 0; i < 101; i++) {
			s[2 * i] = (char)0xC3;
			s[2 * i + 1] = (char)0xA9;
		}
		ck_assert_int_eq(
		    gen_parse_code(json_pack("{s:s%}", "subject_kind", s, (size_t)200), NULL),
		    MODEL_OK);
		ck_assert_int_eq(gen_parse_code(json_pack("{s:s%}", "subject_kind", s, (size_t)202),
		                                "subject_kind"),
		                 MODEL_E_LIMIT);
	}
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "seed", jstr_rep('t', 8192)), NULL),
	                 MODEL_OK);
	ck_assert_int_eq(gen_parse_code(json_pack("{s:o}", "seed", jstr_rep('t', 8193)), "seed"),
	                 MODEL_E_LIMIT);
	/* an empty template is allowed: it yields empty inputs */
	ck_assert_int_eq(gen_parse_code(parse("{\"seed\":\"\"}"), NULL), MODEL_OK);
}
END_TEST

/* ---- generate: expansion -------------------------------------------------- */

/* expand tmpl with subject for index; returns malloc'd text */
static char *expand(const char *tmpl, const char *subject, long index)
{
	struct model_error e;
	char *out;
	size_t len;

	out = NULL;
	ck_assert_int_eq(
	    model_generate_one(tmpl, strlen(tmpl), subject, strlen(subject), index, &out, &len, &e),
	    0);
	ck_assert_uint_eq(len, strlen(out));
	return out;
}

#define ck_expand(tmpl, subject, index, want)                                                      \
	do {                                                                                       \
		char *got_ = expand((tmpl), (subject), (index));                                   \
		ck_assert_str_eq(got_, (want));                                                    \
		free(got_);                                                                        \
	} while (0)

START_TEST(test_gen_page_example)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body = parse("{\"subject_kind\":\"agent\",\"count\":2,"
	             "\"seed\":\"{{subject_kind}}:user{{index}}@example.test\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	ck_assert_uint_eq(json_array_size(samples), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "key")),
	                 "step-1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "input")),
	                 "agent:user1@example.test");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 1), "key")),
	                 "step-2");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 1), "input")),
	                 "agent:user2@example.test");
	json_decref(samples);
}
END_TEST

START_TEST(test_gen_expansion_rules)
{
	/* substituted text is never scanned again */
	ck_expand("{{subject_kind}}-{{index}}", "{{index}}", 1, "{{index}}-1");
	ck_expand("{{subject_kind}}", "{{subject_kind}}", 3, "{{subject_kind}}");
	ck_expand("{{subject_kind}}index}}", "{{", 1, "{{index}}");
	/* exact and case-sensitive */
	ck_expand("{{INDEX}} {{Index}} {{ index }} {{index }}", "a", 1,
	          "{{INDEX}} {{Index}} {{ index }} {{index }}");
	ck_expand("{{SUBJECT_KIND}} {{subject}} {{subject-kind}}", "a", 1,
	          "{{SUBJECT_KIND}} {{subject}} {{subject-kind}}");
	ck_expand("{{name}} {{}} {{", "a", 1, "{{name}} {{}} {{");
	/* stray braces around placeholders */
	ck_expand("{{{index}}}", "a", 1, "{1}");
	ck_expand("{{{{index}}}}", "a", 7, "{{7}}");
	ck_expand("{{index}", "a", 1, "{{index}");
	ck_expand("{index}}", "a", 1, "{index}}");
	ck_expand("}}{{", "a", 1, "}}{{");
	ck_expand("{", "a", 1, "{");
	ck_expand("{{index}}{{index}}", "a", 42, "4242");
	ck_expand("x{{subject_kind}}{{subject_kind}}y", "ab", 1, "xababy");
	/* CR, LF, a final newline and UTF-8 are kept byte for byte */
	ck_expand("a\r\n{{index}}\n", "s", 1, "a\r\n1\n");
	ck_expand("line\n", "s", 1, "line\n");
	ck_expand("\xC3\xA9{{index}}\xE2\x86\x92", "s", 9,
	          "\xC3\xA9"
	          "9\xE2\x86\x92");
	ck_expand("{{subject_kind}}", "\xE6\x97\xA5", 1, "\xE6\x97\xA5");
	ck_expand("", "s", 1, "");
	ck_expand("{{index}}", "s", 100, "100");
}
END_TEST

START_TEST(test_gen_final_newline_request)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body = parse("{\"count\":1,\"seed\":\"{{subject_kind}}:user{{index}}@example.test\\n\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(samples, 0), "input")),
	                 "agent:user1@example.test\n");
	json_decref(samples);
}
END_TEST

/*
 * Generated input at the edge: subject of 200 bytes, template of
 * 7991 'a' + "{{subject_kind}}{{index}}" (8016 bytes, under the template
 * limit). Index 1..9 gives 7991 + 200 + 1 = 8192 bytes; index 10 gives 8193.
 */
static void edge_request(struct model_gen_request *r, long count)
{
	char *a;

	memset(r, 0, sizeof(*r));
	a = rep('a', 7991);
	r->tmpl_len = 7991 + strlen("{{subject_kind}}{{index}}");
	r->tmpl = model_xmalloc(r->tmpl_len + 1);
	snprintf(r->tmpl, r->tmpl_len + 1, "%s{{subject_kind}}{{index}}", a);
	free(a);
	r->subject = rep('S', 200);
	r->subject_len = 200;
	r->count = count;
}

START_TEST(test_gen_input_edge)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *samples;
	json_t *s;
	size_t i;
	char *out;
	size_t len;

	edge_request(&r, 9);
	ck_assert_uint_le(r.tmpl_len, MODEL_MAX_TEMPLATE_BYTES);
	samples = NULL;
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_array_size(samples), 9);
	json_array_foreach(samples, i, s)
	{
		ck_assert_uint_eq(json_string_length(json_object_get(s, "input")), 8192);
	}
	json_decref(samples);

	/* index 10 is 8193 bytes: the whole request fails, no partial batch */
	r.count = 10;
	samples = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(model_generate(&r, &samples, &e), -1);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	ck_assert_int_eq(model_error_http_status(e.code), 422);

	/* model_generate_one directly: 8192 ok, 8193 refused, nothing allocated */
	out = NULL;
	ck_assert_int_eq(
	    model_generate_one(r.tmpl, r.tmpl_len, r.subject, r.subject_len, 9, &out, &len, &e), 0);
	ck_assert_uint_eq(len, 8192);
	ck_assert_int_eq(out[8191], '9');
	free(out);
	out = NULL;
	len = 12345;
	ck_assert_int_eq(
	    model_generate_one(r.tmpl, r.tmpl_len, r.subject, r.subject_len, 10, &out, &len, &e),
	    -1);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 12345);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	model_gen_request_free(&r);
}
END_TEST

/* a template of exactly 8192 plain bytes yields inputs of exactly 8192 */
START_TEST(test_gen_template_max_plain)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;

	body = json_pack("{s:o,s:i}", "seed", jstr_rep('p', 8192), "count", 3);
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	ck_assert_uint_eq(json_string_length(json_object_get(json_array_get(samples, 2), "input")),
	                  8192);
	json_decref(samples);
	model_gen_request_free(&r);
}
END_TEST

/* ---- generate: the 1 MiB envelope ----------------------------------------- */

START_TEST(test_gen_envelope_reserve)
{
	/* 60 bytes of keys and punctuation + 770 + 6146 + 1202 */
	ck_assert_uint_eq(strlen("{\"name\":,\"description\":,\"subject_kind\":,\"steps\":,"
	                         "\"mocks\":[]}"),
	                  60);
	ck_assert_uint_eq(model_scenario_envelope_reserve(), 8178);
}
END_TEST

static int gen_with_template(const char *tmpl, size_t tmpl_len, long count, json_t **samples,
                             struct model_error *e)
{
	struct model_gen_request r;

	memset(&r, 0, sizeof(r));
	r.tmpl = model_xmemdup(tmpl, tmpl_len);
	r.tmpl_len = tmpl_len;
	r.subject = model_xstrdup("agent");
	r.subject_len = 5;
	r.count = count;
	*samples = NULL;
	memset(e, 0, sizeof(*e));
	if (model_generate(&r, samples, e)) {
		model_gen_request_free(&r);
		return -1;
	}
	model_gen_request_free(&r);
	return 0;
}

START_TEST(test_gen_envelope_plain_passes)
{
	struct model_error e;
	json_t *samples;
	char *t;

	/* 100 inputs of 8192 ASCII bytes: 822093 bytes encoded, fits */
	t = rep('a', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), 0);
	free(t);
	ck_assert_uint_eq(json_array_size(samples), 100);
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT),
	                  2 + 99 + 100 * (8 + 11 + 2 + 8192) + keys_len(100));
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT), 822093);
	json_decref(samples);
}
END_TEST

START_TEST(test_gen_envelope_escaping_fails)
{
	struct model_error e;
	json_t *samples;
	char *t;

	/* each input is within 8192 bytes but '"' and '\n' escape to 2 bytes:
	 * ~1.6 MiB encoded, the whole request fails */
	t = rep('"', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), -1);
	free(t);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	t = rep('\n', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 100, &samples, &e), -1);
	free(t);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	/* the same escaped inputs fit when there are fewer of them */
	t = rep('"', 8192);
	ck_assert_int_eq(gen_with_template(t, 8192, 60, &samples, &e), 0);
	free(t);
	ck_assert_uint_eq(json_array_size(samples), 60);
	json_decref(samples);
}
END_TEST

/*
 * Hit the envelope limit to the byte. The batch is count inputs of
 * m x "{{index}}" then L 'a' then q '"' ('"' encodes as 2 bytes); its
 * compact size is
 *   2 + (count-1) + 21*count + keys + m*digits + count*(L + 2q)
 * where 21 = len('{"key":"') + len('","input":"') + len('"}') and
 * digits = keys - 5*count (the digits of every index). Search count and m
 * so that target is reached exactly with a template of <= 8192 bytes
 * (then every input is <= 8192 bytes too: each index has <= 3 digits).
 */
static int envelope_template(size_t target, char **tmpl, size_t *tmpl_len, long *count)
{
	long c;
	long m;
	size_t base;
	size_t keys;
	size_t digits;
	size_t pmax;
	size_t enc;
	size_t p;
	size_t q;
	size_t off;
	long j;

	for (c = 100; c >= 40; c--) {
		keys = keys_len(c);
		digits = keys - 5 * (size_t)c;
		for (m = 1; m <= 9; m++) {
			base = 2 + (size_t)(c - 1) + 21 * (size_t)c + keys + (size_t)m * digits;
			if (target < base || (target - base) % (size_t)c)
				continue;
			enc = (target - base) / (size_t)c;               /* L + 2q per input */
			pmax = MODEL_MAX_TEMPLATE_BYTES - 9 * (size_t)m; /* L + q */
			p = enc < pmax ? enc : pmax;
			if (enc > 2 * p)
				continue;
			q = enc - p;
			*tmpl_len = (size_t)m * 9 + p;
			*tmpl = model_xmalloc(*tmpl_len + 1);
			off = 0;
			for (j = 0; j < m; j++) {
				memcpy(*tmpl + off, "{{index}}", 9);
				off += 9;
			}
			memset(*tmpl + off, 'a', p - q);
			memset(*tmpl + off + p - q, '"', q);
			(*tmpl)[*tmpl_len] = '\0';
			*count = c;
			return 0;
		}
	}
	return -1;
}

START_TEST(test_gen_envelope_exact_edge)
{
	struct model_error e;
	json_t *samples;
	char *t;
	size_t tlen;
	long count;
	size_t room;
	char want[64];

	room = MODEL_MAX_REQUEST_BYTES - model_scenario_envelope_reserve();
	ck_assert_uint_eq(room, 1040398);

	ck_assert_int_eq(envelope_template(room, &t, &tlen, &count), 0);
	ck_assert_uint_le(tlen, MODEL_MAX_TEMPLATE_BYTES);
	ck_assert_int_eq(gen_with_template(t, tlen, count, &samples, &e), 0);
	ck_assert_uint_eq(json_dumpb(samples, NULL, 0, JSON_COMPACT), room);
	json_decref(samples);
	free(t);

	ck_assert_int_eq(envelope_template(room + 1, &t, &tlen, &count), 0);
	ck_assert_uint_le(tlen, MODEL_MAX_TEMPLATE_BYTES);
	ck_assert_int_eq(gen_with_template(t, tlen, count, &samples, &e), -1);
	ck_assert_ptr_null(samples);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	snprintf(want, sizeof(want), "(%zu bytes)", room + 1);
	ck_assert_msg(strstr(e.message, want) != NULL, "message: %s", e.message);
	free(t);
}
END_TEST

/* ---- scenario check ------------------------------------------------------- */

static void scn_expect(json_t *body, int is_update, enum model_err code, const char *field)
{
	struct model_error e;
	json_t *norm;
	char *dump;

	norm = NULL;
	memset(&e, 0, sizeof(e));
	dump = body ? json_dumps(body, JSON_COMPACT) : NULL;
	ck_assert_msg(model_scenario_check(body, is_update, &norm, &e) == -1, "accepted: %.200s",
	              dump ? dump : "(null)");
	ck_assert_ptr_null(norm);
	ck_assert_msg(e.code == code, "code %s, want %s (%s) for %.200s", model_error_name(e.code),
	              model_error_name(code), e.message, dump ? dump : "(null)");
	ck_assert_msg(strcmp(e.field, field) == 0, "field '%s', want '%s' (%s)", e.field, field,
	              e.message);
	ck_assert(e.message[0] != '\0');
	free(dump);
	json_decref(body);
}

static json_t *scn_ok(json_t *body, int is_update)
{
	struct model_error e;
	json_t *norm;

	norm = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_msg(model_scenario_check(body, is_update, &norm, &e) == 0, "refused: %s %s: %s",
	              model_error_name(e.code), e.field, e.message);
	json_decref(body);
	ck_assert_ptr_nonnull(norm);
	return norm;
}

#define S(text) parse(text)

START_TEST(test_scn_minimal_defaults)
{
	json_t *n;
	char *dump;

	n = scn_ok(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"key\":\"k\",\"input\":\"\"},"
	             "{\"input\":\"c\\n\"}]}"),
	           0);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"name\":\"n\",\"description\":\"\",\"subject_kind\":\"agent\","
	                       "\"steps\":[{\"key\":\"step-1\",\"input\":\"a\"},"
	                       "{\"key\":\"k\",\"input\":\"\"},"
	                       "{\"key\":\"step-3\",\"input\":\"c\\n\"}],\"mocks\":[]}");
	free(dump);
	json_decref(n);
}
END_TEST

START_TEST(test_scn_mocks_normalized)
{
	json_t *n;
	char *dump;

	n = scn_ok(S("{\"name\":\"generated\",\"description\":\"d\",\"subject_kind\":\"bot\","
	             "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"}],"
	             "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	             "\"response\":\"first synthetic account\"},"
	             "{\"variant\":null,\"resource\":\"r\",\"response\":\"\"},"
	             "{\"resource\":\"r\",\"response\":\"x\",\"variant\":\"candidate\"}]}"),
	           0);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump,
	                 "{\"name\":\"generated\",\"description\":\"d\",\"subject_kind\":\"bot\","
	                 "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"}],"
	                 "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	                 "\"response\":\"first synthetic account\"},"
	                 "{\"resource\":\"r\",\"response\":\"\"},"
	                 "{\"resource\":\"r\",\"response\":\"x\",\"variant\":\"candidate\"}]}");
	free(dump);
	json_decref(n);
}
END_TEST

START_TEST(test_scn_required_and_types)
{
	scn_expect(S("[]"), 0, MODEL_E_MALFORMED, "");
	scn_expect(NULL, 0, MODEL_E_MALFORMED, "");
	scn_expect(S("{\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED, "name");
	scn_expect(S("{\"name\":\"n\"}"), 0, MODEL_E_MALFORMED, "steps");
	scn_expect(S("{\"name\":1,\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED, "name");
	scn_expect(S("{\"name\":null,\"steps\":[{\"input\":\"a\"}]}"), 0, MODEL_E_MALFORMED,
	           "name");
	scn_expect(S("{\"name\":\"n\",\"description\":false,\"steps\":[{\"input\":\"a\"}]}"), 0,
	           MODEL_E_MALFORMED, "description");
	scn_expect(S("{\"name\":\"n\",\"subject_kind\":[],\"steps\":[{\"input\":\"a\"}]}"), 0,
	           MODEL_E_MALFORMED, "subject_kind");
	scn_expect(S("{\"name\":\"n\",\"steps\":{}}"), 0, MODEL_E_MALFORMED, "steps");
	scn_expect(S("{\"name\":\"n\",\"steps\":[\"a\"]}"), 0, MODEL_E_MALFORMED, "steps[0]");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"key\":\"b\"}]}"), 0,
	           MODEL_E_MALFORMED, "steps[1].input");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":5}]}"), 0, MODEL_E_MALFORMED,
	           "steps[0].input");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\",\"key\":null}]}"), 0,
	           MODEL_E_MALFORMED, "steps[0].key");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":{}}"), 0,
	           MODEL_E_MALFORMED, "mocks");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":null}"), 0,
	           MODEL_E_MALFORMED, "mocks");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":[1]}"), 0,
	           MODEL_E_MALFORMED, "mocks[0]");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"response\":\"x\"}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].resource");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"resource\":\"x\"}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].response");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],"
	             "\"mocks\":[{\"resource\":\"x\",\"response\":\"y\",\"variant\":3}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].variant");
	/* defense in depth: strings that bypassed the decoder */
	scn_expect(json_pack("{s:s,s:[{s:o}]}", "name", "n", "steps", "input",
	                     json_stringn_nocheck("a\0b", 3)),
	           0, MODEL_E_MALFORMED, "steps[0].input");
	scn_expect(json_pack("{s:o,s:[{s:s}]}", "name", json_stringn_nocheck("\xC0\x80", 2),
	                     "steps", "input", "a"),
	           0, MODEL_E_MALFORMED, "name");
}
END_TEST

START_TEST(test_scn_unknown_fields)
{
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"foo\":1}"), 0,
	           MODEL_E_MALFORMED, "foo");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"},{\"input\":\"b\"},"
	             "{\"input\":\"c\",\"foo\":1}]}"),
	           0, MODEL_E_MALFORMED, "steps[2].foo");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"x\"},"
	             "{\"resource\":\"s\",\"response\":\"y\",\"bar\":null}]}"),
	           0, MODEL_E_MALFORMED, "mocks[1].bar");
	scn_expect(S("{\"id\":\"0123\",\"name\":\"n\"}"), 1, MODEL_E_MALFORMED, "id");
	scn_expect(S("{\"version\":2}"), 1, MODEL_E_MALFORMED, "version");
	/* malformed wins over earlier refusals */
	scn_expect(S("{\"name\":\"\",\"steps\":[{\"input\":\"a\",\"x\":1}]}"), 0, MODEL_E_MALFORMED,
	           "steps[0].x");
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"a\",\"input\":\"a\"},"
	             "{\"key\":\"a\",\"input\":\"b\"}],\"mocks\":[{\"resource\":1}]}"),
	           0, MODEL_E_MALFORMED, "mocks[0].resource");
}
END_TEST

/* a body holding name and one step, plus field=value set by the caller */
static json_t *scn_body(void)
{
	return S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}]}");
}

static json_t *with(json_t *body, const char *key, json_t *value)
{
	json_object_set_new(body, key, value);
	return body;
}

static json_t *one_step(const char *key, json_t *input)
{
	json_t *step;

	step = json_object();
	if (key)
		json_object_set_new(step, "key", json_string(key));
	json_object_set_new(step, "input", input);
	return json_pack("[o]", step);
}

static json_t *one_mock(json_t *resource, json_t *response, json_t *variant)
{
	json_t *m;

	m = json_pack("{s:o,s:o}", "resource", resource, "response", response);
	if (variant)
		json_object_set_new(m, "variant", variant);
	return json_pack("[o]", m);
}

START_TEST(test_scn_string_bounds)
{
	json_t *n;
	json_t *step;

	json_decref(scn_ok(with(scn_body(), "name", jstr_rep('n', 128)), 0));
	scn_expect(with(scn_body(), "name", jstr_rep('n', 129)), 0, MODEL_E_LIMIT, "name");
	scn_expect(with(scn_body(), "name", json_string("")), 0, MODEL_E_LIMIT, "name");
	json_decref(scn_ok(with(scn_body(), "description", jstr_rep('d', 1024)), 0));
	scn_expect(with(scn_body(), "description", jstr_rep('d', 1025)), 0, MODEL_E_LIMIT,
	           "description");
	json_decref(scn_ok(with(scn_body(), "subject_kind", jstr_rep('s', 200)), 0));
	scn_expect(with(scn_body(), "subject_kind", jstr_rep('s', 201)), 0, MODEL_E_LIMIT,
	           "subject_kind");
	scn_expect(with(scn_body(), "subject_kind", json_string("")), 0, MODEL_E_LIMIT,
	           "subject_kind");

	n = scn_ok(with(scn_body(), "steps", one_step(NULL, jstr_rep('i', 8192))), 0);
	step = json_array_get(json_object_get(n, "steps"), 0);
	ck_assert_uint_eq(json_string_length(json_object_get(step, "input")), 8192);
	json_decref(n);
	scn_expect(with(scn_body(), "steps", one_step(NULL, jstr_rep('i', 8193))), 0, MODEL_E_LIMIT,
	           "steps[0].input");
	{
		char *k128 = rep('k', 128);
		char *k129 = rep('k', 129);

		json_decref(scn_ok(with(scn_body(), "steps", one_step(k128, json_string("a"))), 0));
		scn_expect(with(scn_body(), "steps", one_step(k129, json_string("a"))), 0,
		           MODEL_E_LIMIT, "steps[0].key");
		free(k128);
		free(k129);
	}
	scn_expect(with(scn_body(), "steps", one_step("", json_string("a"))), 0, MODEL_E_LIMIT,
	           "steps[0].key");

	json_decref(
	    scn_ok(with(scn_body(), "mocks",
	                one_mock(jstr_rep('r', 8192), jstr_rep('p', 65536), jstr_rep('v', 64))),
	           0));
	scn_expect(with(scn_body(), "mocks", one_mock(jstr_rep('r', 8193), json_string(""), NULL)),
	           0, MODEL_E_LIMIT, "mocks[0].resource");
	scn_expect(with(scn_body(), "mocks", one_mock(json_string(""), json_string("x"), NULL)), 0,
	           MODEL_E_LIMIT, "mocks[0].resource");
	scn_expect(
	    with(scn_body(), "mocks", one_mock(json_string("r"), jstr_rep('p', 65537), NULL)), 0,
	    MODEL_E_LIMIT, "mocks[0].response");
	scn_expect(with(scn_body(), "mocks",
	                one_mock(json_string("r"), json_string("x"), jstr_rep('v', 65))),
	           0, MODEL_E_LIMIT, "mocks[0].variant");
	scn_expect(with(scn_body(), "mocks",
	                one_mock(json_string("r"), json_string("x"), json_string(""))),
	           0, MODEL_E_LIMIT, "mocks[0].variant");
}
END_TEST

/* a name of white space only is refused like an empty one, with its own
 * message; a name with white space around words is fine */
static void blank_name_expect(json_t *body, int is_update)
{
	struct model_error e;
	json_t *n;

	n = NULL;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(model_scenario_check(body, is_update, &n, &e), -1);
	json_decref(body);
	ck_assert_ptr_null(n);
	ck_assert_int_eq(e.code, MODEL_E_LIMIT);
	ck_assert_str_eq(e.field, "name");
	ck_assert_str_eq(e.message, "name must not be blank");
}

/* What a display writes out rather than shows (the admin view, the CLI's
 * tables), and the UTF-8 decoder they share. */
START_TEST(test_text_invisible_and_utf8_at)
{
	size_t len;

	ck_assert_int_eq(model_text_invisible(0x01), 1);
	ck_assert_int_eq(model_text_invisible('\t'), 0);
	ck_assert_int_eq(model_text_invisible('\n'), 0);
	ck_assert_int_eq(model_text_invisible(0x7f), 1);
	ck_assert_int_eq(model_text_invisible(0x85), 1);   /* C1 NEL */
	ck_assert_int_eq(model_text_invisible(0x200b), 1); /* zero width space */
	ck_assert_int_eq(model_text_invisible(0x202e), 1); /* right-to-left override */
	ck_assert_int_eq(model_text_invisible(0x2067), 1); /* right-to-left isolate */
	ck_assert_int_eq(model_text_invisible(0xfeff), 1);
	ck_assert_int_eq(model_text_invisible(0xad), 1);    /* soft hyphen */
	ck_assert_int_eq(model_text_invisible(0x61c), 1);   /* Arabic letter mark */
	ck_assert_int_eq(model_text_invisible(0x2028), 1);  /* line separator */
	ck_assert_int_eq(model_text_invisible(0x2029), 1);  /* paragraph separator */
	ck_assert_int_eq(model_text_invisible(0x2060), 1);  /* word joiner */
	ck_assert_int_eq(model_text_invisible(0x3164), 1);  /* Hangul filler */
	ck_assert_int_eq(model_text_invisible(0xe0041), 1); /* tag latin capital A */
	ck_assert_int_eq(model_text_invisible(0x2065), 0);  /* unassigned, shown as is */
	ck_assert_int_eq(model_text_invisible(0x2027), 0);  /* hyphenation point: visible */
	ck_assert_int_eq(model_text_invisible(0xe9), 0);
	ck_assert_int_eq(model_text_invisible(0x2010), 0); /* a hyphen */
	ck_assert_int_eq(model_text_invisible(0x1f600), 0);

	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"a", 1, &len), 'a');
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\xE2\x80\xAE", 3, &len),
	                 0x202e);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\xF0\x9F\x98\x80", 4, &len),
	                 0x1f600);
	ck_assert_uint_eq(len, 4);
	/* a truncated sequence, a stray continuation byte, a lead byte over F4 */
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\xE2\x80", 2, &len), -1);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\x80", 1, &len), -1);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\xF5\x80\x80\x80", 4, &len),
	                 -1);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"\xE2\x41\x41", 3, &len), -1);
	ck_assert_int_eq(model_text_utf8_at((const unsigned char *)"", 0, &len), -1);
}
END_TEST

START_TEST(test_scn_blank_name)
{
	static const char *const blank[] = {
	    " ",
	    "   ",
	    "\t",
	    " \n\r\t\v\f ",
	    "\xC2\xA0",                  /* U+00A0 no-break space */
	    "\xE3\x80\x80 \xE2\x80\x83", /* U+3000 ideographic space, U+2003 em space */
	    "\xE2\x80\x8B\xEF\xBB\xBF",  /* U+200B zero width space, U+FEFF */
	};
	json_t *n;
	size_t i;

	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		ck_assert_int_eq(model_text_is_blank(blank[i], strlen(blank[i])), 1);
		blank_name_expect(with(scn_body(), "name", json_string(blank[i])), 0);
		blank_name_expect(json_pack("{s:s}", "name", blank[i]), 1);
	}
	ck_assert_int_eq(model_text_is_blank("", 0), 1);
	ck_assert_int_eq(model_text_is_blank(" a ", 3), 0);
	ck_assert_int_eq(model_text_is_blank(" \xC3\xA9", 3), 0);    /* U+00E9 */
	ck_assert_int_eq(model_text_is_blank("\xE2\x80\x8C", 3), 0); /* U+200C: a joiner */
	ck_assert_int_eq(model_text_is_blank("\xF0\x9F\x98\x80", 4), 0);
	/* the bound still wins when it comes first: 129 spaces */
	scn_expect(with(scn_body(), "name", jstr_rep(' ', 129)), 0, MODEL_E_LIMIT, "name");
	/* an empty name keeps its own message */
	scn_expect(with(scn_body(), "name", json_string("")), 0, MODEL_E_LIMIT, "name");
	/* words with spaces around are a name */
	n = scn_ok(with(scn_body(), "name", json_string("  walkthrough  ")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(n, "name")), "  walkthrough  ");
	json_decref(n);
	n = scn_ok(json_pack("{s:s}", "name", "\xC2\xA0x"), 1);
	json_decref(n);
	/* blank name and a later credential: the first refusal is the name */
	blank_name_expect(with(with(scn_body(), "name", json_string("  ")), "description",
	                       json_string("AKIAIOSFODNN7EXAMPLE")),
	                  0);
}
END_TEST

START_TEST(test_scn_array_bounds)
{
	json_t *steps;
	json_t *mocks;
	json_t *n;
	char res[32];
	size_t i;

	scn_expect(with(scn_body(), "steps", json_array()), 0, MODEL_E_LIMIT, "steps");
	steps = json_array();
	for (i = 0; i < 1000; i++)
		json_array_append_new(steps, json_pack("{s:s}", "input", "x"));
	n = scn_ok(with(scn_body(), "steps", json_deep_copy(steps)), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "steps")), 1000);
	ck_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(json_object_get(n, "steps"), 999), "key")),
	                 "step-1000");
	json_decref(n);
	json_array_append_new(steps, json_pack("{s:s}", "input", "x"));
	scn_expect(with(scn_body(), "steps", steps), 0, MODEL_E_LIMIT, "steps");

	mocks = json_array();
	for (i = 0; i < 1000; i++) {
		snprintf(res, sizeof(res), "resource-%zu", i);
		json_array_append_new(mocks,
		                      json_pack("{s:s,s:s}", "resource", res, "response", "r"));
	}
	n = scn_ok(with(scn_body(), "mocks", json_deep_copy(mocks)), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "mocks")), 1000);
	json_decref(n);
	json_array_append_new(mocks,
	                      json_pack("{s:s,s:s}", "resource", "resource-1000", "response", "r"));
	scn_expect(with(scn_body(), "mocks", mocks), 0, MODEL_E_LIMIT, "mocks");
}
END_TEST

START_TEST(test_scn_duplicate_steps)
{
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"a\",\"input\":\"1\"},"
	             "{\"key\":\"b\",\"input\":\"2\"},{\"key\":\"a\",\"input\":\"3\"}]}"),
	           0, MODEL_E_INVALID, "steps[2].key");
	/* a default key collides with a later explicit one */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"1\"},"
	             "{\"key\":\"step-1\",\"input\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "steps[1].key");
	/* an explicit key takes the default key of a later step */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"key\":\"step-2\",\"input\":\"1\"},"
	             "{\"input\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "steps[1]");
	/* keys are case-sensitive and explicit keys equal to their own default are fine */
	json_decref(scn_ok(S("{\"name\":\"n\",\"steps\":[{\"key\":\"step-1\",\"input\":\"1\"},"
	                     "{\"input\":\"2\"},{\"key\":\"Step-1\",\"input\":\"3\"}]}"),
	                   0));
}
END_TEST

START_TEST(test_scn_duplicate_mocks)
{
	struct model_error e;
	json_t *n;
	json_t *body;

	/* same resource, no variant twice */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\"},"
	             "{\"resource\":\"r\",\"response\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "mocks[1]");
	/* null and absent are the same (no) variant */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\",\"variant\":null},"
	             "{\"resource\":\"r\",\"response\":\"2\"}]}"),
	           0, MODEL_E_INVALID, "mocks[1]");
	/* same resource, same variant; the later of the pair is named */
	scn_expect(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\",\"variant\":\"v\"},"
	             "{\"resource\":\"q\",\"response\":\"2\",\"variant\":\"v\"},"
	             "{\"resource\":\"r\",\"response\":\"3\"},"
	             "{\"resource\":\"r\",\"response\":\"4\",\"variant\":\"v\"}]}"),
	           0, MODEL_E_INVALID, "mocks[3]");
	/* the first repeat by position wins when there are several */
	body = S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	         "{\"resource\":\"z\",\"response\":\"1\"},"
	         "{\"resource\":\"a\",\"response\":\"2\"},"
	         "{\"resource\":\"a\",\"response\":\"3\"},"
	         "{\"resource\":\"z\",\"response\":\"4\"}]}");
	n = NULL;
	ck_assert_int_eq(model_scenario_check(body, 0, &n, &e), -1);
	ck_assert_str_eq(e.field, "mocks[2]");
	ck_assert_ptr_nonnull(strstr(e.message, "mocks[1]"));
	json_decref(body);
	/* same resource, different variants (and none): allowed */
	n = scn_ok(S("{\"name\":\"n\",\"steps\":[{\"input\":\"a\"}],\"mocks\":["
	             "{\"resource\":\"r\",\"response\":\"1\"},"
	             "{\"resource\":\"r\",\"response\":\"2\",\"variant\":\"baseline\"},"
	             "{\"resource\":\"r\",\"response\":\"3\",\"variant\":\"candidate\"},"
	             "{\"resource\":\"r\\n\",\"response\":\"4\"},"
	             "{\"resource\":\"R\",\"response\":\"5\"}]}"),
	           0);
	ck_assert_uint_eq(json_array_size(json_object_get(n, "mocks")), 5);
	json_decref(n);
}
END_TEST

struct cred_case {
	const char *secret;
	const char *kind;
};

static const struct cred_case cred_cases[] = {
    {"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
     "private key block"},
    {"AKIAIOSFODNN7EXAMPLE", "AWS access key id"},
    {"ghp_0123456789abcdefghijABCDEFGHIJklmnop", "GitHub token"},
    {"xoxb-123456789012-1234567890123-AbCdEfGh", "Slack token"},
    {"AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key"},
    {"sk-proj-AbCdEf0123456789xyzXYZ", "API secret key"},
    {"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe live key"},
    {"olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "olivares API token"},
    {"OLV_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", "olivares API token"},
    {"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS secret access key"},
    {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
     "JSON Web Token"},
    {"Bearer 2YotnFZFEjr1zCsicMWpAA", "bearer token"},
};

/* the refusal names the field and the format, never the secret */
static void cred_expect(json_t *body, const char *field, const struct cred_case *c)
{
	struct model_error e;
	json_t *n;
	char want[128];

	n = NULL;
	ck_assert_int_eq(model_scenario_check(body, 0, &n, &e), -1);
	json_decref(body);
	ck_assert_ptr_null(n);
	ck_assert_int_eq(e.code, MODEL_E_INVALID);
	ck_assert_str_eq(e.field, field);
	snprintf(want, sizeof(want), "%s looks like a credential (%s)", field, c->kind);
	ck_assert_str_eq(e.message, want);
	ck_assert_ptr_null(strstr(e.message, c->secret));
	ck_assert_ptr_null(strstr(e.message, c->secret + 4));
}

START_TEST(test_scn_credentials)
{
	const struct cred_case *c = &cred_cases[_i];
	char text[256];

	/* embedded in ordinary text */
	snprintf(text, sizeof(text), "config:\n%s\n", c->secret);
	cred_expect(with(scn_body(), "name", json_string(c->secret)), "name", c);
	cred_expect(with(scn_body(), "description", json_string(text)), "description", c);
	cred_expect(with(scn_body(), "subject_kind", json_string(c->secret)), "subject_kind", c);
	cred_expect(
	    with(scn_body(), "steps", json_pack("[{s:s},{s:s}]", "input", "ok", "input", text)),
	    "steps[1].input", c);
	cred_expect(with(scn_body(), "steps", one_step(c->secret, json_string("a"))),
	            "steps[0].key", c);
	cred_expect(with(scn_body(), "mocks", one_mock(json_string(text), json_string("x"), NULL)),
	            "mocks[0].resource", c);
	cred_expect(with(scn_body(), "mocks",
	                 json_pack("[{s:s,s:s},{s:s,s:s}]", "resource", "a", "response", "b",
	                           "resource", "c", "response", text)),
	            "mocks[1].response", c);
	cred_expect(with(scn_body(), "mocks",
	                 one_mock(json_string("r"), json_string("x"), json_string(c->secret))),
	            "mocks[0].variant", c);
}
END_TEST

START_TEST(test_scn_credential_false_positives)
{
	json_t *n;

	n = scn_ok(
	    S("{\"name\":\"task-list review\",\"description\":\"AKIA is a prefix; "
	      "mail alice@example.com; the risk-assessment-of-2024-Q3 doc\","
	      "\"steps\":[{\"input\":\"agent:user1@example.test\"},"
	      "{\"input\":\"-----BEGIN PUBLIC KEY-----\\nMFkw\\n-----END PUBLIC KEY-----\"}],"
	      "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	      "\"response\":\"first synthetic account\"}]}"),
	    0);
	json_decref(n);
}
END_TEST

START_TEST(test_scn_update)
{
	json_t *n;
	char *dump;

	scn_expect(S("{}"), 1, MODEL_E_INVALID, "");
	n = scn_ok(S("{\"name\":\"renamed\"}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"name\":\"renamed\"}");
	free(dump);
	json_decref(n);
	n = scn_ok(S("{\"mocks\":[],\"description\":\"\"}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"description\":\"\",\"mocks\":[]}");
	free(dump);
	json_decref(n);
	n = scn_ok(S("{\"steps\":[{\"input\":\"x\"}]}"), 1);
	dump = json_dumps(n, JSON_COMPACT);
	ck_assert_str_eq(dump, "{\"steps\":[{\"key\":\"step-1\",\"input\":\"x\"}]}");
	free(dump);
	json_decref(n);
	scn_expect(S("{\"steps\":[]}"), 1, MODEL_E_LIMIT, "steps");
	scn_expect(S("{\"name\":\"\"}"), 1, MODEL_E_LIMIT, "name");
	scn_expect(S("{\"name\":null}"), 1, MODEL_E_MALFORMED, "name");
}
END_TEST

/* ---- mock resolution ---------------------------------------------------------- */

static json_t *resolve_mocks(void)
{
	return S("["
	         "{\"resource\":\"a\",\"response\":\"cand-first\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"a\\n\",\"response\":\"nl\"},"
	         "{\"resource\":\"a\",\"response\":\"plain\"},"
	         "{\"resource\":\"a\",\"response\":\"base\",\"variant\":\"baseline\"},"
	         "{\"resource\":\"b\",\"response\":\"only-cand\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"c\",\"response\":\"c-plain\",\"variant\":null},"
	         "{\"resource\":\"c\",\"response\":\"c-cand\",\"variant\":\"candidate\"},"
	         "{\"resource\":\"line1\\nline2\\n\",\"response\":\"multi\"}"
	         "]");
}

static const char *resolve(json_t *mocks, const char *variant, const char *input)
{
	const char *resp;
	size_t len;

	resp = NULL;
	len = 999;
	if (!model_mock_resolve(mocks, variant, input, strlen(input), &resp, &len))
		return NULL;
	ck_assert_uint_eq(len, strlen(resp));
	return resp;
}

START_TEST(test_mock_resolve)
{
	json_t *m;

	m = resolve_mocks();
	ck_assert_str_eq(resolve(m, NULL, "a"), "plain");
	ck_assert_str_eq(resolve(m, "candidate", "a"), "cand-first");
	ck_assert_str_eq(resolve(m, "baseline", "a"), "base");
	ck_assert_str_eq(resolve(m, "other", "a"), "plain");
	ck_assert_str_eq(resolve(m, "", "a"), "plain");
	ck_assert_str_eq(resolve(m, "Candidate", "a"), "plain");
	ck_assert_str_eq(resolve(m, "candidat", "a"), "plain");
	/* variant-specific wins whatever the order */
	ck_assert_str_eq(resolve(m, NULL, "c"), "c-plain");
	ck_assert_str_eq(resolve(m, "candidate", "c"), "c-cand");
	/* mocks for another variant never apply */
	ck_assert_ptr_null(resolve(m, NULL, "b"));
	ck_assert_ptr_null(resolve(m, "baseline", "b"));
	ck_assert_str_eq(resolve(m, "candidate", "b"), "only-cand");
	/* exact bytes, newlines included */
	ck_assert_str_eq(resolve(m, NULL, "a\n"), "nl");
	ck_assert_str_eq(resolve(m, "candidate", "a\n"), "nl");
	ck_assert_ptr_null(resolve(m, NULL, "a\r\n"));
	ck_assert_ptr_null(resolve(m, NULL, "a "));
	ck_assert_ptr_null(resolve(m, NULL, "A"));
	ck_assert_ptr_null(resolve(m, NULL, ""));
	ck_assert_str_eq(resolve(m, NULL, "line1\nline2\n"), "multi");
	ck_assert_ptr_null(resolve(m, NULL, "line1\nline2"));
	ck_assert_ptr_null(resolve(m, NULL, "line1\nline2\n\n"));
	/* a length shorter than the string: prefix "a" of "ab" */
	{
		const char *r;
		size_t l;

		ck_assert_int_eq(model_mock_resolve(m, NULL, "ab", 1, &r, &l), 1);
		ck_assert_str_eq(r, "plain");
	}
	json_decref(m);
	/* empty or missing mocks: always a miss */
	m = json_array();
	ck_assert_ptr_null(resolve(m, NULL, "a"));
	json_decref(m);
	ck_assert_ptr_null(resolve(NULL, "candidate", "a"));
}
END_TEST

START_TEST(test_mock_miss_marker)
{
	char *p;
	size_t len;

	p = model_mock_miss_marker("agent:user2@example.test", 24, &len);
	ck_assert_str_eq(p, "[[mock-miss:agent:user2@example.test]]");
	ck_assert_uint_eq(len, strlen(p));
	free(p);
	p = model_mock_miss_marker("x\ny\n", 4, &len);
	ck_assert_str_eq(p, "[[mock-miss:x\ny\n]]");
	ck_assert_uint_eq(len, 18);
	free(p);
	p = model_mock_miss_marker("", 0, &len);
	ck_assert_str_eq(p, "[[mock-miss:]]");
	ck_assert_uint_eq(len, 14);
	free(p);
}
END_TEST

/* the page's walkthrough, model side: generate, create, resolve */
START_TEST(test_page_walkthrough)
{
	struct model_gen_request r;
	struct model_error e;
	json_t *body;
	json_t *samples;
	json_t *scn;
	json_t *mocks;
	json_t *step;
	const char *in;
	const char *resp;
	size_t len;
	char *miss;

	body = parse("{\"subject_kind\":\"agent\",\"count\":2,"
	             "\"seed\":\"{{subject_kind}}:user{{index}}@example.test\"}");
	ck_assert_int_eq(model_gen_request_parse(body, &r, &e), 0);
	json_decref(body);
	ck_assert_int_eq(model_generate(&r, &samples, &e), 0);
	model_gen_request_free(&r);
	mocks = parse("[{\"resource\":\"agent:user1@example.test\","
	              "\"response\":\"first synthetic account\"}]");
	body = json_pack("{s:s,s:o,s:o}", "name", "generated", "steps", samples, "mocks", mocks);
	scn = scn_ok(body, 0);
	mocks = json_object_get(scn, "mocks");

	step = json_array_get(json_object_get(scn, "steps"), 0);
	in = json_string_value(json_object_get(step, "input"));
	ck_assert_int_eq(model_mock_resolve(mocks, "candidate", in, strlen(in), &resp, &len), 1);
	ck_assert_str_eq(resp, "first synthetic account");

	step = json_array_get(json_object_get(scn, "steps"), 1);
	in = json_string_value(json_object_get(step, "input"));
	ck_assert_int_eq(model_mock_resolve(mocks, "candidate", in, strlen(in), &resp, &len), 0);
	miss = model_mock_miss_marker(in, strlen(in), &len);
	ck_assert_str_eq(miss, "[[mock-miss:agent:user2@example.test]]");
	free(miss);
	json_decref(scn);
}
END_TEST

static Suite *model_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("model");

	tc = tcase_create("alloc_buf");
	tcase_add_test(tc, test_alloc_basics);
	tcase_add_test_raise_signal(tc, test_alloc_overflow_aborts, SIGABRT);
	tcase_add_test(tc, test_buf_cap);
	tcase_add_test(tc, test_buf_growth_and_zero_cap);
	suite_add_tcase(s, tc);

	tc = tcase_create("error");
	tcase_add_test(tc, test_error_codes);
	tcase_add_test(tc, test_error_truncation_utf8);
	suite_add_tcase(s, tc);

	tc = tcase_create("utf8");
	tcase_add_test(tc, test_utf8_valid);
	tcase_add_test(tc, test_utf8_invalid);
	tcase_add_test(tc, test_hex_encode);
	tcase_add_test(tc, test_id_and_json_worst);
	suite_add_tcase(s, tc);

	tc = tcase_create("credential");
	tcase_add_test(tc, test_credential_formats);
	tcase_add_test(tc, test_credential_false_positives);
	tcase_add_test(tc, test_credential_length_bound);
	tcase_add_test(tc, test_credential_olivares_any_case);
	tcase_add_test(tc, test_credential_aws_secret);
	tcase_add_test(tc, test_credential_jwt);
	tcase_add_test(tc, test_credential_bearer);
	suite_add_tcase(s, tc);

	tc = tcase_create("generate_parse");
	tcase_add_test(tc, test_gen_defaults);
	tcase_add_test(tc, test_gen_count_bounds);
	tcase_add_test(tc, test_gen_count_message);
	tcase_add_test(tc, test_gen_types);
	tcase_add_test(tc, test_gen_subject_template_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("generate_expand");
	tcase_add_test(tc, test_gen_page_example);
	tcase_add_test(tc, test_gen_expansion_rules);
	tcase_add_test(tc, test_gen_final_newline_request);
	tcase_add_test(tc, test_gen_input_edge);
	tcase_add_test(tc, test_gen_template_max_plain);
	suite_add_tcase(s, tc);

	tc = tcase_create("generate_envelope");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_gen_envelope_reserve);
	tcase_add_test(tc, test_gen_envelope_plain_passes);
	tcase_add_test(tc, test_gen_envelope_escaping_fails);
	tcase_add_test(tc, test_gen_envelope_exact_edge);
	suite_add_tcase(s, tc);

	tc = tcase_create("scenario");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_scn_minimal_defaults);
	tcase_add_test(tc, test_scn_mocks_normalized);
	tcase_add_test(tc, test_scn_required_and_types);
	tcase_add_test(tc, test_scn_unknown_fields);
	tcase_add_test(tc, test_scn_string_bounds);
	tcase_add_test(tc, test_scn_blank_name);
	tcase_add_test(tc, test_text_invisible_and_utf8_at);
	tcase_add_test(tc, test_scn_array_bounds);
	tcase_add_test(tc, test_scn_duplicate_steps);
	tcase_add_test(tc, test_scn_duplicate_mocks);
	tcase_add_loop_test(tc, test_scn_credentials, 0,
	                    (int)(sizeof(cred_cases) / sizeof(cred_cases[0])));
	tcase_add_test(tc, test_scn_credential_false_positives);
	tcase_add_test(tc, test_scn_update);
	suite_add_tcase(s, tc);

	tc = tcase_create("mock");
	tcase_add_test(tc, test_mock_resolve);
	tcase_add_test(tc, test_mock_miss_marker);
	tcase_add_test(tc, test_page_walkthrough);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	sr = srunner_create(model_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
