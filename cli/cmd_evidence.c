/*
 * olivares sandbox verify | gate --evidence | comparisons evidence |
 * evidence-key: signed evidence (docs/evidence.md).
 *
 * verify and gate --evidence are offline: they read a bundle file and a
 * public key file and check them with model/evidence.h, without a server
 * call, so a deployment system can decide on evidence it was handed.
 * comparisons evidence and evidence-key fetch the bundle and the key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/evidence.h"

/* A bundle is a comparison, its two runs and their outputs: as large as a
 * response the CLI takes. */
#define BUNDLE_MAX_BYTES CLI_MAX_RESPONSE_BYTES

/*
 * The public key in the file name, as PEM text (malloc'ed), or NULL after
 * the error was printed. The file is the PEM itself, or the JSON answer of
 * GET /v1/evidence/key (its "public_key").
 */
static char *load_key(const char *name)
{
	struct model_buf b;
	const char *p;
	json_t *doc;
	json_error_t jerr;
	char *pem = NULL, *shown;

	if (cli_read_file(name, &b))
		return NULL;
	for (p = b.data; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
		;
	if (*p != '{') {
		pem = model_buf_detach(&b, NULL);
		model_buf_release(&b);
		return pem;
	}
	doc = json_loadb(b.data, b.len, 0, &jerr);
	shown = cli_escape(name, strlen(name));
	if (!json_is_string(json_object_get(doc, "public_key")))
		cli_fail("%s: neither a PEM key nor a JSON object with a \"public_key\" string",
		         shown);
	else
		pem = model_xstrdup(json_string_value(json_object_get(doc, "public_key")));
	free(shown);
	json_decref(doc);
	model_buf_release(&b);
	return pem;
}

/*
 * Verify the bundle file against the key file: *bundle receives the
 * verified bundle (caller json_decref). CLI_EXIT_OK, or CLI_EXIT_FAIL after
 * saying what does not hold (or which file cannot be read).
 */
static int verify_files(const char *bundle_file, const char *key_file, json_t **bundle)
{
	struct model_buf b;
	char why[512], *pem, *shown;
	int rc;

	*bundle = NULL;
	pem = load_key(key_file);
	if (!pem)
		return CLI_EXIT_FAIL;
	if (cli_read_file_max(bundle_file, BUNDLE_MAX_BYTES, "256 MiB, the limit of a response",
	                      &b)) {
		free(pem);
		return CLI_EXIT_FAIL;
	}
	rc = model_evidence_verify(b.data, b.len, pem, bundle, why, sizeof(why));
	model_buf_release(&b);
	free(pem);
	if (rc == 0)
		return CLI_EXIT_OK;
	shown = cli_escape(bundle_file, strlen(bundle_file));
	cli_fail("%s: does not verify: %s", shown, why);
	free(shown);
	return CLI_EXIT_FAIL;
}

/* ---- verify -------------------------------------------------------------- */

int cli_cmd_verify(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *key = cli_arg(a, "key");
	const json_t *c;
	json_t *bundle;
	char *id, *verdict;
	int rc;

	if (!key || !key[0])
		return cli_usage_error(ctx, "--key is required");
	rc = verify_files(a->pos, key, &bundle);
	if (rc)
		return rc;
	c = json_object_get(bundle, "comparison");
	if (ctx->format == CLI_FORMAT_JSON) {
		cli_print_json(c);
	} else {
		/* signed by the server, still printed escaped as every value */
		id = cli_render(json_object_get(c, "id"));
		verdict = cli_render(json_object_get(c, "verdict"));
		printf("verified: comparison %s %s\n", id, verdict);
		free(id);
		free(verdict);
	}
	json_decref(bundle);
	return CLI_EXIT_OK;
}

/* ---- gate --evidence ----------------------------------------------------- */

int cli_gate_evidence(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *file = cli_arg(a, "evidence"), *key = cli_arg(a, "key");
	const char *scenario = cli_arg(a, "scenario");
	const char *verdict, *of;
	const json_t *c;
	json_t *bundle;
	char *delta, *id, *shown, *want, *reason;
	int rc;

	if (!file || !file[0])
		return cli_usage_error(ctx, "--key needs --evidence BUNDLE");
	if (!key || !key[0])
		return cli_usage_error(ctx, "--evidence needs --key KEYFILE");
	rc = verify_files(file, key, &bundle);
	if (rc) {
		cli_fail("the gate stays closed");
		return rc;
	}
	c = json_object_get(bundle, "comparison");
	verdict = json_string_value(json_object_get(c, "verdict"));
	if (!verdict)
		verdict = "";
	delta = cli_number_text(json_object_get(c, "delta"));
	id = cli_render(json_object_get(c, "id"));
	if (ctx->format == CLI_FORMAT_JSON) {
		cli_print_json(c);
	} else {
		shown = verdict[0] ? cli_escape(verdict, strlen(verdict)) : model_xstrdup("?");
		printf("verdict=%s delta=%s comparison=%s\n", shown, delta, id);
		free(shown);
	}
	cli_note_comparison(c);
	/* a bundle about another scenario is no evidence about this one */
	of = json_string_value(json_object_get(c, "scenario_id"));
	if (scenario && (!of || strcmp(of, scenario) != 0)) {
		want = cli_escape(scenario, strlen(scenario));
		shown = cli_render(json_object_get(c, "scenario_id"));
		cli_fail("the bundle is a comparison of scenario %s, not of %s: the gate stays "
		         "closed",
		         shown, want);
		free(want);
		free(shown);
		rc = CLI_EXIT_NO_COMPARISON;
	} else if (strcmp(verdict, "improved") == 0 || strcmp(verdict, "unchanged") == 0) {
		rc = CLI_EXIT_OK;
	} else {
		reason = cli_render(json_object_get(c, "reason"));
		if (strcmp(verdict, "regressed") == 0)
			cli_fail("gate closed: the candidate regressed (delta %s)", delta);
		else if (strcmp(verdict, "inconclusive") == 0)
			cli_fail("gate closed: the comparison is inconclusive (%s)", reason);
		else
			cli_fail("gate closed: unknown verdict in the bundle");
		free(reason);
		rc = CLI_EXIT_FAIL;
	}
	free(delta);
	free(id);
	json_decref(bundle);
	return rc;
}

/* ---- comparisons evidence, evidence-key ---------------------------------- */

/* n bytes of data to the file name, or stdout when name is NULL or "-";
 * CLI_EXIT_OK, or CLI_EXIT_FAIL after the error was printed. */
static int write_out(const char *name, const char *data, size_t n)
{
	FILE *f = stdout;
	char *shown;
	int rc = CLI_EXIT_OK;

	if (name && strcmp(name, "-") != 0) {
		f = fopen(name, "wb");
		if (!f) {
			shown = cli_escape(name, strlen(name));
			cli_fail("%s: %s", shown, strerror(errno));
			free(shown);
			return CLI_EXIT_FAIL;
		}
	}
	if (n && fwrite(data, 1, n, f) != n)
		rc = CLI_EXIT_FAIL;
	if (f != stdout && fclose(f) != 0)
		rc = CLI_EXIT_FAIL;
	if (rc && f != stdout) {
		shown = cli_escape(name, strlen(name));
		cli_fail("%s: %s", shown, strerror(errno));
		free(shown);
	}
	return rc;
}

int cli_cmd_comparisons_evidence(struct cli_ctx *ctx, const struct cli_args *a)
{
	struct model_buf body, path;
	int rc = CLI_EXIT_FAIL;

	cli_path_id(&path, "/v1/m/sandbox/comparisons/", a->pos, "/evidence");
	/* the bundle is verified byte for byte: kept as the server sent it */
	if (cli_http_get_raw(ctx, path.data, "application/json", &body) == 0)
		rc = write_out(cli_arg(a, "file"), body.data, body.len);
	model_buf_release(&path);
	model_buf_release(&body);
	return rc;
}

int cli_cmd_evidence_key(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *pem, *kid;
	json_t *resp = NULL;
	char computed[65];
	int rc = CLI_EXIT_FAIL;

	/* a verifier may hold no token: the key is public */
	ctx->public_route = 1;
	if (cli_http_call(ctx, "GET", "/v1/evidence/key", NULL, &resp))
		return CLI_EXIT_FAIL;
	pem = json_string_value(json_object_get(resp, "public_key"));
	kid = json_string_value(json_object_get(resp, "key_id"));
	/* a key whose id is not its own would make every bundle fail later,
	 * with a less clear message */
	if (!pem || !kid || model_evidence_key_id(pem, computed) || strcmp(computed, kid) != 0) {
		cli_fail("unexpected response: no Ed25519 public_key whose id is key_id");
		goto out;
	}
	if (ctx->format == CLI_FORMAT_JSON && !cli_arg(a, "file")) {
		cli_print_json(resp);
		rc = CLI_EXIT_OK;
	} else {
		rc = write_out(cli_arg(a, "file"), pem, strlen(pem));
	}
out:
	json_decref(resp);
	return rc;
}

/* ---- command tables ------------------------------------------------------ */

const struct cli_opt cli_verify_opts[] = {
    {"key", "FILE", "public key file: PEM, or the JSON of 'evidence-key -o json'"},
    {NULL, NULL, NULL},
};

const char cli_verify_help[] =
    "Offline: no server call. Reads the bundle file (BUNDLE, '-' for stdin), as\n"
    "'sandbox comparisons evidence ID' wrote it, and the public key file, and checks\n"
    "that the bundle is in canonical form, was signed by that key (key_id and\n"
    "Ed25519 signature), that every record's SHA-256 is its link's body_sha256, and\n"
    "that the links form an unbroken chain (consecutive seqs, each prev the hash of\n"
    "the link before). See docs/evidence.md.\n"
    "Exit status: 0 when all of it holds: stdout says 'verified: comparison ID\n"
    "VERDICT' (-o json: the comparison object); 1 when something does not hold\n"
    "(stderr names it: 'olivares: BUNDLE: does not verify: signature does not\n"
    "verify', '... link 3: prev does not match link 2's hash', '... run ID: body\n"
    "hash mismatch') or a file cannot be read; 2 on a usage error.\n"
    "Example:\n"
    "  olivares sandbox evidence-key > olivares-key.pem\n"
    "  olivares sandbox comparisons evidence CMP_ID > evidence.json\n"
    "  olivares sandbox verify --key olivares-key.pem evidence.json\n";

const struct cli_opt cli_evidence_file_opts[] = {
    {"file", "FILE", "write to FILE instead of stdout"},
    {NULL, NULL, NULL},
};

const char cli_comparisons_evidence_help[] =
    "GET /v1/m/sandbox/comparisons/ID/evidence (any role).\n"
    "Writes the bundle as the server sent it, byte for byte (-o does not apply), to\n"
    "stdout or to --file FILE: the comparison, its runs and their outputs, the chain\n"
    "of links that covers them, key_id and signature (docs/evidence.md). A pending\n"
    "comparison has no evidence yet: 409, exit 1. 'sandbox verify' checks it\n"
    "offline.\n"
    "Example:\n"
    "  olivares sandbox comparisons evidence CMP_ID --file evidence.json\n";

const char cli_evidence_key_help[] =
    "GET /v1/evidence/key (public: no token needed).\n"
    "Writes the Ed25519 public key the server signs evidence with, as PEM, to stdout\n"
    "or to --file FILE; with -o json (and no --file) the answer {\"algorithm\",\n"
    "\"key_id\",\"public_key\"}. key_id is the hex SHA-256 of the raw public key, as\n"
    "in every bundle the key signs; the command checks it. Fetch the key once, over\n"
    "a channel you trust, and keep it where the verifier runs: a key fetched from\n"
    "the same server when a bundle is verified proves nothing about that server.\n"
    "Example:\n"
    "  olivares sandbox evidence-key --file olivares-key.pem\n";
