/*
 * Comparisons, the pre-deployment check: POST /v1/m/sandbox/comparisons
 * (admin) queues a baseline and a candidate run of one scenario, on the
 * same scenario version and backend, with the comparison that waits for
 * them; when both have ended (executors run and score them), the store
 * records the verdict (model/verdict.h). GET lists the decided ones (what
 * a deployment gate reads with latest=true) and reads one, pending or
 * decided. Comparisons are append-only evidence.
 */
#include <stdlib.h>
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/export/junit.h"
#include "fcgi/run/job.h"
#include "model/scorer.h"
#include "model/text.h"
#include "model/stats.h"
#include "model/verdict.h"

/* The tolerance of a comparison body: absent gives the default; a value
 * that is not a number is malformed (400, like every wrong type); a number
 * outside [0, 1] is over its bound (422). */
static int parse_tolerance(json_t *v, double *tolerance, struct model_error *err)
{
	*tolerance = MODEL_DEFAULT_TOLERANCE;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return model_error_set(err, MODEL_E_MALFORMED, "tolerance",
		                       "tolerance must be a number");
	if (!(json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0))
		return model_error_set(err, MODEL_E_LIMIT, "tolerance",
		                       "tolerance must be a number from 0 to 1");
	/* to 9 decimals, as the delta it is compared with is recorded */
	*tolerance = model_score_round(json_number_value(v));
	return 0;
}

/* The repeats of a comparison body: absent gives 1; anything but an
 * integer from 1 to MODEL_STATS_MAX_REPEATS is malformed (400). */
static int parse_repeats(json_t *v, int *repeats, struct model_error *err)
{
	*repeats = 1;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > MODEL_STATS_MAX_REPEATS)
		return model_error_set(err, MODEL_E_MALFORMED, "repeats",
		                       "repeats must be an integer from 1 to 20");
	*repeats = (int)json_integer_value(v);
	return 0;
}

/* The verdict side of a recorded-to-be run. */
static void verdict_side(const struct store_run *run, struct model_verdict_side *side)
{
	side->status = run->status;
	side->scored = run->scored;
	side->score = run->score;
	side->reason = run->reason;
}

/* Record a comparison whose two runs failed before they were queued
 * (base->run and cand->run filled): the verdict of model/verdict.h over
 * them, the comparison and both runs in one transaction. */
static int record_now(struct http_request *req, struct store_comparison *cmp,
                      struct http_run_job *base, struct http_run_job *cand, const char *scenario_id,
                      const char *suite, struct model_error *err)
{
	struct model_verdict_side bs, cs;
	struct model_stats_run bm, cm;
	struct model_stats_result res;
	enum model_verdict verdict;
	char why[1400];
	json_t *out = NULL;
	enum store_rc rc;

	verdict_side(&base->run, &bs);
	verdict_side(&cand->run, &cs);
	why[0] = '\0';
	if (model_verdict_decide(&bs, &cs, cmp->tolerance, &verdict, &cmp->has_delta, &cmp->delta,
	                         why, sizeof(why)))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot decide the verdict");
	/* one failed pair whatever the repeats asked for: its statistics are
	 * those of a single run (no variance estimate) */
	memset(&bm, 0, sizeof(bm));
	memset(&cm, 0, sizeof(cm));
	bm.status = bs.status;
	bm.scored = bs.scored;
	bm.score = bs.score;
	bm.reason = bs.reason;
	cm.status = cs.status;
	cm.scored = cs.scored;
	cm.score = cs.score;
	cm.reason = cs.reason;
	if (model_stats_compare(&bm, &cm, 1, cmp->tolerance, &res))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot decide the verdict");
	cmp->repeats = 1;
	cmp->stats = http_req_own(req, res.stats);
	cmp->pass_k = http_req_own(req, res.pass_k);
	cmp->flaky_steps = http_req_own(req, res.flaky_steps);
	cmp->scenario_id = scenario_id;
	cmp->scenario_version = base->run.scenario_version;
	cmp->suite = suite;
	cmp->baseline = &base->run;
	cmp->candidate = &cand->run;
	cmp->verdict = model_verdict_name(verdict);
	/* the reason says why a comparison is inconclusive, and only then */
	cmp->reason = verdict == MODEL_VERDICT_INCONCLUSIVE && why[0] ? why : NULL;
	cmp->differing_steps = http_req_own(req, json_array());
	rc = store_comparison_record_idem(req->store, req->who.tenant_id, req->who.token_id, cmp,
	                                  http_req_idem(req, 201), &out);
	if (rc)
		return http_store_fail(req, rc, "comparison record", err);
	return http_run_reply(req, 1, http_req_own(req, out), 0, err);
}

