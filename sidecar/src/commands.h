/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-sidecar; each lives in cmd_<name>.c and returns
 * the process exit code (0 ok, 1 failure, 2 usage). */
#pragma once

#include <stdbool.h>

#include "base/cli.h"
#include "base/privs.h"

#include <linux/capability.h>

/* Capabilities the JVM modes keep (run, snapshot, jcmd, trim,
 * class-histogram), measured
 * (docs/privileges.md):
 * SYS_PTRACE reads /proc/<pid>/{smaps,maps,environ,root} of other uids and
 * runs the allocator probe; SETUID/SETGID switch to a JVM's uid, gid and
 * groups for its attach socket; KILL sends SIGQUIT to a JVM of another
 * uid; DAC_READ_SEARCH reads cgroup and /proc files not open to root's
 * group. */
#define JVM_CAPS                                             \
	(PRIVS_CAP(CAP_SYS_PTRACE) | PRIVS_CAP(CAP_SETUID) | \
	 PRIVS_CAP(CAP_SETGID) | PRIVS_CAP(CAP_KILL) |       \
	 PRIVS_CAP(CAP_DAC_READ_SEARCH))

int cmd_pmap(int argc, char **argv, const struct cli_globals *g);
int cmd_snapshot(int argc, char **argv, const struct cli_globals *g);
int cmd_run(int argc, char **argv, const struct cli_globals *g);
int cmd_jcmd(int argc, char **argv, const struct cli_globals *g);
int cmd_trim(int argc, char **argv, const struct cli_globals *g);
int cmd_class_histogram(int argc, char **argv, const struct cli_globals *g);
int cmd_malloc_stats(int argc, char **argv, const struct cli_globals *g);

struct host;
/* The glibc branch of trim (cmd_malloc_stats.c): malloc_trim(0) in a non-JVM
 * process through ptcall; prints RSS before/after. Returns the exit code. */
int sidecar_trim_glibc(const struct host *h, int pid, unsigned timeout_ms,
		       bool json);
