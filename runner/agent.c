/*
 * The agent driver (runner/agent.h): the runner's side of the JSON-lines
 * protocol with an agent program running inside an OS-level backend.
 *
 * The agent is untrusted. Everything it says is parsed strictly (one JSON
 * object per line, known types and keys only, at most
 * RUNNER_AGENT_MAX_LINE bytes a line, at most RUNNER_AGENT_MAX_REQUESTS
 * requests, resource and tool, a step), every wait is bounded by the run's deadline,
 * and the only thing it can learn through this channel is what the
 * scenario's mocks say. Writes to the agent are non-blocking and polled, so
 * an agent that stops reading cannot stall the runner past the deadline;
 * SIGPIPE is ignored so an agent that dies mid-write is an agent error, not
 * the runner's death.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/mock.h"
#include "model/scenario.h"
#include "runner/agent.h"
#include "runner/backend.h"
#include "runner/gateway_run.h"

long long runner_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long runner_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long runner_step_us(long long start_ns)
{
	long long ns = runner_now_ns() - start_ns;

	return ns > 0 ? (ns + 999) / 1000 : 0;
}

static int write_line(FILE *out, json_t *line);

/* State of one drive: the pipes, the line reader, the deadline. */
struct drive {
	const struct runner_spec *spec;
	int to_agent;
	int from_agent;
	long long deadline_ms;
	long long step_start_ns; /* runner_now_ns() just before the step's input is sent */
	long long outcome_us;    /* -1, or the step's duration fixed when its outcome was
	                          * known before the reason was (ended() may wait) */
	struct runner_agent_io *io;
	struct model_buf in; /* bytes read from the agent, not yet a full line */
	int eof;
	struct runner_error limit; /* the whole-run bound reached (WAIT_LIMIT) */
	json_t *trace;             /* the step's requests so far (model/mock.h) */
	size_t *calls;             /* per mock: the tool calls it answered (sequences) */
	int agent_said;            /* the agent failed the step itself ("error" line): its
	                            * message is the reason, its log is not quoted */
};

/* Why a wait ended without what it waited for. WAIT_LIMIT: a whole-run
 * bound was reached (io->check, d->limit says which). */
enum wait_end { WAIT_OK = 0, WAIT_DEADLINE, WAIT_EOF, WAIT_ERROR, WAIT_LIMIT };

/* The run's whole-run bounds, read now (force) or when due: 0, or -1 with
 * d->limit set. */
static int bounds_reached(struct drive *d, int force)
{
	if (!d->io || !d->io->check)
		return 0;
	return d->io->check(d->io->check_ctx, force, &d->limit);
}

/* What the log says that its lines have not said yet, as one log line
 * (model/runspec.h) to io->log_out: when forced (before a step line, at
 * the end), else once RUNNER_AGENT_LOG_LINE bytes wait or
 * RUNNER_AGENT_LOG_EVERY_MS passed since the last one, so that an agent
 * writing a byte at a time makes few lines, not one a byte. */
static void log_emit(struct runner_agent_io *io, int force)
{
	struct model_runlog *l = &io->log;
	long long now;
	json_t *line;

	if (!io->log_on || !io->log_out ||
	    (l->text.len == io->log_sent && l->dropped == io->log_dropped_sent))
		return;
	now = runner_now_ms();
	if (!force && l->text.len - io->log_sent < RUNNER_AGENT_LOG_LINE &&
	    now - io->log_emitted_ms < RUNNER_AGENT_LOG_EVERY_MS)
		return;
	io->log_emitted_ms = now;
	line = json_pack("{s:s, s:s%, s:I}", "type", "log", "data", l->text.data + io->log_sent,
	                 l->text.len - io->log_sent, "dropped", (json_int_t)l->dropped);
	/* cleaned text is valid UTF-8: only an allocation failure gets here */
	if (!line)
		return;
	if (write_line(io->log_out, line) == 0) {
		io->log_sent = l->text.len;
		io->log_dropped_sent = l->dropped;
	}
	json_decref(line);
}

/* Read what the log pipe fd holds now (non-blocking) into the log, and
 * the first bytes since the agent's last protocol line into err. Returns
 * 1 when the pipe closed or broke (nothing more will come), else 0. */
static int log_read(struct runner_agent_io *io, int fd)
{
	char chunk[4096];
	ssize_t r;
	size_t keep;

	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
		if (io->log_on)
			model_runlog_add(&io->log, chunk, (size_t)r);
		keep = sizeof(io->err) - io->err_len;
		if (keep > (size_t)r)
			keep = (size_t)r;
		memcpy(io->err + io->err_len, chunk, keep);
		io->err_len += keep;
	}
}

/* Drain the agent's log (non-blocking): kept, and its new part written
 * out. */
