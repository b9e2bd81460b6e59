/*
 * HTTP mocks: validation, url normalization, matching, near misses, and
 * the gateway's resolution of one request (http_mock.h). The chat half is
 * model/llm_mock.c.
 *
 * POSIX <regex.h> is libc and does no I/O: a body regex is compiled at
 * validation to refuse a bad one, and again for each request it is tried
 * on (patterns are short, MODEL_MAX_HTTP_REGEX_BYTES).
 */
#include "http_mock.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "buf.h"
#include "limits.h"
#include "llm_mock.h"
#include "mock.h"
#include "scenario.h"

/* ---- shared helpers (llm_mock.h) ---------------------------------------- */

int model_http_same_string(json_t *a, json_t *b)
{
	if (!json_is_string(a) || !json_is_string(b))
		return !json_is_string(a) && !json_is_string(b);
	return json_string_length(a) == json_string_length(b) &&
	       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
}

int model_http_compatible(json_t *a, json_t *b)
{
	const char *k;
	json_t *v, *w;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b);
	json_object_foreach(a, k, v)
	{
		w = json_object_get(b, k);
		if (w && !model_http_compatible(v, w))
			return 0;
	}
	return 1;
}

json_t *model_http_mock_answer(json_t *mock, size_t call)
{
	json_t *seq = json_object_get(mock, "sequence");

	if (json_is_array(seq) && json_array_size(seq) > 0) {
		/* after the last item, the last again */
		if (call >= json_array_size(seq))
			call = json_array_size(seq) - 1;
		return json_array_get(seq, call);
	}
	return json_object_get(mock, "response");
}

int model_http_regex_search(const char *pattern, const char *s, size_t n)
{
	regex_t re;
	char *text;
	int r;

	/* regexec reads a C string: a NUL inside would hide the rest */
	if (n && memchr(s, '\0', n))
		return 0;
	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	text = model_xmemdup(n ? s : "", n);
	r = regexec(&re, text, 0, NULL, 0) == 0;
	free(text);
	regfree(&re);
	return r;
}

int model_http_check_regex(struct model_check *c, json_t *v, const char *path)
{
	regex_t re;
	char msg[128];
	const char *p;
	size_t i;
	int rc;

	if (!json_is_string(v))
		return model_check_malformed(c, path, "%s must be a string (a POSIX ERE)", path);
	if (model_check_text(c, json_string_value(v), json_string_length(v), path, 1,
	                     MODEL_MAX_HTTP_REGEX_BYTES))
		return -1;
	/* A back-reference (\1 to \9, which glibc accepts in an ERE) makes a
	 * match take exponential time: one small request would hold the
	 * run's gateway for as long as it liked. Refused (in a bracket
	 * expression too: simpler, and "\\1" says a backslash then 1). */
	p = json_string_value(v);
	for (i = 0; i + 1 < json_string_length(v); i++) {
		if (p[i] == '\\' && p[i + 1] >= '1' && p[i + 1] <= '9') {
			model_check_refuse(c, MODEL_E_INVALID, path,
			                   "%s has a back-reference (\\%c): not supported (a match "
			                   "can take exponential time)",
			                   path, p[i + 1]);
			return 0;
		}
		if (p[i] == '\\')
			i++;
	}
	rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &re, msg, sizeof(msg));
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s is not a POSIX extended regular expression: %s", path, msg);
		return 0;
	}
	regfree(&re);
	return 0;
}

int model_http_check_answers(struct model_check *c, json_t *item, const char *prefix,
                             model_http_answer_check_fn check, json_t *norm)
{
	json_t *resp = json_object_get(item, "response");
	json_t *seq = json_object_get(item, "sequence");
	json_t *one, *arr;
	char path[96];
	size_t i, n;

	if (resp && seq) {
		snprintf(path, sizeof(path), "%s.sequence", prefix);
		return model_check_malformed(c, path,
		                             "%s: a mock has response or sequence, not both", path);
	}
	if (resp) {
		snprintf(path, sizeof(path), "%s.response", prefix);
		if (check(c, resp, path, &one))
			return -1;
		json_object_set_new(norm, "response", one);
		return 0;
	}
	if (!seq) {
		snprintf(path, sizeof(path), "%s.response", prefix);
		return model_check_malformed(c, path, "%s is required (or sequence)", path);
	}
	snprintf(path, sizeof(path), "%s.sequence", prefix);
	if (!json_is_array(seq))
		return model_check_malformed(c, path, "%s must be an array", path);
	n = json_array_size(seq);
	if (n < 1 || n > MODEL_MAX_SEQUENCE)
		model_check_refuse(c, MODEL_E_LIMIT, path, "%s must hold 1 to %d items", path,
		                   MODEL_MAX_SEQUENCE);
	arr = json_array();
	json_object_set_new(norm, "sequence", arr);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s.sequence[%zu]", prefix, i);
		if (check(c, json_array_get(seq, i), path, &one))
			return -1;
		json_array_append_new(arr, one);
	}
	return 0;
}

