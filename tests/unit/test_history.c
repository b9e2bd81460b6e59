/*
 * Unit tests of model/history.c (Check): every reconstruction rule of
 * model/history.h with its exact reason, the import check at its edges,
 * the divergence of a replay, and the sample sessions of
 * tests/fixtures/sessions (OLV_SESSIONS_DIR) that the end-to-end tests use.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/error.h"
#include "model/history.h"
#include "model/limits.h"
#include "model/scenario.h"
#include "tests/unit/unit.h"

#ifndef OLV_SESSIONS_DIR
#error "OLV_SESSIONS_DIR must name tests/fixtures/sessions"
#endif

/* ---- helpers ------------------------------------------------------------ */

static json_t *load_fixture(const char *name)
{
	json_error_t jerr;
	json_t *v;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", OLV_SESSIONS_DIR, name);
	v = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(v != NULL, "%s: %s", path, jerr.text);
	return v;
}

/* Rebuild the events given as JSON text; expect failure with reason. */
static void expect_fail(const char *events, const char *reason)
{
	struct model_timeline tl;
	json_t *ev;
	struct model_reason why;

	ev = unit_json(events);
	memset(&tl, 0x5a, sizeof(tl));
	memset(&why, 'x', sizeof(why));
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	ck_assert_str_eq(why.text, reason);
	/* *tl zeroed on failure */
	ck_assert_ptr_null(tl.steps);
	ck_assert_ptr_null(tl.mocks);
	ck_assert_ptr_null(tl.recorded);
	json_decref(ev);
}

/* Rebuild the events given as JSON text; expect success and compare the
 * three arrays with the JSON texts given (compact, exact). */
static void expect_ok(const char *events, const char *steps, const char *mocks,
                      const char *recorded)
{
	struct model_timeline tl;
	json_t *ev;
	json_t *want;
	struct model_reason why;

	ev = unit_json(events);
	why.text[0] = 'x';
	why.text[1] = '\0';
	ck_assert_msg(model_timeline_rebuild(ev, &tl, &why) == 0, "%s: %s", events, why.text);
	ck_assert_str_eq(why.text, "");
	want = unit_json(steps);
	ck_assert_msg(json_equal(tl.steps, want), "steps %s", json_dumps(tl.steps, JSON_COMPACT));
	json_decref(want);
	want = unit_json(mocks);
	ck_assert_msg(json_equal(tl.mocks, want), "mocks %s", json_dumps(tl.mocks, JSON_COMPACT));
	json_decref(want);
	want = unit_json(recorded);
	ck_assert_msg(json_equal(tl.recorded, want), "recorded %s",
	              json_dumps(tl.recorded, JSON_COMPACT));
	json_decref(want);
	ck_assert_uint_eq(json_array_size(tl.recorded), json_array_size(tl.steps));
	model_timeline_clear(&tl);
	ck_assert_ptr_null(tl.steps);
	json_decref(ev);
}

/* ---- rule 1: no input -------------------------------------------------- */

START_TEST(test_empty_session)
{
	struct model_timeline tl;
	struct model_reason why;

	expect_fail("[]", "session has no input");
	expect_fail("[{\"seq\":1,\"kind\":\"output\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_call\"},"
	            "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"t\"}]",
	            "session has no input");
	/* a kind that only looks like input */
	expect_fail("[{\"seq\":1,\"kind\":\"Input\",\"text\":\"a\"}]", "session has no input");
	/* not even an array */
	ck_assert_int_eq(model_timeline_rebuild(NULL, &tl, &why), -1);
	ck_assert_str_eq(why.text, "session has no input");
	/* rule 1 comes before rule 2: broken seqs and no input */
	expect_fail("[{\"kind\":\"output\",\"text\":\"a\"}]", "session has no input");
}
END_TEST

/* ---- rule 2: usable seq ------------------------------------------------ */

START_TEST(test_seq_unusable)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"kind\":\"output\",\"text\":\"b\"}]",
	            "event 2 has no usable seq");
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":\"2\",\"kind\":\"output\",\"text\":\"b\"}]",
	            "event 2 has no usable seq");
	expect_fail("[{\"seq\":0,\"kind\":\"input\",\"text\":\"a\"}]", "event 1 has no usable seq");
	expect_fail("[{\"seq\":-3,\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":1.5,\"kind\":\"output\",\"text\":\"b\"}]",
	            "event 2 has no usable seq");
	/* a real is not an integer, even with an integral value */
	expect_fail("[{\"seq\":1.0,\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	expect_fail("[{\"seq\":1e0,\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	expect_fail("[{\"seq\":null,\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	expect_fail("[{\"seq\":true,\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	expect_fail("[{\"seq\":[1],\"kind\":\"input\",\"text\":\"a\"}]",
	            "event 1 has no usable seq");
	/* an event that is not even an object has no seq */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"}, 7]",
	            "event 2 has no usable seq");
	/* the first in array order, not in seq order */
	expect_fail("[{\"seq\":5,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":\"x\",\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"seq\":1,\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"kind\":\"output\",\"text\":\"b\"}]",
	            "event 2 has no usable seq");
	/* rule 2 comes before rule 3 (a duplicate earlier in the array) */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":1,\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"seq\":0,\"kind\":\"output\",\"text\":\"b\"}]",
	            "event 3 has no usable seq");
}
END_TEST

/* ---- rule 3: duplicate seq --------------------------------------------- */

START_TEST(test_seq_duplicate)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":4,\"kind\":\"tool_call\"},"
	            "{\"seq\":2,\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"seq\":3,\"kind\":\"input\",\"text\":\"c\"},"
	            "{\"seq\":4,\"kind\":\"output\",\"text\":\"d\"}]",
	            "events 2 and 5 share seq 4");
	/* three holders of one seq: the first repeat, with the first holder */
	expect_fail("[{\"seq\":2,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"input\",\"text\":\"a\"}]",
	            "events 1 and 3 share seq 2");
	/* two repeated seqs: the repeat that comes first in the array wins,
	 * even if its seq is the larger one */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":9,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":9,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"}]",
	            "events 2 and 3 share seq 9");
	/* identical events are still two events */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"}]",
	            "events 1 and 2 share seq 1");
	/* rule 3 comes before rule 4 */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":5,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":5,\"kind\":\"input\",\"text\":\"a\"}]",
	            "events 2 and 3 share seq 5");
}
END_TEST

