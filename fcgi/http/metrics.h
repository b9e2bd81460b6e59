#ifndef OLIVARES_FCGI_HTTP_METRICS_H
#define OLIVARES_FCGI_HTTP_METRICS_H
/**
 * The pool's own counters for GET /metrics (docs/metrics.md): requests by
 * route, method and status, their durations, the workers the master
 * replaced, the store's retries and the 503 storage_unavailable answers.
 *
 * They live in one anonymous shared mapping that the master creates before
 * it forks (http_metrics_init), so every worker adds to the same figures
 * and a scrape, served by any worker, reads them all. Every update is an
 * __atomic add on a fixed table: no lock and no allocation per request.
 * The request series are an open-addressed table of HTTP_METRICS_SERIES
 * (route slot, method, status) keys; a key that finds no free entry is
 * counted in the dropped counter instead (the route table bounds the keys
 * far below that).
 *
 * Without http_metrics_init (a unit test, a tool) nothing is counted and
 * the reads give zeros.
 */
#include <stddef.h>

struct http_request;
struct store;

/** Entries of the request series table. */
#define HTTP_METRICS_SERIES 4096
/** Bounds (seconds) of the request duration histogram's buckets. */
#define HTTP_METRICS_DURATION_BUCKETS 12
extern const double http_metrics_duration_bounds[HTTP_METRICS_DURATION_BUCKETS];

/** Route slots: a path no route matches, the admin view's paths, then
 * route k of the worker's table at HTTP_METRICS_SLOT_ROUTE + k. */
#define HTTP_METRICS_SLOT_UNMATCHED 0
#define HTTP_METRICS_SLOT_ADMIN 1
#define HTTP_METRICS_SLOT_ROUTE 2

/** The methods counted by name; any other is "other". */
extern const char *const http_metrics_methods[];
extern const size_t http_metrics_nmethods;

/**
 * Create the shared counters, zeroed (the master, before the first fork;
 * again, it starts from zero). Returns 0, or -1 with errno (mmap failed;
 * the server then counts nothing and says so).
 */
int http_metrics_init(void);

/**
 * Count the request req that http_serve ends: its route (req->route_slot,
 * or HTTP_METRICS_SLOT_ADMIN when view is set), method and status, its
 * duration since req->started, a 503 storage_unavailable answer, and what
 * the worker's store connection counted since the last call
 * (http_metrics_store).
 */
void http_metrics_count(const struct http_request *req, int view);

/** Add what st counted (store_stats) since it was last seen here; called
 * at each request's end, and with closing set just before the worker
 * closes the connection, whose counters die with it. NULL: nothing. */
void http_metrics_store(struct store *st, int closing);

/** The master replaced a worker that died. */
void http_metrics_worker_restart(void);

/** One request series as read by http_metrics_series. */
struct http_metrics_series {
	int slot;   /* HTTP_METRICS_SLOT_* or HTTP_METRICS_SLOT_ROUTE + k */
	int method; /* index into http_metrics_methods, or http_metrics_nmethods: other */
	int status; /* 0..999 */
	unsigned long long n;
};

/** A snapshot of the counters (each read atomically, the whole not at
 * one instant). */
struct http_metrics_totals {
	unsigned long long worker_restarts;
	unsigned long long store_retries;
	unsigned long long store_unavailable;
	unsigned long long dropped;
	unsigned long long duration_count;
	double duration_sum;                                           /* seconds */
	unsigned long long duration_le[HTTP_METRICS_DURATION_BUCKETS]; /* cumulative */
};

/** Read the totals into *t (zeros without http_metrics_init). */
void http_metrics_totals(struct http_metrics_totals *t);

/** Copy at most max request series with a count into out, in table
 * order; returns how many. */
size_t http_metrics_series(struct http_metrics_series *out, size_t max);

#endif
