/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar: samples an app's processes and snapshots them before
 * the OOM kill; also a toolbox (pmap, snapshot, jcmd, trim,
 * class-histogram, malloc-stats).
 * Dispatches to subcommands; the options they share (--host-root,
 * --log-level, --log-json, --no-seccomp) are parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

/* What the toolbox's subcommands keep, entered by cli_dispatch before they
 * run (JVM_CAPS: commands.h; docs/privileges.md). run enters its own once
 * started: its spec lives with it (cmd_run.c). */
static const struct privs_spec jvm_privs = {.caps = JVM_CAPS};
static const struct privs_spec ptrace_privs = {
	.caps = PRIVS_CAP(CAP_SYS_PTRACE) | PRIVS_CAP(CAP_DAC_READ_SEARCH)};

static const struct cli_command commands[] = {
	{.name = "run",
	 .fn = cmd_run,
	 .help = "flight recorder + snapshots before the kill"},
	{.name = "pmap",
	 .fn = cmd_pmap,
	 .help = "memory map of a process, like pmap -X",
	 .privs = &ptrace_privs},
	{.name = "snapshot",
	 .fn = cmd_snapshot,
	 .help = "one heavy snapshot of processes",
	 .privs = &jvm_privs},
	/* the words after PID are the JVM's command, passed on untouched */
	{.name = "jcmd",
	 .fn = cmd_jcmd,
	 .help = "run a JVM diagnostic command, like the JDK's jcmd",
	 .flags = CLI_OPERANDS_RAW,
	 .privs = &jvm_privs},
	{.name = "trim",
	 .fn = cmd_trim,
	 .help = "give freed C heap back (JVM trim_native_heap, glibc "
		 "malloc_trim)",
	 .privs = &jvm_privs},
	{.name = "class-histogram",
	 .fn = cmd_class_histogram,
	 .help = "a JVM's top classes by bytes, its pause bounded and "
		 "measured",
	 .privs = &jvm_privs},
	{.name = "malloc-stats",
	 .fn = cmd_malloc_stats,
	 .help = "glibc allocator figures of a process (mallinfo2 via ptrace)",
	 .privs = &ptrace_privs},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-sidecar");
	return cli_dispatch("oomlens-sidecar", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
