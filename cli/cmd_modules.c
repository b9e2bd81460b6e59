/*
 * olivares modules list | on MODULE | off MODULE
 * (GET /v1/modules, PUT /v1/modules/{name} {"enabled":bool}).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"

static const struct cli_column module_columns[] = {
    {"NAME", "name", NULL},
    {"ENABLED", "enabled", NULL},
    {NULL, NULL, NULL},
};

static int cmd_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	json_t *resp;

	(void)a;
	if (cli_http_call(ctx, "GET", "/v1/modules", NULL, &resp))
		return CLI_EXIT_FAIL;
	if (ctx->format == CLI_FORMAT_JSON)
		cli_print_json(resp);
	else
		cli_print_table(json_object_get(resp, "modules"), module_columns);
	json_decref(resp);
	return CLI_EXIT_OK;
}

/* A module name goes into the path as is: letters, digits, '-' and '_'
 * only. Anything else is refused before a request: a "/" or a dot segment
 * would be resolved by the web server into another path. */
static int module_name_ok(const char *module)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                              "0123456789-_";

	return module[0] && strspn(module, allowed) == strlen(module);
}

static int set_enabled(struct cli_ctx *ctx, const char *module, int enabled)
{
	struct model_buf path;
	json_t *body, *resp;
	char *name;
	int rc = CLI_EXIT_FAIL;

	if (!module_name_ok(module)) {
		name = cli_escape(module, strlen(module));
		rc = cli_usage_error(
		    ctx,
		    "MODULE must be a module's name (letters, digits, '-' and '_'), "
		    "not \"%s\"",
		    name);
		free(name);
		return rc;
	}
	name = cli_http_escape(module);
	model_buf_init(&path, 4096);
	if (model_buf_printf(&path, "/v1/modules/%s", name)) {
		rc = cli_usage_error(ctx, "module name too long");
		goto out;
	}
	body = json_pack("{s:b}", "enabled", enabled);
	if (cli_http_call(ctx, "PUT", path.data, body, &resp) == 0) {
		if (ctx->format == CLI_FORMAT_JSON)
			cli_print_json(resp);
		else
			cli_print_fields(resp, NULL);
		json_decref(resp);
		rc = CLI_EXIT_OK;
	}
	json_decref(body);
out:
	free(name);
	model_buf_release(&path);
	return rc;
}

static int cmd_on(struct cli_ctx *ctx, const struct cli_args *a)
{
	return set_enabled(ctx, a->pos, 1);
}

static int cmd_off(struct cli_ctx *ctx, const struct cli_args *a)
{
	return set_enabled(ctx, a->pos, 0);
}

static const struct cli_opt no_opts[] = {{NULL, NULL, NULL}};

const struct cli_command cli_modules_commands[] = {
    {"list", cmd_list, "List the modules of your tenant and whether each is enabled.", NULL,
     no_opts, NULL,
     "GET /v1/modules (any role).\n"
     "Table output: one row per module, columns NAME ENABLED.\n"},
    {"on", cmd_on, "Enable a module for your tenant (admin).", NULL, no_opts, "MODULE",
     "PUT /v1/modules/MODULE {\"enabled\":true}. The only module is 'sandbox':\n"
     "  olivares modules on sandbox\n"
     "Table output: the module's fields (name, enabled).\n"},
    {"off", cmd_off,
     "Disable a module for your tenant (admin); its data is kept and comes back with 'on'.", NULL,
     no_opts, "MODULE",
     "PUT /v1/modules/MODULE {\"enabled\":false}.\n"
     "Table output: the module's fields (name, enabled).\n"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
