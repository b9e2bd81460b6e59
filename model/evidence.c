/*
 * Signed, chained evidence: canonical form, links, bundles (model/evidence.h).
 */
#include "model/evidence.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"

#define CANON_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17))

static const char zeros[] = "0000000000000000000000000000000000000000000000000000000000000000";

/* The run fields fixed once the run has ended; what can still change
 * (its recording, the comparison it joins, the runner set) stays out. */
static const char *const run_fields[] = {"id",
                                         "kind",
                                         "scenario_id",
                                         "scenario_version",
                                         "scenario_digest",
                                         "variant",
                                         "status",
                                         "backend",
                                         "isolated",
                                         "destroyed",
                                         "steps_total",
                                         "steps_ok",
                                         "steps_error",
                                         "suite",
                                         "scored",
                                         "score",
                                         "passed",
                                         "reason",
                                         "output_digest",
                                         "started_at",
                                         "finished_at",
                                         "created_by",
                                         "score_details",
                                         "session_id",
                                         "divergence",
                                         "agent",
                                         "mocks_digest",
                                         "suite_version",
                                         NULL};

static const char *const comparison_fields[] = {
    "id",         "scenario_id", "scenario_version", "suite",  "tolerance",       "baseline",
    "candidate",  "delta",       "verdict",          "reason", "differing_steps", "decided_by",
    "created_at", "stats",       "repeats",          "runs",   "pass_k",          "flaky_steps",
    NULL};

char *model_evidence_canonical(const json_t *v)
{
	char *s;

	if (!v)
		return NULL;
	s = json_dumps(v, CANON_FLAGS | JSON_ENCODE_ANY);
	if (!s)
		abort(); /* jansson fails only on allocation */
	return s;
}

