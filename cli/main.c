/*
 * olivares: command-line client of the olivares sandbox REST API.
 *
 * The command tree is a table of tables (git's commands[]): main() parses the
 * global options, then walks argv down the tree; a leaf command's options are
 * parsed here, from its declared option list, so every command gets the same
 * rules (-o/--url/--token/--help anywhere after the command, positional
 * argument before or after the options, usage errors exit 2) and a --help
 * generated from the same list that the parser uses.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define DEFAULT_URL "http://127.0.0.1:8080"

/* getopt codes of the long-only options; leaf options are OPT_LEAF + index */
enum {
	OPT_URL = 256,
	OPT_TOKEN,
	OPT_VERSION,
	OPT_LEAF = 512,
};

static const struct cli_command root_commands[] = {
    {"modules", NULL, "List modules, turn the sandbox module on or off.", cli_modules_commands,
     NULL, NULL, NULL},
    {"sandbox", NULL, "Generate inputs, manage and run scenarios, replay sessions, read runs.",
     cli_sandbox_commands, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct cli_command root = {
    "olivares", NULL, NULL, root_commands, NULL, NULL, NULL,
};

static const char common_options_help[] =
    "  -o, --output json|table   output format (default: table)\n"
    "  --url URL                 API base URL (default: $OLIVARES_URL, else the\n"
    "                            configuration file's url, else " DEFAULT_URL ")\n"
    "  --token TOKEN             API token (default: $OLIVARES_TOKEN, else the\n"
    "                            configuration file's token)\n"
    "  -h, --help                show this help and exit\n";

int cli_vfail(const char *fmt, va_list ap)
{
	cli_progress_clear();
	fputs("olivares: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	return CLI_EXIT_FAIL;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vfail(fmt, ap);
	va_end(ap);
	return CLI_EXIT_FAIL;
}

int cli_usage_error(const struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fputs("olivares: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", ctx->cmd);
	return CLI_EXIT_USAGE;
}

int cli_parse_int(const struct cli_ctx *ctx, const char *opt, const char *s, long long *out)
{
	char *end;
	long long v;

	/* strtoll skips leading spaces and accepts "": refuse both */
	if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t')
		goto bad;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		goto bad;
	*out = v;
	return 0;
bad:
	cli_usage_error(ctx, "--%s expects an integer, got '%s'", opt, s);
	return -1;
}

int cli_body_set_string(struct cli_ctx *ctx, json_t *body, const char *key,
                        const struct cli_args *a, const char *opt)
{
	const char *v = cli_arg(a, opt);
	json_t *s;

	if (!v)
		return 0;
	s = json_string(v);
	if (!s) {
		cli_usage_error(ctx, "--%s must be UTF-8 text", opt);
		return -1;
	}
	json_object_set_new(body, key, s);
	return 0;
}

const char *cli_arg(const struct cli_args *a, const char *name)
{
	int i;

	for (i = 0; a->opts && a->opts[i].name; i++) {
		if (strcmp(a->opts[i].name, name) == 0)
			return a->val[i];
	}
	fprintf(stderr, "olivares: internal error: undeclared option --%s\n", name);
	abort();
}

static const struct cli_command *find_command(const struct cli_command *table, const char *name)
{
	int i;

	for (i = 0; table[i].name; i++) {
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	}
	return NULL;
}

static void print_group_help(const struct cli_ctx *ctx, const struct cli_command *node, FILE *f)
{
	int i;

	fprintf(f, "Usage: %s%s <command> [options]\n\n", ctx->cmd,
	        node == &root ? " [-o json|table] [--url URL] [--token TOKEN]" : "");
	if (node == &root)
		fputs("Command-line client of the olivares sandbox REST API.\n\n", f);
	fputs("Commands:\n", f);
	for (i = 0; node->sub[i].name; i++)
		fprintf(f, "  %-12s %s\n", node->sub[i].name, node->sub[i].summary);
	if (node == &root) {
		fputs("\nGlobal options (also accepted after the command):\n", f);
		fputs(common_options_help, f);
		fputs(
		    "  --version                 print the version and exit\n"
		    "\nEnvironment:\n"
		    "  OLIVARES_URL     API base URL (default " DEFAULT_URL ")\n"
		    "  OLIVARES_TOKEN   API token, sent as 'Authorization: Bearer …' (never "
		    "printed)\n"
		    "  OLIVARES_BUSY_WAIT  seconds to keep trying a request answered 429 busy\n"
		    "                   (over the tenant's active runs; nothing was run), default "
		    "60; 0: "
		    "never\n"
		    "  OLIVARES_CONFIG  the configuration file to read instead of the default "
		    "one;\n"
		    "                   empty: none\n"
		    "\nFiles:\n"
		    "  ~/.config/olivares/config  ($XDG_CONFIG_HOME/olivares/config when\n"
		    "                   XDG_CONFIG_HOME is set) url = URL and token = TOKEN, "
		    "before\n"
		    "                   any section or in [olivares]; a command-line option wins\n"
		    "                   over the environment, the environment over the file.\n"
		    "                   Mode 600 or stricter (it holds the token), else refused\n"
		    "                   (exit 2); a file that does not exist is fine\n"
		    "\nExit status: 0 success; 1 error (refused by the server, server "
		    "unreachable,\n"
		    "unreadable or invalid input file); 2 usage error, or the configuration\n"
		    "file refused; 3 'sandbox gate' found no comparison of the scenario's\n"
		    "current steps and mocks; 4 'sandbox gate --require-approval' found the\n"
		    "comparison not approved yet; 130 interrupted (SIGINT) while waiting for a "
		    "run\n"
		    "or comparison, which goes on on the server.\n"
		    "Server errors are printed as: olivares: <message> (<code>, HTTP <status>)\n",
		    f);
	} else {
		fprintf(f, "\nCommon options (accepted by every command below):\n%s",
		        common_options_help);
	}
	fprintf(f, "\nRun '%s <command> --help' for the commands and options of each command.\n",
	        ctx->cmd);
}

static void print_leaf_help(const struct cli_ctx *ctx, const struct cli_command *node)
{
	char left[64];
	int i;

	printf("Usage: %s%s%s [options]\n\n%s\n", ctx->cmd, node->positional ? " " : "",
	       node->positional ? node->positional : "", node->summary);
	if (node->details)
		printf("\n%s", node->details);
	if (node->opts && node->opts[0].name) {
		fputs("\nOptions:\n", stdout);
		for (i = 0; node->opts[i].name; i++) {
			if (node->opts[i].metavar)
				snprintf(left, sizeof(left), "--%s %s", node->opts[i].name,
				         node->opts[i].metavar);
			else
				snprintf(left, sizeof(left), "--%s", node->opts[i].name);
			printf("  %-24s  %s\n", left, node->opts[i].help);
		}
	}
	printf("\nCommon options:\n%s", common_options_help);
}

static int set_format(struct cli_ctx *ctx, const char *v)
{
	if (strcmp(v, "json") == 0) {
		ctx->format = CLI_FORMAT_JSON;
		return 0;
	}
	if (strcmp(v, "table") == 0) {
		ctx->format = CLI_FORMAT_TABLE;
		return 0;
	}
	return cli_usage_error(ctx, "-o expects 'json' or 'table', got '%s'", v);
}

/* -o, --url or --token (getopt code c, its value in optarg): the options
 * accepted before the command and after it alike. 0, or -1 after a usage
 * error. */
static int common_option(struct cli_ctx *ctx, int c)
{
	switch (c) {
	case 'o':
		return set_format(ctx, optarg) ? -1 : 0;
	case OPT_URL:
		ctx->url = optarg;
		break;
	case OPT_TOKEN:
		ctx->token = optarg;
		break;
	}
	return 0;
}

/* The option getopt just refused, for the message: argv[optind-1] is the
 * offending word except inside a cluster of short options. */
static const char *bad_option(char **argv, char *buf, size_t size)
{
	if (optopt > 0 && optopt < 256) {
		snprintf(buf, size, "-%c", optopt);
		return buf;
	}
	return argv[optind - 1];
}

/* A variable of the environment, NULL when unset or empty. */
static const char *env_value(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

/* The URL and token of the command: the command line's, else the
 * environment's, else the configuration file's, else the default URL (and
 * no token). The file is read even when the others give both, so a file
 * open to others is said at once, not when the variables are unset one
 * day. CLI_EXIT_OK, or CLI_EXIT_USAGE after the file's error. */
static int resolve_settings(struct cli_ctx *ctx)
{
	int rc = cli_config_load(&ctx->config);

	if (rc != CLI_EXIT_OK)
		return rc;
	if (!ctx->url)
		ctx->url = env_value("OLIVARES_URL");
	if (!ctx->url)
		ctx->url = ctx->config.url ? ctx->config.url : DEFAULT_URL;
	if (!ctx->token)
		ctx->token = env_value("OLIVARES_TOKEN");
	if (!ctx->token)
		ctx->token = ctx->config.token;
	return CLI_EXIT_OK;
}

static int run_leaf(struct cli_ctx *ctx, const struct cli_command *node, int argc, char **argv)
{
	struct option longopts[CLI_MAX_OPTS + 5];
	struct cli_args args;
	char optbuf[8];
	int n = 0;
	int c, i, rc;

	memset(&args, 0, sizeof(args));
	args.opts = node->opts;
	for (i = 0; node->opts && node->opts[i].name; i++) {
		/* a command table with more options than its arrays hold is a
		 * bug of this program: said, never a write past them */
		if (i >= CLI_MAX_OPTS) {
			fprintf(stderr, "olivares: internal error: more than %d options\n",
			        CLI_MAX_OPTS);
			return CLI_EXIT_FAIL;
		}
		longopts[n].name = node->opts[i].name;
		longopts[n].has_arg = node->opts[i].metavar ? required_argument : no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = OPT_LEAF + i;
		n++;
	}
	longopts[n++] = (struct option){"output", required_argument, NULL, 'o'};
	longopts[n++] = (struct option){"url", required_argument, NULL, OPT_URL};
	longopts[n++] = (struct option){"token", required_argument, NULL, OPT_TOKEN};
	longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n] = (struct option){NULL, 0, NULL, 0};

	/* "-": positional words come back in order as code 1, so "get ID -o json"
	 * works whatever POSIXLY_CORRECT says; ":": we print the errors. */
	optind = 0;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "-:o:h", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 1:
			if (!node->positional)
				return cli_usage_error(ctx, "unexpected argument '%s'", optarg);
			if (args.pos)
				return cli_usage_error(ctx, "expected one %s, got '%s' and '%s'",
				                       node->positional, args.pos, optarg);
			args.pos = optarg;
			break;
		case 'o':
		case OPT_URL:
		case OPT_TOKEN:
			if (common_option(ctx, c))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			print_leaf_help(ctx, node);
			return CLI_EXIT_OK;
		case ':':
			return cli_usage_error(ctx, "option '%s' requires a value",
			                       bad_option(argv, optbuf, sizeof(optbuf)));
		case '?':
			return cli_usage_error(ctx, "unknown option '%s'",
			                       bad_option(argv, optbuf, sizeof(optbuf)));
		default:
			/* a flag's value is its name: not NULL, so given */
			args.val[c - OPT_LEAF] = optarg ? optarg : node->opts[c - OPT_LEAF].name;
			break;
		}
	}
	/* words after "--" */
	for (; optind < argc; optind++) {
		if (!node->positional || args.pos)
			return cli_usage_error(ctx, "unexpected argument '%s'", argv[optind]);
		args.pos = argv[optind];
	}
	if (node->positional && (!args.pos || args.pos[0] == '\0'))
		return cli_usage_error(ctx, "missing %s", node->positional);
	rc = resolve_settings(ctx);
	if (rc != CLI_EXIT_OK)
		return rc;
	return node->fn(ctx, &args);
}

/* argv[0] is node's own name; walk down to a leaf. */
static int run_node(struct cli_ctx *ctx, const struct cli_command *node, int argc, char **argv)
{
	const struct cli_command *sub;
	size_t used;

	if (node->fn)
		return run_leaf(ctx, node, argc, argv);
	if (argc < 2)
		return cli_usage_error(ctx, "missing command");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		print_group_help(ctx, node, stdout);
		return CLI_EXIT_OK;
	}
	sub = find_command(node->sub, argv[1]);
	if (!sub)
		return cli_usage_error(ctx, "unknown command '%s'", argv[1]);
	used = strlen(ctx->cmd);
	snprintf(ctx->cmd + used, sizeof(ctx->cmd) - used, " %s", sub->name);
	return run_node(ctx, sub, argc - 1, argv + 1);
}

