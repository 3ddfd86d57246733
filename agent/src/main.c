/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent: the node agent. Dispatches to subcommands. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

static const struct cli_command commands[] = {
	{"run", cmd_run, "watch cgroups and write a bundle for every OOM kill"},
	{"parse-kmsg", cmd_parse_kmsg, "print kernel OOM reports as JSON"},
	{"show", cmd_show, "print a bundle's verdict, evidence and ledger"},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-agent");
	return cli_dispatch("oomlens-agent", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
