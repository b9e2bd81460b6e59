/*
 * Text rules (text.h): UTF-8 validation, credential detection, ids.
 * Plain scanning code; no regex engine, no locale (ASCII classes only).
 */
#include "text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "limits.h"

int model_text_valid_utf8(const char *s, size_t n)
{
	const unsigned char *p;
	size_t i;
	size_t k;
	size_t more;
	unsigned char c;
	unsigned char lo;
	unsigned char hi;

	p = (const unsigned char *)s;
	i = 0;
	while (i < n) {
		c = p[i];
		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		/* the second byte's range carries the overlong, surrogate and
		 * > U+10FFFF rules (RFC 3629 section 4) */
		lo = 0x80;
		hi = 0xBF;
		if (c < 0xC2) {
			return 0; /* stray continuation, or overlong C0/C1 */
		} else if (c < 0xE0) {
			more = 1;
		} else if (c < 0xF0) {
			more = 2;
			if (c == 0xE0)
				lo = 0xA0; /* overlong */
			else if (c == 0xED)
				hi = 0x9F; /* U+D800..U+DFFF */
		} else if (c < 0xF5) {
			more = 3;
			if (c == 0xF0)
				lo = 0x90; /* overlong */
			else if (c == 0xF4)
				hi = 0x8F; /* > U+10FFFF */
		} else {
			return 0;
		}
		if (n - i - 1 < more)
			return 0; /* truncated */
		if (p[i + 1] < lo || p[i + 1] > hi)
			return 0;
		for (k = 2; k <= more; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xBF)
				return 0;
		i += more + 1;
	}
	return 1;
}

