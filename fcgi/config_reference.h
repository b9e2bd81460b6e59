#ifndef OLIVARES_FCGI_CONFIG_REFERENCE_H
#define OLIVARES_FCGI_CONFIG_REFERENCE_H
/**
 * The reference of the configuration's keys, generated from the table of
 * fcgi/config.c (http_config_sections, http_config_keys, declared in
 * fcgi/config.h), so that it is written once. Two documents hold it between two marker lines, with
 * hand-written prose around: docs/configuration.md (Markdown) and
 * docs/man/olivares.conf.5 (roff, man(7) macros). `make
 * update-config-reference` rewrites the part between the markers
 * (fcgi/config-reference-gen); tests/unit/test_config fails when a
 * committed document differs from what the table generates.
 */
#include <stdio.h>

enum http_config_reference_format {
	HTTP_CONFIG_REFERENCE_MARKDOWN, /* one heading and one table per section */
	HTTP_CONFIG_REFERENCE_MAN,      /* one .SS per section, one .TP per key */
};

/**
 * Write the reference in format to f: every section in the table's order,
 * its help, then each of its keys (value, default, help). Returns 0, or -1
 * when writing to f failed.
 */
int http_config_reference_write(FILE *f, enum http_config_reference_format format);

/**
 * doc, a whole document in format, with the lines from its BEGIN marker
 * to its END marker replaced by those markers around the reference that
 * http_config_reference_write writes. *out is allocated (the caller frees
 * it). Returns 0, or -1 (*out NULL) when doc lacks either marker line or
 * memory is short.
 */
int http_config_reference_splice(const char *doc, enum http_config_reference_format format,
                                 char **out);

#endif
