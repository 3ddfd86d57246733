/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-agent; each lives in cmd_<name>.c and returns the
 * process exit code. */
#pragma once

#include "base/cli.h"
#include "base/privs.h"

/* What `run` keeps after its start-up (main.c; docs/privileges.md). */
extern const struct privs_spec agent_run_privs;
/* The same plus the network calls of the API client (cluster mode). */
extern const struct privs_spec agent_cluster_privs;

/* The injector's webhook: no capabilities, sockets (main.c). */
extern const struct privs_spec agent_webhook_privs;

int cmd_run(int argc, char **argv, const struct cli_globals *g);
int cmd_parse_kmsg(int argc, char **argv, const struct cli_globals *g);
int cmd_show(int argc, char **argv, const struct cli_globals *g);
int cmd_webhook(int argc, char **argv, const struct cli_globals *g);
int cmd_inject_review(int argc, char **argv, const struct cli_globals *g);
