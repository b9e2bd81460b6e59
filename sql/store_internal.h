#ifndef OLIVARES_SQL_STORE_INTERNAL_H
#define OLIVARES_SQL_STORE_INTERNAL_H
/*
 * What the files of the store share (private to sql/: nothing outside it
 * includes this header). core.c holds the connection, errors, the statement
 * cache, parameter binding, row decoding and the retrying transactions; each
 * other file holds one group of entities and calls only what is declared
 * here.
 *
 * Shape of every public call: validate arguments, then run one function
 * inside store_tx() (a write) or store_read() (a read), which owns the
 * transaction, the commit, the rollback on any failure and the bounded
 * retry on a lock (core.c says how). That function must be re-runnable: it
 * resets its outputs at its start, because a retried transaction runs it
 * again from its first statement.
 */
#include <jansson.h>
#include <sql.h>
#include <sqlext.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/buf.h"
#include "model/limits.h"
#include "sql/store.h"

#define STORE_TEXT_MAX (64u << 20) /* refuse to read a column above 64 MiB */
#define STORE_SHA256_HEX_LEN 64    /* a SHA-256 digest as lowercase hex (token, cookie) */

enum store_dialect { DIALECT_SQLITE, DIALECT_POSTGRES };

/*
 * Prepared statements are kept per connection, one per SQL text, and run
 * again with new parameters (SQLFreeStmt SQL_CLOSE + SQL_RESET_PARAMS in
 * between): preparing is most of the cost of a small query on SQLite (the
 * driver also reads every column's metadata at prepare time). The cache is
 * emptied with the connection, and a statement whose execution failed is
 * dropped from it, so an error never sticks to a cached handle.
 */
#define STORE_STMT_CACHE 48

struct stmt_slot {
	SQLHSTMT h;         /* SQL_NULL_HSTMT when the slot is free */
	char *sql;          /* own copy of the text it was prepared from */
	unsigned long hash; /* of sql, to skip most strcmp calls */
	unsigned long used; /* st->tick of the last use, for LRU eviction */
	int busy;           /* handed out and not yet released */
};

struct store {
	SQLHENV env;
	SQLHDBC dbc;
	char *dsn;
	enum store_dialect dialect;
	int connected;
	int broken; /* connection lost: reconnect before the next call */
	int busy;   /* the last failure is a lock/serialization conflict */
	char err[512];
	int autocommit; /* the connection's current mode (store_call) */
	/* SQLite: the file at connection time, so that one deleted or
	 * replaced under the server is noticed (store_call) */
	char file[512];
	dev_t file_dev;
	ino_t file_ino;
	int have_file;
	struct stmt_slot stmts[STORE_STMT_CACHE];
	unsigned long tick;
	struct store_stats stats; /* store_stats: counted by store_call */
	/* store_quota_guard: the next write call's tenant and limit (0: none) */
	char quota_tenant[33];
	long long quota_limit;
};

/* The check of store_quota_guard (usage.c), run by store_call before a
 * guarded write's commit: STORE_QUOTA when the tenant's usage, summed in
 * the transaction with its row held, passes the limit. */
enum store_rc store_quota_guard_check(struct store *st);

/* ---- errors and small helpers (core.c) ----------------------------------- */

