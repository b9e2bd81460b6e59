/*
 * Unit tests of model/text.c (Check): UTF-8 validation and decoding, hex,
 * ids, the JSON worst case, what a display shows escaped, and the
 * credential scan at its edges.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/text.h"
#include "tests/unit/unit.h"

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

/* The formats added after the first ones: lower-case and SSH2 key blocks,
 * PuTTY keys, Basic credentials, URLs with a password, a token's bare
 * 64 hex, percent-encoded forms; each with its near misses. */
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
START_TEST(test_credential_more_formats)
{
	static const char *const clean[] = {
	    "-----BEGIN PUBLIC KEY-----",
	    "-----begin certificate-----",
	    "---- BEGIN SSH2 PUBLIC KEY ----",
	    "-- BEGIN PRIVATE KEY --",
	    "PuTTY-User-Key-File",
	    "the PuTTY user key file format",
	    "Authorization: Basic",
	    "Authorization: Basic <credentials>",
	    "Authorization: Basic YOUR_CREDENTIALS",
	    "Authorization: Basic dXNlcg==", /* "user": no ':' */
	    "HTTP Basic auth is weak",
	    "ssh://git@example.test/repo.git",
	    "https://user@example.test/",
	    "http://example.test:8080/a@b",
	    "mailto:alice@example.com",
	    "https://example.test/?q=a:b@c",
	    HEX64 "0",                                                         /* 65 hex */
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", /* 63 */
	    "x" HEX64,
	    "sha256:" HEX64,
	    "image@sha256:" HEX64,
	    "\"sha256\": \"" HEX64 "\"",
	    "\"output_digest\":\"" HEX64 "\"",
	    "SHA-256 = " HEX64,
	    "agent_sha256=" HEX64,
	    "100% done",
	    "olv%5Fshort",
	    "a%20b",
	};
	const char *kind;
	size_t i;

	ck_assert_str_eq(cred_kind("-----begin rsa private key-----"), "private key block");
	ck_assert_str_eq(cred_kind("-----Begin Private Key-----"), "private key block");
	ck_assert_str_eq(cred_kind("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: x"),
	                 "private key block");
	ck_assert_str_eq(cred_kind("PuTTY-User-Key-File-2: ssh-rsa"), "PuTTY private key");
	ck_assert_str_eq(cred_kind("x\nPuTTY-User-Key-File-3: ssh-ed25519\n"), "PuTTY private key");
	ck_assert_str_eq(cred_kind("Authorization: Basic dXNlcjpwYXNz"),
	                 "Basic authorization credentials");
	ck_assert_str_eq(cred_kind("authorization:basic  YTpi"), "Basic authorization credentials");
	ck_assert_str_eq(cred_kind("Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA=="),
	                 "Basic authorization credentials");
	ck_assert_str_eq(cred_kind("fetch https://alice:s3cret@example.test/x"),
	                 "URL with a password");
	ck_assert_str_eq(cred_kind("postgres://app:pw@db:5432/main"), "URL with a password");
	ck_assert_str_eq(cred_kind(HEX64), "64 hex digits (an olivares API token without its "
	                                   "prefix)");
	ck_assert_str_eq(cred_kind("token=" HEX64 ";"),
	                 "64 hex digits (an olivares API token without its prefix)");
	ck_assert_str_eq(cred_kind("olv%5F" HEX64), "URL-encoded olivares API token");
	ck_assert_str_eq(cred_kind("OLV%5f" HEX64), "URL-encoded olivares API token");
	ck_assert_str_eq(cred_kind("u=https%3A%2F%2Falice%3Apw%40example.test"),
	                 "URL-encoded URL with a password");
	ck_assert_str_eq(cred_kind("-----BEGIN%20RSA%20PRIVATE%20KEY-----"),
	                 "URL-encoded private key block");
	ck_assert_str_eq(cred_kind("Authorization%3A%20Basic%20dXNlcjpwYXNz"),
	                 "URL-encoded Basic authorization credentials");
	for (i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		kind = "unset";
		ck_assert_msg(!model_text_find_credential(clean[i], strlen(clean[i]), &kind),
		              "flagged as %s: %s", kind, clean[i]);
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

Suite *unit_suite(void)
{
	const TTest *const utf8[] = {test_utf8_valid,
	                             test_utf8_invalid,
	                             test_hex_encode,
	                             test_id_and_json_worst,
	                             test_text_invisible_and_utf8_at,
	                             NULL};
	const TTest *const credential[] = {test_credential_formats,
	                                   test_credential_false_positives,
	                                   test_credential_length_bound,
	                                   test_credential_olivares_any_case,
	                                   test_credential_aws_secret,
	                                   test_credential_jwt,
	                                   test_credential_bearer,
	                                   test_credential_more_formats,
	                                   NULL};
	Suite *s;

	s = suite_create("text");
	unit_tcase(s, "utf8", utf8);
	unit_tcase(s, "credential", credential);
	return s;
}