int api_comparison_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"scenario_id", "baseline", "candidate", "suite",
	                                     "tolerance",   "backend",  "repeats",   NULL};
	struct http_run_job base, cand;
	struct store_comparison cmp;
	struct store_comparison_job cj;
	const char *requested, *suite, *scenario_id;
	char why[MODEL_REASON_BYTES];
	json_t *v, *out = NULL;
	enum store_rc rc;
	int ret = -1, max, repeats;

	memset(&base, 0, sizeof(base));
	memset(&cand, 0, sizeof(cand));
	memset(&cmp, 0, sizeof(cmp));
	memset(&cj, 0, sizeof(cj));
	/* the whole body is checked before anything runs: nothing is written */
	if (api_only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "scenario_id");
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario_id",
		                       "scenario_id is required (a scenario id)");
	scenario_id = json_string_value(v);
	if (http_run_parse_variant(req, json_object_get(req->json, "baseline"), "baseline", 1,
	                           &base.variant, err) ||
	    http_run_parse_variant(req, json_object_get(req->json, "candidate"), "candidate", 1,
	                           &cand.variant, err) ||
	    http_run_parse_suite(json_object_get(req->json, "suite"), 1, &suite, err) ||
	    parse_tolerance(json_object_get(req->json, "tolerance"), &cmp.tolerance, err) ||
	    parse_repeats(json_object_get(req->json, "repeats"), &repeats, err) ||
	    http_run_parse_backend(json_object_get(req->json, "backend"), &requested, err))
		return -1;
	if (http_run_choose_backend(req, requested, &base.backend, err))
		return -1;
	cand.backend = base.backend;
	if (http_run_variant_agent(req, base.variant, base.backend, &base.agent, err) ||
	    http_run_variant_agent(req, cand.variant, cand.backend, &cand.agent, err))
		return -1;
	/* an id that is not well-formed names no scenario: 404, as in paths */
	if (!model_id_valid(scenario_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "scenario_id", "scenario not found");
	scenario_id = http_req_strdup(req, scenario_id);
	/* both sides are scored against one version, pinned now */
	if (http_run_load_scenario(req, scenario_id, "scenario_id", &base.sc, err) ||
	    http_run_pin_suite(req, &suite, &base.suite_version, err) ||
	    http_quota_check(req, NULL, err))
		return -1;
	cand.suite_version = base.suite_version;
	base.kind = cand.kind = "comparison";
	base.scenario_id = cand.scenario_id = scenario_id;
	cand.sc = base.sc;
	base.suite = cand.suite = suite;

	if (http_run_offered(req, base.backend, why, sizeof(why), err) < 0)
		goto out;
	if (why[0]) {
		/* no live executor can run them: both fail now, and the
		 * comparison is recorded, inconclusive, as it would be if
		 * they had failed running */
		http_run_fail_now(&base, why);
		http_run_fail_now(&cand, why);
		ret = record_now(req, &cmp, &base, &cand, scenario_id, suite, err);
		goto out;
	}
	if (http_run_max_active(req, &max, err) || http_run_prepare(req, &base, err) ||
	    http_run_prepare(req, &cand, err))
		goto out;
	cj.scenario_id = scenario_id;
	cj.scenario_version = base.queued.scenario_version;
	cj.suite = suite;
	cj.tolerance = cmp.tolerance;
	cj.baseline = &base.queued;
	cj.candidate = &cand.queued;
	cj.repeats = repeats;
	rc = store_comparison_enqueue(req->store, req->who.tenant_id, req->who.token_id, &cj, max,
	                              http_req_idem(req, 202), &out);
	if (rc == STORE_LIMIT) {
		http_run_limit_error(max, 2 * repeats, err);
		goto out;
	}
	if (rc) {
		http_store_fail(req, rc, "comparison enqueue", err);
		goto out;
	}
	ret = http_run_reply(req, 1, http_req_own(req, out), http_run_wait_seconds(req), err);
out:
	http_run_job_free(&base);
	http_run_job_free(&cand);
	return ret;
}

int api_comparison_list(struct http_request *req, struct model_error *err)
{
	static const char *const verdicts[] = {"improved", "regressed", "unchanged", "inconclusive",
	                                       NULL};
	const char *scenario, *latest, *verdict;
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (api_list_window(req, &limit, &offset, err))
		return -1;
	scenario = http_query_get(req, "scenario");
	if (scenario && !model_id_valid(scenario))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario",
		                       "scenario must be a scenario id");
	verdict = http_query_get(req, "verdict");
	if (verdict && !api_one_of(verdict, verdicts))
		return model_error_set(err, MODEL_E_MALFORMED, "verdict",
		                       "verdict must be improved, regressed, unchanged or "
		                       "inconclusive");
	latest = http_query_get(req, "latest");
	if (latest && strcmp(latest, "true") != 0 && strcmp(latest, "false") != 0)
		return model_error_set(err, MODEL_E_MALFORMED, "latest",
		                       "latest must be true or false");
	if (latest && strcmp(latest, "true") == 0) {
		/* what a deployment gate reads: the newest of one scenario */
		if (!scenario)
			return model_error_set(err, MODEL_E_MALFORMED, "scenario",
			                       "latest=true requires scenario");
		limit = 1;
		offset = 0;
	}
	rc = store_comparison_list_filtered(req->store, req->who.tenant_id, scenario, verdict,
	                                    limit, offset, &out);
	if (rc)
		return http_store_fail(req, rc, "comparison list", err);
	return http_reply_json(req, 200, http_req_own(req, out));
}

