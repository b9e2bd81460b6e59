/*
 * The store's statements (store_internal.h): the statement cache, parameter
 * binding, execution, and the decoding of rows into JSON or fixed buffers,
 * for every entity file of sql/. The connection and the transactions that
 * run them are in core.c.
 *
 * Text in and out: parameters are bound with SQLBindParameter as SQL_C_CHAR
 * with explicit lengths (SQL_VARCHAR, or SQL_LONGVARCHAR above 4000 bytes);
 * text columns are read with chunked SQLGetData loops and the chunks joined
 * before anything decodes them (a chunk may split a UTF-8 sequence), never
 * sized from SQLDescribeCol (PostgreSQL's TEXT comes back as a long varchar
 * of no useful size). UTF-8 round-trips byte for byte through both drivers
 * with SQL_C_CHAR (checked by tests/unit/test_store.c, also under LANG=C:
 * "PostgreSQL Unicode" passes SQL_C_CHAR bytes through as UTF-8 when the
 * database encoding is UTF8).
 */
#include "sql/store_internal.h"

#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "model/buf.h"

#define STORE_LONG_TEXT 4000 /* bind longer strings as SQL_LONGVARCHAR */
/* a filtered list's SQL text: its fixed fragments are far shorter */
#define FILTERED_SQL_MAX 4096u

/* ---- statements: bind, execute, read ------------------------------------- */

static unsigned long sql_hash(const char *sql)
{
	unsigned long h = 5381;

	while (*sql)
		h = h * 33 ^ (unsigned char)*sql++;
	return h;
}

static void stmt_slot_drop(struct stmt_slot *slot)
{
	if (slot->h != SQL_NULL_HSTMT)
		SQLFreeHandle(SQL_HANDLE_STMT, slot->h);
	free(slot->sql);
	memset(slot, 0, sizeof *slot);
	slot->h = SQL_NULL_HSTMT;
}

/* Drop every cached statement (before a disconnect). */
void store_stmt_cache_clear(struct store *st)
{
	size_t i;

	for (i = 0; i < STORE_STMT_CACHE; i++)
		stmt_slot_drop(&st->stmts[i]);
}

static struct stmt_slot *stmt_slot_of(struct store *st, SQLHSTMT h)
{
	size_t i;

	for (i = 0; i < STORE_STMT_CACHE; i++)
		if (st->stmts[i].h == h && h != SQL_NULL_HSTMT)
			return &st->stmts[i];
	return NULL;
}

/*
 * A statement for sql: the cached one (not in use), or a new prepared one
 * stored in a free or the least recently used idle slot when cache is set.
 * *slot is NULL for a statement that is not cached (free it after use).
 */
static enum store_rc stmt_get(struct store *st, const char *sql, int cache, SQLHSTMT *out,
                              struct stmt_slot **slot)
{
	struct stmt_slot *victim = NULL;
	unsigned long hash = 0;
	SQLHSTMT h = SQL_NULL_HSTMT;
	SQLRETURN r;
	enum store_rc rc;
	size_t i;

	*out = SQL_NULL_HSTMT;
	*slot = NULL;
	st->tick++;
	if (cache) {
		hash = sql_hash(sql);
		for (i = 0; i < STORE_STMT_CACHE; i++) {
			struct stmt_slot *s = &st->stmts[i];

			if (s->h != SQL_NULL_HSTMT && !s->busy && s->hash == hash &&
			    strcmp(s->sql, sql) == 0) {
				s->busy = 1;
				s->used = st->tick;
				*out = s->h;
				*slot = s;
				return STORE_OK;
			}
			if (s->busy)
				continue;
			if (!victim || (victim->h != SQL_NULL_HSTMT &&
			                (s->h == SQL_NULL_HSTMT || s->used < victim->used)))
				victim = s;
		}
	}
	r = SQLAllocHandle(SQL_HANDLE_STMT, st->dbc, &h);
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc, "allocate statement");
	r = SQLPrepare(h, (SQLCHAR *)sql, SQL_NTS);
	if (!SQL_SUCCEEDED(r)) {
		rc = store_odbc_fail(st, SQL_HANDLE_STMT, h, "prepare");
		SQLFreeHandle(SQL_HANDLE_STMT, h);
		return rc;
	}
	if (victim) {
		stmt_slot_drop(victim);
		victim->h = h;
		victim->sql = model_xstrdup(sql);
		victim->hash = hash;
		victim->used = st->tick;
		victim->busy = 1;
		*slot = victim;
	}
	*out = h;
	return STORE_OK;
}

