#ifndef OLIVARES_RUNNER_GATEWAY_H
#define OLIVARES_RUNNER_GATEWAY_H
/**
 * The per-run HTTP(S) gateway: an HTTP/1.1 forward proxy that the agent
 * reaches as its HTTP_PROXY and HTTPS_PROXY, run by olivares-runner outside
 * the agent's jail, one per run. It answers nothing itself: every request
 * it has parsed whole goes to the caller's answer hook (the scenario's
 * mocks, or an allowed egress through runner_gateway_forward), and every
 * request it cannot take goes to the refused hook with a one-line reason,
 * after a clear answer to the client.
 *
 * What it speaks, on each accepted stream socket (TCP or unix):
 *  - requests in absolute form ("GET http://host/path HTTP/1.1", what a
 *    client sends to a proxy) and in origin form ("GET /v1/x" with a Host
 *    header: the url is "http://<Host>/v1/x");
 *  - keep-alive, Content-Length and chunked request bodies (de-chunked);
 *    answers always carry Content-Length (none for 1xx, 204 and 304);
 *  - "CONNECT host:443": "200 Connection established", then a TLS server
 *    with a leaf certificate for that host signed by the run's CA (made on
 *    first use, cached per host), then the same HTTP/1.1 inside the
 *    tunnel with scheme "https"; the url's authority is the CONNECT's
 *    (the host the certificate is for), whatever the Host header says.
 * Parsing is llhttp's (Debian's node-llhttp sources), urls OpenSSL's
 * (OSSL_parse_url), TLS OpenSSL's: the server needs no libcurl, only
 * runner_gateway_forward does.
 *
 * Refusals (answered, then the connection is closed, and `refused` called):
 * a malformed request 400, a head over RUNNER_GATEWAY_MAX_HEAD or with
 * more than RUNNER_GATEWAY_MAX_HEADERS headers 431, a body over
 * RUNNER_GATEWAY_MAX_BODY 413, any Upgrade header 501, the HTTP/2 preface
 * ("PRI * HTTP/2.0") 505, CONNECT to a port other than 443 403, more
 * connections than RUNNER_GATEWAY_MAX_CONNS 503, a request cut by the idle
 * timeout 408. A TLS handshake that fails after CONNECT cannot be
 * answered: it is closed and reported with OpenSSL's reason. Every
 * refusal's body is one line "[[gateway-refused:<reason>]]\n".
 *
 * Threads: one accept thread plus one per connection. Every wait on a
 * socket is bounded by the idle timeout and woken by runner_gateway_stop,
 * so stop returns promptly whatever the clients do; the hooks are not
 * interrupted (an answer hook bounds its own time: runner_gateway_forward
 * has a timeout). The gateway's threads block every signal but the
 * synchronous ones, so the runner's handlers run on its own threads and a
 * write to a closed peer is EPIPE, never SIGPIPE.
 *
 * Allocation follows model/alloc.h (out of memory aborts).
 */
#include <stddef.h>

#include <jansson.h>

#include "runner/error.h"

/* ---- where the jail finds it ------------------------------------------- */

/* The agent's proxy, 127.0.0.1:RUNNER_GATEWAY_PORT inside its jail, and
 * the jail's directory of the gateway's files: runner/gateway_env.h. */
#include "runner/gateway_env.h"

/* ---- bounds ------------------------------------------------------------- */

/* A request's head: method, target and header names and values, bytes
 * (431 over it). 64 KiB is far above what clients send (curl's own cap on
 * a response head is 100 KiB; nginx's default is 8 KiB per line). */
#define RUNNER_GATEWAY_MAX_HEAD (64 * 1024)
/* Headers of one request (431 over it). */
#define RUNNER_GATEWAY_MAX_HEADERS 128
/* A request's decoded body, bytes (413 over it): the service's own request
 * limit, so nothing an agent sends is bigger than what a scenario holds. */
#define RUNNER_GATEWAY_MAX_BODY (1024 * 1024)
/* A response's body, bytes: an answer hook's over it is a 502, and
 * runner_gateway_forward fails past it. */
#define RUNNER_GATEWAY_MAX_RESPONSE (4 * 1024 * 1024)
/* Connections served at once (the next is answered 503 and closed): an
 * agent's pool of keep-alive connections, a few per host. */
