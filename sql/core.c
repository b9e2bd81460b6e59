/*
 * The store's core (store_internal.h): the ODBC connection, errors, small
 * helpers and the retrying transactions that every entity file of sql/
 * runs its SQL through (the statements themselves, their cache, binding
 * and row decoding, are in statement.c).
 *
 * Every public call runs one function inside store_tx(), which owns the
 * transaction (autocommit is off), the commit, the rollback on any failure,
 * and the bounded retry when the failure was a lock ("database is locked",
 * SQLITE_BUSY) or a PostgreSQL serialization failure/deadlock (40001,
 * 40P01). A retried transaction is re-run from its first statement, so
 * nothing half-done is ever committed and no write is lost silently: past
 * the retries the caller gets STORE_UNAVAILABLE.
 *
 * A lost connection (SQLSTATE 08xxx, 57P0x), or one whose transaction
 * state is unknown (a rollback or an autocommit switch that failed), marks
 * the store broken. Lost before the commit was sent, the call reconnects
 * once and runs again from its first statement (the database committed
 * nothing of it); lost at the commit, the call returns STORE_UNAVAILABLE
 * (the write may or may not have been committed, so it is never replayed)
 * and the next call reconnects before running (store_reconnect does it on
 * demand). A database out of space (PostgreSQL class 53, SQLite's "disk is
 * full") is STORE_UNAVAILABLE too, never retried here.
 *
 * Ordering: the tables listed newest first (scenarios, runs, audit_events)
 * carry an integer "ord" assigned by the database (AUTOINCREMENT / IDENTITY)
 * that only grows, so "newest first" is ORDER BY ord DESC and is exact even
 * when two rows share a millisecond timestamp.
 */
#include "sql/store_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sql.h>
#include <sqlext.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/text.h"

#define STORE_RETRIES 6     /* attempts of one transaction on a lock */
#define STORE_BACKOFF_MS 10 /* first back-off, doubled each attempt */
/* Total time one call may spend on a lock, busy waits of the driver
 * included (SQLite's Timeout, default 2000 ms in fcgi/config.c): no new
 * attempt starts past it. With the default DSN a locked database gives
 * STORE_UNAVAILABLE (a JSON 503) after at most about 8 + 2 s, well under
 * nginx's fastcgi_read_timeout of 60 s; 6 attempts x a 5 s busy wait made
 * the client wait 60 s for nginx's 504 instead. */
#define STORE_RETRY_BUDGET_MS 8000
#define STORE_LIST_MAX 500

static char store_open_err[512];

/*
 * LeakSanitizer hook, read only by --enable-sanitizers builds of every
 * program that links the store: psqlodbc 13.02 (Debian odbc-postgresql)
 * leaks 336 bytes inside psqlodbcw.so whenever a parameter-bound statement
 * fails (reproduced with a 20-line program that prepares, binds, executes a
 * SELECT on a missing table and frees everything). Only allocations made by
 * the driver itself are suppressed.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:psqlodbcw.so\nleak:psqlodbca.so\n";
}

/* ... and do not print the table of suppressions used at every exit. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* ---- errors ------------------------------------------------------------ */

void store_seterr(struct store *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->err, sizeof st->err, fmt, ap);
	va_end(ap);
}

const char *store_last_error(const struct store *st)
{
	if (!st)
		return store_open_err;
	return st->err;
}

