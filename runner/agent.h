#ifndef OLIVARES_RUNNER_AGENT_H
#define OLIVARES_RUNNER_AGENT_H
/**
 * The agent protocol: how olivares-runner drives an agent program that runs
 * inside an OS-level backend (namespaces, gvisor). Newline-delimited JSON,
 * one object per line, UTF-8, each line at most RUNNER_AGENT_MAX_LINE bytes.
 *
 * The channel: two pipes of their own, not the agent's stdio. The agent
 * reads the runner's lines on descriptor RUNNER_AGENT_PROTO_IN_FD (3) and
 * writes its own on RUNNER_AGENT_PROTO_OUT_FD (4); its environment names
 * them (OLIVARES_PROTOCOL_IN_FD=3, OLIVARES_PROTOCOL_OUT_FD=4). Its stdin
 * is /dev/null; its stdout and stderr are one pipe, the run's log
 * (model/runlog.h), so a print() is never a protocol error.
 *
 * runner -> agent (descriptor 3)
 *   {"type":"step","seq":N,"key":K,"input":I}      start step N
 *   {"type":"resource","resource":R,"found":true,"response":S}
 *   {"type":"resource","resource":R,"found":false,"response":"[[mock-miss:R]]"}
 *                                                  answer to a request
 *   {"type":"tool","tool":T,"found":true,"response":J}   a tool mock's answer
 *   {"type":"tool","tool":T,"found":true,"error":E}      an error mock's
 *   {"type":"tool","tool":T,"found":false,"error":"[[mock-miss:tool T]]"}
 *                                                  answer to a tool call
 *   EOF on descriptor 3 after the last step: the agent must exit (grace period
 *   RUNNER_AGENT_GRACE_MS, then it is killed). A killed agent does not
 *   fail a run whose steps all completed (their outputs stand), but the
 *   run records it: the summary's "shutdown" note
 *   (runner_agent_shutdown_note, model/runspec.h).
 * agent -> runner (descriptor 4)
 *   {"type":"resource","resource":R}               ask for a resource; the
 *       runner answers ONLY from the scenario's mocks (variant-aware,
 *       model_mock_resolve); a miss gets the marker and marks the step
 *       status "error", error_kind "mock_miss". The agent never reaches a
 *       real resource through this channel.
 *   {"type":"tool","tool":T,"args":{...}?}          call a tool; answered ONLY
 *       from the scenario's tool mocks (model/mock.h: exact or subset
 *       args, precedence, sequences); a miss marks the step "error",
 *       "mock_miss" as a resource miss does; an error mock's answer does
 *       not.
 *   {"type":"output","output":O}                   ends the step; O is the
 *       step's output.
 *   {"type":"error","error":E}                     the agent fails the step
 *       itself: an agent error whose reason is E (its first line, cut).
 *   Each may carry "seq":N, the step's; another seq is an agent error.
 *   After the last step's output the runner's end of descriptor 3 is
 *   closed (runner_agent_io.end_input) and descriptor 4 read to its end: a line
 *   then fails the run (no step line). Without seq, lines are taken in
 *   order (a second output for step 1 is step 2's, and the line left over
 *   at the end fails the run): the result never depends on timing.
 *   At most RUNNER_AGENT_MAX_REQUESTS requests (resource and tool) per step;
 *   each is traced in the step line's "trace" (model/mock.h). Anything else (bad
 *   JSON, unknown type, a line too long, EOF or death mid-step) is an agent
 *   error: the step is recorded with status "error", error_kind
 *   "agent_error" and the output "[[agent-error:<reason>]]", and the run is
 *   failed with that reason; no later step runs.
 * The log (stdout and stderr, merged in the order the bytes come) is
 *   drained while the run goes, cleaned and capped (model/runlog.h:
 *   MODEL_RUN_LOG_MAX), and written out as {"type":"log"} lines
 *   (model/runspec.h) as it comes; the first line logged since the
 *   agent's last protocol line goes into an agent error's reason ("(agent
 *   log: ...)").
 * Timing: each step line the runner writes (model/runspec.h) carries
 *   "duration_us", the step's wall time on CLOCK_MONOTONIC from just before
 *   its {"type":"step"} line is sent to when its output line is read (or
 *   its agent error is known: EOF, a bad line, the deadline), the resource
 *   requests answered in between included; rounded up to the microsecond.
 *   The agent sends no time of its own: it is measured by the runner only.
 *
 * The built-in mock agent (agents/mock-resolver, installed beside the
 * runner as olivares-agent-mock) asks for its step's input as a resource
 * and answers the response, so a scenario behaves the same on every backend
 * as on inproc-mock (page walkthrough: same outputs, same counters).
 */
