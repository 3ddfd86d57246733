/* SPDX-License-Identifier: Apache-2.0 */
/* cli: the subcommand dispatch both programs share. */
#pragma once

#include <stddef.h>

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the command name */
	const char *help;
};

/* Runs the command argv[1] names, or prints usage: to stdout for
 * help/--help/-h (returns 0), to stderr for a missing or unknown command
 * (returns 2). Otherwise returns the command's exit code. */
int cli_dispatch(const char *prog, const struct cli_command *cmds, size_t n,
		 int argc, char **argv);
