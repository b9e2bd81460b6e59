/*
 * Comparisons (append-only): a baseline and a candidate run of one scenario
 * recorded with their verdict in one transaction. They are evidence: there
 * is no function to update or delete one, and the schema refuses UPDATE and
 * DELETE on the table (triggers of migration 002).
 */
#include "sql/store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flat row; comparison_shape nests it as store.h documents. status,
 * scored and shutdown of each side are read from its run (terminal before
 * the comparison is decided, and never changed afterwards). */
static const struct colspec comparison_cols[] = {
    {"id", C_TEXT},           {"scenario_id", C_TEXT},    {"scenario_version", C_INT},
    {"suite", C_TEXT},        {"tolerance", C_REAL},      {"b_variant", C_TEXT},
    {"b_run_id", C_TEXT},     {"b_status", C_TEXT},       {"b_scored", C_BOOL},
    {"b_score", C_REAL},      {"b_shutdown", C_TEXT},     {"c_variant", C_TEXT},
    {"c_run_id", C_TEXT},     {"c_status", C_TEXT},       {"c_scored", C_BOOL},
    {"c_score", C_REAL},      {"c_shutdown", C_TEXT},     {"delta", C_REAL},
    {"verdict", C_TEXT},      {"reason", C_TEXT},         {"differing_steps", C_JSON},
    {"decided_by", C_TEXT},   {"created_at", C_TEXT},     {"status", C_TEXT},
    {"b_agent_name", C_TEXT}, {"b_agent_sha256", C_TEXT}, {"b_mocks_digest", C_TEXT},
    {"c_agent_name", C_TEXT}, {"c_agent_sha256", C_TEXT}, {"c_mocks_digest", C_TEXT},
    {"repeats", C_INT},       {"run_ids", C_JSON},        {"stats", C_JSON},
    {"pass_k", C_JSON},       {"flaky_steps", C_JSON}};
/* Each side's agent and mocks (migration 011), after the other columns. */
#define COMPARISON_AGENT_COLS                                                                      \
	", b.agent_name, b.agent_sha256, b.mocks_digest, k.agent_name, k.agent_sha256, "           \
	"k.mocks_digest "
/* The repeats and their statistics (migration 016), after those. */
#define COMPARISON_REPEAT_COLS ", c.repeats, c.run_ids, c.stats, c.pass_k, c.flaky_steps "
#define COMPARISON_PENDING_REPEAT_COLS                                                             \
	", j.repeats, j.run_ids, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT) "
/* Both joins stay inside the tenant: a run id of another tenant never
 * matches. */
#define COMPARISON_SELECT                                                                          \
	"SELECT c.id, c.scenario_id, c.scenario_version, c.suite, c.tolerance, "                   \
	"c.baseline_variant, c.baseline_run_id, b.status, b.scored, c.baseline_score, "            \
	"b.shutdown, "                                                                             \
	"c.candidate_variant, c.candidate_run_id, k.status, k.scored, c.candidate_score, "         \
	"k.shutdown, "                                                                             \
	"c.delta, c.verdict, c.reason, c.differing_steps, c.decided_by, c.created_at, "            \
	"'decided'" COMPARISON_AGENT_COLS COMPARISON_REPEAT_COLS "FROM comparisons c "             \
	"JOIN runs b ON b.tenant_id = c.tenant_id AND b.id = c.baseline_run_id "                   \
	"JOIN runs k ON k.tenant_id = c.tenant_id AND k.id = c.candidate_run_id"

/* A comparison asked for (store_comparison_enqueue) whose verdict is not
 * recorded yet: the same columns from its request and its runs, verdict,
 * delta and reason null, no differing step, decided_by the requester. */
