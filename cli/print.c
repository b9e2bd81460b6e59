/*
 * Output of the CLI. -o json prints the server's JSON indented; -o table
 * prints aligned text where every value stays on one line (control
 * characters escaped), so tables can be read and grepped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

#define GAP "  "

void cli_print_json(const json_t *v)
{
	/* JSON_ENCODE_ANY: a samples array is printed as is */
	/* reals with 15 significant digits: a score recorded to 9 decimals
	 * reads 0.666666667, as the server sends it */
	if (json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15)) == 0)
		fputc('\n', stdout);
}

char *cli_escape(const char *s, size_t n)
{
	struct model_buf b;
	char *out;
	unsigned char c;
	size_t i, len;
	long cp;
	int full = 0;

	/* at most 4 output bytes per input byte ("\\xNN"; "\\uXXXX" stands for
	 * 2 or 3): the cap is never reached */
	model_buf_init(&b, n * 4 + 1);
	for (i = 0; i < n && !full; i++) {
		c = (unsigned char)s[i];
		switch (c) {
		case '\\':
			full = model_buf_adds(&b, "\\\\");
			break;
		case '\n':
			full = model_buf_adds(&b, "\\n");
			break;
		case '\r':
			full = model_buf_adds(&b, "\\r");
			break;
		case '\t':
			full = model_buf_adds(&b, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				full = model_buf_printf(&b, "\\x%02x", c);
				break;
			}
			if (c < 0x80) {
				full = model_buf_add(&b, &s[i], 1);
				break;
			}
			/* a code point that shows nothing or reorders the line
			 * (C1 controls, zero-width and bidi marks, overrides,
			 * isolates): written out, as the admin view does; a
			 * byte that is not UTF-8, as a byte */
			cp = model_text_utf8_at((const unsigned char *)s + i, n - i, &len);
			if (cp < 0)
				full = model_buf_printf(&b, "\\x%02x", c);
			else if (model_text_invisible((unsigned long)cp))
				full = model_buf_printf(&b, "\\u%04lX", (unsigned long)cp);
			else
				full = model_buf_add(&b, &s[i], len);
			i += len - 1;
			break;
		}
	}
	out = model_buf_detach(&b, NULL);
	/* detach leaves b re-initialised (and allocated): release that */
	model_buf_release(&b);
	return out;
}

char *cli_number_text(const json_t *v)
{
	char buf[64];
	double d;
	int prec;

	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return model_xstrdup(buf);
	}
	if (!json_is_real(v))
		return model_xstrdup(json_is_null(v) || !v ? "null" : "?");
	d = json_real_value(v);
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return model_xstrdup(buf);
}

char *cli_render(const json_t *v)
{
	char *s, *copy;

	if (!v || json_is_null(v))
		return model_xstrdup("-");
	if (json_is_string(v))
		return cli_escape(json_string_value(v), json_string_length(v));
	if (json_is_true(v))
		return model_xstrdup("true");
	if (json_is_false(v))
		return model_xstrdup("false");
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	if (!s)
		return model_xstrdup("?");
	/* nested strings may hold control characters too */
	copy = cli_escape(s, strlen(s));
	free(s);
	return copy;
}

/* Columns a UTF-8 string takes on a terminal, counting one per code point
 * (the lead bytes); wide characters are not accounted for. */
static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	}
	return w;
}

static void print_padded(const char *s, size_t width)
{
	size_t w = display_width(s);

	fputs(s, stdout);
	for (; w < width; w++)
		fputc(' ', stdout);
}

static int skipped(const char *key, const char *const *skip)
{
	for (; skip && *skip; skip++) {
		if (strcmp(*skip, key) == 0)
			return 1;
	}
	return 0;
}

/* A completed run (status) with a shutdown note: "olivares: WHAT ID
 * completed, but NOTE" on stderr, and 1; else nothing and 0. what is
 * "run", "baseline run" or "candidate run". */
static int note_shutdown(const char *what, const char *status, const json_t *id,
                         const json_t *shutdown)
{
	char *id_s, *note_s;

	if (!status || strcmp(status, "completed") != 0 || !json_is_string(shutdown))
		return 0;
	id_s = cli_render(id);
	note_s = cli_render(shutdown);
	fprintf(stderr, "olivares: %s %s completed, but %s\n", what, id_s, note_s);
	free(id_s);
	free(note_s);
	return 1;
}

void cli_note_run_outcome(const json_t *run)
{
	const char *status = json_string_value(json_object_get(run, "status"));
	const json_t *id = json_object_get(run, "id"), *reason = json_object_get(run, "reason");
	char *id_s, *reason_s;

	if (note_shutdown("run", status, id, json_object_get(run, "shutdown")))
		return;
	/* cancelled too: one who waited for the run may not be the one who
	 * cancelled it */
	if (!status || (strcmp(status, "failed") != 0 && strcmp(status, "degraded") != 0 &&
	                strcmp(status, "cancelled") != 0))
		return;
	id_s = cli_render(id);
	reason_s = json_is_string(reason) ? cli_render(reason) : NULL;
	fprintf(stderr, "olivares: run %s %s%s%s\n", id_s, status, reason_s ? ": " : "",
	        reason_s ? reason_s : "");
	free(id_s);
	free(reason_s);
}

/* same_agent true: "olivares: warning: both sides ran the same agent
 * program (NAME[, sha256 HEX]) with the same mocks: …" on stderr. The
 * built-in agent also says where it comes from: a variant that names no
 * program (a typo, a program not installed) runs it. */
