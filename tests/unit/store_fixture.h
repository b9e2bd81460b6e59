#ifndef OLIVARES_TESTS_STORE_FIXTURE_H
#define OLIVARES_TESTS_STORE_FIXTURE_H
/*
 * Shared by the store's test files (test_store.c and test_store_*.c, one
 * Check program): the database of the running case, a raw ODBC connection
 * to look at rows without the store, and the sample records the cases
 * build on. Every case runs once on SQLite and, with OLIVARES_TEST_PG_DSN,
 * once on PostgreSQL (test_store.c builds the suite).
 */
#include <check.h>
#include <jansson.h>
#include <sql.h>
#include <sqlext.h>
#include <stddef.h>

#include "sql/store.h"

/* The running case's connection string, its SQLite directory (SQLite
 * only), whether it runs on PostgreSQL, and its open store. */
extern char g_dsn[2048];
extern char g_dir[300];
extern int g_pg;
extern struct store *st;

/* ---- raw ODBC, for looking at rows ---------------------------------------- */

struct raw {
	SQLHENV env;
	SQLHDBC dbc;
};

/* Connect r to g_dsn (the case fails when it cannot); raw_close frees it. */
void raw_open(struct raw *r);
void raw_close(struct raw *r);
/* Run one statement on a connection of its own: 0, or -1 when it failed. */
int raw_exec(const char *sql);
/* Number of cells, in every table, whose text contains needle. */
int raw_cells_containing(const char *needle);
/* The first column of the first row of sql as a number (-1 for none). */
long raw_count(const char *sql);

/* ---- fixtures: a fresh database for every case ------------------------------ */

/* Open st on g_dsn and check its dialect. */
void open_store(void);
/* The SQLite case's directory (unchecked fixture, made by the parent). */
void setup_root(void);
void teardown_root(void);
/* A new SQLite file in a directory of its own, per case. */
void setup_sqlite(void);
void teardown_sqlite(void);
/* OLIVARES_TEST_PG_DSN with every table dropped first. */
void setup_pg(void);
void teardown_pg(void);

/* ---- helpers --------------------------------------------------------------- */

/* Apply every migration (the case fails when it cannot). */
void migrated(void);
/* Create tenant name; id gets its id. */
void mk_tenant(const char *name, char id[33]);
/* migrated(), then the tenants "acme" (a gets its id) and "globex" (b). */
void two_tenants(char a[33], char b[33]);
/* SHA-256 of n bytes of s as lowercase hex. */
void sha256_hex(const char *s, size_t n, char out[65]);
/* Parse test JSON (the case fails on bad JSON). */
json_t *jload(const char *text);
/* A valid scenario object named name (two steps, one mock). */
json_t *sample_scenario(const char *name);
/* The digest the store gives steps and mocks. */
void expected_digest(json_t *steps, json_t *mocks, char out[65]);
/* Member k of o as a string (NULL when it is not one) / an integer (the
 * case fails when it is not one). */
const char *jstr(json_t *o, const char *k);
json_int_t jint(json_t *o, const char *k);
/* n outputs with the given seqs, "ok", no duration. */
json_t *make_outputs(const int *seqs, int n);
/* A completed simulation run of scenario_id with outputs (borrowed). */
struct store_run sample_run(const char *scenario_id, json_t *outputs);
/* A token of tenant with role; id gets its id. The secret is derived from
 * name (never stored: only its digest is). */
void mk_token(const char *tenant, enum store_role role, const char *name, char id[33]);
/* The stored digest of a cookie secret named name, as the admin view makes it. */
void cookie_sha(const char *name, char out[65]);
/* COUNT(*) of table's rows whose col is value. */
long count_where(const char *table, const char *col, const char *value);
/* Sign token of tenant in from T0 to T8 with the cookie secret named cookie
 * (the case fails when that is refused): sha gets the cookie's digest, id
 * the session's id. */
void sign_in(const char *tenant, const char *token, const char *cookie, char sha[65], char id[33]);
/* store_web_session_lookup of sha at now: STORE_NOT_FOUND, principal zeroed. */
void assert_not_found_zeroed(const char *sha, const char *now);

/* Times of the admin view session cases. */
#define T0 "2030-01-01T00:00:00.000Z"
#define T8 "2030-01-01T08:00:00.000Z"

/* ---- the cases of each file, added to a case of the suite ------------------ */

void store_runs_cases(TCase *tc);        /* test_store_runs.c */
void store_comparisons_cases(TCase *tc); /* test_store_comparisons.c */
void store_sessions_cases(TCase *tc);    /* test_store_sessions.c */
void store_idem_cases(TCase *tc);        /* test_store_idem.c */
void store_jobs_cases(TCase *tc);        /* test_store_jobs.c */
void store_evidence_cases(TCase *tc);    /* test_store_evidence.c */
void store_suites_cases(TCase *tc);      /* test_store_suites.c */
void store_usage_cases(TCase *tc);       /* test_store_usage.c */
void store_metrics_cases(TCase *tc);     /* test_store_metrics.c */
void store_retention_cases(TCase *tc);   /* test_store_retention.c */

#endif
