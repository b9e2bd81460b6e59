#ifndef OLIVARES_RUNNER_GATEWAY_SECRETS_H
#define OLIVARES_RUNNER_GATEWAY_SECRETS_H
/**
 * Secrets for upstream hosts: the headers olivares-gateway-egress adds to
 * a request it forwards to an egress host ([runner] egress_secrets, the
 * operator's file; docs/gateway.md "Secrets for upstream hosts"). The
 * run spec carries the file's path only; the gateway opens it outside the
 * jail at its start and keeps the values in its memory, never in a trace,
 * a log line or a message.
 *
 * The file, read with inih:
 *   [host api.example.com]          a host of egress_allow, the scheme's
 *   header = Authorization: Bearer x   default port (80 or 443)
 *   [host 10.0.0.5:8080]            or host:port
 *   header = X-Api-Key: y           one or more a section
 * Refused, with the line named and never a value: a key but header, a
 * section but [host NAME] / [host NAME:PORT], a host:port that no item of
 * egress_allow covers, two sections for one host:port, a section without a
 * header, a header name that is not an HTTP token or one the gateway sets
 * itself (Host, Content-Length, the hop-by-hop ones), a name twice in a
 * section, an empty value or one with a control character but tab, and
 * what inih as built by Debian would read otherwise than it is written:
 * a line over RUNNER_GATEWAY_SECRETS_MAX_LINE bytes, a NUL byte, a line
 * that starts with a blank (a continuation), " ;" (an inline comment), a
 * section name over 49 bytes.
 */
#include <jansson.h>
#include <sys/types.h>

#include "runner/error.h"

/** The longest line of the file, in bytes (inih's 200-byte line). */
#define RUNNER_GATEWAY_SECRETS_MAX_LINE 198
/** At most this many [host] sections (as many as egress_allow items). */
#define RUNNER_GATEWAY_SECRETS_MAX_HOSTS 32
/** At most this many header lines in a section. */
#define RUNNER_GATEWAY_SECRETS_MAX_HEADERS 16
/** The largest file, in bytes. */
#define RUNNER_GATEWAY_SECRETS_MAX_FILE 65536

struct runner_gateway_secrets;

/**
 * Open path and read it into *out (caller frees with
 * runner_gateway_secrets_free). The file must be a regular file owned by
 * uid (the gateway's effective uid) or root, with no access for group or
 * others; egress_allow is the run's array of "host" / "host:port" (NULL:
 * none), which every section must fall in.
 *
 * Returns 0, or -1 with *err (RUNNER_E_SETUP) saying what is wrong with
 * path and at which line; *out is then NULL. No value of the file is ever
 * in the message.
 */
int runner_gateway_secrets_load(const char *path, json_t *egress_allow, uid_t uid,
                                struct runner_gateway_secrets **out, struct runner_error *err);

/** Free s and its values. NULL is ignored. */
void runner_gateway_secrets_free(struct runner_gateway_secrets *s);

/**
 * The headers for a request to scheme://host:port: the array of
 * [name, value] of the one section for it (a section without a port is
 * for the scheme's default one), borrowed from s; NULL when none is.
 */
json_t *runner_gateway_secrets_for(const struct runner_gateway_secrets *s, const char *scheme,
                                   const char *host, int port);

/**
 * The headers a forwarded request goes out with: headers (the agent's,
 * array of [name, value]) without those whose name, blanks around it
 * aside, is one of inject's in any case, then inject's. A new array
 * (caller json_decref); *names (when not NULL) a new array of inject's
 * names, for the trace.
 */
json_t *runner_gateway_secrets_apply(json_t *headers, json_t *inject, json_t **names);

/**
 * Mask in headers (an array of [name, value], changed in place) every
 * value that holds one of inject's values: what an upstream echoes of
 * an injected header stays out of the trace.
 */
void runner_gateway_secrets_mask(json_t *headers, json_t *inject);

/**
 * Whether egress_allow (an array of "host" / "host:port"; NULL: none)
 * allows scheme://host:port: an item with that port, or the bare host
 * when port is the scheme's default (80 for http, 443 for https).
 */
int runner_gateway_egress_allows(json_t *egress_allow, const char *scheme, const char *host,
                                 int port);

#endif