/* ---- rule 4: gap ------------------------------------------------------- */

START_TEST(test_seq_gap)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"seq\":4,\"kind\":\"input\",\"text\":\"c\"}]",
	            "seq 3 is missing (between 2 and 4)");
	/* out of order in the array: the gap is found in seq order */
	expect_fail("[{\"seq\":6,\"kind\":\"input\",\"text\":\"c\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"output\",\"text\":\"b\"}]",
	            "seq 3 is missing (between 2 and 6)");
	/* the smallest gap */
	expect_fail("[{\"seq\":10,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":12,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":11,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":15,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":7,\"kind\":\"input\",\"text\":\"a\"}]",
	            "seq 8 is missing (between 7 and 10)");
	/* rule 4 comes before rule 5 */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"x\"},"
	            "{\"seq\":4,\"kind\":\"input\",\"text\":\"c\"}]",
	            "seq 3 is missing (between 2 and 4)");
	/* seqs need not start at 1 */
	expect_ok("[{\"seq\":42,\"kind\":\"input\",\"text\":\"a\"},"
	          "{\"seq\":43,\"kind\":\"input\",\"text\":\"b\"}]",
	          "[{\"key\":\"seq-42\",\"input\":\"a\"},{\"key\":\"seq-43\",\"input\":\"b\"}]",
	          "[]", "[null,null]");
}
END_TEST

/* ---- rule 5: unknown kind ---------------------------------------------- */

START_TEST(test_unknown_kind)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_call\"},"
	            "{\"seq\":3,\"kind\":\"output\",\"text\":\"b\"},"
	            "{\"seq\":4,\"kind\":\"x\"}]",
	            "event 4 (seq 4) has unknown kind \"x\"");
	/* position and seq differ: both named; the first in seq order */
	expect_fail("[{\"seq\":3,\"kind\":\"thought\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"Output\",\"text\":\"b\"}]",
	            "event 3 (seq 2) has unknown kind \"Output\"");
	/* rule 5 over the whole timeline before rule 6: an input without
	 * text at seq 1 loses to an unknown kind at seq 3 */
	expect_fail("[{\"seq\":1,\"kind\":\"input\"},"
	            "{\"seq\":2,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":3,\"kind\":\"memory\"}]",
	            "event 3 (seq 3) has unknown kind \"memory\"");
	/* a multi-byte kind is printed whole */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"pens\\u00e9e\"}]",
	            "event 2 (seq 2) has unknown kind \"pens\xc3\xa9"
	            "e\"");
	/* no kind at all (a stored event the import would refuse) */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},{\"seq\":2}]",
	            "event 2 (seq 2) has unknown kind \"\"");
}
END_TEST

/* ---- rule 6: input without text ---------------------------------------- */

START_TEST(test_input_no_text)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\"}]", "input event 1 (seq 1) has no text");
	expect_fail("[{\"seq\":2,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":3,\"kind\":\"input\",\"resource\":\"a\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"b\"}]",
	            "input event 2 (seq 3) has no text");
	/* a text that is not a string is no text */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":5}]",
	            "input event 1 (seq 1) has no text");
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":null}]",
	            "input event 1 (seq 1) has no text");
	/* rule 6 before rule 7 */
	expect_fail("[{\"seq\":1,\"kind\":\"tool_result\"},{\"seq\":2,\"kind\":\"input\"}]",
	            "input event 2 (seq 2) has no text");
	/* an empty text is an (empty) input */
	expect_ok("[{\"seq\":1,\"kind\":\"input\",\"text\":\"\"}]",
	          "[{\"key\":\"seq-1\",\"input\":\"\"}]", "[]", "[null]");
}
END_TEST

/* ---- rule 7: tool_result without resource or text ---------------------- */

START_TEST(test_result_incomplete)
{
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"text\":\"t\"}]",
	            "tool_result event 2 (seq 2) has no resource");
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"\",\"text\":\"t\"}]",
	            "tool_result event 2 (seq 2) has no resource");
	expect_fail("[{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"}]",
	            "tool_result event 1 (seq 2) has no text");
	/* both missing: the resource is named */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\"}]",
	            "tool_result event 2 (seq 2) has no resource");
	/* rule 7 before rule 8 */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"1\"},"
	            "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"2\"},"
	            "{\"seq\":4,\"kind\":\"tool_result\",\"resource\":\"s\"}]",
	            "tool_result event 4 (seq 4) has no text");
	/* an empty recorded result is a result */
	expect_ok("[{\"seq\":1,\"kind\":\"input\",\"text\":\"r\"},"
	          "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"\"}]",
	          "[{\"key\":\"seq-1\",\"input\":\"r\"}]",
	          "[{\"resource\":\"r\",\"response\":\"\"}]", "[null]");
}
END_TEST

/* ---- rule 8 and mocks -------------------------------------------------- */

