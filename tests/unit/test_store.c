/*
 * Unit tests of the store (sql/store.c) on SQLite through libsqliteodbc,
 * and, when OLIVARES_TEST_PG_DSN is set, the very same cases on PostgreSQL
 * through odbc-postgresql. Every case gets a fresh database: a new temp file
 * for SQLite; for PostgreSQL every table is dropped first, so the suite can
 * be run again and again on one database.
 *
 * A raw ODBC connection (not the store) looks at the rows themselves, to
 * check what is stored (no token secret anywhere) and what is not (no run
 * left behind by a failed transaction).
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sql/store.h"

static char g_dsn[2048];
static char g_dir[300];
static int g_pg;
static struct store *st;

static const char *const all_tables[] = {"tenants",	    "api_tokens",  "module_settings",
					 "audit_events",    "scenarios",   "runs",
					 "run_outputs",	    "comparisons", "sessions",
					 "web_sessions",    "schema_migrations"};

/* ---- raw ODBC, for looking at rows ------------------------------------------ */

struct raw {
	SQLHENV env;
	SQLHDBC dbc;
};

static void raw_open(struct raw *r)
{
	SQLRETURN rc;

	SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &r->env);
	SQLSetEnvAttr(r->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
	SQLAllocHandle(SQL_HANDLE_DBC, r->env, &r->dbc);
	rc = SQLDriverConnect(r->dbc, NULL, (SQLCHAR *)g_dsn, SQL_NTS, NULL, 0, NULL,
			      SQL_DRIVER_NOPROMPT);
	ck_assert_msg(SQL_SUCCEEDED(rc), "raw connect failed");
}

static void raw_close(struct raw *r)
{
	SQLDisconnect(r->dbc);
	SQLFreeHandle(SQL_HANDLE_DBC, r->dbc);
	SQLFreeHandle(SQL_HANDLE_ENV, r->env);
}

static int raw_exec(const char *sql)
{
	struct raw r;
	SQLHSTMT h;
	SQLRETURN rc;

	raw_open(&r);
	SQLAllocHandle(SQL_HANDLE_STMT, r.dbc, &h);
	rc = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
	SQLFreeHandle(SQL_HANDLE_STMT, h);
	raw_close(&r);
	return SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA ? 0 : -1;
}

/* Whole text of the current row's column col (chunked), or NULL. */
static char *raw_text(SQLHSTMT h, int col)
{
	char chunk[1024];
	char *acc = NULL;
	size_t len = 0, got;
	SQLLEN ind;
	SQLRETURN rc;

	for (;;) {
		rc = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_CHAR, chunk, sizeof chunk, &ind);
		if (rc == SQL_NO_DATA || !SQL_SUCCEEDED(rc) || ind == SQL_NULL_DATA)
			break;
		got = (rc == SQL_SUCCESS_WITH_INFO && (ind == SQL_NO_TOTAL || ind >= (SQLLEN)sizeof chunk))
			      ? sizeof chunk - 1
			      : (size_t)ind;
		acc = realloc(acc, len + got + 1);
		memcpy(acc + len, chunk, got);
		len += got;
		acc[len] = '\0';
		if (rc == SQL_SUCCESS)
			break;
	}
	if (!acc && ind != SQL_NULL_DATA)
		acc = strdup("");
	return acc;
}

/* Number of cells, in every table, whose text contains needle. */
static int raw_cells_containing(const char *needle)
{
	struct raw r;
	SQLHSTMT h;
	SQLSMALLINT ncols;
	char sql[128];
	char *cell;
	size_t t;
	int c, hits = 0;

	raw_open(&r);
	for (t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++) {
		snprintf(sql, sizeof sql, "SELECT * FROM %s", all_tables[t]);
		SQLAllocHandle(SQL_HANDLE_STMT, r.dbc, &h);
		ck_assert(SQL_SUCCEEDED(SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS)));
		SQLNumResultCols(h, &ncols);
		while (SQL_SUCCEEDED(SQLFetch(h))) {
			for (c = 1; c <= ncols; c++) {
				cell = raw_text(h, c);
				if (cell && strstr(cell, needle))
					hits++;
				free(cell);
			}
		}
		SQLFreeHandle(SQL_HANDLE_STMT, h);
	}
	raw_close(&r);
	return hits;
}

static long raw_count(const char *sql)
{
	struct raw r;
	SQLHSTMT h;
	char *v;
	long n = -1;

	raw_open(&r);
	SQLAllocHandle(SQL_HANDLE_STMT, r.dbc, &h);
	ck_assert(SQL_SUCCEEDED(SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS)));
	if (SQL_SUCCEEDED(SQLFetch(h))) {
		v = raw_text(h, 1);
		n = v ? atol(v) : -1;
		free(v);
	}
	SQLFreeHandle(SQL_HANDLE_STMT, h);
	raw_close(&r);
	return n;
}

/* ---- fixtures -------------------------------------------------------------- */

static void open_store(void)
{
	enum store_rc rc = store_open(g_dsn, &st);

	ck_assert_msg(rc == STORE_OK, "store_open: %s", store_last_error(NULL));
	ck_assert_str_eq(store_dialect(st), g_pg ? "postgres" : "sqlite");
}

/* One directory for the whole SQLite test case, made and removed by the
 * parent process (so a failed test, whose forked child stops at the first
 * failed assertion, leaves nothing behind); one subdirectory per test. */
static char g_root[256];

static void setup_root(void)
{
	snprintf(g_root, sizeof g_root, "/tmp/olv-test-store-XXXXXX");
	if (!mkdtemp(g_root)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void teardown_root(void)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_root);
}

static void setup_sqlite(void)
{
	snprintf(g_dir, sizeof g_dir, "%s/XXXXXX", g_root);
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	snprintf(g_dsn, sizeof g_dsn,
		 "Driver=SQLite3;Database=%s/t.db;Timeout=5000;JournalMode=WAL;"
		 "SyncPragma=NORMAL;FKSupport=1",
		 g_dir);
	g_pg = 0;
	open_store();
}

static void teardown_sqlite(void)
{
	char cmd[512];

	store_close(st);
	st = NULL;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
}

static void setup_pg(void)
{
	snprintf(g_dsn, sizeof g_dsn, "%s", getenv("OLIVARES_TEST_PG_DSN"));
	g_pg = 1;
	ck_assert_int_eq(raw_exec("DROP TABLE IF EXISTS web_sessions, comparisons, run_outputs, "
				  "runs, sessions, scenarios, audit_events, module_settings, "
				  "api_tokens, tenants, schema_migrations CASCADE"),
			 0);
	open_store();
}

static void teardown_pg(void)
{
	store_close(st);
	st = NULL;
}

/* ---- helpers --------------------------------------------------------------- */

static void migrated(void)
{
	int n = -1;

	ck_assert_msg(store_migrate(st, &n) == STORE_OK, "migrate: %s", store_last_error(st));
}

static void mk_tenant(const char *name, char id[33])
{
	ck_assert_int_eq(store_tenant_create(st, name, id), STORE_OK);
	ck_assert_uint_eq(strlen(id), 32);
}

static void sha256_hex(const char *s, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len;
	int i;

	ck_assert(EVP_Digest(s, n, md, &len, EVP_sha256(), NULL) == 1);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

static json_t *jload(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	ck_assert_msg(j != NULL, "bad test JSON: %s", e.text);
	return j;
}

static json_t *sample_scenario(const char *name)
{
	json_t *s = jload("{\"description\":\"d\",\"subject_kind\":\"agent\","
			  "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"},"
			  "{\"key\":\"step-2\",\"input\":\"agent:user2@example.test\"}],"
			  "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
			  "\"response\":\"first synthetic account\"}]}");

	json_object_set_new(s, "name", json_string(name));
	return s;
}

static void expected_digest(json_t *steps, json_t *mocks, char out[65])
{
	json_t *both = json_pack("{s:O,s:O}", "steps", steps, "mocks", mocks);
	char *canon = json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS);

	sha256_hex(canon, strlen(canon), out);
	free(canon);
	json_decref(both);
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_int_t jint(json_t *o, const char *k)
{
	ck_assert_msg(json_is_integer(json_object_get(o, k)), "%s is not an integer", k);
	return json_integer_value(json_object_get(o, k));
}

static json_t *make_outputs(const int *seqs, int n)
{
	json_t *arr = json_array();
	char key[32], in[64], outv[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "step-%d", seqs[i]);
		snprintf(in, sizeof in, "agent:user%d@example.test", seqs[i]);
		snprintf(outv, sizeof outv, "response %d\nline two", seqs[i]);
		json_array_append_new(
			arr, json_pack("{s:i,s:s,s:s,s:s,s:s,s:n}", "seq", seqs[i], "key", key,
				       "input", in, "output", outv, "status", "ok", "error_kind"));
	}
	return arr;
}

static struct store_run sample_run(const char *scenario_id, json_t *outputs)
{
	struct store_run r;

	memset(&r, 0, sizeof r);
	r.kind = "simulation";
	r.scenario_id = scenario_id;
	r.scenario_version = 1;
	r.scenario_digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	r.variant = "candidate";
	r.status = "completed";
	r.runner = "olivares-runner/0.1.0";
	r.backend = "inproc-mock";
	r.isolated = 1;
	r.destroyed = 1;
	r.steps_total = (int)json_array_size(outputs);
	r.steps_ok = r.steps_total;
	r.steps_error = 0;
	r.output_digest = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
	r.started_at = "2024-01-01T00:00:00.000Z";
	r.finished_at = "2024-01-01T00:00:01.000Z";
	r.outputs = outputs;
	return r;
}

/* ---- cases -------------------------------------------------------------------- */

START_TEST(test_migrate_idempotent)
{
	int n = -1;

	ck_assert_int_eq(store_check_schema(st), STORE_UNAVAILABLE);
	ck_assert_int_eq(store_migrate(st, &n), STORE_OK);
	ck_assert_int_ge(n, 1);
	ck_assert_int_eq(store_check_schema(st), STORE_OK);
	ck_assert_int_eq(store_migrate(st, &n), STORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(store_check_schema(st), STORE_OK);
	ck_assert_int_ge(raw_count("SELECT COUNT(*) FROM schema_migrations"), 1);
}
END_TEST

START_TEST(test_tenant_token)
{
	char a[33], b[33], found[33], tok_id[33], tok_id2[33], sha[65], sha2[65];
	const char *token = "olv_5f3c0c1e9d2b4a6f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817";
	struct store_principal p;
	json_t *list = NULL, *ev;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(store_tenant_create(st, "acme", found), STORE_CONFLICT);
	ck_assert_int_eq(store_tenant_create(st, "", found), STORE_ERROR);
	ck_assert_int_eq(store_tenant_find(st, "acme", found), STORE_OK);
	ck_assert_str_eq(found, a);
	ck_assert_int_eq(store_tenant_find(st, "nobody", found), STORE_NOT_FOUND);
	ck_assert_int_eq(store_tenant_list(st, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "tenants")), 2);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "tenants"), 0), "name"), "acme");
	json_decref(list);

	sha256_hex(token, strlen(token), sha);
	ck_assert_int_eq(store_token_create(st, a, STORE_ROLE_EDITOR, sha, "ci", NULL, tok_id),
	                 STORE_OK);
	ck_assert_uint_eq(strlen(tok_id), 32);
	/* the same digest twice is refused, and its audit event is not
	 * written either (one transaction) */
	ck_assert_int_eq(
	    store_token_create(st, b, STORE_ROLE_ADMIN, sha, "", "olivares-admin", tok_id2),
	    STORE_CONFLICT);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'token.create'"),
	                 0);
	/* with an actor, the token and its event together */
	sha256_hex("olv_audited", 11, sha2);
	ck_assert_int_eq(
	    store_token_create(st, b, STORE_ROLE_VIEWER, sha2, "", "olivares-admin", tok_id2),
	    STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'token.create' AND actor = 'olivares-admin'"),
	                 1);
	ck_assert_int_eq(store_audit_list(st, b, 1, &list), STORE_OK);
	ev = json_array_get(json_object_get(list, "events"), 0);
	ck_assert_str_eq(jstr(ev, "target_id"), tok_id2);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "token_id"), tok_id2);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "role"), "viewer");
	json_decref(list);
	/* unknown tenant */
	ck_assert_int_eq(
	    store_token_create(st, "0123456789abcdef0123456789abcdef", STORE_ROLE_ADMIN,
	                       "aa23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	                       "", NULL, tok_id2),
	    STORE_NOT_FOUND);

	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	ck_assert_str_eq(p.token_id, tok_id);
	ck_assert_str_eq(p.sha256_hex, sha);
	ck_assert_int_eq(p.role, STORE_ROLE_EDITOR);
	ck_assert_int_eq(store_token_lookup(st, "00", &p), STORE_NOT_FOUND);
	ck_assert_int_eq(
		store_token_lookup(st,
				   "0000000000000000000000000000000000000000000000000000000000000000",
				   &p),
		STORE_NOT_FOUND);

	/* the digest is stored; the secret, whole or without its prefix, is not */
	ck_assert_int_eq(raw_cells_containing(sha), 1);
	ck_assert_int_eq(raw_cells_containing(token), 0);
	ck_assert_int_eq(raw_cells_containing(token + 4), 0);

	/* a revoked token no longer authenticates */
	ck_assert_int_eq(raw_exec("UPDATE api_tokens SET revoked = 1"), 0);
	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_NOT_FOUND);
}
END_TEST