void model_evidence_sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	int i;

	if (!EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) || len != 32)
		abort();
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int is_hex64(const char *s)
{
	size_t i;

	if (!s || strlen(s) != MODEL_EVIDENCE_HEX_LEN)
		return 0;
	for (i = 0; i < MODEL_EVIDENCE_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int is_kind(const char *k)
{
	return k && (strcmp(k, "run") == 0 || strcmp(k, "comparison") == 0 ||
	             strcmp(k, "approval") == 0);
}

int model_evidence_link_hash(long long seq, const char *kind, const char *id, const char *prev,
                             const char *body_sha256, char out[65])
{
	char *text;
	int n;

	if (seq < 1 || !is_kind(kind) || !id || !id[0] || strchr(id, '\n') || !is_hex64(prev) ||
	    !is_hex64(body_sha256))
		return -1;
	n = snprintf(NULL, 0, "%s\n%lld\n%s\n%s\n%s\n%s\n", MODEL_EVIDENCE_FORMAT, seq, kind, id,
	             prev, body_sha256);
	text = model_xmalloc((size_t)n + 1);
	snprintf(text, (size_t)n + 1, "%s\n%lld\n%s\n%s\n%s\n%s\n", MODEL_EVIDENCE_FORMAT, seq,
	         kind, id, prev, body_sha256);
	model_evidence_sha256_hex(text, (size_t)n, out);
	free(text);
	return 0;
}

json_t *model_evidence_link(long long seq, const char *kind, const char *id, const char *prev,
                            const char *body)
{
	char body_sha[65], hash[65];

	if (!body)
		return NULL;
	model_evidence_sha256_hex(body, strlen(body), body_sha);
	if (model_evidence_link_hash(seq, kind, id, prev, body_sha, hash))
		return NULL;
	return json_pack("{s:I,s:s,s:s,s:s,s:s,s:s}", "seq", (json_int_t)seq, "kind", kind, "id",
	                 id, "prev", prev, "body_sha256", body_sha, "hash", hash);
}

static json_t *pick(const json_t *obj, const char *const fields[])
{
	json_t *out, *v;
	size_t i;

	if (!json_is_object(obj))
		return NULL;
	out = json_object();
	for (i = 0; fields[i]; i++) {
		v = json_object_get(obj, fields[i]);
		if (v)
			json_object_set(out, fields[i], v);
	}
	return out;
}

json_t *model_evidence_run_record(const json_t *run)
{
	return pick(run, run_fields);
}

json_t *model_evidence_comparison_record(const json_t *comparison)
{
	return pick(comparison, comparison_fields);
}

json_t *model_evidence_run_body(const json_t *record, const json_t *outputs)
{
	return json_pack("{s:O,s:O}", "run", record, "outputs",
	                 outputs ? (json_t *)outputs : json_array());
}

/* ---- keys ---------------------------------------------------------------- */

static char *bio_text(BIO *b)
{
	char *p = NULL;
	long n = BIO_get_mem_data(b, &p);

	if (n < 0)
		return NULL;
	return model_xmemdup(p, (size_t)n);
}

int model_evidence_keygen(char **private_pem, char **public_pem)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *k = NULL;
	BIO *priv = BIO_new(BIO_s_mem()), *pub = BIO_new(BIO_s_mem());
	int rc = -1;

	*private_pem = NULL;
	*public_pem = NULL;
	if (!ctx || !priv || !pub || EVP_PKEY_keygen_init(ctx) <= 0 ||
	    EVP_PKEY_keygen(ctx, &k) <= 0)
		goto out;
	if (!PEM_write_bio_PrivateKey(priv, k, NULL, NULL, 0, NULL, NULL) ||
	    !PEM_write_bio_PUBKEY(pub, k))
		goto out;
	*private_pem = bio_text(priv);
	*public_pem = bio_text(pub);
	rc = 0;
out:
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(ctx);
	BIO_free(priv);
	BIO_free(pub);
	return rc;
}

/* An Ed25519 key from PEM text: private when want_private, else a public
 * key, or the public half of a private one. NULL when it is neither. */
static EVP_PKEY *pem_key(const char *pem, int want_private)
{
	BIO *b;
	EVP_PKEY *k = NULL;

	if (!pem)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	if (!b)
		return NULL;
	k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	if (!k && !want_private) {
		(void)BIO_reset(b);
		k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	}
	BIO_free(b);
	if (k && EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		k = NULL;
	}
	return k;
}

static int key_id_of(EVP_PKEY *k, char out[65])
{
	unsigned char raw[32];
	size_t n = sizeof raw;

	if (EVP_PKEY_get_raw_public_key(k, raw, &n) != 1 || n != sizeof raw)
		return -1;
	model_evidence_sha256_hex(raw, n, out);
	return 0;
}

int model_evidence_key_id(const char *pem, char out[65])
{
	EVP_PKEY *k = pem_key(pem, 0);
	int rc;

	if (!k)
		return -1;
	rc = key_id_of(k, out);
	EVP_PKEY_free(k);
	return rc;
}

char *model_evidence_public_pem(const char *private_pem)
{
	EVP_PKEY *k = pem_key(private_pem, 1);
	BIO *b;
	char *s = NULL;

	if (!k)
		return NULL;
	b = BIO_new(BIO_s_mem());
	if (b && PEM_write_bio_PUBKEY(b, k))
		s = bio_text(b);
	BIO_free(b);
	EVP_PKEY_free(k);
	return s;
}

/* ---- signing --------------------------------------------------------------- */

int model_evidence_sign(json_t *bundle, const char *private_pem)
{
	EVP_PKEY *k;
	EVP_MD_CTX *md = NULL;
	unsigned char sig[64];
	char b64[4 * ((sizeof sig + 2) / 3) + 1], kid[65];
	size_t siglen = sizeof sig;
	char *canon = NULL;
	int rc = -1;

	if (!json_is_object(bundle))
		return -1;
	json_object_del(bundle, "signature");
	k = pem_key(private_pem, 1);
	if (!k || key_id_of(k, kid))
		goto out;
	json_object_set_new(bundle, "format", json_string(MODEL_EVIDENCE_FORMAT));
	json_object_set_new(bundle, "key_id", json_string(kid));
	canon = model_evidence_canonical(bundle);
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)canon, strlen(canon)) != 1 ||
	    siglen != sizeof sig)
		goto out;
	EVP_EncodeBlock((unsigned char *)b64, sig, (int)siglen);
	json_object_set_new(bundle, "signature", json_string(b64));
	rc = 0;
out:
	free(canon);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	return rc;
}

/* ---- verification ------------------------------------------------------------ */