static void note_same_agent(const json_t *cmp)
{
	const json_t *agent = json_object_get(json_object_get(cmp, "candidate"), "agent");
	const json_t *sha = json_object_get(agent, "sha256");
	char *name = cli_render(json_object_get(agent, "name"));
	char *b = cli_render(json_object_get(json_object_get(cmp, "baseline"), "variant"));
	char *c = cli_render(json_object_get(json_object_get(cmp, "candidate"), "variant"));
	char *hex = json_is_string(sha) ? cli_render(sha) : NULL;

	if (json_is_true(json_object_get(cmp, "same_agent")))
		fprintf(
		    stderr,
		    "olivares: warning: both sides ran the same agent program (%s%s%s) with the "
		    "same mocks: variants %s and %s compare a program with itself%s\n",
		    name, hex ? ", sha256 " : "", hex ? hex : "", b, c,
		    hex ? ""
		        : " (a variant that names no program in the server's agents directory "
		          "runs the built-in agent: olivares sandbox agents list shows them)");
	free(name);
	free(b);
	free(c);
	free(hex);
}

void cli_note_comparison(const json_t *cmp)
{
	static const char *const sides[] = {"baseline", "candidate"};
	static const char *const whats[] = {"baseline run", "candidate run"};
	const json_t *side;
	size_t i;

	for (i = 0; i < sizeof sides / sizeof sides[0]; i++) {
		side = json_object_get(cmp, sides[i]);
		note_shutdown(whats[i], json_string_value(json_object_get(side, "status")),
		              json_object_get(side, "run_id"), json_object_get(side, "shutdown"));
	}
	note_same_agent(cmp);
}

void cli_print_fields(const json_t *obj, const char *const *skip)
{
	const char *key;
	const json_t *value;
	size_t width = 0, w;
	char *cell;

	json_object_foreach((json_t *)obj, key, value)
	{
		w = display_width(key);
		if (!skipped(key, skip) && w > width)
			width = w;
	}
	json_object_foreach((json_t *)obj, key, value)
	{
		if (skipped(key, skip))
			continue;
		cell = cli_escape(key, strlen(key));
		print_padded(cell, width);
		free(cell);
		cell = cli_render(value);
		printf(GAP "%s\n", cell);
		free(cell);
	}
}

void cli_print_table(const json_t *arr, const struct cli_column *cols)
{
	size_t ncols, nrows, r, c, w;
	size_t *width;
	char **cells;
	const json_t *item;

	for (ncols = 0; cols[ncols].title; ncols++)
		;
	nrows = json_array_size(arr);
	width = model_xcalloc(ncols, sizeof(*width));
	cells = model_xcalloc(nrows * ncols + 1, sizeof(*cells));
	for (c = 0; c < ncols; c++)
		width[c] = display_width(cols[c].title);
	for (r = 0; r < nrows; r++) {
		item = json_array_get(arr, r);
		for (c = 0; c < ncols; c++) {
			if (cols[c].cell)
				cells[r * ncols + c] = cols[c].cell(item);
			else
				cells[r * ncols + c] =
				    cli_render(json_object_get(item, cols[c].key));
			w = display_width(cells[r * ncols + c]);
			if (w > width[c])
				width[c] = w;
		}
	}
	for (c = 0; c < ncols; c++) {
		if (c + 1 < ncols) {
			print_padded(cols[c].title, width[c]);
			fputs(GAP, stdout);
		} else {
			fputs(cols[c].title, stdout);
		}
	}
	fputc('\n', stdout);
	for (r = 0; r < nrows; r++) {
		for (c = 0; c < ncols; c++) {
			if (c + 1 < ncols) {
				print_padded(cells[r * ncols + c], width[c]);
				fputs(GAP, stdout);
			} else {
				fputs(cells[r * ncols + c], stdout);
			}
		}
		fputc('\n', stdout);
	}
	for (r = 0; r < nrows * ncols; r++)
		free(cells[r]);
	free(cells);
	free(width);
}

void cli_print_answer(const struct cli_ctx *ctx, const json_t *resp, cli_printer table,
                      cli_printer note)
{
	if (ctx->format == CLI_FORMAT_JSON)
		cli_print_json(resp);
	else
		table(resp);
	if (note)
		note(resp);
}

int cli_call_print(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                   cli_printer table, cli_printer note)
{
	json_t *resp;
	int rc;

	rc = cli_http_call(ctx, method, path, body, &resp);
	json_decref(body);
	if (rc)
		return CLI_EXIT_FAIL;
	cli_print_answer(ctx, resp, table, note);
	json_decref(resp);
	return CLI_EXIT_OK;
}

int cli_call_print_id(struct cli_ctx *ctx, const char *method, const char *prefix, const char *id,
                      const char *suffix, json_t *body, cli_printer table, cli_printer note)
{
	struct model_buf path;
	int rc;

	cli_path_id(&path, prefix, id, suffix);
	rc = cli_call_print(ctx, method, path.data, body, table, note);
	model_buf_release(&path);
	return rc;
}

int cli_call_list(struct cli_ctx *ctx, const struct cli_args *a, const char *base,
                  const char *const *filters, cli_printer table)
{
	struct model_buf path;
	int rc = CLI_EXIT_USAGE;
	size_t i;

	model_buf_init(&path, CLI_PATH_MAX_BYTES);
	/* base is one of the commands' constant paths */
	model_buf_must_fit(model_buf_adds(&path, base));
	for (i = 0; filters && filters[i]; i++) {
		if (cli_query_add(ctx, &path, filters[i], cli_arg(a, filters[i])))
			goto out;
	}
	if (cli_query_add_int(ctx, &path, a, "limit") || cli_query_add_int(ctx, &path, a, "offset"))
		goto out;
	rc = cli_call_print(ctx, "GET", path.data, NULL, table, NULL);
out:
	model_buf_release(&path);
	return rc;
}
