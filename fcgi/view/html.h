#ifndef OLIVARES_FCGI_VIEW_HTML_H
#define OLIVARES_FCGI_VIEW_HTML_H
/**
 * HTML building for the admin view (fcgi/view/view.h), on libxml2's tree API and
 * HTML serializer: pages are trees of nodes, and every value goes in as a
 * text node or an attribute value, so the serializer escapes it by
 * construction (no string is ever pasted into markup). Nothing here
 * creates <script> or <style> elements or event-handler attributes.
 *
 * Nodes belong to their document: freeing the document (xmlFreeDoc, done
 * by html_serialize's caller through view_page_send) frees them all.
 * Allocation failures abort (model/alloc.h's policy).
 */
#include <stddef.h>

#include <libxml/HTMLtree.h>
#include <libxml/tree.h>

/** A new empty HTML document <html lang="en"> with a <head> holding
 * <meta charset="utf-8">, <title>title</title> and <link rel="stylesheet"
 * href="stylesheet">, and an empty <body>. *body receives the body node.
 * The caller owns the document (xmlFreeDoc). */
htmlDocPtr html_doc_new(const char *title, const char *stylesheet, xmlNodePtr *body);

/** Append a new element tag to parent, with text (may be NULL: none) as
 * its escaped text content. Returns the element. */
xmlNodePtr html_el(xmlNodePtr parent, const char *tag, const char *text);

/** html_el with the text built by printf-style fmt (at most 4 KiB). */
xmlNodePtr html_elf(xmlNodePtr parent, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Append a text node (escaped) to parent. */
void html_text(xmlNodePtr parent, const char *text);

/** Set attribute name to value (escaped by the serializer) on node; a
 * NULL value removes nothing and sets nothing. Returns node. */
xmlNodePtr html_attr(xmlNodePtr node, const char *name, const char *value);

/** Shorthand: element tag with class cls (may be NULL) and text. */
xmlNodePtr html_elc(xmlNodePtr parent, const char *tag, const char *cls, const char *text);

/** Append <a href="href">text</a>. */
xmlNodePtr html_link(xmlNodePtr parent, const char *href, const char *text);

/** Append <input type="type" name="name" value="value"> (value may be
 * NULL: no value attribute). */
xmlNodePtr html_input(xmlNodePtr parent, const char *type, const char *name, const char *value);

/**
 * Serialize doc as "<!DOCTYPE html>\n" followed by the HTML of its root
 * element, UTF-8. *out is malloc'd (caller frees) and NUL-terminated,
 * *len its length. Returns 0, -1 on a serializer failure (*out NULL).
 */
int html_serialize(htmlDocPtr doc, char **out, size_t *len);

#endif
