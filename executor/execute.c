/*
 * One claimed run to its end (execute.h): the runner through dispatch,
 * its steps appended as they end, its heartbeat, a cancel, the scoring,
 * and the end recorded.
 */
#include "executor/execute.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/log.h"
#include "fcgi/run/agent_file.h"
#include "fcgi/run/dispatch.h"
#include "model/history.h"
#include "model/record.h"
#include "model/runspec.h"
#include "model/suite.h"

void executor_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-executor", OLV_LOG_INFO, fmt, ap);
	va_end(ap);
}

void executor_log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-executor", OLV_LOG_WARNING, fmt, ap);
	va_end(ap);
}

void executor_log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olv_log_line("olivares-executor", OLV_LOG_ERROR, fmt, ap);
	va_end(ap);
}

void executor_now_iso(char out[25])
{
	struct timespec ts;
	struct tm tm;

	char sec[20];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 25, "%.19s.%03dZ", sec, (int)(ts.tv_nsec / 1000000L));
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

/* What the hooks keep while one run goes. */
struct follow {
	const struct executor_ctx *x;
	const char *run_id;
	const char *tenant_id;
	json_t *pending; /* outputs not appended yet */
	long long last_flush_ms, last_beat_ms;
	int append_off; /* an append failed: the rest waits for the end, which
	                 * stores whatever is not stored yet */
	int lost;       /* the run is no longer this executor's */
	int cancel;     /* a cancel was asked for */
	int stopped;    /* this executor is stopping */
	int record;     /* a recorded run: its traces carry answers the store
	                 * keeps in the session, not in the outputs */
	/* the tenant's storage quota (bytes, 0: none), what it stored at
	 * the last look (when the run started, then after each append: the
	 * run's appended outputs and those of the tenant's other runs
	 * included), what the run's outputs add in all and what of that the
	 * last look did not see, and whether they passed the quota (1: its
	 * outputs, 2: with its log; the run then stops and ends failed) */
	long long quota, used, bytes, unseen;
	int over_quota;
};

static int stop_wanted(const struct follow *f)
{
	return f->lost || f->cancel || f->stopped || f->over_quota;
}

/* ---- storage quota ------------------------------------------------------------ */

/* The storage quota of tenant_id in bytes (0: none): its [tenant NAME]
 * section's max_stored_mb, else [server]'s. The sections name tenants, so
 * each is looked up by name; one that cannot be looked up is taken as not
 * this tenant's (logged). */
static long long tenant_quota(const struct executor_ctx *x, const char *tenant_id)
{
	const struct http_config *cfg = x->cfg;
	char id[33];
	enum store_rc rc;
	int i;

	for (i = 0; i < cfg->ntenants; i++) {
		rc = store_tenant_find(x->st, cfg->tenants[i].name, id);
		if (rc == STORE_OK && strcmp(id, tenant_id) == 0)
			return (long long)cfg->tenants[i].max_stored_mb * 1048576LL;
		if (rc && rc != STORE_NOT_FOUND)
			executor_log("cannot look up tenant %s's section (%s)",
			             cfg->tenants[i].name, store_last_error(x->st));
	}
	return (long long)cfg->max_stored_mb * 1048576LL;
}

/* The bytes a stored output counts for (sql/usage.c): its key, input,
 * output and trace texts. */
static long long output_bytes(json_t *o)
{
	static const char *const texts[] = {"key", "input", "output"};
	json_t *trace = json_object_get(o, "trace");
	long long n = 0;
	size_t i;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++)
		n += (long long)json_string_length(json_object_get(o, texts[i]));
	if (trace && !json_is_null(trace))
		n += (long long)json_dumpb(trace, NULL, 0, JSON_COMPACT);
	return n;
}

/* Count output against the quota: 1 when the run's outputs now pass it. */
static int quota_add(struct follow *f, json_t *output)
{
	long long n;

	if (f->quota <= 0)
		return 0;
	n = output_bytes(output);
	f->bytes += n;
	f->unseen += n;
	if (f->used + f->unseen > f->quota)
		f->over_quota = 1;
	return f->over_quota;
}

/* After an append: look at the tenant's usage again, so that the runs of
 * one tenant going at once see each other's outputs (each would otherwise
 * count only its own against what was stored when it started). A usage
 * that cannot be read keeps the last figures. */
