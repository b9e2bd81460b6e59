/*
 * Unit tests of the admin view's parts that need no server (Check):
 * fcgi/view/html.c (every value goes in as text and comes out escaped, no
 * script/style elements, no event or style attributes, UTF-8 kept, the
 * document frame, a parse back with libxml2 gives the same text) and
 * fcgi/view/form.c (the application/x-www-form-urlencoded decoder of forms and
 * query strings, with the rules of fcgi/view/form.h).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "fcgi/view/form.h"
#include "fcgi/view/html.h"
#include "tests/unit/unit.h"

#define XSS_TAG "<script>alert(1)</script>"
#define XSS_ATTR "\"><img src=x onerror=alert(1)>"

/* ---- helpers ------------------------------------------------------------ */

/* A page with an empty body; *body receives the body node. */
static htmlDocPtr new_doc(xmlNodePtr *body)
{
	htmlDocPtr doc;

	doc = html_doc_new("Test", "/static/style.css", body);
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_nonnull(*body);
	return doc;
}

/* Serialize doc (freed here) into a malloc'd string; checks the length. */
static char *dump(htmlDocPtr doc)
{
	char *out = NULL;
	size_t len = 0;

	ck_assert_int_eq(html_serialize(doc, &out, &len), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(len, strlen(out));
	xmlFreeDoc(doc);
	return out;
}

/* The html text parsed back by libxml2's HTML parser (caller frees). */
static htmlDocPtr parse_back(const char *html)
{
	htmlDocPtr doc;

	doc = htmlReadMemory(html, (int)strlen(html), NULL, "UTF-8",
	                     HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	ck_assert_msg(doc != NULL, "libxml2 could not parse: %s", html);
	return doc;
}

/* The first element named tag under node (depth first), or NULL. */
static xmlNodePtr find_tag(xmlNodePtr node, const char *tag)
{
	xmlNodePtr c, hit;

	for (c = node; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && xmlStrcasecmp(c->name, BAD_CAST tag) == 0)
			return c;
		hit = find_tag(c->children, tag);
		if (hit)
			return hit;
	}
	return NULL;
}

/* The element with attribute id = id under node, or NULL. */
static xmlNodePtr find_id(xmlNodePtr node, const char *id)
{
	xmlNodePtr c, hit;
	xmlChar *v;
	int same;

	for (c = node; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE) {
			v = xmlGetProp(c, BAD_CAST "id");
			same = v && strcmp((const char *)v, id) == 0;
			xmlFree(v);
			if (same)
				return c;
		}
		hit = find_id(c->children, id);
		if (hit)
			return hit;
	}
	return NULL;
}

/* Assert that the text content of the element #id of parsed is want. */
static void assert_text(htmlDocPtr parsed, const char *id, const char *want)
{
	xmlNodePtr el;
	xmlChar *got;

	el = find_id(xmlDocGetRootElement(parsed), id);
	ck_assert_msg(el != NULL, "no element #%s after parsing back", id);
	got = xmlNodeGetContent(el);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq((const char *)got, want);
	xmlFree(got);
}

/* Assert that the attribute name of the element #id of parsed is want. */
static void assert_attr(htmlDocPtr parsed, const char *id, const char *name, const char *want)
{
	xmlNodePtr el;
	xmlChar *got;

	el = find_id(xmlDocGetRootElement(parsed), id);
	ck_assert_msg(el != NULL, "no element #%s after parsing back", id);
	got = xmlGetProp(el, BAD_CAST name);
	ck_assert_msg(got != NULL, "#%s has no attribute %s", id, name);
	ck_assert_str_eq((const char *)got, want);
	xmlFree(got);
}

/* Decode text (its strlen) into a new object; *rc receives the result. */
static json_t *decode(const char *text, int *rc)
{
	json_t *obj;

	obj = json_object();
	ck_assert_ptr_nonnull(obj);
	*rc = http_form_decode(text, strlen(text), obj);
	return obj;
}

/* Decode text, assert success, return the object. */
static json_t *decode_ok(const char *text)
{
	json_t *obj;
	int rc;

	obj = decode(text, &rc);
	ck_assert_msg(rc == 0, "refused: \"%s\"", text);
	return obj;
}