#define COMPARISON_PENDING_SELECT                                                                  \
	"SELECT j.id, j.scenario_id, j.scenario_version, j.suite, j.tolerance, "                   \
	"b.variant, j.baseline_run_id, b.status, b.scored, b.score, b.shutdown, "                  \
	"k.variant, j.candidate_run_id, k.status, k.scored, k.score, k.shutdown, "                 \
	"CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS TEXT), CAST(NULL AS TEXT), '[]', "           \
	"j.created_by, j.created_at, 'pending'" COMPARISON_AGENT_COLS                              \
	    COMPARISON_PENDING_REPEAT_COLS "FROM comparison_jobs j "                               \
	"JOIN runs b ON b.tenant_id = j.tenant_id AND b.id = j.baseline_run_id "                   \
	"JOIN runs k ON k.tenant_id = j.tenant_id AND k.id = j.candidate_run_id "                  \
	"WHERE j.tenant_id = ? AND j.id = ?"

static const char *const comparison_verdicts[] = {"improved", "regressed", "unchanged",
                                                  "inconclusive"};

struct comparison_arg {
	const char *tenant_id;
	const char *actor;
	const struct store_comparison *cmp;
	const struct store_idem *idem; /* record only; NULL: none */
	const char *scenario_id;       /* list filters; NULL matches every row */
	const char *verdict;
	int limit, offset;
	json_t *out;
};

/* One side {"variant","run_id","status","scored","score","shutdown",
 * "agent"} from the flat row's columns prefixed p ("b_" or "c_"). */
static json_t *comparison_side(json_t *flat, const char *p)
{
	char name[32], sha[32];
	static const char *const keys[] = {"variant", "run_id", "status",
	                                   "scored",  "score",  "shutdown"};
	char col[32];
	json_t *side = json_object();
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		snprintf(col, sizeof col, "%s%s", p, keys[i]);
		v = json_object_get(flat, col);
		json_object_set_nocheck(side, keys[i], v ? v : json_null());
	}
	snprintf(name, sizeof name, "%sagent_name", p);
	snprintf(sha, sizeof sha, "%sagent_sha256", p);
	v = json_object_get(flat, name);
	json_object_set_new_nocheck(side, "agent",
	                            json_is_string(v)
	                                ? json_pack("{s:O, s:O}", "name", v, "sha256",
	                                            json_object_get(flat, sha) ?: json_null())
	                                : json_null());
	return side;
}

static int side_ended(json_t *flat, const char *col)
{
	const char *st = json_string_value(json_object_get(flat, col));

	return st && strcmp(st, "queued") != 0 && strcmp(st, "running") != 0;
}

static int same_text(json_t *flat, const char *a, const char *b)
{
	const char *x = json_string_value(json_object_get(flat, a));
	const char *y = json_string_value(json_object_get(flat, b));

	return x && y && strcmp(x, y) == 0;
}

/*
 * "same_agent": true when both sides ran the same program (the same
 * sha256, or the same built-in agent) on the same mocks (the same
 * mocks_digest), so the comparison compares a program with itself; false
 * when they differ or a side's program was never hashed; null while a
 * side has not ended or for runs recorded without an agent.
 */
static json_t *same_agent(json_t *flat)
{
	const char *bn = json_string_value(json_object_get(flat, "b_agent_name"));
	const char *cn = json_string_value(json_object_get(flat, "c_agent_name"));
	int program;

	if (!bn || !cn || !side_ended(flat, "b_status") || !side_ended(flat, "c_status"))
		return json_null();
	if (json_is_string(json_object_get(flat, "b_agent_sha256")))
		program = same_text(flat, "b_agent_sha256", "c_agent_sha256");
	else
		program = !json_is_string(json_object_get(flat, "c_agent_sha256")) &&
		          strncmp(bn, "builtin:", 8) == 0 && strcmp(bn, cn) == 0;
	return json_boolean(program && same_text(flat, "b_mocks_digest", "c_mocks_digest"));
}

/*
 * "repeats", "runs" {"baseline":[ids],"candidate":[ids]}, "stats",
 * "pass_k" and "flaky_steps" of a flat row into o. A comparison recorded
 * before repeats has one pair (its runs, stats null); a pending one has
 * its runs and no statistics yet (stats and pass_k null, flaky_steps []).
 */