static int has_text(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/*
 * Keep the first line of a driver message and cut anything that may quote a
 * value (PostgreSQL's "DETAIL: Key (x)=(value)"), so store_last_error never
 * shows a bound parameter.
 */
static void sanitize_message(char *msg)
{
	static const char *const cut[] = {"\n", "DETAIL", "Key (", "Failing row"};
	size_t i;
	char *p;

	for (i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		p = strstr(msg, cut[i]);
		if (p)
			*p = '\0';
	}
}

/* Ask the driver whether the connection is gone (SQL_ATTR_CONNECTION_DEAD,
 * ODBC 3.5; psqlodbc answers it, a driver that does not counts as alive). */
static int connection_dead(struct store *st)
{
	SQLUINTEGER dead = SQL_CD_FALSE;
	SQLRETURN r;

	if (st->dbc == SQL_NULL_HDBC)
		return 1;
	r = SQLGetConnectAttr(st->dbc, SQL_ATTR_CONNECTION_DEAD, &dead, 0, NULL);
	return SQL_SUCCEEDED(r) && dead == SQL_CD_TRUE;
}

/*
 * Record the first diagnostic of handle h and classify it. Sets st->busy
 * for a retryable conflict and st->broken for a lost connection.
 */
enum store_rc store_odbc_fail(struct store *st, SQLSMALLINT htype, SQLHANDLE h, const char *what)
{
	SQLCHAR state[6] = "";
	SQLCHAR msg[400] = "";
	SQLINTEGER native = 0;
	SQLSMALLINT len = 0;
	SQLRETURN r;
	const char *s;
	char lower[400];
	size_t i;

	r = SQLGetDiagRec(htype, h, 1, state, &native, msg, sizeof msg, &len);
	if (!SQL_SUCCEEDED(r)) {
		strcpy((char *)state, "?????");
		strcpy((char *)msg, "no diagnostic");
	}
	sanitize_message((char *)msg);
	s = (const char *)state;
	for (i = 0; msg[i] && i < sizeof lower - 1; i++)
		lower[i] = (char)tolower(msg[i]);
	lower[i] = '\0';
	store_seterr(st, "%s: [%s] %s", what, s, (const char *)msg);

	if (strncmp(s, "08", 2) == 0 || strncmp(s, "57P0", 4) == 0 ||
	    has_text(lower, "server closed the connection") ||
	    has_text(lower, "no connection to the server") ||
	    has_text(lower, "connection is not open") || has_text(lower, "could not send") ||
	    has_text(lower, "connection has been lost") || connection_dead(st)) {
		st->broken = 1;
		return STORE_UNAVAILABLE;
	}
	if (strcmp(s, "40001") == 0 || strcmp(s, "40P01") == 0 ||
	    has_text(lower, "database is locked") || has_text(lower, "database table is locked") ||
	    has_text(lower, "database schema is locked") || has_text(lower, "sqlite_busy")) {
		st->busy = 1;
		return STORE_UNAVAILABLE;
	}
	/* out of space or of the server's resources (PostgreSQL class 53,
	 * SQLite's SQLITE_FULL): the database cannot take the write now, a
	 * later one may succeed; not retried here */
	if (strncmp(s, "53", 2) == 0 || has_text(lower, "database or disk is full") ||
	    has_text(lower, "no space left on device"))
		return STORE_UNAVAILABLE;
	if (strcmp(s, "23505") == 0 || has_text(lower, "unique constraint failed") ||
	    has_text(lower, "is not unique") || has_text(lower, "must be unique") ||
	    has_text(lower, "duplicate key"))
		return STORE_CONFLICT;
	return STORE_ERROR;
}

/* ---- small helpers --------------------------------------------------------- */

/* 16 random bytes from OpenSSL as 32 lowercase hex: made here, not by the
 * database (libsqliteodbc returns no row for INSERT … RETURNING), so the same
 * SQL runs on both dialects and ids are not guessable. */
enum store_rc store_new_id(struct store *st, char out[33])
{
	unsigned char raw[16];

	if (RAND_bytes(raw, sizeof raw) != 1) {
		store_seterr(st, "RAND_bytes failed");
		return STORE_ERROR;
	}
	model_hex_encode(raw, sizeof raw, out);
	return STORE_OK;
}

/* UTC "YYYY-MM-DDTHH:MM:SS.mmmZ". */
void store_now_iso(char out[32])
{
	struct timespec ts;
	struct tm tm;
	char base[24];
	int ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	ms = (int)((ts.tv_nsec / 1000000L) % 1000);
	snprintf(out, 32, "%.19s.%03dZ", base, ms);
}

void store_iso_from_now(long long delta_ms, char out[32])
{
	struct timespec ts;
	struct tm tm;
	char base[24];
	long long ms;
	time_t sec;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L + delta_ms;
	sec = (time_t)(ms / 1000);
	gmtime_r(&sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%.19s.%03dZ", base, (int)(ms % 1000));
}

int store_iso_ms(const char *s, long long *ms)
{
	struct tm tm;
	int n = 0, frac = 0, digits = 0;
	time_t sec;

	*ms = 0;
	memset(&tm, 0, sizeof tm);
	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
		return -1;
	s += n;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 3)
				frac = frac * 10 + (*s - '0');
	if (strcmp(s, "Z") != 0)
		return -1;
	while (digits > 0 && digits < 3) {
		frac *= 10;
		digits++;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	sec = timegm(&tm);
	if (sec == (time_t)-1)
		return -1;
	*ms = (long long)sec * 1000 + frac;
	return 0;
}

int store_is_lower_hex(const char *s, size_t n)
{
	size_t i;

	if (!s || strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int store_text_ok(const char *s, size_t min, size_t max)
{
	size_t n;

	if (!s)
		return 0;
	n = strlen(s);
	return n >= min && n <= max && model_text_valid_utf8(s, n);
}

static void sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int store_clamp_limit(int limit)
{
	if (limit < 1)
		return 1;
	if (limit > STORE_LIST_MAX)
		return STORE_LIST_MAX;
	return limit;
}

/* ---- connection and transactions ----------------------------------------- */

static void st_disconnect(struct store *st)
{
	SQLHSTMT h;

	store_stmt_cache_clear(st);
	if (st->dbc != SQL_NULL_HDBC) {
		if (st->connected) {
			SQLEndTran(SQL_HANDLE_DBC, st->dbc, SQL_ROLLBACK);
			if (!SQL_SUCCEEDED(SQLDisconnect(st->dbc))) {
				/* SQLite rolled a transaction back by itself (disk
				 * full) while the driver still counts it open: the
				 * driver refuses to disconnect ("incomplete
				 * transaction") and the connection, with its file
				 * descriptors, would leak. A real transaction,
				 * rolled back, puts the two in step again. */
				if (SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, st->dbc, &h))) {
					SQLExecDirect(h, (SQLCHAR *)"BEGIN", SQL_NTS);
					SQLFreeHandle(SQL_HANDLE_STMT, h);
				}
				SQLEndTran(SQL_HANDLE_DBC, st->dbc, SQL_ROLLBACK);
				SQLDisconnect(st->dbc);
			}
		}
		SQLFreeHandle(SQL_HANDLE_DBC, st->dbc);
	}
	st->dbc = SQL_NULL_HDBC;
	st->connected = 0;
}

/* The file of SQLite's "main" database on this connection (PRAGMA
 * database_list: its third column, "" for an in-memory one) into out.
 * 1 when there is one, else 0. */
static int sqlite_main_file(struct store *st, char *out, size_t n)
{
	SQLCHAR name[64], file[1024];
	SQLLEN name_len, file_len;
	SQLHSTMT h;
	int found = 0;

	out[0] = '\0';
	if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, st->dbc, &h)))
		return 0;
	if (SQL_SUCCEEDED(SQLExecDirect(h, (SQLCHAR *)"PRAGMA database_list", SQL_NTS))) {
		while (!found && SQL_SUCCEEDED(SQLFetch(h))) {
			if (!SQL_SUCCEEDED(
			        SQLGetData(h, 2, SQL_C_CHAR, name, sizeof name, &name_len)) ||
			    !SQL_SUCCEEDED(
			        SQLGetData(h, 3, SQL_C_CHAR, file, sizeof file, &file_len)))
				break;
			if (name_len < 0 || strcmp((char *)name, "main") != 0)
				continue;
			if (file_len > 0 && (size_t)file_len < n &&
			    (size_t)file_len < sizeof file) {
				memcpy(out, file, (size_t)file_len);
				out[file_len] = '\0';
				found = 1;
			}
			break;
		}
	}
	SQLFreeHandle(SQL_HANDLE_STMT, h);
	return found;
}