START_TEST(test_modules)
{
	char a[33], b[33];
	int on = -1;
	json_t *list = NULL;
	json_t *m;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(store_module_list(st, a, &list), STORE_OK);
	m = json_array_get(json_object_get(list, "modules"), 0);
	ck_assert_str_eq(jstr(m, "name"), "sandbox");
	ck_assert(json_is_false(json_object_get(m, "enabled")));
	json_decref(list);

	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, NULL, NULL), STORE_OK);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 1);
	ck_assert_int_eq(store_module_list(st, a, &list), STORE_OK);
	ck_assert(json_is_true(json_object_get(json_array_get(json_object_get(list, "modules"), 0),
					       "enabled")));
	json_decref(list);
	/* another tenant is untouched */
	ck_assert_int_eq(store_module_get(st, b, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	/* off again (upsert), unknown modules refused */
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 0, NULL, NULL), STORE_OK);
	ck_assert_int_eq(store_module_get(st, a, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(store_module_set(st, a, "evals", 1, NULL, NULL), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM module_settings"), 1);
	/* with an actor, the switch and its event together */
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, "actor-1", NULL), STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
	                           "'module.enable' AND actor = 'actor-1'"),
	                 1);
	ck_assert_int_eq(
	    store_module_set(st, "0123456789abcdef0123456789abcdef", "sandbox", 0, "actor-1", NULL),
	    STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE actor = 'actor-1'"), 1);
}
END_TEST

START_TEST(test_scenario_crud)
{
	char a[33], digest[65];
	const char *actor = "11111111111111111111111111111111";
	json_t *in = sample_scenario("walkthrough");
	json_t *s = NULL, *g = NULL, *u = NULL, *list = NULL, *patch, *audit = NULL;
	json_t *items;
	char id[33];
	int i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_scenario_create(st, a, actor, in, &s), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(s, "id")), 32);
	snprintf(id, sizeof id, "%s", jstr(s, "id"));
	ck_assert_str_eq(jstr(s, "name"), "walkthrough");
	ck_assert_int_eq(jint(s, "version"), 1);
	expected_digest(json_object_get(in, "steps"), json_object_get(in, "mocks"), digest);
	ck_assert_str_eq(jstr(s, "digest"), digest);
	ck_assert_uint_eq(strlen(jstr(s, "created_at")), 24);
	ck_assert(jstr(s, "created_at")[23] == 'Z');

	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_OK);
	ck_assert(json_equal(g, s));
	ck_assert(json_equal(json_object_get(g, "steps"), json_object_get(in, "steps")));
	ck_assert(json_equal(json_object_get(g, "mocks"), json_object_get(in, "mocks")));
	json_decref(g);

	/* name only: version bump, same digest */
	patch = jload("{\"name\":\"renamed\"}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_OK);
	json_decref(patch);
	ck_assert_int_eq(jint(u, "version"), 2);
	ck_assert_str_eq(jstr(u, "name"), "renamed");
	ck_assert_str_eq(jstr(u, "digest"), digest);
	ck_assert_str_eq(jstr(u, "created_at"), jstr(s, "created_at"));
	ck_assert(strcmp(jstr(u, "updated_at"), jstr(s, "updated_at")) >= 0);
	json_decref(u);
	/* steps: digest changes */
	patch = jload("{\"steps\":[{\"key\":\"step-1\",\"input\":\"other\"}]}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_OK);
	ck_assert_int_eq(jint(u, "version"), 3);
	ck_assert_str_ne(jstr(u, "digest"), digest);
	expected_digest(json_object_get(patch, "steps"), json_object_get(in, "mocks"), digest);
	ck_assert_str_eq(jstr(u, "digest"), digest);
	json_decref(patch);
	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_OK);
	ck_assert(json_equal(g, u));
	ck_assert_str_eq(jstr(g, "description"), "d");
	json_decref(g);
	json_decref(u);
	/* unknown field in a patch: refused, nothing changes */
	patch = jload("{\"bogus\":1}");
	ck_assert_int_eq(store_scenario_update(st, a, actor, id, patch, &u), STORE_ERROR);
	ck_assert_ptr_null(u);
	json_decref(patch);

	/* list: newest first, with counts; limit and offset */
	for (i = 0; i < 2; i++) {
		json_t *more = sample_scenario(i == 0 ? "second" : "third");

		ck_assert_int_eq(store_scenario_create(st, a, actor, more, &g), STORE_OK);
		json_decref(g);
		json_decref(more);
	}
	ck_assert_int_eq(store_scenario_list(st, a, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "scenarios");
	ck_assert_uint_eq(json_array_size(items), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "third");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "name"), "second");
	ck_assert_str_eq(jstr(json_array_get(items, 2), "name"), "renamed");
	ck_assert_int_eq(jint(json_array_get(items, 2), "steps_count"), 1);
	ck_assert_int_eq(jint(json_array_get(items, 2), "mocks_count"), 1);
	ck_assert_int_eq(jint(json_array_get(items, 2), "version"), 3);
	ck_assert_ptr_null(json_object_get(json_array_get(items, 0), "steps"));
	json_decref(list);
	ck_assert_int_eq(store_scenario_list(st, a, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "scenarios");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "name"), "second");
	json_decref(list);

	/* delete */
	ck_assert_int_eq(store_scenario_delete(st, a, actor, id), STORE_OK);
	ck_assert_int_eq(store_scenario_get(st, a, id, &g), STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_scenario_delete(st, a, actor, id), STORE_NOT_FOUND);

	/* audit: newest first, the actor, the targets */
	ck_assert_int_eq(store_audit_list(st, a, 100, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 6);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "sandbox.scenario.delete");
	ck_assert_str_eq(jstr(json_array_get(items, 0), "target_id"), id);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "actor"), actor);
	ck_assert_str_eq(jstr(json_array_get(items, 3), "action"), "sandbox.scenario.update");
	ck_assert_int_eq(jint(json_object_get(json_array_get(items, 3), "detail"), "version"), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 5), "action"), "sandbox.scenario.create");
	json_decref(audit);
	ck_assert_int_eq(store_audit_list(st, a, 2, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 2);
	json_decref(audit);

	json_decref(s);
	json_decref(in);
}
END_TEST

/* Text that must come back byte for byte. */
static const char *const tricky[] = {
	"line one\nline two\n",
	"quotes \" and 'single' and backslash \\ and \\n literal",
	"unicode: é à ü — 日本語 — 🎉 — \xe2\x80\xa8",
	"tabs\tand\r\nCRLF and {{index}} {{subject_kind}} {{other}} }{",
	"",
	"trailing newline\n",
};

START_TEST(test_roundtrip_bytes)
{
	char a[33];
	json_t *in, *steps, *mocks, *s = NULL, *g = NULL, *outs, *ro = NULL, *run = NULL;
	struct store_run r;
	size_t big_len = 900 * 1024, i;
	char *big;
	char key[16];
	char *want, *got;

	migrated();
	mk_tenant("acme", a);
	/* ~900 KiB of mixed ASCII, newlines and multi-byte characters */
	big = malloc(big_len + 1);
	for (i = 0; i + 4 <= big_len; i += 4)
		memcpy(big + i, (i / 4) % 64 == 63 ? "é\n\"" : (i / 4) % 3 ? "日\\" : "ab\nc", 4);
	big[i] = '\0';
	big_len = strlen(big);

	steps = json_array();
	mocks = json_array();
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		snprintf(key, sizeof key, "step-%zu", i + 1);
		json_array_append_new(steps, json_pack("{s:s,s:s}", "key", key, "input", tricky[i]));
		json_array_append_new(mocks,
				      json_pack("{s:s,s:s}", "resource", tricky[i], "response", tricky[i]));
	}
	json_array_append_new(steps, json_pack("{s:s,s:s}", "key", "big", "input", big));
	in = json_pack("{s:s,s:s,s:s,s:o,s:o}", "name", "名前 \"quoted\"\n", "description",
		       tricky[1], "subject_kind", tricky[2], "steps", steps, "mocks", mocks);
	ck_assert_int_eq(store_scenario_create(st, a, NULL, in, &s), STORE_OK);
	ck_assert_int_eq(store_scenario_get(st, a, jstr(s, "id"), &g), STORE_OK);
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		json_t *step = json_array_get(json_object_get(g, "steps"), i);

		ck_assert_str_eq(jstr(step, "input"), tricky[i]);
		ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "mocks"), i), "response"),
				 tricky[i]);
	}
	ck_assert_uint_eq(
		json_string_length(json_object_get(json_array_get(json_object_get(g, "steps"), i),
						   "input")),
		big_len);
	ck_assert(memcmp(jstr(json_array_get(json_object_get(g, "steps"), i), "input"), big,
			 big_len) == 0);
	ck_assert_str_eq(jstr(g, "name"), "名前 \"quoted\"\n");
	ck_assert_str_eq(jstr(g, "subject_kind"), tricky[2]);
	/* the JSON text itself survives byte for byte */
	want = json_dumps(in, JSON_COMPACT | JSON_SORT_KEYS);
	json_object_del(g, "id");
	json_object_del(g, "version");
	json_object_del(g, "digest");
	json_object_del(g, "created_at");
	json_object_del(g, "updated_at");
	got = json_dumps(g, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(got, want);
	free(want);
	free(got);

	/* outputs too, including a ~900 KiB one */
	outs = json_array();
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++)
		json_array_append_new(outs, json_pack("{s:i,s:s,s:s,s:s,s:s,s:s}", "seq", (int)i + 1,
						      "key", "k", "input", tricky[i], "output",
						      tricky[i], "status", "error", "error_kind",
						      "mock_miss"));
	json_array_append_new(outs, json_pack("{s:i,s:s,s:s,s:s,s:s,s:n}", "seq", (int)i + 1, "key",
					      "big", "input", "x", "output", big, "status", "ok",
					      "error_kind"));
	r = sample_run(jstr(s, "id"), outs);
	r.variant = "é\n";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "variant"), "é\n");
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	/* no duration given: each reads back unknown */
	for (i = 0; i < json_array_size(outs); i++)
		json_object_set_new(json_array_get(outs, i), "duration_ms", json_null());
	ck_assert(json_equal(json_object_get(ro, "outputs"), outs));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(ro, "outputs"), 2), "output"),
			 tricky[2]);

	json_decref(ro);
	json_decref(run);
	json_decref(outs);
	json_decref(g);
	json_decref(s);
	json_decref(in);
	free(big);
}
END_TEST