#include <stdio.h>

#include "runner/backend.h"

#include "runner/limits.h" /* RUNNER_AGENT_MAX_LINE, ..._MAX_REQUESTS, ..._GRACE_MS */

/** The agent's protocol descriptors: it reads the runner's lines on the
 * first, writes its own on the second (both pipes). */
#define RUNNER_AGENT_PROTO_IN_FD 3
#define RUNNER_AGENT_PROTO_OUT_FD 4
/** The environment entries that name them, as the agent gets them. */
#define RUNNER_AGENT_PROTO_ENV_IN "OLIVARES_PROTOCOL_IN_FD=3"
/* Where the jail holds the Python module for agents (olivares_agent), on
 * the agent's PYTHONPATH; reserved for it as /agent is for the agent. */
#define RUNNER_SDK_JAIL_DIR "/olivares/python"
#define RUNNER_SDK_ENV "PYTHONPATH=" RUNNER_SDK_JAIL_DIR
#define RUNNER_AGENT_PROTO_ENV_OUT "OLIVARES_PROTOCOL_OUT_FD=4"

/**
 * Drive the agent whose stdin is to_agent and stdout is from_agent (both
 * owned by the caller, left open) through every step of spec, writing one
 * step line per step to out (model/runspec.h) and filling sum's counters.
 * deadline is a CLOCK_MONOTONIC time in ms after which the run fails with
 * reason "wall-clock limit of N ms exceeded". Returns 0 when every step
 * completed, -1 when the run failed (sum->status "failed", sum->reason set).
 * Closes nothing; the caller closes to_agent to signal the end and reaps.
 */
int runner_agent_drive(const struct runner_spec *spec, int to_agent, int from_agent,
                       long long deadline_ms, FILE *out, struct runner_summary *sum);

/**
 * The agent had to be killed after every step completed: it did not exit
 * by itself within its grace (RUNNER_AGENT_GRACE_MS) after the end of its
 * input, or, when the run's wall-clock limit of wall_ms came first
 * (at_deadline 1), by then. Writes the note into sum->shutdown, exactly
 *   "agent did not exit within its 1000 ms grace after the end of its
 *    input: killed"
 *   "agent did not exit before the wall-clock limit of N ms, which came
 *    within its 1000 ms grace after the end of its input: killed"
 * (one line each); status and reason are left as they are. Called by the
 * OS-level backends (namespaces, gvisor) only for a run that completed.
 */
void runner_agent_shutdown_note(struct runner_summary *sum, int at_deadline, long wall_ms);

/**
 * The start of an OS-level backend's run (backend names the backend in
 * the reason): sum is set failed and not isolated, and the agent program
 * to run is returned (spec->agent, else the built-in mock agent); NULL,
 * with sum->reason set, when there is none or the run is unconfined
 * (--no-seccomp: an OS-level backend has no unconfined mode).
 */
const char *runner_agent_program(const struct runner_spec *spec, const char *backend,
                                 struct runner_summary *sum);

/**
 * Tear down the agent's confinement at the end of an OS-level backend's
 * run, whose outcome so far is rc (0 completed, -1 failed; io the drive's,
 * deadline_ms the run's). destroy(ctx, grace_deadline_ms, &killed, &left)
 * tears it down, giving the agent until grace_deadline_ms (0: no grace)
 * to exit by itself, and sets killed when it had not by then; it returns
 * 0 when nothing is left, else -1 with left.message the run's reason. The
 * agent gets its grace (RUNNER_AGENT_GRACE_MS from the end of its input,
 * never past deadline_ms) only when rc is 0. Then: something left behind
 * sets sum->left_behind and fails a completed run with that reason; a
 * completed run whose agent was killed gets its shutdown note. Last, the
 * log's end (runner_agent_log_end on a copy of io->err_fd taken before
 * destroy). Returns the run's outcome (rc, or -1).
 */
int runner_agent_teardown(const struct runner_spec *spec, struct runner_agent_io *io,
                          long long deadline_ms, int rc,
                          int (*destroy)(void *ctx, long long grace_deadline_ms, int *killed,
                                         struct runner_error *left),
                          void *ctx, struct runner_summary *sum);

/**
 * The end of the agent's log (io as the drive left it): what fd (a copy
 * of the log pipe's read end, or -1; closed here) still holds is read
 * without waiting, a sequence cut at the end is replaced, the last log
 * line written, and the log released. Called by runner_agent_teardown;
 * harmless on an io whose drive never ran.
 */
void runner_agent_log_end(struct runner_agent_io *io, int fd);

#endif
