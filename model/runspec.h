#ifndef OLIVARES_MODEL_RUNSPEC_H
#define OLIVARES_MODEL_RUNSPEC_H
/**
 * The wire between the FastCGI worker and olivares-runner: the worker
 * starts one runner per run, hands it the spec and reads its lines.
 *
 * argv:   olivares-runner --backend inproc-mock|namespaces|gvisor|firecracker
 *         olivares-runner --preflight NAME   (one JSON line: {"type":"preflight",
 *           "backend":NAME,"ok":bool,"reason":null|string}; no spec read)
 *         with gvisor, either may add --gvisor-platform ptrace|kvm|systrap
 *           (the server's [runner] gvisor_platform; default ptrace): host
 *           configuration travels on the command line, never in the spec
 * stdin:  one JSON object, the run spec, then EOF:
 *   {"variant": string or null,
 *    "steps": [{"key": string, "input": string}, ...],
 *    "mocks": [{"resource": string, "response": string, "variant": string?,
 *               "delay_ms": integer 0..MODEL_MAX_MOCK_DELAY_MS?}, or a tool
 *               mock {"tool", "args"?, "match"?, "response" | "sequence" |
 *               "error", "variant"?, "delay_ms"?} (model/mock.h), ...]
 *             (delay_ms: the runner waits that long before it answers a
 *             request the mock answers, inside the step and its
 *             duration_us, never past wall_ms: a delay that would end
 *             after the wall-clock limit ends the run there, with its
 *             usual reason; a miss is answered at once),
 *    "agent": absolute path of the agent program, or null/absent (optional;
 *             OS-level backends then run the built-in mock agent; inproc-mock
 *             refuses a spec that names an agent: it cannot run programs),
 *    "limits": {"wall_ms": N, "cpu_seconds": N, "memory_mb": N,
 *               "processes": N, "open_files": N, "tmpfs_mb": N} (optional,
 *             every key optional; bounds and defaults: MODEL_RUN_* of
 *             model/limits.h),
 *    "binds": [absolute host paths bound read-only into the jail] (optional;
 *             default ["/usr"] plus the agent file; /bin, /lib, /lib64,
 *             /sbin become symlinks into /usr as on a merged-/usr host),
 *    "gateway": boolean (optional; a gateway even without http/llm mocks:
 *             runner/gateway_run.h),
 *    "egress_allow": ["host" or "host:port", ...] (optional, at most
 *             RUNNER_SPEC_MAX_EGRESS; the hosts the gateway may forward a
 *             request no mock answers to; non-empty, a gateway),
 *    "egress_secrets": absolute normalised path of at most
 *             RUNNER_SPEC_MAX_PATH bytes (optional, only with egress_allow
 *             hosts; [runner] egress_secrets): the operator's file of the
 *             headers the egress gateway adds for those hosts. Only the
 *             path: the spec is stored, the values never are; the gateway
 *             opens the file outside the jail, and a path under a bind is
 *             refused,
 *    "record": boolean (optional; each answer the gateway gives is kept in
 *             its trace entry as "record", model/record.h, for the run's
 *             history session)}
 *   "mocks" may also hold http and llm mocks (model/http_mock.h): a spec
 *   with one has a gateway.
 *   Nothing else: no ids, no tenant, no token, no database handle.
 *   The agent protocol between the runner and an agent is runner/agent.h.
 * stdout: one JSON object per line. For each step, in order:
 *   {"type":"step","seq":N (1-based),"key":…,"input":…,"output":…,
 *    "status":"ok"|"error","error_kind":null|"mock_miss"|"agent_error",
 *    "duration_us":N,"trace":[...]}
 *   trace: the step's requests in order (model/mock.h has the entries'
 *   shape, their near misses and model_trace_check, which the worker
 *   applies: at most MODEL_MAX_STEP_REQUESTS entries, mock indexes inside
 *   the spec's mocks, no "ok" step with a miss); inproc-mock's has the one
 *   lookup of the step's input. A line without it (an older runner) is
 *   stored with trace null.
 *   duration_us: the step's wall time on CLOCK_MONOTONIC, in integer
 *   microseconds rounded up (runner_step_us): from just before the step's
 *   input goes to the agent to when its outcome (output or error) is known,
 *   the agent's resource requests answered in between included (their
 *   mocks' delay_ms too); on inproc-mock, the resolution of the input
 *   against the mocks and the winning mock's delay_ms. The worker
 *   takes a line without it (an older runner), or with a value that is not
 *   an integer in [0, the worker's deadline], as a step of unknown duration
 *   (a number too large for jansson's integers, over 2^63, is not JSON it
 *   reads: the whole output is then malformed, as for any unreadable line).
 *   Between them, before the summary, the agent's log (OS-level backends;
 *   inproc-mock runs no agent and writes none), in order, as it came:
 *   {"type":"log","data":…,"dropped":N}
 *   data: the next part of the log's text, cleaned (model/runlog.h: valid
 *   UTF-8, no control character but newline and tab), the parts together
 *   at most MODEL_RUN_LOG_MAX bytes; dropped: the agent's bytes counted and
 *   not kept so far (past the cap), never less than the line before's.
 *   The worker keeps the parts joined, and the mark of model_runlog_mark()
 *   after them when dropped is not 0; a run cut short keeps what came.
 *   then exactly one final line:
 *   {"type":"summary","runner":"olivares-runner/<version>","backend":…,
 *    "isolated":bool,"destroyed":bool,"status":"completed"|"failed",
 *    "steps_total":N,"steps_ok":N,"steps_error":N,"reason":null|string,
 *    "shutdown":null|string[,"egress_requests":N]}
 *   "egress_requests" (a run with a gateway only): the requests its gateway
 *   forwarded outside the sandbox; absent is 0.
 *   "isolated" is true only when the backend's confinement was verified in
 *   place for the whole run (inproc-mock: the seccomp filter was loaded).
 *   "shutdown" is null unless the run completed and its agent then had to
 *   be killed: it did not exit by itself within its grace after the end of
 *   its input, or before the wall-clock limit when that came first (the
 *   note says which: runner_agent_shutdown_note, runner/agent.h). It never
 *   changes status or reason; inproc-mock, which runs no agent process,
 *   always says null. The worker takes a summary without the key (an older
 *   runner) as null.
 * exit:   0 when a summary was written, non-zero otherwise.
 * A worker that sees no summary line, a malformed line, counters that
 * disagree with the step lines, or the wall-clock limit pass records the run
 * as failed, isolated false, with the reason.
 */
#define MODEL_RUNNER_NAME "olivares-runner"
/* The agent name a run records when its variant names no program in the
 * agents directory: the runner's built-in mock agent on the OS-level
 * backends, the in-process resolution on inproc-mock (no agent process at
 * all). Neither has a sha256: it is part of the runner, whose version the
 * run's "runner" names. The ':' keeps them apart from any program name
 * ([A-Za-z0-9][A-Za-z0-9._-]{0,63}). */
#define MODEL_AGENT_BUILTIN_MOCK "builtin:mock-agent"
#define MODEL_AGENT_BUILTIN_INPROC "builtin:inproc-mock"
#define MODEL_BACKEND_INPROC_MOCK "inproc-mock"
#define MODEL_BACKEND_NAMESPACES "namespaces"
#define MODEL_BACKEND_GVISOR "gvisor"
#define MODEL_BACKEND_FIRECRACKER "firecracker"

#endif
