/*
 * olivares-agent-profile-bot: a second small example agent (runner/agent.h).
 * For each step it asks for "profile:<input>" and answers
 * "hello <response>". With mocks tagged per variant ("variant":"baseline"
 * / "candidate"), the two variants of one scenario see different profiles
 * and so give different outputs: the difference a comparison reports.
 * An input of "profile:"-prefixed mocks that miss gives
 * "hello [[mock-miss:profile:<input>]]" and a mock_miss step.
 */
#include <stdlib.h>
#include <string.h>

#include "agents/agent_proto.h"

int main(void)
{
	const char *input;
	size_t len;
	json_t *step;
	char *resource;
	char *resp;
	char *out;
	size_t n;
	int rc;

	while ((step = agent_next_step(&input, &len)) != NULL) {
		resource = malloc(len + sizeof("profile:"));
		if (!resource)
			return 1;
		memcpy(resource, "profile:", 8);
		memcpy(resource + 8, input, len);
		json_decref(step);
		resp = agent_ask(resource, len + 8);
		free(resource);
		if (!resp)
			return 1;
		n = strlen(resp);
		out = malloc(n + sizeof("hello "));
		if (!out)
			return 1;
		memcpy(out, "hello ", 6);
		memcpy(out + 6, resp, n + 1);
		rc = agent_output(out, n + 6);
		free(out);
		free(resp);
		if (rc != 0)
			return 1;
	}
	return 0;
}