static void drain_err(struct drive *d)
{
	struct runner_agent_io *io = d->io;

	if (!io || io->err_fd < 0)
		return;
	if (log_read(io, io->err_fd))
		io->err_fd = -1; /* closed or broken: stop polling it */
	log_emit(io, 0);
}

/* Poll fd for ev (plus the stderr pipe) until ready or the deadline; fd
 * -1 waits for nothing but until_ms instead (0: no such time), which then
 * ends the wait with WAIT_OK. The deadline wins when both have come. */
static enum wait_end wait_fd_until(struct drive *d, int fd, short ev, long long until_ms)
{
	struct pollfd p[3];
	long long now, left;
	nfds_t n, gw = 0;
	int r;

	for (;;) {
		now = runner_now_ms();
		left = d->deadline_ms - now;
		if (left <= 0)
			return WAIT_DEADLINE;
		if (bounds_reached(d, 0) != 0)
			return WAIT_LIMIT;
		if (until_ms > 0 && now >= until_ms)
			return WAIT_OK;
		if (until_ms > 0 && left > until_ms - now)
			left = until_ms - now;
		if (left > RUNNER_POLL_MAX_MS)
			left = RUNNER_POLL_MAX_MS;
		/* the bounds are read again at least this often */
		if (d->io && d->io->check && left > RUNNER_CGROUP_POLL_MS)
			left = RUNNER_CGROUP_POLL_MS;
		p[0].fd = fd;
		p[0].events = ev;
		p[0].revents = 0;
		n = 1;
		/* the log (p[1], -1 when closed: poll skips it) and the
		 * gateway's lines, drained as they come so that neither
		 * writer ever waits on the runner */
		p[1].fd = d->io ? d->io->err_fd : -1;
		p[1].events = POLLIN;
		p[1].revents = 0;
		n = 2;
		gw = 0;
		if (d->io && runner_gateway_run_fd(d->io->gateway) >= 0) {
			gw = n;
			p[gw].fd = runner_gateway_run_fd(d->io->gateway);
			p[gw].events = POLLIN;
			p[gw].revents = 0;
			n++;
		}
		r = poll(p, n, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return WAIT_ERROR;
		if (p[1].revents)
			drain_err(d);
		if (gw && p[gw].revents)
			runner_gateway_run_drain(d->io->gateway);
		if (fd >= 0 && (p[0].revents & (ev | POLLHUP | POLLERR | POLLNVAL)))
			return WAIT_OK;
	}
}

static enum wait_end wait_fd(struct drive *d, int fd, short ev)
{
	return wait_fd_until(d, fd, ev, 0);
}

/* A mock's delay before its answer: delay_ms from now, bounded by the
 * run's deadline (WAIT_DEADLINE when that comes first) and its whole-run
 * bounds, with the agent's stderr drained meanwhile. */
static enum wait_end wait_delay(struct drive *d, long delay_ms)
{
	if (delay_ms <= 0)
		return WAIT_OK;
	return wait_fd_until(d, -1, 0, runner_now_ms() + delay_ms);
}

/* Write all of s (n bytes) to the agent before the deadline. */
static enum wait_end send_all(struct drive *d, const char *s, size_t n)
{
	enum wait_end w;
	ssize_t r;

	while (n > 0) {
		r = write(d->to_agent, s, n);
		if (r > 0) {
			s += r;
			n -= (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			w = wait_fd(d, d->to_agent, POLLOUT);
			if (w != WAIT_OK)
				return w;
			continue;
		}
		return r < 0 && errno == EPIPE ? WAIT_EOF : WAIT_ERROR;
	}
	return WAIT_OK;
}

static enum wait_end send_json(struct drive *d, json_t *obj)
{
	enum wait_end w;
	char *s;

	s = json_dumps(obj, JSON_COMPACT);
	if (!s)
		return WAIT_ERROR;
	w = send_all(d, s, strlen(s));
	if (w == WAIT_OK)
		w = send_all(d, "\n", 1);
	free(s);
	return w;
}

/*
 * Next line from the agent, without its newline, into *line (allocated,
 * caller frees) and *len. Returns WAIT_OK, WAIT_DEADLINE, WAIT_EOF (the
 * agent closed its stdout), or WAIT_ERROR with *too_long set when the line
 * is over the cap.
 */
static enum wait_end next_line(struct drive *d, char **line, size_t *len, int *too_long)
{
	char chunk[65536];
	enum wait_end w;
	char *nl;
	size_t n;
	ssize_t r;

