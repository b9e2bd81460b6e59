#ifndef OLIVARES_RUNNER_GATEWAY_ENV_H
#define OLIVARES_RUNNER_GATEWAY_ENV_H
/**
 * Where a run's gateway (runner/gateway.h) is, as the agent sees it: the
 * same on every OS-level backend, so an agent never needs to know which
 * one it runs on.
 *
 * The agent reaches the gateway at 127.0.0.1:RUNNER_GATEWAY_PORT of its
 * jail's own network; nothing else is reachable there. The directory
 * RUNNER_GATEWAY_JAIL_DIR, bound read-only, holds the run's CA
 * certificate (RUNNER_GATEWAY_CA_FILE, never its key). The environment
 * entries below point the standard clients at both: Python's urllib and
 * requests, curl, Node and the official OpenAI clients read them.
 * OPENAI_API_KEY is a placeholder (the official clients refuse to start
 * without one); nothing checks it, and no real key is ever in the jail.
 */
#define RUNNER_GATEWAY_PORT 3128
#define RUNNER_GATEWAY_JAIL_DIR "/olivares/gateway"
#define RUNNER_GATEWAY_CA_FILE "ca.pem"
/* gvisor only: the gateway's unix socket in that directory, which the
 * sandbox's relay (agents/agent-exec.c) connects each of its connections
 * to (the sandbox has a network stack of its own, out of the host's
 * reach, so no socket can be handed in as on namespaces). */
#define RUNNER_GATEWAY_SOCK_FILE "gateway.sock"
#define RUNNER_GATEWAY_SOCK_PATH RUNNER_GATEWAY_JAIL_DIR "/" RUNNER_GATEWAY_SOCK_FILE
#define RUNNER_GATEWAY_URL "http://127.0.0.1:3128"
#define RUNNER_GATEWAY_CA_PATH RUNNER_GATEWAY_JAIL_DIR "/" RUNNER_GATEWAY_CA_FILE
#define RUNNER_GATEWAY_OPENAI_KEY "sk-olivares-sandbox-placeholder"
/* The run's directory on the host: TMPDIR (or /tmp) /
 * RUNNER_GATEWAY_DIR_PREFIX <runner's pid> -XXXXXX (runner/gateway_run.c
 * sweeps those of runners that are gone). */
#define RUNNER_GATEWAY_DIR_PREFIX "olivares-gateway-"
/* Connections the jail's kernel queues for the gateway before it accepts. */
#define RUNNER_GATEWAY_BACKLOG 64

/** The agent's environment entries for the gateway (NUL-terminated strings,
 * a list to put in an initializer). */
#define RUNNER_GATEWAY_ENV                                                                         \
	"HTTP_PROXY=" RUNNER_GATEWAY_URL, "http_proxy=" RUNNER_GATEWAY_URL,                        \
	    "HTTPS_PROXY=" RUNNER_GATEWAY_URL, "https_proxy=" RUNNER_GATEWAY_URL,                  \
	    "OLIVARES_GATEWAY_URL=" RUNNER_GATEWAY_URL, "SSL_CERT_FILE=" RUNNER_GATEWAY_CA_PATH,   \
	    "REQUESTS_CA_BUNDLE=" RUNNER_GATEWAY_CA_PATH,                                          \
	    "CURL_CA_BUNDLE=" RUNNER_GATEWAY_CA_PATH,                                              \
	    "NODE_EXTRA_CA_CERTS=" RUNNER_GATEWAY_CA_PATH,                                         \
	    "OPENAI_API_KEY=" RUNNER_GATEWAY_OPENAI_KEY

#endif