/* 1 when dsn says NoCreat (its first "NoCreat=" key, any case), as
 * libsqliteodbc reads a boolean: a value starting with one of
 * "YyTt123456789". The workers connect so (fcgi/main.c): a database
 * deleted under them is an error, never a new empty file. */
static int dsn_nocreat(const char *dsn)
{
	const char *p = dsn, *end, *eq;

	while (*p) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && eq - p == 7 && strncasecmp(p, "NoCreat", 7) == 0)
			return eq + 1 < end && strchr("YyTt123456789", eq[1]) != NULL;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/*
 * When path is a symbolic link whose chain ends at a name that does not
 * exist (the file a driver opening path would create: SQLite follows
 * links), that name: the chain followed link by link, a relative link
 * against its own link's directory, at most 40 links (the kernel's limit).
 * Returns 1 with out (n bytes) set; 0 when path is not such a link, or the
 * chain cannot be followed (a loop, a name too long, an unreadable link).
 */
static int dangling_target(const char *path, char *out, size_t n)
{
	char cur[1024], link[1024], next[1024];
	const char *slash;
	struct stat sb;
	ssize_t len;
	int hops, w;

	if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return 0;
	for (hops = 0; hops <= 40; hops++) {
		if (lstat(cur, &sb) != 0) {
			if (errno != ENOENT || hops == 0)
				return 0;
			break; /* the end of the chain: not made yet */
		}
		if (!S_ISLNK(sb.st_mode))
			return 0;
		len = readlink(cur, link, sizeof link);
		if (len <= 0 || (size_t)len >= sizeof link)
			return 0;
		link[len] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			w = snprintf(next, sizeof next, "%s", link);
		else
			w = snprintf(next, sizeof next, "%.*s/%s", (int)(slash - cur), cur, link);
		if (w < 0 || (size_t)w >= sizeof next)
			return 0;
		memcpy(cur, next, (size_t)w + 1);
	}
	if (hops > 40 || strlen(cur) >= n)
		return 0;
	memcpy(out, cur, strlen(cur) + 1);
	return 1;
}