static int is_upper(unsigned char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_lower(unsigned char c)
{
	return c >= 'a' && c <= 'z';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_alnum(unsigned char c)
{
	return is_upper(c) || is_lower(c) || is_digit(c);
}

/* the alphabet of most API keys: [A-Za-z0-9_-] */
static int is_keych(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-';
}

static int is_lhex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static int is_hex(unsigned char c)
{
	return is_lhex(c) || (c >= 'A' && c <= 'F');
}

/* [A-Za-z0-9_]: the bytes of a key name such as aws_secret_access_key */
static int is_word(unsigned char c)
{
	return is_alnum(c) || c == '_';
}

/* the alphabet of an AWS secret access key: [A-Za-z0-9/+] */
static int is_b64(unsigned char c)
{
	return is_alnum(c) || c == '/' || c == '+';
}

/* RFC 6750 b64token, without its trailing "=" padding: [A-Za-z0-9-._~+/] */
static int is_b64token(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* what may stand between a key name and its value: blanks, quotes, = and :
 * (aws_secret_access_key = X, "aws_secret_access_key": "X", KEY=X, KEY X) */
static int is_key_sep(unsigned char c)
{
	return is_blank(c) || c == '"' || c == '\'' || c == '=' || c == ':';
}

static int is_dash(unsigned char c)
{
	return c == '-';
}

static int is_pad(unsigned char c)
{
	return c == '=';
}

static unsigned char to_lower(unsigned char c)
{
	return is_upper(c) ? (unsigned char)(c - 'A' + 'a') : c;
}

/* c is one of the bytes of set (never matches the NUL terminator). */
static int one_of(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Does s[i..n) start with the literal lit? */
static int at(const char *s, size_t n, size_t i, const char *lit)
{
	size_t m;

	m = strlen(lit);
	return n - i >= m && memcmp(s + i, lit, m) == 0;
}

/* Does s[i..n) start with lit (lowercase ASCII), in any case? */
static int at_ci(const char *s, size_t n, size_t i, const char *lit)
{
	size_t m;
	size_t k;

	m = strlen(lit);
	if (n - i < m)
		return 0;
	for (k = 0; k < m; k++)
		if (to_lower((unsigned char)s[i + k]) != (unsigned char)lit[k])
			return 0;
	return 1;
}

/* Length of the run of bytes from s[i] that satisfy cls. */
static size_t run(const char *s, size_t n, size_t i, int (*cls)(unsigned char))
{
	size_t j;

	for (j = i; j < n && cls((unsigned char)s[j]); j++)
		;
	return j - i;
}

/* True when the byte before s[i] (if any) is not in cls: a key starts
 * there, not in the middle of a longer word ("task-" is not "sk-"). */
static int starts_word(const char *s, size_t i, int (*cls)(unsigned char))
{
	return i == 0 || !cls((unsigned char)s[i - 1]);
}

/*
 * A private-key block header on one line, labels in any case: PEM
 * "-----BEGIN <LABEL>PRIVATE KEY-----" (LABEL empty or words: "RSA ",
 * "EC ", "OPENSSH ", "ENCRYPTED "; "-----begin rsa private key-----" is
 * the same key to a reader), PGP "... PRIVATE KEY BLOCK-----", and SSH2
 * (RFC 4716 style) "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----": four or
 * five dashes, an optional blank, BEGIN, the label, then an optional blank
 * and four or more dashes.
 */
static int pem_private_key(const char *s, size_t n, size_t i)
{
	size_t j, end, dashes;

	dashes = run(s, n, i, is_dash);
	if ((dashes != 4 && dashes != 5) || !starts_word(s, i, is_dash))
		return 0;
	j = i + dashes;
	if (j < n && s[j] == ' ')
		j++;
	if (!at_ci(s, n, j, "begin "))
		return 0;
	j += strlen("begin ");
	end = j + 48 < n ? j + 48 : n; /* labels are short */
	for (; j < end; j++) {
		if (at_ci(s, n, j, "private key")) {
			j += strlen("private key");
			if (at_ci(s, n, j, " block"))
				j += strlen(" block");
			if (j < n && s[j] == ' ')
				j++;
			return run(s, n, j, is_dash) >= 4;
		}
		if (!is_alnum((unsigned char)s[j]) && s[j] != ' ')
			return 0;
	}
	return 0;
}

/* "PuTTY-User-Key-File-N:" (a PuTTY .ppk private key file, any version),
 * in any case, starting a word. */
static int putty_key(const char *s, size_t n, size_t i)
{
	size_t j = i + strlen("putty-user-key-file-");

	return at_ci(s, n, i, "putty-user-key-file-") && starts_word(s, i, is_alnum) &&
	       run(s, n, j, is_digit) >= 1 && at(s, n, j + run(s, n, j, is_digit), ":");
}

static int b64_value(unsigned char c)
{
	if (is_upper(c))
		return c - 'A';
	if (is_lower(c))
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * "Authorization: Basic <base64>" (RFC 7617; also Proxy-Authorization),
 * any case, blanks around the colon: the value must be base64 whose
 * decoded bytes hold the ':' between user and password, and end the word.
 * "Basic auth", "Basic <credentials>", "Basic YOUR_CREDENTIALS" are not
 * credentials. The decoded bytes are only looked at, never kept.
 */
static int basic_auth(const char *s, size_t n, size_t i)
{
	size_t j, len, k, pad;
	unsigned acc = 0;
	int bits = 0, v;

	if (!at_ci(s, n, i, "authorization") || !starts_word(s, i, is_alnum))
		return 0;
	j = i + strlen("authorization");
	j += run(s, n, j, is_blank);
	if (!at(s, n, j, ":"))
		return 0;
	j++;
	j += run(s, n, j, is_blank);
	if (!at_ci(s, n, j, "basic"))
		return 0;
	j += strlen("basic");
	k = run(s, n, j, is_blank);
	if (k < 1)
		return 0;
	j += k;
	len = run(s, n, j, is_b64);
	pad = run(s, n, j + len, is_pad);
	if (len < 4 || pad > 2 || (j + len + pad < n && is_keych((unsigned char)s[j + len + pad])))
		return 0;
	for (k = j; k < j + len; k++) {
		v = b64_value((unsigned char)s[k]);
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (((acc >> bits) & 0xff) == ':')
				return 1;
		}
	}
	return 0;
}

/*
 * A URL with a password: "scheme://user:password@host", the scheme one or
 * more [A-Za-z0-9+.-] starting with a letter, the userinfo (no '/', '?',
 * '#', '@' or blank in it) holding a ':' with a non-empty password after
 * it. "ssh://git@host" (no password) and "http://host:8080/a@b" (the ':'
 * is a port's, a '/' comes before the '@') are not credentials. i is the
 * position of the ':' of "://".
 */
static int url_password(const char *s, size_t n, size_t i)
{
	size_t j, colon = 0;

	if (!at(s, n, i, "://") || i == 0 || !is_alnum((unsigned char)s[i - 1]))
		return 0;
	for (j = i + 3; j < n; j++) {
		if (s[j] == '@')
			return colon && j > colon + 1;
		if (one_of(s[j], "/?#") || is_blank((unsigned char)s[j]) || s[j] == '\n' ||
		    s[j] == '\r')
			return 0;
		if (s[j] == ':' && !colon)
			colon = j;
	}
	return 0;
}

/*
 * Exactly 64 hex digits as a word ([A-Za-z0-9_] on neither side: "xolv_…"
 * stays a longer word): an olivares API token's secret without its prefix. A word labelled as a digest is not refused: the
 * product's own SHA-256 values (an output_digest, an agent's sha256, a
 * "sha256:<hex>" image digest) are 64 hex digits too. The label is a word
 * ending in "sha256", "sha-256" or "digest" (any case) just before it,
 * separated by 1 to 4 of ':', '=', quotes or blanks.
 */
static int bare_token_hex(const char *s, size_t n, size_t i)
{
	static const char *const labels[] = {"sha256", "sha-256", "digest"};
	size_t j, k, m;

	if (!starts_word(s, i, is_word) || run(s, n, i, is_hex) != 64 ||
	    (i + 64 < n && is_word((unsigned char)s[i + 64])))
		return 0;
	for (j = i, k = 0; j > 0 && k < 4 && is_key_sep((unsigned char)s[j - 1]); j--, k++)
		;
	if (k == 0)
		return 1;
	for (m = 0; m < sizeof(labels) / sizeof(labels[0]); m++) {
		size_t l = strlen(labels[m]);

		if (j >= l && at_ci(s, n, j - l, labels[m]))
			return 0;
	}
	return 1;
}

/* AKIA/ASIA + exactly 16 [A-Z0-9], delimited on both sides. */
static int aws_key_id(const char *s, size_t n, size_t i)
{
	size_t j;

	if (!at(s, n, i, "AKIA") && !at(s, n, i, "ASIA"))
		return 0;
	if (!starts_word(s, i, is_alnum) || n - i < 20)
		return 0;
	for (j = i + 4; j < i + 20; j++)
		if (!is_upper((unsigned char)s[j]) && !is_digit((unsigned char)s[j]))
			return 0;
	return j == n || !is_alnum((unsigned char)s[j]);
}

/* ghp_/gho_/ghu_/ghs_/ghr_ + 36 alnum; github_pat_ + 22 or more [A-Za-z0-9_]. */
static int github_token(const char *s, size_t n, size_t i)
{
	if (!starts_word(s, i, is_alnum))
		return 0;
	if (at(s, n, i, "github_pat_"))
		return run(s, n, i + strlen("github_pat_"), is_keych) >= 22;
	if (n - i < 4 || s[i] != 'g' || s[i + 1] != 'h' || s[i + 3] != '_' ||
	    !one_of(s[i + 2], "pousr"))
		return 0;
	return run(s, n, i + 4, is_alnum) >= 36;
}

static int has_digit_in(const char *s, size_t i, size_t len)
{
	size_t j;

	for (j = i; j < i + len; j++)
		if (is_digit((unsigned char)s[j]))
			return 1;
	return 0;
}

/* xoxa-/xoxb-/xoxp-/xoxr-/xoxs- + 10 or more [A-Za-z0-9-] with a digit
 * (real tokens carry numeric team and user ids). */
static int slack_token(const char *s, size_t n, size_t i)
{
	size_t len;

	if (!at(s, n, i, "xox") || n - i < 5 || !one_of(s[i + 3], "abprs") || s[i + 4] != '-')
		return 0;
	if (!starts_word(s, i, is_alnum))
		return 0;
	len = run(s, n, i + 5, is_keych);
	return len >= 10 && has_digit_in(s, i + 5, len);
}

/* AIza + 35 [A-Za-z0-9_-]. */
static int google_api_key(const char *s, size_t n, size_t i)
{
	return at(s, n, i, "AIza") && starts_word(s, i, is_keych) &&
	       run(s, n, i + 4, is_keych) >= 35;
}

/*
 * sk- + 20 or more [A-Za-z0-9_-] (OpenAI "sk-…", "sk-proj-…", Anthropic
 * "sk-ant-…"). Two extra conditions keep prose out: "sk-" must start a word
 * ("task-list", "risk-free" are not keys), and the run must hold a digit or
 * an uppercase letter, which a random 20-character key lacks with
 * probability (26/62)^20 < 1e-7 while kebab-case words
 * ("sk-learn-tutorial-for-beginners") always do.
 */
static int secret_key(const char *s, size_t n, size_t i)
{
	size_t len;
	size_t j;

	if (!at(s, n, i, "sk-") || !starts_word(s, i, is_keych))
		return 0;
	len = run(s, n, i + 3, is_keych);
	if (len < 20)
		return 0;
	for (j = i + 3; j < i + 3 + len; j++)
		if (is_digit((unsigned char)s[j]) || is_upper((unsigned char)s[j]))
			return 1;
	return 0;
}

/* sk_live_/rk_live_ + 16 or more alnum (Stripe live secret/restricted keys). */
static int stripe_live_key(const char *s, size_t n, size_t i)
{
	if (!at(s, n, i, "sk_live_") && !at(s, n, i, "rk_live_"))
		return 0;
	return starts_word(s, i, is_alnum) && run(s, n, i + 8, is_alnum) >= 16;
}

/* This service's tokens: "olv_" + 64 hex, in any case (the server issues
 * lowercase, but an upper-cased copy, OLV_…, is the same secret to a
 * reader). */
static int olivares_token(const char *s, size_t n, size_t i)
{
	size_t p;

	p = strlen(MODEL_TOKEN_PREFIX);
	return at_ci(s, n, i, MODEL_TOKEN_PREFIX) && starts_word(s, i, is_alnum) &&
	       run(s, n, i + p, is_hex) >= 64;
}

/*
 * An AWS secret access key after its key name: "aws_secret" in any case,
 * not preceded by a letter or digit, the rest of the name ([A-Za-z0-9_]*: "_access_key"),
 * 1 to 8 separator bytes (blanks, quotes, '=', ':'), then exactly 40
 * [A-Za-z0-9/+] (the length of every AWS secret key). The key name is what
 * tells a secret key from any other 40-character string, which alone would
 * match too much (a SHA-1 in hex is 40 characters).
 */
static int aws_secret_key(const char *s, size_t n, size_t i)
{
	size_t j;
	size_t sep;

	/* a prefix before it is fine: MY_AWS_SECRET_ACCESS_KEY= */
	if (!at_ci(s, n, i, "aws_secret") || !starts_word(s, i, is_alnum))
		return 0;
	j = i + strlen("aws_secret");
	j += run(s, n, j, is_word);
	sep = run(s, n, j, is_key_sep);
	if (sep < 1 || sep > 8)
		return 0;
	return run(s, n, j + sep, is_b64) == 40;
}

/*
 * A JSON Web Token (RFC 7519, JWS compact form): three base64url segments
 * joined by '.', the first two being JSON objects, hence starting "eyJ"
 * (base64 of '{"'). Sizes that keep fragments out: header and payload of 10
 * or more characters (the shortest useful header, {"alg":"HS256"}, is 20),
 * a signature of 16 or more (HS256 gives 43). "eyJ" alone, or a header
 * alone, is not a token.
 */
static int jwt(const char *s, size_t n, size_t i)
{
	size_t j;
	size_t len;
	int seg;

	if (!starts_word(s, i, is_keych))
		return 0;
	j = i;
	for (seg = 0; seg < 2; seg++) {
		if (!at(s, n, j, "eyJ"))
			return 0;
		len = run(s, n, j, is_keych);
		if (len < 10 || j + len >= n || s[j + len] != '.')
			return 0;
		j += len + 1;
	}
	return run(s, n, j, is_keych) >= 16;
}

/*
 * "Bearer <token>" (RFC 6750, also inside "Authorization: Bearer …"):
 * "bearer" in any case starting a word, blanks, then 20 or more b64token
 * characters holding a digit or both cases. That last rule keeps prose and
 * placeholders out ("bearer tokens are short-lived", "Bearer
 * YOUR_ACCESS_TOKEN_HERE") while a random token of 20 characters lacks it
 * with probability below 1e-7. On a match *span and *span_len give the token,
 * so that the caller can name a more precise format found inside it.
 */
static int bearer_token(const char *s, size_t n, size_t i, size_t *span, size_t *span_len)
{
	size_t j;
	size_t len;
	size_t k;
	int digit;
	int upper;
	int lower;

	if (!at_ci(s, n, i, "bearer") || !starts_word(s, i, is_alnum))
		return 0;
	j = i + strlen("bearer");
	k = run(s, n, j, is_blank);
	if (k < 1)
		return 0;
	j += k;
	len = run(s, n, j, is_b64token);
	if (len < 20)
		return 0;
	digit = 0;
	upper = 0;
	lower = 0;
	for (k = j; k < j + len; k++) {
		digit |= is_digit((unsigned char)s[k]);
		upper |= is_upper((unsigned char)s[k]);
		lower |= is_lower((unsigned char)s[k]);
	}
	if (!digit && !(upper && lower))
		return 0;
	*span = j;
	*span_len = len;
	return 1;
}

/* The credential formats with a fixed first byte, tried at each position
 * holding it in this order: the first that matches names the credential.
 * A bearer token ("Bearer ..." or "bearer ...") is tried apart, as its
 * token may have a format of its own. */
static const struct credential_format {
	char first;
	int (*match)(const char *s, size_t n, size_t i);
	const char *kind;
} credential_formats[] = {
    {'-', pem_private_key, "private key block"},
    {'P', putty_key, "PuTTY private key"},
    {'p', putty_key, "PuTTY private key"},
    {'A', basic_auth, "Basic authorization credentials"},
    {'a', basic_auth, "Basic authorization credentials"},
    {':', url_password, "URL with a password"},
    {'A', aws_key_id, "AWS access key id"},
    {'A', google_api_key, "Google API key"},
    {'A', aws_secret_key, "AWS secret access key"},
    {'a', aws_secret_key, "AWS secret access key"},
    {'e', jwt, "JSON Web Token"},
    {'g', github_token, "GitHub token"},
    {'x', slack_token, "Slack token"},
    {'s', secret_key, "API secret key"},
    {'s', stripe_live_key, "Stripe live key"},
    {'r', stripe_live_key, "Stripe live key"},
    {'o', olivares_token, "olivares API token"},
    {'O', olivares_token, "olivares API token"},
};
/* Every first byte of credential_formats, and the bearer token's. */
static const char credential_firsts[] = "-PpAaegxsroOBb:";

static int find_plain(const char *s, size_t n, const char **kind);

/* The kind of a credential found once percent-escapes are decoded. */
static const struct {
	const char *kind, *encoded;
} credential_encoded[] = {
    {"private key block", "URL-encoded private key block"},
    {"PuTTY private key", "URL-encoded PuTTY private key"},
    {"Basic authorization credentials", "URL-encoded Basic authorization credentials"},
    {"URL with a password", "URL-encoded URL with a password"},
    {"olivares API token", "URL-encoded olivares API token"},
    {"bearer token", "URL-encoded bearer token"},
};

static const char *const bare_hex_kind = "64 hex digits (an olivares API token without its prefix)";

static int hex_value(unsigned char c)
{
	return is_digit(c) ? c - '0' : (to_lower(c) - 'a' + 10);
}

/*
 * Look again in s with its percent-escapes decoded ("olv%5F…",
 * "https%3A%2F%2Fu%3Apw%40host", "-----BEGIN%20RSA%20PRIVATE%20KEY-----"),
 * once: a doubly encoded value is not followed. Only when s holds an
 * escape; the decoded copy is wiped before it is freed.
 */
static const char *find_encoded(const char *s, size_t n)
{
	const char *found = NULL;
	char *d;
	size_t i, m = 0, k;
	int escaped = 0;

	for (i = 0; i + 2 < n && !escaped; i++)
		escaped = s[i] == '%' && is_hex((unsigned char)s[i + 1]) &&
		          is_hex((unsigned char)s[i + 2]);
	if (!escaped)
		return NULL;
	d = model_xmalloc(n);
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && is_hex((unsigned char)s[i + 1]) &&
		    is_hex((unsigned char)s[i + 2])) {
			d[m++] = (char)(hex_value((unsigned char)s[i + 1]) * 16 +
			                hex_value((unsigned char)s[i + 2]));
			i += 2;
		} else {
			d[m++] = s[i];
		}
	}
	if (find_plain(d, m, &found)) {
		for (k = 0; k < sizeof(credential_encoded) / sizeof(credential_encoded[0]); k++)
			if (strcmp(credential_encoded[k].kind, found) == 0)
				found = credential_encoded[k].encoded;
		if (strncmp(found, "URL-encoded", 11) != 0)
			found = "URL-encoded credential";
	}
	explicit_bzero(d, n);
	free(d);
	return found;
}

static int find_plain(const char *s, size_t n, const char **kind)
{
	size_t i;
	size_t k;
	size_t span;
	size_t span_len;
	const char *found;

	found = NULL;
	for (i = 0; i < n && !found; i++) {
		if (is_hex((unsigned char)s[i]) && bare_token_hex(s, n, i)) {
			found = bare_hex_kind;
			break;
		}
		if (!memchr(credential_firsts, s[i], sizeof(credential_firsts) - 1))
			continue;
		if (s[i] == 'B' || s[i] == 'b') {
			/* the token's own format when it has one (a JWT, an
			 * olivares token), else "bearer token"; the token is
			 * shorter than s, so the recursion ends */
			if (bearer_token(s, n, i, &span, &span_len) &&
			    !find_plain(s + span, span_len, &found))
				found = "bearer token";
			if (found)
				continue;
		}
		for (k = 0; k < sizeof(credential_formats) / sizeof(credential_formats[0]); k++) {
			if (credential_formats[k].first == s[i] &&
			    credential_formats[k].match(s, n, i)) {
				found = credential_formats[k].kind;
				break;
			}
		}
	}
	if (!found)
		return 0;
	if (kind)
		*kind = found;
	return 1;
}

int model_text_find_credential(const char *s, size_t n, const char **kind)
{
	const char *found = NULL;

	if (!find_plain(s, n, &found))
		found = find_encoded(s, n);
	if (!found)
		return 0;
	if (kind)
		*kind = found;
	return 1;
}

/* Unicode white space above ASCII (text.h), by code point. */
static int is_unicode_space(uint32_t cp)
{
	return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200B) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
	       cp == 0xFEFF;
}

int model_text_is_blank(const char *s, size_t n)
{
	const unsigned char *p;
	size_t i;
	size_t more;
	size_t k;
	uint32_t cp;

	p = (const unsigned char *)s;
	i = 0;
	while (i < n) {
		if (p[i] < 0x80) {
			if (!one_of((char)p[i], " \t\n\v\f\r"))
				return 0;
			i++;
			continue;
		}
		/* well-formed input: the lead byte gives the length */
		if (p[i] >= 0xF0) {
			more = 3;
			cp = p[i] & 0x07;
		} else if (p[i] >= 0xE0) {
			more = 2;
			cp = p[i] & 0x0F;
		} else {
			more = 1;
			cp = p[i] & 0x1F;
		}
		if (n - i - 1 < more)
			return 0;
		for (k = 1; k <= more; k++)
			cp = (cp << 6) | (p[i + k] & 0x3F);
		if (!is_unicode_space(cp))
			return 0;
		i += more + 1;
	}
	return 1;
}

int model_text_invisible(unsigned long c)
{
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (c >= 0x7f && c <= 0x9f) ||
	       c == 0xad || c == 0x61c || c == 0x115f || c == 0x1160 || c == 0x180e ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) || c == 0x3164 ||
	       c == 0xfeff || c == 0xffa0 || (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe ||
	       c == 0xffff || c == 0xe0001 || (c >= 0xe0020 && c <= 0xe007f);
}

long model_text_utf8_at(const unsigned char *s, size_t avail, size_t *len)
{
	unsigned long c;
	size_t n, i;

	*len = 1;
	if (avail == 0)
		return -1;
	if (s[0] < 0x80)
		return s[0];
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (n == 0 || s[0] > 0xf4 || n > avail)
		return -1;
	c = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (s[i] & 0x3f);
	}
	*len = n;
	return (long)c;
}

int model_id_valid(const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < MODEL_ID_LEN; i++)
		if (!is_lhex((unsigned char)s[i]))
			return 0;
	return s[MODEL_ID_LEN] == '\0';
}

size_t model_text_json_worst(size_t n)
{
	if (n > (SIZE_MAX - 2) / 6)
		return SIZE_MAX;
	return 6 * n + 2;
}

void model_hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}
