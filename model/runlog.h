#ifndef OLIVARES_MODEL_RUNLOG_H
#define OLIVARES_MODEL_RUNLOG_H
/**
 * The agent's log of a run: what its stdout and stderr said, in the order
 * the bytes came, made harmless and bounded. Pure: the runner feeds it the
 * bytes it reads; nothing here does I/O.
 *
 * Cleaning (the log is agent-controlled text, shown in a terminal and in
 * HTML): the text kept is always valid UTF-8. Every byte that does not
 * start a valid UTF-8 sequence (overlong forms, surrogates, code points
 * over U+10FFFF and stray continuation bytes included) becomes U+FFFD, one
 * per byte; so does every control character but newline and tab (the C0
 * controls, NUL, CR and ESC among them, DEL and the C1 controls U+0080 to
 * U+009F), so no terminal escape survives. A sequence cut at the end of
 * one chunk is completed by the next one; cut at the end of the log
 * (model_runlog_end), it becomes U+FFFD too.
 *
 * Bound: at most MODEL_RUN_LOG_MAX bytes of cleaned text are kept. The
 * first character that would not fit and every byte after it are counted
 * in dropped (the agent's bytes, before cleaning), not kept; whoever shows
 * the log ends it with the mark of model_runlog_mark().
 */
#include <stddef.h>

#include "model/buf.h"

/** Cleaned text kept of one run's log, bytes. */
#define MODEL_RUN_LOG_MAX (1024u * 1024u)

/** The longest truncation mark (model_runlog_mark), with its NUL. */
#define MODEL_RUN_LOG_MARK_BYTES 64

struct model_runlog {
	struct model_buf text; /* the cleaned text kept, capped at MODEL_RUN_LOG_MAX */
	long long dropped;     /* agent bytes counted, not kept */
	unsigned char part[4]; /* the start of a sequence cut at a chunk's end */
	size_t part_len;
};

/** An empty log (release with model_runlog_release). */
void model_runlog_init(struct model_runlog *l);

/** The same with another cap than MODEL_RUN_LOG_MAX, max bytes of cleaned
 * text (a reader cleaning a log it was given whole: the CLI). */
void model_runlog_init_max(struct model_runlog *l, size_t max);

/** Clean and append n bytes of the agent's output (see above). */
void model_runlog_add(struct model_runlog *l, const char *s, size_t n);

/** The log's end: a sequence still cut becomes U+FFFD (or is dropped). */
void model_runlog_end(struct model_runlog *l);

void model_runlog_release(struct model_runlog *l);

/** 1 when the n bytes at s are text a cleaned log may hold (valid UTF-8,
 * no NUL, no control character but newline and tab), else 0. */
int model_runlog_is_clean(const char *s, size_t n);

/** The truncation mark of a log that dropped bytes into buf (n >=
 * MODEL_RUN_LOG_MARK_BYTES): "[[log truncated: N bytes dropped]]". */
void model_runlog_mark(long long dropped, char *buf, size_t n);

/**
 * The log as shown (the API's text/plain body, the admin view's run page):
 * the len bytes of text, then, when dropped is not 0, the mark on a line
 * of its own ("\n" first unless text is empty or ends with one, "\n"
 * after). Appended to out, whose cap must leave MODEL_RUN_LOG_MARK_BYTES +
 * 2 bytes beyond len. Returns 0, -1 when out has no room (out unchanged).
 */
int model_runlog_shown(struct model_buf *out, const char *text, size_t len, long long dropped);

#endif
