#ifndef OLIVARES_FCGI_RUN_RUNSLOTS_H
#define OLIVARES_FCGI_RUN_RUNSLOTS_H
/**
 * Run slots: how many runs on an OS-level backend may be in progress at
 * once, on the whole server and for one tenant.
 *
 * A worker executes a run inside the request (fcgi/run/dispatch.h), for up to
 * the run's wall-clock limit when the agent program takes its time. Without
 * a bound, one tenant's runs could hold every worker of the pool, and every
 * other request (another tenant's, /healthz) would wait behind them. So a
 * request takes a slot before its first run on namespaces, gvisor or
 * firecracker ([runner] max_runs on the server, max_runs_per_tenant for its
 * tenant; fcgi/config.h) and keeps it until it ends (a comparison's two
 * runs hold one). A run without a free slot is refused before anything
 * runs or is written: 429 "busy", with Retry-After. inproc-mock runs take
 * no slot: no agent program runs there, and they end in milliseconds.
 *
 * The slots are byte-range locks (fcntl F_SETLK, never waited for) on one
 * anonymous file that the master creates before it forks the workers:
 * locks of this kind belong to the process, so each worker's are its own,
 * and the kernel releases them when a worker dies, however it dies. Bytes
 * [0, max_runs) are the server's slots; each tenant's are max_runs_per_tenant
 * bytes of one of RUNSLOT_TENANT_BUCKETS (2^40) buckets, chosen by a
 * 64-bit hash of its id (a lock needs no file behind it, so the offsets
 * may be large): two tenants would share their limit only if their ids
 * fell in one bucket, about one chance in 10^8 for a thousand tenants.
 */
#include <stddef.h>

#include "model/error.h"

/** Buckets of the tenants' slots. */
#define RUNSLOT_TENANT_BUCKETS (1ULL << 40)

/** The slots a request holds; all zero: none. */
struct http_runslot {
	int held;         /* 1 while the two bytes below are locked */
	long server_byte; /* offset of its server slot */
	long tenant_byte; /* offset of its tenant slot */
};

/**
 * Create the slots (in the master, before the workers are forked: they
 * inherit the descriptor, close-on-exec). max_runs >= 1, 1 <= per_tenant
 * <= max_runs. Returns 0, or -1 with *err: MODEL_E_INVALID for limits
 * outside those bounds, MODEL_E_INTERNAL when the kernel gives no file;
 * the message starts "run slots: ". Called again, it replaces them.
 * Without it, http_runslot_take() takes nothing and refuses nothing
 * (tools and tests that serve no pool).
 */
int http_runslots_init(int max_runs, int per_tenant, struct model_error *err);

/**
 * Take a server slot and a slot of tenant_id (32 hex) into *slot, unless
 * it is already held (a request's second run). Returns 0; -1 with err
 * MODEL_E_BUSY (429, the message names the limit reached) when one of the
 * two has no free slot, and then holds none. A lock that fails otherwise
 * (no lock to be had from the kernel) is logged and lets the run go: the
 * bound protects the pool, it is not what isolates a run.
 */
int http_runslot_take(struct http_runslot *slot, const char *tenant_id, struct model_error *err);

/** Release what *slot holds (nothing when it holds nothing). */
void http_runslot_release(struct http_runslot *slot);

#endif
