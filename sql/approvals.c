/*
 * Approvals (append-only): an admin's decision on a settled comparison. A
 * later decision is a new row and the newest counts; the schema refuses
 * UPDATE and DELETE on the table (triggers of migration 015).
 */
#include "sql/store_internal.h"

#include <string.h>

static const struct colspec approval_cols[] = {{"id", C_TEXT},         {"comparison_id", C_TEXT},
                                               {"decision", C_TEXT},   {"reason", C_TEXT},
                                               {"decided_by", C_TEXT}, {"created_at", C_TEXT}};

#define APPROVAL_SELECT                                                                            \
	"SELECT id, comparison_id, decision, reason, decided_by, created_at "                      \
	"FROM comparison_approvals WHERE tenant_id = ? AND comparison_id = ? ORDER BY ord"

struct approval_arg {
	const char *tenant_id;
	const char *actor;
	const char *comparison_id;
	const char *decision;
	const char *reason;
	json_t *out;
};

static enum store_rc tx_approval_append(struct store *st, void *arg)
{
	struct approval_arg *a = arg;
	struct param c[] = {PT(a->tenant_id), PT(a->comparison_id)};
	char id[33];
	char now[32];
	json_t *detail;
	enum store_rc rc;
	int found = 0;

	json_decref(a->out);
	a->out = NULL;
	rc = store_q_exists(st, "SELECT 1 FROM comparisons WHERE tenant_id = ? AND id = ?", c,
	                    NPARAMS(c), &found);
	if (rc)
		return rc;
	if (!found) {
		/* asked for but not settled: there is no verdict to judge yet */
		rc = store_q_exists(st,
		                    "SELECT 1 FROM comparison_jobs WHERE tenant_id = ? AND id = ?",
		                    c, NPARAMS(c), &found);
		if (rc)
			return rc;
		store_seterr(st,
		             found ? "the comparison is not settled yet" : "no such comparison");
		return found ? STORE_CONFLICT : STORE_NOT_FOUND;
	}
	rc = store_new_id(st, id);
	if (rc)
		return rc;
	store_now_iso(now);
	{
		struct param p[] = {PT(id),          PT(a->tenant_id), PT(a->comparison_id),
		                    PT(a->decision), PT(a->reason),    PT(a->actor),
		                    PT(now)};

		rc =
		    store_q_exec(st,
		                 "INSERT INTO comparison_approvals (id, tenant_id, comparison_id, "
		                 "decision, reason, decided_by, created_at) VALUES (?, ?, ?, ?, ?, "
		                 "?, ?)",
		                 p, NPARAMS(p), NULL, NULL);
	}
	if (rc)
		return rc;
	/* the reason is the admin's own words about the verdict, not a secret */
	detail = json_pack("{s:s,s:s,s:s,s:s}", "approval_id", id, "comparison_id",
	                   a->comparison_id, "decision", a->decision, "reason", a->reason);
	rc = detail ? store_audit_insert(st, a->tenant_id, a->actor, "sandbox.approval",
	                                 a->comparison_id, detail)
	            : STORE_ERROR;
	json_decref(detail);
	if (rc)
		return rc;
	a->out = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "comparison_id", a->comparison_id,
	                   "decision", a->decision, "reason", a->reason, "decided_by", a->actor,
	                   "created_at", now);
	if (!a->out)
		return STORE_ERROR;
	/* a decision is evidence too: its link in the same transaction */
	return store_evidence_link_approval(st, a->tenant_id, a->out);
}

enum store_rc store_approval_append(struct store *st, const char *tenant_id,
                                    const char *actor_token_id, const char *comparison_id,
                                    const char *decision, const char *reason, json_t **out)
{
	struct approval_arg a = {.tenant_id = tenant_id,
	                         .actor = actor_token_id,
	                         .comparison_id = comparison_id,
	                         .decision = decision,
	                         .reason = reason};

	*out = NULL;
	if (!tenant_id || !comparison_id || !store_is_lower_hex(tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(comparison_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	if (!decision || (strcmp(decision, "approved") != 0 && strcmp(decision, "rejected") != 0) ||
	    !actor_token_id || !store_text_ok(actor_token_id, 1, 64) ||
	    !store_text_ok(reason, 1, STORE_APPROVAL_REASON_MAX_BYTES)) {
		store_seterr(st,
		             "approval: decision approved|rejected, an actor and a reason of "
		             "1..%d bytes of UTF-8 are required",
		             STORE_APPROVAL_REASON_MAX_BYTES);
		return STORE_ERROR;
	}
	return store_tx_json(st, tx_approval_append, &a, &a.out, out);
}

static enum store_rc tx_approval_list(struct store *st, void *arg)
{
	struct approval_arg *a = arg;
	struct param p[] = {PT(a->tenant_id), PT(a->comparison_id)};

	json_decref(a->out);
	a->out = NULL;
	return store_q_list(st, APPROVAL_SELECT, p, NPARAMS(p), approval_cols,
	                    NPARAMS(approval_cols), "approvals", &a->out);
}

enum store_rc store_approval_list(struct store *st, const char *tenant_id,
                                  const char *comparison_id, json_t **out)
{
	struct approval_arg a = {.tenant_id = tenant_id, .comparison_id = comparison_id};

	*out = NULL;
	if (!tenant_id || !comparison_id || !store_is_lower_hex(tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(comparison_id, MODEL_ID_LEN))
		return STORE_NOT_FOUND;
	/* rows are only ever appended: one SELECT needs no snapshot */
	return store_read_json(st, tx_approval_list, &a, &a.out, out);
}