/*
 * Give a statement back: a cached one has its cursor closed and its
 * parameters unbound (they point into the caller's stack) and stays
 * prepared; when failed is set, or for an uncached one, it is freed.
 */
static void stmt_put(struct store *st, SQLHSTMT h, struct stmt_slot *slot, int failed)
{
	SQLRETURN r1, r2;

	(void)st;
	if (h == SQL_NULL_HSTMT)
		return;
	if (!slot) {
		SQLFreeHandle(SQL_HANDLE_STMT, h);
		return;
	}
	r1 = failed ? SQL_ERROR : SQLFreeStmt(h, SQL_CLOSE);
	r2 = failed ? SQL_ERROR : SQLFreeStmt(h, SQL_RESET_PARAMS);
	if (!SQL_SUCCEEDED(r1) || !SQL_SUCCEEDED(r2)) {
		stmt_slot_drop(slot);
		return;
	}
	slot->busy = 0;
}

/*
 * Prepare sql (or take it from the statement cache when cache is set), bind
 * params and execute. If out is not NULL the statement is handed to the
 * caller (fetch with store_q_fetch, give back with store_q_free); otherwise it is given
 * back here and *rows (if not NULL) receives the affected row count.
 */
enum store_rc store_q_run(struct store *st, const char *sql, struct param *p, size_t n,
                          SQLHSTMT *out, SQLLEN *rows, int cache)
{
	struct stmt_slot *slot = NULL;
	SQLHSTMT h = SQL_NULL_HSTMT;
	SQLRETURN r;
	enum store_rc rc = STORE_OK;
	size_t k;
	SQLLEN len;

	if (out)
		*out = SQL_NULL_HSTMT;
	if (rows)
		*rows = 0;
	rc = stmt_get(st, sql, cache, &h, &slot);
	if (rc)
		return rc;
	for (k = 0; k < n; k++) {
		if (p[k].type == P_INT) {
			p[k].iv = (SQLINTEGER)p[k].i;
			p[k].ind = p[k].null ? SQL_NULL_DATA : 0;
			r = SQLBindParameter(h, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT, SQL_C_SLONG,
			                     SQL_INTEGER, 0, 0, &p[k].iv, 0, &p[k].ind);
		} else if (p[k].type == P_BIGINT) {
			p[k].bv = (SQLBIGINT)p[k].i;
			p[k].ind = p[k].null ? SQL_NULL_DATA : 0;
			r = SQLBindParameter(h, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT,
			                     SQL_C_SBIGINT, SQL_BIGINT, 0, 0, &p[k].bv, 0,
			                     &p[k].ind);
		} else if (p[k].type == P_REAL) {
			p[k].dv = (SQLDOUBLE)p[k].d;
			p[k].ind = p[k].null ? SQL_NULL_DATA : 0;
			r = SQLBindParameter(h, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT,
			                     SQL_C_DOUBLE, SQL_DOUBLE, 15, 0, &p[k].dv, 0,
			                     &p[k].ind);
		} else if (!p[k].s) {
			p[k].ind = SQL_NULL_DATA;
			r = SQLBindParameter(h, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT, SQL_C_CHAR,
			                     SQL_VARCHAR, 1, 0, NULL, 0, &p[k].ind);
		} else {
			len = (SQLLEN)strlen(p[k].s);
			p[k].ind = len;
			r = SQLBindParameter(h, (SQLUSMALLINT)(k + 1), SQL_PARAM_INPUT, SQL_C_CHAR,
			                     len > STORE_LONG_TEXT ? SQL_LONGVARCHAR : SQL_VARCHAR,
			                     (SQLULEN)(len > 0 ? len : 1), 0, (SQLPOINTER)p[k].s,
			                     len, &p[k].ind);
		}
		if (!SQL_SUCCEEDED(r)) {
			rc = store_odbc_fail(st, SQL_HANDLE_STMT, h, "bind");
			goto out;
		}
	}
	r = SQLExecute(h);
	if (r != SQL_NO_DATA && !SQL_SUCCEEDED(r)) {
		rc = store_odbc_fail(st, SQL_HANDLE_STMT, h, "execute");
		goto out;
	}
	if (rows && r != SQL_NO_DATA) {
		r = SQLRowCount(h, rows);
		if (!SQL_SUCCEEDED(r)) {
			rc = store_odbc_fail(st, SQL_HANDLE_STMT, h, "row count");
			goto out;
		}
	}
	if (out) {
		*out = h;
		h = SQL_NULL_HSTMT;
	}
out:
	stmt_put(st, h, slot, rc != STORE_OK);
	return rc;
}