/* The options common to every leaf command, for the completion. */
static const struct cli_opt common_opts[] = {
    {"output", "json|table", NULL}, {"url", "URL", NULL}, {"token", "TOKEN", NULL},
    {"help", NULL, NULL},           {NULL, NULL, NULL},
};

/* The option word w (with its dashes) of node: its metavar in *metavar
 * (NULL for a flag, or for "--name=value", which holds its value). 0, or -1
 * for an option node does not take. */
static int complete_option(const struct cli_command *node, const char *w, const char **metavar)
{
	const char *eq = strchr(w, '=');
	size_t len;
	int i, t;

	*metavar = NULL;
	if (strcmp(w, "-o") == 0) {
		*metavar = "json|table";
		return 0;
	}
	if (strncmp(w, "--", 2) != 0)
		return 0;
	w += 2;
	len = eq ? (size_t)(eq - w) : strlen(w);
	for (t = 0; t < 2; t++) {
		const struct cli_opt *opts = t == 0 ? common_opts : node->opts;

		for (i = 0; opts && opts[i].name; i++) {
			if (strlen(opts[i].name) == len && strncmp(opts[i].name, w, len) == 0) {
				*metavar = eq ? NULL : opts[i].metavar;
				return 0;
			}
		}
	}
	return -1;
}

