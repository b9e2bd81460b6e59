#ifndef OLIVARES_MODEL_LLM_MOCK_H
#define OLIVARES_MODEL_LLM_MOCK_H
/**
 * What model/http_mock.c and model/llm_mock.c share: the chat (llm) half
 * of model/http_mock.h, and the helpers both halves use. Not for use
 * outside model/ (model/http_mock.h is the interface). Pure: no I/O.
 */
#include <jansson.h>
#include <stddef.h>

#include "check.h"
#include "http_mock.h"

/** A check of one answer (an http response or a chat answer) at path into
 * *out (a new object); the model_check walk's return. */
typedef int (*model_http_answer_check_fn)(struct model_check *c, json_t *v, const char *path,
                                          json_t **out);

/** The item's "response" or "sequence" (exactly one, malformed otherwise),
 * each answer through check, set in norm (borrowed) under its key. */
int model_http_check_answers(struct model_check *c, json_t *item, const char *prefix,
                             model_http_answer_check_fn check, json_t *norm);

/** A regex member at path (a string of 1..MODEL_MAX_HTTP_REGEX_BYTES that
 * regcomp takes with REG_EXTENDED; invalid otherwise, with regcomp's
 * words); the model_check walk's return. */
int model_http_check_regex(struct model_check *c, json_t *v, const char *path);

/** 1 when the POSIX ERE pattern is found in s (n bytes; a NUL byte in s,
 * or a pattern that does not compile, never matches); else 0. */
int model_http_regex_search(const char *pattern, const char *s, size_t n);

/** 1 when a and b are both absent/null or equal strings (variants, models). */
int model_http_same_string(json_t *a, json_t *b);

/** Some value is a superset of both a and b under the subset rule (the
 * keys both name hold compatible values; other values equal). */
int model_http_compatible(json_t *a, json_t *b);

/** The answer of mock (its "response", or its "sequence" item number
 * call, the last repeating): borrowed. */
json_t *model_http_mock_answer(json_t *mock, size_t call);

/** The chat mock of an "llm" item (model_http_mock_check's half). */
int model_llm_mock_check(struct model_check *c, json_t *item, const char *prefix, json_t **out);

/** 1 when llm mocks a and b could tie (model_http_mocks_check_ambiguity),
 * with *how the words that say on what. */
int model_llm_mock_ambiguous(json_t *a, json_t *b, const char **how);

/** The llm mock that answers chat request (a parsed body, borrowed): 1 with
 * *index, or 0. */
int model_llm_mock_find(json_t *mocks, const char *variant, json_t *request, size_t *index);

/** Fill a's status, headers, body and stream with chat answer (borrowed: a
 * normalized "response" or sequence item) to request; seq for the ids. */
void model_llm_answer(json_t *answer, json_t *request, size_t seq, struct model_gateway_answer *a);

#endif