START_TEST(test_results_dedup)
{
	/* same resource, same text: one mock; tool_call carries no data */
	expect_ok(
	    "[{\"seq\":1,\"kind\":\"input\",\"text\":\"agent:a\"},"
	    "{\"seq\":2,\"kind\":\"tool_call\",\"resource\":\"agent:z\",\"text\":\"zz\"},"
	    "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"agent:a\",\"text\":\"A\"},"
	    "{\"seq\":4,\"kind\":\"tool_result\",\"resource\":\"agent:b\",\"text\":\"B\"},"
	    "{\"seq\":5,\"kind\":\"input\",\"text\":\"agent:a\"},"
	    "{\"seq\":6,\"kind\":\"tool_result\",\"resource\":\"agent:a\",\"text\":\"A\"}]",
	    "[{\"key\":\"seq-1\",\"input\":\"agent:a\"},{\"key\":\"seq-5\",\"input\":\"agent:a\"}]",
	    "[{\"resource\":\"agent:a\",\"response\":\"A\"},"
	    "{\"resource\":\"agent:b\",\"response\":\"B\"}]",
	    "[null,null]");
	/* mocks come in the seq order of each resource's first result,
	 * whatever the array order */
	expect_ok(
	    "[{\"seq\":4,\"kind\":\"tool_result\",\"resource\":\"b\",\"text\":\"B\"},"
	    "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"c\",\"text\":\"C\"},"
	    "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"a\",\"text\":\"A\"},"
	    "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"}]",
	    "[{\"key\":\"seq-1\",\"input\":\"a\"}]",
	    "[{\"resource\":\"a\",\"response\":\"A\"},{\"resource\":\"c\",\"response\":\"C\"},"
	    "{\"resource\":\"b\",\"response\":\"B\"}]",
	    "[null]");
}
END_TEST

START_TEST(test_results_conflict)
{
	expect_fail(
	    "[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	    "{\"seq\":2,\"kind\":\"tool_call\"},"
	    "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"agent:a\",\"text\":\"A\"},"
	    "{\"seq\":4,\"kind\":\"output\",\"text\":\"A\"},"
	    "{\"seq\":5,\"kind\":\"tool_result\",\"resource\":\"agent:a\",\"text\":\"A\"},"
	    "{\"seq\":6,\"kind\":\"input\",\"text\":\"a\"},"
	    "{\"seq\":7,\"kind\":\"tool_result\",\"resource\":\"agent:a\",\"text\":\"A2\"}]",
	    "resource agent:a has two different recorded results (seq 3, 7)");
	/* a text differing only by a trailing newline differs */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"A\"},"
	            "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"A\\n\"}]",
	            "resource r has two different recorded results (seq 2, 3)");
	/* two conflicting resources: the one whose differing result comes
	 * first in seq order (z at seq 5 before a at seq 6) */
	expect_fail("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"a\",\"text\":\"1\"},"
	            "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"z\",\"text\":\"1\"},"
	            "{\"seq\":4,\"kind\":\"tool_result\",\"resource\":\"z\",\"text\":\"1\"},"
	            "{\"seq\":5,\"kind\":\"tool_result\",\"resource\":\"z\",\"text\":\"2\"},"
	            "{\"seq\":6,\"kind\":\"tool_result\",\"resource\":\"a\",\"text\":\"2\"}]",
	            "resource z has two different recorded results (seq 3, 5)");
	/* out of order in the array: seqs, not positions */
	expect_fail("[{\"seq\":9,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"B\"},"
	            "{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	            "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"A\"},"
	            "{\"seq\":3,\"kind\":\"tool_call\"},{\"seq\":4,\"kind\":\"tool_call\"},"
	            "{\"seq\":5,\"kind\":\"tool_call\"},{\"seq\":6,\"kind\":\"tool_call\"},"
	            "{\"seq\":7,\"kind\":\"tool_call\"},{\"seq\":8,\"kind\":\"tool_call\"}]",
	            "resource r has two different recorded results (seq 2, 9)");
}
END_TEST

/* A long resource is named by its first 200 bytes, cut on a character,
 * and the reason that names it is recorded whole: 257 bytes, more than a
 * request error's message holds. */
START_TEST(test_results_conflict_long_resource)
{
	struct model_timeline tl;
	struct model_error shorter;
	struct model_reason why;
	json_t *ev;
	json_t *res;
	char want[512];
	char *r;
	size_t i;

	/* 199 'a' then 'é' (2 bytes): the cut at 200 falls inside 'é' */
	r = model_xmalloc(300);
	memset(r, 'a', 199);
	for (i = 199; i + 1 < 299; i += 2) {
		r[i] = (char)0xc3;
		r[i + 1] = (char)0xa9;
	}
	r[i] = '\0';
	res = json_string(r);
	ck_assert_ptr_nonnull(res);
	ev = json_pack("[{s:i,s:s,s:s},{s:i,s:s,s:O,s:s},{s:i,s:s,s:O,s:s}]", "seq", 1, "kind",
	               "input", "text", "a", "seq", 2, "kind", "tool_result", "resource", res,
	               "text", "A", "seq", 3, "kind", "tool_result", "resource", res, "text", "B");
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	snprintf(want, sizeof(want),
	         "resource %.199s\xe2\x80\xa6 has two different recorded results (seq 2, 3)", r);
	ck_assert_str_eq(why.text, want);
	/* "resource " + 199 'a' + '…' + the 46 bytes after it */
	ck_assert_uint_eq(strlen(why.text), 257);
	ck_assert_uint_gt(strlen(why.text), sizeof(shorter.message) - 1);
	json_decref(ev);
	json_decref(res);
	free(r);
}
END_TEST

/* ---- steps, keys, recorded -------------------------------------------- */

START_TEST(test_out_of_order)
{
	/* inputs shuffled in the array come back in seq order */
	expect_ok("[{\"seq\":5,\"kind\":\"input\",\"text\":\"third\"},"
	          "{\"seq\":2,\"kind\":\"output\",\"text\":\"o1\"},"
	          "{\"seq\":3,\"kind\":\"input\",\"text\":\"second\"},"
	          "{\"seq\":1,\"kind\":\"input\",\"text\":\"first\"},"
	          "{\"seq\":6,\"kind\":\"output\",\"text\":\"o3\"},"
	          "{\"seq\":4,\"kind\":\"output\",\"text\":\"o2\"}]",
	          "[{\"key\":\"seq-1\",\"input\":\"first\"},"
	          "{\"key\":\"seq-3\",\"input\":\"second\"},"
	          "{\"key\":\"seq-5\",\"input\":\"third\"}]",
	          "[]", "[\"o1\",\"o2\",\"o3\"]");
}
END_TEST

