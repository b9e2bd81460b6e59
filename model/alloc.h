#ifndef OLIVARES_MODEL_ALLOC_H
#define OLIVARES_MODEL_ALLOC_H
/**
 * Allocation policy for the whole project: one policy, applied everywhere.
 *
 * Every process of olivares (the FastCGI workers, the runner, the CLI, the
 * admin tool) is short-lived or respawned by its parent, so running out of
 * memory is not recovered from: these wrappers print one line to stderr and
 * abort(). Callers never check for NULL. Memory returned is owned by the
 * caller and released with free().
 */
#include <stddef.h>

/** malloc(n) or abort; n == 0 is treated as 1. */
void *model_xmalloc(size_t n);
/** calloc(count, size) or abort; overflow of count*size aborts too. */
void *model_xcalloc(size_t count, size_t size);
/** realloc(p, n) or abort. */
void *model_xrealloc(void *p, size_t n);
/** strdup(s) or abort; s must not be NULL. */
char *model_xstrdup(const char *s);
/** Copy of the first n bytes of p plus a NUL terminator, or abort. */
char *model_xmemdup(const void *p, size_t n);

#endif
