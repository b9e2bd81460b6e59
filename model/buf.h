#ifndef OLIVARES_MODEL_BUF_H
#define OLIVARES_MODEL_BUF_H
/**
 * A growable byte buffer with a hard maximum size (the idea of curl's
 * dynbuf). The cap is how the 1 MiB request limit and the
 * 8192-byte input limit are enforced: the append that would cross it fails
 * and leaves the buffer unchanged.
 *
 * Invariants: after model_buf_init, `data` is never NULL and is always
 * NUL-terminated at data[len] (the NUL is not counted in len, nor against
 * max); len <= max. The buffer owns `data` until model_buf_detach hands it
 * to the caller.
 */
#include <stdarg.h>
#include <stddef.h>

/* The appends' result matters: one that would cross the cap fails and
 * leaves the buffer as it was, and a caller that goes on as if it had
 * worked sends a body, SQL text or output cut short. The compiler says so
 * at every call that drops it. */
#define MODEL_BUF_MUST_CHECK __attribute__((warn_unused_result))

struct model_buf {
	char *data;   /* never NULL, NUL-terminated */
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
	size_t max;   /* hard cap on len */
};

/** Initialise an empty buffer that will refuse to grow beyond max bytes. */
void model_buf_init(struct model_buf *b, size_t max);
/** Append n bytes. Returns 0, or -1 (buffer unchanged) if len + n > max. */
int model_buf_add(struct model_buf *b, const void *p, size_t n) MODEL_BUF_MUST_CHECK;
/** Append a NUL-terminated string; same return as model_buf_add. */
int model_buf_adds(struct model_buf *b, const char *s) MODEL_BUF_MUST_CHECK;
/** Append printf-formatted text; -1 (unchanged) if it would exceed max. */
int model_buf_printf(struct model_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3))) MODEL_BUF_MUST_CHECK;
/**
 * Check the result rc of an append to a buffer whose cap was sized for all
 * that is appended to it, so that crossing it is a bug, never an input:
 * a non-zero rc prints one line to stderr and aborts, as model/alloc.h
 * does when memory runs out.
 *   model_buf_must_fit(model_buf_add(&b, s, n));
 */
void model_buf_must_fit(int rc);
/** Set len to 0 (keeps the allocation and the cap). */
void model_buf_reset(struct model_buf *b);
/** Hand the bytes to the caller (free() them); the buffer is re-initialised
 * empty with the same cap. *len_out, if not NULL, receives the length. */
char *model_buf_detach(struct model_buf *b, size_t *len_out);
/** Free the bytes; the buffer must be re-initialised before further use. */
void model_buf_release(struct model_buf *b);

#endif
