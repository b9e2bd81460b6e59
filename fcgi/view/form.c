/* The application/x-www-form-urlencoded decoder (fcgi/view/form.h). */
#include "fcgi/view/form.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/uri.h>

#include "model/alloc.h"
#include "model/text.h"

/* One decoded name or value of a urlencoded text: '+' is a space, then
 * %XX escapes (libxml2). NULL when it would hold NUL or is not UTF-8. */
static char *decode_part(const char *p, size_t n)
{
	char *copy, *dec, *out = NULL;
	size_t i;

	copy = model_xmemdup(p, n);
	for (i = 0; i < n; i++) {
		if (copy[i] == '+')
			copy[i] = ' ';
		/* %00 is the only way to a NUL byte (raw ones are refused by
		 * the caller); xmlURIUnescapeString would cut the text there */
		if (copy[i] == '%' && i + 2 < n && copy[i + 1] == '0' && copy[i + 2] == '0')
			goto out;
	}
	if (n == 0) {
		out = model_xstrdup("");
		goto out;
	}
	dec = xmlURIUnescapeString(copy, (int)n, NULL);
	if (!dec) {
		fputs("olivares: libxml2 allocation failed\n", stderr);
		abort();
	}
	if (model_text_valid_utf8(dec, strlen(dec)))
		out = model_xstrdup(dec);
	xmlFree(dec);
out:
	free(copy);
	return out;
}

int http_form_decode(const char *s, size_t n, json_t *obj)
{
	const char *p, *end, *seg, *eq;
	char *name = NULL, *value = NULL;
	int ret = -1;

	/* s may be NULL for an empty text: no arithmetic on it then */
	if (n == 0)
		return 0;
	if (memchr(s, '\0', n))
		return -1;
	p = s;
	end = s + n;
	while (p < end) {
		seg = memchr(p, '&', (size_t)(end - p));
		if (!seg)
			seg = end;
		if (seg > p) {
			eq = memchr(p, '=', (size_t)(seg - p));
			name = decode_part(p, (size_t)((eq ? eq : seg) - p));
			value =
			    eq ? decode_part(eq + 1, (size_t)(seg - eq - 1)) : model_xstrdup("");
			if (!name || !value)
				goto out;
			if (!json_object_get(obj, name))
				json_object_set_new(obj, name, json_string(value));
			free(name);
			free(value);
			name = value = NULL;
		}
		p = seg + 1;
	}
	ret = 0;
out:
	free(name);
	free(value);
	return ret;
}
