/*
 * The gateway's egress (runner/gateway.h, runner_gateway_forward): one
 * request sent upstream with a libcurl easy handle, bounded in time and
 * in size, for an answer hook whose policy allows it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/http_mock.h"
#include "runner/gateway_internal.h"

struct fwd {
	struct model_buf body;
	int over; /* the body crossed RUNNER_GATEWAY_MAX_RESPONSE */
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct fwd *f = arg;
	size_t n = size * nmemb;

	if (model_buf_add(&f->body, ptr, n) != 0) {
		f->over = 1;
		return 0; /* libcurl ends the transfer: CURLE_WRITE_ERROR */
	}
	return n;
}

/* Whether the request header name is one never sent upstream: the
 * hop-by-hop ones, those the request's Connection header names, and the
 * ones libcurl sets itself from the url and the body. */
static int skip_header(const char *name, json_t *headers)
{
	size_t i;
	json_t *h;

	if (model_http_header_is_hop(name) || strcasecmp(name, "host") == 0 ||
	    strcasecmp(name, "expect") == 0)
		return 1;
	json_array_foreach(headers, i, h)
	{
		const char *v = json_string_value(json_array_get(h, 1));
		size_t len = strlen(name);
		const char *p;

		if (strcasecmp(json_string_value(json_array_get(h, 0)), "connection") != 0 ||
		    v == NULL)
			continue;
		/* a comma-separated list of names */
		for (p = v; *p != '\0'; p += strcspn(p, ",")) {
			p += strspn(p, ", \t");
			if (strncasecmp(p, name, len) == 0 && strchr(", \t", p[len]) != NULL)
				return 1;
		}
	}
	return 0;
}

/* Append [name, value] pairs of headers to list as "Name: value" lines
 * (an empty value as "Name;", libcurl's way to send one), skipping what
 * skip_header says when request is not NULL. */
static struct curl_slist *add_headers(struct curl_slist *list, json_t *headers, json_t *request)
{
	struct model_buf line;
	struct curl_slist *next;
	size_t i;
	json_t *h;

	model_buf_init(&line, RUNNER_GATEWAY_MAX_HEAD + 4);
	json_array_foreach(headers, i, h)
	{
		const char *n = json_string_value(json_array_get(h, 0));
		const char *v = json_string_value(json_array_get(h, 1));

		if (n == NULL || v == NULL || (request != NULL && skip_header(n, request)))
			continue;
		model_buf_reset(&line);
		if (model_buf_printf(&line, v[0] == '\0' ? "%s;" : "%s: %s", n, v) != 0)
			continue;
		next = curl_slist_append(list, line.data);
		if (next == NULL) {
			fprintf(stderr, "olivares: out of memory (gateway egress headers)\n");
			abort();
		}
		list = next;
	}
	model_buf_release(&line);
	return list;
}

/* The response's headers (the last response's, not a 100 Continue's),
 * the hop-by-hop ones and Content-Length dropped. */
static json_t *response_headers(CURL *h)
{
	struct curl_header *prev;
	struct curl_header *hd;
	json_t *out;

	out = json_array();
	prev = NULL;
	while ((hd = curl_easy_nextheader(h, CURLH_HEADER, -1, prev)) != NULL) {
		prev = hd;
		if (model_http_header_is_hop(hd->name))
			continue;
		/* a header that is not UTF-8 cannot be held: it is dropped */
		json_array_append_new(out, json_pack("[ss]", hd->name, hd->value));
	}
	return out;
}

int runner_gateway_forward_ca(const struct runner_gateway_request *rq, json_t *extra_headers,
                              long timeout_ms, const char *ca_file,
                              struct runner_gateway_response *rs, char *why, size_t why_len)
{
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *list;
	struct fwd f;
	CURLcode cc;
	long status;
	CURL *h;
	int rc;

	rc = -1;
	list = NULL;
	memset(rs, 0, sizeof(*rs));
	model_buf_init(&f.body, RUNNER_GATEWAY_MAX_RESPONSE);
	f.over = 0;
	errbuf[0] = '\0';
	h = curl_easy_init();
	if (h == NULL) {
		snprintf(why, why_len, "egress: no libcurl handle");
		goto out;
	}
	/* no 100-continue round trip: the body is here whole */
	list = curl_slist_append(list, "Expect:");
	list = add_headers(list, rq->headers, rq->headers);
	list = add_headers(list, extra_headers, NULL);
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)RUNNER_GATEWAY_MAX_RESPONSE);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	if (strcmp(rq->method, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (rq->body_len > 0 ||
	           (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "DELETE") != 0 &&
	            strcmp(rq->method, "OPTIONS") != 0)) {
		/* a method with a body: sent as is, with its length */
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body != NULL ? rq->body : "");
	}
	if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0 &&
	    strcmp(rq->method, "POST") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	cc = curl_easy_perform(h);
	if (f.over || cc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(why, why_len, "egress: %s: response body over %d bytes", rq->url,
		         RUNNER_GATEWAY_MAX_RESPONSE);
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(why, why_len, "egress: %s: %s", rq->url,
		         errbuf[0] != '\0' ? errbuf : curl_easy_strerror(cc));
		goto out;
	}
	status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	rs->status = (int)status;
	rs->headers = response_headers(h);
	rs->body = model_buf_detach(&f.body, &rs->body_len);
	rc = 0;
out:
	model_buf_release(&f.body);
	curl_slist_free_all(list);
	if (h != NULL)
		curl_easy_cleanup(h);
	return rc;
}

int runner_gateway_forward(const struct runner_gateway_request *rq, json_t *extra_headers,
                           long timeout_ms, struct runner_gateway_response *rs, char *why,
                           size_t why_len)
{
	return runner_gateway_forward_ca(rq, extra_headers, timeout_ms, NULL, rs, why, why_len);
}