	*too_long = 0;
	for (;;) {
		nl = memchr(d->in.data, '\n', d->in.len);
		if (nl) {
			/* What the agent logs from here on is what a reason
			 * quotes if this line (or what follows) fails: the log
			 * written before it is taken first. */
			drain_err(d);
			if (d->io)
				d->io->err_len = 0;
			n = (size_t)(nl - d->in.data);
			*line = model_xmemdup(d->in.data, n);
			*len = n;
			memmove(d->in.data, nl + 1, d->in.len - n - 1);
			d->in.len -= n + 1;
			d->in.data[d->in.len] = '\0';
			return WAIT_OK;
		}
		if (d->in.len > RUNNER_AGENT_MAX_LINE) {
			*too_long = 1;
			return WAIT_ERROR;
		}
		if (d->eof)
			return WAIT_EOF;
		r = read(d->from_agent, chunk, sizeof(chunk));
		if (r > 0) {
			if (model_buf_add(&d->in, chunk, (size_t)r) != 0) {
				*too_long = 1;
				return WAIT_ERROR;
			}
			continue;
		}
		if (r == 0) {
			d->eof = 1;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			d->eof = 1;
			continue;
		}
		w = wait_fd(d, d->from_agent, POLLIN);
		if (w != WAIT_OK)
			return w;
	}
}

/* One compact JSON line to out, flushed. */
static int write_line(FILE *out, json_t *line)
{
	if (json_dumpf(line, out, JSON_COMPACT) != 0)
		return -1;
	if (fputc('\n', out) == EOF)
		return -1;
	return fflush(out) == 0 ? 0 : -1;
}

/* A step line (model/runspec.h); duration_us is the step's wall time,
 * trace its requests (borrowed; NULL: none). */
static int write_step(FILE *out, size_t seq, json_t *step, json_t *output, const char *kind,
                      long long duration_us, json_t *trace)
{
	json_t *line;
	int rc;

	line = json_pack(
	    "{s:s, s:I, s:O, s:O, s:O, s:s, s:o, s:I, s:o}", "type", "step", "seq", (json_int_t)seq,
	    "key", json_object_get(step, "key"), "input", json_object_get(step, "input"), "output",
	    output, "status", kind ? "error" : "ok", "error_kind",
	    kind ? json_string(kind) : json_null(), "duration_us", (json_int_t)duration_us, "trace",
	    trace ? json_incref(trace) : json_array());
	if (!line)
		return -1;
	rc = write_line(out, line);
	json_decref(line);
	return rc;
}

/* A printable excerpt of the first line of the len bytes at s: at most
 * max characters, printable ASCII kept, any other byte '?'. */
static void excerpt(const char *s, size_t len, size_t max, char *buf, size_t n)
{
	size_t i, j = 0;
	unsigned char ch;

	if (n == 0)
		return;
	for (i = 0; i < len && s[i] != '\n' && j + 1 < n && j < max; i++) {
		ch = (unsigned char)s[i];
		buf[j++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[j] = '\0';
}

/* A printable excerpt of the agent's stderr (first line), or "". An agent
 * that fails often says why on stderr just after the line that failed:
 * its first line is waited for, RUNNER_AGENT_ERR_WAIT_MS at most (never past the deadline),
 * on this error path only. */
static void err_excerpt(struct drive *d, char *buf, size_t n)
{
	const struct runner_agent_io *io = d->io;
	long long until = runner_now_ms() + RUNNER_AGENT_ERR_WAIT_MS, left;
	struct pollfd p;

	if (n)
		buf[0] = '\0';
	if (!io)
		return;
	for (;;) {
		drain_err(d);
		if (io->err_fd < 0 || memchr(io->err, '\n', io->err_len) ||
		    io->err_len == sizeof(io->err))
			break;
		left = (until < d->deadline_ms ? until : d->deadline_ms) - runner_now_ms();
		if (left <= 0)
			break;
		p.fd = io->err_fd;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			break;
	}
	excerpt(io->err, io->err_len, RUNNER_AGENT_ERR_SHOWN, buf, n);
}

/* The gateway's requests answered so far join the step's trace (before
 * the next entry, so the trace keeps the order they came in), and a miss
 * among them makes the step one. Returns 0, or -1 when the step asked for
 * more than RUNNER_AGENT_MAX_REQUESTS. */
static int gateway_take(struct drive *d, int *missed)
{
	if (!d->io || !d->io->gateway)
		return 0;
	return runner_gateway_run_take(d->io->gateway, d->trace, missed, NULL);
}

/* The gateway's requests that came while no step ran (io's, between the
 * steps' lines, and after the last): into the run's log, never into a
 * step's trace (they are no step's). */
static void gateway_outside(struct runner_agent_io *io)
{
	char text[RUNNER_AGENT_MAX_REQUESTS * 160];
	size_t n;

	if (!io || !io->gateway)
		return;
	n = runner_gateway_run_outside(io->gateway, text, sizeof(text));
	if (n && io->log_on)
		model_runlog_add(&io->log, text, n);
}

/*
 * The step failed because of the agent (or the clock): write its line with
 * the marker, count it, fail the run. Returns -1 always (the run failed).
 */
static int agent_error(struct drive *d, FILE *out, size_t seq, json_t *step,
                       struct runner_summary *sum, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int agent_error(struct drive *d, FILE *out, size_t seq, json_t *step,
                       struct runner_summary *sum, const char *fmt, ...)
{
	char why[320];
	char err[192];
	char marker[400];
	json_t *output;
	va_list ap;
	/* the outcome is known now: the wait for the agent's stderr below
	 * is not the step's */
	long long duration_us =
	    d->outcome_us >= 0 ? d->outcome_us : runner_step_us(d->step_start_ns);
	int missed = 0;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	err_excerpt(d, err, sizeof(err));
	snprintf(marker, sizeof(marker), "[[agent-error:%s]]", why);
	output = json_string(marker);
	sum->status = "failed";
	/* the log so far comes before the step's line, and the gateway's
	 * requests go into its trace */
	if (d->io)
		log_emit(d->io, 1);
	gateway_take(d, &missed);
	if (output &&
	    write_step(out, seq, step, output, "agent_error", duration_us, d->trace) == 0) {
		sum->steps_total++;
		sum->steps_error++;
		if (err[0] && !d->agent_said)
			snprintf(sum->reason, sizeof(sum->reason),
			         "agent error in step %zu: %s (agent log: %s)", seq, why, err);
		else
			snprintf(sum->reason, sizeof(sum->reason), "agent error in step %zu: %s",
			         seq, why);
	} else {
		snprintf(sum->reason, sizeof(sum->reason), "cannot write the line of step %zu",
		         seq);
	}
	json_decref(output);
	return -1;
}

/* After the last step's output, with the agent's protocol input closed:
 * read its protocol output to its end (the agent exits), waiting until until_ms at most.
 * Returns 1 when anything came (a line that answers no step), else 0. The
 * whole of what the agent wrote before it exited is read, however its
 * writes were timed, so the answer does not depend on timing (an agent
 * that has not exited by until_ms is judged on what came until then; the
 * caller kills it). */
static int lines_after_the_last(struct drive *d, long long until_ms)
{
	char chunk[4096];
	long long saved = d->deadline_ms;
	enum wait_end w;
	ssize_t r;
	int came = d->in.len > 0;

	d->deadline_ms = until_ms < saved ? until_ms : saved;
	while (!d->eof) {
		r = read(d->from_agent, chunk, sizeof(chunk));
		if (r > 0) {
			came = 1;
			continue;
		}
		if (r == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
			d->eof = 1;
			break;
		}
		if (errno == EINTR)
			continue;
		w = wait_fd(d, d->from_agent, POLLIN);
		if (w != WAIT_OK)
			break;
	}
	d->deadline_ms = saved;
	return came;
}

/* A line's optional "seq" (seqv, may be NULL) against the step's: 0 when
 * absent or equal, else -1 with *err filled. */
static int seq_check(json_t *seqv, size_t seq, struct runner_error *err)
{
	if (!seqv)
		return 0;
	if (!json_is_integer(seqv))
		return runner_error_set(err, RUNNER_E_AGENT, "seq must be an integer");
	if (json_integer_value(seqv) != (json_int_t)seq)
		return runner_error_set(err, RUNNER_E_AGENT,
		                        "a line for step %" JSON_INTEGER_FORMAT " during step %zu",
		                        json_integer_value(seqv), seq);
	return 0;
}

/* A whole-run bound (d->limit) stopped the run during step seq: its line
 * gets the marker, and the reason names the bound alone, as the
 * wall-clock limit's does. Returns -1, as agent_error(). */
static int limit_reached(struct drive *d, FILE *out, size_t seq, json_t *step,
                         struct runner_summary *sum)
{
	struct runner_error why = d->limit;
	int rc = agent_error(d, out, seq, step, sum, "%s", why.message);

	snprintf(sum->reason, sizeof(sum->reason), "%s", why.message);
	return rc;
}

/* How the agent ended, once its stdout closed mid-step, into *how. */
static void ended(struct drive *d, struct runner_error *how)
{
	long long until = runner_now_ms() + RUNNER_AGENT_GRACE_MS;

	if (until > d->deadline_ms)
		until = d->deadline_ms;
	if (d->io && d->io->exit_reason && d->io->exit_reason(d->io->ctx, until, how) == 0)
		return;
	runner_error_set(how, RUNNER_E_AGENT, "agent closed its output mid-step");
}

/* The agent's protocol input or output closed mid-step: the step's outcome is known
 * now, its reason (how the agent ended) may take a wait. Returns -1, as
 * agent_error(). */
static int agent_gone(struct drive *d, FILE *out, size_t seq, json_t *step,
                      struct runner_summary *sum)
{
	struct runner_error how;

	d->outcome_us = runner_step_us(d->step_start_ns);
	/* A whole-run bound may be what ended it (the kernel's out-of-memory
	 * killer in the run's cgroup): that is the reason then. */
	if (bounds_reached(d, 1) != 0)
		return limit_reached(d, out, seq, step, sum);
	ended(d, &how);
	return agent_error(d, out, seq, step, sum, "%s", how.message);
}

/*
 * A tool call of step seq (msg, its parsed line): answered only from the
 * scenario's tool mocks (model/mock.h), traced. A miss sets *missed (the
 * step is a mock miss); an error mock's answer does not. Returns WAIT_OK,
 * a wait's end (the caller's handling), or WAIT_ERROR with *err the agent
 * error (a bad line, too many requests).
 */
static enum wait_end tool_call(struct drive *d, json_t *msg, size_t seq, int *missed,
                               struct runner_error *err)
{
	const struct runner_spec *spec = d->spec;
	const char *type, *tool, *error = NULL;
	json_t *args = NULL, *seqv = NULL, *reply, *response = NULL, *m;
	json_error_t jerr;
	enum wait_end w;
	long long start_ns;
	size_t tool_len, mock = 0;
	char *marker = NULL;
	int hit;

	if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s, s:s%, s?o, s?o}", "type", &type, "tool",
	                   &tool, &tool_len, "args", &args, "seq", &seqv) != 0 ||
	    (args && !json_is_object(args))) {
		runner_error_set(err, RUNNER_E_AGENT,
		                 "tool line must be {type, tool: string[, args: object][, seq]}");
		return WAIT_ERROR;
	}
	if (seq_check(seqv, seq, err) != 0)
		return WAIT_ERROR;
	if (gateway_take(d, missed) != 0 ||
	    json_array_size(d->trace) >= RUNNER_AGENT_MAX_REQUESTS) {
		runner_error_set(err, RUNNER_E_AGENT, "more than %d requests",
		                 RUNNER_AGENT_MAX_REQUESTS);
		return WAIT_ERROR;
	}
	start_ns = runner_now_ns();
	hit = model_mock_tool_find(spec->mocks, spec->variant, tool, args, &mock);
	if (hit) {
		m = json_array_get(spec->mocks, mock);
		response = model_mock_tool_answer(m, d->calls ? d->calls[mock] : 0, &error);
		if (d->calls)
			d->calls[mock]++;
		/* a slow tool: the answer waits, inside the step's time */
		w = wait_delay(d, model_mock_delay_ms(m));
		if (w != WAIT_OK)
			return w;
		if (error)
			reply = json_pack("{s:s, s:s%, s:b, s:s}", "type", "tool", "tool", tool,
			                  tool_len, "found", 1, "error", error);
		else
			reply = json_pack("{s:s, s:s%, s:b, s:O}", "type", "tool", "tool", tool,
			                  tool_len, "found", 1, "response", response);
	} else {
		*missed = 1;
		marker = model_mock_tool_miss_marker(tool, tool_len);
		reply = json_pack("{s:s, s:s%, s:b, s:s}", "type", "tool", "tool", tool, tool_len,
		                  "found", 0, "error", marker);
	}
	w = reply ? send_json(d, reply) : WAIT_ERROR;
	json_decref(reply);
	free(marker);
	json_array_append_new(d->trace,
	                      model_trace_tool(spec->mocks, spec->variant, tool, args, hit, mock,
	                                       error != NULL, runner_step_us(start_ns)));
	if (w == WAIT_ERROR)
		return WAIT_EOF; /* the agent stopped reading: as for a resource */
	return w;
}

/* Run step seq (1-based). Returns 0 when its line was written and the run
 * may go on, -1 when the run failed (sum filled). */
static int drive_step(struct drive *d, size_t seq, json_t *step, FILE *out,
                      struct runner_summary *sum)
{
	const struct runner_spec *spec = d->spec;
	const char *type, *resource, *response, *said;
	size_t resource_len, response_len, marker_len, said_len, len = 0;
	json_t *msg = NULL, *reply = NULL, *output, *seqv;
	json_error_t jerr;
	enum wait_end w;
	char *line = NULL;
	char *marker = NULL;
	struct runner_error err;
	char bad[RUNNER_AGENT_ERROR_SHOWN + 16];
	int missed = 0, too_long, hit, rc = -1;
	long long req_start_ns;
	size_t mock = 0;
	long delay_ms;