/* store_q_run through the statement cache: every statement of the store but DDL. */
enum store_rc store_q_exec(struct store *st, const char *sql, struct param *p, size_t n,
                           SQLHSTMT *out, SQLLEN *rows)
{
	return store_q_run(st, sql, p, n, out, rows, 1);
}

/* Give back a statement handed out by store_q_exec; failed drops it from the
 * cache (a statement that failed mid-fetch is not reused). */
void store_q_free(struct store *st, SQLHSTMT h, int failed)
{
	stmt_put(st, h, stmt_slot_of(st, h), failed);
}

/* *row = 1 and the cursor on the next row, or *row = 0 at the end. */
enum store_rc store_q_fetch(struct store *st, SQLHSTMT h, int *row)
{
	SQLRETURN r;

	*row = 0;
	r = SQLFetch(h);
	if (r == SQL_NO_DATA)
		return STORE_OK;
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_STMT, h, "fetch");
	*row = 1;
	return STORE_OK;
}

/*
 * Read text column col of the current row whole, in chunks (never sized
 * from SQLDescribeCol). *out is NULL for SQL NULL, else an allocated,
 * NUL-terminated copy (caller frees) of *len bytes.
 */
static enum store_rc col_text(struct store *st, SQLHSTMT h, int col, char **out, size_t *len)
{
	char chunk[8192];
	struct model_buf b;
	SQLLEN ind;
	SQLRETURN r;
	size_t got;

	*out = NULL;
	if (len)
		*len = 0;
	model_buf_init(&b, STORE_TEXT_MAX);
	for (;;) {
		ind = 0;
		r = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_CHAR, chunk, sizeof chunk, &ind);
		if (r == SQL_NO_DATA)
			break;
		if (!SQL_SUCCEEDED(r)) {
			model_buf_release(&b);
			return store_odbc_fail(st, SQL_HANDLE_STMT, h, "read column");
		}
		if (ind == SQL_NULL_DATA) {
			model_buf_release(&b);
			return STORE_OK;
		}
		/* a truncated chunk fills the buffer minus its NUL */
		if (r == SQL_SUCCESS_WITH_INFO &&
		    (ind == SQL_NO_TOTAL || ind >= (SQLLEN)sizeof chunk))
			got = sizeof chunk - 1;
		else if (ind == SQL_NO_TOTAL)
			got = strlen(chunk);
		else
			got = (size_t)ind;
		if (model_buf_add(&b, chunk, got)) {
			model_buf_release(&b);
			store_seterr(st, "column %d is larger than %u bytes", col, STORE_TEXT_MAX);
			return STORE_ERROR;
		}
		if (r == SQL_SUCCESS)
			break;
	}
	*out = model_buf_detach(&b, len);
	model_buf_release(&b);
	return STORE_OK;
}

enum store_rc store_col_int(struct store *st, SQLHSTMT h, int col, long long *v, int *null)
{
	SQLBIGINT x = 0;
	SQLLEN ind = 0;
	SQLRETURN r;

	r = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_SBIGINT, &x, sizeof x, &ind);
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_STMT, h, "read integer column");
	*null = ind == SQL_NULL_DATA;
	*v = *null ? 0 : (long long)x;
	return STORE_OK;
}

