/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent: the node agent. Dispatches to subcommands; the options
 * they share (--host-root, --log-level, --log-json, --no-seccomp) are
 * parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

static const struct cli_command commands[] = {
	{.name = "run",
	 .fn = cmd_run,
	 .help = "watch cgroups and write a bundle for every OOM kill"},
	{.name = "parse-kmsg",
	 .fn = cmd_parse_kmsg,
	 .help = "print kernel OOM reports as JSON"},
	{.name = "show",
	 .fn = cmd_show,
	 .help = "print a bundle's verdict, evidence and ledger"},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-agent");
	return cli_dispatch("oomlens-agent", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
