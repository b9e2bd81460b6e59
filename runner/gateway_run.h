#ifndef OLIVARES_RUNNER_GATEWAY_RUN_H
#define OLIVARES_RUNNER_GATEWAY_RUN_H
/**
 * A run's gateway, as an OS-level backend uses it: olivares-gateway
 * (runner/gateway_main.c, beside the runner), a process of its own per
 * run that serves the jail's gateway socket from outside the jail and
 * answers from the spec's mocks (model/http_mock.h).
 *
 * Why a process: it links OpenSSL and libcurl, which the runner (static,
 * and the one process that drives the agent) does without, and the HTTP
 * it parses comes from the agent: a crash there ends the gateway, never
 * the runner (the agent then sees its connections refused, and every
 * request it made before is in the trace).
 *
 * A run has a gateway when its spec has an http or llm mock, or says
 * "gateway": true (model/runspec.h). The wire, runner to gateway:
 *   argv   olivares-gateway --dir DIR
 *   fd 0   {"mocks": [...], "variant": string|null, "egress_allow": [...]|null,
 *           "record": bool (each answer kept in its entry: model/record.h),
 *          "egress_secrets"?: path (the egress build only: the file it
 *          reads its hosts' headers from, runner/gateway_secrets.h)}, then
 *          end of file
 *   fd 3   a unix seqpacket socket, the channel of its listening socket:
 *          the gateway starts before the jail stands (its libraries
 *          loaded, OpenSSL started, the CA made and written while the jail
 *          is built), then waits there for one message of one byte that
 *          carries the listening socket (SCM_RIGHTS; TCP in the jail's
 *          network on namespaces, unix in DIR on gvisor), and serves it.
 *          End of file there before the socket came (a jail that failed,
 *          a runner gone): as SIGTERM. A gateway that cannot start says
 *          so ("error" below) and leaves DIR to the runner.
 *   fd 1   one JSON object a line:
 *          {"type":"ready"}       DIR/RUNNER_GATEWAY_CA_FILE is written
 *                                 and the socket it was handed served
 *          {"type":"request","entry":E}  one request, E its trace entry
 *                                 (model/mock.h), written before its
 *                                 answer is sent
 *          {"type":"error","message":M}  it could not start
 *   SIGTERM (its parent-death signal): it stops serving, removes DIR and
 *   exits; at the run's end the runner kills it and removes DIR itself.
 *   The run's CA key, which never left its memory, goes with it.
 *   A spec with egress hosts gets olivares-gateway-egress (the same
 *   program with libcurl, which forwards), any other olivares-gateway.
 * A runner forked by a fork server (runner/serve.h) gets its gateway
 * from the gateway server instead, `olivares-gateway --serve`, which the
 * fork server started once (its libraries loaded, OpenSSL started) and
 * whose socket the runner holds at runner_gateway_server_fd (runner/serve.h): one message
 * of DIR (NUL-terminated) with the three descriptors above, fds 0, 1 and
 * 3, taken by a spare of that server that has made its CA already. The
 * spare answers on fd 3 first, with a pidfd of itself (one byte,
 * SCM_RIGHTS): it is not the runner's child, so the runner kills it and
 * waits for its end through that. Such a gateway also stops when its
 * runner is gone: the read end of its fd 1 closed. A spec with egress
 * hosts, and a runner without the server (started by exec, or a server
 * that is down), fork and exec the program as above: the same gateway.
 * Because an entry is written before its answer, an agent that waits for
 * an answer before it ends its step finds the request in that step's
 * trace, whatever the timing.
 *
 * The backend calls, in order:
 *   runner_gateway_run_prepare  the run's directory (bound read-only in
 *                               the jail at RUNNER_GATEWAY_JAIL_DIR)
 *   runner_gateway_run_start    the gateway started, before the jail: it
 *                               makes its CA and writes its certificate
 *                               to the directory meanwhile
 *   runner_gateway_run_hand     once the jail's socket exists: handed over
 *   runner_gateway_run_ready    before the first step: its "ready" line
 *   (runner_gateway_run_serve is hand, then ready)
 *   (the driver polls runner_gateway_run_fd, drains it, and takes the
 *    entries into the step they came in)
 *   runner_gateway_run_finish   after the jail is gone: the gateway
 *                               stopped and reaped, the directory removed
 */
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/buf.h"
#include "runner/backend.h"
#include "runner/error.h"

struct runner_gateway_run {
	const struct runner_spec *spec;
	char dir[PATH_MAX];    /* the run's directory, "" when there is none */
	int sock_made;         /* dir holds RUNNER_GATEWAY_SOCK_FILE */
	pid_t pid;             /* the gateway, -1 when none or reaped */
	int out;               /* its fd 1 (read end, non-blocking), -1 when closed */
	int chan;              /* the runner's end of its fd 3, -1 once the socket went */
	struct model_buf in;   /* what came on out, not yet a whole line */
	json_t *pending;       /* entries read, not yet taken into a step */
	int missed;            /* one of them missed or was refused */
	int broken;            /* a line from the gateway that is not its wire */
	long requests;         /* every request of the run */
	long egress;           /* those the gateway forwarded outside (an "egress" entry) */
	long dropped;          /* entries not kept since the last take: over a step's worth */
	size_t recorded_bytes; /* the run's "record" members so far (model/record.h) */
	int lost;              /* it stopped on its own while the run went on */
	int served;            /* taken by a spare of the gateway server */
	int pidfd;             /* that spare's pidfd once it said, else -1 */
};