START_TEST(test_runs)
{
	static const int seqs[] = {3, 1, 2};
	const char *actor = "22222222222222222222222222222222";
	char a[33];
	json_t *sc = NULL, *in = sample_scenario("s");
	json_t *outs = make_outputs(seqs, 3);
	json_t *run1 = NULL, *run2 = NULL, *run3 = NULL, *g = NULL, *list = NULL, *ro = NULL;
	json_t *audit = NULL;
	json_t *items, *ev;
	struct store_run r;
	char b[33];
	int i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_scenario_create(st, a, actor, in, &sc), STORE_OK);
	r = sample_run(jstr(sc, "id"), outs);
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run1), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(run1, "id")), 32);
	ck_assert_str_eq(jstr(run1, "kind"), "simulation");
	ck_assert_str_eq(jstr(run1, "scenario_id"), jstr(sc, "id"));
	ck_assert_int_eq(jint(run1, "scenario_version"), 1);
	ck_assert_str_eq(jstr(run1, "variant"), "candidate");
	ck_assert_str_eq(jstr(run1, "status"), "completed");
	ck_assert_str_eq(jstr(run1, "backend"), "inproc-mock");
	ck_assert(json_is_true(json_object_get(run1, "isolated")));
	ck_assert(json_is_true(json_object_get(run1, "destroyed")));
	ck_assert(json_is_false(json_object_get(run1, "scored")));
	ck_assert(json_is_null(json_object_get(run1, "score")));
	ck_assert(json_is_null(json_object_get(run1, "passed")));
	ck_assert(json_is_null(json_object_get(run1, "suite")));
	ck_assert(json_is_null(json_object_get(run1, "reason")));
	ck_assert_int_eq(jint(run1, "steps_total"), 3);
	ck_assert_str_eq(jstr(run1, "created_by"), actor);
	ck_assert_str_eq(jstr(run1, "started_at"), "2024-01-01T00:00:00.000Z");
	ck_assert(json_is_null(json_object_get(run1, "score_details")));
	/* issue 5: every run object carries session_id and divergence */
	ck_assert(json_is_null(json_object_get(run1, "session_id")));
	ck_assert(json_is_null(json_object_get(run1, "divergence")));
	/* session 10: and its shutdown note, null when none */
	ck_assert_msg(json_object_get(run1, "shutdown") != NULL, "no shutdown key");
	ck_assert(json_is_null(json_object_get(run1, "shutdown")));
	ck_assert_uint_eq(json_object_size(run1), 27);

	ck_assert_int_eq(store_run_get(st, a, jstr(run1, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run1));
	json_decref(g);

	ck_assert_int_eq(store_run_outputs(st, a, jstr(run1, "id"), &ro), STORE_OK);
	ck_assert_str_eq(jstr(ro, "run_id"), jstr(run1, "id"));
	items = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(items), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(jint(json_array_get(items, (size_t)i), "seq"), i + 1);
		ck_assert(json_is_null(json_object_get(json_array_get(items, (size_t)i), "error_kind")));
	}
	ck_assert_str_eq(jstr(json_array_get(items, 0), "output"), "response 1\nline two");
	json_decref(ro);

	/* a second run: failed, not isolated, with a reason, no variant */
	r.status = "failed";
	r.isolated = 0;
	r.destroyed = 0;
	r.variant = NULL;
	r.reason = "namespaces: user namespaces unavailable";
	r.outputs = NULL;
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run2), STORE_OK);
	ck_assert(json_is_false(json_object_get(run2, "isolated")));
	ck_assert(json_is_null(json_object_get(run2, "variant")));
	ck_assert_str_eq(jstr(run2, "reason"), r.reason);

	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run2, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, NULL, "completed", 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, jstr(sc, "id"), "failed", 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 1);
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, "ffffffffffffffffffffffffffffffff", NULL, 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(run1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run2, "id"), &ro), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(ro, "outputs")), 0);
	json_decref(ro);

	/* audit: "sandbox.run" with only scenario_id, variant, status */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 3);
	ev = json_array_get(items, 1);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.run");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(run1, "id"));
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 3);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "scenario_id"), jstr(sc, "id"));
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "variant"), "candidate");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "status"), "completed");
	ck_assert(json_is_null(json_object_get(json_object_get(json_array_get(items, 0), "detail"),
					       "variant")));
	json_decref(audit);

	/* unknown run */
	ck_assert_int_eq(store_run_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
			 STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_outputs(st, a, "not an id' OR 1=1 --", &ro), STORE_NOT_FOUND);

	/* a completed run whose agent had to be killed, and not scored: the
	 * shutdown note and the reason are stored side by side, each as
	 * given, and read back the same */
	r.status = "completed";
	r.reason = "executed, not scored: no scorer adapter is wired";
	r.shutdown = "agent did not exit within its 1000 ms grace after the end of its input: "
		     "killed";
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &run3), STORE_OK);
	ck_assert_str_eq(jstr(run3, "status"), "completed");
	ck_assert_str_eq(jstr(run3, "reason"), r.reason);
	ck_assert_msg(jstr(run3, "shutdown") != NULL, "no shutdown note");
	ck_assert_str_eq(jstr(run3, "shutdown"), r.shutdown);
	ck_assert_int_eq(store_run_get(st, a, jstr(run3, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run3));
	json_decref(g);
	/* and another tenant does not see it */
	mk_tenant("other", b);
	ck_assert_int_eq(store_run_get(st, b, jstr(run3, "id"), &g), STORE_NOT_FOUND);

	json_decref(run1);
	json_decref(run2);
	json_decref(run3);
	json_decref(outs);
	json_decref(sc);
	json_decref(in);
}
END_TEST

START_TEST(test_run_rollback)
{
	static const int dup[] = {1, 2, 2};
	char a[33];
	json_t *outs = make_outputs(dup, 3);
	json_t *run = NULL, *list = NULL, *audit = NULL;
	struct store_run r = sample_run("0123456789abcdef0123456789abcdef", outs);
	enum store_rc rc;

	migrated();
	mk_tenant("acme", a);
	rc = store_run_record(st, a, NULL, &r, &run);
	ck_assert_int_ne(rc, STORE_OK);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 0);
	json_decref(audit);
	json_decref(outs);

	/* a malformed output is refused before anything is written */
	outs = jload("[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":7,\"status\":\"ok\"}]");
	r.outputs = outs;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	json_decref(outs);

	/* and the store still works afterwards */
	r.outputs = NULL;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	json_decref(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 1);
}
END_TEST

/* Migration 006: each output's duration_ms is stored as integer
 * microseconds (past 2^31 too) and read back exactly; null or absent is
 * unknown (SQL NULL), as is every row written before the column existed;
 * a duration that is not a number in [0, STORE_DURATION_MAX_MS] makes the
 * run malformed and writes nothing. */
START_TEST(test_run_durations)
{
	static const char *const bad[] = {"-1", "-0.001", "\"5\"", "true", "86400000.001", "1e300"};
	char a[33], sql[512];
	json_t *outs, *run = NULL, *ro = NULL, *got;
	struct store_run r;
	size_t i;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM schema_migrations WHERE version = 6"), 1);
	outs = jload("[{\"seq\":1,\"key\":\"k1\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":12.345},"
		     "{\"seq\":2,\"key\":\"k2\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":0.001},"
		     "{\"seq\":3,\"key\":\"k3\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":2400000.5},"
		     "{\"seq\":4,\"key\":\"k4\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":0},"
		     "{\"seq\":5,\"key\":\"k5\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":null},"
		     "{\"seq\":6,\"key\":\"k6\",\"input\":\"i\",\"output\":\"o\","
		     "\"status\":\"ok\",\"error_kind\":null}]");
	r = sample_run("0123456789abcdef0123456789abcdef", outs);
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	got = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(got), 6);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 0), "duration_ms")) == 12.345);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 1), "duration_ms")) == 0.001);
	ck_assert(json_real_value(json_object_get(json_array_get(got, 2), "duration_ms")) ==
		  2400000.5);
	ck_assert(json_is_real(json_object_get(json_array_get(got, 3), "duration_ms")));
	ck_assert(json_real_value(json_object_get(json_array_get(got, 3), "duration_ms")) == 0);
	ck_assert(json_is_null(json_object_get(json_array_get(got, 4), "duration_ms")));
	ck_assert(json_is_null(json_object_get(json_array_get(got, 5), "duration_ms")));
	/* the column holds microseconds, 64 bits */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us = 2400000500"),
			 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us = 12345"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs WHERE duration_us IS NULL"), 2);
	/* a row as a writer before migration 006 left it: unknown */
	snprintf(sql, sizeof sql,
		 "INSERT INTO run_outputs (run_id, tenant_id, seq, key, input, output, status, "
		 "error_kind) VALUES ('%s', '%s', 7, 'k7', 'i', 'o', 'ok', NULL)",
		 jstr(run, "id"), a);
	ck_assert_int_eq(raw_exec(sql), 0);
	json_decref(ro);
	ck_assert_int_eq(store_run_outputs(st, a, jstr(run, "id"), &ro), STORE_OK);
	got = json_object_get(ro, "outputs");
	ck_assert_uint_eq(json_array_size(got), 7);
	ck_assert(json_is_null(json_object_get(json_array_get(got, 6), "duration_ms")));
	json_decref(ro);
	json_decref(run);
	json_decref(outs);

	/* refused, nothing written */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(sql, sizeof sql,
			 "[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":\"o\","
			 "\"status\":\"ok\",\"error_kind\":null,\"duration_ms\":%s}]",
			 bad[i]);
		outs = jload(sql);
		r = sample_run("0123456789abcdef0123456789abcdef", outs);
		run = NULL;
		ck_assert_msg(store_run_record(st, a, NULL, &r, &run) == STORE_ERROR,
			      "duration_ms %s accepted", bad[i]);
		ck_assert_ptr_null(run);
		json_decref(outs);
	}
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 7);
}
END_TEST

