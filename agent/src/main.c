/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent: the node agent. Dispatches to subcommands; the options
 * they share (--host-root, --log-level, --log-json, --no-seccomp) are
 * parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

#include <linux/capability.h>

/* What the one-shot subcommands keep, entered by cli_dispatch before they
 * run (docs/privileges.md). The long-running modes, run and webhook, enter
 * theirs themselves once started: their specs live with them
 * (cmd_run.c, injector/cmd_webhook.c). parse-kmsg opens /dev/kmsg itself; show
 * reads a file it is given. */
static const struct privs_spec parse_kmsg_privs = {
	.caps = PRIVS_CAP(CAP_SYSLOG) | PRIVS_CAP(CAP_DAC_READ_SEARCH),
};
static const struct privs_spec show_privs = {.caps = 0};

static const struct cli_command commands[] = {
	{.name = "run",
	 .fn = cmd_run,
	 .help = "watch cgroups and write a bundle for every OOM kill"},
	{.name = "parse-kmsg",
	 .fn = cmd_parse_kmsg,
	 .help = "print kernel OOM reports as JSON",
	 .privs = &parse_kmsg_privs},
	{.name = "show",
	 .fn = cmd_show,
	 .help = "print a bundle's verdict, evidence and ledger",
	 .privs = &show_privs},
	{.name = "webhook",
	 .fn = cmd_webhook,
	 .help = "serve the sidecar injector (a mutating admission webhook)"},
	{.name = "inject-review",
	 .fn = cmd_inject_review,
	 .help = "print the injector's answer to an AdmissionReview (stdin)",
	 .privs = &show_privs},
	{.name = "pss-check",
	 .fn = cmd_pss_check,
	 .help = "check a Pod (JSON) against a Pod Security level",
	 .privs = &show_privs},
	{.name = "probe",
	 .fn = cmd_probe,
	 .help = "GET one of the agent's endpoints (helm test's /readyz)",
	 .privs = &show_privs},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-agent");
	return cli_dispatch("oomlens-agent", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
