/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-sidecar; each lives in cmd_<name>.c and returns
 * the process exit code (0 ok, 1 failure, 2 usage). */
#pragma once

#include <stdbool.h>

#include "base/cli.h"
#include "base/privs.h"

/* What `run` keeps after its start-up (main.c; docs/privileges.md). */
extern const struct privs_spec sidecar_run_privs;

int cmd_pmap(int argc, char **argv, const struct cli_globals *g);
int cmd_snapshot(int argc, char **argv, const struct cli_globals *g);
int cmd_run(int argc, char **argv, const struct cli_globals *g);
int cmd_jcmd(int argc, char **argv, const struct cli_globals *g);
int cmd_trim(int argc, char **argv, const struct cli_globals *g);
int cmd_malloc_stats(int argc, char **argv, const struct cli_globals *g);

struct host;
/* The glibc branch of trim (cmd_malloc_stats.c): malloc_trim(0) in a non-JVM
 * process through ptcall; prints RSS before/after. Returns the exit code. */
int sidecar_trim_glibc(const struct host *h, int pid, unsigned timeout_ms,
		       bool json);
