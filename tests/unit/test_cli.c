/* SPDX-License-Identifier: Apache-2.0 */
/* The shared options (--host-root, --log-level, --log-json, --no-seccomp):
 * taken out of a subcommand's arguments, and parsed before the command
 * name by cli_dispatch. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/cli.h"
#include "base/util.h"

#define MAXARGS 16

struct args {
	int argc;
	char *argv[MAXARGS + 1];
};

static void set_args(struct args *a, const char *const *words)
{
	a->argc = 0;
	for (; *words; words++)
		a->argv[a->argc++] = (char *)*words;
	a->argv[a->argc] = NULL;
}

static void expect_args(const struct args *a, const char *const *want)
{
	int i = 0;

	for (; want[i]; i++) {
		cr_assert_lt(i, a->argc, "argument %d missing", i);
		cr_expect_str_eq(a->argv[i], want[i], "argument %d", i);
	}
	cr_expect_eq(a->argc, i);
	cr_expect_null(a->argv[a->argc]);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(cli, defaults)
{
	struct cli_globals g;

	cli_globals_init(&g);
	cr_expect_str_eq(g.host_root, "/");
	cr_expect_eq(g.log_level, LOG_INFO);
	cr_expect_not(g.log_json);
	cr_expect_not(g.no_seccomp);
}

Test(cli, takes_options_anywhere_and_keeps_the_rest_in_order)
{
	struct args a;
	struct cli_globals g;
	char err[128] = "";

	set_args(&a, WORDS("run", "--standalone", "--host-root", "/host",
			   "--watch", "/demo", "--log-level=debug",
			   "--log-json", "--no-seccomp", "--state-dir", "s"));
	cli_globals_init(&g);
	cr_assert_eq(
		cli_take_globals(&a.argc, a.argv, 1, 0, &g, err, sizeof(err)),
		0, "%s", err);
	expect_args(&a, WORDS("run", "--standalone", "--watch", "/demo",
			      "--state-dir", "s"));
	cr_expect_str_eq(g.host_root, "/host");
	cr_expect_eq(g.log_level, LOG_DEBUG);
	cr_expect(g.log_json);
	cr_expect(g.no_seccomp);
}

Test(cli, last_one_wins_and_double_dash_ends_options)
{
	struct args a;
	struct cli_globals g;
	char err[128] = "";

	set_args(&a, WORDS("show", "--host-root=/a", "--host-root", "/b", "--",
			   "--log-json", "x"));
	cli_globals_init(&g);
	cr_assert_eq(
		cli_take_globals(&a.argc, a.argv, 1, 0, &g, err, sizeof(err)),
		0);
	cr_expect_str_eq(g.host_root, "/b");
	cr_expect_not(g.log_json);
	expect_args(&a, WORDS("show", "--", "--log-json", "x"));
}

Test(cli, raw_operands_are_not_touched)
{
	struct args a;
	struct cli_globals g;
	char err[128] = "";

	/* jcmd: --timeout takes 500; 42 is the first operand; what follows
	 * is the JVM's command, even when it looks like a shared option */
	set_args(&a, WORDS("jcmd", "--timeout", "500", "--host-root", "/h",
			   "42", "Thread.print", "--log-json"));
	cli_globals_init(&g);
	cr_assert_eq(cli_take_globals(&a.argc, a.argv, 1, CLI_OPERANDS_RAW, &g,
				      err, sizeof(err)),
		     0);
	cr_expect_str_eq(g.host_root, "/h");
	cr_expect_not(g.log_json);
	expect_args(&a, WORDS("jcmd", "--timeout", "500", "42", "Thread.print",
			      "--log-json"));
}

struct bad_case {
	const char *arg1, *arg2;
	const char *msg;
};

