/*
 * olivares-runner: executes one run spec (model/runspec.h) and exits.
 *
 * Order matters, and is the guarantee: (1) drop every inherited descriptor
 * above stderr and the whole environment, (2) pick the backend and run its
 * preflight, (3) read the spec from stdin (at most 8 MiB) and validate its
 * shape, (4) hand it to the backend, which confines the process before the
 * first step, (5) release the spec, (6) write the summary line.
 *
 * Exit status (model/runspec.h): 0 when a summary line was written, 1 when
 * it could not be, 2 on a usage error (no summary). An unknown backend, a
 * failed preflight, an oversize or malformed spec all still produce a
 * summary with status "failed", isolated false and the reason, and exit 0:
 * the worker records that reason instead of guessing from an exit code.
 *
 * destroyed is true only when a spec was parsed and every byte of it (steps,
 * mocks, outputs) has been released before the summary is written; a run
 * that never got a spec (unknown backend, unreadable spec) reports false:
 * there was nothing to attest.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/buf.h"
#include "model/runspec.h"
#include "runner/backend.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define RUNNER_ID MODEL_RUNNER_NAME "/" PACKAGE_VERSION
/* The worker sends at most a 1 MiB scenario; 8 MiB leaves room for JSON
 * escaping and is still a hard bound on what the runner holds. */
#define SPEC_MAX_BYTES (8u * 1024u * 1024u)

static const struct runner_backend *const backends[] = {
    &runner_backend_inproc_mock,
    NULL,
};

