/*
 * The runner's error shape (runner/error.h).
 */
#include "runner/error.h"

#include <stdio.h>
#include <string.h>

int runner_error_set(struct runner_error *err, enum runner_err kind, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

int runner_error_append(struct runner_error *err, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err)
		return -1;
	len = strlen(err->message);
	va_start(ap, fmt);
	vsnprintf(err->message + len, sizeof(err->message) - len, fmt, ap);
	va_end(ap);
	return -1;
}
