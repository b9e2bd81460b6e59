#ifndef OLIVARES_MODEL_RECORD_H
#define OLIVARES_MODEL_RECORD_H
/**
 * Recording a run as a history session (model/history.h): a run started
 * with "record": true gives, when it completes, a session whose replay
 * runs the same steps against what the run was answered, hermetic. Pure:
 * no I/O.
 *
 * While the run goes, its gateway adds to each http trace entry it
 * answered (a mock's answer or an egress exchange) a "record" member, made
 * by model_record_http:
 *   {"http": {"method", "url", "body": the request's body, exact},
 *    "response": {"status", "headers"?: {name: value}, "body"}}
 * which is an HTTP mock (model/http_mock.h) that answers that request as
 * it was answered, or {"unrecordable": why} when the exchange cannot be
 * one. A miss or a refusal has no "record": replayed, it is missed or
 * refused again the same way.
 *
 * At the end, model_record_session turns the run's outputs into the
 * session's events, in order, per step:
 *   {"kind": "input", "text": the step's input, "key": its key}
 *   each trace entry:
 *     a resource that hit mock N -> {"kind": "tool_call", "resource": R},
 *                                   {"kind": "tool_result", "resource": R,
 *                                    "text": mocks[N].response}
 *     a resource that missed     -> {"kind": "tool_call", "resource": R}
 *     an http entry with record  -> {"kind": "http_exchange", "http": …,
 *                                    "response": …}
 *   {"kind": "output", "text": the step's output}
 * and seq 1, 2, … in that order. The session is all or nothing: a tool
 * call (a session has no event for tool mocks' answers), an entry cut to
 * fit ("truncated"), an unrecordable exchange, a step without an output
 * object, or a session model_session_check refuses (a bound, a
 * credential) make no session, with the reason.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

/* The most bytes (compact JSON) of a run's "record" members together: a
 * recorded session is a session, whose import holds at most
 * MODEL_MAX_REQUEST_BYTES. The runner drops the records past it. */
#define MODEL_RECORD_MAX_BYTES (1024 * 1024)

/**
 * The "record" member of a gateway trace entry: the request (method and
 * url as the trace has them, normalized; req_body req_len bytes, may be
 * NULL when 0) and the answer it got (status, headers as [name, value]
 * pairs, borrowed, may be NULL; body body_len bytes). A new object (caller
 * decrefs): the mock above, or {"unrecordable": why} when a body is not
 * UTF-8 text or holds a NUL, is over MODEL_MAX_RESPONSE_BYTES, the status
 * is outside 200..599, or the mock would be refused otherwise. Headers
 * the gateway frames itself (Content-Length, Transfer-Encoding,
 * Connection and the other hop-by-hop ones) and those that carry
 * credentials (Set-Cookie, Authorization, …) are not recorded; a header
 * given twice is recorded once, its values joined with ", ".
 */
json_t *model_record_http(const char *method, const char *url, const char *req_body, size_t req_len,
                          int status, json_t *headers, const char *body, size_t body_len);

/**
 * The session of a completed run: mocks the run spec's (borrowed),
 * outputs its output objects in step order (borrowed; with their traces,
 * "record" members included), steps the number of steps of the run,
 * external_id the session's (1..MODEL_MAX_EXTERNAL_ID_BYTES bytes).
 * Returns 0 with *session a new import body {"external_id", "events"} as
 * model_session_check normalizes it, or -1 with the reason in *why
 * ("step 2 called the tool search: tool calls are not recorded", …) and
 * *session NULL.
 */
int model_record_session(json_t *mocks, json_t *outputs, size_t steps, const char *external_id,
                         json_t **session, struct model_reason *why);

/** Remove the "record" member of every trace entry of output (one output
 * object, borrowed and changed in place): the store keeps the session,
 * not the bodies in the trace. */
void model_record_strip(json_t *output);

#endif