static void repeat_shape(json_t *flat, json_t *o)
{
	json_t *v = json_object_get(flat, "repeats");
	json_t *ids = json_object_get(flat, "run_ids");
	json_t *flaky = json_object_get(flat, "flaky_steps");

	json_object_set_nocheck(o, "repeats", json_is_integer(v) ? v : json_integer(1));
	if (json_is_object(ids))
		json_object_set_nocheck(o, "runs", ids);
	else
		json_object_set_new_nocheck(
		    o, "runs",
		    json_pack("{s:[O], s:[O]}", "baseline",
		              json_object_get(flat, "b_run_id") ?: json_null(), "candidate",
		              json_object_get(flat, "c_run_id") ?: json_null()));
	v = json_object_get(flat, "stats");
	json_object_set_nocheck(o, "stats", v ? v : json_null());
	v = json_object_get(flat, "pass_k");
	json_object_set_nocheck(o, "pass_k", v ? v : json_null());
	if (json_is_array(flaky))
		json_object_set_nocheck(o, "flaky_steps", flaky);
	else
		json_object_set_new_nocheck(o, "flaky_steps", json_array());
}

/* The API object of a flat comparison row (new reference; flat borrowed). */
static json_t *comparison_shape(json_t *flat)
{
	static const char *const top[] = {"id", "scenario_id", "scenario_version", "suite",
	                                  "tolerance"};
	static const char *const rest[] = {"delta",      "verdict",    "reason", "differing_steps",
	                                   "decided_by", "created_at", "status"};
	json_t *o = json_object();
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof top / sizeof top[0]; i++) {
		v = json_object_get(flat, top[i]);
		json_object_set_nocheck(o, top[i], v ? v : json_null());
	}
	json_object_set_new_nocheck(o, "baseline", comparison_side(flat, "b_"));
	json_object_set_new_nocheck(o, "candidate", comparison_side(flat, "c_"));
	json_object_set_new_nocheck(o, "same_agent", same_agent(flat));
	for (i = 0; i < sizeof rest / sizeof rest[0]; i++) {
		v = json_object_get(flat, rest[i]);
		json_object_set_nocheck(o, rest[i], v ? v : json_null());
	}
	repeat_shape(flat, o);
	return o;
}

/* Every row of sql into arr as API objects. */
static enum store_rc comparison_rows(struct store *st, const char *sql, struct param *p, size_t n,
                                     json_t *arr)
{
	json_t *flat = json_array();
	json_t *row;
	enum store_rc rc;
	size_t i;

	rc = store_q_rows(st, sql, p, n, comparison_cols, NPARAMS(comparison_cols), flat);
	if (!rc)
		json_array_foreach(flat, i, row) json_array_append_new(arr, comparison_shape(row));
	json_decref(flat);
	return rc;
}

/* The decided comparison id, else the pending one: a comparison settled
 * between the two reads is seen pending, as it was a moment before. */
static enum store_rc comparison_read(struct store *st, const char *tenant_id, const char *id,
                                     json_t **out)
{
	struct param p[] = {PT(tenant_id), PT(id)};
	json_t *arr = json_array();
	enum store_rc rc;

	*out = NULL;
	rc = comparison_rows(st, COMPARISON_SELECT " WHERE c.tenant_id = ? AND c.id = ?", p,
	                     NPARAMS(p), arr);
	if (!rc && json_array_size(arr) == 0)
		rc = comparison_rows(st, COMPARISON_PENDING_SELECT, p, NPARAMS(p), arr);
	if (!rc && json_array_size(arr) == 0)
		rc = STORE_NOT_FOUND;
	if (!rc)
		*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return rc;
}

/*
 * Insert the comparison row id of c between the runs bid and kid (their
 * variants and scores from c's runs) and its "sandbox.compare" audit event
 * by actor, also its decided_by, inside the caller's transaction.
 * STORE_CONFLICT when the id is taken (a comparison settled twice).
 */