#define RUNNER_GATEWAY_MAX_CONNS 32
/* Requests on one connection: the last is answered with "Connection:
 * close", so a client cannot hold one thread forever by itself. */
#define RUNNER_GATEWAY_MAX_REQUESTS 1000
/* The default idle timeout, ms: the longest wait for a client's next
 * bytes (or for room to write), between requests as within one. */
#define RUNNER_GATEWAY_IDLE_MS 30000
/* The longest delay_ms an answer may ask for (longer is cut to it). */
#define RUNNER_GATEWAY_MAX_DELAY_MS (10 * 60 * 1000)
/* Hosts with a leaf certificate (CONNECT to one more is refused 403). */
#define RUNNER_GATEWAY_MAX_HOSTS 256
/* After a refusal, how long the gateway reads and drops what the client
 * still sends before it closes (so the answer is not lost to a reset), ms,
 * and at most how many bytes. */
#define RUNNER_GATEWAY_LINGER_MS 1000
#define RUNNER_GATEWAY_LINGER_BYTES (2 * 1024 * 1024)

/* ---- requests and answers ------------------------------------------------ */

/**
 * One request, as the hooks see it. Every pointer is borrowed, valid for
 * the call only. In a `refused` call, fields not known yet are NULL (0 for
 * port, body_len).
 */
struct runner_gateway_request {
	const char *method; /* "GET", "POST", "CONNECT"... as llhttp names it */
	/* absolute: scheme://host[:port]/path[?query], the scheme's default
	 * port left out, host lower-case, path and query as sent */
	const char *url;
	const char *scheme; /* "http" | "https" */
	const char *host;   /* lower-case, no port; IPv6 in brackets */
	int port;           /* the port asked for, default ones included */
	json_t *headers;    /* array of [name, value] as sent, in order */
	const char *body;   /* the decoded body (chunked requests de-chunked);
	                     * NUL-terminated past body_len, never NULL when
	                     * answered */
	size_t body_len;
};

/**
 * One answer, filled by an answer hook (zeroed before the call). The
 * gateway frees it (headers json_decref, body free) whatever the hook
 * returned.
 */
struct runner_gateway_response {
	int status;      /* 100..599 (anything else is answered 502) */
	json_t *headers; /* owned: array of [name, value] strings, or NULL;
	                  * Content-Length, Transfer-Encoding, Connection and the
	                  * other hop-by-hop headers are dropped (the gateway
	                  * frames the answer itself) */
	char *body;      /* malloc'd, owned, or NULL */
	size_t body_len; /* at most RUNNER_GATEWAY_MAX_RESPONSE (over: 502) */
	long delay_ms;   /* wait before answering (cut short by stop, which
	                  * then closes without answering) */
};

struct runner_gateway_hooks {
	/**
	 * Answer one request: 0 with *rs filled, or -1, and the gateway
	 * answers 502 with the body "[[gateway-error]]". May be called from
	 * several threads at once. Required.
	 */
	int (*answer)(void *ctx, const struct runner_gateway_request *rq,
	              struct runner_gateway_response *rs);
	/**
	 * A request refused before it could be answered (the connection is
	 * closed after it), with a one-line reason; rq holds what is known.
	 * May be called from several threads at once, and from the accept
	 * thread. Optional (NULL).
	 */
	void (*refused)(void *ctx, const struct runner_gateway_request *rq, const char *reason);
	void *ctx;
	/* The idle timeout, ms; 0 for RUNNER_GATEWAY_IDLE_MS. */
	long idle_ms;
};

/* ---- the run's CA ------------------------------------------------------- */

/**
 * A per-run certificate authority: an EC P-256 key and a self-signed
 * certificate (CA:TRUE, key usage keyCertSign, valid from an hour ago for
 * 7 days, a random serial and a random name), in memory. The key never
 * leaves memory: nothing writes it anywhere, and runner_gateway_ca_free
 * frees it; only the certificate is written out. Leaf keys are the same:
 * one EC P-256 key per gateway, freed by runner_gateway_stop.
 */
struct runner_gateway_ca;

