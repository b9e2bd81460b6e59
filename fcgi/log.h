#ifndef OLIVARES_FCGI_LOG_H
#define OLIVARES_FCGI_LOG_H
/**
 * One log line on stderr, shared by the programs that log this way
 * (olivares-fcgi's http_log, olivares-executor's executor_log).
 */
#include <stdarg.h>

#include <stddef.h>

/**
 * Copy the NUL-terminated in to out (n bytes, n > 0; always
 * NUL-terminated) with every control escaped: a C0 control or DEL as
 * \xHH, a C1 control (U+0080..U+009F) as \uHHHH, a byte that starts no
 * valid UTF-8 sequence as \xHH; the rest as it is. Cut at a whole
 * character or escape when out is full. Returns the bytes written (the
 * NUL not counted).
 */
size_t olv_log_escape(const char *in, char *out, size_t n);

/**
 * Write "<prog>[<pid>]: " and the message fmt/ap as one line (cut at
 * 1 KiB, a newline added) with a single write, so the lines of concurrent
 * processes sharing one log file do not interleave. The message is
 * escaped with olv_log_escape: text from a request (its path) or from
 * another system (a store's error) can neither start a line of its own
 * nor send a terminal escape. Errors are ignored: there is nowhere left
 * to report them.
 */
void olv_log_line(const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