enum store_rc store_comparison_insert(struct store *st, const char *tenant_id, const char *actor,
                                      const char *id, const struct store_comparison *c,
                                      const char *bid, const char *kid)
{
	const struct store_run *b = c->baseline, *k = c->candidate;
	char now[32];
	char *diff, *ids, *stats, *pass_k, *flaky;
	enum store_rc rc;
	json_t *detail;

	diff = json_dumps(c->differing_steps, JSON_COMPACT);
	if (!diff) {
		store_seterr(st, "comparison: differing_steps do not encode");
		return STORE_ERROR;
	}
	ids = c->run_ids ? json_dumps(c->run_ids, JSON_COMPACT) : NULL;
	stats = c->stats ? json_dumps(c->stats, JSON_COMPACT) : NULL;
	pass_k = c->pass_k ? json_dumps(c->pass_k, JSON_COMPACT) : NULL;
	flaky = c->flaky_steps ? json_dumps(c->flaky_steps, JSON_COMPACT) : NULL;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),
		                    PT(tenant_id),
		                    PT(c->scenario_id),
		                    PI(c->scenario_version),
		                    PT(c->suite),
		                    PR(1, c->tolerance),
		                    PT(b->variant),
		                    PT(bid),
		                    PR(b->scored, b->score),
		                    PT(k->variant),
		                    PT(kid),
		                    PR(k->scored, k->score),
		                    PR(c->has_delta, c->delta),
		                    PT(c->verdict),
		                    PT(c->reason),
		                    PT(diff),
		                    PT(actor),
		                    PT(now),
		                    PI(c->repeats > 0 ? c->repeats : 1),
		                    PT(ids),
		                    PT(stats),
		                    PT(pass_k),
		                    PT(flaky)};

		rc = store_q_exec(
		    st,
		    "INSERT INTO comparisons (id, tenant_id, scenario_id, scenario_version, "
		    "suite, tolerance, baseline_variant, baseline_run_id, baseline_score, "
		    "candidate_variant, candidate_run_id, candidate_score, delta, verdict, "
		    "reason, differing_steps, decided_by, created_at, repeats, run_ids, stats, "
		    "pass_k, flaky_steps) VALUES (?, ?, ?, ?, ?, "
		    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		    p, NPARAMS(p), NULL, NULL);
	}
	free(diff);
	free(ids);
	free(stats);
	free(pass_k);
	free(flaky);
	if (rc)
		return rc;
	detail = json_pack("{s:s,s:s,s:s,s:s}", "scenario_id", c->scenario_id, "baseline_run_id",
	                   bid, "candidate_run_id", kid, "verdict", c->verdict);
	rc = store_audit_insert(st, tenant_id, actor, "sandbox.compare", id, detail);
	json_decref(detail);
	return rc;
}

enum store_rc store_comparison_read(struct store *st, const char *tenant_id, const char *id,
                                    json_t **out)
{
	return comparison_read(st, tenant_id, id, out);
}

static enum store_rc tx_comparison_record(struct store *st, void *arg)
{
	struct comparison_arg *a = arg;
	const struct store_comparison *c = a->cmp;
	const struct store_run *b = c->baseline, *k = c->candidate;
	char bid[33], kid[33], id[33];
	enum store_rc rc;

	json_decref(a->out);
	a->out = NULL;
	rc = store_run_insert(st, a->tenant_id, a->actor, b, bid);
	if (rc)
		return rc;
	rc = store_run_insert(st, a->tenant_id, a->actor, k, kid);
	if (rc)
		return rc;
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	rc = store_comparison_insert(st, a->tenant_id, a->actor, id, c, bid, kid);
	if (rc)
		return rc;
	rc = comparison_read(st, a->tenant_id, id, &a->out);
	if (rc)
		return rc;
	return store_idem_insert(st, a->tenant_id, a->idem, a->out);
}

static int verdict_known(const char *v)
{
	size_t i;

	for (i = 0; v && i < sizeof comparison_verdicts / sizeof comparison_verdicts[0]; i++)
		if (strcmp(v, comparison_verdicts[i]) == 0)
			return 1;
	return 0;
}

enum store_rc store_comparison_record(struct store *st, const char *tenant_id,
                                      const char *actor_token_id,
                                      const struct store_comparison *cmp, json_t **out)
{
	return store_comparison_record_idem(st, tenant_id, actor_token_id, cmp, NULL, out);
}

