/*
 * The configuration reference (config_reference.h): the table of
 * fcgi/config.c written as Markdown or as roff. The texts of the table
 * are Markdown-lite: `code` is the only markup, and the roff writer turns
 * it into bold.
 */
#include "fcgi/config_reference.h"
#include "fcgi/config.h"

#include <stdlib.h>
#include <string.h>

#define MARKER_NOTE                                                                                \
	": generated from the table of fcgi/config.c by \"make update-config-reference\"; edit "   \
	"the table, not this"

struct markers {
	const char *begin, *end; /* how the marker lines start */
	const char *begin_line;  /* the whole BEGIN line, as written */
};

static const struct markers markdown_markers = {
    "<!-- BEGIN config-reference",
    "<!-- END config-reference",
    "<!-- BEGIN config-reference" MARKER_NOTE " -->",
};

static const struct markers man_markers = {
    ".\\\" BEGIN config-reference",
    ".\\\" END config-reference",
    ".\\\" BEGIN config-reference" MARKER_NOTE,
};

static const struct markers *markers_of(enum http_config_reference_format format)
{
	return format == HTTP_CONFIG_REFERENCE_MAN ? &man_markers : &markdown_markers;
}

/* text as Markdown: a '|' escaped, since in a table cell it would end
 * the cell */
static void md_cell(FILE *f, const char *text)
{
	const char *p;

	for (p = text; *p; p++) {
		if (*p == '|')
			fputc('\\', f);
		fputc(*p, f);
	}
}

/* text as roff: `code` in bold, with hyphens that stay hyphens (\-) and
 * break points after ';' and ',' (a connection string is one long word);
 * a backslash escaped; a line never starting with a control character. */
static void roff_text(FILE *f, const char *text)
{
	const char *p;
	int code = 0;

	if (text[0] == '.' || text[0] == '\'')
		fputs("\\&", f);
	for (p = text; *p; p++) {
		if (*p == '`') {
			code = !code;
			fputs(code ? "\\fB" : "\\fR", f);
		} else if (*p == '\\') {
			fputs("\\e", f);
		} else if (code && *p == '-') {
			fputs("\\-", f);
		} else if (code && (*p == ';' || *p == ',')) {
			fputc(*p, f);
			fputs("\\:", f);
		} else {
			fputc(*p, f);
		}
	}
}

/* How one format writes the reference: the texts of the table through
 * text(), around them the format's own markup. A section is
 * section[0] header section[1] title section[2] help section[3], a key
 * key[0] name key[1] value key[2] default key[3] help key[4]. */
struct writer {
	void (*text)(FILE *f, const char *text);
	const char *section[4];
	const char *key[5];
	const char *end; /* after the last section */
};

static const struct writer markdown_writer = {
    .text = md_cell,
    .section = {"\n### `", "`: ", "\n\n",
                "\n\n| Key | Value | Default | Meaning |\n| --- | --- | --- | --- |\n"},
    .key = {"| `", "` | ", " | ", " | ", " |\n"},
    .end = "\n",
};

static const struct writer man_writer = {
    .text = roff_text,
    .section = {".SS \"", ": ", "\"\n", "\n"},
    .key = {".TP\n.B ", "\nValue: ", ".\nDefault: ", ".\n.br\n", "\n"},
    .end = "",
};

int http_config_reference_write(FILE *f, enum http_config_reference_format format)
{
	const struct writer *w =
	    format == HTTP_CONFIG_REFERENCE_MAN ? &man_writer : &markdown_writer;
	const struct http_config_section *s;
	const struct http_config_key *k;
	char value[512], def[512];

	for (s = http_config_sections; s->name; s++) {
		fprintf(f, "%s[%s%s]%s%s%s", w->section[0], s->name, s->named ? " NAME" : "",
		        w->section[1], s->title, w->section[2]);
		w->text(f, s->help);
		if (s->named)
			fprintf(f, " At most %d such sections.", HTTP_MAX_TENANT_POLICIES);
		fputs(w->section[3], f);
		for (k = http_config_keys; k->name; k++) {
			if (strcmp(k->section, s->name) != 0)
				continue;
			http_config_value_doc(k, value, sizeof(value));
			if (k->def)
				snprintf(def, sizeof(def), "`%s`", k->def);
			else
				snprintf(def, sizeof(def), "%s", k->default_doc);
			fprintf(f, "%s%s%s", w->key[0], k->name, w->key[1]);
			w->text(f, value);
			fputs(w->key[2], f);
			w->text(f, def);
			fputs(w->key[3], f);
			w->text(f, k->help);
			fputs(w->key[4], f);
		}
	}
	fputs(w->end, f);
	return ferror(f) ? -1 : 0;
}

/* The line of doc that starts with prefix, at the start of a line at or
 * after from; NULL when there is none. */
static const char *line_starting(const char *doc, const char *from, const char *prefix)
{
	const char *p = from;
	size_t len = strlen(prefix);

	while (p && *p) {
		if ((p == doc || p[-1] == '\n') && strncmp(p, prefix, len) == 0)
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int http_config_reference_splice(const char *doc, enum http_config_reference_format format,
                                 char **out)
{
	const struct markers *m = markers_of(format);
	const char *begin, *end, *after;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	begin = line_starting(doc, doc, m->begin);
	end = begin ? line_starting(doc, begin, m->end) : NULL;
	if (!end)
		return -1;
	after = strchr(end, '\n');
	after = after ? after + 1 : end + strlen(end);
	f = open_memstream(out, &len);
	if (!f)
		return -1;
	fwrite(doc, 1, (size_t)(begin - doc), f);
	fprintf(f, "%s\n", m->begin_line);
	http_config_reference_write(f, format);
	fwrite(end, 1, (size_t)(after - end), f);
	if (after == end + strlen(end))
		fputc('\n', f); /* the END line ends the file: give it its newline */
	fputs(after, f);
	if (ferror(f) | fclose(f)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
