/*
 * JUnit XML export of a run (junit.h), with libxml2's tree API: nodes and
 * attributes are built from values and libxml2 escapes them when it
 * serialises the document, so no text is ever pasted into markup.
 */
#include "fcgi/export/junit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/tree.h>
#include <libxml/xmlmemory.h>

#include "model/alloc.h"
#include "model/buf.h"

#define JUNIT_ROOT_NAME "olivares-sandbox"
#define JUNIT_CLASS_PREFIX "olivares.sandbox."
/* no single value of a run comes near this; outputs are capped far lower
 * by the dispatcher (4 MiB for a whole run) */
#define JUNIT_TEXT_MAX (64u << 20)

/* Length of the UTF-8 sequence starting at s (1..4), or 0 if it is not a
 * valid sequence of at most n bytes. */
static size_t utf8_len(const unsigned char *s, size_t n, unsigned long *cp)
{
	size_t len, i;
	unsigned long c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	*cp = c;
	return len;
}

/* XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
 * [#x10000-#x10FFFF]. */
static int xml_char_ok(unsigned long c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* A copy of s (malloc'd) where every character XML cannot carry, and any
 * byte that is not valid UTF-8, is U+FFFD. NULL stays NULL. */
static char *xml_text(const char *s)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	struct model_buf b;
	unsigned long cp = 0;
	size_t n, k;
	char *out;

	if (!s)
		return NULL;
	n = strlen(s);
	model_buf_init(&b, JUNIT_TEXT_MAX);
	while (n > 0) {
		k = utf8_len(p, n, &cp);
		if (k == 0 || !xml_char_ok(cp)) {
			model_buf_must_fit(model_buf_add(&b, repl, sizeof(repl) - 1));
			k = k ? k : 1;
		} else {
			model_buf_must_fit(model_buf_add(&b, (const char *)p, k));
		}
		p += k;
		n -= k;
	}
	out = model_buf_detach(&b, NULL);
	model_buf_release(&b);
	return out;
}

/* Set attribute name of node to the XML-safe copy of value. */
static void set_attr(xmlNodePtr node, const char *name, const char *value)
{
	char *v = xml_text(value ? value : "");

	xmlNewProp(node, BAD_CAST name, BAD_CAST v);
	free(v);
}

static void set_attr_int(xmlNodePtr node, const char *name, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	xmlNewProp(node, BAD_CAST name, BAD_CAST num);
}

/* A child element with text content (escaped by libxml2 on output). */
static xmlNodePtr add_text_child(xmlNodePtr parent, const char *name, const char *text)
{
	xmlNodePtr node = xmlNewChild(parent, NULL, BAD_CAST name, NULL);
	char *t;

	if (!node)
		return NULL;
	t = xml_text(text ? text : "");
	/* xmlNodeAddContent takes raw text (not markup): "<" stays a character */
	xmlNodeAddContent(node, BAD_CAST t);
	free(t);
	return node;
}

/* A JSON scalar as property text; NULL for null or absent. */
static const char *scalar_text(json_t *v, char *buf, size_t n)
{
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if (json_is_integer(v)) {
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		/* the shortest of 15 or 17 digits that reads back the same */
		snprintf(buf, n, "%.15g", json_real_value(v));
		if (strtod(buf, NULL) != json_real_value(v))
			snprintf(buf, n, "%.17g", json_real_value(v));
		return buf;
	}
	return NULL;
}

static xmlNodePtr add_properties(xmlNodePtr suite, json_t *run)
{
	static const char *const keys[] = {
	    "id", "kind", "scenario_id", "scenario_version", "variant", "status", "backend",
	    "runner", "isolated", "destroyed", "suite", "scored", "score", "passed", "reason",
	    "output_digest", "steps_total", "steps_ok", "steps_error", "session_id",
	    /* the note that the agent had to be killed after its last step:
	     * not a failure (the run completed), but a CI reader should see it */
	    "shutdown",
	    /* whether the run reached outside its mocks (controlled egress) */
	    "hermetic", "egress_requests"};
	xmlNodePtr props, p;
	const char *text;
	json_t *agent;
	char buf[64];
	size_t i;

	props = xmlNewChild(suite, NULL, BAD_CAST "properties", NULL);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		text = scalar_text(json_object_get(run, keys[i]), buf, sizeof(buf));
		if (!text)
			continue;
		p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
		/* "id" is the run's: name it so a reader need not guess */
		set_attr(p, "name", strcmp(keys[i], "id") == 0 ? "run_id" : keys[i]);
		set_attr(p, "value", text);
	}
	/* which program ran: "agent" its name, "agent_sha256" the digest of
	 * the file the executor handed to the runner (absent for a built-in
	 * agent, which has none) */
	agent = json_object_get(run, "agent");
	for (i = 0; i < 2; i++) {
		text = scalar_text(json_object_get(agent, i ? "sha256" : "name"), buf, sizeof(buf));
		if (!text)
			continue;
		p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
		set_attr(p, "name", i ? "agent_sha256" : "agent");
		set_attr(p, "value", text);
	}
	return props;
}