START_TEST(test_keys)
{
	/* the event's key, else "seq-<seq>" (the seq, not the position);
	 * an empty key counts as none; keys need not be unique */
	expect_ok("[{\"seq\":7,\"kind\":\"input\",\"text\":\"a\",\"key\":\"lookup\"},"
	          "{\"seq\":8,\"kind\":\"input\",\"text\":\"b\"},"
	          "{\"seq\":9,\"kind\":\"input\",\"text\":\"c\",\"key\":\"\"},"
	          "{\"seq\":10,\"kind\":\"input\",\"text\":\"d\",\"key\":\"lookup\"},"
	          "{\"seq\":11,\"kind\":\"output\",\"text\":\"o\",\"key\":\"ignored\"}]",
	          "[{\"key\":\"lookup\",\"input\":\"a\"},{\"key\":\"seq-8\",\"input\":\"b\"},"
	          "{\"key\":\"seq-9\",\"input\":\"c\"},{\"key\":\"lookup\",\"input\":\"d\"}]",
	          "[]", "[null,null,null,\"o\"]");
}
END_TEST

START_TEST(test_duplicate_inputs)
{
	/* the same text at different seqs: two steps, in order */
	expect_ok(
	    "[{\"seq\":3,\"kind\":\"input\",\"text\":\"again\"},"
	    "{\"seq\":1,\"kind\":\"input\",\"text\":\"again\"},"
	    "{\"seq\":2,\"kind\":\"input\",\"text\":\"between\"},"
	    "{\"seq\":4,\"kind\":\"input\",\"text\":\"again\"}]",
	    "[{\"key\":\"seq-1\",\"input\":\"again\"},{\"key\":\"seq-2\",\"input\":\"between\"},"
	    "{\"key\":\"seq-3\",\"input\":\"again\"},{\"key\":\"seq-4\",\"input\":\"again\"}]",
	    "[]", "[null,null,null,null]");
}
END_TEST

START_TEST(test_inputs_only)
{
	expect_ok("[{\"seq\":1,\"kind\":\"input\",\"text\":\"a\"},"
	          "{\"seq\":2,\"kind\":\"input\",\"text\":\"b\"}]",
	          "[{\"key\":\"seq-1\",\"input\":\"a\"},{\"key\":\"seq-2\",\"input\":\"b\"}]", "[]",
	          "[null,null]");
}
END_TEST

START_TEST(test_recorded_mapping)
{
	/* output before the first input: nothing; several outputs: the last;
	 * a step without output: null; an output without text: nothing;
	 * tool events between do not end a step */
	expect_ok("[{\"seq\":1,\"kind\":\"output\",\"text\":\"greeting\"},"
	          "{\"seq\":2,\"kind\":\"input\",\"text\":\"i1\"},"
	          "{\"seq\":3,\"kind\":\"output\",\"text\":\"partial\"},"
	          "{\"seq\":4,\"kind\":\"tool_call\"},"
	          "{\"seq\":5,\"kind\":\"output\",\"text\":\"final 1\"},"
	          "{\"seq\":6,\"kind\":\"input\",\"text\":\"i2\"},"
	          "{\"seq\":7,\"kind\":\"input\",\"text\":\"i3\"},"
	          "{\"seq\":8,\"kind\":\"output\",\"text\":\"final 3\"},"
	          "{\"seq\":9,\"kind\":\"output\"},"
	          "{\"seq\":10,\"kind\":\"input\",\"text\":\"i4\"},"
	          "{\"seq\":11,\"kind\":\"output\"},"
	          "{\"seq\":12,\"kind\":\"input\",\"text\":\"i5\"},"
	          "{\"seq\":13,\"kind\":\"output\",\"text\":\"\"}]",
	          "[{\"key\":\"seq-2\",\"input\":\"i1\"},{\"key\":\"seq-6\",\"input\":\"i2\"},"
	          "{\"key\":\"seq-7\",\"input\":\"i3\"},{\"key\":\"seq-10\",\"input\":\"i4\"},"
	          "{\"key\":\"seq-12\",\"input\":\"i5\"}]",
	          "[]", "[\"final 1\",null,\"final 3\",null,\"\"]");
}
END_TEST

/* The timeline holds its own values: changing the events afterwards
 * changes nothing in it, and clearing twice is fine. */
START_TEST(test_timeline_owned)
{
	struct model_timeline tl;
	json_t *ev;
	struct model_reason why;

	ev = unit_json("[{\"seq\":1,\"kind\":\"input\",\"text\":\"r\",\"key\":\"k\"},"
	               "{\"seq\":2,\"kind\":\"tool_result\",\"resource\":\"r\",\"text\":\"R\"},"
	               "{\"seq\":3,\"kind\":\"output\",\"text\":\"R\"}]");
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), 0);
	json_string_set(json_object_get(json_array_get(ev, 0), "text"), "changed");
	json_string_set(json_object_get(json_array_get(ev, 0), "key"), "changed");
	json_string_set(json_object_get(json_array_get(ev, 1), "resource"), "changed");
	json_string_set(json_object_get(json_array_get(ev, 1), "text"), "changed");
	json_string_set(json_object_get(json_array_get(ev, 2), "text"), "changed");
	json_decref(ev);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tl.steps, 0), "input")),
	                 "r");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tl.steps, 0), "key")),
	                 "k");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(tl.mocks, 0), "resource")), "r");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_array_get(tl.mocks, 0), "response")), "R");
	ck_assert_str_eq(json_string_value(json_array_get(tl.recorded, 0)), "R");
	model_timeline_clear(&tl);
	model_timeline_clear(&tl);
	model_timeline_clear(NULL);
}
END_TEST

START_TEST(test_why_buffer)
{
	struct model_timeline tl;
	json_t *ev;
	struct model_reason why;

	ev = unit_json("[]");
	/* no reason asked for */
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, NULL), -1);
	ck_assert_ptr_null(tl.steps);
	/* one asked for: filled, NUL-terminated */
	memset(&why, 'x', sizeof(why));
	ck_assert_int_eq(model_timeline_rebuild(ev, &tl, &why), -1);
	ck_assert_str_eq(why.text, "session has no input");
	json_decref(ev);
}
END_TEST

