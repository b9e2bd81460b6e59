#ifndef OLIVARES_FCGI_LOG_H
#define OLIVARES_FCGI_LOG_H
/**
 * Structured log lines on stderr, shared by the programs that log this way
 * (olivares-fcgi's http_log, olivares-executor's executor_log): one JSON
 * object per line, written with a single write(2) so the lines of
 * concurrent processes sharing one log file do not interleave.
 *
 * Every line holds "time" (UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ"), "level"
 * (olv_log_level_name), "prog", "pid", "request_id" while a request is
 * served (olv_log_set_request_id), "msg", then the caller's own fields.
 * The text is encoded by jansson with JSON_ENSURE_ASCII, and DEL as
 * \u007F: no control character (C0, DEL, C1) and no byte above 0x7e is
 * in a line as itself, so text from a request or from another system can
 * neither start a line of its own nor send a terminal escape. Bytes that
 * are not UTF-8 are kept as the text "\xHH".
 */
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

/** The longest line written, its newline included: PIPE_BUF, so a line
 * is written whole into a pipe too (a journal's stderr). */
#define OLV_LOG_LINE_MAX 4096

/** The longest message kept before it is encoded (bytes of text). */
#define OLV_LOG_MSG_MAX 2048

/** Where the time's 24 characters start in every encoded line: right after
 * {"time":" (olv_log_encode puts it first). */
#define OLV_LOG_TIME_OFFSET 9

/** The longest request id (olv_log_set_request_id). */
#define OLV_LOG_REQUEST_ID_MAX 64

/** How bad an event is, as the "level" field says it. */
enum olv_log_level {
	OLV_LOG_ERROR = 0, /* something failed: a store error, a reply not written */
	OLV_LOG_WARNING,   /* something is wrong but works: configuration warnings */
	OLV_LOG_INFO       /* what happened: start, stop, one line per request */
};

/** "error", "warning" or "info". */
const char *olv_log_level_name(enum olv_log_level level);

/**
 * *ts (CLOCK_REALTIME) as "YYYY-MM-DDTHH:MM:SS.mmmZ" into out (25 bytes,
 * NUL-terminated). Async-signal-safe: arithmetic only, no locale, no time
 * zone file (a signal handler stamps its pre-made line with it).
 */
void olv_log_time(const struct timespec *ts, char out[25]);

/**
 * A new JSON string (a new reference; NULL only when out of memory) of
 * the NUL-terminated text s cut to at most max bytes at a whole character: valid UTF-8 as it is (the encoder escapes its controls), each
 * byte that is not part of a valid sequence (stray, truncated, overlong,
 * surrogate, above U+10FFFF) as the four characters "\xHH". For a field
 * from outside (a request's path) that jansson would refuse as it is.
 */
json_t *olv_log_text(const char *s, size_t max);

/**
 * Encode one line into out (n bytes, n >= 256): the fields of this header's
 * comment from time (25 bytes, olv_log_time), prog, pid, level, request_id
 * (NULL or "" for none; a string of [A-Za-z0-9._:-]), msg (any bytes, cut
 * at OLV_LOG_MSG_MAX), then every member of fields (an object, borrowed,
 * may be NULL; a member named as a core field is left out). The line ends
 * in "\n" and is NUL-terminated; a line that would not fit in n - 1 bytes has
 * its msg shortened (and "truncated":true), then its fields dropped.
 * Returns the line's length (the NUL not counted), or 0 when jansson
 * failed (nothing usable in out).
 */
size_t olv_log_encode(char *out, size_t n, const char time[25], const char *prog, long pid,
                      enum olv_log_level level, const char *request_id, const char *msg,
                      json_t *fields);

/**
 * The request id every following line of this process carries (a worker
 * serves one request at a time), copied; NULL or "" for none. An id longer
 * than OLV_LOG_REQUEST_ID_MAX is cut.
 */
void olv_log_set_request_id(const char *id);

/** The request id set by olv_log_set_request_id, "" when none. */
const char *olv_log_request_id(void);

/**
 * Write one line (olv_log_encode, the time now, this process's pid and
 * request id) with the message fmt/ap and fields (borrowed, may be NULL).
 * Errors are ignored: there is nowhere left to report them.
 */
void olv_log_vfields(const char *prog, enum olv_log_level level, json_t *fields, const char *fmt,
                     va_list ap) __attribute__((format(printf, 4, 0)));

/**
 * One line (olv_log_vfields, no fields) from code that both olivares-fcgi
 * and olivares-executor link (the runner's fork server, the preflight
 * answers): "prog" is the program's own name (program_invocation_short_name).
 */
void olv_log(enum olv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** olv_log_vfields without fields. */
void olv_log_line(const char *prog, enum olv_log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