/**
 * Start OpenSSL for a gateway process that reaches no host outside: its
 * built-in defaults (the default provider, which has every algorithm the
 * CA and the TLS server use), without reading the system's configuration
 * file and without registering its cleanup at exit (the process is killed
 * at the run's end; its memory goes with it). The server sets what it
 * needs itself (TLS 1.2 at least), so no system setting changes what the
 * agent sees. Call once, first thing in main, before any other OpenSSL
 * call: a later call, or one made by a library (libcurl's), would start it
 * with the configuration file. Returns 0, or -1 with *err
 * (RUNNER_E_INTERNAL, OpenSSL's reason).
 */
int runner_gateway_openssl_init(struct runner_error *err);

/** A new CA, or NULL with *err filled (RUNNER_E_INTERNAL, OpenSSL's reason). */
struct runner_gateway_ca *runner_gateway_ca_new(struct runner_error *err);

/**
 * Write the CA's certificate (PEM, the certificate only) to path, mode
 * 0644, replacing a file there (a symlink there is refused). 0, or -1 with
 * *err filled (RUNNER_E_SETUP, the path and errno named).
 */
int runner_gateway_ca_write_pem(const struct runner_gateway_ca *ca, const char *path,
                                struct runner_error *err);

/** The CA's certificate as PEM text, malloc'd and NUL-terminated (caller
 * frees); *len, if not NULL, its length. Aborts only when out of memory. */
char *runner_gateway_ca_pem(const struct runner_gateway_ca *ca, size_t *len);

/** Free the CA and its key. NULL is ignored. A gateway started with it
 * must be stopped first. */
void runner_gateway_ca_free(struct runner_gateway_ca *ca);

/* ---- the server ----------------------------------------------------------- */

struct runner_gateway;

/**
 * Serve on listen_fd, a listening stream socket (TCP or unix), which the
 * gateway owns from here on (closed by stop, or on failure). ca is
 * borrowed and must outlive the gateway; NULL refuses every CONNECT (403).
 * hooks is copied; its ctx must outlive the gateway.
 *
 * The gateway or NULL with *err filled: RUNNER_E_SETUP when listen_fd is
 * not a listening stream socket, RUNNER_E_INTERNAL when a thread or a TLS
 * context cannot be made.
 */
struct runner_gateway *runner_gateway_start(int listen_fd, struct runner_gateway_ca *ca,
                                            const struct runner_gateway_hooks *hooks,
                                            struct runner_error *err);

/**
 * Stop: wake every thread (a client sending nothing, a client mid-body, an
 * answer waiting out its delay_ms), close every connection and the
 * listening socket, join the threads and free the gateway with its leaf
 * keys and certificates. Returns once a running answer hook has returned.
 * NULL is ignored.
 */
void runner_gateway_stop(struct runner_gateway *gw);

/* ---- egress ---------------------------------------------------------------- */

/**
 * Forward rq upstream with libcurl and fill *rs with the answer; used by an
 * answer hook when policy allows (the gateway itself never forwards). One
 * easy handle per call, no proxy (the environment's is ignored), no
 * redirect followed, http and https only, TLS verified against the system
 * CAs. Sent: rq's method, url and body, its headers but the hop-by-hop
 * ones (Connection and those it names, Keep-Alive, TE, Trailer,
 * Transfer-Encoding, Upgrade), Proxy-*, Host, Content-Length and Expect;
 * then extra_headers (array of [name, value], NULL for none). Received:
 * the status, the headers but the hop-by-hop ones and Content-Length, the
 * body (as sent: no content decoding) up to RUNNER_GATEWAY_MAX_RESPONSE.
 * The whole exchange is cut at timeout_ms (at least 1).
 *
 * libcurl must have been initialised (curl_global_init) before the
 * gateway's threads run; the call is thread-safe otherwise.
 *
 * 0, or -1 with why (one line, cut to why_len) and *rs left empty.
 */
int runner_gateway_forward(const struct runner_gateway_request *rq, json_t *extra_headers,
                           long timeout_ms, struct runner_gateway_response *rs, char *why,
                           size_t why_len);

/**
 * runner_gateway_forward, verifying TLS against the PEM file ca_file
 * instead of the system CAs when it is not NULL (tests, a private CA).
 */
int runner_gateway_forward_ca(const struct runner_gateway_request *rq, json_t *extra_headers,
                              long timeout_ms, const char *ca_file,
                              struct runner_gateway_response *rs, char *why, size_t why_len);

#endif