/**
 * Make g's directory (mode 0755, under TMPDIR or /tmp). g is the
 * caller's memory, filled here; spec borrowed, must outlive g. Returns 0,
 * or -1 with *err (RUNNER_E_SETUP); g is then safe to finish.
 */
int runner_gateway_run_prepare(struct runner_gateway_run *g, const struct runner_spec *spec,
                               struct runner_error *err);

/**
 * gvisor: a unix stream socket listening at RUNNER_GATEWAY_SOCK_FILE in
 * g's directory, into *fd (the caller's, to hand to serve). Returns 0, or
 * -1 with *err.
 */
int runner_gateway_run_listen_unix(struct runner_gateway_run *g, int *fd, struct runner_error *err);

/**
 * Start olivares-gateway for g (prepared): forked and exec'd with its
 * mocks written to it, without waiting; it then makes the run's CA and
 * writes its certificate to g's directory while the caller builds the
 * jail, and waits for its socket (runner_gateway_run_hand). Returns 0, or
 * -1 with *err (RUNNER_E_SETUP, or RUNNER_E_MISSING when the program is
 * not beside the runner); g is safe to finish either way, which stops a
 * started gateway.
 */
int runner_gateway_run_start(struct runner_gateway_run *g, struct runner_error *err);

/**
 * Hand the started gateway of g its listening socket listen_fd (closed
 * here, whatever happens), once: the channel is closed after it. Returns
 * 0, or -1 with *err (RUNNER_E_SETUP: not started, or the gateway has
 * gone).
 */
int runner_gateway_run_hand(struct runner_gateway_run *g, int listen_fd, struct runner_error *err);

/**
 * Wait until the gateway of g, handed its socket, says it is ready: at
 * most RUNNER_GATEWAY_START_MS from now and never past deadline_ms.
 * Returns 0, or -1 with *err (RUNNER_E_SETUP with its own reason when it
 * could not start, RUNNER_E_TIMEOUT).
 */
int runner_gateway_run_ready(struct runner_gateway_run *g, long long deadline_ms,
                             struct runner_error *err);

/**
 * runner_gateway_run_hand, then runner_gateway_run_ready. When the hand
 * fails, *err is the gateway's own reason if it gave one (it had failed
 * to start) rather than the channel's. Returns 0 or -1 as they do.
 */
int runner_gateway_run_serve(struct runner_gateway_run *g, int listen_fd, long long deadline_ms,
                             struct runner_error *err);

/** The descriptor to poll for the gateway's lines, or -1. */
int runner_gateway_run_fd(const struct runner_gateway_run *g);

/** Read what the gateway wrote so far (non-blocking) into its pending
 * entries. */
void runner_gateway_run_drain(struct runner_gateway_run *g);

/**
 * Drain, then move the pending entries into trace (the current step's),
 * while it holds fewer than RUNNER_AGENT_MAX_REQUESTS; sets *missed when
 * one of them missed. Returns 0, or -1 when the step asked for more
 * requests than that (the driver fails it as an agent error) or the
 * gateway broke its wire (reason in *why, when why is not NULL).
 */
int runner_gateway_run_take(struct runner_gateway_run *g, json_t *trace, int *missed,
                            const char **why);

/**
 * The requests that came while no step was running (after a step's
 * output, before the next step, after the last): they belong to no step,
 * so they go to the run's log, one line each, into buf (n bytes, NUL-
 * terminated; what does not fit is cut at a line), and leave the pending
 * entries (their egress stays counted). Returns the bytes written.
 */
size_t runner_gateway_run_outside(struct runner_gateway_run *g, char *buf, size_t n);

/**
 * Stop the gateway (SIGKILL: the run is over and its lines read), reap
 * it, remove the directory. Harmless on a g that prepare failed on,
 * and twice. Returns 0, or -1 when the gateway could not be reaped or the
 * directory removed (the run then reports left_behind).
 */
int runner_gateway_run_finish(struct runner_gateway_run *g);

/**
 * At the end of the drive, before the jail is torn down: g->lost when the
 * gateway's output has come to its end (it crashed or was killed while
 * the run went on). The summary says it ("gateway_lost").
 */
void runner_gateway_run_check_lost(struct runner_gateway_run *g);

/**
 * The end of a backend's run with a gateway: finish g, and tell sum (its
 * gateway and egress count; left_behind when finish failed). Harmless
 * without a gateway (g never prepared).
 */
void runner_gateway_run_end(struct runner_gateway_run *g, struct runner_summary *sum);

#endif