/* One <property name value> more in props. */
static void add_property(xmlNodePtr props, const char *name, const char *value)
{
	xmlNodePtr p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);

	set_attr(p, "name", name);
	set_attr(p, "value", value);
}

/* 1 if expectation detail d (from score_details) is about output o. */
static int detail_is_for(json_t *d, json_t *o)
{
	json_t *seq = json_object_get(d, "seq");
	const char *key = json_string_value(json_object_get(d, "key"));

	if (json_is_integer(seq))
		return json_integer_value(seq) == json_integer_value(json_object_get(o, "seq"));
	return key && json_is_string(json_object_get(o, "key")) &&
	       strcmp(key, json_string_value(json_object_get(o, "key"))) == 0;
}

static int detail_failed(json_t *d)
{
	return json_is_object(d) && json_is_false(json_object_get(d, "passed"));
}

/*
 * The reasons one test case failed (or erred), gathered so that the case
 * gets ONE <failure> (or <error>): several readers show only the first of
 * many. With one reason the element is that reason's (type, message, text);
 * with more, type is the first reason's (the step's own failure comes
 * before the expectations: a reader that looks for type="mock_miss" still
 * finds it), message their messages joined by "; ", and the text one line
 * "message: text" per reason, in order.
 */
struct problems {
	int n;
	struct model_buf messages, lines;
	char *type; /* the first reason's type */
	char *text; /* the first reason's text */
};

static void problems_init(struct problems *p)
{
	p->n = 0;
	p->type = NULL;
	p->text = NULL;
	model_buf_init(&p->messages, JUNIT_TEXT_MAX);
	model_buf_init(&p->lines, JUNIT_TEXT_MAX);
}

static void problems_release(struct problems *p)
{
	model_buf_release(&p->messages);
	model_buf_release(&p->lines);
	free(p->type);
	free(p->text);
	p->type = NULL;
	p->text = NULL;
}

static void problems_add(struct problems *p, const char *type, const char *message,
                         const char *text)
{
	text = text ? text : "";
	model_buf_must_fit(model_buf_printf(&p->messages, "%s%s", p->n ? "; " : "", message));
	model_buf_must_fit(model_buf_printf(&p->lines, "%s%s%s%s", p->n ? "\n" : "", message,
	                                    text[0] ? ": " : "", text));
	if (!p->n) {
		p->type = model_xstrdup(type);
		p->text = model_xstrdup(text);
	}
	p->n++;
}

/* The one element (elem: "failure" or "error") of test case tc for p's
 * reasons; nothing when there are none. Returns 1 when it added one. */
static int problems_emit(xmlNodePtr tc, const char *elem, const struct problems *p)
{
	xmlNodePtr f;

	if (!p->n)
		return 0;
	f = add_text_child(tc, elem, p->n == 1 ? p->text : p->lines.data);
	set_attr(f, "message", p->messages.data);
	set_attr(f, "type", p->type);
	return 1;
}

/* A failed expectation detail as a reason of type "expectation". */
static void add_expectation_failure(struct problems *p, json_t *d)
{
	const char *check = json_string_value(json_object_get(d, "check"));
	const char *msg = json_string_value(json_object_get(d, "message"));
	char head[200];

	snprintf(head, sizeof(head), "expectation failed: %s", check ? check : "check");
	problems_add(p, "expectation", head, msg);
}

/* A step's duration_ms (o's, may be absent) as JUnit seconds with 3
 * decimals ("0.013"), rounded to the nearest millisecond; "0" when it is
 * unknown (null, absent, not a number, negative). */