/* Assert that decoding text is refused. */
static void decode_refused(const char *text, size_t n)
{
	json_t *obj;

	obj = json_object();
	ck_assert_int_eq(http_form_decode(text, n, obj), -1);
	json_decref(obj);
}

/* The string member name of obj (asserted present and a string). */
static const char *field(json_t *obj, const char *name)
{
	json_t *v;

	v = json_object_get(obj, name);
	ck_assert_msg(v != NULL, "no field \"%s\"", name);
	ck_assert_msg(json_is_string(v), "field \"%s\" is not a string", name);
	return json_string_value(v);
}

/* Decode text and assert it gives exactly the fields of want: its names
 * and values in pairs (name, value, name, value, ..., NULL). */
static void expect_fields(const char *text, const char *const want[])
{
	json_t *obj;
	size_t i;

	obj = decode_ok(text);
	for (i = 0; want[i]; i += 2)
		ck_assert_str_eq(field(obj, want[i]), want[i + 1]);
	ck_assert_uint_eq(json_object_size(obj), i / 2);
	json_decref(obj);
}

/* ---- html.c: escaping ------------------------------------------------------ */

START_TEST(test_invisible_shown)
{
	xmlNodePtr body;
	htmlDocPtr doc;
	char *out;

	doc = new_doc(&body);
	/* C0 controls, DEL, a C1 control, a right-to-left override, a BOM and
	 * U+FFFF: each is written out; tab and newline stay as they are */
	html_el(body, "p",
	        "a\x01"
	        "b\x1b[31m\x7f|\xc2\x85|\xe2\x80\xae"
	        "evil|\xef\xbb\xbf|\xef\xbf\xbf|\tx\ny");
	html_attr(html_el(body, "p", "ok é 中"), "title",
	          "t\x02"
	          "t");
	out = dump(doc);
	ck_assert_ptr_nonnull(strstr(out, "a\\u0001b\\u001B[31m\\u007F|\\u0085|\\u202Eevil|\\uFEFF|"
	                                  "\\uFFFF|\tx\ny"));
	ck_assert_ptr_nonnull(strstr(out, "title=\"t\\u0002t\""));
	ck_assert_ptr_nonnull(strstr(out, "ok \xc3\xa9 \xe4\xb8\xad"));
	ck_assert_ptr_null(strstr(out, "\x01"));
	ck_assert_ptr_null(strstr(out, "\xe2\x80\xae"));
	free(out);
}
END_TEST