START_TEST(test_tenant_isolation)
{
	static const int seqs[] = {1, 2};
	char a[33], b[33];
	json_t *in = sample_scenario("private"), *sc = NULL, *run = NULL, *x = NULL, *patch;
	json_t *outs = make_outputs(seqs, 2);
	struct store_run r;
	const char *sid, *rid;
	int on;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	ck_assert_int_eq(store_scenario_create(st, a, NULL, in, &sc), STORE_OK);
	sid = jstr(sc, "id");
	r = sample_run(sid, outs);
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	rid = jstr(run, "id");
	ck_assert_int_eq(store_module_set(st, a, "sandbox", 1, NULL, NULL), STORE_OK);

	ck_assert_int_eq(store_scenario_get(st, b, sid, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	patch = jload("{\"name\":\"stolen\"}");
	ck_assert_int_eq(store_scenario_update(st, b, NULL, sid, patch, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	json_decref(patch);
	ck_assert_int_eq(store_scenario_delete(st, b, NULL, sid), STORE_NOT_FOUND);
	ck_assert_int_eq(store_scenario_list(st, b, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "scenarios")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_get(st, b, rid, &x), STORE_NOT_FOUND);
	ck_assert_int_eq(store_run_outputs(st, b, rid, &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_run_list(st, b, NULL, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_list(st, b, sid, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);
	ck_assert_int_eq(store_module_get(st, b, "sandbox", &on), STORE_OK);
	ck_assert_int_eq(on, 0);

	/* tenant A's data is intact and untouched */
	ck_assert_int_eq(store_scenario_get(st, a, sid, &x), STORE_OK);
	ck_assert_str_eq(jstr(x, "name"), "private");
	ck_assert_int_eq(jint(x, "version"), 1);
	json_decref(x);
	ck_assert_int_eq(store_run_outputs(st, a, rid, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "outputs")), 2);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, a, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 2);
	json_decref(x);

	json_decref(outs);
	json_decref(run);
	json_decref(sc);
	json_decref(in);
}
END_TEST

/* ---- scoring and comparisons (issue 4) -------------------------------------- */

START_TEST(test_run_scored)
{
	static const int seqs[] = {1, 2};
	char a[33];
	json_t *outs = make_outputs(seqs, 2);
	json_t *details = jload("[{\"seq\":1,\"key\":\"step-1\",\"passed\":true,\"check\":"
				"\"equals\",\"message\":\"ok\"},{\"seq\":2,\"key\":\"step-2\","
				"\"passed\":false,\"check\":\"contains\",\"message\":\"<&\\\"é\"}]");
	json_t *run = NULL, *g = NULL;
	struct store_run r = sample_run("0123456789abcdef0123456789abcdef", outs);

	migrated();
	mk_tenant("acme", a);
	r.suite = "smoke.v1";
	r.scored = 1;
	r.score = 0.75;
	r.passed = 0;
	r.score_details = details;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_str_eq(jstr(run, "suite"), "smoke.v1");
	ck_assert(json_is_true(json_object_get(run, "scored")));
	ck_assert(json_real_value(json_object_get(run, "score")) == 0.75);
	ck_assert(json_is_false(json_object_get(run, "passed")));
	ck_assert(json_equal(json_object_get(run, "score_details"), details));
	ck_assert_int_eq(store_run_get(st, a, jstr(run, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, run));
	json_decref(g);
	json_decref(run);

	/* a score with no short decimal form keeps 15 significant digits
	 * (libsqliteodbc reads reals as "%.15g" text; PostgreSQL is exact) */
	r.score = 2.0 / 3.0;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert_msg(fabs(json_real_value(json_object_get(run, "score")) - 2.0 / 3.0) < 1e-14,
		      "score %.17g", json_real_value(json_object_get(run, "score")));
	json_decref(run);

	/* passed true and a perfect score */
	r.score = 1.0;
	r.passed = 1;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert(json_is_true(json_object_get(run, "passed")));
	ck_assert(json_real_value(json_object_get(run, "score")) == 1.0);
	json_decref(run);

	/* not scored: score and passed are null whatever the struct holds */
	r.scored = 0;
	r.score = 0.5;
	r.passed = 1;
	r.score_details = NULL;
	r.reason = "executed, not scored: no scorer adapter is wired";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	ck_assert(json_is_false(json_object_get(run, "scored")));
	ck_assert(json_is_null(json_object_get(run, "score")));
	ck_assert(json_is_null(json_object_get(run, "passed")));
	ck_assert(json_is_null(json_object_get(run, "score_details")));
	ck_assert_str_eq(jstr(run, "reason"), r.reason);
	json_decref(run);

	/* a score outside [0, 1] or details that are not an array: refused */
	r.scored = 1;
	r.score = 1.5;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	r.score = -0.1;
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	r.score = 0.5;
	r.score_details = json_object_get(json_array_get(outs, 0), "key");
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_ERROR);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 4);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE score IS NULL"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE passed IS NULL"), 1);

	json_decref(details);
	json_decref(outs);
}
END_TEST

/* Outputs of one side of a comparison: step-1 "same", step-2 "<text>". */
static json_t *side_outputs(const char *second)
{
	return json_pack("[{s:i,s:s,s:s,s:s,s:s,s:n},{s:i,s:s,s:s,s:s,s:s,s:n}]", "seq", 1, "key",
			 "step-1", "input", "agent:user1@example.test", "output", "same", "status",
			 "ok", "error_kind", "seq", 2, "key", "step-2", "input",
			 "agent:user2@example.test", "output", second, "status", "ok",
			 "error_kind");
}

struct cmp_fixture {
	json_t *bouts, *kouts, *diff;
	struct store_run b, k;
	struct store_comparison c;
};

static void cmp_fixture(struct cmp_fixture *f, const char *scenario_id)
{
	memset(f, 0, sizeof *f);
	f->bouts = side_outputs("old answer");
	f->kouts = side_outputs("new answer");
	f->diff = jload("[{\"seq\":2,\"key\":\"step-2\",\"baseline_output\":\"old answer\","
			"\"candidate_output\":\"new answer\"}]");
	f->b = sample_run(scenario_id, f->bouts);
	f->b.kind = "comparison";
	f->b.variant = "v1";
	f->b.suite = "smoke";
	f->b.scored = 1;
	f->b.score = 0.25;
	f->b.passed = 0;
	f->k = f->b;
	f->k.outputs = f->kouts;
	f->k.variant = "v2";
	f->k.score = 0.75;
	f->k.passed = 1;
	f->c.scenario_id = scenario_id;
	f->c.scenario_version = 3;
	f->c.suite = "smoke";
	f->c.tolerance = 0.1;
	f->c.baseline = &f->b;
	f->c.candidate = &f->k;
	f->c.verdict = "improved";
	f->c.has_delta = 1;
	f->c.delta = 0.5;
	f->c.reason = NULL;
	f->c.differing_steps = f->diff;
}

static void cmp_fixture_free(struct cmp_fixture *f)
{
	json_decref(f->bouts);
	json_decref(f->kouts);
	json_decref(f->diff);
}

START_TEST(test_comparisons)
{
	const char *actor = "33333333333333333333333333333333";
	const char *sid = "0123456789abcdef0123456789abcdef";
	const char *other = "fedcba9876543210fedcba9876543210";
	char a[33];
	struct cmp_fixture f;
	json_t *c1 = NULL, *c2 = NULL, *c3 = NULL, *g = NULL, *list = NULL, *x = NULL;
	json_t *side, *items, *ev;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, actor, &f.c, &c1), STORE_OK);
	ck_assert_uint_eq(strlen(jstr(c1, "id")), 32);
	ck_assert_str_eq(jstr(c1, "scenario_id"), sid);
	ck_assert_int_eq(jint(c1, "scenario_version"), 3);
	ck_assert_str_eq(jstr(c1, "suite"), "smoke");
	ck_assert(json_real_value(json_object_get(c1, "tolerance")) == 0.1);
	ck_assert_str_eq(jstr(c1, "verdict"), "improved");
	ck_assert(json_real_value(json_object_get(c1, "delta")) == 0.5);
	ck_assert(json_is_null(json_object_get(c1, "reason")));
	ck_assert(json_equal(json_object_get(c1, "differing_steps"), f.diff));
	ck_assert_str_eq(jstr(c1, "decided_by"), actor);
	ck_assert_uint_eq(strlen(jstr(c1, "created_at")), 24);
	ck_assert_uint_eq(json_object_size(c1), 13);
	side = json_object_get(c1, "baseline");
	ck_assert_uint_eq(json_object_size(side), 6);
	ck_assert_str_eq(jstr(side, "variant"), "v1");
	ck_assert_str_eq(jstr(side, "status"), "completed");
	ck_assert(json_is_true(json_object_get(side, "scored")));
	ck_assert(json_real_value(json_object_get(side, "score")) == 0.25);
	/* session 10: each side carries its run's shutdown note, null when none */
	ck_assert_msg(json_object_get(side, "shutdown") != NULL, "no baseline shutdown key");
	ck_assert(json_is_null(json_object_get(side, "shutdown")));
	side = json_object_get(c1, "candidate");
	ck_assert_uint_eq(json_object_size(side), 6);
	ck_assert_str_eq(jstr(side, "variant"), "v2");
	ck_assert(json_real_value(json_object_get(side, "score")) == 0.75);
	ck_assert(json_is_null(json_object_get(side, "shutdown")));

	/* both runs are recorded, kind "comparison", with their outputs */
	ck_assert_int_eq(store_run_get(st, a, jstr(json_object_get(c1, "baseline"), "run_id"), &x),
			 STORE_OK);
	ck_assert_str_eq(jstr(x, "kind"), "comparison");
	ck_assert_str_eq(jstr(x, "variant"), "v1");
	ck_assert_str_eq(jstr(x, "created_by"), actor);
	json_decref(x);
	ck_assert_int_eq(
		store_run_outputs(st, a, jstr(json_object_get(c1, "candidate"), "run_id"), &x),
		STORE_OK);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(x, "outputs"), 1), "output"),
			 "new answer");
	json_decref(x);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs WHERE kind = 'comparison'"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 4);

	/* audit: two "sandbox.run" and one "sandbox.compare", newest first */
	ck_assert_int_eq(store_audit_list(st, a, 10, &x), STORE_OK);
	items = json_object_get(x, "events");
	ck_assert_uint_eq(json_array_size(items), 3);
	ev = json_array_get(items, 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.compare");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(c1, "id"));
	ck_assert_str_eq(jstr(ev, "actor"), actor);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "verdict"), "improved");
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "candidate_run_id"),
			 jstr(json_object_get(c1, "candidate"), "run_id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "sandbox.run");
	ck_assert_str_eq(jstr(json_array_get(items, 2), "action"), "sandbox.run");
	json_decref(x);

	/* get gives back exactly what record returned */
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c1, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, c1));
	json_decref(g);

	/* the same comparison again: same verdict and delta; this time the
	 * candidate's agent had to be killed after its last step: its side
	 * says so (read from its run), the baseline's does not, and the
	 * verdict is the scores' */
	f.k.shutdown = "agent did not exit within its 1000 ms grace after the end of its input: "
		       "killed";
	ck_assert_int_eq(store_comparison_record(st, a, actor, &f.c, &c2), STORE_OK);
	ck_assert_str_ne(jstr(c2, "id"), jstr(c1, "id"));
	ck_assert_str_eq(jstr(c2, "verdict"), jstr(c1, "verdict"));
	ck_assert(json_equal(json_object_get(c2, "delta"), json_object_get(c1, "delta")));
	ck_assert_msg(jstr(json_object_get(c2, "candidate"), "shutdown") != NULL,
		      "no candidate shutdown note");
	ck_assert_str_eq(jstr(json_object_get(c2, "candidate"), "shutdown"), f.k.shutdown);
	ck_assert(json_is_null(json_object_get(json_object_get(c2, "baseline"), "shutdown")));
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c2, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, c2));
	json_decref(g);
	f.k.shutdown = NULL;

	/* inconclusive on another scenario: candidate failed, not scored */
	f.c.scenario_id = other;
	f.k.status = "failed";
	f.k.scored = 0;
	f.k.reason = "wall-clock limit of 10000 ms exceeded";
	f.k.outputs = NULL;
	f.c.verdict = "inconclusive";
	f.c.has_delta = 0;
	f.c.reason = "candidate run failed: wall-clock limit of 10000 ms exceeded";
	json_decref(f.diff);
	f.diff = json_array();
	f.c.differing_steps = f.diff;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c3), STORE_OK);
	ck_assert_str_eq(jstr(c3, "verdict"), "inconclusive");
	ck_assert(json_is_null(json_object_get(c3, "delta")));
	ck_assert(json_is_null(json_object_get(c3, "decided_by")));
	ck_assert_str_eq(jstr(c3, "reason"), f.c.reason);
	ck_assert_uint_eq(json_array_size(json_object_get(c3, "differing_steps")), 0);
	side = json_object_get(c3, "candidate");
	ck_assert_str_eq(jstr(side, "status"), "failed");
	ck_assert(json_is_false(json_object_get(side, "scored")));
	ck_assert(json_is_null(json_object_get(side, "score")));
	ck_assert(json_real_value(json_object_get(json_object_get(c3, "baseline"), "score")) ==
		  0.25);

	/* list: newest first, filtered by scenario, latest = limit 1 */
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 3);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c3, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(c2, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 2), "id"), jstr(c1, "id"));
	ck_assert(json_equal(json_array_get(items, 1), c2));
	ck_assert(json_equal(json_array_get(items, 2), c1));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c2, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 1, 0, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c2, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, other, 1, 0, &list), STORE_OK);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "comparisons"), 0), "id"),
			 jstr(c3, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 1, &list), STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);
	ck_assert_int_eq(
		store_comparison_list(st, a, "ffffffffffffffffffffffffffffffff", 1, 0, &list),
		STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);

	/* unknown or malformed ids */
	ck_assert_int_eq(store_comparison_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
			 STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_comparison_get(st, a, "x' OR '1'='1", &g), STORE_NOT_FOUND);

	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	cmp_fixture_free(&f);
}
END_TEST

/* Nothing of a comparison is left when any part of it fails. */
static void assert_nothing_written(const char *tenant)
{
	json_t *x = NULL;

	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 0);
	ck_assert_int_eq(store_comparison_list(st, tenant, NULL, 50, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
}

START_TEST(test_comparison_rollback)
{
	static const int dup[] = {1, 2, 2};
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33];
	struct cmp_fixture f;
	json_t *dups = make_outputs(dup, 3);
	json_t *c = NULL, *bad;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);

	/* the candidate's outputs break a constraint after the baseline run,
	 * its outputs and its audit event were written: all rolled back */
	f.k.outputs = dups;
	ck_assert_int_ne(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);
	ck_assert_ptr_null(c);
	assert_nothing_written(a);
	f.k.outputs = f.kouts;

	/* an unknown tenant: a foreign key fails inside the transaction:
	 * nothing written */
	ck_assert_int_ne(store_comparison_record(st, "99999999999999999999999999999999", NULL,
						 &f.c, &c),
			 STORE_OK);
	ck_assert_ptr_null(c);
	assert_nothing_written(a);

	/* refused before anything runs: bad verdict, tolerance, delta without
	 * scores, malformed output, missing differing_steps */
	f.c.verdict = "better";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.verdict = "improved";
	f.c.tolerance = 1.5;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.tolerance = -0.01;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.tolerance = 0;
	f.k.scored = 0;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.k.scored = 1;
	bad = jload("[{\"seq\":1,\"key\":\"k\",\"input\":\"i\",\"output\":7,\"status\":\"ok\"}]");
	f.b.outputs = bad;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.b.outputs = f.bouts;
	json_decref(bad);
	f.c.differing_steps = NULL;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.differing_steps = f.diff;
	f.c.suite = "";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_ERROR);
	f.c.suite = "smoke";
	ck_assert_ptr_null(c);
	assert_nothing_written(a);

	/* and the store still works afterwards */
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);
	ck_assert_str_eq(jstr(c, "verdict"), "improved");
	json_decref(c);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 2);

	json_decref(dups);
	cmp_fixture_free(&f);
}
END_TEST

START_TEST(test_comparison_tenant_isolation)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33], b[33];
	struct cmp_fixture f;
	json_t *c = NULL, *x = NULL;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);

	ck_assert_int_eq(store_comparison_get(st, b, jstr(c, "id"), &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_comparison_list(st, b, NULL, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
	ck_assert_int_eq(store_comparison_list(st, b, sid, 1, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "comparisons")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_get(st, b, jstr(json_object_get(c, "baseline"), "run_id"), &x),
			 STORE_NOT_FOUND);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);

	/* tenant A still sees it */
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c, "id"), &x), STORE_OK);
	ck_assert(json_equal(x, c));
	json_decref(x);
	json_decref(c);
	cmp_fixture_free(&f);
}
END_TEST

/* Append-only: the store has no update or delete function for comparisons
 * (store.h), and the schema refuses both to any other writer. */
