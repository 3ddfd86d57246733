/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-agent; each lives in cmd_<name>.c and returns the
 * process exit code. */
#pragma once

#include "base/cli.h"
#include "base/privs.h"

int cmd_run(int argc, char **argv, const struct cli_globals *g);
int cmd_parse_kmsg(int argc, char **argv, const struct cli_globals *g);
int cmd_show(int argc, char **argv, const struct cli_globals *g);
int cmd_webhook(int argc, char **argv, const struct cli_globals *g);
int cmd_inject_review(int argc, char **argv, const struct cli_globals *g);
int cmd_pss_check(int argc, char **argv, const struct cli_globals *g);
int cmd_probe(int argc, char **argv, const struct cli_globals *g);
