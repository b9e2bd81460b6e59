/*
 * What the store's test files share (store_fixture.h): the database each
 * case gets, a raw ODBC connection that looks at the rows themselves, and
 * the sample records the cases build on.
 */
#include "tests/unit/store_fixture.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char g_dsn[2048];
char g_dir[300];
int g_pg;
struct store *st;

static const char *const all_tables[] = {"tenants",      "api_tokens",        "module_settings",
                                         "audit_events", "scenarios",         "runs",
                                         "run_outputs",  "comparisons",       "sessions",
                                         "web_sessions", "schema_migrations", "comparison_jobs",
                                         "executors",    "run_logs"};

/* ---- raw ODBC, for looking at rows ------------------------------------------ */

void raw_open(struct raw *r)
{
	SQLRETURN rc;

	SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &r->env);
	SQLSetEnvAttr(r->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
	SQLAllocHandle(SQL_HANDLE_DBC, r->env, &r->dbc);
	rc = SQLDriverConnect(r->dbc, NULL, (SQLCHAR *)g_dsn, SQL_NTS, NULL, 0, NULL,
	                      SQL_DRIVER_NOPROMPT);
	ck_assert_msg(SQL_SUCCEEDED(rc), "raw connect failed");
}

void raw_close(struct raw *r)
{
	SQLDisconnect(r->dbc);
	SQLFreeHandle(SQL_HANDLE_DBC, r->dbc);
	SQLFreeHandle(SQL_HANDLE_ENV, r->env);
}

int raw_exec(const char *sql)
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
		got = (rc == SQL_SUCCESS_WITH_INFO &&
		       (ind == SQL_NO_TOTAL || ind >= (SQLLEN)sizeof chunk))
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
int raw_cells_containing(const char *needle)
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

long raw_count(const char *sql)
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

void open_store(void)
{
	enum store_rc rc = store_open(g_dsn, &st);

	ck_assert_msg(rc == STORE_OK, "store_open: %s", store_last_error(NULL));
	ck_assert_str_eq(store_dialect(st), g_pg ? "postgres" : "sqlite");
}

/* One directory for the whole SQLite test case, made and removed by the
 * parent process (so a failed test, whose forked child stops at the first
 * failed assertion, leaves nothing behind); one subdirectory per test. */
static char g_root[256];

void setup_root(void)
{
	snprintf(g_root, sizeof g_root, "/tmp/olv-test-store-XXXXXX");
	if (!mkdtemp(g_root)) {
		perror("mkdtemp");
		exit(1);
	}
}

void teardown_root(void)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_root);
}

void setup_sqlite(void)
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

void teardown_sqlite(void)
{
	char cmd[512];

	store_close(st);
	st = NULL;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", g_dir);
}

void setup_pg(void)
{
	snprintf(g_dsn, sizeof g_dsn, "%s", getenv("OLIVARES_TEST_PG_DSN"));
	g_pg = 1;
	ck_assert_int_eq(
	    raw_exec(
	        "DROP TABLE IF EXISTS executors, comparison_jobs, idempotency_keys, web_sessions, "
	        "comparisons, run_logs, run_outputs, "
	        "runs, sessions, scenarios, audit_events, module_settings, "
	        "suites, "
	        "api_tokens, tenants, schema_migrations CASCADE"),
	    0);
	open_store();
}

void teardown_pg(void)
{
	store_close(st);
	st = NULL;
}

/* ---- helpers --------------------------------------------------------------- */

void migrated(void)
{
	int n = -1;

	ck_assert_msg(store_migrate(st, &n) == STORE_OK, "migrate: %s", store_last_error(st));
}

void mk_tenant(const char *name, char id[33])
{
	ck_assert_int_eq(store_tenant_create(st, name, id), STORE_OK);
	ck_assert_uint_eq(strlen(id), 32);
}

void two_tenants(char a[33], char b[33])
{
	migrated();
	mk_tenant("acme", a);
	mk_tenant("globex", b);
}

void sha256_hex(const char *s, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len;
	int i;

	ck_assert(EVP_Digest(s, n, md, &len, EVP_sha256(), NULL) == 1);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

json_t *jload(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	ck_assert_msg(j != NULL, "bad test JSON: %s", e.text);
	return j;
}

json_t *sample_scenario(const char *name)
{
	json_t *s = jload("{\"description\":\"d\",\"subject_kind\":\"agent\","
	                  "\"steps\":[{\"key\":\"step-1\",\"input\":\"agent:user1@example.test\"},"
	                  "{\"key\":\"step-2\",\"input\":\"agent:user2@example.test\"}],"
	                  "\"mocks\":[{\"resource\":\"agent:user1@example.test\","
	                  "\"response\":\"first synthetic account\"}]}");

	json_object_set_new(s, "name", json_string(name));
	return s;
}

void expected_digest(json_t *steps, json_t *mocks, char out[65])
{
	json_t *both = json_pack("{s:O,s:O}", "steps", steps, "mocks", mocks);
	char *canon = json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS);

	sha256_hex(canon, strlen(canon), out);
	free(canon);
	json_decref(both);
}

const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

json_int_t jint(json_t *o, const char *k)
{
	ck_assert_msg(json_is_integer(json_object_get(o, k)), "%s is not an integer", k);
	return json_integer_value(json_object_get(o, k));
}

json_t *make_outputs(const int *seqs, int n)
{
	json_t *arr = json_array();
	char key[32], in[64], outv[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "step-%d", seqs[i]);
		snprintf(in, sizeof in, "agent:user%d@example.test", seqs[i]);
		snprintf(outv, sizeof outv, "response %d\nline two", seqs[i]);
		json_array_append_new(arr, json_pack("{s:i,s:s,s:s,s:s,s:s,s:n}", "seq", seqs[i],
		                                     "key", key, "input", in, "output", outv,
		                                     "status", "ok", "error_kind"));
	}
	return arr;
}

struct store_run sample_run(const char *scenario_id, json_t *outputs)
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

/* A token of tenant with role; id gets its id. The secret is derived from
 * name (never stored: only its digest is). */
void mk_token(const char *tenant, enum store_role role, const char *name, char id[33])
{
	char secret[128], sha[65];

	snprintf(secret, sizeof secret, "olv_test_token_%s", name);
	sha256_hex(secret, strlen(secret), sha);
	ck_assert_int_eq(store_token_create(st, tenant, role, sha, name, NULL, id), STORE_OK);
}

/* The stored digest of a cookie secret named name, as the admin view makes it. */
void cookie_sha(const char *name, char out[65])
{
	char secret[128];

	snprintf(secret, sizeof secret, "cookie-secret-%s", name);
	sha256_hex(secret, strlen(secret), out);
}

void sign_in(const char *tenant, const char *token, const char *cookie, char sha[65], char id[33])
{
	cookie_sha(cookie, sha);
	ck_assert_int_eq(store_web_session_create(st, tenant, token, sha, T0, T8, id), STORE_OK);
}

long count_where(const char *table, const char *col, const char *value)
{
	char sql[512];

	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE %s = '%s'", table, col, value);
	return raw_count(sql);
}

void assert_not_found_zeroed(const char *sha, const char *now)
{
	struct store_principal p;

	memset(&p, 0x5a, sizeof p);
	ck_assert_int_eq(store_web_session_lookup(st, sha, now, &p), STORE_NOT_FOUND);
	ck_assert_str_eq(p.tenant_id, "");
	ck_assert_str_eq(p.token_id, "");
	ck_assert_str_eq(p.sha256_hex, "");
	ck_assert_int_eq(p.role, 0);
}