START_TEST(test_comparison_append_only)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	char a[33];
	struct cmp_fixture f;
	json_t *c = NULL, *x = NULL;

	migrated();
	mk_tenant("acme", a);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c), STORE_OK);

	ck_assert_int_ne(raw_exec("UPDATE comparisons SET verdict = 'regressed'"), 0);
	ck_assert_int_ne(raw_exec("UPDATE comparisons SET delta = NULL"), 0);
	ck_assert_int_ne(raw_exec("DELETE FROM comparisons"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM comparisons WHERE verdict = 'improved' "
				   "AND delta IS NOT NULL"),
			 1);
	ck_assert_int_eq(store_comparison_get(st, a, jstr(c, "id"), &x), STORE_OK);
	ck_assert(json_equal(x, c));
	json_decref(x);
	json_decref(c);
	cmp_fixture_free(&f);
}
END_TEST

/* ---- history sessions and replays (issue 5) ---------------------------------- */

/* A session as model_session_check leaves it: faithful, so a broken seq
 * ("x", 2.5, absent) and unknown kinds are kept as recorded. */
static json_t *sample_session(const char *external_id)
{
	json_t *s = jload("{\"events\":["
			  "{\"seq\":1,\"kind\":\"input\",\"text\":\"caf\\u00e9 \\\"q\\\"\\nline\"},"
			  "{\"seq\":2,\"kind\":\"tool_call\",\"resource\":\"crm:1\"},"
			  "{\"seq\":3,\"kind\":\"tool_result\",\"resource\":\"crm:1\","
			  "\"text\":\"\\u65e5\\u672c \\ud83d\\ude00\"},"
			  "{\"seq\":4,\"kind\":\"output\",\"text\":\"done\",\"key\":\"k\"},"
			  "{\"seq\":\"x\",\"kind\":\"weird\"},"
			  "{\"seq\":2.5,\"kind\":\"input\",\"text\":\"\"},"
			  "{\"kind\":\"output\"}]}");

	json_object_set_new(s, "external_id", json_string(external_id));
	return s;
}

START_TEST(test_sessions)
{
	const char *actor = "33333333333333333333333333333333";
	char a[33];
	json_t *in1 = sample_session("ext-1"), *in2 = sample_session("ext-2");
	json_t *s1 = NULL, *s2 = NULL, *g = NULL, *list = NULL, *audit = NULL, *items, *ev, *bad;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, actor, in1, &s1), STORE_OK);
	ck_assert_uint_eq(json_object_size(s1), 4);
	ck_assert_uint_eq(strlen(jstr(s1, "id")), 32);
	ck_assert_str_eq(jstr(s1, "external_id"), "ext-1");
	ck_assert_int_eq(jint(s1, "events_count"), 7);
	ck_assert_uint_eq(strlen(jstr(s1, "created_at")), 24);
	ck_assert_int_eq(jstr(s1, "created_at")[23], 'Z');

	/* the events read back exactly as imported, in order */
	ck_assert_int_eq(store_session_get(st, a, jstr(s1, "id"), &g), STORE_OK);
	ck_assert_uint_eq(json_object_size(g), 5);
	ck_assert_str_eq(jstr(g, "id"), jstr(s1, "id"));
	ck_assert_str_eq(jstr(g, "external_id"), "ext-1");
	ck_assert_int_eq(jint(g, "events_count"), 7);
	ck_assert_str_eq(jstr(g, "created_at"), jstr(s1, "created_at"));
	ck_assert(json_equal(json_object_get(g, "events"), json_object_get(in1, "events")));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "events"), 0), "text"),
			 "caf\xc3\xa9 \"q\"\nline");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(g, "events"), 4), "seq"), "x");
	ck_assert(json_is_real(json_object_get(json_array_get(json_object_get(g, "events"), 5),
					       "seq")));
	json_decref(g);

	/* the audit event holds the count only, never the content */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	items = json_object_get(audit, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ev = json_array_get(items, 0);
	ck_assert_str_eq(jstr(ev, "action"), "sandbox.session.import");
	ck_assert_str_eq(jstr(ev, "target_id"), jstr(s1, "id"));
	ck_assert_str_eq(jstr(ev, "actor"), actor);
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 1);
	ck_assert_int_eq(jint(json_object_get(ev, "detail"), "events"), 7);
	json_decref(audit);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE detail LIKE '%crm:1%'"),
			 0);

	/* newest first, with limit and offset */
	json_array_remove(json_object_get(in2, "events"), 6);
	ck_assert_int_eq(store_session_create(st, a, actor, in2, &s2), STORE_OK);
	ck_assert_int_eq(jint(s2, "events_count"), 6);
	ck_assert_str_ne(jstr(s1, "id"), jstr(s2, "id"));
	ck_assert_int_eq(store_session_list(st, a, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "sessions");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert(json_equal(json_array_get(items, 0), s2));
	ck_assert(json_equal(json_array_get(items, 1), s1));
	json_decref(list);
	ck_assert_int_eq(store_session_list(st, a, 1, 1, &list), STORE_OK);
	items = json_object_get(list, "sessions");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(s1, "id"));
	json_decref(list);

	/* an empty events array is a session too (a replay says it is degraded) */
	bad = jload("{\"external_id\":\"empty\",\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_OK);
	ck_assert_int_eq(jint(g, "events_count"), 0);
	json_decref(g);
	json_decref(bad);

	/* malformed objects are refused before anything is written */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 3);
	bad = jload("{\"external_id\":\"\",\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	ck_assert_ptr_null(g);
	json_decref(bad);
	bad = jload("{\"external_id\":\"e\",\"events\":{}}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	json_decref(bad);
	bad = jload("{\"events\":[]}");
	ck_assert_int_eq(store_session_create(st, a, actor, bad, &g), STORE_ERROR);
	json_decref(bad);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 3);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);

	/* unknown and malformed ids */
	ck_assert_int_eq(store_session_get(st, a, "ffffffffffffffffffffffffffffffff", &g),
			 STORE_NOT_FOUND);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(store_session_get(st, a, "x' OR '1'='1", &g), STORE_NOT_FOUND);

	json_decref(s1);
	json_decref(s2);
	json_decref(in1);
	json_decref(in2);
}
END_TEST

START_TEST(test_session_tenant_isolation)
{
	static const int seqs[] = {1};
	char a[33], b[33];
	json_t *in = sample_session("private"), *s = NULL, *x = NULL, *run = NULL;
	json_t *outs = make_outputs(seqs, 1);
	struct store_run r = sample_run(NULL, outs);
	struct store_run_filter f;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	ck_assert_int_eq(store_session_create(st, a, NULL, in, &s), STORE_OK);

	ck_assert_int_eq(store_session_get(st, b, jstr(s, "id"), &x), STORE_NOT_FOUND);
	ck_assert_ptr_null(x);
	ck_assert_int_eq(store_session_list(st, b, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "sessions")), 0);
	json_decref(x);
	ck_assert_int_eq(store_audit_list(st, b, 500, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "events")), 0);
	json_decref(x);

	/* a run of tenant B cannot name tenant A's session: nothing written */
	r.kind = "replay";
	r.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_record(st, b, NULL, &r, &run), STORE_NOT_FOUND);
	ck_assert_ptr_null(run);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 1);
	/* nor can tenant A name a session that does not exist */
	r.session_id = "ffffffffffffffffffffffffffffffff";
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 0);

	/* tenant A's replay, invisible to B, even by session filter */
	r.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_record(st, a, NULL, &r, &run), STORE_OK);
	memset(&f, 0, sizeof f);
	f.session_id = jstr(s, "id");
	ck_assert_int_eq(store_run_list_filtered(st, b, &f, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 0);
	json_decref(x);
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 500, 0, &x), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(x, "runs")), 1);
	json_decref(x);

	/* A's session is intact */
	ck_assert_int_eq(store_session_get(st, a, jstr(s, "id"), &x), STORE_OK);
	ck_assert(json_equal(json_object_get(x, "events"), json_object_get(in, "events")));
	json_decref(x);

	json_decref(run);
	json_decref(outs);
	json_decref(s);
	json_decref(in);
}
END_TEST

START_TEST(test_session_append_only)
{
	char a[33];
	json_t *in = sample_session("kept"), *s = NULL, *x = NULL;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, NULL, in, &s), STORE_OK);

	ck_assert_int_ne(raw_exec("UPDATE sessions SET external_id = 'changed'"), 0);
	ck_assert_int_ne(raw_exec("UPDATE sessions SET events = '[]', events_count = 0"), 0);
	ck_assert_int_ne(raw_exec("DELETE FROM sessions"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions"), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM sessions WHERE external_id = 'kept' "
				   "AND events_count = 7"),
			 1);
	ck_assert_int_eq(store_session_get(st, a, jstr(s, "id"), &x), STORE_OK);
	ck_assert(json_equal(json_object_get(x, "events"), json_object_get(in, "events")));
	json_decref(x);
	json_decref(s);
	json_decref(in);
}
END_TEST

START_TEST(test_run_replay)
{
	static const int seqs[] = {1, 2};
	const char *actor = "44444444444444444444444444444444";
	char a[33];
	json_t *in = sample_session("replayed"), *ses = NULL, *other = NULL;
	json_t *sin = sample_scenario("s"), *sc = NULL;
	json_t *outs = make_outputs(seqs, 2);
	json_t *div = jload("{\"compared\":2,\"diverging\":1,\"first\":{\"seq\":2,\"key\":"
			    "\"seq-3\",\"recorded\":\"r\\u00e9\",\"replayed\":\"x\\ny\"}}");
	json_t *rp = NULL, *dg = NULL, *sim = NULL, *rs = NULL, *g = NULL, *list = NULL;
	json_t *audit = NULL, *items, *detail;
	struct store_run r;
	struct store_run_filter f;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(store_session_create(st, a, actor, in, &ses), STORE_OK);
	ck_assert_int_eq(store_session_create(st, a, actor, in, &other), STORE_OK);
	ck_assert_int_eq(store_scenario_create(st, a, actor, sin, &sc), STORE_OK);

	/* a replay without a scenario */
	r = sample_run(NULL, outs);
	r.kind = "replay";
	r.scenario_digest = NULL;
	r.scenario_version = 7; /* ignored: no scenario, no version */
	r.session_id = jstr(ses, "id");
	r.divergence = div;
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rp), STORE_OK);
	ck_assert_uint_eq(json_object_size(rp), 27);
	ck_assert_str_eq(jstr(rp, "kind"), "replay");
	ck_assert(json_is_null(json_object_get(rp, "scenario_id")));
	ck_assert(json_is_null(json_object_get(rp, "scenario_version")));
	ck_assert(json_is_null(json_object_get(rp, "scenario_digest")));
	ck_assert_str_eq(jstr(rp, "session_id"), jstr(ses, "id"));
	ck_assert(json_equal(json_object_get(rp, "divergence"), div));
	ck_assert_str_eq(jstr(json_object_get(json_object_get(rp, "divergence"), "first"),
			      "recorded"),
			 "r\xc3\xa9");
	ck_assert_int_eq(store_run_get(st, a, jstr(rp, "id"), &g), STORE_OK);
	ck_assert(json_equal(g, rp));
	json_decref(g);

	/* a degraded replay (no divergence), with a scenario */
	r = sample_run(jstr(sc, "id"), NULL);
	r.kind = "replay";
	r.status = "degraded";
	r.runner = "none";
	r.isolated = 0;
	r.destroyed = 0;
	r.steps_total = r.steps_ok = r.steps_error = 0;
	r.reason = "timeline cannot be rebuilt: session has no input";
	r.output_digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	r.session_id = jstr(other, "id");
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &dg), STORE_OK);
	ck_assert_str_eq(jstr(dg, "status"), "degraded");
	ck_assert_str_eq(jstr(dg, "runner"), "none");
	ck_assert_str_eq(jstr(dg, "scenario_id"), jstr(sc, "id"));
	ck_assert_int_eq(jint(dg, "scenario_version"), 1);
	ck_assert_str_eq(jstr(dg, "session_id"), jstr(other, "id"));
	ck_assert(json_is_null(json_object_get(dg, "divergence")));
	ck_assert_str_eq(jstr(dg, "reason"), r.reason);

	/* a simulation: no session, no divergence */
	r = sample_run(jstr(sc, "id"), outs);
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &sim), STORE_OK);
	ck_assert(json_is_null(json_object_get(sim, "session_id")));
	ck_assert(json_is_null(json_object_get(sim, "divergence")));

	/* the audit event of a replay names its session; a simulation's does not */
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	detail = json_object_get(json_array_get(json_object_get(audit, "events"), 0), "detail");
	ck_assert_uint_eq(json_object_size(detail), 3);
	json_decref(audit);
	ck_assert_int_eq(store_audit_list(st, a, 3, &audit), STORE_OK);
	detail = json_object_get(json_array_get(json_object_get(audit, "events"), 2), "detail");
	ck_assert_str_eq(jstr(json_array_get(json_object_get(audit, "events"), 2), "target_id"),
			 jstr(rp, "id"));
	ck_assert_uint_eq(json_object_size(detail), 4);
	ck_assert_str_eq(jstr(detail, "session_id"), jstr(ses, "id"));
	ck_assert(json_is_null(json_object_get(detail, "scenario_id")));
	json_decref(audit);

	/* filters: kind, session, both, with the old ones; old callers unchanged */
	memset(&f, 0, sizeof f);
	f.kind = "replay";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(rp, "id"));
	json_decref(list);
	f.kind = "simulation";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(sim, "id"));
	json_decref(list);
	f.kind = "comparison";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	memset(&f, 0, sizeof f);
	f.session_id = jstr(ses, "id");
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert(json_equal(json_array_get(items, 0), rp));
	json_decref(list);
	f.kind = "replay";
	f.status = "degraded";
	f.session_id = jstr(other, "id");
	f.scenario_id = jstr(sc, "id");
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	json_decref(list);
	f.status = "completed";
	ck_assert_int_eq(store_run_list_filtered(st, a, &f, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 0);
	json_decref(list);
	ck_assert_int_eq(store_run_list_filtered(st, a, NULL, 2, 1, &list), STORE_OK);
	items = json_object_get(list, "runs");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(dg, "id"));
	ck_assert_str_eq(jstr(json_array_get(items, 1), "id"), jstr(rp, "id"));
	json_decref(list);
	ck_assert_int_eq(store_run_list(st, a, jstr(sc, "id"), NULL, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), 2);
	json_decref(list);

	/* a divergence that is not an object, or a session id that is not one,
	 * is refused before anything is written */
	r = sample_run(NULL, NULL);
	r.kind = "replay";
	r.session_id = jstr(ses, "id");
	r.divergence = json_array();
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rs), STORE_ERROR);
	json_decref(r.divergence);
	r.divergence = NULL;
	r.session_id = "not-an-id";
	ck_assert_int_eq(store_run_record(st, a, actor, &r, &rs), STORE_ERROR);
	ck_assert_ptr_null(rs);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM runs"), 3);

	json_decref(rp);
	json_decref(dg);
	json_decref(sim);
	json_decref(div);
	json_decref(outs);
	json_decref(sc);
	json_decref(sin);
	json_decref(ses);
	json_decref(other);
	json_decref(in);
}
END_TEST

