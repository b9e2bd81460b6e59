#ifndef OLIVARES_RUNNER_GATEWAY_INTERNAL_H
#define OLIVARES_RUNNER_GATEWAY_INTERNAL_H
/**
 * What the gateway's files share (runner/gateway.c, gateway_ca.c,
 * gateway_forward.c), not part of its API.
 */
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "runner/gateway.h"

/** A new EC P-256 key (caller EVP_PKEY_free), or NULL with *err filled. */
EVP_PKEY *runner_gateway_key_new(struct runner_error *err);

/**
 * A leaf certificate for host (a DNS name, an IPv4 address or a bracketed
 * IPv6 address, as struct runner_gateway_request spells it) with the
 * public half of key, signed by ca: subjectAltName DNS or IP, serverAuth,
 * valid as long as the CA. Caller X509_free; NULL with *err filled.
 */
X509 *runner_gateway_ca_issue(const struct runner_gateway_ca *ca, const char *host, EVP_PKEY *key,
                              struct runner_error *err);

#endif
