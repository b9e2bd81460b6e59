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
 *       "key": string (<= 128 bytes), optional,
 *       "http", "response": on an "http_exchange" only: the request and
 *               the answer it got, an HTTP mock's (model/http_mock.h),
 *               checked and kept normalized as model_http_mock_check
 *               makes them (model/record.h records them)} ]}
 * Import is faithful, not judgemental: a history source may be broken, and
 * the store keeps it as it was recorded (bounded, UTF-8, no credential, no
 * unknown field) so that a replay can say exactly what breaks it.
 * Import details (model_session_check): "external_id", "events" and each
 * event's "kind" are required; "text" of any other kind (tool_call, an
 * unknown kind) is bounded like a tool_result's (65536 bytes); "seq" is kept
 * as recorded whatever its type, but every string inside it (object keys
 * included) must be UTF-8 and no credential; "text", "resource", "key" may
 * be empty strings at import (the rebuild decides what an empty one means).
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
 *         -> "resource R has two different recorded results (seq 3, 7)"
 *   (between 7 and 8) an http_exchange without http or response, or one
 *      model_http_mock_spec_check refuses
 *         -> "http_exchange event 2 (seq 2) has no http",
 *            "http_exchange event 2 (seq 2) is not an exchange a mock can
 *             answer: <why>"
 *   9. after the build: a request with more than MODEL_MAX_SEQUENCE
 *      different answers, or recorded requests that are ambiguous as a
 *      scenario's HTTP mocks would be (model_http_mocks_check_ambiguity)
 *         -> "GET URL has 101 different recorded answers, over 100",
 *            "the recorded requests are ambiguous: <why>"
 * Otherwise: steps are the inputs ordered by seq (duplicate input texts at
 * different seqs are kept, in order), each {"key": the event's key or
 * "seq-<seq>", "input": text}; mocks are the distinct tool_results as
 * {"resource", "response"}; recorded[i] is the text of the last "output"
 * event between step i's input and the next input (JSON null when none).
 * tool_call events only document the order; they carry no data we replay.
 * http_exchange events become HTTP mocks, one per request (method, url and
 * body condition): its answer as "response" when every exchange of it was
 * answered alike, else its answers in seq order as a "sequence".
 *
 * Precisely (the reason texts are part of the contract):
 *   - "event N" is the event's 1-based position in "events" (the first
 *     event is "event 1"), "seq S" its seq.
 *   - Rules 2 and 3 walk "events" in array order; rule 2 reports the first
 *     unusable seq. A usable seq is a JSON integer >= 1: 1.5, 1.0, 1e0, "1",
 *     null, absent are not. Rule 3 reports the first event (array order)
 *     whose seq repeats an earlier one, with the first event holding that
 *     seq: "events 2 and 5 share seq 4". Rule 4 reports the lowest gap:
 *     "seq 3 is missing (between 2 and 4)"; seqs need not start at 1, and
 *     with 2 then 6 the reason is "seq 3 is missing (between 2 and 6)".
 *   - Rules 5 to 8 are each checked over the whole timeline, in seq order,
 *     before the next rule: "event 4 (seq 4) has unknown kind \"x\"",
 *     "input event 1 (seq 1) has no text", "tool_result event 3 (seq 3)
 *     has no resource" (absent or empty), "tool_result event 3 (seq 3) has
 *     no text" (absent; an empty text is an empty recorded result, as an
 *     empty input text is an empty input). Kinds are exact and case
 *     sensitive ("Input" is unknown).
 *   - Rule 8: two tool_results for one resource with the same text are one
 *     mock; with different texts the reason names the resource (its first
 *     200 bytes, then "…" when longer) and the seq of its first result and
 *     of the first later result that differs; of several such resources,
 *     the one whose differing result comes first in seq order.
 *   - Keys: an absent or empty "key" gives "seq-<seq>"; keys are not
 *     required to be unique (a history is replayed as recorded).
 *   - mocks are in the seq order of each resource's first result; an
 *     "output" before the first input, or with no text, records nothing.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "limits.h" /* MODEL_MAX_SESSION_EVENTS, ..._EXTERNAL_ID_BYTES, ..._KIND_BYTES */

/**
 * Validate an import body (shape, bounds, UTF-8, credentials, unknown
 * fields refused). On success *normalized is a new object
 * {"external_id","events"} (caller owns), the events copied as given.
 * 400 malformed / 422 limit_exceeded / 422 invalid via *err, *normalized
 * untouched; err->field is the JSON path ("external_id", "events",
 * "events[3].text": 0-based, as in scenario errors). As in
 * model_scenario_check, a malformed problem anywhere wins over a 422, and
 * among 422s the first in document order is reported; a credential is
 * reported before a bound of the same string (message names its format,
 * never its value).
 */
int model_session_check(json_t *body, json_t **normalized, struct model_error *err);

/** A rebuilt timeline; every member owned, released by model_timeline_clear. */
struct model_timeline {
	json_t *steps;    /* [{"key","input"}] */
	json_t *mocks;    /* [{"resource","response"}] */
	json_t *recorded; /* one entry per step: string or null */
};

/**
 * Rebuild the timeline of events (the "events" array of a stored session;
 * borrowed, any JSON value accepted: a non-array has no input). Returns 0
 * and fills *tl (new values, not shared with events; why->text ""), or -1
 * with the reason in *why (recorded on the degraded run: cut on a UTF-8
 * character boundary if it ever reached MODEL_REASON_BYTES - 1 bytes) and
 * *tl zeroed. why may be NULL. Pure: no I/O, no clock.
 */
int model_timeline_rebuild(json_t *events, struct model_timeline *tl, struct model_reason *why);

/** Release every member of *tl and zero it; tl may be NULL, and a zeroed or
 * already cleared timeline is fine. */
void model_timeline_clear(struct model_timeline *tl);

/**
 * Compare replayed outputs (array of output objects in seq order, as the
 * runner produced them) with recorded (from the timeline). Returns a new
 * object {"compared": N (steps with a recorded output), "diverging": N,
 * "first": null | {"seq","key","recorded","replayed"}} (caller owns).
 * Both arrays are borrowed; step i is matched with outputs[i] and compared
 * byte for byte with its "output" text. "seq" and "key" are those of the
 * output object (the run's 1-based step number and the step key); a step
 * with a recorded output but no output object (a run that stopped early)
 * diverges with "seq" i + 1, "key" null and "replayed" null. Steps whose
 * recorded entry is null are not compared.
 */
json_t *model_replay_divergence(json_t *recorded, json_t *outputs);

/**
 * The history port: where sessions come from. The first adapter
 * (fcgi/run/history_store.c) reads sessions imported into the store; only
 * fcgi/main.c wires it. load() fills *events with a new reference to the
 * session's events array (caller owns) and *external_id (copied into n
 * bytes); returns 0, 1 when the session does not exist for the tenant,
 * -1 when the source is unavailable (*why says why, for the log).
 */
struct model_history_ops {
	const char *name;
	int (*load)(void *ctx, const char *tenant_id, const char *session_id, json_t **events,
	            char *external_id, size_t n, struct model_reason *why);
};

struct model_history_source {
	const struct model_history_ops *ops;
	void *ctx;
};

#endif
