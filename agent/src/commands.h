/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-agent; each lives in cmd_<name>.c and returns the
 * process exit code. */
#pragma once

#include "base/cli.h"

int cmd_run(int argc, char **argv, const struct cli_globals *g);
int cmd_parse_kmsg(int argc, char **argv, const struct cli_globals *g);
int cmd_show(int argc, char **argv, const struct cli_globals *g);