static enum store_rc col_double(struct store *st, SQLHSTMT h, int col, double *v, int *null)
{
	SQLDOUBLE x = 0;
	SQLLEN ind = 0;
	SQLRETURN r;

	r = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_DOUBLE, &x, sizeof x, &ind);
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_STMT, h, "read real column");
	*null = ind == SQL_NULL_DATA;
	*v = *null ? 0 : (double)x;
	return STORE_OK;
}

/*
 * A text column as a JSON value (a string, or the decoded JSON of a C_JSON
 * column; null for SQL NULL). A value that fits the first chunk is decoded
 * from the stack buffer with no other copy; a longer one goes through
 * col_text's chunked read, which is joined before decoding. *v is NULL when
 * the text does not decode.
 */
static enum store_rc col_json(struct store *st, SQLHSTMT h, int col, enum ctype type, json_t **v)
{
	char chunk[4096];
	json_error_t jerr;
	struct model_buf b;
	SQLLEN ind = 0;
	SQLRETURN r;
	char *rest = NULL;
	size_t len = 0;
	size_t got;
	enum store_rc rc;

	*v = NULL;
	r = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_CHAR, chunk, sizeof chunk, &ind);
	if (r == SQL_NO_DATA) {
		/* nothing more to read: empty text, as col_text gives */
		r = SQL_SUCCESS;
		ind = 0;
		chunk[0] = '\0';
	}
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_STMT, h, "read column");
	if (ind == SQL_NULL_DATA) {
		*v = json_null();
		return STORE_OK;
	}
	/* a truncated chunk fills the buffer minus its NUL (as in col_text) */
	if (!(r == SQL_SUCCESS_WITH_INFO && (ind == SQL_NO_TOTAL || ind >= (SQLLEN)sizeof chunk))) {
		got = ind == SQL_NO_TOTAL ? strlen(chunk) : (size_t)ind;
		if (type == C_JSON)
			*v = json_loadb(chunk, got, JSON_DECODE_ANY, &jerr);
		else
			*v = json_stringn(chunk, got);
		return STORE_OK;
	}
	/* truncated: this chunk, then the rest read whole by col_text */
	rc = col_text(st, h, col, &rest, &len);
	if (rc)
		return rc;
	model_buf_init(&b, STORE_TEXT_MAX);
	if (model_buf_add(&b, chunk, sizeof chunk - 1) || (rest && model_buf_add(&b, rest, len))) {
		free(rest);
		model_buf_release(&b);
		store_seterr(st, "column %d is larger than %u bytes", col, STORE_TEXT_MAX);
		return STORE_ERROR;
	}
	free(rest);
	if (type == C_JSON)
		*v = json_loadb(b.data, b.len, JSON_DECODE_ANY, &jerr);
	else
		*v = json_stringn(b.data, b.len);
	model_buf_release(&b);
	return STORE_OK;
}

static enum store_rc row_object(struct store *st, SQLHSTMT h, const struct colspec *cols, size_t n,
                                json_t **out)
{
	json_t *obj;
	json_t *v;
	enum store_rc rc = STORE_OK;
	size_t k;
	long long i = 0;
	double d = 0;
	int null = 0;

	*out = NULL;
	obj = json_object();
	for (k = 0; k < n; k++) {
		v = NULL;
		switch (cols[k].type) {
		case C_TEXT:
		case C_JSON:
			rc = col_json(st, h, (int)k + 1, cols[k].type, &v);
			if (rc)
				goto out;
			break;
		case C_TEXT_SET:
			rc = col_json(st, h, (int)k + 1, C_TEXT, &v);
			if (rc)
				goto out;
			if (v && json_string_length(v) == 0) {
				json_decref(v);
				v = json_null();
			}
			break;
		case C_INT:
		case C_BOOL:
		case C_US_MS:
			rc = store_col_int(st, h, (int)k + 1, &i, &null);
			if (rc)
				goto out;
			if (null)
				v = json_null();
			else if (cols[k].type == C_INT)
				v = json_integer(i);
			else if (cols[k].type == C_US_MS)
				v = json_real((double)i / 1000.0);
			else
				v = json_boolean(i != 0);
			break;
		case C_REAL:
			rc = col_double(st, h, (int)k + 1, &d, &null);
			if (rc)
				goto out;
			v = null ? json_null() : json_real(d);
			break;
		}
		if (!v) {
			store_seterr(st, "column %s does not decode (invalid UTF-8 or JSON)",
			             cols[k].name);
			rc = STORE_ERROR;
			goto out;
		}
		json_object_set_new_nocheck(obj, cols[k].name, v);
	}
	*out = obj;
	obj = NULL;
out:
	json_decref(obj);
	return rc;
}