static void step_seconds(json_t *o, char *out, size_t n)
{
	json_t *v = json_object_get(o, "duration_ms");
	double ms;
	long long r;

	ms = json_is_number(v) ? json_number_value(v) : -1;
	/* !(ms >= 0) also takes NaN; the store bounds it far below LLONG_MAX */
	if (!(ms >= 0) || ms > 1e15) {
		snprintf(out, n, "0");
		return;
	}
	r = (long long)(ms + 0.5);
	snprintf(out, n, "%lld.%03lld", r / 1000, r % 1000);
}

struct counts {
	long long tests, failures, errors;
};

/* Both documents end alike: the counts on the suite and the root, the
 * suite's time and timestamp (may be NULL: none), then the whole document
 * as UTF-8 into *out (malloc'd, NUL-terminated) and *len. -1 when libxml2
 * gives nothing; the caller frees doc either way. */
static int doc_finish(xmlDocPtr doc, xmlNodePtr root, xmlNodePtr suite, const struct counts *c,
                      const char *time, const char *timestamp, char **out, size_t *len)
{
	xmlChar *mem = NULL;
	int size = 0;

	set_attr_int(suite, "tests", c->tests);
	set_attr_int(suite, "failures", c->failures);
	set_attr_int(suite, "errors", c->errors);
	set_attr_int(suite, "skipped", 0);
	set_attr(suite, "time", time);
	if (timestamp)
		set_attr(suite, "timestamp", timestamp);
	set_attr_int(root, "tests", c->tests);
	set_attr_int(root, "failures", c->failures);
	set_attr_int(root, "errors", c->errors);
	xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
	if (!mem || size <= 0) {
		if (mem)
			xmlFree(mem);
		return -1;
	}
	*out = model_xmalloc((size_t)size + 1);
	memcpy(*out, mem, (size_t)size);
	(*out)[size] = '\0';
	*len = (size_t)size;
	xmlFree(mem);
	return 0;
}

/* One test case per output; *c counts them. */
static void add_step_cases(xmlNodePtr suite, const char *classname, json_t *outputs,
                           json_t *details, struct counts *c)
{
	const char *kind, *key, *output, *status;
	struct problems p;
	xmlNodePtr tc;
	json_t *o, *d;
	size_t i, j;
	char secs[32];

	json_array_foreach(outputs, i, o)
	{
		key = json_string_value(json_object_get(o, "key"));
		output = json_string_value(json_object_get(o, "output"));
		kind = json_string_value(json_object_get(o, "error_kind"));
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", key ? key : "step");
		set_attr(tc, "classname", classname);
		step_seconds(o, secs, sizeof(secs));
		set_attr(tc, "time", secs);
		status = json_string_value(json_object_get(o, "status"));
		problems_init(&p);
		if (kind || (status && strcmp(status, "ok") != 0)) {
			if (kind && strcmp(kind, "mock_miss") == 0)
				problems_add(&p, "mock_miss", "mock miss", output);
			else
				problems_add(&p, kind ? kind : "agent_error", "agent error",
				             output);
		}
		json_array_foreach(details, j, d)
		{
			if (detail_failed(d) && detail_is_for(d, o))
				add_expectation_failure(&p, d);
		}
		c->tests++;
		c->failures += problems_emit(tc, "failure", &p);
		problems_release(&p);
	}
}

/* The failed expectations that match no output ("no such step"), in one
 * test case named after the suite. */
static void add_orphan_expectations(xmlNodePtr suite, const char *classname, json_t *run,
                                    json_t *outputs, json_t *details, struct counts *c)
{
	const char *name = json_string_value(json_object_get(run, "suite"));
	char title[200];
	struct problems p;
	xmlNodePtr tc = NULL;
	json_t *d, *o;
	size_t i, j;
	int matched;

	problems_init(&p);
	json_array_foreach(details, i, d)
	{
		if (!detail_failed(d))
			continue;
		matched = 0;
		json_array_foreach(outputs, j, o)
		{
			if (detail_is_for(d, o))
				matched = 1;
		}
		if (matched)
			continue;
		if (!tc) {
			snprintf(title, sizeof(title), "suite %s", name ? name : "expectations");
			tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
			set_attr(tc, "name", title);
			set_attr(tc, "classname", classname);
			set_attr(tc, "time", "0");
			c->tests++;
			c->failures++;
		}
		add_expectation_failure(&p, d);
	}
	if (tc)
		problems_emit(tc, "failure", &p);
	problems_release(&p);
}

