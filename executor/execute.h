#ifndef OLIVARES_EXECUTOR_EXECUTE_H
#define OLIVARES_EXECUTOR_EXECUTE_H
/**
 * One claimed run, from its claim to its end in the store: the runner
 * hand-off (fcgi/run/dispatch.h, exactly as the workers did it: the fork
 * server, the spec on stdin, every line checked), each step's output
 * appended as it ends (in batches: at most every EXECUTOR_FLUSH_MS or
 * EXECUTOR_FLUSH_STEPS steps, and the rest with the end), the run's
 * heartbeat every lease/3 seconds (at most EXECUTOR_CANCEL_MS apart), a
 * cancel noticed at that heartbeat, the
 * scoring of a completed run by the wired scorer adapter, a replay's
 * divergence, and the end recorded (store_run_finish).
 *
 * The run is never run again from here: whatever happens (the store
 * unreachable at the end, the run swept as lost meanwhile), it ends once
 * or is left to the sweep, which ends it failed with its steps.
 */
#include <signal.h>

#include "fcgi/config.h"
#include "model/scorer.h"
#include "sql/store.h"

/** Longest a finished step's output waits before it is appended. */
#define EXECUTOR_FLUSH_MS 200
/** Most outputs appended in one transaction while a run goes. */
#define EXECUTOR_FLUSH_STEPS 64
/** The longest between two heartbeats of a run, which read whether a
 * cancel was asked for (ms); lease_seconds / 3 when that is shorter. */
#define EXECUTOR_CANCEL_MS 1000
/** How often the hooks are called while a runner runs (ms). */
#define EXECUTOR_TICK_MS 100

/** What an executor process runs its runs with (all borrowed). */
struct executor_ctx {
	struct store *st;
	const struct http_config *cfg;
	const struct model_scorer *scorer; /* NULL: the none adapter */
	const char *executor_id;
	int lease_seconds;
	/* set by a signal handler: stop the run in progress (it ends failed,
	 * saying the executor stopped) */
	volatile sig_atomic_t *stopping;
};

/**
 * Run the claimed run c (store_run_claim) to its end and record it.
 * Returns 0 when its end was recorded, -1 when it was not (the store
 * refused or was unreachable for longer than the lease, or the run was no
 * longer this executor's: logged; the sweep ends it). c stays the
 * caller's.
 */
int executor_run(const struct executor_ctx *x, struct store_claim *c);

/** "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC) of now into out. */
void executor_now_iso(char out[25]);

/** Log one line on stderr at level info (fcgi/log.h: a JSON object with
 * the time, "prog":"olivares-executor", the pid and the message). */
void executor_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** executor_log at level warning (something is off, the run goes on). */
void executor_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** executor_log at level error (a store write or a run's hand-off failed). */
void executor_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
