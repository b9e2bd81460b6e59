#ifndef OLIVARES_FCGI_HTTP_PROM_H
#define OLIVARES_FCGI_HTTP_PROM_H
/**
 * The Prometheus text exposition format, version 0.0.4 (what GET /metrics
 * answers, docs/metrics.md): "# HELP" and "# TYPE" lines, then samples
 * "name{label="value",...} value". Pure: it only appends to a buffer.
 *
 * Escaping (the format's rules): in a label value a backslash, a double
 * quote and a line feed become \\, \" and \n; in a HELP text a backslash
 * and a line feed. Values are printed as Prometheus reads floats: an
 * integer below 2^53 as digits, others with 15 significant digits, +Inf,
 * -Inf and NaN by name.
 */
#include <stddef.h>

#include "model/buf.h"

/** The text being built. overflow is set (and stays set) when an append
 * crossed the buffer's cap: the text is then incomplete and must not be
 * served. */
struct http_prom {
	struct model_buf buf;
	int overflow;
};

/** An empty text of at most max bytes. Release with http_prom_release. */
void http_prom_init(struct http_prom *p, size_t max);
/** Free the text. */
void http_prom_release(struct http_prom *p);

/** Append the HELP and TYPE lines of the family name (type: "counter",
 * "gauge", "histogram"); help is escaped. */
void http_prom_family(struct http_prom *p, const char *name, const char *type, const char *help);

/**
 * Append one sample: name, then the labels (labels[0..2n) as name, value
 * pairs; values escaped; a pair whose value is NULL is left out), then
 * value. name and the label names are the caller's constants.
 */
void http_prom_sample(struct http_prom *p, const char *name, const char *const *labels, size_t n,
                      double value);

/** Append the label value v escaped (the rule above) to p. */
void http_prom_escape(struct http_prom *p, const char *v);

#endif