static void complete_print(const char *word, const char *cur)
{
	if (strncmp(word, cur, strlen(cur)) == 0)
		puts(word);
}

/* Print "--name" for each option of opts that starts with cur. */
static void complete_options(const struct cli_opt *opts, const char *cur)
{
	char word[64];
	int i;

	for (i = 0; opts && opts[i].name; i++) {
		snprintf(word, sizeof(word), "--%s", opts[i].name);
		complete_print(word, cur);
	}
}

/*
 * `olivares __complete WORD... CUR` (hidden; cli/completion/olivares calls
 * it): the words of the command line after "olivares", the last the one
 * being completed (maybe ""). Prints the candidates that start with CUR,
 * one a line, from the command tables themselves, so the completion knows
 * every command the binary has: the subcommands of a group, the options of
 * a command, json and table after -o; ":file" alone when a file name is
 * expected. Nothing for a positional argument (an ID) or a word it does
 * not know. Always exits 0.
 */
static int complete(int argc, char **argv)
{
	const struct cli_command *node = &root;
	const struct cli_command *sub;
	const char *pending = NULL;
	const char *cur = argc > 1 ? argv[argc - 1] : "";
	const char *metavar;
	int i;

	for (i = 1; i < argc - 1; i++) {
		if (pending) {
			pending = NULL;
			continue;
		}
		if (argv[i][0] == '-') {
			if (complete_option(node, argv[i], &metavar) == 0)
				pending = metavar;
			continue;
		}
		if (node->fn)
			continue; /* the positional argument */
		sub = find_command(node->sub, argv[i]);
		if (!sub)
			return CLI_EXIT_OK;
		node = sub;
	}
	if (pending) {
		if (strcmp(pending, "json|table") == 0) {
			complete_print("json", cur);
			complete_print("table", cur);
		} else if (strstr(pending, "FILE")) {
			puts(":file");
		}
		return CLI_EXIT_OK;
	}
	if (cur[0] == '-') {
		if (node->fn) {
			complete_options(node->opts, cur);
			complete_options(common_opts, cur);
		} else if (node == &root) {
			complete_options(common_opts, cur);
			complete_print("--version", cur);
		} else {
			complete_print("--help", cur);
		}
		return CLI_EXIT_OK;
	}
	for (i = 0; node->sub && node->sub[i].name; i++)
		complete_print(node->sub[i].name, cur);
	return CLI_EXIT_OK;
}

