/*
 * config-reference-gen FORMAT FILE: rewrite the configuration reference
 * of FILE (the lines between its config-reference markers) from the table
 * of fcgi/config.c; FORMAT is markdown or man. Run by `make
 * update-config-reference` on docs/configuration.md and
 * docs/man/olivares.conf.5; never installed.
 *
 * Exit status: 0 (FILE rewritten, or already up to date), 1 (FILE cannot
 * be read or written, or lacks the markers), 2 (usage).
 */
#include "fcgi/config_reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file path, NUL-terminated, allocated; NULL when unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	mem = open_memstream(&text, &len);
	if (!mem) {
		fclose(f);
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, mem);
	if (ferror(f) | ferror(mem)) {
		fclose(f);
		fclose(mem);
		free(text);
		return NULL;
	}
	fclose(f);
	fclose(mem);
	return text;
}

int main(int argc, char **argv)
{
	enum http_config_reference_format format;
	char *doc, *updated = NULL;
	FILE *f;
	int rc = 1;

	if (argc != 3 || (strcmp(argv[1], "markdown") != 0 && strcmp(argv[1], "man") != 0)) {
		fputs("usage: config-reference-gen markdown|man FILE\n", stderr);
		return 2;
	}
	format = strcmp(argv[1], "man") == 0 ? HTTP_CONFIG_REFERENCE_MAN
	                                     : HTTP_CONFIG_REFERENCE_MARKDOWN;
	doc = slurp(argv[2]);
	if (!doc) {
		perror(argv[2]);
		return 1;
	}
	if (http_config_reference_splice(doc, format, &updated)) {
		fprintf(stderr, "%s: no config-reference markers (BEGIN and END lines)\n", argv[2]);
		goto out;
	}
	if (strcmp(doc, updated) == 0) {
		printf("%s: up to date\n", argv[2]);
		rc = 0;
		goto out;
	}
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		goto out;
	}
	if ((fputs(updated, f) == EOF) | (fclose(f) != 0)) {
		perror(argv[2]);
		goto out;
	}
	printf("%s: updated\n", argv[2]);
	rc = 0;
out:
	free(doc);
	free(updated);
	return rc;
}
