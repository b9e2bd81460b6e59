/*
 * The run's CA and the leaf certificates it signs (runner/gateway.h), with
 * OpenSSL 3: EC P-256 keys, X.509 v3 with the extensions that strict
 * verifiers (Python's ssl with VERIFY_X509_STRICT, Go) require: key
 * identifiers, critical basic constraints and key usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "model/alloc.h"
#include "runner/gateway_internal.h"

/* The CA and its leaves are valid from an hour ago (a clock a little
 * behind in the jail) for a week: a run is far shorter. */
#define CA_NOT_BEFORE_S (-3600L)
#define CA_VALID_S (7L * 24 * 3600)

struct runner_gateway_ca {
	EVP_PKEY *key;
	X509 *cert;
};

/* err filled with what failed and OpenSSL's first queued reason. */
static int ssl_fail(struct runner_error *err, const char *what)
{
	unsigned long e;
	char buf[256];

	e = ERR_get_error();
	if (e == 0)
		snprintf(buf, sizeof(buf), "no reason given");
	else
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return runner_error_set(err, RUNNER_E_INTERNAL, "gateway CA: %s: %s", what, buf);
}

int runner_gateway_openssl_init(struct runner_error *err)
{
	char why[256];

	/* Reading and applying the configuration file is about 0.3 ms of a
	 * process that lives one run (bench/RESULTS.md, bench/gateway). */
	if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL) == 1)
		return 0;
	ERR_error_string_n(ERR_get_error(), why, sizeof(why));
	ERR_clear_error();
	return runner_error_set(err, RUNNER_E_INTERNAL, "OpenSSL cannot start: %s", why);
}

EVP_PKEY *runner_gateway_key_new(struct runner_error *err)
{
	EVP_PKEY *key;

	key = EVP_EC_gen("P-256");
	if (key == NULL)
		ssl_fail(err, "EC P-256 key");
	return key;
}

/* A random positive 64-bit serial. */
static int set_serial(X509 *x)
{
	unsigned char raw[8];
	BIGNUM *bn;
	int rc;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	raw[0] &= 0x7f;
	raw[0] |= 0x01; /* never zero, never negative */
	bn = BN_bin2bn(raw, sizeof(raw), NULL);
	if (bn == NULL)
		return -1;
	rc = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL ? 0 : -1;
	BN_free(bn);
	return rc;
}

/* Add one extension given in OpenSSL's config syntax, issuer and subject
 * as set in ctx. */
static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
	X509_EXTENSION *ext;
	int rc;

	ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
	if (ext == NULL)
		return -1;
	rc = X509_add_ext(x, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return rc;
}

/* The fields every certificate of the gateway has: v3, serial, validity,
 * subject CN, public key. */
static int cert_base(X509 *x, const char *cn, EVP_PKEY *pub)
{
	X509_NAME *name;

	if (X509_set_version(x, X509_VERSION_3) != 1 || set_serial(x) != 0)
		return -1;
	if (X509_gmtime_adj(X509_getm_notBefore(x), CA_NOT_BEFORE_S) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), CA_VALID_S) == NULL)
		return -1;
	name = X509_get_subject_name(x);
	if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
	                               (const unsigned char *)"olivares sandbox", -1, -1, 0) != 1)
		return -1;
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
	                               0) != 1)
		return -1;
	return X509_set_pubkey(x, pub) == 1 ? 0 : -1;
}

struct runner_gateway_ca *runner_gateway_ca_new(struct runner_error *err)
{
	struct runner_gateway_ca *ca;
	unsigned char id[8];
	char cn[64];
	X509V3_CTX ctx;
	size_t i;
	int n;

