#ifndef OLIVARES_MODEL_SCORER_H
#define OLIVARES_MODEL_SCORER_H
/**
 * The scorer port: the thin contract between the sandbox (module XVII) and
 * the evals module (XII) that scores its outputs (sandbox page: "Ses
 * sorties sont notées par le module XII via un adaptateur câblé uniquement
 * dans la racine de composition"). The sandbox never imports an evals
 * module; only fcgi/main.c chooses the adapter, from the config:
 *
 *   none             no scorer wired: every run that names a suite is
 *                    recorded "executed, not scored" (scored false, reason
 *                    "no scorer adapter is wired"), never a silent pass;
 *   builtin:<dir>    reference adapter (fcgi/scorer/scorer_builtin.c) reading the
 *                    suite file <dir>/<suite>.json and evaluating it with
 *                    model_suite_evaluate (model/suite.h);
 *   exec:<command>   fcgi/scorer/scorer_exec.c runs an external scorer with a time
 *                    limit, outputs as JSON on stdin, its JSON answer on
 *                    stdout.
 * An adapter that fails, times out or answers garbage leaves the run
 * executed, not scored, with the reason.
 */
#include <jansson.h>
#include <stddef.h>

#include "error.h"

/**
 * The result of scoring one run.
 *   scored:  1 when score/passed are meaningful, 0 otherwise (then reason
 *            says why: no scorer wired, unknown suite, adapter failure).
 *   score:   in [0, 1].
 *   passed:  score >= the suite's threshold.
 *   details: array of {"seq": N, "key": K, "passed": bool, "check": string,
 *            "message": string} (one per evaluated expectation), or NULL;
 *            owned by the result. The builtin adapter always fills all
 *            five keys (model/suite.h); an exec scorer's lines carry
 *            "passed" and any of the others (fcgi/scorer/scorer_exec.h).
 *   reason:  "" when scored.
 */
struct model_score_result {
	int scored;
	double score;
	int passed;
	json_t *details;
	char reason[MODEL_REASON_BYTES];
};

/** Release what a result holds (details) and zero it. */
void model_score_result_clear(struct model_score_result *res);

/**
 * One adapter. score() scores outputs (array of output objects as the
 * store returns them: {"seq","key","input","output","status","error_kind"})
 * of a run against the suite named suite (an opaque name, at most 128
 * bytes, [A-Za-z0-9][A-Za-z0-9._-]*; the adapter resolves it). It always
 * fills *res; returns 0 when scored, -1 when not (res->reason set).
 * destroy() releases ctx. The same adapter may be called many times by one
 * worker process; it keeps no per-run state between calls.
 */
struct model_scorer_ops {
	const char *name;
	int (*score)(void *ctx, const char *suite, json_t *outputs, struct model_score_result *res);
	void (*destroy)(void *ctx);
};

struct model_scorer {
	const struct model_scorer_ops *ops;
	void *ctx;
};

/** The "none" adapter: never scores; reason "no scorer adapter is wired". */
extern const struct model_scorer_ops model_scorer_none;

/**
 * Round a score or a delta to 9 decimal places (half away from zero, never
 * -0). Scores are ratios of small weights: 0.8 - 0.7 is
 * 0.10000000000000009 in binary and must equal a tolerance of 0.1 (the edge
 * is "unchanged"); and the SQLite ODBC driver reads a REAL back through
 * 15-digit text, so an unrounded 2/3 would read back differently on SQLite
 * and PostgreSQL. Every recorded score and delta goes through this, so the
 * same run reads back the same on every store. |x| must be <= 1e9.
 */
double model_score_round(double x);

/** 1 if name is a well-formed suite name (see above), else 0. */
int model_suite_name_valid(const char *name);

#endif
