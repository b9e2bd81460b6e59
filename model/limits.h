#ifndef OLIVARES_MODEL_LIMITS_H
#define OLIVARES_MODEL_LIMITS_H
/**
 * Every limit the sandbox enforces, in one place. Values marked "page" are
 * requirements of the sandbox product page (its section on generating a
 * scenario's inputs: 1 MiB requests, at most 100 inputs of at most 8192
 * bytes, a subject of at most 200 bytes); the others are this project's
 * bounds on a scenario, chosen so that any scenario that fits them is far
 * inside the 1 MiB request limit per field while still letting the request
 * as a whole be checked against that limit. The last section bounds a run
 * spec's "limits" (model/runspec.h): the runner refuses a spec outside
 * them, and the caps that only the runner applies are in runner/limits.h.
 */

/* page: scenarios API request limit, 1 MiB (also nginx client_max_body_size 1m) */
#define MODEL_MAX_REQUEST_BYTES (1024 * 1024)

/* page: generation defaults and bounds */
#define MODEL_DEFAULT_SUBJECT "agent"
#define MODEL_DEFAULT_COUNT 10
#define MODEL_DEFAULT_TEMPLATE "{{subject_kind}}-sample-{{index}}"
#define MODEL_MIN_COUNT 1
#define MODEL_MAX_COUNT 100
#define MODEL_MAX_SUBJECT_BYTES 200
#define MODEL_MAX_TEMPLATE_BYTES 8192
#define MODEL_MAX_INPUT_BYTES 8192

/* a scenario's name and description are bounded too, so that a generated
 * batch can be checked to leave room for them inside the 1 MiB request */
#define MODEL_MAX_NAME_BYTES 128
#define MODEL_MAX_DESCRIPTION_BYTES 1024

/* project bounds on a scenario's parts */
#define MODEL_MAX_STEPS 1000
#define MODEL_MAX_MOCKS 1000
#define MODEL_MAX_KEY_BYTES 128
#define MODEL_MAX_VARIANT_BYTES 64
#define MODEL_MAX_RESOURCE_BYTES 8192
#define MODEL_MAX_RESPONSE_BYTES 65536
/* a mock's delay_ms: how long the runner waits before it answers a request
 * that the mock answers, ms (0, the default, answers at once); a minute at
 * most, far inside the longest wall-clock limit (MODEL_RUN_WALL_MS_MAX) */
#define MODEL_MAX_MOCK_DELAY_MS 60000
/* tool mocks (model/mock.h): a tool's name; a sequence's items; an error
 * mock's message; a tool response or a sequence item, as compact JSON, is
 * bounded by MODEL_MAX_RESPONSE_BYTES as a resource's response is */
#define MODEL_MAX_TOOL_BYTES 128
#define MODEL_MAX_SEQUENCE 100
#define MODEL_MAX_TOOL_ERROR_BYTES 1024
/* requests (resource or tool) an agent may make in one step: the bound of
 * a step's trace too */
#define MODEL_MAX_STEP_REQUESTS 100
/* a near miss's "expected"/"got" values, as compact JSON, at most */
#define MODEL_NEAR_MISS_VALUE_BYTES 1024
/* HTTP and chat mocks (model/http_mock.h): a method's name; a url, and
 * the url a trace records (cut there); a response's headers, their count
 * and each name plus value; a body regex (compiled at validation: a bound
 * keeps that cheap); a chat mock's model name and its tool calls per
 * answer. Bodies, texts and JSON values are bounded by
 * MODEL_MAX_RESPONSE_BYTES each, and the scenario as a whole by
 * MODEL_MAX_REQUEST_BYTES. */
#define MODEL_MAX_HTTP_METHOD_BYTES 32
#define MODEL_MAX_HTTP_URL_BYTES 8192
#define MODEL_MAX_HTTP_HEADERS 64
#define MODEL_MAX_HTTP_HEADER_BYTES 8192
#define MODEL_MAX_HTTP_REGEX_BYTES 1024
#define MODEL_MAX_LLM_MODEL_BYTES 256
#define MODEL_MAX_LLM_TOOL_CALLS 16

/* project bounds on the store's other text fields (sql/), in bytes of UTF-8,
 * checked before anything is written */
