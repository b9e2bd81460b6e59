#ifndef OLIVARES_FCGI_EVIDENCE_KEY_H
#define OLIVARES_FCGI_EVIDENCE_KEY_H
/**
 * The server's evidence signing key (docs/evidence.md): an Ed25519 key
 * pair kept in the data dir, made at the first start.
 *
 *   <data_dir>/evidence-ed25519.pem      private key (PKCS#8 PEM), mode 0600
 *   <data_dir>/evidence-ed25519.pub.pem  public key (SubjectPublicKeyInfo PEM)
 *
 * The master loads it once before it forks the workers; they only read it.
 */
#include <stddef.h>

/** A loaded key: both PEM texts (malloc'ed) and its key id (hex SHA-256 of
 * the raw public key). */
struct http_evidence_key {
	char *private_pem;
	char *public_pem;
	char key_id[65];
};

/**
 * Load the key of data_dir into *k, making it first when there is none
 * (the directory too, mode 0700; the private key is written O_EXCL, so two
 * servers starting on one directory keep the same key). A private key
 * file that is not a regular file, that group or others may read, or that
 * is not an Ed25519 key is refused, never used nor replaced. The public
 * file is (re)written from the private key when missing or different.
 * Returns 0, or -1 with a one-line reason in why (n bytes); *k is then
 * zeroed.
 */
int http_evidence_key_load(const char *data_dir, struct http_evidence_key *k, char *why, size_t n);

/** Free what http_evidence_key_load loaded; *k zeroed. */
void http_evidence_key_free(struct http_evidence_key *k);

#endif