/* The comparison with its approvals: "approvals" the history, oldest
 * first, and "approval" the newest (the one that counts), or null. */
int api_comparison_get(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL, *list = NULL, *hist;
	enum store_rc rc;
	size_t n;

	rc = store_comparison_get(req->store, req->who.tenant_id, req->params[0], &out);
	if (rc)
		return api_reply_stored(req, rc, "comparison get", 200, out, err);
	http_req_own(req, out);
	rc = store_approval_list(req->store, req->who.tenant_id, req->params[0], &list);
	if (rc)
		return http_store_fail(req, rc, "approval list", err);
	http_req_own(req, list);
	hist = json_object_get(list, "approvals");
	n = json_array_size(hist);
	json_object_set_new(out, "approval",
	                    n ? json_incref(json_array_get(hist, n - 1)) : json_null());
	json_object_set(out, "approvals", hist);
	return http_reply_json(req, 200, out);
}

/* Characters of a UTF-8 string (jansson keeps strings valid UTF-8). */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* Does the reason hold a control character (C0 but tab, line feed and
 * carriage return; DEL; C1)? A reason is read by reviewers in the view,
 * the CLI and the signed evidence: it holds what it shows, no terminal
 * escape stored to be escaped at every reading. */
static int has_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), len;
	long c;

	while (n) {
		c = model_text_utf8_at(p, n, &len);
		if ((c >= 0 && c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ||
		    (c >= 0x80 && c < 0xa0))
			return 1;
		p += len;
		n -= len;
	}
	return 0;
}

/* POST …/comparisons/{id}/approval: an admin's decision on a settled
 * verdict, appended (the newest counts) with its audit event. */
int api_comparison_approve(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"decision", "reason", NULL};
	static const char *const decisions[] = {"approved", "rejected", NULL};
	const char *decision, *reason;
	json_t *out = NULL;
	enum store_rc rc;
	size_t chars;

	if (api_only_fields(req->json, fields, err))
		return -1;
	decision = json_string_value(json_object_get(req->json, "decision"));
	if (!decision || !api_one_of(decision, decisions))
		return model_error_set(err, MODEL_E_MALFORMED, "decision",
		                       "decision must be \"approved\" or \"rejected\"");
	reason = json_string_value(json_object_get(req->json, "reason"));
	chars = reason ? utf8_chars(reason) : 0;
	if (!reason || chars < 1 || chars > API_APPROVAL_REASON_MAX ||
	    model_text_is_blank(reason, strlen(reason)) ||
	    strlen(reason) != json_string_length(json_object_get(req->json, "reason")))
		return model_error_set(err, MODEL_E_MALFORMED, "reason",
		                       "reason must be a string of 1 to %d characters, not blank",
		                       API_APPROVAL_REASON_MAX);
	if (has_control(reason))
		return model_error_set(err, MODEL_E_MALFORMED, "reason",
		                       "reason must not hold control characters (tab and line "
		                       "breaks are allowed)");
	rc = store_approval_append(req->store, req->who.tenant_id, req->who.token_id,
	                           req->params[0], decision, reason, &out);
	if (rc == STORE_CONFLICT)
		return model_error_set(err, MODEL_E_CONFLICT, NULL,
		                       "the comparison is not settled yet: only a recorded verdict "
		                       "can be approved or rejected");
	if (rc)
		return http_store_fail(req, rc, "comparison approve", err);
	return http_reply_json(req, 201, http_req_own(req, out));
}

int api_comparison_junit(struct http_request *req, struct model_error *err)
{
	const char *status;
	json_t *cmp = NULL;
	enum store_rc rc;
	char *xml = NULL;
	size_t len = 0;

	rc = store_comparison_get(req->store, req->who.tenant_id, req->params[0], &cmp);
	if (rc)
		return http_store_fail(req, rc, "comparison get (junit)", err);
	http_req_own(req, cmp);
	status = json_string_value(json_object_get(cmp, "status"));
	/* a pending comparison has no verdict yet: exporting it would show a
	 * CI reader a result that does not exist */
	if (!status || strcmp(status, "decided") != 0)
		return model_error_set(err, MODEL_E_CONFLICT, NULL,
		                       "comparison %s is %s: no verdict to export yet",
		                       req->params[0], status ? status : "not decided");
	if (http_junit_render_comparison(cmp, &xml, &len))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot render the JUnit XML");
	http_reply_body(req, 200, "application/xml; charset=utf-8", xml, len);
	free(xml);
	return 0;
}
