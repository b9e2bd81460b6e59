/*
 * The agent's log of a run (model/runlog.c): cleaning to harmless UTF-8,
 * sequences cut between chunks, the cap and its count, the mark.
 */
#include <check.h>
#include <string.h>

#include "model/runlog.h"
#include "tests/unit/unit.h"

#define FFFD "\xef\xbf\xbd"

/* The cleaned text of the chunks (NULL-terminated), fed one by one. */
static const char *cleaned(struct model_runlog *l, const char *const *chunks)
{
	size_t i;

	model_runlog_init(l);
	for (i = 0; chunks[i]; i++)
		model_runlog_add(l, chunks[i], strlen(chunks[i]));
	model_runlog_end(l);
	return l->text.data;
}

START_TEST(test_clean_controls_and_bad_bytes)
{
	static const char *const plain[] = {"a\tb\nc é € 😀\n", NULL};
	static const char *const ctl[] = {"\033[31mred\r\n\x7f|\xc2\x85|\xc2\xa0", NULL};
	static const char *const bad[] = {"\xff \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \x80", NULL};
	struct model_runlog l;

	/* newline, tab and every valid character but the controls: as they are */
	ck_assert_str_eq(cleaned(&l, plain), "a\tb\nc é € 😀\n");
	ck_assert_int_eq(l.dropped, 0);
	model_runlog_release(&l);
	/* ESC, CR, DEL and the C1 control U+0085 each become U+FFFD; U+00A0 stays */
	ck_assert_str_eq(cleaned(&l, ctl), FFFD "[31mred" FFFD "\n" FFFD "|" FFFD "|\xc2\xa0");
	model_runlog_release(&l);
	/* a stray byte, an overlong form, a surrogate, past U+10FFFF, a lone
	 * continuation: one U+FFFD a byte */
	ck_assert_str_eq(cleaned(&l, bad),
	                 FFFD " " FFFD FFFD " " FFFD FFFD FFFD " " FFFD FFFD FFFD FFFD " " FFFD);
	ck_assert(model_runlog_is_clean(l.text.data, l.text.len));
	ck_assert(!model_runlog_is_clean("a\033b", 3));
	ck_assert(!model_runlog_is_clean("a\xff", 2));
	ck_assert(!model_runlog_is_clean("a\0b", 3));
	model_runlog_release(&l);
}
END_TEST

/* A character cut between two chunks (the pipe's reads cut anywhere) is
 * joined, not replaced; one cut at the end of the log is replaced. */
START_TEST(test_clean_across_chunks)
{
	static const char *const euro[] = {"a\xe2", "\x82",
	                                   "\xac"
	                                   "b",
	                                   NULL};
	static const char *const emoji[] = {"\xf0\x9f", "\x98\x80", NULL};
	static const char *const broken[] = {"\xe2\x82", "x", NULL};
	static const char *const tail[] = {"ok\xf0\x9f\x98", NULL};
	struct model_runlog l;

	ck_assert_str_eq(cleaned(&l, euro), "a€b");
	model_runlog_release(&l);
	ck_assert_str_eq(cleaned(&l, emoji), "😀");
	model_runlog_release(&l);
	ck_assert_str_eq(cleaned(&l, broken), FFFD FFFD "x");
	model_runlog_release(&l);
	ck_assert_str_eq(cleaned(&l, tail), "ok" FFFD FFFD FFFD);
	model_runlog_release(&l);
}
END_TEST

/* The cap: exactly MODEL_RUN_LOG_MAX bytes kept (a prefix), every agent
 * byte after the first that did not fit counted; the mark says how many. */
START_TEST(test_cap_and_mark)
{
	static char big[MODEL_RUN_LOG_MAX];
	struct model_runlog l;
	struct model_buf shown;
	char mark[MODEL_RUN_LOG_MARK_BYTES];

	memset(big, 'x', sizeof(big));
	model_runlog_init(&l);
	model_runlog_add(&l, big, sizeof(big) - 2);
	/* a 3-byte character that does not fit in the 2 bytes left: dropped
	 * whole, and everything after it too, even what would fit */
	model_runlog_add(&l, "\xe2\x82\xac", 3);
	model_runlog_add(&l, "\033y", 2);
	ck_assert_uint_eq(l.text.len, sizeof(big) - 2);
	ck_assert_int_eq(l.dropped, 5);
	model_runlog_release(&l);

	model_runlog_mark(5, mark, sizeof(mark));
	ck_assert_str_eq(mark, "[[log truncated: 5 bytes dropped]]");
	model_buf_init(&shown, 1024);
	ck_assert_int_eq(model_runlog_shown(&shown, "abc", 3, 5), 0);
	ck_assert_str_eq(shown.data, "abc\n[[log truncated: 5 bytes dropped]]\n");
	model_buf_reset(&shown);
	ck_assert_int_eq(model_runlog_shown(&shown, "abc\n", 4, 0), 0);
	ck_assert_str_eq(shown.data, "abc\n");
	model_buf_release(&shown);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const runlog[] = {test_clean_controls_and_bad_bytes, test_clean_across_chunks,
	                               test_cap_and_mark, NULL};
	Suite *s;

	s = suite_create("runlog");
	unit_tcase(s, "runlog", runlog);
	return s;
}
