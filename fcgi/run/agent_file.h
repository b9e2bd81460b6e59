#ifndef OLIVARES_FCGI_RUN_AGENT_FILE_H
#define OLIVARES_FCGI_RUN_AGENT_FILE_H
/**
 * The file side of an agent program, shared by the API (the agents
 * listing) and the executor (the sha256 of the program a run is about to
 * run): its SHA-256, its first bytes, and the probe that model/agent.h's
 * jail checks ask.
 */
#include <stddef.h>

/**
 * SHA-256 (OpenSSL EVP) of the file at path into hex (64 lower-case hex
 * and a NUL), read through one descriptor; *size (may be NULL) gets the
 * bytes hashed. Returns 0, or -1 with errno set (hex is then "").
 */
int http_agent_sha256_file(const char *path, char hex[65], long long *size);

/**
 * model_path_probe (model/agent.h) on this host: 1 with real the
 * realpath of host_path when it is a regular file every user may
 * execute, 0 otherwise. ctx is unused.
 */
int http_agent_probe(void *ctx, const char *host_path, char *real, size_t n);

#endif