static void quota_look(struct follow *f)
{
	struct store_usage u;

	if (f->quota <= 0 || store_tenant_usage(f->x->st, f->tenant_id, &u) != STORE_OK)
		return;
	f->used = u.total;
	f->unseen = 0;
	if (f->used > f->quota)
		f->over_quota = 1;
}

/* Append what is pending. A failure other than "not ours any more" leaves
 * the outputs to the end's record (an ambiguous commit must not make the
 * same seq be appended twice). */
static void flush(struct follow *f)
{
	enum store_rc rc;

	f->last_flush_ms = now_ms();
	if (f->append_off || json_array_size(f->pending) == 0)
		return;
	rc = store_run_append(f->x->st, f->run_id, f->x->executor_id, f->pending);
	if (rc == STORE_NOT_FOUND) {
		f->lost = 1;
		return;
	}
	if (rc) {
		executor_log_error(
		    "run %s: cannot append its outputs (%s); they are recorded with its "
		    "end",
		    f->run_id, store_last_error(f->x->st));
		f->append_off = 1;
		return;
	}
	json_array_clear(f->pending);
	quota_look(f);
}

static void heartbeat(struct follow *f)
{
	enum store_rc rc;
	int cancel = 0;

	f->last_beat_ms = now_ms();
	rc = store_run_heartbeat(f->x->st, f->run_id, f->x->executor_id, &cancel);
	if (rc == STORE_NOT_FOUND)
		f->lost = 1;
	else if (rc)
		executor_log_warn("run %s: heartbeat failed (%s)", f->run_id,
		                  store_last_error(f->x->st));
	else if (cancel)
		f->cancel = 1;
}

static int on_tick(void *ctx)
{
	struct follow *f = ctx;
	long long now = now_ms();
	long long beat_ms = (long long)f->x->lease_seconds * 1000LL / 3;

	/* the heartbeat is also where a cancel is seen: at least every
	 * EXECUTOR_CANCEL_MS, whatever the lease */
	if (beat_ms > EXECUTOR_CANCEL_MS)
		beat_ms = EXECUTOR_CANCEL_MS;

	if (json_array_size(f->pending) && now - f->last_flush_ms >= EXECUTOR_FLUSH_MS)
		flush(f);
	if (now - f->last_beat_ms >= beat_ms)
		heartbeat(f);
	if (f->x->stopping && *f->x->stopping)
		f->stopped = 1;
	return stop_wanted(f);
}

static int on_step(void *ctx, json_t *output)
{
	struct follow *f = ctx;
	json_t *kept;

	if (f->record) {
		kept = json_deep_copy(output);
		model_record_strip(kept);
		quota_add(f, kept);
		json_array_append_new(f->pending, kept);
	} else {
		quota_add(f, output);
		json_array_append(f->pending, output);
	}
	if (json_array_size(f->pending) >= EXECUTOR_FLUSH_STEPS ||
	    now_ms() - f->last_flush_ms >= EXECUTOR_FLUSH_MS)
		flush(f);
	return stop_wanted(f);
}

/*
 * The builtin evaluation of the version of the tenant's store suite the
 * run was pinned to when it was queued (no configuration needed): 0 with
 * *res filled by model_suite_evaluate, or -1 with res->reason.
 */
static int store_suite_score(const struct executor_ctx *x, const char *tenant_id, const char *suite,
                             int version, json_t *outputs, struct model_score_result *res)
{
	json_t *doc = NULL;
	enum store_rc rc;
	int ret;

	rc = store_suite_get(x->st, tenant_id, suite, version, &doc);
	if (rc) {
		snprintf(res->reason, sizeof(res->reason), "suite %s@%d cannot be read (%s)", suite,
		         version, rc == STORE_NOT_FOUND ? "not found" : "store unavailable");
		return -1;
	}
	ret = model_suite_evaluate(json_object_get(doc, "document"), outputs, res);
	json_decref(doc);
	return ret;
}

/*
 * Score a completed run: against the store suite it was pinned to
 * (version > 0), else with the executor's scorer adapter: scored, score,
 * passed and details when it answers a score in [0, 1]; otherwise
 * "executed, not scored: <cause>". A run that did not complete is never
 * sent to the scorer: its reason stays its failure.
 */