START_TEST(test_text_escaped)
{
	xmlNodePtr body, p;
	htmlDocPtr doc;
	char *out;

	doc = new_doc(&body);
	p = html_el(body, "p", XSS_TAG);
	html_attr(p, "id", "t1");
	html_attr(html_el(body, "p", "Tom & Jerry \"quoted\" 'single' a<b>c"), "id", "t2");
	html_attr(html_el(body, "p", XSS_ATTR), "id", "t3");
	html_text(p, " & more <b>bold</b>");
	out = dump(doc);
	ck_assert_ptr_nonnull(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	ck_assert_ptr_nonnull(strstr(out, "Tom &amp; Jerry"));
	ck_assert_ptr_nonnull(strstr(out, "a&lt;b&gt;c"));
	ck_assert_ptr_nonnull(strstr(out, " &amp; more &lt;b&gt;bold&lt;/b&gt;"));
	ck_assert_ptr_nonnull(strstr(out, "&lt;img src=x onerror=alert(1)&gt;"));
	ck_assert_ptr_null(strstr(out, "<script"));
	ck_assert_ptr_null(strstr(out, "<img"));
	ck_assert_ptr_null(strstr(out, "<b>"));
	free(out);
}
END_TEST

START_TEST(test_attr_escaped)
{
	xmlNodePtr body, a, b, c;
	htmlDocPtr doc, parsed;
	char *out;

	doc = new_doc(&body);
	a = html_el(body, "span", "a");
	html_attr(a, "id", "a1");
	html_attr(a, "title", XSS_ATTR);
	b = html_el(body, "span", "b");
	html_attr(b, "id", "a2");
	/* both quote kinds: one of them must become an entity */
	html_attr(b, "title", "it's \"x\" & <y>");
	c = html_el(body, "span", "c");
	html_attr(c, "id", "a3");
	html_attr(c, "data-v", XSS_TAG);
	html_input(body, "hidden", "csrf", XSS_ATTR);
	out = dump(doc);
	ck_assert_ptr_null(strstr(out, "<img"));
	ck_assert_ptr_null(strstr(out, "<script"));
	ck_assert_ptr_nonnull(strstr(out, "&lt;img src=x onerror=alert(1)&gt;"));
	ck_assert_ptr_nonnull(strstr(out, "title=\"it's &quot;x&quot; &amp; &lt;y&gt;\""));
	ck_assert_ptr_nonnull(strstr(out, "data-v=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));

	/* and the browser-like parse gives the values back, with no element
	 * made out of them */
	parsed = parse_back(out);
	assert_attr(parsed, "a1", "title", XSS_ATTR);
	assert_attr(parsed, "a2", "title", "it's \"x\" & <y>");
	assert_attr(parsed, "a3", "data-v", XSS_TAG);
	ck_assert_ptr_null(find_tag(xmlDocGetRootElement(parsed), "img"));
	ck_assert_ptr_null(find_tag(xmlDocGetRootElement(parsed), "script"));
	xmlFreeDoc(parsed);
	free(out);
}
END_TEST

START_TEST(test_href_escaped)
{
	xmlNodePtr body;
	htmlDocPtr doc;
	char *out;

	doc = new_doc(&body);
	html_link(body, "/admin/runs?scenario=\"><script>x</script>", "runs");
	html_link(body, "/a?x=1&y=2 z", "l");
	out = dump(doc);
	/* libxml2 %-escapes the quote of a URI attribute (href) and writes
	 * < > & as entities: nothing ends the attribute early */
	ck_assert_ptr_nonnull(strstr(out,
	                             "<a href=\"/admin/runs?scenario=%22&gt;&lt;script&gt;x&lt;"
	                             "/script&gt;\">runs</a>"));
	ck_assert_ptr_nonnull(strstr(out, "<a href=\"/a?x=1&amp;y=2%20z\">l</a>"));
	ck_assert_ptr_null(strstr(out, "<script"));
	free(out);
}
END_TEST

/* ---- html.c: what it never creates ----------------------------------------- */

START_TEST(test_no_script_or_style_element)
{
	xmlNodePtr body, s1, s2, s3;
	htmlDocPtr doc;
	char *out;

	doc = new_doc(&body);
	s1 = html_el(body, "script", "alert(1)");
	s2 = html_el(body, "STYLE", "body{}");
	s3 = html_elc(body, "Script", "x", "y");
	ck_assert_str_eq((const char *)s1->name, "span");
	ck_assert_str_eq((const char *)s2->name, "span");
	ck_assert_str_eq((const char *)s3->name, "span");
	ck_assert_str_eq((const char *)html_el(body, "p", NULL)->name, "p");
	out = dump(doc);
	ck_assert_ptr_null(strcasestr(out, "<script"));
	ck_assert_ptr_null(strcasestr(out, "<style"));
	ck_assert_ptr_nonnull(strstr(out, "<span>alert(1)</span><span>body{}</span>"
	                                  "<span class=\"x\">y</span><p></p>"));
	free(out);
}
END_TEST

START_TEST(test_no_event_or_style_attr)
{
	xmlNodePtr body, el, ret;
	htmlDocPtr doc;
	char *out;

	doc = new_doc(&body);
	el = html_el(body, "div", "x");
	ret = html_attr(el, "onclick", "alert(1)");
	ck_assert_ptr_eq(ret, el);
	html_attr(el, "ONLOAD", "alert(2)");
	html_attr(el, "onMouseOver", "alert(3)");
	html_attr(el, "style", "color:red");
	html_attr(el, "Style", "color:blue");
	html_attr(el, "title", NULL);
	html_attr(el, "class", "ok");
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "onclick"));
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "ONLOAD"));
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "onMouseOver"));
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "style"));
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "Style"));
	ck_assert_ptr_null(xmlHasProp(el, BAD_CAST "title"));
	ck_assert_ptr_nonnull(xmlHasProp(el, BAD_CAST "class"));
	out = dump(doc);
	ck_assert_ptr_nonnull(strstr(out, "<div class=\"ok\">x</div>"));
	ck_assert_ptr_null(strcasestr(out, "alert"));
	ck_assert_ptr_null(strcasestr(out, "style=\""));
	free(out);
}
END_TEST

