#ifndef OLIVARES_FCGI_RUN_PREFLIGHT_CACHE_H
#define OLIVARES_FCGI_RUN_PREFLIGHT_CACHE_H
/**
 * The pool's last preflight answer per backend (GET /v1/m/sandbox/backends).
 *
 * A preflight starts a runner (a gVisor one boots a trial sandbox), so its
 * answer is kept: the listing reuses it for a while, and the admin view's
 * run form marks a failing backend from it without starting anything
 * (?preflight=cached). Kept per worker, an answer reached only the worker
 * that happened to serve the listing: with four workers, three page views
 * in four showed every backend "not checked" after an operator had listed
 * them. So the answers are shared by the pool: one record per backend in
 * one anonymous file (memfd) that the master creates before it forks the
 * workers (a worker it starts again inherits it too), read and written
 * with pread/pwrite under a byte-range lock of the record (fcntl F_SETLK,
 * never waited for long: a lock not had within about 20 ms is given up,
 * the read then finds nothing and the write is skipped; a worker that
 * dies holding one has it released by the kernel). Times are
 * CLOCK_MONOTONIC milliseconds, the same clock in every process.
 *
 * Without http_preflight_cache_init (tools and tests that serve no pool)
 * the answers are this process's own.
 */
#include <stddef.h>

#include "fcgi/run/dispatch.h"
#include "model/error.h"

/** Records kept: backends with an index below this one are cached. */
#define PREFLIGHT_CACHE_BACKENDS 8

/**
 * Create the shared records (in the master, before the workers are forked:
 * they inherit the descriptor, close-on-exec), all empty. Returns 0, or -1
 * with *err MODEL_E_INTERNAL when the kernel gives no file (the message
 * starts "preflight cache: "). Called again, it replaces them (empty).
 */
int http_preflight_cache_init(struct model_error *err);

/**
 * Record pf as the answer of backend i (index in http_config_known_backends)
 * from a check that started at started_ms (http_preflight_cache_now_ms()
 * taken before the runner was started: the answer is at least that old).
 * A record of a check that started later is kept: with several workers, a
 * slow check (a gVisor trial sandbox, a runner cut at 8 s) ends after a
 * newer one, and its older answer must not replace the newer one. pf is
 * borrowed and copied (its reason cut to the record's size). An index at
 * or over PREFLIGHT_CACHE_BACKENDS, a started_ms not above 0, or a record
 * that stays locked, is not recorded; nothing is returned: a failed
 * record only costs a later listing a new check (logged on stderr, once,
 * when locking itself fails, and when the write fails).
 */
void http_preflight_cache_put(size_t i, const struct http_preflight *pf, long long started_ms);

/**
 * The newest answer of backend i into *pf and when its check started
 * (CLOCK_MONOTONIC ms) into *at_ms. Returns 0; 1 when none is known (none
 * recorded since the pool started, an index out of range, a record that
 * stays locked), and then *pf and *at_ms are untouched.
 */
int http_preflight_cache_get(size_t i, struct http_preflight *pf, long long *at_ms);

/** CLOCK_MONOTONIC now, in milliseconds: the clock of *at_ms above. */
long long http_preflight_cache_now_ms(void);

#endif
