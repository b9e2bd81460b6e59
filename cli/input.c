/*
 * Input files of the CLI: read byte for byte (the product's rule: a file's
 * line breaks are kept, a final newline included), capped at the API's 1 MiB request limit, and
 * checked locally so that a bad file gets a message naming the file and the
 * place, not a 400 from the server.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "model/text.h"

static const char *display_name(const char *name)
{
	return strcmp(name, "-") == 0 ? "<stdin>" : name;
}

int cli_read_file_max(const char *name, size_t max, const char *limit, struct model_buf *out)
{
	char chunk[65536];
	FILE *f;
	size_t n;
	int rc = -1;

	if (strcmp(name, "-") == 0) {
		f = stdin;
	} else {
		f = fopen(name, "rb");
		if (!f) {
			cli_fail("%s: %s", name, strerror(errno));
			return -1;
		}
	}
	model_buf_init(out, max);
	for (;;) {
		n = fread(chunk, 1, sizeof(chunk), f);
		if (n > 0 && model_buf_add(out, chunk, n)) {
			cli_fail("%s: larger than %zu bytes (%s)", display_name(name), max, limit);
			goto out;
		}
		if (n < sizeof(chunk)) {
			if (ferror(f)) {
				cli_fail("%s: %s", display_name(name), strerror(errno));
				goto out;
			}
			if (feof(f))
				break;
		}
	}
	rc = 0;
out:
	if (f != stdin)
		fclose(f);
	if (rc)
		model_buf_release(out);
	return rc;
}

int cli_read_file(const char *name, struct model_buf *out)
{
	return cli_read_file_max(name, CLI_MAX_FILE_BYTES, "1 MiB, the API's request limit", out);
}

int cli_read_text_file(const char *name, struct model_buf *out)
{
	const char *nul;

	if (cli_read_file(name, out))
		return -1;
	if (model_text_valid_utf8(out->data, out->len))
		return 0;
	nul = memchr(out->data, '\0', out->len);
	if (nul)
		cli_fail("%s: contains a NUL byte at offset %zu (text must be UTF-8 without NUL)",
		         display_name(name), (size_t)(nul - out->data));
	else
		cli_fail("%s: not valid UTF-8 text", display_name(name));
	model_buf_release(out);
	return -1;
}

/*
 * Load `name` as JSON and find the array: the document itself, or the first
 * of keys[] present in an object. Each element must be an object.
 */
static int load_array(const char *name, const char *const *keys, const char *what,
                      const char *expect, json_t **out)
{
	struct model_buf file;
	json_error_t jerr;
	json_t *doc = NULL, *arr = NULL, *item;
	size_t i;
	int k, rc = -1;

	*out = NULL;
	if (cli_read_file(name, &file))
		return -1;
	/* duplicates refused like the server does (JSON_REJECT_DUPLICATES) */
	doc = json_loadb(file.data, file.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		cli_fail("%s: invalid JSON at line %d column %d: %s", display_name(name), jerr.line,
		         jerr.column, jerr.text);
		goto out;
	}
	if (json_is_array(doc)) {
		arr = doc;
	} else {
		for (k = 0; keys[k]; k++) {
			arr = json_object_get(doc, keys[k]);
			if (arr)
				break;
		}
	}
	if (!json_is_array(arr)) {
		cli_fail("%s: expected %s", display_name(name), expect);
		goto out;
	}
	json_array_foreach(arr, i, item)
	{
		if (!json_is_object(item)) {
			cli_fail("%s: %s %zu is not a JSON object", display_name(name), what,
			         i + 1);
			goto out;
		}
	}
	*out = json_incref(arr);
	rc = 0;
out:
	json_decref(doc);
	model_buf_release(&file);
	return rc;
}

int cli_load_steps(const char *name, json_t **out)
{
	static const char *const keys[] = {"steps", "samples", NULL};

	return load_array(
	    name, keys, "step",
	    "a JSON array of steps, or an object with a \"steps\" or \"samples\" array", out);
}

int cli_load_mocks(const char *name, json_t **out)
{
	static const char *const keys[] = {"mocks", NULL};

	return load_array(name, keys, "mock",
	                  "a JSON array of mocks, or an object with a \"mocks\" array", out);
}

int cli_load_object(const char *name, json_t **out)
{
	struct model_buf file;
	json_error_t jerr;
	json_t *doc;

	*out = NULL;
	if (cli_read_file(name, &file))
		return -1;
	doc = json_loadb(file.data, file.len, JSON_REJECT_DUPLICATES, &jerr);
	model_buf_release(&file);
	if (!doc) {
		cli_fail("%s: invalid JSON at line %d column %d: %s", display_name(name), jerr.line,
		         jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(doc)) {
		cli_fail("%s: expected a JSON object", display_name(name));
		json_decref(doc);
		return -1;
	}
	*out = doc;
	return 0;
}
