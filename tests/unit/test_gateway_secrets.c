/*
 * Unit tests of the egress gateway's secrets file
 * (runner/gateway_secrets.h): a good file and what it answers per
 * host:port, each refusal with its line and never the value, the file's
 * type, owner and mode, and the headers a forwarded request goes out with.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "runner/gateway_secrets.h"
#include "tests/unit/unit.h"

/* A value no message may hold. */
#define SECRET "s3cr3t-Value-9f2c"

static char dir[] = "/tmp/olv-secrets-XXXXXX";
static char file[sizeof(dir) + 32];
static json_t *allow;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/secrets.ini", dir);
	allow = unit_json("[\"api.example.com\", \"10.0.0.5:8080\", \"tls.example:443\"]");
}

static void teardown(void)
{
	unlink(file);
	rmdir(dir);
	json_decref(allow);
	strcpy(dir, "/tmp/olv-secrets-XXXXXX");
}

/* text written to the test's file with mode. */
static void put(const char *text, size_t len, mode_t mode)
{
	int fd;

	unlink(file);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* Load the file as the gateway does; the message into err. */
static int load(struct runner_gateway_secrets **s, struct runner_error *err)
{
	return runner_gateway_secrets_load(file, allow, geteuid(), s, err);
}

/* The file holding text (mode 0600) is refused with "<file>:<want>", and
 * the message holds no SECRET. */
static void refused(const char *text, const char *want)
{
	struct runner_gateway_secrets *s = (void *)1;
	struct runner_error err;
	char full[512];

	put(text, strlen(text), 0600);
	ck_assert_int_eq(load(&s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(err.kind, RUNNER_E_SETUP);
	snprintf(full, sizeof(full), "egress_secrets %s:%s", file, want);
	ck_assert_str_eq(err.message, full);
	ck_assert_ptr_null(strstr(err.message, SECRET));
	ck_assert_ptr_null(strstr(err.message, "s3cr3t"));
}

START_TEST(test_good_file)
{
	static const char text[] = "; the operator's credentials\n"
	                           "# for the run's hosts\n"
	                           "[host api.example.com]\n"
	                           "header = Authorization: Bearer " SECRET "\n"
	                           "header = X-Team:\tblue  \n"
	                           "\n"
	                           "[ host 10.0.0.5:8080 ]\r\n"
	                           "header=X-Api-Key:" SECRET "\r\n"
	                           "[host tls.example:443]\n"
	                           "header = Cookie: a=b; c=d\n";
	struct runner_gateway_secrets *s;
	struct runner_error err;
	json_t *h;
	char *text_out;

	put(text, strlen(text), 0600);
	ck_assert_msg(load(&s, &err) == 0, "%s", err.message);
	/* a bare host: the scheme's default port, either scheme */
	h = runner_gateway_secrets_for(s, "https", "api.example.com", 443);
	ck_assert_ptr_nonnull(h);
	text_out = json_dumps(h, JSON_COMPACT);
	ck_assert_str_eq(text_out,
	                 "[[\"Authorization\",\"Bearer " SECRET "\"],[\"X-Team\",\"blue\"]]");
	free(text_out);
	ck_assert_ptr_eq(runner_gateway_secrets_for(s, "http", "api.example.com", 80), h);
	ck_assert_ptr_null(runner_gateway_secrets_for(s, "https", "api.example.com", 8443));
	ck_assert_ptr_null(runner_gateway_secrets_for(s, "http", "api.example.com", 443));
	ck_assert_ptr_null(runner_gateway_secrets_for(s, "https", "other.example.com", 443));
	/* host:port: that port only */
	h = runner_gateway_secrets_for(s, "http", "10.0.0.5", 8080);
	ck_assert_ptr_nonnull(h);
	text_out = json_dumps(h, JSON_COMPACT);
	ck_assert_str_eq(text_out, "[[\"X-Api-Key\",\"" SECRET "\"]]");
	free(text_out);
	ck_assert_ptr_null(runner_gateway_secrets_for(s, "http", "10.0.0.5", 80));
	/* a value with "; " (no blank before the ';') is whole */
	h = runner_gateway_secrets_for(s, "https", "tls.example", 443);
	ck_assert_str_eq(json_string_value(json_array_get(json_array_get(h, 0), 1)), "a=b; c=d");
	runner_gateway_secrets_free(s);
	runner_gateway_secrets_free(NULL);
}
END_TEST

START_TEST(test_refusals)
{
	char longline[300];

	refused("[host api.example.com]\nheadr = X-A: " SECRET "\n",
	        "2: unknown key (a [host] section has header = Name: value)");
	refused("header = X-A: " SECRET "\n", "1: a key before any [host NAME] section");
	refused("[server]\nheader = X-A: " SECRET "\n",
	        "1: unknown section (a section is [host NAME] or [host NAME:PORT])");
	refused("[hosts api.example.com]\n",
	        "1: unknown section (a section is [host NAME] or [host NAME:PORT])");
	refused("[host]\n", "1: unknown section (a section is [host NAME] or [host NAME:PORT])");
	refused("[host a b]\nheader = X-A: 1\n", "1: a section is [host NAME] or [host NAME:PORT]");
	refused("[host api.example.com] x\n",
	        "1: a section header is [host NAME] alone on its line");
	refused("[host api.example.com\n", "1: a section header is [host NAME] alone on its line");
	refused("[host 10.0.0.5:0]\n",
	        "1: the port of [host 10.0.0.5:...] is not a number from 1 to 65535");
	refused("[host 10.0.0.5:65536]\n",
	        "1: the port of [host 10.0.0.5:...] is not a number from 1 to 65535");
	refused("[host 10.0.0.5:80x]\n",
	        "1: the port of [host 10.0.0.5:...] is not a number from 1 to 65535");
	/* hosts that no item covers: another host, another port, a port of
	 * an item with none that is not its default */
	refused("[host api.example.com]\nheader = X-A: 1\n[host evil.example]\nheader = X-A: 1\n",
	        "3: host evil.example is in no egress_allow item of the run");
	refused("[host 10.0.0.5:8081]\nheader = X-A: 1\n",
	        "1: host 10.0.0.5:8081 is in no egress_allow item of the run");
	refused("[host 10.0.0.5]\nheader = X-A: 1\n",
	        "1: host 10.0.0.5 is in no egress_allow item of the run");
	refused("[host api.example.com:8443]\nheader = X-A: 1\n",
	        "1: host api.example.com:8443 is in no egress_allow item of the run");
	refused("[host Api.example.com]\nheader = X-A: 1\n",
	        "1: host Api.example.com is in no egress_allow item of the run");
	/* one section a host:port: a bare host is its default ports */
	refused("[host api.example.com]\nheader = X-A: 1\n[host api.example.com:443]\n",
	        "3: a second section for api.example.com:443 (a host:port has one section)");
	refused("[host api.example.com]\nheader = X-A: 1\n\n[host api.example.com]\n",
	        "4: a second section for api.example.com (a host:port has one section)");
	refused("[host api.example.com]\n[host 10.0.0.5:8080]\nheader = X-A: 1\n",
	        "1: a [host] section without a header line");
	refused("[host api.example.com]\nheader = X-A: 1\n[host 10.0.0.5:8080]\n; none\n",
	        "3: a [host] section without a header line");
	refused("", "1: no [host NAME] section");
	refused("[host api.example.com]\nheader = " SECRET "\n",
	        "2: header is \"Name: value\", Name an HTTP token");
	refused("[host api.example.com]\nheader = X A: " SECRET "\n",
	        "2: header is \"Name: value\", Name an HTTP token");
	refused("[host api.example.com]\nheader = : " SECRET "\n",
	        "2: header is \"Name: value\", Name an HTTP token");
	refused("[host api.example.com]\nheader = X-A:\n", "2: header X-A has an empty value");
	refused("[host api.example.com]\nheader = X-A: a\x01" SECRET "\n",
	        "2: the value of header X-A holds a control character");
	refused("[host api.example.com]\nheader = X-A: a\r" SECRET "\n",
	        "2: the value of header X-A holds a control character");
	refused("[host api.example.com]\nheader = X-A: \xff" SECRET "\n",
	        "2: the value of header X-A is not UTF-8");
	refused("[host api.example.com]\nheader = Host: " SECRET "\n",
	        "2: header Host is one the gateway sets itself");
	refused("[host api.example.com]\nheader = content-length: 1\n",
	        "2: header content-length is one the gateway sets itself");
	refused("[host api.example.com]\nheader = Proxy-Authorization: " SECRET "\n",
	        "2: header Proxy-Authorization is one the gateway sets itself");
	refused("[host api.example.com]\nheader = X-A: 1\nheader = x-a: " SECRET "\n",
	        "3: header x-a twice in one section");
	/* what inih would read otherwise than written */
	refused("[host api.example.com]\nheader = X-A: " SECRET " ;tail\n",
	        "2: \" ;\", which starts a comment here (inline comments are refused: a value "
	        "holding one would be cut)");
	refused("[host api.example.com]\nheader = X-A: 1\n  X-B: " SECRET "\n",
	        "3: a line that starts with a blank (inih takes it as the rest of the line "
	        "before)");
	memset(longline, 'a', sizeof(longline));
	memcpy(longline, "[host api.example.com]\nheader = X-A: ", 37);
	strcpy(longline + 37 + 185, "\n");
	refused(longline, "2: a line over 198 bytes");
	refused("[host api.example.com]\nheader x-a\n",
	        "2: not a section, a key = value or a comment");
	refused("[host abcdefghij-abcdefghij-abcdefghij-abcdefghij-xy]\n",
	        "1: a section name over 49 bytes");
}
END_TEST

/* The longest line inih keeps whole is read whole. */
START_TEST(test_longest_line)
{
	struct runner_gateway_secrets *s;
	struct runner_error err;
	char text[300];
	json_t *h;

	memset(text, 'v', sizeof(text));
	memcpy(text, "[host api.example.com]\nheader = X-A: ", 37);
	strcpy(text + 37 + 184, "\n");
	put(text, strlen(text), 0600);
	ck_assert_msg(load(&s, &err) == 0, "%s", err.message);
	h = runner_gateway_secrets_for(s, "https", "api.example.com", 443);
	ck_assert_uint_eq(strlen(json_string_value(json_array_get(json_array_get(h, 0), 1))), 184);
	runner_gateway_secrets_free(s);
}
END_TEST

/* A NUL byte would end the line for inih: refused. */
START_TEST(test_nul_byte)
{
	static const char text[] = "[host api.example.com]\nheader = X-A: ab\0cd\n";
	struct runner_gateway_secrets *s;
	struct runner_error err;
	char want[256];

	put(text, sizeof(text) - 1, 0600);
	ck_assert_int_eq(load(&s, &err), -1);
	snprintf(want, sizeof(want), "egress_secrets %s:2: a NUL byte", file);
	ck_assert_str_eq(err.message, want);
}
END_TEST

/* Type, owner and mode, checked on the open file before a byte is read. */
START_TEST(test_file_checks)
{
	static const char text[] = "[host api.example.com]\nheader = X-A: " SECRET "\n";
	struct runner_gateway_secrets *s;
	struct runner_error err;
	char want[512];
	uid_t other;

	put(text, strlen(text), 0644);
	ck_assert_int_eq(load(&s, &err), -1);
	snprintf(want, sizeof(want),
	         "egress_secrets %s: mode 0644 gives group or others access (chmod 600)", file);
	ck_assert_str_eq(err.message, want);
	put(text, strlen(text), 0640);
	ck_assert_int_eq(load(&s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.message, "mode 0640 gives group or others access"));
	put(text, strlen(text), 0602);
	ck_assert_int_eq(load(&s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.message, "mode 0602 gives group or others access"));
	put(text, strlen(text), 0400);
	ck_assert_msg(load(&s, &err) == 0, "%s", err.message);
	runner_gateway_secrets_free(s);

	/* owned by another user than the gateway's (root's would do) */
	put(text, strlen(text), 0600);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(file, 65534, 65534), 0);
		other = 0;
	} else {
		other = geteuid() + 1;
	}
	ck_assert_int_eq(runner_gateway_secrets_load(file, allow, other, &s, &err), -1);
	snprintf(want, sizeof(want),
	         "egress_secrets %s: owned by uid %u, not by the gateway's user (uid %u) or root",
	         file, geteuid() == 0 ? 65534u : (unsigned)geteuid(), (unsigned)other);
	ck_assert_str_eq(err.message, want);

	/* not a regular file; not there */
	ck_assert_int_eq(runner_gateway_secrets_load(dir, allow, geteuid(), &s, &err), -1);
	snprintf(want, sizeof(want), "egress_secrets %s: not a regular file", dir);
	ck_assert_str_eq(err.message, want);
	unlink(file);
	ck_assert_int_eq(load(&s, &err), -1);
	snprintf(want, sizeof(want), "egress_secrets %s: No such file or directory", file);
	ck_assert_str_eq(err.message, want);
	ck_assert_ptr_null(s);
}
END_TEST

/* The agent's header of an injected name goes, in any case and with
 * blanks around its name; the others stay, in order; the injected ones
 * come last, and their names are what the trace gets. */
START_TEST(test_apply)
{
	json_t *agent =
	    unit_json("[[\"Accept\", \"*/*\"], [\"authorization\", \"Bearer agent\"],"
	              " [\"X-Trace\", \"1\"], [\" AUTHORIZATION \", \"x\"],"
	              " [\"x-api-key\", \"agent-key\"], [\"Authorization-Extra\", \"k\"]]");
	json_t *inject = unit_json("[[\"Authorization\", \"Bearer " SECRET "\"],"
	                           " [\"X-Api-Key\", \"" SECRET "\"]]");
	json_t *names, *out;
	char *text;

	out = runner_gateway_secrets_apply(agent, inject, &names);
	text = json_dumps(out, JSON_COMPACT);
	ck_assert_str_eq(text, "[[\"Accept\",\"*/*\"],[\"X-Trace\",\"1\"],"
	                       "[\"Authorization-Extra\",\"k\"],"
	                       "[\"Authorization\",\"Bearer " SECRET "\"],"
	                       "[\"X-Api-Key\",\"" SECRET "\"]]");
	free(text);
	text = json_dumps(names, JSON_COMPACT);
	ck_assert_str_eq(text, "[\"Authorization\",\"X-Api-Key\"]");
	free(text);
	/* the agent's own array is left as it was */
	ck_assert_uint_eq(json_array_size(agent), 6);
	json_decref(out);
	json_decref(names);
	json_decref(agent);
	json_decref(inject);
}
END_TEST

/* What an upstream echoes of an injected value is masked for the trace. */
START_TEST(test_mask)
{
	json_t *resp = unit_json("[[\"Content-Type\", \"text/plain\"],"
	                         " [\"X-Echo\", \"got Bearer " SECRET " here\"],"
	                         " [\"X-Other\", \"Bearer\"]]");
	json_t *inject = unit_json("[[\"Authorization\", \"Bearer " SECRET "\"]]");
	char *text;

	runner_gateway_secrets_mask(resp, inject);
	text = json_dumps(resp, JSON_COMPACT);
	ck_assert_str_eq(text, "[[\"Content-Type\",\"text/plain\"],[\"X-Echo\",\"[masked]\"],"
	                       "[\"X-Other\",\"Bearer\"]]");
	free(text);
	json_decref(resp);
	json_decref(inject);
}
END_TEST

START_TEST(test_egress_allows)
{
	ck_assert(runner_gateway_egress_allows(allow, "https", "api.example.com", 443));
	ck_assert(runner_gateway_egress_allows(allow, "http", "api.example.com", 80));
	ck_assert(!runner_gateway_egress_allows(allow, "http", "api.example.com", 443));
	ck_assert(runner_gateway_egress_allows(allow, "http", "10.0.0.5", 8080));
	ck_assert(!runner_gateway_egress_allows(allow, "http", "10.0.0.5", 80));
	ck_assert(!runner_gateway_egress_allows(allow, "https", "api.example.co", 443));
	ck_assert(!runner_gateway_egress_allows(NULL, "https", "api.example.com", 443));
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const file_tests[] = {test_good_file, test_refusals,    test_longest_line,
	                                   test_nul_byte,  test_file_checks, NULL};
	const TTest *const headers[] = {test_apply, test_mask, test_egress_allows, NULL};
	Suite *s = suite_create("gateway_secrets");

	tcase_add_checked_fixture(unit_tcase(s, "file", file_tests), setup, teardown);
	tcase_add_checked_fixture(unit_tcase(s, "headers", headers), setup, teardown);
	return s;
}