/* ---- urls ---------------------------------------------------------------- */

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

int model_http_url_normalize(const char *url, size_t len, char **out, const char **why)
{
	struct model_buf b;
	size_t i, auth, auth_end, host_end, port_at, p;
	unsigned long port = 0;
	int https;

	*out = NULL;
	if (len > MODEL_MAX_HTTP_URL_BYTES) {
		*why = "the url is too long";
		return -1;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f) {
			*why = "the url holds a space or a control character";
			return -1;
		}
		if (url[i] == '#') {
			*why = "the url has a fragment (#...), which a request never sends";
			return -1;
		}
	}
	if (len >= 7 && strncasecmp(url, "http://", 7) == 0) {
		https = 0;
		auth = 7;
	} else if (len >= 8 && strncasecmp(url, "https://", 8) == 0) {
		https = 1;
		auth = 8;
	} else {
		*why = "the url must start with http:// or https://";
		return -1;
	}
	for (auth_end = auth; auth_end < len && url[auth_end] != '/' && url[auth_end] != '?';
	     auth_end++)
		if (url[auth_end] == '@') {
			*why = "the url has user information (user@host), which is not supported";
			return -1;
		}
	if (auth < auth_end && url[auth] == '[') {
		/* an IPv6 literal: up to its bracket */
		for (host_end = auth; host_end < auth_end && url[host_end] != ']'; host_end++)
			;
		if (host_end == auth_end) {
			*why = "the url's IPv6 host has no closing bracket";
			return -1;
		}
		host_end++;
	} else {
		for (host_end = auth; host_end < auth_end && url[host_end] != ':'; host_end++)
			;
	}
	if (host_end == auth || (url[auth] == '[' && host_end == auth + 2)) {
		*why = "the url has no host";
		return -1;
	}
	if (host_end < auth_end && url[host_end] != ':') {
		*why = "the url's host is followed by something other than a port";
		return -1;
	}
	port_at = host_end + 1;
	for (p = port_at; p < auth_end; p++) {
		if (url[p] < '0' || url[p] > '9') {
			*why = "the url's port is not a number";
			return -1;
		}
		port = port * 10 + (unsigned long)(url[p] - '0');
		if (port > 65535) {
			*why = "the url's port is over 65535";
			return -1;
		}
	}
	if (port_at < auth_end && port == 0) {
		*why = "the url's port is 0";
		return -1;
	}
	model_buf_init(&b, MODEL_MAX_HTTP_URL_BYTES + 16);
	model_buf_must_fit(model_buf_adds(&b, https ? "https://" : "http://"));
	for (i = auth; i < host_end; i++) {
		char ch = (char)lower((unsigned char)url[i]);

		model_buf_must_fit(model_buf_add(&b, &ch, 1));
	}
	/* an empty port and the scheme's default port say nothing */
	if (port && port != (https ? 443UL : 80UL))
		model_buf_must_fit(model_buf_printf(&b, ":%lu", port));
	if (auth_end == len || url[auth_end] == '?')
		model_buf_must_fit(model_buf_adds(&b, "/"));
	model_buf_must_fit(model_buf_add(&b, url + auth_end, len - auth_end));
	*out = model_buf_detach(&b, NULL);
	model_buf_release(&b);
	return 0;
}

int model_http_is_chat_path(const char *url)
{
	static const char tail[] = "/chat/completions";
	size_t n = strcspn(url, "?#");
	size_t t = sizeof(tail) - 1;

	return n >= t && memcmp(url + n - t, tail, t) == 0;
}

/* ---- validation ------------------------------------------------------------- */

static const char *const http_fields[] = {"method", "url", "body", NULL};
static const char *const response_fields[] = {"status", "headers", "body", "json", NULL};
/* the members of other kinds of mocks */
static const char *const foreign_fields[] = {"resource", "tool", "args", "match", "error", NULL};
/* headers the gateway writes itself: it frames the body and the connection */
static const char *const gateway_headers[] = {"content-length", "transfer-encoding", "connection",
                                              NULL};