static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (why && n) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int signature_ok(const json_t *bundle, EVP_PKEY *k)
{
	const char *b64 = json_string_value(json_object_get(bundle, "signature"));
	unsigned char sig[80];
	json_t *copy;
	char *canon;
	EVP_MD_CTX *md;
	size_t len;
	int n, ok = 0;

	/* an Ed25519 signature is 64 bytes: 88 base64 characters, two of
	 * them padding */
	if (!b64 || strlen(b64) != 88 || b64[86] != '=' || b64[87] != '=')
		return 0;
	n = EVP_DecodeBlock(sig, (const unsigned char *)b64, 88);
	if (n != 66)
		return 0;
	len = 64;
	copy = json_deep_copy(bundle);
	json_object_del(copy, "signature");
	canon = model_evidence_canonical(copy);
	json_decref(copy);
	md = EVP_MD_CTX_new();
	if (md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, k) == 1 &&
	    EVP_DigestVerify(md, sig, len, (const unsigned char *)canon, strlen(canon)) == 1)
		ok = 1;
	EVP_MD_CTX_free(md);
	free(canon);
	return ok;
}

/* The chain of links: every hash recomputed, seqs consecutive, each prev
 * the hash of the link before it (64 zeros before seq 1). */
static int chain_ok(const json_t *links, char *why, size_t n)
{
	const json_t *l;
	const char *prev_hash = NULL;
	long long seq, prev_seq = 0;
	char h[65];
	size_t i;

	if (!json_is_array(links) || json_array_size(links) == 0)
		return fail(why, n, "links: not a non-empty array");
	json_array_foreach(links, i, l)
	{
		const char *kind = json_string_value(json_object_get(l, "kind"));
		const char *id = json_string_value(json_object_get(l, "id"));
		const char *prev = json_string_value(json_object_get(l, "prev"));
		const char *body = json_string_value(json_object_get(l, "body_sha256"));
		const char *hash = json_string_value(json_object_get(l, "hash"));

		if (!json_is_integer(json_object_get(l, "seq")))
			return fail(why, n, "links[%zu]: no integer seq", i);
		seq = (long long)json_integer_value(json_object_get(l, "seq"));
		if (model_evidence_link_hash(seq, kind, id, prev, body, h) || !hash)
			return fail(why, n, "link %lld: malformed", seq);
		if (strcmp(h, hash) != 0)
			return fail(why, n, "link %lld: hash does not match its contents", seq);
		if (i > 0 && seq != prev_seq + 1)
			return fail(why, n,
			            "link %lld: seq does not follow link %lld (a link is missing)",
			            seq, prev_seq);
		if (i > 0 && strcmp(prev, prev_hash) != 0)
			return fail(why, n, "link %lld: prev does not match link %lld's hash", seq,
			            prev_seq);
		if (seq == 1 && strcmp(prev, zeros) != 0)
			return fail(why, n, "link 1: prev is not 64 zeros");
		prev_seq = seq;
		prev_hash = hash;
	}
	return 0;
}

static const json_t *find_link(const json_t *links, const char *kind, const char *id)
{
	const json_t *l;
	size_t i;

	json_array_foreach(links, i, l)
	{
		if (strcmp(json_string_value(json_object_get(l, "kind")), kind) == 0 &&
		    strcmp(json_string_value(json_object_get(l, "id")), id) == 0)
			return l;
	}
	return NULL;
}

/* The record body's hash against the link of kind and id. */
static int body_ok(const json_t *links, const char *kind, const char *id, const json_t *body,
                   char *why, size_t n)
{
	const json_t *l = find_link(links, kind, id);
	char *canon, h[65];

	if (!l)
		return fail(why, n, "%s %s: no link in the chain", kind, id);
	canon = model_evidence_canonical(body);
	model_evidence_sha256_hex(canon, strlen(canon), h);
	free(canon);
	if (strcmp(h, json_string_value(json_object_get(l, "body_sha256"))) != 0)
		return fail(why, n, "%s %s: body hash mismatch", kind, id);
	return 0;
}

static int run_held(const json_t *runs, const char *id)
{
	const json_t *r;
	size_t i;

	json_array_foreach(runs, i, r)
	{
		if (strcmp(json_string_value(json_object_get(r, "id")) ?: "", id) == 0)
			return 1;
	}
	return 0;
}

/* Every run the comparison names (each side's first, and every repeat's
 * when it lists them) is in the bundle: a bundle that leaves one out
 * shows a verdict without all the runs it rests on. */