/* ---- divergence -------------------------------------------------------- */

static void expect_divergence(const char *recorded, const char *outputs, const char *want)
{
	json_t *rec;
	json_t *out;
	json_t *got;
	json_t *w;
	char *dump;

	rec = unit_json(recorded);
	out = unit_json(outputs);
	w = unit_json(want);
	got = model_replay_divergence(rec, out);
	ck_assert_ptr_nonnull(got);
	dump = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_msg(json_equal(got, w), "divergence %s", dump);
	free(dump);
	json_decref(got);
	json_decref(w);
	json_decref(out);
	json_decref(rec);
}

#define OUT(seq, key, text)                                                                        \
	"{\"type\":\"step\",\"seq\":" #seq ",\"key\":\"" key                                       \
	"\",\"input\":\"i\",\"output\":\"" text "\",\"status\":\"ok\",\"error_kind\":null}"

START_TEST(test_divergence)
{
	/* all equal */
	expect_divergence("[\"a\",\"b\"]", "[" OUT(1, "k1", "a") "," OUT(2, "k2", "b") "]",
	                  "{\"compared\":2,\"diverging\":0,\"first\":null}");
	/* nothing recorded: nothing compared */
	expect_divergence("[null,null]", "[" OUT(1, "k1", "a") "," OUT(2, "k2", "b") "]",
	                  "{\"compared\":0,\"diverging\":0,\"first\":null}");
	expect_divergence("[]", "[]", "{\"compared\":0,\"diverging\":0,\"first\":null}");
	/* counts and the first diverging step; null steps skipped */
	expect_divergence("[\"a\",null,\"c\",\"d\",\"e\"]",
	                  "[" OUT(1, "k1", "a") "," OUT(2, "k2", "x") "," OUT(
	                      3, "seq-5", "C") "," OUT(4, "k4", "d") "," OUT(5, "k5", "E") "]",
	                  "{\"compared\":4,\"diverging\":2,\"first\":{\"seq\":3,\"key\":\"seq-5\","
	                  "\"recorded\":\"c\",\"replayed\":\"C\"}}");
	/* byte for byte: a trailing newline diverges */
	expect_divergence("[\"a\"]", "[" OUT(1, "k1", "a\\n") "]",
	                  "{\"compared\":1,\"diverging\":1,\"first\":{\"seq\":1,\"key\":\"k1\","
	                  "\"recorded\":\"a\",\"replayed\":\"a\\n\"}}");
	/* a mock miss is an output like any other */
	expect_divergence("[\"a\"]", "[" OUT(1, "k1", "[[mock-miss:i]]") "]",
	                  "{\"compared\":1,\"diverging\":1,\"first\":{\"seq\":1,\"key\":\"k1\","
	                  "\"recorded\":\"a\",\"replayed\":\"[[mock-miss:i]]\"}}");
	/* a run that stopped early: missing outputs diverge */
	expect_divergence("[\"a\",\"b\",\"c\"]", "[" OUT(1, "k1", "a") "]",
	                  "{\"compared\":3,\"diverging\":2,\"first\":{\"seq\":2,\"key\":null,"
	                  "\"recorded\":\"b\",\"replayed\":null}}");
}
END_TEST

/* ---- import check ------------------------------------------------------ */

static void expect_check_ok(json_t *body)
{
	struct model_error err;
	json_t *norm;

	norm = NULL;
	memset(&err, 0, sizeof(err));
	ck_assert_msg(model_session_check(body, &norm, &err) == 0, "%s: %s", err.field,
	              err.message);
	ck_assert_ptr_nonnull(norm);
	ck_assert_ptr_ne(norm, body);
	ck_assert(json_equal(norm, body));
	json_decref(norm);
}

static void expect_check_err(json_t *body, enum model_err code, const char *field,
                             const char *message)
{
	struct model_error err;
	json_t *norm;

	norm = (json_t *)&err; /* untouched on failure */
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(model_session_check(body, &norm, &err), -1);
	ck_assert_ptr_eq(norm, (json_t *)&err);
	ck_assert_msg(err.code == code, "code %d (want %d): %s", err.code, code, err.message);
	ck_assert_str_eq(err.field, field);
	if (message)
		ck_assert_str_eq(err.message, message);
}

static void check_text(const char *text, enum model_err code, const char *field,
                       const char *message)
{
	json_t *body;

	body = unit_json(text);
	if (code == MODEL_OK)
		expect_check_ok(body);
	else
		expect_check_err(body, code, field, message);
	json_decref(body);
}

/* a session with one event {seq 1, kind, member: string of n bytes} */
static json_t *one_event(const char *kind, const char *member, size_t n)
{
	return json_pack("{s:s,s:[{s:i,s:s,s:o}]}", "external_id", "x", "events", "seq", 1, "kind",
	                 kind, member, unit_jstr_rep('a', n));
}

START_TEST(test_check_ok)
{
	/* no events is a valid import (and an impossible replay) */
	check_text("{\"external_id\":\"x\",\"events\":[]}", MODEL_OK, NULL, NULL);
	/* a broken history is imported as recorded: any seq, any kind */
	check_text(
	    "{\"external_id\":\"x\",\"events\":[{\"kind\":\"input\"},"
	    "{\"seq\":\"two\",\"kind\":\"thought\",\"text\":\"t\"},"
	    "{\"seq\":1.5,\"kind\":\"tool_result\",\"resource\":\"\",\"key\":\"\"},"
	    "{\"seq\":null,\"kind\":\"output\",\"text\":\"\"},"
	    "{\"seq\":{\"a\":[1,\"b\"]},\"kind\":\"tool_call\"},"
	    "{\"seq\":-1,\"kind\":\"input\",\"text\":\"a\",\"resource\":\"r\",\"key\":\"k\"}]}",
	    MODEL_OK, NULL, NULL);
}
END_TEST