Test(cli, errors_name_the_option)
{
	static const struct bad_case cases[] = {
		{"--log-level", "x",
		 "--log-level: expected one of error,warn,info,debug, got 'x'"},
		{"--log-level=", NULL,
		 "--log-level: expected one of error,warn,info,debug, got ''"},
		{"--log-level", NULL, "--log-level: requires a value"},
		{"--host-root", NULL, "--host-root: requires a value"},
		{"--host-root=", NULL,
		 "--host-root: expected a directory, got ''"},
		{"--log-json=yes", NULL,
		 "--log-json: takes no value, got 'yes'"},
		{"--no-seccomp=1", NULL,
		 "--no-seccomp: takes no value, got '1'"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct args a;
		struct cli_globals g;
		char err[128] = "";

		if (cases[i].arg2)
			set_args(&a,
				 WORDS("run", cases[i].arg1, cases[i].arg2));
		else
			set_args(&a, WORDS("run", cases[i].arg1));
		cli_globals_init(&g);
		cr_expect_eq(cli_take_globals(&a.argc, a.argv, 1, 0, &g, err,
					      sizeof(err)),
			     -EINVAL, "case %zu", i);
		cr_expect_str_eq(err, cases[i].msg, "case %zu", i);
	}
}

Test(cli, a_longer_name_is_not_a_shared_option)
{
	struct args a;
	struct cli_globals g;
	char err[128] = "";

	set_args(&a, WORDS("run", "--log-levels", "--host-rootx=/"));
	cli_globals_init(&g);
	cr_assert_eq(
		cli_take_globals(&a.argc, a.argv, 1, 0, &g, err, sizeof(err)),
		0);
	expect_args(&a, WORDS("run", "--log-levels", "--host-rootx=/"));
	cr_expect_str_eq(g.host_root, "/");
}

/* cli_dispatch: a fake command records what it was given. */
static struct {
	int argc;
	char argv0[32], argv1[32];
	struct cli_globals g;
} seen;

static int fake_cmd(int argc, char **argv, const struct cli_globals *g)
{
	seen.argc = argc;
	snprintf(seen.argv0, sizeof(seen.argv0), "%s", argv[0]);
	snprintf(seen.argv1, sizeof(seen.argv1), "%s", argc > 1 ? argv[1] : "");
	seen.g = *g;
	return 7;
}

static const struct cli_command fake_cmds[] = {
	{.name = "run", .fn = fake_cmd, .help = "test"},
};

static int dispatch(const char *const *words)
{
	struct args a;

	memset(&seen, 0, sizeof(seen));
	set_args(&a, words);
	return cli_dispatch("prog", fake_cmds, ARRAY_SIZE(fake_cmds), a.argc,
			    a.argv);
}

Test(cli, dispatch_before_and_after_the_command)
{
	cr_assert_eq(
		dispatch(WORDS("prog", "--log-level", "debug", "--host-root=/h",
			       "run", "--log-json", "arg")),
		7);
	cr_expect_eq(seen.argc, 2);
	cr_expect_str_eq(seen.argv0, "run");
	cr_expect_str_eq(seen.argv1, "arg");
	cr_expect_str_eq(seen.g.host_root, "/h");
	cr_expect_eq(seen.g.log_level, LOG_DEBUG);
	cr_expect(seen.g.log_json);
	log_set_level(LOG_INFO);
	log_set_json(false);
}

Test(cli, dispatch_usage_errors_return_2)
{
	cr_expect_eq(dispatch(WORDS("prog")), 2);
	cr_expect_eq(dispatch(WORDS("prog", "--log-level", "loud", "run")), 2);
	cr_expect_eq(dispatch(WORDS("prog", "run", "--log-level", "loud")), 2);
	cr_expect_eq(dispatch(WORDS("prog", "--bogus", "run")), 2);
	cr_expect_eq(dispatch(WORDS("prog", "--log-json")), 2);
	cr_expect_eq(dispatch(WORDS("prog", "nosuch")), 2);
	cr_expect_eq(seen.argc, 0, "the command never ran");
	cr_expect_eq(dispatch(WORDS("prog", "--log-json", "--help")), 0);
}