/* The output of run outputs that detail d is about (the first whose seq,
 * or key, is d's), or NULL ("no such step"). */
static json_t *detail_output(json_t *d, json_t *outputs)
{
	json_t *o;
	size_t i;

	json_array_foreach(outputs, i, o)
	{
		if (detail_is_for(d, o))
			return o;
	}
	return NULL;
}

/* A scored run's test case name for detail d: "<step key>: <check>", the
 * step named by its seq ("seq 2: equals") when the detail has no key, and
 * "suite: <check>" when it names no step at all. */
static void detail_case_name(json_t *d, char *out, size_t n)
{
	const char *key = json_string_value(json_object_get(d, "key"));
	const char *check = json_string_value(json_object_get(d, "check"));
	json_t *seq = json_object_get(d, "seq");

	check = check ? check : "expectation";
	if (key)
		snprintf(out, n, "%s: %s", key, check);
	else if (json_is_integer(seq))
		snprintf(out, n, "seq %" JSON_INTEGER_FORMAT ": %s", json_integer_value(seq),
		         check);
	else
		snprintf(out, n, "suite: %s", check);
}

/* A step's own problem (a mock miss, an agent error), as the property
 * "mock_miss" or "agent_error" of a scored run's suite: the suite decides
 * what fails, and an expectation that looks at the step says so in its
 * own case. The value names the step: "<key> (seq N)". */
static void add_step_notes(xmlNodePtr props, json_t *outputs)
{
	const char *kind, *status, *key;
	char value[300];
	json_t *o;
	size_t i;

	json_array_foreach(outputs, i, o)
	{
		kind = json_string_value(json_object_get(o, "error_kind"));
		status = json_string_value(json_object_get(o, "status"));
		if (!kind && (!status || strcmp(status, "ok") == 0))
			continue;
		key = json_string_value(json_object_get(o, "key"));
		snprintf(value, sizeof(value), "%.200s (seq %" JSON_INTEGER_FORMAT ")",
		         key ? key : "step", json_integer_value(json_object_get(o, "seq")));
		add_property(props,
		             kind && strcmp(kind, "mock_miss") == 0 ? "mock_miss" : "agent_error",
		             value);
	}
}

/*
 * A scored run: one test case per line of score_details, the suite's
 * verdict on the run. A failed expectation is a <failure> when the run did
 * not pass its suite; when it passed (the threshold tolerates it) the case
 * keeps the detail in <system-out> and the suite a property
 * "expectation_tolerated", so a run its suite passed is never red. When
 * the details do not say why a run did not pass (an exec scorer may give
 * none), one "suite" case carries that failure.
 */
static void add_expectation_cases(xmlNodePtr suite, xmlNodePtr props, const char *classname,
                                  json_t *run, json_t *outputs, json_t *details, struct counts *c)
{
	const char *sname = json_string_value(json_object_get(run, "suite"));
	int passed = json_is_true(json_object_get(run, "passed"));
	const char *msg;
	char name[300], secs[32], line[600], score[64];
	long long failed = 0, total = 0, failures_before = c->failures;
	struct problems p;
	xmlNodePtr tc, f;
	json_t *d;
	size_t i;

	add_step_notes(props, outputs);
	json_array_foreach(details, i, d)
	{
		if (!json_is_object(d))
			continue;
		detail_case_name(d, name, sizeof(name));
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", name);
		set_attr(tc, "classname", classname);
		step_seconds(detail_output(d, outputs), secs, sizeof(secs));
		set_attr(tc, "time", secs);
		c->tests++;
		total++;
		if (!detail_failed(d))
			continue;
		failed++;
		msg = json_string_value(json_object_get(d, "message"));
		if (!passed) {
			problems_init(&p);
			add_expectation_failure(&p, d);
			c->failures += problems_emit(tc, "failure", &p);
			problems_release(&p);
			continue;
		}
		snprintf(line, sizeof(line),
		         "expectation did not hold, tolerated: the run passed its suite%s%.400s",
		         msg ? ": " : "", msg ? msg : "");
		add_text_child(tc, "system-out", line);
		snprintf(line, sizeof(line), "%s%s%.280s", name, msg ? ": " : "", msg ? msg : "");
		add_property(props, "expectation_tolerated", line);
	}
	snprintf(line, sizeof(line), "%lld", total);
	add_property(props, "expectations", line);
	snprintf(line, sizeof(line), "%lld", failed);
	add_property(props, "expectations_failed", line);
	if (!passed && c->failures == failures_before) {
		snprintf(name, sizeof(name), "suite %.200s", sname ? sname : "expectations");
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", name);
		set_attr(tc, "classname", classname);
		set_attr(tc, "time", "0");
		msg = scalar_text(json_object_get(run, "score"), score, sizeof(score));
		snprintf(line, sizeof(line), "suite not passed (score %s)", msg ? msg : "unknown");
		msg = json_string_value(json_object_get(run, "reason"));
		f = add_text_child(tc, "failure", msg ? msg : "");
		set_attr(f, "message", line);
		set_attr(f, "type", "suite_not_passed");
		c->tests++;
		c->failures++;
	} else if (total == 0) {
		/* a suite that passed with no detail: one green case, not an
		 * empty suite a reader could take for "nothing ran" */
		snprintf(name, sizeof(name), "suite %.200s", sname ? sname : "expectations");
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", name);
		set_attr(tc, "classname", classname);
		set_attr(tc, "time", "0");
		c->tests++;
	}
}