/* ---- html.c: document, serializer, UTF-8 ----------------------------------- */

START_TEST(test_doc_frame)
{
	xmlNodePtr body, root;
	htmlDocPtr doc;
	char *out;

	doc = html_doc_new("Runs & <things>", "/static/style.css", &body);
	root = xmlDocGetRootElement(doc);
	ck_assert_str_eq((const char *)root->name, "html");
	ck_assert_str_eq((const char *)body->name, "body");
	ck_assert_ptr_eq(body->parent, root);
	out = dump(doc);
	ck_assert_int_eq(strncmp(out, "<!DOCTYPE html>\n<html lang=\"en\"><head>", 38), 0);
	ck_assert_ptr_nonnull(strstr(out, "<title>Runs &amp; &lt;things&gt;</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<link rel=\"stylesheet\" href=\"/static/style.css\">"));
	ck_assert_ptr_nonnull(strstr(out, "<meta charset=\"utf-8\">"));
	/* the link is in the head, the body is empty and last */
	ck_assert_ptr_nonnull(strstr(out, "<link"));
	ck_assert(strstr(out, "<link") < strstr(out, "</head>"));
	ck_assert_ptr_nonnull(strstr(out, "</head><body></body></html>"));
	/* one doctype only: the serializer adds none of its own */
	ck_assert_ptr_null(strstr(out + 1, "<!DOCTYPE"));
	free(out);
}
END_TEST

START_TEST(test_serialize_prefix)
{
	xmlNodePtr body;
	htmlDocPtr doc;
	char *out = (char *)"sentinel";
	size_t len = 99;

	doc = new_doc(&body);
	html_el(body, "h1", "Hi");
	out = dump(doc);
	ck_assert_int_eq(strncmp(out, "<!DOCTYPE html>\n", 16), 0);
	ck_assert_int_eq(out[16], '<');
	free(out);

	/* a document without a root element: -1, *out NULL, *len 0 */
	doc = htmlNewDocNoDtD(NULL, NULL);
	ck_assert_ptr_nonnull(doc);
	out = (char *)"sentinel";
	ck_assert_int_eq(html_serialize(doc, &out, &len), -1);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 0);
	xmlFreeDoc(doc);
}
END_TEST

START_TEST(test_utf8_roundtrip)
{
	static const char text[] = "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 end";
	xmlNodePtr body, el;
	htmlDocPtr doc, parsed;
	char *out;

	doc = new_doc(&body);
	el = html_el(body, "p", text);
	html_attr(el, "id", "u");
	html_attr(el, "title", text);
	out = dump(doc);
	/* the bytes go out as they are, not as character references */
	ck_assert_ptr_nonnull(strstr(out, "<p id=\"u\" title=\"caf\xc3\xa9 \xe4\xb8\xad "
	                                  "\xf0\x9f\x98\x80 end\">caf\xc3\xa9 \xe4\xb8\xad "
	                                  "\xf0\x9f\x98\x80 end</p>"));
	ck_assert_ptr_null(strstr(out, "&#"));
	parsed = parse_back(out);
	assert_text(parsed, "u", text);
	assert_attr(parsed, "u", "title", text);
	xmlFreeDoc(parsed);
	free(out);
}
END_TEST

