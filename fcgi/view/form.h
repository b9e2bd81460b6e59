#ifndef OLIVARES_FCGI_VIEW_FORM_H
#define OLIVARES_FCGI_VIEW_FORM_H
/**
 * The application/x-www-form-urlencoded decoder of the admin view: form
 * bodies of POSTs and the query strings of pages (and of the API's
 * queries, http_query_get).
 */
#include <stddef.h>

#include <jansson.h>

/**
 * Decode the n bytes at s ("a=b&c=d", no terminator needed; s may be NULL
 * when n is 0) into obj, one string member per field.
 *
 * Rules (those of a browser's form submission):
 * - fields are separated by '&'; empty fields ("a=1&&b=2") are skipped;
 * - a name is what comes before the first '=' of its field; a field without
 *   '=' has the value "" ("flag" gives {"flag": ""}); "=v" has the name "";
 * - in names and values '+' is a space, then %XX escapes are decoded by
 *   libxml2's xmlURIUnescapeString; a '%' not followed by two hex digits
 *   ("%4" at the end, "%zz") stays as it is, literally;
 * - the first of duplicate names wins (later ones are ignored, not errors).
 *
 * Memory: obj (a JSON object owned by the caller) receives new members;
 * nothing else is kept. Allocation failures abort (model/alloc.h).
 *
 * Returns 0, or -1 when a decoded name or value would hold a NUL byte (raw
 * or "%00") or is not valid UTF-8 (model_text_valid_utf8, e.g. "%FF");
 * on -1 obj may hold the members decoded before the bad field.
 */
int http_form_decode(const char *s, size_t n, json_t *obj);

#endif