/* The API's "YYYY-MM-DDTHH:MM:SS.mmmZ" as ms since the epoch, or -1. */
static long long iso_ms(const char *iso)
{
	struct tm tm;
	int ms = 0, n = 0;

	if (!iso)
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
	    n == 0 || iso[n] != '\0')
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

/* The run's duration in seconds ("1.234"), from started to finished; "0"
 * when either is missing or they are out of order. */
static void run_seconds(const char *started, const char *finished, char *out, size_t n)
{
	long long a = iso_ms(started), b = iso_ms(finished);

	if (a < 0 || b < a)
		snprintf(out, n, "0");
	else
		snprintf(out, n, "%lld.%03lld", (b - a) / 1000, (b - a) % 1000);
}

int http_junit_render(json_t *run, json_t *outputs, char **out, size_t *len)
{
	const char *run_id, *scenario, *variant, *status, *reason, *started, *session;
	char session_name[56], secs[32];
	json_t *details;
	struct counts c = {0, 0, 0};
	xmlDocPtr doc = NULL;
	xmlNodePtr root, suite, tc, e, props;
	char *name = NULL, *classname = NULL, *type = NULL;
	size_t n;
	int ret = -1;

	*out = NULL;
	*len = 0;
	run_id = json_string_value(json_object_get(run, "id"));
	if (!run_id)
		return -1;
	scenario = json_string_value(json_object_get(run, "scenario_id"));
	variant = json_string_value(json_object_get(run, "variant"));
	status = json_string_value(json_object_get(run, "status"));
	reason = json_string_value(json_object_get(run, "reason"));
	started = json_string_value(json_object_get(run, "started_at"));
	details = json_object_get(run, "score_details");
	if (!json_is_array(details))
		details = NULL;
	if (!json_is_array(outputs))
		outputs = NULL;

	/* a replay that names no scenario: its session names the suite */
	session = json_string_value(json_object_get(run, "session_id"));
	if (!scenario && session) {
		snprintf(session_name, sizeof(session_name), "session-%.40s", session);
		scenario = session_name;
	}
	scenario = scenario ? scenario : "run";
	n = strlen(scenario) + strlen(variant ? variant : "default") + 2;
	name = model_xmalloc(n);
	snprintf(name, n, "%s:%s", scenario, variant ? variant : "default");
	n = strlen(JUNIT_CLASS_PREFIX) + strlen(scenario) + 1;
	classname = model_xmalloc(n);
	snprintf(classname, n, "%s%s", JUNIT_CLASS_PREFIX, scenario);

	doc = xmlNewDoc(BAD_CAST "1.0");
	root = doc ? xmlNewDocNode(doc, NULL, BAD_CAST "testsuites", NULL) : NULL;
	if (!root)
		goto out;
	xmlDocSetRootElement(doc, root);
	set_attr(root, "name", JUNIT_ROOT_NAME);
	suite = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
	if (!suite)
		goto out;
	set_attr(suite, "name", name);
	set_attr(suite, "id", run_id);
	props = add_properties(suite, run);
	if (json_is_true(json_object_get(run, "scored"))) {
		/* the suite's verdict: its expectations are the test cases */
		add_expectation_cases(suite, props, classname, run, outputs, details, &c);
	} else {
		add_step_cases(suite, classname, outputs, details, &c);
		add_orphan_expectations(suite, classname, run, outputs, details, &c);
	}
	if (status && strcmp(status, "completed") != 0) {
		/* a run that did not complete is an error, never a green suite */
		n = strlen(status) + 5;
		type = model_xmalloc(n);
		snprintf(type, n, "run_%s", status);
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", "run");
		set_attr(tc, "classname", classname);
		set_attr(tc, "time", "0");
		e = add_text_child(tc, "error", reason ? reason : "");
		set_attr(e, "message", status);
		set_attr(e, "type", type);
		c.tests++;
		c.errors++;
	}
	if (json_is_string(json_object_get(run, "suite")) &&
	    !json_is_true(json_object_get(run, "scored")) && status &&
	    strcmp(status, "completed") == 0) {
		/* a suite was asked for and not applied: never a green suite
		 * that nothing scored (a failed run has its error above) */
		tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
		set_attr(tc, "name", "score");
		set_attr(tc, "classname", classname);
		set_attr(tc, "time", "0");
		e = add_text_child(tc, "error", reason ? reason : "");
		set_attr(e, "message", "executed, not scored");
		set_attr(e, "type", "not_scored");
		c.tests++;
		c.errors++;
	}
	/* counts are known only now: attributes are added in schema order
	 * regardless (attribute order carries no meaning in XML) */
	run_seconds(started, json_string_value(json_object_get(run, "finished_at")), secs,
	            sizeof(secs));
	ret = doc_finish(doc, root, suite, &c, secs, started, out, len);
out:
	if (doc)
		xmlFreeDoc(doc);
	free(name);
	free(classname);
	free(type);
	return ret;
}

