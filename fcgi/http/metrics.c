/*
 * The pool's shared counters (fcgi/http/metrics.h).
 */
#include "fcgi/http/metrics.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fcgi/http/http.h"
#include "sql/store.h"

const double http_metrics_duration_bounds[HTTP_METRICS_DURATION_BUCKETS] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

const char *const http_metrics_methods[] = {"GET",    "HEAD",  "POST",   "PUT",
                                            "DELETE", "PATCH", "OPTIONS"};
const size_t http_metrics_nmethods = sizeof(http_metrics_methods) / sizeof(http_metrics_methods[0]);

/* key: (slot + 1) << 24 | method << 12 | status, never 0 for a used entry */
struct series {
	unsigned long long key;
	unsigned long long n;
};

struct shared {
	unsigned long long worker_restarts;
	unsigned long long store_retries;
	unsigned long long store_unavailable;
	unsigned long long dropped;
	unsigned long long duration_count;
	unsigned long long duration_sum_us;
	unsigned long long duration_le[HTTP_METRICS_DURATION_BUCKETS]; /* not cumulative */
	struct series series[HTTP_METRICS_SERIES];
};

static struct shared *sh;

/* this process's store connection as last seen, and what it had counted */
static const struct store *seen_store;
static struct store_stats seen_stats;

static void bump(unsigned long long *c, unsigned long long n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static unsigned long long get(const unsigned long long *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

int http_metrics_init(void)
{
	void *m;

	if (sh) {
		memset(sh, 0, sizeof(*sh));
		return 0;
	}
	/* anonymous and shared: zeroed, and the forked workers write the
	 * master's pages, never a copy */
	m = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	         -1, 0);
	if (m == MAP_FAILED)
		return -1;
	sh = m;
	return 0;
}

static int method_index(const struct http_request *req)
{
	size_t i;

	if (req->head)
		return 1;
	for (i = 0; req->method && i < http_metrics_nmethods; i++)
		if (strcmp(req->method, http_metrics_methods[i]) == 0)
			return (int)i;
	return (int)http_metrics_nmethods;
}

static void count_series(int slot, int method, int status)
{
	unsigned long long key, cur, expect;
	size_t i, probe;

	key = ((unsigned long long)(slot + 1) << 24) | ((unsigned long long)method << 12) |
	      (unsigned long long)status;
	/* Fibonacci hashing spreads the few keys; linear probing after */
	i = (size_t)((key * 11400714819323198485ull) >> 52) % HTTP_METRICS_SERIES;
	for (probe = 0; probe < HTTP_METRICS_SERIES; probe++) {
		struct series *e = &sh->series[(i + probe) % HTTP_METRICS_SERIES];

		cur = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			expect = 0;
			/* taken by another worker meanwhile: expect holds its key */
			if (__atomic_compare_exchange_n(&e->key, &expect, key, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE))
				cur = key;
			else
				cur = expect;
		}
		if (cur == key) {
			bump(&e->n, 1);
			return;
		}
	}
	bump(&sh->dropped, 1);
}

void http_metrics_store(struct store *st, int closing)
{
	struct store_stats now;

	if (!st)
		return;
	store_stats(st, &now);
	/* a new connection counts from zero */
	if (st != seen_store) {
		seen_store = st;
		memset(&seen_stats, 0, sizeof(seen_stats));
	}
	if (sh && now.retries > seen_stats.retries)
		bump(&sh->store_retries, now.retries - seen_stats.retries);
	seen_stats = now;
	/* the next connection may get the same address: it counts from zero */
	if (closing) {
		seen_store = NULL;
		memset(&seen_stats, 0, sizeof(seen_stats));
	}
}

void http_metrics_count(const struct http_request *req, int view)
{
	struct timespec ts;
	long long us;
	int slot, status;
	size_t b;

	if (!sh)
		return;
	http_metrics_store(req->worker->store, 0);
	slot = view ? HTTP_METRICS_SLOT_ADMIN : req->route_slot;
	status = req->status >= 0 && req->status <= 999 ? req->status : 0;
	count_series(slot, method_index(req), status);
	if (status == 503 && req->error_code && strcmp(req->error_code, "storage_unavailable") == 0)
		bump(&sh->store_unavailable, 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	us = (long long)(ts.tv_sec - req->started.tv_sec) * 1000000 +
	     (ts.tv_nsec - req->started.tv_nsec) / 1000;
	if (us < 0)
		us = 0;
	bump(&sh->duration_count, 1);
	bump(&sh->duration_sum_us, (unsigned long long)us);
	for (b = 0; b < HTTP_METRICS_DURATION_BUCKETS; b++)
		if ((double)us <= http_metrics_duration_bounds[b] * 1e6) {
			bump(&sh->duration_le[b], 1);
			break;
		}
}

void http_metrics_worker_restart(void)
{
	if (sh)
		bump(&sh->worker_restarts, 1);
}

void http_metrics_totals(struct http_metrics_totals *t)
{
	unsigned long long run = 0;
	size_t b;

	memset(t, 0, sizeof(*t));
	if (!sh)
		return;
	t->worker_restarts = get(&sh->worker_restarts);
	t->store_retries = get(&sh->store_retries);
	t->store_unavailable = get(&sh->store_unavailable);
	t->dropped = get(&sh->dropped);
	t->duration_count = get(&sh->duration_count);
	t->duration_sum = (double)get(&sh->duration_sum_us) / 1e6;
	for (b = 0; b < HTTP_METRICS_DURATION_BUCKETS; b++) {
		run += get(&sh->duration_le[b]);
		t->duration_le[b] = run;
	}
	/* read one after the other: a request counted between the reads must
	 * not make a bucket exceed the count */
	if (t->duration_count < run)
		t->duration_count = run;
}

size_t http_metrics_series(struct http_metrics_series *out, size_t max)
{
	unsigned long long key, n;
	size_t i, k = 0;

	if (!sh)
		return 0;
	for (i = 0; i < HTTP_METRICS_SERIES && k < max; i++) {
		key = __atomic_load_n(&sh->series[i].key, __ATOMIC_ACQUIRE);
		n = get(&sh->series[i].n);
		if (!key || !n)
			continue;
		out[k].slot = (int)(key >> 24) - 1;
		out[k].method = (int)((key >> 12) & 0xfff);
		out[k].status = (int)(key & 0xfff);
		out[k].n = n;
		k++;
	}
	return k;
}