	msg = json_pack("{s:s, s:I, s:O, s:O}", "type", "step", "seq", (json_int_t)seq, "key",
	                json_object_get(step, "key"), "input", json_object_get(step, "input"));
	/* The step's time runs from here (its input about to be sent) to its
	 * outcome, the agent's resource requests answered in between. */
	d->step_start_ns = runner_now_ns();
	d->outcome_us = -1;
	drain_err(d);
	if (d->io)
		d->io->err_len = 0;
	json_array_clear(d->trace);
	gateway_outside(d->io);
	w = msg ? send_json(d, msg) : WAIT_ERROR;
	json_decref(msg);
	msg = NULL;
	if (w == WAIT_DEADLINE)
		goto deadline;
	if (w == WAIT_LIMIT)
		goto limit;
	if (w != WAIT_OK) {
		rc = agent_gone(d, out, seq, step, sum);
		goto out;
	}
	for (;;) {
		free(line);
		line = NULL;
		json_decref(msg);
		msg = NULL;
		w = next_line(d, &line, &len, &too_long);
		if (w == WAIT_DEADLINE)
			goto deadline;
		if (w == WAIT_LIMIT)
			goto limit;
		if (w == WAIT_EOF) {
			rc = agent_gone(d, out, seq, step, sum);
			goto out;
		}
		if (w != WAIT_OK) {
			rc = agent_error(d, out, seq, step, sum, "%s",
			                 too_long ? "line over 1 MiB" : "cannot read the agent");
			goto out;
		}
		msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!msg || !json_is_object(msg) || json_unpack(msg, "{s:s}", "type", &type) != 0) {
			/* the line itself, so the agent's author sees what went */
			excerpt(line, len, RUNNER_AGENT_LINE_SHOWN, bad, sizeof(bad));
			rc = agent_error(d, out, seq, step, sum,
			                 "malformed line from the agent (%s): \"%s%s\"",
			                 !msg                   ? "not JSON"
			                 : !json_is_object(msg) ? "not a JSON object"
			                                        : "no string \"type\"",
			                 bad, len > RUNNER_AGENT_LINE_SHOWN ? "..." : "");
			goto out;
		}
		seqv = NULL;
		if (strcmp(type, "output") == 0) {
			if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s, s:o, s?o}", "type",
			                   &type, "output", &output, "seq", &seqv) != 0 ||
			    !json_is_string(output)) {
				rc = agent_error(
				    d, out, seq, step, sum,
				    "output line must be {type, output: string[, seq]}");
				goto out;
			}
			if (seq_check(seqv, seq, &err) != 0) {
				rc = agent_error(d, out, seq, step, sum, "%s", err.message);
				goto out;
			}
			/* A bound reached during the step (a process of the run
			 * killed for memory, which the agent may only count) is
			 * the step's outcome, whatever the agent answers: read
			 * now, not at the next poll, which a busy machine may
			 * delay past the answer. */
			if (bounds_reached(d, 1) != 0)
				goto limit;
			if (gateway_take(d, &missed) != 0) {
				rc = agent_error(d, out, seq, step, sum, "more than %d requests",
				                 RUNNER_AGENT_MAX_REQUESTS);
				goto out;
			}
			drain_err(d);
			if (d->io)
				log_emit(d->io, 1);
			if (write_step(out, seq, step, output, missed ? "mock_miss" : NULL,
			               runner_step_us(d->step_start_ns), d->trace) != 0) {
				sum->status = "failed";
				snprintf(sum->reason, sizeof(sum->reason),
				         "cannot write the line of step %zu", seq);
				goto out;
			}
			sum->steps_total++;
			if (missed)
				sum->steps_error++;
			else
				sum->steps_ok++;
			rc = 0;
			goto out;
		}
		if (strcmp(type, "error") == 0) {
			/* the agent fails the step itself (an exception in an
			 * olivares_agent step): its message is the reason */
			if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s, s:s%, s?o}", "type",
			                   &type, "error", &said, &said_len, "seq", &seqv) != 0) {
				rc = agent_error(d, out, seq, step, sum,
				                 "error line must be {type, error: string[, seq]}");
				goto out;
			}
			if (seq_check(seqv, seq, &err) != 0) {
				rc = agent_error(d, out, seq, step, sum, "%s", err.message);
				goto out;
			}
			excerpt(said, said_len, RUNNER_AGENT_ERROR_SHOWN, bad, sizeof(bad));
			d->agent_said = 1;
			rc = agent_error(d, out, seq, step, sum, "%s%s", bad,
			                 said_len > RUNNER_AGENT_ERROR_SHOWN ? "..." : "");
			goto out;
		}
		if (strcmp(type, "tool") == 0) {
			w = tool_call(d, msg, seq, &missed, &err);
			if (w == WAIT_DEADLINE)
				goto deadline;
			if (w == WAIT_LIMIT)
				goto limit;
			if (w == WAIT_EOF) {
				rc = agent_gone(d, out, seq, step, sum);
				goto out;
			}
			if (w != WAIT_OK) {
				rc = agent_error(d, out, seq, step, sum, "%s", err.message);
				goto out;
			}
			continue;
		}
		if (strcmp(type, "resource") != 0) {
			excerpt(type, strlen(type), RUNNER_AGENT_TYPE_SHOWN, bad, sizeof(bad));
			rc = agent_error(d, out, seq, step, sum,
			                 "unexpected line from the agent: type \"%s\" (an agent "
			                 "sends \"resource\", \"tool\", \"output\" or \"error\")",
			                 bad);
			goto out;
		}
		if (json_unpack_ex(msg, &jerr, JSON_STRICT, "{s:s, s:s%, s?o}", "type", &type,
		                   "resource", &resource, &resource_len, "seq", &seqv) != 0) {
			rc = agent_error(d, out, seq, step, sum,
			                 "resource line must be {type, resource: string[, seq]}");
			goto out;
		}
		if (seq_check(seqv, seq, &err) != 0) {
			rc = agent_error(d, out, seq, step, sum, "%s", err.message);
			goto out;
		}
		if (gateway_take(d, &missed) != 0 ||
		    json_array_size(d->trace) >= RUNNER_AGENT_MAX_REQUESTS) {
			rc = agent_error(d, out, seq, step, sum, "more than %d requests",
			                 RUNNER_AGENT_MAX_REQUESTS);
			goto out;
		}
		/* Only the scenario's mocks answer; nothing real is reached. */
		req_start_ns = runner_now_ns();
		delay_ms = 0;
		hit = model_mock_find(spec->mocks, spec->variant, resource, resource_len, &mock);
		if (hit) {
			model_mock_lookup(spec->mocks, spec->variant, resource, resource_len,
			                  &response, &response_len, &delay_ms);
		}
		free(marker);
		marker = NULL;
		if (!hit) {
			missed = 1;
			marker = model_mock_miss_marker(resource, resource_len, &marker_len);
			response = marker;
			response_len = marker_len;
		}
		/* a slow tool: the answer waits, inside the step's time */
		w = wait_delay(d, delay_ms);
		if (w == WAIT_DEADLINE)
			goto deadline;
		if (w == WAIT_LIMIT)
			goto limit;
		reply =
		    json_pack("{s:s, s:s%, s:b, s:s%}", "type", "resource", "resource", resource,
		              resource_len, "found", hit, "response", response, response_len);
		w = reply ? send_json(d, reply) : WAIT_ERROR;
		json_decref(reply);
		reply = NULL;
		/* answered (or not), the request is the step's: traced */
		json_array_append_new(d->trace,
		                      model_trace_resource(spec->mocks, spec->variant, resource,
		                                           resource_len, hit, mock,
		                                           runner_step_us(req_start_ns)));
		if (w == WAIT_DEADLINE)
			goto deadline;
		if (w == WAIT_LIMIT)
			goto limit;
		if (w != WAIT_OK) {
			rc = agent_gone(d, out, seq, step, sum);
			goto out;
		}
	}