#define MODEL_MAX_TENANT_NAME_BYTES 128  /* a tenant's name (at least 1 byte) */
#define MODEL_MAX_TOKEN_LABEL_BYTES 256  /* an API token's label (may be empty) */
#define MODEL_MAX_ACTOR_BYTES 128        /* who an audit event names: a token id or a tool */
#define MODEL_MAX_ACTION_BYTES 128       /* an audit event's action, e.g. "sandbox.run" */
#define MODEL_MAX_SUITE_NAME_BYTES 128   /* the suite a comparison names */
#define MODEL_MAX_SCENARIO_REF_BYTES 128 /* the scenario id a comparison records */

/* ids: 32 lowercase hex characters (128 random bits) */
#define MODEL_ID_LEN 32

/* history sessions (model/history.h): an imported session's bounds */
#define MODEL_MAX_SESSION_EVENTS 1000
#define MODEL_MAX_EXTERNAL_ID_BYTES 128
#define MODEL_MAX_KIND_BYTES 32
/* how much of a resource a replay's degraded reason quotes, bytes */
#define MODEL_RESOURCE_SHOWN_BYTES 200

/* builtin suites (model/suite.h): a regex is bounded so that compiling one
 * stays cheap; the file as a whole is capped by its reader (1 MiB) */
#define MODEL_MAX_SUITE_EXPECTATIONS 1000
#define MODEL_MAX_SUITE_NAME_BYTES 128
#define MODEL_MAX_SUITE_KEY_BYTES 128
#define MODEL_MAX_SUITE_REGEX_BYTES 1024
#define MODEL_MAX_SUITE_WEIGHT 1e6
/* a "calls" list and a "call_count" bound: a step makes at most
 * MODEL_MAX_STEP_REQUESTS requests, more could never hold */
#define MODEL_MAX_SUITE_CALLS MODEL_MAX_STEP_REQUESTS
/* "max_duration_ms": one day, far beyond any step's time */
#define MODEL_MAX_SUITE_DURATION_MS 86400000
/* a "json_path" path */
#define MODEL_MAX_SUITE_PATH_BYTES 1024

/* ---- runner: a run spec's "limits" (model/runspec.h) ----------------------
 * For each key: the default of a spec that leaves it out, and the bounds
 * outside which olivares-runner refuses the spec (never clamps it, so that
 * what a run records is what it ran with). The server's [runner] keys of
 * the same names have the same bounds. */
/* the whole run's wall-clock limit, ms */
#define MODEL_RUN_WALL_MS_DEFAULT 10000
#define MODEL_RUN_WALL_MS_MIN 100
#define MODEL_RUN_WALL_MS_MAX 600000
/* CPU time of the whole run, s: all its processes together (their cgroup's
 * CPU time, read by the runner; on gvisor the sandbox's sentry and gofer
 * count too), and RLIMIT_CPU of each process */
#define MODEL_RUN_CPU_SECONDS_DEFAULT 5
#define MODEL_RUN_CPU_SECONDS_MIN 1
#define MODEL_RUN_CPU_SECONDS_MAX 600
/* memory of the whole run, MiB: the memory cgroup limit of all its
 * processes together (gvisor: RUNNER_GV_MEM_BASE_MB more, the sandbox's
 * own), and RLIMIT_AS of each process */
#define MODEL_RUN_MEMORY_MB_DEFAULT 256
#define MODEL_RUN_MEMORY_MB_MIN 16
#define MODEL_RUN_MEMORY_MB_MAX 16384
/* RLIMIT_NPROC of the agent (gvisor: and the base of its pids backstop) */
#define MODEL_RUN_PROCESSES_DEFAULT 32
#define MODEL_RUN_PROCESSES_MIN 2
#define MODEL_RUN_PROCESSES_MAX 4096
/* RLIMIT_NOFILE of the agent */
#define MODEL_RUN_OPEN_FILES_DEFAULT 64
#define MODEL_RUN_OPEN_FILES_MIN 8
#define MODEL_RUN_OPEN_FILES_MAX 65536
/* tmpfs_mb: the size of the agent's /tmp on the OS-level backends, MiB,
 * which also bounds its inodes (one per KiB: RUNNER_TMP_INODES,
 * runner/limits.h); on namespaces also the size of the jail's tmpfs root
 * (gvisor's root is a read-only bundle directory) */
#define MODEL_RUN_TMPFS_MB_DEFAULT 16
#define MODEL_RUN_TMPFS_MB_MIN 1
#define MODEL_RUN_TMPFS_MB_MAX 4096

#endif