START_TEST(test_check_events_bound)
{
	json_t *body;
	json_t *events;
	size_t i;

	events = json_array();
	for (i = 0; i < MODEL_MAX_SESSION_EVENTS; i++)
		json_array_append_new(events, json_pack("{s:I,s:s,s:s}", "seq", (json_int_t)i + 1,
		                                        "kind", "input", "text", "a"));
	body = json_pack("{s:s,s:O}", "external_id", "x", "events", events);
	expect_check_ok(body);
	json_decref(body);
	json_array_append_new(
	    events, json_pack("{s:i,s:s,s:s}", "seq", 1001, "kind", "input", "text", "a"));
	body = json_pack("{s:s,s:O}", "external_id", "x", "events", events);
	expect_check_err(body, MODEL_E_LIMIT, "events", "events must hold at most 1000 items");
	json_decref(body);
	/* a malformed event beyond the bound still wins */
	json_array_append_new(events, json_integer(3));
	body = json_pack("{s:s,s:O}", "external_id", "x", "events", events);
	expect_check_err(body, MODEL_E_MALFORMED, "events[1001]", "events[1001] must be an object");
	json_decref(body);
	json_decref(events);
}
END_TEST

START_TEST(test_check_external_id)
{
	json_t *body;

	body = json_pack("{s:o,s:[]}", "external_id", unit_jstr_rep('e', 128), "events");
	expect_check_ok(body);
	json_decref(body);
	body = json_pack("{s:o,s:[]}", "external_id", unit_jstr_rep('e', 129), "events");
	expect_check_err(body, MODEL_E_LIMIT, "external_id",
	                 "external_id must be at most 128 bytes");
	json_decref(body);
	check_text("{\"external_id\":\"\",\"events\":[]}", MODEL_E_LIMIT, "external_id",
	           "external_id must not be empty");
	check_text("{\"events\":[]}", MODEL_E_MALFORMED, "external_id", "external_id is required");
	check_text("{\"external_id\":12,\"events\":[]}", MODEL_E_MALFORMED, "external_id",
	           "external_id must be a string");
	check_text("{\"external_id\":null,\"events\":[]}", MODEL_E_MALFORMED, "external_id",
	           "external_id must be a string");
}
END_TEST

START_TEST(test_check_text_bounds)
{
	static const struct {
		const char *kind;
		const char *member;
		size_t max;
	} cases[] = {
	    {"input", "text", 8192},           {"output", "text", 8192},
	    {"tool_result", "text", 65536},    {"tool_call", "text", 65536},
	    {"thought", "text", 65536},        {"input", "resource", 8192},
	    {"tool_result", "resource", 8192}, {"input", "key", 128},
	};
	json_t *body;
	size_t i;
	char field[32];
	char msg[96];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		body = one_event(cases[i].kind, cases[i].member, cases[i].max);
		expect_check_ok(body);
		json_decref(body);
		body = one_event(cases[i].kind, cases[i].member, cases[i].max + 1);
		snprintf(field, sizeof(field), "events[0].%s", cases[i].member);
		snprintf(msg, sizeof(msg), "%s must be at most %zu bytes", field, cases[i].max);
		expect_check_err(body, MODEL_E_LIMIT, field, msg);
		json_decref(body);
		/* empty is fine at import */
		body = one_event(cases[i].kind, cases[i].member, 0);
		expect_check_ok(body);
		json_decref(body);
	}
}
END_TEST

START_TEST(test_check_kind)
{
	json_t *body;

	body = json_pack("{s:s,s:[{s:i,s:o}]}", "external_id", "x", "events", "seq", 1, "kind",
	                 unit_jstr_rep('k', 32));
	expect_check_ok(body);
	json_decref(body);
	body = json_pack("{s:s,s:[{s:i,s:o}]}", "external_id", "x", "events", "seq", 1, "kind",
	                 unit_jstr_rep('k', 33));
	expect_check_err(body, MODEL_E_LIMIT, "events[0].kind",
	                 "events[0].kind must be at most 32 bytes");
	json_decref(body);
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"\"}]}", MODEL_E_LIMIT,
	           "events[0].kind", "events[0].kind must not be empty");
	check_text(
	    "{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\"},{\"seq\":2}]}",
	    MODEL_E_MALFORMED, "events[1].kind", "events[1].kind is required");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":1}]}", MODEL_E_MALFORMED,
	           "events[0].kind", "events[0].kind must be a string");
}
END_TEST

START_TEST(test_check_unknown_fields)
{
	check_text("{\"external_id\":\"x\",\"events\":[],\"name\":\"n\"}", MODEL_E_MALFORMED,
	           "name", "unknown field \"name\"");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\"},"
	           "{\"seq\":2,\"kind\":\"input\",\"payload\":{}}]}",
	           MODEL_E_MALFORMED, "events[1].payload", "unknown field \"events[1].payload\"");
	/* case matters */
	check_text("{\"external_id\":\"x\",\"events\":[{\"Seq\":1,\"kind\":\"input\"}]}",
	           MODEL_E_MALFORMED, "events[0].Seq", "unknown field \"events[0].Seq\"");
}
END_TEST

START_TEST(test_check_types)
{
	struct model_error err;
	json_t *body;
	json_t *norm;

	norm = NULL;
	body = unit_json("[]");
	ck_assert_int_eq(model_session_check(body, &norm, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_MALFORMED);
	ck_assert_str_eq(err.message, "body must be a JSON object");
	ck_assert_ptr_null(norm);
	json_decref(body);
	ck_assert_int_eq(model_session_check(NULL, &norm, &err), -1);
	ck_assert_int_eq(err.code, MODEL_E_MALFORMED);

	check_text("{\"external_id\":\"x\"}", MODEL_E_MALFORMED, "events", "events is required");
	check_text("{\"external_id\":\"x\",\"events\":{}}", MODEL_E_MALFORMED, "events",
	           "events must be an array");
	check_text("{\"external_id\":\"x\",\"events\":[\"e\"]}", MODEL_E_MALFORMED, "events[0]",
	           "events[0] must be an object");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\",\"text\":1}]}",
	           MODEL_E_MALFORMED, "events[0].text", "events[0].text must be a string");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\","
	           "\"text\":null}]}",
	           MODEL_E_MALFORMED, "events[0].text", "events[0].text must be a string");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"tool_result\","
	           "\"resource\":null}]}",
	           MODEL_E_MALFORMED, "events[0].resource", "events[0].resource must be a string");
	check_text("{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\","
	           "\"key\":[\"k\"]}]}",
	           MODEL_E_MALFORMED, "events[0].key", "events[0].key must be a string");
	/* a malformed problem later wins over an earlier refusal */
	check_text("{\"external_id\":\"\",\"events\":[{\"seq\":1,\"kind\":\"input\","
	           "\"key\":5}]}",
	           MODEL_E_MALFORMED, "events[0].key", "events[0].key must be a string");
	/* among refusals, the first in document order */
	check_text("{\"external_id\":\"\",\"events\":[{\"seq\":1,\"kind\":\"\"}]}", MODEL_E_LIMIT,
	           "external_id", "external_id must not be empty");
}
END_TEST