deadline:
	rc = agent_error(d, out, seq, step, sum, "wall-clock limit of %ld ms exceeded",
	                 spec->limits.wall_ms);
	/* The reason names the limit, not the step: that is what the worker shows. */
	snprintf(sum->reason, sizeof(sum->reason), "wall-clock limit of %ld ms exceeded",
	         spec->limits.wall_ms);
	goto out;
limit:
	rc = limit_reached(d, out, seq, step, sum);
out:
	free(line);
	free(marker);
	json_decref(msg);
	return rc;
}

static void set_nonblock(int fd)
{
	int fl;

	if (fd < 0)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int runner_agent_drive_ex(const struct runner_spec *spec, int to_agent, int from_agent,
                          long long deadline_ms, FILE *out, struct runner_summary *sum,
                          struct runner_agent_io *io)
{
	struct drive d;
	size_t i;
	int rc = 0;

	memset(&d, 0, sizeof(d));
	d.spec = spec;
	d.to_agent = to_agent;
	d.from_agent = from_agent;
	d.deadline_ms = deadline_ms;
	d.io = io;
	model_buf_init(&d.in, RUNNER_AGENT_MAX_LINE + 1);
	d.trace = json_array();
	d.calls = model_xcalloc(json_array_size(spec->mocks) + 1, sizeof(*d.calls));
	if (io) {
		io->err_len = 0;
		model_runlog_init(&io->log);
		io->log_on = 1;
		io->log_out = out;
		io->log_sent = 0;
		io->log_dropped_sent = 0;
	}
	/* A dead reader must be an error return, not the runner's death. */
	signal(SIGPIPE, SIG_IGN);
	set_nonblock(to_agent);
	set_nonblock(from_agent);
	if (io)
		set_nonblock(io->err_fd);

	for (i = 0; i < json_array_size(spec->steps); i++) {
		if (drive_step(&d, i + 1, json_array_get(spec->steps, i), out, sum) != 0) {
			rc = -1;
			goto out;
		}
	}
	/* Nothing may follow the last output (a line written then was meant
	 * for a step that never came): the agent's protocol input closed, its
	 * output is read to its end; anything on it fails the run, with no step line
	 * (every step has its own already). */
	if (i > 0 && io && io->end_input) {
		io->end_input(io->ctx);
		io->grace_until = runner_now_ms() + RUNNER_AGENT_GRACE_MS;
		if (lines_after_the_last(&d, io->grace_until)) {
			sum->status = "failed";
			snprintf(sum->reason, sizeof(sum->reason),
			         "agent error after step %zu: a line came from the agent after the "
			         "output of the last step",
			         i);
			rc = -1;
			goto out;
		}
	}
	/* A bound reached between the last read and the end (a process of
	 * the run killed for memory while the agent went on) still fails the
	 * run: every step line stands, the reason names the bound. */
	if (bounds_reached(&d, 1) != 0) {
		sum->status = "failed";
		snprintf(sum->reason, sizeof(sum->reason), "%s", d.limit.message);
		rc = -1;
		goto out;
	}
	sum->status = "completed";
	sum->reason[0] = '\0';
out:
	/* the gateway gone before the jail is torn down (which may take it
	 * with the sandbox's processes) ended on its own */
	if (io && io->gateway)
		runner_gateway_run_check_lost(io->gateway);
	model_buf_release(&d.in);
	json_decref(d.trace);
	free(d.calls);
	return rc;
}

int runner_agent_drive(const struct runner_spec *spec, int to_agent, int from_agent,
                       long long deadline_ms, FILE *out, struct runner_summary *sum)
{
	return runner_agent_drive_ex(spec, to_agent, from_agent, deadline_ms, out, sum, NULL);
}

void runner_agent_shutdown_note(struct runner_summary *sum, int at_deadline, long wall_ms)
{
	if (at_deadline)
		snprintf(sum->shutdown, sizeof(sum->shutdown),
		         "agent did not exit before the wall-clock limit of %ld ms, which came "
		         "within its %d ms grace after the end of its input: killed",
		         wall_ms, RUNNER_AGENT_GRACE_MS);
	else
		snprintf(sum->shutdown, sizeof(sum->shutdown),
		         "agent did not exit within its %d ms grace after the end of its input: "
		         "killed",
		         RUNNER_AGENT_GRACE_MS);
}

const char *runner_agent_program(const struct runner_spec *spec, const char *backend,
                                 struct runner_summary *sum)
{
	const char *agent = spec->agent ? spec->agent : spec->mock_agent;

	sum->isolated = 0;
	sum->status = "failed";
	if (spec->unconfined) {
		snprintf(sum->reason, sizeof(sum->reason),
		         "%s backend has no unconfined mode (--no-seccomp)", backend);
		return NULL;
	}
	if (!agent) {
		snprintf(sum->reason, sizeof(sum->reason),
		         "no agent program: the built-in mock agent was not found beside the "
		         "runner");
		return NULL;
	}
	return agent;
}

int runner_agent_teardown(const struct runner_spec *spec, struct runner_agent_io *io,
                          long long deadline_ms, int rc,
                          int (*destroy)(void *ctx, long long grace_deadline_ms, int *killed,
                                         struct runner_error *left),
                          void *ctx, struct runner_summary *sum)
{
	long long grace =
	    io->grace_until ? io->grace_until : runner_now_ms() + RUNNER_AGENT_GRACE_MS;
	struct runner_error left;
	int killed = 0;
	/* The log's last bytes (the agent's grace included) are read once the
	 * agent is gone, from a copy of the pipe: destroy() closes its own. */
	int log_fd = io->err_fd >= 0 ? fcntl(io->err_fd, F_DUPFD_CLOEXEC, 3) : -1;

	if (destroy(ctx,
	            rc != 0               ? 0
	            : grace < deadline_ms ? grace
	                                  : deadline_ms,
	            &killed, &left) != 0) {
		sum->left_behind = 1;
		if (rc == 0) {
			sum->status = "failed";
			snprintf(sum->reason, sizeof(sum->reason), "%s", left.message);
			rc = -1;
		}
	}
	/* Every step completed, but the agent did not exit by itself: said
	 * (never hidden), the run stays completed. */
	if (rc == 0 && killed)
		runner_agent_shutdown_note(sum, deadline_ms <= grace, spec->limits.wall_ms);
	runner_agent_log_end(io, log_fd);
	return rc;
}

void runner_agent_log_end(struct runner_agent_io *io, int fd)
{
	/* what the agent asked its gateway after its last step */
	gateway_outside(io);
	if (fd >= 0) {
		/* every writer is gone: what is left is there now, and a
		 * writer that survived (never expected) cannot stall this */
		set_nonblock(fd);
		log_read(io, fd);
		close(fd);
	}
	if (!io->log_on)
		return;
	model_runlog_end(&io->log);
	log_emit(io, 1);
	model_runlog_release(&io->log);
	io->log_on = 0;
}
