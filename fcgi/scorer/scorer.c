/*
 * Adapter choice from the configuration (scorer.h).
 */
#include "fcgi/scorer/scorer.h"

#include <stdio.h>
#include <string.h>

#include "fcgi/scorer/scorer_builtin.h"
#include "fcgi/scorer/scorer_exec.h"

#define BUILTIN_PREFIX "builtin:"
#define EXEC_PREFIX "exec:"

/* 1 if s holds a byte other than a space */
static int has_word(const char *s)
{
	for (; *s; s++)
		if (*s != ' ')
			return 1;
	return 0;
}

int http_scorer_spec_valid(const char *spec)
{
	if (!spec)
		return 0;
	if (strcmp(spec, "none") == 0)
		return 1;
	if (strncmp(spec, BUILTIN_PREFIX, strlen(BUILTIN_PREFIX)) == 0)
		return spec[strlen(BUILTIN_PREFIX)] != '\0';
	if (strncmp(spec, EXEC_PREFIX, strlen(EXEC_PREFIX)) == 0)
		return has_word(spec + strlen(EXEC_PREFIX));
	return 0;
}

static void set_none(struct model_scorer *s)
{
	s->ops = &model_scorer_none;
	s->ctx = NULL;
}

int http_scorer_from_config(const char *spec, int timeout_ms, struct model_scorer *out,
                            struct model_reason *err)
{
	int rc;

	set_none(out);
	if (err)
		err->text[0] = '\0';
	if (!http_scorer_spec_valid(spec))
		return model_reason_set(
		    err, "[scorer] adapter must be none, builtin:<dir> or exec:<command>");
	if (timeout_ms < HTTP_SCORER_TIMEOUT_MIN_MS || timeout_ms > HTTP_SCORER_TIMEOUT_MAX_MS)
		return model_reason_set(err, "[scorer] timeout_ms must be %d..%d",
		                        HTTP_SCORER_TIMEOUT_MIN_MS, HTTP_SCORER_TIMEOUT_MAX_MS);
	if (strcmp(spec, "none") == 0)
		return 0;
	if (strncmp(spec, BUILTIN_PREFIX, strlen(BUILTIN_PREFIX)) == 0)
		rc = http_scorer_builtin_new(spec + strlen(BUILTIN_PREFIX), out, err);
	else
		rc = http_scorer_exec_new(spec + strlen(EXEC_PREFIX), timeout_ms, out, err);
	if (rc)
		set_none(out);
	return rc;
}

void http_scorer_release(struct model_scorer *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s->ctx);
	set_none(s);
}