/*
 * A new SQLite database is created mode 0600 whatever the process umask:
 * it holds token hashes and every tenant's data. The driver would create
 * it with the umask (0644 under 022), and olivares-fcgi keeps the umask it
 * was started with (a global one would reach the runner's jails and
 * bundles). So when the DSN names a file that does not exist, it is
 * created here, empty (SQLite takes an empty file for a new database),
 * O_EXCL, then fchmod 0600 (a umask of 0277 would otherwise leave it
 * read-only); SQLite gives its -wal and -shm the database file's mode.
 * A symbolic link to a file that does not exist yet (a data directory
 * pointed elsewhere) gets that file created so, at the end of its chain.
 * An existing file is never touched: its mode is the operator's. A URI
 * ("file:"), ":memory:" or a braced value is left to the driver, and so
 * is a file that cannot be created (the driver's error says why); with
 * NoCreat nothing is created.
 * Returns 0, or -1 with st's error when the new file cannot be made
 * private (it is removed again).
 */
static int sqlite_create_private(struct store *st)
{
	char file[1024], target[1024];
	const char *made = file;
	int fd;

	if (!store_sqlite_file(st->dsn, file, sizeof file) || dsn_nocreat(st->dsn))
		return 0;
	if (strncasecmp(file, "file:", 5) == 0 || strcmp(file, ":memory:") == 0 || file[0] == '{')
		return 0;
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	/* O_EXCL never follows a symbolic link, but SQLite does: a link to a
	 * file not made yet would be created by the driver with the umask */
	if (fd < 0 && errno == EEXIST && dangling_target(file, target, sizeof target)) {
		made = target;
		fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	}
	if (fd < 0)
		return 0;
	if (fchmod(fd, 0600) != 0) {
		store_seterr(st, "cannot make the new database file %s private: %s", made,
		             strerror(errno));
		close(fd);
		unlink(made);
		return -1;
	}
	close(fd);
	return 0;
}

static enum store_rc st_connect(struct store *st)
{
	SQLCHAR dbms[64] = "";
	SQLSMALLINT len = 0;
	SQLRETURN r;
	enum store_rc rc;

