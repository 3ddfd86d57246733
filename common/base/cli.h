/* SPDX-License-Identifier: Apache-2.0 */
/* cli: the subcommand dispatch both programs share, and the options every
 * subcommand takes (parsed here once, like `git -C`):
 *
 *   --host-root DIR      the host's / (default "/"; "/host" in a DaemonSet)
 *   --log-level LEVEL    error, warn, info (default) or debug
 *   --log-json           log lines as JSON instead of logfmt
 *   --no-seccomp         no seccomp filter in the steady state (debugging)
 *
 * They may come before the subcommand (`oomlens-agent --log-level debug
 * run ...`) or anywhere among its arguments (`oomlens-agent run
 * --log-level debug ...`), as `--opt VALUE` or `--opt=VALUE`; `--` ends
 * them. The last one given wins. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/log.h"
#include "base/privs.h"

struct cli_globals {
	const char *host_root; /* never NULL; "/" unless given */
	enum log_level log_level;
	bool log_json;
	bool no_seccomp;
};

/* The defaults: host root "/", level info, logfmt, seccomp on. */
void cli_globals_init(struct cli_globals *g);

/* For commands whose operands are passed on untouched (jcmd's JVM
 * command): the shared options are taken only before the first operand.
 * An argument that follows a `--name` option without `=` is taken as that
 * option's value, not as an operand. */
#define CLI_OPERANDS_RAW 0x1u

/* Takes the shared options out of argv[from..*argc): they are parsed into
 * g and removed, the other arguments keep their order, *argc is lowered
 * and argv[*argc] set to NULL. Stops at "--" (left in place) and, with
 * CLI_OPERANDS_RAW, at the first operand. Pure: nothing is applied.
 * Returns 0, or -EINVAL with a message naming the option in err (e.g.
 * "--log-level: expected one of error,warn,info,debug, got 'x'"); argv
 * and g may then be partly changed. */
int cli_take_globals(int *argc, char **argv, int from, unsigned flags,
		     struct cli_globals *g, char *err, size_t errlen);

struct cli_command {
	const char *name;
	/* argv[0] is the command name, the shared options are removed */
	int (*fn)(int argc, char **argv, const struct cli_globals *g);
	const char *help;
	unsigned flags; /* CLI_OPERANDS_RAW */
	/* Applied (capabilities, no_new_privs; no seccomp) before fn runs;
	 * NULL: the command applies its own after its start-up (run). */
	const struct privs_spec *privs;
};

/* For a long-running mode, once its start-up is done (files opened,
 * limits raised): privs_enter with --no-seccomp honoured; logs what it did
 * (one info line) or why it failed (an error line). Returns 0 or -errno
 * (the caller exits 1). For programs only: it logs. */
int cli_enter_steady_state(const struct privs_spec *spec,
			   const struct cli_globals *g);

/* Parses the shared options before and after the command name, applies the
 * logging ones (log_set_level, log_set_json), then runs the command argv
 * names, with the capabilities its privs spec keeps. Prints usage to stdout for
 * help/--help/-h (returns 0), to stderr for a missing or unknown command
 * (returns 2); an option error prints "PROG: --opt: what was wrong" and
 * returns 2. Otherwise returns the command's exit code. May reorder argv. */
int cli_dispatch(const char *prog, const struct cli_command *cmds, size_t n,
		 int argc, char **argv);