START_TEST(test_parse_back_same_text)
{
	static const char *texts[] = {
	    XSS_TAG,
	    XSS_ATTR,
	    "a & b && c; &amp; &lt; &#60; &unknown;",
	    "'single' \"double\" `back`",
	    "  leading and trailing spaces  ",
	    "line1\nline2\ttab",
	    "]]> <!-- not a comment --> <![CDATA[x]]>",
	};
	xmlNodePtr body, el, pre;
	htmlDocPtr doc, parsed;
	char *out, id[16];
	size_t i, n = sizeof(texts) / sizeof(texts[0]);

	doc = new_doc(&body);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "p%zu", i);
		el = html_el(body, "div", texts[i]);
		html_attr(el, "id", id);
	}
	/* nested: a cell holding a pre, as the run pages have */
	el = html_elc(body, "td", "input", NULL);
	html_attr(el, "id", "cell");
	pre = html_el(el, "pre", XSS_TAG);
	html_text(pre, " & ");
	html_text(pre, XSS_ATTR);
	html_elf(body, "p", "%s=%d", "n", 42);
	out = dump(doc);
	ck_assert_ptr_null(strstr(out, "<script"));
	ck_assert_ptr_null(strstr(out, "<img"));
	ck_assert_ptr_null(strstr(out, "<!--"));
	parsed = parse_back(out);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "p%zu", i);
		assert_text(parsed, id, texts[i]);
	}
	assert_text(parsed, "cell", XSS_TAG " & " XSS_ATTR);
	ck_assert_ptr_null(find_tag(xmlDocGetRootElement(parsed), "script"));
	ck_assert_ptr_null(find_tag(xmlDocGetRootElement(parsed), "img"));
	ck_assert_ptr_nonnull(strstr(out, "<p>n=42</p>"));
	xmlFreeDoc(parsed);
	free(out);
}
END_TEST

