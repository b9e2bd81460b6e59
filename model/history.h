#ifndef OLIVARES_MODEL_HISTORY_H
#define OLIVARES_MODEL_HISTORY_H
/**
 * Historical sessions and their replay (sandbox page: "Rejeu — reconstruire
 * la timeline d'entrées d'une session historique et la réexécuter de
 * manière déterministe contre des mocks"; "Si la source d'historique ne
 * peut pas reconstruire une timeline ordonnée, le rejeu est rapporté
 * dégradé avec zéro étape, jamais fabriqué").
 *
 * A session, as imported (POST /v1/m/sandbox/sessions):
 *   {"external_id": string (1..128 bytes),
 *    "events": [ 0..1000 of
 *      {"seq": any JSON value (an integer >= 1 to be usable),
 *       "kind": string (1..32 bytes; "input", "tool_call", "tool_result",
 *               "output" are understood; others are kept as recorded),
 *       "text": string (<= 8192 bytes for input/output, <= 65536 for
 *               tool_result), optional,
 *       "resource": string (<= 8192 bytes), optional,
 *       "key": string (<= 128 bytes), optional} ]}
 * Import is faithful, not judgemental: a history source may be broken, and
 * the store keeps it as it was recorded (bounded, UTF-8, no credential, no
 * unknown field) so that a replay can say exactly what breaks it.
 *
 * Reconstruction rules (model_timeline_rebuild), in this order; the first
 * that fails makes the timeline impossible, with a reason naming the
 * event (by its position in "events" and its seq):
 *   1. no events, or no event of kind "input"       -> "session has no input"
 *   2. a seq that is absent, not an integer, or < 1  -> "event 3 has no usable seq"
 *   3. two events with the same seq                  -> "events 2 and 5 share seq 4"
 *   4. a gap: the seqs sorted are not s, s+1, …      -> "seq 3 is missing (between 2 and 4)"
 *   5. an event of unknown kind                      -> "event 4 (seq 4) has unknown kind \"x\""
 *   6. an input with no text                         -> "input event 1 (seq 1) has no text"
 *   7. a tool_result with no resource or no text     -> "tool_result event … has no resource"
 *   8. two tool_results for one resource with different texts
 *                                                    -> "resource R has two different recorded results (seq 3, 7)"
 * Otherwise: steps are the inputs ordered by seq (duplicate input texts at
 * different seqs are kept, in order), each {"key": the event's key or
 * "seq-<seq>", "input": text}; mocks are the distinct tool_results as
 * {"resource", "response"}; recorded[i] is the text of the last "output"
 * event between step i's input and the next input (JSON null when none).
 * tool_call events only document the order; they carry no data we replay.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define MODEL_MAX_SESSION_EVENTS 1000
#define MODEL_MAX_EXTERNAL_ID_BYTES 128
#define MODEL_MAX_KIND_BYTES 32

/**
 * Validate an import body (shape, bounds, UTF-8, credentials, unknown
 * fields refused). On success *normalized is a new object
 * {"external_id","events"} (caller owns). 400 malformed / 422 limit_exceeded
 * / 422 invalid via *err, *normalized untouched.
 */
int model_session_check(json_t *body, json_t **normalized, struct model_error *err);

/** A rebuilt timeline; every member owned, released by model_timeline_clear. */
struct model_timeline {
	json_t *steps;    /* [{"key","input"}] */
	json_t *mocks;    /* [{"resource","response"}] */
	json_t *recorded; /* one entry per step: string or null */
};

/**
 * Rebuild the timeline of events (the "events" array of a stored session).
 * Returns 0 and fills *tl, or -1 with why (n bytes) and *tl zeroed.
 */
int model_timeline_rebuild(json_t *events, struct model_timeline *tl, char *why, size_t n);

void model_timeline_clear(struct model_timeline *tl);

/**
 * Compare replayed outputs (array of output objects in seq order, as the
 * runner produced them) with recorded (from the timeline). Returns a new
 * object {"compared": N (steps with a recorded output), "diverging": N,
 * "first": null | {"seq","key","recorded","replayed"}} (caller owns).
 */
json_t *model_replay_divergence(json_t *recorded, json_t *outputs);

/**
 * The history port: where sessions come from. The first adapter
 * (fcgi/history_store.c) reads sessions imported into the store; only
 * fcgi/main.c wires it. load() fills *events with a new reference to the
 * session's events array (caller owns) and *external_id (copied into n
 * bytes); returns 0, 1 when the session does not exist for the tenant,
 * -1 when the source is unavailable (why set).
 */
struct model_history_ops {
	const char *name;
	int (*load)(void *ctx, const char *tenant_id, const char *session_id, json_t **events,
		    char *external_id, size_t n, char *why, size_t why_n);
};

struct model_history_source {
	const struct model_history_ops *ops;
	void *ctx;
};

#endif
