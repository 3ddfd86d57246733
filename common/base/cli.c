/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cli.h"

#ifndef OOMLENS_VERSION /* the Makefile passes VERSION's */
#define OOMLENS_VERSION "0.0.0-dev"
#endif
#include "base/util.h"

enum global_opt { OPT_HOST_ROOT, OPT_LOG_LEVEL, OPT_LOG_JSON, OPT_NO_SECCOMP };

static const struct {
	const char *name;
	bool has_value;
} global_opts[] = {
	[OPT_HOST_ROOT] = {"--host-root", true},
	[OPT_LOG_LEVEL] = {"--log-level", true},
	[OPT_LOG_JSON] = {"--log-json", false},
	[OPT_NO_SECCOMP] = {"--no-seccomp", false},
};

void cli_globals_init(struct cli_globals *g)
{
	*g = (struct cli_globals){.host_root = "/", .log_level = LOG_INFO};
}

static int fail(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Which shared option arg is ("--log-level" or "--log-level=x"), or -1;
 * *ret_value points after the '=' when there is one. */
static int match_global(const char *arg, const char **ret_value)
{
	for (size_t i = 0; i < ARRAY_SIZE(global_opts); i++) {
		size_t n = strlen(global_opts[i].name);

		if (strncmp(arg, global_opts[i].name, n) != 0)
			continue;
		if (arg[n] == '\0' || arg[n] == '=') {
			*ret_value = arg[n] == '=' ? arg + n + 1 : NULL;
			return (int)i;
		}
	}
	return -1;
}

static int apply_global(int opt, const char *value, struct cli_globals *g,
			char *err, size_t errlen)
{
	const char *name = global_opts[opt].name;

	if (!global_opts[opt].has_value && value)
		return fail(err, errlen, "%s: takes no value, got '%s'", name,
			    value);
	switch (opt) {
	case OPT_HOST_ROOT:
		if (value[0] == '\0')
			return fail(err, errlen,
				    "%s: expected a directory, got ''", name);
		g->host_root = value;
		return 0;
	case OPT_LOG_LEVEL:
		if (log_parse_level(value, &g->log_level) < 0)
			return fail(err, errlen,
				    "%s: expected one of error,warn,info,"
				    "debug, got '%s'",
				    name, value);
		return 0;
	case OPT_LOG_JSON:
		g->log_json = true;
		return 0;
	case OPT_NO_SECCOMP:
		g->no_seccomp = true;
		return 0;
	}
	return -EINVAL;
}

/* With CLI_OPERANDS_RAW: is argv[i] the first operand? */
static bool is_operand(char **argv, int from, int i)
{
	const char *prev = i > from ? argv[i - 1] : "";

	if (argv[i][0] == '-' && argv[i][1] != '\0')
		return false;
	/* "--timeout 500": 500 is the option's value */
	return !(prev[0] == '-' && prev[1] == '-' && prev[2] != '\0' &&
		 !strchr(prev, '='));
}

/* Parses the shared option at argv[*i] (and its value) into g and moves
 * *i past it; returns 1 if argv[*i] is no shared option, 0, or -EINVAL. */
static int take_one(int argc, char **argv, int *i, struct cli_globals *g,
		    char *err, size_t errlen)
{
	const char *value;
	int opt = match_global(argv[*i], &value);

	if (opt < 0)
		return 1;
	(*i)++;
	if (global_opts[opt].has_value && !value) {
		if (*i == argc)
			return fail(err, errlen, "%s: requires a value",
				    global_opts[opt].name);
		value = argv[(*i)++];
	}
	return apply_global(opt, value, g, err, errlen);
}

int cli_take_globals(int *argc, char **argv, int from, unsigned flags,
		     struct cli_globals *g, char *err, size_t errlen)
{
	int in = from, out = from, n = *argc;

	while (in < n) {
		int r;

		if (streq(argv[in], "--") ||
		    ((flags & CLI_OPERANDS_RAW) && is_operand(argv, from, in)))
			break;
		r = take_one(n, argv, &in, g, err, errlen);
		if (r < 0)
			return r;
		if (r > 0)
			argv[out++] = argv[in++];
	}
	while (in < n)
		argv[out++] = argv[in++];
	argv[out] = NULL;
	*argc = out;
	return 0;
}

static void usage(FILE *f, const char *prog, const struct cli_command *cmds,
		  size_t n)
{
	fprintf(f, "usage: %s [OPTIONS] COMMAND [ARGS]\n\ncommands:\n", prog);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f,
		"\noptions (before or after COMMAND):\n"
		"  --host-root DIR    the host's / (default /)\n"
		"  --log-level LEVEL  error, warn, info (default), debug\n"
		"  --log-json         log lines as JSON\n"
		"  --no-seccomp       no seccomp filter (debugging)\n"
		"\nRun '%s COMMAND --help' for its options.\n",
		prog);
}

