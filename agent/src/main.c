/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent: the node agent. Dispatches to subcommands. */
#include <stdio.h>

#include "commands.h"
#include "oomlens/log.h"
#include "oomlens/util.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"run", cmd_run, "watch cgroups and write a bundle for every OOM kill"},
	{"parse-kmsg", cmd_parse_kmsg, "print kernel OOM reports as JSON"},
	{"show", cmd_show, "print a bundle's verdict, evidence and ledger"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: oomlens-agent COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'oomlens-agent COMMAND --help' for its options.\n");
}

int main(int argc, char **argv)
{
	log_set_program("oomlens-agent");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h") ||
	    streq(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "oomlens-agent: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