	ca = model_xcalloc(1, sizeof(*ca));
	ca->key = runner_gateway_key_new(err);
	if (ca->key == NULL)
		goto fail;
	ca->cert = X509_new();
	if (ca->cert == NULL || RAND_bytes(id, sizeof(id)) != 1) {
		ssl_fail(err, "certificate");
		goto fail;
	}
	/* a name of its own per run, so two runs' CAs are never confused */
	n = snprintf(cn, sizeof(cn), "olivares sandbox run CA ");
	for (i = 0; i < sizeof(id); i++)
		n += snprintf(cn + n, sizeof(cn) - (size_t)n, "%02x", id[i]);
	if (cert_base(ca->cert, cn, ca->key) != 0 ||
	    X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) != 1) {
		ssl_fail(err, "certificate fields");
		goto fail;
	}
	X509V3_set_ctx(&ctx, ca->cert, ca->cert, NULL, NULL, 0);
	if (add_ext(ca->cert, &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") != 0 ||
	    add_ext(ca->cert, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign") != 0 ||
	    add_ext(ca->cert, &ctx, NID_subject_key_identifier, "hash") != 0 ||
	    add_ext(ca->cert, &ctx, NID_authority_key_identifier, "keyid:always") != 0) {
		ssl_fail(err, "certificate extensions");
		goto fail;
	}
	if (X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0) {
		ssl_fail(err, "signature");
		goto fail;
	}
	return ca;
fail:
	runner_gateway_ca_free(ca);
	return NULL;
}

X509 *runner_gateway_ca_issue(const struct runner_gateway_ca *ca, const char *host, EVP_PKEY *key,
                              struct runner_error *err)
{
	X509 *x;
	ASN1_OCTET_STRING *ip;
	X509V3_CTX ctx;
	char san[300];
	char bare[256];
	size_t n;

	n = strlen(host);
	if (n == 0 || n >= sizeof(bare)) {
		runner_error_set(err, RUNNER_E_INTERNAL, "gateway CA: host of %zu bytes", n);
		return NULL;
	}
	/* an IPv6 address is bracketed in a url, bare in a SAN */
	if (host[0] == '[' && host[n - 1] == ']') {
		memcpy(bare, host + 1, n - 2);
		bare[n - 2] = '\0';
		snprintf(san, sizeof(san), "IP:%s", bare);
	} else {
		memcpy(bare, host, n + 1);
		ip = a2i_IPADDRESS(bare);
		ERR_clear_error(); /* a name that is not an address queues a reason */
		snprintf(san, sizeof(san), "%s:%s", ip != NULL ? "IP" : "DNS", bare);
		ASN1_OCTET_STRING_free(ip);
	}
	x = X509_new();
	if (x == NULL || cert_base(x, bare, key) != 0 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1) {
		ssl_fail(err, "leaf fields");
		goto fail;
	}
	X509V3_set_ctx(&ctx, ca->cert, x, NULL, NULL, 0);
	if (add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
	    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature") != 0 ||
	    add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") != 0 ||
	    add_ext(x, &ctx, NID_subject_key_identifier, "hash") != 0 ||
	    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always") != 0 ||
	    add_ext(x, &ctx, NID_subject_alt_name, san) != 0) {
		ssl_fail(err, "leaf extensions");
		goto fail;
	}
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0) {
		ssl_fail(err, "leaf signature");
		goto fail;
	}
	return x;
fail:
	X509_free(x);
	return NULL;
}

char *runner_gateway_ca_pem(const struct runner_gateway_ca *ca, size_t *len)
{
	BIO *bio;
	char *data;
	char *out;
	long n;

	bio = BIO_new(BIO_s_mem());
	if (bio == NULL || PEM_write_bio_X509(bio, ca->cert) != 1) {
		/* a memory BIO fails only when memory runs out */
		fprintf(stderr, "olivares: out of memory (gateway CA PEM)\n");
		abort();
	}
	n = BIO_get_mem_data(bio, &data);
	out = model_xmemdup(data, (size_t)n);
	if (len != NULL)
		*len = (size_t)n;
	BIO_free(bio);
	return out;
}

int runner_gateway_ca_write_pem(const struct runner_gateway_ca *ca, const char *path,
                                struct runner_error *err)
{
	char *pem;
	size_t len;
	size_t off;
	ssize_t w;
	int fd;
	int rc;

	rc = -1;
	pem = runner_gateway_ca_pem(ca, &len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		runner_error_set(err, RUNNER_E_SETUP, "gateway CA: open %s: %s", path,
		                 strerror(errno));
		goto out;
	}
	/* 0644 whatever the umask: the agent reads it as another uid */
	if (fchmod(fd, 0644) != 0) {
		runner_error_set(err, RUNNER_E_SETUP, "gateway CA: chmod %s: %s", path,
		                 strerror(errno));
		goto out;
	}
	for (off = 0; off < len; off += (size_t)w) {
		w = write(fd, pem + off, len - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			runner_error_set(err, RUNNER_E_SETUP, "gateway CA: write %s: %s", path,
			                 w < 0 ? strerror(errno) : "nothing written");
			goto out;
		}
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = runner_error_set(err, RUNNER_E_SETUP, "gateway CA: close %s: %s", path,
		                      strerror(errno));
	free(pem);
	return rc;
}

void runner_gateway_ca_free(struct runner_gateway_ca *ca)
{
	if (ca == NULL)
		return;
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca);
}