/* Run a query and collect every row as an object appended to array arr. */
enum store_rc store_q_rows(struct store *st, const char *sql, struct param *p, size_t n,
                           const struct colspec *cols, size_t ncols, json_t *arr)
{
	SQLHSTMT h = SQL_NULL_HSTMT;
	enum store_rc rc;
	json_t *obj;
	int row;

	rc = store_q_exec(st, sql, p, n, &h, NULL);
	if (rc)
		return rc;
	for (;;) {
		rc = store_q_fetch(st, h, &row);
		if (rc || !row)
			break;
		rc = row_object(st, h, cols, ncols, &obj);
		if (rc)
			break;
		json_array_append_new(arr, obj);
	}
	store_q_free(st, h, rc != STORE_OK);
	return rc;
}

/*
 * A listing: store_q_rows into a new array, returned as {key: array} in *out (a
 * new reference; NULL on failure).
 */
enum store_rc store_q_list(struct store *st, const char *sql, struct param *p, size_t n,
                           const struct colspec *cols, size_t ncols, const char *key, json_t **out)
{
	json_t *arr = json_array();
	enum store_rc rc;

	*out = NULL;
	rc = store_q_rows(st, sql, p, n, cols, ncols, arr);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	*out = json_pack("{s:o}", key, arr);
	return STORE_OK;
}

/* The first row as an object; STORE_NOT_FOUND if there is none. */
enum store_rc store_q_row(struct store *st, const char *sql, struct param *p, size_t n,
                          const struct colspec *cols, size_t ncols, json_t **out)
{
	SQLHSTMT h = SQL_NULL_HSTMT;
	enum store_rc rc;
	int row = 0;

	*out = NULL;
	rc = store_q_exec(st, sql, p, n, &h, NULL);
	if (rc)
		return rc;
	rc = store_q_fetch(st, h, &row);
	if (!rc && !row)
		rc = STORE_NOT_FOUND;
	if (!rc)
		rc = row_object(st, h, cols, ncols, out);
	store_q_free(st, h, rc != STORE_OK && rc != STORE_NOT_FOUND);
	return rc;
}

/* 1 in *found if the query returns at least one row. */
enum store_rc store_q_exists(struct store *st, const char *sql, struct param *p, size_t n,
                             int *found)
{
	SQLHSTMT h = SQL_NULL_HSTMT;
	enum store_rc rc;

	*found = 0;
	rc = store_q_exec(st, sql, p, n, &h, NULL);
	if (rc)
		return rc;
	rc = store_q_fetch(st, h, found);
	store_q_free(st, h, rc != STORE_OK);
	return rc;
}

/*
 * Read text column col of the current row into buf (n bytes with its NUL):
 * for short values of a known shape (ids, digests), without any
 * allocation. A NULL or a longer value is malformed: *ok = 0.
 */
static enum store_rc col_fixed(struct store *st, SQLHSTMT h, int col, char *buf, size_t n, int *ok)
{
	SQLLEN ind = 0;
	SQLRETURN r;

	*ok = 0;
	buf[0] = '\0';
	r = SQLGetData(h, (SQLUSMALLINT)col, SQL_C_CHAR, buf, (SQLLEN)n, &ind);
	if (r == SQL_NO_DATA)
		return STORE_OK;
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_STMT, h, "read column");
	/* SQL_SUCCESS_WITH_INFO is a truncation: too long to be well-formed */
	*ok = r == SQL_SUCCESS && ind != SQL_NULL_DATA && ind >= 0 && (size_t)ind < n;
	if (!*ok)
		buf[0] = '\0';
	return STORE_OK;
}

