/*
 * GET /v1/m/sandbox/agents (viewer): the agent programs of the agents
 * directory, each as a variant would find it (http_run_resolve_agent),
 * with its size, its SHA-256, its interpreter and whether that
 * interpreter is inside the jail of the configured binds. The directory
 * is host configuration, the same for every tenant.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fcgi/api/api_internal.h"
#include "fcgi/run/agent_file.h"
#include "fcgi/run/job.h"
#include "model/agent.h"
#include "model/alloc.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
	              json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

/* One program's object, or NULL when it cannot be read (skipped and
 * logged: it changed under the listing). */
static json_t *agent_item(struct http_request *req, const char *name, const char *path)
{
	struct model_interp ip;
	char hex[65], reason[MODEL_REASON_BYTES], resolved[MODEL_AGENT_HEAD_BYTES + 16] = "";
	char line[2 * MODEL_AGENT_HEAD_BYTES + 2];
	long long size = 0;
	json_t *interp = json_null(), *in_jail = json_null();
	int verdict = 2;

	if (http_agent_sha256_file(path, hex, &size) != 0 ||
	    http_run_agent_interp(req, name, path, reason, sizeof(reason), &ip, &verdict, resolved,
	                          sizeof(resolved)) != 0) {
		http_log_warn("agents: cannot read agent program %s", name);
		return NULL;
	}
	if (verdict != 2) {
		snprintf(line, sizeof(line), "%s%s%s", ip.path, ip.arg[0] ? " " : "", ip.arg);
		interp = json_string(line);
		/* env's own options are not followed: it is there, and what it
		 * runs is not known to this check */
		in_jail = json_boolean(verdict == MODEL_INTERP_IN_JAIL ||
		                       verdict == MODEL_INTERP_UNKNOWN);
	}
	return json_pack("{s:s, s:I, s:s, s:o, s:o, s:o, s:o}", "name", name, "size",
	                 (json_int_t)size, "sha256", hex, "interpreter", interp,
	                 "interpreter_in_jail", in_jail, "interpreter_resolved",
	                 resolved[0] ? json_string(resolved) : json_null(), "reason",
	                 reason[0] ? json_string(reason) : json_null());
}

int api_agents(struct http_request *req, struct model_error *err)
{
	struct model_error skip;
	const char *path;
	struct dirent *de;
	json_t **items = NULL;
	json_t *list, *item;
	size_t n = 0, cap = 0, i;
	int exists = 0;
	DIR *d;

	(void)err;
	d = opendir(req->cfg->agents_dir);
	if (d) {
		exists = 1;
		while ((de = readdir(d)) != NULL) {
			if (!model_agent_name_ok(de->d_name))
				continue;
			/* what a variant of that name would run, by the same rules;
			 * a file a variant is refused for is not an agent program */
			memset(&skip, 0, sizeof(skip));
			if (http_run_resolve_agent(req, de->d_name, &path, &skip) || !path)
				continue;
			item = agent_item(req, de->d_name, path);
			if (!item)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				items = model_xrealloc(items, cap * sizeof(*items));
			}
			items[n++] = item;
		}
		closedir(d);
	}
	if (n)
		qsort(items, n, sizeof(*items), by_name);
	list = http_req_own(req, json_array());
	for (i = 0; i < n; i++)
		json_array_append_new(list, items[i]);
	free(items);
	return http_reply_json(
	    req, 200,
	    http_req_own(req, json_pack("{s:s, s:b, s:O}", "agents_dir", req->cfg->agents_dir,
	                                "agents_dir_exists", exists, "agents", list)));
}