static void run_score(const struct executor_ctx *x, const char *tenant_id, const char *suite,
                      int version, struct store_run *run, struct model_score_result *res,
                      char *reason, size_t n)
{
	static const struct model_scorer none = {&model_scorer_none, NULL};
	static const struct model_scorer_ops store_ops = {.name = "store suite"};
	const struct model_scorer *sc = x->scorer && x->scorer->ops ? x->scorer : &none;
	static const struct model_scorer store_sc = {&store_ops, NULL};
	const char *cause;
	int rc;

	if (!suite || strcmp(run->status, "completed") != 0)
		return;
	memset(res, 0, sizeof(*res));
	if (version > 0) {
		sc = &store_sc;
		rc = store_suite_score(x, tenant_id, suite, version, run->outputs, res);
	} else {
		rc = sc->ops->score(sc->ctx, suite, run->outputs, res);
	}
	if (rc == 0 && res->scored && res->score >= 0.0 && res->score <= 1.0 &&
	    (!res->details || json_is_array(res->details))) {
		run->scored = 1;
		/* recorded to 9 decimals: it reads back the same on every store */
		run->score = model_score_round(res->score);
		run->passed = res->passed ? 1 : 0;
		run->score_details = res->details;
		return;
	}
	if (rc == 0 && res->scored)
		cause = "the scorer answered a score outside [0, 1] or malformed details";
	else
		cause = res->reason[0] ? res->reason : "the scorer gave no reason";
	snprintf(reason, n, "executed, not scored: %s", cause);
	run->scored = 0;
	run->reason = reason;
	if (strcmp(sc->ops->name, "none") != 0)
		executor_log_warn("run not scored by the %s scorer", sc->ops->name);
}

/* The counters of a run that the runner did not sum up (stopped, or
 * failed by dispatch): from the outputs it kept, out of the spec's steps. */
static void count_steps(json_t *outputs, size_t steps, struct store_run *run)
{
	json_t *o;
	size_t i;

	run->steps_total = (int)steps;
	run->steps_ok = run->steps_error = 0;
	json_array_foreach(outputs, i, o)
	{
		if (strcmp(json_string_value(json_object_get(o, "status")) ?: "", "ok") == 0)
			run->steps_ok++;
		else
			run->steps_error++;
	}
}

/* A recorded run's session (model/record.h), made from its outputs
 * before their answers are stripped: run->session, or run->record_error
 * saying why there is none. The session's external id names the run. */
static void run_record(json_t *spec, const char *run_id, int gateway_lost, struct store_run *run,
                       json_t **session, char *why_out, size_t n)
{
	struct model_reason why;
	char external_id[MODEL_MAX_EXTERNAL_ID_BYTES + 1];
	json_t *o;
	size_t i;

	*session = NULL;
	run->record = 1;
	if (strcmp(run->status, "completed") != 0) {
		snprintf(why_out, n, "the run did not complete: nothing recorded");
		run->record_error = why_out;
	} else if (gateway_lost) {
		/* what its agent asked after that was answered by nobody: a
		 * session of it would replay answers the run never had */
		snprintf(why_out, n,
		         "not recorded: the run's gateway stopped before the run ended");
		run->record_error = why_out;
	} else {
		snprintf(external_id, sizeof(external_id), "olivares-run-%s", run_id);
		if (model_record_session(json_object_get(spec, "mocks"), run->outputs,
		                         json_array_size(json_object_get(spec, "steps")),
		                         external_id, session, &why) == 0) {
			run->session = *session;
		} else {
			snprintf(why_out, n, "not recorded: %s", why.text);
			run->record_error = why_out;
		}
	}
	json_array_foreach(run->outputs, i, o) model_record_strip(o);
}

/* Record the end, trying again while the store is unreachable, for at
 * most the lease: after it the sweep ends the run as lost, and a late
 * record would be refused anyway (the run is no longer running). */
static int record_end(const struct executor_ctx *x, const char *run_id, struct store_run *run)
{
	long long until = now_ms() + (long long)x->lease_seconds * 1000LL;
	useconds_t pause = 50000;
	enum store_rc rc;

	for (;;) {
		rc = store_run_finish(x->st, run_id, x->executor_id, run, NULL);
		if (rc == STORE_OK)
			return 0;
		if (rc == STORE_NOT_FOUND) {
			executor_log_warn(
			    "run %s is no longer this executor's (ended by a sweep?): its "
			    "end is not recorded",
			    run_id);
			return -1;
		}
		if (rc != STORE_UNAVAILABLE || now_ms() >= until) {
			executor_log_error("run %s: cannot record its end (%s)", run_id,
			                   store_last_error(x->st));
			return -1;
		}
		usleep(pause);
		if (pause < 1000000)
			pause *= 2;
	}
}

