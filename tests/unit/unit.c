/*
 * The shared part of the Check programs of tests/unit (unit.h).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "tests/unit/unit.h"

int main(void)
{
	SRunner *sr;
	int failed;

	sr = srunner_create(unit_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

TCase *unit_tcase(Suite *s, const char *name, const TTest *const tests[])
{
	TCase *tc;
	size_t i;

	tc = tcase_create(name);
	for (i = 0; tests[i]; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	return tc;
}

/* ---- JSON and text ------------------------------------------------------ */

json_t *unit_json(const char *text)
{
	json_error_t jerr;
	json_t *v;

	v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", text, jerr.text);
	return v;
}

char *unit_rep(char c, size_t n)
{
	char *s;

	s = model_xmalloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

json_t *unit_jstr_rep(char c, size_t n)
{
	char *s;
	json_t *v;

	s = unit_rep(c, n);
	v = json_stringn(s, n);
	free(s);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* ---- fixtures ----------------------------------------------------------- */

/* The tree's top directory: $srcdir under make check, else the one this
 * file was compiled from (its path ends in tests/unit/unit.c). */
static const char *top_dir(void)
{
	static char dir[4096];
	const char *srcdir = getenv("srcdir");
	const char *tail = "/tests/unit/unit.c";
	size_t n;

	if (srcdir && *srcdir) {
		snprintf(dir, sizeof(dir), "%s", srcdir);
		return dir;
	}
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	n = strlen(dir);
	if (n >= strlen(tail) && strcmp(dir + n - strlen(tail), tail) == 0)
		dir[n - strlen(tail)] = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	return dir;
}

const char *unit_fixture(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", top_dir(), name);
	return path;
}

/* ---- run outputs and scores --------------------------------------------- */

void unit_add_output(json_t *outs, const char *key, const char *output, const char *kind)
{
	json_t *o;

	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:o}", "seq",
	              (json_int_t)json_array_size(outs) + 1, "key", key, "input", "synthetic input",
	              "output", output, "status", kind ? "error" : "ok", "error_kind",
	              kind ? json_string(kind) : json_null());
	ck_assert_ptr_nonnull(o);
	json_array_append_new(outs, o);
}

json_t *unit_walkthrough_outputs(void)
{
	json_t *outs = json_array();

	unit_add_output(outs, "step-1", "first synthetic account", NULL);
	unit_add_output(outs, "step-2", "[[mock-miss:agent:user2@example.test]]", "mock_miss");
	return outs;
}

json_t *unit_detail(const struct model_score_result *res, size_t i)
{
	json_t *d = json_array_get(res->details, i);

	ck_assert_msg(d != NULL, "no details[%zu]", i);
	return d;
}

void unit_assert_detail(const struct model_score_result *res, size_t i, json_int_t seq,
                        const char *key, int passed, const char *check, const char *message)
{
	json_t *d = unit_detail(res, i);

	if (seq > 0)
		ck_assert_int_eq(json_integer_value(json_object_get(d, "seq")), seq);
	else
		ck_assert(json_is_null(json_object_get(d, "seq")));
	if (key)
		ck_assert_str_eq(json_string_value(json_object_get(d, "key")), key);
	else
		ck_assert(json_is_null(json_object_get(d, "key")));
	ck_assert_int_eq(json_is_true(json_object_get(d, "passed")), passed);
	ck_assert_str_eq(json_string_value(json_object_get(d, "check")), check);
	ck_assert_str_eq(json_string_value(json_object_get(d, "message")), message);
	ck_assert_int_eq(json_object_size(d), 5);
}
