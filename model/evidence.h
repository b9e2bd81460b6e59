#ifndef OLIVARES_MODEL_EVIDENCE_H
#define OLIVARES_MODEL_EVIDENCE_H
/**
 * Signed, chained evidence (docs/evidence.md): the canonical form of a
 * record, the chain link that records its hash, and the signed bundle a
 * deployment system verifies offline. Pure computation: the only calls
 * out are OpenSSL's SHA-256 and Ed25519; keys come and go as PEM text,
 * never as files.
 *
 * Canonical form: jansson's json_dumps with JSON_SORT_KEYS | JSON_COMPACT
 * | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17): keys sorted bytewise, no
 * whitespace, every non-ASCII character as \uXXXX, numbers as jansson
 * prints what it holds (an integer stays an integer, a real is printed so
 * that it reads back the same double).
 *
 * A link: {"seq": N, "kind": "run"|"comparison"|"approval", "id": ID,
 * "prev": HEX64, "body_sha256": HEX64, "hash": HEX64}. prev is the hash of
 * the tenant's link seq - 1, or 64 zeros for seq 1. hash is the lower-case
 * hex SHA-256 of the bytes
 *     "olivares-evidence/1\n" SEQ "\n" KIND "\n" ID "\n" PREV "\n" BODY "\n"
 * with SEQ in decimal without leading zeros and BODY the body_sha256.
 *
 * A bundle: {"format": "olivares-evidence/1", "comparison": {...},
 * "runs": [every run the comparison names], "outputs": {RUN_ID: [...]},
 * "suite": {"name","version","document"} | null,
 * "links": [...], "key_id": HEX64, "signature": BASE64}. key_id is the
 * SHA-256 of the raw 32-byte Ed25519 public key; signature is Ed25519 over
 * the canonical form of the bundle without its "signature" member. The
 * bundle's file is its canonical form, optionally followed by one "\n".
 */
#include <jansson.h>
#include <stddef.h>

#define MODEL_EVIDENCE_FORMAT "olivares-evidence/1"
#define MODEL_EVIDENCE_HEX_LEN 64

/**
 * The canonical form of v (see above), NUL-terminated, malloc'ed (caller
 * frees). Returns NULL only when v is NULL.
 */
char *model_evidence_canonical(const json_t *v);

/** Lower-case hex SHA-256 of n bytes at p into out (65 bytes). */
void model_evidence_sha256_hex(const void *p, size_t n, char out[65]);

/**
 * The hash of a link from its parts (see above) into out (65 bytes).
 * Returns 0, or -1 when seq < 1, kind is not one of the three kinds, id
 * is empty or holds a "\n", or prev/body_sha256 are not 64 lower-case hex
 * digits.
 */
int model_evidence_link_hash(long long seq, const char *kind, const char *id, const char *prev,
                             const char *body_sha256, char out[65]);

/**
 * A new link object for the record id of kind with the canonical body
 * body (its SHA-256 is body_sha256) after prev. Returns a new reference,
 * or NULL on the errors of model_evidence_link_hash.
 */
json_t *model_evidence_link(long long seq, const char *kind, const char *id, const char *prev,
                            const char *body);

/**
 * The parts of an API run object that its evidence covers (the fields
 * fixed once the run has ended), a new object. NULL when run is not an
 * object.
 */
json_t *model_evidence_run_record(const json_t *run);

/** As model_evidence_run_record, for a settled API comparison object. */
json_t *model_evidence_comparison_record(const json_t *comparison);

/**
 * The body of a run's link: {"run": record, "outputs": outputs}, where
 * record is model_evidence_run_record's and outputs the run's outputs
 * array (NULL is taken as []). A new reference.
 */
json_t *model_evidence_run_body(const json_t *record, const json_t *outputs);

/**
 * A new Ed25519 key pair as PEM text (PKCS#8 private key, SubjectPublic-
 * KeyInfo public key), both malloc'ed (caller frees). Returns 0, or -1
 * when OpenSSL fails (nothing is set).
 */
int model_evidence_keygen(char **private_pem, char **public_pem);

/**
 * The key id (hex SHA-256 of the raw public key) of a PEM key, public or
 * private, into out (65 bytes). Returns 0, or -1 when pem is not an
 * Ed25519 key.
 */
int model_evidence_key_id(const char *pem, char out[65]);

/**
 * The public PEM of a private PEM key, malloc'ed. NULL when private_pem is
 * not an Ed25519 private key.
 */
char *model_evidence_public_pem(const char *private_pem);

/**
 * Sign bundle in place: sets "format", "key_id" (of private_pem) and then
 * "signature" over the canonical form without "signature". Returns 0, or
 * -1 when bundle is not an object or the key is not an Ed25519 private
 * key (bundle then unchanged but for a removed "signature").
 */
int model_evidence_sign(json_t *bundle, const char *private_pem);

/**
 * Verify the n bytes of a bundle file against public_pem: canonical form,
 * format, key id, signature, every record's body hash against its link,
 * and the chain of links (consecutive seqs, each prev the hash before,
 * seq 1's prev 64 zeros, each hash recomputed), and every run the
 * comparison names in the bundle. Returns 0 when all hold,
 * else -1 with why (n bytes) naming the first thing that does not hold,
 * e.g. "signature does not verify", "link 3: prev does not match link
 * 2's hash", "run <id>: body hash mismatch". On success *out (may be
 * NULL) gets a new reference to the parsed bundle.
 */
int model_evidence_verify(const char *text, size_t n, const char *public_pem, json_t **out,
                          char *why, size_t whylen);

#endif
