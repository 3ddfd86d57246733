/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar: samples an app's processes and snapshots them before
 * the OOM kill; also a toolbox (pmap, snapshot, jcmd, trim, malloc-stats).
 * Dispatches to subcommands; the options they share (--host-root,
 * --log-level, --log-json, --no-seccomp) are parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

static const struct cli_command commands[] = {
	{.name = "run",
	 .fn = cmd_run,
	 .help = "flight recorder + snapshots before the kill"},
	{.name = "pmap",
	 .fn = cmd_pmap,
	 .help = "memory map of a process, like pmap -X"},
	{.name = "snapshot",
	 .fn = cmd_snapshot,
	 .help = "one heavy snapshot of processes"},
	/* the words after PID are the JVM's command, passed on untouched */
	{.name = "jcmd",
	 .fn = cmd_jcmd,
	 .help = "run a JVM diagnostic command, like the JDK's jcmd",
	 .flags = CLI_OPERANDS_RAW},
	{.name = "trim",
	 .fn = cmd_trim,
	 .help = "give freed C heap back (JVM trim_native_heap, glibc "
		 "malloc_trim)"},
	{.name = "malloc-stats",
	 .fn = cmd_malloc_stats,
	 .help = "glibc allocator figures of a process (mallinfo2 via ptrace)"},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-sidecar");
	return cli_dispatch("oomlens-sidecar", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
