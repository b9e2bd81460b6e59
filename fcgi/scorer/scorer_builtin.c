/*
 * The builtin reference scorer adapter (scorer_builtin.h): suite files in
 * one directory, evaluated by model/suite.c.
 */
#include "fcgi/scorer/scorer_builtin.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/suite.h"

struct builtin {
	char *dir; /* realpath of the suites directory, no trailing slash */
};

/* 1 when path is dir itself or lies below it (both canonical). */
static int inside(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Read the regular file at path (canonical), suite's file, into b. Returns
 * 0, or -1 with *why naming the suite. O_NOFOLLOW: path was canonical when
 * resolved; a symlink swapped in since is refused, not followed. */
static int read_capped(const char *path, const char *suite, struct model_buf *b,
                       struct model_reason *why)
{
	char chunk[65536];
	struct stat st;
	ssize_t r;
	int fd;
	int rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return model_reason_set(why, "suite %s: cannot open: %s", suite, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		model_reason_set(why, "suite %s: not a regular file", suite);
		goto out;
	}
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			model_reason_set(why, "suite %s: cannot read: %s", suite, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (model_buf_add(b, chunk, (size_t)r)) {
			model_reason_set(why, "suite %s: larger than %d bytes", suite,
			                 HTTP_SCORER_SUITE_MAX_BYTES);
			goto out;
		}
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int builtin_score(void *ctx, const char *suite, json_t *outputs,
                         struct model_score_result *res)
{
	struct builtin *bi = ctx;
	struct model_buf b;
	struct model_error e;
	json_error_t jerr;
	json_t *doc = NULL;
	char *path = NULL;
	char *real = NULL;
	struct model_reason why;
	size_t len;
	int rc = -1;

	model_score_result_clear(res);
	model_buf_init(&b, HTTP_SCORER_SUITE_MAX_BYTES);
	/* The port passes checked names; the adapter does not rely on it. */
	if (!model_suite_name_valid(suite)) {
		snprintf(res->reason, sizeof(res->reason), "invalid suite name");
		goto out;
	}
	len = strlen(bi->dir) + 1 + strlen(suite) + sizeof(".json");
	path = model_xmalloc(len);
	snprintf(path, len, "%s/%s.json", bi->dir, suite);
	real = realpath(path, NULL);
	if (!real) {
		if (errno == ENOENT || errno == ENOTDIR)
			snprintf(res->reason, sizeof(res->reason), "unknown suite %s", suite);
		else
			snprintf(res->reason, sizeof(res->reason), "suite %s: %s", suite,
			         strerror(errno));
		goto out;
	}
	if (!inside(bi->dir, real)) {
		snprintf(res->reason, sizeof(res->reason),
		         "suite %s is outside the suites directory", suite);
		goto out;
	}
	if (read_capped(real, suite, &b, &why)) {
		snprintf(res->reason, sizeof(res->reason), "%s", why.text);
		goto out;
	}
	doc = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(res->reason, sizeof(res->reason),
		         "suite %s is not valid JSON: %s (line %d)", suite, jerr.text, jerr.line);
		goto out;
	}
	memset(&e, 0, sizeof(e));
	if (model_suite_check(doc, &e)) {
		snprintf(res->reason, sizeof(res->reason), "invalid suite %s: %s%s%s", suite,
		         e.field, e.field[0] ? ": " : "", e.message);
		goto out;
	}
	rc = model_suite_evaluate(doc, outputs, res);
out:
	json_decref(doc);
	free(real);
	free(path);
	model_buf_release(&b);
	if (rc)
		res->scored = 0;
	return rc;
}

static void builtin_destroy(void *ctx)
{
	struct builtin *bi = ctx;

	if (!bi)
		return;
	free(bi->dir);
	free(bi);
}

static const struct model_scorer_ops builtin_ops = {
    .name = "builtin",
    .score = builtin_score,
    .destroy = builtin_destroy,
};

int http_scorer_builtin_new(const char *dir, struct model_scorer *out, struct model_reason *err)
{
	struct builtin *bi;
	struct stat st;
	char *real;

	real = realpath(dir, NULL);
	if (!real)
		return model_reason_set(err, "builtin scorer: suites directory %s: %s", dir,
		                        strerror(errno));
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		model_reason_set(err, "builtin scorer: %s is not a directory", dir);
		free(real);
		return -1;
	}
	bi = model_xcalloc(1, sizeof(*bi));
	bi->dir = real;
	out->ops = &builtin_ops;
	out->ctx = bi;
	return 0;
}