static int run(struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"url", required_argument, NULL, OPT_URL},
	    {"token", required_argument, NULL, OPT_TOKEN},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {NULL, 0, NULL, 0},
	};
	char optbuf[8];
	int c;

	if (argc > 1 && strcmp(argv[1], "__complete") == 0)
		return complete(argc - 1, argv + 1);
	/* "+": stop at the command name; its options belong to the command */
	optind = 0;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "+:o:h", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'o':
		case OPT_URL:
		case OPT_TOKEN:
			if (common_option(ctx, c))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			print_group_help(ctx, &root, stdout);
			return CLI_EXIT_OK;
		case OPT_VERSION:
			printf("olivares %s (libcurl %s, jansson %s)\n", PACKAGE_VERSION,
			       curl_version_info(CURLVERSION_NOW)->version, jansson_version_str());
			return CLI_EXIT_OK;
		case ':':
			return cli_usage_error(ctx, "option '%s' requires a value",
			                       bad_option(argv, optbuf, sizeof(optbuf)));
		default:
			return cli_usage_error(ctx, "unknown option '%s'",
			                       bad_option(argv, optbuf, sizeof(optbuf)));
		}
	}
	/* argv[optind - 1] stands for the root node's own name */
	return run_node(ctx, &root, argc - optind + 1, argv + optind - 1);
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.format = CLI_FORMAT_TABLE;
	snprintf(ctx.cmd, sizeof(ctx.cmd), "olivares");

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return cli_fail("cannot initialise libcurl");
	rc = run(&ctx, argc, argv);
	curl_global_cleanup();
	cli_config_release(&ctx.config);

	/* a full disk or a closed pipe must not look like success */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "olivares: cannot write output: %s\n", strerror(errno));
		if (rc == CLI_EXIT_OK)
			rc = CLI_EXIT_FAIL;
	}
	return rc;
}
