/*
 * GET /v1/m/sandbox/backends (viewer): every backend the runner knows,
 * whether the caller's tenant may use it (its policy, fcgi/run/job.h),
 * which is its default, and the backend's preflight on this host: asked of
 * the runner, the pool's recent answer, or none (?preflight=).
 */
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/run/dispatch.h"
#include "fcgi/run/job.h"
#include "fcgi/run/preflight_cache.h"

/* Each preflight may take this long (a gVisor preflight starts a sandbox,
 * 0.3 - 0.7 s of a worker), and its answer is reused by every worker of
 * the pool for PREFLIGHT_CACHE_MS (fcgi/run/preflight_cache.h), so a
 * viewer polling the listing does not start four runners per request: at
 * 30 s, a constant poller costs each worker about 2 % of its time (at 5 s
 * it was 10 - 14 %). A host change (runsc installed) shows within that
 * time. */
#define PREFLIGHT_TIMEOUT_MS 8000
#define PREFLIGHT_CACHE_MS 30000

/* The pool's answer of backend i when its check started under
 * PREFLIGHT_CACHE_MS ago, else a new one from the runner, recorded for the
 * pool with the time it started (fcgi/run/preflight_cache.h: the newest check
 * wins, whichever worker ends it last). */
static void preflight(const struct http_config *cfg, size_t i, const char *name,
                      struct http_preflight *pf)
{
	long long at_ms, started;

	started = http_preflight_cache_now_ms();
	if (http_preflight_cache_get(i, pf, &at_ms) == 0 && started - at_ms < PREFLIGHT_CACHE_MS)
		return;
	if (http_dispatch_preflight(cfg->runner_path, name, cfg->gvisor_platform,
	                            PREFLIGHT_TIMEOUT_MS, pf))
		http_log_warn("preflight of %s: no answer from the runner (%s)", name, pf->reason);
	http_preflight_cache_put(i, pf, started);
}

/* The pool's newest preflight answer for backend i, whatever its age, as
 * {"ok","reason","age_s"} (whole seconds since its check started), or JSON
 * null when it has none: nothing is started. */
static json_t *preflight_cached(size_t i)
{
	struct http_preflight pf;
	long long at_ms, age;

	if (http_preflight_cache_get(i, &pf, &at_ms))
		return json_null();
	age = (http_preflight_cache_now_ms() - at_ms) / 1000;
	return json_pack("{s:b, s:o, s:I}", "ok", pf.ok, "reason",
	                 pf.ok ? json_null() : json_string(pf.reason), "age_s",
	                 (json_int_t)(age < 0 ? 0 : age));
}

int api_backends(struct http_request *req, struct model_error *err)
{
	enum { PF_RUN, PF_NONE, PF_CACHED } mode = PF_RUN;
	struct http_preflight pf;
	const char *allowed, *def, *name, *want;
	json_t *list, *item, *checked;
	size_t i;

	/* ?preflight=false: the tenant's policy only, without starting a
	 * runner per backend; ?preflight=cached: with the pool's last
	 * answers, still without starting one (what the admin view's forms
	 * need: a page view must not cost a gVisor sandbox) */
	want = http_query_get(req, "preflight");
	if (want && strcmp(want, "false") == 0)
		mode = PF_NONE;
	else if (want && strcmp(want, "cached") == 0)
		mode = PF_CACHED;
	else if (want && strcmp(want, "true") != 0)
		return model_error_set(err, MODEL_E_MALFORMED, "preflight",
		                       "preflight must be true, false or cached");
	if (http_run_tenant_policy(req, &allowed, &def, err))
		return -1;
	list = http_req_own(req, json_array());
	for (i = 0; http_config_known_backends[i]; i++) {
		name = http_config_known_backends[i];
		checked = json_null();
		if (mode == PF_RUN) {
			preflight(req->cfg, i, name, &pf);
			checked = json_pack("{s:b, s:o}", "ok", pf.ok, "reason",
			                    pf.ok ? json_null() : json_string(pf.reason));
		} else if (mode == PF_CACHED) {
			checked = preflight_cached(i);
		}
		item = json_pack("{s:s, s:b, s:b, s:o}", "name", name, "allowed",
		                 http_config_list_has(allowed, name), "default",
		                 strcmp(def, name) == 0, "preflight", checked);
		if (!item)
			return model_error_set(err, MODEL_E_INTERNAL, NULL,
			                       "cannot render the backends");
		json_array_append_new(list, item);
	}
	return http_reply_json(req, 200, http_req_own(req, json_pack("{s:O}", "backends", list)));
}