static int named_runs_held(const json_t *cmp, const json_t *runs, char *why, size_t n)
{
	static const char *const sides[] = {"baseline", "candidate"};
	const json_t *ids, *v;
	const char *id;
	size_t s, i;

	for (s = 0; s < 2; s++) {
		id = json_string_value(json_object_get(json_object_get(cmp, sides[s]), "run_id"));
		if (id && !run_held(runs, id))
			return fail(why, n, "%s run %s: not in the bundle", sides[s], id);
		ids = json_object_get(json_object_get(cmp, "runs"), sides[s]);
		json_array_foreach(ids, i, v)
		{
			id = json_string_value(v);
			if (id && !run_held(runs, id))
				return fail(why, n, "%s run %s (repeat %zu): not in the bundle",
				            sides[s], id, i);
		}
	}
	return 0;
}

static int records_ok(const json_t *b, char *why, size_t n)
{
	const json_t *links = json_object_get(b, "links"), *cmp = json_object_get(b, "comparison");
	const json_t *runs = json_object_get(b, "runs"), *outputs = json_object_get(b, "outputs");
	const json_t *r, *o;
	const char *id;
	json_t *body;
	size_t i;
	int rc;

	id = json_string_value(json_object_get(cmp, "id"));
	if (!json_is_object(cmp) || !id || !id[0])
		return fail(why, n, "comparison: missing or without an id");
	if (body_ok(links, "comparison", id, cmp, why, n))
		return -1;
	if (!json_is_array(runs) || !json_is_object(outputs))
		return fail(why, n, "runs or outputs: missing");
	json_array_foreach(runs, i, r)
	{
		id = json_string_value(json_object_get(r, "id"));
		if (!id || !id[0])
			return fail(why, n, "runs[%zu]: no id", i);
		o = json_object_get(outputs, id);
		if (!json_is_array(o))
			return fail(why, n, "run %s: no outputs", id);
		body = model_evidence_run_body(r, o);
		rc = body_ok(links, "run", id, body, why, n);
		json_decref(body);
		if (rc)
			return -1;
	}
	if (json_object_size(outputs) != json_array_size(runs))
		return fail(why, n, "outputs: entries for runs the bundle does not hold");
	return named_runs_held(cmp, runs, why, n);
}

int model_evidence_verify(const char *text, size_t n, const char *public_pem, json_t **out,
                          char *why, size_t whylen)
{
	json_t *b = NULL;
	json_error_t jerr;
	EVP_PKEY *k = NULL;
	char *canon = NULL, kid[65];
	const char *fmt, *bkid;
	size_t clen;
	int rc = -1;

	if (out)
		*out = NULL;
	k = pem_key(public_pem, 0);
	if (!k || key_id_of(k, kid)) {
		fail(why, whylen, "the key is not an Ed25519 key (PEM)");
		goto out;
	}
	b = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(b)) {
		fail(why, whylen, "bundle is not a JSON object: %s", b ? "other JSON" : jerr.text);
		goto out;
	}
	/* the file is its canonical form: a byte changed that JSON would read
	 * back the same (an escape's hex case, a space) still fails */
	canon = model_evidence_canonical(b);
	clen = strlen(canon);
	if (!(n == clen || (n == clen + 1 && text[clen] == '\n')) || memcmp(canon, text, clen)) {
		fail(why, whylen, "bundle is not in canonical form");
		goto out;
	}
	fmt = json_string_value(json_object_get(b, "format"));
	if (!fmt || strcmp(fmt, MODEL_EVIDENCE_FORMAT) != 0) {
		fail(why, whylen, "format is not %s", MODEL_EVIDENCE_FORMAT);
		goto out;
	}
	bkid = json_string_value(json_object_get(b, "key_id"));
	if (!bkid || strcmp(bkid, kid) != 0) {
		fail(why, whylen, "bundle is signed by key %s, not by the given key %s",
		     bkid ? bkid : "(none)", kid);
		goto out;
	}
	if (chain_ok(json_object_get(b, "links"), why, whylen) || records_ok(b, why, whylen))
		goto out;
	if (!signature_ok(b, k)) {
		fail(why, whylen, "signature does not verify");
		goto out;
	}
	rc = 0;
	if (out)
		*out = json_incref(b);
out:
	free(canon);
	json_decref(b);
	EVP_PKEY_free(k);
	return rc;
}
