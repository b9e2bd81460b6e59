#ifndef OLIVARES_MODEL_TEXT_H
#define OLIVARES_MODEL_TEXT_H
/**
 * Text rules shared by every entry point: text is UTF-8;
 * invalid UTF-8, NUL and surrogates are refused; content that looks like a
 * credential is refused from scenarios; ids are opaque tokens.
 */
#include <stddef.h>

/** 1 if the n bytes at s are well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates U+D800..U+DFFF, nothing above U+10FFFF) and contain no NUL
 * byte; 0 otherwise. */
int model_text_valid_utf8(const char *s, size_t n);

/**
 * Look for content that resembles a credential in the n bytes at s.
 * Recognised: PEM private-key blocks ("-----BEGIN ... PRIVATE KEY-----"),
 * AWS access key ids (AKIA/ASIA + 16 [A-Z0-9]), AWS secret access keys (a
 * key name starting "aws_secret", any case, e.g. aws_secret_access_key or
 * AWS_SECRET_ACCESS_KEY, then 1..8 bytes of blanks, quotes, '=' or ':',
 * then exactly 40 [A-Za-z0-9/+]), GitHub tokens (ghp_, gho_, ghu_, ghs_,
 * ghr_ + 36 alnum; github_pat_), Slack tokens (xox[abprs]-), Google API
 * keys (AIza + 35 [A-Za-z0-9_-]), OpenAI/Anthropic-style keys (sk- + 20 or
 * more [A-Za-z0-9_-]), Stripe live keys (sk_live_/rk_live_), JSON Web
 * Tokens (three base64url segments joined by '.', the first two starting
 * "eyJ": header and payload 10+ characters, signature 16+), bearer tokens
 * ("Bearer", any case, blanks, then 20+ RFC 6750 token characters
 * [A-Za-z0-9-._~+/] holding a digit or both cases; "Authorization: Bearer
 * …" included), and this service's own API tokens (MODEL_TOKEN_PREFIX + 64
 * hex, prefix and hex in any case: OLV_… too).
 * To keep ordinary text out, a key must start a word (the byte before it
 * is not part of the key alphabet: "task-…" is not "sk-…"), an AWS id is
 * exactly 20 characters, Slack tokens need 10+ [A-Za-z0-9-] with a digit,
 * github_pat_ needs 22+ [A-Za-z0-9_], Stripe keys 16+ alnum, and an sk- run
 * must contain a digit or an uppercase letter (kebab-case prose does not).
 * "Bearer" or "eyJ" alone, a short or lowercase-only word after "Bearer",
 * an AWS secret key name without a 40-character value, an e-mail address
 * are not credentials.
 * A key block header is 4 or 5 dashes, an optional blank, "BEGIN ", an
 * optional label, "PRIVATE KEY" (+ " BLOCK" for PGP), an optional blank and
 * 4+ dashes on one line, in any case (PEM, "-----begin rsa private
 * key-----", SSH2 "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"). Also
 * refused: PuTTY keys ("PuTTY-User-Key-File-N:"), "Authorization: Basic
 * <base64>" whose decoded value holds a ':', URLs with a password
 * ("scheme://user:pw@host"; not "user@host"), exactly 64 hex digits as a
 * word (a token without its prefix) unless labelled as a digest (a word
 * ending "sha256", "sha-256" or "digest" then 1..4 of ':', '=', quotes or
 * blanks just before it), and any of these once percent-escapes are
 * decoded (once; *kind then starts "URL-encoded").
 * s need not be NUL-terminated. The secret itself is never copied anywhere.
 * Returns 1 and sets *kind (a static string naming the format, e.g.
 * "private key block", "AWS secret access key", "JSON Web Token", "bearer
 * token") if found, else 0. The first credential in s is reported; for a
 * bearer token whose value has a format of its own (a JWT, an olivares
 * token), *kind names that format.
 */
int model_text_find_credential(const char *s, size_t n, const char **kind);

/**
 * 1 if the n bytes at s (well-formed UTF-8, see model_text_valid_utf8) hold
 * only white space, 0 otherwise; n = 0 counts as blank. White space: ASCII
 * space, \t, \n, \v, \f, \r, and the Unicode space separators and line
 * breaks (U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000) plus the invisible U+200B (zero width space) and U+FEFF
 * (byte order mark). Source: a scenario name must say something (tester
 * report: a name of "   " was accepted).
 */
int model_text_is_blank(const char *s, size_t n);

/**
 * 1 for a code point a reader could not see, or that XML 1.0 forbids: C0
 * controls but tab, line feed and carriage return; DEL and the C1
 * controls; the soft hyphen U+00AD; zero-width and direction marks
 * (U+200B..U+200F, the Arabic letter mark U+061C, the Mongolian vowel
 * separator U+180E); the line and paragraph separators U+2028, U+2029 (a
 * line break in a table cell); the bidi embeddings, overrides and isolates
 * (U+202A..U+202E, U+2066..U+2069: text that displays in another order
 * than it reads); the word joiner and invisible operators U+2060..U+2064;
 * the deprecated format controls U+206A..U+206F; the Hangul fillers
 * (U+115F, U+1160, U+3164, U+FFA0, which show as blanks); the BOM; the
 * interlinear annotation controls U+FFF9..U+FFFB; U+FFFE and U+FFFF; the
 * tag characters U+E0001, U+E0020..U+E007F. The admin view (fcgi/view/html.c) and the CLI's tables
 * (cli/print.c) write these out as "\uXXXX" rather than show them.
 */
int model_text_invisible(unsigned long c);

/** The code point of the UTF-8 sequence at s, of which avail bytes may be
 * read, with *len its length; or -1 for a byte that starts no valid
 * sequence (a stray continuation byte, a truncated sequence, a lead byte
 * above 0xF4), *len then 1. Overlongs and surrogates are not told apart
 * (text that reaches a display was validated on the way in). */
long model_text_utf8_at(const unsigned char *s, size_t avail, size_t *len);

/** Prefix of this service's API tokens: "olv_" followed by 64 lowercase hex
 * (as issued; model_text_find_credential matches both in any case). */
#define MODEL_TOKEN_PREFIX "olv_"

/** 1 if s is a well-formed id (exactly MODEL_ID_LEN lowercase hex chars). */
int model_id_valid(const char *s);

/** Write the n bytes of in as 2n lowercase hex characters and a NUL into
 * out (2n + 1 bytes, caller's). Used for ids, digests and secrets. */
void model_hex_encode(const unsigned char *in, size_t n, char *out);

/** Worst-case size in bytes of the JSON string literal (quotes included)
 * for a text of n UTF-8 bytes: every byte escaped as \u00XX, 6n + 2. */
size_t model_text_json_worst(size_t n);

#endif
