/*
 * olivares-agent-mock: the built-in mock agent (runner/agent.h). For each
 * step it asks the runner for the step's input as a resource and answers the
 * response (or the mock-miss marker) as the step's output, so a scenario
 * gives on an OS-level backend exactly the outputs and counters it gives on
 * inproc-mock. Installed beside olivares-runner, which finds it there.
 */
#include <stdlib.h>
#include <string.h>

#include "agents/agent_proto.h"

int main(void)
{
	const char *input;
	size_t len;
	json_t *step;
	char *resp;
	int rc;

	while ((step = agent_next_step(&input, &len)) != NULL) {
		resp = agent_ask(input, len);
		json_decref(step);
		if (!resp)
			return 1;
		rc = agent_output(resp, strlen(resp));
		free(resp);
		if (rc != 0)
			return 1;
	}
	return 0;
}
