/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar: samples an app's processes and snapshots them before
 * the OOM kill; also a toolbox (pmap, snapshot, jcmd, trim, malloc-stats).
 * Dispatches to subcommands; the options they share (--host-root,
 * --log-level, --log-json, --no-seccomp) are parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

#include <linux/capability.h>

/* Capabilities each mode keeps, measured (docs/privileges.md):
 * SYS_PTRACE reads /proc/<pid>/{smaps,maps,environ,root} of other uids and
 * runs the allocator probe; SETUID/SETGID switch to a JVM's uid, gid and
 * groups for its attach socket; KILL sends SIGQUIT to a JVM of another
 * uid; DAC_READ_SEARCH reads cgroup and /proc files not open to root's
 * group. */
#define JVM_CAPS                                             \
	(PRIVS_CAP(CAP_SYS_PTRACE) | PRIVS_CAP(CAP_SETUID) | \
	 PRIVS_CAP(CAP_SETGID) | PRIVS_CAP(CAP_KILL) |       \
	 PRIVS_CAP(CAP_DAC_READ_SEARCH))
static const char *const run_syscalls[] = {"ptrace",
					   "process_vm_readv",
					   "process_vm_writev",
					   "wait4",
					   "waitid",
					   "kill",
					   "socket",
					   "connect",
					   "sendto",
					   "recvfrom",
					   "sendmsg",
					   "recvmsg",
					   "shutdown",
					   "getsockopt",
					   "setsockopt",
					   "setresuid",
					   "setresgid",
					   "setuid",
					   "setgid",
					   "setgroups",
					   "prctl",
					   "pidfd_open",
					   "pidfd_send_signal",
					   NULL};
const struct privs_spec sidecar_run_privs = {
	.caps = JVM_CAPS,
	.seccomp = true,
	.syscalls = run_syscalls,
};
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