	st->broken = 0;
	r = SQLAllocHandle(SQL_HANDLE_DBC, st->env, &st->dbc);
	if (!SQL_SUCCEEDED(r)) {
		st->dbc = SQL_NULL_HDBC;
		store_seterr(st, "cannot allocate an ODBC connection handle");
		return STORE_UNAVAILABLE;
	}
	SQLSetConnectAttr(st->dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)(SQLLEN)10, 0);
	if (sqlite_create_private(st)) {
		rc = STORE_UNAVAILABLE;
		goto fail;
	}
	r = SQLDriverConnect(st->dbc, NULL, (SQLCHAR *)st->dsn, SQL_NTS, NULL, 0, NULL,
	                     SQL_DRIVER_NOPROMPT);
	if (!SQL_SUCCEEDED(r)) {
		store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc, "connect");
		rc = STORE_UNAVAILABLE;
		goto fail;
	}
	st->connected = 1;
	r = SQLGetInfo(st->dbc, SQL_DBMS_NAME, dbms, sizeof dbms, &len);
	if (!SQL_SUCCEEDED(r)) {
		store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc, "SQLGetInfo(SQL_DBMS_NAME)");
		rc = STORE_UNAVAILABLE;
		goto fail;
	}
	if (strncasecmp((char *)dbms, "SQLite", 6) == 0) {
		st->dialect = DIALECT_SQLITE;
	} else if (strncasecmp((char *)dbms, "PostgreSQL", 10) == 0) {
		st->dialect = DIALECT_POSTGRES;
	} else {
		store_seterr(st, "unsupported database \"%s\" (SQLite or PostgreSQL expected)",
		             (char *)dbms);
		rc = STORE_UNAVAILABLE;
		goto fail;
	}
	/* the file the driver opened (or created), as SQLite names it: the
	 * one this connection writes to, whatever the DSN's text (asked while
	 * the connection still commits each statement: no transaction is
	 * left open) */
	st->have_file = 0;
	if (st->dialect == DIALECT_SQLITE && sqlite_main_file(st, st->file, sizeof st->file)) {
		struct stat sb;

		if (stat(st->file, &sb) == 0) {
			st->file_dev = sb.st_dev;
			st->file_ino = sb.st_ino;
			st->have_file = 1;
		}
	}
	r = SQLSetConnectAttr(st->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
	if (!SQL_SUCCEEDED(r)) {
		store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc, "autocommit off");
		rc = STORE_UNAVAILABLE;
		goto fail;
	}
	st->autocommit = 0;
	return STORE_OK;
fail:
	st_disconnect(st);
	return rc;
}

int store_sqlite_file(const char *dsn, char *out, size_t n)
{
	const char *p = dsn, *end, *eq;
	size_t klen, vlen;
	int is_sqlite = 0;

	out[0] = '\0';
	while (*p) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq) {
			klen = (size_t)(eq - p);
			vlen = (size_t)(end - eq - 1);
			/* "SQLite3" or "{SQLite3}" */
			if (klen == 6 && strncasecmp(p, "Driver", 6) == 0 &&
			    ((vlen >= 6 && strncasecmp(eq + 1, "SQLite", 6) == 0) ||
			     (vlen >= 7 && strncasecmp(eq + 1, "{SQLite", 7) == 0)))
				is_sqlite = 1;
			/* the first one, as the driver takes it */
			if (klen == 8 && strncasecmp(p, "Database", 8) == 0 && vlen < n &&
			    !out[0]) {
				memcpy(out, eq + 1, vlen);
				out[vlen] = '\0';
			}
		}
		p = *end ? end + 1 : end;
	}
	if (!is_sqlite)
		out[0] = '\0';
	return is_sqlite && out[0];
}

/*
 * SQLite: is the file at the path still the one the connection opened?
 * STORE_OK when it is (or when nothing is known of it); a file replaced
 * (a backup restored with mv) marks the connection broken, so the call
 * reconnects to the file now there; a file gone is STORE_UNAVAILABLE
 * without reconnecting, which would create an empty database in its place
 * and acknowledge writes nobody will find.
 */
static enum store_rc check_file(struct store *st)
{
	struct stat sb;

	if (!st->have_file)
		return STORE_OK;
	if (stat(st->file, &sb) != 0) {
		store_seterr(st, "the database file %s is gone (%s)", st->file, strerror(errno));
		return STORE_UNAVAILABLE;
	}
	if (sb.st_dev != st->file_dev || sb.st_ino != st->file_ino)
		st->broken = 1;
	return STORE_OK;
}

enum store_rc store_open(const char *dsn, struct store **out)
{
	struct store *st;
	SQLRETURN r;
	enum store_rc rc;

	*out = NULL;
	store_open_err[0] = '\0';
	if (!dsn || !*dsn) {
		snprintf(store_open_err, sizeof store_open_err, "empty connection string");
		return STORE_UNAVAILABLE;
	}
	st = model_xcalloc(1, sizeof *st);
	st->dbc = SQL_NULL_HDBC;
	st->dsn = model_xstrdup(dsn);
	r = SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &st->env);
	if (!SQL_SUCCEEDED(r)) {
		snprintf(store_open_err, sizeof store_open_err,
		         "cannot allocate the ODBC environment");
		free(st->dsn);
		free(st);
		return STORE_UNAVAILABLE;
	}
	SQLSetEnvAttr(st->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
	rc = st_connect(st);
	if (rc) {
		snprintf(store_open_err, sizeof store_open_err, "%s", st->err);
		store_close(st);
		return rc;
	}
	*out = st;
	return STORE_OK;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	st_disconnect(st);
	if (st->env != SQL_NULL_HENV)
		SQLFreeHandle(SQL_HANDLE_ENV, st->env);
	free(st->dsn);
	free(st);
}

