/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "base/cli.h"
#include "base/util.h"

static void usage(FILE *f, const char *prog, const struct cli_command *cmds,
		  size_t n)
{
	fprintf(f, "usage: %s COMMAND [ARGS]\n\ncommands:\n", prog);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nRun '%s COMMAND --help' for its options.\n", prog);
}

int cli_dispatch(const char *prog, const struct cli_command *cmds, size_t n,
		 int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr, prog, cmds, n);
		return 2;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h") ||
	    streq(argv[1], "help")) {
		usage(stdout, prog, cmds, n);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (streq(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr, prog, cmds, n);
	return 2;
}
