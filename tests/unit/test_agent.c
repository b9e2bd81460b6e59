/*
 * Agent programs (model/agent.c): names, "#!" lines, the jail's view of a
 * path, and the reasons; the file system is a fake probe.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/agent.h"
#include "model/scenario.h"
#include "tests/unit/unit.h"

static struct model_interp parsed(const char *head, int want)
{
	struct model_interp ip;

	ck_assert_int_eq(model_interp_parse(head, strlen(head), &ip), want);
	return ip;
}

START_TEST(test_interp_parse)
{
	struct model_interp ip;
	char long_line[400];

	ip = parsed("#!/bin/sh\necho\n", 1);
	ck_assert_str_eq(ip.path, "/bin/sh");
	ck_assert_str_eq(ip.arg, "");
	ip = parsed("#! /usr/bin/env  python3 -u \r\nprint()\n", 1);
	ck_assert_str_eq(ip.path, "/usr/bin/env");
	/* the kernel passes the rest as one argument */
	ck_assert_str_eq(ip.arg, "python3 -u");
	ip = parsed("#!/opt/venv/bin/python\n", 1);
	ck_assert_str_eq(ip.path, "/opt/venv/bin/python");
	ip = parsed("#!\t/usr/bin/perl\t-w\n", 1);
	ck_assert_str_eq(ip.path, "/usr/bin/perl");
	ck_assert_str_eq(ip.arg, "-w");
	/* a binary, or text that does not start with "#!" */
	ip = parsed("\x7f"
	            "ELF\x02\x01",
	            0);
	ck_assert_str_eq(ip.path, "");
	parsed(" #!/bin/sh\n", 0);
	parsed("", 0);
	/* "#!" with nothing, or no end of line within what the kernel reads */
	parsed("#!\n", -1);
	parsed("#!   \n", -1);
	parsed("#!/bin/sh", -1);
	memset(long_line, 'a', sizeof(long_line));
	memcpy(long_line, "#!/", 3);
	long_line[sizeof(long_line) - 2] = '\n';
	long_line[sizeof(long_line) - 1] = '\0';
	parsed(long_line, -1);
}
END_TEST

/* A fake host: these files exist and are executable; a "link:" entry
 * resolves to another path. */
static const char *const host_files[][2] = {
    {"/usr/bin/env", "/usr/bin/env"},         {"/usr/bin/python3", "/usr/bin/python3.11"},
    {"/usr/bin/sh", "/usr/bin/dash"},         {"/opt/venv/bin/python", "/usr/bin/python3.11"},
    {"/opt/tools/run", "/srv/elsewhere/run"}, {"/bin/custom", "/bin/custom"},
};

static int fake_probe(void *ctx, const char *host_path, char *real, size_t n)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(host_files) / sizeof(host_files[0]); i++)
		if (strcmp(host_files[i][0], host_path) == 0) {
			snprintf(real, n, "%s", host_files[i][1]);
			return 1;
		}
	return 0;
}

START_TEST(test_jail_sees)
{
	json_t *usr_opt = json_pack("[s, s]", "/usr", "/opt/venv");
	json_t *bin = json_pack("[s, s]", "/usr", "/bin");
	json_t *none = json_array();

	ck_assert(model_jail_sees("/usr/bin/env", NULL, fake_probe, NULL));
	/* /bin leads into /usr, as the jail's symlink does */
	ck_assert(model_jail_sees("/bin/sh", NULL, fake_probe, NULL));
	ck_assert(!model_jail_sees("/bin/custom", NULL, fake_probe, NULL));
	/* unless /bin itself is bound */
	ck_assert(model_jail_sees("/bin/custom", bin, fake_probe, NULL));
	ck_assert(!model_jail_sees("/opt/venv/bin/python", NULL, fake_probe, NULL));
	/* bound, and its symlink leads back into /usr */
	ck_assert(model_jail_sees("/opt/venv/bin/python", usr_opt, fake_probe, NULL));
	/* "/usrx" is not under "/usr"; a file that is not there is not seen */
	ck_assert(!model_jail_sees("/usrx/bin/env", NULL, fake_probe, NULL));
	ck_assert(!model_jail_sees("/usr/bin/nothing", NULL, fake_probe, NULL));
	/* no binds at all: nothing but the agent */
	ck_assert(!model_jail_sees("/usr/bin/env", none, fake_probe, NULL));
	json_decref(usr_opt);
	json_decref(bin);
	json_decref(none);
}
END_TEST

