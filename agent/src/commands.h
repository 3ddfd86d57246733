/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-agent; each lives in cmd_<name>.c and returns the
 * process exit code. */
#pragma once

int cmd_run(int argc, char **argv);
int cmd_parse_kmsg(int argc, char **argv);
int cmd_show(int argc, char **argv);