/* An HTTP token (RFC 9110 tchar): methods and header names. */
static int is_token(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch))))
			return 0;
	}
	return 1;
}

/* A string member: type structural, text and bounds refusals; *out a new
 * copy (or NULL when v is absent and not required). */
static int member_string(struct model_check *c, json_t *v, const char *path, size_t min, size_t max)
{
	if (!json_is_string(v))
		return model_check_malformed(c, path, "%s must be a string", path);
	return model_check_text(c, json_string_value(v), json_string_length(v), path, min, max);
}

static int check_body_condition(struct model_check *c, json_t *v, const char *path)
{
	char sub[112];
	json_t *x;

	if (json_is_string(v))
		return member_string(c, v, path, 0, MODEL_MAX_RESPONSE_BYTES);
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    (!json_object_get(v, "json_subset") && !json_object_get(v, "regex")))
		return model_check_malformed(
		    c, path, "%s must be a string, {\"json_subset\": JSON} or {\"regex\": string}",
		    path);
	if ((x = json_object_get(v, "regex")) != NULL) {
		snprintf(sub, sizeof(sub), "%s.regex", path);
		return model_http_check_regex(c, x, sub);
	}
	snprintf(sub, sizeof(sub), "%s.json_subset", path);
	return model_check_json_value(c, json_object_get(v, "json_subset"), sub);
}

static int check_http_part(struct model_check *c, json_t *v, const char *prefix, json_t **out)
{
	char path[96], *norm = NULL, *m;
	const char *why;
	json_t *x;
	size_t i;

	*out = NULL;
	snprintf(path, sizeof(path), "%s.http", prefix);
	if (!json_is_object(v))
		return model_check_malformed(c, path, "%s must be an object", path);
	if (model_check_keys(c, v, path, http_fields))
		return -1;
	snprintf(path, sizeof(path), "%s.http.method", prefix);
	x = json_object_get(v, "method");
	if (!x)
		return model_check_malformed(c, path, "%s is required", path);
	if (member_string(c, x, path, 1, MODEL_MAX_HTTP_METHOD_BYTES))
		return -1;
	if (json_string_length(x) > 0 && !is_token(json_string_value(x), json_string_length(x)))
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s must be an HTTP method name (letters, digits, -)", path);
	/* methods are case-sensitive on the wire and upper-case in practice:
	 * the mock holds the upper-case form a client sends */
	m = model_xmemdup(json_string_value(x), json_string_length(x));
	for (i = 0; m[i]; i++)
		if (m[i] >= 'a' && m[i] <= 'z')
			m[i] = (char)(m[i] - 'a' + 'A');
	*out = json_pack("{s:s}", "method", m);
	free(m);
	snprintf(path, sizeof(path), "%s.http.url", prefix);
	x = json_object_get(v, "url");
	if (!x)
		goto missing;
	if (member_string(c, x, path, 1, MODEL_MAX_HTTP_URL_BYTES))
		goto fail;
	if (json_string_length(x) > 0) {
		if (model_http_url_normalize(json_string_value(x), json_string_length(x), &norm,
		                             &why) == 0) {
			json_object_set_new(*out, "url", json_string(norm));
			free(norm);
		} else {
			model_check_refuse(c, MODEL_E_INVALID, path, "%s: %s", path, why);
		}
	}
	x = json_object_get(v, "body");
	if (x) {
		snprintf(path, sizeof(path), "%s.http.body", prefix);
		if (check_body_condition(c, x, path))
			goto fail;
		json_object_set_new(*out, "body", json_deep_copy(x));
	}
	return 0;
missing:
	model_check_malformed(c, path, "%s is required", path);
fail:
	json_decref(*out);
	*out = NULL;
	return -1;
}