static const struct cli_command *find_command(const struct cli_command *cmds,
					      size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (streq(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

int cli_enter_steady_state(const struct privs_spec *spec,
			   const struct cli_globals *g)
{
	static const char *const what[] = {
		[PRIVS_SECCOMP_ON] = "on",
		[PRIVS_SECCOMP_OFF] = "off",
		[PRIVS_SECCOMP_SANITIZER] = "skipped (sanitizer or valgrind)",
	};
	enum privs_seccomp_state st;
	int r = privs_enter(spec, g->no_seccomp, &st);

	if (r < 0) {
		log_error("dropping privileges: %s", strerror(-r));
		return r;
	}
	log_info("privileges dropped: capabilities 0x%llx, no_new_privs, "
		 "seccomp %s",
		 (unsigned long long)spec->caps, what[st]);
	return 0;
}

/* The shared options before the command name (nothing else may come
 * there but --help): returns the index of the command name, or -EINVAL. */
static int take_leading(const char *prog, int argc, char **argv,
			struct cli_globals *g)
{
	char err[256];
	int i = 1, r;

	while (i < argc && argv[i][0] == '-' && !streq(argv[i], "-h") &&
	       !streq(argv[i], "--help") && !streq(argv[i], "--version")) {
		r = take_one(argc, argv, &i, g, err, sizeof(err));
		if (r > 0)
			(void)fail(err, sizeof(err), "%s: unknown option",
				   argv[i]);
		if (r != 0) {
			fprintf(stderr, "%s: %s\n", prog, err);
			return -EINVAL;
		}
	}
	return i;
}

int cli_dispatch(const char *prog, const struct cli_command *cmds, size_t n,
		 int argc, char **argv)
{
	const struct cli_command *cmd;
	struct cli_globals g;
	char err[256];
	int i;

	cli_globals_init(&g);
	i = take_leading(prog, argc, argv, &g);
	if (i < 0)
		return 2;
	if (i >= argc) {
		usage(stderr, prog, cmds, n);
		return 2;
	}
	if (streq(argv[i], "--help") || streq(argv[i], "-h") ||
	    streq(argv[i], "help")) {
		usage(stdout, prog, cmds, n);
		return 0;
	}
	if (streq(argv[i], "--version") || streq(argv[i], "version")) {
		printf("%s %s\n", prog, OOMLENS_VERSION);
		return 0;
	}
	cmd = find_command(cmds, n, argv[i]);
	if (!cmd) {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[i]);
		usage(stderr, prog, cmds, n);
		return 2;
	}
	argc -= i;
	argv += i;
	if (cli_take_globals(&argc, argv, 1, cmd->flags, &g, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	log_set_level(g.log_level);
	log_set_json(g.log_json);
	if (cmd->privs) {
		int r = privs_enter(cmd->privs, true, NULL);

		if (r < 0) {
			fprintf(stderr, "%s: dropping privileges: %s\n", prog,
				strerror(-r));
			return 1;
		}
	}
	return cmd->fn(argc, argv, &g);
}