START_TEST(test_elf_truncates)
{
	xmlNodePtr body, el;
	htmlDocPtr doc;
	xmlChar *got;
	char big[5000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	doc = new_doc(&body);
	el = html_elf(body, "p", "%s", big);
	got = xmlNodeGetContent(el);
	/* at most 4 KiB including the terminator (html.h) */
	ck_assert_uint_eq(strlen((const char *)got), 4095);
	xmlFree(got);
	xmlFreeDoc(doc);
}
END_TEST

/* ---- form.c ---------------------------------------------------------------- */

START_TEST(test_form_basic)
{
	json_t *obj;

	expect_fields("a=1&b=two+words&c=%3Cx%3E",
	              (const char *const[]){"a", "1", "b", "two words", "c", "<x>", NULL});
	/* '+' and %XX in names too; %2B is a literal plus; single pass */
	expect_fields("first+name=Ana+%2B+Bo&%6Bey=%C3%A9%E4%B8%AD&p=%2541",
	              (const char *const[]){"first name", "Ana + Bo", "key", "\xc3\xa9\xe4\xb8\xad",
	                                    "p", "%41", NULL});

	/* only the n bytes given count */
	obj = json_object();
	ck_assert_int_eq(http_form_decode("a=1&b=2", 3, obj), 0);
	ck_assert_uint_eq(json_object_size(obj), 1);
	ck_assert_str_eq(field(obj, "a"), "1");
	json_decref(obj);
}
END_TEST

START_TEST(test_form_empty_values)
{
	/* the name ends at the first '=' */
	expect_fields("a=&b=&c=x=y", (const char *const[]){"a", "", "b", "", "c", "x=y", NULL});
	expect_fields("=v", (const char *const[]){"", "v", NULL});
}
END_TEST

START_TEST(test_form_missing_eq)
{
	expect_fields("flag&x=1&other+flag",
	              (const char *const[]){"flag", "", "x", "1", "other flag", "", NULL});
	/* empty fields are skipped */
	expect_fields("&&a=1&&&b=2&", (const char *const[]){"a", "1", "b", "2", NULL});
}
END_TEST

START_TEST(test_form_first_duplicate_wins)
{
	expect_fields("csrf=good&x=1&csrf=evil&csrf=",
	              (const char *const[]){"csrf", "good", "x", "1", NULL});
	/* same name after decoding */
	expect_fields("a+b=1&a%20b=2&a b=3", (const char *const[]){"a b", "1", NULL});
	/* a later duplicate is still checked: bad text anywhere is refused */
	decode_refused("a=1&a=%FF", 9);
}
END_TEST

START_TEST(test_form_nul_refused)
{
	static const char raw[] = "a=1\0b=2";

	decode_refused("a=%00", 5);
	decode_refused("a%00=1", 6);
	decode_refused("x=1&a=b%00c", 11);
	decode_refused("a=%C0%80", 8); /* overlong NUL */
	decode_refused(raw, sizeof(raw) - 1);
	/* %25 then "00" is the text "%00", not a NUL */
	expect_fields("a=%2500", (const char *const[]){"a", "%00", NULL});
}
END_TEST

START_TEST(test_form_invalid_utf8_refused)
{
	decode_refused("a=%FF", 5);
	decode_refused("%FF=1", 5);
	decode_refused("a=%C3", 5);           /* truncated sequence */
	decode_refused("a=%ED%A0%80", 11);    /* surrogate U+D800 */
	decode_refused("a=%F4%90%80%80", 14); /* above U+10FFFF */
	decode_refused("a=\xff", 3);          /* raw, not escaped */
	decode_refused("a=caf\xc3", 6);
	expect_fields("a=%C3%A9&b=caf\xc3\xa9&c=%F0%9F%98%80",
	              (const char *const[]){"a", "\xc3\xa9", "b", "caf\xc3\xa9", "c",
	                                    "\xf0\x9f\x98\x80", NULL});
}
END_TEST

START_TEST(test_form_truncated_escape)
{
	/* a '%' without two hex digits after it stays as it is (form.h) */
	expect_fields("a=%4&b=%&c=%zz&d=x%4&e=%4g&%4=n",
	              (const char *const[]){"a", "%4", "b", "%", "c", "%zz", "d", "x%4", "e", "%4g",
	                                    "%4", "n", NULL});
	/* the value is the last part of the text: "%4" ends the input */
	expect_fields("a=%4", (const char *const[]){"a", "%4", NULL});
}
END_TEST

START_TEST(test_form_long_values)
{
	enum { N = 200000 };
	char *text, *want;
	json_t *obj;
	size_t i;

	/* a plain value of N bytes */
	text = malloc(N + 3);
	ck_assert_ptr_nonnull(text);
	memcpy(text, "v=", 2);
	memset(text + 2, 'x', N);
	text[N + 2] = '\0';
	obj = decode_ok(text);
	ck_assert_uint_eq(strlen(field(obj, "v")), N);
	ck_assert_int_eq(memcmp(field(obj, "v"), text + 2, N), 0);
	json_decref(obj);
	free(text);

	/* N escapes %C3%A9 (é): 6N bytes in, 2N bytes out */
	text = malloc(6 * (size_t)N + 3);
	want = malloc(2 * (size_t)N + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(want);
	memcpy(text, "v=", 2);
	for (i = 0; i < N; i++) {
		memcpy(text + 2 + 6 * i, "%C3%A9", 6);
		memcpy(want + 2 * i, "\xc3\xa9", 2);
	}
	text[6 * (size_t)N + 2] = '\0';
	want[2 * (size_t)N] = '\0';
	obj = decode_ok(text);
	ck_assert_str_eq(field(obj, "v"), want);
	json_decref(obj);
	free(text);
	free(want);
}
END_TEST

START_TEST(test_form_empty_input)
{
	json_t *obj;
	char *dumped;

	obj = decode_ok("");
	dumped = json_dumps(obj, JSON_COMPACT);
	ck_assert_str_eq(dumped, "{}");
	free(dumped);
	json_decref(obj);

	/* NULL with no bytes: an empty query string */
	obj = json_object();
	ck_assert_int_eq(http_form_decode(NULL, 0, obj), 0);
	ck_assert_uint_eq(json_object_size(obj), 0);
	json_decref(obj);

	obj = decode_ok("&&&");
	ck_assert_uint_eq(json_object_size(obj), 0);
	json_decref(obj);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const html[] = {test_text_escaped,
	                             test_invisible_shown,
	                             test_attr_escaped,
	                             test_href_escaped,
	                             test_no_script_or_style_element,
	                             test_no_event_or_style_attr,
	                             test_doc_frame,
	                             test_serialize_prefix,
	                             test_utf8_roundtrip,
	                             test_parse_back_same_text,
	                             test_elf_truncates,
	                             NULL};
	const TTest *const form[] = {test_form_basic,
	                             test_form_empty_values,
	                             test_form_missing_eq,
	                             test_form_first_duplicate_wins,
	                             test_form_nul_refused,
	                             test_form_invalid_utf8_refused,
	                             test_form_truncated_escape,
	                             test_form_long_values,
	                             test_form_empty_input,
	                             NULL};
	Suite *s;

	s = suite_create("html");
	unit_tcase(s, "html", html);
	unit_tcase(s, "form", form);
	return s;
}