static int check_headers(struct model_check *c, json_t *h, const char *path)
{
	const char *k, *s;
	json_t *v;
	char sub[160];
	size_t i, j, n;
	void *it, *it2;

	if (!json_is_object(h))
		return model_check_malformed(c, path, "%s must be an object of strings", path);
	if (json_object_size(h) > MODEL_MAX_HTTP_HEADERS)
		model_check_refuse(c, MODEL_E_LIMIT, path, "%s must hold at most %d headers", path,
		                   MODEL_MAX_HTTP_HEADERS);
	json_object_foreach(h, k, v)
	{
		snprintf(sub, sizeof(sub), "%s.%s", path, k);
		n = strlen(k);
		if (model_check_text(c, k, n, sub, 1, MODEL_MAX_HTTP_HEADER_BYTES))
			return -1;
		if (!json_is_string(v))
			return model_check_malformed(c, sub, "%s must be a string", sub);
		if (model_check_text(
		        c, json_string_value(v), json_string_length(v), sub, 0,
		        n < MODEL_MAX_HTTP_HEADER_BYTES ? MODEL_MAX_HTTP_HEADER_BYTES - n : 0))
			return -1;
		if (!is_token(k, n))
			model_check_refuse(
			    c, MODEL_E_INVALID, sub,
			    "%s: a header name is an HTTP token (letters, digits, -)", sub);
		s = json_string_value(v);
		if (strchr(s, '\r') || strchr(s, '\n'))
			model_check_refuse(c, MODEL_E_INVALID, sub,
			                   "%s: a header value holds no CR or LF", sub);
		for (i = 0; gateway_headers[i]; i++)
			if (strcasecmp(k, gateway_headers[i]) == 0)
				model_check_refuse(c, MODEL_E_INVALID, sub,
				                   "%s: the gateway sets %s itself; leave it out",
				                   sub, k);
	}
	/* names are case-insensitive: two that differ in case only are one */
	for (it = json_object_iter(h), i = 0; it; it = json_object_iter_next(h, it), i++) {
		k = json_object_iter_key(it);
		for (it2 = json_object_iter_next(h, it), j = i + 1; it2;
		     it2 = json_object_iter_next(h, it2), j++)
			if (strcasecmp(k, json_object_iter_key(it2)) == 0) {
				snprintf(sub, sizeof(sub), "%s.%s", path,
				         json_object_iter_key(it2));
				model_check_refuse(
				    c, MODEL_E_INVALID, sub,
				    "%s repeats header %s (names ignore case): give it "
				    "once",
				    sub, k);
			}
	}
	return 0;
}

static int check_http_response(struct model_check *c, json_t *v, const char *path, json_t **out)
{
	char sub[128];
	json_t *x, *body, *js;
	json_int_t status = 200;

	*out = NULL;
	if (!json_is_object(v))
		return model_check_malformed(c, path, "%s must be an object", path);
	if (model_check_keys(c, v, path, response_fields))
		return -1;
	x = json_object_get(v, "status");
	snprintf(sub, sizeof(sub), "%s.status", path);
	if (x && !json_is_integer(x))
		return model_check_malformed(c, sub, "%s must be an integer", sub);
	if (x) {
		status = json_integer_value(x);
		if (status < 200 || status > 599)
			model_check_refuse(c, MODEL_E_INVALID, sub,
			                   "%s must be an HTTP status from 200 to 599", sub);
	}
	body = json_object_get(v, "body");
	js = json_object_get(v, "json");
	if (body && js) {
		snprintf(sub, sizeof(sub), "%s.json", path);
		return model_check_malformed(c, sub, "%s: a response has body or json, not both",
		                             sub);
	}
	snprintf(sub, sizeof(sub), "%s.body", path);
	if (body && member_string(c, body, sub, 0, MODEL_MAX_RESPONSE_BYTES))
		return -1;
	snprintf(sub, sizeof(sub), "%s.json", path);
	if (js && model_check_json_value(c, js, sub))
		return -1;
	if ((status == 204 || status == 304) && (js || (body && json_string_length(body) > 0)))
		model_check_refuse(c, MODEL_E_INVALID, path,
		                   "%s: a %d response has no body; leave body and json out", path,
		                   (int)status);
	x = json_object_get(v, "headers");
	snprintf(sub, sizeof(sub), "%s.headers", path);
	if (x && check_headers(c, x, sub))
		return -1;
	*out = json_pack("{s:I}", "status", status);
	if (x)
		json_object_set_new(*out, "headers", json_deep_copy(x));
	if (body)
		json_object_set_new(*out, "body", json_deep_copy(body));
	if (js)
		json_object_set_new(*out, "json", json_deep_copy(js));
	return 0;
}