static const struct runner_backend *backend_find(const char *name)
{
	size_t i;

	for (i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

static void usage(FILE *f)
{
	const char *const *op;
	size_t i;

	fprintf(f,
	        "usage: %s --backend NAME < spec.json\n"
	        "       %s --backend NAME --no-seccomp < spec.json   (test aid)\n"
	        "       %s --probe OP [--backend NAME]\n"
	        "       %s --help | --version\n\n"
	        "Runs one sandbox run spec (JSON on stdin) and writes one JSON line per\n"
	        "step, then a summary line, on stdout. Backends:",
	        MODEL_RUNNER_NAME, MODEL_RUNNER_NAME, MODEL_RUNNER_NAME, MODEL_RUNNER_NAME);
	for (i = 0; backends[i]; i++)
		fprintf(f, " %s", backends[i]->name);
	fprintf(f, "\n\n--probe OP is a self-test of the confinement: it installs the\n"
	           "backend's filter exactly as a run does, tries OP and prints\n"
	           "{\"type\":\"probe\",\"op\":OP,\"allowed\":bool,\"errno\":NAME|null}.\n"
	           "OP is one of:");
	for (op = runner_probe_ops; *op; op++)
		fprintf(f, " %s", *op);
	fprintf(f,
	        " (unlisted: a call outside the allowlist, which kills the runner with SIGSYS).\n"
	        "\n--no-seccomp runs without the filter and reports isolated false: a\n"
	        "test aid for valgrind, which cannot run a seccomp-filtered process.\n");
}

/* Descriptors above stderr are none of the runner's business: whatever the
 * parent forgot to mark close-on-exec dies here. */
static void close_inherited(void)
{
	long max;
	long fd;

	if (close_range(3, ~0U, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		close((int)fd);
}

/* A printable copy of an untrusted name for a reason string. */
static void printable(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

/* Read stdin to EOF into b. Returns 0, -1 on a read error (errno set), or
 * 1 when the spec is over the cap. */
static int read_spec(struct model_buf *b)
{
	char chunk[65536];
	ssize_t r;

	for (;;) {
		r = read(0, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		if (model_buf_add(b, chunk, (size_t)r) != 0)
			return 1;
	}
}

static int only_keys(json_t *obj, const char *const *allowed, const char **bad)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach(obj, k, v)
	{
		(void)v;
		for (i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], k) == 0)
				break;
		if (!allowed[i]) {
			*bad = k;
			return -1;
		}
	}
	return 0;
}

/* Shape check of model/runspec.h. Nothing else may ride along: no id, no
 * tenant, no token. An absent "variant" is null, absent "mocks" is []. */
static int spec_validate(json_t *root, struct runner_spec *spec, char *why, size_t n)
{
	static const char *const top_keys[] = {"variant", "steps", "mocks", NULL};
	static const char *const step_keys[] = {"key", "input", NULL};
	static const char *const mock_keys[] = {"resource", "response", "variant", NULL};
	const char *bad = NULL;
	json_t *v;
	json_t *item;
	size_t i;

	if (!json_is_object(root)) {
		snprintf(why, n, "the spec is not a JSON object");
		return -1;
	}
	if (only_keys(root, top_keys, &bad) != 0) {
		snprintf(why, n, "unknown field \"%.64s\"", bad);
		return -1;
	}
	v = json_object_get(root, "variant");
	if (v && !json_is_null(v) && !json_is_string(v)) {
		snprintf(why, n, "variant must be a string or null");
		return -1;
	}
	spec->variant = json_is_string(v) ? json_string_value(v) : NULL;

	spec->steps = json_object_get(root, "steps");
	if (!json_is_array(spec->steps)) {
		snprintf(why, n, "steps must be an array");
		return -1;
	}
	json_array_foreach(spec->steps, i, item)
	{
		if (!json_is_object(item) || only_keys(item, step_keys, &bad) != 0 ||
		    !json_is_string(json_object_get(item, "key")) ||
		    !json_is_string(json_object_get(item, "input"))) {
			snprintf(why, n, "steps[%zu] must be {\"key\": string, \"input\": string}",
			         i);
			return -1;
		}
	}

	if (!json_object_get(root, "mocks"))
		json_object_set_new(root, "mocks", json_array());
	spec->mocks = json_object_get(root, "mocks");
	if (!json_is_array(spec->mocks)) {
		snprintf(why, n, "mocks must be an array");
		return -1;
	}
	json_array_foreach(spec->mocks, i, item)
	{
		v = json_object_get(item, "variant");
		if (!json_is_object(item) || only_keys(item, mock_keys, &bad) != 0 ||
		    !json_is_string(json_object_get(item, "resource")) ||
		    !json_is_string(json_object_get(item, "response")) ||
		    (v && !json_is_null(v) && !json_is_string(v))) {
			snprintf(why, n,
			         "mocks[%zu] must be {\"resource\": string, \"response\": string, "
			         "\"variant\"?: string|null}",
			         i);
			return -1;
		}
	}
	spec->root = root;
	return 0;
}

/* The reason as JSON; a reason that quotes a truncated piece of the spec
 * may have cut a UTF-8 sequence, so fall back to a printable copy. */
static json_t *reason_json(const char *reason)
{
	char safe[512];
	json_t *j;

	if (!reason[0])
		return json_null();
	j = json_string(reason);
	if (j)
		return j;
	printable(safe, sizeof(safe), reason);
	return json_string(safe);
}

static int write_summary(const char *backend, const struct runner_summary *sum)
{
	json_t *line;
	int rc = -1;

	line = json_pack("{s:s, s:s, s:s, s:b, s:b, s:s, s:I, s:I, s:I, s:o}", "type", "summary",
	                 "runner", RUNNER_ID, "backend", backend, "isolated", sum->isolated,
	                 "destroyed", sum->destroyed, "status", sum->status, "steps_total",
	                 (json_int_t)sum->steps_total, "steps_ok", (json_int_t)sum->steps_ok,
	                 "steps_error", (json_int_t)sum->steps_error, "reason",
	                 reason_json(sum->reason));
	if (!line)
		goto out;
	if (json_dumpf(line, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0)
		goto out;
	rc = 0;
out:
	json_decref(line);
	return rc;
}

static void fail(struct runner_summary *sum, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct runner_summary *sum, const char *fmt, ...)
{
	va_list ap;

	sum->status = "failed";
	sum->isolated = 0;
	va_start(ap, fmt);
	vsnprintf(sum->reason, sizeof(sum->reason), fmt, ap);
	va_end(ap);
}

/* Parse, validate and run; the spec and everything derived from it live in
 * this call only and are released before it returns. */
static void run_spec(const struct runner_backend *be, int unconfined, struct runner_summary *sum)
{
	struct model_buf raw;
	struct runner_spec spec;
	json_error_t jerr;
	json_t *root = NULL;
	char why[384];
	int r;

	memset(&spec, 0, sizeof(spec));
	model_buf_init(&raw, SPEC_MAX_BYTES);
	r = read_spec(&raw);
	if (r < 0) {
		fail(sum, "cannot read the run spec: %s", strerror(errno));
		goto out;
	}
	if (r > 0) {
		fail(sum, "run spec over %u bytes (8 MiB)", SPEC_MAX_BYTES);
		goto out;
	}
	root = json_loadb(raw.data, raw.len, JSON_REJECT_DUPLICATES, &jerr);
	model_buf_release(&raw);
	model_buf_init(&raw, 0);
	if (!root) {
		fail(sum, "malformed run spec: %s", jerr.text);
		goto out;
	}
	if (spec_validate(root, &spec, why, sizeof(why)) != 0) {
		fail(sum, "invalid run spec: %s", why);
		goto out;
	}
	spec.unconfined = unconfined;
	be->run(&spec, stdout, sum);
out:
	model_buf_release(&raw);
	if (root) {
		/* The one reference is ours: dropping it frees steps, mocks and
		 * every string in them. Only then is the state destroyed. */
		sum->destroyed = root->refcount == 1;
		json_decref(root);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"backend", required_argument, NULL, 'b'}, {"probe", required_argument, NULL, 'p'},
	    {"no-seccomp", no_argument, NULL, 'n'},    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
	};
	/* stdout gets a fixed buffer before the filter exists: stdio would
	 * otherwise allocate one on first write, after fstat() and, on a
	 * terminal or /dev/null, an ioctl() the filter refuses. Every line
	 * is flushed explicitly. */
	static char outbuf[65536];
	struct runner_summary sum;
	const struct runner_backend *be;
	const char *backend_name = NULL;
	const char *probe_op = NULL;
	char name[64];
	char why[384];
	int unconfined = 0;
	int c;

	/* First, before anything can use them. */
	close_inherited();
	clearenv();
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	/* One allocation policy (model/alloc.h): jansson aborts on OOM too. */
	json_set_alloc_funcs(model_xmalloc, free);

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			backend_name = optarg;
			break;
		case 'p':
			probe_op = optarg;
			break;
		case 'n':
			unconfined = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s\n", RUNNER_ID);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (!backend_name && !probe_op)) {
		usage(stderr);
		return 2;
	}
	if (probe_op) {
		if (!backend_name)
			backend_name = MODEL_BACKEND_INPROC_MOCK;
		be = backend_find(backend_name);
		if (!be || !be->probe) {
			fprintf(stderr, "%s: no probe for backend %s\n", MODEL_RUNNER_NAME,
			        backend_name);
			return 2;
		}
		return be->probe(probe_op, stdout) == 0 ? 0 : 1;
	}

	memset(&sum, 0, sizeof(sum));
	sum.status = "failed";
	printable(name, sizeof(name), backend_name);
	be = backend_find(backend_name);
	if (!be) {
		fail(&sum, "unknown backend: %s", name);
	} else if (!unconfined && be->preflight(why, sizeof(why)) != 0) {
		fail(&sum, "backend %s unavailable: %s", be->name, why);
	} else {
		run_spec(be, unconfined, &sum);
	}
	return write_summary(name, &sum) == 0 ? 0 : 1;
}