/* ---- admin view sessions and listings (issue 6) ------------------------------ */

/* A token of tenant with role; id gets its id. The secret is derived from
 * name (never stored: only its digest is). */
static void mk_token(const char *tenant, enum store_role role, const char *name, char id[33])
{
	char secret[128], sha[65];

	snprintf(secret, sizeof secret, "olv_test_token_%s", name);
	sha256_hex(secret, strlen(secret), sha);
	ck_assert_int_eq(store_token_create(st, tenant, role, sha, name, NULL, id), STORE_OK);
}

/* The stored digest of a cookie secret named name, as fcgi/view/view.c makes it. */
static void cookie_sha(const char *name, char out[65])
{
	char secret[128];

	snprintf(secret, sizeof secret, "cookie-secret-%s", name);
	sha256_hex(secret, strlen(secret), out);
}

static long count_where(const char *table, const char *col, const char *value)
{
	char sql[512];

	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE %s = '%s'", table, col, value);
	return raw_count(sql);
}

static void assert_not_found_zeroed(const char *sha, const char *now)
{
	struct store_principal p;

	memset(&p, 0x5a, sizeof p);
	ck_assert_int_eq(store_web_session_lookup(st, sha, now, &p), STORE_NOT_FOUND);
	ck_assert_str_eq(p.tenant_id, "");
	ck_assert_str_eq(p.token_id, "");
	ck_assert_str_eq(p.sha256_hex, "");
	ck_assert_int_eq(p.role, 0);
}

#define T0 "2030-01-01T00:00:00.000Z"
#define T8 "2030-01-01T08:00:00.000Z"

START_TEST(test_web_sessions)
{
	char a[33], tok_e[33], tok_v[33], id1[33], id2[33], s1[65], s2[65], sql[512];
	struct store_principal p;
	json_t *audit = NULL, *ev, *detail;

	migrated();
	mk_tenant("acme", a);
	mk_token(a, STORE_ROLE_EDITOR, "editor", tok_e);
	mk_token(a, STORE_ROLE_VIEWER, "viewer", tok_v);
	cookie_sha("1", s1);
	cookie_sha("2", s2);

	ck_assert_msg(store_web_session_create(st, a, tok_e, s1, T0, T8, id1) == STORE_OK, "%s",
		      store_last_error(st));
	ck_assert_uint_eq(strlen(id1), 32);

	/* found while now < expires_at, with the token's tenant, id and role */
	memset(&p, 0, sizeof p);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	ck_assert_str_eq(p.token_id, tok_e);
	ck_assert_str_eq(p.sha256_hex, s1);
	ck_assert_int_eq(p.role, STORE_ROLE_EDITOR);
	ck_assert_int_eq(store_web_session_lookup(st, s1, "2030-01-01T07:59:59.999Z", &p),
			 STORE_OK);
	ck_assert_str_eq(p.token_id, tok_e);
	/* expired: at expires_at and after */
	assert_not_found_zeroed(s1, T8);
	assert_not_found_zeroed(s1, "2030-01-01T08:00:00.001Z");
	assert_not_found_zeroed(s1, "2031-06-01T00:00:00.000Z");
	/* unknown, malformed, upper-case or SQL-looking digests; a bad "now" */
	assert_not_found_zeroed(s2, T0);
	assert_not_found_zeroed("abc", T0);
	assert_not_found_zeroed("' OR '1'='1", T0);
	{
		char up[65];
		size_t i;

		for (i = 0; i < 64; i++)
			up[i] = (char)(s1[i] >= 'a' && s1[i] <= 'f' ? s1[i] - 32 : s1[i]);
		up[64] = '\0';
		ck_assert_str_ne(up, s1); /* a SHA-256 hex has letters */
		assert_not_found_zeroed(up, T0);
	}
	assert_not_found_zeroed(s1, "now");

	/* the role is read from the token on every lookup */
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET role = 3 WHERE id = '%s'", tok_e);
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_int_eq(p.role, STORE_ROLE_ADMIN);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET role = 1 WHERE id = '%s'", tok_e);
	ck_assert_int_eq(raw_exec(sql), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_int_eq(p.role, STORE_ROLE_VIEWER);

	/* a second session, of the viewer token; revoking that token ends it
	 * and leaves the editor's session alone */
	ck_assert_int_eq(store_web_session_create(st, a, tok_v, s2, T0, T8, id2), STORE_OK);
	ck_assert_str_ne(id1, id2);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_v);
	ck_assert_int_eq(p.role, STORE_ROLE_VIEWER);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET revoked = 1 WHERE id = '%s'", tok_v);
	ck_assert_int_eq(raw_exec(sql), 0);
	assert_not_found_zeroed(s2, T0);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_e);

	/* stored: the digest, the token, the times; never the secret */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	snprintf(sql, sizeof sql,
		 "SELECT COUNT(*) FROM web_sessions WHERE id = '%s' AND tenant_id = '%s' AND "
		 "token_id = '%s' AND sha256 = '%s' AND created_at = '%s' AND expires_at = '%s'",
		 id1, a, tok_e, s1, T0, T8);
	ck_assert_int_eq(raw_count(sql), 1);
	ck_assert_int_eq(raw_cells_containing(s1), 1);
	ck_assert_int_eq(raw_cells_containing("cookie-secret-"), 0);

	/* audit: "admin.signin" by the token, target and detail the session id */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 2);
	ev = json_array_get(json_object_get(audit, "events"), 1);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signin");
	ck_assert_str_eq(jstr(ev, "actor"), tok_e);
	ck_assert_str_eq(jstr(ev, "target_id"), id1);
	detail = json_object_get(ev, "detail");
	ck_assert_uint_eq(json_object_size(detail), 1);
	ck_assert_str_eq(jstr(detail, "session_id"), id1);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signin");
	ck_assert_str_eq(jstr(ev, "actor"), tok_v);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "session_id"), id2);
	json_decref(audit);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE detail LIKE "
				   "'%cookie%'"),
			 0);
	ck_assert_int_eq(raw_cells_containing(s2), 1);
}
END_TEST

/* Every refused sign-in writes nothing: no session, no purge, no event. */
START_TEST(test_web_session_refused)
{
	char a[33], b[33], tok_a[33], tok_r[33], tok_b[33], id[33], s1[65], s2[65], s3[65];
	char sql[256];
	struct store_principal p;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	mk_token(a, STORE_ROLE_ADMIN, "admin-a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "revoked-a", tok_r);
	mk_token(b, STORE_ROLE_ADMIN, "admin-b", tok_b);
	snprintf(sql, sizeof sql, "UPDATE api_tokens SET revoked = 1 WHERE id = '%s'", tok_r);
	ck_assert_int_eq(raw_exec(sql), 0);
	cookie_sha("1", s1);
	cookie_sha("2", s2);
	cookie_sha("3", s3);
	/* a live session (s3), and an expired one (s1) that a successful
	 * sign-in would purge */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s3, "2020-01-01T00:00:00.000Z", T8,
						  id),
			 STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, "2020-01-01T00:00:00.000Z",
						  "2020-01-01T08:00:00.000Z", id),
			 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);

	/* a revoked token, another tenant's token, an unknown or malformed
	 * token id, an unknown tenant: STORE_NOT_FOUND */
	strcpy(id, "x");
	ck_assert_int_eq(store_web_session_create(st, a, tok_r, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_str_eq(id, "");
	ck_assert_int_eq(store_web_session_create(st, a, tok_b, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, b, tok_a, s2, T0, T8, id), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, a, "ffffffffffffffffffffffffffffffff", s2,
						  T0, T8, id),
			 STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, a, "' OR '1'='1", s2, T0, T8, id),
			 STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_create(st, "99999999999999999999999999999999", tok_a,
						  s2, T0, T8, id),
			 STORE_NOT_FOUND);
	/* malformed digest or times: STORE_ERROR */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, "abc", T0, T8, id), STORE_ERROR);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s2, "now", T8, id), STORE_ERROR);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s2, T0, "2030-01-01 08:00:00", id),
			 STORE_ERROR);
	ck_assert_str_eq(id, "");
	/* the digest of a live session again: the unique index refuses it
	 * after the purge ran, and the purge is rolled back with it */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s3, T0, T8, id), STORE_CONFLICT);
	ck_assert_str_eq(id, "");

	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 1);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s3), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);
	assert_not_found_zeroed(s2, T0);

	/* and a good sign-in still works afterwards (and purges) */
	ck_assert_int_eq(store_web_session_create(st, b, tok_b, s2, T0, T8, id), STORE_OK);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.tenant_id, b);
	ck_assert_str_eq(p.token_id, tok_b);
	ck_assert_int_eq(p.role, STORE_ROLE_ADMIN);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 0);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s3), 1);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
}
END_TEST

/* A sign-in deletes the expired sessions of every tenant, and only those. */
START_TEST(test_web_session_purge)
{
	char a[33], b[33], tok_a[33], tok_b[33], id[33], live[33];
	char s1[65], s2[65], s3[65], s4[65], s5[65];
	struct store_principal p;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(b, STORE_ROLE_VIEWER, "b", tok_b);
	cookie_sha("1", s1);
	cookie_sha("2", s2);
	cookie_sha("3", s3);
	cookie_sha("4", s4);
	cookie_sha("5", s5);
	/* expires at T8 (tenant a), at 00:10 (tenant b), at T8 + 1 day (b) */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id), STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, b, tok_b, s2, T0,
						  "2030-01-01T00:10:00.000Z", id),
			 STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, b, tok_b, s3, T0,
						  "2030-01-02T08:00:00.000Z", live),
			 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 3);

	/* at 08:00 exactly, s1 (expires_at = now) is not purged: only
	 * expires_at < now is; s2 is */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s4, T8, "2030-01-01T09:00:00.000Z",
						  id),
			 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 3);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 1);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s2), 0);

	/* a day later: s1 and s4 of tenant a go; s3 of tenant b stays */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s5, "2030-01-02T00:00:00.000Z",
						  "2030-01-02T08:00:00.000Z", id),
			 STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s1), 0);
	ck_assert_int_eq(count_where("web_sessions", "sha256", s4), 0);
	ck_assert_int_eq(count_where("web_sessions", "id", live), 1);
	ck_assert_int_eq(store_web_session_lookup(st, s3, "2030-01-02T01:00:00.000Z", &p),
			 STORE_OK);
	ck_assert_str_eq(p.tenant_id, b);
	ck_assert_int_eq(store_web_session_lookup(st, s5, "2030-01-02T01:00:00.000Z", &p),
			 STORE_OK);
	ck_assert_str_eq(p.tenant_id, a);
	/* the events are kept: one sign-in each */
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events WHERE action = "
				   "'admin.signin'"),
			 5);
}
END_TEST