/*
 * Read a principal from columns 1..5 of the current row (token id, tenant
 * id, role, a SHA-256 hex, scopes) and check their shape: a malformed row is
 * STORE_ERROR, never a half-filled principal (*pr is zeroed on any error).
 * Shared by the token lookups and the admin view's session lookup.
 */
enum store_rc store_principal_row(struct store *st, SQLHSTMT h, struct store_principal *pr)
{
	enum store_rc rc;
	long long role = 0, scopes = 0;
	int ok1 = 0, ok2 = 0, ok3 = 0, null = 1, null_s = 1;

	memset(pr, 0, sizeof *pr);
	rc = col_fixed(st, h, 1, pr->token_id, sizeof pr->token_id, &ok1);
	if (!rc)
		rc = col_fixed(st, h, 2, pr->tenant_id, sizeof pr->tenant_id, &ok2);
	if (!rc)
		rc = store_col_int(st, h, 3, &role, &null);
	if (!rc)
		rc = col_fixed(st, h, 4, pr->sha256_hex, sizeof pr->sha256_hex, &ok3);
	if (!rc)
		rc = store_col_int(st, h, 5, &scopes, &null_s);
	if (rc) {
		memset(pr, 0, sizeof *pr);
		return rc;
	}
	if (!ok1 || !ok2 || !ok3 || null || !store_is_lower_hex(pr->token_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(pr->tenant_id, MODEL_ID_LEN) ||
	    !store_is_lower_hex(pr->sha256_hex, STORE_SHA256_HEX_LEN) || role < STORE_ROLE_VIEWER ||
	    role > STORE_ROLE_ADMIN || null_s || scopes < 0 ||
	    scopes > (long long)STORE_SCOPE_ALL) {
		memset(pr, 0, sizeof *pr);
		store_seterr(st, "malformed token row in the database");
		return STORE_ERROR;
	}
	pr->role = (enum store_role)role;
	pr->scopes = (unsigned)scopes;
	return STORE_OK;
}

/*
 * A tenant's filtered list: the query is built from fixed fragments (head,
 * one fragment per filter whose value is set, order, then
 * " LIMIT ? OFFSET ?"), so a caller has at most 2^nconds distinct texts, all
 * kept by the statement cache; every value is bound (the tenant, the
 * filters' values, limit and offset).
 */
enum store_rc store_q_filtered(struct store *st, const struct store_list_query *q,
                               store_rows_fn rows, const char *key, json_t **out)
{
	struct param p[3 + STORE_FILTERS_MAX]; /* tenant, filters, limit, offset */
	struct model_buf sql;
	size_t n = 0, i;
	json_t *arr;
	enum store_rc rc;

	*out = NULL;
	if (q->nconds > STORE_FILTERS_MAX) {
		store_seterr(st, "list: more than %d filters", STORE_FILTERS_MAX);
		return STORE_ERROR;
	}
	memset(p, 0, sizeof p);
	model_buf_init(&sql, FILTERED_SQL_MAX);
	if (model_buf_adds(&sql, q->head))
		goto too_long;
	p[n].type = P_TEXT;
	p[n++].s = q->tenant_id;
	for (i = 0; i < q->nconds; i++) {
		if (!q->conds[i].value)
			continue;
		if (model_buf_adds(&sql, q->conds[i].sql))
			goto too_long;
		p[n].type = P_TEXT;
		p[n++].s = q->conds[i].value;
	}
	if (model_buf_adds(&sql, q->order) || model_buf_adds(&sql, " LIMIT ? OFFSET ?"))
		goto too_long;
	p[n].type = P_INT;
	p[n++].i = q->limit;
	p[n].type = P_INT;
	p[n++].i = q->offset;
	arr = json_array();
	rc = rows(st, sql.data, p, n, arr);
	model_buf_release(&sql);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	*out = json_pack("{s:o}", key, arr);
	return STORE_OK;
too_long:
	model_buf_release(&sql);
	store_seterr(st, "list: query text larger than %u bytes", FILTERED_SQL_MAX);
	return STORE_ERROR;
}
