/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of oomlens-sidecar; each lives in cmd_<name>.c and returns
 * the process exit code (0 ok, 1 failure, 2 usage). */
#pragma once

int cmd_pmap(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_jcmd(int argc, char **argv);
int cmd_trim(int argc, char **argv);