START_TEST(test_web_session_delete)
{
	const char *zeros = "0000000000000000000000000000000000000000000000000000000000000000";
	char a[33], b[33], tok_a[33], tok_a2[33], tok_b[33], id1[33], id2[33], s1[65], s2[65];
	struct store_principal p;
	json_t *audit = NULL, *ev;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "a2", tok_a2);
	mk_token(b, STORE_ROLE_ADMIN, "b", tok_b);
	cookie_sha("1", s1);
	cookie_sha("2", s2);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id1), STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a2, s2, T0, T8, id2), STORE_OK);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);

	/* another tenant cannot end it: STORE_NOT_FOUND, nothing deleted or
	 * recorded */
	ck_assert_int_eq(store_web_session_delete(st, b, tok_b, s1), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_lookup(st, s1, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_a);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 2);
	ck_assert_int_eq(store_audit_list(st, b, 10, &audit), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(audit, "events")), 0);
	json_decref(audit);
	/* unknown or malformed digests */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, zeros), STORE_NOT_FOUND);
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, "' OR '1'='1"), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);

	/* sign-out: gone, the other session of the tenant stays */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, s1), STORE_OK);
	assert_not_found_zeroed(s1, T0);
	ck_assert_int_eq(count_where("web_sessions", "id", id1), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_a2);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "admin.signout");
	ck_assert_str_eq(jstr(ev, "actor"), tok_a);
	ck_assert_str_eq(jstr(ev, "target_id"), id1);
	ck_assert_uint_eq(json_object_size(json_object_get(ev, "detail")), 1);
	ck_assert_str_eq(jstr(json_object_get(ev, "detail"), "session_id"), id1);
	json_decref(audit);

	/* twice: STORE_NOT_FOUND, no second event */
	ck_assert_int_eq(store_web_session_delete(st, a, tok_a, s1), STORE_NOT_FOUND);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM audit_events"), 3);
}
END_TEST

START_TEST(test_token_revoke)
{
	char a[33], b[33], tok_a[33], tok_keep[33], tok_b[33], id1[33], id2[33], s1[65], s2[65];
	char secret[128], sha[65];
	struct store_principal p;
	json_t *audit = NULL, *ev;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	mk_token(a, STORE_ROLE_EDITOR, "a", tok_a);
	mk_token(a, STORE_ROLE_ADMIN, "keep", tok_keep);
	mk_token(b, STORE_ROLE_ADMIN, "b", tok_b);
	cookie_sha("r1", s1);
	cookie_sha("r2", s2);
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id1), STORE_OK);
	ck_assert_int_eq(store_web_session_create(st, a, tok_keep, s2, T0, T8, id2), STORE_OK);

	/* another tenant's id, an unknown or malformed one: nothing changes */
	ck_assert_int_eq(store_token_revoke(st, b, tok_a, "olivares-admin"), STORE_NOT_FOUND);
	ck_assert_int_eq(store_token_revoke(st, a, "0123456789abcdef0123456789abcdef",
	                                    "olivares-admin"),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_token_revoke(st, a, "x' OR '1'='1", "olivares-admin"),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(count_where("api_tokens", "revoked", "1"), 0);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM web_sessions"), 2);

	ck_assert_int_eq(store_token_revoke(st, a, tok_a, "olivares-admin"), STORE_OK);
	/* the token no longer authenticates, its session is gone, the other
	 * token and its session are untouched */
	snprintf(secret, sizeof secret, "olv_test_token_%s", "a");
	sha256_hex(secret, strlen(secret), sha);
	ck_assert_int_eq(store_token_lookup(st, sha, &p), STORE_NOT_FOUND);
	assert_not_found_zeroed(s1, T0);
	ck_assert_int_eq(count_where("web_sessions", "id", id1), 0);
	ck_assert_int_eq(store_web_session_lookup(st, s2, T0, &p), STORE_OK);
	ck_assert_str_eq(p.token_id, tok_keep);
	ck_assert_int_eq(store_audit_list(st, a, 1, &audit), STORE_OK);
	ev = json_array_get(json_object_get(audit, "events"), 0);
	ck_assert_str_eq(jstr(ev, "action"), "token.revoke");
	ck_assert_str_eq(jstr(ev, "actor"), "olivares-admin");
	ck_assert_str_eq(jstr(ev, "target_id"), tok_a);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(ev, "detail"),
	                                                    "sessions")),
	                 1);
	/* the operator tool is no token: no role, no label */
	ck_assert(json_is_null(json_object_get(ev, "actor_role")));
	ck_assert(json_is_null(json_object_get(ev, "actor_label")));
	json_decref(audit);
	/* the sign-ins name their tokens' role and label (revoked or not) */
	ck_assert_int_eq(store_audit_list(st, a, 10, &audit), STORE_OK);
	{
		json_t *e;
		size_t i;
		int seen = 0;

		json_array_foreach(json_object_get(audit, "events"), i, e)
		{
			if (strcmp(jstr(e, "action"), "admin.signin") != 0)
				continue;
			if (strcmp(jstr(e, "actor"), tok_a) == 0) {
				ck_assert_str_eq(jstr(e, "actor_role"), "editor");
				ck_assert_str_eq(jstr(e, "actor_label"), "a");
				seen |= 1;
			} else if (strcmp(jstr(e, "actor"), tok_keep) == 0) {
				ck_assert_str_eq(jstr(e, "actor_role"), "admin");
				ck_assert_str_eq(jstr(e, "actor_label"), "keep");
				seen |= 2;
			}
		}
		ck_assert_int_eq(seen, 3);
	}
	json_decref(audit);
	/* the listing: both tokens of acme, the revoked one marked, no
	 * digest; globex's is not there */
	{
		json_t *list = NULL, *arr, *t0, *t1;
		char *text;

		ck_assert_int_eq(store_token_list(st, a, &list), STORE_OK);
		arr = json_object_get(list, "tokens");
		ck_assert_uint_eq(json_array_size(arr), 2);
		/* two tokens made in the same millisecond order by id: find them */
		t0 = json_array_get(arr, 0);
		t1 = json_array_get(arr, 1);
		if (strcmp(jstr(t0, "id"), tok_a) != 0) {
			t0 = json_array_get(arr, 1);
			t1 = json_array_get(arr, 0);
		}
		ck_assert_str_eq(jstr(t0, "id"), tok_a);
		ck_assert_str_eq(jstr(t0, "role"), "editor");
		ck_assert_str_eq(jstr(t0, "label"), "a");
		ck_assert(json_is_true(json_object_get(t0, "revoked")));
		ck_assert_str_eq(jstr(t1, "id"), tok_keep);
		ck_assert_str_eq(jstr(t1, "role"), "admin");
		ck_assert(json_is_false(json_object_get(t1, "revoked")));
		ck_assert_uint_eq(json_object_size(t0), 5);
		text = json_dumps(list, 0);
		ck_assert_ptr_null(strstr(text, sha));
		free(text);
		json_decref(list);
		ck_assert_int_eq(store_token_list(st, b, &list), STORE_OK);
		ck_assert_uint_eq(json_array_size(json_object_get(list, "tokens")), 1);
		ck_assert_str_eq(jstr(json_array_get(json_object_get(list, "tokens"), 0), "id"), tok_b);
		json_decref(list);
		ck_assert_int_eq(store_token_list(st, "nope", &list), STORE_NOT_FOUND);
		ck_assert_ptr_null(list);
	}
	/* a session cannot be made from it any more; twice is NOT_FOUND */
	ck_assert_int_eq(store_web_session_create(st, a, tok_a, s1, T0, T8, id1),
	                 STORE_NOT_FOUND);
	ck_assert_int_eq(store_token_revoke(st, a, tok_a, "olivares-admin"), STORE_NOT_FOUND);
}
END_TEST

START_TEST(test_comparison_verdict_filter)
{
	const char *sid = "0123456789abcdef0123456789abcdef";
	const char *other = "fedcba9876543210fedcba9876543210";
	char a[33], b[33];
	struct cmp_fixture f;
	json_t *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL, *list = NULL, *all = NULL;
	json_t *items;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	cmp_fixture(&f, sid);
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c1), STORE_OK);
	f.c.verdict = "regressed";
	f.c.delta = -0.5;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c2), STORE_OK);
	f.c.scenario_id = other;
	f.c.verdict = "inconclusive";
	f.c.has_delta = 0;
	f.c.reason = "no suite";
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c3), STORE_OK);
	f.c.verdict = "improved";
	f.c.has_delta = 1;
	f.c.delta = 0.5;
	f.c.reason = NULL;
	ck_assert_int_eq(store_comparison_record(st, a, NULL, &f.c, &c4), STORE_OK);
	/* tenant b has an improved one too: never listed for a */
	ck_assert_int_eq(store_comparison_record(st, b, NULL, &f.c, &list), STORE_OK);
	json_decref(list);

	/* a verdict alone: newest first, only that verdict */
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "improved", 50, 0, &list),
			 STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert(json_equal(json_array_get(items, 0), c4));
	ck_assert(json_equal(json_array_get(items, 1), c1));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "regressed", 50, 0, &list),
			 STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert(json_equal(json_array_get(items, 0), c2));
	ck_assert_str_eq(jstr(json_array_get(items, 0), "verdict"), "regressed");
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "inconclusive", 50, 0, &list),
			 STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c3, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "unchanged", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);
	/* any other text matches nothing */
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "' OR '1'='1", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "Improved", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);

	/* with the scenario filter, and paging */
	ck_assert_int_eq(store_comparison_list_filtered(st, a, sid, "improved", 50, 0, &list),
			 STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, other, "regressed", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, "improved", 1, 1, &list),
			 STORE_OK);
	items = json_object_get(list, "comparisons");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "id"), jstr(c1, "id"));
	json_decref(list);

	/* NULL verdict: every comparison, exactly as store_comparison_list */
	ck_assert_int_eq(store_comparison_list_filtered(st, a, NULL, NULL, 50, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 4);
	ck_assert_int_eq(store_comparison_list(st, a, NULL, 50, 0, &all), STORE_OK);
	ck_assert(json_equal(list, all));
	ck_assert_str_eq(jstr(json_array_get(json_object_get(all, "comparisons"), 0), "id"),
			 jstr(c4, "id"));
	json_decref(list);
	json_decref(all);
	ck_assert_int_eq(store_comparison_list_filtered(st, a, sid, NULL, 50, 0, &list), STORE_OK);
	ck_assert_int_eq(store_comparison_list(st, a, sid, 50, 0, &all), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 2);
	ck_assert(json_equal(list, all));
	json_decref(list);
	json_decref(all);

	/* tenant b sees only its own */
	ck_assert_int_eq(store_comparison_list_filtered(st, b, NULL, "improved", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 1);
	json_decref(list);
	ck_assert_int_eq(store_comparison_list_filtered(st, b, NULL, "regressed", 50, 0, &list),
			 STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "comparisons")), 0);
	json_decref(list);

	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	json_decref(c4);
	cmp_fixture_free(&f);
}
END_TEST

