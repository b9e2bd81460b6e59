/*
 * Runs: POST /v1/m/sandbox/scenarios/{id}/runs (a simulation run of a
 * stored scenario, queued for an executor by fcgi/run/job.h), POST
 * runs/{id}/cancel, and the reads: GET /v1/m/sandbox/runs (filtered
 * list), runs/{id}, runs/{id}/outputs, runs/{id}/junit and runs/{id}/log.
 */
#include <stdlib.h>
#include <string.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/export/junit.h"
#include "fcgi/run/job.h"
#include "model/runlog.h"
#include "model/text.h"

int api_run_create(struct http_request *req, struct model_error *err)
{
	static const char *const fields[] = {"variant", "backend", "suite", "record", NULL};
	struct http_run_job job;
	const char *requested;
	json_t *record;
	int ret;

	memset(&job, 0, sizeof(job));
	job.kind = "simulation";
	job.scenario_id = req->params[0];
	/* every refusal comes before the run is queued: nothing is written */
	if (api_only_fields(req->json, fields, err) ||
	    http_run_parse_backend(json_object_get(req->json, "backend"), &requested, err) ||
	    http_run_parse_variant(req, json_object_get(req->json, "variant"), "variant", 0,
	                           &job.variant, err) ||
	    http_run_parse_suite(json_object_get(req->json, "suite"), 0, &job.suite, err))
		return -1;
	record = json_object_get(req->json, "record");
	if (record && !json_is_boolean(record))
		return model_error_set(err, MODEL_E_MALFORMED, "record",
		                       "record must be true or false");
	job.record = json_is_true(record);
	if (http_run_choose_backend(req, requested, &job.backend, err) ||
	    http_run_variant_agent(req, job.variant, job.backend, &job.agent, err) ||
	    http_run_load_scenario(req, job.scenario_id, NULL, &job.sc, err) ||
	    http_run_pin_suite(req, &job.suite, &job.suite_version, err) ||
	    http_quota_check(req, NULL, err))
		return -1;
	ret = http_run_submit(req, &job, err);
	http_run_job_free(&job);
	return ret;
}

int api_run_cancel(struct http_request *req, struct model_error *err)
{
	json_t *out = NULL, *before = NULL;
	enum store_rc rc;

	rc = store_run_cancel(req->store, req->who.tenant_id, req->who.token_id, req->params[0],
	                      &out);
	if (rc == STORE_CONFLICT) {
		/* the run ended first: say how, as the record has it */
		if (store_run_get(req->store, req->who.tenant_id, req->params[0], &before) ==
		    STORE_OK)
			http_req_own(req, before);
		return model_error_set(
		    err, MODEL_E_CONFLICT, NULL, "run %s has already ended (%s): nothing to cancel",
		    req->params[0],
		    json_string_value(json_object_get(before, "status")) ?: "terminal");
	}
	return api_reply_stored(req, rc, "run cancel", 200, out, err);
}

int api_run_list(struct http_request *req, struct model_error *err)
{
	static const char *const statuses[] = {"queued",   "running",   "completed", "failed",
	                                       "degraded", "cancelled", NULL};
	static const char *const kinds[] = {"simulation", "replay", "comparison", NULL};
	struct store_run_filter f;
	json_t *out = NULL;
	enum store_rc rc;
	int limit, offset;

	if (api_list_window(req, &limit, &offset, err))
		return -1;
	memset(&f, 0, sizeof(f));
	f.scenario_id = http_query_get(req, "scenario");
	if (f.scenario_id && !model_id_valid(f.scenario_id))
		return model_error_set(err, MODEL_E_MALFORMED, "scenario",
		                       "scenario must be a scenario id");
	f.status = http_query_get(req, "status");
	if (f.status && !api_one_of(f.status, statuses))
		return model_error_set(
		    err, MODEL_E_MALFORMED, "status",
		    "status must be queued, running, completed, failed, degraded or "
		    "cancelled");
	f.kind = http_query_get(req, "kind");
	if (f.kind && !api_one_of(f.kind, kinds))
		return model_error_set(err, MODEL_E_MALFORMED, "kind",
		                       "kind must be simulation, replay or comparison");
	f.session_id = http_query_get(req, "session");
	if (f.session_id && !model_id_valid(f.session_id))
		return model_error_set(err, MODEL_E_MALFORMED, "session",
		                       "session must be a session id");
	rc = store_run_list_filtered(req->store, req->who.tenant_id, &f, limit, offset, &out);
	return api_reply_stored(req, rc, "run list", 200, out, err);
}

int api_run_get(struct http_request *req, struct model_error *err)
{
	return api_reply_item(req, store_run_get, "run get", err);
}

int api_run_outputs(struct http_request *req, struct model_error *err)
{
	return api_reply_item(req, store_run_outputs, "run outputs", err);
}

int api_run_junit(struct http_request *req, struct model_error *err)
{
	json_t *run = NULL, *outputs = NULL;
	enum store_rc rc;
	char *xml = NULL;
	size_t len = 0;

	rc = store_run_get(req->store, req->who.tenant_id, req->params[0], &run);
	if (rc)
		return http_store_fail(req, rc, "run get (junit)", err);
	http_req_own(req, run);
	rc = store_run_outputs(req->store, req->who.tenant_id, req->params[0], &outputs);
	if (rc)
		return http_store_fail(req, rc, "run outputs (junit)", err);
	http_req_own(req, outputs);
	if (http_junit_render(run, json_object_get(outputs, "outputs"), &xml, &len))
		return model_error_set(err, MODEL_E_INTERNAL, NULL, "cannot render the JUnit XML");
	http_reply_body(req, 200, "application/xml; charset=utf-8", xml, len);
	free(xml);
	return 0;
}

int api_run_log(struct http_request *req, struct model_error *err)
{
	json_t *log = NULL, *text;
	struct model_buf body;
	enum store_rc rc;

	rc = store_run_log(req->store, req->who.tenant_id, req->params[0], &log);
	if (rc)
		return http_store_fail(req, rc, "run log", err);
	http_req_own(req, log);
	text = json_object_get(log, "text");
	/* the stored text, and the mark when the cap dropped some */
	model_buf_init(&body, json_string_length(text) + MODEL_RUN_LOG_MARK_BYTES + 2);
	model_buf_must_fit(
	    model_runlog_shown(&body, json_string_value(text), json_string_length(text),
	                       (long long)json_integer_value(json_object_get(log, "dropped"))));
	http_reply_body(req, 200, "text/plain; charset=utf-8", body.data, body.len);
	model_buf_release(&body);
	return 0;
}