enum store_rc store_comparison_record_idem(struct store *st, const char *tenant_id,
                                           const char *actor_token_id,
                                           const struct store_comparison *cmp,
                                           const struct store_idem *idem, json_t **out)
{
	struct comparison_arg a = {.tenant_id = tenant_id, .actor = actor_token_id, .idem = idem};
	struct store_comparison c;
	struct store_run b, k;
	json_t *bempty = NULL, *kempty = NULL;
	enum store_rc rc;

	*out = NULL;
	if (!tenant_id || !cmp ||
	    !store_text_ok(cmp->scenario_id, 1, MODEL_MAX_SCENARIO_REF_BYTES) ||
	    !store_text_ok(cmp->suite, 1, MODEL_MAX_SUITE_NAME_BYTES) ||
	    !verdict_known(cmp->verdict) || !(cmp->tolerance >= 0.0 && cmp->tolerance <= 1.0) ||
	    !json_is_array(cmp->differing_steps)) {
		store_seterr(st,
		             "comparison: tenant, scenario_id, suite (1..%d bytes), a known "
		             "verdict, a tolerance in [0, 1] and a differing_steps array are "
		             "required",
		             MODEL_MAX_SUITE_NAME_BYTES);
		return STORE_ERROR;
	}
	rc = store_run_check(st, cmp->baseline, &b, &bempty);
	if (!rc)
		rc = store_run_check(st, cmp->candidate, &k, &kempty);
	if (rc)
		goto out;
	if (cmp->has_delta && (!b.scored || !k.scored)) {
		store_seterr(st, "comparison: a delta needs both runs scored");
		rc = STORE_ERROR;
		goto out;
	}
	c = *cmp;
	c.baseline = &b;
	c.candidate = &k;
	a.cmp = &c;
	rc = store_tx_json(st, tx_comparison_record, &a, &a.out, out);
out:
	json_decref(bempty);
	json_decref(kempty);
	return rc;
}

/* The reads of comparisons below run without an explicit transaction
 * (store_get, store_read_json): a decided comparison and the runs it joins
 * are written before it and never changed afterwards. */
enum store_rc store_comparison_get(struct store *st, const char *tenant_id, const char *id,
                                   json_t **out)
{
	return store_get(st, comparison_read, tenant_id, id, out);
}

/*
 * The list of comparisons: the WHERE clause is built from fixed fragments,
 * one "AND col = ?" per filter given (4 distinct texts, all kept by the
 * statement cache); every value is bound, so a verdict that names none of
 * the four matches no row.
 */
static enum store_rc tx_comparison_list(struct store *st, void *arg)
{
	struct comparison_arg *a = arg;
	const struct store_filter_cond conds[] = {{a->scenario_id, " AND c.scenario_id = ?"},
	                                          {a->verdict, " AND c.verdict = ?"}};
	const struct store_list_query q = {.head = COMPARISON_SELECT " WHERE c.tenant_id = ?",
	                                   .order = " ORDER BY c.ord DESC",
	                                   .tenant_id = a->tenant_id,
	                                   .conds = conds,
	                                   .nconds = NPARAMS(conds),
	                                   .limit = a->limit,
	                                   .offset = a->offset};

	json_decref(a->out);
	a->out = NULL;
	return store_q_filtered(st, &q, comparison_rows, "comparisons", &a->out);
}

enum store_rc store_comparison_list_filtered(struct store *st, const char *tenant_id,
                                             const char *scenario_id, const char *verdict,
                                             int limit, int offset, json_t **out)
{
	struct comparison_arg a = {.tenant_id = tenant_id ? tenant_id : "",
	                           .scenario_id = scenario_id,
	                           .verdict = verdict,
	                           .limit = store_clamp_limit(limit),
	                           .offset = offset < 0 ? 0 : offset};

	*out = NULL;
	return store_read_json(st, tx_comparison_list, &a, &a.out, out);
}

enum store_rc store_comparison_list(struct store *st, const char *tenant_id,
                                    const char *scenario_id, int limit, int offset, json_t **out)
{
	return store_comparison_list_filtered(st, tenant_id, scenario_id, NULL, limit, offset, out);
}
