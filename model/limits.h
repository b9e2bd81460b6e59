#ifndef OLIVARES_MODEL_LIMITS_H
#define OLIVARES_MODEL_LIMITS_H
/**
 * Every limit the sandbox enforces, in one place. Values marked "page" come
 * from the sandbox product page (shared/seeds/000_*, section "Générer les
 * entrées d'un scénario"); the others are this project's bounds on a
 * scenario, chosen so that any scenario that fits them is far inside the
 * 1 MiB request limit per field while still letting the request as a whole
 * be checked against that limit.
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

/* DESIGN.md §5: bounded scenario name and description */
#define MODEL_MAX_NAME_BYTES 128
#define MODEL_MAX_DESCRIPTION_BYTES 1024

/* project bounds on a scenario's parts */
#define MODEL_MAX_STEPS 1000
#define MODEL_MAX_MOCKS 1000
#define MODEL_MAX_KEY_BYTES 128
#define MODEL_MAX_VARIANT_BYTES 64
#define MODEL_MAX_RESOURCE_BYTES 8192
#define MODEL_MAX_RESPONSE_BYTES 65536

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

#endif