START_TEST(test_interp_in_jail)
{
	struct model_interp ip;
	char resolved[300], reason[512];
	json_t *tools = json_pack("[s, s]", "/usr", "/opt/tools");

	ip = parsed("#!/usr/bin/env python3\n", 1);
	ck_assert_int_eq(
	    model_interp_in_jail(&ip, NULL, fake_probe, NULL, resolved, sizeof(resolved)),
	    MODEL_INTERP_IN_JAIL);
	ck_assert_str_eq(resolved, "/usr/bin/python3");
	ip = parsed("#!/usr/bin/env -S python3 -u\n", 1);
	ck_assert_int_eq(
	    model_interp_in_jail(&ip, NULL, fake_probe, NULL, resolved, sizeof(resolved)),
	    MODEL_INTERP_IN_JAIL);
	ck_assert_str_eq(resolved, "/usr/bin/python3");
	ip = parsed("#!/usr/bin/env ruby\n", 1);
	ck_assert_int_eq(
	    model_interp_in_jail(&ip, NULL, fake_probe, NULL, resolved, sizeof(resolved)),
	    MODEL_INTERP_LOOKUP);
	ck_assert_str_eq(resolved, "");
	model_interp_reason("profile", &ip, MODEL_INTERP_LOOKUP, reason, sizeof(reason));
	ck_assert_str_eq(reason, "agent program profile: its interpreter /usr/bin/env finds no "
	                         "ruby inside the jail (PATH /usr/bin:/bin; add its directory to "
	                         "[runner] binds)");
	ip = parsed("#!/usr/bin/env -i python3\n", 1);
	ck_assert_int_eq(model_interp_in_jail(&ip, NULL, fake_probe, NULL, NULL, 0),
	                 MODEL_INTERP_UNKNOWN);
	ip = parsed("#!/opt/venv/bin/python\n", 1);
	ck_assert_int_eq(model_interp_in_jail(&ip, NULL, fake_probe, NULL, NULL, 0),
	                 MODEL_INTERP_MISSING);
	model_interp_reason("profile", &ip, MODEL_INTERP_MISSING, reason, sizeof(reason));
	ck_assert_str_eq(reason, "agent program profile: its interpreter /opt/venv/bin/python is "
	                         "not inside the jail (add its directory to [runner] binds)");
	model_interp_reason("profile", &ip, MODEL_INTERP_IN_JAIL, reason, sizeof(reason));
	ck_assert_str_eq(reason, "");
	/* bound, but a symlink out of every bind: not seen inside */
	ip = parsed("#!/opt/tools/run\n", 1);
	ck_assert_int_eq(model_interp_in_jail(&ip, tools, fake_probe, NULL, NULL, 0),
	                 MODEL_INTERP_MISSING);
	ip = parsed("#!/bin/sh -e\n", 1);
	ck_assert_int_eq(model_interp_in_jail(&ip, NULL, fake_probe, NULL, NULL, 0),
	                 MODEL_INTERP_IN_JAIL);
	json_decref(tools);
}
END_TEST

START_TEST(test_agent_name)
{
	ck_assert(model_agent_name_ok("profile"));
	ck_assert(model_agent_name_ok("a.b_c-1"));
	ck_assert(!model_agent_name_ok(""));
	ck_assert(!model_agent_name_ok("."));
	ck_assert(!model_agent_name_ok(".."));
	ck_assert(!model_agent_name_ok("-x"));
	ck_assert(!model_agent_name_ok("a/b"));
	ck_assert(!model_agent_name_ok("builtin:mock-agent"));
	ck_assert(model_agent_name_ok(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	ck_assert(!model_agent_name_ok(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}
END_TEST

/* The mocks a variant sees: the same for two variants without mocks of
 * their own, different when one has its own. */
START_TEST(test_mocks_for_variant)
{
	json_t *m = json_pack("[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s}]", "resource", "a",
	                      "response", "A", "resource", "a", "response", "A2", "variant", "v2",
	                      "resource", "b", "response", "B");
	json_t *none = model_mocks_for_variant(m, NULL);
	json_t *v1 = model_mocks_for_variant(m, "v1");
	json_t *v2 = model_mocks_for_variant(m, "v2");
	json_t *want2 = json_pack("[{s:s, s:s}, {s:s, s:s}]", "resource", "a", "response", "A2",
	                          "resource", "b", "response", "B");

	ck_assert_uint_eq(json_array_size(none), 2);
	ck_assert(json_equal(none, v1));
	ck_assert(!json_equal(v1, v2));
	ck_assert(json_equal(v2, want2));
	json_decref(m);
	json_decref(none);
	json_decref(v1);
	json_decref(v2);
	json_decref(want2);
}
END_TEST

Suite *unit_suite(void)
{
	const TTest *const agent[] = {test_interp_parse,      test_jail_sees,
	                              test_interp_in_jail,    test_agent_name,
	                              test_mocks_for_variant, NULL};
	Suite *s = suite_create("agent");

	unit_tcase(s, "agent", agent);
	return s;
}
