/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent: the node agent. Dispatches to subcommands; the options
 * they share (--host-root, --log-level, --log-json, --no-seccomp) are
 * parsed once in cli_dispatch. */
#include "commands.h"
#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"

#include <linux/capability.h>

/* Capabilities each mode keeps, measured (docs/privileges.md). run opens
 * /dev/kmsg (CAP_SYSLOG with dmesg_restrict=1) and raises its open-file
 * limit before it drops them; afterwards it reads cgroup files, spools
 * and /proc/<pid>/cgroup, and writes its state directory. */
const struct privs_spec agent_run_privs = {
	.caps = PRIVS_CAP(CAP_DAC_READ_SEARCH),
	.seccomp = true,
};
/* Cluster mode talks to the API server (libcurl: sockets, its wakeup
 * socketpair, glibc's resolver). No exec: an exec credential plugin is
 * refused at start (docs/cluster-mode.md). */
static const char *const cluster_syscalls[] = {
	"socket",     "socketpair",  "connect",	    "getsockopt",
	"setsockopt", "getsockname", "getpeername", "sendto",
	"recvfrom",   "sendmsg",     "recvmsg",	    "sendmmsg",
	"recvmmsg",   "shutdown",    "bind",	    NULL};
const struct privs_spec agent_cluster_privs = {
	.caps = PRIVS_CAP(CAP_DAC_READ_SEARCH),
	.seccomp = true,
	.syscalls = cluster_syscalls,
};
/* The injector's webhook: no capability at all; after start-up (socket
 * bound, certificate loaded) it accepts TLS connections, reads and writes
 * them, and re-reads its certificate files. No exec, no connect. */
static const char *const webhook_syscalls[] = {
	"accept4",    "accept",	     "sendto",	    "recvfrom",
	"sendmsg",    "recvmsg",     "shutdown",    "getsockopt",
	"setsockopt", "getsockname", "getpeername", NULL};
const struct privs_spec agent_webhook_privs = {
	.caps = 0,
	.seccomp = true,
	.syscalls = webhook_syscalls,
};
/* parse-kmsg opens /dev/kmsg itself; show reads a file it is given. */
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
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-agent");
	return cli_dispatch("oomlens-agent", commands, ARRAY_SIZE(commands),
			    argc, argv);
}