START_TEST(test_check_utf8)
{
	json_t *body;

	/* built in code: jansson's decoder would refuse these itself */
	body = json_pack("{s:s,s:[{s:i,s:s,s:o}]}", "external_id", "x", "events", "seq", 1, "kind",
	                 "input", "text", json_stringn_nocheck("a\xff", 2));
	expect_check_err(body, MODEL_E_MALFORMED, "events[0].text",
	                 "events[0].text must be valid UTF-8 without NUL bytes");
	json_decref(body);
	body = json_pack("{s:o,s:[]}", "external_id", json_stringn_nocheck("a\0b", 3), "events");
	expect_check_err(body, MODEL_E_MALFORMED, "external_id",
	                 "external_id must be valid UTF-8 without NUL bytes");
	json_decref(body);
	body = json_pack("{s:s,s:[{s:o,s:s}]}", "external_id", "x", "events", "seq",
	                 json_stringn_nocheck("\xed\xa0\x80", 3), "kind", "input");
	expect_check_err(body, MODEL_E_MALFORMED, "events[0].seq",
	                 "events[0].seq must be valid UTF-8 without NUL bytes");
	json_decref(body);
}
END_TEST

START_TEST(test_check_credentials)
{
	static const char *const members[] = {"text", "resource", "key"};
	json_t *body;
	char aws[32];
	char field[32];
	char msg[96];
	size_t i;

	/* assembled here so that the source holds no key-shaped string */
	snprintf(aws, sizeof(aws), "%s%s", "AKIA", "IOSFODNN7EXAMPLE");
	body = json_pack("{s:s,s:[]}", "external_id", aws, "events");
	expect_check_err(body, MODEL_E_INVALID, "external_id",
	                 "external_id looks like a credential (AWS access key id)");
	json_decref(body);
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		body = json_pack("{s:s,s:[{s:i,s:s,s:s+}]}", "external_id", "x", "events", "seq", 1,
		                 "kind", "input", members[i], "id ", aws);
		snprintf(field, sizeof(field), "events[0].%s", members[i]);
		snprintf(msg, sizeof(msg), "%s looks like a credential (AWS access key id)", field);
		expect_check_err(body, MODEL_E_INVALID, field, msg);
		json_decref(body);
	}
	/* inside a seq, as a value or as an object key */
	body = json_pack("{s:s,s:[{s:[s],s:s}]}", "external_id", "x", "events", "seq", aws, "kind",
	                 "input");
	expect_check_err(body, MODEL_E_INVALID, "events[0].seq",
	                 "events[0].seq looks like a credential (AWS access key id)");
	json_decref(body);
	body = json_pack("{s:s,s:[{s:{s:i},s:s}]}", "external_id", "x", "events", "seq", aws, 1,
	                 "kind", "input");
	expect_check_err(body, MODEL_E_INVALID, "events[0].seq",
	                 "events[0].seq looks like a credential (AWS access key id)");
	json_decref(body);
	/* a credential is reported before the bound of the same string */
	body = json_pack("{s:s,s:[{s:i,s:s,s:s+}]}", "external_id", "x", "events", "seq", 1, "kind",
	                 "input", "key", aws,
	                 " padding that makes this key longer than the "
	                 "one hundred and twenty-eight bytes that a key may "
	                 "hold, so the bound would apply too");
	expect_check_err(body, MODEL_E_INVALID, "events[0].key",
	                 "events[0].key looks like a credential (AWS access key id)");
	json_decref(body);
	/* an e-mail address is not a credential */
	check_text("{\"external_id\":\"user1@example.test\",\"events\":[]}", MODEL_OK, NULL, NULL);
}
END_TEST

/* ---- the sample sessions (tests/fixtures/sessions) -------------------- */

/* What inproc-mock does: each step's input resolved as a resource. */
static json_t *simulate(struct model_timeline *tl)
{
	json_t *outs;
	json_t *step;
	const char *in;
	const char *resp;
	char *marker;
	size_t len;
	size_t i;

	outs = json_array();
	json_array_foreach(tl->steps, i, step)
	{
		in = json_string_value(json_object_get(step, "input"));
		if (model_mock_resolve(tl->mocks, NULL, in, strlen(in), &resp, &len)) {
			json_array_append_new(
			    outs, json_pack("{s:I,s:O,s:s%}", "seq", (json_int_t)i + 1, "key",
			                    json_object_get(step, "key"), "output", resp, len));
		} else {
			marker = model_mock_miss_marker(in, strlen(in), &len);
			json_array_append_new(
			    outs, json_pack("{s:I,s:O,s:s%}", "seq", (json_int_t)i + 1, "key",
			                    json_object_get(step, "key"), "output", marker, len));
			free(marker);
		}
	}
	return outs;
}

/* Load a fixture, check it imports, rebuild it. */
static json_t *fixture_events(const char *name)
{
	struct model_error err;
	json_t *body;
	json_t *norm;
	json_t *events;

	body = load_fixture(name);
	norm = NULL;
	ck_assert_msg(model_session_check(body, &norm, &err) == 0, "%s: %s: %s", name, err.field,
	              err.message);
	events = json_incref(json_object_get(norm, "events"));
	json_decref(norm);
	json_decref(body);
	return events;
}