int model_http_mock_check(struct model_check *c, json_t *item, const char *prefix, json_t **out)
{
	json_t *part, *norm;
	char path[96];
	size_t i;

	*out = NULL;
	for (i = 0; foreign_fields[i]; i++) {
		if (!json_object_get(item, foreign_fields[i]))
			continue;
		snprintf(path, sizeof(path), "%s.%s", prefix, foreign_fields[i]);
		return model_check_malformed(c, path,
		                             "%s: a mock has one of resource, tool, http and llm; "
		                             "%s is not a member of an http or llm mock",
		                             path, foreign_fields[i]);
	}
	if (json_object_get(item, "http") && json_object_get(item, "llm")) {
		snprintf(path, sizeof(path), "%s.llm", prefix);
		return model_check_malformed(c, path, "%s: a mock has http or llm, not both", path);
	}
	if (json_object_get(item, "llm"))
		return model_llm_mock_check(c, item, prefix, out);
	if (check_http_part(c, json_object_get(item, "http"), prefix, &part))
		return -1;
	norm = json_pack("{s:o}", "http", part);
	if (model_http_check_answers(c, item, prefix, check_http_response, norm)) {
		json_decref(norm);
		return -1;
	}
	*out = norm;
	return 0;
}

int model_http_mock_spec_check(json_t *item, struct model_error *err)
{
	static const char *const spec_fields[] = {"http",    "llm",      "response", "sequence",
	                                          "variant", "delay_ms", NULL};
	struct model_check c;
	json_t *norm = NULL;

	memset(&c, 0, sizeof(c));
	c.err = err;
	if (!json_is_object(item) ||
	    (!json_object_get(item, "http") && !json_object_get(item, "llm")))
		return model_error_set(err, MODEL_E_MALFORMED, "mock",
		                       "mock must be an object with http or llm");
	if (model_check_keys(&c, item, "mock", spec_fields) ||
	    model_http_mock_check(&c, item, "mock", &norm))
		return -1;
	json_decref(norm);
	return model_check_done(&c);
}

/* ---- precedence and ambiguity ----------------------------------------------- */

/* A body condition's rank: 3 exact, 2 json_subset or regex, 1 none. */
static int body_rank(json_t *cond)
{
	if (!cond)
		return 1;
	return json_is_string(cond) ? 3 : 2;
}

/* Why http mocks a and b could tie, or NULL when they cannot. */
static const char *http_ambiguous(json_t *a, json_t *b)
{
	json_t *ha = json_object_get(a, "http"), *hb = json_object_get(b, "http");
	json_t *ba = json_object_get(ha, "body"), *bb = json_object_get(hb, "body");
	json_t *sa, *sb;

	if (!model_http_same_string(json_object_get(ha, "method"), json_object_get(hb, "method")) ||
	    !model_http_same_string(json_object_get(ha, "url"), json_object_get(hb, "url")) ||
	    !model_http_same_string(json_object_get(a, "variant"), json_object_get(b, "variant")) ||
	    body_rank(ba) != body_rank(bb))
		return NULL;
	switch (body_rank(ba)) {
	case 1:
		return "neither has a body condition: give one a body or a variant";
	case 3:
		return model_http_same_string(ba, bb)
		           ? "the same exact body: change one body or give one a variant"
		           : NULL;
	default:
		break;
	}
	if (json_object_get(ba, "regex") || json_object_get(bb, "regex"))
		return "a regex body could match what the other body condition matches: use an "
		       "exact body, or one regex, or a variant";
	sa = json_object_get(ba, "json_subset");
	sb = json_object_get(bb, "json_subset");
	if (model_mock_args_weight(sa) == model_mock_args_weight(sb) &&
	    model_http_compatible(sa, sb))
		return "json_subset bodies of the same weight that one body can hold both of: "
		       "add a key to one, or make a shared key's value differ";
	return NULL;
}

void model_http_mocks_check_ambiguity(struct model_check *c, json_t *mocks)
{
	size_t i, j, n = json_array_size(mocks);
	json_t *a, *b;
	const char *how;
	char path[32];

	for (j = 1; j < n; j++) {
		b = json_array_get(mocks, j);
		if (!json_object_get(b, "http") && !json_object_get(b, "llm"))
			continue;
		for (i = 0; i < j; i++) {
			a = json_array_get(mocks, i);
			how = NULL;
			if (json_object_get(a, "http") && json_object_get(b, "http"))
				how = http_ambiguous(a, b);
			else if (json_object_get(a, "llm") && json_object_get(b, "llm") &&
			         !model_llm_mock_ambiguous(a, b, &how))
				how = NULL;
			if (!how)
				continue;
			snprintf(path, sizeof(path), "mocks[%zu]", j);
			model_check_refuse(c, MODEL_E_INVALID, path,
			                   "%s could answer the same request as mocks[%zu] (%s); "
			                   "resolution must not be ambiguous",
			                   path, i, how);
			return;
		}
	}
}

