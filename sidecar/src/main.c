/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar: samples an app's processes and snapshots them before
 * the OOM kill; also a toolbox (pmap, snapshot, jcmd, trim, malloc-stats).
 * Dispatches to subcommands. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

static const struct cli_command commands[] = {
	{"run", cmd_run, "flight recorder + snapshots before the kill"},
	{"pmap", cmd_pmap, "memory map of a process, like pmap -X"},
	{"snapshot", cmd_snapshot, "one heavy snapshot of processes"},
	{"jcmd", cmd_jcmd, "run a JVM diagnostic command, like the JDK's jcmd"},
	{"trim", cmd_trim,
	 "give freed C heap back (JVM trim_native_heap, glibc malloc_trim)"},
	{"malloc-stats", cmd_malloc_stats,
	 "glibc allocator figures of a process (mallinfo2 via ptrace)"},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-sidecar");
	return cli_dispatch("oomlens-sidecar", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