/* ---- a comparison ------------------------------------------------------- */

/* A scalar member of obj as property name (prefix + key); nothing for a
 * null or absent one. */
static void add_member_property(xmlNodePtr props, const char *prefix, json_t *obj, const char *key)
{
	char buf[64], name[128];
	const char *text = scalar_text(json_object_get(obj, key), buf, sizeof(buf));

	if (!text)
		return;
	snprintf(name, sizeof(name), "%s%s", prefix, key);
	add_property(props, name, text);
}

/* The case of one side (which: "baseline" or "candidate"): a failure when
 * its run did not complete, or completed without a score. */
static void add_side_case(xmlNodePtr suite, const char *classname, json_t *cmp, const char *which,
                          struct counts *c)
{
	json_t *side = json_object_get(cmp, which);
	const char *status = json_string_value(json_object_get(side, "status"));
	const char *reason = json_string_value(json_object_get(cmp, "reason"));
	const char *run_id = json_string_value(json_object_get(side, "run_id"));
	char message[200], type[64];
	xmlNodePtr tc, f;

	tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
	set_attr(tc, "name", which);
	set_attr(tc, "classname", classname);
	set_attr(tc, "time", "0");
	c->tests++;
	if (status && strcmp(status, "completed") != 0) {
		snprintf(message, sizeof(message), "%s run %.40s %.40s", which,
		         run_id ? run_id : "", status);
		snprintf(type, sizeof(type), "run_%.40s", status);
	} else if (!json_is_true(json_object_get(side, "scored"))) {
		snprintf(message, sizeof(message), "%s run %.40s not scored", which,
		         run_id ? run_id : "");
		snprintf(type, sizeof(type), "not_scored");
	} else {
		return;
	}
	f = add_text_child(tc, "failure", reason ? reason : "");
	set_attr(f, "message", message);
	set_attr(f, "type", type);
	c->failures++;
}

/* The verdict's case: a failure for "regressed" and "inconclusive" (what
 * the gate refuses), none for "improved" and "unchanged". */