enum store_rc store_reconnect(struct store *st)
{
	st_disconnect(st);
	return st_connect(st);
}

const char *store_dialect(const struct store *st)
{
	return st->dialect == DIALECT_SQLITE ? "sqlite" : "postgres";
}

static enum store_rc end_tran(struct store *st, SQLSMALLINT how)
{
	SQLRETURN r;

	r = SQLEndTran(SQL_HANDLE_DBC, st->dbc, how);
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc,
		                       how == SQL_COMMIT ? "commit" : "rollback");
	return STORE_OK;
}

/* A pseudo-random number of milliseconds in [0, max): not security relevant. */
static long jitter_ms(long max)
{
	struct timespec ts;
	unsigned long x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15UL;
	x ^= x >> 29;
	return max > 0 ? (long)(x % (unsigned long)max) : 0;
}

/* Switch the connection's autocommit mode, only when it changes (no
 * transaction is open at either switch: the driver sends nothing). */
static enum store_rc set_autocommit(struct store *st, int on)
{
	SQLRETURN r;

	if (st->autocommit == on)
		return STORE_OK;
	r = SQLSetConnectAttr(st->dbc, SQL_ATTR_AUTOCOMMIT,
	                      (SQLPOINTER)(SQLULEN)(on ? SQL_AUTOCOMMIT_ON : SQL_AUTOCOMMIT_OFF),
	                      0);
	if (!SQL_SUCCEEDED(r))
		return store_odbc_fail(st, SQL_HANDLE_DBC, st->dbc,
		                       on ? "autocommit on" : "autocommit off");
	st->autocommit = on;
	return STORE_OK;
}

typedef enum store_rc (*store_tx_fn)(struct store *st, void *arg);

/*
 * Run fn in a transaction: commit on STORE_OK, roll back otherwise. When the
 * failure is a lock or serialization conflict, roll back and run fn again
 * from the start (up to STORE_RETRIES attempts, back-off doubling from
 * STORE_BACKOFF_MS, no attempt started past STORE_RETRY_BUDGET_MS), then
 * give STORE_UNAVAILABLE. fn must be re-runnable:
 * it resets its outputs at its start.
 *
 * With write = 0 (store_read) fn only reads and runs in autocommit mode:
 * each of its SELECTs is its own statement-level snapshot, and the BEGIN
 * and COMMIT that an explicit transaction costs on every call (two more
 * statements on SQLite, two more round trips on PostgreSQL) are saved.
 * Only functions whose reads need no common snapshot use it: one SELECT,
 * or reads of rows that are written together and never changed (a run and
 * its append-only outputs).
 */
