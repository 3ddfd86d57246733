/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar: samples an app's processes and snapshots them before
 * the OOM kill; also a toolbox (pmap, snapshot). Dispatches to
 * subcommands. */
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
	{"run", cmd_run, "flight recorder + snapshots before the kill"},
	{"pmap", cmd_pmap, "memory map of a process, like pmap -X"},
	{"snapshot", cmd_snapshot, "one heavy snapshot of processes"},
	{"jcmd", cmd_jcmd, "run a JVM diagnostic command, like the JDK's jcmd"},
	{"trim", cmd_trim, "give a JVM's freed C heap back (trim_native_heap)"},
	{"malloc-stats", cmd_malloc_stats,
	 "glibc allocator figures of a process (mallinfo2 via ptrace)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: oomlens-sidecar COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'oomlens-sidecar COMMAND --help' for its options.\n");
}

int main(int argc, char **argv)
{
	log_set_program("oomlens-sidecar");
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
	fprintf(stderr, "oomlens-sidecar: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