static void add_verdict_case(xmlNodePtr suite, const char *classname, json_t *cmp, struct counts *c)
{
	const char *verdict = json_string_value(json_object_get(cmp, "verdict"));
	const char *reason = json_string_value(json_object_get(cmp, "reason"));
	char dbuf[64], tbuf[64], message[300];
	const char *delta, *tol;
	xmlNodePtr tc, f;

	tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
	set_attr(tc, "name", "verdict");
	set_attr(tc, "classname", classname);
	set_attr(tc, "time", "0");
	c->tests++;
	if (verdict && (strcmp(verdict, "improved") == 0 || strcmp(verdict, "unchanged") == 0))
		return;
	delta = scalar_text(json_object_get(cmp, "delta"), dbuf, sizeof(dbuf));
	tol = scalar_text(json_object_get(cmp, "tolerance"), tbuf, sizeof(tbuf));
	snprintf(message, sizeof(message), "verdict %.40s (delta %s, tolerance %s)",
	         verdict ? verdict : "unknown", delta ? delta : "null", tol ? tol : "0");
	f = add_text_child(tc, "failure", reason ? reason : message);
	set_attr(f, "message", message);
	set_attr(f, "type", verdict ? verdict : "unknown");
	c->failures++;
}

int http_junit_render_comparison(json_t *cmp, char **out, size_t *len)
{
	static const char *const keys[] = {
	    "scenario_id", "scenario_version", "suite",      "verdict",    "delta",
	    "tolerance",   "reason",           "same_agent", "decided_by", "created_at"};
	static const char *const side_keys[] = {"variant", "run_id", "status", "scored", "score"};
	static const char *const sides[] = {"baseline", "candidate"};
	const char *id, *scenario, *created;
	struct counts c = {0, 0, 0};
	xmlDocPtr doc = NULL;
	xmlNodePtr root, suite, props;
	char *name = NULL, *classname = NULL, prefix[32];
	const char *bv, *cv;
	json_t *stats, *v;
	const char *k;
	size_t i, j, n;
	int ret = -1;

	*out = NULL;
	*len = 0;
	id = json_string_value(json_object_get(cmp, "id"));
	if (!id)
		return -1;
	scenario = json_string_value(json_object_get(cmp, "scenario_id"));
	scenario = scenario ? scenario : "comparison";
	bv = json_string_value(json_object_get(json_object_get(cmp, "baseline"), "variant"));
	cv = json_string_value(json_object_get(json_object_get(cmp, "candidate"), "variant"));
	bv = bv ? bv : "default";
	cv = cv ? cv : "default";
	created = json_string_value(json_object_get(cmp, "created_at"));
	n = strlen(scenario) + strlen(bv) + strlen(cv) + 16;
	name = model_xmalloc(n);
	snprintf(name, n, "%s:%s..%s", scenario, bv, cv);
	n = strlen(JUNIT_CLASS_PREFIX) + strlen(scenario) + sizeof(".comparison");
	classname = model_xmalloc(n);
	snprintf(classname, n, "%s%s.comparison", JUNIT_CLASS_PREFIX, scenario);

	doc = xmlNewDoc(BAD_CAST "1.0");
	root = doc ? xmlNewDocNode(doc, NULL, BAD_CAST "testsuites", NULL) : NULL;
	if (!root)
		goto out;
	xmlDocSetRootElement(doc, root);
	set_attr(root, "name", JUNIT_ROOT_NAME);
	suite = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
	if (!suite)
		goto out;
	set_attr(suite, "name", name);
	set_attr(suite, "id", id);
	props = xmlNewChild(suite, NULL, BAD_CAST "properties", NULL);
	add_property(props, "comparison_id", id);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		add_member_property(props, "", cmp, keys[i]);
	for (i = 0; i < 2; i++) {
		snprintf(prefix, sizeof(prefix), "%s_", sides[i]);
		for (j = 0; j < sizeof(side_keys) / sizeof(side_keys[0]); j++)
			add_member_property(props, prefix, json_object_get(cmp, sides[i]),
			                    side_keys[j]);
	}
	/* the statistics behind the verdict, when the comparison has them:
	 * each scalar member as "stats.<name>" */
	stats = json_object_get(cmp, "stats");
	if (json_is_object(stats)) {
		json_object_foreach(stats, k, v)
		{
			if (strlen(k) < 64)
				add_member_property(props, "stats.", stats, k);
		}
	}
	add_side_case(suite, classname, cmp, "baseline", &c);
	add_side_case(suite, classname, cmp, "candidate", &c);
	add_verdict_case(suite, classname, cmp, &c);
	ret = doc_finish(doc, root, suite, &c, "0", created, out, len);
out:
	if (doc)
		xmlFreeDoc(doc);
	free(name);
	free(classname);
	return ret;
}