/* ---- matching --------------------------------------------------------------- */

/* The request's body parsed as JSON, once (NULL when it is not JSON). */
struct parsed_body {
	const char *body;
	size_t len;
	int tried;
	json_t *json;
};

static json_t *body_json(struct parsed_body *pb)
{
	if (!pb->tried) {
		pb->tried = 1;
		pb->json = pb->len ? json_loadb(pb->body, pb->len, JSON_DECODE_ANY, NULL) : NULL;
	}
	return pb->json;
}

static int body_matches(json_t *cond, struct parsed_body *pb)
{
	json_t *x;

	if (!cond)
		return 1;
	if (json_is_string(cond))
		return json_string_length(cond) == pb->len &&
		       (pb->len == 0 || memcmp(json_string_value(cond), pb->body, pb->len) == 0);
	if ((x = json_object_get(cond, "regex")) != NULL)
		return model_http_regex_search(json_string_value(x), pb->body, pb->len);
	return body_json(pb) != NULL &&
	       model_mock_args_match(json_object_get(cond, "json_subset"), body_json(pb), 1);
}

static int same_cstr(json_t *s, const char *c)
{
	size_t n = strlen(c);

	return json_is_string(s) && json_string_length(s) == n &&
	       memcmp(json_string_value(s), c, n) == 0;
}

/* The http mock answering (method, normalized url, body): 1 with *index. */
static int http_find(json_t *mocks, const char *variant, const char *method, const char *url,
                     struct parsed_body *pb, size_t *index)
{
	json_t *m, *h, *cond;
	size_t i, best = 0;
	long long rank, best_rank = -1;
	int tier;

	json_array_foreach(mocks, i, m)
	{
		h = json_object_get(m, "http");
		if (!json_is_object(h) || !same_cstr(json_object_get(h, "method"), method) ||
		    !same_cstr(json_object_get(h, "url"), url))
			continue;
		tier = model_mock_variant_tier(m, variant);
		cond = json_object_get(h, "body");
		if (!tier || !body_matches(cond, pb))
			continue;
		rank = (long long)tier * 4000000000LL + (long long)body_rank(cond) * 1000000000LL +
		       (long long)model_mock_args_weight(json_object_get(cond, "json_subset"));
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	if (best_rank < 0)
		return 0;
	*index = best;
	return 1;
}

/* ---- answers ---------------------------------------------------------------- */

static int has_header(json_t *pairs, const char *name)
{
	json_t *p;
	size_t i;

	json_array_foreach(pairs, i, p)
	{
		if (strcasecmp(json_string_value(json_array_get(p, 0)), name) == 0)
			return 1;
	}
	return 0;
}

static void http_answer(json_t *resp, struct model_gateway_answer *a)
{
	json_t *h = json_object_get(resp, "headers"), *body = json_object_get(resp, "body");
	json_t *js = json_object_get(resp, "json"), *v;
	const char *k;
	char *text;

	a->status = json_is_integer(json_object_get(resp, "status"))
	                ? (int)json_integer_value(json_object_get(resp, "status"))
	                : 200;
	json_object_foreach(h, k, v)
	{
		json_array_append_new(a->headers, json_pack("[s,O]", k, v));
	}
	if (!has_header(a->headers, "Content-Type"))
		json_array_append_new(
		    a->headers, json_pack("[s,s]", "Content-Type",
		                          js ? "application/json" : "text/plain; charset=utf-8"));
	if (js) {
		text = json_dumps(js, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!text)
			abort();
		a->body = text;
		a->body_len = strlen(text);
	} else if (json_is_string(body)) {
		a->body = model_xmemdup(json_string_value(body), json_string_length(body));
		a->body_len = json_string_length(body);
	} else {
		a->body = model_xstrdup("");
		a->body_len = 0;
	}
}

char *model_http_miss_marker(const char *method, const char *url)
{
	size_t n = strlen("[[mock-miss:") + strlen(method) + 1 + strlen(url) + 3;
	char *p = model_xmalloc(n);

	snprintf(p, n, "[[mock-miss:%s %s]]", method, url);
	return p;
}

/* ---- near misses ------------------------------------------------------------ */

static void body_diff(json_t *near, json_t *cond, struct parsed_body *pb)
{
	json_t *x;

	if (json_is_string(cond)) {
		model_mock_text_diff(near, pb->body ? pb->body : "", pb->len,
		                     json_string_value(cond), json_string_length(cond));
	} else if ((x = json_object_get(cond, "regex")) != NULL) {
		json_object_set_new(near, "why", json_string("the body does not match the regex"));
		json_object_set_new(near, "regex", json_copy(x));
	} else if (!body_json(pb)) {
		json_object_set_new(near, "why", json_string("the body is not JSON"));
	} else if (!model_mock_args_diff(json_object_get(cond, "json_subset"), body_json(pb), 1,
	                                 "$", near)) {
		json_object_set_new(near, "why", json_string("different value"));
	}
}

/* The near miss of (method, url) against the http mocks (pb: the body). */
static json_t *http_near(json_t *mocks, const char *variant, const char *method, const char *url,
                         struct parsed_body *pb)
{
	json_t *m, *h, *u, *near;
	size_t i, ul = strlen(url), p, d, best_p = 0, best_d = 0;
	long same_both = -1, same_url = -1, best = -1;