START_TEST(test_audit_pages)
{
	char a[33], b[33], action[32];
	json_t *page = NULL, *first = NULL, *items;
	int i;

	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
	/* a's events test.1 .. test.5, interleaved with b's */
	for (i = 1; i <= 5; i++) {
		snprintf(action, sizeof action, "test.%d", i);
		ck_assert_int_eq(store_audit_append(st, a, NULL, action, NULL, NULL), STORE_OK);
		ck_assert_int_eq(store_audit_append(st, b, NULL, "other.tenant", NULL, NULL),
				 STORE_OK);
	}

	ck_assert_int_eq(store_audit_list_page(st, a, 2, 0, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.5");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "test.4");
	/* store_audit_list is page 0 */
	ck_assert_int_eq(store_audit_list(st, a, 2, &first), STORE_OK);
	ck_assert(json_equal(page, first));
	json_decref(first);
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 2, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.3");
	ck_assert_str_eq(jstr(json_array_get(items, 1), "action"), "test.2");
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 4, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.1");
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 2, 5, &page), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(page, "events")), 0);
	json_decref(page);
	ck_assert_int_eq(store_audit_list_page(st, a, 500, 3, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.2");
	json_decref(page);
	/* a negative offset counts as 0 */
	ck_assert_int_eq(store_audit_list_page(st, a, 1, -3, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(jstr(json_array_get(items, 0), "action"), "test.5");
	json_decref(page);
	/* b's pages hold only b's events */
	ck_assert_int_eq(store_audit_list_page(st, b, 500, 1, &page), STORE_OK);
	items = json_object_get(page, "events");
	ck_assert_uint_eq(json_array_size(items), 4);
	for (i = 0; i < 4; i++)
		ck_assert_str_eq(jstr(json_array_get(items, (size_t)i), "action"), "other.tenant");
	json_decref(page);
}
END_TEST

/* Several processes writing at once: every write lands (locks are waited
 * for or retried, never dropped). */
enum { WRITERS = 4, EACH = 15 };

/* Fork WRITERS processes that each record EACH runs through their own
 * connection (dsn); returns how many store_run_record calls said STORE_OK
 * and, in *unavailable, how many said STORE_UNAVAILABLE. */
static int concurrent_writes(const char *dsn, const char *tenant, int *unavailable)
{
	static const int seqs[] = {1, 2};
	pid_t pids[WRITERS];
	int i, status, ok = 0;

	*unavailable = 0;
	for (i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct store *mine = NULL;
			json_t *outs = make_outputs(seqs, 2);
			struct store_run r = sample_run(NULL, outs);
			json_t *run;
			enum store_rc rc;
			int k, good = 0, busy = 0;

			if (store_open(dsn, &mine))
				_exit(255);
			for (k = 0; k < EACH; k++) {
				run = NULL;
				rc = store_run_record(mine, tenant, NULL, &r, &run);
				if (rc == STORE_OK)
					good++;
				else if (rc == STORE_UNAVAILABLE)
					busy++;
				else
					_exit(254); /* any other answer is a defect */
				json_decref(run);
			}
			store_close(mine);
			json_decref(outs);
			_exit(good * 16 + busy);
		}
	}
	for (i = 0; i < WRITERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_lt(WEXITSTATUS(status), 254);
		ok += WEXITSTATUS(status) / 16;
		*unavailable += WEXITSTATUS(status) % 16;
	}
	return ok;
}

/* Several processes writing at once: every write lands (locks are waited
 * for or retried, never dropped). */
START_TEST(test_concurrent_writers)
{
	char a[33];
	json_t *list = NULL;
	int ok, unavailable;

	migrated();
	mk_tenant("acme", a);
	store_close(st);
	st = NULL;
	ok = concurrent_writes(g_dsn, a, &unavailable);
	ck_assert_int_eq(ok, WRITERS * EACH);
	ck_assert_int_eq(unavailable, 0);
	open_store();
	ck_assert_int_eq(store_run_list(st, a, NULL, NULL, 500, 0, &list), STORE_OK);
	ck_assert_uint_eq(json_array_size(json_object_get(list, "runs")), WRITERS * EACH);
	json_decref(list);
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM run_outputs"), WRITERS * EACH * 2);
}
END_TEST

/* Hold SQLite's write lock from another process for hold_ms; returns once
 * the lock is held. The child commits its own row ("lockholder-<tag>"). */
static pid_t hold_write_lock(int hold_ms, char tag)
{
	char sql[256];
	int fds[2];
	pid_t pid;
	char c = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct raw r;
		SQLHSTMT h;

		close(fds[0]);
		raw_open(&r);
		SQLSetConnectAttr(r.dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
		SQLAllocHandle(SQL_HANDLE_STMT, r.dbc, &h);
		snprintf(sql, sizeof sql,
			 "INSERT INTO tenants (id, name, created_at) VALUES "
			 "('ffffffffffffffffffffffffffffff%c%c', 'lockholder-%c', 'x')",
			 tag, tag, tag);
		if (!SQL_SUCCEEDED(SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS))) {
			SQLCHAR state[6], msg[256];
			SQLINTEGER nat;
			SQLSMALLINT len;

			SQLGetDiagRec(SQL_HANDLE_STMT, h, 1, state, &nat, msg, sizeof msg, &len);
			fprintf(stderr, "lock holder: [%s] %s\n", state, msg);
			_exit(1);
		}
		SQLFreeHandle(SQL_HANDLE_STMT, h);
		if (write(fds[1], "L", 1) != 1)
			_exit(1);
		usleep((useconds_t)hold_ms * 1000);
		SQLEndTran(SQL_HANDLE_DBC, r.dbc, SQL_COMMIT);
		raw_close(&r);
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000L + (t1.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* SQLite with almost no busy wait in the driver (Timeout=1 ms; 0 would mean
 * the driver's default): "database is locked" comes back at once, so the
 * store's own bounded retry is what waits. A lock released in time: the
 * write lands. A lock held past the retries: STORE_UNAVAILABLE and nothing
 * written (never a silent loss, never a success that did not happen). */
START_TEST(test_sqlite_locked_retry)
{
	char a[33], id[33];
	char dsn[2100];
	struct timespec t0;
	pid_t pid;
	int status;

	migrated();
	store_close(st);
	snprintf(dsn, sizeof dsn,
		 "Driver=SQLite3;Database=%s/t.db;Timeout=1;JournalMode=WAL;SyncPragma=NORMAL;"
		 "FKSupport=1",
		 g_dir);
	ck_assert_int_eq(store_open(dsn, &st), STORE_OK);

	pid = hold_write_lock(150, '1');
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(store_tenant_create(st, "patient", a) == STORE_OK, "%s",
		      store_last_error(st));
	ck_assert_int_ge(ms_since(&t0), 100);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(store_tenant_find(st, "patient", id), STORE_OK);
	ck_assert_str_eq(id, a);

	pid = hold_write_lock(3000, '2');
	ck_assert_int_eq(store_tenant_create(st, "impatient", a), STORE_UNAVAILABLE);
	ck_assert(strstr(store_last_error(st), "busy") != NULL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(store_tenant_find(st, "impatient", id), STORE_NOT_FOUND);
	ck_assert_int_eq(store_tenant_find(st, "lockholder-1", id), STORE_OK);
	ck_assert_int_eq(store_tenant_find(st, "lockholder-2", id), STORE_OK);
}
END_TEST

/* mode & 07777 of path, or -1 when it does not exist */
static int file_mode(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return -1;
	return (int)(sb.st_mode & 07777);
}

/* SQLite only: a new database holds token hashes and tenant data, so the
 * store creates it 0600 whatever the umask (sql/store.h), and SQLite gives
 * its -wal and -shm that mode; an existing database keeps the mode the
 * operator gave it. */
START_TEST(test_sqlite_file_mode)
{
	char dsn[2100], path[600], wal[700], shm[700];
	struct store *mine = NULL;
	struct stat lsb;
	int applied = 0;
	int fd;

	store_close(st);
	st = NULL;
	umask(022);
	snprintf(path, sizeof path, "%s/new.db", g_dir);
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(shm, sizeof shm, "%s-shm", path);
	snprintf(dsn, sizeof dsn,
	         "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL;SyncPragma=NORMAL;"
	         "FKSupport=1",
	         path);
	ck_assert_int_eq(file_mode(path), -1);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_gt(applied, 0);
	/* the connection is open in WAL mode: both exist now */
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_int_eq(file_mode(wal), 0600);
	ck_assert_int_eq(file_mode(shm), 0600);
	store_close(mine);
	mine = NULL;

	/* a umask that takes the owner's bits: still 0600, and usable */
	snprintf(path, sizeof path, "%s/strict.db", g_dir);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL", path);
	umask(0277);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	umask(022);
	ck_assert_int_eq(file_mode(path), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	store_close(mine);
	mine = NULL;

	/* a symbolic link to a database not made yet (a data directory
	 * pointed elsewhere), through a second link: the file at the end of
	 * the chain is the new database, 0600 too; the links stay links */
	umask(022);
	snprintf(path, sizeof path, "%s/linked.db", g_dir);
	snprintf(wal, sizeof wal, "%s/hop.db", g_dir);
	snprintf(shm, sizeof shm, "%s/target.db", g_dir);
	ck_assert_int_eq(symlink("hop.db", path), 0);
	ck_assert_int_eq(symlink(shm, wal), 0);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000", path);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_int_eq(file_mode(shm), 0600);
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_eq(file_mode(shm), 0600);
	store_close(mine);
	mine = NULL;
	ck_assert_int_eq(lstat(path, &lsb), 0);
	ck_assert(S_ISLNK(lsb.st_mode));
	ck_assert_int_eq(lstat(wal, &lsb), 0);
	ck_assert(S_ISLNK(lsb.st_mode));

	/* NoCreat=1 (the workers' DSN): nothing is created, the open fails */
	snprintf(path, sizeof path, "%s/nocreat.db", g_dir);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;NoCreat=1", path);
	ck_assert_int_eq(store_open(dsn, &mine), STORE_UNAVAILABLE);
	ck_assert_ptr_null(mine);
	ck_assert_int_eq(file_mode(path), -1);

	/* an existing database keeps its mode: 0640 stays 0640 */
	snprintf(path, sizeof path, "%s/existing.db", g_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0640), 0);
	close(fd);
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s;Timeout=5000;JournalMode=WAL", path);
	ck_assert_msg(store_open(dsn, &mine) == STORE_OK, "%s", store_last_error(NULL));
	ck_assert_msg(store_migrate(mine, &applied) == STORE_OK, "%s", store_last_error(mine));
	ck_assert_int_eq(file_mode(path), 0640);
	ck_assert_int_eq(file_mode(wal), 0640);
	ck_assert_int_eq(store_reconnect(mine), STORE_OK);
	ck_assert_int_eq(file_mode(path), 0640);
	store_close(mine);
}
END_TEST

/* PostgreSQL only: the server drops the connection (a restart, a stale
 * connection after a long run). The call that notices before its commit
 * reconnects once and runs again: the database committed nothing of it,
 * so a read and a write both succeed, the write once. */
START_TEST(test_pg_connection_lost)
{
	static const char terminate[] = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
	                                "WHERE datname = current_database() AND pid <> "
	                                "pg_backend_pid()";
	char a[33], b[33], found[33];
	enum store_rc rc;

	migrated();
	mk_tenant("acme", a);
	ck_assert_int_eq(raw_exec(terminate), 0);
	rc = store_tenant_find(st, "acme", found);
	ck_assert_msg(rc == STORE_OK, "rc %d: %s", rc, store_last_error(st));
	ck_assert_str_eq(found, a);
	ck_assert_int_eq(raw_exec(terminate), 0);
	rc = store_tenant_create(st, "globex", b);
	ck_assert_msg(rc == STORE_OK, "rc %d: %s", rc, store_last_error(st));
	ck_assert_int_eq(raw_count("SELECT COUNT(*) FROM tenants WHERE name = 'globex'"), 1);
}
END_TEST

static void add_cases(TCase *tc)
{
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_migrate_idempotent);
	tcase_add_test(tc, test_tenant_token);
	tcase_add_test(tc, test_modules);
	tcase_add_test(tc, test_scenario_crud);
	tcase_add_test(tc, test_roundtrip_bytes);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_run_rollback);
	tcase_add_test(tc, test_run_durations);
	tcase_add_test(tc, test_tenant_isolation);
	tcase_add_test(tc, test_run_scored);
	tcase_add_test(tc, test_comparisons);
	tcase_add_test(tc, test_comparison_rollback);
	tcase_add_test(tc, test_comparison_tenant_isolation);
	tcase_add_test(tc, test_comparison_append_only);
	tcase_add_test(tc, test_sessions);
	tcase_add_test(tc, test_session_tenant_isolation);
	tcase_add_test(tc, test_session_append_only);
	tcase_add_test(tc, test_run_replay);
	tcase_add_test(tc, test_web_sessions);
	tcase_add_test(tc, test_web_session_refused);
	tcase_add_test(tc, test_web_session_purge);
	tcase_add_test(tc, test_web_session_delete);
	tcase_add_test(tc, test_token_revoke);
	tcase_add_test(tc, test_comparison_verdict_filter);
	tcase_add_test(tc, test_audit_pages);
	tcase_add_test(tc, test_concurrent_writers);
}

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc;
	const char *pg = getenv("OLIVARES_TEST_PG_DSN");

	tc = tcase_create("sqlite");
	tcase_add_unchecked_fixture(tc, setup_root, teardown_root);
	tcase_add_checked_fixture(tc, setup_sqlite, teardown_sqlite);
	add_cases(tc);
	tcase_add_test(tc, test_sqlite_locked_retry);
	tcase_add_test(tc, test_sqlite_file_mode);
	suite_add_tcase(s, tc);
	if (pg && *pg) {
		tc = tcase_create("postgres");
		tcase_add_checked_fixture(tc, setup_pg, teardown_pg);
		add_cases(tc);
		tcase_add_test(tc, test_pg_connection_lost);
		suite_add_tcase(s, tc);
	} else {
		fprintf(stderr, "test_store: OLIVARES_TEST_PG_DSN not set, PostgreSQL cases skipped\n");
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