/* Set the connection's error text (store_last_error): never a bound value. */
void store_seterr(struct store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record the first ODBC diagnostic of handle h (of type htype) after the
 * call named by what, and classify it: sets st->busy for a retryable
 * conflict and st->broken for a lost connection. Returns STORE_UNAVAILABLE
 * for those and a full database, STORE_CONFLICT for a unique-key
 * violation, else STORE_ERROR. */
enum store_rc store_odbc_fail(struct store *st, SQLSMALLINT htype, SQLHANDLE h, const char *what);

/* Drop every cached statement of the connection (statement.c): before a
 * disconnect, whose handles they are. */
void store_stmt_cache_clear(struct store *st);

/* 16 random bytes from OpenSSL as 32 lowercase hex; STORE_ERROR when the
 * generator fails. */
enum store_rc store_new_id(struct store *st, char out[33]);

/* The current time as UTC "YYYY-MM-DDTHH:MM:SS.mmmZ", the one format of
 * every stored timestamp. */
void store_now_iso(char out[32]);

/* The time now + delta_ms in the same format (a lease's cutoff is
 * now - lease: stored timestamps compare in time order as text). */
void store_iso_from_now(long long delta_ms, char out[32]);

/* Milliseconds since the epoch of a stored timestamp ("YYYY-MM-DDTHH:MM:SS"
 * then optional ".mmm", then "Z"): 0, or -1 when s is not one. */
int store_iso_ms(const char *s, long long *ms);

/* 1 when s is exactly n lowercase hex digits. */
int store_is_lower_hex(const char *s, size_t n);

/* 1 when s is min..max bytes of valid UTF-8 (NULL is not). */
int store_text_ok(const char *s, size_t min, size_t max);

/* A list's limit clamped to 1..500 (store.h: "limit 1..500"). */
int store_clamp_limit(int limit);

/* ---- statements: bind, execute, read (core.c) ---------------------------- */

enum ptype { P_TEXT, P_INT, P_REAL, P_BIGINT };

/* One bound parameter; the trailing members are the values handed to the
 * driver, which point into this struct until the statement is given back. */
struct param {
	enum ptype type;
	const char *s; /* P_TEXT; NULL binds SQL NULL */
	long long i;   /* P_INT (32 bits bound), P_BIGINT (64 bits bound) */
	double d;      /* P_REAL */
	int null;      /* P_INT, P_BIGINT, P_REAL: bind SQL NULL */
	SQLINTEGER iv;
	SQLBIGINT bv;
	SQLDOUBLE dv;
	SQLLEN ind;
};

#define PT(x)                                                                                      \
	{                                                                                          \
		.type = P_TEXT, .s = (x)                                                           \
	}
#define PI(x)                                                                                      \
	{                                                                                          \
		.type = P_INT, .i = (x)                                                            \
	}
/* an integer / a real, or SQL NULL when has is 0 */
#define PIN(has, x)                                                                                \
	{                                                                                          \
		.type = P_INT, .i = (x), .null = !(has)                                            \
	}
#define PR(has, x)                                                                                 \
	{                                                                                          \
		.type = P_REAL, .d = (x), .null = !(has)                                           \
	}
#define NPARAMS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Prepare sql (or take it from the statement cache when cache is set), bind
 * the n parameters p and execute. If out is not NULL the statement is handed
 * to the caller (fetch with store_q_fetch, give back with store_q_free);
 * otherwise it is given back here and *rows (if not NULL) receives the
 * affected row count. DDL runs uncached (cache 0): it runs once per process.
 */
enum store_rc store_q_run(struct store *st, const char *sql, struct param *p, size_t n,
                          SQLHSTMT *out, SQLLEN *rows, int cache);
/* store_q_run through the statement cache: every statement of the store but DDL. */
enum store_rc store_q_exec(struct store *st, const char *sql, struct param *p, size_t n,
                           SQLHSTMT *out, SQLLEN *rows);
/* Give back a statement handed out by store_q_exec; failed drops it from the
 * cache (a statement that failed mid-fetch is not reused). */
void store_q_free(struct store *st, SQLHSTMT h, int failed);
/* *row = 1 and the cursor on the next row, or *row = 0 at the end. */
enum store_rc store_q_fetch(struct store *st, SQLHSTMT h, int *row);
/* Integer column col of the current row: *null for SQL NULL (*v 0). */
enum store_rc store_col_int(struct store *st, SQLHSTMT h, int col, long long *v, int *null);

/* Row to JSON object, driven by a column table matching the SELECT list.
 * C_US_MS: an integer column of microseconds shown as milliseconds (a
 * real, us / 1000), null for SQL NULL. C_TEXT_SET: text where '' means
 * "not known yet" (a queued run's runner, output_digest, started_at,
 * finished_at: NOT NULL columns, migration 008), shown as null like SQL
 * NULL. */
enum ctype { C_TEXT, C_INT, C_BOOL, C_REAL, C_JSON, C_US_MS, C_TEXT_SET };

struct colspec {
	const char *name;
	enum ctype type;
};

/* Run a query and collect every row as an object appended to array arr. */
enum store_rc store_q_rows(struct store *st, const char *sql, struct param *p, size_t n,
                           const struct colspec *cols, size_t ncols, json_t *arr);
/* A listing: store_q_rows into a new array, returned as {key: array} in *out
 * (a new reference; NULL on failure). */
enum store_rc store_q_list(struct store *st, const char *sql, struct param *p, size_t n,
                           const struct colspec *cols, size_t ncols, const char *key, json_t **out);
/* The first row as an object; STORE_NOT_FOUND if there is none. */
enum store_rc store_q_row(struct store *st, const char *sql, struct param *p, size_t n,
                          const struct colspec *cols, size_t ncols, json_t **out);
/* 1 in *found if the query returns at least one row. */
enum store_rc store_q_exists(struct store *st, const char *sql, struct param *p, size_t n,
                             int *found);

/*
 * Read a principal from columns 1..5 of the current row (token id, tenant
 * id, role, a SHA-256 hex, scopes) and check their shape: a malformed row is
 * STORE_ERROR, never a half-filled principal (*pr is zeroed on any error).
 * Shared by the token lookups and the admin view's session lookup.
 */
enum store_rc store_principal_row(struct store *st, SQLHSTMT h, struct store_principal *pr);

/* One optional filter of a list: "AND col = ?" when value is set. */
struct store_filter_cond {
	const char *value;
	const char *sql;
};

/* The most filters one list may have (store_q_filtered). */
#define STORE_FILTERS_MAX 8

/* A tenant's filtered, paged list query (store_q_filtered). */
struct store_list_query {
	const char *head;  /* a SELECT ending in "WHERE <tenant column> = ?" */
	const char *order; /* " ORDER BY …" */
	const char *tenant_id;
	const struct store_filter_cond *conds; /* optional filters, at most STORE_FILTERS_MAX */
	size_t nconds;
	int limit, offset;
};

/* Collect every row of sql (with the n parameters p) into the array arr. */
typedef enum store_rc (*store_rows_fn)(struct store *st, const char *sql, struct param *p, size_t n,
                                       json_t *arr);

/*
 * Run the list query q: "<head> AND col = ? … <order> LIMIT ? OFFSET ?",
 * with one "AND col = ?" per filter whose value is set, every value bound.
 * *out gets {key: [the rows as rows collects them]} (a new reference; NULL
 * on failure).
 */
enum store_rc store_q_filtered(struct store *st, const struct store_list_query *q,
                               store_rows_fn rows, const char *key, json_t **out);

/* ---- transactions (core.c) ----------------------------------------------- */

typedef enum store_rc (*store_tx_fn)(struct store *st, void *arg);

/*
 * Run fn(st, arg) in a transaction when write is set (commit on STORE_OK,
 * roll back otherwise), or as a read in autocommit mode when it is not;
 * retried on a lock or serialization conflict, reconnected once on a
 * connection lost before the commit (core.c says when and why).
 */
enum store_rc store_call(struct store *st, store_tx_fn fn, void *arg, int write);
/* A transaction that may write (store_call). */
enum store_rc store_tx(struct store *st, store_tx_fn fn, void *arg);
/* A read without an explicit transaction (store_call): only for functions
 * whose reads need no common snapshot (one SELECT, or rows written together
 * and never changed). */
enum store_rc store_read(struct store *st, store_tx_fn fn, void *arg);

/*
 * store_read / store_tx for a function fn that builds its answer, a new JSON
 * reference, in *result (a member of arg; fn drops what an earlier attempt
 * left there and resets it at its start). On STORE_OK the answer is handed
 * to *out (dropped when out is NULL); on any failure it is dropped and *out
 * is NULL. *result is NULL afterwards either way.
 */
enum store_rc store_read_json(struct store *st, store_tx_fn fn, void *arg, json_t **result,
                              json_t **out);
enum store_rc store_tx_json(struct store *st, store_tx_fn fn, void *arg, json_t **result,
                            json_t **out);

/* Reads the tenant's record id into *out (a new reference), STORE_NOT_FOUND
 * when there is none; runs inside the caller's transaction or read. */
typedef enum store_rc (*store_get_fn)(struct store *st, const char *tenant_id, const char *id,
                                      json_t **out);

/* A public "get by id" of records that are read by one function and need
 * no common snapshot: *out NULL and STORE_NOT_FOUND for a NULL tenant or
 * id, else reader(…) run by store_read_json. */
enum store_rc store_get(struct store *st, store_get_fn reader, const char *tenant_id,
                        const char *id, json_t **out);

/* ---- shared by the entity files -------------------------------------------- */

/* Insert one audit row inside the caller's transaction (tenants.c): actor
 * and target_id may be NULL; detail (borrowed, may be NULL) is stored as its
 * compact JSON text. */
enum store_rc store_audit_insert(struct store *st, const char *tenant_id, const char *actor,
                                 const char *action, const char *target_id, json_t *detail);

/* Hold the tenant tenant_id to the commit, for a count-then-write
 * (tenants.c): two such transactions of one tenant take turns, so both
 * cannot pass a limit (max_active_runs, the storage quota). PostgreSQL:
 * its row FOR NO KEY UPDATE, which the transaction's own inserts (their
 * foreign keys hold the row FOR KEY SHARE) do not conflict with, as FOR
 * UPDATE would (two holders would deadlock on each other's share).
 * SQLite: a write, which takes the database's write lock before the count
 * is read (a read first would fail to upgrade when another writer got in
 * between, instead of waiting). STORE_NOT_FOUND for an unknown tenant. */
enum store_rc store_tenant_hold(struct store *st, const char *tenant_id);

/* Check a run before anything is written (runs.c). *copy is filled with
 * *run, with an empty outputs array (*empty, to decref by the caller) when
 * it has none; STORE_ERROR with the reason in the store's error text. */
enum store_rc store_run_check(struct store *st, const struct store_run *run, struct store_run *copy,
                              json_t **empty);

/* Insert one checked run, its outputs and its "sandbox.run" audit event
 * inside the caller's transaction (runs.c); id_out gets the new run's id.
 * STORE_NOT_FOUND when it names a session that is not the tenant's. */
enum store_rc store_run_insert(struct store *st, const char *tenant_id, const char *actor,
                               const struct store_run *r, char id_out[33]);

/* What a queued run's row holds beside a struct store_run (jobs.c): when it
 * was queued, its job object as compact JSON text, and the comparison it
 * is one side of (NULL: none). Every member borrowed. */
struct store_run_queue {
	const char *queued_at;
	const char *job;
	const char *comparison_id;
};

/* store_run_insert of a queued run (q not NULL) or of a run recorded whole
 * (q NULL: queued_at is its started_at, steps_done its outputs' count). */
enum store_rc store_run_insert_queued(struct store *st, const char *tenant_id, const char *actor,
                                      const struct store_run *r, const struct store_run_queue *q,
                                      char id_out[33]);

/* The JSON text columns of r (runs.c): *details the compact text of its
 * score_details when that is an array, *divergence of its divergence when
 * that is an object, else NULL; the caller frees both. */
enum store_rc store_run_json_text(struct store *st, const struct store_run *r, char **details,
                                  char **divergence);

/* Every output of outputs (an array, or NULL) well-formed as store_run
 * records them (runs.c); STORE_ERROR naming the first that is not. */
enum store_rc store_outputs_check(struct store *st, json_t *outputs);

/* Insert checked outputs of the tenant's run run_id (runs.c). */
enum store_rc store_outputs_insert(struct store *st, const char *run_id, const char *tenant_id,
                                   json_t *outputs);

/* The tenant's run id as store_run_get shows it, inside the caller's
 * transaction or read (runs.c). */
enum store_rc store_run_read(struct store *st, const char *tenant_id, const char *id, json_t **out);

/* Append the stored outputs of the tenant's run run_id to arr, in seq
 * order, as store_run_outputs shows them (runs.c). */
enum store_rc store_run_outputs_read(struct store *st, const char *tenant_id, const char *run_id,
                                     json_t *arr);

/* Insert the comparison row id (its verdict decided) between the runs bid
 * and kid, and its "sandbox.compare" event by actor (also decided_by),
 * inside the caller's transaction (comparisons.c). STORE_CONFLICT when the
 * id is taken. */
enum store_rc store_comparison_insert(struct store *st, const char *tenant_id, const char *actor,
                                      const char *id, const struct store_comparison *c,
                                      const char *bid, const char *kid);

/* The tenant's comparison id as store_comparison_get shows it (decided or
 * pending), inside the caller's transaction or read (comparisons.c). */
enum store_rc store_comparison_read(struct store *st, const char *tenant_id, const char *id,
                                    json_t **out);

/* The backends a run may name: the four of model/runspec.h (executors.c). */
#define STORE_BACKENDS_MAX 4

/* The index (0..3) of the len bytes at name among the known backends, or
 * -1 when they name none. */
int store_backend_index(const char *name, size_t len);

/* Parse a comma list of backends ("" and empty items allowed) into out,
 * slot i holding the i-th known name when the list names it, else NULL
 * (so a query binds all four, the missing ones as NULL). Returns how many
 * it names, or -1 when an item is not a known backend. */
int store_backends_parse(const char *list, const char *out[STORE_BACKENDS_MAX]);

/* 1 when id is an executor id: 1..128 bytes of [A-Za-z0-9._:-]. */
int store_executor_id_ok(const char *id);

/* Record idem (NULL: nothing to do) with response, the answer of the create
 * being written, inside the caller's transaction (idempotency.c); the
 * tenant's expired keys are deleted first. STORE_CONFLICT when the key is
 * taken. */
enum store_rc store_idem_insert(struct store *st, const char *tenant_id,
                                const struct store_idem *idem, json_t *response);

/**
 * Insert a history session (an import body as model_session_check
 * normalizes it, borrowed) for tenant_id inside the caller's transaction,
 * with its audit event action by actor (detail {"events": N} and
 * "run_id" when run_id is not NULL: ids and counts only, never content).
 * id_out gets the new id; *out (may be NULL) the summary
 * {"id","external_id","events_count","created_at"}. STORE_ERROR for a
 * malformed body, nothing written.
 */
enum store_rc store_session_insert(struct store *st, const char *tenant_id, const char *actor,
                                   const char *action, json_t *session, const char *run_id,
                                   char id_out[33], json_t **out);

/* Append the evidence link of the tenant's ended run run_id (its record,
 * model_evidence_run_record, and outputs) or settled comparison, inside
 * the caller's transaction (evidence.c). */
enum store_rc store_evidence_link_run(struct store *st, const char *tenant_id, const char *run_id);
enum store_rc store_evidence_link_comparison(struct store *st, const char *tenant_id,
                                             const char *comparison_id);
/* Append the evidence link of the approval record (the object the API
 * shows: id, comparison_id, decision, reason, decided_by, created_at),
 * inside the caller's transaction (evidence.c). */
enum store_rc store_evidence_link_approval(struct store *st, const char *tenant_id,
                                           const json_t *approval);

#endif
