/*
 * POST /v1/m/sandbox/replays (editor): rebuild a history session's
 * timeline (model/history.h) and queue it like a simulation (the same
 * policy, agent resolution and queue: fcgi/run/job.h), with the recorded
 * tool results as mocks and the recorded outputs in its job, so that its
 * executor compares the outputs with them (the run's divergence). The digest is dispatch's, over the
 * ordered outputs: the same session, variant and backend give the same
 * digest. A timeline that cannot be rebuilt is recorded degraded, with
 * zero steps, never fabricated.
 */
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/run/job.h"
#include "model/history.h"
#include "model/text.h"

int api_replay_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"session_id", "variant",     "backend",
	                                     "suite",      "scenario_id", NULL};
	struct model_timeline tl;
	struct http_run_job job;
	const char *requested, *session_id, *scenario_id;
	struct model_reason why;
	json_t *v, *events = NULL, *out = NULL;
	enum store_rc rc;
	int ret = -1;

	memset(&job, 0, sizeof(job));
	memset(&tl, 0, sizeof(tl));
	job.kind = "replay";
	/* the whole body is checked and every id resolved before anything
	 * runs: a refused request writes nothing */
	if (api_only_fields(req->json, fields, err))
		return -1;
	v = json_object_get(req->json, "session_id");
	if (!json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "session_id",
		                       "session_id is required (a session id)");
	session_id = json_string_value(v);
	v = json_object_get(req->json, "scenario_id");
	if (v && !json_is_null(v) && !json_is_string(v))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario_id",
		                       "scenario_id must be a scenario id or null");
	scenario_id = json_string_value(v);
	if (http_run_parse_backend(json_object_get(req->json, "backend"), &requested, err) ||
	    http_run_parse_variant(req, json_object_get(req->json, "variant"), "variant", 0,
	                           &job.variant, err) ||
	    http_run_parse_suite(json_object_get(req->json, "suite"), 0, &job.suite, err))
		return -1;
	if (http_run_choose_backend(req, requested, &job.backend, err) ||
	    http_run_variant_agent(req, job.variant, job.backend, &job.agent, err))
		return -1;
	/* ids that are not well-formed name nothing: 404, as in paths */
	if (!model_id_valid(session_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "session_id", "session not found");
	if (scenario_id && !model_id_valid(scenario_id))
		return model_error_set(err, MODEL_E_NOT_FOUND, "scenario_id", "scenario not found");
	job.session_id = http_req_strdup(req, session_id);
	if (http_run_load_session(req, job.session_id, &events, err))
		return -1;
	if (scenario_id) {
		job.scenario_id = http_req_strdup(req, scenario_id);
		if (http_run_load_scenario(req, job.scenario_id, "scenario_id", &job.sc, err))
			return -1;
	}
	if (http_run_pin_suite(req, &job.suite, &job.suite_version, err) ||
	    http_quota_check(req, NULL, err))
		return -1;

	if (model_timeline_rebuild(events, &tl, &why)) {
		http_run_replay_degraded(
		    req, &job, why.text[0] ? why.text : "the history source gave no reason");
		rc = store_run_record_idem(req->store, req->who.tenant_id, req->who.token_id,
		                           &job.run, http_req_idem(req, 201), &out);
		if (rc) {
			http_store_fail(req, rc, "replay record", err);
			goto out;
		}
		ret = http_run_reply(req, 0, http_req_own(req, out), 0, err);
		goto out;
	}
	job.plan = http_req_own(req, json_pack("{s:O, s:o}", "steps", tl.steps, "mocks",
	                                       http_run_replay_mocks(tl.mocks, job.sc)));
	job.recorded = tl.recorded;
	if (!job.plan) {
		model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot build the replay");
		goto out;
	}
	ret = http_run_submit(req, &job, err);
out:
	model_timeline_clear(&tl);
	http_run_job_free(&job);
	return ret;
}
