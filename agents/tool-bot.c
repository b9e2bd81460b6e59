/*
 * olivares-agent-tool-bot: the example agent of tool mocks (runner/agent.h).
 * For each step it calls the tool "search" with {"q": <input>}, then asks
 * for its input as a resource, and answers
 *   "<search>|<resource>"
 * where <search> is the tool's response as compact JSON (keys sorted),
 * "error:<message>" for an error mock's answer, or the miss marker
 * "[[mock-miss:tool search]]", and <resource> the resource's response (or
 * its miss marker). A step's trace then lists the tool call, then the
 * resource request.
 */
#include <stdlib.h>
#include <string.h>

#include "agents/agent_proto.h"

/* The tool part of the answer, allocated. */
static char *tool_part(json_t *reply)
{
	json_t *resp = json_object_get(reply, "response");
	json_t *err = json_object_get(reply, "error");
	char *s;
	size_t n;

	if (json_is_true(json_object_get(reply, "found")) && json_is_string(err)) {
		n = json_string_length(err) + sizeof("error:");
		s = malloc(n);
		if (s)
			snprintf(s, n, "error:%s", json_string_value(err));
		return s;
	}
	if (json_is_string(err))
		return strdup(json_string_value(err));
	return resp ? json_dumps(resp, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
}

int main(void)
{
	const char *input;
	size_t len;
	json_t *step, *reply;
	char *tool, *resp, *out;
	size_t n;
	int rc;

	while ((step = agent_next_step(&input, &len)) != NULL) {
		reply = agent_tool("search", json_pack("{s:s%}", "q", input, len));
		tool = reply ? tool_part(reply) : NULL;
		json_decref(reply);
		resp = tool ? agent_ask(input, len) : NULL;
		json_decref(step);
		if (!resp)
			return 1;
		n = strlen(tool) + 1 + strlen(resp);
		out = malloc(n + 1);
		if (!out)
			return 1;
		snprintf(out, n + 1, "%s|%s", tool, resp);
		rc = agent_output(out, n);
		free(out);
		free(tool);
		free(resp);
		if (rc != 0)
			return 1;
	}
	return 0;
}