START_TEST(test_fixture_replayable)
{
	struct model_timeline tl;
	json_t *events;
	json_t *outs;
	json_t *div;
	json_t *want;
	struct model_reason why;

	events = fixture_events("replayable.json");
	/* deliberately out of seq order in the file */
	ck_assert_int_ne(json_integer_value(json_object_get(json_array_get(events, 0), "seq")), 1);
	ck_assert_int_eq(model_timeline_rebuild(events, &tl, &why), 0);
	want = unit_json("[{\"key\":\"first-lookup\",\"input\":\"agent:user1@example.test\"},"
	                 "{\"key\":\"seq-5\",\"input\":\"agent:user2@example.test\"},"
	                 "{\"key\":\"seq-9\",\"input\":\"agent:user1@example.test\"}]");
	ck_assert(json_equal(tl.steps, want));
	json_decref(want);
	want = unit_json("[{\"resource\":\"agent:user1@example.test\","
	                 "\"response\":\"first synthetic account\"},"
	                 "{\"resource\":\"agent:user2@example.test\","
	                 "\"response\":\"second synthetic account\"}]");
	ck_assert(json_equal(tl.mocks, want));
	json_decref(want);
	want = unit_json("[\"first synthetic account\",\"second synthetic account\","
	                 "\"first synthetic account\"]");
	ck_assert(json_equal(tl.recorded, want));
	json_decref(want);
	/* a replay reproduces every recorded output */
	outs = simulate(&tl);
	div = model_replay_divergence(tl.recorded, outs);
	want = unit_json("{\"compared\":3,\"diverging\":0,\"first\":null}");
	ck_assert(json_equal(div, want));
	json_decref(want);
	json_decref(div);
	json_decref(outs);
	model_timeline_clear(&tl);
	json_decref(events);
}
END_TEST

START_TEST(test_fixture_diverging)
{
	struct model_timeline tl;
	json_t *events;
	json_t *outs;
	json_t *div;
	json_t *want;
	struct model_reason why;

	events = fixture_events("diverging.json");
	ck_assert_int_eq(model_timeline_rebuild(events, &tl, &why), 0);
	ck_assert_uint_eq(json_array_size(tl.steps), 3);
	outs = simulate(&tl);
	div = model_replay_divergence(tl.recorded, outs);
	want = unit_json("{\"compared\":3,\"diverging\":1,\"first\":{\"seq\":2,\"key\":\"seq-5\","
	                 "\"recorded\":\"second synthetic account, as the old agent worded it\","
	                 "\"replayed\":\"second synthetic account\"}}");
	ck_assert_msg(json_equal(div, want), "%s", json_dumps(div, JSON_COMPACT));
	json_decref(want);
	json_decref(div);
	json_decref(outs);
	model_timeline_clear(&tl);
	json_decref(events);
}
END_TEST

START_TEST(test_fixture_degraded)
{
	static const struct {
		const char *file;
		const char *why;
	} cases[] = {
	    {"gap.json", "seq 3 is missing (between 2 and 4)"},
	    {"duplicate-seq.json", "events 2 and 4 share seq 2"},
	    {"no-input.json", "session has no input"},
	    {"unknown-kind.json", "event 2 (seq 2) has unknown kind \"thought\""},
	};
	struct model_timeline tl;
	json_t *events;
	struct model_reason why;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		events = fixture_events(cases[i].file);
		ck_assert_int_eq(model_timeline_rebuild(events, &tl, &why), -1);
		ck_assert_str_eq(why.text, cases[i].why);
		json_decref(events);
	}
}
END_TEST

START_TEST(test_fixture_jsonl)
{
	struct model_timeline tl;
	struct model_error err;
	struct model_reason why;
	json_error_t jerr;
	json_t *body;
	json_t *norm;
	FILE *f;
	char path[512];
	char line[8192];
	int lines;

	snprintf(path, sizeof(path), "%s/sessions.jsonl", OLV_SESSIONS_DIR);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	lines = 0;
	while (fgets(line, sizeof(line), f)) {
		body = json_loads(line, 0, &jerr);
		ck_assert_msg(body != NULL, "line %d: %s", lines + 1, jerr.text);
		ck_assert_int_eq(model_session_check(body, &norm, &err), 0);
		ck_assert_msg(model_timeline_rebuild(json_object_get(norm, "events"), &tl, &why) ==
		                  0,
		              "line %d: %s", lines + 1, why.text);
		model_timeline_clear(&tl);
		json_decref(norm);
		json_decref(body);
		lines++;
	}
	fclose(f);
	ck_assert_int_eq(lines, 2);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const rebuild[] = {test_empty_session,     test_seq_unusable,
	                                test_seq_duplicate,     test_seq_gap,
	                                test_unknown_kind,      test_input_no_text,
	                                test_result_incomplete, test_results_dedup,
	                                test_results_conflict,  test_results_conflict_long_resource,
	                                test_out_of_order,      test_keys,
	                                test_duplicate_inputs,  test_inputs_only,
	                                test_recorded_mapping,  test_timeline_owned,
	                                test_why_buffer,        NULL};
	const TTest *const divergence[] = {test_divergence, NULL};
	const TTest *const check[] = {test_check_ok,          test_check_events_bound,
	                              test_check_external_id, test_check_text_bounds,
	                              test_check_kind,        test_check_unknown_fields,
	                              test_check_types,       test_check_utf8,
	                              test_check_credentials, NULL};
	const TTest *const fixtures[] = {test_fixture_replayable, test_fixture_diverging,
	                                 test_fixture_degraded, test_fixture_jsonl, NULL};
	Suite *s;

	s = suite_create("history");
	unit_tcase(s, "rebuild", rebuild);
	unit_tcase(s, "divergence", divergence);
	unit_tcase(s, "check", check);
	unit_tcase(s, "fixtures", fixtures);
	return s;
}
