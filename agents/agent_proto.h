#ifndef OLIVARES_AGENTS_AGENT_PROTO_H
#define OLIVARES_AGENTS_AGENT_PROTO_H
/**
 * The agent side of the agent protocol (runner/agent.h), shared by the
 * example agents (agents/) and the hostile test agent
 * (tests/fixtures/agents/hostile.c). Header-only on purpose: each agent is
 * one statically linked program that the jail holds as its only file.
 *
 * Lines are read with getline() from descriptor 3 and written to
 * descriptor 4 (the protocol's own pipes, named in the environment as
 * OLIVARES_PROTOCOL_IN_FD and OLIVARES_PROTOCOL_OUT_FD), one compact JSON
 * object a line, flushed at once (the runner waits for it). stdout and
 * stderr are the run's log: an agent prints there what it likes.
 * Every line written carries the current step's "seq" (the protocol's
 * optional echo), so that a line the runner would take for another step
 * is refused rather than recorded there.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The seq of the step being answered (agent_next_step sets it). */
static json_int_t agent_seq;

/** The protocol's descriptors (runner/agent.h). */
#define AGENT_PROTO_IN_FD 3
#define AGENT_PROTO_OUT_FD 4

/* The protocol's streams, opened at first use. */
static FILE *agent_in_stream, *agent_out_stream;

/** The stream of the runner's lines (descriptor 3), or NULL. */
static inline FILE *agent_in(void)
{
	if (!agent_in_stream)
		agent_in_stream = fdopen(AGENT_PROTO_IN_FD, "r");
	return agent_in_stream;
}

/** The stream of the agent's lines (descriptor 4), or NULL. */
static inline FILE *agent_out(void)
{
	if (!agent_out_stream)
		agent_out_stream = fdopen(AGENT_PROTO_OUT_FD, "w");
	return agent_out_stream;
}

/** Read the next JSON object from the runner. Returns it (caller
 * decrefs), or NULL at EOF or on a malformed line. */
static inline json_t *agent_read(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	json_t *msg;

	n = agent_in() ? getline(&line, &cap, agent_in()) : -1;
	if (n <= 0) {
		free(line);
		return NULL;
	}
	msg = json_loadb(line, (size_t)n, 0, NULL);
	free(line);
	if (msg && !json_is_object(msg)) {
		json_decref(msg);
		msg = NULL;
	}
	return msg;
}

/** Send obj (stolen) as one line. Returns 0, -1 on a write error. */
static inline int agent_send(json_t *obj)
{
	FILE *out = agent_out();
	int rc = -1;

	if (obj && out && json_dumpf(obj, out, JSON_COMPACT) == 0 && fputc('\n', out) != EOF &&
	    fflush(out) == 0)
		rc = 0;
	json_decref(obj);
	return rc;
}

/** Ask the runner for resource (len bytes) and wait for the answer: a copy
 * of the response (caller frees; the mock-miss marker on a miss), or NULL
 * when the runner's reply is not the expected line. */
static inline char *agent_ask(const char *resource, size_t len)
{
	json_t *reply;
	const char *type, *resp;
	size_t resp_len = 0;
	char *copy = NULL;

	if (agent_send(json_pack("{s:s, s:s%, s:I}", "type", "resource", "resource", resource, len,
	                         "seq", agent_seq)))
		return NULL;
	reply = agent_read();
	if (reply &&
	    json_unpack(reply, "{s:s, s:s%}", "type", &type, "response", &resp, &resp_len) == 0 &&
	    strcmp(type, "resource") == 0) {
		copy = malloc(resp_len + 1);
		if (copy) {
			memcpy(copy, resp, resp_len);
			copy[resp_len] = '\0';
		}
	}
	json_decref(reply);
	return copy;
}

/** Call tool (its name, NUL-terminated) with args (stolen; NULL sends no
 * args, which the runner takes as {}) and wait for the answer: the
 * runner's reply line, {"type":"tool","tool":T,"found":bool, "response":
 * JSON | "error": string} (caller decrefs: "found" false is a miss, whose
 * "error" is the marker "[[mock-miss:tool T]]"; "found" true with "error"
 * is the mock's tool error), or NULL when the reply is not a tool line. */
static inline json_t *agent_tool(const char *tool, json_t *args)
{
	json_t *msg, *reply;
	const char *type = NULL;

	msg = json_pack("{s:s, s:s, s:I}", "type", "tool", "tool", tool, "seq", agent_seq);
	if (msg && args)
		json_object_set_new(msg, "args", args);
	else
		json_decref(args);
	if (agent_send(msg))
		return NULL;
	reply = agent_read();
	if (reply &&
	    (json_unpack(reply, "{s:s}", "type", &type) != 0 || strcmp(type, "tool") != 0)) {
		json_decref(reply);
		reply = NULL;
	}
	return reply;
}

/** End the current step with output (len bytes). Returns 0 or -1. */
static inline int agent_output(const char *output, size_t len)
{
	return agent_send(json_pack("{s:s, s:s%, s:I}", "type", "output", "output", output, len,
	                            "seq", agent_seq));
}

/** Fail the current step with message (NUL-terminated, one line): the
 * runner records it as the step's agent error, with message as the run's
 * reason, and ends the run. Returns 0 or -1. */
static inline int agent_error(const char *message)
{
	return agent_send(
	    json_pack("{s:s, s:s, s:I}", "type", "error", "error", message, "seq", agent_seq));
}

/** Next step: returns the step line (caller decrefs) and points *input at
 * its input (*len bytes, borrowed from the line), or NULL at EOF (the end
 * of the run) or on a line that is not a step. */
static inline json_t *agent_next_step(const char **input, size_t *len)
{
	json_t *msg = agent_read();
	const char *type;

	if (!msg)
		return NULL;
	if (json_unpack(msg, "{s:s, s:s%, s:I}", "type", &type, "input", input, len, "seq",
	                &agent_seq) != 0 ||
	    strcmp(type, "step") != 0) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

#endif