/* The agent's log, as far as it came (a run cut short keeps what it
 * logged), stored before the end: once the run has ended it is no longer
 * this executor's to write to. A log that cannot be stored does not
 * change how the run ended; it is said in the executor's log. */
static void record_log(const struct executor_ctx *x, const char *run_id,
                       const struct http_dispatch_result *res)
{
	enum store_rc rc;

	if (!res->log.data || (res->log.len == 0 && res->log_dropped == 0))
		return;
	rc = store_run_log_put(x->st, run_id, x->executor_id, res->log.data, res->log.len,
	                       res->log_dropped);
	if (rc)
		executor_log_error("run %s: cannot store its log (%s)", run_id,
		                   store_last_error(x->st));
}

int executor_run(const struct executor_ctx *x, struct store_claim *c)
{
	struct http_dispatch_hooks hooks;
	struct http_dispatch_result res;
	struct model_score_result score;
	struct follow f;
	struct store_run run;
	json_t *spec, *recorded, *limits, *session = NULL;
	const char *suite;
	char finished[25], reason[MODEL_REASON_BYTES + 64], nodigest[65], agent_sha[65];
	char record_error[MODEL_REASON_BYTES + 32];
	const char *agent;
	json_int_t wall_ms;
	int rc, ret;

	memset(&f, 0, sizeof(f));
	memset(&res, 0, sizeof(res));
	memset(&score, 0, sizeof(score));
	memset(&run, 0, sizeof(run));
	reason[0] = '\0';
	f.x = x;
	f.run_id = c->run_id;
	f.tenant_id = c->tenant_id;
	f.pending = json_array();
	f.last_flush_ms = f.last_beat_ms = now_ms();
	spec = json_object_get(c->job, "spec");
	limits = json_object_get(spec, "limits");
	wall_ms = json_integer_value(json_object_get(limits, "wall_ms"));
	f.record = json_is_true(json_object_get(spec, "record"));
	f.quota = tenant_quota(x, c->tenant_id);
	if (f.quota > 0) {
		struct store_usage u;

		/* a usage that cannot be read leaves this run unchecked: the
		 * next create reads it again and refuses when it is over */
		if (store_tenant_usage(x->st, c->tenant_id, &u) == STORE_OK)
			f.used = u.total;
		else {
			executor_log("run %s: cannot read its tenant's usage (%s): its outputs are "
			             "not checked against the quota",
			             c->run_id, store_last_error(x->st));
			f.quota = 0;
		}
	}
	if (!f.pending || !json_is_object(spec) || wall_ms <= 0) {
		/* a job this executor cannot read was not queued by a server
		 * of this version: ended failed, never guessed at */
		executor_log_error("run %s: its job has no run spec", c->run_id);
		snprintf(reason, sizeof(reason), "the run's job cannot be read by executor %s",
		         x->executor_id);
		http_dispatch_output_digest(json_array(), nodigest);
		run.status = "failed";
		run.runner = MODEL_RUNNER_NAME;
		run.backend = c->backend;
		run.reason = reason;
		run.output_digest = nodigest;
		executor_now_iso(finished);
		run.finished_at = finished;
		ret = record_end(x, c->run_id, &run);
		json_decref(f.pending);
		return ret;
	}

	/* The digest of the program the runner is about to run, taken here
	 * rather than at submit: a file changed since the run was asked for
	 * is recorded as it ran. A file that cannot be read leaves it null;
	 * the runner then fails the run, unable to open it either. */
	agent_sha[0] = '\0';
	agent = json_string_value(json_object_get(spec, "agent"));
	if (agent && http_agent_sha256_file(agent, agent_sha, NULL) != 0)
		executor_log_error("run %s: cannot hash its agent program", c->run_id);
	run.agent_sha256 = agent_sha[0] ? agent_sha : NULL;

	memset(&hooks, 0, sizeof(hooks));
	hooks.ctx = &f;
	hooks.step = on_step;
	hooks.tick = on_tick;
	hooks.tick_ms = EXECUTOR_TICK_MS;
	/* the runner enforces wall_ms itself; the deadline here is the
	 * backstop for a runner that does not (dispatch.h) */
	rc = http_dispatch_run_hooked(x->cfg->runner_path, 1, c->backend, x->cfg->gvisor_platform,
	                              (int)wall_ms + HTTP_DISPATCH_GRACE_MS, spec, &hooks, &res);
	if (rc < 0)
		executor_log_error("run %s failed in dispatch (recorded as failed)", c->run_id);
	json_decref(f.pending);
	if (f.lost) {
		executor_log_warn(
		    "run %s is no longer this executor's (ended by a sweep?): stopped, "
		    "its end is not recorded",
		    c->run_id);
		http_dispatch_result_free(&res);
		return -1;
	}
	executor_now_iso(finished);

	/* the log is stored too: it counts once the run has ended */
	if (f.quota > 0 && !f.over_quota && res.log.data &&
	    f.used + f.unseen + (long long)res.log.len > f.quota) {
		f.bytes += (long long)res.log.len;
		f.over_quota = 2;
	}
	if (f.over_quota) {
		/* its outputs so far are kept (the record says what it did):
		 * the tenant is over its quota, and its next create is refused */
		run.status = "failed";
		snprintf(
		    reason, sizeof(reason),
		    "storage quota: its %s (%lld bytes) pass the tenant's max_stored_mb (%lld "
		    "MiB = %lld bytes; %lld bytes stored at its last look); stopped after %zu of "
		    "%d steps, its outputs kept",
		    f.over_quota == 2 ? "outputs and log" : "outputs", f.bytes, f.quota / 1048576LL,
		    f.quota, f.used, json_array_size(res.outputs),
		    (int)json_integer_value(json_object_get(c->run, "steps_total")));
	} else if (strcmp(res.status, "completed") == 0) {
		run.status = "completed";
	} else if (rc == 1 && f.cancel) {
		run.status = "cancelled";
	} else {
		run.status = "failed";
		if (rc == 1)
			snprintf(reason, sizeof(reason),
			         "executor %s stopped before the run ended (%zu of %d steps done)",
			         x->executor_id, json_array_size(res.outputs),
			         (int)json_integer_value(json_object_get(c->run, "steps_total")));
	}
	run.runner = res.runner[0] ? res.runner : MODEL_RUNNER_NAME;
	/* the backend the runner reported having run (dispatch refuses any
	 * other than the one asked for) */
	run.backend = res.backend[0] ? res.backend : c->backend;
	run.isolated = res.isolated ? 1 : 0;
	run.destroyed = res.destroyed ? 1 : 0;
	run.steps_total = res.steps_total;
	run.steps_ok = res.steps_ok;
	run.steps_error = res.steps_error;
	if (rc != 0)
		count_steps(res.outputs, json_array_size(json_object_get(spec, "steps")), &run);
	run.reason = reason[0] ? reason : res.reason[0] ? res.reason : NULL;
	/* the agent killed after every step completed: a note beside the
	 * status and the reason (scoring may still set that), never in them */
	run.shutdown = res.shutdown[0] ? res.shutdown : NULL;
	run.egress_requests = res.egress_requests;
	/* Without the runner's summary the count is unknown: a run that was
	 * allowed egress is then never called hermetic (-1, shown as null). */
	if (rc != 0 && json_array_size(json_object_get(spec, "egress_allow")) > 0)
		run.egress_requests = -1;
	if (!res.outputs)
		res.outputs = json_array();
	if (!res.output_digest[0])
		http_dispatch_output_digest(res.outputs, res.output_digest);
	run.output_digest = res.output_digest;
	run.finished_at = finished;
	run.outputs = res.outputs;
	suite = json_string_value(json_object_get(c->run, "suite"));
	run.suite = suite;
	run_score(x, c->tenant_id, suite,
	          (int)json_integer_value(json_object_get(c->run, "suite_version")), &run, &score,
	          reason, sizeof(reason));
	recorded = json_object_get(c->job, "recorded");
	if (json_is_array(recorded))
		run.divergence = model_replay_divergence(recorded, res.outputs);
	if (f.record)
		run_record(spec, c->run_id, res.gateway_lost, &run, &session, record_error,
		           sizeof(record_error));
	record_log(x, c->run_id, &res);
	ret = record_end(x, c->run_id, &run);
	json_decref(session);
	json_decref(run.divergence);
	model_score_result_clear(&score);
	http_dispatch_result_free(&res);
	return ret;
}
