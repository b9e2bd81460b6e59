#ifndef OLIVARES_FCGI_LOG_H
#define OLIVARES_FCGI_LOG_H
/**
 * One log line on stderr, shared by the programs that log this way
 * (olivares-fcgi's http_log, olivares-executor's executor_log).
 */
#include <stdarg.h>

/**
 * Write "<prog>[<pid>]: " and the message fmt/ap as one line (cut at
 * 1 KiB, a newline added) with a single write, so the lines of concurrent
 * processes sharing one log file do not interleave. Errors are ignored:
 * there is nowhere left to report them.
 */
void olv_log_line(const char *prog, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