static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum store_rc call_counted(struct store *st, store_tx_fn fn, void *arg, int write)
{
	enum store_rc rc;
	int attempt, committing, reconnected = 0;
	long backoff = STORE_BACKOFF_MS;
	long long start = mono_ms();
	char first_err[sizeof st->err];

	if (check_file(st) != STORE_OK)
		return STORE_UNAVAILABLE;
	if (st->broken || !st->connected) {
		st_disconnect(st);
		rc = st_connect(st);
		if (rc)
			return STORE_UNAVAILABLE;
		reconnected = 1;
	}
	for (attempt = 1;; attempt++) {
		st->busy = 0;
		st->err[0] = '\0';
		committing = 0;
		rc = set_autocommit(st, !write);
		/* the driver's idea of the transaction is not the database's
		 * (SQLite rolled back by itself): start again on a new one */
		if (rc != STORE_OK)
			st->broken = 1;
		if (rc == STORE_OK)
			rc = fn(st, arg);
		if (rc == STORE_OK && write && st->quota_limit > 0)
			rc = store_quota_guard_check(st);
		if (rc == STORE_OK && write) {
			committing = 1;
			rc = end_tran(st, SQL_COMMIT);
		}
		if (rc == STORE_OK)
			return STORE_OK;
		if (!st->broken && write && !st->autocommit) {
			/* a rollback that fails leaves the connection in a state
			 * nobody knows: reconnect; the first error is the one
			 * worth reporting */
			memcpy(first_err, st->err, sizeof first_err);
			if (end_tran(st, SQL_ROLLBACK) != STORE_OK) {
				st->broken = 1;
				memcpy(st->err, first_err, sizeof first_err);
			}
		}
		/* A connection lost (or reset above) before the commit was
		 * sent: the database committed nothing of this call, so it is
		 * run again once on a new connection (a connection that went
		 * stale while a worker waited for a run, a database that
		 * restarted). Lost at the commit, the outcome is unknown and
		 * nothing is replayed. */
		if (st->broken && !committing && !reconnected) {
			reconnected = 1;
			st_disconnect(st);
			if (st_connect(st) != STORE_OK)
				return STORE_UNAVAILABLE;
			st->stats.retries++;
			continue;
		}
		if (st->broken)
			return STORE_UNAVAILABLE;
		if (!st->busy)
			return rc;
		if (attempt >= STORE_RETRIES ||
		    mono_ms() - start + 2 * backoff >= STORE_RETRY_BUDGET_MS) {
			store_seterr(st, "database busy: gave up after %d attempts in %lld ms",
			             attempt, mono_ms() - start);
			return STORE_UNAVAILABLE;
		}
		/* jitter (from the clock and the pid, so forked workers differ)
		 * spreads out writers that collided */
		sleep_ms(backoff + jitter_ms(backoff));
		backoff *= 2;
		st->stats.retries++;
	}
}

/* call_counted, counting its STORE_UNAVAILABLE answers for store_stats */
enum store_rc store_call(struct store *st, store_tx_fn fn, void *arg, int write)
{
	enum store_rc rc = call_counted(st, fn, arg, write);

	/* a guard holds one write */
	if (write)
		st->quota_limit = 0;

	if (rc == STORE_UNAVAILABLE)
		st->stats.unavailable++;
	return rc;
}

void store_stats(const struct store *st, struct store_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (st)
		*out = st->stats;
}

/* A transaction that may write (store_call above). */
enum store_rc store_tx(struct store *st, store_tx_fn fn, void *arg)
{
	return store_call(st, fn, arg, 1);
}

/* A read without an explicit transaction (store_call above). */
enum store_rc store_read(struct store *st, store_tx_fn fn, void *arg)
{
	return store_call(st, fn, arg, 0);
}

/*
 * store_call for a function that builds its answer in *result (a member of
 * its arg, reset by fn at its start): the answer goes to *out on success
 * (or is dropped when out is NULL); on failure what fn left is dropped and
 * *out is NULL, so a caller never gets half an answer.
 */
static enum store_rc call_json(struct store *st, store_tx_fn fn, void *arg, int write,
                               json_t **result, json_t **out)
{
	enum store_rc rc;

	rc = store_call(st, fn, arg, write);
	if (rc) {
		json_decref(*result);
		*result = NULL;
	}
	if (out)
		*out = *result;
	else
		json_decref(*result);
	*result = NULL;
	return rc;
}

enum store_rc store_read_json(struct store *st, store_tx_fn fn, void *arg, json_t **result,
                              json_t **out)
{
	return call_json(st, fn, arg, 0, result, out);
}

enum store_rc store_tx_json(struct store *st, store_tx_fn fn, void *arg, json_t **result,
                            json_t **out)
{
	return call_json(st, fn, arg, 1, result, out);
}

struct get_arg {
	store_get_fn read;
	const char *tenant_id;
	const char *id;
	json_t *out;
};

static enum store_rc tx_get(struct store *st, void *arg)
{
	struct get_arg *a = arg;

	json_decref(a->out);
	a->out = NULL;
	return a->read(st, a->tenant_id, a->id, &a->out);
}

enum store_rc store_get(struct store *st, store_get_fn reader, const char *tenant_id,
                        const char *id, json_t **out)
{
	struct get_arg a = {.read = reader, .tenant_id = tenant_id, .id = id};

	*out = NULL;
	if (!tenant_id || !id)
		return STORE_NOT_FOUND;
	return store_read_json(st, tx_get, &a, &a.out, out);
}