	json_array_foreach(mocks, i, m)
	{
		h = json_object_get(m, "http");
		u = json_object_get(h, "url");
		if (!json_is_object(h) || !json_is_string(u) ||
		    !model_mock_variant_tier(m, variant))
			continue;
		if (same_cstr(u, url)) {
			if (same_cstr(json_object_get(h, "method"), method) && same_both < 0)
				same_both = (long)i;
			if (same_url < 0)
				same_url = (long)i;
		}
		for (p = 0;
		     p < ul && p < json_string_length(u) && url[p] == json_string_value(u)[p]; p++)
			;
		d = json_string_length(u) > ul ? json_string_length(u) - ul
		                               : ul - json_string_length(u);
		if (best < 0 || p > best_p || (p == best_p && d < best_d)) {
			best = (long)i;
			best_p = p;
			best_d = d;
		}
	}
	if (best < 0)
		return NULL;
	i = (size_t)(same_both >= 0 ? same_both : same_url >= 0 ? same_url : best);
	h = json_object_get(json_array_get(mocks, i), "http");
	near = json_pack("{s:I, s:O, s:O}", "mock", (json_int_t)i, "method",
	                 json_object_get(h, "method"), "url", json_object_get(h, "url"));
	if (same_both >= 0) {
		json_object_set_new(near, "differs", json_string("body"));
		body_diff(near, json_object_get(h, "body"), pb);
	} else if (same_url >= 0) {
		json_object_set_new(near, "differs", json_string("method"));
		json_object_set_new(near, "request_has", json_string(method));
		json_object_set_new(near, "mock_has", json_copy(json_object_get(h, "method")));
		json_object_set_new(near, "why", json_string("method differs"));
	} else {
		json_object_set_new(near, "differs", json_string("url"));
		u = json_object_get(h, "url");
		model_mock_text_diff(near, url, ul, json_string_value(u), json_string_length(u));
	}
	return near;
}

/* url normalized when it can be, else as given: a new string. */
static char *request_url(const char *url)
{
	const char *why;
	char *norm;

	if (model_http_url_normalize(url, strlen(url), &norm, &why) == 0)
		return norm;
	return model_xstrdup(url);
}

json_t *model_http_near_miss(json_t *mocks, const char *variant, const char *method,
                             const char *url, const char *body, size_t body_len)
{
	struct parsed_body pb = {body, body_len, 0, NULL};
	char *nurl = request_url(url);
	json_t *near = http_near(mocks, variant, method, nurl, &pb);

	json_decref(pb.json);
	free(nurl);
	return near;
}

/* ---- the trace and the resolution --------------------------------------------- */

/* s cut to at most max bytes at a character boundary: its new length. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* {"http": {"method", "url"}} with both cut, "truncated" when they were. */
static json_t *trace_head(const char *method, const char *url)
{
	size_t ml = strlen(method), ul = strlen(url);
	size_t ms = utf8_cut(method, ml, MODEL_MAX_HTTP_METHOD_BYTES);
	size_t us = utf8_cut(url, ul, MODEL_MAX_HTTP_URL_BYTES);
	json_t *e;

	/* a request's bytes may not be UTF-8: the trace is JSON text */
	e = json_pack("{s:{s:s%, s:s%}}", "http", "method", method, ms, "url", url, us);
	if (!e)
		e = json_pack("{s:{s:s, s:s}}", "http", "method", "(not UTF-8)", "url",
		              "(not UTF-8)");
	if (ms < ml || us < ul)
		json_object_set_new(e, "truncated", json_true());
	return e;
}

json_t *model_trace_http_refused(const char *method, const char *url, const char *reason)
{
	json_t *e = trace_head(method ? method : "", url ? url : "");
	size_t rl = strlen(reason ? reason : "");
	json_t *r = json_stringn(reason ? reason : "", utf8_cut(reason ? reason : "", rl, 512));

	json_object_set_new(e, "hit", json_false());
	json_object_set_new(e, "mock", json_null());
	json_object_set_new(e, "refused", r ? r : json_string("(not UTF-8)"));
	return e;
}

int model_http_header_is_credential(const char *name)
{
	static const char *const secret[] = {"authorization",
	                                     "proxy-authorization",
	                                     "cookie",
	                                     "set-cookie",
	                                     "www-authenticate",
	                                     "x-api-key",
	                                     "api-key",
	                                     "x-auth-token",
	                                     "x-goog-api-key",
	                                     "ocp-apim-subscription-key",
	                                     "x-amz-security-token",
	                                     NULL};
	const char *p;
	size_t k, len;

	for (p = name; *p == ' ' || *p == '\t'; p++)
		;
	len = strcspn(p, " \t");
	for (k = 0; secret[k]; k++)
		if (strlen(secret[k]) == len && strncasecmp(p, secret[k], len) == 0)
			return 1;
	return 0;
}

int model_http_header_is_hop(const char *name)
{
	static const char *const hop[] = {
	    "connection", "keep-alive",        "te",      "trailer",
	    "trailers",   "transfer-encoding", "upgrade", "content-length",
	};
	size_t i;

	if (strncasecmp(name, "proxy-", 6) == 0)
		return 1;
	for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (strcasecmp(name, hop[i]) == 0)
			return 1;
	return 0;
}

void model_gateway_answer_clear(struct model_gateway_answer *a)
{
	json_decref(a->headers);
	json_decref(a->trace);
	free(a->body);
	memset(a, 0, sizeof(*a));
}

int model_gateway_resolve(json_t *mocks, const char *variant, const char *method, const char *url,
                          json_t *headers, const char *body, size_t body_len, size_t *calls,
                          size_t seq, struct model_gateway_answer *a)
{
	struct parsed_body pb = {body, body_len, 0, NULL};
	json_t *m, *request = NULL, *near = NULL;
	char *nurl;
	size_t idx;
	int chat;

	(void)headers; /* no mock matches on request headers yet */
	memset(a, 0, sizeof(*a));
	a->headers = json_array();
	nurl = request_url(url);
	chat = strcmp(method, "POST") == 0 && model_http_is_chat_path(nurl);
	if (chat) {
		request = body_json(&pb);
		if (!json_is_object(request) ||
		    !json_is_array(json_object_get(request, "messages")))
			request = NULL;
	}
	if (request && model_llm_mock_find(mocks, variant, request, &idx)) {
		m = json_array_get(mocks, idx);
		model_llm_answer(model_http_mock_answer(m, calls ? calls[idx] : 0), request, seq,
		                 a);
		a->llm = 1;
		goto hit;
	}
	if (http_find(mocks, variant, method, nurl, &pb, &idx)) {
		m = json_array_get(mocks, idx);
		http_answer(model_http_mock_answer(m, calls ? calls[idx] : 0), a);
		goto hit;
	}
	a->status = 404;
	json_array_append_new(a->headers,
	                      json_pack("[s,s]", "Content-Type", "text/plain; charset=utf-8"));
	a->body = model_http_miss_marker(method, nurl);
	a->body_len = strlen(a->body);
	if (request)
		near = model_llm_near_miss(mocks, variant, request);
	if (!near)
		near = http_near(mocks, variant, method, nurl, &pb);
	a->trace = trace_head(method, nurl);
	json_object_set_new(a->trace, "status", json_integer(a->status));
	json_object_set_new(a->trace, "hit", json_false());
	json_object_set_new(a->trace, "mock", json_null());
	json_object_set_new(a->trace, "near_miss", near ? near : json_null());
	goto out;
hit:
	a->hit = 1;
	a->mock = idx;
	a->delay_ms = model_mock_delay_ms(m);
	if (calls)
		calls[idx]++;
	a->trace = trace_head(method, nurl);
	json_object_set_new(a->trace, "status", json_integer(a->status));
	json_object_set_new(a->trace, "hit", json_true());
	json_object_set_new(a->trace, "mock", json_integer((json_int_t)idx));
	if (a->llm)
		json_object_set_new(a->trace, "llm", json_true());
out:
	json_decref(pb.json);
	free(nurl);
	return 0;
}
