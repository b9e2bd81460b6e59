/* HTML building on libxml2's tree API (fcgi/view/html.h). */
#include "fcgi/view/html.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/xmlIO.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

/* The document type the serializer does not write itself: the document
 * has no DTD node (htmlNewDocNoDtD), so the HTML5 doctype goes in front. */
#define HTML_DOCTYPE "<!DOCTYPE html>\n"

/* libxml2 returns NULL when it runs out of memory; the project's policy
 * (model/alloc.h) is to abort. */
static void *must(void *p)
{
	if (!p) {
		fputs("olivares: libxml2 allocation failed\n", stderr);
		abort();
	}
	return p;
}

/* Elements this module never creates (html.h): scripts and inline styles. */
static int tag_forbidden(const char *tag)
{
	return strcasecmp(tag, "script") == 0 || strcasecmp(tag, "style") == 0;
}

/* Attributes this module never sets: event handlers (on*) and inline
 * style. */
static int attr_forbidden(const char *name)
{
	return strncasecmp(name, "on", 2) == 0 || strcasecmp(name, "style") == 0;
}

htmlDocPtr html_doc_new(const char *title, const char *stylesheet, xmlNodePtr *body)
{
	htmlDocPtr doc;
	xmlNodePtr root, head, link;

	doc = must(htmlNewDocNoDtD(NULL, NULL));
	root = must(xmlNewDocNode(doc, NULL, BAD_CAST "html", NULL));
	xmlDocSetRootElement(doc, root);
	html_attr(root, "lang", "en");
	head = html_el(root, "head", NULL);
	html_attr(html_el(head, "meta", NULL), "charset", "utf-8");
	html_el(head, "title", title);
	link = html_el(head, "link", NULL);
	html_attr(link, "rel", "stylesheet");
	html_attr(link, "href", stylesheet);
	*body = html_el(root, "body", NULL);
	return doc;
}

xmlNodePtr html_el(xmlNodePtr parent, const char *tag, const char *text)
{
	xmlNodePtr el;

	if (tag_forbidden(tag))
		tag = "span";
	el = must(xmlNewDocNode(parent->doc, NULL, BAD_CAST tag, NULL));
	xmlAddChild(parent, el);
	if (text)
		html_text(el, text);
	return el;
}

xmlNodePtr html_elf(xmlNodePtr parent, const char *tag, const char *fmt, ...)
{
	char text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return html_el(parent, tag, text);
}

/*
 * text with every invisible code point (and any byte that is not UTF-8)
 * written out as "\uXXXX" ("\xNN"), so that it shows: a malloc'd copy, or
 * NULL when text has none (the common case: no copy).
 */
static char *visible(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	struct model_buf out;
	char *copy;
	size_t i, len, n;
	long c;

	n = strlen(text);
	for (i = 0; s[i]; i += len) {
		c = model_text_utf8_at(s + i, n - i, &len);
		if (c < 0 || model_text_invisible((unsigned long)c))
			break;
	}
	if (!s[i])
		return NULL;
	/* each replaced byte becomes at most 6 ("\\u2066" for 3 bytes) */
	model_buf_init(&out, 6 * n);
	for (i = 0; s[i]; i += len) {
		c = model_text_utf8_at(s + i, n - i, &len);
		if (c >= 0 && !model_text_invisible((unsigned long)c))
			model_buf_must_fit(model_buf_add(&out, s + i, len));
		else if (c < 0)
			model_buf_must_fit(model_buf_printf(&out, "\\x%02X", s[i]));
		else
			model_buf_must_fit(model_buf_printf(&out, "\\u%04lX", (unsigned long)c));
	}
	copy = model_buf_detach(&out, NULL);
	model_buf_release(&out);
	return copy;
}

void html_text(xmlNodePtr parent, const char *text)
{
	char *shown = visible(text);

	/* xmlNewDocText copies the bytes as they are (no entity parsing, unlike
	 * xmlNewChild's content): the serializer escapes them */
	xmlAddChild(parent, must(xmlNewDocText(parent->doc, BAD_CAST(shown ? shown : text))));
	free(shown);
}

xmlNodePtr html_attr(xmlNodePtr node, const char *name, const char *value)
{
	char *shown;

	if (!value || attr_forbidden(name))
		return node;
	shown = visible(value);
	/* xmlSetProp stores value as a text node: escaped on output */
	must(xmlSetProp(node, BAD_CAST name, BAD_CAST(shown ? shown : value)));
	free(shown);
	return node;
}

xmlNodePtr html_elc(xmlNodePtr parent, const char *tag, const char *cls, const char *text)
{
	return html_attr(html_el(parent, tag, text), "class", cls);
}

xmlNodePtr html_link(xmlNodePtr parent, const char *href, const char *text)
{
	return html_attr(html_el(parent, "a", text), "href", href);
}

xmlNodePtr html_input(xmlNodePtr parent, const char *type, const char *name, const char *value)
{
	xmlNodePtr in;

	in = html_el(parent, "input", NULL);
	html_attr(in, "type", type);
	html_attr(in, "name", name);
	html_attr(in, "value", value);
	return in;
}

int html_serialize(htmlDocPtr doc, char **out, size_t *len)
{
	xmlOutputBufferPtr buf;
	xmlNodePtr root;
	const xmlChar *content;
	size_t n, dl = strlen(HTML_DOCTYPE);
	int ret = -1;

	*out = NULL;
	*len = 0;
	root = xmlDocGetRootElement(doc);
	if (!root)
		return -1;
	/* no encoder: the tree's UTF-8 is written as is */
	buf = must(xmlAllocOutputBuffer(NULL));
	/* format 0: no whitespace is added, so text content reads back exactly */
	htmlNodeDumpFormatOutput(buf, doc, root, "UTF-8", 0);
	if (xmlOutputBufferFlush(buf) < 0 || buf->error)
		goto out;
	content = xmlOutputBufferGetContent(buf);
	n = xmlOutputBufferGetSize(buf);
	if (!content)
		goto out;
	*out = model_xmalloc(dl + n + 1);
	memcpy(*out, HTML_DOCTYPE, dl);
	memcpy(*out + dl, content, n);
	(*out)[dl + n] = '\0';
	*len = dl + n;
	ret = 0;
out:
	xmlOutputBufferClose(buf);
	return ret;
}
