/*
 * One log line on stderr (log.h).
 */
#include "fcgi/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void olv_log_line(const char *prog, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), "%s[%ld]: ", prog, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	n = (int)strlen(line);
	if ((size_t)n < sizeof(line) - 1) {
		line[n++] = '\n';
	} else {
		line[sizeof(line) - 2] = '\n';
		n = (int)sizeof(line) - 1;
	}
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
